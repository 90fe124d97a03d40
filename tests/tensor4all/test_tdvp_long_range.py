"""Two-site TDVP from a product state under terms on sites more than one apart (a ladder's legs in
the MPS order): the projection gives such a term only its mean-field part until nearer terms have
grown the bonds, so the spin ladder from aligned rungs stayed frozen (every <Sz_i> off by up to 0.37
at t = 1, at every dt) without a word. ``tdvp`` now warns (``FrozenBondsWarning``), and the way out it
names, a few TEBD steps and then TDVP, gives the exact evolution. Exact values from ``expm`` of the
explicit Hamiltonian built here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import lattices, models

SZ = np.diag([0.5, -0.5])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])
STATES = [0, 0, 1, 1, 0, 0, 1, 1]  # rungs up-up, down-down, ...


def _op(o: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), o), np.eye(2 ** (L - i - 1)))


def _exact_sz(lat, states, t):
    L = lat.sites
    H = sum(
        _op(SZ, i, L) @ _op(SZ, j, L) + 0.5 * (_op(SP, i, L) @ _op(SP.T, j, L) + _op(SP.T, i, L) @ _op(SP, j, L))
        for i, j in lat.nearest
    )
    v = np.zeros(2**L)
    v[int("".join(map(str, states)), 2)] = 1.0
    v = scipy.linalg.expm(-1j * t * H) @ v
    return np.array([np.vdot(v, _op(SZ, i, L) @ v).real for i in range(L)])


def test_a_product_start_under_long_range_terms_warns():
    H = models.heisenberg(lattices.ladder(4, 2), conserve="Sz")
    with pytest.warns(t4a.FrozenBondsWarning, match="more than one apart"):
        t4a.tdvp(H, t4a.MPS.product_state(STATES, conserve="Sz"), 0.1, 0.05, max_bond=16)


def test_no_warning_on_a_chain_or_from_grown_bonds():
    lat = lattices.ladder(4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", t4a.FrozenBondsWarning)
        t4a.tdvp(models.heisenberg(8), t4a.MPS.product_state([0, 1] * 4), 0.1, 0.05, max_bond=16)
        grown = t4a.MPS.random(8, bond_dim=4, seed=1)
        t4a.tdvp(models.heisenberg(lat), grown, 0.1, 0.05, max_bond=16)


def test_tebd_steps_then_tdvp_follow_the_exact_evolution():
    lat = lattices.ladder(4, 2)
    H = models.heisenberg(lat, conserve="Sz")
    psi = t4a.MPS.product_state(STATES, conserve="Sz")
    first = t4a.tebd(H, psi, 0.2, 0.05, order=4, max_bond=64, cutoff=1e-14).state
    with warnings.catch_warnings():
        warnings.simplefilter("error", t4a.FrozenBondsWarning)
        res = t4a.tdvp(H, first, 0.8, 0.05, max_bond=64, cutoff=1e-14)
    got = np.asarray(res.state.expect("Sz")).real
    # at these bonds (full size, 16) TDVP is exact up to its Krylov tolerance and TEBD's Trotter error
    assert np.abs(got - _exact_sz(lat, STATES, 1.0)).max() < 1e-6
