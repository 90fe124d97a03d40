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
  them. Derived einsums go through the same plan cache.

Complex numbers: tidu transposes with respect to the bilinear pairing
``Re sum(a * b)`` (as JAX does), under which the transpose of "multiply by c"
is "multiply by c". So the transpose of einsum needs **no conjugation**; the
conjugation the Hermitian adjoint has appears when ``grad``/``vjp`` are checked
against the sesquilinear inner product (tidu.testing's dot-product test), which
the complex128 gradient tests exercise.
"""
from __future__ import annotations

from typing import Any

from tidu import Zero, is_undefined

from .._errors import ShapeError
from .._prim import TensorType, meta, primitive
from .._tensor import Tensor
from ._execute import execute
from ._parse import Spec
from ._plan import Plan, get_plan

__all__ = ["einsum_p", "bind_spec"]

einsum_p = primitive("einsum", "einsum")


@einsum_p.def_impl
def _einsum_impl(*operands: Tensor, plan: Plan) -> Tensor:
    return Tensor._wrap(execute(plan, [x._data for x in operands]))


@einsum_p.def_abstract_eval
def _einsum_aval(*avals: TensorType, plan: Plan) -> TensorType:
    shapes = tuple(a.shape for a in avals)
    if shapes != plan.shapes or any(a.dtype is not avals[0].dtype for a in avals):
        raise ShapeError(f"einsum: primitive operands {avals} do not match the plan {plan} for shapes "
                         f"{plan.shapes} (one dtype required)")
    return TensorType(plan.out_shape, avals[0].dtype, avals[0].placement)


def bind_spec(spec: Spec, operands: list[Any], optimize: Any) -> Any:
    """Bind ``einsum_p`` for a canonical spec (plan from the cache)."""
    shapes, dtypes, places = [], [], []
    for x in operands:
        s, d = meta(x)
        shapes.append(tuple(s))
        dtypes.append(d)
    from .._prim import placement_of_operand  # noqa: PLC0415

    plan = get_plan(spec, tuple(shapes), None, dtypes[0], placement_of_operand(operands[0]), optimize)
    return einsum_p.bind(*operands, plan=plan)


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
            from .._elementwise import add_p  # noqa: PLC0415

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


@einsum_p.def_transpose
def _einsum_transpose(ct, *args, plan: Plan):
    undefined = [k for k, a in enumerate(args) if is_undefined(a)]
    if len(undefined) != 1:
        raise NotImplementedError(
            "einsum: transposition needs exactly one linear operand per term (einsum is multilinear); "
            f"got {len(undefined)} linear operands")
    (k,) = undefined
    if type(ct) is Zero:
        return [None] * len(args)
    derived, dims, embed = transpose_spec(plan.spec, k)
    others = [a for j, a in enumerate(args) if j != k]
    opt = "auto" if isinstance(plan.optimize, tuple) else plan.optimize  # an explicit path was for the forward
    r = bind_spec(_relabel(derived), [ct] + others, opt)
    if dims is not None:
        from .._structural import broadcast_in_dim_p  # noqa: PLC0415

        shape = args[k].aval.shape
        uniq = tuple(dict.fromkeys(plan.spec.inputs[k]))
        uniq_shape = tuple(shape[plan.spec.inputs[k].index(l)] for l in uniq)
        r = broadcast_in_dim_p.bind(r, shape=uniq_shape, broadcast_dimensions=dims)
        if embed is not None:
            r = bind_spec(_relabel(embed), [r], opt)
    cts: list[Any] = [None] * len(args)
    cts[k] = r
    return cts


def _relabel(spec: Spec) -> Spec:
    """``spec`` with labels renumbered by first appearance (the canonical form)."""
    m: dict[int, int] = {}
    ins = tuple(tuple(m.setdefault(l, len(m)) for l in t) for t in spec.inputs)
    return Spec(ins, tuple(m.setdefault(l, len(m)) for l in spec.output))
