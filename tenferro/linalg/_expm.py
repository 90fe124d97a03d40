"""Matrix exponential ``expm`` and its Fréchet derivative.

``expm_p(a)``; its JVP is ``expm_frechet_p(a, da)``, the Fréchet derivative
``L(A, E)`` (Al-Mohy and Higham 2009, SciPy's ``expm_frechet``), which is linear
in ``E`` with transpose ``L(A^T, .)`` (bilinear pairing). Its derivative in ``A``
is the top-right block of ``L([[A, E], [0, A]], [[dA, 0], [0, dA]])``
(Najfeld and Havel 1995), so every order is available. See docs/ad/expm.md.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from tidu import Zero, is_undefined

from .._prim import as_operand, meta, primitive
from ._util import bind as _bind
from ._util import FAMILY, check_matrix, columns, lead, mT, place_columns, place_rows, rows, wrap


def _tf():
    import tenferro as tf  # noqa: PLC0415

    return tf


expm_p = primitive("expm", FAMILY)


@expm_p.def_impl
def _expm_impl(a):
    return wrap(scipy.linalg.expm(lead(a._data)))


@expm_p.def_abstract_eval
def _expm_aval(a):
    check_matrix("expm", "a", a, square=True)
    return a


expm_frechet_p = primitive("expm_frechet", FAMILY)


@expm_frechet_p.def_impl
def _expm_frechet_impl(a, e):
    A, E = lead(a._data), lead(e._data)
    if A.ndim == 2:
        return wrap(scipy.linalg.expm_frechet(A, E, compute_expm=False))
    out = np.empty(np.broadcast_shapes(A.shape, E.shape), dtype=np.result_type(A, E))
    for idx in np.ndindex(A.shape[:-2]):
        out[idx] = scipy.linalg.expm_frechet(A[idx], E[idx], compute_expm=False)
    return wrap(out)


@expm_frechet_p.def_abstract_eval
def _expm_frechet_aval(a, e):
    check_matrix("expm_frechet", "a", a, square=True)
    return e


def _block(a: Any, e: Any) -> Any:
    """``[[a, e], [0, a]]`` (2n x 2n)."""
    tf = _tf()
    n = meta(a)[0][0]
    top = tf.add(place_columns(a, 2 * n, 0), place_columns(e, 2 * n, n))
    bottom = place_columns(a, 2 * n, n)
    return tf.add(place_rows(top, 2 * n, 0), place_rows(bottom, 2 * n, n))


def _frechet_jvp_a(da, out, a, e):
    n = meta(a)[0][0]
    big = expm_frechet_p.bind(_block(a, e), _block(da, _tf().multiply(da, 0.0)))
    return columns(rows(big, 0, n), n, 2 * n)


def _frechet_jvp_e(de, out, a, e):
    return expm_frechet_p.bind(a, de)


expm_frechet_p.def_jvp_per_arg(_frechet_jvp_a, _frechet_jvp_e)


@expm_frechet_p.def_transpose
def _expm_frechet_transpose(ct, a, e):
    assert not is_undefined(a), "expm_frechet is linear in its second argument only"
    if type(ct) is Zero:
        return [None, None]
    return [None, expm_frechet_p.bind(mT(a), ct)]


def _expm_jvp(da, out, a):
    return expm_frechet_p.bind(a, da)


expm_p.def_jvp_per_arg(_expm_jvp)


def expm(a: Any) -> Any:
    """Matrix exponential of each matrix of ``a`` ``[N, N, B...]`` (scaling and
    squaring, SciPy). Derivatives through the exact Fréchet derivative."""
    return _bind(expm_p, as_operand("expm", a))


def expm_frechet(a: Any, e: Any) -> Any:
    """Fréchet derivative ``L(a, e) = d/dt expm(a + t e)`` at ``t = 0``."""
    return _bind(expm_frechet_p, as_operand("expm_frechet", a), as_operand("expm_frechet", e))
