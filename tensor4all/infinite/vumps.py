"""VUMPS: the variational uniform MPS of an infinite MPO (Zauner-Stauber, Vanderstraeten,
Fishman, Verstraete and Haegeman, PRB 97, 045145 (2018); MPSKit.jl's ``VUMPS``).

One iteration, all sites of the cell in parallel (the paper's Algorithm 4):

1. the fixed-point environments of ``A_L`` and ``A_R`` (:mod:`.environments`: GMRES for the
   geometric sums), which also give the energy per cell;
2. the lowest eigenvectors of the one-site ``H_AC`` and the zero-site ``H_C`` by ARPACK's implicitly
   restarted Lanczos (SciPy ``eigsh``), warm-started from the current ``A_C`` and ``C``, to a
   precision that follows the error;
3. ``A_L = polar(A_C C^dagger)``, ``A_R = polar(C^dagger A_C)`` (the stable polar update), and the
   error ``max ||A_C - A_L C||, ||A_C - C A_R||`` (the norm of the energy's gradient up to a factor),
   together with the Galerkin error ``||(1 - A_L A_L^dagger) H_AC(A_C)|| / ||H_AC(A_C)||`` (MPSKit's),
   which unlike the first does not vanish at bond dimension 1 away from a fixed point. At bond
   dimension 1 the new ``A_C`` is mixed half with the old (the parallel update alone swaps the two
   sites of an antiferromagnet's cell forever). Right after an expansion the new directions carry no
   weight and the error says little: a run counts as converged only after :data:`SETTLE` iterations
   at its final bond dimension.

The result drops Schmidt values below ``tol`` (:func:`.vumps_local.schmidt_floor`): not resolved by
the run, they only add spurious transfer eigenvalues (correlation lengths).

The bond dimension grows by subspace expansion (MPSKit's ``OptimalExpand``, Hubig et al.'s
projection): the two-site ``H_AC2`` applied to ``A_L C A_R`` and projected onto the null spaces
of ``A_L`` and ``A_R``, whose leading singular vectors (above ``cutoff``) extend both; the new
directions start with zero weight and the next iterations fill them. A run starts at bond
dimension ``min(max_bond, 8)`` and doubles it whenever the error falls below ``1e-3`` or ten
iterations have passed, until ``max_bond``.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
import scipy.linalg

from ..tools.checks import check_callable, check_cutoff, check_positive_int, check_real, check_seed
from ..tools.errors import DimensionMismatchError, InvalidOptionError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .energy import energy_per_site
from .environments import apply_hac, apply_hc, left_environments, right_environments
from .gauge import drop_small_schmidt, mixed_canonical, polar_left, polar_right
from .impo import InfiniteMPO, check_hermitian
from .imps import iMPS
from .vumps_local import SETTLE, VUMPSRecord, VUMPSResult, schmidt_floor
from .cell_charges import CONSERVE_CHOICES, cell_charge, symmetry_breaking
from .vumps_sectors import run_sectors
from .vumps_local import lowest as _lowest

__all__ = ["vumps", "product_energy", "VUMPSResult", "VUMPSRecord"]


def _null_left(AL: np.ndarray) -> np.ndarray:
    dl, d, dr = AL.shape
    return scipy.linalg.null_space(AL.reshape(dl * d, dr).conj().T)


def _null_right(AR: np.ndarray) -> np.ndarray:
    dl, d, dr = AR.shape
    return scipy.linalg.null_space(AR.reshape(dl, d * dr)).conj().T


def _expand(st: dict, Ws: list, GL: list, GR: list, add: int, cutoff: float) -> bool:
    """Grow every bond by up to ``add`` directions (two-site projection); True if any grew."""
    AL, AR, C = st["AL"], st["AR"], st["C"]
    n = len(AL)
    ext_l: list[np.ndarray | None] = [None] * n  # on bond j: columns added to AL[j-1]
    ext_r: list[np.ndarray | None] = [None] * n  # on bond j: rows added to AR[j]
    for i in range(n):
        j = (i + 1) % n
        two = np.tensordot(np.tensordot(AL[i], C[j], (2, 0)), AR[j], (2, 0))  # (x, s1, s2, y)
        t = np.tensordot(GL[i], two, (2, 0))  # (x', a, t1, t2, y)
        t = np.tensordot(t, Ws[i], ((1, 2), (0, 2)))  # (x', t2, y, s1, b)
        t = np.tensordot(t, Ws[j], ((4, 1), (0, 2)))  # (x', y, s1, s2, c)
        t = np.tensordot(t, GR[(i + 2) % n], ((1, 4), (2, 1)))  # (x', s1, s2, y')
        dl, d1, d2, dr = t.shape
        NL, NR = _null_left(AL[i]), _null_right(AR[j])
        if NL.shape[1] == 0 or NR.shape[0] == 0:
            continue
        p = NL.conj().T @ t.reshape(dl * d1, d2 * dr) @ NR.conj().T
        u, s, vh = scipy.linalg.svd(p, full_matrices=False, lapack_driver="gesdd", check_finite=False)
        k = int(min(add, np.count_nonzero(s > cutoff * max(1.0, float(np.linalg.norm(s))))))
        if k:
            ext_l[j] = (NL @ u[:, :k]).reshape(dl, d1, k)
            ext_r[j] = (vh[:k] @ NR).reshape(k, d2, dr)
    if all(e is None for e in ext_l):
        return False
    k = [0 if e is None else e.shape[2] for e in ext_l]
    newAL, newAR, newC = [], [], []
    for i in range(n):
        j = (i + 1) % n
        dl, d, dr = AL[i].shape
        a = np.zeros((dl + k[i], d, dr + k[j]), dtype=AL[i].dtype)
        a[:dl, :, :dr] = AL[i]
        if ext_l[j] is not None:
            a[:dl, :, dr:] = ext_l[j]
        newAL.append(a)
        b = np.zeros((dl + k[i], d, dr + k[j]), dtype=AR[i].dtype)
        b[:dl, :, :dr] = AR[i]
        if ext_r[i] is not None:
            b[dl:, :, :dr] = ext_r[i]
        newAR.append(b)
        c = np.zeros((dl + k[i], dl + k[i]), dtype=C[i].dtype)
        c[:dl, :dl] = C[i]
        newC.append(c)
    st.update(AL=newAL, AR=newAR, C=newC, XL=None, XR=None)
    return True


def _galerkin(AL: list, C: list, Ws: list, GL: list, GR: list) -> float:
    """``max ||(1 - A_L A_L^dagger) H_AC(A_C)|| / ||H_AC(A_C)||`` of the current state: the tangent-space
    gradient of the energy (MPSKit's Galerkin error), zero only at a fixed point of the VUMPS update. At
    bond dimension 1 the gauge error ``||A_C - A_L C||`` vanishes for any state; this does not."""
    n = len(AL)
    out = 0.0
    for i in range(n):
        h = apply_hac(GL[i], Ws[i], GR[(i + 1) % n], np.tensordot(AL[i], C[(i + 1) % n], (2, 0)))
        dl, d, dr = h.shape
        a, h = AL[i].reshape(dl * d, dr), h.reshape(dl * d, dr)
        size = float(np.linalg.norm(h))
        if size > 0.0:
            out = max(out, float(np.linalg.norm(h - a @ (a.conj().T @ h))) / size)
    return out


def _half_step(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """``new + old`` normalized (``new`` in the phase of ``old``): at bond dimension 1 the Bloch
    vector halfway, so the antiferromagnet's swap ``(a, b) -> (-b, -a)`` lands on ``-b = a`` at once;
    a fixed point stays one."""
    m = new + old
    return m / np.linalg.norm(m)


def _errors(AL: list, AR: list, AC: list, C: list) -> float:
    n = len(AL)
    err = 0.0
    for i in range(n):
        el = np.linalg.norm(AC[i] - np.tensordot(AL[i], C[(i + 1) % n], (2, 0)))
        er = np.linalg.norm(AC[i] - np.tensordot(C[i], AR[i], (1, 0)))
        err = max(err, float(el), float(er))
    return err


@keyword_hints
def vumps(
    H: InfiniteMPO,
    psi0: iMPS | None = None,
    *,
    max_bond: int = 64,
    tol: float = 1e-8,
    max_iter: int = 500,
    cutoff: float = 1e-12,
    seed: int | None = None,
    callback: Callable[[VUMPSRecord], Any] | None = None,
    threads: int | None = None,
    conserve: str | None = "none",
) -> VUMPSResult:
    """The ground state of the infinite MPO ``H`` (Hermitian, real or complex;
    :class:`NonHermitianError` otherwise) by VUMPS, from
    ``psi0`` (an :class:`iMPS` on ``H``'s cell; default: random at bond dimension 8, ``seed``)
    grown by subspace expansion to ``max_bond``; stops when the error (``max ||A_C - A_L C||`` and the
    Galerkin error) is below ``tol`` at ``max_bond`` (the energy is then converged to about ``tol^2``) or after
    ``max_iter`` iterations. ``cutoff``: expansion directions of smaller relative weight are not
    added. ``callback`` gets each :class:`VUMPSRecord`. The energy per site is differentiable in
    the couplings of ``H`` (Hellmann-Feynman: :func:`energy_per_site`). ``conserve``: ``"none"``/None
    (dense, the default), ``"Sz"``, ``"parity"`` or ``"auto"`` (as :func:`.idmrg.idmrg`'s: the first
    charge of the local space that ``H`` conserves and a spin flip leaves unchanged, else dense;
    :func:`.cell_charges.cell_charge`): the run keeps charge 0 per cell on the charge sectors
    (:mod:`.vumps_sectors`; from the product state of charge 0 per cell, so ``psi0`` must be None;
    a cell of one spin 1/2 runs on a cell of two) and the result's ``conserved`` names the charge.
    A ground state that breaks the symmetry (a magnetized phase) is not in charge 0 per cell: an
    ``"auto"`` run that ends above the best product state (:func:`product_energy`) or without one
    canonical form warns (:class:`~.cell_charges.BrokenSymmetryWarning`) and runs dense; an
    explicit charge ends in :class:`~tensor4all.structured.SymmetryViolationError` where the state
    has no canonical form."""
    if not isinstance(H, InfiniteMPO):
        raise Tensor4allTypeError(
            f"vumps: H must be an InfiniteMPO (infinite_model, InfiniteMPO.from_opsum), got {type(H).__name__}"
        )
    D = check_positive_int(max_bond, "vumps: max_bond")
    tol = check_real(tol, "vumps: tol", low=0.0)
    max_iter = check_positive_int(max_iter, "vumps: max_iter")
    cutoff = check_cutoff(cutoff)
    callback = check_callable(callback, "vumps: callback")
    threads = check_threads(threads)
    if conserve is not None and (not isinstance(conserve, str) or conserve not in CONSERVE_CHOICES):
        raise InvalidOptionError(
            f"vumps: conserve must be one of {', '.join(map(repr, CONSERVE_CHOICES))} or None, got {conserve!r}"
        )
    with blas_threads(threads, D):  # the whole run, from the start's setup
        check_hermitian(H, "vumps")
        return _start_and_run(H, psi0, D, tol, max_iter, cutoff, callback, conserve, seed)


def _start_and_run(
    H: InfiniteMPO, psi0: Any, D: int, tol: float, max_iter: int, cutoff: float, callback: Any, conserve: Any, seed: Any
) -> VUMPSResult:
    """:func:`vumps` from its checked arguments: the start (charge sectors or dense), then the run."""
    sectors = cell_charge(conserve, H.local, H.tensors, "vumps") if psi0 is None or conserve != "auto" else None
    if sectors is not None:
        if psi0 is not None:
            raise InvalidOptionError(
                f"vumps: conserve={conserve!r} starts from the product state of charge 0 per cell; give psi0=None "
                "or conserve='none'"
            )
        charge, cell, states = sectors
        result = run_sectors(H, cell, charge, states, D, tol, max_iter, cutoff, callback, fallback=conserve == "auto")
        if conserve != "auto":
            return result
        energy = None if result is None else float(result.energy)
        if not symmetry_breaking("vumps", charge[0], energy, product_energy(H) if result is not None else 0.0, 4):
            return result
    n = H.cell
    if psi0 is None:
        psi0 = iMPS.random(H.local, n, min(D, 8), seed=check_seed(seed), dtype=np.result_type(H.dtype, float))
    elif not isinstance(psi0, iMPS):
        raise Tensor4allTypeError(f"vumps: psi0 must be an iMPS or None, got {type(psi0).__name__}")
    _check_cell(psi0, H)
    return _run(H, psi0, D, tol, max_iter, cutoff, callback)


def product_energy(H: InfiniteMPO, seed: int = 0) -> float:
    """The energy per site of the best product state that a dense VUMPS at bond dimension 1 finds
    from a random start (``seed``): an upper bound of the ground-state energy per site (mean
    field), a few milliseconds for a cell of a few sites. A run of charge 0 per cell that ends
    above it has missed a ground state that breaks the symmetry (:func:`.cell_charges.symmetry_breaking`)."""
    return float(best_product(H, seed).energy)


def best_product(H: InfiniteMPO, seed: int = 0) -> VUMPSResult:
    """The best product state (bond dimension 1) that a dense VUMPS finds from a random start
    (``seed``), and its energy: :func:`product_energy`'s, and the symmetry-broken start of the
    dense run that follows a conserved one that missed the ground state."""
    return vumps(H, max_bond=1, tol=1e-10, max_iter=200, seed=seed)


def _check_cell(psi: iMPS, H: InfiniteMPO) -> None:
    from_err = None
    if psi.cell != H.cell:
        from_err = f"the state's cell has {psi.cell} sites, the MPO's {H.cell}"
    elif psi.phys_dims != [w.shape[1] for w in H.tensors]:
        from_err = f"physical dimensions {psi.phys_dims} against the MPO's {[w.shape[1] for w in H.tensors]}"
    if from_err:
        raise DimensionMismatchError(f"vumps: {from_err}; build both with the same cell and local space")


def _run(H: InfiniteMPO, psi0: iMPS, D: int, tol: float, max_iter: int, cutoff: float, callback: Any) -> VUMPSResult:
    n = H.cell
    Ws = H.tensors
    dtype = np.result_type(psi0.dtype, H.dtype)
    st: dict[str, Any] = {
        "AL": [a.astype(dtype) for a in psi0.AL],
        "AR": [a.astype(dtype) for a in psi0.AR],
        "C": [c.astype(dtype) for c in psi0.C],
        "XL": None,
        "XR": None,
    }
    history: list[VUMPSRecord] = []
    err, since = 1.0, 0
    start = time.perf_counter()
    e = np.nan
    converged = False
    for it in range(max_iter):
        AL, AR, C = st["AL"], st["AR"], st["C"]
        env_tol = min(1e-6, max(err * 1e-3, 1e-14))
        GL, e_l, st["XL"] = left_environments(AL, C[0], Ws, st["XL"], env_tol)
        GR, e_r, st["XR"] = right_environments(AR, C[0], Ws, st["XR"], env_tol)
        e = 0.5 * (e_l + e_r) / n
        bond = max(c.shape[0] for c in C)
        grow = bond < D and (err < 1e-3 or since >= 10)
        if grow and _expand(st, Ws, GL, GR, min(bond, D - bond), cutoff):
            since = 0
            continue
        since += 1
        grad = _galerkin(AL, C, Ws, GL, GR)
        state_tol = max((max(err, grad) * 1e-2) ** 2, 1e-28)
        AC = [
            _lowest(
                lambda x, i=i: apply_hac(GL[i], Ws[i], GR[(i + 1) % n], x),
                np.tensordot(AL[i], C[(i + 1) % n], (2, 0)),
                state_tol,
            )
            for i in range(n)
        ]
        if bond == 1:  # mean field: the parallel update swaps the sites of a cell (a 2-cycle); half a step
            AC = [_half_step(AC[i], AL[i] * C[(i + 1) % n][0, 0]) for i in range(n)]
        Cn = [_lowest(lambda x, i=i: apply_hc(GL[i], GR[i], x), C[i], state_tol) for i in range(n)]
        newAL = [polar_left(AC[i], Cn[(i + 1) % n]) for i in range(n)]
        newAR = [polar_right(AC[i], Cn[i]) for i in range(n)]
        err = max(_errors(newAL, newAR, AC, Cn), grad)
        st.update(AL=newAL, AR=newAR, C=Cn)
        rec = VUMPSRecord(it, float(e), err, bond, time.perf_counter() - start)
        history.append(rec)
        if callback is not None:
            callback(rec)
        if err < tol and bond >= D and since >= SETTLE:
            converged = True
            break
        if err < tol and bond < D and since >= SETTLE:
            since = 10  # converged below max_bond: grow now (or stop if nothing can be added)
            if not _expand(st, Ws, GL, GR, min(bond, D - bond), cutoff):
                converged = True
                break
            since = 0
    AL, AR, C = drop_small_schmidt(*mixed_canonical(st["AL"], C0=st["C"][0]), schmidt_floor(tol))
    state = iMPS(AL, AR, C, H.local)
    energy = energy_per_site(state, H)  # of the final state: the environments' e lags one update behind
    return VUMPSResult(energy, state, err, converged, history)
