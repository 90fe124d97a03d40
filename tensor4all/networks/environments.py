"""The one environment object of the sweeps: left and right blocks of ``<psi|H|psi>`` on raw NumPy
(or CuPy: :mod:`._device`) arrays.

Layouts (C-contiguous, chosen so every update and every effective-Hamiltonian
product is a plain matrix multiplication without transposes):

* left block ``Lb[i]`` (sites ``0..i-1``): shape ``(bra, w, ket)``;
* right block ``Rb[i]`` (sites ``i..L-1``): shape ``(w, ket, bra)``;
* MPS site tensors ``(left, d, right)``; MPO tensors ``(left, out, in, right)``.

The half steps ``L W x`` (:func:`lw_product`) and ``x W R`` (:func:`wr_product`) are the
first two GEMMs of a left and a right step; they are also the subspace-expansion terms of a
one- or two-site update (Hubig et al., Phys. Rev. B 91, 155115 (2015)).

:class:`EnvCache` is the cache itself, for blocks of any kind (the dense blocks here, the
per-sector blocks of ``_sector_dmrg``): a block made stale by a move of the orthogonality
centre is dropped at once, so the cache holds about ``L`` blocks: memory
``~ L * chi^2 * D`` numbers.
"""
from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

import numpy as np

from ..tools.device import array_module, contiguous

__all__ = ["lw_product", "wr_product", "left_step", "right_step", "EnvCache", "Environments", "mpo_squared"]

B = TypeVar("B")


