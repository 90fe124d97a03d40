"""Found by a second review of tenferro.linalg. Derivatives at exactly repeated eigenvalues and singular values in float32 and complex64 (a
review found them 10-700% off): the degeneracy threshold was 1e-9 of the largest value for every
dtype, below float32's rounding, so two computed copies of a repeated value split by one ulp were
called separated and rounding was divided by rounding. The threshold now has a floor of
``RTOL_FLOOR_EPS`` machine epsilons of the values' dtype. Oracle: central differences of NumPy's
float64 decompositions of the same (float32-rounded) matrix, for gauge-invariant losses."""

from __future__ import annotations

import numpy as np
import pytest
import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg._spectral import effective_rtol

H = 1e-6
TOL = 1e-4  # float32 gradients against float64 differences (before the fix: errors of 0.07 to 7)


def _directional(f, a: np.ndarray, d: np.ndarray) -> float:
    return (f(a + H * d) - f(a - H * d)) / (2 * H)


def test_the_threshold_has_a_floor_for_single_precision():
    assert effective_rtol(1e-9, np.float64) == 1e-9
    assert effective_rtol(1e-9, np.float32) == pytest.approx(64 * np.finfo(np.float32).eps)
    assert effective_rtol(1e-9, np.complex64) == effective_rtol(1e-9, np.float32)
    assert effective_rtol(0.0, np.float32) == 0.0  # exact, as asked


@pytest.mark.parametrize("seed", range(3))
def test_eigh_projector_onto_a_repeated_eigenvalue(seed):
    rng = np.random.default_rng(seed)
    q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    a = q @ np.diag([1.0, 1.0, 2.5, 4.0]) @ q.T
    a = ((a + a.T) / 2).astype(np.float32)
    c = rng.standard_normal((4, 4)).astype(np.float32)
    d = rng.standard_normal((4, 4))
    d = (d + d.T) / 2

    def loss(x):
        _, v = la.eigh(x)
        vb = v[:, :2]
        return tf.sum(tf.asarray(c) * (vb @ tf.transpose(vb)))

    def loss_np(x):
        _, v = np.linalg.eigh(x)
        return float(np.sum(c * (v[:, :2] @ v[:, :2].T)))

    ref = _directional(loss_np, a.astype(np.float64), d)
    g = tidu.grad(loss)(tf.asarray(a)).numpy()
    assert g.dtype == np.float32
    assert abs(float(np.sum(g * d)) - ref) <= TOL * max(1.0, abs(ref))
    _, jv = tidu.jvp(loss, (tf.asarray(a),), (tf.asarray(d.astype(np.float32)),))
    assert abs(float(jv) - ref) <= TOL * max(1.0, abs(ref))


def test_svd_polar_factor_at_a_repeated_singular_value():
    rng = np.random.default_rng(3)
    q1 = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    q2 = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    a = (q1[:, :4] @ np.diag([1.3, 1.3, 9.0, 0.4]) @ q2.T).astype(np.float32)
    c = rng.standard_normal((5, 4)).astype(np.float32)
    d = rng.standard_normal((5, 4))

    def loss(x):
        u, _, vh = la.svd(x)
        return tf.sum(tf.asarray(c) * (u @ vh))

    def loss_np(x):
        u, _, vh = np.linalg.svd(x, full_matrices=False)
        return float(np.sum(c * (u @ vh)))

    ref = _directional(loss_np, a.astype(np.float64), d)
    g = tidu.grad(loss)(tf.asarray(a)).numpy()
    assert abs(float(np.sum(g * d)) - ref) <= TOL * max(1.0, abs(ref))  # float32 gave 2.60 for 1.86


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_eig_spectral_projector_at_a_repeated_eigenvalue(complex_, seed):
    rng = np.random.default_rng(seed)

    def r(*shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if complex_ else x

    p = r(5, 5)
    a = p @ np.diag([1.3, 1.3, 2.0, 3.0, -1.0]) @ np.linalg.inv(p)
    a = a.astype(np.complex64) if complex_ else a.real.astype(np.float32)
    a64 = a.astype(np.complex128 if complex_ else np.float64)
    c, d = r(5, 5), r(5, 5)
    if not complex_:
        d = d.real
    idx = [int(i) for i in np.argsort(np.abs(np.linalg.eigvals(a) - 1.3))[:2]]

    def loss(x):
        _, v = la.eig(x)
        vi = la.inv(v)
        proj = sum(v[:, i : i + 1] @ vi[i : i + 1, :] for i in idx)
        return tf.real(tf.sum(tf.asarray(c) * proj))

    def loss_np(x):
        w, v = np.linalg.eig(x)
        ii = np.argsort(np.abs(w - 1.3))[:2]
        return float(np.real(np.sum(c * (v[:, ii] @ np.linalg.inv(v)[ii, :]))))

    ref = _directional(loss_np, a64, d)
    g = tidu.grad(loss)(tf.asarray(a)).numpy()
    assert abs(float(np.real(np.sum(g * d))) - ref) <= 10 * TOL * max(1.0, abs(ref))  # eig: conditioning |V||V^-1|


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
def test_matrix_norms_of_an_empty_matrix_follow_numpy(shape):
    """ord 2, 1, inf of an empty matrix raised an error naming the internal max; NumPy gives 0
    where the norm is a maximum over no values and refuses a minimum over none."""
    x = np.zeros(shape)
    for ord_ in (2, -2, 1, -1, np.inf, -np.inf):
        try:
            want = np.linalg.norm(x, ord_)
        except ValueError:
            with pytest.raises(tf.TenferroError, match=r"norm: ord=.* empty matrix"):
                la.norm(tf.asarray(x), ord_)
        else:
            assert float(la.norm(tf.asarray(x), ord_)) == want == 0.0


def test_truncation_rank_checks_its_values():
    """NaN, a matrix or complex values gave a rank silently; a bad max_rank named truncated_svd."""
    with pytest.raises(la.NonFiniteError, match="truncation_rank: the singular values hold NaN"):
        la.truncation_rank(np.array([3.0, np.nan, 1.0]), None, 0.1)
    for s in (np.array([[3.0, 1.0], [2.0, 0.1]]), np.array([1 + 1j, 0.5])):
        with pytest.raises(TypeError, match="truncation_rank: s must be one real vector"):
            la.truncation_rank(s, 3)
    with pytest.raises(ValueError, match="truncation_rank: max_rank"):
        la.truncation_rank(np.ones(3), 0)
    with pytest.raises(ValueError, match="truncated_svd: max_rank"):
        la.truncated_svd(tf.asarray(np.eye(3)), 0)
