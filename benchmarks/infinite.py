"""Infinite systems: ``tensor4all.infinite.idmrg`` (conserved Sz) against TeNPy's iDMRG
(``tenpy.algorithms.dmrg.TwoSiteDMRGEngine`` on an infinite MPS, ``conserve="Sz"``).

Cases (same unit cell of two sites, same bond dimension, one thread, each run in a fresh
subprocess pinned to one core; the codes alternate so that the machine's load falls on both):

* ``spin1``: the spin-1 Heisenberg chain at ``chi = 128`` (exact: -1.401484038971, White and Huse);
* ``heisenberg``: the spin-1/2 Heisenberg chain at ``chi = 256`` (exact: 1/4 - ln 2, Bethe ansatz).

Both codes run the same algorithm (two-site iDMRG, TeNPy's sweep schedule, McCulloch's
prediction, no mixer), start from the same product state (Neel; all Sz = 0 for spin 1), keep at
most ``chi`` states with no cutoff (TeNPy ``svd_min = 1e-14``, tensor4all ``cutoff = 1e-28``), and
report one energy per site per sweep, estimated from the growth of the chain. TeNPy checks every
sweep (``N_sweeps_check = 1``, so no extra environment sweeps). A run stops when the estimate
moved by less than ``--tol`` in a sweep (TeNPy's ``max_E_err``, relative to ``max(|E|, 1)``, which
is 1 here; tensor4all's ``tol``, which also asks the Schmidt values of bond 0 to move by less than
``sqrt(tol)``; TeNPy's ``max_S_err`` is off) or after ``--sweeps`` sweeps.

Reported per case: each code's final estimate, the reference ``E_ref`` (the higher of the two
finals: the energy both runs reach, their estimates coming from above), the time at which each
code's estimate first came within ``1e-10 |E_ref|`` of it or below ("reach") and its ratio, the time of the whole run and its ratio
per sweep, and the error against the exact energy of tensor4all's state (its transfer-matrix
energy, the variational value of the returned iMPS). Time counts the run (TeNPy: engine
construction and ``run()``, including its final ``canonical_form``; tensor4all: ``idmrg``,
including the conversion to a dense iMPS).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 taskset -c 0 python benchmarks/infinite.py

``--method vumps`` runs the VUMPS rows instead (``--method idmrg,vumps`` both):
``tensor4all.infinite.vumps`` on Sz sectors (cell of two, grown from the Neel state by subspace
expansion to ``1.25 chi``, then cut back to ``chi`` by the Schmidt values) against TeNPy's
``TwoSiteVUMPSEngine`` with ``conserve="Sz"`` (TeNPy's one-site VUMPS needs a start of the target
bond dimension, which it makes by random unitaries that do not conserve charge; its two-site
engine grows from the same product state by a truncated SVD to ``chi_max``), and beside them
tensor4all's iDMRG of the same case. TeNPy's VUMPS stops at ``max_E_err = 1e-13`` and
``max_split_err = --vumps-tol``, or after ``--peer-hours``; tensor4all's at the error
``--vumps-tol``. The energies per iteration are the environments' (each code's own), which are
not bounds before convergence (tensor4all's dip below the fixed point's while the sectors
settle), so the time reported is when each VUMPS came within ``1e-10 |E_ref|`` of the higher
final, or below it, to stay (a TeNPy run stopped by the time limit counts at its end).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from _timing import CHILD_PRELUDE

ROOT = Path(__file__).resolve().parent.parent

CASES = {"spin1": ("1", 128, -1.401484038971), "heisenberg": ("0.5", 256, 0.25 - 0.6931471805599453)}

#: a tensor4all child: ``RUN`` (replaced) is the call, ``callback=cb`` recording each sweep's energy
_T4A_CHILD = r"""
from tensor4all import infinite as inf
spin, chi, tol, sweeps = ARGS[:4]
H = inf.infinite_model("heisenberg", cell=2, spin="1/2" if spin == "0.5" else "1")
trace = []
t0 = time.perf_counter()
cb = lambda r: trace.append((time.perf_counter() - t0, r.energy))
res = RUN
total = time.perf_counter() - t0
print(json.dumps({"trace": trace, "total": total, "final": trace[-1][1], "state_energy": float(res.energy),
                  "sweeps": len(trace), "max_bond": res.state.max_bond, "converged": res.converged}))
"""

T4A = _T4A_CHILD.replace(
    "RUN", 'inf.idmrg(H, max_bond=chi, cutoff=1e-28, conserve="Sz", tol=tol, sweeps=sweeps, callback=cb)'
)

TENPY = r"""
import logging
logging.disable(logging.WARNING)
import warnings
warnings.simplefilter("ignore")
from tenpy.models.spins import SpinChain
from tenpy.networks.mps import MPS
from tenpy.algorithms import dmrg
spin, chi, tol, sweeps = ARGS
M = SpinChain({"S": float(eval(spin)), "Jx": 1, "Jy": 1, "Jz": 1, "L": 2, "bc_MPS": "infinite", "conserve": "Sz"})
states = ["up", "down"] if spin == "0.5" else ["0.0", "0.0"]
psi = MPS.from_product_state(M.lat.mps_sites(), states, "infinite")
t0 = time.perf_counter()
eng = dmrg.TwoSiteDMRGEngine(psi, M, {"trunc_params": {"chi_max": chi, "svd_min": 1e-14, "trunc_cut": None},
    "max_E_err": tol, "max_S_err": 1.0, "min_sweeps": 3, "max_sweeps": sweeps, "N_sweeps_check": 1, "mixer": None})
