"""Structured vs dense: diagonal and block-diagonal operands against the same computation
on their dense matrices, float64, single-threaded BLAS.

Cases (each as value and as value_and_grad of a scalar loss; gradients with respect
to the structured operand's leaves vs the dense matrix):

* diagonal (n=2000): ``D @ X`` with X dense 2000x2000, and the reconstruction
  ``U S Vh`` with S diagonal (structured: ``einsum("ik,k,kj->ij")``; dense: S
  materialized as an n x n matrix and two GEMMs);
* block-diagonal, 16 blocks of 128 (2048x2048): ``B @ B``, ``svd``, ``eigh``,
  ``solve`` with an 2048x8 right-hand side; and ``B @ X`` with X dense 2048x2048.

Times are medians of several runs; ratio = dense / structured (above 1: structured
faster). Run: ``python benchmarks/structured.py [--quick]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402
import tensor4all as t4a  # noqa: E402
from tensor4all import BlockDiagonal, DiagonalTensor  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import median_time  # noqa: E402


def fmt(t: float) -> str:
    return f"{t * 1e3:10.2f} ms"


def sq(x: Any) -> Any:
    return tf.sum(x * x)


def cases(quick: bool) -> list[tuple[str, Callable, tuple, Callable, tuple]]:
    """(name, structured fn, structured args, dense fn, dense args); each fn returns a scalar
    loss when called through ``loss=True``."""
    rng = np.random.default_rng(0)
    n = 500 if quick else 2000
    nb, bs = 16, (32 if quick else 128)
    N = nb * bs

    d = DiagonalTensor(tf.asarray(rng.standard_normal(n)))
    x = tf.asarray(rng.standard_normal((n, n)))
    u = tf.asarray(rng.standard_normal((n, n)))
    s = tf.asarray(rng.random(n))
    vh = tf.asarray(rng.standard_normal((n, n)))

    blocks = [rng.standard_normal((bs, bs)) for _ in range(nb)]
    b = BlockDiagonal([tf.asarray(m + bs**0.5 * np.eye(bs)) for m in blocks])
    h = BlockDiagonal([tf.asarray(m + m.T) for m in blocks])
    bd, hd = b.to_dense(), h.to_dense()
    rhs = tf.asarray(rng.standard_normal((N, 8)))
    xb = tf.asarray(rng.standard_normal((N, N)))

    def usv_struct(u, s, vh):
        return t4a.einsum("ik,k,kj->ij", u, s, vh)

    def usv_dense(u, s, vh):
        return tf.matmul(tf.matmul(u, tf.embed_diag(s)), vh)

    def svd_loss(a):
        return tf.sum(t4a.linalg.svd(a)[1])

    def eigh_loss(a):
        w, _ = t4a.linalg.eigh(a)
        return tf.sum(w * w * w)

    return [
        (f"diag@dense n={n}", lambda d, x: sq(d @ x), (d, x), lambda a, x: sq(a @ x), (d.to_dense(), x)),
        (f"U S Vh n={n}", lambda *a: sq(usv_struct(*a)), (u, s, vh), lambda *a: sq(usv_dense(*a)), (u, s, vh)),
        (f"block@block {nb}x{bs}", lambda a: sq(a @ a), (b,), lambda a: sq(a @ a), (bd,)),
        (f"block svd {nb}x{bs}", svd_loss, (b,), svd_loss, (bd,)),
        (f"block eigh {nb}x{bs}", eigh_loss, (h,), eigh_loss, (hd,)),
        (
            f"block solve {nb}x{bs}, 8 rhs",
            lambda a, r: sq(t4a.linalg.solve(a, r)),
            (b, rhs),
            lambda a, r: sq(t4a.linalg.solve(a, r)),
            (bd, rhs),
        ),
        (f"block@dense {nb}x{bs} @ {N}x{N}", lambda a, x: sq(a @ x), (b, xb), lambda a, x: sq(a @ x), (bd, xb)),
    ]


def main() -> None:
    quick = "--quick" in sys.argv
    print("structured vs dense, float64, 1 thread; median times; ratio = dense / structured")
    print(f"{'case':34s} {'mode':15s} {'structured':>13s} {'dense':>13s} {'ratio':>8s}")
    t4a.reset_fallback_stats()
    for name, fs, args_s, fd, args_d in cases(quick):
        argnums = tuple(range(len(args_s)))
        for mode in ("value", "value_and_grad"):
            if mode == "value":
                run_s, run_d = (lambda: fs(*args_s)), (lambda: fd(*args_d))
            else:
                vg_s, vg_d = tidu.value_and_grad(fs, argnums=argnums), tidu.value_and_grad(fd, argnums=argnums)
                run_s, run_d = (lambda: vg_s(*args_s)), (lambda: vg_d(*args_d))
            ts, td = median_time(run_s, repeat=5, budget=0.5), median_time(run_d, repeat=5, budget=0.5)
            print(f"{name:34s} {mode:15s} {fmt(ts)} {fmt(td)} {td / ts:7.1f}x", flush=True)
    print(f"fallbacks to dense during the structured runs: {t4a.fallback_stats() or 'none'}")


if __name__ == "__main__":
    main()
