"""``tdvp``: real- and imaginary-time evolution of an MPS by the time-dependent variational
principle, on the sweep engine of the DMRG.

One time step is the second-order symmetric integrator of J. Haegeman, C. Lubich,
I. Oseledets, B. Vandereycken and F. Verstraete, Phys. Rev. B 94, 165116 (2016): a
left-to-right and a right-to-left pass of forward local exponentials by half the step and
backward ones in between (:meth:`._sweep.Sweep.evolve`), the local exponentials by Lanczos
with Saad's error estimate (:mod:`._krylov`). Two-site steps let the bonds grow (truncated
by ``max_bond``/``cutoff``, as in DMRG); one-site steps keep them, with no truncation error
and exact conservation of norm and energy (real time, time-independent ``H``) up to the
Krylov tolerance.

Backends: a dense MPS runs on the dense backend, a symmetric one (``MPS.product_state(...,
conserve="Sz")``, a conserved ``dmrg`` result) on the charge-sector backend: it never leaves
its sector. When the MPO or the state is traced by tidu (differentiating with respect to
couplings, controls or the initial state), the steps run on tenferro tensors
(:mod:`._traced_backend`) and the derivative is that of the discrete steps as computed
(not the continuous adjoint: the gradient is then exactly that of the computed map and
matches finite differences whatever ``dt``, with no backward evolution of a costate carrying
its own truncation and time-step errors). The kept ranks are frozen at the values chosen
from the concrete values (the exact truncated-SVD derivative); each local exponential is a
primitive with the exact derivative of ``exp(tau H) v`` (:mod:`._krylov_traced`), so the
Krylov dimension the forward pass used does not matter (at an eigenstate, where Lanczos
stops after one vector, the derivative still sees a perturbation that leaves it).
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Any, Callable, Mapping

import numpy as np

from ..networks.chain import leaves_of
from ..tools.device import check_placement, device_scope
from ..tools.errors import InvalidOptionError, NonHermitianError, Tensor4allTypeError, ValueRangeError, ZeroNormError
from .evolution import (
    EvolutionRecord,
    EvolutionResult,
    Observables,
    check_every,
    check_norm_range,
    check_hamiltonian_arg,
    choose_conserve,
    full_bond_dims,
    hamiltonian_at,
    time_grid,
)
from ..networks.mpo import HERMITIAN_TOL, MPO, check_compatible, hermiticity
from ..networks.mps import MPS
from .sector_run import SectorSpec, resolve_sector
from .backend import SectorStart, make_backend
from .sweep import BondUpdate, Sweep
from ..networks.symmetric_sites import Grading
from ..tools.keywords import keyword_hints, renamed_keywords
from ..tools.progress import StepBar
from ..tools.threads import blas_threads, check_threads
from ..tools.checks import (
    any_traced,
    check_bool,
    check_callable,
    check_cutoff,
    check_finite_arrays,
    check_positive_int,
    check_real,
    concrete,
    is_scalar_number,
    to_numpy,
)

__all__ = ["FrozenBondsWarning", "tdvp"]


class FrozenBondsWarning(UserWarning):
    """TDVP's projection cannot reach what ``H`` does to the start state: one-site TDVP keeps the
    start state's bond dimensions (from a product state it stays one: grow the bonds with two-site
    steps first), and two-site TDVP from a product state sees a term between sites more than one
    apart only through bonds its nearer terms have grown (grow the bonds first, e.g. by TEBD)."""


@keyword_hints
@renamed_keywords({"t": "t_final"})
def tdvp(
    H: MPO | Callable[[float], MPO],
    psi: MPS,
    t_final: float,
    dt: float,
    *,
    two_site: bool = True,
    max_bond: int = 64,
    cutoff: float = 1e-10,
    imaginary: bool = False,
    normalize: bool | None = None,
    observables: Mapping[str, Any] | None = None,
    every: int = 1,
    callback: Callable[[EvolutionRecord], Any] | None = None,
    progress: bool | Callable[[BondUpdate], Any] | None = None,
    krylov_tol: float = 1e-10,
    allow_nonhermitian: bool = False,
    threads: int | None = None,
    placement: Any = None,
    conserve: str | None = None,
) -> EvolutionResult:
    """Evolve ``psi`` to time ``t_final`` under ``H`` by TDVP steps of ``dt``.

    Args:
        H: the Hamiltonian MPO, or a callable ``time -> MPO`` (a time-dependent Hamiltonian,
            taken at the midpoint of each step: the exponential midpoint rule).
        psi: the initial state (dense or symmetric MPS; real states are promoted to complex
            for real time). Its norm is kept (see ``normalize``).
        t_final, dt: final time and step; ``t_final`` must be a whole number of steps (``t=``,
            its name before this release, still works with a ``FutureWarning``; ``t`` is the
            hopping of the fermion models, as ``--t`` on the command line).
        two_site: two-site TDVP (bonds grow up to ``max_bond``, truncated with ``cutoff``, the
            relative discarded weight per bond) or one-site TDVP (bonds stay as in ``psi``, no
            truncation: ``max_bond`` and ``cutoff`` do not apply; norm and energy are conserved;
            from a product state it stays one, and :class:`FrozenBondsWarning` says so).
        imaginary: evolve by ``exp(-t H)`` instead of ``exp(-i t H)``.
        normalize: normalize after every step; default ``True`` for imaginary time and
            ``False`` for real time (the history then shows the norm drift). With ``False`` a norm
            beyond the float range (about 1.8e308; imaginary time grows it as ``e^{-t E_0}``)
            raises :class:`ValueRangeError`.
        observables: name -> spec measured at every ``every``-th step and at ``t = 0`` (see
            :class:`tensor4all.algorithms.evolution.Observables`: a callable ``(state, time)``, an operator
            name or product ``"A*B"``, ``"energy"``, ``"entropy"``, ``"entropies"``, ``"bond_dims"``,
            ``"norm"``, a pair ``("A", "B")`` for the correlation matrix (fermionic names of
            ``H.local`` with their Jordan-Wigner strings: ``("Cdag", "C")``), or
            ``{"pair": ("A", "B"), "string": "S", "sites": [...]}`` for string correlations).
        callback: called with each :class:`EvolutionRecord`; ``progress``: ``True`` draws a progress
            bar over the steps (tqdm, on stderr), a callable is called with a :class:`BondUpdate`
            after each local update (its ``energy`` is nan: no eigenvalue; inside the step, where
            Python's cyclic garbage collector is paused).
        krylov_tol: the error of each local exponential, relative to the local tensor's norm
            (Saad's estimate; at most 60 Krylov vectors).
        allow_nonhermitian: real-time evolution needs a Hermitian ``H``
            (:class:`NonHermitianError` otherwise); ``True`` evolves a non-Hermitian one with
            Arnoldi instead.
        threads: BLAS threads, as for :func:`tensor4all.dmrg`.
        placement: where the steps run (``tenferro.CPU`` or ``tenferro.gpu(i)``; ``None``: tenferro's
            default placement), as for :func:`tensor4all.dmrg`: on a GPU the state, the MPO, the
            environments and the Krylov vectors live on the device (a symmetric state's blocks
            too); observables are measured on a host copy of the state. A traced (differentiated)
            evolution on a GPU raises :class:`InvalidOptionError`.
        conserve: None (default: a symmetric ``psi`` evolves in its sector, a dense one densely),
            ``"none"`` (densely, from ``psi.dense()``), or ``"auto"``: in the sector unless the
            run is small enough that the dense run is faster: its two-site problems ``d_b d_{b+1}
            chi_b^2`` (``chi_b`` the smaller of ``max_bond`` and the sector's bond; one-site TDVP:
            of the largest bond of ``psi``) averaged over the bonds at most
            :data:`~tensor4all.algorithms.evolution.AUTO_DENSE_BELOW` (measured). Then it runs
            densely from ``psi.dense()`` and the final state is dense; on a GPU always in the
            sector. The choice and its reason are logged (logger ``"tensor4all"``, INFO) and
            recorded in the result (``conserve``, ``conserve_reason``).

    Returns:
        :class:`EvolutionResult` with the final state, the output times, the observables
        over them, one record per step and what the run conserved. With traced couplings or
        state, the observables and the state are differentiable (derivative of the discrete
        steps).
    """
    if not isinstance(psi, MPS):
        raise Tensor4allTypeError(f"tdvp: psi must be an MPS, got {type(psi).__name__}")
    check_hamiltonian_arg(H, "tdvp")
    n_steps = time_grid(t_final, dt, "tdvp")
    dt = float(dt)
    two_site = check_bool(two_site, "tdvp: two_site")
    max_bond = check_positive_int(max_bond, "tdvp: max_bond")
    cutoff = check_cutoff(cutoff, "tdvp: cutoff")
    imaginary = check_bool(imaginary, "tdvp: imaginary")
    normalize = imaginary if normalize is None else check_bool(normalize, "tdvp: normalize")
    every = check_every(every, "tdvp")
    callback = check_callable(callback, "tdvp: callback")
    bar = StepBar(n_steps, "tdvp") if progress is True else None
    progress = None if progress is True else check_callable(progress, "tdvp: progress")
    krylov_tol = check_real(krylov_tol, "tdvp: krylov_tol", low=0.0)
    if not 0.0 < krylov_tol < 1.0:
        raise InvalidOptionError(f"tdvp: krylov_tol must lie in (0, 1), got {krylov_tol!r}")
    allow_nonhermitian = check_bool(allow_nonhermitian, "tdvp: allow_nonhermitian")
    threads = check_threads(threads)
    placement = check_placement(placement, "tdvp")
    H0 = hamiltonian_at(H, 0.5 * dt, "tdvp", psi.phys_dims)
    real = imaginary and not psi.dtype.is_complex and not H0.dtype.is_complex
    chi = max_bond if two_site else max(psi.bond_dims, default=1)
    psi, reason = choose_conserve(
        None if placement.is_gpu and conserve == "auto" else conserve, psi, chi, "tdvp", real, "tdvp"
    )
    if placement.is_gpu and conserve == "auto" and psi.symmetric:
        reason += " (conserve='auto' on a GPU: the sizes where dense runs faster were measured on the CPU)"
    check_compatible(psi, H0)
    obs = Observables(observables, psi.L, H0.local, "tdvp")
    if not two_site:
        _warn_frozen_bonds(psi, max_bond)
    else:
        _warn_unreached_terms(H0, psi, max_bond)
    with blas_threads(threads, max_bond), device_scope(placement):
        run = _Run(
            H, psi, dt, two_site, max_bond, cutoff, imaginary, normalize, krylov_tol, allow_nonhermitian, placement
        )
        times = [0.0]
        obs.record(psi, 0.0, hamiltonian_at(H, 0.0, "tdvp", psi.phys_dims) if obs.funcs else H0)
        history: list[EvolutionRecord] = []
        for k in range(n_steps):
            rec = run.step(k, progress)
            if k + 1 == n_steps:  # the last time is t_final, not n dt rounded (0.30000000000000004)
                rec.time = float(t_final)
            if bar is not None:
                bar()
            history.append(rec)
            if callback is not None:
                callback(rec)
            if (k + 1) % every == 0 or k + 1 == n_steps:
                times.append(rec.time)
                if obs.funcs:
                    obs.record(run.state(), rec.time, hamiltonian_at(H, rec.time, "tdvp", psi.phys_dims))
    if bar is not None:
        bar.close()
    state = run.state()
    return EvolutionResult(state, np.asarray(times), obs.result(), history, state.conserve, reason)


def _warn_frozen_bonds(psi: MPS, max_bond: int) -> None:
    """:class:`FrozenBondsWarning` when one-site TDVP starts from a product state (every bond 1)
    while some bond could hold more (its full dimension, within the sector for a symmetric
    state, and ``max_bond`` above 1): the bonds stay, so the state stays a product state. A start
    of larger, deliberately small bonds (a variational manifold) is not warned about."""
    if max_bond < 2 or any(chi != 1 for chi in psi.bond_dims):
        return
    full = full_bond_dims(psi)
    if max(full, default=1) > 1:
        b = full.index(max(full))
        warnings.warn(
            f"tdvp: one-site TDVP keeps the bond dimensions of psi, a product state (every bond 1; bond {b} could "
            f"hold {min(full[b], max_bond)}), so the evolution stays a product state. Grow the bonds first: "
            "two_site=True for the first steps (or the whole run), then one-site",
            FrozenBondsWarning,
            stacklevel=3,
        )


def _warn_unreached_terms(H: MPO, psi: MPS, max_bond: int) -> None:
    """:class:`FrozenBondsWarning` when two-site TDVP starts from a product state (every bond 1) and
    ``H`` (from an OpSum) has a term on sites more than one apart: the projection onto the two-site
    tangent space gives such a term only its mean-field part until the nearer terms have grown the
    bonds it crosses, an error that does not shrink with ``dt``. The spin ladder from aligned rungs
    stayed frozen (every ``<Sz_i>`` off by up to 0.37 at t = 1); spinless fermions on a ladder were
    off by 3-5%. Long-range terms from an entangled start are not warned about (their projection
    error shrinks as the bonds grow, as in every TDVP code)."""
    opsum = getattr(H, "opsum", None)
    if opsum is None or max_bond < 2 or any(chi != 1 for chi in psi.bond_dims):
        return
    for term in opsum.terms:
        sites = sorted({site for _, site in term.ops})
        if sites[-1] - sites[0] > 1 and not (is_scalar_number(term.coef) and term.coef == 0):
            warnings.warn(
                f"tdvp: two-site TDVP starts from a product state (every bond 1), and H has terms on sites more than "
                f"one apart (sites {sites[0]} and {sites[-1]} in one of them): the two-site projection sees such a term "
                "only through bonds the nearer terms have grown, so the evolution can stay frozen or go wrong, by an "
                "error that does not shrink with dt. Grow the bonds first: a few steps of tebd (it applies two-site "
                "terms at any distance by swap gates), then tdvp; or run tebd throughout",
                FrozenBondsWarning,
                stacklevel=3,
            )
            return


class _Run:
    """The engine of one evolution: the backend for the state's kind (dense, sectors, traced),
    rebuilt from the current state whenever the Hamiltonian changes with time.

    A concrete run starts every step from a state of unit norm (TDVP's steps do not depend on the
    norm: the tangent space, the relative cutoff and the relative Krylov tolerance are those of the
    direction) and carries the norm in ``size`` (since the last normalization; ``normalize=False``:
    the state is ``size`` times the backend's), so the backends' sums of squares never meet a norm
    past 1e154. A traced run keeps the norm in the backend's state (tenferro's norms are scaled; its
    derivative is then that of the steps as they were). A norm outside the float range raises
    :class:`ValueRangeError`."""

    def __init__(
        self,
        H: Any,
        psi: MPS,
        dt: float,
        two_site: bool,
        max_bond: int,
        cutoff: float,
        imaginary: bool,
        normalize: bool,
        krylov_tol: float,
        allow_nonhermitian: bool,
        placement: Any,
    ):
        self.H, self.dt, self.two_site, self.placement = H, dt, two_site, placement
        self.normalize = normalize
        self.max_bond, self.cutoff, self.krylov_tol = max_bond, cutoff, krylov_tol
        self.imaginary, self.allow_nonhermitian = imaginary, allow_nonhermitian
        self.tau = -dt if imaginary else -1j * dt
        self.time_dependent = not isinstance(H, MPO)
        self.dims = list(psi.phys_dims)
        H0 = hamiltonian_at(H, 0.5 * dt, "tdvp", self.dims)
        self.traced = any_traced(leaves_of(psi.tensors)) or any_traced(H0.tensors)
        self.grading: Grading | None = psi._grading if psi.symmetric else None
        self.conserve = psi.conserve if psi.symmetric else None
        if self.traced and psi.symmetric:
            psi = psi.dense()  # the traced backend is dense; the result keeps no sectors
            self.grading = None
        if placement.is_gpu and self.traced:
            raise InvalidOptionError(
                "tdvp: traced (differentiated) states and Hamiltonians evolve on the CPU only; "
                "give placement=tenferro.CPU"
            )
        self.hermitian = True
        nrm = psi.norm()  # scaled: finite up to the float range
        size = _float(nrm)
        if not self.traced and math.isfinite(size) and (0.0 < size < 1e-150 or size > 1e150):
            psi = psi / size  # the backends' norms sum unscaled squares: they get a state of norm 1
        self.engine = self._engine(H0, psi)  # checks psi (finite, norm not 0)
        if size == math.inf:
            raise ValueRangeError(
                "tdvp: the initial state's norm exceeds the float range (about 1.8e308); divide psi by a large "
                "factor (or psi.normalize()) first"
            )
        # the evolution keeps the start's norm: the backend's state is normalized here, whatever
        # its constructor did with the norm (the sector backend keeps it, the dense ones drop it),
        # then the norm of ``psi`` carried in ``size`` (concrete) or put back (traced)
        self.engine.backend.normalize()
        self.size = size
        if self.traced:
            self.engine.backend.scale(nrm)
            self.size = 1.0

    @property
    def backend(self) -> Any:
        return self.engine.backend

    def _numpy_ws(self, H: MPO) -> list[np.ndarray]:
        """The MPO tensors as NumPy arrays (a traced MPO: their concrete values), checked to be
        finite and Hermitian (unless allowed or in imaginary time)."""
        ws = [np.ascontiguousarray(np.asarray(_concrete(w)) if self.traced else to_numpy(w, "tdvp")) for w in H.tensors]
        check_finite_arrays(ws, "tdvp: the Hamiltonian (MPO)")
        defect, _ = hermiticity(ws)
        if defect > HERMITIAN_TOL:
            if not (self.allow_nonhermitian or self.imaginary):
                raise NonHermitianError(
                    "tdvp: real-time evolution needs a Hermitian Hamiltonian, but H differs from its adjoint "
                    f"(||H - H^dagger|| / ||H|| = {math.sqrt(defect):.3g}); add the Hermitian conjugate of every "
                    "non-Hermitian term, or pass allow_nonhermitian=True to evolve by Arnoldi"
                )
            self.hermitian = False
        return ws

    def _engine(self, H: MPO, psi: MPS) -> Sweep:
        """The engine with the state ``psi`` (only at the start; later steps reuse the backend's)."""
        if self.traced:
            self._numpy_ws(H)
            engine = Sweep(make_backend(list(H.tensors), list(psi.tensors)), None)
        elif self.grading is not None:
            ws = self._numpy_ws(H)
            check_finite_arrays(leaves_of(psi.tensors), "tdvp: psi")
            if not float(psi.norm()) > 0.0:
                raise ZeroNormError("tdvp: the initial state has norm 0")
            spec = self._sector_spec(ws, H.local)
            start = SectorStart(spec.w_charges, spec.q, None, psi.tensors, spec.modulus, psi.center == 0)
            engine = Sweep(make_backend(ws, sector=start, placement=self.placement), None)
        else:
            ws = self._numpy_ws(H)
            arrays = [np.ascontiguousarray(to_numpy(a, "tdvp")) for a in psi.tensors]
            check_finite_arrays(arrays, "tdvp: psi")
            if not float(psi.norm()) > 0.0:
                raise ZeroNormError("tdvp: the initial state has norm 0")
            engine = Sweep(make_backend(ws, arrays, placement=self.placement), None)
        if not self.imaginary:
            engine.backend.promote(np.complex128)
        return engine

    def _sector_spec(self, ws: list[np.ndarray], local: str | None) -> SectorSpec:
        """The charges of ``H``'s bond states for the state's conserved charge
        (:class:`NonConservingError` if ``H`` does not conserve it)."""
        g = self.grading
        assert g is not None and self.conserve is not None
        try:
            spec = resolve_sector(self.conserve, None, local, ws, None)
        except InvalidOptionError as e:
            raise InvalidOptionError(
                f"tdvp: the state is symmetric ({self.conserve}), but the Hamiltonian's local "
                f"space cannot carry that charge: {e}"
            ) from None
        if spec is None or [list(q) for q in spec.q] != [list(q) for q in g.q]:
            raise InvalidOptionError(
                f"tdvp: the symmetric state's basis charges ({self.conserve}) differ from those "
                f"of the Hamiltonian's local space {local!r}"
            )
        return spec

    def _rebuild(self, H: MPO) -> None:
        """The current state under the Hamiltonian ``H`` (time-dependent ``H``): the backend's
        operator and environments replaced, the state kept."""
        b = self.engine.backend
        if self.traced:
            self._numpy_ws(H)
            b.set_operator(list(H.tensors))
        elif self.grading is not None:
            ws = self._numpy_ws(H)
            b.set_operator(ws, self._sector_spec(ws, H.local).w_charges)
        else:
            b.set_operator(self._numpy_ws(H))

    def step(self, k: int, progress: Any) -> EvolutionRecord:
        if self.time_dependent and k > 0:
            self._rebuild(hamiltonian_at(self.H, (k + 0.5) * self.dt, "tdvp", self.dims))
        st = self.engine.evolve(
            self.tau,
            two_site=self.two_site,
            max_bond=self.max_bond,
            cutoff=self.cutoff,
            krylov_tol=self.krylov_tol,
            hermitian=self.hermitian,
            step_no=k + 1,
            progress=progress,
        )
        nrm = self.engine.backend.state_norm()
        factor = _float(nrm)
        size = self.size * factor
        if not (factor > 0.0 and sys.float_info.min <= size < math.inf):
            where = f"step {k + 1} (t = {(k + 1) * self.dt:g})"
            check_norm_range("tdvp", where, factor, size, self.normalize, self.traced)
        if self.normalize or (factor > 0.0 and not self.traced):
            self.engine.backend.normalize()
        self.size = size if not (self.normalize or self.traced) else 1.0
        return EvolutionRecord(
            k + 1,
            (k + 1) * self.dt,
            st.max_bond,
            st.max_truncation_error,
            size,
            st.seconds,
            st.matvecs,
            st.max_krylov_error,
        )

    def state(self) -> MPS:
        """The evolved state: the backend's, times the carried norm (``normalize=False``)."""
        sites = self.engine.backend.site_tensors(self.grading)
        mps = MPS(sites) if self.grading is None else MPS._symmetric(sites, self.grading)
        return mps * self.size if self.size != 1.0 else mps


def _float(x: Any) -> float:
    """A norm (a float, a tenferro scalar, a tidu tracer) as a float."""
    return float(np.asarray(_concrete(x)).real)


def _concrete(x: Any) -> Any:
    """A concrete value of ``x`` (a traced norm: its primal)."""
    c = concrete(x)
    return x if c is None else c
