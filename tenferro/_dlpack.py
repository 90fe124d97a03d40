"""Import tensors from other frameworks through DLPack: :func:`from_dlpack`.

Export needs nothing here: :class:`~tenferro.Tensor` implements ``__dlpack__`` and
``__dlpack_device__``, so ``torch.from_dlpack(t)``, ``jax.numpy.from_dlpack(t)``,
``numpy.from_dlpack(t)`` and ``cupy.from_dlpack(t)`` take a tenferro tensor
without copying (the consumer sees tenferro's column-major strides; JAX on the CPU
shares the buffer only when it is 64-byte aligned, and copies otherwise).

Import follows :func:`tenferro.asarray`: tenferro's canonical layout is
column-major (F-contiguous), so

* an F-contiguous foreign array is wrapped without a copy (a 1-d contiguous array
  is both C- and F-contiguous, so every contiguous vector is shared);
* a row-major (C-ordered) or otherwise strided foreign array is copied into
  column-major order by default (``copy=None``), exactly as ``asarray`` copies a
  C-ordered NumPy array;
* ``copy=False`` never copies: a foreign layout that is not column-major is kept
  as a *view* with the foreign strides (a non-canonical tensor, like the result of
  :func:`tenferro.transpose_view`); tenferro operations read such views and
  return canonical results. For a C-ordered ``(m, n)`` array ``x`` the canonical
  zero-copy alternative is ``transpose_view(from_dlpack(x.T))``: ``x.T`` is
  F-contiguous;
* ``copy=True`` always copies.

Host memory (DLPack device CPU or CUDA-pinned host) is imported with
``numpy.from_dlpack``; CUDA device memory with ``cupy.from_dlpack`` (needs the
``gpu`` extra). Foreign tensors share memory with the producer: mutating either
side afterwards is undefined behaviour, as for ``asarray`` (tensors are values).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ._dtypes import _lookup_numpy
from ._errors import DTypeError, PlacementError, TenferroError, TenferroTypeError, TenferroValueError
from ._placement import import_cupy
from ._tensor import Tensor

__all__ = ["from_dlpack"]

# DLPack device types (dlpack.h, DLDeviceType)
_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_HOST = 3
_DL_CUDA_MANAGED = 13
_HOST_DEVICES = (_DL_CPU, _DL_CUDA_HOST)
_CUDA_DEVICES = (_DL_CUDA, _DL_CUDA_MANAGED)
_SUPPORTED = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")


def _device_type(obj: Any) -> int:
    try:
        dev = obj.__dlpack_device__()
    except Exception as exc:  # noqa: BLE001  (any producer failure becomes a typed error)
        raise PlacementError(f"from_dlpack: {type(obj).__name__}.__dlpack_device__() failed ({exc})") from exc
    try:
        device_type, _ = dev
        return operator.index(device_type)
    except (TypeError, ValueError) as exc:
        raise PlacementError(
            f"from_dlpack: {type(obj).__name__}.__dlpack_device__() returned {dev!r}; expected a "
            "pair of integers (device type, device id)"
        ) from exc


def _import(obj: Any, device_type: int) -> Any:
    """The foreign buffer as a NumPy or CuPy array, without a copy."""
    if device_type in _HOST_DEVICES:
        module, where = np, "host"
    elif device_type in _CUDA_DEVICES:
        module, where = import_cupy("from_dlpack"), "CUDA"
    else:
        raise PlacementError(
            f"from_dlpack: DLPack device type {device_type} is not supported; expected host "
            f"memory (CPU, {_DL_CPU}) or a CUDA device ({_DL_CUDA}) through CuPy"
        )
    try:
        return module.from_dlpack(obj)
    except (TenferroError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001  (a producer's own exception types: any becomes a typed error)
        if "dtype" in str(exc).lower():  # e.g. bfloat16: NumPy/CuPy have no such dtype
            raise DTypeError(
                f"from_dlpack: the element type of {type(obj).__name__} is not supported ({exc}); "
                f"supported dtypes are {', '.join(_SUPPORTED)}"
            ) from exc
        raise PlacementError(
            f"from_dlpack: cannot import {type(obj).__name__} from {where} memory through DLPack ({exc})"
        ) from exc


def from_dlpack(obj: Any, *, copy: bool | None = None) -> Tensor:
    """A :class:`Tensor` sharing memory with ``obj``, a DLPack producer.

    ``obj`` is any object with ``__dlpack__`` and ``__dlpack_device__`` (a PyTorch
    tensor, a JAX array, a NumPy or CuPy array, a tenferro tensor). The result has
    ``obj``'s shape and dtype (one of tenferro's dtypes; others raise DTypeError)
    and lives on the CPU or, for CUDA memory, on ``gpu(i)``.

    ``copy=None`` (default) shares memory when ``obj`` is column-major contiguous
    and otherwise copies into column-major order, as :func:`tenferro.asarray` does;
    ``copy=False`` never copies and returns a strided view for other layouts;
    ``copy=True`` always copies.

    >>> import numpy as np, tenferro as tf
    >>> a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    >>> t = tf.from_dlpack(a)
    >>> np.shares_memory(t.numpy(), a)
    True
    """
    if not (copy is None or isinstance(copy, (bool, np.bool_))):  # 0, 1, "no" are not flags
        raise TenferroValueError(f"from_dlpack: copy must be None, True or False, got {copy!r}")
    if not (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")):
        raise TenferroTypeError(
            f"from_dlpack: {type(obj).__name__} does not implement the DLPack protocol; "
            "expected an object with __dlpack__ and __dlpack_device__ "
            "(use tenferro.asarray for lists and array-likes)"
        )
    arr = _import(obj, _device_type(obj))
    _lookup_numpy(arr.dtype, "from_dlpack", f"a {type(obj).__name__}")  # DTypeError for e.g. float16, uint8
    if copy is True or (copy is None and not arr.flags.f_contiguous):
        module = np if isinstance(arr, np.ndarray) else import_cupy("from_dlpack")
        arr = module.array(arr, order="F", copy=True)
    return Tensor._wrap(arr)
