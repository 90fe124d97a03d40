"""Sliced contraction: an einsum whose largest intermediate would exceed a memory limit is
computed as a sum over the values of a few summed labels ("slices"), each slice an einsum of
the operands indexed at those values, with intermediates that fit (cotengra's ``SliceFinder``
on the contraction tree: J. Gray and S. Kourtis, Quantum 5, 410 (2021); quimb's and
cotengra's ``contract(..., slicing_opts=...)``).

Only summed labels are sliced (never output labels), so the result is the plain sum of the
slices; the path of the tree is reused for every slice. Under a transformation each slice is
a :class:`tidu.checkpoint` call, so reverse mode keeps only the operands and recomputes one
slice's intermediates at a time: the memory bound holds for gradients too.

cotengra is optional (the ``distributed`` extra); without it a ``memory_limit`` that forces
slicing raises :class:`~tenferro.OptionalDependencyError`.
"""

from __future__ import annotations

import itertools
import math
import operator
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Iterable, Iterator, Sequence

import tidu

from .._errors import OptionalDependencyError, TenferroValueError
from ._parse import Spec, canonicalize, parse_interleaved, parse_subscripts, symbol
from ._paths import normalize_optimize
from ._cache import LRUCache
import opt_einsum

__all__ = [
    "SlicedContraction",
    "plan_slices",
    "unique_output",
    "check_memory_limit",
    "check_positive_int",
    "as_int",
    "SLICINGS",
]

#: slicings by (equation, shapes, item size, memory limit, optimize, min_slices): the path
#: search and cotengra's slice finder take tens of milliseconds on a circuit of 180 tensors,
#: paid on every call of a sliced or distributed einsum before this cache
SLICINGS = LRUCache(64)


def as_int(value: Any) -> int | None:
    """``value`` as a Python int when it is an integer: ints, NumPy integers and integral
    ``Decimal``s (opt_einsum's sizes); ``None`` for booleans, fractions, floats and the rest."""
    if type(value) is int:  # hot path
        return value
    if isinstance(value, bool) or type(value).__name__ == "bool":  # Python and NumPy booleans
        return None
    if isinstance(value, Decimal):
        return int(value) if value.is_finite() and value == value.to_integral_value() else None
    try:
        return operator.index(value)
    except TypeError:
        return None


def check_positive_int(value: Any, op: str, name: str, meaning: str = "") -> int:
    """``value`` as a positive Python int (see :func:`as_int`), else a :class:`TenferroValueError`
    naming ``op``, ``name`` and the value."""
    n = as_int(value)
    if n is None or n <= 0:
        hint = " (a float: pass int(...))" if isinstance(value, float) and value.is_integer() and value > 0 else ""
        raise TenferroValueError(f"{op}: {name} must be a positive integer{meaning}, got {value!r}{hint}")
    return n


def check_memory_limit(memory_limit: Any, op: str) -> int:
    """A positive integer number of bytes."""
    return check_positive_int(memory_limit, op, "memory_limit", " number of bytes (the largest intermediate allowed)")


@dataclass(frozen=True)
class SlicedContraction:
    """How an einsum is sliced: the canonical ``equation`` (letters), the ``sliced`` labels and
    their ``extents``, the contraction ``path`` every slice uses, the number of ``slices``, the
    largest intermediate in bytes without and with slicing, and the FLOP ``overhead`` (all
    slices together over the unsliced contraction; 1.0 when nothing is sliced)."""

    equation: str
    sliced: tuple[str, ...]
    extents: tuple[int, ...]
    path: tuple[tuple[int, ...], ...]
    slices: int
    largest_intermediate: int
    unsliced_largest_intermediate: int
    overhead: float

    @property
    def inputs(self) -> list[str]:
        return self.equation.split("->")[0].split(",")

    @property
    def slice_equation(self) -> str:
        """The equation of one slice: the sliced labels removed from the inputs."""
        cut = set(self.sliced)
        lhs, out = self.equation.split("->")
        return ",".join("".join(c for c in t if c not in cut) for t in lhs.split(",")) + "->" + out

    def keys(self) -> Iterator[tuple[int, ...]]:
        """Every slice: one value per sliced label, in row-major order."""
        return itertools.product(*(range(n) for n in self.extents))

    def index(self, k: int, shape: Sequence[int], key: Sequence[int]) -> tuple:
        """The index of operand ``k`` (of ``shape``) in slice ``key``: the value of each sliced
        label on its axes (0 on an axis of extent 1 broadcast against it), ``:`` elsewhere."""
        at = dict(zip(self.sliced, key))
        return tuple((at[c] if n > 1 else 0) if c in at else slice(None) for c, n in zip(self.inputs[k], shape))

    def contract(self, einsum: Callable[..., Any], operands: Sequence[Any], key: Sequence[int]) -> Any:
        """One slice: the operands indexed at ``key`` and contracted by ``einsum`` (tenferro's)
        along :attr:`path`."""
        parts = [x[self.index(k, tuple(x.shape), key)] for k, x in enumerate(operands)]
        return einsum(self.slice_equation, *parts, optimize=list(self.path) if len(parts) > 1 else False)

    def contract_keys(self, einsum: Callable[..., Any], operands: Sequence[Any], keys: Iterable[Sequence[int]]) -> Any:
        """The sum of the slices ``keys``, in order (each a checkpoint under a transformation)."""
        total = None
        for key in keys:
            step = tidu.checkpoint(lambda ops, key=tuple(key): self.contract(einsum, ops, key))
            part = step(list(operands))
            total = part if total is None else total + part
        return total


