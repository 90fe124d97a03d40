"""The two sides of a cut of the charge-sector backend (:mod:`.sector_backend`): a site fused
with its outer bond (rows ``(q_l, s)`` grouped by ``m = q_l + q_s``, or columns ``(s, q_r)`` grouped
by ``m = q_r - q_s``) or a bare bond, as :class:`~tensor4all.structured.site_matrices.Pieces` made
once per bond (the absorb plans of :func:`.sector_absorb.absorb_mpo` know them by identity), and a
site's matrices stacked along them, one copy per block."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..structured.site_matrices import Pieces
from ..tools.device import stored_array, to_device, to_host
from .sector_absorb import MAX_PLANS

__all__ = ["SectorSides", "offsets"]


class SectorSides:
    """What :class:`~.sector_backend.SectorBackend` knows of the sides of its cuts (its
    ``bonds``, site charges ``q``, ``sites``, ``layout``, ``phys``, ``xp``, ``dtype`` and ``norm``)."""

    bonds: list[dict[int, int]]
    q: list[list[int]]
    sites: list[Any]
    layout: Any
    phys: list[Any]
    xp: Any
    dtype: Any
    placement: Any
    L: int
    _pieces_made: dict[tuple, Pieces]

    def norm(self, c: int) -> int:  # the backend's charge arithmetic
        raise NotImplementedError

    def _row_matrices(self, i: int, rows: Pieces, sectors: Sequence[int]) -> list[np.ndarray]:
        """Per charge ``m`` of ``sectors``, site ``i``'s matrices ending in ``m`` stacked: ``(rows
        m) x (dim m)``. The rows ``(q_l, s)`` of a block's states are consecutive (:meth:`_rows`
        runs over the states in basis order, a sector's states are contiguous), so a block
        ``(q_l, q_s, m)`` fills them with one copy."""
        outs = {m: self.xp.zeros((rows.size[m], self.bonds[i + 1].get(m, 0)), dtype=self.dtype) for m in sectors}
        first = self.layout.physical(self.phys[i]).first
        for (ql, qs, qr), blk in self.sites[i].blocks.items():
            out = outs.get(qr)
            if out is not None:
                arr = stored_array(blk)
                dl, ds, dr = arr.shape
                off = rows.where[(ql, first[qs])][1]
                out[off : off + ds * dl] = arr.transpose(1, 0, 2).reshape(ds * dl, dr)
        return [outs[m] for m in sectors]

    def _col_matrices(self, j: int, cols: Pieces, sectors: Sequence[int]) -> list[np.ndarray]:
        """Per charge ``m`` of ``sectors``, site ``j``'s matrices starting in ``m`` side by side:
        ``(dim m) x (cols m)``; a block's states are consecutive columns (:meth:`_cols`)."""
        outs = {m: self.xp.zeros((self.bonds[j].get(m, 0), cols.size[m]), dtype=self.dtype) for m in sectors}
        first = self.layout.physical(self.phys[j]).first
        for (ql, qs, qr), blk in self.sites[j].blocks.items():
            out = outs.get(ql)
            if out is not None:
                arr = stored_array(blk)
                dr = arr.shape[2]
                off = cols.where[(first[qs], qr)][1]
                for k in range(arr.shape[1]):
                    out[:, off + k * dr : off + (k + 1) * dr] = arr[:, k, :]
        return [outs[m] for m in sectors]

    def _rows(self, i: int) -> Pieces:
        """Rows ``(q_a, s1)`` of site ``i`` grouped by ``m = q_a + q_s1``."""
        return self._pieces("rows", i, self.bonds[i])

    def _cols(self, j: int) -> Pieces:
        """Columns ``(s2, q_b)`` of site ``j`` grouped by ``m = q_b - q_s2``."""
        return self._pieces("cols", j, self.bonds[j + 1])

    def _bare(self, b: int) -> Pieces:
        """Bond ``b`` itself, one piece per charge."""
        return self._pieces("bare", b, self.bonds[b])

    def _pieces(self, kind: str, i: int, bond: dict[int, int]) -> Pieces:
        """The pieces of one side of a cut, made once per bond (the absorb plans know them by
        identity, :func:`._sector_absorb.absorb_mpo`)."""
        key = (kind, i, tuple(bond.items()))
        p = self._pieces_made.get(key)
        if p is None:
            if len(self._pieces_made) >= 4 * MAX_PLANS:
                self._pieces_made.clear()
            if kind == "rows":
                p = Pieces.rows(bond, self.q[i], self.norm)
            elif kind == "cols":
                p = Pieces.cols(self.q[i], bond, self.norm)
            else:
                p = Pieces()
                for q, d in bond.items():
                    p.add(q, q, d)
            self._pieces_made[key] = p
        return p

    # ---- the sites as dense arrays (sweeps orthogonal to earlier states, :mod:`.orthogonal`) --
    def dense_site(self, i: int) -> np.ndarray:
        """Site ``i`` as a dense NumPy array ``(left, d, right)``, bond indices ordered by charge."""
        lo = offsets(self.bonds[i])
        ro = offsets(self.bonds[i + 1])
        a = np.zeros((sum(self.bonds[i].values()), len(self.q[i]), sum(self.bonds[i + 1].values())), dtype=self.dtype)
        for (ql, s), blk in self.layout.matrices(self.sites[i]):
            qr = self.norm(ql + self.q[i][s])
            a[lo[ql] : lo[ql] + blk.shape[0], s, ro[qr] : ro[qr] + blk.shape[1]] = to_host(blk)
        return a

    def flat_local(self, local: Any, y: np.ndarray) -> np.ndarray:
        """The dense local tensor ``y`` (``(left, d.., right)``, bonds ordered by charge as in
        :meth:`dense_site`) in the layout of ``local.v0``: per sector of the cut, the rows and
        columns of its pieces."""
        (fl, fr), b = local.fused, local.step.bond
        left, right = self.bonds[b - 1 if fl else b], self.bonds[b + 1 if fr else b]
        lo, ro = offsets(left), offsets(right)
        dr = sum(right.values())
        d_left = len(self.q[b - 1]) if fl else 1
        ymat = y.reshape(sum(left.values()) * d_left, -1)

        def rows(m: int) -> np.ndarray:
            if fl:
                return np.concatenate([(lo[ql] + np.arange(n)) * d_left + s for (ql, s), _, n in local.rows.groups[m]])
            return np.concatenate([lo[q] + np.arange(n) for q, _, n in local.rows.groups[m]])

        def cols(m: int) -> np.ndarray:
            if fr:
                return np.concatenate([s * dr + ro[qr] + np.arange(n) for (s, qr), _, n in local.cols.groups[m]])
            return np.concatenate([ro[q] + np.arange(n) for q, _, n in local.cols.groups[m]])

        parts = [ymat[np.ix_(rows(m), cols(m))].reshape(-1) for m in local.op.sectors]
        flat = np.concatenate(parts) if parts else np.zeros(0, self.dtype)
        return to_device([flat], self.placement)[0] if self.xp is not np else flat


def offsets(bond: dict[int, int]) -> dict[int, int]:
    """The first dense index of each charge of ``bond`` (its charges in their order)."""
    out, off = {}, 0
    for q, d in bond.items():
        out[q] = off
        off += d
    return out
