"""CUDA graphs: a compiled program on a GPU captured once and replayed.

A program whose values all live on one GPU runs its first call as generated
(:mod:`._codegen`: one CuPy call per equation, each a kernel launch paid in
Python). The second call captures it into a CUDA graph with CuPy's stream
capture, and every later call replays that graph:

* **Static buffers.** The graph reads and writes fixed addresses. The capture
  allocates one F-ordered device buffer per input (its shape and dtype); the
  outputs of the captured run are the static outputs. A replay copies the
  caller's inputs into the static inputs (device to device), launches the graph
  and returns fresh copies of the static outputs, so the results of two calls
  never alias. **A replay costs the input copies + one graph launch + the output
  copies**, whatever the number of kernels in the program. An output that is an
  input (``f(x) = x``) is returned as the caller's tensor, as uncaptured.
* **A private memory pool.** Intermediates the capture frees go back to a pool;
  handed to another allocation, they would be overwritten while the graph
  replays. So the warm-up run and the capture allocate from a
  ``cupy.cuda.MemoryPool()`` of the program's own (``cupy.cuda.using_allocator``),
  kept alive as long as the graph (the program holds its peak memory for as long
  as it is cached).
* **Streams.** The warm-up and the capture run on a fresh non-blocking stream,
  after the caller's current stream (an event), and under the private pool: the
  warm-up compiles and loads the kernels and leaves the pool holding every block
  the capture will ask for, so nothing is compiled or ``cudaMalloc``-ed during
  capture. Replays run on the caller's current stream (input copies, launch,
  output copies, in stream order, no host synchronization); a replay from another
  stream than the last one first waits for the last one (the static buffers are
  shared).
* **Fallback.** Anything that cannot be captured ends the capture cleanly and
  makes the program run uncaptured from then on, with one
  :class:`GraphCaptureWarning` per program naming the reason: a host read
  (linalg's NaN/``info`` checks, ``float()``), a library CuPy does not let capture
  (cuSOLVER), any CUDA error raised during capture. The results are the same either
  way (to rounding where products take the route below).
* **Contractions.** CuPy 13 and 14 refuse every cuBLAS call while capturing
  (``NotImplementedError: calling cuBLAS API during stream capture is currently
  unsupported``; seen on an H100 with CuPy 14.2, also for the ``geam`` transpose inside
  ``asfortranarray``). So the warm-up and the capture run inside
  :func:`tenferro._capture_blas.capture_scope`: matrix products call cuBLAS directly
  through ctypes (a handle of tenferro's own, set to the capture stream, with a
  workspace allocated in the private pool during the warm-up and kept with the graph),
  and column-major copies use an elementwise kernel (``tenferro._aval.fortran``).
* **Switch.** ``tenferro.jit(f, cuda_graph=False)``, or the environment variable
  ``TENFERRO_CUDA_GRAPH=0`` (read when a program is compiled). CPU programs never
  get a runner: their call is the generated function itself.

What this relies on from CuPy (13/14, ``cupy.cuda``; CUDA's stream-capture rules):
``Stream(non_blocking=True)``; ``with stream:`` makes it current;
``stream.begin_capture(mode)`` (default mode: relaxed; here thread-local, so that
an unsafe call in this thread, e.g. a synchronous copy, fails the capture instead
of running outside the graph) and ``stream.end_capture()`` returning a
``cupy.cuda.graph.Graph`` whose ``launch(stream)`` may run on any stream; work
queued during capture is recorded, not executed; a capture invalidated by an
illegal call must still be ended (``end_capture`` then raises, which is
ignored); ``stream.record()``/``wait_event``; ``get_current_stream()``;
``MemoryPool().malloc`` under ``using_allocator`` (thread-local); CuPy's pool
keeps freed blocks per stream, hence the warm-up on the capture stream.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from tidu.graph import Graph, Var

from .._capture_blas import CaptureBlas, capture_scope
from .._placement import import_cupy
from .._tensor import Tensor

__all__ = ["ENV", "CudaGraphRunner", "CudaGraphState", "GraphCaptureWarning", "capture_enabled", "graph_runner"]

ENV = "TENFERRO_CUDA_GRAPH"
"""Environment variable: ``0``/``false``/``off``/``no`` switches capture off for programs compiled afterwards."""
CAPTURE_AT_CALL = 2
"""The call that captures: earlier calls run uncaptured (a program called once pays no capture)."""


class GraphCaptureWarning(UserWarning):
    """A compiled GPU program could not be captured into a CUDA graph (a host read,
    a library that refuses capture, a CUDA error); it runs uncaptured from then on,
    with the same results. Warned once per program."""


class CudaGraphState(NamedTuple):
    """Where a program stands with CUDA graphs (``Lowered.cuda_graph``).

    ``state``: ``"off"`` (a CPU program, switched off, or values on more than one
    device), ``"pending"`` (not captured yet: it captures at call
    :data:`CAPTURE_AT_CALL`), ``"captured"`` (calls replay the graph) or
    ``"uncaptured"`` (capture failed; runs as generated). ``captures``: graphs
    captured (at most one); ``replays``: calls served by the graph; ``reason``:
    why it is off or uncaptured.
    """

    state: str
    captures: int
    replays: int
    reason: str | None


def capture_enabled() -> bool:
    """False when :data:`ENV` says off."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "off", "no")


