"""Transcendental elementwise functions: the unary ones from one rule table,
plus ``power`` (differentiable in base and exponent), ``logaddexp``, ``arctan2``
and ``angle``.

Each row of :data:`RULES` names a function, its NumPy evaluation and its JVP
rule ``jvp(t, out, x)`` written with tenferro operations (so derivatives of any
order work). The tangent is always ``t`` times a residual, hence linear in
``t``: no transpose rule is needed beyond those of ``mul``/``div``.

Conventions:

* Complex inputs: these functions are holomorphic, and the JVP is
  ``f'(x) * t`` with ``f'`` evaluated in complex arithmetic (principal branches,
  as NumPy).
* Integer and boolean inputs are promoted to float64 first (NumPy gives float16
  for bool; tenferro has no float16). ``square`` keeps integer dtypes, as NumPy.
* ``reciprocal`` promotes integers to float64 (NumPy's integer reciprocal
  truncates, ``1 // x``; tenferro computes ``1 / x``).
* Evaluation never emits NumPy floating-point warnings (``log(0)`` is ``-inf``
  silently, as in JAX).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tidu import Tracer

from ._compare import _binary_real_aval, _refuse_complex, equal, isfinite, less, select_p, where
from ._dtypes import int64
from ._elementwise import (
    _binary_aval,
    _prepare,
    _to_float,
    add,
    div,
    div_p,
    imag,
    mul,
    mul_p,
    neg,
    real,
    scalar_like,
    sub,
)
from ._errors import DTypeError, TenferroValueError
from ._aval import meta, TensorType, wrap_fortran
from ._registry import check_shapes, primitive
from ._batching import register_elementwise_batch, trailing_batch
from ._structural import convert_element_type
from ._tensor import Tensor

_FLOATING_KINDS = ("float", "complex")

FAMILY = "elementwise"


@dataclass(frozen=True)
class UnaryRule:
    name: str
    numpy: Callable[[Any], Any]
    jvp: Callable[[Any, Any, Any], Any]  # (t, out, x) -> tangent of the output
    doc: str
    keeps_int: bool = False  # integer inputs keep their dtype (square)
    quiet: bool = False  # evaluate under np.errstate (domain edges: log(0), sqrt(-1))


# --- JVP rules: t times the derivative ---------------------------------------------
# ``t`` (the tangent of ``x``) and the derivative factor both have ``x``'s shape and
# dtype, so the product (quotient) is applied with the primitive directly (no promotion or
# broadcasting to prepare).
def _exp_jvp(t, out, x):
    return mul_p.bind(t, out)


def _log_jvp(t, out, x):
    return div_p.bind(t, x)


def _sin_jvp(t, out, x):
    return mul_p.bind(t, cos(x))


def _cos_jvp(t, out, x):
    return mul_p.bind(t, neg(sin(x)))


def _tan_jvp(t, out, x):
    return mul_p.bind(t, add(1, mul(out, out)))


def _sinh_jvp(t, out, x):
    return mul_p.bind(t, cosh(x))


def _cosh_jvp(t, out, x):
    return mul_p.bind(t, sinh(x))


def _tanh_jvp(t, out, x):
    return mul_p.bind(t, sub(1, mul(out, out)))


def _arcsin_jvp(t, out, x):
    return mul_p.bind(t, rsqrt(sub(1, mul(x, x))))


def _arccos_jvp(t, out, x):
    return mul_p.bind(t, neg(rsqrt(sub(1, mul(x, x)))))


def _arctan_jvp(t, out, x):
    return div_p.bind(t, add(1, mul(x, x)))


def _sqrt_jvp(t, out, x):
    return div_p.bind(t, mul(out, 2))


def _rsqrt_jvp(t, out, x):
    # d x^{-1/2} = -1/2 x^{-3/2} = -1/2 * out / x
    return mul_p.bind(t, mul(div(out, x), -0.5))


def _expm1_jvp(t, out, x):
    return mul_p.bind(t, add(out, 1))


def _log1p_jvp(t, out, x):
    return div_p.bind(t, add(x, 1))


def _square_jvp(t, out, x):
    return mul_p.bind(t, mul(x, 2))


def _reciprocal_jvp(t, out, x):
    return mul_p.bind(t, neg(mul(out, out)))


def _rsqrt_np(a):
    return 1 / np.sqrt(a)


RULES: tuple[UnaryRule, ...] = (
    UnaryRule("exp", np.exp, _exp_jvp, "Exponential ``e**x``."),
    UnaryRule("log", np.log, _log_jvp, "Natural logarithm (principal branch for complex).", quiet=True),
    UnaryRule("sin", np.sin, _sin_jvp, "Sine."),
    UnaryRule("cos", np.cos, _cos_jvp, "Cosine."),
    UnaryRule("tan", np.tan, _tan_jvp, "Tangent."),
    UnaryRule("sinh", np.sinh, _sinh_jvp, "Hyperbolic sine."),
    UnaryRule("cosh", np.cosh, _cosh_jvp, "Hyperbolic cosine."),
    UnaryRule("tanh", np.tanh, _tanh_jvp, "Hyperbolic tangent."),
    UnaryRule("arcsin", np.arcsin, _arcsin_jvp, "Inverse sine.", quiet=True),
    UnaryRule("arccos", np.arccos, _arccos_jvp, "Inverse cosine.", quiet=True),
    UnaryRule("arctan", np.arctan, _arctan_jvp, "Inverse tangent."),
    UnaryRule("sqrt", np.sqrt, _sqrt_jvp, "Square root (principal branch for complex).", quiet=True),
    UnaryRule("rsqrt", _rsqrt_np, _rsqrt_jvp, "Reciprocal square root ``1 / sqrt(x)``.", quiet=True),
    UnaryRule("expm1", np.expm1, _expm1_jvp, "``exp(x) - 1``, accurate for small ``x``."),
    UnaryRule("log1p", np.log1p, _log1p_jvp, "``log(1 + x)``, accurate for small ``x``.", quiet=True),
    UnaryRule("square", np.square, _square_jvp, "``x * x``.", keeps_int=True),
    UnaryRule("reciprocal", np.reciprocal, _reciprocal_jvp, "``1 / x`` (integers promote to float64).", quiet=True),
)


def _make_unary(rule: UnaryRule):
    p = primitive(rule.name, FAMILY)
    p.def_batch(trailing_batch(p))
    fn = rule.numpy

    if rule.quiet:

        def impl(x):
            with np.errstate(all="ignore"):  # ~1 us: only where the domain has edges
                return wrap_fortran(fn(x._data))
    else:

        def impl(x):
            return wrap_fortran(fn(x._data))

    def aval(a: TensorType) -> TensorType:
        if not (a.dtype.is_floating or rule.keeps_int):
            raise DTypeError(
                f"{rule.name}: the primitive takes floating operands, got {a} "
                f"(tenferro.{rule.name} promotes integers to float64 first)"
            )
        return a

    p.def_impl(impl)
    p.def_abstract_eval(aval)
    p.def_jvp_per_arg(rule.jvp)
    p.jvp_replay = True  # the JVP's equations are fixed by the avals: recorded once (tidu._replay)

    def user(x: Any) -> Any:
        if type(x) is Tensor:
            if x._data.dtype.kind in "fc":
                return impl(x)  # fast path: a floating tensor needs no preparation (no tracer: what bind does)
        elif isinstance(x, Tracer):
            a = x.aval
            if type(a) is TensorType and a.dtype.kind in _FLOATING_KINDS:
                return p.bind(x)  # same for a traced floating tensor
        (x,) = _prepare(rule.name, x)
        if not (rule.keeps_int and meta(x)[1].name != "bool"):
            x = _to_float(rule.name, x)
        return p.bind(x)

    user.__name__ = user.__qualname__ = rule.name
    user.__doc__ = f"{rule.doc} Elementwise, NumPy semantics; differentiable (holomorphic for complex)."
    return p, user


_BY_NAME = {r.name: r for r in RULES}
exp_p, exp = _make_unary(_BY_NAME["exp"])
log_p, log = _make_unary(_BY_NAME["log"])
sin_p, sin = _make_unary(_BY_NAME["sin"])
cos_p, cos = _make_unary(_BY_NAME["cos"])
tan_p, tan = _make_unary(_BY_NAME["tan"])
sinh_p, sinh = _make_unary(_BY_NAME["sinh"])
cosh_p, cosh = _make_unary(_BY_NAME["cosh"])
tanh_p, tanh = _make_unary(_BY_NAME["tanh"])
arcsin_p, arcsin = _make_unary(_BY_NAME["arcsin"])
arccos_p, arccos = _make_unary(_BY_NAME["arccos"])
arctan_p, arctan = _make_unary(_BY_NAME["arctan"])
sqrt_p, sqrt = _make_unary(_BY_NAME["sqrt"])
rsqrt_p, rsqrt = _make_unary(_BY_NAME["rsqrt"])
expm1_p, expm1 = _make_unary(_BY_NAME["expm1"])
log1p_p, log1p = _make_unary(_BY_NAME["log1p"])
square_p, square = _make_unary(_BY_NAME["square"])
reciprocal_p, reciprocal = _make_unary(_BY_NAME["reciprocal"])


# ---------------------------------------------------------------------------
# logaddexp (real): log(exp(x) + exp(y)) without overflow
# ---------------------------------------------------------------------------
logaddexp_p = primitive("logaddexp", FAMILY)


def _logaddexp_impl(x, y):
    with np.errstate(all="ignore"):
        return wrap_fortran(np.logaddexp(x._data, y._data))


def _logaddexp_aval(a: TensorType, b: TensorType) -> TensorType:
    _refuse_complex("logaddexp", a, b)
    if a.shape != b.shape or a.dtype is not b.dtype:
        raise DTypeError(f"logaddexp: primitive operands must have equal shapes and dtypes, got {a} and {b}")
    return a


def _logaddexp_weight(x, y, out):
    """d out / d x = exp(x - out), with exp(0) = 1 where x == out is infinite (avoids
    inf - inf). Where x == y it is sigmoid(x - y) = 1 / (1 + exp(y - x)): exactly 1/2
    at any magnitude, and differentiable, so the Hessian at a tie is 1/4 (JAX's rule
    exp(x - out) has the same derivative). Where x == y == -inf or +inf, 1/2 (JAX: NaN)."""
    same = equal(x, out)
    w = exp(sub(where(same, 0, x), where(same, 0, out)))
    tie = equal(x, y)
    finite_tie = select_p.bind(tie, isfinite(x), tie)  # tie and isfinite(x)
    d = sub(where(finite_tie, y, 0), where(finite_tie, x, 0))  # 0 elsewhere: no inf - inf
    return select_p.bind(tie, reciprocal(add(exp(d), 1)), w)


def _logaddexp_jvp_x(tx, out, x, y):
    return mul(tx, _logaddexp_weight(x, y, out))


def _logaddexp_jvp_y(ty, out, x, y):
    return mul(ty, _logaddexp_weight(y, x, out))


logaddexp_p.def_impl(_logaddexp_impl)
logaddexp_p.def_abstract_eval(_logaddexp_aval)
logaddexp_p.def_jvp_per_arg(_logaddexp_jvp_x, _logaddexp_jvp_y)


def logaddexp(x: Any, y: Any) -> Any:
    """``log(exp(x) + exp(y))`` computed stably (real dtypes; integers promote to float64).

    The derivative is finite everywhere, including at ``-inf`` inputs (weights 1/2
    when ``x == y``)."""
    x, y = _prepare("logaddexp", x, y)
    x, y = _to_float("logaddexp", x), _to_float("logaddexp", y)
    check_shapes(logaddexp_p, x, y)  # refuses complex operands (eager bind skips the rule)
    return logaddexp_p.bind(x, y)


# ---------------------------------------------------------------------------
# power: differentiable in base and exponent
# ---------------------------------------------------------------------------
pow_p = primitive("pow", FAMILY)


@pow_p.def_impl
def _pow_impl(x, y):
    a, b = x._data, y._data
    if a.dtype.kind in "iu" and (b < 0).any():
        raise TenferroValueError(
            "power: integers to negative integer powers are not allowed (convert the base to a floating dtype first)"
        )
    e = _uniform_exponent(a, b)
    if e is not None:
        # x ** 1 and x ** 2 as NumPy's own scalar fast path computes them: exact copies and
        # squares, where the general pow costs ~50 ns an element (the gradient of x ** 2 takes
        # x ** 1, its exponent broadcast to the operand's shape)
        return wrap_fortran(a.copy(order="K") if e == 1 else np.multiply(a, a))
    with np.errstate(all="ignore"):
        return wrap_fortran(np.power(a, b))


def _uniform_exponent(a: Any, b: Any) -> float | None:
    """1 or 2 where the real host exponent ``b`` is that one value throughout and does not grow
    ``a``'s shape; else None."""
    if (
        type(a) is not np.ndarray
        or a.dtype != b.dtype
        or a.dtype.kind != "f"
        or b.size == 0
        or b.ndim > a.ndim
        or b.size > a.size
        or any(n not in (1, m) for n, m in zip(b.shape[::-1], a.shape[::-1]))
    ):
        return None
    e = b.flat[0]
    return float(e) if e in (1.0, 2.0) and (b.size == 1 or bool((b == e).all())) else None


