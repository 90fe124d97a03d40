"""``H |psi>`` on a tree by variational fitting: the state ``phi`` of bonds at most ``max_bond``
closest to ``H |psi>``, by two-site sweeps over the tree's Euler tour (the schedule of the
sweeps, :meth:`~.topology.Tree.schedule`).

With ``phi`` canonical at the two updated nodes, the distance ``|| phi - H psi ||`` is smallest
when their tensor is the projection of ``H psi`` onto the basis of the rest of ``phi``: the
environments of ``<phi| H |psi>`` around the two nodes contracted with their ``psi`` and ``H``
tensors; it is cut by the same truncated split as the ground-state sweeps
(:meth:`~.sweeps.TreeBackend.split`), whose environments are reused with ``psi`` as the ket and
``phi`` as the bra (the tree form of the chain's fit in :mod:`tensor4all.algorithms.apply`;
E. M. Stoudenmire and S. R. White, New J. Phys. 12, 055026 (2010)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.schedule import TreeStep
from ..tools.threads import blas_threads, bond_of, check_threads
from .errors import TopologyMismatchError
from .operator import TreeOperator
from .sweeps import TreeBackend, TreeLocal, _einsum, check_sweep_options
from .treetn import TreeTN

__all__ = ["apply_fit"]


@dataclass
class _Shape:
    xshape: tuple[int, ...]


class FitBackend(TreeBackend):
    """``phi`` (``self.psi``, the bra) fitted to ``H |psi>`` (``self.ket``); environments of
    ``<phi| H |psi>`` per directed edge."""

    def __init__(self, H: TreeOperator, psi: TreeTN, guess: TreeTN, root: int = 0):
        self.ket = [t.astype(np.result_type(H.dtype, psi.dtype)) for t in psi.tensors]
        super().__init__(H, guess, root)

    def _build_env(self, u: int, v: int) -> None:
        ket = self._ket_labels(u)
        ops = [self.ket[u], self.ws[u], self.psi[u].conj()]
        labs = [ket, self._w_labels(u), self._labels(u, "bra")]
        for w in self.tree.neighbours[u]:
            if w != v:
                ops.append(self.env[(w, u)])
                labs.append(self._fit_env_labels(w, u))
        self.env[(u, v)] = _einsum(ops, labs, self._fit_env_labels(u, v))

    def _ket_labels(self, u: int) -> list:
        """``psi``'s legs at ``u``: its own bond labels ``("k", a, b)``, the site as ``phi``'s."""
        return [("k",) + lab[1:] if lab[1] != "s" else lab for lab in self._labels(u, "ket")]

    def _fit_env_labels(self, w: int, u: int) -> list:
        e = (min(u, w), max(u, w))
        return [("k",) + e, ("w",) + e, ("bra",) + e]

    def target(self, step: TreeStep) -> tuple[TreeLocal, np.ndarray]:
        """The best two-site tensor of ``phi`` on the step's edge, and its local record for
        :meth:`split`."""
        nodes = (step.leaving, step.arriving)
        ops, labs = [], []
        for u in nodes:
            ops += [self.ket[u], self.ws[u]]
            labs += [self._ket_labels(u)]
            labs += [self._w_labels(u)]
            for w in self.tree.neighbours[u]:
                if w not in nodes:
                    ops.append(self.env[(w, u)])
                    labs.append(self._fit_env_labels(w, u))
        inner = ("bra", *sorted(nodes))
        out = [lab for u in nodes for lab in self._labels(u, "bra") if lab != inner]
        x = _einsum(ops, labs, out)
        legs = [("ket",) + lab[1:] for lab in out]
        return TreeLocal(step, _Shape(x.shape), x.reshape(-1), nodes, legs), x.reshape(-1)  # type: ignore[arg-type]


def apply_fit(
    H: TreeOperator,
    psi: TreeTN,
    *,
    max_bond: int,
    cutoff: float = 1e-14,
    sweeps: int = 4,
    guess: TreeTN | None = None,
    root: int = 0,
    threads: int | None = None,
) -> TreeTN:
    """``H |psi>`` as a tree network of bonds at most ``max_bond``, fitted by ``sweeps`` two-site
    sweeps from ``guess`` (default: ``psi`` truncated to ``max_bond``). ``threads``: BLAS threads
    for the run, as :func:`tree_dmrg`'s."""
    max_bond, sweeps, root = check_sweep_options("apply_fit", H, "H", psi, "psi", max_bond, sweeps, root, cutoff=cutoff)
    threads = check_threads(threads)
    with blas_threads(threads, max(max_bond, bond_of(psi))):  # the whole run: the start, the sweeps
        start = psi.truncate(max_bond=max_bond) if guess is None else guess
        if start.tree != H.tree or start.site_dims != psi.site_dims:
            raise TopologyMismatchError("apply_fit: guess must live on the tree and sites of psi")
        if H.n_nodes == 1:  # no bond to fit
            return H.apply(psi)
        b = FitBackend(H, psi, start, root)
        schedule = H.tree.schedule(root, two_site=True)
        for _ in range(int(sweeps)):
            for step in schedule:
                local, x = b.target(step)
                b.split(local, x, alpha=0.0, max_bond=int(max_bond), cutoff=float(cutoff))
                b.move(local)
        return TreeTN(H.tree, b.psi, center=root)
