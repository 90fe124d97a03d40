"""``tensor4all evolve``: real- or imaginary-time evolution of a chain by TDVP or TEBD.

The command builds the Hamiltonian (``xx``, ``heisenberg``, ``xxz``, ``tfim``: the ``dmrg``
command's models and couplings, plus the XX chain; ``hubbard``: the Fermi-Hubbard chain) and
an initial state (``--state``: a product state, or the DMRG ground state of the chain before a
quench), evolves it with :func:`tensor4all.tdvp` or :func:`tensor4all.tebd`, and prints one
table row per output time (energy, norm drift, largest bond, entanglement entropy at the
middle bond, and the observables: the site average and the staggered average of each local
operator). Where the evolution is exactly solvable (free fermions from a product of basis
states, real time: the XX chain, the Hubbard chain at U = 0) it also prints the exact
staggered ``<Sz_i>`` and the largest error of ``<Sz_i>`` (hubbard: and of ``<Ntot_i>``) over
the sites.
``--json``, ``--plot`` and ``--save`` write the full record, a figure and the final MPS.

States are written in the model's own basis: up/down are ``Sz = +-1/2`` (tfim: ``Z = +-1``,
the model being ``-J sum Z Z - g sum X``) and ``+``/``-`` the eigenstates of ``Sx`` (tfim:
``X``); hubbard sites are ``0`` (empty), ``u``, ``d``, ``2`` (both). A run conserves a charge
when the model and the state allow it (``--conserve auto``): ``Sz`` for the spin models from a
product of up/down spins, ``N`` for hubbard, the parity ``prod X`` of the tfim from a product
of ``+``/``-`` (the run then writes the model as ``-J sum X X - g sum Z``, TeNPy's
``TFIChain``, and maps states and observables through the Hadamard rotation, so everything
printed is in the model's own basis).

The model table (couplings, letters, charges, Hamiltonians, exact references) lives in
:mod:`tensor4all.cli.models`. This module holds the command's options and their types
(:func:`add_parser`); its checks are :mod:`tensor4all.cli.evolve_checks`, the states
:mod:`tensor4all.cli.evolve_states`, the run, its table and its JSON record
(:class:`EvolveRun`) :mod:`tensor4all.cli.evolve_run`, the figure
:mod:`tensor4all.cli.evolve_plot`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

from .common import CONSERVE, add_output_options, command_threads, integer_arg, real_arg
from .lattice import StoreGiven
from .models import ALL_MODEL_OPTIONS, LETTERS, MODELS, DmrgOptions, add_couplings
from .evolve_checks import ROWS, T_FINAL, check
from .evolve_plot import write_evolve_plot
from .evolve_run import SCHEMA, EvolveRun
from .evolve_states import build_states

__all__ = ["add_parser", "check", "build_states", "EvolveRun", "write_evolve_plot", "SCHEMA", "MODELS", "METHODS"]

METHODS = ("tdvp", "tebd")
NAMED_STATES = ("neel", "domain-wall", "up", "ground")

_EXAMPLES = """\
examples:
  tensor4all evolve                                      XX chain, L=16, Neel state, t=10, TDVP (exact reference)
  tensor4all evolve --model xx --L 10 --t-final 1 --dt 0.05 --method tebd --order 4
  tensor4all evolve --model heisenberg --state domain-wall --L 32 --t-final 8 --max-bond 128
  tensor4all evolve --model tfim --g 0.5 --state ground --quench-g 1.5 --observe Z,X --t-final 5
  tensor4all evolve --model tfim --state product:++++++++ --L 8 --g 2 --imaginary --t-final 5
  tensor4all evolve --model hubbard --L 8 --U 0 --t-final 2                Hubbard, free fermions (exact reference)
  tensor4all evolve --model hubbard --L 8 --state product:22220000 --U 4 --t-final 3 --method tebd --order 4
  tensor4all evolve --model hubbard --L 8 --state ground --U 2 --quench-U 8 --t-final 2
  tensor4all evolve --json run.json --plot run.png --save psi.npz
