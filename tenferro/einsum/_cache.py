"""The bounded least-recently-used caches of einsum (plans, slicings) and their statistics."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable, NamedTuple

__all__ = ["LRUCache", "CacheInfo"]


class CacheInfo(NamedTuple):
    """Statistics of a cache (like ``functools.lru_cache``'s)."""

    hits: int
    misses: int
    size: int
    maxsize: int


class LRUCache:
    """A bounded least-recently-used dictionary with hit/miss counters."""

    __slots__ = ("data", "maxsize", "hits", "misses", "_lock")

    def __init__(self, maxsize: int = 512):
        self.data: OrderedDict = OrderedDict()
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The cached value or ``None``. Thread-safe without a lock: another thread
        may evict ``key`` between the lookup and ``move_to_end`` (then the value is
        still returned; it just is not refreshed). Counters are approximate under threads."""
        v = self.data.get(key)
        if v is None:
            self.misses += 1
            return None
        self.hits += 1
        try:
            self.data.move_to_end(key)
        except KeyError:
            pass
        return v

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:  # inserts and evictions are serialized (misses only: off the hot path)
            self.data[key] = value
            while len(self.data) > self.maxsize:
                self.data.popitem(last=False)

    def info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, len(self.data), self.maxsize)

    def clear(self) -> None:
        with self._lock:
            self.data.clear()
            self.hits = self.misses = 0
