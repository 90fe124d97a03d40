"""Fermi-Hubbard DMRG with (N, Sz) conserved: ``tensor4all.dmrg`` against TeNPy's
``TwoSiteDMRGEngine``, on a chain, on a cylinder, and on ITensor's published 2D benchmark.

Cases (half filling ``N = number of sites``, ``Sz = 0``, ``t = 1``, ``mu = 0``):

* ``chain``: the open Hubbard chain, ``L = 64``, ``U = 4``, maximal bond dimensions 50, 100,
  200, chi, chi, ... (``chi = 400``, ``--final-sweeps 4`` sweeps at chi: 7 sweeps in all),
  relative discarded weight ``cutoff = 1e-10`` per bond;
* ``cylinder``: the 8 x 4 square lattice, open along x (8 columns), periodic around y (4
  sites), ``U = 4``, the same schedule and cutoff as the chain (``chi = 400``: a few minutes
  on one core of the development machine; the energy is far from converged there: the
  discarded weight per bond is ~4e-4 and the energy still drops by ~1e-3 per sweep);
* ``itensor``: ITensor's 2D Hubbard benchmark with quantum numbers (ITensorBenchmarks.jl,
  ``benchmarks/julia_vs_c++/bench_dmrg_2d_qns``, the code behind the benchmark figures of
  Fishman, White, Stoudenmire, SciPost Phys. Codebases 4 (2022)): the 6 x 3 cylinder
  (y periodic), ``U = 8``, 10 sweeps of maximal bond dimensions ``min(m, (100, 200, 400, 800,
  2000, 3000, m, m, ...))``, cutoff 0, one BLAS thread; here ``m = 400``. ITensor's times
  are printed beside it as context (another machine; ITensor runs with a noise term of
  1e-6, 1e-7, 1e-8, 0 that both codes here leave off): C++ ITensor 14.9 s (m = 200), 23.0 s
  (m = 400), 124.9 s (m = 1000); ITensors.jl 28.7 s, 39.3 s, 121.5 s. These are the one-thread
  data files of that repository (``data_blas_num_threads_1_maxdim_*.txt``); the paper's text
  and its figure's exact values could not be checked here.

Both codes use the same lattice, the same MPS order of the sites (``n = x * Ly + y``, column by
column: tensor4all's ``lattices.square``, TeNPy's ``Square`` lattice with its ``'default'``
order, checked in the child process) and the same start state: up, down, up, down, ... along
the MPS order (ITensor's ``isodd(n) ? "Up" : "Dn"``). A 2-site periodic direction has one bond
in tensor4all (and ITensor) but two in TeNPy (``(y, y + 1)`` and its wrap-around), so a
cylinder with ``Ly = 2`` is run as an open ladder in TeNPy.

Codes (each run in a fresh subprocess pinned to one core, one BLAS thread through
``threadpoolctl`` and the thread variables; the time is the DMRG call alone, models and start
states are built before it):

* ``t4a``: ``tensor4all.dmrg(models.hubbard(lattice, conserve="N,Sz"), psi0,
  max_bond=schedule, sweeps=len(schedule), cutoff=cutoff, tol=0, noise=0,
  compute_variance=False, threads=1)`` with ``psi0`` the (N, Sz)-symmetric product state;
* ``tenpy``: ``FermiHubbardModel(cons_N="N", cons_Sz="Sz")`` and ``dmrg.run`` (two-site
  engine, ``mixer=None``, ``chi_list`` the same schedule, ``trunc_params``: ``chi_max`` = the
  last entry, ``svd_min=None``, ``trunc_cut = sqrt(cutoff)``, TeNPy's cut on the normalized
  Schmidt values, the same as tensor4all's relative discarded weight ``cutoff``),
  ``max_E_err = max_S_err = 0`` (no early stop), ``max_trunc_err = 1`` (never raise), TeNPy's
  default Lanczos. TeNPy stops once its sweep counter *exceeds* ``max_sweeps``, so it gets
  ``max_sweeps = sweeps - 1`` to run as many sweeps as tensor4all (checked in the child).

Printed per case: for each code the median time over ``--repeats`` runs (each repeat a fresh
process), the final energy, ``|E(t4a) - E(TeNPy)|`` (goal 1e-8; the cylinders are not converged
at these bond dimensions and their energies differ by far more), the median time of a sweep at
the final chi, the number of local matrix-vector products (Lanczos steps: tensor4all's
``SweepRecord.matvecs``, TeNPy's ``N_lanczos`` per update) and the run's time per product, the
largest discarded weight of the last sweep; then energies, times and products sweep by sweep,
and the ratio t4a / TeNPy (goal <= 0.5), split into the ratio of the products and that of the
time per product, and the ratio of the median CPU seconds of the DMRG call (the process's own,
steadier than the seconds on a shared host that takes a pinned process off its core); then the
ratio at equal energy: each code's sweeps timed up to the first sweep at or below the higher of
the two final energies (+ 1e-8), which both reached.

Both local eigensolvers stop once their estimate of the eigenvector's squared error,
``(Ritz residual / Ritz gap)^2``, is below ``0.05 x`` the last sweep's largest discarded weight
(at most 1e-4: TeNPy's ``P_tol_to_trunc`` and ``P_tol_max``, tensor4all's ``algorithms.dmrg_schedules.state_tolerance``;
tensor4all takes, in a sweep that raises the bond dimension, the largest weight discarded so far
in that sweep instead); tensor4all's also stops once its lowest Ritz value moves by less than
``max(min(1e-9, 1e-3 |last sweep's dE|), 0.005 x`` the last sweep's weight). Both make at most 20
products per local problem (TeNPy's ``N_max``; tensor4all 40 where the truncation allows a state
error below 1e-9) and diagonalize small local problems densely (TeNPy's ``ED_block`` up to 400
states, tensor4all up to 128). Where such a problem's lowest level is degenerate (from the Neel
start: the 6 x 3 cylinder's second update, the three-site ring of its first column), TeNPy keeps
the vector LAPACK returns, tensor4all the bond basis of the level's equal mixture
(``eigensolver.dense_lowest_level``). TeNPy's Lanczos does not reorthogonalize, tensor4all's does. At
the end one markdown table over the cases (the README's).

Measured (``--itensor-m 200``, medians of 3, the shared 2-core development machine, 2026-11-27,
the host about 1.7x slower than the day before for both codes):

| case | sweeps (chi) | t4a | TeNPy | t4a / TeNPy | at equal energy | s/sweep at chi, t4a / TeNPy | E(t4a) | abs(E(t4a) - E(TeNPy)) |
|---|---|---|---|---|---|---|---|---|
| chain L=64, U=4 | 7 (400) | 54.1 s | 153.1 s | 0.35 | 0.23 | 8.8 s / 18.3 s | -36.3518326079 | 1.6e-09 |
| 8x4 cyl., U=4 | 7 (400) | 51.8 s | 121.0 s | 0.43 | 0.42 | 9.7 s / 20.4 s | -26.5539145930 | 9.5e-05 |
| 6x3 cyl., U=8 | 10 (200) | 16.2 s | 48.9 s | 0.33 | 0.39 | 1.4 s / 3.4 s | -8.0179421945 | 1.3e-04 |

(ITensor's published m = 200 times for the 6x3 case: C++ 14.9 s, Julia 28.7 s.) tensor4all made
0.91x (chain), 0.76x (8x4) and 0.91x (6x3) TeNPy's products at 0.39x, 0.57x and 0.36x the time per
product. A second 8x4 run the same day: 0.39 / 0.37; the day before, on a quieter host and
before the absorbed environments were reused: 0.34 / 0.20, 0.56 / 0.51, 0.34 / 0.48. On the 8x4
cylinder tensor4all ends 9.5e-5 lower but passes TeNPy's final energy only in its last sweep; on
the 6x3 one TeNPy ended 1.3e-4 lower then. Since the degenerate level of its second update is
kept whole and the first sweep at m keeps the last sweep's tolerance (2026-11-30, one run each,
a heavily loaded host; ratios of CPU seconds, the wall ones moved by 2x between runs): chain
-36.3518326076, 2.0e-9 above TeNPy's (0.45); 8x4 -26.5539247501, 1.05e-4 below (0.47); 6x3
-8.0180821249, 1.8e-5 below (0.33, medians of 3); the products +0.2%, +0.5%, +6.5% (docs/benchmarks.md).
With the products by blocks as one native call (the ``fast`` extra, ``tensor4all.linalg.gemm_list``;
``--repeats 2``, m = 400, a quiet host, 2026-11-30): 24.3 s (0.36), 24.8 s (0.49), 17.2 s (0.48),
against 27.7, 28.6 and 20.1 s with ``TENSOR4ALL_NATIVE=0``; the same energies.

Run: ``python benchmarks/dmrg_hubbard.py [--cases chain cylinder itensor] [--repeats 3]``
(``bench`` extra for TeNPy). A run took 13 minutes with three repeats on the development
machine on a quiet day, 25 on a slow one (TeNPy's runs are the longest); ``--repeats 1`` a third of it.
``--quick`` (chain L = 16, 4 x 2 and 2 x 3 cylinders, chi 64, one repeat: under 20 seconds)
checks that every code runs; its times mean nothing, and only the 2 x 3 case (exact at chi 64)
has energies that agree to 1e-8.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass

from _timing import CHILD_PRELUDE

CODES = ["t4a", "tenpy"]
CASE_NAMES = ["chain", "cylinder", "itensor"]
RAMP = (50, 100, 200, 400, 800, 1600)
ITENSOR_RAMP = (100, 200, 400, 800, 2000, 3000)
ITENSOR_SWEEPS = 10
# ITensorBenchmarks.jl, julia_vs_c++/bench_dmrg_2d_qns/{c++,julia}/data/data_blas_num_threads_1_maxdim_<m>.txt
ITENSOR = {
    ("C++", 200): 14.9,
    ("C++", 400): 23.0,
    ("C++", 1000): 124.9,
    ("Julia", 200): 28.7,
    ("Julia", 400): 39.3,
    ("Julia", 1000): 121.5,
}
E_GOAL = 1e-8
RATIO_GOAL = 0.5


@dataclass(frozen=True)
class Case:
    """One benchmark problem: an ``Lx x Ly`` lattice (``Ly = 1``: the open chain), periodic in y."""

    name: str
    Lx: int
    Ly: int
    U: float
    schedule: tuple[int, ...]
    cutoff: float

    @property
    def sites(self) -> int:
        return self.Lx * self.Ly

    def title(self) -> str:
        geo = f"chain L={self.Lx}" if self.Ly == 1 else f"{self.Lx}x{self.Ly} cylinder (y periodic)"
        return (
            f"{self.name}: Hubbard {geo}, U={self.U:g}, t=1, N={self.sites}, Sz=0, two-site DMRG, "
            f"max_bond {','.join(map(str, self.schedule))} ({len(self.schedule)} sweeps), "
            f"cutoff {self.cutoff:g}, noise off, 1 thread"
        )


def ramp_schedule(chi: int, final_sweeps: int) -> tuple[int, ...]:
    """50, 100, 200, ... below ``chi``, then ``final_sweeps`` sweeps at ``chi``."""
    return tuple(c for c in RAMP if c < chi) + (chi,) * final_sweeps


def itensor_schedule(m: int) -> tuple[int, ...]:
    """ITensor's: ``min(m, (100, 200, 400, 800, 2000, 3000, m, m, ...))``, 10 sweeps."""
    ramp = [min(m, c) for c in ITENSOR_RAMP]
    return tuple((ramp + [m] * ITENSOR_SWEEPS)[:ITENSOR_SWEEPS])


