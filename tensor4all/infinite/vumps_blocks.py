"""The unit cell of a charge-conserving uniform MPS on the finite DMRG's sector machinery, and its
fixed-point MPO environments (for :mod:`.vumps_sectors`; Zauner-Stauber et al., PRB 97, 045145
(2018), Appendix C).

A site tensor is a dict of matrices ``A[(q_l, s)]`` of shape ``(dim q_l, dim q_l + q_s)`` (the
finite backend's per-basis-state matrices, :class:`~tensor4all.structured.site_matrices.SiteMatrices`),
a bond a dict charge -> dimension (the charges left of the bond; with charge 0 per cell bond ``n``
is bond 0), a bond matrix ``C`` one square block per charge. The local problems and the
environment steps go through :class:`SiteWindow`, a one-site
:class:`~tensor4all.algorithms.sector_backend.SectorBackend` of the cell's site ``i`` whose edge
environments are set from outside (as :class:`.idmrg_windows._Window` does for two sites): its
sides (:class:`~tensor4all.structured.site_matrices.Pieces`: rows ``(q_l, s)`` grouped by ``m = q_l +
q_s``, columns ``(s, q_r)`` by ``m = q_r - q_s``), its absorbed environments ``LW``/``WR``
(:func:`~tensor4all.algorithms.sector_absorb.absorb_mpo`), the moved ones
(:func:`~tensor4all.algorithms.sector_absorb.sandwich`) and the block operators
(:class:`~tensor4all.algorithms.sector_operator.SectorOperator`).

An environment holds, per MPO state ``w``, one matrix per bra charge ``q``: ``(dim q, dim q -
c_w)``. Left environments: ``ready`` (state 0) the identity, a term's states a few steps through
the cell, ``done`` (the last) the geometric sum solved by GMRES over the blocks flattened,
``(1 - T + |1)(rho|) X = Z - e 1``, ``e = tr(Z rho)`` the energy per cell (as
:mod:`.environments` does densely). Right environments the same with ``done`` the identity and
``ready`` the sum.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import scipy.sparse.linalg

from ..algorithms.sector_absorb import sandwich
from ..algorithms.sector_backend import SectorBackend
from ..algorithms.sector_operator import SectorOperator
from ..networks.environments import EnvCache
from ..structured.site_matrices import Pieces

__all__ = ["SiteWindow", "Blocks", "rows_of", "cols_of", "from_rows", "from_cols", "fixed_point_environments"]

Blocks = dict  # (q_l, s) -> matrix, or charge -> matrix
Env = list  # per MPO state: {charge: matrix}


def _no_bytes(env: Any) -> int:
    return 0


class SiteWindow(SectorBackend):
    """The finite sector backend of site ``i`` of the cell (MPO tensor ``W``, bond-state charges
    ``c_left``/``c_right``), built on the tensor cut at its edges and then given the full one; its
    bonds and edge environments are set per call."""

    def __init__(self, W: np.ndarray, c_left: np.ndarray, c_right: np.ndarray, q: Sequence[int], modulus: int):
        start = [int(np.argmin(np.abs(q)))]
        super().__init__([W[:1, :, :, -1:]], [c_left[:1], c_right[-1:]], [q], start, modulus=modulus)
        self._set_tables([W], [c_left, c_right])

    def on(self, left: dict[int, int], right: dict[int, int]) -> SiteWindow:
        self.bonds = [left, right]
        return self

    def rows(self) -> Pieces:
        return self._rows(0)

    def cols(self) -> Pieces:
        return self._cols(0)

    def bare(self, b: int) -> Pieces:
        return self._bare(b)

    def absorbed_left(self, GL: Env) -> tuple[Env, Any]:
        """``LW``: ``GL`` (left bond) with the site's MPO tensor absorbed, over the rows."""
        self.envs = EnvCache(1, GL, None, _no_bytes)
        return self._lw(0, self._rows(0))

    def absorbed_right(self, GR: Env) -> tuple[Env, Any]:
        """``WR``: ``GR`` (right bond) with the site's MPO tensor absorbed, over the columns."""
        self.envs = EnvCache(1, None, GR, _no_bytes)
        return self._wr(0, self._cols(0))

    def step_left(self, GL: Env, A: Blocks) -> Env:
        """``GL`` moved over the site: ``A^dagger LW A`` per sector of the right bond."""
        rows = self._rows(0)
        sectors = [m for m in rows.size if m in self.bonds[1]]
        mats = dict(zip(sectors, rows_of(A, rows, sectors, self.bonds[1], self.dtype)))
        lw = self.absorbed_left(GL)[0]
        return sandwich(lw, {m: a.conj().T for m, a in mats.items()}, mats, self.c[1], self.norm)

    def step_right(self, GR: Env, B: Blocks) -> Env:
        """``GR`` moved over the site: ``conj(B) WR B^T`` per sector of the left bond."""
        cols = self._cols(0)
        sectors = [m for m in cols.size if m in self.bonds[0]]
        mats = dict(zip(sectors, cols_of(B, cols, sectors, self.bonds[0], self.dtype)))
        wr = self.absorbed_right(GR)[0]
        return sandwich(
            wr, {m: b.conj() for m, b in mats.items()}, {m: b.T for m, b in mats.items()}, self.c[0], self.norm
        )

    def h_ac(self, GL: Env, GR: Env) -> tuple[SectorOperator, list[int]]:
        """The one-site ``H_AC`` on the rows of the site and its bare right bond (the finite
        backend's one-site problem moving right) and its sectors."""
        rows, cols = self._rows(0), self._bare(1)
        sectors = [m for m in rows.size if m in cols.size]
        lw, regions = self.absorbed_left(GL)
        op = SectorOperator(lw, GR, self.c[1], sectors, rows, cols, self.dtype, self.norm, regions=(regions, None))
        return op, sectors

    def h_c(self, GL: Env, GR: Env) -> tuple[SectorOperator, list[int]]:
        """The zero-site ``H_C`` on the left bond (the backend's bond problem of one-site TDVP)."""
        bare = self._bare(0)
        sectors = list(bare.size)
        return SectorOperator(GL, GR, self.c[0], sectors, bare, bare, self.dtype, self.norm), sectors

    def h_ac2(self, LW: tuple[Env, Any], WR: tuple[Env, Any], rows: Pieces, cols: Pieces) -> SectorOperator:
        """The two-site ``H_AC2`` of this site's rows (``LW``) and the next site's columns (``WR``)."""
        sectors = [m for m in rows.size if m in cols.size]
        return SectorOperator(
            LW[0], WR[0], self.c[1], sectors, rows, cols, self.dtype, self.norm, regions=(LW[1], WR[1])
        )


