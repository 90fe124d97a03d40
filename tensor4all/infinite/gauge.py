"""Canonical forms of a unit cell of site tensors: left (``A_L``), right (``A_R``) and mixed
(``A_L C = C A_R``, ``C`` diagonal: the Schmidt values), and the polar updates of VUMPS.

:func:`left_orthonormalize` solves ``L_i A_i = A_L,i L_{i+1}`` (``L_n = L_0``) by repeated QR
sweeps through the cell (Zauner-Stauber et al., PRB 97, 045145 (2018), Algorithm 1): each sweep
shrinks the error by the ratio of the transfer matrix's two leading eigenvalues, so after a few
sweeps ``L_0`` is replaced by the dominant eigenvector of the mixed map ``X -> sum A_L^dagger X A``
(Arnoldi, :mod:`.tmaps`), which converges in one step whatever the correlation length, and the
QR sweeps then polish it to rounding. Right forms are left forms of the mirrored chain.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.linalg

from .tmaps import dominant_left

__all__ = [
    "left_orthonormalize",
    "right_orthonormalize",
    "mixed_canonical",
    "diagonal_gauge",
    "drop_small_schmidt",
    "polar_left",
    "polar_right",
]


def _qr_positive(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Thin QR with a non-negative diagonal of ``R`` (unique for full rank)."""
    q, r = scipy.linalg.qr(m, mode="economic", check_finite=False)
    d = np.diagonal(r)
    s = np.where(d == 0, 1.0, d / np.where(d == 0, 1.0, np.abs(d)))
    return q * s, s.conj()[:, None] * r


