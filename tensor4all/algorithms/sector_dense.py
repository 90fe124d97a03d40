"""The small sides of the charge-sector backend on whole arrays (:mod:`.sector_backend`).

A step of a small chain costs the number of its NumPy calls, not their arithmetic: absorbing an
MPO tensor into an environment block by block (:func:`.sector_absorb.absorb_mpo`), moving it
(:func:`.sector_absorb.sandwich`) and building a local problem's matrix term by term
(:class:`.sector_operator.SectorOperator`) take a few calls per block and MPO state each. A
side of at most :data:`DENSE_ABSORB_ROWS` fused rows is held instead as one array per MPO
state, zeros outside its blocks, rows and columns in the side's sector order
(:class:`Dense`): absorbing is one GEMM of the MPO tensor with the environment's arrays and
one gather (:func:`absorb_dense`), moving two GEMMs (:func:`sandwich_dense`), and the matrix
of a local problem between two such sides two gathers and a sum over the MPO states
(:func:`gathered_matrix`). The blocks stay readable as views of the arrays (made when first
read), so every other step of the backend reads a :class:`Dense` environment as it reads a
blocked one; the sums are the blocked ones with zeros added, equal to rounding.

Measured on the Heisenberg chain of ``benchmarks/conserve_small.py`` (L = 12, chi 32, one core):
an absorption took 56 us against 120 us block by block (100 us from a plan), with the sides'
16 to 46 fused rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["Dense", "DENSE_ABSORB_ROWS", "WholeProduct", "absorb_dense", "sandwich_dense", "gathered_matrix"]

DENSE_ABSORB_ROWS = 64
"""Sides of at most this many fused rows are absorbed on whole arrays (:func:`absorb_dense`)."""

MAX_LAYOUTS = 512
"""The layouts each cache here keeps; more are dropped all at once."""

INDEX_BYTES = 32 << 20
"""The gather positions each cache here keeps (a side's or a local problem's, about 0.1 to 1 MB
each) take at most this many bytes; beyond it they are dropped all at once."""


class Dense(list):
    """An absorbed or moved environment whose blocks (per MPO state ``w``: ``{m: block}``) are
    views of one array: ``dense[w]``, rows and columns in the order of ``starts`` (a sector's
    first index), zeros outside the blocks. Every block that charge allows is there (rows of
    ``m``, columns of ``m - c_w``, both sectors present), made when first read. ``where``: the
    blocks' places (:func:`_where`, shared per structure: equal structures, the same object)."""

    __slots__ = ("dense", "starts", "where")

    def __init__(self, dense: np.ndarray, starts: dict[int, int], where: list):
        super().__init__(_Views(dense[w], at) for w, at in enumerate(where))
        self.dense, self.starts, self.where = dense, starts, where


class _Views(Mapping):
    """One MPO state's blocks of a :class:`Dense` environment: ``where[m] = (row0, row1, col0,
    col1)``, each a view made on first access."""

    __slots__ = ("_array", "_where", "_made")

    def __init__(self, array: np.ndarray, where: dict[int, tuple[int, int, int, int]]):
        self._array, self._where, self._made = array, where, {}

    def __getitem__(self, m: int) -> np.ndarray:
        v = self._made.get(m)
        if v is None:
            r0, r1, c0, c1 = self._where[m]
            v = self._made[m] = self._array[r0:r1, c0:c1]
        return v

    def get(self, m: int, default: Any = None) -> Any:
        return self[m] if m in self._where else default

    def __contains__(self, m: object) -> bool:
        return m in self._where

    def __iter__(self) -> Any:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


SHARED_PLANS: dict = {}
"""The plans of :func:`absorb_dense` that the charge-sector sweeps share (every run, site and
backend): the layouts know a side's pieces and the MPO's groups by identity, and the backend
shares those per structure (:meth:`.sector_sides.SectorSides._pieces`, the MPO tensor's groups), so
that a step whose structure recurs (the next sweep, the next run of the same chain) finds its layout
made. Bounded as every plans dict here (:data:`MAX_LAYOUTS`, :data:`INDEX_BYTES`)."""

