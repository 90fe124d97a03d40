"""The run of a checked ``tensor4all idmrg`` command line (:class:`IDMRGRun`): the infinite MPO of the
model (:func:`tensor4all.infinite.infinite_model`), one VUMPS or iDMRG run per bond dimension of the
schedule (each warm-started from the one before, a progress bar over the iterations), the table per
bond dimension with the exact energy per site where one is known
(:func:`tensor4all.references.infinite.infinite_reference`), the summary (central charge, extrapolated
correlation length), and the outputs: the JSON record (:data:`SCHEMA`), the final iMPS (``.npz``)
and the figure (:func:`write_idmrg_plot`)."""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from typing import Any

import numpy as np
from tqdm import tqdm

from tenferro.files import atomic_write

from .common import PROG, BarReport, _version, run_reported, write_json_record, write_outputs
from .. import infinite
from ..infinite.idmrg import conserved_charge
from ..references.infinite import infinite_reference
from ..tools.errors import Tensor4allError

__all__ = ["IDMRGRun", "SCHEMA", "COUPLINGS", "write_idmrg_plot", "save_imps"]

SCHEMA = "tensor4all.idmrg/1"
#: the options each model takes besides --J (``spin``: the spin of its sites)
COUPLINGS = {
    "heisenberg": ("Jz", "h", "spin"),
    "xxz": ("Jz", "h", "spin"),
    "xx": ("h", "spin"),
    "tfim": ("g",),
    "j1j2": ("J2", "h"),
}


def model_couplings(args: argparse.Namespace) -> dict[str, float]:
    """The keywords of :func:`~tensor4all.infinite.infinite_model` with their defaults filled in."""
    a = args
    if a.model == "tfim":
        return {"J": a.J, "g": 1.0 if a.g is None else a.g}
    if a.model == "j1j2":
        return {"J1": a.J, "J2": 0.5 if a.J2 is None else a.J2, "h": a.h or 0.0}
    p = {"J": a.J, "h": a.h or 0.0}
    if a.model != "xx":
        p["Jz"] = a.J if a.Jz is None else a.Jz
    return p


def save_imps(path: str, psi: infinite.iMPS) -> None:
    """The iMPS as NumPy arrays ``AL_i``, ``AR_i``, ``C_i`` (``i`` over the cell) and ``local``, atomically."""
    arrays = {f"{k}_{i}": t for k in ("AL", "AR", "C") for i, t in enumerate(getattr(psi, k))}
    with atomic_write(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, local=np.array(psi.local or ""), **arrays)


def _run_idmrg(
    H: infinite.InfiniteMPO, psi0: Any, bond: int, args: argparse.Namespace, conserve: str, callback: Any
) -> Any:
    """One iDMRG run at bond dimension ``bond`` (:func:`tensor4all.infinite.idmrg`) from ``psi0``; a run
    that conserves a charge starts from a product state of its sector (it takes no dense start)."""
    return infinite.idmrg(
        H,
        psi0 if conserve == "none" else None,
        max_bond=bond,
        cutoff=args.cutoff,
        conserve=conserve,
        tol=args.tol,
        sweeps=args.max_iter,
        callback=callback,
        threads=args.threads,
    )


