"""``custom_jvp`` / ``custom_vjp`` calls inside a graph being built (``make_graph``,
``checkpoint``, ``tenferro.jit``): one ``custom_call`` equation, so that differentiating the
graph later still uses the user's rules instead of differentiating the function.

The function is traced once per call signature for its output structure and avals (cached on
the custom function, so it dies with it). A function that closes over a value traced by the
graph being built (or by an enclosing one) is *closure-converted*: those values become the
call's leading operands, and its function and rules are traced into graphs that take them as
inputs, so the call is evaluated, differentiated and batched later, after the traced values
are gone. Differentiating with respect to such a value is an error (the rules say nothing
about it): pass it to the function as an argument instead.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from ._ad import backward_pass, jvp_flat, linearize_flat
from ._batching import vmap
from ._core import Primitive, is_undefined
from ._custom_checks import merge_residuals, split_residuals
from ._custom_rules import CustomCall, UserCall, dispatch
from ._errors import TracerConversionError
from .graph import Graph, Var, make_graph
from ._pytree import PyTreeDef, tree_flatten, tree_unflatten
from ._tracer import Tracer, aval_of
from ._vspace import vspace_of_aval
from ._zero import Zero

__all__ = ["custom_call_p", "stage_custom_call", "ConvertedCall", "flat_tree"]

custom_call_p = Primitive("custom_call", multiple_results=True)


def flat_tree(n: int) -> PyTreeDef:
    """The structure of ``n`` positional arguments."""
    return tree_flatten(tuple(range(n)))[1]


@custom_call_p.def_impl
def _custom_call_impl(*args, fn, out_tree, out_avals):
    return tree_flatten(fn.fun(*args))[0]


@custom_call_p.def_abstract_eval
def _custom_call_abstract(*avals, fn, out_tree, out_avals):
    return list(out_avals)


def _flat_call(fn: CustomCall) -> Callable[..., list]:
    def flat(*leaves: Any) -> list:
        return tree_flatten(dispatch(fn, leaves))[0]

    return flat


@custom_call_p.def_jvp
def _custom_call_jvp(primals, tangents, *, fn, out_tree, out_avals):
    # the call again under a fresh forward-mode trace: its handler applies the user's rule
    outs, t_outs, _ = jvp_flat(_flat_call(fn), list(primals), list(tangents), flat_tree(len(primals)))
    return outs, t_outs


@custom_call_p.def_batch
def _custom_call_batch(axis_size, args, dims, *, fn, out_tree, out_avals):
    # the call again under vmap, where its rules are batched too
    outs = vmap(_flat_call(fn), in_axes=tuple(dims), out_axes=0, axis_size=axis_size)(*args)
    return outs, [0] * len(outs)


@custom_call_p.def_transpose
def _custom_call_transpose(cts, *args, fn, out_tree, out_avals):
    # a custom function inside a linear function being transposed (linear_transpose): the
    # transpose of its linearization by the user's rule, taken where its linear operands are
    # zero (the linearization of a linear map is the map itself, wherever it is taken)
    linear = [is_undefined(a) for a in args]
    points = [vspace_of_aval(a.aval).zeros(a.aval) if lin else a for a, lin in zip(args, linear)]
    _, lin_graph, _ = linearize_flat(_flat_call(fn), points, flat_tree(len(points)), linear)
    ct_in = iter(backward_pass(lin_graph, list(cts)))
    return [next(ct_in) if lin else None for lin in linear]


class _Tracing(threading.local):
    """The custom functions whose rules this thread is tracing: ``id(function) -> the calls
    of it staged meanwhile (by a rule calling its own function)``. Those are not traced again;
    once the rule's graph is done, a call with the same arguments and avals takes it and its
    closure (the documented ``return f(*primals), ...`` idiom, :func:`_adopt`); any other runs
    its rules as written."""

    def __init__(self):
        self.pending: dict[int, list] = {}


_TRACING = _Tracing()


def _eval(graph: Graph, args: Sequence[Any]) -> list:
    """A graph's outputs, a :class:`Zero` output kept symbolic."""
    env = graph._run(args)
    return [v if type(v) is Zero else env[v] for v in graph.outvars]


def _lift(graph: Graph, closure: list) -> Graph:
    """``graph`` with its traced constants, ``closure`` (in that order), as leading inputs."""
    where = {id(c): i for i, c in enumerate(closure)}
    lead = [Var(aval_of(c)) for c in closure]
    constvars, consts = [], []
    for cv, c in zip(graph.constvars, graph.consts):
        if isinstance(c, Tracer):
            lead[where[id(c)]] = cv
        else:
            constvars.append(cv)
            consts.append(c)
    return Graph(lead + list(graph.invars), constvars, consts, graph.eqns, graph.outvars, out_tree=graph.out_tree)


def _traced_consts(graph: Graph, closure: list) -> None:
    """Add the traced constants of ``graph`` to ``closure`` (once each)."""
    seen = {id(c) for c in closure}
    for c in graph.consts:
        if isinstance(c, Tracer) and id(c) not in seen:
            seen.add(id(c))
            closure.append(c)


