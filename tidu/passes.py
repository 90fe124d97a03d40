"""Graph-to-graph passes that know no value type: dead code, common
subexpressions, constant folding, and the two pieces every other pass is built
from (:class:`Rewriter`, :func:`run_passes`).

A pass is a pure function ``Graph -> Graph``: it never mutates its input and
keeps ``in_tree``/``out_tree``. **A pass that changes nothing returns its input
object**, so :func:`run_passes` detects a fixed point by identity, for free.

:class:`Rewriter` runs a *rule* over the equations in order. The rule sees each
equation with its inputs already renamed by earlier rewrites and either keeps
it (returns ``None``) or replaces its outputs by other variables, emitting new
equations and constants through the rewriter as needed. Replaced equations
disappear; equations left without a use are dropped by :func:`dce`.
Tensor-specific passes (``tenferro.jit``) are rules of this kind.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._core import Primitive
from ._custom import checkpoint_p, custom_call_p, custom_vjp_lin_p, remat_lin_p
from ._errors import RuleError, TiduError
from .graph import Eqn, Graph, Var, eval_eqn
from ._tracer import Tracer, aval_of
from ._vspace import vspace_of_aval

__all__ = [
    "Rewriter",
    "rewrite",
    "dce",
    "cse",
    "fold_constants",
    "run_passes",
    "use_counts",
    "NO_FOLD",
    "FOLD_SMALL_SIZE",
]

Pass = Callable[[Graph], Graph]


# ---------------------------------------------------------------------------
# dead code and common subexpressions, as passes (same object when unchanged)
# ---------------------------------------------------------------------------
def dce(graph: Graph) -> Graph:
    """:meth:`Graph.dce`, returning ``graph`` itself when nothing is dead."""
    live = {v for v in graph.outvars if type(v) is Var}
    dead = 0
    for eqn in reversed(graph.eqns):
        if any(o in live for o in eqn.outputs):
            live.update(eqn.inputs)
        else:
            dead += 1
    if dead == 0 and all(cv in live for cv in graph.constvars):
        return graph
    return graph.dce()


def cse(graph: Graph) -> Graph:
    """:meth:`Graph.cse`, returning ``graph`` itself when nothing is shared."""
    new = graph.cse()
    if len(new.eqns) == len(graph.eqns) and len(new.consts) == len(graph.consts):
        return graph  # cse only renames what it merges: equal counts mean nothing merged
    return new


def use_counts(graph: Graph) -> dict[Var, int]:
    """How many times each variable is read: once per equation input slot and
    once per output slot of the graph."""
    n: dict[Var, int] = {}
    for eqn in graph.eqns:
        for v in eqn.inputs:
            n[v] = n.get(v, 0) + 1
    for v in graph.outvars:
        if type(v) is Var:
            n[v] = n.get(v, 0) + 1
    return n


# ---------------------------------------------------------------------------
# the rewriter
# ---------------------------------------------------------------------------
class Rewriter:
    """What a rule sees while :func:`rewrite` builds the new graph.

    * :meth:`producer` — the equation of the new graph that computes a variable;
    * :meth:`value` — the concrete value of a constant (``None`` otherwise);
    * :attr:`uses` — read counts in the *input* graph (:func:`use_counts`);
      rules that remove a value only when it has one reader rely on them;
    * :meth:`emit` and :meth:`const` — new equations and constants.
    """

    __slots__ = ("graph", "uses", "eqns", "constvars", "consts", "_producer", "_const_of")

    def __init__(self, graph: Graph):
        self.graph = graph
        self.uses = use_counts(graph)
        self.eqns: list[Eqn] = []
        self.constvars: list[Var] = list(graph.constvars)
        self.consts: list[Any] = list(graph.consts)
        self._producer: dict[Var, Eqn] = {}
        self._const_of: dict[Var, Any] = dict(zip(graph.constvars, graph.consts))

    def producer(self, v: Var) -> Eqn | None:
        """The equation computing ``v`` in the graph being built (``None`` for
        inputs and constants)."""
        return self._producer.get(v)

    def value(self, v: Var) -> Any:
        """The concrete value of the constant ``v``; ``None`` when ``v`` is not a
        constant or its value is traced by an enclosing transformation."""
        c = self._const_of.get(v)
        return None if isinstance(c, Tracer) else c

    def is_const(self, v: Var) -> bool:
        return v in self._const_of

    def const(self, value: Any) -> Var:
        """A new constant of the graph holding ``value``."""
        v = Var(aval_of(value))
        self.constvars.append(v)
        self.consts.append(value)
        self._const_of[v] = value
        return v

    def append(self, eqn: Eqn) -> None:
        self.eqns.append(eqn)
        for o in eqn.outputs:
            self._producer[o] = eqn

    def emit(
        self, prim: Primitive, inputs: Sequence[Var], params: dict, outputs: Sequence[Var] | None = None
    ) -> list[Var]:
        """Append ``outputs = prim(*inputs, **params)``; outputs are new variables
        typed by the primitive's shape rule unless given (a rule replacing an
        equation by another may keep its output variables)."""
        if outputs is None:
            out = prim.abstract_eval(*[v.aval for v in inputs], **params)
            outputs = [Var(a) for a in out] if prim.multiple_results else [Var(out)]
        eqn = Eqn(prim, list(inputs), dict(params), list(outputs))
        self.append(eqn)
        return eqn.outputs


Rule = Callable[[Eqn, Rewriter], "Sequence[Var] | None"]


def rewrite(graph: Graph, rule: Rule, name: str | None = None) -> Graph:
    """Apply ``rule`` to every equation of ``graph`` in order (see the module
    docstring). Returns ``graph`` itself when the rule kept every equation.

    A rule returns ``None`` (keep the equation) or one variable per output of the
    equation, each of the output's aval; the equation is then dropped. The
    replacement may be the equation's own output variable only if the rule
    emitted an equation computing it (:meth:`Rewriter.emit` with ``outputs``).
    """
    rw = Rewriter(graph)
    env: dict[Var, Var] = {}
    changed = False
    for eqn in graph.eqns:
        ins = eqn.inputs
        if env:
            renamed = [env.get(v, v) for v in ins]
            if any(a is not b for a, b in zip(renamed, ins)):
                eqn = Eqn(eqn.prim, renamed, eqn.params, eqn.outputs)
        n_before = len(rw.eqns)
        out = rule(eqn, rw)
        if out is None:
            if len(rw.eqns) != n_before:
                raise RuleError(f"pass {name or rule.__name__}: kept {eqn.prim.name} but emitted equations")
            rw.append(eqn)
            continue
        changed = True
        if len(out) != len(eqn.outputs):
            raise RuleError(
                f"pass {name or rule.__name__}: {len(out)} replacements for the "
                f"{len(eqn.outputs)} outputs of {eqn.prim.name}"
            )
        for o, r in zip(eqn.outputs, out):
            if r.aval != o.aval:
                raise RuleError(
                    f"pass {name or rule.__name__}: replaced an output of {eqn.prim.name} of type "
                    f"{o.aval} by a value of type {r.aval}"
                )
            if r is o:
                if rw.producer(o) is None:
                    raise RuleError(
                        f"pass {name or rule.__name__}: replaced {eqn.prim.name}'s output by itself "
                        "without emitting an equation computing it"
                    )
            else:
                env[o] = r
    if not changed:
        return graph
    outvars = [env.get(v, v) if type(v) is Var else v for v in graph.outvars]
    return Graph(list(graph.invars), rw.constvars, rw.consts, rw.eqns, outvars, graph.in_tree, graph.out_tree)


# ---------------------------------------------------------------------------
# constant folding
# ---------------------------------------------------------------------------
NO_FOLD: frozenset[Primitive] = frozenset({custom_call_p, custom_vjp_lin_p, remat_lin_p, checkpoint_p})
"""Primitives never evaluated at compile time: they call user code (a
``custom_jvp``/``custom_vjp`` function, a checkpointed body), which may have
effects, or (``custom_vjp_lin``) have no evaluation rule. No tidu or tenferro
primitive is random or effectful otherwise: random draws happen eagerly and
enter graphs as constants."""

FOLD_SMALL_SIZE = 4096
"""Results with at most this many elements are always folded."""


def _size(aval: Any) -> int | None:
    try:
        return int(vspace_of_aval(aval).size(aval))
    except (TiduError, NotImplementedError):  # an aval type without a vector space or a size
        return None


def fold_constants(graph: Graph, *, skip: frozenset = NO_FOLD, small: int = FOLD_SMALL_SIZE) -> Graph:
    """Evaluate, at compile time, every equation whose inputs are all constants
    of ``graph`` (concrete, not traced by an enclosing transformation); its
    outputs become constants.

    The size limit: an equation is folded when its outputs together have at most
    ``small`` elements, or no more elements than its constant inputs together.
    So ``broadcast_in_dim`` of a scalar to a large shape (or an outer product)
    stays an equation: folding it would trade a cheap run-time fill for a large
    constant held by the compiled program, while reductions, contractions and
    elementwise maps of constants fold. Primitives in ``skip`` are never folded
    (:data:`NO_FOLD`).
    """

    def rule(eqn: Eqn, rw: Rewriter) -> list[Var] | None:
        if eqn.prim in skip:
            return None
        args = []
        in_size = 0
        for v in eqn.inputs:
            c = rw.value(v)
            if c is None:
                return None
            args.append(c)
            in_size += _size(v.aval) or 0
        out_size = 0
        for o in eqn.outputs:
            s = _size(o.aval)
            if s is None:
                return None
            out_size += s
        if out_size > small and out_size > in_size:
            return None
        env: dict = {}
        eval_eqn(eqn, args, env)
        return [rw.const(env[o]) for o in eqn.outputs]

    return rewrite(graph, rule, "fold_constants")


# ---------------------------------------------------------------------------
# fixed point
# ---------------------------------------------------------------------------
def run_passes(graph: Graph, passes: Sequence[Pass], max_rounds: int = 16, log: list | None = None) -> Graph:
    """Run ``passes`` in order, repeatedly, until a whole round changes nothing
    (every pass returned its input) or ``max_rounds`` rounds have run.

    Each pass must return its input object when it changes nothing (the no-change
    test is identity). ``log``, when given, receives ``(round, pass name,
    equations before, equations after)`` for every pass that changed the graph.
    Stopping at ``max_rounds`` (passes that keep undoing each other) still
    returns a valid graph, the last one made.
    """
    for rnd in range(max_rounds):
        changed = False
        for p in passes:
            new = p(graph)
            if new is not graph:
                if log is not None:
                    log.append((rnd, getattr(p, "__name__", repr(p)), len(graph.eqns), len(new.eqns)))
                graph = new
                changed = True
        if not changed:
            break
    return graph
