"""Linear algebra over structured and dense matrices (``tensor4all.linalg``).

Each function has the signature of its ``tenferro.linalg`` namesake, runs under the one BLAS
thread policy (:mod:`tensor4all.tools.threads`; the size is the largest block) and goes through
the structured dispatcher: block-diagonal and diagonal operands use block-wise or
elementwise kernels with structured results (see ``_linalg_kernels``); dense operands
go straight to tenferro.

>>> import numpy as np, tenferro as tf
>>> from tensor4all.structured import BlockDiagonal
>>> a = BlockDiagonal([tf.asarray(np.eye(2) * 2.0), tf.asarray(np.eye(3))])
>>> float(det(a))
4.0
"""

from __future__ import annotations

from typing import Any

from ..tools.threads import thread_policy
from ._dispatch import dispatch

__all__ = ["svd", "truncated_svd", "qr", "eigh", "inv", "solve", "det", "slogdet", "trace", "norm", "expm"]


def largest_block(*args: Any, **kwargs: Any) -> int:
    """The size of the call for the thread policy: the largest dimension of the matrices it
    factorizes (of each block of a structured operand, of a dense operand itself)."""
    out = 0
    for a in (*args, *kwargs.values()):
        leaves = getattr(a, "leaves", None)
        for b in leaves if isinstance(leaves, tuple) else (a,):
            shape = getattr(b, "shape", None)
            if shape is not None and len(shape):
                out = max(out, *(int(n) for n in shape))
    return out


@thread_policy(bond=largest_block)
def svd(a: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """``(U, s, Vh)``; block-diagonal ``U``/``Vh`` for a BlockDiagonal (``s`` grouped per block):
    the thin SVD of each block, so ``K = sum_k min(m_k, n_k)`` values and columns, which is
    ``min(M, N)`` for square blocks and fewer for some non-square ones (the values dense has
    beyond them are exact zeros; ``U @ diag(s) @ Vh`` is the matrix)."""
    return dispatch("svd", a, full_matrices=full_matrices, compute_uv=compute_uv)


@thread_policy(bond=largest_block)
def truncated_svd(
    a: Any, max_rank: int | None = None, cutoff: float | None = None, *, rtol: float | None = None
) -> Any:
    """``(U, s, Vh)`` keeping at most ``max_rank`` of the largest singular values and dropping the
    smallest while their discarded weight ``sum(dropped s^2) / sum(s^2)`` stays at most ``cutoff``
    (the project's one meaning of ``cutoff``, as ``MPS.compress`` and ``dmrg``); ``rtol`` keeps only
    values above ``rtol * s_max``. For a SymmetricTensor one truncation across all sectors (``s`` a
    SectorDiagonal)."""
    return dispatch("truncated_svd", a, max_rank=max_rank, cutoff=cutoff, rtol=rtol)


@thread_policy(bond=largest_block)
def qr(a: Any, mode: str = "reduced") -> Any:
    """``(Q, R)``; block-diagonal factors for a BlockDiagonal: the reduced QR of each block, so
    ``Q`` is ``M x K`` and ``R`` is ``K x N`` with ``K = sum_k min(m_k, n_k)`` (as :func:`svd`)."""
    return dispatch("qr", a, mode=mode)


@thread_policy(bond=largest_block)
def eigh(a: Any) -> Any:
    """``(w, V)`` of a Hermitian matrix; ``V`` block-diagonal for a BlockDiagonal."""
    return dispatch("eigh", a)


@thread_policy(bond=largest_block)
def inv(a: Any) -> Any:
    """The inverse: block-diagonal or diagonal for such an ``a``; a ``SymmetricTensor`` goes
    through the dispatcher's counted dense fallback (a dense result)."""
    return dispatch("inv", a)


@thread_policy(bond=largest_block)
def solve(a: Any, b: Any) -> Any:
    """``x`` with ``a @ x == b``."""
    return dispatch("solve", a, b)


@thread_policy(bond=largest_block)
def det(a: Any) -> Any:
    """The determinant."""
    return dispatch("det", a)


@thread_policy(bond=largest_block)
def slogdet(a: Any) -> Any:
    """``(sign, log|det|)``."""
    return dispatch("slogdet", a)


@thread_policy(bond=largest_block)
def trace(a: Any) -> Any:
    """The trace (sum of the main diagonal)."""
    return dispatch("trace", a)


@thread_policy(bond=largest_block)
def norm(a: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """The norm (Frobenius by default)."""
    return dispatch("norm", a, ord=ord, axis=axis, keepdims=keepdims)


@thread_policy(bond=largest_block)
def expm(a: Any) -> Any:
    """The matrix exponential: block-diagonal (square blocks) or diagonal for such an ``a``; a
    ``SymmetricTensor`` goes through the dispatcher's counted dense fallback (a dense result)."""
    return dispatch("expm", a)
