"""Batched matrix operations that :mod:`tenferro.linalg`'s derivative rules are
written with (rule side: tenferro ops, so that rules can be differentiated again).

Matrix products :func:`mm`, :func:`mhm`, transposes :func:`mT`, :func:`mH`;
constants (:func:`const`, identity masks :func:`eye_mask`); vectors as rows or
columns of a matrix (:func:`as_cols`, :func:`as_rows`, :func:`diff_matrix`);
:func:`safe_reciprocal`; and blocks of rows or columns through the linear
``slice``/``slice_embed`` primitives (:func:`take_block`, :func:`place_block` and
their shorthands). All work on the trailing-batch layout: matrix axes 0 and 1,
batch axes 2, 3, ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtypes import DType
from .._structural import broadcast_in_dim_p, convert_element_type, slice_embed_p, slice_p
from .._placement import CPU, array_module_of_placement, device_scope
from .._aval import fortran, meta, placement_of_operand, xp_of
from .._tensor import Tensor

from .. import _ops as tf
from ._util import concrete


def mm(a: Any, b: Any) -> Any:
    """Batched matrix product ``a @ b`` in the trailing-batch layout:
    ``[M, K, B...] x [K, N, B...] -> [M, N, B...]`` (dtypes promoted)."""
    nb = len(meta(a)[0]) - 2
    batch = tuple(range(2, 2 + nb))
    return tf.dot_general(a, b, (((1,), (0,)), (batch, batch)))


def mhm(a: Any, b: Any) -> Any:
    """``a^H @ b`` batched (trailing layout) without materializing ``a^H``:
    ``[K, M, B...] x [K, N, B...] -> [M, N, B...]``."""
    nb = len(meta(a)[0]) - 2
    batch = tuple(range(2, 2 + nb))
    if meta(a)[1].is_complex:
        a = tf.conj(a)
    return tf.dot_general(a, b, (((0,), (0,)), (batch, batch)))


def mT(x: Any) -> Any:
    """Transpose of the matrix axes (batch axes stay)."""
    nd = len(meta(x)[0])
    return tf.transpose(x, (1, 0) + tuple(range(2, nd)))


def mH(x: Any) -> Any:
    """Conjugate transpose of the matrix axes."""
    t = mT(x)
    return tf.conj(t) if meta(x)[1].is_complex else t


def const(array: Any, like: Any = None) -> Tensor:
    """A constant tensor of ``array`` (canonical layout), uploaded to the placement
    of ``like`` (a tensor or tracer) when ``array`` is a host array and ``like``
    lives on a GPU."""
    t = Tensor._wrap(fortran(array))
    if like is None or type(array) is not np.ndarray:
        return t
    where = placement_of_operand(like)
    return t if where.device is None else t.to_gpu(where.device)


def eye_mask(n: int, m: int, batch: tuple, dtype: DType, k: int = 0, like: Any = None) -> Tensor:
    """Constant ``[n, m, B...]`` identity (shifted by ``k``), broadcast over the
    batch, on the placement of ``like`` (made there: no upload)."""
    where = CPU if like is None else placement_of_operand(like)
    with device_scope("eye_mask", where):
        xp = array_module_of_placement("eye_mask", where)
        e = xp.eye(m, n, -k, dtype=dtype.numpy).T  # column-major as made: no copy for one matrix
        if not batch:
            return Tensor._wrap(e)
        return Tensor._wrap(fortran(xp.broadcast_to(e.reshape(e.shape + (1,) * len(batch)), (n, m) + batch)))


def as_cols(v: Any, m: int) -> Any:
    """``v[j]`` of shape ``[n, B...]`` as a matrix ``X[i, j] = v[j]`` of shape ``[m, n, B...]``."""
    s, _ = meta(v)
    nb = len(s) - 1
    return broadcast_in_dim_p.bind(v, shape=(m,) + tuple(s), broadcast_dimensions=(1,) + tuple(range(2, 2 + nb)))


def as_rows(v: Any, m: int) -> Any:
    """``v[i]`` of shape ``[n, B...]`` as a matrix ``X[i, j] = v[i]`` of shape ``[n, m, B...]``."""
    s, _ = meta(v)
    nb = len(s) - 1
    shape = (s[0], m) + tuple(s[1:])
    return broadcast_in_dim_p.bind(v, shape=shape, broadcast_dimensions=(0,) + tuple(range(2, 2 + nb)))


def diff_matrix(v: Any) -> Any:
    """``D[i, j] = v[j] - v[i]`` for ``v`` of shape ``[n, B...]``."""
    if type(v) is Tensor:  # a constant: one NumPy pass
        x = v._data
        return Tensor._wrap(fortran(x[None, :] - x[:, None]))
    n = meta(v)[0][0]
    return tf.subtract(as_cols(v, n), as_rows(v, n))


def to_dtype(x: Any, dtype: DType) -> Any:
    return convert_element_type(x, dtype)


def _zero_mask(d: Any) -> Tensor | None:
    """Constant 1 where the (concrete) value of ``d`` is exactly zero, else None."""
    arr = concrete(d)
    if arr is None:
        return None
    z = arr == 0
    if type(arr) is np.ndarray and not z.any():  # (on a GPU, adding a zero mask beats a device read)
        return None
    return const(z.astype(arr.dtype))


def safe_reciprocal(s: Any) -> Any:
    """``1/s`` with exact zeros mapped to 0 (singular values of rank-deficient input)."""
    if type(s) is Tensor:  # a constant: one NumPy pass
        x = s._data
        return Tensor._wrap(fortran(_divide_where(1.0, x, x != 0, x)))
    zero = _zero_mask(s)
    if zero is None:
        return tf.divide(1.0, s)
    return tf.subtract(tf.divide(1.0, tf.add(s, zero)), zero)


def _divide_where(num: Any, den: Any, mask: Any, like: Any) -> Any:
    """``num / den`` where ``mask``, exactly 0 elsewhere, with the dtype of the
    array ``like`` (NumPy or CuPy)."""
    if type(like) is np.ndarray:
        return np.divide(num, den, out=np.zeros_like(like), where=mask)
    xp = xp_of(like)
    return xp.where(mask, num / xp.where(mask, den, 1), 0).astype(like.dtype, copy=False)


def _window(shape: tuple, axis: int, start: int, stop: int) -> tuple:
    """``slice_p`` windows: ``start:stop`` along ``axis``, everything elsewhere."""
    return tuple((start, 1, stop - start) if i == axis else (0, 1, n) for i, n in enumerate(shape))


def take_block(x: Any, axis: int, start: int, stop: int) -> Any:
    """Entries ``start:stop`` along matrix ``axis`` (0 rows, 1 columns) of each matrix
    of ``x`` (the linear ``slice`` primitive)."""
    s = tuple(meta(x)[0])
    if (start, stop) == (0, s[axis]):
        return x
    return slice_p.bind(x, slices=_window(s, axis, start, stop))


def place_block(x: Any, axis: int, total: int, offset: int) -> Any:
    """``x`` as entries ``offset:offset+K`` along matrix ``axis`` of a matrix with
    ``total`` entries there, zero elsewhere (``slice_embed``, the transpose of
    :func:`take_block`)."""
    s = tuple(meta(x)[0])
    if (offset, total) == (0, s[axis]):
        return x
    shape = s[:axis] + (total,) + s[axis + 1 :]
    return slice_embed_p.bind(x, shape=shape, slices=_window(shape, axis, offset, offset + s[axis]))


def columns(x: Any, start: int, stop: int) -> Any:
    """Columns ``start:stop`` of each matrix of ``x``."""
    return take_block(x, 1, start, stop)


def rows(x: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of each matrix of ``x``."""
    return take_block(x, 0, start, stop)


def place_columns(x: Any, total: int, offset: int) -> Any:
    """``x`` ``[M, K, B...]`` as columns ``offset:offset+K`` of a zero ``[M, total, B...]``."""
    return place_block(x, 1, total, offset)


def place_rows(x: Any, total: int, offset: int) -> Any:
    """``x`` ``[K, N, B...]`` as rows ``offset:offset+K`` of a zero ``[total, N, B...]``."""
    return place_block(x, 0, total, offset)


def leading(v: Any, k: int) -> Any:
    """The first ``k`` entries of ``v`` ``[K, B...]`` along axis 0."""
    return take_block(v, 0, 0, k)


def mtrace_product(a: Any, b: Any) -> Any:
    """``trace(a @ b)`` per batch element, ``[B...]``, as ``sum(a^T * b)`` (no matmul)."""
    return tf.sum(tf.multiply(mT(a), b), axis=(0, 1))
