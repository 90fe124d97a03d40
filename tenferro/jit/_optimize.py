"""The pass pipeline of compiled mode: :func:`optimize` runs :data:`PASSES`, in
order, to a fixed point (:func:`tidu.run_passes`).

Each pass is a pure ``Graph -> Graph`` function that returns its input when it
changes nothing. The generic ones come from tidu (constant folding, common
subexpressions, dead code); the tensor ones from this package. The graph given
is already differentiated (``make_graph`` of ``value_and_grad(f)`` and the like):
passes keep values, not derivative rules, so the result is for evaluation only.
"""

from __future__ import annotations

from typing import Callable

from tidu import Graph, paused_gc
from tidu.passes import cse, dce, fold_constants, run_passes

from ._contractions import merge_contractions
from ._identities import simplify_identities
from ._layouts import choose_layouts
from ._sum_products import fuse_sums_of_products
from ._transpose_fold import fold_transposes

__all__ = ["optimize", "PASSES", "MAX_ROUNDS"]

MAX_ROUNDS = 16
"""Rounds of :data:`PASSES` at most (a fixed point is usually reached in 2 to 4)."""

PASSES: tuple[tuple[str, Callable[[Graph], Graph]], ...] = (
    ("fold_constants", fold_constants),  # equations of constants evaluated once, at compile time
    ("simplify_identities", simplify_identities),  # x*1, x+0, neg∘neg, transpose∘transpose, sum∘broadcast, ...
    ("fold_transposes", fold_transposes),  # transposes absorbed into dot_general/einsum operands and results
    ("cse", cse),  # one equation per distinct (primitive, inputs, params)
    ("dce", dce),  # equations nothing reads (before merging: exact reader counts)
    ("merge_contractions", merge_contractions),  # single-reader contraction chains -> one planned n-ary einsum
    ("fuse_sums_of_products", fuse_sums_of_products),  # sum of K like dot_generals -> one over stacked operands
    ("choose_layouts", choose_layouts),  # axis order of einsum intermediates: fewest copied elements
)
"""The passes of :func:`optimize`, by name, in the order they run in each round."""


def optimize(
    graph: Graph,
    passes: tuple[tuple[str, Callable[[Graph], Graph]], ...] = PASSES,
    max_rounds: int = MAX_ROUNDS,
    log: list | None = None,
) -> Graph:
    """``graph`` after ``passes`` run to a fixed point, then dead-code elimination.

    ``log`` (a list) receives ``(round, pass name, equations before, after)`` for
    each pass that changed the graph. The input graph is not modified.
    """
    with paused_gc():
        return dce(run_passes(graph, [fn for _, fn in passes], max_rounds=max_rounds, log=log))
