"""The sites of the charge-sector sweeps (:mod:`.sector_backend`) as one flat buffer each.

A step of a small chain reads two sites as per-sector matrices (the rows ``(q_l, s)`` of the left
one, the columns ``(s, q_r)`` of the right one, :class:`~tensor4all.structured.site_matrices.Pieces`)
and writes the split's factors back into them. Block by block, that is a few NumPy calls per
block and per basis state, and the site a split writes as the new centre is read again by the
next step only to be cut once more. Here a site is one buffer, its blocks ``(q_l, q_s, q_r)`` one
after the other in key order, each column-major (the layout of
:class:`~tensor4all.SymmetricTensor` blocks), with one zero at the end: writing the factors of a
split is one gather from the factors (:func:`write_rows`, :func:`write_cols`) and reading the
matrices of a step one gather from the buffer (:func:`read_rows`, :func:`read_cols`; the entries
no block holds read the zero), each with its positions planned once per structure (the pieces,
the bonds, the physical leg) and kept here for every run that meets it. The site's
``SymmetricTensor`` is made only when something asks for it (:func:`tensor_of`: its blocks are
views of the buffer), which the steps of a sweep do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..structured.site_matrices import PhysicalStates, blocks_filled
from ..tools.device import stored_array

__all__ = [
    "FLAT_MAX_ENTRIES",
    "FlatSite",
    "SiteLayout",
    "flat_of",
    "read_cols",
    "read_rows",
    "tensor_of",
    "write_cols",
    "write_rows",
]

MAX_FLAT_PLANS = 2048
"""The layouts and gather positions kept here (each cache); more are dropped all at once."""

FLAT_PLAN_BYTES = 32 << 20
"""The gather positions kept here take at most this many bytes; beyond it they are dropped all at
once (a run whose bonds keep changing makes new ones at every step)."""

FLAT_MAX_ENTRIES = 1 << 15
"""Sites of at most this many entries are held flat (256 KiB of doubles): a small chain's, whose
steps cost their number of NumPy calls. A larger site keeps its blocks (a copy per block costs
less than a gather through positions twice its size, and its plans would not fit the budget)."""


class SiteLayout:
    """Where the blocks of a site lie in its buffer: ``blocks[k] = (key, shape, offset)`` in key
    order, ``size`` entries in all (the zero after them is at ``size``). Shared per structure."""

    __slots__ = ("blocks", "size")

    def __init__(self, blocks: tuple, size: int):
        self.blocks, self.size = blocks, size


class FlatSite:
    """A site as one buffer (:class:`SiteLayout` ``layout``, one zero at the end) and its legs."""

    __slots__ = ("buf", "layout", "legs")

    def __init__(self, buf: np.ndarray, layout: SiteLayout, legs: tuple):
        self.buf, self.layout, self.legs = buf, layout, legs

    @property
    def nbytes(self) -> int:
        return self.buf.itemsize * self.layout.size


_LAYOUTS: dict[tuple, SiteLayout] = {}
_PLANS: dict[tuple, tuple] = {}


_PLAN_BYTES = [0]  # the bytes of the positions in _PLANS


def _keep(cache: dict, key: tuple, value: Any, nbytes: int = 0) -> Any:
    """``cache[key] = value``, the cache dropped first where it is full (``nbytes``: what the value
    adds to the positions of :data:`_PLANS`, bounded by :data:`FLAT_PLAN_BYTES`)."""
    plans = cache is _PLANS
    if len(cache) >= MAX_FLAT_PLANS or (plans and _PLAN_BYTES[0] + nbytes > FLAT_PLAN_BYTES):
        cache.clear()
        if plans:
            _PLAN_BYTES[0] = 0
    cache[key] = value
    if plans:
        _PLAN_BYTES[0] += nbytes
    return value


def _layout(structure: tuple) -> SiteLayout:
    """The shared layout of the blocks ``structure = ((key, shape), ...)`` (key order)."""
    held = _LAYOUTS.get(structure)
    if held is None:
        blocks, off = [], 0
        for key, shape in structure:
            blocks.append((key, shape, off))
            off += shape[0] * shape[1] * shape[2]
        held = _keep(_LAYOUTS, structure, SiteLayout(tuple(blocks), off))
    return held


_PHYS: dict[int, tuple[Any, tuple]] = {}


def _phys_key(leg: Any) -> tuple:
    """``tuple(leg.sectors.items())`` of a physical leg (kept per leg: its ``sectors`` is a copy)."""
    held = _PHYS.get(id(leg))
    if held is None or held[0] is not leg:
        held = _keep(_PHYS, id(leg), (leg, tuple(leg.sectors.items())))
    return held[1]


def flat_of(t: Any) -> FlatSite:
    """The buffer of the ``SymmetricTensor`` site ``t`` (one copy of its blocks)."""
    arrays = [stored_array(b) for b in t.leaves]
    layout = _layout(tuple((k, a.shape) for k, a in zip(t.blocks, arrays)))
    dtype = np.result_type(*arrays) if arrays else np.float64
    buf = np.concatenate([a.ravel(order="F") for a in arrays] + [np.zeros(1, dtype=dtype)])
    return FlatSite(buf, layout, t.legs)


def tensor_of(site: FlatSite, matrices: Any) -> Any:
    """The ``SymmetricTensor`` of a flat site (blocks: views of its buffer), made by the
    :class:`~tensor4all.structured.site_matrices.SiteMatrices` ``matrices``."""
    buf = site.buf
    blocks = {
        key: buf[off : off + shape[0] * shape[1] * shape[2]].reshape(shape, order="F")
        for key, shape, off in site.layout.blocks
    }
    return matrices.tensor(blocks, site.legs)


def _write_plan(side: str, pieces: Any, phys: Any, mats: tuple) -> tuple[np.ndarray, SiteLayout]:
    """The positions in the stacked factors ``mats = ((m, rows, cols), ...)`` (each flattened
    row-major, one after the other) of every entry of the site they make (physical leg ``phys``),
    in its buffer's order, and the site's layout. ``side="rows"``: left factors (rows ``(q_l,
    s)``, columns the bond); ``"cols"``: right factors (rows the bond, columns ``(s, q_r)``)."""
    key = (side, id(pieces), _phys_key(phys), mats)
    held = _PLANS.get(key)
    if held is not None and held[0] is pieces:
        return held[1]
    states = PhysicalStates(phys)
    found, start = [], 0
    for m, nr, nc in mats:
        for q, qs, off, ds, n in blocks_filled(side, pieces.groups.get(m, ()), states):
            k_ = np.arange(ds)[None, :, None]
            if side == "rows":  # block (q_l, q_s, m), shape (n, ds, nc): [a, k, c] = mat[off + k n + a, c]
                a, c = np.arange(n)[:, None, None], np.arange(nc)[None, None, :]
                found.append(((q, qs, m), (n, ds, nc), start + (off + k_ * n + a) * nc + c))
            else:  # block (m, q_s, q_r), shape (nr, ds, n): [a, k, c] = mat[a, off + k n + c]
                a, c = np.arange(nr)[:, None, None], np.arange(n)[None, None, :]
                found.append(((m, qs, q), (nr, ds, n), start + a * nc + off + k_ * n + c))
        start += nr * nc
    found.sort(key=lambda f: f[0])
    layout = _layout(tuple((k, shape) for k, shape, _ in found))
    index = np.concatenate([f[2].ravel(order="F") for f in found]) if found else np.zeros(0, dtype=np.intp)
    _keep(_PLANS, key, (pieces, (index, layout)), index.nbytes)
    return index, layout


def _write(side: str, mats: dict[int, np.ndarray], pieces: Any, phys: Any, legs: tuple) -> FlatSite:
    shapes = tuple((m, x.shape[0], x.shape[1]) for m, x in mats.items())
    index, layout = _write_plan(side, pieces, phys, shapes)
    mats_list = list(mats.values())
    dtype = np.result_type(*mats_list) if mats_list else np.float64
    stacked = np.concatenate([x.reshape(-1) for x in mats_list]) if mats_list else np.zeros(0, dtype)
    buf = np.zeros(layout.size + 1, dtype=dtype)
    np.take(stacked, index, out=buf[: layout.size])
    return FlatSite(buf, layout, legs)


def write_rows(mats: dict[int, np.ndarray], rows: Any, phys: Any, legs: tuple) -> FlatSite:
    """The site whose rows ``(q_l, s)`` are those of ``rows`` (pieces of a cut) and whose right
    bond's sector ``m`` is the columns of ``mats[m]`` (the left factors of a split; the blocks of
    :meth:`~tensor4all.structured.site_matrices.SiteMatrices.from_rows`). ``legs``: the site's."""
    return _write("rows", mats, rows, phys, legs)


