"""The charge-sector backend of the DMRG sweep (:mod:`._sweep`): one sector of an abelian
symmetry, on NumPy blocks.

Every bond of the MPS is graded by charge (``bonds[i]``: charge -> dimension; bond 0 is
``{0: 1}``, bond ``L`` is ``{Q: 1}`` for the target sector ``Q``), every physical basis
state ``s`` of a site has a charge ``q_s`` and every MPO bond state ``w`` a charge
``c_w`` (:mod:`._mpo_charges`). A site tensor is a set of dense matrices
``A[(q_l, s)]`` of shape ``(dim q_l, dim q_l + q_s)``; no forbidden block exists. At
every bond the bra charge equals the ket charge plus the MPO charge, so an environment
is, per MPO state ``w``, one matrix per bra charge ``q``: ``(dim q, dim q - c_w)``.

A step groups its local tensor by the charge ``m`` of the bond it cuts: ``X[m]`` is one
dense matrix whose rows and columns are the two sides of the cut (TeNPy's pipes, the
fusion of :mod:`tensor4all.symmetry`). A side is either a site fused with its outer bond,
rows the pairs ``(q_a, s)`` with ``q_a + q_s = m`` stacked (columns ``(s, q_b)`` with
``q_b = m + q_s``), or the bare bond. Two-site steps fuse both sides; one-site steps fuse
the site and leave the bond toward the centre's next site bare. With the environment of a
fused side absorbed into its MPO tensor once, ``LW[w][m]`` (rows of ``m`` by rows of
``m - c_w``) and ``WR[w][m]`` (a bare side takes the environment itself), the effective
Hamiltonian is ``y[m] = sum_w LW[w][m] X[m - c_w] WR[w][m]^T``: two GEMMs per (MPO state,
sector) instead of one dense product of the whole space (TeNPy's ``TwoSiteH`` with
``combine=True``); a small local problem holds its matrix instead (built once from the same
terms, :class:`.sector_operator.SectorOperator`), and the absorptions are planned once per shape
(:func:`.sector_absorb.absorb_mpo`), so that small chains do not pay per block what large ones
pay per flop. The split is one SVD per sector with one truncation across all of them
(:func:`tensor4all.linalg.lapack.svd_sectors`; a large block through the Gram matrix of the side
kept orthonormal where the cutoff lets its weights be resolved, as TEBD's), the weights moved with the centre
(``_truncation.absorb``); a bare side's factor is merged into the next site. The moved
environment reuses ``LW`` or ``WR``: ``L'[w][m] = U[m]^dagger LW[w][m] U[m - c_w]``.

Steps with noise ``alpha > 0`` grow the bond by the subspace expansion within the sector
(C. Hubig, I. P. McCulloch, U. Schollwoeck and F. A. Wolf, Phys. Rev. B 91, 155115 (2015);
in two-site steps it is White's density-matrix perturbation, Phys. Rev. B 72, 180403 (2005)):
the SVD of ``[X[m], alpha P[m]]`` with ``P[m] = [LW[w][m] X[m - c_w]]_w`` moving right
(stacked below, ``X[m - c_w] WR[w][m]^T``, moving left) picks the kept basis; the state is
its projection ``U^dagger X`` (the first columns of ``S Vh``), a bare next site padded with
zeros. Without it, two-site sweeps from a product state stay at small bonds (a Hubbard 4x2
cylinder: bond 16 and E = -4.63 after the first sweep, with ``alpha = 1e-4`` bond 64 and
E = -4.99; the ground energy is -5.01).

Placement: the blocks, environments and Krylov vectors are NumPy arrays on the CPU or CuPy
arrays on a GPU (``placement``, :mod:`._device`): the per-sector GEMMs, SVDs and the absorbed
environments run there, one kernel per block; the bookkeeping (charges, offsets, the MPO's
nonzero entries) stays on the host. :meth:`SectorBackend.host_sites` copies the state back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Sequence

import numpy as np

from ..linalg.krylov import expm_krylov
from ..networks.symmetric_sites import phys_leg
from ..structured import U1, SymmetricTensor, Zn
from ..tools.device import cupy_module, to_device
from ..structured.site_matrices import Pieces, SiteMatrices, bond_sectors
from ..networks.environments import EnvCache
from .sector_absorb import MAX_PLANS, absorb_groups, absorb_mpo, sandwich
from .sector_dense import Dense
from .sector_flat import FLAT_MAX_ENTRIES, FlatSite, write_cols, write_rows
from .sector_sides import SectorSides
from .sector_operator import Env, PreparedRectangles, SectorOperator
from .schedule import LEFT, RIGHT, Step
from ..linalg.truncation import absorb
from ..linalg.lapack import svd_sectors

__all__ = ["SectorBackend", "SectorLocal", "ABSORBED_CACHE_BYTES"]

ABSORBED_CACHE_BYTES = 1 << 30
"""The absorbed environments kept for reuse at most take this many bytes. A two-site sweep
builds both ``LW`` and ``WR`` at every step, and each is needed again unchanged one half-sweep
later (``WR`` built moving left at a step is the one the next right-moving sweep needs at the
same step: its environment and bond have not changed in between), so keeping them saves half
of the absorbing; one half-sweep's worth is about ``L`` absorbed environments (an 8 x 4
Hubbard cylinder at bond dimension 400: about 0.5 GB). Entries that would exceed the budget
are not kept (they are rebuilt when needed)."""


_GROUPS: dict[tuple, tuple[list, list]] = {}  # an MPO tensor's absorb groups, per (tensor, charges, modulus)


@dataclass
class SectorLocal:
    """One step's local problem and what its split and move reuse: the pieces of both sides
    (``fused``: which sides are a site with its outer bond), the absorbed environments and,
    after the split, the orthonormal factor per sector (rows: the side the centre left). The
    start vector ``v0`` is made from ``start`` when first asked for: an exact solve of a small
    problem needs none (``like``: an empty array where the solution lives), and reading the two
    sites and multiplying them per sector took a third of a small chain's local problem). It
    reads the sites as they are when it is first asked for: before the split."""

    step: Step
    op: SectorOperator
    start: Callable[[], np.ndarray]
    rows: Pieces
    cols: Pieces
    fused: tuple[bool, bool]
    lw: Env
    wr: Env
    basis: dict[int, np.ndarray] = field(default_factory=dict)
    kept: dict[int, np.ndarray] | None = None  #: TDVP's bond problem: the bond matrix's blocks
    like: Any = None

    @cached_property
    def v0(self) -> np.ndarray:
        return self.start()


def _env_bytes(env: Env) -> int:
    if isinstance(env, Dense):  # its blocks are views of one array
        return env.dense.nbytes
    return sum(b.nbytes for d in env for b in d.values())


class SectorBackend(SectorSides):
    """Bonds, site tensors and environments of a run in one charge sector (centre at site 0
    between sweeps).

    The sites are the MPS's own :class:`~tensor4all.SymmetricTensor` s (legs ``(left bond,
    physical, right bond)``, blocks ``(q_l, q_s, q_r)`` stored column-major where the run is
    placed); a step reads the matrix ``A[(q_l, s)]`` of a basis state ``s`` as a view of its
    block and writes the split's factors back into blocks. The start is the product of basis
    ``states``, or symmetric ``sites`` with sites ``1..L-1`` right-canonical
    (``MPS.canonicalize(0)`` of a symmetric MPS)."""

    expm = staticmethod(expm_krylov)  #: the local exponential of time evolution

    def __init__(
        self,
        ws: Sequence[np.ndarray],
        w_charges: Sequence[np.ndarray],
        site_charges: Sequence[Sequence[int]],
        states: Sequence[int] | None,
        *,
        modulus: int = 0,
        sites: Sequence[SymmetricTensor] | None = None,
        placement: Any = None,
    ):
        self.placement = placement
        self.xp = np if placement is None or placement.device is None else cupy_module("the sector sweeps")
        self.L = len(ws)
        self.modulus = modulus
        self.q = [list(map(int, qs)) for qs in site_charges]
        self.dtype = np.result_type(*ws, np.float64)
        self._set_tables(ws, w_charges)
        self._sites: list[SymmetricTensor | None] = []  # None: held as the flat site only (``sites`` makes it)
        if sites is not None:  # a state in the sector, sites 1..L-1 right-canonical
            self.dtype = np.result_type(self.dtype, *(np.dtype(t.dtype.name) for t in sites))
        self.layout = SiteMatrices(U1() if modulus == 0 else Zn(modulus), modulus, self.dtype, self.xp, placement)
        if sites is not None:
            self.bonds = [bond_sectors(sites[0].legs[0])] + [bond_sectors(t.legs[2]) for t in sites]
            self.phys = [t.legs[1] for t in sites]
            for t in sites:
                keys = list(t.blocks)
                blocks = to_device([np.asarray(b).astype(self.dtype) for b in t.leaves], self.layout.placement)
                self._sites.append(self.layout.tensor(dict(zip(keys, blocks)), t.legs))
            (self.target,) = self.bonds[-1]
        else:  # product state in the sector
            self.phys = [phys_leg(self.layout.symmetry, self.q[i], i)[0] for i in range(self.L)]
            self.bonds: list[dict[int, int]] = [{0: 1}]
            ql = 0
            for i, s in enumerate(states):
                qr = self.norm(ql + self.q[i][s])
                self._sites.append(self._site(i, [((ql, s), self.xp.ones((1, 1), dtype=self.dtype))], {ql: 1}, {qr: 1}))
                self.bonds.append({qr: 1})
                ql = qr
            self.target = ql
        self._site_bytes: list[int | None] = [None] * self.L  # counted when asked (psi_bytes)
        self._flat: list[FlatSite | None] = [None] * self.L  # the sites as buffers (.sector_flat), on the host
        self._absorbed: dict[tuple[str, int], tuple[Env, dict[int, int], tuple[Env, PreparedRectangles], int]] = {}
        self._absorbed_bytes = 0
        one = self.xp.ones((1, 1), dtype=self.dtype)
        self.envs: EnvCache[Env] = EnvCache(self.L, [{0: one}], [{self.target: one}], _env_bytes)
        for i in range(self.L - 1, 0, -1):
            self.envs.set_right(i, self._right_env(i))
        self._bond: tuple | None = None  # TDVP: (blocks, far environment, pieces of the old bond)

    def _set_tables(self, ws: Sequence[np.ndarray], w_charges: Sequence[np.ndarray]) -> None:
        """The MPO and its nonzero entries per site: by right state (for ``LW``) and by left
        state (for ``WR``)."""
        self.c = [[int(x) for x in c] for c in w_charges]  # bonds 0..L
        self.lw_groups, self.wr_groups = [], []
        for i, w in enumerate(ws):
            lw_groups, wr_groups = self._groups(i, np.asarray(w))
            self.lw_groups.append(lw_groups)
            self.wr_groups.append(wr_groups)
        self.ws = [np.asarray(w) for w in ws]
        self._plans: dict = {}  # absorb plans (of the old MPO tensors)
        self._absorbed = {}  # built from the old MPO tensors
        self._absorbed_bytes = 0

    def _groups(self, i: int, w: np.ndarray) -> tuple[list, list]:
        """Site ``i``'s MPO entries grouped for :func:`.sector_absorb.absorb_mpo`: by right state
        (``LW``'s environment states are the left ones, bond ``i``) and by left state (``WR``'s).
        Made once per distinct tensor, charges and modulus (:data:`_GROUPS`): the bulk sites of a
        chain share one MPO tensor, and the absorb plans know the groups by identity."""
        ci, cj, qi = self.c[i], self.c[i + 1], self.q[i]
        key = (w.shape, w.dtype.str, w.tobytes(), tuple(ci), tuple(cj), tuple(qi), self.norm(-1))
        held = _GROUPS.get(key)
        if held is not None:
            return held
        br: dict[int, list] = {}
        bl: dict[int, list] = {}
        for a, s, t, b in zip(*np.nonzero(w)):
            if cj[b] != self.norm(int(ci[a]) + qi[s] - qi[t]):
                continue  # rounding left by the MPO compression (below the charge check's tolerance)
            v = w[a, s, t, b]
            br.setdefault(int(b), []).append((int(a), int(s), int(t), v))
            bl.setdefault(int(a), []).append((int(b), int(s), int(t), v))
        if len(_GROUPS) >= MAX_PLANS:
            _GROUPS.clear()
        held = _GROUPS[key] = (absorb_groups(br, ci, self.norm), absorb_groups(bl, cj, self.norm))
        return held

    def set_operator(self, ws: Sequence[np.ndarray], w_charges: Sequence[np.ndarray] | None = None) -> None:
        """Use the MPO ``ws`` (bond-state charges ``w_charges``) from now on, the state kept: a
        time-dependent Hamiltonian. The right environments are rebuilt (centre at site 0)."""
        if w_charges is None:
            raise ValueError("SectorBackend.set_operator: a conserved run's MPO needs its bond charges (w_charges)")
        self._set_tables(ws, w_charges)
        self.promote(np.result_type(*ws))
        self._rebuild_envs()

    # ---- the sites (read, written, made flat and back: .sector_sides) ------------------
    def host_sites(self) -> list[SymmetricTensor]:
        """The sites on the host (copied from the device where they live there)."""
        return list(self.sites) if self.xp is np else [self.layout.host(t) for t in self.sites]

    def _rebuild_envs(self) -> None:
        self._absorbed = {}
        self._absorbed_bytes = 0
        one = self.xp.ones((1, 1), dtype=self.dtype)
        self.envs = EnvCache(self.L, [{0: one}], [{self.target: one}], _env_bytes)
        for i in range(self.L - 1, 0, -1):
            self.envs.set_right(i, self._right_env(i))

    def norm(self, c: int) -> int:
        return c % self.modulus if self.modulus else c

    # ---- environments ----------------------------------------------------------------
    def _right_env(self, j: int) -> Env:
        """``R_j`` from ``R_{j+1}`` and the right-canonical site ``j`` (its ``WR`` sandwiched
        between the site's column matrices)."""
        cols = self._cols(j)
        charges = [m for m in cols.size if self.bonds[j].get(m)]
        vs = dict(zip(charges, self._col_matrices(j, cols, charges)))
        return sandwich(
            self._wr(j, cols)[0],
            {m: v.conj() if v.dtype.kind == "c" else v for m, v in vs.items()},
            {m: v.T for m, v in vs.items()},
            self.c[j],
            self.norm,
        )

    def _lw(self, i: int, rows: Pieces) -> tuple[Env, PreparedRectangles]:
        """``LW[w][m] = sum L_i[w0] W_i[w0, s1, s1', w]`` as (rows m) x (rows m - c_w), and the
        rectangles of each block that are not zero (:func:`._sector_absorb.absorb_mpo`, prepared
        by :class:`._sector_operator.PreparedRectangles`)."""
        env = self.envs.left(i)
        return self._reused(
            "left",
            i,
            env,
            self.bonds[i],
            lambda: _prepared(
                absorb_mpo(
                    env, self.lw_groups[i], self.c[i + 1], rows, _row_key, self.norm, self.xp, self.dtype, self._plans
                ),
                False,
            ),
        )

    def _wr(self, j: int, cols: Pieces) -> tuple[Env, PreparedRectangles]:
        """``WR[w][m] = sum W_j[w, s2, s2', w2] R_{j+1}[w2]`` as (cols m) x (cols m - c_w), and
        the rectangles of each block that are not zero."""
        env = self.envs.right(j + 1)
        return self._reused(
            "right",
            j,
            env,
            self.bonds[j + 1],
            lambda: _prepared(
                absorb_mpo(
                    env, self.wr_groups[j], self.c[j], cols, _col_key, self.norm, self.xp, self.dtype, self._plans
                ),
                True,
            ),
        )

    def _reused(
        self, side: str, i: int, env: Env, bond: dict[int, int], build: Callable[[], tuple[Env, PreparedRectangles]]
    ) -> tuple[Env, PreparedRectangles]:
        """Site ``i``'s absorbed environment on ``side``, as kept when its environment ``env``
        and outer ``bond`` are still the ones it was built from (see ``ABSORBED_CACHE_BYTES``),
        else built and kept while the budget allows (the entries of environments no longer held
        are dropped where the environments change: :meth:`_drop_absorbed`)."""
        held = self._absorbed.get((side, i))
        if held is not None and held[0] is env and held[1] == bond:
            return held[2]
        out = build()
        nbytes = _env_bytes(out[0])
        if held is not None:
            del self._absorbed[(side, i)]
            self._absorbed_bytes -= held[3]
        if self._absorbed_bytes + nbytes <= ABSORBED_CACHE_BYTES:
            self._absorbed[(side, i)] = (env, dict(bond), out, nbytes)
            self._absorbed_bytes += nbytes
        return out

    # ---- the sweep's protocol --------------------------------------------------------
    def local_problem(self, step: Step) -> SectorLocal:
        b = step.bond
        fl = step.n_sites == 2 or step.direction == RIGHT  # the left side is site b-1 with its left bond
        fr = step.n_sites == 2 or step.direction == LEFT  # the right side is site b with its right bond
        rows = self._rows(b - 1) if fl else self._bare(b)
        cols = self._cols(b) if fr else self._bare(b)
        sectors = [m for m in rows.size if m in cols.size]
        lw, lw_regions = self._lw(b - 1, rows) if fl else (self.envs.left(b), None)
        wr, wr_regions = self._wr(b, cols) if fr else (self.envs.right(b), None)
        op = SectorOperator(
            lw, wr, self.c[b], sectors, rows, cols, self.dtype, self.norm, regions=(lw_regions, wr_regions)
        )

        def start() -> np.ndarray:
            if fl and fr:
                xs = [
                    r @ c
                    for r, c in zip(self._row_matrices(b - 1, rows, sectors), self._col_matrices(b, cols, sectors))
                ]
            elif fl:
                xs = self._row_matrices(b - 1, rows, sectors)
            else:
                xs = self._col_matrices(b, cols, sectors)
            return np.concatenate([x.reshape(-1) for x in xs]) if xs else self.xp.zeros(0, self.dtype)

        return SectorLocal(step, op, start, rows, cols, (fl, fr), lw, wr, like=self.xp.zeros(0, self.dtype))

    def split(
        self,
        local: SectorLocal,
        v: np.ndarray,
        *,
        alpha: float,
        max_bond: int,
        cutoff: float,
        keep_bond: bool = False,
        level: Sequence[np.ndarray] = (),
    ) -> tuple[int, float]:
        """One SVD per sector of the cut, one truncation across all of them; the weights move
        with the centre, a bare side's factor merges into the next site (with ``keep_bond``, as
        one-site TDVP needs, it is kept for :meth:`backward_problem` instead). ``level``: the rest
        of a degenerate lowest level (``eigensolver.dense_lowest_level``), whose vectors join
        ``v``'s blocks as the expansion terms do: the basis kept is that of the level's equal
        mixture, the state stays ``v``."""
        step, rows, cols = local.step, local.rows, local.cols
        (fl, fr), b, sectors = local.fused, step.bond, local.op.sectors
        blocks = local.op.views(v)
        for x in level:  # [X[m], X'[m]] (moving right; stacked below moving left), as _expanded
            axis = 1 if step.direction == RIGHT else 0
            blocks = [np.concatenate([a, c], axis=axis) for a, c in zip(blocks, local.op.views(x))]
        if alpha > 0.0:
            sectors, blocks = self._expanded(local, blocks, alpha)
        kept, err = svd_sectors(dict(zip(sectors, blocks)), max_bond, cutoff, to_right=step.direction == RIGHT)
        new_bond: dict[int, int] = {}
        lf: dict[int, np.ndarray] = {}
        rf: dict[int, np.ndarray] = {}
        for m, (u, s, vh) in sorted(kept.items()):
            lf[m], rf[m] = absorb(u, s, vh, step.direction)
            local.basis[m] = u if step.direction == RIGHT else vh.T
            new_bond[m] = len(s)
        # the left factor: site b-1's blocks, or merged into them; the same on the right
        if keep_bond and not (fl and fr):  # the bare side's factor, its far environment, the old bond
            self._bond = (lf, self.envs.left(b), rows) if not fl else (rf, self.envs.right(b), cols)
        if fl:  # sectors that only the expansion brought hold no part of the state (X[m] empty)
            self._write_factor(b - 1, lf, rows, self.bonds[b - 1], new_bond, rowwise=True)
        elif not keep_bond:
            self._merge_left(b - 1, lf)
        if fr:
            self._write_factor(b, rf, cols, new_bond, self.bonds[b + 1], rowwise=False)
        elif not keep_bond:
            self._merge_right(b, rf)
        self.bonds[b] = new_bond
        return sum(new_bond.values()), float(err)

    def _write_factor(
        self,
        i: int,
        fac: dict[int, np.ndarray],
        pieces: Pieces,
        left: dict[int, int],
        right: dict[int, int],
        *,
        rowwise: bool,
    ) -> None:
        """Site ``i`` from a split's factor on a fused side (``rowwise``: the left factor, else the
        right one): a small site on the host as a buffer, one gather (:mod:`.sector_flat`), else
        as blocks."""
        phys = self.phys[i]
        if self.xp is np and sum(x.size for x in fac.values()) <= FLAT_MAX_ENTRIES:
            legs = (self.layout.leg(left, False), phys, self.layout.leg(right, True))
            self._set_flat(i, (write_rows if rowwise else write_cols)(fac, pieces, phys, legs))
        else:
            build = self.layout.from_rows if rowwise else self.layout.from_cols
            self._set_site(i, build(fac, pieces.groups, left, phys, right))

    def _expanded(self, local: SectorLocal, xs: list[np.ndarray], alpha: float) -> tuple[list[int], list[np.ndarray]]:
        """The sectors of the cut and ``[X[m], alpha P[m]]`` (moving right; stacked below moving
        left) with the expansion terms ``P[m] = [LW[w][m] X[m - c_w]]_w`` (``[X[m - c_w]
        WR[w][m]^T]_w``): sectors that the bond lacks join with ``X[m]`` empty."""
        op, right = local.op, local.step.direction == RIGHT
        fused, absorbed = (local.rows, local.lw) if right else (local.cols, local.wr)
        sectors = list(op.sectors) + [m for m in fused.size if m not in op.index]
        parts: dict[int, list[np.ndarray]] = {m: [x] for m, x in zip(op.sectors, xs)}
        for m in sectors[len(op.sectors) :]:
            parts[m] = [self.xp.zeros((fused.size[m], 0) if right else (0, fused.size[m]), dtype=self.dtype)]
        for w, c in enumerate(op.c_mid):
            for m in sectors:
                kin = op.index.get(self.norm(m - c))
                blk = absorbed[w].get(m)
                if kin is not None and blk is not None:
                    parts[m].append(alpha * (blk @ xs[kin] if right else xs[kin] @ blk.T))
        blocks = [np.concatenate(parts[m], axis=1 if right else 0) for m in sectors]
        keep = [k for k, x in enumerate(blocks) if x.size]
        return [sectors[k] for k in keep], [blocks[k] for k in keep]

    def move(self, local: SectorLocal) -> None:
        """The environment of the side the centre left: its absorbed blocks sandwiched between
        the orthonormal factor (``U^dagger LW U`` moving right, ``conj(Vh) WR Vh^T`` moving left)."""
        step = local.step
        absorbed = local.lw if step.direction == RIGHT else local.wr
        basis = local.basis
        bra = {m: u.conj().T if u.dtype.kind == "c" else u.T for m, u in basis.items()}  # no copies of real ones
        env = sandwich(absorbed, bra, basis, self.c[step.bond], self.norm)
        self.envs.moved(step.direction, step.bond, env)
        self._drop_absorbed(step.bond)

    def _drop_absorbed(self, b: int) -> None:
        """The absorbed environments built from those a move across bond ``b`` replaced or
        dropped (``left(b)`` and ``right(b)``: the entries ``("left", b)`` and ``("right", b - 1)``),
        dropped (the only environments that change between rebuilds of them all)."""
        for key in (("left", b), ("right", b - 1)):
            held = self._absorbed.pop(key, None)
            if held is not None:
                self._absorbed_bytes -= held[3]

    # ---- TDVP's backward steps (see _sweep.Sweep.evolve) --------------------------------
    def backward_problem(self, step: Step) -> SectorLocal:
        """After ``split`` and ``move``: two-site steps give the arriving site's one-site
        problem, one-site steps the bond matrix kept by ``split(keep_bond=True)`` between the
        environments of its two sides."""
        if step.n_sites == 2:
            return self.local_problem(Step(step.arriving, step.direction, 1))
        assert self._bond is not None, "split(keep_bond=True) keeps the bond matrix first"
        blocks, far, old = self._bond
        b = step.bond
        new = self._bare(b)
        rows, cols = (new, old) if step.direction == RIGHT else (old, new)
        lw, wr = (self.envs.left(b), far) if step.direction == RIGHT else (far, self.envs.right(b))
        sectors = [m for m in rows.size if m in cols.size and m in blocks]
        op = SectorOperator(lw, wr, self.c[b], sectors, rows, cols, self.dtype, self.norm)
        v0 = np.concatenate([blocks[m].reshape(-1) for m in sectors]) if sectors else self.xp.zeros(0, self.dtype)
        return SectorLocal(step, op, lambda: v0, rows, cols, (False, False), lw, wr, kept=blocks, like=v0[:0])

    def set_local(self, local: SectorLocal, v: np.ndarray) -> None:
        """Write the evolved ``v`` back: a one-site problem's site blocks in place, a bond
        matrix merged into the arriving site."""
        xs = dict(zip(local.op.sectors, local.op.views(v.astype(self.dtype, copy=False))))
        fl, fr = local.fused
        b = local.step.bond
        if fl:
            self._set_site(
                b - 1,
                self.layout.from_rows(
                    xs,
                    local.rows.groups,
                    bond_sectors(self.site_tensor(b - 1).legs[0]),
                    self.phys[b - 1],
                    self.bonds[b],
                ),
            )
        elif fr:
            self._set_site(
                b,
                self.layout.from_cols(
                    xs, local.cols.groups, self.bonds[b], self.phys[b], bond_sectors(self.site_tensor(b).legs[2])
                ),
            )
        elif local.step.direction == RIGHT:
            self._merge_right(b, xs)
            self._bond = None
        else:
            self._merge_left(b - 1, xs)
            self._bond = None

    def site_problem(self, i: int) -> SectorLocal:
        """Site ``i`` (the centre) fused with its left bond, the right bond bare."""
        return self.local_problem(Step(i, RIGHT, 1))

    def promote(self, dtype: Any) -> None:
        """Hold the state and environments in ``dtype`` (real time needs complex)."""
        dtype = np.result_type(self.dtype, dtype)
        if dtype == self.dtype:
            return
        self.dtype = dtype
        self.layout.set_dtype(dtype)
        for i in range(self.L):
            self._map_blocks(i, lambda a: a.astype(dtype))
        self._rebuild_envs()

    def scale(self, c: Any) -> None:
        """Multiply the state by ``c`` (on the centre, site 0)."""
        self._map_blocks(0, lambda a: a * c)

    def state_norm(self) -> float:
        """The norm of the state (centre at site 0)."""
        return float(np.sqrt(self._norm2(0)))

    def normalize(self) -> None:
        norm = np.sqrt(self._norm2(0))
        self._map_blocks(0, lambda a: a / norm)

    def single_site(self) -> float:
        """A chain of one site: the lowest state of the target charge, exactly."""
        states = [s for s, q in enumerate(self.q[0]) if self.norm(q) == self.target]
        w = self.ws[0][0, :, :, 0][np.ix_(states, states)]
        e, v = np.linalg.eigh(0.5 * (w + w.conj().T))
        self._set_site(
            0,
            self._site(
                0,
                [((0, s), self.xp.full((1, 1), v[k, 0], dtype=self.dtype)) for k, s in enumerate(states)],
                {0: 1},
                {self.target: 1},
            ),
        )
        return float(e[0])

    def work_bytes(self, local: SectorLocal, matvecs: int) -> int:
        """The absorbed environments not kept for reuse (a bare side's is in the environment
        cache) and a few vectors of the eigensolver."""
        fl, fr = local.fused
        b = local.step.bond
        absorbed = [  # those kept are counted in env_bytes (each is kept under its own key only)
            env
            for fused, key, env in ((fl, ("left", b - 1), local.lw), (fr, ("right", b), local.wr))
            if fused and (self._absorbed.get(key) is None or self._absorbed[key][2][0] is not env)
        ]
        return sum(_env_bytes(env) for env in absorbed) + 6 * local.op.shape[0] * np.dtype(self.dtype).itemsize

    def env_bytes(self) -> int:
        return self.envs.nbytes() + self._absorbed_bytes

    def psi_bytes(self) -> int:
        for i, n in enumerate(self._site_bytes):
            if n is None:
                self._site_bytes[i] = self.layout.nbytes(self._sites[i])
        return sum(self._site_bytes)

    def bond_dims(self) -> list[int]:
        return [sum(b.values()) for b in self.bonds[1:-1]]

    def site_tensors(self, grading: Any = None) -> list[Any]:
        """The state as MPS sites: the run's ``SymmetricTensor`` sites, on the host."""
        return self.host_sites()

    def energy(self) -> float:
        """``<psi|H|psi> / <psi|psi>`` from the site-0 tensor and the right environment."""
        r0 = self._right_env(0)[0].get(0)
        norm2 = self._norm2(0)
        return float(np.real(r0[0, 0]) / norm2) if r0 is not None and norm2 > 0 else 0.0

    def dense_sites(self) -> list[np.ndarray]:
        """The site tensors ``(left, d, right)`` as dense NumPy arrays, bond indices ordered by charge."""
        return [self.dense_site(i) for i in range(self.L)]


def _prepared(absorbed: tuple[Env, list], transpose: bool) -> tuple[Env, PreparedRectangles]:
    """``absorb_mpo``'s blocks with their rectangles, prepared for the operators when they ask."""
    blocks, regions = absorbed
    return blocks, PreparedRectangles(blocks, regions, transpose)


def _row_key(q: int, s: int) -> tuple[int, int]:
    return (q, s)


def _col_key(q: int, s: int) -> tuple[int, int]:
    return (s, q)
