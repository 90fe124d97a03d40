"""The one ranking of singular values across charge sectors: a block-sparse truncation keeps
the largest values of all sectors together, not a share per sector (ITensor's and TeNPy's
rule). The symmetric ``truncated_svd`` of :mod:`tensor4all.structured.linalg` counts through
:func:`rank_across_sectors`; :func:`tensor4all.linalg.truncation.sector_keep` (the sweeps,
compression and TEBD) counts host values in one sorted pass with the same arithmetic
(``_keep_merged``, checked bit for bit against this function in ``tests/tensor4all/test_sector_flat.py``)
and falls back to this function otherwise."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = ["rank_across_sectors"]


def rank_across_sectors(values: Sequence[np.ndarray], rank: Callable[[np.ndarray], int]) -> list[int]:
    """How many of each sector's descending ``values`` to keep: ``rank`` of all values merged in
    descending order (ties in sector order) says how many to keep in all."""
    if not values:
        return []
    merged = np.concatenate(values).astype(float, copy=False)
    owner = np.repeat(np.arange(len(values)), [len(v) for v in values])
    order = np.argsort(-merged, kind="stable")
    keep = rank(merged[order])
    return np.bincount(owner[order[:keep]], minlength=len(values)).tolist()
