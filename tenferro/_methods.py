"""Tensor operators and methods: one explicit table, :data:`TENSOR_METHODS`,
shared by :class:`Tensor` and its tracers.

``Tensor`` (in :mod:`tenferro._tensor`, the bottom of the layering) holds data
and metadata only; its operators need the op families above it. The package
``tenferro/__init__`` puts this table on the class once, with :func:`install`,
and tidu tracers read the same table through the tensor vector space
(:mod:`tenferro._vspace`), so code written for tensors runs unchanged under
``grad``/``jvp``/``make_graph``. Every entry is a named function.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._compare import equal, greater, greater_equal, less, less_equal, not_equal
from ._contraction import dot, matmul
from ._creation import cast
from ._elementwise import add, conj, divide, imag, multiply, negative, real, subtract
from ._errors import ShapeError, TenferroTypeError
from ._getitem import getitem, iterate
from ._indexing import take
from ._matrix import diagonal, trace
from ._piecewise import abs as _abs, clip
from ._reductions import argmax, argmin, cumsum, max as _max, mean, min as _min, prod, std, sum as _sum, var
from ._structural import reshape, squeeze, transpose
from ._tensor import Tensor
from ._transcendental import power

__all__ = ["TENSOR_METHODS", "BINARY_OPERATORS", "install"]


#: type -> whether it defers (a failed ``getattr`` on a type costs ~10 dict lookups; bounded)
DEFERS: dict[type, bool] = {}


def _defers(x: Any) -> bool:
    """Whether ``x`` asks binary operators to defer to its own (NumPy's convention: a class
    with ``__array_ufunc__ = None``, such as ``tensor4all.MPS``): ``t * psi`` is then
    ``psi.__rmul__(t)``."""
    t = type(x)
    d = DEFERS.get(t)
    if d is None:
        d = getattr(t, "__array_ufunc__", False) is None
        if len(DEFERS) < 1024:
            DEFERS[t] = d
    return d


def _arithmetic(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``self <op> other``, or NotImplemented for an operand that defers (:func:`_defers`)."""

    def method(self: Any, other: Any) -> Any:
        d = DEFERS.get(type(other))  # _defers(other), inlined
        if d or (d is None and _defers(other)):
            return NotImplemented
        return fn(self, other)

    method.__name__ = f"__{fn.__name__}__"
    return method


