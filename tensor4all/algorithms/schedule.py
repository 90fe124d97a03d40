"""Sweep schedules: which sites a DMRG-like sweep updates, in which order, and which way
the orthogonality centre moves after each update.

The one place that says how a sweep walks the chain (TeNPy's
``Sweep.get_sweep_schedule``, quimb's direction table in ``tensor_dmrg``): a sweep is a
left-to-right pass followed by a right-to-left pass, each a tuple of immutable
:class:`Step` s. Two-site steps update the pair ``(site, site + 1)``; one-site steps the
site alone. Either way every interior bond is split twice per sweep, so a chain of ``L``
sites has ``2 (L - 1)`` steps (none for ``L = 1``: there is no bond to split).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

__all__ = ["Step", "sweep_schedule", "RIGHT", "LEFT"]

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


@lru_cache(maxsize=64, typed=True)
def sweep_schedule(L: int, two_site: bool) -> tuple[Step, ...]:
    """The steps of one full sweep of a chain of ``L`` sites: sites ``0 .. L-2`` moving
    right, then back moving left (two-site: pairs ``L-2 .. 0``; one-site: sites ``L-1 .. 1``)."""
    if not isinstance(L, int) or L < 1:
        raise ValueError(f"sweep_schedule: L must be a positive integer, got {L!r}")
    n = 2 if two_site else 1
    right = [Step(i, RIGHT, n) for i in range(L - 1)]
    left = [Step(i, LEFT, n) for i in reversed(range(2 - n, L - n + 1))]
    return tuple(right + left)
