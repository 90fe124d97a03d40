"""Principal logarithm ``logm`` of general (non-Hermitian) matrices and its
Fréchet derivative ``logm_frechet_p``.

``logm_p(a)`` is SciPy's ``logm`` (inverse scaling and squaring, Al-Mohy and
Higham 2012). Its Fréchet derivative uses the block identity (Higham, *Functions
of Matrices*, 2008, Thm. 3.6 / eq. (3.16); Mathias 1996):
``log([[A, E], [0, A]]) = [[log A, L(A, E)], [0, log A]]``, exact for any ``E``.
``L`` is linear in ``E``, so the impl evaluates it at ``E / c`` with
``c = ||E||_1 / ||A||_1`` and multiplies by ``c``: the block stays as well scaled
as ``A`` whatever the size of ``E``. Transpose in ``E``: ``L(A^T, .)`` (bilinear
pairing). Derivative in ``A``: the top-right block of
``L([[A, E], [0, A]], [[dA, 0], [0, dA]])`` (the same identity one level up),
with ``E`` normalised by a constant (exact, as ``L`` is linear in ``E``). So every
order is available and exact. Derivations: docs/ad/funm.md.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg

from tidu import stop_gradient

from .._aval import meta
from .._dispatch import dispatchable
from .._errors import fmt_shape
from .._registry import primitive
from .._batching import trailing_batch
from .._structural import broadcast_in_dim_p
from ._errors import DomainError, LinalgShapeError
from ._sqrtm import per_matrix, real_principal
from ._util import FAMILY, bind as _bind, check_matrix, operand
from ._frechet import def_frechet_rules
from .. import _ops as tf

__all__ = ["logm", "logm_p", "logm_frechet_p"]


def _logm_one(x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = scipy.linalg.logm(x)
    if any("singular" in str(w.message) for w in caught):
        raise DomainError("logm: the matrix is singular (an eigenvalue 0): it has no logarithm")
    return real_principal("logm", r, not np.iscomplexobj(x), "logarithm")


logm_p = primitive("logm", FAMILY)
logm_p.def_batch(trailing_batch(logm_p))  # trailing batch axes: tenferro._batching


@logm_p.def_impl
def _logm_impl(a):
    return per_matrix(_logm_one, a._data, dtype=a._data.dtype)


@logm_p.def_abstract_eval
def _logm_aval(a):
    check_matrix("logm", "a", a, square=True)
    return a


def _logm_jvp(da, out, a):
    return logm_frechet_p.bind(a, da)


logm_p.def_jvp_per_arg(_logm_jvp)


logm_frechet_p = primitive("logm_frechet", FAMILY)
logm_frechet_p.def_batch(trailing_batch(logm_frechet_p))  # trailing batch axes: tenferro._batching


def _frechet_one(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    n = x.shape[0]
    ne, nx = np.linalg.norm(e, 1), np.linalg.norm(x, 1)
    if ne == 0:
        return np.zeros_like(e)
    c = ne / nx if nx > 0 else 1.0
    block = np.block([[x, e / c], [np.zeros_like(x), x]])
    return c * _logm_one(block)[:n, n:]


@logm_frechet_p.def_impl
def _logm_frechet_impl(a, e):
    return per_matrix(_frechet_one, a._data, e._data, dtype=a._data.dtype)


@logm_frechet_p.def_abstract_eval
def _logm_frechet_aval(a, e):
    check_matrix("logm_frechet", "a", a, square=True)
    if tuple(e.shape) != tuple(a.shape) or e.dtype is not a.dtype:
        raise LinalgShapeError(
            f"logm_frechet: e must have a's shape {fmt_shape(a.shape)} and dtype {a.dtype.name}, "
            f"got {fmt_shape(e.shape)} {e.dtype.name}"
        )
    return a


def _scale(e: Any, a: Any) -> Any:
    """``c = ||e||_1 / ||a||_1`` per matrix (1 where either is zero), broadcast to
    ``e``'s shape: a constant (``stop_gradient``), written with tenferro ops so that
    staged graphs (jit) scale too."""
    s = tuple(meta(e)[0])
    ne = tf.max(tf.sum(tf.abs(stop_gradient(e)), axis=0), axis=0)
    na = tf.max(tf.sum(tf.abs(stop_gradient(a)), axis=0), axis=0)
    positive = tf.greater(na, 0)
    c = tf.where(positive, tf.where(tf.greater(ne, 0), tf.divide(ne, tf.where(positive, na, 1.0)), 1.0), 1.0)
    return broadcast_in_dim_p.bind(c, shape=s, broadcast_dimensions=tuple(range(2, len(s))))


def_frechet_rules(logm_frechet_p, _scale)


@dispatchable
def logm(a: Any) -> Any:
    """Principal logarithm of each matrix of ``a`` ``[N, N, B...]`` (SciPy's
    ``logm``; eigenvalues of the result with imaginary part in ``(-pi, pi)``).

    Real input gives a real result; if the principal logarithm is not real (an
    eigenvalue on the negative real axis) :class:`DomainError` asks for complex
    input; a singular matrix raises :class:`DomainError`. Derivatives of every order
    through the block identity ``log([[A, E], [0, A]])`` (Higham 2008, Thm. 3.6)
    with ``E`` normalised to ``A``'s scale."""
    return _bind(logm_p, operand("logm", "a", a))
