"""Smooth tensor shapes: extents plus an origin.

:class:`Shape` is a ``tuple`` subclass, so ``t.shape == (2, 3)``, ``m, n = t.shape``
and ``t.shape[0]`` behave as in NumPy; iterating a Shape yields its extents.
On top of that it carries an *origin* (the absolute index of its first element,
zeros by default) and supports the slice/chip vocabulary of the TensorWrapper
shape design:

* ``slice(begin, end)`` keeps the rank; ``chip`` drops the pinned modes;
* ``begin``/``end`` are absolute indices (first element in, first element out);
* the result's origin is ``begin``, so iterating it with ``indices()`` yields the
  parent's indices.

Equality follows tuple semantics: the origin does NOT take part in ``==`` or
``hash`` (``Shape(2, 3, origin=(5, 5)) == (2, 3)``). Use :meth:`Shape.same_as`
to compare origins too.
"""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ._errors import AxisError, ShapeError

__all__ = ["Shape", "as_extents"]


# --- integer arguments (axes, extents, offsets) -----------------------------------
def as_index(op: str, value: Any, what: str = "axis", error: type = AxisError) -> int:
    """``value`` as a Python int via ``operator.index`` (ints, NumPy integers, 0-d
    integer arrays). Floats (``1.7``, never truncated) and booleans raise ``error``
    (``AxisError`` for axes, ``ShapeError`` for extents) naming ``op`` and ``what``."""
    if type(value) is int:  # hot path
        return value
    if isinstance(value, bool) or type(value).__name__ == "bool":  # Python and NumPy booleans
        raise error(f"{op}: {what} must be an integer, got the boolean {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise error(f"{op}: {what} must be an integer, got {value!r} of type {type(value).__name__}") from None


def as_indices(op: str, values: Any, what: str = "axis", error: type = AxisError) -> tuple[int, ...]:
    """A tuple of ints from an integer or a sequence of integers (see :func:`as_index`)."""
    if type(values) is tuple and all(type(v) is int for v in values):  # hot path
        return values
    try:
        operator.index(values)
    except TypeError:
        pass
    else:
        return (as_index(op, values, what, error),)  # a single integer (booleans refused there)
    try:
        items = tuple(values)
    except TypeError:
        raise error(f"{op}: {what} must be an integer or a sequence of integers, got {values!r}") from None
    return tuple(as_index(op, v, what, error) for v in items)


def as_shape(op: str, shape: Any) -> tuple[int, ...]:
    """A shape (tuple of ints) from an integer or a sequence of integers. Extents are
    not range-checked here (-1 may mean "infer"); non-integers raise :class:`ShapeError`."""
    return as_indices(op, shape, "shape extent", ShapeError)


def as_extents(op: str, shape: int | Iterable[int]) -> tuple[int, ...]:
    """Normalise an int or a sequence of ints to a tuple of non-negative extents.

    Raises ShapeError naming ``op`` on a negative or non-integer extent.
    """
    if isinstance(shape, Shape):
        return tuple(shape)
    try:
        if isinstance(shape, (str, bytes)):
            raise ShapeError
        ext = as_shape(op, shape)
    except ShapeError:
        raise ShapeError(f"{op}: shape must be an int or a sequence of ints, got {shape!r}") from None
    for e in ext:
        if e < 0:
            raise ShapeError(f"{op}: negative extent {e} in shape {ext}; extents must be >= 0")
    return ext


class Shape(tuple):
    """A smooth shape: a tuple of extents with an origin.

    ``Shape(2, 3)``, ``Shape((2, 3))`` and ``Shape([2, 3], origin=(1, 0))`` all
    work; ``Shape()`` is the rank-0 (scalar) shape.

    >>> s = Shape(10, 20)
    >>> s.slice(0), s.chip(2), s.chip((0, 2), (10, 3))
    (Shape(1, 20), Shape(20), Shape(10))
    """

    # Tuple subclasses cannot have non-empty __slots__; the origin lives in the
    # instance __dict__ only when it is not all zeros (None means zeros).
    _origin: tuple[int, ...] | None = None

    def __new__(cls, *extents: Any, origin: Sequence[int] | None = None) -> Shape:
        if len(extents) == 1 and not isinstance(extents[0], int) and isinstance(extents[0], Iterable):
            ext = as_extents("Shape", extents[0])
        else:
            ext = as_extents("Shape", extents)
        self = tuple.__new__(cls, ext)
        if origin is not None:
            org = self._check_origin("Shape", origin)
            if any(org):
                self._origin = org
        return self

    @classmethod
    def _from_tuple(cls, extents: tuple[int, ...]) -> Shape:
        """Fast constructor for trusted extents (no checks, zero origin)."""
        return tuple.__new__(cls, extents)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild, (tuple(self), self._origin))

    def __repr__(self) -> str:
        body = ", ".join(str(e) for e in self)
        if self._origin is not None:
            return f"Shape({body}{', ' if body else ''}origin={self._origin})"
        return f"Shape({body})"

    # -- basic properties -------------------------------------------------
    @property
    def rank(self) -> int:
        """Number of modes."""
        return len(self)

    @property
    def size(self) -> int:
        """Number of elements (1 for rank 0)."""
        return math.prod(self)

    @property
    def extents(self) -> tuple[int, ...]:
        """The extents as a plain tuple."""
        return tuple(self)

    @property
    def origin(self) -> tuple[int, ...]:
        """Absolute index of the first element (zeros unless set)."""
        return self._origin if self._origin is not None else (0,) * len(self)

    def same_as(self, other: object) -> bool:
        """True when ``other`` is a Shape with equal extents AND equal origin."""
        return isinstance(other, Shape) and tuple(self) == tuple(other) and self.origin == other.origin

    def set_origin(self, origin: Sequence[int]) -> Shape:
        """A new Shape with the same extents and origin ``origin``."""
        org = self._check_origin("set_origin", origin)
        out = tuple.__new__(Shape, self)
        if any(org):
            out._origin = org
        return out

    def _check_origin(self, op: str, origin: Sequence[int]) -> tuple[int, ...]:
        try:
            org = tuple(operator.index(o) for o in origin)
        except TypeError as exc:
            raise ShapeError(f"{op}: origin must be a sequence of ints, got {origin!r}") from exc
        if len(org) != len(self):
            raise ShapeError(f"{op}: origin {org} has {len(org)} entries; expected rank {len(self)}")
        return org

    # -- sub-shapes -------------------------------------------------------
    def _bounds(
        self, op: str, begin: int | Sequence[int], end: int | Sequence[int] | None, more: tuple[int, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[bool, ...]]:
        """Absolute (begin, end, pinned) for slice/chip; validates against the shape."""
        org = self.origin
        if end is not None and not isinstance(begin, Iterable) and not isinstance(end, Iterable):
            begin, end = (begin, end, *more), None  # several pinned ints: chip(1, 2)
        elif more:
            raise ShapeError(
                f"{op}: expected (begin, end) sequences or up to {len(self)} ints, got {(begin, end, *more)!r}"
            )
        if end is None:
            pins = (
                (operator.index(begin),) if not isinstance(begin, Iterable) else tuple(operator.index(b) for b in begin)
            )
            if len(pins) > len(self):
                raise ShapeError(f"{op}: {len(pins)} pinned indices {pins} for a shape of rank {len(self)}")
            b = pins + org[len(pins) :]
            e = tuple(p + 1 for p in pins) + tuple(o + n for o, n in zip(org[len(pins) :], self[len(pins) :]))
        else:
            if not isinstance(begin, Iterable):
                raise ShapeError(f"{op}: begin must be a sequence of {len(self)} ints when end is given, got {begin!r}")
            b = tuple(operator.index(x) for x in begin)
            e = tuple(operator.index(x) for x in end)
            if len(b) != len(self) or len(e) != len(self):
                raise ShapeError(f"{op}: begin {b} and end {e} must both have rank {len(self)}")
        for i, (lo, hi, o, n) in enumerate(zip(b, e, org, self)):
            if not (o <= lo <= hi <= o + n):
                raise ShapeError(
                    f"{op}: bounds [{lo}, {hi}) of mode {i} are outside the shape's range "
                    f"[{o}, {o + n}); expected origin <= begin <= end <= origin + extent"
                )
        pinned = tuple(hi - lo == 1 for lo, hi in zip(b, e))
        return b, e, pinned

    def slice(self, begin: int | Sequence[int], end: int | Sequence[int] | None = None, *more: int) -> Shape:
        """The same-rank sub-shape ``[begin, end)`` (absolute indices); origin is ``begin``.

        Alternatively pass up to ``rank`` ints (``slice(3)``, ``slice(3, 4)``, or one
        sequence ``slice((3, 4))``) pinning the leading modes to one element each:
        ``Shape(10, 20).slice(0) == Shape(1, 20)``.
        """
        b, e, _ = self._bounds("slice", begin, end, more)
        out = tuple.__new__(Shape, tuple(hi - lo for lo, hi in zip(b, e)))
        if any(b):
            out._origin = b
        return out

    def chip(self, begin: int | Sequence[int], end: int | Sequence[int] | None = None, *more: int) -> Shape:
        """Like :meth:`slice` but drops every mode whose range holds exactly one element.

        ``Shape(10, 20).chip(2) == Shape(20)``; ``Shape(10, 20).chip((0, 2), (10, 3)) == Shape(10)``.
        """
        b, e, pinned = self._bounds("chip", begin, end, more)
        keep = [i for i, p in enumerate(pinned) if not p]
        out = tuple.__new__(Shape, tuple(e[i] - b[i] for i in keep))
        org = tuple(b[i] for i in keep)
        if any(org):
            out._origin = org
        return out

    # -- iteration over indices ---------------------------------------------
    def indices(self, absolute: bool = True) -> Iterator[tuple[int, ...]]:
        """Index tuples in lexicographic order (last mode fastest).

        ``absolute=True`` starts at the origin; ``absolute=False`` is :meth:`offsets`.
        A rank-0 shape yields ``()`` once; a size-0 shape yields nothing.
        """
        if not absolute:
            return self.offsets()
        org = self.origin
        return itertools.product(*(range(o, o + n) for o, n in zip(org, self)))

    def offsets(self) -> Iterator[tuple[int, ...]]:
        """Index tuples relative to the origin (starting at zeros), lexicographic order."""
        return itertools.product(*(range(n) for n in self))


def _rebuild(extents: tuple[int, ...], origin: tuple[int, ...] | None) -> Shape:
    return Shape(extents, origin=origin)


def normalize_axes(op: str, axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Sorted, non-negative, distinct axes (all axes when ``axis`` is None)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axes = (axis,)
    else:
        try:
            axes = tuple(axis)
        except TypeError:
            raise AxisError(f"{op}: axis must be an integer or a tuple of integers, got {axis!r}") from None
    out = []
    for a in axes:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise AxisError(f"{op}: axis must be an integer or a tuple of integers, got {axis!r}")
        a = int(a)
        if not -ndim <= a < ndim:
            raise AxisError(f"{op}: axis {a} is out of bounds for a tensor of rank {ndim}")
        a %= ndim
        if a in out:
            raise AxisError(f"{op}: repeated axis {a} in {axes}")
        out.append(a)
    return tuple(sorted(out))
