"""Tree tensor networks: states, operators, sweeps and cross interpolation on any tree.

* :class:`Tree` -- the topology (nodes ``0 .. n-1``; from an edge list, a parent array or a
  Pruefer sequence), checked once: a cycle, a disconnected graph are typed errors;
* :class:`TreeTN` -- dense node tensors (bonds in neighbour order, then site legs):
  ``to_dense``, ``evaluate``, ``canonicalize`` toward any node, ``truncate`` (SVD from the
  leaves toward a root with ``max_bond``, ``cutoff``), :func:`inner`, :func:`add`;
* :class:`TreeOperator` (TTNO) -- :func:`tree_operator` from a sum of local terms,
  :func:`tree_heisenberg`; ``apply`` to a state exactly, :func:`apply_fit` variationally;
* :func:`tree_linsolve` -- ``A x = b`` by two-site sweeps;
* :func:`tree_dmrg` -- ground states by the one sweep loop of :mod:`tensor4all.algorithms`
  walking the tree's Euler tour (a chain's schedule is the path's tour);
* :func:`tree_crossinterpolate` -- TCI2's pivots on the tree's bipartitions;
* :func:`quantics_tree` and :func:`tree_quantics_interpolate` -- quantics layouts of
  several variables as trees (each variable's bits on a branch) or chains.

>>> import numpy as np
>>> from tensor4all import trees
>>> psi = trees.TreeTN.random([(0, 1), (1, 2), (1, 3)], 2, 3, seed=1)
>>> phi = psi.truncate(max_bond=2)
>>> bool(abs(np.linalg.norm(psi.to_dense() - phi.to_dense()) ** 2 / psi.norm() ** 2 - phi.truncation_error) < 1e-12)
True
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from .fit import apply_fit
from .linsolve import tree_linsolve
from .errors import DisconnectedTreeError, MissingSiteError, TopologyMismatchError, TreeCycleError, TreeError
from .operator import TreeOperator, tree_heisenberg, tree_operator
from .quantics import LAYOUTS, QuanticsLayout, quantics_tree, tree_quantics_interpolate
from .sweeps import TreeDMRGResult, tree_dmrg
from .tci import TreeTCIResult, tree_crossinterpolate
from .topology import Tree
from .treetn import TreeTN, add, inner

__all__ = [
    "Tree",
    "TreeTN",
    "inner",
    "add",
    "TreeOperator",
    "tree_operator",
    "tree_heisenberg",
    "apply_fit",
    "tree_linsolve",
    "tree_dmrg",
    "TreeDMRGResult",
    "tree_crossinterpolate",
    "TreeTCIResult",
    "quantics_tree",
    "tree_quantics_interpolate",
    "QuanticsLayout",
    "LAYOUTS",
    "TreeError",
    "TreeCycleError",
    "DisconnectedTreeError",
    "MissingSiteError",
    "TopologyMismatchError",
]


def __dir__() -> list[str]:
    """The public names and the public submodules."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
