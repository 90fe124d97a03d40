"""Contraction plans and the bounded plan cache.

A :class:`Plan` is everything an einsum needs at run time, computed once per
signature (spec, shapes, dtype, placement, optimize):

1. ``single`` steps, one per operand that needs it: diagonals of labels
   repeated within the operand and sums of labels no other operand and not the
   output carries (one ``numpy.einsum`` call on one operand);
2. ``pair`` steps along the contraction path: each contracts two operands with
   one BLAS call. Labels of the pair are split into *free* (one side only),
   *contracted* (both sides, needed nowhere else) and *batch* (both sides and
   still needed: a hyper-edge stays a batch dimension until its last use). The
   operands are viewed, without copying whenever their column-major layout
   allows, as matrices ``(Bt, K, M)`` and ``(Bt, N, K)``; the product is
   ``matmul``/``dot`` (or an elementwise multiply when nothing is contracted),
   and the result is produced column-major with labels ``free_a + free_b + batch``
   or (the transposed product, as cheap) ``free_b + free_a + batch``, whichever
   the step consuming it can view without copying (:func:`_lookahead`); a last
   step wanted with its batch labels elsewhere writes into the output layout;
3. a ``final`` step: permute to the output order and, for labels repeated in
   the output, write the result onto the diagonal of a zero tensor.

Under transformations the plan is also used as a sequence of einsums of at
most two operands (:func:`decompose`), so that AD works per pairwise step.

The cache is an LRU dictionary (:mod:`._cache`) with hit/miss statistics
(:func:`tenferro.einsum_cache_info`); a cached call does one dictionary lookup
and runs the precomputed steps.
"""

from __future__ import annotations

import weakref
from itertools import permutations
from typing import Any, NamedTuple, Sequence

from ._parse import Spec, format_spec, relabel
from ._paths import find_path
from ._cache import LRUCache
from ._errors import EinsumOptimizeError

__all__ = ["Plan", "build_plan", "PLANS", "get_plan", "SubEinsum", "decompose"]

SINGLE, PAIR, FINAL, MOVE = 0, 1, 2, 3
DOT, BMM, MUL = 0, 1, 2


class Plan:
    """A compiled einsum: precomputed steps for fixed shapes (see module docstring).

    Immutable (a primitive parameter is a value): assigning an attribute raises.
    Data derived from a plan later (its pairwise decomposition, the transposed
    plans of the reverse pass) lives in caches keyed by the plan
    (:data:`PAIRWISE`, ``einsum._ad.TRANSPOSED``), never in it.
    """

    __slots__ = ("spec", "shapes", "sizes", "optimize", "path", "steps", "out_shape", "reduced_terms", "__weakref__")

    def __init__(
        self,
        spec: Spec,
        shapes: tuple,
        sizes: tuple,
        optimize: Any,
        path: tuple,
        steps: tuple,
        out_shape: tuple,
        reduced_terms: tuple,
    ):
        for name, value in (
            ("spec", spec),
            ("shapes", shapes),
            ("sizes", sizes),
            ("optimize", optimize),
            ("path", path),
            ("steps", tuple(steps)),
            ("out_shape", out_shape),
            ("reduced_terms", reduced_terms),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"an einsum Plan is immutable (it is a primitive parameter); cannot set {name!r}")

    def __repr__(self) -> str:
        return f"einsum_plan({format_spec(self.spec)!r})"


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _single(k: int, labels: tuple, keep: set, move: bool = False) -> tuple[tuple, tuple]:
    """A one-operand step on position ``k``: diagonal of repeated labels and sum
    of labels not in ``keep`` (``move``: then move the result to the end)."""
    local = {l: i for i, l in enumerate(dict.fromkeys(labels))}
    out = tuple(dict.fromkeys(l for l in labels if l in keep))
    return (SINGLE, k, [local[l] for l in labels], [local[l] for l in out], move), out


