"""The one environment object and its differentiable block updates
(:mod:`tensor4all.networks.environments`), checked against dense contractions written out
here: a bra different from the ket, an MPO tensor, a site operator or nothing between them,
the edges, symmetric sites, the index order shared with the NumPy sweep steps, and a
derivative."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all import MPS, models
from tensor4all.networks.environments import (
    EnvCache,
    block_bytes,
    close,
    left_step,
    right_step,
    transfer_left,
    transfer_right,
)
from tensor4all.networks.mpo import symmetric_mpo_sites
from tensor4all.networks.symmetric_sites import operator_tensor
from tidu.testing import check_grads


def _np(x) -> np.ndarray:
    x = x.to_dense() if isinstance(x, t4a.SymmetricTensor) else x
    return np.asarray(x.numpy()) if isinstance(x, tf.Tensor) else np.asarray(x)


def _rand(rng, shape, complex_):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _dense_left(env, bra, ket, op):
    """The left update written out: blocks ``(bra, [w,] ket)``."""
    cb = bra.conj()
    if op is None:
        return np.einsum("ab,asc,bsd->cd", env, cb, ket)
    if op.ndim == 2:
        return np.einsum("ab,asc,st,btd->cd", env, cb, op, ket)
    return np.einsum("awb,asc,wstv,btd->cvd", env, cb, op, ket)


def _dense_right(env, bra, ket, op):
    """The right update written out: blocks ``([w,] ket, bra)``."""
    cb = bra.conj()
    if op is None:
        return np.einsum("bsd,asc,dc->ba", ket, cb, env)
    if op.ndim == 2:
        return np.einsum("st,btd,asc,dc->ba", op, ket, cb, env)
    return np.einsum("wstv,btd,asc,vdc->wba", op, ket, cb, env)


def _edge(op):
    """The edge block that None stands for."""
    return np.ones((1, 1) if op is None or op.ndim == 2 else (1, 1, 1))


def _dense_blocks(bras, kets, ops):
    """The left blocks ``L[1..]`` and the right blocks ``R[..L-1]`` written out."""
    lefts, rights = [], []
    env = _edge(ops[0])
    for b, k, o in zip(bras, kets, ops):
        env = _dense_left(env, b, k, o)
        lefts.append(env)
    env = _edge(ops[0])
    for b, k, o in zip(bras[::-1], kets[::-1], ops[::-1]):
        env = _dense_right(env, b, k, o)
        rights.append(env)
    return lefts, rights[::-1]


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("kind", ["none", "site operator", "mpo"])
def test_updates_against_dense_contractions(kind, complex_):
    """Both updates, inside the chain and at its edges (None), with a bra unlike the ket."""
    rng = np.random.default_rng(3)
    chi_b, chi_k, d, D = 3, 4, 2, 5
    bra = _rand(rng, (chi_b, d, chi_b + 1), complex_)
    ket = _rand(rng, (chi_k, d, chi_k + 2), complex_)
    op = {"none": None, "site operator": _rand(rng, (d, d), complex_), "mpo": _rand(rng, (D, d, d, D + 1), complex_)}[
        kind
    ]
    mpo = kind == "mpo"
    lenv = _rand(rng, (chi_b, *((D,) if mpo else ()), chi_k), complex_)
    renv = _rand(rng, (*((D + 1,) if mpo else ()), chi_k + 2, chi_b + 1), complex_)

    def T(x):
        return None if x is None else tf.asarray(x)

    got = _np(transfer_left(T(lenv), T(bra), T(ket), T(op)))
    np.testing.assert_allclose(got, _dense_left(lenv, bra, ket, op), rtol=1e-12, atol=1e-12)
    got = _np(transfer_right(T(renv), T(bra), T(ket), T(op)))
    np.testing.assert_allclose(got, _dense_right(renv, bra, ket, op), rtol=1e-12, atol=1e-12)
    # at the edges (outer bonds of dimension 1) None stands for the block of ones
    op_l, op_r = (op[:1], op[..., :1]) if mpo else (op, op)
    got = _np(transfer_left(None, T(bra[:1]), T(ket[:1]), T(op_l)))
    np.testing.assert_allclose(got, _dense_left(_edge(op), bra[:1], ket[:1], op_l), rtol=1e-12, atol=1e-12)
    got = _np(transfer_right(None, T(bra[..., :1]), T(ket[..., :1]), T(op_r)))
    np.testing.assert_allclose(got, _dense_right(_edge(op), bra[..., :1], ket[..., :1], op_r), rtol=1e-12, atol=1e-12)


def _chain(L=5, seed=4):
    psi = MPS.random(L, bond_dim=4, seed=seed, dtype=tf.complex128)
    phi = MPS.random(L, bond_dim=3, seed=seed + 1, dtype=tf.complex128)
    return psi, phi, models.heisenberg(L, Jz=0.7, h=0.3)


def _vector(ts) -> np.ndarray:
    v = np.ones((1, 1))
    for t in ts:
        v = np.einsum("xa,asb->xsb", v, _np(t)).reshape(-1, _np(t).shape[2])
    return v.reshape(-1)


def _matrix(ws) -> np.ndarray:
    m = np.ones((1, 1, 1))
    for w in ws:
        w = _np(w)
        m = np.einsum("stw,wxyv->sxtyv", m, w)
        m = m.reshape(m.shape[0] * m.shape[1], m.shape[2] * m.shape[3], m.shape[4])
    return m[:, :, 0]


def test_every_site_closes_to_the_dense_matrix_element():
    """``<phi|W|psi>`` and ``<phi|psi>`` (and ``<psi|Sz_k|psi>``) held in one :class:`EnvCache`
    moved across the chain as a sweep moves it: the right blocks, then at every site the left
    block moved across it closed against the right block after it."""
    psi, phi, H = _chain()
    L = psi.L
    sz = tf.asarray(np.diag([0.5, -0.5]).astype(complex))
    vphi, vpsi = _vector(phi.tensors), _vector(psi.tensors)
    cases = [
        (phi, H.tensors, np.vdot(vphi, _matrix(H.tensors) @ vpsi)),
        (phi, [None] * L, np.vdot(vphi, vpsi)),
        (psi, [None] * L, np.vdot(vpsi, vpsi)),
    ]
    for bra, ops, expected in cases:
        envs = EnvCache(L, None, None, block_bytes)
        for k in range(L - 1, -1, -1):
            envs.set_right(k, transfer_right(envs.right(k + 1), bra.tensors[k], psi.tensors[k], ops[k]))
        assert complex(_np(close(envs.left(0), envs.right(0)))) == pytest.approx(expected, rel=1e-12)
        for k in range(L):
            if bra is psi:  # an operator at the centre site, as correlations measure
                sz_k = np.kron(np.kron(np.eye(2**k), np.diag([0.5, -0.5])), np.eye(2 ** (L - k - 1)))
                got = close(envs.left(k), envs.right(k + 1), psi.tensors[k], psi.tensors[k], sz)
                assert complex(_np(got)) == pytest.approx(np.vdot(vpsi, sz_k @ vpsi), rel=1e-12, abs=1e-14)
            across = close(envs.left(k), envs.right(k + 1), bra.tensors[k], psi.tensors[k], ops[k])
            after = close(transfer_left(envs.left(k), bra.tensors[k], psi.tensors[k], ops[k]), envs.right(k + 1))
            assert complex(_np(across)) == pytest.approx(expected, rel=1e-12)
            assert complex(_np(after)) == pytest.approx(expected, rel=1e-12)
            envs.moved("right", k + 1, transfer_left(envs.left(k), bra.tensors[k], psi.tensors[k], ops[k]))
            if k + 1 < L:
                with pytest.raises(AssertionError, match=f"right block {k + 1}"):
                    envs.right(k + 1)  # stale: dropped by the move
        held = [envs.left(k) for k in range(L + 1)] + [envs.right(0), envs.right(L)]  # right(0): the whole chain
        assert envs.nbytes() == sum(block_bytes(b) for b in held) > 0


def test_same_index_order_as_the_numpy_sweep_steps():
    """With bra = ket and an MPO, the differentiable updates give the blocks of
    :func:`left_step` / :func:`right_step` (the DMRG hot path) in the same layout."""
    psi, _, H = _chain(seed=7)
    L = psi.L
    a = [_np(t) for t in psi.tensors]
    ws = [_np(w) for w in H.tensors]
    lb, lt = np.ones((1, 1, 1)), None
    for k in range(L):
        lb, lt = left_step(lb, a[k], ws[k]), transfer_left(lt, psi.tensors[k], psi.tensors[k], H.tensors[k])
        np.testing.assert_allclose(_np(lt), lb, rtol=1e-12, atol=1e-12)
    rb, rt = np.ones((1, 1, 1)), None
    for k in range(L - 1, -1, -1):
        rb, rt = right_step(rb, a[k], ws[k]), transfer_right(rt, psi.tensors[k], psi.tensors[k], H.tensors[k])
        np.testing.assert_allclose(_np(rt), rb, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["mpo", "site operator", "none"])
def test_symmetric_sites_are_updated_blockwise(kind):
    """Symmetric sites with an MPO on their charge blocks, a site operator of one charge or
    nothing: the blocks stay symmetric tensors and agree with the dense contractions of the
    dense forms, bra unlike ket."""
    L = 4
    psi = MPS.random(L, bond_dim=4, seed=2, charge=0, local="spin-1/2", dtype=tf.complex128)
    phi = MPS.random(L, bond_dim=3, seed=3, charge=0, local="spin-1/2", dtype=tf.complex128)
    assert psi.symmetric
    if kind == "mpo":
        ops = symmetric_mpo_sites(models.heisenberg(L, conserve="Sz").tensors, psi.tensors)
    elif kind == "site operator":
        ops = [operator_tensor(np.diag([0.5, -0.5]), t.legs[1]) for t in psi.tensors]
    else:
        ops = [None] * L
    assert all(o is not None for o in ops) or kind == "none"
    want_l, want_r = _dense_blocks(
        [_np(t) for t in phi.tensors], [_np(t) for t in psi.tensors], [None if o is None else _np(o) for o in ops]
    )
    lt, rt = None, None
    for k in range(L):
        lt = transfer_left(lt, phi.tensors[k], psi.tensors[k], ops[k])
        assert isinstance(lt, t4a.SymmetricTensor)
        np.testing.assert_allclose(_np(lt), want_l[k], atol=1e-12)
    for k in range(L - 1, -1, -1):
        rt = transfer_right(rt, phi.tensors[k], psi.tensors[k], ops[k])
        assert isinstance(rt, t4a.SymmetricTensor)
        np.testing.assert_allclose(_np(rt), want_r[k], atol=1e-12)


def test_updates_are_differentiable():
    """``<phi|W|psi>`` through the updates, differentiated in the MPO and both states."""
    psi = MPS.random(3, bond_dim=2, seed=5, dtype=tf.complex128)
    phi = MPS.random(3, bond_dim=2, seed=6, dtype=tf.complex128)
    ws = models.heisenberg(3, Jz=0.5).tensors

    def value(bra, ket, w1):
        ops = [ws[0], w1, ws[2]]
        left = transfer_left(None, bra[0], ket[0], ops[0])
        last = transfer_right(None, bra[2], ket[2], ops[2])
        at_bond = close(left, transfer_right(last, bra[1], ket[1], ops[1]))
        across = close(left, last, bra[1], ket[1], ops[1])  # the same number, contracted across site 1
        return tf.real(at_bond) + 2.0 * tf.imag(across)

    check_grads(value, (phi.tensors, psi.tensors, ws[1]), order=1)
