"""``dmrg``: ground states of MPO Hamiltonians, with a differentiable energy.

The sweeps run on raw NumPy arrays (``_sweep``); this module validates input, turns
schedules into per-sweep settings, records the history, and makes the energy
differentiable in the MPO tensors by the Hellmann-Feynman theorem: at the converged
state ``dE = <psi| dH |psi>`` (a ``tidu.custom_jvp`` rule; reverse mode transposes it).
So ``tidu.grad(lambda J: dmrg(models.heisenberg(L, J)).energy)(J0)`` works.
"""
from __future__ import annotations

import numbers
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

import tenferro as tf
import tidu

from ._eigensolver import get_solver
from ._environments import mpo_squared
from ._errors import (DimensionMismatchError, InvalidOptionError, NonHermitianError, NotDifferentiableError,
                      Tensor4allTypeError)
from ._mpo import MPO, check_compatible
from ._mps import MPS
from ._sweep import BondUpdate, SweepEngine
from ._threads import blas_threads, check_threads
from ._util import any_traced, check_positive_int, to_numpy

__all__ = ["dmrg", "DMRGResult", "SweepRecord", "BondUpdate"]


@dataclass
class SweepRecord:
    """One sweep of the history: what users compare across codes."""

    sweep: int                    #: 1-based sweep number
    energy: float                 #: <psi|H|psi> of the normalized state after the sweep
    delta_energy: float           #: energy - previous sweep's energy (nan for the first)
    max_bond: int                 #: largest bond dimension after the sweep
    max_truncation_error: float   #: largest relative discarded weight of the sweep
    matvecs: int                  #: effective-Hamiltonian products in the local eigensolver
    seconds: float                #: wall time of the sweep
    peak_memory: int              #: peak bytes of environments + MPS + eigensolver workspace
    env_memory: int = 0           #: peak bytes of the environment cache alone
    max_bond_limit: int = 0       #: the max_bond setting of this sweep
    cutoff: float = 0.0           #: the cutoff setting of this sweep
    noise: float = 0.0            #: the subspace-expansion strength of this sweep (one-site)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DMRGResult:
    """``energy`` (a float, or a tidu tracer while differentiating), ``state`` (the
    normalized MPS), ``history`` (one :class:`SweepRecord` per sweep) and ``variance``
    (``<H^2> - <H>^2`` of the final state; nan if not computed)."""

    energy: Any
    state: MPS
    history: list[SweepRecord] = field(default_factory=list)
    variance: float = float("nan")
    converged: bool = False

    def __iter__(self):  # energy, state = dmrg(H)
        return iter((self.energy, self.state))


def _per_sweep(value: Any, k: int) -> Any:
    if isinstance(value, (list, tuple)):
        return value[min(k, len(value) - 1)]
    return value


def _check_schedule(value: Any, what: str, kind: str) -> None:
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    if not vals:
        raise InvalidOptionError(f"{what} schedule is empty; give a number or a non-empty list")
    for v in vals:
        if kind == "bond":
            check_positive_int(v, what)
        elif isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0:
            raise InvalidOptionError(f"{what} must be a non-negative number (or a list of them), got {v!r}")


