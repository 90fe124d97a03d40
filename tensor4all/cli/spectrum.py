"""``tensor4all spectrum``: the dynamical structure factor or spectral function ``S(q, omega)`` of a
chain in its ground state.

The command builds the Hamiltonian (``evolve``'s models: ``heisenberg``, ``xxz``, ``xx``, ``tfim``,
``hubbard``, with the couplings of ``dmrg``), finds the ground state by DMRG (in the sector the
``dmrg`` command would choose; hubbard at half filling), and computes ``G(x, t) = <0| A_x(t) B_c(0)
|0>`` with ``B = --op`` at the centre and ``A = B^dagger`` (:func:`tensor4all.dynamical_correlation`,
TEBD or TDVP), then ``S(q, omega)`` (:func:`tensor4all.spectral_function`: the window, linear
prediction with ``--extend``); or ``S`` directly by Chebyshev moments (``--method chebyshev``,
:func:`tensor4all.spectral_function_chebyshev`). It prints one table row per momentum (the peak,
the weight over the frequency grid and the static structure factor it should equal), and writes
the values (``--json``, ``--save``) and a heat map (``--plot``).

This module holds the options and their checks (:func:`add_parser`, :func:`check`); the run, its
table, JSON record, saved arrays and figure are :mod:`tensor4all.cli.spectrum_run`.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Sequence

import numpy as np

from .common import CONSERVE, check_outputs, command_threads, integer_arg, real_arg
from .models import ALL_MODEL_OPTIONS, MODEL_OPTIONS, MODELS, DmrgOptions, add_couplings, charge_of, local_of
from .spectrum_run import SCHEMA, SpectrumRun
from ..sites.local_spaces import local_space
from ..spectra.chebyshev import check_moments
from ..spectra.correlation import check_window_time
from ..spectra.transform import MAX_EXTEND, WINDOWS, window_resolution
from ..tools.errors import InvalidOptionError, Tensor4allError

__all__ = ["add_parser", "check", "SCHEMA", "METHODS", "OPERATORS", "DEFAULT_OP", "adjoint_name"]

METHODS = ("tdvp", "tebd", "chebyshev")
#: the operators --op takes per model (the model's own basis), and the default
OPERATORS = {
    "xx": ("Sz", "Sx", "Sy", "S+", "S-"),
    "heisenberg": ("Sz", "Sx", "Sy", "S+", "S-"),
    "xxz": ("Sz", "Sx", "Sy", "S+", "S-"),
    "tfim": ("Z", "X", "Y"),
    "hubbard": ("Sz", "Ntot", "Nup", "Ndn", "S+", "S-", "Cdagup", "Cup", "Cdagdn", "Cdn"),
}
DEFAULT_OP = {"xx": "Sz", "heisenberg": "Sz", "xxz": "Sz", "tfim": "Z", "hubbard": "Cdagup"}
#: defaults of the time window and the Chebyshev moments
T_FINAL, DT, MOMENTS = 8.0, 0.1, 200

_EXAMPLES = """\
examples:
  tensor4all spectrum                                       Heisenberg chain, L=24, S^zz(q, omega), TEBD to t=8
  tensor4all spectrum --model xx --L 20 --method tdvp --t-final 10 --plot xx.png
  tensor4all spectrum --op S+ --extend 2 --window hann      S^-+(q, omega), linear prediction to t=16
  tensor4all spectrum --model hubbard --L 12 --U 4 --op Cdagup --t-final 6    electron addition spectrum
  tensor4all spectrum --L 12 --method chebyshev --moments 300              the Chebyshev cross-check
  tensor4all spectrum --json s.json --save s.npz --plot s.png
