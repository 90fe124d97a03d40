"""Eager-mode overhead: 300 steps of ``x = tanh(W @ x) + x`` (8x8 ``W``), then
``value_and_grad`` with respect to ``W``.

Compares tenferro+tidu against PyTorch eager, JAX eager and JAX jit, measured
in the same run, and prints times and ratios (tenferro / peer; below 1 means
tenferro is faster). Peers that are not installed are reported as n/a
(``pip install -e ".[bench]"``).

    python benchmarks/eager_overhead.py [--steps 300] [--n 8]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import best_time, fmt_ratio, fmt_time  # noqa: E402

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402


def bench_tenferro(W0: np.ndarray, x0: np.ndarray, steps: int):
    W = tf.asarray(W0)
    x_init = tf.asarray(x0)

    def f(W):
        x = x_init
        for _ in range(steps):
            x = tf.tanh(W @ x) + x
        return tf.sum(x)

    vg = tidu.value_and_grad(f)
    val, g = vg(W)
    return best_time(lambda: f(W)), best_time(lambda: vg(W)), float(val), g.numpy()


def bench_torch(W0, x0, steps):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    W = torch.tensor(W0, requires_grad=True)
    x_init = torch.tensor(x0)

    def f(W):
        x = x_init
        for _ in range(steps):
            x = torch.tanh(W @ x) + x
        return x.sum()

    def vg():
        W.grad = None
        v = f(W)
        v.backward()
        return v, W.grad

    val, g = vg()
    with torch.no_grad():
        fwd = best_time(lambda: f(W))
    return fwd, best_time(vg), float(val), g.numpy().copy()


def bench_jax(W0, x0, steps):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    W = jnp.asarray(W0)
    x_init = jnp.asarray(x0)

    def f(W):
        x = x_init
        for _ in range(steps):
            x = jnp.tanh(W @ x) + x
        return x.sum()

    vg = jax.value_and_grad(f)
    val, g = vg(W)
    eager_vg = best_time(lambda: jax.block_until_ready(vg(W)), repeat=3)
    eager_f = best_time(lambda: jax.block_until_ready(f(W)), repeat=3)
    jf, jvg = jax.jit(f), jax.jit(vg)
    jit_f = best_time(lambda: jax.block_until_ready(jf(W)))
    jit_vg = best_time(lambda: jax.block_until_ready(jvg(W)))
    return (eager_f, eager_vg, float(val), np.asarray(g)), (jit_f, jit_vg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--n", type=int, default=8)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    W0 = rng.standard_normal((args.n, args.n)) * (0.5 / np.sqrt(args.n))
    x0 = rng.standard_normal(args.n) * 0.1

    ours_f, ours_vg, val, g = bench_tenferro(W0, x0, args.steps)
    rows = [("tenferro+tidu eager", ours_f, ours_vg)]
    t = bench_torch(W0, x0, args.steps)
    if t is not None:
        rows.append(("PyTorch eager", t[0], t[1]))
        np.testing.assert_allclose(g, t[3], rtol=1e-8, atol=1e-10)
    j = bench_jax(W0, x0, args.steps)
    if j is not None:
        (ef, evg, _, jg), (jf, jvg) = j
        rows.append(("JAX eager", ef, evg))
        rows.append(("JAX jit", jf, jvg))
        np.testing.assert_allclose(g, jg, rtol=1e-8, atol=1e-10)

    print(f"eager overhead: {args.steps} steps of x = tanh(W @ x) + x, W {args.n}x{args.n}, float64, 1 thread")
    print(f"{'':24s} {'forward':>12s} {'value_and_grad':>15s} {'fwd ratio':>10s} {'vg ratio':>9s}")
    for name, f_t, vg_t in rows:
        print(
            f"{name:24s} {fmt_time(f_t):>12s} {fmt_time(vg_t):>15s} "
            f"{fmt_ratio(ours_f, f_t):>10s} {fmt_ratio(ours_vg, vg_t):>9s}"
        )
    print("ratio = tenferro time / peer time (< 1: tenferro faster); gradients agree with every peer")


if __name__ == "__main__":
    main()
