"""Measurements of fermion and spin states that users compare across codes (TeNPy's
``expectation_value``/``correlation_function``, ITensor's ``expect``/``correlation_matrix``).

Every function takes an :class:`~tensor4all.MPS` of ``"electron"``, ``"tj"``, ``"fermion"`` or
spin sites and is built on :meth:`MPS.expect` (``site=None``: every site, one site's
contraction each on the state's Schmidt form) and :meth:`MPS.correlation_matrix` (one
left-to-right pass with the rows batched; fermionic pairs get their Jordan-Wigner strings
there; a symmetric MPS is measured on its charge blocks):

* :func:`density` -- ``<n_i>`` per site (``Ntot``; ``N`` on ``"fermion"`` sites).
* :func:`double_occupancy` -- ``<n_{i up} n_{i dn}>`` per site (``"electron"`` sites).
* :func:`spin_correlation` -- ``<S_i . S_j> = <Sz_i Sz_j> + (<S+_i S-_j> + <S-_i S+_j>) / 2``.
* :func:`charge_correlation` -- the connected ``<n_i n_j> - <n_i><n_j>``.
* :func:`one_particle_density_matrix` -- ``<c^dag_i c_j>`` (per spin, or summed over spins).
* :func:`entanglement_per_sector` -- the Schmidt spectrum of a symmetric MPS at one bond by
  charge sector: the probability of each charge of the left half and its share of the
  entanglement entropy (:class:`SectorEntanglement`).

``local`` names the local space of the sites (a name of ``tensor4all.LOCAL_SPACES`` or a
:class:`~tensor4all.LocalSpace`). By default it is the space :meth:`MPS.expect` uses for the
site dimension (``"spin-1/2"`` for 2, ``"spin-1"`` for 3) when that space has the operators
the measurement needs, else the one built-in space of that dimension that has them
(``"fermion"`` for 2, ``"tj"`` for 3, ``"electron"`` for 4): ``density`` of a dimension-3 state
is a t-J density, ``spin_correlation`` of one a spin-1 correlation (pass ``local="tj"``). A
symmetric state whose charges only one built-in space of its dimension declares is measured in
that space (a conserved t-J state: ``"tj"``; :meth:`MPS.expect` does the same).

Costs: the Schmidt form once per state (``dmrg`` returns it made; otherwise a QR and an SVD
sweep on the first call), then a per-site profile is ``L`` one-site contractions and a
correlation matrix over ``n`` sites ``O(n^2)`` block contractions in ``O(L)`` batched steps (a
row ``i=`` or ``pairs=`` restrict it to the sites involved).

Bad input raises typed errors: :class:`~tensor4all.Tensor4allTypeError` (not an MPS, a site
that is not an integer), :class:`~tensor4all.SiteOutOfRangeError` (a site or bond outside the
chain), :class:`~tensor4all.InvalidOptionError` (a local space without the needed operators, a
bad ``spin``, a dense MPS where sectors are needed), :class:`~tensor4all.DimensionMismatchError`
(sites of another dimension than the local space's) and :class:`~tensor4all.UnknownLocalSpaceError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NotDifferentiableError,
    SiteOutOfRangeError,
    Tensor4allTypeError,
)
from .tools.checks import any_traced, check_index
from .sites.local_spaces import UnknownLocalSpaceError
from .sites.local_spaces import BUILT_IN_SPACES, LOCAL_SPACES, LocalSpace, default_local_space, local_space
from .networks.chain import leaves_of
from .networks.mps import MPS
from .networks.symmetric_sites import state_local
from .tools.threads import thread_policy

__all__ = [
    "density",
    "double_occupancy",
    "spin_correlation",
    "charge_correlation",
    "one_particle_density_matrix",
    "entanglement_per_sector",
    "SectorEntanglement",
]

#: the spin labels :func:`one_particle_density_matrix` takes, and the operator pair of each
_SPIN_FLAVOURS = {"up": ("Cdagup", "Cup"), "dn": ("Cdagdn", "Cdn")}
_SPIN_ALIASES = {"up": "up", "dn": "dn", "down": "dn"}


@dataclass(frozen=True)
class SectorEntanglement:
    """One charge sector of the Schmidt spectrum at a bond (:func:`entanglement_per_sector`):
    ``probability`` ``p_q = sum_a s_a^2`` over the sector's Schmidt values ``s_a`` (the weight of
    the left half's charge ``q``), ``entropy`` its contribution ``-sum_a s_a^2 ln s_a^2`` to the
    von Neumann entropy (the contributions add up to :meth:`MPS.entanglement_entropy`), and
    ``schmidt_values`` (descending)."""

    probability: float
    entropy: float
    schmidt_values: np.ndarray

    def as_dict(self) -> dict[str, Any]:
        """``{"probability", "entropy", "schmidt_values"}`` with plain Python numbers (for JSON)."""
        return {
            "probability": self.probability,
            "entropy": self.entropy,
            "schmidt_values": [float(s) for s in self.schmidt_values],
        }


# ---- checks ------------------------------------------------------------------------------
def _check_mps(psi: Any, what: str) -> MPS:
    if not isinstance(psi, MPS):
        raise Tensor4allTypeError(f"{what}: expected an MPS, got {type(psi).__name__}")
    if any_traced(leaves_of(psi.tensors)):
        raise NotDifferentiableError(
            f"{what} works on concrete states (its results are NumPy arrays) and is not differentiable; "
            "differentiate MPS.expect, MPS.correlation or MPS.correlation_matrix instead"
        )
    return psi


def _space(psi: MPS, local: Any, needs: Iterable[tuple[str, ...]], what: str) -> LocalSpace:
    """The local space of ``psi``'s sites that has, for each group in ``needs``, one of its
    operators (``("Ntot", "N")``: either); see the module for the default."""
    needs = [tuple(g) for g in needs]
    dims = sorted(set(psi.phys_dims))
    if len(dims) != 1:
        raise DimensionMismatchError(
            f"{what}: the sites have different dimensions {dims}; the measurements need one local space on every site"
        )
    d = dims[0]

    def fits(sp: LocalSpace) -> bool:
        names = set(sp.operator_names())
        return all(any(op in names for op in group) for group in needs)

    wanted = " and ".join("/".join(g) for g in needs)
    local = state_local(psi._grading, psi.phys_dims, local)  # a symmetric state's charges may name it
    if local is None:
        try:
            first = default_local_space(d)
        except UnknownLocalSpaceError:
            first = None
        if first is not None and fits(first):
            return first
        found = [sp for sp in LOCAL_SPACES.values() if sp.name in BUILT_IN_SPACES and sp.dim == d and fits(sp)]
        if len(found) != 1:
            if found:  # several spaces of this dimension fit: the user chooses
                raise InvalidOptionError(
                    f"{what}: cannot tell the local space of sites of dimension {d}: the built-in "
                    f"spaces with {wanted} are {', '.join(repr(sp.name) for sp in found)}; pass "
                    "local= one of them"
                )
            valid = [
                f"{sp.name!r} (d = {sp.dim})" for sp in LOCAL_SPACES.values() if sp.name in BUILT_IN_SPACES and fits(sp)
            ]
            raise InvalidOptionError(
                f"{what}: no built-in local space of dimension {d} has {wanted}; {what} needs a "
                f"state on sites of the space{'s' if len(valid) > 1 else ''} "
                f"{', '.join(valid) or '(none built in)'}"
            )
        return found[0]
    if not isinstance(local, (str, LocalSpace)):
        raise Tensor4allTypeError(
            f"{what}: local must be a local-space name or a LocalSpace, got {type(local).__name__}"
        )
    sp = local_space(local)
    if not fits(sp):
        valid = [name for name, s in LOCAL_SPACES.items() if fits(s)]
        raise InvalidOptionError(
            f"{what}: the local space {sp.name!r} has no {wanted}; {what} needs one of the "
            f"spaces {', '.join(map(repr, valid))}"
        )
    if sp.dim != d:
        raise DimensionMismatchError(
            f"{what}: the local space {sp.name!r} has dimension {sp.dim}, but the sites have dimension {d}"
        )
    return sp


def _site(psi: MPS, i: Any, what: str) -> int:
    return check_index(i, psi.L, what)


def _pairs(psi: MPS, i: Any, pairs: Any, what: str) -> list[tuple[int, int]] | None:
    """The pairs asked for: ``pairs`` checked, the row ``i``, or None for the whole matrix."""
    if i is not None and pairs is not None:
        raise InvalidOptionError(f"{what}: give a row i= or a list of pairs=, not both")
    if i is not None:
        r = _site(psi, i, f"{what}: site i")
        return [(r, j) for j in range(psi.L)]
    if pairs is None:
        return None
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise Tensor4allTypeError(f"{what}: pairs must be a list of site pairs (i, j), got {type(pairs).__name__}")
    out = []
    for p in pairs:
        if isinstance(p, (str, bytes)) or not hasattr(p, "__len__") or len(p) != 2:
            raise Tensor4allTypeError(f"{what}: each of pairs must be a pair of sites (i, j), got {p!r}")
        out.append((_site(psi, p[0], f"{what}: site"), _site(psi, p[1], f"{what}: site")))
    return out


def _density_op(sp: LocalSpace) -> str:
    return "Ntot" if "Ntot" in sp.operator_names() else "N"


# ---- one-site profiles ---------------------------------------------------------------------
def _profile(psi: MPS, op: str, sp: LocalSpace) -> np.ndarray:
    """``<op_i>`` at every site: one pass of environments (:meth:`MPS.expect` with ``site=None``)."""
    return np.real(np.asarray(psi.expect(op, None, local=sp))).astype(float)


@thread_policy()
def density(psi: MPS, local: str | LocalSpace | None = None) -> np.ndarray:
    """``<n_i>`` for every site ``i`` (``Ntot`` of ``"electron"``/``"tj"`` sites, ``N`` of
    ``"fermion"`` sites), a float array of length ``L``, from one pass of environments."""
    psi = _check_mps(psi, "density")
    sp = _space(psi, local, [("Ntot", "N")], "density")
    return _profile(psi, _density_op(sp), sp)


@thread_policy()
def double_occupancy(psi: MPS, local: str | LocalSpace | None = None) -> np.ndarray:
    """``<n_{i up} n_{i dn}>`` (``Nupdn``) for every site ``i`` of ``"electron"`` sites, a float
    array of length ``L`` (``"tj"`` sites exclude double occupancy and have no ``Nupdn``)."""
    psi = _check_mps(psi, "double_occupancy")
    sp = _space(psi, local, [("Nupdn",)], "double_occupancy")
    return _profile(psi, "Nupdn", sp)


# ---- two-site correlations -------------------------------------------------------------------
def _sites_of(wanted: list[tuple[int, int]] | None, L: int) -> list[int]:
    """The sites a set of pairs involves (all for the whole matrix), sorted."""
    return list(range(L)) if wanted is None else sorted({s for p in wanted for s in p})


def _select(matrix: np.ndarray, sites: list[int], wanted: list[tuple[int, int]] | None) -> np.ndarray:
    """The whole matrix (``wanted`` None) or one value per wanted pair, from the matrix over ``sites``."""
    if wanted is None:
        return matrix
    where = {s: k for k, s in enumerate(sites)}
    return np.array([matrix[where[a], where[b]] for a, b in wanted])


def _matrix(psi: MPS, a: str, b: str, sites: list[int], sp: LocalSpace) -> np.ndarray:
    return np.asarray(psi.correlation_matrix(a, b, sites=sites, local=sp))


@thread_policy()
def spin_correlation(
    psi: MPS,
    i: int | None = None,
    *,
    pairs: Iterable[tuple[int, int]] | None = None,
    local: str | LocalSpace | None = None,
) -> np.ndarray:
    """``<S_i . S_j> = <Sz_i Sz_j> + (<S+_i S-_j> + <S-_i S+_j>) / 2`` (``3/4 <n_i - 2 n_{i up} n_{i dn}>``
    on the diagonal of electrons): the ``L x L`` matrix, the row ``i`` (length ``L``), or one value
    per pair of ``pairs`` (e.g. a lattice's ``nearest`` bonds). Spin and fermion sites with ``Sz``,
    ``S+``, ``S-`` (``"spin-1/2"``, ``"spin-1"``, ``"electron"``, ``"tj"``). Two correlation matrices
    (:meth:`MPS.correlation_matrix`, ``O(n^2)`` transfers over the ``n`` sites involved) and the
    ``Sz`` profile."""
    psi = _check_mps(psi, "spin_correlation")
    sp = _space(psi, local, [("Sz",), ("S+",), ("S-",)], "spin_correlation")
    wanted = _pairs(psi, i, pairs, "spin_correlation")
    sites = _sites_of(wanted, psi.L)
    # <S-_i S+_j> = conj <S+_j S-_i> off the diagonal; on it S-S+ = S+S- - 2 Sz ([S+, S-] = 2 Sz)
    plus_minus = _matrix(psi, "S+", "S-", sites, sp)
    total = _matrix(psi, "Sz", "Sz", sites, sp) + 0.5 * (plus_minus + plus_minus.conj().T)
    total = np.real(total).astype(float) - np.diag(_profile(psi, "Sz", sp)[sites])
    return _select(total, sites, wanted)


@thread_policy()
def charge_correlation(
    psi: MPS,
    i: int | None = None,
    *,
    pairs: Iterable[tuple[int, int]] | None = None,
    local: str | LocalSpace | None = None,
    density: Any = None,
) -> np.ndarray:
    """The connected density correlation ``<n_i n_j> - <n_i><n_j>``: the ``L x L`` matrix, the
    row ``i``, or one value per pair of ``pairs`` (``n``: ``Ntot``, or ``N`` of ``"fermion"``
    sites). One correlation matrix (:meth:`MPS.correlation_matrix`) and the densities (or
    ``density``, the profile of :func:`density` if already measured)."""
    psi = _check_mps(psi, "charge_correlation")
    sp = _space(psi, local, [("Ntot", "N")], "charge_correlation")
    op = _density_op(sp)
    wanted = _pairs(psi, i, pairs, "charge_correlation")
    sites = _sites_of(wanted, psi.L)
    if density is not None:
        given = np.asarray(density, dtype=float) if not isinstance(density, (str, bytes)) else np.array([])
        if given.shape != (psi.L,) or not np.all(np.isfinite(given)):
            raise InvalidOptionError(
                f"charge_correlation: density must be the {psi.L} finite values <n_i> of the sites, got {density!r}"
            )
    else:
        given = _profile(psi, op, sp)
    n = given[sites]
    connected = np.real(_matrix(psi, op, op, sites, sp)).astype(float) - np.outer(n, n)
    return _select(connected, sites, wanted)


@thread_policy()
def one_particle_density_matrix(psi: MPS, spin: str | None = None, local: str | LocalSpace | None = None) -> np.ndarray:
    """The one-particle density matrix ``rho_ij = <c^dag_i c_j>`` (``L x L``, Hermitian; real for
    a real state): of spin ``"up"`` or ``"dn"`` (also ``"down"``) on ``"electron"``/``"tj"`` sites,
    summed over both spins for ``spin=None``; of the spinless fermions on ``"fermion"`` sites
    (``spin=None`` only). Its trace is the particle number; its eigenvalues are the natural
    occupations. One :meth:`MPS.correlation_matrix` per spin (Jordan-Wigner strings included)."""
    psi = _check_mps(psi, "one_particle_density_matrix")
    sp = _space(psi, local, [("Cdag", "Cdagup"), ("C", "Cup")], "one_particle_density_matrix")
    names = set(sp.operator_names())
    spinful = "Cdagup" in names
    if spin is not None and (not isinstance(spin, str) or spin not in _SPIN_ALIASES):
        raise InvalidOptionError(
            f"one_particle_density_matrix: spin must be 'up', 'dn' or None (both spins summed), got {spin!r}"
        )
    if not spinful:
        if spin is not None:
            raise InvalidOptionError(
                f"one_particle_density_matrix: the {sp.name!r} fermions are spinless; give spin=None, not {spin!r}"
            )
        flavours = [("Cdag", "C")]
    else:
        flavours = [_SPIN_FLAVOURS[_SPIN_ALIASES[spin]]] if spin is not None else list(_SPIN_FLAVOURS.values())
    sites = list(range(psi.L))
    rho = sum(_matrix(psi, cdag, c, sites, sp).astype(complex) for cdag, c in flavours)
    if np.dtype(psi.dtype).kind != "c":
        return rho.real.copy()
    return rho


# ---- symmetry-resolved entanglement ------------------------------------------------------------
@thread_policy()
def entanglement_per_sector(psi: MPS, bond: int) -> dict[Any, SectorEntanglement]:
    """The entanglement at ``bond`` (between sites ``bond`` and ``bond + 1``) of a symmetric MPS by
    charge sector of the left half (keys as :meth:`MPS.entanglement_spectrum`: the charge in
    physical units, e.g. ``N``, or a tuple such as ``(N, Sz)`` for a product of charges):
    :class:`SectorEntanglement` with the sector's probability ``p_q`` and entropy contribution
    ``S_q = -sum_a s_a^2 ln s_a^2``. ``sum_q p_q = 1`` and ``sum_q S_q`` is the entanglement
    entropy; ``-sum_q p_q ln p_q`` is the number (charge) entropy. A dense MPS has no sectors
    (:class:`InvalidOptionError`)."""
    psi = _check_mps(psi, "entanglement_per_sector")
    if isinstance(bond, (bool, np.bool_)) or not isinstance(bond, (int, np.integer)):
        raise Tensor4allTypeError(
            f"entanglement_per_sector: bond must be an integer, got {type(bond).__name__} {bond!r}"
        )
    if not 0 <= bond < psi.L - 1:
        raise SiteOutOfRangeError(
            f"entanglement_per_sector: bond {int(bond)} is outside 0..{psi.L - 2} (bond b "
            "lies between sites b and b + 1)"
        )
    if not psi.symmetric:
        raise InvalidOptionError(
            "entanglement_per_sector: this MPS is dense and has no charge sectors; run "
            "dmrg(..., conserve=...) or build the state with conserve=..."
        )
    spectrum = psi.entanglement_spectrum(int(bond))
    total = sum(float(np.sum(np.abs(s) ** 2)) for s in spectrum.values())
    out: dict[Any, SectorEntanglement] = {}
    for q, s in spectrum.items():
        s = np.sort(np.abs(np.asarray(s, dtype=float)))[::-1] / np.sqrt(total)
        p = s * s
        nz = p[p > 0]
        out[q] = SectorEntanglement(float(np.sum(p)), float(-np.sum(nz * np.log(nz))), s)
    return out


def __dir__() -> list[str]:
    """The public names (``__all__``): what ``dir`` and tab completion show."""
    return sorted(__all__)
