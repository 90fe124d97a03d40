"""Vector and matrix norms, composed from tenferro operations (so their
derivatives come from those of ``abs``, ``sum``, ``max``, ``svd``, ...).
See docs/ad/norm.md. Norms are not differentiable where they are not smooth
(at zero, at ties of ``max``); the rules then give one subgradient. At ``x = 0``
the 2-norm, Frobenius norm and p-norms (p > 1) use the double-``where`` form
``where(s == 0, 0, root(where(s == 0, 1, s)))`` of ``root(s)``, ``s = sum |x|^p``,
so their derivatives of every order are 0 there (never NaN). A p-norm with p < 0
is 0 where any entry is 0 (as NumPy: ``|0|^p = inf``), with derivatives 0 there."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._dispatch import dispatchable
from .._errors import TenferroValueError
from .._aval import meta
from .._tensor import Tensor
from .._shape import normalize_axes
from ._svd import svdvals
from ._util import operand
from .. import _ops as tf


def _abs2(x: Any) -> Any:
    return tf.real(tf.multiply(x, tf.conj(x))) if meta(x)[1].is_complex else tf.multiply(x, x)


def _safe_root(s: Any, p: float) -> Any:
    """``s ** (1/p)`` for ``s >= 0`` whose derivatives are 0 (not inf * 0 = NaN) where
    ``s == 0``: the root is evaluated at 1 there and its result replaced by 0, so
    neither branch of ``where`` carries an infinite derivative (double ``where``)."""
    zero = tf.equal(s, 0.0)
    safe = tf.where(zero, 1.0, s)
    root = tf.sqrt(safe) if p == 2 else tf.power(safe, 1.0 / p)
    return tf.where(zero, 0.0, root)


_SQUARES_SAFE = (1e-290, 1e290)
"""Sums of squares inside this range lost nothing to under- or overflow: their square root is the norm
(as it was computed before); outside it the entries are scaled first (:func:`_two_norm`)."""


def _two_norm(x: Any, axes: tuple) -> Any:
    """``sqrt(sum |x|^2)`` over ``axes``; where the sum of squares leaves
    :data:`_SQUARES_SAFE`, ``m sqrt(sum |x / m|^2)`` with ``m`` the largest magnitude (LAPACK's
    ``nrm2``): unscaled, the squares of 3e-200 and 4e-200 underflowed to a norm and a gradient of 0,
    those of 3e200 overflowed to inf. The scaled form is the norm for every ``m > 0``, so its
    derivative is the norm's (the terms through ``m`` cancel); each branch is evaluated where it is
    safe (double ``where``), so the other adds no NaN to the derivative."""
    if any(meta(x)[0][a] == 0 for a in axes):  # no entries: the norm 0 (max has no identity)
        return _safe_root(tf.sum(_abs2(x), axis=axes), 2)
    with np.errstate(over="ignore", under="ignore"):  # (the squares the scaled branch replaces)
        s = tf.sum(_abs2(x), axis=axes)
    lo, hi = _SQUARES_SAFE
    if type(s) is Tensor and isinstance(s._data, np.ndarray):  # concrete on the host (no derivative to keep)
        v = s._data
        if np.all((v > lo) & (v < hi)):  # the common case: one square root, as before (0 may be an underflow)
            return tf.sqrt(s)
    ok = tf.where(tf.greater(s, lo), tf.where(tf.less(s, hi), 1.0, 0.0), 0.0)
    ok = tf.equal(ok, 1.0)
    plain = tf.sqrt(tf.where(ok, s, 1.0))
    m = tf.max(tf.abs(x), axis=axes, keepdims=True)
    m = tf.where(tf.equal(m, 0.0), 1.0, m)  # a zero block: its norm 0, derivatives 0 (_safe_root)
    scaled = tf.sum(m, axis=axes) * _safe_root(tf.sum(_abs2(x / m), axis=axes), 2)  # (sum: m without its kept axes)
    return tf.where(ok, plain, scaled)


def _vector_norm(x: Any, ord: Any, axes: tuple) -> Any:
    if ord is None or ord == 2:
        return _two_norm(x, axes)
    if ord == np.inf:
        return tf.max(tf.abs(x), axis=axes)
    if ord == -np.inf:
        return tf.min(tf.abs(x), axis=axes)
    if ord == 1:
        return tf.sum(tf.abs(x), axis=axes)
    if isinstance(ord, float) and np.isnan(ord):
        raise TenferroValueError("norm: ord is NaN; expected None, 1, 2, inf, -inf or a non-zero real number")
    if ord == 0:
        raise TenferroValueError(
            "norm: ord=0 (count of non-zeros) is not a norm and has no derivative; use sum(x != 0)"
        )
    if isinstance(ord, (int, float)) and not isinstance(ord, bool):
        p = float(ord)
        ax = tf.abs(x)
        zero = tf.equal(ax, 0.0)  # |x_i|^p with zero derivatives at x_i = 0 (double where)
        terms = tf.where(zero, 0.0, tf.power(tf.where(zero, 1.0, ax), p))
        if p > 0:
            return _safe_root(tf.sum(terms, axis=axes), p)
        # p < 0: |0|^p = inf, so any zero entry makes the norm 0 (NumPy); there the value is
        # 0 near it along every other entry and >= 0 everywhere: derivatives 0 (no NaN)
        any_zero = tf.greater(tf.sum(tf.where(zero, 1.0, 0.0), axis=axes), 0.0)
        return tf.where(any_zero, 0.0, _safe_root(tf.sum(terms, axis=axes), p))
    raise TenferroValueError(f"norm: invalid ord {ord!r} for a vector norm; expected None, 1, 2, inf, -inf or a number")


def _matrix_norm(x: Any, ord: Any) -> Any:
    """Matrix norm over axes (0, 1) of ``x`` [M, N, B...]."""
    if ord is None or ord == "fro":
        return _two_norm(x, (0, 1))
    if ord == "nuc":
        return tf.sum(svdvals(x), axis=0)
    if ord in (2, -2):
        return _extreme(svdvals(x), ord > 0, ord)
    if ord in (1, -1):  # max/min column sum
        return _extreme(tf.sum(tf.abs(x), axis=0), ord > 0, ord)
    if ord in (np.inf, -np.inf):  # max/min row sum
        return _extreme(tf.sum(tf.abs(x), axis=1), ord > 0, ord)
    raise TenferroValueError(
        f"norm: invalid ord {ord!r} for a matrix norm; expected None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf"
    )


def _extreme(v: Any, largest: bool, ord: Any) -> Any:
    """The largest (smallest) entry of ``v`` over axis 0; over no entries (an empty matrix) the
    largest is 0 and the smallest undefined, as NumPy's ``norm``."""
    shape = meta(v)[0]
    if shape[0] == 0:
        if largest:
            return tf.sum(v, axis=0)  # zeros of the batch shape
        raise TenferroValueError(
            f"norm: ord={ord!r} of an empty matrix is a minimum over no values; expected a matrix with entries"
        )
    return tf.max(v, axis=0) if largest else tf.min(v, axis=0)


