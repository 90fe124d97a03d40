"""Contractions as einsum specs: what the transpose-folding and merging passes
share.

``dot_general`` and ``einsum`` equations are both read as ``(spec, operands)``
(:func:`as_einsum`); a spec is turned back into an ``einsum`` equation with a
cached plan (:func:`emit_einsum`). Labels are the canonical integers of
:class:`tenferro.einsum.Spec`.
"""

from __future__ import annotations

from typing import Any, Sequence

from tidu.graph import Eqn, Var
from tidu.passes import Rewriter

from .._contraction import dot_general_p
from ..einsum._ad import einsum_p
from ..einsum._parse import Spec, relabel
from ..einsum._plan import Plan, get_plan

__all__ = ["CONTRACTIONS", "dot_general_spec", "as_einsum", "permute_term", "emit_einsum", "plan_for"]

CONTRACTIONS = (dot_general_p, einsum_p)


def dot_general_spec(nx: int, ny: int, dimension_numbers: tuple) -> Spec:
    """The einsum spec of ``dot_general`` with these dimension numbers (output
    ``[x free, y free, batch]``)."""
    (xc, yc), (xb, yb) = dimension_numbers
    lx = tuple(range(nx))
    ly: list[Any] = [None] * ny
    for i, j in zip(xc + xb, yc + yb):
        ly[j] = lx[i]
    n = nx
    for j in range(ny):
        if ly[j] is None:
            ly[j] = n
            n += 1
    out = (
        [lx[i] for i in range(nx) if i not in xc and i not in xb]
        + [ly[j] for j in range(ny) if j not in yc and j not in yb]
        + [lx[i] for i in xb]
    )
    return relabel(Spec((lx, tuple(ly)), tuple(out)))


def as_einsum(eqn: Eqn) -> tuple[Spec, list[Var]]:
    """``eqn`` (a ``dot_general`` or ``einsum``) as ``(spec, operands)``."""
    if eqn.prim is einsum_p:
        return eqn.params["plan"].spec, list(eqn.inputs)
    x, y = eqn.inputs
    return dot_general_spec(len(x.aval.shape), len(y.aval.shape), eqn.params["dimension_numbers"]), list(eqn.inputs)


def permute_term(term: tuple, perm: Sequence[int]) -> tuple:
    """The labels of ``x`` when ``transpose(x, perm)`` has labels ``term``:
    axis ``perm[i]`` of ``x`` is axis ``i`` of the transpose."""
    out: list[Any] = [None] * len(term)
    for i, p in enumerate(perm):
        out[p] = term[i]
    return tuple(out)


def plan_for(spec: Spec, operands: Sequence[Var], optimize: Any = "auto") -> Plan:
    """The cached plan of ``spec`` (relabelled to canonical form) for ``operands``."""
    a = operands[0].aval
    return get_plan(relabel(spec), tuple(tuple(v.aval.shape) for v in operands), None, a.dtype, a.placement, optimize)


def emit_einsum(
    rw: Rewriter,
    spec: Spec,
    operands: Sequence[Var],
    outputs: Sequence[Var],
    optimize: Any = "auto",
    plan: Plan | None = None,
) -> list[Var]:
    """Emit ``outputs = einsum(spec)(*operands)`` (the plan cached by signature)."""
    if plan is None:
        plan = plan_for(spec, operands, optimize)
    return rw.emit(einsum_p, list(operands), {"plan": plan}, outputs=outputs)
