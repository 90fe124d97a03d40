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
    """The custom functions whose rules this thread is tracing (a rule calling its own
    function is staged without tracing the rule again)."""

    def __init__(self):
        self.fns: set[int] = set()


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
    not be traced, or that calls its own function while being traced, runs as written)."""

    __slots__ = ("call", "fun_graph", "rule_graph", "box")

    def __init__(self, call: CustomCall, n_closure: int, fun_graph: Graph, rule_graph: Graph | None, box: list):
        super().__init__(call.kind, call.name, n_closure)
        self.call, self.fun_graph, self.rule_graph, self.box = call, fun_graph, rule_graph, box
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
        return outs[:m], out_tree, merge_residuals(outs[m:], res_static), res_tree

    def bwd(self, res: list, res_tree: PyTreeDef, cts: list, out_tree: PyTreeDef, in_avals: tuple) -> list:
        k = self.n_closure
        return [None] * k + self.call.bwd(res, res_tree, cts, out_tree, in_avals[k:])

    @property
    def origin(self) -> Any:
        return self.call.origin

    def check_closure(self, trace: Any) -> None:
        self.call.check_closure(trace)


def _trace_rule(call: CustomCall, avals: Sequence[Any], box: list) -> Graph | None:
    """The JVP rule (custom_jvp) or fwd (custom_vjp) of ``call`` traced into a graph."""
    n = len(avals)
    if call.kind == "custom_jvp":
        t_avals = [vspace_of_aval(a).tangent_aval(a) for a in avals]

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
    key = id(call.origin)
    if key in _TRACING.fns:
        return None
    _TRACING.fns.add(key)
    try:
        return make_graph(rule, *ins, avals=True)
    except TracerConversionError:  # a rule that needs concrete values: run as written when differentiated
        return None
    finally:
        _TRACING.fns.discard(key)


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
            box: list = []
            rule = _trace_rule(call, avals, box)
            if rule is not None:
                _traced_consts(rule, closure)
                rule = _lift(rule, closure)
            call = ConvertedCall(call, len(closure), _lift(body, closure), rule, box)
            leaves = closure + list(leaves)
        elif cache is not None:
            cache[key] = hit
    call.expect = hit
    out_tree, out_avals = hit
    outs = custom_call_p.bind(*leaves, fn=call, out_tree=out_tree, out_avals=out_avals)
    return tree_unflatten(out_tree, outs)
