"""DMRG leaves the charge sector of its start state (the default noise of the first sweeps),
and reports the sector it ended in (``DMRGResult.sector``); the sector engine's one-site
sweeps (driven directly: ``dmrg`` runs conserved sweeps two-site only) reach the minimum of
their sector.

Every reference is an exact diagonalization built here from explicit spin matrices and
``np.kron`` (never from the code's local spaces or MPOs), per sector of ``Sz`` where the
sector matters. Energies are compared with a tolerance derived from the convergence
tolerance ``TOL``: a run that stops when a sweep changes the energy by less than ``TOL``
and converges geometrically with a per-sweep ratio up to 0.99 is at most ``99 * TOL`` from
its limit, which is exact here (the bond dimension allowed exceeds the exact one).

The Hamiltonians are chosen with their lowest sector separated from the next by a gap
(asserted, > 0.05): with nearly degenerate sectors (gaps ~1e-2) a run may settle in the
neighbouring one once the noise is off, as the README says.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models
from tensor4all.linalg.eigensolver import get_solver
from tensor4all.algorithms.sector_dmrg import SectorEngine, sector_product_state
from tensor4all.algorithms.sector_run import resolve_sector

TOL = 1e-10
ETOL = 100 * TOL
R2 = math.sqrt(2.0)
SPIN_HALF = {
    "Sz": np.diag([0.5, -0.5]),
    "S+": np.array([[0.0, 1.0], [0.0, 0.0]]),
    "Sx": np.array([[0.0, 0.5], [0.5, 0.0]]),
}
SPIN_HALF["S-"] = SPIN_HALF["S+"].T
SPIN_ONE = {"Sz": np.diag([1.0, 0.0, -1.0]), "S+": np.array([[0.0, R2, 0.0], [0.0, 0.0, R2], [0.0, 0.0, 0.0]])}
SPIN_ONE["S-"] = SPIN_ONE["S+"].T


def site_op(m: np.ndarray, i: int, L: int) -> np.ndarray:
    out = np.ones((1, 1))
    for k in range(L):
        out = np.kron(out, m if k == i else np.eye(len(m)))
    return out


def xxz_dense(L: int, Jz: float, h: float, ops=SPIN_HALF, hx: float = 0.0) -> np.ndarray:
    """``sum (S+S- + S-S+)/2 + Jz SzSz - h sum Sz - hx sum Sx`` (J = 1)."""
    H = sum(
        0.5
        * (
            site_op(ops["S+"], i, L) @ site_op(ops["S-"], i + 1, L)
            + site_op(ops["S-"], i, L) @ site_op(ops["S+"], i + 1, L)
        )
        + Jz * site_op(ops["Sz"], i, L) @ site_op(ops["Sz"], i + 1, L)
        for i in range(L - 1)
    )
    H = H - h * sum(site_op(ops["Sz"], i, L) for i in range(L))
    if hx:
        H = H - hx * sum(site_op(ops["Sx"], i, L) for i in range(L))
    return H


def sector_minima(H: np.ndarray, charge: np.ndarray) -> dict[float, float]:
    """The lowest energy in each sector of the diagonal charge ``charge`` (H must commute with it)."""
    q = np.round(np.diag(charge), 12)
    assert np.allclose(H * (q[:, None] != q[None, :]), 0.0)  # H is block diagonal in q
    return {float(c): float(np.linalg.eigvalsh(H[np.ix_(q == c, q == c)])[0]) for c in np.unique(q)}


def total_sz(L: int, ops=SPIN_HALF) -> np.ndarray:
    return sum(site_op(ops["Sz"], i, L) for i in range(L))


def ground_sector(minima: dict[float, float]) -> tuple[float, float]:
    """``(Sz, E0)`` of the ground state, checking that it lies in one sector with a gap."""
    (q0, e0), (_, e1) = sorted(minima.items(), key=lambda kv: kv[1])[:2]
    assert e1 - e0 > 0.05, "the test needs a ground state in a sector separated by a gap"
    return q0, e0


def check_ground(res: t4a.DMRGResult, e0: float, sz: float) -> None:
    assert res.converged
    assert e0 - 1e-12 <= res.energy <= e0 + ETOL, (res.energy, e0)
    assert res.sector == {"Sz": sz}


# ---- the example: heisenberg(4) from all spins up ---------------------------------
@pytest.mark.parametrize("two_site", [True, False], ids=["two-site", "one-site"])
def test_all_up_heisenberg_4_reaches_the_ground_state(two_site):
    H = xxz_dense(4, 1.0, 0.0)
    e0 = float(np.linalg.eigvalsh(H)[0])
    assert e0 == pytest.approx(-0.75 - math.sqrt(3.0) / 2.0, abs=1e-14)  # -1.6160254037844384
    res = t4a.dmrg(models.heisenberg(4), t4a.MPS.product_state([0, 0, 0, 0]), two_site=two_site, tol=TOL)
    check_ground(res, e0, 0.0)


def test_noise_zero_two_site_stays_in_the_start_sector():
    """Documented: without noise a dense two-site run leaves its start sector only through
    rounding errors; the all-up state is an eigenstate of the XXZ chain, so it stays there."""
    minima = sector_minima(xxz_dense(4, 1.0, 0.0), total_sz(4))
    assert minima[2.0] == pytest.approx(0.75, abs=1e-14)
    res = t4a.dmrg(models.heisenberg(4), t4a.MPS.product_state([0, 0, 0, 0]), noise=0, tol=TOL)
    assert res.converged and [r.noise for r in res.history] == [0.0] * len(res.history)
    assert res.energy == pytest.approx(minima[2.0], abs=ETOL)
    assert res.sector == {"Sz": 2.0}
    minima6 = sector_minima(xxz_dense(6, 1.0, 1.6), total_sz(6))
    res6 = t4a.dmrg(models.xxz(6, Jz=1.0, h=1.6), t4a.MPS.product_state([0] * 6), noise=0, tol=TOL)
    assert res6.energy == pytest.approx(minima6[3.0], abs=ETOL) and res6.sector == {"Sz": 3.0}
    assert min(minima6.values()) < minima6[3.0] - 0.25  # well above the ground state


def test_default_two_site_noise_is_off_after_two_sweeps():
    res = t4a.dmrg(models.heisenberg(6), max_bond=16, tol=TOL)
    assert [r.noise for r in res.history][:3] == [1e-4, 1e-6, 0.0]
    assert all(r.noise == 0.0 for r in res.history[2:]) and res.converged
    assert t4a.dmrg(models.heisenberg(6), max_bond=16, noise=1e-3).history[1].noise == pytest.approx(1e-4)


# ---- XXZ chains with a field: ground states with Sz != 0, from product states ------------
STARTS = [[0] * 6, [1] * 6, [0, 1] * 3, [1, 1, 1, 1, 1, 0], [0, 0, 1, 1, 0, 0], [1, 0, 0, 0, 0, 0]]


@pytest.mark.parametrize("Jz,h", [(1.0, 1.6), (2.0, 1.5)])  # Sz = 2 and Sz = 1
@pytest.mark.parametrize("two_site", [True, False], ids=["two-site", "one-site"])
def test_xxz_with_field_from_product_states(two_site, Jz, h):
    minima = sector_minima(xxz_dense(6, Jz, h), total_sz(6))
    sz, e0 = ground_sector(minima)
    assert sz != 0.0
    H = models.xxz(6, Jz=Jz, h=h)
    # cutoff 1e-12: the truncation error stays far below ETOL. One-site bonds grow only through
    # the expansion, which must outlast the change of sector: from a product state the default
    # 1e-4 (decaying tenfold) is too weak for a few starts, 1e-3 suffices (documented: README)
    opts = dict(tol=TOL, max_bond=16, sweeps=20, cutoff=1e-12) | ({} if two_site else {"noise": 1e-3})
    for start in STARTS:
        res = t4a.dmrg(H, t4a.MPS.product_state(start), two_site=two_site, **opts)
        check_ground(res, e0, sz)
        assert res.energy == pytest.approx(minima[res.sector["Sz"]], abs=ETOL)


def test_all_sixty_four_product_states_two_site():
    minima = sector_minima(xxz_dense(6, 1.0, 1.6), total_sz(6))
    sz, e0 = ground_sector(minima)
    H = models.xxz(6, Jz=1.0, h=1.6)
    for start in itertools.product([0, 1], repeat=6):
        check_ground(t4a.dmrg(H, t4a.MPS.product_state(list(start)), max_bond=16, cutoff=1e-12, tol=TOL), e0, sz)


def test_a_state_converged_in_another_sector_is_left():
    """Restarted from the ground state of the chain without field: converged, bond dimension
    > 1, in the Sz = 0 sector."""
    minima = sector_minima(xxz_dense(6, 1.0, 1.6), total_sz(6))
    sz, e0 = ground_sector(minima)
    H = models.xxz(6, Jz=1.0, h=1.6)
    singlet = t4a.dmrg(models.xxz(6, Jz=1.0), max_bond=16, cutoff=1e-12, tol=TOL)
    assert singlet.sector == {"Sz": 0.0} and max(singlet.state.bond_dims) > 1
    assert t4a.expectation(singlet.state, H) == pytest.approx(minima[0.0], abs=ETOL)  # Sz = 0 commutes with h
    check_ground(t4a.dmrg(H, singlet.state, cutoff=1e-12, tol=TOL), e0, sz)


def test_spin_one_sector():
    minima = sector_minima(xxz_dense(4, 1.0, 0.9, SPIN_ONE), total_sz(4, SPIN_ONE))
    sz, e0 = ground_sector(minima)
    assert sz == 1.0
    res = t4a.dmrg(models.heisenberg(4, h=0.9, spin="1"), t4a.MPS.product_state([2, 2, 2, 2], d=3), tol=TOL)
    check_ground(res, e0, sz)


# ---- no conserved charge -------------------------------------------------------------------
def test_sector_is_empty_when_sz_is_not_conserved():
    L = 6
    os = models.heisenberg_opsum(L)
    for i in range(L):
        os += (-0.3, "Sx", i)
    res = t4a.dmrg(t4a.MPO.from_opsum(os, L), max_bond=32, tol=TOL)
    e0 = float(np.linalg.eigvalsh(xxz_dense(L, 1.0, 0.0, hx=0.3))[0])
    assert res.sector == {}
    assert e0 - 1e-12 <= res.energy <= e0 + ETOL
    # -J ZZ - g X does not conserve the "pauli" space's parity prod Z (X flips it)
    assert t4a.dmrg(models.tfim(6), max_bond=16).sector == {}


def test_dense_run_reports_a_conserved_parity():
    """``-J XX - g Z`` conserves ``prod_i Z_i`` (a Z2 charge: the "pauli" space's "parity",
    0 for Z = +1); a dense run reports the parity of its final state."""
    L, g = 6, 1.5
    x, z = np.array([[0.0, 1.0], [1.0, 0.0]]), np.diag([1.0, -1.0])
    H = -sum(site_op(x, i, L) @ site_op(x, i + 1, L) for i in range(L - 1)) - g * sum(
        site_op(z, i, L) for i in range(L)
    )
    n_down = sum(site_op(np.diag([0.0, 1.0]), i, L) for i in range(L))
    parity, e0 = ground_sector(sector_minima(H, np.diag(np.diag(n_down) % 2)))
    res = t4a.dmrg(models.tfim(L, g=g, conserve="parity"), max_bond=16, tol=TOL)
    assert res.converged and e0 - 1e-12 <= res.energy <= e0 + ETOL
    assert res.sector == {"parity": float(parity)}


def test_mpo_built_from_tensors_uses_the_default_space_of_its_dimension():
    H = models.xxz(6, Jz=1.0, h=1.6)
    raw = t4a.MPO(H.tensors)
    assert raw.local is None
    sz, _ = ground_sector(sector_minima(xxz_dense(6, 1.0, 1.6), total_sz(6)))
    assert t4a.dmrg(raw, max_bond=16, tol=TOL).sector == {"Sz": sz}


# ---- local spaces declare their charges ----------------------------------------------------
def test_declared_charges():
    assert t4a.local_space("spin-1/2").charges == {"2Sz": (1, -1)}
    assert t4a.local_space("spin-1").charges == {"2Sz": (2, 0, -2)}
    assert t4a.local_space("pauli").charges == {"parity": (0, 1)}
    for name in ("spin-1/2", "spin-1"):
        sp = t4a.local_space(name)  # 2Sz is twice the diagonal of Sz
        assert np.array_equal(np.diag(sp.matrix("Sz")) * 2, sp.charges["2Sz"])
    with pytest.raises(t4a.DimensionMismatchError, match="charge 'N' must be 2 integers"):
        t4a.LocalSpace("q", 2, {}, charges={"N": (0, 1, 2)})
    with pytest.raises(t4a.DimensionMismatchError, match="charge 'N' must be 2 integers"):
        t4a.LocalSpace("q", 2, {}, charges={"N": (0.5, 1)})
    with pytest.raises(t4a.Tensor4allTypeError, match="charges must be a dict"):
        t4a.LocalSpace("q", 2, {}, charges=[("N", (0, 1))])
    assert t4a.LocalSpace("q", 2, {}, charges={"N": np.array([0, 1])}).charges == {"N": (0, 1)}


def test_user_space_with_a_particle_number(monkeypatch):
    """Hard-core bosons ``-sum (b+_i b_i+1 + h.c.) - mu sum N`` on a user space with charge N."""
    b = np.array([[0.0, 1.0], [0.0, 0.0]])  # basis (empty, occupied): b annihilates
    n = np.diag([0.0, 1.0])
    space = t4a.LocalSpace(
        "hardcore-boson",
        2,
        {"Id": (1, np.eye(2)), "B": (1, b), "Bdag": (1, b.T.copy()), "N": (1, n)},
        charges={"N": (0, 1)},
    )
    monkeypatch.setitem(t4a.LOCAL_SPACES, space.name, space)
    L, mu = 6, -0.9
    os = t4a.OpSum()
    for i in range(L - 1):
        os += (-1.0, "Bdag", i, "B", i + 1)
        os += (-1.0, "Bdag", i + 1, "B", i)
    for i in range(L):
        os += (-mu, "N", i)
    Hd = sum(
        -(site_op(b.T, i, L) @ site_op(b, i + 1, L) + site_op(b.T, i + 1, L) @ site_op(b, i, L)) for i in range(L - 1)
    ) - mu * sum(site_op(n, i, L) for i in range(L))
    nq, e0 = ground_sector(sector_minima(Hd, sum(site_op(n, i, L) for i in range(L))))
    res = t4a.dmrg(t4a.MPO.from_opsum(os, L, space), t4a.MPS.product_state([0] * L), max_bond=16, tol=TOL)
    assert res.converged and e0 - 1e-12 <= res.energy <= e0 + ETOL
    assert nq == 2.0 and res.sector == {"N": 2.0}


# ---- the sector survives differentiation and is printed by the program ---------------------
def test_sector_of_a_differentiated_run():
    import tenferro as tf
    import tidu

    seen = {}

    def energy(h):
        res = t4a.dmrg(models.xxz(6, Jz=1.0, h=h), max_bond=16, tol=TOL)
        seen["sector"] = res.sector
        return res.energy

    tidu.grad(energy)(tf.asarray(1.6))
    sz, _ = ground_sector(sector_minima(xxz_dense(6, 1.0, 1.6), total_sz(6)))
    assert seen["sector"] == {"Sz": sz}


def test_cli_summary_prints_the_sector(capsys):
    from tensor4all import cli

    assert (
        cli.main(["dmrg", "--model", "xxz", "--L", "6", "--Jz", "1", "--h", "1.6", "--max-bond", "16", "--quiet"]) == 0
    )
    out = capsys.readouterr().out
    assert "sector      Sz = 2   (conserved by H)" in out


# ---- one-site sweeps on the charge sectors (the sector engine; dmrg refuses them for now) -----
def sector_engine_run(H, conserve: str, sector, two_site: bool, sweeps: int, noise, max_bond: int = 16):
    """A sector engine from the lowest-|charge| product state of ``sector``, swept ``sweeps``
    times with ``noise(k)``; returns the engine and the per-sweep stats."""
    ws = [np.asarray(w) for w in H.tensors]
    spec = resolve_sector(conserve, sector, H.local, ws, None)
    states = sector_product_state(spec.q, spec.target, spec.modulus)
    engine = SectorEngine(ws, spec.w_charges, spec.q, states, get_solver("lanczos"), modulus=spec.modulus)
    stats = [
        engine.sweep(two_site=two_site, max_bond=max_bond, cutoff=1e-14, tol=1e-13, alpha=noise(k), sweep_no=k + 1)
        for k in range(sweeps)
    ]
    return engine, stats


def decaying(k: int) -> float:
    """One-site noise: the subspace expansion grows the bonds, then it is switched off."""
    return 1e-2 * 0.1**k if k < 5 else 0.0


@pytest.mark.parametrize("sz", [0.0, 1.0, 2.0])
def test_one_site_sector_sweeps_reach_the_sector_minimum(sz):
    """From a product state (bond dimension 1) the expansion within the sector grows every bond;
    the energy is the exact minimum of the sector (not the ground state's, for Sz != 2)."""
    minima = sector_minima(xxz_dense(6, 1.0, 1.6), total_sz(6))
    engine, stats = sector_engine_run(models.xxz(6, Jz=1.0, h=1.6), "Sz", sz, False, 12, decaying)
    assert abs(stats[-1].energy - minima[sz]) < ETOL
    assert abs(stats[-1].energy - stats[-2].energy) < TOL
    assert max(engine.bond_dims()) > 1 and stats[-1].blocks_mid >= 1
    # the dense state is in the sector and has the engine's energy
    psi = t4a.MPS([np.asfortranarray(a) for a in engine.psi])
    assert t4a.expectation(psi, models.xxz(6, Jz=1.0, h=1.6)) == pytest.approx(stats[-1].energy, abs=1e-12)
    mz = sum(float(psi.expect("Sz", i)) for i in range(6)) / float(psi.norm()) ** 2
    assert mz == pytest.approx(sz, abs=1e-12)


def test_one_site_sector_sweeps_spin_one_and_parity():
    minima = sector_minima(xxz_dense(4, 1.0, 0.9, SPIN_ONE), total_sz(4, SPIN_ONE))
    _, stats = sector_engine_run(models.heisenberg(4, h=0.9, spin="1"), "Sz", 1.0, False, 12, decaying)
    assert abs(stats[-1].energy - minima[1.0]) < ETOL
    L, g = 6, 0.7
    x, z = np.array([[0.0, 1.0], [1.0, 0.0]]), np.diag([1.0, -1.0])
    Hd = -sum(site_op(x, i, L) @ site_op(x, i + 1, L) for i in range(L - 1)) - g * sum(
        site_op(z, i, L) for i in range(L)
    )
    parity = sector_minima(Hd, np.diag(np.diag(sum(site_op(np.diag([0.0, 1.0]), i, L) for i in range(L))) % 2))
    for p in (0, 1):
        _, stats = sector_engine_run(models.tfim(L, g=g, conserve="parity"), "parity", p, False, 12, decaying)
        assert abs(stats[-1].energy - parity[float(p)]) < ETOL


def test_one_site_sector_sweeps_without_noise_keep_the_bonds():
    """Without the expansion a one-site sweep cannot grow a bond (documented for the dense
    engine too): a product state stays a product state, at its own energy."""
    engine, _ = sector_engine_run(models.heisenberg(6), "Sz", 0.0, False, 2, lambda k: 0.0)
    assert engine.bond_dims() == [1] * 5
    assert engine.bonds[0] == {0: 1} and engine.bonds[-1] == {engine.target: 1}


def test_two_site_noise_expands_the_bonds_within_the_sector():
    """Two-site sector sweeps with noise use White's density-matrix perturbation: from a
    product state the first sweep grows the bonds past what the bare two-site update reaches
    (which stays at 16 here) and lowers the energy, and the state stays normalized in its
    sector (the exact sector energies of runs with the default noise are checked in
    test_hubbard and test_fermion_models)."""
    lat = t4a.lattices.square(4, 2)
    H = models.hubbard(lat, U=4.0)
    bare = t4a.dmrg(H, max_bond=64, sweeps=1, cutoff=1e-14, noise=0.0, compute_variance=False)
    mixed = t4a.dmrg(H, max_bond=64, sweeps=1, cutoff=1e-14, noise=1e-4, compute_variance=False)
    assert max(bare.state.bond_dims) == 16 and max(mixed.state.bond_dims) > 16
    assert mixed.energy < bare.energy - 0.1
    assert mixed.sector == {"N": 8.0, "Sz": 0.0} and abs(float(mixed.state.norm()) - 1.0) < 1e-12
    assert abs(float(t4a.expectation(mixed.state, H)) - mixed.energy) < 1e-10
