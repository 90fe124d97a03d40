"""Lattices for the models: sites, coordinates and bond lists (issue 23).

A :class:`Lattice` is a numbered set of sites with 2D coordinates and two bond lists,
``nearest`` and ``next_nearest``; the models of :mod:`tensor4all.models` sum their couplings
over them (``models.heisenberg(lattices.square(4, 4, yperiodic=True))``).

**Site ordering** (ITensor's ``square_lattice``, TeNPy's default for cylinders): column-major,
no snake. A 2D lattice is ``Lx`` columns of ``Ly`` sites; ``x`` runs along the long (open)
direction, ``y`` across it (around the cylinder when ``yperiodic``), and site ``(x, y)`` is
number ``n = x * Ly + y``. An MPS over these sites therefore winds up each column in turn;
bonds between columns reach ``Ly`` sites ahead, which the OpSum automaton compiles as any
long-range term.

**Bonds** are pairs ``(i, j)`` with ``i < j``, sorted, each pair listed once: a periodic wrap
that would repeat an existing bond (``Ly = 2`` cylinders, the ``L = 2`` ring) or join a site to
itself (``Ly = 1``) adds nothing, and a pair that is a nearest-neighbour bond is never also in
``next_nearest`` (small periodic clusters). Wraps in ``y`` join ``(x, Ly - 1)`` to ``(x, 0)``.
``nearest_directed`` holds the same bonds each pointing along the lattice's step (``+x``, ``+y``,
the diagonal), a wrap from the last column or row to the first: the direction of a complex hopping
in the fermion models (a Peierls phase), so that a uniform ``t = |t| e^{i phi}`` threads the flux
``Ly phi`` around a cylinder (``L phi`` around a ring), as TeNPy's couplings along a lattice vector do.

* :func:`chain` -- ``L`` sites on a line (``(i, i + 1)``; next-nearest ``(i, i + 2)``).
* :func:`ladder` -- ``L`` rungs of ``legs`` sites: :func:`square` ``(L, legs)`` (rungs are
  the columns); next-nearest are the plaquette diagonals.
* :func:`square` -- nearest ``(x, y)-(x, y + 1)`` and ``(x, y)-(x + 1, y)``; next-nearest the
  two diagonals of each plaquette. Open: ``Lx (Ly - 1) + (Lx - 1) Ly`` bonds; ``yperiodic``
  adds ``Lx`` for ``Ly > 2``.
* :func:`triangular` -- the square bonds plus the diagonal ``(x, y)-(x + 1, y - 1)`` (ITensor's
  ``triangular_lattice``); coordinates ``x a1 + y a2`` with ``a1 = (sqrt(3)/2, 1/2)``,
  ``a2 = (0, 1)``, so every bond has length 1. Next-nearest (length ``sqrt(3)``):
  ``(x, y)-(x + 1, y + 1)``, ``(x + 2, y - 1)``, ``(x + 1, y - 2)``.
* :func:`honeycomb` -- ``Lx`` zigzag columns of ``Ly`` sites (brick-wall numbering): the
  column bonds ``(x, y)-(x, y + 1)`` and the horizontal bonds ``(x, y)-(x + 1, y)`` for even
  ``x + y``; coordinates ``(1.5 x + (0.5 if x + y is even else 0), y sqrt(3)/2)``, every bond of
  length 1. Next-nearest (length ``sqrt(3)``, same sublattice): ``(x, y)-(x, y + 2)`` and
  ``(x, y)-(x + 1, y +- 1)``. ``yperiodic`` needs an even ``Ly``.

Bad sizes raise :class:`~tensor4all.BondDimensionError` (not a positive integer), other bad
arguments :class:`~tensor4all.InvalidOptionError` or :class:`~tensor4all.Tensor4allTypeError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .tools.errors import InvalidOptionError, Tensor4allTypeError
from .tools.checks import check_alloc, check_positive_int

__all__ = ["Lattice", "chain", "ladder", "square", "triangular", "honeycomb"]

Bond = tuple[int, int]

#: the ordering every 2D constructor uses
_COLUMN_MAJOR = "column-major: n = x * Ly + y (x along the lattice, y across or around it; no snake)"


class Lattice:
    """An immutable lattice: ``name``, ``sites`` (the count), ``coords`` (a read-only
    ``sites x 2`` float array), ``nearest`` and ``next_nearest`` (tuples of bonds ``(i, j)``,
    ``i < j``, sorted, no repeats) and ``ordering`` (how sites are numbered).

    Built by the constructors of :mod:`tensor4all.lattices`; a custom lattice can be built
    directly, with the bonds checked (in range, ``i != j``) and normalized."""

    __slots__ = ("_name", "_sites", "_coords", "_nearest", "_next_nearest", "_ordering", "_directed")

    def __init__(
        self,
        name: str,
        coords: Any,
        nearest: Iterable[Bond],
        next_nearest: Iterable[Bond] = (),
        ordering: str = "as given",
    ) -> None:
        if not isinstance(name, str):
            raise Tensor4allTypeError(f"Lattice: name must be a str, got {type(name).__name__}")
        if not isinstance(ordering, str):
            raise Tensor4allTypeError(f"Lattice: ordering must be a str, got {type(ordering).__name__}")
        try:
            xy = np.array(coords, dtype=float)
        except (TypeError, ValueError) as exc:
            raise Tensor4allTypeError(f"Lattice: coords must be an N x 2 array of numbers ({exc})") from None
        if xy.ndim != 2 or xy.shape[1] != 2 or xy.shape[0] < 1:
            raise InvalidOptionError(f"Lattice: coords must be an N x 2 array with N >= 1, got shape {xy.shape}")
        if not np.all(np.isfinite(xy)):
            raise InvalidOptionError("Lattice: coords must be finite")
        xy.setflags(write=False)
        n = xy.shape[0]
        near, given = _normalized(nearest, n, "nearest")
        near_set = set(near)
        nnear = tuple(b for b in _normalize(next_nearest, n, "next_nearest") if b not in near_set)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_sites", n)
        object.__setattr__(self, "_coords", xy)
        object.__setattr__(self, "_nearest", near)
        object.__setattr__(self, "_next_nearest", nnear)
        object.__setattr__(self, "_ordering", ordering)
        object.__setattr__(self, "_directed", _directed(given, near))

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"Lattice is immutable (cannot set {key!r})")

    def __reduce__(self) -> tuple:
        """Pickled as its constructor's arguments (a copy, a Dask task): the slots cannot be set."""
        return (Lattice, (self._name, self._coords, self._directed, self._next_nearest, self._ordering))

    name = property(lambda self: self._name, doc="The lattice's name, e.g. ``'square 4x2 (y-periodic)'``.")
    sites = property(lambda self: self._sites, doc="The number of sites.")
    coords = property(lambda self: self._coords, doc="Site coordinates, a read-only ``sites x 2`` array.")
    nearest = property(lambda self: self._nearest, doc="Nearest-neighbour bonds ``(i, j)``, ``i < j``.")
    nearest_directed = property(
        lambda self: self._directed,
        doc="The nearest bonds in the order of ``nearest``, each ``(i, j)`` as first given (the constructors: "
        "along the lattice's step, a periodic wrap from the last column or row to the first): the direction "
        "of a complex hopping (a Peierls phase) in the fermion models.",
    )
    next_nearest = property(lambda self: self._next_nearest, doc="Next-nearest-neighbour bonds ``(i, j)``, ``i < j``.")
    ordering = property(lambda self: self._ordering, doc="How sites are numbered.")

    def __len__(self) -> int:
        return self._sites

    def __repr__(self) -> str:
        return (
            f"Lattice({self._name!r}, sites={self._sites}, nearest={len(self._nearest)} bonds, "
            f"next_nearest={len(self._next_nearest)} bonds)"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Lattice):
            return NotImplemented
        return (
            self._name == other._name
            and self._nearest == other._nearest
            and self._directed == other._directed
            and self._next_nearest == other._next_nearest
            and self._ordering == other._ordering
            and np.array_equal(self._coords, other._coords)
        )

    def __hash__(self) -> int:
        return hash((self._name, self._sites, self._nearest, self._next_nearest))


