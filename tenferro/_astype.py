"""``convert_element_type``: the dtype-projection primitive (the seeds' internal
``Convert``), below everything that converts dtypes (creation's checked
``convert`` and lossy ``cast``, promotion in every op family). Linear: its
transpose converts the cotangent back; integer and boolean results carry no
tangent."""

from __future__ import annotations

from typing import Any

import numpy as np

from tidu import Zero

from ._aval import meta
from ._batching import trailing_batch
from ._dtypes import DType
from ._registry import primitive
from ._tensor import Tensor

__all__ = ["convert_element_type_p", "convert_element_type"]

FAMILY = "structural"


# ---------------------------------------------------------------------------
# convert_element_type (internal name of dtype projection, as in the seeds)
# ---------------------------------------------------------------------------
convert_element_type_p = primitive("convert_element_type", FAMILY)


@convert_element_type_p.def_impl
def _convert_impl(x, new_dtype):
    """Dtype projection with ``cast``'s semantics: complex -> real keeps the real part,
    float -> int truncates, anything -> bool is truthiness (a complex is true when
    nonzero)."""
    a = x._data
    if a.dtype.kind == "c" and new_dtype.kind not in ("complex", "bool"):
        a = a.real
    with np.errstate(invalid="ignore", over="ignore"):
        return Tensor._wrap(a.astype(new_dtype.numpy, order="F"))


convert_element_type_p.def_abstract_eval(lambda a, new_dtype: a.update(dtype=new_dtype))
convert_element_type_p.def_batch(trailing_batch(convert_element_type_p))


@convert_element_type_p.def_linear
def _convert_transpose(ct, x, new_dtype):
    return [convert_element_type(ct, x.aval.dtype)]


@convert_element_type_p.def_jvp
def _convert_jvp(primals, tangents, new_dtype):
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
