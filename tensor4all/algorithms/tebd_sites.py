"""The pieces of a TEBD bond update that depend on what the state is made of.

A *site format* says what a site tensor is and how a gate, a pair of sites and the factors of
their split look: :class:`DenseSites` (arrays ``(left, physical, right)``) or
:class:`SymmetricSites` (:class:`~tensor4all.SymmetricTensor` sites; the gate a symmetric tensor
of charge 0 on the two physical legs, the split one SVD per sector). An *array module* does the
dense linear algebra of the split: :class:`NumpyLA` (concrete runs: NumPy/SciPy on C-ordered
arrays) or :class:`TenferroLA` (traced runs: tenferro operations, differentiable; column-major
reshapes, consistent within the module); concrete symmetric runs use the block sites of
:mod:`.tebd_blocks`. :func:`split_pair` is the one bond update all use:
contract the pair with the gate, one truncated SVD (:func:`~tensor4all.linalg.truncation.sector_keep`:
one truncation across the sectors, ITensor's discarded-weight convention), the weights put on the
side the centre moves to.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..networks.mps import MPS
from ..networks.symmetric_sites import canonical_sites
from ..linalg.truncation import resolved_values, sector_keep, weighted_factors
from ..linalg import lapack
from ..linalg.lapack import scaled_norm
from ..tools.checks import concrete, is_traced
from ..structured import Leg, SymmetricTensor, einsum as structured_einsum
from ..structured import linalg as structured_linalg

__all__ = ["NumpyLA", "TenferroLA", "DenseSites", "SymmetricSites", "split_pair", "scaled_norm"]


# ---- dense linear algebra: NumPy (concrete) or tenferro (traced) ---------------------------
class NumpyLA:
    """Concrete runs: NumPy/SciPy on C-ordered arrays (LAPACK gesdd SVDs, as ``MPS.compress``)."""

    traced = False

    def array(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def leaf(self, x: np.ndarray) -> Any:
        return tf.asarray(np.asfortranarray(x))

    def gate4(self, g: Any, da: int, db: int) -> np.ndarray:
        return np.asarray(g).reshape(da, db, da, db)

    def reshape(self, x: Any, shape: tuple) -> Any:
        return x.reshape(shape)

    def tensordot(self, a: Any, b: Any, axes: Any) -> Any:
        return np.tensordot(a, b, axes)

    def transpose(self, x: Any, perm: tuple) -> Any:
        return x.transpose(perm)

    def qr(self, m: Any) -> tuple[Any, Any]:
        return lapack.qr(m)

    def lq(self, m: Any) -> tuple[Any, Any]:
        return lapack.lq(m)

    def svd(self, m: Any) -> tuple[Any, Any, Any]:
        return lapack.svd(m)

    def split_svd(self, m: Any, to_right: bool, cutoff: float) -> tuple[Any, Any, Any]:
        """The SVD of a split whose weights go right (``to_right``) or left
        (:func:`~tensor4all.linalg.lapack.split_svd`: from the Gram matrix where that gains)."""
        return lapack.split_svd(m, to_right, cutoff)

    def values(self, s: Any) -> np.ndarray:
        return s

    def norm(self, xs: Sequence[Any]) -> Any:
        return scaled_norm(xs)

    def scale(self, x: Any, s: Any, axis: int) -> Any:
        return s[:, None] * x if axis == 0 else x * s

    def matmul(self, a: Any, b: Any) -> Any:
        return a @ b


class TenferroLA:
    """Traced runs: the same operations on tenferro tensors and tidu tracers (differentiable);
    reshapes are tenferro's column-major ones, consistent within this module."""

    traced = True

    def array(self, x: Any) -> Any:
        return x if isinstance(x, tf.Tensor) or is_traced(x) else tf.asarray(np.asfortranarray(x))

    def leaf(self, x: Any) -> Any:
        return x

    def gate4(self, g: Any, da: int, db: int) -> Any:
        return tf.reshape(self.array(g), (da, db, da, db), order="C")

    def reshape(self, x: Any, shape: tuple) -> Any:
        return tf.reshape(x, shape)

    def tensordot(self, a: Any, b: Any, axes: Any) -> Any:
        return tf.tensordot(a, b, axes)

    def transpose(self, x: Any, perm: tuple) -> Any:
        return tf.transpose(x, perm)

    def qr(self, m: Any) -> tuple[Any, Any]:
        return tf.linalg.qr(m)

    def lq(self, m: Any) -> tuple[Any, Any]:
        return tf.linalg.lq(m)

    def svd(self, m: Any) -> tuple[Any, Any, Any]:
        return tf.linalg.svd(m)

    def split_svd(self, m: Any, to_right: bool, cutoff: float) -> tuple[Any, Any, Any]:
        return tf.linalg.svd(m)  # differentiable: the SVD's rules

    def values(self, s: Any) -> np.ndarray:
        return np.asarray(concrete(s))

    def norm(self, xs: Sequence[Any]) -> Any:
        """The norm (differentiable); values beyond 1e100 (or below 1e-100) are first scaled by
        a power of two, exact, so that the squares stay in range."""
        top = max(
            (float(np.max(np.abs(np.asarray(c)))) for c in map(concrete, xs) if c is not None and c.size), default=1.0
        )
        e = math.frexp(top)[1] if 0.0 < top < math.inf and not 1e-100 < top < 1e100 else 0
        total = None
        for x in xs:
            x = x * 2.0**-e if e else x
            v = tf.real(tf.sum(x * tf.conj(x)))
            total = v if total is None else total + v
        return tf.sqrt(total) * 2.0**e if e else tf.sqrt(total)

    def scale(self, x: Any, s: Any, axis: int) -> Any:
        n = tuple(s.shape)[0]
        return x * tf.reshape(s, (n, 1) if axis == 0 else (1, n))

    def matmul(self, a: Any, b: Any) -> Any:
        return tf.matmul(self.array(a), self.array(b))


