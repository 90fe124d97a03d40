"""Free fermions on cylinders: DMRG against the single-particle problem.

The reference is computed here from the hopping matrix of the lattice's bonds alone: the
ground state of ``N`` free fermions fills the ``N`` lowest levels ``eps_k`` of ``h``
(``E = sum_{k<N} eps_k``) and its one-particle density matrix is
``<c_i^dagger c_j> = sum_{k<N} v_ik v_jk`` (``h = V diag(eps) V^T``, real). Each cylinder is
chosen so that the Fermi level is not degenerate (``eps_{N-1} < eps_N``), which makes that
ground state unique.

The spinless 6x4 cylinder at half filling needs bond dimension 128 for 1e-8 (the largest
discarded weight of its exact Schmidt spectra, from the eigenvalues of the restricted
correlation matrix, is 3e-6 at 64 and below 1e-14 at 128). The spinful (Hubbard, U = 0)
state is the product of an up and a down copy, whose Schmidt spectrum is the product of
two such spectra: on the 6x4 cylinder that needs about 2000 states for 1e-8 (discarded
weight 4e-10 at 2048; measured here: an energy error of 1e-2 at 256 on the 4x4 cylinder),
beyond a unit test. So the spinful checks are the ``"electron"`` sites on the 4x3 cylinder
(12 sites, strings across the wrap of width 3), where bond dimension 64 holds the state
exactly, and the 6x4 cylinder with the modes in spin-orbital order (all up orbitals, then
all down ones), where the state is a product of the two copies and 128 states suffice.

The one-particle density matrix is compared to 1e-7: an energy error ``dE`` leaves a state
error of order ``sqrt(dE / gap)``, so its entries converge more slowly than the energy.
"""

from __future__ import annotations

import numpy as np

import tensor4all as t4a
from tensor4all import lattices, models


def hopping_matrix(lat: lattices.Lattice, t: float) -> np.ndarray:
    h = np.zeros((lat.sites, lat.sites))
    for i, j in lat.nearest:
        h[i, j] = h[j, i] = -t
    return h


def filled(h: np.ndarray, N: int) -> tuple[float, np.ndarray]:
    """The energy and the one-particle density matrix of the ``N`` lowest levels."""
    eps, v = np.linalg.eigh(h)
    assert eps[N] - eps[N - 1] > 1e-3, "degenerate Fermi level: the ground state is not unique"
    return float(eps[:N].sum()), v[:, :N] @ v[:, :N].T


def test_spinless_6x4_cylinder_at_half_filling():
    lat = lattices.square(6, 4, yperiodic=True)
    t = 1.0
    e0, opdm = filled(hopping_matrix(lat, t), 12)
    H = models.spinless_fermions(lat, t=t, conserve="N")
    res = t4a.dmrg(H, max_bond=[32, 64, 160], sweeps=8, cutoff=1e-14, tol=1e-13, seed=0)
    assert res.sector == {"N": 12.0}
    assert abs(res.energy - e0) < 1e-8, res.energy - e0
    C = np.asarray(res.state.correlation_matrix("Cdag", "C", local="fermion"))
    np.testing.assert_allclose(C, opdm, atol=1e-7)
    # a few entries through the pairwise correlation too (strings across the cylinder's wrap)
    for i, j in ((0, 3), (3, 0), (5, 22), (17, 2)):
        assert abs(float(np.asarray(res.state.correlation("Cdag", "C", i, j, local="fermion"))) - opdm[i, j]) < 1e-7


def test_hubbard_at_U_zero_on_a_4x3_cylinder():
    lat = lattices.square(4, 3, yperiodic=True)
    t = 1.0
    e_spin, opdm = filled(hopping_matrix(lat, t), 6)
    H = models.hubbard(lat, t=t, U=0.0, conserve="N,Sz")
    # eight sweeps: the local eigensolver stops once its vector is as good as the truncation
    # allows (TeNPy's rule, algorithms.dmrg_schedules.state_tolerance), so the one-particle density matrix reaches 1e-7
    # a sweep or two later than with tighter local solves (6 sweeps: 3e-7)
    res = t4a.dmrg(H, max_bond=64, sweeps=8, cutoff=1e-14, tol=1e-13, seed=0)
    assert res.sector == {"N": 12.0, "Sz": 0.0}
    assert abs(res.energy - 2 * e_spin) < 1e-8, res.energy - 2 * e_spin
    for spin in ("up", "dn"):
        C = np.asarray(res.state.correlation_matrix(f"Cdag{spin}", f"C{spin}", local="electron"))
        np.testing.assert_allclose(C, opdm, atol=1e-7)
    # no spin-flip coherence in a state of definite Sz
    assert np.abs(np.asarray(res.state.correlation_matrix("Cdagup", "Cdn", local="electron"))).max() < 1e-12


def test_hubbard_at_U_zero_on_the_6x4_cylinder_in_spin_orbital_order():
    """The spinful 6x4 cylinder at half filling, at modest bond dimension: the Hubbard model at
    U = 0 written on 48 spin-orbital ``"fermion"`` modes, the up orbitals of the 24 lattice
    sites first and the down orbitals after (``c_{n,up}`` -> mode ``n``, ``c_{n,dn}`` -> mode
    ``24 + n``). The hopping conserves spin, so no term couples the two blocks and the ground
    state is the product of the two copies' states: every cut's Schmidt rank is at most that of
    one copy (128 for 1e-8), where in the electron-site order the two spectra multiply (about
    2000 states). With only N conserved, the sector N = 24 holds 12 particles of each spin in
    its unique ground state, because the Fermi level is not degenerate (``filled`` checks)."""
    lat = lattices.square(6, 4, yperiodic=True)
    t = 1.0
    e_spin, opdm = filled(hopping_matrix(lat, t), 12)
    os = t4a.OpSum()
    for shift in (0, lat.sites):
        for i, j in lat.nearest:
            os += (-t, "Cdag", i + shift, "C", j + shift)
            os += (-t, "Cdag", j + shift, "C", i + shift)
    H = t4a.MPO.from_opsum(os, 2 * lat.sites, "fermion", conserve="N")
    res = t4a.dmrg(H, max_bond=[32, 64, 160], sweeps=8, cutoff=1e-14, tol=1e-13, seed=0)
    assert res.sector == {"N": 24.0}
    assert abs(res.energy - 2 * e_spin) < 1e-8, res.energy - 2 * e_spin
    assert max(res.state.bond_dims) <= 160
    C = np.asarray(res.state.correlation_matrix("Cdag", "C", local="fermion"))
    want = np.zeros((2 * lat.sites, 2 * lat.sites))
    want[: lat.sites, : lat.sites] = want[lat.sites :, lat.sites :] = opdm  # no spin-flip coherence
    np.testing.assert_allclose(C, want, atol=1e-7)
