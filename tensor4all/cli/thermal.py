"""``tensor4all thermal``: the thermodynamics of a chain from beta = 0 to ``--beta-max``.

The command builds the Hamiltonian (``evolve``'s models: ``xx``, ``heisenberg``, ``xxz``, ``tfim``,
``hubbard``, with the couplings of ``dmrg``), cools the purification of the infinite-temperature
state in imaginary time (:func:`tensor4all.thermal_state`: ``ln Z`` from the norms, ``<H>`` and the
local operators measured), and, for the specific heat ``C = -beta^2 dE/d beta`` and the
susceptibility ``chi_z = d<M>/dh``, differentiates the cooling with tidu
(:func:`tensor4all.thermodynamics`: forward mode, no finite differences). It prints one table row per output beta (the
temperature, ``ln Z``, the quantities of ``--observe`` per site, the largest bond) with the error
against the exact result where one is known (:func:`tensor4all.references.thermal_reference`: free
fermions for the XX chain, the transverse-field Ising chain and the Hubbard chain at U = 0; exact
diagonalization of small chains), and writes the curves (``--json``), the final purification
(``--save``) and a figure of the curves (``--plot``).

This module holds the options and their checks (:func:`add_parser`, :func:`check`); the run, its
table, JSON record and figure are :mod:`tensor4all.cli.thermal_run`.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Sequence

from .checks import SAVE_EXTENSIONS
from .common import CONSERVE, add_output_options, check_outputs, command_threads, integer_arg, real_arg
from .models import ALL_MODEL_OPTIONS, MODEL_OPTIONS, MODELS, OPERATORS, DmrgOptions, add_couplings, charge_of, local_of
from .thermal_run import QUANTITIES, SCHEMA, ThermalRun
from ..thermal.purification import beta_grid
from ..thermal.purified import infinite_temperature_sites
from ..tools.checks import check_steps
from ..tools.errors import InvalidOptionError, Tensor4allError

__all__ = ["add_parser", "check", "SCHEMA", "QUANTITIES", "METHODS", "DEFAULT_OBSERVE"]

METHODS = ("tebd", "tdvp")
DEFAULT_OBSERVE = ["E", "C"]
#: the table's rows by default: about this many output betas
ROWS = 20

_EXAMPLES = """\
examples:
  tensor4all thermal                                            XX chain, L=16, E and C to beta=4 (exact reference)
  tensor4all thermal --model heisenberg --L 32 --beta-max 10 --dbeta 0.05 --observe E,C,chi_z --plot c.png
  tensor4all thermal --model tfim --L 24 --g 1 --beta-max 4 --cutoff 1e-14     free fermions (Jordan-Wigner)
  tensor4all thermal --model hubbard --L 6 --U 4 --mu 2 --observe E,C,Ntot      grand canonical, half filling
  tensor4all thermal --model heisenberg --L 16 --sz 0 --observe E,S,F           the canonical ensemble Sz = 0
  tensor4all thermal --json th.json --save rho.npz --plot th.png
