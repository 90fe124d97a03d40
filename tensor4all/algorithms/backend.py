"""The one sweep protocol and the one backend factory.

:class:`SweepBackend` lists everything the sweep engine (:class:`~.sweep.Sweep`: DMRG's
``sweep``, TDVP's ``evolve``) and the TDVP driver (:mod:`.tdvp`) call on the tensors of a
state; ``tests/tensor4all/test_sweep_protocol.py`` checks that every backend provides each
member and that the engine and TDVP touch nothing else. :func:`make_backend` picks the
backend for a state, for ``dmrg``, ``tdvp`` and every later sweep algorithm:

* :class:`~.dense_backend.DenseBackend`: NumPy (or CuPy) arrays;
* :class:`~.sector_backend.SectorBackend`: NumPy blocks per charge sector (a conserved run);
* :class:`~.traced_backend.TracedBackend`: tenferro tensors or tidu tracers (a differentiated
  evolution), with the differentiable Krylov exponential.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ..linalg.eigensolver import LocalOperator
from ..networks.symmetric_sites import canonical_sites
from ..tools.checks import any_traced
from .dense_backend import DenseBackend
from .schedule import Step
from .sector_backend import SectorBackend
from .traced_backend import TracedBackend

__all__ = ["LocalProblem", "SweepBackend", "SectorStart", "make_backend", "PROTOCOL"]


class LocalProblem(Protocol):
    """What a backend hands the loop for one step (it may carry more for its own split)."""

    step: Step
    op: LocalOperator  #: the effective Hamiltonian on flat vectors
    v0: Any  #: the flat start vector (the current local tensor; may be made when first read)
    # optional, ``like``: an empty array where the solution lives (its array module), for a solve
    # that needs no start vector (the exact one of a small problem): v0 is then never made


class SweepBackend(Protocol):
    """The tensor operations of the sweeps. Between sweeps and time steps the centre is at
    site 0.

    DMRG (:meth:`~.sweep.Sweep.sweep`): ``local_problem`` contracts the environments with the
    MPO (and the pair); ``split`` cuts the new local tensor at ``step.bond`` with the truncation
    (and the noise ``alpha`` of the basis; ``keep_bond``: one-site TDVP keeps a bond matrix
    aside; ``level``: the rest of a degenerate lowest level that the dense local solver found,
    non-empty only where the local operator gives its matrix, ``op.dense()``: the sector
    backend's), leaving the site the centre leaves orthonormal, and returns ``(bond dimension,
    discarded weight)``; ``move`` builds that site's environment block; ``normalize`` scales the
    centre to norm 1, ``energy`` measures there, ``single_site`` solves a chain of one site
    exactly; the ``*_bytes`` estimates feed the memory statistics.

    TDVP (:meth:`~.sweep.Sweep.evolve` and :mod:`.tdvp`): ``expm`` is the local exponential for
    the backend's tensors; ``backward_problem`` (the centre's new site or bond matrix),
    ``site_problem`` and ``set_local`` evolve single pieces; ``promote`` holds the state in a
    wider dtype (complex for real time), ``set_operator`` swaps the MPO (a time-dependent
    Hamiltonian; ``w_charges`` for a conserved run), ``scale`` and ``state_norm`` keep the norm,
    and ``site_tensors`` gives the state back as MPS sites (``grading``: a conserved run's).

    Sweeps orthogonal to earlier states (:mod:`.orthogonal`): ``dense_site`` is a site as a dense
    array ``(left, d, right)``, ``flat_local`` turns a dense local tensor into the layout of a
    local problem's flat vectors."""

    L: int
    expm: Callable[..., Any]

    def local_problem(self, step: Step) -> LocalProblem: ...

    def split(
        self,
        local: Any,
        v: Any,
        *,
        alpha: float,
        max_bond: int,
        cutoff: float,
        keep_bond: bool = False,
        level: Sequence[np.ndarray] = (),
    ) -> tuple[int, float]: ...

    def move(self, local: Any) -> None: ...

    def normalize(self) -> None: ...

    def single_site(self) -> float: ...

    def energy(self) -> float: ...

    def bond_dims(self) -> list[int]: ...

    def work_bytes(self, local: Any, matvecs: int) -> int: ...

    def env_bytes(self) -> int: ...

    def psi_bytes(self) -> int: ...

    def backward_problem(self, step: Step) -> LocalProblem: ...

    def site_problem(self, i: int) -> LocalProblem: ...

    def set_local(self, local: Any, v: Any) -> None: ...

    def promote(self, dtype: Any) -> None: ...

    def set_operator(self, ws: Sequence[Any], w_charges: Sequence[np.ndarray] | None = None) -> None: ...

    def scale(self, c: Any) -> None: ...

    def state_norm(self) -> Any: ...

    def site_tensors(self, grading: Any = None) -> list[Any]: ...

    def dense_site(self, i: int) -> Any: ...

    def flat_local(self, local: Any, y: Any) -> Any: ...


#: the names of the protocol's members (what the tests compare the backends and callers with)
PROTOCOL = frozenset(n for n in vars(SweepBackend) if not n.startswith("_")) | set(SweepBackend.__annotations__)


@dataclass(frozen=True)
class SectorStart:
    """A conserved run's start: the MPO bond charges ``w_charges``, the basis charges ``q`` of
    every site, the charge ``modulus`` (0: U(1)), and either a product of basis ``states`` or
    the ``SymmetricTensor`` ``sites`` of a state in the sector (an MPS's sites: the backend
    sweeps over them as they are, in the one block-sparse format); ``centered``: those sites are
    already right-orthonormal from site 1 on (``MPS.center == 0``), so no QR sweep brings them
    there."""

    w_charges: Sequence[np.ndarray]
    q: Sequence[Sequence[int]]
    states: Sequence[int] | None = None
    sites: Sequence[Any] | None = None
    modulus: int = 0
    centered: bool = False


def make_backend(
    ws: Sequence[Any], psi: Sequence[Any] | None = None, *, sector: SectorStart | None = None, placement: Any = None
) -> SweepBackend:
    """The backend for the MPO ``ws`` and the state: a conserved run's blocks (``sector``), tidu
    tracers anywhere in ``ws`` or ``psi`` (the differentiable backend on tenferro tensors), else
    dense arrays ``psi`` (placed by ``placement``)."""
    if sector is not None:
        sites = sector.sites
        if sites is not None and not sector.centered:
            sites = canonical_sites(sites, 0)
        return SectorBackend(
            ws, sector.w_charges, sector.q, sector.states, modulus=sector.modulus, sites=sites, placement=placement
        )
    if psi is None:
        raise ValueError("make_backend: a dense or traced run needs the start state psi")
    if any_traced(list(ws)) or any_traced(list(psi)):
        return TracedBackend(ws, psi)
    return DenseBackend(list(ws), list(psi), placement)
