"""The TCI2 algorithm: pivot sets per bond, two-site sweeps, global pivots, termination.

Notation of Fernandez et al., SciPost Phys. 18, 104 (2025) (and TensorCrossInterpolation.jl
``tensorci2.jl``): site ``k`` carries the left set ``I[k]`` (multi-indices of sites
``0 .. k-1``, an ``(r, k)`` array) and the right set ``J[k]`` (sites ``k+1 .. L-1``); bond
``b`` joins sites ``b`` and ``b+1`` and its rank is ``|I[b+1]| = |J[b]|``.

* A two-site update of bond ``b`` samples ``f`` on the rows ``I[b] x {0..d_b-1}`` and the
  columns ``{0..d_{b+1}-1} x J[b+1]`` (plus the sets of the previous sweep, so pivots once
  found are not lost: the non-strictly nested variant), factorizes that matrix by
  rank-revealing LU (:mod:`._tci_lu`, full or rook pivoting) with the absolute tolerance
  ``tolerance * max|f|`` and takes its pivots as the new ``I[b+1]``, ``J[b]``. The largest
  entry left in the Schur complement is the bond's error (the paper's error estimate).
* With ``pivot_search="fiber"`` a bond update instead keeps ``I[b+1]``, ``J[b]`` and adds
  pivots found on the residual of the cross (:mod:`.grow`): the sets only grow, stay nested
  and square, and the samples are the one-site fibers ``f(I[k], s, J[k])`` plus the probes;
  the global pivot search only checks (its points block convergence but join no set), and
  the last sweep below takes no samples. A bond whose rank is that of its unfolding (all
  of ``f``'s sites on one side) is exact and skipped (its fibers are sampled with the
  train's at the end). A site of dimension 1 is passed through: the two sites of dimension
  above 1 around it form one bond update, so the bonds beside it cannot hold each other at
  rank 1. Several initial pivots give nested sets with square, nonsingular pivot matrices
  (per bond, a maximal nonsingular set of their prefixes and suffixes, :meth:`TCI2._nest`).
* Sweeps go forward and backward in turn. After each, the current tensor train is
  compared with ``f`` around a few random points (each index varied in turn from a random
  multi-index: TensorCrossInterpolation.jl's default global pivot finder; here the starts
  are stratified over the lexicographic order, one per equal slice, so they spread over
  the domain's large regions); points where the error exceeds ten times the tolerance join
  the pivot sets as global pivots. The error reported for a sweep is the largest of the
  bonds' errors and of the errors the global search saw.
* It stops when, for ``3`` sweeps in a row, the error estimate is below the tolerance, no
  global pivot was added and the rank did not grow (``"converged"``); when the rank sits
  at ``max_bond`` for 3 sweeps (``"max_bond"``); or after ``max_iter`` sweeps
  (``"max_iter"``).
* A last one-site sweep makes the sets nested (``I[k+1]`` within ``I[k] x {0..d_k-1}``)
  and every pivot matrix square, and :class:`Cross` records the sampled entries the tensor
  train is built from: site ``k`` is ``f(I[k], s, J[k]) P_k^-1`` with the pivot matrix
  ``P_k = f(I[k+1], J[k])``, a subset of the same samples (the last site has no ``P``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .cache import CachedFunction
from .errors import ZeroFunctionError
from .grow import grow_bond
from .lu import PivotLU, rrlu, rrlu_rook

__all__ = ["TCI2Options", "Cross", "run_tci2"]

CHECK_HISTORY = 3  # sweeps that must agree before convergence (TCI.jl's ncheckhistory)
GLOBAL_MARGIN = 10.0  # a global pivot's error must exceed this times the tolerance
RELTOL = 1e-14  # pivots below this fraction of the first one are not taken


@dataclass(frozen=True)
class TCI2Options:
    tolerance: float = 1e-8
    max_bond: int | None = None
    max_iter: int = 20
    pivot_search: str = "full"
    normalize_error: bool = True
    global_pivots: int = 5


@dataclass(frozen=True)
class Cross:
    """The sampled entries the tensor train is built from.

    ``points`` is an ``(n, L)`` array of distinct multi-indices; ``site_index[k]`` an
    ``(r_k, d_k, r_{k+1})`` array of positions into ``points`` (the entries ``f(I[k], s,
    J[k])``); ``pivot_rows[k]`` the rows of that tensor, as a ``(r_k d_k, r_{k+1})`` matrix
    in row-major order, that form the pivot matrix ``P_k`` (``k < L - 1``). ``I`` and ``J``
    are the final pivot sets."""

    points: np.ndarray
    site_index: list[np.ndarray]
    pivot_rows: list[np.ndarray]
    I: list[np.ndarray] = field(repr=False)
    J: list[np.ndarray] = field(repr=False)


@dataclass
class History:
    ranks: list[int] = field(default_factory=list)
    errors: list[float] = field(default_factory=list)  # reported: the bonds' and the global search's
    bond_errors: list[float] = field(default_factory=list)  # the bonds' alone: the convergence test
    n_global: list[int] = field(default_factory=list)
    termination: str = "max_iter"


# ---- index-set helpers --------------------------------------------------------------------
def _union(a: np.ndarray, b: np.ndarray, keys: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """The rows of ``a`` then those of ``b`` not in ``a``, each once, in order (rows compared
    through ``keys(rows)``, one integer per row, when given)."""
    if a.shape[1] == 0:
        return a[:1] if len(a) else b[:1]
    c = np.concatenate([a, b])
    if keys is None:
        _, first = np.unique(c, axis=0, return_index=True)
    else:
        _, first = np.unique(keys(c), return_index=True)
    return c[np.sort(first)]


def _kron_left(I: np.ndarray, d: int) -> np.ndarray:
    """Rows ``(i, s)`` of ``I x {0..d-1}``, row ``i * d + s``."""
    return np.concatenate([np.repeat(I, d, axis=0), (np.arange(len(I) * d) % d)[:, None]], axis=1)


def _kron_right(d: int, J: np.ndarray) -> np.ndarray:
    """Columns ``(s, j)`` of ``{0..d-1} x J``, column ``s * |J| + j``."""
    return np.concatenate(
        [np.repeat(np.arange(d), len(J))[:, None], np.broadcast_to(J, (d, *J.shape)).reshape(d * len(J), J.shape[1])],
        axis=1,
    )


def _pairs(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The multi-indices ``rows[i] + cols[j]``, row-major in ``(i, j)``."""
    tiled = np.broadcast_to(cols, (len(rows), *cols.shape)).reshape(len(rows) * len(cols), cols.shape[1])
    return np.concatenate([np.repeat(rows, len(cols), axis=0), tiled], axis=1)