def _arrange(labels: tuple, groups: dict, prefs: Sequence[str]) -> tuple[tuple | None, str]:
    """The group order under which ``labels`` (column-major) already is the
    concatenation of ``groups``; otherwise the first preference and a permutation."""
    for ga in prefs:
        if [l for g in ga for l in groups[g]] == list(labels):
            return None, ga
    ga = prefs[0]
    seq = [l for g in ga for l in groups[g]]
    return tuple(labels.index(l) for l in seq), ga


_ALL_ORDERS = tuple("".join(p) for p in permutations("FCB"))


def _pair(la: tuple, lb: tuple, keep: set, sizes: Sequence[int], want: Any = None) -> tuple[tuple, tuple]:
    """Plan the contraction of operands with column-major labels ``la`` and ``lb``.

    The result comes out column-major as ``free_a + free_b + batch`` or, with
    the two GEMM operands swapped (``C^T = B^T A^T``, equally copy-free), as
    ``free_b + free_a + batch``; ``want`` (see :func:`_lookahead`) picks the one
    its consumer can view without copying."""
    set_a, set_b = set(la), set(lb)
    shared = set_a & set_b
    primary = la if _prod(sizes[l] for l in la) >= _prod(sizes[l] for l in lb) else lb
    batch = [l for l in primary if l in shared and l in keep]
    contr = [l for l in primary if l in shared and l not in keep]
    free_a = [l for l in la if l not in shared]
    free_b = [l for l in lb if l not in shared]
    if _prod(sizes[l] for l in contr) == 1:  # nothing to sum (no label, or only labels of size 1)
        mode, prefs = MUL, _ALL_ORDERS
    elif batch:
        mode, prefs = BMM, ("FCB", "CFB")
    else:
        mode, prefs = DOT, ("FCB", "CFB")
    if mode != MUL:
        free_a, free_b = _free_orders(la, lb, free_a, free_b, contr, batch, prefs, want)
    swap = _fits(tuple(free_b + free_a + batch), want) and not _fits(tuple(free_a + free_b + batch), want)
    views = []
    for labels, free, target in ((la, free_a, "BFC" if swap else "BCF"), (lb, free_b, "BCF" if swap else "BFC")):
        groups = {"F": free, "C": contr, "B": batch}
        perm, ga = _arrange(labels, groups, prefs)
        if mode == DOT:
            ga = ga.replace("B", "")
            target = target.replace("B", "")
        shape = tuple(_prod(sizes[l] for l in groups[g]) for g in ga)
        ax = tuple(ga.index(g) for g in target)
        views.append((perm, shape, None if ax == tuple(range(len(ax))) else ax))
    out_labels = tuple((free_b + free_a if swap else free_a + free_b) + batch)
    if mode == MUL and batch and want is not None and want[0] == "groups":
        # batch fastest (per-example outer products), the free labels in the final result's order
        first = tuple(batch + sorted(free_a + free_b, key=lambda l: want[3].index(l) if l in want[3] else len(want[3])))
        if _fits(first, want) and _prod(sizes[l] for l in batch) >= max(
            _prod(sizes[l] for l in free_a), _prod(sizes[l] for l in free_b)
        ):
            return _broadcast_output(la, lb, first, sizes)
    out_view = None
    if mode != DOT and want is not None and want[0] == "out" and not _fits(out_labels, want):
        if mode == MUL and set(want[1]) == set(out_labels):  # into a fresh array, label by label
            return _broadcast_output(la, lb, tuple(want[1]), sizes)
        out_labels, out_view = _direct_output(want[1], free_a, free_b, batch, swap, sizes) or (out_labels, None)
    out_shape = tuple(sizes[l] for l in out_labels)
    (pa, sa, xa), (pb, sb, xb) = views
    return (mode, swap, pa, sa, xa, pb, sb, xb, out_shape, out_view), out_labels


