"""Dynamic slices: ``dynamic_slice`` / ``dynamic_update_slice``, whose start indices are an
integer tensor; as ``jax.lax``'s (``allow_negative_indices=True``, its default) a negative start
counts from the end (``start + extent``), then every start is **clamped** into ``[0, extent -
size]`` as XLA's (never an error). Linear in the data operands; the integer starts carry no
tangent.
"""

from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from tidu import Zero, instantiate, is_undefined

from ._aval import TensorType, fortran, meta, placement_of_operand
from ._creation import arange, zeros
from ._dtypes import int64
from ._compare import greater_equal, less, select_p, where
from ._elementwise import add_p, sub_p
from ._piecewise import maximum, minimum
from ._errors import DTypeError, ShapeError, fmt_shape
from ._operands import as_operand, check_placement
from ._registry import check_shapes, primitive
from ._batching import batch_last
from ._shape import as_shape
from ._joins import concatenate_p, stack
from ._structural import broadcast_in_dim_p, convert_element_type, reshape_p, slice_p
from ._tensor import Tensor

from ._indexing import FAMILY, _aval, _linear_in_operand_jvp, _gather_batch, _pyslice, _refuse_lossy, _zeros


# ---------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice (start indices: 1-D integer tensor, clamped)
# ---------------------------------------------------------------------------
def _clamped_window(starts: Any, extents: tuple, sizes: tuple) -> tuple:
    """Slices of extents ``sizes`` with negative starts counted from the end, then clamped into
    ``[0, extent - size]`` (the shape rules guarantee ``0 <= size <= extent``, so the range is
    never empty)."""
    out = []
    for b, n, z in zip(starts.tolist(), extents, sizes):  # a device read for GPU starts
        b = min(max(b + n if b < 0 else b, 0), n - z)
        out.append(_pyslice(b, b + z))
    return tuple(out)


def _check_starts(op: str, a: TensorType, starts: TensorType) -> None:
    if starts.dtype.kind != "int" or starts.shape != (len(a.shape),):
        raise ShapeError(
            f"{op}: start indices must be a 1-D integer tensor with one entry per axis of {a}, got {starts}"
        )


dynamic_slice_p = primitive("dynamic_slice", FAMILY)


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(x, starts, sizes):
    a = x._data
    return Tensor._wrap(fortran(a[_clamped_window(starts._data, a.shape, sizes)]))


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_aval(a, starts, sizes):
    _check_starts("dynamic_slice", a, starts)
    if len(sizes) != len(a.shape) or any(not 0 <= z <= n for z, n in zip(sizes, a.shape)):
        raise ShapeError(
            f"dynamic_slice: slice sizes {fmt_shape(sizes)} do not fit operand {a}; "
            f"expected {len(a.shape)} sizes (one per axis) with 0 <= size <= extent"
        )
    return a.update(shape=tuple(sizes))


dynamic_slice_p.def_jvp(_linear_in_operand_jvp(dynamic_slice_p))


def _starts_with_batch(starts: Any, dims: Any) -> Any:
    """Shared start indices (``dims`` is None) with a 0 appended for the (last) batch axis."""
    assert dims is None
    zero = zeros((1,), meta(starts)[1], placement=placement_of_operand(starts))
    return concatenate_p.bind(starts, zero, dimension=0)


@dynamic_slice_p.def_batch
def _dynamic_slice_batch(axis_size, args, dims, sizes):
    (x, starts), (dx, ds) = args, dims
    if ds is None:
        x = batch_last(x, dx, axis_size)
        return dynamic_slice_p.bind(x, _starts_with_batch(starts, ds), sizes=tuple(sizes) + (axis_size,)), len(sizes)
    # per-example starts: one gather per axis with each example's window indices
    shape = tuple(meta(x)[0])
    if dx is not None:
        shape = shape[:dx] + shape[dx + 1 :]
    y, dy = x, dx
    for k, idx in enumerate(_window_indices(starts, ds, shape, sizes, axis_size)):
        y, dy = _gather_batch(axis_size, [y, idx], [dy, 1], axis=k)
    return y, dy


