"""The native CPU backend of :func:`tenferro.jit` (``backend="native"`` or ``"auto"``).

The optimized graph is split into runs of equations the native kernels cover
(:func:`._native_lower.classify`); each run becomes one machine-code call: a tape
of instructions (:func:`._native_lower.lower_segment`) walked by an interpreter
compiled with Numba together with the program's fused elementwise loops, calling
the generic kernels of :mod:`._native_kernels` (strided copies, sums, batched GEMM
through BLAS). Equations outside those runs keep their NumPy kernel
(:mod:`._kernels`), with the reason recorded in the :class:`CompileReport`.

Disk cache: the generated Numba source of a run depends only on its kernels (the
tape is data), so it is written to ``<cache>/tfn_<sha256 of the source>.py`` and
imported from there, with Numba's own cache (``cache=True``, beside that file):
a second process, or another program with the same kernels, loads machine code
instead of compiling (:mod:`._native_cache`: without preparing Numba's compiler).
``<cache>`` is ``$TENFERRO_JIT_CACHE`` or ``~/.cache/tenferro/jit-native``. A cached file
whose content is not the source its name hashes is written anew; where the directory
cannot be created or written, the run is compiled in memory (a note in the report).

Workspaces: one flat array per dtype and call, kept in a pool per region for the next
call (taken under a lock: threads may call one program); a large output is a view of its
workspace (not reused while the view lives), a small one a copy (:data:`VIEW_FRACTION`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import sys
import threading
import time
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tidu import paused_gc
from tidu.graph import Graph, Var

from .._tensor import Tensor
from ..files import atomic_write
from ._cost import eqn_flops, nbytes
from ._codegen import return_expressions
from ._kernels import kernel_for
from ._native_lower import WORKSPACE_DTYPES, Segment, classify, lower_segment

__all__ = ["CompileReport", "NativeRegion", "NumpyStep", "native_available", "generate_native", "cache_dir"]

NATIVE_AVAILABLE = importlib.util.find_spec("numba") is not None
"""Whether Numba (the ``fast`` extra) is installed; tests set it to ``False`` to
see the fallback."""


def native_available() -> bool:
    """Whether the native backend can run (Numba importable)."""
    return NATIVE_AVAILABLE


def cache_dir() -> str:
    """Where generated sources and Numba's machine code are kept."""
    return os.environ.get("TENFERRO_JIT_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "tenferro", "jit-native"
    )


@dataclass(frozen=True)
class NativeRegion:
    """A run of equations compiled to one native call: its equation indices (in the
    optimized graph, ``first`` to ``last``), how many equations, fused elementwise
    loops, GEMMs and strided copies/sums it became."""

    first: int
    last: int
    eqns: int
    fused_loops: int
    gemms: int
    copies: int


@dataclass(frozen=True)
class NumpyStep:
    """An equation left to its NumPy kernel: its index, primitive name and why."""

    index: int
    primitive: str
    reason: str


@dataclass(frozen=True)
class CompileReport:
    """How a program was compiled (``Lowered.compile_report()``, :func:`tenferro.jit.compile_report`).

    ``backend``: the backend asked for; ``native``: whether any region runs native
    code; ``reason``: why nothing does (``None`` when something does);
    ``compile_seconds``: generation and machine-code compilation (or cache load);
    ``cache_hits``: regions whose machine code came from the disk cache;
    ``regions``: the native regions; ``numpy_steps``: equations left to NumPy, each
    with its reason; ``reused_regions``: regions whose machine code this process had
    built already (for another program with the same kernels; not disk-cache hits);
    ``notes``: what else happened (the disk cache unusable: compiled in memory)."""

    backend: str
    native: bool
    reason: str | None
    compile_seconds: float
    cache_hits: int
    regions: tuple[NativeRegion, ...]
    numpy_steps: tuple[NumpyStep, ...]
    reused_regions: int = 0
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        lines = [
            f"backend={self.backend!r}: {'native' if self.native else 'NumPy'}"
            + (f" ({self.reason})" if self.reason else "")
            + f", compile {self.compile_seconds:.3f} s, {self.cache_hits} cached region(s)"
            + (f", {self.reused_regions} reused in this process" if self.reused_regions else "")
        ]
        lines += [f"  note: {n}" for n in self.notes]
        for r in self.regions:
            lines.append(
                f"  native eqns {r.first}-{r.last}: {r.eqns} eqns -> {r.fused_loops} fused loops, "
                f"{r.gemms} GEMMs, {r.copies} copies/sums"
            )
        for s in self.numpy_steps:
            lines.append(f"  NumPy eqn {s.index} ({s.primitive}): {s.reason}")
        return "\n".join(lines)


