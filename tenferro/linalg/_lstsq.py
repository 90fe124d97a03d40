"""Least squares ``lstsq`` and pseudo-inverse ``pinv``: compositions of
``qr``/``triangular_solve`` and ``svd``, so their derivatives come from those
rules (any order). See docs/ad/solve.md.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import fmt_shape
from .._aval import aval_of_operand, meta
from .._operands import as_operand
from ._errors import LinalgShapeError
from ._qr import qr
from ._solve import triangular_solve_p
from ._svd import svd
from ._util import as_cols, check_batch, check_matrix, columns, concrete, leading, mH, mm, rows
from .. import _ops as tf
from .._dtypes import result_type
from ._util import to_dtype


def lstsq(a: Any, b: Any) -> Any:
    """Least-squares solution ``x`` of ``a @ x ~= b`` for full-rank ``a`` ``[M, N, B...]``,
    ``b`` ``[M, K, B...]`` (or ``[M, B...]``): minimizes ``||a x - b||`` (tall) or,
    for wide ``a``, gives the minimum-norm solution. Returns only ``x`` (unlike
    NumPy's 4-tuple). Computed with QR, so it is differentiable to any order."""
    a = as_operand("lstsq", a)
    b = as_operand("lstsq", b)
    sa, sb = tuple(meta(a)[0]), tuple(meta(b)[0])
    vector = len(sb) == len(sa) - 1
    if vector:
        b = tf.reshape(b, (sb[0], 1) + sb[1:])
    ta, tb = aval_of_operand(a), aval_of_operand(b)
    check_matrix("lstsq", "a", ta)
    check_matrix("lstsq", "b", tb)
    check_batch("lstsq", ("a", "b"), (ta, tb), (2, 2))
    if tb.shape[0] != sa[0]:
        raise LinalgShapeError(f"lstsq: b {fmt_shape(tb.shape)} must have {sa[0]} rows to match a {fmt_shape(sa)}")
    m, n = sa[:2]
    kw = dict(transpose_a=False, conjugate_a=False, unit_diagonal=False)
    if m >= n:
        q, r = qr(a)
        qb = mm(mH(q), b)
        r, qb = _same_dtype(r, qb)
        x = triangular_solve_p.bind(r, qb, lower=False, left=True, **kw)
    else:
        q, r = qr(mH(a))                  # a = R^H Q^H, x = Q R^{-H} b
        r, bb = _same_dtype(r, b)
        y = triangular_solve_p.bind(r, bb, lower=False, left=True, transpose_a=True,
                                    conjugate_a=meta(r)[1].is_complex, unit_diagonal=False)
        x = mm(q, y)
    return tf.reshape(x, (n,) + sb[1:]) if vector else x


def _same_dtype(x: Any, y: Any) -> tuple[Any, Any]:
    d = result_type(meta(x)[1], meta(y)[1])
    return to_dtype(x, d), to_dtype(y, d)


def pinv(a: Any, rtol: float | None = None) -> Any:
    """Moore–Penrose pseudo-inverse ``[N, M, B...]`` of ``a`` ``[M, N, B...]`` via the
    SVD: singular values ``<= rtol * S[0]`` (default ``max(M, N) * eps``) are
    discarded (the rank choice is not differentiated). Differentiable where the
    rank is locally constant."""
    a = as_operand("pinv", a)
    shape, dtype = meta(a)
    if rtol is None:
        rtol = max(shape[0], shape[1]) * float(np.finfo(dtype.real_dtype.numpy).eps)
    u, s, vh = svd(a)
    sv = concrete(s)
    k = meta(s)[0][0]
    if sv is not None and sv.size:
        keep = sv > rtol * sv[:1]
        k = int(keep.reshape(keep.shape[0], -1).sum(axis=0).max())
    if k < meta(s)[0][0]:
        u, s, vh = columns(u, 0, k), leading(s, k), rows(vh, 0, k)
    if k == 0:
        return tf.multiply(mH(a), 0.0)
    return mm(tf.multiply(mH(vh), as_cols(tf.divide(1.0, s), shape[1])), mH(u))
