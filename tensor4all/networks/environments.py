"""The one environment object of the chain algorithms, and the block updates that fill it.

:class:`EnvCache` holds the left and right blocks of a chain and moves them with the
orthogonality centre (:meth:`EnvCache.set_left`, :meth:`EnvCache.set_right`,
:meth:`EnvCache.moved`): a block made stale by a move is dropped at once, so the cache holds
about ``L`` blocks (memory ``~ L * chi^2 * D`` numbers). It serves every algorithm that
contracts a chain from its two ends: the DMRG and TDVP sweeps (dense blocks here, the
per-sector blocks of the sector backend, the tenferro blocks of the traced backend), the
variational fit of :func:`~tensor4all.apply` (``<phi|W|psi>``) and the expectation values and
correlation matrices of :mod:`.correlations` (``<psi|psi>`` with site operators).

One index order for every block (``k`` counts the sites the block covers):

* left block (sites ``< k``): ``(bra, w, ket)``;
* right block (sites ``>= k``): ``(w, ket, bra)``;
* without an MPO (an overlap, a transfer matrix with a site operator): the same without
  ``w``, left ``(bra, ket)`` and right ``(ket, bra)``;
* MPS site tensors ``(left, d, right)``; MPO tensors ``(left, out, in, right)``; a site
  operator ``(out, in)``. The bra is conjugated by the update, never by the caller.

Two sets of updates fill the blocks, for two kinds of array:

* **Raw NumPy (or CuPy: :mod:`..tools.device`) arrays, the sweeps' hot path:**
  :func:`left_step`, :func:`right_step` (``<psi|H|psi>``, C-contiguous blocks, every update
  and every effective-Hamiltonian product a plain matrix multiplication without transposes),
  :class:`Environments` (the cache of those blocks) and :func:`mpo_squared` (``<H^2>``). The
  half steps ``L W x`` (:func:`lw_product`) and ``x W R`` (:func:`wr_product`) are the first
  two GEMMs of a left and a right step; they are also the subspace-expansion terms of a one-
  or two-site update (Hubig et al., Phys. Rev. B 91, 155115 (2015)).
* **Differentiable (tenferro tensors, tidu tracers, :class:`~tensor4all.SymmetricTensor`
  sites blockwise):** :func:`transfer_left` and :func:`transfer_right` move a block across
  one site for a bra that may differ from the ket and an MPO tensor, a site operator or
  nothing between them; :func:`close` contracts a left and a right block to a scalar, at one
  bond or across one such site. They go through :func:`site_einsum` (tenferro's einsum, or
  the structured dispatcher's for symmetric sites), so ``tidu.grad`` differentiates them; an
  edge is ``None`` (nothing to contract), so a symmetric chain needs no trivial edge tensor.

The two sets are kept apart because the NumPy steps are fixed GEMM sequences on C-ordered
buffers, and the einsum updates on the same blocks take 1.3 to 3.5 times as long (chi 16 to
256, one thread: tenferro's einsum is column-major, with its own path search and dispatch),
while the einsum updates are what carries AD and the symmetric blocks. Both give the same
blocks in the one index order above (``tests/tensor4all/test_one_environment.py``).
"""

from __future__ import annotations

from math import prod
from typing import Any, Callable, Generic, TypeVar

import numpy as np

import tenferro as tf
import tidu

from ..tools.device import array_module, contiguous
from ..structured import SymmetricTensor
from ..structured import einsum as structured_einsum

__all__ = [
    "lw_product",
    "wr_product",
    "left_step",
    "right_step",
    "EnvCache",
    "Environments",
    "mpo_squared",
    "site_einsum",
    "site_conj",
    "transfer_left",
    "transfer_right",
    "close",
    "block_bytes",
]

B = TypeVar("B")

#: the marker of a block not built (``None`` is a block: the edge of a differentiable cache)
_UNBUILT: Any = object()