def _free_orders(
    la: tuple, lb: tuple, free_a: list, free_b: list, contr: list, batch: list, prefs: Sequence[str], want: Any
) -> tuple[list, list]:
    """The free labels of each operand in the order the product's result should carry them.

    An operand whose layout already is its groups concatenated is viewed as it is, its free
    labels in their order. One that is regrouped by a copy anyway may take its free labels in
    any order: they are sorted so that the result's labels fall into the groups of the step
    consuming it (``want``), which then views it without a copy of its own. A circuit's state
    passed from gate to gate (``benchmarks/distributed.py``, one slice: 2^18 amplitudes) was
    copied 88 MiB per slice before, 54 MiB after: the copies left are those for a gate acting
    on one wire the previous gate wrote and one it did not, which no order of that result serves."""
    if want is None or want[0] != "groups":
        return free_a, free_b
    copied = [
        _arrange(labels, {"F": free, "C": contr, "B": batch}, prefs)[0] is not None
        for labels, free in ((la, free_a), (lb, free_b))
    ]
    if not any(copied) or _fits(tuple(free_a + free_b + batch), want) or _fits(tuple(free_b + free_a + batch), want):
        return free_a, free_b
    group_of, orders = want[1], want[2]
    for order in orders:
        rank = {g: k for k, g in enumerate(order)}
        fa, fb = (sorted(f, key=lambda l: rank[group_of[l]]) if c else f for f, c in zip((free_a, free_b), copied))
        if _fits(tuple(fa + fb + batch), want) or _fits(tuple(fb + fa + batch), want):
            return fa, fb
    return free_a, free_b


def _broadcast_output(la: tuple, lb: tuple, order: tuple, sizes: Sequence[int]) -> tuple[tuple, tuple]:
    """A product without contracted labels, or with summed labels of size 1 only (an outer
    product, per batch entry), whose final
    result is wanted with labels ``order`` that no grouping gives (e.g. ``cdeb`` from ``bdc``
    and ``ec``): each operand is viewed label by label in ``order`` (size 1 where it lacks a
    label) and the broadcast product written straight into the result, sparing the final
    permuting copy (for per-example gradients, a batch-first copy across the whole result).
    ``out_view`` is then ``("labels", axes_a, shape_a, axes_b, shape_b, subscripts)``, the last
    the product as ``numpy.einsum`` operands (``(sub_a, sub_b, sub_out)``, labels renumbered)."""
    views = []
    for labels in (la, lb):  # labels summed here have size 1: moved last, then dropped by the reshape
        axes = tuple(labels.index(l) for l in order if l in labels) + tuple(
            k for k, l in enumerate(labels) if l not in order
        )
        views += [axes, tuple(sizes[l] if l in labels else 1 for l in order)]
    number = {l: k for k, l in enumerate(dict.fromkeys(order + la + lb))}
    subscripts = (
        tuple(tuple(number[l] for l in labels) for labels in (la, lb, order)) if len(number) <= 52 else None
    )  # numpy.einsum names at most 52 labels
    step = (
        MUL,
        False,
        None,
        tuple(sizes[l] for l in la),
        None,
        None,
        tuple(sizes[l] for l in lb),
        None,
        tuple(sizes[l] for l in order),
        ("labels", *views, subscripts),
    )
    return step, order


def _direct_output(
    order: tuple, free_a: list, free_b: list, batch: list, swap: bool, sizes: Sequence[int]
) -> tuple[tuple, tuple] | None:
    """For a batched product whose final result is wanted with labels ``order``
    where neither native layout gives it (e.g. batch labels first): if ``order``
    is the three groups concatenated in another order, ``(order, (shape, axes))``:
    the product is written straight into a column-major array of that layout,
    viewed as ``shape`` (one axis per group) transposed by ``axes`` to the
    ``(batch, rows, cols)`` of the BLAS call (saving the final permuting copy)."""
    groups = {"A": free_a, "B": free_b, "T": batch}
    for go in permutations("ABT"):
        if tuple(l for g in go for l in groups[g]) == order:
            shape = tuple(_prod(sizes[l] for l in groups[g]) for g in go)
            return order, (shape, tuple(go.index(g) for g in ("TAB" if swap else "TBA")))
    return None


