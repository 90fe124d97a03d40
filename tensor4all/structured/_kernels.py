"""Structured kernels for arithmetic, ``matmul``, ``transpose``, ``sum`` and ``trace``.

Each kernel takes the arguments of the tenferro function it stands in for and works
on the dense leaves with tenferro operations (so every kernel is differentiable to
any order); ``NotImplemented`` means "not covered, fall back". The table that says
which kernel serves which ``(op, kinds)`` is in ``_tables.py``.
"""

from __future__ import annotations

from typing import Any, Callable

import tenferro as tf

from ._blockdiag import BlockDiagonal
from ._diagonal import DiagonalTensor
from ._dispatch import structure_name
from ._errors import StructuredShapeError, TilingError

__all__ = [
    "leafwise",
    "leafwise_scalar",
    "scalar_leafwise",
    "diag_diag",
    "block_block",
    "diag_matmul_dense",
    "dense_matmul_diag",
    "block_matmul_dense",
    "dense_matmul_block",
    "block_matmul_block",
    "diag_matmul_block",
    "block_matmul_diag",
    "diag_hadamard_dense",
    "dense_hadamard_diag",
    "block_hadamard_dense",
    "dense_hadamard_block",
    "block_transpose",
    "block_sum",
    "block_trace",
    "check_same_shape",
    "check_tilings",
    "row_slices",
    "col_slices",
]


# --- helpers -------------------------------------------------------------------------------
def check_same_shape(op: str, a: Any, b: Any) -> None:
    """Equal logical shapes, else :class:`StructuredShapeError` naming both operands."""
    if tuple(a.shape) != tuple(b.shape):
        raise StructuredShapeError(
            f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} differ ({structure_name(a)} and {structure_name(b)})"
        )


def check_tilings(op: str, a_tiles: tuple, b_tiles: tuple, a: Any, b: Any, what: str) -> None:
    """Equal tilings (``what`` says which), else :class:`TilingError`; unequal totals are a
    :class:`StructuredShapeError`."""
    if sum(a_tiles) != sum(b_tiles):
        raise StructuredShapeError(
            f"{op}: {what}: extents {sum(a_tiles)} and {sum(b_tiles)} differ "
            f"({structure_name(a)} and {structure_name(b)})"
        )
    if tuple(a_tiles) != tuple(b_tiles):
        raise TilingError(
            f"{op}: {what}: tilings {list(a_tiles)} and {list(b_tiles)} are not compatible "
            f"({structure_name(a)} and {structure_name(b)}); densify one with to_dense() "
            "to combine them anyway"
        )


def row_slices(x: Any, offsets: tuple) -> list[Any]:
    """``x`` cut along its first mode at ``offsets``."""
    return [x[offsets[k] : offsets[k + 1]] for k in range(len(offsets) - 1)]


def col_slices(x: Any, offsets: tuple) -> list[Any]:
    """``x`` (2-d) cut along its second mode at ``offsets``."""
    return [x[:, offsets[k] : offsets[k + 1]] for k in range(len(offsets) - 1)]


def _cat(parts: list[Any], axis: int) -> Any:
    return parts[0] if len(parts) == 1 else tf.concatenate(parts, axis=axis)


# --- leafwise (unary, with a scalar, and two of one structure) --------------------------------
def leafwise(fn: Callable[[Any], Any]) -> Callable[..., Any]:
    """Kernel applying ``fn`` to every leaf: negative, conj, real, imag."""

    def kernel(x: Any) -> Any:
        return x.map_leaves(fn)

    kernel.__name__ = f"leafwise_{getattr(fn, '__name__', 'fn')}"
    return kernel


