"""What one point of a parameter scan computes.

* :class:`ScanTask` -- a simulation spec: a built-in model, its fixed parameters, the
  algorithm (DMRG) and its settings, and the observables to measure. Calling it with a
  point's parameters (``task(g=0.5)``) runs that point in this process and returns its
  row; :func:`tensor4all.scan` sends the same call to a Dask worker, so a scan's rows equal
  those of a serial loop bit for bit (fixed seed, one BLAS thread).
* :func:`run_point` -- the function a worker runs: the task, its time and the worker.

Observables are strings: ``"X"`` (the average of ``<X_i>`` over the sites), ``"X@3"``
(``<X_3>``; negative sites count from the end, ``"Z@-1"``) and ``"Z@0*Z@-1"`` (the
correlation ``<Z_0 Z_{L-1}>``), with the operator names of the model's local space.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from .. import models
from ..algorithms.dmrg import dmrg
from ..algorithms.dmrg_checks import check_hamiltonian, check_schedule, default_conserve, mpo_array
from ..linalg.eigensolver import get_solver
from ..tools.errors import InvalidOptionError, NonFiniteError, SiteOutOfRangeError, Tensor4allError, Tensor4allTypeError
from ..sites.local_spaces import UnknownOperatorError
from ..sites.local_spaces import local_space
from ..networks.mpo import MPO
from ..networks.mps import MPS
from ..algorithms.sector_run import CONSERVE_CHOICES, resolve_sector
from ..tools.threads import check_threads
from ..tools.checks import check_bool, check_coupling, check_positive_int, check_real, check_seed
from ._identity import function_identity

__all__ = [
    "ScanTask",
    "run_point",
    "MODEL_PARAMETERS",
    "SETTINGS",
    "RESULT_COLUMNS",
    "META_COLUMNS",
    "describe",
    "check_result",
    "not_finite",
]

#: the parameters of each built-in model (fixed in ``params`` or scanned)
MODEL_PARAMETERS = {
    "heisenberg": ("L", "J", "Jz", "h", "spin"),
    "xxz": ("L", "J", "Jz", "h", "spin"),
    "tfim": ("L", "J", "g"),
}
_LOCAL_SPACE = {"heisenberg": "spin-1/2", "xxz": "spin-1/2", "tfim": "pauli"}
ALGORITHMS = ("dmrg",)
#: the DMRG settings (keywords of :func:`tensor4all.dmrg`, and ``dtype`` of the start state)
SETTINGS = (
    "max_bond",
    "sweeps",
    "cutoff",
    "tol",
    "two_site",
    "noise",
    "seed",
    "eigensolver",
    "compute_variance",
    "threads",
    "conserve",
    "sector",
    "dtype",
)
#: the columns a :class:`ScanTask` row has besides its observables (and their types)
RESULT_COLUMNS = {
    "energy": "double",
    "variance": "double",
    "entropy": "double",
    "bond_dim": "int64",
    "sweeps_run": "int64",
    "converged": "bool",
}
#: the columns every row has after its results: time of the point, worker, status, error
META_COLUMNS = {"seconds": "double", "worker": "string", "status": "string", "error": "string"}
_DTYPES = ("float64", "complex128")
_FACTOR = re.compile(r"^([^@*\s]+)(?:@(-?\d+))?$")


# ---- checks of single values: one per parameter and setting ------------------------------
def _spin(value: Any, what: str) -> str:
    if not isinstance(value, str) or value not in ("1/2", "1"):
        raise InvalidOptionError(f"{what}: unknown spin {value!r}; valid spins: 1/2, 1")
    return value


def _schedule(kind: str) -> Callable[[Any, str], Any]:
    def check(value: Any, what: str) -> Any:
        check_schedule(list(value) if isinstance(value, (list, tuple)) else value, what, kind)
        return tuple(value) if isinstance(value, (list, tuple)) else value

    return check


def _noise(value: Any, what: str) -> Any:
    return None if value is None else _schedule("noise")(value, what)


def _sector(value: Any, what: str) -> Any:
    return None if value is None else check_real(value, what)


def _conserve(value: Any, what: str) -> str | None:
    if value is not None and value not in CONSERVE_CHOICES:
        raise InvalidOptionError(f"{what}: unknown value {value!r}; valid values: None, " + ", ".join(CONSERVE_CHOICES))
    return value


def _eigensolver(value: Any, what: str) -> str:
    get_solver(value)
    return value


def _dtype(value: Any, what: str) -> str:
    if value not in _DTYPES:
        raise InvalidOptionError(f"{what}: unknown dtype {value!r}; valid dtypes: {', '.join(_DTYPES)}")
    return value


_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "L": lambda v, w: check_positive_int(v, w),
    "J": check_coupling,
    "Jz": check_coupling,
    "h": check_coupling,
    "g": check_coupling,
    "spin": _spin,
    "max_bond": _schedule("bond"),
    "cutoff": _schedule("cutoff"),
    "noise": _noise,
    "sweeps": lambda v, w: check_positive_int(v, w),
    "tol": lambda v, w: check_real(v, w, low=0.0),
    "two_site": check_bool,
    "compute_variance": check_bool,
    "seed": check_seed,
    "eigensolver": _eigensolver,
    "threads": lambda v, w: check_threads(v),
    "conserve": _conserve,
    "sector": _sector,
    "dtype": _dtype,
}


def _parse_observable(spec: Any, model: str) -> tuple[tuple[str, int | None], ...]:
    """The factors ``(operator, site or None)`` of an observable of ``model``; typed errors
    for a malformed one and for an operator that is not a Hermitian one of its local space."""
    if not isinstance(spec, str):
        raise Tensor4allTypeError(
            f"ScanTask: an observable is a string such as 'X', 'X@3' or 'Z@0*Z@-1', got {type(spec).__name__} {spec!r}"
        )
    space, ops = _LOCAL_SPACE[model], _hermitian_ops(model)
    factors = []
    for part in spec.split("*"):
        m = _FACTOR.match(part)
        if m is None:
            raise InvalidOptionError(f"ScanTask: observable {spec!r} is not 'OP', 'OP@SITE' or 'A@I*B@J'")
        if m.group(1) not in ops:
            known = m.group(1) in local_space(space).ops  # a non-Hermitian one (S+), else a name it lacks
            raise (InvalidOptionError if known else UnknownOperatorError)(
                f"ScanTask: observable {spec!r}: {m.group(1)!r} is not a Hermitian operator of the model's local "
                f"space {space!r}"
                + ("" if known else " (it has no such operator)")
                + f"; valid operators: {', '.join(ops)}"
            )
        factors.append((m.group(1), None if m.group(2) is None else int(m.group(2))))
    if len(factors) > 2 or (len(factors) == 2 and None in (factors[0][1], factors[1][1])):
        raise InvalidOptionError(f"ScanTask: observable {spec!r}: a correlation names two sites, as 'Z@0*Z@-1'")
    return tuple(factors)


def _check_sites(spec: str, factors: tuple[tuple[str, int | None], ...], L: int, where: str) -> None:
    """:class:`SiteOutOfRangeError` for a site of the observable ``spec`` outside a chain of
    ``L`` sites (negative sites count from the end); ``where`` names the task or the point."""
    for _, i in factors:
        if i is not None and not -L <= i < L:
            raise SiteOutOfRangeError(
                f"{where}: observable {spec!r}: site {i} is outside the chain of L = {L} "
                f"sites; valid sites: 0 .. {L - 1}, or -{L} .. -1 counted from the end"
            )


@functools.cache
def _hermitian_ops(model: str) -> tuple[str, ...]:
    space = local_space(_LOCAL_SPACE[model])
    out = []
    for name, (phase, m) in space.ops.items():
        a = phase * np.asarray(m)
        if np.allclose(a, a.conj().T):
            out.append(name)
    return tuple(out)


def _check_conserve(model: str, conserve: Any, where: str) -> None:
    """The charge ``conserve`` names must be the model's: ``Sz`` (heisenberg/xxz) or ``parity`` (tfim)."""
    own = "parity" if model == "tfim" else "Sz"
    if conserve not in (None, "none", "auto", own):
        raise InvalidOptionError(
            f"{where}: {model} conserves "
            + ("the parity" if own == "parity" else "Sz")
            + f", not {'a parity' if conserve == 'parity' else conserve}; conserve={conserve!r}; "
            f"valid values: None, 'none', 'auto', {own!r}"
        )


