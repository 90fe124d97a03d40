"""Tree tensor cross interpolation: TCI2's pivot logic on a tree's bipartitions.

Each edge ``(u, v)`` splits the nodes into ``u``'s side and ``v``'s side; the edge holds two
pivot sets of the same size ``r``: multi-indices of ``u``'s side ``I[(u, v)]`` and of ``v``'s
side ``I[(v, u)]``. A two-site update of the edge (the chain's TCI2 update, Fernandez et al.,
SciPost Phys. 18, 104 (2025), sec. 3; on trees: the tree cross interpolation of
TensorCrossInterpolation.jl's successors and of tensor4all-rs's TreeTCI) samples the matrix of
``f`` whose rows are ``s_u`` times the pivots of ``u``'s other edges toward ``u`` and whose
columns are ``s_v`` times those of ``v``'s other edges, and takes its pivots by the partial
rank-revealing LU (:func:`tensor4all.tci.lu.rrlu`): the new sets are nested in the
neighbours' sets by construction, and the largest entry left in the Schur complement is the
edge's error estimate. The rows and columns also hold the edge's sets of the sweep before
(TCI2's union: without it two neighbouring edges can hold each other's rank below the true one,
as in an interleaved product of three Gaussians). Sweeps walk the Euler tour of the edges
(:meth:`~.topology.Tree.schedule`, the sweeps' own schedule).

The network is built from the samples only: node ``u`` is ``f`` on ``s_u`` times the pivots
toward ``u`` of all its edges, and each edge's pivot matrix ``P = f(I[(u, v)], I[(v, u)])``
is inverted into the node farther from the root (``T P^-1`` by a linear solve): the tree
form of ``A = C U^-1 R``, exact when every pivot matrix has the rank of its bipartition. The
counted cache of :mod:`tensor4all.tci.cache` evaluates each multi-index once.

After each sweep, a global pivot search as TCI2's (random starts, each index varied in turn)
adds the points the network misses to every edge's sets. A last pass from the leaves toward
the root makes the sets nested toward it (each node's set toward its parent is picked among
its children's sets times its own index: TCI2's final one-site sweep), which the network
needs to be accurate where ``f`` is only approximately of low rank. Not done here: the rook
search of :func:`tensor4all.tci.crossinterpolate2`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..tci.cache import CachedFunction
from ..tci.lu import rrlu
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.threads import thread_policy
from .errors import TopologyMismatchError, TreeError
from .treetn import TreeTN, as_tree

__all__ = ["tree_crossinterpolate", "TreeTCIResult"]

RELTOL = 1e-14  # pivots below this fraction of the first are not taken (as TCI2)
START_SAMPLES = 64  # random multi-indices tried for the first pivot
CHECK_HISTORY = 2  # sweeps below the tolerance, ranks unchanged, no global pivot, before stopping
GLOBAL_MARGIN = 10.0  # a global pivot's error must exceed this times the tolerance (as TCI2)


@dataclass(frozen=True)
class TreeTCIResult:
    """What :func:`tree_crossinterpolate` returns: the network ``ttn``, per sweep the largest
    bond (``ranks``) and the error estimate (``errors``, relative to ``max|f|`` seen), the
    distinct ``evaluations`` of ``f``, the ``bond_dims`` of every edge, and ``termination``
    (``"converged"`` or ``"max_iter"``)."""

    ttn: TreeTN
    ranks: list[int]
    errors: list[float]
    evaluations: int
    bond_dims: dict[tuple[int, int], int]
    termination: str

    @property
    def error(self) -> float:
        return self.errors[-1]


class TreeCross:
    """The pivot sets of every directed edge, as ``(r, n)`` arrays with zeros off their side."""

    def __init__(self, fn: CachedFunction, tree: Any, pivot: np.ndarray):
        self.fn, self.tree = fn, tree
        self.dims = fn.dims
        n = tree.n_nodes
        self.mask = {}
        for u, v in tree.edges:
            for a, b in ((u, v), (v, u)):
                m = np.zeros(n, dtype=bool)
                m[tree.side(a, b)] = True
                self.mask[(a, b)] = m
        self.I = {k: np.where(m, pivot, 0)[None, :] for k, m in self.mask.items()}
        self.errors = {e: 0.0 for e in tree.edges}
        self.previous: dict | None = None  # the sets at the start of the last sweep

    def _local(self, u: int, exclude: int | None) -> np.ndarray:
        """``s_u`` times the sets toward ``u`` of its edges other than to ``exclude``."""
        n = self.tree.n_nodes
        out = np.zeros((self.dims[u], n), dtype=np.int64)
        out[:, u] = np.arange(self.dims[u])
        for w in self.tree.neighbours[u]:
            if w != exclude:
                piece = self.I[(w, u)]
                out = (out[:, None, :] + piece[None, :, :]).reshape(-1, n)
        return out

    def update(self, u: int, v: int, abstol: float, max_rank: int | None) -> None:
        rows, cols = self._local(u, v), self._local(v, u)
        if self.previous is not None:  # TCI2's union with the sets of the sweep before
            rows = _union(rows, self.previous[(u, v)])
            cols = _union(cols, self.previous[(v, u)])
        points = (rows[:, None, :] + cols[None, :, :]).reshape(-1, self.tree.n_nodes)
        a = self.fn.values(points).reshape(len(rows), len(cols))
        lu = rrlu(a, abstol=abstol, reltol=RELTOL, max_rank=max_rank)
        e = (min(u, v), max(u, v))
        if lu.rank == 0:
            self.errors[e] = 0.0
            return
        self.I[(u, v)], self.I[(v, u)] = rows[lu.rows], cols[lu.cols]
        self.errors[e] = lu.error

    def add_pivots(self, points: np.ndarray) -> None:
        """Every edge's sets joined by ``points`` restricted to each side (TCI2's global pivots)."""
        for (u, v), m in self.mask.items():
            joined = np.concatenate([self.I[(u, v)], np.where(m, points, 0)])
            _, first = np.unique(joined, axis=0, return_index=True)
            self.I[(u, v)] = joined[np.sort(first)]
        for u, v in self.tree.edges:  # a point already in one side's set keeps both sides square
            a, b = self.I[(u, v)], self.I[(v, u)]
            k = min(len(a), len(b))
            self.I[(u, v)], self.I[(v, u)] = a[:k], b[:k]

    def global_search(self, starts: int, abstol: float, rng: np.random.Generator) -> np.ndarray:
        """Multi-indices where the current network misses ``f`` by more than ``GLOBAL_MARGIN``
        times the tolerance: from each of ``starts`` random points every index is varied in
        turn and the worst point kept (TCI2's global pivot search)."""
        dims, n = self.dims, self.tree.n_nodes
        ttn = self.network()
        found = []
        for _ in range(starts):
            p = np.array([rng.integers(0, d) for d in dims])
            lines = []
            for k, d in enumerate(dims):
                line = np.repeat(p[None, :], d, axis=0)
                line[:, k] = np.arange(d)
                lines.append(line)
            pts = np.concatenate(lines)
            err = np.abs(self.fn.values(pts) - ttn.evaluate(pts))
            if err.max() > GLOBAL_MARGIN * abstol:
                found.append(pts[int(np.argmax(err))])
        return np.array(found, dtype=np.int64).reshape(-1, n)

    def nest(self, abstol: float, max_rank: int | None, root: int = 0) -> None:
        """Sets nested toward ``root`` and square pivot matrices (TCI2's last one-site sweep):
        from the leaves up, each node's set toward its parent is re-picked by LU among ``s_u``
        times its children's final sets, against the parent side's current set."""
        n, parent = self.tree.n_nodes, self.tree.parents(root)
        for u in self.tree.toward(root)[:-1]:
            p = parent[u]
            rows, cols = self._local(u, p), self.I[(p, u)]
            a = self.fn.values((rows[:, None, :] + cols[None, :, :]).reshape(-1, n)).reshape(len(rows), len(cols))
            lu = rrlu(a, abstol=abstol, reltol=RELTOL, max_rank=max_rank)
            if lu.rank == 0:
                raise TreeError(
                    f"tree_crossinterpolate: f is zero on every sampled entry across the edge ({u}, {p}); "
                    "it has nothing to interpolate there"
                )
            self.I[(u, p)], self.I[(p, u)] = rows[lu.rows], cols[lu.cols]

    def network(self, root: int = 0) -> TreeTN:
        """The tree form of ``C U^-1 R`` from the current sets (see the module)."""
        tree, n = self.tree, self.tree.n_nodes
        tensors = []
        for u in range(n):
            pts = self._local(u, None)  # order: s_u slowest, then the neighbours in order
            vals = self.fn.values(pts)
            shape = [self.dims[u]] + [len(self.I[(w, u)]) for w in tree.neighbours[u]]
            tensors.append(np.moveaxis(vals.reshape(shape), 0, -1))
        parent = tree.parents(root)
        for u in range(n):
            p = parent[u]
            if p < 0:
                continue
            # P[i, j] = f(I[(u, p)]_i + I[(p, u)]_j): rows index p's leg toward u, columns u's leg toward p
            pm = self.fn.values((self.I[(u, p)][:, None, :] + self.I[(p, u)][None, :, :]).reshape(-1, n))
            pm = pm.reshape(len(self.I[(u, p)]), len(self.I[(p, u)]))
            i = tree.leg(u, p)
            t = np.moveaxis(tensors[u], i, -1)
            m = t.reshape(-1, t.shape[-1])
            try:
                x = np.linalg.solve(pm.T, m.T).T  # m P^-1
            except np.linalg.LinAlgError:
                x = m @ np.linalg.pinv(pm)
            tensors[u] = np.moveaxis(x.reshape(*t.shape[:-1], pm.shape[0]), -1, i)
        return TreeTN(tree, tensors)


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rows of ``a`` then those of ``b`` not in ``a``, each once."""
    c = np.concatenate([a, b])
    _, first = np.unique(c, axis=0, return_index=True)
    return c[np.sort(first)]


def _first_pivot(fn: CachedFunction, rng: np.random.Generator) -> np.ndarray:
    """The largest ``|f|`` of a few random multi-indices, then each index in turn moved to
    its line's largest ``|f|`` (TCI2's start, two passes)."""
    dims = fn.dims
    trial = np.stack([rng.integers(0, d, size=START_SAMPLES) for d in dims], axis=1)
    trial[0] = 0
    vals = np.abs(fn.values(trial))
    if vals.max() == 0.0:
        raise TreeError(
            f"tree_crossinterpolate: f is zero at {START_SAMPLES} random multi-indices; nothing to start from"
        )
    pivot = trial[int(np.argmax(vals))].copy()
    for _ in range(2):
        for k, d in enumerate(dims):
            line = np.repeat(pivot[None, :], d, axis=0)
            line[:, k] = np.arange(d)
            pivot[k] = int(np.argmax(np.abs(fn.values(line))))
    return pivot


def rank_cap(*_: Any, max_bond: Any = None, **__: Any) -> int | None:
    """The size of the tree TCIs' thread policy: ``max_bond`` (None, unbounded: the policy's small size,
    as :func:`tensor4all.tci.crossinterpolate2`'s)."""
    return max_bond if isinstance(max_bond, int) and not isinstance(max_bond, bool) else None


