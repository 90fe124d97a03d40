"""Eager-mode overhead: 300 steps of ``x = tanh(W @ x) + x`` (8x8 ``W``), then
``value_and_grad`` with respect to ``W``; and the cost of one eager call of ``add``,
``tanh`` and ``matmul`` on such small operands (the per-call dispatch cost).

Compares tenferro+tidu against PyTorch eager, JAX eager and JAX jit, measured
in the same run, and prints times and ratios (tenferro / peer; below 1 means
tenferro is faster). The per-call table and the value_and_grad ratio against
PyTorch are medians of ``--repeat`` rounds, tenferro and PyTorch interleaved, in CPU time
(``time.process_time``: on a shared machine, time other processes take is not counted).
Peers that are not installed are reported as n/a (``pip install -e ".[bench]"``).

    python benchmarks/eager_overhead.py [--steps 300] [--n 8] [--repeat 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _peers import jax, jnp, torch  # noqa: E402  (None when not installed; pins the process to one core)
from _timing import best_time, fmt_ratio, fmt_time  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402


def loop_loss(x0: np.ndarray, steps: int):
    """``W -> sum(x_steps)``, ``x_{k+1} = tanh(W @ x_k) + x_k`` from ``x0``: the small-op workload."""
    x_init = tf.asarray(x0)

    def f(W):
        x = x_init
        for _ in range(steps):
            x = tf.tanh(W @ x) + x
        return tf.sum(x)

    return f


def bench_tenferro(W0: np.ndarray, x0: np.ndarray, steps: int):
    W = tf.asarray(W0)
    f = loop_loss(x0, steps)

    vg = tidu.value_and_grad(f)
    val, g = vg(W)
    return best_time(lambda: f(W)), best_time(lambda: vg(W)), float(val), g.numpy()


def bench_torch(W0, x0, steps):
    if torch is None:
        return None
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
    if jax is None:
        return None
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


def interleaved_medians(calls: dict[str, Callable[[], Any]], repeat: int, budget: float = 0.05) -> dict[str, float]:
    """Median CPU seconds per call of each entry: ``repeat`` rounds, one round of each entry
    after the other (so load changes on a shared machine hit every entry alike)."""
    clock = time.process_time
    numbers = {}
    for name, fn in calls.items():
        fn()
        t0 = clock()
        for _ in range(10):
            fn()
        numbers[name] = max(1, int(budget / max((clock() - t0) / 10, 1e-7)))
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            n = numbers[name]
            t0 = clock()
            for _ in range(n):
                fn()
            times[name].append((clock() - t0) / n)
    return {name: statistics.median(ts) for name, ts in times.items()}


def per_call_table(W0: np.ndarray, x0: np.ndarray, repeat: int) -> None:
    """Microseconds per eager call of ``add``, ``tanh`` and ``matmul`` (no gradient)."""
    W, x = tf.asarray(W0), tf.asarray(x0)
    ours = {"add x + x": lambda: x + x, "tanh(x)": lambda: tf.tanh(x), "matmul W @ x": lambda: W @ x}
    calls = {("tenferro", k): f for k, f in ours.items()}
    if torch is not None:
        tW, tx = torch.tensor(W0), torch.tensor(x0)
        peer = {"add x + x": lambda: tx + tx, "tanh(x)": lambda: torch.tanh(tx), "matmul W @ x": lambda: tW @ tx}
        calls.update({("torch", k): f for k, f in peer.items()})
    med = interleaved_medians(calls, repeat)
    print(f"\nper eager call, n = {len(x0)}, float64 (CPU time, median of {repeat} interleaved rounds)")
    print(f"{'':16s} {'tenferro':>10s} {'PyTorch':>10s} {'ratio':>7s}")
    for k in ours:
        t_ours, t_peer = med[("tenferro", k)], med.get(("torch", k))
        peer_cell = f"{t_peer * 1e6:8.2f}us" if t_peer is not None else "n/a"
        print(f"{k:16s} {t_ours * 1e6:8.2f}us {peer_cell:>10s} {fmt_ratio(t_ours, t_peer) if t_peer else 'n/a':>7s}")


def vg_interleaved(W0: np.ndarray, x0: np.ndarray, steps: int, repeat: int) -> None:
    """value_and_grad with respect to ``W``, tenferro and PyTorch eager interleaved (medians)."""
    if torch is None:
        return
    W, f = tf.asarray(W0), loop_loss(x0, steps)

    vg = tidu.value_and_grad(f)
    tW, tx = torch.tensor(W0, requires_grad=True), torch.tensor(x0)

    def torch_vg():
        x = tx
        for _ in range(steps):
            x = torch.tanh(tW @ x) + x
        v = x.sum()
        return v.detach(), torch.autograd.grad(v, tW)

    med = interleaved_medians({"tenferro": lambda: vg(W), "torch": torch_vg}, repeat, budget=0.2)
    print(
        f"value_and_grad, CPU time, median of {repeat} interleaved rounds: tenferro {fmt_time(med['tenferro']).strip()}, "
        f"PyTorch eager {fmt_time(med['torch']).strip()}, ratio {fmt_ratio(med['tenferro'], med['torch']).strip()}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=9, help="rounds per median (per-call table, ratio to PyTorch)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    threadpool_limits(1)
    rng = np.random.default_rng(0)
    W0 = rng.standard_normal((args.n, args.n)) * (0.5 / np.sqrt(args.n))
    x0 = rng.standard_normal(args.n) * 0.1

    # first, before JAX's tracing leaves a large heap for every garbage collection to walk
    vg_interleaved(W0, x0, args.steps, args.repeat)
    per_call_table(W0, x0, args.repeat)
    print()
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
