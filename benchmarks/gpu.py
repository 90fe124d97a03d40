"""GPU benchmark: tenferro on CuPy against tenferro on the CPU, PyTorch CUDA (eager)
and JAX on the GPU (``jit``), each measured in this one run on the same machine.

Cases (value_and_grad unless noted, float64):
* the MPS energy <psi|H|psi>/<psi|psi> (Heisenberg MPO, D=5, L=16) at chi=128, 256, 512,
  gradient with respect to every site tensor;
* the same compiled (``mpsjit``): ``tenferro.jit`` (captured into a CUDA graph, and with
  ``cuda_graph=False``) against ``jax.jit`` and ``torch.compile(mode="reduce-overhead")``
  (in the torch column);
* the small-op loop compiled (``loopjit``): ``--loop-steps`` (default 100) steps of
  ``x <- tanh(W @ x) + x`` (8x8 ``W``, as ``benchmarks/compiled.py``'s ``loop``), value and
  gradient of ``sum(x * x)`` under ``tenferro.jit`` (captured and not), ``jax.jit`` and
  ``torch.compile(mode="reduce-overhead")``: about 8 tiny kernels per step, where launches
  are everything. Each compiler traces the unrolled loop: ``torch.compile`` took 54 s to
  compile 100 steps on an H200 and over 100 s for 300, hence the default;
* an SVD loss on a 4096 x 4096 matrix: the sum of its singular values (nuclear norm),
  whose gradient is U Vh;
* einsum cases of ``benchmarks/einsum.py`` (MPS norm, MPS-MPO-MPS, batched matmul chain,
  hyper-edge), value and gradient of the sum of the output.

The ``tenferro CPU`` column is one core, one thread: the process is pinned to one core
(``benchmarks/_peers.py``) and BLAS is limited to one thread (the ``*_NUM_THREADS``
variables before any import, and ``threadpoolctl``), so OpenBLAS does not squeeze its
default thread pool onto that core. Times are medians of several timed calls after a
warm-up, with the device synchronized after each call. Usage (on a machine with a GPU and CuPy):
``python benchmarks/gpu.py [--quick]``.
"""

from __future__ import annotations

import os

# The tenferro CPU column: one BLAS thread, set before NumPy loads OpenBLAS.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _peers import jax, jnp, torch  # noqa: E402  (pins one core; float64 JAX; torch CPU threads: 1)

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402

try:
    import cupy
except ImportError:  # pragma: no cover  (main() exits; --help still works)
    cupy = None

_LIMITS = threadpool_limits(1)  # after every BLAS-loading import: one thread on the pinned core


def sync() -> None:
    cupy.cuda.Device().synchronize()
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()


def median_time(fn: Callable[[], Any], repeat: int = 5, budget: float = 2.0) -> float:
    """Median wall time of ``fn`` (synchronized), after one warm-up call."""
    fn()
    sync()
    times = []
    start = time.perf_counter()
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = fn()
        if jax is not None:
            try:
                jax.block_until_ready(r)
            except Exception:  # noqa: BLE001  (not a JAX value)
                pass
        sync()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget and len(times) >= 2:
            break
    return statistics.median(times)


# --------------------------------------------------------------------------- MPS energy
def heisenberg_mpo(L: int) -> list[np.ndarray]:
    sz = np.diag([0.5, -0.5])
    sp = np.array([[0.0, 1.0], [0.0, 0.0]])
    sm, eye = sp.T, np.eye(2)
    w = np.zeros((5, 5, 2, 2))
    w[0, 0] = w[4, 4] = eye
    w[1, 0], w[2, 0], w[3, 0] = sp, sm, sz
    w[4, 1], w[4, 2], w[4, 3] = 0.5 * sm, 0.5 * sp, sz
    return [w[4:5] if i == 0 else w[:, 0:1] if i == L - 1 else w for i in range(L)]


def random_mps(L: int, chi: int, d: int = 2) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    dims = [min(chi, d**i, d ** (L - i)) for i in range(L + 1)]
    return [rng.standard_normal((dims[i], d, dims[i + 1])) / np.sqrt(dims[i]) for i in range(L)]


def energy_fn(einsum: Callable, sum_: Callable) -> Callable:
    """The energy written once for any einsum with NumPy's signature."""

    def energy(tensors, mpo):
        env = norm = None
        for a, w in zip(tensors, mpo):
            if env is None:
                env = einsum("pa,bpq,qc->abc", a[0], w[0], a[0])
                norm = einsum("pa,pc->ac", a[0], a[0])
            else:
                env = einsum("xwy,xpa,wbpq,yqc->abc", env, a, w, a)
                norm = einsum("xy,xpa,ypc->ac", norm, a, a)
        return sum_(env) / sum_(norm)

    return energy


