"""Reductions: values against NumPy over axes/keepdims/dtypes (and hypothesis
shapes), prod gradients with zeros against hand values (first and second order),
max/min ties, logsumexp with infinities, size-0 rules and errors."""

from __future__ import annotations


import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

import tenferro as tf
import tidu
from helpers import sample as _np

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]
AXES = [None, 0, 1, -1, (0, 2), (), (2, 0, 1)]


def _check(got, want):
    want = np.asarray(want)
    g = got.numpy()
    assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
    rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize(
    "name,dtype",
    [
        (n, d)
        for n in ("sum", "prod", "max", "min", "mean")
        for d in DTYPES
        if not (n in ("max", "min") and d.startswith("complex"))
    ],
)
def test_values_match_numpy(name, dtype, axis, keepdims):
    a = _np((2, 3, 4), dtype)
    want = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    _check(getattr(tf, name)(tf.asarray(a), axis=axis, keepdims=keepdims), want)
    method = getattr(tf.asarray(a), name)
    _check(method(axis=axis, keepdims=keepdims), want)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_logsumexp_matches_scipy(dtype, axis, keepdims):
    a = _np((2, 3, 4), dtype)
    want = scipy.special.logsumexp(a.astype(np.float64) if dtype == "int64" else a, axis=axis, keepdims=keepdims)
    if axis == ():  # scipy reduces over nothing as identity as well
        want = a.astype(np.float64 if dtype == "int64" else dtype)
    _check(
        tf.logsumexp(tf.asarray(a), axis=axis, keepdims=keepdims),
        np.asarray(want).astype(np.float64 if dtype == "int64" else dtype),
    )


def test_logsumexp_is_stable_and_handles_infinities():
    x = tf.asarray(np.array([1000.0, 1000.0, -np.inf]))
    np.testing.assert_allclose(float(tf.logsumexp(x)), 1000.0 + np.log(2.0))
    g = tidu.grad(tf.logsumexp)(x)
    np.testing.assert_allclose(g.numpy(), [0.5, 0.5, 0.0])
    allneg = tf.asarray(np.full(3, -np.inf))
    assert float(tf.logsumexp(allneg)) == -np.inf
    np.testing.assert_array_equal(tidu.grad(tf.logsumexp)(allneg).numpy(), [0.0, 0.0, 0.0])
    assert float(tf.logsumexp(tf.zeros(0))) == -np.inf


# ---------------------------------------------------------------------------
# hypothesis: random shapes and axis subsets
# ---------------------------------------------------------------------------
@st.composite
def _shape_and_axes(draw):
    shape = draw(array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    axes = draw(st.lists(st.integers(0, max(len(shape) - 1, 0)), unique=True, max_size=len(shape)))
    return shape, (tuple(axes) if draw(st.booleans()) or not shape else None)


@settings(max_examples=60, deadline=None)
@given(
    sa=_shape_and_axes(),
    name=st.sampled_from(["sum", "prod", "max", "min", "logsumexp"]),
    keepdims=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_random_shapes_match_numpy(sa, name, keepdims, seed):
    shape, axis = sa
    a = _np(shape, "float64", seed)
    reduced = range(len(shape)) if axis is None else axis
    empty = any(shape[i] == 0 for i in reduced)
    if name in ("max", "min") and empty:
        with pytest.raises(tf.TenferroValueError, match=name):
            getattr(tf, name)(tf.asarray(a), axis=axis, keepdims=keepdims)
        return
    ref = _naive_logsumexp if name == "logsumexp" else getattr(np, name)
    with np.errstate(divide="ignore"):
        want = ref(a, axis=axis, keepdims=keepdims)
    got = getattr(tf, name)(tf.asarray(a), axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-12)


def _naive_logsumexp(a, axis, keepdims):
    """Reference for standard-normal data (no overflow); scipy mishandles size-0 input."""
    if axis == ():
        return a
    return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))


