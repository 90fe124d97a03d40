"""Argument checks of the structured layer, the same as the dense functions' checks.

One module, below everything else in the layer, holds every check that has a dense
counterpart, and reuses tenferro's own check where there is one, so a structured
operand is refused with the dense function's error class and message:

* :func:`as_int`, :func:`as_extent`, :func:`as_position`: integer arguments of the
  shape types (extents, origins, indices) through tenferro's integer conversion
  (floats are never truncated, booleans are refused), with the structured error family
  (:class:`StructuredTypeError`, :class:`StructuredShapeError`,
  :class:`StructuredIndexError`);
* :data:`AXIS_CHECKS`: the axis arguments of ``sum``, ``transpose``, ``trace`` and
  ``norm``, normalized by tenferro's ``normalize_axes`` (``tenferro.AxisError``, ...);
* :func:`dense_operand`: what may stand beside a structured operand (tensors, tracers,
  arrays, numbers) and nothing else;
* :func:`linalg_operands`: **the** non-finite check of structured linear algebra. Every
  leaf of a structured operand, and every dense operand beside it, goes through
  ``tenferro.linalg``'s own entry check: a concrete value (also a tracer that knows one,
  under ``tidu.grad``) holding NaN or inf raises :class:`tenferro.linalg.NonFiniteError`;
  an abstract one (``tenferro.jit``) is staged through tenferro's ``finite_check_p`` and
  checked when the compiled program runs. Integer and boolean matrices are refused with
  :class:`tenferro.linalg.LinalgDTypeError`, as dense.

tenferro's checks come from its public :mod:`tenferro.checks`.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

import tenferro as tf
import tidu
from tenferro import AxisError, ShapeError
from tenferro.checks import (
    as_index,
    as_indices,
    check_finite,
    check_matrix,
    concrete_value as concrete,
    linalg_operand,
    normalize_axes,
    normalize_axis as _norm_axis,
    parse_einsum_subscripts,
)

from ._errors import StructuredIndexError, StructuredShapeError, StructuredTypeError

__all__ = [
    "as_int",
    "as_extent",
    "as_position",
    "as_int_or_ints",
    "as_flag",
    "AXIS_CHECKS",
    "dense_operand",
    "is_dense_operand",
    "linalg_operands",
    "parse_einsum_subscripts",
]


# --- integer arguments of the shape types ------------------------------------------------------
def as_int(op: str, what: str, value: Any) -> int:
    """``value`` as an int (Python or NumPy integers); anything else (``1.5``, ``True``,
    ``"2"``, ``None``) is a :class:`StructuredTypeError` naming ``op`` and ``what``."""
    return as_index(op, value, what, StructuredTypeError)


def as_extent(op: str, what: str, value: Any) -> int:
    """A non-negative int; a negative one is a :class:`StructuredShapeError`."""
    n = as_int(op, what, value)
    if n < 0:
        raise StructuredShapeError(f"{op}: {what} must be >= 0, got {n}")
    return n


def as_position(op: str, what: str, value: Any, n: int) -> int:
    """An index into ``n`` items, negative ones counted from the end as in Python;
    outside ``[-n, n)`` is a :class:`StructuredIndexError`."""
    i = as_int(op, what, value)
    if not -n <= i < n:
        raise StructuredIndexError(f"{op}: {what} {i} is outside [0, {n})" + (f" (or [-{n}, 0))" if n else ""))
    return i % n


def as_int_or_ints(op: str, what: str, value: Any) -> Any:
    """An int, or a tuple of ints from a sequence (``None`` passes): the begin/end
    arguments of ``slice``/``chip``."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise StructuredTypeError(f"{op}: {what} must be an integer or a sequence of integers, got {value!r}")
    try:
        items = tuple(value)
    except TypeError:
        return as_int(op, what, value)
    return tuple(as_int(op, what, v) for v in items)


def as_flag(op: str, what: str, value: Any) -> bool:
    """A boolean argument (Python or NumPy bool); anything else is a :class:`StructuredTypeError`."""
    if not isinstance(value, (bool, np.bool_)):
        raise StructuredTypeError(f"{op}: {what} must be True or False, got {value!r}")
    return bool(value)


# --- axis arguments, as the dense functions check them ------------------------------------------
def _sum_axes(ndim: int, axis: Any = None, keepdims: bool = False) -> None:
    normalize_axes("sum", axis, ndim)