def _reflected(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``other <op> self`` from ``fn(other, self)`` (the ``__r*__`` operators)."""

    def method(self: Any, other: Any) -> Any:
        d = DEFERS.get(type(other))  # _defers(other), inlined
        if d or (d is None and _defers(other)):
            return NotImplemented
        return fn(other, self)

    method.__name__ = f"r{fn.__name__}"
    return method


def _comparison(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``self <op> other`` as a bool tensor; operands tenferro cannot take give
    NotImplemented, so Python falls back (``t == None`` is False)."""

    def method(self: Any, other: Any) -> Any:
        if not _comparable(other):
            return NotImplemented
        return fn(self, other)

    method.__name__ = f"__{fn.__name__}__"
    return method


def _comparable(x: Any) -> bool:
    return (
        type(x) in (bool, int, float, complex)
        or isinstance(x, (Tensor, np.ndarray, np.generic))
        or hasattr(x, "_trace")
    )


def _positive(self: Any) -> Any:
    """``+x``: the tensor itself."""
    return self


def _reshape(self: Any, *shape: Any, order: str = "F") -> Any:
    """``x.reshape(shape)`` or ``x.reshape(*shape)`` (column-major by default)."""
    return reshape(self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape, order=order)


def _transpose(self: Any, *axes: Any) -> Any:
    """``x.transpose()``, ``x.transpose(axes)`` or ``x.transpose(*axes)``."""
    return transpose(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else (axes or None))


def _matrix_transpose(self: Any) -> Any:
    """``x.T``: all axes reversed."""
    return transpose(self)


def _swap_last_two(self: Any, what: str) -> Any:
    ndim = len(self.shape)
    if ndim < 2:
        raise ShapeError(
            f"{what}: a tensor of rank {ndim} has no matrix axes; expected rank >= 2 (the last two axes are "
            "the matrix, the leading ones a batch, as for matmul)"
        )
    return transpose(self, (*range(ndim - 2), ndim - 1, ndim - 2))


def _mT(self: Any) -> Any:  # noqa: N802 (the array API's name)
    """``x.mT``: the last two axes swapped, the leading ones a batch (the array API standard's
    ``mT``, PyTorch's, and :func:`matmul`'s layout)."""
    return _swap_last_two(self, "mT")


def _mH(self: Any) -> Any:  # noqa: N802 (the array API's name)
    """``x.mH``: the conjugate of :attr:`mT` (PyTorch's ``mH``; ``x.mT`` for real ``x``)."""
    out = _swap_last_two(self, "mH")
    return conj(out) if self.dtype.is_complex else out


def _len(self: Any) -> int:
    shape = self.shape
    if not shape:
        raise TenferroTypeError("len: a 0-d tensor has no length; expected a tensor of rank >= 1")
    return shape[0]


def _astype(self: Any, dtype: Any) -> Any:
    """``x.astype(dtype)``: explicit (possibly lossy) conversion, as :func:`tenferro.cast`
    (NumPy and JAX habit); use :func:`tenferro.convert` for checked conversion."""
    return cast(self, dtype)


def _setitem(self: Any, index: Any, value: Any) -> None:
    raise TenferroTypeError(
        "tensors are immutable values: t[...] = v is not supported; build a new tensor instead, e.g. "
        "tenferro.scatter_add(t, indices, v - t[indices]) or tenferro.dynamic_update_slice(t, v, starts) "
        "(JAX's t.at[...].set(v)), or tenferro.where(mask, v, t)"
    )


# The binary arithmetic operators: ``name -> (function, reflected)``; tracers call the
# function at once (``tenferro._vspace``), tensors through the methods made of them below.
BINARY_OPERATORS: dict[str, tuple[Callable[[Any, Any], Any], bool]] = {
    "__add__": (add, False),
    "__radd__": (add, True),
    "__sub__": (subtract, False),
    "__rsub__": (subtract, True),
    "__mul__": (multiply, False),
    "__rmul__": (multiply, True),
    "__truediv__": (divide, False),
    "__rtruediv__": (divide, True),
    "__pow__": (power, False),
    "__rpow__": (power, True),
    "__matmul__": (matmul, False),
    "__rmatmul__": (matmul, True),
}

TENSOR_METHODS: dict[str, Any] = {
    # arithmetic
    **{name: _reflected(fn) if reflected else _arithmetic(fn) for name, (fn, reflected) in BINARY_OPERATORS.items()},
    "__neg__": negative,
    "__pos__": _positive,
    "__abs__": _abs,
    "abs": _abs,
    # comparisons (bool tensors; hashing stays by identity)
    "__lt__": _comparison(less),
    "__le__": _comparison(less_equal),
    "__gt__": _comparison(greater),
    "__ge__": _comparison(greater_equal),
    "__eq__": _comparison(equal),
    "__ne__": _comparison(not_equal),
    "__hash__": object.__hash__,
    # complex parts
    "conj": conj,
    "real": property(real),
    "imag": property(imag),
    # shape and indexing
    "reshape": _reshape,
    "transpose": _transpose,
    "T": property(_matrix_transpose),
    "mT": property(_mT),
    "mH": property(_mH),
    "squeeze": squeeze,
    "__getitem__": getitem,
    "__setitem__": _setitem,
    "__iter__": iterate,
    "__len__": _len,
    "take": take,
    # reductions and matrices
    "sum": _sum,
    "max": _max,
    "min": _min,
    "mean": mean,
    "prod": prod,
    "argmax": argmax,
    "argmin": argmin,
    "cumsum": cumsum,
    "var": var,
    "std": std,
    "clip": clip,
    "diagonal": diagonal,
    "trace": trace,
    "dot": dot,
    # conversion
    "astype": _astype,
}


def install(cls: type) -> None:
    """Put :data:`TENSOR_METHODS` on ``cls`` (called once, by ``tenferro/__init__``)."""
    for name, fn in TENSOR_METHODS.items():
        setattr(cls, name, fn)
