"""The inverses of spectral gaps that the derivative rules of eigh, svd and eig
need (rule side: tenferro ops).

:func:`gap_inverse` forms ``numerator / d`` for the pairwise differences (or sums)
``d`` of a spectrum as ``config.broadening`` says: exact outside the degeneracy
threshold ``config.degeneracy_rtol`` (default), exact with no threshold, or
Lorentzian-broadened (:func:`broadened_inverse`). See docs/ad/gauge.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._structural import broadcast_in_dim_p, convert_element_type
from .._compare import less_equal
from .._aval import fortran, meta, xp_of
from .._tensor import Tensor

from .. import _ops as tf
from ._config import config
from ._util import concrete
from ._matops import _divide_where, as_cols, as_rows, const


def broadened_inverse(d: Any) -> Any:
    """``conj(d) / (|d|**2 + eps)`` (Lorentzian broadening of ``1/d``), elementwise,
    with ``eps = config.broadening > 0`` (its one caller, :func:`gap_inverse`, uses it
    only then); ``d == 0`` gives ``0 / eps = 0``, no guard needed."""
    eps = config.broadening
    cplx = meta(d)[1].is_complex
    if type(d) is Tensor:  # a constant (not differentiated here): one NumPy pass
        x = d._data
        mag2 = (x.real * x.real + x.imag * x.imag) if cplx else x * x
        return Tensor._wrap(fortran((x.conj() if cplx else x) / (mag2 + eps)))
    mag2 = tf.real(tf.multiply(d, tf.conj(d))) if cplx else tf.multiply(d, d)
    return tf.divide(tf.conj(d) if cplx else d, tf.add(mag2, eps))


#: Machine epsilons of the values' precision below which no threshold goes: the computed values of
#: an exactly repeated eigenvalue (singular value) differ by a few units in their last place, so
#: ``degeneracy_rtol`` (1e-9, sized for float64) would call a float32 pair split by rounding
#: separated and divide rounding by rounding (a projector's gradient at a repeated eigenvalue was
#: off by 700% in float32). float32: 64 eps = 7.6e-6; float64: 1.4e-14, below the default.
RTOL_FLOOR_EPS = 64


def effective_rtol(rtol: float, dtype: Any) -> float:
    """The degeneracy threshold for values of ``dtype`` (a NumPy or tenferro dtype):
    ``max(rtol, RTOL_FLOOR_EPS * eps)``; 0 stays 0 (exact: no threshold asked for)."""
    if not rtol:
        return rtol
    return max(rtol, RTOL_FLOOR_EPS * float(np.finfo(getattr(dtype, "numpy", dtype)).eps))


def gap_inverse(d: Any, values: Any, numerator: float = 1.0, zero_cluster: bool = False) -> Any:
    """``numerator / d`` elementwise for ``d`` ``[N, N, B...]``, the pairwise
    differences (or sums) of the spectrum ``values`` ``[N, B...]``, as the derivative
    rules of eigh, svd and eig need it; ``config.broadening`` says how (see
    ``_config.py``):

    * ``None`` (default): exact ``numerator / d``, and 0 where
      ``|d| <= tol = config.degeneracy_rtol * max|values|`` (per matrix: the pairs the
      degeneracy threshold calls degenerate, the diagonal included); with
      ``zero_cluster=True`` (svd) pairs of two numerically zero values
      (``|v_i|, |v_j| <= tol``: the null space of rank-deficient input) are used as
      computed (docs/ad/gauge.md, "Zero singular values"); exact zeros ``d == 0``
      always give 0;
    * ``0``: exact, 0 only where ``d == 0``;
    * ``eps > 0``: the Lorentzian ``numerator conj(d) / (|d|**2 + eps)``.

    The mask is a constant (piecewise constant in the values): its derivative is 0,
    so masked entries stay 0 to every order."""
    eps = config.broadening
    if eps:
        inv = broadened_inverse(d)
        return inv if numerator == 1.0 else tf.multiply(inv, numerator)
    rtol = float(config.degeneracy_rtol) if eps is None else 0.0
    if type(d) is Tensor and type(values) is Tensor:  # constants (first-order pass): NumPy
        x = d._data
        return Tensor._wrap(fortran(_divide_where(numerator, x, _separated(x, values._data, rtol, zero_cluster), x)))
    xd, xv = concrete(d), concrete(values)
    if xd is not None and xv is not None:
        keep = _separated(xd, xv, rtol, zero_cluster)
        rdt = xd.real.dtype
        keep_f, drop_f = const(keep.astype(rdt), like=d), const((~keep).astype(rdt), like=d)
    elif 0 in meta(d)[0]:
        return d
    else:  # abstract values (a staged graph): the same mask with tenferro ops
        keep_f = _separated_ops(d, values, rtol, zero_cluster)
        drop_f = tf.subtract(1.0, keep_f)
    safe = tf.add(tf.multiply(d, keep_f), drop_f)  # d where kept, 1 where masked
    return tf.multiply(tf.divide(numerator, safe), keep_f)


def _separated(x: Any, values: Any, rtol: float, zero_cluster: bool) -> Any:
    """Where :func:`gap_inverse` keeps ``1/x`` (``x`` ``[N, N, B...]``, ``values``
    ``[N, B...]``; NumPy or CuPy booleans): ``x != 0`` and either ``|x| > tol`` or
    (``zero_cluster``) both values numerically zero, ``tol = rtol * max|values|`` per
    matrix."""
    xp = xp_of(x)
    if not rtol or values.size == 0:
        return x != 0
    rtol = effective_rtol(rtol, values.dtype)
    mag = xp.abs(values)
    tol = rtol * xp.max(mag, axis=0)  # [B...]
    keep = xp.abs(x) > tol  # (implies x != 0: tol >= 0)
    if zero_cluster:
        small = mag <= tol  # [N, B...]
        if type(small) is not np.ndarray or small.any():  # (on a GPU: no read, always)
            keep |= small[None, :] & small[:, None] & (x != 0)
    return keep


def degenerate_pairs(values: Any, zero_cluster: bool = False) -> Any:
    """The off-diagonal pairs ``(i, j)`` of ``values`` ``[N, B...]`` (NumPy or CuPy) that
    :func:`gap_inverse` masks, i.e. treats as exactly degenerate (``[N, N, B...]``
    booleans), leaving out pairs of two numerically zero values with ``zero_cluster``
    (svd: their computed values are used, or they are exact zeros, docs/ad/gauge.md);
    None under Lorentzian broadening (``config.broadening > 0``: nothing is masked, the
    bias is deliberate). For the checks of :mod:`._gauge`."""
    eps = config.broadening
    if eps:
        return None
    rtol = effective_rtol(float(config.degeneracy_rtol), values.dtype) if eps is None else 0.0
    xp = xp_of(values)
    n = values.shape[0]
    d = values[None, :] - values[:, None]
    masked = ~_separated(d, values, rtol, zero_cluster)
    masked &= ~xp.eye(n, dtype=bool).reshape((n, n) + (1,) * (values.ndim - 1))
    if zero_cluster and values.size:
        mag = xp.abs(values)
        small = mag <= rtol * xp.max(mag, axis=0)
        masked &= ~(small[None, :] & small[:, None])
    return masked


def _separated_ops(d: Any, values: Any, rtol: float, zero_cluster: bool) -> Any:
    """:func:`_separated` with tenferro ops (abstract values), as a 0/1 float tensor."""
    shape, dt = meta(d)
    nb = len(shape) - 2
    n = shape[0]
    mag = tf.abs(values)  # [N, B...]
    tol = tf.multiply(tf.max(mag, axis=0), effective_rtol(rtol, meta(values)[1]))  # [B...]
    tol_nn = broadcast_in_dim_p.bind(tol, shape=tuple(shape), broadcast_dimensions=tuple(range(2, 2 + nb)))
    tol_n = broadcast_in_dim_p.bind(tol, shape=tuple(meta(values)[0]), broadcast_dimensions=tuple(range(1, 1 + nb)))
    rdt = dt.real_dtype
    far = convert_element_type(tf.greater(tf.abs(d), tol_nn), rdt)
    if zero_cluster:
        small = convert_element_type(less_equal(mag, tol_n), rdt)
        far = tf.maximum(far, tf.multiply(as_cols(small, n), as_rows(small, n)))
    return tf.multiply(convert_element_type(tf.not_equal(d, 0.0), rdt), far)