@dispatchable
def norm(x: Any, ord: Any = None, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
    """Vector or matrix norm, like ``numpy.linalg.norm`` but batch-last:

    * ``axis=None``: a vector norm of all elements when ``ord`` is None (2-norm of
      the flattened tensor), else ``x`` must be 1-d (vector norm) or ≥ 2-d
      (matrix norm over axes (0, 1), batch axes after);
    * ``axis`` an int: vector norm along it; a pair: matrix norm over those axes.

    Vector ``ord``: None/2, 1, inf, -inf, any real p. Matrix ``ord``: None/'fro',
    'nuc', 2, -2 (extreme singular values), 1, -1 (column sums), inf, -inf (row sums).
    """
    x = operand("norm", "x", x)
    shape = tuple(meta(x)[0])
    nd = len(shape)
    if axis is None:
        if ord is None:
            axes = tuple(range(nd))
            r = _vector_norm(x, None, axes)
            return tf.reshape(r, (1,) * nd) if keepdims else r
        axes = (0,) if nd == 1 else (0, 1)
    else:
        axes = normalize_axes("norm", axis, nd)
        if not isinstance(axis, (int, np.integer)):
            axes = tuple(int(a) % nd for a in axis)
    if len(axes) == 1:
        r = _vector_norm(x, ord, axes)
    elif len(axes) == 2:
        rest = tuple(i for i in range(nd) if i not in axes)
        xt = tf.transpose(x, axes + rest) if axes + rest != tuple(range(nd)) else x
        r = _matrix_norm(xt, ord)
    else:
        raise TenferroValueError(f"norm: axis must be an int or a pair of ints, got {axis!r}")
    if keepdims:
        r = tf.reshape(r, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return r
