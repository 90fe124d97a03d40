"""Finite temperature: purification against TeNPy's ``PurificationTEBD`` (timing), and the accuracy
checks too long for the unit tests (``--check``).

**Timing** (default): the Heisenberg chain (open, L sites, J = 1) cooled from beta = 0 to ``--beta``
at bond dimension ``--chi``, Sz conserved, one thread. Codes, each in a fresh subprocess pinned to
one core with one BLAS thread, run alternately ``--repeat`` times (the medians are reported):

* ``t4a``: ``tensor4all.thermal_state(models.heisenberg(L, conserve="Sz"), beta, dbeta=2 dt,
  order=2, splitting="sweep", max_bond=chi, cutoff=cut)``: TEBD on the doubled sites with TeNPy's
  splitting, a sweep of half steps ``e^{-dt h_b / 2}`` over the bonds to the right and back, so
  both codes apply the same product of gates (``--splitting brick``: Strang over even and odd
  bonds, half the gates, a different O(dt^2) error);
* ``tenpy``: ``PurificationMPS.from_infiniteT`` and one ``PurificationTEBD.run_imaginary(beta / 2)``
  (``dt`` per step, its second-order sweep; one canonical form at the end), ``trunc_params``
  ``chi_max = chi``, ``trunc_cut = sqrt(cut)`` (TeNPy cuts on the norm of the discarded singular
  values; tensor4all's ``cutoff`` is their squared weight), ``svd_min = 0``.

Both take ``beta / (2 dt)`` steps of ``e^{-dt H}`` on the purification. Printed: the seconds of the
cooling per run (imports and set-up excluded), the medians (wall and CPU seconds: with one BLAS thread
the CPU time is the work done, which a shared machine's changing load does not inflate), the energies at ``--beta`` and their
relative difference (the comparison counts only where it is below 1e-6).

**Checks** (``--check xx,tfim,hubbard``): the derivative path at the sizes of the issue, against
exact results computed here or in ``tests/tensor4all/data``:

* ``xx``: the XX chain L = 32 to beta = 10, ``tensor4all.thermodynamics`` (its tangent engine on the
  Sz-conserving sites, ``dbeta`` 0.25, order 4, ``--cutoff-xx`` 1e-17): ln Z, E and C = -beta^2 dE/d beta
  against free fermions;
* ``tfim``: the transverse-field Ising chain at g = 1, L = 24 to beta = 4, the same against
  Jordan-Wigner;
* ``trotter``: the splitting's share of the XX chain's errors, exactly (free fermions: the Trotterized
  purification without truncation), orders 2 and 4 at ``dbeta`` 0.4, 0.2, 0.1 (a second);
* ``quench``: a local quench of a thermal state in real time (``tensor4all.evolve_thermal``), the XX
  chain L = ``--quench-L`` with a field on its middle site cooled to beta = 1 and the field switched off,
  with and without the ancillas' backwards evolution: max bond, seconds and the error of <Sz_i>(t)
  against free fermions;
* ``hubbard``: the Hubbard chain L = 8 (U = 4, mu = 2) to beta = 2, ``thermal_state`` with N and Sz
  conserved, ln Z and E against the 65536 states of ``tests/tensor4all/data/thermal_references.json``.

Run: ``python benchmarks/thermal.py [--L 32] [--beta 8] [--chi 128] [--dt 0.05] [--repeat 3]
[--quick]`` (``bench`` extra for TeNPy; ``--quick``: L = 8, beta = 1, chi = 32), or
``python benchmarks/thermal.py --check xx,tfim,hubbard,trotter,quench [--cutoff-check 1e-14]``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np
import scipy.linalg

CHILD = r"""
import json, sys, time
args = json.loads(sys.argv[1])
L, beta, chi, dt, cut, code = args["L"], args["beta"], args["chi"], args["dt"], args["cut"], args["code"]
steps = int(round(beta / (2 * dt)))
if code == "t4a":
    import tensor4all as t4a
    from tensor4all import models
    H = models.heisenberg(L, conserve="Sz")
    t0, c0 = time.perf_counter(), time.process_time()
    res = t4a.thermal_state(H, 2 * dt * steps, dbeta=2 * dt, order=args["order"], splitting=args["splitting"],
                            max_bond=chi, cutoff=cut, every=steps)
    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": sec, "cpu": cpu, "energy": float(res.energy[-1]), "max_bond": max(r.max_bond for r in res.history)}
