"""Tree tensor networks (issue 54): topologies, canonical forms, truncation, contraction and
sums against the dense tensor on random trees (hypothesis over Pruefer sequences up to 12
nodes); tree operators against explicit Kronecker products; the Heisenberg model on a binary
tree of 15 sites against exact diagonalization of a sparse matrix built here; tree TCI on
random networks of known ranks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from tensor4all import trees
from tensor4all.algorithms.schedule import sweep_schedule, tree_schedule
from tensor4all.algorithms.sweep import Sweep
from tensor4all.trees.sweeps import TreeSweep


@st.composite
def random_trees(draw, max_nodes: int = 12):
    n = draw(st.integers(1, max_nodes))
    if n == 1:
        return trees.Tree([], 1)
    if draw(st.booleans()):
        return trees.Tree.from_prufer(draw(st.lists(st.integers(0, n - 1), min_size=n - 2, max_size=n - 2)))
    parents = [-1] + [draw(st.integers(0, u - 1)) for u in range(1, n)]
    return trees.Tree.from_parents(parents)


@st.composite
def networks(draw, max_nodes: int = 10, max_bond: int = 3):
    tree = draw(random_trees(max_nodes))
    dims = draw(st.lists(st.integers(1, 3), min_size=tree.n_nodes, max_size=tree.n_nodes))
    while np.prod(dims) > 4096:  # small dense tensors: the file runs fast
        dims[int(np.argmax(dims))] -= 1
    bonds = {e: draw(st.integers(1, max_bond)) for e in tree.edges}
    dtype = draw(st.sampled_from([np.float64, np.complex128]))
    return trees.TreeTN.random(tree, dims, bonds, seed=draw(st.integers(0, 2**16)), dtype=dtype)


def _isometry_toward(psi: trees.TreeTN, u: int, c: int) -> bool:
    nxt = psi.tree.path_between(u, c)[1]
    t = np.moveaxis(psi.tensors[u], psi.tree.leg(u, nxt), -1)
    m = t.reshape(-1, t.shape[-1])
    return np.allclose(m.conj().T @ m, np.eye(m.shape[1]), atol=1e-10)


# ---- topology ------------------------------------------------------------------------------
def test_pruefer_sequences_give_every_labelled_tree_once():
    # Cayley: n^(n-2) labelled trees on n nodes, one per Pruefer sequence
    n = 5
    seen = {trees.Tree.from_prufer(seq).edges for seq in itertools.product(range(n), repeat=n - 2)}
    assert len(seen) == n ** (n - 2)
    assert all(len(e) == n - 1 for e in seen)


@settings(max_examples=30, deadline=None)
@given(random_trees())
def test_euler_tour_crosses_every_edge_twice_and_returns(tree):
    for two_site in (True, False):
        steps = tree.schedule(0, two_site)
        assert len(steps) == 2 * (tree.n_nodes - 1)
        centre = 0
        for s in steps:
            assert s.leaving == centre and s.arriving in tree.neighbours[centre]
            centre = s.arriving
        assert centre == 0
        assert sorted(s.edge for s in steps) == sorted(list(tree.edges) * 2)


def test_a_chain_is_the_path_tree():
    for L in (1, 2, 5):
        path = tuple(tuple(j for j in (i - 1, i + 1) if 0 <= j < L) for i in range(L))
        for two_site in (True, False):
            tour = tree_schedule(path, 0, two_site)
            assert [(s.site, s.direction) for s in tour] == [(s.site, s.direction) for s in sweep_schedule(L, two_site)]
    star = ((1, 2, 3), (0,), (0,), (0,))
    assert [(s.leaving, s.arriving) for s in tree_schedule(star, 0, True)] == [
        (0, 1),
        (1, 0),
        (0, 2),
        (2, 0),
        (0, 3),
        (3, 0),
    ]


def test_tree_sweeps_run_the_one_loop():
    assert issubclass(TreeSweep, Sweep) and "sweep" not in vars(TreeSweep)


# ---- the network against its dense tensor ---------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(networks(), st.data())
def test_canonical_forms_keep_the_state_and_make_isometries(psi, data):
    dense = psi.to_dense()
    c = data.draw(st.integers(0, psi.n_nodes - 1))
    phi = psi.canonicalize(c)
    np.testing.assert_allclose(phi.to_dense(), dense, atol=1e-10 * max(1.0, np.abs(dense).max()))
    assert all(_isometry_toward(phi, u, c) for u in range(psi.n_nodes) if u != c)
    c2 = data.draw(st.integers(0, psi.n_nodes - 1))  # moved along the path only
    chi = phi.canonicalize(c2)
    np.testing.assert_allclose(chi.to_dense(), dense, atol=1e-10 * max(1.0, np.abs(dense).max()))
    assert all(_isometry_toward(chi, u, c2) for u in range(psi.n_nodes) if u != c2)
    assert np.isclose(np.linalg.norm(chi.tensors[c2]), np.linalg.norm(dense))


@settings(max_examples=40, deadline=None)
@given(networks(), st.integers(1, 3), st.sampled_from([0.0, 1e-3, 0.05]))
def test_truncation_error_is_the_discarded_weight(psi, max_bond, cutoff):
    dense = psi.to_dense()
    exact = psi.truncate()
    np.testing.assert_allclose(exact.to_dense(), dense, atol=1e-10 * np.abs(dense).max())
    assert exact.truncation_error < 1e-20
    cut = psi.truncate(max_bond=max_bond, cutoff=cutoff, root=psi.n_nodes - 1)
    assert cut.max_bond <= max_bond
    err = np.linalg.norm(cut.to_dense() - dense) ** 2 / np.linalg.norm(dense) ** 2
    # nested kept bases: the projections commute and the squared error is the sum of the weights
    assert err == pytest.approx(cut.truncation_error, rel=1e-7, abs=1e-20)


@settings(max_examples=40, deadline=None)
@given(networks(), st.data())
def test_inner_add_and_evaluate_against_dense(psi, data):
    dims = [d[0] for d in psi.site_dims]
    other = trees.TreeTN.random(psi.tree, dims, data.draw(st.integers(1, 3)), seed=data.draw(st.integers(0, 99)))
    a, b = psi.to_dense(), other.to_dense()
    assert np.isclose(trees.inner(psi, other), np.vdot(a, b))
    assert np.isclose(psi.norm(), np.linalg.norm(a))
    np.testing.assert_allclose((psi + other).to_dense(), a + b, atol=1e-12 * (np.abs(a).max() + np.abs(b).max()))
    np.testing.assert_allclose(
        (psi - 2.0 * other).to_dense(), a - 2 * b, atol=1e-11 * (np.abs(a).max() + 2 * np.abs(b).max())
    )
    idx = np.array(list(itertools.product(*[range(d) for d in dims])))
    np.testing.assert_allclose(psi.evaluate(idx), a.reshape(-1), atol=1e-12 * np.abs(a).max())


def test_several_site_legs_per_node():
    rng = np.random.default_rng(0)
    tree = trees.Tree([(0, 1), (1, 2)])
    ts = [rng.standard_normal((3, 2, 2)), rng.standard_normal((3, 4, 2)), rng.standard_normal((4, 3))]
    psi = trees.TreeTN(tree, ts)
    dense = np.einsum("aij,abk,bl->ijkl", *ts)
    np.testing.assert_allclose(psi.to_dense(), dense)
    np.testing.assert_allclose(psi.canonicalize(2).to_dense(), dense, atol=1e-12)
    assert np.isclose(trees.inner(psi, psi), np.vdot(dense, dense))


# ---- tree operators ------------------------------------------------------------------------
def _kron_term(n: int, ops: dict[int, np.ndarray], d: int = 2) -> np.ndarray:
    out = np.eye(1)
    for u in range(n):
        out = np.kron(out, ops.get(u, np.eye(d)))
    return out


@settings(max_examples=15, deadline=None)
@given(random_trees(7), st.integers(0, 2**16))
def test_tree_operator_is_the_sum_of_its_terms(tree, seed):
    rng = np.random.default_rng(seed)
    n = tree.n_nodes
    terms, dense = [], np.zeros((2**n, 2**n))
    for _ in range(5):
        sites = rng.choice(n, size=int(rng.integers(1, min(n, 3) + 1)), replace=False)
        ops = {int(s): rng.standard_normal((2, 2)) for s in sites}
        c = float(rng.standard_normal())
        terms.append((c, ops))
        dense += c * _kron_term(n, ops)
    H = trees.tree_operator(tree, terms)
    np.testing.assert_allclose(H.to_matrix(), dense, atol=1e-12)
    psi = trees.TreeTN.random(tree, 2, 2, seed=seed)
    np.testing.assert_allclose(H.apply(psi).to_dense().reshape(-1), dense @ psi.to_dense().reshape(-1), atol=1e-10)


@settings(max_examples=10, deadline=None)
@given(random_trees(9), st.integers(0, 2**16))
def test_fitted_apply_is_exact_with_room_and_no_worse_than_the_svd_cut(tree, seed):
    H = trees.tree_heisenberg(tree)
    psi = trees.TreeTN.random(tree, 2, 2, seed=seed)
    exact = (H.to_matrix() @ psi.to_dense().reshape(-1)).reshape(psi.to_dense().shape)
    norm = max(np.linalg.norm(exact), 1e-300)
    full = trees.apply_fit(H, psi, max_bond=64)
    np.testing.assert_allclose(full.to_dense(), exact, atol=1e-10 * norm)
    if tree.n_nodes > 2 and norm > 1e-12:
        cut = H.apply(psi).truncate(max_bond=2)
        # each two-site update is the best tensor of its rank given the rest: never worse than the start
        fit = trees.apply_fit(H, psi, max_bond=2, sweeps=4, guess=cut)
        assert fit.max_bond <= 2
        assert np.linalg.norm(fit.to_dense() - exact) <= np.linalg.norm(cut.to_dense() - exact) * (1 + 1e-6) + 1e-12


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_solve_against_the_dense_solution(seed):
    rng = np.random.default_rng(seed)
    tree = trees.Tree.from_prufer(rng.integers(0, 8, size=6))
    sz, sp = np.diag([0.5, -0.5]), np.array([[0.0, 1.0], [0.0, 0.0]])
    terms = [(5.5, {0: np.eye(2)})]  # each S.S >= -3/4: 5.5 + H >= 0.25 on any tree of 8 nodes
    for u, v in tree.edges:
        terms += [(1.0, {u: sz, v: sz}), (0.5, {u: sp, v: sp.T}), (0.5, {u: sp.T, v: sp})]
    A = trees.tree_operator(tree, terms)
    b = trees.TreeTN.random(tree, 2, 2, seed=seed)
    dense = sum(c * _kron_term(8, ops) for c, ops in terms)
    exact = np.linalg.solve(dense, b.to_dense().reshape(-1))
    # cutoff bounds the discarded weight (squared amplitudes): 1e-22 leaves errors near 1e-11
    x = trees.tree_linsolve(A, b, max_bond=16, sweeps=3, cutoff=1e-22)
    assert np.linalg.norm(x.to_dense().reshape(-1) - exact) <= 1e-10 * np.linalg.norm(exact)


def _heisenberg_sparse(n: int, edges) -> scipy.sparse.csr_matrix:
    """sum over edges of S.S for spin 1/2, bit (n - 1 - u) of a basis state the spin of node u
    (1 = down), built from the bit patterns."""
    states = np.arange(2**n)
    rows, cols, vals = [], [], []
    diag = np.zeros(2**n)
    for u, v in edges:
        bu, bv = (states >> (n - 1 - u)) & 1, (states >> (n - 1 - v)) & 1
        diag += np.where(bu == bv, 0.25, -0.25)
        flip = bu != bv
        rows.append(states[flip])
        cols.append(states[flip] ^ ((1 << (n - 1 - u)) | (1 << (n - 1 - v))))
        vals.append(np.full(flip.sum(), 0.5))
    rows.append(states)
    cols.append(states)
    vals.append(diag)
    return scipy.sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(2**n,) * 2
    )


def test_heisenberg_operator_matches_the_sparse_matrix():
    tree = trees.Tree.from_parents([-1, 0, 0, 1, 1, 2])
    H = trees.tree_heisenberg(tree)
    np.testing.assert_allclose(H.to_matrix(), _heisenberg_sparse(6, tree.edges).toarray(), atol=1e-14)
    assert set(H.bond_dims.values()) == {5}


def test_heisenberg_on_a_binary_tree_of_15_sites_against_exact_diagonalization():
    tree = trees.Tree.from_parents([-1] + [(u - 1) // 2 for u in range(1, 15)])
    exact = scipy.sparse.linalg.eigsh(_heisenberg_sparse(15, tree.edges), k=1, which="SA", tol=1e-13)[0][0]
    res = trees.tree_dmrg(trees.tree_heisenberg(tree), max_bond=32, sweeps=8, tol=1e-12)
    assert abs(res.energy - exact) < 1e-9, (res.energy, exact)
    assert res.energies[0] >= res.energy - 1e-12
    # the state's own energy, from the dense vector
    v = res.state.to_dense().reshape(-1)
    assert abs(np.vdot(v, _heisenberg_sparse(15, tree.edges) @ v).real / np.vdot(v, v).real - exact) < 1e-9


def test_one_site_tree_sweeps_reach_the_ground_state_of_a_small_tree():
    tree = trees.Tree([(0, 1), (1, 2), (1, 3), (3, 4), (3, 5), (0, 6)])
    exact = np.linalg.eigvalsh(_heisenberg_sparse(7, tree.edges).toarray())[0]
    psi0 = trees.TreeTN.random(tree, 2, 8, seed=3)
    res = trees.tree_dmrg(trees.tree_heisenberg(tree), psi0, two_site=False, max_bond=8, sweeps=30, tol=1e-13)
    assert abs(res.energy - exact) < 1e-9


# ---- tree TCI --------------------------------------------------------------------------
def _unfolding_rank(dense: np.ndarray, side: list[int]) -> int:
    rest = [k for k in range(dense.ndim) if k not in side]
    m = dense.transpose(side + rest).reshape(int(np.prod([dense.shape[k] for k in side])), -1)
    return int(np.linalg.matrix_rank(m, tol=1e-10 * np.abs(m).max()))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_tci_recovers_a_random_network_of_known_ranks(seed):
    rng = np.random.default_rng(seed)
    n = 9
    tree = trees.Tree.from_prufer(rng.integers(0, n, size=n - 2))
    dims = [int(d) for d in rng.integers(2, 4, size=n)]
    bonds = {e: int(rng.integers(1, 4)) for e in tree.edges}
    target = trees.TreeTN.random(tree, dims, bonds, seed=seed)
    res = trees.tree_crossinterpolate(target.evaluate, tree, dims, batched=True)
    dense = target.to_dense()
    assert res.termination == "converged"
    got = res.ttn.to_dense()
    assert np.max(np.abs(got - dense)) <= 1e-12 * np.abs(dense).max()
    assert res.bond_dims == {(u, v): _unfolding_rank(dense, tree.side(u, v)) for u, v in tree.edges}
    assert res.evaluations < dense.size  # sampled, not read whole


def test_tree_tci_on_a_larger_tree_samples_a_small_part():
    rng = np.random.default_rng(7)
    tree = trees.Tree.from_prufer(rng.integers(0, 12, size=10))
    target = trees.TreeTN.random(tree, 3, 2, seed=7)
    res = trees.tree_crossinterpolate(target.evaluate, tree, 3, batched=True)
    pts = np.stack([rng.integers(0, 3, size=500) for _ in range(12)], axis=1)
    ref = target.evaluate(pts)
    assert np.max(np.abs(res.ttn.evaluate(pts) - ref)) <= 1e-12 * np.abs(ref).max()
    assert res.evaluations < 3**12 / 50


# ---- quantics layouts ----------------------------------------------------------------------
@pytest.mark.parametrize("layout", trees.LAYOUTS)
def test_quantics_layouts_map_bits_to_grid_indices(layout):
    q = trees.quantics_tree(3, 4, layout)
    assert sum(len(d) for d in q.digits) == 12
    idx = np.array(list(itertools.product(*[range(d) for d in q.local_dims])))
    grid = q.grid_indices(idx)
    assert len({tuple(g) for g in grid}) == 16**3  # a bijection onto the grid


def test_tree_layout_keeps_a_product_of_three_functions_at_the_rank_of_one():
    R = 5
    g = lambda t: np.exp(-(((t + 0.5) / 2**R - 0.5) ** 2) / 0.02)  # noqa: E731
    f = lambda idx: g(idx[:, 0]) * g(idx[:, 1]) * g(idx[:, 2])  # noqa: E731
    tree = trees.tree_quantics_interpolate(f, trees.quantics_tree(3, R, "tree"), tolerance=1e-10)
    one = trees.tree_quantics_interpolate(lambda i: g(i[:, 0]), trees.quantics_tree(1, R), tolerance=1e-10)
    inter = trees.tree_quantics_interpolate(f, trees.quantics_tree(3, R, "interleaved"), tolerance=1e-10)
    assert max(tree.bond_dims.values()) == max(one.bond_dims.values())  # the joining bonds carry rank 1
    assert max(inter.bond_dims.values()) > max(tree.bond_dims.values())
