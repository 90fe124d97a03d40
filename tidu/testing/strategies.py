"""Hypothesis strategies for any value type registered with tidu.

Only this module imports :mod:`hypothesis`; ``import tidu.testing`` does not.
The strategies know nothing about a particular value type: they draw a seed and
ask the type's :class:`~tidu.VSpace` for a sample, so the same strategies serve
the toy NumPy type of tidu's tests and the tensor types built on tidu.

* :func:`vspace_values` draws one value of a given aval.
* :func:`pytrees` wraps a leaf strategy in nested tuples, lists, dicts and ``None``.
* :func:`values_like` draws a pytree of values matching a pytree of avals
  (draw it twice for a primal and a tangent of the same structure).
* :func:`in_axes` draws ``vmap`` axes for arguments of given per-example ranks: an axis
  (negative ones too) or ``None`` per argument, at least one mapped.

>>> from hypothesis import given
>>> @given(pytrees(vspace_values(aval)))
... def test_roundtrip(tree): ...
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from .._pytree import tree_flatten, tree_unflatten
from .._vspace import vspace_of_aval

__all__ = ["vspace_values", "pytrees", "values_like", "seeds", "in_axes"]


def seeds() -> st.SearchStrategy[int]:
    """Seeds for :func:`numpy.random.default_rng`."""
    return st.integers(min_value=0, max_value=2**32 - 1)


def vspace_values(aval: Any) -> st.SearchStrategy[Any]:
    """Values of ``aval``: ``vspace_of_aval(aval).randn(aval, default_rng(seed))`` for a
    drawn seed (standard normal samples; shrinking shrinks the seed)."""
    vs = vspace_of_aval(aval)

    def sample(seed: int) -> Any:
        return vs.randn(aval, np.random.default_rng(seed))

    return seeds().map(sample)


def _keys() -> st.SearchStrategy[str]:
    return st.text(alphabet="abcdefgh", min_size=1, max_size=3)


def pytrees(
    leaves: st.SearchStrategy[Any], max_depth: int = 3, max_children: int = 3, allow_none: bool = True
) -> st.SearchStrategy[Any]:
    """Pytrees of nesting depth at most ``max_depth`` built from ``leaves``.

    Containers are tuples, lists and dicts with string keys (at most
    ``max_children`` children each) and, when ``allow_none``, ``None`` (an empty
    subtree, as in JAX). A bare leaf is a pytree of depth 0.
    """
    base = st.one_of(leaves, st.none()) if allow_none else leaves

    def build(depth: int) -> st.SearchStrategy[Any]:
        if depth == 0:
            return base
        child = build(depth - 1)
        return st.one_of(
            base,
            st.lists(child, max_size=max_children).map(tuple),
            st.lists(child, max_size=max_children),
            st.dictionaries(_keys(), child, max_size=max_children),
        )

    return build(max_depth)


def values_like(aval_tree: Any) -> st.SearchStrategy[Any]:
    """A pytree of values with the structure of ``aval_tree`` (a pytree whose leaves
    are avals), each leaf drawn with :func:`vspace_values`."""
    avals, treedef = tree_flatten(aval_tree)

    def rebuild(vals: tuple) -> Any:
        return tree_unflatten(treedef, list(vals))

    return st.tuples(*[vspace_values(a) for a in avals]).map(rebuild)


def in_axes(ranks: tuple[int, ...], allow_none: bool = True) -> st.SearchStrategy[tuple]:
    """``vmap`` ``in_axes`` for arguments whose examples have ``ranks`` axes: per argument an axis
    of the batched value, in ``[-(rank + 1), rank]`` (negative axes count from the end), or
    ``None`` (unmapped; at most all but one argument)."""

    def one(rank: int) -> st.SearchStrategy:
        axes = st.integers(min_value=-(rank + 1), max_value=rank)
        return st.one_of(st.none(), axes) if allow_none else axes

    return st.tuples(*(one(r) for r in ranks)).filter(lambda axes: any(a is not None for a in axes))
