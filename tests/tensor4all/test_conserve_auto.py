"""``conserve=`` of the evolutions (``tensor4all.tebd``, ``tensor4all.tdvp``): ``"auto"`` runs a
symmetric state densely where the run is small enough that the dense run is the faster
(``AUTO_DENSE_BELOW``, measured by ``benchmarks/conserve_small.py --sizes``), says so in the
result and the log, and conserves above; ``"none"`` runs densely; the physics is the same either
way, checked against exact evolutions computed here from Kronecker products of Pauli matrices
(``scipy.linalg.expm``), independently of the library."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import MPS, models
from tensor4all.algorithms import evolution

SX = np.array([[0.0, 0.5], [0.5, 0.0]])
SY = np.array([[0.0, -0.5j], [0.5j, 0.0]])
SZ = np.diag([0.5, -0.5])  # basis state 0 is up


def site_op(m: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), m), np.eye(2 ** (L - i - 1)))


def heisenberg_matrix(L: int) -> np.ndarray:
    """``sum_i S_i . S_{i+1}`` on the open chain (site 0 the most significant)."""
    H = np.zeros((2**L, 2**L), dtype=complex)
    for i in range(L - 1):
        for a in (SX, SY, SZ):
            H += site_op(a, i, L) @ site_op(a, i + 1, L)
    return H


def neel(L: int) -> np.ndarray:
    v = np.zeros(2**L)
    v[int("".join(str(i % 2) for i in range(L)), 2)] = 1.0  # up, down, up, ... (state 1 is down)
    return v


def exact(L: int, t: float, imaginary: bool = False) -> np.ndarray:
    H = heisenberg_matrix(L)
    v = scipy.linalg.expm((-t if imaginary else -1j * t) * H) @ neel(L)
    return v / np.linalg.norm(v) if imaginary else v


def vector(psi: MPS) -> np.ndarray:
    return np.asarray((psi.dense() if psi.symmetric else psi).to_dense()).reshape(-1)


def sz_profile(v: np.ndarray, L: int) -> np.ndarray:
    return np.array([np.real(np.vdot(v, site_op(SZ, i, L) @ v)) / np.real(np.vdot(v, v)) for i in range(L)])


def start(L: int) -> tuple[t4a.MPO, MPS]:
    return models.heisenberg(L, conserve="Sz"), MPS.product_state([i % 2 for i in range(L)], conserve="Sz")


def evolve(method: str, L: int, t: float, **kw):
    H, psi = start(L)
    if method == "tebd":
        return t4a.tebd(H, psi, t, 0.02, order=4, max_bond=64, cutoff=0.0, **kw)
    return t4a.tdvp(H, psi, t, 0.02, max_bond=64, cutoff=0.0, **kw)


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
def test_auto_runs_a_small_chain_densely_and_says_so(method, caplog):
    """L = 6 reaches the bonds 2, 4, 8, 4, 2 at most: the size, ``d_b d_{b+1} chi_b^2`` averaged
    over the bonds, is 4 (4 + 16 + 64 + 16 + 4) / 5 = 83, far below the thresholds, so ``"auto"``
    runs densely; the result and the log say why, and the state is the exact one."""
    L, t = 6, 0.4
    with caplog.at_level(logging.INFO, logger="tensor4all"):
        res = evolve(method, L, t, conserve="auto")
    assert res.conserve is None and not res.state.symmetric
    assert res.conserve_reason.startswith("dense: conserve='auto'") and "AUTO_DENSE_BELOW" in res.conserve_reason
    assert "averaged over the bonds = 83 (chi_b up to 8)" in res.conserve_reason
    assert any(method in r.getMessage() and "dense" in r.getMessage() for r in caplog.records)
    assert res.as_dict()["conserve"] is None and res.as_dict()["conserve_reason"] == res.conserve_reason
    v, ref = vector(res.state), exact(L, t)
    assert abs(abs(np.vdot(ref, v)) - 1.0) < 1e-6
    assert np.abs(sz_profile(v, L) - sz_profile(ref, L)).max() < 1e-6


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
def test_auto_conserves_above_the_threshold(method, monkeypatch):
    """With the thresholds lowered below the run's size, ``"auto"`` evolves in the sector: the
    final state is symmetric (Sz = 0), the record says so, and the physics is the same."""
    monkeypatch.setattr(evolution, "AUTO_DENSE_BELOW", {k: 16 for k in evolution.AUTO_DENSE_BELOW})
    L, t = 6, 0.4
    res = evolve(method, L, t, conserve="auto")
    assert res.conserve == "Sz" and res.state.symmetric and res.state.sector == {"Sz": 0.0}
    assert res.conserve_reason == "Sz: conserve='auto' and the run's size, 83, is above 16"
    v, ref = vector(res.state), exact(L, t)
    assert abs(abs(np.vdot(ref, v)) - 1.0) < 1e-6
    assert np.abs(sz_profile(v, L) - sz_profile(ref, L)).max() < 1e-6


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
def test_the_threshold_is_inclusive(method, monkeypatch):
    """A run whose size equals the threshold runs densely, a larger one conserves (L = 6: the
    sector's bonds are 2, 4, 8, 4, 2; ``max_bond = 4`` caps them to 2, 4, 4, 4, 2, size 4 * 56 / 5
    = 45; ``max_bond = 5``: 4 * 65 / 5 = 52)."""
    H, psi = start(6)
    run = t4a.tebd if method == "tebd" else t4a.tdvp
    monkeypatch.setattr(evolution, "AUTO_DENSE_BELOW", {k: 45 for k in evolution.AUTO_DENSE_BELOW})
    at = run(H, psi, 0.1, 0.05, max_bond=4, conserve="auto")
    above = run(H, psi, 0.1, 0.05, max_bond=5, conserve="auto")
    assert at.conserve is None and "= 45 (chi_b up to 4), is at most 45" in at.conserve_reason
    assert above.conserve == "Sz" and above.state.symmetric and "size, 52, is above 45" in above.conserve_reason


def test_imaginary_time_uses_the_real_threshold(monkeypatch):
    """Imaginary time of a real state under a real Hamiltonian runs in real arithmetic: its own
    threshold decides, and the ground state it reaches is the exact one."""
    monkeypatch.setattr(evolution, "AUTO_DENSE_BELOW", {("tebd", "real"): 16, ("tebd", "complex"): 10**6})
    L = 6
    H, psi = start(L)
    res = t4a.tebd(H, psi, 10.0, 0.05, order=4, imaginary=True, max_bond=64, cutoff=0.0, conserve="auto")
    assert res.conserve == "Sz", res.conserve_reason  # real: 83 > 16
    e, w = np.linalg.eigh(heisenberg_matrix(L))
    v = vector(res.state)
    energy = np.real(np.vdot(v, heisenberg_matrix(L) @ v)) / np.real(np.vdot(v, v))
    assert abs(energy - e[0]) < 1e-4  # the Trotter error of order 4 at dt = 0.05 (4e-5 here)
    assert abs(abs(np.vdot(w[:, 0], v / np.linalg.norm(v))) - 1.0) < 1e-4


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
def test_none_runs_densely_and_none_keeps_the_state_kind(method):
    L, t = 6, 0.2
    dense = evolve(method, L, t, conserve="none")
    kept = evolve(method, L, t)
    assert dense.conserve is None and not dense.state.symmetric and dense.conserve_reason == "dense: conserve='none'"
    assert kept.conserve == "Sz" and kept.state.symmetric and kept.conserve_reason == "Sz: the state is symmetric"
    ref = exact(L, t)
    for res in (dense, kept):
        assert abs(abs(np.vdot(ref, vector(res.state))) - 1.0) < 1e-6
    H = models.heisenberg(L)
    plain = (t4a.tebd if method == "tebd" else t4a.tdvp)(H, MPS.product_state([i % 2 for i in range(L)]), t, 0.1)
    assert plain.conserve is None and plain.conserve_reason == "dense: the state is dense"


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
@pytest.mark.parametrize("bad", ["Sz", "N", True, 1])
def test_conserve_takes_none_auto_or_none(method, bad):
    H, psi = start(4)
    with pytest.raises(t4a.InvalidOptionError, match="conserve must be None"):
        (t4a.tebd if method == "tebd" else t4a.tdvp)(H, psi, 0.1, 0.05, conserve=bad)


def test_full_bond_dims_are_the_ranks_of_a_generic_state_of_the_sector():
    """The sector's Schmidt rank bound at every bond equals the rank of a random vector of the
    sector (Sz = 0 on 8 spins; Sz = 1 on 7), reshaped at that bond."""
    rng = np.random.default_rng(3)
    for L, two_sz in ((8, 0), (7, 1)):
        ups = [format(k, f"0{L}b").count("0") for k in range(2**L)]  # up spins: the zeros of the index's bits
        mask = np.array([2 * u - L == two_sz for u in ups])
        v = np.where(mask, rng.standard_normal(2**L), 0.0)
        ranks = [np.linalg.matrix_rank(v.reshape(2 ** (b + 1), -1)) for b in range(L - 1)]
        states = [0] * ((L + two_sz) // 2) + [1] * ((L - two_sz) // 2)
        psi = MPS.product_state(states, conserve="Sz")
        assert evolution.full_bond_dims(psi) == ranks, (L, ranks)
    dense = MPS.product_state([0, 1, 0, 1, 0])
    assert evolution.full_bond_dims(dense) == [2, 4, 4, 2]


def test_one_site_tdvp_sizes_the_run_by_the_bonds_of_psi():
    """One-site TDVP keeps the bonds of ``psi``: its size takes their largest as ``max_bond``, here
    full (a random state of the sector, bonds 2, 4, 8, 4, 2: size 83), where the evolution is
    exact."""
    L, t = 6, 0.3
    psi = MPS.random(L, 2, bond_dim=8, seed=4, conserve="Sz", charge=0)
    res = t4a.tdvp(models.heisenberg(L, conserve="Sz"), psi, t, 0.02, two_site=False, conserve="auto")
    assert res.conserve is None and "= 83 (chi_b up to 8)" in res.conserve_reason
    v0 = vector(psi)
    ref = scipy.linalg.expm(-1j * t * heisenberg_matrix(L)) @ v0
    assert abs(abs(np.vdot(ref, vector(res.state))) / np.linalg.norm(v0) ** 2 - 1.0) < 1e-6


# ---- the kernels that make the conserved steps cheap, against the ones they replace ----------
def test_held_matrices_and_absorb_plans_equal_the_products_by_blocks(monkeypatch):
    """Every local operator of a conserved TDVP run (complex blocks) and DMRG run (real ones),
    whether it holds its matrix (built by blocks or gathered from whole arrays), applies itself on
    whole arrays or goes by blocks, equals the
    same operator applied by blocks; the planned absorptions equal the unplanned ones, the
    absorptions on whole arrays of the small sides (``sector_dense``) equal them to rounding and
    add only zero blocks (L = 8 Hubbard chain, N and Sz)."""
    from tensor4all.algorithms import sector_absorb, sector_backend, sector_dense, sector_operator

    ops, absorbed = [], []
    init, absorb = sector_operator.SectorOperator.__init__, sector_backend.absorb_mpo

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        ops.append((self, args, kwargs))

    def spy_absorb(*args):
        out = absorb(*args)
        absorbed.append((args, out))
        return out

    monkeypatch.setattr(sector_operator.SectorOperator, "__init__", spy)
    monkeypatch.setattr(sector_backend, "absorb_mpo", spy_absorb)
    monkeypatch.setattr(sector_absorb, "DENSE_ABSORB_ROWS", 40)  # sides of 4 to 76 rows: both kinds
    H = models.hubbard(8, U=3.0, conserve="N,Sz")
    psi = MPS.product_state([1, 2] * 4, conserve="N,Sz", local="electron")
    t4a.tdvp(H, psi, 0.3, 0.05, max_bond=24)
    t4a.dmrg(H, max_bond=24, sweeps=2, seed=2)
    assert sum(op.matrix is not None for op, _, _ in ops) > 10
    assert any(
        op.matrix is not None and not op.terms and isinstance(args[0], sector_dense.Dense) for op, args, _ in ops
    )
    rng = np.random.default_rng(0)
    monkeypatch.setattr(sector_operator, "_holds_matrix", lambda *a: False)
    monkeypatch.setattr(sector_operator, "_gathers", lambda *a: False)
    monkeypatch.setattr(sector_operator, "_whole_products", lambda *a: False)
    for op, args, kwargs in ops[::5]:
        blocks = sector_operator.SectorOperator.__new__(sector_operator.SectorOperator)
        init(blocks, *args, **kwargs)
        x = rng.standard_normal(op.shape[0]) + 1j * rng.standard_normal(op.shape[0])
        y = blocks.matvec(x)
        assert np.abs(op.matvec(x) - y).max() <= 1e-13 * max(1.0, np.abs(y).max())
    dense = 0
    for args, (out, regions) in absorbed:
        ref, ref_regions = sector_absorb._absorb(*args[:8])
        if isinstance(out, sector_dense.Dense):  # the same sums with zeros added: equal to rounding
            dense += 1
            scale = max((np.abs(b).max() for r in ref for b in r.values()), default=1.0)
            assert all(np.abs(out[w][m] - ref[w][m]).max() <= 1e-14 * scale for w in range(len(ref)) for m in ref[w])
            assert all(not out[w][m].any() for w in range(len(ref)) for m in out[w] if m not in ref[w])
            continue
        assert regions == ref_regions
        assert all(np.array_equal(out[w][m], ref[w][m]) for w in range(len(ref)) for m in ref[w])
    assert len(absorbed) > 20 and any(
        isinstance(p, sector_absorb.AbsorbPlan) for a, _ in absorbed for p in a[8].values()
    )
    assert 0 < dense < len(absorbed)


def test_block_sites_equal_the_structured_bond_update():
    """TEBD's bond update on block sites (one GEMM per sector of the cut, the gate by pair charge)
    against the same update through the structured einsum (``SymmetricSites``), on a random
    symmetric state: the same two sites and singular values."""
    from tensor4all.algorithms.tebd_blocks import BlockSites
    from tensor4all.algorithms.tebd_sites import NumpyLA, SymmetricSites, split_pair

    psi = MPS.random(6, 4, bond_dim=12, seed=5, conserve="N,Sz", charge={"N": 6, "Sz": 0}, local="electron")
    legs = [t.legs[1] for t in psi.tensors]
    blocks, generic = BlockSites(np.dtype(complex), 0, legs), SymmetricSites(NumpyLA(), np.dtype(complex), legs)
    rng = np.random.default_rng(1)
    q = np.array(blocks.qs[2])
    pair = np.add.outer(q, q).ravel()
    g = rng.standard_normal((16, 16)) + 1j * rng.standard_normal((16, 16))
    g[pair[:, None] != pair[None, :]] = 0.0  # a charge-conserving two-site gate
    ts = [generic.site(t) for t in psi.tensors]
    bs = [blocks.site(t) for t in psi.tensors]
    for b in (0, 2, 4):
        for to_right in (True, False):
            a1, b1, n1, e1 = split_pair(
                generic, ts[b], ts[b + 1], generic.gate(g, b, b + 1, 4, 4), to_right, 40, 0.0, False
            )
            a2, b2, n2, e2 = split_pair(
                blocks, bs[b], bs[b + 1], blocks.gate(g, b, b + 1, 4, 4), to_right, 40, 0.0, False
            )
            assert abs(n1 - n2) <= 1e-12 * n1 and abs(e1 - e2) <= 1e-12
            v1 = vector(MPS._symmetric([*ts[:b], a1, b1, *ts[b + 2 :]], psi._grading))
            v2 = vector(blocks.state([*bs[:b], a2, b2, *bs[b + 2 :]], psi._grading))
            assert np.abs(v1 - v2).max() <= 1e-12 * np.abs(v1).max()


@pytest.mark.parametrize("builder", ["heisenberg", "xxz", "xx", "j1j2", "tfim", "hubbard", "spinless_fermions", "tj"])
def test_every_model_takes_conserve_none_as_dmrg_spells_it(builder):
    """``dmrg(conserve="none")`` and the command line spell no symmetry ``"none"``; ``tfim`` took
    it and the other builders refused it. Now each gives the unmarked MPO, the same tensors as
    ``conserve=None``."""
    make = getattr(models, builder)
    plain, spelled = make(4, conserve=None), make(4, conserve="none")
    assert spelled.conserve is None
    for a, b in zip(plain.tensors, spelled.tensors):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
