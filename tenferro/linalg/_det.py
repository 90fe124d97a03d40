"""Determinants: ``det`` and ``slogdet``.

``det_p``'s derivative is ``d det = trace(adj(A) dA)`` with the adjugate computed
from the SVD, so it is finite (and correct) at singular matrices;
``slogdet``'s is ``d log det = trace(A^{-1} dA)``. See docs/ad/det.md (Giles
2008; the adjugate form as in PyTorch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu
from tidu import Zero, is_undefined

from .._dispatch import dispatchable
from .._errors import TenferroValueError, fmt_shape
from .._aval import meta, xp_of
from .._registry import primitive
from .._batching import trailing_batch
from ._errors import LinalgShapeError, SingularMatrixError
from ._solve import _numerically_singular_inverse, inv_p  # the one rank rule (also inv's and solve's)
from ._util import FAMILY, bind as _bind, check_matrix, concrete, lead, operand, trail, wrap
from ._lapack import numerically_singular
from ._matops import mm, mT, mtrace_product
from .. import _ops as tf
from .._tensor import Tensor
from .._structural import broadcast_in_dim_p


def _batch_aval(a):
    return a.update(shape=tuple(a.shape[2:]))


# ---------------------------------------------------------------------------
# det and adjugate
# ---------------------------------------------------------------------------
det_p = primitive("det", FAMILY)
det_p.def_batch(trailing_batch(det_p))  # trailing batch axes: tenferro._batching


@det_p.def_impl
def _det_impl(a):
    return Tensor._wrap(trail(np.linalg.det(lead(a._data)), 0))


@det_p.def_abstract_eval
def _det_aval(a):
    check_matrix("det", "a", a, square=True)
    return _batch_aval(a)


def _det_jvp(da, out, a):
    return mtrace_product(adjugate_p.bind(a), da)


det_p.def_jvp_per_arg(_det_jvp)


adjugate_p = primitive("adjugate", FAMILY)
adjugate_p.def_batch(trailing_batch(adjugate_p))  # trailing batch axes: tenferro._batching


def _prefix_suffix(xp: Any, s: Any) -> tuple[Any, Any]:
    """``(prod_{l < i} s_l, prod_{l > i} s_l)`` for each ``i`` (last axis)."""
    one = xp.ones_like(s[..., :1])
    pre = xp.cumprod(xp.concatenate([one, s[..., :-1]], axis=-1), axis=-1)
    suf = xp.flip(xp.cumprod(xp.concatenate([one, xp.flip(s[..., 1:], -1)], axis=-1), axis=-1), -1)
    return pre, suf


def _products_but_one(s: Any) -> Any:
    """``prod_{j != i} s_j`` for each ``i`` (last axis), without dividing."""
    pre, suf = _prefix_suffix(xp_of(s), s)
    return pre * suf


def _products_but_two(s: Any) -> Any:
    """``P[i, j] = prod_{l != i, j} s_l`` for ``i != j`` and ``P[i, i] = 0`` (last axis
    of ``s`` -> two axes), without dividing: prefix x middle x suffix products, O(N^2)."""
    xp = xp_of(s)
    n = s.shape[-1]
    pre, suf = _prefix_suffix(xp, s)  # prod_{l < i}, prod_{l > j}
    later = xp.arange(n)[None, :] > xp.arange(n)[:, None]  # l > i
    run = xp.cumprod(xp.where(later, s[..., None, :], 1), axis=-1)  # prod_{i < l <= j}
    mid = xp.concatenate([xp.ones_like(run[..., :1]), run[..., :-1]], axis=-1)  # prod_{i < l < j}
    upper = xp.where(later, pre[..., :, None] * mid * suf[..., None, :], 0)
    return upper + xp.swapaxes(upper, -1, -2)


def _svd_frame(x: Any) -> tuple:
    """``(V, s, U^H, det(U) det(V^H))`` for ``x = U diag(s) V^H`` (batched, leading)."""
    xp = xp_of(x)
    u, s, vh = xp.linalg.svd(x)
    phase = xp.linalg.det(u) * xp.linalg.det(vh)
    return xp.conj(xp.swapaxes(vh, -1, -2)), s, xp.conj(xp.swapaxes(u, -1, -2)), phase


def _adjugate_np(x: Any) -> Any:
    """adj(A) = det(U) det(V^H) V diag(prod_{j != i} s_j) U^H for A = U S V^H (batched, leading)."""
    n = x.shape[-1]
    if n == 0:
        return x.copy()
    if n == 1:
        return xp_of(x).ones_like(x)
    v, s, uh, phase = _svd_frame(x)
    return (phase[..., None, None] * (v * _products_but_one(s)[..., None, :])) @ uh


@adjugate_p.def_impl
def _adjugate_impl(a):
    return wrap(_adjugate_np(lead(a._data)).astype(a._data.dtype, copy=False))


@adjugate_p.def_abstract_eval
def _adjugate_aval(a):
    check_matrix("adjugate", "a", a, square=True)
    return a


def _adjugate_jvp(da, adj, a):
    return adjugate_jvp_p.bind(a, da)


adjugate_p.def_jvp_per_arg(_adjugate_jvp)


# ---------------------------------------------------------------------------
# the derivative of the adjugate (the Hessian of det), exact at singular matrices
# ---------------------------------------------------------------------------
adjugate_jvp_p = primitive("adjugate_jvp", FAMILY)
adjugate_jvp_p.def_batch(trailing_batch(adjugate_jvp_p))  # trailing batch axes: tenferro._batching
"""``adjugate_jvp_p(a, e)`` = ``d adj(A)[E]``, linear in ``e``. With ``A = U S V^H``,
``adj(A + E) = det(U) det(V^H) V adj(S + U^H E V) U^H`` exactly, so the derivative
needs only the derivative of ``adj`` at the diagonal ``S``:
``(d adj(S)[F])_ij = -F_ij prod_{l != i,j} s_l`` (``i != j``) and
``sum_{k != i} F_kk prod_{l != i,k} s_l`` (``i = j``): polynomial, products taken
without dividing, so exact at rank N-1 and N-2 (docs/ad/det.md)."""


def _adjugate_jvp_np(x: Any, e: Any) -> Any:
    xp = xp_of(x)
    n = x.shape[-1]
    if n <= 1:
        return xp.zeros_like(e)
    v, s, uh, phase = _svd_frame(x)
    f = uh @ e @ v  # U^H E V
    p = _products_but_two(s)
    g = -p * f  # zero diagonal (p_ii = 0)
    idx = xp.arange(n)
    g[..., idx, idx] = xp.einsum("...ij,...jj->...i", p, f)  # sum_k p_ik F_kk
    return phase[..., None, None] * (v @ g @ uh)


@adjugate_jvp_p.def_impl
def _adjugate_jvp_impl(a, e):
    x, d = lead(a._data), lead(e._data)
    return wrap(_adjugate_jvp_np(x, d).astype(a._data.dtype, copy=False))


@adjugate_jvp_p.def_abstract_eval
def _adjugate_jvp_aval(a, e):
    check_matrix("adjugate_jvp", "a", a, square=True)
    if tuple(e.shape) != tuple(a.shape) or e.dtype is not a.dtype:
        raise LinalgShapeError(
            f"adjugate_jvp: the direction e {fmt_shape(e.shape)} {e.dtype.name} must have a's "
            f"shape and dtype {fmt_shape(a.shape)} {a.dtype.name}"
        )
    return a


def _adjugate_jvp_jvp_a(da, out, a, e):
    # d^2 adj(A)[E, G] = -tr(A^-1 G A^-1 E) adj + tr(A^-1 E) L[G] - L[G] E A^-1 + adj E A^-1 G A^-1
    # (L = d adj(A)), from adj = det(A) A^{-1}: invertible A only. Third derivatives of det
    # at a (numerically) singular matrix raise instead of returning rounding noise.
    arr = concrete(a)
    if arr is not None and arr.size and numerically_singular(arr):
        raise _det_singular(meta(a)[0], "third")
    try:
        a_inv = inv_p.bind(a)
    except SingularMatrixError:
        raise _det_singular(meta(a)[0], "third") from None
    s = meta(a)[0]

    def times_trace(x, y, m):  # trace(x @ y) * m, per batch element
        t = mtrace_product(x, y)
        return tf.multiply(broadcast_in_dim_p.bind(t, shape=tuple(s), broadcast_dimensions=tuple(range(2, len(s)))), m)

    adj, lg = adjugate_p.bind(a), adjugate_jvp_p.bind(a, da)
    inv_e, inv_g = mm(a_inv, e), mm(a_inv, da)
    terms = [
        tf.negative(times_trace(inv_g, inv_e, adj)),
        times_trace(a_inv, e, lg),
        tf.negative(mm(lg, mm(e, a_inv))),
        mm(mm(adj, e), mm(inv_g, a_inv)),
    ]
    return tf.add(tf.add(terms[0], terms[1]), tf.add(terms[2], terms[3]))


def _adjugate_jvp_jvp_e(de, out, a, e):
    return adjugate_jvp_p.bind(a, de)


adjugate_jvp_p.def_jvp_per_arg(_adjugate_jvp_jvp_a, _adjugate_jvp_jvp_e)


@adjugate_jvp_p.def_transpose
def _adjugate_jvp_transpose(ct, a, e):
    # adj(A)^T = adj(A^T), so (d adj(A))^T = d adj(A^T) for the pairing Re sum(x y)
    if is_undefined(a):
        raise TenferroValueError("adjugate_jvp: the transpose exists only in the direction e (linear in e, not in a)")
    return [None, adjugate_jvp_p.bind(mT(a), tidu.instantiate(ct))]


def _det_singular(shape: tuple, order: str) -> SingularMatrixError:
    return SingularMatrixError(
        f"det: {order} (and higher) derivatives of det at a singular matrix a of shape {fmt_shape(shape)} are not "
        "supported (the first and second, the adjugate and its derivative, are); perturb a or differentiate slogdet "
        "where it is invertible"
    )


@dispatchable
def det(a: Any) -> Any:
    """Determinant of each matrix of ``a`` ``[N, N, B...]`` -> ``[B...]``.
    The gradient is the (transposed) adjugate, finite at singular matrices;
    second derivatives at a singular matrix raise SingularMatrixError."""
    return _bind(det_p, operand("det", "a", a))


# ---------------------------------------------------------------------------
# slogdet
# ---------------------------------------------------------------------------
slogdet_p = primitive("slogdet", FAMILY, multiple_results=True)
slogdet_p.def_batch(trailing_batch(slogdet_p))  # trailing batch axes: tenferro._batching


@slogdet_p.def_impl
def _slogdet_impl(a):
    sign, logabs = np.linalg.slogdet(lead(a._data))
    return [Tensor._wrap(trail(sign, 0)), Tensor._wrap(trail(logabs, 0))]


@slogdet_p.def_abstract_eval
def _slogdet_aval(a):
    check_matrix("slogdet", "a", a, square=True)
    b = _batch_aval(a)
    return [b, b.update(dtype=a.dtype.real_dtype)]


@slogdet_p.def_jvp
def _slogdet_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    sign, logabs = slogdet_p.bind(a)
    try:
        a_inv = inv_p.bind(a)
    except SingularMatrixError:
        raise _slogdet_singular(meta(a)[0]) from None
    if _numerically_singular_inverse(concrete(a), concrete(a_inv)):
        raise _slogdet_singular(meta(a)[0])
    t = mtrace_product(a_inv, da)  # trace(A^{-1} dA)
    dlog = tf.real(t)
    if meta(a)[1].is_complex:
        dsign = tf.multiply(sign, tf.multiply(tf.imag(t), 1j))
    else:
        dsign = Zero.like(sign)
    return [sign, logabs], [dsign, dlog]


def _slogdet_singular(shape: tuple) -> SingularMatrixError:
    return SingularMatrixError(
        f"slogdet: the derivative of slogdet at a singular matrix a of shape {fmt_shape(shape)} is undefined "
        "(log|det a| = -inf there, and A^{-1} has no correct digit at numerical singularity); differentiate det, "
        "whose derivatives are exact at singular matrices"
    )


@dispatchable
def slogdet(a: Any) -> tuple[Any, Any]:
    """``(sign, logabsdet)`` of each matrix of ``a`` ``[N, N, B...]`` (shapes ``[B...]``),
    with ``det = sign * exp(logabsdet)``; ``sign`` has a's dtype (unit modulus for
    complex), ``logabsdet`` is real (``-inf`` for singular matrices)."""
    sign, logabs = _bind(slogdet_p, operand("slogdet", "a", a))
    return sign, logabs
