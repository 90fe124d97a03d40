"""What a symmetric ``dmrg`` run conserves, in which sector, and from which start state.

``conserve`` names a physical charge (``"Sz"``, ``"parity"``, ``"N"``, ``"N,Sz"``) whose integer
form the local space declares (``"2Sz"``: twice Sz, TeNPy's convention; ``"parity"``: 0 or 1,
added mod 2; ``"N"``: the particle number of ``"electron"``; ``"N,Sz"`` both, packed as one
integer, :mod:`._charges`); ``"auto"`` takes the first declared charge the Hamiltonian
conserves (products first, then in the space's order), or none; where it also chooses the sector
(no ``sector``, no product-state ``psi0``), a charge with an ``Sz`` part only if the spin flip leaves
``H`` unchanged (no field; ``"N,Sz"`` then falls back to ``"N"``, ``"Sz"`` to a dense run). The MPO's bond
states get their charges from :func:`mpo_bond_charges` (which raises
:class:`NonConservingError` when ``H`` does not conserve the charge). The
sector is given in the physical unit (``sector=1`` for Sz = 1, ``sector=0.5``; parity 0
or 1; ``N``; ``{"N": 8, "Sz": 0}`` or ``(8, 0)``); by default the value the chain can reach
nearest the middle of its range (the lowest ``|Sz|``: 0, else 1/2; half filling ``N = L`` for
electrons; for ``"N,Sz"`` half filling, then the lowest ``|Sz|`` there) and the even parity. A start state ``psi0`` must then be a product of basis states (its charge is the
sector); without one the start is a product state spread evenly over the chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..tools.errors import InvalidOptionError
from ..sites.charges import NonConservingError
from ..sites.charges import (
    CONSERVED_CHARGES,
    charge_label,
    charge_sector,
    charge_value,
    check_sector_charge,
    conserve_candidates,
    declared_charges,
    default_charge,
    physical_charge,
)
from ..operators.term_charges import mpo_bond_charges, reversal_invariant
from .sector_dmrg import sector_product_state, suffix_totals
from ..tools.checks import to_numpy
from ..structured import SymmetryViolationError

__all__ = ["CONSERVE_CHOICES", "SectorSpec", "check_conserve", "resolve_sector", "start_states"]

CONSERVE_CHOICES = ("auto", "Sz", "parity", "N", "N,Sz", "none")


@dataclass(frozen=True)
class SectorSpec:
    """A resolved symmetric run: the physical ``label`` (``"Sz"``; ``"N,Sz"``), its integer
    ``charge`` name (``"2Sz"``; ``"N,2Sz"``, packed), ``unit`` (value = integer / unit; a tuple
    per part for a product), ``modulus``, the per-site basis charges ``q``, the MPO bond-state
    charges and the ``target`` integer charge."""

    label: str
    charge: str
    unit: Any
    modulus: int
    q: list[list[int]]
    w_charges: list[np.ndarray]
    target: int

    @property
    def parts(self) -> int:
        """The number of parts of the charge (2 for ``"N,Sz"``, else 1)."""
        return len(self.unit) if isinstance(self.unit, tuple) else 1

    def value(self, integer: int) -> Any:
        return charge_value(integer, self.unit)

    def sector(self, integer: int) -> dict[str, Any]:
        """``{label: value}``: ``{"Sz": 0.5}``, ``{"N": 8, "Sz": 0.0}``."""
        return charge_sector(integer, self.label, self.unit)


def check_conserve(conserve: Any) -> str | None:
    """``None``/``"none"`` -> None; else one of :data:`CONSERVE_CHOICES`."""
    if conserve is None:
        return None
    if not isinstance(conserve, str) or conserve not in CONSERVE_CHOICES:
        raise InvalidOptionError(
            f"dmrg: conserve must be one of {', '.join(map(repr, CONSERVE_CHOICES))} or None, got {conserve!r}"
        )
    return None if conserve == "none" else conserve


def resolve_sector(
    conserve: str, sector: Any, local: str | None, ws: Sequence[np.ndarray], psi0_states: list[int] | None
) -> SectorSpec | None:
    """The run's :class:`SectorSpec` (None for ``"auto"`` when nothing is conserved)."""
    dims = [w.shape[1] for w in ws]
    names = conserve_candidates(local, dims) if conserve == "auto" else [conserve]
    chooses = conserve == "auto" and sector is None and psi0_states is None
    for phys in names:
        charge, modulus = CONSERVED_CHARGES[phys]
        q = declared_charges(local, dims).get(charge)
        if q is None:
            if conserve == "auto":
                continue
            where = f"local space {local!r}" if local is not None else f"the default local spaces of dimensions {dims}"
            raise InvalidOptionError(
                f"dmrg: conserve={conserve!r} needs the charge {charge!r}, which {where} does "
                "not declare (LocalSpace(..., charges={...}))"
            )
        check_sector_charge(phys, local, q, "dmrg")
        try:
            w_charges = mpo_bond_charges(ws, q, modulus=modulus, what=f"the Hamiltonian ({phys})", charge=charge)
        except NonConservingError:
            if conserve == "auto":
                continue
            raise
        if chooses and not _default_sector_symmetric(phys, modulus, local, dims, ws):
            continue  # no symmetry says the default sector holds the ground state: conserve less (or run dense)
        label, unit = charge_label(charge)
        target = _target(phys, sector, unit, modulus, q, psi0_states)
        return SectorSpec(label, charge, unit, modulus, q, w_charges, target)
    return None


