"""Indexing primitives: static strided slices, gather and scatter-add (dynamic slices:
:mod:`tenferro._dynamic_slice`).

* ``slice`` (static ``(start, step, count)`` per axis, any nonzero step) and its
  adjoint ``slice_embed`` (the operand placed at those positions of a zero tensor).
* ``dynamic_slice`` / ``dynamic_update_slice``: start indices are an integer
  tensor; like XLA they are **clamped** into ``[0, extent - size]`` (no
  wrap-around of negative starts, never an error).
* ``gather`` (``numpy.take`` along one axis) and ``scatter_add`` (its adjoint).

Integer index operands carry no tangent; the rules are linear in the data
operands. ``Tensor.__getitem__`` lives in :mod:`tenferro._getitem`.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

import tidu
from tidu import Zero, instantiate, is_undefined

from ._aval import TensorType, aval_of_operand, concrete, fortran, meta, placement_of_operand
from ._compare import less, where
from ._creation import arange, zeros
from ._elementwise import add_p, scalar_like
from ._dtypes import _KIND_ORDER
from ._errors import DTypeError, ShapeError, TenferroIndexError, fmt_shape
from ._operands import as_operand
from ._placement import import_cupyx
from ._registry import primitive
from ._batching import batch_last
from ._structural import _norm_axis, broadcast_in_dim_p, broadcast_to, convert_element_type, reshape_p, transpose_p
from ._tensor import Tensor

FAMILY = "indexing"
_pyslice = builtins.slice


def _zeros(aval: TensorType) -> Tensor:
    return zeros(aval.shape, aval.dtype, placement=aval.placement)


def _aval(x: Any) -> TensorType:
    """The aval (placement included) of an operand or of an ``UndefinedPrimal``."""
    return x.aval if is_undefined(x) else aval_of_operand(x)


def _linear_in_operand_jvp(prim):
    """JVP of ``prim(x, indices, **params)``, linear in ``x`` (integer ``indices``
    carry no tangent): apply ``prim`` to the tangent with the same indices."""

    def jvp(primals, tangents, **params):
        x, idx = primals
        out = prim.bind(x, idx, **params)
        tx = tangents[0]
        return out, (Zero.like(out) if type(tx) is Zero else prim.bind(tx, idx, **params))

    jvp.__name__ = f"{prim.name}_jvp"
    return jvp


def _refuse_lossy(op: str, update_dtype: Any, dtype: Any) -> None:
    """Updates are cast to the operand's dtype, but never to a lower kind (complex
    into real drops the imaginary part, float into int truncates)."""
    if _KIND_ORDER[update_dtype.kind] > _KIND_ORDER[dtype.kind]:
        raise DTypeError(
            f"{op}: cannot write {update_dtype.name} updates into a {dtype.name} tensor without loss "
            f"({'the imaginary part would be dropped' if update_dtype.is_complex else 'values would be truncated'}); "
            f"convert the tensor to {update_dtype.name} first, or cast the updates explicitly"
        )


# ---------------------------------------------------------------------------
# gather (take along one axis) and scatter_add
# ---------------------------------------------------------------------------
def _index_error(op: str, idx: np.ndarray, axis: int, n: int) -> TenferroIndexError:
    bad = idx[(idx < -n) | (idx >= n)]
    return TenferroIndexError(
        f"{op}: index {int(bad.flat[0]) if bad.size else '?'} is out of bounds for axis "
        f"{axis} with extent {n}; expected -{n} <= index < {n}"
    )


def _gathered_shape(a: TensorType, idx: tuple, axis: int) -> tuple:
    return tuple(a.shape[:axis]) + tuple(idx) + tuple(a.shape[axis + 1 :])


def _check_indices(op: str, idx: TensorType) -> None:
    if idx.dtype.kind != "int":
        raise DTypeError(f"{op}: indices must be an integer tensor, got {idx}")


gather_p = primitive("gather", FAMILY)


@gather_p.def_impl
def _gather_impl(x, indices, axis):
    a, idx = x._data, indices._data
    try:
        return Tensor._wrap(fortran(np.take(a, idx, axis=axis)))
    except IndexError:
        raise _index_error("take", idx, axis, a.shape[axis]) from None


@gather_p.def_abstract_eval
def _gather_aval(a, idx, axis):
    _check_indices("take", idx)
    return a.update(shape=_gathered_shape(a, idx.shape, axis))


gather_p.def_jvp(_linear_in_operand_jvp(gather_p))


def _merged_indices(op: str, x: Any, idx: Any, axis: int, axis_size: int) -> tuple[Any, Any]:
    """A batched gather/scatter with per-example indices as one over a merged axis: ``x``
    (batch last) with its batch axis moved next to ``axis`` and the two merged (column-major:
    ``axis`` fastest), and the indices (batch last) shifted to ``i + n * b``. The indices are
    bounds-checked first where their value is known (as the unbatched ``op`` checks them), and
    negative ones count from the end of their own example (``i + n`` before the shift)."""
    nd = len(meta(x)[0])
    order = [k for k in range(nd - 1)]
    order.insert(axis + 1, nd - 1)
    xt = transpose_p.bind(x, permutation=tuple(order))
    shape = tuple(meta(xt)[0])
    n = shape[axis]
    if (value := concrete(idx)) is not None:
        _check_bounds(op, value, axis, n)
    merged = reshape_p.bind(xt, new_shape=shape[:axis] + (n * axis_size,) + shape[axis + 2 :])
    idx = where(less(idx, 0), add_p.bind(idx, scalar_like(n, idx)), idx)
    ishape, idtype, where_at = tuple(meta(idx)[0]), meta(idx)[1], placement_of_operand(idx)
    offsets = arange(axis_size, dtype=idtype, placement=where_at) * n
    offsets = broadcast_in_dim_p.bind(offsets, shape=ishape, broadcast_dimensions=(len(ishape) - 1,))
    return merged, add_p.bind(idx, offsets)


@gather_p.def_batch
def _gather_batch(axis_size, args, dims, axis):
    (x, idx), (dx, di) = args, dims
    if di is None:  # shared indices: the batch axis of x rides along, last
        x = batch_last(x, dx, axis_size)
        out = gather_p.bind(x, idx, axis=axis)
        return out, len(meta(out)[0]) - 1
    idx = batch_last(idx, di, axis_size)
    k = len(meta(idx)[0]) - 1  # the batch axis of idx ends at axis + k of the result
    if dx is None:
        return gather_p.bind(x, idx, axis=axis), axis + k
    merged, flat_idx = _merged_indices("take", batch_last(x, dx, axis_size), idx, axis, axis_size)
    return gather_p.bind(merged, flat_idx, axis=axis), axis + k


@gather_p.def_transpose
def _gather_transpose(ct, x, idx, axis):
    return [scatter_add_p.bind(_zeros(x.aval), idx, ct, axis=axis), None]


scatter_add_p = primitive("scatter_add", FAMILY)


@scatter_add_p.def_impl
def _scatter_add_impl(x, indices, updates, axis):
    out = x._data.copy(order="F")
    idx = indices._data
    where = (_pyslice(None),) * axis + (idx,)
    try:
        if type(out) is np.ndarray:
            np.add.at(out, where, updates._data)
        elif out.dtype.kind == "c":  # CuPy's atomic adds are real: the two parts separately
            u = updates._data
            cupyx = import_cupyx("scatter_add")
            re, im = out.real.copy(), out.imag.copy()
            cupyx.scatter_add(re, where, u.real)
            cupyx.scatter_add(im, where, u.imag)
            out = fortran(re + 1j * im).astype(out.dtype, copy=False)
        else:  # CuPy: an atomic scatter-add kernel
            import_cupyx("scatter_add").scatter_add(out, where, updates._data)
    except IndexError:
        raise _index_error("scatter_add", idx, axis, out.shape[axis]) from None
    return Tensor._wrap(out)


@scatter_add_p.def_abstract_eval
def _scatter_add_aval(a, idx, u, axis):
    _check_indices("scatter_add", idx)
    expect = _gathered_shape(a, idx.shape, axis)
    if u.shape != expect or u.dtype is not a.dtype:
        raise ShapeError(
            f"scatter_add: updates {u} do not match operand {a} and indices of shape "
            f"{fmt_shape(idx.shape)} along axis {axis}; expected shape {fmt_shape(expect)} "
            f"and dtype {a.dtype.name}"
        )
    return a


@scatter_add_p.def_batch
def _scatter_add_batch(axis_size, args, dims, axis):
    (x, idx, u), (dx, di, du) = args, dims
    x = batch_last(x, dx, axis_size)
    if di is None:  # shared indices: every example's updates land alike
        out = scatter_add_p.bind(x, idx, batch_last(u, du, axis_size), axis=axis)
        return out, len(meta(out)[0]) - 1
    idx = batch_last(idx, di, axis_size)
    k = len(meta(idx)[0]) - 1
    merged, flat_idx = _merged_indices("scatter_add", x, idx, axis, axis_size)
    u = tidu.move_batch_axis(u, du, axis + k, axis_size)  # updates: x[:axis] + idx + rest, batch after idx
    out = scatter_add_p.bind(merged, flat_idx, u, axis=axis)
    shape = tuple(meta(x)[0])  # split the merged axis back into (axis, batch)
    n = shape[axis]
    out = reshape_p.bind(out, new_shape=shape[:axis] + (n, axis_size) + shape[axis + 1 : -1])
    return out, axis + 1


@scatter_add_p.def_jvp
def _scatter_add_jvp(primals, tangents, axis):
    x, idx, u = primals
    out = scatter_add_p.bind(x, idx, u, axis=axis)
    tx, tu = tangents[0], tangents[2]
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero.like(out)
    if type(tu) is Zero:
        return out, tx
    return out, scatter_add_p.bind(instantiate(tx), idx, tu, axis=axis)


@scatter_add_p.def_transpose
def _scatter_add_transpose(ct, x, idx, u, axis):
    return [ct if is_undefined(x) else None, None, gather_p.bind(ct, idx, axis=axis) if is_undefined(u) else None]


def _index_operand(op: str, indices: Any, x: Any, axis: int) -> Any:
    """``indices`` as an integer tensor on the placement of ``x`` (host indices
    are uploaded: they come from the host anyway). Indices headed for a GPU are
    bounds-checked here, where they enter (host indices on the host; a device
    index tensor costs one read of its min and max): CuPy's gather wraps
    out-of-range indices instead of raising, so the kernels below trust them."""
    where = placement_of_operand(x)
    if type(indices) is Tensor or hasattr(indices, "_trace"):
        _check_indices(op, aval_of_operand(indices))
        if type(indices) is Tensor and where.device is not None:
            _check_bounds(op, indices._data, axis, meta(x)[0][axis])
        return indices
    arr = np.asarray(indices)
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):
        raise DTypeError(f"{op}: indices must be integers, got an array of dtype {arr.dtype}")
    t = Tensor._wrap(fortran(arr.astype(np.int64, copy=False)))
    if where.device is None:
        return t
    _check_bounds(op, t._data, axis, meta(x)[0][axis])
    return t.to_gpu(where.device)


def _check_bounds(op: str, idx: Any, axis: int, n: int) -> None:
    if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
        host = idx if type(idx) is np.ndarray else idx.get()
        raise _index_error(op, host, axis, n)


def _axis_or_flat(op: str, x: Any, axis: int | None) -> tuple[Any, int]:
    xs = tuple(meta(x)[0])
    if axis is None:
        n = 1
        for s in xs:
            n *= s
        return (x if len(xs) == 1 else reshape_p.bind(x, new_shape=(n,))), 0
    return x, _norm_axis(op, axis, len(xs))


def take(x: Any, indices: Any, axis: int | None = None) -> Any:
    """Elements of ``x`` at integer ``indices`` along ``axis``, like ``numpy.take``
    (negative indices count from the end; out-of-range ones raise
    :class:`TenferroIndexError`). With ``axis=None``, ``x`` is first flattened in
    tenferro's **column-major** order (NumPy flattens row-major)."""
    x = as_operand("take", x)
    x, axis = _axis_or_flat("take", x, axis)
    return gather_p.bind(x, _index_operand("take", indices, x, axis), axis=axis)