class ConvertedCall(CustomCall):
    """``call`` closure-converted: its first ``n_closure`` leaves are the traced values it
    closes over; its function and rules are graphs taking them as inputs (a rule that could
    not be traced runs as written). A custom_vjp's ``bwd`` is a graph too when it could be
    traced (``bwd_graph``: closure, dynamic residuals and cotangents in; ``bwd_mask``: which
    cotangents it returns); ``fwd`` then returns the closure's values first among the
    residuals, so that ``bwd`` gets them after the graph that traced them has finished."""

    __slots__ = ("call", "fun_graph", "rule_graph", "box", "bwd_graph", "bwd_mask")

    def __init__(
        self,
        call: CustomCall,
        n_closure: int,
        fun_graph: Graph,
        rule_graph: Graph | None,
        box: list,
        bwd: tuple[Graph, tuple] | None = None,
    ):
        super().__init__(call.kind, call.name, n_closure)
        self.call, self.fun_graph, self.rule_graph, self.box = call, fun_graph, rule_graph, box
        self.bwd_graph, self.bwd_mask = bwd if bwd is not None else (None, ())
        self.expect = call.expect

    def fun(self, *leaves: Any) -> Any:
        return tree_unflatten(self.fun_graph.out_tree, self.fun_graph.eval_flat(*leaves))

    def jvp(self, primals: list, tangents: list) -> tuple[list, list, PyTreeDef]:
        k = self.n_closure
        if self.rule_graph is None:
            return self.call.jvp(primals[k:], tangents[k:])
        outs = _eval(self.rule_graph, [*primals, *[t for t in tangents[k:] if t is not None]])
        tree, m = self.box
        return outs[:m], outs[m:], tree

    def fwd(self, *leaves: Any) -> tuple[list, PyTreeDef, list, PyTreeDef]:
        k = self.n_closure
        if self.rule_graph is None:
            return self.call.fwd(*leaves[k:])
        outs = _eval(self.rule_graph, leaves)
        m, out_tree, res_tree, res_static = self.box
        res = merge_residuals(outs[m:], res_static)
        if self.bwd_graph is not None:
            res = list(leaves[:k]) + res  # the closure, for the traced bwd
        return outs[:m], out_tree, res, res_tree

    def bwd(self, res: list, res_tree: PyTreeDef, cts: list, out_tree: PyTreeDef, in_avals: tuple) -> list:
        k = self.n_closure
        if self.bwd_graph is None:
            return [None] * k + self.call.bwd(res, res_tree, cts, out_tree, in_avals[k:])
        res_dyn, _ = split_residuals(res[k:])  # (the static ones are constants of the graph)
        n_ct = len(self.bwd_graph.invars) - k - len(res_dyn)
        ct_in = [c for c in cts if c is not None]
        if len(ct_in) != n_ct:  # a zero cotangent given as None: dense, as the graph takes it
            avals = [v.aval for v in self.bwd_graph.invars[k + len(res_dyn) :]]
            ct_in, it = [], iter(avals)
            for c, o in zip(cts, self.fun_graph.outvars):
                if tangent_aval_of(o.aval) is not None:
                    a = next(it)
                    ct_in.append(vspace_of_aval(a).zeros(a) if c is None else c)
        outs = iter(_eval(self.bwd_graph, [*res[:k], *res_dyn, *ct_in]))
        full = [next(outs) if h else None for h in self.bwd_mask]
        return [None] * k + [None if type(c) is Zero else c for c in full]

    @property
    def origin(self) -> Any:
        return self.call.origin

    def check_closure(self, trace: Any) -> None:
        self.call.check_closure(trace)


def tangent_aval_of(aval: Any) -> Any:
    """The tangent aval at a point of ``aval`` (``None``: an integer or boolean value)."""
    return vspace_of_aval(aval).tangent_aval(aval)


def _trace_rule(call: CustomCall, avals: Sequence[Any], box: list) -> Graph | None:
    """The JVP rule (custom_jvp) or fwd (custom_vjp) of ``call`` traced into a graph."""
    n = len(avals)
    if call.kind == "custom_jvp":
        t_avals = [tangent_aval_of(a) for a in avals]

        def rule(*xs: Any) -> list:
            it = iter(xs[n:])
            tangents = [None if ta is None else next(it) for ta in t_avals]
            p_flat, t_flat, tree = call.jvp(list(xs[:n]), tangents)
            box[:] = [tree, len(p_flat)]
            return p_flat + t_flat

        ins = [*avals, *[ta for ta in t_avals if ta is not None]]
    else:

        def rule(*xs: Any) -> list:
            out_flat, out_tree, res_flat, res_tree = call.fwd(*xs)
            res_dyn, res_static = split_residuals(res_flat)
            box[:] = [len(out_flat), out_tree, res_tree, res_static]
            return out_flat + res_dyn

        ins = list(avals)
    try:
        return make_graph(rule, *ins, avals=True)
    except TracerConversionError:  # a rule that needs concrete values: run as written when differentiated
        return None


