"""Partial rank-revealing LU: the one linear-algebra kernel of tensor cross interpolation.

``rrlu(a)`` runs Gaussian elimination with full pivoting on a dense matrix and stops as
soon as the largest entry of the remaining Schur complement falls below the tolerance
(or the rank reaches ``max_rank``). The selected rows and columns are the pivots of a
cross interpolation ``a ~ a[:, cols] a[rows, cols]^-1 a[rows, :]``, and the largest
entry of the Schur complement left over is its error on ``a``: the error estimate of
TCI2 (Fernandez et al., SciPost Phys. 18, 104 (2025), sec. 3.3; TensorCrossInterpolation.jl
``rrlu``).

``rrlu_rook(block, shape, ...)`` finds the same kind of pivots without reading the whole
matrix: rook search alternates eliminations on a few full columns and a few full rows
(``block(rows, cols)`` returns a sub-block), growing the sampled columns until the rank is
revealed (the SciPost paper, sec. 3.4; TensorCrossInterpolation.jl ``arrlu``).

Both work on NumPy arrays (float64 or complex128); nothing here is differentiated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["PivotLU", "rrlu", "rrlu_rook"]


@dataclass(frozen=True)
class PivotLU:
    """The pivots of a partial LU: ``rows[k]``, ``cols[k]`` are the positions (in the
    input matrix) of the k-th pivot, ``pivots[k]`` its magnitude in the Schur complement,
    ``error`` the largest magnitude left in the Schur complement after the last pivot
    (0 when the matrix is exhausted)."""

    rows: np.ndarray
    cols: np.ndarray
    pivots: np.ndarray
    error: float

    @property
    def rank(self) -> int:
        return len(self.rows)


def _abs2(a: np.ndarray) -> np.ndarray:
    return a.real * a.real + a.imag * a.imag if np.iscomplexobj(a) else a * a


def rrlu(a: np.ndarray, *, abstol: float = 0.0, reltol: float = 1e-14, max_rank: int | None = None) -> PivotLU:
    """Full-pivoting partial LU of ``a``.

    Pivots are added while the largest remaining entry is at least ``abstol`` and at least
    ``reltol`` times the largest pivot so far; the first pivot is always taken unless
    ``a`` is exactly zero (then the rank is 0 and the error 0).
    """
    a = np.array(a, dtype=np.complex128 if np.iscomplexobj(a) else np.float64, copy=True)
    m, n = a.shape
    kmax = min(m, n) if max_rank is None else min(m, n, max_rank)
    rows: list[int] = []
    cols: list[int] = []
    pivots: list[float] = []
    # the Schur complement in place: each rank-1 update zeroes the pivot's row and column
    error = None
    while len(rows) < kmax:
        mag = _abs2(a)
        i, j = divmod(int(np.argmax(mag)), n)
        val = float(np.sqrt(mag[i, j]))
        if val == 0.0 or (rows and (val < abstol or val < reltol * pivots[0])):
            error = val
            break
        a -= np.outer(a[:, j] / a[i, j], a[i])
        a[:, j] = 0.0
        rows.append(i)
        cols.append(j)
        pivots.append(val)
    if error is None:
        error = float(np.sqrt(np.max(_abs2(a)))) if len(rows) < min(m, n) else 0.0
    return PivotLU(np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(pivots), error)


def _with_random(picked: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``picked`` and as many other random positions below ``n`` (at least one, if any is left)."""
    free = np.setdiff1d(np.arange(n), picked, assume_unique=True)
    if not free.size:
        return picked
    extra = rng.choice(free, size=min(max(1, picked.size), free.size), replace=False)
    return np.concatenate([picked, np.sort(extra)])


def rrlu_rook(
    block: Callable[[np.ndarray, np.ndarray], np.ndarray],
    shape: tuple[int, int],
    rows0: np.ndarray,
    cols0: np.ndarray,
    *,
    rng: np.random.Generator,
    abstol: float = 0.0,
    reltol: float = 1e-14,
    max_rank: int | None = None,
    rook_iters: int = 5,
) -> PivotLU:
    """Pivots of the ``shape`` matrix whose sub-blocks ``block(rows, cols)`` returns, by rook
    search: starting from the pivots ``rows0``/``cols0`` (may be empty), alternately
    eliminate on all rows of the sampled columns and on all columns of the sampled rows
    until the pivots stop moving. Each round first adds as many random columns as there are
    pivot columns, and its first column move as many random rows as there are pivot rows
    (TensorCrossInterpolation.jl's ``arrlu`` adds columns only; the rows halve the rate at
    which a localized residual goes unseen); while every elimination is full rank and the
    rank is below ``max_rank``, another round. The error is the largest entry left by the
    eliminations of the last round (on the random rows and columns among others), so a
    full-rank sub-block does not read as error 0."""
    m, n = shape
    kmax = min(m, n) if max_rank is None else min(m, n, max_rank)
    rows = np.asarray(rows0, dtype=np.int64)
    cols = np.asarray(cols0, dtype=np.int64)
    all_rows, all_cols = np.arange(m), np.arange(n)
    lu = PivotLU(rows, cols, np.zeros(0), 0.0)
    while True:
        cols = _with_random(cols, n, rng)
        low_rank = False
        error = 0.0
        for it in range(rook_iters):
            if it % 2 == 0:  # every row, the sampled columns
                lu = rrlu(block(all_rows, cols), abstol=abstol, reltol=reltol, max_rank=kmax)
                new_rows, new_cols = lu.rows, cols[lu.cols]
                low_rank |= lu.rank < min(m, cols.size)
            else:  # the sampled rows and as many random ones, every column
                if it == 1:
                    rows = _with_random(rows, m, rng)
                lu = rrlu(block(rows, all_cols), abstol=abstol, reltol=reltol, max_rank=kmax)
                new_rows, new_cols = rows[lu.rows], lu.cols
                low_rank |= lu.rank < min(rows.size, n)
            error = max(error, lu.error)
            settled = (
                new_rows.size == rows.size
                and new_cols.size == cols.size
                and np.array_equal(np.sort(new_rows), np.sort(rows))
                and np.array_equal(np.sort(new_cols), np.sort(cols))
            )
            rows, cols = new_rows, new_cols
            if settled or rows.size == 0:
                break
        if low_rank or rows.size >= kmax or cols.size >= n or rows.size == 0:
            return PivotLU(rows, cols, lu.pivots, error)
