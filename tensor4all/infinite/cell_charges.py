"""The charge an infinite ground-state run conserves (:func:`.idmrg.idmrg`, :func:`.vumps.vumps`):
one choice for both, from ``conserve`` and the cell's MPO.

A conserved infinite run keeps the charge 0 per unit cell. That holds the ground state only where
the symmetry is not broken: a uniform field ``h Sz`` magnetizes it (caught before the run: the
charge reversal, a spin flip, no longer leaves ``H`` unchanged, :func:`reversal_invariant`), and
so does a spontaneously magnetized phase such as the Ising ferromagnet of the XXZ chain at
``Jz < -J``, whose ``H`` is flip-invariant (caught after the run: :func:`symmetry_breaking`)."""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np

from ..algorithms.sector_dmrg import sector_product_state
from ..operators.term_charges import reversal_invariant as chain_reversal_invariant
from ..sites.charges import (
    CONSERVED_CHARGES,
    NonConservingError,
    check_sector_charge,
    conserve_candidates,
    declared_charges,
)
from ..structured import SymmetryViolationError
from ..tools.errors import InvalidOptionError
from .idmrg_windows import cell_bond_charges

__all__ = [
    "CONSERVE_CHOICES",
    "REVERSAL_CELLS",
    "BrokenSymmetryWarning",
    "reversal_invariant",
    "cell_charge",
    "symmetry_breaking",
]


class BrokenSymmetryWarning(UserWarning):
    """``conserve="auto"`` kept a charge whose sector does not hold the ground state (it breaks
    the symmetry: a magnetized phase), found once the conserved run ended above a product
    state; the call ran dense instead."""


#: what ``conserve`` takes
CONSERVE_CHOICES = ("auto", "none", "Sz", "parity")

REVERSAL_CELLS = 3
"""Cells of the window on which :func:`reversal_invariant` compares ``H`` with ``R H R``."""

BELOW = 1e-8
"""How far (relative, at least absolute 1e-8) a product state's energy per site must lie below a
conserved run's for :func:`symmetry_breaking` to call the run's sector wrong: far above both the
runs' tolerances and the rounding."""


def reversal_invariant(Ws: Sequence[np.ndarray], q: Sequence[int], modulus: int) -> bool:
    """Whether the cell MPO ``Ws`` is invariant under the charge reversal applied to every site
    (:func:`~tensor4all.operators.term_charges.reversal_invariant` on a window of
    :data:`REVERSAL_CELLS` cells): then the lowest energies of charges ``+Q`` and ``-Q`` per cell are
    equal and charge 0 per cell is the symmetric choice (a spin chain without a field; a parity always
    reverses to itself). A uniform field ``h Sz`` breaks it, and the ground state then has a
    magnetization that a run of charge 0 per cell cannot reach."""
    chain = list(Ws) * REVERSAL_CELLS
    return chain_reversal_invariant(chain, [list(q)] * len(chain), modulus)


def cell_charge(
    conserve: str | None, local: str, Ws: Sequence[np.ndarray], what: str
) -> tuple[tuple, list[np.ndarray], list[int]] | None:
    """``(charge, cell, states)`` of a run conserving ``conserve`` on the cell MPO ``Ws`` of the
    local space ``local``: ``charge = (label, basis charges, modulus, MPO bond charges)``, the
    cell's MPO tensors (a cell of one site that cannot hold charge 0, such as one spin 1/2,
    doubled) and the product start of charge 0 per cell. None for a dense run: ``"none"``/None, or
    ``"auto"`` where no charge of the local space is conserved by ``H``, left unchanged by the
    charge reversal (:func:`reversal_invariant`) and held at 0 by the cell. ``what`` names the
    caller in the errors of an explicit charge that cannot be kept."""
    if conserve is None or conserve == "none":
        return None
    auto = conserve == "auto"
    Ws = list(Ws)
    d = Ws[0].shape[1]
    for name in conserve_candidates(local, [d]) if auto else [conserve]:
        if name not in ("Sz", "parity"):
            continue
        label, modulus = CONSERVED_CHARGES[name]
        declared = declared_charges(local, [d]).get(label)
        if declared is None:
            raise InvalidOptionError(
                f"{what}: conserve={conserve!r} needs the charge {label!r}, which the local space {local!r} does not "
                "declare; use conserve='none' or 'auto'"
            )
        check_sector_charge(name, local, declared, what)
        q = [int(x) for x in declared[0]]
        if cell_bond_charges(Ws, q, modulus) is None:
            if auto:
                continue
            raise NonConservingError(f"{what}: the Hamiltonian does not conserve {name}; use conserve='none' or 'auto'")
        if auto and not reversal_invariant(Ws, q, modulus):
            continue  # charge 0 per cell need not hold the ground state (a field): run dense
        for cell in [Ws, Ws * 2] if len(Ws) == 1 else [Ws]:
            try:
                states = sector_product_state([q] * len(cell), 0, modulus)
            except ValueError:
                continue
            wq = cell_bond_charges(cell, q, modulus)
            return (name, q, modulus, wq), cell, [int(s) for s in states]
        if auto:  # the cell cannot hold charge 0: run dense
            continue
        raise SymmetryViolationError(
            f"{what}: a cell of {len(Ws)} site(s) with basis charges {q} ({label}) cannot have the charge 0 per cell "
            f"that conserved {what} keeps; use a cell of {2 * len(Ws)} sites or conserve='none'"
        )
    if not auto:
        raise InvalidOptionError(
            f"{what}: conserve={conserve!r} is not available for the local space {local!r}; valid here: "
            f"{', '.join(['auto', 'none'] + [c for c in conserve_candidates(local, [d]) if c in CONSERVE_CHOICES])}"
        )
    return None


def symmetry_breaking(what: str, label: str, energy: float | None, product_energy: float, stacklevel: int) -> bool:
    """Whether a run that kept charge 0 per cell of ``label`` and ended at ``energy`` per site
    (None: in a state without one canonical form) missed the ground state: the best product
    state found (``product_energy``, bond dimension 1, dense) lies lower, so the ground state
    breaks the symmetry (a magnetized phase), or the run stopped far from converged. Warns
    (:class:`BrokenSymmetryWarning`, at the caller ``stacklevel`` frames up) that ``what`` runs dense
    instead."""
    if energy is None:
        ended = "ended in a state whose transfer matrix has two fixed points"
    elif product_energy < energy - BELOW * max(1.0, abs(energy)):
        ended = f"ended at {energy:.10g} per site, above the product state's {product_energy:.10g}"
    else:
        return False
    warnings.warn(
        f"{what}: the run conserving {label} (charge 0 per cell) {ended}: the ground state breaks the symmetry (a "
        "magnetized phase; or the run stopped far from converged), so conserve='auto' runs dense instead "
        "(conserve='none' skips the conserved run)",
        BrokenSymmetryWarning,
        stacklevel=stacklevel + 1,
    )
    return True
