"""Sweep schedules: which sites a DMRG-like sweep updates, in which order, and which way
the orthogonality centre moves after each update.

The one place that says how a sweep walks the chain (TeNPy's
``Sweep.get_sweep_schedule``, quimb's direction table in ``tensor_dmrg``): a sweep is a
left-to-right pass followed by a right-to-left pass, each a tuple of immutable
:class:`Step` s. Two-site steps update the pair ``(site, site + 1)``; one-site steps the
site alone. Either way every interior bond is split twice per sweep, so a chain of ``L``
sites has ``2 (L - 1)`` steps (none for ``L = 1``: there is no bond to split).

A chain is the path case of a tree: :func:`tree_schedule` walks the Euler tour of a tree's
edges from a root (depth first, children in increasing order, every edge once down and once
back up), one :class:`TreeStep` per move of the centre; :func:`sweep_schedule` is that tour on
the path ``0 - 1 - ... - L-1`` rooted at site 0, read as chain :class:`Step` s (moving away from
the root is "right"). The tree sweeps of :mod:`tensor4all.trees` walk the same tour.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

__all__ = ["Step", "TreeStep", "sweep_schedule", "tree_schedule", "RIGHT", "LEFT"]

RIGHT = "right"
LEFT = "left"


class Step(NamedTuple):
    """One local update: the leftmost updated ``site``, the ``direction`` the centre moves
    ("right" or "left") and the number of updated sites ``n_sites`` (1 or 2)."""

    site: int
    direction: str
    n_sites: int

    @property
    def leaving(self) -> int:
        """The site the centre leaves: it ends orthonormal and its environment is built."""
        return self.site + self.n_sites - 1 if self.direction == LEFT else self.site

    @property
    def arriving(self) -> int:
        """The site the centre moves to."""
        return self.leaving + 1 if self.direction == RIGHT else self.leaving - 1

    @property
    def bond(self) -> int:
        """The bond the split creates (bond ``b`` joins sites ``b - 1`` and ``b``)."""
        return max(self.leaving, self.arriving)


class TreeStep(NamedTuple):
    """One move of the centre over a tree's edge: from ``leaving`` to its neighbour
    ``arriving``; two-site steps update both nodes, one-site steps ``leaving`` alone.
    ``direction`` is "right" away from the root, "left" toward it."""

    leaving: int
    arriving: int
    n_sites: int
    direction: str

    @property
    def site(self) -> int:
        """The smaller updated node (a chain's leftmost updated site)."""
        return min(self.leaving, self.arriving) if self.n_sites == 2 else self.leaving

    @property
    def edge(self) -> tuple[int, int]:
        """The edge the split creates, smaller node first."""
        return (min(self.leaving, self.arriving), max(self.leaving, self.arriving))


def tree_schedule(neighbours: tuple[tuple[int, ...], ...], root: int, two_site: bool) -> tuple[TreeStep, ...]:
    """The Euler tour of the tree whose node ``u`` has the neighbours ``neighbours[u]``, from
    ``root``: depth first, children in increasing order, each edge crossed once away from the
    root and once back, ``2 (n - 1)`` steps ending at the root. The caller checks that the
    neighbour lists form a tree."""
    n = 2 if two_site else 1
    steps: list[TreeStep] = []
    stack: list[tuple[int, int, int]] = [(root, -1, 0)]  # (node, parent, next neighbour)
    while stack:
        u, parent, k = stack.pop()
        children = [w for w in sorted(neighbours[u]) if w != parent]
        if k < len(children):
            stack.append((u, parent, k + 1))
            steps.append(TreeStep(u, children[k], n, RIGHT))
            stack.append((children[k], u, 0))
        elif parent >= 0:
            steps.append(TreeStep(u, parent, n, LEFT))
    return tuple(steps)


@lru_cache(maxsize=64, typed=True)
def sweep_schedule(L: int, two_site: bool) -> tuple[Step, ...]:
    """The steps of one full sweep of a chain of ``L`` sites: sites ``0 .. L-2`` moving
    right, then back moving left (two-site: pairs ``L-2 .. 0``; one-site: sites ``L-1 .. 1``):
    the :func:`tree_schedule` of the path rooted at site 0."""
    if not isinstance(L, int) or L < 1:
        raise ValueError(f"sweep_schedule: L must be a positive integer, got {L!r}")
    path = tuple(tuple(j for j in (i - 1, i + 1) if 0 <= j < L) for i in range(L))
    return tuple(Step(t.site, t.direction, t.n_sites) for t in tree_schedule(path, 0, two_site))
