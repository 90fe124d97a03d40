"""Structural primitives: shape and layout changes, dtype conversion, broadcasting.

All are linear; each defines only its transpose rule.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tidu import is_undefined

from ._dtypes import DType, dtype as _dtype
from ._errors import AxisError, ShapeError, fmt_shape
from ._prim import fortran, TensorType, as_operand, meta, primitive
from ._tensor import Tensor

FAMILY = "structural"


# ---------------------------------------------------------------------------
# convert_element_type (internal name of dtype projection, as in the seeds)
# ---------------------------------------------------------------------------
convert_element_type_p = primitive("convert_element_type", FAMILY)


@convert_element_type_p.def_impl
def _convert_impl(x, new_dtype):
    a = x._data
    if a.dtype.kind == "c" and new_dtype.kind != "complex":
        a = a.real
    return Tensor._wrap(a.astype(new_dtype.numpy, order="F"))


convert_element_type_p.def_abstract_eval(lambda a, new_dtype: a.update(dtype=new_dtype))


@convert_element_type_p.def_linear
def _convert_transpose(ct, x, new_dtype):
    return [convert_element_type(ct, x.aval.dtype)]


@convert_element_type_p.def_jvp
def _convert_jvp(primals, tangents, new_dtype):
    from tidu import Zero  # noqa: PLC0415

    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype)
    if type(t) is Zero or not new_dtype.is_floating:
        return out, Zero.like(out)
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype)


def convert_element_type(x: Any, new_dtype: DType) -> Any:
    """Dtype projection primitive (no checks: use ``convert``/``cast`` in user code)."""
    if meta(x)[1] is new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


# ---------------------------------------------------------------------------
# broadcast_in_dim
# ---------------------------------------------------------------------------
broadcast_in_dim_p = primitive("broadcast_in_dim", FAMILY)


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(x, shape, broadcast_dimensions):
    a = x._data
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = a.shape[i]
    return Tensor._wrap(np.broadcast_to(a.reshape(expanded, order="F"), shape))


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_aval(a, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != len(a.shape):
        raise ShapeError(f"broadcast_in_dim: operand rank {len(a.shape)} != len(broadcast_dimensions) "
                         f"{len(broadcast_dimensions)}")
    for i, d in enumerate(broadcast_dimensions):
        if not (a.shape[i] == 1 or a.shape[i] == shape[d]):
            raise ShapeError(f"broadcast_in_dim: operand dimension {i} of size {a.shape[i]} cannot be "
                             f"broadcast to size {shape[d]} of output shape {fmt_shape(shape)}")
    return a.update(shape=tuple(shape))


@broadcast_in_dim_p.def_linear
def _broadcast_in_dim_transpose(ct, x, shape, broadcast_dimensions):
    from ._reductions import sum_p  # noqa: PLC0415

    in_shape = x.aval.shape
    mapped = set(broadcast_dimensions)
    sum_axes = [d for d in range(len(shape)) if d not in mapped]
    sum_axes += [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    r = ct
    if sum_axes:
        r = sum_p.bind(r, axes=tuple(sorted(sum_axes)))
    if tuple(meta(r)[0]) != tuple(in_shape):
        r = reshape_p.bind(r, new_shape=tuple(in_shape))
    return [r]


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """Broadcast ``x`` to ``shape`` with NumPy's (right-aligned) rules."""
    x = as_operand("broadcast_to", x)
    xs = tuple(meta(x)[0])
    shape = tuple(int(s) for s in shape)
    if xs == shape:
        return x
    if len(xs) > len(shape):
        raise ShapeError(f"broadcast_to: cannot broadcast shape {fmt_shape(xs)} to the lower rank shape {fmt_shape(shape)}")
    lead = len(shape) - len(xs)
    for i, n in enumerate(xs):
        if n != 1 and n != shape[lead + i]:
            raise ShapeError(f"broadcast_to: cannot broadcast shape {fmt_shape(xs)} to {fmt_shape(shape)} "
                             f"(dimension {i} has size {n}, expected 1 or {shape[lead + i]})")
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=tuple(range(lead, len(shape))))


# ---------------------------------------------------------------------------
# reshape (column-major by default) and transpose
# ---------------------------------------------------------------------------
reshape_p = primitive("reshape", FAMILY)
reshape_p.def_impl(lambda x, new_shape: Tensor._wrap(np.reshape(x._data, new_shape, order="F")))


@reshape_p.def_abstract_eval
def _reshape_aval(a, new_shape):
    n = 1
    for s in new_shape:
        n *= s
    if n != a.size:
        raise ShapeError(f"reshape: cannot reshape {a} (size {a.size}) into shape {fmt_shape(new_shape)} (size {n})")
    return a.update(shape=tuple(new_shape))


@reshape_p.def_linear
def _reshape_transpose(ct, x, new_shape):
    return [reshape_p.bind(ct, new_shape=tuple(x.aval.shape))]


transpose_p = primitive("transpose", FAMILY)
transpose_p.def_impl(lambda x, permutation: Tensor._wrap(fortran(np.transpose(x._data, permutation))))
transpose_p.def_abstract_eval(lambda a, permutation: a.update(shape=tuple(a.shape[p] for p in permutation)))


@transpose_p.def_linear
def _transpose_transpose(ct, x, permutation):
    inv = tuple(int(i) for i in np.argsort(permutation))
    return [transpose_p.bind(ct, permutation=inv)]


def _norm_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise AxisError(f"{op}: axis {axis} is out of bounds for a tensor of rank {ndim}")
    return axis % ndim


def reshape(x: Any, shape: int | Sequence[int], order: str = "F") -> Any:
    """Reshape ``x`` to ``shape``. **Column-major (``order="F"``) by default**, unlike
    NumPy; pass ``order="C"`` for NumPy's row-major order. One extent may be -1."""
    x = as_operand("reshape", x)
    xs, _ = meta(x)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    size = 1
    for s in xs:
        size *= s
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: at most one extent may be -1, got {fmt_shape(shape)}")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot infer -1 in {fmt_shape(shape)} for a tensor of shape {fmt_shape(xs)}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if any(s < 0 for s in shape):
        raise ShapeError(f"reshape: extents must be >= 0, got {fmt_shape(shape)}")
    if order not in ("F", "C"):
        raise ShapeError(f"reshape: order must be 'F' (column-major, default) or 'C', got {order!r}")
    if tuple(xs) == shape:
        return x
    if order == "C":
        nd = len(xs)
        xt = transpose(x, tuple(range(nd - 1, -1, -1))) if nd > 1 else x
        r = reshape_p.bind(xt, new_shape=shape[::-1])
        return transpose(r, tuple(range(len(shape) - 1, -1, -1))) if len(shape) > 1 else r
    return reshape_p.bind(x, new_shape=shape)


def transpose(x: Any, axes: Sequence[int] | None = None) -> Any:
    """Permute dimensions (reverse them when ``axes`` is None), like ``numpy.transpose``."""
    x = as_operand("transpose", x)
    nd = len(meta(x)[0])
    if axes is None:
        axes = tuple(range(nd - 1, -1, -1))
    axes = tuple(_norm_axis("transpose", int(a), nd) for a in axes)
    if sorted(axes) != list(range(nd)):
        raise AxisError(f"transpose: axes {axes} are not a permutation of range({nd})")
    if axes == tuple(range(nd)):
        return x
    return transpose_p.bind(x, permutation=axes)


permute_dims = transpose
