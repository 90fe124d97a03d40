"""Forward mode (JVP), linearization and transposition.

* :class:`JVPTrace` carries ``(primal, tangent)`` pairs. A value whose tangent is
  a symbolic zero is never wrapped, so zero tangents cost nothing.
* :func:`linearize_flat` runs the JVP with *staged* tangents: the tangent inputs
  are tracers of a :class:`GraphTrace` one level below the JVP trace, so primal
  work runs eagerly while every tangent operation is recorded. The result is a
  linear :class:`Graph` whose constants are the residuals.
* :func:`backward_pass` transposes a linear graph, summing fan-out cotangents with
  the value type's own ``add``. Reverse mode is linearize then transpose.
"""

from __future__ import annotations

import gc
import numbers
import threading
from typing import Any, Callable, Sequence

from ._core import Primitive, Trace, UndefinedPrimal, new_trace
from ._errors import MissingRuleError, NonDifferentiableError, RuleError
from .graph import Graph, GraphTrace, GraphTracer, Var, eval_eqn
from ._pytree import tree_flatten, tree_unflatten
from ._replay import _UNRECORDED, StepEqn, replaying
from ._replay_transpose import compile_transpose
from ._tracer import Tracer, aval_of
from ._vspace import _lookup, _value_vspaces, promote_scalar, vspace_of_aval
from ._zero import Zero

__all__ = ["JVPTrace", "JVPTracer", "jvp_flat", "linearize_flat", "backward_pass"]


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "aval")

    def __init__(self, trace: "JVPTrace", primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        vs = _value_vspaces.get(type(primal))
        if vs is not None:  # aval_of(primal) at once, a plain attribute: operators and rules read it often
            self.aval = vs.aval(primal)

    def __getattr__(self, name: str) -> Any:
        if name == "aval":  # a primal of no registered type (an outer tracer): its aval on first use
            a = self.aval = aval_of(self.primal)
            return a
        return Tracer.__getattr__(self, name)

    def to_concrete(self) -> Any:
        p = self.primal
        return p.to_concrete() if isinstance(p, Tracer) else p

    def __repr__(self) -> str:
        return f"JVPTracer(primal={self.primal!r}, tangent={self.tangent!r})"


class JVPTrace(Trace):
    __slots__ = ()

    def run_rule(self, prim: Primitive, args: Sequence[Any], params: dict) -> Any:
        """``process_primitive`` by the primitive's JVP rule itself."""
        primals = []
        tangents = []
        for a in args:
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
            else:
                primals.append(a)
                tangents.append(Zero.like(a))
        out, t_out = prim.jvp_rule(primals, tangents, **params)  # prim.jvp(...), inlined
        if prim.multiple_results:
            return [self.pure_or_wrap(o, t) for o, t in zip(out, t_out)]
        if type(t_out) is Zero:  # self.pure_or_wrap(out, t_out), inlined
            return out
        return JVPTracer(self, out, t_out)

    # a rule recorded once per signature when the primitive allows it (linearization of
    # concrete primals, tidu._replay), the rule itself otherwise
    process_primitive = replaying(run_rule, JVPTracer)

    def pure_or_wrap(self, primal: Any, tangent: Any) -> Any:
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)

    def split(self, x: Any) -> tuple[Any, Any]:
        """(primal, tangent) of an output; the tangent is ``Zero`` if untouched."""
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.like(x)


def jvp_flat(f: Callable[..., Any], primals: list[Any], tangents: list[Any], in_tree) -> tuple[list, list, Any]:
    """JVP of ``f`` on flat leaves; ``tangents`` entries may be ``Zero``.

    Returns flat primal outputs, flat tangent outputs (``Zero`` where untouched)
    and the output tree.
    """
    with new_trace(JVPTrace()) as trace:
        ins = [trace.pure_or_wrap(p, t) for p, t in zip(primals, tangents)]
        out = f(*tree_unflatten(in_tree, ins))
        out_flat, out_tree = tree_flatten(out)
        pairs = [trace.split(o) if type(o) is JVPTracer else _constant_output(o) for o in out_flat]
    return [p for p, _ in pairs], [t for _, t in pairs], out_tree


