"""Excited states and gaps: DMRG orthogonal to the states found before.

:func:`excited_states` finds the ``n`` lowest states of a Hamiltonian (of one charge sector with
``conserve``/``sector``) one after the other: state ``k`` is :func:`~.dmrg.dmrg` with
``orthogonal_to`` the states ``0..k-1``, every local eigenproblem restricted to the complement of
their local images (explicit projection, :mod:`.orthogonal`; no penalty weight to choose). It
reports the energies, each state's energy variance ``<H^2> - <H>^2`` (an eigenvalue lies within
``sqrt(variance)`` of each energy) and the overlaps between the returned states.

:func:`gap` is the lowest gap within a sector (the two lowest states of :func:`excited_states`) or
between the ground states of two sectors (``sectors=(a, b)``: e.g. the spin gap
``E(Sz = 1) - E(Sz = 0)``), with the variances that bound its error. Both are differentiable in
the couplings of ``H`` (Hellmann-Feynman on each state, the ``dmrg`` rule): ``tidu.grad`` of a gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..networks.mpo import MPO
from ..networks.mps import MPS, overlap
from ..networks.symmetric_sites import chain_grading, phys_leg, sector_charge
from ..tools.checks import check_positive_int, check_seed
from ..tools.errors import InvalidOptionError, NoOrthogonalStateError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .dmrg import dmrg
from .dmrg_charges import grading_sector_size, sector_size
from .dmrg_records import DMRGResult

__all__ = ["excited_states", "ExcitedStates", "excited_result", "gap", "Gap", "sector_size"]


@dataclass
class ExcitedStates:
    """The ``n`` lowest states found by :func:`excited_states`, lowest first: a sequence of
    :class:`DMRGResult` (``len``, indexing, iteration) with ``energies``, ``variances`` (each
    state's ``<H^2> - <H>^2``), ``gaps`` (``E_k - E_0``) and ``overlaps`` (``|<i|j>|`` between the
    normalized states; ones on the diagonal)."""

    results: list[DMRGResult]
    overlaps: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, k: int) -> DMRGResult:
        return self.results[k]

    def __iter__(self):
        return iter(self.results)

    @property
    def energies(self) -> list[Any]:
        return [r.energy for r in self.results]

    @property
    def variances(self) -> list[float]:
        return [r.variance for r in self.results]

    @property
    def states(self) -> list[MPS]:
        return [r.state for r in self.results]

    @property
    def gaps(self) -> list[Any]:
        return [e - self.results[0].energy for e in self.energies]

    @property
    def max_overlap(self) -> float:
        """The largest ``|<i|j>|`` between different states (0 for one state)."""
        off = self.overlaps - np.diag(np.diag(self.overlaps))
        return float(off.max()) if off.size else 0.0


@keyword_hints
def excited_states(
    H: MPO,
    n: int,
    *,
    psi0: MPS | Sequence[MPS] | None = None,
    conserve: str | None = None,
    sector: Any = None,
    max_bond: int | Sequence[int] = 64,
    sweeps: int = 10,
    cutoff: float | Sequence[float] = 1e-10,
    tol: float = 1e-10,
    two_site: bool = True,
    noise: float | Sequence[float] | None = None,
    seed: int | None = 0,
    eigensolver: str = "lanczos",
    threads: int | None = None,
    placement: Any = None,
    callback: Callable[[int, Any], Any] | None = None,
    progress: Any = None,
) -> ExcitedStates:
    """The ``n`` lowest eigenstates of the Hermitian MPO ``H`` (in one charge sector with
    ``conserve``/``sector``), each orthogonal to the ones before it.

    State ``k`` is ``dmrg(H, psi0[k], orthogonal_to=[states 0..k-1], ...)``: its sweeps solve each
    local eigenproblem in the complement of the earlier states' local images (explicit
    projection), so exactly degenerate levels come out as orthogonal states of the level. The
    options are :func:`~tensor4all.dmrg`'s, applied to every state; ``seed + k`` seeds state ``k`` (``None``: fresh entropy for each).

    Args:
        H: the Hamiltonian.
        n: how many states (at least 1; at most the dimension of the sector).
        psi0: start states: one MPS for every state, a list with one per state, or ``None``
            (random starts, as ``dmrg``'s).
        callback: called as ``callback(k, record)`` after each sweep of state ``k``.

    Returns:
        :class:`ExcitedStates` (a sequence of :class:`DMRGResult`, lowest first) with the
        energies, variances, gaps and the overlaps between the returned states.

    Raises:
        InvalidOptionError: ``n < 1`` or a ``psi0`` list of the wrong length.
        NoOrthogonalStateError: the sector holds fewer than ``n`` states (found from the ground state's
            sector, before any excited state is searched).
    """
    if not isinstance(H, MPO):
        raise Tensor4allTypeError(f"excited_states expects an MPO Hamiltonian, got {type(H).__name__}")
    n = check_positive_int(n, "excited_states: n", InvalidOptionError)
    seed = check_seed(seed, "excited_states: seed")
    if n > 1:
        _check_sites(H, "excited_states")
    starts = _starts(psi0, n)
    if callback is not None and not callable(callback):
        raise Tensor4allTypeError(f"excited_states: callback must be callable, got {type(callback).__name__}")
    opts = dict(
        max_bond=max_bond,
        sweeps=sweeps,
        cutoff=cutoff,
        tol=tol,
        two_site=two_site,
        noise=noise,
        eigensolver=eigensolver,
        threads=threads,
        conserve=conserve,
        sector=sector,
        placement=placement,
        progress=progress,
    )
    threads = check_threads(threads)
    known = _known_sector_size(H, conserve, sector, starts[0])
    if known is not None and n > known[0]:  # before any run (else after the ground state, below)
        _too_many(n, known[0], known[1])
    bonds = max_bond if isinstance(max_bond, (list, tuple)) else [max_bond]
    largest = max((b for b in bonds if isinstance(b, int)), default=None)  # (dmrg checks them)
    with blas_threads(threads, largest):  # the runs and the overlaps
        results: list[DMRGResult] = []
        for k in range(n):
            hook = None if callback is None else (lambda rec, k=k: callback(k, rec))
            res = dmrg(
                H,
                starts[k],
                seed=None if seed is None else seed + k,
                callback=hook,
                orthogonal_to=[r.state for r in results],
                **opts,
            )
            results.append(res)
            if k == 0:
                size = sector_size(res.state)
                if n > size:
                    # a dense run's ``sector`` holds measured values (<Sz> of the state), not a sector it kept
                    _too_many(n, size, f"the sector {res.state.sector}" if res.state.symmetric else None)
        return excited_result(results)


def _known_sector_size(H: MPO, conserve: Any, sector: Any, psi0: Any) -> tuple[int, str] | None:
    """``(states, "the sector {...}")`` of the sector the runs keep where it is known before any
    run: a symmetric start state's, or an explicit charge and sector; None where the runs decide."""
    if isinstance(psi0, MPS) and psi0.symmetric:
        return sector_size(psi0), f"the sector {psi0.sector}"
    if not isinstance(conserve, str) or conserve in ("auto", "none") or sector is None:
        return None
    g = chain_grading(conserve, H.local, list(H.phys_dims), "excited_states")
    legs = [phys_leg(g.symmetry, q, i)[0] for i, q in enumerate(g.q)]
    target = sector_charge(g, sector, legs, "excited_states: sector")
    return grading_sector_size(g, target), f"the sector {g.sector(target)}"


def _too_many(n: int, size: int, where: str | None) -> None:
    """:class:`NoOrthogonalStateError`: ``n`` states of a sector (None: the whole space) of ``size``."""
    where, more = (
        (where, " or choose a larger sector") if where else ("the whole space (the run kept no conserved charge)", "")
    )
    raise NoOrthogonalStateError(
        f"excited_states: {where} holds {size} states, fewer than n = {n}; ask for at most {size}{more}"
    )


def _check_sites(H: MPO, what: str) -> None:
    """States above the lowest are found by sweeps orthogonal to the lower ones, on two sites or
    more; a one-site ``H`` is a ``d x d`` matrix, whose levels its eigenvalues give."""
    if H.L < 2:
        raise InvalidOptionError(
            f"{what}: H has one site; excited states are found by sweeps over at least 2 sites "
            "(the levels of one site: numpy.linalg.eigvalsh(H.to_dense()))"
        )


def excited_result(results: list[DMRGResult]) -> ExcitedStates:
    """The record of states found one after the other (lowest first), with their overlaps."""
    return ExcitedStates(results, _overlaps([r.state for r in results]))


def _starts(psi0: Any, n: int) -> list[MPS | None]:
    if psi0 is None or isinstance(psi0, MPS):
        return [psi0] * n
    if isinstance(psi0, (list, tuple)):
        if len(psi0) != n:
            raise InvalidOptionError(
                f"excited_states: psi0 has {len(psi0)} start states for n = {n}; give one per state or one for all"
            )
        return list(psi0)
    raise Tensor4allTypeError(f"excited_states: psi0 must be an MPS, a list of MPS or None, got {type(psi0).__name__}")


def _overlaps(states: list[MPS]) -> np.ndarray:
    """``|<i|j>|`` of the normalized states."""
    k = len(states)
    norms = [float(s.norm()) for s in states]
    out = np.eye(k)
    for i in range(k):
        for j in range(i + 1, k):
            out[i, j] = out[j, i] = abs(complex(np.asarray(overlap(states[i], states[j])))) / (norms[i] * norms[j])
    return out


@dataclass
class Gap:
    """``value = E_upper - E_lower`` (differentiable when ``H`` is traced), the two energies, their
    variances and ``error``: ``sqrt(var_lower) + sqrt(var_upper)``, a bound on the distance of
    ``value`` from a difference of two eigenvalues (each energy lies within ``sqrt(variance)`` of
    one), and the two :class:`DMRGResult` s."""

    value: Any
    lower: DMRGResult
    upper: DMRGResult

    @property
    def energies(self) -> tuple[Any, Any]:
        return self.lower.energy, self.upper.energy

    @property
    def variances(self) -> tuple[float, float]:
        return self.lower.variance, self.upper.variance

    @property
    def error(self) -> float:
        return float(sum(np.sqrt(max(v, 0.0)) for v in self.variances))

    def __float__(self) -> float:
        return float(self.value)


@keyword_hints
def gap(
    H: MPO, *, conserve: str | None = None, sector: Any = None, sectors: Sequence[Any] | None = None, **options: Any
) -> Gap:
    """The lowest gap of ``H``: within one sector (``sector``, or the whole space without
    ``conserve``), the two lowest states of :func:`excited_states`; between two sectors
    (``sectors=(a, b)`` with ``conserve``), ``E_0(b) - E_0(a)`` of their ground states (the spin gap
    ``gap(H, conserve="Sz", sectors=(0, 1))``).

    ``options`` are :func:`excited_states`'s (``max_bond``, ``sweeps``, ``cutoff``, ...). The value
    is differentiable in the couplings of ``H`` (``tidu.grad``: Hellmann-Feynman on both states).
    """
    if sectors is None:
        if isinstance(H, MPO):
            _check_sites(H, "gap")
        states = excited_states(H, 2, conserve=conserve, sector=sector, **options)
        return Gap(states[1].energy - states[0].energy, states[0], states[1])
    if sector is not None:
        raise InvalidOptionError("gap: give sector= (a gap within it) or sectors=(a, b) (between two), not both")
    if conserve is None and H.conserve is None:
        raise InvalidOptionError("gap: sectors=(a, b) needs conserve=... (the charge whose sectors they name)")
    if not isinstance(sectors, (list, tuple)) or len(sectors) != 2:
        raise InvalidOptionError(f"gap: sectors must be a pair (lower, upper), got {sectors!r}")
    a, b = (excited_states(H, 1, conserve=conserve, sector=s, **options)[0] for s in sectors)
    return Gap(b.energy - a.energy, a, b)
