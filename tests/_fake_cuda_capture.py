"""Stream capture for the fake CuPy (``tests/_fake_cupy.py``): streams, events,
the capture's recording, graphs that re-execute it on launch, memory pools.

The fake's dispatch points record each operation issued on a capturing current
stream as ``(fn, args, kwargs, out)``: ``fn`` takes NumPy arrays, ``args`` and
``kwargs`` hold the device wrappers it read, ``out`` the wrappers it returned.
:meth:`Stream.end_capture` rebinds every recorded output to garbage (a capture
computes nothing) and :meth:`Graph.launch` runs the recording again, reading the
wrappers' current arrays and rebinding the outputs to the new results. See the
module docstring of ``_fake_cupy`` for what this catches.
"""

from __future__ import annotations

import contextlib
import itertools
import weakref
from typing import Any, Self

import numpy as np


def _is_wrapper(x: Any) -> bool:
    """A fake device array (``_fake_cupy.ndarray``)."""
    return type(x).__module__ == "cupy" and hasattr(x, "_a")


def _current(x: Any) -> Any:
    """The arrays a recorded argument holds now (wrappers replaced by their arrays)."""
    if _is_wrapper(x):
        return x._a
    if isinstance(x, (list, tuple)):
        return type(x)(_current(v) for v in x)
    if isinstance(x, dict):
        return {k: _current(v) for k, v in x.items()}
    return x


class CUDARuntimeError(RuntimeError):
    """``cupy.cuda.runtime.CUDARuntimeError``."""

    def __init__(self, status: int, name: str) -> None:
        self.status = status
        super().__init__(f"{name}: operation not permitted when stream is capturing (fake CuPy)")