"""


# ---- argument types ------------------------------------------------------------------------
_positive_float = real_arg(0.0, strict=True)
_positive_int = integer_arg(1, "a positive integer")
_nonnegative_time = real_arg(0.0, strict=False)


_STATE_HINT = (
    "valid states: neel, domain-wall, up, ground, product:SPEC (SPEC: one letter per site, u or 0 "
    "for up, d or 1 for down, + and - for the eigenstates of Sx (tfim: X); hubbard: 0 empty, u up, "
    "d down, 2 both; e.g. product:uudd, product:0,1,1,0, product:++-- or product:2u0d)"
)


def _state(text: str) -> str:
    """``--state``: a named state or ``product:SPEC`` (one letter per site, commas dropped; the
    letters are read for the model by :func:`check`)."""
    if text in NAMED_STATES:
        return text
    if text.startswith("product:"):
        spec = text[len("product:") :]
        tokens = [t.strip() for t in spec.split(",")] if "," in spec else list(spec)
        if tokens and all(any(t in table for table in LETTERS.values()) for t in tokens):
            return "product:" + "".join(tokens)
        raise argparse.ArgumentTypeError(f"invalid product state {text!r}; {_STATE_HINT}")
    raise argparse.ArgumentTypeError(f"invalid state {text!r}; {_STATE_HINT}")


def _every(text: str) -> int | None:
    """``--every``: ``auto`` (None) or a positive integer."""
    return None if text == "auto" else _positive_int(text)


def _observe(text: str) -> list[str] | None:
    """``--observe``: ``auto`` (None), ``none`` (no operator) or a comma-separated list."""
    if text == "auto":
        return None
    if text == "none":
        return []
    names = [t.strip() for t in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"invalid list {text!r}; give operator names separated by commas, "
            "each once, such as Sz,Sx (or auto, or none)"
        )
    return names


# ---- the parser ------------------------------------------------------------------------------
def add_parser(commands: Any, dmrg_parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``evolve`` subcommand to ``commands``. The couplings, ``--seed``, ``--threads``
    and ``--quiet`` are copies of the ``dmrg`` subparser's options (``dmrg_parser``), so their
    checks never drift apart; the dmrg command's checks (:mod:`tensor4all.cli.checks`) apply to
    the output files, its symmetry choice to a ground state."""
    p = commands.add_parser(
        "evolve",
        help="time evolution of a spin or Hubbard chain by TDVP or TEBD (table per output time, JSON, plot, saved MPS)",
        description=(
            "Real- or imaginary-time evolution of an open spin or Hubbard chain from a product\n"
            "state or from the ground state before a quench, by TDVP (tensor4all.tdvp) or TEBD\n"
            "(tensor4all.tebd). Prints a progress bar over the steps (on stderr, when it is a\n"
            "terminal) and one table row per output time: time, energy <H>, |norm - 1|, the\n"
            "largest bond dimension, the entanglement entropy S at the middle bond, and for each\n"
            "observed operator its site average and staggered average (1/L) sum (-1)^i <O_i>.\n"
            "The XX chain from a product of up/down spins is free fermions: the table then shows\n"
            "the exact staggered magnetization and the largest error of <Sz_i> over the sites;\n"
            "so is the Hubbard chain at U = 0 from any product state (exact <Sz_i> and <Ntot_i>).\n"
            "The Hubbard chain conserves N and Sz together (--conserve N,Sz, the default), or N."
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
        help="xx: H = sum J (SxSx + SySy) - h sum Sz; heisenberg/xxz: H = sum J (SxSx + SySy) + "
        "Jz SzSz - h sum Sz (spin 1/2); tfim: H = -J sum ZZ - g sum X (Pauli matrices); hubbard: "
        "H = -t sum_s (c+_{i s} c_{i+1 s} + h.c.) + U sum n_up n_dn - mu sum n (the hopping --t, as in "
        "dmrg; tensor4all.models.hubbard). Default: %(default)s",
    )
    add_couplings(
        m,
        dmrg,
        L=16,
        J_help="exchange coupling (xx/heisenberg/xxz: the XX+YY part; tfim: the ZZ coupling; for hubbard "
        "the deprecated spelling of --t) (default: 1.0)",
        t_help="hopping of hubbard, -t sum (c+ c + h.c.), as in dmrg (default: 1)",
    )
    q = p.add_argument_group(
        "quench (with --state ground: the ground state of the couplings above, then the evolution with these)"
    )
    for name in ("J",) + ALL_MODEL_OPTIONS:
        q.add_argument(
            f"--quench-{name}",
            dest=f"quench_{name}",
            type=dmrg.type("J"),
            default=None,
            metavar=name.upper(),
            help=f"--{name} of the Hamiltonian that evolves the ground state (default: --{name}, no change)",
        )
    s = p.add_argument_group("state and time")
    s.add_argument(
        "--state",
        type=_state,
        default="neel",
        metavar="STATE",
        help="initial state: neel (up, down, up, ...), domain-wall (sites 0..L/2-1 up, the rest "
        "down), up (all up), product:SPEC (one letter per site: u or 0 up, d or 1 down, + and - "
        "the eigenstates of Sx, tfim: X; hubbard: 0 empty, u up, d down, 2 both; e.g. product:uudd, "
        "product:0,1,1,0 or product:2u0d), or ground (the DMRG ground state of the chain, hubbard: "
        "at half filling N = L, evolved with the --quench-* couplings); up/down are Sz = +-1/2 "
        "(tfim: Z = +-1; hubbard: one electron of that spin) (default: %(default)s)",
    )
    s.add_argument(
        "--t-final",
        dest="t_final",
        type=_nonnegative_time,
        default=T_FINAL,
        action=StoreGiven,
        metavar="T",
        help=f"final time, a multiple of --dt (with --imaginary: the imaginary time tau of "
        f"exp(-tau H)); Python: tdvp/tebd's t_final (default: {T_FINAL:g}; before this release "
        "the final time was --t, now the hopping as in dmrg)",
    )
    s.add_argument("--dt", type=_positive_float, default=0.05, help="time step (default: %(default)g)")
    s.add_argument(
        "--every",
        type=_every,
        default=None,
        metavar="N",
        help="a table row and a measurement every N steps, and at the final time (default: auto: "
        f"about {ROWS} rows, N = ceil(steps / {ROWS}))",
    )
    s.add_argument(
        "--imaginary",
        action="store_true",
        help="imaginary-time evolution exp(-tau H), the state normalized after each step "
        "(default: off, real time exp(-i t H))",
    )
    a = p.add_argument_group("algorithm")
    a.add_argument(
        "--method",
        choices=METHODS,
        default="tdvp",
        help="tdvp: time-dependent variational principle (Krylov exponentials on the sweep); "
        "tebd: Trotter gates on even and odd bonds. Default: %(default)s",
    )
    a.add_argument(
        "--order",
        type=int,
        choices=(2, 4),
        default=None,
        help="Trotter order of --method tebd: 2 (Strang) or 4 (Suzuki) (default: 2)",
    )
    a.add_argument(
        "--one-site",
        dest="one_site",
        action="store_true",
        help="one-site TDVP (the bond dimensions stay those of the initial state; cheaper per "
        "step) (default: off, two-site TDVP, bonds grow through the SVD)",
    )
    a.add_argument(
        "--max-bond",
        dest="max_bond",
        type=_positive_int,
        default=64,
        help="largest bond dimension after each truncation (default: %(default)s)",
    )
    a.add_argument(
        "--cutoff",
        type=dmrg.type("tol"),
        default=1e-10,
        help="truncation cutoff: the largest discarded weight (relative sum of squared singular "
        "values) per bond (default: %(default)g)",
    )
    a.add_argument(
        "--conserve",
        choices=CONSERVE,
        default="auto",
        help="run in one sector of a conserved charge: auto (default: Sz for xx/heisenberg/xxz from "
        "a product of u/d or the ground state, the parity prod X for tfim from a product of +/- "
        "or the ground state at g != 0, N and Sz together (N,Sz) for hubbard; else none), Sz, "
        "parity, N, N,Sz or none (dense)",
    )
    ground_seed = dmrg.actions["seed"].default  # --state ground without --seed: dmrg's default seed
    copied(
        a,
        "seed",
        default=None,
        help="seed of the random initial state of the ground-state DMRG, only with --state ground "
        f"(default: {ground_seed})",
    )
    copied(
        a,
        "threads",
        help=dmrg.actions["threads"]
        .help.replace(
            "the sweeps, the exact reference and the analysis",
            "the start, the evolution, the exact reference and the measurements",
        )
        .replace("largest chi", "--max-bond"),
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--observe",
        type=_observe,
        default=None,
        metavar="OP[,OP...]",
        help="local operators measured at every site and output time: Sx, Sy, Sz (tfim: X, Y, Z; "
        "hubbard: Ntot, Sz, Nup, Ndn, Nupdn), or none; the table shows their site average and "
        "staggered average, --json every site (default: auto: Sz; tfim: Z,X; hubbard: Ntot,Sz)",
    )
    add_output_options(
        o,
        json_what="parameters, output times, every observable at every site, the exact "
        "reference, the history per step, timing",
        plot_what="the observables and the entanglement entropy against time and of the first "
        "observable over sites and time",
        rows_what="table row per output time",
    )

    def run(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None) -> int:
        check(p, args)  # --seed with a product state: refused
        if args.state == "ground" and args.seed is None:
            args.seed = ground_seed
        with command_threads(args):  # the start, the evolution, the reference and the analysis
            return EvolveRun(p, args, list(sys.argv[1:] if argv is None else argv)).run()

    p.set_defaults(func=run)
    return p
