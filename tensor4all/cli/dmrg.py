"""The ``dmrg`` command of the ``tensor4all`` program: the ground state of a spin chain, the
J1-J2 model or a fermion model on a chain or a lattice by DMRG, with a progress bar per sweep,
one table row per sweep, the final energy, variance and error against a reference energy,
measurements for fermion models, and optionally JSON (``--json``), a plot (``--plot``) and the
final MPS (``--save``). Its checks are :mod:`tensor4all.cli.checks`."""
from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from typing import Any, Sequence

import numpy as np
from tqdm import tqdm

import tenferro as tf

from . import lattice as _cli_lattice
from . import measurements as _cli_measurements
from .. import references
from .checks import conserve_of, ground_sector, sector_of, validate
from .common import (CONSERVE, PROG, _version, add_output_options, bond_schedule, cutoff_schedule,
                     finite_float, integer_arg, noise_arg, nonnegative_float, run_reported, threads_arg,
                     write_json_record, write_outputs)
from ..algorithms.dmrg import dmrg
from ..tools.errors import Tensor4allError
from ..networks.mps import MPS
from ..tools.threads import THREADED_MIN_BOND, threads_for

__all__ = ["add_parser", "run_command", "write_plot"]

SCHEMA = "tensor4all.dmrg/1"
MODELS = _cli_lattice.MODELS
SPINS = ("1/2", "1")
DTYPES = ("float64", "complex128")

