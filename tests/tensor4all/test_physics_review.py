"""Review of the finite-chain physics (2026-12-02) against exact diagonalization built here from
explicit Kronecker products: ``conserve="auto"`` of a parity-conserving TFIM."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest

import tensor4all as t4a

X = np.array([[0.0, 1.0], [1.0, 0.0]])
Z = np.diag([1.0, -1.0])


def _tfim_spectra(L: int, g: float) -> tuple[float, float, float]:
    """The lowest energy of ``-sum X_i X_{i+1} - g sum Z_i`` (the parity-conserving TFIM, open
    chain) overall, in the even and in the odd sector of ``prod Z``."""

    def op(o: np.ndarray, i: int) -> np.ndarray:
        return reduce(np.kron, [o if k == i else np.eye(2) for k in range(L)])

    h = -sum(op(X, i) @ op(X, i + 1) for i in range(L - 1)) - g * sum(op(Z, i) for i in range(L))
    odd = np.array([bin(k).count("1") % 2 for k in range(2**L)], dtype=bool)
    lowest = [np.linalg.eigvalsh(h[np.ix_(m, m)])[0] for m in (~odd, odd)]
    return float(np.linalg.eigvalsh(h)[0]), float(lowest[0]), float(lowest[1])


@pytest.mark.parametrize("L, g", [(7, -0.7), (7, 0.7), (6, -0.7), (5, -1.5)])
def test_auto_finds_the_ground_state_of_a_parity_conserving_tfim(L, g):
    """``auto`` ran the even parity whatever g: for g < 0 on an odd chain the ground state is odd
    (L = 7, g = -0.7: -7.1037 returned, -7.1896 exact). No symmetry of the MPO tells the parity, so
    ``auto`` now runs dense there."""
    e0, even, odd = _tfim_spectra(L, g)
    res = t4a.dmrg(t4a.models.tfim(L, g=g, conserve="parity"), conserve="auto", max_bond=64, cutoff=1e-14)
    assert abs(float(res.energy) - e0) < 1e-9
    assert res.sector == {"parity": 0.0 if even < odd else 1.0}


def test_an_explicit_parity_keeps_its_documented_default_and_given_sectors():
    """``conserve="parity"`` runs the even sector by default (documented), ``sector=1`` the odd one."""
    _, even, odd = _tfim_spectra(7, -0.7)
    H = t4a.models.tfim(7, g=-0.7, conserve="parity")
    for sector, exact in ((None, even), (1, odd)):
        res = t4a.dmrg(H, conserve="parity", sector=sector, max_bond=64, cutoff=1e-14)
        assert res.state.symmetric and abs(float(res.energy) - exact) < 1e-9
