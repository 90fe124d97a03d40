"""Time-evolving block decimation (TEBD): :func:`tebd`.

One implementation for every kind of state: the sweep (:class:`_Run`) applies the gates of a
Trotter-Suzuki sequence (:mod:`._gates`) bond by bond and splits each updated pair of sites with
one truncated SVD (:func:`~tensor4all.algorithms.tebd_sites.split_pair`). What a site tensor is (dense or
symmetric) and which operations do the linear algebra (NumPy for concrete runs, tenferro for
traced ones, so that ``tidu.grad`` flows through the gates' ``expm`` and the SVDs) are the few
pieces of :mod:`._tebd_sites`; a run switches to tenferro as soon as a traced gate appears.

The state stays in mixed canonical form (not Vidal's ``Gamma Lambda`` form): the orthogonality
centre sits on the pair being updated, so each truncation is the optimal one; the singular values
go toward the next gate, and QR moves carry the centre between gates that are not neighbours.
"""

from __future__ import annotations

import math
import sys
import time as _time
from typing import Any, Callable

import numpy as np

import tenferro as tf
import tidu

from ..tools.errors import InvalidOptionError, NonHermitianError, Tensor4allTypeError, ValueRangeError, ZeroNormError
from ..sites.charges import NonConservingError
from .evolution import (
    EvolutionRecord,
    EvolutionResult,
    Observables,
    check_every,
    check_norm_range,
    choose_conserve,
    hamiltonian_at,
    time_grid,
)
from ..operators.gates import (
    ORDERS,
    SPLITTINGS,
    BondHamiltonian,
    bonds_from_arrays,
    bonds_from_opsum,
    exp_gate,
    swap_gate,
    trotter_parts,
    trotter_sequence,
)
from ..sites.local_spaces import local_space
from ..networks.mpo import MPO, check_compatible
from ..networks.mps import MPS
from .tebd_blocks import BlockSites
from .tebd_sites import DenseSites, NumpyLA, SymmetricSites, TenferroLA, split_pair
from ..tools.keywords import keyword_hints, renamed_keywords
from ..tools.progress import StepBar
from ..tools.threads import blas_threads, check_threads
from ..tools.checks import any_traced, check_bool, check_callable, check_cutoff, check_positive_int, concrete, is_traced

__all__ = ["tebd"]

WHAT = "tebd"


