"""Thermal states by purification: :func:`thermal_state` cools the infinite-temperature
purification in imaginary time with the existing engines (``tebd`` or ``tdvp`` on the doubled
chain of :mod:`.purified`; no evolution code of its own) and reads ``ln Z`` from the norms.

Bookkeeping of ``ln Z``: the purification ``|psi(beta)> = e^{-beta H/2} |psi_0>`` of a normalized
start with ``Tr_sector 1 = e^{ln N}`` states has ``Z(beta) = e^{ln N} ||psi(beta)||^2``; every
step of the evolution normalizes the state and records the factor it removed
(``EvolutionRecord.norm``), so ``ln Z = ln N + 2 sum_k ln norm_k`` over the steps so far, exact
in logarithms (no overflow at low temperature) up to the truncation of each step.

The step: ``dbeta`` is a step in ``beta`` (the purification is evolved by ``dbeta / 2``),
TEBD's fourth-order Suzuki splitting by default (its error on ``ln Z`` is ``O(dbeta^4)``; the
measured figures are in ``docs/how-to/thermal.md``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable

import numpy as np

from ..algorithms.apply import apply
from ..algorithms.dmrg_charges import measured_sector
from ..algorithms.evolution import EvolutionResult
from ..algorithms.tdvp import tdvp
from ..algorithms.tebd import tebd
from ..networks.mpo import MPO, require_hermitian
from ..networks.mps import MPS
from ..operators.gates import SPLITTINGS
from ..sites.charges import CONSERVED_CHARGES
from ..tools.checks import (
    check_bool,
    check_cutoff,
    check_finite_arrays,
    check_positive_int,
    check_real,
    check_steps,
    concrete,
)
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads, thread_policy
from .purified import infinite_temperature_sites, purified_space
from .results import ThermalResult

__all__ = [
    "thermal_state",
    "beta_grid",
    "purified_hamiltonian",
    "check_thermal_hamiltonian",
    "check_conserve",
    "check_method_options",
    "conserved_charges",
    "thermal_start",
    "tdvp_start",
    "METHODS",
]

#: the imaginary-time engines :func:`thermal_state` can cool with
METHODS = ("tebd", "tdvp")


def _arrays(H: MPO) -> list[np.ndarray] | None:
    """The site tensors of ``H`` as NumPy arrays (a traced MPO: their concrete values), or None for an
    abstract one (under ``tenferro.jit``)."""
    ws = [concrete(w) for w in H.tensors]
    return None if any(w is None for w in ws) else [np.asarray(w) for w in ws]


@thread_policy()  # the Hermiticity test's QRs
def check_thermal_hamiltonian(H: Any, what: str) -> MPO:
    """``H`` if it is an MPO compiled from an OpSum on a named local space (its terms are
    compiled again on the doubled sites) and Hermitian (:class:`NonHermitianError` otherwise, by
    dmrg's measure and threshold: ``e^{-beta H}`` of a non-Hermitian ``H`` is no thermal state, and
    the purification would compute ``Tr(e^{-beta H^dagger / 2} e^{-beta H / 2})``)."""
    if not isinstance(H, MPO):
        raise Tensor4allTypeError(
            f"{what}: H must be an MPO compiled from an OpSum (tensor4all.models, MPO.from_opsum), got {type(H).__name__}"
        )
    if H.opsum is None or H.local is None:
        raise InvalidOptionError(
            f"{what}: H was built from tensors, so its terms are unknown; build it with MPO.from_opsum "
            "or a tensor4all.models function (the purification compiles H.opsum on physical + ancilla sites)"
        )
    ws = _arrays(H)
    if ws is not None:
        check_finite_arrays(ws, f"{what}: the Hamiltonian (MPO)")
        require_hermitian(ws, what)
    return H


@thread_policy()
def conserved_charges(H: MPO) -> list[str] | None:
    """The charges of ``H``'s local space that ``H`` conserves (``"Sz"``, ``"N"``, ``"parity"``;
    a product charge part by part), decided from the MPO itself (``[H, Q] = 0``, no dense matrix);
    None for an abstract MPO (nothing to decide from)."""
    ws = _arrays(H)
    if ws is None:
        return None
    start = [np.eye(w.shape[1])[:, :1].reshape(1, w.shape[1], 1) for w in ws]
    return sorted(measured_sector(ws, start, H.local))


def thermal_start(H: MPO, charge: str | None, sector: Any, what: str) -> tuple[Any, float]:
    """The infinite-temperature purification of ``H``'s sites and ``ln`` of its number of states
    (:func:`.purified.infinite_temperature_sites`); a ``sector`` of a charge ``H`` does not conserve
    raises :class:`~tensor4all.NonConservingError`."""
    conserved = None if sector is None else conserved_charges(H)
    return infinite_temperature_sites(H.local, H.L, charge, sector, what, conserved=conserved)


def tdvp_start(psi: MPS, H2: MPO, max_bond: int, cutoff: float) -> MPS:
    """The start ``psi`` of a two-site TDVP cooling with its bonds grown by the Krylov vector
    ``H2 |psi>`` at zero weight: ``psi + 0 * H2 |psi> / ||H2 |psi>||``, the exact direct sum (the
    zero on its first site), the same state as ``psi`` to the last bit.

    Why: the infinite-temperature purification has every bond 1, and two-site TDVP projects ``H``
    onto the tangent space of the current state, which from a product state holds only terms on
    neighbouring sites; a term on sites further apart (a ladder's rungs in MPS order, a J2 coupling)
    is then missed in the first steps, an error of order ``dbeta`` that does not shrink with the step
    (the fermion ladder ``ladder(3)`` to ``beta = 1``: ``ln Z`` off by 3.6e-2 at ``dbeta = 0.1`` and
    9e-3 at ``dbeta = 0.025``). Grown by ``H2 |psi>`` (the global subspace expansion of Yang and White,
    Phys. Rev. B 102, 094315 (2020), with one Krylov vector), the start's right bases (the engine
    orthonormalizes them by QR from the right, which keeps every direction of the direct sum; the zero
    weight sits on site 0, the first centre) hold the image of every term, so the first step
    evolves under all of ``H`` and the cooling keeps the order of the integrator. The directions that
    carry no weight after the step are dropped by its truncation (``cutoff``, ``max_bond``)."""
    phi = apply(H2, psi, max_bond=max_bond, cutoff=cutoff)
    nrm = float(phi.norm())
    if not nrm > 0.0:  # H = 0: nothing to grow
        return psi
    return psi + 0.0 * (phi / nrm)


def check_method_options(method: Any, order: Any, splitting: Any, what: str) -> str:
    """``method`` checked, and ``order`` and ``splitting`` valid and meant for it: both are TEBD's, so
    ``method="tdvp"`` (second order, no splitting) refuses a value other than the default."""
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidOptionError(f"{what}: method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if isinstance(order, bool) or order not in (2, 4):
        raise InvalidOptionError(f"{what}: order must be 2 or 4, got {order!r}")
    if not isinstance(splitting, str) or splitting not in SPLITTINGS:
        raise InvalidOptionError(
            f"{what}: splitting must be one of {', '.join(map(repr, SPLITTINGS))}, got {splitting!r}"
        )
    if method == "tdvp":
        given = [
            f"{k}={v!r}" for k, v, default in (("order", order, 4), ("splitting", splitting, "brick")) if v != default
        ]
        if given:
            raise InvalidOptionError(
                f"{what}: {' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} to method='tebd' only (the Suzuki order and the bond "
                "splitting of TEBD); method='tdvp' is two-site TDVP, second order in dbeta, with no splitting: "
                "drop it, or use method='tebd'"
            )
    return method


def beta_grid(beta: Any, dbeta: Any, what: str) -> tuple[float, float, int]:
    """``(beta, dbeta, n)`` with ``beta = n dbeta``: ``beta > 0`` and ``dbeta > 0`` finite, and ``dbeta``
    dividing ``beta`` within a relative ``1e-9`` into at most :data:`~tensor4all.tools.checks.MAX_GRID_STEPS` steps
    (else :class:`InvalidOptionError` naming both)."""
    beta = check_real(beta, f"{what}: beta (the inverse temperature, a positive number)")
    dbeta = check_real(dbeta, f"{what}: dbeta (the step in beta, a positive number)")
    if not beta > 0.0:
        raise InvalidOptionError(
            f"{what}: beta must be positive (beta = 0 is the infinite-temperature start), got {beta!r}"
        )
    if not dbeta > 0.0:
        raise InvalidOptionError(f"{what}: dbeta must be positive, got {dbeta!r}")
    ratio = check_steps(beta, dbeta, what, "beta", "dbeta")  # at most MAX_GRID_STEPS; a subnormal dbeta too
    n = round(ratio)
    if n < 1 or abs(ratio - n) > 1e-9 * max(1.0, ratio):
        raise InvalidOptionError(
            f"{what}: dbeta = {dbeta!r} does not divide beta = {beta!r} (beta / dbeta = {ratio:.6g}); "
            "give a beta that is a whole number of steps"
        )
    return n * dbeta, dbeta, n


def check_conserve(conserve: Any, H: MPO, what: str) -> str | None:
    if conserve is None:
        return H.conserve
    if conserve == "none":
        return None
    if not isinstance(conserve, str) or conserve not in CONSERVED_CHARGES:
        raise InvalidOptionError(
            f"{what}: conserve must be one of {', '.join(map(repr, CONSERVED_CHARGES))}, 'none' or None "
            f"(the charge the MPO conserves), got {conserve!r}"
        )
    return conserve


def purified_hamiltonian(H: MPO, conserve: str | None = None) -> MPO:
    """``H (x) 1`` on the doubled sites: ``H.opsum`` compiled on :func:`purified_space` of ``H.local``
    (``conserve`` marks the doubled charge, ``q_p - q_a``)."""
    space = purified_space(H.local)
    return MPO.from_opsum(H.opsum, H.L, space.name, conserve=conserve)


@keyword_hints
def thermal_state(
    H: MPO,
    beta: float,
    *,
    dbeta: float = 0.1,
    method: str = "tebd",
    order: int = 4,
    splitting: str = "brick",
    max_bond: int = 128,
    cutoff: float = 1e-12,
    conserve: str | None = None,
    sector: Any = None,
    observables: dict[str, Any] | None = None,
    every: int = 1,
    threads: int | None = None,
    progress: bool = False,
    callback: Callable[[Any], Any] | None = None,
) -> ThermalResult:
    """Cool the purification of ``H`` from ``beta = 0`` to ``beta`` in steps ``dbeta``: ``ln Z``,
    the energy and ``observables`` along the grid ``0, every dbeta, ..., beta``.

    Args:
        H: the Hamiltonian, an :class:`MPO` compiled from an OpSum (``tensor4all.models``,
            ``MPO.from_opsum``); a chemical potential or a field is a term of it (grand canonical:
            ``models.hubbard(L, mu=U/2)``).
        beta: the final inverse temperature, ``> 0``, a whole number of steps ``dbeta``.
        dbeta: the step in beta; each step applies ``e^{-dbeta H / 2}`` to the purification.
        method: ``"tebd"`` (default; ``order`` 2 or 4, Suzuki's fourth order by default) or
            ``"tdvp"`` (two-site TDVP, second order in ``dbeta``; any MPO, longer-range terms too: the
            start's bonds are grown by ``H |psi_0>`` at zero weight, :func:`tdvp_start`; ``order``
            and ``splitting`` are TEBD's, and a value other than their default raises
            :class:`InvalidOptionError` with ``"tdvp"``).
        splitting: TEBD's ``"brick"`` (default: even and odd bonds) or ``"sweep"`` (each bond in turn,
            a sweep of half steps to the right and back: TeNPy's ``PurificationTEBD``), see
            :func:`tensor4all.tebd`.
        max_bond, cutoff: the truncation of every step (as ``tebd``/``tdvp``).
        conserve: the charge to conserve on the doubled sites (``"Sz"``, ``"N"``, ``"N,Sz"``,
            ``"parity"``: ``q_p - q_a``, which the maximally entangled pairs hold at 0); None (default)
            takes the charge ``H`` was compiled to conserve (``H.conserve``), ``"none"`` runs dense.
        sector: None (grand canonical: every physical state) or a physical sector of the charge
            ``conserve`` names (or of the first charge the local space declares): ``{"N": 4, "Sz": 0}``,
            ``0`` for ``Sz = 0``; the canonical ensemble of that sector. A sector with no states
            raises :class:`~tensor4all.SymmetryViolationError`; a sector of a charge ``H`` does not
            conserve (``[H, Q] != 0``, a transverse field and the parity), :class:`~tensor4all.NonConservingError`.
        observables: ``name -> spec`` as for :func:`tensor4all.tebd` (operator names of ``H.local``:
            ``"Sz"`` measures ``Sz (x) 1``), measured at the output betas.
        every: output every ``every`` steps (and at ``beta``).
        threads, progress, callback: as for :func:`tensor4all.tebd` (the callback sees each step's
            :class:`EvolutionRecord`, time ``beta / 2``).

    Returns:
        :class:`ThermalResult`.

    A non-Hermitian ``H`` raises :class:`~tensor4all.NonHermitianError` (as :func:`tensor4all.dmrg`).
    """
    what = "thermal_state"
    H = check_thermal_hamiltonian(H, what)
    beta, dbeta, n = beta_grid(beta, dbeta, what)
    method = check_method_options(method, order, splitting, what)
    if method == "tebd" and H.L < 2:
        raise InvalidOptionError(
            f"{what}: a chain of 1 site has no bonds for TEBD's gates; use method='tdvp' (or L >= 2)"
        )
    max_bond = check_positive_int(max_bond, f"{what}: max_bond")
    cutoff = check_cutoff(cutoff, f"{what}: cutoff")
    every = check_positive_int(every, f"{what}: every", InvalidOptionError)
    progress = check_bool(progress, f"{what}: progress")
    if observables is not None and not isinstance(observables, dict):
        raise Tensor4allTypeError(f"{what}: observables must be a dict name -> spec, got {type(observables).__name__}")
    if observables and "energy" in observables:
        raise InvalidOptionError(
            f"{what}: the energy is always measured (ThermalResult.energy); rename that observable"
        )
    threads = check_threads(threads)
    with blas_threads(threads, max_bond):  # the whole run: the start, the doubled H, the cooling, ln Z
        charge = check_conserve(conserve, H, what)
        psi, log_states = thermal_start(H, charge, sector, what)
        H2 = purified_hamiltonian(H, charge)
        specs = {"energy": "energy", **(observables or {})}
        half = 0.5 * dbeta
        common = dict(imaginary=True, max_bond=max_bond, cutoff=cutoff, observables=specs, every=every, threads=threads)
        common.update(callback=callback)
        if method == "tebd":
            res: EvolutionResult = tebd(
                H2, psi, n * half, half, order=order, splitting=splitting, progress=progress, **common
            )
        else:  # tdvp's progress is a callable or None (True: a bar)
            psi = tdvp_start(psi, H2, max_bond, cutoff)
            res = tdvp(H2, psi, n * half, half, progress=True if progress else None, **common)
        return _result(res, log_states, sector, charge, method, every, n)


def _result(
    res: EvolutionResult, log_states: float, sector: Any, charge: str | None, method: str, every: int, n: int
) -> ThermalResult:
    """``ln Z`` at the output steps from the per-step norm factors."""
    logs = np.cumsum([math.log(r.norm) for r in res.history])
    steps = [0] + [k for k in range(1, n + 1) if k % every == 0 or k == n]
    log_z = np.array([log_states + (2.0 * logs[k - 1] if k else 0.0) for k in steps])
    obs = dict(res.observables)
    energy = np.real(np.asarray(obs.pop("energy"), dtype=complex)) if "energy" in obs else np.zeros(len(steps))
    return ThermalResult(
        betas=2.0 * np.asarray(res.times, dtype=float),
        log_z=log_z,
        energy=energy,
        observables=obs,
        state=res.state,
        log_states=float(log_states),
        sector=_plain_sector(sector),
        conserve=charge,
        method=method,
        history=list(res.history),
    )


def _plain_sector(sector: Any) -> Any:
    if sector is None or isinstance(sector, (numbers.Number, str)):
        return sector
    if isinstance(sector, dict):
        return {str(k): v for k, v in sector.items()}
    return list(sector)
