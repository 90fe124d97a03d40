"""Optional peer frameworks for the benchmarks (the ``bench`` extra): PyTorch and
JAX, each configured for a fair single-threaded float64 comparison, or ``None``."""
from __future__ import annotations

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None
try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover
    jax = jnp = None

__all__ = ["torch", "jax", "jnp"]
