"""Symbolic zeros: :class:`Zero` tangents and cotangents, never built densely
unless a rule asks (:func:`instantiate`)."""

from __future__ import annotations

from typing import Any

from ._tracer import aval_of
from ._vspace import vspace_of_aval

__all__ = ["Zero", "instantiate"]


class Zero:
    """A symbolic zero tangent or cotangent: no dense zero is ever built for it.

    ``Zero(aval)`` names the aval; ``Zero.like(primal)`` defers computing it.
    """

    __slots__ = ("_aval", "_primal")

    def __init__(self, aval: Any):
        self._aval = aval
        self._primal = None

    @classmethod
    def like(cls, primal: Any) -> "Zero":
        z = cls.__new__(cls)
        z._aval = None
        z._primal = primal
        return z

    @property
    def aval(self) -> Any:
        """The tangent aval; ``None`` when the primal carries no tangent (integers)."""
        if self._aval is None and self._primal is not None:
            a = aval_of(self._primal)
            self._aval = vspace_of_aval(a).tangent_aval(a)
            self._primal = None
        return self._aval

    def instantiate(self) -> Any:
        """A dense zero of this aval; ``None`` when the primal carries no tangent
        (integer or boolean values: there is no tangent space to build a zero in)."""
        a = self.aval
        if a is None:
            return None
        return vspace_of_aval(a).zeros(a)

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


def instantiate(x: Any) -> Any:
    """Turn a symbolic :class:`Zero` into a dense zero; other values pass through."""
    return x.instantiate() if type(x) is Zero else x
