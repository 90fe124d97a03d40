"""The two-site step of iDMRG (:mod:`.idmrg`) on dense arrays (:class:`DenseCell`) and on the
charge sectors of an abelian symmetry (:class:`SectorCell`), behind one small protocol.

Both hold the unit cell as TeNPy does: per site a right-orthonormal tensor ``B[i]`` and per bond
the Schmidt values ``S[i]`` (bond ``i`` left of site ``i``), and per bond the left and right MPO
environments ``LP[i]`` (everything left of bond ``i``) and ``RP[i]`` (everything right of it) of
the growing chain, indices modulo the cell. :meth:`step` solves the two sites ``(i, i + 1)``
from the start ``S[i] B[i] B[i + 1]``, splits the result ``U s V^dagger`` with truncation and
stores ``B[i + 1] = V^dagger``, ``S[i + 1] = s`` and ``B[i] = S[i]^-1 U s``: next to a bond
whose Schmidt values did not change since, that start is the exact centre; across the cell's
edge it is McCulloch's prediction ``s V^dagger S_old^-1 U s`` (arXiv:0804.2509, eq. (8)).

The sector cell reuses the finite DMRG's charge-sector machinery
(:class:`~tensor4all.algorithms.sector_backend.SectorBackend`) for the local problem: a backend of
two sites (the window ``(i, i + 1)``) whose edge environments are the iDMRG's ``LP``/``RP``; its
``local_problem`` absorbs them into the MPO tensors (``LW``, ``WR``) and builds the block
operator and the start vector. The split is one SVD per sector with one truncation across them
(:func:`tensor4all.linalg.lapack.svd_sectors`, as the finite sweeps), the factors written back by
the :class:`~tensor4all.structured.site_matrices.SiteMatrices` layout and the environments moved
by :func:`~tensor4all.algorithms.sector_absorb.sandwich`. The bond charges are the charges left
of each bond; with a charge of 0 per unit cell they repeat from cell to cell.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..algorithms.effective import TwoSiteOperator
from ..algorithms.schedule import Step
from ..algorithms.sector_absorb import sandwich
from ..algorithms.sector_backend import SectorBackend
from ..linalg.eigensolver import DENSE_MAX, dense_lowest, lanczos
from ..linalg.lapack import svd_sectors
from ..linalg.truncation import svd_truncated
from ..networks.environments import EnvCache
from ..tools.device import stored_array
from ..tools.errors import InvalidOptionError
from .environments import left_step, right_step
from .gauge import polar_right

__all__ = ["DenseCell", "SectorCell", "cell_bond_charges", "LANCZOS_STEPS"]

#: the most Lanczos products of one two-site problem (TeNPy's ``N_max`` is 20)
LANCZOS_STEPS = 40


class _Flat(TwoSiteOperator):
    """The finite DMRG's two-site effective Hamiltonian (:class:`~tensor4all.algorithms.effective.TwoSiteOperator`)
    on this module's environments (``GR[bra, w, ket]``), with the dense matrix for small problems."""

    def __init__(self, GL: np.ndarray, W1: np.ndarray, W2: np.ndarray, GR: np.ndarray, shape: tuple, dtype: Any):
        super().__init__(GL, W1, W2, GR.transpose(1, 2, 0))
        self.like_shape, self.dtype = shape, np.result_type(self.dtype, dtype)

    def dense(self) -> np.ndarray:
        n = self.shape[0]
        return np.stack([self.matvec(e) for e in np.eye(n, dtype=self.dtype)], axis=1)


def _lowest(op: Any, v0: np.ndarray, state_tol: float) -> tuple[float, np.ndarray]:
    """The lowest eigenpair of a two-site problem: exactly when small, else Lanczos from ``v0``."""
    if v0.size <= DENSE_MAX and hasattr(op, "dense"):
        e, v, _ = dense_lowest(op, v0)
    else:
        e, v, _ = lanczos(op, v0, tol=0.0, max_iter=LANCZOS_STEPS, min_iter=2, state_tol=state_tol)
    return float(e), v