def plan_slices(
    operands: Sequence[Any], memory_limit: int, optimize: Any = "auto", *, min_slices: int = 1
) -> SlicedContraction:
    """The slicing of ``einsum(*operands)`` (subscripts first, or the interleaved form) whose
    intermediates fit in ``memory_limit`` bytes, with at least ``min_slices`` slices (to spread
    work over workers). Needs cotengra when slicing is needed."""
    if operands and isinstance(operands[0], str):
        parsed, ops = parse_subscripts(operands[0]), list(operands[1:])
    else:
        ops, parsed = parse_interleaved(tuple(operands))
    shapes = tuple(tuple(int(n) for n in x.shape) for x in ops)
    spec, sizes = canonicalize(parsed, shapes)
    itemsize = max(_itemsize(x) for x in ops)
    equation, size_dict = _equation(spec, sizes)
    opt = normalize_optimize(optimize) if len(ops) > 1 else False
    key = (equation, shapes, itemsize, memory_limit, opt, min_slices)  # the sizes follow from these
    found = SLICINGS.get(key)
    if found is None:
        found = _plan_slices(equation, size_dict, itemsize, shapes, memory_limit, opt, min_slices)
        SLICINGS.put(key, found)
    return found


def unique_output(operands: Sequence[Any]) -> tuple[str, str] | None:
    """For an einsum whose output repeats a label (``"ab,bc->aa"``: the diagonal embedded), the
    canonical equation with each output label once and the one-operand equation embedding its
    result (``"ab,bc->a"``, ``"a->aa"``); None where the output repeats none. Slicing plans the
    first (opt_einsum refuses repeated output labels)."""
    if operands and isinstance(operands[0], str):
        parsed, ops = parse_subscripts(operands[0]), list(operands[1:])
    else:
        ops, parsed = parse_interleaved(tuple(operands))
    spec, sizes = canonicalize(parsed, tuple(tuple(int(n) for n in x.shape) for x in ops))
    equation, _ = _equation(spec, sizes)
    lhs, out = equation.split("->")
    once = "".join(dict.fromkeys(out))
    return None if once == out else (lhs + "->" + once, once + "->" + out)


