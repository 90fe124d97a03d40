"""Array operations on MPS site tensors, one protocol for every format of site, so that the
algorithms above (compression, MPO application, compressed sums) are written once; and the one
compression sweep, :func:`compress_sweep`.

An *ops* object (:func:`ops_for`, chosen by the type of the sites) gives

* ``einsum(spec, *xs)`` and ``conj(x)``: ``tenferro.einsum``/``tenferro.conj`` for dense
  sites, the structured dispatcher's for :class:`~tensor4all.SymmetricTensor` sites;
* ``split(x, nrow, max_bond, cutoff, direction)``: ``x ~ left @ right`` with the legs
  ``x[:nrow]`` on the left, by a truncated SVD (the one truncation of
  :mod:`tensor4all.linalg.truncation`: at most ``max_bond`` values, a relative discarded weight
  at most ``cutoff``; for symmetric tensors one SVD per sector and one ranking across them,
  :func:`~tensor4all.linalg.truncation.sector_keep`), the weights moved with the orthogonality
  centre (into ``right`` toward ``"right"``, into ``left`` toward ``"left"``);
* ``left_orthonormal(ts)``: sites ``0..L-2`` left-orthonormal by QR;
* ``product_site(w, a)``: the site of ``W|psi>`` with the bonds fused (bond dimensions multiply).

:class:`DenseOps` and :class:`SymmetricOps` are tenferro operations (``tenferro.linalg.svd``/``qr``,
per sector for symmetric tensors), so tidu differentiates through them: the truncated SVD is the
kept part of the full thin SVD, whose derivative includes the discarded subspace (as
``tenferro.linalg.truncated_svd``); the number kept is read from the concrete singular values and
is not differentiated (piecewise constant). :class:`ArrayOps` is the same math on concrete NumPy
arrays by NumPy and SciPy directly (LAPACK gesdd and QR, one BLAS ``tensordot`` per pair
contraction): the numerical tools on concrete values (``MPS.compress``) take it, free of the
per-call dispatch of eager tenferro operations, which dominates on small sites.

:func:`compress_sweep` (QR to left-orthonormal form, then :func:`truncate_sweep`, the right-to-left
truncated SVDs) is the one compression: ``MPS.compress``, the compressed sum and ``apply`` use it.
:func:`unit_scaled` and :func:`rescaled` are the exact power-of-two scaling that keeps the
compression of a long concrete chain in the float range.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Sequence

import numpy as np
from scipy.linalg import blas

import tenferro as tf
import tidu

from ..tools.errors import NotDifferentiableError
from .symmetric_sites import bond_factors, canonical_sites, host_blocks, is_symmetric
from ..linalg.canonical import left_canonical
from ..linalg.truncation import (
    absorb,
    orthonormal_factors,
    sector_keep,
    svd_truncated,
    thin_svd,
    truncation_keep,
    weighted_factors,
)
from ..tools.checks import concrete, ldexp, np_dtype
from ..tools.device import host_tensor, to_host
from ..structured import SymmetricTensor, fuse
from ..structured import einsum as structured_einsum

__all__ = [
    "ArrayOps",
    "DenseOps",
    "SymmetricOps",
    "ops_for",
    "canonical_dense",
    "compress_sweep",
    "truncate_sweep",
    "unit_scaled",
    "rescaled",
    "in_range",
    "ldexp_site",
]


#: BLAS ``i?amax`` (the index of the largest absolute entry) by the dtype of a real array
_AMAX = {np.dtype(np.float64): blas.idamax, np.dtype(np.float32): blas.isamax}


def _values(s: Any, what: str) -> np.ndarray:
    """The concrete singular values of ``s`` (a tensor or a JVP tracer) as a NumPy array."""
    c = concrete(s)
    if c is None:
        raise NotDifferentiableError(
            f"{what}: the bond dimensions are chosen from the singular values, which are "
            "abstract while a graph is traced (tenferro.jit); call it outside jit"
        )
    return np.asarray(c)


class DenseOps:
    """Dense site tensors (tenferro tensors or tidu tracers)."""

    einsum = staticmethod(tf.einsum)
    conj = staticmethod(tf.conj)

    @staticmethod
    def split(x: Any, nrow: int, max_bond: int | None, cutoff: float, direction: str) -> tuple[Any, Any, float]:
        shape = tuple(x.shape)
        rows, cols = shape[:nrow], shape[nrow:]
        m = tf.reshape(x, (math.prod(rows), math.prod(cols)))
        u, s, vh = tf.linalg.svd(m)
        values = _values(s, "MPS truncation")
        k, err = truncation_keep(values, max_bond, cutoff)
        if k < tuple(s.shape)[0]:
            u, s, vh = u[:, :k], s[:k], vh[:k, :]
        u, vh = weighted_factors(m, u, s, vh, direction, values[:k])  # exact derivatives at degenerate kept values
        return tf.reshape(u, rows + (k,)), tf.reshape(vh, (k,) + cols), err

    @staticmethod
    def product_site(w: Any, a: Any) -> Any:
        """The site of ``W|psi>`` with the bonds fused: ``(D_l chi_l, d, D_r chi_r)``."""
        dl, d, _, dr = tuple(w.shape)
        al, _, ar = tuple(a.shape)
        return tf.reshape(tf.einsum("wstx,atc->wasxc", w, a), (dl * al, d, dr * ar))

    @staticmethod
    def left_orthonormal(ts: Sequence[Any]) -> list[Any]:
        ts = list(ts)
        for i in range(len(ts) - 1):
            dl, d, dr = tuple(ts[i].shape)
            q, r = orthonormal_factors(tf.reshape(ts[i], (dl * d, dr)), "right")
            ts[i] = tf.reshape(q, (dl, d, tuple(q.shape)[1]))
            ts[i + 1] = tf.einsum("ab,bsc->asc", r, ts[i + 1])
        return ts


def canonical_dense(ts: Sequence[Any], center: int) -> list[Any]:
    """Dense sites (tenferro tensors or tracers) in mixed canonical form around ``center``: QR from the
    left, LQ from the right (differentiable)."""
    ts = list(ts)
    for i in range(center):
        dl, d, dr = tuple(ts[i].shape)
        q, r = orthonormal_factors(tf.reshape(ts[i], (dl * d, dr)), "right")
        ts[i] = tf.reshape(q, (dl, d, tuple(q.shape)[1]))
        ts[i + 1] = tf.einsum("ab,bsc->asc", r, ts[i + 1])
    for i in range(len(ts) - 1, center, -1):
        dl, d, dr = tuple(ts[i].shape)
        lo, q = orthonormal_factors(tf.reshape(ts[i], (dl, d * dr)), "left")
        ts[i] = tf.reshape(q, (tuple(q.shape)[0], d, dr))
        ts[i - 1] = tf.einsum("asb,bc->asc", ts[i - 1], lo)
    return ts


@functools.lru_cache(maxsize=256)
def _pair_plan(spec: str) -> tuple[tuple[list[int], list[int]], tuple[int, ...] | None] | None:
    """The ``np.tensordot`` axes and output permutation (None: none needed) of a two-operand ``spec``
    whose labels are each summed (in both operands, not in the output) or kept (in one operand and
    the output); None for anything else (a trace, a batch label)."""
    ins, out = spec.replace(" ", "").split("->")
    a, b = ins.split(",")
    summed = [c for c in a if c in b]
    kept = [c for c in a + b if c not in summed]
    if len(set(a)) < len(a) or len(set(b)) < len(b) or any(c in out for c in summed) or sorted(kept) != sorted(out):
        return None
    perm = tuple(kept.index(c) for c in out)
    return ([a.index(c) for c in summed], [b.index(c) for c in summed]), None if perm == tuple(sorted(perm)) else perm


def _array_einsum(spec: str, *xs: np.ndarray) -> np.ndarray:
    """``np.einsum``, a pair contraction as one ``np.tensordot`` (BLAS, and no path search per call)."""
    plan = _pair_plan(spec) if len(xs) == 2 and "->" in spec else None
    if plan is None:
        return np.einsum(spec, *xs, optimize=True)
    axes, perm = plan
    out = np.tensordot(xs[0], xs[1], axes)
    return out if perm is None else out.transpose(perm)


class ArrayOps:
    """Concrete dense site tensors as NumPy arrays: the operations of :class:`DenseOps` by NumPy and
    SciPy directly (:func:`~tensor4all.linalg.truncation.svd_truncated` and
    :func:`~tensor4all.linalg.truncation.absorb`, the QR of
    :func:`~tensor4all.linalg.canonical.left_canonical`); not differentiable."""

    einsum = staticmethod(_array_einsum)
    conj = staticmethod(np.conj)
    left_orthonormal = staticmethod(left_canonical)

    @staticmethod
    def split(
        x: np.ndarray, nrow: int, max_bond: int | None, cutoff: float, direction: str
    ) -> tuple[np.ndarray, np.ndarray, float]:
        rows, cols = x.shape[:nrow], x.shape[nrow:]
        u, s, vh, err = svd_truncated(x.reshape(math.prod(rows), math.prod(cols)), max_bond, cutoff)
        left, right = absorb(u, s, vh, direction)
        k = len(s)
        return left.reshape(rows + (k,)), right.reshape((k,) + cols), err

    @staticmethod
    def product_site(w: np.ndarray, a: np.ndarray) -> np.ndarray:
        dl, d, _, dr = w.shape
        al, _, ar = a.shape
        return _array_einsum("wstx,atc->wasxc", w, a).reshape(dl * al, d, dr * ar)


class SymmetricOps:
    """:class:`~tensor4all.SymmetricTensor` site tensors: block-sparse contractions through the
    structured dispatcher, one SVD (or QR) per charge sector of the fused matrix. The SVD runs on
    tenferro blocks (differentiable), or on concrete host blocks by SciPy (the same gesdd, without
    the per-call dispatch); the factors are assembled, truncated and scaled by the same code."""

    einsum = staticmethod(structured_einsum)

    @staticmethod
    def conj(x: SymmetricTensor) -> SymmetricTensor:
        return x.conj()

    @staticmethod
    def split(
        x: SymmetricTensor, nrow: int, max_bond: int | None, cutoff: float, direction: str
    ) -> tuple[SymmetricTensor, SymmetricTensor, float]:
        n = len(x.legs)
        m = x.fuse_legs(list(range(nrow)), list(range(nrow, n)))
        keys = list(m.blocks)  # one block per row sector: (row charge, column charge)
        host = all(isinstance(b, tf.Tensor) and b.placement == tf.CPU for b in m.blocks.values())
        parts = [thin_svd(np.asarray(m.blocks[k])) if host else tf.linalg.svd(m.blocks[k]) for k in keys]
        values = [p[1] if host else _values(p[1], "MPS truncation") for p in parts]
        counts, err = sector_keep(dict(enumerate(values)), max_bond, cutoff)
        factors = {}
        for j, (key, (u, s, vh)) in enumerate(zip(keys, parts)):
            k = counts[j]
            if k == 0:
                continue  # the sector leaves the bond
            u, s, vh = u[:, :k], s[:k], vh[:k, :]
            if host:  # NumPy factors back to tenferro tensors
                factors[key] = tuple(host_tensor(f) for f in absorb(u, s, vh, direction))
            else:  # differentiated: exact derivatives at degenerate kept values
                factors[key] = weighted_factors(m.blocks[key], u, s, vh, direction, values[j][:k])
        u, vh = bond_factors(m, factors)
        left = u.split_legs(0) if nrow > 1 else u
        right = vh.split_legs(1) if n - nrow > 1 else vh
        return left, right, err

    @staticmethod
    def product_site(w: SymmetricTensor, a: SymmetricTensor) -> SymmetricTensor:
        """The site of ``W|psi>`` with the bonds fused: the left bond by ``fuse_legs``, the right
        one through the identity on the same fused leg (a fuser), so that neighbouring sites
        index the shared bond alike."""
        fused = fuse(w.legs[3].dual(), a.legs[2].dual())
        eye = {q: tf.eye(d, dtype=a.dtype) for q, d in fused.sectors.items()}
        fuser = SymmetricTensor({(q, q): b for q, b in eye.items()}, [fused, fused.dual()]).split_legs(0)
        return structured_einsum("wstx,atc,xcb->wasb", w, a, fuser).fuse_legs([0, 1], [2], [3])

    @staticmethod
    def left_orthonormal(ts: Sequence[SymmetricTensor]) -> list[SymmetricTensor]:
        return canonical_sites(ts, len(ts) - 1)


def ops_for(ts: Sequence[Any]) -> type[ArrayOps] | type[DenseOps] | type[SymmetricOps]:
    """The ops of a chain of site tensors: symmetric, NumPy arrays, else tenferro tensors or tracers."""
    if is_symmetric(ts):
        return SymmetricOps
    return ArrayOps if isinstance(ts[0], np.ndarray) else DenseOps


def compress_sweep(ts: Sequence[Any], max_bond: int | None, cutoff: float) -> tuple[list[Any], float]:
    """The compression of a chain of any format: QR to left-orthonormal form, then
    :func:`truncate_sweep` (each truncation is then optimal for its bond given the rest: the SVD
    compression of Schollwoeck, Ann. Phys. 326, 96 (2011), Sec. 4.5.1). Returns the sites and the
    summed relative discarded weight."""
    return truncate_sweep(ops_for(ts).left_orthonormal(ts), max_bond, cutoff)


def _max_abs(a: np.ndarray) -> float:
    """The largest absolute entry of a host array (of a complex one, the largest absolute real or
    imaginary part, within a factor ``sqrt(2)`` of it) by BLAS ``i?amax``: one pass, no temporary."""
    if not a.size:
        return 0.0
    x = a.ravel(order="K")
    if x.dtype.kind == "c":
        x = x.view(x.real.dtype)
    if x.dtype not in _AMAX:
        return float(np.max(np.abs(x)))
    return abs(float(x[_AMAX[x.dtype](x)]))


def _block_max_abs(b: Any) -> float:
    """:func:`_max_abs` of a concrete block: a host array's or host tenferro tensor's own storage (no
    copy), a device array reduced where it lives (one number comes back)."""
    if isinstance(b, tf.Tensor) and b.placement.device is None:
        return _max_abs(b.numpy())
    if isinstance(b, np.ndarray):
        return _max_abs(b)
    return float(tf.amax(tf.abs(b))) if math.prod(tuple(b.shape)) else 0.0


def site_exponent(t: Any) -> int:
    """``e`` with the largest absolute entry of a concrete site in ``[2**(e-1), 2**e)`` (for complex
    entries ``[2**(e-1), 2**(e+1))``; 0 for zeros and for abstract values): a NumPy array, a tenferro
    tensor or a tidu tracer (its primal), dense or symmetric."""
    blocks = t.blocks.values() if isinstance(t, SymmetricTensor) else [t]
    values = [b if isinstance(b, np.ndarray) else concrete(b) for b in blocks]
    m = max((_block_max_abs(b) for b in values if b is not None), default=0.0)
    return math.frexp(m)[1] if 0.0 < m < math.inf else 0


def ldexp_site(t: Any, e: int) -> Any:
    """A concrete site times ``2**e`` (exact unless it over- or underflows): NumPy arrays and symmetric
    host blocks by ``ldexp``, tenferro tensors and tracers by a multiplication by the power of two (a
    constant for tidu: derivatives scale alike)."""
    if e == 0 or isinstance(t, np.ndarray):
        return ldexp(t, e)
    if isinstance(t, SymmetricTensor) and host_blocks([t]):
        return tidu.tree_map(lambda b: host_tensor(ldexp(to_host(b), e)), t)
    h = e // 2  # two factors: 2**e itself may lie outside the float range
    return (t * float(ldexp(1.0, h))) * float(ldexp(1.0, e - h))


def unit_scaled(ts: Sequence[Any]) -> tuple[list[Any], int]:
    """Each concrete site (a NumPy array, a tenferro tensor or tracer, dense or symmetric) divided by the
    power of two ``2**e_i`` that brings its largest entry into ``[0.5, 1)`` (exact), and ``sum e_i``; the sites as they are
    and 0 when no partial sum ``e_0 + ... + e_i`` exceeds 256 in size. (A compression sweep carries
    the scale of the sites to its left, so the sweep of the unscaled chain is that of the scaled
    one times ``2**(e_0 + ... + e_i)`` at site ``i``, the same numbers while nothing leaves the
    float range; only a chain whose scale drifts far needs the copy.)"""
    exps = [site_exponent(t) for t in ts]
    if max(abs(e) for e in itertools.accumulate(exps)) <= 256:
        return list(ts), 0
    return [ldexp_site(t, -e) for t, e in zip(ts, exps)], sum(exps)


def in_range(t: Any, e: int) -> bool:
    """Whether the concrete site ``t`` times ``2**e`` keeps its largest entry well inside the float range
    (``2**±1000`` in double precision, ``2**±120`` in single)."""
    single = np.finfo(np_dtype(t.dtype)).bits == 32  # float32 or complex64
    return abs(site_exponent(t) + e) < (120 if single else 1000)


def rescaled(ts: Sequence[Any], e: int, site: int = 0) -> list[Any]:
    """The concrete chain times ``2**e``: on ``site`` (the centre of a canonical form) when that stays
    in range, else spread over the sites."""
    ts = list(ts)
    if e == 0:
        return ts
    if in_range(ts[site], e):
        ts[site] = ldexp_site(ts[site], e)
        return ts
    q, r = divmod(e, len(ts))
    return [ldexp_site(t, q + (1 if i < r else 0)) for i, t in enumerate(ts)]


def truncate_sweep(ts: Sequence[Any], max_bond: int | None, cutoff: float) -> tuple[list[Any], float]:
    """Right-to-left truncated SVDs of a chain whose sites ``0..L-2`` are left-orthonormal (so
    each truncation is optimal for its bond); the result is right-orthonormal with the norm on
    site 0. Returns the sites and the summed relative discarded weight."""
    ops = ops_for(ts)
    ts = list(ts)
    total = 0.0
    for i in range(len(ts) - 1, 0, -1):
        left, right, err = ops.split(ts[i], 1, max_bond, cutoff, "left")
        total += err
        ts[i] = right
        ts[i - 1] = ops.einsum("asb,bc->asc", ts[i - 1], left)
    return ts, total
