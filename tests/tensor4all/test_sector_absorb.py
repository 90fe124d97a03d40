"""The charge-sector backend's absorbed environments (``LW``, :mod:`tensor4all.algorithms.sector_absorb`)
against the same contraction done densely: a random charge-conserving MPO tensor and a random
block environment, expanded to full matrices, contracted with einsum, and cut back into the
fused sectors, and the rectangles it reports as written hold every nonzero entry; the planned
absorption gives the same blocks bit for bit (written by an index per entry, and natively by
rectangles where Numba is installed)."""

from unittest import mock

import numpy as np
from hypothesis import given, settings, strategies as st

from tensor4all.algorithms import sector_absorb
from tensor4all.algorithms.sector_absorb import absorb_groups, absorb_mpo
from tensor4all.linalg.gemm_list import native_gemms
from tensor4all.structured.site_matrices import Pieces


def _offsets(dims: dict) -> dict:
    out, off = {}, 0
    for q, d in dims.items():
        out[q] = off
        off += d
    return out


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    modulus=st.sampled_from([0, 2, 3]),
    cplx=st.booleans(),
    d=st.integers(1, 3),
    n_left=st.integers(1, 4),
    n_right=st.integers(1, 4),
)
def test_absorb_matches_the_dense_contraction(seed, modulus, cplx, d, n_left, n_right):
    rng = np.random.default_rng(seed)
    norm = (lambda c: c % modulus) if modulus else (lambda c: c)
    q_site = [int(q) for q in rng.integers(-1, 2, d)]
    c_env = [int(c) for c in rng.integers(-1, 2, n_left)]  # the environment's MPO states x
    c_out = [int(c) for c in rng.integers(-1, 2, n_right)]  # the output states w
    bond = {norm(q): int(rng.integers(1, 4)) for q in range(-2, 3)}  # bra charge -> dimension
    dtype = np.complex128 if cplx else np.float64

    def rand(*shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if cplx else x

    # a charge-conserving MPO tensor W[x, s, t, w] (c_w = c_x + q_s - q_t), about half its entries zero
    W = np.zeros((n_left, d, d, n_right), dtype=dtype)
    entries: dict[int, list] = {}
    for x in range(n_left):
        for s in range(d):
            for t in range(d):
                for w in range(n_right):
                    if norm(c_out[w]) == norm(c_env[x] + q_site[s] - q_site[t]) and rng.random() < 0.6:
                        W[x, s, t, w] = rand()
                        entries.setdefault(w, []).append((x, s, t, W[x, s, t, w]))
    # the environment: per state x, a block (dim q, dim q - c_x) for every q the bond has with q - c_x
    env = [
        {q: rand(bond[q], bond[norm(q - c_env[x])]) for q in bond if norm(q - c_env[x]) in bond} for x in range(n_left)
    ]
    rows = Pieces()
    for q, dq in bond.items():
        for s in range(d):
            rows.add(norm(q + q_site[s]), (q, s), dq)

    groups = absorb_groups(entries, c_env, norm)
    out, regions = absorb_mpo(env, groups, c_out, rows, lambda q, s: (q, s), norm, np, dtype)
    _check_paths_agree(env, groups, c_out, rows, norm, dtype, out, regions)

    # dense: E[x][a, b] over the whole bond, LW[w][(a, s), (b, t)] = sum_x E[x][a, b] W[x, s, t, w]
    off, n = _offsets(bond), sum(bond.values())
    E = np.zeros((n_left, n, n), dtype=dtype)
    for x, blocks in enumerate(env):
        for q, blk in blocks.items():
            qc = norm(q - c_env[x])
            E[x, off[q] : off[q] + bond[q], off[qc] : off[qc] + bond[qc]] = blk
    dense = np.einsum("xab,xstw->wasbt", E, W)
    assert len(out) == n_right
    for w in range(n_right):
        for m, size in rows.size.items():
            mc = norm(m - c_out[w])
            expected = np.zeros((size, rows.size.get(mc, 0)), dtype=dtype)
            for (q, s), ro, rn in rows.groups[m]:
                for (qc, t), co, cn in rows.groups.get(mc, []):
                    expected[ro : ro + rn, co : co + cn] = dense[w, off[q] : off[q] + rn, s, off[qc] : off[qc] + cn, t]
            got = out[w].get(m)
            if got is None:  # absent blocks: no entry reaches them
                assert not expected.any()
            else:
                assert got.shape == expected.shape and got.dtype == dtype
                np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)
                outside = expected.copy()  # the regions named hold every nonzero entry
                for r0, r1, c0, c1 in regions[w][m]:
                    outside[r0:r1, c0:c1] = 0
                assert not outside.any()


def _check_paths_agree(env, groups, c_out, rows, norm, dtype, out, regions):
    """The planned absorption (:class:`AbsorbPlan`, made for a shape met twice) gives the blocks
    of the unplanned one bit for bit, with the same rectangles."""
    key = lambda q, s: (q, s)  # noqa: E731
    others = []
    # the plan's writes by an index per entry (NumPy), and by rectangles (natively, where Numba is)
    for native_from in (np.inf, 0) if native_gemms() is not None else (np.inf,):
        plans: dict = {}
        with (
            mock.patch.object(sector_absorb, "DENSE_ABSORB_ROWS", 0),  # not the whole arrays of small sides
            mock.patch.object(sector_absorb, "NATIVE_MIN_ENTRIES", native_from),
        ):
            for _ in range(3):  # unseen, seen once (planned on the second call), planned
                others.append(absorb_mpo(env, groups, c_out, rows, key, norm, np, dtype, plans))
        made = [p for p in plans.values() if isinstance(p, sector_absorb.AbsorbPlan)]
        assert made and all((p.scatter is None) == (native_from == np.inf or not p.steps) for p in made)  # ran so
    for got, got_regions in others:
        assert len(got) == len(out)
        for w in range(len(out)):
            assert set(got[w]) == set(out[w])
            for m, blk in out[w].items():
                assert got[w][m].dtype == blk.dtype and got[w][m].shape == blk.shape
                assert np.array_equal(got[w][m], blk)
                assert sorted(got_regions[w][m]) == sorted(regions[w][m])
