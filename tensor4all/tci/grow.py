"""Rank-adaptive pivot insertion on one bond, for ``pivot_search="fiber"``.

The bond ``b`` of TCI2 joins sites ``b`` and ``b+1``; its two-site matrix has the rows
``I[b] x {0..d_b-1}`` and the columns ``{0..d_{b+1}-1} x J[b+1]``. With nested sets, the
pivot rows ``I[b+1]`` and columns ``J[b]`` lie among them, and the columns ``J[b]`` of the
matrix are site ``b``'s fiber ``f(I[b], s, J[b])``, its rows ``I[b+1]`` site ``b+1``'s fiber
``f(I[b+1], s, J[b+1])``: the samples the tensor train is built from. :func:`grow_bond`
keeps those pivots and adds new ones from the Schur complement (the residual of the
cross), one rook move at a time on the local dimensions (TensorCrossInterpolation.jl's
``sweep1site`` fibers with ``arrlu``'s rook moves, teneva's ``cross`` one-site fibers):

1. probe columns: those probed before on this bond while their residual is above the
   tolerance (free: every value is cached), else fresh ones, drawn at random in proportion
   to ``|f|`` on the pivot rows (a localized ``f`` is probed where it lives; plus a floor
   of ``1e-3`` of the largest, so no column is out of reach; Efraimidis and Spirakis's
   weighted draw without replacement). The batch size is the caller's guess (the pivots
   the bond's last update added, or what a neighbouring bond has more), doubled after a
   batch that was all pivots, one again after one that was not, and never past the
   neighbour's rank (``rank_hint``: the probes beyond the rank are the samples wasted);
2. the partial LU of the residual on the probe columns names rows, which are sampled in
   full (read off the columns when every column is known); the partial LU of their
   residual names the pivots (preferring probed columns while they hold half the largest
   residual): those rows and columns join the sets.

Every request is one call to ``f`` for whole rows and columns together (``lines``); when
the pivot rows are cached already (``known_rows``), the first probes are drawn before the
pivot lines are read and ride along in the same call. A pivot's row and column are fibers
of the train, so finding it costs no samples beyond the train's own, except probe columns
that did not become pivots. The bond's error is the largest residual left on the probe
columns: a probe that finds nothing above the tolerance ends the update, unless ``f``
itself is below the tolerance on it (it checks nothing; up to ``EMPTY_DRAWS`` such in a
row are replaced by fresh ones). Sets only grow, so nesting (``I[b+1]`` within ``I[b] x
{0..d_b-1}``) and square, invertible pivot matrices hold after every update, and the
samples of earlier sweeps stay part of the fibers.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .lu import rrlu

__all__ = ["grow_bond"]

SEEN_FRACTION = 0.5  # sampled columns are kept while they hold this fraction of the largest residual
FLOOR = 1e-3  # probe weights: |f| on the pivot rows, plus this fraction of their largest
RELTOL = 1e-14  # as in tci2: pivots below this fraction of the first one are not taken
EMPTY_DRAWS = 3  # fresh probes on which |f| is below the tolerance, in a row, before one is believed

Lines = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


class _Sampled:
    """The whole rows and columns of the matrix read so far, and the cross of its pivots."""

    def __init__(self, m: int, n: int):
        self.col_at = np.full(n, -1, dtype=np.int64)  # column j is self.C[:, col_at[j]]
        self.row_at = np.full(m, -1, dtype=np.int64)
        self.C = np.zeros((m, 0))
        self.R = np.zeros((0, n))
        self._rank = -1

    def add(self, r: np.ndarray, rv: np.ndarray | None, c: np.ndarray, cv: np.ndarray | None) -> None:
        """Record the rows ``r`` with values ``rv`` and the columns ``c`` with values ``cv``."""
        if len(r):
            self.row_at[r] = np.arange(len(self.R), len(self.R) + len(r))
            self.R = np.concatenate([self.R, rv]) if len(self.R) else rv
        if len(c):
            self.col_at[c] = np.arange(self.C.shape[1], self.C.shape[1] + len(c))
            self.C = np.concatenate([self.C, cv], axis=1) if self.C.shape[1] else cv

    def cross(self, rows: np.ndarray, cols: np.ndarray) -> None:
        """``A = M[:, cols]`` and ``PB = M[rows, cols]^-1 M[rows, :]`` for the current pivots."""
        if self._rank != len(rows):
            self.A = self.C[:, self.col_at[cols]]
            self.PB = np.linalg.solve(self.A[rows], self.R[self.row_at[rows]])
            self._rank = len(rows)

    def fetch_rows(self, r: np.ndarray, lines: Lines) -> None:
        """Sample the rows ``r`` (read off the columns when every column is known)."""
        if len(r):
            known = self.C.shape[1] == len(self.col_at) and np.all(self.col_at >= 0)
            self.add(r, self.C[r][:, self.col_at] if known else lines(r, r[:0])[0], r[:0], None)

    def fetch_cols(self, c: np.ndarray, lines: Lines) -> None:
        """Sample the columns ``c`` (read off the rows when every row is known)."""
        if len(c):
            known = len(self.R) == len(self.row_at) and np.all(self.row_at >= 0)
            self.add(c[:0], None, c, self.R[self.row_at][:, c] if known else lines(c[:0], c)[1])

    def residual_cols(self, c: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        if not len(rows):
            return self.C[:, self.col_at[c]]
        self.cross(rows, cols)
        return self.C[:, self.col_at[c]] - self.A @ self.PB[:, c]

    def residual_rows(self, r: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        if not len(rows):
            return self.R[self.row_at[r]]
        self.cross(rows, cols)
        return self.R[self.row_at[r]] - self.A[r] @ self.PB


def _draw(rng: np.random.Generator, free: np.ndarray, weight: np.ndarray, size: int) -> np.ndarray:
    """``size`` of the positions ``free``, without replacement, each drawn in proportion to its
    weight among those left (Efraimidis and Spirakis, Inf. Process. Lett. 97, 181 (2006): the
    largest ``u^(1/w)``), in increasing order."""
    weight = weight + FLOOR * np.max(weight) + 1e-300
    keys = np.log(rng.random(free.size)) / weight
    if size >= free.size:
        return free
    return np.sort(free[np.argpartition(-keys, size - 1)[:size]])


def grow_bond(
    lines: Lines,
    shape: tuple[int, int],
    rows: np.ndarray,
    cols: np.ndarray,
    *,
    rng: np.random.Generator,
    abstol: float,
    max_rank: int | None = None,
    batch: int = 1,
    rank_hint: int = 0,
    known_rows: Callable[[np.ndarray], np.ndarray | None] | None = None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """New pivots ``(rows, cols)`` (the given ones first, then those added) of the ``shape``
    matrix whose whole rows ``r`` and columns ``c`` ``lines(r, c)`` returns (an ``(len(r), n)``
    and an ``(m, len(c))`` array, one call), and the largest residual left on the lines sampled.
    Pivots are added while a rook search finds a residual entry of magnitude at least ``abstol``
    (and above zero) and the rank is below ``max_rank``. ``batch`` is the number of fresh probe
    columns drawn first (the pivots the bond's last update added); their number doubles while a
    batch is all pivots, but not past ``rank_hint`` (a neighbouring bond's rank). ``known_rows(r)``,
    if given, returns the pivot rows when they are known without sampling (else ``None``): then
    the first probes are drawn before the first call and sampled with the pivot lines."""
    m, n = shape
    kmax = min(m, n) if max_rank is None else min(m, n, max_rank)
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    got = _Sampled(m, n)
    used = np.zeros(n, dtype=bool)  # pivot and probe columns
    used[cols] = True
    new = cols[:0]
    if len(rows) and len(rows) < kmax and known_rows is not None:
        prior = known_rows(rows)
        if prior is not None:  # the first probes ride along with the pivot lines
            free = np.flatnonzero(~used)
            if free.size:
                new = _draw(rng, free, np.max(np.abs(prior), axis=0)[free], min(batch, free.size))
                used[new] = True
    c = np.concatenate([cols, new])
    rv, cv = lines(rows, c)
    got.add(rows, rv, c, cv)
    seen = new  # probe columns: their residuals are free to recompute
    fresh = bool(new.size)
    error = 0.0
    empty = 0  # fresh probes in a row on which |f| is below the tolerance
    while len(rows) < kmax:
        # rows: the partial LU of the residual on the probe columns (fresh random ones when
        # those have nothing left above the tolerance; their number doubles while they pay)
        res = got.residual_cols(seen, rows, cols)
        if not new.size:
            fresh = not seen.size or float(np.max(np.abs(res))) <= abstol
            if fresh:
                free = np.flatnonzero(~used)
                if free.size == 0:
                    error = float(np.max(np.abs(res))) if res.size else 0.0
                    break
                # drawn in proportion to |f| on the pivot rows: a localized f is probed where it lives
                weight = np.max(np.abs(got.R[got.row_at[rows]]), axis=0)[free] if len(rows) else np.ones(free.size)
                new = _draw(rng, free, weight, min(batch, free.size))
                used[new] = True
                got.fetch_cols(new, lines)
                seen = np.concatenate([seen, new])
                res = got.residual_cols(seen, rows, cols)
        room = kmax - len(rows)
        lu = rrlu(res, abstol=abstol, reltol=RELTOL, max_rank=room)
        if lu.rank == 0 or lu.pivots[0] < abstol:
            error = float(np.max(np.abs(res))) if res.size else 0.0
            if fresh and empty < EMPTY_DRAWS and np.max(np.abs(got.C[:, got.col_at[new]])) < abstol:
                empty += 1  # probes where f itself is below the tolerance check nothing: others
                new = cols[:0]
                continue
            break
        # then the rook move: the partial LU of the residual on those full rows picks the columns
        cand = lu.rows.astype(np.int64)
        got.fetch_rows(cand[got.row_at[cand] < 0], lines)
        res_rows = got.residual_rows(cand, rows, cols)
        mag = np.abs(res_rows)
        if np.max(mag[:, seen]) >= SEEN_FRACTION * np.max(mag):  # probed columns are free: kept if nearly as good
            lu2 = rrlu(res_rows[:, seen], abstol=abstol, reltol=RELTOL, max_rank=room)
            add_cols = seen[lu2.cols]
        else:
            lu2 = rrlu(res_rows, abstol=abstol, reltol=RELTOL, max_rank=room)
            add_cols = lu2.cols.astype(np.int64)
        if lu2.rank == 0 or lu2.pivots[0] < abstol:  # cannot happen in exact arithmetic
            error = float(lu.pivots[0])
            break
        add_rows = cand[lu2.rows]
        got.fetch_cols(add_cols[got.col_at[add_cols] < 0], lines)
        rows, cols = np.concatenate([rows, add_rows]), np.concatenate([cols, add_cols])
        used[add_cols] = True
        error = float(lu2.pivots[-1])
        if fresh:  # doubled while a fresh batch is all pivots, else back to one
            batch = min(2 * batch, len(rows)) if len(add_rows) >= len(new) else 1
        else:  # pivots found on earlier probes count against the next batch
            batch = max(1, batch - len(add_rows))
        if len(rows) < rank_hint:  # a neighbour's rank: no batch beyond it
            batch = min(batch, rank_hint - len(rows))
        elif rank_hint > 1:  # past it: one probe at a time
            batch = 1
        new, empty = cols[:0], 0
    if len(rows) == min(m, n):  # every row or every column a pivot: the cross is exact
        error = 0.0
    elif len(rows) >= kmax:  # the rank cap: the residual left on a probe column
        if not seen.size:
            seen = _draw(rng, np.flatnonzero(~used), np.ones(int(np.sum(~used))), 1)
            got.fetch_cols(seen, lines)
        error = float(np.max(np.abs(got.residual_cols(seen, rows, cols))))
    return rows, cols, error
