"""A stand-in for CuPy that runs on the CPU, for checking tenferro's device paths
without a GPU (``pytest --placement fakegpu``).

It reproduces the two properties of CuPy that CPU-only code breaks: a device array
is **not** a NumPy array (``np.asarray`` of one raises, as CuPy's does, and so does
passing a NumPy array where a device array is expected: no implicit transfer
either way), and device→host copies (``get``, ``item``, ``float``, ``bool``,
``tolist``) are counted in :data:`TRANSFERS`. NumPy functions applied to device
arrays dispatch here through ``__array_function__`` / ``__array_ufunc__``, as with
CuPy. What it cannot tell is which NumPy functions or keywords CuPy lacks: only a
run on a real GPU (``pytest --placement gpu``) shows that.

**Stream capture** (CUDA graphs, see :mod:`tenferro.jit._cuda_graph`) is
emulated closely enough to catch bookkeeping bugs: while a :class:`Stream` that
is the current stream captures, every operation at the fake's dispatch points
(ufuncs, ``__array_function__``, module functions, methods, properties that make
views, ``__getitem__``/``__setitem__``, in-place operators) runs *and* is recorded
with the wrappers it read and returned. ``end_capture`` then rebinds every
recorded output to garbage (NaN, or a sentinel for integers), as a real capture
computes nothing; :meth:`Graph.launch` re-executes the recording in order,
rebinding each output wrapper to its new array (later operations read the
wrappers, so they see the new data) and redoing the in-place writes. So a replay
that forgot to copy its inputs in gives stale results, results that were not
copied out change under the next replay, and results taken from the capture
itself are garbage. A device→host copy during capture raises
``cupy.cuda.runtime.CUDARuntimeError`` and invalidates the capture (as CUDA's
cudaErrorStreamCaptureUnsupported), and so does a host→device upload (stricter
than CUDA, whose pinned uploads would be captured and read stale host memory);
cuSOLVER (``cupy.linalg``) and cuRAND raise ``NotImplementedError`` as CuPy's
wrappers do, and so does cuBLAS (matmul, dot, vdot, inner, tensordot, einsum of two or more
operands) while :data:`REFUSE_BLAS_IN_CAPTURE` is set, as in CuPy 13/14 (the default:
tenferro's captures route their products through cuBLAS directly, which the tests emulate
with :func:`_fake_cuda_capture.emulated_gemm`). A graph captured outside
a private :class:`MemoryPool` (``using_allocator``), or whose pool has been
freed, refuses to launch: on a device its freed buffers could be handed to other
allocations while it replays.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg
from _fake_cuda_capture import (
    _ALLOCATORS,
    CUDARuntimeError,
    Event,
    Graph,
    MemoryPool,
    Stream,
    _recording,
    _refuse_in_capture,
    get_current_stream,
    using_allocator,
)

TRANSFERS = {"device_to_host": 0}


class DeviceSynchronized(RuntimeError):
    """Raised, like ``cupyx.DeviceSynchronized``, by a device→host copy inside
    ``allow_synchronize(False)``."""


_SYNC_ALLOWED = [True]


REFUSE_BLAS_IN_CAPTURE = True
"""When set, matmul/dot/tensordot/einsum raise during stream capture, as CuPy 13/14's
cuBLAS wrappers do ("calling cuBLAS API during stream capture is currently unsupported")."""


def _library_in_capture(library: str) -> None:
    if _recording() is not None:
        raise NotImplementedError(f"calling {library} API during stream capture is currently unsupported")


def _unwrap_now(x: Any) -> Any:
    """``_unwrap`` for arguments and keyword values (dicts too)."""
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return _unwrap(x)


def _call(fn: Callable[..., Any], args: tuple, kwargs: dict | None = None) -> Any:
    """Run ``fn`` on the unwrapped arguments and wrap its result; while capturing,
    record it (with the wrappers, so that a replay reads their current arrays)."""
    kwargs = kwargs or {}
    out = _wrap(fn(*_unwrap(args), **_unwrap_now(kwargs)))
    cap = _recording()
    if cap is not None:
        cap.ops.append((fn, args, kwargs, out))
        if _ALLOCATORS[-1] is None:
            cap.default_pool_used = True
        else:
            cap.pools.add(_ALLOCATORS[-1])
    return out


def _c_ordered(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its array results C-ordered: CuPy's ufuncs write new results in C order
    whatever their inputs' layout (seen on a GPU: the exp of a column-major matrix needed
    ``asfortranarray`` after it), so code after them must not assume a layout."""

    def call(*args: Any, **kwargs: Any) -> Any:
        r = fn(*args, **kwargs)
        if isinstance(r, tuple):
            return tuple(np.ascontiguousarray(x) if type(x) is np.ndarray and x.ndim > 1 else x for x in r)
        return np.ascontiguousarray(r) if type(r) is np.ndarray and r.ndim > 1 else r

    call.__name__ = getattr(fn, "__name__", "ufunc")
    return call


