"""Minimally entangled typical thermal states (METTS; White, PRL 102, 190601 (2009); Stoudenmire
and White, NJP 12, 055026 (2010)): :func:`metts`, and the chains as a task list
(:func:`metts_tasks`) that Dask or a plain loop runs.

One step of a chain: a product state ``|i>`` is cooled to ``|phi_i> = e^{-beta H/2} |i> /
||...||`` (``tebd`` in imaginary time), measured (the energy and the observables: thermal averages
are their means over the samples), and collapsed to the next product state, drawn with
probability ``|<j|phi_i>|^2`` site by site from the right-canonical state. The collapse basis
alternates between the basis of the local space (``"z"``) and the eigenbasis of ``Sx`` (``"x"``;
``"X"`` on ``"pauli"`` sites), which shortens the autocorrelation (Stoudenmire and White).

Ergodicity: with ``bases="z"`` every product state is a basis state, so when ``H`` conserves a charge
of the local space (``Sz``, ``N``, the parity) a chain never leaves the sector of its start: the
samples would weight the sectors by their numbers of basis states, not by ``Z_s / Z``. So a
grand-canonical run (no ``sector``) with ``bases="z"`` on such an ``H`` is refused
(:class:`InvalidOptionError`, suggesting ``bases="zx"``, whose x-basis collapses move between the
sectors). ``bases="z"`` with ``conserve`` and ``sector`` is the canonical METTS of one sector: every
chain starts from a random basis state of that sector (uniform over them), runs on the symmetric
sites, and the averages are canonical ones, ``Tr_s(e^{-beta H} O) / Z_s``. Every charge ``H``
conserves must then be fixed by ``sector`` (the electron's ``N`` and ``Sz``: ``conserve="N,Sz"``).

Chains are independent tasks: :class:`MettsChain` holds everything one chain needs (the
Hamiltonian, its seed, the settings) and is called with no arguments; the random stream of
chain ``c`` is ``numpy.random.default_rng([seed, c])`` and each chain runs its BLAS on one thread,
so a chain gives bit-identical samples wherever it runs: serially here or on a Dask worker
(``metts(..., client=client)``: ``client.map`` over the chains, results in chain order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tenferro.checks import import_optional, install_hint

from ..algorithms.tebd import tebd
from ..networks.mpo import MPO, expectation
from ..networks.mps import MPS
from ..networks.symmetric_sites import Grading, grading, phys_leg, sector_charge
from ..sites.local_spaces import local_space
from ..tools.checks import check_cutoff, check_positive_int, check_seed
from ..tools.errors import InvalidOptionError, OptionalDependencyError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, thread_policy
from .purification import beta_grid, check_thermal_hamiltonian, conserved_charges
from .results import MettsResult, MettsSample

__all__ = [
    "metts",
    "metts_tasks",
    "MettsChain",
    "collapse",
    "run_tasks",
    "summarize",
    "conserved_charges",
    "sector_grading",
    "sector_start",
    "BASES",
]

#: the collapse schedules: the bases used in turn
BASES = ("zx", "z")


def _x_basis(local: str) -> np.ndarray:
    """Columns: the eigenvectors of ``Sx`` (``X``) of the local space, ascending eigenvalue."""
    space = local_space(local)
    for name in ("Sx", "X"):
        if name in space.ops:
            _, v = np.linalg.eigh(space.matrix(name))
            return v
    raise InvalidOptionError(
        f"metts: the local space {space.name!r} has no Sx or X operator for the x-basis collapse; pass bases='z'"
    )


@thread_policy()
def collapse(psi: MPS, rng: np.random.Generator, basis: np.ndarray | None = None) -> tuple[list[int], list[np.ndarray]]:
    """Draw a product state from ``|<j|psi>|^2``: the basis indices and the local vectors (columns
    of ``basis``, default the standard basis), site by site from the left of the right-canonical
    state (one uniform number per site from ``rng``)."""
    ts = [np.asarray(t) for t in psi.dense().canonicalize(0).tensors]
    d = ts[0].shape[1]
    u = np.eye(d) if basis is None else basis
    v = np.ones((1,))
    picks, vecs = [], []
    for a in ts:
        w = np.einsum("l,lsr,st->tr", v, a, u.conj())  # amplitude per outcome t, right bond
        p = np.sum(np.abs(w) ** 2, axis=1)
        p = p / p.sum()
        t = int(min(np.searchsorted(np.cumsum(p), rng.random()), d - 1))
        picks.append(t)
        vecs.append(u[:, t])
        v = w[t] / np.sqrt(np.sum(np.abs(w[t]) ** 2))
    return picks, vecs


def sector_grading(H: MPO, conserve: str, sector: Any, what: str) -> tuple[Grading, Any]:
    """The grading of ``conserve`` on ``H``'s sites and the integer charge of ``sector`` (typed errors
    for a bad name or a sector with no states)."""
    g = grading(conserve, H.local, list(H.phys_dims), what)
    if isinstance(sector, dict) and list(sector) == [g.label]:  # {"Sz": 0} of the charge "Sz"
        sector = sector[g.label]
    legs = [phys_leg(g.symmetry, g.q[i], i)[0] for i in range(H.L)]
    return g, sector_charge(g, sector, legs, what)


def sector_start(g: Grading, target: Any, rng: np.random.Generator) -> list[int]:
    """A basis state of total charge ``target`` drawn uniformly among all of them: site by site, each
    local state with probability proportional to the number of completions that reach ``target``."""
    L, add = len(g.q), g.symmetry.add
    ways: list[dict[Any, int]] = [dict() for _ in range(L)] + [{target: 1}]  # completions from bond b
    reach = [{g.symmetry.identity}]
    for i in range(L):
        reach.append({add(c, x) for c in reach[-1] for x in g.q[i]})
    for i in range(L - 1, -1, -1):
        for c in reach[i]:
            n = sum(ways[i + 1].get(add(c, x), 0) for x in g.q[i])
            if n:
                ways[i][c] = n
    picks, c = [], g.symmetry.identity
    for i in range(L):
        w = np.array([ways[i + 1].get(add(c, x), 0) for x in g.q[i]], dtype=float)
        s = int(min(np.searchsorted(np.cumsum(w / w.sum()), rng.random()), len(w) - 1))
        picks.append(s)
        c = add(c, g.q[i][s])
    return picks


@dataclass
class MettsChain:
    """One METTS chain as a task: ``chain()`` returns its :class:`MettsSample` list (``n_samples``
    after ``warmup`` discarded steps). Everything it needs travels with it (picklable)."""

    H: MPO
    beta: float
    n_samples: int
    chain: int
    seed: int
    dbeta: float = 0.1
    order: int = 2
    max_bond: int = 64
    cutoff: float = 1e-10
    warmup: int = 2
    bases: str = "zx"
    conserve: str | None = None
    observables: Sequence[str] = field(default_factory=tuple)
    sector: Any = None

    def __call__(self) -> list[MettsSample]:
        """The chain's samples, all of its work (the start, the evolutions, the measurements and the
        collapses) on one BLAS thread: chains run side by side, one per core."""
        with blas_threads(1, None):
            return self._samples()

    def _samples(self) -> list[MettsSample]:
        rng = np.random.default_rng([self.seed, self.chain])
        d = self.H.phys_dims[0]
        xb = _x_basis(self.H.local) if "x" in self.bases else None
        if self.sector is None:
            picks = [int(x) for x in rng.integers(0, d, size=self.H.L)]
        else:
            picks = sector_start(*sector_grading(self.H, self.conserve, self.sector, "metts"), rng)
        psi = self._product(picks, None)
        n = beta_grid(self.beta, self.dbeta, "metts")[2]
        half = 0.5 * self.dbeta
        out = []
        for k in range(self.warmup + self.n_samples):
            res = tebd(
                self.H, psi, n * half, half, order=self.order, imaginary=True, max_bond=self.max_bond,
                cutoff=self.cutoff, threads=1,
            )  # fmt: skip
            phi = res.state
            basis = self.bases[k % len(self.bases)]
            if k >= self.warmup:
                energy = float(np.real(complex(expectation(phi, self.H))))
                obs = {name: np.real(np.asarray(phi.expect(name, local=self.H.local))) for name in self.observables}
                out.append(MettsSample(self.chain, k - self.warmup, energy, obs, basis, tuple(picks)))
            nxt = self.bases[(k + 1) % len(self.bases)]
            picks, vecs = collapse(phi, rng, xb if nxt == "x" else None)
            psi = self._product(picks, vecs if nxt == "x" else None)
        return out

    def _product(self, picks: list[int], vecs: list[np.ndarray] | None) -> MPS:
        d = self.H.phys_dims[0]
        if vecs is not None:
            return MPS.product_state([np.asarray(v, dtype=float) for v in vecs], d)
        if self.conserve is not None:
            return MPS.product_state(picks, d, conserve=self.conserve, local=self.H.local)
        return MPS.product_state(picks, d, local=self.H.local)


@keyword_hints
@thread_policy()  # the x basis, the sector's start
def metts_tasks(
    H: MPO,
    beta: float,
    n_samples: int,
    *,
    chains: int = 1,
    seed: int = 0,
    dbeta: float = 0.1,
    order: int = 2,
    max_bond: int = 64,
    cutoff: float = 1e-10,
    warmup: int = 2,
    bases: str = "zx",
    conserve: str | None = None,
    sector: Any = None,
    observables: Sequence[str] = (),
) -> list[MettsChain]:
    """The METTS chains of :func:`metts` as tasks (one :class:`MettsChain` per chain, checked here)."""
    what = "metts"
    H = check_thermal_hamiltonian(H, what)
    beta, dbeta, _ = beta_grid(beta, dbeta, what)
    n_samples = check_positive_int(n_samples, f"{what}: n_samples (samples per chain)", InvalidOptionError)
    chains = check_positive_int(chains, f"{what}: chains", InvalidOptionError)
    seed = check_seed(seed, f"{what}: seed")
    if seed is None:
        raise InvalidOptionError(f"{what}: seed must be a non-negative integer (chains are reproducible), got None")
    if isinstance(warmup, bool) or not isinstance(warmup, (int, np.integer)) or warmup < 0:
        raise InvalidOptionError(f"{what}: warmup must be a non-negative integer, got {warmup!r}")
    if isinstance(order, bool) or order not in (2, 4):
        raise InvalidOptionError(f"{what}: order must be 2 or 4, got {order!r}")
    if not isinstance(bases, str) or bases not in BASES:
        raise InvalidOptionError(f"{what}: bases must be one of {', '.join(map(repr, BASES))}, got {bases!r}")
    if conserve is not None and bases != "z":
        raise InvalidOptionError(
            f"{what}: conserve={conserve!r} needs basis states (bases='z'); the x-basis collapse of bases='zx' "
            "mixes the sectors"
        )
    if (sector is None) != (conserve is None):
        raise InvalidOptionError(
            f"{what}: conserve and sector go together (the canonical METTS of one sector, bases='z'): got "
            f"conserve={conserve!r}, sector={sector!r}; give both (e.g. conserve='Sz', sector=0) or neither"
        )
    fixed: set[str] = set()
    if sector is not None:
        g, _ = sector_grading(H, conserve, sector, what)
        fixed = set(g.label.split(","))
    free = [c for c in conserved_charges(H) or () if c not in fixed] if bases == "z" else []
    if free:
        names = " and ".join(free)
        raise InvalidOptionError(
            f"{what}: bases='z' cannot sample this H: it conserves {names}, and collapses in the local basis "
            f"never change {names}, so every chain stays in the sector of its start and the average weights the "
            "sectors by their numbers of basis states instead of their Boltzmann weights Z_s / Z (a wrong thermal "
            "average); use bases='zx' for the grand-canonical average (its x-basis collapses move between the "
            f"sectors), or bases='z' with conserve=... and sector=... fixing {names} for the canonical average "
            "in one sector"
        )
    if "x" in bases:
        _x_basis(H.local)
    if isinstance(observables, str) or not all(isinstance(o, str) for o in observables):
        raise Tensor4allTypeError(f"{what}: observables must be a list of operator names, got {observables!r}")
    space = local_space(H.local)
    for o in observables:
        space.factor(o)
    max_bond = check_positive_int(max_bond, f"{what}: max_bond")
    cutoff = check_cutoff(cutoff, f"{what}: cutoff")
    return [
        MettsChain(H, beta, n_samples, c, seed, dbeta, order, max_bond, cutoff, int(warmup), bases, conserve,
                   tuple(observables), sector)
        for c in range(chains)
    ]  # fmt: skip


def _run_chain(task: MettsChain) -> list[MettsSample]:
    return task()


def run_tasks(tasks: list[MettsChain], client: Any = None) -> list[list[MettsSample]]:
    """The chains' samples in chain order: a loop here (``client=None``) or ``client.map`` on a
    ``dask.distributed.Client`` (pure=False: each chain runs once)."""
    if client is None:
        return [t() for t in tasks]
    dd = import_optional(
        ("distributed",),
        OptionalDependencyError,
        f"metts(client=...) runs its chains on Dask, which is not installed; {install_hint('distributed')}",
    )
    if not isinstance(client, dd.Client):
        raise Tensor4allTypeError(
            f"metts: client must be a dask.distributed.Client or None, got {type(client).__name__}"
        )
    futures = client.map(_run_chain, tasks, pure=False)
    return client.gather(futures)


def summarize(beta: float, per_chain: list[list[MettsSample]]) -> MettsResult:
    """Means and standard errors (see :class:`MettsResult`)."""
    samples = [s for chain in per_chain for s in chain]
    e = np.array([s.energy for s in samples])
    names = list(samples[0].observables) if samples else []

    def stats(values: list[np.ndarray], groups: list[list[np.ndarray]]) -> tuple[Any, Any]:
        v = np.asarray(values, dtype=float)
        if len(groups) > 1:
            means = np.array([np.mean(np.asarray(g, dtype=float), axis=0) for g in groups])
            return v.mean(axis=0), means.std(axis=0, ddof=1) / np.sqrt(len(groups))
        n = len(v)
        return v.mean(axis=0), (v.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(v.shape[1:], np.nan))

    energy, err = stats(list(e), [[s.energy for s in c] for c in per_chain])
    obs, errs = {}, {}
    for name in names:
        obs[name], errs[name] = stats(
            [s.observables[name] for s in samples], [[s.observables[name] for s in c] for c in per_chain]
        )
    return MettsResult(float(beta), samples, float(energy), float(err), obs, errs)


@keyword_hints
@thread_policy()  # one BLAS thread, as each chain's
def metts(
    H: MPO,
    beta: float,
    n_samples: int,
    *,
    chains: int = 1,
    seed: int = 0,
    dbeta: float = 0.1,
    order: int = 2,
    max_bond: int = 64,
    cutoff: float = 1e-10,
    warmup: int = 2,
    bases: str = "zx",
    conserve: str | None = None,
    sector: Any = None,
    observables: Sequence[str] = (),
    client: Any = None,
) -> MettsResult:
    """Thermal averages at ``beta`` from METTS: ``chains`` chains of ``n_samples`` samples each,
    after ``warmup`` steps (see the module docstring).

    Args:
        H: an :class:`MPO` compiled from an OpSum (its terms give the gates; ``tensor4all.models``).
        beta: the inverse temperature (each step cools by ``e^{-beta H/2}`` in steps ``dbeta / 2``
            of ``tebd`` of ``order`` 2 or 4, ``max_bond``, ``cutoff``).
        n_samples: samples per chain (``>= 1``).
        chains: independent chains (tasks); the standard error comes from their means.
        seed: chain ``c`` draws from ``numpy.random.default_rng([seed, c])``.
        warmup: steps discarded at the start of each chain (the random product start).
        bases: ``"zx"`` (default: collapse alternately in the local basis and in the ``Sx`` eigenbasis)
            or ``"z"``. ``"z"`` never leaves the sector of a charge that ``H`` conserves, so it is
            refused for such an ``H`` unless ``conserve`` and ``sector`` fix that charge
            (:class:`InvalidOptionError`; see the module docstring).
        conserve, sector: the canonical METTS of one sector (both or neither; ``bases="z"``): the
            charge (``"Sz"``, ``"N"``, ``"N,Sz"``, ``"parity"``) and its value in physical units
            (``sector=0`` for ``Sz = 0``; ``{"N": 4, "Sz": 0}``). Every chain starts from a random basis
            state of the sector, runs on the symmetric sites and stays in the sector; the averages are
            the canonical ones of that sector, ``Tr_s(e^{-beta H} O) / Z_s``.
        observables: operator names of ``H.local``, measured at every site of every sample.
        client: None (the chains run here, one after another) or a ``dask.distributed.Client``
            (one task per chain; the same samples, bit for bit).

    Returns:
        :class:`MettsResult`: the samples, the mean energy and its standard error, the observables'
        means and standard errors (per site).
    """
    tasks = metts_tasks(
        H, beta, n_samples, chains=chains, seed=seed, dbeta=dbeta, order=order, max_bond=max_bond,
        cutoff=cutoff, warmup=warmup, bases=bases, conserve=conserve, sector=sector, observables=observables,
    )  # fmt: skip
    return summarize(float(beta), run_tasks(tasks, client))
