"""Dispatch of tenferro functions on foreign operand types (structured tensors).

A type that defines ``__tenferro_function__`` takes over the tenferro functions it
is passed to, as NumPy's ``__array_function__`` protocol does: when a public
function meets such an operand where it expects a tensor (operand coercion raises
:class:`~tenferro.ForeignOperandError`), it calls
``type(arg).__tenferro_function__(arg, func, types, args, kwargs)`` for each such
type in argument order, with ``func`` the public function the user called, and
returns the first result that is not ``NotImplemented``. tenferro never imports
the types that use this (``tensor4all`` structured tensors implement it).

The check costs nothing on the hot path: dense operands never reach it.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from ._errors import ForeignOperandError, TenferroTypeError

__all__ = ["dispatchable", "dispatch", "has_override"]

F = TypeVar("F", bound=Callable[..., Any])


def has_override(x: Any) -> bool:
    """True when ``x``'s type implements ``__tenferro_function__``."""
    return hasattr(type(x), "__tenferro_function__")


def _overriding(args: tuple, kwargs: dict) -> list[Any]:
    """One representative argument per overriding type, in argument order
    (operand lists such as einsum's are searched one level deep)."""
    seen: dict[type, Any] = {}
    for a in (*args, *kwargs.values()):
        items = a if isinstance(a, (list, tuple)) else (a,)
        for x in items:
            if has_override(x) and type(x) not in seen:
                seen[type(x)] = x
    return list(seen.values())


def dispatch(func: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Hand the call ``func(*args, **kwargs)`` to the operands' ``__tenferro_function__``."""
    reps = _overriding(args, kwargs)
    types = tuple(type(r) for r in reps)
    for r in reps:
        result = type(r).__tenferro_function__(r, func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    names = ", ".join(t.__qualname__ for t in types) or "none"
    raise TenferroTypeError(
        f"{func.__name__}: no implementation for operands of types {names}: each "
        "__tenferro_function__ returned NotImplemented; convert them with .to_dense() first"
    )


def dispatchable(func: F) -> F:
    """Make the public function ``func`` hand foreign operands to their type."""

    @functools.wraps(func)
    def public(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ForeignOperandError:
            return dispatch(public, args, kwargs)

    return public  # type: ignore[return-value]
