"""From ``G(x, t)`` to ``S(q, omega)``: :func:`spectral_function`, its windows (:data:`WINDOWS`,
:func:`window_resolution`) and the checks of the frequency grid.

**Negative times.** An evolution gives ``t >= 0``; ``negative_times="conjugate"`` (the default)
takes ``G(x, -t) = conj(G(x, t))`` at every site. With ``G(x, t) = sum_n a_n(x) e^{-i (E_n - E0) t}``,
``a_n(x) = <0|A_x|n><n|B_c|0>``, that holds when the amplitudes ``a_n(x)`` are real: ``A = B^dagger``
(checked) in a time-reversal invariant system (real ``H``; real or imaginary operators: ``Sz``,
``Sy``, ``S+``/``S-``, ``c``/``c^dagger`` with real hoppings), on open chains too. Then the windowed
transform over ``[-t_final, t_final]`` is, per site,

    S_x(omega) = (1 / 2 pi) int_{-t_final}^{t_final} dt e^{i omega t} W(t) G(x, t)
               = (1 / pi) Re int_0^{t_final} dt e^{i omega t} W(t) G(x, t),

the integral by the trapezoidal rule on the sampled times, and ``S_x(omega) = sum_n a_n(x)
delta_W(omega - (E_n - E0))`` with ``delta_W`` the window's broadening of a delta peak.

**Spatial transform.** ``S(q, omega) = Re sum_x e^{-i q (x - c)} S_x(omega)`` over the sites of the
chain (``c`` the site ``B`` acted on), at any momenta ``q`` (default ``2 pi k / L``, ``k = 0 .. L/2``:
``0 .. pi``); the imaginary part, odd in ``q``, vanishes for a chain symmetric about ``c``. For a
translation-invariant chain ``S(q, omega) = sum_n |<n|B_q|0>|^2 delta_W(omega - (E_n - E0))``; on an
open chain the ``q`` are not its quasi-momenta: this is the transform used in the literature for the
bulk. This is also what :func:`~tensor4all.spectral_function_chebyshev` computes (with its kernel in
place of the window). ``negative_times="zero"`` (any pair, ``A != B^dagger`` included) gives the
one-sided, complex

    S(q, omega) = (1 / pi) sum_x e^{-i q (x - c)} int_0^{t_final} dt e^{i omega t} W(t) G(x, t)
                = sum_x e^{-i q (x - c)} sum_n a_n(x) (delta_W + (i / pi) P_W)(omega - (E_n - E0)),

that is ``(i / pi) G^R(omega)``, ``G^R(omega) = -i int_0^inf dt e^{i omega t} G(t)`` the retarded
function, whose real part ``-(1 / pi) Im G^R`` is the usual spectral function (the factor ``1 / pi``:
the one-sided integral holds half of the two-sided one). It holds the peaks ``sum_n a_n delta_W`` of
the ``"conjugate"`` transform and of the Chebyshev expansion, plus ``i / pi`` times their principal
value ``P_W`` (the window's broadening of ``1 / omega``, odd about each peak). Where the amplitudes
``b_n(q) = sum_x e^{-iq(x - c)} a_n(x)`` are real (real ``a_n(x)`` at ``q = 0`` or ``pi``, or on a chain
symmetric about ``c``) the principal value is all in the imaginary part, and the real part is the
Chebyshev ``S`` (for ``A = B^dagger`` the ``"conjugate"`` one too). With ``W(0) = 1`` the sum rule
holds for either choice: ``int S(q, omega) d omega = Re sum_x e^{-i q (x - c)} G(x, 0)`` (``"zero"``:
the real part of the weight over all ``omega``; the principal value integrates to 0 there), the
static structure factor (hbar = 1).

**Windows** ``W(t)`` on ``|t| <= t_final`` (:data:`WINDOWS`): ``"gaussian"`` (the default),
``exp(-(t / sigma)^2 / 2)`` with ``sigma = t_final / 3`` (``W(t_final) = 0.011``): a delta peak becomes a
Gaussian of standard deviation ``3 / t_final``, with ringing below 2e-3 of the peak; ``"hann"``,
``cos^2(pi t / (2 t_final))``: narrower (full width at half maximum ``2 pi / t_final`` against ``7.10 /
t_final``) but with side lobes (negative values down to -2.7e-2 of the peak); ``"none"``: the bare
cut at ``t_final`` (width ``3.79 / t_final``, side lobes -0.22 of the peak). The **resolution**
:func:`window_resolution` is that full width at half maximum of the broadening of a delta peak:
two peaks closer than it merge.

**Frequency grid.** The default is ``0 <= omega <= pi / Delta t`` (the Nyquist frequency of the
samples) in steps of a quarter of the resolution. A given grid must lie within ``|omega| <= pi /
Delta t`` (beyond it the samples alias) and be no finer than a tenth of the resolution (a finer
grid only interpolates what the window smeared); both raise :class:`WindowResolutionError`,
naming the fix (a smaller ``dt``, a longer ``t_final``, ``extend=``, a coarser grid).

**Linear prediction.** ``extend=f`` predicts ``G(x, t)`` at every site up to ``f t_final``
(:func:`~tensor4all.spectra.prediction.linear_prediction`) before the transform, whose window then
spans the extended times: the resolution improves by the factor ``f``.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ..tools.checks import check_real, numeric_array
from ..tools.errors import DimensionMismatchError, InvalidOptionError, NonFiniteError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import thread_policy
from .prediction import linear_prediction
from .records import DynamicalCorrelation, SpectralFunction

__all__ = [
    "WINDOWS",
    "NEGATIVE_TIMES",
    "WindowResolutionError",
    "window_values",
    "window_resolution",
    "default_momenta",
    "check_momenta",
    "check_omega",
    "real_grid",
    "spatial_transform",
    "spectral_function",
    "OVERSAMPLING",
    "MAX_EXTEND",
]

#: the windows of :func:`spectral_function`, the default first
WINDOWS = ("gaussian", "hann", "none")
#: how :func:`spectral_function` treats negative times, the default first
NEGATIVE_TIMES = ("conjugate", "zero")
#: a frequency grid finer than the resolution / OVERSAMPLING is refused
OVERSAMPLING = 10
#: the largest ``extend`` (linear prediction beyond the computed window) :func:`spectral_function` accepts
MAX_EXTEND = 100.0
#: sigma of the Gaussian window, in units of t_final
GAUSSIAN_SIGMA = 1.0 / 3.0


class WindowResolutionError(InvalidOptionError):
    """A frequency grid the sampled times cannot resolve: beyond the Nyquist frequency ``pi / dt``,
    or finer than the window's resolution allows; the message names the fix."""


