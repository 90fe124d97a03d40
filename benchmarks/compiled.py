"""Compiled mode: ``value_and_grad`` under ``tenferro.jit`` against tenferro eager,
PyTorch eager, ``torch.compile`` and JAX ``jit``, float64, one thread per framework.

Cases (the same maths in every framework: each loss is written once against a small
namespace of ops, and the gradient is taken with respect to every listed input):

* ``loop``: 300 steps of ``x <- tanh(W @ x) + x`` (8x8 ``W``, 8-vector ``x``), loss
  ``sum(x * x)``, gradient with respect to ``W`` and the initial ``x``;
* ``mps32``, ``mps128``: the energy <psi|H|psi> / <psi|psi> of a random real MPS
  (``tensor4all.MPS.random``, L=16, bond dimension capped at chi) in the Heisenberg
  MPO (``tensor4all.models.heisenberg``, D=5, d=2), one einsum per site for each
  environment, gradient with respect to all 16 MPS tensors (the MPO is a
  non-differentiated argument);
* ``svd``: the sum of the 16 largest singular values of a 256x256 matrix
  (``tenferro.linalg.svdvals``, ``torch.linalg.svdvals``, ``jnp.linalg.svd(compute_uv=False)``).

``tf native`` is ``tenferro.jit(..., backend="native")`` (machine code through Numba, the
``fast`` extra; NumPy fallback, with the reason, without it): for ``loop`` and ``mps32`` it is
also timed against JAX ``jit`` and the NumPy-backend jit in 15 interleaved rounds, against issue
55's targets (at most 2x and 1.0x JAX ``jit``), with its compile time and disk-cache hits (a
second run of the script loads the machine code from ``$TENFERRO_JIT_CACHE`` or
``~/.cache/tenferro/jit-native``).

For each framework: the first call (trace and compile for the compiled modes) and the
median of ``--repeat`` rounds afterwards. Ratios are tenferro jit / peer (below 1:
tenferro jit faster), checked against issue 11's targets. Every framework's value and
gradient are compared with tenferro eager (``rel diff``: the largest relative
difference of the value or of the gradient in 2-norm); the script exits with status 1
if one differs by more than 1e-8. ``torch.compile`` runs in a subprocess with an empty
inductor cache (its first call is a cold compile, as tenferro's and JAX's are); a compile
that takes longer than ``--compile-timeout`` seconds is reported as n/a with the reason.

    python benchmarks/compiled.py [--cases loop,mps32,mps128,svd] [--repeat 7] [--quick]
                                  [--compile-timeout 300] [--profile]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_ENABLE_X64", "1")
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

try:
    from threadpoolctl import threadpool_limits

    _LIMITS = threadpool_limits(1)
except ImportError:  # pragma: no cover
    _LIMITS = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _peers import jax, jnp, torch  # noqa: E402  (None when not installed)
from _timing import fmt_time, median_time  # noqa: E402

import tenferro as tf  # noqa: E402
import tenferro.linalg as la  # noqa: E402
import tensor4all as t4a  # noqa: E402
import tidu  # noqa: E402
from tensor4all import models  # noqa: E402

TOL = 1e-8  # largest accepted relative difference to tenferro eager (value, gradient 2-norm)
FRAMEWORKS = ("tf eager", "tf jit", "tf native", "torch eager", "torch.compile", "jax jit")
NATIVE_TARGETS = {"loop": 2.0, "mps32": 1.0}  # issue 55: tenferro jit(backend="native") / JAX jit at most


# --- the maths, written once -----------------------------------------------------------
@dataclass(frozen=True)
class Ops:
    """The few array functions the losses use, for one framework."""

    einsum: Callable[..., Any]
    tanh: Callable[[Any], Any]
    sum: Callable[[Any], Any]
    ones: Callable[[tuple[int, ...]], Any]  # float64
    svdvals: Callable[[Any], Any]  # descending


def _ops(name: str) -> Ops:
    if name == "tf":
        return Ops(tf.einsum, tf.tanh, tf.sum, lambda s: tf.ones(s, dtype=tf.float64), la.svdvals)
    if name == "torch":
        return Ops(
            torch.einsum, torch.tanh, torch.sum, lambda s: torch.ones(s, dtype=torch.float64), torch.linalg.svdvals
        )
    return Ops(
        jnp.einsum,
        jnp.tanh,
        jnp.sum,
        lambda s: jnp.ones(s, dtype=jnp.float64),
        lambda a: jnp.linalg.svd(a, compute_uv=False),
    )


def loop_loss(ops: Ops, steps: int = 300) -> Callable[[list, list], Any]:
    def loss(xs, cs):
        W, x = xs
        for _ in range(steps):
            x = ops.tanh(W @ x) + x
        return ops.sum(x * x)

    return loss


def mps_energy(ops: Ops) -> Callable[[list, list], Any]:
    """<psi|H|psi> / <psi|psi> for a real MPS ``xs`` (left, phys, right) and an MPO ``cs``
    (left, out, in, right): both environments grown site by site, one einsum each."""

    def loss(xs, cs):
        env, norm = ops.ones((1, 1, 1)), ops.ones((1, 1))
        for a, w in zip(xs, cs):
            env = ops.einsum("awb,asc,wstv,btd->cvd", env, a, w, a)
            norm = ops.einsum("ab,asc,bsd->cd", norm, a, a)
        return ops.sum(env) / ops.sum(norm)

    return loss


def svd_topk(ops: Ops, k: int = 16) -> Callable[[list, list], Any]:
    def loss(xs, cs):
        return ops.sum(ops.svdvals(xs[0])[:k])

    return loss


# --- cases -----------------------------------------------------------------------------
Inputs = tuple[list[np.ndarray], list[np.ndarray]]  # (differentiated, constant)


def _loop_inputs() -> Inputs:
    rng = np.random.default_rng(0)
    W = rng.standard_normal((8, 8)) * (0.5 / np.sqrt(8))
    return [W, rng.standard_normal(8) * 0.1], []


def _mps_inputs(chi: int) -> Callable[[], Inputs]:
    def make() -> Inputs:
        L = 16
        psi = t4a.MPS.random(L, d=2, bond_dim=chi, seed=1)
        return [np.asarray(t) for t in psi.tensors], [np.asarray(t) for t in models.heisenberg(L).tensors]

    return make


def _svd_inputs() -> Inputs:
    return [np.random.default_rng(2).standard_normal((256, 256))], []


@dataclass(frozen=True)
class Case:
    title: str
    make: Callable[[], Inputs]
    loss: Callable[[Ops], Callable[[list, list], Any]]
    targets: tuple[tuple[str, float], ...]  # (peer, largest accepted tenferro-jit / peer ratio)


CASES = {
    "loop": Case("loop 300x tanh(W@x)+x", _loop_inputs, loop_loss, (("torch eager", 0.5), ("jax jit", 3.0))),
    "mps32": Case("MPS energy L=16 chi=32", _mps_inputs(32), mps_energy, (("jax jit", 1.5),)),
    "mps128": Case("MPS energy L=16 chi=128", _mps_inputs(128), mps_energy, (("jax jit", 1.0),)),
    "svd": Case("svd top-16 sum 256x256", _svd_inputs, svd_topk, (("torch eager", 1.0),)),
}


# --- runners ---------------------------------------------------------------------------
@dataclass
class Result:
    first: float | None = None  # seconds, first call (trace + compile for compiled modes)
    median: float | None = None  # seconds, steady state
    value: float | None = None
    grad: np.ndarray | None = None  # all gradient entries, flattened and concatenated
    note: str = ""  # why there is no figure
    paired: dict | None = None  # the native rows: interleaved per-call times (paired_rounds)


def _flat(gs) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(g)) for g in gs])


def _measure(call: Callable[[], tuple[Any, Any]], repeat: int, budget: float) -> Result:
    t0 = time.perf_counter()
    value, grads = call()
    first = time.perf_counter() - t0
    med = median_time(call, repeat=repeat, budget=budget, warmup=False)
    return Result(first, med, float(np.asarray(value)), _flat(grads))


def run_tenferro(
    case: Case, jit: bool, repeat: int, budget: float, backend: str = "numpy"
) -> tuple[Result, Callable[[], Any], Any]:
    """The result, the timed call and the ``jf.lower(...)`` of the jitted function (``None`` eager);
    ``backend``: the jit backend (``"native"``: machine code through Numba, the ``fast`` extra)."""
    xs, cs = case.make()
    X, C = [tf.asarray(a) for a in xs], [tf.asarray(c) for c in cs]
    vg = tidu.value_and_grad(case.loss(_ops("tf")))
    if jit:
        vg = tf.jit(vg, backend=backend)
    call = lambda: vg(X, C)
    return _measure(call, repeat, budget), call, (vg.lower(X, C) if jit else None)


def run_torch(case: Case, compile: bool, repeat: int, budget: float) -> Result:
    if torch is None:
        return Result(note="PyTorch not installed")
    xs, cs = case.make()
    X = [torch.tensor(a, requires_grad=True) for a in xs]
    C = [torch.tensor(c) for c in cs]
    f = case.loss(_ops("torch"))
    if compile:
        f = torch.compile(f)

    def call():
        loss = f(X, C)
        return loss.detach(), torch.autograd.grad(loss, X)

    return _measure(call, repeat, budget)


def jax_call(case: Case) -> Callable[[], Any]:
    """One call of JAX ``jit(value_and_grad)`` on the case (compiled at its first call)."""
    xs, cs = case.make()
    X, C = [jnp.asarray(a) for a in xs], [jnp.asarray(c) for c in cs]
    vg = jax.jit(jax.value_and_grad(case.loss(_ops("jax"))))
    return lambda: jax.block_until_ready(vg(X, C))


def run_jax(case: Case, repeat: int, budget: float) -> Result:
    if jax is None:
        return Result(note="JAX not installed")
    return _measure(jax_call(case), repeat, budget)


def paired_rounds(calls: dict[str, Callable[[], Any]], rounds: int = 15, budget: float = 0.6) -> dict[str, list]:
    """Per-call times of each of ``calls`` in ``rounds`` interleaved rounds (round ``r`` of every
    call before round ``r + 1`` of any; each round one untimed call, then as many calls as last
    about ``budget / rounds`` s): on this shared host a ratio of times taken in the same round
    is steadier than a ratio of medians taken one after the other."""
    number = {}
    for name, call in calls.items():
        call()
        t0 = time.perf_counter()
        call()
        number[name] = max(1, int(budget / rounds / max(time.perf_counter() - t0, 1e-7)))
    times: dict[str, list] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            call()
            t0 = time.perf_counter()
            for _ in range(number[name]):
                call()
            times[name].append((time.perf_counter() - t0) / number[name])
    return times


def run_torch_compile(key: str, repeat: int, budget: float, timeout: float) -> Result:
    """torch.compile in a fresh subprocess with an empty inductor cache directory (so the
    first call is a cold compile, as tenferro's and JAX's are), killed after ``timeout`` s."""
    if torch is None:
        return Result(note="PyTorch not installed")
    if timeout <= 0:
        return Result(note="skipped (--compile-timeout 0)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.npz")
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--_compile-worker",
            key,
            "--_out",
            out,
            "--repeat",
            str(repeat),
            "--_budget",
            str(budget),
        ]
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"))  # a cold compile
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env
        )
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the worker's own process group
            proc.communicate()
            return Result(note=f"no result within --compile-timeout {timeout:g} s (still compiling)")
        if proc.returncode != 0:
            lines = [ln for ln in err.strip().splitlines() if ln.strip()]
            return Result(note="failed: " + (lines[-1][:160] if lines else f"exit status {proc.returncode}"))
        d = np.load(out)
        return Result(float(d["first"]), float(d["median"]), float(d["value"]), d["grad"])


def _compile_worker(key: str, out: str, repeat: int, budget: float) -> None:
    r = run_torch(CASES[key], compile=True, repeat=repeat, budget=budget)
    np.savez(out, first=r.first, median=r.median, value=r.value, grad=r.grad)


# --- report ----------------------------------------------------------------------------
def rel_diff(r: Result, ref: Result) -> float | None:
    if r.value is None or ref.value is None:
        return None
    dv = abs(r.value - ref.value) / max(abs(ref.value), 1e-300)
    dg = np.linalg.norm(r.grad - ref.grad) / max(np.linalg.norm(ref.grad), 1e-300)
    return float(max(dv, dg))


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


def _fmt_ratio(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}x"


def verdict(case: Case, res: dict[str, Result]) -> tuple[str, str]:
    """(target text, PASS / MISS / n/a) for tenferro jit against the case's targets."""
    text = ", ".join(f"<={lim:g}x {peer.split()[0]}" for peer, lim in case.targets)
    ratios = [_ratio(res["tf jit"].median, res[peer].median) for peer, _ in case.targets]
    if any(r is None for r in ratios):
        return text, "n/a"
    ok = all(r <= lim for r, (_, lim) in zip(ratios, case.targets))
    return text, "PASS" if ok else "MISS"


