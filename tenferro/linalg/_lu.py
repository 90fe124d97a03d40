"""LU factorization with partial pivoting, least squares and pseudo-inverse.

* ``lu_p(a)`` returns ``[P, L, U]`` with ``a = P L U`` (SciPy's convention);
  derivative for square input: with ``X = L^{-1} P^T dA U^{-1}``,
  ``dL = L tril(X, -1)``, ``dU = triu(X) U``, ``dP = 0`` (docs/ad/lu.md).
* ``lstsq`` and ``pinv`` are compositions of ``qr``/``triangular_solve`` and
  ``svd``; their derivatives come from those rules (docs/ad/lstsq.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from tidu import Zero

from .._errors import TenferroValueError
from .._prim import as_operand, meta, primitive
from ._errors import LinalgShapeError
from ._qr import qr
from ._solve import triangular_solve_p
from ._svd import svd, _columns, _first
from ._util import bind as _bind
from ._util import FAMILY, as_cols, as_rows, check_batch, check_matrix, concrete, lead, mH, mm, mT, rows, tril, triu, wrap


def _tf():
    import tenferro as tf  # noqa: PLC0415

    return tf


lu_p = primitive("lu", FAMILY, multiple_results=True)


@lu_p.def_impl
def _lu_impl(a):
    A = lead(a._data)
    if A.ndim == 2:
        p, l, u = scipy.linalg.lu(A, check_finite=False)
    else:
        p, l, u = scipy.linalg.lu(A, check_finite=False)   # SciPy >= 1.11 batches over leading axes
    return [wrap(p.astype(A.dtype, copy=False)), wrap(l), wrap(u)]


@lu_p.def_abstract_eval
def _lu_aval(a):
    check_matrix("lu", "a", a)
    m, n, batch = a.shape[0], a.shape[1], tuple(a.shape[2:])
    k = min(m, n)
    return [a.update(shape=(m, m) + batch), a.update(shape=(m, k) + batch), a.update(shape=(k, n) + batch)]


@lu_p.def_jvp
def _lu_jvp(primals, tangents):
    tf = _tf()
    (a,), (da,) = primals, tangents
    p, l, u = lu_p.bind(a)
    m, n = meta(a)[0][:2]
    if m != n:
        raise LinalgShapeError(f"lu: derivatives are implemented for square matrices only, got shape {meta(a)[0]}")
    kw = dict(transpose_a=False, conjugate_a=False)
    x = triangular_solve_p.bind(l, mm(mT(p), da), lower=True, left=True, unit_diagonal=True, **kw)
    x = triangular_solve_p.bind(u, x, lower=False, left=False, unit_diagonal=False, **kw)
    return [p, l, u], [Zero.like(p), mm(l, tril(x, -1)), mm(triu(x), u)]


def lu(a: Any) -> tuple[Any, Any, Any]:
    """LU factorization with partial pivoting ``a = P @ L @ U`` of ``[M, N, B...]``:
    P ``[M, M, B...]`` (a permutation, in a's dtype), L ``[M, K, B...]`` unit lower
    triangular, U ``[K, N, B...]`` upper triangular. Differentiable for square input
    (P has zero derivative)."""
    p, l, u = _bind(lu_p, as_operand("lu", a))
    return p, l, u


def lstsq(a: Any, b: Any) -> Any:
    """Least-squares solution ``x`` of ``a @ x ~= b`` for full-rank ``a`` ``[M, N, B...]``,
    ``b`` ``[M, K, B...]`` (or ``[M, B...]``): minimizes ``||a x - b||`` (tall) or,
    for wide ``a``, gives the minimum-norm solution. Returns only ``x`` (unlike
    NumPy's 4-tuple). Computed with QR, so it is differentiable to any order."""
    tf = _tf()
    a = as_operand("lstsq", a)
    b = as_operand("lstsq", b)
    sa, sb = tuple(meta(a)[0]), tuple(meta(b)[0])
    vector = len(sb) == len(sa) - 1
    if vector:
        b = tf.reshape(b, (sb[0], 1) + sb[1:])
    from .._prim import TensorType  # noqa: PLC0415

    ta, tb = TensorType(sa, meta(a)[1]), TensorType(tuple(meta(b)[0]), meta(b)[1])
    check_matrix("lstsq", "a", ta)
    check_matrix("lstsq", "b", tb)
    check_batch("lstsq", ("a", "b"), (ta, tb), (2, 2))
    if tb.shape[0] != sa[0]:
        raise LinalgShapeError(f"lstsq: b {tb.shape} must have {sa[0]} rows to match a {sa}")
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
    from .._dtypes import result_type  # noqa: PLC0415
    from ._util import to_dtype  # noqa: PLC0415

    d = result_type(meta(x)[1], meta(y)[1])
    return to_dtype(x, d), to_dtype(y, d)


def pinv(a: Any, rtol: float | None = None) -> Any:
    """Moore–Penrose pseudo-inverse ``[N, M, B...]`` of ``a`` ``[M, N, B...]`` via the
    SVD: singular values ``<= rtol * S[0]`` (default ``max(M, N) * eps``) are
    discarded (the rank choice is not differentiated). Differentiable where the
    rank is locally constant."""
    tf = _tf()
    a = as_operand("pinv", a)
    shape, dtype = meta(a)
    if rtol is None:
        rtol = max(shape[0], shape[1]) * float(np.finfo(dtype.real_dtype.numpy).eps)
    u, s, vh = svd(a)
    sv = concrete(s)
    k = s.shape[0]
    if sv is not None and sv.size:
        keep = sv > rtol * sv[:1]
        k = int(keep.reshape(keep.shape[0], -1).sum(axis=0).max())
    if k < s.shape[0]:
        u, s, vh = _columns(u, 0, k), _first(s, k), rows(vh, 0, k)
    if k == 0:
        return tf.multiply(mH(a), 0.0)
    return mm(tf.multiply(mH(vh), as_cols(tf.divide(1.0, s), shape[1])), mH(u))