def _setitem(a: np.ndarray, key: Any, value: Any) -> None:
    a[key] = value


def _method(name: str) -> Callable[..., Any]:
    def call(a: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        return getattr(a, name)(*args, **kwargs)

    return call


_T = _method("transpose")


def _real(a: np.ndarray) -> np.ndarray:
    return a.real


def _imag(a: np.ndarray) -> np.ndarray:
    return a.imag


def _count_transfer() -> None:
    _refuse_in_capture("a device-to-host copy")
    if not _SYNC_ALLOWED[-1]:
        raise DeviceSynchronized("a device-to-host copy happened where synchronization is disallowed")
    TRANSFERS["device_to_host"] += 1


def _refuse(what: str) -> TypeError:
    return TypeError(
        f"Unsupported type {what}: a host (NumPy) array cannot be mixed with device arrays; "
        "implicit transfers are not allowed (fake CuPy)"
    )


def _unwrap(x: Any) -> Any:
    if type(x) is ndarray:
        return x._a
    if type(x) is np.ndarray:
        raise _refuse("numpy.ndarray")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    return x


def _wrap(x: Any) -> Any:
    if type(x) is np.ndarray:
        return ndarray(x)
    if isinstance(x, np.generic):  # CuPy reductions return 0-d device arrays, not scalars
        return ndarray(np.asarray(x))
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    if isinstance(x, list):
        return [_wrap(v) for v in x]
    return x


class _Flags:
    def __init__(self, a: np.ndarray) -> None:
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.flags.owndata


class _Mem:
    def __init__(self, root: np.ndarray) -> None:
        self.ptr = root.__array_interface__["data"][0]
        self.size = root.nbytes


class _Pointer:
    def __init__(self, a: np.ndarray) -> None:
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        self.ptr = a.__array_interface__["data"][0]
        self.mem = _Mem(root)


class _Device:
    id = 0

    def __init__(self, device: int = 0) -> None:
        if device != 0:
            raise RuntimeError(f"fake CuPy has one device (0), asked for {device}")
        self.id = device

    def __enter__(self) -> "_Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def synchronize(self) -> None:
        _refuse_in_capture("a device synchronization")


class ndarray(np.lib.mixins.NDArrayOperatorsMixin):
    """A device array: wraps a NumPy array that host code may not touch."""

    __slots__ = ("_a",)

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    # -- no implicit conversion ---------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly."
        )

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if "where" in kwargs:
            raise TypeError("fake CuPy: ufuncs take no 'where' argument (nor does CuPy)")
        if REFUSE_BLAS_IN_CAPTURE and ufunc is np.matmul:
            _library_in_capture("cuBLAS")
        fn = getattr(ufunc, method)
        return _call(fn if method != "__call__" or "out" in kwargs else _c_ordered(fn), inputs, kwargs)

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        _check_library(getattr(func, "__name__", ""), getattr(func, "__module__", "") or "", args)
        return _call(func, args, kwargs)

    # -- metadata -------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a))
    device = property(lambda self: _Device(0))
    data = property(lambda self: _Pointer(self._a))
    T = property(lambda self: _call(_T, (self,)))
    real = property(lambda self: _call(_real, (self,)))
    imag = property(lambda self: _call(_imag, (self,)))

    @property
    def base(self) -> Any:
        return None if self._a.base is None else ndarray(self._a.base) if isinstance(self._a.base, np.ndarray) else None

    # -- device to host (counted) -------------------------------------------
    def get(self, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
        _count_transfer()
        return np.array(self._a, order=order, copy=True)

    def item(self) -> Any:
        _count_transfer()
        return self._a.item()

    def tolist(self) -> Any:
        _count_transfer()
        return self._a.tolist()

    def __bool__(self) -> bool:
        _count_transfer()
        return bool(self._a)

    def __float__(self) -> float:
        _count_transfer()
        return float(self._a)

    def __int__(self) -> int:
        _count_transfer()
        return int(self._a)

    def __complex__(self) -> complex:
        _count_transfer()
        return complex(self._a)

    def __index__(self) -> int:
        _count_transfer()
        return self._a.__index__()

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self._a)))

    def __repr__(self) -> str:
        return "fake_cupy." + repr(self._a)

    # -- indexing ---------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        return _call(_getitem, (self, key))

    def __setitem__(self, key: Any, value: Any) -> None:
        _call(_setitem, (self, key, value))

    # -- methods: NumPy's, on the wrapped array ---------------------------------
    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)
        call = _method(name)

        def method(*args: Any, **kwargs: Any) -> Any:
            if name == "dot" and REFUSE_BLAS_IN_CAPTURE:
                _library_in_capture("cuBLAS")
            return _call(call, (self, *args), kwargs)

        return method

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)


