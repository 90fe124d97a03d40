"""The per-step bookkeeping of the charge-sector sweeps planned once per structure, against the
block-by-block code it replaces: the sites as flat buffers (:mod:`tensor4all.algorithms.sector_flat`:
writing a split's factors, reading a step's per-sector matrices), the one-pass truncation across
sectors (``truncation._keep_merged`` behind ``sector_keep``), and a conserved DMRG run against the
exact ground energy of its sector (an explicit Kronecker-product Hamiltonian), twice: the second
run, which finds every plan made by the first, gives the same bits."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings, strategies as st

import tensor4all as t4a
from tensor4all import MPS, models
from tensor4all.algorithms import sector_flat, sector_sides
from tensor4all.algorithms.sector_flat import flat_of, read_cols, read_rows, tensor_of, write_cols, write_rows
from tensor4all.linalg import truncation
from tensor4all.networks.symmetric_sites import phys_leg
from tensor4all.structured import U1, Zn
from tensor4all.structured.ranking import rank_across_sectors
from tensor4all.structured.site_matrices import Pieces, SiteMatrices


def _site_problem(seed: int, modulus: int, cplx: bool, d: int):
    """Random site charges (contiguous per charge), a left and a right bond, the layout and legs."""
    rng = np.random.default_rng(seed)
    norm = (lambda c: c % modulus) if modulus else (lambda c: c)
    q_site = sorted({norm(int(q)) for q in rng.integers(-1, 2, d)})
    q_site = [q for q in q_site for _ in range(int(rng.integers(1, 3)))]  # sectors of 1 or 2 states
    dtype = np.complex128 if cplx else np.float64
    layout = SiteMatrices(U1() if modulus == 0 else Zn(modulus), modulus, dtype)
    phys = phys_leg(layout.symmetry, q_site, 0)[0]
    left = {norm(q): int(rng.integers(1, 4)) for q in range(-2, 3)}
    right = {norm(q): int(rng.integers(1, 4)) for q in range(-2, 3)}

    def rand(*shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if cplx else x

    return rng, norm, q_site, layout, phys, left, right, rand


def _same_tensor(a, b) -> None:
    """Equal keys, legs and blocks, bit for bit."""
    assert list(a.blocks) == list(b.blocks) and a.legs == b.legs
    for k in a.blocks:
        x, y = np.asarray(a.blocks[k].numpy()), np.asarray(b.blocks[k].numpy())
        assert x.shape == y.shape and np.array_equal(x, y), k


def _matrices_by_blocks(t, pieces: Pieces, sectors, dims, rows: bool, dtype) -> list[np.ndarray]:
    """The per-sector matrices of a site read block by block and state by state (the layout of
    ``Pieces``: a block's states consecutive, each ``dl`` rows or ``dr`` columns)."""
    first, s = {}, 0
    for q, n in t.legs[1].sectors.items():
        first[q] = s
        s += n
    outs = {
        m: np.zeros((pieces.size[m], d) if rows else (d, pieces.size[m]), dtype=dtype) for m, d in zip(sectors, dims)
    }
    for (ql, qs, qr), blk in t.blocks.items():
        a = np.asarray(blk.numpy())
        out = outs.get(qr if rows else ql)
        if out is None:
            continue
        for k in range(a.shape[1]):
            if rows:
                off = pieces.where[(ql, first[qs] + k)][1]
                out[off : off + a.shape[0]] = a[:, k, :]
            else:
                off = pieces.where[(first[qs] + k, qr)][1]
                out[:, off : off + a.shape[2]] = a[:, k, :]
    return [outs[m] for m in sectors]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), modulus=st.sampled_from([0, 2, 3]), cplx=st.booleans(), d=st.integers(1, 3))