class IDMRGRun(BarReport):
    def __init__(self, parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]):
        super().__init__(args)
        self.parser, self.args, self.argv = parser, args, argv
        self.p = model_couplings(args)
        self.spin = args.spin or "1/2"
        self.ref = infinite_reference(args.model, self.spin if "spin" in COUPLINGS[args.model] else "1/2", **self.p)
        self.rows: list[dict[str, Any]] = []
        self.histories: list[list[dict[str, Any]]] = []
        self.states: list[infinite.iMPS] = []
        self.conserved: str | None = None  # what the iDMRG runs conserved
        self.auto_first = False  # --conserve auto: the first run decides (idmrg's and vumps's "auto")

    def title(self) -> str:
        spin = f" spin={self.spin}" if "spin" in COUPLINGS[self.args.model] else ""
        return f"{self.args.model} " + " ".join(f"{k}={v:g}" for k, v in self.p.items()) + spin

    def on_record(self, rec: Any) -> None:
        """A VUMPS iteration or an iDMRG sweep: into the history, and the progress bar."""
        self.histories[-1].append(_record_dict(rec))
        if self.bar is not None:
            if isinstance(rec, infinite.VUMPSRecord):
                self.bar.set_postfix_str(f"bond={rec.max_bond} err={rec.error:.1e}", refresh=False)
            else:
                self.bar.set_postfix_str(f"bond={rec.max_bond} dE={rec.delta:.1e}", refresh=False)
            self.bar.update(1)

    # ---- the computation ---------------------------------------------------------------------------
    def one(self, H: infinite.InfiniteMPO, bond: int, psi0: Any) -> Any:
        a = self.args
        self.histories.append([])
        if self.show_bar:
            self.bar = tqdm(desc=f"{a.method} D={bond}", unit="it", leave=False, file=sys.stderr, mininterval=0.1)
        conserve = "auto" if self.auto_first else a.conserve
        if a.method == "idmrg":
            return run_reported(
                lambda: _run_idmrg(H, psi0, bond, a, conserve, self.on_record), self.parser.error, self.close_bar
            )
        return run_reported(
            lambda: infinite.vumps(
                H,
                psi0 if conserve == "none" else None,  # a conserved run starts from its sector's product state
                max_bond=bond,
                conserve=conserve,
                tol=a.tol,
                max_iter=a.max_iter,
                cutoff=a.cutoff,
                seed=a.seed,
                callback=self.on_record,
                threads=a.threads,
            ),
            self.parser.error,
            self.close_bar,
        )

    def row(self, bond: int, res: Any, seconds: float) -> dict[str, Any]:
        psi = res.state
        energy = float(res.energy)
        try:
            xi: float | None = infinite.correlation_length(psi)
        except Tensor4allError:  # not injective (a cat state of a longer period): no decay
            xi = None
        converged = res.converged
        self.conserved = res.conserved
        return {
            "max_bond": bond,
            "bond_dims": [int(b) for b in psi.bond_dims],
            "energy": energy,
            "error": None if self.ref is None else abs(energy - self.ref.energy),
            "entropy": [psi.entanglement_entropy(i) for i in range(psi.cell)],
            "correlation_length": xi,
            "iterations": len(self.histories[-1]) or None,
            "converged": bool(converged),
            "seconds": seconds,
        }

    # ---- the command -------------------------------------------------------------------------------
    def run(self) -> int:
        a = self.args
        t0 = time.perf_counter()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        try:
            H = infinite.infinite_model(a.model, cell=a.cell, spin=self.spin, **self.p)
        except Tensor4allError as e:
            self.parser.error(str(e))
        if a.conserve == "auto":  # what idmrg's auto starts with; its first run decides (each run starts from the last)
            a.conserve, self.auto_first = conserved_charge(H) or "none", True
        field = a.conserve != "none" and bool(self.p.get("h"))
        if field:  # the Neel start's sector, Sz = 0: a field may put the ground state elsewhere
            self.ref = None  # (the reference is the lowest over all sectors: no error of this one)
        self.header(H)
        if field:
            self.print(
                f"       sector Sz = 0 (the Neel start's); in the field h = {self.p['h']:g} the ground state may lie "
                "in another sector: --conserve none finds it"
            )
        psi = None
        for bond in a.max_bond:
            t1 = time.perf_counter()
            res = self.one(H, bond, psi)
            self.close_bar()
            if self.auto_first:  # a ground state that breaks the symmetry: the first run went dense
                a.conserve, self.auto_first = res.conserved or "none", False
            psi = res.state
            self.states.append(psi)
            self.rows.append(self.row(bond, res, time.perf_counter() - t1))
            self.print_row(self.rows[-1])
        extra = self.summary()
        return write_outputs(
            a,
            (
                ("save", lambda path: save_imps(path, psi)),
                ("json", lambda path: self.write_json(path, extra, started, t0)),
                ("plot", lambda path: write_idmrg_plot(path, self.rows, self.ref, self.title())),
            ),
            self.print,
            PROG,
        )

    def header(self, H: infinite.InfiniteMPO) -> None:
        a = self.args
        how = (
            f"VUMPS (conserve {a.conserve}, subspace expansion)"
            if a.method == "vumps"
            else f"two-site iDMRG (conserve {a.conserve})"
        )
        self.print(f"IDMRG  {self.title()}  (infinite chain, cell {a.cell}, MPO bond dimensions {H.bond_dims})")
        self.print(
            f"       {how}, max bond {','.join(map(str, a.max_bond))}, tol {a.tol:g}, cutoff {a.cutoff:g}, seed {a.seed}"
        )
        if self.ref is not None:
            kind = "exact" if self.ref.exact else "reference"
            self.print(f"       {kind} energy per site {self.ref.energy:.14f} ({self.ref.source})")
        if not a.quiet:
            self.print(
                f"{'bond':>5}  {'energy per site':>18}  {'error':>9}  {'entropy':>9}  {'corr. length':>12}  "
                f"{'iter':>5}  {'conv':>4}  {'seconds':>8}"
            )

    def print_row(self, r: dict[str, Any]) -> None:
        if self.args.quiet:
            return
        err = "-" if r["error"] is None else f"{r['error']:.2e}"
        xi = "-" if r["correlation_length"] is None else f"{r['correlation_length']:.6g}"
        it = "-" if r["iterations"] is None else str(r["iterations"])
        conv = {None: "-", True: "yes", False: "no"}[r["converged"]]
        self.print(
            f"{r['max_bond']:>5}  {r['energy']:>18.12f}  {err:>9}  {r['entropy'][0]:>9.6f}  {xi:>12}  {it:>5}  "
            f"{conv:>4}  {r['seconds']:>8.2f}"
        )

    def summary(self) -> dict[str, Any]:
        """The final lines: convergence, the central charge and the extrapolated correlation length (with
        several bond dimensions); returns them for the JSON record."""
        last = self.rows[-1]
        extra: dict[str, Any] = {"central_charge": None, "extrapolated_correlation_length": None}
        self.print(
            f"energy      {last['energy']:.14f} per site"
            + ("" if last["error"] is None else f"   (error {last['error']:.2e})")
        )
        self.print(
            f"converged   {'yes' if last['converged'] else 'no'} at bond dimension {last['max_bond']}"
            + f"; charge conserved: {self.conserved or 'none'}"
        )
        xs = [(r["correlation_length"], r["entropy"][0]) for r in self.rows if r["correlation_length"]]
        entropies = [r["entropy"][0] for r in self.rows]
        if len(self.rows) >= 2 and max(entropies) - min(entropies) < 1e-6:
            self.print("scaling     the entanglement does not grow with the bond dimension: a gapped state")
        elif len(xs) >= 2 and len({round(math.log(x), 6) for x, _ in xs}) >= 2:
            slope = float(np.polyfit([math.log(x) for x, _ in xs], [s for _, s in xs], 1)[0])
            extra["central_charge"] = 6.0 * slope
            self.print(
                f"scaling     c = {6 * slope:.4f} from S = (c/6) ln xi over the bond dimensions (meaningful at a "
                "critical point)"
            )
        if len(self.states) >= 2:
            try:
                xi, _ = infinite.extrapolate_correlation_length(self.states)
                if 0 < xi < 1e6:
                    extra["extrapolated_correlation_length"] = xi
                    self.print(f"corr. len.  {xi:.6g} extrapolated in the transfer-matrix gap (Rams et al. 2018)")
                else:  # the inverse correlation length extrapolates to <= 0
                    extra["extrapolated_correlation_length"] = math.inf
                    self.print("corr. len.  diverges when extrapolated in the transfer-matrix gap: critical")
            except Tensor4allError as e:
                self.print(f"corr. len.  no extrapolation: {e}")
        self.print(f"time        {sum(r['seconds'] for r in self.rows):.2f} s")
        return extra

    # ---- outputs -----------------------------------------------------------------------------------
    def write_json(self, path: str, extra: dict[str, Any], started: str, t0: float) -> None:
        a = self.args
        psi = self.states[-1]
        try:
            spectrum = [[float(x.real), float(x.imag)] for x in infinite.transfer_spectrum(psi, 6)]
        except Tensor4allError:
            spectrum = None
        doc = {
            "schema": SCHEMA,
            "program": {"name": f"{PROG} idmrg", "version": _version(), "argv": self.argv, "started": started},
            "parameters": {
                "model": a.model,
                **self.p,
                "spin": self.spin if "spin" in COUPLINGS[a.model] else None,
                "cell": a.cell,
                "method": a.method,
                "max_bond": list(a.max_bond),
                "tol": a.tol,
                "max_iter": a.max_iter,
                "cutoff": a.cutoff,
                "conserve": a.conserve,
                "conserved": self.conserved,
                "seed": a.seed,
                "threads": a.threads,
            },
            "reference": None if self.ref is None else self.ref.as_dict(),
            "rows": self.rows,
            "energy_per_site": self.rows[-1]["energy"],
            **extra,
            "entanglement_spectrum": [psi.entanglement_spectrum(i).tolist() for i in range(psi.cell)],
            "transfer_spectrum": spectrum,
            "history": self.histories,
            "timing": {"total_seconds": time.perf_counter() - t0},
        }
        write_json_record(path, doc)


