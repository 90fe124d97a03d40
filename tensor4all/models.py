"""Built-in lattice models as MPOs (open chains).

* :func:`heisenberg` -- ``H = sum_i J (Sx Sx + Sy Sy) + Jz Sz Sz - h sum_i Sz``
  (written as ``J/2 (S+ S- + S- S+)`` so the MPO is real; bond dimension 5).
* :func:`xxz` -- the same model, named for its anisotropy ``Jz``.
* :func:`xx` -- the XX chain, ``Jz = 0`` (free fermions by Jordan-Wigner:
  :func:`tensor4all.references.xx_magnetization` evolves its product states exactly).
* :func:`tfim` -- ``H = -J sum_i Z Z - g sum_i X`` in Pauli matrices (bond dimension 3).

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

__all__ = ["heisenberg", "xxz", "xx", "tfim", "heisenberg_opsum", "tfim_opsum"]

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


def _is_zero(c: Any) -> bool:
    if is_traced(c):
        return False
    try:
        return complex(c) == 0
    except TypeError:
        return False


def heisenberg_opsum(L: int, J: Any = 1.0, Jz: Any = None, h: Any = 0.0) -> OpSum:
    """The OpSum of :func:`heisenberg`."""
    L = _check_size(L, "heisenberg")
    J = check_coupling(J, "heisenberg: J")
    Jz = J if Jz is None else check_coupling(Jz, "heisenberg: Jz")
    h = check_coupling(h, "heisenberg: h")
    os = OpSum()
    if not _is_zero(J):
        half = 0.5 * J
        for i in range(L - 1):
            os += (half, "S+", i, "S-", i + 1)
            os += (half, "S-", i, "S+", i + 1)
    if not _is_zero(Jz):
        for i in range(L - 1):
            os += (Jz, "Sz", i, "Sz", i + 1)
    if not _is_zero(h):
        mh = -h
        for i in range(L):
            os += (mh, "Sz", i)
    if len(os) == 0:  # all couplings zero: the zero operator
        os += (0.0, "Id", 0)
    return os


def heisenberg(L: int, J: Any = 1.0, Jz: Any = None, h: Any = 0.0, spin: str = "1/2",
               conserve: str | None = None) -> MPO:
    """Heisenberg/XXZ chain ``sum J (SxSx + SySy) + Jz SzSz - h sum Sz`` (``Jz`` defaults to ``J``);
    ``spin`` is ``"1/2"`` or ``"1"``. ``conserve="Sz"`` marks the MPO as conserving ``Sz``
    (``MPO.from_opsum``): ``dmrg`` then runs in a sector by default."""
    _check_spin(spin)
    if conserve not in (None, "Sz"):
        raise InvalidOptionError(f"heisenberg: conserve must be None or 'Sz', got {conserve!r}")
    return MPO.from_opsum(heisenberg_opsum(L, J, Jz, h), L, _SPINS[spin], conserve=conserve)


def xxz(L: int, J: Any = 1.0, Jz: Any = 1.0, h: Any = 0.0, spin: str = "1/2", conserve: str | None = None) -> MPO:
    """The XXZ chain: :func:`heisenberg` with anisotropy ``Jz``."""
    return heisenberg(L, J=J, Jz=Jz, h=h, spin=spin, conserve=conserve)


def xx(L: int, J: Any = 1.0, h: Any = 0.0, conserve: str | None = None) -> MPO:
    """The spin-1/2 XX chain ``sum J (SxSx + SySy) - h sum Sz``: :func:`heisenberg` with
    ``Jz = 0``, free fermions with hopping ``J/2`` (``conserve="Sz"`` as there)."""
    return heisenberg(L, J=J, Jz=0.0, h=h, conserve=conserve)


def tfim_opsum(L: int, J: Any = 1.0, g: Any = 1.0, conserve: str | None = None) -> OpSum:
    """The OpSum of :func:`tfim` (``conserve="parity"``: in the basis where the parity is
    diagonal, ``-J sum X X - g sum Z``)."""
    L = _check_size(L, "tfim")
    J = check_coupling(J, "tfim: J")
    g = check_coupling(g, "tfim: g")
    bond, field = _tfim_basis(conserve)
    os = OpSum()
    if not _is_zero(J):
        mj = -J
        for i in range(L - 1):
            os += (mj, bond, i, bond, i + 1)
    if not _is_zero(g):
        mg = -g
        for i in range(L):
            os += (mg, field, i)
    if len(os) == 0:
        os += (0.0, "Id", 0)
    return os


def _tfim_basis(conserve: Any) -> tuple[str, str]:
    if conserve is None or conserve == "none":
        return "Z", "X"
    if conserve == "parity":
        return "X", "Z"
    raise InvalidOptionError(f"tfim: conserve must be None or 'parity', got {conserve!r}")


def tfim(L: int, J: Any = 1.0, g: Any = 1.0, conserve: str | None = None) -> MPO:
    """Transverse-field Ising chain ``-J sum Z_i Z_{i+1} - g sum X_i`` (Pauli matrices).

    ``conserve="parity"`` writes the same model in the rotated basis, ``-J sum X_i X_{i+1}
    - g sum Z_i`` (TeNPy's ``TFIChain``): the same spectrum, with the parity ``prod_i Z_i``
    diagonal (the ``"pauli"`` space's charge ``"parity"``: 0 for ``Z = +1``, 1 for ``Z = -1``),
    so that ``dmrg`` can target an even or odd sector (the MPO is marked ``conserve="parity"``:
    ``dmrg`` runs in a parity sector by default)."""
    mark = "parity" if conserve == "parity" else None
    return MPO.from_opsum(tfim_opsum(L, J, g, conserve), L, "pauli", conserve=mark)
