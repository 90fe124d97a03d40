"""The truncation policy: a truncated SVD that keeps at most ``max_bond`` singular
values and drops a tail whose relative weight is at most ``cutoff``.

Used by DMRG (splitting the two-site tensor), ``MPS.compress`` and ``MPS.from_dense``.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["svd_truncated", "truncation_keep", "thin_svd"]


def truncation_keep(s: np.ndarray, max_bond: int | None, cutoff: float) -> tuple[int, float]:
    """How many of the descending singular values ``s`` to keep, and the relative
    discarded weight ``sum(dropped s^2) / sum(s^2)``. The weights are taken relative to
    the largest value first, so singular values near the ends of the float range (1e-200,
    1e200) neither underflow nor overflow when squared."""
    top = float(np.max(s)) if len(s) else 0.0
    if not top > 0.0:
        return 1, 0.0
    r = s / top
    s2 = r * r
    total = float(s2.sum())
    keep = len(s)
    if cutoff > 0.0:
        tail = np.concatenate([np.cumsum(s2[::-1])[::-1], [0.0]]) / total  # tail[k]: dropped if k kept
        keep = int(np.argmax(tail <= cutoff))
    keep = min(keep, int(np.count_nonzero(s > 0.0)))
    if max_bond is not None:
        keep = min(keep, max_bond)
    keep = max(keep, 1)
    return keep, float(s2[keep:].sum() / total)


def thin_svd(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``U, S, Vh`` of the thin SVD (LAPACK gesdd, falling back to gesvd when it fails)."""
    try:
        return scipy.linalg.svd(m, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return scipy.linalg.svd(m, full_matrices=False, lapack_driver="gesvd", check_finite=False)


def svd_truncated(
    m: np.ndarray, max_bond: int | None = None, cutoff: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Truncated SVD ``m ~ U diag(S) Vh`` (LAPACK gesdd, falling back to gesvd).

    Keeps at most ``max_bond`` singular values and drops the smallest ones while their
    squared sum, relative to the total, stays at most ``cutoff`` (ITensor's
    truncation-error convention). Returns ``(U, S, Vh, discarded_weight)`` where the
    discarded weight is relative (``sum(dropped s^2) / sum(s^2)``). At least one
    singular value is kept.
    """
    u, s, vh = thin_svd(m)
    keep, discarded = truncation_keep(s, max_bond, cutoff)
    return u[:, :keep], s[:keep], vh[:keep], discarded