def _device(graph: Graph) -> int | str:
    """The GPU every value of ``graph`` lives on, or why there is none."""
    avals = [v.aval for v in graph.invars] + [v.aval for v in graph.constvars]
    avals += [o.aval for e in graph.eqns for o in e.outputs]
    devices = {getattr(getattr(a, "placement", None), "device", None) for a in avals}
    if devices == {None}:
        return "the program runs on the CPU"
    if len(devices) != 1 or None in devices:
        return "its values live on more than one device (or on the host and a device)"
    return devices.pop()


def _end_quietly(stream: Any) -> None:
    """End a capture that failed (an invalidated capture raises on ending: ignored)."""
    try:
        stream.end_capture()
    except Exception:  # noqa: BLE001, S110  (CUDA reports the invalidation it already raised for)
        pass


def _why(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


class CudaGraphRunner:
    """Calls ``fn`` (a generated program over tensors on GPU ``device``), capturing
    it into a CUDA graph at call :data:`CAPTURE_AT_CALL` and replaying the graph
    after. ``returns_input[j]``: output ``j`` is input ``returns_input[j]`` itself
    (``None``: a computed value). Not for concurrent use from several threads
    (a lock orders the host side; results stay right, calls serialize)."""

    def __init__(self, fn: Callable[..., list], name: str, device: int, returns_input: Sequence[int | None]):
        self.fn = fn
        self.name = name
        self.device = device
        self.returns_input = tuple(returns_input)
        self.state = "pending"
        self.reason: str | None = None
        self.calls = 0
        self.captures = 0
        self.replays = 0
        self._lock = threading.RLock()  # reentrant: a capture that finds the graph made meanwhile replays it
        self._cp: Any = None
        self._graph: Any = None
        self._pool: Any = None
        self._stream: Any = None
        self._static_in: list = []
        self._static_out: list = []
        self._last: Any = None  # the stream of the last replay
        self._blas: Any = None  # the capture's cuBLAS route (its workspace lives with the graph)

    def info(self) -> CudaGraphState:
        return CudaGraphState(self.state, self.captures, self.replays, self.reason)

    def __call__(self, *args: Any) -> list:
        if self.state == "captured":
            return self._replay(args)
        if self.state == "pending":
            self.calls += 1
            if self.calls >= CAPTURE_AT_CALL:
                return self._capture(args)
        return self.fn(*args)

    # ---- capture ------------------------------------------------------------------
    def _capture(self, args: tuple) -> list:
        if any(type(x) is not Tensor for x in args):  # not a plain call: stay uncaptured for this one
            return self.fn(*args)
        cp = import_cupy("tenferro.jit (CUDA graph)")
        with self._lock, cp.cuda.Device(self.device):
            if self.state != "pending":  # another thread captured (or gave up) meanwhile
                return self._replay(args) if self.state == "captured" else self.fn(*args)
            caller = cp.cuda.get_current_stream()
            stream = cp.cuda.Stream(non_blocking=True)
            pool = cp.cuda.MemoryPool()
            stream.wait_event(caller.record())
            blas = make_capture_blas(cp, stream.ptr, self.device)
            try:
                with stream, cp.cuda.using_allocator(pool.malloc), capture_scope(blas):
                    static_in = [cp.empty(x._data.shape, x._data.dtype, order="F") for x in args]
                    for buf, x in zip(static_in, args):
                        buf[...] = x._data
                    inputs = [Tensor._wrap(b) for b in static_in]
                    self.fn(*inputs)  # warm-up: kernels compiled, the pool holds the blocks; result dropped
            except Exception as exc:  # noqa: BLE001  (the call itself tells whether it is the caller's error)
                caller.wait_event(stream.record())
                outs = self.fn(*args)
                self._fall_back(f"its warm-up run raised {_why(exc)}")
                return outs
            mode = getattr(cp.cuda.runtime, "streamCaptureModeThreadLocal", None)
            try:
                with stream, cp.cuda.using_allocator(pool.malloc), capture_scope(blas):
                    stream.begin_capture(mode)
                    try:
                        outs = self.fn(*inputs)
                    except BaseException:
                        _end_quietly(stream)
                        raise
                    graph = stream.end_capture()
            except Exception as exc:  # noqa: BLE001  (host reads, refused libraries, CUDA errors)
                caller.wait_event(stream.record())
                self._fall_back(_why(exc))
                return self.fn(*args)
            self._cp, self._graph, self._pool, self._stream = cp, graph, pool, stream
            self._blas = blas  # its workspace, which the captured products use
            self._static_in = static_in
            self._static_out = [o._data if type(o) is Tensor else o for o in outs]
            self.state = "captured"
            self.captures += 1
            caller.wait_event(stream.record())  # the static buffers were last written on the capture stream
            self._last = caller
        return self._replay(args)

    def _fall_back(self, reason: str) -> None:
        self.state, self.reason = "uncaptured", reason
        self._graph = self._pool = self._stream = self._blas = None
        self._static_in, self._static_out = [], []
        warnings.warn(
            f"tenferro.jit({self.name}): the program cannot be captured into a CUDA graph ({reason}); it runs "
            "uncaptured from now on, with the same results. Pass cuda_graph=False to tenferro.jit (or set "
            f"{ENV}=0) to skip the attempt.",
            GraphCaptureWarning,
            stacklevel=6,
        )

    # ---- replay --------------------------------------------------------------------
    def _replay(self, args: tuple) -> list:
        cp = self._cp
        with self._lock, cp.cuda.Device(self.device):
            stream = cp.cuda.get_current_stream()
            if stream.ptr != self._last.ptr:  # the static buffers are shared: order after the last replay
                stream.wait_event(self._last.record())
                self._last = stream
            for buf, x in zip(self._static_in, args):
                buf[...] = x._data
            self._graph.launch(stream)
            outs = [
                args[i] if i is not None else None if o is None else Tensor._wrap(o.copy(order="K"))
                for i, o in zip(self.returns_input, self._static_out)
            ]
            self.replays += 1
        return outs


def make_capture_blas(cp: Any, stream_ptr: int, device: int) -> CaptureBlas | None:
    """The cuBLAS route of a capture on ``stream_ptr`` (:mod:`tenferro._capture_blas`), or None
    where cuBLAS cannot be reached through ctypes (then CuPy's own products run, and refuse
    capture). Its workspace comes from the allocator current at its first product: the warm-up
    run's private pool."""
    try:
        return CaptureBlas(cp, stream_ptr, device)
    except (OSError, AttributeError, RuntimeError):
        return None


def graph_runner(
    graph: Graph, fn: Callable[..., list], name: str, enabled: bool = True
) -> tuple[CudaGraphRunner | None, str | None]:
    """The runner of ``fn`` (the program of ``graph``), or ``None`` and why not:
    capture switched off, a CPU program, values on several devices."""
    where = _device(graph)
    if isinstance(where, str):
        return None, where
    if not enabled:
        return None, "switched off (tenferro.jit(..., cuda_graph=False))"
    if not capture_enabled():
        return None, f"switched off ({ENV}={os.environ.get(ENV)})"
    returns_input = [graph.invars.index(v) if type(v) is Var and v in graph.invars else None for v in graph.outvars]
    return CudaGraphRunner(fn, name, where, returns_input), None
