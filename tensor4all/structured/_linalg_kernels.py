"""Structured kernels of the linear-algebra functions (svd, qr, eigh, inv, solve, det,
slogdet, norm, expm) for diagonal and block-diagonal operands.

Results keep the structure where the mathematics allows: the factors of a
block-diagonal matrix are block-diagonal (block by block LAPACK), those of a diagonal
are diagonal. Spectra (singular values, eigenvalues) come back as dense 1-d tensors,
as from tenferro, grouped block by block (sorted within each block, not globally) --
``U @ DiagonalTensor(s) @ Vh`` and ``einsum("ik,k,kj->ij", U, s, Vh)`` rebuild the
matrix. The factorizations of a block-diagonal matrix are thin per block: ``K = sum_k
min(m_k, n_k)`` singular values and columns (``min(M, N)`` for square blocks). Everything is
written with tenferro operations on the leaves, so derivatives of every order come from
tenferro's rules. A diagonal that is inverted (``inv``, ``solve``, the derivative of
``slogdet``) is checked for zeros where its values are (:mod:`._value_checks`: every example
under ``tidu.vmap``, the compiled program's run under ``tenferro.jit``).
"""

from __future__ import annotations

from typing import Any


import tenferro as tf
import tidu

from ._blockdiag import BlockDiagonal
from ._diagonal import DiagonalTensor
from ._dispatch import structure_name
from ._errors import SquareBlockError, StructuredShapeError
from ._kernels import check_tilings, row_slices
from ._value_checks import checked, singular_diagonal

__all__ = [
    "diag_svd",
    "block_svd",
    "diag_qr",
    "block_qr",
    "diag_eigh",
    "block_eigh",
    "diag_inv",
    "block_inv",
    "diag_solve_dense",
    "block_solve_dense",
    "diag_solve_diag",
    "block_solve_block",
    "diag_det",
    "block_det",
    "diag_slogdet",
    "block_slogdet",
    "diag_norm",
    "block_norm",
    "diag_expm",
    "block_expm",
]


def _square_blocks(op: str, a: BlockDiagonal) -> bool:
    """Whether every block of ``a`` is square (the kernel works block by block). A square matrix
    with non-square blocks is False: the kernel returns ``NotImplemented`` and the call falls back
    to the dense matrix, whose answer it is (singular: ``det`` 0, ``slogdet`` ``(0, -inf)``,
    ``inv`` tenferro's ``SingularMatrixError``; ``expm`` a finite matrix). A matrix that is not
    square raises :class:`SquareBlockError`."""
    if a.is_square_blocks:
        return True
    if a.shape[0] == a.shape[1]:
        return False
    bad = [k for k, (m, n) in enumerate(zip(a.row_tiling, a.col_tiling)) if m != n]
    raise SquareBlockError(
        f"{op}: needs a square matrix with square blocks; {structure_name(a)} is not square, and block(s) "
        f"{bad} are not (shapes {[tuple(a.blocks[k].shape) for k in bad]})"
    )


def _cat(parts: list[Any]) -> Any:
    return parts[0] if len(parts) == 1 else tf.concatenate(parts, axis=0)


def _product(xs: list[Any]) -> Any:
    out = xs[0]
    for x in xs[1:]:
        out = tf.multiply(out, x)
    return out


def _phase(d: Any, at_zero: float = 1.0) -> Any:
    """``d / |d|``, and ``at_zero`` where ``d == 0`` (1 keeps an SVD's U unitary; 0 is
    the sign of a determinant with a zero factor)."""
    mag = tf.abs(d)
    zero = tf.equal(mag, 0)
    safe = tf.where(zero, tf.ones_like(mag), mag)
    return tf.where(zero, tf.full_like(d, at_zero), tf.divide(d, safe))


_SINGULAR = {
    op: singular_diagonal(op + ": the matrix a of shape ({n}, {n}){where} is singular (a zero on its diagonal)")
    for op in ("inv", "solve")
}


def _nonsingular(op: str, a: DiagonalTensor) -> Any:
    """The diagonal of ``a``, refused with the typed error the dense path raises where it has a
    zero (``a`` is singular) instead of dividing by zero: checked where the values are (every
    example under ``tidu.vmap``, the compiled program's run under ``tenferro.jit``)."""
    return checked(a.diag, _SINGULAR[op])


