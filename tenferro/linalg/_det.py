"""Determinants: ``det`` and ``slogdet``.

``det_p``'s derivative is ``d det = trace(adj(A) dA)`` with the adjugate computed
from the SVD, so it is finite (and correct) at singular matrices;
``slogdet``'s is ``d log det = trace(A^{-1} dA)``. See docs/ad/det.md (Giles
2008; the adjugate form as in PyTorch).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tidu import Zero

from .._dispatch import dispatchable
from .._errors import fmt_shape
from .._aval import meta
from .._registry import primitive
from ._errors import SingularMatrixError
from ._solve import inv_p
from ._util import operand, bind as _bind
from ._util import FAMILY, check_matrix, concrete, lead, mm, mtrace_product, numerically_singular, trail, wrap
from .. import _ops as tf
from .._tensor import Tensor
from .._structural import broadcast_in_dim_p


def _batch_aval(a):
    return a.update(shape=tuple(a.shape[2:]))


# ---------------------------------------------------------------------------
# det and adjugate
# ---------------------------------------------------------------------------
det_p = primitive("det", FAMILY)


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


def _adjugate_np(x: np.ndarray) -> np.ndarray:
    """adj(A) = det(V^H) det(U) V diag(prod_{j != i} s_j) U^H for A = U S V^H (batched, leading)."""
    n = x.shape[-1]
    if n == 0:
        return x.copy()
    if n == 1:
        return np.ones_like(x)
    u, s, vh = np.linalg.svd(x)
    # products of all singular values but one, without dividing
    pre = np.cumprod(np.concatenate([np.ones_like(s[..., :1]), s[..., :-1]], axis=-1), axis=-1)
    suf = np.flip(np.cumprod(np.concatenate([np.ones_like(s[..., :1]), np.flip(s[..., 1:], -1)], axis=-1), -1), -1)
    prod_others = pre * suf
    phase = np.linalg.det(u) * np.linalg.det(vh)
    v = np.conj(np.swapaxes(vh, -1, -2))
    uh = np.conj(np.swapaxes(u, -1, -2))
    return (phase[..., None, None] * (v * prod_others[..., None, :])) @ uh


@adjugate_p.def_impl
def _adjugate_impl(a):
    return wrap(_adjugate_np(lead(a._data)).astype(a._data.dtype, copy=False))


@adjugate_p.def_abstract_eval
def _adjugate_aval(a):
    check_matrix("adjugate", "a", a, square=True)
    return a


def _adjugate_jvp(da, adj, a):
    # adj = det(A) A^{-1}: d adj = trace(A^{-1} dA) adj - adj dA A^{-1}, defined for
    # invertible A only. At a (numerically) singular A this would be inf/NaN or
    # rounding noise, so it raises instead (second derivatives of det there are
    # not supported; the first derivative, adj(A), is exact everywhere).
    arr = concrete(a)
    if arr is not None and arr.size and numerically_singular(arr):
        raise _det_singular(meta(a)[0])
    try:
        a_inv = inv_p.bind(a)
    except SingularMatrixError:
        raise _det_singular(meta(a)[0]) from None
    s = meta(a)[0]
    t = mtrace_product(a_inv, da)

    tb = broadcast_in_dim_p.bind(t, shape=tuple(s), broadcast_dimensions=tuple(range(2, len(s))))
    return tf.subtract(tf.multiply(tb, adj), mm(mm(adj, da), a_inv))


def _det_singular(shape: tuple) -> SingularMatrixError:
    return SingularMatrixError(
        f"det: second (and higher) derivatives of det at a singular matrix a of shape {fmt_shape(shape)} are not "
        "supported (the first derivative, the adjugate, is); perturb a or differentiate slogdet where it is "
        "invertible")


adjugate_p.def_jvp_per_arg(_adjugate_jvp)


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
        t = mtrace_product(inv_p.bind(a), da)      # trace(A^{-1} dA)
    except SingularMatrixError:
        raise SingularMatrixError(
            f"slogdet: the derivative of slogdet at a singular matrix a of shape {fmt_shape(meta(a)[0])} is "
            "undefined (log|det a| = -inf there)") from None
    dlog = tf.real(t)
    if meta(a)[1].is_complex:
        dsign = tf.multiply(sign, tf.multiply(tf.imag(t), 1j))
    else:
        dsign = Zero.like(sign)
    return [sign, logabs], [dsign, dlog]


@dispatchable
def slogdet(a: Any) -> tuple[Any, Any]:
    """``(sign, logabsdet)`` of each matrix of ``a`` ``[N, N, B...]`` (shapes ``[B...]``),
    with ``det = sign * exp(logabsdet)``; ``sign`` has a's dtype (unit modulus for
    complex), ``logabsdet`` is real (``-inf`` for singular matrices)."""
    sign, logabs = _bind(slogdet_p, operand("slogdet", "a", a))
    return sign, logabs
