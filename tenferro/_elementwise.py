"""Elementwise primitives: arithmetic, complex parts, comparisons, predicates and
selection (``where``), each with its shape rule, JVP rule and transpose rule in
one place. Siblings: :mod:`._piecewise` (abs, sign, maximum, minimum, clip) and
:mod:`._transcendental` (exp, log, ..., power, logaddexp).

Primitives take operands of identical shape and dtype; the user-facing
functions (``tenferro.add``, ``tenferro.exp``, ...) apply NumPy broadcasting and
dtype promotion first, through the explicit ``broadcast_in_dim`` and
``convert_element_type`` primitives, so every AD rule sees exact shapes.

Complex numbers follow tidu's (JAX's) convention: JVPs are R-linear and the
transpose of multiplication by ``c`` is multiplication by ``c`` (no conjugate).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tidu import Tracer, UndefinedPrimal, Zero, is_undefined

from ._dtypes import DType, bool_, float64, result_type
from ._errors import DTypeError, ShapeError, fmt_shape
from . import _structural as _st
from ._placement import CPU
from ._prim import (
    TensorType, aval_of_operand, as_operand, check_placement, fortran as _f, meta, primitive, scalar_tensor,
)
from ._tensor import Tensor

FAMILY = "elementwise"




def _same(a: TensorType, *rest: TensorType) -> TensorType:
    return a


def _binary_aval(name: str) -> Callable[..., TensorType]:
    def aval(a: TensorType, b: TensorType) -> TensorType:
        if a is b:  # interned CPU avals (see _prim.tensor_type)
            return a
        if a.shape != b.shape or a.dtype is not b.dtype:
            raise ShapeError(
                f"{name}: primitive operands must have equal shapes and dtypes, got {a} and {b} "
                "(the user-level function broadcasts and promotes first)"
            )
        return a

    return aval


def _bool_aval(a: TensorType, b: TensorType) -> TensorType:
    return a.update(dtype=bool_)


def _real_aval(a: TensorType) -> TensorType:
    return a.update(dtype=a.dtype.real_dtype)


# ---------------------------------------------------------------------------
# User-level operand preparation: promotion and broadcasting.
# ---------------------------------------------------------------------------
def _prepare(op: str, *xs: Any) -> list[Any]:
    """Promote dtypes (Python scalars are weak) and broadcast shapes, NumPy style."""
    if len(xs) == 2:
        x, y = xs
        if type(x) is Tensor and type(y) is Tensor:
            a, b = x._data, y._data
            if a.shape == b.shape and a.dtype == b.dtype and type(a) is type(b) is np.ndarray:
                return [x, y]
        # Canonical CPU avals (see _prim.tensor_type): identical avals need no work.
        ax, ay = aval_of_operand(x), aval_of_operand(y)
        if ax is not None:
            if ay is ax:
                return [x, y]
            if ay is None and _fits_weakly(y, ax):
                return [x, _constant(y, ax)]
        elif ay is not None and _fits_weakly(x, ay):
            return [_constant(x, ay), y]
    elif len(xs) == 1 and (type(xs[0]) is Tensor or isinstance(xs[0], Tracer)):
        return [xs[0]]
    if all(type(x) is Tensor or isinstance(x, Tracer) for x in xs):
        metas = [meta(x) for x in xs]
        s0, d0 = metas[0]
        if all(s == s0 and d is d0 for s, d in metas[1:]):
            if len(xs) > 1:
                check_placement(op, *xs)
            return list(xs)
    args = [x if (type(x) is Tensor or isinstance(x, Tracer)) else _coerce(op, x) for x in xs]
    dtype = result_type(*[meta(a)[1] if not _is_weak(x) else x for a, x in zip(args, xs)])
    out = []
    for a, x in zip(args, xs):
        if _is_weak(x):
            a = scalar_tensor(x, dtype)
        elif meta(a)[1] is not dtype:
            a = _st.convert_element_type(a, dtype)
        out.append(a)
    out = _broadcast_all(op, *out)
    check_placement(op, *out)
    return out


def _fits_weakly(value: Any, aval: TensorType) -> bool:
    """True when the Python scalar ``value`` takes the dtype of a floating CPU
    operand of ``aval`` unchanged (weak promotion: ``x * 2``, ``1 - x``)."""
    t = type(value)
    if t is float or t is int or t is bool:
        return aval.placement is CPU and aval.dtype.is_floating
    return t is complex and aval.placement is CPU and aval.dtype.is_complex


def _constant(value: Any, aval: TensorType) -> Tensor:
    """The constant ``value`` at the shape and dtype of ``aval`` (what promoting
    and broadcasting a weak scalar gives, built directly)."""
    shape = aval.shape
    if not shape:
        return Tensor._wrap(np.asarray(value, aval.dtype.numpy))
    if aval.size > _SMALL_CONSTANT:  # large: a broadcast view, as broadcast_in_dim gives
        return Tensor._wrap(np.broadcast_to(np.asarray(value, aval.dtype.numpy), shape))
    return Tensor._wrap(np.full(shape, value, aval.dtype.numpy, order="F"))


_SMALL_CONSTANT = 4096


def _is_weak(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


def _coerce(op: str, x: Any) -> Any:
    if _is_weak(x):
        return scalar_tensor(x, result_type(x))
    return as_operand(op, x)


# ---------------------------------------------------------------------------
# add, sub, neg: linear
# ---------------------------------------------------------------------------
add_p = primitive("add", FAMILY)


@add_p.def_impl
def _add_impl(x, y):
    return Tensor._wrap(_f(np.add(x._data, y._data)))


add_p.def_abstract_eval(_binary_aval("add"))


@add_p.def_linear
def _add_transpose(ct, x, y):
    return [ct if type(x) is UndefinedPrimal else None, ct if type(y) is UndefinedPrimal else None]


@add_p.def_jvp
def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = add_p.bind(x, y)
    if type(tx) is Zero:
        return out, ty
    if type(ty) is Zero:
        return out, tx
    return out, add_p.bind(tx, ty)


sub_p = primitive("sub", FAMILY)


@sub_p.def_impl
def _sub_impl(x, y):
    return Tensor._wrap(_f(np.subtract(x._data, y._data)))


sub_p.def_abstract_eval(_binary_aval("sub"))


@sub_p.def_linear
def _sub_transpose(ct, x, y):
    return [ct if is_undefined(x) else None, neg_p.bind(ct) if is_undefined(y) else None]


@sub_p.def_jvp
def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = sub_p.bind(x, y)
    if type(tx) is Zero:
        return out, neg_p.bind(ty)
    if type(ty) is Zero:
        return out, tx
    return out, sub_p.bind(tx, ty)


neg_p = primitive("neg", FAMILY)
neg_p.def_impl(lambda x: Tensor._wrap(_f(np.negative(x._data))))
neg_p.def_abstract_eval(_same)


@neg_p.def_linear
def _neg_transpose(ct, x):
    return [neg_p.bind(ct)]


# ---------------------------------------------------------------------------
# mul, div: bilinear / nonlinear
# ---------------------------------------------------------------------------
mul_p = primitive("mul", FAMILY)


@mul_p.def_impl
def _mul_impl(x, y):
    return Tensor._wrap(_f(np.multiply(x._data, y._data)))


mul_p.def_abstract_eval(_binary_aval("mul"))


def _mul_jvp_x(tx, out, x, y):
    return mul_p.bind(tx, y)


def _mul_jvp_y(ty, out, x, y):
    return mul_p.bind(x, ty)


mul_p.def_jvp_per_arg(_mul_jvp_x, _mul_jvp_y)


@mul_p.def_transpose
def _mul_transpose(ct, x, y):
    if type(x) is UndefinedPrimal:
        return [mul_p.bind(ct, y), None]
    return [None, mul_p.bind(x, ct)]


div_p = primitive("div", FAMILY)
div_p.def_impl(lambda x, y: Tensor._wrap(_f(np.true_divide(x._data, y._data))))
div_p.def_abstract_eval(_binary_aval("div"))


def _div_jvp_x(tx, out, x, y):
    return div_p.bind(tx, y)


def _div_jvp_y(ty, out, x, y):
    return neg_p.bind(mul_p.bind(ty, div_p.bind(out, y)))


div_p.def_jvp_per_arg(_div_jvp_x, _div_jvp_y)


@div_p.def_transpose
def _div_transpose(ct, x, y):
    # linear in x only (the JVP only stages div(tx, y) with y known)
    return [div_p.bind(ct, y), None]


# ---------------------------------------------------------------------------
# complex parts
# ---------------------------------------------------------------------------
conj_p = primitive("conj", FAMILY)
conj_p.def_impl(lambda x: Tensor._wrap(_f(np.conj(x._data))) if x._data.dtype.kind == "c" else x)
conj_p.def_abstract_eval(_same)


@conj_p.def_linear
def _conj_transpose(ct, x):
    return [conj_p.bind(ct)]


real_p = primitive("real", FAMILY)
real_p.def_impl(lambda x: Tensor._wrap(_f(np.real(x._data))) if x._data.dtype.kind == "c" else x)
real_p.def_abstract_eval(_real_aval)


@real_p.def_linear
def _real_transpose(ct, x):
    if x.aval.dtype.is_complex:
        return [_st.convert_element_type(ct, x.aval.dtype)]
    return [ct]


imag_p = primitive("imag", FAMILY)
imag_p.def_impl(lambda x: Tensor._wrap(_f(np.imag(x._data))) if x._data.dtype.kind == "c"
                else Tensor._wrap(np.zeros_like(x._data, order="F")))
imag_p.def_abstract_eval(_real_aval)


@imag_p.def_linear
def _imag_transpose(ct, x):
    # Re(sum(imag(u) * c)) = Re(sum(u * (-i c)))
    if not x.aval.dtype.is_complex:
        return [mul_p.bind(ct, scalar_like(0.0, ct))]
    c = _st.convert_element_type(ct, x.aval.dtype)
    return [mul_p.bind(c, scalar_like(-1j, c))]


def scalar_like(value: Any, x: Any) -> Any:
    """``value`` broadcast to the shape and dtype of ``x`` (a constant)."""
    shape, dtype = meta(x)
    s = scalar_tensor(value, dtype)
    return s if shape == () else _st.broadcast_to(s, shape)


# ---------------------------------------------------------------------------
# user-level functions
# ---------------------------------------------------------------------------
def _eager_pair(x: Any, y: Any) -> bool:
    """True for two NumPy-backed tensors of one shape and dtype: they need no
    preparation and, with no tracer, ``bind`` calls the impl (eager fast path)."""
    if type(x) is Tensor and type(y) is Tensor:
        a, b = x._data, y._data
        return a.shape == b.shape and a.dtype is b.dtype and type(a) is np.ndarray and type(b) is np.ndarray
    return False


_WEAK_REAL = (float, int, bool)


def _eager_operands(x: Any, y: Any) -> tuple[Any, Any] | None:
    """NumPy operands of an eager binary operation that needs no preparation, else ``None``.

    Either two NumPy-backed tensors of one shape and dtype, or such a tensor of a
    floating dtype and a Python scalar that takes that dtype unchanged (weak
    promotion, see :func:`_fits_weakly`; the tensor has rank >= 1 so that NumPy 1.x
    value-based casting keeps its dtype too). The scalar stays a scalar: NumPy
    broadcasts it, giving the values the primitive would compute on the broadcast
    constant ``_prepare`` builds, without building it.
    """
    tx, ty = type(x), type(y)
    if tx is Tensor:
        a = x._data
        if type(a) is not np.ndarray:
            return None
        if ty is Tensor:
            b = y._data
            if type(b) is np.ndarray and a.shape == b.shape and a.dtype is b.dtype:
                return a, b
            return None
        if ty in _WEAK_REAL:
            return (a, y) if a.dtype.kind in "fc" and a.ndim else None
        if ty is complex:
            return (a, y) if a.dtype.kind == "c" and a.ndim else None
        return None
    if ty is Tensor and (tx in _WEAK_REAL or tx is complex):
        b = y._data
        if type(b) is np.ndarray and b.ndim and (b.dtype.kind in "fc" if tx is not complex else b.dtype.kind == "c"):
            return x, b
    return None


def add(x: Any, y: Any) -> Any:
    """``x + y`` with NumPy broadcasting and tenferro promotion."""
    if type(x) is Tensor and type(y) is Tensor:  # the commonest eager case, inlined
        a, b = x._data, y._data
        if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape and a.dtype is b.dtype:
            return Tensor._wrap(_f(np.add(a, b)))
    ops = _eager_operands(x, y)
    if ops is not None:
        return Tensor._wrap(_f(np.add(*ops)))
    x, y = _prepare("add", x, y)
    return add_p.bind(x, y)


def subtract(x: Any, y: Any) -> Any:
    """``x - y``."""
    if type(x) is Tensor and type(y) is Tensor:  # the commonest eager case, inlined
        a, b = x._data, y._data
        if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape and a.dtype is b.dtype:
            return Tensor._wrap(_f(np.subtract(a, b)))
    ops = _eager_operands(x, y)
    if ops is not None:
        return Tensor._wrap(_f(np.subtract(*ops)))
    x, y = _prepare("subtract", x, y)
    return sub_p.bind(x, y)


def multiply(x: Any, y: Any) -> Any:
    """``x * y``."""
    if type(x) is Tensor and type(y) is Tensor:  # the commonest eager case, inlined
        a, b = x._data, y._data
        if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape and a.dtype is b.dtype:
            return Tensor._wrap(_f(np.multiply(a, b)))
    ops = _eager_operands(x, y)
    if ops is not None:
        return Tensor._wrap(_f(np.multiply(*ops)))
    x, y = _prepare("multiply", x, y)
    return mul_p.bind(x, y)


def divide(x: Any, y: Any) -> Any:
    """``x / y`` (true division; integer operands are promoted to float64)."""
    x, y = _prepare("divide", x, y)
    d = meta(x)[1]
    if not d.is_floating:
        x, y = _st.convert_element_type(x, float64), _st.convert_element_type(y, float64)
    return div_p.bind(x, y)


def negative(x: Any) -> Any:
    """``-x``."""
    (x,) = _prepare("negative", x)
    return neg_p.bind(x)


def conj(x: Any) -> Any:
    """Complex conjugate (identity on real tensors)."""
    (x,) = _prepare("conj", x)
    return conj_p.bind(x)


def real(x: Any) -> Any:
    """Real part (a real tensor)."""
    (x,) = _prepare("real", x)
    return real_p.bind(x)


def imag(x: Any) -> Any:
    """Imaginary part (a real tensor)."""
    (x,) = _prepare("imag", x)
    return imag_p.bind(x)


sub = subtract
mul = multiply
div = divide
neg = negative
conjugate = conj


# ---------------------------------------------------------------------------
# helpers shared by the rules below
# ---------------------------------------------------------------------------
def _broadcast_all(op: str, *xs: Any) -> list[Any]:
    """Broadcast already-promoted operands (of possibly different dtypes) to one shape."""
    shapes = [tuple(meta(x)[0]) for x in xs]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(
            f"{op}: operands could not be broadcast together: shapes "
            + ", ".join(fmt_shape(s) for s in shapes)
            + " (NumPy rules: trailing dimensions must match or be 1)"
        ) from None
    return [x if tuple(meta(x)[0]) == shape else _st.broadcast_to(x, shape) for x in xs]


def _to_float(op: str, x: Any) -> Any:
    """Integer and boolean operands of inexact functions become float64 (documented)."""
    return x if meta(x)[1].is_floating else _st.convert_element_type(x, float64)


def _refuse_complex(op: str, *avals: TensorType) -> None:
    for a in avals:
        if a.dtype.is_complex:
            raise DTypeError(f"{op}: complex operands are not supported (got {a}); "
                             "complex numbers have no ordering: compare real() or abs() instead")


def _binary_real_aval(name: str) -> Callable[..., TensorType]:
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
    p.def_impl(lambda x, y: Tensor._wrap(_f(fn(x._data, y._data))))
    check = _binary_real_aval(user_name) if ordering else _binary_aval(user_name)
    p.def_abstract_eval(lambda a, b: check(a, b).update(dtype=bool_))
    p.def_nondiff("comparisons have a boolean output", zero_tangent=True)

    def compare(x: Any, y: Any) -> Any:
        x, y = _prepare(user_name, x, y)
        if ordering:
            _refuse_complex(user_name, TensorType(*meta(x)), TensorType(*meta(y)))
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


def _make_predicate(name: str, fn: Callable[..., Any]):
    p = primitive(name, FAMILY)
    p.def_impl(lambda x: Tensor._wrap(_f(fn(x._data))))
    p.def_abstract_eval(lambda a: a.update(dtype=bool_))
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
select_p.def_impl(lambda c, x, y: Tensor._wrap(_f(np.where(c._data, x._data, y._data))))


@select_p.def_abstract_eval
def _select_aval(c: TensorType, a: TensorType, b: TensorType) -> TensorType:
    if c.dtype is not bool_ or c.shape != a.shape:
        raise ShapeError(f"select: the condition must be a bool tensor of the branches' shape, got {c} for {a}")
    return _binary_aval("select")(a, b)


@select_p.def_linear
def _select_transpose(ct, c, x, y):
    zero = scalar_like(0, ct)
    return [None,
            select_p.bind(c, ct, zero) if is_undefined(x) else None,
            select_p.bind(c, zero, ct) if is_undefined(y) else None]


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
    x, y = _prepare("where", x, y)
    c, x, y = _broadcast_all("where", c, x, y)
    return select_p.bind(c, x, y)
