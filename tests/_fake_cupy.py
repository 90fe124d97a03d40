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
"""
from __future__ import annotations

import contextlib
import sys
import types
from typing import Any

import numpy as np
import scipy.linalg

TRANSFERS = {"device_to_host": 0}


class DeviceSynchronized(RuntimeError):
    """Raised, like ``cupyx.DeviceSynchronized``, by a device→host copy inside
    ``allow_synchronize(False)``."""


_SYNC_ALLOWED = [True]


def _count_transfer() -> None:
    if not _SYNC_ALLOWED[-1]:
        raise DeviceSynchronized("a device-to-host copy happened where synchronization is disallowed")
    TRANSFERS["device_to_host"] += 1


def _refuse(what: str) -> TypeError:
    return TypeError(f"Unsupported type {what}: a host (NumPy) array cannot be mixed with device arrays; "
                     "implicit transfers are not allowed (fake CuPy)")


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
    if isinstance(x, np.generic):   # CuPy reductions return 0-d device arrays, not scalars
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
        return None


class ndarray(np.lib.mixins.NDArrayOperatorsMixin):
    """A device array: wraps a NumPy array that host code may not touch."""

    __slots__ = ("_a",)

    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    # -- no implicit conversion ---------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if "out" in kwargs:
            kwargs["out"] = _unwrap(kwargs["out"])
        if "where" in kwargs:
            raise TypeError("fake CuPy: ufuncs take no 'where' argument (nor does CuPy)")
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **kwargs))

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        return _wrap(func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

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
    T = property(lambda self: ndarray(self._a.T))
    real = property(lambda self: ndarray(self._a.real))
    imag = property(lambda self: ndarray(self._a.imag))

    @property
    def base(self) -> Any:
        return None if self._a.base is None else ndarray(self._a.base) if isinstance(self._a.base, np.ndarray) \
            else None

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
        return (ndarray(np.asarray(self._a[i])) for i in range(len(self._a)))

    def __repr__(self) -> str:
        return "fake_cupy." + repr(self._a)

    # -- indexing ---------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        return _wrap(self._a[_unwrap(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._a[_unwrap(key)] = _unwrap(value)

    # -- methods: NumPy's, on the wrapped array ---------------------------------
    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)

        def method(*args: Any, **kwargs: Any) -> Any:
            return _wrap(attr(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
        return method

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)


ndarray.__module__ = "cupy"
ndarray.__qualname__ = ndarray.__name__ = "ndarray"


def _host_or_device(x: Any) -> Any:
    """Creation functions accept host data (a host-to-device copy) and device arrays."""
    if type(x) is ndarray:
        return x._a
    if isinstance(x, (list, tuple)):
        return type(x)(_host_or_device(v) for v in x)
    return x


def asarray(a: Any, dtype: Any = None, order: Any = None, *, blocking: bool = False) -> ndarray:
    if type(a) is ndarray:
        return ndarray(np.asarray(a._a, dtype=dtype, order=order))
    return ndarray(np.array(_host_or_device(a), dtype=dtype, order=order or "K", copy=True))


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", ndmin: int = 0, **kw: Any) -> ndarray:
    return ndarray(np.array(_host_or_device(obj), dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asfortranarray(a: Any, dtype: Any = None) -> ndarray:
    return ndarray(np.asfortranarray(_host_or_device(a), dtype=dtype))


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    return ndarray(np.ascontiguousarray(_host_or_device(a), dtype=dtype))


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None) -> np.ndarray:
    if type(a) is ndarray:
        return a.get(order=order)
    return np.asarray(a, order=order)


def get_array_module(*args: Any) -> Any:
    return sys.modules["cupy"] if any(type(a) is ndarray for a in args) else np


_CREATION = {"zeros", "ones", "empty", "full", "eye", "identity", "arange", "linspace", "logspace", "tri"}


def _function(np_func: Any, creation: bool = False) -> Any:
    def f(*args: Any, **kwargs: Any) -> Any:
        if creation:
            return _wrap(np_func(*_host_or_device(args), **kwargs))
        return _wrap(np_func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
    f.__name__ = getattr(np_func, "__name__", "f")
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
        return _function(getattr(self._rng, name), creation=True)


class _Generator:
    def __init__(self, seed: Any = None) -> None:
        self._rng = np.random.default_rng(seed)

    def __getattr__(self, name: str) -> Any:
        return _function(getattr(self._rng, name), creation=True)


def scatter_add(a: ndarray, slices: Any, value: Any) -> None:
    """``cupyx.scatter_add``: ``a[slices] += value`` with repeated indices accumulated."""
    np.add.at(a._a, _unwrap(slices), _unwrap(value))


@contextlib.contextmanager
def allow_synchronize(allow: bool) -> Any:
    _SYNC_ALLOWED.append(allow)
    try:
        yield
    finally:
        _SYNC_ALLOWED.pop()


def install() -> types.ModuleType:
    """Register the fake as ``cupy`` (and ``cupyx``) in ``sys.modules``."""
    cupy = types.ModuleType("cupy")
    cupy.__doc__ = __doc__
    for name in ("ndarray", "asarray", "array", "asfortranarray", "ascontiguousarray", "asnumpy",
                 "get_array_module"):
        setattr(cupy, name, globals()[name])
    cupy.__getattr__ = _module_getattr(np)
    cupy.__version__ = "0.0-fake"
    cupy.FAKE = True

    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = _Device
    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.getDeviceCount = lambda: 1
    runtime.runtimeGetVersion = lambda: 0
    cuda.runtime = runtime
    cupy.cuda = cuda

    linalg = types.ModuleType("cupy.linalg")
    linalg.__getattr__ = _module_getattr(np.linalg)
    linalg.LinAlgError = np.linalg.LinAlgError
    cupy.linalg = linalg

    random = types.ModuleType("cupy.random")
    random.RandomState = _RandomState
    random.default_rng = _Generator
    cupy.random = random

    cupyx = types.ModuleType("cupyx")
    cupyx.allow_synchronize = allow_synchronize
    cupyx.scatter_add = scatter_add
    cupyx.errstate = lambda **kwargs: contextlib.nullcontext()   # NumPy's LAPACK raises anyway
    cupyx.DeviceSynchronized = DeviceSynchronized
    cupyx_scipy = types.ModuleType("cupyx.scipy")
    cupyx_linalg = types.ModuleType("cupyx.scipy.linalg")
    cupyx_linalg.__getattr__ = _module_getattr(scipy.linalg)
    cupyx_scipy.linalg = cupyx_linalg
    cupyx.scipy = cupyx_scipy

    sys.modules.update({"cupy": cupy, "cupy.cuda": cuda, "cupy.cuda.runtime": runtime, "cupy.linalg": linalg,
                        "cupy.random": random, "cupyx": cupyx, "cupyx.scipy": cupyx_scipy,
                        "cupyx.scipy.linalg": cupyx_linalg})
    return cupy
