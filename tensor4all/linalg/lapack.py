"""The dense factorizations of the block-sparse steps (the charge-sector sweeps, TEBD's symmetric
bond updates), for the many small blocks a small chain has.

A block of a few to a few hundred rows costs more in the wrappers around LAPACK than in LAPACK:
``scipy.linalg.svd`` checks its input and queries the workspace at every call (20 us for a 4 x 4
block, whose ``gesdd`` takes 5 us), ``numpy.linalg.qr`` takes 15 us where ``geqrf`` and
``orgqr`` take 7. Here the LAPACK routines are called directly, with the workspace that
``scipy.linalg.svd`` would ask for, remembered per shape: the results are those of
:func:`~tensor4all.linalg.truncation.thin_svd` (``gesdd``, ``gesvd`` where it fails) and of
``numpy.linalg.qr`` (Householder QR), bit for bit on the same LAPACK. Device (CuPy) arrays go to
the generic functions.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import scipy.linalg
from scipy.linalg import get_blas_funcs, get_lapack_funcs
from scipy.linalg.lapack import dsyevd as _syevd, zheevd as _heevd

from .truncation import svd_truncated_sectors, thin_svd
from ..tools.device import array_module, is_device_array

__all__ = [
    "svd",
    "svd_sectors",
    "split_svd",
    "gram_svd",
    "GRAM_MIN_CUTOFF",
    "GRAM_MIN_SIDE",
    "qr",
    "lq",
    "lowest_tridiagonal",
    "tridiagonal_eigh",
    "scaled_norm",
]

_SVD: dict[tuple, tuple[Any, int]] = {}  # (rows, columns, dtype char) -> (gesdd, lwork)


def svd(m: Any) -> tuple[Any, Any, Any]:
    """``U, S, Vh`` of the thin SVD of the matrix ``m`` (as :func:`thin_svd`)."""
    if is_device_array(m) or m.size == 0 or m.dtype.char not in "dD":
        return thin_svd(m)
    key = (m.shape[0], m.shape[1], m.dtype.char)
    held = _SVD.get(key)
    if held is None:
        gesdd, gesdd_lwork = get_lapack_funcs(("gesdd", "gesdd_lwork"), (m,), ilp64="preferred")
        work, info = gesdd_lwork(m.shape[0], m.shape[1], compute_uv=1, full_matrices=0)
        if info != 0:
            return thin_svd(m)
        held = _SVD[key] = (gesdd, max(1, int(np.ceil(np.real(work)))))  # the workspace query (SciPy's public one)
    gesdd, lwork = held
    u, s, vh, info = gesdd(m, compute_uv=1, lwork=lwork, full_matrices=0, overwrite_a=0)
    if info != 0:  # not converged, or a NaN: the generic path falls back to gesvd or raises
        return thin_svd(m)
    return u, s, vh


def svd_sectors(
    blocks: dict[Any, Any], max_bond: int | None, cutoff: float, to_right: bool | None = None
) -> tuple[dict[Any, tuple[Any, Any, Any]], float]:
    """One thin SVD per sector (:func:`svd`) and one truncation across all of them:
    :func:`~tensor4all.linalg.truncation.svd_truncated_sectors` with this module's SVD. With
    ``to_right`` (a split whose weights then go right, or left), large blocks may be split
    through their Gram matrix (:func:`split_svd`)."""
    if to_right is None:
        return svd_truncated_sectors(blocks, max_bond, cutoff, svd)
    return svd_truncated_sectors(blocks, max_bond, cutoff, lambda m: split_svd(m, to_right, cutoff))


_QR: dict[str, tuple[Any, Any]] = {}  # dtype char -> (geqrf, orgqr / ungqr)
_UPPER: dict[tuple[int, int], np.ndarray] = {}  # shape -> where R is (np.triu builds it at every call)


def qr(m: Any) -> tuple[Any, Any]:
    """The reduced QR decomposition ``m = Q R`` (as ``numpy.linalg.qr``)."""
    if is_device_array(m) or m.size == 0 or m.dtype.char not in "dD":
        return array_module(m).linalg.qr(m)
    held = _QR.get(m.dtype.char)
    if held is None:
        held = _QR[m.dtype.char] = get_lapack_funcs(("geqrf", "orgqr" if m.dtype.char == "d" else "ungqr"), (m,))
    geqrf, orgqr = held
    k = min(m.shape)
    a, tau, _work, info = geqrf(m)
    if info != 0:
        return np.linalg.qr(m)
    mask = _UPPER.get(a.shape)
    if mask is None:
        mask = _UPPER[a.shape] = ~np.tri(k, a.shape[1], -1, dtype=bool)
    r = np.where(mask, a[:k], 0)
    q, _work, info = orgqr(a[:, :k], tau)
    if info != 0:
        return np.linalg.qr(m)
    return q, r


def lq(m: Any) -> tuple[Any, Any]:
    """``m = L Q`` with orthonormal rows ``Q``: the QR decomposition of the transpose."""
    q, r = qr(m.T)
    return r.T, q.T


GRAM_MIN_CUTOFF = 1e-14
"""The smallest truncation ``cutoff`` (relative discarded weight) at which a split may take its
factors from the Gram matrix (:func:`gram_svd`): its eigenvalues, the squared singular values,
carry an absolute error of about ``eps * s_max^2`` (2e-16 relative), 2% of a weight at the cut
of 1e-14; below that, the weights the truncation weighs are not resolved, and the SVD is used."""

GRAM_MIN_SIDE = 32
"""The smallest side of a block split through its Gram matrix: below it ``gesdd`` is about as fast
(one core, busy host, median microseconds, gesdd against Gram: 24 x 24 81 / 70, 32 x 32 113 / 103,
64 x 64 443 / 350, 128 x 128 5956 / 1624, 256 x 256 26239 / 17971; 512 x 512 70 / 27 ms)."""


def split_svd(m: Any, to_right: bool, cutoff: float) -> tuple[Any, Any, Any]:
    """The SVD of a split whose weights then go right (``to_right``: ``U`` stays orthonormal)
    or left (``Vh`` does): from the Gram matrix of that side (:func:`gram_svd`) where the cutoff
    lets its weights be resolved (:data:`GRAM_MIN_CUTOFF`) and the block is large enough to gain
    (:data:`GRAM_MIN_SIDE`, that side at most twice the other), else ``gesdd`` (:func:`svd`)."""
    r, c = m.shape
    side, other = (r, c) if to_right else (c, r)
    if cutoff >= GRAM_MIN_CUTOFF and min(r, c) >= GRAM_MIN_SIDE and side <= 2 * other and not is_device_array(m):
        return gram_svd(m, to_right)
    return svd(m)


def gram_svd(m: np.ndarray, orthonormal_left: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``U, S, Vh`` of ``m`` from the Hermitian eigenproblem of its Gram matrix (LAPACK ``syevd``
    /``heevd``), the factor on the named side exactly orthonormal: ``m m^dagger = U S^2 U^dagger``
    and ``Vh = U^dagger m / S`` (``orthonormal_left``), else from ``m^dagger m``. Two to three
    times faster than ``gesdd`` on blocks of a few hundred rows; the singular values are resolved
    only to ``sqrt(eps) s_max`` (see :data:`GRAM_MIN_CUTOFF`), so the other factor's rows for the
    smallest of them are inaccurate, but its product with ``S`` is the exact projection
    ``U^dagger m``: a split that puts the weights on that side (TEBD's, DMRG's) is the exact
    projection onto the kept left states. Rows of zero weight are zero."""
    complex_ = m.dtype.char == "D"
    a = m if orthonormal_left else (m.conj().T if complex_ else m.T)
    if m.dtype.char not in "dD":  # single precision: SciPy picks the routine
        w, v = scipy.linalg.eigh(a @ a.conj().T, driver="evd", check_finite=False)
        info = 0
    else:
        gram = a @ (a.conj().T if complex_ else a.T)
        w, v, info = (_heevd if complex_ else _syevd)(gram, overwrite_a=1)
    if info != 0:  # not converged: LAPACK's SVD
        return svd(m)
    s_ = np.sqrt(np.maximum(w[::-1], 0.0))
    u = v[:, ::-1]
    proj = (u.conj().T if complex_ else u.T) @ a
    other = np.divide(proj, s_[:, None], out=np.zeros_like(proj), where=(s_ > 0.0)[:, None])
    if orthonormal_left:
        return u, s_, other
    return (other.conj().T if complex_ else other.T), s_, (u.conj().T if complex_ else u.T)


