"""Lattices, models, sectors and references of ``tensor4all dmrg`` beyond the spin chains.

``cli.py`` keeps the spin chains of its first version (heisenberg, xxz, tfim on an open chain
of ``--L`` sites: their output and JSON record are unchanged); this module adds

* the models ``j1j2`` (:func:`tensor4all.models.j1j2`), ``hubbard``, ``tj`` and ``spinless``
  (:func:`~tensor4all.models.hubbard`, :func:`~tensor4all.models.tj`,
  :func:`~tensor4all.models.spinless_fermions`) and the couplings ``--t --U --V --mu --J2``;
* every model on a lattice of :mod:`tensor4all.lattices` (``--lattice chain|ladder|square|
  triangular|honeycomb`` with ``--Lx --Ly --yperiodic``; square and triangular lattices are
  cylinders, periodic in y, by default);
* the sectors of the fermion models: ``--conserve N`` or ``N,Sz``, ``--N`` (default: ``N``
  in the middle of its range, half filling ``N = L`` for electrons, ``N = L // 2`` for t-J and
  spinless fermions) and ``--sz`` (default: the lowest ``|Sz|``, 0 or 1/2);
* the references of these runs, in the run's own sector (:mod:`tensor4all.references.fermions`:
  explicit matrices, no MPO code): free fermions at ``U = 0`` / ``V = 0`` on any lattice (the
  lowest levels of the hopping matrix of the lattice's bonds, per spin), else exact
  diagonalization when the sector has at most 2^14 states.

Which options a model takes is :data:`MODEL_OPTIONS`; an option given to a model that does not
take it is an argparse error naming the models that do.
"""

from __future__ import annotations

import argparse
from collections import deque
from typing import Any

from .. import models
from ..tools.errors import Tensor4allError
from ..networks.mpo import MPO
from ..references.fermions import exact_sector_energy, free_electron_energy, free_fermion_energy, sector_dimension
from ..lattices import Lattice, chain, honeycomb, ladder, square, triangular
from ..references import ED_MAX_DIM, Reference

__all__ = [
    "LATTICES",
    "SPIN_CHAIN_MODELS",
    "MODELS",
    "FERMION_MODELS",
    "MODEL_OPTIONS",
    "LOCAL",
    "StoreGiven",
    "add_options",
    "restrict_scan_models",
    "is_legacy",
    "check",
    "lattice_of",
    "n_sites",
    "couplings",
    "conserve_of",
    "sector_of",
    "ground_sector",
    "hamiltonian",
    "reference",
    "ed_states",
    "mpo_shape",
    "model_text",
    "lattice_record",
    "nearest_bonds",
    "symmetry_text",
]

LATTICES = ("chain", "ladder", "square", "triangular", "honeycomb")
SPIN_CHAIN_MODELS = ("heisenberg", "xxz", "tfim")
FERMION_MODELS = ("hubbard", "tj", "spinless")
MODELS = SPIN_CHAIN_MODELS + ("j1j2",) + FERMION_MODELS
#: the couplings each model takes (besides the size: --L, or --lattice with --Lx/--Ly)
MODEL_OPTIONS = {
    "heisenberg": ("J", "Jz", "h", "spin"),
    "xxz": ("J", "Jz", "h", "spin"),
    "tfim": ("J", "g"),
    "j1j2": ("J", "J2", "h"),
    "hubbard": ("t", "U", "mu"),
    "tj": ("t", "J"),
    "spinless": ("t", "V", "mu"),
}
#: every model option, in the order of the messages
ALL_OPTIONS = ("J", "Jz", "h", "spin", "g", "J2", "t", "U", "V", "mu")
#: the defaults of the couplings (``Jz``: equal to ``J``; ``J`` of tj: 0.5)
DEFAULTS = {"J": 1.0, "h": 0.0, "g": 1.0, "J2": 0.5, "t": 1.0, "U": 4.0, "V": 0.0, "mu": 0.0}
TJ_DEFAULT_J = 0.5
#: the local space of each model's sites (heisenberg/xxz: by --spin)
LOCAL = {"tfim": "pauli", "j1j2": "spin-1/2", "hubbard": "electron", "tj": "tj", "spinless": "fermion"}
#: the --conserve choices each model accepts (besides auto and none)
CONSERVES = {
    "heisenberg": ("Sz",),
    "xxz": ("Sz",),
    "j1j2": ("Sz",),
    "tfim": ("parity",),
    "hubbard": ("N", "N,Sz"),
    "tj": ("N", "N,Sz"),
    "spinless": ("N",),
}
#: what --conserve auto means for the fermion models: both charges where the site conserves them
AUTO_CONSERVE = {"hubbard": "N,Sz", "tj": "N,Sz", "spinless": "N"}
#: operator flavours per bond of each model's OpSum (the MPO bond dimension is about 2 + flavours x reach)
_FLAVOURS = {"heisenberg": 3, "xxz": 3, "tfim": 1, "j1j2": 3, "hubbard": 4, "tj": 8, "spinless": 3}
_DIMS = {"pauli": 2, "spin-1/2": 2, "spin-1": 3, "electron": 4, "tj": 3, "fermion": 2}