@thread_policy(rank_cap)
def tree_crossinterpolate(
    f: Callable[..., Any],
    tree: Any,
    local_dims: int | Sequence[int],
    *,
    tolerance: float = 1e-12,
    max_bond: int | None = None,
    max_iter: int = 20,
    global_pivots: int = 5,
    batched: bool = False,
    seed: int | None = 0,
) -> TreeTCIResult:
    """Interpolate ``f`` on a tree: ``f(idx)`` takes one multi-index (``idx[u]`` the index of
    node ``u``, ``0 <= idx[u] < local_dims[u]``; with ``batched=True`` an ``(m, n)`` array and
    returns ``m`` numbers). ``tolerance`` is relative to the largest ``|f|`` seen; ``max_bond``
    caps every edge; sweeps stop when the error estimate stayed below the tolerance with the
    same ranks and no global pivot found for two sweeps, or after ``max_iter``. After each
    sweep ``global_pivots`` random starts look for points the network misses (``0``: off);
    those found join every edge's sets."""
    if not callable(f):
        raise Tensor4allTypeError(f"tree_crossinterpolate: f must be callable, got {type(f).__name__}")
    tree = as_tree(tree, "tree_crossinterpolate")
    n = tree.n_nodes
    dims = [local_dims] * n if isinstance(local_dims, numbers.Integral) else list(local_dims)
    if len(dims) != n:
        raise TopologyMismatchError(f"tree_crossinterpolate: {len(dims)} local dimensions for {n} nodes")
    if any(not isinstance(d, numbers.Integral) or d < 1 for d in dims):
        raise TreeError(f"tree_crossinterpolate: local dimensions must be positive integers, got {dims}")
    if not isinstance(tolerance, numbers.Real) or not 0 < tolerance < 1:
        raise InvalidOptionError(f"tree_crossinterpolate: tolerance must lie in (0, 1) (relative), got {tolerance!r}")
    if max_bond is not None and (not isinstance(max_bond, numbers.Integral) or max_bond < 1):
        raise InvalidOptionError(
            f"tree_crossinterpolate: max_bond must be a positive integer or None, got {max_bond!r}"
        )
    if not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise InvalidOptionError(f"tree_crossinterpolate: max_iter must be a positive integer, got {max_iter!r}")
    if not isinstance(global_pivots, numbers.Integral) or global_pivots < 0:
        raise InvalidOptionError(f"tree_crossinterpolate: global_pivots must be an integer >= 0, got {global_pivots!r}")
    fn = CachedFunction(f, [int(d) for d in dims], batched=bool(batched), what="tree_crossinterpolate: f")
    rng = np.random.default_rng(seed)
    cross = TreeCross(fn, tree, _first_pivot(fn, rng))
    ranks: list[int] = []
    errors: list[float] = []
    n_found: list[int] = []
    termination = "max_iter"
    schedule = tree.schedule(0, two_site=True)
    for _ in range(int(max_iter)):
        start = {k: a.copy() for k, a in cross.I.items()}
        for step in schedule:
            cross.update(step.leaving, step.arriving, tolerance * fn.max_abs, max_bond)
        bonds = {e: len(cross.I[e]) for e in tree.edges}
        ranks.append(max(bonds.values(), default=1))
        errors.append(max(cross.errors.values(), default=0.0) / fn.max_abs)
        found = cross.global_search(int(global_pivots), tolerance * fn.max_abs, rng) if tree.edges else []
        if len(found):
            cross.add_pivots(found)
        n_found.append(len(found))
        cross.previous = start
        if (
            len(errors) >= CHECK_HISTORY
            and max(errors[-CHECK_HISTORY:]) < tolerance
            and len(set(ranks[-CHECK_HISTORY:])) == 1
            and not any(n_found[-CHECK_HISTORY:])
        ):
            termination = "converged"
            break
    if not tree.edges:
        errors, ranks = [0.0], [1]
    cross.nest(tolerance * fn.max_abs, max_bond)
    ttn = cross.network()
    return TreeTCIResult(ttn, ranks, errors, fn.evaluations, ttn.bond_dims, termination)
