"""VUMPS on the charge sectors of an abelian symmetry (Zauner-Stauber, Vanderstraeten, Fishman,
Verstraete and Haegeman, PRB 97, 045145 (2018)), for a unit cell of ``n`` sites with charge 0 per
cell: the iteration of the dense :mod:`.vumps` on the blocks of :mod:`.vumps_blocks`.

1. the fixed-point environments (:func:`.vumps_blocks.fixed_point_environments`: the finite
   backend's environment step, GMRES over the blocks for the geometric sums);
2. per site the lowest eigenvector of the one-site ``H_AC`` and per bond that of the zero-site
   ``H_C`` (the finite backend's block operators, ARPACK from the current ``A_C`` and ``C``);
3. per sector ``m`` of a bond the polar updates ``A_L[m] = polar(A_C[m] C[m]^dagger)`` (rows
   ``(q_l, s)`` of ``m``) and ``A_R[m] = polar(C[m]^dagger A_C[m])`` (columns ``(s, q_r)``), and the
   error ``max ||A_C - A_L C||, ||A_C - C A_R||`` and the Galerkin error (:mod:`.vumps`).

The bond grows per sector by the two-site subspace expansion of the dense code: ``H_AC2`` on
``A_L C A_R`` projected per sector onto the null spaces of ``A_L`` and ``A_R`` (a sector that the
bond lacks has all of its rows and columns there), the largest singular values across the
sectors (above ``cutoff``) added with zero weight. A run starts from a product state of charge 0
per cell (bond dimension 1) and doubles the bond whenever the error falls below ``1e-3`` or ten
iterations have passed, up to ``1.25 max_bond`` (:data:`OVERSHOOT`), then cuts every bond back
to ``max_bond`` by the singular values of ``C`` across its sectors (MPSKit's expand-then-truncate):
the sector dimensions that the one-site updates cannot change are chosen by the Schmidt values.
The result is converted to a dense :class:`.iMPS` (bond indices by charge, then the canonical
form of :func:`.gauge.mixed_canonical`, without Schmidt values below ``tol``: :func:`.vumps_local.schmidt_floor`)
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import scipy.linalg

from ..structured import SymmetryViolationError
from ..tools.errors import InvalidOptionError
from .energy import energy_per_site
from .idmrg_windows import _offsets
from .gauge import drop_small_schmidt, mixed_canonical
from .impo import InfiniteMPO
from .imps import iMPS
from .transfer import is_injective
from .vumps_blocks import Blocks, SiteWindow, cols_of, fixed_point_environments, from_cols, from_rows, rows_of
from .vumps_local import SETTLE, VUMPSRecord, VUMPSResult, lowest, schmidt_floor

__all__ = ["run_sectors", "OVERSHOOT", "SPECTRUM_ATOL"]

#: Schmidt values of the dense conversion and of the run's own blocks closer than this are one state
SPECTRUM_ATOL = 1e-6

#: the bond grows to ``(1 + OVERSHOOT) max_bond`` and, once settled, is cut back to ``max_bond``
#: by the Schmidt values across the sectors: one-site updates keep each sector's dimension, and
#: the expansions alone choose them from a projection (the Heisenberg chain at bond dimension 64:
#: 1.74e-6 from the exact energy without the cut, 1.25e-6 with it, as the dense VUMPS)
OVERSHOOT = 0.25

#: a run whose error stays above :data:`STUCK_ERROR` (the gauge error of a state far from any
#: fixed point: a normal run is below 0.04 after 20 iterations, the Ising ferromagnet's charge 0 per
#: cell stays near sqrt(2)) for :data:`STUCK_ITERATIONS` iterations after its first 20 has no fixed
#: point of charge 0 per cell to reach, and stops
STUCK_ERROR = 0.5
STUCK_ITERATIONS = 20


def _polar(m: np.ndarray) -> np.ndarray:
    if m.size == 0:
        return m
    u, _, vh = scipy.linalg.svd(m, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    return u @ vh


class _Cell:
    """The state of a sector run: bonds, ``A_L``, ``A_R`` (per basis-state matrices) and ``C``."""

    def __init__(self, Ws: Sequence[np.ndarray], wq: Sequence[np.ndarray], q: Sequence[int], modulus: int, states):
        self.n = n = len(Ws)
        self.q = [int(x) for x in q]
        self.windows = [SiteWindow(np.asarray(Ws[i]), wq[i], wq[i + 1], self.q, modulus) for i in range(n)]
        self.norm = self.windows[0].norm
        self.dtype = np.result_type(*(w.dtype for w in self.windows))
        self.nw = [len(wq[i]) for i in range(n)]
        self.bonds: list[dict[int, int]] = []
        ql = 0
        for s in states:
            self.bonds.append({ql: 1})
            ql = self.norm(ql + self.q[s])
        one = np.ones((1, 1), dtype=self.dtype)
        self.AL: list[Blocks] = [{(next(iter(self.bonds[i])), s): one.copy()} for i, s in enumerate(states)]
        self.AR: list[Blocks] = [dict(a) for a in self.AL]
        self.C: list[Blocks] = [{next(iter(b)): one.copy()} for b in self.bonds]
        self.guesses: tuple[Any, Any] = (None, None)

    def window(self, i: int) -> SiteWindow:
        return self.windows[i].on(self.bonds[i], self.bonds[(i + 1) % self.n])

    def environments(self, tol: float) -> tuple[list, list, float]:
        GL, GR, e_l, e_r, self.guesses = fixed_point_environments(
            self.windows, self.bonds, self.AL, self.AR, self.C[0], self.nw, self.guesses, tol
        )
        return GL, GR, 0.5 * (e_l + e_r) / self.n

    def max_bond(self) -> int:
        return max(sum(b.values()) for b in self.bonds)

    def update(self, GL: list, GR: list, state_tol: float) -> float:
        """One parallel VUMPS update of every site and bond; the error."""
        n = self.n
        ACs, Cs = [], []
        grad = 0.0
        for i in range(n):
            j = (i + 1) % n
            w = self.window(i)
            op, sectors = w.h_ac(GL[i], GR[j])
            rows = w.rows()
            al = rows_of(self.AL[i], rows, sectors, self.bonds[j], self.dtype)
            x0 = np.concatenate([(a @ self.C[j][m]).reshape(-1) for a, m in zip(al, sectors)])
            h = op.matvec(x0)  # the Galerkin error, as the dense code's: zero only at a fixed point
            size = float(np.linalg.norm(h))
            proj = [y - a @ (a.conj().T @ y) for a, y in zip(al, op.views(h))]
            grad = max(grad, float(np.sqrt(sum(np.linalg.norm(p) ** 2 for p in proj))) / size if size > 0 else 0.0)
            v = lowest(op.matvec, x0, state_tol)
            ACs.append(dict(zip(sectors, op.views(v))))
            hc, bsec = w.h_c(GL[i], GR[i])
            c0 = np.concatenate([self.C[i][m].reshape(-1) for m in bsec])
            Cs.append(dict(zip(bsec, hc.views(lowest(hc.matvec, c0, state_tol)))))
        err = 0.0
        newAL, newAR = [], []
        for i in range(n):
            j = (i + 1) % n
            w = self.window(i)
            rows, cols = w.rows(), w.cols()
            ac = ACs[i]
            al = {m: _polar(ac[m] @ Cs[j][m].conj().T) for m in ac}
            lsec = [m for m in self.bonds[i] if m in cols.size]
            acc = dict(zip(lsec, cols_of(from_rows(ac, rows), cols, lsec, self.bonds[i], self.dtype)))
            ar = {m: _polar(Cs[i][m].conj().T @ acc[m]) for m in lsec}
            el = sum(float(np.linalg.norm(ac[m] - al[m] @ Cs[j][m]) ** 2) for m in ac)
            er = sum(float(np.linalg.norm(acc[m] - Cs[i][m] @ ar[m]) ** 2) for m in lsec)
            err = max(err, np.sqrt(el), np.sqrt(er))
            newAL.append(from_rows(al, rows))
            newAR.append(from_cols(ar, cols))
        self.AL, self.AR, self.C = newAL, newAR, Cs
        return max(err, grad)

    def expand(self, GL: list, GR: list, add: int, cutoff: float) -> bool:
        """Grow every bond by up to ``add`` directions, per sector (two-site projection)."""
        n = self.n
        ext_l: list[dict] = [{} for _ in range(n)]  # bond j: per sector, columns added to A_L[j - 1]
        ext_r: list[dict] = [{} for _ in range(n)]  # bond j: per sector, rows added to A_R[j]
        for i in range(n):
            j = (i + 1) % n
            wi, wj = self.window(i), self.window(j)
            rows, cols = wi.rows(), wj.cols()
            op = wi.h_ac2(wi.absorbed_left(GL[i]), wj.absorbed_right(GR[(j + 1) % n]), rows, cols)
            sectors = op.sectors
            bond = self.bonds[j]
            have = [m for m in sectors if m in bond]
            al = dict(zip(have, rows_of(self.AL[i], rows, have, bond, self.dtype)))
            ar = dict(zip(have, cols_of(self.AR[j], cols, have, bond, self.dtype)))
            theta = [
                al[m] @ self.C[j][m] @ ar[m] if m in bond else np.zeros((rows.size[m], cols.size[m]), self.dtype)
                for m in sectors
            ]
            y = op.views(op.matvec(np.concatenate([t.reshape(-1) for t in theta])))
            found, factors = [], {}
            for m, ym in zip(sectors, y):
                NL = scipy.linalg.null_space(al[m].conj().T) if m in bond else np.eye(rows.size[m], dtype=self.dtype)
                NR = scipy.linalg.null_space(ar[m]).conj().T if m in bond else np.eye(cols.size[m], dtype=self.dtype)
                if NL.shape[1] == 0 or NR.shape[0] == 0:
                    continue
                u, s, vh = scipy.linalg.svd(NL.conj().T @ ym @ NR.conj().T, full_matrices=False, check_finite=False)
                factors[m] = (NL @ u, vh @ NR)
                found.extend((float(x), m) for x in s)
            if not found:
                continue
            total = np.sqrt(sum(x * x for x, _ in found))
            found.sort(key=lambda f: -f[0])
            kept: dict[int, int] = {}
            for x, m in found[:add]:
                if x <= cutoff * max(1.0, total):
                    break
                kept[m] = kept.get(m, 0) + 1
            for m, k in kept.items():
                ext_l[j][m] = factors[m][0][:, :k]
                ext_r[j][m] = factors[m][1][:k]
        if not any(ext_l):
            return False
        self._grow(ext_l, ext_r)
        return True

    def _grow(self, ext_l: list[dict], ext_r: list[dict]) -> None:
        """Add the new directions: columns of ``A_L`` and rows of ``A_R`` (zero rows and columns on
        their other bond), ``C`` padded with zeros; every new direction starts with zero weight."""
        n = self.n
        old = [dict(b) for b in self.bonds]
        new_bonds = []
        for j in range(n):
            b = dict(old[j])
            for m, cols in ext_l[j].items():
                b[m] = b.get(m, 0) + cols.shape[1]
            new_bonds.append(dict(sorted(b.items())))
        newAL, newAR, newC = [], [], []
        for i in range(n):
            j = (i + 1) % n
            w = self.windows[i].on(old[i], old[j])
            rows, cols = w.rows(), w.cols()
            extl, extr = from_rows(ext_l[j], rows), from_cols(ext_r[i], cols)
            keys = set(self.AL[i]) | set(extl) | set(self.AR[i]) | set(extr)
            al, ar = {}, {}
            for ql, s in keys:
                qr = self.norm(ql + self.q[s])
                if ql not in new_bonds[i] or qr not in new_bonds[j]:
                    continue
                a = np.zeros((new_bonds[i][ql], new_bonds[j][qr]), dtype=self.dtype)
                b = np.zeros_like(a)
                dl, dr = old[i].get(ql, 0), old[j].get(qr, 0)
                if (ql, s) in self.AL[i]:
                    a[:dl, :dr] = self.AL[i][(ql, s)]
                if (ql, s) in extl:
                    a[:dl, dr:] = extl[(ql, s)]
                if (ql, s) in self.AR[i]:
                    b[:dl, :dr] = self.AR[i][(ql, s)]
                if (ql, s) in extr:
                    b[dl:, :dr] = extr[(ql, s)]
                al[(ql, s)], ar[(ql, s)] = a, b
            newAL.append(al)
            newAR.append(ar)
            c = {}
            for m, d in new_bonds[i].items():
                c[m] = np.zeros((d, d), dtype=self.dtype)
                if m in self.C[i]:
                    k = self.C[i][m].shape[0]
                    c[m][:k, :k] = self.C[i][m]
            newC.append(c)
        self.bonds, self.AL, self.AR, self.C = new_bonds, newAL, newAR, newC
        self.guesses = (None, None)

    def truncate(self, D: int) -> None:
        """Cut every bond to the ``D`` largest singular values of ``C`` across its sectors (the
        Schmidt basis kept), then make ``A_L``, ``A_R`` isometric again by the polar updates of
        ``A_C = A_L C``."""
        n = self.n
        U, V, Cs, bonds = [], [], [], []
        for j in range(n):
            svds = {m: scipy.linalg.svd(c, full_matrices=False, check_finite=False) for m, c in self.C[j].items()}
            found = sorted(((float(x), m) for m, (_, s, _) in svds.items() for x in s), key=lambda f: -f[0])
            kept: dict[int, int] = {}
            for _, m in found[:D]:
                kept[m] = kept.get(m, 0) + 1
            kept = dict(sorted(kept.items()))
            U.append({m: svds[m][0][:, :k] for m, k in kept.items()})
            V.append({m: svds[m][2][:k] for m, k in kept.items()})
            Cs.append({m: np.diag(svds[m][1][:k]).astype(self.dtype) for m, k in kept.items()})
            bonds.append(kept)
        AL = []
        for i in range(n):
            j = (i + 1) % n
            AL.append(
                {
                    (ql, s): U[i][ql].conj().T @ a @ U[j][qr]
                    for (ql, s), a in self.AL[i].items()
                    if ql in U[i] and (qr := self.norm(ql + self.q[s])) in U[j]
                }
            )
        self.bonds, self.C, self.guesses = bonds, Cs, (None, None)
        self.AL, self.AR = [], []
        for i in range(n):
            j = (i + 1) % n
            w = self.window(i)
            rows, cols = w.rows(), w.cols()
            sectors = [m for m in rows.size if m in bonds[j]]
            ac = {m: a @ Cs[j][m] for m, a in zip(sectors, rows_of(AL[i], rows, sectors, bonds[j], self.dtype))}
            lsec = [m for m in bonds[i] if m in cols.size]
            acc = dict(zip(lsec, cols_of(from_rows(ac, rows), cols, lsec, bonds[i], self.dtype)))
            self.AL.append(from_rows({m: _polar(ac[m] @ Cs[j][m].conj().T) for m in ac}, rows))
            self.AR.append(from_cols({m: _polar(Cs[i][m].conj().T @ acc[m]) for m in lsec}, cols))

    def dense(self) -> tuple[list[np.ndarray], np.ndarray]:
        """``A_L`` as dense arrays ``(left, d, right)`` (bond indices by charge) and ``C`` of bond 0."""
        out = self._embedded(self.AL)
        D0 = sum(self.bonds[0].values())
        c0 = np.zeros((D0, D0), dtype=self.dtype)
        o = _offsets(self.bonds[0])
        for m, c in self.C[0].items():
            c0[o[m] : o[m] + c.shape[0], o[m] : o[m] + c.shape[1]] = c
        return out, c0

    def _embedded(self, blocks: list[Blocks]) -> list[np.ndarray]:
        """Site matrices per ``(q_l, s)`` as dense ``(left, d, right)`` arrays (bond indices by charge)."""
        n, d = self.n, len(self.q)
        out = []
        for i in range(n):
            left, right = self.bonds[i], self.bonds[(i + 1) % n]
            lo, ro = _offsets(left), _offsets(right)
            a = np.zeros((sum(left.values()), d, sum(right.values())), dtype=self.dtype)
            for (ql, s), m in blocks[i].items():
                qr = self.norm(ql + self.q[s])
                a[lo[ql] : lo[ql] + m.shape[0], s, ro[qr] : ro[qr] + m.shape[1]] = m
            out.append(a)
        return out

    def canonical(self, floor: float) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
        """``(A_L, A_R, C)`` as dense arrays in the diagonal gauge, from the run's own blocks: each
        bond's ``C`` by one SVD per sector, ``A_L`` and ``A_R`` rotated to match (``U^dagger A_L U``,
        ``V^dagger A_R V``), the Schmidt values descending, those below ``floor`` dropped. No fixed point
        is searched: a state whose transfer matrix has two of them (the cat of two ordered states that a
        parity-conserving run converges to) keeps the one the run found, where
        :func:`.gauge.mixed_canonical` would pick a mixture of both that breaks the parity."""
        n = self.n
        U, V, S = [], [], []
        for b in range(n):
            o, D = _offsets(self.bonds[b]), sum(self.bonds[b].values())
            u = np.zeros((D, D), dtype=self.dtype)
            v = np.zeros((D, D), dtype=self.dtype)
            s = np.zeros(D)
            for m, c in self.C[b].items():
                uu, ss, vh = np.linalg.svd(c)
                at = slice(o[m], o[m] + c.shape[0])
                u[at, at], v[at, at], s[at] = uu, vh.conj().T, ss
            s = s / np.linalg.norm(s)
            order = np.argsort(-s, kind="stable")
            keep = order[: max(1, int(np.count_nonzero(s >= floor)))]
            U.append(u[:, keep])
            V.append(v[:, keep])
            S.append(s[keep] / np.linalg.norm(s[keep]))
        AL = [
            np.tensordot(np.tensordot(U[i].conj().T, a, (1, 0)), U[(i + 1) % n], (2, 0))
            for i, a in enumerate(self._embedded(self.AL))
        ]
        AR = [
            np.tensordot(np.tensordot(V[i].conj().T, a, (1, 0)), V[(i + 1) % n], (2, 0))
            for i, a in enumerate(self._embedded(self.AR))
        ]
        return AL, AR, [np.diag(x).astype(self.dtype) for x in S]


def _same_spectrum(c: np.ndarray, other: np.ndarray) -> bool:
    """Whether two diagonal centre matrices hold the same Schmidt values (to the run's resolution)."""
    a, b = np.abs(np.diag(c)), np.abs(np.diag(other))
    return a.shape == b.shape and bool(np.max(np.abs(a - b), initial=0.0) < SPECTRUM_ATOL)


def run_sectors(
    H: InfiniteMPO,
    Ws: Sequence[np.ndarray],
    charge: tuple,
    states: Sequence[int],
    D: int,
    tol: float,
    max_iter: int,
    cutoff: float,
    callback: Any,
    fallback: bool = False,
) -> VUMPSResult | None:
    """A VUMPS run on the charge sectors of ``charge`` (``(label, basis charges, modulus, MPO bond
    charges)``) of the cell ``Ws`` from the product state ``states``. A run that ends in a state of
    charge 0 per cell without one canonical form, or whose error stays far from any fixed point
    (:data:`STUCK_ERROR`; two fixed points of its transfer matrix: a ground state that breaks the
    symmetry, such as the Ising ferromagnet's) returns None with ``fallback``
    (``conserve="auto"``: the caller runs dense) and otherwise raises
    :class:`~tensor4all.structured.SymmetryViolationError`."""
    label, q, modulus, wq = charge
    cell = _Cell(Ws, wq, q, modulus, states)
    history: list[VUMPSRecord] = []
    err, since = 1.0, 10
    start = time.perf_counter()
    converged = False
    grow_to = D + int(OVERSHOOT * D)  # then truncated to D by the Schmidt values
    truncated, full = False, False  # full: the expansion found nothing more to add
    retry_at = 0
    stuck = 0  # iterations in a row with the error above STUCK_ERROR (after the first 20)
    for it in range(max_iter):
        env_tol = min(1e-6, max(err * 1e-3, 1e-14))
        GL, GR, e = cell.environments(env_tol)
        bond = cell.max_bond()
        target = D if truncated else grow_to
        if not full and bond < target and since >= 2 and it >= retry_at and (err < 1e-3 or since >= 10):
            if cell.expand(GL, GR, min(bond, target - bond), cutoff):
                since = 0
                continue
            full = err < max(tol, 1e-8)  # else try again after ten more iterations
            retry_at = it + 10
        if not truncated and (bond >= grow_to or full) and since >= SETTLE and (err < 1e-4 or since >= 20):
            truncated = True
            if bond > D:
                cell.truncate(D)
                since = 0
                continue
        since += 1
        err = cell.update(GL, GR, max((err * 1e-2) ** 2, 1e-28))
        rec = VUMPSRecord(it, float(e), err, bond, time.perf_counter() - start)
        history.append(rec)
        if callback is not None:
            callback(rec)
        if err < tol and since >= SETTLE and truncated and (bond >= D or full):
            converged = True
            break
        stuck = stuck + 1 if it >= 20 and err > STUCK_ERROR else 0
        if stuck >= STUCK_ITERATIONS:
            return _no_fixed_point(label, f"its error stayed above {STUCK_ERROR} for {stuck} iterations", fallback)
    AL, C0 = cell.dense()
    AL, AR, C = drop_small_schmidt(*mixed_canonical(AL, C0=C0), schmidt_floor(tol))
    own = cell.canonical(schmidt_floor(tol))
    if not _same_spectrum(C[0], own[2][0]):  # two fixed points: mixed_canonical mixed them
        AL, AR, C = own
    try:
        state = iMPS(AL, AR, C, H.local)
    except InvalidOptionError as exc:  # not in mixed canonical form: no single fixed point
        why = exc.args[0].split(": ", 2)[-1].split(";")[0]
        return _no_fixed_point(label, f"it ended without one canonical form ({why})", fallback)
    if fallback and not is_injective(state):  # the cat of a broken symmetry's orders: "auto" runs dense
        return None
    return VUMPSResult(energy_per_site(state, H), state, err, converged, history, label)


def _no_fixed_point(label: str, why: str, fallback: bool) -> None:
    """None for a caller that falls back to a dense run, else the error of a run of charge 0 per
    cell that found no fixed point (``why``)."""
    if fallback:
        return None
    raise SymmetryViolationError(
        f"vumps: the run conserving {label} (charge 0 per cell) found no fixed point: {why}. Its transfer matrix has "
        "two fixed points, as where the ground state breaks the symmetry (a magnetized phase such as the Ising "
        "ferromagnet) and charge 0 per cell cannot hold it; use conserve='none'"
    )
