"""Jagged, tiled and nested shapes (seed 001, TensorWrapper's shape design), on top of
tenferro's smooth :class:`tenferro.Shape`.

* :class:`JaggedShape` -- slices along the outer mode may have different shapes
  (``JaggedShape([Shape(10), Shape(20), Shape(30)])`` is a rank-2 jagged matrix);
  recursive (elements may be jagged themselves); ``JaggedShape(Shape(10, 20))`` is a
  smooth shape viewed as jagged.
* :class:`TiledShape` -- a smooth shape cut into tiles, one list of tile extents per
  mode: ``TiledShape([5, 15, 10], [5, 15, 10])`` is the seed's 30x30 example.
* :class:`Nested` -- a shape whose modes are partitioned into layers, left to right.
* ``combine`` (in ``_combine.py``) -- the shape of an index expression.

``rank`` and ``size`` are properties, as on :class:`tenferro.Shape`, so code works on
every shape kind. Equality ignores origins (as tenferro's Shape does). Extents, origins
and indices must be integers (Python or NumPy; ``1.5``, ``True`` and ``"2"`` raise
:class:`StructuredTypeError`, never truncated); negative extents raise
:class:`StructuredShapeError` and indices out of range :class:`StructuredIndexError`.

>>> TiledShape([5, 15, 10], [5, 15, 10]).size
900
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any, Union

from tenferro import Shape

from ._checks import as_extent, as_flag, as_int, as_int_or_ints, as_position
from ._errors import StructuredIndexError, StructuredShapeError, StructuredTypeError

__all__ = ["Shape", "JaggedShape", "TiledShape", "Nested", "AnyShape", "eq_any"]


class JaggedShape:
    """A shape whose slices along the outer mode may differ.

    ``JaggedShape()`` is the null shape (no rank, no elements); ``JaggedShape(Shape(...))``
    a smooth shape; ``JaggedShape([e0, e1, ...])`` a jagged one whose elements ``e_i``
    (Shapes, JaggedShapes or nested lists) all have the same rank. ``origin`` is the
    absolute index of the first outer element.

    >>> js = JaggedShape([Shape(20, 30), Shape(10, 20)])
    >>> js.rank, js.size
    (3, 800)
    """

    __slots__ = ("_smooth", "_elems", "_origin")

    def __init__(self, elements: Any = None, origin: int = 0) -> None:
        self._origin = as_int("JaggedShape", "origin", origin)
        self._smooth: Shape | None = None
        self._elems: tuple[Any, ...] | None = None
        if elements is None:
            return
        if isinstance(elements, Shape):
            self._smooth = elements
            return
        if isinstance(elements, (str, bytes)) or not isinstance(elements, Sequence):
            raise StructuredTypeError(f"JaggedShape: expected a Shape or a sequence of shapes, got {elements!r}")
        elems = tuple(_as_element(e) for e in elements)
        ranks = {e.rank for e in elems}
        if len(ranks) > 1:
            raise StructuredShapeError(
                f"JaggedShape: elements must all have the same rank, got ranks "
                f"{[e.rank for e in elems]} for {list(elems)}"
            )
        self._elems = elems

    # -- basic properties ------------------------------------------------------
    @property
    def is_null(self) -> bool:
        """No rank and no elements (``JaggedShape()``)."""
        return self._smooth is None and self._elems is None

    @property
    def rank(self) -> int:
        """Total number of modes."""
        if self._smooth is not None:
            return self._smooth.rank
        if self._elems is None:
            return 0
        return 1 + (self._elems[0].rank if self._elems else 0)

    @property
    def size(self) -> int:
        """Total number of scalar elements."""
        if self._smooth is not None:
            return self._smooth.size
        return sum(e.size for e in self._elems or ())

    @property
    def extent(self) -> int:
        """Extent of the outer mode."""
        if self._smooth is not None:
            return self._smooth[0] if self._smooth.rank else 1
        return len(self._elems or ())

    @property
    def origin(self) -> int:
        """Absolute index of the first outer element."""
        return self._origin

    @property
    def elements(self) -> tuple[Any, ...]:
        """The slice shapes along the outer mode (Shapes or JaggedShapes)."""
        if self._smooth is not None:
            if not self._smooth.rank:
                return ()
            o = self._smooth.origin[0]  # Shape.chip takes absolute indices
            return tuple(self._smooth.chip(o + i) for i in range(self.extent))
        return self._elems or ()

    def to_shape(self) -> Shape | None:
        """The equivalent smooth :class:`Shape`, or None when the shape is truly jagged."""
        if self._smooth is not None:
            return self._smooth
        if self._elems is None:
            return None
        if not self._elems:
            return Shape(0)
        inner = [e if isinstance(e, Shape) else e.to_shape() for e in self._elems]
        if any(s is None for s in inner) or len({tuple(s) for s in inner}) != 1:
            return None
        return Shape((len(inner), *inner[0]))

    # -- sub-shapes ----------------------------------------------------------------
    def chip(self, i: int) -> Any:
        """The shape of outer slice ``i`` (absolute index), one rank lower."""
        k = as_int("JaggedShape.chip", "index", i) - self._origin
        self._need_outer_mode("chip")
        if not 0 <= k < self.extent:
            raise StructuredIndexError(
                f"JaggedShape.chip: index {i} outside [{self._origin}, {self._origin + self.extent}) of {self!r}"
            )
        return self.elements[k]

    __getitem__ = chip

    def slice(self, begin: int, end: int | None = None) -> JaggedShape:
        """Outer slices ``[begin, end)`` (absolute), same rank; the origin becomes ``begin``."""
        begin = as_int("JaggedShape.slice", "begin", begin)
        end = begin + 1 if end is None else as_int("JaggedShape.slice", "end", end)
        lo, hi = begin - self._origin, end - self._origin
        self._need_outer_mode("slice")
        if not 0 <= lo <= hi <= self.extent:
            raise StructuredIndexError(
                f"JaggedShape.slice: [{begin}, {end}) outside [{self._origin}, "
                f"{self._origin + self.extent}) of {self!r}"
            )
        return JaggedShape(list(self.elements[lo:hi]), origin=begin)

    def _need_outer_mode(self, op: str) -> None:
        if self.rank == 0:
            raise StructuredIndexError(f"JaggedShape.{op}: {self!r} has rank 0: no outer mode to index")

    def set_origin(self, origin: int) -> JaggedShape:
        """The same shape with outer origin ``origin``."""
        out = JaggedShape(origin=origin)
        out._smooth, out._elems = self._smooth, self._elems
        return out

    # -- iteration -----------------------------------------------------------------
    def indices(self, absolute: bool = True) -> Iterator[tuple[int, ...]]:
        """Index tuples in lexicographic order; ``absolute`` adds the origins."""
        return self._indices(as_flag("JaggedShape.indices", "absolute", absolute))

    def _indices(self, absolute: bool) -> Iterator[tuple[int, ...]]:
        base = self._origin if absolute else 0
        if self._smooth is not None:
            for idx in self._smooth.indices(absolute):
                yield ((idx[0] + base,) + idx[1:]) if idx else idx
            return
        for k, e in enumerate(self._elems or ()):
            for inner in e.indices(absolute):
                yield (base + k, *inner)

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return self.indices()

    # -- equality and printing -------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, TiledShape):
            return self == other.as_jagged()
        if isinstance(other, tuple) and not isinstance(other, Shape):
            other = Shape(other)
        if isinstance(other, Shape):
            mine = self.to_shape()
            return mine is not None and tuple(mine) == tuple(other)
        if not isinstance(other, JaggedShape):
            return NotImplemented
        if self.is_null or other.is_null:
            return self.is_null and other.is_null
        if self._smooth is not None or other._smooth is not None:
            a, b = self.to_shape(), other.to_shape()
            if a is not None or b is not None:
                return a is not None and b is not None and tuple(a) == tuple(b)
        return self.extent == other.extent and all(_eq(x, y) for x, y in zip(self.elements, other.elements))

    def __hash__(self) -> int:
        s = self.to_shape()
        return hash(tuple(s)) if s is not None else hash((self.rank, self.size, self.extent))

    def __repr__(self) -> str:
        if self.is_null:
            return "JaggedShape()"
        org = f", origin={self._origin}" if self._origin else ""
        if self._smooth is not None:
            return f"JaggedShape({self._smooth!r}{org})"
        return f"JaggedShape([{', '.join(repr(e) for e in self._elems)}]{org})"


def _as_element(e: Any) -> Any:
    if isinstance(e, (Shape, JaggedShape)):
        return e
    if isinstance(e, TiledShape):
        return e.shape
    if isinstance(e, Sequence) and not isinstance(e, (str, bytes)):
        return JaggedShape(list(e))
    raise StructuredTypeError(
        f"JaggedShape: element {e!r} is not a Shape, a JaggedShape or a list of them "
        "(a smooth element of extents (2, 3) is Shape(2, 3))"
    )


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, Shape) and isinstance(b, Shape):
        return tuple(a) == tuple(b)
    return (a if isinstance(a, JaggedShape) else JaggedShape(a)) == b


def _prefix_count(s: Any, k: int) -> int:
    if k <= 0:
        return 1
    if isinstance(s, Shape):
        return math.prod(s[:k])
    if s._smooth is not None:
        return math.prod(s._smooth[:k])
    return sum(_prefix_count(e, k - 1) for e in s.elements)


class TiledShape:
    """A smooth shape cut into tiles: one sequence of tile extents per mode.

    ``TiledShape([5, 15, 10], [5, 15, 10])`` is a 30x30 shape with 3x3 tiles. It is
    the convenient constructor of the JaggedShape of its tiles (:meth:`as_jagged`,
    rank ``2 * rank``: tile indices first, then the tile's modes); its own ``rank``,
    ``size`` and :attr:`shape` are those of the logical smooth shape.

    >>> t = TiledShape([5, 15, 10], [5, 15, 10])
    >>> t.shape, t.tile_shape(1, 2)
    (Shape(30, 30), Shape(15, 10, origin=(5, 20)))
    """

    __slots__ = ("_tilings",)

    def __init__(self, *tilings: Sequence[int]) -> None:
        tl = []
        for m, t in enumerate(tilings):
            if isinstance(t, (str, bytes)) or not isinstance(t, Sequence):
                raise StructuredTypeError(
                    f"TiledShape: the tiling of mode {m} must be a sequence of ints (tile extents), got {t!r}"
                )
            tl.append(tuple(as_extent("TiledShape", f"tile extent {j} of mode {m}", x) for j, x in enumerate(t)))
        self._tilings = tuple(tl)

    @property
    def tilings(self) -> tuple[tuple[int, ...], ...]:
        """Tile extents per mode."""
        return self._tilings

    @property
    def shape(self) -> Shape:
        """The logical smooth shape."""
        return Shape(tuple(sum(t) for t in self._tilings))

    @property
    def rank(self) -> int:
        return len(self._tilings)

    @property
    def size(self) -> int:
        return self.shape.size

    @property
    def n_tiles(self) -> tuple[int, ...]:
        """Number of tiles per mode."""
        return tuple(len(t) for t in self._tilings)

    def offsets(self, mode: int) -> tuple[int, ...]:
        """Start index of each tile of ``mode`` (plus the end)."""
        mode = as_position("TiledShape.offsets", "mode", mode, self.rank)
        return (0, *itertools.accumulate(self._tilings[mode]))

    def tile_shape(self, *tile: int) -> Shape:
        """The shape of tile ``tile`` (one tile index per mode), its origin at the tile's start."""
        tile = tuple(as_int("TiledShape.tile_shape", "tile index", t) for t in tile)
        if len(tile) != self.rank or not all(0 <= t < n for t, n in zip(tile, self.n_tiles)):
            raise StructuredIndexError(f"TiledShape.tile_shape: tile {tile} outside the grid {self.n_tiles}")
        return Shape(
            tuple(self._tilings[m][t] for m, t in enumerate(tile)),
            origin=tuple(self.offsets(m)[t] for m, t in enumerate(tile)),
        )

    def tiles(self) -> Iterator[tuple[int, ...]]:
        """Tile indices in lexicographic order."""
        return itertools.product(*(range(n) for n in self.n_tiles))

    def as_jagged(self) -> JaggedShape:
        """The same shape spelled as a JaggedShape of the tiles (nested lists of per-tile Shapes)."""

        def build(prefix: tuple[int, ...]) -> Any:
            if len(prefix) == self.rank:
                return Shape(tuple(self._tilings[m][t] for m, t in enumerate(prefix)))
            return [build(prefix + (t,)) for t in range(self.n_tiles[len(prefix)])]

        return JaggedShape(build(()) if self.rank else Shape())

    def indices(self, absolute: bool = True) -> Iterator[tuple[int, ...]]:
        """Element indices of the logical shape."""
        return self.shape.indices(as_flag("TiledShape.indices", "absolute", absolute))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TiledShape):
            return self._tilings == other._tilings
        if isinstance(other, JaggedShape):
            return other == self.as_jagged()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.as_jagged())  # equal to its JaggedShape, so hashed like it

    def __repr__(self) -> str:
        return f"TiledShape({', '.join(str(list(t)) for t in self._tilings)})"


