"""Two-site DMRG in one charge sector of an abelian symmetry, on NumPy blocks.

Every bond of the MPS is graded by charge (``bonds[i]``: charge -> dimension; bond 0 is
``{0: 1}``, bond ``L`` is ``{Q: 1}`` for the target sector ``Q``), every physical basis
state ``s`` of a site has a charge ``q_s`` and every MPO bond state ``w`` a charge
``c_w`` (:mod:`._mpo_charges`). A site tensor is a set of dense matrices
``A[(q_l, s)]`` of shape ``(dim q_l, dim q_l + q_s)``; no forbidden block exists. At
every bond the bra charge equals the ket charge plus the MPO charge, so an environment
is, per MPO state ``w``, one matrix per bra charge ``q``: ``(dim q, dim q - c_w)``.

The two-site step at sites ``(i, i+1)`` groups the wavefunction by the charge ``m`` of
the middle bond: ``Theta[m]`` is one dense matrix, rows the pairs ``(q_a, s1)`` with
``q_a + q_s1 = m`` stacked, columns the pairs ``(s2, q_b)`` with ``q_b = m + q_s2``
(TeNPy's pipes, the fusion of :mod:`tensor4all.symmetry`). With the left block and the
first MPO tensor contracted once into ``LW[w][m]`` (rows of ``m`` by rows of
``m - c_w``) and the second MPO tensor with the right block into ``WR[w][m]``, the
effective Hamiltonian is ``y[m] = sum_w LW[w][m] Theta[m - c_w] WR[w][m]^T``: two GEMMs
per (MPO state, sector) instead of one dense product of the whole space (TeNPy's
``TwoSiteH`` with ``combine=True``). The split is one SVD per sector with one truncation
across all of them (``truncation_keep`` on the merged singular values), and the moved
environment reuses ``LW`` or ``WR``: ``L'[w][m] = U[m]^dagger LW[w][m] U[m - c_w]``.

This engine knows nothing of tenferro; ``_dmrg`` converts at the boundary.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ._sweep import BondUpdate, SweepEngine, SweepStats, perturbed
from ._truncation import thin_svd, truncation_keep

__all__ = ["SectorEngine", "SectorSweepStats", "sector_product_state"]


@dataclass
class SectorSweepStats(SweepStats):
    """The dense engine's ``SweepStats`` and the number of sectors at the middle bond."""

    blocks_mid: int = 0


class _Pieces:
    """Stacked pieces of a fused index per sector: ``groups[m] = [(key, offset, size)]``
    and ``size[m]``, in a fixed order."""

    __slots__ = ("groups", "size", "where")

    def __init__(self) -> None:
        self.groups: dict[int, list[tuple[Any, int, int]]] = {}
        self.size: dict[int, int] = {}
        self.where: dict[Any, tuple[int, int, int]] = {}

    def add(self, m: int, key: Any, n: int) -> None:
        off = self.size.get(m, 0)
        self.groups.setdefault(m, []).append((key, off, n))
        self.size[m] = off + n
        self.where[key] = (m, off, n)


class _TwoSiteOperator:
    """``x -> H_eff x`` on the flattened sectors ``Theta[m]``."""

    def __init__(self, lw: list[dict], wr: list[dict], c_mid: Sequence[int], sectors: list[int],
                 rows: _Pieces, cols: _Pieces, dtype: Any, norm: Callable[[int], int]):
        self.lw, self.wr, self.c_mid = lw, wr, c_mid
        self.sectors = sectors
        self.shapes = [(rows.size[m], cols.size[m]) for m in sectors]
        self.offsets = np.concatenate([[0], np.cumsum([r * c for r, c in self.shapes])]).astype(int)
        n = int(self.offsets[-1])
        self.shape = (n, n)
        self.dtype = dtype
        self.index = {m: k for k, m in enumerate(sectors)}
        # (w, out sector k, in sector k') triples with both blocks present
        self.terms = []
        for w, c in enumerate(c_mid):
            for k, m in enumerate(sectors):
                kin = self.index.get(norm(m - c))
                a = lw[w].get(m)
                b = wr[w].get(m)
                if kin is not None and a is not None and b is not None:
                    self.terms.append((k, kin, a, b.T))
        self.matvecs = 0

    def views(self, x: np.ndarray) -> list[np.ndarray]:
        return [x[self.offsets[k]:self.offsets[k + 1]].reshape(self.shapes[k]) for k in range(len(self.shapes))]

    def matvec(self, x: np.ndarray) -> np.ndarray:
        self.matvecs += 1
        xs = self.views(x)
        y = np.zeros(self.shape[0], dtype=np.result_type(self.dtype, x))
        ys = self.views(y)
        for k, kin, a, bt in self.terms:
            ys[k] += (a @ xs[kin]) @ bt
        return y


