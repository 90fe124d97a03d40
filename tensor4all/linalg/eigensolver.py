"""Local eigensolvers of DMRG: the lowest eigenpair of a Hermitian operator given by
its matrix-vector product, warm-started from the current tensor.

Registered by name (``SOLVERS``):

* ``"lanczos"`` (default) -- a Lanczos iteration with full reorthogonalization that
  stops as soon as the lowest Ritz value changes by less than ``tol`` (after at least
  ``min_iter`` products) or the Krylov space becomes invariant. Warm-started from a
  good guess it needs only a few products, which is what makes sweeps cheap.
* ``"eigsh"`` -- ARPACK through :func:`scipy.sparse.linalg.eigsh` on a
  ``LinearOperator`` (``which="SA"``, ``v0`` the current tensor); it always builds a
  Krylov space of ``ncv`` vectors before its first convergence test.

Local problems of dimension at most :data:`DENSE_MAX` whose operator can give its matrix
(``op.dense()``) are diagonalized densely instead (:func:`dense_lowest`, TeNPy's
``diag_method="default"``): a Krylov space grown from the current tensor keeps the symmetries
of the local problem that tensor has. At a degenerate lowest level Lanczos returns the start's
projection onto it, and from the Neel state the 6 x 3 Hubbard cylinder's first sweep then stays
in a symmetric family of states (-6.05 against -6.19; TeNPy's first sweep: -6.23); a start with
no overlap with the lowest level gives a local excited state. Within a degenerate level the
dense solver picks a vector fixed by the level itself (:func:`dense_lowest`) and gives the rest of
the level too (:func:`dense_lowest_level`): the sweep keeps the bond basis of the level's equal
mixture, so that no choice within the level is made (the 6 x 3 cylinder's first sweep: -6.317;
the final energy of its ten sweeps at m = 200 no longer depends on the choice, which moved it by
up to 1.8e-4 before). (The sector backend
gives ``dense``; a dense run keeps Lanczos, whose start then chooses the charge sector.)

Each solver returns ``(eigenvalue, unit eigenvector, number of products)``. Lanczos keeps its
Krylov vectors where ``v0`` lives (NumPy or CuPy, :mod:`._device`); only the tridiagonal
matrix (two numbers per product) lives on the host.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Protocol

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ..tools.device import array_module, to_host
from ..tools.errors import InvalidOptionError
from .lapack import lowest_tridiagonal

__all__ = [
    "lanczos",
    "eigsh",
    "dense_lowest",
    "dense_lowest_level",
    "DENSE_MAX",
    "DEGENERATE_TOL",
    "SOLVERS",
    "get_solver",
    "LocalOperator",
    "WORKSPACE_MAX_BYTES",
]


class LocalOperator(Protocol):
    shape: tuple[int, int]
    dtype: np.dtype

    def matvec(self, x: np.ndarray) -> np.ndarray: ...


DGKS = 0.7071067811865476
"""Reorthogonalize again when a pass leaves less than this fraction of the vector's norm."""


DENSE_MAX = 128
"""Local problems up to this dimension are diagonalized densely. TeNPy's ``max_N_for_ED`` is
400; here LAPACK's lowest eigenpair of 128 states takes 0.4 ms, about what Lanczos's products
on such a problem cost, of 400 states 5 ms: at 400 the points of the TFIM scan benchmark (L = 32,
chi 64) took 1.45x longer than at 128 (5.8 s against 4.0 s for 24 points; 4.7 s without dense
solves), and the 6 x 3 Hubbard cylinder's first sweep reaches -6.1916 at 64, 128 and 400 (-6.055
without)."""


MIN_GAP = 1e-12
"""The smallest gap the state criterion of :func:`lanczos` divides by (TeNPy's ``min_gap``)."""


WORKSPACE_MAX_BYTES = 1 << 28
"""The largest Krylov basis (bytes) that :func:`lanczos` keeps for the next call of its thread:
a thread that solved a large problem holds its basis (at most this, per dtype) until it ends."""

_WORKSPACE = threading.local()


