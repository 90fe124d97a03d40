"""What ``dmrg`` returns: :class:`DMRGResult` (energy, state, variance, convergence, the
charge sector of the final state) and its history, one :class:`SweepRecord` per sweep with
what users compare across codes (energy, its change, the largest bond and truncation error,
eigensolver products, time, memory) and the settings of that sweep."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..networks.mps import MPS

__all__ = ["SweepRecord", "DMRGResult"]


@dataclass
class SweepRecord:
    """One sweep of the history: what users compare across codes."""

    sweep: int  #: 1-based sweep number
    energy: float  #: <psi|H|psi> of the normalized state after the sweep
    delta_energy: float  #: energy - previous sweep's energy (nan for the first)
    max_bond: int  #: largest bond dimension after the sweep
    max_truncation_error: float  #: largest relative discarded weight of the sweep
    matvecs: int  #: effective-Hamiltonian products in the local eigensolver
    seconds: float  #: wall time of the sweep
    peak_memory: int  #: peak bytes of environments + MPS + eigensolver workspace
    env_memory: int = 0  #: peak bytes of the environment cache alone
    max_bond_limit: int = 0  #: the max_bond setting of this sweep
    cutoff: float = 0.0  #: the cutoff setting of this sweep
    noise: float = 0.0  #: the noise (perturbation strength) of this sweep
    blocks: int | None = None  #: charge sectors at the middle bond (conserved runs; None: dense)
    exact_solves: int = 0  #: local problems solved exactly (their dense matrix, no products: ``matvecs`` counts none)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DMRGResult:
    """``energy`` (a float, or a tidu tracer while differentiating), ``state`` (the
    normalized MPS), ``history`` (one :class:`SweepRecord` per sweep), ``variance``
    (``<H^2> - <H>^2`` of the final state; nan if not computed), ``converged``, and
    ``sector``: for each charge of the local space that the Hamiltonian conserves, its
    value ``<Q>`` in the final state (``{"Sz": 0.0}`` for the spin spaces' ``"2Sz"``,
    reported as ``Sz = <2Sz> / 2``; exact multiples of 1/2 when within 1e-8 of one);
    ``{}`` when no declared charge is conserved."""

    energy: Any
    state: MPS
    history: list[SweepRecord] = field(default_factory=list)
    variance: float = float("nan")
    converged: bool = False
    sector: dict[str, float] = field(default_factory=dict)

    def __iter__(self):  # energy, state = dmrg(H)
        return iter((self.energy, self.state))
