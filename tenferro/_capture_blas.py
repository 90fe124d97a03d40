"""Matrix products that a CUDA graph capture can record: cuBLAS called directly.

CuPy (13 and 14) refuses every cuBLAS call while its current stream is capturing
(``NotImplementedError: calling cuBLAS API during stream capture is currently
unsupported``), although cuBLAS itself supports stream capture given a stream and a
workspace set on its handle beforehand (cuBLAS documentation, "CUDA Graphs Support").
So while :mod:`tenferro.jit` captures a program (:func:`capturing`), the contraction
kernels (einsum's pairwise steps, ``dot_general``, ``matmul``) call
``cublas<t>gemm``/``cublas<t>gemmStridedBatched`` through ctypes on a handle of
tenferro's own (the library CuPy already loaded), with the capture stream and a
workspace from the program's private memory pool; outside a capture nothing here is
used. The ctypes call costs microseconds once, at capture; a replay runs no Python.

:func:`matmul` has NumPy's ``matmul`` semantics (batch broadcasting, 1-d operands) on
device arrays of float32/float64/complex64/complex128. The layout logic maps each
operand's last two axes onto a column-major cuBLAS operand without a copy when they
are row- or column-contiguous with a uniform batch stride, and copies (a capturable
elementwise kernel) otherwise. :class:`NotCapturable` means "use CuPy" (other
dtypes): the capture then fails and the program runs uncaptured, as before.

:func:`concatenate_arrays` is the other routine a capture needs rerouted: CuPy joins more than 8
arrays with one kernel whose table of array pointers it uploads from the host, a
host-to-device copy that a capturing stream refuses; while capturing, the join is one copy
per array into the result instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from math import prod
from typing import Any, Callable

import numpy as np

from ._errors import UnsupportedOnDeviceError

__all__ = [
    "CaptureBlas",
    "NotCapturable",
    "capturing",
    "capture_scope",
    "concatenate_arrays",
    "load_cublas",
    "matmul",
    "tensordot",
    "OP_N",
    "OP_T",
]

OP_N, OP_T = 0, 1
WORKSPACE_BYTES = 32 << 20
"""cuBLAS workspace per captured program (NVIDIA recommends 32 MiB on Hopper)."""


class NotCapturable(UnsupportedOnDeviceError):
    """This product has no cuBLAS route here (an integer dtype): the caller uses CuPy (internal:
    caught where the route is chosen)."""


class _Current(threading.local):
    blas: "CaptureBlas | None" = None
    active: bool = False


_CURRENT = _Current()


def capturing() -> "CaptureBlas | None":
    """The cuBLAS route of the capture under way in this thread, or None."""
    return _CURRENT.blas


class capture_scope:
    """``with capture_scope(blas):`` routes this thread's device products through ``blas``."""

    def __init__(self, blas: "CaptureBlas | None"):
        self.blas = blas

    def __enter__(self) -> "CaptureBlas | None":
        self.previous = _CURRENT.blas, _CURRENT.active
        _CURRENT.blas, _CURRENT.active = self.blas, True
        return self.blas

    def __exit__(self, *exc: Any) -> None:
        _CURRENT.blas, _CURRENT.active = self.previous


CONCATENATE_SINGLE_KERNEL = 8
"""CuPy joins more arrays than this (of one dtype) with its single, pointer-uploading kernel."""


