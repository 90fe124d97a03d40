"""The cached function of tensor cross interpolation: every value of ``f`` is computed once.

:class:`CachedFunction` wraps the user's function of a multi-index. Requests come as
arrays of multi-indices (``values(points)``) or as the cross product of left and right
partial indices (``cross(rows, cols)``, the matrices TCI2 factorizes); only the points
never seen before reach ``f``, in one call with an ``(n, L)`` integer array when
``batched`` and one call per point otherwise. :class:`CrossMatrix` reads such a matrix by
whole rows and columns, both kinds in one call. Every value is checked on arrival: a
number (bool and integers become float64; the storage becomes complex128 at the first
complex value), finite, and in batched mode one per multi-index. ``evaluations`` counts
the distinct points ``f`` was asked for.

A multi-index is stored under its position in the row-major flattening of the grid
(site 0 most significant): an ``int64`` when the grid has fewer than 2**63 points (looked
up by binary search in a sorted key array, vectorized), a Python integer in a dict
otherwise.
"""

from __future__ import annotations

import math
import numbers
from itertools import repeat
from typing import Any, Callable

import numpy as np

from .errors import FunctionShapeError, FunctionValueError, NonFiniteValueError

__all__ = ["CachedFunction", "CrossMatrix"]

_INT64_LIMIT = 2**63 - 1