AnyShape = Union[Shape, JaggedShape, TiledShape, "Nested"]


class Nested:
    """A shape whose modes are partitioned into layers (left to right).

    >>> s = Nested([1, 2], Shape(10, 20, 30))
    >>> s.n_layers, s.rank_layer(1), s.elements_in_layer(0), s.elements_in_layer(1)
    (2, 2, 10, 6000)
    """

    __slots__ = ("_layers", "_shape")

    def __init__(self, layers: Sequence[int], shape: Any) -> None:
        if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence):
            raise StructuredTypeError(f"Nested: layers must be a sequence of ints (modes per layer), got {layers!r}")
        lay = tuple(as_extent("Nested", f"layer rank {k}", x) for k, x in enumerate(layers))
        if isinstance(shape, tuple) and not isinstance(shape, Shape):
            shape = Shape(shape)
        if not isinstance(shape, (Shape, JaggedShape, TiledShape)):
            raise StructuredTypeError(f"Nested: shape must be a Shape, JaggedShape or TiledShape, got {shape!r}")
        if sum(lay) != shape.rank:
            raise StructuredShapeError(
                f"Nested: layer ranks {list(lay)} must be >= 0 and sum to the rank {shape.rank} of {shape!r}"
            )
        self._layers, self._shape = lay, shape

    @property
    def layers(self) -> tuple[int, ...]:
        return self._layers

    @property
    def shape(self) -> Any:
        """The underlying (un-nested) shape."""
        return self._shape

    @property
    def n_layers(self) -> int:
        return len(self._layers)

    @property
    def rank(self) -> int:
        return self._shape.rank

    @property
    def size(self) -> int:
        return self._shape.size

    def rank_layer(self, layer: int) -> int:
        """Number of modes in ``layer``."""
        return self._layers[as_position("Nested.rank_layer", "layer", layer, self.n_layers)]

    def elements_in_layer(self, layer: int) -> int:
        """Number of elements when the tensor is viewed down to ``layer`` (index tuples over
        the modes of layers ``0..layer``)."""
        layer = as_position("Nested.elements_in_layer", "layer", layer, self.n_layers)
        k = sum(self._layers[: layer + 1])
        s = self._shape.shape if isinstance(self._shape, TiledShape) else self._shape
        return _prefix_count(s, k)

    def layer_of(self, mode: int) -> int:
        """The layer that mode ``mode`` belongs to."""
        mode = as_position("Nested.layer_of", "mode", mode, self.rank)
        acc = 0
        for lay, r in enumerate(self._layers):
            acc += r
            if mode < acc:
                return lay
        raise AssertionError("unreachable: the layer ranks sum to the rank")  # pragma: no cover

    def chip(self, *index: int) -> Nested:
        """Pin the leading modes to ``index``; pinned modes leave their layers, and layers
        left empty disappear."""
        s = self._shape.shape if isinstance(self._shape, TiledShape) else self._shape
        index = tuple(as_int("Nested.chip", "index", i) for i in index)
        if len(index) > self.rank:
            raise StructuredIndexError(f"Nested.chip: {len(index)} indices for a shape of rank {self.rank}")
        for m, i in enumerate(index):
            if isinstance(s, Shape):  # a JaggedShape checks its own index (StructuredIndexError)
                _check_bounds("Nested.chip", s, (i,), (i + 1,), self, m)
            s = s.chip(i)
        left, lay = len(index), []
        for r in self._layers:
            take = min(left, r)
            left -= take
            if r - take:
                lay.append(r - take)
        return Nested(lay, s)

    def slice(self, begin: Any, end: Any = None) -> Nested:
        """Slice the underlying shape; the layering is unchanged."""
        if begin is None:
            raise StructuredTypeError("Nested.slice: begin must be an integer or a sequence of integers, got None")
        begin, end = as_int_or_ints("Nested.slice", "begin", begin), as_int_or_ints("Nested.slice", "end", end)
        s = self._shape.shape if isinstance(self._shape, TiledShape) else self._shape
        if isinstance(s, Shape):  # a JaggedShape checks its own bounds (StructuredIndexError)
            _check_slice("Nested.slice", s, begin, end, self)
        return Nested(self._layers, s.slice(begin, end))

    def indices(self, absolute: bool = True) -> Iterator[tuple[int, ...]]:
        return self._shape.indices(as_flag("Nested.indices", "absolute", absolute))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Nested):
            return self._layers == other._layers and eq_any(self._shape, other._shape)
        if isinstance(other, (Shape, JaggedShape, TiledShape, tuple)):
            return self.n_layers <= 1 and eq_any(self._shape, other)
        return NotImplemented

    def __hash__(self) -> int:
        if self.n_layers <= 1:  # equal to its one shape, so hashed like it
            return hash(self._shape)
        return hash((self._layers, self.rank, self.size))

    def __repr__(self) -> str:
        return f"Nested({list(self._layers)}, {self._shape!r})"


