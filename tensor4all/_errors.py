"""Typed errors of tensor4all: one base class, one subclass per kind of bad input.

Every error names what was wrong and what was expected. The subclasses also derive
from the matching built-in exception (``ValueError``, ``IndexError``, ``KeyError``)
so generic handlers keep working.
"""
from __future__ import annotations

__all__ = [
    "Tensor4allError",
    "UnknownOperatorError",
    "UnknownLocalSpaceError",
    "SiteOutOfRangeError",
    "DimensionMismatchError",
    "BondDimensionError",
    "EmptyOpSumError",
    "OpSumTermError",
    "NonHermitianError",
    "NotDifferentiableError",
]


class Tensor4allError(Exception):
    """Base class of every error raised by tensor4all."""


class UnknownOperatorError(Tensor4allError, KeyError):
    """An operator name that the local space does not define."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class UnknownLocalSpaceError(Tensor4allError, KeyError):
    """A local-space name that tensor4all does not know."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SiteOutOfRangeError(Tensor4allError, IndexError):
    """A site or bond index outside the chain."""


class DimensionMismatchError(Tensor4allError, ValueError):
    """Shapes that do not fit together (bond or physical dimensions)."""


class BondDimensionError(Tensor4allError, ValueError):
    """A bond dimension that is not a positive integer."""


class EmptyOpSumError(Tensor4allError, ValueError):
    """An OpSum without terms where an operator is needed."""


class OpSumTermError(Tensor4allError, ValueError):
    """A malformed OpSum term (not ``(coef, name, site, name, site, ...)``)."""


class NonHermitianError(Tensor4allError, ValueError):
    """A Hamiltonian that is not Hermitian where one is required (dmrg)."""


class NotDifferentiableError(Tensor4allError, TypeError):
    """An operation that tensor4all does not differentiate was given traced values."""