# ---- the Hamiltonian: bond terms at a time ---------------------------------------------------
class _Source:
    """``H`` as bond terms at a time (an MPO of an OpSum, a callable returning one, or explicit
    bond Hamiltonians), and as an MPO for the ``"energy"`` observable."""

    def __init__(self, H: Any, psi: MPS, dt: float, needs_hermitian: bool = False):
        self.H, self.psi, self.needs_hermitian = H, psi, needs_hermitian
        self.static: BondHamiltonian | None = None
        self.first: tuple[float, MPO] | None = None
        if isinstance(H, MPO):
            self.static = self._from_mpo(H)
            self.local = H.local
        elif isinstance(H, (list, tuple)):
            self.static = bonds_from_arrays(H, psi.phys_dims, WHAT)
            self.local = None
        elif callable(H):
            mid = 0.5 * dt
            self.first = (mid, hamiltonian_at(H, mid, WHAT, psi.phys_dims))
            self.local = self.first[1].local
        else:
            raise Tensor4allTypeError(
                f"{WHAT}: H must be an MPO compiled from an OpSum (MPO.from_opsum, "
                "tensor4all.models), a callable t -> MPO, or a list of L - 1 bond Hamiltonians; "
                f"got {type(H).__name__}"
            )
        if self.static is not None:
            self._check(self.static)

    def _from_mpo(self, H: MPO) -> BondHamiltonian:
        check_compatible(self.psi, H)
        if H.opsum is None or H.local is None:
            raise InvalidOptionError(
                f"{WHAT}: the MPO was not compiled from an OpSum (MPO.from_opsum or "
                "tensor4all.models), so its one- and two-site terms are unknown; build it with "
                "MPO.from_opsum inside the function you differentiate, or pass the bond "
                "Hamiltonians as a list of L - 1 arrays"
            )
        return bonds_from_opsum(H.opsum, local_space(H.local), H.L, WHAT)

    def bonds_at(self, time: float) -> BondHamiltonian:
        if self.static is not None:
            return self.static
        if self.first is not None and self.first[0] == time:
            mpo = self.first[1]
            self.first = None
        else:
            mpo = hamiltonian_at(self.H, time, WHAT, self.psi.phys_dims)
        bonds = self._from_mpo(mpo)
        self._check(bonds)
        return bonds

    def mpo_at(self, time: float) -> MPO | None:
        if isinstance(self.H, MPO):
            return self.H
        return None if isinstance(self.H, (list, tuple)) else hamiltonian_at(self.H, time, WHAT, self.psi.phys_dims)

    def _check(self, bonds: BondHamiltonian) -> None:
        """:class:`NonHermitianError` for a non-Hermitian term in real time (unless allowed), and
        :class:`NonConservingError` if a symmetric state meets a term that changes its charge."""
        if self.needs_hermitian:
            self._check_hermitian(bonds)
        if not self.psi.symmetric:
            return
        legs = [t.legs[1] for t in self.psi.tensors]
        g = legs[0].symmetry
        q = [[c for c, d in leg.sectors.items() for _ in range(d)] for leg in legs]
        for i, j in [(b, b + 1) for b in range(len(bonds.nn))] + list(bonds.long):
            h = bonds.matrix((i, j))
            if h is None:
                continue
            h = np.asarray(concrete(h) if not isinstance(h, np.ndarray) else h)
            pair = [g.add(a, b) for a in q[i] for b in q[j]]
            bad = [(r, c) for r, c in np.argwhere(np.abs(h) > 1e-13 * np.max(np.abs(h))) if pair[r] != pair[c]]
            if bad:
                r, c = bad[0]
                grading = self.psi._grading  # the physical values (Sz, (N, Sz)), not the integer charges
                show = (lambda x: x) if grading is None else grading.value
                raise NonConservingError(
                    f"{WHAT}: the Hamiltonian term on sites ({i}, {j}) changes the conserved charge of the symmetric "
                    f"state ({self.psi.conserve}): <{r}|h|{c}> = {h[r, c]:.3g} joins pair charges "
                    f"{show(pair[c])!r} -> {show(pair[r])!r}; use a conserving H or psi.dense()"
                )

    def _check_hermitian(self, bonds: BondHamiltonian) -> None:
        for i, j in [(b, b + 1) for b in range(len(bonds.nn))] + list(bonds.long):
            h = bonds.matrix((i, j))
            if h is None:
                continue
            h = np.asarray(concrete(h) if not isinstance(h, np.ndarray) else h)
            size = np.linalg.norm(h)
            defect = np.linalg.norm(h - h.conj().T)
            if defect > 1e-12 * max(size, 1e-300):
                raise NonHermitianError(
                    f"{WHAT}: real-time evolution needs a Hermitian Hamiltonian, but the term on sites ({i}, {j}) "
                    f"differs from its adjoint (||h - h^dagger|| / ||h|| = {defect / size:.3g}); add the Hermitian "
                    "conjugate of every non-Hermitian term, or pass allow_nonhermitian=True to apply the "
                    "non-unitary gates e^{-i dt h}"
                )


