"""argmax/argmin, cumsum, var/std, arctan2/angle: values against NumPy over shapes, axes,
keepdims and dtypes (and hypothesis shapes), derivatives (finite differences to second order,
forward against reverse, hand values at the edges: angle at 0, std where var == 0), vmap
against a loop, and the errors. The gradient and vmap tables (specs/) check them too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

import tenferro as tf
import tidu
from tidu.testing import check_grads, check_vmap

from helpers import sample as _np

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]


def _check(got, want, rtol=None):
    want = np.asarray(want)
    g = got.numpy()
    assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
    rtol = rtol or (1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12)
    np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)


def _flat_f(a):
    """``a`` flattened column-major: tenferro's ``axis=None``."""
    return np.asarray(a).ravel(order="F")


# ---- argmax / argmin ---------------------------------------------------------------------
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, 2])
@pytest.mark.parametrize("dtype", [d for d in DTYPES if not d.startswith("complex")])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extrema_match_numpy(name, dtype, axis, keepdims):
    a = _np((2, 3, 4), dtype)
    if axis is None:
        want = getattr(np, name)(_flat_f(a))
        want = np.reshape(want, (1, 1, 1)) if keepdims else want
    else:
        want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    want = np.asarray(want, dtype=np.int64)
    _check(getattr(tf, name)(tf.asarray(a), axis=axis, keepdims=keepdims), want)
    _check(getattr(tf.asarray(a), name)(axis=axis, keepdims=keepdims), want)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extrema_ties_and_nan_as_numpy(name):
    a = np.array([[1.0, 3.0, 3.0, 1.0], [np.nan, 2.0, np.nan, 0.0], [5.0, 5.0, 5.0, 5.0]])
    for axis in (0, 1):
        _check(getattr(tf, name)(tf.asarray(a), axis=axis), getattr(np, name)(a, axis=axis))
    assert int(getattr(tf, name)(tf.asarray(a[0]))) == getattr(np, name)(a[0])
    assert int(getattr(tf, name)(tf.asarray(a[1]))) == 0  # the first NaN, for both


def test_argmax_axis_none_indexes_the_column_major_flattening():
    x = tf.asarray(_np((3, 4, 2), "float64", seed=3))
    assert float(tf.take(x, tf.argmax(x))) == float(tf.max(x))
    assert float(tf.take(x, tf.argmin(x))) == float(tf.min(x))
    assert int(tf.argmax(tf.asarray(2.5))) == 0  # 0-d, as NumPy


@settings(max_examples=40, deadline=None)
@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), data=st.data())
def test_arg_extrema_hypothesis(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = np.round(_np(shape, "float64", seed=len(shape)), 1)  # rounded: ties
    for name in ("argmax", "argmin"):
        _check(getattr(tf, name)(tf.asarray(a), axis=axis), getattr(np, name)(a, axis=axis).astype(np.int64))


def test_arg_extrema_have_zero_derivative():
    x = tf.asarray(_np((3, 4), "float64"))
    _, t = tidu.jvp(lambda x: tf.argmax(x, axis=0), (x,), (tf.ones((3, 4)),))
    assert t is None or not np.any(np.asarray(t))
    g = tidu.grad(lambda x: tf.sum(tf.take(x, tf.argmax(x))) + tf.sum(tf.argmin(x, 1) * 1.0))(x)
    want = np.zeros(12)
    want[int(np.argmax(_flat_f(x.numpy())))] = 1.0
    want = want.reshape((3, 4), order="F")
    np.testing.assert_array_equal(g.numpy(), want)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extrema_vmap_matches_a_loop(name):
    xs = tf.asarray(_np((4, 3, 5), "float64", seed=1))
    check_vmap(lambda x: getattr(tf, name)(x, axis=1), (xs,), in_axes=0)
    check_vmap(lambda x: getattr(tf, name)(x), (xs,), in_axes=2)
    check_vmap(lambda x: getattr(tf, name)(x, 0, keepdims=True), (xs,), in_axes=1)


# ---- cumsum ------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_matches_numpy(dtype, axis):
    a = _np((2, 3, 4), dtype)
    want = np.cumsum(_flat_f(a)) if axis is None else np.cumsum(a, axis=axis)
    _check(tf.cumsum(tf.asarray(a), axis=axis), want)
    _check(tf.asarray(a).cumsum(axis=axis), want)


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128"])
def test_cumsum_dtype_argument(dtype):
    a = _np((3, 2), "int32")
    _check(tf.cumsum(tf.asarray(a), axis=0, dtype=dtype), np.cumsum(a, axis=0, dtype=dtype))


@settings(max_examples=40, deadline=None)
@given(shape=array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), data=st.data())
def test_cumsum_hypothesis(shape, data):
    a = _np(shape, "float64", seed=2)
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1)) if shape else None
    want = np.cumsum(_flat_f(a)) if axis is None else np.cumsum(a, axis=axis)
    _check(tf.cumsum(tf.asarray(a), axis=axis), want)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumsum_derivatives(dtype, axis):
    x = tf.asarray(_np((3, 4), dtype, seed=4))
    check_grads(lambda x: tf.cumsum(x, axis=axis) * tf.cumsum(x, axis=axis), (x,), order=2)
    # the gradient of sum(cumsum(x) * w) is the reverse cumulative sum of w
    w = _np((3, 4), "float64", seed=5)
    g = tidu.grad(lambda x: tf.sum(tf.cumsum(x, axis=0) * tf.asarray(w)))(tf.asarray(_np((3, 4), "float64")))
    np.testing.assert_allclose(g.numpy(), np.flip(np.cumsum(np.flip(w, 0), 0), 0), rtol=1e-13)


