"""Batching rules shared by primitive families (``tidu.vmap``).

tenferro puts the batch axis **last**: with column-major storage the last axis is the
slowest, so each example is one contiguous block, a column-major ``reshape`` keeps the
examples apart when the batch axis stays last, per-example axis numbers are unchanged
(reductions, permutations keep their parameters), and ``dot_general`` and ``linalg`` take
trailing batch axes already. Each primitive registers its rule beside its other rules; this
module holds what whole families share.
"""
from __future__ import annotations

from typing import Any, Callable

import tidu

__all__ = ["batch_last", "elementwise_batch", "register_elementwise_batch", "trailing_batch", "reduction_batch",
           "same_params_batch", "rhs_batch"]


def batch_last(x: Any, bdim: int | None, axis_size: int) -> Any:
    """``x`` with its batch axis last (a new axis of ``axis_size`` for an unmapped ``x``)."""
    return tidu.broadcast_batch(x, bdim, axis_size)


def elementwise_batch(prim: tidu.Primitive) -> Callable[..., Any]:
    """The rule of an elementwise primitive (operands of one shape, parameters that do not
    depend on it): every operand with its batch axis last, one application."""
    def rule(axis_size: int, args: list, dims: list, **params: Any) -> tuple[Any, Any]:
        n = next(len(tidu.aval_of(x).shape) for x, d in zip(args, dims) if d is not None)   # batched rank
        xs = [batch_last(x, d, axis_size) for x, d in zip(args, dims)]
        out = prim.bind(*xs, **params)
        return out, ([n - 1] * len(out) if prim.multiple_results else n - 1)

    rule.__name__ = f"{prim.name}_batch"
    return rule


def register_elementwise_batch(*prims: tidu.Primitive) -> None:
    """Give each elementwise primitive of a family its batching rule."""
    for p in prims:
        p.def_batch(elementwise_batch(p))


def trailing_batch(prim: tidu.Primitive) -> Callable[..., Any]:
    """The rule of a primitive that takes trailing batch axes already (linalg: matrices in
    the first two axes, any axes after them a batch; the matrix functions on diagonals):
    every operand with the batch axis last, one application, each result's batch axis last."""
    def rule(axis_size: int, args: list, dims: list, **params: Any) -> tuple[Any, Any]:
        xs = [batch_last(x, d, axis_size) for x, d in zip(args, dims)]
        out = prim.bind(*xs, **params)
        if prim.multiple_results:
            return out, [len(tidu.aval_of(o).shape) - 1 for o in out]
        return out, len(tidu.aval_of(out).shape) - 1

    rule.__name__ = f"{prim.name}_batch"
    return rule


def reduction_batch(prim: tidu.Primitive) -> Callable[..., Any]:
    """The rule of a reduction over ``axes`` (one operand): the batch axis last, so the
    per-example axis numbers stay; the result's batch axis is its last."""
    def rule(axis_size: int, args: list, dims: list, axes: tuple, **params: Any) -> tuple[Any, int]:
        (x,), (d,) = args, dims
        x = batch_last(x, d, axis_size)
        out = prim.bind(x, axes=axes, **params)
        return out, len(tidu.aval_of(out).shape) - 1

    rule.__name__ = f"{prim.name}_batch"
    return rule


def same_params_batch(prim: tidu.Primitive) -> Callable[..., Any]:
    """The rule of a primitive whose parameters name per-example axes below the batch axis and
    whose result keeps a trailing axis trailing (``rev``, ``concatenate``): every operand with
    its batch axis last, the same parameters, the result's batch axis last."""
    return trailing_batch(prim)


def rhs_batch(prim: tidu.Primitive, rhs: int, reshape: Callable[[Any, tuple], Any]) -> Callable[..., Any]:
    """The rule of a solve whose argument ``rhs`` may be one vector per example: with the batch
    axis last such a vector would read as a matrix of right-hand sides, so it becomes one
    column ``(n, 1, batch)`` and the result a vector again; matrix right-hand sides and the
    other operands take the trailing batch as :func:`trailing_batch` does. ``reshape(x, shape)``
    is the column-major reshape (given by the caller: the structural family sits above)."""
    def rule(axis_size: int, args: list, dims: list, **params: Any) -> tuple[Any, int]:
        vector = len(tidu.aval_of(args[rhs]).shape) - (dims[rhs] is not None) == 1
        xs = [batch_last(x, d, axis_size) for x, d in zip(args, dims)]
        if not vector:
            out = prim.bind(*xs, **params)
            return out, len(tidu.aval_of(out).shape) - 1
        n = tidu.aval_of(xs[rhs]).shape[0]
        xs[rhs] = reshape(xs[rhs], (n, 1, axis_size))
        out = prim.bind(*xs, **params)
        m = tidu.aval_of(out).shape[0]
        return reshape(out, (m, axis_size)), 1

    rule.__name__ = f"{prim.name}_batch"
    return rule
