"""tensor4all.measurements against exact state vectors, computed here independently of the library.

The reference is the Fock space of the fermionic modes with explicit Jordan-Wigner matrices
(``fock_hubbard.annihilators``: modes ordered site by site, up before down), into which the
MPS's dense vector is mapped by the site basis (electron ``|0>, |up>, |dn>, |up dn>`` -> the
two mode bits ``(0, 2, 1, 3)``; t-J ``|0>, |up>, |dn>`` -> ``(0, 2, 1)``; spinless fermions: the
basis is the Fock basis). Every expectation value is then ``<w|O|w>`` with ``O`` a product of
those matrices: ``S+_i = c^dag_{i up} c_{i dn}``, ``n_i = sum_s c^dag_{i s} c_{i s}`` and so on.
Spin-1/2 chains use Kronecker products of the spin matrices. Ground states are checked against
exact diagonalization of ``fock_hubbard.exact_hubbard``, the Fock Hamiltonian in the MPS basis.
"""

from __future__ import annotations

import itertools
import os
import sys

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import MPS, measurements, models

sys.path.insert(0, os.path.dirname(__file__))  # the reference beside this file (no package __init__)
from fock_hubbard import SITE_TO_FOCK, annihilators, exact_hubbard, mpo_order, particle_number  # noqa: E402

TJ_TO_FOCK = (0, 2, 1)  # |0>, |up>, |dn> -> (n_up n_dn) bits


# ---- the reference -------------------------------------------------------------------------------
def fock_state(psi: MPS, to_fock: tuple[int, ...]) -> np.ndarray:
    """The normalized state on the Fock space of ``2L`` modes (two per site)."""
    L, d = psi.L, len(to_fock)
    v = np.asarray(psi.to_dense()).reshape(-1)
    w = np.zeros(4**L, dtype=v.dtype)
    for b, digits in enumerate(itertools.product(range(d), repeat=L)):
        w[sum(to_fock[s] * 4 ** (L - 1 - i) for i, s in enumerate(digits))] = v[b]
    return w / np.linalg.norm(w)


class Spinful:
    """Expectation values of the spinful fermion operators in the Fock state ``w``."""

    def __init__(self, w: np.ndarray, L: int):
        self.w, self.L = w, L
        c = annihilators(2 * L)
        self.c = {(i, s): c[2 * i + k] for i in range(L) for k, s in enumerate(("up", "dn"))}

    def ev(self, op: np.ndarray) -> complex:
        return complex(np.vdot(self.w, op @ self.w))

    def n(self, i: int) -> np.ndarray:
        return sum(self.c[i, s].T @ self.c[i, s] for s in ("up", "dn"))

    def sz(self, i: int) -> np.ndarray:
        return 0.5 * (self.c[i, "up"].T @ self.c[i, "up"] - self.c[i, "dn"].T @ self.c[i, "dn"])

    def splus(self, i: int) -> np.ndarray:
        return self.c[i, "up"].T @ self.c[i, "dn"]

    def spin_dot(self, i: int, j: int) -> float:
        sp_i, sp_j = self.splus(i), self.splus(j)
        op = self.sz(i) @ self.sz(j) + 0.5 * (sp_i @ sp_j.T + sp_i.T @ sp_j)
        return self.ev(op).real

    def density(self) -> np.ndarray:
        return np.array([self.ev(self.n(i)).real for i in range(self.L)])

    def double(self) -> np.ndarray:
        return np.array(
            [
                self.ev(self.c[i, "up"].T @ self.c[i, "up"] @ self.c[i, "dn"].T @ self.c[i, "dn"]).real
                for i in range(self.L)
            ]
        )

    def spin_matrix(self) -> np.ndarray:
        return np.array([[self.spin_dot(i, j) for j in range(self.L)] for i in range(self.L)])

    def charge_matrix(self) -> np.ndarray:
        n = self.density()
        return np.array(
            [[self.ev(self.n(i) @ self.n(j)).real - n[i] * n[j] for j in range(self.L)] for i in range(self.L)]
        )

    def opdm(self, spins: tuple[str, ...]) -> np.ndarray:
        return np.array(
            [[sum(self.ev(self.c[i, s].T @ self.c[j, s]) for s in spins) for j in range(self.L)] for i in range(self.L)]
        )


# ---- electrons ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def random_electrons():
    psi = MPS.random(4, 4, bond_dim=8, seed=3)
    return psi, Spinful(fock_state(psi, SITE_TO_FOCK), 4)