def _check_window(window: Any, what: str) -> str:
    if not isinstance(window, str) or window not in WINDOWS:
        raise InvalidOptionError(f"{what}: unknown window {window!r}; valid windows: {', '.join(WINDOWS)}")
    return window


def window_values(window: str, t: np.ndarray, t_final: float) -> np.ndarray:
    """``W(t)`` of the named window of half-length ``t_final`` (module docstring)."""
    s = np.asarray(t, dtype=float) / t_final
    if window == "gaussian":
        return np.exp(-0.5 * (s / GAUSSIAN_SIGMA) ** 2)
    if window == "hann":
        return np.cos(0.5 * np.pi * np.clip(s, -1.0, 1.0)) ** 2
    return np.ones_like(s)


@keyword_hints
def window_resolution(window: str, t_final: float) -> float:
    """The full width at half maximum (in frequency) of the broadening of a delta peak by the named
    window of half-length ``t_final``: the smallest separation of two peaks it resolves (computed from
    the window's Fourier transform; ``"gaussian"``: ``7.10 / t_final``).

    >>> round(window_resolution("gaussian", 10.0), 3)
    0.71
    """
    window = _check_window(window, "window_resolution")
    t_final = check_real(t_final, "window_resolution: t_final (the window's half-length)")
    if not t_final > 0.0:
        raise InvalidOptionError(f"window_resolution: t_final must be positive (> 0), got {t_final!r}")
    resolution = _unit_resolution(window) / t_final
    if not math.isfinite(resolution):  # a subnormal t_final: the quotient overflows
        raise InvalidOptionError(
            f"window_resolution: t_final = {t_final!r} is too small: the resolution {_unit_resolution(window):.6g} / "
            f"t_final = {resolution!r} overflows; give a t_final >= {_unit_resolution(window) / sys.float_info.max:.3g}"
        )
    return resolution


_RESOLUTIONS: dict[str, float] = {}


def _unit_resolution(window: str) -> float:
    """The resolution at ``t_final = 1``: the first half-maximum of ``int_0^1 W(t) cos(w t) dt``, by
    bisection on a fine grid (cached)."""
    if window not in _RESOLUTIONS:
        t = np.linspace(0.0, 1.0, 4001)
        w = window_values(window, t, 1.0)
        weights = np.full_like(t, t[1])
        weights[[0, -1]] *= 0.5
        wt = w * weights

        def response(omega: float) -> float:
            return float(np.dot(wt, np.cos(omega * t)))

        half = 0.5 * response(0.0)
        lo, hi = 0.0, 1.0
        while response(hi) > half:
            lo, hi = hi, 2.0 * hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if response(mid) > half else (lo, mid)
        _RESOLUTIONS[window] = 2.0 * lo
    return _RESOLUTIONS[window]


