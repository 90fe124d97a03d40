"""Reduce rules: rewrites that look at types, shapes and dtypes only, never at data.

A rule takes the arguments of its op and returns the result (typically an operand
itself), a :class:`Rewrite` to dispatch instead, or ``NotImplemented``. Which rules
run for which op is listed in ``_tables.py``.
"""

from __future__ import annotations

from typing import Any

import tenferro as tf

from ._diagonal import DiagonalTensor
from ._dispatch import Rewrite, is_structured

__all__ = [
    "transpose_of_diagonal",
    "conj_of_real",
    "real_of_real",
    "imag_of_real",
    "diagonal_times_diagonal",
    "sum_of_diagonal",
    "trace_of_diagonal",
]


def transpose_of_diagonal(x: Any, axes: Any = None) -> Any:
    """A diagonal tensor is invariant under every permutation of its modes."""
    if isinstance(x, DiagonalTensor) and (axes is None or sorted(a % x.ndim for a in axes) == list(range(x.ndim))):
        return x
    return NotImplemented


def conj_of_real(x: Any) -> Any:
    """conj of a real structure is itself (unless conj also changes its metadata: the legs
    of a symmetric tensor flip their duality, ``_conj_flips_legs``)."""
    if getattr(type(x), "_conj_flips_legs", False):
        return NotImplemented
    return x if is_structured(x) and not x.is_complex else NotImplemented


def real_of_real(x: Any) -> Any:
    """real of a real structure is itself."""
    return x if is_structured(x) and not x.is_complex else NotImplemented


def imag_of_real(x: Any) -> Any:
    """imag of a real structure is the same structure filled with zeros."""
    return x.map_leaves(tf.zeros_like) if is_structured(x) and not x.is_complex else NotImplemented


def diagonal_times_diagonal(a: Any, b: Any) -> Any:
    """diag(a) @ diag(b) = diag(a) * diag(b): rewrite the product as the Hadamard product."""
    if isinstance(a, DiagonalTensor) and isinstance(b, DiagonalTensor) and a.ndim == b.ndim == 2:
        return Rewrite("multiply", (a, b), {})
    return NotImplemented


def sum_of_diagonal(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Off-diagonal entries are zero: the full sum is the sum of the diagonal, and the
    sum of a diagonal matrix over one mode is its diagonal."""
    if not isinstance(x, DiagonalTensor) or keepdims:
        return NotImplemented
    axes = None if axis is None else (tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))
    if axes is None or len(axes) == x.ndim:
        return Rewrite("sum", (x.diag,), {})
    if x.ndim == 2 and len(axes) == 1 and axes[0] in (0, 1, -1, -2):
        return x.diag
    return NotImplemented


def trace_of_diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The trace of a diagonal matrix is the sum of its diagonal."""
    if isinstance(x, DiagonalTensor) and x.ndim == 2 and offset == 0:
        return Rewrite("sum", (x.diag,), {})
    return NotImplemented