def cell_bond_charges(Ws: Sequence[np.ndarray], q: Sequence[int], modulus: int) -> list[np.ndarray] | None:
    """The charges of the MPO states on the bonds ``0..n`` of a cell (``Ws`` the cell's automaton
    tensors, ``q`` the basis charges of a site; bond ``n`` is bond ``0``): ``ready`` and ``done``
    carry 0, a term's state the charge its factors so far change. None when ``H`` does not
    conserve the charge (a state reached with two charges, or the cell not closing)."""

    def norm(c: int) -> int:
        return c % modulus if modulus else c

    n = len(Ws)
    qa = np.asarray(q, dtype=np.int64)
    dq = qa[:, None] - qa[None, :]  # q_s - q_t
    charges: list[list[int | None]] = [[None] * w.shape[0] for w in Ws]
    for b in range(n):
        charges[b][0] = 0
        charges[b][-1] = 0
    nz = []
    for w in Ws:
        a = np.abs(np.asarray(w))
        scale = float(a.max()) if a.size else 0.0
        nz.append(np.argwhere(a > 1e-12 * scale) if scale > 0 else np.zeros((0, 4), dtype=int))
    for _ in range(2 * n + 2):
        changed = False
        for i in range(n):
            left, right = charges[i], charges[(i + 1) % n]
            for x, s, t, y in nz[i]:
                if left[x] is None:
                    continue
                c = norm(int(left[x]) + int(dq[s, t]))
                if right[y] is None:
                    right[y] = c
                    changed = True
                elif right[y] != c:
                    return None
        if not changed:
            break
    if any(c is None for cs in charges for c in cs):
        return None
    out = [np.array(cs, dtype=np.int64) for cs in charges]
    return out + [out[0]]


START_CELLS = 2
"""Cells of the start product state absorbed into the first environments (:func:`product_environments`)."""


def product_environments(
    Ws: Sequence[np.ndarray], B: Sequence[np.ndarray], lp: np.ndarray, rp: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The edge environments ``(LP, RP)`` of bond dimension 1 with :data:`START_CELLS` cells of the
    product state ``B`` (sites ``(1, d, 1)``) absorbed on each side: the first window then sees the
    start's neighbours, as TeNPy's iDMRG starts from the environments of its initial state
    (``MPOTransferMatrix.find_init_LP_RP``). From bare edges the first two-site problem has no
    neighbours and its ground state is the symmetric mixture of the start's orders (the XXZ chain at
    Delta = 2: a cat of the two Neel states, which iDMRG then keeps, with |lambda_2| = 1). A
    product state's sites are both left- and right-orthonormal: :func:`state_environments`."""
    return state_environments(Ws, B, B, lp, rp)


