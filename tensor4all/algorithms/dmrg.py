"""``dmrg``: ground states of MPO Hamiltonians, with a differentiable energy.

The sweeps run on raw NumPy arrays (``_sweep``); this module validates input, turns
schedules into per-sweep settings, records the history, and makes the energy
differentiable in the MPO tensors by the Hellmann-Feynman theorem: at the converged
state ``dE = <psi| dH |psi>`` (a ``tidu.custom_jvp`` rule; reverse mode transposes it).
So ``tidu.grad(lambda J: dmrg(models.heisenberg(L, J)).energy)(J0)`` works. The records it
returns live in :mod:`.dmrg_records`, the per-sweep settings and eigensolver tolerances in
:mod:`.dmrg_schedules`, the measured sector of a dense run in :mod:`.dmrg_charges`.

Every option is checked before the first sweep. The Hamiltonian must be finite and
Hermitian, with energies below ~1e150 (so that ``<H^2>`` fits in a float); one whose
scale (root-mean-square eigenvalue) lies far from 1 is divided by a power of two for
the sweeps (exact; energies, variance, tolerances and derivatives are scaled back), so
the eigensolver's thresholds see numbers of order one for couplings down to ~1e-290.

Noise: the first sweeps perturb every local update (see ``_sweep``: a random component in
the eigensolver's start vector and White's density-matrix perturbation with the subspace-
expansion terms of Hubig et al. 2015), so that a run started in one charge sector (a
product state, a state converged in another sector) can leave it; two-site sweeps take
:data:`TWO_SITE_NOISE` by default, one-site sweeps ``1e-4`` decaying tenfold per sweep.

Sectors: the local space of the MPO (its name in ``LOCAL_SPACES``; for an MPO built from
tensors, the default space of each site's dimension) declares diagonal charges, e.g.
``"2Sz"``. A charge is conserved when ``[H, Q] = 0`` for ``Q = sum_i q_i``, decided from the
MPO itself: ``||HQ - (HQ)^dagger||_F / ||HQ||_F`` (= ``||[H, Q]||_F / ||HQ||_F`` for Hermitian
``H``) by the MPO traces of :func:`hermiticity`, with no dense matrix (for a Z2 charge such as
``"parity"``, ``Q = prod_i (-1)^q_i``). ``DMRGResult.sector`` holds ``<Q>`` (U(1)) or the parity
(Z2) of the final state for each conserved charge.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..linalg.eigensolver import get_solver
from ..networks.chain import leaves_of
from ..networks.environments import mpo_squared
from ..networks.mpo import MPO, check_compatible, compress_mpo_tensors
from ..networks.mps import MPS
from ..networks.symmetric_sites import Grading, phys_leg, random_sites
from ..structured import U1, Zn
from ..tools.checks import (
    any_traced,
    check_bool,
    check_callable,
    check_finite_arrays,
    check_positive_int,
    check_real,
    check_seed,
    exponent,
    ldexp,
    to_numpy,
)
from ..tools.device import check_placement, device_scope, host_tensor, to_device
from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NoOrthogonalStateError,
    Tensor4allTypeError,
    ZeroNormError,
)
from ..tools.threads import blas_threads, check_threads
from .dmrg_charges import measured_sector, sector_size
from .dmrg_checks import check_hamiltonian, check_schedule, default_conserve, mpo_array
from .dmrg_records import DMRGResult, SweepRecord
from .orthogonal import ORTHOGONAL_TOL, overlaps
from .dmrg_schedules import TWO_SITE_NOISE, local_tolerance, noise_schedule, per_sweep, state_tolerance
from .sector_dmrg import SectorEngine, sector_product_state
from .sector_run import resolve_sector, start_states
from .sweep import TRUNCATED_MAX_ITER, BondUpdate, SweepEngine
from ..tools.keywords import keyword_hints
from ..tools.progress import SweepBar, progress_hook

__all__ = ["dmrg", "DMRGResult", "SweepRecord", "BondUpdate", "TWO_SITE_NOISE"]


@keyword_hints
def dmrg(
    H: MPO,
    psi0: MPS | None = None,
    *,
    max_bond: int | Sequence[int] = 64,
    sweeps: int = 10,
    cutoff: float | Sequence[float] = 1e-10,
    tol: float = 1e-10,
    two_site: bool = True,
    noise: float | Sequence[float] | None = None,
    seed: int = 0,
    callback: Callable[[SweepRecord], Any] | None = None,
    progress: bool | Callable[[BondUpdate], Any] | None = None,
    eigensolver: str = "lanczos",
    compute_variance: bool = True,
    threads: int | None = None,
    conserve: str | None = None,
    sector: Any = None,
    placement: tf.Placement | None = None,
    orthogonal_to: Sequence[MPS] = (),
) -> DMRGResult:
    """Ground state of the Hermitian MPO ``H`` by DMRG sweeps.

    Args:
        H: the Hamiltonian (checked to be Hermitian).
        psi0: initial state; default a random MPS (``seed``) of bond dimension
            ``min(first max_bond, 8)`` for two-site and ``first max_bond`` for one-site.
        max_bond, cutoff: truncation per sweep (a number, or a list per sweep whose last
            entry repeats); ``cutoff`` bounds the relative discarded weight per bond.
        sweeps: the maximum number of sweeps (a sweep is a left-to-right and a
            right-to-left pass).
        tol: stop when ``|energy - previous energy| < tol``, checked only once the ``max_bond``
            and ``cutoff`` schedules are used up and the noise has decayed to 0.
        two_site: two-site updates (bonds grow through the SVD) or one-site updates
            with subspace expansion (Hubig et al. 2015) of strength ``noise``.
        noise: the perturbation of the first sweeps that lets a run leave the charge sector
            of its start state (dense runs) and grow its bonds: a random component of relative
            size ``noise`` in each local eigensolver's start vector and the density-matrix
            perturbation (White 2005) with the subspace-expansion terms (Hubig et al. 2015) of
            strength ``noise`` (conserved runs: within the sector, also in two-site sweeps). A list per
            sweep, or a start value that decays tenfold per sweep and is 0 below 1e-12;
            default :data:`TWO_SITE_NOISE` ``(1e-4, 1e-6, 0)`` for two-site and ``1e-4`` for
            one-site sweeps (from a product state, one-site runs need ``1e-3`` to grow their
            bonds reliably). ``noise=0`` turns it off: a run then leaves the charge sector of
            its start state through rounding errors only, if at all (from an eigenstate of
            ``H`` such as all spins up: never). Sectors whose lowest energies lie within ~1e-2
            may still trap a run in the wrong one; ``DMRGResult.sector`` says which it is.
        callback: called with each :class:`SweepRecord` after its sweep.
        progress: ``True`` for a progress bar on stderr (tqdm, a bar per sweep with the energy and
            the bond dimension, as the command line's), or a callable called with a
            :class:`BondUpdate` after every local update (inside the sweep, where Python's cyclic
            garbage collector is paused; reference counting still frees).
        eigensolver: ``"lanczos"`` (default, at most 40 products per local problem, 20 where the
            truncation is coarse or the sweep raises the bond dimension, the last sweep apart:
            ``sweep.TRUNCATED_MAX_ITER``) or
            ``"eigsh"`` (ARPACK), see ``_eigensolver``; with conserved charges, local problems of
            at most 128 states are diagonalized densely whatever the choice.
        seed: the seed of the random start state and of the noise: a non-negative integer
            or ``None``.
        compute_variance: compute ``<H^2> - <H>^2`` of the final state.
        threads: BLAS threads for the duration of the call (threadpoolctl; the caller's
            limits are restored afterwards): ``None`` (default) uses 1 thread while the
            largest ``max_bond`` is below ``THREADED_MIN_BOND`` (512; threaded BLAS gains
            little at these sizes and is many times slower on a busy machine) and the BLAS
            default above; ``0`` leaves the BLAS default; ``n`` uses ``n`` threads.
        conserve: run in one sector of a conserved charge: ``"Sz"`` (the
            spin spaces' ``"2Sz"``), ``"parity"`` (``"pauli"``, with ``tfim(conserve="parity")``),
            ``"N"`` (the particle number of ``"electron"``, with ``hubbard``), ``"auto"`` (the
            first charge of the local space, in its order, that ``H`` conserves, else dense; where
            it also picks the sector, no ``sector`` and no product-state ``psi0``, a charge with an
            ``Sz`` part only if the spin flip leaves ``H`` unchanged: in a field the ground state is
            magnetized, so ``"N,Sz"`` falls back to ``"N"`` and ``"Sz"`` to a dense run; a
            ferromagnetic anisotropy, the XXZ chain at ``Jz < -J``, has its ground states at the
            largest ``|Sz|``, which the default sector misses: give ``sector=`` there; a parity
            never, as no symmetry says which parity holds the ground state: the TFIM's is odd
            for g < 0 on an odd chain),
            ``"none"`` (dense) or ``None`` (the default: what a symmetric ``psi0`` or an MPO built
            with ``conserve=`` carries, else dense). The sweeps then run on the charge
            sectors of every bond (``_sector_dmrg``): the state never leaves the sector, and
            each step costs one small GEMM pair per sector instead of one dense product.
            ``H`` must conserve the charge (:class:`NonConservingError`). The result's ``state``
            is then a symmetric MPS.
        sector: the target sector in physical units (``Sz = 1``, ``0.5``; parity 0 or 1; ``N``);
            default the lowest ``|Sz|`` the chain reaches, half filling ``N = L`` and the even
            parity. With
            ``conserve``, ``psi0`` may be a symmetric MPS (``MPS.random(..., charge=...)``, a
            result of a conserved run) or a product of basis states: it fixes the sector.
        placement: where the sweeps run: ``tenferro.CPU`` or ``tenferro.gpu(i)`` (CuPy); ``None``
            (default): tenferro's default placement (:func:`tenferro.set_default_placement`). On a
            GPU the MPO, the state, the environments and the local eigensolver's Krylov vectors live
            on the device (only the Lanczos tridiagonal matrix and the truncation's weights are read
            back), the truncation takes its basis from the Gram matrix's eigenvectors (see
            ``_truncation``), and the result's state is copied back to the host once. Conserved
            runs keep their blocks on the device too (one GEMM or SVD per block; the charge
            bookkeeping stays on the host).
        orthogonal_to: earlier states (MPS, dense or symmetric) the result must be orthogonal
            to: every local eigenproblem is restricted to the complement of their local images
            (explicit projection, :mod:`tensor4all.algorithms.orthogonal`), so the run finds the
            lowest state orthogonal to them: the next excited state when they are the lower
            eigenstates (:func:`tensor4all.excited_states` calls this once per state).

    Every option is checked before the first sweep: typed errors name the option
    (:class:`InvalidOptionError`, :class:`Tensor4allTypeError`, :class:`BondDimensionError`).
    A Hamiltonian with NaN or infinity raises :class:`NonFiniteError`, a non-Hermitian one
    :class:`NonHermitianError`, one whose energies exceed ~1e150 (``<H^2>`` would overflow)
    :class:`ValueRangeError`; a start state of norm 0 :class:`ZeroNormError`.

    Returns:
        A :class:`DMRGResult` (with the charge ``sector`` of the final state when ``H``
        conserves a charge of its local space). If the MPO tensors are traced by tidu
        (couplings being differentiated), ``energy`` is differentiable to first order via
        Hellmann-Feynman.
    """
    if not isinstance(H, MPO):
        raise Tensor4allTypeError(f"dmrg expects an MPO Hamiltonian, got {type(H).__name__}")
    if psi0 is not None:
        check_compatible(psi0, H)
    sweeps = check_positive_int(sweeps, "sweeps", InvalidOptionError)
    check_schedule(max_bond, "max_bond", "bond")
    check_schedule(cutoff, "cutoff", "cutoff")
    tol = check_real(tol, "tol", low=0.0)
    two_site = check_bool(two_site, "two_site")
    compute_variance = check_bool(compute_variance, "compute_variance")
    seed = check_seed(seed, "dmrg: seed")
    callback = check_callable(callback, "callback")
    progress = progress_hook(progress, "dmrg: progress")
    solver = get_solver(eigensolver)
    threads = check_threads(threads)
    earlier = _check_orthogonal_to(orthogonal_to, H)
    origin = ("conserve=" if conserve is not None else "the MPO, built with conserve=") + repr(conserve or H.conserve)
    conserve = default_conserve(conserve, H, psi0)
    placement = check_placement(placement, "dmrg")
    if conserve is None and sector is not None:
        raise InvalidOptionError("dmrg: sector=... needs conserve=... (the charge whose sector it names)")
    largest_bond = max(max_bond) if isinstance(max_bond, (list, tuple)) else max_bond
    opts = dict(
        max_bond=max_bond,
        sweeps=sweeps,
        cutoff=cutoff,
        tol=tol,
        two_site=two_site,
        noise=noise_schedule(noise, two_site),
        seed=seed,
        callback=callback,
        progress=progress,
        solver=solver,
        compute_variance=compute_variance,
        local=H.local,
        conserve=conserve,
        sector=sector,
        placement=placement,
        conserve_origin=origin,
        orthogonal_to=earlier,
    )
    try:
        with blas_threads(threads, largest_bond), device_scope(placement):
            if not any_traced(H.tensors):
                return _run(H.tensors, psi0, opts)[0]
            return _run_differentiable(H, psi0, opts)
    finally:
        if isinstance(progress, SweepBar):
            progress.close()


def _run_differentiable(H: MPO, psi0: MPS | None, opts: dict) -> DMRGResult:
    holder: dict[str, DMRGResult] = {}

    @tidu.custom_jvp
    def ground_energy(*ws):
        res = _run(ws, psi0, opts)[0]
        holder["res"] = res
        return tf.asarray(np.float64(res.energy))

    @ground_energy.defjvp
    def ground_energy_jvp(primals, tangents):
        res, gradients = _run(primals, psi0, opts)
        holder["res"] = res
        grads = gradients()  # the converged environments, reused
        de = None
        for g, dw in zip(grads, tangents):
            term = tf.real(tf.sum(tf.asarray(g) * dw))
            de = term if de is None else de + term
        return tf.asarray(np.float64(res.energy)), de

    energy = ground_energy(*H.tensors)
    res = holder["res"]
    return DMRGResult(energy, res.state, res.history, res.variance, res.converged, res.sector)


def _check_orthogonal_to(states: Any, H: MPO) -> list[list[np.ndarray]]:
    """The earlier states of ``orthogonal_to`` as dense site arrays (typed errors for anything
    but finite, nonzero MPS on the sites of ``H``)."""
    if isinstance(states, MPS) or not isinstance(states, (list, tuple)):
        raise Tensor4allTypeError(
            f"dmrg: orthogonal_to takes a list of MPS (the earlier states), got {type(states).__name__}"
        )
    out = []
    for n, psi in enumerate(states):
        psi = getattr(psi, "state", psi) if isinstance(psi, DMRGResult) else psi
        if not isinstance(psi, MPS):
            raise Tensor4allTypeError(f"dmrg: orthogonal_to[{n}] is a {type(psi).__name__}, expected an MPS")
        check_compatible(psi, H)
        arrays = [to_numpy(t, f"dmrg orthogonal_to[{n}]") for t in psi.dense().tensors]
        check_finite_arrays(arrays, f"dmrg: orthogonal_to[{n}]")
        if not float(psi.norm()) > 0.0:
            raise ZeroNormError(f"dmrg: orthogonal_to[{n}] has norm 0; give the earlier states themselves")
        out.append(arrays)
    if out and H.L < 2:
        raise InvalidOptionError("dmrg: orthogonal_to needs at least 2 sites (one site is solved exactly)")
    return out


def _check_orthogonal_result(state: MPS, psi: list[Any], earlier: list[list[np.ndarray]], discarded: float) -> None:
    """A run ``orthogonal_to`` earlier states must end orthogonal to them: its sweeps take, where
    a local space has no room (:meth:`.orthogonal.OrthogonalImages.restrict`), the direction least
    overlapping them; a sector with no more states than there are earlier ones, or sweeps too few
    or bonds too small to leave those directions, end overlapping: a typed error, not an earlier
    state returned as a new one."""
    found = overlaps(earlier, psi)
    worst = int(np.argmax(found))
    limit = max(ORTHOGONAL_TOL, 10.0 * float(np.sqrt(max(discarded, 0.0))))
    if not found[worst] > limit:
        return
    size = sector_size(state)
    if size <= len(earlier):
        where = f"the sector {state.sector}" if state.symmetric else "the whole space"
        why = f"{where} holds {size} states and orthogonal_to gives {len(earlier)}: no state of it is orthogonal to them all"
    else:
        why = "the sweeps found no orthogonal state; give more sweeps or a larger max_bond"
    raise NoOrthogonalStateError(
        f"dmrg: the state found overlaps orthogonal_to[{worst}] by |<k|psi>| = {found[worst]:.3g} "
        f"(at most {limit:.1g} counts as orthogonal); {why}"
    )


def _start_state(psi0: MPS | None, H: MPO, ws: list[np.ndarray], opts: dict) -> list[np.ndarray]:
    """The start state's site tensors, each scaled by a power of two (the state is the same)."""
    chi0 = check_positive_int(per_sweep(opts["max_bond"], 0), "max_bond")
    if psi0 is None:
        if len(set(H.phys_dims)) != 1:
            raise DimensionMismatchError(
                f"dmrg needs psi0 when the sites have different dimensions (physical dimensions {list(H.phys_dims)})"
            )
        start = chi0 if not opts["two_site"] else min(chi0, 8)
        dtype = np.result_type(*ws)
        psi0 = MPS.random(H.L, H.phys_dims[0], bond_dim=start, seed=opts["seed"], dtype=dtype)
    check_compatible(psi0, H)
    arrays = [to_numpy(t, "dmrg psi0") for t in psi0.dense().tensors]
    check_finite_arrays(arrays, "dmrg: psi0")
    if not float(MPS([ldexp(a, -exponent(a)) for a in arrays]).norm()) > 0.0:
        raise ZeroNormError(
            "dmrg: the start state psi0 has norm 0; give a nonzero state (or psi0=None for a random one)"
        )
    return [ldexp(a, -exponent(a)) for a in arrays]


def _engine(ws_run: list[np.ndarray], psi0: MPS | None, H: MPO, ws: list[np.ndarray], opts: dict) -> Any:
    """The sweep engine: dense (``SweepEngine``) or, with ``conserve``, on the charge sectors
    (``SectorEngine``); both have the same ``sweep``/``psi``/``operator_gradients``."""
    if opts["conserve"] is not None:
        states = sites = None
        centered = False  # sites right-orthonormal from site 1 on (psi0's known centre at 0)
        sector = opts["sector"]
        if psi0 is not None:
            check_compatible(psi0, H)
            if psi0.symmetric:
                sector = _psi0_sector(psi0, sector)
                check_finite_arrays(leaves_of(psi0.tensors), "dmrg: psi0")
                if not float(psi0.norm()) > 0.0:
                    raise ZeroNormError("dmrg: the start state psi0 has norm 0; give a nonzero state")
                sites, centered = psi0.tensors, psi0.center == 0
            else:
                states = start_states(psi0, opts["conserve"], opts["conserve_origin"])
        spec = resolve_sector(opts["conserve"], sector, opts["local"], ws, states)
        if spec is not None:
            if sites is not None and [list(q) for q in spec.q] != [list(_basis_charges(t)) for t in psi0.tensors]:
                raise InvalidOptionError(
                    f"dmrg: psi0's basis charges {list(_basis_charges(psi0.tensors[0]))} differ "
                    f"from the local space's {list(spec.q[0])} ({spec.charge})"
                )
            grading = Grading(
                spec.label,
                spec.charge,
                spec.unit,
                U1() if spec.modulus == 0 else Zn(spec.modulus),
                tuple(map(tuple, spec.q)),
            )
            if states is None and sites is None:
                # the two-site SVD grows the bonds from a product state; a search orthogonal to
                # earlier states starts random (seeded): where H is diagonal in the product basis
                # (t = 0, J = 0) a product start with the earlier states projected out could not
                # move its charges and ended in a higher level (spinless fermions L = 4, t = 0:
                # levels [0, 0, 1, 0] for [0, 0, 0, 1])
                if opts["two_site"] and not opts["orthogonal_to"]:
                    states = sector_product_state(spec.q, spec.target, spec.modulus, spec.parts)
                else:  # one-site sweeps keep the bonds they start with (plus the expansion)
                    sites = _random_sector_start(grading, spec.target, ws, opts)
            engine = SectorEngine(
                ws_run,
                spec.w_charges,
                spec.q,
                states,
                opts["solver"],
                modulus=spec.modulus,
                seed=opts["seed"],
                sites=sites,
                centered=centered,
                placement=opts["placement"],
            )
            engine.sector = spec.sector(engine.target)
            engine.grading = grading
            return engine
        if opts["sector"] is not None:
            raise InvalidOptionError(
                "dmrg: sector=... was given, but conserve='auto' found no charge that the Hamiltonian conserves"
            )
    return SweepEngine(
        ws_run, _start_state(psi0, H, ws, opts), opts["solver"], seed=opts["seed"], placement=opts["placement"]
    )


def _random_sector_start(g: Grading, target: int, ws: list[np.ndarray], opts: dict) -> list:
    """A random state of the sector (bond dimension the first ``max_bond``, as the dense one-site
    start): its symmetric sites."""
    chi0 = check_positive_int(per_sweep(opts["max_bond"], 0), "max_bond")
    legs = [phys_leg(g.symmetry, q, i)[0] for i, q in enumerate(g.q)]
    sites = random_sites(
        legs, g.symmetry.canonical(target), chi0, np.random.default_rng(opts["seed"]), np.result_type(*ws, np.float64)
    )
    return sites


def _psi0_sector(psi0: MPS, sector: Any) -> Any:
    """The sector of a symmetric start state in physical units (a tuple ``(N, Sz)`` for
    ``"N,Sz"``); ``sector``, if given, must be the same."""
    g = psi0._grading
    q = psi0._group_charge
    if sector is not None and g.integer(sector, "dmrg: sector") != q:
        shown = ", ".join(f"{k} = {v:g}" for k, v in g.sector(q).items())
        raise InvalidOptionError(
            f"dmrg: psi0 is in the sector {shown}, but sector={sector!r} was asked for; give one of them"
        )
    return g.value(q)


def _basis_charges(site: Any) -> tuple[int, ...]:
    return tuple(int(q) for q, d in site.legs[1].sectors.items() for _ in range(d))


def _run(tensors: Sequence[Any], psi0: MPS | None, opts: dict) -> tuple[DMRGResult, Callable[[], list]]:
    """The sweeps on concrete MPO tensors. Returns the result and a function giving the
    Hellmann-Feynman gradients ``dE/dW_i`` from the engine's converged environments."""
    ws = [mpo_array(w) for w in tensors]
    shifts = check_hamiltonian(ws)
    H = MPO(ws)
    shift = sum(shifts)  # H = 2**shift H'' where H'' has the site tensors below
    ws_run = [ldexp(w, -t) for w, t in zip(ws, shifts)] if shift or any(shifts) else ws
    engine = _engine(ws_run, psi0, H, ws, opts)
    engine.orthogonal_to(opts["orthogonal_to"])
    progress = opts["progress"]
    if progress is not None and shift:
        user_progress = progress

        def progress(update: BondUpdate) -> Any:
            return user_progress(dataclasses.replace(update, energy=float(ldexp(update.energy, shift))))

    tol_run = float(ldexp(opts["tol"], -shift))
    history: list[SweepRecord] = []
    previous = np.nan
    last_delta_run = np.nan  # in the units of the sweeps (H'')
    converged = False
    n_sched = max(len(v) if isinstance(v, (list, tuple)) else 1 for v in (opts["max_bond"], opts["cutoff"]))
    for k in range(opts["sweeps"]):
        chi = int(per_sweep(opts["max_bond"], k))
        cut = float(per_sweep(opts["cutoff"], k))
        alpha = opts["noise"](k)
        local_tol = local_tolerance(
            len(history),
            last_delta_run,
            tol_run,  # the discarded weight as an energy
            float(ldexp(history[-1].max_truncation_error, -shift)) if history else 0.0,
        )
        # the last sweep's discarded weight predicts this one's only where the bonds may not grow
        same = history and chi <= history[-1].max_bond_limit and cut >= history[-1].cutoff
        discarded = history[-1].max_truncation_error if same else 0.0
        # a sweep that raises the bond dimension, not the last: at most TeNPy's N_max products per
        # problem (the sweeps at the new dimension solve again what the truncation then changes)
        cap = TRUNCATED_MAX_ITER if history and not same and k + 1 < opts["sweeps"] else None
        st = engine.sweep(
            two_site=opts["two_site"],
            max_bond=chi,
            cutoff=cut,
            tol=local_tol,
            alpha=alpha,
            sweep_no=k + 1,
            progress=progress,
            state_tol=state_tolerance,
            discarded=discarded,
            max_iter=cap,
        )
        energy = float(ldexp(st.energy, shift))
        delta = energy - previous if history else float("nan")
        last_delta_run = float(ldexp(delta, -shift)) if history else float("nan")
        rec = SweepRecord(
            k + 1,
            energy,
            delta,
            st.max_bond,
            st.max_truncation_error,
            st.matvecs,
            st.seconds,
            st.peak_memory,
            st.env_memory,
            chi,
            cut,
            alpha,
            getattr(st, "blocks_mid", None),
            st.exact_solves,
        )
        history.append(rec)
        if opts["callback"] is not None:
            opts["callback"](rec)
        previous = energy
        if history[1:] and abs(delta) < opts["tol"] and k + 1 >= n_sched and alpha == 0.0 and cap is None:
            converged = True
            break
    if isinstance(engine, SectorEngine):
        psi = psi_run = engine.psi  # the sector engine assembles its dense sites on each read: read once
        state = MPS._symmetric(engine.backend.site_tensors(engine.grading), engine.grading)
    else:
        psi_run, psi = engine.psi, engine.host_psi()  # where the sweeps ran; on the host
        state = MPS([host_tensor(a) for a in psi])  # on the host, as documented
    # the sweeps end at site 0 with the other sites right-orthonormal: one SVD sweep gives the
    # state's Schmidt form, which entropies, spectra and measurements then read (about 2% of the
    # sweeps' time at L = 64, chi 128: benchmarks/analysis.py)
    state._set_center(0).schmidt_form()
    if opts["orthogonal_to"]:
        _check_orthogonal_result(state, psi, opts["orthogonal_to"], history[-1].max_truncation_error)
    energy = history[-1].energy
    variance = float("nan")
    if opts["compute_variance"]:
        e_run = float(ldexp(energy, -shift))
        # a rescaled automaton MPO carries large identity strings whose squares would overflow
        # in <H^2>: use the same operator compressed (orthonormal sites, the norm spread evenly)
        ws_var = compress_mpo_tensors(ws_run, 0.0) if shift else ws_run
        ws_var = to_device(ws_var, tf.placement_of(psi_run[0]))
        variance = float(ldexp(float(mpo_squared(ws_var, psi_run).real) - e_run * e_run, 2 * shift))

    sector = engine.sector if isinstance(engine, SectorEngine) else measured_sector(ws, psi_run, opts["local"])

    def gradients() -> list[np.ndarray]:
        # E = 2**shift E''(W'') with W_i'' = 2**-t_i W_i, so dE/dW_i = 2**(shift - t_i) dE''/dW_i''
        return [ldexp(g, shift - t) for g, t in zip(engine.operator_gradients(), shifts)]

    return DMRGResult(energy, state, history, variance, converged, sector), gradients
