"""Exceptions raised by tenferro. Every error derives from :class:`TenferroError`.

Each class also derives from the matching built-in exception (``ValueError``,
``TypeError``, ``IndexError``) so that generic NumPy-style ``except`` clauses keep
working. Messages name the operation, the offending operand and what was
expected, e.g.::

    reshape_view: cannot reshape tensor of shape (2, 3) (size 6) into shape (4,) (size 4)
"""

from __future__ import annotations

__all__ = [
    "TenferroError",
    "ShapeError",
    "DTypeError",
    "PlacementError",
    "UnsupportedOnDeviceError",
    "TenferroValueError",
    "TenferroIndexError",
    "TenferroTypeError",
    "ForeignOperandError",
    "AxisError",
    "TenferroMemoryError",
    "OptionalDependencyError",
]


class TenferroError(Exception):
    """Base class of every error raised by tenferro."""


class ShapeError(TenferroError, ValueError):
    """A shape or extent is invalid or incompatible with the operation."""


class DTypeError(TenferroError, TypeError):
    """A dtype is unsupported, or a conversion between dtypes is not allowed."""


class PlacementError(TenferroError, ValueError):
    """Operands live on different devices, or a device runtime is unavailable."""


class UnsupportedOnDeviceError(PlacementError, NotImplementedError):
    """The operation has no implementation on the operand's device (e.g. a LAPACK
    routine CuPy lacks); nothing falls back to the CPU implicitly."""


class TenferroValueError(TenferroError, ValueError):
    """An argument has the right type but an invalid value."""


class TenferroIndexError(TenferroError, IndexError):
    """An index or a view reaches outside the tensor or its buffer."""


class TenferroTypeError(TenferroError, TypeError):
    """An argument or a tensor has the wrong kind for a Python protocol (``len``, ``index``)."""


class ForeignOperandError(TenferroTypeError):
    """An operand whose type implements ``__tenferro_function__`` (a structured
    tensor) reached a tenferro function that does not dispatch on it; convert it
    with ``.to_dense()`` first. Dispatchable functions catch it and dispatch."""

    def __init__(self, op: str, operand: object):
        super().__init__(
            f"{op}: got an operand of type {type(operand).__qualname__}, which tenferro does not "
            "store densely and this function does not dispatch on; convert it with .to_dense() "
            "first (functions that dispatch: see tenferro._dispatch)"
        )
        self.operand = operand


class AxisError(TenferroError, ValueError):
    """An axis number or an axis permutation is out of range or malformed."""


class OptionalDependencyError(TenferroError, ImportError):
    """An optional dependency (an extra such as ``arrow`` or ``distributed``) is not installed
    or too old; the message names the extra to install."""


class TenferroMemoryError(TenferroError, MemoryError):
    """A tensor (or an intermediate that an operation plans) does not fit in memory;
    the message names the bytes requested."""


def fmt_bytes(n: int) -> str:
    """``n`` bytes in words, e.g. ``8000000000000 bytes (7.3 TiB)``."""
    size, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if size < 1024 or unit == "EiB":
            break
        size /= 1024
    return f"{n} bytes ({size:.3g} {unit})"


def fmt_shape(shape: object) -> str:
    """Format ``shape`` as a plain tuple, e.g. ``(2, 3)`` or ``(4,)``."""
    return str(tuple(shape))  # type: ignore[arg-type]
