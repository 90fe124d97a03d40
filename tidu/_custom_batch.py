"""``custom_jvp`` and ``custom_vjp`` calls met by ``vmap`` (:class:`~tidu._batching.BatchTrace`).

The call becomes a :class:`BatchedCall` over the batched values (batch axis first in every
output and residual) whose function and rules are the originals run once per example, so a
transformation below the batch (``grad(vmap(f))``) still uses the user's rules, and every
example's rule result is checked as without ``vmap``. Each runs under an
:class:`AliasBatchTrace`: a ``vmap`` over the same examples as the batch being processed, so a
value of that batch that the function or its rules close over (``w`` in
``vmap(lambda w, x: f_closing_over_w(x))``) is that example's value, not a constant of a
second, crossed batch. ``bwd`` runs after the batch has finished: a ``bwd`` closing over a
batched value is an error (as for any ``custom_vjp`` closure over a transformed value).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._argspec import is_static_leaf
from ._batching import BatchTrace, BatchTracer, move_batch_axis
from ._core import new_trace
from ._custom_checks import (
    any_tracer_above,
    closes_over,
    closes_over_inner,
    merge_residuals,
    split_residuals,
    tangent_aval,
)
from ._custom_rules import CustomCall, dispatch
from ._errors import CustomRuleError
from ._pytree import PyTreeDef, tree_flatten, tree_unflatten
from ._tracer import Tracer, aval_of
from ._vspace import vspace_of_aval
from ._zero import Zero

__all__ = ["AliasBatchTrace", "BatchedCall", "custom_jvp_batch", "custom_vjp_batch"]


class AliasBatchTrace(BatchTrace):
    """A ``vmap`` over the examples of the enclosing batches ``aliases``: their tracers, met
    in a closure, are this trace's own (same examples, same batch axis)."""

    __slots__ = ("aliases",)

    def __init__(self, axis_size: int, aliases: tuple):
        super().__init__(axis_size)
        self.aliases = aliases

    def process_primitive(self, prim: Any, args: Sequence[Any], params: dict) -> Any:
        aliases = self.aliases
        args = [BatchTracer(self, a.val, a.bdim) if type(a) is BatchTracer and a._trace in aliases else a for a in args]
        return BatchTrace.process_primitive(self, prim, args, params)


def _family(trace: BatchTrace) -> tuple:
    """``trace`` and the batches it stands for."""
    return (trace, *getattr(trace, "aliases", ()))


def _unwrap(trace: BatchTrace, leaves: Sequence[Any]) -> tuple[list, list]:
    family = _family(trace)
    vals, dims = [], []
    for x in leaves:
        if type(x) is BatchTracer and x._trace in family:
            vals.append(x.val)
            dims.append(x.bdim)
        else:
            vals.append(x)
            dims.append(None)
    return vals, dims


def vmap_examples(f: Callable[..., list], args: Sequence[Any], dims: Sequence[Any], size: int, aliases: tuple) -> list:
    """``f`` (flat in, flat out) run once per example: the outputs with their batch axis
    first; ``None`` for an output that is ``None`` or :class:`Zero`; Python scalars and strings
    as they are."""
    with new_trace(AliasBatchTrace(size, aliases)) as inner:
        ins = [a if d is None or a is None else BatchTracer(inner, a, d) for a, d in zip(args, dims)]
        outs = f(*ins)
        family = (inner, *aliases)
        res = []
        for o in outs:
            if o is None or type(o) is Zero:
                res.append(None)
            elif type(o) is BatchTracer and o._trace in family:
                res.append(move_batch_axis(o.val, o.bdim, 0, size))
            elif not isinstance(o, Tracer) and is_static_leaf(o):
                res.append(o)
            else:
                res.append(move_batch_axis(o, None, 0, size))
    return res


