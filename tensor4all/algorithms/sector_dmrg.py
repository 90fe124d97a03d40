"""Two-site (and one-site) DMRG in one charge sector of an abelian symmetry:
:class:`SectorEngine` is the sweep of :mod:`._sweep` over the charge-sector backend of
:mod:`._sector_backend` (whose docstring describes the blocks, the local products and the
split); and :func:`sector_product_state`, a start state in a sector.

This engine knows nothing of tenferro; ``_dmrg`` converts at the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..sites.charges import unpack
from .dense_backend import DenseBackend
from .backend import SectorStart, make_backend
from .sector_backend import SectorBackend
from .sweep import MAX_ITER, BondUpdate, Sweep, SweepStats

__all__ = ["SectorEngine", "SectorSweepStats", "sector_product_state", "suffix_totals"]


@dataclass
class SectorSweepStats(SweepStats):
    """The dense engine's ``SweepStats`` and the number of sectors at the middle bond."""

    blocks_mid: int = 0


def sector_product_state(
    site_charges: Sequence[Sequence[int]], target: int, modulus: int = 0, parts: int = 1
) -> list[int]:
    """Basis states, one per site, whose charges sum to ``target``, spread evenly along
    the chain (the running charge follows ``target * (i + 1) / L``; for a product charge of
    ``parts`` packed parts, part by part in order: ``N`` first, then ``Sz``, which gives the
    Neel state ``up, dn, up, ...`` at half filling). Raises ValueError when no choice of
    states reaches ``target``."""
    L = len(site_charges)
    if parts > 1:
        return _product_charge_state(site_charges, target, parts)
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
            if lo[i + 1] <= rest <= hi[i + 1] and _reachable(site_charges[i + 1 :], rest):
                best = s
                break
        if best is None:
            raise ValueError(f"no basis states reach the total charge {target}")
        states.append(best)
        total += qs[best]
    return states


def suffix_totals(site_charges: Sequence[Sequence[int]]) -> list[set[int]]:
    """``R[i]``: the total charges that sites ``i..L-1`` reach (``R[L] = {0}``); U(1) charges,
    packed products included (their sums are the packed sums)."""
    totals = [{0}]
    for qs in reversed(site_charges):
        totals.append({a + b for a in set(qs) for b in totals[-1]})
    return totals[::-1]


def _product_charge_state(site_charges: Sequence[Sequence[int]], target: int, parts: int) -> list[int]:
    reach = suffix_totals(site_charges)
    if target not in reach[0]:
        raise ValueError(f"no basis states reach the total charge {unpack(target, parts)}")
    L = len(site_charges)
    goal = unpack(target, parts)
    states, total = [], 0
    for i, qs in enumerate(site_charges):
        want = [g * (i + 1) / L for g in goal]
        options = [s for s, q in enumerate(qs) if target - total - q in reach[i + 1]]
        best = min(options, key=lambda s: tuple(abs(a - w) for a, w in zip(unpack(total + qs[s], parts), want)))
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


class SectorEngine(Sweep):
    """A DMRG run in one charge sector (centre at site 0 between sweeps): :class:`Sweep` over
    a :class:`~._sector_backend.SectorBackend`.

    The start is the product of basis ``states``, or the ``SymmetricTensor`` ``sites`` of a
    state in the sector (:class:`~.backend.SectorStart`)."""

    backend: SectorBackend

    def __init__(
        self,
        ws: Sequence[np.ndarray],
        w_charges: Sequence[np.ndarray],
        site_charges: Sequence[Sequence[int]],
        states: Sequence[int] | None,
        solver: Callable,
        *,
        modulus: int = 0,
        max_iter: int = MAX_ITER,
        seed: int | None = 0,
        sites: Sequence[Any] | None = None,
        centered: bool = False,
        placement: Any = None,
    ):
        start = SectorStart(w_charges, site_charges, states, sites, modulus, centered)
        super().__init__(make_backend(ws, sector=start, placement=placement), solver, max_iter=max_iter, seed=seed)

    def sweep(
        self,
        *,
        two_site: bool = True,
        max_bond: int,
        cutoff: float,
        tol: float,
        alpha: float = 0.0,
        sweep_no: int,
        progress: Callable[[BondUpdate], Any] | None = None,
        state_tol: Callable[[float], float] | None = None,
        discarded: float = 0.0,
        max_iter: int | None = None,
    ) -> SectorSweepStats:
        """One sweep (the dense ``SweepEngine.sweep``). ``alpha > 0`` adds a random component of
        relative norm ``alpha`` to each eigensolver start vector (within the sector: the
        perturbation that lets the dense engine leave a sector is not needed) and the subspace
        expansion that lets the bonds grow (one-site sweeps; in two-site sweeps White's
        density-matrix perturbation, see :mod:`._sector_backend`)."""
        st = super().sweep(
            two_site=two_site,
            max_bond=max_bond,
            cutoff=cutoff,
            tol=tol,
            alpha=alpha,
            sweep_no=sweep_no,
            progress=progress,
            state_tol=state_tol,
            discarded=discarded,
            max_iter=max_iter,
        )
        return SectorSweepStats(**vars(st), blocks_mid=len(self.backend.bonds[self.L // 2]))

    # ---- the state ---------------------------------------------------------------------
    @property
    def bonds(self) -> list[dict[int, int]]:
        return self.backend.bonds

    @property
    def sites(self) -> list[dict[tuple[int, int], np.ndarray]]:
        return self.backend.sites

    @property
    def q(self) -> list[list[int]]:
        return self.backend.q

    @property
    def target(self) -> int:
        return self.backend.target

    @property
    def modulus(self) -> int:
        return self.backend.modulus

    @property
    def dtype(self) -> np.dtype:
        return self.backend.dtype

    @property
    def ws(self) -> list[np.ndarray]:
        return self.backend.ws

    def norm(self, c: int) -> int:
        return self.backend.norm(c)

    @property
    def psi(self) -> list[np.ndarray]:
        """The site tensors as dense arrays (the dense engine's ``psi``)."""
        return self.backend.dense_sites()

    def dense_sites(self) -> list[np.ndarray]:
        """The site tensors ``(left, d, right)`` as dense arrays, bond indices ordered by charge."""
        return self.backend.dense_sites()

    def operator_gradients(self) -> list[np.ndarray]:
        """``dE/dW_i`` (Hellmann-Feynman) of the current state, by the dense backend's one pass
        over environments built from the dense site tensors."""
        return DenseBackend(self.ws, self.dense_sites()).operator_gradients()