def _clamped_starts(starts: Any, ds: int, shape: tuple, sizes: tuple, axis_size: int) -> list:
    """Per axis, each example's start ``(batch,)``, counted from the end where negative and
    clamped into ``[0, extent - size]`` (as the primitives do)."""
    starts = batch_last(starts, ds, axis_size)  # (axes, batch)
    out = []
    for k, (n, z) in enumerate(zip(shape, sizes)):
        s_k = reshape_p.bind(slice_p.bind(starts, slices=((k, 1, 1), (0, 1, axis_size))), new_shape=(axis_size,))
        s_k = where(less(s_k, 0), s_k + n, s_k)
        out.append(maximum(minimum(s_k, n - z), 0))
    return out


def _offsets(s_k: Any, z: int, axis_size: int, sign: int) -> Any:
    """``0 .. z - 1`` plus ``sign *`` each example's start: ``(z, batch)``."""
    dtype, where = meta(s_k)[1], placement_of_operand(s_k)
    window = broadcast_in_dim_p.bind(
        arange(z, dtype=dtype, placement=where), shape=(z, axis_size), broadcast_dimensions=(0,)
    )
    s_k = broadcast_in_dim_p.bind(s_k, shape=(z, axis_size), broadcast_dimensions=(1,))
    return (add_p if sign > 0 else sub_p).bind(window, s_k)


def _window_indices(starts: Any, ds: int, shape: tuple, sizes: tuple, axis_size: int) -> list:
    """Per axis, each example's window indices ``(size, batch)``: its clamped start plus
    ``0 .. size - 1``."""
    s = _clamped_starts(starts, ds, shape, sizes, axis_size)
    return [_offsets(s_k, z, axis_size, 1) for s_k, z in zip(s, sizes)]


@dynamic_slice_p.def_transpose
def _dynamic_slice_transpose(ct, x, starts, sizes):
    return [dynamic_update_slice_p.bind(_zeros(x.aval), ct, starts), None]


dynamic_update_slice_p = primitive("dynamic_update_slice", FAMILY)


@dynamic_update_slice_p.def_impl
def _dus_impl(x, update, starts):
    out = x._data.copy(order="F")
    out[_clamped_window(starts._data, out.shape, update._data.shape)] = update._data
    return Tensor._wrap(out)


@dynamic_update_slice_p.def_abstract_eval
def _dus_aval(a, u, starts):
    _check_starts("dynamic_update_slice", a, starts)
    if u.dtype is not a.dtype or len(u.shape) != len(a.shape) or any(m > n for m, n in zip(u.shape, a.shape)):
        raise ShapeError(
            f"dynamic_update_slice: update {u} does not fit operand {a}; expected the same "
            "dtype and rank, and extents no larger than the operand's"
        )
    return a


@dynamic_update_slice_p.def_batch
def _dus_batch(axis_size, args, dims):
    (x, u, starts), (dx, du, ds) = args, dims
    x, u = batch_last(x, dx, axis_size), batch_last(u, du, axis_size)
    if ds is None:
        out = dynamic_update_slice_p.bind(x, u, _starts_with_batch(starts, ds))
        return out, len(meta(out)[0]) - 1
    # per-example starts: u spread over x's shape by one gather per axis (position j of axis k
    # reads u at j - start, clamped), selected where j lies in the window (no arithmetic on x)
    shape, sizes = tuple(meta(x)[0])[:-1], tuple(meta(u)[0])[:-1]
    nd = len(shape)
    if 0 in sizes:  # an empty update changes nothing
        return x, nd
    if not nd:  # a 0-d update replaces the whole 0-d operand
        return u, 0
    spread, mask, dsp = u, None, nd
    for k, s_k in enumerate(_clamped_starts(starts, ds, shape, sizes, axis_size)):
        rel = _offsets(s_k, shape[k], axis_size, -1)  # (extent, batch): j - start
        inside = where(greater_equal(rel, 0), less(rel, sizes[k]), False)
        spread, dsp = _gather_batch(axis_size, [spread, minimum(maximum(rel, 0), sizes[k] - 1)], [dsp, 1], axis=k)
        inside = broadcast_in_dim_p.bind(inside, shape=tuple(meta(x)[0]), broadcast_dimensions=(k, nd))
        mask = inside if mask is None else where(mask, inside, False)
    return select_p.bind(mask, batch_last(spread, dsp, axis_size), x), nd


