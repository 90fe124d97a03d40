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

from typing import Any

import numpy as np
from scipy.linalg import get_lapack_funcs

from .truncation import svd_truncated_sectors, thin_svd
from ..tools.device import array_module, is_device_array

__all__ = ["svd", "svd_sectors", "qr", "lq"]

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
    blocks: dict[Any, Any], max_bond: int | None, cutoff: float
) -> tuple[dict[Any, tuple[Any, Any, Any]], float]:
    """One thin SVD per sector (:func:`svd`) and one truncation across all of them:
    :func:`~tensor4all.linalg.truncation.svd_truncated_sectors` with this module's SVD."""
    return svd_truncated_sectors(blocks, max_bond, cutoff, svd)


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
