"""The checks of a ``tensor4all evolve`` command line that need more than one option (exit 2
through ``parser.error``, before anything runs), its memory estimate, and the dmrg command's
checks applied to its output files (:mod:`tensor4all.cli.checks`)."""

from __future__ import annotations

import argparse
import math
import sys

from .checks import validate
from .common import check_memory, run_memory
from .models import (
    ALL_MODEL_OPTIONS,
    DEFAULT_OBSERVE,
    MODEL_OPTIONS,
    OPERATORS,
    charge_of,
    letters_of,
    mpo_bond,
    product_letters,
    state_conserves,
)
from ..algorithms.evolution import time_grid
from ..tools.errors import InvalidOptionError, ValueRangeError

__all__ = ["ROWS", "T_FINAL", "check", "memory_estimate"]

#: table rows a run prints by default (``--every`` is chosen for about this many)
ROWS = 20
#: the default final time (--t-final)
T_FINAL = 10.0


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every check of an ``evolve`` command line that needs more than one option (exit 2 through
    ``parser.error``); the dmrg command's checks run on the output files."""
    given = getattr(args, "given_options", None) or ()
    if args.t is not None and "t_final" not in given:
        parser.error(
            "argument --t: the hopping of hubbard (as in dmrg and Python's models.hubbard(t=...)); the final "
            "time is --t-final, which this command line does not give (before this release --t was the final "
            "time: give --t-final T, and --t only for the hopping)"
        )
    if args.model == "hubbard" and "J" in given and args.t is not None:  # --t won, --J was dropped
        parser.error("argument --J: the hopping of hubbard is --t (--J is its deprecated spelling); give one of them")
    if args.model == "hubbard" and args.quench_J is not None and args.quench_t is not None:
        parser.error(
            "argument --quench-J: the quench's hopping of hubbard is --quench-t (--quench-J is its deprecated "
            "spelling); give one of them"
        )
    if args.model == "hubbard" and "J" in given and args.t is None:
        print(
            "tensor4all: warning: --J as the hopping of hubbard is deprecated, use --t (same meaning)", file=sys.stderr
        )
    if args.model == "hubbard" and args.quench_J is not None and args.quench_t is None:
        print(
            "tensor4all: warning: --quench-J as the hopping of hubbard is deprecated, use --quench-t (same meaning)",
            file=sys.stderr,
        )
    used = MODEL_OPTIONS[args.model]
    for prefix, dest in (("", ""), ("quench-", "quench_")):
        for name in ALL_MODEL_OPTIONS:
            if getattr(args, dest + name) is not None and name not in used:
                users = [mdl for mdl, opts in MODEL_OPTIONS.items() if name in opts]
                extra = (
                    " (the xx chain has Jz = 0; --model xxz takes --Jz)" if name == "Jz" and args.model == "xx" else ""
                )
                takes = ([] if args.model == "hubbard" else ["J"]) + list(used)  # hubbard's --J: deprecated
                parser.error(
                    f"argument --{prefix}{name}: not a parameter of --model {args.model}{extra} (it belongs "
                    f"to {', '.join(users)}; {args.model} takes {', '.join('--' + prefix + u for u in takes)})"
                )
    quench = [n for n in ("J",) + ALL_MODEL_OPTIONS if getattr(args, "quench_" + n) is not None]
    if quench and args.state != "ground":
        parser.error(
            f"argument --quench-{quench[0]}: a quench starts from the ground state; give --state ground "
            f"(a product state evolves with --{quench[0]} itself)"
        )
    if getattr(args, "seed", None) is not None and args.state != "ground":
        parser.error(
            f"argument --seed: seeds the random start of the ground-state DMRG (--state ground); the "
            f"product state --state {args.state} has nothing random: drop --seed or give --state ground"
        )
    if args.method == "tebd" and args.one_site:
        parser.error("argument --one-site: only with --method tdvp (TEBD applies two-site gates)")
    if args.method == "tdvp" and args.order is not None:
        parser.error("argument --order: the Trotter order of --method tebd; TDVP has none (give --method tebd)")
    if args.state.startswith("product:"):
        spec = args.state[len("product:") :]
        letters = product_letters(args.model, spec)
        if letters is None:
            bad = next(c for c in spec if product_letters(args.model, c) is None)
            valid = (
                "0 (empty), u (up), d (down), 2 (both)"
                if args.model == "hubbard"
                else "u or 0 (up), d or 1 (down), + and - (eigenstates of Sx, tfim: X)"
            )
            parser.error(
                f"argument --state: {bad!r} in {args.state!r} is not a state of a --model {args.model} "
                f"site; its letters: {valid}"
            )
        args.state = "product:" + letters
    letters = letters_of(args.state, args.L)
    if letters is not None and len(letters) != args.L:
        parser.error(f"argument --state: {args.state!r} gives {len(letters)} sites, but --L is {args.L}")
    if args.one_site and letters is not None:
        parser.error(
            "argument --one-site: one-site TDVP keeps the bond dimensions of the initial state, all 1 for "
            "the product state --state " + args.state + ": it would stay a product state; use two-site "
            "TDVP (the default) or --state ground"
        )
    conserve = args.conserve
    if (
        conserve not in ("auto", "none")
        and conserve != charge_of(args.model)
        and not (args.model == "hubbard" and conserve == "N")
    ):
        if args.model == "hubbard":
            other = (
                f"hubbard runs in sectors of N and Sz together or of N alone, not of {conserve}; use "
                "--conserve N,Sz (or auto) or N"
            )
        elif args.model == "tfim":
            other = f"the tfim conserves no {conserve}; use --conserve parity (or auto)"
        else:
            other = (
                f"--model {args.model} conserves Sz, not {'a parity' if conserve == 'parity' else conserve}; "
                "use --conserve Sz (or auto)"
            )
        parser.error(f"argument --conserve: {other}")
    if conserve in ("Sz", "parity") and letters is not None and not state_conserves(args.model, letters):
        parser.error(
            f"argument --conserve: the state {args.state} is not an eigenstate of the {conserve}; "
            + (
                "a product of + and - (eigenstates of X) is; or give --conserve none"
                if args.model == "tfim"
                else "a product of u and d is; or give --conserve none"
            )
        )
    observe = DEFAULT_OBSERVE[args.model] if args.observe is None else args.observe
    bad = [o for o in observe if o not in OPERATORS[args.model]]
    if bad:
        parser.error(
            f"argument --observe: unknown operator {bad[0]!r} of --model {args.model}; valid operators: "
            f"{', '.join(OPERATORS[args.model])} (or auto, or none)"
        )
    try:
        steps = time_grid(args.t_final, args.dt, "evolve")
    except InvalidOptionError as e:
        parser.error("argument --t-final: " + str(e).replace("evolve: ", "").replace("give a t", "give a --t-final"))
    except ValueRangeError as e:
        parser.error("argument --dt: " + str(e).replace("evolve: ", "").replace("larger dt", "larger --dt"))
    if args.every is None:
        args.every = max(1, math.ceil(steps / ROWS))
    check_memory(
        parser.error,
        memory_estimate(args),
        f"environments, MPS and Krylov vectors at L={args.L}, max bond {args.max_bond}, complex128",
        "lower --max-bond or --L",
    )
    # the output files: the dmrg command's checks, this command's usage line
    as_dmrg = argparse.Namespace(
        model="heisenberg",
        L=2,
        J=1.0,
        Jz=None,
        h=None,
        g=None,
        spin=None,
        chi=[1],
        sweeps=1,
        cutoff=[0.0],
        tol=0.0,
        two_site=True,
        noise=None,
        conserve="none",
        sz=None,
        parity=None,
        dtype="float64",
        json=args.json,
        plot=args.plot,
        save=args.save,
    )
    validate(parser, as_dmrg)


def memory_estimate(args: argparse.Namespace) -> int:
    """Bytes a run needs, complex128 (:func:`~tensor4all.cli.common.run_memory`, with a Krylov
    basis of about 40 two-site vectors)."""
    (d, D), L, chi = mpo_bond(args.model), args.L, args.max_bond
    return run_memory(L, d, D, chi, 16, basis=40)
