"""LU factorization with partial pivoting, least squares and pseudo-inverse.

* ``lu_p(a)`` returns ``[P, L, U]`` with ``a = P L U`` (SciPy's convention);
  derivative for square, tall and wide input: with ``X = L1^{-1} (P^T dA)_{11} U1^{-1}``
  on the leading ``K x K`` blocks, ``dL1 = L1 tril(X, -1)``, ``dU1 = triu(X) U1``,
  the trailing block of L (tall) or U (wide) by one more triangular solve,
  ``dP = 0`` (docs/ad/lu.md).
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
    if A.size == 0:     # SciPy returns a 0 x 0 P for empty input (batched too): build the factors
        m, n = A.shape[-2:]
        k = min(m, n)
        batch = A.shape[:-2]
        p = np.broadcast_to(np.eye(m, dtype=A.dtype), batch + (m, m)).copy()
        l = np.broadcast_to(np.eye(m, k, dtype=A.dtype), batch + (m, k)).copy()
        u = np.zeros(batch + (k, n), dtype=A.dtype)
    else:               # SciPy >= 1.11 batches over leading axes
        p, l, u = scipy.linalg.lu(A, check_finite=False)
    return [wrap(p.astype(A.dtype, copy=False)), wrap(l), wrap(u)]


@lu_p.def_abstract_eval
def _lu_aval(a):
    check_matrix("lu", "a", a)
    m, n, batch = a.shape[0], a.shape[1], tuple(a.shape[2:])
    k = min(m, n)
    return [a.update(shape=(m, m) + batch), a.update(shape=(m, k) + batch), a.update(shape=(k, n) + batch)]


def _block(x: Any, r0: int, r1: int, c0: int, c1: int) -> Any:
    """``x[r0:r1, c0:c1, ...]`` (all batch entries)."""
    s = meta(x)[0]
    if (r0, r1, c0, c1) == (0, s[0], 0, s[1]):
        return x
    nb = len(s) - 2
    return _tf().slice(x, (r0, c0) + (0,) * nb, (r1, c1) + tuple(s[2:]))


# Square rule: de Hoog, Anderssen, Lukas (2011); Walter & Lehmann (2018).
# Trapezoidal (tall/wide) extension: derived in docs/ad/lu.md.
@lu_p.def_jvp
def _lu_jvp(primals, tangents):
    """With ``B = P^T dA``, ``K = min(M, N)``, ``L1``/``U1`` the leading ``K x K``
    blocks and ``X = L1^{-1} B[:K, :K] U1^{-1}``: ``dL1 = L1 tril(X, -1)``,
    ``dU1 = triu(X) U1``; tall: ``dL2 = (B[K:] - L2 dU) U^{-1}``; wide:
    ``dU2 = L^{-1} (B[:, K:] - dL U2)``; ``dP = 0``."""
    tf = _tf()
    (a,), (da,) = primals, tangents
    p, l, u = lu_p.bind(a)
    m, n = meta(a)[0][:2]
    k = min(m, n)
    kw = dict(transpose_a=False, conjugate_a=False)
    b = mm(mT(p), da)
    l1, u1 = _block(l, 0, k, 0, k), _block(u, 0, k, 0, k)
    x = triangular_solve_p.bind(l1, _block(b, 0, k, 0, k), lower=True, left=True, unit_diagonal=True, **kw)
    x = triangular_solve_p.bind(u1, x, lower=False, left=False, unit_diagonal=False, **kw)
    dl, du = mm(l1, tril(x, -1)), mm(triu(x), u1)
    if m > k:       # tall: U = U1, L = [L1; L2]
        rhs = tf.subtract(_block(b, k, m, 0, n), mm(_block(l, k, m, 0, k), du))
        dl2 = triangular_solve_p.bind(u, rhs, lower=False, left=False, unit_diagonal=False, **kw)
        dl = tf.concatenate([dl, dl2], axis=0)
    if n > k:       # wide: L = L1, U = [U1 U2]
        rhs = tf.subtract(_block(b, 0, m, k, n), mm(dl, _block(u, 0, k, k, n)))
        du2 = triangular_solve_p.bind(l, rhs, lower=True, left=True, unit_diagonal=True, **kw)
        du = tf.concatenate([du, du2], axis=1)
    return [p, l, u], [Zero.like(p), dl, du]


def lu(a: Any) -> tuple[Any, Any, Any]:
    """LU factorization with partial pivoting ``a = P @ L @ U`` of ``[M, N, B...]``
    (SciPy's ``scipy.linalg.lu`` convention), ``K = min(M, N)``: P ``[M, M, B...]``
    (a permutation, in a's dtype), L ``[M, K, B...]`` unit lower triangular
    (trapezoidal for ``M > N``), U ``[K, N, B...]`` upper triangular (trapezoidal
    for ``M < N``). Differentiable for square, tall and wide input where the pivot
    order is locally constant (P has zero derivative); see docs/ad/lu.md."""
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
