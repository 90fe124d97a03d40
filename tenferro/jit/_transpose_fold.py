"""Transposes folded into contractions (seed 004, section I: "TransposeFolding").

* A ``transpose`` feeding an ``einsum`` is absorbed by relabelling that operand
  (the einsum reads the untransposed value; its plan chooses the layout).
* A ``transpose`` feeding a ``dot_general`` is absorbed into the dimension numbers
  when the operand's free axes keep their order (the result is unchanged), and
  otherwise the ``dot_general`` becomes an ``einsum``.
* A ``transpose`` of a contraction's result that nothing else reads becomes part
  of the contraction: an ``einsum`` whose output labels are permuted (a
  ``dot_general`` with a transposed output becomes an ``einsum``).

The absorbed ``transpose`` stays only if something else reads it (dead-code
elimination removes it otherwise), so no ``transpose`` is left feeding a
contraction.
"""

from __future__ import annotations

from typing import Any

from tidu.graph import Eqn, Graph, Var
from tidu.passes import Rewriter, rewrite

from .._contraction import dot_general_p
from .._structural import transpose_p
from ..einsum._ad import einsum_p
from ..einsum._parse import Spec
from ._einsum_specs import CONTRACTIONS, as_einsum, emit_einsum, permute_term

__all__ = ["fold_transposes"]


def _source(rw: Rewriter, v: Var) -> tuple[Var, tuple] | None:
    p = rw.producer(v)
    if p is None or p.prim is not transpose_p:
        return None
    return p.inputs[0], tuple(p.params["permutation"])


def _dot_general_dn(eqn: Eqn, rw: Rewriter) -> tuple[list[Var], tuple] | None:
    """New operands and dimension numbers of a ``dot_general`` reading its
    transposed operands directly, when its result keeps the same axis order."""
    (xc, yc), (xb, yb) = eqn.params["dimension_numbers"]
    dims = [[xc, xb], [yc, yb]]
    ops = list(eqn.inputs)
    changed = False
    for k, v in enumerate(eqn.inputs):
        s = _source(rw, v)
        if s is None:
            continue
        src, perm = s
        c, b = dims[k]
        free = [perm[i] for i in range(len(perm)) if i not in c and i not in b]
        if free != sorted(free):
            return None
        dims[k] = [tuple(perm[i] for i in c), tuple(perm[i] for i in b)]
        ops[k] = src
        changed = True
    if not changed:
        return None
    (xc, xb), (yc, yb) = dims
    return ops, ((tuple(xc), tuple(yc)), (tuple(xb), tuple(yb)))


def _absorb_operands(eqn: Eqn, rw: Rewriter) -> list[Var] | None:
    if all(_source(rw, v) is None for v in eqn.inputs):
        return None
    if eqn.prim is dot_general_p:
        r = _dot_general_dn(eqn, rw)
        if r is not None:
            ops, dn = r
            return rw.emit(dot_general_p, ops, {"dimension_numbers": dn}, outputs=eqn.outputs)
    spec, ops = as_einsum(eqn)
    terms = list(spec.inputs)
    changed = False
    for k, v in enumerate(ops):
        s = _source(rw, v)
        if s is not None:
            ops[k], perm = s
            terms[k] = permute_term(terms[k], perm)
            changed = True
    if not changed:
        return None
    return emit_einsum(rw, Spec(tuple(terms), spec.output), ops, eqn.outputs, _optimize_of(eqn))


def _optimize_of(eqn: Eqn) -> Any:
    """The path choice to keep: an einsum's own (an explicit path stays valid, the
    operands being the same), ``"auto"`` for a ``dot_general``."""
    return eqn.params["plan"].optimize if eqn.prim is einsum_p else "auto"


def _absorb_output(eqn: Eqn, rw: Rewriter) -> list[Var] | None:
    (x,) = eqn.inputs
    p = rw.producer(x)
    if p is None or p.prim not in CONTRACTIONS or rw.uses.get(x, 0) != 1:
        return None
    perm = eqn.params["permutation"]
    spec, ops = as_einsum(p)
    out = tuple(spec.output[i] for i in perm)
    return emit_einsum(rw, Spec(spec.inputs, out), ops, eqn.outputs, _optimize_of(p))


def fold_transposes(graph: Graph) -> Graph:
    """Fold transposes into the operands and results of contractions (see the
    module docstring); returns ``graph`` itself when there is none to fold."""

    def rule(eqn: Eqn, rw: Rewriter) -> list[Var] | None:
        if eqn.prim in CONTRACTIONS:
            return _absorb_operands(eqn, rw)
        if eqn.prim is transpose_p:
            return _absorb_output(eqn, rw)
        return None

    return rewrite(graph, rule, "fold_transposes")
