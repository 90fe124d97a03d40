"""VUMPS on Sz sectors (tensor4all.infinite.vumps with ``conserve``) against closed forms computed
here (the Bethe-ansatz energies of the Heisenberg and XXZ chains), the tabulated spin-1 energy
(White and Huse), the dense VUMPS at the same bond dimension, and its typed errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate

import tensor4all as t4a
from tensor4all import infinite as inf
from tensor4all.sites.charges import NonConservingError

BETHE = 0.25 - np.log(2.0)  # Hulthen (1938): the spin-1/2 Heisenberg chain, per site
SPIN1 = -1.401484038971  # White and Huse, PRB 48, 3844 (1993)


def xxz_energy(jz: float) -> float:
    """The Bethe-ansatz energy per site of ``sum Sx Sx + Sy Sy + jz Sz Sz`` (``jz = cos g``, ``0 < g <
    pi``; Yang and Yang 1966): ``jz / 4 - (sin g / 2) int sinh((pi - g) x) / (sinh(pi x) cosh(g x)) dx``,
    integrated here."""
    g = np.arccos(jz)

    def f(x: float) -> float:
        return np.sinh((np.pi - g) * x) / (np.sinh(np.pi * x) * np.cosh(g * x)) if x else (np.pi - g) / np.pi

    val, _ = scipy.integrate.quad(f, -60.0, 60.0, epsabs=1e-14, limit=400)
    return jz / 4 - np.sin(g) / 2 * val


def test_xxz_closed_form_limits():
    """The integral gives the XX chain's -1/pi (free fermions) at jz = 0."""
    assert abs(xxz_energy(0.0) + 1 / np.pi) < 1e-12


@pytest.fixture(scope="module")
def heisenberg():
    H = inf.infinite_model("heisenberg")
    return {D: inf.vumps(H, max_bond=D, conserve="Sz", tol=1e-7) for D in (16, 32)}


def test_heisenberg_against_bethe_ansatz(heisenberg):
    """A one-site cell of spin 1/2 cannot hold Sz = 0: the run has a cell of two. At bond dimension
    32 the variational error is 7.2e-6 (the dense VUMPS's as well); it falls with the bond."""
    res = heisenberg[32]
    assert res.converged and res.conserved == "Sz" and res.state.cell == 2 and res.state.max_bond == 32
    assert 0 < res.energy - BETHE < 1e-5
    assert res.energy < heisenberg[16].energy
    # Sz = 0 per cell (each site's may not vanish: at finite bond dimension a Neel-like state wins)
    assert abs(inf.expect(res.state, "Sz", 0) + inf.expect(res.state, "Sz", 1)) < 1e-8
    assert abs(res.history[-1].energy - res.energy) < 1e-9  # the environments' energy meets the state's


def test_spin_one_against_white_and_huse():
    """The spin-1 chain on a one-site cell (all Sz = 0 holds charge 0) at bond dimension 96:
    3e-10 from the tabulated value."""
    res = inf.vumps(inf.infinite_model("heisenberg", spin="1"), max_bond=96, conserve="Sz", tol=1e-8)
    assert res.converged and res.state.cell == 1
    assert 0 < res.energy - SPIN1 < 1e-9


def test_spin_one_dense_and_conserved_agree():
    """At bond dimension 24 (whole multiplets of the doubly degenerate spectrum) the dense and the
    conserved runs reach the same fixed point."""
    H = inf.infinite_model("heisenberg", spin="1")
    dense = inf.vumps(H, max_bond=24, tol=1e-8, seed=1)
    sz = inf.vumps(H, max_bond=24, conserve="Sz", tol=1e-8)
    assert dense.conserved is None and sz.conserved == "Sz" and dense.converged and sz.converged
    assert abs(dense.energy - sz.energy) < 1e-10
    np.testing.assert_allclose(dense.state.schmidt_values(0), sz.state.schmidt_values(0), atol=1e-6)


def test_xxz_against_bethe_ansatz():
    """The critical XXZ chain at jz = 1/2 (exactly -3/8) at bond dimension 16."""
    exact = xxz_energy(0.5)
    res = inf.vumps(inf.infinite_model("xxz", Jz=0.5), max_bond=16, conserve="auto", tol=1e-8)
    assert res.conserved == "Sz"
    assert 0 < res.energy - exact < 1e-4


