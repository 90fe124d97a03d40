"""Review fixes of the batching rules of indexing, dynamic slices and ``pad``, and of the
bounds of :mod:`tenferro.random`: every ``tidu.vmap`` result is compared with a Python loop
that stacks the per-example results (errors included), derivatives with central finite
differences."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tenferro as tf
import tidu

DTYPES = [np.float64, np.complex128]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _loop(f, args, in_axes):
    """``f`` on each example (the mapped arguments indexed along axis 0), stacked on axis 0."""
    size = next(len(a) for a, ax in zip(args, in_axes) if ax is not None)
    outs = [
        f(*[tf.asarray(a) if ax is None else tf.asarray(np.asarray(a)[b]) for a, ax in zip(args, in_axes)])
        for b in range(size)
    ]
    return np.stack([o.numpy() for o in outs])


def _vmapped(f, args, in_axes):
    return tidu.vmap(f, in_axes=in_axes)(*[tf.asarray(a) for a in args]).numpy()


def _assert_matches_loop(f, args, in_axes=None, rtol=0.0):
    """The vmapped result equals the loop's (exactly, or to ``rtol`` for derivatives)."""
    in_axes = (0,) * len(args) if in_axes is None else in_axes
    want = _loop(f, args, in_axes)
    got = _vmapped(f, args, in_axes)
    assert got.dtype == want.dtype
    if rtol:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)
    return got


