"""``pivot_search="fiber"`` (rank-adaptive pivot insertion on nested sets that only grow):
the bond kernel against exact low-rank matrices, exact recovery of tensor trains of known
rank with the minimal ranks and few evaluations beyond their parameters, nesting and square
pivot matrices, the error estimate against the true error, a 5-dimensional integral, the
rank cap, and the sampled cross rebuilding the train; whole rows and columns read in one
call, probes where f is negligible replaced, and few calls to f on a long train."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tensor4all import quantics as Q, tci
from tensor4all.tci.cache import CachedFunction
from tensor4all.tci.grow import grow_bond

from .test_tci import all_indices, random_tt, tt_values


def parameters(dims, bonds):
    r = [1, *bonds, 1]
    return sum(r[k] * d * r[k + 1] for k, d in enumerate(dims)) - sum(b * b for b in bonds)


@pytest.mark.parametrize("m,n,k", [(40, 30, 6), (8, 50, 8), (25, 25, 1)])
def test_grow_bond_finds_the_rank_of_a_low_rank_matrix_reading_its_pivot_lines(m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)) @ rng.standard_normal((k, n))
    seen = np.zeros(a.shape, bool)

    def lines(r, c):  # whole rows r and whole columns c
        seen[r, :] = True
        seen[:, c] = True
        return a[r, :], a[:, c]

    start_r, start_c = np.unravel_index(np.argmax(np.abs(a)), a.shape)
    rows, cols, err = grow_bond(lines, a.shape, [start_r], [start_c], rng=np.random.default_rng(0), abstol=1e-10)
    assert len(rows) == len(cols) == k and rows[0] == start_r and cols[0] == start_c
    cross = a[:, cols] @ np.linalg.solve(a[np.ix_(rows, cols)], a[rows, :])
    assert np.abs(cross - a).max() < 1e-9 * np.abs(a).max()
    assert err < 1e-9 * np.abs(a).max()
    # the entries read: the k pivot rows and at most 2k + 1 columns (pivots and probes)
    assert seen.all(axis=1).sum() <= k and seen.sum() <= k * n + min(n, 2 * k + 1) * m


def test_grow_bond_keeps_the_given_pivots_and_caps_the_rank():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20, 20))
    rows, cols, err = grow_bond(lambda r, c: (a[r, :], a[:, c]), a.shape, [2, 5], [7, 1], rng=rng, abstol=0, max_rank=6)
    assert rows[:2].tolist() == [2, 5] and cols[:2].tolist() == [7, 1] and len(rows) == 6
    assert abs(np.linalg.det(a[np.ix_(rows, cols)])) > 0 and err > 0  # full rank: residual left


@settings(max_examples=12, deadline=None)
@given(
    L=st.integers(3, 7), d=st.integers(2, 5), rank=st.integers(1, 4), seed=st.integers(0, 10**6), complex_=st.booleans()
)
def test_fiber_recovers_a_random_tensor_train_exactly_with_nested_sets(L, d, rank, seed, complex_):
    dims = [d] * L
    cores, bonds = random_tt(dims, rank, seed, np.complex128 if complex_ else np.float64)
    res = tci.crossinterpolate2(
        lambda i: tt_values(cores, i), dims, batched=True, tolerance=1e-12, pivot_search="fiber", seed=seed
    )
    idx = all_indices(dims) if d**L <= 5000 else np.random.default_rng(seed).integers(0, d, (5000, L))
    ref = tt_values(cores, idx)
    assert np.abs(np.asarray(tci.tt_evaluate(res.tt, idx)) - ref).max() <= 1e-11 * np.abs(ref).max()
    assert res.termination == "converged"
    assert res.tt.bond_dims == bonds[1:-1]
    I, J = res.cross.I, res.cross.J
    for k in range(L - 1):  # nested: I[k+1] within I[k] x {0..d-1}, J[k] within {0..d-1} x J[k+1]
        assert {tuple(r[:-1]) for r in I[k + 1]} <= {tuple(r) for r in I[k]}
        assert {tuple(c[1:]) for c in J[k]} <= {tuple(c) for c in J[k + 1]}
        assert len(I[k + 1]) == len(J[k])
    # samples: the train's own (its parameters), the probes of each bond visit, the first
    # pivot's lines and the global search's check (5 stratified random lines per sweep)
    sweeps = len(res.errors)
    probes = sweeps * (L - 1) * 2 * d * rank
    assert res.evaluations <= 2 * parameters(dims, bonds[1:-1]) + probes + 2 * d * L + sweeps * 5 * d * L


def test_fiber_on_a_larger_train_uses_few_samples_beyond_its_parameters():
    dims = [2] * 20
    cores, bonds = random_tt(dims, 10, 0)
    f = lambda i: tt_values(cores, i)  # noqa: E731
    res = tci.crossinterpolate2(f, dims, batched=True, tolerance=1e-12, pivot_search="fiber", global_pivots=0)
    checked = tci.crossinterpolate2(f, dims, batched=True, tolerance=1e-12, pivot_search="fiber")
    assert checked.termination == "converged" and checked.tt.bond_dims == bonds[1:-1]  # the check: samples only
    idx = np.random.default_rng(0).integers(0, 2, (4000, 20))
    ref = tt_values(cores, idx)
    assert np.abs(np.asarray(tci.tt_evaluate(res.tt, idx)) - ref).max() <= 1e-11 * np.abs(ref).max()
    assert res.tt.bond_dims == bonds[1:-1]
    assert res.evaluations <= 1.5 * parameters(dims, bonds[1:-1]), res.evaluations  # 1855 of 1420


def test_fiber_error_estimate_bounds_the_true_error_of_a_gaussian_and_its_integral():
    n, L, a = 40, 5, 9.0
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = a * x, a * w
    A = np.eye(L) + 0.35 * (np.eye(L, k=1) + np.eye(L, k=-1))

    def f(i):
        X = x[i]
        return np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, A, X))

    res = tci.crossinterpolate2(f, [n] * L, batched=True, tolerance=1e-10, pivot_search="fiber")
    exact = (2 * np.pi) ** (L / 2) / np.sqrt(np.linalg.det(A))
    assert float(tci.tt_sum(res.tt, [w] * L)) == pytest.approx(exact, rel=1e-8)
    idx = np.random.default_rng(1).integers(0, n, (20000, L))
    err = np.abs(np.asarray(tci.tt_evaluate(res.tt, idx)) - f(idx)).max() / res.max_sample
    assert res.termination == "converged" and res.error < 1e-10 and err < 1e-9
    assert res.evaluations < 0.001 * n**L


def test_fiber_rank_cap_and_the_cross_rebuilds_the_train():
    dims = [3] * 6
    cores, _ = random_tt(dims, 6, 2)
    f = lambda i: tt_values(cores, i)  # noqa: E731
    capped = tci.crossinterpolate2(f, dims, batched=True, max_bond=3, pivot_search="fiber")
    assert capped.termination == "max_bond" and max(capped.tt.bond_dims) == 3 and capped.error > 1e-8
    res = tci.crossinterpolate2(f, dims, batched=True, pivot_search="fiber")
    rebuilt = np.asarray(tci.interpolant(res, f(res.points)).to_dense())
    np.testing.assert_allclose(rebuilt, np.asarray(res.tt.to_dense()), rtol=1e-12, atol=1e-12)
    assert len(res.points) <= res.evaluations


def test_cross_matrix_reads_rows_and_columns_in_one_call_each_entry_once():
    calls = []

    def f(idx):
        calls.append(len(idx))
        return idx @ np.array([100.0, 10.0, 1.0])

    fn = CachedFunction(f, [3, 4, 5], batched=True)
    rows, cols = np.array([[0], [2], [1]]), np.array([[1, 4], [3, 0]])
    mat = fn.matrix(rows, cols)
    assert mat.known_rows(np.array([1])) is None and not calls  # nothing sampled yet: f not called
    r, c = mat.lines(np.array([1]), np.array([0]))  # row 1 and column 0 share the entry (2, 1, 4)
    assert r.tolist() == [[214.0, 230.0]] and c.tolist() == [[14.0], [214.0], [114.0]]
    assert calls == [4] and fn.evaluations == 4
    np.testing.assert_array_equal(mat.known_rows(np.array([1])), [[214.0, 230.0]])
    r, c = mat.lines(np.array([0, 2]), np.array([1]))
    assert r.tolist() == [[14.0, 30.0], [114.0, 130.0]] and c.tolist() == [[30.0], [230.0], [130.0]]
    assert calls == [4, 2] and fn.evaluations == 6  # only (0, 3, 0) and (1, 3, 0) were new


def test_grow_bond_is_not_stopped_by_probes_where_f_is_negligible():
    # rank 5 on 12 of 1500 columns, zero on the others (the probes' floor draws those often):
    # a probe there checks nothing, so it must not end the update
    for seed in range(10):
        rng = np.random.default_rng(seed)
        a = np.zeros((30, 1500))
        live = rng.choice(1500, 12, replace=False)
        a[:, live] = rng.standard_normal((30, 5)) @ rng.standard_normal((5, 12))
        r0, c0 = np.unravel_index(np.argmax(np.abs(a)), a.shape)
        rows, cols, err = grow_bond(lambda r, c: (a[r, :], a[:, c]), a.shape, [r0], [c0], rng=rng, abstol=1e-10)
        assert len(rows) == 5, seed
        cross = a[:, cols] @ np.linalg.solve(a[np.ix_(rows, cols)], a[rows, :])
        assert np.abs(cross - a).max() < 1e-9 * np.abs(a).max()


def test_a_long_train_costs_few_calls_to_f():
    """A bond update reads its lines in one or two calls (the first probes ride along with the
    pivot lines; rows known from the columns are not requested; full bonds are skipped)."""
    dims = [2] * 20
    cores, bonds = random_tt(dims, 10, 0)
    calls = []

    def f(i):
        calls.append(len(i))
        return tt_values(cores, i)

    res = tci.crossinterpolate2(f, dims, batched=True, tolerance=1e-12, pivot_search="fiber", global_pivots=0)
    assert res.tt.bond_dims == bonds[1:-1] and sum(calls) == res.evaluations
    sweeps, L = len(res.errors), len(dims)
    # 157 calls in 6 sweeps (the bound: 213; before the lines were read together, 237)
    assert len(calls) <= 3 * (L - 1) * sweeps // 2 + 2 * L + 2, (len(calls), sweeps)


def test_one_sweep_of_the_gaussian_samples_little_beyond_its_parameters():
    """The 5-dimensional Gaussian of the benchmark (40^5 points): one sweep reaches 1e-8 with
    at most 1.3 times the parameters of its train (the probes that find no pivot are the rest;
    their batches stop at the neighbouring bond's rank): 1.16 .. 1.22 on these seeds, 1.40 ..
    1.43 when the batches doubled past it."""
    n, L, a = 40, 5, 9.0
    x = a * np.polynomial.legendre.leggauss(n)[0]
    A = np.eye(L) + 0.35 * (np.eye(L, k=1) + np.eye(L, k=-1))

    def f(i):
        X = x[i]
        return np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, A, X))

    idx = np.random.default_rng(1).integers(0, n, (20000, L))
    for seed in range(4):
        res = tci.crossinterpolate2(
            f, [n] * L, batched=True, tolerance=1e-8, max_iter=1, pivot_search="fiber", global_pivots=0, seed=seed
        )
        err = np.abs(np.asarray(tci.tt_evaluate(res.tt, idx)) - f(idx)).max() / res.max_sample
        assert err < 1e-8, (seed, err)
        assert res.evaluations <= 1.3 * parameters([n] * L, res.tt.bond_dims), (seed, res.evaluations)


# ---- sites of dimension 1 and several initial pivots -------------------------------------------
M_RANK2 = np.array([[1.0, 2.0], [3.0, 5.0]])


def test_fiber_next_to_a_site_of_dimension_one_finds_the_full_rank():
    # f(i0, 0, i2) = M[i0, i2], rank 2: the bonds on either side of the middle site must not
    # hold each other at rank 1
    res = tci.crossinterpolate2(lambda i: M_RANK2[i[:, 0], i[:, 2]], [2, 1, 2], batched=True, pivot_search="fiber")
    assert res.termination == "converged" and res.tt.bond_dims == [2, 2]
    assert np.abs(np.asarray(res.tt.to_dense()).reshape(2, 2) - M_RANK2).max() < 1e-12
    assert res.errors[-1] < 1e-12


def test_fiber_error_estimate_is_honest_when_the_rank_cap_leaves_an_error():
    # rank 1 of M: the best cross through its largest entry 5 leaves 1 - 2 * 3 / 5 = -0.2 at
    # (0, 0), relative 0.2 / 5; the estimate must see it (it was 0 on every bond)
    res = tci.crossinterpolate2(
        lambda i: M_RANK2[i[:, 0], i[:, 2]], [2, 1, 2], batched=True, pivot_search="fiber", max_bond=1
    )
    true = np.abs(np.asarray(res.tt.to_dense()).reshape(2, 2) - M_RANK2).max() / 5.0
    assert true == pytest.approx(0.04) and res.errors[-1] == pytest.approx(true)


@pytest.mark.parametrize("dims", [[5, 1, 3, 7], [1, 1, 2, 1, 5], [2, 1, 1, 3, 1], [3, 1, 1, 1, 3], [1, 4, 1]])
@pytest.mark.parametrize("rank", [2, 3])
def test_fiber_recovers_random_trains_with_sites_of_dimension_one(dims, rank):
    cores, bonds = random_tt(dims, rank, 7 * rank + len(dims))
    res = tci.crossinterpolate2(
        lambda i: tt_values(cores, i), dims, batched=True, tolerance=1e-12, pivot_search="fiber"
    )
    ref = tt_values(cores, all_indices(dims))
    true = np.abs(np.asarray(res.tt.to_dense()).reshape(-1) - ref).max() / np.abs(ref).max()
    assert res.termination == "converged" and res.tt.bond_dims == bonds[1:-1]
    assert true < 1e-12 and res.errors[-1] < 1e-12


def _shared(i):
    return 1.0 + i.sum() + i[0] * i[2]


def _shared4(i):
    return 1.0 + i.sum() + i[0] * i[2] + np.sin(i[1] * i[3])


@pytest.mark.parametrize(
    "f,dims,pivots",
    [
        (_shared, [3, 3, 3], [[0, 0, 0], [0, 0, 1]]),
        (_shared4, [3] * 4, [[0, 0, 0, 0], [1, 0, 0, 0]]),
        (_shared4, [3] * 4, [[1, 2, 0, 1], [1, 2, 0, 2]]),
        (_shared4, [3] * 4, [[0, 0, 0, 0], [1, 2, 0, 1], [1, 2, 0, 2], [2, 2, 2, 2], [0, 1, 2, 0]]),
        (_shared4, [1, 3, 1, 3], [[0, 0, 0, 0], [0, 2, 0, 1], [0, 2, 0, 2]]),
    ],
)
def test_fiber_from_initial_pivots_sharing_a_prefix_or_suffix(f, dims, pivots):
    res = tci.crossinterpolate2(f, dims, pivots, tolerance=1e-12, pivot_search="fiber")
    idx = all_indices(dims)
    ref = np.array([f(i) for i in idx])
    assert np.abs(np.asarray(tci.tt_evaluate(res.tt, idx)) - ref).max() < 1e-12 * np.abs(ref).max()
    assert res.termination == "converged"
    I, J = res.cross.I, res.cross.J
    for k in range(len(dims) - 1):  # nested and square
        assert {tuple(r[:-1]) for r in I[k + 1]} <= {tuple(r) for r in I[k]}
        assert {tuple(c[1:]) for c in J[k]} <= {tuple(c) for c in J[k + 1]}
        assert len(I[k + 1]) == len(J[k])


@pytest.mark.parametrize(
    "f,R,points", [(np.exp, 4, [0, 1]), (lambda x: np.sin(20 * x) + x * x, 6, [0, 1, 2, 33])], ids=["exp", "sin"]
)
def test_quantics_fiber_from_initial_points_sharing_their_leading_bits(f, R, points):
    g = Q.Grid(R)
    qtt = Q.quantics_interpolate(f, g, initial_points=points, tolerance=1e-12, pivot_search="fiber")
    x = np.arange(2**R) / 2**R  # Grid(R) on [0, 1): the points i / 2**R
    assert np.abs(qtt.to_values() - f(x)).max() < 1e-12 * np.abs(f(x)).max()
    assert qtt.tci.termination == "converged"
