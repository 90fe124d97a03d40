"""Singular value decomposition: ``svd``, ``svdvals``, ``truncated_svd``.

``svd_p(a, full_matrices)`` returns ``[U, S, Vh]`` with ``a = U diag(S) Vh``,
shapes ``[M, K, B...]``, ``[K, B...]``, ``[K, N, B...]`` (``K = min(M, N)``; with
``full_matrices`` U is ``[M, M, B...]`` and Vh ``[N, N, B...]``). Derivative
rules: docs/ad/svd.md (Townsend 2016; Wan and Zhang 2019; Seeger et al. 2017;
Liao et al. 2019 for broadening; Francuz, Schuch, Vanhecke 2025 for truncation).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import TenferroValueError
from .._prim import as_operand, meta, primitive
from ._errors import ConvergenceError
from ._util import bind as _bind
from ._util import (
    FAMILY, GAUGE_RTOL, as_cols, as_rows, broadened_inverse, check_matrix, const, diag_embed,
    diag_part, diff_matrix, gauge_guard, gauge_violation, lead, mH, mm, safe_reciprocal, wrap,
)


def _tf():
    import tenferro as tf  # noqa: PLC0415

    return tf


svd_p = primitive("svd", FAMILY, multiple_results=True)


@svd_p.def_impl
def _svd_impl(a, full_matrices):
    try:
        u, s, vh = np.linalg.svd(lead(a._data), full_matrices=full_matrices)
    except np.linalg.LinAlgError as e:
        raise ConvergenceError(f"svd: LAPACK gesdd did not converge for input of shape {a.shape}: {e}") from None
    return [wrap(u), wrap(s, 1), wrap(vh)]


@svd_p.def_abstract_eval
def _svd_aval(a, full_matrices):
    check_matrix("svd", "a", a)
    m, n, batch = a.shape[0], a.shape[1], tuple(a.shape[2:])
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    return [a.update(shape=(m, ku) + batch), a.update(shape=(k,) + batch, dtype=a.dtype.real_dtype),
            a.update(shape=(kv, n) + batch)]


def _columns(x: Any, start: int, stop: int) -> Any:
    """Columns ``start:stop`` of ``x`` (a product with a constant selector)."""
    s, d = meta(x)
    sel = np.zeros((s[1], stop - start) + tuple(s[2:]), dtype=d.numpy)
    for j in range(start, stop):
        sel[(j, j - start) + (Ellipsis,)] = 1
    return mm(x, const(sel))


def _svd_gauge_check(cts: list, res: list) -> str | None:
    """The loss must be invariant under U -> U D, Vh -> D^H Vh for every unitary D
    that commutes with diag(S) (phases, and rotations in degenerate blocks)."""
    ct_u, ct_vh = cts
    u, s, vh = res
    k = s.shape[0]
    pairs = []
    if ct_u is not None:   # U^H G_U with G_U = conj(ct_u)
        pairs.append((lead(u)[..., :, :k], np.conj(lead(ct_u)[..., :, :k])))
    if ct_vh is not None:  # V^H G_V with V = Vh^H, G_V = ct_vh^T
        pairs.append((np.conj(np.swapaxes(lead(vh)[..., :k, :], -1, -2)), np.swapaxes(lead(ct_vh)[..., :k, :], -1, -2)))
    r = gauge_violation(pairs, lead(s, 1))
    if r > GAUGE_RTOL:
        return (f"svd: the loss depends on the gauge of the singular vectors (relative size {r:.2e} of the "
                "gauge-dependent part of the cotangent): singular vectors are defined only up to a phase "
                "(complex) or a rotation within degenerate singular values, so this gradient is ill-defined. "
                "Use a gauge-invariant function such as U diag(S) Vh or U U^H.")
    return None


@svd_p.def_jvp
def _svd_jvp(primals, tangents, full_matrices):
    tf = _tf()
    (a,), (da,) = primals, tangents
    u, s, vh = svd_p.bind(a, full_matrices=full_matrices)
    shape, dtype = meta(a)
    m, n = shape[0], shape[1]
    k = min(m, n)
    u1 = _columns(u, 0, k) if full_matrices and m > k else u
    vh1 = mH(_columns(mH(vh), 0, k)) if full_matrices and n > k else vh
    du, dv = _svd_reduced_jvp(tf, da, u1, s, vh1, dtype, m, n, k)
    ds = tf.real(diag_part(mm(mm(mH(u1), da), mH(vh1))))
    if full_matrices and m > k:   # gauge U2^H dU2 = 0: dU2 = -U1 dU1^H U2
        u2 = _columns(u, k, m)
        du2 = tf.negative(mm(u1, mm(mH(du), u2)))
        du = tf.add(mm(du, const(_selector(k, m, 0, dtype, shape[2:]))), mm(du2, const(_selector(m - k, m, k, dtype, shape[2:]))))
    if full_matrices and n > k:
        v1, v2 = mH(vh1), _columns(mH(vh), k, n)
        dv2 = tf.negative(mm(v1, mm(mH(dv), v2)))
        dv = tf.add(mm(dv, const(_selector(k, n, 0, dtype, shape[2:]))), mm(dv2, const(_selector(n - k, n, k, dtype, shape[2:]))))
    du, dvh = gauge_guard([du, mH(dv)], [u, s, vh], _svd_gauge_check)
    return [u, s, vh], [du, ds, dvh]


def _selector(rows: int, cols: int, offset: int, dtype, batch) -> np.ndarray:
    e = np.zeros((rows, cols) + tuple(batch), dtype=dtype.numpy)
    for i in range(rows):
        e[(i, offset + i) + (Ellipsis,)] = 1
    return e


def _svd_reduced_jvp(tf, da, u, s, vh, dtype, m, n, k):
    """(dU, dV) for the thin SVD (JAX's svd_jvp_rule, in the trailing layout)."""
    v = mH(vh)
    ds_full = mm(mm(mH(u), da), v)                       # dS = U^H dA V, [K, K, B...]
    s2 = tf.multiply(s, s)
    f = broadened_inverse(diff_matrix(s2))              # F_ij = 1 / (s_j^2 - s_i^2), broadened
    dss = tf.multiply(ds_full, as_cols(s, k))           # dS diag(s)
    sds = tf.multiply(as_rows(s, k), ds_full)           # diag(s) dS
    du_core = tf.multiply(f, tf.add(dss, mH(dss)))
    dv_core = tf.multiply(f, tf.add(sds, mH(sds)))
    s_inv = safe_reciprocal(s)
    if dtype.is_complex:                                # imaginary diagonal: phase convention
        skew = tf.multiply(tf.subtract(ds_full, mH(ds_full)), 0.5)
        du_core = tf.add(du_core, tf.multiply(skew, diag_embed(s_inv)))
    du = mm(u, du_core)
    dv = mm(v, dv_core)
    if m > k:
        dav = mm(da, v)
        du = tf.add(du, tf.multiply(tf.subtract(dav, mm(u, mm(mH(u), dav))), as_cols(s_inv, m)))
    if n > k:
        dahu = mm(mH(da), u)
        dv = tf.add(dv, tf.multiply(tf.subtract(dahu, mm(v, mm(vh, dahu))), as_cols(s_inv, n)))
    return du, dv


def svd(a: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` of ``[M, N, B...]``
    (batch dimensions last). Returns ``(U, S, Vh)`` with shapes ``[M, K, B...]``,
    ``[K, B...]``, ``[K, N, B...]``, ``K = min(M, N)`` (``[M, M, B...]`` and
    ``[N, N, B...]`` with ``full_matrices=True``); singular values descending.
    ``compute_uv=False`` returns only ``S`` (see :func:`svdvals`).

    Derivatives: forward and reverse, any order; near-degenerate singular values
    are broadened (``tenferro.linalg.config.broadening``) and a loss that depends
    on the singular vectors' gauge triggers a :class:`GaugeWarning` in reverse
    mode (docs/ad/svd.md).
    """
    a = as_operand("svd", a)
    if not compute_uv:
        return svdvals(a)
    u, s, vh = _bind(svd_p, a, full_matrices=bool(full_matrices))
    return u, s, vh


def svdvals(a: Any) -> Any:
    """Singular values ``[K, B...]`` of ``a`` ``[M, N, B...]``, descending. The
    derivative ``dS = Re diag(U^H dA V)`` needs the vectors, so this computes the
    thin SVD."""
    a = as_operand("svdvals", a)
    return _bind(svd_p, a, full_matrices=False)[1]


def truncated_svd(a: Any, max_rank: int | None = None, cutoff: float | None = None) -> tuple[Any, Any, Any]:
    """SVD truncated to the ``r`` largest singular values: ``(U [M, r, B...],
    S [r, B...], Vh [r, N, B...])``. ``r = min(K, max_rank)``, further reduced to
    the number of singular values ``> cutoff * S[0]`` (relative cutoff; the
    largest count over the batch is kept so shapes stay rectangular).

    The derivative is that of the kept part of the full thin SVD, so it
    **includes the contribution of the discarded subspace** (the mixing terms
    ``F_ij`` between kept and discarded singular vectors), as required by
    Francuz, Schuch and Vanhecke (PRR 7, 013237, 2025) rather than the naive rule
    that treats the discarded singular values as zero. The rank choice itself is
    not differentiated (piecewise constant)."""
    a = as_operand("truncated_svd", a)
    shape = meta(a)[0]
    if len(shape) < 2:
        check_matrix("truncated_svd", "a", _aval(a))
    k = min(shape[0], shape[1])
    if max_rank is not None:
        if int(max_rank) < 1:
            raise TenferroValueError(f"truncated_svd: max_rank must be >= 1, got {max_rank}")
        k = min(k, int(max_rank))
    u, s, vh = _bind(svd_p, a, full_matrices=False)
    if cutoff is not None:
        from ._util import concrete  # noqa: PLC0415

        sv = concrete(s)
        if sv is None:
            raise TenferroValueError("truncated_svd: cutoff needs concrete singular values (not under make_graph)")
        smax = sv[:1]
        keep = (sv > float(cutoff) * smax) if sv.size else sv.astype(bool)
        k = min(k, max(1, int(keep.reshape(keep.shape[0], -1).sum(axis=0).max())) if keep.size else 0)
    full_k = min(shape[0], shape[1])
    if k == full_k:
        return u, s, vh
    from ._util import rows  # noqa: PLC0415

    return _columns(u, 0, k), _first(s, k), rows(vh, 0, k)


def _first(s: Any, k: int) -> Any:
    """The first ``k`` entries of ``s`` ``[K, B...]`` (a product with a constant selector)."""
    from ._util import columns  # noqa: PLC0415

    tf = _tf()
    shape = meta(s)[0]
    m = columns(tf.reshape(s, (1,) + tuple(shape)), 0, k)   # [1, k, B...]
    return tf.reshape(m, (k,) + tuple(shape[1:]))


def _aval(x: Any):
    from .._prim import TensorType  # noqa: PLC0415

    sh, d = meta(x)
    return TensorType(tuple(sh), d)
