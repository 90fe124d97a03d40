"""Typed errors of the structured layer, under one base :class:`StructuredError`
(itself a :class:`tensor4all.Tensor4allError`). Every message names the operation,
the operands and their structures."""

from __future__ import annotations

from ..tools.errors import Tensor4allError

__all__ = [
    "StructuredError",
    "StructuredShapeError",
    "TilingError",
    "SquareBlockError",
    "MixedPlacementError",
    "DensifyError",
    "ShapeCombineError",
    "StructuredTypeError",
    "StructuredIndexError",
    "SymmetryError",
    "ChargeError",
    "LegError",
    "SectorMismatchError",
    "SymmetryViolationError",
]


class StructuredError(Tensor4allError):
    """Base class of every error raised by the structured layer."""


class StructuredShapeError(StructuredError, ValueError):
    """Logical shapes that do not fit together, a malformed leaf, or a negative extent."""


class StructuredIndexError(StructuredShapeError, IndexError):
    """A mode, layer, tile or outer-slice index outside its range (also a
    :class:`StructuredShapeError`, as these were before they had their own class)."""


class TilingError(StructuredError, ValueError):
    """Two block-diagonal operands whose tilings are not compatible."""


class SquareBlockError(StructuredError, ValueError):
    """A non-square block where the operation needs square blocks (det, inv, eigh, ...)."""


class MixedPlacementError(StructuredError, ValueError):
    """Leaves (or operands) that live on different placements."""


class DensifyError(StructuredError, RuntimeError):
    """A fallback to dense while densification is forbidden (``fallback_policy("error")``)."""


class ShapeCombineError(StructuredError, ValueError):
    """Shapes that cannot be combined through an index expression (``combine``)."""


class StructuredTypeError(StructuredError, TypeError):
    """An argument of the wrong type: an operand that is not a tensor, an array or a
    number, an unknown operation name, arguments that do not fit the operation's
    signature, or a shape argument that is not an integer (``1.5``, ``True``, ``"2"``:
    never truncated) or not a shape."""


class SymmetryError(StructuredError, ValueError):
    """Base of the errors of symmetric (charge-conserving) tensors."""


class ChargeError(SymmetryError):
    """A charge of the wrong group (a float for U1, a tuple of the wrong length for a
    product), or an invalid group. A charge of the wrong *type* is the subclass
    :class:`ChargeTypeError` (also a :class:`TypeError`)."""


class LegError(SymmetryError):
    """A malformed leg: no sectors, a non-positive sector dimension, a charge given twice,
    a sector that is not on the leg. An argument of the wrong *type* (sectors that are
    not a mapping, a dimension that is not an integer, a part of a fusion that is not a
    leg) is the subclass :class:`LegTypeError` (also a :class:`TypeError`)."""


class SectorMismatchError(SymmetryError):
    """Legs that must match do not: contracted legs with different sectors or the same
    duality, operands of a sum with different legs or charges."""


class SymmetryViolationError(SymmetryError):
    """Data that does not conserve the charge: a block whose charges do not sum to the
    tensor's charge, a dense array with entries outside the allowed blocks, or a sector
    with no states for the requested total charge."""


class ChargeTypeError(ChargeError, StructuredTypeError):
    """A charge of the wrong type for its group: a float, a bool or a string for
    :class:`U1`/:class:`Zn`, an integer or a tuple of the wrong length for a product
    (both a :class:`ChargeError` and a :class:`StructuredTypeError`)."""


class LegTypeError(LegError, StructuredTypeError):
    """A leg argument of the wrong type: sectors that are not a mapping charge ->
    dimension, a dimension that is not an integer (``2.0``, ``True``), a duality that is
    not a bool, a block key that is not a tuple, something that is not a :class:`Leg`
    where one is fused (both a :class:`LegError` and a :class:`StructuredTypeError`)."""


class StructuredValueError(StructuredError, ValueError):
    """An argument of the right type whose value is not allowed: an unknown fallback policy
    (``set_fallback_policy("bogus")``; a policy that is not a string is a
    :class:`StructuredTypeError`), or the truth value of a structured tensor with more
    than one element."""


__all__ += ["StructuredValueError", "ChargeTypeError", "LegTypeError"]
