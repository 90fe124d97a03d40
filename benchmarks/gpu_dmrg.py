"""DMRG on a GPU against DMRG on all of the machine's CPU cores: the Heisenberg chain
L = 100 at chi = 1024 and 2048 (two-site, float64), tensor4all's dense sweep kernels on
CuPy (``placement=tenferro.gpu(0)``) and on NumPy/BLAS with every core.

A sweep at chi = 2048 costs minutes on the CPU, so the CPU is measured on the steps that
dominate a sweep: a two-site step in the middle of the chain, where both bonds are at chi
(build the effective Hamiltonian, a fixed number of Lanczos products, the truncated split
of the (2 chi) x (2 chi) matrix back to chi, the environment update), from random tensors
of the right shapes (the cost of each piece does not depend on the values). The GPU is
measured on the same steps, and on a whole sweep of the real chain (``dmrg`` itself,
``placement=gpu(0)``, from a random state already at chi, the Lanczos products per step
fixed at the same number). The per-sweep figure of the CPU is its step time times the
steps of a sweep at which both bonds are at chi (the others are cheaper: a lower bound).

``--sym CHI`` adds the symmetric run: ``dmrg(..., conserve="Sz")`` of the same chain on the
GPU and on the CPU cores, three sweeps (bond schedule 64, 256, CHI, the default noise), each
sweep's seconds and the final energies side by side (the block-sparse kernels: one GEMM per
MPO state and sector, one SVD per sector).

Usage (on a machine with a GPU and CuPy): ``python benchmarks/gpu_dmrg.py [--quick]
[--chis 1024,2048] [--matvecs 4] [--sym 512]``. Prints one table row per chi.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tenferro as tf  # noqa: E402
import tensor4all as t4a  # noqa: E402
from tensor4all import models  # noqa: E402
from tensor4all.linalg import eigensolver as _eigensolver  # noqa: E402  (a fixed-length Lanczos is registered below)
from tensor4all.tools.device import synchronize, to_device  # noqa: E402  (the sweep kernels themselves)
from tensor4all.algorithms.effective import TwoSiteOperator  # noqa: E402
from tensor4all.linalg.eigensolver import lanczos  # noqa: E402
from tensor4all.networks.environments import left_step  # noqa: E402
from tensor4all.linalg.truncation import split  # noqa: E402

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None


def heisenberg_w() -> np.ndarray:
    """The bulk MPO tensor of the Heisenberg chain, (left, out, in, right), bond dimension 5."""
    sz = np.diag([0.5, -0.5])
    sp = np.array([[0.0, 1.0], [0.0, 0.0]])
    w = np.zeros((5, 2, 2, 5))
    w[0, :, :, 0] = w[4, :, :, 4] = np.eye(2)
    w[0, :, :, 1], w[0, :, :, 2], w[0, :, :, 3] = 0.5 * sp, 0.5 * sp.T, sz
    w[1, :, :, 4], w[2, :, :, 4], w[3, :, :, 4] = sp.T, sp, sz
    return w


def middle_step(chi: int, placement: tf.Placement, matvecs: int, rng: np.random.Generator) -> float:
    """Seconds of one two-site step with both bonds at ``chi`` (median of a few)."""
    w = heisenberg_w()
    dw, d = w.shape[0], w.shape[1]
    host = [
        rng.standard_normal((chi, dw, chi)) / chi,
        rng.standard_normal((dw, chi, chi)) / chi,
        rng.standard_normal((chi, d, chi)) / math.sqrt(chi),
        rng.standard_normal((chi, d, chi)) / math.sqrt(chi),
    ]
    lb, rb, a, b = to_device(host, placement)
    ww = to_device([w], placement)[0]
    times = []
    for _ in range(3):
        synchronize(lb)
        t0 = time.perf_counter()
        theta = (a.reshape(chi * d, chi) @ b.reshape(chi, d * chi)).reshape(-1)
        op = TwoSiteOperator(lb, ww, ww, rb)
        _, v, _ = lanczos(op, theta, tol=0.0, max_iter=matvecs, min_iter=matvecs)
        left, right, _ = split(v.reshape(chi * d, d * chi), "right", chi, 0.0)
        left_step(lb, left.reshape(chi, d, -1), ww)
        synchronize(left)
        times.append(time.perf_counter() - t0)
        if sum(times) > 60:
            break
    return statistics.median(times)


def gpu_sweep(L: int, chi: int, matvecs: int) -> tuple[float, float]:
    """Seconds of one whole dmrg sweep on GPU 0 (random start at chi, fixed products per step),
    and the seconds to set the run up (upload, canonical form, environments)."""
    H = models.heisenberg(L)
    rng = np.random.default_rng(1)
    dims = [min(chi, 2**i, 2 ** (L - i)) for i in range(L + 1)]
    # random Gaussian sites, not canonicalized on the host (dmrg brings them to canonical form on the GPU)
    psi0 = t4a.MPS([rng.standard_normal((dims[i], 2, dims[i + 1])) / math.sqrt(2 * dims[i]) for i in range(L)])
    seconds = []
    t0 = time.perf_counter()
    res = t4a.dmrg(
        H,
        psi0,
        max_bond=chi,
        sweeps=1,
        cutoff=0.0,
        noise=0.0,
        tol=0.0,
        conserve="none",
        placement=tf.gpu(0),
        compute_variance=False,
        eigensolver=_fixed(matvecs),
        callback=lambda r: seconds.append(r.seconds),
    )
    total = time.perf_counter() - t0
    if res.history[0].max_bond != chi:
        print(
            f"  (the sweep at chi={chi} ended at bond dimension {res.history[0].max_bond}: weights that round to 0 "
            "are dropped)",
            flush=True,
        )
    return seconds[0], total - seconds[0]


def _fixed(matvecs: int) -> str:
    """Register (once) a Lanczos solver that always takes ``matvecs`` products."""
    name = f"lanczos{matvecs}"
    _eigensolver.SOLVERS[name] = lambda op, v0, tol=0.0, max_iter=0: lanczos(
        op, v0, tol=0.0, max_iter=matvecs, min_iter=matvecs
    )
    return name


def symmetric_run(L: int, chi: int, placement: tf.Placement) -> tuple[list[float], float]:
    """Seconds of each sweep of a conserved (Sz = 0) run with the bond schedule 64, 256, chi, and
    its final energy."""
    H = models.heisenberg(L, conserve="Sz")
    res = t4a.dmrg(H, max_bond=[64, 256, chi], sweeps=3, cutoff=1e-12, placement=placement, compute_variance=False)
    return [r.seconds for r in res.history], float(res.energy)


def full_chi_steps(L: int, chi: int) -> int:
    """The steps of a two-site sweep whose bonds on both sides are at ``chi``."""
    dims = [min(chi, 2**i, 2 ** (L - i)) for i in range(L + 1)]
    pairs = [i for i in range(L - 1) if dims[i] == chi and dims[i + 2] == chi]
    return 2 * len(pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="chi 64, 128 (a smoke test)")
    parser.add_argument("--chis", default="1024,2048")
    parser.add_argument("--L", type=int, default=100)
    parser.add_argument("--matvecs", type=int, default=4, help="Lanczos products per step (default 4)")
    parser.add_argument(
        "--sym",
        type=int,
        default=0,
        metavar="CHI",
        help="also time a conserved (Sz) run up to CHI on the GPU and the CPU cores (0: skip)",
    )
    parser.add_argument("--sweep-chis", default="1024", help="the chis of the whole GPU sweep (default 1024)")
    args = parser.parse_args()
    chis = [64, 128] if args.quick else [int(c) for c in args.chis.split(",")]
    sweep_chis = chis if args.quick else [int(c) for c in args.sweep_chis.split(",") if c]
    import cupy  # noqa: PLC0415  (optional: the GPU)

    props = cupy.cuda.runtime.getDeviceProperties(0) if not getattr(cupy, "FAKE", False) else {"name": b"fake"}
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"GPU: {props['name'].decode()} | CuPy {cupy.__version__} | NumPy {np.__version__} | CPU cores {cores}")
    print(f"| chi | CPU step ({cores} cores) | GPU step | CPU/GPU | GPU sweep L={args.L} | CPU sweep est. | setup |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for chi in chis:
        with threadpool_limits(limits=cores, user_api="blas") if threadpool_limits else contextlib.nullcontext():
            t_cpu = middle_step(chi, tf.CPU, args.matvecs, rng)
        t_gpu = middle_step(chi, tf.gpu(0), args.matvecs, rng)
        sweep, setup = gpu_sweep(args.L, chi, args.matvecs) if chi in sweep_chis else (float("nan"), float("nan"))
        est = full_chi_steps(args.L, chi) * t_cpu
        print(
            f"| {chi} | {t_cpu:.3f} s | {t_gpu:.3f} s | {t_cpu / t_gpu:.1f}x | {sweep:.1f} s | >= {est:.1f} s | "
            f"{setup:.1f} s |",
            flush=True,
        )
    if args.sym:
        print(f"\nconserved Sz = 0, L={args.L}, bond schedule 64, 256, {args.sym}: seconds per sweep")
        print("| placement | sweep 1 | sweep 2 | sweep 3 | energy |")
        print("|---|---|---|---|---|")
        for name, where in (("GPU", tf.gpu(0)), (f"CPU ({cores} cores)", tf.CPU)):
            with threadpool_limits(limits=cores, user_api="blas") if threadpool_limits else contextlib.nullcontext():
                secs, e = symmetric_run(args.L, args.sym, where)
            print(f"| {name} | " + " | ".join(f"{t:.1f} s" for t in secs) + f" | {e:.10f} |", flush=True)


if __name__ == "__main__":
    main()
