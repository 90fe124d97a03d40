"""Finite temperature (tensor4all.thermal): purification against exact results computed here
(free fermions of the XX chain and of the TFIM by Jordan-Wigner, explicit matrices for the
Heisenberg and Hubbard chains), thermodynamics as tidu derivatives of ln Z, METTS."""

from __future__ import annotations

import json
import math
import pathlib
import sys
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

import tensor4all as t4a
from tensor4all import models
from tensor4all.references import sparse_hamiltonian
from tensor4all.thermal import purified_space
from tensor4all.thermal.purified import infinite_temperature_sites

DATA = pathlib.Path(__file__).resolve().parent / "data"
#: exact thermodynamics of the Hubbard chain L = 8 and the Heisenberg chain L = 16 (all 65536 states),
#: written by data/thermal_references.py from explicit matrices (checked at small sizes below)
REFERENCES = json.loads((DATA / "thermal_references.json").read_text())


# ---- exact references ----------------------------------------------------------------------
def free_fermions(eps: np.ndarray, betas: np.ndarray, const: float = 0.0) -> tuple:
    """ln Z, E, C of H = sum_k eps_k n_k + const (every occupation allowed)."""
    b = np.asarray(betas, dtype=float)[:, None]
    x = b * eps
    log_z = np.sum(np.logaddexp(0.0, -x), axis=1) - b[:, 0] * const
    f = 0.5 * (1.0 - np.tanh(0.5 * x))  # 1 / (e^x + 1)
    energy = np.sum(eps * f, axis=1) + const
    heat = b[:, 0] ** 2 * np.sum(eps**2 * f * (1.0 - f), axis=1)
    return log_z, energy, heat


def xx_levels(L: int, J: float = 1.0) -> np.ndarray:
    """H = J sum (Sx Sx + Sy Sy): hopping J/2 of Jordan-Wigner fermions on the open chain."""
    t = np.diag(np.full(L - 1, 0.5 * J), 1)
    return np.linalg.eigvalsh(t + t.T)


def tfim_levels(L: int, J: float = 1.0, g: float = 1.0) -> tuple[np.ndarray, float]:
    """H = -J sum Z Z - g sum X (Pauli): sum_k e_k (n_k - 1/2), e_k = 2 sigma_k of the bidiagonal
    matrix (g on the diagonal, J above it): levels e_k and the constant -sum e_k / 2."""
    m = np.diag(np.full(L, g)) + np.diag(np.full(L - 1, J), 1)
    e = 2.0 * np.linalg.svd(m, compute_uv=False)
    return e, -0.5 * float(np.sum(e))


def ed_thermal(h: np.ndarray, betas: np.ndarray) -> tuple:
    w = np.linalg.eigvalsh(h)
    out = []
    for b in betas:
        p = np.exp(-b * (w - w[0]))
        z = p.sum()
        e = float(np.sum(w * p) / z)
        out.append((math.log(z) - b * w[0], e, b * b * (float(np.sum(w * w * p) / z) - e * e)))
    return tuple(np.array(x) for x in zip(*out))


def rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))


# ---- the doubled space and the start -----------------------------------------------------
def test_purified_space_orders_the_basis_by_charge_and_keeps_the_operators():
    sp2 = purified_space("spin-1/2")
    assert sp2.dim == 4 and sp2.charges["2Sz"] == (-2, 0, 0, 2)
    el = purified_space("electron")
    q = [(n, s) for n, s in zip(el.charges["N"], el.charges["2Sz"])]
    assert q == sorted(q) and el.fermionic == t4a.sites.local_spaces.local_space("electron").fermionic
    sz = sp2.matrix("Sz")
    assert np.allclose(np.sort(np.diag(sz)), [-0.5, -0.5, 0.5, 0.5]) and np.allclose(sz, np.diag(np.diag(sz)))


