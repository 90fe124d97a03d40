"""The checks of a DMRG command line that need more than one option, and its symmetry choices
(:func:`conserve_of`, :func:`sector_of`): the ``dmrg`` command runs them on its arguments, ``scan``
on each point and ``evolve`` on its ground state and output files (imported, never copied)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from . import lattice as _cli_lattice
from .common import PLOT_EXTENSIONS, check_memory, check_output_paths, check_plot, installed, run_memory

__all__ = [
    "SAVE_EXTENSIONS",
    "PLOT_EXTENSIONS",
    "ground_sector",
    "conserve_of",
    "sector_of",
    "validate",
    "memory_estimate",
]

SAVE_EXTENSIONS = {".arrow": "arrow", ".parquet": "parquet", ".npz": "npz"}


def ground_sector(args: argparse.Namespace) -> tuple[str, float] | None:
    """The conserved charge and the sector that holds the ground state, where symmetry says
    which: heisenberg/xxz chains with J > 0, Jz >= -J and h = 0 (total Sz 0, or 1/2 for an odd
    number of spin-1/2 sites; Lieb and Mattis); tfim chains with g != 0 (parity even for g > 0,
    that of L for g < 0: Perron-Frobenius in the X basis). Lattices and j1j2:
    :func:`tensor4all.cli.lattice.ground_sector`; fermion models: None (their sector is chosen,
    :func:`tensor4all.cli.lattice.sector_of`). None otherwise."""
    if not _cli_lattice.is_legacy(args):
        return _cli_lattice.ground_sector(args)
    if args.model == "tfim":
        g = 1.0 if args.g is None else args.g
        return None if g == 0 else ("parity", 0 if g > 0 else args.L % 2)
    jz = args.J if args.Jz is None else args.Jz
    if args.J > 0 and jz >= -args.J and not args.h:
        odd = args.L % 2 == 1 and args.spin in (None, "1/2")
        return ("Sz", 0.5 if odd else 0.0)
    return None


def conserve_of(args: argparse.Namespace) -> str | None:
    """The charge a run conserves: ``--conserve`` with ``auto`` resolved by the model (the
    model's charge when the ground state's sector is known or ``--sz``/``--parity`` names
    one, else none), or None (dense); complex runs are dense. Fermion models: N,Sz or N."""
    if args.model in _cli_lattice.FERMION_MODELS:
        return _cli_lattice.conserve_of(args)
    if args.conserve == "none" or args.dtype != "float64":
        return None
    if args.conserve == "auto":
        if args.sz is not None:
            return "Sz"
        if args.parity is not None:
            return "parity"
        known = ground_sector(args)
        return None if known is None else known[0]
    return args.conserve


def sector_of(args: argparse.Namespace) -> Any:
    """The sector a conserved run targets: ``--sz``/``--parity``, else the ground state's;
    fermion models: ``N`` or ``{"N": N, "Sz": Sz}`` (``--N``/``--sz`` or the defaults)."""
    if args.model in _cli_lattice.FERMION_MODELS:
        return _cli_lattice.sector_of(args)
    conserve = conserve_of(args)
    if conserve is None:
        return None
    given = args.sz if conserve == "Sz" else args.parity
    if given is not None:
        return given
    known = ground_sector(args)
    return known[1] if known is not None and known[0] == conserve else None


def validate(sub: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every check of a dmrg run that needs more than one option, reported through ``sub.error``
    (exit 2 with that parser's usage line: dmrg's, or scan's and evolve's for their points)."""
    conserve = conserve_of(args)
    _cli_lattice.check(sub, args, conserve)  # model options, lattice, fermion sectors
    for what, sched in (("--max-bond", args.chi), ("--cutoff", args.cutoff)):
        if len(sched) > args.sweeps:
            sub.error(
                f"argument --sweeps: {args.sweeps} sweep(s) cannot run the {len(sched)}-entry "
                f"{what} schedule; give --sweeps {len(sched)} or more"
            )
    if args.conserve not in ("auto", "none") and conserve is None:
        sub.error(
            f"argument --conserve: {args.conserve} runs in float64; drop --dtype complex128 or give --conserve none"
        )
    if conserve == "Sz" and args.model == "tfim":
        sub.error("argument --conserve: the tfim conserves no Sz; use --conserve parity (or auto)")
    if conserve == "parity" and args.model != "tfim":
        sub.error(f"argument --conserve: --model {args.model} conserves Sz, not a parity; use --conserve Sz")
    if (
        args.sz is not None
        and args.model not in _cli_lattice.FERMION_MODELS
        and (args.model == "tfim" or conserve != "Sz")
    ):
        sub.error(
            "argument --sz: needs --model heisenberg/xxz/j1j2 with --conserve Sz or auto (float64), or "
            "hubbard/tj with --conserve N,Sz or auto"
        )
    if args.parity is not None and (args.model != "tfim" or conserve != "parity"):
        sub.error("argument --parity: needs --model tfim with --conserve parity or auto (two-site, float64)")
    if getattr(args, "measure", None) and args.model not in _cli_lattice.FERMION_MODELS:
        sub.error(
            f"argument --measure: the measurements are those of the fermion models (hubbard, tj, spinless), "
            f"not of --model {args.model}"
        )
    if args.noise is not None and args.two_site:
        sub.error("argument --noise: only used with --one-site (two-site updates grow bonds by the SVD)")
    check_output_paths(sub.error, args)
    check_memory(
        sub.error,
        memory_estimate(args),
        f"environments, MPS and Lanczos vectors at L={args.L}, chi={max(args.chi)}, {args.dtype}",
        "lower --max-bond or --L",
    )
    check_plot(sub.error, args.plot)
    if args.save is not None:
        ext = os.path.splitext(args.save)[1].lower()
        if ext not in SAVE_EXTENSIONS:
            sub.error(
                f"argument --save: unknown extension {ext or '(none)'!r} of {args.save!r}; "
                f"valid extensions: {', '.join(SAVE_EXTENSIONS)}"
            )
        if SAVE_EXTENSIONS[ext] in ("arrow", "parquet") and not installed("pyarrow"):
            sub.error(
                f"argument --save: {ext} files need pyarrow, which is not installed; install the "
                "'arrow' extra (pip install 'tidu-tenferro[arrow]') or save as .npz"
            )


def memory_estimate(args: argparse.Namespace) -> int:
    """Bytes a run needs (:func:`~tensor4all.cli.common.run_memory`): the Lanczos basis holds
    ``max_iter + 2`` two-site vectors (42); ``L``, ``d`` and the MPO bond dimension ``D`` from
    :func:`tensor4all.cli.lattice.mpo_shape` (spin chains: 5, tfim 3)."""
    L, d, D = _cli_lattice.mpo_shape(args)
    return run_memory(L, d, D, max(args.chi), 16 if args.dtype == "complex128" else 8, basis=42)
