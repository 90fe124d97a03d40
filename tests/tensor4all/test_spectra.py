"""Dynamical correlations and spectral functions (tensor4all.spectra) against exact results computed
here from explicit matrices: free fermions (the XX chain and spinless fermions, by Jordan-Wigner,
from the single-particle eigenvectors and Wick's theorem) and exact diagonalization (Kronecker
products of spin matrices), never the library's own operators or transforms of the reference.

Measured (2-core machine; the asserts leave a margin):

* XX chain, L = 20, TEBD order 4, dt = 0.2, t_final = 8: max |G - G_exact| = 5.2e-7, max |S - S_exact|
  = 7.2e-7 over the grid (Gaussian window, max S = 0.29; Hann 9.8e-7) with S_exact the same
  transform of the exact G; asserted <= 1e-4 as the issue asks.
* Heisenberg chain, L = 32, t_final = 8, TEBD order 4 at dt = 0.2, max_bond 64: 0.15 % of the weight
  (Gaussian window; Hann -0.13 %, its positive part 0.08 %; asserted < 2 %) lies below the des
  Cloizeaux-Pearson edge (pi/2)|sin q| minus the resolution (0.887, Gaussian).
* Spinless fermions, L = 10: the Green's functions <c_x(t) c^dag_c> (TDVP) and <c^dag_x(t) c_c>
  (TEBD) to 1e-8; charged (S+) and uncharged (Sx) spin operators against exact diagonalization.
* Linear prediction: a damped sum of three exponentials extended to 1e-13 (asserted 1e-8); on the
  exact G(x, t) of the XX chain it brings S(q, omega) of a window t_final = 8 extended to 16 within
  0.023 of the exact t_final = 16 result, against 0.19 without it.
* Chebyshev, Heisenberg L = 8, 100 moments: the moments equal those of exact diagonalization to
  1e-14 (asserted 1e-10: the Chebyshev vectors are compressed at cutoff 1e-12); against the time
  evolution (t_final = 20), the zeroth frequency moment of S(q, omega) agrees to 2e-6 (asserted 1e-4)
  and the first to 7.7e-4 (asserted 1e-3: the Jackson kernel scales the first moment about the
  band centre by g_1 = cos(pi / (N + 1)), a shift a (1 - g_1) <x> S(q) of up to 8e-4 here).
"""

from __future__ import annotations

import doctest
import json
import math
from functools import reduce

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models
from tensor4all.spectra import correlation, prediction, transform
from tensor4all.spectra.operators import apply_at, operator_pair
from tensor4all.spectra.transform import WindowResolutionError

# ---- explicit matrices -------------------------------------------------------------------------
SZ = np.diag([0.5, -0.5])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])  # S+ (up = index 0)
SX = 0.5 * (SP + SP.T)


def site_op(op: np.ndarray, i: int, L: int) -> np.ndarray:
    return reduce(np.kron, [op if k == i else np.eye(2) for k in range(L)])


def heisenberg_matrix(L: int) -> np.ndarray:
    H = np.zeros((2**L, 2**L))
    for i in range(L - 1):
        H += site_op(SZ, i, L) @ site_op(SZ, i + 1, L)
        H += 0.5 * (site_op(SP, i, L) @ site_op(SP.T, i + 1, L) + site_op(SP.T, i, L) @ site_op(SP, i + 1, L))
    return H


def ed_correlation(H: np.ndarray, a: list[np.ndarray], b: np.ndarray, times: np.ndarray) -> np.ndarray:
    """<0| A_x(t) B |0> from the full spectrum: sum_n <0|A_x|n><n|B|0> e^{-i (E_n - E0) t}."""
    e, v = np.linalg.eigh(H)
    g = v[:, 0]
    right = v.T @ (b @ g)  # <n|B|0>
    left = np.array([(g @ ax) @ v for ax in a])  # <0|A_x|n>
    phases = np.exp(-1j * np.outer(times, e - e[0]))
    return phases @ (left * right).T


def hopping(L: int, t: float) -> tuple[np.ndarray, np.ndarray]:
    h = np.zeros((L, L))
    for i in range(L - 1):
        h[i, i + 1] = h[i + 1, i] = t
    return np.linalg.eigh(h)


