"""Small helpers shared by the network modules: traced-value tests, conversions
between tenferro tensors and raw NumPy arrays, dtype and size validation."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import tenferro as tf
import tidu

from ._errors import BondDimensionError, NotDifferentiableError

__all__ = [
    "is_traced", "any_traced", "to_numpy", "as_tensor", "np_dtype", "check_positive_int",
    "is_scalar_number",
]


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a value being transformed by tidu (a tracer)."""
    return isinstance(x, tidu.Tracer)


def any_traced(xs: Any) -> bool:
    return any(isinstance(x, tidu.Tracer) for x in xs)


def to_numpy(x: Any, what: str) -> np.ndarray:
    """``x`` as a NumPy array; a tracer raises :class:`NotDifferentiableError` naming ``what``."""
    if isinstance(x, tidu.Tracer):
        raise NotDifferentiableError(
            f"{what} works on concrete values and is not differentiable; it was given a traced "
            "value (call it outside tidu.grad/jvp, or use a differentiable function instead)"
        )
    return np.asarray(x)


def as_tensor(x: Any) -> Any:
    """A tenferro tensor (tracers and tensors pass through unchanged)."""
    if isinstance(x, (tf.Tensor, tidu.Tracer)):
        return x
    return tf.asarray(np.asarray(x))


def np_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from a tenferro DType, a NumPy dtype or a name."""
    if isinstance(dtype, tf.DType):
        return np.dtype(dtype.numpy)
    return np.dtype(dtype)


def check_positive_int(value: Any, what: str) -> int:
    """``value`` as an ``int`` >= 1, else :class:`BondDimensionError` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise BondDimensionError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def is_scalar_number(x: Any) -> bool:
    return isinstance(x, numbers.Number) or (isinstance(x, np.ndarray) and x.ndim == 0) or isinstance(x, np.generic)