# ---- site formats: what a site tensor is, how a pair becomes matrices and back -------------------
class DenseSites:
    """Site tensors ``(left, physical, right)`` as arrays of the array module."""

    def __init__(self, la: NumpyLA | TenferroLA, dtype: np.dtype):
        self.la, self.dtype = la, dtype

    def site(self, t: Any) -> Any:
        if self.la.traced:
            t = self.la.array(t)
            return t if str(tidu.aval_of(t).dtype) == self.dtype.name else tf.convert(t, self.dtype.name)
        return np.ascontiguousarray(np.asarray(t), dtype=self.dtype)

    def gate(self, g: Any, i: int, j: int, da: int, db: int) -> Any:
        return self.la.gate4(g, da, db)

    def pair(self, a: Any, b: Any, g4: Any) -> tuple[dict, Any]:
        la = self.la
        l, da, _ = a.shape
        _, db, r = b.shape
        theta = la.tensordot(a, b, ([2], [0]))  # (l, s, t, r)
        theta = la.transpose(la.tensordot(g4, theta, ([2, 3], [1, 2])), (2, 0, 1, 3))  # (l, u, v, r)
        return {None: la.reshape(theta, (l * da, db * r))}, (l, da, db, r)

    def unpair(self, kept: dict, ctx: Any) -> tuple[Any, Any]:
        ((u, vh),) = kept.values()
        l, da, db, r = ctx
        k = tuple(u.shape)[1]
        return self.la.reshape(u, (l, da, k)), self.la.reshape(vh, (k, db, r))

    def move(self, a: Any, b: Any, to_right: bool) -> tuple[Any, Any]:
        la = self.la
        if to_right:
            l, d, r = a.shape
            q, rr = la.qr(la.reshape(a, (l * d, r)))
            return la.reshape(q, (l, d, tuple(q.shape)[1])), la.tensordot(rr, b, ([1], [0]))
        l, d, r = b.shape
        lo, q = la.lq(la.reshape(b, (l, d * r)))
        return la.tensordot(a, lo, ([2], [0])), la.reshape(q, (tuple(q.shape)[0], d, r))

    def norm(self, t: Any) -> Any:
        return self.la.norm([t])

    def scale(self, t: Any, x: Any) -> Any:
        return t / x

    def times(self, t: Any, x: Any) -> Any:
        return t * x

    def state(self, ts: list, grading: Any) -> MPS:
        return MPS([t if self.la.traced else np.asfortranarray(t) for t in ts])


