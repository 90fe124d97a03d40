"""``pad``: constant padding (NumPy's ``pad(mode="constant")``), linear in the operand and
the padding value jointly, with its batching rule."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tidu import is_undefined

from ._aval import meta, placement_of_operand, xp_of
from ._creation import ones, zeros
from ._compare import select_p
from ._dtypes import _kind_fits, _weak_kind, bool_
from ._elementwise import sub_p
from ._errors import DTypeError, ShapeError, TenferroValueError, fmt_shape
from ._operands import as_operand
from ._registry import primitive
from ._batching import batch_last
from ._structural import broadcast_in_dim_p, convert_element_type, slice_p, sum_p
from ._tensor import Tensor

FAMILY = "indexing"
_pyslice = builtins.slice

__all__ = ["pad", "pad_p"]


# ---------------------------------------------------------------------------
# pad: constant padding, linear in (x, padding value) jointly
# ---------------------------------------------------------------------------
pad_p = primitive("pad", "structural")


@pad_p.def_batch
def _pad_batch(axis_size, args, dims, widths):
    (x, value), (d, dv) = args, dims
    x = batch_last(x, d, axis_size)
    widths = tuple(widths) + ((0, 0),)
    if dv is None:
        return pad_p.bind(x, value, widths=widths), len(widths) - 1
    # one fill value per example: pad with 0, then select the value where the mask (True on the
    # padding, False inside) holds; a selection, so inf/nan values leave the interior alone
    dtype, placement = meta(x)[1], placement_of_operand(x)
    out = pad_p.bind(x, zeros((), dtype, placement=placement), widths=widths)
    shape = tuple(meta(out)[0])
    mask = pad_p.bind(
        zeros(tuple(meta(x)[0]), bool_, placement=placement), ones((), bool_, placement=placement), widths=widths
    )
    values = broadcast_in_dim_p.bind(
        batch_last(value, dv, axis_size), shape=shape, broadcast_dimensions=(len(shape) - 1,)
    )
    return select_p.bind(mask, values, out), len(shape) - 1


@pad_p.def_impl
def _pad_impl(x, value, widths):
    a = x._data
    shape = tuple(lo + n + hi for n, (lo, hi) in zip(a.shape, widths))
    out = xp_of(a).empty(shape, dtype=a.dtype, order="F")
    out[...] = value._data
    out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(a.shape, widths))] = a
    return Tensor._wrap(out)


@pad_p.def_abstract_eval
def _pad_aval(a, v, widths):
    if v.shape != () or v.dtype is not a.dtype:
        raise ShapeError(f"pad: the padding value must be a 0-d tensor of dtype {a.dtype.name}, got {v}")
    return a.update(shape=tuple(lo + n + hi for n, (lo, hi) in zip(a.shape, widths)))


@pad_p.def_linear
def _pad_transpose(ct, x, value, widths):
    shape = x.aval.shape if is_undefined(x) else meta(x)[0]
    inner = slice_p.bind(ct, slices=tuple((lo, 1, n) for n, (lo, _) in zip(shape, widths)))
    ct_v = None
    if is_undefined(value):
        nd = len(shape)
        total = sum_p.bind(ct, axes=tuple(range(nd))) if nd else ct
        ct_v = sub_p.bind(total, sum_p.bind(inner, axes=tuple(range(nd))) if nd else inner)
    return [inner if is_undefined(x) else None, ct_v]


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """Constant padding, like ``numpy.pad(x, pad_width, constant_values=...)``.

    ``pad_width`` is an int, a ``(before, after)`` pair or one pair per axis (all >= 0).
    ``constant_values`` is a scalar or a 0-d tensor (it may be traced: the result is
    linear in ``x`` and ``constant_values`` jointly); only ``mode="constant"`` exists.
    """
    if mode != "constant":
        raise TenferroValueError(f"pad: only mode='constant' is supported, got mode={mode!r}")
    x = as_operand("pad", x)
    xs, dt = meta(x)
    nd = len(xs)
    pw = np.asarray(pad_width)
    try:
        if pw.dtype.kind not in "iu":
            raise TypeError
        pw = np.broadcast_to(pw, (nd, 2))
    except (ValueError, TypeError):
        raise ShapeError(
            f"pad: pad_width {pad_width!r} does not fit a tensor of shape {fmt_shape(xs)}; expected "
            "an int, a (before, after) pair or one pair per axis"
        ) from None
    widths = tuple((int(lo), int(hi)) for lo, hi in pw)
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ShapeError(f"pad: pad widths must be >= 0, got {widths}")
    try:
        v = as_operand("pad", constant_values, dt, placement_of_operand(x))
    except (TypeError, ValueError):
        raise DTypeError(
            f"pad: constant_values {constant_values!r} cannot be represented in the tensor's dtype {dt.name}"
        ) from None
    vs, vd = meta(v)
    if tuple(vs) != ():
        raise ShapeError(f"pad: constant_values must be a scalar or a 0-d tensor, got shape {fmt_shape(vs)}")
    kind = _weak_kind(constant_values) or vd.kind  # a Python number's kind, else the value's dtype's
    if not _kind_fits(kind, dt):  # as full_like and the scatters: never a lossy cast
        raise DTypeError(
            f"pad: constant_values {constant_values!r} ({kind}) cannot be stored in the tensor's dtype "
            f"{dt.name} without loss; convert the tensor first, or cast the value explicitly"
        )
    v = convert_element_type(v, dt)
    return pad_p.bind(x, v, widths=widths)
