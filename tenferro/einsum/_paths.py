"""Contraction-path search: opt_einsum's optimizers, selected by name.

``optimize`` may be

* a registered name: ``"auto"`` (default), ``"greedy"``, ``"optimal"``, ``"dp"``,
  ``"branch-2"``, ... (all of opt_einsum's path optimizers; see
  :data:`PATH_OPTIMIZERS`); ``True`` means ``"greedy"`` as in NumPy;
* ``False``: contract strictly left to right;
* an explicit path in opt_einsum's shrinking-list format, ``[(0, 1), (0, 1)]``
  (each step removes the listed operands and appends their contraction;
  NumPy's ``["einsum_path", (0, 1), ...]`` is accepted too);
* an ``opt_einsum.paths.PathOptimizer`` instance (e.g. a cotengra optimizer for
  large networks).

An unknown name raises :class:`EinsumOptimizeError` listing the valid ones.
"""

from __future__ import annotations

from typing import Any, Sequence

import warnings

from .._errors import TenferroMemoryError, fmt_bytes
from .._memory import physical_memory
from ._errors import EinsumOptimizeError
from opt_einsum import get_symbol
from opt_einsum.paths import PathOptimizer
import opt_einsum

__all__ = [
    "PATH_OPTIMIZERS",
    "normalize_optimize",
    "left_to_right",
    "find_path",
    "check_path",
    "OPTIMAL_MAX_OPERANDS",
    "MAX_INTERMEDIATE_BYTES",
    "EinsumPathWarning",
    "path_search_equation",
]

#: The accepted optimizer names (opt_einsum's registry; aliases included).
PATH_OPTIMIZERS: tuple[str, ...] = (
    "auto",
    "auto-hq",
    "greedy",
    "optimal",
    "dp",
    "dynamic-programming",
    "branch-all",
    "branch-2",
    "branch-1",
    "eager",
    "opportunistic",
    "random-greedy",
    "random-greedy-128",
)


def normalize_optimize(optimize: Any) -> Any:
    """A hashable, validated form of ``optimize`` (used in cache keys)."""
    if optimize is False or optimize is None:
        return False
    if optimize is True:
        return "greedy"
    if isinstance(optimize, str):
        if optimize not in PATH_OPTIMIZERS:
            raise EinsumOptimizeError(
                f"einsum: unknown optimize value {optimize!r}; valid names are "
                + ", ".join(repr(n) for n in PATH_OPTIMIZERS)
                + ", or False (left to right), or an explicit path like [(0, 1), (0, 1)]"
            )
        return optimize
    if isinstance(optimize, (list, tuple)):
        steps = list(optimize)
        if steps and steps[0] == "einsum_path":
            steps = steps[1:]
        out = []
        for i, s in enumerate(steps):
            try:
                out.append(tuple(int(j) for j in s))
            except (TypeError, ValueError):
                raise EinsumOptimizeError(
                    f"einsum: step {i} of the explicit path is {s!r}; each step must be a tuple of operand "
                    "positions, e.g. [(0, 1), (0, 1)]"
                ) from None
        return tuple(out)

    if isinstance(optimize, PathOptimizer):
        return optimize
    raise EinsumOptimizeError(
        f"einsum: unknown optimize value {optimize!r} of type {type(optimize).__name__}; valid values are "
        + ", ".join(repr(n) for n in PATH_OPTIMIZERS)
        + ", True, False, an explicit path or a PathOptimizer"
    )


def left_to_right(n: int) -> tuple[tuple[int, ...], ...]:
    """The path contracting operand 0 with 1, the result with 2, and so on."""
    if n < 2:
        return ((0,),) if n == 1 else ()
    return ((0, 1),) + tuple((0, m - 1) for m in range(n - 1, 1, -1))


def check_path(path: Sequence[tuple[int, ...]], n: int) -> None:
    """Validate an explicit shrinking-list path for ``n`` operands."""
    left = n
    for i, step in enumerate(path):
        if len(step) == 0 or len(set(step)) != len(step):
            raise EinsumOptimizeError(f"einsum: step {i} of the explicit path, {step}, must list distinct operands")
        for j in step:
            if not 0 <= j < left:
                raise EinsumOptimizeError(
                    f"einsum: step {i} of the explicit path, {step}, refers to operand {j} but only "
                    f"{left} operand{'s' * (left != 1)} remain at that step"
                )
        left = left - len(step) + 1
    if left != 1:
        raise EinsumOptimizeError(
            f"einsum: the explicit path leaves {left} operands uncontracted; it must reduce the {n} operands to one"
        )