# ---- grids --------------------------------------------------------------------------------------
def default_momenta(L: int) -> np.ndarray:
    """``q = 2 pi k / L`` for ``k = 0 .. L // 2``: from 0 to pi (to the last multiple below it for odd ``L``)."""
    return 2.0 * np.pi * np.arange(L // 2 + 1) / L


def check_momenta(q: Any, L: int, what: str) -> np.ndarray:
    """``q`` (None: :func:`default_momenta`) as a 1-D array of finite real momenta."""
    if q is None:
        return default_momenta(L)
    return real_grid(q, "q (the momenta)", what)


def real_grid(values: Any, name: str, what: str) -> np.ndarray:
    arr = numeric_array(values, f"{what}: {name}")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.size == 0:
        raise DimensionMismatchError(f"{what}: {name} must be a non-empty 1-D array, got shape {arr.shape}")
    if np.iscomplexobj(arr):
        raise Tensor4allTypeError(f"{what}: {name} must be real numbers, got complex values")
    if not np.isfinite(arr).all():
        raise NonFiniteError(f"{what}: {name} holds NaN or infinity")
    return arr.astype(float)


def check_omega(omega: Any, sample_dt: float, resolution: float, what: str) -> np.ndarray:
    """The frequency grid: None gives ``0 .. pi / sample_dt`` in steps of ``resolution / 4``; a given
    one must lie within the Nyquist frequency and be no finer than ``resolution / OVERSAMPLING``."""
    nyquist = math.pi / sample_dt
    if omega is None:
        step = resolution / 4.0
        return np.arange(0.0, nyquist * (1.0 + 1e-12), step)
    arr = real_grid(omega, "omega (the frequencies)", what)
    top = float(np.max(np.abs(arr)))
    if top > nyquist * (1.0 + 1e-12):
        raise WindowResolutionError(
            f"{what}: |omega| up to {top:.4g}, beyond the Nyquist frequency pi / dt = {nyquist:.4g} of G sampled "
            f"every dt = {sample_dt:.4g} (higher frequencies alias); give omega within [-{nyquist:.4g}, "
            f"{nyquist:.4g}] or sample G with a smaller dt"
        )
    gaps = np.diff(np.unique(arr))
    if gaps.size and float(np.min(gaps)) < resolution / OVERSAMPLING:
        finest = float(np.min(gaps))
        n_max = int((float(np.max(arr)) - float(np.min(arr))) / (resolution / OVERSAMPLING)) + 1
        raise WindowResolutionError(
            f"{what}: the omega grid has spacing {finest:.3g}, but the window resolves only {resolution:.3g} "
            f"(full width at half maximum); a spacing below resolution / {OVERSAMPLING} = "
            f"{resolution / OVERSAMPLING:.3g} shows no more detail. Give a coarser grid (at most {n_max} points "
            "over this range), a longer t_final, or extend= (linear prediction) to resolve more"
        )
    return arr


def spatial_transform(values: np.ndarray, center: int, q: np.ndarray) -> np.ndarray:
    """``G(q, t) = sum_x e^{-i q (x - c)} G(x, t)``: ``values`` of shape ``(n_t, L)`` to ``(n_t, n_q)``."""
    x = np.arange(values.shape[1]) - center
    phases = np.exp(-1j * np.outer(x, q))
    return values @ phases


def _check_extend(extend: Any, what: str) -> float | None:
    if extend is None:
        return None
    f = check_real(extend, f"{what}: extend (the factor t_final is extended by, >= 1, or None)", low=1.0)
    if f > MAX_EXTEND:
        raise InvalidOptionError(
            f"{what}: extend = {f:g} predicts G to {f:g} times the computed window; linear prediction is "
            f"reliable for a few times it (extend <= {MAX_EXTEND:g} accepted, 2 to 4 typical)"
        )
    return f


def _extended(G: DynamicalCorrelation, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """``(times, values)`` of ``G`` with the values predicted up to ``factor * t_final``."""
    n = len(G.times)
    extra = int(round((factor - 1.0) * (n - 1)))
    if extra == 0:
        return G.times, G.values
    if n < 8:
        raise InvalidOptionError(
            f"spectral_function: linear prediction needs at least 8 times of G, it has {n}; compute G to a "
            "longer t_final (or with a smaller dt), or give extend=None"
        )
    future = linear_prediction(G.values, extra)
    times = G.times[0] + G.dt * np.arange(n + extra)
    return times, np.concatenate([G.values, future], axis=0)


#: frequencies per block of the time transform (bounds its ``len(times) x block`` phase matrix)
_BLOCK = 256


def _time_transform(omega: np.ndarray, times: np.ndarray, weighted: np.ndarray) -> np.ndarray:
    """``sum_n e^{i omega_j t_n} weighted[n, x]`` for every frequency, a block of frequencies at a time."""
    out = np.empty((len(omega), weighted.shape[1]), complex)
    for start in range(0, len(omega), _BLOCK):
        block = omega[start : start + _BLOCK]
        out[start : start + len(block)] = np.exp(1j * np.outer(block, times)) @ weighted
    return out


@keyword_hints
@thread_policy()  # one thread: the time transform's blocks, the linear prediction
def spectral_function(
    G: DynamicalCorrelation,
    *,
    q: Any = None,
    omega: Any = None,
    window: str = "gaussian",
    extend: float | None = None,
    negative_times: str = "conjugate",
) -> SpectralFunction:
    """``S(q, omega)`` of a dynamical correlation ``G(x, t)``: the spatial transform at momenta ``q``,
    then the windowed time transform at frequencies ``omega`` (see :mod:`tensor4all.spectra.transform`).

    Args:
        G: the correlation (:func:`tensor4all.dynamical_correlation`, or a
            :class:`DynamicalCorrelation` built from other data: exact results, another code).
        q: momenta (default ``2 pi k / L``, ``k = 0 .. L / 2``).
        omega: frequencies (default ``0 .. pi / dt`` in steps of a quarter of the resolution); must lie
            within the Nyquist frequency ``pi / dt`` and be no finer than a tenth of the resolution
            (:class:`WindowResolutionError` otherwise).
        window: ``"gaussian"`` (default; resolution ``7.10 / t_final``), ``"hann"`` (``2 pi / t_final``) or
            ``"none"`` (``3.79 / t_final``, strong ringing).
        extend: linear prediction of ``G`` up to ``extend * t_final`` before the transform (a factor
            ``>= 1``; None: none). The window then spans the extended times.
        negative_times: ``"conjugate"`` (``G(x, -t) = conj(G(x, t))``, for ``A = B^dagger`` in a
            time-reversal invariant system: a real ``S``) or ``"zero"`` (the one-sided transform
            ``(1 / pi) int_0 dt e^{i omega t} W(t) G(x, t)``, complex: any pair; the same sum rule).

    Returns:
        :class:`SpectralFunction` with ``q``, ``omega``, ``values`` (shape ``(len(q), len(omega))``),
        the window, its ``t_final`` and ``resolution``.
    """
    what = "spectral_function"
    if not isinstance(G, DynamicalCorrelation):
        hint = " (pass the result of dynamical_correlation)" if hasattr(G, "observables") else ""
        raise Tensor4allTypeError(f"{what}: G must be a DynamicalCorrelation, got {type(G).__name__}{hint}")
    window = _check_window(window, what)
    if not isinstance(negative_times, str) or negative_times not in NEGATIVE_TIMES:
        raise InvalidOptionError(
            f"{what}: negative_times must be one of {', '.join(map(repr, NEGATIVE_TIMES))}, got {negative_times!r}"
        )
    if negative_times == "conjugate" and not G.hermitian_pair:
        raise InvalidOptionError(
            f"{what}: G(x, -t) = conj(G(x, t)) holds for A = B^dagger only, and this G is of "
            f"A = {G.ops[0]!r}, B = {G.ops[1]!r}; compute G with A = B^dagger, or pass negative_times='zero' "
            "for the one-sided (complex) transform"
        )
    factor = _check_extend(extend, what)
    q = check_momenta(q, G.L, what)
    times, values = _extended(G, factor) if factor is not None else (G.times, G.values)
    t_final = float(times[-1])
    resolution = window_resolution(window, t_final)
    omega = check_omega(omega, G.dt, resolution, what)
    weights = np.full(len(times), G.dt)
    weights[[0, -1]] *= 0.5
    weighted = values * (window_values(window, times, t_final) * weights)[:, None]  # (n_t, L)
    per_site = _time_transform(omega, times, weighted)  # (n_omega, L): int_0 e^{i omega t} W G(x, t)
    if negative_times == "conjugate":
        s = spatial_transform(per_site.real / np.pi, G.center, q).real.T  # (n_q, n_omega)
    else:
        s = spatial_transform(per_site / np.pi, G.center, q).T  # the one-sided half: 1 / pi, as above
    return SpectralFunction(
        q=q,
        omega=omega,
        values=s,
        window=window,
        resolution=resolution,
        t_final=t_final,
        method="time evolution",
        extend=factor,
        ops=G.ops,
        negative_times=negative_times,
    )