def test_electron_profiles_of_a_random_state(random_electrons):
    psi, ref = random_electrons
    np.testing.assert_allclose(measurements.density(psi), ref.density(), atol=1e-12)
    np.testing.assert_allclose(measurements.density(psi, local="electron"), ref.density(), atol=1e-12)
    np.testing.assert_allclose(measurements.double_occupancy(psi), ref.double(), atol=1e-12)
    assert measurements.density(psi).shape == (4,) and measurements.density(psi).dtype == np.float64


def test_electron_correlations_of_a_random_state(random_electrons):
    psi, ref = random_electrons
    spin, charge = ref.spin_matrix(), ref.charge_matrix()
    np.testing.assert_allclose(measurements.spin_correlation(psi), spin, atol=1e-12)
    np.testing.assert_allclose(measurements.spin_correlation(psi, 2), spin[2], atol=1e-12)
    np.testing.assert_allclose(
        measurements.spin_correlation(psi, pairs=[(0, 1), (3, 1), (2, 2)]),
        [spin[0, 1], spin[3, 1], spin[2, 2]],
        atol=1e-12,
    )
    np.testing.assert_allclose(measurements.charge_correlation(psi), charge, atol=1e-12)
    np.testing.assert_allclose(measurements.charge_correlation(psi, 1), charge[1], atol=1e-12)
    np.testing.assert_allclose(measurements.charge_correlation(psi, pairs=[(0, 3)]), [charge[0, 3]], atol=1e-12)
    np.testing.assert_allclose(measurements.charge_correlation(psi, density=ref.density()), charge, atol=1e-12)
    # the diagonal of <S.S> is 3/4 <n - 2 n_up n_dn>: the local moment
    np.testing.assert_allclose(np.diag(spin), 0.75 * (ref.density() - 2 * ref.double()), atol=1e-12)


def test_electron_one_particle_density_matrix(random_electrons):
    psi, ref = random_electrons
    up = measurements.one_particle_density_matrix(psi, spin="up")
    dn = measurements.one_particle_density_matrix(psi, spin="down")
    both = measurements.one_particle_density_matrix(psi)
    np.testing.assert_allclose(up, ref.opdm(("up",)).real, atol=1e-12)
    np.testing.assert_allclose(dn, ref.opdm(("dn",)).real, atol=1e-12)
    np.testing.assert_allclose(both, up + dn, atol=1e-14)
    assert both.dtype == np.float64
    assert np.trace(both) == pytest.approx(ref.density().sum(), abs=1e-12)


def test_complex_state_one_particle_density_matrix_is_hermitian_and_exact():
    psi = MPS.random(3, 4, bond_dim=6, seed=5, dtype=np.complex128)
    ref = Spinful(fock_state(psi, SITE_TO_FOCK), 3)
    rho = measurements.one_particle_density_matrix(psi, spin="up")
    assert rho.dtype == np.complex128 and np.abs(rho.imag).max() > 1e-3
    np.testing.assert_allclose(rho, ref.opdm(("up",)), atol=1e-12)
    np.testing.assert_allclose(measurements.spin_correlation(psi), ref.spin_matrix(), atol=1e-12)


# ---- t-J and spinless fermions, spins ------------------------------------------------------------------
def test_tj_state_against_its_fock_embedding():
    psi = MPS.random(4, 3, bond_dim=6, seed=7)
    ref = Spinful(fock_state(psi, TJ_TO_FOCK), 4)
    np.testing.assert_allclose(measurements.density(psi), ref.density(), atol=1e-12)  # d = 3: t-J by default
    np.testing.assert_allclose(measurements.spin_correlation(psi, local="tj"), ref.spin_matrix(), atol=1e-12)
    np.testing.assert_allclose(measurements.charge_correlation(psi), ref.charge_matrix(), atol=1e-12)
    np.testing.assert_allclose(
        measurements.one_particle_density_matrix(psi, local="tj"), ref.opdm(("up", "dn")).real, atol=1e-12
    )
    np.testing.assert_allclose(ref.double(), 0, atol=1e-15)


