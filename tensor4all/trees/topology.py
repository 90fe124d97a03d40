"""The shape of a tree: nodes ``0 .. n-1`` and the ``n - 1`` edges joining them, checked once
(no cycle, connected), with what the algorithms walk: neighbour lists, the path between two
nodes, the nodes on each side of an edge, orders from the leaves toward a root, and the
Euler tour of :func:`~tensor4all.algorithms.schedule.tree_schedule`.

Built from a plain edge list, a parent array (``parents[root] = -1``) or a Pruefer sequence
(H. Pruefer, Arch. Math. Phys. 27, 142 (1918): every labelled tree on ``n`` nodes is one
sequence of ``n - 2`` labels).
"""

from __future__ import annotations

import heapq
import numbers
from functools import cached_property
from typing import Any, Iterable, Sequence

import numpy as np

from ..algorithms.schedule import TreeStep, tree_schedule
from ..tools.errors import Tensor4allTypeError
from .errors import DisconnectedTreeError, TreeCycleError, TreeError

__all__ = ["Tree"]


def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


class Tree:
    """A tree on the nodes ``0 .. n_nodes-1`` (``Tree([(0, 1), (1, 2)])``; ``Tree([], 1)`` is a
    single node). ``neighbours[u]`` lists the nodes joined to ``u`` in increasing order: the
    order of ``u``'s bond legs in a node tensor."""

    def __init__(self, edges: Iterable[Sequence[int]], n_nodes: int | None = None):
        if isinstance(edges, (str, bytes)) or not isinstance(edges, Iterable):
            raise Tensor4allTypeError(
                f"Tree: edges must be a sequence of node pairs (u, v), got {type(edges).__name__}"
            )
        pairs = []
        for k, e in enumerate(edges):
            if isinstance(e, (str, bytes)) or not isinstance(e, (Sequence, np.ndarray)) or len(e) != 2:
                raise Tensor4allTypeError(f"Tree: edge {k} must be a pair of node numbers (u, v), got {e!r}")
            if not (_is_int(e[0]) and _is_int(e[1])) or e[0] < 0 or e[1] < 0:
                raise TreeError(f"Tree: edge {k} = {tuple(e)!r} must join two node numbers >= 0")
            pairs.append((int(e[0]), int(e[1])))
        if n_nodes is None:
            n_nodes = 1 + max((max(p) for p in pairs), default=0)
        if not _is_int(n_nodes) or n_nodes < 1:
            raise TreeError(f"Tree: n_nodes must be a positive integer, got {n_nodes!r}")
        n_nodes = int(n_nodes)
        root = list(range(n_nodes))  # union-find: an edge inside one component closes a cycle

        def find(a: int) -> int:
            while root[a] != a:
                root[a] = root[root[a]]
                a = root[a]
            return a

        for u, v in pairs:
            if max(u, v) >= n_nodes:
                raise TreeError(f"Tree: edge ({u}, {v}) names a node outside 0..{n_nodes - 1}")
            if u == v:
                raise TreeCycleError(f"Tree: edge ({u}, {v}) is a self-loop; a tree has none")
            ru, rv = find(u), find(v)
            if ru == rv:
                raise TreeCycleError(
                    f"Tree: edge ({u}, {v}) closes a cycle (nodes {u} and {v} are already connected); "
                    "a tree has exactly one path between two nodes"
                )
            root[ru] = rv
        lost = [u for u in range(n_nodes) if find(u) != find(0)]
        if lost:
            raise DisconnectedTreeError(
                f"Tree: nodes {lost[:8]}{' ...' if len(lost) > 8 else ''} are not connected to node 0 "
                f"({len(pairs)} edges for {n_nodes} nodes; a tree needs {n_nodes - 1})"
            )
        self.n_nodes = n_nodes
        self.edges = tuple(sorted((min(u, v), max(u, v)) for u, v in pairs))
        nb: list[list[int]] = [[] for _ in range(n_nodes)]
        for u, v in self.edges:
            nb[u].append(v)
            nb[v].append(u)
        self.neighbours = tuple(tuple(sorted(x)) for x in nb)

    # ---- other constructors ------------------------------------------------------------
    @classmethod
    def from_parents(cls, parents: Sequence[int]) -> Tree:
        """The tree with an edge ``(u, parents[u])`` for every node but the root (``-1``)."""
        if isinstance(parents, (str, bytes)) or not isinstance(parents, (Sequence, np.ndarray)):
            raise Tensor4allTypeError(
                f"Tree.from_parents: expected a sequence of parents, got {type(parents).__name__}"
            )
        edges = [(u, int(p)) for u, p in enumerate(parents) if p != -1]
        roots = [u for u, p in enumerate(parents) if p == -1]
        if len(roots) != 1:
            raise DisconnectedTreeError(f"Tree.from_parents: exactly one root (parent -1) expected, got {roots}")
        return cls(edges, len(parents))

    @classmethod
    def from_prufer(cls, sequence: Sequence[int]) -> Tree:
        """The labelled tree on ``len(sequence) + 2`` nodes coded by the Pruefer ``sequence``."""
        if isinstance(sequence, (str, bytes)) or not isinstance(sequence, (Sequence, np.ndarray)):
            raise Tensor4allTypeError(
                f"Tree.from_prufer: expected a sequence of node labels, got {type(sequence).__name__}"
            )
        if not all(_is_int(a) for a in sequence):
            raise TreeError(f"Tree.from_prufer: labels must be integers, got {list(sequence)!r}")
        seq = [int(a) for a in sequence]
        n = len(seq) + 2
        if any(a < 0 or a >= n for a in seq):
            raise TreeError(f"Tree.from_prufer: labels must lie in 0..{n - 1}, got {seq}")
        degree = [1] * n
        for a in seq:
            degree[a] += 1
        leaves = [u for u in range(n) if degree[u] == 1]
        heapq.heapify(leaves)
        edges = []
        for a in seq:
            leaf = heapq.heappop(leaves)
            edges.append((leaf, a))
            degree[a] -= 1
            if degree[a] == 1:
                heapq.heappush(leaves, a)
        edges.append((heapq.heappop(leaves), heapq.heappop(leaves)))
        return cls(edges, n)

    @classmethod
    def path(cls, n: int) -> Tree:
        """The chain ``0 - 1 - ... - n-1``."""
        if not _is_int(n) or n < 1:
            raise TreeError(f"Tree.path: n must be a positive integer, got {n!r}")
        return cls([(i, i + 1) for i in range(n - 1)], n)

    # ---- what the algorithms walk -------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tree) and (self.n_nodes, self.edges) == (other.n_nodes, other.edges)

    def __hash__(self) -> int:
        return hash((self.n_nodes, self.edges))

    def __repr__(self) -> str:
        return f"Tree({list(self.edges)!r}, n_nodes={self.n_nodes})"

    def _check_node(self, u: Any, what: str) -> int:
        if not _is_int(u) or not 0 <= u < self.n_nodes:
            raise TreeError(f"{what}: node must be an integer in 0..{self.n_nodes - 1}, got {u!r}")
        return int(u)

    def leg(self, u: int, v: int) -> int:
        """The position of the bond leg toward ``v`` among ``u``'s legs."""
        u = self._check_node(u, "Tree.leg")
        if v not in self.neighbours[u]:
            raise TreeError(
                f"Tree.leg: node {v!r} is not a neighbour of node {u} (neighbours {list(self.neighbours[u])})"
            )
        return self.neighbours[u].index(v)

    def parents(self, root: int) -> list[int]:
        """The parent of every node with the tree hung from ``root`` (``-1`` at the root)."""
        root = self._check_node(root, "Tree.parents")
        parent = [-1] * self.n_nodes
        seen = [False] * self.n_nodes
        seen[root] = True
        stack = [root]
        while stack:
            u = stack.pop()
            for w in self.neighbours[u]:
                if not seen[w]:
                    seen[w] = True
                    parent[w] = u
                    stack.append(w)
        return parent

    def toward(self, root: int) -> list[int]:
        """The nodes in an order where every node comes after all nodes farther from ``root``
        on its side (leaves first, ``root`` last): the order of a sweep toward ``root``."""
        order = [root]
        parent = self.parents(root)
        for u in order:  # breadth first; grows while read
            order.extend(w for w in self.neighbours[u] if w != parent[u])
        return order[::-1]

    def path_between(self, a: int, b: int) -> list[int]:
        """The nodes on the path from ``a`` to ``b``, both included."""
        a = self._check_node(a, "Tree.path_between")
        parent = self.parents(self._check_node(b, "Tree.path_between"))
        out = [a]
        while out[-1] != b:
            out.append(parent[out[-1]])
        return out

    def side(self, u: int, v: int) -> list[int]:
        """The nodes on ``u``'s side of the edge ``(u, v)``, in increasing order."""
        if (u, v) not in self._sides:
            raise TreeError(f"Tree.side: ({u!r}, {v!r}) is not an edge; the edges are {list(self.edges)}")
        return sorted(self._sides[(u, v)])

    @cached_property
    def _sides(self) -> dict[tuple[int, int], frozenset[int]]:
        out: dict[tuple[int, int], frozenset[int]] = {}
        for u, v in self.edges:
            parent = self.parents(v)
            below = {w for w in range(self.n_nodes) if self._reaches(w, u, parent)}
            out[(u, v)] = frozenset(below)
            out[(v, u)] = frozenset(set(range(self.n_nodes)) - below)
        return out

    @staticmethod
    def _reaches(w: int, u: int, parent: list[int]) -> bool:
        while w != -1:
            if w == u:
                return True
            w = parent[w]
        return False

    def schedule(self, root: int = 0, two_site: bool = True) -> tuple[TreeStep, ...]:
        """The Euler tour of the edges from ``root`` (the sweeps' schedule)."""
        root = self._check_node(root, "Tree.schedule")
        return tree_schedule(self.neighbours, root, two_site)
