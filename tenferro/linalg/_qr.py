"""QR and LQ factorizations.

``qr_p(a, complete)`` returns ``[Q, R]`` with ``a = Q R``; reduced shapes
``[M, K, B...]``, ``[K, N, B...]`` (``K = min(M, N)``); complete shapes
``[M, M, B...]``, ``[M, N, B...]``. ``lq(a)`` is the conjugate transpose of the
QR of ``a^H``. Derivative rule: docs/ad/qr.md (Walter and Lehmann 2018; Seeger
et al. 2017; Townsend's QR note; the wide case by splitting ``a = [X | Y]``,
Liao et al. 2019).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import dispatchable
from .._errors import TenferroValueError
from .._aval import aval_of_operand, meta
from .._registry import primitive
from ._solve import triangular_solve_p
from . import _device
from ._util import operand, bind as _bind
from ._util import (
    FAMILY, check_matrix, columns, eye_mask, lead, mH, mm, place_columns, place_rows, rows, wrap,
)
from .. import _ops as tf


qr_p = primitive("qr", FAMILY, multiple_results=True)


@qr_p.def_impl
def _qr_impl(a, complete):
    x = lead(a._data)
    mode = "complete" if complete else "reduced"
    if type(x) is np.ndarray:
        q, r = np.linalg.qr(x, mode=mode)
    else:   # cuSOLVER geqrf/orgqr, one matrix at a time (CuPy's qr batches only in recent versions)
        qr = _device.routine("qr", "cupy.linalg", "qr")
        q, r = _device.per_matrix(lambda m: tuple(_device.run("qr", qr, m, mode=mode)), x)
    # canonical form: real non-negative diagonal of R, which makes the factorization
    # unique and continuous for full-rank input (LAPACK's Householder signs flip)
    k = min(r.shape[-2], r.shape[-1])
    d = np.diagonal(r, axis1=-2, axis2=-1)[..., :k]
    absd = np.abs(d)
    ph = np.where(absd > 0, d / np.where(absd > 0, absd, 1), 1).astype(r.dtype)
    q = q.copy()
    q[..., :, :k] *= ph[..., None, :]
    r = r.copy()
    r[..., :k, :] *= np.conj(ph)[..., :, None]
    return [wrap(q), wrap(r)]


@qr_p.def_abstract_eval
def _qr_aval(a, complete):
    check_matrix("qr", "a", a)
    m, n, batch = a.shape[0], a.shape[1], tuple(a.shape[2:])
    k = m if complete else min(m, n)
    return [a.update(shape=(m, k) + batch), a.update(shape=(k, n) + batch)]


def _qr_square_jvp(tf, dx, q, r):
    """dQ, dR for X = Q R with X [M, N], M >= N, R square invertible."""
    n = meta(r)[0][0]
    dx_rinv = triangular_solve_p.bind(r, dx, lower=False, left=False, transpose_a=False,
                                      conjugate_a=False, unit_diagonal=False)   # dX R^{-1}
    qt = mm(mH(q), dx_rinv)
    low = tf.tril(qt, -1)
    do = tf.subtract(low, mH(low))                                            # skew-Hermitian part
    if meta(qt)[1].is_complex:                                                # imaginary diagonal
        s, d = meta(qt)
        do = tf.add(do, tf.multiply(eye_mask(n, n, tuple(s[2:]), d, like=qt), tf.subtract(qt, tf.real(qt))))
    dq = tf.add(mm(q, tf.subtract(do, qt)), dx_rinv)
    dr = mm(tf.subtract(qt, do), r)
    return dq, dr


@qr_p.def_jvp
def _qr_jvp(primals, tangents, complete):
    (a,), (da,) = primals, tangents
    q, r = qr_p.bind(a, complete=complete)
    m, n = meta(a)[0][:2]
    k = min(m, n)
    if m >= n:
        q1 = columns(q, 0, k) if complete and m > k else q
        r1 = rows(r, 0, k) if complete and m > k else r
        dq, dr = _qr_square_jvp(tf, da, q1, r1)
        if complete and m > k:        # gauge Q2^H dQ2 = 0: dQ2 = -Q1 dQ1^H Q2
            q2 = columns(q, k, m)
            dq2 = tf.negative(mm(q1, mm(mH(dq), q2)))
            dq = tf.add(place_columns(dq, m, 0), place_columns(dq2, m, k))
            dr = place_rows(dr, m, 0)
        return [q, r], [dq, dr]
    # wide: a = [X | Y], X = Q Rx, Y = Q Ry
    x_dot, y_dot = columns(da, 0, m), columns(da, m, n)
    y = columns(a, m, n)
    dq, drx = _qr_square_jvp(tf, x_dot, q, columns(r, 0, m))
    dry = tf.add(mm(mH(dq), y), mm(mH(q), y_dot))
    dr = tf.add(place_columns(drx, n, 0), place_columns(dry, n, m))
    return [q, r], [dq, dr]


@dispatchable
def qr(a: Any, mode: str = "reduced") -> tuple[Any, Any]:
    """QR factorization of ``a`` ``[M, N, B...]``: ``(Q, R)`` with ``a = Q @ R``,
    orthonormal columns of Q and upper-triangular R whose diagonal is real and
    non-negative (unlike LAPACK's signs: this makes the factorization unique and
    its derivative continuous for full-rank input).

    ``mode="reduced"``: Q ``[M, K, B...]``, R ``[K, N, B...]``, ``K = min(M, N)``;
    ``mode="complete"``: Q ``[M, M, B...]``, R ``[M, N, B...]``. Differentiable
    for tall, square and wide input; needs the leading ``K x K`` block of R to be
    invertible (full rank). For complete tall Q the trailing columns get the
    derivative with ``Q2^H dQ2 = 0`` (docs/ad/qr.md)."""
    if mode not in ("reduced", "complete"):
        raise TenferroValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    a = operand("qr", "a", a)
    q, r = _bind(qr_p, a, complete=mode == "complete")
    return q, r


def lq(a: Any) -> tuple[Any, Any]:
    """LQ factorization ``a = L @ Q`` of ``a`` ``[M, N, B...]``: L ``[M, K, B...]``
    lower triangular, Q ``[K, N, B...]`` with orthonormal rows; the conjugate
    transpose of ``qr(a^H)``."""
    a = operand("lq", "a", a)
    check_matrix("lq", "a", aval_of_operand(a))
    q, r = _bind(qr_p, mH(a), complete=False)
    return mH(r), mH(q)