def left_orthonormalize(
    tensors: Sequence[np.ndarray], L0: np.ndarray | None = None, tol: float = 1e-14, max_iter: int = 400
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(A_L, L)`` with ``L_i A_i = A_L,i L_{i+1}`` (``L_i`` on the bond left of site ``i``, unit
    Frobenius norm, upper triangular). ``tol`` bounds the change of ``L_0`` over a sweep."""
    n = len(tensors)
    D = tensors[0].shape[0]
    L = np.eye(D, dtype=tensors[0].dtype) if L0 is None else np.array(L0)
    L = _qr_positive(L)[1]
    L = L / np.linalg.norm(L)
    Ls: list[np.ndarray] = [L] * (n + 1)
    AL: list[np.ndarray] = []
    for it in range(max_iter):
        old = Ls[0]
        AL, Ls = [], [old]
        for a in tensors:
            m = np.tensordot(Ls[-1], a, (1, 0))
            dl, d, dr = m.shape
            q, r = _qr_positive(m.reshape(dl * d, dr))
            AL.append(q.reshape(dl, d, q.shape[1]))
            Ls.append(r / np.linalg.norm(r))
        delta = np.linalg.norm(Ls[-1] - old)
        Ls[0] = Ls[-1]
        if delta < tol:
            break
        if it % 4 == 3:  # slow convergence: jump to the fixed point of the mixed map
            _, x = dominant_left(AL, list(tensors), v0=Ls[0], tol=max(tol * 0.1, 1e-15))
            Ls[0] = _qr_positive(x)[1]
            Ls[0] = Ls[0] / np.linalg.norm(Ls[0])
    return AL, Ls[:n]


def _mirror(t: np.ndarray) -> np.ndarray:
    return t.transpose(2, 1, 0)


def right_orthonormalize(
    tensors: Sequence[np.ndarray], R0: np.ndarray | None = None, tol: float = 1e-14, max_iter: int = 400
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(A_R, R)`` with ``A_i R_{i+1} = R_i A_R,i`` (``R_i`` on the bond left of site ``i``)."""
    n = len(tensors)
    mirrored = [_mirror(t) for t in reversed(tensors)]
    L0 = None if R0 is None else R0.T
    ALm, Lm = left_orthonormalize(mirrored, L0, tol, max_iter)
    AR = [_mirror(t) for t in reversed(ALm)]
    # mirrored bond j is the original bond n - j (mod n)
    R = [Lm[(n - i) % n].T for i in range(n)]
    return AR, R


def mixed_canonical(
    tensors: Sequence[np.ndarray], tol: float = 1e-14, C0: np.ndarray | None = None
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """``(A_L, A_R, C)``: ``A_L,i C_{i+1} = C_i A_R,i`` with every ``C_i`` diagonal, real, non-negative
    and descending (the Schmidt values on bond ``i``, unit norm). ``C0``: a guess of the centre
    matrix on bond 0 when ``tensors`` are already left-orthonormal (VUMPS's result)."""
    AL, _ = left_orthonormalize(tensors, tol=tol)
    AR, C = right_orthonormalize(AL, R0=C0, tol=tol)
    n = len(AL)
    U, S, V = [], [], []
    for c in C:
        u, s, vh = scipy.linalg.svd(c, full_matrices=False, lapack_driver="gesdd", check_finite=False)
        U.append(u)
        S.append(s / np.linalg.norm(s))
        V.append(vh.conj().T)
    AL = [np.tensordot(np.tensordot(U[i].conj().T, AL[i], (1, 0)), U[(i + 1) % n], (2, 0)) for i in range(n)]
    AR = [np.tensordot(np.tensordot(V[i].conj().T, AR[i], (1, 0)), V[(i + 1) % n], (2, 0)) for i in range(n)]
    return AL, AR, [np.diag(s).astype(AL[0].dtype) for s in S]


def diagonal_gauge(
    AL: Sequence[np.ndarray], AR: Sequence[np.ndarray], C: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """A mixed canonical form ``(A_L, A_R, C)`` with any ``C`` brought to the diagonal gauge: with
    ``C_i = U_i S_i V_i^dagger`` (SVD), ``A_L,i -> U_i^dagger A_L,i U_{i+1}``, ``A_R,i -> V_i^dagger
    A_R,i V_{i+1}`` and ``C_i -> S_i`` (real, descending), which keeps ``A_L C = C A_R`` and the state."""
    n = len(AL)
    U, S, V = [], [], []
    for c in C:
        u, s, vh = scipy.linalg.svd(c, full_matrices=False, lapack_driver="gesdd", check_finite=False)
        U.append(u)
        S.append(s)
        V.append(vh.conj().T)
    AL = [np.tensordot(np.tensordot(U[i].conj().T, AL[i], (1, 0)), U[(i + 1) % n], (2, 0)) for i in range(n)]
    AR = [np.tensordot(np.tensordot(V[i].conj().T, AR[i], (1, 0)), V[(i + 1) % n], (2, 0)) for i in range(n)]
    return AL, AR, [np.diag(s).astype(np.result_type(AL[0], float)) for s in S]


def drop_small_schmidt(
    AL: list[np.ndarray], AR: list[np.ndarray], C: list[np.ndarray], floor: float
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """The mixed canonical form ``(A_L, A_R, C)`` (diagonal ``C``, from :func:`mixed_canonical`)
    without the Schmidt directions of value below ``floor`` (at least one kept per bond), re-gauged;
    unchanged when none is below (as TeNPy's ``svd_min``)."""
    n = len(AL)
    k = [max(1, int(np.count_nonzero(np.abs(np.diag(c)) >= floor))) for c in C]
    if all(k[i] == C[i].shape[0] for i in range(n)):
        return AL, AR, C
    return mixed_canonical([AL[i][: k[i], :, : k[(i + 1) % n]] for i in range(n)])


def _polar(m: np.ndarray) -> np.ndarray:
    """The isometric factor ``U V^dagger`` of the SVD ``m = U S V^dagger``."""
    u, _, vh = scipy.linalg.svd(m, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    return u @ vh


def polar_left(AC: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The left-orthonormal ``A_L`` closest to ``A_C C^{-1}``: the polar factor of ``A_C C^dagger``
    (VUMPS's stable update)."""
    dl, d, dr = AC.shape
    return _polar(AC.reshape(dl * d, dr) @ C.conj().T).reshape(dl, d, dr)


def polar_right(AC: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The right-orthonormal ``A_R`` closest to ``C^{-1} A_C``: the polar factor of ``C^dagger A_C``."""
    dl, d, dr = AC.shape
    return _polar(C.conj().T @ AC.reshape(dl, d * dr)).reshape(dl, d, dr)
