"""The run of a checked ``tensor4all thermal`` command line (:class:`ThermalRun`): the purification
cooled from beta = 0 (:func:`~tensor4all.thermal_state`, with a progress bar over the steps), the
derivative runs for ``C`` and ``chi_z`` (:func:`~tensor4all.thermodynamics`), the exact reference
(:func:`~tensor4all.references.thermal_reference`), the table per output beta, the summary, and the
outputs: the JSON record (:data:`SCHEMA`), the final purification and the figure of the curves."""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from typing import Any

import numpy as np
from tqdm import tqdm

from .common import PROG, BarReport, _version, run_reported, write_json_record, write_outputs
from .models import ROTATED, charge_of, couplings, hamiltonian, local_of
from ..references.thermal import thermal_reference
from ..thermal.purification import thermal_state
from ..thermal.results import ThermalResult, Thermodynamics
from ..thermal.thermodynamics import thermodynamics

__all__ = ["ThermalRun", "SCHEMA", "QUANTITIES", "write_thermal_plot"]

SCHEMA = "tensor4all.thermal/1"
#: the thermodynamic quantities ``--observe`` takes (besides the models' local operators): name ->
#: (the table's column, what it is)
QUANTITIES = {
    "E": ("E/L", "energy <H>"),
    "C": ("C/L", "specific heat -beta^2 dE/d beta"),
    "chi_z": ("chi_z/L", "susceptibility d<M>/dh"),
    "S": ("S/L", "entropy ln Z + beta E"),
    "F": ("F/L", "free energy -ln Z / beta"),
}
#: the exact reference's name of each quantity it knows
_EXACT = {"lnZ": "log_z", "E": "energy", "C": "specific_heat", "chi_z": "susceptibility"}