class _Capture:
    """An ongoing stream capture: the recording and its state."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.ops: list[tuple] = []
        self.invalidated: BaseException | None = None
        self.pools: set = set()  # the allocators current while recording
        self.default_pool_used = False


_CAPTURE: list[_Capture | None] = [None]
_ALLOCATORS: list[Any] = [None]  # None: CuPy's default pool


def _recording() -> _Capture | None:
    """The capture that records operations issued now (on the current stream), if any."""
    cap = _CAPTURE[0]
    return cap if cap is not None and _current_stream() is cap.stream else None


def _refuse_in_capture(what: str) -> None:
    """A host synchronization during capture: CUDA refuses it and invalidates the capture."""
    cap = _CAPTURE[0]
    if cap is not None:
        err = CUDARuntimeError(900, f"cudaErrorStreamCaptureUnsupported ({what})")
        cap.invalidated = err
        raise err


def _rebind(recorded: Any, new: Any) -> None:
    """Point the output wrappers of a recorded operation at its new results."""
    if _is_wrapper(recorded):
        recorded._a = new if type(new) is np.ndarray else np.asarray(new)
    elif isinstance(recorded, (tuple, list)):
        for r, n in zip(recorded, new):
            _rebind(r, n)


def _poison(recorded: Any) -> None:
    """A capture computes nothing: its outputs hold garbage until the graph is launched."""
    if _is_wrapper(recorded):
        a = recorded._a
        bad = np.empty_like(a)
        if bad.dtype.kind in "fc":
            bad.fill(np.nan)
        elif bad.dtype.kind == "b":
            bad.fill(True)
        elif bad.size:
            bad.fill(np.iinfo(bad.dtype).max if bad.dtype.kind in "iu" else 0)
        recorded._a = bad
    elif isinstance(recorded, (tuple, list)):
        for r in recorded:
            _poison(r)


# ---------------------------------------------------------------------------
# streams, stream capture, graphs, memory pools
# ---------------------------------------------------------------------------
_PTRS = itertools.count(16)


class Event:
    """``cupy.cuda.Event``: work is done in order here, so every event is complete."""

    done = True

    def synchronize(self) -> None:
        _refuse_in_capture("an event synchronization")


class Stream:
    """``cupy.cuda.Stream``: ``with s:`` makes it current; it can capture a graph."""

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False) -> None:
        self.ptr = 0 if null else next(_PTRS)
        self.non_blocking = non_blocking

    def __enter__(self) -> Self:
        _STREAMS.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _STREAMS.pop()

    def record(self, event: Event | None = None) -> Event:
        return event or Event()

    def wait_event(self, event: Event) -> None:
        return None

    def synchronize(self) -> None:
        _refuse_in_capture("a stream synchronization")

    def begin_capture(self, mode: Any = None) -> None:
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if _CAPTURE[0] is not None:
            raise CUDARuntimeError(900, "cudaErrorStreamCaptureUnsupported (a capture is under way)")
        _CAPTURE[0] = _Capture(self)

    def is_capturing(self) -> bool:
        cap = _CAPTURE[0]
        if cap is not None and cap.stream is self and cap.invalidated is not None:
            raise RuntimeError("the stream was capturing, but an error has invalidated the capture sequence")
        return cap is not None and cap.stream is self

    def end_capture(self) -> Graph:
        cap = _CAPTURE[0]
        if cap is None or cap.stream is not self:
            raise CUDARuntimeError(400, "cudaErrorIllegalState (the stream is not capturing)")
        _CAPTURE[0] = None
        if cap.invalidated is not None:
            raise CUDARuntimeError(901, "cudaErrorStreamCaptureInvalidated")
        for op in cap.ops:
            _poison(op[3])
        return Graph(cap)


_STREAMS: list[Stream] = []
Stream.null = Stream(null=True)


def _current_stream() -> Stream:
    return _STREAMS[-1] if _STREAMS else Stream.null


def get_current_stream(device_id: int = -1) -> Stream:
    return _current_stream()


class Graph:
    """``cupy.cuda.graph.Graph``: launching re-executes the recorded operations."""

    def __init__(self, cap: _Capture) -> None:
        self._ops = cap.ops
        self._pools = [weakref.ref(getattr(p, "__self__", p)) for p in cap.pools]
        self._default_pool_used = cap.default_pool_used
        self.launches = 0

    def launch(self, stream: Stream | None = None) -> None:
        if _CAPTURE[0] is not None:
            raise CUDARuntimeError(900, "cudaErrorStreamCaptureUnsupported (a graph launch during capture)")
        if self._default_pool_used:
            raise RuntimeError(
                "fake CuPy: this graph was captured under the default memory pool, which may hand "
                "its freed buffers to other allocations while it replays; capture under "
                "cupy.cuda.using_allocator(private_pool.malloc)"
            )
        if any(ref() is None for ref in self._pools):
            raise RuntimeError("fake CuPy: the memory pool this graph was captured in was freed")
        for fn, args, kwargs, out in self._ops:
            _rebind(out, fn(*_current(args), **_current(kwargs)))
        self.launches += 1


class MemoryPool:
    """``cupy.cuda.MemoryPool`` (the fake allocates with NumPy; this only marks a pool)."""

    def malloc(self, nbytes: int) -> Any:
        return None

    def used_bytes(self) -> int:
        return 0

    def free_all_blocks(self) -> None:
        return None


@contextlib.contextmanager
def using_allocator(allocator: Any = None) -> Any:
    """``cupy.cuda.using_allocator``: operations inside record which pool they used."""
    _ALLOCATORS.append(allocator)
    try:
        yield
    finally:
        _ALLOCATORS.pop()


# ---------------------------------------------------------------------------
# cuBLAS called directly during capture (tenferro._capture_blas), emulated
# ---------------------------------------------------------------------------
def emulated_gemm(
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
    """``cublas<t>gemm[StridedBatched]`` on fake device arrays, from the same arguments: each
    operand read as column-major matrices through its first element, leading dimension and
    batch stride (so a wrong ``ld``, op or stride gives a wrong product, or reads out of the
    operand's own elements). Recorded like any operation while a capture is under way."""

    def run(a_np: np.ndarray, b_np: np.ndarray, c_np: np.ndarray) -> np.ndarray:
        out = c_np.copy()
        item = out.itemsize

        def mat(x: np.ndarray, rows: int, cols: int, ld: int, stride: int, op: int) -> np.ndarray:
            assert ld >= max(1, rows), f"leading dimension {ld} < rows {rows} (cuBLAS: invalid value)"
            last = stride * (batch - 1) + (cols - 1) * ld + rows - 1  # the last element read
            extent = sum((d - 1) * st for d, st in zip(x.shape, x.strides)) // item
            assert last <= extent, f"reads element {last} of an operand that ends at {extent}"
            v = np.lib.stride_tricks.as_strided(x, shape=(batch, rows, cols), strides=(stride * item, item, ld * item))
            return v.transpose(0, 2, 1) if op else v

        opa = mat(a_np, *((m, k) if ta == 0 else (k, m)), lda, sa, ta)
        opb = mat(b_np, *((k, n) if tb == 0 else (n, k)), ldb, sb, tb)
        cm = mat(out, m, n, ldc, sc, 0)
        cm[...] = alpha * (opa @ opb) + (beta * cm if beta else 0)
        return out

    cap = _recording()
    if cap is not None:
        cap.ops.append((run, (a, b, c), {}, c))
    c._a = run(a._a, b._a, c._a)
