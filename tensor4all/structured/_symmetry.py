"""Abelian symmetry groups, charged legs and their fusion (TeNPy's ``LegCharge`` and
``LegPipe``, ITensor's QN ``Index``).

* A :class:`Symmetry` is an abelian group of charges: :class:`U1` (integers under
  addition), :class:`Zn` (integers mod ``n``; ``Z2()`` is ``Zn(2)``) and products of them
  (``U1() * U1()`` for particle number and ``2Sz``; a product's charges are tuples).
* A :class:`Leg` is a vector space graded by charge: an ordered mapping charge ->
  dimension (its *sectors*) and a duality. A tensor's charge rule counts the charge of a
  dual leg negatively: a block ``(q_1, ..., q_n)`` may be nonzero only where
  ``sum_i s_i q_i == charge`` with ``s_i = -1`` on dual legs and ``+1`` otherwise.
  ``leg.tiling`` is the leg's block structure as a one-mode :class:`TiledShape`.
* :func:`fuse` combines legs into one :class:`FusedLeg` (non-dual) whose sector ``Q``
  stacks, in a fixed order, every tuple of part sectors with ``sum_i s_i q_i == Q``.
  The map from a tuple of part sectors to its slice of the fused sector is computed once
  and reused by ``fuse_legs``/``split_legs`` (reshape and its inverse), the matrix view
  of QR/SVD and block contractions.

Charges are validated on entry: a charge of the wrong group is a :class:`ChargeError`
naming the group and what it expects.
"""
from __future__ import annotations

import itertools
import numbers
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._errors import ChargeError, LegError
from ._shapes import TiledShape

__all__ = ["Symmetry", "U1", "Zn", "Z2", "ProductSymmetry", "Leg", "FusedLeg", "fuse", "sign_of", "one_group"]


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise ChargeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


