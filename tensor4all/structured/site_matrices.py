"""Symmetric MPS sites read and written as one matrix per basis state: the layout the
charge-sector steps compute in (the sweep's :mod:`tensor4all.algorithms.sector_backend` and
TEBD's :class:`~tensor4all.algorithms.tebd_blocks.BlockSites`).

A site is a :class:`~tensor4all.SymmetricTensor` with legs ``(left bond, physical, right
bond)`` and blocks ``(q_l, q_s, q_r)`` of shape ``(dim q_l, dim q_s, dim q_r)``, stored
column-major. The matrix ``A[(q_l, s)]`` of a basis state ``s`` (position ``k`` in its sector
``q_s``) is the view ``block[:, k, :]``: reading a site copies nothing, and the steps stack
these views into the per-sector matrices of a cut (TeNPy's pipes). Writing goes the other
way: the factors of a split are cut into the matrices of the states and copied into fresh
blocks, so there is one format for a symmetric site everywhere (the MPS, the sweeps, TEBD)
and no conversion between two.

Charges are the group's integers (U(1), packed for products of U(1)s, or Z_n); the blocks live
where the run is placed (NumPy or CuPy arrays behind tenferro tensors).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

import tenferro as tf

from ..tools.device import host_tensor, stored_array
from ._symmetric import SymmetricTensor
from ._symmetry import Leg, Symmetry

__all__ = ["SiteMatrices", "Pieces", "PhysicalStates", "blocks_filled", "bond_sectors"]

Piece = tuple[tuple[int, int], Any]  # ((q_l, s), A[(q_l, s)])

MAX_BLOCK_PLANS = 4096
"""The block lists of :meth:`SiteMatrices.from_rows` and :meth:`SiteMatrices.from_cols` a layout
keeps; more are dropped all at once."""


def bond_sectors(leg: Leg) -> dict[int, int]:
    """A bond's charge -> dimension map, from its leg."""
    return {int(q): d for q, d in leg.sectors.items()}


class Pieces:
    """Stacked pieces of a fused index per charge of a cut (one side of it): ``groups[m] =
    [(key, offset, size)]``, ``size[m]`` and ``where[key] = (m, offset, size)``, in a fixed
    order. :meth:`rows` and :meth:`cols` are the two sides a site with its outer bond makes."""

    __slots__ = ("groups", "size", "where")

    def __init__(self) -> None:
        self.groups: dict[int, list[tuple[Any, int, int]]] = {}
        self.size: dict[int, int] = {}
        self.where: dict[Any, tuple[int, int, int]] = {}

    def add(self, m: int, key: Any, n: int) -> None:
        off = self.size.get(m, 0)
        self.groups.setdefault(m, []).append((key, off, n))
        self.size[m] = off + n
        self.where[key] = (m, off, n)

    @classmethod
    def rows(cls, left: dict[int, int], charges: Sequence[int], norm: Callable[[int], int]) -> Pieces:
        """The rows ``(q_l, s)`` of a site (left bond ``left``, basis charges ``charges``) grouped by
        ``m = q_l + q_s``: per left charge, the states in basis order (a block's states consecutive,
        as :meth:`SiteMatrices.from_rows` reads them)."""
        p = cls()
        for ql, dl in left.items():
            for s, qs in enumerate(charges):
                p.add(norm(ql + qs), (ql, s), dl)
        return p

    @classmethod
    def cols(cls, charges: Sequence[int], right: dict[int, int], norm: Callable[[int], int]) -> Pieces:
        """The columns ``(s, q_r)`` of a site grouped by ``m = q_r - q_s`` (states in basis order)."""
        p = cls()
        for s, qs in enumerate(charges):
            for qr, dr in right.items():
                p.add(norm(qr - qs), (s, qr), dr)
        return p


