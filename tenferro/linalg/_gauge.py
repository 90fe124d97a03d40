"""The gauge and degeneracy checks of reverse mode in :mod:`tenferro.linalg`.

:func:`gauge_guard` passes a spectral rule's tangents through
:data:`gauge_check_p`, the identity whose transpose checks the cotangents
(:data:`gauge_assert_p` when the gradient is staged by ``tenferro.jit``) with the
rule's ``check`` and warns or raises per ``config.gauge``. The checks are NumPy
(or CuPy) functions of the cotangents and residuals: :func:`gauge_violation` (a
loss that depends on the gauge of degenerate vectors) and
:func:`degeneracy_dependence` (a loss that depends on both the values and the
vectors of a degenerate block), with :func:`degeneracy_tolerance` the threshold
``config.degeneracy_rtol``. See docs/ad/gauge.md.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

import tidu
from tidu import Zero
from tidu.graph import GraphTracer

from .._aval import xp_of
from .._registry import primitive
from .._batching import trailing_batch
from .._tensor import Tensor

from ._config import config
from ._errors import DegeneracyError, DegeneracyWarning, GaugeError, GaugeWarning
from ._util import FAMILY, concrete


GAUGE_RTOL = 1e-6


gauge_check_p = primitive("linalg_gauge_check", FAMILY, multiple_results=True)
gauge_check_p.def_batch(trailing_batch(gauge_check_p))  # trailing batch axes: tenferro._batching
"""``gauge_check_p(*tangents, *residuals, n_lin, check, policy, rtol)``: returns
the ``n_lin`` tangents unchanged. Its transpose passes the cotangents through and
calls ``check(cotangents, residuals, rtol)`` (NumPy arrays) first; its findings
(``None``, a gauge message, or a list of ``(kind, message)`` with ``kind`` "gauge" or
"degeneracy") warn (:class:`GaugeWarning`, :class:`DegeneracyWarning`) or raise
(:class:`GaugeError`, :class:`DegeneracyError`) per ``policy`` — ``config.gauge`` (and
``rtol``, ``config.degeneracy_rtol``)
as they were when the JVP was built, not when the transpose runs. See
docs/ad/gauge.md."""


@gauge_check_p.def_impl
def _gauge_impl(*args, n_lin, check, policy, rtol):
    return list(args[:n_lin])


@gauge_check_p.def_abstract_eval
def _gauge_aval(*avals, n_lin, check, policy, rtol):
    return list(avals[:n_lin])


@gauge_check_p.def_jvp
def _gauge_jvp(primals, tangents, n_lin, check, policy, rtol):
    out = gauge_check_p.bind(*primals, n_lin=n_lin, check=check, policy=policy, rtol=rtol)
    t_lin = [tidu.instantiate(t) for t in tangents[:n_lin]]
    # the derivative of the identity is the identity; its cotangents are not a loss's
    # gradient (higher-order directions), so the copy does not check (check=None)
    t_out = gauge_check_p.bind(*t_lin, *primals[n_lin:], n_lin=n_lin, check=None, policy=policy, rtol=rtol)
    return out, t_out


_FINDINGS = {"gauge": (GaugeError, GaugeWarning), "degeneracy": (DegeneracyError, DegeneracyWarning)}


def _report(findings: Any, policy: str) -> None:
    for kind, message in [("gauge", findings)] if isinstance(findings, str) else findings or ():
        error, warning = _FINDINGS[kind]
        if policy == "raise":
            raise error(message)
        warnings.warn(message, warning, stacklevel=3)


def _staged(x: Any) -> bool:
    """A value of a graph being staged (``tenferro.jit``, ``make_graph``): known at run time."""
    return type(x) is Tensor or type(x) is GraphTracer


@gauge_check_p.def_transpose
def _gauge_transpose(cts, *args, n_lin, check, policy, rtol):
    res = args[n_lin:]
    out = [None if type(c) is Zero else c for c in cts]
    if check is not None and policy != "ignore" and any(c is not None for c in out):
        # first-order reverse mode only: with residuals traced by a transformation
        # (higher orders) the cotangents are directions of a derivative, not a loss's gradient
        ct_arrays = [None if c is None else concrete(c) for c in out]
        res_arrays = [r._data if type(r) is Tensor else None for r in res]
        if all(r is not None for r in res_arrays) and all(a is not None or c is None for a, c in zip(ct_arrays, out)):
            _report(check(ct_arrays, res_arrays, rtol), policy)
        elif all(_staged(r) for r in res) and all(c is None or _staged(c) for c in out):
            # a staged gradient (jit): the check becomes part of the program and runs with it
            nz = tuple(i for i, c in enumerate(out) if c is not None)
            checked = gauge_assert_p.bind(
                *[out[i] for i in nz], *res, positions=nz, n_ct=len(out), check=check, policy=policy, rtol=rtol
            )
            for i, c in zip(nz, checked):
                out[i] = c
    return out + [None] * len(res)


gauge_assert_p = primitive("linalg_gauge_assert", FAMILY, multiple_results=True)
gauge_assert_p.def_batch(trailing_batch(gauge_assert_p))  # trailing batch axes: tenferro._batching
"""``gauge_assert_p(*cotangents, *residuals, positions, n_ct, check, policy, rtol)``:
the gauge check of a staged (``tenferro.jit``) gradient. Returns the cotangents
unchanged; evaluating it runs ``check`` on the values (``positions``: which of the
``n_ct`` cotangents of :data:`gauge_check_p` these are) and warns or raises per
``policy``, as eager reverse mode does at the same point."""


@gauge_assert_p.def_impl
def _gauge_assert_impl(*args, positions, n_ct, check, policy, rtol):
    cts = args[: len(positions)]
    ct_arrays: list = [None] * n_ct
    for i, c in zip(positions, cts):
        ct_arrays[i] = c._data
    _report(check(ct_arrays, [r._data for r in args[len(positions) :]], rtol), policy)
    return list(cts)


@gauge_assert_p.def_abstract_eval
def _gauge_assert_aval(*avals, positions, n_ct, check, policy, rtol):
    return list(avals[: len(positions)])


@gauge_assert_p.def_jvp
def _gauge_assert_jvp(primals, tangents, positions, n_ct, check, policy, rtol):
    out = gauge_assert_p.bind(*primals, positions=positions, n_ct=n_ct, check=check, policy=policy, rtol=rtol)
    return out, list(tangents[: len(positions)])  # the identity on cotangents; directions are not checked


@gauge_assert_p.def_transpose
def _gauge_assert_transpose(cts, *args, positions, n_ct, check, policy, rtol):
    return [None if type(c) is Zero else c for c in cts] + [None] * (len(args) - len(positions))


def gauge_guard(tangents: list, residuals: list, check: Callable[..., str | None]) -> list:
    """Pass ``tangents`` through :data:`gauge_check_p` (one place for all rules),
    capturing the gauge policy and degeneracy tolerance active now."""
    return gauge_check_p.bind(
        *tangents, *residuals, n_lin=len(tangents), check=check, policy=config.gauge, rtol=float(config.degeneracy_rtol)
    )


def degeneracy_tolerance(values: np.ndarray, rtol: float) -> tuple[np.ndarray, bool]:
    """``(tol, any_pair)`` for sorted ``values`` ``[B..., K]`` (leading batch):
    ``tol = rtol * max|v|`` per matrix (``[B..., 1]``), and whether two neighbours
    (hence some pair) are degenerate, ``|v_i - v_j| <= tol`` (``O(K)``, one read)."""
    if values.size == 0:
        return np.zeros(values.shape[:-1] + (1,)), False
    scale = np.max(np.abs(values), axis=-1, keepdims=True)
    tol = rtol * np.where(scale > 0, scale, 1.0)
    return tol, bool(np.any(np.abs(np.diff(values, axis=-1)) <= tol))


def _spectral_product(pairs: list) -> np.ndarray:
    """``X = sum_k A_k^H B_k`` (leading batch)."""
    return sum(np.matmul(np.conj(np.swapaxes(a, -1, -2)), b) for a, b in pairs)


def _pairs_norm(pairs: list) -> float:
    return sum(float(np.linalg.norm(a)) * float(np.linalg.norm(b)) for a, b in pairs)


def gauge_violation(pairs: list, values: np.ndarray, rtol: float, scale: float = 0.0) -> float:
    """Relative size of the gauge-dependent part of ``X = sum_k A_k^H B_k`` for
    ``pairs = [(A_k, B_k)]`` (leading-batch arrays ``[B..., M, K]``): the
    skew-Hermitian part of ``X`` on the pairs (i, j) of degenerate ``values``
    (``[B..., K]``, degenerate: ``|v_i - v_j| <= rtol * max |v|``), the diagonal
    (phases) included, relative to
    ``sum_k ||A_k|| ||B_k||`` (Frobenius), an upper bound of ``|X|`` — not to
    ``max |X|``, which is itself rounding noise when the loss is invariant (the
    cotangents of a second-order pass are such). The full ``K x K`` product is
    formed only when some off-diagonal pair is degenerate; otherwise only the
    diagonal (``O(M K)``), and nothing at all for real data. ``scale`` adds the size of
    the rest of the loss's cotangent in the same units (for the SVD ``||S|| ||ct_S||``):
    where the vectors' cotangents are themselves rounding noise (a loss all but
    insensitive to the vectors, through ``U diag(S) Vh`` of a nearly rank-one matrix), their
    gauge-dependent part is noise of that noise, not a finding."""
    if values.size == 0 or not pairs:
        return 0.0
    tol, any_off = degeneracy_tolerance(values, rtol)
    is_complex = any(np.iscomplexobj(a) or np.iscomplexobj(b) for a, b in pairs)
    if any_off:
        deg = np.abs(values[..., :, None] - values[..., None, :]) <= tol[..., None]
        x = _spectral_product(pairs)
        skew = x - np.conj(np.swapaxes(x, -1, -2))
        bad = np.max(np.abs(np.where(deg, skew, 0)))
    elif is_complex:
        d = sum(np.sum(np.conj(a) * b, axis=-2) for a, b in pairs)
        bad = 2 * np.max(np.abs(d.imag))
    else:
        return 0.0
    denom = _pairs_norm(pairs) + scale
    return float(bad / denom) if denom > 0 else 0.0


def degeneracy_dependence(
    pairs: list, values: np.ndarray, value_ct: np.ndarray | None, rtol: float, zero_cluster: bool = False
) -> tuple[float, float]:
    """How much the loss depends on both the values and the vectors of an exactly
    degenerate block (``|v_i - v_j| <= rtol * max|v|``), where the gradient is not
    determined by the decomposition (docs/ad/gauge.md, "Degeneracy warning").
    ``X = sum_k A_k^H B_k`` as in :func:`gauge_violation`, ``value_ct`` ``[B..., K]``
    the cotangent of the values. Returns ``(r, r_null)``:

    * ``r``: per block of size >= 2, the smaller of ``max|v| ||value_ct_B||`` and
      ``||H_B - tr(H_B)/|B| I|| max|v| / max|v_B|`` (``H = (X + X^H)/2``: the traceless
      Hermitian part, a multiple of the identity being exact; per unit of the block's
      own magnitude, since the vector cotangent of ``V f(w) V^H`` is ``f(v_B)`` times
      the in-block data, which a block of zeros shrinks to rounding size), the largest
      over blocks whose traceless part is above rounding relative to ``H_B``;
    * ``r_null`` (``zero_cluster``, svd): blocks of numerically zero values
      (``|v| <= rtol * max|v|``) are left out of ``r`` (their tiny computed values are
      used, exact for ``U f(S) Vh`` with ``f(0) = 0``); ``r_null`` is the size of
      ``X`` on them, i.e. a dependence on the null space's vectors themselves, whose
      gradient then amplifies rounding noise.

    Both relative to ``sum_k ||A_k|| ||B_k|| + max|v| ||value_ct||``. Blocks are read
    row by row through the pairwise relation (array passes, a few reads on a GPU);
    ``(0, 0)`` when no pair is degenerate (``O(K)``)."""
    if values.size == 0 or not pairs:
        return 0.0, 0.0
    tol, any_off = degeneracy_tolerance(values, rtol)
    if not any_off:
        return 0.0, 0.0
    xp = xp_of(values)
    mag = np.abs(values)
    deg = np.abs(values[..., :, None] - values[..., None, :]) <= tol[..., None]  # [B..., K, K]
    size = np.sum(deg, axis=-1)  # [B..., K]
    x = _spectral_product(pairs)
    scale = np.max(mag, axis=-1, keepdims=True)
    rows = size >= 2
    r_null = 0.0
    if zero_cluster:
        small = mag <= tol
        null = np.sqrt(np.sum(np.where(deg, np.abs(x) ** 2, 0), axis=-1))
        r_null = float(np.max(np.where(rows & small, null, 0)))
        rows = rows & ~small
    r = 0.0
    if value_ct is not None:
        h = 0.5 * (x + np.conj(np.swapaxes(x, -1, -2)))
        dh = np.real(np.diagonal(h, axis1=-2, axis2=-1))
        mean = np.sum(np.where(deg, dh[..., None, :], 0), axis=-1) / size  # block mean of diag(H)
        traceless = h - xp.eye(values.shape[-1]) * mean[..., :, None]
        block_mag = np.max(np.where(deg, mag[..., None, :], 0), axis=-1)
        floor = 4 * np.finfo(values.dtype).eps * scale
        tl = np.sqrt(np.sum(np.where(deg, np.abs(traceless) ** 2, 0), axis=-1))
        # a traceless part at rounding size relative to H_B itself is a multiple of the identity
        genuine = tl > GAUGE_RTOL * np.sqrt(np.sum(np.where(deg, np.abs(h) ** 2, 0), axis=-1))
        vec = tl * scale / np.maximum(block_mag, floor)
        val = scale * np.sqrt(np.sum(np.where(deg, np.abs(value_ct[..., None, :]) ** 2, 0), axis=-1))
        r = float(np.max(np.where(rows & genuine, np.minimum(vec, val), 0)))
    denom = _pairs_norm(pairs) + (
        float(np.max(scale)) * float(np.linalg.norm(value_ct)) if value_ct is not None else 0.0
    )
    return (r / denom, r_null / denom) if denom > 0 else (0.0, 0.0)
