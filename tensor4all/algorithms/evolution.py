"""What every time evolution shares (``tdvp``, ``tebd``): the time grid, the Hamiltonian at
a time, the observables measured along the way and the result.

* :func:`time_grid` checks ``t`` and ``dt`` (``dt > 0``, ``t >= 0`` a multiple of ``dt``
  within a relative ``1e-9``) and gives the number of steps.
* :func:`hamiltonian_at` evaluates a time-dependent Hamiltonian (a callable of the time,
  taken at the midpoint of each step: the exponential midpoint rule, second order).
* :class:`Observables` turns the user's mapping ``name -> spec`` into callables of
  ``(state, time)`` and collects their values over time: a spec is a callable, an operator
  name of the local space (its expectation at every site, shape ``(L,)``), ``"energy"``
  (``<H>`` with the Hamiltonian at that time), ``"entropy"`` (the middle bond's entanglement
  entropy), ``"entropies"`` (every bond's), ``"bond_dims"``, ``"norm"``, a pair of
  operators ``("A", "B")`` (the correlation matrix ``<A_i B_j>`` of all pairs, not connected,
  shape ``(L, L)``: :meth:`MPS.correlation_matrix`), or a mapping ``{"pair": ("A", "B"),
  "string": "S", "sites": [...]}`` (the same with a string operator on the sites between,
  over some sites only). An operator is a name or a product ``"A*B"`` of the local space of
  the Hamiltonian (``H.local``, which ``tdvp`` and ``tebd`` pass on), so fermionic names
  resolve: ``("Cdag", "C")`` on ``"fermion"`` sites is the one-particle density matrix
  with its Jordan-Wigner strings, ``"Cdagup*Cdn"`` an even product at every site.
* :class:`EvolutionResult` and :class:`EvolutionRecord` hold the final state, the output times,
  the observables (arrays over time; traced values stay tidu values, stacked) and the
  per-step history.
"""

from __future__ import annotations

import logging
import math
import numbers
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    Tensor4allTypeError,
    ValueRangeError,
)
from ..networks.mpo import MPO, expectation
from ..linalg.gemm_list import native_installed
from ..networks.mps import MPS
from ..tools.checks import check_real

__all__ = [
    "EvolutionRecord",
    "EvolutionResult",
    "Observables",
    "time_grid",
    "hamiltonian_at",
    "check_hamiltonian_arg",
    "check_every",
    "check_norm_range",
    "choose_conserve",
    "full_bond_dims",
    "AUTO_DENSE_BELOW",
    "auto_dense",
    "NAMED_OBSERVABLES",
]

_log = logging.getLogger("tensor4all")

#: the observables named by a string other than an operator name
NAMED_OBSERVABLES = ("energy", "entropy", "entropies", "bond_dims", "norm")

#: the keys of a mapping spec (a string correlation): "pair" is required
CORRELATION_KEYS = ("pair", "string", "sites")

_SPECS = (
    f"a callable (state, time) -> value, an operator name or product 'A*B', one of {NAMED_OBSERVABLES}, "
    "a pair of operators ('A', 'B'), or a mapping {'pair': ('A', 'B'), 'string': 'S', 'sites': [...]}"
)