# ---- the sweep ----------------------------------------------------------------------------
class _Run:
    """The state during the evolution (site list, centre), the gates and the bond updates.

    A concrete run sweeps a state of unit norm, whether or not it normalizes: every split divides
    the kept singular values by their norm, and ``scale`` carries the state's norm
    (``normalize=False``), put on the centre by :meth:`state`; the SVDs keep what they kept (the
    cutoff is relative), and no sum of squares meets a norm past 1e154. A traced run that does not
    normalize keeps the norm in its sites (the derivative of the kept values' norm is not defined
    where the truncation cuts a degenerate multiplet; its norms are scaled by powers of two).
    ``size`` is the norm since the last normalization (the start, whose norm is ``psi``'s, or the
    last record of a normalized run); outside the float range, where the state's entries cannot be
    represented, it raises :class:`ValueRangeError`."""

    def __init__(
        self,
        psi: MPS,
        dtype: np.dtype,
        traced: bool,
        dt: float,
        imaginary: bool,
        normalize: bool,
        max_bond: int,
        cutoff: float,
    ):
        self.dt, self.imaginary, self.normalize = dt, imaginary, normalize
        self.max_bond, self.cutoff = max_bond, cutoff
        self.grading = psi._grading
        self.L = psi.L
        la = TenferroLA() if traced else NumpyLA()
        legs = [t.legs[1] for t in psi.tensors] if psi.symmetric else []
        if psi.symmetric and not traced:
            self.fmt: DenseSites = BlockSites(dtype, getattr(self.grading.symmetry, "n", 0), legs)
        elif psi.symmetric:
            self.fmt = SymmetricSites(la, dtype, legs)
        else:
            self.fmt = DenseSites(la, dtype)
        self.legs = legs
        ts = [self.fmt.site(t) for t in psi.tensors]
        for i in range(self.L - 1, 0, -1):  # right-canonical: the centre at site 0
            ts[i - 1], ts[i] = self.fmt.move(ts[i - 1], ts[i], False)
        self.ts, self.centre = ts, 0
        n = self.fmt.norm(ts[0])
        size = _value(n)
        if not size > 0.0:
            raise ZeroNormError(f"{WHAT}: the initial state has norm 0")
        if not math.isfinite(size):
            raise ValueRangeError(
                f"{WHAT}: the initial state's norm exceeds the float range (about 1.8e308); "
                "divide psi by a large factor (or psi.normalize()) first"
            )
        unit = normalize or not traced  # the sweep's state has norm 1 (see the class)
        if unit:
            ts[0] = self.fmt.scale(ts[0], n)
        self.size, self.scale = size, size if unit and not normalize else 1.0
        self.cache: dict = {}
        self.step, self.step_err, self.step_gates = 1, 0.0, 0

    def use_tenferro(self) -> None:
        """Switch a concrete run to tenferro operations (a traced gate appeared)."""
        if self.fmt.la.traced:
            return
        if self.scale != 1.0:  # a traced run keeps its norm in the sites
            self.ts[self.centre] = self.fmt.times(self.ts[self.centre], self.scale)
            self.scale = 1.0
        if isinstance(self.fmt, BlockSites):  # the same symmetric sites, now on tenferro operations
            self.ts = self.fmt.tensors(self.ts)
            self.fmt = SymmetricSites(TenferroLA(), self.fmt.dtype, self.legs)
        else:
            self.fmt.la = TenferroLA()
        if not isinstance(self.fmt, SymmetricSites):
            self.ts = [tf.asarray(np.asfortranarray(t)) for t in self.ts]
        self.cache.clear()

    def state(self) -> MPS:
        """The evolved state: the sites, the carried norm on the centre (``normalize=False``)."""
        ts = list(self.ts)
        if self.scale != 1.0:
            ts[self.centre] = self.fmt.times(ts[self.centre], self.scale)
        return self.fmt.state(ts, self.grading)

    # -- gates ---------------------------------------------------------------------------
    def _gate(self, pair: tuple[int, int], factors: list[tuple[BondHamiltonian, float]]) -> Any:
        """The gate of ``pair`` for the product of ``factors`` (later ones act after), as a matrix."""
        same = all(f[0] is factors[0][0] for f in factors)
        if same:
            factors = [(factors[0][0], sum(w for _, w in factors))]
        g = None
        for bonds, w in factors:
            h = bonds.matrix(pair)
            if h is None:
                continue
            e = exp_gate(h, w * self.dt, self.imaginary)
            if isinstance(e, np.ndarray) and not np.isfinite(e).all():
                raise ValueRangeError(
                    f"{WHAT}: the gate exp(-{'' if self.imaginary else 'i '}{w * self.dt:g} h) on sites {pair} "
                    "overflows the float range; take a smaller dt"
                )
            g = e if g is None else self.fmt.la.matmul(e, g) if (is_traced(e) or is_traced(g)) else e @ g
        return g

    def layer(
        self, pairs: list[tuple[int, int]], factors: list[tuple[BondHamiltonian, float]], following: Any = None
    ) -> None:
        """Apply the commuting gates of one part of the Trotter splitting, from the end nearer
        the centre; long-range pairs through swap gates. ``following``: the pairs of the next part,
        whose single nearest-neighbour pair (the ``"sweep"`` splitting) says where the centre goes."""
        key = (tuple(pairs), tuple((id(b), w) for b, w in factors))
        ops = self.cache.get(key)
        if ops is None:
            ops = []
            for i, j in pairs:
                g = self._gate((i, j), factors)
                if g is None:
                    continue
                d = self.ts[i].shape[1], self.ts[j].shape[1]
                swaps = [(b, self.fmt.gate(swap_gate(d[1]), b, b + 1, d[1], d[1])) for b in range(j - 1, i, -1)]
                ops.append(swaps + [(i, self.fmt.gate(g, i, j, *d))] + swaps[::-1])
            self.cache[key] = ops
        ascending = 2 * self.centre <= self.L - 2
        seq = [op for group in (ops if ascending else ops[::-1]) for op in group]
        b_next = None
        if following is not None and len(following) == 1 and following[0][1] == following[0][0] + 1:
            b_next = following[0][0]
        for n, (b, g4) in enumerate(seq):
            last = b_next if b_next is not None and b_next != b else (b + 1 if ascending else b - 1)
            nxt = seq[n + 1][0] if n + 1 < len(seq) else last
            self.apply(b, g4, nxt > b)

    def apply(self, b: int, g4: Any, to_right: bool) -> None:
        """One gate on sites ``(b, b + 1)``: centre moved there, the pair contracted with the gate,
        one truncated SVD, the weights put toward the next gate."""
        ts, fmt = self.ts, self.fmt
        while self.centre < b:
            ts[self.centre], ts[self.centre + 1] = fmt.move(ts[self.centre], ts[self.centre + 1], True)
            self.centre += 1
        while self.centre > b + 1:
            ts[self.centre - 1], ts[self.centre] = fmt.move(ts[self.centre - 1], ts[self.centre], False)
            self.centre -= 1
        unit = self.normalize or not fmt.la.traced  # see the class
        ts[b], ts[b + 1], norm, err = split_pair(fmt, ts[b], ts[b + 1], g4, to_right, self.max_bond, self.cutoff, unit)
        factor = _value(norm)
        if not unit:
            self.size = factor
        else:
            self.size *= factor
            if not self.normalize:
                self.scale *= factor
        if not (factor > 0.0 and sys.float_info.min <= self.size < math.inf):
            where = f"the update of sites ({b}, {b + 1}) in step {self.step} (t = {self.step * self.dt:g})"
            check_norm_range(WHAT, where, factor, self.size, self.normalize, fmt.la.traced)
        self.centre = b + 1 if to_right else b
        self.step_err = max(self.step_err, err)
        self.step_gates += 1

    def record(self, step: int, time: float, seconds: float) -> EvolutionRecord:
        """The record of the step: its norm that of the state after it, before any normalization
        (``normalize``: the start of the next step is normalized, the first step's is ``psi``)."""
        rec = EvolutionRecord(
            step=step,
            time=time,
            max_bond=max(t.shape[2] for t in self.ts),
            max_truncation_error=float(self.step_err),
            norm=self.size,
            seconds=seconds,
            matvecs=self.step_gates,
        )
        if self.normalize:
            self.size = 1.0
        self.step, self.step_err, self.step_gates = step + 1, 0.0, 0
        return rec


