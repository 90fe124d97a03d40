"""Analysis of a ground state against the DMRG that made it and against TeNPy on the same state.

The state: the spin-1/2 Heisenberg chain, L = 64, two-site DMRG to chi 128 (schedule 32, 64,
128, five sweeps, cutoff 0), dense and U(1) (``conserve="Sz"``); its time T includes the
Schmidt form that ``dmrg`` attaches to the state it returns. The calls, each on that state:

* ``entropy``: the entanglement entropy of every bond (``psi.entanglement_entropy()``;
  TeNPy's ``entanglement_entropy()``): both compute it on every call from the Schmidt values
  they keep (ours nothing more: no entropy is cached on the state);
* ``correlations``: all ``<Sz_i Sz_j>`` (``psi.correlation_matrix("Sz", "Sz")``; TeNPy's
  ``correlation_function("Sz", "Sz")``);
* ``expect x10``: ten single-site calls ``psi.expect("Sz", i)`` (TeNPy's
  ``expectation_value("Sz", sites=[i])``), sites 27..36;
* ``expect all``: ``<Sz_i>`` at every site in one call;
* ``energy``: ``<psi|H|psi> / <psi|psi>`` of the MPO that made the state (``tensor4all.expectation(psi,
  H)``; TeNPy's ``H_MPO.expectation_value`` of ``XXZChain`` with ``Jxx = Jz = 1``, the same
  Hamiltonian on its ``SpinHalfSite``).

TeNPy gets the same state: our site tensors converted with ``MPS.from_Bflat`` and brought to
its canonical form (not timed); the values of both codes are compared (max difference printed).

Three modes, each in a fresh subprocess:

* ``pinned``: one core, one BLAS thread (the goals: every call at most 0.2 T and at most 0.5x
  TeNPy's);
* ``idle``: both cores, BLAS threads as each library chooses (ours: the thread policy), the
  second core idle;
* ``busy``: the same with a busy loop on the second core (goal: no call of ours more than 1.2x
  its ``idle`` time).

Each call is timed as the median of 15 runs (the entropy read: 21; correlations: 3). Run:
``python benchmarks/analysis.py [--modes pinned idle busy] [--kinds dense U1] [--L 64 --chi 128]``
(the ``bench`` extra for TeNPy; without it our columns alone). ``--quick`` (L = 16, chi 16)
checks that everything runs; its times mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

_CHILD = r"""
import json, os, statistics, sys, time
mode, kind, L, chi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if mode == "pinned":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import numpy as np
import tensor4all as t4a
from tensor4all import models