def _check_slice(op: str, s: Shape, begin: Any, end: Any, whole: Any) -> None:
    """``Shape.slice(begin, end)``'s arguments checked with the structured error family
    (tenferro's own check raises its ``ShapeError`` for all of them): an index or bounds
    outside the shape (origin included) is a :class:`StructuredIndexError`, begin and end of
    the wrong kind or rank a :class:`StructuredTypeError` or :class:`StructuredShapeError`.
    ``Shape.slice`` reads ints (``slice(3)``, ``slice(3, 4)``, ``slice((3, 4))``) as indices
    pinning the leading modes, and two sequences as ``[begin, end)`` per mode."""
    seq_b, seq_e = isinstance(begin, tuple), isinstance(end, tuple)
    if end is None or not (seq_b or seq_e):
        pins = begin if seq_b else ((begin,) if end is None else (begin, end))
        if len(pins) > s.rank:
            raise StructuredIndexError(f"{op}: {len(pins)} pinned indices {pins} for {whole!r} of rank {s.rank}")
        _check_bounds(op, s, pins, tuple(p + 1 for p in pins), whole)
        return
    if not (seq_b and seq_e):
        raise StructuredTypeError(
            f"{op}: begin and end must both be integers (pinned indices) or both sequences "
            f"of {s.rank} integers (bounds per mode), got {begin!r} and {end!r}"
        )
    if len(begin) != s.rank or len(end) != s.rank:
        raise StructuredShapeError(
            f"{op}: begin {begin} and end {end} must both have {s.rank} entries (the rank of {whole!r})"
        )
    _check_bounds(op, s, begin, end, whole)


def _check_bounds(op: str, s: Shape, begin: tuple, end: tuple, whole: Any, first: int = 0) -> None:
    """``[begin[m], end[m])`` inside mode ``m``'s absolute range ``[origin, origin + extent)``
    for the leading modes of ``s``, else a :class:`StructuredIndexError` (``first``: the
    position of ``s``'s first mode in ``whole``, for the message)."""
    for m, (lo, hi) in enumerate(zip(begin, end)):
        o, n = s.origin[m], s[m]
        if not o <= lo <= hi <= o + n:
            what = (
                f"index {lo} of mode {first + m} is" if hi == lo + 1 else f"bounds [{lo}, {hi}) of mode {first + m} are"
            )
            raise StructuredIndexError(f"{op}: {what} outside [{o}, {o + n}) of {whole!r}")


def eq_any(a: Any, b: Any) -> bool:
    """Equality across shape kinds (a smooth Shape against a tuple, a jagged or a tiled shape)."""
    if isinstance(a, Shape) and isinstance(b, (Shape, tuple)) and not isinstance(b, JaggedShape):
        return tuple(a) == tuple(b)
    return a == b if not isinstance(a, Shape) else b == a
