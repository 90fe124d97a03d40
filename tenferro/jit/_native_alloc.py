"""Storage of the native backend's tapes (no Numba needed here): where each value of a
region lives in its dtype's flat workspace. :class:`Allocator` hands out offsets with
best fit among freed blocks (its free list sorted and coalesced), :class:`Storage` is
one value's block, shared by the values a reshape aliases. Used by :mod:`._native_lower`."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

__all__ = ["Allocator", "Storage"]


@dataclass
class Storage:
    """One value's block: its workspace (dtype index), offset and size in elements, how many
    values share it (a reshape is an alias) and whether it is one element standing for a
    constant of equal elements."""

    ws: int
    off: int
    size: int
    refs: int = 0
    uniform: bool = False  # one element standing for a constant whose elements are all equal


class Allocator:
    """Offsets in one workspace: best fit among freed blocks, else the top."""

    def __init__(self) -> None:
        self.top = self.peak = 0
        self.free: list[tuple[int, int]] = []  # (off, size), sorted by offset

    def alloc(self, size: int) -> int:
        best = None
        for i, (off, n) in enumerate(self.free):
            if n >= size and (best is None or n < self.free[best][1]):
                best = i
        if best is None:
            off, self.top = self.top, self.top + size
            self.peak = max(self.peak, self.top)
            return off
        off, n = self.free.pop(best)
        if n > size:  # the rest stays where the block was (the list stays sorted)
            self.free.insert(best, (off + size, n - size))
        return off

    def release(self, off: int, size: int) -> None:
        if size == 0:
            return
        # the free list is kept sorted and coalesced: only the neighbours can merge
        free = self.free
        i = bisect.bisect(free, (off, size))
        if i < len(free) and off + size == free[i][0]:
            size += free.pop(i)[1]
        if i and free[i - 1][0] + free[i - 1][1] == off:
            i -= 1
            off, size = free[i][0], free[i][1] + size
            free[i] = (off, size)
        else:
            free.insert(i, (off, size))
        if off + size == self.top:  # the last block, back to the top
            self.top = free.pop(i)[0]