def make_cases(args: argparse.Namespace) -> dict[str, Case]:
    if args.quick:
        return {
            "chain": Case("chain", 16, 1, 4.0, (32, 64, 64, 64), args.cutoff),
            "cylinder": Case("cylinder", 4, 2, 4.0, (32, 64, 64, 64), args.cutoff),
            "itensor": Case("itensor", 2, 3, 8.0, (32, 64, 64, 64), 0.0),
        }
    return {
        "chain": Case("chain", args.chain_L, 1, 4.0, ramp_schedule(args.chain_chi, args.final_sweeps), args.cutoff),
        "cylinder": Case("cylinder", 8, 4, 4.0, ramp_schedule(args.cylinder_chi, args.final_sweeps), args.cutoff),
        "itensor": Case("itensor", 6, 3, 8.0, itensor_schedule(args.itensor_m), 0.0),
    }


_CHILD = (
    CHILD_PRELUDE
    + r"""

code, Lx, Ly, U, cutoff = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
schedule = [int(c) for c in sys.argv[6].split(",")]
sweeps, n = len(schedule), Lx * Ly
states = ["up", "down"] * (n // 2)              # along the MPS order, as ITensor's benchmark

if code == "t4a":
    import tensor4all as t4a
    from tensor4all import lattices, models
    lattice = lattices.chain(Lx) if Ly == 1 else lattices.square(Lx, Ly, yperiodic=True)
    H = models.hubbard(lattice, t=1.0, U=U, conserve="N,Sz")
    psi0 = t4a.MPS.product_state([{"up": 1, "down": 2}[s] for s in states], d=4, conserve="N,Sz",
                                 local="electron")
    t0, c0 = time.perf_counter(), time.process_time()
    res = t4a.dmrg(H, psi0, max_bond=schedule, sweeps=sweeps, cutoff=cutoff, tol=0.0, noise=0.0,
                   compute_variance=False, threads=1)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    hist = res.history
    out = {"energy": float(res.energy), "energies": [float(h.energy) for h in hist],
           "sweep_seconds": [float(h.seconds) for h in hist], "matvecs": [int(h.matvecs) for h in hist],
           "max_bond": [int(h.max_bond) for h in hist],
           "trunc": [float(h.max_truncation_error) for h in hist], "sector": {k: float(v) for k, v in res.sector.items()}}
else:
    import logging
    import warnings
    logging.getLogger("tenpy").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")        # unit_cell_width of MPS on 2D lattices: unused here
    from tenpy.algorithms import dmrg
    from tenpy.models.hubbard import FermiHubbardModel
    from tenpy.networks.mps import MPS
    p = {"cons_N": "N", "cons_Sz": "Sz", "t": 1.0, "U": U, "mu": 0.0, "bc_MPS": "finite"}
    if Ly == 1:
        p.update(lattice="Chain", L=Lx, bc_x="open")
    else:   # a 2-site periodic direction would get its bond twice in TeNPy, once in tensor4all
        p.update(lattice="Square", Lx=Lx, Ly=Ly, bc_x="open", bc_y="periodic" if Ly > 2 else "open")
    M = FermiHubbardModel(p)
    xy = M.lat.order[:, :2] if Ly > 1 else np.stack([M.lat.order[:, 0], 0 * M.lat.order[:, 0]], axis=1)
    assert [int(x) * Ly + int(y) for x, y in xy] == list(range(n)), "TeNPy's MPS order is not n = x * Ly + y"
    psi = MPS.from_product_state(M.lat.mps_sites(), states, bc="finite")
    params = {"mixer": None, "chi_list": dict(enumerate(schedule)), "max_sweeps": sweeps - 1,
              "min_sweeps": sweeps - 1, "max_E_err": 0.0, "max_S_err": 0.0, "max_trunc_err": 1.0,
              "trunc_params": {"chi_max": schedule[-1], "svd_min": None,
                               "trunc_cut": cutoff ** 0.5 if cutoff > 0 else None}}
    t0, c0 = time.perf_counter(), time.process_time()
    info = dmrg.run(psi, M, params)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    st = info["sweep_statistics"]
    assert len(st["E"]) == sweeps, f"TeNPy ran {len(st['E'])} sweeps, not {sweeps}"
    ends = [0] + list(st["N_updates"])           # cumulative local updates at the end of each sweep
    lanczos = info["bond_statistics"]["N_lanczos"]
    out = {"energy": float(info["E"]), "energies": [float(e) for e in st["E"]],
           "sweep_seconds": np.diff([0.0] + list(st["time"])).tolist(),
           "matvecs": [int(sum(lanczos[a:b])) for a, b in zip(ends, ends[1:])],
           "max_bond": [int(c) for c in st["max_chi"]],
           "trunc": [float(e) for e in st["max_trunc_err"]],
           "sector": {"N": float(psi.expectation_value("Ntot").sum()), "Sz": float(psi.expectation_value("Sz").sum())}}
out["seconds"], out["cpu"] = seconds, cpu
print(json.dumps(out))
"""
)


