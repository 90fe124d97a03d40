"""Paired runs of two checkouts: the tensor-network cases of the four main benchmarks at small
sizes, run alternately for a base revision and the working tree, each run a fresh process pinned
to one core with one BLAS thread, so that a drift of the shared machine hits both sides alike.

Printed per case: the median seconds of each side, their ratio (working tree / base), and whether
the results (energies, observables) agree bitwise, else their largest relative difference. This
is the check a refactoring lands with ("speed and results unchanged", issue 48): run it before
committing a merge of two code paths.

Cases (the code paths of ``dmrg_symmetric.py``, ``dmrg.py``, ``dmrg_hubbard.py``, ``tdvp.py``):
U(1) and dense two-site DMRG of the Heisenberg chain L = 32 (chi 10, 20, 64, 64, 64; cutoff 0);
Hubbard L = 12 with (N, Sz) conserved; U(1) TDVP and dense TEBD of the Neel state, L = 32, t = 1.

Run: ``python benchmarks/paired.py --base HEAD~1 [--rounds 3]``. The base is checked out in a
temporary git worktree (removed afterwards).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r"""
import json, time
import numpy as np
from threadpoolctl import threadpool_limits
import tensor4all as t4a
from tensor4all import models

def timed(f):
    t0 = time.perf_counter()
    value = f()
    return float(value), time.perf_counter() - t0

def sz_moment(res):
    return np.sum(np.abs(res.observables["sz"][-1]) * np.arange(32))

cases = {
    "U(1) DMRG Heisenberg L=32": lambda: t4a.dmrg(models.heisenberg(32, conserve="Sz"), max_bond=[10, 20, 64, 64, 64],
                                                  sweeps=5, cutoff=0.0, tol=0.0, threads=1).energy,
    "dense DMRG Heisenberg L=32": lambda: t4a.dmrg(models.heisenberg(32), max_bond=[10, 20, 64, 64, 64], sweeps=5,
                                                   cutoff=0.0, tol=0.0, seed=0, threads=1).energy,
    "Hubbard L=12 (N,Sz)": lambda: t4a.dmrg(models.hubbard(12, U=4.0, conserve="N,Sz"), max_bond=[16, 32, 64, 64],
                                            sweeps=4, cutoff=1e-12, tol=0.0, threads=1).energy,
    "U(1) TDVP L=32, t=1": lambda: sz_moment(t4a.tdvp(models.heisenberg(32, conserve="Sz"),
                                                      t4a.MPS.product_state([0, 1] * 16, conserve="Sz"), 1.0, 0.05,
                                                      max_bond=64, cutoff=1e-10, threads=1,
                                                      observables={"sz": "Sz"})),
    "dense TEBD L=32, t=1": lambda: sz_moment(t4a.tebd(models.heisenberg(32), t4a.MPS.product_state([0, 1] * 16), 1.0,
                                                       0.05, max_bond=64, cutoff=1e-10, threads=1,
                                                       observables={"sz": "Sz"})),
}
with threadpool_limits(1):
    print(json.dumps({name: timed(f) for name, f in cases.items()}))
"""


def _run(path: str) -> dict[str, list[float]]:
    env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, "-c", _CHILD]
    if hasattr(os, "sched_getaffinity"):
        cmd = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] + cmd
    out = subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="HEAD", help="the revision to compare the working tree with (default HEAD)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians are printed (default 3)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", base, args.base], check=True)
        try:
            runs: dict[str, list[dict]] = {"base": [], "tree": []}
            for _ in range(args.rounds):
                runs["base"].append(_run(base))
                runs["tree"].append(_run(ROOT))
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", base], check=False)
    print(f"paired runs: {args.base} (base) against the working tree, {args.rounds} rounds, 1 thread, one core")
    print("| case | base (s) | tree (s) | tree / base | results |")
    print("|---|---|---|---|---|")
    for name in runs["base"][0]:
        tb = statistics.median(r[name][1] for r in runs["base"])
        tt = statistics.median(r[name][1] for r in runs["tree"])
        values = [r[name][0] for side in runs.values() for r in side]
        ref = values[0]
        diff = max(abs(v - ref) / max(abs(ref), 1e-300) for v in values)
        same = "bitwise" if diff == 0.0 else f"rel. diff {diff:.1e}"
        print(f"| {name} | {tb:.3f} | {tt:.3f} | {tt / tb:.2f} | {same} |")


if __name__ == "__main__":
    main()