class StoreGiven(argparse.Action):
    """``store``, and records the option as given (``namespace.given_options``), so that an option
    with a default can still be refused where it does not apply (``--J`` of hubbard)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.given_options = set(getattr(namespace, "given_options", ())) | {self.dest}


def _given(args: Any, name: str) -> bool:
    return name in (getattr(args, "given_options", None) or ())


def _opt(args: Any, name: str) -> Any:
    """An option of the dmrg namespace; None where the namespace (scan, evolve) does not have it."""
    return getattr(args, name, None)


# ---- the options ---------------------------------------------------------------------------------
def add_options(lattice: Any, fermions: Any, number: Any, real: Any) -> None:
    """Add ``--lattice --Lx --Ly --yperiodic`` to the group ``lattice`` and ``--t --U --V --mu --J2
    --N`` to ``fermions``; ``number`` and ``real`` are the argparse types of positive integers and
    finite numbers."""
    lattice.add_argument(
        "--lattice",
        choices=LATTICES,
        default=None,
        help="the sites and bonds (tensor4all.lattices, site n = x*Ly + y): chain (--L sites), "
        "ladder (--Lx rungs of --Ly legs), square, triangular or honeycomb (--Lx columns of "
        "--Ly sites; square and triangular are cylinders, periodic in y, unless "
        "--no-yperiodic) (default: chain)",
    )
    lattice.add_argument(
        "--Lx",
        type=number(1, "--Lx is a positive integer"),
        default=None,
        help="columns of a ladder/square/triangular/honeycomb lattice (default: 8)",
    )
    lattice.add_argument(
        "--Ly",
        type=number(1, "--Ly is a positive integer"),
        default=None,
        help="sites per column (ladder: legs) (default: 2 for ladder, 4 otherwise)",
    )
    lattice.add_argument(
        "--yperiodic",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="bonds around the cylinder, (x, Ly-1)-(x, 0) (default: on for square and triangular, "
        "off for honeycomb, which needs an even --Ly for it; chain and ladder are open)",
    )
    fermions.add_argument(
        "--t",
        type=real,
        default=None,
        help=f"hopping of hubbard/tj/spinless, -t sum (c+_i c_j + h.c.) over the bonds (default: {DEFAULTS['t']:g})",
    )
    fermions.add_argument(
        "--U",
        type=real,
        default=None,
        help=f"on-site interaction of hubbard, U sum n_up n_dn (default: {DEFAULTS['U']:g})",
    )
    fermions.add_argument(
        "--V",
        type=real,
        default=None,
        help=f"nearest-neighbour interaction of spinless, V sum n_i n_j (default: {DEFAULTS['V']:g})",
    )
    fermions.add_argument(
        "--mu",
        type=real,
        default=None,
        help=f"chemical potential of hubbard/spinless, -mu sum n (default: {DEFAULTS['mu']:g})",
    )
    fermions.add_argument(
        "--J2",
        type=real,
        default=None,
        help="next-nearest exchange of j1j2 (--J is J1; the lattice's next_nearest bonds, "
        f"(i, i+2) on a chain) (default: {DEFAULTS['J2']:g})",
    )
    fermions.add_argument(
        "--N",
        type=number(0, "the particle number is a non-negative integer"),
        default=None,
        help="the particle number of hubbard/tj/spinless with --conserve N, N,Sz or auto (default: "
        "the middle of its range: half filling N = L for hubbard, N = L // 2 for tj and "
        "spinless)",
    )


def restrict_scan_models(scan: argparse.ArgumentParser) -> None:
    """``tensor4all scan`` copies the dmrg command's model options but runs the spin chains of
    :class:`~tensor4all.ScanTask` only (and has no lattice options): its ``--model`` choices."""
    spin_charges = ("auto", "Sz", "parity", "none")  # the charges its spin chains have
    for action in scan._actions:
        if action.dest == "model":
            action.choices = SPIN_CHAIN_MODELS
            action.help = (
                "heisenberg/xxz: H = sum J (SxSx + SySy) + Jz SzSz - h sum Sz; tfim: H = -J sum ZZ - g "
                "sum X (Pauli matrices), open chains of --L sites. Default: %(default)s"
            )
        elif action.dest == "conserve":
            action.choices = spin_charges
            action.metavar = "{" + ",".join(spin_charges) + "}"
            action.help = (
                "run in one sector of a conserved charge: auto (default: Sz for heisenberg/xxz when "
                "symmetry says the ground state's sector, the parity for tfim, written as -J sum XX - g "
                "sum Z), Sz, parity or none (dense); float64 only"
            )
        elif action.dest == "J":
            action.help = "exchange coupling (heisenberg/xxz: XX+YY part; tfim: ZZ coupling) (default: %(default)s)"
        elif action.dest == "h":
            action.help = "longitudinal field of heisenberg/xxz, the term -h sum Sz (default: 0)"
        elif action.dest == "sz":
            action.help = "the total Sz to target with --conserve Sz/auto (heisenberg/xxz; default the lowest |Sz|)"


# ---- the lattice --------------------------------------------------------------------------------
def _kind(args: Any) -> str:
    return _opt(args, "lattice") or "chain"


def is_legacy(args: Any) -> bool:
    """Whether this is a spin chain of the first version (heisenberg/xxz/tfim on the open chain of
    --L sites), whose output and JSON record are unchanged."""
    return args.model in SPIN_CHAIN_MODELS and _kind(args) == "chain"


def _lx_ly(args: Any) -> tuple[int, int]:
    kind = _kind(args)
    lx = _opt(args, "Lx") or 8
    ly = _opt(args, "Ly") or (2 if kind == "ladder" else 4)
    return lx, ly


def _yperiodic(args: Any) -> bool:
    y = _opt(args, "yperiodic")
    if y is not None:
        return bool(y)
    return _kind(args) in ("square", "triangular")


def lattice_of(args: Any) -> Lattice:
    """The lattice of the command line (a chain of --L sites by default)."""
    kind = _kind(args)
    if kind == "chain":
        return chain(args.L)
    lx, ly = _lx_ly(args)
    if kind == "ladder":
        return ladder(lx, ly)
    make = {"square": square, "triangular": triangular, "honeycomb": honeycomb}[kind]
    return make(lx, ly, yperiodic=_yperiodic(args))


def n_sites(args: Any) -> int:
    if _kind(args) == "chain":
        return args.L
    lx, ly = _lx_ly(args)
    return lx * ly


def nearest_bonds(args: Any) -> list[tuple[int, int]]:
    return list(lattice_of(args).nearest)


def lattice_record(args: Any) -> dict[str, Any]:
    """``parameters.lattice`` of the JSON record."""
    lat = lattice_of(args)
    kind = _kind(args)
    lx, ly = (args.L, 1) if kind == "chain" else _lx_ly(args)
    return {
        "kind": kind,
        "name": lat.name,
        "Lx": lx,
        "Ly": ly,
        "yperiodic": kind != "chain" and _yperiodic(args),
        "sites": lat.sites,
        "nearest_bonds": len(lat.nearest),
        "next_nearest_bonds": len(lat.next_nearest),
    }


def _bipartite(n: int, bonds: Any) -> bool:
    colour: dict[int, int] = {}
    adj: dict[int, list[int]] = {i: [] for i in range(n)}
    for i, j in bonds:
        adj[i].append(j)
        adj[j].append(i)
    for start in range(n):
        if start in colour:
            continue
        colour[start] = 0
        todo = deque([start])
        while todo:
            i = todo.popleft()
            for j in adj[i]:
                if j not in colour:
                    colour[j] = 1 - colour[i]
                    todo.append(j)
                elif colour[j] == colour[i]:
                    return False
    return True


# ---- couplings, charges and sectors ---------------------------------------------------------------
def couplings(args: Any) -> dict[str, Any]:
    """The model's couplings with their defaults filled in (``parameters`` of the JSON record)."""
    out: dict[str, Any] = {}
    for name in MODEL_OPTIONS[args.model]:
        v = _opt(args, name)
        if name == "J":
            v = TJ_DEFAULT_J if args.model == "tj" and not _given(args, "J") else args.J
        elif name == "Jz":
            v = args.J if v is None else v
        elif name == "spin":
            v = "1/2" if v is None else v
        elif v is None:
            v = DEFAULTS[name]
        out[name] = v
    return out