def _trace_bwd(call: CustomCall, avals: Sequence[Any], rule: Graph, box: list) -> tuple[Graph, tuple] | None:
    """The ``bwd`` of a custom_vjp ``call`` traced into a graph over (dynamic residuals, dense
    cotangents of the outputs that have a tangent), and which cotangents it returns; ``None``
    when it cannot be traced (it then runs as written, and reports its own errors there)."""
    m, out_tree, res_tree, res_static = box
    res_avals = [v.aval for v in rule.outvars[m:]]
    ct_avals = [tangent_aval_of(v.aval) for v in rule.outvars[:m]]
    in_avals = tuple(tangent_aval_of(a) for a in avals)
    mask: list = []

    def bwd(*xs: Any) -> list:
        res = merge_residuals(list(xs[: len(res_avals)]), res_static)
        it = iter(xs[len(res_avals) :])
        out = call.bwd(res, res_tree, [None if a is None else next(it) for a in ct_avals], out_tree, in_avals)
        mask[:] = [c is not None for c in out]
        return [c for c in out if c is not None]

    try:
        graph = make_graph(bwd, *res_avals, *[a for a in ct_avals if a is not None], avals=True)
    except Exception:  # (any error: the rule run as written later raises it where it belongs)
        return None
    return graph, tuple(mask)


def _convert(call: CustomCall, avals: tuple, body: Graph, closure: list) -> ConvertedCall:
    """``call`` closure-converted (``closure``: the traced values its function closes over,
    extended by those its rules close over)."""
    key = id(call.origin)
    waiting = _TRACING.pending.get(key)
    if waiting is not None:  # a rule of this function calls it: the rule's graph, once traced
        converted = ConvertedCall(call, len(closure), _lift(body, closure), None, [])
        waiting.append((converted, avals))
        return converted
    box: list = []
    waiting = _TRACING.pending[key] = []
    try:
        rule = _trace_rule(call, avals, box)
        bwd = _trace_bwd(call, avals, rule, box) if rule is not None and call.kind == "custom_vjp" else None
    finally:
        del _TRACING.pending[key]
    for graph in (rule, bwd and bwd[0]):
        if graph is not None:
            _traced_consts(graph, closure)
    rule = _lift(rule, closure) if rule is not None else None
    if bwd is not None:
        bwd = (_lift(bwd[0], closure), bwd[1])
    converted = ConvertedCall(call, len(closure), _lift(body, closure), rule, box, bwd)
    same = {id(c): c for c, a in waiting if c.call == call and a == avals}
    for graph in (rule, bwd and bwd[0]):
        if graph is not None and same:
            _adopt(graph, converted, same)
    return converted


def _adopt(graph: Graph, outer: ConvertedCall, nested: dict) -> None:
    """The calls ``nested`` (``id -> call``) that a rule of ``outer``'s function staged in
    ``graph`` (the rule's lifted graph), made ``outer``: the same function at the same avals,
    so they take its closure (the graph's leading inputs: each trace of the function made its
    own traced values of the same closure, e.g. a broadcast of a closed-over scalar) and its
    graphs, which a derivative of a higher order then evaluates (not the rule as written,
    whose closure has finished)."""
    k = outer.n_closure
    lead = graph.invars[:k]
    for eqn in graph.eqns:
        if eqn.prim is not custom_call_p:
            continue
        call = nested.get(id(eqn.params["fn"]))
        if call is None or call.rule_graph is not None:
            continue
        eqn.inputs = lead + eqn.inputs[call.n_closure :]
        call.n_closure, call.fun_graph, call.rule_graph, call.box = k, outer.fun_graph, outer.rule_graph, outer.box
        call.bwd_graph, call.bwd_mask = outer.bwd_graph, outer.bwd_mask


def stage_custom_call(trace: Any, call: CustomCall, leaves: list) -> Any:
    """Record ``call`` applied to ``leaves`` as one ``custom_call`` equation of the graph
    ``trace`` builds."""
    avals = tuple(aval_of(x) for x in leaves)
    cache = call.fn._out_types if type(call) is UserCall else None
    key = (call._key, avals) if cache is not None else None
    hit = cache.get(key) if cache is not None else None
    if hit is None:
        body = make_graph(call.fun, *avals, avals=True)
        hit = (body.out_tree, tuple(v.aval for v in body.outvars))
        closure: list = []
        _traced_consts(body, closure)
        if closure:
            call.expect = hit
            call = _convert(call, avals, body, closure)
            leaves = closure + list(leaves)
        elif cache is not None:
            cache[key] = hit
    call.expect = hit
    out_tree, out_avals = hit
    outs = custom_call_p.bind(*leaves, fn=call, out_tree=out_tree, out_avals=out_avals)
    return tree_unflatten(out_tree, outs)
