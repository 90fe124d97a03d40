"""Canonical forms of a chain of NumPy site tensors ``(left, physical, right)`` by QR:
the one copy that ``MPS`` (concrete-value tools) and the sweep engines share."""

from __future__ import annotations

import numpy as np

from ..tools.device import contiguous

__all__ = ["left_canonical", "right_canonical"]


def left_canonical(ts: list[np.ndarray]) -> list[np.ndarray]:
    """Sites ``0..L-2`` left-orthonormal (QR from the left); the norm stays on the last site."""
    ts = list(ts)
    for i in range(len(ts) - 1):
        dl, d, dr = ts[i].shape
        q, r = np.linalg.qr(ts[i].reshape(dl * d, dr))
        ts[i] = q.reshape(dl, d, q.shape[1])
        ts[i + 1] = np.tensordot(r, ts[i + 1], axes=(1, 0))
    return ts


def right_canonical(ts: list[np.ndarray], normalize: bool = True) -> list[np.ndarray]:
    """Sites ``1..L-1`` right-orthonormal (QR of the transposed sites from the right), C-contiguous;
    with ``normalize`` site 0 is scaled to unit norm (a state of norm 0 is left as it is), and each
    ``R`` factor is scaled to unit norm on its way (the state's norm would otherwise pile up in site
    0 and leave the float range: a random MPS of 200 sites at bond dimension 32 came out 0)."""
    ts = list(ts)
    for i in range(len(ts) - 1, 0, -1):
        dl, d, dr = ts[i].shape
        q, r = np.linalg.qr(ts[i].reshape(dl, d * dr).T)
        if normalize:
            n = float(np.linalg.norm(r))
            r = r / n if n > 0 else r
        ts[i] = contiguous(q.T.reshape(q.shape[1], d, dr))
        ts[i - 1] = contiguous(np.tensordot(ts[i - 1], r.T, axes=(2, 0)))
    if normalize:
        n = float(np.linalg.norm(ts[0]))  # (one scalar read back from a device)
        if n > 0:
            ts[0] = ts[0] / n
    return ts
