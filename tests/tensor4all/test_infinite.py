"""Infinite systems (tensor4all.infinite): canonical forms, infinite MPOs, VUMPS, iTEBD, transfer-
matrix measurements and derivatives at the fixed point, against closed forms computed here: the
Bethe-ansatz energy of the Heisenberg chain, the TFIM's free fermions (energy per site and the
Toeplitz determinant of <Z_0 Z_r>), the XX chain's Neel quench, tabulated spin-1 values (White and
Huse), and finite differences of reconverged runs."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.special

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import infinite as inf

sys.path.insert(0, os.path.dirname(__file__))
from free_fermions import infinite_neel_quench_error  # noqa: E402
from tensor4all import lattices
from tensor4all.infinite.environments import left_environments, left_step, right_environments, right_step
from tensor4all.infinite import implicit
from tensor4all.infinite.gauge import mixed_canonical

BETHE = 0.25 - np.log(2.0)
SPIN1 = -1.401484038971  # White and Huse, PRB 48, 3844 (1993)
SPIN1_STRING = 0.374325


def tfim_energy(g: float) -> float:
    """``-(1/pi) int_0^pi sqrt(1 + g^2 + 2 g cos k) dk``: H = -sum ZZ - g sum X per site."""
    val, _ = scipy.integrate.quad(lambda k: np.sqrt(1 + g * g + 2 * g * np.cos(k)), 0, np.pi, epsabs=1e-14)
    return -val / np.pi


def tfim_zz(g: float, r_max: int) -> np.ndarray:
    """``<Z_0 Z_r>`` for r = 1..r_max: the r x r Toeplitz determinant ``det[G_{j - l + 1}]`` with
    ``G_n = (1/2pi) int e^{-i k n} (g + e^{ik}) / |g + e^{ik}| dk`` (free fermions)."""

    def G(n: int) -> float:
        f = lambda k: np.real(np.exp(-1j * k * n) * (g + np.exp(1j * k)) / abs(g + np.exp(1j * k)))  # noqa: E731
        return scipy.integrate.quad(f, -np.pi, np.pi, limit=400, epsabs=1e-13, epsrel=1e-12)[0] / (2 * np.pi)

    table = {n: G(n) for n in range(-r_max, r_max + 2)}
    return np.array(
        [np.linalg.det(np.array([[table[j - l + 1] for l in range(r)] for j in range(r)])) for r in range(1, r_max + 1)]
    )


# ---- canonical forms and MPOs -------------------------------------------------------------------
def test_mixed_canonical_form_of_a_random_cell():
    rng = np.random.default_rng(0)
    ts = [rng.standard_normal((6, 2, 6)) for _ in range(3)]
    AL, AR, C = mixed_canonical(ts)
    for i in range(3):
        j = (i + 1) % 3
        np.testing.assert_allclose(np.tensordot(AL[i], C[j], (2, 0)), np.tensordot(C[i], AR[i], (1, 0)), atol=1e-13)
        np.testing.assert_allclose(np.einsum("asb,asc->bc", AL[i], AL[i]), np.eye(6), atol=1e-13)
        np.testing.assert_allclose(np.einsum("asb,csb->ac", AR[i], AR[i]), np.eye(6), atol=1e-13)
        s = np.diag(C[i])
        assert np.all(np.diff(s) <= 0) and abs(np.linalg.norm(s) - 1) < 1e-14


def test_infinite_mpo_sizes_and_cells():
    assert inf.infinite_model("heisenberg").bond_dims == [5]
    assert inf.infinite_model("tfim", g=1.5).bond_dims == [3]
    assert inf.infinite_model("heisenberg", cell=2, spin="1").cell == 2
    cyl = inf.infinite_model("heisenberg", cell=3, lattice=lattices.square(3, 3, yperiodic=True))
    assert cyl.cell == 3 and len(cyl.terms) == 3 * 6  # per column: 3 rungs around, 3 legs along, 3 terms each


def test_environments_are_fixed_points():
    rng = np.random.default_rng(1)
    H = inf.infinite_model("heisenberg", cell=2)
    AL, AR, C = mixed_canonical([rng.standard_normal((8, 2, 8)) for _ in range(2)])
    GL, e, _ = left_environments(AL, C[0], H.tensors)
    GR, e2, _ = right_environments(AR, C[0], H.tensors)
    assert abs(e - e2) < 1e-12
    g0 = left_step(left_step(GL[0], AL[0], H.tensors[0]), AL[1], H.tensors[1])
    np.testing.assert_allclose(g0[:, :-1], GL[0][:, :-1], atol=1e-12)
    np.testing.assert_allclose(g0[:, -1], GL[0][:, -1] + e * np.eye(8), atol=1e-10)
    r0 = right_step(right_step(GR[0], AR[1], H.tensors[1]), AR[0], H.tensors[0])
    np.testing.assert_allclose(r0[:, 0], GR[0][:, 0] + e * np.eye(8), atol=1e-10)
    # the energy per cell is the sum of the terms' expectation values
    psi = inf.iMPS(AL, AR, C, "spin-1/2")
    assert abs(inf.energy_per_site(psi, H) * 2 - e) < 1e-12


# ---- VUMPS ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tfim15():
    """TFIM at g = 1.5 by VUMPS at bond dimensions 8 ... 24."""
    H = inf.infinite_model("tfim", g=1.5)
    return {D: inf.vumps(H, max_bond=D, tol=1e-8, seed=1, max_iter=200) for D in (8, 12, 16, 24)}


def test_tfim_energy_and_correlations_against_free_fermions(tfim15):
    res = tfim15[24]
    assert res.converged
    assert abs(res.energy - tfim_energy(1.5)) < 1e-12
    zz = inf.correlation(res.state, "Z", "Z", 40)
    assert np.abs(zz - tfim_zz(1.5, 40)).max() < 5e-8


def test_tfim_correlation_length_extrapolates_to_one_over_ln_g(tfim15):
    exact = 1.0 / np.log(1.5)
    raw = inf.correlation_length(tfim15[24].state, "Z")
    assert 0.95 < raw / exact < 0.99  # the finite-chi bias
    xi, table = inf.extrapolate_correlation_length([tfim15[D].state for D in (8, 12, 16)], "Z")
    assert abs(xi / exact - 1) < 0.01
    assert table.shape == (3, 3)


def test_tfim_critical_energy():
    res = inf.vumps(inf.infinite_model("tfim", g=1.0), max_bond=24, tol=1e-8, seed=1)
    assert res.converged
    assert 0 < res.energy + 4 / np.pi < 5e-8  # variational; 1e-8 at bond dimension 32


def test_spin_one_heisenberg_energy_string_order_and_correlation_length():
    res = inf.vumps(inf.infinite_model("heisenberg", spin="1"), max_bond=40, tol=1e-7, seed=1)
    assert abs(res.energy - SPIN1) < 2e-7
    psi = res.state
    assert abs(-inf.string_order(psi, "Sz", "Sz", "exp(i pi Sz)") - SPIN1_STRING) < 1e-4
    xi = inf.correlation_length(psi)
    assert 4.5 < xi < 6.1  # the transfer-matrix value grows towards White and Huse's 6.03 with chi
    assert abs(inf.correlation_length(psi, "Sz") - xi) < 1e-8  # the leading channel is Sz's
    assert abs(inf.expect(psi, "Sz")) < 1e-8


def test_heisenberg_half_energy_and_growing_correlation_length():
    """The antiferromagnet in its two-site cell (in a one-site cell VUMPS may land on the
    superposition of the two sublattice-shifted states, which has no correlation length)."""
    H = inf.infinite_model("heisenberg", cell=2)
    r16 = inf.vumps(H, max_bond=16, tol=1e-6, seed=1, max_iter=150)
    r32 = inf.vumps(H, psi0=r16.state, max_bond=32, tol=1e-6, max_iter=150)
    assert 0 < r32.energy - BETHE < r16.energy - BETHE < 5e-4
    assert inf.correlation_length(r32.state) > 1.3 * inf.correlation_length(r16.state)  # critical
    assert r32.state.entanglement_entropy() > r16.state.entanglement_entropy()


def test_a_non_injective_state_has_no_correlation_length():
    """A GHZ-like iMPS (two blocks: |up up ...> + |down down ...>) has two transfer eigenvalues
    of modulus 1: a typed error naming the fix, not a correlation length of 1e15."""
    a = np.zeros((2, 2, 2))
    a[0, 0, 0] = a[1, 1, 1] = 1.0
    psi = inf.iMPS.from_tensors([a], "spin-1/2")
    with pytest.raises(t4a.InvalidOptionError, match="not injective"):
        inf.correlation_length(psi)


def test_two_site_cell_matches_one_site_cell():
    e1 = inf.vumps(inf.infinite_model("heisenberg", spin="1"), max_bond=16, tol=1e-7, seed=2).energy
    r2 = inf.vumps(inf.infinite_model("heisenberg", cell=2, spin="1"), max_bond=16, tol=1e-7, seed=2, max_iter=200)
    assert abs(r2.energy - e1) < 1e-6
    assert r2.state.cell == 2


def test_structure_factor_sums_the_correlations():
    psi = inf.vumps(inf.infinite_model("heisenberg", spin="1"), max_bond=16, tol=1e-8, seed=1).state
    s = inf.structure_factor(psi, "Sz", [0.0, np.pi], r_max=120)
    assert abs(s[0]) < 1e-5  # total Sz = 0 in the singlet (to the state's accuracy at chi 16)
    c = inf.correlation(psi, "Sz", "Sz", 120)
    sz2 = inf.expect(psi, np.diag([1.0, 0.0, 1.0]))
    assert abs(s[1] - (sz2 + 2 * np.sum(c * (-1.0) ** np.arange(1, 121)))) < 1e-10


# ---- derivatives at the fixed point -------------------------------------------------------------
def test_energy_derivative_in_jz_is_hellmann_feynman():
    def energy(Jz):
        return inf.vumps(inf.infinite_model("xxz", Jz=Jz), max_bond=16, tol=1e-8, seed=1).energy

    grad = float(tidu.grad(energy)(tf.asarray(0.5)))
    h = 1e-4
    fd = (energy(0.5 + h) - energy(0.5 - h)) / (2 * h)
    assert abs(grad - fd) < 1e-6


def test_correlation_length_derivative_by_implicit_differentiation():
    D = 6

    def xi(g):
        H = inf.infinite_model("tfim", g=g)
        return inf.fixed_point_correlation_length(inf.vumps(H, max_bond=D, tol=1e-12, seed=3, max_iter=3000).state, H)

    grad = float(tidu.grad(xi)(tf.asarray(1.5)))
    h = 1e-3
    fd = (float(xi(1.5 + h)) - float(xi(1.5 - h))) / (2 * h)
    assert abs(grad / fd - 1) < 1e-4


def test_correlation_length_derivative_at_bond_ten():
    """Where the smallest Schmidt value is 3e-7 (its square 1e-13, the Hessian's condition 1e13):
    the central differences of the Hessian's first version were 1% off already at D = 8."""
    D = 10

    def xi(g):
        H = inf.infinite_model("tfim", g=g)
        return inf.fixed_point_correlation_length(inf.vumps(H, max_bond=D, tol=1e-10, seed=3, max_iter=3000).state, H)

    grad = float(tidu.grad(xi)(tf.asarray(1.5)))
    h = 2e-3
    fd = (float(xi(1.5 + h)) - float(xi(1.5 - h))) / (2 * h)
    assert abs(grad / fd - 1) < 1e-4


def _perturbed_tfim_state(D: int, size: float):
    H = inf.infinite_model("tfim", g=1.5)
    st = inf.vumps(H, max_bond=D, tol=1e-12, seed=3).state
    AL, C = st.AL[0], st.C[0]
    VL = scipy.linalg.null_space(AL.reshape(D * 2, D).T)
    Y = size * np.random.default_rng(4).normal(size=(VL.shape[1], D))
    return H, AL, C, VL, Y


def test_energy_program_is_the_energy_of_the_perturbed_state():
    """The differentiable energy of ``A_L + V_L Y`` (two Newton steps of the fixed points from Y = 0)
    against the library's energy per site of that uniform MPS, gauge-fixed and summed anew."""
    H, AL, C, VL, Y = _perturbed_tfim_state(6, 1e-3)
    program = implicit._energy_program(AL, VL, C, H.tensors[0])
    state = inf.iMPS.from_tensors([AL + (VL @ Y).reshape(AL.shape)], tol=1e-15)
    assert abs(float(program(tf.asarray(Y))) - inf.energy_per_site(state, H)) < 1e-12
    assert (
        abs(float(program(tf.asarray(np.zeros_like(Y)))) - inf.energy_per_site(inf.iMPS.from_tensors([AL]), H)) < 1e-13
    )


def test_energy_hessian_against_second_differences_of_the_energy():
    """v^T Hess v at the fixed point against second differences of the library's energy per site
    along v (each point gauge-fixed and summed anew)."""
    H, AL, C, VL, v = _perturbed_tfim_state(6, 1.0)
    program = implicit._energy_program(AL, VL, C, H.tensors[0])
    hess = np.asarray(tidu.hessian(program)(tf.asarray(np.zeros_like(v))))
    curvature = float(np.tensordot(np.tensordot(hess, v, 2), v, 2))

    def energy(t):
        return inf.energy_per_site(inf.iMPS.from_tensors([AL + t * (VL @ v).reshape(AL.shape)], tol=1e-15), H)

    h = 1e-4  # truncation ~ h^2 (2e-5 relative at h = 1e-3), rounding ~ eps |e| / h^2 (4e-8)
    second = (energy(h) - 2 * energy(0.0) + energy(-h)) / h**2
    assert abs(second / curvature - 1) < 1e-6


def test_correlation_length_derivative_refuses_an_undetermined_fixed_point():
    """At D = 12 the smallest squared Schmidt value (4e-15) is at the rounding: a derivative would be
    noise, so the call says so instead of returning it."""

    def xi(g):
        H = inf.infinite_model("tfim", g=g)
        return inf.fixed_point_correlation_length(inf.vumps(H, max_bond=12, tol=1e-10, seed=3, max_iter=300).state, H)

    with pytest.raises(t4a.BondDimensionError, match="not determined in double precision"):
        tidu.grad(xi)(tf.asarray(1.5))


# ---- iTEBD --------------------------------------------------------------------------------------
def test_itebd_xx_neel_quench_against_bessel():
    """XX chain H = sum (Sx Sx + Sy Sy) = sum (S+ S- + h.c.) / 2: free fermions with hopping 1/2,
    from the Neel state n_j(t) = sum_l |G_jl(t)|^2 n_l(0) with G_jl = i^(l-j) J_(l-j)(t), so
    <Sz_j(t)> = (-1)^j sum_m (-1)^m J_m(t)^2 / 2 = (-1)^j J_0(2t) / 2."""
    res = inf.itebd(
        inf.infinite_model("xx", cell=2),
        inf.iMPS.product_state([0, 1]),
        3.0,
        0.05,
        max_bond=48,
        cutoff=1e-15,
        observables={"Sz": "Sz"},
    )
    assert infinite_neel_quench_error(res.times, res.expectations["Sz"]) < 1e-6


def test_itebd_imaginary_time_reaches_the_ground_state():
    H = inf.infinite_model("tfim", g=1.5)
    res = inf.itebd(H, inf.iMPS.product_state([0]), 10.0, 0.05, imaginary=True, max_bond=16, order=2)
    assert abs(inf.energy_per_site(res.state, H) - tfim_energy(1.5)) < 1e-5
