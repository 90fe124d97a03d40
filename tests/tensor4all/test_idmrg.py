"""iDMRG (tensor4all.infinite.idmrg), dense and on Sz sectors, against closed forms computed here
(the Bethe-ansatz energy of the Heisenberg chain, the critical TFIM's free fermions), the tabulated
spin-1 energy (White and Huse), each other, VUMPS from its state, and its typed errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate

import tensor4all as t4a
from tensor4all import infinite as inf
from tensor4all.infinite.idmrg import conserved_charge
from tensor4all.infinite.idmrg_windows import cell_bond_charges

BETHE = 0.25 - np.log(2.0)  # Hulthen (1938): the spin-1/2 Heisenberg chain, per site
SPIN1 = -1.401484038971  # White and Huse, PRB 48, 3844 (1993)


def tfim_critical_energy() -> float:
    """``-(1/pi) int_0^pi sqrt(2 + 2 cos k) dk = -4/pi`` (H = -sum ZZ - sum X, free fermions),
    integrated here rather than taken from the closed form."""
    val, _ = scipy.integrate.quad(lambda k: np.sqrt(2 + 2 * np.cos(k)), 0, np.pi, epsabs=1e-14)
    return -val / np.pi


@pytest.fixture(scope="module")
def spin_one():
    """The spin-1 chain (a one-site cell, run on two) at bond dimension 24, dense and on Sz
    sectors. 24 keeps whole multiplets of its doubly degenerate entanglement spectrum: at 16 or
    20 the cut splits a pair and the iDMRG fixed point is not unique (the runs wander)."""
    H = inf.infinite_model("heisenberg", spin="1")
    return {c: inf.idmrg(H, max_bond=24, conserve=c, tol=1e-12) for c in ("none", "Sz")}


def test_spin_one_heisenberg_energy(spin_one):
    """At bond dimension 24 the variational error is 2.6e-6 (the tabulated value is good to 1e-12)."""
    res = spin_one["Sz"]
    assert res.converged and res.conserved == "Sz" and res.state.cell == 2
    assert 0 < res.energy - SPIN1 < 5e-6
    assert abs(-inf.string_order(res.state, "Sz", "Sz", "exp(i pi Sz)") - 0.374325) < 1e-3
    # the sector of Sz = 0 per cell, to the state's last form change (the polar factor of one site)
    assert abs(inf.expect(res.state, "Sz")) < 1e-8
    assert abs(res.records[-1].energy - res.energy) < 1e-8  # the growth estimate meets the state's own


def test_dense_and_conserved_agree(spin_one):
    dense, sz = spin_one["none"], spin_one["Sz"]
    assert dense.conserved is None and dense.converged
    assert abs(dense.energy - sz.energy) < 1e-10
    np.testing.assert_allclose(dense.state.schmidt_values(0), sz.state.schmidt_values(0), atol=1e-8)


def test_four_site_cell_matches_one_site_cell(spin_one):
    """A cell of four sites holds the same state: the energy agrees with the one-site model's (run
    on two) at the same bond dimension, to the difference of two iDMRG fixed points (1.4e-9), and
    so do the Schmidt values of its bonds 0 and 2, to first order in that difference (5e-5)."""
    res = inf.idmrg(inf.infinite_model("heisenberg", spin="1", cell=4), max_bond=24, conserve="Sz", tol=1e-12)
    assert res.state.cell == 4
    assert abs(res.energy - spin_one["Sz"].energy) < 1e-8
    np.testing.assert_allclose(res.state.schmidt_values(0), res.state.schmidt_values(2), atol=2e-4)
    np.testing.assert_allclose(res.state.schmidt_values(0), spin_one["Sz"].state.schmidt_values(0), atol=2e-4)


def test_heisenberg_energy_against_bethe_ansatz_and_vumps_from_it():
    """The critical spin-1/2 chain in its two-site cell at bond dimension 16: the variational
    error is about 6e-5 (1e-7 needs bond dimension 256, benchmarks/infinite.py). VUMPS started
    from iDMRG's state reaches the variational minimum at the same bond dimension, at or below
    iDMRG's energy (whose fixed point is that of a finite window)."""
    H = inf.infinite_model("heisenberg", cell=2)
    res = inf.idmrg(H, max_bond=16, tol=1e-9)
    assert res.converged and res.conserved == "Sz"  # conserve="auto"
    assert 0 < res.energy - BETHE < 1e-4
    v = inf.vumps(H, psi0=res.state, max_bond=16, tol=1e-7, max_iter=200)
    assert v.energy <= res.energy + 1e-10
    assert 0 < v.energy - BETHE < 1e-4