def lw_product(lb: np.ndarray, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``P[a, s, (w', b')] = sum L[a, w, a'] W[w, s, t, w'] x[a', t, b']`` (``b'`` may be a fused
    index, e.g. the second site and the right bond): two GEMMs."""
    ca, dw, ka = lb.shape
    _, d, kb = x.shape
    dw2 = w.shape[3]
    t = (lb.reshape(ca * dw, ka) @ x.reshape(ka, d * kb)).reshape(ca, dw * d, kb)   # (a, w t, b')
    t = np.matmul(w.transpose(1, 3, 0, 2).reshape(d * dw2, dw * d), t)              # (a, s w', b')
    return t.reshape(ca, d, dw2 * kb)


def _wr_half(x: np.ndarray, w: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """``T[a', w, s, b] = sum W[w, s, t, w'] x[a', t, b'] R[w', b', b]``, C-contiguous."""
    ka, d, kb = x.shape
    dw, _, _, dw2 = w.shape
    cb = rb.shape[2]
    r = rb.transpose(1, 0, 2).reshape(kb, dw2 * cb)                # (b', w' b)
    t = (x.reshape(ka * d, kb) @ r).reshape(ka, d * dw2, cb)       # (a', t w', b)
    return np.matmul(w.reshape(dw * d, d * dw2), t).reshape(ka, dw, d, cb)   # (a', w s, b)


def wr_product(x: np.ndarray, w: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """``P[(w a'), s, b] = sum W[w, s, t, w'] x[a', t, b'] R[w', b', b]`` (``a'`` may be fused)."""
    t = _wr_half(x, w, rb)
    ka, dw, d, cb = t.shape
    return contiguous(t.transpose(1, 0, 2, 3).reshape(dw * ka, d, cb))


def left_step(lb: np.ndarray, a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``L'[b, w', b'] = sum L[a, w, a'] conj(A[a, s, b]) W[w, s, t, w'] A[a', t, b']``."""
    ca, d, cb = a.shape
    t = lw_product(lb, w, a)                                       # (a, s, w' b')
    return (a.reshape(ca * d, cb).conj().T @ t.reshape(ca * d, -1)).reshape(cb, w.shape[3], a.shape[2])


def right_step(rb: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``R'[w, a', a] = sum W[w, s, t, w'] B[a', t, b'] conj(B[a, s, b]) R[w', b', b]``."""
    ka, d, cb = b.shape
    t = _wr_half(b, w, rb)                                         # (a', w, s, b)
    dw = t.shape[1]
    out = t.reshape(ka * dw, d * cb) @ b.reshape(ka, d * cb).conj().T   # (a' w, a)
    return contiguous(out.reshape(ka, dw, ka).transpose(1, 0, 2))


class EnvCache(Generic[B]):
    """Left and right environment blocks of a chain of ``L`` sites, of any kind: ``left(i)``
    covers sites ``< i``, ``right(i)`` sites ``>= i``; ``left(0)`` and ``right(L)`` are the
    edges. ``nbytes(block)`` measures one block."""

    def __init__(self, L: int, left_edge: B, right_edge: B, nbytes: Callable[[B], int]):
        self.L = L
        self._left: list[B | None] = [None] * (L + 1)
        self._right: list[B | None] = [None] * (L + 1)
        self._nbytes = nbytes
        self._bytes = 0   # of the blocks held, kept up to date by _put
        self._put(self._left, 0, left_edge)
        self._put(self._right, L, right_edge)

    def _put(self, side: list[B | None], i: int, block: B | None) -> None:
        old = side[i]
        if old is not None:
            self._bytes -= self._nbytes(old)
        side[i] = block
        if block is not None:
            self._bytes += self._nbytes(block)

    def left(self, i: int) -> B:
        lb = self._left[i]
        assert lb is not None, f"left block {i} was not built"
        return lb

    def right(self, i: int) -> B:
        rb = self._right[i]
        assert rb is not None, f"right block {i} was not built"
        return rb

    def set_left(self, i: int, block: B) -> None:
        """``left(i)`` is ``block``; the stale ``right(i)`` is dropped."""
        self._put(self._left, i, block)
        if i < self.L:
            self._put(self._right, i, None)

    def set_right(self, i: int, block: B) -> None:
        """``right(i)`` is ``block``; the stale ``left(i)`` is dropped."""
        self._put(self._right, i, block)
        if i > 0:
            self._put(self._left, i, None)

    def moved(self, direction: str, bond: int, block: B) -> None:
        """The centre crossed ``bond`` in ``direction``: ``block`` is the new environment
        behind it (left of the bond moving right, right of it moving left)."""
        if direction == "right":
            self.set_left(bond, block)
        else:
            self.set_right(bond, block)

    def holds(self, side: str, i: int, block: B) -> bool:
        """Whether ``block`` is the current ``left(i)`` (``side="left"``) or ``right(i)``."""
        return (self._left if side == "left" else self._right)[i] is block

    def nbytes(self) -> int:
        """Bytes held by the cached blocks."""
        return self._bytes


def _array_bytes(x: np.ndarray) -> int:
    return x.nbytes


class Environments(EnvCache[np.ndarray]):
    """Dense left and right blocks for an MPO ``ws`` and an MPS."""

    def __init__(self, ws: list[np.ndarray], dtype: Any):
        one = array_module(ws[0]).ones((1, 1, 1), dtype=dtype)
        super().__init__(len(ws), one, one.copy(), _array_bytes)
        self.ws = ws

    def push_left(self, i: int, a: np.ndarray) -> None:
        """Site ``i`` became left-canonical ``a``: build ``left(i+1)``, drop the stale ``right(i+1)``."""
        self.set_left(i + 1, left_step(self.left(i), a, self.ws[i]))

    def push_right(self, i: int, b: np.ndarray) -> None:
        """Site ``i`` became right-canonical ``b``: build ``right(i)``, drop the stale ``left(i)``."""
        self.set_right(i, right_step(self.right(i + 1), b, self.ws[i]))


def mpo_squared(ws: list[np.ndarray], psi: list[np.ndarray]) -> complex:
    """``<psi|H H|psi>`` with two MPO layers (blocks ``(bra, w1, w2, ket)``)."""
    env = array_module(psi[0]).ones((1, 1, 1, 1), dtype=np.result_type(ws[0].dtype, psi[0].dtype))
    for a, w in zip(psi, ws):
        # ket first, then the two MPO layers, then the bra
        t = np.tensordot(env, a, axes=(3, 0))                 # (a, w1, w2, t, b')
        t = np.tensordot(t, w, axes=([2, 3], [0, 2]))         # (a, w1, b', u, w2')
        t = np.tensordot(t, w, axes=([1, 3], [0, 2]))         # (a, b', w2', s, w1')
        env = np.tensordot(a.conj(), t, axes=([0, 1], [0, 3]))  # (b, b', w2', w1')
        env = contiguous(env.transpose(0, 3, 2, 1))
    return complex(env.reshape(()))