cons = {"conserve": "Sz"} if kind == "U1" else {}
H = models.heisenberg(L, **cons)
psi0 = t4a.MPS.product_state([0, 1] * (L // 2), d=2, **cons)
sched = [max(chi // 4, 4), max(chi // 2, 4), chi]
t0 = time.perf_counter()
res = t4a.dmrg(H, psi0, max_bond=sched, sweeps=5, cutoff=0.0, noise=[1e-6, 1e-8, 0.0], **cons)
T = time.perf_counter() - t0
psi = res.state
sites = list(range(L // 2 - 5, L // 2 + 5))


def timed(fn, n):
    ts, out = [], None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


ours = {
    "entropy": timed(lambda: psi.entanglement_entropy(), 21),
    "correlations": timed(lambda: np.asarray(psi.correlation_matrix("Sz", "Sz")), 3),
    "expect x10": timed(lambda: [float(psi.expect("Sz", i)) for i in sites], 15),
    "expect all": timed(lambda: np.asarray(psi.expect("Sz")), 15),
    "energy": timed(lambda: float(t4a.expectation(psi, H)), 5),
}
out = {"T": T, "energy": res.energy, "chi": max(psi.bond_dims), "ours": {k: v[0] for k, v in ours.items()}}
try:
    import logging, warnings
    logging.getLogger("tenpy").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    from tenpy.networks.mps import MPS
    from tenpy.networks.site import SpinHalfSite
    from tenpy.models.xxz_chain import XXZChain
except ImportError:
    MPS = None
if MPS is not None:
    dense = psi.dense() if psi.symmetric else psi
    bflat = [np.transpose(np.asarray(t), (1, 0, 2)) for t in dense.tensors]
    tp = MPS.from_Bflat([SpinHalfSite(conserve="Sz" if kind == "U1" else None) for _ in range(L)], bflat, form=None)
    tp.canonical_form()
    model = XXZChain({"L": L, "Jxx": 1.0, "Jz": 1.0, "hz": 0.0, "bc_MPS": "finite",
                      "conserve": "Sz" if kind == "U1" else None})
    theirs = {
        "entropy": timed(lambda: tp.entanglement_entropy(), 5),
        "correlations": timed(lambda: tp.correlation_function("Sz", "Sz"), 3),
        "expect x10": timed(lambda: [float(tp.expectation_value("Sz", sites=[i])[0]) for i in sites], 5),
        "expect all": timed(lambda: tp.expectation_value("Sz"), 5),
        "energy": timed(lambda: float(model.H_MPO.expectation_value(tp)), 5),
    }
    out["tenpy"] = {k: v[0] for k, v in theirs.items()}
    out["diff"] = {k: float(np.max(np.abs(np.asarray(ours[k][1]) - np.asarray(theirs[k][1])))) for k in ours}
print(json.dumps(out))
"""

CALLS = ["entropy", "correlations", "expect x10", "expect all", "energy"]


def run_child(mode: str, kind: str, L: int, chi: int) -> dict | None:
    env = dict(os.environ)
    if mode == "pinned":
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    busy = None
    cores = sorted(os.sched_getaffinity(0))
    if mode == "busy" and len(cores) > 1:
        busy = subprocess.Popen(
            [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cores[-1]}}})\nwhile True: pass"]
        )
        time.sleep(0.2)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, mode, kind, str(L), str(chi)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    if proc.returncode != 0:
        print(f"  {mode} {kind} failed: {proc.stderr.strip().splitlines()[-3:]}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{1e3 * x:.3g}"


def report(results: dict, modes: list[str], kinds: list[str]) -> None:
    print("\n| state | mode | call | t4a [ms] | t4a / T | TeNPy [ms] | t4a / TeNPy | busy / idle | max diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        for mode in modes:
            r = results.get((mode, kind))
            if r is None:
                continue
            idle, busy = results.get(("idle", kind)), results.get(("busy", kind))
            for call in CALLS:
                t = r["ours"][call]
                peer = r.get("tenpy", {}).get(call)
                bi = busy["ours"][call] / idle["ours"][call] if mode == "busy" and idle and busy else None
                print(
                    f"| {kind} (T = {r['T']:.2f} s, chi {r['chi']}) | {mode} | {call} | {_ms(t)} | {t / r['T']:.4f} | "
                    f"{_ms(peer)} | {'-' if peer is None else f'{t / peer:.3f}'} | "
                    f"{'-' if bi is None else f'{bi:.2f}'} | {r.get('diff', {}).get(call, float('nan')):.1e} |"
                )
    print("\ngoals: t4a / T <= 0.2 and t4a / TeNPy <= 0.5 (pinned); busy / idle <= 1.2")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", nargs="+", default=["pinned", "idle", "busy"], choices=["pinned", "idle", "busy"])
    ap.add_argument("--kinds", nargs="+", default=["dense", "U1"], choices=["dense", "U1"])
    ap.add_argument("--L", type=int, default=64)
    ap.add_argument("--chi", type=int, default=128)
    ap.add_argument("--quick", action="store_true", help="L = 16, chi 16: checks that everything runs")
    args = ap.parse_args()
    if args.quick:
        args.L, args.chi = 16, 16
    print(f"Heisenberg L = {args.L}, chi {args.chi}; {os.cpu_count()} cores", flush=True)
    results = {}
    for kind in args.kinds:
        for mode in args.modes:
            r = run_child(mode, kind, args.L, args.chi)
            if r is not None:
                results[(mode, kind)] = r
                print(f"  {kind} {mode}: T = {r['T']:.2f} s, E = {r['energy']:.12f}", flush=True)
    report(results, args.modes, args.kinds)


if __name__ == "__main__":
    main()