def test_tfim_critical_energy():
    """The critical TFIM, dense (the field flips Z, so nothing diagonal is conserved):
    variational, within 1e-6 at bond dimension 16."""
    H = inf.infinite_model("tfim", g=1.0)
    res = inf.idmrg(H, max_bond=16, tol=1e-12)
    assert res.conserved is None
    exact = tfim_critical_energy()
    assert abs(exact + 4 / np.pi) < 1e-13
    assert 0 < res.energy - exact < 1e-6


def test_z2_parity_in_the_rotated_ising_chain():
    """H = -sum X X - g sum Z conserves prod Z (the parity of the Z basis, Z2): the conserved and
    dense runs agree, and match the free-fermion energy at g = 1.5 (1e-10: bond dimension 12
    leaves 2e-12)."""
    g = 1.5
    H = inf.InfiniteMPO.from_opsum(t4a.OpSum([(-1.0, "X", 0, "X", 1), (-g, "Z", 0)]), 1, "pauli")
    val, _ = scipy.integrate.quad(lambda k: np.sqrt(1 + g * g + 2 * g * np.cos(k)), 0, np.pi, epsabs=1e-14)
    runs = {c: inf.idmrg(H, max_bond=12, conserve=c, tol=1e-12) for c in ("auto", "none")}
    assert runs["auto"].conserved == "parity" and runs["none"].conserved is None
    assert abs(runs["auto"].energy - runs["none"].energy) < 1e-10
    assert 0 < runs["auto"].energy + val / np.pi < 1e-10


def test_mpo_bond_charges_of_a_cell():
    """The automaton of the XXZ cell: ready and done carry 0, the S+ and S- states +-2 (2Sz)."""
    H = inf.infinite_model("heisenberg", cell=2)
    wq = cell_bond_charges(H.tensors, [1, -1], 0)
    assert wq is not None and len(wq) == 3
    assert sorted(wq[0].tolist()) == [-2, 0, 0, 0, 2]
    assert cell_bond_charges(inf.infinite_model("tfim", g=1.0).tensors, [0, 1], 2) is None


def test_records_and_callback():
    seen = []
    res = inf.idmrg(inf.infinite_model("heisenberg", spin="1"), max_bond=8, tol=1e-9, callback=seen.append)
    assert seen == res.records and [r.sweep for r in seen] == list(range(1, len(seen) + 1))
    assert seen[-1].max_bond == 8 and seen[-1].delta < 1e-9


def test_auto_runs_dense_where_no_charge_fits():
    """``conserve="auto"`` falls back to dense where the cell cannot hold Sz = 0 (three spins 1/2)
    or the start is not a product state of charge 0 per cell; an explicit ``"Sz"`` is an error
    there (below)."""
    three = inf.idmrg(inf.infinite_model("heisenberg", cell=3), max_bond=8, sweeps=3)
    assert three.conserved is None and three.state.cell == 3
    start = inf.iMPS.random("spin-1/2", cell=2, max_bond=4, seed=1)
    assert inf.idmrg(inf.infinite_model("heisenberg", cell=2), start, max_bond=8, sweeps=3).conserved is None


def xx_in_a_field(h: float) -> tuple[float, float]:
    """The XX chain ``sum (Sx Sx + Sy Sy) - h sum Sz`` per site by free fermions (hopping 1/2, the field a
    chemical potential): ``e = (1/2pi) int_{cos k < h} (cos k - h) dk + h/2`` and ``<Sz> = (pi - 2 arccos
    h) / (2 pi)``, integrated here."""
    kf = np.arccos(h)
    val, _ = scipy.integrate.quad(lambda k: np.cos(k) - h, kf, 2 * np.pi - kf, epsabs=1e-14)
    return val / (2 * np.pi) + h / 2, (np.pi - 2 * kf) / (2 * np.pi)


def test_auto_runs_dense_in_a_field():
    """A field breaks the spin flip, and the ground state is magnetized: charge 0 per cell cannot hold
    it (it gave e = -0.31826 for h = 0.3, 1.4e-2 above the exact value). ``auto`` conserves Sz only
    where the flip leaves H unchanged; here it runs dense and finds the magnetized state."""
    e, m = xx_in_a_field(0.3)
    res = inf.idmrg(inf.infinite_model("xx", h=0.3), max_bond=16, tol=1e-8)
    assert res.conserved is None and res.converged
    assert 0 < res.energy - e < 1e-4
    # D = 16 of this critical chain biases <Sz> by 6.6e-6 (measured); 1e-4 is 15x that, and a 1%
    # error in <Sz> (1e-3) or in the field (d<Sz>/dh = 1/(pi sqrt(1 - h^2)) = 0.33: 1e-3) fails
    assert abs(inf.expect(res.state, "Sz") - m) < 1e-4
    zero = inf.idmrg(inf.infinite_model("xx", h=0.3), max_bond=16, tol=1e-8, conserve="Sz")  # asked for
    assert zero.conserved == "Sz" and zero.energy - e > 1e-2


