"""Arrays from user data: Python scalars and nested sequences (weakly typed),
NumPy and CuPy arrays, objects with ``__array__`` or ``__dlpack__``, converted to
a canonical (column-major) NumPy or CuPy array of a tenferro dtype. Below
:mod:`tenferro._tensor` (``Tensor(data)`` uses it) and :func:`tenferro.asarray`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dtypes import _DEFAULT_OF_KIND, DType, _kind_fits, _lookup_numpy, _weak_kind, can_convert
from ._errors import DTypeError, PlacementError, ShapeError, TenferroTypeError
from ._placement import Placement, import_cupy, is_cupy_array

__all__ = ["array_from", "upload"]


def _weak_value_kind(obj: Any) -> str | None:
    """Kind of a Python scalar or of a (nested) list/tuple of Python scalars, else None."""
    k = _weak_kind(obj)
    if k is not None or not isinstance(obj, (list, tuple)):
        return k
    order = {"bool": 0, "int": 1, "float": 2, "complex": 3}
    best: str | None = None
    stack = [obj]
    while stack:
        for item in stack.pop():
            if isinstance(item, (list, tuple)):
                stack.append(item)
                continue
            ik = _weak_kind(item)
            if ik is None:
                return None  # contains arrays, tensors or numpy scalars: strongly typed
            if best is None or order[ik] > order[best]:
                best = ik
    return best


def _host_array(op: str, obj: Any) -> Any:
    """Turn ``obj`` into a numpy (or cupy) array without choosing a dtype."""
    if isinstance(obj, np.ndarray) or is_cupy_array(obj):
        return obj
    if not hasattr(obj, "__array__") and hasattr(obj, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError, ValueError) as exc:
            raise PlacementError(
                f"{op}: cannot import an object of type {type(obj).__name__} through "
                f"DLPack onto the CPU ({exc}); move it to host memory first"
            ) from exc
    try:
        return np.asarray(obj)
    except (ValueError, TypeError, RuntimeError) as exc:
        _refused(op, obj, exc)
        raise ShapeError(
            f"{op}: cannot build a tensor from {type(obj).__name__} ({exc}); "
            "expected a scalar, a rectangular nested sequence or an array"
        ) from exc
    except OverflowError as exc:
        raise DTypeError(f"{op}: {exc}; expected values representable as int64") from exc


_DLPACK_CPU = 1  # DLPack's kDLCPU


def _refused(op: str, obj: Any, exc: Exception) -> None:
    """Raise the typed error for an array-like object whose own library refused to convert it
    to a NumPy array (a PyTorch tensor on a GPU, with ``requires_grad``, with the conjugate bit
    set, of an element type NumPy lacks such as bfloat16); return for anything else (a ragged
    sequence: the caller's ShapeError)."""
    name = type(obj).__name__
    device = getattr(obj, "__dlpack_device__", None)
    if callable(device):
        try:
            where = device()
        except (TypeError, ValueError, RuntimeError, BufferError):  # a failing query says nothing more
            where = None
        if where is not None and where[0] != _DLPACK_CPU:
            raise PlacementError(
                f"{op}: the {name} lives on a device (DLPack device {tuple(where)}), not in host memory "
                f"({exc}); use tenferro.from_dlpack(x) to keep it there, or move it to the host first"
            ) from exc
    dtype = getattr(obj, "dtype", None)
    if dtype is not None and not isinstance(dtype, np.dtype):
        # a name NumPy does not know, or knows only through a plug-in (bfloat16 once ml_dtypes,
        # which JAX imports, has registered it) and tenferro does not store
        try:
            _lookup_numpy(np.dtype(str(dtype).rsplit(".", 1)[-1]), op, name)
        except (TypeError, DTypeError):
            raise DTypeError(
                f"{op}: the element type {dtype} of the {name} is not one tenferro stores ({exc}); "
                "cast it in its own library first (e.g. to float32)"
            ) from exc
    if isinstance(exc, RuntimeError):
        raise TenferroTypeError(
            f"{op}: the {name} refused conversion to an array ({exc}); convert it in its own library "
            "first (PyTorch: .detach(), .resolve_conj())"
        ) from exc


def _fortran(array: Any) -> Any:
    if array.flags.f_contiguous:
        return array
    if isinstance(array, np.ndarray):
        return np.asfortranarray(array)
    return import_cupy("asarray").asfortranarray(array)


def array_from(op: str, obj: Any, target: DType | None) -> Any:
    """``obj`` (not a tensor) as a canonical array of dtype ``target`` (default:
    its own, or the default of its Python kind): a NumPy array, or a CuPy array
    for CuPy input. Lossy conversions raise :class:`DTypeError`."""
    weak = _weak_value_kind(obj)
    if weak is not None:
        if target is not None and not _kind_fits(weak, target):
            raise DTypeError(
                f"{op}: cannot store Python {weak} values as {target.name} without loss; "
                f"use tenferro.cast(x, {target.name}) for an explicit lossy conversion"
            )
        np_dtype = (target or _DEFAULT_OF_KIND[weak]).numpy
        try:
            arr = np.asarray(obj, dtype=np_dtype, order="F")
        except OverflowError as exc:
            raise DTypeError(
                f"{op}: a Python int in the input does not fit in {np.dtype(np_dtype)}; "
                "expected values within the dtype's range"
            ) from exc
        except (ValueError, TypeError) as exc:
            raise ShapeError(
                f"{op}: cannot build a tensor from a ragged or mixed nested sequence "
                f"({exc}); expected a rectangular nested sequence of scalars"
            ) from exc
        return _fortran(arr)
    arr = _host_array(op, obj)
    src = _lookup_numpy(arr.dtype, op, f"an input of type {type(obj).__name__}")
    if arr.dtype.byteorder not in ("=", "|"):
        arr = arr.astype(src.numpy)
    if target is not None and target is not src:
        if not can_convert(src, target):
            raise DTypeError(
                f"{op}: converting {src.name} to {target.name} may lose information; "
                f"use tenferro.cast(x, {target.name}) for an explicit lossy conversion"
            )
        arr = arr.astype(target.numpy, order="F")
    return _fortran(arr)


def upload(op: str, arr: Any, placement: Placement) -> Any:
    """A column-major copy of the array ``arr`` on GPU ``placement.device`` (an
    explicit host-to-device or device-to-device copy)."""
    cupy = import_cupy(op)
    with cupy.cuda.Device(placement.device):
        return cupy.array(arr, order="F", copy=True)
