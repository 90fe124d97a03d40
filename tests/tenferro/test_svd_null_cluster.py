"""Second derivatives through a truncated SVD of rank-deficient input (docs/ad/gauge.md, "Zero
singular values"): the kept vectors take their null-space terms through the range, so a
second derivative does not differentiate the null vectors' rotation among themselves (rates
``1/(s_j - s_i)`` between values of 1e-20 to 1e-36, terms that cancel only to rounding).

``A(t) = X(t) Y(t)^T`` keeps rank ``r`` for every ``t``, so the rank-``r`` reconstruction
``U_r S_r Vh_r`` is ``A(t)`` itself and ``d^2/dt^2 <W, A(t)>`` is known in closed form. Graded
rows and columns make LAPACK return null values far below ``eps s_max``; before the change the
second derivative was off by up to 6e-8 (relative) there."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu


def _rand(rng, shape, cplx):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if cplx else x


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("grade", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("m, n, r", [(6, 6, 2), (8, 5, 2), (5, 8, 3)])
def test_second_derivative_of_a_truncated_reconstruction(m, n, r, grade, cplx):
    rng = np.random.default_rng(100 * m + 10 * n + r)
    gm, gn = grade ** np.arange(m), grade ** np.arange(n)
    xs = [gm[:, None] * _rand(rng, (m, r), cplx) for _ in range(3)]
    ys = [gn[:, None] * _rand(rng, (n, r), cplx) for _ in range(3)]
    w = _rand(rng, (m, n), cplx)

    def f(t):
        x = tf.asarray(xs[0]) + tf.asarray(xs[1]) * t + tf.asarray(xs[2]) * (t * t)
        y = tf.asarray(ys[0]) + tf.asarray(ys[1]) * t + tf.asarray(ys[2]) * (t * t)
        u, s, vh = tf.linalg.svd(tf.matmul(x, tf.transpose(y)))
        rec = tf.matmul(u[:, :r] * s[:r][None, :], vh[:r, :])
        return tf.real(tf.sum(rec * tf.asarray(np.conj(w))))

    one = tf.asarray(1.0)
    (_, d1), (_, d2) = tidu.jvp(lambda t: tidu.jvp(f, (t,), (one,)), (tf.asarray(0.0),), (one,))
    x0, x1, x2 = xs
    y0, y1, y2 = ys
    exact1 = np.real(np.sum(np.conj(w) * (x1 @ y0.T + x0 @ y1.T)))
    exact2 = np.real(np.sum(np.conj(w) * 2 * (x2 @ y0.T + x1 @ y1.T + x0 @ y2.T)))
    assert abs(float(np.asarray(d1)) - exact1) <= 1e-12 * abs(exact1)
    assert abs(float(np.asarray(d2)) - exact2) <= 1e-12 * abs(exact2)


def test_full_rank_input_takes_the_plain_rule():
    """No value at rounding level: the rule is the one without a cluster, bit for bit."""
    from tenferro.linalg._svd import _rounding_null

    assert _rounding_null(tf.asarray(np.array([3.0, 2.0, 1e-8])), 4, 3) is None
    assert _rounding_null(tf.asarray(np.array([0.0, 0.0])), 2, 2) is None  # all null: no range
    r, z, _, _ = _rounding_null(tf.asarray(np.array([1.0, 1e-17, 0.0])), 3, 3)
    np.testing.assert_array_equal(np.asarray(r), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(z), [0.0, 1.0, 1.0])


def _best_rank(a: np.ndarray, r: int) -> np.ndarray:
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (u[:, :r] * s[:r]) @ vh[:r]


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("m, n, r", [(2, 2, 1), (5, 4, 2), (4, 4, 2), (4, 6, 3)])
def test_second_derivative_along_a_direction_that_raises_the_rank(m, n, r, cplx):
    """At a matrix of rank ``r``, ``f(t) = <C, best rank-r approximation of A + t E>`` for a generic
    ``E`` (which raises the rank): the second derivative of ``U_r S_r Vh_r`` and of the projector
    ``U_r U_r^H`` through ``truncated_svd``. The kept vectors dropped the ``s_Z``-weighted terms of
    their null-space coefficients, exact at first order (``s_Z = 0``) but not their derivative:
    the second derivative was off by 10-50% (the reviewer's 2 x 2 case: -0.0630 for -0.0718).
    Against a five-point finite difference of NumPy's SVD (error O(h^4))."""
    rng = np.random.default_rng(7 * m + n + r)
    a = _rand(rng, (m, r), cplx) @ _rand(rng, (r, n), cplx)
    e, c, cu = _rand(rng, (m, n), cplx), _rand(rng, (m, n), cplx), _rand(rng, (m, m), cplx)

    def project(x):
        u = np.linalg.svd(x, full_matrices=False)[0][:, :r]
        return u @ u.conj().T

    for numpy_f, kind, w in ((lambda x: _best_rank(x, r), "reconstruction", c), (project, "projector", cu)):

        def f_np(t, numpy_f=numpy_f, w=w):
            return float(np.real(np.sum(np.conj(w) * numpy_f(a + t * e))))

        h = 2e-3  # truncation error ~h^4 f^(6) / 90, rounding ~1e-16 |f| / h^2: both below 1e-8
        want = (-f_np(2 * h) + 16 * f_np(h) - 30 * f_np(0.0) + 16 * f_np(-h) - f_np(-2 * h)) / (12 * h * h)

        def f(t, kind=kind, w=w):
            u, s, vh = tf.linalg.truncated_svd(tf.asarray(a) + tf.asarray(e) * t, max_rank=r)
            m_ = tf.matmul(u * s[None, :], vh) if kind == "reconstruction" else tf.matmul(u, u.mH)
            return tf.real(tf.sum(m_ * tf.asarray(np.conj(w))))

        one = tf.asarray(1.0)
        (_, d2) = tidu.jvp(lambda t: tidu.jvp(f, (t,), (one,))[1], (tf.asarray(0.0),), (one,))
        assert abs(float(np.asarray(d2)) - want) <= 1e-6 * max(1.0, abs(want)), (kind, float(np.asarray(d2)), want)


@pytest.mark.parametrize("tiny", [1e-300, 1e-200, 0.0])
def test_null_values_near_the_underflow_keep_every_derivative_finite(tiny):
    """A null value of 1e-300 has ``1/s = 1e300``, whose square overflows: the null-part terms of
    the range vectors masked ``1/s^2`` after squaring, and ``inf * 0`` put NaN into every
    derivative (a control-pulse optimization through TEBD's splits stopped on it). The kept
    rank-1 part's derivative is ``P_U E + E P_V - P_U E P_V`` (``P`` the kept vectors'
    projectors; the null value is 0 to first order)."""
    a = np.array([[1.0, 0.0, 0.0], [0.0, tiny, 0.0]])
    e = np.random.default_rng(1).standard_normal(a.shape)
    pu, pv = np.diag([1.0, 0.0]), np.diag([1.0, 0.0, 0.0])

    def kept(x):
        u, s, vh = tf.linalg.truncated_svd(x, max_rank=1)
        return tf.matmul(u * s[None, :], vh)

    _, d = tidu.jvp(kept, (tf.asarray(a),), (tf.asarray(e),))
    np.testing.assert_allclose(np.asarray(d), pu @ e + e @ pv - pu @ e @ pv, atol=1e-12)
    g = tidu.grad(lambda x: tf.sum(kept(x) * tf.asarray(e)))(tf.asarray(a))
    assert np.isfinite(np.asarray(g)).all()
