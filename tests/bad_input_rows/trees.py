"""Bad-input rows of tree tensor networks (tensor4all.trees)."""

from __future__ import annotations

import numpy as np

import tensor4all as t4a

from .common import new_table

ROWS, row = new_table()


# ---- issue 54: tree tensor networks (tensor4all.trees) -------
TR = t4a.trees
TR_T = TR.Tree([(0, 1), (1, 2), (1, 3)])
TR_P = TR.TreeTN.random(TR_T, 2, 2)
TR_OTHER = TR.TreeTN.random(TR.Tree.path(4), 2, 2)
TR_H = TR.tree_heisenberg(TR_T)
TR_Q = TR.quantics_tree(2, 3)
row("Tree-cycle", TR.Tree, ([(0, 1), (1, 2), (2, 0)],), TR.TreeCycleError, "closes a cycle")
row("Tree-self-loop", TR.Tree, ([(0, 0)],), TR.TreeCycleError, "self-loop")
row("Tree-repeated-edge", TR.Tree, ([(0, 1), (1, 0)],), TR.TreeCycleError, "closes a cycle")
row("Tree-disconnected", TR.Tree, ([(0, 1), (2, 3)],), TR.DisconnectedTreeError, "not connected to node 0")
row("Tree-isolated-node", TR.Tree, ([(0, 1)], 3), TR.DisconnectedTreeError, "a tree needs 2")
row("Tree-edges-str", TR.Tree, ("01",), t4a.Tensor4allTypeError, "sequence of node pairs")
row("Tree-edge-triple", TR.Tree, ([(0, 1, 2)],), t4a.Tensor4allTypeError, "pair of node numbers")
row("Tree-negative-node", TR.Tree, ([(0, -1)],), TR.TreeError, "two node numbers >= 0")
row("Tree.from_parents-two-roots", TR.Tree.from_parents, ([-1, -1, 0],), TR.DisconnectedTreeError, "exactly one root")
row("Tree.from_parents-cycle", TR.Tree.from_parents, ([-1, 2, 1],), TR.TreeCycleError, "closes a cycle")
row("Tree.from_prufer-label", TR.Tree.from_prufer, ([0, 7],), TR.TreeError, "labels must lie in 0..3")
row("Tree.from_prufer-str", TR.Tree.from_prufer, ("01",), t4a.Tensor4allTypeError, "sequence of node labels")
row("Tree.path-zero", TR.Tree.path, (0,), TR.TreeError, "positive integer")
row("Tree.leg-not-neighbour", TR_T.leg, (0, 2), TR.TreeError, "not a neighbour of node 0")
row("Tree.parents-root", TR_T.parents, (4,), TR.TreeError, "integer in 0..3")
row("Tree.toward-root", TR_T.toward, (-1,), TR.TreeError, "integer in 0..3")
row("Tree.path_between-node", TR_T.path_between, (0, 9), TR.TreeError, "integer in 0..3")
row("Tree.side-not-edge", TR_T.side, (0, 2), TR.TreeError, "is not an edge")
row("Tree.schedule-root", TR_T.schedule, (1.5,), TR.TreeError, "integer in 0..3")
row(
    "TreeTN-node-without-site",
    TR.TreeTN,
    ([(0, 1)], [np.ones((2, 2)), np.ones(2)]),
    TR.MissingSiteError,
    "node 1 has 1 bonds",
)
row(
    "TreeTN-bond-mismatch",
    TR.TreeTN,
    ([(0, 1)], [np.ones((2, 2)), np.ones((3, 2))]),
    TR.TopologyMismatchError,
    "dimension 2 at node 0 but 3 at node 1",
)
row("TreeTN-count", TR.TreeTN, ([(0, 1)], [np.ones((2, 2))]), TR.TopologyMismatchError, "1 tensors for a tree of 2")
row("TreeTN-cycle", TR.TreeTN, ([(0, 1), (1, 2), (0, 2)], [np.ones(2)] * 3), TR.TreeCycleError, "closes a cycle")
row("TreeTN-tree-str", TR.TreeTN, ("tree", []), t4a.Tensor4allTypeError, "a Tree or a list of edges")
row("TreeTN-nan", TR.TreeTN, ([], [np.array([np.nan])]), t4a.NonFiniteError, "tensor 0 holds NaN")
row("TreeTN.random-bond", TR.TreeTN.random, (TR_T, 2, 0), t4a.BondDimensionError, "positive integer")
row("TreeTN.random-dims", TR.TreeTN.random, (TR_T, [2, 2]), TR.TreeError, "one positive integer per node")
row(
    "TreeTN.to_dense-memory",
    lambda: TR.TreeTN.random(TR.Tree.path(80), 2, 1).to_dense(),
    (),
    t4a.Tensor4allMemoryError,
    "TreeTN.to_dense needs",
)
row("TreeTN.evaluate-shape", TR_P.evaluate, (np.zeros((2, 3), dtype=int),), TR.TreeError, "shape (m, 4)")
row("TreeTN.evaluate-range", TR_P.evaluate, (np.array([[0, 0, 2, 0]]),), TR.TreeError, "outside 0..site_dims - 1")
row("TreeTN.canonicalize-node", TR_P.canonicalize, (5,), TR.TreeError, "integer in 0..3")
row("TreeTN.truncate-max_bond", TR_P.truncate, (), t4a.BondDimensionError, "max_bond", max_bond=0)
row("TreeTN.truncate-cutoff", TR_P.truncate, (), TR.TreeError, "cutoff must be a number in [0, 1)", cutoff=-1.0)
row("trees.inner-topology", TR.inner, (TR_P, TR_OTHER), TR.TopologyMismatchError, "different trees")
row("trees.inner-type", TR.inner, (TR_P, np.ones(4)), t4a.Tensor4allTypeError, "expected two TreeTN")
row("trees.add-dims", TR.add, (TR_P, TR.TreeTN.random(TR_T, 3)), TR.TopologyMismatchError, "different site dimensions")
row("TreeOperator-legs", TR.TreeOperator, ([], [np.ones((2, 3))]), TR.TreeError, "two site legs (out, in)")
row(
    "TreeOperator.to_matrix-memory",
    lambda: TR.tree_heisenberg(TR.Tree.path(40)).to_matrix(),
    (),
    t4a.Tensor4allMemoryError,
    "TreeTN.to_dense needs",
)
row("TreeOperator.apply-topology", TR_H.apply, (TR_OTHER,), TR.TopologyMismatchError, "the state lives on")
row("TreeOperator.apply-type", TR_H.apply, (TR_H,), t4a.Tensor4allTypeError, "expected a TreeTN state")
row("tree_operator-node", TR.tree_operator, (TR_T, [(1.0, {7: np.eye(2)})]), TR.TreeError, "names node 7")
row(
    "tree_operator-matrix",
    TR.tree_operator,
    (TR_T, [(1.0, {0: np.eye(3)})]),
    t4a.DimensionMismatchError,
    "expected (2, 2)",
)
row("tree_operator-coefficient", TR.tree_operator, (TR_T, [(np.nan, {0: np.eye(2)})]), t4a.NonFiniteError, "finite")
row("tree_heisenberg-cycle", TR.tree_heisenberg, ([(0, 1), (1, 0)],), TR.TreeCycleError, "closes a cycle")
row("apply_fit-H", TR.apply_fit, (TR_P, TR_P), t4a.Tensor4allTypeError, "must be a TreeOperator", max_bond=2)
row("apply_fit-psi", TR.apply_fit, (TR_H, TR_OTHER), TR.TopologyMismatchError, "does not fit H", max_bond=2)
row("apply_fit-max_bond", TR.apply_fit, (TR_H, TR_P), t4a.BondDimensionError, "max_bond", max_bond=0)
row("tree_linsolve-A", TR.tree_linsolve, (TR_P, TR_P), t4a.Tensor4allTypeError, "must be a TreeOperator")
row("tree_linsolve-b", TR.tree_linsolve, (TR_H, TR_OTHER), TR.TopologyMismatchError, "does not fit A")
row("tree_linsolve-sweeps", TR.tree_linsolve, (TR_H, TR_P), t4a.InvalidOptionError, "sweeps", sweeps=0)
row("tree_dmrg-H", TR.tree_dmrg, (TR_P,), t4a.Tensor4allTypeError, "must be a TreeOperator")
row("tree_dmrg-psi0", TR.tree_dmrg, (TR_H, TR_OTHER), TR.TopologyMismatchError, "does not fit H")
row("tree_dmrg-max_bond", TR.tree_dmrg, (TR_H,), t4a.BondDimensionError, "max_bond", max_bond=0)
row("tree_dmrg-root", TR.tree_dmrg, (TR_H,), TR.TreeError, "integer in 0..3", root=4)
for label, bad, exc in (("negative", -1, t4a.InvalidOptionError), ("float", 1.5, t4a.Tensor4allTypeError)):
    row(f"tree_dmrg-threads-{label}", TR.tree_dmrg, (TR_H,), exc, "threads must be None", threads=bad)
    row(f"apply_fit-threads-{label}", TR.apply_fit, (TR_H, TR_P), exc, "threads must be None", max_bond=2, threads=bad)
    row(f"tree_linsolve-threads-{label}", TR.tree_linsolve, (TR_H, TR_P), exc, "threads must be None", threads=bad)
