"""Elementwise comparisons, predicates and selection (``where``).

* Comparisons (``greater``, ``equal``, ...) and predicates (``isfinite``, ...) have a
  bool output and a zero derivative. Orderings refuse complex operands.
* ``select`` (``where``) is linear in its two branches; the condition carries no
  tangent.

Operand preparation (broadcasting, promotion) is :func:`._elementwise._prepare`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tidu import Zero, is_undefined

from ._dtypes import bool_, result_type
from ._elementwise import FAMILY, _binary_aval, _broadcast_all, _coerce, _is_weak, _prepare, scalar_like
from ._errors import DTypeError, ShapeError
from ._aval import meta, placement_of_operand, TensorType, wrap_fortran
from ._creation import scalar_tensor
from ._operands import check_placement
from ._registry import check_shapes, primitive
from ._batching import register_elementwise_batch, trailing_batch
from ._tensor import Tensor

__all__ = [
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "not_equal",
    "isfinite",
    "isinf",
    "isnan",
    "where",
]


def _refuse_complex(op: str, *avals: TensorType) -> None:
    """Orderings (comparisons, maximum, clip, ...) have no meaning for complex numbers."""
    for a in avals:
        if a.dtype.is_complex:
            raise DTypeError(
                f"{op}: complex operands are not supported (got {a}); "
                "complex numbers have no ordering: compare real() or abs() instead"
            )


def _binary_real_aval(name: str) -> Callable[..., TensorType]:
    """The shape rule of a binary primitive that needs real operands."""
    check = _binary_aval(name)

    def aval(a: TensorType, b: TensorType) -> TensorType:
        _refuse_complex(name, a, b)
        return check(a, b)

    return aval


# ---------------------------------------------------------------------------
# comparisons and predicates: boolean output, zero derivative
# ---------------------------------------------------------------------------
#: primitive name -> (NumPy function, user-level name, is an ordering)
_COMPARISONS: dict[str, tuple[Callable[..., Any], str, bool]] = {
    "gt": (np.greater, "greater", True),
    "ge": (np.greater_equal, "greater_equal", True),
    "lt": (np.less, "less", True),
    "le": (np.less_equal, "less_equal", True),
    "eq": (np.equal, "equal", False),
    "ne": (np.not_equal, "not_equal", False),
}


def _make_comparison(name: str, fn: Callable[..., Any], user_name: str, ordering: bool):
    p = primitive(name, FAMILY)
    p.def_batch(trailing_batch(p))
    check = _binary_real_aval(user_name) if ordering else _binary_aval(user_name)

    def impl(x: Tensor, y: Tensor) -> Tensor:
        return wrap_fortran(fn(x._data, y._data))

    def aval(a: TensorType, b: TensorType) -> TensorType:
        return check(a, b).update(dtype=bool_)

    impl.__name__ = impl.__qualname__ = f"_{name}_impl"
    aval.__name__ = aval.__qualname__ = f"_{name}_aval"
    p.def_impl(impl)
    p.def_abstract_eval(aval)
    p.def_nondiff("comparisons have a boolean output", zero_tangent=True)

    def compare(x: Any, y: Any) -> Any:
        x, y = _prepare(user_name, x, y)
        if ordering:
            check_shapes(p, x, y)  # refuses complex operands (eager bind skips the rule)
        return p.bind(x, y)

    compare.__name__ = compare.__qualname__ = user_name
    compare.__doc__ = f"Elementwise ``{user_name}`` (NumPy semantics); a bool tensor with zero derivative."
    return p, compare


gt_p, greater = _make_comparison("gt", *_COMPARISONS["gt"])
ge_p, greater_equal = _make_comparison("ge", *_COMPARISONS["ge"])
lt_p, less = _make_comparison("lt", *_COMPARISONS["lt"])
le_p, less_equal = _make_comparison("le", *_COMPARISONS["le"])
eq_p, equal = _make_comparison("eq", *_COMPARISONS["eq"])
ne_p, not_equal = _make_comparison("ne", *_COMPARISONS["ne"])


def _bool_like(a: TensorType) -> TensorType:
    return a.update(dtype=bool_)


def _make_predicate(name: str, fn: Callable[..., Any]):
    p = primitive(name, FAMILY)
    p.def_batch(trailing_batch(p))

    def impl(x: Tensor) -> Tensor:
        return wrap_fortran(fn(x._data))

    impl.__name__ = impl.__qualname__ = f"_{name}_impl"
    p.def_impl(impl)
    p.def_abstract_eval(_bool_like)
    p.def_nondiff("predicates have a boolean output", zero_tangent=True)

    def predicate(x: Any) -> Any:
        (x,) = _prepare(name, x)
        return p.bind(x)

    predicate.__name__ = predicate.__qualname__ = name
    predicate.__doc__ = f"Elementwise ``numpy.{name}``; a bool tensor with zero derivative."
    return p, predicate


isfinite_p, isfinite = _make_predicate("isfinite", np.isfinite)
isinf_p, isinf = _make_predicate("isinf", np.isinf)
isnan_p, isnan = _make_predicate("isnan", np.isnan)


# ---------------------------------------------------------------------------
# select (``where``): linear in the two branches, the condition has no tangent
# ---------------------------------------------------------------------------
select_p = primitive("select", FAMILY)


@select_p.def_impl
def _select_impl(c: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return wrap_fortran(np.where(c._data, x._data, y._data))


@select_p.def_abstract_eval
def _select_aval(c: TensorType, a: TensorType, b: TensorType) -> TensorType:
    if c.dtype is not bool_ or c.shape != a.shape:
        raise ShapeError(f"select: the condition must be a bool tensor of the branches' shape, got {c} for {a}")
    return _binary_aval("select")(a, b)


@select_p.def_linear
def _select_transpose(ct, c, x, y):
    zero = scalar_like(0, ct)
    return [
        None,
        select_p.bind(c, ct, zero) if is_undefined(x) else None,
        select_p.bind(c, zero, ct) if is_undefined(y) else None,
    ]


@select_p.def_jvp
def _select_jvp(primals, tangents):
    # linear in (x, y) for a fixed condition; a Zero branch becomes a broadcast scalar 0
    c, x, y = primals
    _, tx, ty = tangents
    out = select_p.bind(c, x, y)
    if type(tx) is Zero and type(ty) is Zero:
        return out, Zero.like(out)
    tx = scalar_like(0, ty) if type(tx) is Zero else tx
    ty = scalar_like(0, tx) if type(ty) is Zero else ty
    return out, select_p.bind(c, tx, ty)


def where(condition: Any, x: Any, y: Any) -> Any:
    """``x`` where ``condition`` else ``y`` (``numpy.where`` with three arguments).

    Differentiable in ``x`` and ``y``; the condition (any dtype, nonzero = True) is not.
    """
    c = _coerce("where", condition)
    if meta(c)[1] is not bool_:
        c = not_equal(c, 0)
    if _is_weak(x) and _is_weak(y):  # two Python scalars: made where the condition lives
        dtype, at = result_type(x, y), placement_of_operand(c)
        x, y = scalar_tensor(x, dtype, "where", at), scalar_tensor(y, dtype, "where", at)
    x, y = _prepare("where", x, y)
    c, x, y = _broadcast_all("where", c, x, y)
    check_placement("where", c, x, y)
    return select_p.bind(c, x, y)


# batching (tidu.vmap): comparisons and predicates get theirs where they are made
register_elementwise_batch(select_p)
