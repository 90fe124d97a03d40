"""Effective Hamiltonians of DMRG: ``H_eff x`` for one- and two-site tensors, as a few
matrix multiplications on raw NumPy (or CuPy) arrays (see ``_environments`` for the layouts).

Two-site product, for ``x[a', s1', s2', b']`` (cost ``O(chi^3 d^2 D)``):

1. ``T1 = L[(a w), a'] @ x[a', (s1' s2' b')]``             -> ``(a, w s1' s2', b')``
2. ``T2 = W12[(s1 s2 w''), (w s1' s2')] @ T1[a]``          -> ``(a, s1 s2 w'', b')``
3. ``y  = T2[(a s1 s2), (w'' b')] @ R[(w'' b'), b]``        -> ``(a, s1, s2, b)``

where ``W12`` is the two MPO tensors contracted once per local problem (``D^2 d^4``).
"""

from __future__ import annotations

import numpy as np

from ..tools.device import array_module, contiguous

__all__ = ["TwoSiteOperator", "OneSiteOperator", "BondOperator"]


class TwoSiteOperator:
    """``x -> H_eff x`` on flattened two-site tensors ``(left, d1, d2, right)``."""

    def __init__(self, lb: np.ndarray, w1: np.ndarray, w2: np.ndarray, rb: np.ndarray):
        self.ca, dw, self.ka = lb.shape
        dw2, self.kb, self.cb = rb.shape
        self.d1, self.d2 = w1.shape[1], w2.shape[1]
        self.dw, self.dw2 = dw, dw2
        self.lm = lb.reshape(self.ca * dw, self.ka)
        self.rm = rb.reshape(dw2 * self.kb, self.cb)
        # W12[(s1 s2 w''), (w s1' s2')]: (w s t x)(x u v y) -> (s u y w t v)
        w12 = array_module(w1).tensordot(w1, w2, axes=(3, 0)).transpose(1, 3, 5, 0, 2, 4)
        self.w12 = contiguous(w12.reshape(self.d1 * self.d2 * dw2, dw * self.d1 * self.d2))
        self.shape = (self.ca * self.d1 * self.d2 * self.cb, self.ka * self.d1 * self.d2 * self.kb)
        self.dtype = np.result_type(lb.dtype, w1.dtype, w2.dtype, rb.dtype)
        self.matvecs = 0

    def matvec(self, x: np.ndarray) -> np.ndarray:
        self.matvecs += 1
        dd = self.d1 * self.d2
        t = (self.lm @ x.reshape(self.ka, dd * self.kb)).reshape(self.ca, self.dw * dd, self.kb)
        t = np.matmul(self.w12, t)
        return (t.reshape(self.ca * dd, self.dw2 * self.kb) @ self.rm).reshape(-1)


class OneSiteOperator:
    """``x -> H_eff x`` on flattened one-site tensors ``(left, d, right)``."""

    def __init__(self, lb: np.ndarray, w: np.ndarray, rb: np.ndarray):
        self.ca, dw, self.ka = lb.shape
        dw2, self.kb, self.cb = rb.shape
        self.d, self.dw, self.dw2 = w.shape[1], dw, dw2
        self.lm = lb.reshape(self.ca * dw, self.ka)
        self.rm = rb.reshape(dw2 * self.kb, self.cb)
        self.wm = contiguous(w.transpose(1, 3, 0, 2).reshape(self.d * dw2, dw * self.d))
        self.shape = (self.ca * self.d * self.cb, self.ka * self.d * self.kb)
        self.dtype = np.result_type(lb.dtype, w.dtype, rb.dtype)
        self.matvecs = 0

    def matvec(self, x: np.ndarray) -> np.ndarray:
        self.matvecs += 1
        t = (self.lm @ x.reshape(self.ka, self.d * self.kb)).reshape(self.ca, self.dw * self.d, self.kb)
        t = np.matmul(self.wm, t)
        return (t.reshape(self.ca * self.d, self.dw2 * self.kb) @ self.rm).reshape(-1)


class BondOperator:
    """``C -> H_eff C`` on flattened bond matrices ``(left, right)`` (zero sites between the
    environments: the backward step of one-site TDVP): ``y = L[(a w), a'] C[a', b'] R[(w b'), b]``."""

    def __init__(self, lb: np.ndarray, rb: np.ndarray):
        self.ca, self.dw, self.ka = lb.shape
        dw2, self.kb, self.cb = rb.shape
        self.lm = lb.reshape(self.ca * self.dw, self.ka)
        self.rm = rb.reshape(dw2 * self.kb, self.cb)
        self.shape = (self.ca * self.cb, self.ka * self.kb)
        self.dtype = np.result_type(lb.dtype, rb.dtype)
        self.matvecs = 0

    def matvec(self, x: np.ndarray) -> np.ndarray:
        self.matvecs += 1
        t = (self.lm @ x.reshape(self.ka, self.kb)).reshape(self.ca, self.dw * self.kb)
        return (t @ self.rm).reshape(-1)