class Symmetry:
    """An abelian group of charges (abstract: use :class:`U1`, :class:`Zn`, products).
    Subclasses define :meth:`canonical` (validate and normalize one charge), ``_add``,
    ``_negate`` (on canonical charges, unchecked: the inner loops) and :attr:`identity`;
    the public :meth:`add`, :meth:`negate` and :meth:`total` check their charges."""

    identity: Any = 0

    def __new__(cls, *args: Any, **kwargs: Any) -> Symmetry:
        if cls is Symmetry:
            raise ChargeError("Symmetry is the abstract base of the groups; use U1(), Zn(n), Z2() or products "
                              "such as U1() * Z2()")
        return super().__new__(cls)

    def canonical(self, q: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _add(self, a: Any, b: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _negate(self, a: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def add(self, a: Any, b: Any) -> Any:
        """``a + b`` in the group."""
        return self._add(self.canonical(a), self.canonical(b))

    def negate(self, a: Any) -> Any:
        """``-a`` in the group."""
        return self._negate(self.canonical(a))

    def total(self, charges: Iterable[Any], signs: Iterable[int]) -> Any:
        """``sum_i s_i q_i`` (``s_i = -1`` for a dual leg, ``+1`` otherwise)."""
        return self._total([self.canonical(q) for q in charges], list(signs))

    def _total(self, charges: Iterable[Any], signs: Iterable[int]) -> Any:
        out = self.identity
        for q, s in zip(charges, signs):
            out = self._add(out, q if s > 0 else self._negate(q))
        return out

    def __mul__(self, other: Symmetry) -> ProductSymmetry:
        if not isinstance(other, Symmetry):
            return NotImplemented
        left = self.factors if isinstance(self, ProductSymmetry) else (self,)
        right = other.factors if isinstance(other, ProductSymmetry) else (other,)
        return ProductSymmetry(*left, *right)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self) -> tuple:
        return ()


class U1(Symmetry):
    """U(1): integer charges under addition (particle number, ``2Sz``)."""

    identity = 0

    def canonical(self, q: Any) -> int:
        return _as_int(q, f"a charge of {self!r}")

    def _add(self, a: int, b: int) -> int:
        return a + b

    def _negate(self, a: int) -> int:
        return -a

    def __repr__(self) -> str:
        return "U1()"


class Zn(Symmetry):
    """Z_n: integers modulo ``n`` (``n >= 2``); charges are stored in ``0..n-1`` (a
    charge given as ``-1`` is ``n - 1``)."""

    identity = 0

    def __init__(self, n: int) -> None:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (numbers.Integral, np.integer)) or n < 2:
            raise ChargeError(f"Zn(n): n must be an integer >= 2, got {n!r}")
        self.n = int(n)

    def canonical(self, q: Any) -> int:
        return _as_int(q, f"a charge of {self!r}") % self.n

    def _add(self, a: int, b: int) -> int:
        return (a + b) % self.n

    def _negate(self, a: int) -> int:
        return (-a) % self.n

    def _key(self) -> tuple:
        return (self.n,)

    def __repr__(self) -> str:
        return "Z2()" if self.n == 2 else f"Zn({self.n})"


def Z2() -> Zn:
    """Z_2 (parity): ``Zn(2)``."""
    return Zn(2)


class ProductSymmetry(Symmetry):
    """The direct product of groups; a charge is a tuple with one entry per factor."""

    def __init__(self, *factors: Symmetry) -> None:
        if len(factors) < 2 or not all(isinstance(f, Symmetry) and not isinstance(f, ProductSymmetry)
                                       for f in factors):
            raise ChargeError(f"ProductSymmetry takes two or more groups (U1(), Zn(n)), got {factors!r}")
        self.factors = tuple(factors)
        self.identity = tuple(f.identity for f in factors)

    def canonical(self, q: Any) -> tuple:
        if not isinstance(q, (tuple, list)) or len(q) != len(self.factors):
            raise ChargeError(f"a charge of {self!r} must be a tuple of {len(self.factors)} integers, got {q!r}")
        return tuple(f.canonical(x) for f, x in zip(self.factors, q))

    def _add(self, a: tuple, b: tuple) -> tuple:
        return tuple(f._add(x, y) for f, x, y in zip(self.factors, a, b))

    def _negate(self, a: tuple) -> tuple:
        return tuple(f._negate(x) for f, x in zip(self.factors, a))

    def _key(self) -> tuple:
        return self.factors

    def __repr__(self) -> str:
        return " * ".join(repr(f) for f in self.factors)


def sign_of(leg: Leg) -> int:
    """``-1`` for a dual leg, ``+1`` otherwise."""
    return -1 if leg.is_dual else 1


class Leg:
    """A leg graded by charge: ``Leg(U1(), {-1: 2, 1: 2})`` (sectors in the given order,
    which is the order of the dense index), ``dual=True`` for an incoming leg.

    ``leg.dim`` is the total dimension, ``leg.sectors`` the mapping charge -> dimension,
    ``leg.dual()`` the same leg with the duality flipped, ``leg.tiling`` the block
    structure as a :class:`TiledShape`, ``leg.slice(q)`` the dense range of sector ``q``.
    """

    __slots__ = ("symmetry", "_sectors", "is_dual", "_offsets")

    def __init__(self, symmetry: Symmetry, sectors: Mapping[Any, int] | Sequence[tuple[Any, int]],
                 dual: bool = False) -> None:
        if not isinstance(symmetry, Symmetry):
            raise ChargeError(f"Leg: symmetry must be a Symmetry (U1(), Zn(n), products), got {symmetry!r}")
        items = list(sectors.items()) if isinstance(sectors, Mapping) else list(sectors)
        if not items:
            raise LegError("Leg: sectors must be a non-empty mapping charge -> dimension")
        out: dict[Any, int] = {}
        for item in items:
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise LegError(f"Leg: sectors must map charges to dimensions, got the entry {item!r}")
            q, d = symmetry.canonical(item[0]), item[1]
            if isinstance(d, (bool, np.bool_)) or not isinstance(d, (numbers.Integral, np.integer)) or d <= 0:
                raise LegError(f"Leg: sector {q!r} has dimension {d!r}; every sector dimension must be a "
                               "positive integer")
            if q in out:
                raise LegError(f"Leg: charge {q!r} appears twice (as {item[0]!r}); give each sector once")
            out[q] = int(d)
        if not isinstance(dual, (bool, np.bool_)):
            raise LegError(f"Leg: dual must be True or False, got {dual!r}")
        self.symmetry = symmetry
        self._sectors = out
        self.is_dual = bool(dual)
        self._offsets = dict(zip(out, itertools.accumulate([0, *out.values()])))

    @property
    def sectors(self) -> dict[Any, int]:
        """Charge -> dimension, in the leg's order (a copy)."""
        return dict(self._sectors)

    @property
    def charges(self) -> tuple[Any, ...]:
        return tuple(self._sectors)

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(self._sectors.values())

    @property
    def dim(self) -> int:
        return sum(self._sectors.values())

    @property
    def tiling(self) -> TiledShape:
        return TiledShape(self.dims)

    def __contains__(self, q: Any) -> bool:
        return q in self._sectors

    def sector_dim(self, q: Any) -> int:
        try:
            return self._sectors[q]
        except (KeyError, TypeError):
            raise LegError(f"{self!r} has no sector of charge {q!r}; its charges are {list(self._sectors)}") from None

    def slice(self, q: Any) -> slice:
        """The range of sector ``q`` in the dense index."""
        start = self._offsets.get(q) if _hashable(q) else None
        if start is None:
            raise LegError(f"{self!r} has no sector of charge {q!r}; its charges are {list(self._sectors)}")
        return slice(start, start + self._sectors[q])

    def dual(self) -> Leg:
        """The same sectors with the duality flipped (the leg a contraction partner needs)."""
        return self._with_dual(not self.is_dual)

    def _with_dual(self, dual: bool) -> Leg:
        out = object.__new__(type(self))
        for k in self._copy_slots():
            object.__setattr__(out, k, getattr(self, k))
        out.is_dual = dual
        return out

    def _copy_slots(self) -> tuple[str, ...]:
        return ("symmetry", "_sectors", "_offsets")

    def same_space(self, other: Leg) -> bool:
        """Same group, same sectors in the same order (duality not compared)."""
        return (isinstance(other, Leg) and self.symmetry == other.symmetry
                and list(self._sectors.items()) == list(other._sectors.items()))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Leg) and self.same_space(other) and self.is_dual == other.is_dual
                and self._fusion_key() == other._fusion_key())

    def __hash__(self) -> int:
        return hash((self.symmetry, tuple(self._sectors.items()), self.is_dual))

    def _fusion_key(self) -> Any:
        return None

    def __repr__(self) -> str:
        body = ", ".join(f"{q!r}: {d}" for q, d in self._sectors.items())
        return f"Leg({self.symmetry!r}, {{{body}}}{', dual=True' if self.is_dual else ''})"