def _constant_output(o: Any) -> tuple[Any, Any]:
    """(primal, Zero tangent) of an output that does not depend on the differentiated inputs.
    As in JAX, a Python float or complex number becomes a value of the registered scalar
    promotion (a constant: ``grad(lambda x: 0.0)`` is zero), and a Python integer or bool stays
    as it is with no tangent (``None``, as an integer tensor gets)."""
    o = promote_scalar(o)
    if isinstance(o, numbers.Integral) and _lookup(_value_vspaces, type(o)) is None:
        return o, Zero(None)
    return o, Zero.like(o)


def linearize_flat(
    f: Callable[..., Any], primals: list[Any], in_tree, differentiable: Sequence[bool] | None = None
) -> tuple[list[Any], Graph, Any]:
    """Linearize ``f`` at ``primals``: primal outputs and a linear graph (tangents in,
    tangents out) whose constants are the residuals.

    Leaves with ``differentiable[i] == False`` get no tangent input (their graph
    input is omitted).
    """
    if differentiable is None:
        differentiable = [True] * len(primals)
    with new_trace(GraphTrace()) as gtrace:
        t_args: list[GraphTracer] = []
        tangents: list[Any] = []
        for p, d in zip(primals, differentiable):
            if d:
                a = aval_of(p)
                ta = vspace_of_aval(a).tangent_aval(a)
                t = gtrace.new_arg(ta)
                t_args.append(t)
                tangents.append(t)
            else:
                tangents.append(Zero.like(p))
        primals_out, tangents_out, out_tree = jvp_flat(f, primals, tangents, in_tree)
        graph = gtrace.to_graph([t._var for t in t_args], tangents_out, all_args=True)  # (every new_arg: t_args)
    return primals_out, graph, out_tree


def backward_pass(graph: Graph, cotangents: Sequence[Any]) -> list[Any]:
    """Transpose a graph that is linear in its inputs.

    ``cotangents`` has one entry per graph output (``Zero`` allowed). Returns one
    cotangent per graph input, ``Zero`` where nothing flowed back.
    """
    # The variables that depend on the linear inputs.
    linear: set[Var] = set(graph.invars)
    env: dict[Var, Any] = dict(zip(graph.constvars, graph.consts))
    if graph.all_depend_on_inputs:  # (a linearization's graph) every equation is linear
        lin_eqns = graph.eqns
        linear.update([o for eqn in lin_eqns for o in eqn.outputs])
    else:
        lin_eqns = []
        # Forward-evaluate equations that do not depend on the linear inputs.
        for eqn in graph.eqns:
            if linear.isdisjoint(eqn.inputs):
                eval_eqn(eqn, [env[v] for v in eqn.inputs], env)
            else:
                linear.update(eqn.outputs)
                lin_eqns.append(eqn)
    # Linear inputs of a rule arrive as UndefinedPrimal placeholders; a placeholder
    # only carries an aval, so one per aval (keyed by identity) serves every variable.
    undefined: dict[int, UndefinedPrimal] = {}

    ct_env: dict[Var, Any] = {}
    adders: dict[type, Callable[[Any, Any], Any]] = {}  # aval type -> its vector space's add

    def add(aval: Any, x: Any, y: Any) -> Any:
        fn = adders.get(type(aval))
        if fn is None:
            fn = adders[type(aval)] = vspace_of_aval(aval).add
        return fn(x, y)

    for v, ct in zip(graph.outvars, cotangents):
        if type(v) is Var and ct is not None and type(ct) is not Zero and v in linear:
            prev = ct_env.get(v)
            ct_env[v] = ct if prev is None else add(v.aval, prev, ct)

    pop = ct_env.pop
    checks = DEBUG.checks  # (a thread-local: read once)
    for eqn in reversed(lin_eqns):
        prim = eqn.prim
        if prim.multiple_results:
            cts_out = [pop(o, None) for o in eqn.outputs]
            if all(c is None for c in cts_out):
                continue
            ct = [Zero(o.aval) if c is None else c for o, c in zip(eqn.outputs, cts_out)]
        else:
            ct = pop(eqn.outputs[0], None)
            if ct is None:  # no cotangent reached this equation: nothing to transpose
                continue
        if type(eqn) is StepEqn and prim.transpose_replay:  # its rule recorded once per recipe step
            run = eqn.step.transpose
            if run is _UNRECORDED:
                mask = tuple([v in linear for v in eqn.inputs])
                run = eqn.step.transpose = compile_transpose(eqn, mask, _check_transpose_result)
            if run is not None and run(ct, eqn.inputs, env, ct_env, linear, checks):
                continue
        rule = prim.transpose_rule
        if rule is None:
            if not prim.differentiable:
                raise NonDifferentiableError(f"primitive '{prim.name}' cannot be transposed: it is not differentiable")
            raise MissingRuleError(
                f"primitive '{prim.name}' has no transpose rule, so reverse-mode differentiation through it is not possible"
            )
        inputs = eqn.inputs
        args = []
        for v in inputs:
            if v in linear:
                a = v.aval
                u = undefined.get(id(a))
                if u is None:
                    u = undefined[id(a)] = UndefinedPrimal(a)
                args.append(u)
            else:
                args.append(env[v])
        params = eqn.params
        cts_in = rule(ct, *args, **params) if params else rule(ct, *args)
        if checks:
            _check_transpose_result(prim, inputs, cts_in, linear)
        for v, c in zip(inputs, cts_in):  # accumulate, inlined: the hottest loop
            if c is None or type(c) is Zero or v not in linear:
                continue
            prev = ct_env.get(v)
            if prev is None:
                ct_env[v] = c
            else:  # add(v.aval, prev, c), inlined
                fn = adders.get(type(v.aval))
                ct_env[v] = fn(prev, c) if fn is not None else add(v.aval, prev, c)

    out = []
    for v in graph.invars:
        c = ct_env.get(v)
        out.append(Zero(v.aval) if c is None else c)
    return out


