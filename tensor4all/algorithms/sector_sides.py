"""The two sides of a cut of the charge-sector backend (:mod:`.sector_backend`): a site fused
with its outer bond (rows ``(q_l, s)`` grouped by ``m = q_l + q_s``, or columns ``(s, q_r)`` grouped
by ``m = q_r - q_s``) or a bare bond, as :class:`~tensor4all.structured.site_matrices.Pieces` made
once per structure (the plans of :mod:`.sector_absorb`, :mod:`.sector_dense` and :mod:`.sector_flat`
know them by identity), and a site's matrices stacked along them: one gather from the site as a flat
buffer (:mod:`.sector_flat`) on the host, one copy per block elsewhere. The sites themselves: tensors
or flat buffers, each made from the other when asked."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..structured import SymmetricTensor
from ..structured.site_matrices import Pieces, bond_sectors
from ..tools.device import stored_array, to_device, to_host
from .sector_absorb import MAX_PLANS
from .sector_flat import FLAT_MAX_ENTRIES, FlatSite, flat_of, read_cols, read_rows, tensor_of

__all__ = ["SectorSides", "offsets"]

_PIECES: dict[tuple, Pieces] = {}  # (kind, basis charges, bond, norm(-1)) -> the side's pieces, shared


class SectorSides:
    """What :class:`~.sector_backend.SectorBackend` knows of its sites and of the sides of its cuts
    (its ``bonds``, site charges ``q``, ``layout``, ``phys``, ``xp``, ``dtype`` and ``norm``): the
    sites are tensors (``_sites``) or the flat buffers the splits wrote (``_flat``, on the host),
    each made from the other when asked."""

    bonds: list[dict[int, int]]
    q: list[list[int]]
    _sites: list[Any]
    _flat: list[FlatSite | None]
    _site_bytes: list[int | None]
    layout: Any
    phys: list[Any]
    xp: Any
    dtype: Any
    placement: Any
    L: int

    def norm(self, c: int) -> int:  # the backend's charge arithmetic
        raise NotImplementedError

    def _row_matrices(self, i: int, rows: Pieces, sectors: Sequence[int]) -> list[np.ndarray]:
        """Per charge ``m`` of ``sectors``, site ``i``'s matrices ending in ``m`` stacked: ``(rows
        m) x (dim m)``. The rows ``(q_l, s)`` of a block's states are consecutive (:meth:`_rows`
        runs over the states in basis order, a sector's states are contiguous), so a block
        ``(q_l, q_s, m)`` fills them with one copy; on the host, one gather from the site's buffer
        (:func:`.sector_flat.read_rows`)."""
        flat = self._flat_site(i)
        if flat is not None:
            dims = [self.bonds[i + 1].get(m, 0) for m in sectors]
            return read_rows(flat, rows, sectors, dims, self.phys[i])
        outs = {m: self.xp.zeros((rows.size[m], self.bonds[i + 1].get(m, 0)), dtype=self.dtype) for m in sectors}
        first = self.layout.physical(self.phys[i]).first
        for (ql, qs, qr), blk in self.site_tensor(i).blocks.items():
            out = outs.get(qr)
            if out is not None:
                arr = stored_array(blk)
                dl, ds, dr = arr.shape
                off = rows.where[(ql, first[qs])][1]
                out[off : off + ds * dl] = arr.transpose(1, 0, 2).reshape(ds * dl, dr)
        return [outs[m] for m in sectors]

    def _col_matrices(self, j: int, cols: Pieces, sectors: Sequence[int]) -> list[np.ndarray]:
        """Per charge ``m`` of ``sectors``, site ``j``'s matrices starting in ``m`` side by side:
        ``(dim m) x (cols m)``; a block's states are consecutive columns (:meth:`_cols`); on the
        host, one gather from the site's buffer (:func:`.sector_flat.read_cols`)."""
        flat = self._flat_site(j)
        if flat is not None:
            dims = [self.bonds[j].get(m, 0) for m in sectors]
            return read_cols(flat, cols, sectors, dims, self.phys[j])
        outs = {m: self.xp.zeros((self.bonds[j].get(m, 0), cols.size[m]), dtype=self.dtype) for m in sectors}
        first = self.layout.physical(self.phys[j]).first
        for (ql, qs, qr), blk in self.site_tensor(j).blocks.items():
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
        """The pieces of one side of a cut, made once per structure (the side's kind, the site's
        basis charges, the bond, the modulus) and shared by every site, run and backend that
        meets it: the plans of :mod:`.sector_absorb`, :mod:`.sector_dense` and
        :mod:`.sector_operator` know them by identity, so a step whose structure recurs (the
        next sweep, the next run of the same chain) finds its plans made."""
        charges = () if kind == "bare" else tuple(self.q[i])
        shared = (kind, charges, tuple(bond.items()), self.norm(-1))
        p = _PIECES.get(shared)
        if p is None:
            if len(_PIECES) >= 4 * MAX_PLANS:
                _PIECES.clear()
            if kind == "rows":
                p = Pieces.rows(bond, self.q[i], self.norm)
            elif kind == "cols":
                p = Pieces.cols(self.q[i], bond, self.norm)
            else:
                p = Pieces()
                for q, d in bond.items():
                    p.add(q, q, d)
            _PIECES[shared] = p
        return p

    # ---- the sites: symmetric tensors or flat buffers (.sector_flat), as matrices per basis state
    def _site(self, i: int, pieces: Any, left: dict[int, int], right: dict[int, int]) -> SymmetricTensor:
        """Site ``i`` from the matrices ``((q_l, s), A)`` of ``pieces`` (:meth:`SiteMatrices.build`)."""
        return self.layout.build(pieces, left, self.phys[i], right)

    def _map_blocks(self, i: int, fn: Callable[[Any], Any]) -> None:
        """Site ``i`` with ``fn`` applied to every block's array (``fn`` keeps shapes and zeros: a
        flat site's buffer as a whole)."""
        flat = self._flat[i]
        if self._sites[i] is None and flat is not None:
            self._set_flat(i, FlatSite(fn(flat.buf), flat.layout, flat.legs))
        else:
            self._set_site(i, self.layout.map_blocks(self._sites[i], fn))

    def _norm2(self, i: int) -> float:
        """The squared norm of site ``i`` (of its buffer where it is flat: the zero adds nothing)."""
        flat = self._flat[i]
        if flat is not None:
            return float(np.vdot(flat.buf, flat.buf).real)
        return self.layout.norm2(self._sites[i])

    def site_tensor(self, i: int) -> SymmetricTensor:
        """Site ``i``'s tensor (made now from its buffer where a step wrote it flat: views of it);
        a step that needs one site asks for that one, not for :attr:`sites`."""
        t = self._sites[i]
        if t is None:
            t = self._sites[i] = tensor_of(self._flat[i], self.layout)
        return t

    @property
    def sites(self) -> list[SymmetricTensor]:
        """The site tensors (those the steps wrote as flat sites made now: views of their buffers)."""
        return [self.site_tensor(i) for i in range(len(self._sites))]

    @sites.setter
    def sites(self, sites: Sequence[SymmetricTensor]) -> None:
        """New site tensors (all of them: an iDMRG window's, :mod:`tensor4all.infinite.idmrg_windows`)."""
        self._sites = list(sites)
        self._flat = [None] * len(self._sites)
        self._site_bytes = [None] * len(self._sites)

    def _set_site(self, i: int, site: SymmetricTensor) -> None:
        self._sites[i] = site
        self._flat[i] = None
        self._site_bytes[i] = None

    def _set_flat(self, i: int, site: FlatSite) -> None:
        """Site ``i`` as the buffer a split wrote (:mod:`.sector_flat`); its tensor made when asked."""
        self._sites[i] = None
        self._flat[i] = site
        self._site_bytes[i] = site.nbytes

    def _flat_site(self, i: int) -> FlatSite | None:
        """Site ``i`` as a buffer: the one a split wrote, or one made from its tensor (on the host,
        of at most :data:`~.sector_flat.FLAT_MAX_ENTRIES` entries; kept until the site changes);
        None for a large site or one on a device (read block by block)."""
        site = self._flat[i]
        if site is None and self.xp is np:
            t = self._sites[i]
            if sum(stored_array(b).size for b in t.leaves) <= FLAT_MAX_ENTRIES:
                site = self._flat[i] = flat_of(t)
        return site

    def _merge_left(self, i: int, fac: dict[int, np.ndarray]) -> None:
        """Site ``i``'s blocks times ``fac[m]`` on their right bond of charge ``m`` (the rows of
        ``fac`` beyond the bond's old dimension meet the zero padding); others drop out."""
        out = []
        for (ql, s), blk in self.layout.matrices(self.site_tensor(i)):
            f = fac.get(self.norm(ql + self.q[i][s]))
            if f is not None:
                out.append(((ql, s), blk @ f[: blk.shape[1]]))
        right = {m: f.shape[1] for m, f in sorted(fac.items())}
        self._set_site(i, self._site(i, out, bond_sectors(self.site_tensor(i).legs[0]), right))

    def _merge_right(self, j: int, fac: dict[int, np.ndarray]) -> None:
        """Site ``j``'s blocks times ``fac[m]`` on their left bond of charge ``m``."""
        out = [
            ((m, s), fac[m][:, : blk.shape[0]] @ blk)
            for (m, s), blk in self.layout.matrices(self.site_tensor(j))
            if m in fac
        ]
        left = {m: f.shape[0] for m, f in sorted(fac.items())}
        self._set_site(j, self._site(j, out, left, bond_sectors(self.site_tensor(j).legs[2])))

    # ---- the sites as dense arrays (sweeps orthogonal to earlier states, :mod:`.orthogonal`) --
    def dense_site(self, i: int) -> np.ndarray:
        """Site ``i`` as a dense NumPy array ``(left, d, right)``, bond indices ordered by charge."""
        lo = offsets(self.bonds[i])
        ro = offsets(self.bonds[i + 1])
        a = np.zeros((sum(self.bonds[i].values()), len(self.q[i]), sum(self.bonds[i + 1].values())), dtype=self.dtype)
        for (ql, s), blk in self.layout.matrices(self.site_tensor(i)):
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
