"""The charge sector of a dense DMRG run's final state: which charges declared by the local
space the Hamiltonian conserves, decided from the MPO itself (``[H, Q] = 0`` through the MPO
traces of :func:`~tensor4all.networks.mpo.hermiticity`, no dense matrix), and their values
in the state (``<Q>`` for a U(1) charge, the parity for a Z2 one), as
``DMRGResult.sector`` reports them."""

from __future__ import annotations

from typing import Any

import numpy as np

import tenferro as tf

from ..networks.environments import left_step
from ..networks.mpo import hermiticity
from ..networks.mps import MPS
from ..networks.symmetric_sites import Grading
from ..sites.charges import CONSERVED_CHARGES, PRODUCT_CHARGES, charge_label, declared_charges
from ..tools.device import array_module, to_device

__all__ = ["measured_sector", "sector_size", "grading_sector_size"]


#: largest ||[H, Q]||_F^2 / ||HQ||_F^2 for a conserved charge (the traces cancel to ~1e-15)
_CONSERVATION_TOL = 1e-12


def _charge_mpo(qs: list[np.ndarray]) -> list[np.ndarray]:
    """``Q = sum_i diag(q_i)`` as an MPO of bond dimension 2: ``[[1, q_i], [0, 1]]`` per site,
    the first row at the left end and the last column at the right end."""
    out = []
    for i, q in enumerate(qs):
        d = len(q)
        w = np.zeros((2, d, d, 2))
        w[0, :, :, 0] = w[1, :, :, 1] = np.eye(d)
        w[0, :, :, 1] = np.diag(q)
        if i == 0:
            w = w[:1]
        if i == len(qs) - 1:
            w = w[..., 1:]
        out.append(w)
    return out


def _parity_mpo(qs: list[np.ndarray]) -> list[np.ndarray]:
    """``P = prod_i diag((-1)^q_i)`` (a Z2 charge) as an MPO of bond dimension 1."""
    return [np.diag((-1.0) ** np.asarray(q)).reshape(1, len(q), len(q), 1) for q in qs]


def _conserves(ws: list[np.ndarray], wq: list[np.ndarray]) -> bool:
    """Whether the Hermitian MPO ``ws`` commutes with the real diagonal MPO ``wq`` (``Q``):
    the anti-Hermitian part of ``HQ`` is ``[H, Q] / 2`` since ``(HQ)^dagger = QH``, so
    :func:`hermiticity` of the product MPO measures ``||[H, Q]||_F^2 / ||HQ||_F^2`` through
    traces, with no dense matrix."""
    hq = []
    for w, q in zip(ws, wq):
        a, d, _, b = w.shape
        c, e = q.shape[0], q.shape[3]
        diag = np.einsum("cttd->ctd", q)  # Q is diagonal: (HQ)[s, t] = H[s, t] q[t]
        hq.append(np.einsum("astb,ctd->acstbd", w, diag).reshape(a * c, d, d, b * e))
    defect, _ = hermiticity(hq)
    return defect <= _CONSERVATION_TOL


def measured_sector(ws: list[np.ndarray], psi: list[np.ndarray], local: str | None) -> dict[str, float]:
    """The value in the state ``psi`` of each declared charge that ``H`` conserves, reported by
    :func:`charge_label` (``"2Sz"`` as ``"Sz"`` = value / 2): ``<sum_i q_i>`` for a U(1)
    charge, the parity ``(1 - <prod_i (-1)^q_i>) / 2`` for a Z2 one (modulus 2 in
    ``_sector_run``'s table, e.g. ``"parity"``); charges of other moduli are not checked."""
    moduli = {declared: modulus for declared, modulus in CONSERVED_CHARGES.values()}
    out: dict[str, float] = {}
    for name, qs in declared_charges(local, [w.shape[1] for w in ws]).items():
        if name in PRODUCT_CHARGES:  # reported part by part
            continue
        modulus = moduli.get(name, 0)
        if modulus not in (0, 2):
            continue
        wq = _charge_mpo(qs) if modulus == 0 else _parity_mpo(qs)
        if not _conserves(ws, wq):
            continue
        xp = array_module(psi[0])  # measured where the sweeps ran
        env = xp.ones((1, 1, 1), dtype=psi[0].dtype)
        nrm = xp.ones((1, 1), dtype=psi[0].dtype)
        for a, w in zip(psi, to_device([w.astype(psi[0].dtype) for w in wq], tf.placement_of(psi[0]))):
            env = left_step(env, a, w)
            nrm = np.tensordot(np.tensordot(nrm, a.conj(), axes=(0, 0)), a, axes=([0, 1], [0, 1]))
        value = float(env.reshape(-1)[0].real / nrm.reshape(-1)[0].real)
        if modulus == 2:
            value = (1.0 - value) / 2.0
        label, unit = charge_label(name)
        nearest = round(value)
        out[label] = (nearest if abs(value - nearest) <= 1e-8 else value) / unit + 0.0
    return out


def sector_size(state: MPS) -> int:
    """The number of basis states in the charge sector of a symmetric ``state`` (all of them for a
    dense one): a count over the sites of the basis charges' sums."""
    if not state.symmetric:
        return int(np.prod([float(d) for d in state.phys_dims]))
    return grading_sector_size(state._grading, state._group_charge)


def grading_sector_size(g: Grading, target: Any) -> int:
    """The number of basis states of the chain of grading ``g`` whose charges sum to ``target``."""
    counts: dict[int, int] = {g.symmetry.canonical(0): 1}
    for qs in g.q:
        nxt: dict[int, int] = {}
        for c, m in counts.items():
            for q in qs:
                key = g.symmetry.canonical(c + q)
                nxt[key] = nxt.get(key, 0) + m
        counts = nxt
    return counts.get(g.symmetry.canonical(target), 0)
