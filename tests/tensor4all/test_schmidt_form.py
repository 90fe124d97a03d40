"""The Schmidt form an MPS keeps (``MPS.schmidt_form``) against exact values computed here.

Every reference comes from the dense state vector, contracted here with NumPy from the site
tensors: the Schmidt values of a bond are the singular values of the vector reshaped across it,
an expectation value is ``<v|O|v> / <v|v>`` with explicit Kronecker products. Checked: the form's
invariants (left-orthonormal sites, ``diag(s^2)`` right environments), dense and symmetric
states of several charges and dtypes (hypothesis), the form dropped whenever a site tensor
changes, the states ``dmrg`` returns (which come with their form), the batched correlation pass
in chunks, and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import MPS, models
from tensor4all.networks import schmidt_form as sf

SZ = np.diag([0.5, -0.5])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])


def _vector(psi: MPS) -> np.ndarray:
    v = np.ones((1, 1))
    for t in psi.tensors:
        a = np.asarray(t.to_dense() if psi.symmetric else t)
        v = np.einsum("na,asb->nsb", v, a).reshape(-1, a.shape[2])
    return v.reshape(-1)


def _exact_schmidt(psi: MPS) -> list[np.ndarray]:
    v = _vector(psi)
    v = v / np.linalg.norm(v)
    dims = psi.phys_dims
    out = []
    for b in range(len(dims) - 1):
        left = int(np.prod(dims[: b + 1]))
        out.append(np.linalg.svd(v.reshape(left, -1), compute_uv=False))
    return out


def _kron(ops: dict[int, np.ndarray], dims: list[int]) -> np.ndarray:
    m = np.ones((1, 1))
    for k, d in enumerate(dims):
        m = np.kron(m, ops.get(k, np.eye(d)))
    return m


def _check_values(psi: MPS) -> None:
    got = psi.schmidt_values()
    for g, w in zip(got, _exact_schmidt(psi)):
        n = min(len(g), len(w))
        np.testing.assert_allclose(g[:n], w[:n], atol=1e-12)
        assert np.all(np.abs(g[n:]) < 1e-12) and np.all(np.abs(w[n:]) < 1e-12)
    ents = psi.entanglement_entropy()
    for e, w in zip(ents, _exact_schmidt(psi)):
        p = w[w > 1e-300] ** 2
        assert e == pytest.approx(float(-np.sum(p * np.log(p))), abs=1e-11)


def _check_invariants(form: sf.SchmidtForm) -> None:
    """Every site left-orthonormal; the right environment of each bond is diag(s^2) (the values
    of the form); the last site is a unit vector."""
    for i, blocks in enumerate(form.sites):
        gram: dict[int, np.ndarray] = {}
        for b in blocks:
            m = b.array.reshape(-1, b.array.shape[2])
            gram[b.right] = gram.get(b.right, 0) + m.conj().T @ m
        for g in gram.values():
            np.testing.assert_allclose(g, np.eye(len(g)), atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    L=st.integers(2, 7),
    bond=st.integers(1, 9),
    seed=st.integers(0, 10**6),
    dtype=st.sampled_from([tf.float64, tf.complex128]),
    conserve=st.sampled_from([None, "Sz"]),
    shift=st.sampled_from([None, 0, 1, -1]),
)
def test_schmidt_values_are_those_of_the_state_vector(L, bond, seed, dtype, conserve, shift):
    if conserve is None:
        psi = MPS.random(L, d=2, bond_dim=bond, seed=seed, dtype=dtype)
    else:
        charge = None if shift is None else (L % 2) / 2 + shift  # Sz of the sector
        psi = MPS.random(L, d=2, bond_dim=bond, seed=seed, dtype=dtype, conserve="Sz", charge=charge)
    # a non-canonical gauge: scale and mix the sites, so the form must do its own sweeps
    psi = psi * 3.0
    _check_values(psi)
    _check_invariants(psi.schmidt_form())
    v = _vector(psi)
    for i in range(L):
        want = np.vdot(v, _kron({i: SZ}, [2] * L) @ v).real / np.vdot(v, v).real
        assert float(psi.expect("Sz", i)) == pytest.approx(want, abs=1e-12)


def test_spin_one_and_electron_sectors():
    for psi in (
        MPS.random(5, d=3, bond_dim=6, seed=4, conserve="Sz", charge=1),
        MPS.random(4, d=4, bond_dim=8, seed=5, conserve="N,Sz", charge=(4, 0), local="electron"),
    ):
        _check_values(psi)
        spectrum = psi.entanglement_spectrum(1)
        merged = np.sort(np.concatenate(list(spectrum.values())))[::-1]
        np.testing.assert_allclose(merged, psi.schmidt_values()[1], atol=0)


def test_the_form_is_dropped_when_a_site_tensor_changes():
    psi = MPS.random(8, bond_dim=8, seed=3)
    before = psi.entanglement_entropy()
    assert psi._form is not None
    psi.compress(max_bond=2)
    assert psi._form is None
    after = psi.entanglement_entropy()
    assert max(abs(a - b) for a, b in zip(before, after)) > 1e-3  # the truncated state differs
    _check_values(psi)
    psi.canonicalize(3)
    assert psi._form is None and psi._center == 3
    _check_values(psi)
    psi.normalize()
    _check_values(psi)


@pytest.mark.parametrize("kw", [{}, {"two_site": False}, {"conserve": "Sz"}, {"conserve": "Sz", "two_site": False}])
def test_dmrg_states_come_with_their_form(kw):
    """``dmrg`` ends at site 0 with the other sites right-orthonormal and attaches the form made
    from that (one SVD sweep); it equals the form made without that knowledge, and the state's
    values are those of its vector."""
    H = models.heisenberg(10, conserve="Sz" if "conserve" in kw else None)
    psi = t4a.dmrg(H, max_bond=12, sweeps=3, **kw).state
    assert psi._form is not None
    ts = psi.tensors if psi.symmetric else [np.asarray(t) for t in psi.tensors]
    general = sf.schmidt_form(ts)
    for a, b in zip(psi.schmidt_values(), general.schmidt_values()):
        np.testing.assert_allclose(a, b, atol=1e-13)
    _check_values(psi)


def test_correlation_rows_in_chunks_equal_one_batch(monkeypatch):
    psi = MPS.random(9, bond_dim=6, seed=8, dtype=tf.complex128, conserve="Sz", charge=1.5)
    whole = np.asarray(psi.correlation_matrix("S+", "S-"))
    monkeypatch.setattr(sf, "BATCH_BYTES", 1)  # one row at a time
    np.testing.assert_allclose(np.asarray(psi.correlation_matrix("S+", "S-")), whole, atol=1e-14)
    v = _vector(psi)
    want = np.array(
        [[np.vdot(v, _kron({i: SP}, [2] * 9) @ _kron({j: SP.T}, [2] * 9) @ v) for j in range(9)] for i in range(9)]
    ) / np.vdot(v, v)
    np.testing.assert_allclose(whole, want, atol=1e-12)


def test_zero_norm_and_traced_states():
    zero = MPS([np.zeros((1, 2, 1))] * 3)
    with pytest.raises(t4a.ZeroNormError, match="MPS.schmidt_form: the state has norm 0"):
        zero.schmidt_form()
    assert zero._form is None

    psi = MPS.random(4, bond_dim=2, seed=1)
    with pytest.raises(t4a.NotDifferentiableError, match="MPS.schmidt_form"):
        tidu.grad(lambda p: (p.schmidt_form(), tf.sum(p.tensors[0]))[1])(psi)
    # a traced state measures by the differentiable path; its value equals the form's
    g = tidu.grad(lambda p: p.expect("Sz", 1))(psi)
    assert isinstance(g, MPS)


def test_long_chains_neither_overflow_nor_underflow():
    """Sites scaled by 1e200 (and 1e-200) give the same form as the unit-scaled state."""
    psi = MPS.random(6, bond_dim=4, seed=2)
    big = MPS([t * 1e200 for t in psi.tensors])
    small = MPS([t * 1e-200 for t in psi.tensors])
    for other in (big, small):
        for a, b in zip(other.schmidt_values(), psi.schmidt_values()):
            np.testing.assert_allclose(a, b, atol=1e-13)
        np.testing.assert_allclose(np.asarray(other.expect("Sz")), np.asarray(psi.expect("Sz")), atol=1e-13)