"""


def _observe(text: str) -> list[str]:
    """``--observe``: a comma-separated list (the names are checked per model by :func:`check`)."""
    names = [t.strip() for t in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"invalid list {text!r}; give names separated by commas, each once, such as E,C,chi_z"
        )
    return names


def add_parser(commands: Any, dmrg_parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``thermal`` subcommand; the couplings, ``--L``, ``--sz``, ``--N`` and ``--threads`` are
    copies of the ``dmrg`` subparser's options (as ``evolve`` and ``spectrum`` copy them)."""
    p = commands.add_parser(
        "thermal",
        help="thermodynamics of a chain by purification: ln Z, E, C and chi_z (by derivatives of ln Z) from "
        "beta = 0 to --beta-max (table per beta, JSON, plot, saved state)",
        description=(
            "The thermodynamics of an open spin or Hubbard chain from beta = 0 to --beta-max. The\n"
            "purification of the infinite-temperature state (each site paired with an ancilla) is cooled\n"
            "in imaginary time by TEBD or TDVP in steps --dbeta (tensor4all.thermal_state): ln Z from the\n"
            "norms of the steps, the energy E = <H> and local operators measured. The specific heat\n"
            "C = -beta^2 dE/d beta and the susceptibility chi_z = d<M>/dh (M = sum Sz, tfim: sum Z, in the\n"
            "field H - h M) are derivatives taken by tidu through the cooling itself\n"
            "(tensor4all.thermodynamics: forward mode through TEBD, one run for the whole curve).\n"
            "Prints one row per output beta: beta, T = 1/beta, ln Z / L, the quantities of --observe per\n"
            "site, the largest bond, and the relative error against the exact result where one is known\n"
            "(free fermions: xx, tfim, hubbard at U = 0; exact diagonalization of chains of <= 1024\n"
            "states). Grand canonical by default; --sz or --N: the canonical ensemble of that sector."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dmrg = DmrgOptions(dmrg_parser)
    copied = dmrg.copy

    m = p.add_argument_group("model")
    m.add_argument(
        "--model",
        choices=MODELS,
        default="xx",
        help="xx: H = sum J (SxSx + SySy) - h sum Sz; heisenberg/xxz: H = sum J (SxSx + SySy) + Jz SzSz - "
        "h sum Sz (spin 1/2); tfim: H = -J sum ZZ - g sum X (Pauli matrices); hubbard: H = -t sum_s "
        "(c+_{i s} c_{i+1 s} + h.c.) + U sum n_up n_dn - mu sum n. Default: %(default)s",
    )
    add_couplings(
        m,
        dmrg,
        L=16,
        J_help="exchange coupling (xx/heisenberg/xxz: the XX+YY part; tfim: the ZZ coupling) (default: 1.0)",
        t_help="hopping of hubbard, -t sum (c+ c + h.c.) (default: 1)",
    )
    e = p.add_argument_group("ensemble (default: grand canonical, every state of the chain)")
    copied(
        e,
        "sz",
        help="the canonical ensemble of the sector of total Sz (xx/heisenberg/xxz, hubbard) (default: none, every Sz)",
    )
    copied(e, "N", help="the canonical ensemble of the sector of N particles (hubbard) (default: none, every N)")
    s = p.add_argument_group("temperature")
    s.add_argument(
        "--beta-max",
        dest="beta_max",
        type=real_arg(0.0, strict=True),
        default=4.0,
        metavar="BETA",
        help="the largest inverse temperature, a whole number of --dbeta steps (default: %(default)g)",
    )
    s.add_argument(
        "--dbeta",
        type=real_arg(0.0, strict=True),
        default=0.1,
        help="the step in beta: each step applies exp(-dbeta H / 2) to the purification (default: %(default)g)",
    )
    s.add_argument(
        "--every",
        type=lambda text: None if text == "auto" else integer_arg(1, "a positive integer")(text),
        default=None,
        metavar="N",
        help=f"a table row every N steps, and at --beta-max (default: auto: about {ROWS} rows)",
    )
    a = p.add_argument_group("algorithm")
    a.add_argument(
        "--method",
        choices=METHODS,
        default="tebd",
        help="tebd: Trotter gates of order --order; tdvp: two-site TDVP (ln Z, E and local operators only: C "
        "and chi_z are derivatives through TEBD). Default: %(default)s",
    )
    a.add_argument(
        "--order", type=int, choices=(2, 4), default=None, help="Trotter order of --method tebd (default: 4)"
    )
    a.add_argument(
        "--max-bond",
        dest="max_bond",
        type=integer_arg(1, "a positive integer"),
        default=128,
        help="largest bond dimension of the purification (default: %(default)s)",
    )
    a.add_argument(
        "--cutoff",
        type=dmrg.type("tol"),
        default=1e-12,
        help="truncation cutoff: the largest discarded weight per bond; the error of ln Z grows as about "
        "sqrt(cutoff) per gate, so 1e-14 for 1e-6 relative at low temperature (default: %(default)g)",
    )
    a.add_argument(
        "--conserve",
        choices=CONSERVE,
        default="auto",
        help="the charge the purification conserves (q_physical - q_ancilla): auto (default: Sz for the spin "
        "chains, the parity prod X for tfim, N and Sz for hubbard), the model's charge, or none (dense). "
        "The derivative run is dense for C alone and conserves the charge with chi_z (tfim: dense)",
    )
    copied(
        a,
        "threads",
        help=dmrg.actions["threads"]
        .help.replace(
            "the sweeps, the exact reference and the analysis",
            "the cooling, the derivative runs and the exact reference",
        )
        .replace("largest chi", "--max-bond"),
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--observe",
        type=_observe,
        default=None,
        metavar="Q[,Q...]",
        help="what the table shows per site: E (energy <H>), C (specific heat -beta^2 dE/d beta, by "
        "derivatives), chi_z (susceptibility d<M>/dh to a field h along z, by derivatives), S (entropy ln Z + beta E), F (free energy "
        "-ln Z / beta), and local operators (site averages): Sx, Sy, Sz (tfim: X, Y, Z; hubbard: Ntot, Sz, "
        f"Nup, Ndn, Nupdn) (default: {','.join(DEFAULT_OBSERVE)})",
    )
    add_output_options(
        o,
        json_what="parameters, betas, ln Z, every quantity of --observe (whole systems), the local operators "
        "at every site, the exact reference, the history per step, timing",
        plot_what="the quantities of --observe per site against the temperature, with the exact curves",
        rows_what="table row per output beta",
    )
    p.set_defaults(func=_run)
    return p


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    sub = parser.commands["thermal"]  # type: ignore[attr-defined]
    check(sub, args)
    with command_threads(args):  # the cooling, the derivative runs and the exact reference
        return ThermalRun(sub, args, list(sys.argv[1:] if argv is None else argv)).run()


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every check that needs more than one option (exit 2 through ``parser.error``, before anything runs)."""
    used = MODEL_OPTIONS[args.model]
    for name in ALL_MODEL_OPTIONS:
        if getattr(args, name) is not None and name not in used:
            parser.error(
                f"argument --{name}: not a parameter of --model {args.model} (it takes "
                f"{', '.join('--' + u for u in (['J'] if args.model != 'hubbard' else []) + list(used))})"
            )
    try:  # too many steps (a subnormal --dbeta too): beta_grid's own check, worded with the flags
        check_steps(args.beta_max, args.dbeta, "thermal", "--beta-max", "--dbeta")
    except InvalidOptionError as e:
        parser.error("argument --dbeta: " + str(e).replace("thermal: ", ""))
    try:
        _, _, steps = beta_grid(args.beta_max, args.dbeta, "thermal")
    except InvalidOptionError:
        ratio = args.beta_max / args.dbeta
        parser.error(
            f"argument --dbeta: {args.dbeta:g} does not divide --beta-max {args.beta_max:g} (--beta-max / --dbeta = "
            f"{ratio:.6g}); give a --beta-max that is a whole number of steps, or a --dbeta that divides it"
        )
    args.steps = steps
    if args.every is None:
        args.every = max(1, math.ceil(steps / ROWS))
    observe = DEFAULT_OBSERVE if args.observe is None else args.observe
    valid = list(QUANTITIES) + list(OPERATORS[args.model])
    bad = [q for q in observe if q not in valid]
    if bad:
        parser.error(
            f"argument --observe: unknown quantity {bad[0]!r} of --model {args.model}; valid: {', '.join(valid)}"
        )
    args.observe = list(observe)
    derivatives = [q for q in observe if q in ("C", "chi_z")]
    if derivatives and args.method != "tebd":
        parser.error(
            f"argument --observe: {derivatives[0]} is a derivative of ln Z through TEBD; give --method tebd, or "
            "leave C and chi_z out of --observe"
        )
    if args.order is not None and args.method != "tebd":
        parser.error("argument --order: the Trotter order of --method tebd (give --method tebd)")
    charge = charge_of(args.model)
    if (
        args.conserve not in ("auto", "none")
        and args.conserve != charge
        and not (args.model == "hubbard" and args.conserve == "N")
    ):
        parser.error(
            f"argument --conserve: --model {args.model} conserves {charge}; give --conserve {charge}, auto or none"
        )
    if args.sz is not None and args.model == "tfim":
        parser.error("argument --sz: --model tfim does not conserve Sz (its sectors are those of the parity)")
    if args.N is not None and args.model != "hubbard":
        parser.error(f"argument --N: a particle number of --model hubbard; --model {args.model} has none")
    if args.sz is not None and args.model == "hubbard" and args.N is None:
        parser.error("argument --sz: the sectors of hubbard are those of N and Sz together, or of N; give --N too")
    if args.sz is not None or args.N is not None:
        sector = args.sz if args.N is None else {"N": args.N, **({} if args.sz is None else {"Sz": args.sz})}
        try:  # the canonical start: a sector with no states is an error before anything runs
            infinite_temperature_sites(local_of(args.model), args.L, None, sector, "thermal")
        except Tensor4allError as e:
            parser.error(f"argument --{'sz' if args.N is None else 'N'}: " + str(e).replace("thermal: ", ""))
    if "chi_z" in observe and args.sz is not None:
        parser.error(
            "argument --observe: chi_z is 0 in a sector of fixed Sz (the field commutes with H there); drop --sz "
            "to observe chi_z"
        )
    check_outputs(parser.error, args, SAVE_EXTENSIONS, "the purification at --beta-max, tensor4all.MPS.load")
