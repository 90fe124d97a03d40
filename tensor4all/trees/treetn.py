"""``TreeTN``: a tree tensor network with dense NumPy node tensors.

Node ``u`` of a :class:`~.topology.Tree` holds one tensor whose legs are its bonds, one per
neighbour in the order of ``tree.neighbours[u]``, then its site legs (at least one). The
network is the contraction of all node tensors over the bonds (Y.-Y. Shi, L.-M. Duan and
G. Vidal, Phys. Rev. A 74, 022320 (2006); the tree tensor networks of tensor4all-rs's TreeTN).

* :meth:`TreeTN.canonicalize` moves the orthogonality centre to any node by QR
  decompositions along the tree (every other node an isometry toward it); a network that
  is canonical already moves only along the path between the two centres.
* :meth:`TreeTN.truncate` puts the centre at a root, then walks the Euler tour of the edges
  (:meth:`~.topology.Tree.schedule`): each step away from the root moves the centre by QR,
  each step back toward it cuts the edge it crosses by a truncated SVD (``max_bond``,
  ``cutoff``: the project's one truncation rule,
  :func:`~tensor4all.linalg.truncation.truncation_keep`), so every subtree is cut before the
  edge above it: a sweep from the leaves toward the root. With the centre beside the edge,
  the singular values are the Schmidt values of that bipartition of the current state. The
  kept bases of the subtrees are nested (a node's kept states are built from its children's),
  so the projections commute and the squared error is exactly the sum of the discarded
  weights, ``truncation_error`` (``sum of dropped s^2``, relative to the squared norm; the
  tree form of the TT-SVD bound, I. V. Oseledets, SIAM J. Sci. Comput. 33, 2295 (2011)).
* :func:`inner` contracts two networks on the same tree from the leaves toward a root;
  :func:`add` is the direct sum of the bonds (block-diagonal node tensors).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np
import scipy.linalg
import tenferro as tf
import tidu

from ..linalg.truncation import thin_svd, truncation_keep
from ..tools.checks import check_alloc, check_seed, float_dtype, to_numpy
from ..tools.errors import BondDimensionError, NonFiniteError, Tensor4allTypeError
from ..tools.threads import bond_of, thread_policy
from .errors import MissingSiteError, TopologyMismatchError, TreeError
from .topology import Tree

__all__ = ["TreeTN", "inner", "add", "as_tree", "contract_legs"]


def as_tree(tree: Any, what: str) -> Tree:
    """A :class:`Tree`, or one built from an edge list."""
    if isinstance(tree, Tree):
        return tree
    if isinstance(tree, (list, tuple)):
        return Tree(tree)
    raise Tensor4allTypeError(f"{what}: expected a Tree or a list of edges (u, v), got {type(tree).__name__}")


def contract_legs(a: np.ndarray, la: list, b: np.ndarray, lb: list) -> tuple[np.ndarray, list]:
    """``a`` and ``b`` contracted over the labels they share; the result's labels are ``a``'s
    remaining then ``b``'s remaining, in order."""
    shared = [x for x in la if x in lb]
    ia = [la.index(x) for x in shared]
    ib = [lb.index(x) for x in shared]
    out = np.tensordot(a, b, axes=(ia, ib))
    return out, [x for x in la if x not in shared] + [x for x in lb if x not in shared]


def dense_size(psi: Any) -> int:
    """The size of ``to_dense``'s thread policy: the output's, as the side of a square matrix of
    as many entries, or the largest bond where that is larger."""
    size = math.prod(math.prod(d) for d in psi.site_dims)
    return max(bond_of(psi), math.isqrt(size))


def _bond(u: int, v: int) -> tuple[str, int, int]:
    return ("bond", min(u, v), max(u, v))