@pytest.mark.parametrize("conserve", [None, "Sz"])
def test_the_canonical_start_spans_the_sector(conserve):
    psi, log_states = infinite_temperature_sites("spin-1/2", 8, conserve, 1, "test")
    assert math.isclose(log_states, math.log(math.comb(8, 3)), rel_tol=1e-14)
    assert math.isclose(float(psi.norm()), 1.0, rel_tol=1e-13)
    with pytest.raises(t4a.SymmetryViolationError, match="has no states"):
        infinite_temperature_sites("spin-1/2", 8, conserve, 5, "test")


# ---- purification against exact results --------------------------------------------------
def test_xx_chain_ln_z_and_energy_against_free_fermions():
    L = 32
    res = t4a.thermal_state(models.xx(L, conserve="Sz"), 10.0, dbeta=0.2, every=10, cutoff=1e-14, max_bond=256)
    log_z, energy, _ = free_fermions(xx_levels(L), res.betas)
    assert np.allclose(res.betas, [0, 2, 4, 6, 8, 10])
    assert rel(res.log_z, log_z) < 1e-6
    assert rel(res.energy[1:], energy[1:]) < 1e-6
    assert res.conserve == "Sz" and res.state.symmetric
    assert np.allclose(res.entropy[0], L * math.log(2))


def test_tfim_energy_against_jordan_wigner():
    L = 24
    res = t4a.thermal_state(models.tfim(L, g=1.0), 4.0, dbeta=0.2, every=5, cutoff=1e-14, max_bond=256)
    e, const = tfim_levels(L)
    log_z, energy, _ = free_fermions(e, res.betas, const)
    assert rel(res.log_z, log_z) < 1e-6
    assert rel(res.energy[1:], energy[1:]) < 1e-6 and abs(res.energy[0]) < 1e-14


def test_tfim_levels_reproduce_exact_diagonalization():
    L = 6
    e, const = tfim_levels(L)
    w = np.linalg.eigvalsh(sparse_hamiltonian(models.tfim_opsum(L), L, "pauli").toarray())
    levels = np.sort([const + sum(e[k] for k in range(L) if (m >> k) & 1) for m in range(2**L)])
    assert np.allclose(levels, w)


def hubbard_matrix(L: int, t: float, U: float, mu: float) -> sp.csr_matrix:
    """-t sum (c+_i,s c_i+1,s + h.c.) + U sum n_up n_dn - mu sum n, with explicit Jordan-Wigner
    strings over the modes (site 0 up, site 0 down, site 1 up, ...), site 0 most significant."""
    a, z, e = np.array([[0.0, 1.0], [0.0, 0.0]]), np.diag([1.0, -1.0]), np.eye(2)

    def c(m: int) -> sp.csr_matrix:
        out = sp.csr_matrix(np.ones((1, 1)))
        for o in [z] * m + [a] + [e] * (2 * L - m - 1):
            out = sp.kron(out, sp.csr_matrix(o), format="csr")
        return out

    cs = [c(m) for m in range(2 * L)]
    n = [x.T @ x for x in cs]
    h = sp.csr_matrix((4**L, 4**L))
    for i in range(L - 1):
        for s in range(2):
            hop = cs[2 * i + s].T @ cs[2 * i + 2 + s]
            h = h - t * (hop + hop.T)
    for i in range(L):
        h = h + U * (n[2 * i] @ n[2 * i + 1]) - mu * (n[2 * i] + n[2 * i + 1])
    return h


def _reference_script():
    sys.path.insert(0, str(DATA))
    try:
        import thermal_references
    finally:
        sys.path.remove(str(DATA))
    return thermal_references


def test_the_reference_script_reproduces_exact_diagonalization():
    """data/thermal_references.py (symmetry blocks of the (N_up, N_dn) and Sz sectors) against the
    explicit Jordan-Wigner matrix and the full Heisenberg matrix, at sizes small enough to build here."""
    script = _reference_script()
    levels = np.sort(np.concatenate([np.repeat(w, m) for w, m in script.hubbard_levels(4, 1.0, 4.0, 2.0)]))
    assert np.allclose(levels, np.linalg.eigvalsh(hubbard_matrix(4, 1.0, 4.0, 2.0).toarray()))
    levels = np.sort(np.concatenate([np.repeat(w, m) for w, m in script.heisenberg_levels(8, 1.0, 1.0)]))
    assert np.allclose(levels, np.linalg.eigvalsh(sparse_hamiltonian(models.heisenberg(8).opsum, 8).toarray()))
    assert REFERENCES["hubbard_L8"]["dimension"] == REFERENCES["heisenberg_L16"]["dimension"] == 4**8
    assert math.isclose(REFERENCES["hubbard_L8"]["log_z"][0], 8 * math.log(4.0), rel_tol=1e-14)


