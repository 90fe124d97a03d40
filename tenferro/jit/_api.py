"""``tenferro.jit``: trace once per signature, optimize the graph, replay compiled code.

The framework-independent half (signature keys, the LRU cache, retrace warnings,
composition with tidu's transformations through the ``call`` primitive) is
:class:`tidu._staging.StagedFunction`; this module supplies tenferro's compiler:
inline nested calls, run the passes (:func:`._optimize.optimize`), generate a
straight-line function (:mod:`._codegen`), captured into a CUDA graph on a GPU
(:mod:`._cuda_graph`).
"""

from __future__ import annotations

import enum
import os
import re
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from tidu import CacheInfo, Graph, InvalidArgumentError, RetraceWarning, StagedFunction, StagingError, inline_calls

from .._creation import asarray
from .._dtypes import DType
from .._placement import Placement, get_default_placement
from ..linalg._config import snapshot as linalg_settings
from .._errors import TenferroError
from ..random import _FROZEN_DRAW_FIX
from .._tensor import Tensor
from ._codegen import Program, _on_cpu, generate
from ._cuda_graph import CudaGraphState, GraphCaptureWarning
from ._donation import DeletedTensorError, DonationWarning, is_deleted, run_donating
from ._native import CompileReport, generate_native, native_available, numpy_report
from ._optimize import optimize

__all__ = [
    "jit",
    "JitFunction",
    "Lowered",
    "JitError",
    "JitArgumentError",
    "DeletedTensorError",
    "DonationWarning",
    "RetraceWarning",
    "GraphCaptureWarning",
    "CudaGraphState",
    "CacheInfo",
    "compile_graph",
    "compile_report",
    "CompileReport",
    "is_deleted",
    "BACKENDS",
]

BACKENDS = ("numpy", "native", "auto")
"""The backends of :func:`jit`: generated Python calling NumPy; machine code through
Numba (the ``fast`` extra) where the kernels cover the program; ``auto``: native
when Numba is installed, silently NumPy otherwise."""


class JitError(StagingError, TenferroError):
    """Misuse of :func:`tenferro.jit` (a tidu :class:`StagingError` and a :class:`TenferroError`):
    Python control flow on a traced value, an argument or output that is no array, ..."""


class JitArgumentError(JitError, InvalidArgumentError):
    """Invalid arguments of :func:`tenferro.jit` itself (``static_argnums``,
    ``static_argnames``, ``donate_argnums``, ``donate_argnames``, ``maxsize``, the
    function); also a ``ValueError`` and a tidu :class:`InvalidArgumentError`."""


