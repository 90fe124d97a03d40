"""Calls of closed graphs: the primitive a compiled (staged) function is.

``call_p`` applies a :class:`ClosedCall` (a graph with its constants, plus the
compiler that turns a graph into an executable) to its inputs. It composes with
every transformation as JAX's ``pjit`` does:

* evaluation runs the compiled executable (built once per graph);
* staging (an outer :func:`make_graph`, an outer compiled function) records one
  equation, which the compiler inlines (:func:`inline_calls`);
* JVP splits the graph once per pattern of nonzero tangents into a *forward*
  graph (primal outputs and residuals) and a *linear* graph (residuals and
  tangents to output tangents), both traced from :func:`linearize_flat` and both
  compiled: under ``linearize``/``grad`` the primal work runs compiled and the
  linear call is staged with the residuals as constants;
* transposition traces :func:`backward_pass` of the linear graph into a compiled
  transposed graph;
* batching (:func:`tidu.vmap`) traces the graph under ``vmap`` into a batched graph,
  compiled as well: ``vmap(jit(f))`` runs one compiled batched program.

Derived graphs are cached on the :class:`ClosedCall`, so a function differentiated
in a loop is split and compiled once.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._ad import backward_pass, linearize_flat
from ._batching import vmap
from ._core import Primitive, UndefinedPrimal
from ._errors import RuleError
from .graph import Eqn, Graph, GraphTracer, Var, make_graph
from ._pytree import tree_flatten
from ._tracer import aval_of
from ._zero import Zero

__all__ = ["ClosedCall", "call_p", "inline_calls", "Compiler", "INLINED"]

Compiler = Callable[[Graph], Callable[..., list]]


def _interpret(graph: Graph) -> Callable[..., list]:
    return graph.eval_flat


class ClosedCall:
    """A graph to be called as one operation, with its compiler.

    Hashable by identity (a primitive parameter). ``executable`` is compiled on
    first use; derived graphs (JVP splits, transposes) share the compiler and are
    cached here.
    """

    __slots__ = ("graph", "compiler", "name", "_executable", "_jvp", "_transpose", "_batched", "__weakref__")

    def __init__(self, graph: Graph, compiler: Compiler | None = None, name: str = "call"):
        self.graph = graph
        self.compiler = compiler or _interpret
        self.name = name
        self._executable: Callable[..., list] | None = None
        self._jvp: dict[tuple[bool, ...], tuple] = {}
        self._transpose: dict[tuple, tuple] = {}
        self._batched: dict[tuple, "ClosedCall"] = {}

    @property
    def executable(self) -> Callable[..., list]:
        exe = self._executable
        if exe is None:
            exe = self._executable = self.compiler(self.graph)
        return exe

    @property
    def out_avals(self) -> list:
        return [v.aval for v in self.graph.outvars]

    def __repr__(self) -> str:
        return f"<{self.name}: {len(self.graph.eqns)} eqns>"

    # ---- derived graphs ---------------------------------------------------------
    def jvp_split(self, nonzero: tuple[bool, ...]) -> tuple["ClosedCall", "ClosedCall", int, tuple[bool, ...]]:
        """``(forward, linear, n_out, out_nonzero)`` for tangents nonzero at ``nonzero``.

        ``forward(*primals) -> [*outputs, *residuals]``;
        ``linear(*residuals, *nonzero_tangents) -> nonzero output tangents``;
        ``out_nonzero[i]`` is False where output ``i``'s tangent is a symbolic zero.
        """
        hit = self._jvp.get(nonzero)
        if hit is not None:
            return hit
        graph = self.graph
        n_in = len(graph.invars)
        box: list = []

        def forward(*primals: Any) -> list:
            _, tree = tree_flatten(tuple(primals))
            outs, lin, _ = linearize_flat(lambda *xs: graph.eval_flat(*xs), list(primals), tree, list(nonzero))
            traced = [i for i, c in enumerate(lin.consts) if type(c) is GraphTracer]
            box.append((lin, traced))
            return list(outs) + [lin.consts[i] for i in traced]

        fwd_graph = make_graph(forward, *[v.aval for v in graph.invars], avals=True)
        fwd_graph.in_tree = fwd_graph.out_tree = None
        lin, traced = box[0]
        traced_set = set(traced)
        res_vars = [lin.constvars[i] for i in traced]
        constvars = [v for i, v in enumerate(lin.constvars) if i not in traced_set]
        consts = [c for i, c in enumerate(lin.consts) if i not in traced_set]
        out_nonzero = tuple(type(v) is not Zero for v in lin.outvars)
        lin_graph = Graph(
            res_vars + list(lin.invars),
            constvars,
            consts,
            list(lin.eqns),
            [v for v in lin.outvars if type(v) is not Zero],
        )
        n_out = len(fwd_graph.outvars) - len(res_vars)
        assert n_out == len(graph.outvars) and len(lin.invars) == sum(nonzero) <= n_in
        hit = (
            ClosedCall(fwd_graph, self.compiler, f"{self.name}.fwd"),
            ClosedCall(lin_graph, self.compiler, f"{self.name}.lin"),
            n_out,
            out_nonzero,
        )
        self._jvp[nonzero] = hit
        return hit

    def transposed(
        self, undefined: tuple[bool, ...], ct_nonzero: tuple[bool, ...]
    ) -> tuple["ClosedCall", tuple[bool, ...]]:
        """The transpose of this graph in its ``undefined`` inputs: a call
        ``(*defined_inputs, *nonzero_cotangents) -> nonzero input cotangents`` and
        which undefined inputs get a nonzero cotangent."""
        key = (undefined, ct_nonzero)
        hit = self._transpose.get(key)
        if hit is not None:
            return hit
        graph = self.graph
        defined_vars = [v for v, u in zip(graph.invars, undefined) if not u]
        linear_vars = [v for v, u in zip(graph.invars, undefined) if u]
        outvars = graph.outvars
        box: list = []

        def transpose(*args: Any) -> list:
            defined, cts = args[: len(defined_vars)], list(args[len(defined_vars) :])
            it = iter(cts)
            full_cts = [next(it) if nz else Zero(v.aval) for v, nz in zip(outvars, ct_nonzero)]
            partial = Graph(
                linear_vars,
                list(graph.constvars) + defined_vars,
                list(graph.consts) + list(defined),
                graph.eqns,
                list(outvars),
            )
            cts_in = backward_pass(partial, full_cts)
            box.append(tuple(type(c) is not Zero for c in cts_in))
            return [c for c in cts_in if type(c) is not Zero]

        in_avals = [v.aval for v in defined_vars] + [v.aval for v, nz in zip(outvars, ct_nonzero) if nz]
        t_graph = make_graph(transpose, *in_avals, avals=True)
        t_graph.in_tree = t_graph.out_tree = None
        hit = (ClosedCall(t_graph, self.compiler, f"{self.name}.T"), box[0])
        self._transpose[key] = hit
        return hit


# ---------------------------------------------------------------------------
# the primitive
# ---------------------------------------------------------------------------
call_p = Primitive("call", multiple_results=True)


@call_p.def_impl
def _call_impl(*args: Any, fn: ClosedCall) -> list:
    return fn.executable(*args)


@call_p.def_abstract_eval
def _call_abstract(*avals: Any, fn: ClosedCall) -> list:
    expected = [v.aval for v in fn.graph.invars]
    if len(avals) != len(expected) or any(a != e for a, e in zip(avals, expected)):
        raise RuleError(f"{fn.name}: called with inputs of types {list(avals)}, traced for {expected}")
    return fn.out_avals


@call_p.def_jvp
def _call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, fn: ClosedCall) -> tuple[list, list]:
    nonzero = tuple(type(t) is not Zero for t in tangents)
    if not any(nonzero):
        outs = call_p.bind(*primals, fn=fn)
        return outs, [Zero(v.aval) for v in fn.graph.outvars]
    fwd, lin, n_out, out_nonzero = fn.jvp_split(nonzero)
    res = call_p.bind(*primals, fn=fwd)
    outs, residuals = res[:n_out], res[n_out:]
    t_out = call_p.bind(*residuals, *[t for t in tangents if type(t) is not Zero], fn=lin) if any(out_nonzero) else []
    it = iter(t_out)
    return outs, [next(it) if nz else Zero(v.aval) for v, nz in zip(fn.graph.outvars, out_nonzero)]


@call_p.def_batch
def _call_batch(axis_size: int, args: Sequence[Any], dims: Sequence[Any], *, fn: ClosedCall) -> tuple[list, list]:
    """The graph traced under ``vmap`` (batch axes as given, every output's first), compiled
    once per pattern of batch axes and argument types."""
    key = (tuple(dims), axis_size, tuple(aval_of(a) for a in args))
    hit = fn._batched.get(key)
    if hit is None:
        run = vmap(lambda *xs: fn.graph.eval_flat(*xs), in_axes=tuple(dims), out_axes=0, axis_size=axis_size)
        hit = fn._batched[key] = ClosedCall(
            make_graph(lambda *xs: run(*xs), *args), fn.compiler, name=f"vmap({fn.name})"
        )
    outs = call_p.bind(*args, fn=hit)
    return outs, [0] * len(outs)


def _call_transpose(cts: Sequence[Any], *args: Any, fn: ClosedCall) -> list:
    undefined = tuple(type(a) is UndefinedPrimal for a in args)
    ct_nonzero = tuple(c is not None and type(c) is not Zero for c in cts)
    if not any(ct_nonzero):
        return [None] * len(args)
    t_fn, got = fn.transposed(undefined, ct_nonzero)
    defined = [a for a, u in zip(args, undefined) if not u]
    outs = call_p.bind(*defined, *[c for c, nz in zip(cts, ct_nonzero) if nz], fn=t_fn) if any(got) else []
    it_out, it_got = iter(outs), iter(got)
    result: list = []
    for u in undefined:
        if not u:
            result.append(None)
        else:
            result.append(next(it_out) if next(it_got) else None)
    return result


call_p.def_transpose(_call_transpose)


# ---------------------------------------------------------------------------
# inlining (the compiler's first pass)
# ---------------------------------------------------------------------------
INLINED: dict[Primitive, Callable[[dict], Graph]] = {call_p: lambda params: params["fn"].graph}
"""The primitives that apply a graph of their own (from an equation's parameters): ``call``
and the staged ``checkpoint`` (:mod:`._checkpoint`, which registers itself)."""


def inline_calls(graph: Graph) -> Graph:
    """Replace every ``call`` equation (every equation of a primitive in :data:`INLINED`) by the
    equations of its graph, to any depth (a call inside an inlined graph is inlined in turn),
    the callee's constants becoming constants of ``graph``. Returns ``graph`` itself when there
    is nothing to inline."""
    if not any(e.prim in INLINED for e in graph.eqns):
        return graph
    out = Graph(list(graph.invars), list(graph.constvars), list(graph.consts), [], [], graph.in_tree, graph.out_tree)
    env: dict[Var, Any] = {v: v for v in (*graph.invars, *graph.constvars)}
    _splice(graph, env, out, fresh=False)
    out.outvars = [v if type(v) is Zero else env[v] for v in graph.outvars]
    return _materialize_zero_uses(out)


def _splice(g: Graph, env: dict, out: Graph, fresh: bool) -> None:
    """Append ``g``'s equations to ``out`` with ``g``'s variables read through
    ``env`` (which maps every variable of ``g`` defined so far to a variable of
    ``out``, or to a :class:`Zero`), inlining calls recursively. ``fresh``: give
    every equation new output variables (the callee's own may be spliced twice)."""
    for e in g.eqns:
        ins = [v if type(v) is Zero else env[v] for v in e.inputs]
        callee_of = INLINED.get(e.prim)
        if callee_of is not None:
            callee = callee_of(e.params)
            inner: dict[Var, Any] = dict(zip(callee.invars, ins))
            for cv, c in zip(callee.constvars, callee.consts):
                nv = inner[cv] = Var(cv.aval)
                out.constvars.append(nv)
                out.consts.append(c)
            _splice(callee, inner, out, fresh=True)
            outs = [v if type(v) is Zero else inner[v] for v in callee.outvars]
        else:
            outs = [Var(o.aval) for o in e.outputs] if fresh else e.outputs
            out.eqns.append(Eqn(e.prim, ins, e.params, outs))
        env.update(zip(e.outputs, outs))


def _materialize_zero_uses(graph: Graph) -> Graph:
    """An inlined graph whose output was a symbolic zero may leave a ``Zero`` as an
    equation input; give it a constant (the dense zero) instead."""
    if not any(type(v) is Zero for e in graph.eqns for v in e.inputs):
        return graph
    constvars, consts = list(graph.constvars), list(graph.consts)
    eqns = []
    for e in graph.eqns:
        ins = []
        for v in e.inputs:
            if type(v) is Zero:
                nv = Var(v.aval)
                constvars.append(nv)
                consts.append(v.instantiate())
                v = nv
            ins.append(v)
        eqns.append(Eqn(e.prim, ins, e.params, e.outputs))
    return Graph(list(graph.invars), constvars, consts, eqns, list(graph.outvars), graph.in_tree, graph.out_tree)
