"""The model table of ``tensor4all evolve``: per model its couplings, local space, operators,
product-state letters, conserved charge, Hamiltonian and exact reference.

* Spin chains (``xx``, ``heisenberg``, ``xxz``: spin 1/2; ``tfim``: Pauli matrices): letters
  ``u``/``d`` (also ``0``/``1``) for up/down, ``+``/``-`` for the eigenstates of ``Sx`` (tfim:
  ``X``). They conserve ``Sz`` (tfim: the parity ``prod X``, run in the rotated basis
  ``-J sum X X - g sum Z``, where an operator of the model's basis is an operator of the rotated
  one with a sign, :data:`ROTATED`).
* ``hubbard`` (:func:`tensor4all.models.hubbard` on ``"electron"`` sites, the hopping ``--t`` as in
  the dmrg command and in Python; ``--J``, which gave it before, is its deprecated spelling): letters ``0`` (empty), ``u``, ``d``, ``2`` (both);
  it conserves the particle number ``N`` and ``Sz`` together (``"N,Sz"``; ``--conserve N`` runs
  sectors of ``N`` alone). Its ground state (``--state ground``) is the one at half
  filling, ``N = L``.

Exact references (real time, from a product of basis states): the XX chain is free fermions
(:func:`tensor4all.references.xx_magnetization`, ``<Sz_i>``), and so is the Hubbard chain at
``U = 0``, per spin species (:func:`tensor4all.references.hubbard_free_densities`, ``<Sz_i>``
and ``<Ntot_i>``).
"""

from __future__ import annotations

import argparse
import copy
import math
from typing import Any

import numpy as np

from .. import models
from .. import references
from ..networks.mpo import MPO
from ..networks.mps import MPS

__all__ = [
    "MODELS",
    "MODEL_OPTIONS",
    "ALL_MODEL_OPTIONS",
    "OPERATORS",
    "DEFAULT_OBSERVE",
    "ROTATED",
    "LETTERS",
    "DEFAULTS",
    "letters_of",
    "product_letters",
    "charge_of",
    "state_conserves",
    "couplings",
    "hamiltonian",
    "local_of",
    "product_mps",
    "exact_reference_applies",
    "exact_profile",
    "mpo_bond",
    "DmrgOptions",
    "add_couplings",
]

MODELS = ("xx", "heisenberg", "xxz", "tfim", "hubbard")
#: the couplings each model takes besides --J (and the same after a quench, --quench-*)
MODEL_OPTIONS = {
    "xx": ("h",),
    "heisenberg": ("Jz", "h"),
    "xxz": ("Jz", "h"),
    "tfim": ("g",),
    "hubbard": ("t", "U", "mu"),
}
ALL_MODEL_OPTIONS = ("Jz", "h", "g", "t", "U", "mu")
#: the defaults of the couplings that are not --J (Jz: equal to J)
DEFAULTS = {"h": 0.0, "g": 1.0, "U": 4.0, "mu": 0.0}
#: the local operators --observe takes (Hermitian, one per site)
OPERATORS = {
    "xx": ("Sx", "Sy", "Sz"),
    "heisenberg": ("Sx", "Sy", "Sz"),
    "xxz": ("Sx", "Sy", "Sz"),
    "tfim": ("X", "Y", "Z"),
    "hubbard": ("Ntot", "Sz", "Nup", "Ndn", "Nupdn"),
}
DEFAULT_OBSERVE = {"xx": ["Sz"], "heisenberg": ["Sz"], "xxz": ["Sz"], "tfim": ["Z", "X"], "hubbard": ["Ntot", "Sz"]}
#: the tfim written as -J sum X X - g sum Z (conserved parity): an operator of the model's own
#: basis is (the operator of the rotated basis, its sign) under the Hadamard rotation
ROTATED = {"X": ("Z", 1.0), "Y": ("Y", -1.0), "Z": ("X", 1.0)}
#: product-state letters as typed -> as stored, per kind of site: spins u(p), d(own), + and -
#: (eigenstates of Sx, tfim: X); electrons 0 (empty), u, d, 2 (both)
LETTERS = {
    "spin": {"u": "u", "U": "u", "0": "u", "d": "d", "D": "d", "1": "d", "+": "+", "-": "-"},
    "electron": {"0": "0", "u": "u", "U": "u", "d": "d", "D": "d", "2": "2"},
}
#: the basis index of each electron letter ("electron" space: |0>, |up>, |dn>, |up dn>)
_ELECTRON = "0ud2"
_SQRT_HALF = math.sqrt(0.5)


