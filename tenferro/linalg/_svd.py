"""Singular value decomposition: ``svd``, ``svdvals``, ``truncated_svd``.

``svd_p(a, full_matrices)`` returns ``[U, S, Vh]`` with ``a = U diag(S) Vh``,
shapes ``[M, K, B...]``, ``[K, B...]``, ``[K, N, B...]`` (``K = min(M, N)``; with
``full_matrices`` U is ``[M, M, B...]`` and Vh ``[N, N, B...]``). Derivative
rules: docs/ad/svd.md (Townsend 2016; Wan and Zhang 2019; Seeger et al. 2017;
Liao et al. 2019 for the optional broadening; Francuz, Schuch, Vanhecke 2025 for
truncation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu
from tidu import Zero, instantiate, is_undefined

from .._dispatch import dispatchable
from .._errors import TenferroTypeError, TenferroValueError
from .._tensor import Tensor
from .._aval import aval_of_operand, fortran, meta, xp_of
from .._registry import nonlinear_error, primitive
from .._batching import trailing_batch
from ._errors import ConvergenceError, NonFiniteError
from ._util import FAMILY, bind as _bind, check_matrix, concrete, lead, operand, raw_value
from ._lapack import lapack
from ._matops import as_cols, as_rows, columns, const, diff_matrix, leading, mH, mhm, mm, rows, safe_reciprocal
from ._spectral import gap_inverse
from ._gauge import (
    GAUGE_RTOL,
    bind_probed,
    block_reach,
    degeneracy_dependence,
    degeneracy_tolerance,
    exact_zero_dependence,
    gauge_guard,
    gauge_violation,
    second_order_check,
)
from .. import _ops as tf


svd_p = primitive("svd", FAMILY, multiple_results=True)
svd_p.def_batch(trailing_batch(svd_p))  # trailing batch axes: tenferro._batching


@svd_p.def_impl
def _svd_impl(a, full_matrices):
    # LAPACK gesdd (divide and conquer), like NumPy, PyTorch (CPU) and JAX; gesvd is
    # ~10x slower at 256 x 256 and only needed for accuracy of tiny singular values
    u, s, vh = gesdd("svd", a._data, full_matrices)
    return [Tensor._wrap(u), Tensor._wrap(s), Tensor._wrap(vh)]


def gesdd(op: str, x: Any, full_matrices: bool = False) -> tuple[Any, Any, Any]:
    """LAPACK gesdd of the array ``x`` ``[M, N, B...]`` (host or device): ``U``, ``S``, ``Vh``
    arrays in the trailing-batch layout; :class:`ConvergenceError` naming ``op``."""
    m, n, batch = x.shape[0], x.shape[1], tuple(x.shape[2:])
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    dt = x.dtype
    try:
        return lapack(
            op,
            "svd",
            [lead(x)],
            [((m, ku) + batch, dt, 2), ((k,) + batch, dt.type(0).real.dtype, 1), ((kv, n) + batch, dt, 2)],
            full_matrices=full_matrices,
        )
    except np.linalg.LinAlgError as e:
        raise ConvergenceError(f"{op}: LAPACK gesdd did not converge for input of shape {x.shape}: {e}") from None


@svd_p.def_abstract_eval
def _svd_aval(a, full_matrices):
    check_matrix("svd", "a", a)
    m, n, batch = a.shape[0], a.shape[1], tuple(a.shape[2:])
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    return [
        a.update(shape=(m, ku) + batch),
        a.update(shape=(k,) + batch, dtype=a.dtype.real_dtype),
        a.update(shape=(kv, n) + batch),
    ]


def _svd_gauge_check(cts: list, res: list, rtol: float) -> list:
    """The loss must be invariant under U -> U D, Vh -> D^H Vh for every unitary D
    that commutes with diag(S) (phases, and rotations in degenerate blocks); and where
    it depends on both the values and the vectors of a degenerate block, the gradient
    there is not determined by the decomposition; nor where it needs the terms dropped at
    an exactly zero singular value (docs/ad/gauge.md, "Exact zeros")."""
    ct_u, ct_s, ct_vh = cts
    if ct_u is None and ct_vh is None:  # values only (svdvals): nothing to check
        return []
    u, s, vh = res
    k = s.shape[0]
    values = lead(s, 1)
    cplx = np.iscomplexobj(u)
    exact_zero = bool(np.any(values == 0))
    if not cplx and not exact_zero and not degeneracy_tolerance(values, rtol)[1]:  # nothing to see
        return []
    conj = np.conj if cplx else (lambda x: x)
    pairs, dropped = [], []
    if ct_u is not None:  # U^H G_U with G_U = conj(ct_u)
        pairs.append((lead(u)[..., :, :k], conj(lead(ct_u)[..., :, :k])))
        dropped.append(u.shape[0] > k)
    if ct_vh is not None:  # V^H G_V with V = Vh^H, G_V = ct_vh^T
        pairs.append((conj(np.swapaxes(lead(vh)[..., :k, :], -1, -2)), np.swapaxes(lead(ct_vh)[..., :k, :], -1, -2)))
        dropped.append(vh.shape[1] > k)
    findings = []
    r = exact_zero_dependence(pairs, dropped, values, None if ct_s is None else lead(ct_s, 1))
    if r > GAUGE_RTOL:
        findings.append(
            (
                "degeneracy",
                f"svd: the loss depends on an exactly zero singular value (relative size {r:.2e}) of a "
                "non-square or complex matrix, or of two or more, and on the singular vectors (e.g. U f(S) Vh "
                "with f'(0) != 0), or on the part of its vectors outside the range: S^{-1} is 0 there, so the "
                "gradient misses the terms (I - U U^H) dA V S^{-1}, S^{-1} U^H dA (I - V V^H), the phase and the "
                "zeros' mutual rotation, and the cotangent, multiplied by the exact zero, cannot restore them "
                '(docs/ad/gauge.md, "Exact zeros"). Use the matrix itself (a instead of U S Vh), keep only the '
                "nonzero singular values (truncated_svd: exact through the range), or a matrix function with "
                "its own rule (tenferro.linalg.funm_hermitian of a^H a).",
            )
        )
    if not cplx and not degeneracy_tolerance(values, rtol)[1]:
        return findings
    scale = 0.0 if ct_s is None else float(np.linalg.norm(values)) * float(np.linalg.norm(lead(ct_s, 1)))
    r = gauge_violation(pairs, values, rtol, scale)
    if r > GAUGE_RTOL:
        findings.append(
            (
                "gauge",
                f"svd: the loss depends on the gauge of the singular vectors (relative size {r:.2e} "
                "of the gauge-dependent part of the cotangent): singular vectors are defined only up to a "
                "phase (complex) or a rotation within degenerate singular values, so this gradient is "
                "ill-defined. Use a gauge-invariant function such as U diag(S) Vh or U U^H.",
            )
        )
    r, r_null = degeneracy_dependence(pairs, values, None if ct_s is None else lead(ct_s, 1), rtol, zero_cluster=True)
    if r > GAUGE_RTOL:
        findings.append(
            (
                "degeneracy",
                "svd: at a degenerate block of singular values (within "
                f"degeneracy_rtol={rtol:g}) the loss depends on both the singular values and the singular "
                f"vectors of the block (relative size {r:.2e}), e.g. U f(S) Vh with f' != 0 there: the "
                "gradient inside the block is not determined by the decomposition and the one returned "
                "misses part of it (docs/ad/gauge.md). Use the matrix itself, or a matrix function with its "
                "own rule: tenferro.linalg.polar (U Vh and P = V S Vh) or tenferro.linalg.funm_hermitian "
                "(V f(w) V^H) of a^H a or a a^H.",
            )
        )
    if r_null > GAUGE_RTOL:
        findings.append(
            (
                "degeneracy",
                "svd: the loss depends on the singular vectors of numerically zero singular "
                f"values (the null space of rank-deficient input; relative size {r_null:.2e}), e.g. "
                "U_0 U_0^H: their derivative divides by differences of rounding-size singular values, so this "
                "gradient is not reliable there (docs/ad/gauge.md). Write the loss through the range instead "
                "(I - U_r U_r^H), or use tenferro.linalg.funm_hermitian of a a^H.",
            )
        )
    return findings


def _svd_reach(cts: list, dcts: list, res: list, dres: list, blind: bool) -> float:
    """How much the cotangents of a pass of order >= 2 touch a degenerate block
    (:func:`._gauge.block_reach`; arrays, trailing batch; ``d*``: along the outer direction):
    ``(U, G_U = conj(ct_U))`` and ``(V = Vh^H, G_V = ct_Vh^T)`` on the thin part."""
    (u, s, vh), (du, _, dvh) = res, dres
    k = s.shape[0]

    def thin_u(x, conj):
        return None if x is None else (np.conj(x[:, :k]) if conj else x[:, :k])

    def thin_v(x, conj):
        return None if x is None else np.swapaxes(np.conj(x[:k]) if conj else x[:k], 0, 1)

    (c_u, c_s, c_vh), (dc_u, dc_s, dc_vh) = cts, dcts
    vectors = []
    if c_u is not None or dc_u is not None:
        vectors.append((thin_u(u, False), thin_u(du, False), thin_u(c_u, True), thin_u(dc_u, True)))
    if c_vh is not None or dc_vh is not None:
        vectors.append((thin_v(vh, True), thin_v(dvh, True), thin_v(c_vh, False), thin_v(dc_vh, False)))
    return block_reach(s, (c_s, dc_s), vectors, blind, zero_cluster=True)


@svd_p.def_jvp
def _svd_jvp(primals, tangents, full_matrices):
    (a,), (da,) = primals, tangents
    (u, s, vh), parent, probe = bind_probed(svd_p, a, full_matrices=full_matrices)
    shape, dtype = meta(a)
    m, n = shape[0], shape[1]
    k = min(m, n)
    u1 = columns(u, 0, k)
    vh1 = rows(vh, 0, k)
    du, ds, dvh, dp = _svd_reduced_jvp(tf, da, u1, s, vh1, dtype, m, n, k)
    # order >= 2: a direction that splits a degenerate block (off-diagonal in-block part of herm(dp))
    second = second_order_check("svd", s, dp, da, parent, probe, _svd_reach, zero_cluster=True)
    dv = mH(dvh) if full_matrices and n > k else None
    if full_matrices and m > k:  # gauge U2^H dU2 = 0: dU2 = -U1 dU1^H U2
        du2 = tf.negative(mm(u1, mm(mH(du), columns(u, k, m))))
        du = tf.concatenate([du, du2], axis=1)
    if full_matrices and n > k:
        dv2 = tf.negative(mm(mH(vh1), mm(mH(dv), mH(rows(vh, k, n)))))
        dv = tf.concatenate([dv, dv2], axis=1)
        dvh = mH(dv)
    du, ds, dvh = gauge_guard([du, ds, dvh], [u, s, vh], _svd_gauge_check, second)
    return [u, s, vh], [du, ds, dvh]


def _svd_reduced_jvp(tf, da, u, s, vh, dtype, m, n, k):
    """(dU, dS, dVh, dP) for the thin SVD. With ``dP = U^H dA V`` the off-diagonal part of
    ``U^H dU`` is ``E o (dP + dP^H) + D o (dP - dP^H)`` and that of ``V^H dV`` is
    ``E o (dP + dP^H) - D o (dP - dP^H)``, ``E_ij = 1/(2 (s_j - s_i))`` (0 inside a
    degenerate block) and ``D_ij = 1/(2 (s_j + s_i))``: the usual
    ``1/(s_j^2 - s_i^2)`` form split so that the part that stays finite at a
    repeated singular value is kept there (docs/ad/svd.md, docs/ad/gauge.md).
    ``V^H dV`` is skew-Hermitian, so ``dVh = -(V^H dV) Vh`` needs no transpose.

    ``dA V`` is formed once (``da`` contracted with ``conj(Vh)`` over N, so the
    transpose is one plain GEMM ``ct Vh^*``) and shared: ``dS = Re sum_i conj(U) o dA V``
    needs no K x K product, so a loss of the singular values alone costs one GEMM in
    reverse mode (``U diag(ct) Vh``, as PyTorch), and the vector terms sit behind
    :data:`svd_vectors_p`, evaluated only when a cotangent reaches them."""
    nb = len(meta(da)[0]) - 2
    batch = tuple(range(2, 2 + nb))
    vc = tf.conj(vh) if dtype.is_complex else vh
    dav = tf.dot_general(da, vc, (((1,), (1,)), (batch, batch)))  # dA V, [M, K, B...]
    uc = tf.conj(u) if dtype.is_complex else u
    ds = tf.sum(tf.multiply(uc, dav), axis=0)  # diag(U^H dA V), [K, B...]
    ds = tf.real(ds) if dtype.is_complex else ds
    dp = mhm(u, dav)  # U^H dA V, [K, K, B...]
    du_core, dv_core = svd_vectors_p.bind(dp, s)
    null = _rounding_null(s, m, n)
    if m > k or n > k or dtype.is_complex or null is not None:
        s_inv = safe_reciprocal(s)
    if dtype.is_complex:  # imaginary diagonal: phase convention
        du_core = tf.add(du_core, tf.multiply(tf.multiply(tf.subtract(dp, mH(dp)), 0.5), tf.embed_diag(s_inv)))
    if null is None:
        du = mm(u, du_core)
        dvh = tf.negative(mm(dv_core, vh))
        if m > k:  # (I - U U^H) dA V S^{-1}
            du = tf.add(du, tf.multiply(tf.subtract(dav, mm(u, dp)), as_cols(s_inv, m)))
        if n > k:  # S^{-1} U^H dA (I - V V^H)
            uda = mhm(u, da)
            dvh = tf.add(dvh, tf.multiply(tf.subtract(uda, mm(dp, vh)), as_rows(s_inv, n)))
        return du, ds, dvh, dp
    # A null cluster Z (values at rounding level) beside the range R: the vectors of R take
    # their null-space terms as projectors through R, (I - U_R U_R^H) dA V_R S_R^{-1} and
    # S_R^{-1} U_R^H dA (I - V_R V_R^H), instead of sums over the null vectors (the same value:
    # the coefficients of a null pair (j, k in R) are 1/s_k and s_j/s_k^2, exact to s_j/s_k).
    # The null vectors rotate among themselves at rates 1/(s_j - s_i) (the zero-cluster rule);
    # through the sums, a second derivative multiplied those rates by terms that cancel only
    # to rounding, and lost every digit (docs/ad/gauge.md, "Zero singular values").
    r, z, zr, rz = null
    du = mm(u, tf.multiply(du_core, rz))  # the (Z, R) entries dropped
    dvh = tf.negative(mm(tf.multiply(dv_core, zr), vh))  # the (R, Z) entries dropped
    ru = tf.multiply(dp, as_rows(r, k))  # U_R^H dA V, rows of Z zeroed
    du = tf.add(du, tf.multiply(tf.subtract(dav, mm(u, ru)), as_cols(tf.multiply(s_inv, r), m)))
    uda = mhm(u, da)
    dvh = tf.add(
        dvh, tf.multiply(tf.subtract(uda, mm(tf.multiply(dp, as_cols(r, k)), vh)), as_rows(tf.multiply(s_inv, r), n))
    )
    # and the null part N = U_Z S_Z Vh_Z of the matrix, (N dA^H U_R and N^H dA V_R) S_R^{-2}: the
    # s_Z-weighted terms of the entries (s_R dP_ZR + s_Z conj(dP_RZ)) / (s_R^2 - s_Z^2) and their
    # V-side pair. 0 at first order (N is at rounding level), but not their derivative along a
    # direction that raises the rank (dN = (I - U_R U_R^H) dA (I - V_R V_R^H) there): without them
    # second derivatives of U_R S_R Vh_R were off by 10-50%
    null_part = mm(tf.multiply(u, as_cols(tf.multiply(s, z), m)), vh)  # N, [M, N, B...]
    r_inv = tf.multiply(s_inv, r)  # masked before squaring: 1/s of a null value of 1e-300 squares to inf
    r_inv2 = tf.multiply(r_inv, r_inv)
    du = tf.add(du, tf.multiply(mm(null_part, mH(uda)), as_cols(r_inv2, m)))  # dA^H U = (U^H dA)^H
    dvh = tf.add(dvh, tf.multiply(mm(mH(dav), null_part), as_rows(r_inv2, n)))  # Vh dA^H = (dA V)^H
    if m > k:  # the null columns: (I - U U^H) dA V S^{-1}, as without a cluster
        du = tf.add(du, tf.multiply(tf.subtract(dav, mm(u, dp)), as_cols(tf.multiply(s_inv, z), m)))
    if n > k:
        dvh = tf.add(dvh, tf.multiply(tf.subtract(uda, mm(dp, vh)), as_rows(tf.multiply(s_inv, z), n)))
    return du, ds, dvh, dp


def _rounding_null(s: Any, m: int, n: int) -> tuple | None:
    """Where a matrix of the batch has both singular values at rounding level (``s <=
    max(m, n) eps s_max``, NumPy's ``matrix_rank`` tolerance; exact zeros included) and
    values above it: ``(r, z, 1 - [z_i r_j], 1 - [r_i z_j])`` as constants (``r``, ``z``
    ``[K, B...]`` 0/1 masks of the range and the null cluster), else None (also for
    abstract values). On a GPU the masks stay on the device; the one read is whether any
    matrix has such a cluster."""
    x = concrete(s)
    if x is None or x.size == 0:
        return None
    xp = xp_of(x)
    tol = max(m, n) * np.finfo(x.dtype).eps * xp.max(x, axis=0)
    zero = x <= tol
    if not bool((zero.any(axis=0) & ~zero.all(axis=0)).any()):
        return None
    z = zero.astype(x.dtype)
    r = 1.0 - z
    zr = 1.0 - r[:, None] * z[None, :]
    rz = 1.0 - z[:, None] * r[None, :]
    return tuple(const(fortran(v), like=s) for v in (r, z, zr, rz))


# ---------------------------------------------------------------------------
# the singular-vector terms, evaluated only when a cotangent needs them
# ---------------------------------------------------------------------------
svd_vectors_p = primitive("svd_vector_terms", FAMILY, multiple_results=True)
svd_vectors_p.def_batch(trailing_batch(svd_vectors_p))  # trailing batch axes: tenferro._batching
"""``svd_vectors_p(dp, s)`` -> ``[E o (dp + dp^H) + D o (dp - dp^H), E o (dp + dp^H) -
D o (dp - dp^H)]`` (the off-diagonal cores of ``U^H dU`` and ``V^H dV``), linear in
``dp``; ``E``, ``D`` from ``s`` (:func:`_svd_coefficients`). A primitive so that the
coefficients are computed when it is evaluated or transposed, never for a loss whose
cotangents of U and Vh are zero (the backward pass skips an equation no cotangent
reaches). Its JVP in ``s`` (higher orders) is that of :func:`_vector_terms`, the
same map written with tenferro ops."""


def _vector_terms(dp: Any, s: Any) -> list:
    e, d = _svd_coefficients(s, meta(s)[0][0])
    dph = mH(dp)
    sym = tf.multiply(e, tf.add(dp, dph))
    skw = tf.multiply(d, tf.subtract(dp, dph))
    return [tf.add(sym, skw), tf.subtract(sym, skw)]


def _vector_factors(s: Tensor) -> tuple[Any, Any]:
    """``E + D`` and ``E - D`` as arrays (``s_j / (s_j^2 - s_i^2)`` and
    ``s_i / (s_j^2 - s_i^2)`` outside degenerate pairs), for concrete ``s``."""
    e, d = _svd_coefficients(s, s.shape[0])
    e, d = e._data, d._data
    return e + d, e - d


def _mH_view(x: Any) -> Any:
    xh = x.swapaxes(0, 1)
    return xh.conj() if x.dtype.kind == "c" else xh


@svd_vectors_p.def_impl
def _svd_vectors_impl(dp, s):
    # E o (x + x^H) +- D o (x - x^H) = F1 o x + F2 o x^H and F2 o x + F1 o x^H
    f1, f2 = _vector_factors(s)
    x = dp._data
    xh = _mH_view(x)
    return [Tensor._wrap(fortran(f1 * x + f2 * xh)), Tensor._wrap(fortran(f2 * x + f1 * xh))]


@svd_vectors_p.def_abstract_eval
def _svd_vectors_aval(dp, s):
    return [dp, dp]


@svd_vectors_p.def_jvp
def _svd_vectors_jvp(primals, tangents):
    (dp, s), (t_dp, t_s) = primals, tangents
    if type(t_s) is not Zero:  # s varies (higher orders): differentiate the ops form
        out, t_out = tidu.jvp(_vector_terms, (dp, s), (instantiate(t_dp), t_s))
        return list(out), list(t_out)
    out = svd_vectors_p.bind(dp, s)
    if type(t_dp) is Zero:
        return out, [Zero.like(o) for o in out]
    return out, svd_vectors_p.bind(t_dp, s)


@svd_vectors_p.def_transpose
def _svd_vectors_transpose(cts, dp, s):
    """The adjoint under ``<x, y> = Re sum(x * y)``: ``(E + D) o (c_u - c_u^H) +
    (E - D) o (c_v - c_v^H)`` (E antisymmetric, D symmetric, both real): only the
    skew-Hermitian parts of the cotangents count (gauge.md §1)."""
    if not is_undefined(dp) or is_undefined(s):
        raise nonlinear_error("svd", "the vector terms are linear in dp only")
    c_u, c_v = (None if type(c) is Zero else c for c in cts)
    if type(s) is Tensor and all(c is None or type(c) is Tensor for c in (c_u, c_v)):  # first order: NumPy
        f1, f2 = _vector_factors(s)
        ct = 0
        for f, c in ((f1, c_u), (f2, c_v)):
            if c is not None:
                x = c._data
                ct = ct + f * (x - _mH_view(x))
        return [Tensor._wrap(fortran(ct)), None]
    e, d = _svd_coefficients(s, meta(s)[0][0])
    ct = None
    for f, c in ((tf.add(e, d), c_u), (tf.subtract(e, d), c_v)):
        if c is not None:
            term = tf.multiply(f, tf.subtract(c, mH(c)))
            ct = term if ct is None else tf.add(ct, term)
    return [ct, None]


def _svd_coefficients(s: Any, k: int) -> tuple[Any, Any]:
    """``E_ij = 1/(2 (s_j - s_i))`` and ``D_ij = 1/(2 (s_j + s_i))``, both ``[K, K, B...]``,
    0 on the diagonal and, per ``config.broadening`` (:func:`gap_inverse`), for the pairs
    the degeneracy threshold calls degenerate (default; numerically zero singular values
    are used as computed, docs/ad/gauge.md), for exactly equal ones (0), or
    Lorentzian-broadened (eps > 0)."""
    if type(s) is Tensor:  # constants (first-order pass): NumPy
        x = s._data
        xp = xp_of(x)
        shape = (k, k) + x.shape[1:]
        diff = xp.subtract(x[None, :], x[:, None], out=xp.empty(shape, x.dtype, order="F"))
        tot = xp.add(x[None, :], x[:, None], out=xp.empty(shape, x.dtype, order="F"))
        diagonal = xp.arange(k)
        tot[diagonal, diagonal] = 0
        return (
            gap_inverse(Tensor._wrap(diff), s, 0.5, zero_cluster=True),
            gap_inverse(Tensor._wrap(tot), s, 0.5, zero_cluster=True),
        )
    e = gap_inverse(diff_matrix(s), s, 0.5, zero_cluster=True)
    off = const(_off_diagonal(k, meta(s)[1], tuple(meta(s)[0][1:])), like=s)
    d = gap_inverse(tf.multiply(tf.add(as_cols(s, k), as_rows(s, k)), off), s, 0.5, zero_cluster=True)
    return e, d


def _off_diagonal(k: int, dtype, batch: tuple) -> np.ndarray:
    o = 1.0 - np.eye(k, dtype=dtype.numpy)
    return np.broadcast_to(o.reshape(o.shape + (1,) * len(batch)), o.shape + batch)


@dispatchable
def svd(a: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` of ``[M, N, B...]``
    (batch dimensions last). Returns ``(U, S, Vh)`` with shapes ``[M, K, B...]``,
    ``[K, B...]``, ``[K, N, B...]``, ``K = min(M, N)`` (``[M, M, B...]`` and
    ``[N, N, B...]`` with ``full_matrices=True``); singular values descending.
    ``compute_uv=False`` returns only ``S`` (see :func:`svdvals`).

    Derivatives: forward and reverse, any order, exact for every pair of singular
    values the degeneracy threshold (``config.degeneracy_rtol``) does not call
    degenerate (broadening only on request, ``config.broadening``); in reverse mode
    a loss that depends on the singular vectors' gauge triggers a
    :class:`GaugeWarning`, one that depends on both the values and the vectors of a
    degenerate block, or on the terms an exactly zero singular value drops, a
    :class:`DegeneracyWarning`; so does a derivative of order >= 2 through a degenerate
    block in a direction that splits it (docs/ad/svd.md, docs/ad/gauge.md).
    """
    a = operand("svd", "a", a)
    if not compute_uv:
        return svdvals(a)
    u, s, vh = _bind(svd_p, a, full_matrices=bool(full_matrices))
    return u, s, vh


@dispatchable
def svdvals(a: Any) -> Any:
    """Singular values ``[K, B...]`` of ``a`` ``[M, N, B...]``, descending. The
    derivative ``dS = Re diag(U^H dA V)`` needs the vectors, so this computes the
    thin SVD."""
    a = operand("svdvals", "a", a)
    return _bind(svd_p, a, full_matrices=False)[1]


def _truncation_option(name: str, value: Any, high: float, meaning: str, what: str = "truncated_svd") -> float | None:
    """``cutoff``/``rtol``: None, or a real number in ``[0, high)`` (else a typed error naming it)."""
    if value is None:
        return None
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not np.isfinite(value)
        or not 0 <= value < high
    ):
        raise TenferroValueError(
            f"{what}: {name} ({meaning}) must be a real number in [0, {high:g}) or None, got {value!r}"
        )
    return float(value)


