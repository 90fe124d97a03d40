"""General (non-Hermitian) eigendecomposition ``eig``.

``eig_p(a)`` returns ``[w, V]`` (complex, ``a V = V diag(w)``), with LAPACK's
normalization: unit 2-norm columns. Derivative rule: docs/ad/eig.md (Giles 2008;
Boeddeker et al. 2017): ``dw = diag(V^{-1} dA V)``,
``dV = V (F o V^{-1} dA V)`` then projected so that ``v_k^H dv_k = 0`` (norm kept,
phase fixed) — the stated normalization of the derivative.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import fmt_shape
from .._aval import meta
from .._registry import primitive
from .._batching import trailing_batch
from ._errors import ConvergenceError, SingularMatrixError
from ._solve import solve_p
from . import _device
from ._util import FAMILY, bind as _bind, check_matrix, concrete, lead, operand, wrap
from ._lapack import numerically_singular
from ._matops import as_cols, as_rows, mH, mm, to_dtype
from ._spectral import gap_inverse
from ._gauge import GAUGE_RTOL, bind_probed, block_reach, gauge_guard, second_order_check
from .. import _ops as tf


eig_p = primitive("eig", FAMILY, multiple_results=True)
eig_p.def_batch(trailing_batch(eig_p))  # trailing batch axes: tenferro._batching


@eig_p.def_impl
def _eig_impl(a):
    x = lead(a._data)
    cdt = np.result_type(x.dtype, np.complex64)
    try:
        if type(x) is np.ndarray:
            w, v = np.linalg.eig(x)
        else:  # cuSOLVER geev (CuPy >= 14)
            w, v = _device.run("eig", _device.routine("eig", "cupy.linalg", "eig"), x)
    except np.linalg.LinAlgError as e:
        raise ConvergenceError(f"eig: LAPACK geev did not converge for input of shape {a.shape}: {e}") from None
    return [wrap(w.astype(cdt, copy=False), 1), wrap(v.astype(cdt, copy=False))]


@eig_p.def_abstract_eval
def _eig_aval(a):
    check_matrix("eig", "a", a, square=True)
    c = a.dtype.complex_dtype
    return [a.update(shape=(a.shape[0],) + tuple(a.shape[2:]), dtype=c), a.update(dtype=c)]


def _eig_gauge_check(cts: list, res: list, rtol: float) -> str | None:
    _, ct_v = cts  # (the values' cotangent: no gauge)
    if ct_v is None:
        return None
    w, v = res
    # only the phase of each (unit-norm) column is free: Im diag(V^H G_V) must vanish
    # (relative to ||V|| ||G_V||, not to max |d|: d is rounding noise for an
    # invariant loss, e.g. the cotangents of a second-order reverse pass)
    d = np.sum(np.conj(lead(v)) * np.conj(lead(ct_v)), axis=-2)
    denom = float(np.linalg.norm(v)) * float(np.linalg.norm(ct_v))
    r = float(np.max(np.abs(np.imag(d))) / denom) if d.size and denom > 0 else 0.0
    if r > GAUGE_RTOL:
        return (
            f"eig: the loss depends on the phase of the eigenvectors (relative size {r:.2e}); "
            "eigenvectors are defined only up to a phase, so this gradient is ill-defined."
        )
    return None


@eig_p.def_jvp
def _eig_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    (w, v), parent, probe = bind_probed(eig_p, a)
    cd = meta(v)[1]
    da = to_dtype(da, cd)
    vv = concrete(v)
    if vv is not None and numerically_singular(vv):
        raise _defective(meta(a)[0])
    try:
        m = solve_p.bind(v, mm(da, v), transposed=False)  # V^{-1} dA V
    except SingularMatrixError:
        raise _defective(meta(a)[0]) from None
    # order >= 2: a direction that couples a repeated eigenvalue's vectors (in-block m_ij != 0)
    second = second_order_check("eig", w, m, da, parent, probe, _eig_reach, hermitian=False)
    dw = tf.extract_diag(m)
    n = meta(w)[0][0]
    f = gap_inverse(tf.subtract(as_cols(w, n), as_rows(w, n)), w)  # 1 / (w_j - w_i), 0 where degenerate
    dv = mm(v, tf.multiply(f, m))
    dv = tf.subtract(dv, tf.multiply(v, as_cols(tf.extract_diag(mm(mH(v), dv)), n)))  # v_k^H dv_k = 0
    dw, dv = gauge_guard([dw, dv], [w, v], _eig_gauge_check, second)
    return [w, v], [dw, dv]


def _eig_reach(cts: list, dcts: list, res: list, dres: list, blind: bool) -> float:
    """How much the cotangents of a pass of order >= 2 touch a repeated eigenvalue
    (:func:`._gauge.block_reach` of the values' cotangent; arrays, trailing batch): a cotangent
    of the eigenvectors (not orthonormal: no finer test) counts as touching."""
    (w, _), ((c_w, c_v), (dc_w, dc_v)) = res, (cts, dcts)
    if c_v is not None or dc_v is not None:
        return 1.0
    return block_reach(w, (c_w, dc_w), [], blind)


def _defective(shape: tuple) -> SingularMatrixError:
    return SingularMatrixError(
        f"eig: the eigenvector matrix V of a of shape {fmt_shape(shape)} is (numerically) singular: a is defective (not "
        "diagonalizable), where the derivative of eig is undefined"
    )


def eig(a: Any) -> tuple[Any, Any]:
    """Eigenvalues and right eigenvectors of square matrices ``[N, N, B...]``:
    ``(w [N, B...], V [N, N, B...])``, both complex, ``a @ V = V @ diag(w)``, columns
    of V of unit 2-norm. Derivative of V under the normalization ``v_k^H dv_k = 0``;
    a loss that depends on the eigenvectors' phases triggers a GaugeWarning.
    Needs distinct eigenvalues (diagonalizable input): at a repeated eigenvalue the first
    derivative of a function of the values is exact, and a derivative of order >= 2 that couples
    the repeated eigenvalue's vectors raises a ``DegeneracyWarning`` (as ``eigh``, ``svd``)."""
    w, v = _bind(eig_p, operand("eig", "a", a))
    return w, v


def eigvals(a: Any) -> Any:
    """Eigenvalues ``[N, B...]`` (complex) of square matrices."""
    return _bind(eig_p, operand("eigvals", "a", a))[0]
