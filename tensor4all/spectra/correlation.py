"""``G(x, t) = <0| A_x(t) B_c(0) |0>`` by real-time evolution: :func:`dynamical_correlation`.

With ``hbar = 1`` and ``|0>`` an eigenstate of ``H`` of energy ``E0``,

    G(x, t) = <0| e^{iHt} A_x e^{-iHt} B_c |0> = e^{i E0 t} <0| A_x |phi(t)>,   |phi(t)> = e^{-iHt} B_c |0>.

So one evolution serves every site: ``B_c |0>`` (with its Jordan-Wigner string for a fermionic
``B``; in the sector of ``|0>`` plus ``B``'s charge when ``|0>`` is symmetric and ``B`` has one
charge: :mod:`tensor4all.spectra.operators`) is evolved once by :func:`~tensor4all.tdvp` or
:func:`~tensor4all.tebd`, and at every step ``<0| A_x |phi(t)>`` is measured at all ``x`` in one
pass of transfer matrices (``O(L chi^3 d)``); the bra's evolution is the phase ``e^{-i E0 t}``,
applied analytically (``E0 = <0|H|0>``). The ground state is not assumed exact: its variance
``<H^2> - <H>^2`` is recorded (``ground_variance``), since the phase is exact only for an eigenstate.

The accuracy is that of the evolution: the time step (TDVP's projector splitting, TEBD's Trotter
order; a fourth-order TEBD by default) and the truncation (``max_bond``, ``cutoff``), as the
history per step reports. On the open XX chain (free fermions, ``tests/tensor4all/test_spectra.py``)
``G`` agrees with the exact values to about 1e-7 at ``dt = 0.05``.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from ..algorithms.evolution import EvolutionRecord, check_hamiltonian_arg
from ..algorithms.tdvp import tdvp
from ..algorithms.tebd import tebd
from ..networks.environments import mpo_squared
from ..networks.mpo import MPO, check_compatible, expectation
from ..networks.mps import MPS
from ..tools.checks import (
    check_bool,
    check_callable,
    check_cutoff,
    check_positive_int,
    check_real,
    check_steps,
    to_numpy,
)
from ..tools.errors import InvalidOptionError, SiteOutOfRangeError, Tensor4allTypeError, ZeroNormError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .operators import OperatorPair, apply_at, operator_pair, site_arrays, transition_profile
from .records import DynamicalCorrelation

__all__ = ["dynamical_correlation", "METHODS", "check_window_time", "prepare"]

#: the evolutions of :func:`dynamical_correlation`, the default first
METHODS = ("tdvp", "tebd")


def check_window_time(t_final: Any, dt: Any, what: str) -> int:
    """The number of steps ``t_final / dt``: both positive, ``t_final`` a whole number of steps (within a
    relative 1e-9) and at most :data:`~tensor4all.tools.checks.MAX_GRID_STEPS` of them, else
    :class:`InvalidOptionError` naming the fix."""
    dt = check_real(dt, f"{what}: dt (the time step, a positive number)")
    t_final = check_real(t_final, f"{what}: t_final (the last time of G, a positive number)")
    if not dt > 0.0:  # one message for 0 and negative values
        raise InvalidOptionError(f"{what}: dt must be positive (> 0, the time step), got {dt!r}")
    if not t_final > 0.0:
        raise InvalidOptionError(f"{what}: t_final must be positive (> 0, the last time of G), got {t_final!r}")
    n = round(check_steps(t_final, dt, what))  # at most MAX_GRID_STEPS; a subnormal dt too
    if n < 1 or abs(n * dt - t_final) > 1e-9 * t_final:
        near = max(n, 1) * dt
        raise InvalidOptionError(
            f"{what}: t_final = {t_final!r} is not a multiple of dt = {dt!r} (t_final / dt = {t_final / dt:.6g}); give a "
            f"t_final that is a whole number of steps, e.g. t_final = {near:.6g}"
        )
    return int(n)


def prepare(H: Any, ground: Any, A: Any, B: Any, center: Any, what: str) -> tuple[OperatorPair, int, float, float]:
    """The checks every spectrum function starts with: ``H`` an MPO, ``ground`` an MPS on its sites
    (of non-zero norm), the operator pair, the site ``center`` (None: ``L // 2``). Returns the pair,
    the centre, ``<0|0>`` and ``E0 = <0|H|0> / <0|0>``."""
    if not isinstance(H, MPO):
        check_hamiltonian_arg(H, what)  # names what H should be
        raise Tensor4allTypeError(
            f"{what}: H must be an MPO (a time-independent Hamiltonian); got a {type(H).__name__}"
        )
    if not isinstance(ground, MPS):
        hint = " (pass its .state)" if isinstance(getattr(ground, "state", None), MPS) else ""
        raise Tensor4allTypeError(f"{what}: ground must be an MPS, got {type(ground).__name__}{hint}")
    check_compatible(ground, H)
    pair = operator_pair(H, A, B, what)
    if center is None:
        c = H.L // 2
    elif isinstance(center, (bool, np.bool_)) or not isinstance(center, numbers.Integral):
        raise Tensor4allTypeError(f"{what}: center must be a site index (an int) or None, got {center!r}")
    elif not 0 <= center < H.L:
        raise SiteOutOfRangeError(f"{what}: center {center} is outside the chain 0..{H.L - 1}")
    else:
        c = int(center)
    norm2 = float(np.asarray(ground.norm())) ** 2
    if not norm2 > 0.0:
        raise ZeroNormError(f"{what}: the ground state has norm 0")
    e0 = float(np.real(complex(np.asarray(expectation(ground, H)))))  # expectation divides by <0|0> itself
    return pair, c, norm2, e0


def _variance(H: MPO, ground: MPS, norm2: float, e0: float) -> float:
    ws = [np.asarray(to_numpy(w, "dynamical_correlation")) for w in H.tensors]
    h2 = float(np.real(mpo_squared(ws, site_arrays(ground)))) / norm2
    return max(h2 - e0 * e0, 0.0)


@keyword_hints
def dynamical_correlation(
    H: MPO,
    ground: MPS,
    A: Any,
    B: Any,
    *,
    t_final: float,
    dt: float,
    center: int | None = None,
    method: str = "tdvp",
    order: int | None = None,
    max_bond: int = 128,
    cutoff: float = 1e-10,
    krylov_tol: float = 1e-10,
    threads: int | None = None,
    progress: bool = False,
    callback: Callable[[EvolutionRecord], Any] | None = None,
) -> DynamicalCorrelation:
    """``G(x, t) = <0| A_x(t) B_c(0) |0>`` for every site ``x`` and ``t = 0, dt, .., t_final`` by one
    real-time evolution of ``B_c |0>`` (:mod:`tensor4all.spectra.correlation`).

    Args:
        H: the Hamiltonian (an MPO; ``method="tebd"`` needs one compiled from an OpSum, as every
            :mod:`tensor4all.models` function builds).
        ground: the state ``|0>``, an eigenstate of ``H`` (a DMRG ground state: ``dmrg(H).state``); dense or
            symmetric. Its norm is divided out.
        A, B: operators of ``H``'s local space (names such as ``"Sz"``, ``"S+"``, ``"C"``, products
            ``"A*B"`` or matrices). Fermionic operators (``"C"``, ``"Cdag"``, ``"Cup"``, ...) carry their
            Jordan-Wigner strings: ``("C", "Cdag")`` is the Green's function ``<c_x(t) c^dag_c>``.
        t_final, dt: the last time and the step; ``t_final`` must be a whole number of steps. ``t_final`` is
            the half-length of the window :func:`tensor4all.spectral_function` applies.
        center: the site ``c`` of ``B`` (default ``L // 2``).
        method: ``"tdvp"`` (two-site TDVP; any MPO) or ``"tebd"`` (Trotter gates; an OpSum MPO with
            terms on one or two sites); ``order``: TEBD's Trotter order (2 or 4; default 4).
        max_bond, cutoff: the truncation of the evolution (per bond).
        krylov_tol: TDVP's local exponentials' error.
        threads: BLAS threads for the whole call (the start, the evolution, the ground state's variance), as
            for :func:`tensor4all.tdvp`.
        progress: a progress bar over the steps (tqdm, on stderr); ``callback``: called with each
            step's :class:`~tensor4all.EvolutionRecord`.

    Returns:
        :class:`DynamicalCorrelation`: ``times``, ``values[n, x] = G(x, times[n])``, the centre, the
        operator labels, whether ``A = B^dagger``, ``E0``, the ground state's variance and the evolution's
        history per step.

    >>> import tensor4all as t4a
    >>> H = t4a.models.xx(8, conserve="Sz")
    >>> gs = t4a.dmrg(H, max_bond=32).state
    >>> G = t4a.dynamical_correlation(H, gs, "Sz", "Sz", t_final=0.5, dt=0.1)
    >>> G.values.shape
    (6, 8)
    """
    what = "dynamical_correlation"
    n_steps = check_window_time(t_final, dt, what)
    t_final, dt = n_steps * float(dt), float(dt)
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidOptionError(f"{what}: unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    if order is not None and method != "tebd":
        raise InvalidOptionError(f"{what}: order is the Trotter order of method='tebd'; TDVP has none (drop order)")
    order = 4 if order is None else order
    if order not in (2, 4):
        raise InvalidOptionError(f"{what}: order must be 2 or 4 (TEBD's Trotter order), got {order!r}")
    max_bond = check_positive_int(max_bond, f"{what}: max_bond")
    cutoff = check_cutoff(cutoff, f"{what}: cutoff")
    progress = check_bool(progress, f"{what}: progress")
    callback = check_callable(callback, f"{what}: callback")
    threads = check_threads(threads)
    with blas_threads(threads, max_bond):  # the whole call: the start, the evolution, <H^2>
        pair, c, norm2, e0 = prepare(H, ground, A, B, center, what)
        phi = apply_at(ground, pair, c)
        if not float(np.asarray(phi.norm())) > 1e-14 * np.sqrt(norm2):
            raise ZeroNormError(
                f"{what}: B_c|0> = 0 (B = {pair.label_b!r} at site {c} annihilates the state), so G vanishes; "
                "give an operator that acts on it (e.g. S- on a polarized up state)"
            )
        bra = site_arrays(ground)
        string = pair.parity

        def measure(state: MPS, t: float) -> np.ndarray:
            return transition_profile(bra, site_arrays(state), pair.a, string)

        common: dict[str, Any] = dict(
            max_bond=max_bond, cutoff=cutoff, observables={"G": measure}, threads=threads, callback=callback
        )
        if method == "tdvp":
            res = tdvp(H, phi, t_final, dt, krylov_tol=krylov_tol, progress=progress or None, **common)
        else:
            res = tebd(H, phi, t_final, dt, order=order, progress=progress, **common)
        variance = _variance(H, ground, norm2, e0)
    times = np.asarray(res.times, dtype=float)
    values = np.asarray(res.observables["G"], dtype=complex) * np.exp(1j * e0 * times)[:, None] / norm2
    return DynamicalCorrelation(
        times, values, c, (pair.label_a, pair.label_b), pair.hermitian_pair, e0, variance, method, list(res.history)
    )
