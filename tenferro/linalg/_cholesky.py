"""Cholesky factorization ``herm(a) = L L^H`` (lower ``L``).

Derivative rule: docs/ad/cholesky.md (Murray 2016; Seeger et al. 2017):
``dL = L Phi(L^{-1} dA_h L^{-H})`` with ``Phi`` = lower triangle, halved diagonal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import fmt_shape
from .._aval import meta
from .._registry import primitive
from .._batching import trailing_batch
from .._tensor import Tensor
from ._eigh import hermitian_part
from ._errors import NonPositiveDefiniteError
from ._solve import triangular_solve_p
from ._util import FAMILY, bind as _bind, check_matrix, lead, operand
from ._lapack import lapack
from ._matops import eye_mask, mm
from .. import _ops as tf


cholesky_p = primitive("cholesky", FAMILY)
cholesky_p.def_batch(trailing_batch(cholesky_p))  # trailing batch axes: tenferro._batching


@cholesky_p.def_impl
def _cholesky_impl(a):
    x = lead(a._data)
    h = 0.5 * (x + np.conj(np.swapaxes(x, -1, -2)))
    n, batch, dt = a._data.shape[0], a._data.shape[2:], a._data.dtype
    try:  # LAPACK potrf reads the lower triangle; the gufunc zeroes the upper one
        (l,) = lapack("cholesky", "cholesky", [h], [((n, n) + batch, dt, 2)])
        return Tensor._wrap(l)
    except np.linalg.LinAlgError:
        raise NonPositiveDefiniteError(
            f"cholesky: the (Hermitian part of the) matrix a of shape {fmt_shape(a.shape)} is not positive definite"
        ) from None


@cholesky_p.def_abstract_eval
def _cholesky_aval(a):
    check_matrix("cholesky", "a", a, square=True)
    return a


def _phi(x: Any) -> Any:
    """Lower triangle with the diagonal halved."""
    s, d = meta(x)
    half_diag = tf.multiply(x, tf.multiply(eye_mask(s[0], s[1], tuple(s[2:]), d, like=x), 0.5))
    return tf.add(tf.tril(x, -1), half_diag)


def _cholesky_jvp(da, l, a):
    z = triangular_solve_p.bind(
        l, hermitian_part(da), lower=True, left=True, transpose_a=False, conjugate_a=False, unit_diagonal=False
    )  # L^{-1} dA
    z = triangular_solve_p.bind(
        l, z, lower=True, left=False, transpose_a=True, conjugate_a=meta(l)[1].is_complex, unit_diagonal=False
    )  # ... L^{-H}
    return mm(l, _phi(z))


cholesky_p.def_jvp_per_arg(_cholesky_jvp)


def cholesky(a: Any) -> Any:
    """Lower Cholesky factor ``L`` ``[N, N, B...]`` with ``herm(a) = L @ L^H``.

    The input is treated as its Hermitian part ``(a + a^H) / 2`` (not only its
    lower triangle), so the gradient is Hermitian (as in JAX). Raises
    NonPositiveDefiniteError when that part is not positive definite."""
    return _bind(cholesky_p, operand("cholesky", "a", a))
