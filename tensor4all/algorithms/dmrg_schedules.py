"""DMRG's per-sweep settings: the value of a schedule (a number, or a list per sweep whose last
entry repeats) at a sweep, the noise schedule (:data:`TWO_SITE_NOISE`, or a start value
decaying tenfold per sweep), and the local eigensolver's tolerances on the energy
(:func:`local_tolerance`) and on its vector (:func:`state_tolerance`), both tied to the
discarded weight after TeNPy's ``P_tol_to_trunc`` and ``P_tol_max``."""

from __future__ import annotations

from typing import Any, Callable

from .dmrg_checks import check_schedule

__all__ = [
    "per_sweep",
    "noise_schedule",
    "state_tolerance",
    "local_tolerance",
    "TWO_SITE_NOISE",
    "TRUNC_FACTOR",
    "STATE_TOL_FACTOR",
    "STATE_TOL_MAX",
]


def per_sweep(value: Any, k: int) -> Any:
    """The setting of sweep ``k`` (0-based): ``value`` itself, or its ``k``-th entry (the last repeats)."""
    if isinstance(value, (list, tuple)):
        return value[min(k, len(value) - 1)]
    return value


#: the default noise of two-site sweeps, per sweep (0 from the third sweep on)
TWO_SITE_NOISE = (1e-4, 1e-6, 0.0)


def noise_schedule(noise: Any, two_site: bool) -> Callable[[int], float]:
    """The checked ``noise`` option as a function of the sweep (0-based); ``None``: the default."""
    if noise is None:
        noise = list(TWO_SITE_NOISE) if two_site else 1e-4
    if isinstance(noise, (list, tuple)):
        check_schedule(noise, "noise", "noise")
        return lambda k: float(per_sweep(noise, k))
    check_schedule(noise, "noise", "noise")
    a0 = float(noise)
    return lambda k: a0 * 10.0 ** (-k) if a0 * 10.0 ** (-k) >= 1e-12 else 0.0


#: the local eigensolver's tolerance is never tighter than this times the last sweep's discarded weight
TRUNC_FACTOR = 0.005


#: the local eigensolver also stops once its vector's squared error estimate is below this
#: times the discarded weight (:func:`state_tolerance`), and below STATE_TOL_MAX (TeNPy's
#: ``P_tol_to_trunc`` and ``P_tol_max``)
STATE_TOL_FACTOR = 0.05
STATE_TOL_MAX = 1e-4


def state_tolerance(discarded: float) -> float:
    """The eigensolver's tolerance on its vector (``lanczos(state_tol=...)``) for a discarded
    weight: a local problem is not solved more precisely than the truncation that follows will
    spoil, as TeNPy's DMRG does (``P_tol_to_trunc``). The sweep engine asks with the largest
    weight discarded in the last sweep when this one's bonds may not grow (TeNPy's rule), else
    with the largest weight discarded so far in this sweep (a sweep that raises the bond
    dimension truncates far less than the last one: with the last sweep's weight there the
    spin-1 benchmark, N = 100, ended 6e-9 above TeNPy's energy, with this rule 3e-10). The
    first sweep at a new bond dimension truncates far more than the one before it, which grew
    the bonds: it keeps that sweep's tight tolerance instead of taking the larger weights of its
    own first cuts (the 6x3 Hubbard cylinder, U = 8, m = 200: the third sweep's solves stopped
    at 5e-6 instead of 2.5e-8; over eight vectors of the first sweep's degenerate level, taken
    alone, the ten sweeps ended 3.0e-5 below to 1.5e-4 above TeNPy's energy, median 2.7e-5
    above; with this rule 3.5e-5 below to 4.0e-5 above, median at TeNPy's).
    0 (off) where nothing was discarded. With cutoff 0 and tiny discarded
    weights (spin-1 chain, N = 64, m = 200: 1e-13, so 5e-15) this criterion is not the one that
    stops the solver: the energy criterion (:func:`local_tolerance`) does, after 2 products.

    Measured with ``benchmarks/dmrg_hubbard.py`` (one core): the products per local problem fell
    from 4-7 to 2-3 on the cylinders; the 8x4 cylinder at chi 400 ran in 35 s instead of 63 s
    and ended below TeNPy's energy instead of 3.7e-4 above it, the chain (L = 64, chi 400) in
    31 s instead of 38 s, 2e-9 from TeNPy's. Where the local solutions were tighter, the sweeps
    stayed in a higher state."""
    return float(min(STATE_TOL_MAX, STATE_TOL_FACTOR * discarded))


def local_tolerance(done: int, last_delta: float, tol: float, truncation: float = 0.0) -> float:
    """Eigensolver tolerance: loose in the first sweeps, then tied to the last sweep's
    energy change (``done`` sweeps so far; energies in the units of the sweeps), at most
    1e-9: a schedule that raises the bond dimension makes the last change a poor guide
    (with 1e-6, ITensor's five-sweep benchmark ended 2e-8 above TeNPy's energy; with 1e-9
    within 2e-10 of it, for 18% more time). It is never tighter than ``TRUNC_FACTOR`` (0.005)
    times the largest discarded weight of the last sweep (``truncation``), after TeNPy's
    ``P_tol_to_trunc`` (0.05 on the squared error of the state; an energy error is about that
    times the local gap): an energy that the truncation moves by that much is not worth solving
    more precisely. Measured (6x3 Hubbard cylinder, U = 8, m = 200, 10 sweeps: discarded weights
    1.6e-4): 7621 Lanczos products without the floor, 3979 with it (43 s -> 22 s); the spin-1
    chain of ITensor's benchmark (N = 100, m = 200) keeps its energy to 3e-10 (with 0.05: 5e-9).

    At N = 64 (``benchmarks/dmrg_symmetric.py``) the fifth sweep gets 1e-3 times the change of a
    sweep that raised the bond dimension (2.3e-7): every local problem starts within 1e-10 of
    its lowest eigenvalue (gap ~0.45) and stops after 2 products, and the run stays in the state
    with polarized end spins, the equal mixture of singlet and triplet, 8.6e-6 above the ground
    state (TeNPy's 12-16 products per problem take it 1.8e-7 lower). Tighter tolerances cost TeNPy's
    products, not a few more: 1e-12 in the fifth sweep took m = 200 from 5.8 to 10.5 CPU seconds
    for 1.2e-7 (TeNPy: 30), m = 400 from 16 to 75 (TeNPy: 68); in sweeps 4 and 5, the singlet at
    18.4 CPU seconds (m = 200). The next sweeps tighten by themselves (1e-3 times a small change):
    sweep 6 drops by 1.1e-6, sweep 9 reaches the singlet."""
    if done < 2:
        return max(1e-8, tol)
    return float(max(min(1e-9, max(abs(last_delta) * 1e-3, tol * 1e-3, 1e-14)), TRUNC_FACTOR * truncation))
