"""Hermitian eigendecomposition: ``eigh`` and ``eigvalsh``.

``eigh_p(a)`` returns ``[w, V]`` with ``herm(a) = V diag(w) V^H``,
``herm(a) = (a + a^H) / 2``, ``w`` ascending, shapes ``[N, B...]`` and
``[N, N, B...]``. Derivative rule: docs/ad/eigh.md (Giles 2008; Seeger et al.
2017; Liao et al. 2019 for the optional broadening).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dispatch import dispatchable
from .._registry import primitive
from .._batching import trailing_batch
from .._tensor import Tensor
from ._errors import ConvergenceError
from ._util import FAMILY, bind as _bind, check_matrix, lead, operand
from ._lapack import lapack
from ._matops import diff_matrix, mH, mhm, mm
from ._spectral import gap_inverse
from ._gauge import (
    GAUGE_RTOL,
    bind_probed,
    block_reach,
    degeneracy_dependence,
    degeneracy_tolerance,
    gauge_guard,
    gauge_violation,
    second_order_check,
)
from .. import _ops as tf


def hermitian_part(x: Any) -> Any:
    """``(x + x^H) / 2`` of each matrix."""
    return tf.multiply(tf.add(x, mH(x)), 0.5)


eigh_p = primitive("eigh", FAMILY, multiple_results=True)
eigh_p.def_batch(trailing_batch(eigh_p))  # trailing batch axes: tenferro._batching


@eigh_p.def_impl
def _eigh_impl(a):
    x = lead(a._data)
    h = 0.5 * (x + np.conj(np.swapaxes(x, -1, -2)))
    n, batch, dt = a._data.shape[0], a._data.shape[2:], a._data.dtype
    try:  # LAPACK syevd/heevd (as NumPy, PyTorch), straight into the canonical layout
        w, v = lapack(
            "eigh", "eigh", [h], [((n,) + batch, dt.type(0).real.dtype, 1), ((n, n) + batch, dt, 2)], UPLO="L"
        )
    except np.linalg.LinAlgError as e:
        raise ConvergenceError(f"eigh: LAPACK did not converge for input of shape {a.shape}: {e}") from None
    return [Tensor._wrap(w), Tensor._wrap(v)]


@eigh_p.def_abstract_eval
def _eigh_aval(a):
    check_matrix("eigh", "a", a, square=True)
    return [a.update(shape=(a.shape[0],) + tuple(a.shape[2:]), dtype=a.dtype.real_dtype), a]


def _eigh_gauge_check(cts: list, res: list, rtol: float) -> list:
    """Invariance under V -> V D for unitary D commuting with diag(w); and a loss that
    depends on both the values and the vectors of a degenerate block (docs/ad/gauge.md)."""
    ct_w, ct_v = cts
    if ct_v is None:  # eigenvalues only: nothing to check
        return []
    w, v = res
    values = lead(w, 1)
    cplx = np.iscomplexobj(v)
    if not cplx and not degeneracy_tolerance(values, rtol)[1]:  # real, no degenerate pair: nothing to see
        return []
    pairs = [(lead(v), np.conj(lead(ct_v)) if cplx else lead(ct_v))]  # V^H G_V, G_V = conj(ct)
    findings = []
    r = gauge_violation(pairs, values, rtol)
    if r > GAUGE_RTOL:
        findings.append(
            (
                "gauge",
                f"eigh: the loss depends on the gauge of the eigenvectors (relative size {r:.2e} of "
                "the gauge-dependent part of the cotangent): eigenvectors are defined only up to a phase "
                "(complex) or a rotation within degenerate eigenvalues, so this gradient is ill-defined. "
                "Use a gauge-invariant function such as V diag(f(w)) V^H.",
            )
        )
    r, _ = degeneracy_dependence(pairs, values, None if ct_w is None else lead(ct_w, 1), rtol)
    if r > GAUGE_RTOL:
        findings.append(
            (
                "degeneracy",
                "eigh: at a degenerate block of eigenvalues (within "
                f"degeneracy_rtol={rtol:g}) the loss depends on both the eigenvalues and the eigenvectors "
                f"of the block (relative size {r:.2e}), e.g. V f(w) V^H with f' != 0 there: the gradient "
                "inside the block is not determined by the decomposition and the one returned misses part "
                "of it (docs/ad/gauge.md). Use tenferro.linalg.funm_hermitian(a, f) (Daleckii-Krein, exact "
                "at degeneracy), or tenferro.linalg.polar for polar factors.",
            )
        )
    return findings


def _eigh_reach(cts: list, dcts: list, res: list, dres: list, blind: bool) -> float:
    """How much the cotangents of a pass of order >= 2 touch a degenerate block
    (:func:`._gauge.block_reach`; arrays, trailing batch; ``d*``: along the outer direction)."""
    (w, v), (_, dv) = res, dres
    (c_w, c_v), (dc_w, dc_v) = cts, dcts
    conj = [None if c is None else np.conj(c) for c in (c_v, dc_v)]  # G_V = conj(ct)
    vectors = [(v, dv, *conj)] if any(c is not None for c in conj) else []
    return block_reach(w, (c_w, dc_w), vectors, blind)


@eigh_p.def_jvp
def _eigh_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    (w, v), parent, probe = bind_probed(eigh_p, a)
    m = mm(mhm(v, hermitian_part(da)), v)  # V^H dA_h V
    # order >= 2: a direction that splits a degenerate block (off-diagonal in-block part of m)
    second = second_order_check("eigh", w, m, m, parent, probe, _eigh_reach)
    dw = tf.real(tf.extract_diag(m))
    f = gap_inverse(diff_matrix(w), w)  # F_ij = 1 / (w_j - w_i), 0 on the diagonal and degenerate pairs
    dv = mm(v, tf.multiply(f, m))
    dw, dv = gauge_guard([dw, dv], [w, v], _eigh_gauge_check, second)
    return [w, v], [dw, dv]


@dispatchable
def eigh(a: Any) -> tuple[Any, Any]:
    """Eigenvalues (ascending, real) and eigenvectors of Hermitian matrices
    ``[N, N, B...]``: ``(w [N, B...], V [N, N, B...])`` with ``a = V diag(w) V^H``.

    The input is treated as its Hermitian part ``(a + a^H) / 2``, so gradients
    are Hermitian (as in JAX). The derivative is exact for every pair of eigenvalues
    the degeneracy threshold does not call degenerate; a gauge-dependent loss triggers
    a GaugeWarning, one that depends on both the values and the vectors of a
    degenerate block a DegeneracyWarning, and so does a derivative of order >= 2
    through a degenerate block in a direction that splits it (docs/ad/eigh.md,
    docs/ad/gauge.md).
    """
    a = operand("eigh", "a", a)
    w, v = _bind(eigh_p, a)
    return w, v


@dispatchable
def eigvalsh(a: Any) -> Any:
    """Eigenvalues ``[N, B...]`` (ascending) of the Hermitian part of ``a``."""
    a = operand("eigvalsh", "a", a)
    return _bind(eigh_p, a)[0]
