"""The one sweep: its schedule, the engine walking it on both backends, and the pieces the
backends share (the split that moves the centre, the environment cache, the half products).

References are independent of the code under test: the schedule against a hand-written
table of the classic DMRG order, factors against their defining identities (orthonormal
columns or rows, ``left @ right == m``), half products against ``np.einsum``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models
from tensor4all.linalg.eigensolver import get_solver
from tensor4all.networks.environments import EnvCache, Environments, lw_product, wr_product
from tensor4all.algorithms.schedule import Step, sweep_schedule
from tensor4all.algorithms.sector_dmrg import SectorEngine, sector_product_state
from tensor4all.algorithms.sector_run import resolve_sector
from tensor4all.algorithms.sweep import SweepEngine
from tensor4all.linalg.truncation import absorb, split, split_perturbed, svd_truncated, svd_truncated_sectors


# ---- the schedule ---------------------------------------------------------------------------
def test_schedule_of_four_sites_by_hand():
    two = [(0, "right"), (1, "right"), (2, "right"), (2, "left"), (1, "left"), (0, "left")]
    one = [(0, "right"), (1, "right"), (2, "right"), (3, "left"), (2, "left"), (1, "left")]
    assert [(s.site, s.direction) for s in sweep_schedule(4, True)] == two
    assert [(s.site, s.direction) for s in sweep_schedule(4, False)] == one
    assert {s.n_sites for s in sweep_schedule(4, True)} == {2}
    assert {s.n_sites for s in sweep_schedule(4, False)} == {1}


@pytest.mark.parametrize("two_site", [True, False], ids=["two-site", "one-site"])
@pytest.mark.parametrize("L", [1, 2, 3, 7])
def test_schedule_moves_the_centre_bond_by_bond_and_back(L, two_site):
    steps = sweep_schedule(L, two_site)
    assert len(steps) == 2 * (L - 1)
    centre = 0
    for s in steps:
        assert centre in range(s.site, s.site + s.n_sites)  # the step holds the centre
        assert s.leaving in range(s.site, s.site + s.n_sites)
        assert abs(s.arriving - s.leaving) == 1 and s.bond == max(s.leaving, s.arriving)
        centre = s.arriving
    assert centre == 0  # ready for the next sweep
    bonds = [s.bond for s in steps]
    assert bonds == list(range(1, L)) + list(range(L - 1, 0, -1))  # every bond split once per pass


def test_steps_are_immutable_and_bad_lengths_refused():
    s = sweep_schedule(3, True)[0]
    assert s == Step(0, "right", 2)
    with pytest.raises(AttributeError):
        s.site = 1  # type: ignore[misc]
    for bad in (0, -1, 2.0, None):
        with pytest.raises(ValueError, match="positive integer"):
            sweep_schedule(bad, True)


# ---- the engine walks the schedule on both backends -----------------------------------------
def _sector_engine(H: t4a.MPO, conserve: str = "Sz") -> SectorEngine:
    ws = [np.asarray(w) for w in H.tensors]
    spec = resolve_sector(conserve, None, H.local, ws, None)
    states = sector_product_state(spec.q, spec.target, spec.modulus)
    return SectorEngine(ws, spec.w_charges, spec.q, states, get_solver("lanczos"), modulus=spec.modulus)


@pytest.mark.parametrize("two_site", [True, False], ids=["two-site", "one-site"])
def test_both_engines_report_one_update_per_step(two_site):
    H = models.heisenberg(5)
    dense = SweepEngine(
        [np.asarray(w) for w in H.tensors],
        [np.asarray(a) for a in t4a.MPS.random(5, bond_dim=2, seed=1).tensors],
        get_solver("lanczos"),
    )
    for engine in (dense, _sector_engine(H)):
        seen = []
        st = engine.sweep(
            two_site=two_site, max_bond=8, cutoff=0.0, tol=1e-12, alpha=1e-3, sweep_no=3, progress=seen.append
        )
        steps = sweep_schedule(5, two_site)
        assert [(u.site, u.direction) for u in seen] == [(s.site, s.direction) for s in steps]
        assert [(u.sweep, u.step, u.steps) for u in seen] == [(3, k, len(steps)) for k in range(1, len(steps) + 1)]
        # each update reports the bond it created, as the state then holds it
        assert seen[-1].bond_dim == engine.bond_dims()[0]
        assert st.max_bond == max(engine.bond_dims()) and st.peak_memory >= st.env_memory > 0
        # the sector engine diagonalizes problems of at most DENSE_MAX states densely (no products)
        assert st.matvecs > 0 if engine is dense else st.matvecs == 0
        assert st.max_truncation_error == max(u.truncation_error for u in seen)


def test_sector_stats_carry_the_middle_blocks():
    engine = _sector_engine(models.heisenberg(6))
    st = engine.sweep(max_bond=8, cutoff=0.0, tol=1e-12, sweep_no=1)
    assert st.blocks_mid == len(engine.bonds[3]) > 1
    assert {f.name for f in dataclasses.fields(st)} >= {"energy", "max_bond", "blocks_mid"}


# ---- the split that moves the centre ----------------------------------------------------------
def _orthonormal_columns(u: np.ndarray) -> bool:
    return np.allclose(u.conj().T @ u, np.eye(u.shape[1]), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_split_keeps_the_side_the_centre_leaves_orthonormal(dtype):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((6, 9)).astype(dtype)
    if dtype == np.complex128:
        m = m + 1j * rng.standard_normal((6, 9))
    for direction in ("right", "left"):
        left, right, err = split(m, direction, None, 0.0)
        np.testing.assert_allclose(left @ right, m, atol=1e-12)
        assert err == pytest.approx(0.0, abs=1e-15)
        assert _orthonormal_columns(left if direction == "right" else right.conj().T)
    u, s, vh = np.linalg.svd(m, full_matrices=False)
    for direction, (lf, rf) in (("right", (u, s[:, None] * vh)), ("left", (u * s, vh))):
        got = absorb(u, s, vh, direction)
        np.testing.assert_array_equal(got[0], lf)
        np.testing.assert_array_equal(got[1], rf)


def test_split_perturbed_projects_exactly_onto_a_basis_holding_the_expansion():
    """The kept basis spans ``m``'s column space and the directions of ``p`` (White 2005); the
    other factor is the projection, so ``left @ right == m`` whenever the basis holds ``m``."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 7))  # rank 2
    p_rows = rng.standard_normal((8, 3))  # moving right: (rows, k)
    # cutoff 1e-13: the density matrix's rounding-level eigenvalues count as zero
    left, right, _ = split_perturbed(m, p_rows, "right", 1e-2, None, 1e-13)
    assert left.shape[1] == 5 and _orthonormal_columns(left)
    np.testing.assert_allclose(left @ right, m, atol=1e-12)
    proj = left @ left.conj().T
    np.testing.assert_allclose(proj @ p_rows, p_rows, atol=1e-9)
    p_cols = rng.standard_normal((3, 7))  # moving left: (k, cols)
    left, right, _ = split_perturbed(m, p_cols, "left", 1e-2, None, 1e-13)
    assert right.shape[0] == 5 and _orthonormal_columns(right.conj().T)
    np.testing.assert_allclose(left @ right, m, atol=1e-12)
    # truncated to the state's own rank the expansion drops out again
    left, right, err = split_perturbed(m, p_rows, "right", 1e-2, 2, 0.0)
    assert left.shape[1] == 2 and 0.0 < err < 1e-3
    np.testing.assert_allclose(left @ right, m, atol=1e-2 * np.abs(m).max())


