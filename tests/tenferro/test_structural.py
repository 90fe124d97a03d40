"""Structural functions: values against NumPy, layouts, AD corner cases, errors.

Gradients of every structural primitive are checked in the grad table
(specs/structural.py); this file checks values and messages.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
import tidu

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)

from helpers import assert_same as _same, is_writeable, rand as _rand, tensor_of as _t


# -- reshape / transpose -------------------------------------------------------------
def test_reshape_is_column_major_by_default():
    a = np.arange(6.0).reshape(2, 3)
    _same(tf.reshape(_t(a), (3, 2)), a.reshape(3, 2, order="F"))
    _same(tf.reshape(_t(a), (3, 2), order="C"), a.reshape(3, 2))
    _same(tf.reshape(_t(a), -1), a.reshape(-1, order="F"))


def test_transpose_matches_numpy():
    a = _rand((2, 3, 4))
    _same(tf.transpose(_t(a)), a.T)
    _same(tf.transpose(_t(a), (1, 2, 0)), a.transpose(1, 2, 0))


# -- squeeze / expand_dims ------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,axis", [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), (0, -1)), ((), None), ((1,), 0), ((0, 1), 1)]
)
def test_squeeze(shape, axis):
    a = _rand(shape)
    _same(tf.squeeze(_t(a), axis), np.squeeze(a, axis))
    _same(_t(a).squeeze(axis), np.squeeze(a, axis))


@pytest.mark.parametrize("shape,axis", [((3,), 0), ((3,), -1), ((2, 3), (0, 3)), ((), 0), ((0,), 1)])
def test_expand_dims(shape, axis):
    a = _rand(shape)
    _same(tf.expand_dims(_t(a), axis), np.expand_dims(a, axis))


def test_squeeze_errors():
    with pytest.raises(tf.ShapeError, match=r"squeeze: cannot remove axis 1 of extent 3"):
        tf.squeeze(tf.zeros((1, 3)), 1)
    with pytest.raises(tf.AxisError, match="squeeze: axis 2 is out of bounds"):
        tf.squeeze(tf.zeros((1, 3)), 2)
    with pytest.raises(tf.AxisError, match="expand_dims: axis 3 is out of bounds"):
        tf.expand_dims(tf.zeros((1,)), 3)


# -- concatenate / stack --------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), data=st.data())
def test_concatenate_random(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(1, 3))
    arrs = []
    for k in range(n):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        arrs.append(_rand(tuple(s), seed=k))
    _same(tf.concatenate([_t(a) for a in arrs], axis), np.concatenate(arrs, axis))


def test_concatenate_promotes():
    r = tf.concatenate([tf.ones(2, tf.float32), tf.arange(2)])
    assert r.dtype is tf.result_type(tf.float32, tf.int64)
    _same(r, np.array([1, 1, 0, 1], dtype=r.dtype.numpy))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(axis):
    arrs = [_rand((2, 3), seed=k) for k in range(3)]
    _same(tf.stack([_t(a) for a in arrs], axis), np.stack(arrs, axis))


def test_stack_scalars_and_empty():
    _same(tf.stack([_t(1.0), _t(2.0)]), np.array([1.0, 2.0]))
    _same(tf.stack([tf.zeros((0, 2))] * 2, axis=1), np.zeros((0, 2, 2)))


def test_concatenate_and_stack_errors():
    with pytest.raises(tf.ShapeError, match=r"concatenate: shapes \(2, 3\), \(3, 3\) differ outside axis 1"):
        tf.concatenate([tf.zeros((2, 3)), tf.zeros((3, 3))], axis=1)
    with pytest.raises(tf.ShapeError, match="concatenate: all tensors must have the same rank"):
        tf.concatenate([tf.zeros((2, 3)), tf.zeros(3)])
    with pytest.raises(tf.ShapeError, match="concatenate: expected at least one tensor"):
        tf.concatenate([])
    with pytest.raises(tf.ShapeError, match="concatenate: 0-d tensors cannot be concatenated"):
        tf.concatenate([_t(1.0), _t(2.0)])
    with pytest.raises(tf.AxisError, match="concatenate: axis 2 is out of bounds"):
        tf.concatenate([tf.zeros((2, 3))] * 2, axis=2)
    with pytest.raises(tf.ShapeError, match=r"stack: all tensors must have the same shape, got \(2,\), \(3,\)"):
        tf.stack([tf.zeros(2), tf.zeros(3)])
    with pytest.raises(tf.ShapeError, match="stack: expected at least one tensor"):
        tf.stack([])


def test_concatenate_grad_with_constant_operand():
    x = _t(_rand(3))
    c = _t(np.ones(2))
    g = tidu.grad(lambda x: tf.sum(tf.concatenate([c, x, c]) * tf.arange(7.0)))(x)
    _same(g, np.array([2.0, 3.0, 4.0]))


def test_jacfwd_uses_stack():
    # tidu stacks basis results through TensorVSpace.stack_basis -> tf.stack
    x = _t(_rand((2, 3)))
    j = tidu.jacfwd(lambda x: tf.transpose(x))(x)
    assert tuple(j.shape) == (3, 2, 2, 3)


# -- pad ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,pw",
    [
        ((2, 3), 1),
        ((2, 3), (1, 2)),
        ((2, 3), ((0, 1), (2, 0))),
        ((3,), ((2, 1),)),
        ((), 0),
        ((0, 2), ((1, 1), (0, 0))),
        ((2, 2), ((1,), (2,))),
    ],
)
def test_pad_matches_numpy(shape, pw):
    a = _rand(shape)
    _same(tf.pad(_t(a), pw, constant_values=2.5), np.pad(a, pw, constant_values=2.5))


def test_pad_traced_constant_value_gradient():
    x = _t(_rand((2, 3)))
    g = tidu.grad(lambda v: tf.sum(tf.pad(x, 1, constant_values=v)))(_t(0.5))
    assert float(g) == 4 * 5 - 2 * 3


def test_pad_complex_value_and_int_tensor():
    _same(tf.pad(tf.arange(2), 1), np.pad(np.arange(2), 1))
    z = tf.pad(tf.zeros(1, tf.complex128), 1, constant_values=1j)
    _same(z, np.array([1j, 0, 1j]))


def test_pad_errors():
    with pytest.raises(tf.ShapeError, match="pad: pad widths must be >= 0"):
        tf.pad(tf.zeros(2), -1)
    with pytest.raises(tf.ShapeError, match=r"pad: pad_width .* does not fit a tensor of shape \(2, 3\)"):
        tf.pad(tf.zeros((2, 3)), ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(tf.ShapeError, match="pad: pad_width"):
        tf.pad(tf.zeros(2), 1.5)
    with pytest.raises(tf.TenferroValueError, match="pad: only mode='constant' is supported"):
        tf.pad(tf.zeros(2), 1, mode="edge")
    with pytest.raises(tf.DTypeError, match="pad: constant_values 1j cannot be represented in the tensor's dtype"):
        tf.pad(tf.zeros(2), 1, constant_values=1j)
    with pytest.raises(tf.ShapeError, match="pad: constant_values must be a scalar or a 0-d tensor"):
        tf.pad(tf.zeros(2), 1, constant_values=tf.zeros(2))


# -- flip -----------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data())
def test_flip_random(shape, data):
    a = _rand(shape)
    axes = data.draw(st.none() | st.lists(st.integers(0, max(len(shape) - 1, 0)), unique=True, max_size=len(shape)))
    expect = np.flip(a, axes if axes is None else tuple(axes)) if (axes is None or len(shape)) else a
    _same(tf.flip(_t(a), None if axes is None else tuple(axes)), expect)


def test_flip_errors():
    with pytest.raises(tf.AxisError, match="flip: axis 1 is out of bounds for a tensor of rank 1"):
        tf.flip(tf.zeros(2), 1)
    assert tf.reverse is tf.flip


# --- review fixes -------------------------------------------------------------------
def _canonical(t):
    a = t._data
    return a.flags.f_contiguous and is_writeable(a) and (a.size <= 1 or 0 not in a.strides)


@pytest.mark.parametrize("src, shape", [((), (3, 2)), ((2,), (3, 2)), ((1, 2), (4, 2)), ((3, 1), (3, 5, 1)[:2])])
def test_broadcast_to_returns_canonical_writeable_storage(src, shape):
    out = tf.broadcast_to(tf.asarray(np.arange(float(np.prod(src, dtype=int))).reshape(src)), shape)
    assert _canonical(out), out._data.strides
    np.testing.assert_array_equal(
        out.numpy(), np.broadcast_to(np.arange(float(np.prod(src, dtype=int))).reshape(src), shape)
    )


@pytest.mark.parametrize("fn", [tf.sum, tf.mean, lambda x: tf.sum(x * 2.0), lambda x: tf.einsum("ij->", x)])
def test_gradients_are_canonical_and_writeable(fn):
    g = tidu.grad(fn)(tf.asarray(np.ones((3, 4))))
    assert _canonical(g), (g._data.strides, is_writeable(g._data))


@pytest.mark.parametrize(
    "call, err, msg",
    [
        (lambda x: tf.concatenate([x, x], axis=1.7), tf.AxisError, "concatenate: axis must be an integer, got 1.7"),
        (lambda x: tf.stack([x, x], axis=0.5), tf.AxisError, "stack: axis must be an integer"),
        (lambda x: tf.reshape(x, (2.5, 6)), tf.ShapeError, "reshape: shape extent must be an integer, got 2.5"),
        (lambda x: tf.reshape(x, (5,)), tf.ShapeError, r"reshape: cannot reshape .* \(size 12\) into shape \(5,\)"),
        (lambda x: tf.reshape(x, (5,), order="C"), tf.ShapeError, "reshape: cannot reshape"),
        (lambda x: tf.transpose(x, (1.2, 0)), tf.AxisError, "transpose: axis must be an integer, got 1.2"),
        (lambda x: tf.expand_dims(x, 0.5), tf.AxisError, "expand_dims: axis must be an integer"),
        (lambda x: tf.broadcast_to(x, (2.0, 3, 4)), tf.ShapeError, "broadcast_to: shape extent must be an integer"),
        (lambda x: tf.broadcast_to(x, (-1, 4)), tf.ShapeError, "broadcast_to: extents must be >= 0"),
    ],
)
def test_float_axes_and_extents_raise_typed_errors(call, err, msg):
    with pytest.raises(err, match=msg):
        call(tf.asarray(np.ones((3, 4))))


def test_integer_like_axes_still_work():
    x = tf.asarray(np.ones((3, 4)))
    assert tf.transpose(x, (np.int64(1), np.int32(0))).shape == (4, 3)
    assert tf.reshape(x, np.array([2, 6])).shape == (2, 6)
    assert tf.concatenate([x, x], axis=np.int64(1)).shape == (3, 8)
