"""Forward-mode derivative of a concrete imaginary-time TEBD run: :func:`tebd_jvp`.

The run is the ordinary one (the same gates, SVDs and truncations as :func:`~tensor4all.tebd`, dense
or on the symmetric block sites of :mod:`.tebd_blocks`, NumPy throughout); beside each site it
carries its tangent, the derivative of the site along a direction of the bond Hamiltonians
(``dbonds``: the gates ``e^{-w dt h_b}`` have the tangents ``d/dx e^{-w dt (h_b + x dh_b)}``, SciPy's
``expm_frechet``). The rules, per sector of the cut, real arithmetic:

* the pair: ``Y = G (a b)`` is linear in each of ``a``, ``b``, ``G``, so ``dY = G (da b) + G (a db)
  + dG (a b)``;
* the truncated SVD ``Y = U S V^T``, ``k`` kept, split ``a' = U_k``, ``b' = S_k V_k^T`` (centre to
  the right): ``dU_k = U_d C + (1 - U U^T) dY V_k S_k^{-1}`` with ``P = U^T dY V`` and ``C_ji =
  (s_i P_ji + s_j P_ij) / (s_i^2 - s_j^2)`` over the discarded ``j``: the derivative of the kept
  subspace, the discarded singular values included (the derivative of the truncated map, as a traced
  run's SVD derivative gives it); the rotation within the kept subspace is a gauge of the two
  sites and is left out (so near-degenerate kept values divide nothing), and ``db' = C^T S_d V_d^T
  + U_k^T dY`` (``b' = U_k^T Y``). The mirror image when the centre goes left;
* the norm kept out of the state (``normalize``): ``d(c / n) = dc / n - c dn / n^2`` with ``dn =
  sum_i s_i P_ii / n``;
* the QR moves of the centre: ``a = Q R``, ``dQ = (1 - Q Q^T) da R^{-1}`` and ``d(R b) = Q^T da b
  + R db`` (the tangents keep ``Q^T dQ = 0``, so the centre's norm stays the state's).

The derivative is that of the computed, truncated evolution at fixed kept ranks, what tidu's
forward mode through a traced run gives (the same formulas), at the cost of the concrete run plus
three pair products and a few GEMMs per bond update: the block-sparse SVDs of the concrete run
instead of the dense traced ones (the XX chain L = 32 to beta = 10 at ``cutoff=1e-18``, bonds
to 270: see ``docs/how-to/thermal.md``).
"""

from __future__ import annotations

import time as _time
from typing import Any, Callable

import numpy as np
import scipy.linalg

import tenferro as tf

from ..linalg import lapack
from ..linalg.truncation import resolved_values, sector_keep
from ..networks.mps import MPS
from ..operators.gates import BondHamiltonian
from ..tools.errors import InvalidOptionError
from .evolution import EvolutionRecord
from .tebd import _Run, step_layers
from .tebd_blocks import BlockSite, BlockSites

__all__ = ["tebd_jvp"]


def _dense_gate(h: np.ndarray, dh: np.ndarray | None, w: float) -> tuple[np.ndarray, np.ndarray]:
    """``G = e^{-w h}`` and its derivative along ``dh`` (``h -> h + x dh`` at ``x = 0``); ``dh`` None:
    along ``h -> s h`` at ``s = 1``, ``-w h G``. The arithmetic is real: a term with an imaginary part
    (``Sy``, a complex hopping) raises :class:`InvalidOptionError` (dropping it gave ``chi_y = 0``)."""
    a = -w * _real(h, "a bond term of the Hamiltonian")
    if dh is None:
        g = scipy.linalg.expm(a)
        return g, a @ g
    g, dg = scipy.linalg.expm_frechet(a, -w * _real(dh, "a bond term of the field (the tangent direction)"))
    return g, dg


def _real(m: np.ndarray, what: str) -> np.ndarray:
    m = np.asarray(m)
    if np.iscomplexobj(m) and np.any(np.imag(m)):
        raise InvalidOptionError(
            f"tebd_jvp: {what} has imaginary matrix elements, but the tangent run is real arithmetic; expected "
            "real terms (thermodynamics routes complex ones to engine='traced')"
        )
    return np.real(m)


