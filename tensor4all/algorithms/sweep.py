"""The DMRG sweep, written once: a loop over a sweep schedule (:mod:`._schedule`) that, for
each step, asks a tensor backend for the local problem, solves it with the local
eigensolver, asks the backend to split the new local tensor with truncation and to move
the environment (TeNPy's ``Sweep`` engine apart from its ``OneSiteH``/``TwoSiteH``; quimb's
``MovingEnvironment``).

The backend is one declared protocol (:class:`~.backend.SweepBackend`, chosen by
:func:`~.backend.make_backend`); the dense one
(:mod:`._dense_backend`, :class:`SweepEngine`) and the one on charge-sector blocks
(:mod:`._sector_backend`, ``_sector_dmrg.SectorEngine``) implement it. What the loop itself
owns is what every backend shares: the order of the steps, the eigensolver call, the noise
of its start vector, the progress callbacks (:class:`BondUpdate`) and the statistics
(:class:`SweepStats`; the memory is taken right after each eigensolve: environments, state
and the backend's estimate of the solver's workspace). Knows nothing of tenferro, and of tidu
only ``paused_gc``; ``_dmrg`` converts at the boundary.

A sweep (and a time step) runs with Python's cyclic garbage collector paused
(:func:`_collector_paused`): a step allocates thousands of small objects (block dicts, plans,
tuples of the products' tables), and the collector's passes over a heap that the run's caches
fill took 4% of a Hubbard chain's run (L = 64, chi 400: 0.6 s of 14 s, eight full collections of
50 ms each). Reference counting frees a step's arrays as before; the few cycles the sweeps leave
(425 objects on that run) are collected after them. A ``progress`` callback runs inside the sweep,
with the collector paused too.

Noise (``alpha > 0``, the first sweeps by default) perturbs each local update twice, so that
a run can leave the charge sector of its start state (a Krylov solver started in one sector
stays there in exact arithmetic, and the all-up state is even an eigenstate of the XXZ chain):

* here, the eigensolver starts from the current tensor plus a random tensor of relative
  norm ``alpha`` (seeded), so the local ground state is found in every sector the local
  space holds, not only in the start vector's;
* in the backend's split, the new basis at the bond keeps the states that the Hamiltonian
  connects to the current state (White's density-matrix perturbation, S. R. White,
  Phys. Rev. B 72, 180403(R) (2005), with the subspace-expansion terms of C. Hubig,
  I. P. McCulloch, U. Schollwoeck and F. A. Wolf, Phys. Rev. B 91, 155115 (2015); see
  :mod:`._dense_backend`). A sector backend never leaves its sector: its one-site steps
  take the same expansion within the sector only so that the bonds can grow.

With ``alpha = 0`` the sweeps are unperturbed.

The same loop walks the schedule for time evolution (:meth:`Sweep.evolve`): one
second-order TDVP step (J. Haegeman, C. Lubich, I. Oseledets, B. Vandereycken and
F. Verstraete, Phys. Rev. B 94, 165116 (2016)) is a left-to-right pass and a right-to-left
pass, each evolving the local tensors forward by half the step with the Krylov exponential
(:mod:`._krylov`) instead of the eigensolver, and after each split the tensor at the centre's
new position backward by the same half step (the site for two-site steps, the bond matrix for
one-site steps; none after the last split of a pass, where the next forward step follows
at once). One-site steps evolve the last site of a pass once by a whole step at the turn
(its two half steps are consecutive) and the first site once more at the end.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from tidu import paused_gc

from .backend import LocalProblem, SweepBackend, make_backend
from .dense_backend import DenseBackend
from .orthogonal import OrthogonalImages, ProjectedOperator
from ..tools.device import array_module, to_host
from ..linalg.eigensolver import DENSE_MAX, dense_lowest_level
from .schedule import sweep_schedule

__all__ = [
    "MAX_ITER",
    "TRUNCATED_MAX_ITER",
    "SweepStats",
    "BondUpdate",
    "SweepBackend",
    "LocalProblem",
    "Sweep",
    "SweepEngine",
    "perturbed",
    "EvolveStats",
]


#: a bond dimension no split reaches (one-site TDVP keeps its bonds)
_NO_LIMIT = 2**62


def perturbed(v0: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """``v0`` plus a random tensor of norm ``alpha * ||v0||``: a component in every sector
    (the noise of an eigensolver's start vector), drawn on the host and copied where ``v0`` lives."""
    r = rng.standard_normal(v0.shape)
    if np.iscomplexobj(v0):
        r = r + 1j * rng.standard_normal(v0.shape)
    scale = alpha * float(np.linalg.norm(v0)) / np.linalg.norm(r)
    return v0 + array_module(v0).asarray((scale * r).astype(v0.dtype, copy=False))


@dataclass
class BondUpdate:
    """What the per-bond progress hook receives after each local update."""

    sweep: int  #: 1-based sweep number
    step: int  #: 1-based local update within the sweep
    steps: int  #: local updates per sweep
    site: int  #: left site of the updated pair (two-site) or the updated site
    direction: str  #: "right" or "left"
    energy: float  #: eigenvalue of the local problem
    bond_dim: int  #: bond dimension just created
    truncation_error: float


@dataclass
class SweepStats:
    energy: float
    max_bond: int
    max_truncation_error: float
    matvecs: int
    seconds: float
    peak_memory: int
    env_memory: int
    exact_solves: int = 0  #: local problems solved exactly (dense matrix, no products)


@dataclass
class EvolveStats:
    """One time step of :meth:`Sweep.evolve`."""

    max_bond: int
    max_truncation_error: float
    matvecs: int
    max_krylov_error: float  #: largest a-posteriori error estimate of the local exponentials
    seconds: float


MAX_ITER = 40
"""The most products a local eigenproblem gets (the engines' default ``max_iter``)."""

TRUNCATED_MAX_ITER = 20
TRUNCATED_STATE_TOL = 1e-9
"""Where the truncation allows a state error of at least ``TRUNCATED_STATE_TOL`` (a discarded
weight of 2e-8 and more), a local problem gets at most ``TRUNCATED_MAX_ITER`` products (TeNPy's
``N_max``), else ``max_iter`` (:data:`MAX_ITER`). Measured: 20 everywhere took the 6 x 3 Hubbard
cylinder from 12.2 s to 9.5 s, but left the TFIM (L = 16, chi 32) at g = 0.3999 in the state
3.6e-7 above the ground state (two levels that close need more products to tell apart); with the
cap only where the truncation is coarse, that run finds the ground state again. A sweep that raises
the bond dimension (or lowers the cutoff), the run's last sweep apart, gets the cap whatever its
tolerance (``dmrg`` passes ``Sweep.sweep(max_iter=)``), as TeNPy's every sweep: the sweeps at the
new dimension solve again what its truncation changes. Measured (``benchmarks/dmrg_hubbard.py``,
one core): the Hubbard chain (L = 64, chi 50 ... 400) made up to 40 products per problem in its
sweeps at chi 100 and 200, 7010 products in all against 6125 with the cap, 20.3-20.7 s against
19.2-19.8 s, and ended 5e-11 lower; the 8 x 4 cylinder 6e-7 lower, the 6 x 3 cylinder (m = 400)
3.4e-7 lower (5.1e-7 below TeNPy's, 1.7e-7 below before); the spin-1 chain (m = 200, 400)
unchanged."""


def _collector_paused(method: Callable) -> Callable:
    """``method`` run with the cyclic garbage collector paused (``tidu.paused_gc``: restored on
    exit, errors included; a collector the caller disabled stays disabled)."""

    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> Any:
        with paused_gc():
            return method(*args, **kwargs)

    return run


class Sweep:
    """A DMRG run on one backend: ``sweep(...)`` walks the schedule once; the eigensolver,
    its noise and the statistics are shared by all backends."""

    def __init__(self, backend: SweepBackend, solver: Callable, max_iter: int = MAX_ITER, seed: int | None = 0):
        self.backend = backend
        self.solver = solver
        self.max_iter = max_iter
        self._rng = np.random.default_rng(seed)  # the noise of the eigensolver's start vectors
        self.orthogonal: OrthogonalImages | None = None

    def orthogonal_to(self, states: list[list[np.ndarray]]) -> None:
        """Keep the state orthogonal to ``states`` (dense site arrays each) from now on: every
        local eigenproblem is restricted to the complement of their local images
        (:mod:`.orthogonal`). Call with the centre at site 0 (between sweeps)."""
        self.orthogonal = OrthogonalImages(self.backend, states, self._rng) if states else None

    @property
    def L(self) -> int:
        return self.backend.L

    def schedule(self, two_site: bool) -> tuple[Any, ...]:
        """The steps of one DMRG sweep: the chain's (:func:`~.schedule.sweep_schedule`); a tree's
        engine (:mod:`tensor4all.trees`) walks its tree's Euler tour through the same loop."""
        return sweep_schedule(self.L, two_site)

    @_collector_paused
    def sweep(
        self,
        *,
        two_site: bool,
        max_bond: int,
        cutoff: float,
        tol: float,
        alpha: float,
        sweep_no: int,
        progress: Callable[[BondUpdate], None] | None,
        state_tol: Callable[[float], float] | None = None,
        discarded: float = 0.0,
        max_iter: int | None = None,
    ) -> SweepStats:
        """One full sweep (left to right, then back); the energy is measured at the end. The
        eigensolver stops on ``tol`` (its energy) or on its vector's error, below
        ``state_tol(w)`` (None: off) with ``w`` = ``discarded`` (the caller's estimate from
        earlier sweeps, TeNPy's rule) where it is positive, else the largest weight discarded so
        far in this sweep, and after at most ``max_iter`` products (None: the engine's
        ``max_iter``, see :data:`TRUNCATED_MAX_ITER`). A degenerate lowest level found by the
        dense local solver goes to the backend's split whole (``level``), which keeps the basis
        of its equal mixture."""
        t0 = time.perf_counter()
        b = self.backend
        env = b.env_bytes()
        self._stats = st = dict(err=0.0, matvecs=0, exact=0, peak=env + b.psi_bytes(), env=env)
        schedule = self.schedule(two_site)
        for n, step in enumerate(schedule, 1):
            local = b.local_problem(step)
            if self.orthogonal is not None:
                self.orthogonal.restrict(local)
            # the vector's tolerance: the earlier sweeps' weight where given, else this sweep's so far
            weight = discarded if discarded > 0.0 else st["err"]
            e, v, level = self._solve(local, tol, alpha, state_tol(weight) if state_tol else 0.0, max_iter)
            # a degenerate lowest level: the split keeps the basis of the level's equal mixture
            k, err = b.split(local, v, alpha=alpha, max_bond=max_bond, cutoff=cutoff, level=level)
            b.move(local)
            if self.orthogonal is not None:
                self.orthogonal.moved(local)
            st["err"] = max(st["err"], err)
            if progress is not None:
                progress(BondUpdate(sweep_no, n, len(schedule), step.site, step.direction, e, k, err))
        if schedule:
            b.normalize()
            energy = b.energy()
        else:  # one site: no bond to sweep over, the whole problem is local
            energy = b.single_site()
        return SweepStats(
            energy,
            max(b.bond_dims(), default=1),
            st["err"],
            st["matvecs"],
            time.perf_counter() - t0,
            st["peak"],
            st["env"],
            st["exact"],
        )

    def _solve(
        self, local: LocalProblem, tol: float, alpha: float, state_tol: float = 0.0, max_iter: int | None = None
    ) -> tuple[float, np.ndarray, list[np.ndarray]]:
        """The lowest eigenpair of the local problem, from a start vector with noise ``alpha``, and
        the rest of its level where the dense solver found it degenerate (else empty)."""
        level: list[np.ndarray] = []
        size = local.op.shape[0]
        exact = 0 < size <= DENSE_MAX and hasattr(local.op, "dense")
        if exact:  # no Krylov trap, no start vector
            like = getattr(local, "like", None)
            e, v, level = dense_lowest_level(local.op, local.v0 if like is None else like)
            n = 0
        else:
            v0 = local.v0
            if alpha > 0.0 and v0.size:
                v0 = perturbed(v0, alpha, self._rng)
                if isinstance(local.op, ProjectedOperator):
                    v0 = local.op.project(v0)
            cap = self.max_iter if max_iter is None else min(self.max_iter, max_iter)
            limit = cap if state_tol < TRUNCATED_STATE_TOL else min(cap, TRUNCATED_MAX_ITER)
            e, v, n = self.solver(local.op, v0, tol=tol, max_iter=limit, state_tol=state_tol)
        if isinstance(local.op, ProjectedOperator):  # the rounding a Krylov space picked up
            v = local.op.project(v)
            v = v / array_module(v).linalg.norm(v)
        st, b = self._stats, self.backend
        st["matvecs"] += n
        st["exact"] += exact
        env = b.env_bytes()
        st["env"] = max(st["env"], env)
        st["peak"] = max(st["peak"], env + b.psi_bytes() + b.work_bytes(local, n))
        return float(e), v, level

    def energy(self) -> float:
        return self.backend.energy()

    def bond_dims(self) -> list[int]:
        return self.backend.bond_dims()

    # ---- time evolution ----------------------------------------------------------------
    @_collector_paused
    def evolve(
        self,
        tau: complex,
        *,
        two_site: bool,
        max_bond: int,
        cutoff: float,
        krylov_tol: float,
        hermitian: bool = True,
        step_no: int = 1,
        progress: Callable[[BondUpdate], None] | None = None,
    ) -> EvolveStats:
        """One second-order TDVP step ``psi -> exp(tau H) psi`` (``tau = -i dt`` real time,
        ``-dt`` imaginary time) over the sweep schedule (see the module), with the backend's
        ``expm``, ``backward_problem``, ``set_local`` and ``site_problem`` (:class:`SweepBackend`).
        The centre is at site 0 before and after."""
        t0 = time.perf_counter()
        b = self.backend
        st = self._stats = dict(err=0.0, matvecs=0, kerr=0.0)
        half = tau / 2
        schedule = sweep_schedule(b.L, two_site)
        if not schedule:  # one site: the whole problem is local
            b.set_local(b.site_problem(0), self._exp(b.site_problem(0), tau, krylov_tol, hermitian))
        for n, step in enumerate(schedule):
            first = n == 0 or schedule[n - 1].direction != step.direction
            last = n + 1 == len(schedule) or schedule[n + 1].direction != step.direction
            # one-site: the site at the turn takes both of its half steps at once
            t_fwd = tau if (not two_site and first and n > 0) else half
            local = b.local_problem(step)
            v = self._exp(local, t_fwd, krylov_tol, hermitian)
            if two_site:
                k, err = b.split(local, v, alpha=0.0, max_bond=max_bond, cutoff=cutoff)
            else:  # one-site steps keep their bonds (no truncation: norm and energy are conserved)
                k, err = b.split(local, v, alpha=0.0, max_bond=_NO_LIMIT, cutoff=0.0, keep_bond=True)
            b.move(local)
            st["err"] = max(st["err"], err)
            if not two_site or not last:
                back = b.backward_problem(step)
                b.set_local(back, self._exp(back, -half, krylov_tol, hermitian))
            if progress is not None:
                progress(BondUpdate(step_no, n + 1, len(schedule), step.site, step.direction, float("nan"), k, err))
        if schedule and not two_site:  # the first site's second half step closes the left pass
            local = b.site_problem(0)
            b.set_local(local, self._exp(local, half, krylov_tol, hermitian))
        return EvolveStats(
            max(b.bond_dims(), default=1), st["err"], st["matvecs"], st["kerr"], time.perf_counter() - t0
        )

    def _exp(self, local: LocalProblem, tau: complex, tol: float, hermitian: bool) -> np.ndarray:
        r = self.backend.expm(local.op, local.v0, tau, tol=tol, hermitian=hermitian)
        self._stats["matvecs"] += r.matvecs
        self._stats["kerr"] = max(self._stats["kerr"], r.error)
        return r.vector


class SweepEngine(Sweep):
    """The dense run: :class:`Sweep` over a :class:`~._dense_backend.DenseBackend` (MPS
    tensors with the centre at site 0 between sweeps, MPO tensors, the environment cache)."""

    backend: DenseBackend

    def __init__(
        self,
        ws: list[np.ndarray],
        psi: list[np.ndarray],
        solver: Callable,
        max_iter: int = MAX_ITER,
        seed: int | None = 0,
        placement: Any = None,
    ):
        super().__init__(make_backend(ws, psi, placement=placement), solver, max_iter=max_iter, seed=seed)

    @property
    def psi(self) -> list[np.ndarray]:
        return self.backend.psi

    @property
    def ws(self) -> list[np.ndarray]:
        return self.backend.ws

    @property
    def dtype(self) -> np.dtype:
        return self.backend.dtype

    def nbytes(self) -> int:
        return self.backend.env_bytes() + self.backend.psi_bytes()

    def host_psi(self) -> list[np.ndarray]:
        """The site tensors as NumPy arrays."""
        return self.backend.host_psi()

    def operator_gradients(self) -> list[np.ndarray]:
        """``dE/dW_i`` (Hellmann-Feynman) at the current state (see the backend), as NumPy arrays."""
        return [to_host(g) for g in self.backend.operator_gradients()]
