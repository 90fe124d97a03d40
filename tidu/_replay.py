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

A recipe runs as one generated straight-line function (:func:`_compile_recipe`). The
tangent equations it appends are :class:`StepEqn`: each points at its recipe step, which
keeps that step's transpose rule, recorded at its first transposition for a primitive
with ``Primitive.transpose_replay`` (:mod:`tidu._replay_transpose`): the backward pass
then runs the rule's steps with the primitives' ``impl`` on the concrete cotangent and
residuals, the values the rule computes, without calling it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._core import Primitive, new_trace
from .graph import Eqn, GraphTrace, GraphTracer, Var
from ._tracer import Tracer, aval_of
from ._vspace import _value_vspaces, vspace_of_aval
from ._zero import Zero

__all__ = ["JVPRecipe", "StepEqn", "TangentStep", "replaying", "straight_line", "RECIPES"]

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
    ``tangent_steps``: ``(prim, inputs, params, output aval, step)``, an input being
    ``(True, k)`` (tangent ``k``: argument tangents first, then step outputs) or
    ``(False, slot, aval)`` (a primal value, a constant of the staged graph), ``step`` the
    :class:`TangentStep` its equations point at;
    ``out_slot``, ``out_aval``: the primal output; ``out_tangent``: its tangent's index, ``None`` for zero;
    ``keep``: the avals named by id in the signature (kept alive, so the ids stay theirs);
    ``run``: the recipe as one straight-line function (:func:`_compile_recipe`).
    """

    __slots__ = ("consts", "primal_steps", "tangent_steps", "out_slot", "out_aval", "out_tangent", "keep", "run")


class StepEqn(Eqn):
    """A tangent equation appended by a recipe: ``step`` is the recipe step it came from
    (the same for every equation of that step, whose avals and parameters it shares)."""

    __slots__ = ("step",)


_UNRECORDED = object()


class TangentStep:
    """One tangent step of a recipe: ``transpose`` is its transpose rule, recorded at the
    first transposition (:func:`tidu._replay_transpose.compile_transpose`; ``None``: not
    replayable)."""

    __slots__ = ("transpose",)

    def __init__(self) -> None:
        self.transpose: Any = _UNRECORDED


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
                    keep.append(x.tangent._var.aval)
                    t_in.append(recorder.new_arg(x.tangent._var.aval))
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
    slot: dict[Var, int] = {t._var: i for i, t in enumerate(p_in)}
    for i, v in enumerate(recorder.constvars):
        slot[v] = n + i
    tangent: dict[Var, int] = {}
    for t in t_in:
        if type(t) is GraphTracer:
            tangent[t._var] = len(tangent)
    primal_steps, tangent_steps = [], []
    next_slot = n + len(recorder.consts)
    for eqn in recorder.eqns:
        if len(eqn.outputs) != 1 or eqn.prim.multiple_results:
            return None
        if any(v in tangent for v in eqn.inputs):
            ins = tuple((True, tangent[v]) if v in tangent else (False, slot[v], v.aval) for v in eqn.inputs)
            tangent_steps.append((eqn.prim, ins, eqn.params, eqn.outputs[0].aval, TangentStep()))
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
    r.run = _compile_recipe(r, n, sum(type(t) is GraphTracer for t in t_in), tracer_type)
    return r


def straight_line(name: str, params: str, body: list[str], namespace: dict[str, Any]) -> Callable[..., Any]:
    """The function ``def name(params): body`` compiled with the globals ``namespace``
    (a recorded rule as straight-line code: no loop, no indexing by slot, no dispatch)."""
    source = f"def {name}({params}):\n" + "\n".join("    " + line for line in body) + "\n"
    exec(compile(source, f"<tidu replay {name}>", "exec"), namespace)
    fn = namespace[name]
    fn.__source__ = source  # (for reading: what the replay runs)
    return fn


def _compile_recipe(r: JVPRecipe, n_args: int, n_in: int, tracer_type: type) -> Callable[..., Any]:
    """``r`` (``n_args`` arguments, ``n_in`` of them with a tangent) as
    ``run(trace, graph, primals, tangent_vars)``: the primal steps called with
    the primitives' ``impl``, the tangent equations appended to ``graph`` (constants
    deduplicated by identity, as ``GraphTrace.to_var``), the output tracer returned; the
    same calls, in the same order, as the loop over the recipe they replace."""
    ns: dict[str, Any] = {"_new": _new, "Var": Var, "StepEqn": StepEqn, "GraphTracer": GraphTracer, "OUT": tracer_type}
    name = {i: f"p{i}" for i in range(n_args)}
    body = [f"p{i} = primals[{i}]" for i in range(n_args)]
    for j, c in enumerate(r.consts):
        ns[f"K{j}"] = c
        name[n_args + j] = f"K{j}"
    for m, (p, ins, prm, out) in enumerate(r.primal_steps):
        ns[f"P{m}"], ns[f"M{m}"] = p.impl, prm
        name[out] = f"v{out}"
        kw = f", **M{m}" if prm else ""
        body.append(f"v{out} = P{m}({', '.join(name[i] for i in ins)}{kw})")
    out = name[r.out_slot]
    if r.out_tangent is None:
        body.append(f"return {out}")
        return straight_line("replay", "trace, graph, primals, tangents", body, ns)
    tangent = {k: f"t{k}" for k in range(n_in)}  # the arguments' tangent variables, then the steps'
    body += [f"t{k} = tangents[{k}]" for k in range(n_in)]
    body += ["const_ids = graph._const_ids", "eqns = graph.eqns"]
    const_var: dict[int, str] = {}
    for k, (p, ins, prm, out_aval, step) in enumerate(r.tangent_steps):
        in_names = []
        for ref in ins:
            if ref[0]:
                in_names.append(tangent[ref[1]])
                continue
            slot = ref[1]
            if slot not in const_var:  # a primal value: a constant of the graph, looked up once
                c = const_var[slot] = f"c{slot}"
                x = name[slot]
                ns[f"A{slot}"] = ref[2]
                body += [
                    f"{c} = const_ids.get(id({x}))",
                    f"if {c} is None:",
                    f"    {c} = const_ids[id({x})] = _new(Var)",
                    f"    {c}.aval = A{slot}",
                    f"    graph.constvars.append({c})",
                    f"    graph.consts.append({x})",
                ]
            in_names.append(const_var[slot])
        o = tangent[n_in + k] = f"t{n_in + k}"
        ns[f"TP{k}"], ns[f"TM{k}"], ns[f"TA{k}"], ns[f"TS{k}"] = p, prm, out_aval, step
        body += [
            f"{o} = _new(Var)",
            f"{o}.aval = TA{k}",
            "e = _new(StepEqn)",
            f"e.prim, e.inputs, e.params, e.outputs, e.step = TP{k}, [{', '.join(in_names)}], TM{k}, [{o}], TS{k}",
            "eqns.append(e)",
        ]
    ns["OUT_AVAL"] = r.out_aval
    body += [
        "t = _new(GraphTracer)",
        f"t._trace, t._var = graph, {tangent[r.out_tangent]}",
        "r = _new(OUT)  # OUT(trace, primal, t), its aval the recorded one",
        f"r._trace, r.primal, r.tangent, r.aval = trace, {out}, t, OUT_AVAL",
        "return r",
    ]
    return straight_line("replay", "trace, graph, primals, tangents", body, ns)


def replaying(run_rule: Callable[..., Any], tracer_type: type) -> Callable[..., Any]:
    """A trace's ``process_primitive(trace, prim, args, params)``: for a primitive with
    ``jvp_replay``, the ``tracer_type`` (or primal) its recipe gives; ``run_rule`` (the JVP
    rule run directly) when the call is not replayable: some primal is a tracer, or some
    tangent is not a tracer of the one graph trace below, or the rule did not record."""

    def process_primitive(trace: Any, prim: Primitive, args: Sequence[Any], params: dict) -> Any:
        if not prim.jvp_replay:
            return run_rule(trace, prim, args, params)
        key: list[Any] = [prim]  # the signature; avals by id (a recipe keeps them alive)
        values: list[Any] = []  # the primals
        staged: list[Var] = []  # the tangents' variables
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
                tv = t._var
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
        if graph is None or type(graph) is not GraphTrace or graph._owner is not trace._owner:  # (this thread's)
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
        return recipe.run(trace, graph, values, staged)

    return process_primitive