def bench_mps(chi: int, L: int = 16) -> dict[str, float | None]:
    ket, mpo = random_mps(L, chi), heisenberg_mpo(L)
    out: dict[str, float | None] = {}
    energy = energy_fn(tf.einsum, tf.sum)
    for name, where in (("tenferro GPU", tf.gpu(0)), ("tenferro CPU", tf.CPU)):
        ts = [tf.asarray(k, placement=where) for k in ket]
        ws = [tf.asarray(w, placement=where) for w in mpo]
        vg = tidu.value_and_grad(lambda t: energy(t, ws))
        out[name] = median_time(lambda: vg(ts), repeat=5 if where == tf.CPU else 7)
    if torch is not None and torch.cuda.is_available():
        tenergy = energy_fn(torch.einsum, torch.sum)
        ts = [torch.tensor(k, device="cuda") for k in ket]
        ws = [torch.tensor(w, device="cuda") for w in mpo]

        def torch_vg():
            xs = [t.detach().requires_grad_(True) for t in ts]
            e = tenergy(xs, ws)
            return e, torch.autograd.grad(e, xs)

        out["torch CUDA"] = median_time(torch_vg, repeat=7)
    if jax is not None:
        jenergy = energy_fn(jnp.einsum, jnp.sum)
        gpu = jax.devices("gpu")[0]
        ts = [jax.device_put(k, gpu) for k in ket]
        ws = [jax.device_put(w, gpu) for w in mpo]
        jvg = jax.jit(jax.value_and_grad(lambda t: jenergy(t, ws)))
        out["JAX GPU jit"] = median_time(lambda: jvg(ts), repeat=7)
    return out