_pow_shape = _binary_aval("pow")


@pow_p.def_abstract_eval
def _pow_aval(a: TensorType, b: TensorType) -> TensorType:
    if a.dtype.kind == "bool":  # np.power(bool, bool) is int8, which tenferro does not have
        raise DTypeError(f"pow: the primitive takes numeric operands, got {a} (tenferro.power promotes bool to int64)")
    return _pow_shape(a, b)


def _pow_jvp_x(tx, out, x, y):
    # y * x**(y-1); the exponent is replaced by 1 where y == 0 so that the
    # derivative there is 0 (not 0 * inf = NaN) at x == 0.
    return mul(tx, mul(y, power(x, where(equal(y, 0), 1, sub(y, 1)))))


def _pow_jvp_y(ty, out, x, y):
    # log(x) * x**y, with log(1) = 0 in place of log(0): the derivative is 0 at
    # x == 0 (JAX's convention; it is the limit for y > 0).
    return mul(ty, mul(log(where(equal(x, 0), 1, x)), out))


pow_p.def_jvp_per_arg(_pow_jvp_x, _pow_jvp_y)


def power(x: Any, y: Any) -> Any:
    """``x ** y`` elementwise (``numpy.power``), differentiable in both arguments.

    At ``x == 0`` the derivative in ``y`` is 0, and where ``y == 0`` the derivative
    in ``x`` is 0 (JAX's conventions: finite instead of NaN). ``bool ** bool`` is int64
    (JAX promotes bool to its default integer for power).
    """
    x, y = _prepare("power", x, y)
    if meta(x)[1].kind == "bool":
        # bool ** bool: the lattice's join is bool, which has no power (NumPy makes int8, which
        # tenferro lacks); bool becomes the default integer, as JAX's promote_dtypes_numeric
        # does for power, and as b ** 2 (bool with a weak int) already gives: int64
        x, y = convert_element_type(x, int64), convert_element_type(y, int64)
    return pow_p.bind(x, y)