def test_hubbard_grand_canonical_against_exact_diagonalization():
    """L = 8, U = 4, mu = U/2 (half filling), all 4^8 states (the reference file); and L = 4 against
    the explicit matrix built here."""
    L, U = 4, 4.0
    H = models.hubbard(L, U=U, mu=U / 2)
    res = t4a.thermal_state(H, 2.0, dbeta=0.1, every=10, cutoff=1e-14, max_bond=512, observables={"n": "Ntot"})
    assert np.allclose(np.asarray(res.observables["n"])[-1], 1.0, atol=1e-8)  # half filling at mu = U/2
    log_z, energy, _ = ed_thermal(hubbard_matrix(L, 1.0, U, U / 2).toarray(), res.betas)
    assert rel(res.log_z, log_z) < 1e-6
    assert rel(res.energy, energy) < 1e-6
    ref = REFERENCES["hubbard_L8"]
    res = t4a.thermal_state(models.hubbard(8, U=4.0, mu=2.0), 1.0, dbeta=0.2, every=5, cutoff=1e-12, max_bond=512)
    k = ref["betas"].index(1.0)
    assert rel(res.log_z[-1], ref["log_z"][k]) < 1e-6 and rel(res.energy[-1], ref["energy"][k]) < 1e-6


def test_canonical_heisenberg_sector_and_tdvp_against_exact_diagonalization():
    L = 8
    H = models.heisenberg(L, conserve="Sz")
    h = sparse_hamiltonian(H.opsum, L).toarray()
    ups = np.array([L - bin(i).count("1") for i in range(2**L)])
    idx = np.nonzero(ups == L // 2)[0]
    res = t4a.thermal_state(H, 2.0, dbeta=0.1, sector=0, cutoff=1e-14, max_bond=512, every=10)
    log_z, energy, _ = ed_thermal(h[np.ix_(idx, idx)], res.betas)
    assert rel(res.log_z, log_z) < 1e-6 and rel(res.energy[1:], energy[1:]) < 1e-6
    td = t4a.thermal_state(H, 2.0, dbeta=0.05, method="tdvp", cutoff=1e-14, max_bond=512, every=20)
    log_z, energy, _ = ed_thermal(h, td.betas)
    assert rel(td.log_z, log_z) < 1e-6 and rel(td.energy[1:], energy[1:]) < 1e-5


# ---- thermodynamics as derivatives -------------------------------------------------------
def test_specific_heat_of_the_xx_chain_from_derivatives():
    """C = -beta^2 d<H>/d beta by one forward pass through the cooling, L = 12 to beta = 6 (L = 32 to
    beta = 10: benchmarks/thermal.py --check, docs/benchmarks.md)."""
    L = 12
    th = t4a.thermodynamics(models.xx(L), 6.0, dbeta=0.2, every=10, cutoff=1e-16, max_bond=512)
    log_z, energy, heat = free_fermions(xx_levels(L), th.betas)
    assert th.betas.tolist() == [0.0, 2.0, 4.0, 6.0] and th.differentiate == "energy"
    assert rel(th.log_z, log_z) < 1e-7
    assert rel(th.energy[1:], energy[1:]) < 1e-7
    assert rel(th.specific_heat[1:], heat[1:]) < 1e-6 and th.specific_heat[0] == 0.0


def test_specific_heat_of_the_xx_chain_l32_from_the_tangent_engine():
    """The issue's size, L = 32, to beta = 4 (to beta = 10, 3.5 minutes: benchmarks/thermal.py --check xx):
    the tangent engine on the Sz sites at cutoff 1e-17 (5e-8 measured; 4.8e-6 at cutoff 1e-14)."""
    L = 32
    th = t4a.thermodynamics(models.xx(L, conserve="Sz"), 4.0, dbeta=0.25, every=8, cutoff=1e-17, max_bond=1024)
    log_z, energy, heat = free_fermions(xx_levels(L), th.betas)
    assert th.betas.tolist() == [0.0, 2.0, 4.0]
    assert rel(th.log_z, log_z) < 1e-7 and rel(th.energy[1:], energy[1:]) < 1e-7
    assert rel(th.specific_heat[1:], heat[1:]) < 1e-6


def trotterized_xx(L: int, betas: np.ndarray, dbeta: float) -> tuple[np.ndarray, np.ndarray]:
    """E and C = -beta^2 dE/d beta of the XX chain's purification cooled by Strang's splitting (even
    bonds half, odd bonds, even bonds half; e^{-dbeta h / 2} per step) without truncation: the product
    of the gates is the Gaussian of the product m of the single-particle e^{-w dbeta t_part / 2}, so
    Z = det(1 + m^{2n}) and <H> = Tr[(1 + m^{2n})^{-1} m^n t m^n]; dE/ds of the step scaled by s by a
    complex step (every operation is analytic)."""
    hop = [np.zeros((L, L)), np.zeros((L, L))]
    for b in range(L - 1):
        hop[b % 2][b, b + 1] = hop[b % 2][b + 1, b] = 0.5
    energies, heats = [], []
    for beta in betas:
        n = round(beta / dbeta)

        def energy(s: complex) -> complex:
            m = np.eye(L, dtype=complex)
            for part, w in ((0, 0.5), (1, 1.0), (0, 0.5)):
                m = scipy.linalg.expm(-0.5 * dbeta * s * w * hop[part]) @ m
            mn = np.linalg.matrix_power(m, n)
            return np.trace(np.linalg.solve(np.eye(L) + mn @ mn, mn @ (hop[0] + hop[1]) @ mn))

        e = energy(1.0 + 1e-30j)
        energies.append(e.real)
        heats.append(-beta * e.imag / 1e-30)  # d/ds = beta d/d beta
    return np.array(energies), np.array(heats)


def test_the_derivative_path_differentiates_the_trotterized_evolution_exactly():
    """At a coarse second-order step the specific heat misses the exact one by the splitting error (8e-4),
    but equals the derivative of the Trotterized cooling, computed independently by free fermions, to
    2e-8: the derivative path adds no error of its own (at L = 32 to beta = 10, order 4, dbeta = 0.2 the
    splitting's share of C's error is 4e-10: benchmarks/thermal.py --check trotter)."""
    L = 6
    th = t4a.thermodynamics(models.xx(L), 2.0, dbeta=0.4, order=2, every=5, cutoff=1e-16, max_bond=512)
    energy, heat = trotterized_xx(L, th.betas[1:], 0.4)
    assert rel(th.energy[1:], energy) < 1e-8
    assert rel(th.specific_heat[1:], heat) < 1e-7
    assert rel(th.specific_heat[1:], free_fermions(xx_levels(L), th.betas[1:])[2]) > 1e-4  # the splitting's


@pytest.mark.parametrize("conserve", ["none", "Sz"])
def test_the_tangent_engine_is_the_derivative_of_the_trotterized_cooling(conserve):
    """engine="tangent" (the concrete run with each site's tangent; dense, and block-sparse with Sz) against
    the Trotterized XX purification's C by free fermions (as above), and against tidu's forward mode
    through the traced run at a cutoff that truncates nothing that matters (the two carry the same
    derivative; they differ only by the gauge rotations the tangent engine leaves out)."""
    L = 6
    H = models.xx(L, conserve="Sz")
    th = t4a.thermodynamics(H, 2.0, dbeta=0.4, order=2, every=5, cutoff=1e-16, max_bond=512, conserve=conserve)
    energy, heat = trotterized_xx(L, th.betas[1:], 0.4)
    assert rel(th.energy[1:], energy) < 1e-8
    assert rel(th.specific_heat[1:], heat) < 1e-7
    tr = t4a.thermodynamics(H, 2.0, dbeta=0.4, order=2, every=5, cutoff=1e-20, max_bond=512, engine="traced")
    tg = t4a.thermodynamics(H, 2.0, dbeta=0.4, order=2, every=5, cutoff=1e-20, max_bond=512, conserve=conserve)
    assert rel(tg.specific_heat[1:], tr.specific_heat[1:]) < 1e-8  # kept values down to 1e-10: rounding / s
    assert np.allclose(tg.log_z, tr.log_z, rtol=1e-12)
    with pytest.raises(t4a.InvalidOptionError, match="needs engine='traced'"):
        t4a.thermodynamics(H, 2.0, dbeta=0.4, engine="tangent", differentiate="log_z")
    os = models.xx(4).opsum
    os += (0.2, "Sz", 0, "Sz", 2)  # beyond neighbours: TEBD through swaps, the traced engine's
    with pytest.raises(t4a.InvalidOptionError, match="neighbouring sites only"):
        t4a.thermodynamics(t4a.MPO.from_opsum(os, 4, "spin-1/2"), 1.0, dbeta=0.5, engine="tangent")


def test_specific_heat_of_the_critical_tfim_from_derivatives():
    """g = 1, L = 24 to beta = 4 against Jordan-Wigner."""
    L = 24
    th = t4a.thermodynamics(models.tfim(L, g=1.0), 4.0, dbeta=0.2, every=10, cutoff=1e-14, max_bond=256)
    e, const = tfim_levels(L)
    log_z, energy, heat = free_fermions(e, th.betas, const)
    assert rel(th.log_z, log_z) < 1e-6
    assert rel(th.energy[1:], energy[1:]) < 1e-6
    assert rel(th.specific_heat[1:], heat[1:]) < 1e-6


def test_susceptibility_from_derivatives_in_the_field():
    """chi = beta Var(sum Sz) = beta sum_k f_k (1 - f_k) for the XX chain; the field run conserves Sz
    (a field that splits degenerate singular values of a dense run makes their derivatives blow up)."""
    L = 6
    th = t4a.thermodynamics(models.xx(L, conserve="Sz"), 2.0, dbeta=0.2, every=5, cutoff=1e-16, field="Sz",
                            conserve="Sz")  # fmt: skip
    b = th.betas[1:, None]
    f = 1.0 / (np.exp(b * xx_levels(L)) + 1.0)
    assert rel(th.susceptibility[1:], b[:, 0] * np.sum(f * (1 - f), axis=1)) < 1e-6
    assert np.max(np.abs(th.magnetization)) < 1e-7


def test_the_two_derivative_paths_reverse_mode_and_a_finite_difference_agree():
    """The energy path (C = -beta^2 dE/d beta) and the ln Z path (C = beta^2 ln Z''), forward and
    reverse, and a central difference of the concrete runs' energies."""
    L, beta = 6, 2.0
    H = models.tfim(L, g=1.0)
    th = t4a.thermodynamics(H, beta, dbeta=0.2, every=5, cutoff=1e-16)
    lz = t4a.thermodynamics(H, beta, dbeta=0.2, every=5, cutoff=1e-16, differentiate="log_z")
    ts = t4a.thermal_state(H, beta, dbeta=0.2, every=5, cutoff=1e-16)
    assert np.allclose(th.log_z, ts.log_z, rtol=1e-12) and np.allclose(lz.log_z, ts.log_z, rtol=1e-12)
    assert rel(th.energy[1:], ts.energy[1:]) < 1e-10  # the energy path measures <H> itself
    assert rel(lz.energy[1:], ts.energy[1:]) < 1e-5  # -d ln Z / d beta of the Trotterized Z vs <H>: O(dbeta^4)
    e, const = tfim_levels(L)
    _, energy, heat = free_fermions(e, th.betas, const)
    assert rel(th.specific_heat[1:], heat[1:]) < 5e-6  # the measured energy's splitting error is the smaller
    assert rel(lz.specific_heat[1:], heat[1:]) < 1e-4  # (6e-5 at beta = 2: the Trotterized ln Z's second derivative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reverse mode warns about degenerate singular values
        rv = t4a.thermodynamics(H, beta, dbeta=0.2, every=5, cutoff=1e-16, mode="reverse")
        rz = t4a.thermodynamics(H, beta, dbeta=0.2, every=5, cutoff=1e-16, mode="reverse", differentiate="log_z")
    tr = t4a.thermodynamics(H, beta, dbeta=0.2, every=5, cutoff=1e-16, engine="traced")  # forward, traced
    assert rv.betas.tolist() == rz.betas.tolist() == [beta]
    assert math.isclose(rv.specific_heat[0], tr.specific_heat[-1], rel_tol=1e-8)
    # the tangent engine leaves out the rotations within the kept singular vectors (a gauge), which the
    # traced SVD derivative divides by near-degenerate kept values: 8e-8 apart here, 1e-13 at cutoff 1e-20
    assert math.isclose(th.specific_heat[-1], tr.specific_heat[-1], rel_tol=3e-7)
    assert math.isclose(rz.specific_heat[0], lz.specific_heat[-1], rel_tol=1e-6)  # reverse: degenerate blocks
    # and against a finite difference of the computed energies (smooth in beta)
    h = 0.05
    e = [t4a.thermal_state(H, b, dbeta=0.05, cutoff=1e-16).energy[-1] for b in (beta - h, beta + h)]
    c_fd = -(beta**2) * (e[1] - e[0]) / (2 * h)
    assert math.isclose(th.specific_heat[-1], c_fd, rel_tol=2e-3)  # the difference's O(h^2)


def test_the_sweep_splitting_is_the_product_of_half_steps_to_the_right_and_back():
    """``tebd(splitting="sweep")`` (TeNPy's imaginary-time ordering, benchmarks/thermal.py): one step is
    e^{-dt h_0/2} ... e^{-dt h_{L-2}/2} e^{-dt h_{L-2}/2} ... e^{-dt h_0/2} (acting left to right), here
    against the explicit product on the 2^L vector; 2 (L - 2) gates a step once the ends are merged."""
    import scipy.linalg

    L, dt, n = 5, 0.1, 3
    H = models.heisenberg(L)
    psi = t4a.MPS.random(L, 2, bond_dim=4, seed=2)
    res = t4a.tebd(H, psi, n * dt, dt, imaginary=True, splitting="sweep", max_bond=64, cutoff=1e-16, every=n)
    s = [np.array([[0, 0.5], [0.5, 0]]), np.array([[0, -0.5j], [0.5j, 0]]), np.diag([0.5, -0.5])]
    h2 = np.real(sum(np.kron(a, a) for a in s))
    half = [
        np.kron(np.kron(np.eye(2**b), scipy.linalg.expm(-0.5 * dt * h2)), np.eye(2 ** (L - b - 2)))
        for b in range(L - 1)
    ]
    v = np.asarray(psi.to_dense()).reshape(-1)
    for _ in range(n):
        for g in half + half[::-1]:
            v = g @ v
    w = np.asarray(res.state.to_dense()).reshape(-1)
    assert abs(abs(np.vdot(w, v)) / (np.linalg.norm(v) * np.linalg.norm(w)) - 1.0) < 1e-12
    assert [r.matvecs for r in res.history][1:-1] == [2 * (L - 2)] * (n - 2)


# ---- METTS ---------------------------------------------------------------------------------
def test_metts_energy_of_the_heisenberg_chain_against_exact_diagonalization(capsys):
    """L = 16 at beta = 4 against all 65536 states (the reference file: -6.47957); 8 chains, so the
    standard error comes from 8 chain means. Order 2 at dbeta = 0.25 is biased by about 1e-3, far
    below the standard error."""
    L, beta = 16, 4.0
    ref = REFERENCES["heisenberg_L16"]
    exact = ref["energy"][ref["betas"].index(beta)]
    res = t4a.metts(models.heisenberg(L), beta, 6, chains=8, seed=3, dbeta=0.25, order=2, max_bond=64, warmup=1)
    with capsys.disabled():
        print(f"\nMETTS L={L} beta={beta}: {res.energy:.5f} +- {res.energy_error:.5f} (ED {exact:.5f})")
    assert abs(res.energy - exact) < 3 * res.energy_error
    assert 0.0 < res.energy_error < 0.1
    assert len(res.samples) == 48 and {s.basis for s in res.samples} == {"z", "x"}


def test_metts_in_a_sector_keeps_the_charge():
    H = models.heisenberg(6, conserve="Sz")
    res = t4a.metts(H, 1.0, 3, bases="z", conserve="Sz", sector=1, dbeta=0.5, observables=("Sz",))
    totals = {round(float(np.sum(s.observables["Sz"])), 8) for s in res.samples}
    assert totals == {1.0}


def heisenberg_field_matrix(L: int, h: float) -> np.ndarray:
    """``sum_i S_i . S_{i+1} - h sum_i Sz_i`` on the open chain, from Kronecker products."""
    sz, splus = np.diag([0.5, -0.5]), np.array([[0.0, 1.0], [0.0, 0.0]])

    def at(op: np.ndarray, i: int) -> np.ndarray:
        return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))

    H = -h * sum(at(sz, i) for i in range(L))
    for i in range(L - 1):
        flip = at(splus, i) @ at(splus.T, i + 1)
        H = H + at(sz, i) @ at(sz, i + 1) + 0.5 * (flip + flip.T)
    return H