def run_once(code: str, case: Case) -> dict | None:
    """One DMRG run in a fresh interpreter pinned to one core with one BLAS thread."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    argv = [code, case.Lx, case.Ly, case.U, case.cutoff, ",".join(map(str, case.schedule))]
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, argv)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        print(f"  {case.name} {code} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_case(code: str, case: Case, repeats: int) -> dict | None:
    """``repeats`` runs; the first run's record with the median time (and the spread of the energies)."""
    runs = [r for r in (run_once(code, case) for _ in range(repeats)) if r is not None]
    if not runs:
        return None
    out = dict(runs[0])
    out["seconds"] = statistics.median(r["seconds"] for r in runs)
    out["cpu"] = statistics.median(r["cpu"] for r in runs)
    out["all_seconds"] = [r["seconds"] for r in runs]
    out["energy_spread"] = max(r["energy"] for r in runs) - min(r["energy"] for r in runs)
    final = case.schedule[-1]
    at_final = [s for r in runs for s, b in zip(r["sweep_seconds"], case.schedule) if b == final][1:] or [
        r["sweep_seconds"][-1] for r in runs
    ]  # the first sweep at chi still grows the bonds
    out["final_sweep_s"] = statistics.median(at_final)
    return out


def time_to(r: dict, target: float) -> tuple[float, int] | None:
    """Seconds of sweeps until the first sweep whose energy is at most ``target``, and that sweep."""
    spent = 0.0
    for k, (e, t) in enumerate(zip(r["energies"], r["sweep_seconds"])):
        spent += t
        if e <= target:
            return spent, k + 1
    return None


