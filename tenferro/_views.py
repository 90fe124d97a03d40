"""Metadata-only views: ``reshape_view``, ``transpose_view``, ``slice_view``.

A view shares the storage of its input and costs O(rank), independent of the
tensor's size. Before building a view, its layout (shape, signed element
strides, element offset) is checked against the base allocation with
:func:`_reachable_range`: every logical element must map inside
``[0, buffer_size)``. The array object itself is then built with NumPy/CuPy
basic indexing, ``transpose`` or a contiguous ``reshape``, none of which copy.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from tidu import Tracer

from ._errors import AxisError, ShapeError, TenferroIndexError, TenferroTypeError, TenferroValueError, fmt_shape
from ._tensor import Tensor, buffer_info
from ._creation import asarray

__all__ = ["reshape_view", "transpose_view", "slice_view"]


def _reachable_range(shape: Sequence[int], strides: Sequence[int], offset: int) -> tuple[int, int] | None:
    """Smallest and largest element offsets reached by a layout, or None if it has no element.

    Element ``(i_0, ..., i_{r-1})`` lives at ``offset + sum(i_k * strides[k])``;
    the extremes take ``i_k = extent_k - 1`` where the stride is positive (max)
    or negative (min), and ``i_k = 0`` elsewhere.
    """
    if any(n == 0 for n in shape):
        return None
    lo = offset + sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = offset + sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return lo, hi


def _check_reachable(op: str, shape: Sequence[int], strides: Sequence[int], offset: int, buffer_size: int) -> None:
    """Raise TenferroIndexError unless every element of the layout lies in the buffer."""
    rng = _reachable_range(shape, strides, offset)
    if rng is None:
        return
    lo, hi = rng
    if lo < 0 or hi >= buffer_size:
        raise TenferroIndexError(
            f"{op}: view of shape {fmt_shape(shape)} with strides {tuple(strides)} and offset {offset} reaches "
            f"element offsets [{lo}, {hi}], outside the buffer of {buffer_size} elements; "
            f"expected 0 <= min and max < {buffer_size}"
        )


def _contiguous_strides(shape: Sequence[int], order: str) -> tuple[int, ...]:
    """Element strides of a contiguous layout in ``order`` ('F' or 'C')."""
    strides = [0] * len(shape)
    acc = 1
    dims = range(len(shape)) if order == "F" else range(len(shape) - 1, -1, -1)
    for k in dims:
        strides[k] = acc
        acc *= max(shape[k], 1)
    return tuple(strides)


def _is_contiguous(shape: Sequence[int], strides: Sequence[int], order: str) -> bool:
    """Contiguous in ``order``; strides of extent-1 modes are irrelevant."""
    if any(n == 0 for n in shape):
        return True
    expect = _contiguous_strides(shape, order)
    return all(n == 1 or s == e for n, s, e in zip(shape, strides, expect))


def _as_tensor(op: str, x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Tracer):
        raise TenferroTypeError(
            f"{op}: a view shares the buffer of a concrete tensor (its strides and offset), and this value is "
            "traced (under grad, jvp, vmap or jit it has no buffer); use tf.transpose, tf.reshape or indexing, "
            "which are differentiable and as cheap where a view is possible"
        )

    return asarray(x)


def _wrap_checked(op: str, x: Tensor, array: Any, shape: Sequence[int], strides: Sequence[int], offset: int) -> Tensor:
    """Wrap ``array`` after the reachable-range proof of the predicted layout."""
    _, size = buffer_info(x._data)
    _check_reachable(op, shape, strides, offset, size)
    return Tensor._wrap(array)


def reshape_view(x: Tensor, shape: int | Sequence[int], order: str = "F") -> Tensor:
    """A view of ``x`` with a new shape; ``x`` must be contiguous in ``order``.

    ``order="F"`` (default) reads and writes elements column-major:
    ``reshape_view(arange(6), (2, 3))`` is ``[[0, 2, 4], [1, 3, 5]]``; ``order="C"``
    matches NumPy's default. One extent may be ``-1``.
    """
    t = _as_tensor("reshape_view", x)
    if order not in ("F", "C"):
        raise TenferroValueError(f"reshape_view: order must be 'F' or 'C', got {order!r}")
    try:
        req = (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(operator.index(e) for e in shape)
    except TypeError as exc:
        raise ShapeError(f"reshape_view: shape must be an int or a sequence of ints, got {shape!r}") from exc
    size = t.size
    if req.count(-1) > 1 or any(e < -1 for e in req):
        raise ShapeError(f"reshape_view: invalid shape {req}; extents must be >= 0 with at most one -1")
    if -1 in req:
        known = math.prod(e for e in req if e != -1)
        if known == 0 or size % known:
            raise ShapeError(
                f"reshape_view: cannot reshape tensor of shape {fmt_shape(t.shape)} (size {size}) into shape {req}"
            )
        req = tuple(size // known if e == -1 else e for e in req)
    if math.prod(req) != size:
        raise ShapeError(
            f"reshape_view: cannot reshape tensor of shape {fmt_shape(t.shape)} (size {size}) "
            f"into shape {fmt_shape(req)} (size {math.prod(req)})"
        )
    if not _is_contiguous(t.shape, t.strides, order):
        raise ShapeError(
            f"reshape_view: tensor of shape {fmt_shape(t.shape)} with strides {t.strides} is not "
            f"{'column' if order == 'F' else 'row'}-major contiguous, so a view cannot be made; "
            "call .contiguous() first, or use reshape (which may copy)"
        )
    offset = t.offset
    new_strides = _contiguous_strides(req, order)
    arr = t._data.reshape(req, order=order)
    return _wrap_checked("reshape_view", t, arr, req, new_strides, offset)


def transpose_view(x: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    """A view with permuted axes (reversed when ``axes`` is None); negative axes allowed."""
    t = _as_tensor("transpose_view", x)
    nd = t.ndim
    if axes is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        try:
            raw = tuple(operator.index(a) for a in axes)
        except TypeError as exc:
            raise AxisError(f"transpose_view: axes must be a sequence of ints, got {axes!r}") from exc
        perm = tuple(a + nd if a < 0 else a for a in raw)
        if len(perm) != nd or sorted(perm) != list(range(nd)):
            raise AxisError(
                f"transpose_view: axes {raw} is not a permutation of {tuple(range(nd))} for a tensor of rank {nd}"
            )
    strides = t.strides
    shape = t.shape
    arr = t._data.transpose(perm)
    return _wrap_checked(
        "transpose_view", t, arr, tuple(shape[p] for p in perm), tuple(strides[p] for p in perm), t.offset
    )


def slice_view(x: Tensor, specs: Any) -> Tensor:
    """A view selecting ``specs`` on the leading modes, as NumPy basic indexing.

    ``specs`` is a ``slice``, an int, or a tuple of them; ints drop their mode,
    slices may have any nonzero step (negative steps reverse). Modes not covered
    by ``specs`` are kept whole.
    """
    t = _as_tensor("slice_view", x)
    if not isinstance(specs, tuple):
        specs = (specs,)
    shape, strides = t.shape, t.strides
    if len(specs) > len(shape):
        raise TenferroIndexError(
            f"slice_view: {len(specs)} indices given for a tensor of rank {len(shape)}; expected at most {len(shape)}"
        )
    offset = t.offset
    new_shape: list[int] = []
    new_strides: list[int] = []
    for axis, (spec, n, s) in enumerate(zip(specs, shape, strides)):
        if isinstance(spec, slice):
            try:  # a float step fails in operator.index, a float bound in indices: both TypeError
                if spec.step is not None and operator.index(spec.step) == 0:
                    raise TenferroValueError("slice_view: step must be nonzero")
                start, stop, step = spec.indices(n)
            except TypeError as exc:
                raise TenferroIndexError(
                    f"slice_view: slice {spec!r} for axis {axis} has non-integer bounds or step; expected ints or None"
                ) from exc
            length = len(range(start, stop, step))
            if length:
                offset += start * s
            new_shape.append(length)
            new_strides.append(s * step)
        elif isinstance(spec, bool) or not hasattr(spec, "__index__"):
            raise TenferroIndexError(
                f"slice_view: index {spec!r} for axis {axis} is not supported; expected an int or a slice"
            )
        else:
            i = operator.index(spec)
            if not -n <= i < n:
                raise TenferroIndexError(
                    f"slice_view: index {i} is out of bounds for axis {axis} "
                    f"with extent {n}; expected -{n} <= index < {n}"
                )
            offset += (i + n if i < 0 else i) * s
    new_shape += shape[len(specs) :]
    new_strides += strides[len(specs) :]
    arr = t._data[specs + (Ellipsis,)]  # Ellipsis keeps 0-d results as array views
    return _wrap_checked("slice_view", t, arr, new_shape, new_strides, offset)
