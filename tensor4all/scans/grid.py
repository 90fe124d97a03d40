"""The points of a scan: a mapping name -> values (their cartesian product, the first
name varying slowest, as :func:`itertools.product`) or a list of points (mappings with the
same names). Values are scalars (bool, int, float, str; NumPy scalars become Python ones);
a name whose values mix integers and floats holds floats. A point is identified by its
values: that is how a resumed scan finds the points its file already holds.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..tools.errors import InvalidOptionError, Tensor4allTypeError

__all__ = ["Grid", "make_grid"]


@dataclass(frozen=True)
class Grid:
    """``names`` (the scanned parameters, in column order) and ``keys`` (one tuple of
    values per point, in scan order)."""

    names: tuple[str, ...]
    keys: tuple[tuple[Any, ...], ...]

    def __len__(self) -> int:
        return len(self.keys)

    def point(self, i: int) -> dict[str, Any]:
        return dict(zip(self.names, self.keys[i]))


def make_grid(grid: Any, reserved: Iterable[str] = ()) -> Grid:
    """The :class:`Grid` of ``grid``; typed errors name the parameter or point that is wrong
    (an empty grid, a name that is not a string or clashes with a result column in
    ``reserved``, a value that is not a scalar, NaN, a point given twice)."""
    if isinstance(grid, Mapping):
        names = tuple(grid)
        columns = []
        for name in names:
            values = grid[name]
            if isinstance(values, np.ndarray):
                values = values.tolist() if values.ndim == 1 else values
            if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, (list, tuple, range)):
                raise Tensor4allTypeError(
                    f"scan: grid[{name!r}] must be a list of values (a list, tuple, range "
                    f"or 1-d array), got {type(values).__name__} {values!r}"
                )
            columns.append(list(values))
        rows = list(itertools.product(*columns)) if columns else []
    elif isinstance(grid, (list, tuple)) and not isinstance(grid, str):
        if grid and not all(isinstance(p, Mapping) for p in grid):
            bad = next(p for p in grid if not isinstance(p, Mapping))
            raise Tensor4allTypeError(
                f"scan: a list of points holds mappings name -> value, got {type(bad).__name__} {bad!r}"
            )
        names = tuple(grid[0]) if grid else ()
        for p in grid:
            if set(p) != set(names):
                raise InvalidOptionError(
                    f"scan: every point names the same parameters; {dict(p)!r} differs from {list(names)!r}"
                )
        rows = [tuple(p[n] for n in names) for p in grid]
    else:
        raise Tensor4allTypeError(
            f"scan: grid must be a mapping name -> values or a list of points, got {type(grid).__name__}"
        )
    if not names or not rows:
        raise InvalidOptionError("scan: the grid is empty; give at least one parameter with at least one value")
    reserved = set(reserved)
    for name in names:
        if not isinstance(name, str) or not name:
            raise Tensor4allTypeError(f"scan: parameter names are non-empty strings, got {name!r}")
        if name in reserved:
            raise InvalidOptionError(
                f"scan: the parameter {name!r} has the name of a result column; valid names "
                "are not: " + ", ".join(sorted(reserved))
            )
    rows = [tuple(_scalar(v, n) for v, n in zip(r, names)) for r in rows]
    rows = _floats_where_mixed(rows, len(names), names)
    seen: set[tuple] = set()
    for r in rows:
        if r in seen:
            raise InvalidOptionError(f"scan: the point {dict(zip(names, r))!r} is given twice; each point runs once")
        seen.add(r)
    return Grid(names, tuple(rows))


def _scalar(v: Any, name: str) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (bool, str)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        if not math.isfinite(v):
            raise InvalidOptionError(f"scan: {name} = {v!r} is not a finite number")
        return float(v)
    raise Tensor4allTypeError(
        f"scan: the values of {name!r} must be numbers, booleans or strings, got {type(v).__name__} {v!r}"
    )


def _floats_where_mixed(rows: list[tuple], n: int, names: Sequence[str]) -> list[tuple]:
    """The rows with a column of ints and floats made floats; a column of numbers and strings, or
    of booleans and numbers, is refused here, before any point runs (the table's column holds
    one type: its first write would fail after the first batch, and every resume again)."""
    for k in range(n):
        kinds = {"str" if type(r[k]) is str else "bool" if type(r[k]) is bool else "number" for r in rows}
        if len(kinds) > 1:
            shown = ", ".join(sorted({type(r[k]).__name__ for r in rows}))
            raise Tensor4allTypeError(
                f"scan: the values of {names[k]!r} mix {shown}; a grid column holds numbers, booleans "
                "or strings, one kind per column"
            )
    mixed = [any(type(r[k]) is float for r in rows) and any(type(r[k]) is int for r in rows) for k in range(n)]
    if not any(mixed):
        return rows
    return [tuple(float(v) if mixed[k] and type(v) is int else v for k, v in enumerate(r)) for r in rows]
