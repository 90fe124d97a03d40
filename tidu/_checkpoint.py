"""``checkpoint`` (rematerialization) and ``stop_gradient``.

A checkpointed function is traced into a graph (closed-over traced values become explicit
inputs); forward mode stages one ``checkpoint_lin`` equation holding only the graph's inputs,
whose evaluation, JVP, transpose and batching recompute the graph's linearization. A graph
being built (``tenferro.jit``, ``make_graph``) and ``vmap`` record one ``checkpoint`` equation
instead of the body's, so a derivative taken later still recomputes.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ._ad import backward_pass, jvp_flat, linearize_flat
from ._argspec import ArgSpec, describe_leaf, is_static_leaf
from ._batching import vmap
from ._call import INLINED
from ._core import Primitive, current_stack, find_top_trace, is_undefined
from ._custom_call import flat_tree
from ._custom_checks import tangent_aval
from ._custom_rules import handler
from ._errors import InvalidArgumentError, UnregisteredTypeError
from .graph import Graph, make_graph
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._tracer import Tracer, aval_of
from ._zero import Zero, instantiate

__all__ = [
    "checkpoint",
    "remat",
    "remat_lin_p",
    "remat_barrier_p",
    "checkpoint_process",
    "stop_gradient",
    "stop_gradient_p",
]


class checkpoint:
    """Rematerialization: under reverse mode, store only the inputs of ``fun`` and
    recompute its residuals during the backward pass (``jax.checkpoint``).

    ``fun`` is traced once per call into a graph (closed-over traced values become
    explicit inputs), so its Python control flow must not depend on traced values.
    Static arguments are passed to ``fun`` as they are, not traced, so control flow
    may depend on them: the positions in ``static_argnums`` (as in ``jax.checkpoint``;
    as a decorator: ``functools.partial(tidu.checkpoint, static_argnums=1)``; a static
    parameter passed by keyword is static too) and, as under a staged function
    (``tenferro.jit``), every Python scalar or string leaf (``checkpoint(body)(x, 3)``
    with a loop count ``3``). Keyword arguments are accepted and traced like positional
    ones. Any other argument leaf must be a value of a registered type; one that is not
    raises :class:`UnregisteredTypeError` naming the argument and ``static_argnums``.

    ``prevent_cse`` and ``policy`` are taken for ``jax.checkpoint``'s signature. ``prevent_cse``
    has no effect: the recomputation always reads the inputs through a barrier, so a compiled
    function's common-subexpression elimination never merges it with the forward computation
    (what ``prevent_cse=True`` does in JAX), whichever value is passed. Saving policies are not
    supported: everything but the inputs is recomputed (JAX's default, ``policy=None``), and any
    other ``policy`` raises :class:`InvalidArgumentError`; to keep a value, compute it outside the
    checkpointed function and pass it in.
    """

    def __init__(
        self,
        fun: Callable[..., Any],
        *,
        prevent_cse: bool = True,
        policy: Callable[..., Any] | None = None,
        static_argnums: int | Sequence[int] | None = None,
    ):
        if policy is not None:
            raise InvalidArgumentError(
                f"tidu.checkpoint({getattr(fun, '__name__', 'fun')}): policy={policy!r} is not supported; "
                "saving policies are not implemented: tidu.checkpoint saves only the inputs and recomputes "
                "everything else (policy=None). To keep a value, compute it outside the checkpointed function "
                "and pass it in"
            )
        if not isinstance(prevent_cse, bool):
            raise InvalidArgumentError(
                f"tidu.checkpoint: prevent_cse must be a bool, got {prevent_cse!r} of type {type(prevent_cse).__name__}"
            )
        functools.update_wrapper(self, fun)
        self.prevent_cse = prevent_cse  # (no effect: the recomputation is always behind a barrier)
        self.fun = fun
        self._where = f"tidu.checkpoint({getattr(fun, '__name__', 'fun')})"
        self._args = ArgSpec(fun, self._where, InvalidArgumentError, static_argnums=static_argnums)
        self.static_argnums = self._args.static_nums

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not current_stack():
            return self.fun(*args, **kwargs)
        spec = self._args
        static_pos = spec.static_positions(len(args), InvalidArgumentError)
        static_kw = {k: v for k, v in kwargs.items() if k in spec.static_names}
        dyn_kw = {k: v for k, v in kwargs.items() if k not in static_kw}
        dyn = [(j, a) for j, a in enumerate(args) if j not in static_pos]
        parts = [(spec.label(j), a) for j, a in dyn] + [
            (f"keyword argument {k!r}", v) for k, v in sorted(dyn_kw.items())
        ]
        leaves, tree = tree_flatten((tuple(a for _, a in dyn), dyn_kw))
        mask = [not isinstance(x, Tracer) and is_static_leaf(x) for x in leaves]
        traced = [x for x, st in zip(leaves, mask) if not st]
        avals = [self._aval(x, i, parts) for i, (x, st) in enumerate(zip(leaves, mask)) if not st]

        static_out: list = []  # the output's structure, which leaves are static, and those leaves

        def flat_fun(*xs: Any) -> Any:
            it = iter(xs)
            dyn_args, kw = tree_unflatten(tree, [next(it) if not st else x for x, st in zip(leaves, mask)])
            out = self.fun(*spec.merge_static(args, dyn_args), **kw, **static_kw)
            # a Python scalar or string in the output (a count, a flag) depends on no traced
            # value: it passes through as it is, as a static argument does
            o_leaves, o_tree = tree_flatten(out)
            keep = [not isinstance(o, Tracer) and is_static_leaf(o) for o in o_leaves]
            static_out[:] = [o_tree, keep, [o for o, k in zip(o_leaves, keep) if k]]
            return [o for o, k in zip(o_leaves, keep) if not k]

        graph = make_graph(flat_fun, *avals, avals=True)
        explicit = list(graph.consts) + traced
        closed = Graph(list(graph.constvars) + list(graph.invars), [], [], graph.eqns, graph.outvars)
        top = find_top_trace(explicit)
        if top is None:
            outs = closed.eval_flat(*explicit)
        else:
            outs = handler(top, "checkpoint")(top, closed, explicit)
        o_tree, keep, fixed = static_out
        dyn_it, fixed_it = iter(outs), iter(fixed)
        return tree_unflatten(o_tree, [next(fixed_it) if k else next(dyn_it) for k in keep])

    def _aval(self, x: Any, i: int, parts: list) -> Any:
        """The aval of argument leaf ``i`` (of the non-static arguments ``parts``: ``(label,
        value)`` pairs), or an error naming it and ``static_argnums``."""
        try:
            return aval_of(x)
        except UnregisteredTypeError as exc:
            where = describe_leaf(parts, i)
            n = i
            for label, value in parts:
                k = len(tree_flatten(value)[0])
                if n < k:
                    break
                n -= k
            fix = (
                f"tidu.checkpoint(fun, static_argnums={label.split()[1]})"
                if label.startswith("argument ")
                else "pass it by position and name it in static_argnums, or bind it with functools.partial"
            )
            raise UnregisteredTypeError(
                f"{self._where}: {where} cannot be traced ({exc}). Mark the argument static to pass it to "
                f"the function as it is: {fix}"
            ) from None


remat = checkpoint


remat_lin_p = Primitive("checkpoint_lin", multiple_results=True)


@remat_lin_p.def_impl
def _remat_lin_impl(*args, graph, has_tangent, out_avals):
    n = len(has_tangent)
    primals = list(args[:n])
    it = iter(args[n:])
    tangents = [next(it) if h else Zero.like(p) for p, h in zip(primals, has_tangent)]
    _, t_out, _ = jvp_flat(_flat_fun(graph), primals, tangents, flat_tree(n))
    return [instantiate(t) for t in t_out]


@remat_lin_p.def_abstract_eval
def _remat_lin_abstract(*avals, graph, has_tangent, out_avals):
    return list(out_avals)


@remat_lin_p.def_jvp
def _remat_lin_jvp(primals, tangents, **params):
    # Differentiating the staged tangent map again (grad of jvp, vjp of linearize):
    # the impl binds only primitives, so forward mode runs through it inline.
    outs, t_outs, _ = jvp_flat(_impl_of(params), list(primals), list(tangents), flat_tree(len(primals)))
    return outs, t_outs


@remat_lin_p.def_batch
def _remat_lin_batch(axis_size, args, dims, **params):
    # the recomputed tangent map under vmap (vmap of jvp or of linearize of a checkpoint)
    outs = vmap(_impl_of(params), in_axes=tuple(dims), out_axes=0, axis_size=axis_size)(*args)
    return outs, [None if o is None else 0 for o in outs]


@remat_lin_p.def_transpose
def _remat_lin_transpose(cts, *args, graph, has_tangent, out_avals):
    n = len(has_tangent)
    # the recomputation reads the inputs through a barrier: in a graph (tenferro.jit of grad)
    # common-subexpression elimination would otherwise merge it with the forward computation,
    # which then stays alive for the backward pass (no memory saved)
    primals = remat_barrier_p.bind(*args[:n])
    _, lin, _ = linearize_flat(_flat_fun(graph), primals, flat_tree(n), has_tangent)
    ct_in = backward_pass(lin, cts)
    return [None] * n + ct_in


remat_barrier_p = Primitive("checkpoint_barrier", multiple_results=True)
"""The identity, an equation of its own: what reads its outputs is no common subexpression of
what reads its inputs (JAX's ``optimization_barrier``)."""
remat_barrier_p.def_impl(lambda *xs: list(xs))
remat_barrier_p.def_abstract_eval(lambda *avals: list(avals))
remat_barrier_p.def_linear(lambda cts, *args: list(cts))
remat_barrier_p.def_batch(lambda axis_size, args, dims: (remat_barrier_p.bind(*args), list(dims)))


def _impl_of(params: dict) -> Callable[..., Any]:
    def fun(*args: Any) -> Any:
        return _remat_lin_impl(*args, **params)

    return fun


def _flat_fun(graph: Graph) -> Callable[..., Any]:
    def f(*xs):
        return graph.eval_flat(*xs)

    return f


checkpoint_p = Primitive("checkpoint", multiple_results=True)
"""A checkpointed body met while a graph is built (``tenferro.jit``, ``make_graph``): one
equation applying the body's closed graph (parameter ``graph``), so that differentiating the
built graph later (``grad(jit(f))``, ``linearize(jit(f))``) still keeps only the body's inputs
and recomputes the rest in the backward pass, as :func:`checkpoint` does outside a graph (JAX's
``remat``). A compiler inlines it (:data:`tidu._call.INLINED`) before it optimizes."""
INLINED[checkpoint_p] = lambda params: params["graph"]


@checkpoint_p.def_impl
def _checkpoint_impl(*args, graph):
    return graph.eval_flat(*args)


@checkpoint_p.def_abstract_eval
def _checkpoint_abstract(*avals, graph):
    return [v.aval for v in graph.outvars]


@checkpoint_p.def_jvp
def _checkpoint_jvp(primals, tangents, *, graph):
    out = checkpoint_p.bind(*primals, graph=graph)
    return out, recomputed_tangents(graph, list(primals), list(tangents), out)


def recomputed_tangents(graph: Graph, primals: list, tangents: list, out: list) -> list:
    """The output tangents of the checkpointed ``graph`` at ``primals`` (its outputs ``out``): one
    ``checkpoint_lin`` equation holding only the inputs, which recomputes the linearization."""
    has_tangent = tuple(type(t) is not Zero for t in tangents)
    if not any(has_tangent):
        return [Zero.like(o) for o in out]
    t_in = [t for t, h in zip(tangents, has_tangent) if h]
    out_avals = tuple(tangent_aval(o) for o in out)
    return remat_lin_p.bind(*primals, *t_in, graph=graph, has_tangent=has_tangent, out_avals=out_avals)


@checkpoint_p.def_batch
def _checkpoint_batch(axis_size, args, dims, *, graph):
    # the body under vmap, staged again as one checkpoint (every output mapped on its first axis)
    run = vmap(graph.eval_flat, in_axes=tuple(dims), out_axes=0, axis_size=axis_size)
    batched = make_graph(run, *[aval_of(a) for a in args], avals=True)
    closed = Graph(list(batched.constvars) + list(batched.invars), [], [], batched.eqns, batched.outvars)
    outs = checkpoint_p.bind(*batched.consts, *args, graph=closed)
    return outs, [0] * len(outs)


@checkpoint_p.def_transpose
def _checkpoint_transpose(cts, *args, graph):
    # a checkpointed body inside a linear function being transposed (linear_transpose of a
    # compiled function): the body's own transpose in its linear operands
    undefined = [is_undefined(a) for a in args]
    partial = Graph(
        [v for v, u in zip(graph.invars, undefined) if u],
        [v for v, u in zip(graph.invars, undefined) if not u],
        [a for a, u in zip(args, undefined) if not u],
        graph.eqns,
        list(graph.outvars),
    )
    ct_in = iter(backward_pass(partial, list(cts)))
    return [next(ct_in) if u else None for u in undefined]


def stage_checkpoint(trace: Any, graph: Graph, args: list) -> list:
    """The checkpoint of ``graph`` applied to ``args``, recorded as one ``checkpoint`` equation
    of the graph ``trace`` builds (see :data:`checkpoint_p`)."""
    return checkpoint_p.bind(*args, graph=graph)


def checkpoint_process(trace: Any, graph: Graph, args: list) -> list:
    pairs = [trace.split(x) for x in args]
    primals = [p for p, _ in pairs]
    out = graph.eval_flat(*primals)
    t_out = recomputed_tangents(graph, primals, [t for _, t in pairs], out)
    return [trace.pure_or_wrap(o, t) for o, t in zip(out, t_out)]


stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x: x)
stop_gradient_p.def_abstract_eval(lambda a: a)
stop_gradient_p.def_batch(lambda axis_size, args, dims: (stop_gradient_p.bind(args[0]), dims[0]))


@stop_gradient_p.def_jvp
def _stop_gradient_jvp(primals, tangents):
    # Re-bind on the primal so that enclosing (lower-level) transformations stop
    # too: the value is a constant for every derivative order, as in JAX.
    (x,) = primals
    return stop_gradient_p.bind(x), Zero.like(x)


def stop_gradient(x: Any) -> Any:
    """Identity whose derivative is zero (applied to every leaf of a pytree)."""
    return tree_map(stop_gradient_p.bind, x)
