"""``tensor4all idmrg``: the ground state of an infinite chain (a unit cell of ``--cell`` sites
repeated forever) by VUMPS (:func:`tensor4all.infinite.vumps`) or iDMRG
(:func:`tensor4all.infinite.idmrg`), over a schedule of bond dimensions (``--max-bond 16,32,64``:
each run warm-started from the one before). One table row per bond dimension: the energy per site,
its error against the exact value where one is known (:mod:`tensor4all.references.infinite`), the
entanglement entropy of a half-infinite chain, the correlation length from the transfer matrix,
iterations and seconds; then the central charge from ``S = (c/6) ln xi`` and the correlation length
extrapolated in the transfer-matrix gap (Rams, Czarnik and Cincio, PRX 8, 041033 (2018)) when the
schedule has several bond dimensions. ``--json``, ``--plot`` (entropy and correlation length against
the bond dimension) and ``--save`` (the final iMPS as NumPy arrays) as ``dmrg`` has them.

This module holds the options and their checks (:func:`add_parser`, :func:`check`); the run, its
table, JSON record, saved state and figure are :mod:`tensor4all.cli.idmrg_run`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from .common import add_output_options, bond_schedule, check_outputs, command_threads, integer_arg, real_arg
from .idmrg_run import COUPLINGS, SCHEMA, IDMRGRun
from .models import DmrgOptions
from .. import infinite

__all__ = ["add_parser", "check", "SCHEMA", "METHODS", "MODELS"]

METHODS = ("vumps", "idmrg")
MODELS = tuple(COUPLINGS)

_EXAMPLES = """\
examples:
  tensor4all idmrg                                          Heisenberg chain, cell 2, bonds 16,32,64 (Bethe ansatz)
  tensor4all idmrg --model heisenberg --spin 1 --cell 1 --max-bond 32,64,128     the Haldane chain
  tensor4all idmrg --model tfim --g 1 --cell 1 --max-bond 16,32,64              critical Ising: -4/pi
  tensor4all idmrg --model xxz --Jz 0.5 --max-bond 32,64 --json run.json --plot run.png --save psi.npz
  tensor4all idmrg --model j1j2 --J2 0.5                    Majumdar-Ghosh: a dimer product state
  tensor4all idmrg --method idmrg --max-bond 64,128,256          iDMRG conserving Sz (Bethe ansatz)