E, psi = eng.run()
total = time.perf_counter() - t0
st = eng.sweep_stats
trace = [(float(t), float(e)) for t, e in zip(st["time"], st["E"])]
print(json.dumps({"trace": trace, "total": total, "final": float(E), "sweeps": len(trace),
                  "max_bond": int(max(psi.chi))}))
"""


T4A_VUMPS = _T4A_CHILD.replace(
    "RUN", 'inf.vumps(H, max_bond=chi, cutoff=1e-14, conserve="Sz", tol=tol, max_iter=sweeps, callback=cb)'
)

TENPY_VUMPS = r"""
import logging
logging.disable(logging.WARNING)
import warnings
warnings.simplefilter("ignore")
from tenpy.models.spins import SpinChain
from tenpy.networks.mps import MPS
from tenpy.algorithms import vumps
spin, chi, tol, sweeps, hours = ARGS
M = SpinChain({"S": float(eval(spin)), "Jx": 1, "Jy": 1, "Jz": 1, "L": 2, "bc_MPS": "infinite", "conserve": "Sz"})
states = ["up", "down"] if spin == "0.5" else ["0.0", "0.0"]
psi = MPS.from_product_state(M.lat.mps_sites(), states, "infinite")
t0 = time.perf_counter()
eng = vumps.TwoSiteVUMPSEngine(psi, M, {"trunc_params": {"chi_max": chi, "svd_min": 1e-14}, "max_E_err": 1e-13,
    "max_S_err": 1.0, "max_split_err": tol, "max_sweeps": sweeps, "max_hours": hours, "mixer": None})
E, psi = eng.run()
total = time.perf_counter() - t0
st = eng.sweep_stats
trace = [(float(t), float(e)) for t, e in zip(st["time"], st["E"])]
print(json.dumps({"trace": trace, "total": total, "final": trace[-1][1], "sweeps": len(trace),
                  "max_bond": int(max(psi.chi)), "converged": total < 3600 * hours and len(trace) < sweeps}))
"""


def _child(code: str, args: tuple) -> dict:
    src = CHILD_PRELUDE + f"ARGS = {args!r}\n" + code
    out = subprocess.run(
        [sys.executable, "-c", src], capture_output=True, text=True, cwd=ROOT, env=None, check=False, timeout=7200
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _reach(trace: list, target: float, rel: float) -> float | None:
    """The first time the estimate is within ``rel |target|`` of ``target`` or below it."""
    for t, e in trace:
        if e - target <= rel * abs(target):
            return t
    return None


def _settled(trace: list, target: float, rel: float) -> float | None:
    """The first time from which every later estimate is within ``rel |target|`` of ``target`` or
    below it (VUMPS's energies from the environments of a state not yet converged can dip below
    the fixed point's and come back: the first crossing would flatter them)."""
    t_in = None
    for t, e in trace:
        if e - target <= rel * abs(target):
            t_in = t if t_in is None else t_in
        else:
            t_in = None
    return t_in


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="spin1,heisenberg", help="comma-separated: spin1, heisenberg")
    ap.add_argument("--tol", type=float, default=1e-13, help="stop when the estimate moves by less (relative)")
    ap.add_argument("--sweeps", type=int, default=300, help="at most this many sweeps")
    ap.add_argument("--chi", type=int, default=None, help="override the bond dimension (quick checks)")
    ap.add_argument("--out", default=None, help="write the per-sweep traces (JSON) here")
    ap.add_argument("--method", default="idmrg", help="comma-separated: idmrg, vumps")
    ap.add_argument("--vumps-tol", type=float, default=1e-7, help="VUMPS: stop at this error max ||A_C - A_L C||")
    ap.add_argument("--peer-hours", type=float, default=0.5, help="VUMPS: stop TeNPy's run after this long")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    traces = {}
    methods = a.method.split(",")
    for case in a.cases.split(",") if "idmrg" in methods else []:
        spin, chi, exact = CASES[case]
        chi = a.chi or chi
        args = (spin, chi, a.tol, a.sweeps)
        peer = _child(TENPY, args)
        ours = _child(T4A, args)
        ref = max(peer["final"], ours["final"])  # the energy both runs reach (the estimates come from above)
        r_ours, r_peer = _reach(ours["trace"], ref, 1e-10), _reach(peer["trace"], ref, 1e-10)
        print(f"== {case}: chi {chi}, cell 2, conserve Sz, one thread ==")
        print(
            f"  finals: tensor4all {ours['final']:.15f} ({ours['sweeps']} sweeps), TeNPy {peer['final']:.15f} "
            f"({peer['sweeps']} sweeps); relative difference {abs(ours['final'] - peer['final']) / abs(ref):.1e}"
        )
        reach = (
            "not reached"
            if r_ours is None or r_peer is None
            else f"{r_ours:.2f} s vs {r_peer:.2f} s: {r_ours / r_peer:.2f}x"
        )
        print(f"  reach E_ref = {ref:.15f} (to 1e-10 relative): {reach}")
        per_ours, per_peer = ours["total"] / ours["sweeps"], peer["total"] / peer["sweeps"]
        print(
            f"  whole run: {ours['total']:.2f} s vs {peer['total']:.2f} s; per sweep {per_ours:.3f} s vs "
            f"{per_peer:.3f} s: {per_ours / per_peer:.2f}x"
        )
        print(
            f"  tensor4all state's energy - exact: {ours['state_energy'] - exact:.2e} (estimate - exact: "
            f"{ours['final'] - exact:.2e}; TeNPy's estimate - exact: {peer['final'] - exact:.2e})"
        )
        print(
            json.dumps(
                {
                    "case": case,
                    "chi": chi,
                    "ours": {k: v for k, v in ours.items() if k != "trace"},
                    "tenpy": {k: v for k, v in peer.items() if k != "trace"},
                    "reach": [r_ours, r_peer],
                }
            )
        )
        traces[case] = {"tensor4all": ours["trace"], "tenpy": peer["trace"]}
    for case in a.cases.split(",") if "vumps" in methods else []:
        traces[case + "-vumps"] = _vumps_rows(case, a)
    if a.out:
        Path(a.out).write_text(json.dumps(traces))


