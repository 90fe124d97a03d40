"""Benchmark of tenferro.linalg forward+VJP against PyTorch and JAX (jit), float64,
single-threaded: svd, svd_top16, qr, eigh, cholesky, solve at one 256x256 matrix and
at a batch of 512 matrices of 32x32 (tenferro: trailing batch ``[32, 32, 512]``;
torch/jax: leading batch ``[512, 32, 32]``).

Each case times ``value_and_grad`` of a gauge-invariant scalar loss of the
decomposition (the same loss in every framework): ``svd`` the reconstruction
``sum(C * U diag(S) Vh)``, ``svd_top16`` the sum of the 16 largest singular values
(``svdvals(a)[:16]``; 16 of 32 for the batch), ``qr`` ``sum(C * Q * Q) + sum(C * R * R)``
(unchanged when a column of Q and the row of R flip sign: tenferro makes diag(R)
positive, LAPACK does not), ``eigh`` the reconstruction ``sum(C * V diag(w) V^T)`` of an
input symmetrized once, ``(a + a^T) / 2``, for all frameworks (torch reads one triangle,
tenferro and JAX average the two). Before timing, every framework's value and gradient
must match tenferro's (relative difference, gradients in 2-norm, at most ``TOL``; the
``rel diff`` column is the largest); the script exits with an error otherwise. Times are medians of 7 rounds in
which the frameworks take turns (``interleaved_medians``: load that drifts during a
run hits all of them alike); ratios are ``tenferro / other`` (below 1: tenferro
faster). Run: ``python benchmarks/linalg.py [--cpu] [case ...]`` (``bench`` extra),
e.g. ``python benchmarks/linalg.py svd_top16``; ``--cpu`` times process CPU time
instead of wall time (on a machine shared with other work: the time a framework
spends waiting for a core is not its own).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt_ratio, fmt_time  # noqa: E402

import tenferro as tf  # noqa: E402
import tenferro.linalg as la  # noqa: E402
import tidu  # noqa: E402
from tenferro.linalg._matops import as_cols, mm, mT  # noqa: E402

from _peers import jax, jnp, torch  # noqa: E402  (None when not installed)


def _inputs(op, n, batch, rng):
    shape = (batch, n, n) if batch else (n, n)
    a = rng.standard_normal(shape)
    if op == "eigh":  # the same symmetric input for every framework
        a = (a + np.swapaxes(a, -1, -2)) / 2
    if op == "cholesky":
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    if op == "solve":
        a = a + n**0.5 * np.eye(n)
    b = rng.standard_normal(shape)
    c = rng.standard_normal(shape)
    return a, b, c


def _trail(x):
    return np.asfortranarray(np.moveaxis(x, 0, -1)) if x.ndim == 3 else np.asfortranarray(x)


# --- losses (same math in every framework) -------------------------------------------
def tf_loss(op):
    def svd(a, b, c):
        u, s, vh = la.svd(a)
        return tf.sum(tf.multiply(mm(tf.multiply(u, as_cols(s, u.shape[0])), vh), c))

    def svd_top16(a, b, c):
        return tf.sum(la.svdvals(a)[:16])

    def qr(a, b, c):
        q, r = la.qr(a)
        return tf.add(tf.sum(tf.multiply(tf.multiply(q, q), c)), tf.sum(tf.multiply(tf.multiply(r, r), c)))

    def eigh(a, b, c):
        w, v = la.eigh(a)
        return tf.sum(tf.multiply(mm(tf.multiply(v, as_cols(w, v.shape[0])), mT(v)), c))

    def cholesky(a, b, c):
        return tf.sum(tf.multiply(la.cholesky(a), c))

    def solve(a, b, c):
        return tf.sum(tf.multiply(la.solve(a, b), c))

    return locals()[op]


def torch_loss(op):
    def svd(a, b, c):
        u, s, vh = torch.linalg.svd(a, full_matrices=False)
        return ((u * s[..., None, :]) @ vh * c).sum()

    def svd_top16(a, b, c):
        return torch.linalg.svdvals(a)[..., :16].sum()

    def qr(a, b, c):
        q, r = torch.linalg.qr(a)
        return (q * q * c).sum() + (r * r * c).sum()

    def eigh(a, b, c):
        w, v = torch.linalg.eigh(a)
        return ((v * w[..., None, :]) @ v.mT * c).sum()

    def cholesky(a, b, c):
        return (torch.linalg.cholesky(a) * c).sum()

    def solve(a, b, c):
        return (torch.linalg.solve(a, b) * c).sum()

    return locals()[op]


def jax_loss(op):
    def svd(a, b, c):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return jnp.sum((u * s[..., None, :]) @ vh * c)

    def svd_top16(a, b, c):
        return jnp.sum(jnp.linalg.svd(a, compute_uv=False)[..., :16])

    def qr(a, b, c):
        q, r = jnp.linalg.qr(a)
        return jnp.sum(q * q * c) + jnp.sum(r * r * c)

    def eigh(a, b, c):
        w, v = jnp.linalg.eigh(a)
        return jnp.sum((v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2) * c)

    def cholesky(a, b, c):
        return jnp.sum(jnp.linalg.cholesky(a) * c)

    def solve(a, b, c):
        return jnp.sum(jnp.linalg.solve(a, b) * c)

    return locals()[op]


def interleaved_medians(steps: dict, repeat: int, budget: float = 0.2, clock=time.perf_counter) -> dict:
    """Median per-call time of each step over ``repeat`` rounds, the steps taking
    turns within each round (each round loops a step for about ``budget / repeat``
    seconds): a machine whose load drifts slows every framework of a round alike, so
    the ratios stay meaningful where separate timings would not."""
    numbers = {}
    for name, fn in steps.items():
        fn()  # warm up (plans, caches, jit)
        t0 = clock()
        fn()
        numbers[name] = max(1, int(budget / repeat / max(clock() - t0, 1e-7)))
    times = {name: [] for name in steps}
    for _ in range(repeat):
        for name, fn in steps.items():
            t0 = clock()
            for _ in range(numbers[name]):
                fn()
            times[name].append((clock() - t0) / numbers[name])
    return {name: statistics.median(ts) for name, ts in times.items()}


def rel_diff(value, grads, ref_value, ref_grads) -> float:
    """Largest relative difference of the value or of a gradient (2-norm) to the reference."""
    diffs = [abs(float(value) - float(ref_value)) / max(abs(float(ref_value)), 1e-300)]
    for g, r in zip(grads, ref_grads):
        diffs.append(float(np.linalg.norm(np.asarray(g) - r) / max(np.linalg.norm(r), 1e-300)))
    return max(diffs)


def run(op, n, batch, rng):
    a, b, c = _inputs(op, n, batch, rng)
    argnums = (0, 1) if op == "solve" else (0,)
    A, B, C = (tf.asarray(_trail(x)) for x in (a, b, c))
    g = tidu.value_and_grad(tf_loss(op), argnums=argnums)
    steps = {"tenferro": lambda: g(A, B, C)}
    if torch is not None:
        ft = torch_loss(op)
        ta, tb, tc = (torch.tensor(x) for x in (a, b, c))

        def torch_step():
            xa = ta.clone().requires_grad_(True)
            xb = tb.clone().requires_grad_(op == "solve")
            out = ft(xa, xb, tc)
            out.backward()
            return out, (xa.grad, xb.grad)[: len(argnums)]

        steps["torch"] = torch_step
    if jax is not None:
        fj = jax.jit(jax.value_and_grad(jax_loss(op), argnums=argnums))
        ja, jb, jc = (jnp.asarray(x) for x in (a, b, c))
        steps["jax"] = lambda: jax.block_until_ready(fj(ja, jb, jc))
    # every framework's value and gradient against tenferro's, before any timing
    value, grads = g(A, B, C)
    ref = [np.moveaxis(np.asarray(x), -1, 0) if batch else np.asarray(x) for x in grads]
    worst = 0.0
    for name in steps.keys() - {"tenferro"}:
        v, gs = steps[name]()
        d = rel_diff(v.item() if name == "torch" else v, gs, float(np.asarray(value)), ref)
        if not d <= TOL:
            raise SystemExit(f"{op} {n}x{n} batch={batch}: {name} differs from tenferro by {d:.1e} (> {TOL:g})")
        worst = max(worst, d)
    t = interleaved_medians(steps, REPEAT, clock=CLOCK)
    return t["tenferro"], t.get("torch"), t.get("jax"), worst


OPS = ("svd", "svd_top16", "qr", "eigh", "cholesky", "solve")
REPEAT = 7
TOL = 1e-8  # largest accepted relative difference to tenferro (value, gradient 2-norm)
CLOCK = time.perf_counter  # --cpu: process CPU time (every thread of the process), for a loaded machine


def main(ops=OPS):
    unknown = [op for op in ops if op not in OPS]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}; choose from {list(OPS)}")
    rng = np.random.default_rng(0)
    rows = []
    print(
        f"{'op':10s} {'case':14s} {'tenferro':>12s} {'torch':>12s} {'jax(jit)':>12s} {'/torch':>8s} {'/jax':>8s}"
        f" {'rel diff':>9s}"
    )
    for op in ops:
        for n, batch, label in ((256, 0, "256x256"), (32, 512, "512 x 32x32")):
            t_tf, t_torch, t_jax, worst = run(op, n, batch, rng)
            rows.append((op, label, t_tf, t_torch, t_jax))
            print(
                f"{op:10s} {label:14s} {fmt_time(t_tf):>12s} {fmt_time(t_torch):>12s} {fmt_time(t_jax):>12s} "
                f"{fmt_ratio(t_tf, t_torch):>8s} {fmt_ratio(t_tf, t_jax):>8s} {worst:>9.1e}",
                flush=True,
            )
    return rows


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--cpu" in args:
        args.remove("--cpu")
        CLOCK = time.process_time
    main(tuple(args) or OPS)
