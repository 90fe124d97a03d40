"""Start-up of the native backend: first-call compile time and a cached second process.

For each program of ``benchmarks/compiled.py`` that the native backend runs (``loop``,
``mps32``, ``mps128``: ``tenferro.jit(value_and_grad(loss), backend="native")``), a fresh
``python -c`` process is started twice against one empty ``TENFERRO_JIT_CACHE``: the
first compiles the machine code (Numba), the second loads it from the disk cache. Each
child reports the time of ``import tenferro``, of its first call (trace, optimize, lower,
``import numba``, compile or load: everything a process pays before its first result),
the ``compile_seconds`` and cache hits of the compile report, and its second call; the
parent reports each process's wall time from start to exit. Median of ``--repeat`` pairs
(each pair with a new cache directory).

    python benchmarks/native_startup.py [--cases loop,mps32,mps128] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import CHILD_PRELUDE  # noqa: E402

CASES = ("loop", "mps32", "mps128")

#: the child: one program of compiled.py (its peers left out), timed from its first call
CHILD = (
    CHILD_PRELUDE
    + r"""
t0 = time.perf_counter()
import tenferro as tf
import tidu
t_import = time.perf_counter() - t0
sys.path.insert(0, BENCH_DIR)
import compiled
case = compiled.CASES[CASE]
xs, cs = case.make()
X, C = [tf.asarray(a) for a in xs], [tf.asarray(c) for c in cs]
vg = tf.jit(tidu.value_and_grad(case.loss(compiled._ops("tf"))), backend="native")
numba_before = "numba" in sys.modules
t0 = time.perf_counter()
vg(X, C)
t_first = time.perf_counter() - t0
t0 = time.perf_counter()
vg(X, C)
t_second = time.perf_counter() - t0
report = vg.lower(X, C).compile_report()
print(json.dumps({"import": t_import, "first": t_first, "second": t_second, "compile": report.compile_seconds,
                  "hits": report.cache_hits, "regions": len(report.regions), "numba_before": numba_before}))
"""
)


def run_child(case: str, cache: str) -> dict:
    env = dict(os.environ, TENFERRO_JIT_CACHE=cache, TENFERRO_BENCH_PEERS="")  # no PyTorch, no JAX
    code = f"BENCH_DIR = {os.path.dirname(os.path.abspath(__file__))!r}\nCASE = {case!r}\n" + CHILD
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process"] = time.perf_counter() - t0
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    ap.add_argument("--repeat", type=int, default=3, help="pairs of processes per case (medians)")
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad:
        ap.error(f"unknown case(s) {bad}; choose from {', '.join(CASES)}")
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1, got {args.repeat}")
    print(f"native backend start-up, medians of {args.repeat} pairs of fresh processes (seconds)")
    head = f"{'case':8s} {'process':8s} {'import tf':>10s} {'1st call':>9s} {'compile':>8s} {'hits':>6s} {'2nd call':>10s} {'wall':>7s}"
    print(head)
    for case in cases:
        runs: list[tuple[dict, dict]] = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="tfn-startup-") as cache:
                runs.append((run_child(case, cache), run_child(case, cache)))
        for k, label in enumerate(("first", "cached")):
            rs = [r[k] for r in runs]

            def med(key: str, rs: list = rs) -> float:
                return statistics.median(r[key] for r in rs)

            hits = f"{rs[0]['hits']}/{rs[0]['regions']}"
            print(
                f"{case:8s} {label:8s} {med('import'):10.3f} {med('first'):9.3f} {med('compile'):8.3f} {hits:>6s} "
                f"{med('second') * 1e3:8.2f}ms {med('process'):7.3f}"
            )
            if rs[0]["numba_before"]:
                print("  (numba was imported before the first call)")
    print(
        "1st call: trace + optimize + lower + import numba + compile (first) or load (cached); "
        "compile: its native part (report.compile_seconds); wall: the whole process"
    )


if __name__ == "__main__":
    main()