def _getitem(a: np.ndarray, key: Any) -> Any:
    return a[key]


ndarray.__module__ = "cupy"
ndarray.__qualname__ = ndarray.__name__ = "ndarray"


def _host_or_device(x: Any) -> Any:
    """Creation functions accept host data (a host-to-device copy) and device arrays."""
    if type(x) is ndarray:
        return x._a
    if isinstance(x, (list, tuple)):
        return type(x)(_host_or_device(v) for v in x)
    return x


def _uploads(x: Any) -> bool:
    """``x`` holds host data (an upload to the device), not only device arrays."""
    if type(x) is ndarray:
        return False
    if isinstance(x, (list, tuple)):
        return any(_uploads(v) for v in x)
    return isinstance(x, (np.ndarray, np.generic, bool, int, float, complex))


def _from_data(make: Callable[..., np.ndarray], a: Any, **kwargs: Any) -> ndarray:
    """``asarray``/``array``: a copy of device data (recorded) or an upload of host data."""
    if _uploads(a):
        _refuse_in_capture("a host-to-device copy")
        return ndarray(make(_host_or_device(a), **kwargs))
    return _call(lambda x: make(x, **kwargs), (a,))


def asarray(a: Any, dtype: Any = None, order: Any = None, *, blocking: bool = False) -> ndarray:
    if type(a) is ndarray:
        return _call(lambda x: np.asarray(x, dtype=dtype, order=order), (a,))
    return _from_data(np.array, a, dtype=dtype, order=order or "K", copy=True)


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", ndmin: int = 0, **kw: Any) -> ndarray:
    return _from_data(np.array, obj, dtype=dtype, copy=True, order=order, ndmin=ndmin)


def _geam_in_capture(a: Any, order: str) -> None:
    """CuPy converts a 2-d float/complex array between C and F order with cuBLAS ``geam``, which it
    refuses during capture (``asfortranarray``, ``ascontiguousarray``)."""
    if REFUSE_BLAS_IN_CAPTURE and type(a) is ndarray and a._a.ndim == 2 and a._a.dtype.kind in "fc":
        already = a._a.flags.f_contiguous if order == "F" else a._a.flags.c_contiguous
        if not already:
            _library_in_capture("cuBLAS")


