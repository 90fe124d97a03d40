"""Array operations on MPS site tensors, one protocol for dense and symmetric chains, so that
the algorithms above (MPO application, compressed sums) are written once.

An *ops* object (:func:`ops_for`) gives

* ``einsum(spec, *xs)`` and ``conj(x)``: ``tenferro.einsum``/``tenferro.conj`` for dense
  sites, the structured dispatcher's for :class:`~tensor4all.SymmetricTensor` sites;
* ``split(x, nrow, max_bond, cutoff, direction)``: ``x ~ left @ right`` with the legs
  ``x[:nrow]`` on the left, by a truncated SVD (the policy of :mod:`._truncation`: at most
  ``max_bond`` values, a relative discarded weight at most ``cutoff``; for symmetric
  tensors one SVD per sector and one truncation across them), the weights moved with the
  orthogonality centre (into ``right`` toward ``"right"``, into ``left`` toward ``"left"``);
* ``left_orthonormal(ts)``: sites ``0..L-2`` left-orthonormal by QR;
* ``product_site(w, a)``: the site of ``W|psi>`` with the bonds fused (bond dimensions multiply).

Everything is tenferro operations (``tenferro.linalg.svd``/``qr``, and per sector for
symmetric tensors), so tidu differentiates through it: the truncated SVD is the kept part
of the full thin SVD, whose derivative includes the discarded subspace (as
``tenferro.linalg.truncated_svd``); the number kept is read from the concrete singular
values and is not differentiated (piecewise constant). On concrete values the same calls
run LAPACK through tenferro, as fast as NumPy.

:func:`truncate_sweep` is the right-to-left truncation of a left-orthonormal chain that
``apply`` and the compressed sum finish with.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import tenferro as tf

from ..tools.errors import NotDifferentiableError
from .symmetric_sites import canonical_sites, is_symmetric
from ..linalg.truncation import sector_keep, truncation_keep
from ..tools.checks import concrete
from ..structured import Leg, SectorDiagonal, SymmetricTensor, fuse
from ..structured import einsum as structured_einsum
from ..structured import linalg as structured_linalg

__all__ = ["DenseOps", "SymmetricOps", "ops_for", "truncate_sweep"]


def _values(s: Any, what: str) -> np.ndarray:
    """The concrete singular values of ``s`` (a tensor or a JVP tracer) as a NumPy array."""
    c = concrete(s)
    if c is None:
        raise NotDifferentiableError(f"{what}: the bond dimensions are chosen from the singular values, which are "
                                     "abstract while a graph is traced (tenferro.jit); call it outside jit")
    return np.asarray(c)


class DenseOps:
    """Dense site tensors (tenferro tensors or tidu tracers)."""

    einsum = staticmethod(tf.einsum)
    conj = staticmethod(tf.conj)

    @staticmethod
    def split(x: Any, nrow: int, max_bond: int | None, cutoff: float, direction: str) -> tuple[Any, Any, float]:
        shape = tuple(x.shape)
        rows, cols = shape[:nrow], shape[nrow:]
        u, s, vh = tf.linalg.svd(tf.reshape(x, (math.prod(rows), math.prod(cols))))
        k, err = truncation_keep(_values(s, "MPS truncation"), max_bond, cutoff)
        if k < tuple(s.shape)[0]:
            u, s, vh = u[:, :k], s[:k], vh[:k, :]
        if direction == "right":
            vh = vh * tf.reshape(s, (k, 1))
        else:
            u = u * tf.reshape(s, (1, k))
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
            q, r = tf.linalg.qr(tf.reshape(ts[i], (dl * d, dr)))
            ts[i] = tf.reshape(q, (dl, d, tuple(q.shape)[1]))
            ts[i + 1] = tf.einsum("ab,bsc->asc", r, ts[i + 1])
        return ts


class SymmetricOps:
    """:class:`~tensor4all.SymmetricTensor` site tensors: block-sparse contractions through the
    structured dispatcher, one SVD (or QR) per charge sector of the fused matrix."""

    einsum = staticmethod(structured_einsum)

    @staticmethod
    def conj(x: SymmetricTensor) -> SymmetricTensor:
        return x.conj()

    @staticmethod
    def split(x: SymmetricTensor, nrow: int, max_bond: int | None, cutoff: float,
              direction: str) -> tuple[SymmetricTensor, SymmetricTensor, float]:
        n = len(x.legs)
        m = x.fuse_legs(list(range(nrow)), list(range(nrow, n)))
        u, s, vh = structured_linalg.svd(m)
        counts, err = sector_keep({q: _values(v, "MPS truncation") for q, v in s.values.items()}, max_bond, cutoff)
        u, s, vh = _truncated(u, s, vh, counts)
        if direction == "right":
            vh = vh.scale_leg(0, s)
        else:
            u = u.scale_leg(1, s)
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


def _truncated(u: SymmetricTensor, s: SectorDiagonal, vh: SymmetricTensor,
               counts: dict[Any, int]) -> tuple[SymmetricTensor, SectorDiagonal, SymmetricTensor]:
    """The SVD factors ``(U, S, Vh)`` restricted to the first ``counts[t]`` values of each bond
    sector ``t`` (sectors keeping none vanish; the bond keeps its order of sectors)."""
    if all(counts[t] == d for t, d in s.leg.sectors.items()):
        return u, s, vh
    keep = {t: n for t, n in counts.items() if n}
    bond = Leg(s.leg.symmetry, [(t, keep[t]) for t in s.leg.charges if t in keep], dual=s.leg.is_dual)
    ub = {(a, t): b[:, :keep[t]] for (a, t), b in u.blocks.items() if t in keep}
    vb = {(t, c): b[:keep[t], :] for (t, c), b in vh.blocks.items() if t in keep}
    sv = {t: v[:keep[t]] for t, v in s.values.items() if t in keep}
    return (SymmetricTensor(ub, [u.legs[0], bond.dual()], u.charge, dtype=u.dtype), SectorDiagonal(bond, sv),
            SymmetricTensor(vb, [bond, vh.legs[1]], vh.charge, dtype=vh.dtype))


def ops_for(ts: Sequence[Any]) -> type[DenseOps] | type[SymmetricOps]:
    """The ops of a chain of site tensors (dense or symmetric)."""
    return SymmetricOps if is_symmetric(ts) else DenseOps


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