def lw_product(lb: np.ndarray, w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``P[a, s, (w', b')] = sum L[a, w, a'] W[w, s, t, w'] x[a', t, b']`` (``b'`` may be a fused
    index, e.g. the second site and the right bond): two GEMMs."""
    ca, dw, ka = lb.shape
    _, d, kb = x.shape
    dw2 = w.shape[3]
    t = (lb.reshape(ca * dw, ka) @ x.reshape(ka, d * kb)).reshape(ca, dw * d, kb)  # (a, w t, b')
    t = np.matmul(w.transpose(1, 3, 0, 2).reshape(d * dw2, dw * d), t)  # (a, s w', b')
    return t.reshape(ca, d, dw2 * kb)


def _wr_half(x: np.ndarray, w: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """``T[a', w, s, b] = sum W[w, s, t, w'] x[a', t, b'] R[w', b', b]``, C-contiguous."""
    ka, d, kb = x.shape
    dw, _, _, dw2 = w.shape
    cb = rb.shape[2]
    r = rb.transpose(1, 0, 2).reshape(kb, dw2 * cb)  # (b', w' b)
    t = (x.reshape(ka * d, kb) @ r).reshape(ka, d * dw2, cb)  # (a', t w', b)
    return np.matmul(w.reshape(dw * d, d * dw2), t).reshape(ka, dw, d, cb)  # (a', w s, b)


def wr_product(x: np.ndarray, w: np.ndarray, rb: np.ndarray) -> np.ndarray:
    """``P[(w a'), s, b] = sum W[w, s, t, w'] x[a', t, b'] R[w', b', b]`` (``a'`` may be fused)."""
    t = _wr_half(x, w, rb)
    ka, dw, d, cb = t.shape
    return contiguous(t.transpose(1, 0, 2, 3).reshape(dw * ka, d, cb))


def left_step(lb: np.ndarray, a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``L'[b, w', b'] = sum L[a, w, a'] conj(A[a, s, b]) W[w, s, t, w'] A[a', t, b']``."""
    ca, d, cb = a.shape
    t = lw_product(lb, w, a)  # (a, s, w' b')
    return (a.reshape(ca * d, cb).conj().T @ t.reshape(ca * d, -1)).reshape(cb, w.shape[3], a.shape[2])


def right_step(rb: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``R'[w, a', a] = sum W[w, s, t, w'] B[a', t, b'] conj(B[a, s, b]) R[w', b', b]``."""
    ka, d, cb = b.shape
    t = _wr_half(b, w, rb)  # (a', w, s, b)
    dw = t.shape[1]
    out = t.reshape(ka * dw, d * cb) @ b.reshape(ka, d * cb).conj().T  # (a' w, a)
    return contiguous(out.reshape(ka, dw, ka).transpose(1, 0, 2))


class EnvCache(Generic[B]):
    """Left and right environment blocks of a chain of ``L`` sites, of any kind: ``left(i)``
    covers sites ``< i``, ``right(i)`` sites ``>= i``; ``left(0)`` and ``right(L)`` are the
    edges (``None`` for the differentiable updates: nothing to contract). ``nbytes(block)``
    measures one block."""

    def __init__(self, L: int, left_edge: B, right_edge: B, nbytes: Callable[[B], int]):
        self.L = L
        self._left: list[Any] = [_UNBUILT] * (L + 1)
        self._right: list[Any] = [_UNBUILT] * (L + 1)
        self._nbytes = nbytes
        self._bytes = 0  # of the blocks held, kept up to date by _put
        self._put(self._left, 0, left_edge)
        self._put(self._right, L, right_edge)

    def _put(self, side: list[Any], i: int, block: Any) -> None:
        old = side[i]
        if old is not _UNBUILT:
            self._bytes -= self._nbytes(old)
        side[i] = block
        if block is not _UNBUILT:
            self._bytes += self._nbytes(block)

    def left(self, i: int) -> B:
        lb = self._left[i]
        assert lb is not _UNBUILT, f"left block {i} was not built"
        return lb

    def right(self, i: int) -> B:
        rb = self._right[i]
        assert rb is not _UNBUILT, f"right block {i} was not built"
        return rb

    def set_left(self, i: int, block: B) -> None:
        """``left(i)`` is ``block``; the stale ``right(i)`` is dropped."""
        self._put(self._left, i, block)
        if i < self.L:
            self._put(self._right, i, _UNBUILT)

    def set_right(self, i: int, block: B) -> None:
        """``right(i)`` is ``block``; the stale ``left(i)`` is dropped."""
        self._put(self._right, i, block)
        if i > 0:
            self._put(self._left, i, _UNBUILT)

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
        t = np.tensordot(env, a, axes=(3, 0))  # (a, w1, w2, t, b')
        t = np.tensordot(t, w, axes=([2, 3], [0, 2]))  # (a, w1, b', u, w2')
        t = np.tensordot(t, w, axes=([1, 3], [0, 2]))  # (a, b', w2', s, w1')
        env = np.tensordot(a.conj(), t, axes=([0, 1], [0, 3]))  # (b, b', w2', w1')
        env = contiguous(env.transpose(0, 3, 2, 1))
    return complex(env.reshape(()))


# ---- the differentiable updates: tenferro tensors, tidu tracers, symmetric sites ----------------
def site_einsum(spec: str, *operands: Any) -> Any:
    """``tenferro.einsum``, or the structured dispatcher's when a symmetric site takes part."""
    for o in operands:  # a loop, not any(...): this runs per transfer, O(L^2) times per correlation matrix
        if isinstance(o, SymmetricTensor):
            return structured_einsum(spec, *operands)
    return tf.einsum(spec, *operands)


def site_conj(t: Any) -> Any:
    """The complex conjugate of a site tensor, dense or symmetric."""
    return t.conj() if isinstance(t, SymmetricTensor) else tf.conj(t)


# (block given, legs of the operator: 0 none, 2 a site operator, 4 an MPO tensor) -> the einsum.
# The operands are [block,] conj(bra), [op,] ket on the left and [block,] ket, [op,] conj(bra) on
# the right: the structured einsum contracts symmetric operands left to right, and in this order
# every pairwise step costs O(chi^3 D d) at most (starting from the site tensors would cost chi^4)
_LEFT = {
    (False, 0): "asc,asd->cd",
    (True, 0): "ab,asc,bsd->cd",
    (False, 2): "asc,st,atd->cd",
    (True, 2): "ab,asc,st,btd->cd",
    (False, 4): "asc,wstv,atd->cvd",
    (True, 4): "awb,asc,wstv,btd->cvd",
}
_RIGHT = {
    (False, 0): "xsc,asc->xa",
    (True, 0): "cb,xsc,asb->xa",
    (False, 2): "xtc,st,asc->xa",
    (True, 2): "cb,xtc,st,asb->xa",
    (False, 4): "xtc,wstv,asc->wxa",
    (True, 4): "vcb,xtc,wstv,asb->wxa",
}


def transfer_left(env: Any, bra: Any, ket: Any, op: Any = None) -> Any:
    """The left block ``env`` (``(bra, [w,] ket)``; None: the left edge) moved across one site:
    ``L'[b, (w',) b'] = sum L[a, (w,) a'] conj(bra[a, s, b]) op[(w,) s, t(, w')] ket[a', t, b']``
    with ``op`` an MPO tensor, a site operator ``(s, t)`` or None (the identity)."""
    spec = _LEFT[env is not None, 0 if op is None else op.ndim]
    operands = (site_conj(bra), ket) if op is None else (site_conj(bra), op, ket)
    return site_einsum(spec, *operands) if env is None else site_einsum(spec, env, *operands)


def transfer_right(env: Any, bra: Any, ket: Any, op: Any = None) -> Any:
    """The right block ``env`` (``([w,] ket, bra)``; None: the right edge) moved across one site:
    ``R'[(w,) a', a] = sum op[(w,) s, t(, w')] ket[a', t, b'] conj(bra[a, s, b]) R[(w',) b', b]``."""
    spec = _RIGHT[env is not None, 0 if op is None else op.ndim]
    operands = (ket, site_conj(bra)) if op is None else (ket, op, site_conj(bra))
    return site_einsum(spec, *operands) if env is None else site_einsum(spec, env, *operands)


# legs of the operator -> the einsum of left block, conj(bra), [op,] ket, right block (one call:
# faster than a transfer and a closing contraction, whose transposed operands tenferro copies)
_CLOSE_SITE = {0: "ab,asc,bsd,dc->", 2: "ab,asc,st,btd,dc->", 4: "awb,asc,wstv,btd,vdc->"}


def close(left: Any, right: Any, bra: Any = None, ket: Any = None, op: Any = None) -> Any:
    """The whole chain as a scalar: the left and right blocks of one bond contracted, or, with
    a site (``bra``, ``ket`` and ``op`` as in :func:`transfer_left`), the left block of site
    ``k`` and the right block of site ``k + 1`` contracted across it. ``None`` is an edge (the
    other block, of one entry, is then the scalar)."""
    if bra is not None:
        if left is not None and right is not None:
            operands = (site_conj(bra), ket) if op is None else (site_conj(bra), op, ket)
            return site_einsum(_CLOSE_SITE[0 if op is None else op.ndim], left, *operands, right)
        left = transfer_left(left, bra, ket, op)
    if left is None or right is None:
        block = right if left is None else left
        return tf.reshape(block.to_dense() if isinstance(block, SymmetricTensor) else block, ())
    return site_einsum("cd,dc->" if left.ndim == 2 else "awb,wba->", left, right)


def block_bytes(block: Any) -> int:
    """Bytes of a differentiable block (a tenferro tensor, a tracer's value, a symmetric
    tensor's blocks; None, an edge, holds none): the ``nbytes`` of their :class:`EnvCache`."""
    if block is None:
        return 0
    leaves = block.blocks.values() if isinstance(block, SymmetricTensor) else (block,)
    return sum(prod(aval.shape) * aval.dtype.itemsize for aval in map(tidu.aval_of, leaves))