@contextlib.contextmanager
def _krylov_basis(xp: Any, rows: int, n: int, dtype: np.dtype) -> Iterator[Any]:
    """Room for ``rows`` Krylov vectors of ``n`` entries, in the thread's kept buffer where it
    fits in :data:`WORKSPACE_MAX_BYTES` (host arrays), marked in use until the block ends (a
    solve within an operator's product then gets a basis of its own). A basis of a few tens of
    megabytes is otherwise fresh memory from the operating system at every call, whose pages
    fault in as the vectors are first written: 0.57 ms against 0.13 ms to write one of 130k
    entries (the 6 x 3 Hubbard cylinder at bond dimension 400), 4% of a run."""
    size = rows * n
    if xp is not np or size * dtype.itemsize > WORKSPACE_MAX_BYTES or getattr(_WORKSPACE, "busy", False):
        yield xp.empty((rows, n), dtype=dtype)  # a device, too large, or a solve within a product
        return
    held = getattr(_WORKSPACE, dtype.char, None)
    if held is None or held.size < size:
        grown = 2 * (0 if held is None else held.size)
        held = np.empty(size if grown * dtype.itemsize > WORKSPACE_MAX_BYTES else max(size, grown), dtype=dtype)
        setattr(_WORKSPACE, dtype.char, held)
    _WORKSPACE.busy = True
    try:
        yield held[:size].reshape(rows, n)
    finally:
        _WORKSPACE.busy = False


def lanczos(
    op: LocalOperator, v0: np.ndarray, tol: float = 1e-12, max_iter: int = 40, min_iter: int = 2, state_tol: float = 0.0
) -> tuple[float, np.ndarray, int]:
    """Lowest eigenpair by Lanczos with full reorthogonalization: after the three-term
    recurrence, classical Gram-Schmidt against the whole basis, repeated once when it cancelled
    most of the vector (the criterion of Daniel, Gragg, Kaufman and Stewart, Math. Comp. 30,
    772 (1976), as in ARPACK: twice is enough, and once is enough unless the norm fell below
    ``1/sqrt 2`` of what the recurrence left).

    Stops after at least ``min_iter`` products once the lowest Ritz value moved by less than
    ``tol``, or once the estimated error of the Ritz vector is small: ``(|r| / gap)^2 <
    state_tol`` with ``|r|`` the Ritz residual (the last Krylov coefficient times the next
    ``beta``) and ``gap`` the distance to the second Ritz value (at least :data:`MIN_GAP`),
    the Davis-Kahan bound on the squared angle to the eigenvector, as TeNPy's ``P_tol``
    (J. Hauschild and F. Pollmann, SciPost Phys. Lect. Notes 5 (2018)). ``state_tol = 0``: off."""
    n = v0.size
    xp = array_module(v0)
    dtype = np.result_type(op.dtype, v0.dtype)
    nv = float(np.linalg.norm(v0))
    if nv == 0.0:
        v0 = xp.asarray(np.random.default_rng(0).standard_normal(n).astype(dtype))
        nv = float(np.linalg.norm(v0))
    max_iter = max(1, min(max_iter, n))
    with _krylov_basis(xp, max_iter, n, np.dtype(dtype)) as basis:
        complex_ = np.issubdtype(dtype, np.complexfloating)
        on_host = xp is np
        basis[0] = v0.reshape(-1) / nv
        alphas: list[float] = []
        betas: list[float] = []
        e_old = np.inf
        matvecs = 0
        y = np.ones(1)
        energy = 0.0
        for k in range(max_iter):
            w = op.matvec(basis[k])
            matvecs += 1
            alpha = float(np.vdot(basis[k], w).real)
            alphas.append(alpha)
            # the three-term recurrence, then full reorthogonalization against the whole basis:
            # one pass, a second only where the first cancelled most of what was left
            # (on a device both passes: reading a norm back would stall the stream)
            w = w - alpha * basis[k]
            if k:
                w = w - betas[-1] * basis[k - 1]
            before = float(np.linalg.norm(w)) if on_host else np.inf
            for _ in range(2):
                v = basis[: k + 1]
                w = w - v.T @ ((v @ w.conj()).conj() if complex_ else v @ w)
                beta = float(np.linalg.norm(w)) if on_host else 0.0
                if beta > DGKS * before:
                    break
                before = beta
            if not on_host:
                beta = float(np.linalg.norm(w))
            if k == 0:
                evals, evecs = np.array([alpha]), np.ones((1, 1))
            else:
                evals, evecs = lowest_tridiagonal(np.array(alphas), np.array(betas), 2 if state_tol > 0.0 else 1)
            energy, y = float(evals[0]), evecs[:, 0]
            invariant = beta <= 1e-14 * max(1.0, abs(alpha))
            settled = abs(energy - e_old) < tol
            if state_tol > 0.0 and k > 0:
                settled |= (abs(y[-1]) * beta / max(float(evals[1] - evals[0]), MIN_GAP)) ** 2 < state_tol
            if invariant or (k + 1 >= min_iter and settled) or k + 1 == max_iter:
                break
            e_old = energy
            betas.append(beta)
            basis[k + 1] = w / beta
        vec = basis[: len(y)].T @ xp.asarray(y)
        return energy, vec / np.linalg.norm(vec), matvecs