def test_spinless_fermions_against_the_fock_space():
    L = 5
    psi = MPS.random(L, 2, bond_dim=4, seed=11)
    w = np.asarray(psi.to_dense()).reshape(-1)
    w = w / np.linalg.norm(w)  # the spinless basis is the Fock basis
    c = annihilators(L)
    n = [x.T @ x for x in c]
    dens = np.array([w @ n[i] @ w for i in range(L)])
    conn = np.array([[w @ n[i] @ n[j] @ w - dens[i] * dens[j] for j in range(L)] for i in range(L)])
    rho = np.array([[w @ c[i].T @ c[j] @ w for j in range(L)] for i in range(L)])
    np.testing.assert_allclose(measurements.density(psi, local="fermion"), dens, atol=1e-12)
    np.testing.assert_allclose(measurements.density(psi), dens, atol=1e-12)  # d = 2 with N: fermion
    np.testing.assert_allclose(measurements.charge_correlation(psi), conn, atol=1e-12)
    np.testing.assert_allclose(measurements.one_particle_density_matrix(psi), rho, atol=1e-12)
    # the strings matter: without them (hard-core bosons) the far elements differ
    a = np.array([[0.0, 1.0], [0.0, 0.0]])
    boson = np.kron(np.kron(a.T, np.eye(2**3)), a)
    assert abs(w @ boson @ w - rho[0, 4]) > 1e-3


def test_spin_half_chain_against_kronecker_products():
    L = 4
    psi = MPS.random(L, 2, bond_dim=4, seed=2)
    w = np.asarray(psi.to_dense()).reshape(-1)
    w = w / np.linalg.norm(w)
    sx, sy, sz = np.array([[0, 0.5], [0.5, 0]]), np.array([[0, -0.5j], [0.5j, 0]]), np.diag([0.5, -0.5])

    def at(m, i):
        return np.kron(np.kron(np.eye(2**i), m), np.eye(2 ** (L - i - 1)))

    exact = np.array(
        [[sum((w.conj() @ at(s, i) @ at(s, j) @ w).real for s in (sx, sy, sz)) for j in range(L)] for i in range(L)]
    )
    np.testing.assert_allclose(measurements.spin_correlation(psi), exact, atol=1e-12)
    np.testing.assert_allclose(np.diag(exact), 0.75, atol=1e-12)


# ---- a symmetric ground state: blocks and sectors ----------------------------------------------------
@pytest.fixture(scope="module", params=["N", "N,Sz"])
def hubbard_ground(request):
    """The half-filled Hubbard chain conserving N, or N and Sz (sector keys ``N`` or ``(N, Sz)``)."""
    L, t, U = 4, 1.0, 4.0
    sector = L if request.param == "N" else (L, 0.0)
    res = t4a.dmrg(
        models.hubbard(L, t=t, U=U, conserve=request.param), max_bond=64, sector=sector, sweeps=8, seed=1, cutoff=1e-14
    )
    H, n = exact_hubbard(L, t, U, 0.0), particle_number(L)
    sel = np.flatnonzero(n == L)
    e, vecs = np.linalg.eigh(H[np.ix_(sel, sel)])
    assert e[1] - e[0] > 0.1  # a unique ground state (Lieb: the singlet)
    v = np.zeros(4**L)
    v[sel] = vecs[:, 0]  # in the MPS basis
    assert abs(res.energy - e[0]) < 1e-10
    return res.state, v, L, request.param


def test_ground_state_measurements_on_the_blocks(hubbard_ground):
    """Energy error 1e-10 allows state errors ~1e-5, so the observables are checked to 1e-6."""
    psi, v, L, _ = hubbard_ground
    assert psi.symmetric
    w = np.zeros(4**L)
    w[mpo_order(L)] = v  # mpo_order(L)[b]: the Fock index of MPS index b
    ref = Spinful(w, L)
    np.testing.assert_allclose(measurements.density(psi), np.ones(L), atol=1e-6)  # particle-hole symmetry
    np.testing.assert_allclose(measurements.density(psi), ref.density(), atol=1e-6)
    np.testing.assert_allclose(measurements.double_occupancy(psi), ref.double(), atol=1e-6)
    np.testing.assert_allclose(measurements.spin_correlation(psi), ref.spin_matrix(), atol=1e-6)
    np.testing.assert_allclose(measurements.charge_correlation(psi), ref.charge_matrix(), atol=1e-6)
    np.testing.assert_allclose(
        measurements.one_particle_density_matrix(psi, spin="up"), ref.opdm(("up",)).real, atol=1e-6
    )
    assert measurements.spin_correlation(psi).sum() == pytest.approx(0.0, abs=1e-8)  # a singlet: S_tot^2 = 0


