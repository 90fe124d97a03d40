"""An exact oracle for time evolution: the open spin-1/2 XX chain is free fermions.

``H = J sum_{i<L-1} (Sx_i Sx_{i+1} + Sy_i Sy_{i+1}) = (J/2) sum_i (S+_i S-_{i+1} + S-_i S+_{i+1})``

Jordan-Wigner (Lieb, Schultz and Mattis 1961). Conventions, those of tensor4all's spin-1/2
space (basis index 0 is spin up, ``Sz = +1/2``):

* spin up is an occupied site: ``n_i = Sz_i + 1/2``, and ``1 - 2 n_i = -2 Sz_i``;
* ``c_j^dagger = (prod_{k<j} (-2 Sz_k)) S+_j``, ``c_j = (prod_{k<j} (-2 Sz_k)) S-_j``.

Since ``S+_i (-2 Sz_i) = S+_i`` and ``(-2 Sz_j) S-_j = S-_j``, the hopping of any pair is

    ``c_i^dagger c_j = S+_i (prod_{min(i,j)<k<max(i,j)} (-2 Sz_k)) S-_j``   (i != j),

so ``S+_i S-_{i+1} = c_i^dagger c_{i+1}`` and ``H = sum_ij h_ij c_i^dagger c_j`` with the
``L x L`` hopping matrix ``h`` (``J/2`` on the first off-diagonals, zero elsewhere).

Heisenberg picture: ``i dc_j/dt = [c_j, H] = sum_k h_jk c_k``, so ``c(t) = U c`` with
``U = expm(-i t h)`` and ``c_i^dagger(t) = sum_k U*_ik c_k^dagger``; the one-particle density
matrix ``C_ij = <c_i^dagger c_j>`` evolves as

    ``C(t) = U^* C(0) U^T``,

and a product state of up/down spins has ``C(0) = diag(n)``. Then ``<Sz_i(t)> = C_ii(t) - 1/2``.
The staggered magnetization is ``m_s = (1/L) sum_i (-1)^i <Sz_i>`` (``+1/2`` for the Neel
state up, down, up, ...).

:func:`density_matrix_mps` measures the same ``C_ij`` in an MPS (any code's evolved state)
through the Jordan-Wigner strings, contracted with NumPy from the site tensors, so a test
can compare an evolved MPS with :func:`density_matrix` entry by entry. The tests in
``test_free_fermions.py`` check all of this against exact diagonalization of the explicit
``2^L`` spin Hamiltonian.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.special

__all__ = [
    "density_matrix",
    "density_matrix_mps",
    "hopping_matrix",
    "magnetization",
    "magnetization_mps",
    "neel",
    "occupations",
    "propagator",
    "staggered",
    "staggered_magnetization",
]

#: ``S+``, ``S-`` and ``-2 Sz`` in tensor4all's basis (index 0 = up)
SP = np.array([[0.0, 1.0], [0.0, 0.0]])
SM = SP.T.copy()
STRING = np.array([-1.0, 1.0])  # the diagonal of -2 Sz = 1 - 2 n


def neel(L: int) -> list[int]:
    """The Neel state as basis indices: up, down, up, ... (``[0, 1, 0, 1, ...]``)."""
    return [i % 2 for i in range(L)]


def hopping_matrix(L: int, J: float = 1.0) -> np.ndarray:
    """The ``L x L`` hopping matrix ``h`` of the open XX chain: ``J/2`` on the first off-diagonals."""
    h = np.zeros((L, L))
    i = np.arange(L - 1)
    h[i, i + 1] = h[i + 1, i] = 0.5 * J
    return h


def propagator(L: int, t: float, J: float = 1.0) -> np.ndarray:
    """``U = expm(-i t h)`` (from the eigenvectors of the real symmetric ``h``)."""
    e, v = np.linalg.eigh(hopping_matrix(L, J))
    return (v * np.exp(-1j * t * e)) @ v.T


def occupations(states: Sequence[int]) -> np.ndarray:
    """``n_i`` of a product state given as basis indices (0 = up = occupied, 1 = down = empty)."""
    s = np.asarray(states)
    if s.ndim != 1 or not np.all((s == 0) | (s == 1)):
        raise ValueError(f"states must be basis indices 0 (up) or 1 (down), got {states!r}")
    return (s == 0).astype(float)


def density_matrix(states: Sequence[int], t: Any, J: float = 1.0) -> np.ndarray:
    """``C_ij(t) = <c_i^dagger c_j>(t) = (U^* C(0) U^T)_ij`` from the product state ``states``;
    for an array of times the first axis is time."""
    n = occupations(states)
    L = len(n)
    ts = np.asarray(t, dtype=float)
    out = np.empty(ts.shape + (L, L), dtype=complex)
    for idx in np.ndindex(ts.shape):
        u = propagator(L, float(ts[idx]), J)
        out[idx] = (u.conj() * n) @ u.T
    return out


def magnetization(states: Sequence[int], t: Any, J: float = 1.0) -> np.ndarray:
    """``<Sz_i(t)> = C_ii(t) - 1/2`` (last axis the site)."""
    c = density_matrix(states, t, J)
    return np.real(np.diagonal(c, axis1=-2, axis2=-1)) - 0.5


def staggered_magnetization(states: Sequence[int], t: Any, J: float = 1.0) -> np.ndarray:
    """``m_s(t) = (1/L) sum_i (-1)^i <Sz_i(t)>``."""
    return staggered(magnetization(states, t, J))


def staggered(sz: Any) -> Any:
    """``(1/L) sum_i (-1)^i sz_i`` over the last axis."""
    sz = np.asarray(sz)
    L = sz.shape[-1]
    return sz @ ((-1.0) ** np.arange(L)) / L


# ---- the same quantities measured in an MPS --------------------------------------------
def _site_arrays(psi: Any) -> list[np.ndarray]:
    """The site tensors ``(left, phys, right)`` of a tensor4all MPS as NumPy arrays (a
    symmetric MPS through ``psi.dense()``)."""
    if getattr(psi, "symmetric", False):
        psi = psi.dense()
    ts = [np.asarray(t) for t in psi.tensors]
    if any(t.ndim != 3 or t.shape[1] != 2 for t in ts):
        raise ValueError("density_matrix_mps needs a spin-1/2 MPS (site tensors (left, 2, right))")
    return ts


def _transfer(E: np.ndarray, A: np.ndarray, op: np.ndarray | None = None) -> np.ndarray:
    """``E'[b, b'] = sum conj(A[a, s, b]) op[s, s'] A[a', s', b'] E[a, a']`` (bra index first);
    ``op`` a 2x2 matrix, a diagonal given as a vector, or None (identity)."""
    T = np.tensordot(E, A, axes=(1, 0))  # a, s', b'
    if op is not None:
        T = op[None, :, None] * T if op.ndim == 1 else np.einsum("st,atb->asb", op, T)
    return np.tensordot(A.conj(), T, axes=([0, 1], [0, 1]))


def _right_environments(ts: list[np.ndarray]) -> list[np.ndarray]:
    """``R[j][a, a']``: the norm contraction of the sites ``j..L-1``, bra index first (``R[L]``
    the 1x1 identity)."""
    L = len(ts)
    R = [np.ones((1, 1))] * (L + 1)
    for j in range(L - 1, -1, -1):
        A = ts[j]
        R[j] = np.tensordot(A, np.tensordot(A.conj(), R[j + 1], axes=(2, 0)), axes=([1, 2], [1, 2])).T
    return R


def _close(E: np.ndarray, R: np.ndarray) -> complex:
    """A left environment against a right one (both bra index first)."""
    return complex(np.tensordot(E, R, axes=([0, 1], [0, 1])))


def density_matrix_mps(psi: Any) -> np.ndarray:
    """``C_ij = <S+_i (prod_{i<k<j} (-2 Sz_k)) S-_j> / <psi|psi>`` of a spin-1/2 MPS, all pairs
    (``i < j`` contracted, ``i > j`` as ``conj(C_ji)``, the diagonal ``<n_i>``)."""
    ts = _site_arrays(psi)
    L = len(ts)
    R = _right_environments(ts)
    left = np.ones((1, 1))
    C = np.zeros((L, L), dtype=complex)
    norm = None
    n_op = np.array([1.0, 0.0])
    for i in range(L):
        A = ts[i]
        if norm is None:
            norm = _close(left, R[0]).real
        C[i, i] = _close(_transfer(left, A, n_op), R[i + 1])
        E = _transfer(left, A, SP)
        for j in range(i + 1, L):
            C[i, j] = _close(_transfer(E, ts[j], SM), R[j + 1])
            E = _transfer(E, ts[j], STRING)
        left = _transfer(left, A)
    C /= norm
    lower = np.tril_indices(L, -1)
    C[lower] = C.T.conj()[lower]
    return C


def magnetization_mps(psi: Any) -> np.ndarray:
    """``<Sz_i>`` of a spin-1/2 MPS from :func:`density_matrix_mps`'s diagonal."""
    return np.real(np.diagonal(density_matrix_mps(psi))) - 0.5


def infinite_neel_quench_error(times: Any, sz: Any) -> float:
    """The largest error of ``<Sz_j(t)>`` (columns: the two sites of a cell) of the infinite XX
    chain ``H = sum (Sx Sx + Sy Sy)`` quenched from the Neel state: free fermions with hopping
    1/2, ``n_j(t) = sum_l |G_jl(t)|^2 n_l(0)`` with ``G_jl = i^(l-j) J_(l-j)(t)``, so
    ``<Sz_j(t)> = (-1)^j sum_m (-1)^m J_m(t)^2 / 2 = (-1)^j J_0(2t) / 2``."""
    exact = 0.5 * scipy.special.j0(2 * np.asarray(times))
    sz = np.asarray(sz)
    return float(max(np.abs(sz[:, 0] - exact).max(), np.abs(sz[:, 1] + exact).max()))