_WHERE: dict[tuple, list] = {}  # the blocks' places per (order, sizes, MPO charges, modulus)


def _where(starts: dict[int, int], size: dict[int, int], c_out: Sequence[int], norm: Callable) -> list:
    """Per MPO state ``w`` of charge ``c_w``, the places ``{m: (row0, row1, col0, col1)}`` of the
    blocks ``(m, m - c_w)`` in an array ordered by ``starts``."""
    key = (tuple(starts.items()), tuple(size.items()), tuple(c_out), norm(-1))
    held = _WHERE.get(key)
    if held is None:
        held = []
        for cw in c_out:
            at = {}
            for m, r0 in starts.items():
                mc = norm(m - cw)
                c0 = starts.get(mc)
                if c0 is not None:
                    at[m] = (r0, r0 + size[m], c0, c0 + size[mc])
            held.append(at)
        if len(_WHERE) >= MAX_LAYOUTS:
            _WHERE.clear()
        _WHERE[key] = held
    return held


def _dense_mpo(groups: Sequence[Any], n_env: int, d: int, n_out: int, plans: dict) -> np.ndarray:
    """The MPO tensor of ``groups`` (:class:`~.sector_absorb.AbsorbGroup`) as ``W[x, (s, t, w)]``,
    kept in ``plans``."""
    key = ("mpo", id(groups), n_env, d, n_out)
    held = plans.get(key)
    if held is None or held[0] is not groups:
        w = np.zeros((n_env, d, d, n_out), dtype=np.result_type(*(g.coef for g in groups), np.float64))
        for g in groups:
            for r, (wo, s, t) in enumerate(g.rows):
                w[list(g.xs), s, t, wo] += g.coef[r]
        held = plans[key] = (groups, w.reshape(n_env, -1))
    return held[1]


def _layout(pieces: Any, rowwise: bool, env: Any, n_out: int, plans: dict) -> tuple:
    """Where :func:`absorb_dense` reads: the environment's bond (charge -> first index: a
    :class:`Dense` ``env``'s order, else that of ``pieces``) and its dimension, the physical
    dimension, each sector's first row in the side's order, and per output entry ``(w, i, j)``
    its index in the product ``W^T E`` (``(s_i, s_j, w)`` by ``(a_i, a_j)``, flattened); kept in
    ``plans``."""
    order = env.starts if isinstance(env, Dense) else None
    key = ("dense", id(pieces), rowwise, None if order is None else (tuple(order.items()), env.dense.shape[1]), n_out)
    held = plans.get(key)
    if held is not None and held[0] is pieces:
        return held[1]
    dims: dict[int, int] = {}
    for k, (_, _, n) in pieces.where.items():
        dims.setdefault(k[0] if rowwise else k[1], n)
    if order is None:
        order, off = {}, 0
        for q, n in dims.items():
            order[q] = off
            off += n
    big = env.dense.shape[1] if isinstance(env, Dense) else max(order[q] + n for q, n in dims.items())
    d = 1 + max(k[1] if rowwise else k[0] for k in pieces.where)
    starts, off = {}, 0
    for m, n in pieces.size.items():
        starts[m] = off
        off += n
    # the pieces in the side's order: (first row, rows, first bond index, physical state)
    runs = sorted(
        (starts[m] + o, n, order[k[0] if rowwise else k[1]], k[1] if rowwise else k[0])
        for k, (m, o, n) in pieces.where.items()
    )
    first, count, bond, state = (np.array(c, dtype=np.intp) for c in zip(*runs))
    a = np.arange(off) + np.repeat(bond - first, count)  # row p of a piece is bond index bond + p - first
    s = np.repeat(state, count)
    ij = (s[:, None] * d + s[None, :]) * (n_out * big * big) + a[:, None] * big + a[None, :]
    index = ij[None] + (np.arange(n_out) * (big * big))[:, None, None]
    layout = (order, big, d, starts, index)
    held_bytes = plans.get(_BYTES, 0) + index.nbytes
    if held_bytes > INDEX_BYTES or len(plans) >= MAX_LAYOUTS:  # the absorb plans go too (rebuilt when met again)
        plans.clear()
        held_bytes = index.nbytes
    plans[key] = (pieces, layout)
    plans[_BYTES] = held_bytes
    return layout