class TreeTN:
    """A tree tensor network: ``TreeTN(tree, tensors)`` with ``tree`` a :class:`Tree` (or an
    edge list) and ``tensors[u]`` node ``u``'s array, legs ``(bonds to tree.neighbours[u]...,
    site legs...)``. Immutable by convention: every operation returns a new network."""

    __slots__ = ("tree", "tensors", "center", "truncation_error")
    __array_ufunc__ = None  # NumPy and tenferro scalars defer to TreeTN.__rmul__

    def __init__(self, tree: Any, tensors: Sequence[Any], *, center: int | None = None):
        tree = as_tree(tree, "TreeTN")
        if isinstance(tensors, (str, bytes)) or not isinstance(tensors, Sequence):
            raise Tensor4allTypeError(f"TreeTN: tensors must be a sequence of arrays, got {type(tensors).__name__}")
        if len(tensors) != tree.n_nodes:
            raise TopologyMismatchError(f"TreeTN: {len(tensors)} tensors for a tree of {tree.n_nodes} nodes")
        arrays = []
        for u, t in enumerate(tensors):
            a = np.asarray(t)
            if a.dtype.kind not in "fc":
                if a.dtype.kind not in "iub":
                    raise Tensor4allTypeError(f"TreeTN: tensor {u} must hold numbers, got dtype {a.dtype}")
                a = a.astype(np.float64)
            deg = len(tree.neighbours[u])
            if a.ndim <= deg:
                raise MissingSiteError(
                    f"TreeTN: node {u} has {deg} bonds (to {list(tree.neighbours[u])}) and a tensor of {a.ndim} legs: "
                    "no site leg; every node needs its bond legs then at least one site leg"
                )
            if not np.all(np.isfinite(a)):
                raise NonFiniteError(f"TreeTN: tensor {u} holds NaN or infinity")
            arrays.append(a)
        for u, v in tree.edges:
            du, dv = arrays[u].shape[tree.leg(u, v)], arrays[v].shape[tree.leg(v, u)]
            if du != dv:
                raise TopologyMismatchError(
                    f"TreeTN: the bond ({u}, {v}) has dimension {du} at node {u} but {dv} at node {v}"
                )
        self.tree = tree
        self.tensors = tuple(arrays)
        self.center = None if center is None else tree._check_node(center, "TreeTN: center")
        self.truncation_error = 0.0

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def random(
        cls,
        tree: Any,
        site_dims: int | Sequence[int],
        bond_dim: int | dict[tuple[int, int], int] = 2,
        *,
        seed: int | None = 0,
        dtype: Any = np.float64,
    ) -> TreeTN:
        """Gaussian node tensors: one site leg of ``site_dims`` (one number, or one per node) and
        bonds of ``bond_dim`` (one number, or a dict ``{(u, v): dim}`` with ``u < v``)."""
        tree = as_tree(tree, "TreeTN.random")
        seed = check_seed(seed, "TreeTN.random: seed")
        dtype = float_dtype(dtype, "TreeTN.random: dtype")
        dims = [site_dims] * tree.n_nodes if isinstance(site_dims, numbers.Integral) else list(site_dims)
        if len(dims) != tree.n_nodes or any(
            isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral) or d < 1 for d in dims
        ):
            raise TreeError(f"TreeTN.random: site_dims must be one positive integer per node, got {site_dims!r}")
        bonds = {e: bond_dim for e in tree.edges} if isinstance(bond_dim, numbers.Integral) else dict(bond_dim)
        for e in tree.edges:
            b = bonds.get(e)
            if isinstance(b, (bool, np.bool_)) or not isinstance(b, numbers.Integral) or b < 1:
                raise BondDimensionError(f"TreeTN.random: bond_dim of edge {e} must be a positive integer")
        sizes = [
            math.prod([bonds[(min(u, v), max(u, v))] for v in tree.neighbours[u]]) * int(dims[u])
            for u in range(tree.n_nodes)
        ]
        check_alloc(2 * max(sizes) * dtype.itemsize + sum(sizes) * dtype.itemsize, "TreeTN.random")
        rng = np.random.default_rng(seed)
        out = []
        for u in range(tree.n_nodes):
            shape = [bonds[(min(u, v), max(u, v))] for v in tree.neighbours[u]] + [int(dims[u])]
            t = rng.standard_normal(shape)
            if np.dtype(dtype).kind == "c":
                t = t + 1j * rng.standard_normal(shape)
            out.append(t.astype(dtype))
        return cls(tree, out)

    # ---- shape -------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return self.tree.n_nodes

    @property
    def site_dims(self) -> tuple[tuple[int, ...], ...]:
        """The site-leg dimensions of every node."""
        return tuple(t.shape[len(self.tree.neighbours[u]) :] for u, t in enumerate(self.tensors))

    @property
    def bond_dims(self) -> dict[tuple[int, int], int]:
        """``{(u, v): dimension}`` for every edge, ``u < v``."""
        return {(u, v): self.tensors[u].shape[self.tree.leg(u, v)] for u, v in self.tree.edges}

    @property
    def max_bond(self) -> int:
        return max(self.bond_dims.values(), default=1)

    @property
    def dtype(self) -> np.dtype:
        return np.result_type(*self.tensors)

    def __repr__(self) -> str:
        return f"TreeTN({self.n_nodes} nodes, edges={list(self.tree.edges)}, max_bond={self.max_bond})"

    def _labels(self, u: int) -> list:
        """The labels of node ``u``'s legs: ``("bond", a, b)`` and ``("site", u, k)``."""
        nb = self.tree.neighbours[u]
        return [_bond(u, v) for v in nb] + [("site", u, k) for k in range(self.tensors[u].ndim - len(nb))]

    # ---- dense -------------------------------------------------------------------------
    @thread_policy(lambda self: dense_size(self))  # sized by the output
    def to_dense(self) -> np.ndarray:
        """The full tensor, site legs ordered by node, then by leg within a node."""
        size = float(np.prod([float(np.prod(d)) for d in self.site_dims]))
        check_alloc(int(min(size, 2.0**62)) * self.dtype.itemsize, "TreeTN.to_dense")
        order = self.tree.toward(0)[::-1]  # root first: each next node shares one bond with the block
        block, labels = self.tensors[order[0]], self._labels(order[0])
        for u in order[1:]:
            block, labels = contract_legs(block, labels, self.tensors[u], self._labels(u))
        want = [x for u in range(self.n_nodes) for x in self._labels(u) if x[0] == "site"]
        return np.transpose(block, [labels.index(x) for x in want])

    @thread_policy()
    def evaluate(self, indices: Any) -> np.ndarray:
        """The network's entries at the rows of ``indices`` (``(m, n_nodes)``, one index per
        node; one site leg per node), contracted from the leaves toward node 0 per row."""
        idx = np.asarray(indices)
        if any(len(d) != 1 for d in self.site_dims):
            raise TreeError("TreeTN.evaluate: needs one site leg per node")
        idx = idx.reshape(1, -1) if idx.ndim == 1 else idx
        if idx.ndim != 2 or idx.shape[1] != self.n_nodes or idx.dtype.kind not in "iu":
            raise TreeError(f"TreeTN.evaluate: expected integer indices of shape (m, {self.n_nodes}), got {idx.shape}")
        if not len(idx):  # no rows: no entries
            return np.zeros(0, dtype=np.result_type(*self.tensors))
        dims = np.array([d[0] for d in self.site_dims])
        if np.any(idx < 0) or np.any(idx >= dims):
            raise TreeError(f"TreeTN.evaluate: indices outside 0..site_dims - 1 (site_dims {dims.tolist()})")
        tree, parent = self.tree, self.tree.parents(0)
        blocks: dict[int, np.ndarray] = {}
        for u in tree.toward(0):
            k = len(tree.neighbours[u])
            x = np.moveaxis(self.tensors[u][..., idx[:, u]], -1, 0)  # (m, bonds...)
            for i in reversed(range(k)):  # children's blocks (m, bond) contracted, last leg first
                w = tree.neighbours[u][i]
                if w != parent[u]:
                    x = np.einsum("m...a,ma->m...", np.moveaxis(x, 1 + i, -1), blocks.pop(w))
            blocks[u] = x.reshape(len(idx), -1)
        return blocks[0][:, 0]

    # ---- canonical forms ---------------------------------------------------------------
    def _qr_toward(self, ts: list[np.ndarray], u: int, v: int) -> None:
        """Node ``u`` made an isometry toward its neighbour ``v`` (QR), R absorbed into ``v``."""
        i, j = self.tree.leg(u, v), self.tree.leg(v, u)
        a = np.moveaxis(ts[u], i, -1)
        q, r = scipy.linalg.qr(a.reshape(-1, a.shape[-1]), mode="economic", check_finite=False)
        ts[u] = np.moveaxis(q.reshape(*a.shape[:-1], q.shape[1]), -1, i)
        ts[v] = np.moveaxis(np.tensordot(r, ts[v], axes=(1, j)), 0, j)

    @thread_policy()
    def canonicalize(self, center: int = 0) -> TreeTN:
        """The same state with every node but ``center`` an isometry toward it (QR along the
        tree); from a network canonical at another node, only the path between them moves."""
        c = self.tree._check_node(center, "TreeTN.canonicalize")
        ts = list(self.tensors)
        if self.center is not None:
            path = self.tree.path_between(self.center, c)
            for a, b in zip(path, path[1:]):
                self._qr_toward(ts, a, b)
        else:
            parent = self.tree.parents(c)
            for u in self.tree.toward(c)[:-1]:
                self._qr_toward(ts, u, parent[u])
        return TreeTN(self.tree, ts, center=c)

    @thread_policy()
    def truncate(self, max_bond: int | None = None, cutoff: float = 0.0, *, root: int = 0) -> TreeTN:
        """The network with its bonds cut by truncated SVDs (see the module); the result is
        canonical at ``root`` and carries ``truncation_error``."""
        if max_bond is not None and (not isinstance(max_bond, numbers.Integral) or max_bond < 1):
            raise BondDimensionError(f"TreeTN.truncate: max_bond must be a positive integer or None, got {max_bond!r}")
        if not isinstance(cutoff, numbers.Real) or not 0.0 <= cutoff < 1.0:
            raise TreeError(f"TreeTN.truncate: cutoff must be a number in [0, 1), got {cutoff!r}")
        psi = self.canonicalize(root)
        ts = list(psi.tensors)
        total = float(np.vdot(ts[root], ts[root]).real)
        discarded = 0.0
        for step in self.tree.schedule(root, two_site=False):
            u, v = step.leaving, step.arriving
            if step.direction == "right":  # away from the root: no cut, the centre moves
                self._qr_toward(ts, u, v)
                continue
            i, j = self.tree.leg(u, v), self.tree.leg(v, u)
            a = np.moveaxis(ts[u], i, -1)
            m = a.reshape(-1, a.shape[-1])
            uu, s, vh = thin_svd(m)
            keep, rel = truncation_keep(s, max_bond, float(cutoff))
            discarded += rel * float(np.sum(s * s))
            uu, s, vh = uu[:, :keep], s[:keep], vh[:keep]
            ts[u] = np.moveaxis(uu.reshape(*a.shape[:-1], keep), -1, i)
            ts[v] = np.moveaxis(np.tensordot(s[:, None] * vh, ts[v], axes=(1, j)), 0, j)
        out = TreeTN(self.tree, ts, center=root)
        out.truncation_error = discarded / total if total > 0 else 0.0
        return out

    # ---- arithmetic --------------------------------------------------------------------
    @thread_policy()
    def norm(self) -> float:
        return float(np.sqrt(max(inner(self, self).real, 0.0)))

    def __mul__(self, c: Any) -> TreeTN:
        if isinstance(c, (tf.Tensor, np.ndarray, tidu.Tracer)):  # a scalar array: its concrete number
            a = to_numpy(c, "TreeTN * c (a tree network has no derivatives)")
            if a.ndim:
                raise Tensor4allTypeError(f"TreeTN * c: c must be a scalar, got an array of shape {a.shape}")
            c = a.item()
        if not isinstance(c, numbers.Number):
            return NotImplemented
        ts = list(self.tensors)
        k = 0 if self.center is None else self.center
        ts[k] = ts[k] * c
        return TreeTN(self.tree, ts, center=self.center)

    __rmul__ = __mul__

    def __add__(self, other: Any) -> TreeTN:
        return add(self, other)

    def __sub__(self, other: Any) -> TreeTN:
        return add(self, other * -1.0)