def one_group(legs: Sequence[Leg], op: str, error: type[Exception], why: str) -> Symmetry:
    """The group of ``legs``; ``error`` naming the first leg of another group (and ``why``)."""
    g = legs[0].symmetry
    for k, leg in enumerate(legs):
        if leg.symmetry != g:
            raise error(f"{op}: leg {k} has symmetry {leg.symmetry!r}, leg 0 has {g!r}; {why}")
    return g


def _hashable(q: Any) -> bool:
    try:
        hash(q)
    except TypeError:
        return False
    return True


class FusedLeg(Leg):
    """A leg made by :func:`fuse`: its sectors and, for every tuple of part sectors, the
    fused sector and the slice of it that tuple occupies (``.parts``, ``.pieces``)."""

    __slots__ = ("parts", "pieces", "_by_sector")

    def __init__(self, parts: Sequence[Leg]) -> None:
        parts = tuple(parts)
        if not parts or not all(isinstance(p, Leg) for p in parts):
            raise LegError(f"fuse takes one or more Legs, got {parts!r}")
        g = one_group(parts, "fuse", ChargeError, "only legs of one group fuse")
        signs = [sign_of(p) for p in parts]
        groups: dict[Any, list[tuple[tuple, int]]] = {}
        for combo in itertools.product(*(p.charges for p in parts)):
            q = g._total(combo, signs)
            size = int(np.prod([p.sector_dim(c) for p, c in zip(parts, combo)]))
            groups.setdefault(q, []).append((combo, size))
        order = sorted(groups, key=_sort_key)
        pieces: dict[tuple, tuple[Any, int, int]] = {}
        sectors = []
        by_sector: dict[Any, list[tuple[tuple, int, int]]] = {}
        for q in order:
            off = 0
            for combo, size in groups[q]:
                pieces[combo] = (q, off, off + size)
                by_sector.setdefault(q, []).append((combo, off, off + size))
                off += size
            sectors.append((q, off))
        super().__init__(g, sectors, dual=False)
        self.parts = parts
        self.pieces = pieces          # part charges -> (fused charge, start, stop)
        self._by_sector = by_sector   # fused charge -> [(part charges, start, stop), ...]

    def _copy_slots(self) -> tuple[str, ...]:
        return ("symmetry", "_sectors", "_offsets", "parts", "pieces", "_by_sector")

    def pieces_of(self, q: Any) -> list[tuple[tuple, int, int]]:
        """The part-sector tuples stacked in fused sector ``q``, with their ranges (none for
        a charge of the group that is not a sector of this leg)."""
        return self._by_sector.get(self.symmetry.canonical(q), [])

    def split(self) -> tuple[Leg, ...]:
        """The legs this one was fused from (duality flipped if this leg was dualized)."""
        return tuple(p.dual() for p in self.parts) if self.is_dual else self.parts

    def _fusion_key(self) -> Any:
        return self.parts

    def __repr__(self) -> str:
        return f"FusedLeg({', '.join(map(repr, self.parts))}{', dual=True' if self.is_dual else ''})"


def _sort_key(q: Any) -> Any:
    return q


def fuse(*legs: Leg) -> FusedLeg:
    """The fused leg of ``legs`` (non-dual; duality of the parts counted in its charges),
    with the map part sectors -> slice of the fused sector (built once, reused)."""
    if len(legs) == 1 and isinstance(legs[0], (list, tuple)):
        legs = tuple(legs[0])
    return FusedLeg(legs)
