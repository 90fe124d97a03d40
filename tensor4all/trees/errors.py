"""Typed errors of tree tensor networks (:mod:`tensor4all.trees`).

Each names what was wrong (the edge that closes a cycle, the nodes no edge reaches, the node
without a site leg, the edge whose dimensions differ) and what was expected. All derive from
:class:`TreeError`, itself a :class:`~tensor4all.Tensor4allError` and a ``ValueError``.
"""

from __future__ import annotations

from ..tools.errors import DimensionMismatchError, Tensor4allError

__all__ = ["TreeError", "TreeCycleError", "DisconnectedTreeError", "MissingSiteError", "TopologyMismatchError"]


class TreeError(Tensor4allError, ValueError):
    """Bad input to a tree tensor network (base of the classes below)."""


class TreeCycleError(TreeError):
    """An edge list with a cycle (a repeated edge, a self-loop, or an edge joining two nodes
    already connected): a tree has exactly one path between any two nodes."""


class DisconnectedTreeError(TreeError):
    """An edge list that leaves nodes unreachable from node 0 (a forest, not a tree)."""


class MissingSiteError(TreeError):
    """A node whose tensor has no site leg (only bond legs): every node of a tree tensor
    network carries at least one site index."""


class TopologyMismatchError(TreeError, DimensionMismatchError):
    """Two tree tensor networks (or a network and an operator) on different trees, or with
    different site dimensions, or a tensor whose bond leg does not match its neighbour's."""