gather = take


def scatter_add(x: Any, indices: Any, updates: Any, axis: int = 0) -> Any:
    """``x`` plus ``updates`` added at ``indices`` along ``axis`` (repeated indices
    accumulate, like ``numpy.add.at``). ``updates`` has the shape of
    ``take(x, indices, axis)``; it is broadcast and promoted to ``x``'s dtype.
    Linear in ``(x, updates)`` jointly."""
    x = as_operand("scatter_add", x)
    xs, xd = meta(x)
    axis = _norm_axis("scatter_add", axis, len(xs))
    idx = _index_operand("scatter_add", indices, x, axis)
    updates = as_operand("scatter_add", updates, xd, placement_of_operand(x))
    expect = tuple(xs[:axis]) + tuple(meta(idx)[0]) + tuple(xs[axis + 1 :])
    if tuple(meta(updates)[0]) != expect:
        try:
            updates = broadcast_to(updates, expect)
        except ShapeError:
            raise ShapeError(
                f"scatter_add: updates of shape {fmt_shape(meta(updates)[0])} cannot be broadcast to "
                f"{fmt_shape(expect)} (x {fmt_shape(xs)}, indices {fmt_shape(meta(idx)[0])}, "
                f"axis {axis})"
            ) from None
    if meta(updates)[1] is not xd:
        _refuse_lossy("scatter_add", meta(updates)[1], xd)
        updates = convert_element_type(updates, xd)
    return scatter_add_p.bind(x, idx, updates, axis=axis)