def numpy_report(backend: str, reason: str) -> CompileReport:
    """The report of a program compiled by the NumPy backend."""
    return CompileReport(backend, False, reason, 0.0, 0, (), ())


# --- machine code -------------------------------------------------------------------------
_CACHED_JIT = '_jit = numba.njit(cache=True, error_model="numpy", nogil=True)\n'
_MEMORY_JIT = '_jit = numba.njit(cache=False, error_model="numpy", nogil=True)\n'  # no cache directory
_HEADER = (
    '''"""Generated by tenferro.jit's native backend (do not edit: named by its content hash)."""
import numba
import numpy as np
from tenferro.jit._native_cache import load_without_refresh
from tenferro.jit._native_kernels import complex_div, complex_reciprocal, copy_strided, fill_zero, gemm
from tenferro.jit._native_kernels import mul_strided, sum_strided, tanh_real

'''
    + _CACHED_JIT
)
_MODULES: dict[str, Any] = {}  # content hash -> imported module (this process)


def _kernels_version() -> str:
    """A hash of :mod:`._native_kernels`' source and the Numba version: part of every
    generated source, so machine code cached against older kernels is never loaded."""
    version = importlib.metadata.version("numba") if NATIVE_AVAILABLE else ""
    with open(os.path.join(os.path.dirname(__file__), "_native_kernels.py"), "rb") as fh:
        return hashlib.sha256(fh.read() + version.encode()).hexdigest()[:16]


_KERNELS_VERSION = _kernels_version()


