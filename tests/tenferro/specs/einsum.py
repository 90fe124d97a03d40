"""Gradient-table specs for ``einsum`` (the ``einsum`` primitive and, through
mixed dtypes and broadcast cotangents, convert_element_type/broadcast_in_dim)."""

from __future__ import annotations

import tenferro as tf

from . import OpSpec


def _eq(eq: str):
    def fn(*xs):
        return tf.einsum(eq, *xs)

    fn.__name__ = f"einsum[{eq}]"
    return fn


SPECS = [
    OpSpec("einsum-matmul", _eq("ij,jk->ik"), [((2, 3), (3, 2)), ((2, 0), (0, 3)), ((1, 1), (1, 1))], ("einsum",)),
    OpSpec("einsum-trace", _eq("ii->"), [((3, 3),), ((0, 0),)], ("einsum",)),
    OpSpec("einsum-diag", _eq("ii->i"), [((3, 3),)], ("einsum",)),
    OpSpec("einsum-embed", _eq("i->ii"), [((3,),), ((1,),)], ("einsum",)),
    OpSpec("einsum-hyperedge", _eq("ik,k,kj->ij"), [((2, 3), (3,), (3, 2))], ("einsum",)),
    OpSpec("einsum-ellipsis", _eq("...ij,...jk->...ik"), [((2, 2, 3), (3, 2)), ((1, 2, 3), (2, 3, 2))], ("einsum",)),
    OpSpec("einsum-scalar", _eq(",i->i"), [((), (3,))], ("einsum",)),
    OpSpec("einsum-repeat-sum", _eq("iij,k->jk"), [((2, 2, 3), (2,))], ("einsum",)),
]
