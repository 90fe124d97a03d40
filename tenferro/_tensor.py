"""The dense :class:`Tensor`: a thin wrapper over a NumPy (host) or CuPy (GPU) array.

Canonical storage is contiguous column-major (Fortran order): every tensor made
by a tenferro function is F-contiguous. Metadata-only views (``reshape_view``,
``transpose_view``, ``slice_view``) may carry arbitrary signed strides and an
offset into shared storage; :meth:`Tensor.contiguous` materialises them.

The Tensor type holds data and metadata only. Arithmetic operators,
comparisons and indexing are installed by the primitive layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dtypes import DType, _from_numpy, _lookup_numpy
from ._errors import DTypeError, PlacementError, TenferroTypeError, TenferroValueError, fmt_shape
from ._arrays import array_from, upload
from ._placement import CPU, MemoryKind, Placement, get_default_placement, import_cupy, is_cupy_array, placement_of
from ._shape import Shape

__all__ = ["Tensor"]


def array_module(array: Any) -> Any:
    """``numpy`` for host arrays, ``cupy`` for CuPy arrays."""
    if isinstance(array, np.ndarray):
        return np
    return import_cupy("array_module")


def _byte_extent(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> tuple[int, int]:
    """Byte range [lo, hi) touched by an array, relative to its data pointer."""
    if 0 in shape:
        return 0, 0
    lo = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return lo, hi + itemsize


def buffer_info(array: Any) -> tuple[int, int]:
    """``(offset, size)`` in elements of ``array``'s dtype: where its first element
    sits in the underlying allocation, and how many elements the allocation holds."""
    itemsize = array.dtype.itemsize
    if isinstance(array, np.ndarray):
        root = array
        while True:
            b = root.base
            if isinstance(b, np.ndarray):
                root = b
            elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
                root = b.base  # e.g. the DummyArray behind as_strided
            else:
                break
        ptr = array.__array_interface__["data"][0]
        root_ptr = root.__array_interface__["data"][0]
        lo, hi = _byte_extent(root.shape, root.strides, root.dtype.itemsize)
        start = root_ptr + lo
        return (ptr - start) // itemsize, (hi - lo) // itemsize
    if is_cupy_array(array):
        mem = array.data.mem
        return (array.data.ptr - mem.ptr) // itemsize, mem.size // itemsize
    raise TenferroTypeError(f"buffer_info: expected a numpy or cupy array, got {type(array).__name__}")


class Tensor:
    """A dense tensor on the CPU (NumPy) or a GPU (CuPy).

    Create tensors with :func:`tenferro.asarray`, :func:`tenferro.zeros` and friends.
    The stored array is ``_data``; ``strides`` are signed and counted in elements.
    Tensors made by tenferro functions from canonical inputs are canonical: F-contiguous
    (column-major) and writeable (from a strided view, a result may be strided too; see
    :meth:`contiguous`).

    **Tensors are values.** Operations may share storage with their inputs (views,
    ``reshape``, ``asarray`` of a NumPy array wraps it without copying), and AD keeps
    the tensors it saw for later use. Mutating the storage of a tensor (through
    :meth:`numpy`, ``np.asarray(t)``, or the NumPy array it was made from) after it
    has been used in a computation, or while it is being differentiated, is
    undefined behaviour: results, cached values and gradients may silently change.
    For a private, mutable copy use ``np.array(t)`` (a NumPy copy) or :meth:`copy`.

    **Operators and methods** (one table, ``tenferro._methods``, shared by the tracers of
    ``tidu``): ``+ - * / ** @`` (``@`` is :func:`tenferro.matmul`, NumPy's layout: leading batch
    axes), comparisons (bool tensors), indexing, ``x.T`` (all axes reversed), ``x.mT`` (the last
    two axes swapped, the array API's ``mT``) and ``x.mH`` (its conjugate), ``real``, ``imag``,
    ``conj()``, ``reshape``, ``transpose``, ``squeeze``, ``take``, the reductions (``sum``,
    ``max``, ``min``, ``mean``, ``prod``, ``var``, ``std``, ``argmax``, ``argmin``, ``cumsum``),
    ``clip``, ``diagonal``, ``trace``, ``dot``, ``astype``.
    """

    __slots__ = ("_data", "__weakref__")
    __array_priority__ = 100

    _data: Any

    def __init__(self, data: Any) -> None:
        """``Tensor(data)``: what :func:`tenferro.asarray` makes of concrete data
        (on the default placement for host data)."""
        arr = array_from("Tensor", data._data if isinstance(data, Tensor) else data, None)
        target = get_default_placement()
        if type(arr) is np.ndarray and target.device is not None:
            arr = upload("Tensor", arr, target)
        self._data = arr

    @classmethod
    def _wrap(cls, array: Any) -> Tensor:
        """Wrap an array without copying or checking (hot path of every op)."""
        t = object.__new__(cls)
        t._data = array
        return t

    # -- metadata ---------------------------------------------------------
    @property
    def shape(self) -> Shape:
        """The extents, as a :class:`Shape` (a tuple subclass)."""
        return Shape._from_tuple(self._data.shape)

    @property
    def dtype(self) -> DType:
        """The tenferro :class:`DType`."""
        d = _from_numpy.get(self._data.dtype)
        return d if d is not None else _lookup_numpy(self._data.dtype, "Tensor.dtype", "the stored array")

    @property
    def ndim(self) -> int:
        """Number of dimensions (rank)."""
        return self._data.ndim

    @property
    def size(self) -> int:
        """Number of elements."""
        return self._data.size

    @property
    def placement(self) -> Placement:
        """Where the data lives (``CPU`` or ``gpu(i)``)."""
        if isinstance(self._data, np.ndarray):
            return CPU
        return placement_of(self._data)

    @property
    def strides(self) -> tuple[int, ...]:
        """Signed strides in elements (not bytes)."""
        item = self._data.dtype.itemsize
        return tuple(s // item for s in self._data.strides)

    @property
    def offset(self) -> int:
        """Element offset of the first element from the start of the base allocation."""
        return buffer_info(self._data)[0]

    @property
    def is_contiguous(self) -> bool:
        """True when the data is column-major (Fortran) contiguous."""
        return bool(self._data.flags.f_contiguous)

    # -- conversion to host values -----------------------------------------
    def numpy(self) -> np.ndarray:
        """A NumPy array with the same values: the stored array itself on the CPU
        (shares memory: do not mutate it, tensors are values -- see :class:`Tensor`;
        ``np.array(t)`` gives a private copy), a host copy for GPU tensors."""
        if isinstance(self._data, np.ndarray):
            return self._data
        return self._data.get(order="A")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False and not isinstance(self._data, np.ndarray):
            raise PlacementError(
                f"__array__: a tensor on {self.placement} cannot be viewed as a NumPy array "
                "without a copy; call .to_cpu() first or allow copy"
            )
        return np.asarray(self.numpy(), dtype=dtype, copy=copy)

    def __dlpack__(self, **kwargs: Any) -> Any:
        data = self._data
        if isinstance(data, np.ndarray) and not data.flags.writeable and kwargs.get("copy") is not False:
            # read-only memory (a memory-mapped file) leaves as a copy unless copy=False is asked: a
            # consumer may ignore DLPack's read-only flag (PyTorch does) and write into a read-only
            # mapping, which kills the process
            data = data.copy(order="K")
            kwargs.pop("copy", None)
        return data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    def tolist(self) -> Any:
        """Nested Python lists of Python scalars (a scalar for 0-d tensors)."""
        return self.numpy().tolist()

    def _one_element(self, op: str) -> Any:
        if self._data.size != 1:
            raise TenferroValueError(
                f"{op}: expected a tensor with exactly one element, got shape "
                f"{fmt_shape(self._data.shape)} (size {self._data.size})"
            )
        return self._data.reshape(()).item() if self._data.ndim else self._data.item()

    def item(self) -> bool | int | float | complex:
        """The single element as a Python scalar; the tensor must have size 1."""
        return self._one_element("item")

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise TenferroValueError(
                f"bool: the truth value of a tensor of shape {fmt_shape(self._data.shape)} "
                f"(size {self._data.size}) is ambiguous; expected exactly one element"
            )
        return bool(self._one_element("bool"))

    def __float__(self) -> float:
        if self.dtype.is_complex:
            raise DTypeError(
                f"float: cannot convert a {self.dtype.name} tensor to float; "
                "expected a real dtype (take the real part or use complex())"
            )
        return float(self._one_element("float"))

    def __int__(self) -> int:
        if self.dtype.is_complex:
            raise DTypeError(f"int: cannot convert a {self.dtype.name} tensor to int; expected a real dtype")
        return int(self._one_element("int"))

    def __complex__(self) -> complex:
        return complex(self._one_element("complex"))

    def __index__(self) -> int:
        if self.dtype.kind != "int":
            raise DTypeError(f"index: only integer tensors can be used as an index, got {self.dtype.name}")
        if self._data.ndim != 0:
            raise TenferroTypeError(
                f"index: only 0-d integer tensors can be used as an index, got shape {fmt_shape(self._data.shape)}"
            )
        return int(self._data.item())

    def __repr__(self) -> str:
        arr = self.numpy()
        body = np.array2string(arr, separator=", ", prefix="Tensor(")
        extra = "" if self.placement == CPU else f", placement={self.placement}"
        if arr.size == 0:
            return f"Tensor({body}, shape={fmt_shape(arr.shape)}, dtype={self.dtype.name}{extra})"
        return f"Tensor({body}, dtype={self.dtype.name}{extra})"

    # -- placement and layout ------------------------------------------------
    def to_gpu(self, device: int = 0) -> Tensor:
        """A copy on GPU ``device`` (self if already there). Needs CuPy."""
        if not isinstance(device, int) or isinstance(device, bool) or device < 0:
            raise PlacementError(f"to_gpu: device must be a non-negative int, got {device!r}")
        target = Placement(MemoryKind.DEVICE, device)
        if self.placement == target:
            return self
        return Tensor._wrap(upload("to_gpu", self._data, target))

    def to_cpu(self) -> Tensor:
        """A host copy (self if already on the CPU)."""
        if isinstance(self._data, np.ndarray):
            return self
        return Tensor._wrap(self._data.get(order="F"))

    def contiguous(self) -> Tensor:
        """Self if column-major contiguous, else an F-ordered copy."""
        if self._data.flags.f_contiguous:
            return self
        return self.copy()

    def copy(self) -> Tensor:
        """An F-ordered copy with its own storage, on the same placement."""
        if isinstance(self._data, np.ndarray):
            return Tensor._wrap(np.array(self._data, order="F", copy=True))
        return Tensor._wrap(array_module(self._data).array(self._data, order="F", copy=True))
