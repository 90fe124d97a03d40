"""Benchmark of the matrix functions of tenferro.linalg, float64, single-threaded:
``value_and_grad`` of ``sum(C * F(A))`` for ``F = sqrtm_psd`` (Daleckii–Krein rule)
against the same function built from ``eigh`` (``V sqrt(w) V^H``) in tenferro,
PyTorch and JAX (jit), and for ``F = polar(.)[0]`` against ``U Vh`` from ``svd``;
``hvp`` of the sqrtm loss; general ``sqrtm``/``logm``. Medians of several rounds.
Ratios are ``funm / eigh-based`` (the eigh-based gradients are not exact at
degenerate spectra; the funm ones are). Run: ``python benchmarks/funm.py``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt_time, median_time  # noqa: E402

import tenferro as tf  # noqa: E402
import tenferro.linalg as la  # noqa: E402
import tidu  # noqa: E402

from _peers import jax, jnp, torch  # noqa: E402  (None when not installed)


def _pd(n, rng):
    b = rng.standard_normal((n, n))
    return b @ b.T / n + np.eye(n)


def _tenferro(n, rng):
    a, c = _pd(n, rng), rng.standard_normal((n, n))
    A, C = tf.asarray(a), tf.asarray(c)

    def sqrt_eigh(x):
        w, v = la.eigh(x)
        return tf.sum(((v * tf.sqrt(w)[None, :]) @ tf.transpose(v)) * C)

    def polar_svd(x):
        u, _, vh = la.svd(x)
        return tf.sum((u @ vh) * C)

    g = rng.standard_normal((n, n))
    G = tf.asarray(g)
    rows = {
        "sqrtm_psd value": median_time(lambda: la.sqrtm_psd(A)),
        "sqrtm_psd value_and_grad": median_time(lambda: tidu.value_and_grad(lambda x: tf.sum(la.sqrtm_psd(x) * C))(A)),
        "eigh-based value_and_grad": median_time(lambda: tidu.value_and_grad(sqrt_eigh)(A)),
        "sqrtm_psd hvp": median_time(lambda: tidu.hvp(lambda x: tf.sum(la.sqrtm_psd(x) * C), (A,), (C,))),
        "polar value_and_grad": median_time(lambda: tidu.value_and_grad(lambda x: tf.sum(la.polar(x)[0] * C))(G)),
        "svd U Vh value_and_grad": median_time(lambda: tidu.value_and_grad(polar_svd)(G)),
    }
    if n <= 64:
        s = tf.asarray(g + 2 * np.sqrt(n) * np.eye(n))
        rows["sqrtm (general) value_and_grad"] = median_time(
            lambda: tidu.value_and_grad(lambda x: tf.sum(la.sqrtm(x) * C))(s), repeat=3
        )
        rows["logm (general) value_and_grad"] = median_time(
            lambda: tidu.value_and_grad(lambda x: tf.sum(la.logm(x) * C))(s), repeat=3
        )
    return rows, a, c


def _peers(a, c):
    out = {}
    if torch is not None:
        A, C = torch.tensor(a, requires_grad=True), torch.tensor(c)

        def step():
            w, v = torch.linalg.eigh(A)
            loss = ((v * w.sqrt()) @ v.T * C).sum()
            (grad,) = torch.autograd.grad(loss, A)
            return loss, grad

        out["torch eigh-based value_and_grad"] = median_time(step)
    if jax is not None:

        def loss(x):
            w, v = jnp.linalg.eigh(x)
            return ((v * jnp.sqrt(w)) @ v.T * c).sum()

        f = jax.jit(jax.value_and_grad(loss))
        x = jnp.asarray(a)
        out["jax eigh-based value_and_grad"] = median_time(lambda: jax.block_until_ready(f(x)))
    return out


def main() -> None:
    rng = np.random.default_rng(0)
    warnings.simplefilter("ignore")
    for n in (16, 64, 256):
        rows, a, c = _tenferro(n, rng)
        rows.update(_peers(a, c))
        print(f"\nn = {n}")
        for name, t in rows.items():
            print(f"  {name:34s} {fmt_time(t)}")


if __name__ == "__main__":
    main()