@dataclass
class EvolutionRecord:
    """One time step of the history."""

    step: int  #: 1-based step number
    time: float  #: the time reached
    max_bond: int  #: largest bond dimension after the step
    max_truncation_error: float  #: largest relative discarded weight of the step
    norm: float  #: norm of the state after the step (before any normalization)
    seconds: float  #: wall time of the step
    matvecs: int = 0  #: effective-Hamiltonian products (TDVP) or gate applications (TEBD)
    max_krylov_error: float = 0.0  #: TDVP: largest error estimate of the step's local exponentials

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class EvolutionResult:
    """``state`` (the MPS at the final time), ``times`` (the output times, starting at 0),
    ``observables`` (name -> values over ``times``, first axis time; a list of one array per time
    where a callable's values change shape), ``history`` (one
    :class:`EvolutionRecord` per step), and what the run conserved and why (``conserve``: the
    charge, ``"Sz"``, ``"N,Sz"``, or None for a dense run; ``conserve_reason``: a sentence, see
    :func:`choose_conserve`)."""

    state: MPS
    times: np.ndarray
    observables: dict[str, Any] = field(default_factory=dict)
    history: list[EvolutionRecord] = field(default_factory=list)
    conserve: str | None = None
    conserve_reason: str = ""

    def __iter__(self):  # state, observables = tdvp(...)
        return iter((self.state, self.observables))

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (concrete runs only): times, observables as nested lists
        (complex values as ``[re, im]`` pairs), history as records."""
        return {
            "times": [float(x) for x in self.times],
            "observables": {k: _jsonable(v) for k, v in self.observables.items()},
            "history": [r.as_dict() for r in self.history],
            "conserve": self.conserve,
            "conserve_reason": self.conserve_reason,
        }


def _jsonable(v: Any) -> Any:
    """``v`` as JSON's values: arrays as nested lists (complex entries ``[re, im]``), lists (the
    values of times whose shapes differ) and mappings (a callable's) entry by entry."""
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    a = np.asarray(v)
    if a.dtype == object:
        if a.ndim:
            return [_jsonable(x) for x in a]
        x = a.item()
        if isinstance(x, (Mapping, list, tuple)):
            return _jsonable(x)
        raise Tensor4allTypeError(
            f"as_dict: an observable's value of type {type(x).__name__} has no JSON form; "
            "return numbers, arrays, lists or dicts of them"
        )
    if np.iscomplexobj(a):
        return np.stack([a.real, a.imag], axis=-1).tolist()
    return a.tolist()


MAX_STEPS = 2**53  # beyond it a step count is no longer an exact float: t / dt means nothing


def time_grid(t: Any, dt: Any, what: str) -> int:
    """The number of steps ``n = t / dt``: ``dt > 0`` finite, ``t >= 0`` finite and a multiple
    of ``dt`` within a relative ``1e-9`` (else :class:`InvalidOptionError` naming both), and
    ``n`` below ``2**53`` (else :class:`ValueRangeError`: a ``dt`` too small for ``t``)."""
    dt = check_real(dt, f"{what}: dt (the time step, a positive number)", low=0.0)
    t = check_real(t, f"{what}: t (the final time, a non-negative number)", low=0.0)
    if not dt > 0.0:
        raise InvalidOptionError(f"{what}: dt must be positive, got {dt!r}")
    ratio = t / dt
    if not ratio < MAX_STEPS:
        raise ValueRangeError(
            f"{what}: dt = {dt!r} is too small for t = {t!r}: t / dt = {ratio:.3g} steps, beyond "
            f"the {MAX_STEPS:.3g} a step count can hold; give a larger dt"
        )
    n = round(ratio)
    if abs(n * dt - t) > 1e-9 * max(abs(t), dt):
        raise InvalidOptionError(
            f"{what}: t = {t!r} is not a multiple of dt = {dt!r} (t / dt = {t / dt!r}); "
            "give a t that is a whole number of steps"
        )
    return int(n)


def check_every(every: Any, what: str) -> int:
    """``every`` (observe every n-th step) as a positive integer, else :class:`InvalidOptionError`."""
    if isinstance(every, bool) or not isinstance(every, numbers.Integral) or every < 1:
        raise InvalidOptionError(f"{what}: every (observe every n-th step) must be a positive integer, got {every!r}")
    return int(every)


def check_hamiltonian_arg(H: Any, what: str) -> None:
    """``H`` is an :class:`MPO` or a callable of the time returning one."""
    if not (isinstance(H, MPO) or callable(H)):
        raise Tensor4allTypeError(
            f"{what}: H must be an MPO or a callable t -> MPO (a time-dependent Hamiltonian), got {type(H).__name__}"
        )


def hamiltonian_at(H: Any, time: float, what: str, dims: Sequence[int] | None = None) -> MPO:
    """``H`` itself, or ``H(time)`` for a time-dependent one (checked to be an :class:`MPO`
    and, given the state's physical dimensions ``dims``, to act on the state's sites)."""
    if isinstance(H, MPO):
        return H
    out = H(time)
    if not isinstance(out, MPO):
        raise Tensor4allTypeError(
            f"{what}: the time-dependent Hamiltonian returned {type(out).__name__} at "
            f"t = {time:g}; it must return an MPO"
        )
    if dims is not None and list(out.phys_dims) != list(dims):
        got = f"{out.L} sites" if out.L != len(dims) else f"physical dimensions {list(out.phys_dims)}"
        want = f"{len(dims)} sites" if out.L != len(dims) else f"{list(dims)}"
        raise DimensionMismatchError(
            f"{what}: the time-dependent Hamiltonian returned an MPO of {got} at "
            f"t = {time:g}, but the state has {want}; H(t) must act on the state's sites "
            "at every time"
        )
    return out


class Observables:
    """The user's observables as callables ``(state, time, H) -> value``, and their values
    collected over time (:meth:`record`, :meth:`result`)."""

    def __init__(self, spec: Mapping[str, Any] | None, L: int, local: str | None, what: str):
        if spec is None:
            spec = {}
        if not isinstance(spec, Mapping):
            raise Tensor4allTypeError(
                f"{what}: observables must be a mapping name -> spec ({_SPECS}), got {type(spec).__name__}"
            )
        self.what = what
        self.local = local
        self.funcs: dict[str, Callable[[MPS, float, Any], Any]] = {}
        for name, s in spec.items():
            if not isinstance(name, str):
                raise Tensor4allTypeError(f"{what}: observable names must be strings, got {name!r}")
            if not name.strip():
                raise InvalidOptionError(f"{what}: observable names must not be empty, got {name!r}")
            self.funcs[name] = self._compile(name, s, L)
        self.values: dict[str, list[Any]] = {name: [] for name in self.funcs}

    def _compile(self, name: str, s: Any, L: int) -> Callable[[MPS, float, Any], Any]:
        local = self.local
        if callable(s) and not isinstance(s, str):
            return lambda psi, t, H: s(psi, t)
        if isinstance(s, str):
            if s == "energy":
                return lambda psi, t, H: _real_value(expectation(psi, H))
            if s == "entropy":
                return lambda psi, t, H: psi.entanglement_entropy(L // 2 - 1) if L > 1 else 0.0
            if s == "entropies":
                return lambda psi, t, H: np.asarray(psi.entanglement_entropy()) if L > 1 else np.zeros(0)
            if s == "bond_dims":
                return lambda psi, t, H: np.asarray(psi.bond_dims)
            if s == "norm":
                return lambda psi, t, H: psi.norm()
            return lambda psi, t, H: _sites(psi.expect(s, None, local))  # every site in one pass
        if _is_pair(s):
            a, b = s
            return lambda psi, t, H: psi.correlation_matrix(a, b, local=local)
        if isinstance(s, Mapping):
            return self._string_correlation(name, s)
        raise Tensor4allTypeError(f"{self.what}: observable {name!r} has spec {s!r}; give {_SPECS}")

    def _string_correlation(self, name: str, s: Mapping[str, Any]) -> Callable[[MPS, float, Any], Any]:
        """A mapping spec ``{"pair": ("A", "B"), "string": "S", "sites": [...]}``: the keys checked here,
        the operators and sites when first measured (against the state's sites)."""
        bad = [k for k in s if k not in CORRELATION_KEYS]
        if bad:
            raise InvalidOptionError(
                f"{self.what}: observable {name!r}: unknown key {bad[0]!r}; a correlation spec "
                f"has the keys {', '.join(map(repr, CORRELATION_KEYS))} ('pair' required)"
            )
        if not _is_pair(s.get("pair")):
            raise Tensor4allTypeError(
                f"{self.what}: observable {name!r}: 'pair' must be a pair of operator names or "
                f"products ('A', 'B'), got {s.get('pair')!r}"
            )
        (a, b), string, sites, local = s["pair"], s.get("string"), s.get("sites"), self.local
        return lambda psi, t, H: psi.correlation_matrix(a, b, sites, string, local)

    def record(self, psi: MPS, time: float, H: Any) -> None:
        """Measure every observable of the state ``psi`` at ``time`` (``H``: the Hamiltonian then)."""
        for name, f in self.funcs.items():
            self.values[name].append(f(psi, time, H))

    def result(self) -> dict[str, Any]:
        """name -> values over time (a NumPy array, or a stacked tenferro value when traced)."""
        return {name: _stack(vals) for name, vals in self.values.items()}


def _is_pair(s: Any) -> bool:
    """A pair of operator names or products ``("A", "B")``."""
    return isinstance(s, tuple) and len(s) == 2 and all(isinstance(x, str) for x in s)


def _real_value(x: Any) -> Any:
    """The real part of a scalar: a tenferro value when traced (the state or the Hamiltonian may
    carry the tracer), else a float."""
    return tf.real(x) if isinstance(x, tidu.Tracer) else float(np.real(complex(x)))


def _sites(values: Any) -> Any:
    """A profile over the sites as :func:`_stack` gives it: NumPy for a concrete value, the
    traced tensor itself (so gradients flow)."""
    return values if isinstance(values, tidu.Tracer) else _real_if_real(np.asarray(values))


def _stack(values: list[Any]) -> Any:
    """Values over time (or sites) as one array: NumPy for concrete values, a stacked
    tenferro value when any is traced (so gradients flow through the observables); a list of
    arrays, one per time, where their shapes differ (a callable's Schmidt spectrum, whose length
    follows the bond: stacking them failed after the whole run)."""
    if any(isinstance(v, tidu.Tracer) for v in values):
        return tf.stack([v if isinstance(v, (tidu.Tracer, tf.Tensor)) else tf.asarray(np.asarray(v)) for v in values])
    arrays = [np.asarray(v) for v in values]
    if len({a.shape for a in arrays}) > 1:
        return [_real_if_real(a) for a in arrays]
    return _real_if_real(np.asarray(arrays) if arrays else np.zeros(0))


def _real_if_real(out: np.ndarray) -> np.ndarray:
    """``out``, real when its imaginary part is zero."""
    return out.real.copy() if np.iscomplexobj(out) and not np.any(out.imag) else out


# ---- what an evolution conserves ------------------------------------------------------------
#: the ``conserve=`` of :func:`tensor4all.tdvp` and :func:`tensor4all.tebd`: None (the default:
#: the state decides), ``"auto"`` or ``"none"``
EVOLVE_CONSERVE = (None, "auto", "none")

AUTO_DENSE_BELOW = {
    ("tebd", "complex"): 4700,
    ("tebd", "real"): 11000,
    ("tdvp", "complex"): 2200,
    ("tdvp", "real"): 7900 if native_installed() else 14600,
}
"""``conserve="auto"`` runs a symmetric state densely where its size, the two-site problem
``d_b d_{b+1} chi_b^2`` averaged over the bonds ``b`` (``chi_b`` the smaller of ``max_bond`` and
the bond the sector holds there, :func:`full_bond_dims`), is at most this, by method and
arithmetic (real: imaginary time of a real state under a real Hamiltonian). Measured with
``benchmarks/conserve_small.py --sizes`` (one core, CPU time, 4 steps at bonds held at ``chi``
from a random symmetric state): the conserved time over the dense one at each ``chi``, with the
size in brackets, around the crossover:

======  =======  ====================================  ====================================
method  numbers  Heisenberg chain, U(1) Sz, L = 16     Hubbard chain, (N, Sz), L = 12
======  =======  ====================================  ====================================
tebd    complex  chi 24: 1.26 (1257), 32: 0.89 (2093)   chi 16: 1.19 (3398), 24: 0.80 (6656)
tebd    real     chi 48: 1.02 (3799), 64: 0.68 (6189)   chi 24: 1.53 (6656), 32: 0.98 (11217)
tdvp    complex  chi 32: 1.03 (2093), 48: 0.66 (3799)   chi 12: 1.03 (1932), 16: 0.81 (3398)
tdvp    real     chi 32: 1.21 (2093), 48: 0.90 (3799)   chi 24: 1.12 (6656), 32: 0.79 (11217)
======  =======  ====================================  ====================================

(The ``tdvp``/``real`` row was measured on 2026-11-30 with the products by blocks as one native
call, the ``fast`` extra (:mod:`tensor4all.linalg.gemm_list`): threshold 7900. Without it (Numba
absent or ``TENSOR4ALL_NATIVE=0`` when the module is imported) the earlier measurement holds,
chi 48: 1.24 (3799), 64: 0.72 (6189) and chi 32: 1.22 (11217), 48: 0.57 (24250): threshold 14600.)

Each threshold is where the later of the two models crosses (interpolated in the logarithm of
the size), so that where ``"auto"`` conserves, conserving was the faster for both. The size is
what the run can reach: a run that stops before its bonds grow there (a short evolution from a
product state) is smaller, and there the dense run is the faster by more. A random state spreads
over more sectors than a physical one, in smaller blocks: physical runs cross earlier (on the
chains of ``benchmarks/conserve_small.py``, imaginary-time TDVP of the Hubbard chain at
``max_bond = 32``, sizes 8265, 11217 and 12595 at L = 8, 12, 16, ran 0.91, 0.75 and 0.72 times as
long conserved, and ``"auto"`` conserves them; the Heisenberg chain's, sizes 242 to 2093, 1.19 to
1.25 times as long, and ``"auto"`` runs them densely)."""


def full_bond_dims(psi: MPS) -> list[int]:
    """The largest useful dimension of each bond: ``min(d^left, d^right)`` for a dense state; for a
    symmetric one, summed over the bond charges ``l``, ``min(#left states of charge l, #right
    states of charge total - l)`` (the sector's Schmidt rank bound)."""
    dims = psi.phys_dims
    if not psi.symmetric:
        return [min(math.prod(dims[: b + 1]), math.prod(dims[b + 1 :])) for b in range(psi.L - 1)]
    phys = [t.legs[1] for t in psi.tensors]
    g = phys[0].symmetry

    def counts(legs: list) -> list[dict]:
        out, cur = [], {g.identity: 1}
        for leg in legs:
            nxt: dict = {}
            for c, n in cur.items():
                for q, d in leg.sectors.items():
                    k = g.add(c, q)
                    nxt[k] = nxt.get(k, 0) + n * d
            cur = nxt
            out.append(cur)
        return out

    left, right = counts(phys[:-1]), counts(phys[:0:-1])[::-1]
    total = psi._group_charge
    return [
        sum(min(n, right[b].get(g.add(total, g.negate(c)), 0)) for c, n in left[b].items()) for b in range(psi.L - 1)
    ]


def choose_conserve(conserve: Any, psi: MPS, chi: int, method: str, real: bool, what: str) -> tuple[MPS, str]:
    """The state an evolution runs on and a sentence saying what it conserves and why.

    ``conserve``: None (a symmetric state evolves in its sector, a dense one densely), ``"none"``
    (densely: a symmetric state as ``psi.dense()``), or ``"auto"``: a symmetric state in its sector
    unless the run is small, its size (the two-site problem ``d_b d_{b+1} chi_b^2`` averaged over
    the bonds, ``chi_b`` the smaller of ``chi``, the largest bond the run can reach, and the
    sector's bond, :func:`full_bond_dims`) at most :data:`AUTO_DENSE_BELOW` for ``method`` and
    the arithmetic (``real``), where the dense run is the faster one: then densely, and the choice
    is logged (logger ``"tensor4all"``, level INFO) and recorded
    (:attr:`EvolutionResult.conserve_reason`)."""
    if not (conserve is None or (isinstance(conserve, str) and conserve in EVOLVE_CONSERVE)):
        raise InvalidOptionError(
            f"{what}: conserve must be None (the state decides), 'auto' or 'none', got {conserve!r}; "
            "the charge and sector are the state's (MPS.product_state(..., conserve=...))"
        )
    if not psi.symmetric:
        return psi, "dense: the state is dense"
    if conserve is None:
        return psi, f"{psi.conserve}: the state is symmetric"
    if conserve == "none":
        return psi.dense(), "dense: conserve='none'"
    dense, reason = auto_dense(psi, chi, method, real)
    if dense:
        _log.info("%s: %s", what, reason)
        return psi.dense(), reason
    return psi, reason


def auto_dense(psi: MPS, chi: int, method: str, real: bool) -> tuple[bool, str]:
    """What ``conserve="auto"`` does with the symmetric state ``psi`` (see :func:`choose_conserve`):
    whether it runs densely, and the sentence saying why (what the command line prints before the
    run)."""
    dims, full = psi.phys_dims, full_bond_dims(psi)
    sizes = [dims[b] * dims[b + 1] * min(chi, f) ** 2 for b, f in enumerate(full)]
    size, below = round(sum(sizes) / max(len(sizes), 1)), AUTO_DENSE_BELOW[(method, "real" if real else "complex")]
    if size <= below:
        return True, (
            f"dense: conserve='auto' and the run's size, d_b d_(b+1) chi_b^2 averaged over the bonds = {size} "
            f"(chi_b up to {min(chi, max(full, default=1))}), is at most {below}, where a {method} run in "
            f"{'real' if real else 'complex'} arithmetic is faster dense (AUTO_DENSE_BELOW); the state "
            f"({psi.conserve}) runs as psi.dense()"
        )
    return False, f"{psi.conserve}: conserve='auto' and the run's size, {size}, is above {below}"


def check_norm_range(what: str, where: str, factor: float, size: float, normalize: bool, traced: bool) -> None:
    """The range check of ``tebd``'s and ``tdvp``'s carried norms: :class:`NonFiniteError` for an
    update ``where`` whose norm ``factor`` is NaN, :class:`ValueRangeError` where the norm ``size``
    carried since the last normalization leaves the float range (an exactly annihilated state,
    ``factor`` 0, stays 0). The remedy named is a smaller step where one update overflowed from a
    state of norm 1 (or the run normalizes), else ``normalize=True``."""
    if math.isnan(factor):
        raise NonFiniteError(f"{what}: {where} gave a state of norm NaN; expected finite: take a smaller dt")
    if factor == 0.0 or sys.float_info.min <= size < math.inf:
        return
    one_step = math.isinf(factor) and not (traced and not normalize)  # from a state of norm 1
    how = (
        "take a smaller dt"
        if normalize or one_step
        else "pass normalize=True (the default in imaginary time: each record's norm is then its step's "
        "growth, and log ||psi(t)|| the sum of their logs)"
    )
    raise ValueRangeError(
        f"{what}: after {where} the norm of the state {'overflows' if size > 1.0 else 'underflows'} the float "
        f"range (about 2.2e-308 to 1.8e308: ||psi|| = {size:.3g}), so its entries cannot be represented; "
        f"expected a norm in range: {how}"
    )
