"""Which charges a chain can conserve, and how a sector is written.

:data:`CONSERVED_CHARGES` maps the physical name a user gives (``conserve="Sz"``) to the
integer charge a local space declares (``"2Sz"``, twice Sz: TeNPy's convention) and its
modulus (0 for U(1), ``n`` for Z_n). A physical value is the integer divided by its
``unit`` (:func:`charge_label`: ``"2Sz"`` is ``Sz`` in unit 2).

Product charges: ``conserve="N,Sz"`` conserves the particle number and Sz together (the
group U(1) x U(1) of ITensor's ``conserve_qns`` and TeNPy's ``cons_N="N", cons_Sz="Sz"``). The
sector engine and the symmetric sites add charges, compare them and negate them, never more,
so a product charge travels through them as one integer: ``(N, 2Sz)`` is packed as
``N * B + 2Sz`` with ``B = 2**24`` (:func:`pack`). Packing is an injective group homomorphism
on every charge a chain of fewer than ``B / 4`` sites can carry (each part's partial sums stay
below ``B / 2`` in size), so sums, differences and equality of packed charges are those of the
pairs; :func:`unpack` recovers the pair. Users see pairs (``sector={"N": 8, "Sz": 0}``,
``entanglement_spectrum`` keys ``(N, Sz)``), never packed integers.

The sector engine groups the basis states of one charge in basis order, so the states of one
charge must be next to each other (:func:`check_sector_charge`): the electron's ``2Sz = (0, 1,
-1, 0)`` alone is not, but ``(N, 2Sz)`` is (four distinct charges).
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any, Mapping, Sequence

import numpy as np

from ..tools.errors import InvalidOptionError, Tensor4allError, Tensor4allTypeError
from .local_spaces import UnknownLocalSpaceError
from .local_spaces import LOCAL_SPACES, default_local_space

__all__ = [
    "NonConservingError",
    "CONSERVED_CHARGES",
    "PRODUCT_CHARGES",
    "PACK_BASE",
    "pack",
    "unpack",
    "charge_label",
    "charge_parts",
    "declared_charges",
    "conserve_candidates",
    "check_sector_charge",
    "physical_charge",
    "charge_value",
    "charge_sector",
    "default_charge",
]


class NonConservingError(Tensor4allError, ValueError):
    """A Hamiltonian that does not conserve the charge a symmetric run asks for
    (``conserve="Sz"`` with a transverse field, a term without its Hermitian partner)."""


#: the charges a run can conserve: physical name -> (the declared integer charge, its modulus:
#: 0 for U(1), n for Z_n). New names go at the end: ``MPS.save`` stores the position.
CONSERVED_CHARGES = {"Sz": ("2Sz", 0), "parity": ("parity", 2), "N": ("N", 0), "N,Sz": ("N,2Sz", 0)}
#: the product charges: declared name -> the declared charges it packs, in order
PRODUCT_CHARGES = {"N,2Sz": ("N", "2Sz")}
#: the base of :func:`pack`
PACK_BASE = 1 << 24


def pack(parts: Sequence[int]) -> int:
    """The integers ``parts`` (``(N, 2Sz)``) as one integer, ``sum_k parts[k] B^(n-1-k)``."""
    q = 0
    for p in parts:
        q = q * PACK_BASE + int(p)
    return q


def unpack(q: int, n: int) -> tuple[int, ...]:
    """The ``n`` parts of a packed charge (the inverse of :func:`pack` on charges of size below
    ``B / 2`` per part)."""
    parts = []
    q = int(q)
    for _ in range(n - 1):
        r = (q + PACK_BASE // 2) % PACK_BASE - PACK_BASE // 2
        parts.append(r)
        q = (q - r) // PACK_BASE
    parts.append(q)
    return tuple(reversed(parts))


def charge_parts(name: str) -> tuple[str, ...]:
    """The declared charges of ``name``: its parts for a product (``"N,2Sz"`` -> ``("N", "2Sz")``),
    else ``(name,)``."""
    return PRODUCT_CHARGES.get(name, (name,))


def _single_label(name: str) -> tuple[str, int]:
    m = re.fullmatch(r"([1-9][0-9]*)(\D.*)", name)
    return (m.group(2), int(m.group(1))) if m else (name, 1)


def charge_label(name: str) -> tuple[str, Any]:
    """How a charge is reported: ``"2Sz"`` (twice the physical charge, TeNPy's integer
    convention) as ``("Sz", 2)``, i.e. the value divided by 2; any other name (``"N"``,
    ``"parity"``) as itself, in unit 1; a product ``"N,2Sz"`` as ``("N,Sz", (1, 2))``."""
    if name in PRODUCT_CHARGES:
        labels = [_single_label(p) for p in PRODUCT_CHARGES[name]]
        return ",".join(lab for lab, _ in labels), tuple(u for _, u in labels)
    return _single_label(name)


def declared_charges(local: str | None, dims: Sequence[int]) -> dict[str, list[tuple[int, ...]]]:
    """The charges ``name -> per-site integer charges`` declared for a chain of sites of
    dimensions ``dims``: by the space named ``local`` in :data:`LOCAL_SPACES`, or (``local``
    None, an MPO built from tensors) by the default space of each site's dimension; only
    charges every site declares. Products of declared charges (:data:`PRODUCT_CHARGES`) come
    last, packed (:func:`pack`)."""
    out = _declared_singles(local, dims)
    for name, parts in PRODUCT_CHARGES.items():
        if all(p in out for p in parts):
            out[name] = [tuple(pack(v) for v in zip(*(out[p][i] for p in parts))) for i in range(len(dims))]
    return out


def _declared_singles(local: str | None, dims: Sequence[int]) -> dict[str, list[tuple[int, ...]]]:
    if local is not None:
        space = LOCAL_SPACES.get(local)
        if space is None or any(d != space.dim for d in dims):
            return {}
        return {name: [q] * len(dims) for name, q in space.charges.items()}
    try:
        spaces = [default_local_space(d) for d in dims]
    except UnknownLocalSpaceError:
        return {}
    names = set.intersection(*(set(sp.charges) for sp in spaces)) if spaces else set()
    return {name: [sp.charges[name] for sp in spaces] for name in sorted(names)}


def conserve_candidates(local: str | None, dims: Sequence[int]) -> list[str]:
    """The physical names of :data:`CONSERVED_CHARGES` whose charge the chain declares, products
    first (``"electron"``: ``"N,Sz"``, then ``N`` before ``Sz`` as the space declares them), and
    only those the sector engine can run (:func:`check_sector_charge`): what ``conserve="auto"``
    tries, first to last."""
    physical = {charge: name for name, (charge, _) in CONSERVED_CHARGES.items()}
    declared = declared_charges(local, dims)
    order = [c for c in declared if c in PRODUCT_CHARGES] + [c for c in declared if c not in PRODUCT_CHARGES]
    return [physical[c] for c in order if c in physical and _contiguous(declared[c])]


def _contiguous(q: Sequence[Sequence[int]]) -> bool:
    """Whether on every site the basis states of each charge are next to each other."""
    for qs in q:
        seen = [v for k, v in enumerate(qs) if k == 0 or v != qs[k - 1]]
        if len(seen) != len(set(seen)):
            return False
    return True


def check_sector_charge(conserve: str, local: str | None, q: Sequence[Sequence[int]], what: str) -> None:
    """:class:`InvalidOptionError` unless the sector engine can run the charge ``conserve`` with the
    per-site basis charges ``q``: its physical legs group the basis states of one charge in
    basis order, so those must be contiguous (the ``"electron"`` space's ``2Sz = (0, 1, -1, 0)``
    is not: conserve ``"N,Sz"`` or ``"N"`` there)."""
    if not _contiguous(q):
        bad = next(list(qs) for qs in q if not _contiguous([qs]))
        where = f"the local space {local!r}" if local is not None else "these sites"
        hint = " ('N,Sz': N and Sz together, or 'N')" if local in ("electron", "tj") else ""
        raise InvalidOptionError(
            f"{what}: conserve={conserve!r} cannot run in sectors on {where}: its basis states of one {conserve} "
            f"are not next to each other (basis charges {bad}); conserve another charge{hint} or none"
        )


def _is_number(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (numbers.Real, np.number))


def _one_charge(value: Any, label: str, unit: int, what: str) -> int:
    if not _is_number(value):
        raise Tensor4allTypeError(f"{what} must be a number ({label}), got {type(value).__name__} {value!r}")
    x = float(value) * unit
    if not math.isfinite(x) or abs(x - round(x)) > 1e-9:
        raise InvalidOptionError(f"{what} {label} = {value!r} is not a multiple of 1/{unit}")
    return int(round(x))


def physical_charge(value: Any, label: str, unit: Any, modulus: int, what: str) -> int:
    """The integer charge of a physical value (``Sz = 0.5`` with ``unit`` 2 is 1); with a
    ``modulus`` (a Z_n charge such as the parity) one of ``0 .. modulus - 1``; for a product
    (``unit`` a tuple, ``label`` ``"N,Sz"``) the packed integer of a pair ``(N, Sz)`` or a mapping
    ``{"N": ..., "Sz": ...}``. Typed errors for a non-number, a value off the ``1/unit`` grid, a
    Z_n value out of its range (``sector=2`` for the parity was taken as 0), a pair of the wrong
    length or names."""
    if not isinstance(unit, tuple):
        n = _one_charge(value, label, unit, what)
        if modulus and not 0 <= n < modulus:
            raise InvalidOptionError(
                f"{what}: the {label} is one of {', '.join(map(str, range(modulus)))} (a charge mod {modulus}), "
                f"got {value!r}"
            )
        return n
    labels = label.split(",")
    if isinstance(value, Mapping):
        if set(value) != set(labels):
            raise InvalidOptionError(
                f"{what} must give {', '.join(labels)} (a mapping "
                f"{{{', '.join(repr(lab) + ': ...' for lab in labels)}}}), got keys "
                f"{sorted(map(str, value))}"
            )
        values = [value[lab] for lab in labels]
    elif isinstance(value, (tuple, list)) and len(value) == len(labels):
        values = list(value)
    else:
        raise Tensor4allTypeError(
            f"{what} must be a pair ({label}) or a mapping {{{', '.join(map(repr, labels))}: "
            f"...}}, got {type(value).__name__} {value!r}"
        )
    return pack([_one_charge(v, lab, u, what) for v, lab, u in zip(values, labels, unit)])


def charge_value(q: int, unit: Any) -> Any:
    """The physical value of the integer charge ``q``: ``q / unit``, or for a product the tuple of
    its parts' values (``(N, Sz)``)."""
    if isinstance(unit, tuple):
        return tuple(p / u + 0.0 for p, u in zip(unpack(q, len(unit)), unit))
    return q / unit + 0.0


