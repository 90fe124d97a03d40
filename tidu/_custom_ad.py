"""``custom_jvp`` and ``custom_vjp`` calls met by forward mode (:class:`~tidu._ad.JVPTrace`).

A ``custom_jvp`` call runs the user's rule on the primals and dense tangents; under
linearization its tangent work is staged like any other, so reverse mode transposes the
user's JVP. A ``custom_vjp`` call runs ``fwd`` and stages one linear primitive,
``custom_vjp_lin``, whose transpose is the user's ``bwd`` (its forward evaluation and its
batching are the error of forward mode over a ``custom_vjp`` function, as in JAX).
"""

from __future__ import annotations

from typing import Any

from ._core import Primitive
from ._custom_checks import any_tracer_above, any_tracer_of, closes_over_inner, merge_residuals, split_residuals
from ._custom_rules import CustomCall, in_tangent_avals
from ._errors import CustomRuleError, NonDifferentiableError
from ._pytree import tree_unflatten
from ._zero import Zero, instantiate

__all__ = ["custom_jvp_process", "custom_vjp_process", "custom_vjp_lin_p"]


def _closed_over_differentiated(call: CustomCall) -> CustomRuleError:
    return CustomRuleError(
        f"{call.kind} function {call.name!r} closes over a value being differentiated (a traced value of this "
        "derivative, met in its function or its rules); pass the value to the function as an explicit argument"
    )


def _closure_differentiated(call: CustomCall, differentiated: Any) -> bool:
    """Whether a value a closure-converted call closes over (its leading leaves) is
    differentiated. The rules say nothing about them: an error when an argument is
    differentiated too; when none is, the function's own derivative is the answer (as
    outside a graph, where the function then runs as written)."""
    k = call.n_closure
    if not any(differentiated[:k]):
        return False
    if any(differentiated[k:]):
        raise _closed_over_differentiated(call)
    return True


def custom_jvp_process(trace: Any, call: CustomCall, leaves: list) -> Any:
    primals, tangents = [], []
    for x in leaves:
        p, t = trace.split(x)
        primals.append(p)
        tangents.append(t)
    differentiated = [type(t) is not Zero for t in tangents]
    if not any(differentiated) or (call.n_closure and _closure_differentiated(call, differentiated)):
        return call.fun(*leaves)  # no argument differentiated: the function as written
    dense = [t.instantiate() if type(t) is Zero else t for t in tangents]  # None for integer leaves
    p_flat, t_flat, p_tree = call.jvp(primals, dense)
    if any_tracer_of(trace, p_flat) or any_tracer_of(trace, t_flat):
        raise _closed_over_differentiated(call)
    if any_tracer_above(trace, p_flat) or any_tracer_above(trace, t_flat):
        raise closes_over_inner(call, "derivative")
    return tree_unflatten(p_tree, [trace.pure_or_wrap(p, t) for p, t in zip(p_flat, t_flat)])


custom_vjp_lin_p = Primitive("custom_vjp_lin", multiple_results=True)


def _forward_mode_error(fn: CustomCall) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"forward-mode differentiation (jvp) of custom_vjp function {fn.name!r} is not "
        "supported; define it with custom_jvp to use forward mode"
    )


@custom_vjp_lin_p.def_impl
def _custom_vjp_lin_impl(*args, fn, **params):
    raise _forward_mode_error(fn)


@custom_vjp_lin_p.def_batch
def _custom_vjp_lin_batch(axis_size, args, dims, *, fn, **params):
    # bound on batched values only when a linear map of a custom_vjp function is evaluated
    # forward under vmap (vmap of jvp or of linearize): forward mode, the same error
    raise _forward_mode_error(fn)


@custom_vjp_lin_p.def_abstract_eval
def _custom_vjp_lin_abstract(*avals, out_avals, **params):
    return [a for a in out_avals if a is not None]


@custom_vjp_lin_p.def_transpose
def _custom_vjp_lin_transpose(cts, *args, fn, n_res, res_tree, res_static, in_avals, out_tree, has_tangent, out_avals):
    res = merge_residuals(args[:n_res], res_static)
    it = iter(cts)
    full = [None if a is None else instantiate(next(it)) for a in out_avals]  # None: an integer output's
    flat = fn.bwd(res, res_tree, full, out_tree, in_avals)
    return [None] * n_res + [c for c, h in zip(flat, has_tangent) if h]


def custom_vjp_process(trace: Any, call: CustomCall, leaves: list) -> Any:
    pairs = [trace.split(x) for x in leaves]
    primals = [p for p, _ in pairs]
    has_tangent = tuple(type(t) is not Zero for _, t in pairs)
    if not any(has_tangent) or (call.n_closure and _closure_differentiated(call, has_tangent)):
        return call.fun(*leaves)  # no argument differentiated: the function as written
    call.check_closure(trace)
    out_flat, out_tree, res_flat, res_tree = call.fwd(*primals)
    if any_tracer_of(trace, out_flat) or any_tracer_of(trace, res_flat):
        raise _closed_over_differentiated(call)
    if any_tracer_above(trace, out_flat) or any_tracer_above(trace, res_flat):
        raise closes_over_inner(call, "derivative")
    out_avals = in_tangent_avals(out_flat)
    if all(a is None for a in out_avals):  # integer outputs only: nothing to differentiate
        return tree_unflatten(out_tree, out_flat)
    res_dyn, res_static = split_residuals(res_flat)
    t_out = custom_vjp_lin_p.bind(
        *res_dyn,
        *[t for (_, t), h in zip(pairs, has_tangent) if h],
        fn=call,
        n_res=len(res_dyn),
        res_tree=res_tree,
        res_static=res_static,
        in_avals=in_tangent_avals(primals),
        out_tree=out_tree,
        has_tangent=has_tangent,
        out_avals=out_avals,
    )
    it = iter(t_out)
    outs = [o if a is None else trace.pure_or_wrap(o, next(it)) for o, a in zip(out_flat, out_avals)]
    return tree_unflatten(out_tree, outs)
