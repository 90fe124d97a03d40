"""``Tensor.__getitem__``: NumPy indexing lowered to tenferro primitives.

Supported index entries: integers (negative allowed), slices with any nonzero
step (negative too), ``None`` (new axis), ``Ellipsis``, and advanced indices:
integer arrays (lists, NumPy arrays, integer Tensors) and concrete boolean masks.

* Basic indexing is one ``slice`` primitive (skipped when it selects everything)
  plus one column-major ``reshape`` that drops integer-indexed axes and inserts
  ``None`` axes: metadata work only on the AD graph.
* Advanced indexing follows NumPy: the advanced indices (integers count as
  advanced when an array is present) broadcast together; their result axes
  replace them in place when they are adjacent, and go first otherwise. A single
  array index becomes one ``gather``; several become one ``gather`` on the
  column-major merge of their axes. Several advanced indices must be concrete
  (not traced); boolean masks must be concrete.

Errors are :class:`TenferroIndexError` naming the axis, the index and the extent.
"""

from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ._aval import fortran, meta, placement_of_operand, xp_of
from ._errors import ShapeError, TenferroIndexError, TenferroTypeError, fmt_shape
from ._indexing import gather_p
from ._operands import as_operand
from ._shape import as_index
from ._structural import reshape_p, slice_p, transpose_p
from ._tensor import Tensor

_pyslice = builtins.slice
_INTS = (int, np.integer)


def _bounds(axis: int, i: int, n: int) -> int:
    if not -n <= i < n:
        raise TenferroIndexError(
            f"index {i} is out of bounds for axis {axis} with extent {n}; expected -{n} <= index < {n}"
        )
    return i % n if i < 0 else i


def _classify(item: Any) -> tuple[str, Any]:
    """('new'|'ellipsis'|'slice'|'int'|'array'|'mask', payload)."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ellipsis", None
    if type(item) is _pyslice:
        return "slice", item
    if isinstance(item, _INTS) and type(item) is not bool and not isinstance(item, np.bool_):
        return "int", int(item)
    if type(item) is Tensor:
        d = item.dtype
        if d.kind == "int":
            return ("int", int(item._data)) if item._data.ndim == 0 else ("array", item._data)
        if d.kind == "bool":
            return "mask", item._data
        raise TenferroIndexError(f"tensors used as indices must be integer or boolean, got {d.name}")
    if hasattr(item, "_trace"):
        if item.aval.dtype.kind != "int":
            raise TenferroIndexError(
                f"traced indices must be integer tensors, got {item.aval} (boolean masks "
                "must be concrete: their result shape depends on their values)"
            )
        return "traced", item
    if isinstance(item, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(item)
        except ValueError:  # NumPy refuses ragged nesting ("inhomogeneous shape")
            raise TenferroIndexError(
                f"ragged index {item!r}: its nested lists have different lengths; expected an "
                "integer array or boolean mask of one rectangular shape"
            ) from None
        if arr.dtype.kind in "iu":
            return "array", arr
        if arr.dtype.kind == "b":
            return "mask", arr
        if arr.size == 0:
            return "array", arr.astype(np.int64)
    raise TenferroIndexError(
        f"unsupported index {item!r} of type {type(item).__name__}; expected an integer, a slice, None, "
        "Ellipsis, an integer array/list/Tensor or a boolean mask"
    )


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` with NumPy semantics (see the module docstring)."""
    shape = meta(x)[0]
    nd = len(shape)
    items = index if type(index) is tuple else (index,)
    entries = []  # (kind, payload, axis or None)
    ell = None
    for it in items:
        kind, val = _classify(it)
        if kind == "ellipsis":
            if ell is not None:
                raise TenferroIndexError("an index can only have a single ellipsis ('...')")
            ell = len(entries)
        elif kind == "mask":
            if val.ndim == 0:
                raise TenferroIndexError("0-d boolean indices are not supported; expected a boolean mask of rank >= 1")
            for k, ax_idx in enumerate(np.nonzero(val)):
                entries.append(("array", ax_idx, ("mask", val.shape, k)))
        else:
            entries.append((kind, val, None))
    used = sum(1 for k, _, _ in entries if k != "new")
    if used > nd:
        raise TenferroIndexError(
            f"too many indices for a tensor of shape {fmt_shape(shape)}: {used} axes "
            f"indexed, but the tensor has rank {nd}"
        )
    fill = [("slice", _pyslice(None), None)] * (nd - used)
    entries = entries[:ell] + fill + entries[ell:] if ell is not None else entries + fill
    advanced = any(k in ("array", "traced") for k, _, _ in entries)

    window, mid, adv = [], [], []  # slice spec; shape after slice+reshape; (mid position, axis, index)
    axis = 0
    for kind, val, mask in entries:
        if kind == "new":
            mid.append(1)
            continue
        n = shape[axis]
        if kind == "slice":
            try:
                start, stop, step = val.indices(n)
            except ValueError:
                raise TenferroIndexError(f"slice step cannot be zero (axis {axis})") from None
            except TypeError:
                raise TenferroIndexError(
                    f"slice {val!r} for axis {axis}: start, stop and step must be integers or None"
                ) from None
            count = len(range(start, stop, step))
            window.append((start, step, count))
            mid.append(count)
        elif kind == "int":
            window.append((_bounds(axis, val, n), 1, 1))
            if advanced:
                adv.append((len(mid), axis, np.zeros((), np.int64)))
                mid.append(1)
        else:
            if mask is not None and mask[1][mask[2]] != n:
                raise TenferroIndexError(
                    f"boolean index of shape {fmt_shape(mask[1])} does not match the indexed "
                    f"axes of shape {fmt_shape(shape)} at axis {axis - mask[2]}"
                )
            window.append((0, 1, n))
            adv.append((len(mid), axis, val))
            mid.append(n)
        axis += 1

    y = x
    if any(s != 0 or st != 1 or c != n for (s, st, c), n in zip(window, shape)):
        y = slice_p.bind(y, slices=tuple(window))
    if not advanced:
        return y if tuple(mid) == tuple(shape) else reshape_p.bind(y, new_shape=tuple(mid))
    if tuple(mid) != tuple(meta(y)[0]):
        y = reshape_p.bind(y, new_shape=tuple(mid))
    # an ellipsis between two advanced indices separates them even where it stands for no axis
    # (NumPy: x[:, [0, 2], ..., 1] puts the index axes first)
    pointed = ("int", "array", "traced")
    split = (
        ell is not None
        and any(k in pointed for k, _, _ in entries[:ell])
        and any(k in pointed for k, _, _ in entries[ell + len(fill) :])
    )
    return _advanced(y, mid, adv, split)


