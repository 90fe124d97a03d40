"""Typed errors of ``tenferro.einsum``.

Each points at what is wrong: a subscripts error carries the character
``position`` (and the message shows it with a caret), an operand error carries
the ``operand`` index.
"""

from __future__ import annotations

from .._errors import ShapeError, TenferroValueError

__all__ = ["EinsumSubscriptError", "EinsumShapeError", "EinsumOperandError", "EinsumOptimizeError"]


class EinsumSubscriptError(TenferroValueError):
    """Malformed subscripts, or an output label that no input has."""

    def __init__(self, message: str, subscripts: str | None = None, position: int | None = None):
        self.subscripts = subscripts
        self.position = position
        if subscripts is not None and position is not None:
            message = f"{message}\n    {subscripts}\n    {' ' * position}^"
        super().__init__(message)


class EinsumShapeError(ShapeError):
    """An operand's rank does not match its subscripts, or one label has two sizes."""

    def __init__(self, message: str, operand: int | None = None):
        self.operand = operand
        super().__init__(message)


class EinsumOperandError(TenferroValueError):
    """The number of operands does not match the number of input terms."""


class EinsumOptimizeError(TenferroValueError):
    """An unknown ``optimize`` value or an invalid explicit contraction path."""
