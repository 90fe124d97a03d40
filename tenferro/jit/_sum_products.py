"""Sums of like contractions fused into one contraction over stacked operands.

Reverse mode through a loop accumulates the cotangent of a reused weight as a
chain of adds: ``dW = p_1 ⊗ q_1 + p_2 ⊗ q_2 + ...`` (300 outer products and 300
adds for 300 steps of ``x <- tanh(W @ x) + x``). When K ≥ :data:`MIN_TERMS`
terms of such a sum are ``dot_general``\\ s with the same dimension numbers and
operand types, each read only by the sum, this pass stacks their operands along
a new last axis and contracts it too:
``sum_k dot_general(p_k, q_k) = dot_general(stack(p), stack(q))`` with that axis
added to the contracted dimensions: one BLAS call and two stacking copies
instead of K calls and K - 1 adds. Equal to rounding (BLAS sums over k in its
own order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tidu import Primitive
from tidu.graph import Eqn, Graph, Var
from tidu.passes import use_counts

from .._aval import fortran, xp_of
from .._capture_blas import concatenate_arrays
from .._contraction import dot_general_p
from .._elementwise import add_p
from .._tensor import Tensor

__all__ = ["fuse_sums_of_products", "stack_p", "MIN_TERMS"]

MIN_TERMS = 3
"""Fewest like terms worth fusing."""

stack_p = Primitive("jit_stack")
"""``stack_p(*xs)``: the operands (one type) stacked along a new last axis,
column-major. Compiled mode only (graphs after differentiation): no AD rules."""


def stack_arrays(*arrays: Any) -> Any:
    a0 = arrays[0]
    xp = np if type(a0) is np.ndarray else xp_of(a0)
    if a0.ndim <= 1:  # (K, n) row-major = (n, K) column-major: no copy
        return concatenate_arrays(xp, [a.reshape(1, -1) for a in arrays], axis=0).reshape(len(arrays), *a0.shape).T
    flat = concatenate_arrays(xp, [a.reshape(-1, order="F") for a in arrays])
    return fortran(flat.reshape(a0.shape + (len(arrays),), order="F"))


@stack_p.def_impl
def _stack_impl(*xs: Tensor) -> Tensor:
    return Tensor._wrap(stack_arrays(*[x._data for x in xs]))


@stack_p.def_abstract_eval
def _stack_aval(*avals: Any) -> Any:
    a = avals[0]
    return a.update(shape=tuple(a.shape) + (len(avals),))


stack_p.def_nondiff("a compiled-mode primitive: graphs reach it already differentiated", zero_tangent=False)


def _leaves(v: Var, producer: dict, uses: dict, outputs: set, out: list, adds: list) -> None:
    """The terms of the sum ``v`` through adds read only by this sum, in the order of a
    depth-first walk of the adds' inputs (an explicit stack: a chain of a thousand adds, as the
    gradient of a weight shared by an RNN unrolled over a thousand steps, passed Python's
    recursion limit)."""
    stack = [v]
    while stack:
        x = stack.pop()
        e = producer.get(x)
        if e is not None and e.prim is add_p and uses.get(x, 0) == 1 and x not in outputs:
            adds.append(e)
            stack.extend(reversed(e.inputs))
        else:
            out.append(x)


def fuse_sums_of_products(graph: Graph) -> Graph:
    """Fuse sums of K ≥ :data:`MIN_TERMS` like ``dot_general`` terms (returns
    ``graph`` itself when there is none)."""
    uses = use_counts(graph)
    producer = {o: e for e in graph.eqns for o in e.outputs}
    outputs = {v for v in graph.outvars if type(v) is Var}
    read_by_add = {v for e in graph.eqns if e.prim is add_p for v in e.inputs}
    replace: dict[int, list[Eqn]] = {}
    removed: set[int] = set()
    position = {id(e): n for n, e in enumerate(graph.eqns)}
    for n in range(len(graph.eqns) - 1, -1, -1):
        e = graph.eqns[n]
        if e.prim is not add_p or n in removed:
            continue
        out = e.outputs[0]
        if out in read_by_add and uses.get(out, 0) == 1 and out not in outputs:
            continue  # an inner add: its root handles it
        terms: list[Var] = []
        adds: list[Eqn] = []
        for x in e.inputs:
            _leaves(x, producer, uses, outputs, terms, adds)
        groups: dict[Any, list[Eqn]] = {}
        for t in terms:
            p = producer.get(t)
            if p is not None and p.prim is dot_general_p and uses.get(t, 0) == 1 and t not in outputs:
                key = (p.params["dimension_numbers"], p.inputs[0].aval, p.inputs[1].aval)
                groups.setdefault(key, []).append(p)
        fused = [g for g in groups.values() if len(g) >= MIN_TERMS]
        if not fused:
            continue
        new_eqns: list[Eqn] = []
        parts: list[Var] = []
        done: set[int] = set()
        for group in fused:
            (xc, yc), (xb, yb) = group[0].params["dimension_numbers"]
            nx, ny = len(group[0].inputs[0].aval.shape), len(group[0].inputs[1].aval.shape)
            stacked = []
            for side in (0, 1):
                ops = [p.inputs[side] for p in group]
                sv = Var(_stack_aval(*[v.aval for v in ops]))
                new_eqns.append(Eqn(stack_p, ops, {}, [sv]))
                stacked.append(sv)
            dn = ((tuple(xc) + (nx,), tuple(yc) + (ny,)), (tuple(xb), tuple(yb)))
            r = Var(group[0].outputs[0].aval)
            new_eqns.append(Eqn(dot_general_p, stacked, {"dimension_numbers": dn}, [r]))
            parts.append(r)
            done.update(id(p.outputs[0]) for p in group)
            removed.update(position[id(p)] for p in group)
        parts += [t for t in terms if id(t) not in done]
        acc = parts[0]
        for k, t in enumerate(parts[1:]):
            dst = out if k == len(parts) - 2 else Var(out.aval)
            new_eqns.append(Eqn(add_p, [acc, t], {}, [dst]))
            acc = dst
        if len(parts) == 1:  # everything fused into one product: it computes the sum itself
            new_eqns[-1] = Eqn(dot_general_p, new_eqns[-1].inputs, new_eqns[-1].params, [out])
        removed.update(position[id(a)] for a in adds)
        replace[n] = new_eqns
    if not replace:
        return graph
    eqns: list[Eqn] = []
    for n, e in enumerate(graph.eqns):
        if n in replace:
            eqns.extend(replace[n])
        elif n not in removed:
            eqns.append(e)
    return Graph(
        list(graph.invars),
        list(graph.constvars),
        list(graph.consts),
        eqns,
        list(graph.outvars),
        graph.in_tree,
        graph.out_tree,
    )
