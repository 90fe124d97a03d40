"""The free-fermion oracle of ``free_fermions.py`` against exact diagonalization of the
explicit ``2^L`` spin Hamiltonian (Kronecker products of spin matrices, no tensor4all code),
and its MPS measurement of the density matrix against the same exact states."""

from __future__ import annotations

import functools
import os
import sys

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a

sys.path.insert(0, os.path.dirname(__file__))
from free_fermions import (
    density_matrix,
    density_matrix_mps,
    magnetization,
    magnetization_mps,
    neel,
    staggered_magnetization,
)

SX = np.array([[0.0, 0.5], [0.5, 0.0]])
SY = np.array([[0.0, -0.5j], [0.5j, 0.0]])
SZ = np.diag([0.5, -0.5])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])
SM = SP.T


def _op(ops: dict[int, np.ndarray], L: int) -> np.ndarray:
    """``prod_i ops[i]`` as a ``2^L`` matrix (site 0 most significant, np.kron order)."""
    m = np.ones((1, 1))
    for i in range(L):
        m = np.kron(m, ops.get(i, np.eye(2)))
    return m


def _xx_hamiltonian(L: int, J: float) -> np.ndarray:
    return sum(J * (_op({i: SX, i + 1: SX}, L) + _op({i: SY, i + 1: SY}, L)) for i in range(L - 1))


def _product_vector(states) -> np.ndarray:
    v = np.ones(1)
    for s in states:
        v = np.kron(v, np.eye(2)[s])
    return v


def _ed_state(states, t: float, J: float) -> np.ndarray:
    L = len(states)
    return scipy.linalg.expm(-1j * t * _xx_hamiltonian(L, J)) @ _product_vector(states)


@functools.lru_cache(maxsize=None)
def _hop(i: int, j: int, L: int) -> np.ndarray:
    """``c_i^dagger c_j`` through the Jordan-Wigner strings, from the definition
    ``c_j = (prod_{k<j} (-2 Sz_k)) S-_j`` (products of matrices, no shortcut)."""

    def string(j):
        return _op({k: -2 * SZ for k in range(j)}, L)

    cdag_i = (string(i) @ _op({i: SM}, L)).conj().T
    c_j = string(j) @ _op({j: SM}, L)
    return cdag_i @ c_j


STATES = [neel(7), [1, 0, 0, 1, 0, 1, 1, 0], [0, 0, 0, 1, 1, 1]]


@pytest.mark.parametrize("states", STATES, ids=["neel7", "mixed8", "domain6"])
@pytest.mark.parametrize("J", [1.0, 0.7])
def test_oracle_against_exact_diagonalization(states, J):
    L = len(states)
    times = np.array([0.0, 0.4, 1.7])
    C = density_matrix(states, times, J)
    sz = magnetization(states, times, J)
    for k, t in enumerate(times):
        psi = _ed_state(states, t, J)
        ed_sz = [np.vdot(psi, _op({i: SZ}, L) @ psi).real for i in range(L)]
        np.testing.assert_allclose(sz[k], ed_sz, atol=1e-12)
        ed_C = np.array([[np.vdot(psi, _hop(i, j, L) @ psi) for j in range(L)] for i in range(L)])
        np.testing.assert_allclose(C[k], ed_C, atol=1e-12)
        # the string form of the docstring, for both orders of i and j
        for i, j in [(0, L - 1), (L - 1, 0), (1, 4), (4, 1)]:
            lo, hi = min(i, j), max(i, j)
            op = _op({i: SP, j: SM, **{k: -2 * SZ for k in range(lo + 1, hi)}}, L)
            assert abs(np.vdot(psi, op @ psi) - C[k, i, j]) < 1e-12
    stag = staggered_magnetization(states, times, J)
    np.testing.assert_allclose(stag, sz @ ((-1.0) ** np.arange(L)) / L, atol=1e-14)
    if states == neel(L):
        assert stag[0] == pytest.approx(0.5)


def test_oracle_time_direction():
    """``C(t)`` is not ``C(-t)`` (the hopping phases change sign): the oracle picks exp(-iHt)."""
    states = [0, 0, 1, 1, 1]
    C = density_matrix(states, 0.8)
    psi = _ed_state(states, 0.8, 1.0)
    assert abs(C[1, 2] - np.vdot(psi, _hop(1, 2, 5) @ psi)) < 1e-12
    assert abs(C[1, 2].imag) > 1e-2 and abs(density_matrix(states, -0.8)[1, 2] - C[1, 2].conj()) < 1e-12


def test_density_matrix_of_an_mps_against_exact():
    """The MPS of an exact evolved state (``MPS.from_dense``) gives the oracle's C."""
    states = [1, 0, 0, 1, 0, 1, 1]
    psi = t4a.MPS.from_dense(_ed_state(states, 1.3, 1.0), len(states))
    np.testing.assert_allclose(density_matrix_mps(psi), density_matrix(states, 1.3), atol=1e-12)
    np.testing.assert_allclose(magnetization_mps(psi), magnetization(states, 1.3), atol=1e-12)


def test_density_matrix_of_random_mps_against_exact():
    """Any state (a random complex MPS, not normalized): the contraction against the ED operators."""
    L = 6
    psi = t4a.MPS.random(L, bond_dim=4, seed=3, dtype="complex128")
    tensors = [2.0 * np.asarray(t) for t in psi.tensors]
    psi = t4a.MPS(tensors)
    v = np.asarray(psi.to_dense())
    nrm = np.vdot(v, v).real
    ed = np.array([[np.vdot(v, _hop(i, j, L) @ v) / nrm for j in range(L)] for i in range(L)])
    np.testing.assert_allclose(density_matrix_mps(psi), ed, atol=1e-12)


def test_density_matrix_of_symmetric_product_state():
    states = neel(6)
    for psi in (t4a.MPS.product_state(states, conserve="Sz"), t4a.MPS.product_state(states)):
        np.testing.assert_allclose(density_matrix_mps(psi), density_matrix(states, 0.0), atol=1e-14)