def eigsh(
    op: LocalOperator, v0: np.ndarray, tol: float = 1e-12, max_iter: int = 40, min_iter: int = 2, state_tol: float = 0.0
) -> tuple[float, np.ndarray, int]:
    """Lowest eigenpair by ARPACK (scipy ``eigsh``, ``which="SA"``), to ARPACK's relative
    tolerance ``tol`` (``state_tol`` is accepted for the solvers' common signature and not
    used). ARPACK runs on the host: with device arrays each product copies its vector to the
    device and back. As :func:`lanczos`, a start vector that is an eigenvector is returned (the
    Krylov space of the start: a run from all spins up stays there), and problems of at most 3
    states go to :func:`lanczos`."""
    n = v0.size
    if n <= 3:  # ARPACK needs k < n; tiny problems by Lanczos, exact there (n products at most)
        return lanczos(op, v0, tol=tol, max_iter=n, min_iter=min_iter, state_tol=state_tol)
    xp = array_module(v0)
    v0 = to_host(v0)
    count = [0]

    def mv(x: np.ndarray) -> np.ndarray:
        count[0] += 1
        return to_host(op.matvec(xp.asarray(np.ascontiguousarray(x).reshape(-1))))

    # a start vector that spans an invariant space (an eigenvector: all spins up) is the answer;
    # ARPACK would go on from a random vector there, out of the start's charge sector
    nv = float(np.linalg.norm(v0))
    if nv > 0.0:
        x = v0.reshape(-1) / nv
        hx = mv(x)
        e = float(np.vdot(x, hx).real)
        if float(np.linalg.norm(hx - e * x)) <= 1e-14 * max(1.0, abs(e)):
            return e, xp.asarray(x), count[0]

    lin = scipy.sparse.linalg.LinearOperator(op.shape, matvec=mv, dtype=op.dtype)
    w, v = scipy.sparse.linalg.eigsh(
        lin, k=1, which="SA", v0=v0.reshape(-1), tol=tol, ncv=min(n, max(min_iter + 1, 20)), maxiter=max(max_iter, 100)
    )
    return float(w[0]), xp.asarray(np.ascontiguousarray(v[:, 0])), count[0]


DEGENERATE_TOL = 1e-9
"""Eigenvalues within this distance of the lowest one (relative to the largest magnitude of
the spectrum) count as one level in :func:`dense_lowest`."""


def _lowest_level(w: np.ndarray) -> int:
    """How many of the ascending eigenvalues ``w`` lie within ``DEGENERATE_TOL`` of the lowest
    (the largest magnitude of ascending values is that of the first or the last; the few values
    of a sweep's local problem are compared as Python floats, a sixth of NumPy's calls' cost)."""
    values = w.tolist()
    limit = values[0] + DEGENERATE_TOL * max(1.0, abs(values[0]), abs(values[-1]))
    return sum(x <= limit for x in values)


def dense_lowest(op: LocalOperator, like: np.ndarray) -> tuple[float, np.ndarray, int]:
    """The exact lowest eigenpair of ``op.dense()`` (LAPACK's ``syevr``/``heevr`` for the lowest
    eigenvalues), the vector where ``like`` lives; no products (count 0).

    At a degenerate lowest level the vector is the level's projection of a fixed generic vector
    (``sin(1 + k sqrt 2)``, ``k = 0..n-1``): it is defined by the level alone, not by which
    basis of it LAPACK returns (that differs between LAPACK builds and would decide where a
    sweep from a symmetric start goes), and it breaks the symmetries that made the level
    degenerate, which the start's own projection (what Lanczos returns) keeps. The rest of the
    level: :func:`dense_lowest_level`."""
    e, x, _ = dense_lowest_level(op, like)
    return e, x, 0


