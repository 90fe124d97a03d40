"""``tensor4all.linalg``: linear algebra over structured and dense matrices.

The functions live in :mod:`tensor4all.structured.linalg`; this module re-exports them
so that ``import tensor4all.linalg`` and ``tensor4all.linalg.svd`` work.
"""

from __future__ import annotations

from ..structured.linalg import det, eigh, expm, inv, norm, qr, slogdet, solve, svd, trace, truncated_svd

__all__ = ["svd", "truncated_svd", "qr", "eigh", "inv", "solve", "det", "slogdet", "trace", "norm", "expm"]
