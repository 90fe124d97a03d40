"""Optional peer frameworks for the benchmarks (the ``bench`` extra): PyTorch and
JAX, each configured for a fair single-threaded float64 comparison, or ``None``.
Importing this module pins the process to one core (see below). ``TENFERRO_BENCH_PEERS``
(a comma-separated subset of ``torch,jax``; default both) names the peers to import: a child
process that times one framework leaves the others out."""

from __future__ import annotations

import os

# One core for the whole process, set before any framework starts its thread pools:
# XLA's CPU runtime keeps a second worker busy despite intra_op_parallelism_threads=1
# (measured: JAX jit of an MPS-energy gradient 73 ms on 2 cores, 141 ms pinned to one).
# Thread-count settings alone are not enough; TENFERRO_BENCH_ALL_CORES=1 opts out.
if hasattr(os, "sched_setaffinity") and not os.environ.get("TENFERRO_BENCH_ALL_CORES"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

_WANTED = set(os.environ.get("TENFERRO_BENCH_PEERS", "torch,jax").split(","))

torch = jax = jnp = None
if "torch" in _WANTED:
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        torch = None
if "jax" in _WANTED:
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
    except ImportError:  # pragma: no cover
        jax = jnp = None

__all__ = ["torch", "jax", "jnp"]