OPTIMAL_MAX_OPERANDS = 10
"""``optimize="optimal"`` searches every path (time exponential in the number of
operands: about a second at 10 operands, minutes at 14). Above this many operands
it warns (:class:`EinsumPathWarning`) and uses ``"dp"`` (opt_einsum's dynamic
programming, which finds the optimal path without outer products far faster)."""

MAX_INTERMEDIATE_BYTES = 2**40
"""A path whose largest intermediate needs more bytes than this (1 TiB, or the
machine's physical memory when smaller) is refused before anything is allocated
(:class:`tenferro.TenferroMemoryError`, naming the bytes and either an optimizer whose
path fits or, when none does, slicing the contraction)."""


class EinsumPathWarning(UserWarning):
    """``optimize="optimal"`` over more than :data:`OPTIMAL_MAX_OPERANDS` operands
    was replaced by ``"dp"``."""


def _memory_limit() -> int:
    phys = physical_memory()
    return MAX_INTERMEDIATE_BYTES if phys is None else min(MAX_INTERMEDIATE_BYTES, phys)


def find_path(
    terms: Sequence[Sequence[int]], output: Sequence[int], sizes: Sequence[int], optimize: Any, itemsize: int = 8
) -> tuple[tuple[int, ...], ...]:
    """The contraction path for ``terms -> output`` (canonical labels, unique per
    term) under a normalized ``optimize``. Its largest intermediate is checked
    against :data:`MAX_INTERMEDIATE_BYTES` (elements of ``itemsize`` bytes)."""
    n = len(terms)
    if optimize is False:
        path = left_to_right(n)
    elif isinstance(optimize, tuple):
        check_path(optimize, n)
        path = optimize
    elif n <= 2 or any(sizes[l] == 0 for t in terms for l in t):
        if n <= 2:
            _check_result(output, sizes, itemsize)
        return left_to_right(n)  # size 0: every path costs nothing (and some optimizers reject it)
    else:
        if optimize == "optimal" and n > OPTIMAL_MAX_OPERANDS:
            warnings.warn(
                f"einsum: optimize='optimal' with {n} operands (more than {OPTIMAL_MAX_OPERANDS}) would "
                "search for minutes; using 'dp' (dynamic programming) instead",
                EinsumPathWarning,
                stacklevel=5,
            )
            optimize = "dp"
        eq, shapes = path_search_equation(terms, output, sizes)
        path_list, _ = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=optimize)
        path = tuple(tuple(int(j) for j in s) for s in path_list)
    if n > 2:
        _check_intermediates(terms, output, sizes, path, optimize, itemsize)
    else:
        _check_result(output, sizes, itemsize)
    return path


def _check_result(output: Sequence[int], sizes: Sequence[int], itemsize: int) -> None:
    """One or two operands make no intermediate but the result: refuse a result that does not fit
    (NumPy raised its own MemoryError from inside the product)."""
    elements = 1
    for l in output:
        elements *= sizes[l]
    need, limit = elements * itemsize, _memory_limit()
    if need > limit:
        raise TenferroMemoryError(
            f"einsum: the result has {elements} elements, {fmt_bytes(need)}, more than the {fmt_bytes(limit)} "
            f"allowed (physical memory, at most {fmt_bytes(MAX_INTERMEDIATE_BYTES)}); expected a smaller result"
        )


def _largest_intermediate(
    terms: Sequence[Sequence[int]], output: Sequence[int], sizes: Sequence[int], path: Sequence[tuple[int, ...]]
) -> int:
    """The number of elements of the largest intermediate (the result included) that
    ``path`` creates."""
    live = [set(t) for t in terms]
    out = set(output)
    largest = 0
    for step in path:
        merged = set().union(*(live[j] for j in step))
        rest = [t for j, t in enumerate(live) if j not in step]
        keep = {l for l in merged if l in out or any(l in t for t in rest)}
        size = 1
        for l in keep:
            size *= sizes[l]
        largest = max(largest, size)
        live = rest + [keep]
    return largest