@dynamic_update_slice_p.def_jvp
def _dus_jvp(primals, tangents):
    x, u, starts = primals
    out = dynamic_update_slice_p.bind(x, u, starts)
    tx, tu = tangents[:2]
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero.like(out)
    tx = instantiate(tx)
    tu = instantiate(tu)
    return out, dynamic_update_slice_p.bind(tx, tu, starts)


@dynamic_update_slice_p.def_transpose
def _dus_transpose(ct, x, u, starts):
    ua = _aval(u)
    ct_x = dynamic_update_slice_p.bind(ct, _zeros(ua), starts) if is_undefined(x) else None
    ct_u = dynamic_slice_p.bind(ct, starts, sizes=tuple(ua.shape)) if is_undefined(u) else None
    return [ct_x, ct_u, None]


def _starts_operand(op: str, start_indices: Any, nd: int) -> Any:
    if type(start_indices) is Tensor or hasattr(start_indices, "_trace"):
        s, d = meta(start_indices)
        if d.kind != "int" or tuple(s) != (nd,):
            raise ShapeError(
                f"{op}: start indices must be a 1-D integer tensor of length {nd}, "
                f"got shape {fmt_shape(s)} and dtype {d.name}"
            )
        return start_indices
    items = list(start_indices)
    if len(items) != nd:
        raise ShapeError(f"{op}: expected {nd} start indices (one per axis), got {len(items)}")
    if not any(hasattr(i, "_trace") for i in items):
        try:
            arr = np.array([operator.index(i) for i in items], dtype=np.int64)
        except (TypeError, ValueError):
            raise DTypeError(f"{op}: start indices must be integers, got {items!r}") from None
        return Tensor._wrap(arr)

    return stack([convert_element_type(as_operand(op, i), int64) for i in items])


def dynamic_slice(x: Any, start_indices: Any, sizes: Sequence[int]) -> Any:
    """The window of extents ``sizes`` starting at ``start_indices`` (ints, 0-d
    integer tensors, or a 1-D integer tensor). As in ``jax.lax.dynamic_slice``, a negative start
    counts from the end (``-1``: the last entry), and every start is then clamped into
    ``[0, extent - size]`` (XLA's rule), so the window always fits."""
    x = as_operand("dynamic_slice", x)
    nd = len(meta(x)[0])
    starts = _starts_operand("dynamic_slice", start_indices, nd)
    sizes = as_shape("dynamic_slice", sizes)
    check_shapes(dynamic_slice_p, x, starts, sizes=sizes)  # eager bind skips the shape rule
    return dynamic_slice_p.bind(x, starts, sizes=sizes)


def dynamic_update_slice(x: Any, update: Any, start_indices: Any) -> Any:
    """``x`` with the window at ``start_indices`` replaced by ``update`` (negative starts counted
    from the end, then clamped, as in :func:`dynamic_slice` and ``jax.lax``). Linear in
    ``(x, update)`` jointly."""
    x = as_operand("dynamic_update_slice", x)
    update = as_operand("dynamic_update_slice", update)
    check_placement("dynamic_update_slice", x, update)
    xs, xd = meta(x)
    ud = meta(update)[1]
    if ud is not xd:
        _refuse_lossy("dynamic_update_slice", ud, xd)
        update = convert_element_type(update, xd)
    starts = _starts_operand("dynamic_update_slice", start_indices, len(xs))
    check_shapes(dynamic_update_slice_p, x, update, starts)  # eager bind skips the shape rule
    return dynamic_update_slice_p.bind(x, update, starts)
