"""DMRG in a charge sector (``conserve=``) against exact diagonalization per sector.

The exact answers are computed here from explicit matrices (Kronecker products of spin or
Pauli matrices, restricted to the basis states of one charge), never from the code.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp_sparse

import tensor4all as t4a
from tensor4all import models

X = np.array([[0.0, 1.0], [1.0, 0.0]])
Z = np.diag([1.0, -1.0])


def _spin(s: str):
    if s == "1/2":
        sp = np.array([[0.0, 1.0], [0.0, 0.0]])
        sz = np.diag([0.5, -0.5])
    else:
        sp = np.sqrt(2.0) * np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
        sz = np.diag([1.0, 0.0, -1.0])
    return sp, sp.T, sz


def _site_op(o: np.ndarray, i: int, L: int):
    """``1 x ... x o x ... x 1`` (site 0 most significant, np.kron order), sparse."""
    d = o.shape[0]
    return sp_sparse.kron(
        sp_sparse.kron(sp_sparse.identity(d**i), sp_sparse.csr_matrix(o)),
        sp_sparse.identity(d ** (L - i - 1)),
        format="csr",
    )


def _xxz_dense(L: int, J: float, Jz: float, h: float, spin: str):
    """``sum J/2 (S+S- + S-S+) + Jz Sz Sz - h sum Sz`` (the README's convention) and the total
    Sz of each basis state."""
    sp, sm, sz = _spin(spin)
    H = 0.0
    for i in range(L - 1):
        H = H + 0.5 * J * (_site_op(sp, i, L) @ _site_op(sm, i + 1, L) + _site_op(sm, i, L) @ _site_op(sp, i + 1, L))
        H = H + Jz * _site_op(sz, i, L) @ _site_op(sz, i + 1, L)
    for i in range(L):
        H = H - h * _site_op(sz, i, L)
    total = sum(_site_op(sz, i, L) for i in range(L)).diagonal()
    return sp_sparse.csr_matrix(H), total


def _ground_in_sector(H, charge: np.ndarray, value: float) -> float:
    idx = np.flatnonzero(np.isclose(charge, value))
    return float(np.linalg.eigvalsh(H[idx][:, idx].toarray())[0])


@pytest.mark.parametrize("sz", [0, 1, 2])
def test_xxz_with_a_field_equals_exact_diagonalization_per_sector(sz):
    L, J, Jz, h = 10, 1.0, 0.7, 0.3
    H, total = _xxz_dense(L, J, Jz, h, "1/2")
    exact = _ground_in_sector(H, total, sz)
    res = t4a.dmrg(models.xxz(L, J=J, Jz=Jz, h=h), conserve="Sz", sector=sz, max_bond=64, cutoff=0.0, tol=1e-12)
    assert abs(res.energy - exact) < 1e-10
    assert res.sector == {"Sz": float(sz)}
    # the state is in the sector: <Sz_total> from the dense state, computed here
    psi = np.asarray(res.state.to_dense().numpy()).reshape(-1)
    assert abs(np.vdot(psi, total * psi).real - sz) < 1e-9
    assert abs(np.vdot(psi, H @ psi).real - exact) < 1e-10


@pytest.mark.parametrize("sz", [0, 1])
def test_spin_one_heisenberg_equals_exact_diagonalization(sz):
    L = 8
    H, total = _xxz_dense(L, 1.0, 1.0, 0.0, "1")
    exact = _ground_in_sector(H, total, sz)
    res = t4a.dmrg(models.heisenberg(L, spin="1"), conserve="Sz", sector=sz, max_bond=81, cutoff=0.0, tol=1e-12)
    assert abs(res.energy - exact) < 1e-10
    assert res.sector == {"Sz": float(sz)}


def _tfim_z_dense(L: int, J: float, g: float) -> tuple[np.ndarray, np.ndarray]:
    """``-J sum X X - g sum Z`` and the parity (number of Z = -1 states mod 2) per basis state."""
    H = 0.0
    for i in range(L - 1):
        H = H - J * _site_op(X, i, L) @ _site_op(X, i + 1, L)
    for i in range(L):
        H = H - g * _site_op(Z, i, L)
    down = sum((1 - _site_op(Z, i, L).diagonal()) / 2 for i in range(L))
    return sp_sparse.csr_matrix(H), down % 2


@pytest.mark.parametrize("parity", [0, 1])
@pytest.mark.parametrize("g", [0.5, 1.5])
def test_tfim_in_both_parity_sectors(parity, g):
    L = 10
    H, par = _tfim_z_dense(L, 1.0, g)
    exact = _ground_in_sector(H, par, parity)
    res = t4a.dmrg(
        models.tfim(L, J=1.0, g=g, conserve="parity"),
        conserve="parity",
        sector=parity,
        max_bond=64,
        cutoff=0.0,
        tol=1e-12,
    )
    assert abs(res.energy - exact) < 1e-10
    assert res.sector == {"parity": float(parity)}


def test_the_z_basis_tfim_has_the_spectrum_of_the_x_basis_one():
    L = 6
    a = np.linalg.eigvalsh(np.asarray(models.tfim(L, g=0.8).to_dense().numpy()))
    b = np.linalg.eigvalsh(np.asarray(models.tfim(L, g=0.8, conserve="parity").to_dense().numpy()))
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_equals_the_dense_dmrg_at_L32_chi64():
    H = models.heisenberg(32)
    dense = t4a.dmrg(H, max_bond=64, cutoff=1e-12, tol=1e-10)
    sym = t4a.dmrg(H, conserve="Sz", max_bond=64, cutoff=1e-12, tol=1e-10)
    # both converge to the same variational optimum at chi = 64 (truncation error ~1e-10):
    # the energies agree to the size of their variances, not to rounding
    bound = 10 * max(dense.variance, sym.variance, 1e-10)
    assert abs(sym.energy - dense.energy) < bound
    assert sym.sector == {"Sz": 0.0} and dense.sector == {"Sz": 0.0}


def test_a_start_state_sets_the_sector_and_auto_finds_the_symmetry():
    L = 8
    H, total = _xxz_dense(L, 1.0, 1.0, 0.0, "1/2")
    psi0 = t4a.MPS.product_state([0, 0, 0, 1, 0, 1, 0, 1])  # 2Sz = 2: Sz = 1
    res = t4a.dmrg(models.heisenberg(L), psi0, conserve="auto", max_bond=32, cutoff=0.0, tol=1e-12)
    assert res.sector == {"Sz": 1.0}
    assert abs(res.energy - _ground_in_sector(H, total, 1)) < 1e-10


@pytest.mark.parametrize(
    "call,exc,fragment",
    [
        (lambda: t4a.dmrg(models.tfim(6), conserve="Sz"), t4a.InvalidOptionError, "does not declare"),
        (
            lambda: t4a.dmrg(
                models.heisenberg(6) if False else t4a.MPO.from_opsum(models.heisenberg_opsum(6) + (0.3, "Sx", 2), 6),
                conserve="Sz",
            ),
            t4a.NonConservingError,
            "does not conserve",
        ),
        (
            lambda: t4a.dmrg(models.heisenberg(6), conserve="Sz", sector=0.5),
            t4a.SymmetryViolationError,
            "has no states",
        ),
        (
            lambda: t4a.dmrg(models.heisenberg(6), conserve="Sz", sector=0.3),
            t4a.InvalidOptionError,
            "not a multiple of 1/2",
        ),
        (  # was taken mod 2, as the even parity
            lambda: t4a.dmrg(models.tfim(6, conserve="parity"), sector=2),
            t4a.InvalidOptionError,
            "one of 0, 1",
        ),
        (
            lambda: t4a.dmrg(models.heisenberg(6), conserve="Sz", sector="up"),
            t4a.Tensor4allTypeError,
            "sector must be a number",
        ),
        (lambda: t4a.dmrg(models.heisenberg(6), conserve="U1"), t4a.InvalidOptionError, "conserve must be one of"),
        (
            lambda: t4a.dmrg(models.heisenberg(6), t4a.MPS.random(6, bond_dim=2), conserve="Sz"),
            t4a.InvalidOptionError,
            "product of basis states",
        ),
        (
            lambda: t4a.dmrg(models.heisenberg(6), t4a.MPS.product_state([0] * 6), conserve="Sz", sector=0),
            t4a.InvalidOptionError,
            "psi0 is in the sector Sz = 3",
        ),
    ],
)
def test_bad_sector_requests_are_typed(call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)


@pytest.mark.parametrize("sz", [0, 1, 2])
def test_hellmann_feynman_gradient_in_a_sector(sz):
    """H = ... - h sum Sz: in the sector of total Sz the energy changes by dE/dh = -Sz exactly,
    and the J derivative matches a central difference of energies of the same sector."""
    import tenferro as tf
    import tidu

    L = 8
    grad_h = tidu.grad(
        lambda h: (
            t4a.dmrg(models.xxz(L, Jz=0.7, h=h), conserve="Sz", sector=sz, max_bond=32, cutoff=0.0, tol=1e-12).energy
        )
    )(tf.asarray(0.3))
    assert abs(float(grad_h) + sz) < 1e-8
    grad_j = tidu.grad(
        lambda j: (
            t4a.dmrg(
                models.xxz(L, J=j, Jz=0.7, h=0.3), conserve="Sz", sector=sz, max_bond=32, cutoff=0.0, tol=1e-12
            ).energy
        )
    )(tf.asarray(1.0))
    eps = 1e-4
    exact = [_ground_in_sector(*_xxz_dense(L, j, 0.7, 0.3, "1/2"), sz) for j in (1 - eps, 1 + eps)]
    assert abs(float(grad_j) - (exact[1] - exact[0]) / (2 * eps)) < 1e-6


@pytest.mark.parametrize("sz", [0, 1])
def test_one_site_conserved_runs_start_from_a_random_state_of_the_sector(sz):
    """``two_site=False`` with ``conserve``: a random symmetric start of bond dimension
    ``max_bond[0]`` in the sector, one-site sweeps with the expansion; the exact sector minimum."""
    L, J, Jz, h = 10, 1.0, 0.7, 0.3
    H, total = _xxz_dense(L, J, Jz, h, "1/2")
    res = t4a.dmrg(
        models.xxz(L, J=J, Jz=Jz, h=h),
        conserve="Sz",
        sector=sz,
        two_site=False,
        max_bond=32,
        cutoff=0.0,
        tol=1e-12,
        sweeps=20,
    )
    assert res.sector == {"Sz": float(sz)} and res.state.symmetric
    assert abs(res.energy - _ground_in_sector(H, total, sz)) < 1e-10
    assert res.history[-1].blocks is not None