def _local(args: Any) -> str:
    if args.model in ("heisenberg", "xxz"):
        return "spin-1" if _opt(args, "spin") == "1" else "spin-1/2"
    return LOCAL[args.model]


def _n_max(args: Any) -> int:
    return 2 * n_sites(args) if args.model == "hubbard" else n_sites(args)


def conserve_of(args: Any) -> str | None:
    """The charge a fermion-model run conserves (None: dense; complex runs are dense)."""
    if args.conserve == "none" or args.dtype != "float64":
        return None
    if args.conserve == "auto":
        return AUTO_CONSERVE[args.model]
    return args.conserve


def _default_n(args: Any) -> int:
    return n_sites(args) if args.model == "hubbard" else n_sites(args) // 2


def sector_of(args: Any) -> Any:
    """The sector of a fermion-model run: ``N`` (``--conserve N``), ``{"N": N, "Sz": Sz}``
    (``N,Sz``) or None (dense)."""
    conserve = conserve_of(args)
    if conserve is None:
        return None
    N = _opt(args, "N")
    N = _default_n(args) if N is None else N
    if conserve == "N":
        return N
    sz = _opt(args, "sz")
    return {"N": N, "Sz": float(sz) if sz is not None else 0.5 * (N % 2)}


def ground_sector(args: Any) -> tuple[str, Any] | None:
    """The charge and sector holding the ground state of a spin model on a lattice, where symmetry
    says: SU(2)-symmetric heisenberg/xxz (``Jz = J``) and j1j2 without field: the lowest ``|Sz|``
    (every multiplet has a member there); tfim with ``g != 0`` when ``J >= 0`` or the lattice is
    bipartite (Perron-Frobenius in the X basis): even parity for ``g > 0``, that of the number of
    sites for ``g < 0``. None otherwise (and for the fermion models, whose sector is chosen)."""
    n = n_sites(args)
    c = couplings(args)
    if args.model == "tfim":
        if c["g"] == 0 or not (c["J"] >= 0 or _bipartite(n, lattice_of(args).nearest)):
            return None
        return "parity", 0 if c["g"] > 0 else n % 2
    if args.model in ("heisenberg", "xxz", "j1j2"):
        if c["h"] != 0 or (args.model != "j1j2" and c["Jz"] != c["J"]):
            return None
        odd = n % 2 == 1 and c.get("spin", "1/2") == "1/2"
        return "Sz", 0.5 if odd else 0.0
    return None