def sector_product_state(site_charges: Sequence[Sequence[int]], target: int, modulus: int = 0) -> list[int]:
    """Basis states, one per site, whose charges sum to ``target``, spread evenly along
    the chain (the running charge follows ``target * (i + 1) / L``). Raises ValueError
    when no choice of states reaches ``target``."""
    L = len(site_charges)
    if modulus:
        states = []
        total = 0
        for i, qs in enumerate(site_charges):
            if i < L - 1:
                s = int(np.argmin(np.abs(np.asarray(qs))))
            else:
                need = (target - total) % modulus
                hits = [k for k, q in enumerate(qs) if q % modulus == need]
                if not hits:
                    raise ValueError(f"no basis state of the last site has charge {need} (mod {modulus})")
                s = hits[0]
            states.append(s)
            total += qs[s]
        return states
    lo = np.cumsum([min(qs) for qs in site_charges][::-1])[::-1].tolist() + [0]
    hi = np.cumsum([max(qs) for qs in site_charges][::-1])[::-1].tolist() + [0]
    if not lo[0] <= target <= hi[0]:
        raise ValueError(f"the total charge {target} lies outside [{lo[0]}, {hi[0]}]")
    states, total = [], 0
    for i, qs in enumerate(site_charges):
        goal = target * (i + 1) / L
        best = None
        for s, q in sorted(enumerate(qs), key=lambda sq: abs(total + sq[1] - goal)):
            rest = target - total - q
            if lo[i + 1] <= rest <= hi[i + 1] and _reachable(site_charges[i + 1:], rest):
                best = s
                break
        if best is None:
            raise ValueError(f"no basis states reach the total charge {target}")
        states.append(best)
        total += qs[best]
    return states


def _reachable(site_charges: Sequence[Sequence[int]], rest: int) -> bool:
    """Whether the remaining sites can sum to ``rest`` (parity of the steps included)."""
    if not site_charges:
        return rest == 0
    steps = set()
    for qs in site_charges:
        steps |= {q - qs[0] for q in qs}
    g = 0
    for d in steps:
        g = np.gcd(g, abs(int(d)))
    base = sum(qs[0] for qs in site_charges)
    return (rest - base) % g == 0 if g else rest == base