class CachedFunction:
    """``f`` on the grid ``local_dims`` with a cache of every value computed."""

    def __init__(self, f: Callable[..., Any], local_dims: list[int], *, batched: bool, what: str = "f"):
        self.f = f
        self.dims = [int(d) for d in local_dims]
        self.batched = batched
        self.what = what
        self.calls = 0
        self.max_abs = 0.0
        self._exact = math.prod(self.dims) <= _INT64_LIMIT  # int64 keys, else Python ints
        self._slot: dict[Any, int] = {}  # Python-int keys -> slot
        self._keys = np.zeros(0, dtype=np.int64)  # int64 keys, sorted
        self._key_slots = np.zeros(0, dtype=np.int64)  # their slots
        self._values = np.zeros(256)
        self._n = 0
        self._strides: dict[tuple[int, int], np.ndarray] = {}  # (first site, sites) -> row-major strides

    @property
    def evaluations(self) -> int:
        """The number of distinct multi-indices at which ``f`` was evaluated."""
        return self._n

    @property
    def complex(self) -> bool:
        return self._values.dtype.kind == "c"

    # ---- keys ------------------------------------------------------------------------------
    def encode(self, idx: np.ndarray, first: int) -> np.ndarray:
        """Row-major positions of the partial multi-indices ``idx`` (sites ``first ..``):
        ``int64``, or Python integers (dtype object) on grids of 2**63 points and more."""
        n, k = idx.shape
        if self._exact:  # one integer matrix-vector product
            if not k:
                return np.zeros(n, dtype=np.int64)
            strides = self._strides.get((first, k))
            if strides is None:
                strides = np.cumprod([1] + self.dims[first + k - 1 : first : -1])[::-1].astype(np.int64)
                self._strides[(first, k)] = strides
            return idx @ strides
        key = np.zeros(n, dtype=object)
        for j in range(k):
            key = key * self.dims[first + j] + idx[:, j]
        return key

    def _span(self, first: int) -> int:
        return math.prod(self.dims[first:])

    # ---- lookups -------------------------------------------------------------------------
    def values(self, points: np.ndarray) -> np.ndarray:
        """``f`` at each row of the ``(n, L)`` array ``points``."""
        points = np.asarray(points, dtype=np.int64).reshape(-1, len(self.dims))
        keys = self.encode(points, 0)
        return self._lookup(keys, lambda pos: points[pos])

    def cross(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The matrix ``f(rows[i] + cols[j])`` of left partial indices ``rows`` (sites
        ``0 .. k-1``) and right ones ``cols`` (sites ``k .. L-1``)."""
        k = rows.shape[1]
        nr, nc = rows.shape[0], cols.shape[0]
        keys = (self.encode(rows, 0)[:, None] * self._span(k) + self.encode(cols, k)[None, :]).reshape(-1)

        def points(pos: np.ndarray) -> np.ndarray:
            return np.concatenate([rows[pos // nc], cols[pos % nc]], axis=1)

        return self._lookup(keys, points).reshape(nr, nc)

    def matrix(self, rows: np.ndarray, cols: np.ndarray) -> CrossMatrix:
        """The matrix ``f(rows[i] + cols[j])`` read by whole lines (:class:`CrossMatrix`)."""
        return CrossMatrix(self, rows, cols)

    def _find(self, keys: np.ndarray) -> np.ndarray:
        """The slot of each key, -1 where none."""
        if not self._exact:
            return np.fromiter(map(self._slot.get, keys.tolist(), repeat(-1)), dtype=np.int64, count=keys.size)
        pos = np.searchsorted(self._keys, keys)
        found = np.full(keys.size, -1, dtype=np.int64)
        inside = pos < self._keys.size
        hit = np.zeros(keys.size, dtype=bool)
        hit[inside] = self._keys[pos[inside]] == keys[inside]
        found[hit] = self._key_slots[pos[hit]]
        return found

    def _insert(self, keys: np.ndarray, start: int) -> None:
        """Record the distinct new ``keys`` at slots ``start, start + 1, ...``."""
        slots = np.arange(start, start + keys.size, dtype=np.int64)
        if not self._exact:
            self._slot.update(zip(keys.tolist(), slots.tolist()))
            return
        order = np.argsort(keys)
        new = np.searchsorted(self._keys, keys[order]) + np.arange(keys.size)  # their places in the merged array
        old = np.ones(self._keys.size + keys.size, dtype=bool)
        old[new] = False
        merged_keys, merged_slots = np.empty(old.size, dtype=np.int64), np.empty(old.size, dtype=np.int64)
        merged_keys[new], merged_slots[new] = keys[order], slots[order]
        merged_keys[old], merged_slots[old] = self._keys, self._key_slots
        self._keys, self._key_slots = merged_keys, merged_slots

    def _lookup(self, keys: np.ndarray, points_at: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        slots = self._find(keys)
        missing = np.flatnonzero(slots < 0)
        if missing.size:
            new_keys, first, inverse = np.unique(keys[missing], return_index=True, return_inverse=True)
            start = self._store(self._evaluate(np.ascontiguousarray(points_at(missing[first]))))
            self._insert(new_keys, start)
            slots[missing] = start + inverse.reshape(-1)
        return self._values[slots]

    def _store(self, vals: np.ndarray) -> int:
        start, need = self._n, self._n + vals.size
        if vals.dtype.kind == "c" and self._values.dtype.kind != "c":
            self._values = self._values.astype(np.complex128)
        if need > self._values.size:
            grown = np.zeros(max(need, 2 * self._values.size), dtype=self._values.dtype)
            grown[:start] = self._values[:start]
            self._values = grown
        self._values[start:need] = vals
        self._n = need
        if vals.size:
            self.max_abs = max(self.max_abs, float(np.max(np.abs(vals))))
        return start

    # ---- calling f -----------------------------------------------------------------------
    def _evaluate(self, points: np.ndarray) -> np.ndarray:
        points.setflags(write=False)
        if self.batched:
            self.calls += 1
            out = _as_numbers(self.f(points), f"{self.what} (batched) at {len(points)} multi-indices")
            if out.shape != (len(points),):
                raise FunctionShapeError(
                    f"{self.what} (batched=True) must return one value per multi-index: an array of shape "
                    f"({len(points)},) for the ({len(points)}, {len(self.dims)}) index array it was given, got "
                    f"shape {out.shape}"
                )
        else:
            out = np.empty(len(points), dtype=np.complex128)
            for i, p in enumerate(points):
                self.calls += 1
                v = _as_numbers(self.f(p), f"{self.what} at {p.tolist()}")
                if v.shape != ():
                    raise FunctionShapeError(
                        f"{self.what} must return one number for the multi-index {p.tolist()}, got an array of "
                        f"shape {v.shape} (pass batched=True for a function of an (n, L) index array)"
                    )
                out[i] = v
            if not np.any(out.imag):
                out = out.real.copy()
        if not np.isfinite(out).all():
            bad = int(np.flatnonzero(~np.isfinite(out))[0])
            raise NonFiniteValueError(
                f"{self.what} returned {out[bad]} at the multi-index {points[bad].tolist()}; "
                "tensor cross interpolation needs finite values"
            )
        return out


class CrossMatrix:
    """The matrix ``f(rows[i] + cols[j])`` of a :class:`CachedFunction`, read by whole rows and
    whole columns: :meth:`lines` fetches both kinds in one call to ``f`` (only the entries
    never seen before), :meth:`known_rows` returns rows without calling ``f`` when every entry
    is cached. The keys of the rows and columns are computed once."""

    def __init__(self, fn: CachedFunction, rows: np.ndarray, cols: np.ndarray):
        self.fn, self.rows, self.cols = fn, rows, cols
        self.shape = (len(rows), len(cols))
        k = rows.shape[1]
        self._row_keys = fn.encode(rows, 0) * fn._span(k)
        self._col_keys = fn.encode(cols, k)

    def _lines(self, r: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row and column positions of the entries of rows ``r`` then of columns ``c``, row-major."""
        m, n = self.shape
        i = np.concatenate([np.repeat(r, n), np.repeat(np.arange(m), len(c))])
        j = np.concatenate([np.arange(len(r) * n) % n, np.broadcast_to(c, (m, len(c))).reshape(-1)])
        return i, j

    def lines(self, r: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows ``r`` (an ``(len(r), n)`` array) and the columns ``c`` (``(m, len(c))``)."""
        m, n = self.shape
        i, j = self._lines(r, c)
        vals = self.fn._lookup(
            self._row_keys[i] + self._col_keys[j],
            lambda pos: np.concatenate([self.rows[i[pos]], self.cols[j[pos]]], axis=1),
        )
        return vals[: len(r) * n].reshape(len(r), n), vals[len(r) * n :].reshape(m, len(c))

    def known_rows(self, r: np.ndarray) -> np.ndarray | None:
        """The rows ``r`` if every entry is cached, else ``None`` (``f`` is not called)."""
        slots = self.fn._find((self._row_keys[r][:, None] + self._col_keys[None, :]).reshape(-1))
        if np.any(slots < 0):
            return None
        return self.fn._values[slots].reshape(len(r), self.shape[1])


def _as_numbers(v: Any, what: str) -> np.ndarray:
    """``v`` as a float64 or complex128 array; anything that is not numbers raises
    :class:`FunctionValueError` naming ``what``."""
    if isinstance(v, (str, bytes)) or v is None:
        raise FunctionValueError(f"{what} returned {type(v).__name__} {v!r}, not a number")
    try:
        a = np.asarray(v)
    except (TypeError, ValueError) as e:
        raise FunctionValueError(
            f"{what} returned a {type(v).__name__} that is not an array of numbers ({e})"
        ) from None
    if a.dtype.kind in "biuf":
        return a.astype(np.float64)
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    if a.dtype.kind == "O" and a.shape == () and isinstance(a[()], numbers.Complex):  # Fraction, mpf, ...
        x = a[()]
        return np.asarray(float(x) if isinstance(x, numbers.Real) else complex(x))
    raise FunctionValueError(f"{what} returned values of dtype {a.dtype} ({type(v).__name__}), not numbers")
