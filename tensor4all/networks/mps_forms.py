"""The canonical forms, norms, compression and dense conversion of an :class:`~tensor4all.MPS`,
which its methods delegate to (``psi`` is the MPS): ``to_dense`` (the ``np.kron``-order vector,
differentiable), ``canonicalize`` (QR sweeps from both ends, blockwise on a symmetric state),
``norm`` and ``normalize`` (on sites scaled by exact powers of two), and ``compress`` (the one
compression sweep of :mod:`.site_ops` on NumPy arrays for a dense state). Each validates before
it changes the MPS, so a failing call leaves it as it was."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tenferro as tf

from ..tools.checks import (
    any_traced,
    check_alloc,
    check_cutoff,
    check_finite_arrays,
    check_positive_int,
    concrete,
    ldexp,
    to_numpy,
)
from ..tools.errors import ValueRangeError, ZeroNormError
from ..tools.threads import bond_of
from .chain import leaves_of
from .contractions import largest_entry, overlap_tensors, pow2, scaled_sites
from .site_ops import canonical_dense, compress_sweep, in_range, ldexp_site, rescaled, unit_scaled
from .symmetric_sites import canonical_sites, host_blocks, norm2_blocks

__all__ = ["to_dense", "dense_size", "canonicalize", "norm", "normalize", "compress"]


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t.shape)


def dense_size(psi: Any, *_: Any, **__: Any) -> int:
    """The size of :meth:`MPS.to_dense`'s thread policy: the output's, as the side of a square
    matrix of as many entries (``sqrt(prod(d))``; the last contraction is a ``prod(d) / d x chi``
    by ``chi x d`` product), or the bond dimension where that is larger."""
    return max(bond_of(psi), math.isqrt(math.prod(psi.phys_dims)))


def to_dense(psi: Any) -> Any:
    """``MPS.to_dense`` (see there)."""
    check_alloc(
        math.prod(psi.phys_dims) * max(psi.bond_dims, default=1) * psi.dtype.itemsize, f"MPS.to_dense of {psi.L} sites"
    )
    ts = psi.dense()._tensors
    t0 = ts[0]
    v = tf.reshape(t0, (_shape(t0)[1], _shape(t0)[2]))
    for a in ts[1:]:
        n, (_, d, r) = _shape(v)[0], _shape(a)
        v = tf.reshape(tf.einsum("nc,csd->nsd", v, a), (n * d, r), order="C")
    return tf.reshape(v, (_shape(v)[0],))


def canonicalize(psi: Any, center: int) -> Any:
    """``MPS.canonicalize`` (see there)."""
    center = psi._check_site(center, "canonicalize: center")
    check_finite_arrays(leaves_of(psi._tensors), "MPS.canonicalize")
    ts, e = unit_scaled(psi._tensors)  # exact powers of two: a drifting chain stays in the float range
    ts = canonical_sites(ts, center) if psi.symmetric else canonical_dense(ts, center)  # (sectors kept)
    if e:  # the norm, moved into the centre's exponent
        if not in_range(ts[center], e):
            raise ValueRangeError(
                f"MPS.canonicalize: the norm of the state, about 2**{e}, lies beyond the float range, so the "
                "centre site cannot hold it; normalize() the state first"
            )
        ts[center] = ldexp_site(ts[center], e)
    psi._tensors = ts
    psi._center = center
    return psi


def _swept(psi: Any) -> tuple[Any, int] | None:
    """Where the centre is unknown and the sites are concrete (no tracer, no abstract value): the
    last site after a QR sweep from the left, each site on the way brought to entries below 1 by a
    power of two, and the sum of those exponents; the norm is that site's. ``sqrt(<psi|psi>)``
    cancels: for ``psi - (1 + 1e-9) psi`` it gave 1.1e-8 for 1e-9, for ``psi - psi`` NaN (the sweep
    is exact to the rounding of the norm itself). None elsewhere (the centre's site holds the
    norm; traced sites keep the differentiable overlap)."""
    ts = list(psi._tensors)
    leaves = leaves_of(ts)
    if psi._center is not None or len(ts) < 2 or any_traced(leaves) or any(concrete(b) is None for b in leaves):
        return None
    ts, total = scaled_sites(ts)  # each site's largest entry in [0.5, 1) first: 1e-200 squared underflows
    for i in range(len(ts) - 1):
        pair = canonical_sites(ts[i : i + 2], 1) if psi.symmetric else canonical_dense(ts[i : i + 2], 1)
        m = largest_entry(pair[1])
        e = math.frexp(m)[1] if 0.0 < m < math.inf else 0
        ts[i + 1] = ldexp_site(pair[1], -e)
        total += e
    return ts[-1], total


def _site_norm(t: Any, symmetric: bool) -> tuple[float, int]:
    """``(n, e)``: the Frobenius norm ``n * 2**e`` of one concrete site."""
    if symmetric:
        n2, e2 = norm2_blocks([t])
        return math.sqrt(n2) * 2.0 ** (e2 % 2 / 2), e2 // 2
    return float(np.linalg.norm(np.asarray(concrete(t)))), 0


def norm(psi: Any) -> Any:
    """``MPS.norm`` (see there)."""
    swept = _swept(psi)
    if swept is not None:
        n, e = _site_norm(swept[0], psi.symmetric)
        real = np.empty(0, np.dtype(psi._tensors[0].dtype.name)).real.dtype
        e += swept[1]
        return tf.asarray(real.type(n) * real.type(2.0) ** (e // 2) * real.type(2.0) ** (e - e // 2))
    if psi.symmetric and host_blocks(psi._tensors):  # concrete host blocks: NumPy, no dispatch
        c = psi._center  # known: the norm is the centre's alone
        n2, e = norm2_blocks(psi._tensors if c is None else psi._tensors[c : c + 1])
        real = np.empty(0, np.dtype(psi._tensors[0].dtype.name)).real.dtype
        return tf.asarray(np.sqrt(real.type(n2)) * real.type(2.0) ** (e // 2) * real.type(2.0) ** (e - e // 2))
    ts, e = scaled_sites(psi._tensors)
    n = tf.sqrt(tf.real(overlap_tensors(ts, ts)))
    if e == 0:
        return n
    c = concrete(n)
    if c is not None and float(c) == 0.0:
        return n
    return n * pow2(e // 2) * pow2(e - e // 2)


def normalize(psi: Any) -> Any:
    """``MPS.normalize`` (see there)."""
    check_finite_arrays(leaves_of(psi._tensors), "MPS.normalize")
    scaled, e = scaled_sites(psi._tensors)
    swept = _swept(psi)
    if swept is not None:  # the norm to its own rounding (see _swept), n * 2**e as below
        n_host, e_site = _site_norm(swept[0], psi.symmetric)
        e_norm = swept[1] + e_site
        n = tf.asarray(ldexp(n_host, e_norm - e))
    else:
        n = tf.sqrt(tf.real(overlap_tensors(scaled, scaled)))  # the norm is n * 2**e
    c = concrete(n)
    ts = list(psi._tensors)
    if c is not None and float(c) == 0.0:
        raise ZeroNormError("MPS.normalize: the state has norm 0 and cannot be normalized")
    if e == 0:
        ts[0] = ts[0] / n
    elif c is not None and not 0.0 < float(ldexp(float(c), e)) < math.inf:
        ts = scaled  # the norm itself over- or underflows
        ts[0] = ts[0] / n
    else:
        ts[0] = ts[0] / (n * pow2(e))
    psi._tensors = ts
    return psi


def compress(psi: Any, max_bond: int | None, cutoff: float) -> float:
    """``MPS.compress`` (see there)."""
    if max_bond is not None:
        max_bond = check_positive_int(max_bond, "max_bond")
    cutoff = check_cutoff(cutoff, "compress: cutoff")
    arrays = [to_numpy(b, "MPS.compress") for b in leaves_of(psi._tensors)]  # NotDifferentiableError on tracers
    check_finite_arrays(arrays, "MPS.compress")
    ts, e = unit_scaled(psi._tensors if psi.symmetric else arrays)  # dense: NumPy arrays (ArrayOps)
    ts, total = compress_sweep(ts, max_bond, cutoff)
    ts = rescaled(ts, e)
    psi._tensors = ts if psi.symmetric else [tf.asarray(np.asfortranarray(t)) for t in ts]
    return total