@pytest.mark.parametrize(
    "model, kw, charge",
    [
        ("heisenberg", {}, "Sz"),
        ("heisenberg", {"spin": "1"}, "Sz"),
        ("xxz", {"Jz": 2.0}, "Sz"),
        ("j1j2", {"J2": 0.3}, "Sz"),
        ("heisenberg", {"h": 0.1}, None),
        ("xx", {"h": 0.3}, None),
        ("tfim", {"g": 1.5}, None),
    ],
)
def test_what_auto_conserves(model, kw, charge):
    H = inf.infinite_model(model, **kw)
    assert conserved_charge(H) == charge


def test_auto_conserves_parity_which_reverses_to_itself():
    """A Z2 charge is its own reverse: the Ising chain written in the parity basis conserves it."""
    H = inf.InfiniteMPO.from_opsum(t4a.OpSum([(-1.0, "X", 0, "X", 1), (-1.5, "Z", 0)]), 1, "pauli")
    assert conserved_charge(H) == "parity"


def test_the_neel_phase_breaks_the_symmetry_of_its_start():
    """The XXZ chain at Delta = 2 (gapped, Neel order): the first windows see the environments of the
    Neel start (as TeNPy's iDMRG starts from its initial state's), so the run orders as the start does.
    From bare edges the first two-site ground state was the cat of both Neel states, which iDMRG kept
    (|lambda_2| = 1, a correlation length of 5e7, the energy stuck 6e-6 above at D = 16). Exact energy:
    des Cloizeaux and Gaudin's, ``Delta/4 - sinh(phi) (1/2 + 2 sum_n 1/(e^(2 n phi) + 1))``, ``cosh phi
    = Delta``, summed here; the staggered magnetization Baxter's (J. Stat. Phys. 9, 145 (1973))."""
    delta = 2.0
    phi = np.arccosh(delta)
    exact = delta / 4 - np.sinh(phi) * (0.5 + 2 * sum(1 / (np.exp(2 * n * phi) + 1) for n in range(1, 100)))
    q = np.exp(-phi)  # Baxter's staggered magnetization, (1/2) prod_n ((1 - q^2n) / (1 + q^2n))^2
    staggered = 0.5 * np.prod([((1 - q ** (2 * n)) / (1 + q ** (2 * n))) ** 2 for n in range(1, 60)])
    for conserve in ("none", "Sz"):
        res = inf.idmrg(inf.infinite_model("xxz", Jz=delta, cell=2), max_bond=16, tol=1e-8, conserve=conserve)
        assert res.converged
        assert 0 < res.energy - exact < 2e-7
        assert abs(inf.transfer_spectrum(res.state, 2)[1]) < 0.9  # injective: one Neel state
        assert 1 < inf.correlation_length(res.state) < 10
        m0, m1 = inf.expect(res.state, "Sz", 0), inf.expect(res.state, "Sz", 1)
        assert abs(abs(m0) - staggered) < 1e-4 and abs(m0 + m1) < 1e-8


# ---- bad input ---------------------------------------------------------------------------------
def test_a_cell_that_cannot_hold_charge_zero():
    with pytest.raises(t4a.SymmetryViolationError, match="cannot have the charge 0"):
        inf.idmrg(inf.infinite_model("heisenberg", cell=3), max_bond=8, conserve="Sz")


def test_a_start_state_of_nonzero_charge_per_cell():
    with pytest.raises(t4a.SymmetryViolationError, match="charge 2 per cell"):
        inf.idmrg(inf.infinite_model("heisenberg", cell=2), t4a.iMPS.product_state([0, 0]), conserve="Sz")


def test_a_state_whose_cell_does_not_fit():
    with pytest.raises(t4a.DimensionMismatchError, match="cell"):
        inf.idmrg(inf.infinite_model("heisenberg", cell=2), t4a.iMPS.product_state([0, 1, 0]))


def test_a_charge_the_hamiltonian_breaks():
    with pytest.raises(t4a.InvalidOptionError, match="does not declare"):
        inf.idmrg(inf.infinite_model("tfim", g=1.0), conserve="Sz")
    with pytest.raises(t4a.InvalidOptionError, match="conserve must be one of"):
        inf.idmrg(inf.infinite_model("tfim", g=1.0), conserve="N")
