"""The exact Hubbard reference of the tests: the Fock space of 2L fermionic modes ordered
(0 up, 0 dn, 1 up, ...) with explicit Jordan-Wigner matrices, mapped to the library's site
basis |0>, |up>, |dn>, |up dn> (bit pairs (0, 2, 1, 3)); built with NumPy and SciPy's sparse matrices only."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse

__all__ = [
    "SITE_TO_FOCK",
    "SIGMA_MINUS",
    "Z",
    "annihilators",
    "mode",
    "fock_hubbard",
    "mpo_order",
    "exact_hubbard",
    "particle_number",
    "basis_vector",
    "site_op",
    "hopping_levels",
    "free_sector_energy",
]


SITE_TO_FOCK = (0, 2, 1, 3)
SIGMA_MINUS = np.array([[0.0, 1.0], [0.0, 0.0]])  # |1> -> |0>
Z = np.diag([1.0, -1.0])


# ---- the independent reference: Jordan-Wigner matrices on the Fock space ------------------------
def annihilators(n_modes: int, sparse: bool = False) -> list:
    """``c_m`` for every mode, ``2^n x 2^n``: dense arrays, or SciPy CSR matrices."""
    kron = scipy.sparse.kron if sparse else np.kron
    out = []
    for m in range(n_modes):
        mats = [Z] * m + [SIGMA_MINUS] + [np.eye(2)] * (n_modes - m - 1)
        c = scipy.sparse.identity(1, format="csr") if sparse else np.ones((1, 1))
        for x in mats:
            c = kron(c, x, format="csr") if sparse else kron(c, x)
        out.append(c)
    return out


def mode(i: int, spin: str) -> int:
    return 2 * i + (0 if spin == "up" else 1)


def fock_hubbard(L: int, t: float, U: float, mu: float) -> np.ndarray:
    """``-t sum (c^dag_{i s} c_{i+1 s} + h.c.) + U sum n_up n_dn - mu sum n`` on the Fock space
    (built from sparse matrices, returned dense)."""
    c = annihilators(2 * L, sparse=True)
    n = [x.T @ x for x in c]
    H = scipy.sparse.csr_matrix(c[0].shape)
    for i in range(L - 1):
        for s in ("up", "dn"):
            hop = c[mode(i, s)].T @ c[mode(i + 1, s)]
            H -= t * (hop + hop.T)
    for i in range(L):
        H += U * n[mode(i, "up")] @ n[mode(i, "dn")] - mu * (n[mode(i, "up")] + n[mode(i, "dn")])
    return H.toarray()


def mpo_order(L: int) -> np.ndarray:
    """``perm[b]``: the Fock index of the MPO basis index ``b``."""
    perm = np.zeros(4**L, dtype=int)
    for b, digits in enumerate(itertools.product(range(4), repeat=L)):
        perm[b] = sum(SITE_TO_FOCK[s] * 4 ** (L - 1 - i) for i, s in enumerate(digits))
    return perm


def exact_hubbard(L: int, t: float, U: float, mu: float) -> np.ndarray:
    """The Hubbard Hamiltonian in the MPO's basis."""
    perm = mpo_order(L)
    return fock_hubbard(L, t, U, mu)[np.ix_(perm, perm)]


def particle_number(L: int) -> np.ndarray:
    """The diagonal of the total particle number in the MPO's basis."""
    return np.array([sum((0, 1, 1, 2)[s] for s in digits) for digits in itertools.product(range(4), repeat=L)])


def basis_vector(states: list[int]) -> np.ndarray:
    v = np.zeros(4 ** len(states), dtype=complex)
    v[sum(s * 4 ** (len(states) - 1 - i) for i, s in enumerate(states))] = 1.0
    return v


def site_op(m: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(4**i), m), np.eye(4 ** (L - i - 1)))


def hopping_levels(L: int, t: float) -> np.ndarray:
    h = np.zeros((L, L))
    k = np.arange(L - 1)
    h[k, k + 1] = h[k + 1, k] = -t
    return np.linalg.eigvalsh(h)


def free_sector_energy(L: int, t: float, mu: float, N: int) -> float:
    """The lowest energy of ``N`` free fermions (``U = 0``): the best split ``N = N_up + N_dn``,
    each spin filling the lowest levels of the hopping matrix."""
    e = np.concatenate([[0.0], np.cumsum(hopping_levels(L, t))])
    return min(e[nu] + e[N - nu] for nu in range(max(0, N - L), min(N, L) + 1)) - mu * N


# ---- the reference itself, and the local operators -----------------------------------------------


def two_sz(L: int) -> np.ndarray:
    """``2 Sz`` of every basis state of ``L`` electron sites (site basis |0>, |up>, |dn>, |up dn>)."""
    per_site = np.array([0, 1, -1, 0])
    total = np.zeros(1, dtype=int)
    for _ in range(L):
        total = (total[:, None] + per_site[None, :]).reshape(-1)
    return total
