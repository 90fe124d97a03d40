"""Shapes, permutations and dimension names of Arrow's fixed-shape tensor type.

The convention is the one of the Arrow canonical extension
``arrow.fixed_shape_tensor`` (and of seed 000):

* ``shape`` is the **physical** shape: each tensor is stored row-major
  (C order) with this shape;
* ``permutation[i]`` is the physical dimension that **logical** dimension ``i``
  is, so ``logical_shape[i] = shape[permutation[i]]`` and the logical tensor is
  ``physical.transpose(permutation)`` in NumPy terms;
* ``dim_names`` name the physical dimensions, in physical order.

A column-major tensor of logical shape ``(d0, ..., d{n-1})`` is the row-major
array of shape ``(d{n-1}, ..., d0)`` read backwards, i.e. physical shape
``reversed(logical)`` with permutation ``(n-1, ..., 0)``: tenferro's canonical
layout maps to Arrow without moving a byte. The tests check this convention
against pyarrow's own ``to_numpy_ndarray`` / ``from_numpy_ndarray`` / ``to_tensor``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import AxisError, ShapeError, TenferroTypeError, TenferroValueError

__all__ = [
    "f_order_permutation",
    "is_identity",
    "check_permutation",
    "physical_shape",
    "logical_shape",
    "physical_names",
    "logical_names",
    "check_dim_names",
    "logical_batch_view",
]


def f_order_permutation(ndim: int) -> tuple[int, ...]:
    """The permutation of a column-major tensor of rank ``ndim``: ``(ndim-1, ..., 0)``."""
    return tuple(range(ndim - 1, -1, -1))


def is_identity(perm: Sequence[int]) -> bool:
    """True when ``perm`` is ``(0, 1, ..., n-1)``."""
    return all(p == i for i, p in enumerate(perm))


def check_permutation(op: str, perm: Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """``perm`` as a tuple (identity for None), or AxisError if it is not a permutation of ``range(ndim)``."""
    if perm is None:
        return tuple(range(ndim))
    p = tuple(int(a) for a in perm)
    if sorted(p) != list(range(ndim)):
        raise AxisError(f"{op}: permutation {p} is not a permutation of {tuple(range(ndim))}")
    return p


def physical_shape(logical: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    """``physical[perm[i]] = logical[i]``."""
    out = [0] * len(logical)
    for i, p in enumerate(perm):
        out[p] = logical[i]
    return tuple(out)


def logical_shape(physical: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    """``logical[i] = physical[perm[i]]``."""
    return tuple(physical[p] for p in perm)


def physical_names(logical: Sequence[str], perm: Sequence[int]) -> tuple[str, ...]:
    """Dimension names in physical order from names in logical order."""
    out = [""] * len(logical)
    for i, p in enumerate(perm):
        out[p] = logical[i]
    return tuple(out)


def logical_names(physical: Sequence[str], perm: Sequence[int]) -> tuple[str, ...]:
    """Dimension names in logical order from names in physical order."""
    return tuple(physical[p] for p in perm)


def check_dim_names(op: str, names: Any, ndim: int) -> tuple[str, ...] | None:
    """``names`` as a tuple of ``ndim`` strings (or None), else a typed error."""
    if names is None:
        return None
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise TenferroTypeError(f"{op}: dim_names must be a sequence of strings, got {type(names).__name__}")
    out = tuple(names)
    if not all(isinstance(n, str) for n in out):
        raise TenferroTypeError(f"{op}: dim_names must all be strings, got {out!r}")
    if not all(out):
        raise TenferroValueError(
            f"{op}: dim_names must be non-empty strings, got {out!r} (in a stored type the "
            "empty string marks an unnamed axis)"
        )
    if len(out) != ndim:
        raise ShapeError(
            f"{op}: {len(out)} dim_names {out!r} given for tensors of rank {ndim}; expected exactly {ndim}"
        )
    return out


def logical_batch_view(flat: np.ndarray, n: int, physical: Sequence[int], perm: Sequence[int]) -> np.ndarray:
    """The ``(n, *logical_shape)`` view of ``n`` row-major tensors stored back to back in ``flat``."""
    return flat.reshape((n, *physical)).transpose((0, *(p + 1 for p in perm)))
