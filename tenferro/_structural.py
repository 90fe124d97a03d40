"""Structural primitives: shape and layout changes, dtype conversion, broadcasting.

Primitives: ``convert_element_type``, ``broadcast_in_dim``, ``reshape``
(column-major), ``transpose``, ``slice``/``slice_embed`` and ``sum`` (their transpose
partners). All are linear; each defines only its transpose rule.
``squeeze``/``expand_dims`` are reshapes. Joins and reversal (``concatenate``, ``stack``,
``flip``) live in :mod:`tenferro._joins`; indexing in :mod:`tenferro._indexing`.
"""

from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np


from ._astype import convert_element_type  # noqa: F401  (re-exported: the op families import it from here)
from ._aval import TensorType, meta, wrap_fortran, xp_of
from ._batching import batch_last, trailing_batch
from ._dispatch import dispatchable
from ._errors import AxisError, ShapeError, TenferroMemoryError, fmt_bytes, fmt_shape
from ._operands import as_operand
from ._registry import primitive
from ._shape import as_index, as_indices, as_shape, normalize_axes
from ._tensor import Tensor

FAMILY = "structural"
_pyslice = builtins.slice


# ---------------------------------------------------------------------------
# slice / slice_embed: a static strided window and its adjoint
# ---------------------------------------------------------------------------
def _window(slices: tuple) -> tuple:
    """Python slices selecting ``count`` elements ``start, start+step, ...`` per axis."""
    out = []
    for start, step, count in slices:
        if count == 0:
            out.append(_pyslice(0, 0, 1))
        else:
            stop = start + count * step
            out.append(_pyslice(start, stop if stop >= 0 else None, step))
    return tuple(out)


slice_p = primitive("slice", FAMILY)


@slice_p.def_impl
def _slice_impl(x, slices):
    return wrap_fortran(x._data[_window(slices)])


@slice_p.def_abstract_eval
def _slice_aval(a, slices):
    return a.update(shape=tuple(c for _, _, c in slices))


@slice_p.def_batch
def _slice_batch(axis_size, args, dims, slices):
    (x,), (d,) = args, dims
    x = batch_last(x, d, axis_size)
    return slice_p.bind(x, slices=tuple(slices) + ((0, 1, axis_size),)), len(slices)


@slice_p.def_linear
def _slice_transpose(ct, x, slices):
    return [slice_embed_p.bind(ct, shape=tuple(x.aval.shape), slices=slices)]


slice_embed_p = primitive("slice_embed", FAMILY)


@slice_embed_p.def_impl
def _slice_embed_impl(x, shape, slices):
    a = x._data
    out = xp_of(a).zeros(shape, dtype=a.dtype, order="F")
    out[_window(slices)] = a
    return Tensor._wrap(out)


@slice_embed_p.def_abstract_eval
def _slice_embed_aval(a, shape, slices):
    return a.update(shape=tuple(shape))


@slice_embed_p.def_batch
def _slice_embed_batch(axis_size, args, dims, shape, slices):
    (x,), (d,) = args, dims
    x = batch_last(x, d, axis_size)
    return (
        slice_embed_p.bind(x, shape=tuple(shape) + (axis_size,), slices=tuple(slices) + ((0, 1, axis_size),)),
        len(shape),
    )


@slice_embed_p.def_linear
def _slice_embed_transpose(ct, x, shape, slices):
    return [slice_p.bind(ct, slices=slices)]


def _reduced_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _reduction_aval(a: TensorType, axes: tuple) -> TensorType:
    return a.update(shape=_reduced_shape(a.shape, axes))


def _expand(r: Any, x_shape: tuple, axes: tuple) -> Any:
    """Broadcast a reduced value back to ``x_shape`` (the transpose of ``sum``)."""
    kept = tuple(i for i in range(len(x_shape)) if i not in axes)
    return broadcast_in_dim_p.bind(r, shape=tuple(x_shape), broadcast_dimensions=kept)


# ---------------------------------------------------------------------------
# sum: linear
# ---------------------------------------------------------------------------
sum_p = primitive("sum", "reductions")  # the transpose partner of broadcast_in_dim


@sum_p.def_impl
def _sum_impl(x, axes):
    return wrap_fortran(np.sum(x._data, axis=axes, dtype=x._data.dtype))


sum_p.def_abstract_eval(_reduction_aval)


sum_p.def_batch(trailing_batch(sum_p))  # the batch axis last: the per-example axis numbers stay


@sum_p.def_linear
def _sum_transpose(ct, x, axes):
    return [_expand(ct, x.aval.shape, axes)]


# ---------------------------------------------------------------------------
# broadcast_in_dim
# ---------------------------------------------------------------------------
broadcast_in_dim_p = primitive("broadcast_in_dim", FAMILY)


def expanded_shape(in_shape: tuple, shape: tuple, broadcast_dimensions: tuple) -> tuple:
    """The operand's shape with the unit axes that ``broadcast_in_dim`` inserts."""
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = in_shape[i]
    return tuple(expanded)