def leafwise_scalar(fn: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """Kernel for ``fn(structured, scalar)`` (``x * 2``, ``x / s``)."""

    def kernel(x: Any, s: Any) -> Any:
        return x.map_leaves(lambda leaf: fn(leaf, s))

    kernel.__name__ = f"leafwise_scalar_{getattr(fn, '__name__', 'fn')}"
    return kernel


def scalar_leafwise(fn: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """Kernel for ``fn(scalar, structured)`` (``2 * x``)."""

    def kernel(s: Any, x: Any) -> Any:
        return x.map_leaves(lambda leaf: fn(s, leaf))

    kernel.__name__ = f"scalar_leafwise_{getattr(fn, '__name__', 'fn')}"
    return kernel


def diag_diag(fn: Callable[[Any, Any], Any], name: str) -> Callable[..., Any]:
    """Kernel for ``fn`` on two diagonals of one shape: the diagonal of ``fn``."""

    def kernel(a: DiagonalTensor, b: DiagonalTensor) -> Any:
        check_same_shape(name, a, b)
        return DiagonalTensor(fn(a.diag, b.diag), a.ndim)

    kernel.__name__ = f"diag_{name}_diag"
    return kernel


def block_block(fn: Callable[[Any, Any], Any], name: str) -> Callable[..., Any]:
    """Kernel for ``fn`` on two block-diagonals of one tiling: block by block."""

    def kernel(a: BlockDiagonal, b: BlockDiagonal) -> Any:
        check_tilings(name, a.row_tiling, b.row_tiling, a, b, "row tilings")
        check_tilings(name, a.col_tiling, b.col_tiling, a, b, "column tilings")
        return BlockDiagonal([fn(x, y) for x, y in zip(a.blocks, b.blocks)])

    kernel.__name__ = f"block_{name}_block"
    return kernel


# --- matmul ---------------------------------------------------------------------------------
def _matmul_check(a: Any, b: Any) -> None:
    ka = a.shape[-1]
    kb = b.shape[0] if len(b.shape) == 1 else b.shape[-2]
    if ka != kb:
        raise StructuredShapeError(
            f"matmul: inner extents {ka} and {kb} differ ({structure_name(a)} @ {structure_name(b)})"
        )


def diag_matmul_dense(a: DiagonalTensor, x: Any) -> Any:
    """``diag(d) @ X`` as ``einsum("i,ij->ij")`` (no n x n array)."""
    if a.ndim != 2 or len(x.shape) > 2:
        return NotImplemented
    _matmul_check(a, x)
    return tf.einsum("i,ij->ij" if len(x.shape) == 2 else "i,i->i", a.diag, x)


def dense_matmul_diag(x: Any, a: DiagonalTensor) -> Any:
    """``X @ diag(d)`` as ``einsum("ij,j->ij")``."""
    if a.ndim != 2 or len(x.shape) > 2:
        return NotImplemented
    _matmul_check(x, a)
    return tf.einsum("ij,j->ij" if len(x.shape) == 2 else "j,j->j", x, a.diag)


def block_matmul_dense(a: BlockDiagonal, x: Any) -> Any:
    """Block ``k`` times the rows of ``X`` under its columns; results stacked by rows."""
    if len(x.shape) > 2:
        return NotImplemented
    _matmul_check(a, x)
    parts = [tf.matmul(b, xk) for b, xk in zip(a.blocks, row_slices(x, a.col_offsets))]
    return _cat(parts, 0)


def dense_matmul_block(x: Any, a: BlockDiagonal) -> Any:
    """The columns of ``X`` over block ``k``'s rows times block ``k``; stacked by columns."""
    if len(x.shape) > 2:
        return NotImplemented
    _matmul_check(x, a)
    if len(x.shape) == 1:
        return _cat([tf.matmul(xk, b) for b, xk in zip(a.blocks, row_slices(x, a.row_offsets))], 0)
    return _cat([tf.matmul(xk, b) for b, xk in zip(a.blocks, col_slices(x, a.row_offsets))], 1)


def block_matmul_block(a: BlockDiagonal, b: BlockDiagonal) -> Any:
    """Block-diagonal times block-diagonal with matching inner tilings stays block-diagonal."""
    check_tilings("matmul", a.col_tiling, b.row_tiling, a, b, "inner tilings")
    return BlockDiagonal([tf.matmul(x, y) for x, y in zip(a.blocks, b.blocks)])


def _scaled_blocks(d: DiagonalTensor, b: BlockDiagonal, rows: bool) -> Any:
    """``D @ B`` (``rows``: every block's rows scaled) or ``B @ D`` (its columns)."""
    if d.ndim != 2:
        return NotImplemented
    _matmul_check(*((d, b) if rows else (b, d)))
    ds = row_slices(d.diag, b.row_offsets if rows else b.col_offsets)
    spec = "i,ij->ij" if rows else "j,ij->ij"
    return BlockDiagonal([tf.einsum(spec, dk, bk) for dk, bk in zip(ds, b.blocks)])


def diag_matmul_block(a: DiagonalTensor, b: BlockDiagonal) -> Any:
    """Row scaling of every block."""
    return _scaled_blocks(a, b, rows=True)


def block_matmul_diag(b: BlockDiagonal, a: DiagonalTensor) -> Any:
    """Column scaling of every block."""
    return _scaled_blocks(a, b, rows=False)


# --- Hadamard products with a dense operand -------------------------------------------------
def diag_hadamard_dense(a: DiagonalTensor, x: Any) -> Any:
    """``D * X`` (elementwise) keeps only the diagonal of ``X``."""
    if tuple(x.shape) != tuple(a.shape):
        return NotImplemented  # broadcasting: let the dense path decide
    return DiagonalTensor(tf.multiply(a.diag, tf.einsum("i" * a.ndim + "->i", x)), a.ndim)


def dense_hadamard_diag(x: Any, a: DiagonalTensor) -> Any:
    if tuple(x.shape) != tuple(a.shape):
        return NotImplemented
    return DiagonalTensor(tf.multiply(tf.einsum("i" * a.ndim + "->i", x), a.diag), a.ndim)


def block_hadamard_dense(a: BlockDiagonal, x: Any) -> Any:
    """``B * X`` keeps only the diagonal tiles of ``X``."""
    if tuple(x.shape) != tuple(a.shape):
        return NotImplemented
    ro, co = a.row_offsets, a.col_offsets
    return BlockDiagonal([tf.multiply(b, x[ro[k] : ro[k + 1], co[k] : co[k + 1]]) for k, b in enumerate(a.blocks)])


def dense_hadamard_block(x: Any, a: BlockDiagonal) -> Any:
    if tuple(x.shape) != tuple(a.shape):
        return NotImplemented
    ro, co = a.row_offsets, a.col_offsets
    return BlockDiagonal([tf.multiply(x[ro[k] : ro[k + 1], co[k] : co[k + 1]], b) for k, b in enumerate(a.blocks)])


# --- transpose, sum, trace ----------------------------------------------------------------------
def block_transpose(a: BlockDiagonal, axes: Any = None) -> Any:
    if axes is not None:
        try:
            order = tuple(int(x) % 2 for x in axes) if len(axes) == 2 else None
        except (TypeError, ValueError):
            return NotImplemented  # the dense path names the bad axes
        if order == (0, 1):
            return a
        if order != (1, 0):
            return NotImplemented
    return BlockDiagonal([tf.transpose(b) for b in a.blocks])


def block_sum(a: BlockDiagonal, axis: Any = None, keepdims: bool = False) -> Any:
    if keepdims:
        return NotImplemented
    if axis is None or (isinstance(axis, (tuple, list)) and sorted(x % 2 for x in axis) == [0, 1]):
        parts = [tf.sum(b) for b in a.blocks]
        return parts[0] if len(parts) == 1 else tf.sum(tf.stack(parts))
    ax = axis[0] if isinstance(axis, (tuple, list)) and len(axis) == 1 else axis
    if ax in (0, -2):
        return _cat([tf.sum(b, axis=0) for b in a.blocks], 0)
    if ax in (1, -1):
        return _cat([tf.sum(b, axis=1) for b in a.blocks], 0)
    return NotImplemented


def block_trace(a: BlockDiagonal, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Sum of the blocks' traces (square blocks; the main diagonal crosses other tiles
    when blocks are not square, which falls back)."""
    if offset != 0 or not a.is_square_blocks:
        return NotImplemented
    parts = [tf.trace(b) for b in a.blocks if b.shape[0]]
    if not parts:
        return tf.zeros((), dtype=a.dtype, placement=a.placement)
    return parts[0] if len(parts) == 1 else tf.sum(tf.stack(parts))
