"""The primitive table: :func:`primitive` creates a tidu primitive and records
it, with its family, in :data:`PRIMITIVES` (the source of :func:`support_manifest`);
:func:`check_shapes` runs a primitive's shape rule on operands (eager paths skip
abstract evaluation)."""

from __future__ import annotations

from typing import Any

from tidu import Primitive

from ._aval import aval_of_operand
from ._errors import TenferroTypeError

__all__ = ["PRIMITIVES", "primitive", "support_manifest", "check_shapes", "nonlinear_error"]


PRIMITIVES: dict[str, tuple[Primitive, str]] = {}


def primitive(name: str, family: str, *, multiple_results: bool = False) -> Primitive:
    """Create and record a tenferro primitive (registered once, by name)."""
    if name in PRIMITIVES:
        raise RuntimeError(f"primitive {name!r} registered twice")
    p = Primitive(name, multiple_results=multiple_results)
    PRIMITIVES[name] = (p, family)
    return p


def support_manifest() -> dict[str, dict[str, str]]:
    """``{name: {"family": ..., "support": ...}}`` for every tenferro primitive.

    ``support`` is one of ``linear``, ``differentiable``, ``zero-derivative``,
    ``not differentiable`` (from the primitive's own rules).
    """
    return {n: {"family": fam, "support": p.support} for n, (p, fam) in PRIMITIVES.items()}


def check_shapes(p: Primitive, *xs: Any, **params: Any) -> None:
    """Run ``p``'s shape rule on the operands' avals.

    Eager ``bind`` calls the impl directly and never the shape rule, so user-level
    functions call this before binding: one set of checks (the rule's) and one
    message, eager or traced. Cheap: an aval lookup per operand and the rule itself.
    """
    p.abstract_eval(*[aval_of_operand(x) for x in xs], **params)


def nonlinear_error(op: str, detail: str) -> TenferroTypeError:
    """The error a transpose rule raises when more operands are linear than the op is
    linear in (``tidu.linear_transpose`` of a nonlinear function such as ``x * x``)."""
    return TenferroTypeError(
        f"{op}: cannot transpose: {detail}; the function given to linear_transpose is not linear "
        "in its inputs (e.g. x * x)"
    )
