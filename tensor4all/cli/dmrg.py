"""The ``dmrg`` command of the ``tensor4all`` program: the ground state of a spin chain, the
J1-J2 model or a fermion model on a chain or a lattice by DMRG, with a progress bar per sweep,
one table row per sweep, the final energy, variance and error against a reference energy,
measurements for fermion models, and optionally JSON (``--json``), a plot (``--plot``) and the
final MPS (``--save``). This module holds the command's options (:func:`add_parser`, the ones
``scan`` and ``evolve`` copy) and its entry point (:func:`run_command`); its checks are
:mod:`tensor4all.cli.checks`, the run and its report :mod:`tensor4all.cli.dmrg_run`, the figure
:mod:`tensor4all.cli.dmrg_plot`."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from . import lattice as _cli_lattice
from .checks import validate
from .common import (
    CONSERVE,
    add_output_options,
    bond_schedule,
    command_threads,
    deprecated_aliases,
    cutoff_schedule,
    finite_float,
    integer_arg,
    noise_arg,
    nonnegative_float,
    threads_arg,
)
from .dmrg_plot import write_plot
from .dmrg_run import DMRGRun
from ..tools.threads import THREADED_MIN_BOND

__all__ = ["add_parser", "run_command", "write_plot"]

MODELS = _cli_lattice.MODELS
SPINS = ("1/2", "1")
DTYPES = ("float64", "complex128")

_EXAMPLES = """\
examples:
  tensor4all dmrg                                   Heisenberg chain, L=32, chi=64
  tensor4all dmrg --model tfim --L 64 --g 0.9       transverse-field Ising chain
  tensor4all dmrg --model xxz --Jz 0.5 --L 12       checked against exact diagonalization
  tensor4all dmrg --max-bond 16,32,64,128 --sweeps 8  a bond-dimension schedule per sweep
  tensor4all dmrg --json run.json --plot run.png --save psi.arrow
  tensor4all dmrg --model hubbard --lattice square --Lx 4 --Ly 2 --U 4 --max-bond 128
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
    m.add_argument(
        "--model",
        choices=MODELS,
        default="heisenberg",
        help="heisenberg/xxz: H = sum J (SxSx + SySy) + Jz SzSz - h sum Sz; "
        "tfim: H = -J sum ZZ - g sum X (Pauli matrices); j1j2: J sum_<ij> S.S + J2 sum_<<ij>> S.S "
        "- h sum Sz (spin 1/2); hubbard: -t sum (c+_is c_js + h.c.) + U sum n_up n_dn - mu sum n; "
        "tj: -t sum P(c+_is c_js + h.c.)P + J sum (S_i.S_j - n_i n_j/4); spinless: -t sum (c+_i c_j "
        "+ h.c.) + V sum n_i n_j - mu sum n (sums over the lattice's bonds). Default: %(default)s",
    )
    m.add_argument(
        "--L",
        type=integer_arg(2, "the chain needs at least 2 sites"),
        default=32,
        action=_cli_lattice.StoreGiven,
        help="number of sites of a chain, at least 2 (default: %(default)s)",
    )
    m.add_argument(
        "--J",
        type=finite_float,
        default=1.0,
        action=_cli_lattice.StoreGiven,
        help="exchange coupling (heisenberg/xxz: XX+YY part; tfim: ZZ coupling; j1j2: J1; tj: the "
        "exchange J, default 0.5 there) (default: %(default)s)",
    )
    m.add_argument(
        "--Jz", type=finite_float, default=None, help="ZZ coupling of heisenberg/xxz (default: equal to --J)"
    )
    m.add_argument(
        "--h",
        type=finite_float,
        default=None,
        help="longitudinal field of heisenberg/xxz/j1j2, the term -h sum Sz (default: 0)",
    )
    m.add_argument(
        "--g", type=finite_float, default=None, help="transverse field of tfim (default: 1, the critical point g = J)"
    )
    m.add_argument("--spin", choices=SPINS, default=None, help="spin of heisenberg/xxz sites (default: 1/2)")
    _cli_lattice.add_options(
        p.add_argument_group("lattice (every model)"),
        p.add_argument_group("j1j2 and the fermion models (hubbard, tj, spinless)"),
        integer_arg,
        finite_float,
    )
    a = p.add_argument_group("algorithm")
    a.add_argument(
        "--max-bond",
        "--chi",
        dest="chi",
        action=deprecated_aliases({"--chi": "--max-bond"}),
        type=bond_schedule,
        default=[64],
        metavar="CHI[,CHI...]",
        help="maximal bond dimension (Python: max_bond): a number, or a schedule per sweep such as "
        "16,32,64 (the last entry repeats); --chi is its deprecated old spelling (default: 64)",
    )
    a.add_argument(
        "--sweeps",
        type=integer_arg(1, "at least 1 sweep"),
        default=10,
        help="maximal number of sweeps, each left-to-right and back (default: %(default)s)",
    )
    a.add_argument(
        "--cutoff",
        type=cutoff_schedule,
        default=[1e-10],
        metavar="EPS[,EPS...]",
        help="truncation cutoff: largest discarded weight (relative sum of squared singular "
        "values) per bond; a number or a schedule per sweep (default: 1e-10, as in evolve and "
        "Python's dmrg)",
    )
    a.add_argument(
        "--tol",
        type=nonnegative_float,
        default=1e-10,
        help="stop when the energy changes by less than this in one sweep, checked only after "
        "the --max-bond and --cutoff schedules are used up and, with --one-site, after the "
        "--noise has decayed to 0 (default: %(default)g)",
    )
    a.add_argument(
        "--states",
        type=integer_arg(1, "at least 1 state"),
        default=1,
        metavar="N",
        help="the N lowest states of the run's sector, each a DMRG orthogonal to those before it "
        "(Python: tensor4all.excited_states); prints their energies, gaps, variances and overlaps "
        "(default: 1, the ground state)",
    )
    site = a.add_mutually_exclusive_group()
    site.add_argument(
        "--two-site",
        dest="two_site",
        action="store_true",
        default=True,
        help="two-site updates: bonds grow through the SVD (the default)",
    )
    site.add_argument(
        "--one-site",
        dest="two_site",
        action="store_false",
        help="one-site updates with subspace expansion (cheaper per step; start from a "
        "random state of bond dimension CHI) (default: off, two-site)",
    )
    a.add_argument(
        "--noise",
        type=noise_arg,
        default=None,
        help="subspace-expansion strength of --one-site, decaying tenfold per sweep "
        "(default: 1e-4; --two-site runs take dmrg's default perturbation 1e-4, 1e-6, "
        "then 0)",
    )
    a.add_argument(
        "--conserve",
        choices=CONSERVE,
        default="auto",
        metavar="{" + ",".join(f'"{c}"' if "," in c else c for c in CONSERVE) + "}",
        help="run in one sector of a conserved charge: auto (default: Sz for heisenberg/xxz/j1j2 when "
        "symmetry says the ground state's sector, the parity for tfim, written as -J sum XX - g "
        "sum Z; N and Sz together (N,Sz) for hubbard/tj, N for spinless), Sz, parity, N, N,Sz "
        "or none (dense); float64 only (with --dtype complex128, auto means none); --one-site "
        "conserved runs start from a random state of the sector",
    )
    a.add_argument(
        "--sz",
        type=finite_float,
        default=None,
        help="the total Sz to target with --conserve Sz/N,Sz/auto (heisenberg/xxz/j1j2, hubbard/tj; "
        "default the lowest |Sz|: 0, or 1/2 for an odd number of spins 1/2 or electrons)",
    )
    a.add_argument(
        "--parity",
        type=int,
        choices=(0, 1),
        default=None,
        help="the parity sector (number of Z = -1 spins mod 2) with --conserve parity/auto "
        "(tfim; default 0, where the ground state of the open chain lies)",
    )
    a.add_argument(
        "--seed",
        type=integer_arg(0, "the seed is a non-negative integer"),
        default=0,
        help="seed of the random initial state (default: %(default)s)",
    )
    a.add_argument(
        "--dtype", choices=DTYPES, default="float64", help="element type of the state (default: %(default)s)"
    )
    a.add_argument(
        "--threads",
        type=threads_arg,
        default=None,
        metavar="N",
        help="BLAS threads for all the command's work: the sweeps, the exact reference and the analysis "
        "(default: auto: 1 thread while the largest chi is "
        f"below {THREADED_MIN_BOND}, where threaded BLAS gains little and is many times "
        "slower on a busy machine, else the BLAS default; 0 keeps the BLAS library's own "
        "setting)",
    )
    a.add_argument(
        "--device",
        choices=("cpu", "gpu"),
        default="cpu",
        help="where the sweeps run: cpu (default) or gpu (GPU 0 through CuPy, the 'gpu' extra)",
    )
    o = p.add_argument_group("output")
    add_output_options(
        o,
        json_what="parameters, history per sweep, energy, variance, reference, bond dimensions, "
        "entanglement profile, timing, and for fermion models the measurements",
        plot_what="|E - E_best| per sweep (log scale) and the entanglement entropy across the bonds",
        rows_what="table per sweep",
    )
    o.add_argument(
        "--measure",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="fermion models: after the run, the density profile, double occupancy, nearest-neighbour "
        "spin and charge correlations and the entanglement per sector at the middle bond "
        "(tensor4all.measurements: about 5 L expectation values of O(L) contractions each, "
        "which can take longer than the sweeps on long chains) (default: on for hubbard, tj and "
        "spinless)",
    )
    p.set_defaults(func=run_command)
    return p


def run_command(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    sub = parser.commands["dmrg"]  # type: ignore[attr-defined]
    validate(sub, args)
    with command_threads(args):  # the sweeps, the reference and the analysis
        return DMRGRun(sub, args, list(sys.argv[1:] if argv is None else argv)).run()