def xx_exact(L: int, c: int, times: np.ndarray, J: float = 1.0) -> np.ndarray:
    """<Sz_x(t) Sz_c> of the open XX chain J sum (SxSx + SySy): free fermions of hopping J/2,
    Sz = n - 1/2, half filled; Wick's theorem with c_x(t) = sum_k phi_k(x) e^{-i e_k t} c_k."""
    e, U = hopping(L, 0.5 * J)
    occ = e < 0
    n = (U[:, occ] ** 2).sum(axis=1)
    out = []
    for t in times:
        hole = (U[:, occ] * np.exp(1j * e[occ] * t)) @ U[c, occ]  # <c^dag_x(t) c_c>
        particle = (U[:, ~occ] * np.exp(-1j * e[~occ] * t)) @ U[c, ~occ]  # <c_x(t) c^dag_c>
        out.append((n - 0.5) * (n[c] - 0.5) + hole * particle)
    return np.array(out)


@pytest.fixture(scope="module")
def xx_run():
    L = 20
    H = models.xx(L, conserve="Sz")
    gs = t4a.dmrg(H, max_bond=128, cutoff=1e-12, tol=1e-12).state
    G = t4a.dynamical_correlation(H, gs, "Sz", "Sz", t_final=8.0, dt=0.2, method="tebd", max_bond=256, cutoff=1e-12)
    return G


