"""Chains of contractions merged into one n-ary ``einsum`` (seed 004, section IV).

A contraction (``einsum`` or ``dot_general``) whose operand is the result of
another contraction that nothing else reads (and that is not a result of the
graph) absorbs it: the producer's operands become operands of one einsum over
both networks, planned once with opt_einsum (:data:`MERGE_OPTIMIZE`) over the
whole network. Chains collapse in one sweep (producers come first). An
intermediate with several readers — in a gradient graph, every forward
intermediate the reverse pass reuses — is never merged away, so the work it
shares is not repeated, unless it expands its operands (:data:`EXPANSION`): then
it is merged into each reader and its readers' paths need not form it.

The cost model: the merged network gets two candidate paths, the one that
repeats the pairwise contractions it replaces (:func:`compose_paths`) and
opt_einsum's search over the whole network; the cheaper is kept, in
floating-point operations (opt_einsum's count along the path), then in the
largest intermediate it materializes. A merge whose plan would cost more flops
or a larger intermediate than the contractions it replaces (the producer's
result counting as one) is not done. Groups are found first, on structure
alone (:func:`_groups`), so each merged network is searched once. Merged
einsums have at most :data:`MAX_OPERANDS` operands (path search time). The
merged ``einsum`` is the ordinary ``einsum`` primitive with an n-operand plan:
its evaluation runs the plan's pairwise BLAS steps.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import opt_einsum

from tidu.graph import Eqn, Graph, Var
from tidu.passes import Rewriter, rewrite, use_counts

from .._errors import TenferroMemoryError
from ..einsum._parse import Spec
from ..einsum._paths import path_search_equation
from ..einsum._ad import einsum_p
from ..einsum._plan import Plan
from ._einsum_specs import CONTRACTIONS, as_einsum, emit_einsum, plan_for

__all__ = [
    "merge_contractions",
    "contraction_cost",
    "Cost",
    "merge_specs",
    "MAX_OPERANDS",
    "MERGE_OPTIMIZE",
    "compose_paths",
]

MAX_OPERANDS = 10
"""Merged einsums have at most this many operands: the path search over the
merged network stays a few milliseconds (dynamic programming over an
MPS-sandwich network takes ~10 ms at 10 operands, ~0.5 s at 16)."""

MERGE_OPTIMIZE = "auto-hq"
"""opt_einsum's path optimizer for a merged network (optimal up to 5 operands,
dynamic programming above). The path repeating the pairwise contractions is
always a candidate too, so a merge is never worse than what it replaces."""


class Cost(NamedTuple):
    """What a plan costs: ``flops`` (opt_einsum's count along the plan's path) and
    ``largest`` (elements of the largest intermediate or result it materializes)."""

    flops: int
    largest: int


_COSTS: "weakref.WeakKeyDictionary[Plan, Cost]" = weakref.WeakKeyDictionary()


def contraction_cost(plan: Plan) -> Cost:
    """The :class:`Cost` of ``plan`` along its own path (computed once per plan)."""
    c = _COSTS.get(plan)
    if c is None:
        out = tuple(dict.fromkeys(plan.spec.output))
        eq, shapes = path_search_equation(plan.reduced_terms, out, plan.sizes)
        out_size = 1
        for n in plan.out_shape:
            out_size *= n
        if len(shapes) == 1:
            flops, largest = 0, 0
        else:
            _, info = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=[tuple(s) for s in plan.path])
            flops, largest = int(info.opt_cost), int(info.largest_intermediate)
        c = _COSTS[plan] = Cost(flops, max(largest, out_size))
    return c


def merge_specs(consumer: Spec, k: int, producer: Spec) -> Spec | None:
    """The spec of ``consumer`` with its operand ``k`` replaced by the operands of
    ``producer`` (whose result it is); ``None`` when the producer's output repeats
    a label (a diagonal embedding, not expressible as one einsum)."""
    if len(set(producer.output)) != len(producer.output):
        return None
    fresh = 1 + max([l for t in consumer.inputs for l in t] + list(consumer.output), default=-1)
    term = consumer.inputs[k]
    mapping: dict[int, int] = {}
    for p_label, c_label in zip(producer.output, term):
        mapping[p_label] = c_label
    inner = {l for t in producer.inputs for l in t if l not in mapping}
    for l in sorted(inner):
        mapping[l] = fresh
        fresh += 1
    terms = [tuple(mapping[l] for l in t) for t in producer.inputs]
    inputs = consumer.inputs[:k] + tuple(terms) + consumer.inputs[k + 1 :]
    return Spec(inputs, consumer.output)


def compose_paths(n: int, k: int, path: tuple, m: int, p_path: tuple) -> tuple:
    """The path of a merged network that repeats the two contractions it came from:
    the producer's ``p_path`` over its ``m`` operands (at positions ``k..k+m-1``
    of the merged list) and then the consumer's ``path`` over its ``n`` operands,
    operand ``k`` being the producer's result (opt_einsum's shrinking-list format)."""
    merged: list = [("c", i) for i in range(k)] + [("p", j) for j in range(m)] + [("c", i) for i in range(k + 1, n)]
    out: list[tuple[int, ...]] = []
    fresh = 0

    def run(local: list, steps: tuple) -> list:
        nonlocal fresh
        for step in steps:
            items = [local[s] for s in step]
            out.append(tuple(sorted(merged.index(it) for it in items)))
            for s in sorted(step, reverse=True):
                del local[s]
            for it in items:
                merged.remove(it)
            new = ("t", fresh)
            fresh += 1
            local.append(new)
            merged.append(new)
        return local

    (p_result,) = run([("p", j) for j in range(m)], p_path)
    run([p_result if i == k else ("c", i) for i in range(n)], path)
    return tuple(out)


def _path_of(eqn: Eqn) -> tuple:
    return tuple(eqn.params["plan"].path) if eqn.prim is einsum_p else ((0, 1),)


def _cost_of(eqn: Eqn) -> Cost:
    if eqn.prim is einsum_p:
        return contraction_cost(eqn.params["plan"])
    spec, ops = as_einsum(eqn)
    return contraction_cost(plan_for(spec, ops))


class _Group(NamedTuple):
    """A contraction with the single-reader contractions it absorbs: the merged
    spec and operands, the path repeating the pairwise contractions, and their
    summed cost."""

    spec: Spec
    ops: list
    path: tuple
    flops: int
    largest: int


def _mergeable(v: Var, producer: dict, uses: dict, expanding: set) -> bool:
    """Whether ``v`` is the result of a contraction read once (by one operand slot), or of an
    expanding one (``expanding``: see :func:`_expanding`)."""
    p = producer.get(v)
    return p is not None and p.prim in CONTRACTIONS and (uses.get(v, 0) == 1 or v in expanding)


EXPANSION = 4
"""A contraction whose result has at least this many times the elements of its operands
together, read only by contractions (one operand slot each), is merged into each of its
readers, its work repeated per reader, rather than kept as an intermediate that is written
to memory and read back. Its arithmetic is small by construction (few summed labels: an
expanding product), and the merged readers' paths may never form it: in the per-example
gradients of an MPS classifier (``benchmarks/vmap.py``), ``m = einsum("p,apb->ab", v, A)``
batched over 128 examples is 42x its operands; the environment is contracted with ``A``
first (one matrix product over all examples), the 16 x 16 x 128 ``m`` of every site never
formed, and the case ran about 10% faster (medians of four paired runs against JAX, 1.83x
to 1.65x)."""


def _expanding(graph: Graph, producer: dict, uses: dict) -> set:
    """The results of expanding contractions (:data:`EXPANSION`) read at least twice, only by
    contractions and once per reader, that are not results of the graph."""
    outs = {v for v in graph.outvars if type(v) is Var}
    readers: dict[Var, int] = {}
    for e in graph.eqns:
        if e.prim in CONTRACTIONS:
            for v in set(e.inputs):
                if e.inputs.count(v) == 1:
                    readers[v] = readers.get(v, 0) + 1
    found = set()
    for v, n in readers.items():
        p = producer.get(v)
        if p is None or p.prim not in CONTRACTIONS or v in outs or n != uses.get(v, 0) or n < 2:
            continue
        if v.aval.size >= EXPANSION * sum(u.aval.size for u in p.inputs):
            found.add(v)
    return found


def _groups(graph: Graph, max_operands: int) -> dict[Eqn, _Group]:
    """Per contraction that absorbs others, its :class:`_Group` (structure only:
    no path search). Equations absorbed into a reader are left out."""
    uses = use_counts(graph)
    producer: dict[Var, Eqn] = {o: e for e in graph.eqns for o in e.outputs}
    expanding = _expanding(graph, producer, uses)
    group: dict[Eqn, _Group] = {}
    absorbed: set[Eqn] = set()
    for eqn in graph.eqns:
        if eqn.prim not in CONTRACTIONS or not any(_mergeable(v, producer, uses, expanding) for v in eqn.inputs):
            continue
        spec, ops = as_einsum(eqn)
        g = _Group(spec, ops, _path_of(eqn), *_cost_of(eqn))
        merged = False
        k = 0
        while k < len(g.ops):
            v = g.ops[k]
            if not _mergeable(v, producer, uses, expanding):
                k += 1
                continue
            p = producer[v]
            pg = group.get(p)
            if pg is None:
                p_spec, p_ops = as_einsum(p)
                pg = _Group(p_spec, p_ops, _path_of(p), *_cost_of(p))
            new_spec = merge_specs(g.spec, k, pg.spec)
            if new_spec is None or len(g.ops) - 1 + len(pg.ops) > max_operands:
                k += 1
                continue
            g = _Group(
                new_spec,
                g.ops[:k] + pg.ops + g.ops[k + 1 :],
                compose_paths(len(g.ops), k, g.path, len(pg.ops), pg.path),
                g.flops + pg.flops,
                max(g.largest, pg.largest),
            )
            if v not in expanding:  # an expanding producer stays while another reader keeps it
                absorbed.add(p)
            merged = True
        if merged:
            group[eqn] = g
    return {e: g for e, g in group.items() if e not in absorbed}


def merge_contractions(graph: Graph, max_operands: int = MAX_OPERANDS) -> Graph:
    """Merge chains of single-reader contractions (see the module docstring);
    returns ``graph`` itself when there is none to merge."""
    groups = _groups(graph, max_operands)
    if not groups:
        return graph

    def rule(eqn: Eqn, rw: Rewriter) -> list[Var] | None:
        g = groups.get(eqn)
        if g is None:
            return None
        # the merged network: its own path repeats the pairwise contractions; opt_einsum's
        # path over the whole network is taken when cheaper
        plans = []
        for optimize in (g.path, MERGE_OPTIMIZE):
            try:
                plans.append(plan_for(g.spec, g.ops, optimize))
            except TenferroMemoryError:  # an intermediate that does not fit: that path is out
                pass
        if not plans:
            return None
        plan = min(plans, key=lambda q: tuple(contraction_cost(q)))
        cost = contraction_cost(plan)
        if cost.flops > g.flops or cost.largest > g.largest:  # never worse than the contractions it replaces
            return None
        return emit_einsum(rw, g.spec, g.ops, eqn.outputs, plan=plan)

    return rewrite(graph, rule, "merge_contractions")