def concatenate_arrays(xp: Any, arrays: Any, axis: int = 0) -> Any:
    """``xp.concatenate(arrays, axis)`` (``xp``: NumPy or CuPy), C-ordered; while this thread
    runs a program being captured (or its warm-up run: :class:`capture_scope`), a join of
    device arrays is one copy per array into the result, which the capture records (see the
    module)."""
    arrays = list(arrays)
    if xp is np or not _CURRENT.active or len(arrays) <= CONCATENATE_SINGLE_KERNEL:
        return xp.concatenate(arrays, axis=axis)
    a0 = arrays[0]
    axis %= a0.ndim
    shape = list(a0.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = xp.empty(tuple(shape), dtype=np.result_type(*[a.dtype for a in arrays]))
    index = [slice(None)] * a0.ndim
    start = 0
    for a in arrays:
        index[axis] = slice(start, start + a.shape[axis])
        out[tuple(index)] = a
        start += a.shape[axis]
    return out


# ---- the library ---------------------------------------------------------------------
class _Complex64(ctypes.Structure):
    _fields_ = [("re", ctypes.c_float), ("im", ctypes.c_float)]


class _Complex128(ctypes.Structure):
    _fields_ = [("re", ctypes.c_double), ("im", ctypes.c_double)]


_SCALARS = {"f": ctypes.c_float, "d": ctypes.c_double, "F": _Complex64, "D": _Complex128}
_PREFIX = {"f": "S", "d": "D", "F": "C", "D": "Z"}
_LIB: list[Any] = []
_HANDLES: dict[int, ctypes.c_void_p] = {}
_LOCK = threading.Lock()


def _loaded_cublas_path() -> str | None:
    """The libcublas this process already mapped (CuPy's), read from /proc/self/maps."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(" ", 1)[-1].strip()
                name = path.rsplit("/", 1)[-1]
                if name.startswith("libcublas.so"):
                    return path
    except OSError:
        return None
    return None


def load_cublas(cp: Any) -> Any:
    """ctypes handle of a cuBLAS library mapped in this process (loaded on first use): CuPy's,
    which CuPy loads here, or another framework's mapped earlier. Any one serves: the handle
    is created by the same library whose functions are called."""
    with _LOCK:
        if _LIB:
            return _LIB[0]
        cp.cuda.cublas  # noqa: B018  (CuPy loads libcublas with its cuBLAS module)
        cp.cuda.device.get_cublas_handle()
        path = _loaded_cublas_path() or ctypes.util.find_library("cublas")
        if path is None:
            raise OSError("libcublas is not loaded in this process and cannot be found")
        lib = ctypes.CDLL(path)
        for prefix in _PREFIX.values():
            for fn in (f"cublas{prefix}gemm_v2", f"cublas{prefix}gemmStridedBatched"):
                getattr(lib, fn).restype = ctypes.c_int
        _LIB.append(lib)
        return lib


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what} returned cuBLAS status {status}")


Gemm = Callable[..., None]
"""``gemm(dtype_char, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta,
C, ldc, strideC, batch)``: column-major ``C = alpha op(A) op(B) + beta C`` per batch entry,
on device arrays ``A, B, C`` (their first elements; strides in elements)."""


class CaptureBlas:
    """The cuBLAS route of one capture: a handle of GPU ``device`` (shared per device), set to
    ``stream_ptr`` and to this capture's workspace right before each call (under a lock, so
    captures in several threads do not take each other's stream). The workspace
    (:data:`WORKSPACE_BYTES`) is allocated at the first product, by the current allocator (the
    warm-up run's private pool, outside the capture), and lives as long as this object: the
    caller keeps it with the graph. ``gemm`` replaces the library call (tests give a NumPy
    emulation)."""

    def __init__(self, cp: Any, stream_ptr: int, device: int, gemm: Gemm | None = None):
        self.cp = cp
        self.stream_ptr = stream_ptr
        self.workspace: Any = None
        if gemm is not None:
            self.gemm = gemm
            return
        lib = load_cublas(cp)
        with _LOCK:
            handle = _HANDLES.get(device)
            if handle is None:
                handle = ctypes.c_void_p()
                _check(lib.cublasCreate_v2(ctypes.byref(handle)), "cublasCreate")
                _HANDLES[device] = handle
        self._lib, self._handle = lib, handle
        self.gemm = self._cublas_gemm

    def _cublas_gemm(
        self,
        t: str,
        ta: int,
        tb: int,
        m: int,
        n: int,
        k: int,
        alpha: complex,
        a: Any,
        lda: int,
        sa: int,
        b: Any,
        ldb: int,
        sb: int,
        beta: complex,
        c: Any,
        ldc: int,
        sc: int,
        batch: int,
    ) -> None:
        scalar = _SCALARS[t]
        one = scalar(alpha.real, alpha.imag) if t in "FD" else scalar(alpha.real)
        zero = scalar(beta.real, beta.imag) if t in "FD" else scalar(beta.real)
        ptr = ctypes.c_void_p
        if self.workspace is None:
            self.workspace = self.cp.empty(WORKSPACE_BYTES, dtype=self.cp.uint8)
        with _LOCK:
            lib, handle = self._lib, self._handle
            _check(lib.cublasSetStream_v2(handle, ptr(self.stream_ptr)), "cublasSetStream")
            _check(
                lib.cublasSetWorkspace_v2(handle, ptr(self.workspace.data.ptr), ctypes.c_size_t(WORKSPACE_BYTES)),
                "cublasSetWorkspace",
            )
            self._call(t, ta, tb, m, n, k, one, a, lda, sa, b, ldb, sb, zero, c, ldc, sc, batch)

    def _call(
        self,
        t: str,
        ta: int,
        tb: int,
        m: int,
        n: int,
        k: int,
        one: Any,
        a: Any,
        lda: int,
        sa: int,
        b: Any,
        ldb: int,
        sb: int,
        zero: Any,
        c: Any,
        ldc: int,
        sc: int,
        batch: int,
    ) -> None:
        ptr = ctypes.c_void_p
        if batch == 1:
            fn = getattr(self._lib, f"cublas{_PREFIX[t]}gemm_v2")
            status = fn(
                self._handle,
                ta,
                tb,
                m,
                n,
                k,
                ctypes.byref(one),
                ptr(a.data.ptr),
                lda,
                ptr(b.data.ptr),
                ldb,
                ctypes.byref(zero),
                ptr(c.data.ptr),
                ldc,
            )
        else:
            fn = getattr(self._lib, f"cublas{_PREFIX[t]}gemmStridedBatched")
            ll = ctypes.c_longlong
            status = fn(
                self._handle,
                ta,
                tb,
                m,
                n,
                k,
                ctypes.byref(one),
                ptr(a.data.ptr),
                lda,
                ll(sa),
                ptr(b.data.ptr),
                ldb,
                ll(sb),
                ctypes.byref(zero),
                ptr(c.data.ptr),
                ldc,
                ll(sc),
                batch,
            )
        _check(status, f"cublas{_PREFIX[t]}gemm")


# ---- NumPy's matmul on cuBLAS ---------------------------------------------------------
def _operand(cp: Any, a: Any, batch: tuple) -> tuple[Any, int, int, int]:
    """``a[..., r, c]`` as the cuBLAS operand of ``a^T`` in column-major terms: ``(array,
    op, ld, batch stride)`` with ``op(A)`` the column-major ``(c x r)`` matrix ``a^T``
    (``OP_N`` on a row-major ``a``, ``OP_T`` on a column-major one); copies only when
    neither layout fits."""
    r, c = a.shape[-2:]
    if a.shape[:-2] != batch:
        if prod(a.shape[:-2]) == 1:
            a = a.reshape(r, c)  # one matrix for every batch entry: batch stride 0
        else:
            a = _c_copy(cp, cp.broadcast_to(a, batch + (r, c)))
    for attempt in range(2):
        item = a.itemsize
        if any(s % item or s < 0 for s in a.strides):
            a = _c_copy(cp, a)
            continue
        st = [s // item for s in a.strides]
        sr, sc_ = st[-2], st[-1]
        stride = _batch_stride(a.shape[:-2], st[:-2])
        if stride is not None:
            if (c == 1 or sc_ == 1) and (r == 1 or sr >= c):
                return a, OP_N, max(1, c if r == 1 else sr), stride
            if (r == 1 or sr == 1) and (c == 1 or sc_ >= r):
                return a, OP_T, max(1, r if c == 1 else sc_), stride
        a = _c_copy(cp, a)
    raise AssertionError("a C-contiguous operand always fits")  # pragma: no cover


def _c_copy(cp: Any, a: Any) -> Any:
    """A C-contiguous copy by an elementwise kernel (CuPy's ``ascontiguousarray`` transposes 2-d
    arrays with cuBLAS ``geam``, which it refuses during capture)."""
    out = cp.empty(a.shape, dtype=a.dtype)
    out[...] = a
    return out


def _batch_stride(shape: tuple, strides: list) -> int | None:
    """The one element stride that walks the flattened batch axes, or None (0 for no batch)."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if not dims:
        return 0
    stride = dims[-1][1]
    expected = stride
    for n, s in reversed(dims):
        if s != expected:
            return None
        expected = s * n
    return stride


def matmul(blas: CaptureBlas, x: Any, y: Any, out: Any = None) -> Any:
    """``numpy.matmul(x, y, out=out)`` of device arrays through ``blas`` (see the module)."""
    cp = blas.cp
    dtype = np.result_type(x.dtype, y.dtype)
    if dtype.char not in _SCALARS:
        raise NotCapturable(f"matmul of {dtype}")
    x1, y1 = x.ndim == 1, y.ndim == 1
    xm = x.reshape(1, -1) if x1 else x
    ym = y.reshape(-1, 1) if y1 else y
    xm, ym = xm.astype(dtype, copy=False), ym.astype(dtype, copy=False)
    n, k = xm.shape[-2:]
    m = ym.shape[-1]
    if ym.shape[-2] != k:
        raise ValueError(f"matmul: shapes {x.shape} and {y.shape} are not aligned")
    batch = tuple(np.broadcast_shapes(xm.shape[:-2], ym.shape[:-2]))
    c = cp.empty(batch + (n, m), dtype=dtype)  # C-contiguous: column-major (m x n) per batch entry
    count = prod(batch)
    if count and n and m:
        if k == 0:
            c.fill(0)
        else:
            # row-major c = x y  <=>  column-major c^T (m x n) = y^T (m x k) x^T (k x n)
            ya, opy, ldy, sy = _operand(cp, ym, batch)
            xa, opx, ldx, sx = _operand(cp, xm, batch)
            blas.gemm(dtype.char, opy, opx, m, n, k, 1.0, ya, ldy, sy, xa, ldx, sx, 0.0, c, m, n * m, count)
    res = c.reshape(batch + ((n,) if not x1 else ()) + ((m,) if not y1 else ()))
    if out is not None:
        out[...] = res
        return out
    return res


def tensordot(blas: CaptureBlas, a: Any, b: Any, axes: tuple) -> Any:
    """``numpy.tensordot(a, b, axes)`` (``axes`` a pair of axis lists) through :func:`matmul`."""
    ca, cb = [ax % a.ndim for ax in axes[0]], [ax % b.ndim for ax in axes[1]]
    fa = [i for i in range(a.ndim) if i not in ca]
    fb = [j for j in range(b.ndim) if j not in cb]
    k = prod(a.shape[i] for i in ca)
    am = a.transpose(fa + ca).reshape(prod(a.shape[i] for i in fa), k)
    bm = b.transpose(cb + fb).reshape(k, prod(b.shape[j] for j in fb))
    return matmul(blas, am, bm).reshape([a.shape[i] for i in fa] + [b.shape[j] for j in fb])
