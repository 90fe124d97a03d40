"""The tables of the structured dispatcher, in one place.

* ``RULES``: reduce rules per op (tried in order; they read no data).
* ``KERNEL_TABLE``: ``(op, operand kinds) -> kernel``.
* the fallback (dense function per op) is ``_dispatch.DENSE``.

Adding a structured type means adding its rows here; adding a kernel is one row.
:func:`install` copies the tables into the dispatcher (done once by the package).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

import tenferro as tf

from . import _linalg_kernels as lk
from . import _kernels as k
from . import _rules as r
from . import _symmetric_kernels as sk
from . import _symmetric_linalg as sd
from ._blockdiag import BlockDiagonal as B
from ._diagonal import DiagonalTensor as D
from ._dispatch import KERNELS, REDUCE_RULES, Dense, Scalar
from ._einsum import block_einsum, diagonal_einsum
from ._symmetric import SymmetricTensor as S

__all__ = ["RULES", "KERNEL_TABLE", "install"]

RULES: list[tuple[str, Callable[..., Any]]] = [
    ("transpose", r.transpose_of_diagonal),
    ("conj", r.conj_of_real),
    ("real", r.real_of_real),
    ("imag", r.imag_of_real),
    ("matmul", r.diagonal_times_diagonal),
    ("sum", r.sum_of_diagonal),
    ("trace", r.trace_of_diagonal),
]


def _einsum_keys(main: type, others: tuple[type, ...]) -> list[tuple[type, ...]]:
    """Every kind set holding ``main`` and any of ``others`` (sorted by name, as the dispatcher keys einsum)."""
    subsets = itertools.chain.from_iterable(itertools.combinations(others, n) for n in range(len(others) + 1))
    return [tuple(sorted((main, *extra), key=lambda t: t.__name__)) for extra in subsets]


KERNEL_TABLE: list[tuple[str, tuple[type, ...], Callable[..., Any]]] = [
    *[("einsum", kinds, diagonal_einsum) for kinds in _einsum_keys(D, (Dense, Scalar))],
    *[("einsum", kinds, block_einsum) for kinds in _einsum_keys(B, (D, Dense, Scalar))],
    # leafwise unary ops and scalars
    *[
        (op, (T,), k.leafwise(fn))
        for T in (D, B)
        for op, fn in (("negative", tf.negative), ("conj", tf.conj), ("real", tf.real), ("imag", tf.imag))
    ],
    *[
        (op, (T, Scalar), k.leafwise_scalar(fn))
        for T in (D, B)
        for op, fn in (("multiply", tf.multiply), ("divide", tf.divide))
    ],
    *[("multiply", (Scalar, T), k.scalar_leafwise(tf.multiply)) for T in (D, B)],
    # same structure on both sides
    *[
        (op, (D, D), k.diag_diag(fn, op))
        for op, fn in (("add", tf.add), ("subtract", tf.subtract), ("multiply", tf.multiply))
    ],
    *[
        (op, (B, B), k.block_block(fn, op))
        for op, fn in (("add", tf.add), ("subtract", tf.subtract), ("multiply", tf.multiply))
    ],
    # Hadamard with dense
    ("multiply", (D, Dense), k.diag_hadamard_dense),
    ("multiply", (Dense, D), k.dense_hadamard_diag),
    ("multiply", (B, Dense), k.block_hadamard_dense),
    ("multiply", (Dense, B), k.dense_hadamard_block),
    # matmul (diagonal @ diagonal is a reduce rule)
    ("matmul", (D, Dense), k.diag_matmul_dense),
    ("matmul", (Dense, D), k.dense_matmul_diag),
    ("matmul", (B, Dense), k.block_matmul_dense),
    ("matmul", (Dense, B), k.dense_matmul_block),
    ("matmul", (B, B), k.block_matmul_block),
    ("matmul", (D, B), k.diag_matmul_block),
    ("matmul", (B, D), k.block_matmul_diag),
    # structure of block-diagonals
    ("transpose", (B,), k.block_transpose),
    ("sum", (B,), k.block_sum),
    ("trace", (B,), k.block_trace),
    # linear algebra
    ("svd", (D,), lk.diag_svd),
    ("svd", (B,), lk.block_svd),
    ("qr", (D,), lk.diag_qr),
    ("qr", (B,), lk.block_qr),
    ("eigh", (D,), lk.diag_eigh),
    ("eigh", (B,), lk.block_eigh),
    ("inv", (D,), lk.diag_inv),
    ("inv", (B,), lk.block_inv),
    ("solve", (D, Dense), lk.diag_solve_dense),
    ("solve", (D, D), lk.diag_solve_diag),
    ("solve", (B, Dense), lk.block_solve_dense),
    ("solve", (B, B), lk.block_solve_block),
    ("det", (D,), lk.diag_det),
    ("det", (B,), lk.block_det),
    ("slogdet", (D,), lk.diag_slogdet),
    ("slogdet", (B,), lk.block_slogdet),
    ("norm", (D,), lk.diag_norm),
    ("norm", (B,), lk.block_norm),
    ("expm", (D,), lk.diag_expm),
    ("expm", (B,), lk.block_expm),
    # symmetric (charge-conserving) tensors: block by block; with dense operands: the fallback
    ("einsum", (S,), sk.sym_einsum),
    ("tensordot", (S, S), sk.sym_tensordot),
    ("matmul", (S, S), sk.sym_matmul),
    ("negative", (S,), sk.sym_negative),
    ("conj", (S,), sk.sym_conj),
    ("real", (S,), sk.sym_real),
    ("imag", (S,), sk.sym_imag),
    ("multiply", (S, Scalar), sk.sym_scale),
    ("multiply", (Scalar, S), sk.scale_sym),
    ("divide", (S, Scalar), sk.sym_divide),
    ("add", (S, S), sk.sym_add),
    ("subtract", (S, S), sk.sym_subtract),
    ("transpose", (S,), sk.sym_transpose),
    ("norm", (S,), sk.sym_norm),
    ("svd", (S,), sd.sym_svd),
    ("qr", (S,), sd.sym_qr),
    ("eigh", (S,), sd.sym_eigh),
    ("truncated_svd", (S,), sd.sym_truncated_svd),
]


def install() -> None:
    """Fill the dispatcher's tables (idempotent); checks that no key is listed twice."""
    if KERNELS:
        return
    for op, rule in RULES:
        REDUCE_RULES[op].append(rule)
    for op, kinds, fn in KERNEL_TABLE:
        if (op, kinds) in KERNELS:
            raise AssertionError(f"structured kernel table lists ({op!r}, {kinds}) twice")
        KERNELS[(op, kinds)] = fn
