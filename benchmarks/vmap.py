"""vmap: per-example gradients and batched Jacobians, tenferro against ``torch.func.vmap`` and
JAX ``jit(vmap(...))``, float64, one thread, pinned to one core (``_peers``), one run.

Cases (issue 25):

* per-example gradients of an MLP loss (batch 256, widths 64: ``tanh(W2 tanh(W1 x))``
  against a target, gradient with respect to W1 and W2 per example):
  ``tf.jit(vmap(grad))``, ``vmap(grad)`` eager, against ``torch.func.vmap(grad)`` and
  ``jax.jit(jax.vmap(jax.grad))``;
* per-example gradients of an MPS-classifier loss (batch 128, L = 16, chi = 16, d = 2:
  the overlap of a product state built from the example's features with the MPS, squared
  against a label);
* ``jacrev`` of a 64 -> 64 function and ``hessian`` of a 32-parameter scalar function:
  today's batched Jacobians (one vmapped VJP/JVP per argument) against the loop over basis
  vectors they replace (tidu's fallback path), with the largest difference of the results.

The per-example gradient cases time every framework in 15 interleaved rounds (after a warm-up;
compilation excluded): each cell is the median of its rounds, and each ratio the median of the
ratios within a round (``_timing.interleaved_times``), since this shared host's speed drifts by
more than the targets' margins over the seconds one framework's median took on its own. The
Jacobian rows are medians of several timed calls. Targets: ``jit(vmap(grad))`` at most 1.0x
``torch.func.vmap(grad)`` and at most 2x JAX; ``jacrev``/``hessian`` at least 5x faster than
the loop. Usage: ``python benchmarks/vmap.py [--quick]``.
"""
from __future__ import annotations

import argparse
import sys
from statistics import median
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _peers import jax, jnp, torch  # noqa: E402  (pins the process to one core; float64 JAX)
from _timing import fmt_time, interleaved_times, median_time, paired_ratio  # noqa: E402

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402
from tidu import _api  # noqa: E402  (the loop path of jacfwd/jacrev, for the comparison)

try:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
except ImportError:  # pragma: no cover
    pass


# ---- the losses, written once per framework's namespace ---------------------------------------
def mlp_loss(tanh, sum_):
    def loss(params, x, y):
        w1, w2 = params
        h = tanh(w2 @ tanh(w1 @ x))
        return sum_((h - y) ** 2)
    return loss


def mps_loss(einsum, sum_, cos, sin, stack):
    def loss(tensors, x, y):
        env = None
        for i, a in enumerate(tensors):
            v = stack([cos(x[i]), sin(x[i])])              # the feature map of one pixel
            m = einsum("p,apb->ab", v, a)
            env = m if env is None else env @ m
        return (sum_(env) - y) ** 2
    return loss


def row(name: str, ours: str, times: dict[str, list[float]]) -> str:
    """One table row: the median time of ``ours`` and of each peer, with the ratio of ours to
    the peer as the median of the ratios within the interleaved rounds."""
    t = times[ours]
    cells = " | ".join(f"{fmt_time(median(ts))} ({paired_ratio(t, ts):.2f}x)" if ts else "n/a"
                       for peer, ts in times.items() if peer in PEERS)
    return f"| {name} | {fmt_time(median(t))} | {cells} |"


PEERS = ("torch.func.vmap(grad)", "JAX jit(vmap(grad))")


def bench_mlp(batch: int, width: int) -> None:
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((width, width)) / 8, rng.standard_normal((width, width)) / 8
    xs, ys = rng.standard_normal((batch, width)), rng.standard_normal((batch, width))
    loss = mlp_loss(tf.tanh, tf.sum)
    params = (tf.asarray(w1), tf.asarray(w2))
    X, Y = tf.asarray(xs), tf.asarray(ys)
    per_example = tidu.vmap(tidu.grad(loss), in_axes=(None, 0, 0))
    jitted = tf.jit(per_example)
    fns = {"jit": lambda: jitted(params, X, Y), "eager": lambda: per_example(params, X, Y)}
    if torch is not None:
        from torch.func import grad as tgrad, vmap as tvmap  # noqa: PLC0415  (optional peer)
        tl = mlp_loss(torch.tanh, torch.sum)
        tp = (torch.tensor(w1), torch.tensor(w2))
        tv = tvmap(tgrad(tl), in_dims=(None, 0, 0))
        tx, ty = torch.tensor(xs), torch.tensor(ys)
        fns[PEERS[0]] = lambda: tv(tp, tx, ty)
    if jax is not None:
        jl = mlp_loss(jnp.tanh, jnp.sum)
        jv = jax.jit(jax.vmap(jax.grad(jl), in_axes=(None, 0, 0)))
        jp, jx, jy = (jnp.asarray(w1), jnp.asarray(w2)), jnp.asarray(xs), jnp.asarray(ys)
        fns[PEERS[1]] = lambda: jax.block_until_ready(jv(jp, jx, jy))
    times = interleaved_times(fns)
    got = jitted(params, X, Y)
    ref = [np.stack([tidu.grad(loss)(params, tf.asarray(xs[i]), tf.asarray(ys[i]))[k].numpy() for i in range(4)])
           for k in range(2)]
    err = max(float(np.abs(got[k].numpy()[:4] - ref[k]).max()) for k in range(2))
    print(row(f"MLP per-example grads, batch {batch}, width {width} (jit)", "jit", times))
    print(row(f"MLP per-example grads, batch {batch}, width {width} (eager)", "eager", times))
    print(f"  (first 4 examples against a loop of grads: max |diff| {err:.1e})")