def print_report(rows: list[tuple[str, Case, dict[str, Result], dict[str, Any]]]) -> bool:
    """Print the tables; return whether every framework agreed with tenferro eager."""
    notes: list[str] = []

    def cell(r: Result, attr: str, key: str, fw: str) -> str:
        t = getattr(r, attr)
        if t is not None:
            return fmt_time(t).strip()
        note = f"{fw} {key}: {r.note}"
        if note not in notes:
            notes.append(note)
        return f"n/a[{notes.index(note) + 1}]"

    w = 24
    fw_head = "".join(f"{fw:>14s}" for fw in FRAMEWORKS)
    print("\nvalue_and_grad, steady state (median per call); ratios = tenferro jit / peer (< 1: jit faster)")
    print(
        f"{'case':{w}s}{fw_head}{'jit/torch':>11s}{'jit/jax':>9s}{'native/jax':>12s}  {'target':24s}{'mark':6s}"
        f"{'rel diff':>9s}"
    )
    agree = True
    for key, case, res, _ in rows:
        times = "".join(f"{cell(res[fw], 'median', key, fw):>14s}" for fw in FRAMEWORKS)
        r_torch = _ratio(res["tf jit"].median, res["torch eager"].median)
        r_jax = _ratio(res["tf jit"].median, res["jax jit"].median)
        r_native = _ratio(res["tf native"].median, res["jax jit"].median)
        target, mark = verdict(case, res)
        diffs = [d for d in (rel_diff(res[fw], res["tf eager"]) for fw in FRAMEWORKS[1:]) if d is not None]
        worst = max(diffs, default=0.0)
        agree &= worst <= TOL
        print(
            f"{case.title:{w}s}{times}{_fmt_ratio(r_torch):>11s}{_fmt_ratio(r_jax):>9s}{_fmt_ratio(r_native):>12s}"
            f"  {target:24s}{mark:6s}"
            f"{worst:>8.1e}{'' if worst <= TOL else '!'}"
        )
    native_rows = [(key, case, res) for key, case, res, _ in rows if key in NATIVE_TARGETS]
    if native_rows:
        print(
            "\nnative backend (issue 55): tenferro jit(backend='native') against JAX jit and tenferro's NumPy-backend "
            "jit,\ntimed in 15 interleaved rounds (medians; ratios: the median of the ratios within a round)"
        )
        print(
            f"{'case':{w}s}{'native':>11s}{'numpy jit':>11s}{'jax jit':>11s}{'native/jax':>12s}{'jit/jax':>9s}  target"
        )
        for key, case, res in native_rows:
            paired = res["tf native"].paired
            lim = NATIVE_TARGETS[key]
            if not paired:
                print(f"{case.title:{w}s}  n/a  {res['tf native'].note}")
                continue
            med = {k: statistics.median(v) for k, v in paired.items()}
            r_nat = statistics.median(a / b for a, b in zip(paired["native"], paired["jax"]))
            r_jit = statistics.median(a / b for a, b in zip(paired["jit"], paired["jax"]))
            mark = "PASS" if r_nat <= lim else "MISS"
            print(
                f"{case.title:{w}s}{fmt_time(med['native']):>11s}{fmt_time(med['jit']):>11s}{fmt_time(med['jax']):>11s}"
                f"{r_nat:>11.2f}x{r_jit:>8.2f}x  <={lim:g}x jax {mark}  {res['tf native'].note}"
            )
    print("\nfirst call (tenferro jit, torch.compile, jax jit: trace + compile + run)")
    print(f"{'case':{w}s}{fw_head}")
    for key, case, res, _ in rows:
        print(f"{case.title:{w}s}" + "".join(f"{cell(res[fw], 'first', key, fw):>14s}" for fw in FRAMEWORKS))
    print("\ntenferro jit program (estimates of jf.lower(...).cost())")
    print(f"{'case':{w}s}{'eqns before':>12s}{'after':>8s}{'MFLOP':>10s}{'GFLOP/s':>9s}{'peak MB':>9s}{'reused':>8s}")
    for _, case, res, cost in rows:
        if not cost:
            continue
        rate = cost["flops"] / res["tf jit"].median / 1e9
        print(
            f"{case.title:{w}s}{cost['eqns_before']:>12d}{cost['eqns']:>8d}{cost['flops'] / 1e6:>10.2f}"
            f"{rate:>9.2f}{cost['peak_bytes'] / 2**20:>9.2f}{cost['reused_buffers']:>8d}"
        )
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    print(
        f"rel diff: largest relative difference of value or gradient (2-norm) to tenferro eager over all "
        f"frameworks; {'all agree' if agree else 'DISAGREEMENT (!) above'} (tolerance {TOL:g})"
    )
    return agree