def equal_energy(a: dict, b: dict) -> tuple[float, tuple[float, int], tuple[float, int]]:
    """Both codes timed to the higher of their two final energies (+ the 1e-8 goal): the
    energy both reached, and each one's seconds and sweep."""
    target = max(a["energy"], b["energy"]) + E_GOAL
    return target, time_to(a, target), time_to(b, target)


def _fmt_s(t: float) -> str:
    return f"{t:.2f} s" if t < 10 else f"{t:.1f} s"


def report_case(case: Case, res: dict[str, dict]) -> None:
    a, b = res.get("t4a"), res.get("tenpy")
    ref = a["energy"] if a else None
    print(
        f"{'code':>6} {'time':>9} {'runs [s]':>20} {'energy':>20} {'|E - E(t4a)|':>13} {'s/sweep at chi':>15} "
        f"{'matvecs':>8} {'ms/matvec':>10} {'trunc (last)':>13} {'sector':>18}"
    )
    for code, r in res.items():
        runs = ", ".join(f"{t:.1f}" for t in r["all_seconds"])
        d = "" if ref is None or code == "t4a" else f"{abs(r['energy'] - ref):.1e}"
        sector = f"N={r['sector']['N']:g}, Sz={r['sector']['Sz']:+.2g}"
        mv = sum(r["matvecs"])
        print(
            f"{code:>6} {_fmt_s(r['seconds']):>9} {runs:>20} {r['energy']:20.12f} {d:>13} {r['final_sweep_s']:14.2f}s "
            f"{mv:8d} {1e3 * r['seconds'] / max(mv, 1):10.1f} {r['trunc'][-1]:13.1e} {sector:>18}"
        )
    if a and b:
        print(
            f"{'sweep':>6} {'chi':>5} {'E(t4a)':>20} {'E(TeNPy)':>20} {'difference':>11} {'t4a [s]':>8} "
            f"{'TeNPy [s]':>9} {'matvecs':>13} {'trunc t4a':>10} {'trunc TeNPy':>11}"
        )
        for k, chi in enumerate(case.schedule):
            ea, eb = a["energies"][k], b["energies"][k]
            mv = f"{a['matvecs'][k]}/{b['matvecs'][k]}"
            print(
                f"{k + 1:>6} {chi:>5} {ea:20.12f} {eb:20.12f} {ea - eb:11.1e} {a['sweep_seconds'][k]:8.2f} "
                f"{b['sweep_seconds'][k]:9.2f} {mv:>13} {a['trunc'][k]:10.1e} {b['trunc'][k]:11.1e}"
            )
        de = abs(a["energy"] - b["energy"])
        verdict = "meets" if de <= E_GOAL else "misses"
        print(
            f"       |dE| = {de:.1e} ({verdict} the goal {E_GOAL:g}); energies over the repeats vary by "
            f"{max(a['energy_spread'], b['energy_spread']):.1e}"
        )
        target, (ta, ka), (tb, kb) = equal_energy(a, b)
        print(
            f"       at equal energy (both at or below {target:.10f}, the higher final energy + {E_GOAL:g}): "
            f"t4a {ta:.1f} s (sweep {ka}), TeNPy {tb:.1f} s (sweep {kb}): t4a / TeNPy {ta / tb:.3f}"
        )
        mva, mvb = sum(a["matvecs"]), sum(b["matvecs"])
        print(
            f"       t4a / TeNPy: {a['seconds'] / b['seconds']:.3f} (goal <= {RATIO_GOAL}); per sweep at "
            f"chi = {case.schedule[-1]}: {a['final_sweep_s'] / b['final_sweep_s']:.3f}; = matvecs {mva / mvb:.2f} "
            f"x time per matvec {(a['seconds'] / mva) / (b['seconds'] / mvb):.2f}; in CPU seconds "
            f"{a['cpu']:.1f} / {b['cpu']:.1f} = {a['cpu'] / b['cpu']:.3f}"
        )
    if case.name == "itensor" and case.Lx == 6 and case.Ly == 3:
        m = case.schedule[-1]
        pub = ", ".join(f"{who} {ITENSOR[(who, m)]:.1f} s" for who in ("C++", "Julia") if (who, m) in ITENSOR)
        print(f"       ITensor, published (m = {m}, 1 thread, another machine, with noise): {pub or 'none for this m'}")


