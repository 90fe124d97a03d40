"""Typed errors of the structured layer, under one base :class:`StructuredError`
(itself a :class:`tensor4all.Tensor4allError`). Every message names the operation,
the operands and their structures."""
from __future__ import annotations

from .._errors import Tensor4allError

__all__ = [
    "StructuredError", "StructuredShapeError", "TilingError", "SquareBlockError",
    "MixedPlacementError", "DensifyError", "ShapeCombineError", "StructuredTypeError", "StructuredIndexError",
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
