"""Benchmark of tenferro.einsum against numpy.einsum, opt_einsum, PyTorch and JAX
(jit), forward and forward+gradient, float64, single-threaded.

Run: ``python benchmarks/einsum.py`` (needs the ``bench`` extra: torch, jax).
Times are the best of several repeats (microseconds). Ratios are
``tenferro / other`` (below 1 means tenferro is faster). ``raw`` is the same
contraction written as the minimal sequence of NumPy BLAS calls
(``tensordot``/``matmul``/``trace``/``diag``) with everything precomputed.

Every framework reuses its contraction path, as tenferro caches its plan: the
``np+path`` column is ``np.einsum(eq, *ops, optimize=path)`` with ``path`` from
``np.einsum_path(..., optimize=True)`` computed once, and ``oe expr`` calls an
``opt_einsum.contract_expression`` built once; both are built outside the timing.
JAX's ``jit`` fixes the path at trace time. ``torch.einsum`` has no API for a
cached path, so its column includes torch's own path search on every call.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_ENABLE_X64", "1")

import string  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import opt_einsum as oe  # noqa: E402

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402

from _peers import jax, jnp, torch  # noqa: E402  (None when not installed)

LETTERS = string.ascii_letters


def best(fn, min_time: float = 0.2, repeats: int = 5) -> float:
    """Best per-call time (seconds) of ``fn`` over ``repeats`` batches."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / repeats or n > 1 << 20:
            break
        n *= 2
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return min(times)


# ---------------------------------------------------------------------------
# cases: (name, equation, arrays, number of leading operands differentiated, raw fn)
# ---------------------------------------------------------------------------
def mps_norm(L=16, d=2, chi=64, rng=None):
    a = LETTERS[: L + 1]
    b = LETTERS[L + 1 : 2 * L + 2]
    s = LETTERS[2 * L + 2 : 3 * L + 2]
    dims = [1] + [chi] * (L - 1) + [1]
    kets = [rng.standard_normal((dims[i], d, dims[i + 1])) / np.sqrt(chi) for i in range(L)]
    terms = [a[i] + s[i] + a[i + 1] for i in range(L)] + [b[i] + s[i] + b[i + 1] for i in range(L)]
    return f"mps norm L={L} chi={chi}", ",".join(terms) + "->", kets + [k.copy() for k in kets], L


def mps_mpo_mps(L=8, d=2, chi=64, D=5, rng=None):
    a, w, b = LETTERS[: L + 1], LETTERS[L + 1 : 2 * L + 2], LETTERS[2 * L + 2 : 3 * L + 3]
    s, t = LETTERS[3 * L + 3 : 4 * L + 3], LETTERS[4 * L + 3 : 5 * L + 3]
    dims = [1] + [chi] * (L - 1) + [1]
    wd = [1] + [D] * (L - 1) + [1]
    kets = [rng.standard_normal((dims[i], d, dims[i + 1])) / np.sqrt(chi) for i in range(L)]
    mpo = [rng.standard_normal((wd[i], d, d, wd[i + 1])) / np.sqrt(D) for i in range(L)]
    terms = (
        [a[i] + s[i] + a[i + 1] for i in range(L)]
        + [w[i] + s[i] + t[i] + w[i + 1] for i in range(L)]
        + [b[i] + t[i] + b[i + 1] for i in range(L)]
    )
    return f"mps-mpo-mps L={L} chi={chi} D={D}", ",".join(terms) + "->", kets + mpo + [k.copy() for k in kets], L


def raw_program(eq: str, arrays):
    """The contraction as precomputed np.tensordot calls along opt_einsum's path."""
    ins, out = eq.split("->")
    terms = ins.split(",")
    path, _ = oe.contract_path(eq, *arrays, optimize="auto")
    prog = []
    labels = list(terms)
    for i, j in path:
        la, lb = labels[i], labels[j]
        rest = set(out).union(*[l for k, l in enumerate(labels) if k not in (i, j)])
        shared = [c for c in la if c in lb]
        assert all(c not in rest for c in shared), "raw program: hyper-edge"
        axes = ([la.index(c) for c in shared], [lb.index(c) for c in shared])
        new = "".join(c for c in la if c not in shared) + "".join(c for c in lb if c not in shared)
        prog.append((i, j, axes))
        for k in sorted((i, j), reverse=True):
            labels.pop(k)
        labels.append(new)

    def run(*xs):
        vals = list(xs)
        for i, j, axes in prog:
            a, b = vals[i], vals[j]
            for k in sorted((i, j), reverse=True):
                vals.pop(k)
            vals.append(np.tensordot(a, b, axes))
        return vals[0]

    return run


def cases(rng):
    out = []
    name, eq, arrs, nk = mps_norm(rng=rng)
    out.append((name, eq, arrs, nk, raw_program(eq, arrs)))
    name, eq, arrs, nk = mps_mpo_mps(rng=rng)
    out.append((name, eq, arrs, nk, raw_program(eq, arrs)))
    bm = [rng.standard_normal((32, 64, 64)) / 8 for _ in range(3)]
    out.append(
        ("batched matmul chain b=32 n=64", "bij,bjk,bkl->bil", bm, 3, lambda x, y, z: np.matmul(np.matmul(x, y), z))
    )
    n = 1000
    hy = [rng.standard_normal((n, n)), rng.standard_normal(n), rng.standard_normal((n, n))]
    out.append(("hyper-edge ik,k,kj->ij n=1000", "ik,k,kj->ij", hy, 3, lambda u, s, v: np.dot(u * s, v)))
    out.append(("trace ii-> n=1000", "ii->", [rng.standard_normal((n, n))], 1, np.trace))
    out.append(("diag embed i->ii n=1000", "i->ii", [rng.standard_normal(n)], 1, np.diag))
    small_eq = "abc,cde,efg,ghi,ijk,klm,mno,opa->bdfhjlnp"
    small = [rng.standard_normal((2, 2, 2)) for _ in range(8)]
    out.append(("8 x (2,2,2) ring", small_eq, small, 8, raw_program(small_eq, small)))
    return out