def _check_same(a: Any, b: Any, what: str) -> None:
    for x in (a, b):
        if not isinstance(x, TreeTN):
            raise Tensor4allTypeError(f"{what}: expected two TreeTN, got {type(x).__name__}")
    if a.tree != b.tree:
        raise TopologyMismatchError(f"{what}: the networks live on different trees: {a.tree!r} and {b.tree!r}")
    if a.site_dims != b.site_dims:
        raise TopologyMismatchError(f"{what}: different site dimensions: {a.site_dims} and {b.site_dims}")


@thread_policy()
def inner(a: TreeTN, b: TreeTN) -> complex | float:
    """``<a|b>`` (``a`` conjugated) of two networks on the same tree with the same site legs,
    contracted from the leaves toward node 0: each node's block holds one bond pair."""
    _check_same(a, b, "inner")
    tree = a.tree
    parent = tree.parents(0)
    blocks: dict[int, tuple[np.ndarray, list]] = {}
    for u in tree.toward(0):
        la = [("a",) + x if x[0] == "bond" else x for x in a._labels(u)]
        lb = [("b",) + x if x[0] == "bond" else x for x in b._labels(u)]
        x, lx = contract_legs(a.tensors[u].conj(), la, b.tensors[u], lb)
        for w in tree.neighbours[u]:
            if w != parent[u]:
                x, lx = contract_legs(x, lx, *blocks.pop(w))
        blocks[u] = (x, lx)
    value = blocks[0][0]
    out = complex(value.reshape(()))
    return out.real if np.isrealobj(value) else out


def add(a: TreeTN, b: TreeTN) -> TreeTN:
    """``a + b`` on the same tree: every bond of dimension ``d_a + d_b``, node tensors
    block-diagonal in their bonds (one block per term)."""
    _check_same(a, b, "add")
    tree = a.tree
    if tree.n_nodes == 1:
        return TreeTN(tree, [a.tensors[0] + b.tensors[0]])
    dtype = np.result_type(a.dtype, b.dtype)
    out = []
    for u in range(tree.n_nodes):
        ta, tb = a.tensors[u], b.tensors[u]
        k = len(tree.neighbours[u])
        t = np.zeros([x + y for x, y in zip(ta.shape[:k], tb.shape[:k])] + list(ta.shape[k:]), dtype=dtype)
        t[tuple(slice(0, x) for x in ta.shape[:k])] = ta
        t[tuple(slice(x, None) for x in ta.shape[:k])] = tb
        out.append(t)
    return TreeTN(tree, out)
