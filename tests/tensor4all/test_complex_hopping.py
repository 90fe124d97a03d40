"""A complex hopping ``t`` (a Peierls phase) in the fermion models: the Hermitian partner of
``-t c^dag_i c_j`` is ``-conj(t) c^dag_j c_i``. Both carried ``t``, so the MPO was not Hermitian
and ``dmrg`` refused it with a hint to add the Hermitian conjugate. On a ring a flux is physical:
the ground energy is checked against the explicit Jordan-Wigner Hamiltonian built here."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import lattices, models

C = np.array([[0.0, 1.0], [0.0, 0.0]])  # |0><1| on the fermion basis (empty, occupied)
PARITY = np.diag([1.0, -1.0])


def _c(i: int, L: int) -> np.ndarray:
    out = np.eye(1)
    for k in range(L):
        out = np.kron(out, PARITY if k < i else C if k == i else np.eye(2))
    return out


def ring_matrix(L: int, t: complex) -> np.ndarray:
    """``-sum_i (t c^dag_i c_{i+1} + h.c.)`` around the ring, every bond along ``+x`` (the wrap from
    ``L - 1`` to ``0``): the uniform flux ``L phase``."""
    H = np.zeros((2**L, 2**L), dtype=complex)
    for i, j in [(i, (i + 1) % L) for i in range(L)]:
        hop = -t * _c(i, L).T @ _c(j, L)
        H += hop + hop.conj().T
    return H


@pytest.mark.parametrize("phase", [0.3, 1.1])
def test_a_flux_through_a_ring_against_exact_diagonalization(phase):
    L, t = 4, np.exp(1j * phase)
    H = models.spinless_fermions(lattices.chain(L, periodic=True), t=t)
    M = np.asarray(H.to_dense())
    exact = ring_matrix(L, t)
    assert np.abs(M - M.conj().T).max() < 1e-14
    assert np.abs(M - exact).max() < 1e-14
    res = t4a.dmrg(H, max_bond=16, sweeps=6, seed=1)
    assert abs(res.energy - np.linalg.eigvalsh(exact)[0]) < 1e-10


def test_the_hubbard_and_tj_mpos_are_hermitian_with_a_complex_t():
    for H in (models.hubbard(3, t=0.8 * np.exp(0.5j), U=2.0, conserve=None), models.tj(3, t=np.exp(0.4j), J=0.3)):
        M = np.asarray(H.to_dense())
        assert np.abs(M - M.conj().T).max() < 1e-14