class BatchedCall(CustomCall):
    """``call`` over ``size`` examples: leaf ``i`` batched along ``dims[i]`` (``None``: shared),
    outputs and residuals along their first axis."""

    __slots__ = ("call", "dims", "size", "aliases", "ex_avals", "_out_tree")

    def __init__(self, call: CustomCall, trace: BatchTrace, dims: list, leaves: list):
        super().__init__(call.kind, call.name, call.n_closure)
        self.call, self.dims, self.size = call, dims, trace.axis_size
        self.aliases = _family(trace)
        # each leaf's per-example tangent aval (bwd's cotangents are checked example by example)
        self.ex_avals = tuple(tangent_aval(x) for x in leaves)
        self._out_tree: PyTreeDef | None = None

    def _examples(self, f: Callable[..., list], args: Sequence[Any], dims: Sequence[Any]) -> list:
        return vmap_examples(f, args, dims, self.size, self.aliases)

    def fun(self, *leaves: Any) -> Any:
        def example(*xs: Any) -> list:
            out_flat, self._out_tree = tree_flatten(self.call.fun(*xs))
            return out_flat

        outs = self._examples(example, leaves, self.dims)
        return tree_unflatten(self._out_tree, outs)

    def jvp(self, primals: list, tangents: list) -> tuple[list, list, PyTreeDef]:
        n = len(primals)

        def example(*xs: Any) -> list:
            p_flat, t_flat, self._out_tree = self.call.jvp(list(xs[:n]), list(xs[n:]))
            return p_flat + t_flat

        outs = self._examples(example, primals + tangents, self.dims * 2)
        m = len(outs) // 2
        p_out = outs[:m]
        t_out = [Zero.like(p) if t is None else t for p, t in zip(p_out, outs[m:])]
        return p_out, t_out, self._out_tree

    def fwd(self, *leaves: Any) -> tuple[list, PyTreeDef, list, PyTreeDef]:
        box: list = []

        def example(*xs: Any) -> list:
            out_flat, out_tree, res_flat, res_tree = self.call.fwd(*xs)
            res_dyn, res_static = split_residuals(res_flat)
            box[:] = [len(out_flat), out_tree, res_tree, res_static]
            return out_flat + res_dyn

        outs = self._examples(example, leaves, self.dims)
        n_out, out_tree, res_tree, res_static = box
        return outs[:n_out], out_tree, merge_residuals(outs[n_out:], res_static), res_tree

    def bwd(self, res: list, res_tree: PyTreeDef, cts: list, out_tree: PyTreeDef, in_avals: tuple) -> list:
        res_dyn, res_static = split_residuals(res)
        n = len(res_dyn)

        def example(*xs: Any) -> list:
            ex_res = merge_residuals(list(xs[:n]), res_static)
            return self.call.bwd(ex_res, res_tree, list(xs[n:]), out_tree, self.ex_avals)

        # after the batch has finished: no aliases (a bwd closing over a batched value fails)
        per = vmap_examples(example, res_dyn + list(cts), [0] * (n + len(cts)), self.size, ())
        out = []  # the cotangent of a shared (unmapped) leaf is the sum over the examples
        for ct, d in zip(per, self.dims):
            if ct is None:
                out.append(None)
            elif d is None:
                out.append(vspace_of_aval(aval_of(ct)).sum_axis(ct, 0))
            else:
                out.append(move_batch_axis(ct, 0, d, self.size))
        return out

    @property
    def origin(self) -> Any:
        return self.call.origin

    def check_closure(self, trace: Any) -> None:
        self.call.check_closure(trace)
        bwd = getattr(self.origin, "bwd", None)
        if any(closes_over(bwd, t) for t in self.aliases):
            raise CustomRuleError(
                f"custom_vjp bwd of {self.name!r} closes over a batched value of an enclosing vmap; bwd runs "
                "after the vmap has finished. Pass the value to the function as an explicit argument and "
                "return it from fwd among the residuals"
            )


def _rewrap(trace: BatchTrace, leaves: list, tree: PyTreeDef) -> Any:
    return tree_unflatten(
        tree, [x if not isinstance(x, Tracer) and is_static_leaf(x) else BatchTracer(trace, x, 0) for x in leaves]
    )


def custom_jvp_batch(trace: BatchTrace, call: CustomCall, leaves: list) -> Any:
    vals, dims = _unwrap(trace, leaves)
    out = dispatch(BatchedCall(call, trace, dims, leaves), vals)
    leaves, tree = tree_flatten(out)
    if any_tracer_above(trace, leaves):
        raise closes_over_inner(call, "vmap")
    return _rewrap(trace, leaves, tree)


def custom_vjp_batch(trace: BatchTrace, call: CustomCall, leaves: list) -> Any:
    return custom_jvp_batch(trace, call, leaves)  # (the call's kind picks its rules)