def _default_sector_symmetric(
    phys: str, modulus: int, local: str | None, dims: list[int], ws: Sequence[np.ndarray]
) -> bool:
    """Whether ``conserve="auto"`` may run ``phys`` in its default sector: a charge with an ``Sz`` part
    only where the spin flip (``2Sz -> -2Sz``, :func:`~tensor4all.operators.term_charges.reversal_invariant`)
    leaves ``H`` unchanged, so that ``+Sz`` and ``-Sz`` have the same lowest energy and the lowest
    ``|Sz|`` is the symmetric choice. In a field the ground state is magnetized, and the default
    sector would hold an excited state (the Heisenberg chain L = 8 at h = 1.5: -3.37 in Sz = 0, the
    ground state -4.83 in Sz = 2). A Z_n charge (the parity) never: no symmetry of the MPO says
    which of its sectors holds the ground state (the TFIM ``-J XX - g Z`` has it in the odd
    parity for g < 0 on an odd chain: L = 7, g = -0.7, -7.1896 against -7.1037 in the even one),
    and a dense run costs about one conserved run there (a parity run keeps half the states per
    block). The particle number keeps its default, half filling (fermion models are run at a
    given filling; documented)."""
    if modulus:
        return False
    if "Sz" not in phys.split(","):
        return True
    q = declared_charges(local, dims).get("2Sz")
    return q is not None and reversal_invariant([np.asarray(w) for w in ws], q, 0)


def _target(phys: str, sector: Any, unit: Any, modulus: int, q: list[list[int]], states: list[int] | None) -> int:
    parts = len(unit) if isinstance(unit, tuple) else 1
    if states is not None:
        total = sum(qs[s] for qs, s in zip(q, states))
        total = total % modulus if modulus else total
        if sector is not None and physical_charge(sector, phys, unit, modulus, "dmrg: sector") != total:
            raise InvalidOptionError(
                f"dmrg: psi0 is in the sector {_shown(total, phys, unit)}, but sector={sector!r} "
                "was asked for; give one of them"
            )
        return total
    if parts > 1:  # a product: the reachable totals as a set (about L^2 of them)
        reach = suffix_totals(q)[0]
        if sector is None:
            return default_charge(reach, unit)
        target = physical_charge(sector, phys, unit, modulus, "dmrg: sector")
        if target not in reach:
            raise SymmetryViolationError(
                f"dmrg: the sector {phys} = {sector!r} has no states on this chain of {len(q)} sites (basis charges "
                f"{[charge_value(x, unit) for x in q[0]]} per site)"
            )
        return target
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
            f"{q[0]} per site in units of 1/{unit}{f', mod {modulus}' if modulus else ''})"
        ) from None
    return target


def _shown(total: int, phys: str, unit: Any) -> str:
    return ", ".join(f"{k} = {v:g}" for k, v in charge_sector(total, phys, unit).items())


def start_states(psi0: Any, conserve: str = "...", origin: str = "conserve=...") -> list[int]:
    """The basis state of each site of a product-state ``psi0`` (bond dimension 1, one
    nonzero entry per site), else :class:`InvalidOptionError` naming where the conserved
    charge came from (``origin``: the ``conserve=`` argument or the MPO) and the ways out."""
    states = []
    for i, t in enumerate(psi0.tensors):
        a = np.asarray(to_numpy(t, "dmrg psi0"))
        nz = np.flatnonzero(a)
        if a.shape[0] != 1 or a.shape[2] != 1 or len(nz) != 1:
            raise InvalidOptionError(
                f"dmrg: the run conserves {conserve!r} ({origin}), so a dense psi0 must be a product of basis "
                f"states; site {i} is not (shape {a.shape}, {len(nz)} nonzero entries). Give a symmetric start "
                f"(MPS.random(L, conserve={conserve!r}, ...) or MPS.product_state([...], conserve={conserve!r})), "
                "sector=... with no psi0, or conserve='none' to run dense from this psi0"
            )
        states.append(int(nz[0]))
    return states
