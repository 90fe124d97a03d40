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

__all__ = ["batch_last", "register_elementwise_batch", "trailing_batch", "rhs_batch"]


def batch_last(x: Any, bdim: int | None, axis_size: int) -> Any:
    """``x`` with its batch axis last (a new axis of ``axis_size`` for an unmapped ``x``)."""
    return tidu.broadcast_batch(x, bdim, axis_size)


def register_elementwise_batch(*prims: tidu.Primitive) -> None:
    """Give each elementwise primitive of a family its batching rule (:func:`trailing_batch`)."""
    for p in prims:
        p.def_batch(trailing_batch(p))


def trailing_batch(prim: tidu.Primitive) -> Callable[..., Any]:
    """The rule of a primitive for which a trailing batch axis is one more axis its parameters
    do not name: elementwise families (operands of one shape), reductions, ``rev`` and
    ``concatenate`` (axis numbers below the batch axis stay), linalg (matrices in the first two
    axes, any axes after them a batch), the matrix functions on diagonals. Every operand with
    its batch axis last, one application, each result's batch axis last."""

    def rule(axis_size: int, args: list, dims: list, **params: Any) -> tuple[Any, Any]:
        xs = [batch_last(x, d, axis_size) for x, d in zip(args, dims)]
        out = prim.bind(*xs, **params)
        if prim.multiple_results:
            return out, [len(tidu.aval_of(o).shape) - 1 for o in out]
        return out, len(tidu.aval_of(out).shape) - 1

    rule.__name__ = f"{prim.name}_batch"
    return rule


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