_BYTES = ("dense", "bytes")  # the key of the bytes the layouts in a plans dict hold


def absorb_dense(
    env: list,
    groups: Sequence[Any],
    c_out: Sequence[int],
    pieces: Any,
    rowwise: bool,
    norm: Callable,
    dtype: Any,
    plans: dict,
) -> tuple[Dense, list]:
    """:func:`~.sector_absorb.absorb_mpo` of a small side (the pieces of rows ``(q, s)``, or with
    ``rowwise=False`` of columns ``(s, q)``): the environment as one array per state (``E[x]``,
    its blocks at ``(q, q - c_x)``; a :class:`Dense` one as it is), ``W^T E`` in one GEMM and
    the entries of the output gathered in the side's sector order: ``out[w][(a_i, s_i), (a_j,
    s_j)] = sum_x W[x, s_i, s_j, w] E[x][a_i, a_j]``, the sums of the blocked absorption. No
    regions (the blocks of a small side are multiplied whole)."""
    n_out = len(c_out)
    order, big, d, starts, index = _layout(pieces, rowwise, env, n_out, plans)
    if isinstance(env, Dense):
        e = env.dense
    else:
        c_env = {x: g.cx for g in groups for x in g.xs}
        e = np.zeros((len(env), big, big), dtype=dtype)
        for x, cx in c_env.items():
            for q, blk in env[x].items():
                r0, c0 = order[q], order[norm(q - cx)]
                e[x, r0 : r0 + blk.shape[0], c0 : c0 + blk.shape[1]] = blk
    w = _dense_mpo(groups, len(env), d, n_out, plans)
    out = (w.T @ e.reshape(len(env), -1)).reshape(-1).take(index).astype(dtype, copy=False)
    return Dense(out, starts, _where(starts, pieces.size, c_out, norm)), [{} for _ in c_out]


def sandwich_dense(absorbed: Dense, bra: dict, ket: dict, c: Sequence[int], norm: Callable) -> Dense:
    """:func:`~.sector_absorb.sandwich` on the whole arrays: ``E[w] = B absorbed.dense[w] K`` with
    ``B``, ``K`` the block-diagonal ``bra`` and ``ket`` (the new bond in their order, the same
    sectors)."""
    dense, at = absorbed.dense, absorbed.starts
    starts, size, off = {}, {}, 0
    for m, k in ket.items():
        starts[m], size[m] = off, k.shape[1]
        off += k.shape[1]
    dtype = np.result_type(dense, *bra.values(), *ket.values())
    left = np.zeros((off, dense.shape[1]), dtype=dtype)
    right = np.zeros((dense.shape[2], off), dtype=dtype)
    for m, k in ket.items():
        right[at[m] : at[m] + k.shape[0], starts[m] : starts[m] + size[m]] = k
        left[starts[m] : starts[m] + size[m], at[m] : at[m] + k.shape[0]] = bra[m]
    return Dense(np.matmul(np.matmul(left, dense), right), starts, _where(starts, size, c, norm))


_INDEX: dict[tuple, tuple] = {}  # the gather positions per (sides, sectors, orders)
_INDEX_HELD = [0]  # their bytes