def bench_mps_jit(chi: int, L: int = 16) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """The MPS energy's value_and_grad compiled: ``tenferro.jit`` on the GPU with and
    without CUDA graph capture (two dicts; the peers' times in both), ``jax.jit`` and
    ``torch.compile(mode="reduce-overhead")`` of ``torch.func.grad_and_value`` (n/a,
    with the reason printed, if it fails)."""
    ket, mpo = random_mps(L, chi), heisenberg_mpo(L)
    energy = energy_fn(tf.einsum, tf.sum)
    ts = [tf.asarray(k, placement=tf.gpu(0)) for k in ket]
    ws = [tf.asarray(w, placement=tf.gpu(0)) for w in mpo]
    captured: dict[str, float | None] = {"tenferro CPU": None}
    plain: dict[str, float | None] = {"tenferro CPU": None}
    for out, graph in ((captured, True), (plain, False)):
        step = tf.jit(tidu.value_and_grad(lambda t: energy(t, ws)), cuda_graph=graph)
        step(ts)  # call 1 runs uncaptured; median_time's warm-up call captures
        out["tenferro GPU"] = median_time(lambda step=step: step(ts), repeat=9)
        print(f"  chi={chi} tenferro.jit(cuda_graph={graph}): {step.lower(ts).cuda_graph}", flush=True)
    if torch is not None and torch.cuda.is_available():
        tenergy = energy_fn(torch.einsum, torch.sum)
        tts = [torch.tensor(k, device="cuda") for k in ket]
        tws = [torch.tensor(w, device="cuda") for w in mpo]
        try:
            tvg = torch.compile(torch.func.grad_and_value(lambda xs: tenergy(xs, tws)), mode="reduce-overhead")
            for _ in range(3):  # compile, then record the CUDA graph
                tvg(tts)
            captured["torch CUDA"] = median_time(lambda: tvg(tts), repeat=9)
        except Exception as exc:  # noqa: BLE001  (any compiler failure: report it, keep going)
            print(f"  chi={chi} torch.compile failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            captured["torch CUDA"] = None
    if jax is not None:
        jenergy = energy_fn(jnp.einsum, jnp.sum)
        gpu = jax.devices("gpu")[0]
        jts, jws = [jax.device_put(k, gpu) for k in ket], [jax.device_put(w, gpu) for w in mpo]
        jvg = jax.jit(jax.value_and_grad(lambda t: jenergy(t, jws)))
        captured["JAX GPU jit"] = median_time(lambda: jvg(jts), repeat=9)
    plain.update({k: v for k, v in captured.items() if k not in ("tenferro GPU", "tenferro CPU")})
    return captured, plain


# --------------------------------------------------------------------------- small-op loop
def loop_fn(tanh: Callable, sum_: Callable, steps: int = 300) -> Callable:
    def loss(W, x):
        for _ in range(steps):
            x = tanh(W @ x) + x
        return sum_(x * x)

    return loss


def bench_loop_jit(steps: int) -> tuple[dict[str, float | None], dict[str, float | None]]:
    """The small-op loop's value and gradient compiled (see the module), like :func:`bench_mps_jit`."""
    rng = np.random.default_rng(0)
    W0, x0 = rng.standard_normal((8, 8)) * (0.5 / np.sqrt(8)), rng.standard_normal(8) * 0.1
    loss = loop_fn(tf.tanh, tf.sum, steps)
    W, x = tf.asarray(W0, placement=tf.gpu(0)), tf.asarray(x0, placement=tf.gpu(0))
    captured: dict[str, float | None] = {"tenferro CPU": None}
    plain: dict[str, float | None] = {"tenferro CPU": None}
    for out, graph in ((captured, True), (plain, False)):
        step = tf.jit(tidu.value_and_grad(loss, argnums=(0, 1)), cuda_graph=graph)
        step(W, x)
        out["tenferro GPU"] = median_time(lambda step=step: step(W, x), repeat=9)
        print(
            f"  loop tenferro.jit(cuda_graph={graph}): {fmt(out['tenferro GPU'])}, {step.lower(W, x).cuda_graph}",
            flush=True,
        )
    if torch is not None and torch.cuda.is_available():
        tloss = loop_fn(torch.tanh, torch.sum, steps)
        tW, tx = torch.tensor(W0, device="cuda"), torch.tensor(x0, device="cuda")
        try:
            t0 = time.perf_counter()
            tvg = torch.compile(torch.func.grad_and_value(tloss, argnums=(0, 1)), mode="reduce-overhead")
            for _ in range(3):
                tvg(tW, tx)
            print(f"  loop torch.compile: compiled and recorded in {time.perf_counter() - t0:.0f} s", flush=True)
            captured["torch CUDA"] = median_time(lambda: tvg(tW, tx), repeat=9)
        except Exception as exc:  # noqa: BLE001  (any compiler failure: report it, keep going)
            print(f"  loop torch.compile failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            captured["torch CUDA"] = None
    if jax is not None:
        gpu = jax.devices("gpu")[0]
        jW, jx = jax.device_put(W0, gpu), jax.device_put(x0, gpu)
        jvg = jax.jit(jax.value_and_grad(loop_fn(jnp.tanh, jnp.sum, steps), argnums=(0, 1)))
        captured["JAX GPU jit"] = median_time(lambda: jvg(jW, jx), repeat=9)
    plain.update({k: v for k, v in captured.items() if k not in ("tenferro GPU", "tenferro CPU")})
    return captured, plain


# --------------------------------------------------------------------------- SVD loss
def bench_svd(n: int) -> dict[str, float | None]:
    a = np.random.default_rng(1).standard_normal((n, n))
    out: dict[str, float | None] = {}
    g = tf.asarray(a, placement=tf.gpu(0))
    vg = tidu.value_and_grad(lambda x: tf.sum(tf.linalg.svdvals(x)))
    out["tenferro GPU"] = median_time(lambda: vg(g), repeat=3, budget=20)
    if torch is not None and torch.cuda.is_available():
        t = torch.tensor(a, device="cuda")

        def torch_vg():
            x = t.detach().requires_grad_(True)
            v = torch.linalg.svdvals(x).sum()
            return v, torch.autograd.grad(v, x)

        out["torch CUDA"] = median_time(torch_vg, repeat=3, budget=20)
    if jax is not None:
        x = jax.device_put(a, jax.devices("gpu")[0])
        jvg = jax.jit(jax.value_and_grad(lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False))))
        out["JAX GPU jit"] = median_time(lambda: jvg(x), repeat=3, budget=20)
    return out


# --------------------------------------------------------------------------- einsum cases
def einsum_cases() -> list[tuple[str, str, list[np.ndarray]]]:
    from einsum import mps_mpo_mps, mps_norm

    rng = np.random.default_rng(2)
    out = []
    for maker, kw in ((mps_norm, {"chi": 256}), (mps_mpo_mps, {"chi": 256})):
        name, eq, arrs, _ = maker(rng=rng, **kw)
        out.append((name, eq, arrs))
    out.append(
        (
            "batched matmul chain b=64 n=256",
            "bij,bjk,bkl->bil",
            [rng.standard_normal((64, 256, 256)) / 16 for _ in range(3)],
        )
    )
    n = 4096
    out.append(
        (
            f"hyper-edge ik,k,kj->ij n={n}",
            "ik,k,kj->ij",
            [rng.standard_normal((n, n)), rng.standard_normal(n), rng.standard_normal((n, n))],
        )
    )
    return out