def _fits(labels: tuple, want: Any) -> bool:
    """Whether a result with column-major ``labels`` suits its consumer ``want``:
    ``("out", order)``: it is the final result, wanted in ``order``;
    ``("groups", group_of, orders, final)``: the next pairwise step splits it into
    groups (``group_of[label]`` in ``"FCB"``), viewed without copying when the
    labels are the groups concatenated in one of ``orders`` (``final``: the labels of the
    whole einsum's result, the order a free choice follows)."""
    if want is None:
        return False
    if want[0] == "out":
        return labels == want[1]
    _, group_of, orders, _ = want
    seq = [group_of[l] for l in labels]
    runs = "".join(g for k, g in enumerate(seq) if k == 0 or seq[k - 1] != g)
    present = set(runs)
    return len(present) == len(runs) and any("".join(g for g in o if g in present) == runs for o in orders)


def _lookahead(terms: Sequence[tuple], pairs: Sequence[tuple], output: tuple, sizes: Sequence[int]) -> list:
    """For each step of the pairwise path ``pairs`` over operands with labels
    ``terms``: how its result will be used (the ``want`` of :func:`_pair`), or
    ``None`` (no pair step, or a one-operand reduction comes first).

    Only label *sets* matter for the grouping in the consuming step, so one pass
    over the path suffices before any layout is fixed."""
    out_set = set(output)
    final = tuple(dict.fromkeys(output))
    vals = [frozenset(t) for t in terms]
    producer: list = [None] * len(vals)
    wants: list = [None] * len(pairs)
    for s, contraction in enumerate(pairs):
        if len(contraction) == 1:
            (k,) = contraction
            rest = set(out_set).union(*[t for m, t in enumerate(vals) if m != k])
            t, p = vals.pop(k), producer.pop(k)
            vals.append(t & rest)
            producer.append(p if t <= rest else None)
            continue
        i, j = sorted(contraction)
        rest = set(out_set).union(*[t for m, t in enumerate(vals) if m not in (i, j)])
        for pos, other in ((i, j), (j, i)):
            p, t, u = producer[pos], vals[pos], vals[other]
            if p is None or not t <= rest | u:  # unknown, or reduced by a one-operand step first
                continue
            group_of = {l: ("F" if l not in u else "B" if l in rest else "C") for l in t}
            summed = _prod(sizes[l] for l in t if group_of[l] == "C")
            orders = ("FCB", "CFB") if summed > 1 else _ALL_ORDERS  # DOT/BMM, or MUL (summed labels of size 1)
            wants[p] = ("groups", group_of, orders, final)
        new = (vals[i] | vals[j]) & rest
        for m in (j, i):
            vals.pop(m)
            producer.pop(m)
        vals.append(new)
        producer.append(s)
    if len(vals) == 1 and producer[0] is not None and vals[0] <= out_set:
        wants[producer[0]] = ("out", tuple(dict.fromkeys(output)))
    return wants


def _pairwise(path: Sequence[tuple[int, ...]], n: int) -> tuple[tuple[int, ...], ...]:
    """``path`` with every k-operand step split into k-1 pairwise steps."""
    out = []
    for step in path:
        if len(step) <= 2:
            out.append(tuple(step))
            n -= len(step) - 1
            continue
        ids = sorted(step)
        first, rest = ids[:2], ids[2:]
        out.append(tuple(first))
        n -= 1
        rest = [i - sum(1 for f in first if f < i) for i in rest]
        for i in rest:
            out.append((i, n - 1))
            rest = [j - (1 if j > i else 0) for j in rest]
            n -= 1
    return tuple(out)


