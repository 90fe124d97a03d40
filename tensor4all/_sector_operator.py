"""The effective Hamiltonian of one step of the charge-sector backend (:mod:`._sector_backend`):
``y[m] = sum_w LW[w][m] X[m - c_w] WR[w][m]^T`` over the sectors ``m`` of the cut, two GEMMs
per (MPO state, sector), or a few per block where the absorbed blocks' zero rectangles
(:func:`._sector_absorb.absorb_mpo`) are worth skipping."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ._device import array_module, to_host

__all__ = ["SectorOperator", "SPARSE_CALL_FLOPS"]

Env = list  # per MPO state w: {charge: matrix}


SPARSE_CALL_FLOPS = 1e5
"""What one more GEMM call costs, in floating-point operations (about 3 us at 30 GFLOP/s): a
block of ``LW``/``WR`` is applied rectangle by rectangle when that saves more than this per
extra call (:func:`_rectangles`)."""


def _rectangles(mat: Any, regions: list | None, n: int, transpose: bool) -> list | None:
    """``mat``'s nonzero ``regions`` merged where adjacent, with their views (transposed for
    ``transpose``), or None where one product with the whole of ``mat`` (``n`` columns on
    the other side) is cheaper."""
    if not regions:
        return None
    dense = mat.shape[0] * mat.shape[1] * n
    if sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in regions) * n >= 0.8 * dense:
        return None   # merging keeps the area: rectangles cannot pay (most blocks; no sorting)
    rects = sorted(regions)
    merged = [list(rects[0])]
    for r0, r1, c0, c1 in rects[1:]:   # side by side in one row band
        last = merged[-1]
        if last[0] == r0 and last[1] == r1 and last[3] == c0:
            last[3] = c1
        else:
            merged.append([r0, r1, c0, c1])
    merged.sort(key=lambda r: (r[2], r[3], r[0]))
    stacked = [merged[0]]
    for r0, r1, c0, c1 in merged[1:]:  # one above the other in one column band
        last = stacked[-1]
        if last[2] == c0 and last[3] == c1 and last[1] == r0:
            last[1] = r1
        else:
            stacked.append([r0, r1, c0, c1])
    sparse = sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in stacked) * n + SPARSE_CALL_FLOPS * (len(stacked) - 1)
    if sparse >= 0.8 * dense:
        return None
    return [(r0, r1, c0, c1, mat[r0:r1, c0:c1].T if transpose else mat[r0:r1, c0:c1])
            for r0, r1, c0, c1 in sorted(stacked)]


class SectorOperator:
    """``x -> H_eff x`` on the flattened sectors ``X[m]``: ``y[m] = sum_w LW[w][m] X[m - c_w]
    WR[w][m]^T``. With ``regions`` (the nonzero rectangles of the absorbed ``LW``/``WR``
    blocks, None for a bare side), a block whose zeros are worth skipping is applied
    rectangle by rectangle: an MPO state's operator reaches only some pairs of physical
    states, so most of its absorbed block is zero (skipping every zero would save the Hubbard
    chain's products 2.4x of their operations, the 8x4 cylinder's 1.9x; with the cost of the
    extra calls counted, the cylinder's products at bond dimension 400 do 1.3x fewer).
    ``rows``/``cols``: the fused pieces of the two sides (``size[m]`` per sector)."""

    def __init__(self, lw: Env, wr: Env, c_mid: Sequence[int], sectors: list[int],
                 rows: Any, cols: Any, dtype: Any, norm: Callable[[int], int],
                 regions: tuple[list | None, list | None] = (None, None)):
        self.lw, self.wr, self.c_mid = lw, wr, c_mid
        self.sectors = sectors
        self.shapes = [(rows.size[m], cols.size[m]) for m in sectors]
        self.offsets = np.concatenate([[0], np.cumsum([r * c for r, c in self.shapes])]).astype(int)
        n = int(self.offsets[-1])
        self.shape = (n, n)
        self.dtype = dtype
        self.index = {m: k for k, m in enumerate(sectors)}
        lw_regions, wr_regions = regions
        # (out sector k, in sector k', LW block, WR block transposed, their rectangles or None)
        self.terms = []
        for w, c in enumerate(c_mid):
            for k, m in enumerate(sectors):
                kin = self.index.get(norm(m - c))
                a = lw[w].get(m)
                b = wr[w].get(m)
                if kin is not None and a is not None and b is not None:
                    left = _rectangles(a, lw_regions and lw_regions[w].get(m), self.shapes[kin][1], False)
                    right = _rectangles(b, wr_regions and wr_regions[w].get(m), self.shapes[k][0], True)
                    self.terms.append((k, kin, a, b.T, left, right))
        self.matvecs = 0

    def views(self, x: np.ndarray) -> list[np.ndarray]:
        return [x[self.offsets[k]:self.offsets[k + 1]].reshape(self.shapes[k]) for k in range(len(self.shapes))]

    def matvec(self, x: np.ndarray) -> np.ndarray:
        self.matvecs += 1
        xs = self.views(x)
        xp = array_module(x)
        dtype = np.result_type(self.dtype, x.dtype)
        y = xp.zeros(self.shape[0], dtype=dtype)
        ys = self.views(y)
        for k, kin, a, bt, left, right in self.terms:
            xk = xs[kin]
            if left is None:
                t = a @ xk
            else:
                t = xp.zeros((a.shape[0], xk.shape[1]), dtype=dtype)
                for r0, r1, c0, c1, blk in left:
                    t[r0:r1] += blk @ xk[c0:c1]
            if right is None:
                ys[k] += t @ bt
            else:
                yk = ys[k]
                for p0, p1, q0, q1, blk in right:   # blk: WR[w][m][p0:p1, q0:q1]^T
                    yk[:, p0:p1] += t[:, q0:q1] @ blk
        return y

    def dense(self) -> np.ndarray:
        """The operator as a host matrix: each term ``Y[k] += A X[k'] B^T`` is the block
        ``kron(A, B)`` of rows ``k`` and columns ``k'`` (row-major flattening)."""
        h = np.zeros(self.shape, dtype=self.dtype)
        for k, kin, a, bt, _left, _right in self.terms:
            h[self.offsets[k]:self.offsets[k + 1], self.offsets[kin]:self.offsets[kin + 1]] += \
                np.kron(to_host(a), to_host(bt).T)
        return h
