"""Purification against TeNPy's ``PurificationTEBD``: the Heisenberg chain (open, L sites, J = 1)
cooled from beta = 0 to ``--beta`` at bond dimension ``--chi``, Sz conserved, one thread.

Codes (each in a fresh subprocess pinned to one core, one BLAS thread):

* ``t4a``: ``tensor4all.thermal_state(models.heisenberg(L, conserve="Sz"), beta, dbeta=2 dt,
  order=2, max_bond=chi, cutoff=cut)`` (TEBD on the doubled sites, Strang splitting of even and
  odd bonds);
* ``tenpy``: ``PurificationMPS.from_infiniteT`` and ``PurificationTEBD.run_imaginary(dt)`` per step
  (second order, its sweep of half steps over the bonds), ``trunc_params`` ``chi_max = chi``,
  ``trunc_cut = sqrt(cut)`` (TeNPy cuts on the norm of the discarded singular values; tensor4all's
  ``cutoff`` is their squared weight), ``svd_min = 0``.

Both take ``beta / dt`` steps of ``e^{-dt H}`` on the purification (beta = 2 dt per step). Printed
per code: the seconds of the cooling (the imports and set-up excluded), the energy at ``--beta``
and its difference to the other code's. The two second-order splittings differ at O(dt^2), so
equal energies to 1e-6 need a small ``dt`` (or ``--t4a-order 4``, which is not "the same steps").

Run: ``python benchmarks/thermal.py [--L 32] [--beta 8] [--chi 128] [--dt 0.05] [--quick]``
(``bench`` extra for TeNPy; ``--quick``: L = 8, beta = 1, chi = 32).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
args = json.loads(sys.argv[1])
L, beta, chi, dt, cut, code = args["L"], args["beta"], args["chi"], args["dt"], args["cut"], args["code"]
steps = int(round(beta / (2 * dt)))
if code == "t4a":
    import tensor4all as t4a
    from tensor4all import models
    H = models.heisenberg(L, conserve="Sz")
    t0 = time.perf_counter()
    res = t4a.thermal_state(H, 2 * dt * steps, dbeta=2 * dt, order=args["order"], max_bond=chi, cutoff=cut,
                            every=steps)
    sec = time.perf_counter() - t0
    out = {"seconds": sec, "energy": float(res.energy[-1]), "max_bond": max(r.max_bond for r in res.history)}
else:
    import numpy as np
    from tenpy.models.xxz_chain import XXZChain
    from tenpy.networks.purification_mps import PurificationMPS
    from tenpy.algorithms.purification import PurificationTEBD
    M = XXZChain({"L": L, "Jxx": 1.0, "Jz": 1.0, "hz": 0.0, "bc_MPS": "finite", "sort_charge": True})
    psi = PurificationMPS.from_infiniteT(M.lat.mps_sites(), bc="finite")
    opts = {"trunc_params": {"chi_max": chi, "svd_min": 0.0, "trunc_cut": cut ** 0.5}, "order": 2, "dt": dt}
    eng = PurificationTEBD(psi, M, opts)
    t0 = time.perf_counter()
    for _ in range(steps):
        eng.run_imaginary(dt)
    sec = time.perf_counter() - t0
    out = {"seconds": sec, "energy": float(np.sum(M.bond_energies(psi))), "max_bond": int(max(psi.chi))}
print(json.dumps(out))
"""


def run(code: str, args: argparse.Namespace) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    spec = dict(L=args.L, beta=args.beta, chi=args.chi, dt=args.dt, cut=args.cutoff, code=code, order=args.t4a_order)
    cmd = ["taskset", "-c", str(args.core), sys.executable, "-c", CHILD, json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{code} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--L", type=int, default=32, help="chain length (default 32)")
    p.add_argument("--beta", type=float, default=8.0, help="final inverse temperature (default 8)")
    p.add_argument("--chi", type=int, default=128, help="largest bond dimension (default 128)")
    p.add_argument("--dt", type=float, default=0.05, help="imaginary-time step of the purification (default 0.05)")
    p.add_argument("--cutoff", type=float, default=1e-10, help="discarded weight per SVD (default 1e-10)")
    p.add_argument("--t4a-order", type=int, default=2, choices=(2, 4), help="tensor4all's splitting (default 2)")
    p.add_argument("--core", type=int, default=0, help="the core to pin to (default 0)")
    p.add_argument("--repeat", type=int, default=1, help="runs per code; the median is kept (default 1)")
    p.add_argument("--quick", action="store_true", help="L = 8, beta = 1, chi = 32: a check that both run")
    args = p.parse_args()
    if args.quick:
        args.L, args.beta, args.chi = 8, 1.0, 32
    rows = {}
    for code in ("t4a", "tenpy"):
        runs = sorted((run(code, args) for _ in range(args.repeat)), key=lambda r: r["seconds"])
        rows[code] = runs[len(runs) // 2]
    print(
        f"Heisenberg L={args.L}, beta={args.beta}, chi={args.chi}, dt={args.dt}, cutoff={args.cutoff}, "
        f"Sz conserved, 1 thread"
    )
    print(f"{'code':8} {'seconds':>9} {'energy':>16} {'max bond':>9}")
    for code, r in rows.items():
        print(f"{code:8} {r['seconds']:9.2f} {r['energy']:16.10f} {r['max_bond']:9d}")
    t, tp = rows["t4a"], rows["tenpy"]
    print(f"time ratio t4a / tenpy = {t['seconds'] / tp['seconds']:.2f} (goal <= 0.5)")
    print(f"|E_t4a - E_tenpy| = {abs(t['energy'] - tp['energy']):.2e} (goal <= 1e-6 relative: "
          f"{abs(t['energy'] - tp['energy']) / abs(tp['energy']):.2e})")  # fmt: skip


if __name__ == "__main__":
    main()
