"""One MPO tensor absorbed into an environment, as block matrices between fused indices: the
charge-sector backend's ``LW`` and ``WR`` (:mod:`._sector_backend`).

An environment holds, per MPO state ``x`` and bra charge ``q``, one matrix ``E[x][q]`` of
shape ``(dim q, dim q - c_x)``. An MPO entry ``(x, s, t, w, v)`` puts ``v E[x][q]`` at the
rows ``(q, s)`` and the columns ``(q - c_x, t)`` of output state ``w``'s block in sector
``m = q + q_s``. The entries are grouped once per MPO tensor by the charge ``c_x``
(:func:`absorb_groups`; :func:`absorb_mpo` applies them). Within a group, the environment
blocks of one bra charge ``q`` all have one shape, and every output region ``(w, s, t)`` is
a linear combination of them: one GEMM (the coefficients ``(w, s, t) x x`` times the stacked
blocks) computes all of the group's regions, each then written once (regions of different
groups never overlap).

The loop over single entries that this replaces added ``v E`` block by block, thousands of
small NumPy calls per step. On the Hubbard 8x4 cylinder at bond dimension 400 it took a
fifth of the sweep.

Small sides (at most :data:`~.sector_dense.DENSE_ABSORB_ROWS` fused rows) are absorbed on
whole arrays instead (:mod:`.sector_dense`), and so are the environments :func:`sandwich` moves
from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Sequence

import numpy as np

from ..linalg.gemm_list import native_gemms
from .sector_dense import DENSE_ABSORB_ROWS, SHARED_PLANS, Dense, absorb_dense, sandwich_dense

__all__ = ["AbsorbGroup", "AbsorbPlan", "absorb_groups", "absorb_mpo", "sandwich"]


@dataclass(frozen=True)
class AbsorbGroup:
    """The MPO entries whose environment state has charge ``cx``: the environment states
    ``xs``, the output regions ``rows`` (``(w, s, t)``) and ``coef[row, j]``, the entry's
    value for ``(rows[row], xs[j])`` (0 where the MPO has none)."""

    cx: int
    xs: tuple[int, ...]
    rows: tuple[tuple[int, int, int], ...]
    coef: np.ndarray

    @cached_property
    def row_states(self) -> frozenset:
        """The physical states ``s`` of ``rows``."""
        return frozenset(s for _, s, _ in self.rows)

    @cached_property
    def col_states(self) -> frozenset:
        """The physical states ``t`` of ``rows``."""
        return frozenset(t for *_, t in self.rows)


def absorb_groups(entries: dict[int, list], c_env: Sequence[int], norm: Callable[[int], int]) -> list[AbsorbGroup]:
    """Group one MPO tensor's nonzero entries, ``entries[w] = [(x, s, t, v), ...]`` per output
    state ``w`` (``x``: the environment's state, of charge ``c_env[x]``), by ``c_x``."""
    by_charge: dict[int, list[tuple[int, int, int, int, Any]]] = {}
    for w, items in entries.items():
        for x, s, t, v in items:
            by_charge.setdefault(norm(int(c_env[x])), []).append((x, w, s, t, v))
    groups = []
    for cx, items in by_charge.items():
        xs = tuple(sorted({x for x, *_ in items}))
        rows = tuple(sorted({(w, s, t) for _, w, s, t, _ in items}))
        col = {x: j for j, x in enumerate(xs)}
        row = {r: k for k, r in enumerate(rows)}
        coef = np.zeros((len(rows), len(xs)), dtype=np.result_type(*(v for *_, v in items), np.float64))
        for x, w, s, t, v in items:
            coef[row[(w, s, t)], col[x]] += v
        groups.append(AbsorbGroup(cx, xs, rows, coef))
    return groups


def absorb_mpo(
    env: list,
    groups: Sequence[AbsorbGroup],
    c_out: Sequence[int],
    pieces: Any,
    key: Callable[[int, int], Any],
    norm: Callable[[int], int],
    xp: Any,
    dtype: Any,
    plans: dict | None = None,
) -> tuple[list, list]:
    """``(out, regions)``: ``out[w][m]`` is the environment ``env`` (per state ``x``:
    ``{q: E[x][q]}``) with the MPO tensor of ``groups`` absorbed, as ``(pieces m) x (pieces m -
    c_w)`` matrices over the fused index ``pieces`` (``where[key(q, s)] = (m, offset, size)``,
    ``size[m]``), in ``dtype`` on the array module ``xp``; blocks that no entry reaches are
    absent. ``regions[w][m]`` lists the ``(row0, row1, col0, col1)`` rectangles of
    ``out[w][m]`` that were written: the rest is zero.

    With ``plans`` (a dict the caller keeps, on the host), the bookkeeping is planned per shape
    (:class:`AbsorbPlan`: the MPO tensor, the pieces and the environment's blocks) the second
    time the shape comes, and reused: a run at fixed bonds meets the same shapes at every step.
    (Planning costs about what one absorption without a plan does, and a planned one a third of
    it; a shape met once, as the bonds grow, is absorbed without.)"""
    if plans is None or xp is not np:
        return _absorb(env, groups, c_out, pieces, key, norm, xp, dtype)
    if sum(pieces.size.values()) <= DENSE_ABSORB_ROWS:
        return absorb_dense(env, groups, c_out, pieces, key(0, 1) == (0, 1), norm, dtype, SHARED_PLANS)
    shape = tuple(tuple((q, e.shape) for q, e in d.items()) for d in env)
    plan_key = (id(groups), id(pieces), shape)
    held = plans.get(plan_key)
    if held is None or held.groups is not groups or held.pieces is not pieces:  # new (or an id reused)
        if len(plans) >= MAX_PLANS:
            plans.clear()
        plans[plan_key] = _Seen(groups, pieces)
        return _absorb(env, groups, c_out, pieces, key, norm, xp, dtype)
    if isinstance(held, _Seen):
        held = plans[plan_key] = AbsorbPlan(env, groups, c_out, pieces, key, norm)
    return held.run(env, dtype), held.regions


NATIVE_MIN_ENTRIES = 1 << 16
"""The smallest planned absorption (entries of its buffer) that writes its regions by the native
rectangle copy (:func:`~tensor4all.linalg._gemm_list_kernels.scatter`, where Numba is installed)
instead of NumPy's index per entry: the plan then keeps two numbers per region instead of one
index per entry (the plans of the 6 x 3 Hubbard cylinder at bond dimension 400 held 173 MB of
indices: its peak memory 680 -> 570 MB), and the writes read no index (its plans' runs 0.80 ->
0.67 s). A run then holds every written value twice for a moment (the GEMMs' results, then
the buffer), where the index path held one GEMM's results at a time."""


class _Seen:
    """A shape :func:`absorb_mpo` has met once (of these ``groups`` and ``pieces``)."""

    __slots__ = ("groups", "pieces")

    def __init__(self, groups: Any, pieces: Any):
        self.groups, self.pieces = groups, pieces


MAX_PLANS = 512
"""The absorb plans a run keeps (:func:`absorb_mpo`); more are dropped all at once (the dense
layouts of :mod:`.sector_dense` count among them)."""


def _live(g: AbsorbGroup, q: int, present: list, pieces: Any, key: Callable, norm: Callable) -> tuple:
    """The entries of group ``g`` that environment blocks of bra charge ``q`` reach (``present``:
    the ``(j, block)`` of the group's states that have one): the coefficients of the live rows
    (None: all of ``g.coef``) and their slots ``(w, m, row offset, column offset)``."""
    where = pieces.where
    qc = norm(q - g.cx)
    if len(present) == len(g.xs):  # every row has an entry
        coef, reached = g.coef, None
    else:
        coef = g.coef[:, [j for j, _ in present]]
        reached = coef.any(axis=1).tolist()
    row_piece = {s: where.get(key(q, s)) for s in g.row_states}  # (m, offset, size) or None
    col_piece = {t: where.get(key(qc, t)) for t in g.col_states}
    live, slots = [], []
    for r, (w, s, t) in enumerate(g.rows):
        rp, cp = row_piece[s], col_piece[t]
        if rp is not None and cp is not None and (reached is None or reached[r]):
            live.append(r)
            slots.append((w, rp[0], rp[1], cp[1]))
    if live and len(live) < len(g.rows):
        coef = coef[live]
    return coef, slots


def _by_charge(env: list, g: AbsorbGroup) -> dict[int, list[tuple[int, Any]]]:
    """The group's environment blocks by bra charge: ``q -> [(j, E[xs[j]][q])]``."""
    by_q: dict[int, list[tuple[int, Any]]] = {}
    for j, x in enumerate(g.xs):
        for q, e in env[x].items():
            by_q.setdefault(q, []).append((j, e))
    return by_q


def _stacked(present: list, xp: Any) -> Any:
    """The blocks of ``present`` (one shape) as the rows of one matrix."""
    da, db = present[0][1].shape
    if len(present) == 1:
        return present[0][1].reshape(1, da * db)
    return xp.stack([e for _, e in present]).reshape(len(present), da * db)


def _absorb(
    env: list,
    groups: Sequence[AbsorbGroup],
    c_out: Sequence[int],
    pieces: Any,
    key: Any,
    norm: Any,
    xp: Any,
    dtype: Any,
) -> tuple[list, list]:
    """:func:`absorb_mpo` without a plan (on a GPU: the blocks are CuPy arrays)."""
    out: list[dict[int, Any]] = [{} for _ in c_out]
    regions: list[dict[int, list]] = [{} for _ in c_out]
    size = pieces.size
    for _, _, present, coef, slots, da, db in _live_entries(env, groups, pieces, key, norm):
        values = ((coef if xp is np else xp.asarray(coef)) @ _stacked(present, xp)).reshape(len(slots), da, db)
        for k, (w, m, ro, co) in enumerate(slots):
            blocks = out[w]
            blk = blocks.get(m)
            if blk is None:
                blk = blocks[m] = xp.zeros((size[m], size.get(norm(m - c_out[w]), 0)), dtype=dtype)
                regions[w][m] = []
            blk[ro : ro + da, co : co + db] = values[k]
            regions[w][m].append((ro, ro + da, co, co + db))
    return out, regions


def _live_entries(env: list, groups: Sequence[AbsorbGroup], pieces: Any, key: Any, norm: Any):
    """Per group ``g`` and bra charge ``q`` with live entries: ``g``, ``q``, the environment blocks
    present, the coefficients, the output slots and the block shape ``(da, db)`` (what the planned
    and the unplanned absorption both walk)."""
    for g in groups:
        for q, present in _by_charge(env, g).items():
            coef, slots = _live(g, q, present, pieces, key, norm)
            if slots:
                yield g, q, present, coef, slots, *present[0][1].shape


class AbsorbPlan:
    """:func:`absorb_mpo` for one shape, planned: the output blocks laid out in one buffer
    (``blocks``: ``(w, m, offset, rows, columns)``), and per group and bra charge the environment
    blocks to stack, the coefficients of the live entries and where their values go (the loop
    over single entries and the block lookups happen here, once). A run is one GEMM per group and
    charge, then, above :data:`NATIVE_MIN_ENTRIES` with Numba, one native copy of every
    rectangle (``rectangles``: per region its place among the values, its first position in the
    buffer, its block's columns, its rows and width), else one scatter per GEMM by an index per
    entry."""

    __slots__ = ("groups", "pieces", "size", "blocks", "steps", "regions", "scatter", "rectangles", "values")

    def __init__(
        self, env: list, groups: Sequence[AbsorbGroup], c_out: Sequence[int], pieces: Any, key: Any, norm: Any
    ):
        self.groups, self.pieces = groups, pieces
        size = pieces.size
        at: dict[tuple[int, int], tuple[int, int]] = {}  # (w, m) -> (offset, columns)
        self.blocks: list[tuple[int, int, int, int, int]] = []
        self.regions: list[dict[int, list]] = [{} for _ in c_out]
        found = []  # per group and charge: xq, coef, and its slots' first positions and columns, da, db
        total = 0
        for g, q, present, coef, slots, da, db in _live_entries(env, groups, pieces, key, norm):
            place = []  # per slot: the block's offset and columns, the slot's row and column
            for w, m, ro, co in slots:
                held = at.get((w, m))
                if held is None:
                    rows, cols = size[m], size.get(norm(m - c_out[w]), 0)
                    held = at[(w, m)] = (total, cols)
                    self.blocks.append((w, m, total, rows, cols))
                    self.regions[w][m] = []
                    total += rows * cols
                place.append((held[0] + ro * held[1] + co, held[1]))
                self.regions[w][m].append((ro, ro + da, co, co + db))
            first, cols = np.array(place, dtype=np.int64).T  # slot k's (i, j) at first[k] + i cols[k] + j
            xq = tuple((g.xs[j], q) for j, _ in present)
            found.append((xq, coef, first, cols, da, db))
        self.size = total
        kernels = native_gemms() if total >= NATIVE_MIN_ENTRIES and found else None
        self.scatter = None if kernels is None else kernels.scatter
        # per group and charge: xq, coef, and the index of every entry (NumPy; int64, as large as
        # the buffer) or the range of its values (natively: every GEMM into one buffer of values,
        # then one copy of all rectangles)
        if self.scatter is None:
            self.steps = [
                (xq, coef, (f[:, None, None] + np.arange(da)[:, None] * c[:, None, None] + np.arange(db)).ravel())
                for xq, coef, f, c, da, db in found
            ]
            return
        sizes = [len(f) * da * db for _, _, f, _, da, db in found]
        starts = np.cumsum([0] + sizes).tolist()
        self.steps = [(xq, coef, (a, b)) for (xq, coef, *_), a, b in zip(found, starts, starts[1:])]
        self.values = starts[-1]
        self.rectangles = (
            np.concatenate([a + da * db * np.arange(len(f)) for (_, _, f, _, da, db), a in zip(found, starts)]),
            np.concatenate([f for _, _, f, *_ in found]),
            np.concatenate([c for _, _, _, c, _, _ in found]),
            np.concatenate([np.full(len(f), da) for _, _, f, _, da, _ in found]),
            np.concatenate([np.full(len(f), db) for _, _, f, _, _, db in found]),
        )

    def run(self, env: list, dtype: Any) -> list:
        buf = np.zeros(self.size, dtype=dtype)
        values = None if self.scatter is None else np.empty(self.values, dtype=dtype)
        for xq, coef, where in self.steps:
            if len(xq) == 1:
                x, q = xq[0]
                stacked = env[x][q].reshape(1, -1)
            else:
                stacked = np.stack([env[x][q] for x, q in xq]).reshape(len(xq), -1)
            if values is None:
                buf[where] = (coef @ stacked).reshape(-1)  # where: the index of every entry
            else:
                np.matmul(coef, stacked, out=values[where[0] : where[1]].reshape(coef.shape[0], -1))
        if values is not None:
            self.scatter(buf, values, *self.rectangles)
        out: list[dict[int, Any]] = [{} for _ in self.regions]
        for w, m, off, rows, cols in self.blocks:
            out[w][m] = buf[off : off + rows * cols].reshape(rows, cols)
        return out


def sandwich(
    absorbed: list, bra: dict[int, np.ndarray], ket: dict[int, np.ndarray], c: Sequence[int], norm: Callable[[int], int]
) -> list:
    """The moved environment ``E[w][m] = bra[m] @ absorbed[w][m] @ ket[m - c_w]`` over the
    sectors present on both sides (``bra = U^dagger``, ``ket = U`` for a left block;
    ``conj(Vh)``, ``Vh^T`` for a right one). A :class:`Dense` ``absorbed`` gives a :class:`Dense`
    environment: two GEMMs per MPO state on the whole arrays."""
    if isinstance(absorbed, Dense) and list(bra) == list(ket) and all(k.shape[1] for k in ket.values()):
        return sandwich_dense(absorbed, bra, ket, c, norm)
    return [
        {m: bra[m] @ blk @ ket[norm(m - cw)] for m, blk in absorbed[w].items() if m in bra and norm(m - cw) in ket}
        for w, cw in enumerate(c)
    ]
