"""Reductions over any set of axes: sum, prod, max, min, mean, logsumexp, var, std;
along one axis: argmax, argmin, cumsum.

Primitives take a sorted tuple of distinct ``axes`` and drop them; ``keepdims``
and NumPy-style axis arguments are handled in the user-level functions.

Derivative conventions:

* ``prod``: the JVP multiplies the tangent by the product of the *other*
  entries, computed by a pairwise product tree (as JAX does) -- no division,
  so it is exact with one or several zeros, and correct at every order.
* ``max``/``min``: the derivative is split evenly among tied maximal entries
  (as JAX).
* ``logsumexp``: the JVP weights are ``softmax(x)`` (normalized to sum 1, so the rounding of
  the result at large ``|x|`` does not scale them); they are finite whenever the
  result is finite, and 0 when every reduced entry is ``-inf``.

* ``argmax``/``argmin``: int64 output, zero derivative (as comparisons).
* ``cumsum``: linear; its transpose is the cumulative sum from the other end.
* ``var``/``std``: compositions (``mean``, ``sub``, ``real(d * conj(d))``); ``std`` is
  ``sqrt(var)``, so its derivative is infinite/NaN where ``var == 0`` (as JAX).

Size-0 reductions: ``sum`` gives 0, ``prod`` 1, ``logsumexp`` ``-inf``, ``mean``
NaN (as NumPy, without the warning); ``max``/``min``/``argmax``/``argmin`` raise
TenferroValueError, and so do ``var``/``std`` (``ddof >= count``).

``axis=None`` for the one-axis functions (``argmax``, ``argmin``, ``cumsum``) flattens in
tenferro's **column-major** order (NumPy flattens row-major), as ``take`` does, so
``take(x, argmax(x)) == max(x)``.
"""

from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ._dispatch import dispatchable
from ._dtypes import bool_, int32, int64
from ._dtypes import dtype as _as_dtype
from ._errors import AxisError, DTypeError, TenferroTypeError, TenferroValueError
from ._aval import fortran, meta, TensorType, xp_of
from ._operands import as_operand
from ._registry import primitive
from ._batching import trailing_batch
from ._tensor import Tensor
from ._aval import placement_of_operand
from ._compare import eq_p, equal, isfinite, where
from ._creation import ones
from ._elementwise import _to_float, conj, div_p, mul, mul_p, multiply, real, scalar_like, sub
from ._shape import as_index, normalize_axes
from ._structural import (
    _expand,
    _reduced_shape,
    _reduction_aval,
    convert_element_type,
    reshape,
    reshape_p,
    sum_p,
    transpose,
)
from ._transcendental import exp, sqrt

FAMILY = "reductions"


# ---------------------------------------------------------------------------
# prod: JVP through a pairwise product tree
# ---------------------------------------------------------------------------
prod_p = primitive("prod", FAMILY)
prod_p.def_batch(trailing_batch(prod_p))


@prod_p.def_impl
def _prod_impl(x, axes):
    return Tensor._wrap(fortran(np.prod(x._data, axis=axes, dtype=x._data.dtype)))


prod_p.def_abstract_eval(_reduction_aval)


def _prod_jvp(t, out, x, axes):
    """d prod(x) = sum_i t_i prod_{j != i} x_j, evaluated as the tangent of a tree of
    pairwise products: at each level rows ``2k`` and ``2k+1`` are multiplied
    (an odd last row is paired with 1) and the tangent follows the product rule.
    Uses only ``mul``, ``add`` and the linear stride-2 helpers below."""
    xs, ts, kept_shape = _rows(x, axes), _rows(t, axes), _reduced_shape(meta(x)[0], axes)
    n = meta(xs)[0][0]
    if n == 0:
        return sum_p.bind(t, axes=axes)  # zeros of the output shape
    while n > 1:
        a, b = stride2_slice_p.bind(xs, parity=0), stride2_slice_p.bind(xs, parity=1)
        ta, tb = stride2_slice_p.bind(ts, parity=0), stride2_slice_p.bind(ts, parity=1)
        if n % 2:  # the unmatched last factor is multiplied by 1: b += e_last
            rows = ones((n,) + kept_shape, meta(x)[1], placement=_placement(x))
            b = b + (1 - stride2_slice_p.bind(rows, parity=1))
        xs, ts = a * b, ta * b + a * tb
        n = (n + 1) // 2

    return reshape_p.bind(ts, new_shape=kept_shape)