def build_plan(spec: Spec, shapes: tuple, sizes: tuple, optimize: Any) -> Plan:
    """Compile ``spec`` for operands of ``shapes`` (see the module docstring)."""
    inputs, output = spec.inputs, spec.output
    out_set = set(output)
    holders: dict[int, int] = {}
    for t in inputs:
        for l in set(t):
            holders[l] = holders.get(l, 0) + 1
    steps: list = []
    vals: list[tuple] = []
    for k, t in enumerate(inputs):
        keep = {l for l in t if holders[l] > 1 or l in out_set}
        if len(set(t)) == len(t) and len(keep) == len(t):
            vals.append(t)
            continue
        step, reduced = _single(k, t, keep)
        steps.append(step)
        vals.append(reduced)
    reduced_terms = tuple(vals)
    out_uniq = tuple(dict.fromkeys(output))
    path = find_path(reduced_terms, out_uniq, sizes, optimize)
    pairs = _pairwise(path, len(vals))
    wants = _lookahead(reduced_terms, pairs, out_uniq, sizes)
    for s, contraction in enumerate(pairs):
        if len(contraction) == 1:
            (k,) = contraction
            rest = set(out_set).union(*[t for j, t in enumerate(vals) if j != k])
            t = vals.pop(k)
            if len(set(t)) != len(t) or not set(t) <= rest:
                step, t = _single(k, t, {l for l in t if l in rest}, move=True)
                steps.append(step)
            elif k != len(vals):
                steps.append((MOVE, k))
            vals.append(t)
            continue
        i, j = sorted(contraction)
        rest = set(out_set).union(*[t for m, t in enumerate(vals) if m not in (i, j)])
        for pos, other in ((i, j), (j, i)):  # sum labels needed neither later nor by the partner
            drop = [l for l in vals[pos] if l not in rest and l not in vals[other]]
            if drop:
                step, vals[pos] = _single(pos, vals[pos], set(vals[pos]) - set(drop))
                steps.append(step)
        pstep, out_labels = _pair(vals[i], vals[j], rest, sizes, wants[s])
        steps.append((PAIR, i, j) + pstep)
        vals.pop(j)
        vals.pop(i)
        vals.append(out_labels)
    if len(vals) != 1:
        raise EinsumOptimizeError(f"einsum: the contraction path {path} leaves {len(vals)} operands")
    (result,) = vals
    if len(set(result)) != len(result) or not set(result) <= out_set:  # one operand with nothing to pair
        step, result = _single(0, result, out_set)
        steps.append(step)
    perm = tuple(result.index(l) for l in out_uniq)
    out_shape = tuple(sizes[l] for l in output)
    embed = None
    if len(out_uniq) != len(output):
        embed = tuple(tuple(p for p, l in enumerate(output) if l == u) for u in out_uniq)
    steps.append((FINAL, None if perm == tuple(range(len(perm))) else perm, embed, out_shape))
    return Plan(spec, tuple(shapes), tuple(sizes), optimize, path, steps, out_shape, reduced_terms)


# ---------------------------------------------------------------------------
# decomposition into einsums of at most two operands (for AD)
# ---------------------------------------------------------------------------
class SubEinsum(NamedTuple):
    """One step of :func:`decompose`: apply the canonical ``spec`` to the values at
    ``positions`` of the running list, in that order (operand shapes
    ``shapes``), remove them and append the result (the shrinking-list
    convention of a contraction path)."""

    positions: tuple[int, ...]
    spec: Spec
    shapes: tuple[tuple[int, ...], ...]


PAIRWISE: "weakref.WeakKeyDictionary[Plan, tuple]" = weakref.WeakKeyDictionary()
"""Each plan's pairwise decomposition (:func:`decompose`), computed once per plan."""


