"""Reductions over any set of axes: sum, prod, max, min, mean, logsumexp.

Primitives take a sorted tuple of distinct ``axes`` and drop them; ``keepdims``
and NumPy-style axis arguments are handled in the user-level functions.

Derivative conventions:

* ``prod``: the JVP multiplies the tangent by the product of the *other*
  entries, computed by a pairwise product tree (as JAX does) -- no division,
  so it is exact with one or several zeros, and correct at every order.
* ``max``/``min``: the derivative is split evenly among tied maximal entries
  (as JAX).
* ``logsumexp``: the JVP weights are ``softmax(x)``; they are finite whenever the
  result is finite, and 0 when every reduced entry is ``-inf``.

Size-0 reductions: ``sum`` gives 0, ``prod`` 1, ``logsumexp`` ``-inf``, ``mean``
NaN (as NumPy, without the warning); ``max``/``min`` raise TenferroValueError.
"""

from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from ._dispatch import dispatchable
from ._dtypes import bool_, int32, int64
from ._errors import DTypeError, TenferroValueError
from ._aval import fortran, meta, TensorType, xp_of
from ._operands import as_operand
from ._registry import primitive
from ._batching import trailing_batch
from ._tensor import Tensor
from ._aval import placement_of_operand
from ._compare import eq_p, isfinite, where
from ._creation import ones
from ._elementwise import _to_float, div_p, mul, mul_p, multiply, sub
from ._shape import normalize_axes
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
from ._transcendental import exp

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
    # the shift, which gives weights exp(-inf) = 0.

    shift = where(isfinite(out), out, 0)
    w = exp(sub(x, _expand(shift, meta(x)[0], axes)))
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
