"""Checks and decisions that read a structured tensor's values where the values are: eagerly,
under ``tidu.vmap`` (every example's values) and under ``tenferro.jit`` (when the compiled
program runs, not while it is traced), as the dense linear algebra does.

Two small tidu primitives carry them (the public route: tensor4all reads no tracer of tidu or
tenferro from the inside). Their batching rules move the batch axis last, so every value they
see is the tensor's own axes followed by the batch axes of the enclosing ``vmap``\\ s (trailing
batch, as tenferro's):

* :func:`checked`: ``x`` unchanged, after ``check(values, core)`` raised on bad values (a zero
  on a diagonal that is inverted, entries of ``SymmetricTensor.from_dense`` outside the allowed
  blocks). Concrete values are checked at once, without a primitive; abstract ones (a graph
  being staged) through :data:`value_check_p`, whose evaluation in the compiled program raises.
  The identity for derivatives.
* :func:`batch_counts`: per-sector counts decided from the values of several tensors (the
  ranks of a truncation across sectors), one decision per example and the largest count per
  sector over the batch (as ``tenferro.linalg.truncated_svd`` keeps the batch's largest rank);
  ``None`` where the values are abstract (``tenferro.jit``: the caller raises).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import tenferro as tf
import tidu
from tenferro.checks import concrete_value

from ._errors import SymmetryViolationError
from ._symmetry import Leg, sign_of

__all__ = ["checked", "batch_counts", "value_check_p", "batch_counts_p", "singular_diagonal", "symmetric_entries"]


def _host(a: Any) -> np.ndarray:
    """A NumPy view of an array or tensor (a host copy of a device array)."""
    if isinstance(a, tf.Tensor):
        return a.numpy()
    return np.asarray(a.get() if hasattr(a, "get") else a)


def _last(n: int, x: Any, bdim: int | None) -> Any:
    return tidu.move_batch_axis(x, bdim, -1, n)


def _columns(a: np.ndarray, core: int) -> np.ndarray:
    """``a`` with its trailing batch axes merged into one (C order; one example without any)."""
    return a.reshape(a.shape[:core] + (int(np.prod(a.shape[core:], dtype=np.int64)),))


def example_name(values: np.ndarray, core: int, flat: int) -> str:
    """`` (batch example i)`` for the ``flat``-th example of the trailing batch axes (C order),
    ``""`` without batch axes."""
    batch = values.shape[core:]
    if not batch:
        return ""
    idx = tuple(int(i) for i in np.unravel_index(flat, batch))
    return f" (vmap batch example {idx[0] if len(idx) == 1 else idx})"


# --- the check primitive ------------------------------------------------------------------------
value_check_p = tidu.Primitive("structured_value_check")
"""``value_check_p(x, check, core)``: ``x`` unchanged; evaluating it calls ``check(values,
core)`` on the values of ``x`` (``core`` leading axes, then the batch axes), which raises on bad
ones."""


@value_check_p.def_impl
def _value_check_impl(x: Any, check: Callable[[np.ndarray, int], None], core: int) -> Any:
    check(_host(x), core)
    return x


@value_check_p.def_abstract_eval
def _value_check_aval(x: Any, **params: Any) -> Any:
    return x


@value_check_p.def_jvp
def _value_check_jvp(primals: Any, tangents: Any, **params: Any) -> Any:
    return value_check_p.bind(primals[0], **params), tangents[0]


@value_check_p.def_transpose
def _value_check_transpose(ct: Any, x: Any, **params: Any) -> list:
    return [None if type(ct) is tidu.Zero else ct]


@value_check_p.def_batch
def _value_check_batch(n: int, args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
    x = _last(n, args[0], dims[0])
    return value_check_p.bind(x, **params), len(x.shape) - 1


def checked(x: Any, check: Callable[[np.ndarray, int], None]) -> Any:
    """``x`` after ``check(values, core)`` (``core = x.ndim``): at once where ``x`` has a value
    (a tensor, a JVP tracer of one), else where the values are (the vmap's batched values, the
    compiled program's run)."""
    core = len(x.shape)
    value = concrete_value(x)
    if value is not None:
        check(_host(value), core)
        return x
    return value_check_p.bind(x, check=check, core=core)


# --- the per-sector counts primitive ------------------------------------------------------------
batch_counts_p = tidu.Primitive("structured_batch_counts")
"""``batch_counts_p(*values, decide)``: an int64 vector, ``decide(examples)`` (one 1-d NumPy
array per operand, each operand's values of one example) for every example, the largest count
per entry over the batch. Not differentiable (the counts are piecewise constant)."""


@batch_counts_p.def_impl
def _batch_counts_impl(*values: Any, decide: Callable[[list], list]) -> Any:
    cols = [_columns(_host(v), 1) for v in values]  # (values, examples): the batch rule lined them up
    best = np.zeros(len(cols), dtype=np.int64)
    for b in range(cols[0].shape[1]):
        best = np.maximum(best, np.asarray(decide([c[:, b] for c in cols]), dtype=np.int64))
    return tf.asarray(best)


@batch_counts_p.def_abstract_eval
def _batch_counts_aval(*avals: Any, decide: Any) -> Any:
    return avals[0].update(shape=(len(avals),), dtype=tf.int64)


batch_counts_p.def_nondiff("the counts of a truncation are piecewise constant", zero_tangent=True)


@batch_counts_p.def_batch
def _batch_counts_batch(n: int, args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
    """Every operand's batch axis last (unmapped ones broadcast); the counts are the batch's
    largest, one for all examples: unmapped."""
    return batch_counts_p.bind(*[_last(n, a, d) for a, d in zip(args, dims)], **params), None


def batch_counts(values: Sequence[Any], decide: Callable[[list], list]) -> list[int] | None:
    """``decide`` of the concrete 1-d ``values`` (one per sector), or under ``tidu.vmap`` the
    largest count per sector over the examples; ``None`` where the values are abstract."""
    host = [concrete_value(v) for v in values]
    if all(h is not None for h in host):
        return [int(c) for c in decide([_host(h) for h in host])]
    counts = concrete_value(batch_counts_p.bind(*values, decide=decide))
    return None if counts is None else [int(c) for c in _host(counts)]


# --- the checks -------------------------------------------------------------------------------
def singular_diagonal(message: str, reciprocal: bool = False) -> Callable[[np.ndarray, int], None]:
    """The check of a diagonal ``d`` that is inverted: :class:`tenferro.linalg.SingularMatrixError`
    with ``message`` (``{n}``: the matrix size, ``{where}``: the vmap example or nothing) at an
    exact zero, or with ``reciprocal`` where ``1 / d`` is not finite (a zero or a reciprocal that
    overflows)."""

    def check(d: np.ndarray, core: int) -> None:
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            bad = ~np.isfinite(1 / d) if reciprocal else d == 0
        if bad.any():
            where = example_name(d, core, int(np.argmax(_columns(bad, 1).any(axis=0))))
            raise tf.linalg.SingularMatrixError(message.format(n=d.shape[0], where=where))

    return check


def symmetric_entries(
    legs: Sequence[Leg], keys: Sequence[tuple], charge: Any, tol: float | None, op: str
) -> Callable[[np.ndarray, int], None]:
    """The check of ``SymmetricTensor.from_dense``: every entry outside the allowed ``keys``
    at most ``tol`` (default ``1e-12 * max|x|``, of each example), and all finite; else
    :class:`SymmetryViolationError` naming the largest one, its index and its sectors."""
    mask = np.ones(tuple(leg.dim for leg in legs), dtype=bool)
    for k in keys:
        mask[tuple(leg.slice(q) for q, leg in zip(k, legs))] = False

    def check(x: np.ndarray, core: int) -> None:
        cols = _columns(x, core)
        mag = np.abs(cols).reshape(mask.size, cols.shape[-1])
        finite = np.isfinite(mag).all(axis=0)
        scale = mag.max(axis=0, initial=0.0)
        limit = 1e-12 * scale if tol is None else np.full_like(scale, float(tol))
        outside = np.where(mask.reshape(-1, 1), mag, 0.0).max(axis=0, initial=0.0)
        bad = ~finite | (outside > limit)
        if bad.any():
            b = int(np.argmax(bad))
            _violation(cols[..., b], mask, legs, charge, float(limit[b]), op, example_name(x, core, b))

    return check


def _violation(
    x: np.ndarray, mask: np.ndarray, legs: Sequence[Leg], charge: Any, limit: float, op: str, where: str
) -> None:
    bad = np.argwhere(~np.isfinite(x))
    if bad.size:
        idx = tuple(int(i) for i in bad[0])
        raise SymmetryViolationError(
            f"{op}: x holds {x[idx].item()!r} at {idx}{where} ({len(bad)} entries are NaN or "
            "infinite); the symmetry of a non-finite array cannot be checked"
        )
    outside = np.where(mask, np.abs(x), 0.0)
    idx = np.unravel_index(int(np.argmax(outside)), x.shape)
    sectors = []
    for i, leg in zip(idx, legs):
        for q in leg.charges:
            sl = leg.slice(q)
            if sl.start <= i < sl.stop:
                sectors.append(q)
                break
    total = legs[0].symmetry._total(sectors, [sign_of(leg) for leg in legs])
    raise SymmetryViolationError(
        f"{op}: x is not symmetric: entry {tuple(int(i) for i in idx)} = {x[idx].item()!r}{where} lies in the "
        f"sectors {tuple(sectors)!r}, which carry charge {total!r}, not {charge!r} (tolerance {limit:.3g})"
    )
