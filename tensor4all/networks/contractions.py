"""Contractions of chains of site tensors (dense or symmetric, tenferro operations, so they are
differentiable): ``<psi|psi>``, ``<a|b>`` and ``<psi| prod_i O_i |psi>`` left to right, and the
exact power-of-two scaling that keeps long chains in the float range."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import tenferro as tf

from .chain import leaves_of
from .environments import transfer_left
from .site_ops import unit_scaled
from ..structured import SymmetricTensor
from ..tools.checks import concrete, ldexp
from ..tools.errors import ValueRangeError, ZeroNormError

__all__ = [
    "check_nonzero_norm",
    "pow2",
    "scaled_sites",
    "largest_entry",
    "scalar_of",
    "sandwich",
    "overlap_tensors",
    "scaled_overlap",
]


def check_nonzero_norm(norm2: Any, what: str) -> None:
    """:class:`ZeroNormError` if the concrete value of ``<psi|psi>`` is 0 (nothing to check
    for abstract values under ``tenferro.jit``)."""
    c = concrete(norm2)
    if c is not None and float(tf.real(c)) == 0.0:
        raise ZeroNormError(f"{what}: the state has norm 0, so <psi|...|psi> / <psi|psi> is undefined")


def pow2(e: int) -> float:
    """``2.0**e`` as a float (inf beyond the range, 0 below it)."""
    return float(ldexp(1.0, max(min(e, 2000), -2000)))


def scaled_sites(tensors: Sequence[Any]) -> tuple[list[Any], int]:
    """Each concrete site tensor divided by a power of two ``2**e_i`` that brings its
    largest entry into ``[0.5, 1)`` (exact; a constant for tidu, so derivatives are
    unchanged), and ``sum e_i``. Abstract values (``tenferro.jit``) are left as they are."""
    out, total = [], 0
    for t in tensors:
        m = largest_entry(t)
        e = math.frexp(m)[1] if m > 0.0 and math.isfinite(m) else 0
        if e == 0 or abs(e) > 1000:
            out.append(t)
            continue
        out.append(t * pow2(-e))
        total += e
    return out, total


def largest_entry(t: Any) -> float:
    """The largest absolute entry of a concrete site tensor (dense or symmetric), 0 when abstract."""
    m = 0.0
    for b in leaves_of([t]):
        c = concrete(b)
        if c is None:
            return 0.0
        if tuple(c.shape) and math.prod(c.shape):
            a = c._data if type(c) is tf.Tensor else None
            if type(a) is np.ndarray:  # a host block: NumPy's reduction, without two tenferro calls
                m = max(m, float(np.max(np.abs(a))))
            else:
                m = max(m, float(tf.amax(tf.abs(c))))
    return m


def scalar_of(env: Any) -> Any:
    """The 1 x 1 environment at the end of a chain as a scalar tensor."""
    return tf.reshape(env.to_dense() if isinstance(env, SymmetricTensor) else env, ())


def sandwich(ts: Sequence[Any], ops: dict[int, np.ndarray]) -> Any:
    """``<psi| prod_i ops[i] |psi>`` (unnormalized) over site tensors ``ts``, left to right."""
    env = None
    for i, a in enumerate(ts):
        o = ops.get(i)
        env = transfer_left(env, a, a, None if o is None else o if isinstance(o, SymmetricTensor) else tf.asarray(o))
    return scalar_of(env)


def overlap_tensors(xs: Sequence[Any], ys: Sequence[Any]) -> Any:
    env = None
    for x, y in zip(xs, ys):
        env = transfer_left(env, x, y)
    return scalar_of(env)


def scaled_overlap(xs: Sequence[Any], ys: Sequence[Any], what: str) -> Any:
    """``<x|y>`` contracted on the chains scaled by powers of two (exact,
    :func:`~tensor4all.networks.site_ops.unit_scaled`; a no-op, so the same bits, for chains whose
    scale does not drift), the scale put back on the scalar (differentiable: a constant factor).
    A value beyond the float range raises :class:`ValueRangeError`."""
    xs, ex = unit_scaled(xs)
    ys, ey = unit_scaled(ys)
    v = overlap_tensors(xs, ys)
    e = ex + ey
    c = concrete(v)
    m = None if c is None else abs(complex(np.asarray(c)))
    if m is not None and not (math.isfinite(m) and (m == 0.0 or math.frexp(m)[1] + e <= 1024)):
        raise ValueRangeError(
            f"{what}: the value, {complex(np.asarray(c))!r} times 2**{e}, lies beyond the float range"
        )
    return v if e == 0 else v * pow2(e // 2) * pow2(e - e // 2)