def _identifier(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "f_" + s


def compile_graph(
    graph: Graph,
    *,
    donate: tuple[bool, ...] = (),
    name: str = "compiled",
    cuda_graph: bool = True,
    backend: str = "numpy",
) -> Program:
    """The compiler: inline nested calls, optimize, generate code (captured into
    a CUDA graph on a GPU unless ``cuda_graph`` is false; machine code for the CPU
    with ``backend="native"``/``"auto"`` when Numba is installed)."""
    optimized = optimize(inline_calls(graph))
    if backend == "numpy":
        return generate(optimized, donate, _identifier(name), cuda_graph)
    reason = None
    if not _on_cpu(optimized):
        reason = "the program is not on the CPU"
    elif not native_available():
        reason = "Numba is not installed (pip install 'tidu-tenferro[fast]')"
        if backend == "native":
            warnings.warn(f"tenferro.jit(backend='native'): {reason}; using the NumPy backend", stacklevel=4)
    if reason is not None:
        program = generate(optimized, donate, _identifier(name), cuda_graph)
        program.report = numpy_report(backend, reason)
        return program
    source, fn, report, flops, peak = generate_native(optimized, _identifier(name), backend)
    if backend == "native" and not report.native and optimized.eqns:
        warnings.warn(f"tenferro.jit(backend='native'): {report.reason}; using the NumPy backend", stacklevel=4)
    program = Program(optimized, source, fn, flops, peak, 0, {}, None, "the program runs on the CPU")
    program.report = report
    program.writes_inputs = False  # a donated argument is consumed as it is, never copied
    return program


def _to_leaf(x: Any) -> Any:
    """User arrays (NumPy, CuPy, anything ``asarray`` accepts that is an array) become tensors."""
    if type(x) is Tensor:
        return None
    if isinstance(x, np.ndarray) or hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__"):
        return asarray(x)
    return None


def _static_leaf(x: Any) -> bool:
    """Static argument leaves (keyed by value) besides Python scalars and strings:
    NumPy scalars, dtypes (tenferro's and NumPy's), placements and enum members. A
    NumPy scalar output is returned as it is, as a Python scalar is."""
    return isinstance(x, (np.generic, np.dtype, DType, Placement, enum.Enum))


_RNG_STATE = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def _refuse(x: Any) -> str | None:
    """Why ``x`` can be no argument of a compiled function: a NumPy random generator
    (also inside a tuple or frozenset). Its state would be read once, while tracing:
    every call would replay the first call's numbers."""
    if isinstance(x, _RNG_STATE):
        return (
            f"a numpy.random.{type(x).__name__}: a compiled function reads it only while "
            "tracing, so the numbers drawn from it would be frozen into the program and every later "
            f"call would repeat them (the generator would not advance). {_FROZEN_DRAW_FIX}"
        )
    if isinstance(x, (tuple, frozenset)):
        for e in x:
            reason = _refuse(e)
            if reason:
                return reason
    return None


def _context() -> tuple:
    """Ambient settings a trace depends on: the default placement (where creation
    functions put tensors) and ``tenferro.linalg``'s settings (read by derivative
    rules when they are traced)."""
    return get_default_placement(), linalg_settings()


class JitFunction(StagedFunction):
    """A function compiled by :func:`jit`. Call it like the original function.

    ``cache_info()`` reports hits, misses, traces and size; ``lower(*args)`` traces
    (or looks up) the program for these arguments and returns a :class:`Lowered`
    for inspection. ``cuda_graph``: programs on a GPU are captured into CUDA graphs.
    """

    def __init__(
        self,
        fun: Callable[..., Any],
        *,
        static_argnums: Any = None,
        static_argnames: Any = None,
        donate_argnums: Any = None,
        donate_argnames: Any = None,
        maxsize: int | None = 64,
        cuda_graph: bool = True,
        backend: str | None = None,
    ):
        if type(cuda_graph) is not bool:
            raise JitArgumentError(f"tenferro.jit: cuda_graph must be True or False, got {cuda_graph!r}")
        if backend is None:
            backend = os.environ.get("TENFERRO_JIT_BACKEND") or "numpy"
        if backend not in BACKENDS:
            raise JitArgumentError(
                f"tenferro.jit: backend must be one of {', '.join(map(repr, BACKENDS))}, got {backend!r}"
            )
        self.cuda_graph = cuda_graph
        self.backend = backend
        super().__init__(
            fun,
            self._compile,
            to_leaf=_to_leaf,
            static_leaf=_static_leaf,
            value_types=Tensor,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            maxsize=maxsize,
            what="tenferro.jit",
            error=JitError,
            arg_error=JitArgumentError,
            context=_context,
            donor=run_donating,
            refuse=_refuse,
        )

    def _compile(self, graph: Graph, donate: tuple[bool, ...] = ()) -> Program:
        return compile_graph(graph, donate=donate, name=self.__name__, cuda_graph=self.cuda_graph, backend=self.backend)

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        graph, program, _ = self.entry(*args, **kwargs)
        return Lowered(graph, program)

    def __repr__(self) -> str:
        return f"<tenferro.jit of {self.__qualname__}>"


class Lowered:
    """The traced and compiled program of a :class:`JitFunction` for one signature."""

    __slots__ = ("_graph", "_program")

    def __init__(self, graph: Graph, program: Program):
        self._graph = graph
        self._program = program

    def as_text(self, optimized: bool = True) -> str:
        """The graph, readable like a jaxpr: after the passes, or before them."""
        return str(self._program.graph if optimized else self._graph)

    def source(self) -> str:
        """The generated Python function."""
        return self._program.source

    def cost(self) -> dict[str, float]:
        """Estimates for one call: ``flops``, ``peak_bytes`` (live values at the
        busiest point, arguments included), ``eqns`` (after the passes),
        ``eqns_before`` and ``reused_buffers`` (outputs written into dead inputs)."""
        return {
            "flops": self._program.flops,
            "peak_bytes": self._program.peak_bytes,
            "eqns": len(self._program.graph.eqns),
            "eqns_before": len(self._graph.eqns),
            "reused_buffers": self._program.reused_buffers,
        }

    def compile_report(self) -> CompileReport:
        """How the program was compiled: backend, native regions, the equations left to
        NumPy and why, compile time (:class:`CompileReport`)."""
        report = self._program.report
        return report if report is not None else numpy_report("numpy", "the NumPy backend was chosen")

    @property
    def cuda_graph(self) -> CudaGraphState:
        """The program's CUDA graph: ``state`` (``"off"``, ``"pending"``,
        ``"captured"``, ``"uncaptured"``), ``captures``, ``replays``, ``reason``."""
        return self._program.cuda_graph

    def __repr__(self) -> str:
        c = self.cost()
        return f"<Lowered: {c['eqns_before']} -> {c['eqns']} eqns, {c['flops']:.3g} flops>"


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    maxsize: int | None = 64,
    cuda_graph: bool = True,
    backend: str | None = None,
) -> Any:
    """Compile ``fun``: trace it once per signature, optimize, replay compiled code.

    JAX's names and meaning. The signature is the pytree structure of the
    arguments, the shape, dtype and placement of every tensor (NumPy arrays are
    converted), the values of static arguments and of Python and NumPy scalars (a
    scalar argument is static: pass a 0-d tensor to avoid retracing on new
    values). Static and donated arguments may be named by position or by name;
    each is completed from the other through ``fun``'s signature. Donated
    arguments are consumed: the program may write into their buffers and the
    tensors are deleted after the call (:class:`DeletedTensorError` on any later
    use); a buffer that is not exclusively owned is copied instead
    (:class:`DonationWarning`). ``maxsize`` bounds the signature cache (``None``:
    unbounded). Bad settings raise :class:`JitArgumentError` here. Works under
    and around tidu's transformations: ``jit(grad(f))``, ``grad(jit(f))``,
    ``jit(jit(f))``, to any depth. Usable as ``@jit`` or ``@jit(static_argnums=...)``.

    On a GPU a program is captured into a CUDA graph at its second call and
    replayed after (a replay: copy the inputs in, launch the graph, copy the
    outputs out); a program that cannot be captured (a host read, a library that
    refuses capture) warns once (:class:`GraphCaptureWarning`) and runs uncaptured,
    with the same results. ``cuda_graph=False`` (or the environment variable
    ``TENFERRO_CUDA_GRAPH=0``) never captures; ``Lowered.cuda_graph`` tells the state.

    ``backend`` (:data:`BACKENDS`; default ``$TENFERRO_JIT_BACKEND`` or ``"numpy"``):
    ``"native"`` and ``"auto"`` compile CPU programs to machine code with Numba (the
    ``fast`` extra), fused loops and BLAS calls, cached on disk; equations without a
    native kernel, and everything when Numba is missing (``"native"`` warns), stay
    with NumPy. ``Lowered.compile_report()`` / :func:`compile_report` tell what went
    native and why not.
    """
    if fun is None:
        return lambda f: jit(
            f,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            maxsize=maxsize,
            cuda_graph=cuda_graph,
            backend=backend,
        )
    return JitFunction(
        fun,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        donate_argnames=donate_argnames,
        maxsize=maxsize,
        cuda_graph=cuda_graph,
        backend=backend,
    )


def compile_report(fun: JitFunction, *args: Any, **kwargs: Any) -> CompileReport:
    """The :class:`CompileReport` of ``fun`` (made by :func:`jit`) for these arguments
    (traced and compiled now if they are new): ``fun.lower(*args).compile_report()``."""
    if not isinstance(fun, JitFunction):
        raise JitArgumentError(f"compile_report: expected a function made by tenferro.jit, got {type(fun).__name__}")
    return fun.lower(*args, **kwargs).compile_report()
