"""The environment cache of DMRG: left and right blocks of ``<psi|H|psi>`` on raw NumPy.

Layouts (C-contiguous, chosen so every update and every effective-Hamiltonian
product is a plain matrix multiplication without transposes):

* left block ``Lb[i]`` (sites ``0..i-1``): shape ``(bra, w, ket)``;
* right block ``Rb[i]`` (sites ``i..L-1``): shape ``(w, ket, bra)``;
* MPS site tensors ``(left, d, right)``; MPO tensors ``(left, out, in, right)``.

A block made stale by a move of the orthogonality centre is dropped at once, so the
cache holds about ``L`` blocks: memory ``~ L * chi^2 * D`` numbers.
"""
from __future__ import annotations

import numpy as np

__all__ = ["left_step", "right_step", "Environments", "mpo_squared"]


def left_step(lb: np.ndarray, a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``L'[b, w', b'] = sum L[a, w, a'] conj(A[a, s, b]) W[w, s, t, w'] A[a', t, b']``."""
    ca, dw, ka = lb.shape
    _, d, kb = a.shape
    dw2 = w.shape[3]
    t = (lb.reshape(ca * dw, ka) @ a.reshape(ka, d * kb)).reshape(ca, dw * d, kb)  # (a, w t, b')
    wm = w.transpose(1, 3, 0, 2).reshape(d * dw2, dw * d)                            # (s w', w t)
    t = np.matmul(wm, t)                                                              # (a, s w', b')
    cb = a.shape[2]
    return (a.reshape(ca * d, cb).conj().T @ t.reshape(ca * d, dw2 * kb)).reshape(cb, dw2, kb)


def right_step(rb: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``R'[w, a', a] = sum W[w, s, t, w'] B[a', t, b'] conj(B[a, s, b]) R[w', b', b]``."""
    dw2, kb, cb = rb.shape
    ka, d, _ = b.shape
    dw = w.shape[0]
    r = rb.transpose(1, 0, 2).reshape(kb, dw2 * cb)                                   # (b', w' b)
    t = (b.reshape(ka * d, kb) @ r).reshape(ka, d * dw2, cb)                          # (a', t w', b)
    wm = w.reshape(dw * d, d * dw2)                                                   # (w s, t w')
    t = np.matmul(wm, t)                                                              # (a', w s, b)
    out = t.reshape(ka * dw, d * cb) @ b.reshape(ka, d * cb).conj().T                 # (a' w, a)
    return np.ascontiguousarray(out.reshape(ka, dw, ka).transpose(1, 0, 2))


class Environments:
    """Left and right blocks for an MPO ``ws`` and an MPS; ``left(i)`` covers sites
    ``< i`` and ``right(i)`` sites ``>= i``."""

    def __init__(self, ws: list[np.ndarray], dtype: np.dtype):
        self.ws = ws
        self.L = len(ws)
        self._left: list[np.ndarray | None] = [None] * (self.L + 1)
        self._right: list[np.ndarray | None] = [None] * (self.L + 1)
        self._left[0] = np.ones((1, 1, 1), dtype=dtype)
        self._right[self.L] = np.ones((1, 1, 1), dtype=dtype)

    def left(self, i: int) -> np.ndarray:
        lb = self._left[i]
        assert lb is not None, f"left block {i} was not built"
        return lb

    def right(self, i: int) -> np.ndarray:
        rb = self._right[i]
        assert rb is not None, f"right block {i} was not built"
        return rb

    def push_left(self, i: int, a: np.ndarray) -> None:
        """Site ``i`` became left-canonical ``a``: build ``left(i+1)``, drop the stale ``right(i+1)``."""
        self._left[i + 1] = left_step(self.left(i), a, self.ws[i])
        if i + 1 < self.L:
            self._right[i + 1] = None

    def push_right(self, i: int, b: np.ndarray) -> None:
        """Site ``i`` became right-canonical ``b``: build ``right(i)``, drop the stale ``left(i)``."""
        self._right[i] = right_step(self.right(i + 1), b, self.ws[i])
        if i > 0:
            self._left[i] = None

    def nbytes(self) -> int:
        """Bytes held by the cached blocks."""
        return sum(x.nbytes for x in self._left + self._right if x is not None)


def mpo_squared(ws: list[np.ndarray], psi: list[np.ndarray]) -> complex:
    """``<psi|H H|psi>`` with two MPO layers (blocks ``(bra, w1, w2, ket)``)."""
    env = np.ones((1, 1, 1, 1), dtype=np.result_type(ws[0], psi[0]))
    for a, w in zip(psi, ws):
        # ket first, then the two MPO layers, then the bra
        t = np.tensordot(env, a, axes=(3, 0))                 # (a, w1, w2, t, b')
        t = np.tensordot(t, w, axes=([2, 3], [0, 2]))         # (a, w1, b', u, w2')
        t = np.tensordot(t, w, axes=([1, 3], [0, 2]))         # (a, b', w2', s, w1')
        env = np.tensordot(a.conj(), t, axes=([0, 1], [0, 3]))  # (b, b', w2', w1')
        env = np.ascontiguousarray(env.transpose(0, 3, 2, 1))
    return complex(env.reshape(()))