@pytest.mark.parametrize("max_bond,cutoff", [(None, 0.0), (4, 0.0), (None, 1e-2), (1, 0.0)])
def test_one_truncation_across_sectors_is_that_of_the_block_diagonal_matrix(max_bond, cutoff):
    rng = np.random.default_rng(7)
    blocks = {-2: rng.standard_normal((3, 2)), 0: 3.0 * rng.standard_normal((4, 5)), 2: rng.standard_normal((1, 3))}
    dense = np.zeros((8, 10))
    r = c = 0
    for b in blocks.values():
        dense[r : r + b.shape[0], c : c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    _, s_dense, _, err_dense = svd_truncated(dense, max_bond, cutoff)
    kept, err = svd_truncated_sectors(blocks, max_bond, cutoff)
    s_kept = np.sort(np.concatenate([s for _, s, _ in kept.values()]))[::-1]
    np.testing.assert_allclose(s_kept, s_dense, rtol=1e-12)
    assert err == pytest.approx(err_dense, rel=1e-10, abs=1e-15)
    for q, (u, s, vh) in kept.items():  # each sector's factors are its block's truncated SVD
        assert _orthonormal_columns(u) and _orthonormal_columns(vh.conj().T)
        if len(s) == min(blocks[q].shape):
            np.testing.assert_allclose((u * s) @ vh, blocks[q], atol=1e-12)


# ---- the environment cache and the half products ---------------------------------------------
def test_env_cache_drops_stale_blocks_and_counts_bytes():
    cache = EnvCache(4, np.ones(2), np.ones(3), lambda b: b.nbytes)
    cache.set_right(3, np.ones(5))
    cache.set_right(2, np.ones(7))
    cache.set_left(1, np.ones(11))
    cache.moved("right", 2, np.ones(13))  # left(2) built, the stale right(2) gone
    with pytest.raises(AssertionError, match="right block 2"):
        cache.right(2)
    cache.moved("left", 2, np.ones(17))  # and back
    with pytest.raises(AssertionError, match="left block 2"):
        cache.left(2)
    held = [cache.left(0), cache.left(1), cache.right(2), cache.right(3), cache.right(4)]
    assert cache.nbytes() == sum(b.nbytes for b in held)


def test_half_products_against_einsum():
    rng = np.random.default_rng(5)
    H = models.heisenberg(3, Jz=0.4, h=0.2)
    w = np.asarray(H.tensors[1])  # (D, 2, 2, D)
    D = w.shape[0]
    lb, rb = rng.standard_normal((3, D, 4)), rng.standard_normal((D, 6, 7))
    x = rng.standard_normal((4, 2, 6))
    want_l = np.einsum("awx,wstv,xtb->asvb", lb, w, x).reshape(3, 2, D * 6)
    np.testing.assert_allclose(lw_product(lb, w, x), want_l, atol=1e-12)
    want_r = np.einsum("wstv,xtb,vbc->wxsc", w, x, rb).reshape(D * 4, 2, 7)
    np.testing.assert_allclose(wr_product(x, w, rb), want_r, atol=1e-12)
    envs = Environments([np.asarray(t) for t in H.tensors], np.float64)
    assert envs.nbytes() == 2 * 8  # the two edges