def write_cols(mats: dict[int, np.ndarray], cols: Any, phys: Any, legs: tuple) -> FlatSite:
    """The site whose columns ``(s, q_r)`` are those of ``cols`` and whose left bond's sector ``m``
    is the rows of ``mats[m]`` (the right factors of a split; ``from_cols``'s blocks)."""
    return _write("cols", mats, cols, phys, legs)


def _read_plan(side: str, site: FlatSite, pieces: Any, sectors: tuple, dims: tuple, phys: Any) -> tuple:
    """The buffer positions of the per-sector matrices of a site (``side="rows"``: ``(rows m) x
    (dims m)``, the bond on the right; ``"cols"``: ``(dims m) x (cols m)``; ``phys``: its
    physical leg), stacked row-major (the zero's position where no block holds an entry), and
    each matrix's ``(start, stop, shape)``."""
    layout = site.layout
    key = (side, id(layout), id(pieces), sectors, dims, _phys_key(phys))
    held = _PLANS.get(key)
    if held is not None and held[0] is pieces and held[1] is layout:
        return held[2]
    first = PhysicalStates(phys).first
    views, base, start = [], {}, 0
    for m, d in zip(sectors, dims):
        shape = (pieces.size[m], d) if side == "rows" else (d, pieces.size[m])
        views.append((start, start + shape[0] * shape[1], shape))
        base[m] = (start, shape[1])
        start += shape[0] * shape[1]
    index = np.full(start, layout.size, dtype=np.intp)
    for (ql, qs, qr), (dl, ds, dr), off in layout.blocks:
        m = qr if side == "rows" else ql
        at = base.get(m)
        if at is None:
            continue
        piece = pieces.where.get((ql, first[qs]) if side == "rows" else (first[qs], qr))
        if piece is None:
            continue
        b0, width = at
        a, k, c = np.arange(dl)[:, None, None], np.arange(ds)[None, :, None], np.arange(dr)[None, None, :]
        src = off + a + dl * k + dl * ds * c
        if side == "rows":  # [off' + k dl + a, c]
            dst = b0 + (piece[1] + k * dl + a) * width + c
        else:  # [a, off' + k dr + c]
            dst = b0 + a * width + piece[1] + k * dr + c
        index[dst.reshape(-1)] = src.reshape(-1)
    plan = (index, views)
    _keep(_PLANS, key, (pieces, layout, plan), index.nbytes)
    return plan


def _read(side: str, site: FlatSite, pieces: Any, sectors: Any, dims: Any, phys: Any) -> list[np.ndarray]:
    index, views = _read_plan(side, site, pieces, tuple(sectors), tuple(dims), phys)
    data = site.buf.take(index)
    return [data[a:b].reshape(shape) for a, b, shape in views]


def read_rows(site: FlatSite, rows: Any, sectors: Any, dims: Any, phys: Any) -> list[np.ndarray]:
    """Per sector ``m`` of ``sectors``, the site's matrices ending in ``m`` stacked along the rows
    ``(q_l, s)`` of ``rows``: ``(rows m) x dims[k]`` (``dims``: the right bond's dimensions)."""
    return _read("rows", site, rows, sectors, dims, phys)


def read_cols(site: FlatSite, cols: Any, sectors: Any, dims: Any, phys: Any) -> list[np.ndarray]:
    """Per sector ``m`` of ``sectors``, the site's matrices starting in ``m`` side by side along the
    columns ``(s, q_r)`` of ``cols``: ``dims[k] x (cols m)`` (``dims``: the left bond's)."""
    return _read("cols", site, cols, sectors, dims, phys)
