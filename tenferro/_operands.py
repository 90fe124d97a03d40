"""Operands of user-level functions: :func:`as_operand` turns Python scalars and
arrays into tensors (and is the single place where a foreign operand type, a
structured tensor, is recognised: it raises :class:`ForeignOperandError`, which
the public functions turn into a ``__tenferro_function__`` dispatch), and
:func:`check_placement` refuses operands on different placements."""

from __future__ import annotations

from typing import Any

import numpy as np

from tidu import Tracer

from ._aval import placement_of_operand
from ._creation import asarray, scalar_tensor
from ._dtypes import DType, _weak_kind, result_type
from ._errors import ForeignOperandError, PlacementError, TenferroTypeError
from ._placement import Placement, get_default_placement
from ._tensor import Tensor

__all__ = ["as_operand", "check_placement", "eager_operands"]


def as_operand(op: str, x: Any, dtype: DType | None = None, placement: Placement | None = None) -> Any:
    """A Tensor or tracer for ``x``; Python scalars become 0-d tensors of ``dtype``
    (or their default dtype) on ``placement`` (default: the default placement);
    NumPy arrays are converted with ``asarray``."""
    if type(x) is Tensor or isinstance(x, Tracer):
        return x
    if _weak_kind(x) is not None:
        return scalar_tensor(
            x,
            dtype if dtype is not None else result_type(x),
            op,
            get_default_placement() if placement is None else placement,
        )
    if isinstance(x, (np.ndarray, np.generic, list, tuple)):
        return asarray(x)
    if hasattr(type(x), "__tenferro_function__"):
        raise ForeignOperandError(op, x)
    raise TenferroTypeError(
        f"{op}: expected a Tensor, a Python scalar or an array-like operand, got {type(x).__name__}"
    )


def check_placement(op: str, *xs: Any) -> None:
    first = None
    for x in xs:
        p = placement_of_operand(x)
        if first is None:
            first = p
        elif p != first:
            raise PlacementError(
                f"{op}: operands live on different placements ({first} and {p}); "
                "move them explicitly with .to_cpu() / .to_gpu() (no implicit copies)"
            )


_WEAK_REAL = (float, int, bool)


def eager_operands(x: Any, y: Any) -> tuple[Any, Any] | None:
    """NumPy operands of an eager binary operation that needs no preparation, else ``None``.

    Either two NumPy-backed tensors of one shape and dtype, or such a tensor of a
    floating dtype and a Python scalar that takes that dtype unchanged (weak
    promotion, see ``_elementwise._fits_weakly``; the tensor has rank >= 1 so that NumPy 1.x
    value-based casting keeps its dtype too). The scalar stays a scalar: NumPy
    broadcasts it, giving the values the primitive would compute on the broadcast
    constant ``_elementwise._prepare`` builds, without building it.
    """
    tx, ty = type(x), type(y)
    if tx is Tensor:
        a = x._data
        if type(a) is not np.ndarray:
            return None
        if ty is Tensor:
            b = y._data
            if type(b) is np.ndarray and a.shape == b.shape and a.dtype is b.dtype:
                return a, b
            return None
        if ty in _WEAK_REAL:
            return (a, y) if a.dtype.kind in "fc" and a.ndim else None
        if ty is complex:
            return (a, y) if a.dtype.kind == "c" and a.ndim else None
        return None
    if ty is Tensor and (tx in _WEAK_REAL or tx is complex):
        b = y._data
        if type(b) is np.ndarray and b.ndim and (b.dtype.kind in "fc" if tx is not complex else b.dtype.kind == "c"):
            return x, b
    return None