def thermal_energy(levels: np.ndarray, beta: float) -> float:
    w = np.exp(-beta * (levels - levels.min()))
    return float(np.sum(w * levels) / np.sum(w))


# The METTS checks on the Heisenberg chain L = 4, h = 1, beta = 2 below use 20 chains of 16 samples
# (order 4 at dbeta = 1.0: the same chains as at dbeta = 0.25 to 2e-6) and a fixed bound of 4 standard
# deviations of the estimator, measured from 50 independent chains of 10 samples (seed 11): the chain
# means' spread times sqrt(10) is 0.34 (sector Sz = 1), 0.26 (Sz = 0), 0.29 (bases='zx', grand-
# canonical) per effective sample, so the 320 samples have sigma = 0.019, 0.015, 0.016 (seeds 3 to 7
# spread by 0.026, 0.014, 0.004). The code's own standard error (from 20 chain means, itself known to
# ~16%) must lie within [0.5, 2] sigma.
METTS_CHAINS, METTS_SAMPLES = 20, 16
METTS_SIGMA = {1: 0.019, 0: 0.015, "zx": 0.016}


def test_metts_with_z_collapses_only_is_refused_where_it_cannot_leave_a_sector():
    """z-basis collapses never change the Sz of a chain when H conserves it: the grand-canonical
    average came out -0.852 +- 0.15 against the exact -1.53769 (Heisenberg L = 4, h = 1, beta = 2).
    Such a run is refused, naming the cause and bases='zx'; bases='zx' agrees with the full spectrum;
    bases='z' stays allowed where H conserves nothing in that basis (the tfim's Z Z + X)."""
    L, h, beta = 4, 1.0, 2.0
    exact = thermal_energy(np.linalg.eigvalsh(heisenberg_field_matrix(L, h)), beta)
    assert exact == pytest.approx(-1.53769, abs=1e-5)
    for H in (models.heisenberg(L, h=h), models.heisenberg(L, h=h, conserve="Sz")):
        with pytest.raises(t4a.InvalidOptionError) as info:
            t4a.metts(H, beta, 4, chains=60, seed=3, dbeta=0.25, order=4, bases="z")
        assert isinstance(info.value, ValueError)
        msg = str(info.value)
        assert "bases='z'" in msg and "conserves Sz" in msg and "bases='zx'" in msg and "sector" in msg
    with pytest.raises(t4a.InvalidOptionError, match="conserve and sector go together"):
        t4a.metts(models.heisenberg(L, h=h), beta, 1, bases="z", conserve="Sz")
    with pytest.raises(t4a.InvalidOptionError, match="conserves Sz, "):  # N fixed by the sector, Sz left free
        t4a.metts(models.hubbard(2, U=4.0), beta, 1, bases="z", conserve="N", sector=2)
    zx = t4a.metts(models.heisenberg(L, h=h), beta, METTS_SAMPLES, chains=METTS_CHAINS, seed=3, dbeta=1.0,
                   order=4, bases="zx")  # fmt: skip
    # 4 sigma = 0.064 (see METTS_SIGMA): far from the z-only -0.852 and from the sector averages (0.19 away)
    sigma = METTS_SIGMA["zx"]
    assert abs(zx.energy - exact) < 4 * sigma, (zx.energy, exact)
    assert 0.5 * sigma < zx.energy_error < 2 * sigma, zx.energy_error
    assert len(t4a.metts(models.tfim(L), beta, 1, bases="z", dbeta=0.5).samples) == 1