# ---- checks ------------------------------------------------------------------------------------
def check(sub: argparse.ArgumentParser, args: Any, conserve: str | None) -> None:
    """Model, lattice and sector options that do not fit together: ``sub.error`` (exit 2)."""
    model = args.model
    used = MODEL_OPTIONS[model]
    for name in ALL_OPTIONS:
        given = _given(args, name) if name == "J" else _opt(args, name) is not None
        if given and name not in used:
            users = [m for m, opts in MODEL_OPTIONS.items() if name in opts]
            sub.error(
                f"argument --{name}: not a parameter of --model {model} (it belongs to {', '.join(users)}; "
                f"{model} takes --L" + "".join(f", --{u}" for u in used) + ", or a --lattice with --Lx/--Ly)"
            )
    kind = _kind(args)
    if kind == "chain":
        for name in ("Lx", "Ly", "yperiodic"):
            if _opt(args, name) is not None:
                sub.error(
                    f"argument --{name}: a chain has --L sites and no columns; give --lattice ladder, square, "
                    "triangular or honeycomb for --Lx/--Ly/--yperiodic"
                )
    else:
        if _given(args, "L"):
            sub.error(f"argument --L: the number of sites of a chain; --lattice {kind} takes --Lx and --Ly")
        if kind == "ladder" and _opt(args, "yperiodic") is not None:
            sub.error("argument --yperiodic: a ladder is open; use --lattice square for a cylinder")
        lx, ly = _lx_ly(args)
        if kind == "honeycomb" and _yperiodic(args) and ly % 2:
            sub.error(f"argument --yperiodic: a honeycomb cylinder needs an even --Ly, got {ly}")
        if lx * ly < 2:
            sub.error(f"argument --Lx: the lattice needs at least 2 sites, got {lx} x {ly}")
    if model not in FERMION_MODELS:
        if _opt(args, "N") is not None:
            sub.error(f"argument --N: --model {model} has no particle number; --N belongs to hubbard, tj, spinless")
        if args.conserve in ("N", "N,Sz"):
            sub.error(
                f"argument --conserve: --model {model} conserves {CONSERVES[model][0]}, not {args.conserve}; "
                f"use --conserve {CONSERVES[model][0]}, auto or none"
            )
        return
    if args.conserve in ("Sz", "parity"):
        sub.error(
            f"argument --conserve: --model {model} conserves "
            + " and ".join(("N", "Sz") if "N,Sz" in CONSERVES[model] else ("N",))
            + f", not {args.conserve} alone; use --conserve "
            + " or ".join(CONSERVES[model])
            + " (or auto, none)"
        )
    if args.conserve not in ("auto", "none") and args.conserve not in CONSERVES[model]:
        sub.error(f"argument --conserve: --model {model} conserves only N (spinless fermions); use --conserve N")
    if _opt(args, "parity") is not None:
        sub.error(
            f"argument --parity: needs --model tfim; --model {model} conserves N"
            + (" and Sz" if model != "spinless" else "")
        )
    N = _opt(args, "N")
    if N is not None:
        if conserve is None:
            sub.error("argument --N: needs a conserved particle number (--conserve N, N,Sz or auto, float64)")
        if N > _n_max(args):
            sub.error(
                f"argument --N: {N} particles do not fit on {n_sites(args)} sites (at most {_n_max(args)} for {model})"
            )
    sz = _opt(args, "sz")
    if sz is not None:
        if conserve != "N,Sz":
            sub.error(
                "argument --sz: needs --conserve N,Sz (or auto) with --model hubbard or tj"
                if model != "spinless"
                else "argument --sz: spinless fermions have no spin"
            )
        sector = sector_of(args)
        try:
            sector_dimension(model, n_sites(args), N=sector["N"], Sz=sz)
        except Tensor4allError as e:  # names the sector without states
            sub.error(f"argument --sz: {str(e).replace('sector_dimension: ', '')}")