def _noise_schedule(noise: Any, two_site: bool) -> Callable[[int], float]:
    if noise is None:
        if two_site:
            return lambda k: 0.0
        noise = 1e-4
    if isinstance(noise, (list, tuple)):
        _check_schedule(noise, "noise", "real")
        return lambda k: float(_per_sweep(noise, k))
    _check_schedule(noise, "noise", "real")
    a0 = float(noise)
    return lambda k: a0 * 10.0 ** (-k) if a0 * 10.0 ** (-k) >= 1e-12 else 0.0


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
    progress: Callable[[BondUpdate], Any] | None = None,
    eigensolver: str = "lanczos",
    compute_variance: bool = True,
    threads: int | None = None,
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
            and ``cutoff`` schedules are used up and (one-site) the noise has decayed to 0.
        two_site: two-site updates (bonds grow through the SVD) or one-site updates
            with subspace expansion (Hubig et al. 2015) of strength ``noise``.
        noise: one-site expansion strength: a list per sweep, or a start value that
            decays tenfold per sweep (default ``1e-4``); two-site sweeps ignore it.
        callback: called with each :class:`SweepRecord` after its sweep.
        progress: called with a :class:`BondUpdate` after every local update.
        eigensolver: ``"lanczos"`` (default) or ``"eigsh"`` (ARPACK), see ``_eigensolver``.
        compute_variance: compute ``<H^2> - <H>^2`` of the final state.
        threads: BLAS threads for the duration of the call (threadpoolctl; the caller's
            limits are restored afterwards): ``None`` (default) uses 1 thread while the
            largest ``max_bond`` is below ``THREADED_MIN_BOND`` (512; threaded BLAS gains
            little at these sizes and is many times slower on a busy machine) and the BLAS
            default above; ``0`` leaves the BLAS default; ``n`` uses ``n`` threads.

    Returns:
        A :class:`DMRGResult`. If the MPO tensors are traced by tidu (couplings being
        differentiated), ``energy`` is differentiable to first order via Hellmann-Feynman.
    """
    if not isinstance(H, MPO):
        raise Tensor4allTypeError(f"dmrg expects an MPO Hamiltonian, got {type(H).__name__}")
    if psi0 is not None:
        check_compatible(psi0, H)
    sweeps = check_positive_int(sweeps, "sweeps")
    _check_schedule(max_bond, "max_bond", "bond")
    _check_schedule(cutoff, "cutoff", "real")
    solver = get_solver(eigensolver)
    threads = check_threads(threads)
    largest_bond = max(max_bond) if isinstance(max_bond, (list, tuple)) else max_bond
    opts = dict(max_bond=max_bond, sweeps=sweeps, cutoff=cutoff, tol=float(tol), two_site=bool(two_site),
                noise=_noise_schedule(noise, two_site), seed=seed, callback=callback, progress=progress,
                solver=solver, compute_variance=compute_variance)
    with blas_threads(threads, largest_bond):
        if not any_traced(H.tensors):
            return _run(H.tensors, psi0, opts)[0]
        return _run_differentiable(H, psi0, opts)


def _run_differentiable(H: MPO, psi0: MPS | None, opts: dict) -> DMRGResult:
    holder: dict[str, DMRGResult] = {}

    @tidu.custom_jvp
    def ground_energy(*ws):
        res = _run(ws, psi0, opts)[0]
        holder["res"] = res
        return tf.asarray(np.float64(res.energy))

    @ground_energy.defjvp
    def ground_energy_jvp(primals, tangents):
        res, engine = _run(primals, psi0, opts)
        holder["res"] = res
        grads = engine.operator_gradients()  # the converged environments, reused
        de = None
        for g, dw in zip(grads, tangents):
            term = tf.real(tf.sum(tf.asarray(g) * dw))
            de = term if de is None else de + term
        return tf.asarray(np.float64(res.energy)), de

    energy = ground_energy(*H.tensors)
    res = holder["res"]
    return DMRGResult(energy, res.state, res.history, res.variance, res.converged)


def _numpy(w: Any) -> np.ndarray:
    try:
        return np.ascontiguousarray(to_numpy(w, "dmrg"))
    except NotDifferentiableError:
        raise NotDifferentiableError(
            "the DMRG energy is differentiable to first order only (Hellmann-Feynman); "
            "higher derivatives would need the derivative of the ground state"
        ) from None


def _run(tensors: Sequence[Any], psi0: MPS | None, opts: dict) -> tuple[DMRGResult, SweepEngine]:
    """The sweeps on concrete MPO tensors; the engine keeps the converged environments."""
    ws = [_numpy(w) for w in tensors]
    H = MPO(ws)
    if not H.is_hermitian():
        raise NonHermitianError(
            "dmrg needs a Hermitian Hamiltonian, but H differs from its adjoint "
            "(check the OpSum: add the Hermitian conjugate of every non-Hermitian term)"
        )
    chi0 = check_positive_int(_per_sweep(opts["max_bond"], 0), "max_bond")
    if psi0 is None:
        if len(set(H.phys_dims)) != 1:
            raise DimensionMismatchError("dmrg needs psi0 when the sites have different dimensions "
                                         f"(physical dimensions {list(H.phys_dims)})")
        start = chi0 if not opts["two_site"] else min(chi0, 8)
        dtype = np.result_type(*ws)
        psi0 = MPS.random(H.L, H.phys_dims[0], bond_dim=start, seed=opts["seed"], dtype=dtype)
    check_compatible(psi0, H)
    engine = SweepEngine(ws, [to_numpy(t, "dmrg psi0") for t in psi0.tensors], opts["solver"])
    history: list[SweepRecord] = []
    previous = np.nan
    converged = False
    n_sched = max(len(v) if isinstance(v, (list, tuple)) else 1 for v in (opts["max_bond"], opts["cutoff"]))
    for k in range(opts["sweeps"]):
        chi = int(_per_sweep(opts["max_bond"], k))
        cut = float(_per_sweep(opts["cutoff"], k))
        alpha = opts["noise"](k)
        local_tol = _local_tol(previous, history, opts["tol"])
        st = engine.sweep(two_site=opts["two_site"], max_bond=chi, cutoff=cut, tol=local_tol, alpha=alpha,
                          sweep_no=k + 1, progress=opts["progress"])
        delta = st.energy - previous if history else float("nan")
        rec = SweepRecord(k + 1, st.energy, delta, st.max_bond, st.max_truncation_error, st.matvecs,
                          st.seconds, st.peak_memory, st.env_memory, chi, cut, alpha)
        history.append(rec)
        if opts["callback"] is not None:
            opts["callback"](rec)
        previous = st.energy
        if history[1:] and abs(delta) < opts["tol"] and k + 1 >= n_sched and alpha == 0.0:
            converged = True
            break
    state = MPS([np.asfortranarray(a) for a in engine.psi])
    energy = history[-1].energy
    variance = float("nan")
    if opts["compute_variance"]:
        variance = float(mpo_squared(ws, engine.psi).real - energy * energy)
    return DMRGResult(energy, state, history, variance, converged), engine


def _local_tol(previous: float, history: list[SweepRecord], tol: float) -> float:
    """Eigensolver tolerance: loose in the first sweeps, then tied to the sweep's energy change."""
    if len(history) < 2:
        return max(1e-8, tol)
    return float(min(1e-6, max(abs(history[-1].delta_energy) * 1e-3, tol * 1e-3, 1e-14)))
