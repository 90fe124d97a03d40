"""Compiled mode: :func:`jit` traces a function once per signature, optimizes the
graph (:mod:`._optimize`) and replays generated straight-line code
(:mod:`._codegen`), captured into a CUDA graph on a GPU (:mod:`._cuda_graph`). See the README section "Compiled mode (jit)"."""

from ._api import (
    BACKENDS,
    CacheInfo,
    CompileReport,
    CudaGraphState,
    DeletedTensorError,
    DonationWarning,
    GraphCaptureWarning,
    JitArgumentError,
    JitError,
    JitFunction,
    Lowered,
    RetraceWarning,
    compile_graph,
    compile_report,
    is_deleted,
    jit,
)

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
    "BACKENDS",
    "is_deleted",
]