def test_cumsum_vmap_matches_a_loop():
    xs = tf.asarray(_np((4, 3, 5), "complex128", seed=1))
    check_vmap(lambda x: tf.cumsum(x, axis=1), (xs,), in_axes=0)
    check_vmap(lambda x: tf.cumsum(x), (xs,), in_axes=2)
    check_vmap(tidu.grad(lambda x: tf.sum(tf.real(tf.cumsum(x, 0) * x))), (tf.real(xs),), in_axes=1)


# ---- var / std ---------------------------------------------------------------------------
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), ()])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_match_numpy(name, dtype, axis, keepdims):
    a = _np((2, 3, 4), dtype)
    for ddof in (0, 1) if axis != () else (0,):
        want = getattr(np, name)(a, axis=axis, ddof=ddof, keepdims=keepdims)
        _check(getattr(tf, name)(tf.asarray(a), axis=axis, ddof=ddof, keepdims=keepdims), want)
        _check(getattr(tf.asarray(a), name)(axis=axis, ddof=ddof, keepdims=keepdims), want)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("axis", [None, 0, (0, 1)])
def test_var_std_derivatives(dtype, axis):
    x = tf.asarray(_np((3, 4), dtype, seed=6))
    check_grads(lambda x: tf.var(x, axis=axis, ddof=1), (x,), order=2)
    check_grads(lambda x: tf.std(x, axis=axis), (x,), order=2)


def test_var_grad_is_the_centred_data():
    x = _np((5,), "complex128", seed=7)
    g = tidu.grad(lambda x: tf.var(x))(tf.asarray(x))  # tidu's (JAX's) convention: d/dx - i d/dy
    np.testing.assert_allclose(g.numpy(), 2 * np.conj(x - x.mean()) / 5, rtol=1e-13)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_std_derivative_where_var_is_zero_follows_jax():
    """sqrt has no derivative at 0: JAX's grad of std of a constant is NaN (0 * inf)."""
    g = tidu.grad(lambda x: tf.std(x))(tf.asarray([2.0, 2.0, 2.0]))
    assert np.all(np.isnan(g.numpy()))
    g = tidu.grad(lambda x: tf.var(x))(tf.asarray([2.0, 2.0, 2.0]))  # var is smooth there
    np.testing.assert_array_equal(g.numpy(), 0.0)


def test_var_std_vmap_matches_a_loop():
    xs = tf.asarray(_np((4, 3, 5), "complex128", seed=8))
    check_vmap(lambda x: tf.var(x, axis=1, ddof=1), (xs,), in_axes=0)
    check_vmap(lambda x: tf.std(x), (xs,), in_axes=2)


# ---- arctan2 / angle ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_angle_matches_numpy(dtype):
    a = _np((3, 4), dtype)
    want = np.angle(a)
    _check(tf.angle(tf.asarray(a)), want.astype(np.float64) if a.dtype.kind in "biu" else want)
    _check(tf.angle(tf.asarray(a), deg=True), np.angle(a, deg=True).astype(want.dtype), rtol=1e-5)


def test_angle_edges_as_numpy():
    z = np.array([0.0, -0.0, -1.0, 1.0, 0j - 1, -1 - 0j, 1j, -1j, complex(-1.0, -0.0)])
    _check(tf.angle(tf.asarray(z)), np.angle(z))
    r = np.array([0.0, -0.0, -2.0, 3.0, np.inf, -np.inf])
    _check(tf.angle(tf.asarray(r)), np.angle(r))