_STEBZ, _STEIN, _STEVD = get_lapack_funcs(("stebz", "stein", "stevd"), (np.zeros(1),))


def lowest_tridiagonal(d: np.ndarray, e: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` lowest eigenpairs of the real symmetric tridiagonal matrix of diagonal ``d`` and
    off-diagonal ``e``: ``scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, k -
    1))`` with the same LAPACK calls (``dstebz`` by bisection, ``dstein`` by inverse iteration)
    and arguments, so the same numbers bit for bit, without SciPy's checks (13 us of 17 to 26 us
    on the 2 to 20 Krylov vectors of a local Lanczos solve, once per product; ``k`` beyond the
    size is clipped). Single precision and non-finite input go to SciPy (its single-precision
    routines; its error)."""
    k = min(k, d.size)
    if d.dtype != np.float64 or e.dtype != np.float64 or not (np.isfinite(d).all() and np.isfinite(e).all()):
        return scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, k - 1))
    if d.size == 1:
        return d.copy(), np.ones((1, 1))
    m, w, iblock, isplit, info = _STEBZ(d, e, 2, 0.0, 0.0, 1, k, 0.0, b"B")
    if info != 0 or m != k:
        return scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, k - 1))
    w = w[:m]
    v, info = _STEIN(d, e, w, iblock, isplit)
    if info != 0:
        return scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, k - 1))
    order = np.argsort(w)
    return w[order], v[:, order]


def tridiagonal_eigh(d: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every eigenpair of the real symmetric tridiagonal matrix of diagonal ``d`` and off-diagonal
    ``e``: ``scipy.linalg.eigh_tridiagonal(d, e)`` with the same LAPACK call (``dstevd``), without
    SciPy's checks (once per product of a Krylov exponential). Single precision and non-finite
    input go to SciPy."""
    if d.size > 1 and d.dtype == e.dtype == np.float64 and np.isfinite(d).all() and np.isfinite(e).all():
        w, v, info = _STEVD(d, e, compute_v=1)
        if info == 0:
            return w, v
    return scipy.linalg.eigh_tridiagonal(d, e)


_NRM2: dict[str, Any] = {}  # dtype char -> BLAS nrm2


def scaled_norm(xs: Sequence[np.ndarray]) -> float:
    """``sqrt(sum ||x||^2)`` over the host arrays ``xs``, without forming the squares: BLAS ``nrm2``
    per array (scaled, as LAPACK's; no floating-point warnings), combined by ``math.hypot``.
    Infinite only when the norm itself exceeds the float range (``sqrt(sum(vdot(x, x)))``
    overflowed past about 1e154)."""
    norms = []
    for x in xs:
        if x.size:
            f = _NRM2.get(x.dtype.char)
            if f is None:
                f = _NRM2[x.dtype.char] = get_blas_funcs("nrm2", (x,))
            norms.append(f(x))
    return math.hypot(*norms)
