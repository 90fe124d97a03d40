"""Least squares ``lstsq`` and pseudo-inverse ``pinv``.

``lstsq`` is one primitive, ``lstsq_p(a, b, rcond)``: ``x = pinv(a) @ b``, the
minimum-norm least-squares solution with singular values ``<= rcond * s_max``
dropped, computed by an SVD-based driver (LAPACK ``gelsd`` through SciPy on the CPU,
CuPy's SVD-based ``lstsq`` on a GPU), matrix by matrix. It is linear in ``b``;
its JVP in ``a`` is the derivative of the pseudo-inverse at fixed rank
(Golub and Pereyra, SIAM J. Numer. Anal. 10, 413, 1973), written with
``lstsq_p`` itself, so every order is exact where the rank is locally constant.
``pinv`` is its own primitive, ``pinv_p(a, rtol)`` (gesdd, each matrix's reciprocals
masked by its own rank), with the same fixed-rank derivative written with ``pinv_p``:
no singular vectors, so it is exact at repeated singular values. See docs/ad/solve.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from tidu import Zero, is_undefined

from .._errors import TenferroValueError, fmt_shape
from .._aval import aval_of_operand, fortran, meta, xp_of
from .._registry import primitive
from .._batching import trailing_batch
from .._tensor import Tensor
from . import _device
from ._errors import ConvergenceError, LinalgShapeError
from ._svd import gesdd, svdvals
from ._util import FAMILY, bind as _bind, check_batch, check_matrix, concrete, lead, operand, wrap
from ._matops import leading, mH, mm, mT, to_dtype
from .. import _ops as tf
from .._dtypes import int64, result_type


lstsq_p = primitive("lstsq", FAMILY)
lstsq_p.def_batch(trailing_batch(lstsq_p))  # trailing batch axes: tenferro._batching
"""``lstsq_p(a, b, rcond)``: ``pinv(a) @ b`` for ``a`` ``[M, N, B...]``, ``b``
``[M, K, B...]`` of one dtype, singular values ``<= rcond * s_max`` treated as zero."""


@lstsq_p.def_impl
def _lstsq_impl(a, b, rcond):
    A, B = a._data, b._data
    m, n, k = A.shape[0], A.shape[1], B.shape[1]
    xp = xp_of(A)
    if A.size == 0 or B.size == 0:
        return Tensor._wrap(xp.zeros((n, k) + tuple(A.shape[2:]), A.dtype, order="F"))
    if type(A) is not np.ndarray:
        fn = _device.routine("lstsq", "cupy.linalg", "lstsq")
        return wrap(_device.per_matrix(lambda x, y: fn(x, y, rcond=rcond)[0], lead(A), lead(B)))
    if A.ndim == 2:
        return Tensor._wrap(fortran(_gelsd(A, B, rcond)))
    A3 = A.reshape((m, n, -1), order="F")
    B3 = B.reshape((m, k, -1), order="F")
    out = np.empty((n, k, A3.shape[2]), A.dtype, order="F")
    for i in range(A3.shape[2]):
        out[:, :, i] = _gelsd(A3[:, :, i], B3[:, :, i], rcond)
    return Tensor._wrap(out.reshape((n, k) + tuple(A.shape[2:]), order="F"))


def _gelsd(A: np.ndarray, B: np.ndarray, rcond: float) -> np.ndarray:
    """Minimum-norm solution of one (finite, non-empty) system by LAPACK gelsd."""
    try:
        x = scipy.linalg.lstsq(A, B, cond=rcond, lapack_driver="gelsd", check_finite=False)[0]
    except np.linalg.LinAlgError as exc:  # the SVD did not converge
        raise ConvergenceError(f"lstsq: the SVD of a {fmt_shape(A.shape)} did not converge ({exc})") from None
    return x.astype(A.dtype, copy=False)


@lstsq_p.def_abstract_eval
def _lstsq_aval(a, b, rcond):
    check_matrix("lstsq", "a", a)
    check_matrix("lstsq", "b", b)
    check_batch("lstsq", ("a", "b"), (a, b), (2, 2))
    if a.dtype is not b.dtype:
        raise LinalgShapeError(f"lstsq: a and b must have the same dtype, got {a} and {b}")
    if b.shape[0] != a.shape[0]:
        raise LinalgShapeError(
            f"lstsq: b {fmt_shape(b.shape)} must have {a.shape[0]} rows to match a {fmt_shape(a.shape)}"
        )
    return b.update(shape=(a.shape[1], b.shape[1]) + tuple(a.shape[2:]))


@lstsq_p.def_jvp
def _lstsq_jvp(primals, tangents, rcond):
    # x = A+ b at fixed rank:  dx = A+ (db - dA x) + A+ A+^H dA^H r + (I - A+ A) dA^H A+^H x,
    # r = b - A x (Golub and Pereyra 1973); A+ v and A+^H v = pinv(A^H) v are lstsq_p again
    (a, b), (da, db) = primals, tangents
    x = lstsq_p.bind(a, b, rcond=rcond)

    def pinv_a(v):
        return lstsq_p.bind(a, v, rcond=rcond)  # noqa: E306,E704

    def pinv_ah(v):
        return lstsq_p.bind(mH(a), v, rcond=rcond)  # noqa: E306,E704

    if type(da) is Zero:
        return x, pinv_a(db)
    dah = mH(da)
    rhs = tf.negative(mm(da, x)) if type(db) is Zero else tf.subtract(db, mm(da, x))
    r = tf.subtract(b, mm(a, x))
    y = mm(dah, pinv_ah(x))
    dx = tf.add(pinv_a(tf.add(rhs, pinv_ah(mm(dah, r)))), tf.subtract(y, pinv_a(mm(a, y))))
    return x, dx


@lstsq_p.def_transpose
def _lstsq_transpose(ct, a, b, rcond):
    # bilinear pairing Re sum(x * y): A+ transposes to (A+)^T = pinv(A^T)
    if is_undefined(a):
        raise TenferroValueError(
            "lstsq: the transpose exists only in the right-hand side b (lstsq is linear in b, not in a)"
        )
    return [None, lstsq_p.bind(mT(a), ct, rcond=rcond)]


def lstsq(a: Any, b: Any, rcond: float | None = None) -> tuple[Any, Any, Any, Any]:
    """Least squares ``a @ x ~= b`` for ``a`` ``[M, N, B...]`` and ``b`` ``[M, K, B...]``
    (or ``[M, B...]``), like ``numpy.linalg.lstsq``: returns ``(x, residuals, rank, s)``.

    * ``x`` ``[N, K, B...]`` (``[N, B...]`` for vector ``b``): the minimum-norm solution
      ``pinv(a) @ b``, singular values ``<= rcond * s_max`` treated as zero (default
      ``rcond = eps * max(M, N)``, NumPy's), from an SVD-based driver (``gelsd``), so a
      rank-deficient ``a`` gives NumPy's answer.
    * ``residuals`` ``[K, B...]`` (``[1, B...]`` for vector ``b``): the squared 2-norm of
      each column of ``b - a @ x`` (real), when every matrix has rank ``N`` and
      ``M > N``; else an empty ``[0, B...]`` tensor (as NumPy). Under ``tenferro.jit``
      the rank is unknown when the program is built and a shape cannot depend on it:
      a tall ``a`` then always gets residuals (JAX's convention).
    * ``rank``: the effective rank, an int64 tensor (0-d for one matrix, ``[B...]`` for
      a batch; ``int(rank)`` for a Python int).
    * ``s`` ``[min(M, N), B...]``: the singular values of ``a``, descending.

    Derivatives: ``x``'s is the derivative of ``pinv(a) @ b`` at fixed rank, exact to
    any order where the rank is locally constant (at full rank: the derivative of the
    least-squares solution); ``residuals`` and ``s`` are differentiable too (``s``
    through :func:`svdvals`); the rank is piecewise constant."""
    a = operand("lstsq", "a", a)
    b = operand("lstsq", "b", b)
    sa, sb = tuple(meta(a)[0]), tuple(meta(b)[0])
    vector = len(sb) == len(sa) - 1 and len(sa) >= 2
    if vector:
        b = tf.reshape(b, (sb[0], 1) + sb[1:])
    ta, tb = aval_of_operand(a), aval_of_operand(b)
    check_matrix("lstsq", "a", ta)
    check_matrix("lstsq", "b", tb)
    m, n = sa[:2]
    dt = result_type(ta.dtype, tb.dtype)
    rcond = _tolerance("lstsq", "rcond", rcond, default=float(np.finfo(dt.real_dtype.numpy).eps) * max(m, n))
    a, b = to_dtype(a, dt), to_dtype(b, dt)
    x = _bind(lstsq_p, a, b, rcond=rcond)
    s = svdvals(a)
    batch = tuple(sa[2:])
    k = min(m, n)
    if k:
        tol = tf.multiply(leading(s, 1), rcond)
        rank = tf.sum(to_dtype(tf.greater(s, tol), int64), axis=0)
    else:
        rank = tf.zeros(batch, int64)
    rank_values = concrete(rank)
    # staged (jit): the rank is not known when the program is built, and the shape of
    # residuals cannot depend on it: a tall a always gets them (JAX's convention)
    full = m > n and (rank_values is None or bool((rank_values == n).all()))
    if full:
        d = tf.subtract(b, mm(a, x))
        residuals = tf.sum(tf.real(tf.multiply(tf.conj(d), d)) if dt.is_complex else tf.multiply(d, d), axis=0)
    else:
        residuals = tf.zeros((0,) + batch, dt.real_dtype)
    if vector:
        x = tf.reshape(x, (n,) + sb[1:])
    return x, residuals, rank, s


def _tolerance(op: str, name: str, value: Any, default: float) -> float:
    """A relative tolerance: None (the default) or a finite float >= 0."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TenferroValueError(f"{op}: {name} must be a float >= 0 or None, got {value!r}")
    v = float(value)
    if not np.isfinite(v) or v < 0:
        raise TenferroValueError(f"{op}: {name} must be a finite float >= 0 or None, got {value!r}")
    return v


pinv_p = primitive("pinv", FAMILY)
pinv_p.def_batch(trailing_batch(pinv_p))  # trailing batch axes: tenferro._batching
"""``pinv_p(a, rtol)``: the pseudo-inverse ``[N, M, B...]`` of each matrix of ``a``
``[M, N, B...]``, its singular values ``<= rtol * s_max`` (per matrix) treated as zero."""


@pinv_p.def_impl
def _pinv_impl(a, rtol):
    # V diag(1/s) U^H from gesdd (svd's driver); every matrix keeps its own rank: the
    # reciprocals it drops are masked, never taken (shape-static, so jit runs this too)
    x = a._data
    m, n, batch = x.shape[0], x.shape[1], tuple(x.shape[2:])
    dt = x.dtype
    xp = xp_of(x)
    if x.size == 0:
        return Tensor._wrap(xp.zeros((n, m) + batch, dt, order="F"))
    u, s, vh = gesdd("pinv", x)
    u, s, vh = lead(u), lead(s, 1), lead(vh)
    keep = s > rtol * s[..., :1]
    inv = xp.where(keep, 1.0 / xp.where(keep, s, 1.0), 0.0)
    p = (xp.conj(xp.swapaxes(vh, -1, -2)) * inv[..., None, :]) @ xp.conj(xp.swapaxes(u, -1, -2))
    return wrap(p.astype(dt, copy=False))


@pinv_p.def_abstract_eval
def _pinv_aval(a, rtol):
    check_matrix("pinv", "a", a)
    return a.update(shape=(a.shape[1], a.shape[0]) + tuple(a.shape[2:]))


def _pinv_jvp(da, p, a, rtol):
    # at fixed rank (Golub and Pereyra 1973), P = A+:
    #   dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P,
    # products with P = pinv_p(a) (traced at higher orders): no singular vectors, so exact
    # where singular values repeat, to every order where the rank is locally constant
    dah = mH(da)
    ph = mH(p)
    t1 = mm(p, mm(da, p))
    t2 = mm(mm(p, ph), tf.subtract(dah, mm(mm(dah, a), p)))
    t3 = mm(tf.subtract(dah, mm(p, mm(a, dah))), mm(ph, p))
    return tf.add(tf.subtract(t2, t1), t3)


pinv_p.def_jvp_per_arg(_pinv_jvp)


def pinv(a: Any, rtol: float | None = None) -> Any:
    """Moore–Penrose pseudo-inverse ``[N, M, B...]`` of ``a`` ``[M, N, B...]`` via the
    SVD: singular values ``<= rtol * S[0]`` (default ``max(M, N) * eps``) are
    discarded, matrix by matrix of a batch (each keeps its own rank; the rank choice is
    not differentiated). Differentiable where the rank is locally constant, to every
    order: the derivative at fixed rank (Golub–Pereyra), written with ``pinv`` itself, so
    exact also where singular values repeat (e.g. at ``eye(5, 3)``)."""
    a = operand("pinv", "a", a)
    shape, dtype = meta(a)
    check_matrix("pinv", "a", aval_of_operand(a))
    rtol = _tolerance(
        "pinv", "rtol", rtol, default=max(shape[0], shape[1]) * float(np.finfo(dtype.real_dtype.numpy).eps)
    )
    return _bind(pinv_p, a, rtol=rtol)
