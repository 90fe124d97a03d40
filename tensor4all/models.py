"""Built-in lattice models as MPOs (open chains, or any :mod:`tensor4all.lattices` lattice).

* :func:`heisenberg` -- ``H = sum_i J (Sx Sx + Sy Sy) + Jz Sz Sz - h sum_i Sz``
  (written as ``J/2 (S+ S- + S- S+)`` so the MPO is real; bond dimension 5).
* :func:`xxz` -- the same model, named for its anisotropy ``Jz``.
* :func:`xx` -- the XX chain, ``Jz = 0`` (free fermions by Jordan-Wigner:
  :func:`tensor4all.references.xx_magnetization` evolves its product states exactly).
* :func:`tfim` -- ``H = -J sum_i Z Z - g sum_i X`` in Pauli matrices (bond dimension 3).
* :func:`j1j2` -- the spin-1/2 J1-J2 Heisenberg model: ``J1`` on nearest, ``J2`` on
  next-nearest bonds (``(i, i + 2)`` on a chain).
* :func:`hubbard` -- the Fermi-Hubbard chain ``-t sum (c^dag_{i s} c_{i+1 s} + h.c.) +
  U sum n_up n_dn - mu sum n`` on ITensor's ``"electron"`` sites (bond dimension 6).

:func:`heisenberg`, :func:`xxz`, :func:`xx`, :func:`tfim` and :func:`j1j2` take an ``int``
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

from ._errors import InvalidOptionError
from ._mpo import MPO
from ._opsum import OpSum
from ._util import check_alloc, check_coupling, check_positive_int, is_traced
from .lattices import Lattice

__all__ = ["heisenberg", "xxz", "xx", "tfim", "j1j2", "hubbard", "heisenberg_opsum", "tfim_opsum", "j1j2_opsum",
           "hubbard_opsum"]

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


def heisenberg(L: int | Lattice, J: Any = 1.0, Jz: Any = None, h: Any = 0.0, spin: str = "1/2",
               conserve: str | None = None) -> MPO:
    """Heisenberg/XXZ model ``sum_<ij> J (SxSx + SySy) + Jz SzSz - h sum Sz`` (``Jz`` defaults to
    ``J``) on the open chain of ``L`` sites or on the ``nearest`` bonds of a lattice;
    ``spin`` is ``"1/2"`` or ``"1"``. ``conserve="Sz"`` marks the MPO as conserving ``Sz``
    (``MPO.from_opsum``): ``dmrg`` then runs in a sector by default."""
    _check_spin(spin)
    if conserve not in (None, "Sz"):
        raise InvalidOptionError(f"heisenberg: conserve must be None or 'Sz', got {conserve!r}")
    os = heisenberg_opsum(L, J, Jz, h)
    return MPO.from_opsum(os, _site_count(L), _SPINS[spin], conserve=conserve)


def xxz(L: int | Lattice, J: Any = 1.0, Jz: Any = 1.0, h: Any = 0.0, spin: str = "1/2",
        conserve: str | None = None) -> MPO:
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
    if conserve not in (None, "Sz"):
        raise InvalidOptionError(f"j1j2: conserve must be None or 'Sz', got {conserve!r}")
    os = j1j2_opsum(L, J1, J2, h)
    return MPO.from_opsum(os, _site_count(L), "spin-1/2", conserve=conserve)


#: the conserved charges :func:`hubbard` can mark (``MPO.from_opsum(..., conserve=...)``)
_HUBBARD_CONSERVE = (None, "N", "Sz")
#: a hopping term c^dag_{i s} c_{i+1 s} and its h.c. c^dag_{i+1 s} c_{i s}, per spin, with the
#: Jordan-Wigner string written out: ((ops on site i), (op on site i + 1))
_HOPS = {"up": ((("Cdagup", "F"), "Cup"), (("F", "Cup"), "Cdagup")),
         "dn": ((("Cdagdn", "F"), "Cdn"), (("F", "Cdn"), "Cdagdn"))}


def hubbard_opsum(L: int, t: Any = 1.0, U: Any = 4.0, mu: Any = 0.0) -> OpSum:
    """The OpSum of :func:`hubbard`, with the Jordan-Wigner strings of the nearest-neighbour
    hoppings written out: ``c^dag_{i s} c_{i+1 s} = (Cdag_s F)_i (C_s)_{i+1}`` and its
    Hermitian conjugate ``c^dag_{i+1 s} c_{i s} = (F C_s)_i (Cdag_s)_{i+1}`` (same-site
    factors multiply in written order)."""
    L = _check_size(L, "hubbard")
    if L < 2:
        raise InvalidOptionError(f"hubbard: the chain needs at least 2 sites, got L = {L}")
    t = check_coupling(t, "hubbard: t")
    U = check_coupling(U, "hubbard: U")
    mu = check_coupling(mu, "hubbard: mu")
    os = OpSum()
    if not _is_zero(t):
        mt = -t
        for i in range(L - 1):
            for (left, right), (left_hc, right_hc) in _HOPS.values():
                os += (mt, left[0], i, left[1], i, right, i + 1)
                os += (mt, left_hc[0], i, left_hc[1], i, right_hc, i + 1)
    if not _is_zero(U):
        for i in range(L):
            os += (U, "Nupdn", i)
    if not _is_zero(mu):
        mmu = -mu
        for i in range(L):
            os += (mmu, "Ntot", i)
    if len(os) == 0:
        os += (0.0, "Id", 0)
    return os


def hubbard(L: int, t: Any = 1.0, U: Any = 4.0, mu: Any = 0.0, conserve: str | None = None) -> MPO:
    """The Fermi-Hubbard chain (open boundaries) on ``L >= 2`` ``"electron"`` sites:

    ``H = -t sum_{i, s} (c^dag_{i s} c_{i+1 s} + h.c.) + U sum_i n_{i up} n_{i dn} - mu sum_i n_i``.

    Conventions are ITensor's: the site basis is ``|0>, |up>, |dn>, |up dn>`` with
    ``|up dn> = c^dag_up c^dag_dn |0>``, and the fermionic modes are ordered site by site, up
    before down, ``(0 up, 0 dn, 1 up, 1 dn, ...)``, for the Jordan-Wigner strings (see
    :func:`hubbard_opsum`). ``conserve`` (None, ``"N"`` or ``"Sz"``) checks and marks the
    MPO as ``MPO.from_opsum`` does; ``dmrg``, ``tdvp`` and ``tebd`` run in sectors of ``N``
    (``dmrg``'s default sector is half filling, ``N = L``). ``Sz`` is checked and marked, but
    the sector engine needs the states of one charge next to each other in the basis, which
    the electron's ``2Sz = (0, 1, -1, 0)`` are not: run those with ``conserve="N"`` or
    densely. Couplings may be tidu tracers (differentiable MPO).

    Issue 23 generalizes this to lattices and to OpSums with automatic Jordan-Wigner strings
    (``os += (-t, "Cdagup", i, "Cup", j)`` for any ``i, j``) and to ``N`` and ``Sz`` conserved
    together; the MPO built here is what those will build for the chain.
    """
    if conserve not in _HUBBARD_CONSERVE:
        raise InvalidOptionError(f"hubbard: conserve must be None, 'N' or 'Sz', got {conserve!r}")
    return MPO.from_opsum(hubbard_opsum(L, t, U, mu), L, "electron", conserve=conserve)