def _normalize(bonds: Iterable[Bond], n: int, what: str) -> tuple[Bond, ...]:
    """Bonds as sorted, unique ``(min, max)`` pairs of ints in ``0..n-1``. A bond ``(i, i)`` is
    refused (the constructors drop the wraps on a 1-site circumference before they get here)."""
    return _normalized(bonds, n, what)[0]


def _normalized(bonds: Iterable[Bond], n: int, what: str) -> tuple[tuple[Bond, ...], list]:
    """:func:`_normalize`'s bonds and the pairs as given."""
    try:
        pairs = [tuple(b) for b in bonds]
    except TypeError:
        raise Tensor4allTypeError(f"Lattice: {what} must be an iterable of (i, j) pairs") from None
    out = set()
    for b in pairs:
        if len(b) != 2 or not all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in b):
            raise Tensor4allTypeError(f"Lattice: {what} bond {b!r} is not a pair of ints")
        i, j = int(b[0]), int(b[1])
        if not (0 <= i < n and 0 <= j < n):
            raise InvalidOptionError(f"Lattice: {what} bond {b!r} has a site outside 0..{n - 1}")
        if i == j:
            raise InvalidOptionError(f"Lattice: {what} bond {b!r} joins a site to itself")
        out.add((min(i, j), max(i, j)))
    return tuple(sorted(out)), pairs


