"""Tensor cross interpolation (issue 26a): the LU kernel, the cache, TCI2 on tensor trains of
known rank (exact recovery with few evaluations), 5-dimensional integrals against closed
forms, termination reasons, the tensor-train helpers against dense arrays, derivatives
through the interpolant against finite differences of re-interpolation, and bad input."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import tci
from tensor4all.tci.cache import CachedFunction
from tensor4all.tci.lu import rrlu, rrlu_rook
from tensor4all.tci.tci2 import stratified_starts
from tidu.testing import check_grads


# ---- helpers ---------------------------------------------------------------------------------
def random_tt(dims, rank, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    L = len(dims)
    bonds = [1] + [min(rank, math.prod(dims[: k + 1]), math.prod(dims[k + 1 :])) for k in range(L - 1)] + [1]
    cores = []
    for k, d in enumerate(dims):
        a = rng.standard_normal((bonds[k], d, bonds[k + 1]))
        if np.issubdtype(dtype, np.complexfloating):
            a = a + 1j * rng.standard_normal(a.shape)
        cores.append(a)
    return cores, bonds


def tt_values(cores, idx):
    env = cores[0][0, idx[:, 0], :]
    for k in range(1, len(cores)):
        env = np.einsum("nr,rns->ns", env, cores[k][:, idx[:, k], :])
    return env[:, 0]


def all_indices(dims):
    return np.stack(np.unravel_index(np.arange(math.prod(dims)), dims), axis=1)


def dense(mps):
    return np.asarray(mps.to_dense())


# ---- the LU kernel ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("m,n,k", [(12, 9, 4), (5, 20, 5), (30, 30, 1)])
def test_rrlu_reveals_the_rank_and_its_cross_reproduces_the_matrix(m, n, k, dtype):
    rng = np.random.default_rng(m * n + k)
    a = (rng.standard_normal((m, k)) @ rng.standard_normal((k, n))).astype(dtype)
    if dtype == np.complex128:
        a = a + 1j * (rng.standard_normal((m, k)) @ rng.standard_normal((k, n)))[:, :]  # rank <= 2k
    lu = rrlu(a, abstol=1e-10 * np.abs(a).max())
    assert lu.rank == np.linalg.matrix_rank(a)
    cross = a[:, lu.cols] @ np.linalg.solve(a[np.ix_(lu.rows, lu.cols)], a[lu.rows, :])
    assert np.abs(cross - a).max() < 1e-10 * np.abs(a).max()
    assert lu.error < 1e-10 * np.abs(a).max()
    assert lu.pivots[0] == pytest.approx(np.abs(a).max())


def test_rrlu_error_is_the_largest_residual_and_max_rank_caps():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((15, 11))
    lu = rrlu(a, max_rank=4)
    assert lu.rank == 4
    cross = a[:, lu.cols] @ np.linalg.solve(a[np.ix_(lu.rows, lu.cols)], a[lu.rows, :])
    assert lu.error == pytest.approx(np.abs(a - cross).max(), rel=1e-10)
    assert lu.pivots[0] == pytest.approx(np.abs(a).max())  # full pivoting starts at the max
    assert rrlu(np.zeros((3, 4))).rank == 0
    assert rrlu(a, abstol=np.inf).rank == 1  # the first pivot is always taken


def test_rrlu_rook_finds_the_rank_from_a_few_rows_and_columns():
    rng = np.random.default_rng(1)
    m, n, k = 60, 70, 5
    a = rng.standard_normal((m, k)) @ rng.standard_normal((k, n))
    seen = np.zeros(a.shape, bool)

    def block(r, c):
        seen[np.ix_(r, c)] = True
        return a[np.ix_(r, c)]

    lu = rrlu_rook(block, a.shape, np.array([], int), np.array([], int), rng=np.random.default_rng(0), abstol=1e-10)
    assert lu.rank == k
    cross = a[:, lu.cols] @ np.linalg.solve(a[np.ix_(lu.rows, lu.cols)], a[lu.rows, :])
    assert np.abs(cross - a).max() < 1e-9
    assert seen.mean() < 0.6


# ---- the cache ------------------------------------------------------------------------------
def test_cache_counts_distinct_points_and_lays_out_crosses():
    calls = []

    def f(idx):
        calls.append(len(idx))
        return idx @ np.array([100.0, 10.0, 1.0])

    fn = CachedFunction(f, [3, 4, 5], batched=True)
    rows = np.array([[0], [2]])
    cols = np.array([[1, 4], [3, 0], [1, 4]])
    m = fn.cross(rows, cols)
    assert m.tolist() == [[14.0, 30.0, 14.0], [214.0, 230.0, 214.0]]
    assert fn.evaluations == 4 and calls == [4]
    np.testing.assert_array_equal(fn.values(np.array([[2, 3, 0], [1, 1, 1]])), [230.0, 111.0])
    assert fn.evaluations == 5 and calls == [4, 1]


def test_cache_on_a_grid_beyond_int64_and_complex_values():
    dims = [2] * 70
    fn = CachedFunction(lambda i: complex(i.sum(), 1.0) if i[0] else float(i.sum()), dims, batched=False)
    p = np.zeros((3, 70), dtype=np.int64)
    p[1, -1] = 1
    p[2, 0] = 1
    np.testing.assert_array_equal(fn.values(p), [0, 1, 1 + 1j])
    assert fn.complex and fn.evaluations == 3
    np.testing.assert_array_equal(fn.values(p[::-1]), [1 + 1j, 1, 0])
    assert fn.evaluations == 3


# ---- TCI2 on tensor trains of known rank ------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(
    L=st.integers(3, 7),
    d=st.integers(2, 4),
    rank=st.integers(1, 4),
    seed=st.integers(0, 10**6),
    complex_=st.booleans(),
    search=st.sampled_from(["full", "rook"]),
)
def test_tci_recovers_a_random_tensor_train_exactly(L, d, rank, seed, complex_, search):
    dims = [d] * L
    cores, bonds = random_tt(dims, rank, seed, np.complex128 if complex_ else np.float64)
    res = tci.crossinterpolate2(
        lambda i: tt_values(cores, i), dims, batched=True, tolerance=1e-12, pivot_search=search, seed=seed
    )
    idx = all_indices(dims) if d**L <= 5000 else np.random.default_rng(seed).integers(0, d, (5000, L))
    ref = tt_values(cores, idx)
    got = np.asarray(tci.tt_evaluate(res.tt, idx))
    assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max() * 10  # 1e-12 relative, 10 ulps of slack
    assert res.termination == "converged"
    assert res.tt.bond_dims == bonds[1:-1]  # the minimal ranks, no more
    assert res.tt.dtype == (tf.complex128 if complex_ else tf.float64)
    # the minimal number of evaluations: the entries of a one-site cross of these ranks (the
    # parameters of the train), plus the global pivot search (5 stratified random lines per sweep)
    minimal = sum(bonds[k] * d * bonds[k + 1] for k in range(L))
    assert res.evaluations <= 6 * minimal + len(res.errors) * 5 * d * L


def test_tci_evaluations_on_a_larger_train_are_a_small_multiple_of_the_minimum():
    dims = [2] * 16
    cores, bonds = random_tt(dims, 8, 3)
    res = tci.crossinterpolate2(lambda i: tt_values(cores, i), dims, batched=True, tolerance=1e-12)
    idx = np.random.default_rng(0).integers(0, 2, (4000, 16))
    ref = tt_values(cores, idx)
    assert np.abs(np.asarray(tci.tt_evaluate(res.tt, idx)) - ref).max() <= 1e-12 * np.abs(ref).max()
    minimal = sum(bonds[k] * 2 * bonds[k + 1] for k in range(16))
    assert res.evaluations <= 3 * minimal, (res.evaluations, minimal)  # 3446 of 1448


def test_batched_and_single_point_functions_give_the_same_interpolant():
    dims = [3, 4, 3, 2]
    cores, _ = random_tt(dims, 3, 7)
    a = tci.crossinterpolate2(lambda i: tt_values(cores, i), dims, batched=True)
    b = tci.crossinterpolate2(lambda i: float(tt_values(cores, i[None, :])[0]), dims)
    np.testing.assert_allclose(dense(a.tt), dense(b.tt), rtol=1e-12, atol=1e-12)
    assert a.evaluations == b.evaluations


def test_one_site_and_zero_at_the_default_pivot():
    res = tci.crossinterpolate2(lambda i: float(i[0] ** 2), [5])
    np.testing.assert_allclose(dense(res.tt), [0, 1, 4, 9, 16])
    assert res.evaluations == 5 and res.termination == "converged"
    dims = [4] * 5
    res = tci.crossinterpolate2(lambda i: i.sum(axis=1).astype(float), dims, batched=True)  # 0 at (0, ..., 0)
    np.testing.assert_allclose(dense(res.tt), all_indices(dims).sum(axis=1), atol=1e-10)


# ---- integrals ---------------------------------------------------------------------------------
def test_five_dimensional_gaussian_with_couplings_to_1e_8():
    """exp(-x.A.x/2) with A tridiagonal (not separable) over R^5: (2 pi)^(5/2) / sqrt(det A)."""
    n, L, a = 40, 5, 9.0
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = a * x, a * w
    A = np.eye(L) + 0.35 * (np.eye(L, k=1) + np.eye(L, k=-1))

    def f(i):
        X = x[i]
        return np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, A, X))

    res = tci.crossinterpolate2(f, [n] * L, batched=True, tolerance=1e-10, pivot_search="rook")
    exact = (2 * np.pi) ** (L / 2) / np.sqrt(np.linalg.det(A))
    got = float(tci.tt_sum(res.tt, [w] * L))
    assert abs(got - exact) <= 1e-8 * exact
    assert res.termination == "converged" and res.evaluations < 0.01 * n**L


def test_five_dimensional_lorentzians_and_a_complex_plane_wave():
    n, L = 30, 5
    x, w = np.polynomial.legendre.leggauss(n)  # on [-1, 1]
    res = tci.crossinterpolate2(lambda i: 1.0 / np.prod(1.0 + x[i] ** 2, axis=1), [n] * L, batched=True)
    assert float(tci.tt_sum(res.tt, [w] * L)) == pytest.approx((np.pi / 2) ** L, rel=1e-12)
    k = np.array([0.5, 1.0, 1.5, 2.0, 2.5])
    res = tci.crossinterpolate2(lambda i: np.exp(1j * x[i] @ k), [n] * L, batched=True)
    exact = np.prod(2 * np.sin(k) / k)
    assert res.tt.dtype == tf.complex128
    assert complex(tci.tt_sum(res.tt, [w] * L)) == pytest.approx(exact, rel=1e-12)


# ---- termination ------------------------------------------------------------------------------
def test_termination_reasons():
    dims = [3] * 6
    cores, _ = random_tt(dims, 6, 2)
    f = lambda i: tt_values(cores, i)  # noqa: E731
    assert tci.crossinterpolate2(f, dims, batched=True).termination == "converged"
    capped = tci.crossinterpolate2(f, dims, batched=True, max_bond=3)
    assert capped.termination == "max_bond" and max(capped.tt.bond_dims) == 3
    short = tci.crossinterpolate2(f, dims, batched=True, max_iter=1)
    assert short.termination == "max_iter" and len(short.errors) == 1 == len(short.ranks)
    assert short.error == short.errors[-1]


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(1, 5), min_size=1, max_size=8), n=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_global_search_starts_are_one_per_slice_of_the_lexicographic_order(dims, n, seed):
    # start i lies in the i-th of n equal slices of the index set in lexicographic order, up
    # to the resolution of its leading sites (the first ones whose product reaches n)
    starts = stratified_starts(dims, n, np.random.default_rng(seed))
    assert starts.shape == (n, len(dims))
    assert np.all((starts >= 0) & (starts < np.array(dims)))
    for i, start in enumerate(starts):
        prefix, cells = 0, 1
        for k, d in enumerate(dims):
            if cells >= n:
                break
            prefix, cells = prefix * d + int(start[k]), cells * d
        assert prefix * n < (i + 1) * cells and (prefix + 1) * n > i * cells  # the cell meets slice i


def test_global_search_starts_on_binary_digits_cover_every_leading_pattern():
    starts = stratified_starts([2] * 12, 8, np.random.default_rng(3))
    leading = starts[:, 0] * 4 + starts[:, 1] * 2 + starts[:, 2]
    assert leading.tolist() == list(range(8))


def test_noise_below_the_tolerance_does_not_grow_the_rank():
    dims = [2] * 12
    rng = np.random.default_rng(0)
    table = rng.standard_normal(2**12) * 1e-13 + 1.0

    def f(i):
        return table[i @ (2 ** np.arange(11, -1, -1))]

    res = tci.crossinterpolate2(f, dims, batched=True, tolerance=1e-8)
    assert max(res.tt.bond_dims) == 1 and res.termination == "converged"


# ---- tensor-train helpers ------------------------------------------------------------------------
def test_evaluate_sum_add_multiply_against_dense():
    a = t4a.MPS.random(5, d=3, bond_dim=4, seed=1)
    b = t4a.MPS.random(5, d=3, bond_dim=2, seed=2, dtype=tf.complex128)
    da, db = dense(a), dense(b)
    idx = all_indices([3] * 5)
    np.testing.assert_allclose(np.asarray(tci.tt_evaluate(a, idx)), da, atol=1e-13)
    assert float(tci.tt_evaluate(a, [2, 0, 1, 1, 2])) == pytest.approx(da[2 * 81 + 9 + 3 + 2])
    assert tuple(tci.tt_evaluate(a, [[2, 0, 1, 1, 2]]).shape) == (1,)
    w = [np.arange(1.0, 4.0)] * 5
    weights = np.prod(np.array(w)[np.arange(5), idx], axis=1)
    assert float(tci.tt_sum(a, w)) == pytest.approx(da @ weights)
    assert float(tci.tt_sum(a)) == pytest.approx(da.sum())
    np.testing.assert_allclose(dense(tci.tt_add(a, b)), da + db, atol=1e-13)
    np.testing.assert_allclose(dense(tci.tt_multiply(a, b)), da * db, atol=1e-13)
    assert tci.tt_multiply(a, b).bond_dims == [x * y for x, y in zip(a.bond_dims, b.bond_dims)]
    one = t4a.MPS([np.ones((1, 3, 1))])
    np.testing.assert_allclose(dense(tci.tt_add(one, one)), [2, 2, 2])


def test_helpers_are_differentiable():
    a = t4a.MPS.random(4, d=2, bond_dim=3, seed=4)
    idx = np.array([[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 0, 1]])
    check_grads(lambda p: tf.sum(tci.tt_evaluate(p, idx)), (a,), order=1)
    check_grads(lambda p: tci.tt_sum(tci.tt_multiply(p, p), [np.array([0.3, 0.7])] * 4), (a,), order=2)
    check_grads(lambda p: tci.tt_sum(tci.tt_add(p, p)), (a,), order=1)


# ---- derivatives through the interpolant -------------------------------------------------------------
N, LD = 20, 4
XG, WG = np.polynomial.legendre.leggauss(N)


def f_np(i, theta):
    X = XG[i]
    return np.exp(-theta * np.sum(X**2, axis=1) + 0.4 * np.sum(X[:, 1:] * X[:, :-1], axis=1)) * np.cos(X[:, 0])


def f_tf(i, theta):
    X = XG[i]
    return tf.exp(
        -theta * tf.asarray(np.sum(X**2, axis=1)) + tf.asarray(0.4 * np.sum(X[:, 1:] * X[:, :-1], axis=1))
    ) * tf.asarray(np.cos(X[:, 0]))


def _run(theta):
    return tci.crossinterpolate2(lambda i: f_np(i, theta), [N] * LD, batched=True, tolerance=1e-12)


def test_interpolant_with_the_sampled_values_is_the_result():
    res = _run(0.8)
    np.testing.assert_allclose(
        dense(tci.interpolant(res, f_np(res.points, 0.8))), dense(res.tt), rtol=1e-13, atol=1e-15
    )


@pytest.mark.parametrize("quantity", ["integral", "value", "fourier"])
def test_gradient_at_fixed_pivots_matches_finite_differences_of_reinterpolation(quantity):
    theta0, h = 0.8, 1e-4
    idx = np.array([3, 7, 11, 19])
    phase = [np.exp(-2j * np.pi * np.arange(N) / N)] + [WG] * (LD - 1)

    def q(tt):
        if quantity == "integral":
            return tci.tt_sum(tt, [WG] * LD)
        if quantity == "value":
            return tci.tt_evaluate(tt, idx)
        return tf.real(tci.tt_sum(tt, phase))

    res = _run(theta0)
    g = tidu.grad(lambda th: q(tci.interpolant(res, f_tf(res.points, th))))(tf.asarray(theta0))
    fd = (float(q(_run(theta0 + h).tt)) - float(q(_run(theta0 - h).tt))) / (2 * h)
    assert float(g) == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_interpolant_derivatives_in_the_values_pass_the_gradient_checks():
    dims = [3, 3, 3]
    cores, _ = random_tt(dims, 2, 5)
    res = tci.crossinterpolate2(lambda i: tt_values(cores, i), dims, batched=True)
    v = tf.asarray(tt_values(cores, res.points))
    check_grads(lambda v: tci.tt_sum(tci.interpolant(res, v), [np.array([1.0, 0.5, 0.25])] * 3), (v,), order=2)


# ---- bad input ----------------------------------------------------------------------------------------
def _ok(i):
    return 1.0


BAD = [
    ("zero-dim", lambda: tci.crossinterpolate2(_ok, [2, 0, 3]), tci.LocalDimsError, "local_dims[1] is 0"),
    ("empty-dims", lambda: tci.crossinterpolate2(_ok, []), tci.LocalDimsError, "local_dims is empty"),
    ("float-dim", lambda: tci.crossinterpolate2(_ok, [2, 2.5]), tci.TCITypeError, "local_dims[1] must be an integer"),
    ("dims-str", lambda: tci.crossinterpolate2(_ok, "22"), tci.TCITypeError, "sequence of positive integers"),
    ("not-callable", lambda: tci.crossinterpolate2(3.0, [2, 2]), tci.TCITypeError, "f must be callable"),
    ("tol-zero", lambda: tci.crossinterpolate2(_ok, [2, 2], tolerance=0.0), tci.TCIOptionError, "tolerance must be"),
    ("tol-negative", lambda: tci.crossinterpolate2(_ok, [2, 2], tolerance=-1e-3), tci.TCIOptionError, "> 0"),
    ("tol-nan", lambda: tci.crossinterpolate2(_ok, [2, 2], tolerance=float("nan")), tci.TCIOptionError, "finite"),
    ("tol-str", lambda: tci.crossinterpolate2(_ok, [2, 2], tolerance="1e-8"), tci.TCITypeError, "real number"),
    (
        "tol-relative-2",
        lambda: tci.crossinterpolate2(_ok, [2, 2], tolerance=2),
        tci.TCIOptionError,
        "> 0 and < 1 (it is relative to max|f|",
    ),
    (
        "tol-relative-1",
        lambda: tci.crossinterpolate2(_ok, [2, 2], tolerance=1.0),
        tci.TCIOptionError,
        "normalize_error=False for an absolute tolerance",
    ),
    (
        "tol-absolute-inf",
        lambda: tci.crossinterpolate2(_ok, [2, 2], tolerance=np.inf, normalize_error=False),
        tci.TCIOptionError,
        "an absolute error",
    ),
    ("max-bond", lambda: tci.crossinterpolate2(_ok, [2, 2], max_bond=0), tci.TCIOptionError, "max_bond"),
    ("max-iter", lambda: tci.crossinterpolate2(_ok, [2, 2], max_iter=0), tci.TCIOptionError, "max_iter"),
    ("search", lambda: tci.crossinterpolate2(_ok, [2, 2], pivot_search="best"), tci.TCIOptionError, "'full', 'rook'"),
    ("global", lambda: tci.crossinterpolate2(_ok, [2, 2], global_pivots=-1), tci.TCIOptionError, "global_pivots"),
    ("batched-str", lambda: tci.crossinterpolate2(_ok, [2, 2], batched="yes"), tci.TCITypeError, "batched"),
    ("seed", lambda: tci.crossinterpolate2(_ok, [2, 2], seed=-3), tci.TCIOptionError, "seed"),
    # a number that is not an integer is a TypeError (as range(2.5)), not an option out of range
    ("max-bond-float", lambda: tci.crossinterpolate2(_ok, [2, 2], max_bond=2.5), tci.TCITypeError, "got float 2.5"),
    ("max-bond-bool", lambda: tci.crossinterpolate2(_ok, [2, 2], max_bond=True), tci.TCITypeError, "got bool"),
    ("max-iter-float", lambda: tci.crossinterpolate2(_ok, [2, 2], max_iter=3.0), tci.TCITypeError, "max_iter"),
    ("global-float", lambda: tci.crossinterpolate2(_ok, [2, 2], global_pivots=1.5), tci.TCITypeError, "global"),
    ("seed-str", lambda: tci.crossinterpolate2(_ok, [2, 2], seed="1"), tci.TCITypeError, "got str '1'"),
    (
        "pivot-range",
        lambda: tci.crossinterpolate2(_ok, [2, 3], [[0, 3]]),
        tci.MultiIndexOutOfRangeError,
        "entry 3 at site 1, outside 0 .. 2",
    ),
    (
        "pivot-negative",
        lambda: tci.crossinterpolate2(_ok, [2, 3], [0, -1]),
        tci.MultiIndexOutOfRangeError,
        "entry -1 at site 1",
    ),
    ("pivot-length", lambda: tci.crossinterpolate2(_ok, [2, 3], [[0, 1, 0]]), tci.MultiIndexError, "2 entries"),
    ("pivot-float", lambda: tci.crossinterpolate2(_ok, [2, 3], [[0.5, 1]]), tci.TCITypeError, "must hold integers"),
    (
        "pivot-zero",
        lambda: tci.crossinterpolate2(lambda i: 0.0, [2, 3], [[1, 1]]),
        tci.ZeroFunctionError,
        "zero at every initial pivot",
    ),
    ("all-zero", lambda: tci.crossinterpolate2(lambda i: 0.0, [2, 3]), tci.ZeroFunctionError, "random ones"),
    (
        "nan",
        lambda: tci.crossinterpolate2(lambda i: np.nan if i[1] == 2 else 1.0, [2, 3]),
        tci.NonFiniteValueError,
        "at the multi-index [0, 2]",
    ),
    (
        "inf-batched",
        lambda: tci.crossinterpolate2(lambda i: np.where(i[:, 0] == 0, np.inf, 1.0), [2, 3], [[1, 1]], batched=True),
        tci.NonFiniteValueError,
        "returned inf",
    ),
    (
        "batched-shape",
        lambda: tci.crossinterpolate2(lambda i: np.ones((len(i), 1)), [2, 3], batched=True),
        tci.FunctionShapeError,
        "must return one value per multi-index",
    ),
    (
        "batched-scalar",
        lambda: tci.crossinterpolate2(lambda i: 1.0, [2, 3], batched=True),
        tci.FunctionShapeError,
        "got shape ()",
    ),
    (
        "single-array",
        lambda: tci.crossinterpolate2(lambda i: np.ones(2), [2, 3]),
        tci.FunctionShapeError,
        "pass batched=True",
    ),
    ("str-value", lambda: tci.crossinterpolate2(lambda i: "x", [2, 3]), tci.FunctionValueError, "not a number"),
    ("interp-type", lambda: tci.interpolant("res", [1.0]), tci.TCITypeError, "must be a TCIResult"),
    ("eval-type", lambda: tci.tt_evaluate(np.ones((1, 2, 1)), [0]), tci.TCITypeError, "takes a tensor4all.MPS"),
    (
        "eval-range",
        lambda: tci.tt_evaluate(t4a.MPS.random(3, d=2), [0, 2, 0]),
        tci.MultiIndexOutOfRangeError,
        "entry 2 at site 1",
    ),
    (
        "sum-weights",
        lambda: tci.tt_sum(t4a.MPS.random(3, d=2), [np.ones(2)] * 2),
        t4a.DimensionMismatchError,
        "list of 3 vectors",
    ),
    (
        "sum-weight-len",
        lambda: tci.tt_sum(t4a.MPS.random(3, d=2), [np.ones(3)] * 3),
        t4a.DimensionMismatchError,
        "weights[0] must have shape (2,)",
    ),
    (
        "add-dims",
        lambda: tci.tt_add(t4a.MPS.random(3, d=2), t4a.MPS.random(3, d=3)),
        t4a.DimensionMismatchError,
        "local dimensions",
    ),
    ("mul-type", lambda: tci.tt_multiply(t4a.MPS.random(3, d=2), 2.0), tci.TCITypeError, "MPS"),
]


@pytest.mark.parametrize("name,call,exc,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_typed_error_naming_the_problem(name, call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)
    assert isinstance(info.value, t4a.Tensor4allError)


def test_interpolant_checks_the_values():
    res = tci.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2, 2], batched=True)
    with pytest.raises(t4a.DimensionMismatchError, match=f"shape \\({len(res.points)},\\)"):
        tci.interpolant(res, np.ones(len(res.points) + 1))


def test_interpolant_refuses_non_finite_values_naming_the_first():
    """Issue 47: the values are checked before the solves, naming ``values[i]`` and its point."""
    res = tci.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [4, 4, 4], batched=True)
    v = 1.0 + res.points.sum(axis=1)
    v[[3, 5]] = [np.nan, np.inf]
    want = f"interpolant: values[3] is nan, the value at result.points[3] = {res.points[3].tolist()}"
    with pytest.raises(tci.NonFiniteValueError, match=re.escape(want)):
        tci.interpolant(res, v)
    w = tf.asarray(np.where(np.arange(len(v)) == 3, 1.0, v))  # inf at 5 only, traced under grad
    with pytest.raises(tci.NonFiniteValueError, match=r"values\[5\] is inf"):
        tidu.grad(lambda s: tci.tt_sum(tci.interpolant(res, s * w)))(tf.asarray(1.0))


def test_an_absolute_tolerance_may_exceed_one():
    res = tci.crossinterpolate2(lambda i: 10.0 * (1.0 + i[0]), [2, 2], tolerance=5.0, normalize_error=False)
    assert res.termination == "converged"


def test_a_traced_f_gives_the_train_at_fixed_pivots():
    """Issue 47: ``crossinterpolate2`` of ``f`` computed from a parameter under ``tidu.grad``
    searches the pivots on the values and rebuilds the train under tracing (as ``interpolant``):
    the sum over the grid of exp(-theta s) against its closed form, and finite differences."""
    x = np.linspace(0.0, 1.0, 8)
    S = x[:, None, None] + x[None, :, None] + x[None, None, :]

    def total(th, batched):
        if batched:

            def f(i):
                return tf.exp(-th * tf.asarray(x[i].sum(axis=1)))
        else:

            def f(i):
                return tf.exp(-th * float(x[i].sum()))

        return tci.tt_sum(tci.crossinterpolate2(f, [8] * 3, batched=batched, tolerance=1e-12).tt)

    for batched in (False, True):
        g = float(tidu.grad(total)(tf.asarray(0.7), batched))
        assert g == pytest.approx(float(np.sum(-S * np.exp(-0.7 * S))), rel=1e-10)
    check_grads(lambda th: total(th, True), (tf.asarray(0.7),), order=2)
    with pytest.raises(t4a.NotDifferentiableError, match=r"tci.interpolant\(res, f\(res.points, theta\)\)"):
        tf.jit(lambda th: total(th, True))(tf.asarray(0.7))
