"""The run of a checked ``tensor4all dmrg`` command line (:class:`DMRGRun`): the Hamiltonian and
initial state, the progress bar and the table per sweep, the reference energy and the
measurements, the final report, and the outputs (the saved MPS, the JSON record, the figure of
:mod:`tensor4all.cli.dmrg_plot`)."""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from typing import Any, Sequence

import numpy as np

import tenferro as tf

from . import lattice as _cli_lattice
from . import measurements as _cli_measurements
from .. import references
from .checks import conserve_of, ground_sector, sector_of
from .common import PROG, _version, run_reported, write_json_record, write_outputs
from .dmrg_plot import write_plot
from ..algorithms.dmrg import dmrg
from ..algorithms.excited import ExcitedStates, excited_result
from ..tools.errors import Tensor4allError
from ..networks.mps import MPS
from ..tools.progress import SweepBar
from ..tools.threads import threads_for

__all__ = ["DMRGRun", "SCHEMA"]

SCHEMA = "tensor4all.dmrg/1"


# ---- the dmrg command ------------------------------------------------------------------
class DMRGRun:
    def __init__(self, parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]):
        self.parser = parser
        self.args = args
        self.blas_threads = threads_for(args.threads, max(args.chi))
        self.argv = argv
        # with --json -, standard output carries only the JSON document; the report goes to stderr
        self.out = sys.stderr if args.json == "-" else sys.stdout
        self.show_table = not args.quiet
        isatty = getattr(sys.stderr, "isatty", None)
        self.show_bar = not args.quiet and bool(isatty and isatty())
        self.bar = None
        self.legacy = _cli_lattice.is_legacy(args)  # a spin chain of the first version: output unchanged
        self.fermions = args.model in _cli_lattice.FERMION_MODELS
        self.L = _cli_lattice.n_sites(args)
        self.charges: dict[str, Any] = {}  # the conserved charges of the final state (non-legacy runs)

    # model parameters with their defaults filled in
    def parameters(self) -> dict[str, Any]:
        a = self.args
        p: dict[str, Any] = {"model": a.model, "L": self.L, **_cli_lattice.couplings(a)}
        if not self.legacy:
            p["lattice"] = _cli_lattice.lattice_record(a)
        p.update(
            chi=list(a.chi),
            sweeps=a.sweeps,
            cutoff=list(a.cutoff),
            tol=a.tol,
            two_site=a.two_site,
            noise=(None if a.two_site else (1e-4 if a.noise is None else a.noise)),
            seed=a.seed,
            dtype=a.dtype,
            threads=a.threads,
            blas_threads=self.blas_threads,
            conserve=conserve_of(a),
            sector=sector_of(a),
        )
        if a.device != "cpu":
            p["device"] = a.device
        return p

    def model_text(self, p: dict[str, Any]) -> str:
        if not self.legacy:
            return _cli_lattice.model_text(self.args, p)
        if p["model"] == "tfim":
            return f"tfim L={p['L']} J={p['J']:g} g={p['g']:g}"
        return f"{p['model']} L={p['L']} J={p['J']:g} Jz={p['Jz']:g} h={p['h']:g} spin={p['spin']}"

    def print(self, *parts: Any) -> None:
        print(*parts, file=self.out, flush=True)

    # progress bar across the bonds of each sweep (the one of dmrg(progress=True))
    def on_bond(self, u: Any) -> None:
        if not self.show_bar:
            return
        if self.bar is None:
            self.bar = SweepBar()
        self.bar(u)

    def close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def on_sweep(self, r: Any) -> None:
        self.close_bar()
        if self.show_table:
            de = "-" if math.isnan(r.delta_energy) else f"{r.delta_energy:+.3e}"
            self.print(
                f"{r.sweep:>5}  {r.energy:>20.12f}  {de:>10}  {r.max_bond:>8}  "
                f"{r.max_truncation_error:>13.2e}  {r.seconds:>8.2f}"
                + (f"  {r.blocks:>6}" if r.blocks is not None else "")
            )

    def run(self) -> int:
        t0 = time.perf_counter()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        p = self.parameters()
        a = self.args
        try:
            H = _cli_lattice.hamiltonian(a, p["conserve"])
            psi0 = None
            if a.dtype == "complex128":
                start = min(a.chi[0], 8) if a.two_site else a.chi[0]
                psi0 = MPS.random(self.L, H.phys_dims[0], bond_dim=start, seed=a.seed, dtype=np.complex128)
        except Tensor4allError as e:
            self.parser.error(str(e))
        t_setup = time.perf_counter() - t0
        sites = "two-site" if a.two_site else "one-site"
        self.print(f"DMRG  {self.model_text(p)}  (MPO bond dimension {max(H.bond_dims, default=1)})")
        self.print(
            f"      {sites}, chi {_sched(a.chi)}, cutoff {_sched(a.cutoff, '{:g}')}, at most "
            f"{a.sweeps} sweeps, tol {a.tol:g}, {a.dtype}, seed {a.seed}, "
            + ("on GPU 0" if a.device == "gpu" else f"BLAS threads {self.blas_threads or 'default'}")
        )
        auto_dense = a.conserve == "auto" and a.two_site and a.dtype == "float64" and p["conserve"] is None
        self.print(f"      symmetry {_symmetry_text(p, auto_dense, self.fermions)}")
        if self.show_table:
            self.print(
                f"{'sweep':>5}  {'energy':>20}  {'dE':>10}  {'max bond':>8}  {'max trunc err':>13}  "
                f"{'seconds':>8}" + (f"  {'blocks':>6}" if p["conserve"] else "")
            )
        t1 = time.perf_counter()
        res = self.run_dmrg(H, psi0, p)
        self.excited = self.run_excited(H, psi0, p, res) if a.states > 1 else None
        t_dmrg = time.perf_counter() - t1
        t2 = time.perf_counter()
        energy = float(res.energy)
        entropy = [float(s) for s in res.state.entanglement_entropy()]
        bonds = [int(b) for b in res.state.bond_dims]
        ref = None
        if self.legacy:
            known = ground_sector(a)
            self.other_sector = not (
                p["conserve"] is None or (known is not None and known == (p["conserve"], p["sector"]))
            )
            if not self.other_sector:
                # a reference is the ground energy: only a run in the ground state's sector compares with it
                ref = references.reference_energy(
                    a.model, a.L, J=a.J, Jz=p.get("Jz"), g=p.get("g", 1.0), h=p.get("h", 0.0), spin=p.get("spin", "1/2")
                )
        else:  # the exact lowest energy of the run's own sector (of the final state's charges)
            self.charges = _run_charges(p["conserve"], res.sector)
            ref = _cli_lattice.reference(a, self.charges)
        found = None
        t3 = time.perf_counter()
        if self.fermions and a.measure is not False:
            found = _cli_measurements.measure(
                res.state, a.model, _cli_lattice.LOCAL[a.model], _cli_lattice.nearest_bonds(a), list(self.charges)
            )
        self.t_measure = time.perf_counter() - t3
        t_analysis = time.perf_counter() - t2
        self.summary(res, energy, ref, bonds, entropy, t_dmrg, found)
        if p["conserve"] == "parity" and a.save is not None:
            self.print(f"basis       the saved state is in the {ROTATED_BASIS}")
        return write_outputs(
            a,
            (
                ("save", lambda path: res.state.save(path)),
                (
                    "json",
                    lambda path: self.write_json(
                        path, p, res, energy, ref, bonds, entropy, started, t0, t_setup, t_dmrg, t_analysis, found
                    ),
                ),
                ("plot", lambda path: write_plot(path, res, ref, bonds, entropy, self.model_text(p))),
            ),
            self.print,
            PROG,
        )

    def run_dmrg(self, H: Any, psi0: Any, p: dict[str, Any], k: int = 0, earlier: Sequence[Any] = ()) -> Any:
        """State ``k`` of the run: the ground state (``k = 0``), or with ``--states`` a DMRG orthogonal to
        the ``earlier`` states (seed ``--seed + k``); errors end the command with their message."""
        a = self.args
        return run_reported(
            lambda: dmrg(
                H,
                psi0,
                max_bond=list(a.chi),
                sweeps=a.sweeps,
                cutoff=list(a.cutoff),
                tol=a.tol,
                two_site=a.two_site,
                noise=p["noise"],
                seed=a.seed + k,
                callback=self.on_sweep,
                progress=self.on_bond,
                threads=a.threads,
                conserve=p["conserve"],
                sector=p["sector"],
                placement=tf.gpu(0) if a.device == "gpu" else tf.CPU,
                orthogonal_to=list(earlier),
            ),
            self.parser.error,
            self.close_bar,
        )

    def run_excited(self, H: Any, psi0: Any, p: dict[str, Any], ground: Any) -> ExcitedStates:
        """States 1..N-1 of ``--states N``, each orthogonal to the states before it (the table per
        sweep of each under its own header)."""
        results = [ground]
        for k in range(1, self.args.states):
            if self.show_table:
                self.print(f"state {k}: orthogonal to states 0..{k - 1}")
            results.append(self.run_dmrg(H, psi0, p, k, [r.state for r in results]))
        return excited_result(results)

    def summary(
        self,
        res: Any,
        energy: float,
        ref: Any,
        bonds: list[int],
        entropy: list[float],
        t_dmrg: float,
        found: Any = None,
    ) -> None:
        L = self.L
        last = res.history[-1]
        self.print(f"energy      {energy:.14f}   ({energy / L:.14f} per site)")
        self.print(f"variance    {res.variance:.3e}   (<H^2> - <H>^2)")
        if res.sector:  # the conserved charges of the final state (tfim: none)
            self.print(
                "sector      " + ", ".join(f"{k} = {v:.10g}" for k, v in res.sector.items()) + "   (conserved by H)"
            )
        if ref is not None:
            kind = "exact" if ref.exact else "reference"
            self.print(f"{kind:<11} {ref.energy:.14f}   ({ref.source})")
            self.print(f"error       {abs(energy - ref.energy):.3e}   (|E - E_{'exact' if ref.exact else 'ref'}|)")
        elif not self.legacy:
            states = _cli_lattice.ed_states(self.args, self.charges)
            self.print(
                "reference   none known: exact diagonalization "
                + (
                    "is not done for spin-1 sites"
                    if states is None
                    else f"needs at most 2^14 states, and the {'sector' if self.charges else 'Hilbert space'} has {states}"
                )
            )
        elif getattr(self, "other_sector", False):
            self.print(
                "reference   none: the references are ground energies, and this run is in a sector "
                "chosen by --sz/--parity"
            )
        else:
            self.print("reference   none known for these parameters (exact diagonalization needs at most 2^14 states)")
        if res.converged:
            self.print(f"converged   yes: |dE| = {abs(last.delta_energy):.1e} < tol after {_sweeps(len(res.history))}")
        else:
            de = "n/a" if math.isnan(last.delta_energy) else f"{abs(last.delta_energy):.1e}"
            self.print(f"converged   no: |dE| = {de} after {_sweeps(len(res.history))} (tol {self.args.tol:g})")
        mid = (L - 1) // 2
        self.print(
            f"bond dims   max {max(bonds)}, middle bond {bonds[mid]};  entanglement entropy "
            f"at the middle bond {entropy[mid]:.6f}"
        )
        if found is not None:
            for line in _cli_measurements.summary_lines(found):
                self.print(line)
        if self.excited is not None:
            ex = self.excited
            self.print(f"{'state':>5}  {'energy':>20}  {'gap':>14}  {'variance':>10}")
            for k, r in enumerate(ex):
                self.print(f"{k:>5}  {float(r.energy):>20.12f}  {float(ex.gaps[k]):>14.10f}  {r.variance:>10.2e}")
            self.print(f"overlaps    largest |<i|j>| between the states {ex.max_overlap:.1e}")
        self.print(
            f"time        {t_dmrg:.2f} s DMRG, {sum(r.matvecs for r in res.history)} matvecs"
            + (
                f" ({exact} local problems solved exactly)"
                if (exact := sum(r.exact_solves for r in res.history))
                else ""
            )
            + (f", {self.t_measure:.2f} s measurements" if found is not None else "")
        )

    def write_json(
        self,
        path: str,
        p: dict[str, Any],
        res: Any,
        energy: float,
        ref: Any,
        bonds: list[int],
        entropy: list[float],
        started: str,
        t0: float,
        t_setup: float,
        t_dmrg: float,
        t_analysis: float,
        found: Any = None,
    ) -> None:
        doc = {
            "schema": SCHEMA,
            "program": {
                "name": f"{PROG} dmrg",
                "version": _version(),
                "argv": self.argv,
                "started": started,
                "python": sys.version.split()[0],
                "numpy": np.__version__,
            },
            "parameters": p,
            # the tfim's parity run works in the Hadamard-rotated basis, and so does a --save of it
            "basis": ROTATED_BASIS if p.get("conserve") == "parity" else "model",
            "energy": energy,
            "energy_per_site": energy / self.L,
            "variance": float(res.variance),
            "converged": bool(res.converged),
            "sector": dict(res.sector),
            "sweeps_run": len(res.history),
            "reference": None if ref is None else dict(ref.as_dict(), error=abs(energy - ref.energy)),
            "history": [r.as_dict() for r in res.history],
            "bond_dims": bonds,
            "entanglement_entropy": entropy,
            "timing": {
                "setup_seconds": t_setup,
                "dmrg_seconds": t_dmrg,
                "sweep_seconds": [r.seconds for r in res.history],
                "analysis_seconds": t_analysis,
                "total_seconds": time.perf_counter() - t0,
            },
        }
        if self.excited is not None:
            doc["states"] = [
                {"energy": float(r.energy), "gap": float(g), "variance": float(r.variance), "sector": dict(r.sector)}
                for r, g in zip(self.excited, self.excited.gaps)
            ]
            doc["max_overlap"] = self.excited.max_overlap
        if found is not None:  # fermion models: the measurements (README, "Run a simulation")
            doc["measurements"] = _cli_measurements.as_json(found)
        write_json_record(path, doc)


