"""Edge cases a review found: the Krylov exponential's stopping rule: it lacked Saad's ``|tau|`` and
measured against the start vector, so TDVP depended on the units of ``H`` and one large
imaginary-time step returned an excited state; excited states of a Hamiltonian diagonal in the
product basis. Oracles: ``scipy.linalg.expm`` of the explicit matrix, the diagonal energies."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all.linalg.krylov import expm_krylov

SX = np.array([[0.0, 1.0], [1.0, 0.0]]) / 2
SY = np.array([[0.0, -1j], [1j, 0.0]]) / 2
SZ = np.diag([0.5, -0.5])
# the two-site Heisenberg chain with a field h = 0.3 J, in units of J
H2 = sum(np.kron(s, s) for s in (SX, SY, SZ)) - 0.3 * (np.kron(SZ, np.eye(2)) + np.kron(np.eye(2), SZ))


class _Matrix:
    def __init__(self, m: np.ndarray):
        self.m, self.dtype, self.shape = m, m.dtype, m.shape

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.m @ x


@pytest.mark.parametrize("J", [1.0, 1e-4, 1e-8])
def test_tdvp_does_not_depend_on_the_units_of_H(J):
    """J t = 1 in steps J dt = 0.1: at J = 1e-8 the state was 1.3e-3 off."""
    psi = t4a.MPS.random(2, 2, bond_dim=2, seed=2)
    v0 = np.asarray(psi.to_dense()).reshape(-1)
    res = t4a.tdvp(t4a.models.heisenberg(2, J=J, h=0.3 * J), psi, 1.0 / J, 0.1 / J)
    exact = scipy.linalg.expm(-1j * H2) @ v0
    assert np.linalg.norm(np.asarray(res.state.to_dense()).reshape(-1) - exact) < 1e-10


def test_a_large_imaginary_time_step_reaches_the_ground_state():
    """One step dt = 100 returned <H> = +0.52 (an excited direction) where the ground state is -0.75."""
    psi = t4a.MPS.random(2, 2, bond_dim=2, seed=2)
    res = t4a.tdvp(t4a.models.heisenberg(2, h=0.3), psi, 100.0, 100.0, imaginary=True)
    v = np.asarray(res.state.to_dense()).reshape(-1)
    v = v / np.linalg.norm(v)
    assert np.real(np.vdot(v, H2 @ v)) == pytest.approx(np.linalg.eigvalsh(H2)[0], abs=1e-9)


@pytest.mark.parametrize("scale", [1.0, 1e-4, 1e-8])
@pytest.mark.parametrize("tau", [-0.1, -0.1j, -2.0])  # |tau| ||a|| up to ~35
def test_expm_krylov_meets_its_tolerance_whatever_the_scale(scale, tau):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 40))
    a = a + a.T
    w = rng.standard_normal(40)
    res = expm_krylov(_Matrix(scale * a), w, tau / scale, tol=1e-10)
    exact = scipy.linalg.expm(tau * a) @ w
    assert np.linalg.norm(res.vector - exact) <= 1e-8 * np.linalg.norm(exact)


def test_expm_krylov_non_hermitian_phi1():
    """The Arnoldi branch's estimate (phi_1 from the augmented matrix) meets the tolerance too."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((30, 30)) / 6
    w = rng.standard_normal(30)
    for tau in (-0.5, -0.5j, -20.0):
        res = expm_krylov(_Matrix(a), w, tau, tol=1e-10, hermitian=False)
        exact = scipy.linalg.expm(tau * a) @ w
        assert np.linalg.norm(res.vector - exact) <= 1e-8 * np.linalg.norm(exact)


def _diagonal_levels(L: int, n_up: int, energy) -> list[float]:
    """The sorted diagonal energies of the basis states with ``n_up`` ones (H diagonal)."""
    return sorted(energy(c) for c in itertools.product([0, 1], repeat=L) if sum(c) == n_up)


def test_excited_states_of_a_diagonal_hamiltonian_in_a_sector():
    """With t = 0 (H diagonal in the product basis) a sector search from the product start could
    not move its charges past the earlier states: levels [0, 0, 1, 0] for [0, 0, 0, 1]; a sector
    of exactly 3 states raised NoOrthogonalStateError."""
    exact = _diagonal_levels(4, 2, lambda c: sum(c[i] * c[i + 1] for i in range(3)))
    res = t4a.excited_states(t4a.models.spinless_fermions(4, t=0.0, V=1.0), 4)
    assert res.energies == pytest.approx(exact[:4], abs=1e-9)
    # Jz Sz Sz on 3 sites, Sz = 1/2 (two up): uud 0, udu -1/2, duu 0
    exact = _diagonal_levels(3, 2, lambda c: sum((c[i] - 0.5) * (c[i + 1] - 0.5) for i in range(2)))
    res = t4a.excited_states(t4a.models.heisenberg(3, J=0.0, Jz=1.0, conserve="Sz"), 3)
    assert res.energies == pytest.approx(exact, abs=1e-9)


def test_thermal_state_of_one_site_names_itself_and_the_remedy():
    """The error named tebd, which the call did not name, and not method='tdvp', which works."""
    with pytest.raises(t4a.InvalidOptionError, match=r"thermal_state: .*method='tdvp'"):
        t4a.thermal_state(t4a.models.heisenberg(1), 1.0)