def dense_lowest_level(op: LocalOperator, like: np.ndarray) -> tuple[float, np.ndarray, list[np.ndarray]]:
    """:func:`dense_lowest`, and the rest of a degenerate lowest level: unit vectors that span it
    with the returned one, orthogonal to it and to each other (an empty list for a single
    lowest state). A sweep keeps the bond basis of the level's equal mixture (``level`` of the
    sector backend's ``split``): the mixture is the projector onto the level, fixed by the level
    alone, and the next local problem then chooses within the level, with the coupling to the
    next site that this one does not see (S. R. White, Phys. Rev. B 48, 10345 (1993), targeting
    several states by one density matrix)."""
    h = op.dense()
    h = h + (h.conj().T if h.dtype.kind == "c" else h.T)  # Hermitian to rounding: its mean with its adjoint
    h *= 0.5
    n = h.shape[0]
    for k in (2, 8):  # the lowest two tell a single lowest state (MRRR costs per vector: 8 take 2.5x as long)
        w, v = _lowest_evr(h, min(n, k))
        level = _lowest_level(w)
        if level < min(n, k) or k >= n:
            break
    else:  # the level may go on beyond the eigenvalues asked for
        w, v = scipy.linalg.eigh(h, driver="evd")
        level = _lowest_level(w)
    xp = array_module(like)
    if level == 1:
        return float(w[0]), xp.asarray(v[:, 0]), []
    basis = v[:, :level]
    x = basis @ (basis.conj().T @ np.sin(1.0 + np.arange(n) * np.sqrt(2.0)))
    x = x / np.linalg.norm(x)
    # x's coordinates in the level and an orthonormal completion of them (QR of [c, 1])
    c = basis.conj().T @ x
    q, _ = np.linalg.qr(np.column_stack([c, np.eye(level, dtype=c.dtype)]))
    rest = basis @ q[:, 1:level]
    return float(w[0]), xp.asarray(x), [xp.asarray(rest[:, j]) for j in range(level - 1)]


_EVR: dict[tuple[int, str], tuple] = {}  # (n, dtype char) -> (syevr / heevr, its workspace sizes)


def _lowest_evr(h: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` lowest eigenpairs of the Hermitian ``h``: ``scipy.linalg.eigh(h, subset_by_index=(0,
    k - 1), driver="evr")`` with the same LAPACK call and arguments, the workspace query remembered
    per size (SciPy's checks and query cost 30 to 120 us on the 6 to 128 states of the sector
    sweeps' local problems, a third of the solve on the small ones). Other dtypes and failures
    go to SciPy."""
    key = (h.shape[0], h.dtype.char)
    held = _EVR.get(key)
    if held is None:
        if h.dtype.char not in "dD" or not h.size:
            return scipy.linalg.eigh(h, subset_by_index=(0, k - 1), driver="evr")
        name = "syevr" if h.dtype.char == "d" else "heevr"
        drv, drv_lwork = scipy.linalg.get_lapack_funcs((name, name + "_lwork"), (h,))
        *work, info = drv_lwork(n=h.shape[0], lower=True)
        if info != 0:
            return scipy.linalg.eigh(h, subset_by_index=(0, k - 1), driver="evr")
        names = ("lwork", "liwork") if h.dtype.char == "d" else ("lwork", "lrwork", "liwork")
        held = _EVR[key] = (drv, {n: int(np.real(x)) for n, x in zip(names, work)})  # SciPy's rounding (doubles)
    drv, sizes = held
    w, v, m, *_, info = drv(a=h, overwrite_a=False, range="I", il=1, iu=k, lower=True, compute_v=1, **sizes)
    if info != 0 or m < 1 or not np.isfinite(w[0]):  # SciPy raises (a NaN in h: its finiteness check)
        return scipy.linalg.eigh(h, subset_by_index=(0, k - 1), driver="evr")
    return w[:m], v[:, :m]


Solver = Callable[..., tuple[float, np.ndarray, int]]
SOLVERS: dict[str, Solver] = {"lanczos": lanczos, "eigsh": eigsh}


def get_solver(name: str) -> Solver:
    try:
        return SOLVERS[name]
    except (KeyError, TypeError):
        raise InvalidOptionError(
            f"unknown local eigensolver {name!r}; valid eigensolvers: {', '.join(sorted(SOLVERS))}"
        ) from None
