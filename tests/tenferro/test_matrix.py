"""Matrix helpers against NumPy, with the trailing-batch convention ([M, N, B...])."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu

from helpers import assert_same as _same, is_writeable, rand as _rand, tensor_of as _t


@settings(max_examples=60, deadline=None)
@given(m=st.integers(0, 4), n=st.integers(0, 4), batch=st.lists(st.integers(0, 3), max_size=2), k=st.integers(-5, 5))
def test_diagonal_trailing_batch(m, n, batch, k):
    a = _rand((m, n, *batch))
    # NumPy appends the diagonal axis; tenferro puts it first ([K, B...])
    _same(tf.diagonal(_t(a), k), np.moveaxis(np.diagonal(a, k, 0, 1), -1, 0))
    _same(tf.trace(_t(a), k), np.trace(a, k))
    _same(tf.tril(_t(a), k), np.where(np.tri(m, n, k, dtype=bool).reshape((m, n) + (1,) * len(batch)), a, 0))
    _same(tf.triu(_t(a), k), np.where(~np.tri(m, n, k - 1, dtype=bool).reshape((m, n) + (1,) * len(batch)), a, 0))


@pytest.mark.parametrize("axis1,axis2", [(1, 2), (2, 1), (0, 2), (-1, 0)])
def test_diagonal_other_axes(axis1, axis2):
    a = _rand((3, 4, 4))
    expect = np.diagonal(a, 1, axis1, axis2)  # [rest..., K]
    pos = min(axis1 % 3, axis2 % 3)
    _same(tf.diagonal(_t(a), 1, axis1, axis2), np.moveaxis(expect, -1, pos))
    _same(tf.trace(_t(a), 1, axis1, axis2), np.trace(a, 1, axis1, axis2))


def test_diagonal_matches_numpy_on_matrices():
    a = _rand((3, 5))
    for k in range(-4, 6):
        _same(tf.diagonal(_t(a), k), np.diagonal(a, k))
        _same(tf.diag(_t(a), k), np.diag(a, k))
        _same(tf.extract_diag(_t(a), k), np.diag(a, k))
        assert tf.diagonal(_t(a), k).shape == np.diagonal(a, k).shape


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_embed_diag(k):
    v = _rand(3)
    _same(tf.diag(_t(v), k), np.diag(v, k))
    _same(tf.embed_diag(_t(v), k), np.diag(v, k))
    vb = _rand((3, 2))  # [K, B]
    r = np.stack([np.diag(vb[:, b], k) for b in range(2)], axis=-1)
    _same(tf.embed_diag(_t(vb), k), r)


def test_embed_and_extract_are_adjoint():
    x = _t(_rand((3, 3, 2)))
    g = tidu.vjp(lambda x: tf.diagonal(x, 1), x)[1](_t(_rand((2, 2), 1)))[0]
    _same(g, np.asarray(tf.embed_diag(_t(_rand((2, 2), 1)), 1))[:3, :3])


def test_integer_and_complex_dtypes():
    a = np.arange(9).reshape(3, 3)
    _same(tf.tril(_t(a)), np.tril(a))
    _same(tf.trace(_t(a)), np.trace(a))
    z = _rand((2, 2)) + 1j
    _same(tf.triu(_t(z)), np.triu(z))


def test_matrix_errors():
    with pytest.raises(tf.ShapeError, match=r"tril: expected a tensor of rank >= 2 .* got shape \(3,\)"):
        tf.tril(tf.zeros(3))
    with pytest.raises(tf.ShapeError, match=r"diagonal: expected a tensor of rank >= 2, got shape \(3,\)"):
        tf.diagonal(tf.zeros(3))
    with pytest.raises(tf.ShapeError, match="trace: axis1 and axis2 must differ, got both = 1"):
        tf.trace(tf.zeros((2, 2)), 0, 1, -1)
    with pytest.raises(tf.AxisError, match="diagonal: axis 3 is out of bounds"):
        tf.diagonal(tf.zeros((2, 2)), 0, 0, 3)
    with pytest.raises(tf.ShapeError, match=r"diag: expected a 1-D or 2-D tensor, got shape \(2, 2, 2\)"):
        tf.diag(tf.zeros((2, 2, 2)))
    with pytest.raises(tf.ShapeError, match="embed_diag: expected a tensor of rank >= 1"):
        tf.embed_diag(tf.asarray(1.0))


# --- review fixes -------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (1, 3), (3, 3), (2, 2, 2)])
def test_extract_diag_is_a_canonical_writeable_copy(shape):
    x = tf.asarray(np.arange(float(np.prod(shape))).reshape(shape))
    d = tf.diagonal(x)
    assert d._data.flags.f_contiguous and is_writeable(d._data)
    assert not np.shares_memory(d._data, x._data)


@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda x: tf.diagonal(x, 0.5), "diagonal: offset must be an integer"),
        (lambda x: tf.diagonal(x, 0, 0.0, 1), "diagonal: axis must be an integer"),
        (lambda x: tf.tril(x, 0.5), "tril: offset k must be an integer"),
        (lambda x: tf.trace(x, 1.5), "trace: offset must be an integer"),
        (lambda x: tf.diag(x, 1.0), "diag: offset k must be an integer"),
        (lambda x: tf.embed_diag(x[0], 1.0), "embed_diag: offset k must be an integer"),
    ],
)
def test_float_offsets_and_axes_are_not_truncated(call, msg):
    with pytest.raises((tf.ShapeError, tf.AxisError), match=msg):
        call(tf.asarray(np.ones((3, 3))))
