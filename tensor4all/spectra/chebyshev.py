"""``S(q, omega)`` by a Chebyshev expansion of the spectral function, the cross-check of the time
evolution: :func:`spectral_function_chebyshev` (A. Holzner, A. Weichselbaum, I. P. McCulloch,
U. Schollwöck and J. von Delft, Phys. Rev. B 83, 195115 (2011); the kernel polynomial method of
A. Weiße, G. Wellein, A. Alvermann and H. Fehske, Rev. Mod. Phys. 78, 275 (2006)).

With ``H' = (H - b) / a`` rescaled so that its spectrum lies in ``[-1 + eps/2, 1 - eps/2]`` (``b`` the
centre and ``2 a / (2 - eps)`` the width of the spectrum, ``eps = 0.025``),

    S_x(omega) = <0| A_x delta(omega - (H - E0)) B_c |0>
               = (g_0 mu_0 + 2 sum_{n>=1} g_n mu_n T_n(x)) / (pi a sqrt(1 - x^2)),   x = (omega + E0 - b) / a,

with the moments ``mu_n(x) = <0| A_x T_n(H') B_c |0>`` (``T_n`` the Chebyshev polynomials) and the
Jackson kernel ``g_n`` that damps the truncation's Gibbs oscillations (a delta peak becomes a near
Gaussian of standard deviation ``pi a / N`` at the band centre, ``N`` moments). The vectors ``|t_n> =
T_n(H') B_c |0>`` follow the recursion ``|t_{n+1}> = 2 H' |t_n> - |t_{n-1}>``: one MPO application
(:func:`tensor4all.apply`) and one compressed sum (:func:`tensor4all.add`) per moment, truncated by
``max_bond`` and ``cutoff``; every moment at every site is one pass of transfer matrices
(:func:`~tensor4all.spectra.operators.transition_profile`). Then ``S(q, omega) = sum_x e^{-iq(x - c)}
S_x(omega)`` as for the time evolution (its real part for ``A = B^dagger``: what the time transform
with ``G(x, -t) = conj(G(x, t))`` gives, :mod:`tensor4all.spectra.transform`; for ``A != B^dagger``
the complex ``sum_n a_n delta(omega - (E_n - E0))``, whose weight ``int S d omega = sum_x e^{-iq(x - c)}
<0|A_x B_c|0>`` is also that of the one-sided time transform, ``negative_times="zero"``).

The bounds of the spectrum come from two DMRG runs in the sector of ``B_c |0>`` (its lowest and,
with ``-H``, its highest energy), or are given (``bounds=``). DMRG's highest energy is a lower bound
of the true one and its lowest an upper bound; the margin ``eps`` covers the difference of a
converged run (``T_n`` grows exponentially outside ``[-1, 1]``: a bound too tight makes the moments
blow up). They bound ``H`` itself (``H'`` rescales ``H``, not ``H - E0``) on the states ``B_c |0>``
reaches, which need not include ``E0``: ``c^dagger_c |0>`` lives in the sector of one particle more.
Given bounds are checked: finite, ``E_min < E_max``, containing the mean energy ``<B_c 0|H|B_c 0> /
<B_c 0|B_c 0>`` (an average of the energies ``B_c |0>`` reaches), and the norm of every Chebyshev
vector ``|t_n>`` at most ``1 + GROWTH_TOL`` times that of ``B_c |0>`` (what ``|T_n(y)| <= 1`` on
``[-1, 1]`` gives a correctly rescaled ``H``; a vector beyond it means the spectrum reaches outside
the bounds, and the moments from there on grow exponentially): :class:`~tensor4all.InvalidOptionError`
naming the moment and asking for wider bounds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..algorithms.apply import apply
from ..algorithms.dmrg import dmrg
from ..networks.mpo import MPO, expectation
from ..networks.mps import MPS, add
from ..tools.checks import check_alloc, check_cutoff, check_int, check_positive_int, check_real
from ..tools.errors import InvalidOptionError, Tensor4allTypeError, ZeroNormError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .correlation import prepare
from .operators import apply_at, site_arrays, transition_profile
from .records import SpectralFunction
from .transform import check_momenta, real_grid, spatial_transform

__all__ = [
    "spectral_function_chebyshev",
    "KERNELS",
    "jackson_kernel",
    "chebyshev_moments",
    "check_moments",
    "PADDING",
    "GROWTH_TOL",
]

#: the kernels of :func:`spectral_function_chebyshev`, the default first
KERNELS = ("jackson", "none")
#: the margin ``eps`` left at each end of [-1, 1] (Weiße et al.)
PADDING = 0.025
#: the relative growth of ``||T_n(H') B_c|0>||`` over ``||B_c|0>||`` tolerated with given bounds (the
#: truncation's rounding); beyond it the bounds miss part of the spectrum
GROWTH_TOL = 1e-2


def check_moments(n_moments: Any, L: int, n_omega: int, what: str) -> int:
    """``n_moments`` as an ``int >= 2`` (not an integer: :class:`Tensor4allTypeError`; below 2:
    :class:`InvalidOptionError`) whose arrays fit in memory (else :class:`Tensor4allMemoryError`, by
    :func:`~tensor4all.tools.checks.check_alloc`: the bytes, not a bound on the count, are what fails):
    the moments and the coefficients ``(n_moments, L)`` (complex, three at once) and the Chebyshev
    matrix ``(n_moments, n_omega)`` (real, two at once) of :func:`spectral_function_chebyshev`."""
    n = check_int(n_moments, f"{what}: n_moments", 2)
    check_alloc(
        n * (48 * L + 16 * n_omega), f"{what}: n_moments = {n} (the moments on {L} sites at {n_omega} frequencies)"
    )
    return n


def jackson_kernel(n_moments: int) -> np.ndarray:
    """The Jackson kernel ``g_n``, ``n = 0 .. N - 1`` (Weiße et al., Eq. 71)."""
    N = n_moments
    n = np.arange(N)
    q = math.pi / (N + 1)
    return ((N - n + 1) * np.cos(q * n) + np.sin(q * n) / math.tan(q)) / (N + 1)


def _bounds(H: MPO, phi: MPS, given: Any, max_bond: int, what: str) -> tuple[float, float]:
    """``(E_min, E_max)`` of ``H`` in the sector of ``phi``: given (checked: finite, ordered, containing the
    mean energy ``<phi|H|phi> / <phi|phi>``), or by DMRG of ``H`` and ``-H`` started from ``phi``."""
    if given is not None:
        if not (isinstance(given, (tuple, list)) and len(given) == 2):
            raise Tensor4allTypeError(f"{what}: bounds must be a pair (E_min, E_max) or None, got {given!r}")
        lo = check_real(given[0], f"{what}: bounds[0] (E_min)")
        hi = check_real(given[1], f"{what}: bounds[1] (E_max)")
        if not hi > lo:
            raise InvalidOptionError(f"{what}: bounds must have E_min < E_max, got ({lo!r}, {hi!r})")
        # the mean energy of phi is a weighted average of the energies phi reaches: inside any valid bounds
        # (the ground energy E0 need not be: B_c|0> may live in another sector, or be orthogonal to |0>)
        mean = float(np.asarray(expectation(phi, H)))
        tol = 1e-9 * max(1.0, abs(mean), hi - lo)  # rounding
        if not lo - tol <= mean <= hi + tol:
            raise InvalidOptionError(
                f"{what}: bounds = ({lo!r}, {hi!r}) do not contain the mean energy <B_c 0|H|B_c 0> / <B_c 0|B_c 0> "
                f"= {mean!r} of B_c|0>, so they miss part of the spectrum of H on the states B_c|0> reaches; "
                "expected E_min <= that mean <= E_max (bounds of the whole spectrum of H in the sector of "
                "B_c|0>: give wider bounds, or bounds=None for two DMRG runs)"
            )
        return lo, hi
    start = phi / float(np.asarray(phi.norm()))
    minus = MPO._from_leaves(H.local, [-np.asarray(H.tensors[0])] + [np.asarray(w) for w in H.tensors[1:]], H.conserve)
    conserve = None if phi.symmetric else "none"  # a dense start: the bounds of the whole spectrum
    lo = float(dmrg(H, start, max_bond=max_bond, compute_variance=False, conserve=conserve).energy)
    hi = -float(dmrg(minus, start, max_bond=max_bond, compute_variance=False, conserve=conserve).energy)
    return lo, hi


def chebyshev_moments(
    H: MPO,
    phi: MPS,
    bra: list[np.ndarray],
    a_ops: Any,
    string: Any,
    scale: float,
    shift: float,
    n: int,
    max_bond: int,
    cutoff: float,
    *,
    check_growth: str | None = None,
) -> np.ndarray:
    """``mu[k, x] = <bra| (string) A_x T_k(H') |phi>`` for ``k < n``, ``H' = (H - shift) / scale``.
    ``check_growth`` (the caller's name; None: no check): :class:`InvalidOptionError` when some
    ``||T_k(H') |phi>||`` exceeds ``(1 + GROWTH_TOL) ||phi||``, the bound of a spectrum of ``H'`` in
    ``[-1, 1]`` (the bounds ``shift -+ scale`` miss part of the spectrum)."""
    mu = np.empty((n, len(bra)), complex)
    prev, cur = None, phi
    norm0 = float(np.asarray(phi.norm())) if check_growth is not None else 0.0
    for k in range(n):
        if check_growth is not None and k > 0:
            _check_growth(k, float(np.asarray(cur.norm())) / norm0, scale, shift, check_growth)
        mu[k] = transition_profile(bra, site_arrays(cur), a_ops, string)
        if k == n - 1:
            break
        h = apply(H, cur, max_bond=max_bond, cutoff=cutoff)
        if prev is None:
            nxt = add(h * (1.0 / scale), cur * (-shift / scale), max_bond=max_bond, cutoff=cutoff)
        else:
            nxt = add(h * (2.0 / scale), cur * (-2.0 * shift / scale), prev * -1.0, max_bond=max_bond, cutoff=cutoff)
        prev, cur = cur, nxt
    return mu


def _check_growth(k: int, ratio: float, scale: float, shift: float, what: str) -> None:
    if not ratio <= 1.0 + GROWTH_TOL:  # NaN too
        lo, hi = shift - scale * (1.0 - PADDING / 2), shift + scale * (1.0 - PADDING / 2)
        raise InvalidOptionError(
            f"{what}: Chebyshev moment {k} grew beyond its bound: ||T_{k}(H') B_c|0>|| = {ratio:.3g} ||B_c|0>||, "
            f"expected at most 1 (up to {GROWTH_TOL:g}) when the spectrum of H in the sector of B_c|0> lies within "
            f"the bounds ({lo:.6g}, {hi:.6g}); part of it lies outside and the moments grow exponentially from "
            "there on: give wider bounds (E_min below the lowest and E_max above the highest energy), or "
            "bounds=None (two DMRG runs)"
        )


@keyword_hints
def spectral_function_chebyshev(
    H: MPO,
    ground: MPS,
    A: Any,
    B: Any,
    *,
    n_moments: int,
    q: Any = None,
    omega: Any = None,
    center: int | None = None,
    bounds: tuple[float, float] | None = None,
    kernel: str = "jackson",
    max_bond: int = 128,
    cutoff: float = 1e-10,
    threads: int | None = None,
) -> SpectralFunction:
    """``S(q, omega)`` of the pair ``(A, B)`` in the state ``ground`` by ``n_moments`` Chebyshev moments
    (:mod:`tensor4all.spectra.chebyshev`): the cross-check of :func:`tensor4all.spectral_function`.

    Args:
        H, ground, A, B, center: as for :func:`tensor4all.dynamical_correlation`.
        n_moments: the number ``N`` of moments (the resolution is about ``2.4 pi a / N``, ``a`` half the
            width of the spectrum).
        q: momenta (default ``2 pi k / L``, ``k = 0 .. L / 2``).
        omega: frequencies ``omega = E - E0`` (default: 400 points over the rescaled spectrum).
        bounds: ``(E_min, E_max)`` of ``H`` in the sector of ``B_c |0>`` (default: two DMRG runs); given
            bounds must be finite, ordered and contain the mean energy of ``B_c |0>`` (not necessarily
            ``E0``: ``B_c |0>`` may live in another sector), and a Chebyshev vector whose norm grows beyond
            that of ``B_c |0>`` (a spectrum reaching outside them) raises :class:`InvalidOptionError`.
        kernel: ``"jackson"`` (default) or ``"none"`` (the bare truncated series, with Gibbs ringing).
        max_bond, cutoff: the truncation of the Chebyshev vectors.
        threads: BLAS threads for the whole call (the bounds' DMRG, the moments, the transform), as
            :func:`tensor4all.dmrg`'s: None (one thread below bond dimension 512, sized by ``max_bond``),
            0 (the BLAS default) or ``n``.

    Returns:
        :class:`SpectralFunction` (``method="chebyshev"``, ``window`` the kernel; in ``details`` the
        bounds, the moments ``mu[n, x]``, ``n_moments`` and ``E0``).
    """
    what = "spectral_function_chebyshev"
    n_moments = check_int(n_moments, f"{what}: n_moments", 2)
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise InvalidOptionError(f"{what}: unknown kernel {kernel!r}; valid kernels: {', '.join(KERNELS)}")
    max_bond = check_positive_int(max_bond, f"{what}: max_bond")
    cutoff = check_cutoff(cutoff, f"{what}: cutoff")
    threads = check_threads(threads)
    with blas_threads(threads, max_bond):  # the whole call: bounds, moments, transform
        pair, c, norm2, e0 = prepare(H, ground, A, B, center, what)
        q = check_momenta(q, H.L, what)
        if omega is not None:
            omega = real_grid(omega, "omega (the frequencies)", what)
        check_moments(n_moments, H.L, 400 if omega is None else len(omega), what)  # before the bounds' DMRG
        phi = apply_at(ground, pair, c)
        if not float(np.asarray(phi.norm())) > 1e-14 * math.sqrt(norm2):
            raise ZeroNormError(f"{what}: B_c|0> = 0 (B = {pair.label_b!r} at site {c} annihilates the state)")
        lo, hi = _bounds(H, phi, bounds, max_bond, what)
        scale = (hi - lo) / (2.0 - PADDING)
        shift = 0.5 * (hi + lo)
        if omega is None:
            omega = np.linspace(lo - e0, hi - e0, 400)
        growth = None if bounds is None else what  # given bounds are checked; the DMRG ones as before
        mu = chebyshev_moments(
            H,
            phi,
            site_arrays(ground),
            pair.a,
            pair.parity,
            scale,
            shift,
            n_moments,
            max_bond,
            cutoff,
            check_growth=growth,
        )
        mu /= norm2
        g = jackson_kernel(n_moments) if kernel == "jackson" else np.ones(n_moments)
        x = (omega + e0 - shift) / scale
        inside = np.abs(x) < 1.0
        xs = np.clip(x, -1.0, 1.0)
        cheb = np.cos(np.outer(np.arange(n_moments), np.arccos(xs)))  # (N, n_omega)
        coef = g[:, None] * mu * np.where(np.arange(n_moments) == 0, 1.0, 2.0)[:, None]  # (N, L)
        density = np.zeros_like(xs)
        density[inside] = 1.0 / (math.pi * scale * np.sqrt(1.0 - xs[inside] ** 2))
        s_x = (cheb.T @ coef) * density[:, None]  # (n_omega, L)
        s = spatial_transform(s_x, c, q).T  # (n_q, n_omega)
        s = s.real if pair.hermitian_pair else s
    resolution = 2.0 * math.sqrt(2.0 * math.log(2.0)) * math.pi * scale / n_moments
    return SpectralFunction(
        q=q,
        omega=np.asarray(omega, float),
        values=s,
        window=kernel,
        resolution=resolution,
        method="chebyshev",
        ops=(pair.label_a, pair.label_b),
        negative_times="conjugate" if pair.hermitian_pair else "zero",
        details={"n_moments": n_moments, "bounds": [lo, hi], "ground_energy": e0, "moments": mu},
    )