def bench_mps(batch: int, L: int, chi: int) -> None:
    rng = np.random.default_rng(1)
    dims = [1] + [chi] * (L - 1) + [1]
    ts = [rng.standard_normal((dims[i], 2, dims[i + 1])) / np.sqrt(2 * dims[i]) for i in range(L)]
    xs, ys = rng.uniform(0, np.pi / 2, (batch, L)), rng.standard_normal(batch)
    loss = mps_loss(tf.einsum, tf.sum, tf.cos, tf.sin, tf.stack)
    T, X, Y = [tf.asarray(t) for t in ts], tf.asarray(xs), tf.asarray(ys)
    per_example = tidu.vmap(tidu.grad(loss), in_axes=(None, 0, 0))
    jitted = tf.jit(per_example)
    fns = {"jit": lambda: jitted(T, X, Y)}
    if torch is not None:
        from torch.func import grad as tgrad, vmap as tvmap  # noqa: PLC0415  (optional peer)
        tl = mps_loss(torch.einsum, torch.sum, torch.cos, torch.sin, torch.stack)
        tv = tvmap(tgrad(tl), in_dims=(None, 0, 0))
        tT, tx, ty = [torch.tensor(t) for t in ts], torch.tensor(xs), torch.tensor(ys)
        fns[PEERS[0]] = lambda: tv(tT, tx, ty)
    if jax is not None:
        jl = mps_loss(jnp.einsum, jnp.sum, jnp.cos, jnp.sin, jnp.stack)
        jv = jax.jit(jax.vmap(jax.grad(jl), in_axes=(None, 0, 0)))
        jT, jx, jy = [jnp.asarray(t) for t in ts], jnp.asarray(xs), jnp.asarray(ys)
        fns[PEERS[1]] = lambda: jax.block_until_ready(jv(jT, jx, jy))
    times = interleaved_times(fns)
    print(row(f"MPS classifier per-example grads, batch {batch}, L={L}, chi={chi} (jit)", "jit", times))


def _loop(fun):
    """``fun`` with the batched Jacobian paths switched off (tidu's loop over basis vectors)."""
    def run(*args):
        saved = _api._batched_jacfwd, _api._batched_jacrev
        _api._batched_jacfwd = _api._batched_jacrev = lambda *a, **k: None
        try:
            return fun(*args)
        finally:
            _api._batched_jacfwd, _api._batched_jacrev = saved
    return run


def bench_jacobians(n_jac: int, n_hess: int) -> None:
    rng = np.random.default_rng(2)
    W = tf.asarray(rng.standard_normal((n_jac, n_jac)) / np.sqrt(n_jac))
    x = tf.asarray(rng.standard_normal(n_jac))
    f = lambda v: tf.tanh(W @ v) * tf.sum(v * v)  # noqa: E731
    A = tf.asarray(rng.standard_normal((n_hess, n_hess)))
    p = tf.asarray(rng.standard_normal(n_hess))
    g = lambda v: tf.sum(tf.sin(A @ v) * v) + tf.sum(v ** 4)  # noqa: E731
    for name, jac, arg in ((f"jacrev of a {n_jac} -> {n_jac} function", tidu.jacrev(f), x),
                           (f"jacfwd of a {n_jac} -> {n_jac} function", tidu.jacfwd(f), x),
                           (f"hessian of a {n_hess}-parameter function", tidu.hessian(g), p)):
        loop = _loop(jac)
        t_new, t_old = median_time(lambda: jac(arg)), median_time(lambda: loop(arg))
        diff = float(np.abs(jac(arg).numpy() - loop(arg).numpy()).max())
        print(f"| {name} | batched {fmt_time(t_new)} | loop {fmt_time(t_old)} | {t_old / t_new:.1f}x faster | "
              f"max |diff| {diff:.1e} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    args = parser.parse_args()
    print(f"tenferro | torch {getattr(torch, '__version__', '-')} | JAX {getattr(jax, '__version__', '-')} | "
          "1 thread, one core")
    print("| case | tenferro | " + " | ".join(["torch.func.vmap(grad) (ratio)", "JAX jit(vmap(grad)) (ratio)"])
          + " |")
    print("|---|---|---|---|")
    if args.quick:
        bench_mlp(16, 8)
        bench_mps(8, 6, 4)
        bench_jacobians(8, 6)
    else:
        bench_mlp(256, 64)
        bench_mps(128, 16, 16)
        bench_jacobians(64, 32)


if __name__ == "__main__":
    main()
