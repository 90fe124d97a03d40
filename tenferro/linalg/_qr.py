"""QR and LQ factorizations.

``qr_p(a, complete)`` returns ``[Q, R]`` with ``a = Q R``; reduced shapes
``[M, K, B...]``, ``[K, N, B...]`` (``K = min(M, N)``); complete shapes
``[M, M, B...]``, ``[M, N, B...]``. ``lq(a)`` is the conjugate transpose of the
QR of ``a^H``. Derivative rule: docs/ad/qr.md (Walter and Lehmann 2018; Seeger
et al. 2017; Townsend's QR note; the wide case by splitting ``a = [X | Y]``,
Liao et al. 2019). At rank-deficient input only the factors before the first zero
pivot are differentiated (:data:`qr_singular_part_p` guards the rest).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu

from .._dispatch import dispatchable
from .._errors import TenferroValueError, fmt_shape
from .._aval import aval_of_operand, meta, xp_of
from .._registry import primitive
from .._batching import batch_last, trailing_batch
from .._tensor import Tensor
from ._errors import SingularMatrixError
from ._solve import triangular_solve_p
from . import _device
from ._util import FAMILY, aligned, bind as _bind, check_matrix, lead, operand, raw_value, wrap
from ._matops import columns, eye_mask, mH, mm, place_columns, place_rows, rows
from .. import _ops as tf


qr_p = primitive("qr", FAMILY, multiple_results=True)
qr_p.def_batch(trailing_batch(qr_p))  # trailing batch axes: tenferro._batching


@qr_p.def_impl
def _qr_impl(a, complete):
    x = lead(a._data)
    mode = "complete" if complete else "reduced"
    if type(x) is np.ndarray:
        q, r = np.linalg.qr(x, mode=mode)
    else:  # cuSOLVER geqrf/orgqr, one matrix at a time (CuPy's qr batches only in recent versions)
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
    dx_rinv = triangular_solve_p.bind(
        r, dx, lower=False, left=False, transpose_a=False, conjugate_a=False, unit_diagonal=False
    )  # dX R^{-1}
    qt = mm(mH(q), dx_rinv)
    low = tf.tril(qt, -1)
    do = tf.subtract(low, mH(low))  # skew-Hermitian part
    if meta(qt)[1].is_complex:  # imaginary diagonal
        s, d = meta(qt)
        do = tf.add(do, tf.multiply(eye_mask(n, n, tuple(s[2:]), d, like=qt), tf.subtract(qt, tf.real(qt))))
    dq = tf.add(mm(q, tf.subtract(do, qt)), dx_rinv)
    dr = mm(tf.subtract(qt, do), r)
    return dq, dr


# ---------------------------------------------------------------------------
# rank-deficient input: the trailing factors have no derivative
# ---------------------------------------------------------------------------
qr_singular_part_p = primitive("qr_singular_part", FAMILY)
"""``qr_singular_part_p(x, shape, role, where)``: the linear map from ``x`` to a tensor
of ``shape`` (``x``'s dtype) that stands for a derivative that does not exist. The QR
rule sends the tangent of ``a`` through it into ``Q[:, k:]`` and ``R[k:, k:]`` at a
rank-deficient ``a`` (first zero pivot ``k``). At ``x = 0`` it is 0 (every order of a
loss on ``Q[:, :k]``, ``R[:k, :]``). Otherwise, per ``role``:

* ``"cotangent"`` (what reverse mode sends back from those factors: the loss depends
  on them): raises :class:`SingularMatrixError` naming ``where``;
* ``"tangent"`` (a perturbation pushed into those factors: forward mode, or the
  cotangent of a cotangent in reverse over reverse): NaN, the value of a derivative
  that does not exist. Forward mode computes the tangent of every output, so it
  cannot know whether the loss uses these; they reach an output only if it depends
  on the trailing factors (docs/ad/qr.md).

The transpose is the same map with the other role."""


@qr_singular_part_p.def_batch
def _singular_part_batch(axis_size, args, dims, shape, role, where):
    # (the check reads the whole batch: one example's nonzero cotangent raises, or makes every
    # example's singular part NaN, where a loop would make only its own NaN)
    (x,), (d,) = args, dims
    x = batch_last(x, d, axis_size)
    return qr_singular_part_p.bind(x, shape=tuple(shape) + (axis_size,), role=role, where=where), len(shape)


@qr_singular_part_p.def_impl
def _singular_part_impl(x, shape, role, where):
    arr = x._data
    xp = xp_of(arr)
    if arr.size and bool(xp.any(arr != 0)):
        if role == "cotangent":
            raise SingularMatrixError(
                f"qr: {where}; the loss depends on them (nonzero cotangent). Only losses on the leading factors "
                "are differentiable there (docs/ad/qr.md)"
            )
        return Tensor._wrap(xp.full(shape, np.nan, dtype=arr.dtype, order="F"))
    return Tensor._wrap(xp.zeros(shape, dtype=arr.dtype, order="F"))


@qr_singular_part_p.def_abstract_eval
def _singular_part_aval(x, shape, role, where):
    return x.update(shape=tuple(shape))


@qr_singular_part_p.def_linear
def _singular_part_transpose(ct, x, shape, role, where):
    back = "cotangent" if role == "tangent" else "tangent"
    return [qr_singular_part_p.bind(tidu.instantiate(ct), shape=tuple(x.aval.shape), role=back, where=where)]


def _first_zero_pivot(a: Any, r: Any, k: int) -> int:
    """The first ``j < k`` with ``|R[j, j]| <= max(M, N) eps ||a[:, j]||`` (column j in the
    span of the columns before it, relative to its own size: Householder QR is
    column-wise backward stable) in any matrix of the batch, the examples of a ``vmap``
    included (their batch axes read last, as trailing batch); ``k`` when there is none
    or the values are abstract (staged graphs)."""
    av, rv = aligned([raw_value(a), raw_value(r)])
    if av is None or rv is None or not av.size or k == 0:
        return k
    xp = xp_of(rv)
    la, lr = lead(av), lead(rv)
    d = xp.abs(xp.diagonal(lr, axis1=-2, axis2=-1)[..., :k])
    cols = xp.sqrt(xp.sum(xp.abs(la[..., :, :k]) ** 2, axis=-2))
    bad = (d <= max(la.shape[-2:]) * np.finfo(rv.dtype).eps * cols).reshape(-1, k).any(axis=0)
    hits = np.flatnonzero(bad if type(bad) is np.ndarray else bad.get())  # one device read
    return int(hits[0]) if hits.size else k


def _qr_rank_deficient_jvp(a, da, q, r, j):
    """Tangents at a rank-deficient ``a`` with first zero pivot ``j``: the leading factors
    ``Q1 = Q[:, :j]``, ``R[:j, :]`` from ``a = [X | Y]``, ``X = a[:, :j]`` of full rank
    (``X = Q1 R11`` by the square rule, ``R[:j, j:] = Q1^H Y``); ``Q[:, j:]`` and
    ``R[j:, j:]`` through :data:`qr_singular_part_p`."""
    s, _ = meta(a)
    m, n, batch = s[0], s[1], tuple(s[2:])
    kq, kr = meta(q)[0][1], meta(r)[0][0]
    why = "is zero" if j == 0 else "lies in the span of the columns before it"
    where = (
        f"at the rank-deficient matrix a of shape {fmt_shape(tuple(s))} (column {j} {why}: R[{j}, {j}] = 0), "
        f"Q[:, {j}:] and R[{j}:, {j}:] have no derivative"
    )
    tq = qr_singular_part_p.bind(da, shape=(m, kq - j) + batch, role="tangent", where=where)
    tr = qr_singular_part_p.bind(da, shape=(kr - j, n - j) + batch, role="tangent", where=where)
    dq = place_columns(tq, kq, j)
    dr = place_rows(place_columns(tr, n, j), kr, j)
    if j == 0:
        return dq, dr
    q1 = columns(q, 0, j)
    dq1, dr11 = _qr_square_jvp(tf, columns(da, 0, j), q1, rows(columns(r, 0, j), 0, j))
    dr1 = place_columns(dr11, n, 0)
    if n > j:  # R[:j, j:] = Q1^H Y
        dr1y = tf.add(mm(mH(dq1), columns(a, j, n)), mm(mH(q1), columns(da, j, n)))
        dr1 = tf.add(dr1, place_columns(dr1y, n, j))
    return tf.add(dq, place_columns(dq1, kq, 0)), tf.add(dr, place_rows(dr1, kr, 0))


@qr_p.def_jvp
def _qr_jvp(primals, tangents, complete):
    (a,), (da,) = primals, tangents
    q, r = qr_p.bind(a, complete=complete)
    m, n = meta(a)[0][:2]
    k = min(m, n)
    j = _first_zero_pivot(a, r, k)
    if j < k:
        return [q, r], list(_qr_rank_deficient_jvp(a, da, q, r, j))
    if m >= n:
        q1 = columns(q, 0, k) if complete and m > k else q
        r1 = rows(r, 0, k) if complete and m > k else r
        dq, dr = _qr_square_jvp(tf, da, q1, r1)
        if complete and m > k:  # gauge Q2^H dQ2 = 0: dQ2 = -Q1 dQ1^H Q2
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
    for tall, square and wide input. For complete tall Q the trailing columns get
    the derivative with ``Q2^H dQ2 = 0`` (docs/ad/qr.md). At rank-deficient input
    (first zero pivot ``j``: column ``j`` in the span of the columns before it) the
    leading factors ``Q[:, :j]`` and ``R[:j, :]`` are smooth and losses on them are
    differentiated exactly (any order, any mode); a cotangent reaching ``Q[:, j:]`` or
    ``R[j:, j:]``, which have no derivative there, raises
    :class:`SingularMatrixError`; in forward mode their tangents are NaN."""
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
