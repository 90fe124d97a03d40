"""Graphs of primitive applications, and the trace that builds them.

A :class:`Graph` is tidu's first-class program representation (the analogue of
a jaxpr): input variables, constants (captured values such as residuals),
equations (a primitive applied to variables) and outputs. Graphs are evaluated
with :meth:`Graph.__call__` (traceable: evaluation binds primitives, so a graph can
itself be differentiated), simplified (:meth:`dce`, :meth:`cse`), transposed
(:func:`tidu.transpose_graph`) and printed. ``make_graph(f, *avals)`` traces a
function into one.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._core import Primitive, Trace, new_trace
from ._errors import AvalMismatchError, RuleError, TreeStructureError, UnregisteredTypeError
from ._pytree import PyTreeDef, tree_flatten, tree_unflatten
from ._tracer import Tracer, aval_of
from ._vspace import _value_vspaces, promote_scalar
from ._zero import Zero

__all__ = ["Var", "Eqn", "Graph", "GraphTracer", "GraphTrace", "make_graph", "eval_eqn"]

_new = object.__new__


class Var:
    """A graph variable: an abstract value with an identity."""

    __slots__ = ("aval",)

    def __init__(self, aval: Any):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var({self.aval})"


class Eqn:
    """``outputs = prim(*inputs, **params)``."""

    __slots__ = ("prim", "inputs", "params", "outputs")

    def __init__(self, prim: Primitive, inputs: list[Var], params: dict, outputs: list[Var]):
        self.prim = prim
        self.inputs = inputs
        self.params = params
        self.outputs = outputs


def _params_key(eqn: "Eqn") -> Any:
    """The equation's parameters as a hashable key. Primitive parameters must be
    immutable, hashable values (what lets graphs be compared, cached and
    simplified); anything else is a rule error naming the primitive."""
    try:
        key = tuple(sorted(eqn.params.items()))
        hash(key)
    except TypeError as exc:
        bad = [k for k, v in eqn.params.items() if getattr(type(v), "__hash__", None) is None]
        raise RuleError(
            f"primitive '{eqn.prim.name}' has unhashable parameters {bad or list(eqn.params)} "
            f"({exc}); parameters must be immutable values (tuples, frozen objects)"
        ) from None
    return key


def eval_eqn(eqn: "Eqn", args: Sequence[Any], env: dict) -> None:
    """Bind ``eqn``'s primitive to ``args`` and record its outputs in ``env``: the
    one step every graph evaluation (plain, linear, the forward part of the
    backward pass) is made of."""
    out = eqn.prim.bind(*args, **eqn.params)
    if eqn.prim.multiple_results:
        env.update(zip(eqn.outputs, out))
    else:
        env[eqn.outputs[0]] = out


class Graph:
    """A traced program: ``outvars = eqns(invars, constvars=consts)``.

    ``outvars`` entries are :class:`Var` or :class:`Zero` (a symbolic zero output).
    """

    __slots__ = ("invars", "constvars", "consts", "eqns", "outvars", "in_tree", "out_tree", "all_depend_on_inputs")

    def __init__(
        self,
        invars: list[Var],
        constvars: list[Var],
        consts: list[Any],
        eqns: list[Eqn],
        outvars: list[Var | Zero],
        in_tree: PyTreeDef | None = None,
        out_tree: PyTreeDef | None = None,
        all_depend_on_inputs: bool = False,
    ):
        self.invars = invars
        self.constvars = constvars
        self.consts = consts
        self.eqns = eqns
        self.outvars = outvars
        self.in_tree = in_tree
        self.out_tree = out_tree
        # True when every equation reads an input or an equation's output (a graph staged
        # from its inputs, as linearization makes): the backward pass then has no
        # forward part to find
        self.all_depend_on_inputs = all_depend_on_inputs

    # ---- evaluation ---------------------------------------------------------
    def eval_flat(self, *args: Any) -> list[Any]:
        """Evaluate on flat inputs; outputs a flat list. Binds primitives, so traceable."""
        env = self._run(args)
        return [v.instantiate() if type(v) is Zero else env[v] for v in self.outvars]

    def _run(self, args: Sequence[Any]) -> dict:
        env: dict[Var, Any] = dict(zip(self.constvars, self.consts))
        env.update(zip(self.invars, args))
        for eqn in self.eqns:
            eval_eqn(eqn, [env[v] for v in eqn.inputs], env)
        return env

    def eval_linear_flat(self, *args: Any) -> list[Any]:
        """Evaluate a graph that is linear in its inputs, where inputs may be
        :class:`Zero`: no dense zero is built for them.

        An equation whose inputs from the linear inputs are all zero is skipped (its
        outputs are zero, by linearity); one with some zero and some nonzero such
        inputs gets dense zeros for the zero ones (one per aval, shared). Outputs
        stay :class:`Zero` where nothing nonzero reached them. Binds primitives, so
        traceable.
        """
        if not any(type(a) is Zero for a in args):  # the common case: plain evaluation
            env = self._run(args)
            return [v if type(v) is Zero else env[v] for v in self.outvars]
        env = dict(zip(self.constvars, self.consts))
        linear: set[Var] = set()  # variables that depend on the linear inputs
        for v, a in zip(self.invars, args):
            env[v] = a
            linear.add(v)
        dense_zeros: dict[Any, Any] = {}

        def dense(z: Zero) -> Any:
            a = z.aval
            d = dense_zeros.get(a)
            if d is None:
                d = dense_zeros[a] = z.instantiate()
            return d

        for eqn in self.eqns:
            ins = eqn.inputs
            vals = [env[v] for v in ins]
            lin_in = [x for v, x in zip(ins, vals) if v in linear]
            if lin_in:
                linear.update(eqn.outputs)
                if all(type(x) is Zero for x in lin_in):
                    for o in eqn.outputs:
                        env[o] = Zero(o.aval)
                    continue
                vals = [dense(x) if type(x) is Zero else x for x in vals]
            eval_eqn(eqn, vals, env)
        return [v if type(v) is Zero else env[v] for v in self.outvars]

    def __call__(self, *args: Any) -> Any:
        """Evaluate on arguments with the structure and the avals (shape, dtype) the graph was
        traced for (a Python float or complex number is taken as the registered scalar
        promotion makes it); anything else raises :class:`TreeStructureError` or
        :class:`AvalMismatchError` naming what was expected. Traceable."""
        if self.in_tree is not None:
            flat, tree = tree_flatten(args)
            if tree != self.in_tree:
                raise TreeStructureError(f"graph expects arguments of structure {self.in_tree}, got {tree}")
        else:
            flat = list(args)
            if len(flat) != len(self.invars):
                raise TreeStructureError(f"graph expects {len(self.invars)} arguments, got {len(flat)}")
        outs = self.eval_flat(*self._checked(flat))
        return tree_unflatten(self.out_tree, outs) if self.out_tree is not None else outs

    def _checked(self, flat: list) -> list:
        """``flat`` (numbers promoted) after checking each leaf's aval against its input's."""
        out = []
        for i, (x, v) in enumerate(zip(flat, self.invars)):
            x = promote_scalar(x)
            try:
                a = aval_of(x)
            except UnregisteredTypeError:
                raise AvalMismatchError(
                    f"graph input {i} expects a value of type {v.aval}, got {type(x).__qualname__} {x!r:.60}, "
                    "which is not a value of a registered type"
                ) from None
            if a != v.aval:
                raise AvalMismatchError(
                    f"graph input {i} expects {v.aval}, got {a}: a graph is specialised to the shapes and dtypes "
                    "it was traced for; trace it again (tidu.make_graph) for these arguments"
                )
            out.append(x)
        return out

    # ---- simplification -------------------------------------------------------
    def dce(self) -> "Graph":
        """Dead-code elimination: drop equations whose outputs are never used."""
        live = {v for v in self.outvars if type(v) is Var}
        kept: list[Eqn] = []
        for eqn in reversed(self.eqns):
            if any(o in live for o in eqn.outputs):
                kept.append(eqn)
                live.update(eqn.inputs)
        kept.reverse()
        used = [(cv, c) for cv, c in zip(self.constvars, self.consts) if cv in live]
        return Graph(
            list(self.invars),
            [cv for cv, _ in used],
            [c for _, c in used],
            kept,
            list(self.outvars),
            self.in_tree,
            self.out_tree,
        )

    def cse(self) -> "Graph":
        """Common-subexpression elimination by structural key (prim, inputs, params)."""
        rename: dict[Var, Var] = {}
        seen: dict[Any, list[Var]] = {}
        # identical constants (same object) share one variable
        const_of: dict[int, Var] = {}
        constvars, consts = [], []
        for cv, c in zip(self.constvars, self.consts):
            prev = const_of.get(id(c))
            if prev is None:
                const_of[id(c)] = cv
                constvars.append(cv)
                consts.append(c)
            else:
                rename[cv] = prev
        eqns: list[Eqn] = []
        for eqn in self.eqns:
            inputs = [rename.get(v, v) for v in eqn.inputs]
            key = (eqn.prim, tuple(id(v) for v in inputs), _params_key(eqn))
            if key in seen:
                for o, p in zip(eqn.outputs, seen[key]):
                    rename[o] = p
                continue
            seen[key] = eqn.outputs
            eqns.append(Eqn(eqn.prim, inputs, eqn.params, eqn.outputs))
        outvars = [rename.get(v, v) if type(v) is Var else v for v in self.outvars]
        return Graph(list(self.invars), constvars, consts, eqns, outvars, self.in_tree, self.out_tree)

    def simplify(self) -> "Graph":
        """CSE then DCE."""
        return self.cse().dce()

    # ---- inspection ----------------------------------------------------------
    @property
    def num_residuals(self) -> int:
        """Number of captured constants (for a linearized graph: the residuals)."""
        return len(self.consts)

    def __str__(self) -> str:
        names: dict[Var, str] = {}

        def name(v: Var | Zero) -> str:
            if type(v) is Zero:
                return f"0:{v.aval}"
            if v not in names:
                n = len(names)
                s = ""
                while True:
                    s = chr(ord("a") + n % 26) + s
                    n = n // 26 - 1
                    if n < 0:
                        break
                names[v] = s
            return names[v]

        def decl(v: Var) -> str:
            return f"{name(v)}:{v.aval}"

        consts = " ".join(decl(v) for v in self.constvars)
        ins = " ".join(decl(v) for v in self.invars)
        lines = [f"{{ lambda {consts} ; {ins} ."]
        for i, eqn in enumerate(self.eqns):
            lhs = " ".join(decl(o) for o in eqn.outputs)
            params = ""
            if eqn.params:
                params = "[" + " ".join(f"{k}={_short(v)}" for k, v in eqn.params.items()) + "]"
            rhs = " ".join(name(v) for v in eqn.inputs)
            lines.append(f"  {'let' if i == 0 else '   '} {lhs} = {eqn.prim.name}{params} {rhs}")
        outs = ", ".join(name(v) for v in self.outvars)
        lines.append(f"  in ({outs}{',' if len(self.outvars) == 1 else ''}) }}")
        return "\n".join(lines)

    __repr__ = __str__


def _short(v: Any) -> str:
    s = getattr(v, "__name__", None) or repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


class GraphTracer(Tracer):
    __slots__ = ("_var",)

    def __init__(self, trace: "GraphTrace", var: Var):
        self._trace = trace
        self._var = var

    @property
    def aval(self) -> Any:
        return self._var.aval

    def __repr__(self) -> str:
        return f"GraphTracer({self._var.aval})"


class GraphTrace(Trace):
    """Stages every primitive applied to its tracers into a graph.

    Values from lower levels become constants of the graph (deduplicated by identity).
    """

    __slots__ = ("eqns", "constvars", "consts", "_const_ids")

    def __init__(self):
        super().__init__()
        self.eqns: list[Eqn] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_ids: dict[int, Var] = {}

    def new_arg(self, aval: Any) -> GraphTracer:
        return GraphTracer(self, Var(aval))

    def to_var(self, x: Any) -> Var:
        if type(x) is GraphTracer and x._trace is self:
            return x._var
        v = self._const_ids.get(id(x))
        if v is None:
            v = Var(aval_of(x))
            self._const_ids[id(x)] = v
            self.constvars.append(v)
            self.consts.append(x)
        return v

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> Any:
        in_vars = []
        in_avals = []
        const_ids = self._const_ids
        for a in args:
            if type(a) is GraphTracer and a._trace is self:
                v = a._var
            else:  # self.to_var(a), inlined
                v = const_ids.get(id(a))
                if v is None:  # a value from a lower level: a new constant (aval_of(a), inlined)
                    vs = _value_vspaces.get(type(a))
                    v = const_ids[id(a)] = Var(vs.aval(a) if vs is not None else aval_of(a))
                    self.constvars.append(v)
                    self.consts.append(a)
            in_vars.append(v)
            in_avals.append(v.aval)
        out_aval = prim.abstract_eval(*in_avals, **params) if params else prim.abstract_eval(*in_avals)
        if prim.multiple_results:
            outs = [Var(a) for a in out_aval]
            self.eqns.append(Eqn(prim, in_vars, params, outs))
            return [GraphTracer(self, v) for v in outs]
        # Var(out_aval), Eqn(prim, in_vars, params, [out]) and GraphTracer(self, out), without
        # an __init__ call each (the staging of every traced primitive)
        out = _new(Var)
        out.aval = out_aval
        eqn = _new(Eqn)
        eqn.prim, eqn.inputs, eqn.params, eqn.outputs = prim, in_vars, params, [out]
        self.eqns.append(eqn)
        tracer = _new(GraphTracer)
        tracer._trace, tracer._var = self, out
        return tracer

    def to_graph(self, invars: list[Var], outs: Sequence[Any], all_args: bool = False) -> Graph:
        """The graph of what was staged; ``all_args=True`` says ``invars`` are all the
        variables :meth:`new_arg` made (so every equation depends on them)."""
        outvars: list[Var | Zero] = []
        for o in outs:
            if type(o) is Zero:
                outvars.append(o)
            else:
                outvars.append(self.to_var(o))
        return Graph(invars, self.constvars, self.consts, self.eqns, outvars, all_depend_on_inputs=all_args)


def make_graph(f: Callable[..., Any], *example_args: Any, avals: bool = False) -> Graph:
    """Trace ``f`` into a :class:`Graph`.

    ``example_args`` are pytrees of concrete values (only their avals are used) or,
    with ``avals=True``, pytrees of avals.
    """
    flat, in_tree = tree_flatten(example_args)
    in_avals = flat if avals else [aval_of(x) for x in flat]
    with new_trace(GraphTrace()) as trace:
        tracers = [trace.new_arg(a) for a in in_avals]
        out = f(*tree_unflatten(in_tree, tracers))
        out_flat, out_tree = tree_flatten(out)
        graph = trace.to_graph([t._var for t in tracers], out_flat)
    graph.in_tree = in_tree
    graph.out_tree = out_tree
    return graph
