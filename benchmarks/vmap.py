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

The per-example gradient cases time every framework in a process of its own, all on the same
core, in 15 interleaved rounds (``_timing.interleaved_processes``; compilation and one call per
round excluded, each round about 40 ms of calls): each cell is the median of its rounds, and
each ratio the median of the ratios within a round, since this shared host's speed drifts by
more than the targets' margins over the seconds one framework's median took on its own. One
process per framework, because in one process they disturbed each other's allocations: on the
GPU machine's Xeon host, tenferro's MLP program ran 3.1 ms with no page fault per call until
PyTorch and JAX had run in the same process, then 4.4 ms with 516 page faults per call. The
Jacobian rows are medians of several timed calls. Targets: ``jit(vmap(grad))`` at most 1.0x
``torch.func.vmap(grad)`` and at most 2x JAX; the MLP's ``native`` row (issue 55) at most 1.0x
torch.func and 1.5x JAX; ``jacrev``/``hessian`` at least 5x faster than the loop; each row
is followed by a ``goal`` line per target, ``met`` or ``missed``. Before timing, each peer's
per-example gradients are checked against tenferro's (``np.allclose``, rtol ``RTOL``); the
script exits with an error if one differs. Usage: ``python benchmarks/vmap.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
from statistics import median
from typing import Any, Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _peers import jax, jnp, torch  # noqa: E402  (pins the process to one core; float64 JAX)
from _timing import fmt_time, interleaved_processes, median_time, paired_ratio, serve_rounds  # noqa: E402

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402
from tidu import _jacobian as _api  # noqa: E402  (the loop path is swapped in to time it)

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
            v = stack([cos(x[i]), sin(x[i])])  # the feature map of one pixel
            m = einsum("p,apb->ab", v, a)
            env = m if env is None else env @ m
        return (sum_(env) - y) ** 2

    return loss


def row(name: str, ours: str, times: dict[str, list[float]]) -> str:
    """One table row: the median time of ``ours`` and of each peer, with the ratio of ours to
    the peer as the median of the ratios within the interleaved rounds."""
    t = times[ours]
    cells = " | ".join(
        f"{fmt_time(median(ts))} ({paired_ratio(t, ts):.2f}x)" if ts else "n/a"
        for peer, ts in times.items()
        if peer in PEERS
    )
    return f"| {name} | {fmt_time(median(t))} | {cells} |"


PEERS = ("torch.func.vmap(grad)", "JAX jit(vmap(grad))")
#: issue 25 (``jit``) and issue 55 (``native``): tenferro / peer at most this (paired ratio)
TARGETS = {"jit": {PEERS[0]: 1.0, PEERS[1]: 2.0}, "native": {PEERS[0]: 1.0, PEERS[1]: 1.5}}
JAC_TARGET = 5.0  # jacrev and hessian: at least this much faster than the loop over basis vectors
RTOL = 1e-8  # the peers' per-example gradients against tenferro's


def goal(text: str, value: float, limit: float, at_most: bool = True) -> str:
    """One goal line: the measured value against its limit, met or missed."""
    ok = value <= limit if at_most else value >= limit
    return f"  goal: {text} {'<=' if at_most else '>='} {limit:g}x: {value:.2f}x, {'met' if ok else 'missed'}"


def _numpy(x: Any) -> np.ndarray:
    return x.detach().numpy() if torch is not None and isinstance(x, torch.Tensor) else np.asarray(x)


def check_peers(case: str, quick: bool, peers: list[str]) -> None:
    """Each peer's per-example gradients against tenferro's ``jit(vmap(grad))``; exits if one
    differs."""
    ref = [g.numpy() for g in per_example_call(case, "jit", quick)()]
    for peer in peers:
        got = [_numpy(g) for g in per_example_call(case, peer, quick)()]
        bad = [
            k
            for k, (a, b) in enumerate(zip(got, ref))
            if a.shape != b.shape or not np.allclose(a, b, rtol=RTOL, atol=RTOL * np.abs(b).max())
        ]
        if len(got) != len(ref) or bad:
            raise SystemExit(f"{case}: {peer}'s per-example gradients differ from tenferro's (parameters {bad})")
        diff = max(float(np.abs(a - b).max() / np.abs(b).max()) for a, b in zip(got, ref))
        print(f"  ({peer} agrees with tenferro: max |diff| / max |grad| {diff:.1e})")


def case_data(case: str, quick: bool) -> tuple[str, Any, np.ndarray, np.ndarray, Callable]:
    """A per-example gradient case: its title, parameters, features, labels and loss builder
    (called with a framework's namespace)."""
    if case == "mlp":
        batch, width = (16, 8) if quick else (256, 64)
        rng = np.random.default_rng(0)
        params = (rng.standard_normal((width, width)) / 8, rng.standard_normal((width, width)) / 8)
        xs, ys = rng.standard_normal((batch, width)), rng.standard_normal((batch, width))
        return (
            f"MLP per-example grads, batch {batch}, width {width}",
            params,
            xs,
            ys,
            lambda ns: mlp_loss(ns.tanh, ns.sum),
        )
    batch, L, chi = (8, 6, 4) if quick else (128, 16, 16)
    rng = np.random.default_rng(1)
    dims = [1] + [chi] * (L - 1) + [1]
    params = [rng.standard_normal((dims[i], 2, dims[i + 1])) / np.sqrt(2 * dims[i]) for i in range(L)]
    xs, ys = rng.uniform(0, np.pi / 2, (batch, L)), rng.standard_normal(batch)
    return (
        f"MPS classifier per-example grads, batch {batch}, L={L}, chi={chi}",
        params,
        xs,
        ys,
        lambda ns: mps_loss(ns.einsum, ns.sum, ns.cos, ns.sin, ns.stack),
    )


