"""Edge cases of the core elementwise ops found in review: ``bool ** bool`` (its dtype),
``clip`` with NaN tensor bounds (NumPy propagates them), the second derivative of
``logaddexp`` at ties, and the derivative of complex ``sign`` at 0 (JAX: 0). Values
against NumPy; derivatives against central differences computed here, forward against
reverse. The typed errors of the same review are rows of the bad-input table
(tests/test_bad_inputs.py; the rows in tests/bad_input_rows/tenferro_ops.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu
from tidu.testing import check_grads

EPS = 1e-6


def _units(x: np.ndarray):
    """(index, unit direction, its weight in the gradient): a real loss's gradient at a
    complex z is dL/dRe - i dL/dIm (JAX's convention, README "Complex numbers")."""
    for i in np.ndindex(x.shape):
        for unit, weight in ((1.0, 1.0), (1j, -1j)) if x.dtype.kind == "c" else ((1.0, 1.0),):
            e = np.zeros_like(x)
            e[i] = unit
            yield i, e, weight


def _central(f, x: np.ndarray, eps: float = EPS) -> np.ndarray:
    """The gradient of the real scalar ``f`` by central differences."""
    g = np.zeros(x.shape, dtype=x.dtype)
    for i, e, weight in _units(x):
        g[i] += weight * (f(x + eps * e) - f(x - eps * e)) / (2 * eps)
    return g


def _forward_gradient(f, x: np.ndarray) -> np.ndarray:
    """The gradient of the real scalar ``f`` from jvps along the unit directions."""
    g = np.zeros(x.shape, dtype=x.dtype)
    for i, e, weight in _units(x):
        g[i] += weight * float(tidu.jvp(f, (tf.asarray(x),), (tf.asarray(e),))[1].numpy())
    return g


# ---- bool ** bool ----------------------------------------------------------------------
def test_bool_power_bool_is_int64_as_bool_power_int():
    a, b = np.array([True, False, True, False]), np.array([True, True, False, False])
    got = tf.asarray(a) ** tf.asarray(b)
    # JAX promotes bool to its default integer for power; NumPy would give int8
    assert got.dtype is tf.int64 and (tf.asarray(a) ** 2).dtype is tf.int64
    np.testing.assert_array_equal(got.numpy(), np.power(a.astype(np.int64), b.astype(np.int64)))
    assert (tf.asarray(a) ** True).dtype is tf.int64
    assert int(tf.sum(got)) == 3  # a later op sees a supported dtype


def test_bool_power_bool_traced_is_int64():
    g = tidu.make_graph(lambda b: b**b, tf.asarray([True]))
    assert "i64" in str(g) and "pow" in str(g)


# ---- clip with NaN tensor bounds -------------------------------------------------------
X = np.array([0.0, 1.0, 5.0])


@pytest.mark.parametrize(
    "lo,hi",
    [
        (np.array(np.nan), 1.0),
        (np.array([np.nan, 0.0, 0.0]), 1.0),
        (0.0, np.array([2.0, np.nan, 2.0])),
        (np.array([np.nan, 0.0, 0.0]), np.array([np.nan, np.nan, 2.0])),
    ],
)
def test_clip_propagates_nan_tensor_bounds_as_numpy(lo, hi):
    want = np.clip(X, lo, hi)
    as_t = [tf.asarray(v) if isinstance(v, np.ndarray) else v for v in (lo, hi)]
    np.testing.assert_array_equal(tf.clip(tf.asarray(X), *as_t).numpy(), want)
    np.testing.assert_array_equal(tf.clip(tf.asarray(X), lo, hi).numpy(), want)  # NumPy bounds too


def test_clip_gradient_flows_to_a_nan_bound():
    lo = np.array([np.nan, 0.0, 0.0])
    gx, glo = tidu.grad(lambda x, lo: tf.sum(tf.clip(x, lo, 1.0)), argnums=(0, 1))(tf.asarray(X), tf.asarray(lo))
    np.testing.assert_array_equal(gx.numpy(), [0.0, 1.0, 0.0])  # 1.0 is at the bound: inside
    np.testing.assert_array_equal(glo.numpy(), [1.0, 0.0, 0.0])


def test_clip_tensor_bounds_derivatives_match_central_differences():
    x = np.array([-1.3, 0.2, 0.7, 2.5])
    lo, hi = np.array([-1.0, -0.5, 0.1, 0.0]), np.array([1.0, 1.5, 0.4, 2.0])

    def f_np(x, lo, hi):
        return float(np.sum(np.sin(np.clip(x, lo, hi))))

    def f(x, lo, hi):
        return tf.sum(tf.sin(tf.clip(x, lo, hi)))

    args = [x, lo, hi]
    for k in range(3):

        def f_k(v, k=k):
            return f(*[v if j == k else tf.asarray(a) for j, a in enumerate(args)])

        want = _central(lambda v, k=k: f_np(*[v if j == k else a for j, a in enumerate(args)]), args[k])
        rev = tidu.grad(f_k)(tf.asarray(args[k])).numpy()
        np.testing.assert_allclose(rev, want, atol=1e-8)
        np.testing.assert_allclose(_forward_gradient(f_k, args[k]), rev, atol=1e-12)
    check_grads(f, (tf.asarray(x), tf.asarray(lo), tf.asarray(hi)), order=2)


# ---- logaddexp at ties -----------------------------------------------------------------
def test_logaddexp_hessian_at_ties_is_a_quarter():
    h = tidu.hessian(lambda x: tf.sum(tf.logaddexp(x, 0.0)))(tf.asarray([0.0]))
    np.testing.assert_allclose(h.numpy(), [[0.25]], rtol=1e-12)


@pytest.mark.parametrize("point", [0.0, 1.5, -2.0])
def test_logaddexp_second_derivative_at_ties_matches_central_differences(point):
    c = np.array([point, point + 1.0])  # first entry a tie, second not

    def grad_np(x):  # the exact first derivative, sigmoid(x - c)
        return 1.0 / (1.0 + np.exp(c - x))

    def f(x):
        return tf.sum(tf.logaddexp(x, tf.asarray(c)))

    x = c.copy()
    x[1] -= 0.3
    want = np.diag([(grad_np(x + EPS * e) - grad_np(x - EPS * e))[i] / (2 * EPS) for i, e in enumerate(np.eye(2))])
    rev_rev = tidu.hessian(f)(tf.asarray(x)).numpy()
    np.testing.assert_allclose(rev_rev, want, atol=1e-8)
    np.testing.assert_allclose(rev_rev[0, 0], 0.25, rtol=1e-12)
    g = tidu.grad(f)
    fwd_rev = np.stack([tidu.jvp(g, (tf.asarray(x),), (tf.asarray(e),))[1].numpy() for e in np.eye(2)])
    np.testing.assert_allclose(fwd_rev, rev_rev, atol=1e-12)
    check_grads(lambda x, y: tf.logaddexp(x, y), (tf.asarray(x), tf.asarray(c)), order=2)


def test_logaddexp_weight_at_large_ties_stays_half():
    x = tf.asarray([1e20, -1e20])
    gx, gy = tidu.grad(lambda x, y: tf.sum(tf.logaddexp(x, y)), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal(gx.numpy(), [0.5, 0.5])
    np.testing.assert_array_equal(gy.numpy(), [0.5, 0.5])


@pytest.mark.parametrize("v", [-np.inf, np.inf])
def test_logaddexp_infinite_ties_keep_half_and_finite_second_derivative(v):
    x = tf.asarray([v])
    gx, gy = tidu.grad(lambda x, y: tf.sum(tf.logaddexp(x, y)), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal([gx.numpy(), gy.numpy()], [[0.5], [0.5]])
    h = tidu.hessian(lambda x: tf.sum(tf.logaddexp(x, tf.asarray([v]))))(x).numpy()
    assert np.isfinite(h).all()


# ---- complex sign at 0 -----------------------------------------------------------------
def test_complex_sign_derivative_is_zero_at_zero():
    z = tf.asarray([0j, 3 + 4j])
    _, t = tidu.jvp(tf.sign, (z,), (tf.asarray([1 + 2j, 0j]),))
    np.testing.assert_array_equal(t.numpy(), [0j, 0j])  # JAX: 0 at 0 (not the tangent itself)
    _, vjp_fn = tidu.vjp(tf.sign, z)
    np.testing.assert_array_equal(vjp_fn(tf.asarray([1 + 1j, 0j]))[0].numpy(), [0j, 0j])
    np.testing.assert_allclose(tf.sign(z).numpy(), np.sign(z.numpy()), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_sign_derivatives_away_from_zero_match_central_differences(dtype):
    z = np.array([3 + 4j, -1 + 0.5j, 0.2 - 2j]).astype(dtype) if dtype is np.complex128 else np.array([3.0, -1.0])
    w = np.linspace(0.5, 1.5, z.size) + (0.3j if dtype is np.complex128 else 0)

    def f_np(v):
        s = np.where(v == 0, 0, v / np.where(v == 0, 1, np.abs(v)))
        return float(np.real(np.sum(w * s)))

    def f(v):
        return tf.real(tf.sum(tf.asarray(w) * tf.sign(v)))

    rev = tidu.grad(f)(tf.asarray(z)).numpy()
    np.testing.assert_allclose(rev, _central(f_np, z), atol=1e-8)
    np.testing.assert_allclose(_forward_gradient(f, z), rev, atol=1e-12)
    check_grads(tf.sign, (tf.asarray(z),), order=2)
