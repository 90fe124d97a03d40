"""The ``einsum`` primitive: evaluation, shape rule, JVP and transpose.

``einsum_p`` takes operands of one dtype and placement and a static ``plan``
(a cached :class:`~tenferro.einsum._plan.Plan`, which carries the canonical
spec, the shapes and the optimize choice).

Einsum is multilinear, so (derivation in ``docs/ad/einsum.md``):

* JVP: ``d einsum(x_1..x_n) = sum_k einsum(x_1..dx_k..x_n)``; zero tangents are
  skipped. The terms reuse the primal's plan (same shapes).
* Transpose with respect to operand ``k`` (the only linear one in a term):
  ``einsum(ct, x_j (j != k) -> labels_k)``. Labels repeated in ``x_k`` appear
  repeated in that output, i.e. a diagonal *embedding*; labels only ``x_k``
  carries (summed in the forward pass) are absent from every other term, so the
  derived einsum stops at the remaining labels and ``broadcast_in_dim`` restores
  them. Derived einsums are computed once per plan and operand and go through
  the same plan cache.

These rules hold for any arity, but cost one network contraction per operand.
So under transformations :func:`bind_pairwise` stages an einsum of three or
more operands as its path's two-operand einsums (``_plan.decompose``), and AD
then works per pairwise step on shared intermediates.

Complex numbers: tidu transposes with respect to the bilinear pairing
``Re sum(a * b)`` (as JAX does), under which the transpose of "multiply by c"
is "multiply by c". So the transpose of einsum needs **no conjugation**; the
conjugation the Hermitian adjoint has appears when ``grad``/``vjp`` are checked
against the sesquilinear inner product (tidu.testing's dot-product test), which
the complex128 gradient tests exercise.
"""

from __future__ import annotations

import weakref

from typing import Any, NamedTuple

from tidu import Zero, is_undefined

from .._errors import ShapeError
from .._aval import meta, TensorType
from .._batching import batch_last
from .._registry import nonlinear_error, primitive
from .._tensor import Tensor
from ._execute import execute
from ._parse import Spec, relabel
from ._plan import Plan, decompose, get_plan
from .._aval import placement_of_operand
from .._elementwise import add_p
from .._structural import broadcast_in_dim_p

__all__ = ["einsum_p", "bind_pairwise"]

einsum_p = primitive("einsum", "einsum")


@einsum_p.def_impl
def _einsum_impl(*operands: Tensor, plan: Plan) -> Tensor:
    return Tensor._wrap(execute(plan, [x._data for x in operands]))


@einsum_p.def_abstract_eval
def _einsum_aval(*avals: TensorType, plan: Plan) -> TensorType:
    shapes = tuple(a.shape for a in avals)
    if shapes != plan.shapes or any(a.dtype is not avals[0].dtype for a in avals):
        raise ShapeError(
            f"einsum: primitive operands {avals} do not match the plan {plan} for shapes "
            f"{plan.shapes} (one dtype required)"
        )
    return TensorType(plan.out_shape, avals[0].dtype, avals[0].placement)


@einsum_p.def_batch
def _einsum_batch(axis_size: int, args: list, dims: list, plan: Plan) -> tuple[Any, int]:
    """A batch label of its own on each mapped operand (its batch axis moved last) and last
    in the output; unmapped operands keep their labels: one einsum, no broadcast copies."""
    spec = plan.spec
    new = 1 + max([label for t in spec.inputs for label in t] + list(spec.output) + [-1])
    xs, inputs = [], []
    for x, d, labels in zip(args, dims, spec.inputs):
        if d is None:
            xs.append(x)
            inputs.append(tuple(labels))
        else:
            xs.append(batch_last(x, d, axis_size))
            inputs.append(tuple(labels) + (new,))
    batched = relabel(Spec(tuple(inputs), tuple(spec.output) + (new,)))
    shapes = tuple(tuple(meta(x)[0]) for x in xs)
    mapped = next(x for x, d in zip(xs, dims) if d is not None)
    p = get_plan(batched, shapes, None, meta(mapped)[1], placement_of_operand(mapped), plan.optimize)
    return einsum_p.bind(*xs, plan=p), len(spec.output)


def bind_pairwise(plan: Plan, operands: list[Any]) -> Any:
    """``einsum_p`` on ``operands`` staged as the plan's steps of at most two
    operands each (:func:`~tenferro.einsum._plan.decompose`).

    Used under transformations: each step is linearized and transposed on its
    own, so reverse mode shares the intermediates (one backward sweep instead of
    one full contraction per operand). Each step's plan comes from the plan cache.
    """
    steps = decompose(plan)
    if len(steps) == 1:
        return einsum_p.bind(*operands, plan=plan)

    dtype, place = meta(operands[0])[1], placement_of_operand(operands[0])
    vals = list(operands)
    for step in steps:
        args = [vals[p] for p in step.positions]
        for p in sorted(step.positions, reverse=True):
            del vals[p]
        vals.append(einsum_p.bind(*args, plan=get_plan(step.spec, step.shapes, None, dtype, place, "auto")))
    return vals[0]