class paused_gc:
    """Context manager pausing Python's cyclic garbage collector (when it is enabled) while
    a graph is built and transformed: reverse mode's build and transpose, a compiler's passes
    and code generation (``tenferro.jit``). The graph's many small objects (variables,
    equations, tracers, residuals) live for the whole call: each pass of the collector
    would walk them, and, promoted to the oldest generation, they trigger collections of
    the whole heap (about 4 ms of a 10 ms gradient of 300 small steps, with PyTorch or
    JAX imported; 0.1-0.25 s of a cached native program's first call, after ``import
    numba``). Reference counting frees them at the end; cycles made meanwhile are
    collected by the next pass after the call. Restored on exit, errors included; a
    collector the caller disabled stays disabled."""

    __slots__ = ("paused",)

    def __enter__(self) -> "paused_gc":
        self.paused = gc.isenabled()
        if self.paused:
            gc.disable()
        return self

    def __exit__(self, *exc) -> None:
        if self.paused:
            gc.enable()


class _Debug(threading.local):
    """Switches for expensive consistency checks (off by default; tests turn them on).
    Per thread, like the transformation stack: a new thread starts with checks off."""

    checks = False


DEBUG = _Debug()


class debug_checks:
    """Enable (or disable) tidu's consistency checks in this thread, from now on or as a
    context manager.

    With checks on, every transpose rule's result is validated: one entry per
    argument, and each cotangent of a linear input has exactly that input's aval
    (shape, dtype, ...). A wrong rule then fails at the rule, naming the primitive,
    instead of surfacing later as a wrong gradient.

    >>> tidu.debug_checks(True)            # from now on
    >>> with tidu.debug_checks():          # only inside the block
    ...     tidu.grad(f)(x)
    """

    def __init__(self, enabled: bool = True):
        self._previous = DEBUG.checks
        DEBUG.checks = enabled

    def __enter__(self) -> "debug_checks":
        return self

    def __exit__(self, *exc) -> None:
        DEBUG.checks = self._previous


def _check_transpose_result(prim: Primitive, inputs: Sequence[Var], cts_in: Any, linear: dict) -> None:
    cts_in = list(cts_in)
    if len(cts_in) != len(inputs):
        raise RuleError(
            f"transpose rule of '{prim.name}' returned {len(cts_in)} cotangents for {len(inputs)} arguments"
        )
    for i, (v, c) in enumerate(zip(inputs, cts_in)):
        if c is None or type(c) is Zero or v not in linear:
            continue
        got = aval_of(c)
        if got != v.aval:
            raise RuleError(
                f"transpose rule of '{prim.name}' returned a cotangent of type {got} for argument {i} of type {v.aval}"
            )