class PhysicalStates:
    """Per basis state of a physical leg: its charge and position in its sector; per sector,
    its dimension and first state."""

    __slots__ = ("where", "dims", "first", "charges")

    def __init__(self, leg: Leg) -> None:
        self.where = [(q, k) for q, d in leg.sectors.items() for k in range(d)]
        self.dims = dict(leg.sectors)
        self.first = {q: s for s, (q, k) in enumerate(self.where) if k == 0}
        self.charges = [q for q, _ in self.where]


def blocks_filled(side: str, pieces: Iterable[tuple[Any, int, int]], states: PhysicalStates) -> list[tuple]:
    """The blocks that the pieces ``[(key, offset, n)]`` of one charge of a cut's ``side``
    (``"rows"``: keys ``(q_l, s)``; ``"cols"``: ``(s, q_r)``) fill: per block its outer bond
    charge, the physical sector, the first piece's offset, the sector's dimension and the bond's
    (``states``: the physical leg's)."""
    blocks = []
    for key, off, n in pieces:
        q, s = key if side == "rows" else key[::-1]
        qs, k = states.where[s]
        if k == 0:
            blocks.append((q, qs, off, states.dims[qs], n))
    return blocks


class SiteMatrices:
    """Reads and writes symmetric sites of the group ``symmetry`` (charges reduced modulo
    ``modulus``; 0 for U(1)) as matrices per basis state, blocks of ``dtype`` made by ``xp``
    (NumPy or CuPy) on ``placement``."""

    def __init__(self, symmetry: Symmetry, modulus: int, dtype: Any, xp: Any = np, placement: Any = None):
        self.symmetry, self.modulus, self.xp = symmetry, modulus, xp
        self.placement = tf.CPU if placement is None else placement
        self._legs: dict[tuple, Leg] = {}
        self._physical: dict[int, tuple[Leg, PhysicalStates]] = {}
        self._blocks_made: dict[tuple, tuple] = {}  # (pieces, sector, leg, side) -> the blocks they fill
        self.set_dtype(dtype)

    def set_dtype(self, dtype: Any) -> None:
        self.dtype = np.dtype(dtype)
        self.tf_dtype = tf.dtype(self.dtype.name)

    def physical(self, leg: Leg) -> PhysicalStates:
        """The positions of the basis states of the physical ``leg`` (cached per leg)."""
        held = self._physical.get(id(leg))
        if held is None or held[0] is not leg:
            held = self._physical[id(leg)] = (leg, PhysicalStates(leg))
        return held[1]

    def leg(self, bond: dict[int, int], dual: bool) -> Leg:
        """The leg of a bond's charge -> dimension map (cached: bonds recur every sweep)."""
        key = (tuple(bond.items()), dual)
        leg = self._legs.get(key)
        if leg is None:
            leg = self._legs[key] = Leg(self.symmetry, bond, dual=dual)
        return leg

    def tensor(self, blocks: dict[tuple, Any], legs: tuple[Leg, ...]) -> SymmetricTensor:
        """A site from column-major ``blocks`` made here (unchecked: every key conserves charge 0
        and every block has its sectors' shape by construction)."""
        where = self.placement
        return SymmetricTensor._make(
            {k: tf.asarray(b, placement=where) for k, b in blocks.items()}, legs, self.symmetry.identity, self.tf_dtype
        )

    def build(self, pieces: Iterable[Piece], left: dict[int, int], phys: Leg, right: dict[int, int]) -> SymmetricTensor:
        """A site from the matrices ``((q_l, s), A)`` of ``pieces`` on the bonds ``left`` and
        ``right``; the states a block's pieces do not name are zero."""
        grid: dict[tuple, Any] = {}
        p, mod = self.physical(phys), self.modulus
        where, dims = p.where, p.dims
        for (ql, s), mat in pieces:
            qs, k = where[s]
            key = (ql, qs, (ql + qs) % mod if mod else ql + qs)
            blk = grid.get(key)
            if blk is None:
                blk = grid[key] = self.xp.zeros((left[ql], dims[qs], right[key[2]]), dtype=self.dtype, order="F")
            blk[:, k, :] = mat
        return self.tensor(grid, (self.leg(left, False), phys, self.leg(right, True)))

    def from_rows(
        self, mats: dict[int, Any], groups: dict[int, list], left: dict[int, int], phys: Leg, right: dict[int, int]
    ) -> SymmetricTensor:
        """A site from the left factors of a cut: ``mats[m]`` has the rows ``groups[m] = [((q_l,
        s), offset, dim q_l)]`` (a site's states in basis order, so the rows of one block's states
        are consecutive) and the columns of bond charge ``m``; one copy per block."""
        out, asf = {}, self.xp.asfortranarray
        for m, mat in mats.items():
            for ql, qs, off, ds, n in self._blocks_of("rows", groups, m, phys):
                out[(ql, qs, m)] = asf(mat[off : off + ds * n].reshape(ds, n, -1).transpose(1, 0, 2))
        return self.tensor(out, (self.leg(left, False), phys, self.leg(right, True)))

    def from_cols(
        self, mats: dict[int, Any], groups: dict[int, list], left: dict[int, int], phys: Leg, right: dict[int, int]
    ) -> SymmetricTensor:
        """A site from the right factors of a cut: ``mats[m]`` has the rows of bond charge ``m``
        and the columns ``groups[m] = [((s, q_r), offset, dim q_r)]``; one copy per block."""
        out, asf = {}, self.xp.asfortranarray
        for m, mat in mats.items():
            for qr, qs, off, ds, n in self._blocks_of("cols", groups, m, phys):
                out[(m, qs, qr)] = asf(mat[:, off : off + ds * n].reshape(mat.shape[0], ds, n))
        return self.tensor(out, (self.leg(left, False), phys, self.leg(right, True)))

    def _blocks_of(self, side: str, groups: dict[int, list], m: int, phys: Leg) -> list[tuple]:
        """:func:`blocks_filled` by the pieces ``groups[m]``, made once per (pieces, sector, leg):
        the pieces are shared per structure, so a recurring split finds them."""
        key = (id(groups), m, id(phys), side)
        held = self._blocks_made.get(key)
        if held is not None and held[0] is groups and held[1] is phys:
            return held[2]
        blocks = blocks_filled(side, groups.get(m, ()), self.physical(phys))
        if len(self._blocks_made) >= MAX_BLOCK_PLANS:
            self._blocks_made.clear()
        self._blocks_made[key] = (groups, phys, blocks)
        return blocks

    def host(self, t: SymmetricTensor) -> SymmetricTensor:
        """``t`` with its blocks copied to the host."""
        return SymmetricTensor._make(
            {k: host_tensor(stored_array(b)) for k, b in t.blocks.items()}, t.legs, t.charge, t.dtype
        )

    def matrices(self, t: SymmetricTensor) -> Iterator[Piece]:
        """Every stored ``((q_l, s), A[(q_l, s)])`` of the site ``t``, as views of its blocks."""
        first = self.physical(t.legs[1]).first
        for (ql, qs, _), blk in t.blocks.items():
            arr = stored_array(blk)
            for k in range(arr.shape[1]):
                yield (ql, first[qs] + k), arr[:, k, :]

    def map_blocks(self, t: SymmetricTensor, fn: Callable[[Any], Any]) -> SymmetricTensor:
        """``t`` with ``fn`` applied to every block's array (``fn`` keeps shapes and layout)."""
        return self.tensor({k: fn(stored_array(b)) for k, b in t.blocks.items()}, t.legs)

    def norm2(self, t: SymmetricTensor) -> float:
        """The squared norm of ``t``."""
        return sum(float(self.xp.vdot(a, a).real) for a in map(stored_array, t.leaves))

    def nbytes(self, t: SymmetricTensor) -> int:
        return sum(stored_array(b).nbytes for b in t.leaves)
