"""Excited states and gaps against exact diagonalization with explicit matrices built here
(Kronecker products of spin and Jordan-Wigner fermion matrices; never the library's own
operators), dense and conserved, exactly degenerate levels included."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla
from scipy.optimize import curve_fit

import tensor4all as t4a
import tidu
from tensor4all import InvalidOptionError, Tensor4allTypeError

from .conftest import jordan_wigner_annihilators, spinful_chain_hopping

# ---- explicit matrices -------------------------------------------------------------------
SX = np.array([[0, 1], [1, 0]], dtype=float)
SZ = np.diag([1.0, -1.0])
SP = np.array([[0, 1], [0, 0]], dtype=float)  # sigma^+ (spin up = index 0)


def _site_op(op, i, L, d):
    mats = [sp.identity(d, format="csr")] * L
    mats[i] = sp.csr_matrix(op)
    return reduce(lambda a, b: sp.kron(a, b, format="csr"), mats)


def _spin_ops(spin):
    if spin == "1/2":
        return 0.5 * SZ, SP  # Sz, S+
    s2 = np.sqrt(2.0)
    return np.diag([1.0, 0.0, -1.0]), np.array([[0, s2, 0], [0, 0, s2], [0, 0, 0]])


def heisenberg_matrix(L, spin="1/2"):
    sz, splus = _spin_ops(spin)
    d = sz.shape[0]
    H = sp.csr_matrix((d**L, d**L))
    for i in range(L - 1):
        H = H + _site_op(sz, i, L, d) @ _site_op(sz, i + 1, L, d)
        H = H + 0.5 * (_site_op(splus, i, L, d) @ _site_op(splus.T, i + 1, L, d))
        H = H + 0.5 * (_site_op(splus.T, i, L, d) @ _site_op(splus, i + 1, L, d))
    total_sz = sum(_site_op(sz, i, L, d) for i in range(L)).diagonal()
    return H, total_sz


def tfim_parity_matrix(L, g):
    """``-sum X X - g sum Z`` (the parity-conserving form) and the parity ``prod Z``."""
    H = sp.csr_matrix((2**L, 2**L))
    for i in range(L - 1):
        H = H - _site_op(SX, i, L, 2) @ _site_op(SX, i + 1, L, 2)
    for i in range(L):
        H = H - g * _site_op(SZ, i, L, 2)
    parity = reduce(np.kron, [np.diag(SZ)] * L)
    return H, parity


def hubbard_matrix(L, t, U):
    """The Hubbard chain from Jordan-Wigner fermion matrices of 2L modes (order: site-major, up
    then down), with the particle number and 2 Sz of every basis state."""
    c = jordan_wigner_annihilators(2 * L)
    n = [ci.T @ ci for ci in c]
    H = -t * spinful_chain_hopping(c, L)
    for i in range(L):
        H = H + U * (n[2 * i] @ n[2 * i + 1])
    number = sum(x.diagonal() for x in n)
    two_sz = sum(n[2 * i].diagonal() - n[2 * i + 1].diagonal() for i in range(L))
    return H, number, two_sz


def lowest(H, mask, k):
    idx = np.flatnonzero(mask)
    block = H[idx][:, idx]
    if block.shape[0] <= 400:
        return np.linalg.eigvalsh(block.toarray())[:k]
    return np.sort(sla.eigsh(block, k=k, which="SA", tol=1e-13)[0])


SETTINGS = dict(max_bond=128, sweeps=30, cutoff=0.0, tol=1e-12)


def _check(ex, exact, energy_tol=1e-9):
    np.testing.assert_allclose(ex.energies, exact, atol=energy_tol, rtol=0)
    assert ex.max_overlap < 1e-8, ex.overlaps
    assert all(v < 1e-7 for v in ex.variances), ex.variances


# ---- the acceptance cases ------------------------------------------------------------
def test_heisenberg_four_lowest_in_sz0_sector():
    L = 10
    H, sz = heisenberg_matrix(L)
    ex = t4a.excited_states(t4a.models.heisenberg(L), 4, conserve="Sz", sector=0, **SETTINGS)
    _check(ex, lowest(H, sz == 0, 4))
    assert all(r.state.symmetric and r.sector == {"Sz": 0.0} for r in ex)


def test_heisenberg_dense_finds_the_exactly_degenerate_triplet():
    L = 8
    H, _ = heisenberg_matrix(L)
    exact = np.linalg.eigvalsh(H.toarray())[:4]
    assert np.ptp(exact[1:]) < 1e-12  # the triplet
    ex = t4a.excited_states(t4a.models.heisenberg(L), 4, **SETTINGS)
    _check(ex, exact)
    np.testing.assert_allclose(ex.gaps[1:], exact[1:] - exact[0], atol=2e-9)


@pytest.mark.parametrize("parity", [0, 1])
def test_tfim_critical_both_parities(parity):
    L, g = 10, 1.0
    H, par = tfim_parity_matrix(L, g)
    ex = t4a.excited_states(t4a.models.tfim(L, g=g, conserve="parity"), 4, sector=parity, **SETTINGS)
    _check(ex, lowest(H, par == (1 if parity == 0 else -1), 4))


def test_hubbard_half_filling_n_and_sz_conserved():
    L, U = 6, 4.0
    H, number, two_sz = hubbard_matrix(L, 1.0, U)
    ex = t4a.excited_states(t4a.models.hubbard(L, U=U), 4, sector=(L, 0), **SETTINGS)
    _check(ex, lowest(H, (number == L) & (two_sz == 0), 4))


def test_spin1_edge_quartet_with_exact_degeneracy():
    """The open spin-1 chain's four lowest states: the edge spins' singlet and triplet (split by
    exp(-L / xi)); the triplet exactly degenerate. Found densely, all four orthogonal."""
    L = 6
    H, _ = heisenberg_matrix(L, "1")
    exact = np.linalg.eigvalsh(H.toarray())[:5]
    assert exact[4] - exact[3] > 0.3 and np.ptp(exact[1:4]) < 1e-12
    ex = t4a.excited_states(t4a.models.heisenberg(L, spin="1"), 4, **SETTINGS)
    _check(ex, exact[:4])


def test_complex_hamiltonian():
    """A complex Hermitian Hamiltonian (the Heisenberg chain in a complex dtype with a flux-like
    phase on one bond would change the spectrum; here: XXZ plus a complex but Hermitian
    Dzyaloshinskii-Moriya term built from S+S- with phases)."""
    L = 8
    os = t4a.models.heisenberg_opsum(L)
    for i in range(L - 1):
        os += (0.3j, "S+", i, "S-", i + 1)
        os += (-0.3j, "S-", i, "S+", i + 1)
    H = t4a.MPO.from_opsum(os, L, "spin-1/2")
    Hm, _ = heisenberg_matrix(L)
    _, splus = _spin_ops("1/2")
    for i in range(L - 1):
        Hm = Hm + 0.3j * _site_op(splus, i, L, 2) @ _site_op(splus.T, i + 1, L, 2)
        Hm = Hm - 0.3j * _site_op(splus.T, i, L, 2) @ _site_op(splus, i + 1, L, 2)
    exact = np.linalg.eigvalsh(Hm.toarray())[:3]
    ex = t4a.excited_states(H, 3, **SETTINGS)
    _check(ex, exact)


# ---- gaps --------------------------------------------------------------------------------------
def test_gap_within_and_between_sectors():
    L = 10
    H, sz = heisenberg_matrix(L)
    e0 = lowest(H, sz == 0, 2)
    e1 = lowest(H, sz == 1, 1)
    Hm = t4a.models.heisenberg(L)
    within = t4a.gap(Hm, conserve="Sz", sector=0, **SETTINGS)
    assert abs(within.value - (e0[1] - e0[0])) < 1e-9 and within.error < 1e-6
    spin = t4a.gap(Hm, conserve="Sz", sectors=(0, 1), **SETTINGS)
    assert abs(spin.value - (e1[0] - e0[0])) < 1e-9
    assert spin.upper.sector == {"Sz": 1.0} and float(spin) == spin.value


def test_gap_is_differentiable_in_a_coupling():
    """d(gap)/dg of the TFIM by Hellmann-Feynman on both states, against a central difference of
    exact gaps (the ED spectrum here)."""
    L, g0, h = 8, 0.7, 1e-5

    def exact_gap(g):
        H, par = tfim_parity_matrix(L, g)
        e = lowest(H, par == 1, 2)
        return e[1] - e[0]

    def f(g):
        return t4a.gap(t4a.models.tfim(L, g=g, conserve="parity"), sector=0, **SETTINGS).value

    d = float(tidu.grad(f)(g0))
    fd = (exact_gap(g0 + h) - exact_gap(g0 - h)) / (2 * h)
    assert abs(d - fd) < 1e-6, (d, fd)
    assert abs(float(f(g0)) - exact_gap(g0)) < 1e-9


def test_dmrg_orthogonal_to_directly():
    """``dmrg(orthogonal_to=...)``: the first excited state, exactly orthogonal to the ground state
    it was given (to rounding), dense and conserved."""
    H = t4a.models.heisenberg(8)
    g = t4a.dmrg(H, **SETTINGS)
    e = t4a.dmrg(H, orthogonal_to=[g.state], **SETTINGS)
    assert abs(complex(np.asarray(t4a.overlap(g.state, e.state)))) < 1e-12
    gs = t4a.dmrg(H, conserve="Sz", **SETTINGS)
    es = t4a.dmrg(H, conserve="Sz", orthogonal_to=[gs], **SETTINGS)  # a result is taken as its state
    assert abs(complex(np.asarray(t4a.overlap(gs.state, es.state)))) < 1e-12
    assert es.energy > gs.energy + 0.1


# ---- bad input ---------------------------------------------------------------------------------
def test_bad_inputs():
    H = t4a.models.heisenberg(4)
    with pytest.raises(InvalidOptionError, match="n"):
        t4a.excited_states(H, 0)
    with pytest.raises(InvalidOptionError, match="psi0 has 1 start states"):
        t4a.excited_states(H, 2, psi0=[t4a.MPS.random(4, 2, bond_dim=2)])
    with pytest.raises(t4a.NoOrthogonalStateError, match="holds 1 states"):
        t4a.excited_states(H, 2, conserve="Sz", sector=2)  # all spins up: one state
    with pytest.raises(Tensor4allTypeError, match="list of MPS"):
        t4a.dmrg(H, orthogonal_to=t4a.MPS.random(4, 2, bond_dim=2))
    with pytest.raises(t4a.DimensionMismatchError):
        t4a.dmrg(H, orthogonal_to=[t4a.MPS.random(5, 2, bond_dim=2)])
    with pytest.raises(InvalidOptionError, match="sectors"):
        t4a.gap(H, conserve="Sz", sectors=(0,))
    with pytest.raises(InvalidOptionError, match="needs conserve"):
        t4a.gap(H, sectors=(0, 1))
    with pytest.raises(InvalidOptionError, match="not both"):
        t4a.gap(H, conserve="Sz", sector=0, sectors=(0, 1))


def test_haldane_gap_extrapolated_over_open_chains():
    """The spin-1 chain's Haldane gap from open chains without the edge states' trap: the edge
    spins make the lowest states of Sz = 0 and 1 a quartet, so the bulk gap is ``E(Sz = 2) - E(Sz
    = 1)`` (one magnon on top of the edge triplet), fitted to a magnon in a box of effective
    length ``L + delta``: ``Delta + c / (L + delta)^2``. White and Huse, PRB 48, 3844 (1993):
    0.41050(2)."""
    sizes = [40, 60, 80, 100]
    gaps = []
    for L in sizes:
        H = t4a.models.heisenberg(L, spin="1")
        g = t4a.gap(H, conserve="Sz", sectors=(1, 2), max_bond=[32, 64], sweeps=8, cutoff=1e-10, tol=1e-9)
        assert g.upper.sector == {"Sz": 2.0}
        gaps.append(g.value)
    (delta, c, shift), _ = curve_fit(lambda L, D, c, d: D + c / (L + d) ** 2, sizes, gaps, p0=(0.4, 80.0, 3.0))
    assert abs(delta - 0.41050) < 1e-3, (delta, gaps)
    assert 60 < c < 100  # v^2 pi^2 / (2 Delta) with the spin velocity v = 2.49: 75


def test_cli_dmrg_states(tmp_path, capsys):
    """``tensor4all dmrg --states 3``: the three lowest energies of the sector, their gaps,
    variances and overlaps, on the terminal and in the JSON record."""
    import json

    from tensor4all.cli import main

    out = tmp_path / "run.json"
    argv = ["dmrg", "--model", "heisenberg", "--L", "8", "--sz", "0", "--states", "3", "--cutoff", "0"]
    assert main(argv + ["--json", str(out)]) == 0
    text = capsys.readouterr().out
    H, sz = heisenberg_matrix(8)
    exact = lowest(H, sz == 0, 3)
    doc = json.loads(out.read_text())
    np.testing.assert_allclose([s["energy"] for s in doc["states"]], exact, atol=1e-8)
    np.testing.assert_allclose([s["gap"] for s in doc["states"]], exact - exact[0], atol=1e-8)
    assert doc["max_overlap"] < 1e-8 and "largest |<i|j>|" in text and "state 2: orthogonal" in text
    with pytest.raises(SystemExit):
        main(argv[:-4] + ["--states", "0"])
    assert "at least 1 state" in capsys.readouterr().err


def test_sparse_hamiltonian_of_fermions_carries_the_jordan_wigner_strings():
    """``references.sparse_hamiltonian`` of the Hubbard chain has the spectrum of the Hubbard
    matrix built here from Jordan-Wigner fermion matrices (it once ignored the strings: 0.43 off
    at L = 4)."""
    from tensor4all.references import sparse_hamiltonian

    L = 4
    H, _, _ = hubbard_matrix(L, 1.0, 4.0)
    M = sparse_hamiltonian(t4a.models.hubbard_opsum(L, U=4.0), L, "electron")
    np.testing.assert_allclose(np.linalg.eigvalsh(M.toarray()), np.linalg.eigvalsh(H.toarray()), atol=1e-12)


def test_too_many_states_of_a_dense_run_name_the_whole_space_not_a_measured_sector():
    """A dense run's ``sector`` holds the measured <Sz> of its state (here not a sector it kept): the
    message counts the whole space, 2**3 = 8 states, and names no sector."""
    H = t4a.models.heisenberg(3)
    with pytest.raises(t4a.NoOrthogonalStateError) as info:
        t4a.excited_states(H, 9, max_bond=8)
    msg = str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, t4a.Tensor4allError)
    assert "the whole space" in msg and f"holds {2**3} states" in msg and "n = 9" in msg
    assert "sector" not in msg and "Sz" not in msg
    with pytest.raises(t4a.NoOrthogonalStateError, match=r"the sector \{'Sz': 1.5\} holds 1 states"):
        t4a.excited_states(H, 2, conserve="Sz", sector=1.5)  # all spins up: one state
