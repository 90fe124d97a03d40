"""Reference ground-state energies for the built-in models (what DMRG results are checked against).

* :func:`tfim_ground_energy` -- the open transverse-field Ising chain
  ``-J sum Z Z - g sum X`` is free fermions (Jordan-Wigner; Lieb, Schultz and Mattis 1961,
  Pfeuty 1970): ``E0 = -sum_k s_k`` with ``s_k`` the singular values of the ``L x L``
  bidiagonal matrix with ``g`` on the diagonal and ``J`` above it. Exact for every
  ``L, J, g`` (computed in ``O(L^2)``); at ``g = J = 1`` it equals the closed form
  :func:`tfim_critical_closed_form` ``E0(L) = 1 - 1/sin(pi / (2 (2L + 1)))``.
* :data:`HEISENBERG_REFERENCE` -- known energies of the open spin-1/2 Heisenberg chain
  (``J = Jz = 1``, no field) for chain lengths beyond exact diagonalization.
* :func:`exact_ground_energy` -- sparse exact diagonalization (SciPy ``eigsh``) of any
  :class:`~tensor4all.OpSum`, built term by term from Kronecker products (no MPO code),
  for Hilbert spaces up to :data:`ED_MAX_DIM` states (``L <= 14`` for spin 1/2).
* :func:`reference_energy` -- the best of these for a model of the command-line program.
* :func:`xx_magnetization` and :func:`xx_neel_magnetization` -- real-time evolution of the
  open spin-1/2 XX chain ``J sum (Sx Sx + Sy Sy)`` (Jordan-Wigner: free fermions with
  hopping ``J/2``) from a product state of up/down spins: with the one-particle propagator
  ``U = expm(-i t h)`` (``h`` the ``L x L`` hopping matrix, ``J/2`` next to the diagonal),
  ``<n_i(t)> = sum_j |U_ij|^2 n_j(0)`` and ``<Sz_i(t)> = <n_i(t)> - 1/2`` (up = occupied).
  A field ``-h sum Sz`` commutes with the hopping and changes nothing here.
* :func:`hubbard_free_densities` -- the same for the Hubbard chain at ``U = 0``
  (:func:`tensor4all.models.hubbard`): each spin species hops freely with ``-t``, so
  ``<n_{i s}(t)> = sum_j |U_ij|^2 n_{j s}(0)`` per species.
* :func:`thermal_reference` and :func:`free_fermion_thermodynamics` (module ``thermal``) -- exact
  thermodynamics of the chains of the command-line program (free fermions, small exact
  diagonalization); :func:`sparse_hamiltonian` lives in ``matrices``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from ..tools.errors import InvalidOptionError
from ..operators.opsum import OpSum
from ..tools.checks import check_positive_int, check_real
from .. import models

# exact energies of the lattice models in a sector (explicit matrices; the CLI's references for lattices)
from .fermions import (
    ED_MODELS,
    exact_sector_energy,
    free_electron_energy,
    free_fermion_energy,
    hopping_matrix,
    sector_dimension,
)
from .matrices import sparse_hamiltonian
from .thermal import THERMAL_ED_MAX_DIM, free_fermion_thermodynamics, thermal_reference

__all__ = [
    "Reference",
    "reference_energy",
    "tfim_ground_energy",
    "tfim_critical_closed_form",
    "exact_ground_energy",
    "sparse_hamiltonian",
    "HEISENBERG_REFERENCE",
    "ED_MAX_DIM",
    "xx_magnetization",
    "xx_neel_magnetization",
    "hubbard_free_densities",
    "ED_MODELS",
    "exact_sector_energy",
    "free_electron_energy",
    "free_fermion_energy",
    "hopping_matrix",
    "sector_dimension",
    "free_fermion_thermodynamics",
    "thermal_reference",
    "THERMAL_ED_MAX_DIM",
]

#: Largest Hilbert-space dimension :func:`reference_energy` diagonalizes (2**14).
ED_MAX_DIM = 2**14

#: Open spin-1/2 Heisenberg chain, J = Jz = 1, h = 0: ``L -> (E0, where the value comes from)``.
HEISENBERG_REFERENCE: dict[int, tuple[float, str]] = {
    32: (-13.9973156182243, "tabulated reference value (13 digits)"),
    100: (-44.127739893288, "DMRG at chi=256, truncation error < 1e-13 (benchmarks/dmrg.py)"),
}


@dataclass(frozen=True)
class Reference:
    """A reference energy: ``energy``, ``source`` (words), ``exact`` (True for exact
    diagonalization and closed forms; False for tabulated numerical values)."""

    energy: float
    source: str
    exact: bool

    def as_dict(self) -> dict:
        return {"energy": self.energy, "source": self.source, "exact": self.exact}


def tfim_ground_energy(L: int, J: float = 1.0, g: float = 1.0) -> float:
    """Exact ground energy of the open chain ``-J sum_i Z_i Z_{i+1} - g sum_i X_i`` (free fermions)."""
    L = check_positive_int(L, "L")
    J = check_real(J, "tfim_ground_energy: J")
    g = check_real(g, "tfim_ground_energy: g")
    # The singular values of the bidiagonal matrix are the positive eigenvalues of the
    # symmetric tridiagonal Golub-Kahan matrix with zero diagonal and off-diagonal
    # (g, J, g, J, ..., g): O(L^2) work and no squaring of small singular values.
    off = np.empty(2 * L - 1)
    off[0::2] = float(g)
    off[1::2] = float(J)
    w = scipy.linalg.eigvalsh_tridiagonal(np.zeros(2 * L), off)
    return float(-0.5 * np.sum(np.abs(w)))


def tfim_critical_closed_form(L: int) -> float:
    """``E0(L) = 1 - 1/sin(pi / (2 (2L + 1)))``: the open TFIM at ``g = J = 1``."""
    L = check_positive_int(L, "L")
    return 1.0 - 1.0 / math.sin(math.pi / (2 * (2 * L + 1)))


def exact_ground_energy(os: OpSum, L: int, local: str = "spin-1/2") -> float:
    """Lowest eigenvalue of the OpSum on ``L`` sites (dense below 256 states, else ``eigsh``)."""
    H = sparse_hamiltonian(os, L, local)
    if H.shape[0] <= 256:
        return float(np.linalg.eigvalsh(H.toarray())[0])
    rng = np.random.default_rng(0)
    v0 = rng.standard_normal(H.shape[0])
    w = scipy.sparse.linalg.eigsh(H, k=1, which="SA", tol=1e-13, v0=v0, return_eigenvectors=False)
    return float(w[0])


def reference_energy(
    model: str, L: int, *, J: float = 1.0, Jz: float | None = None, g: float = 1.0, h: float = 0.0, spin: str = "1/2"
) -> Reference | None:
    """The reference ground energy of a built-in model, or ``None`` where none is known.

    In order of preference: the TFIM's exact free-fermion energy (any ``L``); exact
    diagonalization when the Hilbert space has at most :data:`ED_MAX_DIM` states;
    the tabulated Heisenberg values (spin 1/2, ``Jz = J > 0``, ``h = 0``, scaled by ``J``).
    """
    if not isinstance(model, str):
        raise InvalidOptionError(f"unknown model {model!r}; valid models: heisenberg, xxz, tfim")
    L = check_positive_int(L, "L (number of sites)")
    J = check_real(J, "reference_energy: J")
    Jz = None if Jz is None else check_real(Jz, "reference_energy: Jz")
    g = check_real(g, "reference_energy: g")
    h = check_real(h, "reference_energy: h")
    models._check_spin(spin)
    if model == "tfim":
        e = tfim_ground_energy(L, J, g)
        return Reference(e, "free-fermion solution", True)
    if model not in ("heisenberg", "xxz"):
        raise InvalidOptionError(f"unknown model {model!r}; valid models: heisenberg, xxz, tfim")
    Jz = J if Jz is None else Jz
    d = 2 if spin == "1/2" else 3
    if d**L <= ED_MAX_DIM:
        os = models.heisenberg_opsum(L, J, Jz, h)
        local = "spin-1/2" if spin == "1/2" else "spin-1"
        return Reference(exact_ground_energy(os, L, local), f"exact diagonalization ({d**L} states)", True)
    if spin == "1/2" and Jz == J and J > 0 and h == 0 and L in HEISENBERG_REFERENCE:
        e, source = HEISENBERG_REFERENCE[L]
        return Reference(J * e, source, False)
    return None


def _free_densities(occupied: np.ndarray, times: "float | np.ndarray", hopping: float, what: str) -> np.ndarray:
    """``<n_i(t)> = sum_j |U_ij(t)|^2 n_j(0)`` of free fermions on an open chain from the
    occupations ``occupied`` (0/1 per site), ``U = expm(-i t h)`` with ``h`` the ``L x L``
    matrix with ``hopping`` next to the diagonal; shape ``times.shape + (L,)``."""
    ts = np.asarray(times, dtype=float)
    if not np.all(np.isfinite(ts)):
        raise InvalidOptionError(f"{what}: times must be finite, got {times!r}")
    L = occupied.size
    hop = np.zeros((L, L))
    i = np.arange(L - 1)
    hop[i, i + 1] = hop[i + 1, i] = hopping
    e, v = np.linalg.eigh(hop)
    flat = ts.reshape(-1)
    out = np.empty((flat.size, L))
    for k, t in enumerate(flat):
        u = (v * np.exp(-1j * t * e)) @ v.T
        out[k] = (np.abs(u) ** 2) @ occupied
    return out.reshape(ts.shape + (L,))


def xx_magnetization(states: "list[int] | np.ndarray", times: "float | np.ndarray", J: float = 1.0) -> np.ndarray:
    """Exact ``<Sz_i(t)>`` of the open spin-1/2 XX chain ``J sum (Sx Sx + Sy Sy)`` started in
    the product state ``states`` (basis indices: 0 up, 1 down), shape ``(len(times), L)``
    (``(L,)`` for a scalar time): ``<Sz_i(t)> = sum_j |U_ij(t)|^2 n_j - 1/2`` with
    ``U = expm(-i t h)``, ``h`` the hopping matrix (``J/2`` next to the diagonal) and
    ``n_j = 1`` for up spins (Jordan-Wigner; ``O(L^3)`` once, then ``O(L^2)`` per time)."""
    s = np.asarray(states)
    if s.ndim != 1 or s.size == 0 or not np.all((s == 0) | (s == 1)):
        raise InvalidOptionError(f"xx_magnetization: states must be basis indices 0 (up) or 1 (down), got {states!r}")
    J = check_real(J, "xx_magnetization: J")
    return _free_densities((s == 0).astype(float), times, 0.5 * J, "xx_magnetization") - 0.5


def hubbard_free_densities(
    states: "list[int] | np.ndarray", times: "float | np.ndarray", t: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``(<Nup_i(t)>, <Ndn_i(t)>)`` of the open Hubbard chain at ``U = 0``
    (:func:`tensor4all.models.hubbard`, any ``mu``) started in the product state ``states``
    (``"electron"`` basis indices: 0 empty, 1 up, 2 down, 3 both), each of shape
    ``(len(times), L)`` (``(L,)`` for a scalar time). Each spin species is free fermions with
    hopping ``-t``: ``<n_{i s}(t)> = sum_j |U_ij(t)|^2 n_{j s}(0)``, ``U = expm(-i t h)`` of the
    ``L x L`` hopping matrix (the chemical potential commutes with it)."""
    s = np.asarray(states)
    if s.ndim != 1 or s.size == 0 or not np.all((s >= 0) & (s <= 3)) or s.dtype.kind not in "iu":
        raise InvalidOptionError(
            f"hubbard_free_densities: states must be basis indices 0 (empty), 1 (up), "
            f"2 (down) or 3 (both), got {states!r}"
        )
    t = check_real(t, "hubbard_free_densities: t")
    up = _free_densities(((s == 1) | (s == 3)).astype(float), times, -t, "hubbard_free_densities")
    dn = _free_densities(((s == 2) | (s == 3)).astype(float), times, -t, "hubbard_free_densities")
    return up, dn


def xx_neel_magnetization(L: int, times: "float | np.ndarray", J: float = 1.0) -> np.ndarray:
    """Exact staggered magnetization ``m_s(t) = (1/L) sum_i (-1)^i <Sz_i(t)>`` of the open
    XX chain from the Neel state (up, down, up, ...; ``m_s(0) = 1/2``), one value per time."""
    L = check_positive_int(L, "xx_neel_magnetization: L")
    sz = xx_magnetization([i % 2 for i in range(L)], times, J)
    return sz @ ((-1.0) ** np.arange(L)) / L