class ThermalRun(BarReport):
    def __init__(self, parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]):
        super().__init__(args)
        self.parser, self.args, self.argv = parser, args, argv
        self.rows: list[dict[str, Any]] = []
        self.p = couplings(args, False)
        self.derivatives = [q for q in args.observe if q in ("C", "chi_z")]
        self.ops = [q for q in args.observe if q not in QUANTITIES]
        self.sector = self._sector()
        self.conserve = self._conserve()
        self.field = None if "chi_z" not in args.observe else ("Z" if args.model == "tfim" else "Sz")

    def _sector(self) -> Any:
        a = self.args
        if a.N is not None:
            return {"N": a.N} if a.sz is None else {"N": a.N, "Sz": a.sz}
        return None if a.sz is None else a.sz

    def _conserve(self) -> str | None:
        a = self.args
        if a.conserve == "none":
            return None
        if a.conserve != "auto":
            return a.conserve
        if a.model == "hubbard" and isinstance(self.sector, dict) and "Sz" not in self.sector:
            return "N"
        return charge_of(a.model)

    def on_step(self, rec: Any) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"beta={2 * rec.time:.4g} chi={rec.max_bond}", refresh=False)
            self.bar.update(1)

    # ---- the computation ---------------------------------------------------------------------------
    def cool(self) -> ThermalResult:
        a = self.args
        H = hamiltonian(a.model, a.L, self.p, self.conserve)
        rotated = self.conserve == "parity"  # the tfim runs as -J sum XX - g sum Z: operators through ROTATED
        self.signs = {op: (ROTATED[op][1] if rotated else 1.0) for op in self.ops}
        specs = {op: ROTATED[op][0] if rotated else op for op in self.ops}
        return thermal_state(
            H,
            a.beta_max,
            dbeta=a.dbeta,
            method=a.method,
            order=4 if a.order is None else a.order,
            max_bond=a.max_bond,
            cutoff=a.cutoff,
            conserve=self.conserve or "none",
            sector=self.sector,
            observables=specs or None,
            every=a.every,
            threads=a.threads,
            callback=self.on_step,
        )

    def derivative_conserve(self) -> str | None:
        """The charge of the derivative runs: dense for C alone (a traced run on symmetric sites is
        slower); with chi_z the charge the field commutes with (in a dense run the field splits
        degenerate singular values of different sectors, whose mixed vectors then have no derivative);
        the tfim's field Z conserves nothing."""
        if self.field is None or self.args.model == "tfim" or self.args.conserve == "none":
            return None
        return self.conserve

    def differentiate(self) -> Thermodynamics:
        """The derivative runs (:meth:`derivative_conserve`)."""
        a = self.args
        H = hamiltonian(a.model, a.L, self.p, None)
        return thermodynamics(
            H,
            a.beta_max,
            conserve=self.derivative_conserve() or "none",
            dbeta=a.dbeta,
            order=4 if a.order is None else a.order,
            max_bond=a.max_bond,
            cutoff=a.cutoff,
            sector=self.sector,
            field=self.field,
            every=a.every,
            threads=a.threads,
            callback=self.on_step,
        )

    # ---- the command -------------------------------------------------------------------------------
    def run(self) -> int:
        a = self.args
        t0 = time.perf_counter()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        runs = 1 + (1 if self.derivatives else 0) + (1 if self.field else 0)
        self.header()
        if self.show_bar:
            self.bar = tqdm(
                total=runs * a.steps, desc="thermal", unit="step", leave=False, file=sys.stderr, mininterval=0.1
            )
        res = run_reported(self.cool, self.parser.error, lambda: None)
        t_cool = time.perf_counter() - t0
        th = None
        if self.derivatives:
            t1 = time.perf_counter()
            th = run_reported(self.differentiate, self.parser.error, self.close_bar)
            t_deriv = time.perf_counter() - t1
        else:
            t_deriv = 0.0
        self.close_bar()
        ref = None if self.sector is not None else thermal_reference(a.model, a.L, res.betas, self.p)
        self.table(res, th, ref)
        self.summary(res, th, ref, t_cool, t_deriv)
        return write_outputs(
            a,
            (
                ("save", lambda path: res.state.save(path)),
                ("json", lambda path: self.write_json(path, res, th, ref, started, t0, t_cool, t_deriv)),
                ("plot", lambda path: write_thermal_plot(path, self.rows, a, self.title())),
            ),
            self.print,
            PROG,
        )

    def title(self) -> str:
        return f"{self.args.model} L={self.args.L} " + " ".join(f"{k}={v:g}" for k, v in self.p.items())

    def header(self) -> None:
        a = self.args
        how = "two-site TDVP" if a.method == "tdvp" else f"TEBD order {4 if a.order is None else a.order}"
        ensemble = "grand canonical" if self.sector is None else f"canonical, sector {_sector_text(self.sector)}"
        self.print(f"THERMAL  {self.title()}  (purification: {a.L} sites of {local_of(a.model)} + ancilla)")
        self.print(
            f"         {how}, beta 0 -> {a.beta_max:g} in dbeta {a.dbeta:g} ({a.steps} steps, a row every {a.every}), "
            f"max bond {a.max_bond}, cutoff {a.cutoff:g}, conserve {self.conserve or 'none'}, {ensemble}"
        )
        if self.derivatives:
            self.print(
                f"         {' and '.join(self.derivatives)} by tidu derivatives through the cooling ("
                + ", ".join(
                    {"C": "C = -beta^2 d<H>/d beta", "chi_z": f"chi_z = d<M>/dh, M = sum {self.field}"}[q]
                    for q in self.derivatives
                )
                + f": forward mode, conserve {self.derivative_conserve() or 'none'})"
            )

    def table(self, res: ThermalResult, th: Thermodynamics | None, ref: tuple | None) -> None:
        """The rows (per site; local operators: site averages), with the exact values and the relative
        errors (``exact_<q>``, ``error_<q>``, ``error`` their largest) where a reference is known."""
        a, L = self.args, self.args.L
        values = self.values(res, th)
        exact = None if ref is None else {q: ref[0].get(k) for q, k in _EXACT.items() if ref[0].get(k) is not None}
        cols = ["lnZ"] + list(a.observe)
        if not a.quiet:
            head = f"{'beta':>8}  {'T':>9}  {'lnZ/L':>11}"
            for q in a.observe:
                head += f"  {QUANTITIES[q][0] if q in QUANTITIES else '<' + q + '>':>11}"
            self.print(head + f"  {'bond':>5}" + (f"  {'error':>8}" if exact is not None else ""))
        for k, beta in enumerate(res.betas):
            row: dict[str, Any] = {
                "beta": float(beta),
                "bond": int(res.history[round(beta / a.dbeta) - 1].max_bond) if beta > 0 else 1,
            }
            for q in cols:
                v = values[q][k]
                row[q] = None if v is None or not np.isfinite(v) else float(v) / (1.0 if q in self.ops else L)
            if exact is not None:
                errs = []
                for q in cols:
                    if q in exact:
                        x = float(exact[q][k])
                        row["exact_" + q] = x / L
                        row["error_" + q] = abs(float(values[q][k]) - x) / abs(x) if beta > 0 and x != 0 else 0.0
                        errs.append(row["error_" + q])
                row["error"] = max(errs, default=0.0)
            self.rows.append(row)
            if not a.quiet:
                line = f"{beta:>8.4g}  {_num(1.0 / beta if beta > 0 else math.inf, 9)}  {_num(row['lnZ'], 11)}"
                for q in a.observe:
                    line += f"  {_num(row[q], 11)}"
                self.print(line + f"  {row['bond']:>5}" + (f"  {row['error']:>8.1e}" if exact is not None else ""))

    def values(self, res: ThermalResult, th: Thermodynamics | None) -> dict[str, np.ndarray]:
        """Each shown quantity over the output betas, whole systems (local operators: site averages)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            v: dict[str, Any] = {"lnZ": res.log_z, "E": res.energy, "S": res.entropy, "F": res.free_energy}
        if th is not None:
            v["C"] = th.specific_heat
            v["chi_z"] = th.susceptibility
        for op in self.ops:
            v[op] = self.signs[op] * np.mean(np.real(np.asarray(res.observables[op])), axis=-1)
        return v

    def summary(self, res: ThermalResult, th: Thermodynamics | None, ref: tuple | None, tc: float, td: float) -> None:
        h = res.history
        self.print(
            f"cooling     max bond {max(r.max_bond for r in h)}, max truncation error "
            f"{max(r.max_truncation_error for r in h):.2e}, ln Z({res.betas[-1]:g}) = {res.log_z[-1]:.12g}"
        )
        if th is not None:
            dz, de, scale = derivative_run_agreement(res, th)
            self.print(
                f"derivatives the {th.engine} run's ln Z and <H> within {dz:.1e} and {de:.1e} of the cooling's "
                f"(relative; <H> to its largest |<H>| over the run, {scale:.4g})"
            )
        if ref is not None:
            names = [q for q in ["lnZ"] + list(self.args.observe) if "error_" + q in self.rows[0]]
            errs = ", ".join(f"{q} {max(r['error_' + q] for r in self.rows):.1e}" for q in names)
            self.print(f"exact       {ref[1]}: largest relative error {errs}")
        self.print(f"time        {tc:.2f} s cooling" + (f", {td:.2f} s derivatives" if th is not None else ""))

    # ---- outputs -----------------------------------------------------------------------------------
    def write_json(self, path: str, res: ThermalResult, th: Thermodynamics | None, ref: tuple | None, started: str,
                   t0: float, tc: float, td: float) -> None:  # fmt: skip
        a = self.args
        doc = {
            "schema": SCHEMA,
            "program": {"name": f"{PROG} thermal", "version": _version(), "argv": self.argv, "started": started},
            "parameters": {
                "model": a.model,
                "L": a.L,
                **self.p,
                "beta_max": a.beta_max,
                "dbeta": a.dbeta,
                "steps": a.steps,
                "every": a.every,
                "method": a.method,
                "order": (4 if a.order is None else a.order) if a.method == "tebd" else None,
                "max_bond": a.max_bond,
                "cutoff": a.cutoff,
                "conserve": self.conserve,
                "sector": self.sector,
                "observe": list(a.observe),
                "field": self.field,
                "threads": a.threads,
            },
            "betas": res.betas.tolist(),
            "log_z": res.log_z.tolist(),
            "energy": res.energy.tolist(),
            "entropy": res.entropy.tolist(),
            "free_energy": res.free_energy.tolist(),
            "specific_heat": None if th is None else th.specific_heat.tolist(),
            "susceptibility": None if th is None or th.susceptibility is None else th.susceptibility.tolist(),
            "magnetization": None if th is None or th.magnetization is None else th.magnetization.tolist(),
            "derivative_run": None if th is None else {"log_z": th.log_z.tolist(), "energy": th.energy.tolist()},
            "observables": {
                op: (self.signs[op] * np.real(np.asarray(res.observables[op]))).tolist() for op in self.ops
            },
            "rows": self.rows,
            "exact": None
            if ref is None
            else {"method": ref[1], **{k: None if v is None else np.asarray(v).tolist() for k, v in ref[0].items()}},
            "history": [r.as_dict() for r in res.history],
            "timing": {"cooling_seconds": tc, "derivative_seconds": td, "total_seconds": time.perf_counter() - t0},
        }
        write_json_record(path, doc)


def derivative_run_agreement(res: ThermalResult, th: Thermodynamics) -> tuple[float, float, float]:
    """How far the derivative run's ``ln Z`` and ``<H>`` lie from the cooling's: ``ln Z`` relative to
    itself (``|ln Z| >= ln 2`` per site, never 0) and ``<H>`` relative to the largest ``|<H>|`` of the
    cooling over the run (returned third), not to each value: at ``beta = 0`` ``<H> = Tr H / N`` is
    often 0 up to rounding, and the ratio of two rounding errors says nothing."""
    dz = float(np.max(np.abs(th.log_z - res.log_z) / np.abs(res.log_z)))
    energy = np.asarray(res.energy, dtype=float)
    scale = float(np.max(np.abs(energy)))
    de = float(np.max(np.abs(th.energy - energy))) / scale if scale > 0 else float(np.max(np.abs(th.energy - energy)))
    return dz, de, scale


def _num(x: Any, width: int) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return f"{'-':>{width}}"
    if math.isinf(x):
        return f"{'inf':>{width}}"
    if abs(x) < 1e-12:  # rounding of a value that is 0 by symmetry (<Sz> of a grand canonical chain)
        x = 0.0
    return f"{x:>{width}.6g}" if abs(x) >= 1e4 or (x != 0 and abs(x) < 1e-3) else f"{x:>{width}.6f}"


def _sector_text(sector: Any) -> str:
    if isinstance(sector, dict):
        return ", ".join(f"{k} = {v:g}" for k, v in sector.items())
    return f"Sz = {sector:g}"


def write_thermal_plot(path: str, rows: list[dict[str, Any]], args: argparse.Namespace, title: str) -> None:
    """One panel per quantity of ``--observe`` (per site) against the temperature (log scale), the
    exact curve dashed where it is known."""
    import matplotlib  # (optional dependency)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = list(args.observe) or ["lnZ"]
    n = len(shown)
    cols = min(n, 3)
    fig, axes = plt.subplots((n + cols - 1) // cols, cols, figsize=(4.4 * cols, 3.4 * ((n + cols - 1) // cols)),
                             constrained_layout=True, squeeze=False)  # fmt: skip
    live = [r for r in rows if r["beta"] > 0]
    T = np.array([1.0 / r["beta"] for r in live])
    for ax, q in zip(axes.flat, shown):
        y = np.array([np.nan if r[q] is None else r[q] for r in live])
        ax.plot(T, y, "o-", ms=3, label="purification" + (" (derivatives)" if q in ("C", "chi_z") else ""))
        if live and "exact_" + q in live[0]:
            ax.plot(T, [r["exact_" + q] for r in live], "k--", lw=1, label="exact")
        ax.legend(fontsize="small")
        ax.set_xscale("log")
        ax.set_xlabel("temperature T")
        ax.set_ylabel(QUANTITIES[q][0] if q in QUANTITIES else f"<{q}> (site average)")
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"thermal  {title}", fontsize="small")
    fig.savefig(path, dpi=100)
    plt.close(fig)
