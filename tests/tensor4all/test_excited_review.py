"""Review of excited states (2026-12-01): many states of a small charge sector, where the local
spaces at the chain's ends hold fewer states than there are earlier ones, against exact
diagonalization with explicit matrices; and runs asked for an orthogonal state that the sector
does not hold."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all.cli import main as cli_main

SZ = np.diag([0.5, -0.5])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])  # S+ (spin up = index 0)


def heisenberg_sector_levels(L: int, sz: float) -> np.ndarray:
    """The eigenvalues of ``sum S_i . S_{i+1}`` (open chain) in the sector of total ``Sz = sz``."""

    def site(op: np.ndarray, i: int) -> np.ndarray:
        return reduce(np.kron, [op if k == i else np.eye(2) for k in range(L)])

    H = sum(
        site(SZ, i) @ site(SZ, i + 1) + 0.5 * (site(SP, i) @ site(SP.T, i + 1) + site(SP.T, i) @ site(SP, i + 1))
        for i in range(L - 1)
    )
    total = np.diag(sum(site(SZ, i) for i in range(L)))
    keep = np.isclose(total, sz)
    return np.linalg.eigvalsh(H[np.ix_(keep, keep)])


@pytest.mark.parametrize("L, n", [(6, 8), (6, 12), (8, 8)])
def test_many_states_of_a_small_sector_are_its_lowest_levels(L, n):
    """L = 6, Sz = 0 holds 20 states; the two-site space at the chain's ends holds 6 of them. With
    7 or more earlier states, those steps had no room for an orthogonal state and were left free:
    state 7 came out at -1.577 (exact -0.616) overlapping the others by 0.70, and states 7-11 of 12
    were one state (overlap 1)."""
    ex = t4a.excited_states(t4a.models.heisenberg(L), n, conserve="Sz", sector=0, max_bond=64, cutoff=0.0)
    exact = heisenberg_sector_levels(L, 0.0)[:n]
    np.testing.assert_allclose(ex.energies, exact, atol=1e-9)
    assert ex.max_overlap < 1e-8
    assert max(ex.variances) < 1e-9


def test_the_whole_sector_comes_out_as_its_spectrum():
    """All 20 states of L = 6, Sz = 0, one after the other: the sector's spectrum, degeneracies
    (the triplets' Sz = 0 members, the quintets') included."""
    ex = t4a.excited_states(t4a.models.heisenberg(6), 20, conserve="Sz", sector=0, max_bond=64, cutoff=0.0)
    np.testing.assert_allclose(ex.energies, heisenberg_sector_levels(6, 0.0), atol=1e-9)
    assert ex.max_overlap < 1e-8


def test_orthogonal_to_a_sectors_only_state_is_a_typed_error():
    """Sz = 2 on 4 sites is one state: a run orthogonal to it returned that state again (overlap
    1.0) without a word."""
    H = t4a.models.heisenberg(4)
    gs = t4a.dmrg(H, conserve="Sz", sector=2, max_bond=8).state
    with pytest.raises(t4a.NoOrthogonalStateError, match=r"holds 1 states and orthogonal_to gives 1") as info:
        t4a.dmrg(H, conserve="Sz", sector=2, max_bond=8, orthogonal_to=[gs])
    assert isinstance(info.value, ValueError)
    assert "overlaps orthogonal_to[0]" in str(info.value)


def test_orthogonal_to_every_state_of_a_sector_is_a_typed_error():
    """Sz = 1 on 4 sites holds 4 states; a fifth orthogonal to them came back as the fourth."""
    H = t4a.models.heisenberg(4)
    ex = t4a.excited_states(H, 4, conserve="Sz", sector=1, max_bond=8, cutoff=0.0)
    np.testing.assert_allclose(ex.energies, heisenberg_sector_levels(4, 1.0), atol=1e-10)
    with pytest.raises(t4a.NoOrthogonalStateError, match=r"holds 4 states and orthogonal_to gives 4"):
        t4a.dmrg(H, conserve="Sz", sector=1, max_bond=8, orthogonal_to=ex.states)


def test_cli_states_beyond_the_sector_is_an_error(capsys):
    """``tensor4all dmrg --L 4 --sz 2 --states 3`` printed three equal energies, gaps of 0 and
    exited 0."""
    with pytest.raises(SystemExit) as info:
        cli_main(["dmrg", "--L", "4", "--sz", "2", "--states", "3", "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "holds 1 states" in err


def test_too_many_states_of_a_known_sector_are_refused_before_any_sweep():
    """The sector's size was checked only after the ground state's whole DMRG had run."""
    sweeps = []
    with pytest.raises(
        t4a.NoOrthogonalStateError, match=r"the sector \{'Sz': 0.0\} holds 20 states, fewer than n = 21"
    ):
        t4a.excited_states(
            t4a.models.heisenberg(6), 21, conserve="Sz", sector=0, callback=lambda k, rec: sweeps.append(k)
        )
    assert sweeps == []
    psi0 = t4a.MPS.random(6, bond_dim=4, conserve="Sz", charge=3)  # all up: one state
    with pytest.raises(t4a.NoOrthogonalStateError, match="holds 1 states, fewer than n = 2"):
        t4a.excited_states(t4a.models.heisenberg(6), 2, psi0=psi0, callback=lambda k, rec: sweeps.append(k))
    assert sweeps == []