def rows_of(A: Blocks, rows: Pieces, sectors: Sequence[int], right: dict[int, int], dtype: Any) -> list[np.ndarray]:
    """Per charge ``m`` of ``sectors``, the matrices ``A[(q_l, s)]`` with ``q_l + q_s = m`` stacked:
    ``(rows m) x (dim m)``; a missing one is zero."""
    out = []
    for m in sectors:
        mat = np.zeros((rows.size[m], right.get(m, 0)), dtype=dtype)
        for key, off, n in rows.groups[m]:
            a = A.get(key)
            if a is not None:
                mat[off : off + n] = a
        out.append(mat)
    return out


def cols_of(B: Blocks, cols: Pieces, sectors: Sequence[int], left: dict[int, int], dtype: Any) -> list[np.ndarray]:
    """Per charge ``m`` of ``sectors``, the matrices ``B[(m, s)]`` side by side: ``(dim m) x (cols m)``."""
    out = []
    for m in sectors:
        mat = np.zeros((left.get(m, 0), cols.size[m]), dtype=dtype)
        for (s, _), off, n in cols.groups[m]:
            b = B.get((m, s))
            if b is not None:
                mat[:, off : off + n] = b
        out.append(mat)
    return out


def from_rows(mats: dict[int, np.ndarray], rows: Pieces) -> Blocks:
    """The site of the stacked rows ``mats[m]`` (:func:`rows_of`'s inverse)."""
    return {key: mat[off : off + n] for m, mat in mats.items() for key, off, n in rows.groups[m] if n}


