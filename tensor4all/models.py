"""Built-in lattice models as MPOs (open chains, or any :mod:`tensor4all.lattices` lattice).

* :func:`heisenberg` -- ``H = sum_i J (Sx Sx + Sy Sy) + Jz Sz Sz - h sum_i Sz``
  (written as ``J/2 (S+ S- + S- S+)`` so the MPO is real; bond dimension 5).
* :func:`xxz` -- the same model, named for its anisotropy ``Jz``.
* :func:`xx` -- the XX chain, ``Jz = 0`` (free fermions by Jordan-Wigner:
  :func:`tensor4all.references.xx_magnetization` evolves its product states exactly).
* :func:`tfim` -- ``H = -J sum_i Z Z - g sum_i X`` in Pauli matrices (bond dimension 3).
* :func:`j1j2` -- the spin-1/2 J1-J2 Heisenberg model: ``J1`` on nearest, ``J2`` on
  next-nearest bonds (``(i, i + 2)`` on a chain).
* :func:`hubbard` -- the Fermi-Hubbard model ``-t sum_<ij> (c^dag_{i s} c_{j s} + h.c.) +
  U sum n_up n_dn - mu sum n`` on ITensor's ``"electron"`` sites (bond dimension 6 on a chain).
* :func:`spinless_fermions` -- ``-t sum_<ij> (c^dag_i c_j + h.c.) + V sum_<ij> n_i n_j -
  mu sum n`` on ``"fermion"`` sites.
* :func:`tj` -- the t-J model ``-t sum_<ij> (c^dag_{i s} c_{j s} + h.c.) + J sum_<ij> (S_i.S_j -
  n_i n_j / 4)`` on ``"tj"`` sites (no double occupancy).

The fermion models write their hoppings as plain terms (``(-t, "Cdagup", i, "Cup", j)`` and
its Hermitian conjugate ``(-conj(t), "Cdagup", j, "Cup", i)``: a complex ``t`` is a Peierls
phase along ``i -> j``, each bond pointing along the lattice, ``Lattice.nearest_directed``, so that
a uniform ``t = |t| e^{i phi}`` threads the flux ``L phi`` around a ring, ``Ly phi`` around a
cylinder); ``MPO.from_opsum`` inserts the Jordan-Wigner strings (modes ordered by site, up before
down).

All models take an ``int``
``L`` (the open chain; bonds ``(i, i + 1)``) or a :class:`~tensor4all.lattices.Lattice`, whose
``nearest`` (and, for ``j1j2``, ``next_nearest``) bonds carry the couplings, one term per bond,
in the lattice's site numbering (column-major for 2D lattices: long-range bonds, which
``MPO.from_opsum`` compiles as any other term).

Couplings may be numbers, tenferro scalars or tidu tracers; with tracers the MPO is
differentiable in them (``tidu.grad(lambda J: dmrg(heisenberg(L, J)).energy)``). A
coupling that is not a number raises :class:`Tensor4allTypeError`, NaN or infinity
:class:`NonFiniteError`, each naming the coupling.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tenferro as tf

from .tools.errors import InvalidOptionError
from .networks.mpo import MPO
from .operators.opsum import OpSum
from .tools.checks import check_alloc, check_coupling, check_positive_int, is_traced
from .lattices import Lattice

__all__ = [
    "heisenberg",
    "xxz",
    "xx",
    "tfim",
    "j1j2",
    "hubbard",
    "spinless_fermions",
    "tj",
    "heisenberg_opsum",
    "tfim_opsum",
    "j1j2_opsum",
    "hubbard_opsum",
    "spinless_fermions_opsum",
    "tj_opsum",
]

_SPINS = {"1/2": "spin-1/2", "1": "spin-1"}


def _check_spin(spin: Any) -> str:
    if not isinstance(spin, str) or spin not in _SPINS:
        raise InvalidOptionError(f"unknown spin {spin!r}; valid spins: {', '.join(_SPINS)}")
    return _SPINS[spin]


#: bytes a model needs per site while it is built, OpSum terms and MPO tensors together
#: (tracemalloc peak at L = 2000: ~4.9 KB for the spin-1/2 Heisenberg chain, ~8 KB for spin 1);
#: a chain beyond the machine's memory is refused before building
_BYTES_PER_SITE = 8192


def _check_size(L: int, what: str) -> int:
    L = check_positive_int(L, "L (number of sites)")
    check_alloc(L * _BYTES_PER_SITE, f"{what} of {L} sites")
    return L


def _sites_and_bonds(L: Any, what: str, next_nearest: bool = False) -> tuple[int, tuple, tuple]:
    """``(number of sites, nearest bonds, next-nearest bonds)`` of an ``int`` chain or a lattice."""
    if isinstance(L, Lattice):
        n = _check_size(L.sites, what)
        return n, L.nearest, L.next_nearest
    n = _check_size(L, what)
    near = tuple((i, i + 1) for i in range(n - 1))
    return n, near, (tuple((i, i + 2) for i in range(n - 2)) if next_nearest else ())


def _site_count(L: Any) -> int:
    """The number of sites of a checked ``int`` chain or lattice (after its OpSum was built)."""
    return L.sites if isinstance(L, Lattice) else L


def _add_heisenberg_bonds(os: OpSum, bonds: Any, J: Any, Jz: Any) -> None:
    """``J (SxSx + SySy) + Jz SzSz`` on every bond, the XY part as ``J/2 (S+S- + S-S+)``."""
    if not _is_zero(J):
        half = 0.5 * J
        for i, j in bonds:
            os += (half, "S+", i, "S-", j)
            os += (half, "S-", i, "S+", j)
    if not _is_zero(Jz):
        for i, j in bonds:
            os += (Jz, "Sz", i, "Sz", j)


def _add_field(os: OpSum, n: int, h: Any, op: str) -> None:
    if not _is_zero(h):
        mh = -h
        for i in range(n):
            os += (mh, op, i)


def _is_zero(c: Any) -> bool:
    if is_traced(c):
        return False
    try:
        return complex(c) == 0
    except TypeError:
        return False


def heisenberg_opsum(L: int | Lattice, J: Any = 1.0, Jz: Any = None, h: Any = 0.0) -> OpSum:
    """The OpSum of :func:`heisenberg` (``L``: an ``int`` chain or a lattice)."""
    n, bonds, _ = _sites_and_bonds(L, "heisenberg")
    J = check_coupling(J, "heisenberg: J")
    Jz = J if Jz is None else check_coupling(Jz, "heisenberg: Jz")
    h = check_coupling(h, "heisenberg: h")
    os = OpSum()
    _add_heisenberg_bonds(os, bonds, J, Jz)
    _add_field(os, n, h, "Sz")
    if len(os) == 0:  # all couplings zero (or no bonds): the zero operator
        os += (0.0, "Id", 0)
    return os


def heisenberg(
    L: int | Lattice, J: Any = 1.0, Jz: Any = None, h: Any = 0.0, spin: str = "1/2", conserve: str | None = None
) -> MPO:
    """Heisenberg/XXZ model ``sum_<ij> J (SxSx + SySy) + Jz SzSz - h sum Sz`` (``Jz`` defaults to
    ``J``) on the open chain of ``L`` sites or on the ``nearest`` bonds of a lattice;
    ``spin`` is ``"1/2"`` or ``"1"``. ``conserve="Sz"`` marks the MPO as conserving ``Sz``
    (``MPO.from_opsum``): ``dmrg`` then runs in a sector by default."""
    _check_spin(spin)
    conserve = _check_conserve(conserve, (None, "Sz"), "heisenberg")
    os = heisenberg_opsum(L, J, Jz, h)
    return MPO.from_opsum(os, _site_count(L), _SPINS[spin], conserve=conserve)


def xxz(
    L: int | Lattice, J: Any = 1.0, Jz: Any = 1.0, h: Any = 0.0, spin: str = "1/2", conserve: str | None = None
) -> MPO:
    """The XXZ model (chain or lattice): :func:`heisenberg` with anisotropy ``Jz``."""
    return heisenberg(L, J=J, Jz=Jz, h=h, spin=spin, conserve=conserve)


def xx(L: int | Lattice, J: Any = 1.0, h: Any = 0.0, conserve: str | None = None) -> MPO:
    """The spin-1/2 XX model (chain or lattice) ``sum J (SxSx + SySy) - h sum Sz``: :func:`heisenberg` with
    ``Jz = 0``, free fermions with hopping ``J/2`` (``conserve="Sz"`` as there)."""
    return heisenberg(L, J=J, Jz=0.0, h=h, conserve=conserve)


def tfim_opsum(L: int | Lattice, J: Any = 1.0, g: Any = 1.0, conserve: str | None = None) -> OpSum:
    """The OpSum of :func:`tfim` (``conserve="parity"``: in the basis where the parity is
    diagonal, ``-J sum X X - g sum Z``; ``L``: an ``int`` chain or a lattice)."""
    n, bonds, _ = _sites_and_bonds(L, "tfim")
    J = check_coupling(J, "tfim: J")
    g = check_coupling(g, "tfim: g")
    bond, field = _tfim_basis(conserve)
    os = OpSum()
    if not _is_zero(J):
        mj = -J
        for i, j in bonds:
            os += (mj, bond, i, bond, j)
    _add_field(os, n, g, field)
    if len(os) == 0:
        os += (0.0, "Id", 0)
    return os


def _tfim_basis(conserve: Any) -> tuple[str, str]:
    if conserve is None or conserve == "none":
        return "Z", "X"
    if conserve == "parity":
        return "X", "Z"
    raise InvalidOptionError(f"tfim: conserve must be None or 'parity', got {conserve!r}")


def tfim(L: int | Lattice, J: Any = 1.0, g: Any = 1.0, conserve: str | None = None) -> MPO:
    """Transverse-field Ising model ``-J sum_<ij> Z_i Z_j - g sum X_i`` (Pauli matrices) on the
    open chain of ``L`` sites (``<ij> = (i, i + 1)``) or on the ``nearest`` bonds of a lattice.

    ``conserve="parity"`` writes the same model in the rotated basis, ``-J sum X_i X_{i+1}
    - g sum Z_i`` (TeNPy's ``TFIChain``): the same spectrum, with the parity ``prod_i Z_i``
    diagonal (the ``"pauli"`` space's charge ``"parity"``: 0 for ``Z = +1``, 1 for ``Z = -1``),
    so that ``dmrg`` can target an even or odd sector (the MPO is marked ``conserve="parity"``:
    ``dmrg`` runs in a parity sector by default)."""
    mark = "parity" if conserve == "parity" else None
    os = tfim_opsum(L, J, g, conserve)
    return MPO.from_opsum(os, _site_count(L), "pauli", conserve=mark)


def j1j2_opsum(L: int | Lattice, J1: Any = 1.0, J2: Any = 0.5, h: Any = 0.0) -> OpSum:
    """The OpSum of :func:`j1j2`."""
    n, near, nnear = _sites_and_bonds(L, "j1j2", next_nearest=True)
    J1 = check_coupling(J1, "j1j2: J1")
    J2 = check_coupling(J2, "j1j2: J2")
    h = check_coupling(h, "j1j2: h")
    os = OpSum()
    _add_heisenberg_bonds(os, near, J1, J1)
    _add_heisenberg_bonds(os, nnear, J2, J2)
    _add_field(os, n, h, "Sz")
    if len(os) == 0:
        os += (0.0, "Id", 0)
    return os


def j1j2(L: int | Lattice, J1: Any = 1.0, J2: Any = 0.5, h: Any = 0.0, conserve: str | None = None) -> MPO:
    """The spin-1/2 J1-J2 Heisenberg model ``J1 sum_<ij> S_i.S_j + J2 sum_<<ij>> S_i.S_j - h sum Sz``:
    ``<ij>`` the ``nearest`` and ``<<ij>>`` the ``next_nearest`` bonds of a lattice, or on the open
    chain of ``L`` sites ``(i, i + 1)`` and ``(i, i + 2)``. ``conserve="Sz"`` as in :func:`heisenberg`;
    couplings may be tidu tracers (differentiable MPO)."""
    conserve = _check_conserve(conserve, (None, "Sz"), "j1j2")
    os = j1j2_opsum(L, J1, J2, h)
    return MPO.from_opsum(os, _site_count(L), "spin-1/2", conserve=conserve)


#: the conserved charges :func:`hubbard` can mark (``MPO.from_opsum(..., conserve=...)``)
_HUBBARD_CONSERVE = (None, "N", "Sz", "N,Sz")
#: those of :func:`tj`
_TJ_CONSERVE = (None, "N", "Sz", "N,Sz")
#: those of :func:`spinless_fermions`
_N_CONSERVE = (None, "N")


def _fermion_sites(L: Any, what: str) -> tuple[int, tuple]:
    """``(number of sites, nearest bonds)`` of an ``int`` chain or a lattice of at least 2 sites,
    each bond ``(i, j)`` pointing along the lattice (``Lattice.nearest_directed``): the direction
    of a complex hopping."""
    n, bonds, _ = _sites_and_bonds(L, what)
    if n < 2:
        raise InvalidOptionError(f"{what}: needs at least 2 sites, got {n}")
    return n, (L.nearest_directed if isinstance(L, Lattice) else bonds)


def _check_conserve(conserve: Any, valid: tuple, what: str) -> str | None:
    """``conserve`` checked against ``valid``; ``"none"`` (the spelling of ``dmrg`` and the command
    line) is None."""
    if isinstance(conserve, str) and conserve == "none":
        return None
    if conserve not in valid:
        names = [repr(c) if c is not None else "None" for c in valid]
        raise InvalidOptionError(
            f"{what}: conserve must be {', '.join(names[:-1])} or {names[-1]} ('none' is None), got {conserve!r}"
        )
    return conserve


def _add_hopping(os: OpSum, bonds: Any, t: Any, flavours: tuple[tuple[str, str], ...]) -> None:
    """``-t c^dag_i c_j - conj(t) c^dag_j c_i`` on every bond ``(i, j)``, per flavour ``(Cdag,
    C)``: plain fermionic terms, whose Jordan-Wigner strings ``MPO.from_opsum`` inserts. A complex
    ``t`` is a Peierls phase along ``i -> j``; its Hermitian partner carries ``conj(t)`` (with
    ``t`` on both, the MPO was not Hermitian)."""
    if _is_zero(t):
        return
    mt, mtc = -t, -_conj(t)
    for i, j in bonds:
        for cdag, c in flavours:
            os += (mt, cdag, i, c, j)
            os += (mtc, cdag, j, c, i)


def _conj(x: Any) -> Any:
    """The complex conjugate of a coupling (a number, a tenferro tensor or a tidu tracer)."""
    if isinstance(x, (complex, np.complexfloating)):
        return x.conjugate()
    dtype = getattr(x, "dtype", None)
    if dtype is not None and getattr(dtype, "is_complex", False):
        return tf.conj(x)
    return x


def _add_onsite(os: OpSum, n: int, c: Any, op: str) -> None:
    if not _is_zero(c):
        for i in range(n):
            os += (c, op, i)


def _finish(os: OpSum) -> OpSum:
    if len(os) == 0:  # all couplings zero: the zero operator
        os += (0.0, "Id", 0)
    return os


_SPINFUL = (("Cdagup", "Cup"), ("Cdagdn", "Cdn"))


def hubbard_opsum(L: int | Lattice, t: Any = 1.0, U: Any = 4.0, mu: Any = 0.0) -> OpSum:
    """The OpSum of :func:`hubbard`: plain terms ``(-t, "Cdagup", i, "Cup", j)`` and
    ``(-conj(t), "Cdagup", j, "Cup", i)`` per nearest bond ``(i, j)`` and spin (``MPO.from_opsum``
    inserts the Jordan-Wigner strings), ``(U, "Nupdn", i)`` and ``(-mu, "Ntot", i)``."""
    n, bonds = _fermion_sites(L, "hubbard")
    t = check_coupling(t, "hubbard: t")
    U = check_coupling(U, "hubbard: U")
    mu = check_coupling(mu, "hubbard: mu")
    os = OpSum()
    _add_hopping(os, bonds, t, _SPINFUL)
    _add_onsite(os, n, U, "Nupdn")
    _add_field(os, n, mu, "Ntot")
    return _finish(os)


def hubbard(L: int | Lattice, t: Any = 1.0, U: Any = 4.0, mu: Any = 0.0, conserve: str | None = "N,Sz") -> MPO:
    """The Fermi-Hubbard model on the open chain of ``L >= 2`` ``"electron"`` sites or on the
    ``nearest`` bonds ``<ij>`` of a lattice:

    ``H = -t sum_{<ij>, s} (c^dag_{i s} c_{j s} + h.c.) + U sum_i n_{i up} n_{i dn} - mu sum_i n_i``.

    Conventions are ITensor's: the site basis is ``|0>, |up>, |dn>, |up dn>`` with
    ``|up dn> = c^dag_up c^dag_dn |0>``, and the fermionic modes are ordered site by site (in
    the lattice's numbering), up before down, ``(0 up, 0 dn, 1 up, 1 dn, ...)``, for the
    Jordan-Wigner strings, which ``MPO.from_opsum`` inserts (a bond ``(i, j)`` of a 2D lattice
    carries the string over the sites between). ``conserve`` (default ``"N,Sz"``; None, ``"N"``,
    ``"Sz"``) checks and marks the MPO as ``MPO.from_opsum`` does, so that ``dmrg`` runs in a
    sector of ``(N, Sz)`` by default (``sector={"N": ..., "Sz": ...}``, by default half filling
    ``N = L`` at the lowest ``|Sz|``; ``dmrg(..., conserve="none")`` runs densely, its sector
    then set by the start state) or of ``N`` alone; ``tdvp`` and ``tebd`` keep the sectors of a
    symmetric start state. ``Sz`` alone is checked and marked, but the sector engine needs the states of
    one charge next to each other in the basis, which the electron's ``2Sz = (0, 1, -1, 0)`` are
    not: run it with ``"N,Sz"``. Couplings may be tidu tracers (differentiable MPO).
    """
    conserve = _check_conserve(conserve, _HUBBARD_CONSERVE, "hubbard")
    os = hubbard_opsum(L, t, U, mu)
    return MPO.from_opsum(os, _site_count(L), "electron", conserve=conserve)


def spinless_fermions_opsum(L: int | Lattice, t: Any = 1.0, V: Any = 0.0, mu: Any = 0.0) -> OpSum:
    """The OpSum of :func:`spinless_fermions`."""
    n, bonds = _fermion_sites(L, "spinless_fermions")
    t = check_coupling(t, "spinless_fermions: t")
    V = check_coupling(V, "spinless_fermions: V")
    mu = check_coupling(mu, "spinless_fermions: mu")
    os = OpSum()
    _add_hopping(os, bonds, t, (("Cdag", "C"),))
    if not _is_zero(V):
        for i, j in bonds:
            os += (V, "N", i, "N", j)
    _add_field(os, n, mu, "N")
    return _finish(os)


def spinless_fermions(L: int | Lattice, t: Any = 1.0, V: Any = 0.0, mu: Any = 0.0, conserve: str | None = "N") -> MPO:
    """Spinless fermions on the open chain of ``L >= 2`` ``"fermion"`` sites or on the ``nearest``
    bonds ``<ij>`` of a lattice:

    ``H = -t sum_<ij> (c^dag_i c_j + h.c.) + V sum_<ij> n_i n_j - mu sum_i n_i``

    (the modes ordered by site; ``MPO.from_opsum`` inserts the Jordan-Wigner strings).
    ``conserve="N"`` (the default; None: unmarked) marks the MPO as conserving the particle
    number, so that ``dmrg`` runs in a sector (``sector=N``, by default half filling).
    Couplings may be tidu tracers (differentiable MPO)."""
    conserve = _check_conserve(conserve, _N_CONSERVE, "spinless_fermions")
    os = spinless_fermions_opsum(L, t, V, mu)
    return MPO.from_opsum(os, _site_count(L), "fermion", conserve=conserve)


def tj_opsum(L: int | Lattice, t: Any = 1.0, J: Any = 0.5) -> OpSum:
    """The OpSum of :func:`tj`: the exchange as ``J/2 (S+ S- + S- S+) + J Sz Sz - J/4 Ntot Ntot``."""
    _, bonds = _fermion_sites(L, "tj")
    t = check_coupling(t, "tj: t")
    J = check_coupling(J, "tj: J")
    os = OpSum()
    _add_hopping(os, bonds, t, _SPINFUL)
    if not _is_zero(J):
        _add_heisenberg_bonds(os, bonds, J, J)
        mq = -0.25 * J
        for i, j in bonds:
            os += (mq, "Ntot", i, "Ntot", j)
    return _finish(os)


def tj(L: int | Lattice, t: Any = 1.0, J: Any = 0.5, conserve: str | None = "N,Sz") -> MPO:
    """The t-J model on the open chain of ``L >= 2`` ``"tj"`` sites (``|0>, |up>, |dn>``, no double
    occupancy) or on the ``nearest`` bonds ``<ij>`` of a lattice:

    ``H = -t sum_{<ij>, s} (c^dag_{i s} c_{j s} + h.c.) + J sum_<ij> (S_i.S_j - n_i n_j / 4)``

    with the hopping projected on the space without double occupancy (the ``"tj"`` operators)
    and the modes ordered as in :func:`hubbard`. ``conserve`` (default ``"N,Sz"``; None, ``"N"``,
    ``"Sz"``) marks the MPO as conserving the particle number and/or Sz, so that ``dmrg`` runs
    in a sector by default (``sector={"N": ..., "Sz": ...}``, by default ``N = L / 2`` (the
    middle of ``0..L``) at the lowest ``|Sz|``). Couplings may be tidu tracers."""
    conserve = _check_conserve(conserve, _TJ_CONSERVE, "tj")
    os = tj_opsum(L, t, J)
    return MPO.from_opsum(os, _site_count(L), "tj", conserve=conserve)


def __dir__() -> list[str]:
    """The public names (``__all__``): what ``dir`` and tab completion show."""
    return sorted(__all__)
