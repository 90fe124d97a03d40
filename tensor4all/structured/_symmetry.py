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
naming the group and what it expects (:class:`ChargeTypeError`, also a ``TypeError``,
for a charge of the wrong type: ``0.5``, ``True``, ``"a"`` or ``(1, 0)`` for U1, ``1``
for ``U1() * Z2()``), prefixed by where it was met (``Leg: sector 0: ...``,
``SymmetricTensor: block (1, 1), leg 0: ...``). A :class:`Zn` charge is taken modulo
``n`` (``3`` on a Z2 leg is the charge ``1``, ``-1`` is ``n - 1``): so ``{1: .., 3: ..}``
on a Z2 leg names one sector twice, a :class:`LegError`. Legs are validated on
construction (:class:`LegError`, :class:`LegTypeError` for arguments of the wrong type)
and never change afterwards.
"""

from __future__ import annotations

import itertools
import math
import numbers
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ._errors import ChargeError, ChargeTypeError, LegError, LegTypeError
from ._shapes import TiledShape

__all__ = [
    "Symmetry",
    "U1",
    "Zn",
    "Z2",
    "ProductSymmetry",
    "Leg",
    "FusedLeg",
    "fuse",
    "sign_of",
    "one_group",
    "checked_charge",
    "leg_difference",
]


def _is_int(value: Any) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def _as_int(value: Any, what: str) -> int:
    if not _is_int(value):
        raise ChargeTypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


def checked_charge(g: Symmetry, q: Any, where: str) -> Any:
    """``g.canonical(q)``; a :class:`ChargeError` is raised again prefixed with ``where``
    (the operation and the leg, sector or block that held the charge)."""
    try:
        return g.canonical(q)
    except ChargeError as e:
        raise type(e)(f"{where}: {e}") from None


class Symmetry:
    """An abelian group of charges (abstract: use :class:`U1`, :class:`Zn`, products).
    Subclasses define :meth:`canonical` (validate and normalize one charge), ``_add``,
    ``_negate`` (on canonical charges, unchecked: the inner loops) and :attr:`identity`;
    the public :meth:`add`, :meth:`negate` and :meth:`total` check their charges."""

    identity: Any = 0

    def __new__(cls, *args: Any, **kwargs: Any) -> Symmetry:
        if cls is Symmetry:
            raise ChargeError(
                "Symmetry is the abstract base of the groups; use U1(), Zn(n), Z2() or products such as U1() * Z2()"
            )
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
        """``sum_i s_i q_i`` (``s_i = -1`` for a dual leg, ``+1`` otherwise): one sign per
        charge, each ``+1`` or ``-1``."""
        charges = [checked_charge(self, q, f"total: charge {i}") for i, q in enumerate(charges)]
        signs = list(signs)
        if len(signs) != len(charges):
            raise ChargeError(f"total: {len(charges)} charges but {len(signs)} signs; give one sign per charge")
        for i, sgn in enumerate(signs):
            if not _is_int(sgn) or sgn not in (1, -1):
                raise (ChargeError if _is_int(sgn) else ChargeTypeError)(
                    f"total: sign {i} must be +1 or -1 (-1 for a dual leg), got {sgn!r}"
                )
        return self._total(charges, signs)

    def _total(self, charges: Iterable[Any], signs: Iterable[int]) -> Any:
        out = self.identity
        for q, s in zip(charges, signs):
            out = self._add(out, q if s > 0 else self._negate(q))
        return out

    def __mul__(self, other: Symmetry) -> ProductSymmetry:
        if not isinstance(other, Symmetry):
            raise ChargeTypeError(
                f"{self!r} * {other!r}: a product of groups takes groups (U1(), Zn(n)), got {type(other).__name__}"
            )
        return ProductSymmetry(self, other)

    def __rmul__(self, other: Any) -> ProductSymmetry:
        raise ChargeTypeError(
            f"{other!r} * {self!r}: a product of groups takes groups (U1(), Zn(n)), got {type(other).__name__}"
        )

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self) -> tuple:
        return ()


class U1(Symmetry):
    """U(1): integer charges under addition (particle number, ``2Sz``)."""

    identity = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise ChargeTypeError(
                f"U1() takes no arguments, got {(*args, *kwargs)!r}; charges are given on the "
                "legs (Leg(U1(), {charge: dimension}))"
            )

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
        if not _is_int(n) or n < 2:
            raise (ChargeError if _is_int(n) else ChargeTypeError)(f"Zn(n): n must be an integer >= 2, got {n!r}")
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
    """The direct product of groups; a charge is a tuple with one entry per factor.
    Products among the factors are flattened (``ProductSymmetry(U1() * Z2(), U1())`` is
    ``U1() * Z2() * U1()``, as ``*`` builds it)."""

    def __init__(self, *factors: Symmetry) -> None:
        for k, f in enumerate(factors):
            if not isinstance(f, Symmetry):
                raise ChargeTypeError(
                    f"ProductSymmetry takes two or more groups (U1(), Zn(n)); factor {k} is {type(f).__name__} {f!r}"
                )
        flat = tuple(g for f in factors for g in (f.factors if isinstance(f, ProductSymmetry) else (f,)))
        if len(flat) < 2:
            raise ChargeError(f"ProductSymmetry takes two or more groups (U1(), Zn(n)), got {factors!r}")
        self.factors = flat
        self.identity = tuple(f.identity for f in flat)

    def canonical(self, q: Any) -> tuple:
        n = len(self.factors)
        if not isinstance(q, (tuple, list)) or len(q) != n:
            raise ChargeTypeError(
                f"a charge of {self!r} must be a tuple of {n} integers (one per factor), got {type(q).__name__} {q!r}"
            )
        out = []
        for k, (f, x) in enumerate(zip(self.factors, q)):
            if not _is_int(x):
                raise ChargeTypeError(
                    f"a charge of {self!r} must be a tuple of {n} integers, got {q!r}: entry {k} "
                    f"(for {f!r}) is {type(x).__name__} {x!r}"
                )
            out.append(f.canonical(x))
        return tuple(out)

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

    def __init__(
        self, symmetry: Symmetry, sectors: Mapping[Any, int] | Sequence[tuple[Any, int]], dual: bool = False
    ) -> None:
        if not isinstance(symmetry, Symmetry):
            raise ChargeTypeError(f"Leg: symmetry must be a Symmetry (U1(), Zn(n), products), got {symmetry!r}")
        if isinstance(sectors, Mapping):
            items = list(sectors.items())
        elif isinstance(sectors, (str, bytes)) or not isinstance(sectors, Iterable):
            raise LegTypeError(
                f"Leg: sectors must be a mapping charge -> dimension (or a list of (charge, "
                f"dimension) pairs), got {type(sectors).__name__} {sectors!r}"
            )
        else:
            items = list(sectors)
        if not items:
            raise LegError("Leg: sectors must be a non-empty mapping charge -> dimension")
        out: dict[Any, int] = {}
        given: dict[Any, tuple[int, Any]] = {}
        for k, item in enumerate(items):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise LegTypeError(
                    f"Leg: sectors must map charges to dimensions; entry {k} is {item!r}, not a "
                    "(charge, dimension) pair"
                )
            q, d = checked_charge(symmetry, item[0], f"Leg: sector {k}"), item[1]
            if not _is_int(d) or d <= 0:
                raise (LegError if _is_int(d) else LegTypeError)(
                    f"Leg: sector {k} (charge {q!r}) has dimension {d!r}; every sector dimension must be a positive "
                    "integer"
                )
            if q in out:
                j, first = given[q]
                mod = f" ({symmetry!r} charges are taken mod {symmetry.n})" if isinstance(symmetry, Zn) else ""
                raise LegError(
                    f"Leg: charge {q!r} appears twice (sector {j} as {first!r}, sector {k} as "
                    f"{item[0]!r}){mod}; give each sector once"
                )
            out[q] = int(d)
            given[q] = (k, item[0])
        if not isinstance(dual, (bool, np.bool_)):
            raise LegTypeError(f"Leg: dual must be True or False, got {dual!r}")
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
        """Whether ``q`` (a charge of the leg's group, taken mod ``n`` for Zn) is a sector;
        False for anything that is not a charge of the group (``1.0``, ``True``)."""
        try:
            return self.symmetry.canonical(q) in self._sectors
        except ChargeError:
            return False

    def _charge(self, q: Any, op: str) -> Any:
        """``q`` canonical and a sector of this leg, else a typed error naming the leg."""
        if type(q) is int and q in self._sectors:  # the common case: a canonical integer charge of this leg
            return q
        q = checked_charge(self.symmetry, q, f"{op} of {self!r}")
        if q not in self._sectors:
            raise LegError(f"{self!r} has no sector of charge {q!r}; its charges are {list(self._sectors)}")
        return q

    def sector_dim(self, q: Any) -> int:
        """The dimension of sector ``q``."""
        return self._sectors[self._charge(q, "sector_dim")]

    def slice(self, q: Any) -> slice:
        """The range of sector ``q`` in the dense index."""
        q = self._charge(q, "slice")
        start = self._offsets[q]
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
        return (
            isinstance(other, Leg)
            and self.symmetry == other.symmetry
            and list(self._sectors.items()) == list(other._sectors.items())
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Leg)
            and self.same_space(other)
            and self.is_dual == other.is_dual
            and self._fusion_key() == other._fusion_key()
        )

    def __hash__(self) -> int:
        return hash((self.symmetry, tuple(self._sectors.items()), self.is_dual))

    def _fusion_key(self) -> Any:
        return None

    def __repr__(self) -> str:
        body = ", ".join(f"{q!r}: {d}" for q, d in self._sectors.items())
        return f"Leg({self.symmetry!r}, {{{body}}}{', dual=True' if self.is_dual else ''})"


def leg_difference(a: Leg, b: Leg) -> str:
    """What differs between two legs' spaces, in words (for the messages of mismatched legs):
    the groups, the charges only one leg has, a sector dimension, or the order of the sectors."""
    if a.symmetry != b.symmetry:
        return f"their symmetries differ ({a.symmetry!r} and {b.symmetry!r})"
    only_a = [q for q in a._sectors if q not in b._sectors]
    only_b = [q for q in b._sectors if q not in a._sectors]
    if only_a or only_b:
        parts = ([f"charges {only_a} only on the first"] if only_a else []) + (
            [f"charges {only_b} only on the second"] if only_b else []
        )
        return "their charges differ: " + ", ".join(parts)
    for q, d in a._sectors.items():
        if b._sectors[q] != d:
            return f"sector {q!r} has dimension {d} on the first and {b._sectors[q]} on the second"
    if list(a._sectors) != list(b._sectors):
        return f"the sectors are in different orders ({list(a._sectors)} and {list(b._sectors)})"
    return "they are the same space"


def one_group(legs: Sequence[Leg], op: str, error: type[Exception], why: str) -> Symmetry:
    """The group of ``legs``; ``error`` naming the first leg of another group (and ``why``)."""
    g = legs[0].symmetry
    for k, leg in enumerate(legs):
        if leg.symmetry != g:
            raise error(f"{op}: leg {k} has symmetry {leg.symmetry!r}, leg 0 has {g!r}; {why}")
    return g


def leg_list(
    legs: Any, op: str, item: str, empty: type[Exception], mixed: type[Exception], why: str
) -> tuple[Leg, ...]:
    """``legs`` (a list or tuple of :class:`Leg` of one group) as a tuple: :class:`LegTypeError`
    for anything else, ``empty`` for no legs, ``mixed`` (naming ``why``) for two groups."""
    if not isinstance(legs, (list, tuple)):
        raise LegTypeError(f"{op}: legs must be a list of Leg, got {type(legs).__name__} {legs!r}")
    legs = tuple(legs)
    if not legs:
        raise empty(f"{op}: needs at least one leg, got {legs!r}")
    for k, leg in enumerate(legs):
        if not isinstance(leg, Leg):
            raise LegTypeError(f"{op}: {item} {k} must be a Leg, got {type(leg).__name__} {leg!r}")
    one_group(legs, op, mixed, why)
    return legs


class FusedLeg(Leg):
    """A leg made by :func:`fuse`: its sectors and, for every tuple of part sectors, the
    fused sector and the slice of it that tuple occupies (``.parts``, ``.pieces``)."""

    __slots__ = ("parts", "pieces", "_by_sector")

    def __init__(self, parts: Sequence[Leg]) -> None:
        parts = leg_list(parts, "fuse", "part", LegError, ChargeError, "only legs of one group fuse")
        g = parts[0].symmetry
        signs = [sign_of(p) for p in parts]
        groups: dict[Any, list[tuple[tuple, int]]] = {}
        for combo in itertools.product(*(p.charges for p in parts)):
            q = g._total(combo, signs)
            size = math.prod(p._sectors[c] for p, c in zip(parts, combo))
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
        self.pieces = pieces  # part charges -> (fused charge, start, stop)
        self._by_sector = by_sector  # fused charge -> [(part charges, start, stop), ...]

    def _copy_slots(self) -> tuple[str, ...]:
        return ("symmetry", "_sectors", "_offsets", "parts", "pieces", "_by_sector")

    def pieces_of(self, q: Any) -> list[tuple[tuple, int, int]]:
        """The part-sector tuples stacked in fused sector ``q``, with their ranges (none for
        a charge of the group that is not a sector of this leg)."""
        return self._by_sector.get(checked_charge(self.symmetry, q, "FusedLeg.pieces_of"), [])

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