def from_cols(mats: dict[int, np.ndarray], cols: Pieces) -> Blocks:
    """The site of the columns ``mats[m]`` side by side (:func:`cols_of`'s inverse)."""
    return {(m, s): mat[:, off : off + n] for m, mat in mats.items() for (s, _), off, n in cols.groups[m] if n}


def _transfer_left(X: Blocks, A: Blocks, q: Sequence[int], norm: Callable[[int], int]) -> Blocks:
    """``sum_s A_s^dagger X A_s`` per charge."""
    out: Blocks = {}
    for (ql, s), a in A.items():
        x = X.get(ql)
        if x is not None:
            m = norm(ql + q[s])
            t = a.conj().T @ (x @ a)
            out[m] = out[m] + t if m in out else t
    return out


def _transfer_right(X: Blocks, B: Blocks, q: Sequence[int], norm: Callable[[int], int]) -> Blocks:
    """``sum_s conj(B_s) X B_s^T`` per charge (the right environments' convention)."""
    out: Blocks = {}
    for (ql, s), b in B.items():
        x = X.get(norm(ql + q[s]))
        if x is not None:
            t = b.conj() @ (x @ b.T)
            out[ql] = out[ql] + t if ql in out else t
    return out


def _solve(
    apply_cell: Callable[[Blocks], Blocks],
    bond: dict[int, int],
    rho: Blocks,
    rhs: Blocks,
    x0: np.ndarray | None,
    tol: float,
    dtype: Any,
) -> tuple[Blocks, np.ndarray]:
    """``X`` with ``X - T(X) + tr(X rho) 1 = rhs`` (``T`` the cell's transfer map, ``apply_cell``),
    by GMRES over the blocks of ``bond`` flattened; also the flat solution (the next guess)."""
    charges = list(bond)
    sizes = [bond[q] ** 2 for q in charges]
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)

    def unflat(v: np.ndarray) -> Blocks:
        return {q: v[bounds[k] : bounds[k + 1]].reshape(bond[q], bond[q]) for k, q in enumerate(charges)}

    def flat(X: Blocks) -> np.ndarray:
        return np.concatenate(
            [X[q].reshape(-1) if q in X else np.zeros(sizes[k], dtype) for k, q in enumerate(charges)]
        )

    def mv(v: np.ndarray) -> np.ndarray:
        X = unflat(v)
        TX = apply_cell(X)
        tr = sum(np.trace(X[q] @ rho[q]) for q in charges)
        return (v - flat(TX) + tr * flat({q: np.eye(bond[q]) for q in charges})).astype(dtype, copy=False)

    n = int(bounds[-1])
    op = scipy.sparse.linalg.LinearOperator((n, n), matvec=mv, dtype=dtype)
    b = flat(rhs).astype(dtype)
    start = None if x0 is None or x0.shape != b.shape else x0.astype(dtype)
    atol = tol * max(float(np.linalg.norm(b)), 1e-300)
    x, _ = scipy.sparse.linalg.gmres(op, b, x0=start, rtol=0.0, atol=atol, restart=30, maxiter=200)
    return unflat(x), x


def _with(env: Env, w: int, blocks: Blocks) -> Env:
    """``env`` (blocks readable per state) with state ``w`` replaced by ``blocks``."""
    out = [dict(e) for e in env]
    out[w] = blocks
    return out


def _trace(X: Blocks, rho: Blocks) -> Any:
    return sum(np.trace(X[q] @ rho[q]) for q in rho if q in X)


