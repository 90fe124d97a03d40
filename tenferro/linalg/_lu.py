"""LU factorization with partial pivoting.

* ``lu_p(a)`` returns ``[P, L, U]`` with ``a = P L U`` (SciPy's convention);
  derivative for square, tall and wide input: with ``X = L1^{-1} (P^T dA)_{11} U1^{-1}``
  on the leading ``K x K`` blocks, ``dL1 = L1 tf.tril(X, -1)``, ``dU1 = tf.triu(X) U1``,
  the trailing block of L (tall) or U (wide) by one more triangular solve,
  ``dP = 0`` (docs/ad/lu.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from tidu import Zero

from .._aval import meta, xp_of
from .._registry import primitive
from .._batching import trailing_batch
from ._solve import triangular_solve_p
from . import _device
from ._util import FAMILY, bind as _bind, check_matrix, lead, operand, wrap
from ._matops import mm, mT
from .. import _ops as tf


lu_p = primitive("lu", FAMILY, multiple_results=True)
lu_p.def_batch(trailing_batch(lu_p))  # trailing batch axes: tenferro._batching


@lu_p.def_impl
def _lu_impl(a):
    A = lead(a._data)
    if A.size == 0:  # SciPy returns a 0 x 0 P for empty input (batched too): build the factors
        m, n = A.shape[-2:]
        k = min(m, n)
        batch = A.shape[:-2]
        xp = xp_of(A)
        p = xp.broadcast_to(xp.eye(m, dtype=A.dtype), batch + (m, m)).copy()
        l = xp.broadcast_to(xp.eye(m, k, dtype=A.dtype), batch + (m, k)).copy()
        u = xp.zeros(batch + (k, n), dtype=A.dtype)
    elif type(A) is not np.ndarray:
        p, l, u = _device.lu(A)
    else:  # SciPy >= 1.11 batches over leading axes
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
    return tf.slice(x, (r0, c0) + (0,) * nb, (r1, c1) + tuple(s[2:]))


# Square rule: de Hoog, Anderssen, Lukas (2011); Walter & Lehmann (2018).
# Trapezoidal (tall/wide) extension: derived in docs/ad/lu.md.
@lu_p.def_jvp
def _lu_jvp(primals, tangents):
    """With ``B = P^T dA``, ``K = min(M, N)``, ``L1``/``U1`` the leading ``K x K``
    blocks and ``X = L1^{-1} B[:K, :K] U1^{-1}``: ``dL1 = L1 tf.tril(X, -1)``,
    ``dU1 = tf.triu(X) U1``; tall: ``dL2 = (B[K:] - L2 dU) U^{-1}``; wide:
    ``dU2 = L^{-1} (B[:, K:] - dL U2)``; ``dP = 0``."""
    (a,), (da,) = primals, tangents
    p, l, u = lu_p.bind(a)
    m, n = meta(a)[0][:2]
    k = min(m, n)
    kw = dict(transpose_a=False, conjugate_a=False)
    b = mm(mT(p), da)
    l1, u1 = _block(l, 0, k, 0, k), _block(u, 0, k, 0, k)
    x = triangular_solve_p.bind(l1, _block(b, 0, k, 0, k), lower=True, left=True, unit_diagonal=True, **kw)
    x = triangular_solve_p.bind(u1, x, lower=False, left=False, unit_diagonal=False, **kw)
    dl, du = mm(l1, tf.tril(x, -1)), mm(tf.triu(x), u1)
    if m > k:  # tall: U = U1, L = [L1; L2]
        rhs = tf.subtract(_block(b, k, m, 0, n), mm(_block(l, k, m, 0, k), du))
        dl2 = triangular_solve_p.bind(u, rhs, lower=False, left=False, unit_diagonal=False, **kw)
        dl = tf.concatenate([dl, dl2], axis=0)
    if n > k:  # wide: L = L1, U = [U1 U2]
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
    p, l, u = _bind(lu_p, operand("lu", "a", a))
    return p, l, u
