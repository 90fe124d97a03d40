"""The records the thermal functions return: :class:`ThermalResult` (purification along a beta
grid), :class:`Thermodynamics` (derivatives of ``ln Z``) and :class:`MettsResult` (METTS samples
and their statistics). Plain values; ``as_dict()`` gives JSON-ready lists."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..algorithms.evolution import EvolutionRecord
from ..networks.mps import MPS

__all__ = ["ThermalResult", "Thermodynamics", "MettsResult", "MettsSample"]


def _plain(v: Any) -> Any:
    a = np.asarray(v)
    if np.iscomplexobj(a):
        return np.stack([a.real, a.imag], axis=-1).tolist()
    return a.tolist()


@dataclass
class ThermalResult:
    """A purification cooled from ``beta = 0``: ``betas`` (the output inverse temperatures, from
    0), ``log_z`` (``ln Z`` there, from the norms), ``energy`` (``<H>``), ``observables`` (name ->
    values over ``betas``, first axis beta), ``state`` (the purification at the last beta, on the
    doubled sites, normalized), ``log_states`` (``ln Tr 1``: ``L ln d``, or the log of the number
    of states of the ``sector``), ``sector`` (the physical sector of a canonical ensemble, or None),
    ``conserve`` (the doubled charge the run conserved, or None), ``method`` and ``history`` (one
    record per step, ``norm`` the factor ``||e^{-dbeta H/2} psi||`` of that step)."""

    betas: np.ndarray
    log_z: np.ndarray
    energy: np.ndarray
    observables: dict[str, Any]
    state: MPS
    log_states: float
    sector: Any = None
    conserve: str | None = None
    method: str = "tebd"
    history: list[EvolutionRecord] = field(default_factory=list)

    @property
    def free_energy(self) -> np.ndarray:
        """``F = -ln Z / beta`` at the output betas (``nan`` at ``beta = 0``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.betas > 0, -self.log_z / np.where(self.betas > 0, self.betas, 1.0), np.nan)

    @property
    def entropy(self) -> np.ndarray:
        """The thermal entropy ``S = ln Z + beta E``."""
        return self.log_z + self.betas * self.energy

    def as_dict(self) -> dict[str, Any]:
        return {
            "betas": _plain(self.betas),
            "log_z": _plain(self.log_z),
            "energy": _plain(self.energy),
            "observables": {k: _plain(v) for k, v in self.observables.items()},
            "log_states": float(self.log_states),
            "sector": self.sector,
            "conserve": self.conserve,
            "method": self.method,
            "history": [r.as_dict() for r in self.history],
        }


@dataclass
class Thermodynamics:
    """``ln Z``, the energy and the derivatives at ``betas``, from tidu's derivatives through the
    cooling (whole systems, not per site): with ``differentiate="energy"`` the measured ``energy =
    <H>``, ``specific_heat = -beta^2 dE/d beta`` and, with a field ``h`` coupled as ``-h sum_i O_i``,
    the measured ``magnetization = <sum_i O_i>`` and ``susceptibility = d<M>/dh``; with
    ``"log_z"`` ``energy = -d ln Z / d beta``, ``specific_heat = beta^2 d^2 ln Z / d beta^2``,
    ``magnetization = (1/beta) d ln Z / dh`` and ``susceptibility = (1/beta) d^2 ln Z / dh^2``
    (None without a field). ``mode``: ``"forward"`` or ``"reverse"``; ``engine``: the run that carried
    the derivatives, ``"tangent"`` or ``"traced"`` (``thermodynamics(engine=...)``)."""

    betas: np.ndarray
    log_z: np.ndarray
    energy: np.ndarray
    specific_heat: np.ndarray
    magnetization: np.ndarray | None = None
    susceptibility: np.ndarray | None = None
    field_operator: str | None = None
    mode: str = "forward"
    differentiate: str = "energy"
    engine: str = "traced"

    def as_dict(self) -> dict[str, Any]:
        out = {k: _plain(getattr(self, k)) for k in ("betas", "log_z", "energy", "specific_heat")}
        for k in ("magnetization", "susceptibility"):
            v = getattr(self, k)
            out[k] = None if v is None else _plain(v)
        out["field_operator"], out["mode"], out["differentiate"] = self.field_operator, self.mode, self.differentiate
        out["engine"] = self.engine
        return out


@dataclass
class MettsSample:
    """One METTS step of one chain: its ``chain``, ``step`` (0-based, after the warm-up),
    ``energy`` (of the typical state), ``observables`` (name -> value), the ``basis`` the
    collapse used (``"z"`` or ``"x"``) and the product state it drew (local basis indices)."""

    chain: int
    step: int
    energy: float
    observables: dict[str, Any]
    basis: str
    collapsed: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "chain": self.chain,
            "step": self.step,
            "energy": self.energy,
            "observables": {k: _plain(v) for k, v in self.observables.items()},
            "basis": self.basis,
            "collapsed": list(self.collapsed),
        }


@dataclass
class MettsResult:
    """METTS samples (:class:`MettsSample`, chains in order) and their statistics at ``beta``:
    ``energy`` (the mean) and ``energy_error`` (the standard error from the chain means, each
    chain's samples averaged first so that correlations within a chain do not shrink it; with
    one chain, the naive standard error of its samples)."""

    beta: float
    samples: list[MettsSample]
    energy: float
    energy_error: float
    observables: dict[str, Any]
    observable_errors: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "beta": self.beta,
            "energy": self.energy,
            "energy_error": self.energy_error,
            "observables": {k: _plain(v) for k, v in self.observables.items()},
            "observable_errors": {k: _plain(v) for k, v in self.observable_errors.items()},
            "samples": [s.as_dict() for s in self.samples],
        }