def test_z2_parity_in_the_rotated_ising_chain():
    """H = -sum X X - g sum Z conserves prod Z (Z2, modulus 2): at g = 1.5 the conserved run (a
    one-site cell) meets the free-fermion energy (bond dimension 12 leaves 4e-14) and the dense run."""
    g = 1.5
    H = inf.InfiniteMPO.from_opsum(t4a.OpSum([(-1.0, "X", 0, "X", 1), (-g, "Z", 0)]), 1, "pauli")
    val, _ = scipy.integrate.quad(lambda k: np.sqrt(1 + g * g + 2 * g * np.cos(k)), 0, np.pi, epsabs=1e-14)
    runs = {c: inf.vumps(H, max_bond=12, conserve=c, tol=1e-9, seed=1) for c in ("auto", "none")}
    assert runs["auto"].conserved == "parity" and runs["auto"].state.cell == 1
    assert abs(runs["auto"].energy + val / np.pi) < 1e-10
    assert abs(runs["auto"].energy - runs["none"].energy) < 1e-12


def test_bad_conserve():
    H = inf.infinite_model("heisenberg")
    with pytest.raises(t4a.InvalidOptionError, match="conserve must be one of"):
        inf.vumps(H, conserve="N")
    with pytest.raises(t4a.InvalidOptionError, match="psi0=None"):
        inf.vumps(H, psi0=t4a.iMPS.product_state([0, 1]), conserve="Sz")
    with pytest.raises(t4a.InvalidOptionError, match="does not declare"):
        inf.vumps(inf.infinite_model("tfim", g=1.0), conserve="Sz")
    with pytest.raises(t4a.SymmetryViolationError, match="cannot have the charge 0"):
        inf.vumps(inf.infinite_model("heisenberg", cell=3), conserve="Sz")
    os_ = t4a.OpSum()
    os_ += 1.0, "Sz", 0, "Sz", 1
    os_ += 0.5, "Sx", 0
    with pytest.raises(NonConservingError, match="does not conserve Sz"):
        inf.vumps(inf.InfiniteMPO.from_opsum(os_, 2), conserve="Sz")
    # auto falls back to dense where nothing is conserved
    assert inf.vumps(inf.infinite_model("tfim", g=1.5), max_bond=4, conserve="auto", seed=1).conserved is None


def test_parity_run_in_the_ordered_phase_keeps_the_parity():
    """The Ising chain ``-sum X X - g sum Z`` at g = 0.9 (ordered) on parity sectors: the run converges
    to the even cat of the two ordered states (two fixed points of its transfer matrix). The dense
    state is made from the run's own blocks; re-gauging it by a fixed-point search picked a mixture
    of both that broke the parity (<X> = -0.39). Exact even observables by Hellmann-Feynman on
    Pfeuty's ``e(J, g) = -(1/pi) int_0^pi sqrt(J^2 + g^2 + 2 J g cos k) dk``, integrated here."""
    g = 0.9
    root = lambda k: np.sqrt(1 + g * g + 2 * g * np.cos(k))  # noqa: E731
    z, _ = scipy.integrate.quad(lambda k: (g + np.cos(k)) / root(k), 0, np.pi, epsabs=1e-14)
    xx, _ = scipy.integrate.quad(lambda k: (1 + g * np.cos(k)) / root(k), 0, np.pi, epsabs=1e-14)
    H = inf.InfiniteMPO.from_opsum(t4a.OpSum([(-1.0, "X", 0, "X", 1), (-g, "Z", 0)]), 1, "pauli")
    res = t4a.vumps(H, max_bond=8, conserve="parity", tol=1e-9)
    assert res.conserved == "parity" and res.converged
    assert abs(inf.expect(res.state, "X")) < 1e-10
    assert abs(inf.expect(res.state, "Z") - z / np.pi) < 1e-4
    assert abs(inf.correlation(res.state, "X", "X", 1)[0] - xx / np.pi) < 1e-4
