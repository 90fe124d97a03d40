"""Elementwise primitives: arithmetic and complex parts, each with its shape rule,
JVP rule and transpose rule in one place, and the operand preparation
(:func:`_prepare`) every elementwise family uses. Siblings: :mod:`._compare`
(comparisons, predicates, ``where``), :mod:`._piecewise` (abs, sign, maximum,
minimum, clip) and :mod:`._transcendental` (exp, log, ..., power, logaddexp).

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

from ._dispatch import dispatch, dispatchable
from ._errors import ForeignOperandError
from ._dtypes import float64, result_type
from ._errors import DTypeError, ShapeError, fmt_shape
from . import _structural as _st
from ._placement import CPU, get_default_placement
from ._aval import aval_of_operand, meta, placement_of_operand, TensorType, wrap_fortran
from ._creation import constant_tensor, scalar_tensor
from ._operands import as_operand, check_placement, eager_operands
from ._registry import nonlinear_error, primitive
from ._batching import register_elementwise_batch
from ._tensor import Tensor

FAMILY = "elementwise"
_new_object = object.__new__


def _same(a: TensorType, *rest: TensorType) -> TensorType:
    return a


def _binary_aval(name: str) -> Callable[..., TensorType]:
    def aval(a: TensorType, b: TensorType) -> TensorType:
        if a is b:  # interned CPU avals (see _aval.tensor_type)
            return a
        if a.shape != b.shape or a.dtype is not b.dtype:
            raise ShapeError(
                f"{name}: primitive operands must have equal shapes and dtypes, got {a} and {b} "
                "(the user-level function broadcasts and promotes first)"
            )
        return a

    return aval


def _real_aval(a: TensorType) -> TensorType:
    return a.update(dtype=a.dtype.real_dtype)


def _ufunc_impl(ufunc: Any) -> Callable[..., Tensor]:
    """The impl applying ``ufunc`` to the operands' arrays (``wrap_fortran(ufunc(...))``, with
    a fresh column-major host result wrapped without another call: the hottest impls)."""

    def impl(*xs: Tensor) -> Tensor:
        r = ufunc(*[x._data for x in xs]) if len(xs) != 2 else ufunc(xs[0]._data, xs[1]._data)
        if type(r) is np.ndarray and r.flags.f_contiguous:
            t = _new_object(Tensor)
            t._data = r
            return t
        return wrap_fortran(r)

    impl.__name__ = impl.__qualname__ = f"{ufunc.__name__}_impl"
    return impl


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
        # Canonical CPU avals (see _aval.tensor_type): identical avals need no work.
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
    args = [x if _is_weak(x) else as_operand(op, x) for x in xs]  # weak scalars: made below, at the joint dtype
    dtype = result_type(*[meta(a)[1] if not _is_weak(x) else x for a, x in zip(args, xs)])
    where = next((placement_of_operand(a) for a, x in zip(args, xs) if not _is_weak(x)), get_default_placement())
    out = []
    for a, x in zip(args, xs):
        if _is_weak(x):
            a = scalar_tensor(x, dtype, op, where)
        elif meta(a)[1] is not dtype:
            a = _st.convert_element_type(a, dtype)
        out.append(a)
    out = _broadcast_all(op, *out)
    check_placement(op, *out)
    return out


_FLOAT_INTS = 2**1024 - 2**970  # the least int that float() rounds to inf (OverflowError)


def _fits_weakly(value: Any, aval: TensorType) -> bool:
    """True when the Python scalar ``value`` takes the dtype of a floating
    operand of ``aval`` unchanged (weak promotion: ``x * 2``, ``1 - x``)."""
    t = type(value)
    if t is float or t is bool or (t is int and -_FLOAT_INTS < value < _FLOAT_INTS):
        return aval.dtype.is_floating  # a larger int (10**400) has no float: scalar_tensor refuses it
    return t is complex and aval.dtype.is_complex


def _constant(value: Any, aval: TensorType) -> Tensor:
    """The constant ``value`` at the shape, dtype and placement of ``aval`` (what
    promoting and broadcasting a weak scalar gives, built directly; canonical and
    writeable like every tensor tenferro makes, never a zero-stride view)."""
    shape = aval.shape
    if aval.placement is not CPU:
        return constant_tensor(value, shape, aval.dtype, aval.placement)
    if not shape:
        return Tensor._wrap(np.asarray(value, aval.dtype.numpy))
    return Tensor._wrap(np.full(shape, value, aval.dtype.numpy, order="F"))


def _is_weak(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


def _coerce(op: str, x: Any) -> Any:
    if _is_weak(x):
        return scalar_tensor(x, result_type(x), op)
    return as_operand(op, x)


# ---------------------------------------------------------------------------
# add, sub, neg: linear
# ---------------------------------------------------------------------------
add_p = primitive("add", FAMILY)


add_p.def_impl(_ufunc_impl(np.add))


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


sub_p.def_impl(_ufunc_impl(np.subtract))


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


neg_p.def_impl(_ufunc_impl(np.negative))


neg_p.def_abstract_eval(_same)


@neg_p.def_linear
def _neg_transpose(ct, x):
    return [neg_p.bind(ct)]


# ---------------------------------------------------------------------------
# mul, div: bilinear / nonlinear
# ---------------------------------------------------------------------------
mul_p = primitive("mul", FAMILY)


mul_p.def_impl(_ufunc_impl(np.multiply))


mul_p.def_abstract_eval(_binary_aval("mul"))


def _mul_jvp_x(tx, out, x, y):
    return mul_p.bind(tx, y)


def _mul_jvp_y(ty, out, x, y):
    return mul_p.bind(x, ty)


mul_p.def_jvp_per_arg(_mul_jvp_x, _mul_jvp_y)


@mul_p.def_transpose
def _mul_transpose(ct, x, y):
    # bilinear: transposable in one operand with the other known
    lin_x, lin_y = type(x) is UndefinedPrimal, type(y) is UndefinedPrimal
    if lin_x and lin_y:
        raise nonlinear_error("mul", "mul is not linear in both operands jointly (both depend on the input)")
    if lin_x:
        return [mul_p.bind(ct, y), None]
    return [None, mul_p.bind(x, ct)]


div_p = primitive("div", FAMILY)


div_p.def_impl(_ufunc_impl(np.true_divide))


div_p.def_abstract_eval(_binary_aval("div"))


def _div_jvp_x(tx, out, x, y):
    return div_p.bind(tx, y)


def _div_jvp_y(ty, out, x, y):
    return neg_p.bind(mul_p.bind(ty, div_p.bind(out, y)))


div_p.def_jvp_per_arg(_div_jvp_x, _div_jvp_y)


@div_p.def_transpose
def _div_transpose(ct, x, y):
    # linear in x only (the JVP only stages div(tx, y) with y known)
    if type(y) is UndefinedPrimal:
        raise nonlinear_error("div", "div is linear in its numerator only, and the denominator depends on the input")
    return [div_p.bind(ct, y), None]


# ---------------------------------------------------------------------------
# complex parts
# ---------------------------------------------------------------------------
conj_p = primitive("conj", FAMILY)


@conj_p.def_impl
def _conj_impl(x):
    return wrap_fortran(np.conj(x._data)) if x._data.dtype.kind == "c" else x  # identity on real tensors


conj_p.def_abstract_eval(_same)


@conj_p.def_linear
def _conj_transpose(ct, x):
    return [conj_p.bind(ct)]


real_p = primitive("real", FAMILY)


@real_p.def_impl
def _real_impl(x):
    # ``np.real`` of a complex array is a strided view: copy it into canonical storage
    return Tensor._wrap(np.real(x._data).copy(order="F")) if x._data.dtype.kind == "c" else x


real_p.def_abstract_eval(_real_aval)


@real_p.def_linear
def _real_transpose(ct, x):
    if x.aval.dtype.is_complex:
        return [_st.convert_element_type(ct, x.aval.dtype)]
    return [ct]


imag_p = primitive("imag", FAMILY)


@imag_p.def_impl
def _imag_impl(x):
    a = x._data
    if a.dtype.kind == "c":
        return Tensor._wrap(np.imag(a).copy(order="F"))  # a strided view: copy into canonical storage
    return Tensor._wrap(np.zeros_like(a, order="F"))


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
    s = scalar_tensor(value, dtype, "scalar_like", placement_of_operand(x))
    return s if shape == () else _st.broadcast_to(s, shape)


# ---------------------------------------------------------------------------
# user-level functions
# ---------------------------------------------------------------------------
def _ring_op(name: str, ufunc: Any, prim: Any, doc: str, bool_ok: bool = True) -> Any:
    """User-level ``add``/``subtract``/``multiply``: the commonest eager case (two
    NumPy tensors of one shape and dtype, or a tensor and a Python scalar) goes
    straight to NumPy, as ``bind`` would with no tracer; everything else is
    prepared (promotion, broadcasting) and bound. ``bool_ok=False`` refuses bool
    operands (subtract: NumPy refuses them too)."""
    fast_refused = None if bool_ok else np.dtype(np.bool_)  # the fast paths' dtype test is one ``is``

    def op(x: Any, y: Any) -> Any:
        if isinstance(x, Tracer):
            if isinstance(y, Tracer) and x.aval is y.aval and (bool_ok or x.aval.dtype.kind != "bool"):
                return prim.bind(x, y)  # what _prepare does first: nothing to prepare
        else:
            if type(x) is Tensor and type(y) is Tensor:  # the commonest case of eager_operands, inlined
                a, b = x._data, y._data
                if type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape and a.dtype is b.dtype:
                    if a.dtype is not fast_refused:
                        return wrap_fortran(ufunc(a, b))
            else:
                ops = eager_operands(x, y)  # a tensor and a Python scalar (never bool: floating only)
                if ops is not None:
                    try:
                        return wrap_fortran(ufunc(*ops))
                    except OverflowError:  # a Python int beyond the float range: _prepare names it
                        pass
        try:
            x, y = _prepare(name, x, y)
        except ForeignOperandError:  # a structured operand: its type takes the call
            return dispatch(op, (x, y), {})
        if not bool_ok and meta(x)[1].kind == "bool":
            raise DTypeError(
                f"{name}: boolean tensors have no subtraction (dtype bool); use tenferro.not_equal "
                "(logical xor) or convert to an integer dtype first"
            )
        return prim.bind(x, y)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


add = _ring_op("add", np.add, add_p, "``x + y`` with NumPy broadcasting and tenferro promotion.")
subtract = _ring_op(
    "subtract", np.subtract, sub_p, "``x - y`` with NumPy broadcasting and tenferro promotion.", bool_ok=False
)
multiply = _ring_op("multiply", np.multiply, mul_p, "``x * y`` with NumPy broadcasting and tenferro promotion.")


@dispatchable
def divide(x: Any, y: Any) -> Any:
    """``x / y`` (true division; integer operands are promoted to float64)."""
    x, y = _prepare("divide", x, y)
    d = meta(x)[1]
    if not d.is_floating:
        x, y = _st.convert_element_type(x, float64), _st.convert_element_type(y, float64)
    return div_p.bind(x, y)


@dispatchable
def negative(x: Any) -> Any:
    """``-x``."""
    (x,) = _prepare("negative", x)
    if meta(x)[1].kind == "bool":
        raise DTypeError(
            "negative: boolean tensors have no negative; use logical operations "
            "(tenferro.where, not_equal) or convert to an integer dtype first"
        )
    return neg_p.bind(x)


@dispatchable
def conj(x: Any) -> Any:
    """Complex conjugate (identity on real tensors)."""
    (x,) = _prepare("conj", x)
    return conj_p.bind(x)


@dispatchable
def real(x: Any) -> Any:
    """Real part (a real tensor)."""
    (x,) = _prepare("real", x)
    return real_p.bind(x)


@dispatchable
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


# batching (tidu.vmap): one application with the batch axis last (tenferro._batching)
register_elementwise_batch(add_p, sub_p, neg_p, mul_p, div_p, conj_p, real_p, imag_p)
for _p in (add_p, sub_p, neg_p, mul_p, div_p):  # JVP and transpose equations fixed by the avals: recorded once
    _p.jvp_replay = _p.transpose_replay = True  # (tidu._replay, tidu._replay_transpose)
