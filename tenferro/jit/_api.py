"""``tenferro.jit``: trace once per signature, optimize the graph, replay compiled code.

The framework-independent half (signature keys, the LRU cache, retrace warnings,
composition with tidu's transformations through the ``call`` primitive) is
:class:`tidu._staging.StagedFunction`; this module supplies tenferro's compiler:
inline nested calls, run the passes (:func:`._optimize.optimize`), generate a
straight-line function (:mod:`._codegen`).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from tidu import Graph
from tidu._call import inline_calls
from tidu._staging import CacheInfo, RetraceWarning, StagedFunction, StagingError

from .._creation import asarray
from .._placement import get_default_placement
from ..linalg._config import snapshot as linalg_settings
from .._errors import TenferroError
from .._tensor import Tensor
from ._codegen import Program, generate
from ._optimize import optimize

__all__ = ["jit", "JitFunction", "Lowered", "JitError", "RetraceWarning", "CacheInfo", "compile_graph"]


class JitError(StagingError, TenferroError):
    """Misuse of :func:`tenferro.jit` (a tidu :class:`StagingError` and a :class:`TenferroError`)."""


def _identifier(name: str) -> str:
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "f_" + s


def compile_graph(graph: Graph, *, donate: tuple[bool, ...] = (), name: str = "compiled") -> Program:
    """The compiler: inline nested calls, optimize, generate code."""
    return generate(optimize(inline_calls(graph)), donate, _identifier(name))


def _to_leaf(x: Any) -> Any:
    """User arrays (NumPy, CuPy, anything ``asarray`` accepts that is an array) become tensors."""
    if type(x) is Tensor:
        return None
    if isinstance(x, np.ndarray) or hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__"):
        return asarray(x)
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
    for inspection.
    """

    def __init__(self, fun: Callable[..., Any], *, static_argnums, static_argnames, donate_argnums, maxsize):
        super().__init__(fun, self._compile, to_leaf=_to_leaf, static_argnums=static_argnums,
                         static_argnames=static_argnames, donate_argnums=donate_argnums, maxsize=maxsize,
                         what="tenferro.jit", error=JitError, context=_context)

    def _compile(self, graph: Graph, donate: tuple[bool, ...] = ()) -> Program:
        return compile_graph(graph, donate=donate, name=self.__name__)

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
        return {"flops": self._program.flops, "peak_bytes": self._program.peak_bytes,
                "eqns": len(self._program.graph.eqns), "eqns_before": len(self._graph.eqns),
                "reused_buffers": self._program.reused_buffers}

    def __repr__(self) -> str:
        c = self.cost()
        return f"<Lowered: {c['eqns_before']} -> {c['eqns']} eqns, {c['flops']:.3g} flops>"


def jit(fun: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        maxsize: int = 64) -> Any:
    """Compile ``fun``: trace it once per signature, optimize, replay compiled code.

    JAX's names and meaning. The signature is the pytree structure of the
    arguments, the shape, dtype and placement of every tensor (NumPy arrays are
    converted), the values of static arguments and of Python scalars (a Python
    scalar argument is static: pass a 0-d tensor to avoid retracing on new
    values). ``donate_argnums`` lets the program overwrite those arguments'
    buffers. Works under and around tidu's transformations: ``jit(grad(f))``,
    ``grad(jit(f))``, ``jit(jit(f))``. Usable as ``@jit`` or
    ``@jit(static_argnums=...)``.
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, maxsize=maxsize)
    return JitFunction(fun, static_argnums=static_argnums, static_argnames=static_argnames,
                       donate_argnums=donate_argnums, maxsize=maxsize)