def test_arctan2_matches_numpy():
    y, x = _np((3, 4), "float64", 1), _np((4,), "float64", 2)
    _check(tf.arctan2(tf.asarray(y), tf.asarray(x)), np.arctan2(y, x))
    _check(tf.arctan2(tf.asarray(np.float32([1, -1])), 2), np.arctan2(np.float32([1, -1]), np.float32(2)))
    _check(tf.arctan2(tf.asarray([1, 0, -1]), tf.asarray([0, 0, -2])), np.arctan2([1, 0, -1], [0, 0, -2]))


def test_angle_derivatives():
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.7 - 1.1j])
    check_grads(tf.angle, (tf.asarray(z),), order=2)
    check_grads(lambda y, x: tf.arctan2(y, x), (tf.asarray(z.imag), tf.asarray(z.real)), order=2)
    # tidu's (JAX's) convention for a real function of complex input: d/dx - i d/dy
    g = tidu.grad(lambda z: tf.sum(tf.angle(z)))(tf.asarray(z))
    np.testing.assert_allclose(g.numpy(), (-z.imag - 1j * z.real) / np.abs(z) ** 2, rtol=1e-13)
    # forward and reverse agree: <grad, t> (real part) is the JVP
    t = np.array([0.3 - 0.2j, 1.0 + 0.5j, -0.4 + 0.9j])
    _, jt = tidu.jvp(lambda z: tf.sum(tf.angle(z)), (tf.asarray(z),), (tf.asarray(t),))
    np.testing.assert_allclose(float(jt), np.real(np.sum(g.numpy() * t)), rtol=1e-13)


def test_angle_derivative_at_zero_is_zero():
    for z in (tf.asarray(0j), tf.asarray(0.0), tf.asarray([0j, 1j])):
        g = tidu.grad(lambda z: tf.sum(tf.angle(z)))(z)
        assert np.all(np.isfinite(g.numpy()))
        assert g.numpy().ravel()[0] == 0
        h = tidu.grad(lambda z: tf.real(tf.sum(tidu.grad(lambda w: tf.sum(tf.angle(w)))(z))))(z)
        assert np.all(np.isfinite(h.numpy()))
    gy, gx = tidu.grad(lambda y, x: tf.arctan2(y, x), argnums=(0, 1))(tf.asarray(0.0), tf.asarray(0.0))
    assert float(gy) == 0.0 and float(gx) == 0.0


def test_angle_vmap_matches_a_loop():
    zs = tf.asarray(_np((4, 3), "complex128", seed=9))
    check_vmap(tf.angle, (zs,), in_axes=1)
    check_vmap(tidu.grad(lambda z: tf.sum(tf.angle(z))), (zs,), in_axes=0)


# ---- errors ------------------------------------------------------------------------------
def test_errors():
    x = tf.asarray(_np((2, 3), "float64"))
    with pytest.raises(tf.TenferroValueError, match="zero-size"):
        tf.argmax(tf.zeros((0, 3)), axis=0)
    with pytest.raises(tf.TenferroValueError, match="zero-size"):
        tf.argmin(tf.zeros((2, 0)))
    tf.argmax(tf.zeros((0, 3)), axis=1)  # an empty result, as NumPy
    with pytest.raises(tf.DTypeError, match="no ordering"):
        tf.argmax(tf.asarray([1j]))
    with pytest.raises(tf.AxisError, match="integer or None"):
        tf.argmax(x, axis=(0, 1))
    with pytest.raises(tf.AxisError, match="out of bounds"):
        tf.cumsum(x, axis=2)
    with pytest.raises(tf.TenferroValueError, match="ddof=3 must be less"):
        tf.var(x, axis=0, ddof=3)
    with pytest.raises(tf.TenferroValueError, match="ddof must be >= 0"):
        tf.std(x, ddof=-1)
    with pytest.raises(tf.TenferroTypeError, match="ddof must be an integer"):
        tf.var(x, ddof=0.5)
    with pytest.raises(tf.DTypeError, match="complex"):
        tf.arctan2(tf.asarray([1j]), 1.0)


def test_compiled_matches_eager():
    x = tf.asarray(_np((3, 4), "float64", seed=10))

    def f(x):
        return tf.argmax(x, 0), tf.argmin(x), tf.cumsum(x, 1), tf.var(x, 0, ddof=1), tf.std(x), tf.angle(x)

    for got, want in zip(tf.jit(f)(x), f(x)):
        _check(got, want.numpy())