def state_environments(
    Ws: Sequence[np.ndarray], AL: Sequence[np.ndarray], B: Sequence[np.ndarray], lp: np.ndarray, rp: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The edge environments ``(LP, RP)`` of a start that is no product state (an earlier run's
    iMPS, bond dimension ``D``) with :data:`START_CELLS` of its cells absorbed: its left-orthonormal
    sites ``AL`` on the left, its right-orthonormal ``B`` on the right, from the identity on the
    edges' bond (the fixed point of either transfer matrix). From bare edges the first window saw
    no neighbours and iDMRG restarted from a symmetry-broken state (the Ising ferromagnet, the XXZ
    chain at Delta = 2) ended in the cat of its orders, with the entropy ln 2 higher and the order
    parameter 0."""
    n = len(Ws)
    for _ in range(START_CELLS):
        for j in range(n):
            lp = left_step(lp, AL[j], Ws[j])
        for j in range(n - 1, -1, -1):
            rp = right_step(rp, B[j], Ws[j])
    return lp, rp


class DenseCell:
    """The iDMRG state and environments of a cell on dense arrays."""

    def __init__(
        self,
        Ws: Sequence[np.ndarray],
        B: list[np.ndarray],
        S: list[np.ndarray],
        dtype: Any,
        AL: Sequence[np.ndarray] | None = None,
    ):
        """``B`` the start's right-orthonormal sites, ``S`` its Schmidt values (bond ``i`` left of
        site ``i``), ``AL`` its left-orthonormal sites (a start that is no product state: its
        environments are built from :data:`START_CELLS` of its cells, as a product start's)."""
        self.Ws, self.n, self.dtype = list(Ws), len(Ws), np.dtype(dtype)
        self.B = [b.astype(self.dtype) for b in B]
        self.S = [np.asarray(s, dtype=float) for s in S]
        n = self.n
        D0 = self.B[0].shape[0]
        lp = np.zeros((D0, Ws[0].shape[0], D0), dtype=self.dtype)
        lp[:, 0, :] = np.eye(D0)
        rp = np.zeros((D0, Ws[0].shape[0], D0), dtype=self.dtype)
        rp[:, -1, :] = np.eye(D0)
        self.grown = 0  # sites of the start absorbed into each edge environment
        if all(b.shape[0] == 1 and b.shape[2] == 1 for b in self.B):  # a product start: its environments
            lp, rp = product_environments(Ws, self.B, lp, rp)
            self.grown = START_CELLS * n
        elif AL is not None:  # an earlier result: its environments, so the first window sees its order
            lp, rp = state_environments(Ws, [a.astype(self.dtype) for a in AL], self.B, lp, rp)
            self.grown = START_CELLS * n
        self.LP: list[Any] = [None] * n
        self.RP: list[Any] = [None] * n
        self.LP[0], self.RP[0] = lp, rp
        for j in range(n - 1, 1, -1):  # the first sweep's right environments: the cell as a segment
            self.RP[j] = right_step(self.RP[(j + 1) % n], self.B[j], Ws[j])

    def step(
        self, i: int, right: bool, update: tuple[bool, bool], max_bond: int, cutoff: float, state_tol: float
    ) -> tuple[float, float]:
        """Solve and split the sites ``(i, i + 1)`` (modulo the cell); ``update``: whether to build
        ``LP[i + 1]`` and ``RP[i + 1]``. Returns the window's energy and the discarded weight."""
        n = self.n
        j, k = (i + 1) % n, (i + 2) % n
        theta = np.tensordot(self.S[i][:, None, None] * self.B[i], self.B[j], (2, 0))
        op = _Flat(self.LP[i], self.Ws[i], self.Ws[j], self.RP[k], theta.shape, self.dtype)
        e, v = _lowest(op, theta.reshape(-1), state_tol)
        dl, d1, d2, dr = theta.shape
        u, s, vh, err = svd_truncated(v.reshape(dl * d1, d2 * dr), max_bond, cutoff)
        s = s / np.linalg.norm(s)
        U = u.reshape(dl, d1, -1)
        self.B[j] = vh.reshape(-1, d2, dr)
        self.B[i] = (U / self.S[i][:, None, None]) * s[None, None, :]
        self.last = (i, U * s[None, None, :])
        self.S[j] = s
        if update[0]:
            self.LP[j] = left_step(self.LP[i], U, self.Ws[i])
        if update[1]:
            self.RP[j] = right_step(self.RP[k], self.B[j], self.Ws[j])
        return e, float(err)

    def bond_dims(self) -> list[int]:
        return [len(s) for s in self.S]

    def schmidt(self, b: int) -> np.ndarray:
        return np.sort(self.S[b])[::-1]

    def dense_tensors(self) -> list[np.ndarray]:
        """The cell's right-orthonormal site tensors: ``B[i]``, but on the last step's left site
        the polar factor of ``S[i]^dagger U s`` (VUMPS's stable form of ``S[i]^-1 U s``)."""
        out = list(self.B)
        i, us = self.last
        out[i] = polar_right(us, np.diag(self.S[i]).astype(us.dtype))
        return out


class _Window(SectorBackend):
    """The finite sector backend of the two sites ``(i, i + 1)`` whose edge environments are set
    from outside (:meth:`load`): built on a two-site MPO cut at the edges, then given the cell's
    full tensors."""

    def __init__(self, Ws: Sequence[np.ndarray], wq: Sequence[np.ndarray], q: Sequence[int], modulus: int):
        start = [int(np.argmin(np.abs(q)))] * 2
        edge = [Ws[0][:1], Ws[1][..., -1:]]
        super().__init__(edge, [wq[0][:1], wq[1], wq[2][-1:]], [q, q], start, modulus=modulus)
        self._set_tables(Ws, wq)

    def load(self, bonds: list[dict[int, int]], sites: list[Any], LP: Any, RP: Any) -> None:
        self.bonds = list(bonds)
        self.sites = list(sites)
        self._site_bytes = [None, None]
        self.envs = EnvCache(2, LP, RP, _no_bytes)

    def right_env_of_second(self) -> Any:
        """``RP`` of the bond between the window's sites, from the second site and ``RP[i + 2]``."""
        return self._right_env(1)


def _no_bytes(env: Any) -> int:
    return 0


class SectorCell:
    """The iDMRG state and environments of a cell on charge-sector blocks: ``B[i]`` symmetric
    tensors, ``S[i]`` and ``bonds[i]`` per charge."""

    def __init__(
        self, Ws: Sequence[np.ndarray], wq: Sequence[np.ndarray], q: Sequence[int], modulus: int, states: Sequence[int]
    ):
        self.n, self.modulus = len(Ws), modulus
        n = self.n
        self.q = [int(x) for x in q]
        self.windows = [
            _Window([Ws[i], Ws[(i + 1) % n]], [wq[i], wq[i + 1], wq[i + 2] if i + 2 <= n else wq[1]], self.q, modulus)
            for i in range(n)
        ]
        self.dtype = np.result_type(*(w.dtype for w in self.windows))
        # the product state: bond charges are the charges left of each bond
        self.bonds: list[dict[int, int]] = []
        ql = 0
        for s in states:
            self.bonds.append({ql: 1})
            ql = self._norm(ql + self.q[s])
        if ql != 0:
            raise InvalidOptionError("iDMRG: the start state's charge per unit cell must be 0")
        self.S = [{next(iter(b)): np.ones(1)} for b in self.bonds]
        self.B = []
        for i, s in enumerate(states):
            w = self.windows[i]
            ql = next(iter(self.bonds[i]))
            self.B.append(
                w.layout.build(
                    [((ql, s), np.ones((1, 1), dtype=self.dtype))], self.bonds[i], w.phys[0], self.bonds[(i + 1) % n]
                )
            )
        # the edge environments of the product start (bond 0 holds charge 0 alone): per MPO state of
        # charge 0 its 1 x 1 block, from the dense ones of :func:`product_environments`
        nw, d = Ws[0].shape[0], Ws[0].shape[1]
        lp0 = np.zeros((1, nw, 1), dtype=self.dtype)
        lp0[0, 0, 0] = 1.0
        rp0 = np.zeros((1, nw, 1), dtype=self.dtype)
        rp0[0, -1, 0] = 1.0
        sites = [np.eye(d, dtype=self.dtype)[s].reshape(1, d, 1) for s in states]
        lp0, rp0 = product_environments(Ws, sites, lp0, rp0)
        self.grown = START_CELLS * n
        lp = [{0: lp0[:, w, :].copy()} if self._norm(int(wq[0][w])) == 0 and lp0[0, w, 0] else {} for w in range(nw)]
        rp = [{0: rp0[:, w, :].copy()} if self._norm(int(wq[0][w])) == 0 and rp0[0, w, 0] else {} for w in range(nw)]
        self.LP: list[Any] = [None] * n
        self.RP: list[Any] = [None] * n
        self.LP[0], self.RP[0] = lp, rp
        for j in range(n - 1, 1, -1):
            w = self.windows[j - 1]
            w.load(
                [self.bonds[j - 1], self.bonds[j], self.bonds[(j + 1) % n]],
                [self.B[j - 1], self.B[j]],
                lp,
                self.RP[(j + 1) % n],
            )
            self.RP[j] = w.right_env_of_second()

    def _norm(self, c: int) -> int:
        return c % self.modulus if self.modulus else c

    def _scaled(
        self, w: _Window, t: Any, left: dict[int, np.ndarray] | None, right: dict[int, np.ndarray] | None
    ) -> Any:
        """``t`` with its left bond scaled by ``left[q]`` and its right bond by ``right[q]``."""
        blocks = {}
        for (ql, qs, qr), blk in t.blocks.items():
            a = stored_array(blk)
            if left is not None:
                a = a * left[ql][:, None, None]
            if right is not None:
                a = a * right[qr][None, None, :]
            blocks[(ql, qs, qr)] = np.asfortranarray(a)
        return w.layout.tensor(blocks, t.legs)

    def step(
        self, i: int, right: bool, update: tuple[bool, bool], max_bond: int, cutoff: float, state_tol: float
    ) -> tuple[float, float]:
        """:meth:`DenseCell.step` on the blocks: the window's local problem, one SVD per sector."""
        n = self.n
        j, k = (i + 1) % n, (i + 2) % n
        w = self.windows[i]
        first = self._scaled(w, self.B[i], self.S[i], None)
        w.load([self.bonds[i], self.bonds[j], self.bonds[k]], [first, self.B[j]], self.LP[i], self.RP[k])
        local = w.local_problem(Step(0, "right" if right else "left", 2))
        e, v = _lowest(local.op, local.v0, state_tol)
        kept, err = svd_sectors(dict(zip(local.op.sectors, local.op.views(v))), max_bond, cutoff)
        norm = np.sqrt(sum(float(np.sum(s**2)) for _, s, _ in kept.values()))
        us = {m: u for m, (u, _, _) in sorted(kept.items())}
        vhs = {m: vh for m, (_, _, vh) in sorted(kept.items())}
        s_new = {m: s / norm for m, (_, s, _) in sorted(kept.items())}
        new_bond = {m: len(s) for m, s in s_new.items()}
        U = w.layout.from_rows(us, local.rows.groups, self.bonds[i], w.phys[0], new_bond)
        self.B[j] = w.layout.from_cols(vhs, local.cols.groups, new_bond, w.phys[1], self.bonds[k])
        self.B[i] = self._scaled(w, U, {q: 1.0 / x for q, x in self.S[i].items()}, s_new)
        self.last = (i, self._scaled(w, U, None, s_new))
        self.S[j], self.bonds[j] = s_new, new_bond
        c = w.c[1]
        if update[0]:
            self.LP[j] = sandwich(local.lw, {m: u.conj().T for m, u in us.items()}, us, c, self._norm)
        if update[1]:
            self.RP[j] = sandwich(
                local.wr, {m: vh.conj() for m, vh in vhs.items()}, {m: vh.T for m, vh in vhs.items()}, c, self._norm
            )
        return e, float(err)

    def bond_dims(self) -> list[int]:
        return [sum(b.values()) for b in self.bonds]

    def schmidt(self, b: int) -> np.ndarray:
        return np.sort(np.concatenate(list(self.S[b].values())))[::-1]

    def dense_tensors(self) -> list[np.ndarray]:
        """The cell's ``B[i]`` as dense arrays ``(left, d, right)``, bond indices in the order of
        the bond's charges (sorted), physical indices in basis order."""
        out = [self._dense(i, t) for i, t in enumerate(self.B)]
        i, us = self.last
        S = np.concatenate([self.S[i][q] for q in sorted(self.S[i])])
        out[i] = polar_right(self._dense(i, us), np.diag(S).astype(self.dtype))
        return out

    def _dense(self, i: int, t: Any) -> np.ndarray:
        left, right = self.bonds[i], self.bonds[(i + 1) % self.n]
        lo, ro = _offsets(left), _offsets(right)
        a = np.zeros((sum(left.values()), len(self.q), sum(right.values())), dtype=self.dtype)
        for (ql, s), m in self.windows[i].layout.matrices(t):
            qr = self._norm(ql + self.q[s])
            a[lo[ql] : lo[ql] + m.shape[0], s, ro[qr] : ro[qr] + m.shape[1]] = m
        return a


def _offsets(bond: dict[int, int]) -> dict[int, int]:
    out, off = {}, 0
    for q in sorted(bond):
        out[q] = off
        off += bond[q]
    return out
