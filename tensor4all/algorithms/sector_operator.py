"""The effective Hamiltonian of one step of the charge-sector backend (:mod:`._sector_backend`):
``y[m] = sum_w LW[w][m] X[m - c_w] WR[w][m]^T`` over the sectors ``m`` of the cut, two GEMMs
per (MPO state, sector), or a few per block where the absorbed blocks' zero rectangles
(:func:`._sector_absorb.absorb_mpo`) are worth skipping."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..tools.device import array_module, to_host

__all__ = ["SectorOperator", "SPARSE_CALL_FLOPS", "prepare_rectangles"]

Env = list  # per MPO state w: {charge: matrix}


SPARSE_CALL_FLOPS = 1e5
"""What one more GEMM call costs, in floating-point operations (about 3 us at 30 GFLOP/s): a
block of ``LW``/``WR`` is applied rectangle by rectangle when that saves more than this per
extra call (:func:`_rectangles`)."""


def prepare_rectangles(blocks: Env, regions: list, transpose: bool) -> list[dict[int, tuple]]:
    """Per block of ``blocks`` (absorbed ``LW``/``WR``, :func:`._sector_absorb.absorb_mpo`) what
    :func:`_rectangles` needs, once for all the operators that use the block: the rows times
    columns, the written area, and where that area could pay, its rectangles merged where
    adjacent (their total area, count and views, transposed for ``transpose``)."""
    out: list[dict[int, tuple]] = []
    for w, by_m in enumerate(regions):
        prepared = {}
        for m, rects in by_m.items():
            mat = blocks[w][m]
            rc = mat.shape[0] * mat.shape[1]
            area = sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in rects)
            if not rects or area >= 0.81 * rc:  # merging keeps the area: rectangles cannot pay (most blocks)
                prepared[m] = (rc, area, 0, 0, None)
                continue
            stacked = _merged(rects)
            views = [
                (r0, r1, c0, c1, mat[r0:r1, c0:c1].T if transpose else mat[r0:r1, c0:c1])
                for r0, r1, c0, c1 in sorted(stacked)
            ]
            prepared[m] = (rc, area, sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in stacked), len(stacked), views)
        out.append(prepared)
    return out


def _merged(rects: list) -> list:
    """Rectangles side by side in one row band joined, then those one above the other in one
    column band."""
    rects = sorted(rects)
    merged = [list(rects[0])]
    for r0, r1, c0, c1 in rects[1:]:  # side by side in one row band
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
    return stacked


def _rectangles(prepared: tuple | None, n: int) -> list | None:
    """A block's nonzero rectangles (views; ``prepared`` by :func:`prepare_rectangles`), or
    None where one product with the whole block (``n`` columns on the other side) is cheaper."""
    if prepared is None:
        return None
    rc, area, stacked_area, count, views = prepared
    dense = rc * n
    if area * n >= 0.8 * dense or views is None:
        return None
    if stacked_area * n + SPARSE_CALL_FLOPS * (count - 1) >= 0.8 * dense:
        return None
    return views


class SectorOperator:
    """``x -> H_eff x`` on the flattened sectors ``X[m]``: ``y[m] = sum_w LW[w][m] X[m - c_w]
    WR[w][m]^T``. With ``regions`` (the nonzero rectangles of the absorbed ``LW``/``WR``
    blocks as :func:`prepare_rectangles` gives them, None for a bare side), a block whose zeros
    are worth skipping is applied
    rectangle by rectangle: an MPO state's operator reaches only some pairs of physical
    states, so most of its absorbed block is zero (skipping every zero would save the Hubbard
    chain's products 2.4x of their operations, the 8x4 cylinder's 1.9x; with the cost of the
    extra calls counted, the cylinder's products at bond dimension 400 do 1.3x fewer).
    ``rows``/``cols``: the fused pieces of the two sides (``size[m]`` per sector)."""

    def __init__(
        self,
        lw: Env,
        wr: Env,
        c_mid: Sequence[int],
        sectors: list[int],
        rows: Any,
        cols: Any,
        dtype: Any,
        norm: Callable[[int], int],
        regions: tuple[list | None, list | None] = (None, None),
    ):
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
                    left = _rectangles(lw_regions and lw_regions[w].get(m), self.shapes[kin][1])
                    right = _rectangles(wr_regions and wr_regions[w].get(m), self.shapes[k][0])
                    self.terms.append((k, kin, a, b.T, left, right))
        self.matvecs = 0

    def views(self, x: np.ndarray) -> list[np.ndarray]:
        return [x[self.offsets[k] : self.offsets[k + 1]].reshape(self.shapes[k]) for k in range(len(self.shapes))]

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
                for p0, p1, q0, q1, blk in right:  # blk: WR[w][m][p0:p1, q0:q1]^T
                    yk[:, p0:p1] += t[:, q0:q1] @ blk
        return y

    def dense(self) -> np.ndarray:
        """The operator as a host matrix: each term ``Y[k] += A X[k'] B^T`` is the block
        ``kron(A, B)`` of rows ``k`` and columns ``k'`` (row-major flattening)."""
        h = np.zeros(self.shape, dtype=self.dtype)
        for k, kin, a, bt, _left, _right in self.terms:
            h[self.offsets[k] : self.offsets[k + 1], self.offsets[kin] : self.offsets[kin + 1]] += np.kron(
                to_host(a), to_host(bt).T
            )
        return h
