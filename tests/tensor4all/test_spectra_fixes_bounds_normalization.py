"""Fixed defects of tensor4all.spectra, against exact answers computed here from explicit matrices:

1. ``spectral_function_chebyshev(bounds=...)`` refused exact bounds of the spectrum that ``B_c |0>``
   reaches whenever they did not contain the ground energy E0: the electron-addition spectrum of
   spinless fermions (L = 8, N = 4, E0 = -4.75877) lives in N = 5, whose spectrum is (-4.41147,
   4.41147). The bounds are those of ``H`` (not ``H - E0``) on that sector; the check is now the mean
   energy of ``B_c |0>`` (and the growth check).
2. ``spectral_function(G, negative_times="zero")`` (one-sided) carried half the weight of the
   documented sum rule and of the Chebyshev result: Heisenberg L = 6, A = 2 S-, B = S+, q = pi: ED sum
   rule 2.97394, Chebyshev 2.97392, transform 1.48699 before, 2.97398 now.
"""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest
import scipy.integrate

import tensor4all as t4a
from tensor4all import models

SZ = np.diag([0.5, -0.5])  # up = index 0
SP = np.array([[0.0, 1.0], [0.0, 0.0]])  # S+


# ---- 1. Chebyshev bounds of the addition spectrum ------------------------------------------------
LF, CF = 8, 4


