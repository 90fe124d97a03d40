"""What a symmetric ``dmrg`` run conserves, in which sector, and from which start state.

``conserve`` names a physical charge (``"Sz"``, ``"parity"``, ``"N"``) whose integer form the
local space declares (``"2Sz"``: twice Sz, TeNPy's convention; ``"parity"``: 0 or 1,
added mod 2; ``"N"``: the particle number of ``"electron"``); ``"auto"`` takes the first
declared charge (in the space's order) the Hamiltonian conserves, or none. The MPO's bond
states get their charges from :func:`mpo_bond_charges` (which raises
:class:`NonConservingError` when ``H`` does not conserve the charge). The
sector is given in the physical unit (``sector=1`` for Sz = 1, ``sector=0.5``; parity 0
or 1; ``N``); by default the value the chain can reach nearest the middle of its range
(the lowest ``|Sz|``: 0, else 1/2; half filling ``N = L`` for electrons) and the even
parity. A start state ``psi0`` must then be a product of basis states (its charge is the
sector); without one the start is a product state spread evenly over the chain.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._errors import InvalidOptionError, NonConservingError
from ._local_ops import CONSERVED_CHARGES, charge_label, check_sector_charge, conserve_candidates, declared_charges
from ._mpo_charges import mpo_bond_charges
from ._sector_dmrg import sector_product_state
from ._symmetric_sites import physical_charge
from ._util import to_numpy
from .structured import SymmetryViolationError

__all__ = ["CONSERVE_CHOICES", "SectorSpec", "check_conserve", "resolve_sector", "start_states"]

CONSERVE_CHOICES = ("auto", "Sz", "parity", "N", "none")


@dataclass(frozen=True)
class SectorSpec:
    """A resolved symmetric run: the physical ``label`` (``"Sz"``), its integer ``charge``
    name (``"2Sz"``), ``unit`` (value = integer / unit), ``modulus``, the per-site basis
    charges ``q``, the MPO bond-state charges and the ``target`` integer charge."""

    label: str
    charge: str
    unit: int
    modulus: int
    q: list[list[int]]
    w_charges: list[np.ndarray]
    target: int

    def value(self, integer: int) -> float:
        return integer / self.unit + 0.0


def check_conserve(conserve: Any) -> str | None:
    """``None``/``"none"`` -> None; else one of :data:`CONSERVE_CHOICES`."""
    if conserve is None:
        return None
    if not isinstance(conserve, str) or conserve not in CONSERVE_CHOICES:
        raise InvalidOptionError(f"dmrg: conserve must be one of {', '.join(map(repr, CONSERVE_CHOICES))} or None, "
                                 f"got {conserve!r}")
    return None if conserve == "none" else conserve


def resolve_sector(conserve: str, sector: Any, local: str | None, ws: Sequence[np.ndarray],
                   psi0_states: list[int] | None) -> SectorSpec | None:
    """The run's :class:`SectorSpec` (None for ``"auto"`` when nothing is conserved)."""
    dims = [w.shape[1] for w in ws]
    names = conserve_candidates(local, dims) if conserve == "auto" else [conserve]
    for phys in names:
        charge, modulus = CONSERVED_CHARGES[phys]
        q = declared_charges(local, dims).get(charge)
        if q is None:
            if conserve == "auto":
                continue
            where = f"local space {local!r}" if local is not None else f"the default local spaces of dimensions {dims}"
            raise InvalidOptionError(f"dmrg: conserve={conserve!r} needs the charge {charge!r}, which {where} does "
                                     "not declare (LocalSpace(..., charges={...}))")
        check_sector_charge(phys, local, q, "dmrg")
        try:
            w_charges = mpo_bond_charges(ws, q, modulus=modulus, what=f"the Hamiltonian ({phys})")
        except NonConservingError:
            if conserve == "auto":
                continue
            raise
        label, unit = charge_label(charge)
        target = _target(phys, sector, unit, modulus, q, psi0_states)
        return SectorSpec(label, charge, unit, modulus, q, w_charges, target)
    return None


def _target(phys: str, sector: Any, unit: int, modulus: int, q: list[list[int]], states: list[int] | None) -> int:
    if states is not None:
        total = sum(qs[s] for qs, s in zip(q, states))
        total = total % modulus if modulus else total
        if sector is not None and physical_charge(sector, phys, unit, modulus, "dmrg: sector") != total:
            raise InvalidOptionError(f"dmrg: psi0 is in the sector {phys} = {total / unit:g}, but sector={sector!r} "
                                     "was asked for; give one of them")
        return total
    if sector is None:
        if modulus:
            return 0
        lo, hi = sum(min(x) for x in q), sum(max(x) for x in q)
        for t in sorted(range(lo, hi + 1), key=lambda t: (abs(2 * t - lo - hi), -t)):
            try:
                sector_product_state(q, t)
                return t
            except ValueError:
                continue
    target = physical_charge(sector, phys, unit, modulus, "dmrg: sector")
    try:
        sector_product_state(q, target, modulus)
    except ValueError:
        raise SymmetryViolationError(
            f"dmrg: the sector {phys} = {sector!r} has no states on this chain of {len(q)} sites (basis charges "
            f"{q[0]} per site in units of 1/{unit}{f', mod {modulus}' if modulus else ''})") from None
    return target


def start_states(psi0: Any) -> list[int]:
    """The basis state of each site of a product-state ``psi0`` (bond dimension 1, one
    nonzero entry per site), else :class:`InvalidOptionError`."""
    states = []
    for i, t in enumerate(psi0.tensors):
        a = np.asarray(to_numpy(t, "dmrg psi0"))
        nz = np.flatnonzero(a)
        if a.shape[0] != 1 or a.shape[2] != 1 or len(nz) != 1:
            raise InvalidOptionError(
                f"dmrg: with conserve=..., psi0 must be a product of basis states (MPS.product_state([...]) of "
                f"indices); site {i} is not (shape {a.shape}, {len(nz)} nonzero entries). Give sector= instead")
        states.append(int(nz[0]))
    return states