def per_example_call(case: str, framework: str, quick: bool) -> Callable[[], Any]:
    """One call of ``framework``'s per-example gradients on ``case`` (``jit``, ``native`` and
    ``eager`` are tenferro's ``tf.jit(vmap(grad))``, the same with ``backend="native"``, and
    ``vmap(grad)``)."""
    _, params, xs, ys, loss_of = case_data(case, quick)
    container = type(params)
    if framework in ("jit", "native", "eager"):
        fn = tidu.vmap(tidu.grad(loss_of(tf)), in_axes=(None, 0, 0))
        if framework != "eager":  # native: jit(backend="native"), machine code through Numba (the fast extra)
            fn = tf.jit(fn, backend="native" if framework == "native" else "numpy")
        p, x, y = container(tf.asarray(a) for a in params), tf.asarray(xs), tf.asarray(ys)
        return lambda: fn(p, x, y)
    if framework == PEERS[0]:
        from torch.func import grad as tgrad, vmap as tvmap  # noqa: PLC0415  (optional peer)

        fn = tvmap(tgrad(loss_of(torch)), in_dims=(None, 0, 0))
        p, x, y = container(torch.tensor(a) for a in params), torch.tensor(xs), torch.tensor(ys)
        return lambda: fn(p, x, y)
    fn = jax.jit(jax.vmap(jax.grad(loss_of(jnp)), in_axes=(None, 0, 0)))
    p, x, y = container(jnp.asarray(a) for a in params), jnp.asarray(xs), jnp.asarray(ys)
    return lambda: jax.block_until_ready(fn(p, x, y))


#: the peers each child process imports (``_peers``): none for tenferro's own rows
_CHILD_PEERS = {"jit": "", "native": "", "eager": "", PEERS[0]: "torch", PEERS[1]: "jax"}


def bench_per_example(case: str, quick: bool) -> None:
    """Each framework in a child process of its own (:func:`_timing.interleaved_processes`),
    the rounds interleaved; then the first examples of tenferro's result against a loop of
    ``grad``."""
    title, params, xs, ys, loss_of = case_data(case, quick)
    ours = ["jit", "native", "eager"] if case == "mlp" else ["jit"]
    peers = [peer for peer, mod in zip(PEERS, (torch, jax)) if mod is not None]
    check_peers(case, quick, peers)
    names = ours + peers
    script = str(Path(__file__).resolve())
    times = interleaved_processes(
        {n: [sys.executable, script, "--child", case, n] + (["--quick"] if quick else []) for n in names},
        env={n: {"TENFERRO_BENCH_PEERS": _CHILD_PEERS[n]} for n in names},
    )
    for n in ours:
        print(row(f"{title} ({n})", n, times))
        for peer, limit in TARGETS.get(n, {}).items():
            if times.get(peer):
                print(goal(f"{n} / {peer}", paired_ratio(times[n], times[peer]), limit))
    loss, container = loss_of(tf), type(params)
    got = tf.jit(tidu.vmap(tidu.grad(loss), in_axes=(None, 0, 0)))(
        container(tf.asarray(a) for a in params), tf.asarray(xs), tf.asarray(ys)
    )
    ref = [
        tidu.grad(loss)(container(tf.asarray(a) for a in params), tf.asarray(xs[i]), tf.asarray(ys[i]))
        for i in range(4)
    ]
    err = max(
        float(np.abs(got[k].numpy()[:4] - np.stack([r[k].numpy() for r in ref])).max()) for k in range(len(params))
    )
    print(f"  (first 4 examples against a loop of grads: max |diff| {err:.1e})")


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
    g = lambda v: tf.sum(tf.sin(A @ v) * v) + tf.sum(v**4)  # noqa: E731
    for name, jac, arg, target in (
        (f"jacrev of a {n_jac} -> {n_jac} function", tidu.jacrev(f), x, JAC_TARGET),
        (f"jacfwd of a {n_jac} -> {n_jac} function", tidu.jacfwd(f), x, None),
        (f"hessian of a {n_hess}-parameter function", tidu.hessian(g), p, JAC_TARGET),
    ):
        loop = _loop(jac)
        t_new, t_old = median_time(lambda: jac(arg)), median_time(lambda: loop(arg))
        diff = float(np.abs(jac(arg).numpy() - loop(arg).numpy()).max())
        print(
            f"| {name} | batched {fmt_time(t_new)} | loop {fmt_time(t_old)} | {t_old / t_new:.1f}x faster | "
            f"max |diff| {diff:.1e} |"
        )
        if target is not None:
            print(goal(f"{name.split()[0]}: loop / batched", t_old / t_new, target, at_most=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "FRAMEWORK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # one framework's rounds, for bench_per_example
        serve_rounds(per_example_call(*args.child, args.quick))
        return
    print(
        f"tenferro | torch {getattr(torch, '__version__', '-')} | JAX {getattr(jax, '__version__', '-')} | "
        "1 thread, one core"
    )
    print("| case | tenferro | " + " | ".join(["torch.func.vmap(grad) (ratio)", "JAX jit(vmap(grad)) (ratio)"]) + " |")
    print("|---|---|---|---|")
    if args.quick:
        print("  (--quick: small sizes; the goals are set for the full sizes)")
    bench_per_example("mlp", args.quick)
    bench_per_example("mps", args.quick)
    if args.quick:
        bench_jacobians(8, 6)
    else:
        bench_jacobians(64, 32)


if __name__ == "__main__":
    main()