@pytest.mark.parametrize("sz", [1, 0])
def test_canonical_metts_of_one_sector_against_the_sector_block(sz):
    """bases='z' with conserve='Sz' and a sector: the canonical average in that sector, against the
    levels of the explicit matrix's block of that Sz (Heisenberg L = 4, h = 1, beta = 2: -1.72367 for
    Sz = 1, -1.34731 for Sz = 0, both about 0.19 from the grand-canonical -1.53769)."""
    L, h, beta = 4, 1.0, 2.0
    Hd = heisenberg_field_matrix(L, h)
    up = np.array([L - bin(k).count("1") for k in range(2**L)])  # basis bit 0 is up (Sz = +1/2)
    block = np.nonzero(up - (L - up) == 2 * sz)[0]
    exact = thermal_energy(np.linalg.eigvalsh(Hd[np.ix_(block, block)]), beta)
    res = t4a.metts(models.heisenberg(L, h=h), beta, METTS_SAMPLES, chains=METTS_CHAINS, seed=3, dbeta=1.0,
                    order=4, bases="z", conserve="Sz", sector=sz, observables=("Sz",))  # fmt: skip
    assert {round(float(np.sum(s.observables["Sz"])), 8) for s in res.samples} == {float(sz)}
    assert all(sum(0.5 - p for p in s.collapsed) == sz for s in res.samples)  # the start and every collapse
    # 4 sigma (0.076 and 0.06, see METTS_SIGMA) is below half the 0.19 to the grand-canonical value
    sigma = METTS_SIGMA[sz]
    assert abs(res.energy - exact) < 4 * sigma, (res.energy, exact)
    assert 0.5 * sigma < res.energy_error < 2 * sigma, res.energy_error