else:
    import numpy as np
    from tenpy.models.xxz_chain import XXZChain
    from tenpy.networks.purification_mps import PurificationMPS
    from tenpy.algorithms.purification import PurificationTEBD
    M = XXZChain({"L": L, "Jxx": 1.0, "Jz": 1.0, "hz": 0.0, "bc_MPS": "finite", "sort_charge": True})
    psi = PurificationMPS.from_infiniteT(M.lat.mps_sites(), bc="finite")
    opts = {"trunc_params": {"chi_max": chi, "svd_min": 0.0, "trunc_cut": cut ** 0.5}, "order": 2, "dt": dt}
    eng = PurificationTEBD(psi, M, opts)
    t0, c0 = time.perf_counter(), time.process_time()
    eng.run_imaginary(steps * dt)  # one call: one canonical form at the end
    sec, cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"seconds": sec, "cpu": cpu, "energy": float(np.sum(M.bond_energies(psi))), "max_bond": int(max(psi.chi))}
print(json.dumps(out))
"""

DATA = pathlib.Path(__file__).resolve().parents[1] / "tests" / "tensor4all" / "data" / "thermal_references.json"


def run(code: str, args: argparse.Namespace) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    spec = dict(L=args.L, beta=args.beta, chi=args.chi, dt=args.dt, cut=args.cutoff, code=code,
                order=args.t4a_order, splitting=args.splitting)  # fmt: skip
    cmd = ["taskset", "-c", str(args.core), sys.executable, "-c", CHILD, json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{code} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def timing(args: argparse.Namespace) -> None:
    runs: dict[str, list[dict]] = {"t4a": [], "tenpy": []}
    for _ in range(args.repeat):  # alternately, so that a drift of the machine's load hits both
        for code in runs:
            runs[code].append(run(code, args))
    print(
        f"Heisenberg L={args.L}, beta={args.beta}, chi={args.chi}, dt={args.dt}, cutoff={args.cutoff}, Sz conserved, "
        f"1 thread; tensor4all order {args.t4a_order}, splitting {args.splitting}"
    )
    print(f"{'code':8} {'median s':>9} {'runs (s)':>24} {'median cpu s':>13} {'energy':>16} {'max bond':>9}")
    med, cpu = {}, {}
    for code, rs in runs.items():
        med[code] = statistics.median(r["seconds"] for r in rs)
        cpu[code] = statistics.median(r["cpu"] for r in rs)
        each = " ".join(f"{r['seconds']:.2f}" for r in rs)
        print(f"{code:8} {med[code]:9.2f} {each:>24} {cpu[code]:13.2f} {rs[0]['energy']:16.10f} {rs[0]['max_bond']:9d}")
    et, ep = runs["t4a"][0]["energy"], runs["tenpy"][0]["energy"]
    print(f"time ratio t4a / tenpy = {med['t4a'] / med['tenpy']:.2f} (goal <= 0.5)")
    print(
        f"cpu time ratio t4a / tenpy = {cpu['t4a'] / cpu['tenpy']:.2f} (one BLAS thread: the work, whatever the load)"
    )
    print(f"|E_t4a - E_tenpy| / |E_tenpy| = {abs(et - ep) / abs(ep):.2e} (goal <= 1e-6)")


# ---- the accuracy checks ------------------------------------------------------------------------
def free_fermions(eps: np.ndarray, betas: np.ndarray, const: float = 0.0) -> tuple:
    b = np.asarray(betas, dtype=float)[:, None]
    f = 0.5 * (1.0 - np.tanh(0.5 * b * eps))
    log_z = np.sum(np.logaddexp(0.0, -b * eps), axis=1) - b[:, 0] * const
    return log_z, np.sum(eps * f, axis=1) + const, b[:, 0] ** 2 * np.sum(eps**2 * f * (1.0 - f), axis=1)


def report(name: str, betas: Any, got: dict, exact: dict, seconds: float, bond: int) -> None:
    print(f"{name}: {seconds:.1f} s, max bond {bond}")
    print(f"  {'beta':>6} " + " ".join(f"{q + ' rel. err':>14}" for q in got))
    for k, b in enumerate(betas):
        if b > 0:
            print(f"  {b:6.2f} " + " ".join(f"{abs(got[q][k] - exact[q][k]) / abs(exact[q][k]):14.2e}" for q in got))
    worst = {q: max(abs(got[q][k] - exact[q][k]) / abs(exact[q][k]) for k in range(len(betas)) if betas[k] > 0)
             for q in got}  # fmt: skip
    print("  largest: " + ", ".join(f"{q} {v:.2e}" for q, v in worst.items()) + " (goal <= 1e-6)")


def check_derivatives(
    name: str, H: Any, levels: np.ndarray, const: float, beta: float, dbeta: float, cutoff: float
) -> None:
    import tensor4all as t4a

    bonds: list[int] = []
    t0 = time.perf_counter()
    th = t4a.thermodynamics(H, beta, dbeta=dbeta, every=round(2.0 / dbeta), cutoff=cutoff, max_bond=4096,
                            callback=lambda r: bonds.append(r.max_bond))  # fmt: skip
    seconds = time.perf_counter() - t0
    log_z, energy, heat = free_fermions(levels, th.betas, const)
    got = {"lnZ": th.log_z, "E": th.energy, "C": th.specific_heat}
    report(name, th.betas, got, {"lnZ": log_z, "E": energy, "C": heat}, seconds, max(bonds))


def trotterized_xx(L: int, betas: np.ndarray, dbeta: float, order: int) -> tuple[np.ndarray, np.ndarray]:
    """E and C = -beta^2 dE/d beta of the XX chain's purification cooled by the brick splitting of
    ``order`` 2 (Strang) or 4 (Suzuki's five Strang steps) without truncation, exactly: the gates are
    Gaussian, their product that of the single-particle ``e^{-w dbeta t_part / 2}`` (``m``), so ``Z =
    det(1 + m^{2n})`` and ``<H> = Tr[(1 + m^{2n})^{-1} m^n t m^n]``; d/ds of the step scaled by ``s``
    (``beta d/d beta``) by a complex step."""
    hop = [np.zeros((L, L)), np.zeros((L, L))]
    for b in range(L - 1):
        hop[b % 2][b, b + 1] = hop[b % 2][b + 1, b] = 0.5
    p = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))
    weights = (1.0,) if order == 2 else (p, p, 1.0 - 4.0 * p, p, p)
    seq = [(part, w * x) for x in weights for part, w in ((0, 0.5), (1, 1.0), (0, 0.5))]
    energies, heats = [], []
    for beta in betas:
        n = round(beta / dbeta)

        def energy(s: complex) -> complex:
            m = np.eye(L, dtype=complex)
            for part, w in seq:
                m = scipy.linalg.expm(-0.5 * dbeta * s * w * hop[part]) @ m
            mn = np.linalg.matrix_power(m, n)
            return np.trace(np.linalg.solve(np.eye(L) + mn @ mn, mn @ (hop[0] + hop[1]) @ mn))

        e = energy(1.0 + 1e-30j)
        energies.append(e.real)
        heats.append(-beta * e.imag / 1e-30)
    return np.array(energies), np.array(heats)


def check_trotter() -> None:
    """The splitting's share of the XX chain's errors (L = 32, no truncation, exact)."""
    L, betas = 32, np.array([2.0, 4.0, 6.0, 8.0, 10.0])
    t = np.diag(np.full(L - 1, 0.5), 1)
    _, energy, heat = free_fermions(np.linalg.eigvalsh(t + t.T), betas)
    print(f"XX L={L}: the splitting's error alone (Trotterized purification, no truncation; free fermions)")
    print(f"  {'order':>5} {'dbeta':>6} " + " ".join(f"{'C rel. err b=' + format(b, 'g'):>15}" for b in betas))
    for order in (2, 4):
        for dbeta in (0.4, 0.2, 0.1):
            e, c = trotterized_xx(L, betas, dbeta, order)
            print(f"  {order:5d} {dbeta:6.2f} " + " ".join(f"{x:15.1e}" for x in (c - heat) / heat)
                  + f"   (E: {np.max(np.abs(e - energy) / np.abs(energy)):.1e})")  # fmt: skip


def check_hubbard(args: argparse.Namespace) -> None:
    import tensor4all as t4a
    from tensor4all import models

    ref = json.loads(DATA.read_text())["hubbard_L8"]
    t0 = time.perf_counter()
    res = t4a.thermal_state(models.hubbard(8, U=4.0, mu=2.0), 2.0, dbeta=0.1, every=5, cutoff=args.cutoff_check,
                            max_bond=1024)  # fmt: skip
    seconds = time.perf_counter() - t0
    idx = [ref["betas"].index(round(b, 10)) for b in res.betas]
    exact = {"lnZ": np.array(ref["log_z"])[idx], "E": np.array(ref["energy"])[idx]}
    bond = max(r.max_bond for r in res.history)
    report("Hubbard L=8, U=4, mu=2 (purification, N and Sz conserved)", res.betas,
           {"lnZ": res.log_z, "E": res.energy}, exact, seconds, bond)  # fmt: skip


def check_quench(args: argparse.Namespace) -> None:
    """A local quench of a thermal state, real time, with and without the ancillas' backwards
    evolution: the XX chain with a field h = 1 on its middle site, cooled to beta = 1, the field
    switched off; <Sz_i>(t) against free fermions, the largest error over sites and times."""
    import scipy.linalg

    import tensor4all as t4a
    from tensor4all import models
    from tensor4all.networks.mpo import MPO

    L, beta, t_final, dt = args.quench_L, 1.0, 4.0, 0.1
    os0 = models.xx(L).opsum
    os0 += (1.0, "Sz", L // 2)
    hop = np.diag(np.full(L - 1, 0.5), 1)
    hop = hop + hop.T
    h0 = hop.copy()
    h0[L // 2, L // 2] = 1.0
    w, v = np.linalg.eigh(h0)
    g0 = (v / (np.exp(beta * w) + 1.0)) @ v.T
    th = t4a.thermal_state(MPO.from_opsum(os0, L, "spin-1/2", conserve="Sz"), beta, dbeta=0.05, cutoff=1e-16,
                           max_bond=1024, every=20)  # fmt: skip
    print(
        f"local quench, XX L={L}, beta={beta}, to t={t_final} (dt={dt}, order 4, Sz conserved); <Sz_i>(t) vs free fermions"
    )
    print(f"  {'disentangle':>11} {'cutoff':>7} {'max bond':>9} {'seconds':>8} {'max |Sz err|':>13}")
    for dis, cut in ((None, 1e-10), (None, 1e-12), ("backwards", 1e-12), ("backwards", 1e-14)):
        bonds: list[int] = []
        t0 = time.perf_counter()
        r = t4a.evolve_thermal(th, models.xx(L, conserve="Sz"), t_final, dt, disentangle=dis, cutoff=cut, max_bond=4096,
                               every=5, observables={"Sz": "Sz"}, callback=lambda rec: bonds.append(rec.max_bond))  # fmt: skip
        sec = time.perf_counter() - t0
        err = 0.0
        for k, t in enumerate(r.times):
            u = scipy.linalg.expm(-1j * t * hop)
            exact = np.real(np.diag(u.conj() @ g0 @ u.T)) - 0.5
            err = max(err, float(np.max(np.abs(np.real(r.observables["Sz"][k]) - exact))))
        print(f"  {str(dis):>11} {cut:7.0e} {max(bonds):9d} {sec:8.1f} {err:13.1e}")


def checks(args: argparse.Namespace) -> None:
    from tensor4all import models

    for name in args.check.split(","):
        if name == "xx":
            t = np.diag(np.full(31, 0.5), 1)
            check_derivatives(
                f"XX L=32 (derivatives: tangent engine, Sz conserved, order 4, dbeta 0.25, cutoff {args.cutoff_xx:g})",
                models.xx(32, conserve="Sz"), np.linalg.eigvalsh(t + t.T), 0.0, 10.0, 0.25, args.cutoff_xx,
            )  # fmt: skip
        elif name == "tfim":
            m = np.diag(np.ones(24)) + np.diag(np.ones(23), 1)
            e = 2.0 * np.linalg.svd(m, compute_uv=False)
            check_derivatives(
                "TFIM g=1 L=24 (derivatives, dense)", models.tfim(24, g=1.0), e, -0.5 * e.sum(), 4.0,
                args.dbeta_check, args.cutoff_check,
            )  # fmt: skip
        elif name == "hubbard":
            check_hubbard(args)
        elif name == "trotter":
            check_trotter()
        elif name == "quench":
            check_quench(args)
        else:
            raise SystemExit(f"unknown check {name!r}; valid: xx, tfim, hubbard, trotter, quench")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--L", type=int, default=32, help="chain length (default 32)")
    p.add_argument("--beta", type=float, default=8.0, help="final inverse temperature (default 8)")
    p.add_argument("--chi", type=int, default=128, help="largest bond dimension (default 128)")
    p.add_argument("--dt", type=float, default=0.05, help="imaginary-time step of the purification (default 0.05)")
    p.add_argument("--cutoff", type=float, default=1e-10, help="discarded weight per SVD (default 1e-10)")
    p.add_argument("--t4a-order", type=int, default=2, choices=(2, 4), help="tensor4all's Trotter order (default 2)")
    p.add_argument(
        "--splitting", default="sweep", choices=("sweep", "brick"), help="tensor4all's splitting (default sweep)"
    )
    p.add_argument("--core", type=int, default=0, help="the core to pin to (default 0)")
    p.add_argument("--repeat", type=int, default=3, help="runs per code, alternately; medians (default 3)")
    p.add_argument("--quick", action="store_true", help="L = 8, beta = 1, chi = 32: a check that both run")
    p.add_argument("--check", default=None, metavar="NAMES", help="accuracy checks instead: xx,tfim,hubbard,trotter")
    p.add_argument("--dbeta-check", type=float, default=0.2, help="dbeta of the checks (default 0.2)")
    p.add_argument("--cutoff-check", type=float, default=1e-14, help="cutoff of the checks (default 1e-14)")
    p.add_argument("--cutoff-xx", type=float, default=1e-17, help="cutoff of the xx check (default 1e-17)")
    p.add_argument("--quench-L", type=int, default=16, help="chain length of the quench check (default 16)")
    args = p.parse_args()
    if args.check:
        checks(args)
        return
    if args.quick:
        args.L, args.beta, args.chi = 8, 1.0, 32
    timing(args)


if __name__ == "__main__":
    main()
