"""Rules shared by the Fréchet-derivative primitives ``L_f(A, E)`` (``expm_frechet``,
``logm_frechet``; Higham, *Functions of Matrices*, 2008, §3.2).

``L_f(A, E)`` is linear in ``E``: its derivative in ``E`` is the primitive itself and
its transpose in ``E`` is the primitive at ``A^T``. Its derivative in ``A`` is the
(1, 2) block of ``L_f`` of the block matrix ``[[A, E], [0, A]]`` in the direction
``[[dA, 0], [0, dA]]`` (Higham, Thm. 3.8 applied twice), with ``E`` first divided by
a per-matrix constant ``c`` and the result multiplied back: the block matrix then
has ``A``'s scale, which scaling-and-squaring (expm) and inverse scaling-and-squaring
(logm) need for accuracy.
"""

from __future__ import annotations

from typing import Any, Callable

from tidu import Primitive, is_undefined

from .._aval import meta
from .._errors import TenferroValueError
from .. import _ops as tf
from ._matops import columns, mT, place_columns, rows

__all__ = ["upper_block", "def_frechet_rules"]

Scale = Callable[[Any, Any], Any]
"""``scale(e, a)``: the constant ``c`` dividing ``E`` (broadcastable to ``E``), or None."""


def upper_block(a: Any, e: Any) -> Any:
    """``[[a, e], [0, a]]`` (2n x 2n), or ``[[a, 0], [0, a]]`` when ``e`` is None."""
    n = meta(a)[0][0]
    top = place_columns(a, 2 * n, 0) if e is None else tf.concatenate([a, e], axis=1)
    return tf.concatenate([top, place_columns(a, 2 * n, n)], axis=0)


def def_frechet_rules(p: Primitive, scale: Scale) -> None:
    """Register ``p``'s JVP (in ``a`` by the scaled block identity, in ``e`` by ``p``
    itself) and its transpose (in ``e`` only)."""

    def jvp_a(da, out, a, e):
        n = meta(a)[0][0]
        if n == 0:
            return da
        c = scale(e, a)
        big = p.bind(upper_block(a, e if c is None else tf.divide(e, c)), upper_block(da, None))
        r = columns(rows(big, 0, n), n, 2 * n)
        return r if c is None else tf.multiply(r, c)

    def jvp_e(de, out, a, e):
        return p.bind(a, de)

    def transpose(ct, a, e):
        if is_undefined(a):
            raise TenferroValueError(
                f"{p.name}: the transpose exists only in the direction e (the function is linear in e, not in a)"
            )
        return [None, p.bind(mT(a), ct)]

    p.def_jvp_per_arg(jvp_a, jvp_e)
    p.def_transpose(transpose)