def _directed(given: Iterable[Bond], near: tuple[Bond, ...]) -> tuple[Bond, ...]:
    """The bonds ``near`` (normalized) each oriented as first given."""
    first: dict[Bond, Bond] = {}
    for b in given:
        i, j = int(b[0]), int(b[1])
        first.setdefault((min(i, j), max(i, j)), (i, j))
    return tuple(first[b] for b in near)


def _check_flag(value: Any, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise Tensor4allTypeError(f"{what} must be True or False, got {value!r}")
    return bool(value)


def _grid_bonds(
    Lx: int,
    Ly: int,
    steps: Iterable[tuple[int, int]],
    xperiodic: bool,
    yperiodic: bool,
    keep: Callable[[int, int, int, int], bool] | None = None,
) -> list[Bond]:
    """Bonds ``(x, y)-(x + dx, y + dy)`` of a column-major grid for each step, wrapping where
    periodic and dropping what falls off (or what ``keep(x, y, dx, dy)`` rejects) and
    self-bonds (a wrap on a circumference of 1)."""
    out = []
    for x in range(Lx):
        for y in range(Ly):
            for dx, dy in steps:
                if keep is not None and not keep(x, y, dx, dy):
                    continue
                x2, y2 = x + dx, y + dy
                if not 0 <= x2 < Lx:
                    if not xperiodic:
                        continue
                    x2 %= Lx
                if not 0 <= y2 < Ly:
                    if not yperiodic:
                        continue
                    y2 %= Ly
                i, j = x * Ly + y, x2 * Ly + y2
                if i != j:
                    out.append((i, j))
    return out


BYTES_PER_SITE = 2048
"""What a lattice holds per site at most (coordinates and up to twelve bond tuples in lists, sets
and sorts: 0.6 to 1.5 kB measured by ``tracemalloc``): a lattice too large for the machine's memory
is refused before it is built (:class:`~tensor4all.tools.errors.Tensor4allMemoryError`)."""


def _check_size(Lx: int, Ly: int, what: str) -> None:
    check_alloc(Lx * Ly * BYTES_PER_SITE, f"{what} lattice of {Lx * Ly} sites")


def _grid_coords(Lx: int, Ly: int, pos: Callable[[int, int], tuple[float, float]]) -> np.ndarray:
    return np.array([pos(x, y) for x in range(Lx) for y in range(Ly)], dtype=float)


def _suffix(xperiodic: bool, yperiodic: bool) -> str:
    wraps = [w for w, on in (("x", xperiodic), ("y", yperiodic)) if on]
    return f" ({'- and '.join(wraps)}-periodic)" if wraps else ""


def chain(L: int, periodic: bool = False) -> Lattice:
    """``L`` sites at ``(i, 0)``; bonds ``(i, i + 1)``, next-nearest ``(i, i + 2)``; ``periodic``
    adds the wraps ``(L - 1, 0)`` and ``(L - 2, 0)``, ``(L - 1, 1)`` (without repeats)."""
    L = check_positive_int(L, "chain: L")
    periodic = _check_flag(periodic, "chain: periodic")
    _check_size(L, 1, "chain")
    near = _grid_bonds(L, 1, [(1, 0)], periodic, False)
    nnear = _grid_bonds(L, 1, [(2, 0)], periodic, False)
    name = f"chain {L}" + (" (periodic)" if periodic else "")
    return Lattice(name, _grid_coords(L, 1, lambda x, y: (x, y)), near, nnear, "n = x")


def square(Lx: int, Ly: int, yperiodic: bool = False, xperiodic: bool = False) -> Lattice:
    """The ``Lx x Ly`` square lattice at integer coordinates ``(x, y)``, sites ``n = x * Ly + y``;
    nearest the axis bonds, next-nearest the plaquette diagonals (see the module)."""
    Lx = check_positive_int(Lx, "square: Lx")
    Ly = check_positive_int(Ly, "square: Ly")
    yperiodic = _check_flag(yperiodic, "square: yperiodic")
    xperiodic = _check_flag(xperiodic, "square: xperiodic")
    _check_size(Lx, Ly, "square")
    near = _grid_bonds(Lx, Ly, [(0, 1), (1, 0)], xperiodic, yperiodic)
    nnear = _grid_bonds(Lx, Ly, [(1, 1), (1, -1)], xperiodic, yperiodic)
    name = f"square {Lx}x{Ly}" + _suffix(xperiodic, yperiodic)
    return Lattice(name, _grid_coords(Lx, Ly, lambda x, y: (x, y)), near, nnear, _COLUMN_MAJOR)


def ladder(L: int, legs: int = 2) -> Lattice:
    """``L`` rungs of ``legs`` sites (open): :func:`square` ``(L, legs)``, site ``n = x * legs + leg``."""
    L = check_positive_int(L, "ladder: L")
    legs = check_positive_int(legs, "ladder: legs")
    sq = square(L, legs)
    return Lattice(f"ladder {L}x{legs}", sq.coords, sq.nearest_directed, sq.next_nearest, _COLUMN_MAJOR)


_SQRT3 = math.sqrt(3.0)


def triangular(Lx: int, Ly: int, yperiodic: bool = False) -> Lattice:
    """The triangular lattice, ``Lx`` columns of ``Ly`` sites, ``n = x * Ly + y``: the square bonds
    plus ``(x, y)-(x + 1, y - 1)``; site ``(x, y)`` at ``x (sqrt(3)/2, 1/2) + y (0, 1)``."""
    Lx = check_positive_int(Lx, "triangular: Lx")
    Ly = check_positive_int(Ly, "triangular: Ly")
    yperiodic = _check_flag(yperiodic, "triangular: yperiodic")
    _check_size(Lx, Ly, "triangular")
    near = _grid_bonds(Lx, Ly, [(0, 1), (1, 0), (1, -1)], False, yperiodic)
    nnear = _grid_bonds(Lx, Ly, [(1, 1), (2, -1), (1, -2)], False, yperiodic)
    coords = _grid_coords(Lx, Ly, lambda x, y: (x * _SQRT3 / 2, x / 2 + y))
    return Lattice(f"triangular {Lx}x{Ly}" + _suffix(False, yperiodic), coords, near, nnear, _COLUMN_MAJOR)


def honeycomb(Lx: int, Ly: int, yperiodic: bool = False) -> Lattice:
    """The honeycomb lattice as ``Lx`` zigzag columns of ``Ly`` sites (brick wall), ``n = x * Ly + y``:
    column bonds ``(x, y)-(x, y + 1)`` and ``(x, y)-(x + 1, y)`` for even ``x + y``; ``yperiodic``
    needs an even ``Ly`` (the brick pattern must close around the cylinder)."""
    Lx = check_positive_int(Lx, "honeycomb: Lx")
    Ly = check_positive_int(Ly, "honeycomb: Ly")
    yperiodic = _check_flag(yperiodic, "honeycomb: yperiodic")
    if yperiodic and Ly % 2:
        raise InvalidOptionError(f"honeycomb: yperiodic needs an even Ly, got Ly = {Ly}")
    _check_size(Lx, Ly, "honeycomb")
    near = _grid_bonds(
        Lx, Ly, [(0, 1), (1, 0)], False, yperiodic, keep=lambda x, y, dx, dy: dx == 0 or (x + y) % 2 == 0
    )
    nnear = _grid_bonds(Lx, Ly, [(0, 2), (1, 1), (1, -1)], False, yperiodic)
    coords = _grid_coords(Lx, Ly, lambda x, y: (1.5 * x + (0.5 if (x + y) % 2 == 0 else 0.0), y * _SQRT3 / 2))
    return Lattice(f"honeycomb {Lx}x{Ly}" + _suffix(False, yperiodic), coords, near, nnear, _COLUMN_MAJOR)


def __dir__() -> list[str]:
    """The public names (``__all__``): what ``dir`` and tab completion show."""
    return sorted(__all__)