def _cross_rotation(pa: np.ndarray, pb: np.ndarray, sk: np.ndarray, sd: np.ndarray, top: float) -> np.ndarray:
    """``C_ji = (s_i A_ji + s_j B_ji) / (s_i^2 - s_j^2)`` (kept ``i``, discarded ``j``) as tenferro's SVD
    rule writes it, ``(A + B) / (2 (s_i - s_j)) + (A - B) / (2 (s_i + s_j))``, the first term 0 for a
    pair its degeneracy threshold calls degenerate (``tenferro.linalg.config.degeneracy_rtol``): a cut
    through a degenerate multiplet (a spin-flip symmetric state at zero field) keeps one of its
    vectors by rounding, the rotation toward the other is not defined, and ``1 / (s_i^2 - s_j^2)`` at
    1e-25 made the susceptibility 12% off; the traced run's rule drops the same term."""
    gap = sk[None, :] - sd[:, None]
    degenerate = np.abs(gap) <= tf.linalg.config.degeneracy_rtol * top
    even = np.divide(pa + pb, 2.0 * gap, out=np.zeros_like(pa), where=~degenerate)
    return even + (pa - pb) / (2.0 * (sk[None, :] + sd[:, None]))


def _svd_tangent(
    y: np.ndarray, dy: np.ndarray, u: np.ndarray, s: np.ndarray, vh: np.ndarray, k: int, to_right: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """``(a', b', da', db', dn2)`` of one sector's split keeping ``k`` (module docstring), unnormalized;
    ``dn2 = d(sum_kept s^2) / 2``."""
    v = vh.T
    p = u.T @ dy @ v  # r x r
    sk = s[:k]
    d = np.diag(p)[:k]
    dn2 = float(np.dot(sk, d))
    if to_right:  # a' = U_k, b' = S_k V_k^T
        uk = u[:, :k]
        out = dy @ v[:, :k]
        du = (out - u @ (u.T @ out)) / sk
        bk = sk[:, None] * vh[:k]
        dbk = uk.T @ dy
        if k < len(s):
            sd = s[k:]
            c = _cross_rotation(p[k:, :k], p[:k, k:].T, sk, sd, s[0])
            du = du + u[:, k:] @ c
            dbk = dbk + c.T @ (sd[:, None] * vh[k:])
        return uk, bk, du, dbk, dn2
    vk = v[:, :k]  # a' = U_k S_k, b' = V_k^T
    out = dy.T @ u[:, :k]
    dv = (out - v @ (v.T @ out)) / sk
    ak = u[:, :k] * sk
    dak = dy @ vk
    if k < len(s):
        sd = s[k:]
        c = _cross_rotation(p[:k, k:].T, p[k:, :k], sk, sd, s[0])
        dv = dv + v[:, k:] @ c
        dak = dak + (u[:, k:] * sd) @ c
    return ak, vk.T, dak, dv.T, dn2


def _qr_tangent(a: np.ndarray, da: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``a = Q R``: ``(Q, R, dQ, Q^T da)`` with ``dQ = (1 - Q Q^T) da R^{-1}`` (0 when ``Q`` is square)."""
    q, r = lapack.qr(a)
    qda = q.T @ da
    if q.shape[0] > q.shape[1]:
        rest = da - q @ qda
        dq = scipy.linalg.solve_triangular(r, rest.T, trans="T", lower=False).T
    else:
        dq = np.zeros_like(q)
    return q, r, dq, qda


class _TangentRun(_Run):
    """:class:`_Run` with a tangent beside each site (``self.dts``), real arithmetic."""

    def __init__(self, psi: MPS, dt: float, max_bond: int, cutoff: float):
        super().__init__(psi, np.dtype(np.float64), False, dt, True, True, max_bond, cutoff)
        self.dts = [self._zero(t) for t in self.ts]
        self.blocks = isinstance(self.fmt, BlockSites)
        self.dbonds: BondHamiltonian | None = None
        self.growth = 1.0  # the factor the sweep's normalizations removed since the last record

    def record(self, step: int, time: float, seconds: float) -> EvolutionRecord:
        """The record of the step (``norm``: the factor the step removed), kept here rather than in
        :class:`_Run`'s norm bookkeeping, which this run's normalized splits bypass."""
        rec = EvolutionRecord(
            step=step,
            time=time,
            max_bond=max(t.shape[2] for t in self.ts),
            max_truncation_error=float(self.step_err),
            norm=self.growth,
            seconds=seconds,
            matvecs=self.step_gates,
        )
        self.growth, self.step_err, self.step_gates = 1.0, 0.0, 0
        return rec

    def _zero(self, t: Any) -> Any:
        if isinstance(t, BlockSite):
            return BlockSite(t.left, t.right, t.leg, t.form, {m: np.zeros_like(x) for m, x in t.mats.items()})
        return np.zeros_like(t)

    # -- gates: (G, dG) per bond ----------------------------------------------------------
    def _pair_gate(self, pair: tuple[int, int], factors: list[tuple[BondHamiltonian, float]]) -> Any:
        bonds = factors[0][0]
        if any(f[0] is not bonds for f in factors):
            raise InvalidOptionError("tebd_jvp: a time-dependent Hamiltonian is not supported")
        w = sum(x for _, x in factors) * self.dt
        h = bonds.matrix(pair)
        if h is None:
            return None
        dh = None if self.dbonds is None else self.dbonds.matrix(pair)
        if self.dbonds is not None and dh is None:
            dh = np.zeros_like(np.real(np.asarray(h)))
        g, dg = _dense_gate(h, dh, w)
        i, j = pair
        d = self.ts[i].shape[1], self.ts[j].shape[1]
        return self.fmt.gate(g, i, j, *d), self.fmt.gate(dg, i, j, *d)

    def layer(
        self, pairs: list[tuple[int, int]], factors: list[tuple[BondHamiltonian, float]], following: Any = None
    ) -> None:
        key = (tuple(pairs), tuple((id(b), w) for b, w in factors))
        ops = self.cache.get(key)
        if ops is None:
            if any(j != i + 1 for i, j in pairs):
                raise InvalidOptionError("tebd_jvp: nearest-neighbour terms only")
            ops = [(i, g) for i, j in pairs if (g := self._pair_gate((i, j), factors)) is not None]
            self.cache[key] = ops
        ascending = 2 * self.centre <= self.L - 2
        seq = ops if ascending else ops[::-1]
        for n, (b, g) in enumerate(seq):
            nxt = seq[n + 1][0] if n + 1 < len(seq) else (b + 1 if ascending else b - 1)
            self.apply(b, g, nxt > b)

    # -- the bond update with its tangent ---------------------------------------------------
    def apply(self, b: int, g: Any, to_right: bool) -> None:
        while self.centre < b:
            self._move(self.centre, True)
            self.centre += 1
        while self.centre > b + 1:
            self._move(self.centre - 1, False)
            self.centre -= 1
        self._split(b, g, to_right)
        self.centre = b + 1 if to_right else b
        self.step_gates += 1

    def _split(self, b: int, gates: Any, to_right: bool) -> None:
        fmt, ts, dts = self.fmt, self.ts, self.dts
        g, dg = gates
        y, ctx = fmt.pair(ts[b], ts[b + 1], g)
        y1, _ = fmt.pair(dts[b], ts[b + 1], g)
        y2, _ = fmt.pair(ts[b], dts[b + 1], g)
        y3, _ = fmt.pair(ts[b], ts[b + 1], dg)
        svds = {k: lapack.svd(m) for k, m in y.items()}
        # no values below the SVD's resolution, as the traced split (their tangents divide by them:
        # at cutoff 0 the specific heat of the XX chain L = 10 came out 1e9 off)
        shapes = [m.shape for m in y.values()]
        values = resolved_values(
            {k: s for k, (_, s, _) in svds.items()}, sum(r for r, _ in shapes), sum(c for _, c in shapes)
        )
        counts, err = sector_keep(values, self.max_bond, self.cutoff)
        kept, dkept, n2, dn2 = {}, {}, 0.0, 0.0
        for k, n in counts.items():
            if not n:
                continue
            u, s, vh = svds[k]
            a1, b1, da1, db1, dk = _svd_tangent(y[k], y1[k] + y2[k] + y3[k], u, s, vh, n, to_right)
            kept[k], dkept[k] = (a1, b1), (da1, db1)
            n2 += float(np.dot(s[:n], s[:n]))
            dn2 += dk
        norm = np.sqrt(n2)
        dlog = dn2 / n2  # d ln n
        for k in kept:  # the centre's factor divided by the norm, and its tangent
            (a1, b1), (da1, db1) = kept[k], dkept[k]
            if to_right:
                kept[k], dkept[k] = (a1, b1 / norm), (da1, (db1 - b1 * dlog) / norm)
            else:
                kept[k], dkept[k] = (a1 / norm, b1), ((da1 - a1 * dlog) / norm, db1)
        ts[b], ts[b + 1] = fmt.unpair({k: (x, z) for k, (x, z) in kept.items()}, ctx)
        dts[b], dts[b + 1] = fmt.unpair(dkept, ctx)
        self.growth *= float(norm)
        self.step_err = max(self.step_err, err)

    def _move(self, i: int, to_right: bool) -> None:
        """The centre from site ``i`` to ``i + 1`` (``to_right``) or back, with the tangents."""
        ts, dts = self.ts, self.dts
        a, b, da, db = ts[i], ts[i + 1], dts[i], dts[i + 1]
        if self.blocks:
            fmt = self.fmt
            a, da = fmt._regroup(a, "R"), fmt._regroup(da, "R")
            b, db = fmt._regroup(b, "C"), fmt._regroup(db, "C")
            amat, bmat, damat, dbmat = a.mats, b.mats, da.mats, db.mats
        else:
            l, d, r = a.shape
            _, d2, r2 = b.shape
            amat, damat = {0: a.reshape(l * d, r)}, {0: da.reshape(l * d, r)}
            bmat, dbmat = {0: b.reshape(r, d2 * r2)}, {0: db.reshape(r, d2 * r2)}
        na, nb, dna, dnb, bond = {}, {}, {}, {}, {}
        for m in sorted(amat if to_right else bmat):
            if to_right:
                q, rr, dq, qda = _qr_tangent(amat[m], damat[m])
                na[m], dna[m], bond[m] = q, dq, q.shape[1]
                if m in bmat:
                    nb[m] = rr @ bmat[m]
                    dnb[m] = qda @ bmat[m] + rr @ dbmat[m]
            else:
                qt, lt, dqt, qdb = _qr_tangent(bmat[m].T, dbmat[m].T)  # b = L Q: b^T = Q^T L^T
                nb[m], dnb[m], bond[m] = qt.T, dqt.T, qt.shape[1]
                if m in amat:
                    na[m] = amat[m] @ lt.T
                    dna[m] = damat[m] @ lt.T + amat[m] @ qdb.T
        if self.blocks:
            ts[i], ts[i + 1] = BlockSite(a.left, bond, a.leg, "R", na), BlockSite(bond, b.right, b.leg, "C", nb)
            dts[i], dts[i + 1] = BlockSite(a.left, bond, a.leg, "R", dna), BlockSite(bond, b.right, b.leg, "C", dnb)
        else:
            k = bond[0]
            ts[i], ts[i + 1] = na[0].reshape(l, d, k), nb[0].reshape(k, d2, r2)
            dts[i], dts[i + 1] = dna[0].reshape(l, d, k), dnb[0].reshape(k, d2, r2)

    def states(self) -> tuple[MPS, MPS]:
        """The state and its tangent as MPS (the same bonds and sectors)."""
        return self.fmt.state(list(self.ts), self.grading), self.fmt.state(list(self.dts), self.grading)


def tebd_jvp(
    bonds: BondHamiltonian,
    dbonds: BondHamiltonian | None,
    psi: MPS,
    t_final: float,
    dt: float,
    *,
    order: int = 4,
    max_bond: int = 128,
    cutoff: float = 1e-12,
    every: int = 1,
    measure: Callable[[MPS, MPS, float], Any],
    callback: Callable[[EvolutionRecord], Any] | None = None,
) -> tuple[list[float], list[Any], list[EvolutionRecord]]:
    """Imaginary-time TEBD (brick splitting, normalized after every gate) of the real state ``psi``
    by the bond terms ``bonds``, with the tangent along ``dbonds`` (None: along ``s`` in ``s h_b``, the
    step scaled). ``measure(state, tangent, t)`` at ``t = 0, every dt, ..., t_final``: the state
    normalized, the tangent that of the normalized state. Returns the output times, the measured
    values and one record per step (``norm``: the factor the step removed)."""
    n_steps = int(round(t_final / dt))
    run = _TangentRun(psi, dt, max_bond, cutoff)
    run.dbonds = dbonds
    times, out, history = [0.0], [measure(*run.states(), 0.0)], []
    pending = None
    for k in range(1, n_steps + 1):
        t0 = _time.perf_counter()
        output = k % every == 0 or k == n_steps
        layers, pending = step_layers(bonds, "brick", order, pending, output)
        for pairs, factors in layers:
            run.layer(pairs, factors)
        record = run.record(k, k * dt, _time.perf_counter() - t0)
        history.append(record)
        if callback is not None:
            callback(record)
        if output:
            times.append(k * dt)
            out.append(measure(*run.states(), k * dt))
    return times, out, history
