"""Tree operators (TTNO): a sum of products of local operators as a tree of MPO-like node
tensors, legs ``(bonds to tree.neighbours[u]..., out, in)``.

:func:`tree_operator` writes the node tensors from the terms with a finite-state automaton
per edge (the tree form of the MPO automaton of :mod:`tensor4all.operators.autompo`): with the
tree hung from node 0, the bond from a node ``v`` to its parent carries the state of ``v``'s
subtree for every term: ``0`` nothing placed yet (identities), ``1`` a whole term placed
(identities above), or ``2 + k`` the ``k``-th term that has sites on both sides of the edge
placed below. A term is closed, with its coefficient, at the lowest common ancestor of its
sites. Nearest-neighbour terms on the tree's edges give bonds of ``2 + 3`` for the
Heisenberg coupling.

:meth:`TreeOperator.apply` is the exact product with a :class:`~.treetn.TreeTN` (bond
dimensions multiply), to be truncated by :meth:`~.treetn.TreeTN.truncate`.
"""

from __future__ import annotations

import numbers
from typing import Any, Mapping, Sequence

import numpy as np

from ..tools.checks import check_real
from ..tools.errors import DimensionMismatchError, NonFiniteError, Tensor4allTypeError
from ..tools.threads import bond_of, thread_policy
from .errors import TopologyMismatchError, TreeError
from .treetn import TreeTN, as_tree, dense_size

__all__ = ["TreeOperator", "tree_operator", "tree_heisenberg"]

SZ = np.array([[0.5, 0.0], [0.0, -0.5]])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])
SM = SP.T.copy()


class TreeOperator(TreeTN):
    """A tree tensor network whose nodes carry two site legs, ``(out, in)``: an operator."""

    __slots__ = ()

    def __init__(self, tree: Any, tensors: Sequence[Any], *, center: int | None = None):
        super().__init__(tree, tensors, center=center)
        for u, t in enumerate(self.tensors):
            k = len(self.tree.neighbours[u])
            if t.ndim != k + 2 or t.shape[k] != t.shape[k + 1]:
                raise TreeError(
                    f"TreeOperator: node {u} needs its {k} bond legs then two site legs (out, in) of equal "
                    f"dimension, got shape {t.shape}"
                )

    @property
    def local_dims(self) -> tuple[int, ...]:
        return tuple(d[0] for d in self.site_dims)

    @thread_policy(dense_size)  # sized by the output
    def to_matrix(self) -> np.ndarray:
        """The dense matrix ``(prod d, prod d)``, node 0's index slowest."""
        n = self.n_nodes
        a = self.to_dense()  # (out0, in0, out1, in1, ...)
        d = int(np.prod(self.local_dims))
        return a.transpose(list(range(0, 2 * n, 2)) + list(range(1, 2 * n, 2))).reshape(d, d)

    @thread_policy(lambda self, psi, *_, **__: bond_of(self) * bond_of(psi))  # the fused bonds
    def apply(self, psi: TreeTN) -> TreeTN:
        """``H |psi>`` exactly: each node's operator contracted with the state's tensor, the
        bond pairs fused (bond dimensions multiply)."""
        if not isinstance(psi, TreeTN) or isinstance(psi, TreeOperator):
            raise Tensor4allTypeError(f"TreeOperator.apply: expected a TreeTN state, got {type(psi).__name__}")
        if psi.tree != self.tree:
            raise TopologyMismatchError(
                f"TreeOperator.apply: the state lives on {psi.tree!r}, the operator on {self.tree!r}"
            )
        if tuple(d[0] for d in psi.site_dims) != self.local_dims or any(len(d) != 1 for d in psi.site_dims):
            raise TopologyMismatchError(
                f"TreeOperator.apply: site dimensions {psi.site_dims} of the state, {self.local_dims} of the operator"
            )
        out = []
        for u in range(self.n_nodes):
            w, a = self.tensors[u], psi.tensors[u]
            k = len(self.tree.neighbours[u])
            t = np.tensordot(w, a, axes=(k + 1, k))  # (wb..., out, ab...)
            order = [x for i in range(k) for x in (i, k + 1 + i)] + [k]
            t = t.transpose(order)
            out.append(t.reshape([w.shape[i] * a.shape[i] for i in range(k)] + [w.shape[k]]))
        return TreeTN(self.tree, out)