class SymmetricSites(DenseSites):
    """:class:`SymmetricTensor` sites; the array module handles the blocks of the split."""

    def __init__(self, la: NumpyLA | TenferroLA, dtype: np.dtype, legs: list[Leg]):
        super().__init__(la, dtype)
        self.legs = legs  # the physical legs

    def site(self, t: SymmetricTensor) -> SymmetricTensor:
        if str(t.dtype) == self.dtype.name:
            return t
        return SymmetricTensor(
            {k: tf.convert(b, self.dtype.name) for k, b in t.blocks.items()}, t.legs, t.charge, dtype=self.dtype.name
        )

    def gate(self, g: Any, i: int, j: int, da: int, db: int) -> SymmetricTensor:
        g4 = self.la.gate4(g, da, db)
        pi, pj = self.legs[i], self.legs[j]
        sym = pi.symmetry
        blocks = {}
        for (qa, sa), (qb, sb) in ((x, y) for x in _slices(pi) for y in _slices(pj)):
            for (qc, sc), (qd, sd) in ((x, y) for x in _slices(pi) for y in _slices(pj)):
                if sym.add(qa, qb) == sym.add(qc, qd):
                    blocks[(qa, qb, qc, qd)] = self.la.leaf(g4[sa, sb, sc, sd])
        return SymmetricTensor(blocks, [pi, pj, pi.dual(), pj.dual()])

    def pair(self, a: Any, b: Any, g4: Any) -> tuple[dict, Any]:
        theta = structured_einsum("uvst,astc->auvc", g4, structured_einsum("asb,btc->astc", a, b))
        m = theta.fuse_legs([0, 1], [2, 3])
        return {k: self.la.array(blk) for k, blk in m.blocks.items()}, m

    def unpair(self, kept: dict, m: Any) -> tuple[Any, Any]:
        g = m.symmetry
        bond = Leg(g, {k[0]: tuple(u.shape)[1] for k, (u, _) in kept.items()})
        dt = self.dtype.name
        u = SymmetricTensor(
            {(k[0], k[0]): self.la.leaf(u) for k, (u, _) in kept.items()}, [m.legs[0], bond.dual()], dtype=dt
        )
        vh = SymmetricTensor({(k[0], k[1]): self.la.leaf(v) for k, (_, v) in kept.items()}, [bond, m.legs[1]], dtype=dt)
        return u.split_legs(0), vh.split_legs(1)

    def move(self, a: Any, b: Any, to_right: bool) -> tuple[Any, Any]:
        return tuple(canonical_sites([a, b], 1 if to_right else 0))

    def norm(self, t: Any) -> Any:
        n = structured_linalg.norm(t)
        return n if self.la.traced else float(n)

    def state(self, ts: list, grading: Any) -> MPS:
        return MPS._symmetric(ts, grading)


def _slices(leg: Leg) -> list[tuple[Any, slice]]:
    """Each sector of a physical leg and its range of basis states (the leg's sector order is
    the basis order, as :func:`~tensor4all.networks.symmetric_sites.operator_tensor`)."""
    out, start = [], 0
    for q, d in leg.sectors.items():
        out.append((q, slice(start, start + d)))
        start += d
    return out


def split_pair(
    fmt: DenseSites, a: Any, b: Any, g4: Any, to_right: bool, max_bond: int, cutoff: float, normalize: bool
) -> tuple[Any, Any, Any, float]:
    """Sites ``a, b`` (the centre on one of them) with the gate ``g4`` applied, split by one
    truncated SVD: ``(a', b', norm, discarded weight)``, the singular values in ``b'``
    (``to_right``) or ``a'``, ``norm`` that of the kept singular values (the state's norm), and
    the kept singular values divided by it when ``normalize`` (and it is not 0). A traced split
    takes its factors from :func:`~tensor4all.linalg.truncation.weighted_factors` (fixed phases,
    degenerate blocks projected)."""
    la = fmt.la
    blocks, ctx = fmt.pair(a, b, g4)
    svds = {k: la.split_svd(m, to_right, cutoff) for k, m in blocks.items()}
    values = raw = {k: la.values(s) for k, (_, s, _) in svds.items()}
    if la.traced:  # differentiated: no values below the SVD's resolution (their derivatives are not defined)
        shapes = [tuple(m.shape) for m in blocks.values()]
        values = resolved_values(values, sum(r for r, _ in shapes), sum(c for _, c in shapes))
    counts, err = sector_keep(values, max_bond, cutoff)
    kept = {k: (svds[k][0][:, :n], svds[k][1][:n], svds[k][2][:n]) for k, n in counts.items() if n}
    norm = la.norm([s for _, s, _ in kept.values()])
    if la.traced:  # at degenerate kept values the weighted factor is the pair's projection (exact derivatives)
        side = "right" if to_right else "left"
        kept = {k: weighted_factors(blocks[k], u, s, vh, side, raw[k][: counts[k]]) for k, (u, s, vh) in kept.items()}
        if normalize and float(concrete(norm)) > 0.0:
            kept = {k: (u, vh / norm) if to_right else (u / norm, vh) for k, (u, vh) in kept.items()}
    else:
        if normalize and norm > 0.0:
            kept = {k: (u, s / norm, vh) for k, (u, s, vh) in kept.items()}
        kept = {k: (u, la.scale(vh, s, 0)) if to_right else (la.scale(u, s, 1), vh) for k, (u, s, vh) in kept.items()}
    a, b = fmt.unpair(kept, ctx)
    return a, b, norm, err