pow = power  # noqa: A001


# ---------------------------------------------------------------------------
# arctan2 (real) and angle: the derivative is 0 at the origin
# ---------------------------------------------------------------------------
atan2_p = primitive("atan2", FAMILY)


def _atan2_impl(y, x):
    return wrap_fortran(np.arctan2(y._data, x._data))


_ATAN2_SMALL, _ATAN2_SCALE = 2.0**-900, 2.0**1000
# float32: x**2 + y**2 underflows from |(x, y)| ~ 1e-19 on; below 2**-60 the scale 2**86 brings the
# smallest subnormal (2**-149) to 2**-63, whose square is normal, and 2**-30 to 2**56, whose square
# stays below float32's largest (2**128)
_ATAN2_SMALL_32, _ATAN2_SCALE_32 = 2.0**-60, 2.0**86


def _atan2_weight(num, y, x):
    """``num / (x**2 + y**2)``, and 0 where ``x == y == 0`` (the inner ``where`` keeps the
    division finite there, so derivatives of every order are 0 at the origin, not NaN). Where
    ``x**2 + y**2`` is below ``2**-900`` (it underflows to 0 from ``|(x, y)|`` ~ 1.5e-162, and
    the gradient was 0 where it is 5e169) ``x`` and ``y`` are scaled by ``s = 2**1000`` first:
    ``((num s) / ((x s)**2 + (y s)**2)) s``, exact in binary; elsewhere ``s = 1``, the same bits."""
    origin = equal(where(equal(x, 0), y, 1), 0)  # x == 0 and y == 0
    small, scale = (_ATAN2_SMALL_32, _ATAN2_SCALE_32) if meta(x)[1].name == "float32" else (_ATAN2_SMALL, _ATAN2_SCALE)
    s = where(less(add(mul(x, x), mul(y, y)), small), scalar_like(scale, x), scalar_like(1, x))  # in x's dtype
    xs, ys = mul(x, s), mul(y, s)
    r2 = add(mul(xs, xs), mul(ys, ys))
    return where(origin, 0, mul(div(mul(num, s), where(origin, 1, r2)), s))