def _terms(terms: Any, dims: list[int], n: int) -> list[tuple[complex, dict[int, np.ndarray]]]:
    if isinstance(terms, (str, bytes)) or not isinstance(terms, Sequence):
        raise Tensor4allTypeError("tree_operator: terms must be a sequence of (coefficient, {node: matrix}) pairs")
    out = []
    for k, term in enumerate(terms):
        if not isinstance(term, (tuple, list)) or len(term) != 2 or not isinstance(term[1], Mapping):
            raise Tensor4allTypeError(f"tree_operator: term {k} must be (coefficient, {{node: matrix}}), got {term!r}")
        c, ops = term
        if not isinstance(c, numbers.Number) or not np.isfinite(c):
            raise NonFiniteError(f"tree_operator: term {k} has the coefficient {c!r}; expected a finite number")
        if not ops:
            raise TreeError(f"tree_operator: term {k} acts on no node")
        mats = {}
        for u, m in ops.items():
            if not isinstance(u, numbers.Integral) or not 0 <= u < n:
                raise TreeError(f"tree_operator: term {k} names node {u!r}; nodes are 0..{n - 1}")
            m = np.asarray(m)
            if m.shape != (dims[u], dims[u]):
                raise DimensionMismatchError(
                    f"tree_operator: term {k} gives node {u} a matrix of shape {m.shape}, expected {(dims[u], dims[u])}"
                )
            mats[int(u)] = m
        out.append((c, mats))
    return out


def tree_operator(tree: Any, terms: Sequence[Any], local_dims: int | Sequence[int] = 2) -> TreeOperator:
    """``H = sum_t c_t prod_{u in t} O_{t,u}`` on ``tree`` from ``terms``, a list of
    ``(c_t, {node: matrix})``; ``local_dims`` one number or one per node."""
    tree = as_tree(tree, "tree_operator")
    n = tree.n_nodes
    dims = [local_dims] * n if isinstance(local_dims, numbers.Integral) else list(local_dims)
    if len(dims) != n:
        raise TopologyMismatchError(f"tree_operator: {len(dims)} local dimensions for {n} nodes")
    ts = _terms(terms, [int(d) for d in dims], n)
    parent = tree.parents(0)
    below = {v: set(tree.side(v, parent[v])) for v in range(n) if parent[v] >= 0}
    crossing = {v: [] for v in below}  # the terms with sites on both sides of (v, parent)
    for k, (_, ops) in enumerate(ts):
        for v, sub in below.items():
            if 0 < len(sub & ops.keys()) < len(ops):
                crossing[v].append(k)
    state = {v: {k: 2 + i for i, k in enumerate(crossing[v])} for v in below}
    bond = {v: 2 + len(crossing[v]) for v in below}
    dtype = np.result_type(float, *[c for c, _ in ts], *[m for _, o in ts for m in o.values()])
    tensors = []
    for u in range(n):
        nb = tree.neighbours[u]
        children = [w for w in nb if w != parent[u]]
        shape = [bond[w] if w != parent[u] else bond[u] for w in nb] + [dims[u], dims[u]]
        w_u = np.zeros(shape, dtype=dtype)
        eye = np.eye(dims[u])
        subtree = below[u] if parent[u] >= 0 else set(range(n))

        def put(up: int, child_states: dict[int, int], op: np.ndarray) -> None:
            idx = tuple(up if w == parent[u] else child_states.get(w, 0) for w in nb)
            w_u[idx] += op

        ups = [1] if parent[u] < 0 else [0, 1] + [state[u][k] for k in crossing[u]]
        for up in ups:
            if up == 0:
                put(0, {}, eye)
                continue
            if up == 1:
                for c in children:
                    put(1, {c: 1}, eye)
                for k, (c_t, ops) in enumerate(ts):  # the terms whose lowest common ancestor is u
                    if not ops.keys() <= subtree or any(ops.keys() <= below[c] for c in children):
                        continue
                    put(1, {c: state[c][k] for c in children if k in crossing[c]}, c_t * ops.get(u, eye))
                continue
            k = next(k for k in crossing[u] if state[u][k] == up)
            sub = {c: state[c][k] for c in children if k in crossing[c]}
            put(up, sub, ts[k][1].get(u, eye))
        tensors.append(w_u)
    return TreeOperator(tree, tensors)


def tree_heisenberg(tree: Any, J: float = 1.0, Jz: float | None = None) -> TreeOperator:
    """The spin-1/2 Heisenberg (XXZ with ``Jz``) model on the tree's edges:
    ``sum_(u,v) J (Sx Sx + Sy Sy) + Jz Sz Sz``, ``Jz = J`` by default."""
    tree = as_tree(tree, "tree_heisenberg")
    J = check_real(J, "tree_heisenberg: J")
    jz = J if Jz is None else check_real(Jz, "tree_heisenberg: Jz")
    terms = []
    for u, v in tree.edges:
        terms += [(jz, {u: SZ, v: SZ}), (J / 2, {u: SP, v: SM}), (J / 2, {u: SM, v: SP})]
    return tree_operator(tree, terms, 2)
