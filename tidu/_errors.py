"""Exceptions raised by tidu. Every error derives from :class:`TiduError`."""

from __future__ import annotations

__all__ = [
    "TiduError",
    "NonDifferentiableError",
    "TreeStructureError",
    "TangentMismatchError",
    "NonScalarOutputError",
    "ComplexOutputError",
    "CustomRuleError",
    "TracerConversionError",
    "UnexpectedTracerError",
    "UnregisteredTypeError",
    "UnbatchableError",
    "MissingRuleError",
    "RuleError",
    "InvalidArgumentError",
    "AvalMismatchError",
]


class TiduError(Exception):
    """Base class of every error raised by tidu."""


class NonDifferentiableError(TiduError, TypeError):
    """A primitive without a derivative was differentiated."""


class TreeStructureError(TiduError, ValueError):
    """Two pytrees that must have the same structure do not."""


class TangentMismatchError(TiduError, ValueError):
    """A tangent or cotangent has the wrong shape, dtype or kind for its primal."""


class NonScalarOutputError(TiduError, TypeError):
    """``grad`` of a function whose output is not a scalar."""


class ComplexOutputError(TiduError, TypeError):
    """``grad`` of a complex output without ``holomorphic=True`` (or vice versa)."""


class CustomRuleError(TiduError, TypeError):
    """A ``custom_jvp`` / ``custom_vjp`` rule returned the wrong structure."""


class TracerConversionError(TiduError, TypeError):
    """A traced value was converted to a concrete Python or NumPy value."""


class UnexpectedTracerError(TiduError, RuntimeError):
    """A tracer escaped the transformation that created it and was used later."""


class UnregisteredTypeError(TiduError, TypeError):
    """A value whose type has no registered vector space reached a transform."""


class UnbatchableError(TiduError, TypeError):
    """:func:`tidu.vmap` got a value it cannot batch: an argument mapped over an axis whose type
    is not registered (or has no batching methods), or an output that is neither a value of a
    registered type nor a number; the message names the argument or output and the fix."""


class MissingRuleError(TiduError, NotImplementedError):
    """A primitive lacks the rule a transform needs (impl, abstract, jvp, transpose)."""


class RuleError(TiduError, TypeError):
    """A primitive's rule returned a result inconsistent with its arguments
    (reported when :func:`tidu.debug_checks` is on)."""


class InvalidArgumentError(TiduError, ValueError, TypeError):
    """An argument of a tidu function has the wrong type or value (``argnums``,
    a tolerance, a pytree node type). Also a ``ValueError`` and a ``TypeError``, so
    generic ``except`` clauses of either kind keep working."""


class AvalMismatchError(InvalidArgumentError):
    """A :class:`tidu.Graph` was called with an argument whose abstract value (shape, dtype)
    differs from the one it was traced for (a graph is specialised to its input avals). An
    :class:`InvalidArgumentError`, so also a ``ValueError`` and a ``TypeError``."""