def asfortranarray(a: Any, dtype: Any = None) -> ndarray:
    _geam_in_capture(a, "F")
    return _from_data(np.asfortranarray, a, dtype=dtype)


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    _geam_in_capture(a, "C")
    return _from_data(np.ascontiguousarray, a, dtype=dtype)


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
    if type(a) is ndarray:
        return a.get(order=order)
    return np.asarray(a, order=order)


def get_array_module(*args: Any) -> Any:
    return sys.modules["cupy"] if any(type(a) is ndarray for a in args) else np


_CREATION = {"zeros", "ones", "empty", "full", "eye", "identity", "arange", "linspace", "logspace", "tri"}
_BLAS = {"matmul", "dot", "vdot", "inner", "tensordot", "einsum"}  # CuPy's outer and kron are elementwise
_SOLVER_MODULES = ("numpy.linalg", "scipy.linalg")


_JOINS = {"concatenate", "stack", "hstack", "vstack", "column_stack"}


def _check_library(name: str, module: str, args: Any = ()) -> None:
    """Refuse, during capture, the library calls CuPy refuses (cuSOLVER; cuBLAS when asked; an
    einsum of one operand is a reduction, not cuBLAS), and CuPy's joins of more than 8 arrays of
    one dtype, whose single kernel uploads the arrays' pointers (a host-to-device copy)."""
    if name in _JOINS and args and isinstance(args[0], (list, tuple)) and len(args[0]) > 8:
        if len({getattr(a, "dtype", None) for a in args[0]}) == 1:
            _refuse_in_capture("a host-to-device copy: the pointers of a single-kernel concatenate")
    if module.startswith(_SOLVER_MODULES) and name != "norm":
        _library_in_capture("cuSOLVER")
    elif REFUSE_BLAS_IN_CAPTURE and name in _BLAS:
        if name == "einsum" and sum(type(a) is ndarray for a in args) < 2:
            return
        _library_in_capture("cuBLAS")


def _function(np_func: Any, creation: bool = False, library: str | None = None) -> Any:
    name = getattr(np_func, "__name__", "f")
    module = getattr(np_func, "__module__", "") or ""

    def f(*args: Any, **kwargs: Any) -> Any:
        if library is not None:
            _library_in_capture(library)
        _check_library(name, module, args)
        if creation:
            return _call(lambda *a, **k: np_func(*_host_or_device(a), **k), args, kwargs)
        return _call(np_func, args, kwargs)

    f.__name__ = name
    return f


def _module_getattr(np_module: Any) -> Any:
    def __getattr__(name: str) -> Any:
        obj = getattr(np_module, name)
        if callable(obj) and not isinstance(obj, type):
            return _function(obj, creation=name in _CREATION)
        return obj

    return __getattr__


class _RandomState:
    def __init__(self, seed: Any = None) -> None:
        self._rng = np.random.RandomState(seed)

    def __getattr__(self, name: str) -> Any:
        return _function(getattr(self._rng, name), creation=True, library="cuRAND")


class _Generator:
    def __init__(self, seed: Any = None) -> None:
        self._rng = np.random.default_rng(seed)

    def __getattr__(self, name: str) -> Any:
        return _function(getattr(self._rng, name), creation=True, library="cuRAND")


def _add_at(a: np.ndarray, slices: Any, value: Any) -> None:
    np.add.at(a, slices, value)


def scatter_add(a: ndarray, slices: Any, value: Any) -> None:
    """``cupyx.scatter_add``: ``a[slices] += value`` with repeated indices accumulated."""
    _call(_add_at, (a, slices, value))


@contextlib.contextmanager
def allow_synchronize(allow: bool) -> Any:
    _SYNC_ALLOWED.append(allow)
    try:
        yield
    finally:
        _SYNC_ALLOWED.pop()


