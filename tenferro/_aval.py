"""Abstract values of tensors and the helpers every primitive family uses on
operands: :class:`TensorType` (shape, dtype, placement; interned on the CPU),
:func:`meta` and :func:`aval_of_operand` (of a tensor or a tracer of one),
:func:`xp_of` (NumPy or CuPy for an array) and :func:`fortran` (canonical
column-major layout)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tidu import Tracer

from ._dtypes import DType, _from_numpy, _lookup_numpy
from ._errors import TenferroTypeError
from ._capture_blas import capturing
from ._placement import CPU, Placement, import_cupy, placement_of
from ._tensor import Tensor

__all__ = [
    "TensorType",
    "concrete",
    "tensor_type",
    "aval_of_tensor",
    "aval_of_operand",
    "meta",
    "placement_of_operand",
    "xp_of",
    "fortran",
    "wrap_fortran",
]


class TensorType:
    """Abstract value of a tensor: ``shape`` (tuple), ``dtype`` (DType), ``placement``."""

    __slots__ = ("shape", "dtype", "placement", "_hash")

    def __init__(self, shape: tuple, dtype: DType, placement: Placement = CPU):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.placement = placement
        self._hash = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def update(self, shape: tuple | None = None, dtype: DType | None = None) -> "TensorType":
        return tensor_type(
            self.shape if shape is None else tuple(shape), self.dtype if dtype is None else dtype, self.placement
        )

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is TensorType
            and self.shape == other.shape
            and self.dtype is other.dtype
            and self.placement == other.placement
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.shape, self.dtype, self.placement))
        return self._hash

    def __str__(self) -> str:
        short = {
            "float32": "f32",
            "float64": "f64",
            "complex64": "c64",
            "complex128": "c128",
            "int32": "i32",
            "int64": "i64",
            "bool": "bool",
        }[self.dtype.name]
        where = "" if self.placement == CPU else f"@{self.placement}"
        return f"{short}[{','.join(map(str, self.shape))}]{where}"

    __repr__ = __str__


# Canonical CPU avals: equal CPU avals made by ``tensor_type`` (so by ``update``,
# hence by the shape rules, and by ``aval_of_tensor``) are the same object, which
# lets hot paths compare avals by identity (``a is b``) before comparing fields.
_CPU_TYPES: dict[tuple, TensorType] = {}  # (shape, DType) -> aval
_CPU_AVALS: dict[tuple, TensorType] = {}  # (shape, numpy dtype) -> aval


def tensor_type(shape: tuple, dtype: DType, placement: Placement = CPU) -> TensorType:
    """``TensorType(shape, dtype, placement)``, canonical (interned) on the CPU."""
    if placement is not CPU:
        return TensorType(shape, dtype, placement)
    key = (shape, dtype)
    av = _CPU_TYPES.get(key)
    if av is None:
        av = TensorType(shape, dtype, CPU)
        if len(_CPU_TYPES) < 8192 and all(type(s) is int for s in av.shape):
            _CPU_TYPES[key] = av
    return av


def aval_of_tensor(t: Tensor) -> TensorType:
    a = t._data
    if type(a) is np.ndarray:
        key = (a.shape, a.dtype)
        av = _CPU_AVALS.get(key)
        if av is None:
            d = _from_numpy.get(a.dtype) or _lookup_numpy(a.dtype, "aval", "a tensor")
            av = tensor_type(a.shape, d, CPU)
            if len(_CPU_AVALS) < 8192:
                _CPU_AVALS[key] = av
        return av
    d = _from_numpy.get(a.dtype) or _lookup_numpy(a.dtype, "aval", "a tensor")
    return TensorType(a.shape, d, placement_of(a))


def aval_of_operand(x: Any) -> TensorType | None:
    """The aval of a Tensor or a tracer of one; ``None`` for anything else (hot path)."""
    if type(x) is Tensor:
        return aval_of_tensor(x)
    if isinstance(x, Tracer):
        return x.aval
    return None


def meta(x: Any) -> tuple[tuple, DType]:
    """(shape, dtype) of a Tensor or a tracer of one (hot path)."""
    if type(x) is Tensor:
        a = x._data
        d = _from_numpy.get(a.dtype)
        return a.shape, (d if d is not None else _lookup_numpy(a.dtype, "meta", "a tensor"))
    if isinstance(x, Tracer):
        av = x.aval
        return av.shape, av.dtype
    raise TenferroTypeError(f"expected a tenferro Tensor, got {type(x).__name__}")


def placement_of_operand(x: Any) -> Placement:
    if type(x) is Tensor:
        return CPU if type(x._data) is np.ndarray else placement_of(x._data)
    return x.aval.placement


def xp_of(array: Any) -> Any:
    """``numpy`` or ``cupy`` for an array."""
    if type(array) is np.ndarray:
        return np
    return import_cupy("xp_of")


def fortran(a: Any) -> Any:
    """``a`` in canonical column-major layout (copying only when needed).

    Unlike ``np.asfortranarray`` this keeps 0-d arrays 0-d; NumPy scalars (what
    full reductions return) become 0-d arrays.
    """
    if isinstance(a, np.generic):
        return np.asarray(a)
    if a.flags.f_contiguous:
        return a
    if type(a) is np.ndarray:
        return np.asfortranarray(a)
    cp = import_cupy("fortran")
    if capturing() is not None:
        # CuPy transposes 2-d arrays with cuBLAS (geam), which it refuses during a CUDA graph
        # capture (tenferro.jit): an elementwise copy into column-major storage instead
        out = cp.empty(a.shape, dtype=a.dtype, order="F")
        out[...] = a
        return out
    return cp.asfortranarray(a)


_new_object = object.__new__


def wrap_fortran(a: Any) -> Tensor:
    """``Tensor._wrap(fortran(a))`` in one call: the last step of every elementwise impl
    (a fresh column-major host array, the common case, is wrapped without another call)."""
    if type(a) is np.ndarray and a.flags.f_contiguous:
        t = _new_object(Tensor)
        t._data = a
        return t
    return Tensor._wrap(fortran(a))


def concrete(x: Any) -> Any:
    """The array (NumPy or CuPy) of a Tensor, or of a tracer whose trace knows its value (eager
    JVP and vmap tracers); None for an abstract one (a graph being staged) or anything else."""
    if type(x) is Tensor:
        return x._data
    if isinstance(x, Tracer):
        try:
            v = x.to_concrete()
        except Exception:  # noqa: BLE001  (an abstract tracer: no value)
            return None
        return v._data if type(v) is Tensor else None
    return None
