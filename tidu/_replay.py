"""Recorded JVP rules: the per-call cost of linearization cut to the work itself.

Reverse mode linearizes: a :class:`~tidu._ad.JVPTrace` runs each primitive's JVP rule
on concrete primals while the tangents are tracers of a :class:`~tidu.graph.GraphTrace`
one level below, so the rule's primal work runs at once and its tangent work is staged.
Written in user-level operations, a rule costs several dispatches per call. For a
primitive that opts in (``Primitive.jvp_replay``: its rule's structure depends only on
the operands' avals, the parameters and which tangents are zero), the rule is traced
once per such signature into a :class:`JVPRecipe`: its primal steps, replayed with the
primitives' ``impl`` on the concrete primals, and its tangent equations, appended to
the tangents' graph directly (no rule call, no shape rule: the avals were recorded).
The values are the ones the rule computes; a rule that cannot be traced abstractly
(it converts a value to a concrete one) is recorded as not replayable and runs as before,
and so do calls with traced primals (nested transformations) or tangents that are not
tracers of one graph trace (forward mode).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._core import Primitive, _state, new_trace
from .graph import Eqn, GraphTrace, GraphTracer, Var
from ._tracer import Tracer, aval_of
from ._vspace import _value_vspaces, vspace_of_aval
from ._zero import Zero

__all__ = ["JVPRecipe", "replaying", "RECIPES"]

_new = object.__new__
_MAX_RECIPES = 4096
_MAX_PER_PRIMITIVE = 256  # signatures recorded per primitive before it stops replaying
_MAX_CONST_SIZE = 4096  # elements of a constant a recipe may keep (larger operands: rules run directly)

#: signature -> recipe, or ``None`` for a signature whose rule is not replayable
RECIPES: dict[tuple, "JVPRecipe | None"] = {}
_recorded: dict[Primitive, int] = {}  # signatures recorded, per primitive


class JVPRecipe:
    """One primitive's JVP rule, traced at one signature.

    ``consts``: values the rule made itself (primal slots ``n_args ...``);
    ``primal_steps``: ``(prim, input slots, params, output slot)`` in order;
    ``tangent_steps``: ``(prim, inputs, params, output aval)``, an input being
    ``(True, k)`` (tangent ``k``: argument tangents first, then step outputs) or
    ``(False, slot, aval)`` (a primal value, a constant of the staged graph);
    ``out_slot``, ``out_aval``: the primal output; ``out_tangent``: its tangent's index, ``None`` for zero;
    ``keep``: the avals named by id in the signature (kept alive, so the ids stay theirs).
    """

    __slots__ = ("consts", "primal_steps", "tangent_steps", "out_slot", "out_aval", "out_tangent", "keep")


def _record(
    prim: Primitive, args: Sequence[Any], key: list, trace: Any, tracer_type: type, params: dict
) -> JVPRecipe | None:
    """Trace ``prim``'s JVP rule at the avals of ``args``, with a tangent for each argument
    that is a ``tracer_type`` of ``trace``; ``None`` when the rule does not trace abstractly,
    its result is not a primal value and a staged tangent, or an aval is not the object the
    signature ``key`` names (avals that are not interned: never the same objects twice)."""
    avals = [a.aval if type(a) is tracer_type and a._trace is trace else aval_of(a) for a in args]
    if any(id(a) != k for a, k in zip(avals, key[1::2])):
        return None
    keep = list(avals)
    recorder = GraphTrace()
    try:
        with new_trace(recorder):
            p_in = [recorder.new_arg(a) for a in avals]
            t_in: list[Any] = []
            for x, a in zip(args, avals):
                if type(x) is tracer_type and x._trace is trace:
                    keep.append(x.tangent.var.aval)
                    t_in.append(recorder.new_arg(x.tangent.var.aval))
                else:
                    t_in.append(Zero(vspace_of_aval(a).tangent_aval(a)))
            out, t_out = prim.jvp_rule(p_in, t_in, **params)
            out_var = recorder.to_var(out)
            t_out_var = None if type(t_out) is Zero else recorder.to_var(t_out)
    except Exception:  # a rule that needs concrete values: it runs as before
        return None
    for c in recorder.consts:  # constants the rule made (a broadcast 1, ...) live as long as the recipe
        a = aval_of(c)
        if vspace_of_aval(a).size(a) > _MAX_CONST_SIZE:
            return None
    n = len(p_in)
    slot: dict[Var, int] = {t.var: i for i, t in enumerate(p_in)}
    for i, v in enumerate(recorder.constvars):
        slot[v] = n + i
    tangent: dict[Var, int] = {}
    for t in t_in:
        if type(t) is GraphTracer:
            tangent[t.var] = len(tangent)
    primal_steps, tangent_steps = [], []
    next_slot = n + len(recorder.consts)
    for eqn in recorder.eqns:
        if len(eqn.outputs) != 1 or eqn.prim.multiple_results:
            return None
        if any(v in tangent for v in eqn.inputs):
            ins = tuple((True, tangent[v]) if v in tangent else (False, slot[v], v.aval) for v in eqn.inputs)
            tangent_steps.append((eqn.prim, ins, eqn.params, eqn.outputs[0].aval))
            tangent[eqn.outputs[0]] = len(tangent)
        else:
            primal_steps.append((eqn.prim, tuple(slot[v] for v in eqn.inputs), eqn.params, next_slot))
            slot[eqn.outputs[0]] = next_slot
            next_slot += 1
    if out_var not in slot or (t_out_var is not None and t_out_var not in tangent):
        return None
    r = _new(JVPRecipe)
    r.consts = list(recorder.consts)
    r.primal_steps = primal_steps
    r.tangent_steps = tangent_steps
    r.out_slot = slot[out_var]
    r.out_aval = out_var.aval
    r.out_tangent = None if t_out_var is None else tangent[t_out_var]
    r.keep = keep
    return r


def replaying(run_rule: Callable[..., Any], tracer_type: type) -> Callable[..., Any]:
    """A trace's ``process_primitive(trace, prim, args, params)``: for a primitive with
    ``jvp_replay``, the ``tracer_type`` (or primal) its recipe gives; ``run_rule`` (the JVP
    rule run directly) when the call is not replayable: some primal is a tracer, or some
    tangent is not a tracer of the one graph trace below, or the rule did not record."""

    def process_primitive(trace: Any, prim: Primitive, args: Sequence[Any], params: dict) -> Any:
        if not prim.jvp_replay:
            return run_rule(trace, prim, args, params)
        key: list[Any] = [prim]  # the signature; avals by id (a recipe keeps them alive)
        values: list[Any] = []  # the primals, then the recipe's constants and steps
        staged: list[Var] = []  # the tangents' variables, then the staged steps' outputs
        graph = None
        for a in args:
            if type(a) is tracer_type and a._trace is trace:
                p, t = a.primal, a.tangent
                if isinstance(p, Tracer) or type(t) is not GraphTracer:
                    return run_rule(trace, prim, args, params)
                if graph is None:
                    graph = t._trace
                elif t._trace is not graph:
                    return run_rule(trace, prim, args, params)
                tv = t.var
                key += (id(a.aval), id(tv.aval))
                values.append(p)
                staged.append(tv)
            elif isinstance(a, Tracer):
                return run_rule(trace, prim, args, params)
            else:
                vs = _value_vspaces.get(type(a))
                if vs is None:
                    return run_rule(trace, prim, args, params)
                key += (id(vs.aval(a)), None)
                values.append(a)
        if graph is None or type(graph) is not GraphTrace or graph._owner is not _state.stack:
            return run_rule(trace, prim, args, params)
        if len(args) == 2:
            key.append(args[0] is args[1])
        if params:
            key.append(tuple(params.items()))
        try:
            recipe = RECIPES[tuple(key)]
        except KeyError:
            n = _recorded.get(prim, 0)
            if n >= _MAX_PER_PRIMITIVE or len(RECIPES) >= _MAX_RECIPES:  # avals that are never the same objects
                return run_rule(trace, prim, args, params)
            _recorded[prim] = n + 1
            recipe = RECIPES[tuple(key)] = _record(prim, args, key, trace, tracer_type, params)
        except TypeError:  # unhashable parameters: run the rule
            return run_rule(trace, prim, args, params)
        if recipe is None:
            return run_rule(trace, prim, args, params)
        values += recipe.consts
        for p, ins, prm, _ in recipe.primal_steps:  # (no list comprehension: a call each on Python 3.11)
            if len(ins) == 2:
                values.append(p.impl(values[ins[0]], values[ins[1]], **prm))
            elif len(ins) == 1:
                values.append(p.impl(values[ins[0]], **prm))
            else:
                values.append(p.impl(*[values[i] for i in ins], **prm))
        out = values[recipe.out_slot]
        if recipe.out_tangent is None:
            return out
        const_ids = graph._const_ids
        for p, ins, prm, out_aval in recipe.tangent_steps:
            in_vars = []
            for ref in ins:
                if ref[0]:
                    in_vars.append(staged[ref[1]])
                else:  # a primal value: a constant of the graph (GraphTrace.to_var, with its recorded aval)
                    x = values[ref[1]]
                    v = const_ids.get(id(x))
                    if v is None:
                        v = const_ids[id(x)] = _new(Var)
                        v.aval = ref[2]
                        graph.constvars.append(v)
                        graph.consts.append(x)
                    in_vars.append(v)
            v = _new(Var)
            v.aval = out_aval
            eqn = _new(Eqn)
            eqn.prim, eqn.inputs, eqn.params, eqn.outputs = p, in_vars, prm, [v]  # (parameters: immutable)
            graph.eqns.append(eqn)
            staged.append(v)
        t = _new(GraphTracer)
        t._trace, t.var = graph, staged[recipe.out_tangent]
        tracer = _new(tracer_type)  # tracer_type(trace, out, t), its aval the recorded one
        tracer._trace, tracer.primal, tracer.tangent, tracer.aval = trace, out, t, recipe.out_aval
        return tracer

    return process_primitive