def _advanced(y: Any, mid: list, adv: list, split: bool = False) -> Any:
    """Apply the advanced indices ``adv`` [(position in y, source axis, index)] to ``y``
    (``split``: an ellipsis stood between two of them, so they are not adjacent)."""
    where = placement_of_operand(y)
    if len(adv) == 1:
        pos, axis, idx = adv[0]
        if not hasattr(idx, "_trace"):
            idx = _checked(axis, idx, mid[pos], where)
        return gather_p.bind(y, idx, axis=pos)
    if any(hasattr(i, "_trace") for _, _, i in adv):
        raise TenferroIndexError(
            "indexing with several advanced indices requires concrete (non-traced) index "
            "arrays; a single traced integer index is supported"
        )
    idxs = [_checked(axis, idx, mid[pos], where)._data for pos, axis, idx in adv]
    xp = xp_of(idxs[0])
    try:
        idxs = xp.broadcast_arrays(*idxs)
    except ValueError:
        raise TenferroIndexError(
            "shape mismatch: advanced index arrays could not be broadcast together "
            "with shapes " + ", ".join(fmt_shape(i.shape) for i in idxs)
        ) from None
    positions = [p for p, _, _ in adv]
    k = len(positions)
    if not split and positions == list(range(positions[0], positions[0] + k)):
        p = positions[0]
    else:  # non-adjacent: NumPy puts the broadcast index axes first
        rest = [i for i in range(len(mid)) if i not in positions]
        y = transpose_p.bind(y, permutation=tuple(positions + rest))
        mid = [mid[i] for i in positions] + [mid[i] for i in rest]
        p = 0
    lin = xp.zeros(idxs[0].shape, np.int64)
    stride = 1
    for j, idx in enumerate(idxs):
        lin = lin + idx * stride
        stride *= mid[p + j]
    merged = tuple(mid[:p]) + (stride,) + tuple(mid[p + k :])
    y = reshape_p.bind(y, new_shape=merged)
    return gather_p.bind(y, Tensor._wrap(fortran(lin)), axis=p)


def _checked(axis: int, idx: Any, n: int, where: Any) -> Tensor:
    """Integer index array for an axis of extent ``n``: bounds checked, negatives
    wrapped, on the placement ``where`` of the indexed tensor (host indices are
    checked on the host, then uploaded; a device index array costs one read of
    its min and max for the bounds check)."""
    xp = xp_of(idx)
    idx = idx.astype(np.int64, copy=False)
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < -n or hi >= n:
            _bounds(axis, lo if lo < -n else hi, n)
        if lo < 0:
            idx = xp.where(idx < 0, idx + n, idx)
    t = Tensor._wrap(fortran(idx))
    return t if t.placement == where else t.to_gpu(where.device)


def iterate(x: Any) -> Any:
    """``iter(x)``: the sub-tensors ``x[0], x[1], ...`` along the first axis."""
    shape = meta(x)[0]
    if not shape:
        raise TenferroTypeError("iter: a 0-d tensor cannot be iterated; expected a tensor of rank >= 1")
    return (getitem(x, i) for i in range(shape[0]))


def slice(
    x: Any,
    start_indices: Sequence[int | None],
    limit_indices: Sequence[int | None],  # noqa: A001
    strides: Sequence[int | None] | None = None,
) -> Any:
    """``x[start_0:limit_0:stride_0, ...]`` with Python slice semantics per axis
    (``None`` entries, negative values and negative strides allowed)."""
    x = as_operand("slice", x)
    nd = len(meta(x)[0])
    strides = [None] * nd if strides is None else list(strides)
    if not len(start_indices) == len(limit_indices) == len(strides) == nd:
        raise ShapeError(
            f"slice: expected {nd} start, limit and stride entries for a tensor of rank {nd}, got "
            f"{len(start_indices)}, {len(limit_indices)} and {len(strides)}"
        )

    def entry(v: Any, what: str) -> int | None:
        return None if v is None else as_index("slice", v, what, ShapeError)

    return getitem(
        x,
        tuple(
            _pyslice(entry(a, "start index"), entry(b, "limit index"), entry(c, "stride"))
            for a, b, c in zip(start_indices, limit_indices, strides)
        ),
    )