@contextlib.contextmanager
def installed() -> Any:
    """The fake as ``cupy`` for the duration of a ``with`` block (tests that run in every
    placement mode); the modules it replaced, if any, are put back afterwards."""
    keys = (
        "cupy",
        "cupy.cuda",
        "cupy.cuda.runtime",
        "cupy.cuda.graph",
        "cupy.linalg",
        "cupy.lib",
        "cupy.lib.stride_tricks",
        "cupy.random",
        "cupyx",
        "cupyx.scipy",
        "cupyx.scipy.linalg",
    )
    saved = {k: sys.modules.get(k) for k in keys}
    try:
        yield install()
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def install() -> types.ModuleType:
    """Register the fake as ``cupy`` (and ``cupyx``) in ``sys.modules``."""
    cupy = types.ModuleType("cupy")
    cupy.__doc__ = __doc__
    for name in ("ndarray", "asarray", "array", "asfortranarray", "ascontiguousarray", "asnumpy", "get_array_module"):
        setattr(cupy, name, globals()[name])
    cupy.__getattr__ = _module_getattr(np)
    cupy.__version__ = "0.0-fake"
    cupy.FAKE = True

    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = _Device
    cuda.Stream, cuda.Event, cuda.MemoryPool = Stream, Event, MemoryPool
    cuda.get_current_stream, cuda.using_allocator = get_current_stream, using_allocator
    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.getDeviceCount = lambda: 1
    runtime.runtimeGetVersion = lambda: 0
    runtime.CUDARuntimeError = CUDARuntimeError
    runtime.streamCaptureModeGlobal, runtime.streamCaptureModeThreadLocal, runtime.streamCaptureModeRelaxed = 0, 1, 2
    cuda.runtime = runtime
    graph = types.ModuleType("cupy.cuda.graph")
    graph.Graph = Graph
    cuda.graph = graph
    cupy.cuda = cuda

    linalg = types.ModuleType("cupy.linalg")
    linalg.__getattr__ = _module_getattr(np.linalg)
    linalg.LinAlgError = np.linalg.LinAlgError
    cupy.linalg = linalg

    # cupy.lib.stride_tricks.as_strided: a device view, made (and recorded in a capture) like any
    # operation, so a replay re-derives it from its base's current array
    lib = types.ModuleType("cupy.lib")
    stride_tricks = types.ModuleType("cupy.lib.stride_tricks")
    stride_tricks.as_strided = _function(np.lib.stride_tricks.as_strided)
    lib.stride_tricks = stride_tricks
    cupy.lib = lib

    random = types.ModuleType("cupy.random")
    random.RandomState = _RandomState
    random.default_rng = _Generator
    cupy.random = random

    cupyx = types.ModuleType("cupyx")
    cupyx.allow_synchronize = allow_synchronize
    cupyx.scatter_add = scatter_add
    cupyx.errstate = lambda **kwargs: contextlib.nullcontext()  # NumPy's LAPACK raises anyway
    cupyx.DeviceSynchronized = DeviceSynchronized
    cupyx_scipy = types.ModuleType("cupyx.scipy")
    cupyx_linalg = types.ModuleType("cupyx.scipy.linalg")
    cupyx_linalg.__getattr__ = _module_getattr(scipy.linalg)
    cupyx_scipy.linalg = cupyx_linalg
    cupyx.scipy = cupyx_scipy

    sys.modules.update(
        {
            "cupy": cupy,
            "cupy.cuda": cuda,
            "cupy.cuda.runtime": runtime,
            "cupy.cuda.graph": graph,
            "cupy.linalg": linalg,
            "cupy.lib": lib,
            "cupy.lib.stride_tricks": stride_tricks,
            "cupy.random": random,
            "cupyx": cupyx,
            "cupyx.scipy": cupyx_scipy,
            "cupyx.scipy.linalg": cupyx_linalg,
        }
    )
    return cupy