def test_flat_sites_equal_the_blocks_of_a_split_and_read_back_as_the_blocks_do(seed, modulus, cplx, d):
    """A split's left factors written as a flat site (:func:`write_rows`) make the tensor that
    ``SiteMatrices.from_rows`` makes, bit for bit; the right factors (:func:`write_cols`) the same
    against ``from_cols``; the rows and columns read back from a flat site (of a split or of a
    tensor, :func:`flat_of`) are the matrices read block by block, zeros where no block is."""
    rng, norm, q_site, layout, phys, left, right, rand = _site_problem(seed, modulus, cplx, d)
    rows = Pieces.rows(left, q_site, norm)
    cols = Pieces.cols(q_site, right, norm)
    # left factors: a subset of the cut's sectors, each (rows m) x (new bond m); F-ordered as LAPACK's
    kept_r = {
        m: np.asfortranarray(rand(n, int(rng.integers(1, 4))))
        for k, (m, n) in enumerate(rows.size.items())
        if k == 0 or rng.random() < 0.8  # a split keeps at least one sector
    }
    new_r = {m: x.shape[1] for m, x in kept_r.items()}
    legs = (layout.leg(left, False), phys, layout.leg(new_r, True))
    flat = write_rows(kept_r, rows, phys, legs)
    ref = layout.from_rows(kept_r, rows.groups, left, phys, new_r)
    _same_tensor(tensor_of(flat, layout), ref)
    assert flat.buf[-1] == 0 and flat.nbytes == layout.nbytes(ref)
    kept_c = {
        m: rand(int(rng.integers(1, 4)), n)
        for k, (m, n) in enumerate(cols.size.items())
        if k == 0 or rng.random() < 0.8
    }
    new_c = {m: x.shape[0] for m, x in kept_c.items()}
    flat_c = write_cols(kept_c, cols, phys, (layout.leg(new_c, False), phys, layout.leg(right, True)))
    ref_c = layout.from_cols(kept_c, cols.groups, new_c, phys, right)
    _same_tensor(tensor_of(flat_c, layout), ref_c)
    # reading: every sector of the side, bond sectors with no block (zero matrices) included
    for site, t in ((flat, ref), (flat_of(ref), ref)):
        sectors = list(rows.size)
        dims = [new_r.get(m, int(rng.integers(0, 3))) for m in sectors]
        got = read_rows(site, rows, sectors, dims, phys)
        want = _matrices_by_blocks(t, rows, sectors, dims, True, layout.dtype)
        assert all(g.shape == w.shape and np.array_equal(g, w) for g, w in zip(got, want))
    for site, t in ((flat_c, ref_c), (flat_of(ref_c), ref_c)):
        sectors = [m for m in cols.size if rng.random() < 0.9]
        dims = [new_c.get(m, 0) for m in sectors]
        got = read_cols(site, cols, sectors, dims, phys)
        want = _matrices_by_blocks(t, cols, sectors, dims, False, layout.dtype)
        assert all(g.shape == w.shape and np.array_equal(g, w) for g, w in zip(got, want))


def _keep_by_ranking(values: dict, max_bond, cutoff: float):
    """``sector_keep`` as it was: the ranking across sectors with ``truncation_keep`` on the
    merged values."""
    err = 0.0

    def rank(merged):
        nonlocal err
        keep, err = truncation.truncation_keep(merged, max_bond, cutoff)
        return keep

    return dict(zip(values, rank_across_sectors([np.asarray(v) for v in values.values()], rank))), err


_VALUES = st.lists(
    st.lists(st.sampled_from([0.0, 1e-9, 1e-5, 0.1, 0.3, 0.5, 1.0, 2.0]) | st.floats(0.0, 3.0), max_size=7),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(
    values=_VALUES,
    max_bond=st.sampled_from([None, 1, 2, 3, 5, 32]),
    cutoff=st.sampled_from([0.0, 1e-12, 1e-4, 0.05, 0.5]),
)
def test_one_pass_truncation_across_sectors_equals_the_ranking(values, max_bond, cutoff):
    """The one-pass ``sector_keep`` (merged values sorted once, ``truncation_rank``'s rule on them)
    keeps the same count per sector and reports the same discarded weight, bit for bit, as the
    ranking with ``truncation_keep``: ties (sector order), zeros, empty sectors, all zeros."""
    blocks = {3 * k - 2: np.sort(np.asarray(v, dtype=float))[::-1] for k, v in enumerate(values)}
    assert truncation.sector_keep(blocks, max_bond, cutoff) == _keep_by_ranking(blocks, max_bond, cutoff)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.lists(st.sampled_from([0.0, 1e-7, 0.1, 0.5, 1.0]) | st.floats(0.0, 3.0), max_size=90), min_size=1, max_size=5
    ),
    max_bond=st.sampled_from([None, 1, 7, 32, 200]),
    cutoff=st.sampled_from([0.0, 1e-10, 1e-3, 0.2]),
)
@example(values=[[float(x) for x in np.linspace(0.0, 2.0, 90 - 7 * k)] for k in range(4)], max_bond=200, cutoff=1e-3)
@example(values=[[0.5] * 70, [0.5] * 70, [1.0] * 60, [1e-9] * 90], max_bond=None, cutoff=1e-10)
def test_truncation_across_sectors_of_many_values_equals_the_ranking(values, max_bond, cutoff):
    """Up to 450 merged values, with ties, zeros and long runs of equal values: the counts and
    weight of the one-pass ranking are bit for bit those of the ranking with ``truncation_keep``."""
    blocks = {k: np.sort(np.asarray(v, dtype=float))[::-1] for k, v in enumerate(values)}
    assert truncation.sector_keep(blocks, max_bond, cutoff) == _keep_by_ranking(blocks, max_bond, cutoff)