# ---- the XX chain: G and S against free fermions ------------------------------------------------
def test_xx_chain_correlation_and_spectrum_equal_free_fermions(xx_run):
    G = xx_run
    exact = t4a.DynamicalCorrelation(G.times, xx_exact(G.L, G.center, G.times), G.center, ("Sz", "Sz"))
    assert G.hermitian_pair and G.ops == ("Sz", "Sz") and G.method == "tebd"
    assert G.ground_variance < 1e-8
    assert np.max(np.abs(G.values - exact.values)) < 5e-6  # measured 5e-7
    for window in ("gaussian", "hann"):
        S, S_exact = t4a.spectral_function(G, window=window), t4a.spectral_function(exact, window=window)
        assert S.values.shape == (G.L // 2 + 1, len(S.omega)) and np.isrealobj(S.values)
        np.testing.assert_array_equal(S.omega, S_exact.omega)
        assert np.max(np.abs(S.values - S_exact.values)) <= 1e-4  # the bound; measured 7.5e-7
    # the sum rule over a grid that holds the broadened weight: int S d omega = Re sum_x e^{-iq(x-c)} G(x, 0)
    omega = np.linspace(-3.0, 6.0, 91)
    S = t4a.spectral_function(G, omega=omega)
    static = (np.exp(-1j * np.outer(S.q, np.arange(G.L) - G.center)) @ G.values[0]).real
    np.testing.assert_allclose(S.weight(), static, atol=1e-4)  # measured 1.3e-5: the grid, the window cut


def test_the_spectrum_round_trips_through_json(xx_run):
    G = xx_run
    back = t4a.DynamicalCorrelation.from_dict(json.loads(json.dumps(G.as_dict())))
    np.testing.assert_array_equal(back.values, G.values)
    assert back.center == G.center and back.ops == G.ops and len(back.history) == len(G.history)
    S = t4a.spectral_function(G)
    d = json.loads(json.dumps(S.as_dict()))
    assert set(d) >= {"q", "omega", "values", "window", "resolution", "t_final"}
    assert np.array(d["values"]).shape == (len(d["q"]), len(d["omega"]))


# ---- the Heisenberg chain: the weight lies above the des Cloizeaux-Pearson edge ----------------------
def test_heisenberg_weight_lies_above_the_des_cloizeaux_pearson_edge():
    L = 32
    H = models.heisenberg(L, conserve="Sz")
    gs = t4a.dmrg(H, max_bond=64, cutoff=1e-10).state
    G = t4a.dynamical_correlation(H, gs, "Sz", "Sz", t_final=8.0, dt=0.2, method="tebd", max_bond=64)
    for window, bound in (("gaussian", 0.02), ("hann", 0.02)):
        S = t4a.spectral_function(G, window=window)
        below = S.omega[None, :] < 0.5 * math.pi * np.abs(np.sin(S.q))[:, None] - S.resolution
        fraction = float(np.sum(S.values * below) / np.sum(S.values))
        assert fraction < bound, (window, fraction)  # measured 0.0015 (gaussian), -0.0013 (hann: its side lobes)
    # the lowest excitation at q = pi/2 sits at the edge pi/2: the peak lies within the resolution of it
    S = t4a.spectral_function(G)
    k = int(np.argmin(np.abs(S.q - 0.5 * math.pi)))
    assert abs(S.omega[np.argmax(S.values[k])] - 0.5 * math.pi) < S.resolution


# ---- fermions: Green's functions with Jordan-Wigner strings, charged operators -----------------------
def test_fermion_green_functions_equal_free_fermions():
    L, c = 10, 5
    H = models.spinless_fermions(L, t=1.0)
    gs = t4a.dmrg(H, max_bond=64, cutoff=1e-12, tol=1e-12, sector=L // 2).state
    e, U = hopping(L, -1.0)
    order = np.argsort(e)
    occ, emp = order[: L // 2], order[L // 2 :]
    G = t4a.dynamical_correlation(H, gs, "C", "Cdag", t_final=2.0, dt=0.1, cutoff=1e-12)  # TDVP, in N = 6
    exact = np.array([(U[:, emp] * np.exp(-1j * e[emp] * t)) @ U[c, emp] for t in G.times])
    assert G.hermitian_pair and np.max(np.abs(G.values - exact)) < 1e-6  # measured 1e-8
    G = t4a.dynamical_correlation(H, gs, "Cdag", "C", t_final=2.0, dt=0.1, method="tebd", cutoff=1e-12)  # in N = 4
    exact = np.array([(U[:, occ] * np.exp(1j * e[occ] * t)) @ U[c, occ] for t in G.times])
    assert np.max(np.abs(G.values - exact)) < 1e-6
    # the electron-addition spectral function of the same transform as the exact G
    ref = t4a.DynamicalCorrelation(G.times, exact, c, G.ops)
    S, S_ref = t4a.spectral_function(G), t4a.spectral_function(ref)
    assert np.max(np.abs(S.values - S_ref.values)) < 1e-5


@pytest.mark.parametrize("a,b,mats", [("S-", "S+", (SP.T, SP)), ("Sx", "Sx", (SX, SX))])
def test_charged_and_uncharged_spin_operators_equal_exact_diagonalization(a, b, mats):
    """S+ (one charge: the evolution runs in the sector Sz = 1 of the symmetric state) and Sx (no single
    charge: it runs densely) against the full spectrum of the explicit matrix."""
    L, c = 8, 4
    H = models.heisenberg(L, conserve="Sz")
    gs = t4a.dmrg(H, max_bond=32, cutoff=1e-12, tol=1e-12).state
    G = t4a.dynamical_correlation(H, gs, a, b, t_final=1.0, dt=0.1, method="tebd", cutoff=1e-12)
    exact = ed_correlation(
        heisenberg_matrix(L), [site_op(mats[0], x, L) for x in range(L)], site_op(mats[1], c, L), G.times
    )
    assert np.max(np.abs(G.values - exact)) < 1e-6
    phi = apply_at(gs, operator_pair(H, a, b, "test"), c)  # the state the evolution starts from
    assert phi.symmetric == (b == "S+") and (not phi.symmetric or phi.sector == {"Sz": 1.0})


# ---- linear prediction ----------------------------------------------------------------------------
def test_linear_prediction_extends_damped_exponentials():
    t = 0.1 * np.arange(200)
    x = 0.7 * np.exp((1.3j - 0.05) * t) + 0.3 * np.exp((-2.1j - 0.2) * t) + 0.2 * np.exp((0.4j - 0.01) * t)
    for p in (None, 3, 40):
        future = t4a.linear_prediction(x[:100], 100, n_coefficients=p)
        assert np.max(np.abs(future - x[100:])) < 1e-8  # measured 1e-13 (p = 3: 5e-11)
    both = t4a.linear_prediction(np.stack([x[:100], x[:100].real], axis=1), 5)
    assert both.shape == (5, 2) and np.max(np.abs(both[:, 0] - x[100:105])) < 1e-8
    growing = np.exp(0.05 * t[:50])  # |lambda| > 1 is put on the unit circle: no blow-up
    assert np.max(np.abs(t4a.linear_prediction(growing, 1000))) <= np.max(growing) * (1 + 1e-9)


def test_linear_prediction_brings_a_short_window_closer_to_a_long_one():
    L, c, dt = 20, 10, 0.1
    times = dt * np.arange(161)
    long = t4a.DynamicalCorrelation(times, xx_exact(L, c, times), c)
    short = t4a.DynamicalCorrelation(times[:81], long.values[:81], c)
    omega = np.linspace(0.0, 3.0, 31)
    ref = t4a.spectral_function(long, omega=omega)
    plain = t4a.spectral_function(short, omega=omega)
    extended = t4a.spectral_function(short, omega=omega, extend=2.0)
    assert extended.t_final == pytest.approx(16.0) and extended.resolution == pytest.approx(ref.resolution)
    err_plain = np.max(np.abs(plain.values - ref.values))
    err_extended = np.max(np.abs(extended.values - ref.values))
    assert err_extended < 0.25 * err_plain, (err_extended, err_plain)  # measured 0.023 against 0.19


# ---- Chebyshev: the cross-check ----------------------------------------------------------------------
def test_chebyshev_moments_and_spectrum_against_exact_and_time_evolution():
    L, c, N = 8, 4, 100
    H = models.heisenberg(L, conserve="Sz")
    gs = t4a.dmrg(H, max_bond=32, cutoff=1e-12, tol=1e-12).state.dense()  # dense: faster at this size
    S = t4a.spectral_function_chebyshev(H, gs, "Sz", "Sz", n_moments=N, cutoff=1e-12, max_bond=64)
    lo, hi = S.details["bounds"]
    Hd = heisenberg_matrix(L)
    e, v = np.linalg.eigh(Hd)
    sz0 = [site_op(SZ, x, L) for x in range(L)]
    ups = np.array([bin(i).count("1") for i in range(2**L)])  # the bounds are those of B_c|0>'s sector, Sz = 0
    zero = np.nonzero(ups == L // 2)[0]
    e_zero = np.linalg.eigvalsh(Hd[np.ix_(zero, zero)])
    assert lo == pytest.approx(e_zero[0], abs=1e-8) and hi == pytest.approx(e_zero[-1], abs=1e-8)
    # the moments mu_n(x) = <0| Sz_x T_n(H') Sz_c |0> by the same recursion on the explicit matrix
    a, b = (hi - lo) / (2 - 0.025), 0.5 * (hi + lo)
    hp = (Hd - b * np.eye(len(Hd))) / a
    vecs = [sz0[c] @ v[:, 0], hp @ (sz0[c] @ v[:, 0])]
    while len(vecs) < N:
        vecs.append(2 * hp @ vecs[-1] - vecs[-2])
    mu = np.array([[v[:, 0] @ sz0[x] @ t for x in range(L)] for t in vecs])
    assert np.max(np.abs(S.details["moments"] - mu)) < 1e-10  # measured 1e-14
    # against the time evolution: the zeroth and first frequency moments of S(q, omega) per q
    G = t4a.dynamical_correlation(H, gs, "Sz", "Sz", t_final=20.0, dt=0.1, method="tebd", cutoff=1e-12)
    St = t4a.spectral_function(G, omega=np.linspace(-3.0, 6.0, 181))
    for k in range(len(S.q)):
        m0 = (np.trapezoid(S.values[k], S.omega), np.trapezoid(St.values[k], St.omega))
        m1 = (np.trapezoid(S.omega * S.values[k], S.omega), np.trapezoid(St.omega * St.values[k], St.omega))
        assert m0[0] == pytest.approx(m0[1], abs=1e-4)
        # the Jackson kernel scales the first moment about the band centre by g_1 = cos(pi / (N + 1))
        assert m1[0] == pytest.approx(m1[1], abs=1e-3)


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
def test_an_unnormalized_ground_state_gives_the_correlation_of_the_normalized_one(method):
    """``|0>`` scaled by 3: its norm is divided out once, so G, E0 and the variance are those of the
    normalized eigenstate (the full spectrum of the explicit matrix). Before the fix E0 was divided
    by <0|0> twice: E0 = -0.277 instead of -2.494, and the phase e^{i E0 t} spoiled G."""
    L, c = 6, 3
    H = models.heisenberg(L, conserve="Sz")
    gs = t4a.dmrg(H, max_bond=32, cutoff=1e-14, tol=1e-12).state
    G = t4a.dynamical_correlation(H, gs * 3.0, "Sz", "Sz", t_final=0.5, dt=0.05, method=method, cutoff=1e-14)
    Hd = heisenberg_matrix(L)
    e = np.linalg.eigvalsh(Hd)
    exact = ed_correlation(Hd, [site_op(SZ, x, L) for x in range(L)], site_op(SZ, c, L), G.times)
    assert G.ground_energy == pytest.approx(e[0], abs=1e-9)
    assert G.ground_variance < 1e-8
    assert np.max(np.abs(G.values - exact)) < 1e-6


def test_chebyshev_of_an_unnormalized_ground_state_equals_the_exact_spectrum():
    """The Chebyshev spectrum of ``3 |0>`` at given frequencies against the kernel-polynomial sum of
    moments computed on the explicit matrix (bounds: its exact extreme eigenvalues); E0 and the
    default frequency axis ``[E_min - E0, E_max - E0]`` are those of the normalized state."""
    L, c, N = 6, 3, 40
    H = models.heisenberg(L, conserve="Sz")
    gs = t4a.dmrg(H, max_bond=32, cutoff=1e-14, tol=1e-12).state
    Hd = heisenberg_matrix(L)
    e, v = np.linalg.eigh(Hd)
    lo, hi = float(e[0]), float(e[-1])
    omega = np.linspace(0.0, 3.0, 13)
    kw = dict(n_moments=N, bounds=(lo, hi), cutoff=1e-14, max_bond=64)
    S = t4a.spectral_function_chebyshev(H, gs * 3.0, "Sz", "Sz", omega=omega, **kw)
    assert S.details["ground_energy"] == pytest.approx(e[0], abs=1e-9)
    default = t4a.spectral_function_chebyshev(H, gs * 3.0, "Sz", "Sz", **kw)
    assert default.omega[0] == pytest.approx(lo - e[0], abs=1e-9) and default.omega[-1] == pytest.approx(hi - e[0])
    # the exact spectrum of the same expansion: moments by the recursion on the matrix, Jackson kernel
    a, b = (hi - lo) / (2 - 0.025), 0.5 * (hi + lo)
    hp = (Hd - b * np.eye(len(Hd))) / a
    g0 = v[:, 0]
    vecs = [site_op(SZ, c, L) @ g0, hp @ (site_op(SZ, c, L) @ g0)]
    while len(vecs) < N:
        vecs.append(2 * hp @ vecs[-1] - vecs[-2])
    mu = np.array([[g0 @ site_op(SZ, x, L) @ t for x in range(L)] for t in vecs])
    n = np.arange(N)
    jackson = (N - n + 1) * np.cos(np.pi * n / (N + 1)) + np.sin(np.pi * n / (N + 1)) / np.tan(np.pi / (N + 1))
    jackson /= N + 1
    x = (omega + e[0] - b) / a
    cheb = np.cos(np.outer(n, np.arccos(x)))
    weight = np.pi * a * np.sqrt(1.0 - x**2)
    s_x = (cheb.T @ (jackson[:, None] * np.where(n == 0, 1.0, 2.0)[:, None] * mu)) / weight[:, None]
    exact = np.array([(s_x @ np.exp(-1j * q * (np.arange(L) - c))).real for q in S.q])
    assert np.max(np.abs(S.values - exact)) < 1e-8


# ---- errors -------------------------------------------------------------------------------------------
def test_bad_grids_and_operators_name_the_fix(xx_run):
    G = xx_run
    with pytest.raises(WindowResolutionError, match="Nyquist"):
        t4a.spectral_function(G, omega=[0.0, 100.0])
    with pytest.raises(WindowResolutionError, match="coarser grid"):
        t4a.spectral_function(G, omega=np.linspace(0.0, 1.0, 200))
    assert issubclass(WindowResolutionError, t4a.InvalidOptionError)
    H = models.xx(6)
    gs = t4a.MPS.random(6, bond_dim=2, seed=1)
    with pytest.raises(t4a.UnknownOperatorError, match="not an operator of the Hamiltonian's local space 'spin-1/2'"):
        t4a.dynamical_correlation(H, gs, "C", "Cdag", t_final=0.2, dt=0.1)
    with pytest.raises(t4a.InvalidOptionError, match="not a multiple of dt"):
        t4a.dynamical_correlation(H, gs, "Sz", "Sz", t_final=0.25, dt=0.1)
    with pytest.raises(t4a.InvalidOptionError, match="negative_times='zero'"):
        t4a.spectral_function(t4a.DynamicalCorrelation([0.0, 0.1], np.ones((2, 3)), 1, hermitian_pair=False))


@pytest.mark.parametrize("module", [prediction, transform, correlation], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    assert doctest.testmod(module).failed == 0
