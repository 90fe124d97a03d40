"""``BlockDiagonal``: dense 2-d blocks (not necessarily square) on the diagonal.

>>> import tenferro as tf
>>> b = BlockDiagonal([tf.ones((1, 2)), tf.ones((2, 1))])
>>> b.shape, b.tiling
(Shape(3, 3), TiledShape([1, 2], [2, 1]))
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import tenferro as tf
import tidu
from tenferro import Shape

from ._base import StructuredTensor
from ._diagonal import as_leaf
from ._errors import MixedPlacementError, StructuredShapeError, StructuredTypeError
from ._shapes import JaggedShape, TiledShape

__all__ = ["BlockDiagonal"]


class BlockDiagonal(StructuredTensor):
    """A block-diagonal matrix stored as its blocks (dense 2-d leaves, ``.blocks``).

    Block ``k`` (``m_k x n_k``) sits at rows ``r_k = m_0 + ... + m_{k-1}`` and columns
    ``c_k = n_0 + ... + n_{k-1}``; everything else is zero. Blocks may be empty or
    non-square; all share one dtype and placement. A tidu pytree node over the blocks.
    """

    __slots__ = ("_blocks",)
    _densify_order = 1  # densified before diagonals when no kernel fits

    def __init__(self, blocks: Sequence[Any]) -> None:
        if isinstance(blocks, (str, bytes)) or not isinstance(blocks, Sequence) or not blocks:
            raise StructuredTypeError(f"BlockDiagonal: expected a non-empty list of 2-d blocks, got {blocks!r}")
        bl = tuple(as_leaf(b) for b in blocks)
        for k, b in enumerate(bl):
            if len(b.shape) != 2:
                raise StructuredShapeError(f"BlockDiagonal: block {k} must be 2-d, got shape {tuple(b.shape)}")
        dts = [b.dtype for b in bl]
        if len(set(map(str, dts))) != 1:
            raise StructuredTypeError(f"BlockDiagonal: blocks must share one dtype, got {[str(d) for d in dts]}")
        pls = [b.placement for b in bl]
        if len(set(map(str, pls))) != 1:
            raise MixedPlacementError(f"BlockDiagonal: blocks live on different placements {[str(p) for p in pls]}")
        self._blocks = bl

    @classmethod
    def _from_leaves(cls, aux: Any, leaves: Any) -> BlockDiagonal:
        """Unchecked constructor (pytree unflatten: leaves may be None or symbolic)."""
        out = object.__new__(cls)
        out._blocks = tuple(leaves)
        return out

    @property
    def blocks(self) -> tuple[Any, ...]:
        """The dense blocks, in order."""
        return self._blocks

    @property
    def leaves(self) -> tuple[Any, ...]:
        return self._blocks

    @property
    def row_tiling(self) -> tuple[int, ...]:
        """Rows of each block."""
        return tuple(b.shape[0] for b in self._blocks)

    @property
    def col_tiling(self) -> tuple[int, ...]:
        """Columns of each block."""
        return tuple(b.shape[1] for b in self._blocks)

    @property
    def row_offsets(self) -> tuple[int, ...]:
        """First row of each block, then the number of rows."""
        return (0, *itertools.accumulate(self.row_tiling))

    @property
    def col_offsets(self) -> tuple[int, ...]:
        """First column of each block, then the number of columns."""
        return (0, *itertools.accumulate(self.col_tiling))

    @property
    def tiling(self) -> TiledShape:
        """The tile grid (row and column tilings); only the diagonal tiles are stored."""
        return TiledShape(self.row_tiling, self.col_tiling)

    @property
    def block_shapes(self) -> JaggedShape:
        """The shapes of the stored blocks as a jagged rank-3 shape."""
        return JaggedShape([Shape(tuple(b.shape)) for b in self._blocks])

    @property
    def is_square_blocks(self) -> bool:
        return all(m == n for m, n in zip(self.row_tiling, self.col_tiling))

    @property
    def shape(self) -> Shape:
        return Shape((sum(self.row_tiling), sum(self.col_tiling)))

    def to_dense(self) -> Any:
        n = self.shape[1]
        offs = self.col_offsets
        rows = [tf.pad(b, ((0, 0), (offs[k], n - offs[k + 1]))) for k, b in enumerate(self._blocks)]
        return rows[0] if len(rows) == 1 else tf.concatenate(rows, axis=0)

    def _rebuild(self, leaves: Any) -> BlockDiagonal:
        return BlockDiagonal(list(leaves))

    def _describe(self) -> str:
        return f"BlockDiagonal(tiling={self.tiling!r}, {self.dtype})"

    def _leaf_name(self, k: int) -> str:
        return f"block {k}"

    def _repr_fields(self) -> list[tuple[str, Any]]:
        return [("tiling", self.tiling), ("dtype", self.dtype)]


tidu.register_pytree_node(BlockDiagonal, lambda b: (b._blocks, None), BlockDiagonal._from_leaves)
