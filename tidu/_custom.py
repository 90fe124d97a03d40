"""User-defined derivatives (``custom_jvp``, ``custom_vjp``), ``checkpoint`` and
``stop_gradient``.

Each is handled by the trace that meets it: outside differentiation the plain
function runs; a :class:`~tidu._ad.JVPTrace` uses the user's rule. Under
linearization the rule's tangent work is staged like any other, so reverse mode
of a ``custom_jvp`` function transposes the user's JVP, and a ``custom_vjp``
function stages one linear primitive whose transpose is the user's ``bwd``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ._argspec import ArgSpec, describe_leaf, is_static_leaf
from ._core import Primitive, current_stack, find_top_trace
from ._errors import CustomRuleError, InvalidArgumentError, NonDifferentiableError, UnregisteredTypeError
from ._ad import JVPTrace, backward_pass, jvp_flat, linearize_flat
from ._batching import BatchTrace, BatchTracer, move_batch_axis, vmap
from .graph import Graph, GraphTrace, make_graph
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._tracer import Tracer, aval_of
from ._vspace import vspace_of_aval
from ._zero import Zero, instantiate

__all__ = ["custom_jvp", "custom_vjp", "checkpoint", "remat", "stop_gradient"]


def _contains_tracer_of(trace, tree: Any) -> bool:
    for leaf in tree_flatten(tree)[0]:
        if isinstance(leaf, Tracer) and leaf._trace is trace:
            return True
        if isinstance(leaf, Tracer) and getattr(leaf, "primal", None) is not None:
            if _contains_tracer_of(trace, leaf.primal):
                return True
    return False


def _tangent_aval(x: Any) -> Any:
    a = aval_of(x)
    return vspace_of_aval(a).tangent_aval(a)


class custom_jvp:
    """A function with a user-supplied JVP rule (same contract as ``jax.custom_jvp``).

    >>> @custom_jvp
    ... def f(x): ...
    >>> @f.defjvp
    ... def f_jvp(primals, tangents): return f(*primals), ...

    The rule receives tuples of primals and tangents (zero tangents are dense
    zeros) and returns ``(primal_out, tangent_out)`` of matching structure.
    Reverse mode transposes the rule's (linear) tangent computation.
    """

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.jvp: Callable[..., Any] | None = None
        self._out_types: dict = {}  # stage_custom_call's cache of output structure and avals

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise CustomRuleError(f"custom_jvp function {self.fun.__name__!r} has no JVP rule; call .defjvp")
        top = find_top_trace(tree_flatten(args)[0])
        if top is None:
            return self.fun(*args)
        return _handler(top, "custom_jvp")(top, self, args)


def custom_jvp_process(trace, fn: custom_jvp, args: tuple) -> Any:
    leaves, in_tree = tree_flatten(args)
    primals, tangents = [], []
    for x in leaves:
        p, t = trace.split(x)
        primals.append(p)
        if type(t) is Zero:
            ta = t.aval
            t = None if ta is None else vspace_of_aval(ta).zeros(ta)
        tangents.append(t)
    res = fn.jvp(tree_unflatten(in_tree, primals), tree_unflatten(in_tree, tangents))
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise CustomRuleError(
            f"custom_jvp rule of {fn.fun.__name__!r} must return a pair (primal_out, tangent_out), got {type(res).__name__}"
        )
    p_out, t_out = res
    p_flat, p_tree = tree_flatten(p_out)
    t_flat, t_tree = tree_flatten(t_out)
    if p_tree != t_tree:
        raise CustomRuleError(
            f"custom_jvp rule of {fn.fun.__name__!r}: primal output structure {p_tree} differs from "
            f"tangent output structure {t_tree}"
        )
    if _contains_tracer_of(trace, p_out):
        raise CustomRuleError(
            f"custom_jvp function {fn.fun.__name__!r} closes over a value being differentiated; "
            "pass it as an explicit argument"
        )
    outs = []
    for p, t in zip(p_flat, t_flat):
        if t is None or type(t) is Zero:
            outs.append(p)
            continue
        want, got = _tangent_aval(p), aval_of(t)
        if want != got:
            raise CustomRuleError(
                f"custom_jvp rule of {fn.fun.__name__!r} returned a tangent of type {got} "
                f"for a primal output whose tangent type is {want}"
            )
        outs.append(trace.pure_or_wrap(p, t))
    return tree_unflatten(p_tree, outs)


class custom_vjp:
    """A function with a user-supplied VJP (same contract as ``jax.custom_vjp``).

    ``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct_out) -> tuple`` with one
    cotangent pytree (or ``None`` for zero) per positional argument. Forward-mode
    (``jvp``) differentiation of such a function is an error, as in JAX.
    """

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self._out_types: dict = {}  # stage_custom_call's cache of output structure and avals

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None:
            raise CustomRuleError(f"custom_vjp function {self.fun.__name__!r} has no rules; call .defvjp(fwd, bwd)")
        top = find_top_trace(tree_flatten(args)[0])
        if top is None:
            return self.fun(*args)
        return _handler(top, "custom_vjp")(top, self, args)


custom_vjp_lin_p = Primitive("custom_vjp_lin", multiple_results=True)


@custom_vjp_lin_p.def_impl
def _custom_vjp_lin_impl(*args, fn, **params):
    raise NonDifferentiableError(
        f"forward-mode differentiation (jvp) of custom_vjp function {fn.fun.__name__!r} is not "
        "supported; define it with custom_jvp to use forward mode"
    )


@custom_vjp_lin_p.def_abstract_eval
def _custom_vjp_lin_abstract(*avals, out_avals, **params):
    return list(out_avals)


@custom_vjp_lin_p.def_transpose
def _custom_vjp_lin_transpose(cts, *args, fn, n_res, res_tree, in_tree, out_tree, has_tangent, out_avals):
    res = tree_unflatten(res_tree, args[:n_res])
    cts = [instantiate(c) for c in cts]
    ct_in = fn.bwd(res, tree_unflatten(out_tree, cts))
    n_args = len(in_tree.children)
    if not isinstance(ct_in, (tuple, list)) or len(ct_in) != n_args:
        raise CustomRuleError(
            f"custom_vjp bwd of {fn.fun.__name__!r} must return a tuple of {n_args} cotangents "
            f"(one per argument), got {type(ct_in).__name__}"
            + (f" of length {len(ct_in)}" if isinstance(ct_in, (tuple, list)) else "")
        )
    flat: list[Any] = []
    for sub, ct in zip(in_tree.children, ct_in):
        if ct is None:
            flat.extend([None] * sub.num_leaves)
            continue
        leaves, tree = tree_flatten(ct)
        if tree != sub:
            raise CustomRuleError(
                f"custom_vjp bwd of {fn.fun.__name__!r} returned a cotangent of structure {tree} "
                f"for an argument of structure {sub}"
            )
        flat.extend(leaves)
    lin_args = args[n_res:]
    picked = [c for c, h in zip(flat, has_tangent) if h]
    for c, a in zip(picked, lin_args):
        if c is not None and aval_of(c) != a.aval:
            raise CustomRuleError(
                f"custom_vjp bwd of {fn.fun.__name__!r} returned a cotangent of type {aval_of(c)}, expected {a.aval}"
            )
    return [None] * n_res + picked


def custom_vjp_process(trace, fn: custom_vjp, args: tuple) -> Any:
    leaves, in_tree = tree_flatten(args)
    pairs = [trace.split(x) for x in leaves]
    primals = [p for p, _ in pairs]
    has_tangent = tuple(type(t) is not Zero for _, t in pairs)
    res = fn.fwd(*tree_unflatten(in_tree, primals))
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise CustomRuleError(
            f"custom_vjp fwd of {fn.fun.__name__!r} must return a pair (output, residuals), got {type(res).__name__}"
        )
    out, residuals = res
    if _contains_tracer_of(trace, (out, residuals)):
        raise CustomRuleError(
            f"custom_vjp function {fn.fun.__name__!r} closes over a value being differentiated; "
            "pass it as an explicit argument"
        )
    out_flat, out_tree = tree_flatten(out)
    res_flat, res_tree = tree_flatten(residuals)
    t_in = [t for (_, t), h in zip(pairs, has_tangent) if h]
    t_out = custom_vjp_lin_p.bind(
        *res_flat,
        *t_in,
        fn=fn,
        n_res=len(res_flat),
        res_tree=res_tree,
        in_tree=in_tree,
        out_tree=out_tree,
        has_tangent=has_tangent,
        out_avals=tuple(_tangent_aval(o) for o in out_flat),
    )
    return tree_unflatten(out_tree, [trace.pure_or_wrap(o, t) for o, t in zip(out_flat, t_out)])


# ---- custom_jvp / custom_vjp functions inside a graph --------------------------------
# A graph being built (make_graph, checkpoint) records a call of a custom_jvp/custom_vjp
# function as one equation, so that differentiating the graph later still uses the
# user's rule instead of differentiating ``fun``.
custom_call_p = Primitive("custom_call", multiple_results=True)


@custom_call_p.def_impl
def _custom_call_impl(*args, fn, in_tree, out_tree, out_avals):
    return tree_flatten(fn.fun(*tree_unflatten(in_tree, args)))[0]


@custom_call_p.def_abstract_eval
def _custom_call_abstract(*avals, fn, in_tree, out_tree, out_avals):
    return list(out_avals)


@custom_call_p.def_jvp
def _custom_call_jvp(primals, tangents, *, fn, in_tree, out_tree, out_avals):
    # Call the custom function again under a fresh forward-mode trace: its own
    # machinery (custom_jvp_process / custom_vjp_process) applies the user's rule.
    def flat_fn(*leaves):
        return tree_flatten(fn(*tree_unflatten(in_tree, leaves)))[0]

    outs, t_outs, _ = jvp_flat(flat_fn, list(primals), list(tangents), _flat_tree(len(primals)))
    return outs, t_outs


@custom_call_p.def_batch
def _custom_call_batch(axis_size, args, dims, *, fn, in_tree, out_tree, out_avals):
    # the staged custom function called again under vmap, where its rules are batched too
    def flat(*leaves):
        return tree_flatten(fn(*tree_unflatten(in_tree, leaves)))[0]

    outs = vmap(flat, in_axes=tuple(dims), out_axes=0, axis_size=axis_size)(*args)
    return outs, [0] * len(outs)


def stage_custom_call(fn, args: tuple) -> Any:
    """Record ``fn(*args)`` (``fn`` a custom_jvp or custom_vjp) as one graph equation.

    ``fn.fun`` is traced once per input structure and avals, for its output
    structure and avals; the result is cached on ``fn`` (so it dies with it).
    """
    leaves, in_tree = tree_flatten(args)
    key = (in_tree, tuple(aval_of(x) for x in leaves))
    cache = fn._out_types  # (in_tree, input avals) -> (out_tree, output avals)
    hit = cache.get(key)
    if hit is None:
        body = make_graph(fn.fun, *args)  # only for the output avals and structure
        if any(isinstance(c, Tracer) for c in body.consts):
            raise CustomRuleError(
                f"{type(fn).__name__} function {fn.fun.__name__!r} closes over a traced value; "
                "pass it as an explicit argument"
            )
        hit = cache[key] = (body.out_tree, tuple(v.aval for v in body.outvars))
    out_tree, out_avals = hit
    outs = custom_call_p.bind(*leaves, fn=fn, in_tree=in_tree, out_tree=out_tree, out_avals=out_avals)
    return tree_unflatten(out_tree, outs)


class checkpoint:
    """Rematerialization: under reverse mode, store only the inputs of ``fun`` and
    recompute its residuals during the backward pass (``jax.checkpoint``).

    ``fun`` is traced once per call into a graph (closed-over traced values become
    explicit inputs), so its Python control flow must not depend on traced values.
    Static arguments are passed to ``fun`` as they are, not traced, so control flow
    may depend on them: the positions in ``static_argnums`` (as in ``jax.checkpoint``;
    as a decorator: ``functools.partial(tidu.checkpoint, static_argnums=1)``) and, as
    under a staged function (``tenferro.jit``), every Python scalar or string leaf
    (``checkpoint(body)(x, 3)`` with a loop count ``3``). Any other argument leaf must
    be a value of a registered type; one that is not raises
    :class:`UnregisteredTypeError` naming the argument and ``static_argnums``.
    """

    def __init__(self, fun: Callable[..., Any], *, static_argnums: int | Sequence[int] | None = None):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._where = f"tidu.checkpoint({getattr(fun, '__name__', 'fun')})"
        self._args = ArgSpec(fun, self._where, InvalidArgumentError, static_argnums=static_argnums)
        self.static_argnums = self._args.static_nums

    def __call__(self, *args: Any) -> Any:
        if not current_stack():
            return self.fun(*args)
        spec = self._args
        static_pos = spec.static_positions(len(args), InvalidArgumentError)
        dyn = [(j, a) for j, a in enumerate(args) if j not in static_pos]
        leaves, tree = tree_flatten(tuple(a for _, a in dyn))
        mask = [not isinstance(x, Tracer) and is_static_leaf(x) for x in leaves]
        traced = [x for x, st in zip(leaves, mask) if not st]
        avals = [self._aval(x, i, dyn) for i, (x, st) in enumerate(zip(leaves, mask)) if not st]

        def flat_fun(*xs: Any) -> Any:
            it = iter(xs)
            full = [next(it) if not st else x for x, st in zip(leaves, mask)]
            return self.fun(*spec.merge_static(args, tree_unflatten(tree, full)))

        graph = make_graph(flat_fun, *avals, avals=True)
        explicit = list(graph.consts) + traced
        closed = Graph(list(graph.constvars) + list(graph.invars), [], [], graph.eqns, graph.outvars)
        top = find_top_trace(explicit)
        if top is None:
            outs = closed.eval_flat(*explicit)
        else:
            outs = _handler(top, "checkpoint")(top, closed, explicit)
        return tree_unflatten(graph.out_tree, outs)

    def _aval(self, x: Any, i: int, dyn: list) -> Any:
        """The aval of argument leaf ``i`` (of the non-static arguments ``dyn``:
        ``(position, value)`` pairs), or an error naming it and ``static_argnums``."""
        try:
            return aval_of(x)
        except UnregisteredTypeError as exc:
            n = i
            for j, a in dyn:
                k = len(tree_flatten(a)[0])
                if n < k:
                    break
                n -= k
            where = describe_leaf([(self._args.label(p), a) for p, a in dyn], i)
            raise UnregisteredTypeError(
                f"{self._where}: {where} cannot be traced ({exc}). Mark the argument static to pass it to "
                f"the function as it is: tidu.checkpoint(fun, static_argnums={j})"
            ) from None


remat = checkpoint


remat_lin_p = Primitive("checkpoint_lin", multiple_results=True)


@remat_lin_p.def_impl
def _remat_lin_impl(*args, graph, has_tangent, out_avals):
    n = len(has_tangent)
    primals = list(args[:n])
    it = iter(args[n:])
    tangents = [next(it) if h else Zero.like(p) for p, h in zip(primals, has_tangent)]
    _, t_out, _ = jvp_flat(_flat_fun(graph), primals, tangents, _flat_tree(n))
    return [instantiate(t) for t in t_out]


@remat_lin_p.def_abstract_eval
def _remat_lin_abstract(*avals, graph, has_tangent, out_avals):
    return list(out_avals)


@remat_lin_p.def_jvp
def _remat_lin_jvp(primals, tangents, **params):
    # Differentiating the staged tangent map again (grad of jvp, vjp of linearize):
    # the impl binds only primitives, so forward mode runs through it inline.
    def fun(*args):
        return _remat_lin_impl(*args, **params)

    outs, t_outs, _ = jvp_flat(fun, list(primals), list(tangents), _flat_tree(len(primals)))
    return outs, t_outs


@remat_lin_p.def_transpose
def _remat_lin_transpose(cts, *args, graph, has_tangent, out_avals):
    n = len(has_tangent)
    primals = list(args[:n])
    _, lin, _ = linearize_flat(_flat_fun(graph), primals, _flat_tree(n), has_tangent)
    ct_in = backward_pass(lin, cts)
    return [None] * n + ct_in


def _flat_fun(graph: Graph) -> Callable[..., Any]:
    def f(*xs):
        return graph.eval_flat(*xs)

    return f


def _flat_tree(n: int):
    return tree_flatten(tuple(range(n)))[1]


def checkpoint_process(trace, graph: Graph, args: list) -> list:
    pairs = [trace.split(x) for x in args]
    primals = [p for p, _ in pairs]
    has_tangent = tuple(type(t) is not Zero for _, t in pairs)
    out = graph.eval_flat(*primals)
    t_in = [t for (_, t), h in zip(pairs, has_tangent) if h]
    t_out = remat_lin_p.bind(
        *primals, *t_in, graph=graph, has_tangent=has_tangent, out_avals=tuple(_tangent_aval(o) for o in out)
    )
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


# ---------------------------------------------------------------------------
# How each transformation handles a custom rule or a checkpoint: one table,
# keyed by trace type (a trace type not listed inlines the function).
# ---------------------------------------------------------------------------
def _inline_call(trace: Any, fn: Any, args: tuple) -> Any:
    return fn.fun(*args)


def _inline_graph(trace: Any, graph: Graph, args: list) -> list:
    return graph.eval_flat(*args)


def _stage(trace: Any, fn: Any, args: tuple) -> Any:
    return stage_custom_call(fn, args)


# ---- custom rules under vmap --------------------------------------------------------------
# A custom_jvp/custom_vjp function met by a BatchTrace becomes a new custom function over the
# batched leaves whose function and rules are the originals under vmap; it is called on the
# unwrapped values, so a transformation below the batch (grad(vmap(f))) still uses the user's
# rule. Every output and residual gets its batch axis first.
def _batched_leaves(trace: BatchTrace, args: tuple) -> tuple[list, list, Any]:
    leaves, in_tree = tree_flatten(args)
    vals = [x.val if type(x) is BatchTracer and x._trace is trace else x for x in leaves]
    dims = [x.bdim if type(x) is BatchTracer and x._trace is trace else None for x in leaves]
    return vals, dims, in_tree


def _flat(fun: Callable[..., Any], in_tree: Any, out_tree_box: list) -> Callable[..., list]:
    def flat(*leaves):
        out_flat, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_tree_box[:] = [out_tree]
        return out_flat

    return flat


def _rewrap(trace: BatchTrace, outs: list, out_tree: Any) -> Any:
    return tree_unflatten(out_tree, [BatchTracer(trace, o, 0) for o in outs])


def custom_jvp_batch(trace: BatchTrace, fn: custom_jvp, args: tuple) -> Any:
    vals, dims, in_tree = _batched_leaves(trace, args)
    n, size, box = len(vals), trace.axis_size, []
    batched = custom_jvp(vmap(_flat(fn.fun, in_tree, box), in_axes=tuple(dims), out_axes=0, axis_size=size))

    def example_rule(*xs):
        p_out, t_out = fn.jvp(tree_unflatten(in_tree, xs[:n]), tree_unflatten(in_tree, xs[n:]))
        p_flat, p_tree = tree_flatten(p_out)
        box[:] = [p_tree]
        return p_flat, tree_flatten(t_out)[0]

    @batched.defjvp
    def batched_rule(primals, tangents):
        return vmap(example_rule, in_axes=tuple(dims) * 2, out_axes=0, axis_size=size)(*primals, *tangents)

    outs = batched(*vals)
    return _rewrap(trace, outs, box[0])


def custom_vjp_batch(trace: BatchTrace, fn: custom_vjp, args: tuple) -> Any:
    vals, dims, in_tree = _batched_leaves(trace, args)
    size, box, res_box = trace.axis_size, [], []
    batched = custom_vjp(vmap(_flat(fn.fun, in_tree, box), in_axes=tuple(dims), out_axes=0, axis_size=size))

    def example_fwd(*xs):
        out, res = fn.fwd(*tree_unflatten(in_tree, xs))
        out_flat, out_tree = tree_flatten(out)
        res_flat, res_tree = tree_flatten(res)
        box[:], res_box[:] = [out_tree], [res_tree]
        return out_flat, res_flat

    def fwd(*xs):
        return vmap(example_fwd, in_axes=tuple(dims), out_axes=0, axis_size=size)(*xs)

    def bwd(res, cts):
        def example_bwd(res_flat, ct_flat):
            ct_in = fn.bwd(tree_unflatten(res_box[0], res_flat), tree_unflatten(box[0], ct_flat))
            flat = []
            for sub, ct in zip(in_tree.children, ct_in):
                flat += [None] * sub.num_leaves if ct is None else tree_flatten(ct)[0]
            return flat

        per = vmap(example_bwd, in_axes=0, out_axes=0, axis_size=size)(list(res), list(cts))
        out = []  # the cotangent of a shared (unmapped) leaf is the sum over the examples
        for ct, d in zip(per, dims):
            if ct is None:
                out.append(None)
            elif d is None:
                out.append(vspace_of_aval(aval_of(ct)).sum_axis(ct, 0))
            else:
                out.append(move_batch_axis(ct, 0, d, size))
        return tuple(out)

    batched.defvjp(fwd, bwd)
    outs = batched(*vals)
    return _rewrap(trace, outs, box[0])


_HANDLERS: dict[tuple[type, str], Callable[..., Any]] = {
    (JVPTrace, "custom_jvp"): custom_jvp_process,
    (JVPTrace, "custom_vjp"): custom_vjp_process,
    (JVPTrace, "checkpoint"): checkpoint_process,
    (GraphTrace, "custom_jvp"): _stage,
    (GraphTrace, "custom_vjp"): _stage,
    (BatchTrace, "custom_jvp"): custom_jvp_batch,
    (BatchTrace, "custom_vjp"): custom_vjp_batch,
}
_DEFAULTS = {"custom_jvp": _inline_call, "custom_vjp": _inline_call, "checkpoint": _inline_graph}


def _handler(trace: Any, kind: str) -> Callable[..., Any]:
    """The rule with which ``trace`` processes a ``kind`` (custom_jvp, custom_vjp, checkpoint)."""
    for t in type(trace).__mro__:
        h = _HANDLERS.get((t, kind))
        if h is not None:
            return h
    return _DEFAULTS[kind]