# --- decompositions ------------------------------------------------------------------------
def diag_svd(a: DiagonalTensor, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """``diag(d) = diag(d/|d|) diag(|d|) I`` (unsorted)."""
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    s = tf.abs(a.diag)
    if not compute_uv:
        return s
    return DiagonalTensor(_phase(a.diag)), s, DiagonalTensor(tf.ones_like(a.diag))


def block_svd(a: BlockDiagonal, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """The thin SVD of every block (what block-sparse libraries return): ``K = sum_k min(m_k, n_k)``
    values, ``U`` ``M x K`` and ``Vh`` ``K x N`` block diagonal. For non-square blocks ``K`` can be
    less than dense's ``min(M, N)``; the values dense has beyond these are exact zeros, whose
    singular vectors would pair rows of one block with columns of another (no block-diagonal
    factor holds them)."""
    if full_matrices:
        return NotImplemented
    if not compute_uv:
        return _cat([tf.linalg.svd(b, compute_uv=False) for b in a.blocks])
    parts = [tf.linalg.svd(b) for b in a.blocks]
    return (BlockDiagonal([p[0] for p in parts]), _cat([p[1] for p in parts]), BlockDiagonal([p[2] for p in parts]))


def diag_qr(a: DiagonalTensor, mode: str = "reduced") -> Any:
    """A diagonal matrix is its own R, with Q the identity."""
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    if mode not in ("reduced", "complete"):
        return NotImplemented
    return DiagonalTensor(tf.ones_like(a.diag)), a


def block_qr(a: BlockDiagonal, mode: str = "reduced") -> Any:
    """The reduced QR of every block: ``Q`` ``M x K``, ``R`` ``K x N``, ``K = sum_k min(m_k, n_k)``
    (as :func:`block_svd`)."""
    if mode != "reduced":
        return NotImplemented
    parts = [tf.linalg.qr(b) for b in a.blocks]
    return BlockDiagonal([p[0] for p in parts]), BlockDiagonal([p[1] for p in parts])


def diag_eigh(a: DiagonalTensor) -> Any:
    """Eigenvalues ``real(d)`` (unsorted), eigenvectors the identity."""
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    return tf.real(a.diag), DiagonalTensor(tf.ones_like(a.diag))


def block_eigh(a: BlockDiagonal) -> Any:
    if not _square_blocks("eigh", a):
        return NotImplemented
    parts = [tf.linalg.eigh(b) for b in a.blocks]
    return _cat([p[0] for p in parts]), BlockDiagonal([p[1] for p in parts])


# --- inverse, solve, determinants -------------------------------------------------------------
def diag_inv(a: DiagonalTensor) -> Any:
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    return DiagonalTensor(tf.divide(1, _nonsingular("inv", a)))


def block_inv(a: BlockDiagonal) -> Any:
    if not _square_blocks("inv", a):
        return NotImplemented
    return BlockDiagonal([tf.linalg.inv(b) for b in a.blocks])


def _solve_check(a: Any, b: Any) -> None:
    if len(b.shape) not in (1, 2) or b.shape[0] != a.shape[0]:
        raise StructuredShapeError(
            f"solve: right-hand side {structure_name(b)} does not fit {structure_name(a)} (needs {a.shape[0]} rows)"
        )


def diag_solve_dense(a: DiagonalTensor, b: Any) -> Any:
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    _solve_check(a, b)
    d = _nonsingular("solve", a)
    return tf.einsum("i,ij->ij" if len(b.shape) == 2 else "i,i->i", tf.divide(1, d), b)


def diag_solve_diag(a: DiagonalTensor, b: DiagonalTensor) -> Any:
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    _solve_check(a, b)
    return DiagonalTensor(tf.divide(b.diag, _nonsingular("solve", a)))


def block_solve_dense(a: BlockDiagonal, b: Any) -> Any:
    if not _square_blocks("solve", a):
        return NotImplemented
    _solve_check(a, b)
    return _cat([tf.linalg.solve(ak, bk) for ak, bk in zip(a.blocks, row_slices(b, a.row_offsets))])


def block_solve_block(a: BlockDiagonal, b: BlockDiagonal) -> Any:
    if not _square_blocks("solve", a):
        return NotImplemented
    check_tilings("solve", a.row_tiling, b.row_tiling, a, b, "row tilings")
    return BlockDiagonal([tf.linalg.solve(ak, bk) for ak, bk in zip(a.blocks, b.blocks)])


def diag_det(a: DiagonalTensor) -> Any:
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    return tf.prod(a.diag)


def block_det(a: BlockDiagonal) -> Any:
    if not _square_blocks("det", a):
        return NotImplemented
    return _product([tf.linalg.det(b) for b in a.blocks])


def diag_slogdet(a: DiagonalTensor) -> Any:
    """``(prod(d / |d|), sum(log|d|))``; at a zero on the diagonal ``(0, -inf)``, and the
    derivative there raises :class:`tenferro.linalg.SingularMatrixError`, as dense."""
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    return _slogdet_of_diagonal(a.diag)


_SINGULAR_SLOGDET = singular_diagonal(
    "slogdet: the derivative of slogdet at a singular matrix a of shape ({n}, {n}){where} is undefined (a zero "
    "on its diagonal: log|det a| = -inf there); differentiate det, whose derivatives are exact at singular matrices",
    reciprocal=True,
)


@tidu.custom_jvp
def _slogdet_of_diagonal(d: Any) -> Any:
    return tf.add(tf.prod(_phase(d, at_zero=0.0)), 0.0), tf.sum(tf.log(tf.abs(d)))  # (+0, not -0)


@_slogdet_of_diagonal.defjvp
def _slogdet_of_diagonal_jvp(primals: Any, tangents: Any) -> Any:
    """The dense rule on a diagonal: ``t = trace(A^{-1} dA) = sum(dd / d)``,
    ``d logabs = Re t``, ``d sign = sign * i Im t`` (zero for real ``d``). A zero on the
    diagonal (or one whose reciprocal overflows) is refused as the dense rule refuses a
    singular matrix, instead of the NaN that ``d log|d|`` gives at 0. Written with
    tenferro operations on the (possibly traced) primal: higher orders differentiate it."""
    (d,), (dd,) = primals, tangents
    sign, logabs = _slogdet_of_diagonal(d)
    d = checked(d, _SINGULAR_SLOGDET)  # eagerly, per example under vmap, in the program under jit
    t = tf.sum(tf.divide(dd, d))
    dlog = tf.real(t)
    if "complex" in str(d.dtype):
        dsign = tf.multiply(sign, tf.multiply(tf.imag(t), 1j))
    else:
        dsign = tidu.Zero.like(sign)
    return (sign, logabs), (dsign, dlog)


def block_slogdet(a: BlockDiagonal) -> Any:
    if not _square_blocks("slogdet", a):
        return NotImplemented
    parts = [tf.linalg.slogdet(b) for b in a.blocks]
    logabs = parts[0][1] if len(parts) == 1 else tf.sum(tf.stack([p[1] for p in parts]))
    return _product([p[0] for p in parts]), logabs


# --- norm, expm -------------------------------------------------------------------------------------
def diag_norm(a: DiagonalTensor, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """The 2-norm of all entries, that of the diagonal: ``ord=None`` for any ``ndim``, ``"fro"``
    for a matrix (for ``ndim >= 3`` tenferro's ``"fro"`` is a norm per trailing index); other
    orders and axes fall back."""
    whole = ord is None or (isinstance(ord, str) and ord == "fro" and a.ndim == 2)
    if axis is not None or keepdims or not whole:
        return NotImplemented
    return tf.linalg.norm(a.diag)


def block_norm(a: BlockDiagonal, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Frobenius norm over all blocks; other orders fall back."""
    if axis is not None or keepdims or ord not in (None, "fro"):
        return NotImplemented
    flat = [tf.reshape(b, (-1,)) for b in a.blocks]
    return tf.linalg.norm(flat[0] if len(flat) == 1 else tf.concatenate(flat, axis=0))


def diag_expm(a: DiagonalTensor) -> Any:
    if a.ndim != 2:
        return NotImplemented  # a diagonal of 3 or more legs: the counted dense fallback, as norm
    return DiagonalTensor(tf.exp(a.diag))


def block_expm(a: BlockDiagonal) -> Any:
    if not _square_blocks("expm", a):
        return NotImplemented
    return BlockDiagonal([tf.linalg.expm(b) for b in a.blocks])
