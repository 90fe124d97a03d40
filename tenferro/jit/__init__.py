"""Compiled mode: :func:`jit` traces a function once per signature, optimizes the
graph (:mod:`._optimize`) and replays generated straight-line code
(:mod:`._codegen`). See the README section "Compiled mode (jit)"."""
from ._api import CacheInfo, JitError, JitFunction, Lowered, RetraceWarning, compile_graph, jit

__all__ = ["jit", "JitFunction", "Lowered", "JitError", "RetraceWarning", "CacheInfo", "compile_graph"]