def decompose(plan: Plan) -> tuple[SubEinsum, ...]:
    """``plan`` as a sequence of einsums of at most two operands (cached on the plan).

    The steps follow the plan's contraction path: one two-operand einsum per
    pairwise step, whose output labels are exactly those the fused plan keeps
    (so a hyper-edge stays until its last use). One-operand reductions (diagonals,
    sums of labels only one operand carries) are folded into the next
    two-operand einsum of that operand, and the final permutation/diagonal
    embedding into the last one; a one-operand plan is a single step. Under AD
    each step is linearized and transposed on its own, so intermediates are
    shared instead of each operand's cotangent being a contraction of the whole
    network.
    """
    steps = PAIRWISE.get(plan)
    if steps is None:
        steps = PAIRWISE[plan] = _decompose(plan)
    return steps


def _decompose(plan: Plan) -> tuple[SubEinsum, ...]:
    spec, sizes = plan.spec, plan.sizes
    out_set = set(spec.output)
    cur = list(spec.inputs)  # labels of the values the steps produce (reductions pending)
    red = list(plan.reduced_terms)  # the same values as the fused plan sees them (reduced)
    order = list(range(len(cur)))  # value ids in the plan's list (one-operand steps move values) ...
    live = list(order)  # ... and in the steps' list (nothing moves)
    steps: list[list] = []
    pairs = _pairwise(plan.path, len(cur))
    wants = _lookahead(plan.reduced_terms, pairs, tuple(dict.fromkeys(spec.output)), sizes)
    for s, contraction in enumerate(pairs):
        if len(contraction) == 1:  # a reduction only: folded into the value's next use
            (k,) = contraction
            rest = set(out_set).union(*[t for j, t in enumerate(red) if j != k])
            t = red.pop(k)
            cur.append(cur.pop(k))
            order.append(order.pop(k))
            red.append(tuple(dict.fromkeys(l for l in t if l in rest)))
            continue
        i, j = sorted(contraction)
        rest = set(out_set).union(*[t for m, t in enumerate(red) if m not in (i, j)])
        la = tuple(l for l in red[i] if l in rest or l in red[j])
        lb = tuple(l for l in red[j] if l in rest or l in red[i])
        _, out = _pair(la, lb, rest, sizes, wants[s])  # the fused plan's layout
        pos = (live.index(order[i]), live.index(order[j]))
        steps.append([pos, (cur[i], cur[j]), out])
        for p in sorted(pos, reverse=True):
            live.pop(p)
        live.append(len(spec.inputs) + len(steps))
        for lst, new in ((cur, out), (red, out), (order, live[-1])):
            lst.pop(j)
            lst.pop(i)
            lst.append(new)
    if steps:
        steps[-1][2] = spec.output  # the final permutation / embedding
    else:
        steps.append([(0,), (cur[0],), spec.output])
    return tuple(
        SubEinsum(pos, relabel(Spec(ins, out)), tuple(tuple(sizes[l] for l in t) for t in ins))
        for pos, ins, out in steps
    )


#: Plans by canonical signature; shared by user calls and by AD-derived einsums.
PLANS = LRUCache(512)


def get_plan(spec: Spec, shapes: tuple, sizes: tuple | None, dtype: Any, placement: Any, optimize: Any) -> Plan:
    """The cached plan for a canonical signature (built on a miss)."""
    key = (spec, shapes, dtype, placement, optimize)
    plan = PLANS.get(key)
    if plan is None:
        if sizes is None:
            sizes = sizes_of(spec, shapes)
        plan = build_plan(spec, shapes, sizes, optimize)
        PLANS.put(key, plan)
    return plan


def sizes_of(spec: Spec, shapes: Sequence[tuple]) -> tuple:
    """Label sizes of a canonical spec (its shapes are already consistent)."""
    n = 1 + max((l for t in spec.inputs for l in t), default=-1)
    n = max(n, 1 + max(spec.output, default=-1))
    sizes = [1] * n
    for t, s in zip(spec.inputs, shapes):
        for l, d in zip(t, s):
            sizes[l] = d
    return tuple(sizes)