# ---- the model -----------------------------------------------------------------------------------
def _where(args: Any) -> Any:
    """The models' first argument: an ``int`` for the chain (the same MPO as before), else the lattice."""
    return args.L if _kind(args) == "chain" else lattice_of(args)


def hamiltonian(args: Any, conserve: str | None) -> MPO:
    """The model's MPO (tfim with ``conserve="parity"``: the rotated basis, as ``cli.py``'s chains)."""
    c, where = couplings(args), _where(args)
    if args.model in ("heisenberg", "xxz"):
        return models.heisenberg(where, J=c["J"], Jz=c["Jz"], h=c["h"], spin=c["spin"])
    if args.model == "tfim":
        return models.tfim(where, J=c["J"], g=c["g"], conserve=conserve)
    if args.model == "j1j2":
        return models.j1j2(where, J1=c["J"], J2=c["J2"], h=c["h"])
    if args.model == "hubbard":
        return models.hubbard(where, t=c["t"], U=c["U"], mu=c["mu"])
    if args.model == "tj":
        return models.tj(where, t=c["t"], J=c["J"])
    return models.spinless_fermions(where, t=c["t"], V=c["V"], mu=c["mu"])


def mpo_shape(args: Any) -> tuple[int, int, int]:
    """``(sites, local dimension, estimated MPO bond dimension)`` for the memory estimate: about
    ``2 + flavours x reach`` (the operator kinds of a bond times the longest bond in sites)."""
    n = n_sites(args)
    kind = _kind(args)
    if kind == "chain":
        reach = 2 if args.model == "j1j2" else 1
    else:
        lx, ly = _lx_ly(args)
        reach = 2 * ly if args.model == "j1j2" else (ly if lx > 1 else max(1, ly - 1))
    return n, _DIMS[_local(args)], 2 + _FLAVOURS[args.model] * reach


