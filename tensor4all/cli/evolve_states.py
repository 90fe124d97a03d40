"""The Hamiltonian and the initial state of a checked ``tensor4all evolve`` command line: a
product state in the model's own basis, or the DMRG ground state of the chain before a quench
(:func:`build_states`), and whether the run conserves a charge."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .checks import conserve_of, sector_of
from .models import charge_of, couplings, hamiltonian, letters_of, product_mps, state_conserves
from ..algorithms.dmrg import dmrg
from ..networks.mpo import MPO
from ..networks.mps import MPS

__all__ = ["States", "build_states", "staggered"]


@dataclass
class States:
    """What a run starts from: the evolution's Hamiltonian ``H``, the initial state, the
    charge conserved (``None``: dense), the couplings before and after a quench, the
    ground-state DMRG result (``--state ground``) and why a run is dense under ``auto``."""

    H: MPO
    psi0: MPS
    conserve: str | None
    before: dict[str, float]
    after: dict[str, float]
    ground: Any = None
    dense_reason: str | None = None


def build_states(args: argparse.Namespace, ground_callback: Callable | None = None) -> States:
    """The Hamiltonian and the initial state of a checked command line."""
    a = args
    before, after = couplings(a, False), couplings(a, True)
    letters = letters_of(a.state, a.L)
    reason = None
    if letters is not None:
        if a.conserve == "none":
            conserve = None
        elif a.conserve == "auto" and not state_conserves(a.model, letters):
            conserve = None
            reason = (
                "the state is not an Sz eigenstate (it has + or -)"
                if a.model != "tfim"
                else "the state is not a parity eigenstate: only products of + and - (X eigenstates) are"
            )
        else:
            conserve = a.conserve if a.conserve in ("N", "N,Sz") else charge_of(a.model)
        return States(
            hamiltonian(a.model, a.L, after, conserve),
            product_mps(a.model, letters, conserve),
            conserve,
            before,
            after,
            dense_reason=reason,
        )
    if a.model == "hubbard":  # half filling, N = L (at the lowest |Sz|); --conserve none: the lowest state of any N
        conserve = None if a.conserve == "none" else a.conserve if a.conserve == "N" else "N,Sz"
        sector = None
    else:  # the dmrg command's choice of charge and sector for these couplings
        as_dmrg = argparse.Namespace(
            model="xxz" if a.model == "xx" else a.model,
            L=a.L,
            J=before["J"],
            Jz=before.get("Jz", 0.0 if a.model == "xx" else None),
            h=before.get("h"),
            g=before.get("g"),
            spin=None,
            conserve=a.conserve,
            dtype="float64",
            sz=None,
            parity=None,
        )
        conserve = conserve_of(as_dmrg)
        sector = sector_of(as_dmrg)
    if a.conserve == "auto" and conserve is None:
        reason = "the ground state's sector is not known by symmetry for these couplings"
    H0 = hamiltonian(a.model, a.L, before, conserve)
    res = dmrg(
        H0,
        None,
        max_bond=a.max_bond,
        cutoff=a.cutoff,
        seed=a.seed,
        threads=a.threads,
        conserve=conserve,
        sector=sector,
        callback=ground_callback,
    )
    psi = res.state
    psi.normalize()
    return States(
        hamiltonian(a.model, a.L, after, conserve), psi, conserve, before, after, ground=res, dense_reason=reason
    )


def staggered(values: np.ndarray) -> np.ndarray:
    """``(1/L) sum_i (-1)^i v_i`` over the last axis."""
    L = values.shape[-1]
    return values @ ((-1.0) ** np.arange(L)) / L