def summary(cases: dict[str, Case], table: dict[str, dict[str, dict]]) -> None:
    """The README's markdown table over the cases."""
    print("\nsummary (median seconds; ITensor: its published one-thread times, another machine):")
    print(
        "| case | sweeps (chi) | t4a | TeNPy | t4a / TeNPy | in CPU seconds | at equal energy | s/sweep at chi, "
        "t4a / TeNPy | E(t4a) | abs(E(t4a) - E(TeNPy)) | ITensor C++, Julia |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, res in table.items():
        case = cases[name]
        a, b = res.get("t4a"), res.get("tenpy")
        geo = f"chain L={case.Lx}" if case.Ly == 1 else f"{case.Lx}x{case.Ly} cyl."
        it = "-"
        m = case.schedule[-1]
        if name == "itensor" and case.Lx == 6 and ("C++", m) in ITENSOR:
            it = f"{ITENSOR[('C++', m)]:.1f} s, {ITENSOR[('Julia', m)]:.1f} s"
        cell = lambda r: _fmt_s(r["seconds"]) if r else "-"
        ratio = f"{a['seconds'] / b['seconds']:.2f}" if a and b else "-"
        cpu = f"{a['cpu'] / b['cpu']:.2f}" if a and b else "-"
        equal = "-"
        if a and b:
            _, (ta, _), (tb, _) = equal_energy(a, b)
            equal = f"{ta / tb:.2f}"
        per = f"{a['final_sweep_s']:.1f} s / {b['final_sweep_s']:.1f} s" if a and b else "-"
        de = f"{abs(a['energy'] - b['energy']):.1e}" if a and b else "-"
        e = f"{a['energy']:.10f}" if a else "-"
        print(
            f"| {geo}, U={case.U:g} | {len(case.schedule)} ({m}) | {cell(a)} | {cell(b)} | {ratio} | {cpu} | {equal} | {per} "
            f"| {e} | {de} | {it} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--cases",
        nargs="+",
        default=CASE_NAMES,
        choices=CASE_NAMES,
        metavar="CASE",
        help=f"cases to run, of {', '.join(CASE_NAMES)} (default all three)",
    )
    ap.add_argument(
        "--codes",
        nargs="+",
        default=CODES,
        choices=CODES,
        metavar="CODE",
        help=f"codes to run, of {', '.join(CODES)} (default both)",
    )
    ap.add_argument("--repeats", type=int, default=3, help="runs per code and case, the median counts (default 3)")
    ap.add_argument("--chain-L", type=int, default=64, help="length of the chain (default 64)")
    ap.add_argument("--chain-chi", type=int, default=400, help="final bond dimension of the chain (default 400)")
    ap.add_argument(
        "--cylinder-chi", type=int, default=400, help="final bond dimension of the 8x4 cylinder (default 400)"
    )
    ap.add_argument(
        "--final-sweeps", type=int, default=4, help="sweeps at the final bond dimension, chain and cylinder (default 4)"
    )
    ap.add_argument(
        "--cutoff",
        type=float,
        default=1e-10,
        help="relative discarded weight per bond, chain and cylinder (default 1e-10; "
        "TeNPy: trunc_cut = sqrt(cutoff); the itensor case uses ITensor's 0)",
    )
    ap.add_argument(
        "--itensor-m",
        type=int,
        default=400,
        help="final bond dimension m of ITensor's 6x3 benchmark (default 400; published: 200, 400, 1000)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="a smoke test: chain L = 16, 4x2 and 2x3 cylinders, chi 64, one repeat (times mean nothing)",
    )
    args = ap.parse_args()
    if (
        args.repeats < 1
        or args.chain_L < 2
        or args.final_sweeps < 1
        or args.cutoff < 0
        or min(args.chain_chi, args.cylinder_chi, args.itensor_m) < 1
    ):
        ap.error(
            f"need repeats >= 1, chain-L >= 2, final-sweeps >= 1, cutoff >= 0 and every chi >= 1; got "
            f"repeats={args.repeats}, chain-L={args.chain_L}, final-sweeps={args.final_sweeps}, "
            f"cutoff={args.cutoff}, chain-chi={args.chain_chi}, cylinder-chi={args.cylinder_chi}, "
            f"itensor-m={args.itensor_m}"
        )
    if args.chain_L % 2:
        ap.error(f"--chain-L must be even (half filling with Sz = 0), got {args.chain_L}")
    if args.quick:
        args.repeats = 1
    try:
        import tenpy  # noqa: F401
    except ImportError:
        args.codes = [c for c in args.codes if c != "tenpy"]
        print("TeNPy is not installed (pip install -e '.[bench]'): its rows are skipped")
    cases = make_cases(args)
    if args.quick:
        print("--quick: a smoke test, the times mean nothing")
    table: dict[str, dict[str, dict]] = {}
    for name in args.cases:
        case = cases[name]
        print(f"\n{case.title()}; median of {args.repeats} run(s)", flush=True)
        res = table.setdefault(name, {})
        for code in args.codes:
            r = run_case(code, case, args.repeats)
            if r is not None:
                res[code] = r
        report_case(case, res)
    summary(cases, table)


if __name__ == "__main__":
    main()
