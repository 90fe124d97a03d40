"""What the dense VUMPS (:mod:`.vumps`) and the charge-sector VUMPS (:mod:`.vumps_sectors`)
share: the result records and the eigensolver of the local problems ``H_AC`` and ``H_C``
(Zauner-Stauber, Vanderstraeten, Fishman, Verstraete and Haegeman, PRB 97, 045145 (2018))."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import scipy.sparse.linalg

from .imps import iMPS

__all__ = [
    "VUMPSRecord",
    "VUMPSResult",
    "lowest",
    "schmidt_floor",
    "SETTLE",
    "SCHMIDT_FLOOR",
    "DENSE_LOCAL",
    "ARPACK_NCV",
]


@dataclasses.dataclass
class VUMPSRecord:
    """One iteration: the energy per site, the error, the largest bond dimension, seconds so far."""

    iteration: int
    energy: float
    error: float
    max_bond: int
    time: float


@dataclasses.dataclass
class VUMPSResult:
    """A VUMPS run: ``energy`` per site, the ``state`` (mixed canonical, diagonal ``C``), the last
    ``error``, whether it ``converged`` (error below ``tol`` at ``max_bond``), the ``history`` and
    the charge it ``conserved`` (``"Sz"``, ``"parity"`` or None: dense)."""

    energy: Any
    state: iMPS
    error: float
    converged: bool
    history: list[VUMPSRecord]
    conserved: str | None = None


#: iterations after the last expansion before the error can end a run
SETTLE = 5

#: Schmidt values below this are dropped from a result whatever ``tol`` (round-off of the SVD of ``C``)
SCHMIDT_FLOOR = 1e-14


def schmidt_floor(tol: float) -> float:
    """The Schmidt values a run of tolerance ``tol`` resolves: ``max(tol, SCHMIDT_FLOOR)``. Its state
    is fixed to about ``tol`` (the error), so smaller ones are noise, and they give spurious transfer
    eigenvalues (the Majumdar-Ghosh point: values 1e-11 beside 1 gave a correlation length 3.1 to an
    exact dimer product); dropping them moves the state by about ``tol`` (TeNPy's ``svd_min``)."""
    return max(tol, SCHMIDT_FLOOR)


#: local problems of at most this many entries are diagonalized densely
DENSE_LOCAL = 64
#: the Krylov basis ARPACK keeps across its implicit restarts
ARPACK_NCV = 30


class _Local:
    """A local problem for an eigensolver: flat vectors of the shape ``like``."""

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray], like: np.ndarray, dtype: np.dtype):
        self.fn, self.like_shape = fn, like.shape
        self.shape = (like.size, like.size)
        self.dtype = dtype

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.fn(x.reshape(self.like_shape)).reshape(-1)


def lowest(fn: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, state_tol: float) -> np.ndarray:
    """The lowest eigenvector of ``fn`` near ``x0``, to a residual of about ``sqrt(state_tol)``, by
    ARPACK's implicitly restarted Lanczos (``scipy.sparse.linalg.eigsh``), which keeps a Krylov basis
    across restarts. (Lanczos restarted from one vector converged too slowly for the small gaps of
    ``H_AC`` near a critical point, and the inaccurate ``A_C`` drove the error back up: the critical
    TFIM at bond dimension 64 stalled near error 1e-5; it now reaches 1e-8, the energy to 7e-10.)"""
    dtype = np.result_type(x0)
    op = _Local(fn, x0, dtype)
    x = x0.reshape(-1)
    n = x.size
    if n <= DENSE_LOCAL:
        m = np.column_stack([op.matvec(e) for e in np.eye(n, dtype=dtype)])
        v = np.linalg.eigh(0.5 * (m + m.conj().T))[1][:, 0]
    else:
        lam = abs(np.vdot(x, op.matvec(x))) / max(float(np.vdot(x, x).real), 1e-300)
        tol = max(float(np.sqrt(state_tol)), 1e-14) / max(lam, 1.0)  # ARPACK's tolerance is relative to |lambda|
        lin = scipy.sparse.linalg.LinearOperator(op.shape, matvec=op.matvec, dtype=dtype)
        try:
            v = scipy.sparse.linalg.eigsh(lin, k=1, which="SA", v0=x, tol=tol, ncv=min(n - 1, ARPACK_NCV))[1][:, 0]
        except scipy.sparse.linalg.ArpackNoConvergence as e:  # what it reached; the next iteration goes on
            v = e.eigenvectors[:, 0] if e.eigenvectors.shape[1] else x
    v = v.reshape(x0.shape)
    ov = np.vdot(x0.reshape(-1), v.reshape(-1))  # keep the sign/phase of the start
    return v * (abs(ov) / ov) if abs(ov) > 0 else v
