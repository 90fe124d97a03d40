"""Ground states on a tree: the one sweep loop (:class:`~tensor4all.algorithms.sweep.Sweep`)
walking the Euler tour of the tree's edges (:func:`~tensor4all.algorithms.schedule.tree_schedule`;
a chain's schedule is the tour of a path) with :class:`TreeBackend`, the tree's side of the
sweep protocol (:class:`~tensor4all.algorithms.backend.SweepBackend`: ``local_problem``,
``split``, ``move``, ``normalize``, ``energy`` and the statistics), and :func:`tree_dmrg`.

Environments are kept per directed edge: ``env[(w, u)]`` ``(ket, operator, bra)`` is
everything on ``w``'s side of the edge ``(w, u)`` contracted. A step moving the centre from
``u`` to ``v`` solves the local problem of ``u`` and ``v`` (two-site) or ``u`` (one-site) with
the environments of all other edges around them, cuts the edge ``(u, v)`` by the truncated
SVD (``u`` left an isometry toward ``v``) and builds ``env[(u, v)]``. On the tour every
environment a step reads is current: an edge's environment toward a node is rebuilt each time
the centre crosses that edge toward it, and nothing on its side changes until the centre comes
back (S. Szalay et al., Int. J. Quantum Chem. 115, 1342 (2015), sec. 4; tree DMRG of
V. Murg, F. Verstraete, O. Legeza and R. M. Noack, Phys. Rev. B 82, 205105 (2010)).
The split takes no noise: ``alpha`` perturbs the eigensolver's start vector only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import opt_einsum

from ..algorithms.schedule import TreeStep
from ..algorithms.sweep import MAX_ITER, Sweep
from ..linalg.eigensolver import get_solver
from ..linalg.truncation import thin_svd, truncation_keep
from ..tools.checks import check_bool, check_callable, check_cutoff, check_positive_int, check_real, check_seed
from ..tools.errors import InvalidOptionError, NonHermitianError, Tensor4allTypeError
from ..tools.threads import blas_threads, check_threads
from .errors import TopologyMismatchError
from .operator import TreeOperator
from .treetn import TreeTN, inner

__all__ = ["TreeBackend", "TreeSweep", "tree_dmrg", "TreeDMRGResult"]


class TreeLocalOperator:
    """``x -> H_eff x`` for the local tensor of one or two nodes: one pairwise contraction
    sequence (opt_einsum's ``contract_expression``), planned once per local problem."""

    def __init__(self, operands: list[np.ndarray], subs: list[list[int]], x_sub: list[int], y_sub: list[int], shape):
        self.xshape = tuple(shape)
        size = int(np.prod(shape))
        self.shape = (size, size)
        self.dtype = np.result_type(*operands)
        self.operands = operands
        args: list[Any] = []
        for a, sub in zip(operands, subs):
            args += [a, sub]
        self._expr = opt_einsum.contract_expression(
            *args, self.xshape, x_sub, y_sub, constants=list(range(len(operands))), optimize="greedy"
        )
        self.matvecs = 0

    def matvec(self, x: np.ndarray) -> np.ndarray:
        self.matvecs += 1
        return self._expr(x.reshape(self.xshape)).reshape(-1)


@dataclass
class TreeLocal:
    step: TreeStep
    op: TreeLocalOperator
    v0: np.ndarray
    nodes: tuple[int, ...]
    legs: list = field(default_factory=list)  # the labels of the local tensor's legs


class TreeBackend:
    """A :class:`TreeTN` state (one site leg per node), a :class:`TreeOperator` and the
    environments of every directed edge; the centre at ``root`` between sweeps."""

    def __init__(self, H: TreeOperator, psi: TreeTN, root: int = 0):
        self.tree, self.root = H.tree, root
        self.L = H.n_nodes
        self.ws = list(H.tensors)
        self.dtype = np.result_type(H.dtype, psi.dtype)
        self.psi = [t.astype(self.dtype) for t in psi.canonicalize(root).tensors]
        self.env: dict[tuple[int, int], np.ndarray] = {}
        parent = self.tree.parents(root)
        for u in self.tree.toward(root)[:-1]:
            self._build_env(u, parent[u])

    # ---- labels ------------------------------------------------------------------------
    def _labels(self, u: int, kind: str) -> list:
        """Node ``u``'s legs as labels: bonds ``(kind, a, b)``, the site ``(kind, "s", u)``."""
        return [(kind, min(u, w), max(u, w)) for w in self.tree.neighbours[u]] + [(kind, "s", u)]

    def _w_labels(self, u: int) -> list:
        return [("w", min(u, w), max(u, w)) for w in self.tree.neighbours[u]] + [("bra", "s", u), ("ket", "s", u)]

    def _env_labels(self, w: int, u: int) -> list:
        e = (min(u, w), max(u, w))
        return [("ket",) + e, ("w",) + e, ("bra",) + e]

    # ---- environments ------------------------------------------------------------------
    def _build_env(self, u: int, v: int) -> None:
        """``env[(u, v)]``: node ``u`` with the environments of its other edges."""
        ops = [self.psi[u], self.ws[u], self.psi[u].conj()]
        labs = [self._labels(u, "ket"), self._w_labels(u), self._labels(u, "bra")]
        for w in self.tree.neighbours[u]:
            if w != v:
                ops.append(self.env[(w, u)])
                labs.append(self._env_labels(w, u))
        self.env[(u, v)] = _einsum(ops, labs, self._env_labels(u, v))

    # ---- the sweep's protocol ----------------------------------------------------------
    def local_problem(self, step: TreeStep) -> TreeLocal:
        nodes = (step.leaving, step.arriving) if step.n_sites == 2 else (step.leaving,)
        x_ops = [self.psi[u] for u in nodes]
        x_labs = [self._labels(u, "ket") for u in nodes]
        inner = {("ket", *sorted(nodes))} if len(nodes) == 2 else set()
        legs = [lab for labs in x_labs for lab in labs if lab not in inner]
        theta = _einsum(x_ops, x_labs, legs)
        ops, labs = [], []
        for u in nodes:
            ops.append(self.ws[u])
            labs.append(self._w_labels(u))
            for w in self.tree.neighbours[u]:
                if w not in nodes:
                    ops.append(self.env[(w, u)])
                    labs.append(self._env_labels(w, u))
        out = [("bra",) + lab[1:] for lab in legs]
        ids: dict = {}
        subs = [[ids.setdefault(x, len(ids)) for x in lab] for lab in labs]
        op = TreeLocalOperator(
            ops, subs, [ids.setdefault(x, len(ids)) for x in legs], [ids[x] for x in out], theta.shape
        )
        return TreeLocal(step, op, theta.reshape(-1), nodes, legs)

    def split(
        self,
        local: TreeLocal,
        v: np.ndarray,
        *,
        alpha: float,
        max_bond: int,
        cutoff: float,
        keep_bond: bool = False,
        level: Sequence[np.ndarray] = (),
    ) -> tuple[int, float]:
        """Cut the new local tensor at the step's edge: ``leaving`` an isometry toward
        ``arriving``, the weights moved with the centre; ``(bond dimension, discarded weight)``.
        ``level`` is always empty here (these operators do not give their matrix)."""
        step = local.step
        u, w = step.leaving, step.arriving
        x = v.reshape(local.op.xshape)
        edge = ("ket", min(u, w), max(u, w))
        if step.n_sites == 1:  # the far factor is absorbed into the arriving node
            ulegs = [lab for lab in local.legs if lab != edge]
            rest = [edge]
            x_rest = None
        else:
            ulegs = [lab for lab in local.legs if lab in self._labels(u, "ket")]
            rest = [lab for lab in local.legs if lab not in ulegs]
            x_rest = rest
        perm = [local.legs.index(lab) for lab in ulegs + rest]
        xt = x.transpose(perm)
        nrow = int(np.prod(xt.shape[: len(ulegs)]))
        uu, s, vh = thin_svd(xt.reshape(nrow, -1))
        keep, err = truncation_keep(s, max_bond, cutoff)
        uu, right = uu[:, :keep], s[:keep, None] * vh[:keep]
        # node u: its legs in node order, the edge to w now of dimension keep
        a = uu.reshape(*xt.shape[: len(ulegs)], keep)
        have = ulegs + [edge]
        self.psi[u] = a.transpose([have.index(lab) for lab in self._labels(u, "ket")])
        if x_rest is None:  # one site: right (keep, old bond) into node w
            j = self.tree.leg(w, u)
            self.psi[w] = np.moveaxis(np.tensordot(right, self.psi[w], axes=(1, j)), 0, j)
        else:
            b = right.reshape(keep, *xt.shape[len(ulegs) :])
            have = [edge] + rest
            self.psi[w] = b.transpose([have.index(lab) for lab in self._labels(w, "ket")])
        return keep, float(err)

    def move(self, local: TreeLocal) -> None:
        self._build_env(local.step.leaving, local.step.arriving)

    def normalize(self) -> None:
        self.psi[self.root] = self.psi[self.root] / np.linalg.norm(self.psi[self.root])

    def energy(self) -> float:
        """``<psi|H|psi> / <psi|psi>`` with the centre at the root."""
        r = self.root
        ops, labs = (
            [self.psi[r], self.ws[r], self.psi[r].conj()],
            [self._labels(r, "ket"), self._w_labels(r), self._labels(r, "bra")],
        )
        for w in self.tree.neighbours[r]:
            ops.append(self.env[(w, r)])
            labs.append(self._env_labels(w, r))
        e = _einsum(ops, labs, [])
        return float(np.real(e) / np.vdot(self.psi[r], self.psi[r]).real)

    def single_site(self) -> float:
        """One node: the lowest eigenvector of its operator, exactly."""
        w = self.ws[0]
        e, vec = np.linalg.eigh(0.5 * (w + w.conj().T))
        self.psi[0] = vec[:, 0].astype(self.dtype)
        return float(e[0])

    def bond_dims(self) -> list[int]:
        return [self.psi[u].shape[self.tree.leg(u, v)] for u, v in self.tree.edges]

    def work_bytes(self, local: TreeLocal, matvecs: int) -> int:
        return matvecs * local.v0.size * np.dtype(self.dtype).itemsize

    def env_bytes(self) -> int:
        return sum(a.nbytes for a in self.env.values())

    def psi_bytes(self) -> int:
        return sum(a.nbytes for a in self.psi)

    def state(self) -> TreeTN:
        return TreeTN(self.tree, self.psi, center=self.root)


def _einsum(ops: list[np.ndarray], labs: list[list], out: list) -> np.ndarray:
    ids: dict = {}
    args: list[Any] = []
    for a, lab in zip(ops, labs):
        args += [a, [ids.setdefault(x, len(ids)) for x in lab]]
    return opt_einsum.contract(*args, [ids[x] for x in out], optimize="greedy")


class TreeSweep(Sweep):
    """The sweep loop of :class:`~tensor4all.algorithms.sweep.Sweep` on a :class:`TreeBackend`:
    only the schedule differs, the Euler tour of the tree from its root."""

    backend: TreeBackend

    def schedule(self, two_site: bool) -> tuple[TreeStep, ...]:
        return self.backend.tree.schedule(self.backend.root, two_site)


@dataclass(frozen=True)
class TreeDMRGResult:
    """What :func:`tree_dmrg` returns: the ``energy``, the ``state`` (canonical at the root),
    and per sweep the energies, largest bonds and largest discarded weights."""

    energy: float
    state: TreeTN
    energies: list[float]
    max_bonds: list[int]
    truncation_errors: list[float]


def check_sweep_options(
    what: str,
    H: Any,
    h_name: str,
    psi: Any,
    psi_name: str,
    max_bond: Any,
    sweeps: Any,
    root: Any,
    optional: bool = False,
    cutoff: Any = 0.0,
) -> tuple[int, int, int]:
    """The checks every sweep over a tree operator shares (:func:`tree_dmrg`, ``apply_fit``,
    ``tree_linsolve``): ``H`` a :class:`TreeOperator`, ``psi`` a :class:`TreeTN` state on its tree and
    sites (or None with ``optional``), ``max_bond`` and ``sweeps`` positive integers, ``root`` a node,
    ``cutoff`` a relative discarded weight in ``[0, 1)``; returns ``max_bond``, ``sweeps``, ``root``."""
    check_cutoff(cutoff, f"{what}: cutoff")
    max_bond = check_positive_int(max_bond, f"{what}: max_bond")
    sweeps = check_positive_int(sweeps, f"{what}: sweeps", InvalidOptionError)
    if not isinstance(H, TreeOperator):
        raise Tensor4allTypeError(f"{what}: {h_name} must be a TreeOperator, got {type(H).__name__}")
    if psi is None and optional:
        return max_bond, sweeps, H.tree._check_node(root, what)
    if not isinstance(psi, TreeTN) or isinstance(psi, TreeOperator):
        raise Tensor4allTypeError(f"{what}: {psi_name} must be a TreeTN state, got {type(psi).__name__}")
    if psi.tree != H.tree or psi.site_dims != tuple((d,) for d in H.local_dims):
        raise TopologyMismatchError(
            f"{what}: {psi_name} ({psi.tree!r}, sites {psi.site_dims}) does not fit {h_name} ({H.tree!r}, {H.local_dims})"
        )
    return max_bond, sweeps, H.tree._check_node(root, what)


def check_hermitian(H: TreeOperator, what: str) -> None:
    """:class:`NonHermitianError` unless ``||H - H^dagger||_F^2 / ||H||_F^2 <= 1e-12`` (the chain
    ``dmrg``'s test), from two tree contractions: ``||H||^2 = <H|H>`` and ``Tr(H H) = <H^dagger|H>``
    (a non-Hermitian operator gave an "energy" without a word)."""
    adjoint = TreeOperator(H.tree, [np.swapaxes(t, -1, -2).conj() for t in H.tensors])
    norm2 = float(np.real(inner(H, H)))
    if not norm2 > 0.0:
        return
    defect = max(2.0 * (norm2 - float(np.real(inner(adjoint, H)))), 0.0) / norm2
    if defect > 1e-12:
        raise NonHermitianError(
            f"{what} needs a Hermitian operator, but H differs from its adjoint (||H - H^dagger|| / ||H|| = "
            f"{np.sqrt(defect):.3g}); add the Hermitian conjugate of every non-Hermitian term"
        )


def tree_dmrg(
    H: TreeOperator,
    psi0: TreeTN | None = None,
    *,
    max_bond: int = 64,
    cutoff: float = 1e-14,
    sweeps: int = 20,
    tol: float = 1e-12,
    two_site: bool = True,
    noise: float = 0.0,
    root: int = 0,
    eigensolver: str = "lanczos",
    seed: int | None = 0,
    progress: Callable[[Any], None] | None = None,
    threads: int | None = None,
) -> TreeDMRGResult:
    """The ground state of the tree operator ``H`` by DMRG sweeps over the tree's Euler tour
    (two-site by default), from ``psi0`` (default: a random network of bond dimension 2).
    Stops after ``sweeps`` sweeps or when the energy changes by less than ``tol``. ``threads``:
    BLAS threads for the run, as :func:`tensor4all.dmrg`'s (None: one thread below bond
    dimension 512, the BLAS default from there; 0 the BLAS default; ``n`` exactly ``n``)."""
    max_bond, sweeps, root = check_sweep_options(
        "tree_dmrg", H, "H", psi0, "psi0", max_bond, sweeps, root, optional=True, cutoff=cutoff
    )
    two_site = check_bool(two_site, "tree_dmrg: two_site")
    noise = check_real(
        noise, "tree_dmrg: noise (a size relative to the state, in [0, 1))", low=0.0, high=1.0, high_open=True
    )
    tol = check_real(tol, "tree_dmrg: tol (the energy change that stops the sweeps)", low=0.0)
    seed = check_seed(seed, "tree_dmrg: seed")
    progress = check_callable(progress, "tree_dmrg: progress")
    threads = check_threads(threads)
    with blas_threads(threads, max_bond):  # the whole run: the start, the sweeps, the state
        check_hermitian(H, "tree_dmrg")
        if psi0 is None:
            psi0 = TreeTN.random(H.tree, H.local_dims, min(2, max_bond), seed=seed)
        engine = TreeSweep(TreeBackend(H, psi0, root), get_solver(eigensolver), max_iter=MAX_ITER, seed=seed)
        energies, bonds, errs = [], [], []
        for k in range(1, sweeps + 1):
            st = engine.sweep(
                two_site=two_site,
                max_bond=int(max_bond),
                cutoff=float(cutoff),
                tol=tol,
                alpha=noise,
                sweep_no=k,
                progress=progress,
            )
            energies.append(st.energy)
            bonds.append(st.max_bond)
            errs.append(st.max_truncation_error)
            if k > 1 and abs(energies[-1] - energies[-2]) < tol:
                break
        return TreeDMRGResult(energies[-1], engine.backend.state(), energies, bonds, errs)