def _discarded_weight_rank(s: np.ndarray, cutoff: float) -> int:
    """The smallest ``r >= 1`` whose dropped tail ``sum(s[r:]**2) / sum(s**2)`` is at most
    ``cutoff`` (``s`` descending). The squares are taken relative to ``s[0]``, so values near
    the ends of the float range neither underflow nor overflow."""
    top = float(s[0]) if s.size else 0.0
    if not top > 0.0:
        return 1
    r = s / top
    w = r * r
    tail = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]]) / w.sum()  # tail[k]: dropped if k are kept
    return max(1, int(np.argmax(tail <= cutoff)))


def truncation_rank(
    s: Any,
    max_rank: int | None = None,
    cutoff: float | None = None,
    rtol: float | None = None,
    *,
    what: str = "truncation_rank",
) -> int:
    """How many of the descending singular values ``s`` (one vector) a truncation keeps: at most
    ``max_rank``; with ``cutoff``, the fewest whose dropped tail has **discarded weight**
    ``sum(dropped s^2) / sum(s^2) <= cutoff`` (the project's one meaning of ``cutoff``, ITensor's
    truncation error); with ``rtol``, only values ``> rtol * s[0]``. At least one is kept (none
    of an empty vector). The rule of :func:`truncated_svd`, for codes that hold their singular
    values apart (block-sparse tensors, tensor-network sweeps). ``s``: real and finite, one vector
    (typed errors naming ``what``, the caller's name)."""
    if max_rank is not None and (
        isinstance(max_rank, (bool, np.bool_)) or not isinstance(max_rank, (int, np.integer)) or max_rank < 1
    ):
        raise TenferroValueError(f"{what}: max_rank must be an int >= 1 or None, got {max_rank!r}")
    cutoff = _truncation_option("cutoff", cutoff, 1.0, "the discarded weight", what)
    rtol = _truncation_option("rtol", rtol, 1.0, "relative to the largest singular value", what)
    s = np.asarray(s.get() if hasattr(s, "get") else s)  # a device array: its host copy
    if s.dtype.kind not in "fiub" or s.ndim > 1:
        raise TenferroTypeError(
            f"{what}: s must be one real vector of singular values, got dtype {s.dtype} and shape {s.shape}"
        )
    s = s.astype(np.float64, copy=False).reshape(-1)
    if s.size == 0:
        return 0
    if not np.isfinite(s.sum()):
        raise NonFiniteError(f"{what}: the singular values hold NaN or infinity")
    n = s.size if max_rank is None else min(s.size, int(max_rank))
    if cutoff is not None:
        n = min(n, _discarded_weight_rank(s, cutoff))
    if rtol is not None:
        n = min(n, max(1, int(np.count_nonzero(s > rtol * s[0]))))
    return n