#: Above this many operands, the memory error does not run the dynamic programme that
#: minimizes the largest intermediate (it can take long); greedy and "auto" still run.
SIZE_SEARCH_MAX_OPERANDS = 16
_SIZE_OPTIMIZER = "opt_einsum.DynamicProgramming(minimize='size')"


def _alternatives(
    terms: Sequence[Sequence[int]], output: Sequence[int], sizes: Sequence[int], optimize: Any
) -> list[tuple[str, int]]:
    """``(spelling of optimize, largest intermediate in elements)`` for the paths of
    "auto", "greedy" and (up to :data:`SIZE_SEARCH_MAX_OPERANDS` operands) opt_einsum's
    dynamic programme minimizing the largest intermediate, leaving out ``optimize``
    itself; in that order of preference (fewest FLOPs first)."""
    eq, shapes = opt_einsum_equation(terms, output, sizes)
    candidates: list[tuple[str, Any]] = [("'auto'", "auto"), ("'greedy'", "greedy")]
    if len(terms) <= SIZE_SEARCH_MAX_OPERANDS:
        candidates.append((_SIZE_OPTIMIZER, opt_einsum.DynamicProgramming(minimize="size")))
    found = []
    for spelling, opt in candidates:
        if isinstance(opt, str) and opt == optimize:
            continue
        path, _ = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=opt)
        found.append((spelling, _largest_intermediate(terms, output, sizes, [tuple(s) for s in path])))
    return found


def _check_intermediates(
    terms: Sequence[Sequence[int]],
    output: Sequence[int],
    sizes: Sequence[int],
    path: tuple,
    optimize: Any,
    itemsize: int,
) -> None:
    """Refuse a path whose largest intermediate does not fit (before allocating), with
    advice that fits the case: another optimizer whose path fits, or slicing when no
    path found does."""
    largest = _largest_intermediate(terms, output, sizes, path)
    need, limit = largest * itemsize, _memory_limit()
    if need <= limit:
        return
    how = "left to right (optimize=False)" if optimize is False else f"along the path of optimize={optimize!r}"
    head = (
        f"einsum: contracting {how} needs an intermediate of {largest} elements, {fmt_bytes(need)}, more than "
        f"the {fmt_bytes(limit)} allowed (physical memory, at most {fmt_bytes(MAX_INTERMEDIATE_BYTES)}); "
    )
    found = _alternatives(terms, output, sizes, optimize)
    fits = [(spelling, n) for spelling, n in found if n * itemsize <= limit]
    if fits:
        spelling, n = fits[0]
        raise TenferroMemoryError(
            head + f"optimize={spelling} finds a path whose largest intermediate is {fmt_bytes(n * itemsize)}, "
            f"which fits: pass optimize={spelling}"
        )
    smallest = min([largest] + [n for _, n in found])
    searched = ", ".join(f"optimize={spelling}" for spelling, _ in found)
    raise TenferroMemoryError(
        head + f"no other path fits either: the best of the paths of {searched} still needs an intermediate of "
        f"{fmt_bytes(smallest * itemsize)}. Slice the contraction (fix one or more indices and sum the slices in a "
        "loop; cotengra's SliceFinder chooses which) or make the problem smaller"
    )


def opt_einsum_equation(
    terms: Sequence[Sequence[int]], output: Sequence[int], sizes: Sequence[int]
) -> tuple[str, list[tuple[int, ...]]]:
    """An opt_einsum equation string and operand shapes for canonical terms."""
    eq = ",".join("".join(get_symbol(l) for l in t) for t in terms) + "->" + "".join(get_symbol(l) for l in output)
    return eq, [tuple(sizes[l] for l in t) for t in terms]


def path_search_equation(
    terms: Sequence[Sequence[int]], output: Sequence[int], sizes: Sequence[int]
) -> tuple[str, list[tuple[int, ...]]]:
    """:func:`opt_einsum_equation` without the labels of size 1, for searching and costing
    paths. Such a label costs nothing, but opt_einsum counts a summed one as a multiply-add
    (twice the FLOPs of the same product without it), and so preferred a path materializing
    a per-example outer product ``(1, a, b) x (1, c, b) -> (a, c, b)`` summed over the unit
    label to the cheaper order."""
    return opt_einsum_equation(
        [[lab for lab in t if sizes[lab] != 1] for t in terms], [lab for lab in output if sizes[lab] != 1], sizes
    )
