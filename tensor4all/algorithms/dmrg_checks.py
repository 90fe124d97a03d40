"""The checks a DMRG run makes before any sweep, as functions other entry points call too
(``tensor4all.scan`` checks every point with them before any point runs): the schedules of
``max_bond``, ``cutoff``, ``noise`` and ``tol``; the charge a run conserves; the Hamiltonian
(finite, Hermitian, in the float range) and the powers of two that bring its scale to about 1."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..networks.mpo import MPO, require_hermitian
from ..networks.mps import MPS
from ..sites.charges import CONSERVED_CHARGES
from ..tools.checks import check_cutoff, check_finite_arrays, check_positive_int, check_real, to_numpy
from ..tools.errors import InvalidOptionError, NotDifferentiableError, ValueRangeError
from .sector_run import check_conserve

__all__ = [
    "check_schedule",
    "default_conserve",
    "mpo_array",
    "check_hamiltonian",
    "scale_shifts",
    "SCALE_WINDOW",
    "MAX_LOG2_ENERGY",
]


def check_schedule(value: Any, what: str, kind: str) -> None:
    """A number or a non-empty list of them: positive integers (``kind="bond"``), cutoffs in
    ``[0, 1)`` (``"cutoff"``), noise sizes in ``[0, 1)`` (``"noise"``) or finite non-negative
    numbers (``"real"``)."""
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    if not vals:
        raise InvalidOptionError(f"{what} schedule is empty; give a number or a non-empty list")
    for v in vals:
        if kind == "bond":
            check_positive_int(v, what)
        elif kind == "cutoff":
            check_cutoff(v, what)
        elif kind == "noise":  # a size relative to the state
            check_real(
                v,
                f"{what} (a relative size in [0, 1), 1e-4 is typical, or a list of them)",
                low=0.0,
                high=1.0,
                high_open=True,
            )
        else:
            check_real(v, f"{what} (a non-negative number or a list of them)", low=0.0)


def default_conserve(conserve: Any, H: MPO, psi0: MPS | None) -> str | None:
    """The charge a run conserves: ``conserve`` as given (``"none"``: None), or by default what a
    symmetric ``psi0`` or a marked MPO carries (they must agree)."""
    if conserve is not None:
        conserve = check_conserve(conserve)
        if conserve is None and psi0 is not None and psi0.symmetric:
            return None  # dense run from psi0.dense()
        if conserve not in (None, "auto") and psi0 is not None and psi0.symmetric and psi0.conserve != conserve:
            raise InvalidOptionError(f"dmrg: conserve={conserve!r}, but psi0 conserves {psi0.conserve!r}")
        return conserve
    if psi0 is not None and psi0.symmetric:
        if psi0.conserve not in CONSERVED_CHARGES:
            raise InvalidOptionError(
                f"dmrg: psi0 is a symmetric MPS of unknown charge ({psi0.conserve!r}); build it "
                "with MPS.random(..., conserve=...) or MPS.product_state(..., conserve=...)"
            )
        if H.conserve is not None and H.conserve != psi0.conserve:
            raise InvalidOptionError(
                f"dmrg: the MPO conserves {H.conserve!r} but psi0 {psi0.conserve!r}; give conserve=... to choose"
            )
        return psi0.conserve
    return H.conserve


def mpo_array(w: Any) -> np.ndarray:
    try:
        return np.ascontiguousarray(to_numpy(w, "dmrg"))
    except NotDifferentiableError:
        raise NotDifferentiableError(
            "the DMRG energy is differentiable to first order only (Hellmann-Feynman); "
            "higher derivatives would need the derivative of the ground state"
        ) from None


#: the Hamiltonian scales (log2 of the root-mean-square eigenvalue) that the sweeps take as
#: they are; outside, the MPO is divided by a power of two first (the eigensolver and the
#: tolerances have thresholds meant for energies of order one)
SCALE_WINDOW = (-16.0, 32.0)
#: largest log2 of the Hamiltonian scale times the chain length: energies stay below ~2^500
#: (~3e150), so that <H^2> of the variance stays in the float range as well
MAX_LOG2_ENERGY = 500.0


def scale_shifts(ws: list[np.ndarray], log2_scale: float) -> list[int]:
    """Per-site powers of two ``t_i`` (``W_i = 2**t_i W_i''``) that bring the Hamiltonian's
    scale to about 1, or all zeros when it lies in :data:`SCALE_WINDOW` (the usual case).
    The shift is spread evenly over the sites, as ``MPO.from_opsum`` spreads the norm, so
    every site tensor keeps its share (the one-site subspace expansion depends on it)."""
    lo, hi = SCALE_WINDOW
    if not math.isfinite(log2_scale) or lo <= log2_scale <= hi:
        return [0] * len(ws)
    q, r = divmod(int(round(log2_scale)), len(ws))
    return [q + (1 if i < r else 0) for i in range(len(ws))]


def check_hamiltonian(ws: list[np.ndarray]) -> list[int]:
    """Typed errors for a non-finite, non-Hermitian or out-of-range Hamiltonian; returns the
    per-site scale shifts for the sweeps."""
    check_finite_arrays(ws, "dmrg: the Hamiltonian (MPO)")
    log2_scale = require_hermitian(ws, "dmrg")
    if math.isfinite(log2_scale) and log2_scale + math.log2(len(ws)) > MAX_LOG2_ENERGY:
        raise ValueRangeError(
            f"dmrg: the Hamiltonian's scale (root-mean-square eigenvalue ~1e{log2_scale * math.log10(2):.0f}) puts "
            "its energies beyond ~1e150, where <H^2> (the variance) overflows the float range (~1.8e308); divide "
            "the couplings by a common factor and multiply the energy by it"
        )
    return scale_shifts(ws, log2_scale)
