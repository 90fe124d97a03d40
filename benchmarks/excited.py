"""Excited states against TeNPy's ``orthogonal_to`` DMRG: the lowest ``n`` states (default 3) of
the spin-1/2 Heisenberg chain (open, L = 32) in the sector Sz = 0, two-site DMRG with the same
schedule in both codes.

Schedule (both codes, every state): bond dimensions 32, 64, then ``--max-bond`` (128) for
``--sweeps`` sweeps in all (default 8; no early stop), no cutoff (the bond dimension alone
truncates: with ``cutoff=1e-10`` tensor4all keeps bond 48 here, TeNPy with ``trunc_cut=1e-10``
128, so the same words would not mean the same schedule), noise 1e-4 then 1e-6 in the first two sweeps
(tensor4all's default two-site noise; TeNPy's mixer with amplitude 1e-4, decay 100, off after
two sweeps), random start in the sector (each code its own). State ``k`` is a DMRG orthogonal to
the states found before it: ``tensor4all.excited_states(H, n, conserve="Sz", sector=0)``
(explicit projection of each local problem) and TeNPy's ``TwoSiteDMRGEngine(...,
orthogonal_to=[...])``.

Each code runs in a fresh subprocess pinned to one core with one BLAS thread, ``--rounds``
times alternately (medians printed). Printed: seconds for all states, the energies and their
difference between the codes (the goal is equal energies to 1e-8), each code's largest overlap
``|<i|j>|`` between its returned states, and the time ratio tensor4all / TeNPy (goal <= 0.5).

Run: ``python benchmarks/excited.py [--L 32] [--n 3] [--max-bond 128] [--rounds 3]`` (``bench``
extra for TeNPy). ``--quick`` (L = 12, bond 32, 1 round) checks that both codes run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_CHILD = r"""
import json, os, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
code, L, n, chi, sweeps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sched = [min(32, chi), min(64, chi), chi]
if code == "t4a":
    import numpy as np
    import tensor4all as t4a
    H = t4a.models.heisenberg(L)
    t0 = time.perf_counter()
    ex = t4a.excited_states(H, n, conserve="Sz", sector=0, max_bond=sched, sweeps=sweeps, cutoff=0.0, tol=0.0,
                            threads=1)
    seconds = time.perf_counter() - t0
    energies = [float(e) for e in ex.energies]
    overlap = ex.max_overlap
else:
    import logging
    logging.getLogger("tenpy").setLevel(logging.ERROR)
    import numpy as np
    from tenpy.algorithms.dmrg import TwoSiteDMRGEngine
    from tenpy.models.spins import SpinChain
    from tenpy.networks.mps import MPS
    M = SpinChain({"L": L, "S": 0.5, "Jx": 1.0, "Jy": 1.0, "Jz": 1.0, "bc_MPS": "finite", "conserve": "Sz"})
    params = {"mixer": True, "mixer_params": {"amplitude": 1e-4, "decay": 100.0, "disable_after": 2},
              "chi_list": {0: sched[0], 1: sched[1], 2: sched[2]}, "max_sweeps": sweeps - 1,
              "min_sweeps": sweeps - 1, "max_E_err": 0.0, "max_S_err": 0.0, "max_trunc_err": 1.0,
              "trunc_params": {"chi_max": chi, "svd_min": 0.0, "trunc_cut": None}}
    states, energies = [], []
    t0 = time.perf_counter()
    for k in range(n):
        psi = MPS.from_product_state(M.lat.mps_sites(), ["up", "down"] * (L // 2), bc="finite")
        # a random start in the sector (TeNPy's own), as tensor4all's
        from tenpy.algorithms.tebd import RandomUnitaryEvolution
        RandomUnitaryEvolution(psi, {"N_steps": 10, "trunc_params": {"chi_max": 8}}).run()
        eng = TwoSiteDMRGEngine(psi, M, params, orthogonal_to=list(states))
        e, psi = eng.run()
        states.append(psi)
        energies.append(float(e))
    seconds = time.perf_counter() - t0
    overlap = max((abs(states[i].overlap(states[j])) for i in range(n) for j in range(i)), default=0.0)
print(json.dumps({"seconds": seconds, "energies": energies, "max_overlap": float(overlap)}))
"""

CODES = ["t4a", "tenpy"]


def run_case(code: str, L: int, n: int, chi: int, sweeps: int) -> dict | None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    argv = [sys.executable, "-c", _CHILD, code, str(L), str(n), str(chi), str(sweeps)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        print(f"  {code} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--L", type=int, default=32)
    ap.add_argument("--n", type=int, default=3, help="states (default 3)")
    ap.add_argument("--max-bond", type=int, default=128)
    ap.add_argument("--sweeps", type=int, default=8, help="sweeps per state (default 8)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating runs of each code (default 3)")
    ap.add_argument("--quick", action="store_true", help="L = 12, bond 32, one round: checks that both codes run")
    a = ap.parse_args()
    if a.quick:
        a.L, a.max_bond, a.rounds = 12, 32, 1
    print(
        f"Heisenberg L = {a.L}, Sz = 0, {a.n} lowest states, bond {min(32, a.max_bond)},{min(64, a.max_bond)},"
        f"{a.max_bond}, {a.sweeps} sweeps each, 1 thread, pinned, {a.rounds} round(s)",
        flush=True,
    )
    runs: dict[str, list[dict]] = {c: [] for c in CODES}
    for r in range(a.rounds):
        for code in CODES:
            res = run_case(code, a.L, a.n, a.max_bond, a.sweeps)
            if res is not None:
                runs[code].append(res)
                print(f"  round {r + 1} {code:>6}: {res['seconds']:7.2f} s  energies {res['energies']}", flush=True)
    med = {c: statistics.median(x["seconds"] for x in v) for c, v in runs.items() if v}
    print("\n| code | seconds (median) | energies | largest overlap |")
    print("|---|---|---|---|")
    for c, v in runs.items():
        if v:
            es = ", ".join(f"{e:.10f}" for e in v[-1]["energies"])
            print(f"| {c} | {med[c]:.2f} | {es} | {max(x['max_overlap'] for x in v):.1e} |")
    if len(med) == 2:
        diff = max(abs(x - y) for x, y in zip(runs["t4a"][-1]["energies"], runs["tenpy"][-1]["energies"]))
        print(f"\nenergies agree to {diff:.1e} (max over the states; goal 1e-8)")
        print(f"time t4a / TeNPy = {med['t4a'] / med['tenpy']:.2f} (goal <= 0.5)")


if __name__ == "__main__":
    main()