def _kind(model: str) -> str:
    return "electron" if model == "hubbard" else "spin"


def letters_of(state: str, L: int) -> str | None:
    """The per-site letters of a product ``--state`` (named states: ``u``/``d``, the same for
    spins and electrons); None for ``ground``. ``product:SPEC`` as stored by the parser."""
    if state == "ground":
        return None
    if state == "neel":
        return "".join("ud"[i % 2] for i in range(L))
    if state == "domain-wall":
        return "u" * (L // 2) + "d" * (L - L // 2)
    if state == "up":
        return "u" * L
    return state[len("product:") :]


def product_letters(model: str, spec: str) -> str | None:
    """The letters of ``product:SPEC`` for ``model`` (normalized: ``U`` -> ``u``; spins ``0``/``1``
    -> ``u``/``d``), or None when one is not a state of the model's sites."""
    table = LETTERS[_kind(model)]
    return "".join(table[c] for c in spec) if all(c in table for c in spec) else None


def charge_of(model: str) -> str:
    """The charge a model conserves: Sz (spin models), the parity (tfim), N and Sz (hubbard)."""
    return {"tfim": "parity", "hubbard": "N,Sz"}.get(model, "Sz")


def state_conserves(model: str, letters: str) -> bool:
    """Whether a product state is an eigenstate of the model's charge: up/down spins for Sz,
    +/- (X eigenstates) for the tfim's parity prod X, every electron letter for N."""
    return set(letters) <= {"tfim": {"+", "-"}, "hubbard": set(_ELECTRON)}.get(model, {"u", "d"})


def couplings(args: argparse.Namespace, after: bool) -> dict[str, float]:
    """The model's couplings with their defaults (``after``: with the ``--quench-*`` values)."""
    a = args
    p: dict[str, float] = {"J": a.J}
    for name in MODEL_OPTIONS[a.model]:
        value = getattr(a, name)
        # Jz follows J; hubbard's hopping t takes --J where only that (deprecated) spelling was given
        p[name] = (a.J if name in ("Jz", "t") else DEFAULTS[name]) if value is None else value
    if after:
        for name in list(p):
            v = getattr(a, "quench_" + name)
            if v is not None:
                p[name] = v
        if a.model in ("heisenberg", "xxz") and a.quench_Jz is None and a.Jz is None:
            p["Jz"] = p["J"]  # Jz follows J when neither was given
        if a.model == "hubbard" and a.quench_t is None and a.quench_J is not None:
            p["t"] = a.quench_J  # the deprecated spelling of --quench-t
    if a.model == "hubbard":
        del p["J"]  # its hopping is t (--J: the deprecated spelling, taken above)
    return p


def hamiltonian(model: str, L: int, p: dict[str, float], conserve: str | None) -> MPO:
    if model == "tfim":
        return models.tfim(L, J=p["J"], g=p["g"], conserve=conserve)
    if model == "xx":
        return models.xx(L, J=p["J"], h=p["h"], conserve=conserve)
    if model == "hubbard":
        return models.hubbard(L, t=p["t"], U=p["U"], mu=p["mu"], conserve=conserve)
    return models.heisenberg(L, J=p["J"], Jz=p["Jz"], h=p["h"], conserve=conserve)


def local_of(model: str) -> str:
    return {"tfim": "pauli", "hubbard": "electron"}.get(model, "spin-1/2")


def mpo_bond(model: str) -> tuple[int, int]:
    """``(d, D)``: the local dimension and the MPO bond dimension of a model."""
    return {"tfim": (2, 3), "hubbard": (4, 6)}.get(model, (2, 5))


def product_mps(model: str, letters: str, conserve: str | None) -> MPS:
    """The product state of ``letters`` in the model's own basis (u, d: index 0, 1; +, -:
    ``(1, +-1)/sqrt 2``; electrons 0, u, d, 2: index 0..3); a conserved tfim run is in the
    rotated basis, where + and - are the basis states 0 and 1."""
    if model == "hubbard":
        return MPS.product_state([_ELECTRON.index(c) for c in letters], 4, conserve=conserve, local="electron")
    if conserve == "parity":
        return MPS.product_state(["+-".index(c) for c in letters], 2, conserve="parity", local="pauli")
    if conserve == "Sz":
        return MPS.product_state(["ud".index(c) for c in letters], 2, conserve="Sz", local="spin-1/2")
    vec = {"u": 0, "d": 1, "+": np.array([_SQRT_HALF, _SQRT_HALF]), "-": np.array([_SQRT_HALF, -_SQRT_HALF])}
    return MPS.product_state([vec[c] for c in letters], 2)


def exact_reference_applies(args: argparse.Namespace) -> bool:
    """Free fermions in real time from a product of basis states: the XX chain (Jz = 0, any
    spin model's name) from up/down spins, the Hubbard chain at U = 0 (after a quench)."""
    if args.imaginary or args.state == "ground":
        return False
    p = couplings(args, True)
    if args.model == "hubbard":
        return p["U"] == 0.0
    if args.model == "tfim" or p.get("Jz", 0.0) != 0.0:
        return False
    return set(letters_of(args.state, args.L)) <= {"u", "d"}


def exact_profile(model: str, letters: str, times: Any, p: dict[str, float]) -> dict[str, np.ndarray]:
    """The exact references, operator -> its value per site at ``times`` (shape ``times.shape +
    (L,)``), the staggered one first: ``<Sz_i>`` of the XX chain; ``<Sz_i>`` and ``<Ntot_i>`` of
    the Hubbard chain at U = 0 (from ``<Nup_i>`` and ``<Ndn_i>``: from the Neel state ``<Ntot_i>``
    stays 1, from a charge pattern such as ``2200`` ``<Sz_i>`` stays 0, so both are compared)."""
    if model == "hubbard":
        up, dn = references.hubbard_free_densities([_ELECTRON.index(c) for c in letters], times, p["t"])
        return {"Sz": 0.5 * (up - dn), "Ntot": up + dn}
    return {"Sz": references.xx_magnetization(["ud".index(c) for c in letters], times, p["J"])}


class DmrgOptions:
    """The options of the ``dmrg`` parser, for the commands that take the same ones (``evolve``,
    ``spectrum``, ``thermal``): ``copy(group, dest)`` adds a copy of one (its help and default
    changed where given), ``type(dest)`` is its argument type."""

    def __init__(self, dmrg_parser: argparse.ArgumentParser):
        self.actions = {a.dest: a for a in dmrg_parser._actions}

    def type(self, dest: str) -> Any:
        return self.actions[dest].type

    def copy(self, group: Any, dest: str, help: str | None = None, default: Any = "keep") -> None:
        a = copy.copy(self.actions[dest])
        if help is not None:
            a.help = help
        if default != "keep":
            a.default = default
        group._add_action(a)


def add_couplings(group: Any, dmrg: DmrgOptions, *, L: int, J_help: str, t_help: str) -> None:
    """The chain length and the couplings of :data:`MODELS` (``--L``, ``--J``, ``--Jz``, ``--h``,
    ``--g``, ``--t`` as ``dmrg`` has them, and Hubbard's ``--U`` and ``--mu``)."""
    dmrg.copy(group, "L", default=L)
    dmrg.copy(group, "J", help=J_help)
    dmrg.copy(group, "Jz")
    dmrg.copy(group, "h", help="longitudinal field of xx/heisenberg/xxz, the term -h sum Sz (default: 0)")
    dmrg.copy(group, "g")
    dmrg.copy(group, "t", help=t_help)
    group.add_argument(
        "--U",
        type=dmrg.type("J"),
        default=None,
        help=f"on-site interaction of hubbard, U sum n_up n_dn (default: {DEFAULTS['U']:g})",
    )
    group.add_argument(
        "--mu",
        type=dmrg.type("J"),
        default=None,
        help=f"chemical potential of hubbard, the term -mu sum n (default: {DEFAULTS['mu']:g})",
    )