@pytest.fixture(scope="module")
def fermions():
    H = models.spinless_fermions(LF, t=1.0)
    gs = t4a.dmrg(H, max_bond=64, cutoff=1e-12, sector=LF // 2).state
    h = -np.eye(LF, k=1) - np.eye(LF, k=-1)  # single-particle hopping: exact diagonalization
    e, U = np.linalg.eigh(h)
    return H, gs, e, U


def test_chebyshev_accepts_exact_bounds_of_the_addition_sector(fermions):
    """Before: InvalidOptionError "do not contain the ground energy E0 = -4.7588" for the exact N = 5
    bounds (and for the library's own DMRG bounds passed back). Now accepted, and the moments
    <0|c_x T_n(H') c^dag_c|0> equal the free-fermion ones, sum over empty levels k of
    U[x, k] U[c, k] T_n((E0 + e_k - b) / a)."""
    H, gs, e, U = fermions
    e0 = e[: LF // 2].sum()
    lo, hi = e[: LF // 2 + 1].sum(), e[-(LF // 2 + 1) :].sum()  # the N = 5 spectrum
    assert not lo <= e0 <= hi  # the case the old check refused
    n = 40
    S = t4a.spectral_function_chebyshev(
        H, gs, "C", "Cdag", n_moments=n, center=CF, bounds=(lo, hi), q=[0.0], cutoff=1e-14, max_bond=64
    )
    assert S.details["bounds"] == [lo, hi]
    scale, shift = (hi - lo) / (2.0 - t4a.spectra.chebyshev.PADDING), 0.5 * (hi + lo)
    empty = np.arange(LF // 2, LF)
    y = (e0 + e[empty] - shift) / scale
    assert np.all(np.abs(y) < 1.0)
    cheb = np.cos(np.outer(np.arange(n), np.arccos(y)))  # T_n(y_k)
    exact = cheb @ (U[:, empty] * U[CF, empty]).T  # (n, L)
    np.testing.assert_allclose(S.details["moments"], exact, atol=1e-8)
    # the library's own DMRG bounds, passed back, are accepted too
    S0 = t4a.spectral_function_chebyshev(H, gs, "C", "Cdag", n_moments=8, center=CF)
    t4a.spectral_function_chebyshev(H, gs, "C", "Cdag", n_moments=8, center=CF, bounds=tuple(S0.details["bounds"]))


def test_chebyshev_bounds_that_miss_the_addition_spectrum_are_refused(fermions):
    """Bounds below the mean energy of c^dag_c|0> (E0 + sum_k U[c,k]^2 e_k / sum_k U[c,k]^2 over the
    empty levels) are refused before any moment; bounds containing it but ending below the top of
    the N = 5 spectrum by the growth of the Chebyshev vectors."""
    H, gs, e, U = fermions
    e0 = e[: LF // 2].sum()
    lo, hi = e[: LF // 2 + 1].sum(), e[-(LF // 2 + 1) :].sum()
    w = U[CF, LF // 2 :] ** 2
    mean = e0 + (w @ e[LF // 2 :]) / w.sum()
    assert lo < mean < hi
    with pytest.raises(t4a.InvalidOptionError, match="do not contain the mean energy") as info:
        t4a.spectral_function_chebyshev(H, gs, "C", "Cdag", n_moments=20, center=CF, bounds=(lo - 5.0, lo - 0.2))
    reported = float(str(info.value).split("<B_c 0|B_c 0> = ")[1].split(" ")[0])
    assert reported == pytest.approx(mean, abs=1e-8)  # -3.47191
    with pytest.raises(t4a.InvalidOptionError, match=r"Chebyshev moment \d+ grew beyond its bound"):
        t4a.spectral_function_chebyshev(H, gs, "C", "Cdag", n_moments=60, center=CF, bounds=(lo, 0.5 * hi))


# ---- 2. the one-sided time transform's normalization ---------------------------------------------
LH, CH, T_FINAL, DT = 6, 3, 12.0, 0.1
OMEGA = np.linspace(-2.5, 2.0 * np.pi, 90)


def site_op(op: np.ndarray, i: int) -> np.ndarray:
    return reduce(np.kron, [op if k == i else np.eye(2) for k in range(LH)])


@pytest.fixture(scope="module")
def heisenberg():
    Hm = sum(
        site_op(SZ, i) @ site_op(SZ, i + 1)
        + 0.5 * (site_op(SP, i) @ site_op(SP.T, i + 1) + site_op(SP.T, i) @ site_op(SP, i + 1))
        for i in range(LH - 1)
    )
    E, V = np.linalg.eigh(Hm)
    H = models.heisenberg(LH, conserve="Sz")  # the Chebyshev vectors stay in Sz = 1 (bounds of that sector)
    gs = t4a.dmrg(H, max_bond=32, cutoff=1e-14).state
    return H, gs, E, V


def _delta_w(nu: float) -> float:
    """The Gaussian window's broadening of a delta peak, (1 / pi) int_0^T cos(nu t) W(t) dt (quadrature)."""
    sigma = T_FINAL / 3.0
    return scipy.integrate.quad(lambda t: np.cos(nu * t) * np.exp(-0.5 * (t / sigma) ** 2), 0.0, T_FINAL)[0] / np.pi


@pytest.mark.parametrize("factor", [1.0, 2.0], ids=["A=B^dagger", "A=2B^dagger"])
def test_one_sided_transform_carries_the_full_weight(heisenberg, factor):
    """A = factor S-, B = S+ at q = pi. ED: amplitudes b_n = sum_x (-1)^(x-c) <0|A_x|n><n|B_c|0> (real),
    the sum rule sum_n b_n, and Re S(pi, omega) = sum_n b_n delta_W(omega - (E_n - E0)).
    Before: negative_times="zero" gave half of both (weight 1.48699 for factor 2, against 2.97394)."""
    H, gs, E, V = heisenberg
    A = factor * SP.T
    g0 = V[:, 0]
    right = V.T @ (site_op(SP, CH) @ g0)  # <n|B_c|0>
    b = sum((-1.0) ** (x - CH) * ((g0 @ site_op(A, x)) @ V) for x in range(LH)) * right  # b_n, real
    static = b.sum()
    assert static == pytest.approx(factor * 1.48697, abs=1e-4)
    q = np.array([np.pi])

    G = t4a.dynamical_correlation(H, gs, A, SP, t_final=T_FINAL, dt=DT, center=CH, method="tebd")
    Sz = t4a.spectral_function(G, q=q, omega=OMEGA, negative_times="zero")
    exact = np.array([sum(bn * _delta_w(w - (en - E[0])) for bn, en in zip(b, E) if abs(bn) > 1e-12) for w in OMEGA])
    assert np.max(np.abs(Sz.values[0].real - exact)) < 1e-4 * np.max(exact)  # measured 1.1e-5
    assert Sz.weight()[0].real == pytest.approx(static, rel=1e-4)  # measured 1.6e-5
    if factor == 1.0:  # A = B^dagger: the real part is the two-sided ("conjugate") transform's S
        Sc = t4a.spectral_function(G, q=q, omega=OMEGA)
        np.testing.assert_allclose(Sz.values.real, Sc.values, atol=1e-12)

    # the Chebyshev cross-check carries the same weight (exact bounds: the Sz = 1 sector)
    ups = LH - np.array([bin(i).count("1") for i in range(2**LH)])  # up = index 0 on every site
    sector = np.nonzero(ups == LH // 2 + 1)[0]
    Hm = V @ np.diag(E) @ V.T
    es = np.linalg.eigvalsh(Hm[np.ix_(sector, sector)])
    lo, hi = float(es[0]), float(es[-1])
    scale, shift = (hi - lo) / (2.0 - t4a.spectra.chebyshev.PADDING), 0.5 * (hi + lo)
    m = 400  # omega = shift + scale cos(theta) - E0, theta at the midpoints: all of x in (-1, 1)
    theta = (np.arange(m) + 0.5) * np.pi / m
    Sc = t4a.spectral_function_chebyshev(
        H,
        gs,
        A,
        SP,
        n_moments=100,
        q=q,
        center=CH,
        bounds=(lo, hi),
        omega=shift + scale * np.cos(theta) - E[0],
        cutoff=1e-14,
    )
    # int S d omega = int S scale sin(theta) d theta, a cosine series of degree < 2 m: the midpoint rule is exact
    weight = np.sum(Sc.values[0] * scale * np.sin(theta)) * np.pi / m
    assert weight.real == pytest.approx(static, rel=1e-6)
    assert Sz.negative_times == "zero" and Sc.negative_times == ("conjugate" if factor == 1.0 else "zero")
