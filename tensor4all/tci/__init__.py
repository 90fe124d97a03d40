"""Tensor cross interpolation: a function of a multi-index learned as a tensor train.

:func:`crossinterpolate2` runs TCI2 (two-site updates by partial rank-revealing LU:
Fernandez, Jeannin, Dumitrescu, Kloss, Kaye, Parcollet, Waintal, SciPost Phys. 18, 104
(2025); Ritter, Nunez Fernandez, Wallerberger, von Delft, Shinaoka, Waintal, PRL 132,
056501 (2024)) on ``f(i_0, ..., i_{L-1})`` with ``0 <= i_k < local_dims[k]`` and returns a
:class:`TCIResult` whose ``tt`` is a :class:`~tensor4all.MPS` (site tensors ``(left,
physical, right)``; complex when ``f`` is).

The tensor train depends on ``f`` only through its values at the sampled cross
(``result.points``): site ``k`` is ``f(I_k, s, J_k) P_k^-1`` with the pivot matrix ``P_k``
among those values. :func:`interpolant` rebuilds it from such values with tenferro
operations, so ``tidu.grad`` of anything computed from it (:func:`tt_sum` with quadrature
weights, :func:`tt_evaluate`) flows into the parameters ``f`` was computed from, at fixed
pivots (the cross formula differentiated; the pivot choice is piecewise constant).
``crossinterpolate2`` of an ``f`` computed from a parameter under ``tidu.grad``/``jvp`` does the
same by itself (JAX's ``custom_vjp`` pattern): the pivots are searched on the concrete values,
then the train is rebuilt from ``f`` evaluated under tracing at those pivots. :func:`tt_evaluate`,
:func:`tt_sum`, :func:`tt_add` and :func:`tt_multiply` (elementwise) work on any dense MPS and are
differentiable; ``MPS.compress`` recompresses.

>>> import numpy as np
>>> from tensor4all import tci
>>> x = np.linspace(0.0, 1.0, 16)
>>> res = tci.crossinterpolate2(lambda i: 1.0 / (1.0 + x[i].sum(axis=1)), [16] * 4, batched=True)
>>> res.termination, round(float(tci.tt_evaluate(res.tt, [3, 1, 4, 1])), 8), round(1.0 / (1.0 + 9.0 / 15), 8)
('converged', 0.625, 0.625)
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..tools.keywords import keyword_hints
from ..tools.errors import DimensionMismatchError, InvalidOptionError, NotDifferentiableError, Tensor4allTypeError
from ..networks.mps import MPS
from .tci2 import Cross, TCI2Options, run_tci2
from .cache import CachedFunction
from .tt import _multi_indices, tt_add, tt_evaluate, tt_multiply, tt_sum
from .errors import (
    FunctionShapeError,
    FunctionValueError,
    LocalDimsError,
    MultiIndexError,
    MultiIndexOutOfRangeError,
    NonFiniteValueError,
    TCIError,
    TCIOptionError,
    TCITypeError,
    ZeroFunctionError,
)
from ..tools.checks import as_tensor, concrete
from ..tools.threads import blas_threads, check_threads, thread_policy

__all__ = [
    "crossinterpolate2",
    "TCIResult",
    "interpolant",
    "tt_evaluate",
    "tt_sum",
    "tt_add",
    "tt_multiply",
    "TCIError",
    "LocalDimsError",
    "MultiIndexError",
    "MultiIndexOutOfRangeError",
    "FunctionValueError",
    "FunctionShapeError",
    "NonFiniteValueError",
    "ZeroFunctionError",
    "TCIOptionError",
    "TCITypeError",
]

PIVOT_SEARCHES = ("full", "rook", "fiber")
START_SAMPLES = 64  # random points tried when f is zero at the default first pivot
START_PASSES = 2  # greedy passes over the sites that move the default first pivot to a large |f|


@dataclass(frozen=True)
class TCIResult:
    """What :func:`crossinterpolate2` returns.

    * ``tt``: the interpolant, a :class:`~tensor4all.MPS` (``tt_evaluate(res.tt, idx)``).
    * ``ranks``, ``errors``: after each sweep, the largest bond dimension and the error
      estimate (the largest pivot left out of any two-site LU or error the global pivot
      search saw, divided by ``max|f|`` when ``normalize_error``).
    * ``evaluations``: distinct multi-indices at which ``f`` was evaluated.
    * ``termination``: ``"converged"``, ``"max_bond"`` or ``"max_iter"``.
    * ``points``: the ``(n, L)`` multi-indices whose values ``tt`` is built from (see
      :func:`interpolant`); ``max_sample``: the largest ``|f|`` seen; ``cross``: the pivot
      sets and the layout of the samples.
    """

    tt: MPS
    ranks: list[int]
    errors: list[float]
    evaluations: int
    termination: str
    max_sample: float
    cross: Cross = field(repr=False)

    @property
    def points(self) -> np.ndarray:
        return self.cross.points

    @property
    def error(self) -> float:
        """The last error estimate."""
        return self.errors[-1]


# ---- argument checks ------------------------------------------------------------------------
def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def _local_dims(local_dims: Any) -> list[int]:
    if isinstance(local_dims, (str, bytes)) or not isinstance(local_dims, (Sequence, np.ndarray)):
        raise TCITypeError(
            f"crossinterpolate2: local_dims must be a sequence of positive integers, got "
            f"{type(local_dims).__name__} {local_dims!r}"
        )
    dims = list(np.asarray(local_dims).reshape(-1)) if isinstance(local_dims, np.ndarray) else list(local_dims)
    if not dims:
        raise LocalDimsError("crossinterpolate2: local_dims is empty; give one dimension (>= 1) per site")
    for k, d in enumerate(dims):
        if not _is_int(d):
            raise TCITypeError(f"crossinterpolate2: local_dims[{k}] must be an integer, got {type(d).__name__} {d!r}")
        if d < 1:
            raise LocalDimsError(
                f"crossinterpolate2: local_dims[{k}] is {d}; every local dimension must be >= 1 "
                "(a site with no values has nothing to interpolate)"
            )
    return [int(d) for d in dims]


def _options(
    tolerance: Any,
    max_bond: Any,
    max_iter: Any,
    pivot_search: Any,
    normalize_error: Any,
    global_pivots: Any,
    seed: Any = None,
    what: str = "crossinterpolate2",
) -> TCI2Options:
    """The checked options; ``what`` names the caller in messages. A relative tolerance (the
    error estimate divided by ``max|f|``, ``normalize_error=True``) must lie in (0, 1): at 1 or
    more the first rank-1 train already meets it."""
    if not isinstance(normalize_error, (bool, np.bool_)):
        raise TCITypeError(f"{what}: normalize_error must be True or False, got {normalize_error!r}")
    if isinstance(tolerance, (bool, np.bool_)) or not isinstance(tolerance, numbers.Real):
        raise TCITypeError(f"{what}: tolerance must be a real number > 0, got {type(tolerance).__name__} {tolerance!r}")
    if normalize_error and not (np.isfinite(tolerance) and 0 < tolerance < 1):
        raise TCIOptionError(
            f"{what}: tolerance must be a finite number > 0 and < 1 (it is relative to max|f| "
            f"with normalize_error=True; e.g. 1e-8), got {tolerance!r}; at 1 or more any rank-1 "
            "train passes (pass normalize_error=False for an absolute tolerance)"
        )
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise TCIOptionError(
            f"{what}: tolerance must be a finite number > 0 (an absolute error with "
            f"normalize_error=False), got {tolerance!r}"
        )
    _int_option(what, "max_bond", max_bond, 1, "a positive integer or None", optional=True)
    _int_option(what, "max_iter", max_iter, 1, "a positive integer")
    if pivot_search not in PIVOT_SEARCHES:
        raise TCIOptionError(
            f"{what}: pivot_search must be one of {', '.join(map(repr, PIVOT_SEARCHES))}, got {pivot_search!r}"
        )
    _int_option(
        what,
        "global_pivots",
        global_pivots,
        0,
        "a non-negative integer (random starts of the global pivot search per sweep; 0 turns it off)",
    )
    _int_option(what, "seed", seed, 0, "a non-negative integer or None", optional=True)
    return TCI2Options(
        float(tolerance),
        None if max_bond is None else int(max_bond),
        int(max_iter),
        pivot_search,
        bool(normalize_error),
        int(global_pivots),
    )


def _int_option(what: str, name: str, value: Any, low: int, expected: str, optional: bool = False) -> None:
    """Refuse an integer option: not an integer (``2.5``, ``True``, ``"3"``) is a
    :class:`TCITypeError` (as ``range(2.5)`` is a ``TypeError``), an integer below ``low`` a
    :class:`TCIOptionError`."""
    if optional and value is None:
        return
    if not _is_int(value):
        raise TCITypeError(f"{what}: {name} must be {expected}, got {type(value).__name__} {value!r}")
    if value < low:
        raise TCIOptionError(f"{what}: {name} must be {expected}, got {value!r}")


def _first_pivots(fn: CachedFunction, initial_pivots: Any, rng: np.random.Generator) -> np.ndarray:
    dims = fn.dims
    if initial_pivots is not None:
        pivots = _multi_indices(initial_pivots, dims, "crossinterpolate2: initial_pivots")
        if np.max(np.abs(fn.values(pivots))) == 0.0:
            raise ZeroFunctionError(
                f"crossinterpolate2: f is zero at every initial pivot {pivots.tolist()}; give "
                "initial_pivots where f is not zero (its largest values are best)"
            )
        return pivots
    pivot = np.zeros(len(dims), dtype=np.int64)
    if fn.values(pivot[None, :])[0] == 0.0:
        trial = np.stack([rng.integers(0, d, size=START_SAMPLES) for d in dims], axis=1)
        vals = np.abs(fn.values(trial))
        if vals.max() == 0.0:
            raise ZeroFunctionError(
                f"crossinterpolate2: f is zero at the multi-index {pivot.tolist()} and at "
                f"{START_SAMPLES} random ones; give initial_pivots where f is not zero"
            )
        pivot = trial[int(np.argmax(vals))]
    for passes in range(START_PASSES):  # greedy: each index in turn to the value of largest |f|
        before = pivot.copy()
        for k, d in enumerate(dims):
            line = np.repeat(pivot[None, :], d, axis=0)
            line[:, k] = np.arange(d)
            pivot[k] = int(np.argmax(np.abs(fn.values(line))))
        if np.array_equal(pivot, before) or (passes < START_PASSES - 1 and _is_line_maximum(fn, pivot)):
            break
    return pivot[None, :]


def _is_line_maximum(fn: CachedFunction, pivot: np.ndarray) -> bool:
    """Whether ``|f|`` at ``pivot`` is the largest on each line through it (one index varied):
    the check a further greedy pass would make, its lines sampled in one call."""
    dims = fn.dims
    lines = np.repeat(pivot[None, :], sum(dims), axis=0)
    lines[np.arange(sum(dims)), np.repeat(np.arange(len(dims)), dims)] = np.concatenate([np.arange(d) for d in dims])
    values = np.abs(fn.values(lines))
    return bool(np.max(values) <= abs(fn.values(pivot[None, :])[0]))


# ---- the interpolation ---------------------------------------------------------------------
@keyword_hints
def crossinterpolate2(
    f: Callable[..., Any],
    local_dims: Sequence[int],
    initial_pivots: Any = None,
    *,
    tolerance: float = 1e-8,
    max_bond: int | None = None,
    max_iter: int = 20,
    pivot_search: str = "full",
    normalize_error: bool = True,
    global_pivots: int = 5,
    batched: bool = False,
    seed: int | None = 0,
    threads: int | None = None,
) -> TCIResult:
    """Interpolate ``f`` on the grid ``local_dims`` as a tensor train by TCI2.

    ``f(idx)`` takes one multi-index (a read-only int64 array of ``L`` entries, site 0
    first, ``0 <= idx[k] < local_dims[k]``) and returns a number; with ``batched=True``
    it takes an ``(n, L)`` int64 array and returns ``n`` numbers. Each distinct
    multi-index is evaluated once (``result.evaluations``).

    * ``initial_pivots``: one multi-index or a list of them where ``|f|`` is large. Default:
      all zeros (if ``f`` is zero there, the largest of 64 random points), then each index in
      turn set to the value of largest ``|f|`` on its line, two passes at most
      (TensorCrossInterpolation.jl's ``optfirstpivot``; ``sum(local_dims)`` evaluations a pass).
    * ``tolerance``: the target of the error estimate, relative to ``max|f|`` when
      ``normalize_error`` (default; then in (0, 1), e.g. ``1e-8``: at 1 or more a rank-1
      train already meets it), else absolute (any finite number > 0).
    * ``max_bond``: the largest bond dimension (``None``: no limit); ``max_iter``: sweeps.
    * ``pivot_search``: ``"full"`` samples the whole two-site matrix of each bond,
      ``"rook"`` only a few rows and columns of it (fewer evaluations for large local
      dimensions, a weaker error estimate); ``"fiber"`` keeps every pivot found and adds
      new ones from a few probe columns of the residual (:mod:`tensor4all.tci.grow`): nested
      sets that only grow, the samples are the train's own one-site fibers and the probes
      (the fewest evaluations on large local dimensions and long trains; the global pivot
      search only checks: its points block convergence but join no set).
    * ``global_pivots``: random starts of the global pivot search after each sweep
      (``0``: none); ``seed`` seeds it and the rook search.
    * ``threads``: BLAS threads for the run, ``f``'s evaluations included (as for
      :func:`tensor4all.dmrg`; default: one thread unless ``max_bond`` is 512 or more).

    If ``f`` is computed from a parameter under ``tidu.grad``/``jvp`` (it returns tidu
    tracers), the pivots are searched on its concrete values and ``tt`` is rebuilt from ``f``
    under tracing at those pivots (:func:`interpolant`): derivatives at fixed pivots.

    Bad input raises subclasses of :class:`TCIError` naming the problem (see the module's
    ``__all__``); a wrong kind of argument :class:`TCITypeError`.
    """
    if not callable(f):
        raise TCITypeError(f"crossinterpolate2: f must be callable, got {type(f).__name__} {f!r}")
    dims = _local_dims(local_dims)
    opts = _options(tolerance, max_bond, max_iter, pivot_search, normalize_error, global_pivots, seed)
    if not isinstance(batched, (bool, np.bool_)):
        raise TCITypeError(f"crossinterpolate2: batched must be True or False, got {batched!r}")
    try:
        threads = check_threads(threads)
    except Tensor4allTypeError as e:
        raise TCITypeError(f"crossinterpolate2: {e}") from None
    except InvalidOptionError as e:
        raise TCIOptionError(f"crossinterpolate2: {e}") from None
    with blas_threads(threads, opts.max_bond):
        return _interpolate(f, dims, initial_pivots, opts, bool(batched), seed, "crossinterpolate2", _TCI_HINT)


_TCI_HINT = (
    "res = tci.crossinterpolate2(lambda i: f(i, theta0), dims) outside it, then "
    "tci.interpolant(res, f(res.points, theta)) inside"
)


class _Primal:
    """``f`` with traced results (computed from a parameter under ``tidu.grad``/``jvp``)
    replaced by their concrete values, so that the pivot search runs on numbers; ``traced``
    records that the train must be rebuilt from ``f`` under tracing."""

    def __init__(self, f: Callable[..., Any], what: str, hint: str):
        self.f, self.what, self.hint, self.traced = f, what, hint, False

    def __call__(self, *args: Any) -> Any:
        v = self.f(*args)
        if not isinstance(v, tidu.Tracer):
            return v
        c = concrete(v)
        if c is None:
            raise NotDifferentiableError(
                f"{self.what}: f returned an abstract traced value (under tenferro.jit or tidu.vmap), but the pivot "
                f"search needs numbers; interpolate outside the transform and rebuild at its pivots inside: "
                f"{self.hint}"
            )
        self.traced = True
        return c


def _interpolate(
    f: Callable[..., Any],
    dims: list[int],
    initial_pivots: Any,
    opts: TCI2Options,
    batched: bool,
    seed: Any,
    what: str,
    hint: str,
) -> TCIResult:
    """TCI2 on checked arguments; a traced ``f`` gives a train rebuilt under tracing (see
    :func:`crossinterpolate2`)."""
    rng = np.random.default_rng(seed)
    primal = _Primal(f, what, hint)
    fn = CachedFunction(primal, dims, batched=batched, what=f"{what}: f")
    pivots = _first_pivots(fn, initial_pivots, rng)
    cross, history = run_tci2(fn, pivots, opts, rng)
    if primal.traced:
        tt = _build(cross, _traced_values(f, cross.points, batched))
    else:  # concrete values: the same solves in NumPy, without tenferro's dispatch per site
        tt = _build_concrete(cross, fn.values(cross.points))
    return TCIResult(tt, history.ranks, history.errors, fn.evaluations, history.termination, fn.max_abs, cross)


def _traced_values(f: Callable[..., Any], points: np.ndarray, batched: bool) -> Any:
    """``f`` at ``points`` (already checked on their concrete values) under tracing, shape ``(n,)``."""
    pts = np.array(points, dtype=np.int64)
    pts.setflags(write=False)
    if batched:
        return tf.reshape(as_tensor(f(pts)), (len(pts),))
    return tf.stack([as_tensor(f(p)) for p in pts])  # promotes a few float results beside complex ones


def _build(cross: Cross, values: Any) -> MPS:
    """Site ``k`` is ``f(I[k], s, J[k]) P_k^-1`` (``P_k`` = rows ``pivot_rows[k]`` of it),
    the last site ``f(I[L-1], s)``: tenferro gathers, solves and reshapes of ``values``."""
    ts = []
    L = len(cross.site_index)
    for k, idx in enumerate(cross.site_index):
        r, d, c = idx.shape
        pi = tf.reshape(tf.take(values, tf.asarray(idx.reshape(-1))), (r * d, c), order="C")
        if k < L - 1:
            p = tf.take(pi, tf.asarray(cross.pivot_rows[k]), axis=0)
            pi = tf.transpose(tf.linalg.solve(tf.transpose(p), tf.transpose(pi)))
        ts.append(tf.reshape(pi, (r, d, c), order="C"))
    return MPS(ts)


def _build_concrete(cross: Cross, values: np.ndarray) -> MPS:
    """:func:`_build` on a NumPy array of values (nothing to differentiate)."""
    ts = []
    L = len(cross.site_index)
    for k, idx in enumerate(cross.site_index):
        r, d, c = idx.shape
        pi = values[idx.reshape(-1)].reshape(r * d, c)
        if k < L - 1:
            pi = np.linalg.solve(pi[cross.pivot_rows[k]].T, pi.T).T
        ts.append(tf.asarray(np.ascontiguousarray(pi.reshape(r, d, c))))
    return MPS(ts)


@thread_policy()
def interpolant(result: TCIResult, values: Any) -> MPS:
    """The tensor train of ``result``'s pivots with the values ``values[i]`` of the function
    at ``result.points[i]`` (a tenferro tensor, tidu tracer or array of shape ``(n,)``).

    With the values ``result`` sampled this is ``result.tt``; with values of ``f(x, theta)``
    computed by tenferro operations it is differentiable in ``theta`` at fixed pivots (the
    derivative of the cross formula in the sampled values, which is what finite differences
    of re-interpolation converge to while the pivots stay put)."""
    if not isinstance(result, TCIResult):
        raise TCITypeError(
            f"interpolant: result must be a TCIResult (from crossinterpolate2), got {type(result).__name__}"
        )
    n = len(result.points)
    v = as_tensor(values) if not isinstance(values, (str, bytes)) else values
    if not isinstance(v, (tf.Tensor, tidu.Tracer)):
        raise TCITypeError(f"interpolant: values must be an array or tensor of {n} numbers, got {values!r}")
    shape = tuple(tidu.aval_of(v).shape)
    if shape != (n,):
        raise DimensionMismatchError(
            f"interpolant: values must have shape ({n},), one per row of result.points, got shape {shape}"
        )
    if tidu.aval_of(v).dtype.kind not in ("float", "complex"):
        v = v.astype(tf.float64) if isinstance(v, tf.Tensor) else v
        if tidu.aval_of(v).dtype.kind not in ("float", "complex"):
            raise TCITypeError(f"interpolant: values must be float or complex, got {tidu.aval_of(v).dtype}")
    c = concrete(v)  # None when abstract (tenferro.jit): not checked
    if c is not None:
        finite = np.isfinite(np.asarray(c))
        if not finite.all():
            i = int(np.argmin(finite))
            raise NonFiniteValueError(
                f"interpolant: values[{i}] is {np.asarray(c)[i]}, the value at "
                f"result.points[{i}] = {result.points[i].tolist()}; every value must be finite "
                "(check the function there)"
            )
    try:
        return _build(result.cross, v)
    except tf.linalg.SingularMatrixError as e:  # values of lower rank at the fixed pivots
        raise FunctionValueError(
            "interpolant: with these values a pivot matrix of the cross is singular (the function they come "
            "from has a lower rank at result's pivots than the one interpolated); interpolate it anew "
            f"(crossinterpolate2 / quantics_interpolate) instead of at fixed pivots ({e})"
        ) from None


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show
    (the imports this module uses stay out of sight)."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
