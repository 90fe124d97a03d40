"""``A x = b`` on a tree: the tree network ``x`` of bonds at most ``max_bond`` solving the linear
system of a tree operator ``A`` and a tree network ``b``, by two-site sweeps over the tree's
Euler tour (E. Jeckelmann, Phys. Rev. B 66, 045114 (2002); the DMRG linear solver of
ITensors' ``linsolve``, here on trees).

With ``x`` canonical at the two updated nodes, the local system is the projection of ``A`` onto
the basis of the rest of ``x`` (the ground-state sweeps' local operator,
:meth:`~.sweeps.TreeBackend.local_problem`) and of ``b`` (the fit's target with the identity
operator, :meth:`~.fit.FitBackend.target`); it is solved by GMRES from the current tensor and
cut by the sweeps' truncated split. Both backends hold the same ``x``, split once and copied.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse.linalg

from ..tools.threads import blas_threads, check_threads
from .errors import TopologyMismatchError
from .fit import FitBackend
from .operator import TreeOperator, tree_operator
from .sweeps import TreeBackend, check_sweep_options
from .treetn import TreeTN

__all__ = ["tree_linsolve"]

LOCAL_RTOL = 1e-12  # the relative residual of each local GMRES solve


LOCAL_DENSE_MAX = 2048
"""A local system GMRES leaves unconverged (its relative residual above ``sqrt(LOCAL_RTOL)``) is
solved from its dense matrix up to this many unknowns (``n`` products; 64 MiB complex), else by
GMRES again with a longer restart, and a :class:`RuntimeWarning` names the residual if that too
falls short: a non-Hermitian local system (cond 900) stalled at the restart of 60 with residual
0.45, and the sweeps returned a solution 100% off without a word."""


def _local_solve(op, rhs: np.ndarray, x0: np.ndarray) -> np.ndarray:
    n = op.shape[0]
    lin = scipy.sparse.linalg.LinearOperator(op.shape, matvec=op.matvec, dtype=np.result_type(op.dtype, rhs))
    if n <= 64:  # small: the dense matrix, exactly
        return _dense_solve(op, rhs, lin.dtype)
    x, _ = scipy.sparse.linalg.gmres(lin, rhs, x0=x0, rtol=LOCAL_RTOL, atol=0.0, restart=min(n, 60), maxiter=20)
    if _residual(op, x, rhs) <= np.sqrt(LOCAL_RTOL):
        return x
    if n <= LOCAL_DENSE_MAX:
        return _dense_solve(op, rhs, lin.dtype)
    x, _ = scipy.sparse.linalg.gmres(lin, rhs, x0=x, rtol=LOCAL_RTOL, atol=0.0, restart=min(n, 400), maxiter=50)
    res = _residual(op, x, rhs)
    if res > np.sqrt(LOCAL_RTOL):
        warnings.warn(
            f"tree_linsolve: a local system of {n} unknowns did not converge (relative residual {res:.2e} after "
            "GMRES); the solution is that inexact there (more sweeps, or a better conditioned A)",
            RuntimeWarning,
            stacklevel=4,
        )
    return x


def _dense_solve(op, rhs: np.ndarray, dtype) -> np.ndarray:
    dense = np.column_stack([op.matvec(e) for e in np.eye(op.shape[0], dtype=dtype)])
    return np.linalg.lstsq(dense, rhs, rcond=None)[0]


def _residual(op, x: np.ndarray, rhs: np.ndarray) -> float:
    norm = float(np.linalg.norm(rhs))
    return float(np.linalg.norm(op.matvec(x) - rhs)) / norm if norm > 0.0 else float(np.linalg.norm(x))


def tree_linsolve(
    A: TreeOperator,
    b: TreeTN,
    x0: TreeTN | None = None,
    *,
    max_bond: int = 32,
    cutoff: float = 1e-14,
    sweeps: int = 4,
    root: int = 0,
    threads: int | None = None,
) -> TreeTN:
    """``x`` with ``A x = b`` as a tree network of bonds at most ``max_bond``, by ``sweeps``
    two-site sweeps from ``x0`` (default: ``b`` itself). ``threads``: BLAS threads for the run, as
    :func:`~.sweeps.tree_dmrg`'s."""
    max_bond, sweeps, root = check_sweep_options("tree_linsolve", A, "A", b, "b", max_bond, sweeps, root, cutoff=cutoff)
    threads = check_threads(threads)
    with blas_threads(threads, max_bond):  # the whole run: the local solves, the splits
        x0 = b if x0 is None else x0
        if not isinstance(x0, TreeTN) or x0.tree != A.tree or x0.site_dims != b.site_dims:
            raise TopologyMismatchError("tree_linsolve: x0 must be a TreeTN on the tree and sites of b")
        if A.n_nodes == 1:
            return TreeTN(A.tree, [np.linalg.solve(A.tensors[0], b.tensors[0])])
        identity = tree_operator(A.tree, [(1.0, {0: np.eye(A.local_dims[0])})], A.local_dims)
        system = TreeBackend(A, x0, root)
        source = FitBackend(identity, b, x0, root)
        for _ in range(int(sweeps)):
            for step in A.tree.schedule(root, two_site=True):
                local = system.local_problem(step)
                _, rhs = source.target(step)
                x = _local_solve(local.op, rhs, local.v0)
                system.split(local, x, alpha=0.0, max_bond=int(max_bond), cutoff=float(cutoff))
                for u in (step.leaving, step.arriving):
                    source.psi[u] = system.psi[u]
                system.move(local)
                source.move(local)
        return TreeTN(A.tree, system.psi, center=root)
