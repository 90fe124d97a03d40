"""The measurements ``tensor4all dmrg`` reports for the fermion models (:mod:`tensor4all.measurements`):
the density profile, the double occupancy (hubbard), the spin and connected charge correlations
on the nearest-neighbour bonds of the lattice (their means: "at distance 1") and the
entanglement per charge sector at the middle bond (conserved runs). :func:`measure` computes
them, :func:`summary_lines` writes the text report and :func:`as_json` the JSON object
``measurements`` (documented in the README, "Run a simulation")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import measurements
from ..networks.mps import MPS

__all__ = ["FermionMeasurements", "measure", "summary_lines", "as_json"]

#: sectors of the entanglement line of the text report: the most probable, at most this many
_SHOWN_SECTORS = 6
#: values per line of a printed profile
_PER_LINE = 10


@dataclass
class FermionMeasurements:
    """What :func:`measure` found (None where it does not apply)."""

    density: np.ndarray
    double_occupancy: np.ndarray | None
    bonds: list[tuple[int, int]]
    spin: np.ndarray | None
    charge: np.ndarray
    bond: int
    sectors: list[tuple[dict[str, float], measurements.SectorEntanglement]] | None


def _labels(sector: Any, names: Sequence[str]) -> dict[str, float]:
    """A key of :meth:`MPS.entanglement_spectrum` (``N`` or ``(N, Sz)``) as ``{"N": .., "Sz": ..}``."""
    values = sector if isinstance(sector, tuple) else (sector,)
    return {name: float(v) for name, v in zip(names, values)}


def measure(
    psi: MPS, model: str, local: str, bonds: Sequence[tuple[int, int]], charges: Sequence[str]
) -> FermionMeasurements:
    """The measurements of a fermion model's state: ``local`` its local space, ``bonds`` the
    lattice's nearest-neighbour bonds, ``charges`` the conserved charges' names (``("N", "Sz")``;
    empty for a dense run, which has no sectors)."""
    bonds = [(int(i), int(j)) for i, j in bonds]
    mid = (psi.L - 1) // 2
    sectors = None
    if psi.symmetric and charges:
        per = measurements.entanglement_per_sector(psi, mid)
        sectors = sorted(((_labels(q, charges), x) for q, x in per.items()), key=lambda kv: -kv[1].probability)
    density = measurements.density(psi, local=local)
    return FermionMeasurements(
        density=density,
        double_occupancy=measurements.double_occupancy(psi, local=local) if model == "hubbard" else None,
        bonds=bonds,
        spin=measurements.spin_correlation(psi, pairs=bonds, local=local) if model != "spinless" else None,
        charge=measurements.charge_correlation(psi, pairs=bonds, local=local, density=density),
        bond=mid,
        sectors=sectors,
    )


def _profile(values: np.ndarray) -> list[str]:
    rows = []
    for k in range(0, len(values), _PER_LINE):
        rows.append(" ".join(f"{v:.4f}" for v in values[k : k + _PER_LINE]))
    return rows


def _sector_text(sector: dict[str, float]) -> str:
    return ",".join(f"{k}={v:g}" for k, v in sector.items())


def summary_lines(m: FermionMeasurements) -> list[str]:
    """The text report, one line per measurement (profiles wrapped at 10 sites)."""
    out = []
    n = m.density
    out.append(
        f"density     mean {n.mean():.6f} (total {n.sum():.6f}), min {n.min():.6f}, max {n.max():.6f}; <n_i> by site:"
    )
    out += [f"              {row}" for row in _profile(n)]
    if m.double_occupancy is not None:
        d = m.double_occupancy
        out.append(f"double occ  mean {d.mean():.6f}; <n_up n_dn>_i by site:")
        out += [f"              {row}" for row in _profile(d)]
    if m.bonds:
        spin = f"<S_i.S_j> = {m.spin.mean():.6f}, " if m.spin is not None else ""
        out.append(
            f"nearest     {spin}<n_i n_j> - <n_i><n_j> = {m.charge.mean():.6f}   (means over the "
            f"{len(m.bonds)} nearest-neighbour bonds)"
        )
    if m.sectors is not None:
        shown = m.sectors[:_SHOWN_SECTORS]
        text = "; ".join(f"{_sector_text(q)}: p {x.probability:.4f} S {x.entropy:.4f}" for q, x in shown)
        out.append(
            f"sectors     bond {m.bond}: {text}   (the {len(shown)} most probable of {len(m.sectors)}; "
            "p: probability, S: share of the entropy)"
        )
    return out


def as_json(m: FermionMeasurements) -> dict[str, Any]:
    """The JSON object ``measurements`` (plain Python numbers and lists)."""
    return {
        "density": [float(v) for v in m.density],
        "double_occupancy": None if m.double_occupancy is None else [float(v) for v in m.double_occupancy],
        "nearest_bonds": [list(b) for b in m.bonds],
        "spin_correlation": None if m.spin is None else [float(v) for v in m.spin],
        "spin_correlation_mean": None if m.spin is None or not m.bonds else float(m.spin.mean()),
        "charge_correlation": [float(v) for v in m.charge],
        "charge_correlation_mean": float(m.charge.mean()) if m.bonds else None,
        "entanglement_per_sector": None
        if m.sectors is None
        else {
            "bond": m.bond,
            "sectors": [{"sector": q, "probability": x.probability, "entropy": x.entropy} for q, x in m.sectors],
        },
    }
