"""Time evolution: ``tensor4all.tdvp`` and ``tensor4all.tebd`` against TeNPy, dense and U(1),
and against the exact free-fermion solution of the XX chain.

Problem (the timed sections): the open spin-1/2 Heisenberg chain, ``L = 64``, real time from
the Neel state (up, down, up, ...), ``dt = 0.05``, 40 steps, at most ``chi = 128`` states per
bond, relative discarded weight ``cutoff = 1e-10``, one thread.

Sections:

* ``tdvp``: two-site TDVP, ``tensor4all.tdvp(two_site=True)`` against TeNPy's
  ``TwoSiteTDVPEngine``;
* ``tebd``: ``tensor4all.tebd(order=2)`` and ``(order=4)`` against TeNPy's ``TEBDEngine``
  (``order`` 2 and 4);
* ``accuracy``: the XX chain ``J sum (Sx Sx + Sy Sy)`` (``L = 40``, ``chi = 128``, to ``t = 5``)
  from the Neel state, whose exact solution is free fermions
  (``tests/tensor4all/free_fermions.py``): the staggered magnetization over time (tensor4all;
  TeNPy at the final time), ``<Sz_i>`` and the one-particle density matrix ``C_ij =
  <c_i^dagger c_j>`` at the final time, measured through the Jordan-Wigner strings, for
  tensor4all's two-site TDVP and fourth-order TEBD (TeNPy's beside them as context). The bar
  is ``1e-6``. This section truncates at ``--acc-cutoff 1e-16`` (and ``chi``), not at the timed
  sections' ``1e-10``: a discarded weight ``w`` per SVD moves the state by ``sqrt(w)``, and
  ``<c_i^dagger c_j>`` moves to first order in it (measured with TeNPy at ``L = 12, t = 0.5``:
  ``max |dC| = 1.8e-5`` at ``1e-10``, ``2.5e-6`` at ``1e-12``, ``5.5e-7`` / ``2.4e-8`` (TDVP /
  TEBD4) at ``1e-16``). ``chi = 128`` itself costs nothing here: the exact Schmidt spectrum of
  the middle bond at ``t = 5`` (from the free-fermion correlation matrix) has a weight of
  ``1.8e-14`` beyond its 128 largest values. What is left is the integrator's error at ``dt``
  (two-site TDVP at ``dt = 0.05``: ``5.5e-7``, at ``0.025``: ``6.9e-8`` in the same test).
  The tensor4all rows measure ``<Sz_i>`` after every step (inside their time), so this
  section's times are not a comparison.

Codes (each case in a fresh subprocess pinned to one core, one BLAS thread through
``threadpoolctl`` and the thread variables): ``t4a-U1`` (``models.heisenberg(L,
conserve="Sz")`` and ``MPS.product_state(..., conserve="Sz")``), ``t4a-dense`` (no
``conserve``), ``tenpy-U1`` / ``tenpy-dense`` (``SpinChain`` with ``conserve="Sz"`` / None).
The time is the evolution call alone (TeNPy: engine construction with its environments, and
``run()``); models, initial states and measurements are outside it.

Matching TeNPy's options to tensor4all's:

* truncation: tensor4all drops the largest tail of relative weight ``sum(dropped s^2) /
  sum(s^2) <= cutoff``; TeNPy's ``trunc_cut`` drops the largest tail with ``sum(dropped S^2) <=
  trunc_cut^2`` of the normalized Schmidt values, so ``trunc_cut = sqrt(cutoff)``,
  ``chi_max = chi``, and ``svd_min = None`` (TeNPy's default ``1e-14`` drops Schmidt values of
  weight ``1e-28``, which tensor4all has no counterpart for);
* local exponential (TDVP): TeNPy's Lanczos stops when the last Krylov coefficient of the
  result is below ``P_tol``; it gets ``P_tol = krylov_tol`` (tensor4all's default ``1e-10``),
  ``N_max = 20`` (TeNPy's default);
* TDVP sweep: both sweep left to right and back with ``dt/2`` per half sweep (the
  second-order projector splitting; TeNPy takes the last pair's two half steps as one);
* TEBD order 2: TeNPy's ``e^{A/2} e^B e^{A/2}`` with A its "odd" bonds (sites (0,1), (2,3),
  ...); order 4: Suzuki's fourth order, five order-2 steps of ``t1, t1, 1 - 4 t1, t1, t1``
  with ``t1 = 1 / (4 - 4^(1/3))``. A different choice of the bonds of the half steps changes
  ``<Sz>`` by the Trotter error, well above ``1e-6``: the printed difference says whether the
  two codes run the same scheme.

Printed per case: seconds, ``max_i |<Sz_i> - <Sz_i>(TeNPy of the same kind)|`` at the final
time (the comparison of times counts only when it is ``<= 1e-6``), the entanglement entropy
of the middle bond and the largest bond dimension; then the ratios tensor4all / TeNPy (below
1: tensor4all faster), dense / U(1).

Run: ``python benchmarks/tdvp.py [--sections tdvp tebd accuracy] [--codes ...]`` (``bench``
extra for TeNPy). ``--quick`` (``L = 12``, 10 steps, ``chi = 32``; accuracy ``L = 12`` to
``t = 0.5``) checks that every code runs; its times mean nothing. Every option has a default
and a help line (``--help``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "tensor4all"))
from free_fermions import density_matrix, magnetization, neel, staggered  # noqa: E402

from _timing import CHILD_PRELUDE  # noqa: E402

CODES = ["t4a-U1", "t4a-dense", "tenpy-U1", "tenpy-dense"]
SECTIONS = ["tdvp", "tebd", "accuracy"]
KRYLOV_TOL = 1e-10
BAR = 1e-6

_CHILD = (
    CHILD_PRELUDE
    + r"""