def _others(a, axis):
    """Brute-force product of the other entries along ``axis`` (no division)."""
    out = np.empty_like(a)
    n = a.shape[axis]
    for i in range(n):
        idx = [j for j in range(n) if j != i]
        sl = [slice(None)] * a.ndim
        sl[axis] = i
        out[tuple(sl)] = np.prod(np.take(a, idx, axis=axis), axis=axis)
    return out


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 9), m=st.integers(1, 3), zeros=st.integers(0, 4), seed=st.integers(0, 2**16))
def test_prod_gradient_with_random_zeros(n, m, zeros, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    for _ in range(zeros):
        a[rng.integers(m), rng.integers(n)] = 0.0
    g = tidu.grad(lambda x: tf.sum(tf.prod(x, axis=1)))(tf.asarray(a))
    np.testing.assert_allclose(g.numpy(), _others(a, 1), rtol=1e-12, atol=1e-300)


# ---------------------------------------------------------------------------
# prod at zeros: hand-computed values
# ---------------------------------------------------------------------------
def test_prod_gradient_one_zero():
    x = tf.asarray(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(tidu.grad(tf.prod)(x).numpy(), [0.0, 6.0, 0.0])
    # Hessian: H[i, j] = prod of the entries other than i and j (0 on the diagonal)
    np.testing.assert_array_equal(tidu.hessian(tf.prod)(x).numpy(), [[0.0, 3.0, 0.0], [3.0, 0.0, 2.0], [0.0, 2.0, 0.0]])


def test_prod_gradient_two_zeros():
    x = tf.asarray(np.array([2.0, 0.0, 3.0, 0.0, 5.0]))
    np.testing.assert_array_equal(tidu.grad(tf.prod)(x).numpy(), np.zeros(5))
    h = np.zeros((5, 5))
    h[1, 3] = h[3, 1] = 30.0
    np.testing.assert_array_equal(tidu.hessian(tf.prod)(x).numpy(), h)


def test_prod_gradient_all_zero_and_complex():
    np.testing.assert_array_equal(tidu.grad(tf.prod)(tf.zeros(4)).numpy(), np.zeros(4))
    np.testing.assert_array_equal(tidu.grad(tf.prod)(tf.zeros(1)).numpy(), [1.0])
    z = tf.asarray(np.array([1j, 0.0, 2.0 + 0j]))
    # grad of Re f (dL/dx - i dL/dy, JAX's convention) is f'(z) for holomorphic f: the others
    g = tidu.grad(lambda z: tf.real(tf.prod(z)))(z)
    np.testing.assert_allclose(g.numpy(), [0.0, 2j, 0.0])


def test_prod_jvp_along_axis_with_zeros():
    a = np.array([[1.0, 0.0], [2.0, 3.0], [0.0, 4.0]])
    t = np.arange(6.0).reshape(3, 2)
    _, got = tidu.jvp(lambda x: tf.prod(x, axis=0), (tf.asarray(a),), (tf.asarray(t),))
    want = (t * _others(a, 0)).sum(axis=0)
    np.testing.assert_array_equal(got.numpy(), want)


# ---------------------------------------------------------------------------
# max/min ties
# ---------------------------------------------------------------------------
def test_max_min_ties_split_evenly():
    x = tf.asarray(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_array_equal(tidu.grad(tf.max)(x).numpy(), [0.0, 0.5, 0.5, 0.0])
    y = tf.asarray(np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 5.0]]))
    np.testing.assert_allclose(
        tidu.grad(lambda y: tf.sum(tf.min(y, axis=0)))(y).numpy(), [[1 / 3, 0.0], [1 / 3, 1.0], [1 / 3, 0.0]]
    )
    np.testing.assert_array_equal(
        tidu.grad(lambda y: tf.sum(y.max(axis=1)))(y).numpy(), [[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]]
    )


def test_max_second_derivative_is_zero():
    x = tf.asarray(np.array([1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(tidu.hessian(tf.max)(x).numpy(), np.zeros((3, 3)))


def test_mean_gradient():
    x = tf.ones((2, 4))
    np.testing.assert_allclose(tidu.grad(lambda x: tf.mean(x))(x).numpy(), np.full((2, 4), 1 / 8))
    np.testing.assert_allclose(tidu.grad(lambda x: tf.sum(tf.mean(x, axis=1)))(x).numpy(), np.full((2, 4), 1 / 4))


# ---------------------------------------------------------------------------
# size-0 reductions and dtypes
# ---------------------------------------------------------------------------
def test_size_zero_reductions():
    e = tf.zeros((0, 3))
    _check(tf.sum(e, axis=0), np.zeros(3))
    _check(tf.prod(e, axis=0), np.ones(3))
    _check(tf.sum(e, axis=1), np.zeros(0))
    _check(tf.max(e, axis=1), np.zeros(0))  # reduces a non-empty axis of an empty tensor
    assert np.isnan(float(tf.mean(tf.zeros(0))))
    assert float(tf.logsumexp(e)) == -np.inf
    for f, long in ((tf.max, "maximum"), (tf.min, "minimum"), (tf.amax, "maximum"), (tf.amin, "minimum")):
        with pytest.raises(tf.TenferroValueError, match=rf"zero-size.*\(0, 3\).*{long}.*no identity"):
            f(e, axis=0)
    with pytest.raises(tf.TenferroValueError, match="max"):
        e.max()


def test_accumulator_dtypes():
    b = tf.asarray(np.array([True, True, False]))
    assert tf.sum(b).dtype == tf.int64 and int(tf.sum(b)) == 2
    assert tf.prod(tf.asarray(np.array([2, 3], np.int32))).dtype == tf.int64
    assert tf.max(b).dtype == tf.bool_
    assert tf.sum(tf.ones(3, tf.float32)).dtype == tf.float32


def test_bad_axis_and_dtype_errors():
    x = tf.ones((2, 3))
    for name in ("sum", "prod", "max", "min", "mean", "logsumexp"):
        with pytest.raises(tf.AxisError, match=rf"{name}: axis 2 is out of bounds.*rank 2"):
            getattr(tf, name)(x, axis=2)
        with pytest.raises(tf.AxisError, match="repeated axis"):
            getattr(tf, name)(x, axis=(0, -2))
    with pytest.raises(tf.AxisError, match="integer"):
        tf.sum(x, axis=1.5)
    z = tf.asarray(np.array([1j, 2.0]))
    for f in (tf.max, tf.min, tf.logsumexp):
        with pytest.raises(tf.DTypeError, match="complex"):
            f(z)


def test_grad_through_all_reductions_and_keepdims():
    a = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])

    def f(x):
        return tf.sum(x.max(axis=1, keepdims=True) * x) + tf.logsumexp(x, axis=0).sum() + x.prod() + x.mean()

    g = tidu.grad(f)(tf.asarray(a)).numpy()
    sm = np.exp(a - scipy.special.logsumexp(a, axis=0))
    want = (
        np.array([[0, 0, 1], [0, 1, 0]]) * a.sum(axis=1, keepdims=True)
        + a.max(axis=1, keepdims=True)
        + sm
        + np.prod(a) / a
        + 1 / 6
    )  # no zeros in a: prod / a is the product of the others
    np.testing.assert_allclose(g, want, rtol=1e-12)
