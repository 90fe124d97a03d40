"""The ``tensor4all`` command-line program (``python -m tensor4all`` or the ``tensor4all`` script).

Commands (argparse subcommands, as ``python -m pip``):

* ``dmrg`` -- the ground state of a spin chain (Heisenberg, XXZ, transverse-field Ising),
  of the J1-J2 model or of a fermion model (Hubbard, t-J, spinless fermions) on a chain or a
  lattice (:mod:`tensor4all.cli.lattice`) by DMRG: a progress bar per sweep (tqdm, on stderr
  when it is a terminal), one table row per sweep, the final energy, variance and error
  against a reference energy (:mod:`tensor4all.references`; fermion models and lattices: the
  exact energy of the run's sector), for fermion models the measurements users compare
  (:mod:`tensor4all.cli.measurements`), and optionally a JSON record (``--json``), a plot
  (``--plot``, matplotlib) and the final MPS (``--save``, Arrow or NumPy).
* ``scan`` -- the same runs over a grid of model parameters on Dask (:mod:`tensor4all.cli.scan`).
* ``evolve`` -- real- or imaginary-time evolution by TDVP or TEBD from a product state or a
  quenched ground state (:mod:`tensor4all.cli.evolve`).
* ``spectrum`` -- the dynamical structure factor or spectral function S(q, omega) of a chain's
  ground state, by time evolution and Fourier transform or by Chebyshev moments
  (:mod:`tensor4all.cli.spectrum`).
* ``thermal`` -- the thermodynamics of a chain from beta = 0 by purification: ln Z, the energy, and
  the specific heat and susceptibility as tidu derivatives of ln Z (:mod:`tensor4all.cli.thermal`).
* ``idmrg`` -- the ground state of an infinite chain by VUMPS or iDMRG over a schedule of bond
  dimensions: energy per site, entanglement, correlation length (:mod:`tensor4all.cli.idmrg`).

Options are never abbreviated (``--cutof`` is an error), and an unknown option is named with the
closest known one (``--cutof (did you mean --cutoff?)``). Exit codes: 0 on success; 2 for bad
arguments (argparse's message, naming the valid choices; never a traceback) and for optional dependencies that an option needs but
that are not installed; 1 when an output file cannot be written; 130 on Ctrl-C; 141 when
stdout is closed early (``| head``).
:func:`main` is the entry point; the JSON schema is documented in the README
("Run a simulation").
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from . import dmrg as _dmrg
from . import evolve as _cli_evolve
from . import idmrg as _cli_idmrg
from . import lattice as _cli_lattice
from . import scan as _cli_scan
from . import spectrum as _cli_spectrum
from . import thermal as _cli_thermal
from .common import PROG, Parser, _version

__all__ = ["main", "build_parser", "PROG"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tensor4all`` program (one subparser per command)."""
    parser = Parser(
        prog=PROG,
        description="Tensor-network simulations from the command line (tensor4all).",
        epilog="Run 'tensor4all COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", title="commands")
    p = _dmrg.add_parser(commands)
    s = _cli_scan.add_parser(commands, p)
    _cli_lattice.restrict_scan_models(s)  # scan runs the spin chains of ScanTask only
    e = _cli_evolve.add_parser(commands, p)
    sp = _cli_spectrum.add_parser(commands, p)
    th = _cli_thermal.add_parser(commands, p)
    inf = _cli_idmrg.add_parser(commands, p)
    parser.commands = {"dmrg": p, "scan": s, "evolve": e, "spectrum": sp, "thermal": th, "idmrg": inf}  # type: ignore[attr-defined]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the program with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error(
            f"a command is required; valid commands: {', '.join(parser.commands)} "  # type: ignore[attr-defined]
            f"(e.g. '{PROG} dmrg')"
        )
    try:
        return args.func(parser, args, argv)
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. '| head': stop quietly, as other command-line tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's final flush of stdout must not fail too
        return 141
