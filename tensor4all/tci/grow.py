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
   of ``1e-3`` of the largest, so no column is out of reach). One at first, twice as many
   after a batch that was all pivots, one again after one that was not;
2. the partial LU of the residual on the probe columns names rows, which are sampled in
   full; the partial LU of their residual names the pivots (preferring probed columns
   while they hold half the largest residual): those rows and columns join the sets.

A pivot's row and column are fibers of the train, so finding it costs no samples beyond
the train's own, except probe columns that did not become pivots. The bond's error is
the largest residual left on the probe columns: a probe that finds nothing above the
tolerance ends the update. Sets only grow, so nesting (``I[b+1]`` within ``I[b] x
{0..d_b-1}``) and square, invertible pivot matrices hold after every update, and the
samples of earlier sweeps stay part of the fibers.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .lu import PivotLU, rrlu

__all__ = ["grow_bond"]

SEEN_FRACTION = 0.5  # sampled columns are kept while they hold this fraction of the largest residual
FLOOR = 1e-3  # probe weights: |f| on the pivot rows, plus this fraction of their largest
RELTOL = 1e-14  # as in tci2: pivots below this fraction of the first one are not taken


def grow_bond(
    block: Callable[[np.ndarray, np.ndarray], np.ndarray],
    shape: tuple[int, int],
    rows: np.ndarray,
    cols: np.ndarray,
    *,
    rng: np.random.Generator,
    abstol: float,
    max_rank: int | None = None,
    batch: int = 1,
) -> tuple[np.ndarray, np.ndarray, float]:
    """New pivots ``(rows, cols)`` (the given ones first, then those added) of the ``shape``
    matrix whose sub-blocks ``block(r, c)`` returns, and the largest residual left on the
    lines sampled. Pivots are added while a rook search finds a residual entry of magnitude
    at least ``abstol`` (and above zero) and the rank is below ``max_rank``; ``batch`` is
    the number of fresh probe columns drawn first (the pivots the bond's last update added)."""
    m, n = shape
    kmax = min(m, n) if max_rank is None else min(m, n, max_rank)
    rows, cols = [int(r) for r in rows], [int(c) for c in cols]
    all_rows, all_cols = np.arange(m), np.arange(n)
    col_of: dict[int, np.ndarray] = {}  # raw columns and rows sampled: pivot lines and probes
    row_of: dict[int, np.ndarray] = {}
    if rows:
        a = block(all_rows, np.asarray(cols))  # site b's fiber
        col_of.update(zip(cols, a.T))
        row_of.update(zip(rows, block(np.asarray(rows), all_cols)))  # site b+1's fiber
    state: dict = {}

    def factors() -> tuple[np.ndarray, np.ndarray]:  # A = M[:, cols], B' = P^-1 M[rows, :]
        if state.get("r") != len(rows):
            A = np.stack([col_of[c] for c in cols], axis=1)
            Bm = np.stack([row_of[r] for r in rows])
            state.update(r=len(rows), A=A, PB=np.linalg.solve(A[rows], Bm))
        return state["A"], state["PB"]

    def residual_col(c: int) -> np.ndarray:
        if c not in col_of:
            col_of[c] = block(all_rows, np.asarray([c]))[:, 0]
        if not rows:
            return col_of[c]
        A, PB = factors()
        return col_of[c] - A @ PB[:, c]

    def residual_row(r: int) -> np.ndarray:
        if r not in row_of:
            row_of[r] = block(np.asarray([r]), all_cols)[0]
        if not rows:
            return row_of[r]
        A, PB = factors()
        return row_of[r] - A[r] @ PB

    seen_cols: list[int] = []  # probe columns: their residuals are free to recompute
    error = 0.0
    while len(rows) < kmax:
        # rows: the partial LU of the residual on the probe columns (fresh random ones when
        # those have nothing left above the tolerance; their number doubles while they pay)
        res = np.stack([residual_col(c) for c in seen_cols], axis=1) if seen_cols else np.zeros((m, 0))
        fresh = not seen_cols or float(np.max(np.abs(res))) <= abstol
        if fresh:
            free = np.setdiff1d(all_cols, np.asarray(cols + seen_cols, dtype=np.int64))
            if free.size == 0:
                error = float(np.max(np.abs(res))) if res.size else 0.0
                break
            # drawn in proportion to |f| on the pivot rows: a localized f is probed where it lives
            weight = np.max(np.abs(np.stack([row_of[r] for r in rows])), axis=0)[free] if rows else np.ones(free.size)
            weight = weight + FLOOR * np.max(weight) + 1e-300
            first = int(rng.choice(free.size, p=weight / weight.sum()))
            size = min(batch - 1, free.size - 1)
            rest = np.delete(np.arange(free.size), first)
            pick = rng.choice(rest, size=size, replace=False, p=weight[rest] / weight[rest].sum()) if size else rest[:0]
            new = np.sort(free[np.concatenate([[first], pick])])
            for c, v in zip(new.tolist(), block(all_rows, new).T):
                col_of[c] = v
            seen_cols += new.tolist()
            res = np.stack([residual_col(c) for c in seen_cols], axis=1)
        room = kmax - len(rows)
        lu = rrlu(res, abstol=abstol, reltol=RELTOL, max_rank=room)
        if lu.rank == 0 or lu.pivots[0] < abstol:
            error = float(np.max(np.abs(res))) if res.size else 0.0
            break
        # then the rook move: the partial LU of the residual on those full rows picks the columns
        cand = [int(r) for r in lu.rows]
        new_rows = [r for r in cand if r not in row_of]
        if new_rows:
            row_of.update(zip(new_rows, block(np.asarray(new_rows), all_cols)))
        res_rows = np.stack([residual_row(r) for r in cand])
        held = np.asarray(seen_cols, dtype=np.int64)  # probed columns are free: kept if nearly as good
        if np.max(np.abs(res_rows[:, held])) >= SEEN_FRACTION * np.max(np.abs(res_rows)):
            lu2 = rrlu(res_rows[:, held], abstol=abstol, reltol=RELTOL, max_rank=room)
            lu2 = PivotLU(lu2.rows, held[lu2.cols], lu2.pivots, lu2.error)
        else:
            lu2 = rrlu(res_rows, abstol=abstol, reltol=RELTOL, max_rank=room)
        if lu2.rank == 0 or lu2.pivots[0] < abstol:  # cannot happen in exact arithmetic
            error = float(lu.pivots[0])
            break
        add_rows = [cand[i] for i in lu2.rows]
        add_cols = [int(c) for c in lu2.cols]
        new_cols = [c for c in add_cols if c not in col_of]
        if new_cols:
            col_of.update(zip(new_cols, block(all_rows, np.asarray(new_cols)).T))
        rows += add_rows
        cols += add_cols
        error = float(lu2.pivots[-1])
        if fresh:  # doubled while a fresh batch is all pivots, else back to one
            batch = min(2 * batch, len(rows)) if len(add_rows) >= len(new) else 1
    if len(rows) == min(m, n):  # every row or every column a pivot: the cross is exact
        error = 0.0
    elif len(rows) >= kmax:  # the rank cap: the residual left on a probe column
        free = np.setdiff1d(all_cols, np.asarray(cols, dtype=np.int64))
        probe = seen_cols if seen_cols else [int(rng.choice(free))]
        error = max(float(np.max(np.abs(residual_col(c)))) for c in probe)
    return np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), error