def _atan2_jvp_y(ty, out, y, x):
    return mul(ty, _atan2_weight(x, y, x))


def _atan2_jvp_x(tx, out, y, x):
    return mul(tx, _atan2_weight(neg(y), y, x))


atan2_p.def_impl(_atan2_impl)
atan2_p.def_abstract_eval(_binary_real_aval("arctan2"))
atan2_p.def_jvp_per_arg(_atan2_jvp_y, _atan2_jvp_x)


def arctan2(y: Any, x: Any) -> Any:
    """The angle of the point ``(x, y)``, ``numpy.arctan2(y, x)`` (real dtypes; integers
    promote to float64; complex raises DTypeError).

    The derivative is ``(x dy - y dx) / (x**2 + y**2)``, and 0 at ``x == y == 0`` (where
    JAX gives NaN): the subgradient 0, finite at every order."""
    y, x = _prepare("arctan2", y, x)
    y, x = _to_float("arctan2", y), _to_float("arctan2", x)
    check_shapes(atan2_p, y, x)  # refuses complex operands (eager bind skips the rule)
    return atan2_p.bind(y, x)


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of ``z``, ``arctan2(imag(z), real(z))`` (``numpy.angle``): a real tensor in
    ``(-pi, pi]``; real input gives 0 or pi (pi for negative entries and -0.0), integers float64.
    ``deg=True`` gives degrees.

    Derivative: ``angle`` is a real function of a complex input; tidu's (JAX's) cotangent
    convention gives ``grad(angle)(z) = d angle/dx - i d angle/dy = (-y - i x) / |z|**2``
    (``z = x + iy``). At ``z == 0`` the derivative is 0 (see :func:`arctan2`)."""
    (z,) = _prepare("angle", z)
    z = _to_float("angle", z)
    a = arctan2(imag(z), real(z))
    return mul(a, 180.0 / np.pi) if deg else a


# batching (tidu.vmap): the unary rules get theirs where they are made
register_elementwise_batch(logaddexp_p, pow_p, atan2_p)