def _check_settings(s: Mapping[str, Any], where: str) -> None:
    """Settings that dmrg would refuse together at every point (sweeps of a dmrg run): a
    ``sector`` without a conserved charge, a conserved run from a complex start state."""
    conserve = s.get("conserve")
    if s.get("sector") is not None and "conserve" in s and conserve in (None, "none"):
        raise InvalidOptionError(
            f"{where}: sector={s['sector']!r} needs conserve=... (the charge whose sector it "
            "names): give conserve='Sz' (heisenberg/xxz) or 'parity' (tfim), or drop sector"
        )
    if s.get("dtype") == "complex128" and conserve not in (None, "none"):
        raise InvalidOptionError(
            f"{where}: conserve={conserve!r} runs in float64 (from a real start state); drop "
            "dtype='complex128' or give conserve=None"
        )


def _point_text(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point.items())


# ---- the task --------------------------------------------------------------------------
@dataclass(frozen=True)
class ScanTask:
    """One point of a scan: ``model`` (``"heisenberg"``, ``"xxz"`` or ``"tfim"``, as
    :mod:`tensor4all.models`) with the fixed ``params`` (``L``, ``J``, ``Jz``, ``h``,
    ``spin`` / ``L``, ``J``, ``g``), the ``algorithm`` (``"dmrg"``) with its ``settings``
    (keywords of :func:`tensor4all.dmrg`: ``max_bond``, ``sweeps``, ``cutoff``, ``tol``,
    ``two_site``, ``noise``, ``seed``, ``eigensolver``, ``compute_variance``, ``threads``
    (default 1), ``conserve``, ``sector``; and ``dtype``, of the start state), and the
    ``observables`` to measure in the final state (``"X"``, ``"X@3"``, ``"Z@0*Z@-1"``; their
    operators, and their sites on a chain of the fixed ``L``, are checked when the task is
    built, and a scanned ``L`` by :func:`tensor4all.scan` before any point runs).

    ``params`` and ``settings`` are stored as sorted ``(name, value)`` pairs (lists as
    tuples), so a task is hashable, compares by value and pickles. A scanned name is a
    model parameter or a setting that is not also fixed here. ``"xxz"`` is ``"heisenberg"``
    under its other name (``Jz`` defaults to ``J`` for both, as in ``tensor4all dmrg``).
    ``conserve="parity"`` writes
    the TFIM as ``-J sum XX - g sum Z`` (the transverse field is then ``Z``) and
    ``conserve="Sz"`` marks the Heisenberg MPO as conserving ``Sz``.

    >>> task = ScanTask("tfim", params={"L": 8}, settings={"max_bond": 16}, observables=("X",))
    >>> row = task(g=0.5)          # one point, in this process
    >>> sorted(row)[:3]
    ['X', 'bond_dim', 'converged']
    """

    model: str
    params: Any = ()
    algorithm: str = "dmrg"
    settings: Any = ()
    observables: Any = ()

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or self.model not in MODEL_PARAMETERS:
            raise InvalidOptionError(
                f"ScanTask: unknown model {self.model!r}; valid models: {', '.join(MODEL_PARAMETERS)}"
            )
        if not isinstance(self.algorithm, str) or self.algorithm not in ALGORITHMS:
            raise InvalidOptionError(
                f"ScanTask: unknown algorithm {self.algorithm!r}; valid algorithms: {', '.join(ALGORITHMS)}"
            )
        object.__setattr__(self, "params", self._pairs(self.params, "params", MODEL_PARAMETERS[self.model]))
        object.__setattr__(self, "settings", self._pairs(self.settings, "settings", SETTINGS))
        _check_conserve(self.model, dict(self.settings).get("conserve"), "ScanTask")
        obs = (self.observables,) if isinstance(self.observables, str) else self.observables
        if not isinstance(obs, (list, tuple)):
            raise Tensor4allTypeError(
                f"ScanTask: observables must be a string or a list of strings, got {type(self.observables).__name__}"
            )
        L = dict(self.params).get("L")
        for spec in obs:
            factors = _parse_observable(spec, self.model)
            if L is not None:
                _check_sites(spec, factors, L, "ScanTask")
        clash = [o for o in obs if o in RESULT_COLUMNS or o in META_COLUMNS or obs.count(o) > 1]
        if clash:
            raise InvalidOptionError(f"ScanTask: observable {clash[0]!r} is given twice or names a result column")
        object.__setattr__(self, "observables", tuple(obs))
        _check_settings(dict(self.settings), "ScanTask")

    def _pairs(self, value: Any, what: str, valid: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
        if isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
            value = dict(value)  # already normalized (a copy through dataclasses.replace)
        if not isinstance(value, Mapping):
            raise Tensor4allTypeError(f"ScanTask: {what} must be a mapping name -> value, got {type(value).__name__}")
        out = {}
        for name, v in value.items():
            self._check_name(name, valid, what)
            out[name] = _CHECKS[name](v, f"ScanTask: {name}")
        return tuple(sorted(out.items()))

    def _check_name(self, name: Any, valid: tuple[str, ...], what: str) -> None:
        if name not in valid:
            raise InvalidOptionError(
                f"ScanTask: {name!r} is not one of the {what} of "
                f"{self.model if what == 'params' else self.algorithm}; valid names: "
                f"{', '.join(valid)}"
            )

    # ---- the scanned names and values --------------------------------------------------
    def _scannable(self) -> tuple[str, ...]:
        """The names a grid may scan: the model's parameters and the settings not fixed here."""
        fixed = {n for n, _ in self.params} | {n for n, _ in self.settings}
        return tuple(n for n in MODEL_PARAMETERS[self.model] + SETTINGS if n not in fixed)

    def _check_point(self, point: Mapping[str, Any]) -> None:
        """Typed errors, before anything runs, for everything that would fail the point:
        :meth:`_check_values`, then the checks ``dmrg`` makes before its first sweep, on the
        point's Hamiltonian (:meth:`_preflight`); the message names the point and the fix."""
        self._check_values(point)
        p, s = self._split(point)
        self._preflight(self._hamiltonian(p, s), s, point)

    def _check_values(self, point: Mapping[str, Any]) -> None:
        """A point's names and values, a chain length ``L`` given neither in ``params`` nor
        in the point, the observables' sites on its chain and its settings together."""
        valid = self._scannable()
        for name, value in point.items():
            if name not in valid:
                fixed = name in dict(self.params) or name in dict(self.settings)
                raise InvalidOptionError(
                    f"scan: {name!r} is "
                    + (
                        "fixed in the task's params or settings; scan it or fix it, not both"
                        if fixed
                        else f"not a parameter of {self.model} or a dmrg setting; valid names: {', '.join(valid)}"
                    )
                )
            _CHECKS[name](value, f"scan: {name}")
        if "L" not in point and "L" not in dict(self.params):
            raise InvalidOptionError(f"ScanTask: the chain length L is neither in params nor scanned ({self.model})")
        where = f"scan: the point {_point_text(point)}"
        if "L" in point:
            for spec in self.observables:
                _check_sites(spec, _parse_observable(spec, self.model), point["L"], where)
        if "conserve" in point:
            _check_conserve(self.model, point["conserve"], where)
        if point.keys() & {"conserve", "sector", "dtype"}:
            _check_settings({**dict(self.settings), **point}, where)

    def _split(self, point: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The model parameters and the dmrg settings of a point (fixed and scanned)."""
        p = dict(self.params)
        s = {"threads": 1, **dict(self.settings)}
        for name, value in point.items():
            (p if name in MODEL_PARAMETERS[self.model] else s)[name] = value
        return p, s

    def _hamiltonian(self, p: Mapping[str, Any], s: Mapping[str, Any]) -> MPO:
        couplings = {k: v for k, v in p.items() if k != "L"}
        if self.model == "tfim":
            return models.tfim(p["L"], conserve="parity" if s.get("conserve") == "parity" else None, **couplings)
        return models.heisenberg(p["L"], conserve="Sz" if s.get("conserve") == "Sz" else None, **couplings)

    def _preflight(self, H: MPO, s: Mapping[str, Any], point: Mapping[str, Any]) -> None:
        """The checks ``dmrg`` makes of ``H`` and the sector before its first sweep (its own
        functions: a non-finite, non-Hermitian or out-of-range Hamiltonian; a charge the local
        space lacks; a sector the chain does not reach), raised as they are, with the point."""
        sector = s.get("sector")
        try:
            ws = [mpo_array(w) for w in H.tensors]
            check_hamiltonian(ws)
            conserve = default_conserve(s.get("conserve"), H, None)
            if (
                conserve is not None
                and resolve_sector(conserve, sector, H.local, ws, None) is None
                and sector is not None
            ):
                raise InvalidOptionError(
                    f"dmrg: sector={sector!r} was given, but conserve='auto' found no charge "
                    "that the Hamiltonian conserves"
                )
        except Tensor4allError as e:
            fix = (
                "; give a sector that the chain of every point reaches, or none (the default sector of each chain)"
                if "has no states" in str(e)
                else "; give conserve='Sz' (heisenberg/xxz) or 'parity' (tfim) with the sector, or drop sector"
                if "found no charge" in str(e)
                else ""
            )
            raise _with_message(e, f"scan: the point {_point_text(point)}: {e}{fix}") from e

    def _columns(self) -> dict[str, str]:
        """The result columns of a row and their Arrow types (before :data:`META_COLUMNS`)."""
        cols = dict(RESULT_COLUMNS)
        cols.update({o: "double" for o in self.observables})
        return {
            k: cols[k]
            for k in ("energy", "variance", "entropy", *self.observables, "bond_dim", "sweeps_run", "converged")
        }

    # ---- running one point -------------------------------------------------------------
    def __call__(self, **point: Any) -> dict[str, Any]:
        """Run the point ``point`` (scanned names -> values) here; returns the row's results:
        ``energy``, ``variance``, ``entropy`` (von Neumann, natural log, at the middle bond
        ``(L - 1) // 2``), one value per observable, ``bond_dim`` (the largest bond dimension
        of the final state), ``sweeps_run`` and ``converged``."""
        row = self._results(point)
        error = not_finite(self, row, point)
        if error is not None:
            raise error
        return row

    def _results(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The row of :meth:`__call__`, non-finite values included (:func:`run_point`
        records such a point as failed, with the values)."""
        self._check_values(point)
        p, s = self._split(point)
        H = self._hamiltonian(p, s)
        dtype, L = s.pop("dtype", "float64"), p["L"]
        psi0 = None
        if dtype == "complex128":  # as tensor4all dmrg --dtype complex128
            chi0 = _first(s.get("max_bond", 64))
            start = min(chi0, 8) if s.get("two_site", True) else chi0
            psi0 = MPS.random(L, H.phys_dims[0], bond_dim=start, seed=s.get("seed", 0), dtype=np.complex128)
        s = {k: (list(v) if isinstance(v, tuple) else v) for k, v in s.items()}
        res = dmrg(H, psi0, **s)
        state = res.state.dense()  # measured on dense sites: one SVD per bond instead of one per sector
        row: dict[str, Any] = {
            "energy": float(res.energy),
            "variance": float(res.variance),
            "entropy": float(state.entanglement_entropy((L - 1) // 2)) if L > 1 else 0.0,
        }
        local = "pauli" if self.model == "tfim" else {"1/2": "spin-1/2", "1": "spin-1"}[p.get("spin", "1/2")]
        for spec in self.observables:
            row[spec] = _measure(state, spec, _parse_observable(spec, self.model), local)
        row.update(
            bond_dim=max((int(b) for b in state.bond_dims), default=1),
            sweeps_run=len(res.history),
            converged=bool(res.converged),
        )
        return row


def _with_message(e: Tensor4allError, message: str) -> Tensor4allError:
    """An error of ``e``'s class with ``message`` (the same class when it takes one)."""
    try:
        return type(e)(message)
    except TypeError:
        return InvalidOptionError(message)


def not_finite(task: ScanTask, row: Mapping[str, Any], point: Mapping[str, Any]) -> NonFiniteError | None:
    """:class:`NonFiniteError` naming the first of the row's energy, entropy, observables (and
    variance, when the point computes it) that is NaN or infinite, else None."""
    names = ["energy", "entropy", *task.observables]
    if {**dict(task.settings), **point}.get("compute_variance", True):
        names.insert(1, "variance")
    for name in names:
        v = row.get(name)
        if isinstance(v, float) and not math.isfinite(v):
            what = (
                "the energy"
                if name == "energy"
                else f"the {name}"
                if name in RESULT_COLUMNS
                else f"the observable {name!r}"
            )
            return NonFiniteError(
                f"ScanTask: {what} is {v}, not a finite number: the run broke down numerically; "
                "run the point alone (task(**point)) and change its settings (max_bond, cutoff, "
                "eigensolver, noise) or the couplings' scale"
            )
    return None


def _first(schedule: Any) -> int:
    return int(schedule[0] if isinstance(schedule, (list, tuple)) else schedule)


def _measure(state: MPS, spec: str, factors: tuple[tuple[str, int | None], ...], local: str) -> float:
    L = state.L
    if len(factors) == 2:
        (a, i), (b, j) = factors
        value = state.correlation(a, b, i % L if -L <= i < 0 else i, j % L if -L <= j < 0 else j, local=local)
    elif factors[0][1] is None:
        value = np.mean(np.asarray(state.expect(factors[0][0], local=local)))  # one pass of environments
    else:
        op, i = factors[0]
        value = state.expect(op, i % L if -L <= i < 0 else i, local=local)
    z = complex(value)
    if abs(z.imag) > 1e-10 * max(1.0, abs(z.real)):
        raise InvalidOptionError(
            f"observable {spec!r} has the complex value {z:.6g} in this state; a scan "
            "stores real numbers (use a product of operators that commute)"
        )
    return float(z.real)


# ---- the function a worker runs ----------------------------------------------------------
def run_point(fn: Callable[..., Mapping[str, Any]], point: dict[str, Any]) -> dict[str, Any]:
    """``fn(**point)`` with its wall time and the Dask worker that ran it (None outside a
    worker): ``{"result": ..., "seconds": ..., "worker": ..., "error": ...}``. ``error`` is
    None, or (a :class:`ScanTask` whose energy or an observable is NaN or infinite) the
    text of the :class:`NonFiniteError` that ``task(**point)`` raises: the row is then
    recorded as failed, with its values, and not run again by Dask (it would fail the same)."""
    t0 = time.perf_counter()
    error = None
    if isinstance(fn, ScanTask):
        out = fn._results(point)
        e = not_finite(fn, out, point)
        error = None if e is None else f"{type(e).__name__}: {e}"
    else:
        out = fn(**point)
    result = check_result(out, point)
    seconds = time.perf_counter() - t0
    return {"result": result, "seconds": seconds, "worker": _worker_address(), "error": error}


def _worker_address() -> str | None:
    try:
        from distributed import get_worker  # noqa: PLC0415  (optional dependency; present on a worker)

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None


def check_result(out: Any, point: Mapping[str, Any]) -> dict[str, Any]:
    """A task's result as a row: a mapping of column names to scalars (None, bool, int,
    float, str; NumPy scalars become Python ones)."""
    if not isinstance(out, Mapping):
        raise Tensor4allTypeError(f"a scan task must return a dict of column -> value, got {type(out).__name__}")
    row = {}
    for k, v in out.items():
        if not isinstance(k, str) or not k:
            raise Tensor4allTypeError(f"a scan task's result keys must be non-empty strings, got {k!r}")
        if k in point or k in META_COLUMNS:
            raise InvalidOptionError(
                f"a scan task's result {k!r} clashes with a parameter or the column {k!r}; rename it"
            )
        if isinstance(v, np.generic):
            v = v.item()
        if v is not None and not isinstance(v, (bool, str, numbers.Integral, float)):
            if isinstance(v, numbers.Real):
                v = float(v)
            else:
                raise Tensor4allTypeError(
                    f"a scan task's result {k!r} must be a number, bool, string or None, got {type(v).__name__} {v!r}"
                )
        row[k] = int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v
    return row


def describe(task: Any) -> dict[str, Any]:
    """What a scan file records of its task (and compares when it resumes): a
    :class:`ScanTask`'s fields, or a function's name and the digest of its code, defaults,
    closure values and bound arguments (:func:`~tensor4all.scans._identity.function_identity`)."""
    if isinstance(task, ScanTask):
        return {
            "model": task.model,
            "params": {k: _json(v) for k, v in task.params},
            "algorithm": task.algorithm,
            "settings": {k: _json(v) for k, v in task.settings},
            "observables": list(task.observables),
        }
    return function_identity(task)


def _json(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_json(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v