def _failed(e: Exception) -> Result:
    return Result(note=f"failed: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")


def _guarded(run: Callable[[], Result]) -> Result:
    try:
        return run()
    except Exception as e:  # a peer's failure is a table entry, not the end of the run
        return _failed(e)


def _profile(key: str, call: Callable[[], Any], seconds: float = 1.0) -> None:
    t0, n = time.perf_counter(), 0
    prof = cProfile.Profile()
    prof.enable()
    while time.perf_counter() - t0 < seconds:
        call()
        n += 1
    prof.disable()
    print(f"\ncProfile of tenferro jit, {key}, {n} calls (top 12 by own time):")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(12)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated subset of {', '.join(CASES)} (default: all)"
    )
    ap.add_argument("--repeat", type=int, default=None, help="timing rounds per median (default 7; 3 with --quick)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="fewer and shorter rounds and a 60 s torch.compile limit (for development, noisy)",
    )
    ap.add_argument(
        "--compile-timeout",
        type=float,
        default=None,
        help="seconds allowed for each torch.compile subprocess (default 300; 60 with --quick; 0 skips)",
    )
    ap.add_argument("--profile", action="store_true", help="print a cProfile of the tenferro jit call per case")
    ap.add_argument("--_compile-worker", dest="worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_out", dest="out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--_budget", dest="budget", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    keys = [k.strip() for k in args.cases.split(",") if k.strip()]
    bad = [k for k in keys if k not in CASES]
    if bad or not keys:
        ap.error(f"unknown case(s) {', '.join(bad) or '(none given)'}; valid cases: {', '.join(CASES)}")
    repeat = args.repeat if args.repeat is not None else (3 if args.quick else 7)
    if repeat < 1:
        ap.error(f"--repeat must be at least 1, got {repeat}")
    budget = args.budget if args.budget is not None else (0.1 if args.quick else 0.5)
    if args.worker is not None:
        _compile_worker(args.worker, args.out, repeat, budget)
        return 0
    timeout = args.compile_timeout if args.compile_timeout is not None else (60.0 if args.quick else 300.0)

    print(
        f"value_and_grad, float64, 1 thread per framework; median of {repeat} rounds "
        f"({'torch ' + torch.__version__ if torch is not None else 'no torch'}, "
        f"{'jax ' + jax.__version__ if jax is not None else 'no jax'})",
        flush=True,
    )
    rows = []
    for key in keys:
        case = CASES[key]
        print(f"  {case.title}:", end="", flush=True)
        res: dict[str, Result] = {}
        res["tf eager"], _, _ = run_tenferro(case, False, repeat, budget)
        print(" tf eager", end="", flush=True)
        jit_call = lowered = native_call = None
        try:
            res["tf jit"], jit_call, lowered = run_tenferro(case, True, repeat, budget)
        except Exception as e:  # reported in the table, so the other columns still come out
            res["tf jit"] = _failed(e)
        print(", tf jit", end="", flush=True)
        try:
            res["tf native"], native_call, native_lowered = run_tenferro(case, True, repeat, budget, backend="native")
            rep = native_lowered.compile_report()
            res["tf native"].note = (
                f"(compile {rep.compile_seconds:.2f} s, {rep.cache_hits}/{len(rep.regions)} regions from the disk "
                f"cache, {len(rep.numpy_steps)} eqns left to NumPy)"
                if rep.native
                else f"(NumPy fallback: {rep.reason})"
            )
        except Exception as e:
            res["tf native"] = _failed(e)
        print(", tf native", end="", flush=True)
        res["torch eager"] = _guarded(lambda: run_torch(case, False, repeat, budget))
        print(", torch eager", end="", flush=True)
        res["jax jit"] = _guarded(lambda: run_jax(case, repeat, budget))
        print(", jax jit", end="", flush=True)
        if key in NATIVE_TARGETS and native_call is not None and jit_call is not None and jax is not None:
            res["tf native"].paired = paired_rounds({"native": native_call, "jit": jit_call, "jax": jax_call(case)})
            print(", interleaved rounds", end="", flush=True)
        res["torch.compile"] = run_torch_compile(key, repeat, budget, timeout)
        print(", torch.compile", flush=True)
        rows.append((key, case, res, lowered.cost() if lowered is not None else {}))
        if args.profile and jit_call is not None:
            _profile(key, jit_call)
    return 0 if print_report(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