class SectorEngine:
    """State of a two-site DMRG run in one charge sector (centre at site 0 between sweeps).

    The start is the product of basis ``states``, or ``blocks = (bonds, sites)``: the charge
    -> dimension map of every bond ``0..L`` and, per site, the matrices ``A[(q_l, s)]``,
    with sites ``1..L-1`` right-canonical (``MPS.canonicalize(0)`` of a symmetric MPS)."""

    def __init__(self, ws: Sequence[np.ndarray], w_charges: Sequence[np.ndarray], site_charges: Sequence[Sequence[int]],
                 states: Sequence[int] | None, solver: Callable, *, modulus: int = 0, max_iter: int = 40,
                 seed: int | None = 0, blocks: tuple[list[dict], list[dict]] | None = None):
        self.L = len(ws)
        self.modulus = modulus
        self.q = [list(map(int, qs)) for qs in site_charges]
        self.c = [[int(x) for x in c] for c in w_charges]       # bonds 0..L
        self.dtype = np.result_type(*ws, np.float64)
        # nonzero MPO entries per site: by right state (for LW) and by left state (for WR)
        self.by_right: list[dict[int, list]] = []
        self.by_left: list[dict[int, list]] = []
        for i, w in enumerate(ws):
            w = np.asarray(w)
            br: dict[int, list] = {}
            bl: dict[int, list] = {}
            for a, s, t, b in zip(*np.nonzero(w)):
                if self.c[i + 1][b] != self.norm(int(self.c[i][a]) + self.q[i][s] - self.q[i][t]):
                    continue   # rounding left by the MPO compression (below the charge check's tolerance)
                v = w[a, s, t, b]
                br.setdefault(int(b), []).append((int(a), int(s), int(t), v))
                bl.setdefault(int(a), []).append((int(b), int(s), int(t), v))
            self.by_right.append(br)
            self.by_left.append(bl)
        self.ws = [np.asarray(w) for w in ws]
        self.solver = solver
        self.max_iter = max_iter
        self._rng = np.random.default_rng(seed)
        if blocks is not None:   # a state in the sector, sites 1..L-1 right-canonical
            bonds, sites = blocks
            self.bonds = [dict(b) for b in bonds]
            self.dtype = np.result_type(self.dtype, *(b for site in sites for b in site.values()))
            self.sites = [{k: np.asarray(b, dtype=self.dtype) for k, b in site.items()} for site in sites]
            (self.target,) = self.bonds[-1]
        else:                    # product state in the sector
            self.bonds: list[dict[int, int]] = [{0: 1}]
            self.sites: list[dict[tuple[int, int], np.ndarray]] = []
            ql = 0
            for i, s in enumerate(states):
                qr = self.norm(ql + self.q[i][s])
                self.sites.append({(ql, s): np.ones((1, 1), dtype=self.dtype)})
                self.bonds.append({qr: 1})
                ql = qr
            self.target = ql
        self.left: list[list[dict] | None] = [None] * (self.L + 1)
        self.right: list[list[dict] | None] = [None] * (self.L + 1)
        one = np.ones((1, 1), dtype=self.dtype)
        self.left[0] = [{0: one}]
        self.right[self.L] = [{self.target: one}]
        for i in range(self.L - 1, 0, -1):
            self.right[i] = self._right_env(i)

    def norm(self, c: int) -> int:
        return c % self.modulus if self.modulus else c

    # ---- environments ----------------------------------------------------------------
    def _right_env(self, j: int) -> list[dict]:
        """``R_j`` from ``R_{j+1}`` and the right-canonical site ``j`` (its ``WR`` sandwiched
        between the site's column matrices)."""
        cols = self._cols(j)
        vs = {m: self._col_matrix(j, cols, m) for m in cols.size if self.bonds[j].get(m)}
        return _sandwich(self._wr(j, cols), {m: v.conj() for m, v in vs.items()}, {m: v.T for m, v in vs.items()},
                         self.c[j], self.norm)

    def _row_matrix(self, i: int, rows: _Pieces, m: int) -> np.ndarray:
        """Site ``i``'s blocks ending in charge ``m`` stacked: ``(rows m) x (dim m)``."""
        out = np.zeros((rows.size[m], self.bonds[i + 1].get(m, 0)), dtype=self.dtype)
        for key, off, n in rows.groups[m]:
            blk = self.sites[i].get(key)
            if blk is not None:
                out[off:off + n] = blk
        return out

    def _col_matrix(self, j: int, cols: _Pieces, m: int) -> np.ndarray:
        """Site ``j``'s blocks starting in charge ``m`` side by side: ``(dim m) x (cols m)``."""
        out = np.zeros((self.bonds[j].get(m, 0), cols.size[m]), dtype=self.dtype)
        for (s, _), off, n in cols.groups[m]:
            blk = self.sites[j].get((m, s))
            if blk is not None:
                out[:, off:off + n] = blk
        return out

    # ---- fused indices of a two-site step --------------------------------------------
    def _rows(self, i: int) -> _Pieces:
        p = _Pieces()
        for qa, da in self.bonds[i].items():
            for s, qs in enumerate(self.q[i]):
                p.add(self.norm(qa + qs), (qa, s), da)
        return p

    def _cols(self, j: int) -> _Pieces:
        """Columns ``(s2, q_b)`` of site ``j`` grouped by ``m = q_b - q_s2``."""
        p = _Pieces()
        for s, qs in enumerate(self.q[j]):
            for qb, db in self.bonds[j + 1].items():
                p.add(self.norm(qb - qs), (s, qb), db)
        return p

    def _lw(self, i: int, rows: _Pieces) -> list[dict]:
        """``LW[w][m] = sum L_i[w0] W_i[w0, s1, s1', w]`` as (rows m) x (rows m - c_w)."""
        return self._absorb(self.left[i], self.by_right[i], self.c[i], len(self.c[i + 1]), self.c[i + 1], rows,
                            lambda q, s: (q, s))

    def _wr(self, j: int, cols: _Pieces) -> list[dict]:
        """``WR[w][m] = sum W_j[w, s2, s2', w2] R_{j+1}[w2]`` as (cols m) x (cols m - c_w)."""
        return self._absorb(self.right[j + 1], self.by_left[j], self.c[j + 1], len(self.c[j]), self.c[j], cols,
                            lambda q, s: (s, q))

    def _absorb(self, env: list[dict], entries: dict[int, list], c_env: Sequence[int], n_out: int,
                c_out: Sequence[int], pieces: _Pieces, key: Callable[[int, int], tuple]) -> list[dict]:
        """An environment with one MPO tensor absorbed, as matrices between fused indices:
        ``out[w][m][(q, s), (q - c_x, t)] += v * env[x][q]`` for every MPO entry ``(x, s, t, v)``
        of output state ``w`` (``x``: the environment's MPO state)."""
        out = []
        for w in range(n_out):
            cw = c_out[w]
            blocks: dict[int, np.ndarray] = {}
            for x, s, t, v in entries.get(w, ()):
                cx = c_env[x]
                for q, eb in env[x].items():
                    r = pieces.where.get(key(q, s))
                    cl = pieces.where.get(key(self.norm(q - cx), t))
                    if r is None or cl is None:
                        continue
                    m, ro, rn = r
                    _, co, cn = cl
                    blk = blocks.get(m)
                    if blk is None:
                        blk = blocks[m] = np.zeros((pieces.size[m], pieces.size.get(self.norm(m - cw), 0)),
                                                   dtype=self.dtype)
                    blk[ro:ro + rn, co:co + cn] += v * eb
            out.append(blocks)
        return out

    def _theta(self, i: int, rows: _Pieces, cols: _Pieces, sectors: list[int]) -> list[np.ndarray]:
        return [self._row_matrix(i, rows, m) @ self._col_matrix(i + 1, cols, m) for m in sectors]

    # ---- sweeps ------------------------------------------------------------------------
    def sweep(self, *, two_site: bool = True, max_bond: int, cutoff: float, tol: float, alpha: float = 0.0,
              sweep_no: int, progress: Callable[[Any], None] | None = None) -> SectorSweepStats:
        """One left-to-right and one right-to-left pass of two-site updates (the interface of
        the dense ``SweepEngine.sweep``; ``two_site`` must be True). ``alpha > 0`` adds a random
        component of relative norm ``alpha`` to each eigensolver start vector (within the
        sector: the perturbation that lets the dense engine leave a sector is not needed)."""
        t0 = time.perf_counter()
        st = dict(err=0.0, matvecs=0, peak=0, env=0)
        energy = 0.0
        steps = 2 * (self.L - 1)
        step = 0
        for direction, sites in (("right", range(self.L - 1)), ("left", range(self.L - 2, -1, -1))):
            for i in sites:
                energy, err = self._step(i, direction, max_bond, cutoff, tol, alpha, st)
                step += 1
                if progress is not None:
                    progress(BondUpdate(sweep_no, step, steps, i, direction, energy,
                                        sum(self.bonds[i + 1].values()), err))
        norm = np.sqrt(sum(float(np.vdot(b, b).real) for b in self.sites[0].values()))
        self.sites[0] = {k: b / norm for k, b in self.sites[0].items()}
        energy = self.energy()
        mid = self.bonds[self.L // 2]
        return SectorSweepStats(energy, max(sum(b.values()) for b in self.bonds), st["err"], st["matvecs"],
                                time.perf_counter() - t0, st["peak"], st["env"], len(mid))

    def _step(self, i: int, direction: str, max_bond: int, cutoff: float, tol: float, alpha: float,
              st: dict) -> tuple[float, float]:
        rows, cols = self._rows(i), self._cols(i + 1)
        sectors = [m for m in rows.size if m in cols.size]
        lw, wr = self._lw(i, rows), self._wr(i + 1, cols)
        op = _TwoSiteOperator(lw, wr, [int(c) for c in self.c[i + 1]], sectors, rows, cols, self.dtype, self.norm)
        theta = self._theta(i, rows, cols, sectors)
        v0 = np.concatenate([t.reshape(-1) for t in theta]) if theta else np.zeros(0)
        if alpha > 0.0 and v0.size:
            v0 = perturbed(v0, alpha, self._rng)
        energy, v, n = self.solver(op, v0, tol=tol, max_iter=self.max_iter)
        st["matvecs"] += n
        blocks = op.views(v)
        # one SVD per sector, one truncation across all of them
        svds = [thin_svd(b) for b in blocks]
        values = np.concatenate([s for _, s, _ in svds]) if svds else np.zeros(0)
        owner = np.concatenate([np.full(len(s), k) for k, (_, s, _) in enumerate(svds)]) if svds else np.zeros(0, int)
        order = np.argsort(-values, kind="stable")
        keep, err = truncation_keep(values[order], max_bond, cutoff)
        counts = np.bincount(owner[order[:keep]], minlength=len(svds))
        new_bond: dict[int, int] = {}
        left_site: dict = {}
        right_site: dict = {}
        us: dict[int, np.ndarray] = {}
        vs: dict[int, np.ndarray] = {}
        for k, m in enumerate(sectors):
            n_k = int(counts[k])
            if n_k == 0:
                continue
            u, s, vh = svds[k]
            u, s, vh = u[:, :n_k], s[:n_k], vh[:n_k]
            if direction == "right":
                vh = s[:, None] * vh
            else:
                u = u * s
            new_bond[m] = n_k
            us[m], vs[m] = u, vh
            for key, off, n_r in rows.groups[m]:
                left_site[key] = np.ascontiguousarray(u[off:off + n_r])
            for (s2, qb), off, n_c in cols.groups[m]:
                right_site[(m, s2)] = np.ascontiguousarray(vh[:, off:off + n_c])
        self.bonds[i + 1] = dict(sorted(new_bond.items()))
        self.sites[i], self.sites[i + 1] = left_site, right_site
        c_mid = [int(c) for c in self.c[i + 1]]
        if direction == "right":
            self.left[i + 1] = _sandwich(lw, {m: u.conj().T for m, u in us.items()}, us, c_mid, self.norm)
            if i + 1 < self.L:
                self.right[i + 1] = None
        else:
            self.right[i + 1] = _sandwich(wr, {m: v.conj() for m, v in vs.items()}, {m: v.T for m, v in vs.items()},
                                          c_mid, self.norm)
            if i > 0:
                self.left[i + 1] = None
        st["err"] = max(st["err"], err)
        nbytes = sum(b.nbytes for d in lw + wr for b in d.values())
        env = self._env_bytes()
        st["env"] = max(st["env"], env)
        st["peak"] = max(st["peak"], env + nbytes + 6 * v.nbytes + self._psi_bytes())
        return float(energy), float(err)

    def _env_bytes(self) -> int:
        return sum(b.nbytes for e in self.left + self.right if e is not None for d in e for b in d.values())

    def _psi_bytes(self) -> int:
        return sum(b.nbytes for site in self.sites for b in site.values())

    # ---- results -----------------------------------------------------------------------
    def energy(self) -> float:
        """``<psi|H|psi> / <psi|psi>`` from the site-0 tensor and the right environment."""
        r0 = self._right_env(0)[0].get(0)
        norm2 = sum(float(np.vdot(b, b).real) for b in self.sites[0].values())
        return float(np.real(r0[0, 0]) / norm2) if r0 is not None and norm2 > 0 else 0.0

    @property
    def psi(self) -> list[np.ndarray]:
        """The site tensors as dense arrays (the dense engine's ``psi``)."""
        return self.dense_sites()

    def bond_dims(self) -> list[int]:
        return [sum(b.values()) for b in self.bonds[1:-1]]

    def operator_gradients(self) -> list[np.ndarray]:
        """``dE/dW_i`` (Hellmann-Feynman) of the current state, by the dense engine's one pass
        over environments built from the dense site tensors."""
        return SweepEngine(self.ws, self.dense_sites(), self.solver).operator_gradients()

    def dense_sites(self) -> list[np.ndarray]:
        """The site tensors ``(left, d, right)`` as dense arrays, bond indices ordered by charge."""
        out = []
        for i, site in enumerate(self.sites):
            lo = _offsets(self.bonds[i])
            ro = _offsets(self.bonds[i + 1])
            a = np.zeros((sum(self.bonds[i].values()), len(self.q[i]), sum(self.bonds[i + 1].values())),
                         dtype=self.dtype)
            for (ql, s), blk in site.items():
                qr = self.norm(ql + self.q[i][s])
                a[lo[ql]:lo[ql] + blk.shape[0], s, ro[qr]:ro[qr] + blk.shape[1]] = blk
            out.append(a)
        return out


def _offsets(bond: dict[int, int]) -> dict[int, int]:
    out, off = {}, 0
    for q, d in bond.items():
        out[q] = off
        off += d
    return out


def _sandwich(absorbed: list[dict], bra: dict[int, np.ndarray], ket: dict[int, np.ndarray], c: Sequence[int],
              norm: Callable[[int], int]) -> list[dict]:
    """The moved environment ``E[w][m] = bra[m] @ absorbed[w][m] @ ket[m - c_w]`` over the
    sectors present on both sides (``bra = U^dagger``, ``ket = U`` for a left block;
    ``conj(Vh)``, ``Vh^T`` for a right one)."""
    return [{m: bra[m] @ blk @ ket[norm(m - cw)] for m, blk in absorbed[w].items()
             if m in bra and norm(m - cw) in ket} for w, cw in enumerate(c)]