def _vumps_rows(case: str, a: argparse.Namespace) -> dict:
    """The VUMPS rows of one case: tensor4all against TeNPy's two-site VUMPS, and tensor4all's iDMRG."""
    spin, chi, exact = CASES[case]
    chi = a.chi or chi
    args = (spin, chi, a.vumps_tol, a.sweeps, a.peer_hours)
    ours = _child(T4A_VUMPS, args)
    print(
        f"  ({case}: tensor4all VUMPS {ours['total']:.2f} s, state - exact {ours['state_energy'] - exact:.2e})",
        flush=True,
    )
    peer = _child(TENPY_VUMPS, args)
    dmrg = _child(T4A, (spin, chi, a.tol, a.sweeps))
    ref = max(peer["final"], ours["final"])
    r_ours, r_peer = _settled(ours["trace"], ref, 1e-10), _settled(peer["trace"], ref, 1e-10)
    if r_peer is None and not peer["converged"]:
        r_peer = peer["total"]  # stopped by the time limit: its end is a lower bound
    print(f"== {case} VUMPS: chi {chi}, cell 2, conserve Sz, one thread ==")
    print(
        f"  finals: tensor4all {ours['final']:.15f} ({ours['sweeps']} iterations, converged {ours['converged']}), "
        f"TeNPy {peer['final']:.15f} ({peer['sweeps']} sweeps, converged {peer['converged']})"
    )
    reach = (
        "not reached"
        if r_ours is None or r_peer is None
        else f"{r_ours:.2f} s vs {r_peer:.2f} s: {r_ours / r_peer:.3f}x"
    )
    print(f"  settle within 1e-10 relative of E_ref = {ref:.15f}: {reach}")
    print(f"  whole run: {ours['total']:.2f} s vs {peer['total']:.2f} s")
    print(
        f"  errors against the exact energy: tensor4all VUMPS state {ours['state_energy'] - exact:.2e}, TeNPy VUMPS "
        f"{peer['final'] - exact:.2e}; tensor4all iDMRG state {dmrg['state_energy'] - exact:.2e} "
        f"({dmrg['total']:.2f} s, {dmrg['sweeps']} sweeps)"
    )
    levels = (1e-6, 1e-7, 1e-9)
    stays = {
        k: [_settled(d["trace"], exact, lv / abs(exact)) for lv in levels]
        for k, d in (("ours", ours), ("tenpy", peer), ("idmrg", dmrg))
    }
    fmt = lambda ts: " / ".join("never" if t is None else f"{t:.1f}" for t in ts)  # noqa: E731
    print(
        f"  within {' / '.join(f'{lv:.0e}' for lv in levels)} of the exact energy to stay, from (s): tensor4all VUMPS "
        f"{fmt(stays['ours'])}, TeNPy VUMPS {fmt(stays['tenpy'])}, tensor4all iDMRG {fmt(stays['idmrg'])}"
    )
    row = {"case": case + "-vumps", "chi": chi, "reach": [r_ours, r_peer], "stays": stays}
    row |= {
        k: {x: v for x, v in d.items() if x != "trace"} for k, d in (("ours", ours), ("tenpy", peer), ("idmrg", dmrg))
    }
    print(json.dumps(row))
    return {"tensor4all": ours["trace"], "tenpy": peer["trace"], "idmrg": dmrg["trace"]}


if __name__ == "__main__":
    main()
