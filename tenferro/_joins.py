"""Joins and reversal: ``concatenate`` (the transpose of slicing into pieces), ``stack``
(``expand_dims`` + ``concatenate``) and ``rev`` (``flip``), all linear, each with its
transpose rule.
"""

from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from tidu import is_undefined

from ._aval import fortran, meta, xp_of
from ._batching import trailing_batch
from ._capture_blas import concatenate_arrays
from ._dtypes import result_type
from ._errors import ShapeError, fmt_shape
from ._operands import as_operand, check_placement
from ._registry import primitive
from ._shape import normalize_axes
from ._structural import FAMILY, _norm_axis, convert_element_type, expand_dims, slice_p
from ._tensor import Tensor

_pyslice = builtins.slice


# ---------------------------------------------------------------------------
# concatenate (linear in all operands) and stack
# ---------------------------------------------------------------------------
concatenate_p = primitive("concatenate", FAMILY)
concatenate_p.def_batch(trailing_batch(concatenate_p))  # the batch axis last


@concatenate_p.def_impl
def _concatenate_impl(*xs, dimension):
    arrays = [x._data for x in xs]
    return Tensor._wrap(fortran(concatenate_arrays(xp_of(arrays[0]), arrays, axis=dimension)))


@concatenate_p.def_abstract_eval
def _concatenate_aval(*avals, dimension):
    a0 = avals[0]
    for a in avals[1:]:
        if (
            a.dtype is not a0.dtype
            or len(a.shape) != len(a0.shape)
            or any(m != n for i, (m, n) in enumerate(zip(a.shape, a0.shape)) if i != dimension)
        ):
            raise ShapeError(
                f"concatenate: operands {a0} and {a} differ outside axis {dimension} "
                "(expected equal dtypes and equal extents on every other axis)"
            )
    shape = list(a0.shape)
    shape[dimension] = sum(a.shape[dimension] for a in avals)
    return a0.update(shape=tuple(shape))


@concatenate_p.def_linear
def _concatenate_transpose(ct, *xs, dimension):
    out, start = [], 0
    shape = meta(ct)[0]
    for x in xs:
        n = (x.aval.shape if is_undefined(x) else meta(x)[0])[dimension]
        if is_undefined(x):
            spec = tuple((start, 1, n) if d == dimension else (0, 1, s) for d, s in enumerate(shape))
            out.append(slice_p.bind(ct, slices=spec))
        else:
            out.append(None)
        start += n
    return out


def concatenate(xs: Sequence[Any], axis: int = 0) -> Any:
    """Join tensors along an existing axis, like ``numpy.concatenate`` (dtypes are promoted)."""
    xs = [as_operand("concatenate", x) for x in xs]
    if not xs:
        raise ShapeError("concatenate: expected at least one tensor, got none")
    check_placement("concatenate", *xs)
    metas = [meta(x) for x in xs]
    nd = len(metas[0][0])
    if nd == 0:
        raise ShapeError("concatenate: 0-d tensors cannot be concatenated (use stack)")
    for s, _ in metas:
        if len(s) != nd:
            raise ShapeError(
                "concatenate: all tensors must have the same rank, got shapes "
                + ", ".join(fmt_shape(m[0]) for m in metas)
            )
    axis = _norm_axis("concatenate", axis, nd)
    for s, _ in metas[1:]:
        if any(m != n for i, (m, n) in enumerate(zip(s, metas[0][0])) if i != axis):
            raise ShapeError(
                f"concatenate: shapes {', '.join(fmt_shape(m[0]) for m in metas)} differ "
                f"outside axis {axis}; expected equal extents on every other axis"
            )
    dt = result_type(*[d for _, d in metas])
    xs = [convert_element_type(x, dt) for x in xs]
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=axis)


def stack(xs: Sequence[Any], axis: int = 0) -> Any:
    """Join tensors of equal shape along a new axis, like ``numpy.stack``."""
    xs = [as_operand("stack", x) for x in xs]
    if not xs:
        raise ShapeError("stack: expected at least one tensor, got none")
    check_placement("stack", *xs)
    s0 = tuple(meta(xs[0])[0])
    for x in xs[1:]:
        if tuple(meta(x)[0]) != s0:
            raise ShapeError(
                "stack: all tensors must have the same shape, got " + ", ".join(fmt_shape(meta(x)[0]) for x in xs)
            )
    axis = _norm_axis("stack", axis, len(s0) + 1)
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis)


# ---------------------------------------------------------------------------
# rev (flip): linear and its own transpose
# ---------------------------------------------------------------------------
rev_p = primitive("rev", FAMILY)
rev_p.def_batch(trailing_batch(rev_p))  # the batch axis last


@rev_p.def_impl
def _rev_impl(x, dimensions):
    return Tensor._wrap(fortran(np.flip(x._data, dimensions)))


@rev_p.def_abstract_eval
def _rev_aval(a, dimensions):
    return a


@rev_p.def_linear
def _rev_transpose(ct, x, dimensions):
    return [rev_p.bind(ct, dimensions=dimensions)]


def flip(x: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes when None), like ``numpy.flip``."""
    x = as_operand("flip", x)
    axes = normalize_axes("flip", axis, len(meta(x)[0]))
    return rev_p.bind(x, dimensions=axes) if axes else x


reverse = flip
