"""Indexing: ``__getitem__`` against NumPy (hypothesis for basic indices), advanced
indices, dynamic slices (clamping), take / scatter_add, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
import tidu
from tidu.testing import check_grads

from helpers import assert_same as _same, rand as _rand, tensor_of as _t


# -- basic indexing: hypothesis against NumPy -------------------------------------------
def _slices(n):
    bound = st.none() | st.integers(-n - 2, n + 2)
    step = st.none() | st.integers(-3, 3).filter(lambda s: s != 0)
    return st.builds(slice, bound, bound, step)


@st.composite
def basic_indices(draw, shape):
    entries = []
    for n in shape:
        kinds = [_slices(n), st.just(slice(None))]
        if n > 0:
            kinds.append(st.integers(-n, n - 1))
        entries.append(draw(st.one_of(*kinds)))
    if draw(st.booleans()):  # an ellipsis standing for k axes (later entries stay right-aligned)
        pos = draw(st.integers(0, len(entries)))
        k = draw(st.integers(0, len(entries) - pos))
        entries = entries[:pos] + [Ellipsis] + entries[pos + k :]
    else:  # leave trailing axes implicit
        entries = entries[: draw(st.integers(0, len(entries)))]
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    return tuple(entries) if draw(st.booleans()) or len(entries) != 1 else entries[0]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
def test_basic_indexing_matches_numpy(data, shape):
    a = _rand(shape)
    idx = data.draw(basic_indices(shape))
    _same(_t(a)[idx], a[idx])


@pytest.mark.parametrize("idx", [np.s_[1:, ::-2], np.s_[-1, None, ::-1], np.s_[..., 0], np.s_[::-1, 2:0:-1]])
def test_basic_indexing_grads(idx):
    x = _t(_rand((3, 4)) + 1j * _rand((3, 4), 1))
    check_grads(lambda x: x[idx], [x], order=2)


def test_basic_indexing_is_cheap():
    x = tf.zeros((3, 4))
    assert x[...] is x and x[:, :] is x
    g = tidu.make_graph(lambda x: x[1], x)
    assert [e.prim.name for e in g.eqns] == ["slice", "reshape"]


def test_getitem_on_tracers_and_ints():
    x = _t(_rand((3, 4)))
    g = tidu.grad(lambda x: tf.sum(x[1, ::2] * x[-1, 1::2]))(x)
    expect = np.zeros((3, 4))
    a = np.asarray(x)
    expect[1, ::2] = a[-1, 1::2]
    expect[-1, 1::2] = a[1, ::2]
    np.testing.assert_allclose(np.asarray(g), expect)
    _same(x[np.int64(1), tf.asarray(2)], a[1, 2])


# -- advanced indexing ----------------------------------------------------------------------
_A = np.arange(60.0).reshape(3, 4, 5)


@pytest.mark.parametrize(
    "idx",
    [
        [2, 0, -1],
        np.array([[0, 1], [2, 2]]),
        (slice(None), [3, 0]),
        (Ellipsis, [4, 4, 0]),
        (None, [1], slice(None, None, -1)),
        ([0, 2], [1, 3]),
        ([[0], [2]], [1, 3]),  # broadcast
        (0, slice(None), [1, 2]),
        (slice(None), 0, [1, 2]),
        ([0, 1], slice(1, 3), [2, -1]),  # NumPy placement
        ([1, 0], [2, 3], [4, 0]),
        (1, [0, 3], None),
        ([],),
        (_A[:, 0, 0] > 10,),
        (_A[:, :, 0] > 12,),
        (slice(None), _A[0, :, 0] < 10),  # boolean masks
    ],
)
def test_advanced_indexing_matches_numpy(idx):
    _same(_t(_A)[idx], _A[idx])


def test_tensor_index():
    i = tf.asarray(np.array([2, -3, 0]))
    _same(_t(_A)[:, i], _A[:, np.array([2, -3, 0])])


def test_advanced_indexing_grads():
    x = _t(_rand((3, 4)) + 1j * _rand((3, 4), 1))
    check_grads(lambda x: x[[0, 2, 0]], [x], order=2)
    check_grads(lambda x: x[[0, 2, 0], [1, 1, 3]], [x], order=2)
    check_grads(lambda x: x[np.array([True, False, True])], [x], order=1)


def test_single_traced_index_is_supported():
    x = _t(_rand(4))
    g = tidu.make_graph(lambda x, i: x[i], x, tf.asarray(np.array([3, 0])))
    assert "gather" in [e.prim.name for e in g.eqns]


# -- getitem errors ------------------------------------------------------------------------
def test_getitem_errors():
    x = tf.zeros((2, 3))
    with pytest.raises(tf.TenferroIndexError, match=r"index 3 is out of bounds for axis 1 with extent 3"):
        x[0, 3]
    with pytest.raises(tf.TenferroIndexError, match=r"index -3 is out of bounds for axis 0 with extent 2"):
        x[-3]
    with pytest.raises(tf.TenferroIndexError, match=r"too many indices for a tensor of shape \(2, 3\): 3 axes"):
        x[0, 0, 0]
    with pytest.raises(tf.TenferroIndexError, match=r"slice step cannot be zero \(axis 0\)"):
        x[::0]
    with pytest.raises(tf.TenferroIndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(tf.TenferroIndexError, match="unsupported index 1.5"):
        x[1.5]
    with pytest.raises(tf.TenferroIndexError, match="unsupported index True"):
        x[True]
    with pytest.raises(tf.TenferroIndexError, match=r"index 5 is out of bounds for axis 1 with extent 3"):
        x[:, [0, 5]]
    with pytest.raises(tf.TenferroIndexError, match="could not be broadcast together"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(tf.TenferroIndexError, match=r"boolean index of shape \(3,\) does not match"):
        x[np.array([True, False, True])]
    with pytest.raises(tf.TenferroIndexError, match="0-d boolean indices are not supported"):
        x[tf.asarray(True)]
    with pytest.raises(tf.TenferroIndexError, match="integer or boolean"):
        x[tf.zeros(2)]
    assert issubclass(tf.TenferroIndexError, IndexError)


def test_several_traced_indices_raise():
    x = _t(_rand((3, 3)))
    i = tf.asarray(np.array([0, 1]))
    with pytest.raises(tf.TenferroIndexError, match="several advanced indices requires concrete"):
        tidu.make_graph(lambda x, i: x[i, i], x, i)


def test_gather_impl_bounds_error_names_axis():
    with pytest.raises(tf.TenferroIndexError, match=r"take: index 7 is out of bounds for axis 1 with extent 3"):
        tf.take(tf.zeros((2, 3)), [0, 7], axis=1)


# -- slice ---------------------------------------------------------------------------------
def test_slice_function():
    a = _rand((5, 3))
    _same(tf.slice(_t(a), (3, None), (0, None), (-2, 2)), a[3:0:-2, ::2])
    with pytest.raises(tf.ShapeError, match="slice: expected 2 start, limit and stride entries"):
        tf.slice(_t(a), (0,), (1,))


# -- dynamic slices ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "start,expect", [((0, 0), (0, 0)), ((1, 2), (1, 2)), ((5, 9), (2, 3)), ((-4, -1), (0, 3)), ((-9, -3), (0, 2))]
)
def test_dynamic_slice_clamps(start, expect):
    a = _rand((4, 5))
    _same(tf.dynamic_slice(_t(a), start, (2, 2)), a[expect[0] : expect[0] + 2, expect[1] : expect[1] + 2])


def test_dynamic_slice_start_forms():
    a = _rand((4, 5))
    want = a[1:3, 2:4]
    _same(tf.dynamic_slice(_t(a), tf.asarray(np.array([1, 2])), (2, 2)), want)
    _same(tf.dynamic_slice(_t(a), (tf.asarray(1), np.int32(2)), (2, 2)), want)
    _same(tf.dynamic_slice(_t(3.0), (), ()), np.array(3.0))


def test_dynamic_slice_traced_start():
    a = _t(_rand((4, 5)))
    g = tidu.make_graph(lambda x, i: tf.dynamic_slice(x, (i, 0), (2, 5)), a, tf.asarray(3))
    assert "dynamic_slice" in [e.prim.name for e in g.eqns]


def test_dynamic_update_slice():
    a, u = _rand((4, 5)), _rand((2, 3), 1)
    expect = a.copy()
    expect[2:4, 2:5] = u  # start (7, 2) clamps to (2, 2)
    _same(tf.dynamic_update_slice(_t(a), _t(u), (7, 2)), expect)
    r = tf.dynamic_update_slice(tf.zeros(3, tf.complex128), _t(np.ones(1)), (1,))
    _same(r, np.array([0, 1, 0], dtype=complex))


def test_dynamic_slice_errors():
    x = tf.zeros((2, 3))
    with pytest.raises(tf.ShapeError, match="dynamic_slice: expected 2 start indices"):
        tf.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(tf.DTypeError, match="dynamic_slice: start indices must be integers"):
        tf.dynamic_slice(x, (0.5, 0), (1, 1))
    with pytest.raises(tf.ShapeError, match="dynamic_slice: start indices must be a 1-D integer tensor of length 2"):
        tf.dynamic_slice(x, tf.zeros(2), (1, 1))
    with pytest.raises(tf.ShapeError, match=r"dynamic_slice: slice sizes \(3, 1\) do not fit"):
        tidu.make_graph(lambda x: tf.dynamic_slice(x, (0, 0), (3, 1)), x)
    with pytest.raises(tf.ShapeError, match="dynamic_update_slice: update .* does not fit operand"):
        tidu.make_graph(lambda x: tf.dynamic_update_slice(x, tf.zeros((3, 1)), (0, 0)), x)


# -- take / scatter_add ------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_take_and_scatter_add_random(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx = data.draw(
        hnp.arrays(
            np.int64, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), elements=st.integers(-n, n - 1)
        )
    )
    a = _rand(shape)
    _same(tf.take(_t(a), idx, axis=axis), np.take(a, idx, axis=axis))
    u = _rand(np.take(a, idx, axis=axis).shape, 1)
    expect = a.copy()
    np.add.at(expect, (slice(None),) * axis + (idx,), u)
    np.testing.assert_allclose(np.asarray(tf.scatter_add(_t(a), idx, _t(u), axis=axis)), expect)


def test_take_flattens_column_major():
    a = np.arange(6.0).reshape(2, 3)
    _same(tf.take(_t(a), [1, 2]), a.ravel(order="F")[[1, 2]])
    assert tf.gather is tf.take


def test_scatter_add_broadcasts_updates_and_errors():
    r = tf.scatter_add(tf.zeros((3, 2)), [0, 0], 1.0)
    _same(r, np.array([[2.0, 2.0], [0, 0], [0, 0]]))
    with pytest.raises(tf.ShapeError, match=r"scatter_add: updates of shape \(5,\) cannot be broadcast to \(2, 2\)"):
        tf.scatter_add(tf.zeros((3, 2)), [0, 1], tf.zeros(5))
    with pytest.raises(tf.TenferroIndexError, match="scatter_add: index 3 is out of bounds for axis 0 with extent 3"):
        tf.scatter_add(tf.zeros((3, 2)), [3], tf.zeros((1, 2)))
    with pytest.raises(tf.DTypeError, match="take: indices must be integers"):
        tf.take(tf.zeros(3), [0.5])
    with pytest.raises(tf.AxisError, match="take: axis 1 is out of bounds"):
        tf.take(tf.zeros(3), [0], axis=1)


def test_scatter_add_grads_both_operands():
    x, u = _t(_rand((3, 2))), _t(_rand((4, 2), 1))
    check_grads(lambda x, u: tf.scatter_add(x, [0, 2, 0, 1], u), [x, u], order=2)


def test_iteration():
    a = _rand((3, 2))
    rows = list(_t(a))
    assert len(rows) == 3
    for r, e in zip(rows, a):
        _same(r, e)
    g = tidu.grad(lambda x: sum(tf.sum(r * r) for r in x))(_t(a))
    np.testing.assert_allclose(np.asarray(g), 2 * a)
    with pytest.raises(tf.TenferroTypeError, match="iter: a 0-d tensor cannot be iterated"):
        iter(tf.asarray(1.0))


# --- review fixes: eager validation (bind skips the shape rule when nothing is traced)
def _m34():
    return tf.asarray(np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("sizes", [(5, 5), (4, 1), (2,), (1, 1, 1), (-1, 2), (2, -3)])
def test_dynamic_slice_rejects_sizes_that_do_not_fit(sizes):
    with pytest.raises(tf.ShapeError, match=r"dynamic_slice: slice sizes .* do not fit operand f64\[3,4\]"):
        tf.dynamic_slice(_m34(), (0, 0), sizes)


def test_dynamic_slice_rejects_non_integer_sizes():
    with pytest.raises(tf.ShapeError, match="dynamic_slice: shape extent must be an integer, got 2.5"):
        tf.dynamic_slice(_m34(), (0, 0), (2.5, 1))


@pytest.mark.parametrize("starts", [(5, 5), (-7, 2), (1, 3), (-1, -2), (-2, -9)])
def test_dynamic_slice_clamps_to_a_window_of_the_requested_shape(starts):
    out = tf.dynamic_slice(_m34(), starts, (2, 2))
    assert out.shape == (2, 2)
    s0, s1 = (min(max(s + n if s < 0 else s, 0), n - 2) for s, n in zip(starts, (3, 4)))  # jax.lax's rule
    np.testing.assert_array_equal(out.numpy(), np.arange(12.0).reshape(3, 4)[s0 : s0 + 2, s1 : s1 + 2])


@pytest.mark.parametrize("update_shape", [(4, 4), (3, 5), (3,), (1, 1, 1)])
def test_dynamic_update_slice_rejects_updates_that_do_not_fit(update_shape):
    with pytest.raises(tf.ShapeError, match="dynamic_update_slice: update .* does not fit operand f64\\[3,4\\]"):
        tf.dynamic_update_slice(_m34(), tf.asarray(np.ones(update_shape)), (0, 0))


def test_updates_refuse_to_drop_an_imaginary_part():
    with pytest.raises(tf.DTypeError, match="dynamic_update_slice: cannot write complex128 updates into a float64"):
        tf.dynamic_update_slice(_m34(), tf.asarray(np.ones((2, 2)) * 1j), (0, 0))
    with pytest.raises(tf.DTypeError, match="scatter_add: cannot write complex128 updates into a float64"):
        tf.scatter_add(_m34(), [0], np.ones((1, 4)) * 1j)


@pytest.mark.parametrize(
    "call, err, msg",
    [
        (lambda x: tf.slice(x, (0, 0), (2, 2), (1.5, 1)), tf.ShapeError, "slice: stride must be an integer"),
        (lambda x: tf.slice(x, (0.5, 0), (2, 2)), tf.ShapeError, "slice: start index must be an integer"),
        (lambda x: tf.take(x, [0], axis=1.0), tf.AxisError, "take: axis must be an integer, got 1.0"),
        (lambda x: tf.scatter_add(x, [0], 1.0, axis=0.5), tf.AxisError, "scatter_add: axis must be an integer"),
    ],
)
def test_float_axes_and_extents_are_not_truncated(call, err, msg):
    with pytest.raises(err, match=msg):
        call(_m34())


@pytest.mark.cpu_only  # interned avals: a CPU hot-path optimisation
def test_indexing_avals_keep_the_placement():
    from tenferro._indexing import _aval
    from tenferro._aval import aval_of_operand

    x = _m34()
    assert _aval(x) is aval_of_operand(x)
    assert _aval(tidu.UndefinedPrimal(aval_of_operand(x))) is aval_of_operand(x)


@pytest.mark.parametrize(
    "shape, index",
    [
        ((2, 3, 4), (slice(None), [0, 2], Ellipsis, 1)),
        ((2, 3), ([0, 1], Ellipsis, [2, 0])),
        ((4, 5, 6), (slice(1, None), [[-3, 3]], Ellipsis, -2)),
        ((2, 3, 4), (1, Ellipsis, [0, 2], 2)),
    ],
)
def test_an_ellipsis_of_no_axes_still_separates_advanced_indices(shape, index):
    """NumPy: advanced indices separated by a slice, an ellipsis or a newaxis put their broadcast
    axes first, even where the ellipsis stands for no axis. ``x[:, [0, 2], ..., 1]`` came out
    transposed (same shape: silently wrong), others in another shape; compiled alike."""
    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    want = a[index]
    np.testing.assert_array_equal(np.asarray(tf.asarray(a)[index]), want)
    np.testing.assert_array_equal(np.asarray(tf.jit(lambda x: x[index])(tf.asarray(a))), want)


def test_dynamic_slices_follow_jax_lax_for_negative_starts():
    """A negative start counts from the end, as ``jax.lax.dynamic_slice`` (``allow_negative_indices``,
    its default): ``(3, -1)`` on a 4 x 3 matrix took columns 0:2, JAX takes 1:3. Values, updates and
    gradients against JAX, for starts from below ``-extent`` to beyond the end."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    lax = jax.lax
    x = np.arange(20.0).reshape(4, 5)
    u = -np.arange(6.0).reshape(2, 3) - 1
    w = np.linspace(0.5, 1.5, 6).reshape(2, 3)
    for start in [(3, -1), (-1, -1), (-3, 2), (-9, -7), (1, -5), (5, 9), (0, -6)]:
        _same(tf.dynamic_slice(_t(x), start, (2, 3)), np.asarray(lax.dynamic_slice(x, start, (2, 3))))
        _same(tf.dynamic_update_slice(_t(x), _t(u), start), np.asarray(lax.dynamic_update_slice(x, u, start)))
        g = tidu.grad(lambda a, s=start: tf.sum(tf.dynamic_slice(a, s, (2, 3)) * _t(w)))(_t(x))
        want = jax.grad(lambda a, s=start: (lax.dynamic_slice(a, s, (2, 3)) * w).sum())(x)
        _same(g, np.asarray(want))
    # per-example starts under vmap and a compiled call take the same windows
    starts = np.array([[3, -1], [-1, -3], [-7, 4]])
    got = tidu.vmap(lambda s: tf.dynamic_slice(_t(x), s, (2, 3)))(tf.asarray(starts))
    want = np.stack([np.asarray(lax.dynamic_slice(x, tuple(s), (2, 3))) for s in starts])
    _same(got, want)
    compiled = tf.jit(lambda a, s: tf.dynamic_slice(a, s, (2, 3)))
    _same(compiled(_t(x), tf.asarray(np.array([-1, -2]))), np.asarray(lax.dynamic_slice(x, (-1, -2), (2, 3))))
