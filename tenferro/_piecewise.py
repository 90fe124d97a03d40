"""Piecewise elementwise functions and their conventions at the kinks.

* ``abs``: real output for complex input; the derivative at 0 is 0 (a
  subgradient; PyTorch's choice for real input, JAX's for complex input), never NaN.
* ``sign``: zero derivative for real input; complex ``sign`` is ``x / |x|``
  (NumPy 2), differentiable away from 0.
* ``maximum``/``minimum`` (real): where ``x == y`` the derivative is split
  evenly, ``(dx + dy) / 2`` (as JAX).
* ``clip`` (real): built from ``where``; a value exactly at a bound counts as
  inside (derivative 1 in ``x``). A NaN entry of a tensor bound gives NaN, as
  ``numpy.clip``; a NaN scalar bound is refused.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._dtypes import DType
from ._compare import _binary_real_aval, _refuse_complex, eq_p, equal, greater, gt_p, isnan, less, lt_p, select_p, where
from ._elementwise import FAMILY, _prepare, _real_aval, add, div_p, imag, mul, real, scalar_like
from ._errors import DTypeError, TenferroValueError
from ._aval import aval_of_operand, meta, TensorType, wrap_fortran
from ._registry import check_shapes, primitive
from ._batching import register_elementwise_batch, trailing_batch
from ._structural import convert_element_type


# ---------------------------------------------------------------------------
# abs and sign
# ---------------------------------------------------------------------------
abs_p = primitive("abs", FAMILY)


@abs_p.def_impl
def _abs_impl(x):
    return wrap_fortran(np.abs(x._data))


abs_p.def_abstract_eval(_real_aval)


def _abs_jvp(t, out, x):
    # real: sign(x) t, with sign(0) = 0 -- the subgradient 0 at x == 0 (PyTorch's
    # choice; JAX returns 1 there for real input and 0 for complex input).
    # complex: Re(conj(u) t) with u = x/|x|, formed from the real and imaginary parts
    # divided by the real |x| separately: a complex division by a subnormal |x|
    # overflows in NumPy. u = 0 at x == 0, so the derivative is 0 there too.
    if not meta(x)[1].is_complex:
        return mul(t, sign(x))
    r = where(equal(out, 0), 1, out)
    u_re, u_im = div_p.bind(real(x), r), div_p.bind(imag(x), r)
    return add(mul(u_re, real(t)), mul(u_im, imag(t)))


abs_p.def_jvp_per_arg(_abs_jvp)


def _complex_of(x: Any, dtype: DType) -> Any:
    return convert_element_type(x, dtype)


sign_p = primitive("sign", FAMILY)


@sign_p.def_impl
def _sign_impl(x):
    return wrap_fortran(np.sign(x._data))


@sign_p.def_abstract_eval
def _sign_aval(a: TensorType) -> TensorType:
    if a.dtype.is_complex:
        raise DTypeError(
            f"sign: the primitive takes real operands, got {a} (tenferro.sign computes complex signs as x / |x|)"
        )
    return a


sign_p.def_nondiff("sign is piecewise constant", zero_tangent=True)


def abs(x: Any) -> Any:  # noqa: A001
    """``|x|``; real output for complex input. The derivative at 0 is taken as 0
    (a subgradient, as PyTorch for real and JAX for complex input) instead of NaN."""
    (x,) = _prepare("abs", x)
    return abs_p.bind(x)


def sign(x: Any) -> Any:
    """Sign of ``x`` (-1, 0, 1; for complex ``x / |x|`` and 0 at 0, as NumPy 2).

    Real sign has zero derivative; complex sign is differentiable away from 0.
    """
    (x,) = _prepare("sign", x)
    d = meta(x)[1]
    if d.kind == "bool":
        raise DTypeError("sign: boolean tensors have no sign; convert to an integer or float dtype first")
    if not d.is_complex:
        return sign_p.bind(x)
    a = abs_p.bind(x)
    zero = equal(a, 0)
    # x / |x| from the real and imaginary parts divided by the real |x| separately (a complex
    # division by a subnormal |x| overflows in NumPy: sign(1e-310+1e-310j) was inf+infj), as the
    # derivative of abs forms it; 0 where x == 0, selected as a constant: the derivative there
    # is 0 (as JAX), not t / 1
    r = where(zero, 1, a)
    u_re, u_im = _complex_of(div_p.bind(real(x), r), d), _complex_of(div_p.bind(imag(x), r), d)
    return where(zero, 0, add(u_re, mul(u_im, scalar_like(1j, u_im))))


absolute = abs


# ---------------------------------------------------------------------------
# maximum, minimum: real only; ties split the derivative evenly
# ---------------------------------------------------------------------------
def _tie_weight(first: Any, x: Any, y: Any) -> Any:
    """1 where ``first`` holds, 1/2 where ``x == y``, else 0 (dtype of ``x``)."""
    one, half, zero = scalar_like(1, x), scalar_like(0.5, x), scalar_like(0, x)
    return select_p.bind(first, one, select_p.bind(eq_p.bind(x, y), half, zero))


def _make_extremum(name: str, fn: Callable[..., Any], first_p: Any):
    p = primitive(name, FAMILY)
    p.def_batch(trailing_batch(p))

    def impl(x, y):
        return wrap_fortran(fn(x._data, y._data))

    impl.__name__ = impl.__qualname__ = f"_{name}_impl"
    p.def_impl(impl)
    p.def_abstract_eval(_binary_real_aval(name))

    def jvp_x(tx, out, x, y):
        return mul(tx, _tie_weight(first_p.bind(x, y), x, y))

    def jvp_y(ty, out, x, y):
        return mul(ty, _tie_weight(first_p.bind(y, x), y, x))

    jvp_x.__name__, jvp_y.__name__ = f"_{name}_jvp_x", f"_{name}_jvp_y"
    p.def_jvp_per_arg(jvp_x, jvp_y)

    def extremum(x: Any, y: Any) -> Any:
        x, y = _prepare(name, x, y)
        check_shapes(p, x, y)  # refuses complex operands (eager bind skips the rule)
        return p.bind(x, y)

    extremum.__name__ = extremum.__qualname__ = name
    extremum.__doc__ = (
        f"Elementwise ``numpy.{name}`` (real dtypes). Where ``x == y`` the derivative "
        "is split evenly: d = (dx + dy) / 2."
    )
    return p, extremum


maximum_p, maximum = _make_extremum("maximum", np.maximum, gt_p)
minimum_p, minimum = _make_extremum("minimum", np.minimum, lt_p)


# ---------------------------------------------------------------------------
# clip: two selects
# ---------------------------------------------------------------------------
def clip(x: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """Clip ``x`` to ``[a_min, a_max]`` (either bound may be None), like ``numpy.clip``.

    Computed as ``min(max(x, a_min), a_max)`` in values. Derivative convention: the
    derivative with respect to ``x`` is 1 on the *closed* interval (a value exactly
    at a bound counts as inside) and 0 outside; a bound gets derivative 1 where ``x``
    is strictly beyond it. Real dtypes only. A NaN entry of a tensor bound gives NaN
    there (as ``numpy.clip``; its derivative goes to the bound); a NaN scalar bound is refused.
    """
    (x,) = _prepare("clip", x)
    _refuse_complex("clip", aval_of_operand(x))
    for name, bound in (("a_min", a_min), ("a_max", a_max)):
        if isinstance(bound, (int, float, np.integer, np.floating)) and not isinstance(bound, bool) and np.isnan(bound):
            raise TenferroValueError(f"clip: {name} is NaN; expected a number or None (no bound)")
    if a_min is not None:
        x = _nan_bound(a_min, where(less(x, a_min), a_min, x))
    if a_max is not None:
        x = _nan_bound(a_max, where(greater(x, a_max), a_max, x))
    return x


def _nan_bound(bound: Any, clipped: Any) -> Any:
    """``clipped`` with ``bound``'s NaN entries in place (``numpy.clip`` propagates them; a
    comparison with NaN is False); Python and NumPy scalar bounds are checked non-NaN."""
    if isinstance(bound, (int, float, np.integer, np.floating)):
        return clipped
    return where(isnan(bound), bound, clipped)


# batching (tidu.vmap): maximum/minimum get theirs where they are made
register_elementwise_batch(abs_p, sign_p)