prod_p.def_jvp_per_arg(_prod_jvp)


def _placement(x: Any) -> Any:
    return placement_of_operand(x)


def _rows(x: Any, axes: tuple) -> Any:
    """``x`` with the reduced axes moved to the front and flattened: shape (n, *kept)."""
    shape = tuple(meta(x)[0])
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    x = transpose(x, tuple(axes) + kept)
    n = 1
    for a in axes:
        n *= shape[a]
    return reshape(x, (n,) + tuple(shape[i] for i in kept))


# stride2_slice(x, parity) = x[parity::2] along axis 0, zero-padded to ceil(n/2)
# rows; stride2_scatter is its transpose. Both linear; private to prod's JVP.
stride2_slice_p = primitive("stride2_slice", FAMILY)
stride2_slice_p.def_batch(trailing_batch(stride2_slice_p))  # acts on axis 0 only


@stride2_slice_p.def_impl
def _stride2_slice_impl(x, parity):
    a = x._data
    n = a.shape[0]
    r = a[parity::2]
    if r.shape[0] < (n + 1) // 2:
        xp = xp_of(a)
        r = xp.concatenate([r, xp.zeros((1,) + a.shape[1:], a.dtype)], axis=0)
    return Tensor._wrap(fortran(r))


stride2_slice_p.def_abstract_eval(lambda a, parity: a.update(shape=((a.shape[0] + 1) // 2,) + tuple(a.shape[1:])))


@stride2_slice_p.def_linear
def _stride2_slice_transpose(ct, x, parity):
    return [stride2_scatter_p.bind(ct, parity=parity, n=x.aval.shape[0])]


stride2_scatter_p = primitive("stride2_scatter", FAMILY)
stride2_scatter_p.def_batch(trailing_batch(stride2_scatter_p))  # acts on axis 0 only


@stride2_scatter_p.def_impl
def _stride2_scatter_impl(x, parity, n):
    a = x._data
    out = xp_of(a).zeros((n,) + a.shape[1:], a.dtype, order="F")
    m = len(range(parity, n, 2))
    out[parity::2] = a[:m]
    return Tensor._wrap(out)


stride2_scatter_p.def_abstract_eval(lambda a, parity, n: a.update(shape=(n,) + tuple(a.shape[1:])))


@stride2_scatter_p.def_linear
def _stride2_scatter_transpose(ct, x, parity, n):
    return [stride2_slice_p.bind(ct, parity=parity)]


# ---------------------------------------------------------------------------
# max, min: ties share the derivative evenly
# ---------------------------------------------------------------------------
def _make_extremum(name: str, fn: Any):
    p = primitive(name, FAMILY)
    p.def_batch(trailing_batch(p))

    def impl(x, axes):
        return Tensor._wrap(fortran(fn(x._data, axis=axes)))

    impl.__name__ = impl.__qualname__ = f"_{name}_impl"
    p.def_impl(impl)

    def aval(a: TensorType, axes: tuple) -> TensorType:
        if a.dtype.is_complex:
            raise DTypeError(f"{name}: complex operands are not supported (got {a}); complex numbers have no ordering")
        return _reduction_aval(a, axes)

    def jvp(t, out, x, axes):
        # t_out = sum(t * mask) / count(mask), mask = (x == out): ties share evenly

        mask = convert_element_type(eq_p.bind(x, _expand(out, meta(x)[0], axes)), meta(x)[1])
        return div_p.bind(sum_p.bind(mul_p.bind(t, mask), axes=axes), sum_p.bind(mask, axes=axes))

    jvp.__name__ = f"_{name}_jvp"
    p.def_abstract_eval(aval)
    p.def_jvp_per_arg(jvp)
    return p


max_p = _make_extremum("max", np.max)
min_p = _make_extremum("min", np.min)


# ---------------------------------------------------------------------------
# argmax, argmin: int64 output along one axis, zero derivative
# ---------------------------------------------------------------------------
def _make_arg_extremum(name: str):
    p = primitive(name, FAMILY)
    p.def_batch(trailing_batch(p))  # ``axis`` names a per-example axis: the batch axis is last

    def impl(x, axis):
        a = x._data
        return Tensor._wrap(fortran(getattr(xp_of(a), name)(a, axis=axis).astype(int64.numpy, copy=False)))

    def aval(a: TensorType, axis: int) -> TensorType:
        if a.dtype.is_complex:
            raise DTypeError(f"{name}: complex operands are not supported (got {a}); complex numbers have no ordering")
        return _reduction_aval(a, (axis,)).update(dtype=int64)

    impl.__name__ = impl.__qualname__ = f"_{name}_impl"
    aval.__name__ = aval.__qualname__ = f"_{name}_aval"
    p.def_impl(impl)
    p.def_abstract_eval(aval)
    p.def_nondiff(f"{name} has an integer output", zero_tangent=True)
    return p


argmax_p = _make_arg_extremum("argmax")
argmin_p = _make_arg_extremum("argmin")


# ---------------------------------------------------------------------------
# cumsum: linear along one axis; ``reverse`` sums from the last entry (its transpose)
# ---------------------------------------------------------------------------
cumsum_p = primitive("cumsum", FAMILY)
cumsum_p.def_batch(trailing_batch(cumsum_p))  # ``axis`` names a per-example axis


@cumsum_p.def_impl
def _cumsum_impl(x, axis, reverse):
    a = x._data
    xp = xp_of(a)
    if reverse:
        r = xp.flip(xp.cumsum(xp.flip(a, axis), axis=axis, dtype=a.dtype), axis)
    else:
        r = xp.cumsum(a, axis=axis, dtype=a.dtype)
    return Tensor._wrap(fortran(r))


@cumsum_p.def_abstract_eval
def _cumsum_aval(a: TensorType, axis: int, reverse: bool) -> TensorType:
    return a


@cumsum_p.def_linear
def _cumsum_transpose(ct, x, axis, reverse):
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


# ---------------------------------------------------------------------------
# logsumexp (real): stable evaluation, softmax-weighted JVP
# ---------------------------------------------------------------------------
logsumexp_p = primitive("logsumexp", FAMILY)
logsumexp_p.def_batch(trailing_batch(logsumexp_p))


@logsumexp_p.def_impl
def _logsumexp_impl(x, axes):
    a = x._data
    xp = xp_of(a)
    with np.errstate(all="ignore"):
        if a.size == 0:
            m = xp.zeros(_reduced_shape(a.shape, axes), a.dtype)
            return Tensor._wrap(fortran(xp.log(xp.zeros_like(m)) + m))
        m = xp.max(a, axis=axes, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        s = xp.sum(xp.exp(a - m), axis=axes, keepdims=True)
        r = xp.log(s) + m
        return Tensor._wrap(fortran(xp.squeeze(r, axis=axes).astype(a.dtype, copy=False)))


@logsumexp_p.def_abstract_eval
def _logsumexp_aval(a: TensorType, axes: tuple) -> TensorType:
    if not a.dtype.is_floating or a.dtype.is_complex:
        raise DTypeError(f"logsumexp: the primitive takes real floating operands, got {a}")
    return _reduction_aval(a, axes)


def _logsumexp_jvp(t, out, x, axes):
    # weights softmax(x) = exp(x - out); out = -inf (all entries -inf) uses 0 as
    # the shift, which gives weights exp(-inf) = 0. out = +inf (an entry +inf): the
    # limit of softmax, 1/n on the n entries that are +inf and 0 elsewhere (as logaddexp;
    # exp(x - 0) gave inf on them and exp(x) on the finite ones, and t * inf NaN)
    shape = meta(x)[0]
    shift = where(isfinite(out), out, 0)
    w = exp(sub(x, _expand(shift, shape, axes)))
    # normalized: out is rounded (at |x| = 1e16 it has lost log(sum) entirely), which scales every
    # weight by one factor e^(rounding) (1.0026 at |x| = 1e5 in float32, 0.41 at 1e16 in float64);
    # the sum divides it out. A sum of 0 (every entry -inf) keeps the weights 0, an infinite one
    # (an entry +inf) is replaced below
    total = sum_p.bind(w, axes=axes)
    one = scalar_like(1, total)
    total = where(equal(total, 0), one, where(isfinite(total), total, one))
    w = div_p.bind(w, _expand(total, shape, axes))
    # read only where out == +inf: the entries that are +inf (in x's dtype: two Python floats made float64)
    top = where(equal(x, np.inf), scalar_like(1, x), scalar_like(0, x))
    count = sum_p.bind(top, axes=axes)
    positive = _expand(equal(out, np.inf), shape, axes)
    w = where(positive, div_p.bind(top, _expand(where(equal(count, 0), 1.0, count), shape, axes)), w)
    return sum_p.bind(mul(t, w), axes=axes)


logsumexp_p.def_jvp_per_arg(_logsumexp_jvp)


# ---------------------------------------------------------------------------
# user-level functions
# ---------------------------------------------------------------------------
def _keep(x: Any, shape: tuple, axes: tuple) -> Any:
    return reshape(x, tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _reduce(op: str, p: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    shape = tuple(meta(x)[0])
    axes = normalize_axes(op, axis, len(shape))
    r = p.bind(x, axes=axes) if axes else x
    return _keep(r, shape, axes) if keepdims else r


def _accumulating(op: str, x: Any) -> Any:
    """NumPy's accumulator dtypes: bool and int32 sums/products are int64."""
    x = as_operand(op, x)
    d = meta(x)[1]
    return convert_element_type(x, int64) if d is bool_ or d is int32 else x


@dispatchable
def sum(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Sum over ``axis`` (all axes when None); bool and int32 accumulate in int64."""
    return _reduce("sum", sum_p, _accumulating("sum", x), axis, keepdims)


def prod(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
    """Product over ``axis`` (1 for size-0 axes). Exact gradients with zero entries."""
    return _reduce("prod", prod_p, _accumulating("prod", x), axis, keepdims)


def _extremum(op: str, p: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    x = as_operand(op, x)
    shape, d = meta(x)
    if d.is_complex:
        raise DTypeError(
            f"{op}: complex operands are not supported (got {d.name}); "
            "complex numbers have no ordering: reduce real() or abs() instead"
        )
    axes = normalize_axes(op, axis, len(shape))
    if builtins.any(shape[a] == 0 for a in axes):
        long = "maximum" if op in ("max", "amax") else "minimum"
        raise TenferroValueError(
            f"{op}: zero-size tensor of shape {tuple(shape)} to reduction operation "
            f"{long} over axes {axes}, which has no identity"
        )
    return _reduce(op, p, x, axes, keepdims)


def max(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Maximum over ``axis`` (real dtypes). Tied maxima share the derivative evenly."""
    return _extremum("max", max_p, x, axis, keepdims)


def min(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Minimum over ``axis`` (real dtypes). Tied minima share the derivative evenly."""
    return _extremum("min", min_p, x, axis, keepdims)


amax = max
amin = min


def mean(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
    """Arithmetic mean over ``axis``; integers and bool give float64, size-0 axes NaN."""
    x = _to_float("mean", as_operand("mean", x))
    shape = tuple(meta(x)[0])
    axes = normalize_axes("mean", axis, len(shape))
    n = 1
    for a in axes:
        n *= shape[a]
    return multiply(sum(x, axes, keepdims), 1.0 / n if n else float("nan"))


def logsumexp(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x), axis))`` computed stably (real dtypes; integers promote to float64).

    ``-inf`` entries are fine (they contribute 0); a size-0 or all ``-inf`` reduction
    gives ``-inf`` with zero gradient. Complex input raises DTypeError.
    """
    x = as_operand("logsumexp", x)
    if meta(x)[1].is_complex:
        raise DTypeError(
            f"logsumexp: complex operands are not supported (got {meta(x)[1].name}); expected a real dtype"
        )
    return _reduce("logsumexp", logsumexp_p, _to_float("logsumexp", x), axis, keepdims)


def _one_axis(op: str, x: Any, axis: Any) -> tuple[Any, int]:
    """``(x, axis)`` for a function along one axis: ``axis=None`` flattens ``x`` (column-major)."""
    if axis is None:
        return reshape(x, (-1,)), 0
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, (bool, np.bool_)):
        raise AxisError(f"{op}: axis must be an integer or None, got {axis!r}")
    return x, normalize_axes(op, axis, len(meta(x)[0]))[0]


def _arg_extremum(op: str, p: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    x = as_operand(op, x)
    shape, d = meta(x)
    shape = tuple(shape)
    if d.is_complex:
        raise DTypeError(
            f"{op}: complex operands are not supported (got {d.name}); "
            "complex numbers have no ordering: reduce real() or abs() instead"
        )
    flat, a = _one_axis(op, x, axis)
    n = meta(flat)[0][a]
    if n == 0:
        long = "maximum" if op == "argmax" else "minimum"
        raise TenferroValueError(
            f"{op}: zero-size tensor of shape {shape} to reduction operation {long} over axis "
            f"{'None' if axis is None else a}, which has no identity (an empty sequence has no {op})"
        )
    r = p.bind(flat, axis=a)
    if not keepdims:
        return r
    return reshape(r, (1,) * len(shape)) if axis is None else _keep(r, shape, (a,))


def argmax(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the maximum along ``axis`` (int64; the first one at ties, a NaN counts as the
    maximum, as NumPy). ``axis=None``: an index into ``x`` flattened **column-major**.
    Zero derivative; a size-0 axis raises TenferroValueError, complex DTypeError."""
    return _arg_extremum("argmax", argmax_p, x, axis, keepdims)


def argmin(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the minimum along ``axis`` (int64; the first one at ties, a NaN counts as the
    minimum, as NumPy). ``axis=None``: an index into ``x`` flattened **column-major**.
    Zero derivative; a size-0 axis raises TenferroValueError, complex DTypeError."""
    return _arg_extremum("argmin", argmin_p, x, axis, keepdims)


def cumsum(x: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """Cumulative sum along ``axis`` (``axis=None``: of ``x`` flattened **column-major**).

    bool and int32 accumulate in int64 (as NumPy); ``dtype`` converts ``x`` first. Linear:
    the gradient is the cumulative sum from the other end."""
    if dtype is None:
        x = _accumulating("cumsum", x)
    else:
        x = convert_element_type(as_operand("cumsum", x), _as_dtype(dtype))
    x, a = _one_axis("cumsum", x, axis)
    return cumsum_p.bind(x, axis=a, reverse=False)


def _moments(op: str, x: Any, axis: Any, ddof: Any) -> tuple[Any, tuple, tuple, int]:
    """``(squared deviations |x - mean|**2, shape, axes, count - ddof)`` after checking ``ddof``."""
    x = _to_float(op, as_operand(op, x))
    shape = tuple(meta(x)[0])
    axes = normalize_axes(op, axis, len(shape))
    ddof = as_index(op, ddof, "ddof", TenferroTypeError)
    n = 1
    for a in axes:
        n *= shape[a]
    if ddof < 0:
        raise TenferroValueError(f"{op}: ddof must be >= 0, got {ddof}")
    if ddof >= n:
        raise TenferroValueError(
            f"{op}: ddof={ddof} must be less than the number of entries reduced ({n}, over axes {axes} of "
            f"shape {shape}); the result would divide by {n - ddof}"
        )
    d = sub(x, mean(x, axes, keepdims=True))
    sq = real(mul(d, conj(d))) if meta(x)[1].is_complex else mul(d, d)
    return sq, shape, axes, n - ddof


def var(x: Any, axis: int | Sequence[int] | None = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """Variance over ``axis``: ``sum(|x - mean(x)|**2) / (count - ddof)`` (NumPy's ``var``; real
    for complex input, float64 for integers). ``ddof`` must be an integer with
    ``0 <= ddof < count`` (TenferroTypeError, TenferroValueError otherwise: a size-0 axis too)."""
    sq, _, axes, m = _moments("var", x, axis, ddof)
    return multiply(sum(sq, axes, keepdims), 1.0 / m)


def std(x: Any, axis: int | Sequence[int] | None = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """Standard deviation, ``sqrt(var(x, axis, ddof, keepdims))``. Its derivative is infinite or
    NaN where the variance is 0 (every entry equal), as JAX's: ``sqrt`` has no derivative at 0."""
    return sqrt(var(x, axis, ddof, keepdims))
