"""Shared fixtures of the tensor4all tests: an independent dense/sparse builder of
OpSum Hamiltonians (Kronecker products, no MPO code) and single-threaded BLAS where
threadpoolctl is available (threaded OpenBLAS is pathologically slow on a busy 2-core box)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg

from tensor4all import local_space

try:  # optional: keep BLAS single-threaded for these small problems
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None


@pytest.fixture(autouse=True, scope="session")
def _single_thread_blas():
    if threadpool_limits is None:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def sparse_hamiltonian(os, L: int, local: str = "spin-1/2") -> scipy.sparse.csr_matrix:
    """The OpSum as a sparse matrix in np.kron order, term by term."""
    sp = local_space(local)
    d = sp.dim
    dtype = complex
    H = scipy.sparse.csr_matrix((d**L, d**L), dtype=dtype)
    for term in os:
        mats = [np.eye(d, dtype=dtype) for _ in range(L)]
        for name, site in term.ops:
            mats[site] = mats[site] @ sp.matrix(name)
        m = scipy.sparse.csr_matrix(np.ones((1, 1), dtype=dtype))
        for x in mats:
            m = scipy.sparse.kron(m, scipy.sparse.csr_matrix(x), format="csr")
        H = H + complex(np.asarray(term.coef)) * m
    return H


def ground_energy(os, L: int, local: str = "spin-1/2") -> float:
    H = sparse_hamiltonian(os, L, local)
    if H.shape[0] <= 64:
        return float(np.linalg.eigvalsh(H.toarray())[0])
    w = scipy.sparse.linalg.eigsh(H, k=1, which="SA", tol=1e-14, return_eigenvectors=False)
    return float(w[0])


def heisenberg_chain_matrix(L: int, J: float = 1.0, Jz: float | None = None, h: float = 0.0) -> np.ndarray:
    """``sum_i J (Sx Sx + Sy Sy) + Jz Sz Sz - h sum_i Sz`` on the open chain as an explicit real 2^L
    matrix (site 0 most significant, state 0 = up), two-site terms as ``kron(1, op x op, 1)``:
    ``Sy Sy = -(i Sy)(i Sy)`` with ``i Sy`` real. No library code."""
    Jz = J if Jz is None else Jz
    sx, isy, sz = np.array([[0, 0.5], [0.5, 0]]), np.array([[0, 0.5], [-0.5, 0]]), np.diag([0.5, -0.5])
    bond = J * (np.kron(sx, sx) - np.kron(isy, isy)) + Jz * np.kron(sz, sz)
    H = np.zeros((2**L, 2**L))
    for i in range(L - 1):
        H += np.kron(np.kron(np.eye(2**i), bond), np.eye(2 ** (L - i - 2)))
    for i in range(L):
        H -= h * np.kron(np.kron(np.eye(2**i), sz), np.eye(2 ** (L - i - 1)))
    return H


def heisenberg_bethe_energy(L: int) -> float:
    """The ground energy of ``sum_i S_i . S_{i+1}`` on the open chain of even ``L`` by the Bethe
    ansatz with open ends (Alcaraz, Barber, Batchelor, Baxter and Quispel, J. Phys. A 20, 6397
    (1987)): ``L/2`` real roots ``lambda_j > 0`` of ``2L * 2 atan(2 lambda_j) = 2 pi j + sum_{k != j}
    [2 atan(lambda_j - lambda_k) + 2 atan(lambda_j + lambda_k)]``, ``j = 1 .. L/2``, and ``E = (L - 1)/4
    - sum_j 2 / (4 lambda_j^2 + 1)``. Agrees with exact diagonalization to 1e-13 for L = 4 .. 12
    (``test_dmrg.py``)."""
    import scipy.optimize

    m = L // 2
    j = np.arange(1, m + 1)

    def residual(lam: np.ndarray) -> np.ndarray:
        pair = 2 * np.arctan(lam[:, None] - lam[None, :]) + 2 * np.arctan(lam[:, None] + lam[None, :])
        np.fill_diagonal(pair, 0.0)
        return 4 * L * np.arctan(2 * lam) - pair.sum(axis=1) - 2 * np.pi * j

    sol = scipy.optimize.root(residual, 0.5 * np.tan(np.pi * j / (2 * L + 1)), method="hybr", tol=1e-14)
    assert np.max(np.abs(residual(sol.x))) < 1e-11 and np.all(sol.x > 0), sol
    return float((L - 1) / 4 - np.sum(2.0 / (4 * sol.x**2 + 1)))


def jordan_wigner_annihilators(n_modes: int) -> list[scipy.sparse.csr_matrix]:
    """The annihilators ``c_m`` of ``n_modes`` fermion modes (mode 0 leftmost) as sparse matrices
    on ``2**n_modes`` states: ``Z x ... x Z x a x 1 x ... x 1`` with ``a = |0><1|`` (index 0 empty,
    1 occupied) and the Jordan-Wigner sign ``Z = diag(1, -1)`` on the modes before ``m``."""
    a = scipy.sparse.csr_matrix(np.array([[0.0, 1.0], [0.0, 0.0]]))
    z = scipy.sparse.csr_matrix(np.diag([1.0, -1.0]))
    one = scipy.sparse.identity(2, format="csr")
    out = []
    for m in range(n_modes):
        mat = scipy.sparse.csr_matrix(np.ones((1, 1)))
        for f in [z] * m + [a] + [one] * (n_modes - m - 1):
            mat = scipy.sparse.kron(mat, f, format="csr")
        out.append(mat)
    return out


def spinful_chain_hopping(c: list, L: int) -> Any:
    """``sum_{i, s} (c^dag_{i s} c_{i+1 s} + h.c.)`` on the open chain of ``L`` sites whose modes are
    ordered site-major, up then down (``c[2 i + s]``; sparse or dense, as ``c``)."""
    h = c[0] * 0.0
    for i in range(L - 1):
        for s in (0, 1):
            hop = c[2 * i + s].T @ c[2 * (i + 1) + s]
            h = h + hop + hop.T
    return h
