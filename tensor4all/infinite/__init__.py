"""Infinite systems: uniform MPS in the thermodynamic limit.

* :class:`iMPS` -- a unit cell of ``n`` sites in mixed canonical form (``AL``, ``AR``, ``C``, ``AC``);
* :class:`InfiniteMPO`, :func:`infinite_model`, :func:`cell_opsum` -- the cell of a
  translation-invariant Hamiltonian (a cell OpSum, a model of :mod:`tensor4all.models`, a lattice
  with one open direction);
* :func:`vumps` -- the variational ground state (VUMPS, with subspace expansion), dense or on
  charge sectors (``conserve="Sz"``);
* :func:`idmrg` -- the ground state by McCulloch's two-site iDMRG, dense or on charge sectors
  (``conserve="Sz"``), with :class:`IDMRGResult` and its per-sweep :class:`IDMRGRecord`;
* :func:`itebd` -- real and imaginary time evolution (iTEBD in Hastings' form);
* :func:`itdvp` -- real and imaginary time evolution by TDVP on the uniform MPS, with
  :class:`ITDVPResult`;
* measurements from the transfer matrix: :func:`expect`, :func:`correlation`, :func:`string_order`,
  :func:`transfer_spectrum`, :func:`is_injective`, :func:`correlation_length` (per operator channel),
  :func:`extrapolate_correlation_length`, :func:`structure_factor`, :func:`energy_per_site`;
* :func:`fit_correlation_length` -- the correlation length fitted to ``<op_0 op_r>`` at intermediate
  distances (``A K_0(r/xi)`` as White and Huse, or ``A exp(-r/xi)``);
* derivatives at the fixed point: ``tidu.grad`` of :func:`energy_per_site` (and of ``vumps(...).energy``)
  in the couplings (Hellmann-Feynman) and of :func:`fixed_point_correlation_length` (implicit
  differentiation of the VUMPS fixed point).

Modules, bottom to top: ``tmaps`` (transfer maps and their dominant eigenvectors), ``gauge``
(canonical forms, polar updates), ``imps``, ``impo``, ``transfer`` (measurements), ``fits`` (fitted correlation lengths), ``energy``,
``environments`` (fixed-point MPO environments, effective Hamiltonians), ``vumps_local``,
``vumps_blocks`` and ``vumps_sectors`` (VUMPS on charge sectors), ``cell_charges`` (the charge a
run keeps), ``vumps``, ``itebd``,
``implicit``; ``idmrg_windows`` (the two-site iDMRG step, dense and on charge sectors) and ``idmrg``.
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from .cell_charges import BrokenSymmetryWarning
from .energy import energy_per_site
from .fits import CorrelationFit, fit_correlation_length, fit_decay
from .impo import InfiniteMPO, cell_opsum, infinite_model
from .idmrg import IDMRGRecord, IDMRGResult, idmrg
from .implicit import fixed_point_correlation_length
from .imps import iMPS
from .itdvp import ITDVPResult, itdvp
from .itebd import ITEBDResult, itebd
from .transfer import (
    correlation,
    correlation_length,
    expect,
    extrapolate_correlation_length,
    string_order,
    structure_factor,
    transfer_spectrum,
    is_injective,
)
from .vumps import VUMPSRecord, VUMPSResult, product_energy, vumps

__all__ = [
    "iMPS",
    "InfiniteMPO",
    "infinite_model",
    "cell_opsum",
    "vumps",
    "VUMPSResult",
    "VUMPSRecord",
    "idmrg",
    "IDMRGResult",
    "IDMRGRecord",
    "itebd",
    "ITEBDResult",
    "itdvp",
    "ITDVPResult",
    "expect",
    "correlation",
    "string_order",
    "transfer_spectrum",
    "is_injective",
    "correlation_length",
    "extrapolate_correlation_length",
    "structure_factor",
    "energy_per_site",
    "fixed_point_correlation_length",
    "fit_correlation_length",
    "fit_decay",
    "CorrelationFit",
    "BrokenSymmetryWarning",
    "product_energy",
]


def __dir__() -> list[str]:
    """The public names and the public submodules."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
