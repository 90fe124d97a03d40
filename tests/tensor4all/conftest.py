"""Shared fixtures of the tensor4all tests: an independent dense/sparse builder of
OpSum Hamiltonians (Kronecker products, no MPO code) and single-threaded BLAS where
threadpoolctl is available (threaded OpenBLAS is pathologically slow on a busy 2-core box)."""

from __future__ import annotations

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
