"""Infinite TDVP (tensor4all.infinite.itdvp) against closed forms computed here: the XX chain's
Neel quench (free fermions: Bessel functions), the TFIM's ground-state energy per site (free
fermions), the conserved energy of a quench of the J1-J2 chain (the Neel state's, by hand), and
the fourth order of the integrator on a small nonlinear problem of the same form."""

from __future__ import annotations

import os
import sys

import numpy as np
import scipy.integrate
import scipy.linalg
import scipy.special

from tensor4all import infinite as inf

from tensor4all.infinite.itdvp import _CF4_FINAL, _CF4_STAGES

sys.path.insert(0, os.path.dirname(__file__))
from free_fermions import infinite_neel_quench_error  # noqa: E402


def test_itdvp_xx_neel_quench_against_bessel():
    """XX chain H = sum (Sx Sx + Sy Sy) = sum (S+ S- + h.c.) / 2: free fermions with hopping 1/2,
    from the Neel state n_j(t) = sum_l |G_jl(t)|^2 n_l(0) with G_jl = i^(l-j) J_(l-j)(t), so
    <Sz_j(t)> = (-1)^j sum_m (-1)^m J_m(t)^2 / 2 = (-1)^j J_0(2t) / 2. The bond grows by iTEBD
    steps to 24 (t = 1), TDVP carries the rest, to t = 3; the Neel state's energy per site, 0, is conserved."""
    res = inf.itdvp(
        inf.infinite_model("xx", cell=2),
        inf.iMPS.product_state([0, 1]),
        3.0,
        0.05,
        max_bond=24,
        cutoff=1e-24,
        observables={"Sz": "Sz"},
    )
    assert infinite_neel_quench_error(res.times, res.expectations["Sz"]) < 1e-6
    tdvp_steps = res.substeps > 0
    assert tdvp_steps.sum() >= 35 and tdvp_steps[-1]  # TDVP took over once the bond reached 24
    assert res.bond_dims[-1] == 24 and res.state.max_bond == 24
    assert np.abs(res.energies).max() < 1e-10


def test_itdvp_grows_a_longer_range_chain_by_expansion_and_conserves_energy():
    """The J1-J2 chain (next-nearest neighbours: no two-site gates) grows from the Neel state by
    subspace expansion only, every step TDVP; the energy per site stays the Neel state's,
    <S_j . S_j+1> = -1/4 and <S_j . S_j+2> = +1/4, so -1/4 + J2/4."""
    J2 = 0.5
    H = inf.infinite_model("j1j2", J2=J2, cell=2)
    res = inf.itdvp(H, inf.iMPS.product_state([0, 1]), 0.5, 0.05, max_bond=4)
    assert np.all(res.substeps > 0) and res.bond_dims[-1] == 4
    assert np.abs(res.energies - (-0.25 + J2 / 4)).max() < 1e-8
    assert abs(inf.energy_per_site(res.state, H) - (-0.25 + J2 / 4)) < 1e-8


def tfim_energy(g: float) -> float:
    """``-(1/pi) int_0^pi sqrt(1 + g^2 + 2 g cos k) dk``: H = -sum ZZ - g sum X per site."""
    val, _ = scipy.integrate.quad(lambda k: np.sqrt(1 + g * g + 2 * g * np.cos(k)), 0, np.pi, epsabs=1e-14)
    return -val / np.pi


def test_itdvp_imaginary_time_reaches_the_tfim_ground_state():
    """At bond dimension 8 the TFIM at g = 1.5 is within 1e-10 of the exact energy (VUMPS: 3e-11);
    imaginary-time TDVP approaches it from above (variational) and is there to 1e-8 by t = 10."""
    g = 1.5
    H = inf.infinite_model("tfim", g=g)
    res = inf.itdvp(H, inf.iMPS.product_state([0]), 10.0, 0.1, imaginary=True, max_bond=8, tol=1e-6)
    e = inf.energy_per_site(res.state, H)
    exact = tfim_energy(g)
    assert -1e-12 < e - exact < 1e-8
    assert abs(res.energies[-1] - e) < 1e-10
    assert np.all(np.diff(res.energies[1:][res.substeps > 0]) < 1e-12)  # imaginary time lowers the energy


def test_commutator_free_step_is_fourth_order():
    """The coefficients of the commutator-free method on y' = A(y) y (A Hermitian times -i,
    depending on y): halving the step divides the error at t = 1 by about 2^4."""
    rng = np.random.default_rng(0)
    n = 6
    H0, H1 = (rng.standard_normal((n, n)) for _ in range(2))
    H0, H1 = H0 + H0.T, H1 + H1.T

    def A(y: np.ndarray) -> np.ndarray:
        return -1j * (H0 + abs(y[0]) ** 2 * H1)

    y0 = rng.standard_normal(n) + 0j
    y0 /= np.linalg.norm(y0)
    ref = scipy.integrate.solve_ivp(lambda t, y: A(y) @ y, (0, 1), y0, rtol=1e-13, atol=1e-13, method="DOP853").y[:, -1]

    def run(steps: int) -> np.ndarray:
        y, h = y0.copy(), 1.0 / steps
        for _ in range(steps):
            F = [h * A(y)]
            Y2 = scipy.linalg.expm(_CF4_STAGES[0][0] * F[0]) @ y
            F.append(h * A(Y2))
            Y3 = scipy.linalg.expm(sum(c * f for c, f in zip(_CF4_STAGES[1], F))) @ y
            F.append(h * A(Y3))
            Y4 = scipy.linalg.expm(sum(c * f for c, f in zip(_CF4_STAGES[2], F))) @ Y2
            F.append(h * A(Y4))
            first, second = (sum(c * f for c, f in zip(cs, F)) for cs in _CF4_FINAL)
            y = scipy.linalg.expm(second) @ (scipy.linalg.expm(first) @ y)
        return y

    errors = [np.linalg.norm(run(k) - ref) for k in (10, 20, 40)]
    assert 12 < errors[0] / errors[1] < 20 and 12 < errors[1] / errors[2] < 20
