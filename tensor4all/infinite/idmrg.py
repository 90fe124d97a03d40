"""iDMRG: the ground state of an infinite MPO by the infinite-size two-site DMRG with the
wave-function prediction (I. P. McCulloch, arXiv:0804.2509; TeNPy's ``TwoSiteDMRGEngine`` on an
infinite MPS).

The chain grows from the middle: a window of two sites between the left environment ``LP`` and
the right one ``RP`` (at the start, those of two cells of a product start on each side, as TeNPy
starts from its initial state's environments: :func:`.idmrg_windows.product_environments`) is
solved (lowest eigenvector of the two-site effective Hamiltonian), split by a truncated SVD and
absorbed into the environments. A sweep walks the cell's bonds to the right,
``i = 0 .. n-1`` (the last step crosses into the next cell, so ``LP`` of bond 0 grows by one cell),
then back, ``i = n .. 1`` (``RP`` of bond 0 grows), TeNPy's schedule; each step starts from
``S[i] B[i] B[i + 1]``, which is McCulloch's prediction where it crosses the cell's edge
(:mod:`.idmrg_windows`). The energy per site is estimated from the growth, ``(E_k - E_{k-1}) /
(N_k - N_{k-1})`` between the last windows of successive sweeps; the run stops when that estimate
moved by less than ``tol`` and the Schmidt values of bond 0 by less than ``sqrt(tol)``. The result
is converted to a dense :class:`.iMPS` (its canonical forms rebuilt) and its ``energy`` is the
transfer-matrix energy of that state (:func:`.energy_per_site`, differentiable in the couplings).

With a conserved charge (``conserve``: ``"Sz"``, ``"parity"``, or ``"auto"``, the first the
Hamiltonian conserves and the charge reversal leaves unchanged, :func:`.cell_charges.reversal_invariant`) the
steps run on the finite DMRG's charge-sector blocks
(:class:`~.idmrg_windows.SectorCell`); the charge per unit cell is 0 (a cell whose sites cannot
sum to 0, such as one spin 1/2, is an error). A model of one site per cell runs on a cell of two
(the two-site window needs two sites per cell; TeNPy needs ``L >= 2`` as well), so its state has
a cell of two. The cell must fit the period of the state iDMRG converges to: the spin-1/2
antiferromagnet's alternates from site to site at finite bond dimension, and on an odd cell the
run does not settle (``converged=False``, far above the ground state); VUMPS runs on any cell.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import numpy as np

from ..algorithms.sector_dmrg import sector_product_state
from ..sites.charges import CONSERVED_CHARGES, conserve_candidates, declared_charges
from ..structured import SymmetryViolationError
from ..tools.checks import check_callable, check_cutoff, check_positive_int, check_real
from ..tools.errors import DimensionMismatchError, InvalidOptionError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .energy import energy_per_site
from .gauge import polar_left
from .cell_charges import CONSERVE_CHOICES, cell_charge, symmetry_breaking
from .idmrg_windows import DenseCell, SectorCell
from .impo import InfiniteMPO, check_hermitian
from .imps import iMPS
from .tmaps import dominant_left
from .transfer import is_injective
from .tmaps import left_step as transfer_left
from .vumps import best_product, product_energy

__all__ = ["idmrg", "IDMRGResult", "IDMRGRecord", "CONSERVE_CHOICES"]

#: the smallest squared state error a two-site eigenproblem is solved to (Lanczos's ``state_tol``);
#: it follows the energy's change per sweep down to here
STATE_TOL_FLOOR = 1e-26


@dataclasses.dataclass
class IDMRGRecord:
    """One sweep: the energy per site estimated from the growth, its change since the last
    sweep, the largest bond dimension, the largest discarded weight, seconds so far."""

    sweep: int
    energy: float
    delta: float
    max_bond: int
    truncation_error: float
    time: float


@dataclasses.dataclass
class IDMRGResult:
    """An iDMRG run: ``energy`` per site (of ``state``, from the transfer matrix), the ``state``
    (a dense :class:`.iMPS`), whether it ``converged``, the charge it ``conserved`` (``"Sz"``,
    ``"parity"`` or None) and the per-sweep ``records``."""

    energy: Any
    state: iMPS
    converged: bool
    conserved: str | None
    records: list[IDMRGRecord]


@keyword_hints
def idmrg(
    H: InfiniteMPO,
    psi0: iMPS | None = None,
    *,
    max_bond: int = 64,
    cutoff: float = 1e-12,
    conserve: str | None = "auto",
    tol: float = 1e-10,
    sweeps: int = 200,
    callback: Callable[[IDMRGRecord], Any] | None = None,
    threads: int | None = None,
) -> IDMRGResult:
    """The ground state of the infinite MPO ``H`` (Hermitian: :class:`NonHermitianError` otherwise)
    by two-site iDMRG (McCulloch's, with the wave-function prediction) at bond dimension
    ``max_bond`` (singular values of relative discarded weight below ``cutoff`` dropped), from
    ``psi0`` (default: a product state of charge 0 per cell, e.g. the Neel state) until the energy
    per site changes by less than ``tol`` per sweep (and the Schmidt values of bond 0 by less than
    ``sqrt(tol)``) or after ``sweeps`` sweeps. ``conserve``: ``"auto"`` (the first charge of the
    local space that ``H`` conserves and that a reversal of the charge, a spin flip, leaves ``H``
    unchanged under: a field breaks it, and a magnetized ground state is not in charge 0 per cell),
    ``"Sz"``, ``"parity"``, or ``"none"``/None (dense; ``"auto"`` also runs dense where the cell
    cannot hold charge 0 or ``psi0`` is not a product state of charge 0 per cell;
    :func:`conserved_charge` tells what it starts with). An ``"auto"`` run that ends above the best
    product state (:func:`.vumps.product_energy`) has a ground state that breaks the symmetry
    spontaneously (the XXZ chain's Ising ferromagnet, ``Jz < -J``): it warns
    (:class:`~.cell_charges.BrokenSymmetryWarning`) and runs dense. ``callback`` gets each
    :class:`IDMRGRecord` (of both runs then)."""
    if not isinstance(H, InfiniteMPO):
        raise Tensor4allTypeError(
            f"idmrg: H must be an InfiniteMPO (infinite_model, InfiniteMPO.from_opsum), got {type(H).__name__}"
        )
    D = check_positive_int(max_bond, "idmrg: max_bond")
    cutoff = check_cutoff(cutoff)
    tol = check_real(tol, "idmrg: tol", low=0.0)
    sweeps = check_positive_int(sweeps, "idmrg: sweeps", InvalidOptionError)
    callback = check_callable(callback, "idmrg: callback")
    threads = check_threads(threads)
    if conserve is not None and (not isinstance(conserve, str) or conserve not in CONSERVE_CHOICES):
        raise InvalidOptionError(
            f"idmrg: conserve must be one of {', '.join(map(repr, CONSERVE_CHOICES))} or None, got {conserve!r}"
        )
    Ws = [np.asarray(w) for w in H.tensors]
    if len(Ws) == 1:  # the two-site window needs two sites per cell
        Ws = Ws * 2
    n = len(Ws)
    d = Ws[0].shape[1]
    if psi0 is not None:
        if not isinstance(psi0, iMPS):
            raise Tensor4allTypeError(f"idmrg: psi0 must be an iMPS or None, got {type(psi0).__name__}")
        if psi0.cell not in (n, H.cell) or n % psi0.cell or any(p != d for p in psi0.phys_dims):
            raise DimensionMismatchError(
                f"idmrg: psi0 has a cell of {psi0.cell} sites of dimensions {psi0.phys_dims}; the MPO's cell has "
                f"{H.cell} site(s) of dimension {d} (run on a cell of {n})"
            )
    with blas_threads(threads, D):  # the whole run: the charge's checks, the sweeps, the final energy
        check_hermitian(H, "idmrg")
        found = cell_charge(conserve, H.local, Ws, "idmrg")
        charge = None if found is None else found[0]
        if charge is not None and conserve == "auto" and psi0 is not None and not _sector_start_fits(psi0, charge, n):
            charge = None  # a start that is not a product state of charge 0 per cell: run dense from it
        result = _run(H, psi0, Ws, charge, D, cutoff, tol, sweeps, callback)
        if (
            charge is not None
            and conserve == "auto"
            and symmetry_breaking(
                "idmrg",
                charge[0],
                float(result.energy) if is_injective(result.state) else None,  # None: two fixed points
                product_energy(H),
                3,
            )
        ):
            # dense, from the start given or the best product state: a product state of charge 0 per
            # cell is symmetric, and the dense run kept the cat of the orders it mixes
            start = psi0 if psi0 is not None else best_product(H).state
            result = _run(H, start, Ws, None, D, cutoff, tol, sweeps, callback)
    return result


def _run(
    H: InfiniteMPO,
    psi0: iMPS | None,
    Ws: list,
    charge: tuple | None,
    D: int,
    cutoff: float,
    tol: float,
    sweeps: int,
    callback: Any,
) -> IDMRGResult:
    """:func:`idmrg` from its checked arguments on the cell ``Ws``, conserving ``charge`` or dense."""
    n = len(Ws)
    if charge is not None:
        label, q, modulus, wq = charge
        states = _sector_start(psi0, q, modulus, n, label)
        cell: Any = SectorCell(Ws, wq, q, modulus, states)
    else:
        label = None
        cell = _dense_start(psi0, Ws, n, H)
    converged, records = _sweeps(cell, n, D, cutoff, tol, sweeps, callback)
    state = _from_right_orthonormal(cell.dense_tensors(), H.local)
    return IDMRGResult(energy_per_site(state, H), state, converged, label, records)


def conserved_charge(H: InfiniteMPO, conserve: str | None = "auto") -> str | None:
    """The charge that ``idmrg(H, conserve=conserve)`` from its default start begins conserving
    (``"Sz"``, ``"parity"``), or None for a dense run; the errors of :func:`idmrg` for a
    ``conserve`` that ``H`` cannot take. An ``"auto"`` run whose ground state turns out to break
    the symmetry still ends dense (:func:`.cell_charges.symmetry_breaking`)."""
    Ws = [np.asarray(w) for w in H.tensors]
    if len(Ws) == 1:
        Ws = Ws * 2
    found = cell_charge(conserve, H.local, Ws, "idmrg")
    return None if found is None else found[0][0]


def _product_indices(psi0: iMPS) -> list[int] | None:
    """The basis state of each site of a product-state ``psi0``, or None."""
    out = []
    for a in psi0.AR:
        nz = np.flatnonzero(np.abs(a) > 1e-14 * np.abs(a).max())
        if a.shape[0] != 1 or a.shape[2] != 1 or len(nz) != 1:
            return None
        out.append(int(nz[0]))
    return out


def _sector_start_fits(psi0: iMPS, charge: tuple, n: int) -> bool:
    """Whether ``psi0`` is a product of basis states with charge 0 per cell."""
    states = _product_indices(psi0)
    if states is None:
        return False
    _, q, modulus, _ = charge
    total = sum(q[s] for s in states * (n // len(states)))
    return (total % modulus if modulus else total) == 0


def _sector_start(psi0: iMPS | None, q: list[int], modulus: int, n: int, label: str) -> list[int]:
    if psi0 is None:
        return sector_product_state([q] * n, 0, modulus)
    states = _product_indices(psi0)
    if states is None:
        raise InvalidOptionError(
            f"idmrg: the run conserves {label!r}, so psi0 must be a product of basis states "
            "(iMPS.product_state); use conserve='none' to start from this psi0"
        )
    states = states * (n // len(states))
    total = sum(q[s] for s in states)
    if (total % modulus if modulus else total) != 0:
        raise SymmetryViolationError(
            f"idmrg: psi0 has the charge {total} per cell ({label}, integer units); conserved iDMRG keeps 0 per cell"
        )
    return states


def _dense_start(psi0: iMPS | None, Ws: list[np.ndarray], n: int, H: InfiniteMPO) -> DenseCell:
    dtype = np.result_type(H.dtype, float)
    if psi0 is None:
        d = Ws[0].shape[1]
        candidates = [c for c in conserve_candidates(H.local, [d]) if c in ("Sz", "parity")]
        states = [0] * n
        for name in candidates:
            charge, modulus = CONSERVED_CHARGES[name]
            q = declared_charges(H.local, [d])[charge][0]
            try:
                states = sector_product_state([list(q)] * n, 0, modulus)
                break
            except ValueError:
                continue
        psi0 = iMPS.product_state(states, H.local)
    reps = n // psi0.cell
    AR, AL = list(psi0.AR) * reps, list(psi0.AL) * reps
    C = list(psi0.C) * reps
    if any(np.abs(c - np.diag(np.diag(c))).max() > 1e-12 for c in C):
        psi0 = iMPS.from_tensors(AR, psi0.local)
        AR, AL, C = psi0.AR, psi0.AL, psi0.C
    S = [np.abs(np.diag(c)) for c in C]
    # AL in the gauge of S (C = S P, P diagonal phases: AL' = P_i^* AL_i P_i+1), the one the windows use
    phase = [np.diag(c) / np.where(s > 0, s, 1.0) for c, s in zip(C, S)]
    AL = [p.conj()[:, None, None] * a * phase[(i + 1) % n][None, None, :] for i, (a, p) in enumerate(zip(AL, phase))]
    return DenseCell(Ws, [a.astype(np.result_type(dtype, a)) for a in AR], S, np.result_type(dtype, *AR), AL=AL)


def _schedule(n: int) -> list[tuple[int, bool, tuple[bool, bool]]]:
    """TeNPy's infinite two-site schedule: ``(i, moving right, (build LP[i+1], build RP[i+1]))``."""
    right = [(i, True, (True, i < 2)) for i in range(n)]
    left = [(i, False, (n - i < 2, True)) for i in range(n, 0, -1)]
    return right + left


def _sweeps(
    cell: Any, n: int, D: int, cutoff: float, tol: float, sweeps: int, callback: Any
) -> tuple[bool, list[IDMRGRecord]]:
    grown = getattr(cell, "grown", 0)  # sites of the start already in the edge environments
    lenL = [0] * n
    lenR = [0] * n
    lenL[0] = lenR[0] = grown
    for j in range(n - 1, 1, -1):
        lenR[j] = n - j + grown
    records: list[IDMRGRecord] = []
    start = time.perf_counter()
    prev: tuple[float, int] | None = None
    e_prev, s_prev = np.nan, None
    delta = 1.0
    for sweep in range(1, sweeps + 1):
        max_err = 0.0
        E, N = 0.0, 0
        for i, right, update in _schedule(n):
            state_tol = float(np.clip(delta * 1e-2, STATE_TOL_FLOOR, 1e-8))
            j, k = (i + 1) % n, (i + 2) % n
            E, err = cell.step(i % n, right, update, D, cutoff, state_tol)
            N = lenL[i % n] + 2 + lenR[k]
            if update[0]:
                lenL[j] = lenL[i % n] + 1
            if update[1]:
                lenR[j] = lenR[k] + 1
            max_err = max(max_err, err)
        e = E / N if prev is None else (E - prev[0]) / (N - prev[1])
        prev = (E, N)
        s = cell.schmidt(0)
        delta = abs(e - e_prev) if np.isfinite(e_prev) else 1.0
        ds = 1.0 if s_prev is None else _schmidt_change(s, s_prev)
        e_prev, s_prev = e, s
        rec = IDMRGRecord(sweep, float(e), float(delta), max(cell.bond_dims()), max_err, time.perf_counter() - start)
        records.append(rec)
        if callback is not None:
            callback(rec)
        if sweep > 2 and delta < tol and ds < max(np.sqrt(tol), 1e-12):
            return True, records
    return False, records


def _from_right_orthonormal(AR: list[np.ndarray], local: str) -> iMPS:
    """The mixed canonical :class:`.iMPS` of a right-orthonormal cell: the left fixed point ``l``
    of its transfer map on bond 0 (Arnoldi) carried through the cell, ``l_i = V_i diag(lambda_i)
    V_i^dagger`` per bond, ``C_i = diag(sqrt(lambda_i))`` in the rotated basis, and
    ``A_L = polar(C_i A_R C_{i+1}^dagger)``, which is exact when ``l`` is the fixed point (no
    inverse of small Schmidt values)."""
    n = len(AR)
    _, l0 = dominant_left(AR, AR)
    ls = [l0]
    for i in range(n - 1):
        ls.append(transfer_left(ls[-1], AR[i], AR[i]))
    Vs, Cs = [], []
    for lb in ls:
        lam, V = np.linalg.eigh(0.5 * (lb + lb.conj().T))
        order = np.argsort(-lam)
        lam, V = np.clip(lam[order], 0.0, None), V[:, order]
        s = np.sqrt(lam)
        Vs.append(V)
        Cs.append(np.diag(s / np.linalg.norm(s)).astype(np.result_type(AR[0], V)))
    ARr = [np.tensordot(np.tensordot(Vs[i].conj().T, AR[i], (1, 0)), Vs[(i + 1) % n], (2, 0)) for i in range(n)]
    AL = [polar_left(np.tensordot(Cs[i], ARr[i], (1, 0)), Cs[(i + 1) % n]) for i in range(n)]
    return iMPS(AL, ARr, Cs, local)


def _schmidt_change(a: np.ndarray, b: np.ndarray) -> float:
    m = max(len(a), len(b))
    return float(np.abs(np.pad(a, (0, m - len(a))) - np.pad(b, (0, m - len(b)))).max())
