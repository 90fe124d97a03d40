"""Derivatives of eigh and svd that the decomposition does not determine, reported
instead of returned silently (docs/ad/gauge.md):

* order >= 2 through a degenerate block of eigenvalues / singular values in a direction
  that splits it (the off-diagonal part of the in-block perturbation ``V_B^H dA_h V_B``,
  for svd of the Hermitian part of ``U_B^H dA V_B``, in the decomposition's basis): inside
  the block the values move as the eigenvalues of that perturbation, which a rule linear
  in it cannot give, so ``jvp(grad(sum(eigvalsh(a) ** 3)))`` misses part of ``6 tr(A dA dA)``;
* first order at an exactly zero singular value of a non-square (or complex) matrix, or
  of two: ``1/s`` is 0 there and ``U S Vh`` loses the terms outside the range.

The references are closed forms (``d^2 tr(H^3) = 6 tr(H dH dH)``, ``d^2 log det H = -tr(H^-1
dH H^-1 dH)``, ``d^2 ||A||^2 = 2 ||dA||^2``, ``d^2 tr((A^H A)^2)``) or central differences
in float64; the directional second derivative is ``Re sum(jvp(grad f)(A; dA) * dA)``
(tidu's pairing ``<x, y> = Re sum(x y)``). Where the perturbation respects the degeneracy
(a multiple of the identity in the block, or diagonal in the decomposition's own basis)
the value is exact and nothing is reported."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg import DegeneracyError, DegeneracyWarning, GaugeWarning

CPLX = pytest.mark.parametrize("cplx", [False, True], ids=["float64", "complex128"])


def _rand(rng, shape, cplx):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if cplx else x


def _unitary(rng, n, cplx):
    return np.linalg.qr(_rand(rng, (n, n), cplx))[0]


def _herm(x):
    return 0.5 * (x + x.conj().T)


def _degenerate_hermitian(rng, cplx, w=(1.0, 1.0, 1.0, 3.0)):
    q = _unitary(rng, len(w), cplx)
    return _herm((q * np.asarray(w)) @ q.conj().T)


def _degenerate_tall(rng, cplx, s=(2.0, 2.0, 1.0), m=5):
    u = np.linalg.qr(_rand(rng, (m, len(s)), cplx))[0]
    return (u * np.asarray(s)) @ _unitary(rng, len(s), cplx).conj().T


def _second(f, a, da):
    """``d^2 f[da, da]`` by forward over reverse."""
    _, hv = tidu.jvp(tidu.grad(f), (tf.asarray(a),), (tf.asarray(da),))
    return float(np.real(np.sum(np.asarray(hv) * da)))


def _quiet(fn):
    """``fn()``, asserting that it reports nothing (no DegeneracyWarning nor GaugeWarning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    bad = [str(w.message)[:120] for w in caught if issubclass(w.category, (DegeneracyWarning, GaugeWarning))]
    assert not bad, bad
    return out


def _cube(x):
    return tf.sum(la.eigvalsh(x) ** 3)


def _logdet(x):
    return tf.sum(tf.log(la.eigvalsh(x)))


def _sq(x):
    return tf.sum(la.svdvals(x) ** 2)


def _fourth(x):
    return tf.sum(la.svdvals(x) ** 4)


def _cube_exact(a, da):
    h, dh = _herm(a), _herm(da)
    return 6 * np.real(np.trace(h @ dh @ dh))


def _logdet_exact(a, da):
    hi, dh = np.linalg.inv(_herm(a)), _herm(da)
    return -np.real(np.trace(hi @ dh @ hi @ dh))


def _fourth_exact(a, da):
    b0, b1, b2 = a.conj().T @ a, a.conj().T @ da + da.conj().T @ a, da.conj().T @ da
    return np.real(2 * np.trace(b1 @ b1) + 4 * np.trace(b0 @ b2))


# --- order 2 through a degenerate block: reported -------------------------------------------
@CPLX
def test_eigh_second_derivative_through_degenerate_block_warns(cplx):
    rng = np.random.default_rng(21)
    a = _degenerate_hermitian(rng, cplx)
    da = _rand(rng, (4, 4), cplx)
    with pytest.warns(DegeneracyWarning, match="order >= 2.*degenerate block of eigenvalues.*funm_hermitian"):
        got = _second(_cube, a, da)
    exact = _cube_exact(a, da)
    assert abs(got - exact) > 1e-3 * abs(exact)  # what is reported: the in-block part is missing


@CPLX
def test_log_eigvalsh_at_identity_warns_and_slogdet_is_exact(cplx):
    rng = np.random.default_rng(3)
    da = _rand(rng, (4, 4), cplx)
    eye = np.eye(4, dtype=da.dtype)
    exact = _logdet_exact(eye, da)
    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        got = _second(_logdet, eye, da)
    assert abs(got - exact) > 1e-3 * abs(exact)

    def slogdet_of_herm(x):  # the way out the message names: a rule of its own
        return tf.real(la.slogdet(tf.multiply(tf.add(x, tf.conj(tf.transpose(x))), 0.5))[1])

    assert _quiet(lambda: _second(slogdet_of_herm, eye, da)) == pytest.approx(exact, rel=1e-12)


@CPLX
def test_svd_second_derivative_through_degenerate_block_warns(cplx):
    rng = np.random.default_rng(6)
    a = _degenerate_tall(rng, cplx)
    da = _rand(rng, a.shape, cplx)
    with pytest.warns(DegeneracyWarning, match="order >= 2.*degenerate block of singular values"):
        got = _second(_sq, a, da)
    exact = 2 * np.linalg.norm(da) ** 2
    assert abs(got - exact) > 1e-3 * exact
    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        got = _second(_fourth, a, da)
    assert abs(got - _fourth_exact(a, da)) > 1e-3 * abs(_fourth_exact(a, da))


def test_hessian_at_identity_warns():
    # the Hessian of ||herm(A)||_F^2 at I is v -> v + v^T; through eigvalsh it loses the
    # off-diagonal entries (every basis direction off the diagonal splits the block)
    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        h = np.asarray(tidu.hessian(lambda x: tf.sum(la.eigvalsh(x) ** 2))(tf.asarray(np.eye(3))))
    v = np.random.default_rng(1).standard_normal((3, 3))
    assert not np.allclose(np.einsum("ijkl,kl->ij", h, v), v + v.T)
    with pytest.warns(DegeneracyWarning, match="order >= 2.*singular values"):
        tidu.hessian(_sq)(tf.asarray(np.eye(3)))
    # under vmap (the batch of matrices and the Hessian's basis: two levels of batch axes)
    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        tidu.vmap(tidu.hessian(_sq))(tf.asarray(np.stack([np.diag([1.0, 2.0, 3.0]), np.eye(3)])))
    _quiet(
        lambda: tidu.vmap(tidu.hessian(_sq))(tf.asarray(np.stack([np.diag([1.0, 2.0, 3.0]), np.diag([1.0, 2.0, 4.0])])))
    )


def test_forward_over_forward_warns_only_when_both_directions_split():
    # d^2 sum f(w)[d1, d2] misses f'' Re tr(off(M1_B) off(M2_B)): zero when either direction
    # is diagonal in the block
    rng = np.random.default_rng(2)
    v1, v2 = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    d = np.diag([1.0, 2.0, 3.0])
    eye = tf.asarray(np.eye(3))

    def mixed(x1, x2):
        inner = lambda x: tidu.jvp(lambda y: tf.sum(la.eigvalsh(y) ** 3), (x,), (tf.asarray(x1),))[1]
        return float(np.asarray(tidu.jvp(inner, (eye,), (tf.asarray(x2),))[1]))

    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        mixed(v1, v2)
    for x1, x2 in ((v1, d), (d, v2)):
        got = _quiet(lambda: mixed(x1, x2))
        assert got == pytest.approx(6 * np.trace(_herm(x1) @ _herm(x2)), rel=1e-12)


def test_policy_raise_and_ignore():
    rng = np.random.default_rng(4)
    da = rng.standard_normal((3, 3))
    with la.settings(gauge="raise"):
        with pytest.raises(DegeneracyError, match="order >= 2"):
            _second(_cube, np.eye(3), da)
    with la.settings(gauge="ignore"):
        _quiet(lambda: _second(_cube, np.eye(3), da))


def test_staged_second_derivative_is_not_checked():
    # under jit the values are abstract: the check is skipped (docs/ad/gauge.md)
    rng = np.random.default_rng(6)
    da = tf.asarray(rng.standard_normal((3, 3)))
    with la.settings(gauge="raise"):
        f = tf.jit(lambda x, y: tidu.hvp(_cube, (x,), (y,))[0])
        out = _quiet(lambda: np.asarray(f(tf.asarray(np.eye(3)), da)))
    assert out.shape == (3, 3)


def test_direction_without_in_block_diagonal_warns():
    # sum (w - 1)^2 at I: the values' cotangent is 0 on the block and its derivative
    # 2 diag(V^H dA V) is 0 along a direction with no in-block diagonal, though f'' = 2
    f = lambda x: tf.sum((la.eigvalsh(x) - 1.0) ** 2)
    off = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        got = _second(f, np.eye(3), off)
    assert got != pytest.approx(2 * np.linalg.norm(off) ** 2)
    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        tidu.hessian(f)(tf.asarray(np.eye(3)))


def test_vector_coupled_to_a_degenerate_block_warns():
    # v_0 v_0^H (v_0 simple) beside a degenerate block: dv_0 = sum_k v_k M_k0 / (w_0 - w_k) sums
    # over the block, and its derivative needs the block's own splitting
    rng = np.random.default_rng(13)
    a = _degenerate_hermitian(rng, False, w=(0.0, 1.0, 1.0, 3.0))
    c = _herm(rng.standard_normal((4, 4)))

    def proj0(x):
        v = la.eigh(x)[1][:, 0]
        return tf.sum(tf.einsum("i,j->ij", v, v) * tf.asarray(c))

    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        tidu.hvp(proj0, (tf.asarray(a),), (tf.asarray(_herm(rng.standard_normal((4, 4)))),))


# --- order 2 where the perturbation respects the degeneracy: exact, nothing reported ----------
@CPLX
def test_non_degenerate_second_derivatives_are_exact_and_quiet(cplx):
    rng = np.random.default_rng(7)
    a = _herm(_rand(rng, (4, 4), cplx)) + 4 * np.eye(4)
    da = _rand(rng, (4, 4), cplx)
    assert _quiet(lambda: _second(_cube, a, da)) == pytest.approx(_cube_exact(a, da), rel=1e-10)
    assert _quiet(lambda: _second(_logdet, a, da)) == pytest.approx(_logdet_exact(a, da), rel=1e-10)
    m, dm = _rand(rng, (5, 3), cplx), _rand(rng, (5, 3), cplx)
    assert _quiet(lambda: _second(_fourth, m, dm)) == pytest.approx(_fourth_exact(m, dm), rel=1e-10)


@CPLX
def test_first_order_at_degenerate_block_is_quiet(cplx):
    rng = np.random.default_rng(8)
    a = _degenerate_hermitian(rng, cplx)
    da = _rand(rng, (4, 4), cplx)
    g = np.asarray(_quiet(lambda: tidu.grad(_cube)(tf.asarray(a))))
    h = _herm(a)
    ref = 3 * (h @ h).T  # tidu's cotangent of tr(H^3): conj of the gradient 3 H^2
    assert np.allclose(g, ref, atol=1e-12)
    _, t = _quiet(lambda: tidu.jvp(_cube, (tf.asarray(a),), (tf.asarray(da),)))
    assert float(np.asarray(t)) == pytest.approx(3 * np.real(np.trace(h @ h @ _herm(da))), rel=1e-12)


@CPLX
def test_identity_direction_at_identity_is_exact_and_quiet(cplx):
    c = 0.7 + (0.3j if cplx else 0)  # herm(c I) = Re(c) I
    eye = np.eye(4, dtype=complex if cplx else float)
    da = c * eye
    assert _quiet(lambda: _second(_cube, eye, da)) == pytest.approx(_cube_exact(eye, da), rel=1e-12)
    assert _quiet(lambda: _second(_logdet, eye, da)) == pytest.approx(_logdet_exact(eye, da), rel=1e-12)
    assert _quiet(lambda: _second(_sq, eye, da)) == pytest.approx(2 * np.linalg.norm(da) ** 2, rel=1e-12)


@CPLX
def test_block_respecting_direction_is_exact_and_quiet(cplx):
    # A = Q diag(1, 1, 1, 3) Q^H, dA = Q [[c I, x], [x^H, e]] Q^H: the in-block part is c I in
    # every basis, whatever the coupling to the rest
    rng = np.random.default_rng(9)
    q = _unitary(rng, 4, cplx)
    a = _herm(q @ np.diag([1.0, 1.0, 1.0, 3.0]) @ q.conj().T)
    inner = _herm(_rand(rng, (4, 4), cplx))
    inner[:3, :3] = 0.4 * np.eye(3)
    da = q @ inner @ q.conj().T
    assert _quiet(lambda: _second(_cube, a, da)) == pytest.approx(_cube_exact(a, da), rel=1e-10)
    assert _quiet(lambda: _second(_logdet, a, da)) == pytest.approx(_logdet_exact(a, da), rel=1e-10)


@CPLX
def test_diagonal_spread_in_the_decompositions_basis_is_exact_and_quiet(cplx):
    # what makes the second order wrong is the off-diagonal in-block part in the returned
    # basis, not the spread of its diagonal: a direction diagonal in V_B (distinct entries)
    # splits the block along the returned vectors, which the rule then follows exactly
    rng = np.random.default_rng(10)
    a = _degenerate_hermitian(rng, cplx)
    v = np.asarray(la.eigh(tf.asarray(a))[1])
    inner = _herm(_rand(rng, (4, 4), cplx))
    inner[:3, :3] = np.diag([0.3, -1.1, 2.0])
    da = v @ inner @ v.conj().T
    assert _quiet(lambda: _second(_cube, a, da)) == pytest.approx(_cube_exact(a, da), rel=1e-10)
    assert _quiet(lambda: _second(_logdet, a, da)) == pytest.approx(_logdet_exact(a, da), rel=1e-10)
    inner[:3, :3] += np.diag([0.0, 0.0, 1e-3]) @ np.ones((3, 3))  # one off-diagonal row: reported
    inner = _herm(inner)
    with pytest.warns(DegeneracyWarning, match="order >= 2"):
        _second(_cube, a, v @ inner @ v.conj().T)


@CPLX
def test_svd_in_block_skew_part_and_diagonal_spread_are_exact_and_quiet(cplx):
    # svd: only the Hermitian part of U_B^H dA V_B splits the block (the skew part is the
    # finite D term the rule keeps); its diagonal spread in the returned basis is followed
    rng = np.random.default_rng(11)
    a = _degenerate_tall(rng, cplx)
    u, _, vh = (np.asarray(x) for x in la.svd(tf.asarray(a)))
    perp = np.linalg.qr(np.concatenate([u, _rand(rng, (5, 2), cplx)], axis=1))[0][:, 3:]
    for block in ("skew", "spread", "identity+skew"):
        p = _rand(rng, (3, 3), cplx)
        h, k = _herm(p), p - _herm(p)
        h[:2, :2] = {"skew": 0 * h[:2, :2], "spread": np.diag([0.5, -0.8]), "identity+skew": 0.6 * np.eye(2)}[block]
        da = u @ (h + k) @ vh + perp @ _rand(rng, (2, 3), cplx) @ vh
        assert _quiet(lambda: _second(_sq, a, da)) == pytest.approx(2 * np.linalg.norm(da) ** 2, rel=1e-10)
        assert _quiet(lambda: _second(_fourth, a, da)) == pytest.approx(_fourth_exact(a, da), rel=1e-10)


@CPLX
def test_functions_that_do_not_touch_the_block_are_exact_and_quiet(cplx):
    # the ground-state energy beside a degenerate excited block: its cotangent never reaches
    # the block, so the pass is exact (d^2 w_0 = 2 sum_k |(V^H dH V)_k0|^2 / (w_0 - w_k))
    rng = np.random.default_rng(14)
    a = _degenerate_hermitian(rng, cplx, w=(-1.0, 1.0, 1.0, 1.0))
    da = _rand(rng, (4, 4), cplx)
    w, v = np.linalg.eigh(a)
    mk = v.conj().T @ _herm(da) @ v
    exact = 2 * np.sum(np.abs(mk[1:, 0]) ** 2 / (w[0] - w[1:]))
    assert _quiet(lambda: _second(lambda x: la.eigvalsh(x)[0], a, da)) == pytest.approx(exact, rel=1e-10)
    e0 = w[0]
    exact2 = 2 * np.real(mk[0, 0]) ** 2 + 2 * e0 * exact
    assert _quiet(lambda: _second(lambda x: la.eigvalsh(x)[0] ** 2, a, da)) == pytest.approx(exact2, rel=1e-10)
    if not cplx:
        _quiet(lambda: tidu.hessian(lambda x: la.eigvalsh(x)[0])(tf.asarray(a)))
        # at a diagonal matrix the off-diagonal basis directions have no in-block diagonal;
        # the diagonal ones show that the values' cotangent does not respond on the block
        h = _quiet(lambda: np.asarray(tidu.hessian(lambda x: la.eigvalsh(x)[0] ** 2)(tf.asarray(np.diag([0.5, 1, 1])))))
        e = np.zeros((3, 3))
        e[0, 0] = 1.0
        assert np.allclose(np.einsum("ijkl,kl->ij", h, e), 2 * e, atol=1e-12)
    # functions linear in the block's values: tr A (Hessian 0) and the nuclear norm
    assert _quiet(lambda: _second(lambda x: tf.sum(la.eigvalsh(x)), a, da)) == pytest.approx(0, abs=1e-12)
    m, dm = _degenerate_tall(rng, cplx), _rand(rng, (5, 3), cplx)
    nuc = lambda x: tf.sum(la.svdvals(x))
    g = tidu.grad(nuc)
    h = 1e-4
    ref = sum(k * np.asarray(g(tf.asarray(m + j * h * dm))) for j, k in ((-2, 1), (-1, -8), (1, 8), (2, -1))) / (
        12 * h
    )  # central differences of the (exact) first derivative
    got = _quiet(lambda: np.asarray(tidu.hvp(nuc, (tf.asarray(m),), (tf.asarray(dm),))[0]))
    assert np.allclose(got, ref, atol=1e-8)


def test_tensor_network_style_symmetric_perturbation_is_quiet():
    # a block-diagonal (charge-sector) matrix with a degeneracy repeated in two sectors and a
    # perturbation with the same symmetry (one scalar parameter): the in-block part is a
    # multiple of the identity, as for a temperature derivative
    rng = np.random.default_rng(12)
    blk = _herm(rng.standard_normal((3, 3)))
    dblk = _herm(rng.standard_normal((3, 3)))
    a = np.kron(np.eye(2), blk)
    da = np.kron(np.eye(2), dblk)
    assert _quiet(lambda: _second(_cube, a, da)) == pytest.approx(_cube_exact(a, da), rel=1e-10)
    m = np.kron(np.eye(2), rng.standard_normal((3, 2)))
    dm = np.kron(np.eye(2), rng.standard_normal((3, 2)))
    assert _quiet(lambda: _second(_fourth, m, dm)) == pytest.approx(_fourth_exact(m, dm), rel=1e-10)


# --- exactly zero singular values (first order, reverse mode) ---------------------------------
def _with_zero(rng, m, n, k_zero, cplx):
    a = _rand(rng, (m, n), cplx)
    if m >= n:
        a[:, n - k_zero :] = 0
    else:
        a[m - k_zero :, :] = 0
    return a


def _recon(c):
    c = tf.asarray(c)

    def loss(x):
        u, s, vh = la.svd(x)
        return tf.sum(tf.real(tf.einsum("ik,k,kj->ij", u, s, vh) * c))

    return loss


@pytest.mark.parametrize(
    "m, n, k_zero, cplx",
    [(4, 3, 1, False), (3, 4, 1, False), (4, 3, 1, True), (3, 3, 1, True), (3, 3, 2, False)],
    ids=["tall", "wide", "tall-complex", "square-complex", "square-two-zeros"],
)
def test_exact_zero_singular_value_reconstruction_warns(m, n, k_zero, cplx):
    rng = np.random.default_rng(1)
    a = _with_zero(rng, m, n, k_zero, cplx)
    assert np.sum(np.asarray(la.svdvals(tf.asarray(a))) == 0) == k_zero
    c = _rand(rng, (m, n), cplx)
    with pytest.warns(DegeneracyWarning, match="exactly zero singular value"):
        g = np.asarray(tidu.grad(_recon(c))(tf.asarray(a)))
    assert np.abs(g - c).max() > 1e-3  # <C, U S Vh> = <C, A>: the exact gradient is C
    with la.settings(gauge="raise"), pytest.raises(DegeneracyError, match="exactly zero"):
        tidu.grad(_recon(c))(tf.asarray(a))


def _central_gradient(f, a, h=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = h
        g[idx] = (f(a + e) - f(a - e)) / (2 * h)
    return g


def test_exact_zero_singular_value_exact_cases_are_quiet():
    rng = np.random.default_rng(1)
    c = rng.standard_normal((4, 3))
    # a square real matrix with one exact zero drops nothing: the gradient of U S Vh is exact
    sq = _with_zero(rng, 3, 3, 1, False)
    g = np.asarray(_quiet(lambda: tidu.grad(_recon(c[:3]))(tf.asarray(sq))))
    assert np.allclose(g, c[:3], atol=1e-12)
    tall = _with_zero(rng, 4, 3, 1, False)
    # values alone, and the truncation to the nonzero values (exact through the range)
    g = np.asarray(_quiet(lambda: tidu.grad(_sq)(tf.asarray(tall))))
    assert np.allclose(g, 2 * tall, atol=1e-12)

    def trunc(x):
        u, s, vh = la.truncated_svd(x, max_rank=2)
        return tf.sum(tf.einsum("ik,k,kj->ij", u, s, vh) * tf.asarray(c))

    g = np.asarray(_quiet(lambda: tidu.grad(trunc)(tf.asarray(tall))))
    ref = _central_gradient(lambda x: float(np.asarray(trunc(tf.asarray(x)))), tall)
    assert np.allclose(g, ref, atol=1e-8)

    def range_projector(x):  # U_r U_r^H of the nonzero values
        u = la.svd(x)[0][:, :2]
        return tf.sum(tf.einsum("ik,jk->ij", u, u) * tf.asarray(c @ c.T))

    g = np.asarray(_quiet(lambda: tidu.grad(range_projector)(tf.asarray(tall))))
    ref = _central_gradient(lambda x: float(np.asarray(range_projector(tf.asarray(x)))), tall)
    assert np.allclose(g, ref, atol=1e-8)


# --- eig: order 2 at a repeated eigenvalue (a later review) -----------------------------------
def _eig_sum_squares(x):
    return tf.sum(tf.real(la.eigvals(x) ** 2))  # Re tr(A^2): d^2 along E is 2 Re tr(E^2)


@CPLX
def test_eig_second_derivative_at_a_repeated_eigenvalue_warns(cplx):
    """``eig``'s rule masks the couplings of a repeated eigenvalue (exact at first order), and a
    second derivative through it was off by up to 6 with no word (``eigh`` and ``svd`` warn):
    now the same ``DegeneracyWarning``; apart from the repetition the result is exact and quiet."""
    rng = np.random.default_rng(4)
    x = np.eye(3) + 0.3 * _rand(rng, (3, 3), cplx)
    e = _rand(rng, (3, 3), cplx)
    exact = float(np.real(2 * np.trace(e @ e)))
    repeated = x @ np.diag([1.0, 1.0, 3.0]) @ np.linalg.inv(x)
    with pytest.warns(DegeneracyWarning, match="eig: a derivative of order >= 2"):
        got = _second(_eig_sum_squares, repeated, e)
    assert abs(got - exact) > 1e-3 * abs(exact)  # what is reported: the in-block part is missing
    distinct = x @ np.diag([1.0, 2.0, 3.0]) @ np.linalg.inv(x)
    assert _quiet(lambda: _second(_eig_sum_squares, distinct, e)) == pytest.approx(exact, rel=1e-9)
    # first order at the repetition is exact and quiet: the gradient of Re tr(A^2) is 2 A^T (JAX's
    # convention for complex input: df = Re <conj(g), dA>)
    g = _quiet(lambda: tidu.grad(_eig_sum_squares)(tf.asarray(repeated)))
    np.testing.assert_allclose(np.asarray(g), 2 * repeated.T, atol=1e-10)