def fixed_point_environments(
    windows: Sequence[SiteWindow],
    bonds: Sequence[dict[int, int]],
    AL: Sequence[Blocks],
    AR: Sequence[Blocks],
    C0: Blocks,
    nw: Sequence[int],
    guesses: tuple[Any, Any],
    tol: float,
) -> tuple[list[Env], list[Env], float, float, tuple[Any, Any]]:
    """``(GL, GR, e_left, e_right, guesses)``: the left environments ``GL[i]`` and the right ones
    ``GR[i]`` on the bonds ``i`` of the cell, the energy per cell from each side and the flat
    solutions (the next call's ``guesses``). ``nw[i]``: the MPO states on bond ``i``."""
    n = len(AL)
    q = windows[0].q[0]
    norm = windows[0].norm
    dtype = windows[0].dtype
    wins = [windows[i].on(bonds[i], bonds[(i + 1) % n]) for i in range(n)]
    passes = int(np.ceil((max(nw) - 1) / n)) + 1  # a term spans at most nw - 1 bonds

    # left: ready = 1, the terms' states, done = the geometric sum
    GL: list[Env] = []
    for i in range(n):
        g: Env = [dict() for _ in range(nw[i])]
        g[0] = {c: np.eye(d, dtype=dtype) for c, d in bonds[i].items()}
        GL.append(g)
    for _ in range(passes):
        for i in range(n):
            new = wins[i].step_left(_with(GL[i], -1, {}), AL[i])
            j = (i + 1) % n
            GL[j] = [GL[j][0]] + [dict(new[w]) for w in range(1, nw[j] - 1)] + [{}]
    Z: Blocks = {}
    for i in range(n):
        Z = dict(wins[i].step_left(_with(GL[i], -1, Z), AL[i])[-1])
    rho = {c: C0[c] @ C0[c].conj().T for c in bonds[0]}
    rho = {c: r / sum(np.trace(x).real for x in rho.values()) for c, r in rho.items()}
    e_l = _trace(Z, rho)

    def cell_left(X: Blocks) -> Blocks:
        for i in range(n):
            X = _transfer_left(X, AL[i], q, norm)
        return X

    rhs = {c: Z.get(c, 0) - e_l * np.eye(d) for c, d in bonds[0].items()}
    X, guess_l = _solve(cell_left, bonds[0], rho, rhs, guesses[0], tol, dtype)
    GL[0][-1] = X
    for i in range(n - 1):
        GL[i + 1] = [dict(e) for e in wins[i].step_left(GL[i], AL[i])]

    # right: done = 1, the terms' states, ready = the geometric sum
    GR: list[Env] = []
    for i in range(n):
        g = [dict() for _ in range(nw[i])]
        g[-1] = {c: np.eye(d, dtype=dtype) for c, d in bonds[i].items()}
        GR.append(g)
    for _ in range(passes):
        for i in reversed(range(n)):
            new = wins[i].step_right(_with(GR[(i + 1) % n], 0, {}), AR[i])
            GR[i] = [{}] + [dict(new[w]) for w in range(1, nw[i] - 1)] + [GR[i][-1]]
    Z = {}
    for i in reversed(range(n)):
        Z = dict(wins[i].step_right(_with(GR[(i + 1) % n], 0, Z), AR[i])[0])
    rho = {c: (C0[c].conj().T @ C0[c]).T for c in bonds[0]}
    rho = {c: r / sum(np.trace(x).real for x in rho.values()) for c, r in rho.items()}
    e_r = _trace(Z, rho)

    def cell_right(X: Blocks) -> Blocks:
        for i in reversed(range(n)):
            X = _transfer_right(X, AR[i], q, norm)
        return X

    rhs = {c: Z.get(c, 0) - e_r * np.eye(d) for c, d in bonds[0].items()}
    X, guess_r = _solve(cell_right, bonds[0], rho, rhs, guesses[1], tol, dtype)
    GR[0][0] = X
    for i in reversed(range(1, n)):
        GR[i] = [dict(e) for e in wins[i].step_right(GR[(i + 1) % n], AR[i])]
    return GL, GR, float(np.real(e_l)), float(np.real(e_r)), (guess_l, guess_r)