def bench_einsum(eq: str, arrs: list[np.ndarray]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name, where in (("tenferro GPU", tf.gpu(0)), ("tenferro CPU", tf.CPU)):
        xs = [tf.asarray(a, placement=where) for a in arrs]
        vg = tidu.value_and_grad(lambda *ops: tf.sum(tf.einsum(eq, *ops)), argnums=tuple(range(len(xs))))
        out[name] = median_time(lambda: vg(*xs), repeat=5)
    if torch is not None and torch.cuda.is_available():
        ts = [torch.tensor(a, device="cuda") for a in arrs]

        def torch_vg():
            xs = [t.detach().requires_grad_(True) for t in ts]
            v = torch.einsum(eq, *xs).sum()
            return v, torch.autograd.grad(v, xs)

        out["torch CUDA"] = median_time(torch_vg, repeat=5)
    if jax is not None:
        js = [jax.device_put(a, jax.devices("gpu")[0]) for a in arrs]
        jvg = jax.jit(jax.value_and_grad(lambda *ops: jnp.sum(jnp.einsum(eq, *ops)), argnums=tuple(range(len(js)))))
        out["JAX GPU jit"] = median_time(lambda: jvg(*js), repeat=5)
    return out


# --------------------------------------------------------------------------- report
COLUMNS = ["tenferro GPU", "tenferro CPU", "torch CUDA", "JAX GPU jit"]


def fmt(t: float | None) -> str:
    if t is None:
        return "n/a"
    return f"{t * 1e3:.2f} ms" if t < 1 else f"{t:.2f} s"


def row(case: str, times: dict[str, float | None]) -> str:
    ours = times["tenferro GPU"]
    cells = [fmt(times.get(c)) for c in COLUMNS]
    ratios = [f"{ours / times[c]:.2f}x" if times.get(c) else "n/a" for c in COLUMNS[1:]]
    return f"| {case} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke test)")
    parser.add_argument("--loop-steps", type=int, default=100, help="steps of the loopjit loop (default 100)")
    parser.add_argument(
        "--cases",
        default="mps,svd,einsum,mpsjit,loopjit",
        help="comma-separated groups to run: mps, svd, einsum, mpsjit, loopjit (default: all)",
    )
    args = parser.parse_args()
    if cupy is None:
        sys.exit("benchmarks/gpu.py needs CuPy and a GPU (the 'gpu' extra)")
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(
        f"GPU: {props['name'].decode()} | CuPy {cupy.__version__} | CUDA runtime "
        f"{cupy.cuda.runtime.runtimeGetVersion()} | torch {getattr(torch, '__version__', '-')} | "
        f"JAX {getattr(jax, '__version__', '-')} | Python {platform.python_version()}"
    )
    print("(tenferro CPU: one core, one BLAS thread)")
    print("| case | " + " | ".join(COLUMNS) + " | GPU/CPU | GPU/torch | GPU/JAX |")
    print("|---" * (1 + len(COLUMNS) + 3) + "|")
    groups = set(args.cases.split(","))
    chis = (16, 32) if args.quick else (128, 256, 512)
    for chi in chis if "mps" in groups else ():
        print(row(f"MPS energy value_and_grad L=16 chi={chi} D=5", bench_mps(chi)), flush=True)
    for chi in chis if "mpsjit" in groups else ():
        captured, plain = bench_mps_jit(chi)
        print(row(f"MPS energy jit L=16 chi={chi} (CUDA graph; torch: compile reduce-overhead)", captured), flush=True)
        print(row(f"MPS energy jit L=16 chi={chi} (cuda_graph=False)", plain), flush=True)
    if "loopjit" in groups:
        n = args.loop_steps
        captured, plain = bench_loop_jit(n)
        print(row(f"loop {n}x tanh(W@x)+x jit (CUDA graph; torch: compile reduce-overhead)", captured), flush=True)
        print(row(f"loop {n}x tanh(W@x)+x jit (cuda_graph=False)", plain), flush=True)
    if "svd" in groups:
        n = 256 if args.quick else 4096
        t = bench_svd(n)
        t.setdefault("tenferro CPU", None)
        print(row(f"SVD loss sum(svdvals) {n}x{n}", t), flush=True)
    for name, eq, arrs in einsum_cases() if not args.quick and "einsum" in groups else []:
        print(row(f"einsum {name}", bench_einsum(eq, arrs)), flush=True)


if __name__ == "__main__":
    main()
