"""Layouts of contraction intermediates chosen for the whole graph.

An ``einsum`` whose result only other ``einsum``\\ s read may produce that result
with its axes in any order: the readers absorb a permutation by relabelling
their operand (as :mod:`._transpose_fold` does for an explicit ``transpose``).
Eagerly, each einsum writes its result in the order its spec names, which
often costs a permuting copy at the end of the producer's plan and another
when the reader groups the axes for its BLAS call. This pass picks, per
intermediate, the axis order that minimises the bytes the producer's and the
readers' plans copy (candidates: the producer's natural order, the orders each
reader can view without copying, and the current one), greedily in program
order. Results are equal to rounding: the same products of the same numbers,
but a product may now run transposed (``C^T = B^T A^T``) and BLAS may sum in
another order.
"""

from __future__ import annotations

import math
from typing import Any

from tidu.graph import Eqn, Graph, Var

from ..einsum._ad import einsum_p
from ..einsum._parse import Spec
from ..einsum._plan import FINAL, MOVE, PAIR, SINGLE, Plan
from ._einsum_specs import plan_for

__all__ = ["choose_layouts", "copied_elements"]


def copied_elements(plan: Plan) -> int:
    """Elements a plan copies to rearrange axes: operands of pair steps that
    cannot be viewed as matrices, and the final permutation (estimate: sizes
    after one-operand steps are taken as before them)."""
    sizes = [math.prod(s) for s in plan.shapes]
    total = 0
    for step in plan.steps:
        kind = step[0]
        if kind == PAIR:
            i, j = step[1], step[2]
            pa, pb, out_shape = step[5], step[8], step[11]
            if pa is not None:
                total += sizes[i]
            if pb is not None:
                total += sizes[j]
            sizes.pop(j)
            sizes.pop(i)
            sizes.append(math.prod(out_shape))
        elif kind == MOVE:
            sizes.append(sizes.pop(step[1]))
        elif kind == SINGLE and step[4]:
            sizes.append(sizes.pop(step[1]))
        elif kind == FINAL and step[1] is not None and step[2] is None:
            total += math.prod(step[3])
    return total


def _natural(plan: Plan) -> tuple | None:
    """The output order the plan produces without a final permutation."""
    final = plan.steps[-1]
    perm = final[1]
    if final[0] != FINAL or perm is None or final[2] is not None:
        return None
    out = plan.spec.output
    natural: list[Any] = [None] * len(out)
    for i, p in enumerate(perm):
        natural[p] = out[i]
    return tuple(natural)


def _reader_orders(reader: Plan, k: int, labels: tuple) -> list[tuple]:
    """Orders of operand ``k`` of a two-operand ``reader`` (in the reader's labels)
    that the reader groups for its BLAS call without copying."""
    terms = reader.spec.inputs
    if len(terms) != 2:
        return []
    mine, other = terms[k], terms[1 - k]
    out = set(reader.spec.output)
    free = [l for l in mine if l not in other]
    shared = [l for l in mine if l in other]
    contr = [l for l in shared if l not in out]
    batch = [l for l in shared if l in out]
    return [tuple(free + contr + batch), tuple(contr + free + batch)]


class _Graph:
    """The mutable working copy: equations by position, readers of each variable."""

    def __init__(self, graph: Graph):
        self.eqns = list(graph.eqns)
        self.outputs = {v for v in graph.outvars if type(v) is Var}
        self.readers: dict[Var, list[int]] = {}
        for n, e in enumerate(self.eqns):
            for v in dict.fromkeys(e.inputs):
                self.readers.setdefault(v, []).append(n)


def _reader_plan(e: Eqn, old: Var, new: Var, perm: tuple) -> Plan:
    plan = e.params["plan"]
    terms = list(plan.spec.inputs)
    ops = list(e.inputs)
    for k, v in enumerate(e.inputs):
        if v is old:
            terms[k] = tuple(terms[k][p] for p in perm)
            ops[k] = new
    return plan_for(Spec(tuple(terms), plan.spec.output), ops, plan.optimize)


def choose_layouts(graph: Graph) -> Graph:
    """Reorder the axes of einsum intermediates read only by einsums where that
    saves copies (returns ``graph`` itself when nothing improves)."""
    g = _Graph(graph)
    changed = False
    for n, e in enumerate(g.eqns):
        if e.prim is not einsum_p:
            continue
        out = e.outputs[0]
        plan = e.params["plan"]
        spec = plan.spec
        readers = g.readers.get(out, [])
        if (
            out in g.outputs
            or not readers
            or len(set(spec.output)) != len(spec.output)
            or any(g.eqns[r].prim is not einsum_p for r in readers)
        ):
            continue
        current = copied_elements(plan) + sum(copied_elements(g.eqns[r].params["plan"]) for r in readers)
        if current == 0:
            continue
        candidates = []
        nat = _natural(plan)
        if nat is not None:
            candidates.append(nat)
        for r in readers:
            rp = g.eqns[r].params["plan"]
            for k, v in enumerate(g.eqns[r].inputs):
                if v is out:
                    term = rp.spec.inputs[k]
                    for order in _reader_orders(rp, k, term):
                        # reader labels -> producer output labels, position by position
                        candidates.append(tuple(spec.output[term.index(l)] for l in order))
        best = None
        for order in dict.fromkeys(candidates):
            if order == spec.output or sorted(order) != sorted(spec.output):
                continue
            perm = tuple(spec.output.index(l) for l in order)
            new = Var(out.aval.update(shape=tuple(out.aval.shape[p] for p in perm)))
            p_plan = plan_for(Spec(spec.inputs, order), e.inputs, plan.optimize)
            r_plans = [_reader_plan(g.eqns[r], out, new, perm) for r in readers]
            cost = copied_elements(p_plan) + sum(copied_elements(p) for p in r_plans)
            if cost < current and (best is None or cost < best[0]):
                best = (cost, new, p_plan, r_plans)
        if best is None:
            continue
        _, new, p_plan, r_plans = best
        g.eqns[n] = Eqn(einsum_p, list(e.inputs), {"plan": p_plan}, [new])
        for r, rp in zip(readers, r_plans):
            re = g.eqns[r]
            g.eqns[r] = Eqn(einsum_p, [new if v is out else v for v in re.inputs], {"plan": rp}, list(re.outputs))
        g.readers[new] = g.readers.pop(out)
        changed = True
    if not changed:
        return graph
    return Graph(
        list(graph.invars),
        list(graph.constvars),
        list(graph.consts),
        g.eqns,
        list(graph.outvars),
        graph.in_tree,
        graph.out_tree,
    )