def materialized_broadcast(a: Any, expanded: tuple, shape: tuple) -> Any:
    """The array ``a`` (of :func:`expanded_shape` ``expanded``) broadcast to ``shape``, written
    into a new column-major array (canonical, writeable: a zero-stride view must not escape)."""
    try:
        out = xp_of(a).empty(shape, dtype=a.dtype, order="F")
    except MemoryError:
        need = int(np.prod(shape, dtype=object)) * a.dtype.itemsize
        raise TenferroMemoryError(
            f"broadcast_to: cannot allocate {fmt_bytes(need)} for a tensor of shape "
            f"{fmt_shape(shape)} and dtype {a.dtype.name}"
        ) from None
    out[...] = a.reshape(expanded, order="F")
    return out


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(x, shape, broadcast_dimensions):
    a = x._data
    return Tensor._wrap(materialized_broadcast(a, expanded_shape(a.shape, shape, broadcast_dimensions), shape))


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_aval(a, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != len(a.shape):
        raise ShapeError(
            f"broadcast_in_dim: operand rank {len(a.shape)} != len(broadcast_dimensions) {len(broadcast_dimensions)}"
        )
    for i, d in enumerate(broadcast_dimensions):
        if not (a.shape[i] == 1 or a.shape[i] == shape[d]):
            raise ShapeError(
                f"broadcast_in_dim: operand dimension {i} of size {a.shape[i]} cannot be "
                f"broadcast to size {shape[d]} of output shape {fmt_shape(shape)}"
            )
    return a.update(shape=tuple(shape))


@broadcast_in_dim_p.def_batch
def _broadcast_in_dim_batch(axis_size, args, dims, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    x = batch_last(x, d, axis_size)
    out = broadcast_in_dim_p.bind(
        x, shape=tuple(shape) + (axis_size,), broadcast_dimensions=tuple(broadcast_dimensions) + (len(shape),)
    )
    return out, len(shape)


@broadcast_in_dim_p.def_linear
def _broadcast_in_dim_transpose(ct, x, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    mapped = set(broadcast_dimensions)
    sum_axes = [d for d in range(len(shape)) if d not in mapped]
    sum_axes += [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    r = ct
    if sum_axes:
        r = sum_p.bind(r, axes=tuple(sorted(sum_axes)))
    if tuple(meta(r)[0]) != tuple(in_shape):
        r = reshape_p.bind(r, new_shape=tuple(in_shape))
    return [r]


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """Broadcast ``x`` to ``shape`` with NumPy's (right-aligned) rules."""
    x = as_operand("broadcast_to", x)
    xs = tuple(meta(x)[0])
    shape = as_shape("broadcast_to", shape)
    if any(s < 0 for s in shape):
        raise ShapeError(f"broadcast_to: extents must be >= 0, got {fmt_shape(shape)}")
    if xs == shape:
        return x
    if len(xs) > len(shape):
        raise ShapeError(
            f"broadcast_to: cannot broadcast shape {fmt_shape(xs)} to the lower rank shape {fmt_shape(shape)}"
        )
    lead = len(shape) - len(xs)
    for i, n in enumerate(xs):
        if n != 1 and n != shape[lead + i]:
            raise ShapeError(
                f"broadcast_to: cannot broadcast shape {fmt_shape(xs)} to {fmt_shape(shape)} "
                f"(dimension {i} has size {n}, expected 1 or {shape[lead + i]})"
            )
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=tuple(range(lead, len(shape))))


# ---------------------------------------------------------------------------
# reshape (column-major by default) and transpose
# ---------------------------------------------------------------------------
reshape_p = primitive("reshape", FAMILY)


@reshape_p.def_impl
def _reshape_impl(x, new_shape):
    return Tensor._wrap(np.reshape(x._data, new_shape, order="F"))  # F-contiguous in, F-contiguous out


@reshape_p.def_abstract_eval
def _reshape_aval(a, new_shape):
    n = 1
    for s in new_shape:
        n *= s
    if n != a.size:
        raise ShapeError(f"reshape: cannot reshape {a} (size {a.size}) into shape {fmt_shape(new_shape)} (size {n})")
    return a.update(shape=tuple(new_shape))


@reshape_p.def_batch
def _reshape_batch(axis_size, args, dims, new_shape):
    # column-major: with the batch axis last each example is one contiguous block, kept apart
    (x,), (d,) = args, dims
    x = batch_last(x, d, axis_size)
    return reshape_p.bind(x, new_shape=tuple(new_shape) + (axis_size,)), len(new_shape)


@reshape_p.def_linear
def _reshape_transpose(ct, x, new_shape):
    return [reshape_p.bind(ct, new_shape=tuple(x.aval.shape))]


transpose_p = primitive("transpose", FAMILY)


@transpose_p.def_impl
def _transpose_impl(x, permutation):
    return wrap_fortran(np.transpose(x._data, permutation))


@transpose_p.def_abstract_eval
def _transpose_aval(a, permutation):
    return a.update(shape=tuple(a.shape[p] for p in permutation))


@transpose_p.def_batch
def _transpose_batch(axis_size, args, dims, permutation):
    (x,), (d,) = args, dims
    x = batch_last(x, d, axis_size)
    n = len(permutation)
    return transpose_p.bind(x, permutation=tuple(permutation) + (n,)), n


@transpose_p.def_linear
def _transpose_transpose(ct, x, permutation):
    inv = tuple(int(i) for i in np.argsort(permutation))
    return [transpose_p.bind(ct, permutation=inv)]


def _norm_axis(op: str, axis: Any, ndim: int) -> int:
    """``axis`` (an integer, see :func:`as_index`) in ``[0, ndim)``; AxisError otherwise."""
    axis = as_index(op, axis)
    if not -ndim <= axis < ndim:
        raise AxisError(f"{op}: axis {axis} is out of bounds for a tensor of rank {ndim}")
    return axis % ndim


def reshape(x: Any, shape: int | Sequence[int], order: str = "F") -> Any:
    """Reshape ``x`` to ``shape``. **Column-major (``order="F"``) by default**, unlike
    NumPy; pass ``order="C"`` for NumPy's row-major order. One extent may be -1."""
    x = as_operand("reshape", x)
    xs, _ = meta(x)
    shape = as_shape("reshape", shape)
    size = 1
    for s in xs:
        size *= s
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: at most one extent may be -1, got {fmt_shape(shape)}")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot infer -1 in {fmt_shape(shape)} for a tensor of shape {fmt_shape(xs)}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if any(s < 0 for s in shape):
        raise ShapeError(f"reshape: extents must be >= 0, got {fmt_shape(shape)}")
    new_size = 1
    for s in shape:
        new_size *= s
    if new_size != size:
        raise ShapeError(
            f"reshape: cannot reshape a tensor of shape {fmt_shape(xs)} (size {size}) into shape "
            f"{fmt_shape(shape)} (size {new_size})"
        )
    if order not in ("F", "C"):
        raise ShapeError(f"reshape: order must be 'F' (column-major, default) or 'C', got {order!r}")
    if tuple(xs) == shape:
        return x
    if order == "C":
        nd = len(xs)
        xt = transpose(x, tuple(range(nd - 1, -1, -1))) if nd > 1 else x
        r = reshape_p.bind(xt, new_shape=shape[::-1])
        return transpose(r, tuple(range(len(shape) - 1, -1, -1))) if len(shape) > 1 else r
    return reshape_p.bind(x, new_shape=shape)


@dispatchable
def transpose(x: Any, axes: Sequence[int] | None = None) -> Any:
    """Permute dimensions (reverse them when ``axes`` is None), like ``numpy.transpose``."""
    x = as_operand("transpose", x)
    nd = len(meta(x)[0])
    if axes is None:
        axes = tuple(range(nd - 1, -1, -1))
    axes = tuple(_norm_axis("transpose", a, nd) for a in as_indices("transpose", axes))
    if sorted(axes) != list(range(nd)):
        raise AxisError(f"transpose: axes {axes} are not a permutation of range({nd})")
    if axes == tuple(range(nd)):
        return x
    return transpose_p.bind(x, permutation=axes)


permute_dims = transpose


# ---------------------------------------------------------------------------
# squeeze / expand_dims: column-major reshapes that only drop or insert unit axes
# (no primitive of their own: dropping or adding extent-1 axes moves no data).
# ---------------------------------------------------------------------------
def squeeze(x: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Remove extent-1 axes (all of them when ``axis`` is None), like ``numpy.squeeze``."""
    x = as_operand("squeeze", x)
    xs = tuple(meta(x)[0])
    if axis is None:
        axes = tuple(i for i, n in enumerate(xs) if n == 1)
    else:
        axes = normalize_axes("squeeze", axis, len(xs))
        for a in axes:
            if xs[a] != 1:
                raise ShapeError(
                    f"squeeze: cannot remove axis {a} of extent {xs[a]} from a tensor of "
                    f"shape {fmt_shape(xs)}; expected extent 1"
                )
    if not axes:
        return x
    return reshape_p.bind(x, new_shape=tuple(n for i, n in enumerate(xs) if i not in axes))


def expand_dims(x: Any, axis: int | Sequence[int]) -> Any:
    """Insert extent-1 axes at the positions ``axis`` of the result, like ``numpy.expand_dims``."""
    x = as_operand("expand_dims", x)
    xs = list(meta(x)[0])
    nout = len(xs) + len(as_indices("expand_dims", axis))
    for a in normalize_axes("expand_dims", axis, nout):
        xs.insert(a, 1)
    return reshape_p.bind(x, new_shape=tuple(xs))
