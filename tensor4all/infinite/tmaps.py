"""Transfer maps of a unit cell and their dominant eigenvectors: the kernels below everything in
:mod:`tensor4all.infinite`.

Site tensors are NumPy arrays ``(left, phys, right)``. A left map acts on a matrix ``X[bra, ket]``
on a bond, ``X -> sum_s A_s^dagger X B_s`` (``A`` the bra, ``B`` the ket tensor), a right map on
``Y[ket, bra]``, ``Y -> sum_s B_s Y A_s^dagger``; each is two GEMMs. An operator ``O`` between them
(``d x d``, ``O[out, in]``) gives the map of ``sum_{s,t} O[s,t] A_s^dagger X B_t``.

:func:`dominant_left` and :func:`dominant_right` find the leading eigenpair of a map: densely
below :data:`DENSE_TRANSFER` (the map's ``D^2 x D^2`` matrix), by ARPACK (``scipy.sparse.linalg.eigs``)
on a ``LinearOperator`` above.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

__all__ = [
    "DENSE_TRANSFER",
    "left_step",
    "right_step",
    "left_map",
    "right_map",
    "leading_eigs",
    "dominant_left",
    "dominant_right",
]

#: maps of at most this many entries (``D^2``) are diagonalized densely
DENSE_TRANSFER = 400


def left_step(X: np.ndarray, A: np.ndarray, B: np.ndarray, op: np.ndarray | None = None) -> np.ndarray:
    """``sum_{s,t} conj(A[a,s,c]) X[a,b] op[s,t] B[b,t,d]`` as ``[c, d]`` (``op=None``: identity)."""
    t = np.tensordot(X, B, (1, 0))  # (a, t, d)
    if op is not None:
        t = np.tensordot(op, t, (1, 1)).transpose(1, 0, 2)  # (a, s, d)
    return np.tensordot(A.conj(), t, ((0, 1), (0, 1)))


def right_step(Y: np.ndarray, A: np.ndarray, B: np.ndarray, op: np.ndarray | None = None) -> np.ndarray:
    """``sum_{s,t} B[a,t,c] op[s,t] Y[c,d] conj(A[b,s,d])`` as ``[a, b]`` (``Y[ket, bra]``)."""
    t = np.tensordot(B, Y, (2, 0))  # (a, t, d)
    if op is not None:
        t = np.tensordot(t, op, (1, 1)).transpose(0, 2, 1)  # (a, s, d)
    return np.tensordot(t, A.conj(), ((1, 2), (1, 2)))


def left_map(As: Sequence[np.ndarray], Bs: Sequence[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """``X -> X`` pushed through the whole cell (bra ``As``, ket ``Bs``)."""

    def apply(X: np.ndarray) -> np.ndarray:
        for a, b in zip(As, Bs):
            X = left_step(X, a, b)
        return X

    return apply


def right_map(As: Sequence[np.ndarray], Bs: Sequence[np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """``Y -> Y`` pushed leftwards through the whole cell (bra ``As``, ket ``Bs``)."""

    def apply(Y: np.ndarray) -> np.ndarray:
        for a, b in zip(reversed(As), reversed(Bs)):
            Y = right_step(Y, a, b)
        return Y

    return apply


def _dtype(*arrays: np.ndarray) -> np.dtype:
    return np.result_type(*arrays, np.float64)


def leading_eigs(
    fn: Callable[[np.ndarray], np.ndarray],
    shape: tuple[int, int],
    dtype: np.dtype,
    k: int,
    v0: np.ndarray | None = None,
    tol: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` eigenvalues of largest magnitude of the linear map ``fn`` on ``shape`` matrices,
    sorted by decreasing magnitude, with their eigenvectors as columns (flattened matrices)."""
    n = shape[0] * shape[1]
    k = min(k, n)
    cdtype = np.result_type(dtype, np.complex128)
    if n <= DENSE_TRANSFER or k >= n - 1:
        basis = np.eye(n, dtype=dtype)
        m = np.column_stack([fn(basis[:, j].reshape(shape)).reshape(-1) for j in range(n)])
        w, v = scipy.linalg.eig(m)
    else:

        def mv(x: np.ndarray) -> np.ndarray:
            return fn(x.reshape(shape).astype(dtype, copy=False)).reshape(-1)

        op = scipy.sparse.linalg.LinearOperator((n, n), matvec=mv, dtype=dtype)
        # a fixed start where none is given: ARPACK's own random start carries its generator's state
        # from call to call, so a run's fixed point would depend on what ran before it
        start = (np.random.default_rng(0).standard_normal(n) if v0 is None else v0.reshape(-1)).astype(dtype)
        ncv = min(n, max(2 * k + 1, 20))
        try:
            w, v = scipy.sparse.linalg.eigs(op, k=k, which="LM", v0=start, tol=max(tol, 1e-13), ncv=ncv, maxiter=n * 10)
        except scipy.sparse.linalg.ArpackNoConvergence as e:  # what converged; callers iterate on
            w, v = e.eigenvalues, e.eigenvectors
            if len(w) < k:
                raise
    order = np.argsort(-np.abs(w), kind="stable")[:k]
    return w[order].astype(cdtype), v[:, order].astype(cdtype)


def _real_phase(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The eigenvector with its largest entry made real positive (real for a real map)."""
    big = x.reshape(-1)[np.argmax(np.abs(x))]
    x = x * (abs(big) / big)
    return x if np.issubdtype(dtype, np.complexfloating) else x.real


def _hermitian_part(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The eigenvector of a positive map made a positive Hermitian matrix (phase fixed by the trace)."""
    tr = np.trace(x)
    x = x * (abs(tr) / tr) if tr != 0 else x
    x = 0.5 * (x + x.conj().T)
    if not np.issubdtype(dtype, np.complexfloating):
        x = x.real
    return x / np.trace(x).real


def dominant_left(
    As: Sequence[np.ndarray], Bs: Sequence[np.ndarray], v0: np.ndarray | None = None, tol: float = 0.0
) -> tuple[complex, np.ndarray]:
    """Leading eigenvalue and left eigenvector ``X[bra, ket]`` of the cell's transfer map; for
    ``As == Bs`` the eigenvector is a positive matrix of unit trace."""
    D = (As[0].shape[0], Bs[0].shape[0])
    dt = _dtype(*As, *Bs)
    w, v = leading_eigs(left_map(As, Bs), D, dt, 1, v0, tol)
    x = v[:, 0].reshape(D)
    return w[0], (_hermitian_part(x, dt) if As is Bs else _real_phase(x, dt))


def dominant_right(
    As: Sequence[np.ndarray], Bs: Sequence[np.ndarray], v0: np.ndarray | None = None, tol: float = 0.0
) -> tuple[complex, np.ndarray]:
    """Leading eigenvalue and right eigenvector ``Y[ket, bra]`` of the cell's transfer map."""
    D = (Bs[-1].shape[2], As[-1].shape[2])
    dt = _dtype(*As, *Bs)
    w, v = leading_eigs(right_map(As, Bs), D, dt, 1, v0, tol)
    y = v[:, 0].reshape(D)
    return w[0], (_hermitian_part(y, dt) if As is Bs else _real_phase(y, dt))