def charge_sector(q: int, label: str, unit: Any) -> dict[str, Any]:
    """``{label: value}`` of the integer charge ``q`` (``{"Sz": 0.5}``; a product
    ``{"N": 8, "Sz": 0.0}``)."""
    if isinstance(unit, tuple):
        return dict(zip(label.split(","), charge_value(q, unit)))
    return {label: charge_value(q, unit)}


def default_charge(reach: Sequence[int], unit: Any) -> int:
    """The default sector among the reachable U(1) charges ``reach``: the one nearest the middle
    of the range (the lowest ``|Sz|``: 0, else 1/2; half filling), ties to the larger; for a
    product, the nearest to the middle part by part in order (``N`` first, then ``2Sz``, whose
    middle is 0: half filling at the lowest ``|Sz|``), remaining ties to the larger parts."""
    if not isinstance(unit, tuple):
        middle = min(reach) + max(reach)
        return min(reach, key=lambda q: (abs(2 * q - middle), -q))
    parts = {q: unpack(q, len(unit)) for q in reach}
    lo = [min(p[k] for p in parts.values()) for k in range(len(unit))]
    hi = [max(p[k] for p in parts.values()) for k in range(len(unit))]
    return min(
        reach,
        key=lambda q: tuple(abs(2 * p - a - b) for p, a, b in zip(parts[q], lo, hi)) + tuple(-p for p in parts[q]),
    )