ROTATED_BASIS = (
    "rotated basis of the parity run (H = -J sum XX - g sum Z: the model's X and Z exchanged by a Hadamard on "
    "every site; measure X for the model's Z)"
)


def _run_charges(conserve: str | None, sector: dict[str, Any]) -> dict[str, Any]:
    """The conserved charges of a run's final state (``N`` and parity as integers), ``{}`` if dense."""
    if conserve is None:
        return {}
    out: dict[str, Any] = {}
    for name in conserve.split(","):
        v = sector.get(name)
        out[name] = int(round(v)) if name in ("N", "parity") and v is not None else v
    return out


def _symmetry_text(p: dict[str, Any], auto_dense: bool, fermions: bool = False) -> str:
    if fermions:
        return _cli_lattice.symmetry_text(p["conserve"], p["sector"])
    if p["conserve"] == "Sz":
        return "U(1) Sz, sector " + ("Sz = lowest |Sz|" if p["sector"] is None else f"Sz = {p['sector']:g}")
    if p["conserve"] == "parity":
        return (
            "Z2 parity (prod Z, model written as -J sum XX - g sum Z), sector "
            + f"{0 if p['sector'] is None else p['sector']}"
        )
    return (
        "none (dense; the ground state's sector is not known by symmetry here: --sz/--parity choose one)"
        if auto_dense
        else "none (dense)"
    )


def _sweeps(n: int) -> str:
    return f"{n} sweep" if n == 1 else f"{n} sweeps"


def _sched(values: Sequence[Any], fmt: str = "{}") -> str:
    return ",".join(fmt.format(v) for v in values)