"""


def add_parser(commands: Any, dmrg_parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``idmrg`` subcommand; the couplings, ``--spin``, ``--seed`` and ``--threads`` are copies
    of the ``dmrg`` subparser's options (as ``evolve``, ``spectrum`` and ``thermal`` copy them)."""
    p = commands.add_parser(
        "idmrg",
        help="ground state of an infinite chain by VUMPS or iDMRG over a schedule of bond dimensions (energy "
        "per site, entanglement, correlation length; JSON, plot, saved iMPS)",
        description=(
            "The ground state of an infinite chain, a unit cell of --cell sites repeated forever, by VUMPS\n"
            "(variational uniform MPS with subspace expansion) or iDMRG, at each bond dimension of the\n"
            "--max-bond schedule in turn, each run warm-started from the state of the one before. Prints\n"
            "one row per bond dimension: the energy per site, its error against the exact value where one\n"
            "is known (Bethe ansatz for the spin-1/2 XXZ chain without field, free fermions for the XX and\n"
            "transverse-field Ising chains, the Majumdar-Ghosh point of j1j2; the spin-1 Heisenberg chain\n"
            "against White and Huse's -1.401484038971), the entanglement entropy of a half-infinite\n"
            "chain, the correlation length from the transfer matrix, iterations and seconds; then, with\n"
            "several bond dimensions, the central charge from S = (c/6) ln xi and the correlation length\n"
            "extrapolated in the gap of the transfer matrix (Rams, Czarnik and Cincio 2018)."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dmrg = DmrgOptions(dmrg_parser)
    m = p.add_argument_group("model")
    m.add_argument(
        "--model",
        choices=MODELS,
        default="heisenberg",
        help="heisenberg/xxz: H = sum J (SxSx + SySy) + Jz SzSz - h sum Sz; xx: the same with Jz = 0; tfim: "
        "H = -J sum ZZ - g sum X (Pauli matrices); j1j2: J sum S_i.S_{i+1} + J2 sum S_i.S_{i+2} - h sum Sz "
        "(spin 1/2). Default: %(default)s",
    )
    dmrg.copy(m, "J", help="exchange coupling (heisenberg/xxz/xx: the XX+YY part; tfim: the ZZ coupling; j1j2: J1) "
              "(default: 1.0)")  # fmt: skip
    dmrg.copy(m, "Jz")
    dmrg.copy(m, "h", help="longitudinal field of heisenberg/xxz/xx/j1j2, the term -h sum Sz (default: 0)")
    dmrg.copy(m, "g")
    dmrg.copy(m, "J2", help="next-nearest exchange of j1j2, J2 sum S_i.S_{i+2} (default: 0.5, Majumdar-Ghosh)")
    dmrg.copy(m, "spin", help="spin of heisenberg/xxz/xx sites (default: 1/2)")
    m.add_argument(
        "--cell",
        type=integer_arg(1, "the unit cell has at least 1 site"),
        default=None,
        help="sites per unit cell (default: 2 for the spin models, whose antiferromagnetic states need it, 1 for tfim)",
    )
    a = p.add_argument_group("algorithm")
    a.add_argument(
        "--method",
        choices=METHODS,
        default="vumps",
        help="vumps: variational uniform MPS (Zauner-Stauber et al. 2018), dense, bond dimension grown by "
        "subspace expansion; idmrg: infinite DMRG (McCulloch 2008). Default: %(default)s",
    )
    a.add_argument(
        "--max-bond",
        dest="max_bond",
        type=bond_schedule,
        default=[16, 32, 64],
        metavar="D[,D...]",
        help="bond dimensions to run, increasing, each run warm-started from the one before (idmrg with a "
        "conserved charge: from the product state) (Python: max_bond) (default: 16,32,64)",
    )
    a.add_argument(
        "--tol",
        type=real_arg(0.0, strict=True),
        default=1e-8,
        help="convergence tolerance of each run (vumps: the error max ||A_C - A_L C||, the energy then "
        "converged to about tol^2; idmrg: the change of the energy per site in a sweep) (default: %(default)g)",
    )
    a.add_argument(
        "--max-iter",
        dest="max_iter",
        type=integer_arg(1, "at least 1 iteration"),
        default=500,
        help="at most this many iterations (vumps) or sweeps (idmrg) per bond dimension (default: %(default)s)",
    )
    a.add_argument(
        "--cutoff",
        type=real_arg(0.0, strict=False),
        default=1e-12,
        help="directions of smaller relative weight are not added when the bond grows (default: %(default)g)",
    )
    a.add_argument(
        "--conserve",
        choices=("auto", "Sz", "none"),
        default="auto",
        help="the charge a run conserves: Sz (the spin models) or none (dense; tfim, whose parity prod X is no "
        "charge of its Z basis, runs dense). auto: Sz for idmrg on the spin models whose Hamiltonian a spin flip "
        "leaves unchanged (no field: charge 0 per cell then holds the ground state), else none: a conserved "
        "vumps run starts each bond dimension from a product state instead of the last state, so it is asked "
        "for by --conserve Sz (default: auto)",
    )
    dmrg.copy(a, "seed", help="seed of the random initial state (default: 0)")
    dmrg.copy(
        a,
        "threads",
        help=dmrg.actions["threads"]
        .help.replace(
            "the sweeps, the exact reference and the analysis", "the runs, the exact reference and the measurements"
        )
        .replace("largest chi", "largest --max-bond"),
    )
    o = p.add_argument_group("output")
    add_output_options(
        o,
        json_what="parameters, the rows per bond dimension, the reference, the history of every run, the "
        "final entanglement spectrum and transfer-matrix spectrum, timing",
        plot_what="the entanglement entropy and the correlation length against the bond dimension (and the "
        "energy error where the exact energy is known)",
        rows_what="table row per bond dimension",
    )
    for action in o._group_actions:  # an iMPS is saved as NumPy arrays only
        if action.dest == "save":
            action.help = (
                "write the final iMPS as NumPy arrays (.npz): AL_i, AR_i, C_i per site of the cell and its local "
                "space, tensor4all.iMPS(AL, AR, C, local) (default: none)"
            )
    p.set_defaults(func=_run)
    return p


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    sub = parser.commands["idmrg"]  # type: ignore[attr-defined]
    check(sub, args)
    with command_threads(args):  # the runs, the reference and the measurements
        return IDMRGRun(sub, args, list(sys.argv[1:] if argv is None else argv)).run()


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every check that needs more than one option (exit 2 through ``parser.error``, before anything runs)."""
    used = COUPLINGS[args.model]
    for name in ("Jz", "h", "g", "J2", "spin"):
        if getattr(args, name) is not None and name not in used:
            parser.error(
                f"argument --{name}: not a parameter of --model {args.model} (it takes "
                f"{', '.join('--' + u for u in ('J',) + used)})"
            )
    bonds = args.max_bond
    if any(b <= a for a, b in zip(bonds, bonds[1:])):
        parser.error(
            f"argument --max-bond: the schedule {','.join(map(str, bonds))} must increase (each run starts from "
            "the state of the one before); give increasing bond dimensions such as 16,32,64"
        )
    charge = None if args.model == "tfim" else "Sz"  # the tfim's parity prod X is no charge of its Z basis
    if args.conserve == "auto" and (args.method != "idmrg" or not charge):
        args.conserve = "none"  # idmrg decides once the model is built (IDMRGRun.run)
    elif args.conserve not in ("none", "auto") and args.conserve != charge:
        parser.error(
            f"argument --conserve: --model {args.model} "
            + (f"conserves Sz, not {args.conserve}" if charge else "conserves no charge of its basis (Z)")
            + f"; give --conserve {'Sz, ' if charge else ''}auto or none"
        )
    if args.method == "idmrg" and not hasattr(infinite, "idmrg"):
        parser.error("argument --method: idmrg is not available in this version of tensor4all; use --method vumps")
    if args.cell is None:
        args.cell = 1 if args.model == "tfim" else 2
    check_outputs(parser.error, args, (".npz",), "the final iMPS as NumPy arrays")