def test_entanglement_per_sector_against_the_exact_blocks(hubbard_ground):
    psi, v, L, conserve = hubbard_ground
    N_site, sz2_site = (0, 1, 1, 2), (0, 1, -1, 0)
    with_sz = conserve == "N,Sz"  # sector keys (N, Sz), else N
    for bond in range(L - 1):
        left = 4 ** (bond + 1)
        m = v.reshape(left, -1)
        digits = list(itertools.product(range(4), repeat=bond + 1))
        n_left = np.array([sum(N_site[s] for s in dg) for dg in digits])
        sz_left = np.array([sum(sz2_site[s] for s in dg) for dg in digits]) if with_sz else np.zeros(left, int)
        got = measurements.entanglement_per_sector(psi, bond)
        exact = {}
        for q, q2 in set(zip(n_left.tolist(), sz_left.tolist())):
            s = np.linalg.svd(m[(n_left == q) & (sz_left == q2)], compute_uv=False)
            p = s[s > 1e-12] ** 2
            if p.sum() > 1e-14:
                exact[(float(q), q2 / 2) if with_sz else float(q)] = (p.sum(), float(-np.sum(p * np.log(p))))
        assert {q for q, x in got.items() if x.probability > 1e-12} == set(exact)
        for q, (p, s) in exact.items():
            assert got[q].probability == pytest.approx(p, abs=1e-6)  # DMRG's state: see the test above
            assert got[q].entropy == pytest.approx(s, abs=1e-5)
        assert sum(x.probability for x in got.values()) == pytest.approx(1.0, abs=1e-12)
        assert sum(x.entropy for x in got.values()) == pytest.approx(psi.entanglement_entropy(bond), abs=1e-10)
        record = max(got.values(), key=lambda x: x.probability).as_dict()
        assert set(record) == {"probability", "entropy", "schmidt_values"}
        assert all(isinstance(x, float) for x in record["schmidt_values"])


# ---- bad input ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,exc,fragment",
    [
        (lambda p: measurements.density("psi"), t4a.Tensor4allTypeError, "expected an MPS, got str"),
        (lambda p: measurements.density(p, local="spin-1/2"), t4a.InvalidOptionError, "has no Ntot/N"),
        (lambda p: measurements.double_occupancy(p, local="tj"), t4a.InvalidOptionError, "has no Nupdn"),
        (lambda p: measurements.density(p, local="fermion"), t4a.DimensionMismatchError, "has dimension 2"),
        (lambda p: measurements.density(p, local="nope"), t4a.UnknownLocalSpaceError, "unknown local space"),
        (lambda p: measurements.spin_correlation(p, 4), t4a.SiteOutOfRangeError, "site i 4 is outside 0..3"),
        (lambda p: measurements.spin_correlation(p, 1.0), t4a.Tensor4allTypeError, "must be an integer site"),
        (lambda p: measurements.charge_correlation(p, 0, pairs=[(0, 1)]), t4a.InvalidOptionError, "not both"),
        (lambda p: measurements.charge_correlation(p, pairs=[(0, 1, 2)]), t4a.Tensor4allTypeError, "pair of sites"),
        (lambda p: measurements.charge_correlation(p, pairs=[(0, -1)]), t4a.SiteOutOfRangeError, "outside 0..3"),
        (
            lambda p: measurements.charge_correlation(p, density=[1.0, 1.0]),
            t4a.InvalidOptionError,
            "density must be the 4 finite values",
        ),
        (
            lambda p: measurements.one_particle_density_matrix(p, spin="left"),
            t4a.InvalidOptionError,
            "'up', 'dn' or None",
        ),
        (
            lambda p: measurements.one_particle_density_matrix(MPS.random(3, 2), spin="up"),
            t4a.InvalidOptionError,
            "spinless",
        ),
        (
            lambda p: measurements.density(MPS.random(3, 5)),
            t4a.InvalidOptionError,
            "no built-in local space of dimension 5",
        ),
        (lambda p: measurements.entanglement_per_sector(p, 1), t4a.InvalidOptionError, "dense and has no charge"),
        (lambda p: measurements.entanglement_per_sector(p, 3), t4a.SiteOutOfRangeError, "bond 3 is outside 0..2"),
    ],
)
def test_bad_inputs_raise_typed_errors(random_electrons, call, exc, fragment):
    with pytest.raises(exc) as info:
        call(random_electrons[0])
    assert fragment in str(info.value)
    assert isinstance(info.value, t4a.Tensor4allError)