def _plan_slices(
    equation: str, size_dict: dict[str, int], itemsize: int, shapes: tuple, memory_limit: int, opt: Any, min_slices: int
) -> SlicedContraction:
    """:func:`plan_slices` of the canonical ``equation`` (``opt`` normalized)."""
    inputs = equation.split("->")[0].split(",")
    output = equation.split("->")[1]
    if len(shapes) == 1:
        path: tuple = ()
        largest = math.prod(shapes[0]) if shapes[0] else 1
    else:
        search = "auto" if opt is False else (list(opt) if isinstance(opt, tuple) else opt)
        path_list, info = opt_einsum.contract_path(
            equation, *[tuple(size_dict[c] for c in t) for t in inputs], shapes=True, optimize=search
        )
        path = tuple(tuple(p) for p in path_list)
        largest = int(info.largest_intermediate)
    largest = max(largest, math.prod(size_dict[c] for c in output) if output else 1)
    unsliced = largest * itemsize
    if unsliced <= memory_limit and min_slices <= 1:
        return SlicedContraction(equation, (), (), path, 1, unsliced, unsliced, 1.0)
    try:
        import cotengra  # noqa: PLC0415  (optional dependency, imported on demand)
    except ImportError as exc:
        raise OptionalDependencyError(
            f"einsum: the largest intermediate ({unsliced} bytes) exceeds memory_limit={memory_limit}, and slicing "
            "the contraction needs cotengra; install the 'distributed' extra (pip install 'tidu-tenferro[distributed]')"
        ) from exc
    if len(shapes) == 1:
        raise TenferroValueError(
            f"einsum: a one-operand einsum cannot be sliced below its operand and result "
            f"({unsliced} bytes > memory_limit={memory_limit})"
        )
    target = max(1, memory_limit // itemsize)
    terms = [tuple(t) for t in inputs]
    tree = cotengra.ContractionTree.from_path(terms, tuple(output), size_dict, path=[list(p) for p in path])
    base_cost = float(tree.contraction_cost())
    out_bytes = (math.prod(size_dict[c] for c in output) if output else 1) * itemsize
    fitted = [tree] if unsliced <= memory_limit else [_slice_within(tree, target, out_bytes, memory_limit)]
    if unsliced > memory_limit and out_bytes <= memory_limit and opt == "auto":  # also searched paths
        searched = _searched_tree(cotengra, terms, output, size_dict, target)
        if searched.max_size() <= target:  # (only summed labels: the search slices with allow_outer=False)
            fitted.append(searched)
    fitted = [t for t in fitted if t is not None]
    sliced = min(fitted, key=lambda t: t.contraction_cost()) if fitted else None
    if sliced is not None and sliced.nslices < min_slices:
        try:  # more slices to spread over workers, when labels are left
            sliced = sliced.slice(target_slices=min_slices, allow_outer=False, seed=0)
        except (RuntimeError, ValueError):
            pass
    size = int(sliced.max_size()) * itemsize if sliced is not None else unsliced
    if sliced is None or size > memory_limit:
        raise TenferroValueError(
            f"einsum: no slicing of the summed labels brings the largest intermediate ({size} bytes) within "
            f"memory_limit={memory_limit}: the output alone takes {out_bytes} bytes, and only summed labels are sliced"
        )
    labels = tuple(sliced.sliced_inds)
    path = tuple(tuple(int(i) for i in p) for p in sliced.get_path())
    return SlicedContraction(
        equation,
        labels,
        tuple(size_dict[c] for c in labels),
        path,
        int(sliced.nslices),
        size,
        unsliced,
        float(sliced.contraction_cost()) / base_cost if base_cost else 1.0,
    )


def _slice_within(tree: Any, target: int, out_bytes: int, memory_limit: int) -> Any:
    """``tree`` sliced over summed labels until its intermediates hold at most ``target``
    elements, or None where no such slicing exists."""
    if out_bytes > memory_limit:  # the output alone exceeds the limit
        return None
    try:
        return tree.slice(target_size=target, allow_outer=False, seed=0)
    except (RuntimeError, ValueError):  # cotengra ran out of summed labels to slice
        return None


def _search_trials(n_terms: int) -> int:
    """Trials of the path search behind slicing, fewer for larger networks (a trial takes
    about two seconds on a 180-tensor circuit, tens of milliseconds on a 25-tensor lattice)."""
    return max(4, min(16, 1024 // max(n_terms, 1)))


#: cotengra's interleaved slicing and subtree reconfiguration (``slice_and_reconfigure``),
#: lighter than its defaults (16 slicing attempts, subtrees of 8): on a 4x6-qubit 14-cycle
#: circuit sliced 64-fold (5 trials), 12 s for 0.25x the FLOPs of opt_einsum's unsliced path,
#: against 66 s for 0.27x with subtrees of 8
_RECONF_OPTS = {"allow_outer": False, "max_repeats": 4, "reconf_opts": {"subtree_size": 6}}


def _searched_tree(cotengra: Any, terms: list, output: str, size_dict: dict, target: int) -> Any:
    """A contraction tree searched together with its slicing down to ``target`` elements
    (cotengra's hyper-optimizer over randomized greedy paths, each sliced with subtree
    reconfiguration: Gray and Kourtis, Quantum 5, 410 (2021)), cached per problem. The search
    runs in this process: no partitioning methods, whose inner optimizers start a process
    pool of their own (``parallel='auto'``) whatever the outer search is told. The trials draw
    from Python's global ``random`` (cotengra passes them no seed): it is seeded for the
    search and its state restored after, so the search repeats exactly."""
    key = (tuple(terms), output, tuple(sorted(size_dict.items())), target)
    if key not in _TREES:
        opt = cotengra.HyperOptimizer(
            methods=("greedy",),
            max_repeats=_search_trials(len(terms)),
            optlib="random",
            progbar=False,
            parallel=False,
            seed=0,
            slicing_reconf_opts={"target_size": target, **_RECONF_OPTS},
        )
        state = random.getstate()
        random.seed(0)
        try:
            tree = opt.search(terms, output, size_dict)
        finally:
            random.setstate(state)
        if len(_TREES) >= 64:
            _TREES.pop(next(iter(_TREES)))
        _TREES[key] = tree
    return _TREES[key]


#: searched sliced trees by (inputs, output, sizes, target size)
_TREES: dict[tuple, Any] = {}


def _itemsize(x: Any) -> int:
    dt = tidu.aval_of(x).dtype
    return int(getattr(dt, "itemsize", 8))


def _equation(spec: Spec, sizes: Sequence[int]) -> tuple[str, dict[str, int]]:
    """The canonical spec as a letters equation and the label sizes."""
    sym = [symbol(i) for i in range(len(sizes))]
    lhs = ",".join("".join(sym[i] for i in t) for t in spec.inputs)
    return lhs + "->" + "".join(sym[i] for i in spec.output), {sym[i]: int(n) for i, n in enumerate(sizes)}