"""


def adjoint_name(model: str, op: str) -> str | None:
    """The operator of ``model``'s local space equal to ``op^dagger`` (``S+`` -> ``S-``, ``Cdagup`` ->
    ``Cup``, ``Sz`` -> ``Sz``), or None."""
    space = local_space(local_of(model))
    m = space.matrix(op).conj().T
    for name in space.operator_names():
        other = space.matrix(name)
        if other.shape == m.shape and np.allclose(other, m) and (name in space.fermionic) == (op in space.fermionic):
            return op if np.allclose(space.matrix(op), m) else name
    return None


def add_parser(commands: Any, dmrg_parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``spectrum`` subcommand; the couplings, ``--L``, ``--seed`` and ``--threads`` are copies
    of the ``dmrg`` subparser's options (as ``evolve`` copies them)."""
    p = commands.add_parser(
        "spectrum",
        help="S(q, omega) of a chain's ground state: time evolution + Fourier transform, or Chebyshev "
        "(table per momentum, JSON, saved arrays, heat map)",
        description=(
            "The dynamical structure factor or spectral function S(q, omega) of an open chain in its\n"
            "DMRG ground state. G(x, t) = <0| A_x(t) B_c(0) |0> (B = --op at the centre c = L/2, A = its\n"
            "adjoint) by one real-time evolution of B_c|0> (TEBD or TDVP), then\n"
            "S(q, omega) = Re sum_x e^{-iq(x-c)} (1/pi) Re int_0^t_final dt e^{i omega t} W(t) G(x, t)\n"
            "(tensor4all.dynamical_correlation, tensor4all.spectral_function); or S by Chebyshev moments\n"
            "with the Jackson kernel (--method chebyshev, tensor4all.spectral_function_chebyshev).\n"
            "Prints one row per momentum q = 2 pi k / L: the frequency and height of the peak, the weight\n"
            "int S d omega over the grid and the static structure factor it should equal (the sum rule)."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dmrg = DmrgOptions(dmrg_parser)
    copied = dmrg.copy

    m = p.add_argument_group("model (the ground state: DMRG in the sector the dmrg command chooses)")
    m.add_argument(
        "--model",
        choices=MODELS,
        default="heisenberg",
        help="heisenberg/xxz: H = sum J (SxSx + SySy) + Jz SzSz - h sum Sz; xx: Jz = 0; tfim: H = -J sum ZZ - "
        "g sum X; hubbard: H = -t sum_s (c+_{i s} c_{i+1 s} + h.c.) + U sum n_up n_dn - mu sum n, at half "
        "filling. Default: %(default)s",
    )
    add_couplings(
        m,
        dmrg,
        L=24,
        J_help="exchange coupling (xx/heisenberg/xxz: the XX+YY part; tfim: the ZZ coupling) (default: 1.0)",
        t_help="hopping of hubbard, -t sum (c+ c + h.c.) (default: 1)",
    )
    c = p.add_argument_group("correlation")
    c.add_argument(
        "--op",
        default=None,
        metavar="OP",
        help="the operator B applied at the centre; A = its adjoint (Sz -> Sz, S+ -> S-, Cdagup -> Cup: "
        "fermionic operators with their Jordan-Wigner strings). Spin chains: Sz, Sx, Sy, S+, S-; tfim: "
        "Z, X, Y; hubbard: Sz, Ntot, Nup, Ndn, S+, S-, Cdagup, Cup, Cdagdn, Cdn (default: Sz; tfim: Z; "
        "hubbard: Cdagup, the electron addition spectrum)",
    )
    c.add_argument(
        "--t-final",
        dest="t_final",
        type=real_arg(0.0, strict=True),
        default=T_FINAL,
        metavar="T",
        help=f"the last time of G(x, t), a multiple of --dt: the half-length of the window (default: {T_FINAL:g})",
    )
    c.add_argument("--dt", type=real_arg(0.0, strict=True), default=DT, help="time step (default: %(default)g)")
    c.add_argument(
        "--method",
        choices=METHODS,
        default="tebd",
        help="tebd: Trotter gates of order --order (4: errors of about 1e-6 in G at dt = 0.1 here, several "
        "times faster than TDVP on these chains); tdvp: two-site TDVP; chebyshev: Chebyshev moments of S "
        "(no time evolution; --moments). Default: %(default)s",
    )
    c.add_argument(
        "--order", type=int, choices=(2, 4), default=None, help="Trotter order of --method tebd (default: 4)"
    )
    c.add_argument(
        "--moments",
        type=integer_arg(2, "the number of Chebyshev moments is an integer >= 2"),
        default=None,
        metavar="N",
        help=f"Chebyshev moments of --method chebyshev (default: {MOMENTS})",
    )
    f = p.add_argument_group("transform")
    f.add_argument(
        "--window",
        choices=WINDOWS,
        default="gaussian",
        help="the time window: gaussian (exp(-t^2 / 2 sigma^2), sigma = t_final / 3; resolution 7.10 / t_final), "
        "hann (cos^2, 2 pi / t_final, side lobes), none (3.79 / t_final, strong ringing). Default: %(default)s",
    )
    f.add_argument(
        "--extend",
        type=real_arg(1.0, strict=False),
        default=None,
        metavar="F",
        help="linear prediction of G(x, t) up to F times --t-final before the transform (default: none)",
    )
    f.add_argument(
        "--omega-max",
        dest="omega_max",
        type=real_arg(0.0, strict=True),
        default=None,
        metavar="W",
        help="the largest frequency of the grid 0..W (default: auto, up to where S falls below 1e-3 of its "
        "maximum, at most the Nyquist frequency pi / --dt)",
    )
    f.add_argument(
        "--n-omega",
        dest="n_omega",
        type=integer_arg(2, "the number of frequencies is an integer >= 2"),
        default=None,
        metavar="N",
        help="frequencies of the grid (default: auto, a quarter of the resolution apart)",
    )
    a = p.add_argument_group("algorithm")
    a.add_argument(
        "--max-bond",
        dest="max_bond",
        type=integer_arg(1, "a positive integer"),
        default=128,
        help="largest bond dimension of the ground state and the evolution (default: %(default)s)",
    )
    a.add_argument(
        "--cutoff",
        type=dmrg.type("tol"),
        default=1e-10,
        help="truncation cutoff: the largest discarded weight per bond (default: %(default)g)",
    )
    a.add_argument(
        "--conserve",
        choices=CONSERVE,
        default="auto",
        help="run in one sector of a conserved charge: auto (default: Sz for the spin chains, the parity prod X "
        "for tfim, N and Sz for hubbard), the model's charge, or none (dense)",
    )
    copied(a, "seed", help="seed of the random initial state of the ground-state DMRG (default: 0)")
    copied(
        a,
        "threads",
        help=dmrg.actions["threads"]
        .help.replace(
            "the sweeps, the exact reference and the analysis", "the ground state, the evolution and the transforms"
        )
        .replace("largest chi", "--max-bond"),
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        help="write the result as JSON: parameters, q, omega, S(q, omega), G(x, t) ([re, im] pairs), the ground state, timing; '-' writes it to standard output (and the report to stderr) (default: none)",
    )
    o.add_argument(
        "--plot",
        metavar="PATH",
        default=None,
        help="write a heat map of S(q, omega) (.png, .pdf or .svg; matplotlib, the 'plot' extra) (default: none)",
    )
    o.add_argument(
        "--save",
        metavar="PATH",
        default=None,
        help="write q, omega, S and (time evolution) times, G as a NumPy .npz file (default: none)",
    )
    o.add_argument(
        "--quiet", "-q", action="store_true", help="no progress bar and no table rows, only the summary (default: off)"
    )
    p.set_defaults(state="ground", imaginary=False, **{f"quench_{n}": None for n in ("J",) + ALL_MODEL_OPTIONS})

    def run(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None) -> int:
        check(p, args)
        with command_threads(args):  # the ground state, the evolution or moments, the transforms
            return SpectrumRun(p, args, list(sys.argv[1:] if argv is None else argv)).run()

    p.set_defaults(func=run)
    return p


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every check that needs more than one option (exit 2 through ``parser.error``, before anything runs)."""
    used = MODEL_OPTIONS[args.model]
    for name in ALL_MODEL_OPTIONS:
        if getattr(args, name) is not None and name not in used:
            parser.error(
                f"argument --{name}: not a parameter of --model {args.model} (it takes {', '.join('--' + u for u in used)})"
            )
    op = DEFAULT_OP[args.model] if args.op is None else args.op
    if op not in OPERATORS[args.model]:
        parser.error(
            f"argument --op: unknown operator {op!r} of --model {args.model}; valid operators: {', '.join(OPERATORS[args.model])}"
        )
    args.op = op
    args.op_adjoint = adjoint_name(args.model, op)
    if (
        args.conserve not in ("auto", "none")
        and args.conserve != charge_of(args.model)
        and not (args.model == "hubbard" and args.conserve == "N")
    ):
        parser.error(
            f"argument --conserve: --model {args.model} conserves {charge_of(args.model)}; give --conserve {charge_of(args.model)}, auto or none"
        )
    if args.order is not None and args.method != "tebd":
        parser.error("argument --order: the Trotter order of --method tebd (give --method tebd)")
    if args.moments is not None and args.method != "chebyshev":
        parser.error(
            "argument --moments: the number of Chebyshev moments of --method chebyshev (give --method chebyshev)"
        )
    if args.extend is not None and args.method == "chebyshev":
        parser.error(
            "argument --extend: linear prediction extends G(x, t) of a time evolution; --method chebyshev has none"
        )
    if args.extend is not None and args.extend > MAX_EXTEND:
        parser.error(
            f"argument --extend: {args.extend:g} predicts G to {args.extend:g} times --t-final; linear prediction is "
            f"reliable for a few times it (at most {MAX_EXTEND:g} accepted, 2 to 4 typical)"
        )
    if args.method == "chebyshev":  # the moments' arrays, before the ground state (as spectrum_run passes them)
        n_omega = (args.n_omega or 400) if args.omega_max is not None else 400
        try:
            check_moments(MOMENTS if args.moments is None else args.moments, args.L, n_omega, "spectrum")
        except Tensor4allError as e:
            parser.error("argument --moments: " + str(e).replace("spectrum: ", ""))
    if args.method == "chebyshev":  # the time evolution's options, which a Chebyshev expansion has not
        for opt, value, default in (
            ("--window", args.window, "gaussian"),
            ("--dt", args.dt, DT),
            ("--t-final", args.t_final, T_FINAL),
        ):
            if value != default:
                parser.error(
                    f"argument {opt}: an option of the time evolution and its Fourier transform (--method tdvp "
                    "or tebd); --method chebyshev has none (its resolution is set by --moments)"
                )
    try:
        check_window_time(args.t_final, args.dt, "spectrum")
    except InvalidOptionError as e:
        parser.error(
            "argument --t-final: " + str(e).replace("spectrum: ", "").replace("give a t_final", "give a --t-final")
        )
    if args.method != "chebyshev":
        nyquist = math.pi / args.dt
        resolution = window_resolution(args.window, args.t_final * (args.extend or 1.0))
        if args.omega_max is not None and args.omega_max > nyquist:
            parser.error(
                f"argument --omega-max: {args.omega_max:g} is beyond the Nyquist frequency pi / dt = {nyquist:.4g} of "
                "G sampled every --dt; give a smaller --omega-max or a smaller --dt"
            )
        if args.n_omega is not None and args.omega_max is not None:
            step = args.omega_max / (args.n_omega - 1)
            if step < resolution / 10:
                parser.error(
                    f"argument --n-omega: {args.n_omega} frequencies up to {args.omega_max:g} are {step:.3g} apart, finer "
                    f"than a tenth of the window's resolution {resolution:.3g}; give at most "
                    f"{int(args.omega_max / (resolution / 10)) + 1} frequencies, a longer --t-final or --extend"
                )
    check_outputs(parser.error, args, (".npz",), "NumPy arrays q, omega, S, times, G")