def test_metts_on_two_dask_workers_is_bit_identical_to_serial():
    dd = pytest.importorskip("distributed")
    H = models.heisenberg(8)
    kw = dict(chains=2, seed=7, dbeta=0.25, max_bond=32, warmup=1, observables=("Sz",))
    serial = t4a.metts(H, 1.0, 3, **kw)
    with dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with dd.Client(cluster) as client:
            parallel = t4a.metts(H, 1.0, 3, client=client, **kw)
    assert [s.energy for s in serial.samples] == [s.energy for s in parallel.samples]
    assert [s.collapsed for s in serial.samples] == [s.collapsed for s in parallel.samples]
    assert all(
        np.array_equal(a.observables["Sz"], b.observables["Sz"]) for a, b in zip(serial.samples, parallel.samples)
    )


def test_a_purified_space_leaves_the_guess_of_a_states_space_alone():
    """Registering the doubled space ``spin-1/2+ancilla`` (dimension 4) does not make the
    measurements' guess of an electron chain's space ambiguous: the guess looks only among the
    built-in spaces; the doubled one is named with ``local=``."""
    from tensor4all import measurements

    purified_space("spin-1/2")
    psi = t4a.MPS.random(4, 4, bond_dim=2, seed=1)
    assert np.all(np.isfinite(measurements.spin_correlation(psi, 0)))  # read as an electron chain