def _heisenberg_sector_energy(L: int) -> float:
    """The lowest energy of the open spin-1/2 Heisenberg chain at Sz = 0, from explicit matrices."""
    sz, sp = np.diag([0.5, -0.5]), np.array([[0.0, 1.0], [0.0, 0.0]])

    def op(o, i):
        return np.kron(np.kron(np.eye(2**i), o), np.eye(2 ** (L - i - 1)))

    h = sum(
        op(sz, i) @ op(sz, i + 1) + 0.5 * (op(sp, i) @ op(sp.T, i + 1) + op(sp.T, i) @ op(sp, i + 1))
        for i in range(L - 1)
    )
    total = sum(op(sz, i) for i in range(L)).diagonal()
    keep = np.flatnonzero(np.abs(total) < 1e-12)
    return float(np.linalg.eigvalsh(h[np.ix_(keep, keep)])[0])


def test_a_conserved_run_reaches_its_sector_minimum_and_a_second_run_finds_the_plans_made():
    """Heisenberg L = 10 from a random state of the Sz = 0 sector: the conserved two-site DMRG
    (every step's sides on whole arrays, the sites flat) reaches the sector's exact ground energy;
    a second run of the same chain, which reuses the plans the first one made (the sides' pieces are
    shared per structure), returns the same bits; the sites the sweeps left flat are tensors whose
    dense form has norm 1."""
    L = 10
    H = models.heisenberg(L, conserve="Sz")
    psi0 = MPS.random(L, 2, bond_dim=6, seed=3, conserve="Sz", charge=0)
    # the shared caches start empty: filled by the tests before (in one process), a cache that is
    # full is dropped at once, and a drop between the two runs made the second one plan again
    sector_sides._PIECES.clear()
    sector_flat._PLANS.clear()
    sector_flat._LAYOUTS.clear()
    sector_flat._PLAN_BYTES[0] = 0
    runs = [t4a.dmrg(H, psi0, max_bond=32, sweeps=4, tol=0.0, noise=0.0, cutoff=0.0)]
    plans, layouts = dict(sector_flat._PLANS), dict(sector_flat._LAYOUTS)
    runs.append(t4a.dmrg(H, psi0, max_bond=32, sweeps=4, tol=0.0, noise=0.0, cutoff=0.0))
    # the second run made no plan: the same entries, the same objects
    assert sector_flat._PLANS.keys() == plans.keys() and all(sector_flat._PLANS[k] is v for k, v in plans.items())
    assert sector_flat._LAYOUTS.keys() == layouts.keys() and all(
        sector_flat._LAYOUTS[k] is v for k, v in layouts.items()
    )
    assert abs(runs[0].energy - _heisenberg_sector_energy(L)) < 1e-10
    assert runs[0].energy == runs[1].energy
    a, b = (np.asarray(r.state.dense().to_dense()) for r in runs)
    assert np.array_equal(a, b) and abs(np.linalg.norm(a) - 1.0) < 1e-12
    assert len(sector_flat._PLANS) > 0 and len(sector_flat._LAYOUTS) > 0