# ---- text ----------------------------------------------------------------------------------------
def model_text(args: Any, p: dict[str, Any]) -> str:
    lat = lattice_of(args)
    parts = " ".join(f"{k}={p[k]:g}" if isinstance(p[k], float) else f"{k}={p[k]}" for k in MODEL_OPTIONS[args.model])
    return f"{args.model} on {lat.name} ({lat.sites} sites, {len(lat.nearest)} bonds) {parts}"


def _sector_words(sector: Any, conserve: str) -> str:
    if isinstance(sector, dict):
        return ", ".join(f"{k} = {v:g}" for k, v in sector.items())
    return f"{conserve} = {sector:g}"


def symmetry_text(conserve: str | None, sector: Any) -> str:
    if conserve == "N":
        return f"U(1) N, sector {_sector_words(sector, 'N')}"
    if conserve == "N,Sz":
        return f"U(1) x U(1) N and Sz, sector {_sector_words(sector, 'N')}"
    return "none (dense: the lowest state of any particle number)"


# ---- the reference -------------------------------------------------------------------------------
def reference(args: Any, charges: dict[str, Any]) -> Reference | None:
    """The exact lowest energy in the run's sector ``charges`` (e.g. ``{"N": 8, "Sz": 0.0}``;
    ``{}``: over all sectors, for a dense run), or None: free fermions at ``U = 0`` (hubbard) or
    ``V = 0`` (spinless) on any lattice, else exact diagonalization of at most
    :data:`ED_MAX_DIM` states (spin-1 sites: none)."""
    model, c, lat = args.model, couplings(args), lattice_of(args)
    n, bonds = lat.sites, list(lat.nearest)
    where = (
        ("in the sector " + ", ".join(f"{k} = {v:g}" for k, v in charges.items())) if charges else "over all sectors"
    )
    if model == "hubbard" and c["U"] == 0:
        e = free_electron_energy(n, bonds, N=charges.get("N"), Sz=charges.get("Sz"), t=c["t"], mu=c["mu"])
        return Reference(
            e, f"free fermions {where}: each spin fills the lowest levels of the {n}x{n} hopping matrix", True
        )
    if model == "spinless" and c["V"] == 0:
        e = free_fermion_energy(n, bonds, N=charges.get("N"), t=c["t"], mu=c["mu"])
        return Reference(e, f"free fermions {where}: the lowest levels of the {n}x{n} hopping matrix", True)
    if _local(args) == "spin-1":
        return None
    ed_model = {"heisenberg": "xxz", "xxz": "xxz"}.get(model, model)
    ed_c = {k: v for k, v in c.items() if k != "spin"}
    if model == "j1j2":
        ed_c = {"J1": c["J"], "J2": c["J2"], "h": c["h"]}
    dim = sector_dimension(ed_model, n, **charges)
    if dim > ED_MAX_DIM:
        return None
    e = exact_sector_energy(
        ed_model, n, bonds, next_bonds=lat.next_nearest if model == "j1j2" else (), couplings=ed_c, **charges
    )
    return Reference(e, f"exact diagonalization {where}, {dim} states", True)


def ed_states(args: Any, charges: dict[str, Any]) -> int | None:
    """The states exact diagonalization of the sector ``charges`` would need (None: spin 1, which
    it does not do)."""
    if _local(args) == "spin-1":
        return None
    ed_model = {"heisenberg": "xxz"}.get(args.model, args.model)
    return sector_dimension(ed_model, n_sites(args), **charges)