def _record_dict(rec: Any) -> dict[str, Any]:
    return {k: getattr(rec, k) for k in rec.__dataclass_fields__}


def write_idmrg_plot(path: str, rows: list[dict[str, Any]], ref: Any, title: str) -> None:
    """The entanglement entropy and the correlation length against the bond dimension (log scale), and
    the energy error where the exact energy is known."""
    import matplotlib  # (optional dependency)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bonds = np.array([r["max_bond"] for r in rows])
    panels = 3 if ref is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.4 * panels, 3.6), constrained_layout=True)
    ax = axes[0]
    ax.plot(bonds, [r["entropy"][0] for r in rows], "o-")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bond dimension")
    ax.set_ylabel("entanglement entropy S (bond 0)")
    ax = axes[1]
    xi = np.array([np.nan if r["correlation_length"] is None else r["correlation_length"] for r in rows])
    ax.plot(bonds, xi, "s-", color="C1")
    ax.set_xscale("log", base=2)
    if np.all(np.isfinite(xi)) and np.all(xi > 0):
        ax.set_yscale("log")
    ax.set_xlabel("bond dimension")
    ax.set_ylabel("correlation length (sites)")
    if ref is not None:
        ax = axes[2]
        err = np.array([r["error"] for r in rows], dtype=float)
        shown = err > 0
        if shown.any():
            ax.loglog(bonds[shown], err[shown], "^-", color="C2", label="|e - e_exact|" if ref.exact else "|e - e_ref|")
            ax.legend(fontsize="small")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bond dimension")
        ax.set_ylabel("energy error per site")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"idmrg  {title}", fontsize="small")
    fig.savefig(path, dpi=100)
    plt.close(fig)