@einsum_p.def_jvp
def _einsum_jvp(primals, tangents, plan: Plan):
    out = einsum_p.bind(*primals, plan=plan)
    acc = None
    for k, t in enumerate(tangents):
        if type(t) is Zero:
            continue
        args = list(primals)
        args[k] = t
        term = einsum_p.bind(*args, plan=plan)
        if acc is None:
            acc = term
        else:
            acc = add_p.bind(acc, term)
    return out, (Zero.like(out) if acc is None else acc)


def transpose_spec(spec: Spec, k: int) -> tuple[Spec, tuple[int, ...] | None, Spec | None]:
    """The derived einsums for the cotangent of operand ``k``.

    Returns ``(derived, dims, embed)``: ``derived`` has inputs ``ct`` then the
    other operands. When every label of operand ``k`` occurs elsewhere, its
    output is operand ``k``'s labels (repeats included: a diagonal embedding)
    and ``dims``/``embed`` are None. Otherwise its output is the labels of ``k``
    that occur elsewhere (once each); ``broadcast_in_dim`` puts them at ``dims``
    of ``k``'s distinct labels, and ``embed`` (if ``k`` repeats labels) maps the
    distinct labels onto ``k``'s labels.
    """
    others = [t for j, t in enumerate(spec.inputs) if j != k]
    present = set(spec.output).union(*others)
    target = spec.inputs[k]
    if all(l in present for l in target):
        return Spec((spec.output,) + tuple(others), target), None, None
    uniq = tuple(dict.fromkeys(target))
    out = tuple(l for l in uniq if l in present)
    dims = tuple(p for p, l in enumerate(uniq) if l in present)
    embed = Spec((uniq,), target) if len(uniq) != len(target) else None
    return Spec((spec.output,) + tuple(others), out), dims, embed


class Transposed(NamedTuple):
    """The derived einsums of :func:`transpose_spec` for one operand of a plan,
    canonicalized, with their operand shapes (cached on the plan)."""

    spec: Spec
    shapes: tuple
    dims: tuple[int, ...] | None
    uniq_shape: tuple[int, ...] | None
    embed: Spec | None
    optimize: Any


TRANSPOSED: "weakref.WeakKeyDictionary[Plan, dict]" = weakref.WeakKeyDictionary()
"""Per plan, the transposed plans of its operands (:func:`transposed`), computed once."""


def transposed(plan: Plan, k: int) -> Transposed:
    """:func:`transpose_spec` of operand ``k`` of ``plan``, computed once per plan."""
    cache = TRANSPOSED.get(plan)
    if cache is None:
        cache = TRANSPOSED[plan] = {}
    t = cache.get(k)
    if t is None:
        derived, dims, embed = transpose_spec(plan.spec, k)
        shapes = (plan.out_shape,) + tuple(s for j, s in enumerate(plan.shapes) if j != k)
        uniq_shape = None
        if dims is not None:
            uniq_shape = tuple(plan.sizes[l] for l in dict.fromkeys(plan.spec.inputs[k]))
        opt = "auto" if isinstance(plan.optimize, tuple) else plan.optimize  # an explicit path was for the forward
        t = cache[k] = Transposed(
            relabel(derived), shapes, dims, uniq_shape, None if embed is None else relabel(embed), opt
        )
    return t


@einsum_p.def_transpose
def _einsum_transpose(ct, *args, plan: Plan):
    undefined = [k for k, a in enumerate(args) if is_undefined(a)]
    if len(undefined) != 1:  # reachable: linear_transpose(lambda x: einsum("i,i->", x, x))
        raise nonlinear_error(
            "einsum", f"einsum is linear in each operand separately, but {len(undefined)} operands depend on the input"
        )
    (k,) = undefined
    if type(ct) is Zero:
        return [None] * len(args)
    t = transposed(plan, k)

    dtype, place = meta(ct)[1], placement_of_operand(ct)
    others = [a for j, a in enumerate(args) if j != k]
    r = einsum_p.bind(ct, *others, plan=get_plan(t.spec, t.shapes, None, dtype, place, t.optimize))
    if t.dims is not None:
        r = broadcast_in_dim_p.bind(r, shape=t.uniq_shape, broadcast_dimensions=t.dims)
        if t.embed is not None:
            r = einsum_p.bind(r, plan=get_plan(t.embed, (t.uniq_shape,), None, dtype, place, t.optimize))
    cts: list[Any] = [None] * len(args)
    cts[k] = r
    return cts
