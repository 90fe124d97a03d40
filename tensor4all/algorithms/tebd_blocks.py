"""TEBD's bond updates on symmetric sites, on NumPy blocks: :class:`BlockSites`.

During a concrete run a site is a :class:`BlockSite`: its two bonds (charge -> dimension) and its
matrices grouped by the charge of one of the two cuts it borders, the layout of the charge-sector
sweeps (:class:`~tensor4all.structured.site_matrices.Pieces`):

* by rows (``"R"``, the left site of a bond update, what its SVD leaves): ``R[m]`` stacks the
  matrices ``A[(q_l, s)]`` of the states with ``q_l + q_s = m`` (rows ``(q_l, s)``, columns the
  right bond's sector ``m``);
* by columns (``"C"``, the right site): ``C[q_l]`` puts the matrices ``A[(q_l, s)]`` side by side
  (columns ``(s, q_r)`` with ``q_r - q_s = q_l``).

A bond update is then one GEMM per sector of the cut, ``X[m] = R_a[m] C_b[m]``; the gate, which
mixes the pairs of states ``(s1, s2)`` of one pair charge ``c``, acts per pair charge and left
charge ``q_l`` (right charge ``q_l + c``) on the blocks of its pairs, strided views of the ``X[m]``:
stacked, one GEMM, written back (no index arrays: the views follow the bonds as their sizes change
from step to step, where index plans had to be rebuilt; Heisenberg L = 32, chi 128 binding, 14% of
the run went to rebuilding them); one SVD per
sector of the cut (:mod:`tensor4all.linalg.lapack`); its factors are the new sites, ``U`` by rows
and ``S Vh`` by columns, as they come. A site is regrouped (one copy per block) only where an
update needs the other grouping; QR moves factor ``R[m]`` (or ``C[m]``) per sector. The sites
become :class:`~tensor4all.SymmetricTensor` s again only for the state (:meth:`BlockSites.state`).

Every step does the arithmetic of the per-block code it replaces (a product per pair of states,
the gate per block, the regrouping by the cut's charge), in fewer and larger calls: the same sums
up to the order the GEMMs take them in (results equal to rounding; in Heisenberg L = 8, 12 and
Hubbard L = 6 runs without truncation, to 1e-14), the same SVD routine and the same truncation.
Per bond update of the Heisenberg chain (L = 12, t = 2 from the Neel state, bonds up to 20) the
code that read and wrote the sites per basis state made 1 800 Python calls (cProfile), and this
one about 390 (the dense update about 240).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..networks.mps import MPS
from ..structured import Leg, SymmetricTensor
from ..structured.site_matrices import Pieces, SiteMatrices, bond_sectors
from ..tools.device import stored_array
from ..linalg import lapack
from .tebd_sites import DenseSites, NumpyLA, scaled_norm

__all__ = ["BlockSites", "BlockSite"]

MAX_PLANS = 256
"""The pieces (one side of a cut, per bond) a run keeps; more are dropped at once."""


class BlockSite:
    """A site during a run: its bonds ``left``, ``right`` (charge -> dimension), its physical
    ``leg`` and its matrices ``mats`` grouped by ``form`` (``"R"``: by right charge, ``"C"``: by
    left charge; see the module)."""

    __slots__ = ("left", "right", "leg", "form", "mats")

    def __init__(self, left: dict[int, int], right: dict[int, int], leg: Leg, form: str, mats: dict[int, Any]):
        self.left, self.right, self.leg, self.form, self.mats = left, right, leg, form, mats

    @property
    def shape(self) -> tuple[int, int, int]:
        return (sum(self.left.values()), self.leg.dim, sum(self.right.values()))


class _BlockGate:
    """A charge-conserving two-site gate by pair charge: ``groups[c] = (pairs, G_c)`` with
    ``pairs`` the ``(s1, s2)`` of pair charge ``c`` (``s1`` slower) and ``G_c`` the gate between
    them."""

    __slots__ = ("groups",)

    def __init__(self, g4: np.ndarray, qa: Sequence[int], qb: Sequence[int], add: Any):
        self.groups = {}
        for c, pairs in _pairs(qa, qb, add).items():
            rows = [s1 * len(qb) + s2 for s1, s2 in pairs]
            self.groups[c] = (pairs, np.ascontiguousarray(g4.reshape(len(qa) * len(qb), -1)[np.ix_(rows, rows)]))


def _pairs(qa: Sequence[int], qb: Sequence[int], add: Any) -> dict[int, list[tuple[int, int]]]:
    """The pairs of states ``(s1, s2)`` by pair charge, ``s1`` slower."""
    by_charge: dict[int, list[tuple[int, int]]] = {}
    for s1, c1 in enumerate(qa):
        for s2, c2 in enumerate(qb):
            by_charge.setdefault(add(c1, c2), []).append((s1, s2))
    return by_charge


class BlockSites(DenseSites):
    """Concrete symmetric runs on :class:`BlockSite` s (see the module); :meth:`site` and
    :meth:`state` convert from and to the MPS's :class:`~tensor4all.SymmetricTensor` sites."""

    def __init__(self, dtype: np.dtype, modulus: int, legs: list[Leg]):
        super().__init__(NumpyLA(), dtype)
        self.modulus = modulus
        self.layout = SiteMatrices(legs[0].symmetry, modulus, dtype)
        self.qs = [self.layout.physical(leg).charges for leg in legs]
        self._pieces: dict[tuple, Pieces] = {}

    def add(self, a: int, b: int) -> int:
        return self.norm_charge(a + b)

    def norm_charge(self, c: int) -> int:
        return c % self.modulus if self.modulus else c

    # ---- conversions -------------------------------------------------------------------
    def site(self, t: SymmetricTensor) -> BlockSite:
        """The run's site of the MPS site ``t``, by rows."""
        left, right = bond_sectors(t.legs[0]), bond_sectors(t.legs[2])
        rows = self._side("R", left, t.legs[1])
        first = self.layout.physical(t.legs[1]).first
        mats: dict[int, Any] = {}  # the right charges that blocks reach
        for (ql, qs, qr), blk in t.blocks.items():
            arr = stored_array(blk)
            dl, ds, dr = arr.shape
            off = rows.where[(ql, first[qs])][1]
            if qr not in mats:
                mats[qr] = np.zeros((rows.size[qr], dr), self.dtype)
            mats[qr][off : off + ds * dl] = arr.transpose(1, 0, 2).reshape(ds * dl, dr)
        mats = {m: mats[m] for m in right if m in mats}  # in the bond's order
        return BlockSite(left, right, t.legs[1], "R", mats)

    def tensor(self, t: BlockSite) -> SymmetricTensor:
        """The MPS site of the run's site ``t``."""
        if t.form == "R":
            return self.layout.from_rows(t.mats, self._side("R", t.left, t.leg).groups, t.left, t.leg, t.right)
        return self.layout.from_cols(t.mats, self._side("C", t.right, t.leg).groups, t.left, t.leg, t.right)

    def tensors(self, ts: list) -> list[SymmetricTensor]:
        return [self.tensor(t) for t in ts]

    def state(self, ts: list, grading: Any) -> MPS:
        return MPS._symmetric(self.tensors(ts), grading)

    def _side(self, form: str, bond: dict[int, int], leg: Leg) -> Pieces:
        """The rows of a site with left bond ``bond`` (``"R"``) or the columns of one with right
        bond ``bond`` (``"C"``), made once per bond."""
        key = (form, tuple(bond.items()), id(leg))
        p = self._pieces.get(key)
        if p is None:
            if len(self._pieces) >= MAX_PLANS:
                self._pieces.clear()
            q = self.layout.physical(leg).charges
            p = Pieces.rows(bond, q, self.norm_charge) if form == "R" else Pieces.cols(q, bond, self.norm_charge)
            self._pieces[key] = p
        return p

    def _regroup(self, t: BlockSite, form: str) -> BlockSite:
        """``t`` grouped by ``form``: one copy per block ``(q_l, q_s, q_r)`` (its states' rows of
        ``R[q_r]`` are the columns of ``C[q_l]``, state by state)."""
        if t.form == form:
            return t
        rows, cols = self._side("R", t.left, t.leg), self._side("C", t.right, t.leg)
        p = self.layout.physical(t.leg)
        if form == "C":
            out = {ql: np.zeros((dl, cols.size[ql]), self.dtype) for ql, dl in t.left.items() if ql in cols.size}
        else:
            out = {m: np.zeros((rows.size[m], dr), self.dtype) for m, dr in t.right.items() if m in rows.size}
        for ql, dl in t.left.items():
            for qs, ds in p.dims.items():
                s = p.first[qs]
                m, ro, _ = rows.where[(ql, s)]
                held = t.mats.get(m) if form == "C" else t.mats.get(ql)
                if held is None or m not in t.right:
                    continue
                dm = t.right[m]
                co = cols.where[(s, m)][1]
                if form == "C":
                    block = held[ro : ro + ds * dl].reshape(ds, dl, dm)
                    out[ql][:, co : co + ds * dm].reshape(dl, ds, dm)[...] = block.transpose(1, 0, 2)
                else:
                    block = held[:, co : co + ds * dm].reshape(dl, ds, dm)
                    out[m][ro : ro + ds * dl].reshape(ds, dl, dm)[...] = block.transpose(1, 0, 2)
        return BlockSite(t.left, t.right, t.leg, form, out)

    # ---- the bond update -----------------------------------------------------------------
    def gate(self, g: Any, i: int, j: int, da: int, db: int) -> _BlockGate:
        return _BlockGate(np.asarray(g).reshape(da, db, da, db), self.qs[i], self.qs[j], self.add)

    def pair(self, a: BlockSite, b: BlockSite, gate: _BlockGate) -> tuple[dict, Any]:
        """The matrices of the cut (by its charge) of the pair ``a, b`` with the gate applied: one
        GEMM per sector of the cut, then per pair charge ``c`` and left charge ``q_l`` the blocks of
        its pairs of states (strided views of those matrices) stacked and mixed by one GEMM."""
        a, b = self._regroup(a, "R"), self._regroup(b, "C")
        rows, cols = self._side("R", a.left, a.leg), self._side("C", b.right, b.leg)
        x, y = {}, {}
        for m, nc in cols.size.items():
            nr = rows.size.get(m)
            if nr is None:
                continue
            r, c = a.mats.get(m), b.mats.get(m)
            x[m] = r @ c if r is not None and c is not None else np.zeros((nr, nc), self.dtype)
            y[m] = np.empty_like(x[m])  # every entry is in the block of one pair of states
        rw, cw = rows.where, cols.where
        for c, (pairs, g) in gate.groups.items():
            for ql, dl in a.left.items():
                qr = self.norm_charge(ql + c)
                dr = b.right.get(qr)
                if dr is None:
                    continue
                spots = []
                for s1, s2 in pairs:
                    m, ro, _ = rw[(ql, s1)]
                    co = cw[(s2, qr)][1]
                    spots.append((m, slice(ro, ro + dl), slice(co, co + dr)))
                if len(spots) == 1:
                    m, rs, cs = spots[0]
                    np.multiply(x[m][rs, cs], g[0, 0], out=y[m][rs, cs])
                    continue
                stacked = np.empty((len(spots), dl, dr), self.dtype)
                for k, (m, rs, cs) in enumerate(spots):
                    stacked[k] = x[m][rs, cs]
                mixed = (g @ stacked.reshape(len(spots), dl * dr)).reshape(len(spots), dl, dr)
                for k, (m, rs, cs) in enumerate(spots):
                    y[m][rs, cs] = mixed[k]
        return y, (a, b)

    def unpair(self, kept: dict, ctx: Any) -> tuple[BlockSite, BlockSite]:
        a, b = ctx
        bond = {m: int(kept[m][0].shape[1]) for m in sorted(kept)}
        return (
            BlockSite(a.left, bond, a.leg, "R", {m: u for m, (u, _) in kept.items()}),
            BlockSite(bond, b.right, b.leg, "C", {m: vh for m, (_, vh) in kept.items()}),
        )

    def move(self, a: BlockSite, b: BlockSite, to_right: bool) -> tuple[BlockSite, BlockSite]:
        """The centre moved from ``a`` to ``b`` (``to_right``) by one QR per sector of the bond
        between them (the R factor into ``b``), or back by one LQ (the L factor into ``a``)."""
        a, b = self._regroup(a, "R"), self._regroup(b, "C")
        bond: dict[int, int] = {}
        amats, bmats = {}, {}
        for m in sorted(a.mats if to_right else b.mats):  # the sectors of the side factored
            if to_right:
                q, r = lapack.qr(a.mats[m])
                amats[m], bond[m] = q, q.shape[1]
                if m in b.mats:
                    bmats[m] = r @ b.mats[m]
            else:
                lo, q = lapack.lq(b.mats[m])
                bmats[m], bond[m] = q, q.shape[0]
                if m in a.mats:
                    amats[m] = a.mats[m] @ lo
        return BlockSite(a.left, bond, a.leg, "R", amats), BlockSite(bond, b.right, b.leg, "C", bmats)

    def norm(self, t: BlockSite) -> float:
        return scaled_norm(list(t.mats.values()))

    def scale(self, t: BlockSite, x: Any) -> BlockSite:
        return BlockSite(t.left, t.right, t.leg, t.form, {k: v / x for k, v in t.mats.items()})

    def times(self, t: BlockSite, x: Any) -> BlockSite:
        return BlockSite(t.left, t.right, t.leg, t.form, {k: v * x for k, v in t.mats.items()})
