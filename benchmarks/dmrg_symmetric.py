"""Symmetric (U(1), conserved Sz) DMRG against dense DMRG and TeNPy, on ITensor's
published benchmark: the spin-1 Heisenberg chain (open, N sites), two-site DMRG, five
sweeps with maximal bond dimensions 10, 20, 100, m, m, cutoff 0, one thread.

Codes (each case in a fresh subprocess pinned to one core, one BLAS thread):

* ``t4a-U1``: ``tensor4all.dmrg(H, conserve="Sz")`` (the charge-sector engine);
* ``t4a-dense``: ``tensor4all.dmrg(H)`` (dense blocks);
* ``tenpy-U1`` / ``tenpy-dense``: TeNPy's ``SpinChain`` with ``conserve="Sz"`` / ``None``
  and its ``TwoSiteDMRGEngine`` (no mixer), the same schedule.

Every code starts from the Neel product state (up, down, up, ...), noise/mixer off, and
runs exactly five sweeps (no early stop; TeNPy's check of the final truncation error is
off, as the other codes have none). Printed per case: seconds, the CPU seconds of the
process during the run (steadier than the seconds on a shared host, which may take a pinned
process off its core), the energy, its difference to the t4a-U1 energy, ``<Sz>`` at the first
site (below), the peak resident memory of the subprocess (MiB, ``ru_maxrss``) and how much of
it the run added over the imports and the set-up (``+run``); then the ratios t4a-U1 /
tenpy-U1 (goal <= 0.33), t4a-dense / t4a-U1 (goal >= 5 at m = 400), t4a-dense / tenpy-dense
and TeNPy's own dense / U(1) (each also in CPU seconds), and at the end one summary table over
all m. ITensor's published numbers (N = 100, one thread, another machine) are printed beside
them as context: dense 65.6 s at m = 200 and 348 s at m = 400; Sz-conserving 18.0 s and 39.0 s.

The open chain carries a spin 1/2 at each end: its lowest states, a singlet and a triplet,
are split by about ``exp(-N/6)`` (1.8e-5 at N = 64: the singlet -88.4866742 at m = 200, the
triplet -88.4866562 in the sector Sz = 1; ~5e-8 at N = 100). From the Neel state every code
ends its five sweeps with the end spins polarized (``<Sz> = +0.53`` at the first site): the
equal mixture of the singlet and the triplet's Sz = 0 state, half the splitting above the
ground state. The final energies then differ by how far the last sweeps have turned that
mixture towards the singlet, which costs Lanczos products, not precision: at N = 64, m = 200,
every local problem of the fifth sweep starts within 1e-10 of its lowest eigenvalue (gap
~0.45), and TeNPy's 12 and 16 products per problem in sweeps 4 and 5 (t4a-U1: 2.7 and 2) take
its energy 1.8e-7 lower (2% of the way). t4a-U1 gets there only at TeNPy's cost (local
tolerances of ``algorithms.dmrg_schedules``); with more sweeps its own rule tightens and
leaves the mixture (sweep 6: 1.1e-6 lower; sweep 9: the singlet). At N = 100 the codes agree
to 3e-10.

Run: ``python benchmarks/dmrg_symmetric.py [--N 100] [--m 200 400] [--codes ...]``
(``bench`` extra for TeNPy). The full default run takes half an hour or more (the dense
cases at m = 400 are the longest). ``--quick`` (N = 12, m = 60, seconds) checks that every
code runs; its times mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ITENSOR = {
    ("dense", 200): 65.6,
    ("dense", 400): 348.0,
    ("U1", 200): 18.0,
    ("U1", 400): 39.0,
    ("dense", 1000): 3324.0,
    ("U1", 1000): 173.0,
}
CODES = ["t4a-U1", "t4a-dense", "tenpy-U1", "tenpy-dense"]

_CHILD = r"""
import json, os, resource, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
code, N, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sched = [10, 20, 100, m, m]


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if code.startswith("t4a"):
    import tensor4all as t4a
    from tensor4all import models
    H = models.heisenberg(N, spin="1")
    psi0 = t4a.MPS.product_state([0, 2] * (N // 2) + [1] * (N % 2), d=3)   # Neel: up, down, ...
    kw = dict(conserve="Sz") if code == "t4a-U1" else {}
    before = peak_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    res = t4a.dmrg(H, psi0, max_bond=sched, cutoff=0.0, sweeps=5, tol=0.0, noise=0.0, compute_variance=False,
                   threads=1, **kw)
    seconds, cpu, energy = time.perf_counter() - t0, time.process_time() - c0, res.energy
    sz_edge = float(res.state.expect("Sz", site=0))
else:
    import logging
    logging.getLogger("tenpy").setLevel(logging.ERROR)
    import numpy as np
    from tenpy.algorithms import dmrg
    from tenpy.models.spins import SpinChain
    from tenpy.networks.mps import MPS
    M = SpinChain({"L": N, "S": 1.0, "Jx": 1.0, "Jy": 1.0, "Jz": 1.0, "bc_MPS": "finite",
                   "conserve": "Sz" if code == "tenpy-U1" else None})
    psi = MPS.from_product_state(M.lat.mps_sites(), ["up", "down"] * (N // 2) + ["0"] * (N % 2), bc="finite")
    # TeNPy stops once its sweep counter exceeds max_sweeps: 4 gives the 5 sweeps of tensor4all
    params = {"mixer": None, "chi_list": {0: 10, 1: 20, 2: 100, 3: m}, "max_sweeps": 4, "min_sweeps": 4,
              "max_E_err": 0.0, "max_S_err": 0.0, "max_trunc_err": 1.0,   # never raise on truncation
              "trunc_params": {"chi_max": m, "svd_min": 0.0, "trunc_cut": None}}
    before = peak_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    info = dmrg.run(psi, M, params)
    seconds, cpu, energy = time.perf_counter() - t0, time.process_time() - c0, float(info["E"])
    ran = len(info["sweep_statistics"]["E"])
    assert ran == 5, f"TeNPy ran {ran} sweeps, not 5"
    sz_edge = float(psi.expectation_value("Sz", [0])[0])
rss = peak_mib()
print(json.dumps({"seconds": seconds, "cpu": cpu, "energy": energy, "sz_edge": sz_edge, "rss_mib": rss,
                  "run_mib": rss - before}))
"""


def run_case(code: str, N: int, m: int) -> dict | None:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, code, str(N), str(m)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        print(f"  {code} N={N} m={m} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _kind(code: str) -> str:
    return "U1" if code.endswith("U1") else "dense"


def _ratios(m: int, results: dict[str, dict]) -> list[tuple[str, float, str]]:
    """(label, value, note) of the ratios of one m, those whose codes both ran."""
    t = {c: r["seconds"] for c, r in results.items()}
    cpu = {c: r["cpu"] for c, r in results.items()}
    out = []
    for num, den, note in (
        ("t4a-U1", "tenpy-U1", "goal <= 0.33"),
        ("t4a-U1", "tenpy-dense", ""),
        ("t4a-dense", "t4a-U1", "goal >= 5 at m = 400" if m == 400 else ""),
        ("t4a-dense", "tenpy-dense", "dense against dense"),
        ("tenpy-dense", "tenpy-U1", "TeNPy's own gain from U(1)"),
    ):
        if num in t and den in t:
            note = f"(cpu {cpu[num] / cpu[den]:.3f}) {note}".rstrip()
            out.append((f"{num} / {den}", t[num] / t[den], note))
    return out


def _cell(results: dict[str, dict], code: str) -> str:
    r = results.get(code)
    if r is None:
        return "-"
    mem = f" ({r['rss_mib']:.0f} MiB)" if code.startswith("t4a") else ""
    return f"{r['seconds']:.1f} s{mem}"


def _ratio(results: dict[str, dict], a: str, b: str, fmt: str, unit: str = "") -> str:
    if a not in results or b not in results:
        return "-"
    return format(results[a]["seconds"] / results[b]["seconds"], fmt) + unit


def _summary(N: int, table: dict[int, dict[str, dict]]) -> None:
    """One markdown table over all m (the README's): times, peak memory of the tensor4all
    runs, the main ratios, ITensor's published times; then how far the energies agree."""
    print("\nsummary (seconds; peak resident MiB of the tensor4all processes; ITensor: published, N = 100):")
    print(
        "| m | t4a U(1) | TeNPy U(1) | t4a dense | TeNPy dense | U(1)/TeNPy U(1) | dense/U(1) "
        "| t4a dense/TeNPy dense | ITensor U(1), dense |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for m, res in table.items():
        it = f"{ITENSOR[('U1', m)]:.1f} s, {ITENSOR[('dense', m)]:.1f} s" if N == 100 and ("U1", m) in ITENSOR else "-"
        print(
            f"| {m} | {_cell(res, 't4a-U1')} | {_cell(res, 'tenpy-U1')} | {_cell(res, 't4a-dense')} "
            f"| {_cell(res, 'tenpy-dense')} | {_ratio(res, 't4a-U1', 'tenpy-U1', '.2f')} "
            f"| {_ratio(res, 't4a-dense', 't4a-U1', '.1f', 'x')} | {_ratio(res, 't4a-dense', 'tenpy-dense', '.2f')} "
            f"| {it} |"
        )
    for m, res in table.items():
        es = {c: r["energy"] for c, r in res.items()}
        if len(es) > 1:
            spread = max(es.values()) - min(es.values())
            edges = ", ".join(f"{c} {r['sz_edge']:+.3f}" for c, r in res.items())
            print(
                f"m = {m}: energies agree to {spread:.1e}, relative {spread / abs(min(es.values())):.1e} "
                f"(max - min over {', '.join(es)}); <Sz> at the first site: {edges}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, default=100, help="chain length (default 100, ITensor's)")
    ap.add_argument("--m", type=int, nargs="+", default=[200, 400], help="final bond dimensions (default 200 400)")
    ap.add_argument(
        "--codes",
        nargs="+",
        default=CODES,
        choices=CODES,
        metavar="CODE",
        help=f"codes to run, of {', '.join(CODES)} (default all four)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="a smoke test: N = 12, m = 60 (seconds; every code runs and the energies agree; times mean nothing)",
    )
    args = ap.parse_args()
    if args.N < 2 or min(args.m) < 1:
        ap.error(f"--N must be >= 2 and every --m >= 1, got N={args.N}, m={args.m}")
    if args.quick:
        args.N, args.m = 12, [60]
    try:
        import tenpy  # noqa: F401
    except ImportError:
        args.codes = [c for c in args.codes if not c.startswith("tenpy")]
        print("TeNPy is not installed (pip install -e '.[bench]'): its rows are skipped")
    print(
        f"spin-1 Heisenberg, N={args.N}, two-site DMRG, maxdim 10,20,100,m,m, cutoff 0, 5 sweeps, 1 thread"
        f"{' (--quick: a smoke test, the times mean nothing)' if args.quick else ''}"
    )
    print(
        f"{'m':>5} {'code':>12} {'time [s]':>9} {'cpu [s]':>8} {'energy':>20} {'E - E(t4a-U1)':>14} {'Sz(0)':>7} "
        f"{'peak MiB':>9} {'+run MiB':>9} {'ITensor [s]':>11}"
    )
    table: dict[int, dict[str, dict]] = {}
    for m in args.m:
        results = table.setdefault(m, {})
        for code in args.codes:
            r = run_case(code, args.N, m)
            if r is None:
                continue
            results[code] = r
            ref = results.get("t4a-U1", r)["energy"]
            it = ITENSOR.get((_kind(code), m)) if args.N == 100 else None
            print(
                f"{m:>5} {code:>12} {r['seconds']:9.1f} {r['cpu']:8.1f} {r['energy']:20.12f} {r['energy'] - ref:14.2e} "
                f"{r['sz_edge']:7.3f} {r['rss_mib']:9.0f} {r['run_mib']:9.0f} {'' if it is None else f'{it:11.1f}'}",
                flush=True,
            )
        for label, value, note in _ratios(m, results):
            print(f"      {label}: {value:.3f} {note}")
        if args.N == 100 and ("U1", m) in ITENSOR:
            print(f"      ITensor dense / U1 (published): {ITENSOR[('dense', m)] / ITENSOR[('U1', m)]:.1f}x")
    _summary(args.N, table)


if __name__ == "__main__":
    main()