def gathered_matrix(lw: Dense, wr: Dense, sectors: list[int], rows: Any, cols: Any, n: int) -> np.ndarray:
    """The matrix ``H[t, t'] = sum_w LW[w][r_t, r_t'] WR[w][c_t, c_t']`` of a local problem over
    its flattened states ``t`` (sector ``m``, row ``i``, column ``j``; ``r_t`` the row's index in
    ``lw``'s array, ``c_t`` the column's in ``wr``'s): what the Kronecker blocks of
    :class:`~.sector_operator.SectorOperator` hold (an entry between sectors ``m`` and ``m'`` is
    zero in both arrays unless ``m' = m - c_w``)."""
    nl, nr = lw.dense.shape[1], wr.dense.shape[1]
    key = (id(rows), id(cols), tuple(sectors), tuple(lw.starts.items()), tuple(wr.starts.items()), nl, nr)
    held = _INDEX.get(key)
    if held is None or held[0] is not rows or held[1] is not cols:
        ri = np.concatenate([np.repeat(lw.starts[m] + np.arange(rows.size[m]), cols.size[m]) for m in sectors])
        ci = np.concatenate([np.tile(wr.starts[m] + np.arange(cols.size[m]), rows.size[m]) for m in sectors])
        at_l, at_r = (ri[:, None] * nl + ri).reshape(-1), (ci[:, None] * nr + ci).reshape(-1)
        if len(_INDEX) >= MAX_LAYOUTS or _INDEX_HELD[0] + 2 * at_l.nbytes > INDEX_BYTES:
            _INDEX.clear()
            _INDEX_HELD[0] = 0
        held = _INDEX[key] = (rows, cols, at_l, at_r)
        _INDEX_HELD[0] += 2 * at_l.nbytes
    _, _, at_l, at_r = held
    w = lw.dense.shape[0]
    left = lw.dense.reshape(w, -1).take(at_l, axis=1)
    right = wr.dense.reshape(w, -1).take(at_r, axis=1)
    return np.einsum("wk,wk->k", left, right).reshape(n, n)


_PLACES: dict[tuple, tuple] = {}  # the flat states' places in X per (sides, sectors, orders)


def _places(lw: Dense, wr: Dense, sectors: list[int], rows: Any, cols: Any) -> np.ndarray:
    """Where each flattened state ``t`` (sector ``m``, row ``i``, column ``j``) sits in the whole
    matrix ``X`` of a local problem between two :class:`Dense` sides (rows in ``lw``'s order,
    columns in ``wr``'s): ``r_t * C + c_t``. Made once per structure."""
    nc = wr.dense.shape[1]
    key = (id(rows), id(cols), tuple(sectors), tuple(lw.starts.items()), tuple(wr.starts.items()), nc)
    held = _PLACES.get(key)
    if held is None or held[0] is not rows or held[1] is not cols:
        at = [
            ((lw.starts[m] + np.arange(rows.size[m]))[:, None] * nc + (wr.starts[m] + np.arange(cols.size[m]))).ravel()
            for m in sectors
        ]
        if len(_PLACES) >= MAX_LAYOUTS:
            _PLACES.clear()
        held = _PLACES[key] = (rows, cols, np.concatenate(at) if at else np.zeros(0, dtype=np.intp))
    return held[2]


class WholeProduct:
    """``y = H x`` of a local problem between two :class:`Dense` sides on their whole arrays:
    ``Y = sum_w LW[w] X WR[w]^T`` with ``X`` the flat state scattered into its sectors' blocks
    (zeros elsewhere) and ``y`` gathered back. One batched GEMM (``X WR[w]^T`` for every ``w``)
    and one GEMM over ``(w, row)`` instead of two small GEMMs per term: a few calls whatever the
    number of terms, at the price of the zero blocks' flops (``2 W R C (R + C)``). Equal to the
    products by blocks to rounding: an entry of ``Y`` outside the sectors' blocks is never read,
    and one inside them sums exactly the terms of the blocked product plus zeros."""

    __slots__ = ("places", "lw_rows", "wr_t", "size")

    def __init__(self, lw: Dense, wr: Dense, sectors: list[int], rows: Any, cols: Any):
        w, nr = lw.dense.shape[:2]
        self.places = _places(lw, wr, sectors, rows, cols)
        self.lw_rows = np.ascontiguousarray(lw.dense.transpose(1, 0, 2).reshape(nr, w * nr))  # [r, (w, r')]
        self.wr_t = np.ascontiguousarray(wr.dense.transpose(0, 2, 1))  # WR[w]^T
        self.size = (nr, wr.dense.shape[1])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        nr, nc = self.size
        whole = np.zeros(nr * nc, dtype=np.result_type(x, self.wr_t))
        whole[self.places] = x
        xw = np.matmul(whole.reshape(nr, nc), self.wr_t)  # (w, r', c): X WR[w]^T
        return (self.lw_rows @ xw.reshape(-1, nc)).reshape(-1).take(self.places)