def _module_source(seg: Segment) -> str:
    parts = [_HEADER, f"# kernels {_KERNELS_VERSION}\n"]
    for name, body in seg.templates.items():
        parts.append(f"\n@_jit\ndef {name}(W0, W1, W2, W3, r):\n{body}\n")
    lines = ["\n@_jit", "def run(tape, W0, W1, W2, W3):", "    for k in range(tape.shape[0]):", "        r = tape[k]"]
    lines.append("        c = r[0]")
    for code, call in enumerate(seg.calls):
        lines.append(f"        {'if' if code == 0 else 'elif'} c == {code}:")
        lines.append(f"            {call}")
    lines.append("\n\nload_without_refresh(run)  # a cached run: its machine code, no compiler prepared")
    parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def _source_file(source: str, digest: str) -> str:
    """The path of ``source`` in the cache directory (created), written when absent or when
    what is there is not ``source`` (truncated, edited: named by its hash, it must be that
    content); ``OSError`` when the directory cannot be created or the file written."""
    folder = cache_dir()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"tfn_{digest}.py")
    try:
        with open(path, encoding="utf-8") as fh:
            intact = fh.read() == source
    except (OSError, UnicodeDecodeError):  # absent, unreadable, not text
        intact = False
    if not intact:  # otherwise never rewritten: Numba keys its cache on the file's mtime
        with atomic_write(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:  # the package's one writer
            fh.write(source)
    return path


def _load(source: str) -> tuple[Any, str, str | None]:
    """The module of ``source``, where its interpreter's machine code came from
    (``"reused"``: this process built it already; ``"disk"``: Numba's disk cache;
    ``"compiled"``) and a note (``None``, or why it was compiled in memory: a cache
    directory that cannot be created or written; then nothing is cached on disk)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    if digest in _MODULES:
        return _MODULES[digest], "reused", None
    name = f"tenferro_native_{digest}"
    note = None
    try:
        path = _source_file(source, digest)
    except OSError as exc:
        note = f"disk cache {cache_dir()!r} unusable ({type(exc).__name__}: {exc}); compiled in memory"
        module = types.ModuleType(name)
        exec(compile(source.replace(_CACHED_JIT, _MEMORY_JIT), f"<{name}>", "exec"), module.__dict__)
    else:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    # compile (or load) now, not at the first call; by signature, as a call would type its
    # arguments, but without a call's first step (Numba's scan of every installed package's
    # metadata for extensions: 30-80 ms, for types this code never has)
    args = (np.zeros((0, 1), np.int64), *(np.empty(0, d) for d in WORKSPACE_DTYPES))
    module.run.compile(tuple(module.numba.typeof(a) for a in args))
    origin = "disk" if sum(module.run.stats.cache_hits.values()) > 0 else "compiled"
    _MODULES[digest] = module
    return module, origin, note


POOL_SIZE = 2
"""Workspaces kept per native region for reuse (more only when outputs still view them)."""
VIEW_FRACTION = 8
"""An output of at least ``1/VIEW_FRACTION`` of its workspace is returned as a view of it (so a
kept output keeps at most this many times its size alive); a smaller one is copied."""


_POOL_LOCK = threading.Lock()
"""Held while a workspace is looked for in, taken from or given back to a pool: calls from
several threads share a region's pool."""


def _refs(pool: list, i: int) -> int:
    """References to ``pool[i]``, as :func:`_take` counts them."""
    return sys.getrefcount(pool[i])


_FREE = _refs([np.empty(1)], 0)
"""What :func:`_refs` counts for a workspace nothing but its pool refers to (measured here, as
the count differs between Python versions); an output viewing it, or a call still running
with it, is one more."""


def _take(pool: list, size: int, dtype: np.dtype) -> np.ndarray:
    """A workspace from ``pool`` that no output still views (nothing but the pool refers
    to it), else a new one; the pool keeps at most :data:`POOL_SIZE`."""
    with _POOL_LOCK:  # the check and the pop at once: no other call can take it in between
        for i in range(len(pool)):
            if _refs(pool, i) <= _FREE:
                return pool.pop(i)
        if len(pool) >= POOL_SIZE:
            pool.pop(0)
    return np.empty(size, dtype)


def _give(pool: list, workspace: np.ndarray) -> None:
    """Put ``workspace`` back into ``pool`` after a call (outputs may still view it)."""
    with _POOL_LOCK:
        pool.append(workspace)


def _segment_runner(seg: Segment, module: Any, tag: str) -> tuple[str, dict[str, Any]]:
    """Python source of the function calling one segment, and its globals."""
    env: dict[str, Any] = {"_run": module.run, "_np": np, f"_tape{tag}": seg.tape}
    args = ", ".join(f"x{i}" for i in range(len(seg.inputs)))
    lines = [f"def _seg{tag}({args}):"]
    ws_names = []
    for w, size in enumerate(seg.ws_sizes):
        if size == 0:  # no value of this dtype (or only empty ones)
            env[f"W{w}"] = np.empty(0, WORKSPACE_DTYPES[w])
            ws_names.append(f"W{w}")
            continue
        # workspaces are reused across calls (a fresh large one costs page faults each call)
        env["_take"], env["_give"], env[f"_dt{w}"], env[f"_pool{w}"] = _take, _give, WORKSPACE_DTYPES[w], []
        lines.append(f"    W{w} = _take(_pool{w}, {size}, _dt{w})")
        if seg.const_prefix[w] is not None:  # the program's constants, one copy
            env[f"_consts{tag}_{w}"] = seg.const_prefix[w]
            lines.append(f"    W{w}[:{seg.const_prefix[w].size}] = _consts{tag}_{w}")
        ws_names.append(f"W{w}")
    for i, (w, off, size) in enumerate(seg.input_slots):
        lines.append(f"    W{w}[{off}:{off + size}] = x{i}.reshape(-1, order='F')")
    lines.append(f"    _run(_tape{tag}, {', '.join(ws_names)})")
    outs = []
    for j, ((w, off, size), v) in enumerate(zip(seg.output_slots, seg.outputs)):
        env[f"_shape{tag}_{j}"] = tuple(v.aval.shape)
        view = f"W{w}[{off}:{off + size}].reshape(_shape{tag}_{j}, order='F')"
        # a large output is a view of its workspace (not reused while it lives), a small one a
        # copy: a view would keep the whole workspace alive (a scalar loss beside its gradient)
        outs.append(view if VIEW_FRACTION * size >= seg.ws_sizes[w] else f"{view}.copy(order='F')")
    lines.append(f"    out = ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    lines += [f"    _give(_pool{w}, W{w})" for w, size in enumerate(seg.ws_sizes) if size]
    lines.append("    return out")
    return "\n".join(lines) + "\n", env


def generate_native(
    graph: Graph, name: str, backend: str
) -> tuple[str, Callable[..., list], CompileReport, float, int]:
    """The straight-line Python program of ``graph`` with native regions: its source,
    function, report, flop and peak-byte estimates (the collector paused meanwhile:
    ``tidu.paused_gc``)."""
    with paused_gc():
        return _generate(graph, name, backend)


def _generate(graph: Graph, name: str, backend: str) -> tuple[str, Callable[..., list], CompileReport, float, int]:
    t0 = time.perf_counter()
    eqns = list(graph.eqns)
    reasons = [classify(e) for e in eqns]
    names: dict[Var, str] = {}
    env: dict[str, Any] = {"_W": Tensor._wrap, "_errstate": np.errstate}
    head = []
    for i, v in enumerate(graph.invars):
        names[v] = f"a{i}"
        head.append(f"a{i} = x{i}._data")
    const_values: dict[Var, Any] = {}
    for i, (v, c) in enumerate(zip(graph.constvars, graph.consts)):
        names[v] = f"c{i}"
        env[f"c{i}"] = c._data if type(c) is Tensor else c
        if isinstance(env[f"c{i}"], np.ndarray) and env[f"c{i}"].dtype in WORKSPACE_DTYPES:
            const_values[v] = env[f"c{i}"]
    for n, e in enumerate(eqns):
        for j, o in enumerate(e.outputs):
            names[o] = f"v{n}" if len(e.outputs) == 1 else f"v{n}_{j}"
    last_read: dict[Var, int] = {}
    for n, e in enumerate(eqns):
        for v in e.inputs:
            last_read[v] = n
    returned = {v for v in graph.outvars if type(v) is Var}

    body: list[str] = []
    regions: list[NativeRegion] = []
    numpy_steps: list[NumpyStep] = []
    hits, reused, quiet = 0, 0, False
    failure: str | None = None
    notes: list[str] = []
    n = 0
    while n < len(eqns):
        if reasons[n] is not None:
            k = kernel_for(eqns[n], str(n), True)
            env.update(k.env)
            quiet |= k.quiet
            outs = [names[o] for o in eqns[n].outputs]
            comma = "," if len(outs) == 1 and eqns[n].prim.multiple_results else ""
            body.append(f"{', '.join(outs)}{comma} = {k.expr.format(*[names[v] for v in eqns[n].inputs])}")
            numpy_steps.append(NumpyStep(n, eqns[n].prim.name, reasons[n]))
            n += 1
            continue
        m = n
        while m < len(eqns) and reasons[m] is None:
            m += 1
        run = eqns[n:m]
        defined = {o for e in run for o in e.outputs}
        read = list(dict.fromkeys(v for e in run for v in e.inputs if v not in defined))
        consts = [(v, const_values[v]) for v in read if v in const_values]
        inputs = [v for v in read if v not in const_values]
        outputs = [o for e in run for o in e.outputs if o in returned or last_read.get(o, -1) >= m]
        try:
            seg = lower_segment(list(range(n, m)), run, inputs, outputs, consts)
            module, origin, note = _load(_module_source(seg))
        except Exception as exc:  # a run Numba cannot compile stays with NumPy, the reason recorded
            text = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
            failure = f"{type(exc).__name__}: {text}"
            for q in range(n, m):
                reasons[q] = f"native compilation of eqns {n}-{m - 1} failed ({failure})"
            continue
        hits += origin == "disk"
        reused += origin == "reused"
        if note is not None and note not in notes:
            notes.append(note)
        tag = str(len(regions))
        src, seg_env = _segment_runner(seg, module, tag)
        exec(compile(src, f"<tenferro.jit native segment {tag}>", "exec"), seg_env)
        env[f"_seg{tag}"] = seg_env[f"_seg{tag}"]
        outs = [names[o] for o in outputs]
        if outs:
            body.append(f"{', '.join(outs)}, = _seg{tag}({', '.join(names[v] for v in inputs)})")
        regions.append(NativeRegion(n, m - 1, m - n, seg.fused_loops, seg.gemms, seg.copies))
        n = m

    rets = return_expressions(graph, names, env)
    params = ", ".join(f"x{i}" for i in range(len(graph.invars)))
    indent = "        " if quiet else "    "
    lines = [f"def {name}({params}):"] + ["    " + h for h in head]
    if quiet:
        lines.append("    with _errstate(all='ignore'):")
    lines += [indent + b for b in body]
    lines.append(indent + f"return [{', '.join(rets)}]")
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<tenferro.jit native {name}>", "exec"), env)
    flops = sum(eqn_flops(e) for e in eqns)
    peak = sum(nbytes(v.aval) for v in graph.invars) + sum(nbytes(o.aval) for e in eqns for o in e.outputs)
    if regions:
        reason = None
    elif failure is not None:
        reason = f"native compilation failed: {failure}"
    else:
        reason = "no equation has a native kernel"
    report = CompileReport(
        backend,
        bool(regions),
        reason,
        time.perf_counter() - t0,
        hits,
        tuple(regions),
        tuple(numpy_steps),
        reused,
        tuple(notes),
    )
    return source, env[name], report, flops, peak