def scalar_loss(x):
    return x if x.ndim == 0 else x.sum()


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for name, eq, arrays, nk, raw in cases(rng):
        tens = [tf.asarray(a) for a in arrays]
        np_arrays = [np.asarray(t) for t in tens]  # the same column-major buffers for NumPy / opt_einsum
        embed = eq == "i->ii"  # NumPy, opt_einsum, torch and JAX reject repeated output labels
        want = np.diag(arrays[0]) if embed else np.einsum(eq, *arrays, optimize=True)
        got = tf.einsum(eq, *tens)
        atol = 1e-8 * max(1.0, float(np.abs(want).max(initial=0)))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-8, atol=atol)
        r = {"case": name}
        r["tf"] = best(lambda: tf.einsum(eq, *tens))
        r["raw"] = best(lambda: raw(*np_arrays))
        if embed:
            r["numpy"] = r["oe"] = None
        else:  # paths searched once, outside the timing (tenferro's plan is cached too)
            np_path = np.einsum_path(eq, *np_arrays, optimize=True)[0]
            expr = oe.contract_expression(eq, *(a.shape for a in np_arrays))
            np.testing.assert_allclose(np.einsum(eq, *np_arrays, optimize=np_path), want, rtol=1e-8, atol=atol)
            np.testing.assert_allclose(expr(*np_arrays), want, rtol=1e-8, atol=atol)
            r["numpy"] = best(lambda: np.einsum(eq, *np_arrays, optimize=np_path))
            r["oe"] = best(lambda: expr(*np_arrays))

        def tf_loss(*xs):
            return scalar_loss(tf.einsum(eq, *xs, *tens[nk:]))

        tf_grad = tidu.grad(tf_loss, argnums=tuple(range(nk)))
        r["tf_g"] = best(lambda: tf_grad(*tens[:nk]))
        if torch is not None:
            tt = [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]
            t_ein = (lambda x: torch.diag(x)) if embed else (lambda *xs: torch.einsum(eq, *xs))
            r["torch"] = best(lambda: t_ein(*tt))
            leaves = [t.clone().requires_grad_(True) for t in tt[:nk]]

            def torch_g():
                for t in leaves:
                    t.grad = None
                loss = t_ein(*leaves, *tt[nk:])
                (loss if loss.ndim == 0 else loss.sum()).backward()
                return [t.grad for t in leaves]

            r["torch_g"] = best(torch_g)
        if jax is not None:
            ja = [jnp.asarray(a) for a in arrays]
            j_ein = (lambda x: jnp.diag(x)) if embed else (lambda *xs: jnp.einsum(eq, *xs))
            jf = jax.jit(j_ein)
            r["jax"] = best(lambda: jf(*ja).block_until_ready())
            jg = jax.jit(jax.grad(lambda *xs: jnp.sum(j_ein(*xs, *ja[nk:])), argnums=tuple(range(nk))))
            r["jax_g"] = best(lambda: jax.block_until_ready(jg(*ja[:nk])))
        rows.append(r)
        print(f"  done: {name}", flush=True)

    us = lambda t: f"{t * 1e6:10.1f}" if t is not None else "       n/a"  # noqa: E731
    ratio = lambda a, b: f"{a / b:6.2f}" if b else "   n/a"  # noqa: E731
    print(
        "(diag embed: torch.diag / jnp.diag stand in for einsum, which those libraries reject for 'i->ii';"
        " NumPy and opt_einsum have no equivalent einsum: n/a)"
    )
    print(
        "(np+path: np.einsum with a path from np.einsum_path; oe expr: opt_einsum.contract_expression;"
        " both searched once, outside the timing; torch.einsum searches its path on every call)"
    )
    head = (
        f"{'case':34s} {'tf fwd':>10s} {'raw np':>10s} {'np+path':>10s} {'oe expr':>10s} {'torch':>10s}"
        f" {'jax-jit':>10s} | {'/raw':>6s} {'/np':>6s} {'/oe':>6s} {'/torch':>6s} {'/jax':>6s}"
    )
    print("\nforward (us, best of 5; ratios = tenferro / other)")
    print(head)
    for r in rows:
        print(
            f"{r['case']:34s} {us(r['tf'])} {us(r['raw'])} {us(r['numpy'])} {us(r['oe'])} {us(r.get('torch'))}"
            f" {us(r.get('jax'))} | {ratio(r['tf'], r['raw'])} {ratio(r['tf'], r['numpy'])} {ratio(r['tf'], r['oe'])}"
            f" {ratio(r['tf'], r.get('torch'))} {ratio(r['tf'], r.get('jax'))}"
        )
    print("\nforward + gradient (us)")
    print(f"{'case':34s} {'tf':>10s} {'torch':>10s} {'jax-jit':>10s} | {'/torch':>6s} {'/jax':>6s}")
    for r in rows:
        print(
            f"{r['case']:34s} {us(r['tf_g'])} {us(r.get('torch_g'))} {us(r.get('jax_g'))} |"
            f" {ratio(r['tf_g'], r.get('torch_g'))} {ratio(r['tf_g'], r.get('jax_g'))}"
        )
    print(f"\ncache: {tf.einsum_cache_info()}")


if __name__ == "__main__":
    main()
