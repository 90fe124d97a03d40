"""Quantics layouts of several variables on trees and chains.

A function of ``n_vars`` variables on a grid of ``2**R`` points each is a tensor of
``n_vars * R`` bits (S. V. Dolgov, B. N. Khoromskij and I. V. Oseledets, SIAM J. Sci. Comput.
34, A3016 (2012); M. K. Ritter et al., PRL 132, 056501 (2024)). Where the bits sit decides the
ranks:

* ``"tree"``: each variable's bits on a branch of their own, coarse to fine, the coarsest bits
  of the variables joined in a chain (``x_1 - y_1 - z_1``): a bond inside a branch separates
  one variable's fine scales from everything else;
* ``"interleaved"``: one chain, bits of equal scale together (``x_1 y_1 z_1 x_2 ...``);
* ``"grouped"``: one chain, variable after variable (``x_1 .. x_R y_1 .. y_R ...``);
* ``"fused"``: one chain of ``R`` nodes, each the ``n_vars`` bits of one scale as one index
  of dimension ``2**n_vars``.

:func:`quantics_tree` gives the layout (a :class:`QuanticsLayout`), and
:func:`tree_quantics_interpolate` learns a function of the grid indices on it by
:func:`~.tci.tree_crossinterpolate` (chains are path trees: the same code).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..quantics.grid import MAX_BITS
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.threads import thread_policy
from .errors import TreeError
from .tci import TreeTCIResult, rank_cap, tree_crossinterpolate
from .topology import Tree

__all__ = ["LAYOUTS", "QuanticsLayout", "quantics_tree", "tree_quantics_interpolate"]

LAYOUTS = ("tree", "interleaved", "grouped", "fused")


@dataclass(frozen=True)
class QuanticsLayout:
    """Where the bits sit: node ``u`` carries the bits ``digits[u]`` (pairs ``(variable,
    bit)``, bit 0 the coarsest), its index the bits read most significant first."""

    tree: Tree
    n_vars: int
    R: int
    layout: str
    digits: tuple[tuple[tuple[int, int], ...], ...]

    @property
    def local_dims(self) -> list[int]:
        return [2 ** len(d) for d in self.digits]

    def grid_indices(self, node_indices: np.ndarray) -> np.ndarray:
        """The ``(m, n_vars)`` grid indices of the ``(m, n_nodes)`` node indices."""
        idx = np.asarray(node_indices)
        if idx.dtype.kind not in "iu" or idx.ndim not in (1, 2) or idx.shape[-1] != self.tree.n_nodes:
            raise TreeError(
                f"QuanticsLayout.grid_indices: expected integer node indices of shape (m, {self.tree.n_nodes}), "
                f"got {idx.dtype} {idx.shape}"
            )
        idx = idx.reshape(-1, self.tree.n_nodes).astype(np.int64)
        if np.any(idx < 0) or np.any(idx >= np.array(self.local_dims)):
            raise TreeError(f"QuanticsLayout.grid_indices: node indices outside 0..local_dims - 1 ({self.local_dims})")
        out = np.zeros((len(idx), self.n_vars), dtype=np.int64)
        for u, digits in enumerate(self.digits):
            k = len(digits)
            for j, (v, b) in enumerate(digits):
                bit = (idx[:, u] >> (k - 1 - j)) & 1
                out[:, v] |= bit << (self.R - 1 - b)
        return out


def quantics_tree(n_vars: int, R: int, layout: str = "tree") -> QuanticsLayout:
    """The nodes and edges of the quantics ``layout`` (one of :data:`LAYOUTS`) for ``n_vars``
    variables of ``R`` bits each."""
    if not isinstance(n_vars, numbers.Integral) or n_vars < 1:
        raise InvalidOptionError(f"quantics_tree: n_vars must be a positive integer, got {n_vars!r}")
    if not isinstance(R, numbers.Integral) or not 1 <= R <= MAX_BITS:
        raise InvalidOptionError(f"quantics_tree: R must be an integer in 1..{MAX_BITS}, got {R!r}")
    if layout not in LAYOUTS:
        raise InvalidOptionError(
            f"quantics_tree: layout must be one of {', '.join(map(repr, LAYOUTS))}, got {layout!r}"
        )
    n, R = int(n_vars), int(R)
    if layout == "fused":
        digits = tuple(tuple((v, b) for v in range(n)) for b in range(R))
        return QuanticsLayout(Tree.path(R), n, R, layout, digits)
    if layout == "interleaved":
        digits = tuple(((v, b),) for b in range(R) for v in range(n))
        return QuanticsLayout(Tree.path(n * R), n, R, layout, digits)
    digits = tuple(((v, b),) for v in range(n) for b in range(R))
    if layout == "grouped":
        return QuanticsLayout(Tree.path(n * R), n, R, layout, digits)
    edges = [(v * R + b, v * R + b + 1) for v in range(n) for b in range(R - 1)]
    edges += [(v * R, (v + 1) * R) for v in range(n - 1)]
    return QuanticsLayout(Tree(edges, n * R), n, R, layout, digits)


@thread_policy(rank_cap)
def tree_quantics_interpolate(
    f: Callable[[np.ndarray], Any],
    layout: QuanticsLayout,
    *,
    tolerance: float = 1e-10,
    max_bond: int | None = None,
    max_iter: int = 20,
    seed: int | None = 0,
) -> TreeTCIResult:
    """``f`` of the grid indices (an ``(m, n_vars)`` int64 array in, ``m`` numbers out) learned
    on the quantics ``layout`` by tree TCI."""
    if not isinstance(layout, QuanticsLayout):
        raise Tensor4allTypeError(
            f"tree_quantics_interpolate: layout must be a QuanticsLayout (from quantics_tree), got {type(layout).__name__}"
        )
    if not callable(f):
        raise Tensor4allTypeError(f"tree_quantics_interpolate: f must be callable, got {type(f).__name__}")

    def on_nodes(idx: np.ndarray) -> Any:
        return f(layout.grid_indices(idx))

    return tree_crossinterpolate(
        on_nodes,
        layout.tree,
        layout.local_dims,
        tolerance=tolerance,
        max_bond=max_bond,
        max_iter=max_iter,
        batched=True,
        seed=seed,
    )