def step_layers(bonds: Any, splitting: str, order: int, pending: Any, output: bool) -> tuple[list, Any]:
    """The layers of gates of one Trotter step, ``(pairs, [(bonds, weight)])`` in order, and the
    layer held back for the next step: the last layer of a step acts on the same pairs as the
    first of the next one, so between two steps whose state is not measured (``output`` False)
    it is merged into the next step's first layer (one layer of gates ``e^{-(w1 + w2) dt h}``
    instead of two); ``pending`` is the layer the step before held back."""
    parts = trotter_parts(bonds, splitting)
    layers = [(parts[p], [(bonds, w)]) for p, w in trotter_sequence(order, len(parts))]
    if pending is not None:
        if layers and pending[0] == layers[0][0]:
            layers[0] = (pending[0], pending[1] + layers[0][1])
        else:
            layers.insert(0, pending)
    if not output and len(layers) > 1 and layers[-1][0] == layers[0][0]:
        return layers, layers.pop()
    return layers, None


@keyword_hints
@renamed_keywords({"t": "t_final"})
def tebd(
    H: Any,
    psi: MPS,
    t_final: float,
    dt: float,
    *,
    order: int = 2,
    splitting: str = "brick",
    max_bond: int = 64,
    cutoff: float = 1e-10,
    imaginary: bool = False,
    normalize: bool | None = None,
    observables: Any = None,
    callback: Callable[[EvolutionRecord], Any] | None = None,
    every: int = 1,
    threads: int | None = None,
    allow_nonhermitian: bool = False,
    conserve: str | None = None,
    progress: bool = False,
) -> EvolutionResult:
    """Evolve ``psi`` to time ``t_final`` by TEBD: ``e^{-i t H} psi`` (``imaginary=True``: ``e^{-t H} psi``)
    in ``t_final / dt`` Trotter-Suzuki steps.

    Args:
        H: the Hamiltonian, one of
            * an :class:`MPO` compiled from an :class:`OpSum` (``MPO.from_opsum``, every
              :mod:`tensor4all.models` function): its terms (``H.opsum``) give the gates. Terms act on
              one or two sites; a two-site term on sites ``i, j > i + 1`` is applied through swap
              gates, which costs ``2 (j - i - 1)`` extra SVDs per application; a term on three or
              more sites, or an MPO built from tensors, raises :class:`InvalidOptionError`;
            * a callable ``t -> MPO`` (time dependent): evaluated once per step, at its midpoint
              (the exponential midpoint rule, second order in the time dependence whatever
              ``order`` is; exact for a Hamiltonian constant within each step, such as
              piecewise-constant controls);
            * a list of ``L - 1`` bond Hamiltonians: ``h_b`` acts on sites ``(b, b + 1)``, shape
              ``(d, d, d, d)`` with ``h[s, s', t, t'] = <s s'|h_b|t t'>`` or ``(d d, d d)`` in
              ``np.kron`` order (site ``b`` the slower index); ``None`` for no term.
            One-site terms are split between the bonds: half to each neighbouring bond, all of it
            to the one bond of an end site. Coefficients (OpSum coefficients, bond arrays) may be
            tidu tracers: the whole evolution is then traced and differentiable.
        psi: the initial state (not changed), dense or symmetric (``psi.symmetric``: the gates are
            charge-conserving symmetric tensors and the result stays in the sector; a term that
            changes the charge raises :class:`NonConservingError`).
        t_final, dt: the final time (a whole number of steps) and the step, ``dt > 0`` (``t=``, the
            final time's name before this release, still works with a ``FutureWarning``).
        order: 2 (Strang splitting) or 4 (Suzuki's fractal of five order-2 steps), see
            :func:`~tensor4all.operators.gates.trotter_sequence`. The parts are the even bonds, the odd
            bonds and the groups of long-range terms; the last half step of one time step is merged
            with the first of the next (one gate, exact) unless the state is output between them.
        splitting: ``"brick"`` (default: the parts are the even bonds, the odd bonds and the groups
            of long-range terms) or ``"sweep"`` (each bond alone, left to right: order 2 is a sweep of
            half steps to the right and back, ``2 (L - 2)`` gates a step instead of ``L - 1``; the
            splitting of TeNPy's imaginary-time TEBD, for like-for-like comparisons).
        max_bond, cutoff: the truncation of every SVD: at most ``max_bond`` singular values, and
            a dropped tail of relative weight ``sum(dropped s^2) / sum(s^2) <= cutoff`` (ITensor's
            convention, as ``MPS.compress``).
        imaginary: evolve in imaginary time, ``e^{-t H}`` (ground states at long times).
        normalize: renormalize after every gate (default: True in imaginary time, False in real
            time, where the norm lost to truncation stays visible in the records). Each record's
            ``norm`` is that of the state after its step, before normalization (the first step's
            starts from ``psi``, whatever its norm). With ``False`` a norm beyond the float range
            (about 1.8e308; imaginary time grows it as ``e^{-t E_0}``) raises :class:`ValueRangeError`.
        observables: ``name -> spec`` measured at the output times (see
            :class:`~tensor4all.algorithms.evolution.Observables`; ``"energy"`` needs an MPO Hamiltonian, and
            evaluates a time-dependent one at the output times).
        callback: called with each step's :class:`EvolutionRecord`.
        progress: ``True`` draws a progress bar over the steps (tqdm, on stderr).
        every: output every ``every`` steps (and at ``t``).
        threads: BLAS threads (as ``dmrg``).
        allow_nonhermitian: real-time evolution checks that every term is Hermitian
            (:class:`NonHermitianError`, as :func:`tensor4all.tdvp`); ``True`` applies the
            non-unitary gates ``e^{-i dt h}`` of a non-Hermitian ``H`` (an effective, lossy model).
        conserve: None (default: a symmetric ``psi`` stays in its sector, a dense one is dense),
            ``"none"`` (densely, from ``psi.dense()``), or ``"auto"``: in the sector unless the run
            is small enough that the dense run is faster: its two-site problems ``d_b d_{b+1}
            chi_b^2`` (``chi_b`` the smaller of ``max_bond`` and the sector's bond) averaged over
            the bonds at most :data:`~tensor4all.algorithms.evolution.AUTO_DENSE_BELOW`
            (measured). Then it runs densely from ``psi.dense()`` and the final state is dense.
            The choice and its reason are logged (logger ``"tensor4all"``, INFO) and recorded in
            the result (``conserve``, ``conserve_reason``).

    Returns:
        :class:`EvolutionResult`: the final state (mixed canonical; complex128 in real time),
        the output times ``0, every dt, ..., t``, the observables there and one record per step
        (``matvecs``: the gate applications, swaps included; after a step whose last half step is
        merged into the next, ``max_bond`` and ``norm`` are those before that half step).

    The sweep keeps the state in mixed canonical form with the centre on the updated pair
    (truncation optimal at every SVD): concrete runs use NumPy/SciPy, traced ones tenferro
    operations (``tenferro.linalg.expm`` and ``svd``; the kept rank is chosen from the concrete
    singular values, and the derivative is that of the truncated SVD, discarded subspace included).
    """
    if not isinstance(psi, MPS):
        raise Tensor4allTypeError(f"{WHAT}: psi must be an MPS, got {type(psi).__name__}")
    n_steps = time_grid(t_final, dt, WHAT)
    dt = float(dt)
    progress = check_bool(progress, f"{WHAT}: progress")
    if isinstance(order, (bool, np.bool_)) or not isinstance(order, (int, np.integer)) or order not in ORDERS:
        raise InvalidOptionError(f"{WHAT}: order must be one of {', '.join(map(str, ORDERS))}, got {order!r}")
    if not isinstance(splitting, str) or splitting not in SPLITTINGS:
        raise InvalidOptionError(
            f"{WHAT}: splitting must be one of {', '.join(map(repr, SPLITTINGS))}, got {splitting!r}"
        )
    max_bond = check_positive_int(max_bond, f"{WHAT}: max_bond")
    cutoff = check_cutoff(cutoff, f"{WHAT}: cutoff")
    imaginary = check_bool(imaginary, f"{WHAT}: imaginary")
    normalize = imaginary if normalize is None else check_bool(normalize, f"{WHAT}: normalize")
    callback = check_callable(callback, f"{WHAT}: callback")
    every = check_every(every, WHAT)
    threads = check_threads(threads)
    allow_nonhermitian = check_bool(allow_nonhermitian, f"{WHAT}: allow_nonhermitian")
    if psi.L < 2:
        raise InvalidOptionError(f"{WHAT}: a chain of {psi.L} site has no bonds; TEBD needs L >= 2")
    real_steps = imaginary and not psi.dtype.is_complex and not (isinstance(H, MPO) and H.dtype.is_complex)
    with blas_threads(threads, max_bond):  # the setup (sectors, gates, first canonical form), the steps, the state
        psi, reason = choose_conserve(conserve, psi, max_bond, WHAT, real_steps, WHAT)
        source = _Source(H, psi, dt, needs_hermitian=not (imaginary or allow_nonhermitian))
        obs = Observables(observables, psi.L, source.local, WHAT)
        if isinstance(H, (list, tuple)) and any(s == "energy" for s in (observables or {}).values()):
            raise InvalidOptionError(
                f"{WHAT}: the 'energy' observable needs H as an MPO (or a callable returning "
                "one); with bond Hamiltonians pass a callable observable"
            )
        wants_h = any(isinstance(s, str) and s == "energy" for s in (observables or {}).values())
        first = source.bonds_at(0.5 * dt) if n_steps else source.static
        traced = any_traced([b for t_ in psi.tensors for b in (t_.blocks.values() if psi.symmetric else [t_])])
        traced = traced or (first is not None and first.traced)
        real = (
            imaginary
            and not psi.dtype.is_complex
            and source.static is not None
            and not any(_is_complex(h) for h in source.static.nn + list(source.static.long.values()))
        )
        run = _Run(
            psi, np.dtype(np.float64 if real else np.complex128), traced, dt, imaginary, normalize, max_bond, cutoff
        )
        times, history = [0.0], []
        bar = StepBar(n_steps, WHAT) if progress else None
        if obs.funcs:  # the state is assembled (and checked) only for what measures it
            obs.record(run.state(), 0.0, source.mpo_at(0.0) if wants_h else None)
        pending = None
        for k in range(1, n_steps + 1):
            t0 = _time.perf_counter()
            bonds = first if k == 1 else source.bonds_at((k - 0.5) * dt)
            if bonds.traced:
                run.use_tenferro()
            output = k % every == 0 or k == n_steps
            layers, pending = step_layers(bonds, splitting, order, pending, output)
            with tidu.paused_gc():  # a step's many small objects: no collector passes (as the sweeps)
                for n, (pairs, factors) in enumerate(layers):  # a sweep tells each gate where the next one is
                    following = layers[n + 1][0] if splitting == "sweep" and n + 1 < len(layers) else None
                    run.layer(pairs, factors, following)
            if bonds is not source.static:
                run.cache.clear()
            now = float(t_final) if k == n_steps else k * dt  # the last time is t_final, not n dt rounded
            record = run.record(k, now, _time.perf_counter() - t0)
            history.append(record)
            if bar is not None:
                bar()
            if callback is not None:
                callback(record)
            if output:
                times.append(now)
                if obs.funcs:
                    obs.record(run.state(), now, source.mpo_at(now) if wants_h else None)
        state = run.state()
    if bar is not None:
        bar.close()
    return EvolutionResult(state, np.asarray(times), obs.result(), history, state.conserve, reason)


def _value(x: Any) -> float:
    """``x`` (a float, a tenferro scalar or a tidu tracer) as a float: a tracer's primal."""
    return float(concrete(x)) if is_traced(x) else float(x)


def _is_complex(h: Any) -> bool:
    if h is None:
        return False
    if isinstance(h, np.ndarray):
        return np.iscomplexobj(h)
    return tidu.aval_of(h).dtype.is_complex