def _transpose_axes(ndim: int, axes: Any = None) -> None:
    if axes is None:
        return
    perm = tuple(_norm_axis("transpose", a, ndim) for a in as_indices("transpose", axes))
    if sorted(perm) != list(range(ndim)):  # tenferro.transpose's own test and message
        raise AxisError(f"transpose: axes {perm} are not a permutation of range({ndim})")


def _trace_axes(ndim: int, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> None:
    as_index("trace", offset, "offset", ShapeError)
    a1, a2 = _norm_axis("trace", axis1, ndim), _norm_axis("trace", axis2, ndim)
    if a1 == a2:  # tenferro.trace's own test and message
        raise ShapeError(f"trace: axis1 and axis2 must differ, got both = {a1}")


def _norm_axes(ndim: int, ord: Any = None, axis: Any = None, keepdims: bool = False) -> None:
    if axis is not None:
        normalize_axes("norm", axis, ndim)


#: op -> check of its arguments after the operand, given the operand's logical ndim
#: (the dense function's parameters: ``sum(x, axis, keepdims)``, ...).
AXIS_CHECKS: dict[str, Callable[..., None]] = {
    "sum": _sum_axes,
    "transpose": _transpose_axes,
    "trace": _trace_axes,
    "norm": _norm_axes,
}


# --- operands beside a structured one -------------------------------------------------------------
_FAST = frozenset({tf.Tensor, float, int, complex})


def is_dense_operand(x: Any) -> bool:
    """A tenferro tensor, a tidu tracer, a NumPy array or scalar, or a Python number."""
    return type(x) in _FAST or isinstance(x, (tf.Tensor, tidu.Tracer, np.ndarray, np.generic, numbers.Number))


def dense_operand(op: str, position: int, x: Any) -> Any:
    """``x`` as a non-structured operand of ``op``: tensors, tracers, NumPy arrays and
    numbers pass; lists and tuples become tensors (as tenferro's functions take them);
    anything else is a :class:`StructuredTypeError` naming the operand."""
    if is_dense_operand(x):
        return x
    if isinstance(x, (list, tuple)):
        return tf.asarray(x)
    raise StructuredTypeError(
        f"{op}: operand {position} is {_show(x)} of type {type(x).__name__}; expected a structured tensor "
        "(DiagonalTensor, BlockDiagonal), a tenferro tensor, a NumPy array or a number"
    )


def _show(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


# --- the non-finite (and dtype) check of structured linear algebra ---------------------------------
#: the linear-algebra functions that take integer matrices (``tenferro.linalg.norm`` does)
_ANY_DTYPE = frozenset({"norm"})


def linalg_operands(op: str, names: tuple[str, ...], operands: tuple, structured: tuple[bool, ...]) -> tuple:
    """The operands of the linear-algebra function ``op`` (parameter names ``names``),
    each refused as ``tenferro.linalg`` refuses it: NaN or inf in any leaf of a
    structured operand or in a dense operand raises :class:`NonFiniteError` naming the
    function, the parameter and, for a leaf, which leaf of which structure; a structured
    matrix ``a`` that is not float or complex raises :class:`LinalgDTypeError`. Abstract
    leaves come back staged (checked when the compiled program runs); everything else
    comes back unchanged."""
    out = []
    for k, (name, x, is_s) in enumerate(zip(names, operands, structured)):
        if not is_s:
            out.append(linalg_operand(op, name, x))
            continue
        if k == 0 and op not in _ANY_DTYPE:
            check_matrix(op, name, x)
        leaves = x.leaves
        new = tuple(_leaf_operand(op, _LeafName(name, x, i), leaf) for i, leaf in enumerate(leaves))
        out.append(x if all(a is b for a, b in zip(new, leaves)) else x._rebuild(new))
    return tuple(out)


def _leaf_operand(op: str, name: _LeafName, leaf: Any) -> Any:
    """``tenferro.linalg``'s entry check of one leaf (its ``operand`` for a leaf, which
    is always a tensor or a tracer), with the name spelled out only when it is needed."""
    value = concrete(leaf)
    if value is None:  # abstract (tenferro.jit): checked when the program runs
        return linalg_operand(op, str(name), leaf)
    check_finite(op, name, value)
    return leaf


class _LeafName:
    """``"a (block 1 of BlockDiagonal(...))"``, formatted only into an error message."""

    __slots__ = ("param", "x", "k")

    def __init__(self, param: str, x: Any, k: int) -> None:
        self.param, self.x, self.k = param, x, k

    def __str__(self) -> str:
        return f"{self.param} ({self.x._leaf_name(self.k)} of {self.x._describe()})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)
