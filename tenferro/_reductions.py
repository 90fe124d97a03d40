"""Reductions over any axes (``keepdims`` handled in the user-level functions)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._errors import AxisError
from ._prim import fortran, as_operand, meta, primitive
from ._tensor import Tensor

FAMILY = "reductions"


def _reduced_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(n for i, n in enumerate(shape) if i not in axes)


sum_p = primitive("sum", FAMILY)
sum_p.def_impl(lambda x, axes: Tensor._wrap(fortran(np.sum(x._data, axis=axes))))
sum_p.def_abstract_eval(lambda a, axes: a.update(shape=_reduced_shape(a.shape, axes)))


@sum_p.def_linear
def _sum_transpose(ct, x, axes):
    from ._structural import broadcast_in_dim_p  # noqa: PLC0415

    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim_p.bind(ct, shape=tuple(shape), broadcast_dimensions=kept)]


def normalize_axes(op: str, axis: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise AxisError(f"{op}: axis {a} is out of bounds for a tensor of rank {ndim}")
        a %= ndim
        if a in out:
            raise AxisError(f"{op}: repeated axis {a} in {axes}")
        out.append(a)
    return tuple(sorted(out))


def _keep(x: Any, shape: tuple, axes: tuple) -> Any:
    from ._structural import reshape  # noqa: PLC0415

    return reshape(x, tuple(1 if i in axes else n for i, n in enumerate(shape)))


def sum(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Sum over ``axis`` (all axes when None)."""
    x = as_operand("sum", x)
    shape = tuple(meta(x)[0])
    axes = normalize_axes("sum", axis, len(shape))
    r = sum_p.bind(x, axes=axes) if axes else x
    return _keep(r, shape, axes) if keepdims else r
