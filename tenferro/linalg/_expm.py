"""Matrix exponential ``expm`` and its Fréchet derivative.

``expm_p(a)``; its JVP is ``expm_frechet_p(a, da)``, the Fréchet derivative
``L(A, E)`` (Al-Mohy and Higham 2009, SciPy's ``expm_frechet``), which is linear
in ``E`` with transpose ``L(A^T, .)`` (bilinear pairing). Its derivative in ``A``
is the top-right block of ``L([[A, E], [0, A]], [[dA, 0], [0, dA]])``
(Najfeld and Havel 1995), so every order is available, with ``E`` scaled to unit
size first (``L`` is linear in ``E``; otherwise a large ``E`` forces the scaling and
squaring of the block into many squarings). See docs/ad/expm.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from tidu import stop_gradient

from .._dispatch import dispatchable
from .._errors import fmt_shape
from .._aval import aval_of_operand, meta
from .._registry import primitive
from .._batching import trailing_batch
from .._structural import broadcast_in_dim_p
from ._errors import LinalgDTypeError, LinalgShapeError
from ._solve import _promote
from . import _device
from ._util import FAMILY, bind as _bind, check_matrix, lead, operand, wrap
from ._frechet import def_frechet_rules
from .. import _ops as tf


expm_p = primitive("expm", FAMILY)
expm_p.def_batch(trailing_batch(expm_p))  # trailing batch axes: tenferro._batching


@expm_p.def_impl
def _expm_impl(a):
    x = lead(a._data)
    if type(x) is not np.ndarray:
        return wrap(_device.expm(x))
    return wrap(scipy.linalg.expm(x))


@expm_p.def_abstract_eval
def _expm_aval(a):
    check_matrix("expm", "a", a, square=True)
    return a


expm_frechet_p = primitive("expm_frechet", FAMILY)
expm_frechet_p.def_batch(trailing_batch(expm_frechet_p))  # trailing batch axes: tenferro._batching


@expm_frechet_p.def_impl
def _expm_frechet_impl(a, e):
    A, E = lead(a._data), lead(e._data)
    if type(A) is not np.ndarray:
        return wrap(_device.expm_frechet(A, E) if A.size else A.copy())
    out = np.zeros(A.shape, dtype=A.dtype)
    if A.size:
        for idx in np.ndindex(A.shape[:-2]):
            out[idx] = scipy.linalg.expm_frechet(A[idx], E[idx], compute_expm=False)
    return wrap(out)


@expm_frechet_p.def_abstract_eval
def _expm_frechet_aval(a, e):
    check_matrix("expm_frechet", "a", a, square=True)
    check_matrix("expm_frechet", "e", e, square=True)
    if tuple(e.shape) != tuple(a.shape):
        raise LinalgShapeError(
            f"expm_frechet: the direction e must have a's shape {fmt_shape(a.shape)} "
            f"(same matrix size and batch), got {fmt_shape(e.shape)}"
        )
    if e.dtype is not a.dtype:
        raise LinalgDTypeError(
            f"expm_frechet: a and e must have the same dtype, got {a.dtype.name} and "
            f"{e.dtype.name} (expm_frechet() promotes them)"
        )
    return a


def _unit_scale(e: Any) -> Any:
    """``max |e_ij|`` of each matrix of ``e`` (1 for a zero matrix), broadcast to
    ``e``'s shape: a constant (``stop_gradient``), so dividing by it and multiplying
    back changes no derivative of a function linear in ``e``."""
    s = tuple(meta(e)[0])
    c = tf.max(tf.abs(stop_gradient(e)), axis=(0, 1))
    c = tf.where(tf.greater(c, 0), c, 1.0)
    return broadcast_in_dim_p.bind(c, shape=s, broadcast_dimensions=tuple(range(2, len(s))))


# L(A, E) is linear in E: with E scaled to unit size the block matrix [[A, E], [0, A]]
# has A's norm, so scaling and squaring chooses its scaling for A alone (an E far
# larger than A forced ~log2(|E|) squarings and lost all accuracy: jvp of
# expm_frechet(A, 1e20 E), hvp of expm at norm 50)
def_frechet_rules(expm_frechet_p, lambda e, a: _unit_scale(e))


def _expm_jvp(da, out, a):
    return expm_frechet_p.bind(a, da)


expm_p.def_jvp_per_arg(_expm_jvp)


@dispatchable
def expm(a: Any) -> Any:
    """Matrix exponential of each matrix of ``a`` ``[N, N, B...]`` (scaling and
    squaring, SciPy). Derivatives through the exact Fréchet derivative."""
    return _bind(expm_p, operand("expm", "a", a))


def expm_frechet(a: Any, e: Any) -> Any:
    """Fréchet derivative ``L(a, e) = d/dt expm(a + t e)`` at ``t = 0`` for square
    ``a`` and ``e`` of the same shape ``[N, N, B...]`` (dtypes are promoted)."""
    a = operand("expm_frechet", "a", a)
    e = operand("expm_frechet", "e", e)
    check_matrix("expm_frechet", "a", aval_of_operand(a), square=True)
    check_matrix("expm_frechet", "e", aval_of_operand(e), square=True)
    a, e = _promote("expm_frechet", a, e)
    return _bind(expm_frechet_p, a, e)