def _central_fd(f, x, h=1e-6):
    """The gradient of the real scalar ``f`` at real ``x`` by central differences."""
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = h
        g[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


# ---- 1: per-example indices of take / gather / x[i] / dynamic_slice --------------------
NEG = np.array([[-1, 0], [2, -3], [-2, -1]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "f",
    [lambda a, i: tf.take(a, i), lambda a, i: tf.gather(a, i, axis=1), lambda a, i: a[i]],
    ids=["take", "gather-axis1", "getitem"],
)
def test_batched_negative_indices_read_their_own_example(f, dtype):
    x = _data((3, 3, 4), dtype)
    _assert_matches_loop(f, (x, NEG))
    _assert_matches_loop(f, (x[0], NEG), (None, 0))  # shared operand, per-example indices


def test_take_negative_indices_small_example():
    x = np.arange(6.0).reshape(2, 3)
    got = _assert_matches_loop(lambda a, i: tf.take(a, i), (x, np.array([-1, -1])))
    np.testing.assert_array_equal(got, [2.0, 5.0])


@pytest.mark.parametrize(
    "f, indices",
    [
        (lambda a, i: tf.take(a, i), np.array([3, 0])),
        (lambda a, i: tf.take(a, i), np.array([0, -4])),
        (lambda a, i: a[i], np.array([0, 3])),
        (lambda a, i: tf.scatter_add(a, i, 1.0), np.array([[0], [3]])),
        (lambda a, i: tf.scatter_add(a, i, 1.0), np.array([[-4], [0]])),
    ],
    ids=["take-high", "take-low", "getitem", "scatter-high", "scatter-low"],
)
def test_batched_out_of_range_indices_raise_as_the_loop(f, indices):
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(tf.TenferroIndexError) as loop_error:
        _loop(f, (x, indices), (0, 0))
    with pytest.raises(tf.TenferroIndexError) as vmap_error:
        _vmapped(f, (x, indices), (0, 0))
    core = re.search(r"index -?\d+ is out of bounds for axis 0 with extent 3", str(loop_error.value))
    assert core and core.group() in str(vmap_error.value)


def test_batched_negative_indices_under_jit():
    x = np.arange(6.0).reshape(2, 3)
    g = tf.jit(tidu.vmap(lambda a, i: tf.take(a, i)))
    np.testing.assert_array_equal(g(tf.asarray(x), tf.asarray(np.array([-1, -1]))).numpy(), [2.0, 5.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dynamic_slice_batched_negative_and_large_starts(dtype):
    x = _data((3, 4, 5), dtype)
    starts = np.array([[-1, 2], [1, -7], [9, 1]])
    _assert_matches_loop(lambda a, s: tf.dynamic_slice(a, s, (2, 3)), (x, starts))


def test_take_batched_negative_indices_gradient():
    x, idx = _data((3, 3, 4), np.float64), NEG

    def loss(a, i):
        return tf.sum(tf.sin(tf.take(a, i, axis=0)) ** 2)

    got = _assert_matches_loop(tidu.grad(loss), (x, idx), rtol=1e-12)
    for b in range(3):
        fd = _central_fd(lambda a: loss(tf.asarray(a), tf.asarray(idx[b])).item(), x[b])
        np.testing.assert_allclose(got[b], fd, atol=1e-8)


# ---- 2: scatter_add with per-example negative indices ----------------------------------
def test_scatter_add_negative_indices_small_example():
    got = _assert_matches_loop(
        lambda a, i, u: tf.scatter_add(a, i, u), (np.zeros((2, 3)), np.array([[-1], [0]]), np.ones((2, 1)))
    )
    np.testing.assert_array_equal(got, [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add_batched_negative_indices(dtype):
    idx = np.array([[-1, -1, 0], [2, -3, -2], [-2, 1, 1]])
    x, u = _data((3, 4, 3), dtype), _data((3, 4, 3), dtype, seed=1)
    _assert_matches_loop(lambda a, i, v: tf.scatter_add(a, i, v, axis=1), (x, idx, u))
    _assert_matches_loop(lambda a, i, v: tf.scatter_add(a, i, v, axis=1), (x[0], idx, u), (None, 0, 0))


# ---- 3: dynamic_update_slice with per-example starts -----------------------------------
def test_dynamic_update_slice_batched_starts_do_not_mix_in_the_old_window():
    x = np.array([[np.inf, 0.0], [1e17, 0.0], [np.nan, -np.inf]])
    got = _assert_matches_loop(
        lambda a, u, s: tf.dynamic_update_slice(a, u, s), (x, np.ones((3, 1)), np.array([[0], [-5], [0]]))
    )
    np.testing.assert_array_equal(got, [[1.0, 0.0], [1.0, 0.0], [1.0, -np.inf]])


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64, np.bool_])
def test_dynamic_update_slice_batched_starts_any_dtype(dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 4, 5)) > 0 if dtype is np.bool_ else _data((3, 4, 5), np.float64) * 10).astype(dtype)
    u = np.ones((3, 2, 3), dtype)
    starts = np.array([[-1, 2], [1, 7], [3, 1]])
    _assert_matches_loop(lambda a, v, s: tf.dynamic_update_slice(a, v, s), (x, u, starts))
    _assert_matches_loop(lambda a, v, s: tf.dynamic_update_slice(a, v, s), (x[0], u, starts), (None, 0, 0))


def test_dynamic_update_slice_batched_empty_update():
    x = _data((2, 3, 4), np.float64)
    got = _assert_matches_loop(
        lambda a, v, s: tf.dynamic_update_slice(a, v, s), (x, np.ones((2, 0, 2)), np.array([[1, 1], [0, 2]]))
    )
    np.testing.assert_array_equal(got, x)


def test_dynamic_update_slice_batched_starts_zero_dimensional():
    got = _assert_matches_loop(
        lambda a, v, s: tf.dynamic_update_slice(a, v, s),
        (np.array([np.inf, 2.0]), np.array([1.0, 3.0]), np.zeros((2, 0), np.int64)),
    )
    np.testing.assert_array_equal(got, [1.0, 3.0])


STARTS = np.array([[1, 0], [-2, 3], [2, 2]])


def _dus_loss(a, u, s):
    return tf.sum(tf.sin(tf.dynamic_update_slice(a, u * u, s)) * a)


@pytest.mark.parametrize("argnum", [0, 1])
def test_dynamic_update_slice_batched_gradient(argnum):
    x, u = _data((3, 3, 4), np.float64), _data((3, 2, 2), np.float64, seed=1)
    grad = tidu.grad(_dus_loss, argnums=argnum)
    got = _assert_matches_loop(grad, (x, u, STARTS), rtol=1e-12)
    for b in range(3):
        args = [x[b], u[b]]

        def f(v, b=b):
            args_b = list(args)
            args_b[argnum] = v
            return _dus_loss(tf.asarray(args_b[0]), tf.asarray(args_b[1]), tf.asarray(STARTS[b])).item()

        np.testing.assert_allclose(got[b], _central_fd(f, args[argnum]), atol=1e-8)
    # the gradient of a loss summed over the vmapped examples gives the same per-example rows
    total = tidu.grad(lambda a, v: tf.sum(tidu.vmap(_dus_loss)(a, v, tf.asarray(STARTS))), argnums=argnum)
    np.testing.assert_allclose(total(tf.asarray(x), tf.asarray(u)).numpy(), got, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dynamic_update_slice_batched_jvp(dtype):
    x, u = _data((3, 3, 4), dtype), _data((3, 2, 2), dtype, seed=1)
    tx, tu = _data((3, 3, 4), dtype, seed=2), _data((3, 2, 2), dtype, seed=3)

    def tangent(a, v, s, ta, tv):
        return tidu.jvp(lambda p, q: tf.dynamic_update_slice(p, q * q, s), (a, v), (ta, tv))[1]

    got = _assert_matches_loop(tangent, (x, u, STARTS, tx, tu), rtol=1e-12)
    h = 1e-6
    for b in range(3):

        def at(t, b=b):
            out = tf.dynamic_update_slice(tf.asarray(x[b] + t * tx[b]), tf.asarray((u[b] + t * tu[b]) ** 2), STARTS[b])
            return out.numpy()

        np.testing.assert_allclose(got[b], (at(h) - at(-h)) / (2 * h), atol=1e-7)


# ---- 4: pad with a per-example padding value -------------------------------------------
def test_pad_batched_infinite_values_leave_the_interior_alone():
    got = _assert_matches_loop(
        lambda a, c: tf.pad(a, ((1, 0),), constant_values=c), (np.ones((3, 1)), np.array([-np.inf, 0.0, np.nan]))
    )
    np.testing.assert_array_equal(got, [[-np.inf, 1.0], [0.0, 1.0], [np.nan, 1.0]])


@pytest.mark.parametrize("dtype", DTYPES + [np.int64, np.bool_])
def test_pad_batched_values_any_dtype(dtype):
    x = (_data((3, 2, 3), np.float64) * 5).astype(dtype)
    c = np.array([7, 0, -3]).astype(dtype)
    _assert_matches_loop(lambda a, v: tf.pad(a, ((1, 0), (0, 2)), constant_values=v), (x, c))
    _assert_matches_loop(lambda a, v: tf.pad(a, ((1, 0), (0, 2)), constant_values=v), (x[0], c), (None, 0))


def test_pad_batched_value_gradient():
    x, c = _data((3, 2, 2), np.float64), np.array([0.5, -1.0, 2.0])

    def loss(a, v):
        return tf.sum(tf.sin(tf.pad(a, ((1, 1), (0, 1)), constant_values=v)) * 1.5)

    gx = _assert_matches_loop(tidu.grad(loss, argnums=0), (x, c), rtol=1e-12)
    gc = _assert_matches_loop(tidu.grad(loss, argnums=1), (x, c), rtol=1e-12)
    for b in range(3):
        fx = _central_fd(lambda a: loss(tf.asarray(a), tf.asarray(c[b])).item(), x[b])
        fc = _central_fd(lambda v: loss(tf.asarray(x[b]), tf.asarray(v)).item(), np.array(c[b]))
        np.testing.assert_allclose(gx[b], fx, atol=1e-8)
        np.testing.assert_allclose(gc[b], fc, atol=1e-8)


# ---- 5, 6: tenferro.random bounds ------------------------------------------------------
def test_uniform_float32_stays_below_high():
    # the float64 draw 14817372 of seed 0 rounds to 1.0 in float32
    u = tf.random.uniform(0, 14817373, tf.float32).numpy()
    assert u.dtype == np.float32 and u.max() < 1.0 and u.min() >= 0.0
    assert u[-1] == np.nextafter(np.float32(1), np.float32(0))
    c = tf.random.uniform(0, 14817373 // 2 + 1, tf.complex64).numpy()
    assert c.real.max() < 1.0 and c.imag.max() < 1.0


def test_uniform_float64_values_unchanged():
    for seed, shape, low, high in [(0, (3, 4), 0.0, 1.0), (5, (7,), -2.0, 3.0), (9, (2, 2), 1e-3, 2.5)]:
        r = np.random.Generator(np.random.PCG64(seed)).random(int(np.prod(shape)), dtype=np.float64)
        want = (low + (high - low) * r).reshape(shape, order="F")
        got = tf.random.uniform(seed, shape, low=low, high=high).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(low=-np.inf, high=0.0), "low must be a finite real number"),
        (dict(low=0.0, high=np.inf), "high must be a finite real number"),
        (dict(low=np.nan), "low must be a finite real number"),
        (dict(low=1.0, high=1.0), "expected low < high"),
        (dict(low="0"), "low must be a finite real number"),
    ],
)
def test_uniform_refuses_bad_bounds(kw, match):
    with pytest.raises(tf.TenferroValueError, match=match):
        tf.random.uniform(0, 2, **kw)


@pytest.mark.parametrize(
    "args, match",
    [((2.5, 7.5), "low must be an integer, got low=2.5"), ((0, 7.5), "high must be an integer"), ((5.0,), "low")],
)
def test_randint_refuses_non_integer_bounds(args, match):
    with pytest.raises(tf.TenferroTypeError, match=match):
        tf.random.randint(0, 2, *args)
    assert issubclass(tf.TenferroTypeError, TypeError)


def test_randint_accepts_numpy_integer_bounds():
    want = tf.random.randint(3, (4,), 1, 9).numpy()
    np.testing.assert_array_equal(tf.random.randint(3, (4,), np.int32(1), np.int64(9)).numpy(), want)
