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
mixes the pairs of states ``(s1, s2)`` of one pair charge ``c``, acts on the flattened ``X`` by one
gather, one GEMM and one scatter per pair charge, at positions planned once per shape of the
update (the two outer bonds: :class:`_PairPlan`, kept while the run meets that shape again); one
SVD per sector of the cut (:mod:`tensor4all.linalg.lapack`); its factors are the new sites, ``U`` by rows
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

import math
from typing import Any, Sequence

import numpy as np

from ..networks.mps import MPS
from ..structured import Leg, SymmetricTensor
from ..structured.site_matrices import Pieces, SiteMatrices, bond_sectors
from ..tools.device import stored_array
from ..linalg import lapack
from .tebd_sites import DenseSites, NumpyLA

__all__ = ["BlockSites", "BlockSite"]

MAX_PLANS = 256
"""The pair plans and pieces a run keeps (per shape of a bond update); more are dropped at once."""


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


class _PairPlan:
    """One shape of a bond update (the outer bonds ``left`` of site ``a``, ``right`` of site
    ``b``, the states' charges): the cut's two sides (``rows``, ``cols``), its ``sectors`` (in the
    columns' order) with their offsets in the flattened ``X``, and per pair charge ``c`` the
    positions ``idx[c]`` (pairs x entries) of the entries of each pair of states in ``X``."""

    __slots__ = ("rows", "cols", "sectors", "bounds", "size", "idx")

    def __init__(self, left: dict[int, int], right: dict[int, int], qa: Sequence[int], qb: Sequence[int], norm: Any):
        self.rows = rows = Pieces.rows(left, qa, norm)
        self.cols = cols = Pieces.cols(qb, right, norm)
        self.sectors = [m for m in cols.size if m in rows.size]
        self.bounds, total = {}, 0
        for m in self.sectors:
            self.bounds[m] = (total, rows.size[m], cols.size[m])
            total += rows.size[m] * cols.size[m]
        self.size = total
        self.idx: dict[int, np.ndarray] = {}
        for c, pairs in _pairs(qa, qb, lambda x, y: norm(x + y)).items():
            outer = [(ql, dl, norm(ql + c)) for ql, dl in left.items() if norm(ql + c) in right]
            place = []  # (first entry, row stride, rows, columns) per pair of states, then left charge
            for s1, s2 in pairs:
                for ql, dl, qr in outer:
                    m, ro, _ = rows.where[(ql, s1)]
                    co = cols.where[(s2, qr)][1]
                    off, _, ncols = self.bounds[m]
                    place.append((off + ro * ncols + co, ncols, dl, right[qr]))
            if place:
                self.idx[c] = _positions(place).reshape(len(pairs), -1)


def _positions(place: list[tuple[int, int, int, int]]) -> np.ndarray:
    """The positions of the entries of the blocks ``(first, stride, rows, columns)``, block by
    block, each row-major."""
    first, stride, nr, nc = (np.array(x, dtype=np.int64) for x in zip(*place))
    sizes = nr * nc
    block = np.repeat(np.arange(len(place)), sizes)
    local = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    cols = nc[block]
    return first[block] + (local // cols) * stride[block] + local % cols


class BlockSites(DenseSites):
    """Concrete symmetric runs on :class:`BlockSite` s (see the module); :meth:`site` and
    :meth:`state` convert from and to the MPS's :class:`~tensor4all.SymmetricTensor` sites."""

    def __init__(self, dtype: np.dtype, modulus: int, legs: list[Leg]):
        super().__init__(NumpyLA(), dtype)
        self.modulus = modulus
        self.layout = SiteMatrices(legs[0].symmetry, modulus, dtype)
        self.qs = [self.layout.physical(leg).charges for leg in legs]
        self._plans: dict[tuple, _PairPlan] = {}
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

    def _plan(self, a: BlockSite, b: BlockSite) -> _PairPlan:
        key = (tuple(a.left.items()), tuple(b.right.items()), id(a.leg), id(b.leg))
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= MAX_PLANS:
                self._plans.clear()
            qa, qb = self.layout.physical(a.leg).charges, self.layout.physical(b.leg).charges
            plan = self._plans[key] = _PairPlan(a.left, b.right, qa, qb, self.norm_charge)
        return plan

    def pair(self, a: BlockSite, b: BlockSite, gate: _BlockGate) -> tuple[dict, Any]:
        """The matrices of the cut (by its charge) of the pair ``a, b`` with the gate applied."""
        a, b = self._regroup(a, "R"), self._regroup(b, "C")
        plan = self._plan(a, b)
        x = np.zeros(plan.size, self.dtype)
        mats = {}
        for m in plan.sectors:
            off, nr, nc = plan.bounds[m]
            view = mats[m] = x[off : off + nr * nc].reshape(nr, nc)
            r, c = a.mats.get(m), b.mats.get(m)
            if r is not None and c is not None:
                np.matmul(r, c, out=view)
        y = np.empty_like(x)
        for c, idx in plan.idx.items():
            y[idx] = gate.groups[c][1] @ x[idx]
        for m in plan.sectors:
            off, nr, nc = plan.bounds[m]
            mats[m] = y[off : off + nr * nc].reshape(nr, nc)
        return mats, (plan, a, b)

    def unpair(self, kept: dict, ctx: Any) -> tuple[BlockSite, BlockSite]:
        _plan, a, b = ctx
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
        return math.sqrt(sum(float(np.vdot(x, x).real) for x in t.mats.values()))

    def scale(self, t: BlockSite, x: Any) -> BlockSite:
        return BlockSite(t.left, t.right, t.leg, t.form, {k: v / x for k, v in t.mats.items()})
