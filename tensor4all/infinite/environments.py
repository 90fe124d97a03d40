"""Fixed-point environments of an infinite MPO between an infinite MPS and itself.

A left environment ``G[bra, w, ket]`` lives on a bond; :func:`left_step` moves it one site right
(``G' = sum conj(A) G W A``, three GEMMs). With the MPO's automaton (:mod:`.impo`: state 0 ``ready``,
the last ``done``, the terms' own states in between, ``W[ready, ready] = W[done, done] = Id``):

* ``ready``: the identity (the left fixed point of the ``A_L`` transfer matrix);
* a term's states: finitely many steps from ``ready``, so a few passes through the cell give
  them exactly;
* ``done``: the geometric sum ``G = Y + T(G)`` of everything that ended, with ``T`` the cell's
  transfer matrix, whose eigenvalue 1 makes it diverge linearly. Its component along the fixed
  point is the energy per cell ``e = tr(Y rho)`` (``rho = C C^dagger``, the right fixed point);
  the rest solves ``(1 - T + |1)(rho|) G = Y - e 1`` by GMRES (SciPy), warm-started from the
  previous solution (Zauner-Stauber et al., PRB 97, 045145 (2018), Appendix C; Michel and
  McCulloch, arXiv:1008.4667).

Right environments ``G[bra, w, ket]`` (from ``A_R``) are left environments of the mirrored chain:
sites in reverse order, each tensor's bonds exchanged, the MPO's states reversed.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse.linalg

from .tmaps import left_step as transfer_left

__all__ = ["left_step", "right_step", "left_environments", "right_environments", "apply_hac", "apply_hc"]


def left_step(G: np.ndarray, A: np.ndarray, W: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """``G'[y', b, y] = sum conj(A[x', s, y']) G[x', a, x] W[a, s, t, b] B[x, t, y]`` (``B = A``)."""
    B = A if B is None else B
    t = np.tensordot(G, B, (2, 0))  # (x', a, t, y)
    t = np.tensordot(t, W, ((1, 2), (0, 2)))  # (x', y, s, b)
    out = np.tensordot(A.conj(), t, ((0, 1), (0, 2)))  # (y', y, b)
    return out.transpose(0, 2, 1)


def right_step(G: np.ndarray, A: np.ndarray, W: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """``G'[x', a, x] = sum conj(A[x', s, y']) W[a, s, t, b] B[x, t, y] G[y', b, y]`` (``B = A``)."""
    B = A if B is None else B
    t = np.tensordot(B, G, (2, 2))  # (x, t, y', b)
    t = np.tensordot(t, W, ((1, 3), (2, 3)))  # (x, y', a, s)
    out = np.tensordot(A.conj(), t, ((1, 2), (3, 1)))  # (x', x, a)
    return out.transpose(0, 2, 1)


def _solve(AL: Sequence[np.ndarray], rho: np.ndarray, rhs: np.ndarray, x0: np.ndarray | None, tol: float) -> np.ndarray:
    """``X`` with ``X - T(X) + tr(X rho) 1 = rhs`` (``T`` the cell's transfer map), by GMRES."""
    D = rhs.shape[0]
    dtype = np.result_type(rhs, *AL)
    eye = np.eye(D, dtype=dtype)

    def mv(v: np.ndarray) -> np.ndarray:
        X = v.reshape(D, D)
        Y = X
        for a in AL:
            Y = transfer_left(Y, a, a)
        return (X - Y + np.trace(X @ rho) * eye).reshape(-1)

    op = scipy.sparse.linalg.LinearOperator((D * D, D * D), matvec=mv, dtype=dtype)
    b = rhs.reshape(-1).astype(dtype)
    start = None if x0 is None or x0.shape != rhs.shape else x0.reshape(-1).astype(dtype)
    atol = tol * max(float(np.linalg.norm(b)), 1e-300)
    x, info = scipy.sparse.linalg.gmres(op, b, x0=start, rtol=0.0, atol=atol, restart=30, maxiter=200)
    return x.reshape(D, D)


def _left(
    AL: Sequence[np.ndarray], rho: np.ndarray, Ws: Sequence[np.ndarray], guess: np.ndarray | None, tol: float
) -> tuple[list[np.ndarray], float, np.ndarray]:
    n = len(AL)
    dtype = np.result_type(*AL, *Ws)
    G = []
    for i in range(n):
        g = np.zeros((AL[i].shape[0], Ws[i].shape[0], AL[i].shape[0]), dtype=dtype)
        g[:, 0, :] = np.eye(AL[i].shape[0])
        G.append(g)
    # the terms' states: a few passes through the cell (each term spans finitely many bonds)
    for _ in range(64):
        changed = False
        for i in range(n):
            w = Ws[i]
            new = left_step(G[i][:, :-1], AL[i], w[:-1, :, :, 1:-1])
            j = (i + 1) % n
            if not np.array_equal(new, G[j][:, 1:-1]):
                G[j][:, 1:-1] = new
                changed = True
        if not changed:
            break
    # done: what ended within the cell, accumulated from bond 0 to bond n
    Z = np.zeros_like(G[0][:, 0])
    for i in range(n):
        Z = transfer_left(Z, AL[i], AL[i]) + left_step(G[i][:, :-1], AL[i], Ws[i][:-1, :, :, -1:])[:, 0]
    e = np.trace(Z @ rho)
    X = _solve(AL, rho, Z - e * np.eye(Z.shape[0]), guess, tol)
    G[0][:, -1] = X
    for i in range(n - 1):
        G[i + 1][:, -1] = (
            transfer_left(G[i][:, -1], AL[i], AL[i]) + left_step(G[i][:, :-1], AL[i], Ws[i][:-1, :, :, -1:])[:, 0]
        )
    return G, float(e.real), X


def left_environments(
    AL: Sequence[np.ndarray],
    C0: np.ndarray,
    Ws: Sequence[np.ndarray],
    guess: np.ndarray | None = None,
    tol: float = 1e-12,
) -> tuple[list[np.ndarray], float, np.ndarray]:
    """``(G, e, X)``: the left environments ``G[i]`` on the bonds ``i`` of the cell, the energy per
    cell ``e`` and the ``done`` block ``X`` of bond 0 (the next call's ``guess``). ``C0`` is the
    centre matrix on bond 0 (``rho = C0 C0^dagger``)."""
    rho = C0 @ C0.conj().T
    return _left(AL, rho / np.trace(rho).real, Ws, guess, tol)


def _mirror_mpo(w: np.ndarray) -> np.ndarray:
    return w.transpose(3, 1, 2, 0)[::-1, :, :, ::-1]


def right_environments(
    AR: Sequence[np.ndarray],
    C0: np.ndarray,
    Ws: Sequence[np.ndarray],
    guess: np.ndarray | None = None,
    tol: float = 1e-12,
) -> tuple[list[np.ndarray], float, np.ndarray]:
    """``(G, e, X)``: the right environments ``G[i][bra, w, ket]`` on the bonds ``i`` (built from
    the sites ``i, i + 1, ...``), the energy per cell and the ``ready`` block of bond 0."""
    n = len(AR)
    mirrored = [a.transpose(2, 1, 0) for a in reversed(AR)]
    Wm = [np.ascontiguousarray(_mirror_mpo(w)) for w in reversed(Ws)]
    rho = (C0.conj().T @ C0).T  # the left fixed point of the A_R cell, as the mirror's right one
    Gm, e, X = _left(mirrored, rho / np.trace(rho).real, Wm, guess, tol)
    return [np.ascontiguousarray(Gm[(n - i) % n][:, ::-1, :]) for i in range(n)], e, X


def apply_hac(GL: np.ndarray, W: np.ndarray, GR: np.ndarray, AC: np.ndarray) -> np.ndarray:
    """``H_AC`` on ``AC``: ``sum GL[x', a, x] W[a, s, t, b] AC[x, t, y] GR[y', b, y]``."""
    t = np.tensordot(GL, AC, (2, 0))
    t = np.tensordot(t, W, ((1, 2), (0, 2)))
    return np.tensordot(t, GR, ((1, 3), (2, 1)))


def apply_hc(GL: np.ndarray, GR: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``H_C`` on ``C``: ``sum GL[x', a, x] C[x, y] GR[y', a, y]``."""
    t = np.tensordot(GL, C, (2, 0))
    return np.tensordot(t, GR, ((1, 2), (1, 2)))
