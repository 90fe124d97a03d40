"""Quantics grids: :class:`Grid`, the map between grid indices, quantics digits and
coordinates (QuanticsGrids.jl's ``DiscretizedGrid``, 0-based).

A grid has ``2**R`` points per dimension. In dimension ``d`` the point with grid index
``i`` (``0 <= i < 2**R``) sits at ``lower[d] + i * step[d]``, ``step = (upper - lower) /
2**R`` (the upper end excluded), or ``/ (2**R - 1)`` with ``include_endpoint=True``.
Bit ``k`` of an index counts from the most significant (``k = 0``, weight ``2**(R-1)``)
to the least significant (``k = R - 1``). A quantics tensor train (QTT) is an MPS whose
sites carry these bits, most significant first, so that for one dimension
``MPS.to_dense()[i]`` is the value at grid index ``i``. With several dimensions:

* ``"fused"``: ``R`` sites of dimension ``2**D``; site ``k`` carries bit ``k`` of every
  dimension as the digit ``sum_d bit_k(i_d) * 2**d`` (the first dimension least
  significant, as in QuanticsGrids.jl);
* ``"interleaved"``: ``R * D`` sites of dimension 2 in the order
  ``(bit 0 of dim 0, bit 0 of dim 1, ..., bit 1 of dim 0, ...)``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    Tensor4allError,
    Tensor4allTypeError,
    ValueRangeError,
)
from ..tools.checks import check_bool, check_positive_int

__all__ = ["Grid", "GridRangeError", "UNFOLDINGS", "MAX_BITS"]

#: the ways several dimensions share the sites of a quantics tensor train
UNFOLDINGS = ("fused", "interleaved")
#: the most bits per dimension: grid indices are held in int64 arrays
MAX_BITS = 62


class GridRangeError(Tensor4allError, ValueError, IndexError):
    """A grid index, a quantics digit or a coordinate outside the grid; the message names
    the value and the valid range."""


def _int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise Tensor4allTypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


class Grid:
    """A grid of ``2**R`` points per dimension on ``[lower, upper)`` (``[lower, upper]`` with
    ``include_endpoint=True``) in ``dims`` dimensions, and its quantics unfolding.

    ``lower`` and ``upper`` are numbers (the same in every dimension) or sequences of
    ``dims`` numbers. ``unfolding`` is ``"fused"`` (``R`` sites of dimension ``2**dims``) or
    ``"interleaved"`` (``R * dims`` sites of dimension 2); see the module docstring.

    >>> g = Grid(3, 0.0, 1.0)
    >>> g.grididx_to_quantics(5), g.grididx_to_origcoord(5)
    ((1, 0, 1), 0.625)
    """

    __slots__ = ("_R", "_dims", "_lower", "_upper", "_unfolding", "_include_endpoint", "_step")

    def __init__(
        self,
        R: int,
        lower: Any = 0.0,
        upper: Any = 1.0,
        dims: int = 1,
        unfolding: str = "fused",
        include_endpoint: bool = False,
    ):
        R = check_positive_int(R, "Grid: R (bits per dimension)")
        if R > MAX_BITS:
            raise InvalidOptionError(f"Grid: R must be at most {MAX_BITS} (grid indices are int64), got {R}")
        dims = check_positive_int(dims, "Grid: dims (number of dimensions)")
        if not isinstance(unfolding, str) or unfolding not in UNFOLDINGS:
            raise InvalidOptionError(
                f"Grid: unfolding must be one of {', '.join(map(repr, UNFOLDINGS))}, got {unfolding!r}"
            )
        include_endpoint = check_bool(include_endpoint, "Grid: include_endpoint")
        lo, hi = _bounds(lower, dims, "lower"), _bounds(upper, dims, "upper")
        bad = next((d for d in range(dims) if not lo[d] < hi[d]), None)
        if bad is not None:
            raise InvalidOptionError(
                f"Grid: lower must be below upper in every dimension; dimension {bad} has "
                f"lower={lo[bad]!r}, upper={hi[bad]!r}"
            )
        n = 2**R - (1 if include_endpoint else 0)
        with np.errstate(over="ignore"):
            step = tuple(float(np.float64(h) - np.float64(l)) / n for l, h in zip(lo, hi))
        bad = next((d for d in range(dims) if not (0.0 < step[d] < np.inf)), None)
        if bad is not None:
            raise ValueRangeError(
                f"Grid: the width of dimension {bad}, upper - lower = {hi[bad]!r} - {lo[bad]!r}, "
                f"leaves the float range or gives a step of 0 on {n + 1 if include_endpoint else n} "
                "points; rescale the coordinates"
            )
        self._R, self._dims, self._lower, self._upper = R, dims, lo, hi
        self._unfolding, self._include_endpoint, self._step = unfolding, include_endpoint, step

    # ---- properties -----------------------------------------------------------------
    @property
    def R(self) -> int:
        """Bits per dimension."""
        return self._R

    @property
    def dims(self) -> int:
        """The number of dimensions."""
        return self._dims

    @property
    def lower(self) -> tuple[float, ...]:
        """The lower ends, one per dimension."""
        return self._lower

    @property
    def upper(self) -> tuple[float, ...]:
        """The upper ends, one per dimension (excluded unless ``include_endpoint``)."""
        return self._upper

    @property
    def step(self) -> tuple[float, ...]:
        """The spacing of the points, one per dimension."""
        return self._step

    @property
    def unfolding(self) -> str:
        return self._unfolding

    @property
    def include_endpoint(self) -> bool:
        return self._include_endpoint

    @property
    def n_points(self) -> int:
        """Points per dimension, ``2**R``."""
        return 2**self._R

    @property
    def local_dims(self) -> list[int]:
        """The dimension of every site of the quantics tensor train."""
        if self._unfolding == "fused":
            return [2**self._dims] * self._R
        return [2] * (self._R * self._dims)

    @property
    def n_sites(self) -> int:
        """The number of sites of the quantics tensor train."""
        return len(self.local_dims)

    def sites_of(self, dim: int = 0) -> list[int]:
        """The sites that carry bits of dimension ``dim``, most significant first (all ``R``
        sites when fused)."""
        dim = self._check_dim(dim)
        if self._unfolding == "fused":
            return list(range(self._R))
        return [k * self._dims + dim for k in range(self._R)]

    def __repr__(self) -> str:
        lo = self._lower[0] if self._dims == 1 else self._lower
        hi = self._upper[0] if self._dims == 1 else self._upper
        extra = f", dims={self._dims}, unfolding={self._unfolding!r}" if self._dims > 1 else ""
        end = ", include_endpoint=True" if self._include_endpoint else ""
        return f"Grid(R={self._R}, lower={lo!r}, upper={hi!r}{extra}{end})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Grid) and all(getattr(self, s) == getattr(other, s) for s in Grid.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, s) for s in Grid.__slots__))

    # ---- conversions ----------------------------------------------------------------
    def grididx_to_quantics(self, index: Any) -> Any:
        """The quantics digits (one per site) of a grid index: ``index`` is an int in one
        dimension, a sequence of ``dims`` ints otherwise; a tuple of ints comes back. An
        integer array of shape ``(n,)`` (one dimension) or ``(n, dims)`` gives an ``(n,
        n_sites)`` int64 array."""
        idx, single = self._indices(index, "grididx_to_quantics")
        R, D = self._R, self._dims
        shifts = np.arange(R - 1, -1, -1, dtype=np.int64)
        bits = (idx[:, :, None] >> shifts[None, None, :]) & 1  # (n, D, R), bit k at [:, :, k]
        if self._unfolding == "fused":
            q = np.sum(bits << np.arange(D, dtype=np.int64)[None, :, None], axis=1)
        else:
            q = bits.transpose(0, 2, 1).reshape(len(idx), R * D)
        return tuple(int(v) for v in q[0]) if single else q

    def quantics_to_grididx(self, quantics: Any) -> Any:
        """The grid index of quantics digits (the inverse of :meth:`grididx_to_quantics`):
        an int in one dimension, a tuple of ``dims`` ints otherwise; an ``(n, n_sites)``
        array gives ``(n,)`` or ``(n, dims)``."""
        q, single = self._digits(quantics, "quantics_to_grididx")
        return self._index_out(self._digits_to_indices(q), single)

    def _digits_to_indices(self, q: np.ndarray) -> np.ndarray:
        """The ``(n, dims)`` grid indices of an ``(n, n_sites)`` int64 array of digits, unchecked
        (the fast path for functions sampled by cross interpolation)."""
        R, D = self._R, self._dims
        if self._unfolding == "fused":
            bits = (q[:, None, :] >> np.arange(D, dtype=np.int64)[None, :, None]) & 1  # (n, D, R)
        else:
            bits = q.reshape(len(q), R, D).transpose(0, 2, 1)
        return np.sum(bits << np.arange(R - 1, -1, -1, dtype=np.int64)[None, None, :], axis=2)

    def grididx_to_origcoord(self, index: Any, dtype: Any = np.float64) -> Any:
        """The coordinates ``lower + index * step`` of a grid index (a float, or a tuple of
        ``dims`` floats; arrays as in :meth:`grididx_to_quantics`). ``dtype=np.longdouble``
        computes them in extended precision (a NumPy long double comes back), for functions
        whose values at float64 coordinates carry rounding noise."""
        idx, single = self._indices(index, "grididx_to_origcoord")
        dt = _float_dtype(dtype)
        n = 2**self._R - (1 if self._include_endpoint else 0)
        lo = np.asarray(self._lower, dtype=dt)
        if dt == np.float64:
            step = np.asarray(self._step)
        else:
            step = (np.asarray(self._upper, dtype=dt) - lo) / dt.type(n)
        x = lo[None, :] + idx.astype(dt) * step[None, :]
        # lower + i step rounds past upper at the last point (1.7000000000000002 on [-3.3, 1.7])
        x = np.minimum(x, np.asarray(self._upper, dtype=dt)[None, :])
        if single:
            vals = [float(v) for v in x[0]] if dt == np.float64 else list(x[0])
            return vals[0] if self._dims == 1 else tuple(vals)
        return x[:, 0] if self._dims == 1 else x

    def origcoord_to_grididx(self, coordinate: Any) -> Any:
        """The index of the grid point nearest to ``coordinate`` (a number in one dimension,
        a sequence of ``dims`` numbers otherwise; or an array ``(n,)`` / ``(n, dims)``).
        Coordinates outside ``[lower, upper]`` raise :class:`GridRangeError`."""
        x, single = self._coordinates(coordinate)
        lo, hi, step = (np.asarray(v) for v in (self._lower, self._upper, self._step))
        out = (x < lo) | (x > hi)
        if out.any():
            row, d = map(int, np.argwhere(out)[0])
            raise GridRangeError(
                f"Grid.origcoord_to_grididx: coordinate {float(x[row, d])!r} in dimension {d} lies "
                f"outside [{float(lo[d])!r}, {float(hi[d])!r}]"
            )
        # clipped as integers: 2**R - 1 is no float64 for R >= 54 (it rounded to 2**R, one past the end)
        idx = np.clip(np.rint((x - lo) / step).astype(np.int64), 0, 2**self._R - 1)
        return self._index_out(idx, single)

    def quantics_to_origcoord(self, quantics: Any, dtype: Any = np.float64) -> Any:
        """The coordinates of quantics digits (:meth:`quantics_to_grididx`, then
        :meth:`grididx_to_origcoord`)."""
        return self.grididx_to_origcoord(self.quantics_to_grididx(quantics), dtype)

    def origcoord_to_quantics(self, coordinate: Any) -> Any:
        """The quantics digits of the grid point nearest to ``coordinate``."""
        return self.grididx_to_quantics(self.origcoord_to_grididx(coordinate))

    # ---- checks -----------------------------------------------------------------------
    def _check_dim(self, dim: Any) -> int:
        d = _int(dim, "dim")
        if not 0 <= d < self._dims:
            raise GridRangeError(f"dim {d} is outside the grid's dimensions 0..{self._dims - 1}")
        return d

    def _indices(self, index: Any, what: str) -> tuple[np.ndarray, bool]:
        """``index`` as an ``(n, dims)`` int64 array in range, and whether it was one point."""
        D, N = self._dims, 2**self._R
        if isinstance(index, np.ndarray) and index.ndim >= 1 and not (D > 1 and index.ndim == 1):
            if index.dtype.kind not in "iu":
                raise Tensor4allTypeError(f"Grid.{what}: an index array must hold integers, got dtype {index.dtype}")
            a = index.astype(np.int64).reshape(len(index), 1) if index.ndim == 1 else index.astype(np.int64)
            if a.ndim != 2 or a.shape[1] != D:
                shape = "(n,)" if D == 1 else f"(n, {D})"
                raise DimensionMismatchError(f"Grid.{what}: an index array must have shape {shape}, got {index.shape}")
            single = False
        else:
            vals = [index] if D == 1 else _sequence(index, D, f"Grid.{what}: the grid index")
            a = np.array([[_int(v, f"Grid.{what}: a grid index") for v in vals]], dtype=object)
            single = True
        bad = np.argwhere((a < 0) | (a >= N))
        if len(bad):
            r, d = map(int, bad[0])
            raise GridRangeError(f"Grid.{what}: grid index {a[r, d]} (dimension {d}) is outside 0..{N - 1}")
        return a.astype(np.int64), single

    def _digits(self, quantics: Any, what: str) -> tuple[np.ndarray, bool]:
        L, dims = self.n_sites, self.local_dims
        if isinstance(quantics, np.ndarray) and quantics.ndim == 2:
            if quantics.dtype.kind not in "iu":
                raise Tensor4allTypeError(f"Grid.{what}: quantics digits must be integers, got dtype {quantics.dtype}")
            if quantics.shape[1] != L:
                raise DimensionMismatchError(
                    f"Grid.{what}: expected an (n, {L}) array of digits, got shape {quantics.shape}"
                )
            q, single = quantics.astype(np.int64), False
        else:
            vals = _sequence(quantics, L, f"Grid.{what}: the quantics digits")
            q, single = np.array([[_int(v, f"Grid.{what}: a quantics digit") for v in vals]], dtype=object), True
        bad = np.argwhere((q < 0) | (q >= dims[0]))
        if len(bad):
            r, k = map(int, bad[0])
            raise GridRangeError(f"Grid.{what}: digit {q[r, k]} at site {k} is outside 0..{dims[0] - 1}")
        return q.astype(np.int64), single

    def _coordinates(self, coordinate: Any) -> tuple[np.ndarray, bool]:
        D = self._dims
        if isinstance(coordinate, np.ndarray) and coordinate.ndim >= 1 and not (D > 1 and coordinate.ndim == 1):
            if coordinate.dtype.kind not in "iuf":
                raise Tensor4allTypeError(f"Grid: coordinates must be real numbers, got dtype {coordinate.dtype}")
            x = coordinate.astype(np.float64)
            x = x.reshape(len(x), 1) if x.ndim == 1 else x
            if x.ndim != 2 or x.shape[1] != D:
                shape = "(n,)" if D == 1 else f"(n, {D})"
                raise DimensionMismatchError(
                    f"Grid: a coordinate array must have shape {shape}, got {coordinate.shape}"
                )
            single = False
        else:
            vals = [coordinate] if D == 1 else _sequence(coordinate, D, "Grid: the coordinate")
            for v in vals:
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                    raise Tensor4allTypeError(f"Grid: a coordinate must be a real number, got {type(v).__name__} {v!r}")
            x, single = np.array([vals], dtype=np.float64), True
        if not np.isfinite(x).all():
            raise NonFiniteError(f"Grid: coordinates must be finite, got {float(x[~np.isfinite(x)][0])!r}")
        return x, single

    def _index_out(self, idx: np.ndarray, single: bool) -> Any:
        if single:
            return int(idx[0, 0]) if self._dims == 1 else tuple(int(v) for v in idx[0])
        return idx[:, 0] if self._dims == 1 else idx


def _sequence(value: Any, n: int, what: str) -> list[Any]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
        raise Tensor4allTypeError(f"{what} must be a sequence of {n} values, got {type(value).__name__} {value!r}")
    vals = list(value)
    if len(vals) != n:
        raise DimensionMismatchError(f"{what} must have {n} entries, got {len(vals)}")
    return vals


def _bounds(value: Any, dims: int, what: str) -> tuple[float, ...]:
    if isinstance(value, numbers.Number) or (isinstance(value, np.ndarray) and value.ndim == 0):
        vals = [value] * dims
    elif isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise Tensor4allTypeError(
            f"Grid: {what} must be a number or a sequence of {dims} numbers, got {type(value).__name__} {value!r}"
        )
    else:
        vals = _sequence(value, dims, f"Grid: {what}")
    out = []
    for v in vals:
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v[()]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise Tensor4allTypeError(f"Grid: {what} must hold real numbers, got {type(v).__name__} {v!r}")
        if not np.isfinite(float(v)):
            raise NonFiniteError(f"Grid: {what} must be finite, got {v!r}")
        out.append(float(v))
    return tuple(out)


def _float_dtype(dtype: Any) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise InvalidOptionError(
            f"Grid: dtype must be a NumPy floating dtype (float64, longdouble), got {dtype!r}"
        ) from e
    if dt.kind != "f" or dt.itemsize < 8:
        raise InvalidOptionError(f"Grid: dtype must be float64 or longdouble, got {dt}")
    return dt


def check_grid(grid: Any, what: str) -> Grid:
    """``grid`` as a :class:`Grid`; an int ``R`` is the one-dimensional grid ``Grid(R)``."""
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, numbers.Integral) and not isinstance(grid, (bool, np.bool_)):
        return Grid(int(grid))
    raise Tensor4allTypeError(
        f"{what}: expected a quantics Grid or a number of bits R, got {type(grid).__name__} {grid!r}"
    )