import math
sys.path.insert(0, sys.argv[1])
from free_fermions import density_matrix_mps, neel

algo, code, model = sys.argv[2], sys.argv[3], sys.argv[4]
L, steps, dt, chi, cutoff, ktol = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8]), \
    float(sys.argv[9]), float(sys.argv[10])
want_c = sys.argv[11] == "1"
Jz = 1.0 if model == "heisenberg" else 0.0
u1 = code.endswith("U1")
out = {}

if code.startswith("t4a"):
    import tensor4all as t4a
    from tensor4all import models
    H = models.heisenberg(L, Jz=Jz, conserve="Sz" if u1 else None)
    psi0 = t4a.MPS.product_state(neel(L), conserve="Sz" if u1 else None)
    obs = {"Sz": "Sz"} if want_c else None
    t0 = time.perf_counter()
    if algo == "tdvp":
        res = t4a.tdvp(H, psi0, steps * dt, dt, two_site=True, max_bond=chi, cutoff=cutoff, krylov_tol=ktol,
                       observables=obs, threads=1)
    else:
        res = t4a.tebd(H, psi0, steps * dt, dt, order=int(algo[-1]), max_bond=chi, cutoff=cutoff,
                       observables=obs, threads=1)
    out["seconds"] = time.perf_counter() - t0
    psi = res.state
    out["sz"] = [float(np.real(psi.expect("Sz", i))) for i in range(L)]
    out["entropy"] = float(psi.entanglement_entropy(L // 2 - 1))
    out["max_bond"] = int(max(psi.bond_dims))
    if want_c:
        out["times"] = [float(x) for x in res.times]
        out["sz_t"] = np.real(np.asarray(res.observables["Sz"])).tolist()
        sites = psi
else:
    import logging
    logging.getLogger("tenpy").setLevel(logging.ERROR)
    from types import SimpleNamespace
    from tenpy.algorithms.tdvp import TwoSiteTDVPEngine
    from tenpy.algorithms.tebd import TEBDEngine
    from tenpy.models.spins import SpinChain
    from tenpy.networks.mps import MPS
    M = SpinChain({"L": L, "S": 0.5, "Jx": 1.0, "Jy": 1.0, "Jz": Jz, "bc_MPS": "finite",
                   "conserve": "Sz" if u1 else None})
    psi = MPS.from_product_state(M.lat.mps_sites(), [("up", "down")[s] for s in neel(L)], bc="finite",
                                 dtype=complex)
    opts = {"dt": dt, "N_steps": steps,
            "trunc_params": {"chi_max": chi, "svd_min": None, "trunc_cut": math.sqrt(cutoff) if cutoff > 0 else None}}
    t0 = time.perf_counter()
    if algo == "tdvp":
        opts["lanczos_params"] = {"P_tol": ktol, "N_max": 20}
        eng = TwoSiteTDVPEngine(psi, M, opts)
    else:
        opts["order"] = int(algo[-1])
        eng = TEBDEngine(psi, M, opts)
    eng.run()
    out["seconds"] = time.perf_counter() - t0
    out["sz"] = [float(x) for x in np.real(psi.expectation_value("Sz"))]
    out["entropy"] = float(psi.entanglement_entropy()[L // 2 - 1])
    out["max_bond"] = int(max(psi.chi))
    if want_c:   # site tensors (vL, p, vR) in tensor4all's basis order (up, down)
        ts = []
        for i, site in enumerate(psi.sites):
            B = psi.get_B(i, form="Th" if i == 0 else "B").itranspose(["vL", "p", "vR"]).to_ndarray()
            ts.append(B[:, [site.state_index("up"), site.state_index("down")], :])
        sites = SimpleNamespace(tensors=ts)
if want_c:
    c = density_matrix_mps(sites)
    out["c_re"], out["c_im"] = c.real.tolist(), c.imag.tolist()
print(json.dumps(out))
"""
)


def run_case(
    algo: str, code: str, model: str, L: int, steps: int, dt: float, chi: int, cutoff: float, want_c: bool = False
) -> dict | None:
    """One evolution in a fresh interpreter pinned to one core with one BLAS thread."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    argv = [algo, code, model, L, steps, dt, chi, cutoff, KRYLOV_TOL, int(want_c)]
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, os.path.join(HERE, "..", "tests", "tensor4all"), *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        print(f"  {algo} {code} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _partner(code: str) -> str:
    """The TeNPy code of the same kind (U(1) or dense)."""
    return "tenpy-" + code.split("-", 1)[1]


def timed_section(algo: str, codes: list[str], L: int, steps: int, dt: float, chi: int, cutoff: float) -> None:
    print(
        f"\n{algo}: Heisenberg L={L}, Neel, dt={dt}, {steps} steps (t = {steps * dt:g}), chi={chi}, "
        f"cutoff={cutoff:g}, 1 thread"
    )
    print(f"{'code':>12} {'time [s]':>9} {'max|dSz| vs TeNPy':>18} {'S(L/2)':>9} {'max bond':>9}")
    res: dict[str, dict] = {}
    for code in sorted(codes, key=lambda c: c.startswith("t4a")):  # TeNPy first: its Sz is the reference
        r = run_case(algo, code, "heisenberg", L, steps, dt, chi, cutoff)
        if r is None:
            continue
        res[code] = r
        p = res.get(_partner(code))
        d = "" if code.startswith("tenpy") or p is None else f"{np.max(np.abs(np.subtract(r['sz'], p['sz']))):.1e}"
        print(f"{code:>12} {r['seconds']:9.2f} {d:>18} {r['entropy']:9.5f} {r['max_bond']:9d}", flush=True)
    for kind in ("U1", "dense"):
        a, b = res.get(f"t4a-{kind}"), res.get(f"tenpy-{kind}")
        if a and b:
            diff = float(np.max(np.abs(np.subtract(a["sz"], b["sz"]))))
            verdict = "counts" if diff <= BAR else f"does NOT count (max|dSz| = {diff:.1e} > {BAR:g})"
            print(f"      t4a-{kind} / tenpy-{kind}: {a['seconds'] / b['seconds']:.3f}  (comparison {verdict})")
    for who in ("t4a", "tenpy"):
        a, b = res.get(f"{who}-dense"), res.get(f"{who}-U1")
        if a and b:
            print(
                f"      {who}-dense / {who}-U1: {a['seconds'] / b['seconds']:.2f}x  "
                f"(max|dSz| between them {np.max(np.abs(np.subtract(a['sz'], b['sz']))):.1e})"
            )


def accuracy_section(codes: list[str], L: int, steps: int, dt: float, chi: int, cutoff: float) -> None:
    t = steps * dt
    states = neel(L)
    c_exact = density_matrix(states, t)
    sz_exact = magnetization(states, t)
    print(
        f"\naccuracy: XX chain L={L}, Neel, dt={dt}, t={t:g}, chi={chi}, cutoff={cutoff:g}, against free fermions "
        f"(exact m_s(t) = {staggered(sz_exact):.6f}; bar {BAR:g})"
    )
    print(
        f"{'algorithm':>10} {'code':>12} {'time [s]':>9} {'max|dm_s(t)|':>13} {'max|dSz_i|':>11} "
        f"{'max|dC_ij|':>11} {'S(L/2)':>9} {'max bond':>9}  verdict"
    )
    for algo in ("tdvp", "tebd4"):
        for code in codes:
            r = run_case(algo, code, "xx", L, steps, dt, chi, cutoff, want_c=True)
            if r is None:
                continue
            c = np.asarray(r["c_re"]) + 1j * np.asarray(r["c_im"])
            d_c = float(np.max(np.abs(c - c_exact)))
            d_sz = float(np.max(np.abs(np.subtract(r["sz"], sz_exact))))
            if "sz_t" in r:  # over the whole time grid
                ms = staggered(np.asarray(r["sz_t"]))
                d_ms = float(np.max(np.abs(ms - staggered(magnetization(states, np.asarray(r["times"]))))))
                ms_txt = f"{d_ms:13.1e}"
            else:  # the final time only
                d_ms = abs(staggered(np.asarray(r["sz"])) - staggered(sz_exact))
                ms_txt = f"{d_ms:11.1e} *"
            worst = max(d_c, d_sz, d_ms)
            verdict = "ok" if worst <= BAR else f"above the bar ({worst:.1e})"
            print(
                f"{algo:>10} {code:>12} {r['seconds']:9.2f} {ms_txt} {d_sz:11.1e} {d_c:11.1e} "
                f"{r['entropy']:9.5f} {r['max_bond']:9d}  {verdict}",
                flush=True,
            )
    print("      (*: at the final time only; tensor4all's rows: the maximum over every step)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--L", type=int, default=64, help="chain length of the timed sections (default 64)")
    ap.add_argument("--steps", type=int, default=40, help="time steps of the timed sections (default 40)")
    ap.add_argument("--dt", type=float, default=0.05, help="time step (default 0.05)")
    ap.add_argument("--chi", type=int, default=128, help="largest bond dimension (default 128)")
    ap.add_argument(
        "--cutoff",
        type=float,
        default=1e-10,
        help="relative discarded weight per SVD (default 1e-10; TeNPy: trunc_cut = sqrt(cutoff))",
    )
    ap.add_argument("--acc-L", type=int, default=40, help="chain length of the accuracy section (default 40)")
    ap.add_argument("--acc-t", type=float, default=5.0, help="final time of the accuracy section (default 5)")
    ap.add_argument("--acc-dt", type=float, default=0.05, help="time step of the accuracy section (default 0.05)")
    ap.add_argument(
        "--acc-cutoff",
        type=float,
        default=1e-16,
        help="relative discarded weight per SVD in the accuracy section (default 1e-16; see above)",
    )
    ap.add_argument(
        "--codes",
        nargs="+",
        default=CODES,
        choices=CODES,
        metavar="CODE",
        help=f"codes to run, of {', '.join(CODES)} (default all four)",
    )
    ap.add_argument(
        "--sections",
        nargs="+",
        default=SECTIONS,
        choices=SECTIONS,
        metavar="SECTION",
        help=f"sections to run, of {', '.join(SECTIONS)} (default all)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="a smoke test: L = 12, 10 steps, chi = 32, accuracy L = 12 to t = 0.5 (times mean nothing)",
    )
    args = ap.parse_args()
    if args.quick:
        args.L, args.steps, args.chi, args.acc_L, args.acc_t = 12, 10, 32, 12, 10 * args.acc_dt
    if (
        args.L < 4
        or args.acc_L < 4
        or args.steps < 1
        or args.chi < 1
        or not args.dt > 0
        or not args.acc_dt > 0
        or args.cutoff < 0
        or args.acc_cutoff < 0
    ):
        ap.error(
            f"need L, acc-L >= 4, steps >= 1, chi >= 1, dt, acc-dt > 0, cutoffs >= 0; got L={args.L}, "
            f"acc-L={args.acc_L}, steps={args.steps}, chi={args.chi}, dt={args.dt}, acc-dt={args.acc_dt}, "
            f"cutoff={args.cutoff}, acc-cutoff={args.acc_cutoff}"
        )
    acc_steps = round(args.acc_t / args.acc_dt)
    if acc_steps < 1 or not math.isclose(acc_steps * args.acc_dt, args.acc_t, rel_tol=1e-9):
        ap.error(f"--acc-t {args.acc_t} is not a positive multiple of --acc-dt {args.acc_dt}")
    try:
        import tenpy  # noqa: F401
    except ImportError:
        args.codes = [c for c in args.codes if not c.startswith("tenpy")]
        print("TeNPy is not installed (pip install -e '.[bench]'): its rows are skipped")
    if args.quick:
        print("--quick: a smoke test, the times mean nothing")
    if "tdvp" in args.sections:
        timed_section("tdvp", args.codes, args.L, args.steps, args.dt, args.chi, args.cutoff)
    if "tebd" in args.sections:
        for order in (2, 4):
            timed_section(f"tebd{order}", args.codes, args.L, args.steps, args.dt, args.chi, args.cutoff)
    if "accuracy" in args.sections:
        acc_codes = [c for c in args.codes if c != "tenpy-dense"]  # TeNPy U(1) is the context row
        accuracy_section(acc_codes, args.acc_L, acc_steps, args.acc_dt, args.chi, args.acc_cutoff)


if __name__ == "__main__":
    main()