@dispatchable
def truncated_svd(
    a: Any, max_rank: int | None = None, cutoff: float | None = None, *, rtol: float | None = None
) -> tuple[Any, Any, Any]:
    """SVD truncated to the ``r`` largest singular values: ``(U [M, r, B...],
    S [r, B...], Vh [r, N, B...])``. ``r = min(K, max_rank)``, further reduced by

    * ``cutoff``, the **discarded weight** (the project's one meaning, as ITensor's, ``MPS.compress``
      and ``dmrg``): the fewest values whose dropped tail has ``sum(dropped S^2) / sum(S^2) <=
      cutoff``, ``0 <= cutoff < 1``;
    * ``rtol``, a threshold relative to the largest value (NumPy's ``matrix_rank``/``pinv``
      name): only values ``> rtol * S[0]`` are kept, ``0 <= rtol < 1``.

    At least one value is kept; over a batch (trailing axes, or ``tidu.vmap``'s) the largest
    count is kept so shapes stay rectangular.

    The derivative is that of the kept part of the full thin SVD, so it
    **includes the contribution of the discarded subspace** (the mixing terms
    ``F_ij`` between kept and discarded singular vectors), as required by
    Francuz, Schuch and Vanhecke (PRR 7, 013237, 2025) rather than the naive rule
    that treats the discarded singular values as zero. The rank choice itself is
    not differentiated (piecewise constant)."""
    a = operand("truncated_svd", "a", a)
    shape = meta(a)[0]
    if len(shape) < 2:
        check_matrix("truncated_svd", "a", aval_of_operand(a))
    k = min(shape[0], shape[1])
    truncation_rank(np.zeros(0), max_rank, cutoff, rtol, what="truncated_svd")  # the options' checks, first
    if max_rank is not None:
        k = min(k, int(max_rank))
    u, s, vh = _bind(svd_p, a, full_matrices=False)
    if cutoff is not None or rtol is not None:
        raw = raw_value(s)  # under vmap: every example's values, their batch axes last
        if raw is None:
            raise tidu.TracerConversionError(
                "truncated_svd: cutoff and rtol decide the output shape from the singular values, which are abstract "
                "while a graph is traced (tenferro.jit, make_graph); pass max_rank instead, or call it outside jit"
            )
        sv = raw[0]
        sv = np.asarray(sv.get() if hasattr(sv, "get") else sv)  # a device array: its host copy
        if sv.size == 0:
            k = 0
        else:  # one count per batch entry; the largest is kept
            k = min(
                k,
                max(
                    truncation_rank(col, None, cutoff, rtol, what="truncated_svd")
                    for col in sv.reshape(sv.shape[0], -1).T
                ),
            )
    full_k = min(shape[0], shape[1])
    if k == full_k:
        return u, s, vh
    return columns(u, 0, k), leading(s, k), rows(vh, 0, k)