def _positions(sub: np.ndarray, full: np.ndarray) -> np.ndarray:
    """Positions in ``full`` of the rows of ``sub`` that occur there."""
    if len(sub) == 0 or full.shape[1] == 0:
        return np.zeros(min(len(sub), len(full)), dtype=np.int64)
    where = {row.tobytes(): i for i, row in enumerate(np.ascontiguousarray(full))}
    pos = [where.get(row.tobytes()) for row in np.ascontiguousarray(sub)]
    return np.array([p for p in pos if p is not None], dtype=np.int64)


# ---- the state ----------------------------------------------------------------------------
class TCI2:
    """Pivot sets of every bond and the sweeps that update them."""

    def __init__(self, fn: CachedFunction, pivots: np.ndarray, opts: TCI2Options, rng: np.random.Generator):
        self.fn, self.opts, self.rng = fn, opts, rng
        self.dims = fn.dims
        self.L = L = len(self.dims)
        self.I = [pivots[:1, :0]] + [None] * (L - 1)
        self.J = [None] * (L - 1) + [pivots[:1, :0]]
        for k in range(1, L):
            self.I[k] = self._union_left(pivots[:1, :k], pivots[:, :k])
        for k in range(L - 1):
            self.J[k] = self._union_right(pivots[:1, k + 1 :], pivots[:, k + 1 :])
        self.previous: tuple[list, list] | None = None  # the sets at the start of the last sweep
        self.bond_errors = np.zeros(max(L - 1, 0))
        self.global_error = 0.0  # the largest error the last global search saw
        self.added = [1] * max(L - 1, 0)  # "fiber": first probes, the pivots of a last update the size stopped
        self.full = [False] * max(L - 1, 0)  # "fiber": whether the bond's last update was stopped by its size
        self.max_rank = opts.max_bond
        # "fiber": the sites of dimension above 1; consecutive ones (a, c) form one bond update
        self.sites = [k for k, d in enumerate(self.dims) if d > 1]
        self.groups = list(zip(self.sites[:-1], self.sites[1:]))
        # the rank of each bond's unfolding, f as a (prod dims[:b+1], prod dims[b+1:]) matrix
        self.full_rank = [min(math.prod(self.dims[: b + 1]), math.prod(self.dims[b + 1 :])) for b in range(L - 1)]
        if opts.pivot_search == "fiber" and len(pivots) > 1:
            self._nest(pivots)

    def _union_left(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Union of left sets (sites ``0 .. k-1``), rows compared by their grid positions."""
        return _union(a, b, lambda c: self.fn.encode(c, 0))

    def _union_right(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Union of right sets (the last ``a.shape[1]`` sites)."""
        return _union(a, b, lambda c: self.fn.encode(c, self.L - c.shape[1]))

    @property
    def rank(self) -> int:
        return max((len(self.I[k]) for k in range(1, self.L)), default=1)

    def abstol(self) -> float:
        return self.opts.tolerance * (self.fn.max_abs if self.opts.normalize_error else 1.0)

    # ---- two-site sweeps ------------------------------------------------------------------
    def sweep(self, forward: bool) -> None:
        bonds = range(self.L - 1) if forward else range(self.L - 2, -1, -1)
        if self.opts.pivot_search == "fiber":  # nested sets that only grow (:mod:`.grow`)
            for a, c in self.groups if forward else self.groups[::-1]:
                self._grow_bond(a, c, forward)
            return
        start = ([a.copy() for a in self.I], [a.copy() for a in self.J])
        extra = self.previous
        self.previous = start
        for b in bonds:
            self._update_bond(b, extra)

    def _grow_bond(self, a: int, c: int, forward: bool) -> None:
        """Pivots added by :func:`.grow.grow_bond` between the sites ``a < c`` of dimension above
        1 (the sites between them have dimension 1: their bonds carry the same pivots, index 0
        there); none when they already fill the bond's unfolding (the cross is exact; its samples
        are taken with the train's). The matrix has the rows ``I[a] x {0..d_a-1} x {0}..`` and the
        columns ``{0..d_c-1} x J[c]``: a site of dimension 1 between two bonds does not cap them
        at each other's rank."""
        b = c - 1  # the bond whose sets I[c], J[c - 1] are updated; bonds a .. c-2 pass through
        if len(self.J[b]) == self.full_rank[b]:
            self.bond_errors[b], self.full[b] = 0.0, True
            return
        rows = self._pad_left(_kron_left(self.I[a], self.dims[a]), c)
        cols = _kron_right(self.dims[c], self.J[c])
        m, n = len(rows), len(cols)
        r, cc = _positions(self.I[c], rows), _positions(self.J[b], cols)
        mat = self.fn.matrix(rows, cols)
        hint = max(len(r), len(self.I[a]) if forward else len(self.J[c]))  # the neighbour's rank
        r, cc, self.bond_errors[b] = grow_bond(
            mat.lines,
            mat.shape,
            r,
            cc,
            rng=self.rng,
            abstol=self.abstol(),
            max_rank=self.max_rank,
            # after an update the matrix's size stopped, as many probes as the neighbour has pivots more
            batch=max(self.added[b], hint - len(r)) if self.full[b] else self.added[b],
            rank_hint=hint,
            known_rows=mat.known_rows,
        )
        self.full[b] = len(r) == min(m, n)  # stopped by the matrix's size, not by a probe
        self.added[b] = max(1, len(r) - len(self.I[c])) if self.full[b] else 1
        self.I[c], self.J[b] = rows[r], cols[cc]
        self._pass_through(a, c)

    def _pad_left(self, rows: np.ndarray, k: int) -> np.ndarray:
        """Left indices ``rows`` extended by index 0 up to site ``k - 1`` (sites of dimension 1)."""
        return np.concatenate([rows, np.zeros((len(rows), k - rows.shape[1]), dtype=rows.dtype)], axis=1)

    def _pass_through(self, a: int, c: int) -> None:
        """The sets of the bonds ``a .. c-2`` from those of bond ``c - 1`` (index 0 on the sites
        ``a+1 .. c-1`` of dimension 1): ``I[k] = I[c]`` cut to ``k`` sites, ``J[k] = 0.. x J[c-1]``."""
        for k in range(a + 1, c):
            self.I[k] = self.I[c][:, :k]
        for k in range(max(a, 0), c - 1):
            z = np.zeros((len(self.J[c - 1]), c - 1 - k), dtype=self.J[c - 1].dtype)
            self.J[k] = np.concatenate([z, self.J[c - 1]], axis=1)

    def _in_left(self, rows: np.ndarray, k: int) -> np.ndarray:
        """Whether the first ``k`` sites of each row of ``rows`` are a row of ``I[k]``."""
        return np.isin(self.fn.encode(rows[:, :k], 0), self.fn.encode(self.I[k], 0))

    def _in_right(self, cols: np.ndarray, k: int) -> np.ndarray:
        """Whether the sites ``k+1 ..`` of each right index ``cols`` form a row of ``J[k]``."""
        tail = cols[:, cols.shape[1] - (self.L - 1 - k) :]
        return np.isin(self.fn.encode(tail, k + 1), self.fn.encode(self.J[k], k + 1))

    def _nest(self, pivots: np.ndarray) -> None:
        """``pivot_search="fiber"`` from several initial pivots: nested sets with square, nonsingular pivot
        matrices. ``I[k]``, ``J[k]`` start as the pivots' prefixes and suffixes (nested, but
        ``|I[b+1]|`` and ``|J[b]|`` may differ); each bond keeps the rows of ``I[b+1]`` whose
        prefix is in ``I[b]`` and the columns of ``J[b]`` whose suffix is in ``J[b+1]``, then a
        maximal nonsingular set of them (the pivots of ``rrlu`` on their cross), in forward and
        backward passes until no set shrinks (they only shrink: it ends). The bonds before the
        first and after the last site of dimension above 1 have rank 1: the largest entry. If a
        bond is left with no entry above zero, the pivot of largest ``|f|`` alone."""
        tol = self.abstol()
        changed = True
        while changed:
            changed = False
            for a, c in self.groups + self.groups[::-1]:
                rows = self.I[c][self._in_left(self.I[c], a)]
                cols = self.J[c - 1][self._in_right(self.J[c - 1], c)]
                lu = rrlu(self.fn.cross(rows, cols), abstol=tol, reltol=RELTOL, max_rank=self.max_rank)
                if lu.rank == 0:
                    self._single_path(pivots)
                    return
                changed |= lu.rank < max(len(self.I[c]), len(self.J[c - 1]))
                self.I[c], self.J[c - 1] = rows[np.sort(lu.rows)], cols[np.sort(lu.cols)]
                self._pass_through(a, c)
        if not self.sites:
            return
        first, last = self.sites[0], self.sites[-1]
        if first > 0:  # bond first - 1 has one row (index 0 on sites 0 .. first-1): its largest column
            cols = self.J[first - 1][self._in_right(self.J[first - 1], first)]
            vals = np.abs(self.fn.cross(self.I[first], cols))[0]
            if not len(vals) or vals.max() == 0:
                self._single_path(pivots)
                return
            self.J[first - 1] = cols[[int(np.argmax(vals))]]
            self._pass_through(-1, first)
        if last < self.L - 1:  # bond last has one column (index 0 on sites last+1 ..): its largest row
            rows = self.I[last + 1][self._in_left(self.I[last + 1], last)]
            vals = np.abs(self.fn.cross(rows, self.J[last]))[:, 0]
            if not len(vals) or vals.max() == 0:
                self._single_path(pivots)
                return
            self.I[self.L - 1] = self._pad_left(rows[[int(np.argmax(vals))]], self.L - 1)
            self._pass_through(last, self.L - 1)

    def _single_path(self, pivots: np.ndarray) -> None:
        """The sets of the one pivot of largest ``|f|``: nested, rank 1."""
        p = pivots[int(np.argmax(np.abs(self.fn.values(pivots))))]
        self.I = [p[None, :k] for k in range(self.L)]
        self.J = [p[None, k + 1 :] for k in range(self.L)]

    def _update_bond(self, b: int, extra: tuple[list, list] | None) -> None:
        rows = _kron_left(self.I[b], self.dims[b])
        cols = _kron_right(self.dims[b + 1], self.J[b + 1])
        if extra is not None:
            rows = self._union_left(rows, extra[0][b + 1])
            cols = self._union_right(cols, extra[1][b])
        lu = self._pivots(rows, cols, self.I[b + 1], self.J[b])
        if lu.rank == 0:  # f vanishes on every sampled entry: keep the pivots
            self.bond_errors[b] = 0.0
            return
        self.I[b + 1] = rows[lu.rows]
        self.J[b] = cols[lu.cols]
        self.bond_errors[b] = lu.error

    def _pivots(self, rows: np.ndarray, cols: np.ndarray, I_old: np.ndarray, J_old: np.ndarray) -> PivotLU:
        tol = self.abstol()
        if self.opts.pivot_search == "rook":
            lu = rrlu_rook(
                lambda r, c: self.fn.cross(rows[r], cols[c]),
                (len(rows), len(cols)),
                _positions(I_old, rows),
                _positions(J_old, cols),
                rng=self.rng,
                abstol=tol,
                reltol=RELTOL,
                max_rank=self.max_rank,
            )
            if lu.rank > 0:
                return lu
        return rrlu(self.fn.cross(rows, cols), abstol=tol, reltol=RELTOL, max_rank=self.max_rank)

    # ---- the current tensor train and global pivots ---------------------------------------
    def site_tensors(self) -> list[np.ndarray]:
        """``f(I[k], s, J[k]) P_k^-1`` with the current sets (NumPy; for the global search)."""
        ts = []
        for k in range(self.L):
            left = _kron_left(self.I[k], self.dims[k])
            pi = self.fn.cross(left, self.J[k])
            if k < self.L - 1:
                p = self.fn.cross(self.I[k + 1], self.J[k])
                if p.shape[0] == p.shape[1]:
                    try:
                        pi = np.linalg.solve(p.T, pi.T).T
                    except (np.linalg.LinAlgError, ValueError):
                        pi = pi @ np.linalg.pinv(p)
                else:
                    pi = pi @ np.linalg.pinv(p)
            ts.append(pi.reshape(len(self.I[k]), self.dims[k], -1))
        return ts

    def global_search(self) -> np.ndarray:
        """Multi-indices where the tensor train misses ``f`` by more than ``GLOBAL_MARGIN``
        times the tolerance: from each of ``global_pivots`` stratified random points
        (:func:`stratified_starts`), every index is varied in turn and the worst point kept."""
        n = self.opts.global_pivots
        if n == 0 or self.L == 1:
            return np.zeros((0, self.L), dtype=np.int64)
        ts = self.site_tensors()
        starts = stratified_starts(self.dims, n, self.rng)
        trial = []
        for k, d in enumerate(self.dims):
            p = np.repeat(starts, d, axis=0)
            p[:, k] = np.tile(np.arange(d), n)
            trial.append(p.reshape(n, d, self.L))
        points = np.concatenate(trial, axis=1)  # (n, sum(d), L)
        flat = points.reshape(-1, self.L)
        err = np.abs(self.fn.values(flat) - tt_values(ts, flat)).reshape(n, -1)
        self.global_error = float(np.max(err))
        best = np.argmax(err, axis=1)
        keep = err[np.arange(n), best] > GLOBAL_MARGIN * self.abstol()
        found = points[np.arange(n), best][keep]
        return np.unique(found, axis=0) if len(found) else found

    def add_pivots(self, points: np.ndarray) -> None:
        for k in range(1, self.L):
            self.I[k] = self._union_left(self.I[k], points[:, :k])
        for k in range(self.L - 1):
            self.J[k] = self._union_right(self.J[k], points[:, k + 1 :])

    # ---- the final one-site sweep and the cross --------------------------------------------
    def cross(self) -> Cross:
        """Nested sets and square pivot matrices from a forward one-site sweep, and the
        sampled entries of the tensor train."""
        rows_of = []
        tol = self.abstol()
        for b in range(self.L - 1):
            if self.opts.pivot_search == "fiber":  # nested and square already: no new samples
                rows_of.append(_positions(self.I[b + 1], _kron_left(self.I[b], self.dims[b])))
                continue
            left = _kron_left(self.I[b], self.dims[b])
            lu = rrlu(self.fn.cross(left, self.J[b]), abstol=tol, reltol=RELTOL, max_rank=self.max_rank)
            if lu.rank == 0:
                raise ZeroFunctionError(
                    f"crossinterpolate2: f is zero on every sampled entry across bond {b} (sites {b} and {b + 1}); "
                    "give initial_pivots where f is not zero in each region it lives on"
                )
            self.I[b + 1] = left[lu.rows]
            self.J[b] = self.J[b][lu.cols]
            rows_of.append(lu.rows)
        blocks = []
        for k in range(self.L):
            left = _kron_left(self.I[k], self.dims[k])
            blocks.append(_pairs(left, self.J[k]))
        allpts = np.concatenate(blocks)
        _, first, inverse = np.unique(self.fn.encode(allpts, 0), return_index=True, return_inverse=True)
        points, inverse = allpts[first], inverse.reshape(-1)
        site_index, start = [], 0
        for k, blk in enumerate(blocks):
            site_index.append(inverse[start : start + len(blk)].reshape(len(self.I[k]), self.dims[k], len(self.J[k])))
            start += len(blk)
        return Cross(points, site_index, rows_of, [a.copy() for a in self.I], [a.copy() for a in self.J])


def stratified_starts(dims: list[int], n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random multi-indices, the ``i``-th in the ``i``-th of ``n`` equal slices of the
    index set in lexicographic order (site 0 the coarsest; to the resolution of the leading
    sites): those are the mixed-radix digits of ``(i + u_i) / n``, ``u_i`` uniform, up to
    the first site whose digits tell ``n`` slices apart; the rest are uniform. Stratified sampling spreads the starts of the
    global search over the whole domain (in quantics the leading digits address its large
    regions: Ritter et al., PRL 132, 056501 (2024)), where independent uniform starts may
    cluster and miss a region."""
    starts = np.empty((n, len(dims)), dtype=np.int64)
    fraction = (np.arange(n) + rng.random(n)) / n
    resolved = 1  # the number of slices the digits so far tell apart
    for k, d in enumerate(dims):
        if resolved >= n:
            starts[:, k] = rng.integers(0, d, size=n)
            continue
        scaled = fraction * d
        starts[:, k] = np.minimum(np.floor(scaled), d - 1)
        fraction = scaled - starts[:, k]
        resolved *= d
    return starts


def tt_values(ts: list[np.ndarray], points: np.ndarray) -> np.ndarray:
    """The tensor train of site tensors ``ts`` at each row of ``points`` (NumPy; the points
    sharing an index at a site share one matrix product, no ``(left, n, right)`` array)."""
    env = ts[0][0, points[:, 0], :]
    for k in range(1, len(ts)):
        col = points[:, k]
        nxt = np.empty((len(points), ts[k].shape[2]), dtype=np.result_type(env, ts[k]))
        for s in np.unique(col):
            rows = col == s
            nxt[rows] = env[rows] @ ts[k][:, s, :]
        env = nxt
    return env[:, 0]


def _converged(h: History, tol: float, max_bond: int | None, fiber: bool = False) -> str | None:
    """``"converged"`` after :data:`CHECK_HISTORY` sweeps whose bond errors are below ``tol``, without
    global pivots and at a steady rank; with ``fiber`` (whose global search only checks: its sets
    stay nested, so the pivots it finds are not added) the reported errors, the global search's
    included, must be below ``tol`` too: a global error under ``GLOBAL_MARGIN`` times the tolerance
    but above it was reported as converged (1.15e-10 true error at ``tolerance=1e-11``)."""
    if len(h.bond_errors) < CHECK_HISTORY:
        return None
    ranks = h.ranks[-CHECK_HISTORY:]
    if max_bond is not None and min(ranks) >= max_bond:
        return "max_bond"
    errors = h.errors if fiber else h.bond_errors
    if max(errors[-CHECK_HISTORY:]) < tol and not any(h.n_global[-CHECK_HISTORY:]) and min(ranks) == ranks[-1]:
        return "converged"
    return None


def run_tci2(
    fn: CachedFunction, pivots: np.ndarray, opts: TCI2Options, rng: np.random.Generator
) -> tuple[Cross, History]:
    """Sweeps until termination, then the final cross."""
    tci = TCI2(fn, pivots, opts, rng)
    h = History()
    if tci.L == 1:
        h.ranks.append(1)
        h.errors.append(0.0)
        h.bond_errors.append(0.0)
        h.n_global.append(0)
        h.termination = "converged"
        return tci.cross(), h
    for it in range(opts.max_iter):
        tci.sweep(forward=it % 2 == 0)
        found = tci.global_search()
        norm = fn.max_abs if opts.normalize_error else 1.0
        # the estimate: the largest error left on a bond's matrix or seen by the global search
        # (a bond's matrix can be exact while the train is not, e.g. next to a site of dimension 1)
        # (convergence asks the bonds' errors below the tolerance and no global pivot, that is
        # the global search's error below GLOBAL_MARGIN times it)
        bond_error = float(np.max(tci.bond_errors))
        h.bond_errors.append(bond_error / norm if norm > 0 else 0.0)
        h.errors.append(max(bond_error, tci.global_error) / norm if norm > 0 else 0.0)
        if opts.pivot_search != "fiber":  # "fiber": a check that blocks convergence; sets stay nested
            tci.add_pivots(found)
        h.n_global.append(len(found))
        h.ranks.append(tci.rank)
        stop = _converged(h, opts.tolerance, opts.max_bond, opts.pivot_search == "fiber")
        if stop is not None:
            h.termination = stop
            break
    return tci.cross(), h