_EXAMPLES = """\
examples:
  tensor4all dmrg                                   Heisenberg chain, L=32, chi=64
  tensor4all dmrg --model tfim --L 64 --g 0.9       transverse-field Ising chain
  tensor4all dmrg --model xxz --Jz 0.5 --L 12       checked against exact diagonalization
  tensor4all dmrg --chi 16,32,64,128 --sweeps 8     a bond-dimension schedule per sweep
  tensor4all dmrg --json run.json --plot run.png --save psi.arrow
  tensor4all dmrg --model hubbard --lattice square --Lx 4 --Ly 2 --U 4 --chi 128
  tensor4all dmrg --model tj --L 16 --N 12 --sz 0 --t 1 --J 0.4
  tensor4all dmrg --model spinless --L 40 --V 0 --mu 0.5      free fermions: exact reference
  tensor4all dmrg --model j1j2 --lattice triangular --Lx 4 --Ly 3 --J2 0.125
"""


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``dmrg`` subcommand to ``commands`` (its options are the ones ``scan`` and
    ``evolve`` copy)."""
    p = commands.add_parser(
        "dmrg",
        help="ground state of a spin or fermion model on a chain or lattice by DMRG (progress, table per "
             "sweep, JSON, plot, saved MPS)",
        description=(
            "Ground state of a spin chain, the J1-J2 model or a fermion model (hubbard, tj,\n"
            "spinless) on an open chain or a lattice by DMRG. Prints a progress bar per sweep (on\n"
            "stderr, when it is a terminal), one table row per sweep (sweep, energy, dE, max\n"
            "bond, max truncation error, seconds), then the final energy, its variance\n"
            "<H^2> - <H>^2 and its error against a reference energy where one is known (TFIM\n"
            "chain: exact free-fermion energy; exact diagonalization when the Hilbert space (for\n"
            "lattices and fermion models: the run's sector) has at most 2^14 states; tabulated\n"
            "Heisenberg values for L = 32 and 100; hubbard at U = 0 and spinless at V = 0: free\n"
            "fermions on any lattice, in the run's sector). Fermion models then print the density\n"
            "profile, the double occupancy, the mean spin and charge correlations over the\n"
            "nearest-neighbour bonds and the entanglement per charge sector at the middle bond."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    m = p.add_argument_group("model")
    m.add_argument("--model", choices=MODELS, default="heisenberg",
                   help="heisenberg/xxz: H = sum J (SxSx + SySy) + Jz SzSz - h sum Sz; "
                        "tfim: H = -J sum ZZ - g sum X (Pauli matrices); j1j2: J sum_<ij> S.S + J2 sum_<<ij>> S.S "
                        "- h sum Sz (spin 1/2); hubbard: -t sum (c+_is c_js + h.c.) + U sum n_up n_dn - mu sum n; "
                        "tj: -t sum P(c+_is c_js + h.c.)P + J sum (S_i.S_j - n_i n_j/4); spinless: -t sum (c+_i c_j "
                        "+ h.c.) + V sum n_i n_j - mu sum n (sums over the lattice's bonds). Default: %(default)s")
    m.add_argument("--L", type=integer_arg(2, "the chain needs at least 2 sites"), default=32,
                   action=_cli_lattice.StoreGiven,
                   help="number of sites of a chain, at least 2 (default: %(default)s)")
    m.add_argument("--J", type=finite_float, default=1.0, action=_cli_lattice.StoreGiven,
                   help="exchange coupling (heisenberg/xxz: XX+YY part; tfim: ZZ coupling; j1j2: J1; tj: the "
                        "exchange J, default 0.5 there) (default: %(default)s)")
    m.add_argument("--Jz", type=finite_float, default=None,
                   help="ZZ coupling of heisenberg/xxz (default: equal to --J)")
    m.add_argument("--h", type=finite_float, default=None,
                   help="longitudinal field of heisenberg/xxz/j1j2, the term -h sum Sz (default: 0)")
    m.add_argument("--g", type=finite_float, default=None,
                   help="transverse field of tfim (default: 1, the critical point g = J)")
    m.add_argument("--spin", choices=SPINS, default=None,
                   help="spin of heisenberg/xxz sites (default: 1/2)")
    _cli_lattice.add_options(p.add_argument_group("lattice (every model)"),
                             p.add_argument_group("j1j2 and the fermion models (hubbard, tj, spinless)"),
                             integer_arg, finite_float)
    a = p.add_argument_group("algorithm")
    a.add_argument("--chi", type=bond_schedule, default=[64], metavar="CHI[,CHI...]",
                   help="maximal bond dimension: a number, or a schedule per sweep such as 16,32,64 "
                        "(the last entry repeats) (default: 64)")
    a.add_argument("--sweeps", type=integer_arg(1, "at least 1 sweep"), default=10,
                   help="maximal number of sweeps, each left-to-right and back (default: %(default)s)")
    a.add_argument("--cutoff", type=cutoff_schedule, default=[1e-12], metavar="EPS[,EPS...]",
                   help="truncation cutoff: largest discarded weight (relative sum of squared singular "
                        "values) per bond; a number or a schedule per sweep (default: 1e-12)")
    a.add_argument("--tol", type=nonnegative_float, default=1e-10,
                   help="stop when the energy changes by less than this in one sweep, checked only after "
                        "the --chi and --cutoff schedules are used up and, with --one-site, after the "
                        "--noise has decayed to 0 (default: %(default)g)")
    site = a.add_mutually_exclusive_group()
    site.add_argument("--two-site", dest="two_site", action="store_true", default=True,
                      help="two-site updates: bonds grow through the SVD (the default)")
    site.add_argument("--one-site", dest="two_site", action="store_false",
                      help="one-site updates with subspace expansion (cheaper per step; start from a "
                           "random state of bond dimension CHI) (default: off, two-site)")
    a.add_argument("--noise", type=noise_arg, default=None,
                   help="subspace-expansion strength of --one-site, decaying tenfold per sweep "
                        "(default: 1e-4; --two-site runs take dmrg's default perturbation 1e-4, 1e-6, "
                        "then 0)")
    a.add_argument("--conserve", choices=CONSERVE, default="auto", metavar="{" + ",".join(
                       f'"{c}"' if "," in c else c for c in CONSERVE) + "}",
                   help="run in one sector of a conserved charge: auto (default: Sz for heisenberg/xxz/j1j2 when "
                        "symmetry says the ground state's sector, the parity for tfim, written as -J sum XX - g "
                        "sum Z; N and Sz together (N,Sz) for hubbard/tj, N for spinless), Sz, parity, N, N,Sz "
                        "or none (dense); float64 only (with --dtype complex128, auto means none); --one-site "
                        "conserved runs start from a random state of the sector")
    a.add_argument("--sz", type=finite_float, default=None,
                   help="the total Sz to target with --conserve Sz/N,Sz/auto (heisenberg/xxz/j1j2, hubbard/tj; "
                        "default the lowest |Sz|: 0, or 1/2 for an odd number of spins 1/2 or electrons)")
    a.add_argument("--parity", type=int, choices=(0, 1), default=None,
                   help="the parity sector (number of Z = -1 spins mod 2) with --conserve parity/auto "
                        "(tfim; default 0, where the ground state of the open chain lies)")
    a.add_argument("--seed", type=integer_arg(0, "the seed is a non-negative integer"), default=0,
                   help="seed of the random initial state (default: %(default)s)")
    a.add_argument("--dtype", choices=DTYPES, default="float64",
                   help="element type of the state (default: %(default)s)")
    a.add_argument("--threads", type=threads_arg, default=None, metavar="N",
                   help="BLAS threads during the sweeps (default: auto: 1 thread while the largest chi is "
                        f"below {THREADED_MIN_BOND}, where threaded BLAS gains little and is many times "
                        "slower on a busy machine, else the BLAS default; 0 keeps the BLAS library's own "
                        "setting)")
    a.add_argument("--device", choices=("cpu", "gpu"), default="cpu",
                   help="where the sweeps run: cpu (default) or gpu (GPU 0 through CuPy, the 'gpu' extra)")
    o = p.add_argument_group("output")
    add_output_options(o, json_what="parameters, history per sweep, energy, variance, reference, bond dimensions, "
                                    "entanglement profile, timing, and for fermion models the measurements",
                       plot_what="|E - E_best| per sweep (log scale) and the entanglement entropy across the bonds",
                       rows_what="table per sweep")
    o.add_argument("--measure", action=argparse.BooleanOptionalAction, default=None,
                   help="fermion models: after the run, the density profile, double occupancy, nearest-neighbour "
                        "spin and charge correlations and the entanglement per sector at the middle bond "
                        "(tensor4all.measurements: about 5 L expectation values of O(L) contractions each, "
                        "which can take longer than the sweeps on long chains) (default: on for hubbard, tj and "
                        "spinless)")
    p.set_defaults(func=run_command)
    return p


def run_command(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    sub = parser.commands["dmrg"]  # type: ignore[attr-defined]
    validate(sub, args)
    return _DMRGRun(sub, args, list(sys.argv[1:] if argv is None else argv)).run()


# ---- the dmrg command ------------------------------------------------------------------
class _DMRGRun:
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
        self.bar_sweep = 0
        self.legacy = _cli_lattice.is_legacy(args)   # a spin chain of the first version: output unchanged
        self.fermions = args.model in _cli_lattice.FERMION_MODELS
        self.L = _cli_lattice.n_sites(args)
        self.charges: dict[str, Any] = {}   # the conserved charges of the final state (non-legacy runs)

    # model parameters with their defaults filled in
    def parameters(self) -> dict[str, Any]:
        a = self.args
        p: dict[str, Any] = {"model": a.model, "L": self.L, **_cli_lattice.couplings(a)}
        if not self.legacy:
            p["lattice"] = _cli_lattice.lattice_record(a)
        p.update(chi=list(a.chi), sweeps=a.sweeps, cutoff=list(a.cutoff), tol=a.tol, two_site=a.two_site,
                 noise=(None if a.two_site else (1e-4 if a.noise is None else a.noise)),
                 seed=a.seed, dtype=a.dtype, threads=a.threads,
                 blas_threads=self.blas_threads, conserve=conserve_of(a), sector=sector_of(a))
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

    # progress bar across the bonds of each sweep
    def on_bond(self, u: Any) -> None:
        if not self.show_bar:
            return
        if self.bar is None or u.sweep != self.bar_sweep:
            self.close_bar()
            self.bar = tqdm(total=u.steps, desc=f"sweep {u.sweep}", unit="bond", leave=False,
                            file=sys.stderr, dynamic_ncols=True, mininterval=0.1)
            self.bar_sweep = u.sweep
        self.bar.set_postfix_str(f"E={u.energy:.10f} chi={u.bond_dim}", refresh=False)
        self.bar.update(1)
        if u.step == u.steps:  # a fast sweep may end between refreshes: show its last state
            self.bar.refresh()

    def close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def on_sweep(self, r: Any) -> None:
        self.close_bar()
        if self.show_table:
            de = "-" if math.isnan(r.delta_energy) else f"{r.delta_energy:+.3e}"
            self.print(f"{r.sweep:>5}  {r.energy:>20.12f}  {de:>10}  {r.max_bond:>8}  "
                       f"{r.max_truncation_error:>13.2e}  {r.seconds:>8.2f}"
                       + (f"  {r.blocks:>6}" if r.blocks is not None else ""))

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
        self.print(f"      {sites}, chi {_sched(a.chi)}, cutoff {_sched(a.cutoff, '{:g}')}, at most "
                   f"{a.sweeps} sweeps, tol {a.tol:g}, {a.dtype}, seed {a.seed}, "
                   + ("on GPU 0" if a.device == "gpu" else f"BLAS threads {self.blas_threads or 'default'}"))
        auto_dense = a.conserve == "auto" and a.two_site and a.dtype == "float64" and p["conserve"] is None
        self.print(f"      symmetry {_symmetry_text(p, auto_dense, self.fermions)}")
        if self.show_table:
            self.print(f"{'sweep':>5}  {'energy':>20}  {'dE':>10}  {'max bond':>8}  {'max trunc err':>13}  "
                       f"{'seconds':>8}" + (f"  {'blocks':>6}" if p["conserve"] else ""))
        t1 = time.perf_counter()
        res = run_reported(lambda: dmrg(H, psi0, max_bond=list(a.chi), sweeps=a.sweeps, cutoff=list(a.cutoff),
                                        tol=a.tol, two_site=a.two_site, noise=p["noise"], seed=a.seed,
                                        callback=self.on_sweep, progress=self.on_bond, threads=a.threads,
                                        conserve=p["conserve"], sector=p["sector"],
                                        placement=tf.gpu(0) if a.device == "gpu" else tf.CPU),
                           self.parser.error, self.close_bar)
        t_dmrg = time.perf_counter() - t1
        t2 = time.perf_counter()
        energy = float(res.energy)
        entropy = [float(s) for s in res.state.entanglement_entropy()]
        bonds = [int(b) for b in res.state.bond_dims]
        ref = None
        if self.legacy:
            known = ground_sector(a)
            self.other_sector = not (p["conserve"] is None or
                                     (known is not None and known == (p["conserve"], p["sector"])))
            if not self.other_sector:
                # a reference is the ground energy: only a run in the ground state's sector compares with it
                ref = references.reference_energy(a.model, a.L, J=a.J, Jz=p.get("Jz"), g=p.get("g", 1.0),
                                                  h=p.get("h", 0.0), spin=p.get("spin", "1/2"))
        else:   # the exact lowest energy of the run's own sector (of the final state's charges)
            self.charges = _run_charges(p["conserve"], res.sector)
            ref = _cli_lattice.reference(a, self.charges)
        found = None
        t3 = time.perf_counter()
        if self.fermions and a.measure is not False:
            found = _cli_measurements.measure(res.state, a.model, _cli_lattice.LOCAL[a.model],
                                              _cli_lattice.nearest_bonds(a), list(self.charges))
        self.t_measure = time.perf_counter() - t3
        t_analysis = time.perf_counter() - t2
        self.summary(res, energy, ref, bonds, entropy, t_dmrg, found)
        return write_outputs(a, (("save", lambda path: res.state.save(path)),
                                 ("json", lambda path: self.write_json(path, p, res, energy, ref, bonds, entropy,
                                                                       started, t0, t_setup, t_dmrg, t_analysis,
                                                                       found)),
                                 ("plot", lambda path: write_plot(path, res, ref, bonds, entropy,
                                                                  self.model_text(p)))), self.print, PROG)

    def summary(self, res: Any, energy: float, ref: Any, bonds: list[int], entropy: list[float],
                t_dmrg: float, found: Any = None) -> None:
        L = self.L
        last = res.history[-1]
        self.print(f"energy      {energy:.14f}   ({energy / L:.14f} per site)")
        self.print(f"variance    {res.variance:.3e}   (<H^2> - <H>^2)")
        if res.sector:  # the conserved charges of the final state (tfim: none)
            self.print("sector      " + ", ".join(f"{k} = {v:.10g}" for k, v in res.sector.items())
                       + "   (conserved by H)")
        if ref is not None:
            kind = "exact" if ref.exact else "reference"
            self.print(f"{kind:<11} {ref.energy:.14f}   ({ref.source})")
            self.print(f"error       {abs(energy - ref.energy):.3e}   (|E - E_{'exact' if ref.exact else 'ref'}|)")
        elif not self.legacy:
            states = _cli_lattice.ed_states(self.args, self.charges)
            self.print("reference   none known: exact diagonalization " + (
                "is not done for spin-1 sites" if states is None else
                f"needs at most 2^14 states, and the {'sector' if self.charges else 'Hilbert space'} has {states}"))
        elif getattr(self, "other_sector", False):
            self.print("reference   none: the references are ground energies, and this run is in a sector "
                       "chosen by --sz/--parity")
        else:
            self.print("reference   none known for these parameters (exact diagonalization needs at most "
                       "2^14 states)")
        if res.converged:
            self.print(f"converged   yes: |dE| = {abs(last.delta_energy):.1e} < tol after {_sweeps(len(res.history))}")
        else:
            de = "n/a" if math.isnan(last.delta_energy) else f"{abs(last.delta_energy):.1e}"
            self.print(f"converged   no: |dE| = {de} after {_sweeps(len(res.history))} (tol {self.args.tol:g})")
        mid = (L - 1) // 2
        self.print(f"bond dims   max {max(bonds)}, middle bond {bonds[mid]};  entanglement entropy "
                   f"at the middle bond {entropy[mid]:.6f}")
        if found is not None:
            for line in _cli_measurements.summary_lines(found):
                self.print(line)
        self.print(f"time        {t_dmrg:.2f} s DMRG, {sum(r.matvecs for r in res.history)} matvecs"
                   + (f", {self.t_measure:.2f} s measurements" if found is not None else ""))

    def write_json(self, path: str, p: dict[str, Any], res: Any, energy: float, ref: Any, bonds: list[int],
                   entropy: list[float], started: str, t0: float, t_setup: float, t_dmrg: float,
                   t_analysis: float, found: Any = None) -> None:
        doc = {
            "schema": SCHEMA,
            "program": {"name": f"{PROG} dmrg", "version": _version(), "argv": self.argv,
                        "started": started, "python": sys.version.split()[0], "numpy": np.__version__},
            "parameters": p,
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
            "timing": {"setup_seconds": t_setup, "dmrg_seconds": t_dmrg,
                       "sweep_seconds": [r.seconds for r in res.history],
                       "analysis_seconds": t_analysis, "total_seconds": time.perf_counter() - t0},
        }
        if found is not None:   # fermion models: the measurements (README, "Run a simulation")
            doc["measurements"] = _cli_measurements.as_json(found)
        write_json_record(path, doc)


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
        return ("Z2 parity (prod Z, model written as -J sum XX - g sum Z), sector "
                + f"{0 if p['sector'] is None else p['sector']}")
    return "none (dense; the ground state's sector is not known by symmetry here: --sz/--parity choose one)" \
        if auto_dense else "none (dense)"


def _sweeps(n: int) -> str:
    return f"{n} sweep" if n == 1 else f"{n} sweeps"


def _sched(values: Sequence[Any], fmt: str = "{}") -> str:
    return ",".join(fmt.format(v) for v in values)


def write_plot(path: str, res: Any, ref: Any, bonds: Sequence[int], entropy: Sequence[float], title: str) -> None:
    """Two panels: ``|E - E_best|`` per sweep on a log scale (with the largest truncation error
    per sweep) and the entanglement entropy across the bonds (with the bond dimensions)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    sweeps = np.array([r.sweep for r in res.history])
    energies = np.array([r.energy for r in res.history])
    if ref is not None and ref.exact:
        e_best, label = ref.energy, "|E - E_exact|"
    else:
        e_best = float(min(energies.min(), ref.energy if ref is not None else np.inf))
        label = "|E - E_best|" if ref is None else "|E - E_best| (best of DMRG and reference)"
    diff = np.abs(energies - e_best)
    trunc = np.array([r.max_truncation_error for r in res.history])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    shown = diff > 0
    if shown.any():
        ax1.semilogy(sweeps[shown], diff[shown], "o-", label=label)
    if (trunc > 0).any():
        ax1.semilogy(sweeps[trunc > 0], trunc[trunc > 0], "s--", color="gray", alpha=0.7,
                     label="max truncation error")
    if not shown.any() and not (trunc > 0).any():
        ax1.text(0.5, 0.5, "no positive errors to show", ha="center", va="center", transform=ax1.transAxes)
    ax1.set_xlabel("sweep")
    ax1.set_ylabel("energy error")
    ax1.set_title("convergence")
    ax1.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax1.grid(True, which="major", alpha=0.3)
    if ax1.get_legend_handles_labels()[0]:
        ax1.legend(fontsize="small")
    x = np.arange(len(entropy))
    ax2.plot(x, entropy, ".-", color="C1", label="entanglement entropy S")
    ax2.set_xlabel("bond b (between sites b and b+1)")
    ax2.set_ylabel("S (natural log)")
    ax2.set_title("entanglement profile")
    ax2.grid(True, alpha=0.3)
    ax3 = ax2.twinx()
    ax3.step(x, bonds, where="mid", color="gray", alpha=0.5, label="bond dimension")
    ax3.set_ylabel("bond dimension", color="gray")
    fig.suptitle(f"DMRG  {title}   E = {res.history[-1].energy:.12f}")
    fig.savefig(path, dpi=100)
    plt.close(fig)
