"""``dmrg(conserve="auto")`` without ``sector=``: a charge with an ``Sz`` part is conserved only where
the spin flip leaves ``H`` unchanged. In a field the ground state is magnetized, and the default
sector (the lowest ``|Sz|``) held an excited state: the Heisenberg chain L = 8 at h = 1.5 gave -3.37
(Sz = 0) against the ground state's -4.83 (Sz = 2). Exact energies from explicit Kronecker products
with Jordan-Wigner strings built here."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models
from tensor4all.operators.term_charges import charge_reversal, reversal_invariant

SZ = np.diag([0.5, -0.5])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])


def _site(op: np.ndarray, i: int, L: int, d: int, string: np.ndarray | None = None) -> np.ndarray:
    left = np.eye(1)
    for _ in range(i):
        left = np.kron(left, string if string is not None else np.eye(d))
    return np.kron(np.kron(left, op), np.eye(d ** (L - i - 1)))


def heisenberg_matrix(L: int, h: float) -> np.ndarray:
    H = np.zeros((2**L, 2**L))
    for i in range(L - 1):
        H += _site(SZ, i, L, 2) @ _site(SZ, i + 1, L, 2)
        H += 0.5 * (_site(SP, i, L, 2) @ _site(SP.T, i + 1, L, 2) + _site(SP.T, i, L, 2) @ _site(SP, i + 1, L, 2))
    return H - h * sum(_site(SZ, i, L, 2) for i in range(L))


def hubbard_zeeman_matrix(L: int, t: float, U: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """The open Hubbard chain with ``-h sum_i Sz_i``, basis ``(0, up, down, updown)`` per site with
    ``|updown> = c_up^dag c_down^dag |0>``, and its particle number (diagonal)."""
    parity = np.diag([1.0, -1.0, -1.0, 1.0])
    c_up = np.zeros((4, 4))
    c_up[0, 1] = c_up[2, 3] = 1.0
    c_dn = np.zeros((4, 4))
    c_dn[0, 2] = 1.0
    c_dn[1, 3] = -1.0
    cs = [[_site(c, i, L, 4, parity) for c in (c_up, c_dn)] for i in range(L)]
    H = np.zeros((4**L, 4**L))
    for i in range(L - 1):
        for s in range(2):
            hop = cs[i][s].T @ cs[i + 1][s]
            H -= t * (hop + hop.T)
    n = [[c.T @ c for c in cs[i]] for i in range(L)]
    for i in range(L):
        H += U * n[i][0] @ n[i][1] - 0.5 * h * (n[i][0] - n[i][1])
    return H, np.diag(sum(n[i][0] + n[i][1] for i in range(L)))


def test_a_field_runs_densely_at_the_exact_ground_state():
    L, h = 8, 1.5
    exact = np.linalg.eigvalsh(heisenberg_matrix(L, h))[0]
    res = t4a.dmrg(models.heisenberg(L, h=h), conserve="auto", max_bond=64, sweeps=6, seed=1)
    assert not res.state.symmetric
    assert abs(res.energy - exact) < 1e-9
    assert res.sector == {"Sz": 2.0}


def test_without_a_field_sz_is_still_conserved():
    L = 8
    exact = np.linalg.eigvalsh(heisenberg_matrix(L, 0.0))[0]
    res = t4a.dmrg(models.heisenberg(L), conserve="auto", max_bond=64, sweeps=6, seed=1)
    assert res.state.symmetric and res.state.conserve == "Sz" and res.sector == {"Sz": 0.0}
    assert abs(res.energy - exact) < 1e-9


def test_an_explicit_sector_is_kept_in_a_field():
    res = t4a.dmrg(models.heisenberg(8, h=1.5), conserve="auto", sector=0, max_bond=64, sweeps=6, seed=1)
    w, v = np.linalg.eigh(heisenberg_matrix(8, 1.5))
    sz = np.einsum("ij,ji->i", v.T, sum(_site(SZ, i, 8, 2) for i in range(8)) @ v)
    assert res.state.conserve == "Sz" and abs(res.energy - w[np.abs(sz) < 1e-9].min()) < 1e-9


@pytest.mark.parametrize("h, conserved", [(0.0, "N,Sz"), (0.8, "N")])
def test_the_hubbard_chain_keeps_n_and_drops_sz_in_a_field(h, conserved):
    L, t, U = 4, 1.0, 4.0
    os_ = models.hubbard_opsum(L, t=t, U=U)
    for i in range(L):
        os_ += (-h, "Sz", i)
    H = t4a.MPO.from_opsum(os_, L, "electron")
    res = t4a.dmrg(H, conserve="auto", max_bond=64, sweeps=8, seed=2)
    assert res.state.conserve == conserved
    m, n = hubbard_zeeman_matrix(L, t, U, h)
    keep = np.abs(n - L) < 1e-9  # half filling, every Sz
    exact = np.linalg.eigvalsh(m[np.ix_(keep, keep)])[0]
    assert abs(res.energy - exact) < 1e-9


def test_the_spin_flip_of_the_electron_carries_a_sign():
    """The up/down exchange alone does not leave the hopping unchanged (the doubly occupied state's
    creation operators change order); with the sign it does."""
    q = [0, 1, -1, 0]
    assert charge_reversal(q, 0) == [0, 2, 1, 3]
    ws = [np.asarray(w) for w in models.hubbard(4, conserve=None).tensors]
    assert reversal_invariant(ws, [q] * 4, 0)
    assert charge_reversal([0, 1, 1, 2], 0) is None  # the particle number has no reversal
