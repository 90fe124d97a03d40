"""User-facing einsum: :func:`einsum`, :func:`einsum_path` and the cache controls.

The hot path of a repeated call is one dictionary lookup keyed by
``(subscripts, shapes, dtypes, placements, optimize)`` that yields the
precomputed plan, then the plan's BLAS steps: no parsing, no path search.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from tidu import Tracer

from .._dispatch import dispatchable
from .._dtypes import result_type
from .._aval import meta, placement_of_operand
from .._operands import as_operand, check_placement
from .._tensor import Tensor
from ._ad import bind_pairwise, einsum_p
from ._execute import runner
from .._errors import TenferroValueError
from ._errors import EinsumOperandError
from ._parse import Parsed, canonicalize, format_spec, parse_interleaved, parse_subscripts
from ._paths import normalize_optimize, opt_einsum_equation
from ._cache import CacheInfo, LRUCache
from ._plan import PLANS, build_plan, get_plan
from ._slicing import (
    SLICINGS,
    SlicedContraction,
    as_int,
    check_memory_limit,
    check_positive_int,
    plan_slices,
    unique_output,
)
from .._structural import convert_element_type
import opt_einsum

__all__ = [
    "einsum",
    "einsum_path",
    "einsum_slicing",
    "einsum_cache_info",
    "einsum_cache_clear",
    "EinsumPathInfo",
    "EinsumCacheInfo",
    "SlicedContraction",
]

#: Call signatures -> (plan, dtype to promote to or None, plan runner).
CALLS = LRUCache(512)


def _split(operands: tuple) -> tuple[Any, list, Parsed | None]:
    if not operands:
        raise EinsumOperandError("einsum: expected subscripts and at least one operand, got nothing")
    first = operands[0]
    if isinstance(first, str):
        if len(operands) == 1:
            raise EinsumOperandError(f"einsum: subscripts {first!r} were given without any operand")
        return first, list(operands[1:]), None
    ops, parsed = parse_interleaved(operands)
    if not ops:
        raise EinsumOperandError("einsum: the interleaved form needs at least one operand")
    return ("interleaved", parsed.terms, parsed.output), ops, parsed


@dispatchable
def einsum(*operands: Any, optimize: Any = "auto", memory_limit: int | None = None) -> Any:
    """Einstein summation, as ``numpy.einsum``, differentiable to any order.

    ``einsum("ij,jk->ik", a, b)`` or the interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. Supports implicit output, ``...``
    with broadcasting, labels repeated within an operand (``"ii->i"``, trace
    ``"ii"``), labels repeated in the output (diagonal embedding ``"i->ii"``),
    hyper-edges (``"ik,k,kj->ij"``), 0-d operands, mixed dtypes (promoted with
    :func:`tenferro.result_type`) and complex operands.

    ``optimize``: ``"auto"`` (default), ``"greedy"``, ``"optimal"``, any other
    opt_einsum optimizer name, ``False`` (left to right), an explicit path such
    as ``[(0, 1), (0, 1)]``, or a ``PathOptimizer``.

    Under a transformation (some operand is a ``tidu.Tracer``) an einsum of
    three or more operands is staged as its path's two-operand einsums, so
    gradients share intermediates (see ``docs/ad/einsum.md``).

    ``memory_limit`` (bytes): when the path's largest intermediate would exceed it,
    the contraction is sliced over a few summed labels (cotengra, the ``distributed``
    extra; :func:`einsum_slicing` shows the choice) and computed as the sum of the
    slices, each within the limit; gradients recompute one slice at a time
    (``tidu.checkpoint``), so they stay within it too.

    >>> import tenferro as tf
    >>> a = tf.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.einsum("ii", a).item(), tf.einsum("ij,jk->ik", a, a).tolist()
    (5.0, [[7.0, 10.0], [15.0, 22.0]])
    """
    if memory_limit is not None:
        return _sliced_einsum(operands, optimize, check_memory_limit(memory_limit, "einsum"))
    if operands and type(operands[0]) is str and len(operands) > 1:
        key0, ops, parsed = operands[0], operands[1:], None
    else:
        key0, ops, parsed = _split(operands)
    sig = []
    arrays: list | None = []
    traced = False
    for x in ops:
        if type(x) is Tensor and type(x._data) is np.ndarray:
            a = x._data
            sig.append((a.shape, a.dtype))
            arrays.append(a)
        else:
            sig = arrays = None
            break
    if sig is None:  # tracers, non-NumPy placements, or operands to convert
        ops = [x if type(x) is Tensor or isinstance(x, Tracer) else as_operand("einsum", x) for x in ops]
        traced = any(isinstance(x, Tracer) for x in ops)
        check_placement("einsum", *ops)
        sig = [(tuple(meta(x)[0]), meta(x)[1], placement_of_operand(x)) for x in ops]
    opt_key = optimize if (type(optimize) is str or type(optimize) is bool) else normalize_optimize(optimize)
    key = (key0, tuple(sig), opt_key)
    entry = CALLS.get(key)
    if entry is None:
        plan, dtype = _compile(key0, parsed, list(ops), optimize)
        entry = (plan, dtype, runner(plan))
        CALLS.put(key, entry)
    plan, dtype, run = entry
    if dtype is None and arrays is not None:  # eager, one dtype: what einsum_p.bind would call
        return Tensor._wrap(run(arrays))
    if dtype is not None:
        ops = [convert_element_type(x, dtype) for x in ops]
    if traced and len(ops) > 2:  # under a transformation: pairwise steps share intermediates
        return bind_pairwise(plan, ops)
    return einsum_p.bind(*ops, plan=plan)


def call_operands(operands: tuple, op: str) -> tuple[Any, list]:
    """``(subscripts or None, converted operands)`` of a call (interleaved form: None)."""
    key0, ops, _ = _split(operands)
    ops = [x if type(x) is Tensor or isinstance(x, Tracer) else as_operand(op, x) for x in ops]
    return key0, ops


def _sliced_einsum(operands: tuple, optimize: Any, memory_limit: int) -> Any:
    key0, ops = call_operands(operands, "einsum")
    args = (key0, *ops) if isinstance(key0, str) else interleaved_call(operands, ops)
    repeated = unique_output(args)
    if repeated is not None:  # "ab,bc->aa": "ab,bc->a" sliced, then its diagonal embedded ("a->aa")
        return einsum(repeated[1], _sliced_einsum((repeated[0], *ops), optimize, memory_limit))
    sc = plan_slices(args, memory_limit, optimize)
    if sc.slices == 1:  # a path that fits without slicing (perhaps one searched for the limit)
        return einsum(*args, optimize=list(sc.path) if len(ops) > 1 else False)
    return sc.contract_keys(einsum, ops, sc.keys())


def interleaved_call(operands: tuple, ops: list) -> tuple:
    """The interleaved call with its operands replaced by ``ops``."""
    out, k = [], 0
    for i, x in enumerate(operands):
        if i % 2 == 0 and i < len(operands) - (len(operands) % 2 == 1):
            out.append(ops[k])
            k += 1
        else:
            out.append(x)
    return tuple(out)


def einsum_slicing(*operands: Any, memory_limit: int, optimize: Any = "auto", min_slices: int = 1) -> SlicedContraction:
    """How ``einsum(*operands, memory_limit=memory_limit)`` slices the contraction: the sliced
    labels, the number of slices, the largest intermediate with and without slicing (bytes) and
    the FLOP overhead (:class:`SlicedContraction`). ``min_slices`` asks for at least that many
    slices (to spread them over workers)."""
    memory_limit = check_memory_limit(memory_limit, "einsum_slicing")
    min_slices = check_positive_int(min_slices, "einsum_slicing", "min_slices")
    key0, ops = call_operands(operands, "einsum_slicing")
    args = (key0, *ops) if isinstance(key0, str) else interleaved_call(operands, ops)
    return plan_slices(args, memory_limit, optimize, min_slices=min_slices)


def _compile(key0: Any, parsed: Parsed | None, ops: list, optimize: Any) -> tuple:
    """Parse, check and plan a new call signature."""
    if parsed is None:
        parsed = parse_subscripts(key0)
    metas = [meta(x) for x in ops]
    shapes = tuple(tuple(s) for s, _ in metas)
    spec, sizes = canonicalize(parsed, shapes)
    opt = normalize_optimize(optimize)
    if len(ops) > 1:
        check_placement("einsum", *ops)
    dtype = result_type(*[d for _, d in metas])
    plan = get_plan(spec, shapes, sizes, dtype, placement_of_operand(ops[0]), opt)
    needs = any(d is not dtype for _, d in metas)
    return plan, (dtype if needs else None)


class EinsumPathInfo(NamedTuple):
    """What :func:`einsum_path` found.

    ``path``: the contraction path (shrinking-list format) over the operands
    after one-operand reductions; ``flops``: opt_einsum's FLOP estimate of the
    pairwise steps; ``largest_intermediate``: elements of the largest
    intermediate; ``equation``: the canonical equation; ``info``: opt_einsum's
    full ``PathInfo`` (printable report).
    """

    path: list[tuple[int, ...]]
    flops: int
    largest_intermediate: int
    equation: str
    info: Any


def einsum_path(*operands: Any, optimize: Any = "auto") -> tuple[list[tuple[int, ...]], EinsumPathInfo]:
    """The contraction path :func:`einsum` uses, with its cost estimates.

    Operands may be tensors, arrays, or anything with a ``shape``.

    >>> import tenferro as tf
    >>> path, info = tf.einsum_path("ij,jk,kl->il", tf.ones((20, 30)), tf.ones((30, 40)), tf.ones((40, 2)))
    >>> path
    [(1, 2), (0, 1)]
    """
    key0, ops, parsed = _split(operands)
    if parsed is None:
        parsed = parse_subscripts(key0)
    for k, x in enumerate(ops):
        if not hasattr(x, "shape"):
            raise EinsumOperandError(
                f"einsum_path: operand {k} is a {type(x).__name__} ({x!r:.40}); expected a "
                "tensor, an array or anything with a shape"
            )
    shapes = tuple(tuple(int(n) for n in x.shape) for x in ops)
    spec, sizes = canonicalize(parsed, shapes)
    opt = normalize_optimize(optimize)
    plan = build_plan(spec, shapes, sizes, opt)
    out_uniq = tuple(dict.fromkeys(spec.output))
    eq, red_shapes = opt_einsum_equation(plan.reduced_terms, out_uniq, sizes)
    path = [tuple(s) for s in plan.path]
    _, info = opt_einsum.contract_path(eq, *red_shapes, shapes=True, optimize=path)
    return path, EinsumPathInfo(path, int(info.opt_cost), int(info.largest_intermediate), format_spec(spec), info)


class EinsumCacheInfo(NamedTuple):
    """Statistics of the call cache (``hits``, ``misses``, ``size``, ``maxsize``)
    and of the plan cache it shares with AD-derived einsums (``plans``)."""

    hits: int
    misses: int
    size: int
    maxsize: int
    plans: CacheInfo


def einsum_cache_info() -> EinsumCacheInfo:
    """Hit/miss statistics and sizes of the einsum caches."""
    c = CALLS.info()
    return EinsumCacheInfo(c.hits, c.misses, c.size, c.maxsize, PLANS.info())


def einsum_cache_clear(maxsize: int | None = None) -> None:
    """Empty the einsum caches (calls, plans and the slicings of ``memory_limit`` calls) and
    reset their statistics (optionally set a new bound for the call and plan caches: an int >= 1,
    the number of signatures each keeps)."""
    size = None if maxsize is None else as_int(maxsize)
    if maxsize is not None and (size is None or size < 1):
        raise TenferroValueError(f"einsum_cache_clear: maxsize must be an int >= 1 or None, got {maxsize!r}")
    CALLS.clear()
    PLANS.clear()
    SLICINGS.clear()
    if size is not None:
        CALLS.maxsize = PLANS.maxsize = size
