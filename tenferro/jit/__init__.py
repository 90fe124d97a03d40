"""Compiled mode: :func:`jit` traces a function once per signature, optimizes the
graph (:mod:`._optimize`) and replays generated straight-line code
(:mod:`._codegen`). See the README section "Compiled mode (jit)"."""
from ._api import (CacheInfo, DeletedTensorError, DonationWarning, JitArgumentError, JitError, JitFunction, Lowered,
                   RetraceWarning, compile_graph, is_deleted, jit)

__all__ = ["jit", "JitFunction", "Lowered", "JitError", "JitArgumentError", "DeletedTensorError", "DonationWarning",
           "RetraceWarning", "CacheInfo", "compile_graph", "is_deleted"]