row(
    "tree_crossinterpolate-tolerance",
    TR.tree_crossinterpolate,
    (np.sum, TR_T, 2),
    t4a.InvalidOptionError,
    "tolerance must lie in (0, 1)",
    tolerance=2.0,
)
row("tree_crossinterpolate-dims", TR.tree_crossinterpolate, (np.sum, TR_T, [2, 2]), TR.TopologyMismatchError, "2 local")
row("tree_crossinterpolate-f", TR.tree_crossinterpolate, (None, TR_T, 2), t4a.Tensor4allTypeError, "callable")
row(
    "tree_crossinterpolate-zero",
    TR.tree_crossinterpolate,
    (lambda i: 0.0, TR_T, 2),
    TR.TreeError,
    "f is zero at 64 random multi-indices",
)
row("quantics_tree-layout", TR.quantics_tree, (3, 4, "zigzag"), t4a.InvalidOptionError, "'tree', 'interleaved'")
row("quantics_tree-R", TR.quantics_tree, (3, 0), t4a.InvalidOptionError, "R must be an integer")
row(
    "tree_quantics_interpolate-layout",
    TR.tree_quantics_interpolate,
    (np.sum, "tree"),
    t4a.Tensor4allTypeError,
    "QuanticsLayout",
)
row(
    "QuanticsLayout.grid_indices-shape", TR_Q.grid_indices, (np.zeros((1, 5), dtype=int),), TR.TreeError, "shape (m, 6)"
)
