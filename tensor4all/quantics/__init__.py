"""Quantics tensor trains: functions on grids of ``2**R`` points per dimension as MPSs
over the bits of the grid index (QuanticsGrids.jl, QuanticsTCI.jl, Quantics.jl).

* :class:`Grid` -- the grid (``R``, ``lower``, ``upper``, ``dims``, ``unfolding``,
  ``include_endpoint``) and the maps between grid indices, quantics digits and coordinates;
* :func:`quantics_interpolate` -- a function on a grid learned by tensor cross interpolation
  (:func:`tensor4all.tci.crossinterpolate2` over the quantics digits) as a
  :class:`QuanticsTT`, with :meth:`QuanticsTT.evaluate`, :meth:`QuanticsTT.integral` and
  :meth:`QuanticsTT.sum`; :meth:`QuanticsTT.interpolant` rebuilds it at the same pivots
  from another function, differentiably (``tidu.grad`` of an integral in a parameter);
* operators as MPOs on the bits of one dimension: :func:`shift_mpo`, :func:`flip_mpo`,
  :func:`fourier_mpo` (output bits reversed; :func:`reverse_bits` restores the order), and
  :func:`apply` of an MPO to a QTT.

>>> import numpy as np
>>> from tensor4all import quantics
>>> g = quantics.Grid(10, 0.0, 1.0)
>>> qtt = quantics.QuanticsTT.from_values(np.sin(2 * np.pi * g.grididx_to_origcoord(np.arange(1024))), g)
>>> qtt.rank, abs(float(qtt.integral())) < 1e-15
(2, True)
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

import itertools
import math
from typing import Any, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..tools.errors import DimensionMismatchError, InvalidOptionError, Tensor4allTypeError, ValueRangeError
from ..networks.mpo import MPO
from ..networks.mps import MPS
from ..networks.mps_forms import dense_size
from .grid import MAX_BITS, UNFOLDINGS, Grid, GridRangeError
from .operators import BOUNDARIES, flip_mpo, fourier_mpo, shift_mpo
from .operators import apply as _apply_mpo
from .operators import reverse_bits as _reverse_sites
from ..tools.checks import any_traced, check_alloc, check_bool, check_callable, concrete
from ..tools.threads import blas_threads, thread_policy
from ..tci import NonFiniteValueError, TCIResult, _interpolate, _options, interpolant

__all__ = [
    "Grid",
    "GridRangeError",
    "QuanticsTT",
    "quantics_interpolate",
    "ARGUMENTS",
    "shift_mpo",
    "flip_mpo",
    "fourier_mpo",
    "reverse_bits",
    "apply",
    "UNFOLDINGS",
    "BOUNDARIES",
    "MAX_BITS",
]

#: what :func:`quantics_interpolate` passes to the function: coordinates or grid indices
ARGUMENTS = ("coordinate", "index")


class QuanticsTT:
    """A function on a quantics :class:`Grid` held as an MPS over the grid's sites
    (:attr:`mps`; site ``k`` carries the digits ``grid.local_dims[k]``).

    :meth:`sum` and :meth:`integral` return scalar tenferro tensors (``float(qtt.integral())``
    for a number), differentiable in the site tensors. :meth:`evaluate` returns numbers
    (NumPy arrays for many points) when the site tensors are concrete and tenferro tensors when
    they are tidu tracers, so ``tidu.grad`` flows through it too.
    """

    __slots__ = ("_mps", "_grid", "_tci", "_arrays")

    def __init__(self, mps: MPS, grid: Grid, tci: Any = None):
        if not isinstance(mps, MPS):
            raise Tensor4allTypeError(f"QuanticsTT: expected an MPS, got {type(mps).__name__}")
        if not isinstance(grid, Grid):
            raise Tensor4allTypeError(f"QuanticsTT: expected a quantics Grid, got {type(grid).__name__}")
        if mps.phys_dims != grid.local_dims:
            raise DimensionMismatchError(
                f"QuanticsTT: the MPS has sites of dimensions {mps.phys_dims}, the grid "
                f"{grid!r} needs {grid.local_dims}"
            )
        self._mps = mps.dense() if mps.symmetric else mps
        self._grid, self._tci, self._arrays = grid, tci, None

    @classmethod
    @thread_policy(lambda cls, values=None, grid=None, *_, **kw: _values_bond(grid, kw.get("max_bond")))
    def from_values(
        cls, values: Any, grid: Grid, *, max_bond: int | None = None, cutoff: float = 1e-28
    ) -> "QuanticsTT":
        """The QTT of the values on every grid point: an array of shape ``(2**R,) * dims``
        indexed by grid indices (by SVDs, :meth:`MPS.from_dense`, keeping at most ``max_bond``
        and dropping a relative squared weight up to ``cutoff`` per bond; for small grids)."""
        if not isinstance(grid, Grid):
            raise Tensor4allTypeError(f"QuanticsTT.from_values: expected a quantics Grid, got {type(grid).__name__}")
        shape = (grid.n_points,) * grid.dims
        check_alloc(2 * 8 * math.prod(shape), f"QuanticsTT.from_values on {grid!r}")
        v = np.asarray(values)
        if v.shape != shape:
            raise DimensionMismatchError(
                f"QuanticsTT.from_values: expected values of shape {shape} for {grid!r}, got {v.shape}"
            )
        digits = np.indices(grid.local_dims).reshape(grid.n_sites, -1).T  # every site digit, np.kron order
        idx = grid.quantics_to_grididx(digits)
        flat = v[tuple(idx.reshape(len(idx), -1).T)]
        mps = MPS.from_dense(flat, grid.n_sites, grid.local_dims[0], max_bond=max_bond, cutoff=cutoff)
        return cls(mps, grid)

    # ---- properties -----------------------------------------------------------------
    @property
    def mps(self) -> MPS:
        """The tensor train (an :class:`~tensor4all.MPS`)."""
        return self._mps

    @property
    def grid(self) -> Grid:
        return self._grid

    @property
    def tci(self) -> Any:
        """The :class:`~tensor4all.tci.TCIResult` of :func:`quantics_interpolate` (None otherwise)."""
        return self._tci

    @property
    def bond_dims(self) -> list[int]:
        return self._mps.bond_dims

    @property
    def rank(self) -> int:
        """The largest bond dimension."""
        return max(self._mps.bond_dims, default=1)

    def __repr__(self) -> str:
        return f"QuanticsTT({self._grid!r}, rank={self.rank}, dtype={self._mps.dtype})"

    # ---- values ---------------------------------------------------------------------
    @thread_policy()
    def evaluate(self, x: Any) -> Any:
        """The value at the grid point nearest to the coordinate ``x`` (a number in one
        dimension, a sequence of ``dims`` numbers otherwise; an array ``(n,)`` or ``(n, dims)``
        for many points)."""
        return self.evaluate_quantics(self._grid.origcoord_to_quantics(x))

    __call__ = evaluate

    @thread_policy()
    def evaluate_index(self, index: Any) -> Any:
        """The value at a grid index (or an array of them, as :meth:`Grid.grididx_to_quantics`)."""
        return self.evaluate_quantics(self._grid.grididx_to_quantics(index))

    @thread_policy()
    def evaluate_quantics(self, quantics: Any) -> Any:
        """The value at quantics digits (one per site), or at each row of an ``(n, n_sites)`` array."""
        q, single = self._grid._digits(quantics, "evaluate_quantics")
        ts = self._mps.tensors
        if any_traced(ts):
            env = None
            for k, t in enumerate(ts):
                a = tf.take(t, tf.asarray(q[:, k]), axis=1)  # (left, n, right)
                env = tf.einsum("lnr->nr", a) if env is None else tf.einsum("nl,lnr->nr", env, a)
            out = tf.reshape(env, (len(q),))
            return tf.reshape(out, ()) if single else out
        env = np.ones((len(q), 1))
        for k, a in enumerate(self._numpy()):
            env = np.einsum("nl,lnr->nr", env, a[:, q[:, k], :])
        out = env[:, 0]
        return out[0].item() if single else out

    @thread_policy()
    def sum(self) -> Any:
        """The sum of the values over every grid point."""
        return self._product_sum([[(1.0, None)]] * self._grid.dims)

    @thread_policy()
    def integral(self) -> Any:
        """The integral over the domain: the sum times the cell volume ``prod(step)`` (the
        rectangle rule at the left ends, whose error is ``O(step)``, spectrally small for
        periodic functions); with ``include_endpoint=True`` the trapezoidal rule (the two end
        points of every dimension weighted by 1/2)."""
        g = self._grid
        vol = math.prod(g.step)
        if not g.include_endpoint:
            return self._product_sum([[(1.0, None)]] * g.dims) * vol
        trap = [(1.0, None), (-0.5, 0), (-0.5, 1)]  # 1 - [x = 0]/2 - [x = N - 1]/2: every bit 0, every bit 1
        return self._product_sum([trap] * g.dims) * vol

    @thread_policy(lambda self: dense_size(self.mps))  # sized by the output, as MPS.to_dense
    def to_values(self) -> np.ndarray:
        """Every value as an array of shape ``(2**R,) * dims`` indexed by grid indices (small grids)."""
        g = self._grid
        check_alloc(2 * 16 * g.n_points**g.dims, f"QuanticsTT.to_values on {g!r}")
        digits = np.indices(g.local_dims).reshape(g.n_sites, -1).T
        flat = np.asarray(self._mps.to_dense())
        idx = g.quantics_to_grididx(digits).reshape(len(digits), -1)
        out = np.empty((g.n_points,) * g.dims, dtype=flat.dtype)
        out[tuple(idx.T)] = flat
        return out

    @thread_policy()
    def interpolant(self, f: Any, *, argument: str = "coordinate") -> "QuanticsTT":
        """The QTT built at the pivots of this one's interpolation (:attr:`tci`) from the
        values of ``f`` instead (:func:`tensor4all.tci.interpolant`): ``f`` is called once with
        arrays of every sampled point (as :func:`quantics_interpolate` with ``batched=True``)
        and may compute with tenferro operations, so that ``tidu.grad`` of, e.g., the
        integral flows into the parameters of ``f`` (at fixed pivots)."""
        if not isinstance(self._tci, TCIResult):
            raise InvalidOptionError(
                "QuanticsTT.interpolant needs a QuanticsTT from quantics_interpolate (it reuses "
                "the pivots of that interpolation); this one has none"
            )
        f = _check_function(f, "QuanticsTT.interpolant")
        argument = _check_argument(argument, "QuanticsTT.interpolant")
        args = _arguments(self._grid, self._tci.points, argument)
        values = f(*[tf.asarray(a) for a in args])
        return QuanticsTT(interpolant(self._tci, values), self._grid, self._tci)

    # ---- helpers --------------------------------------------------------------------
    def _numpy(self) -> list[np.ndarray]:
        if self._arrays is None:
            self._arrays = [np.asarray(t) for t in self._mps.tensors]
        return self._arrays

    def _product_sum(self, terms: Sequence[Sequence[tuple[float, int | None]]]) -> Any:
        """``sum_x prod_d w_d(x_d) f(x)`` where each ``w_d`` is a sum of terms ``(c, b)``: ``c``
        times 1 (``b`` None) or times the indicator that every bit of ``x_d`` equals ``b``.
        Each product of terms is a product state over the sites, contracted with the train."""
        g = self._grid
        ts = self._mps.tensors
        total: Any = None
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported just below
            for combo in itertools.product(*terms):
                coef = math.prod(c for c, _ in combo)
                term = _contract(ts, _site_vectors(g, [b for _, b in combo]))
                term = term if coef == 1.0 else term * coef
                total = term if total is None else total + term
        c = concrete(total)
        if c is not None and not np.isfinite(np.asarray(c)).all():
            raise ValueRangeError(
                f"QuanticsTT: the sum over the 2**{g.R * g.dims} grid points leaves the "
                "float range (~1.8e308); scale the function down and the result up"
            )
        return total


def _values_bond(grid: Any, max_bond: Any) -> int:
    """The size of :meth:`QuanticsTT.from_values`'s thread policy: the largest matrix its SVDs
    factor (:meth:`MPS.from_dense`'s, ``d**(n_sites // 2)``, capped by ``max_bond``)."""
    if not isinstance(grid, Grid):
        return 0
    side = grid.local_dims[0] ** min(grid.n_sites // 2, 64)
    cap = max_bond if isinstance(max_bond, int) and not isinstance(max_bond, bool) and max_bond > 0 else 0
    return min(side, cap) if cap else side


def _site_vectors(g: Grid, bits: Sequence[int | None]) -> list[np.ndarray]:
    """Per site, the weight of each digit for the product state that asks bit ``bits[d]`` of
    every level in dimension ``d`` (None: any bit)."""
    one = {None: np.ones(2), 0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
    if g.unfolding == "interleaved":
        return [one[bits[d]] for _ in range(g.R) for d in range(g.dims)]
    v = np.ones(1)
    for d in range(g.dims):  # digit = sum_d bit_d 2**d: the last dimension most significant
        v = np.kron(one[bits[d]], v)
    return [v] * g.R


def _contract(ts: list[Any], vecs: list[np.ndarray]) -> Any:
    env = None
    for a, v in zip(ts, vecs):
        m = tf.einsum("asb,s->ab", a, tf.asarray(v))
        env = m if env is None else tf.einsum("ab,bc->ac", env, m)
    return tf.reshape(env, ())


def apply(mpo: MPO, qtt: Any, *, max_bond: int | None = None, cutoff: float = 1e-24) -> Any:
    """``mpo`` applied to a :class:`QuanticsTT` (a QuanticsTT on the same grid comes back) or
    to an :class:`~tensor4all.MPS` (an MPS comes back): the exact product, then compressed to
    at most ``max_bond`` with ``cutoff`` the relative discarded squared weight per bond. A
    naive product-then-compress (``tensor4all.quantics.operators.apply``); not differentiable."""
    if not isinstance(mpo, MPO):
        raise Tensor4allTypeError(f"apply: expected an MPO first, got {type(mpo).__name__}")
    if isinstance(qtt, QuanticsTT):
        return QuanticsTT(_apply_mpo(mpo, qtt.mps, max_bond=max_bond, cutoff=cutoff), qtt.grid)
    if isinstance(qtt, MPS):
        return _apply_mpo(mpo, qtt, max_bond=max_bond, cutoff=cutoff)
    raise Tensor4allTypeError(f"apply: expected a QuanticsTT or an MPS second, got {type(qtt).__name__}")


def reverse_bits(qtt: Any) -> Any:
    """The train with its sites in reverse order: for a one-dimensional or fused
    :class:`QuanticsTT` (a QuanticsTT on the same grid comes back) the function of the
    bit-reversed grid index in every dimension, e.g. the output of :func:`fourier_mpo` in
    natural order; for an :class:`~tensor4all.MPS` the reversed MPS."""
    if isinstance(qtt, QuanticsTT):
        if qtt.grid.unfolding == "interleaved" and qtt.grid.dims > 1:
            raise InvalidOptionError(
                "reverse_bits: reversing the sites of an interleaved grid of "
                f"{qtt.grid.dims} dimensions would also reverse the order of the dimensions; "
                "use a fused grid"
            )
        return QuanticsTT(_reverse_sites(qtt.mps), qtt.grid)
    return _reverse_sites(qtt)


# ---- interpolation --------------------------------------------------------------------------------
def _check_function(f: Any, what: str) -> Any:
    if f is None or check_callable(f, f"{what}: f") is None:
        raise Tensor4allTypeError(f"{what}: f must be a callable, got None")
    return f


def _check_argument(argument: Any, what: str) -> str:
    if not isinstance(argument, str) or argument not in ARGUMENTS:
        raise InvalidOptionError(f"{what}: argument must be one of {', '.join(map(repr, ARGUMENTS))}, got {argument!r}")
    return argument


def _arguments(g: Grid, digits: np.ndarray, argument: str) -> list[np.ndarray]:
    """The ``dims`` arrays (grid indices or float64 coordinates) of the points with the given
    ``(n, n_sites)`` digits."""
    idx = g._digits_to_indices(np.asarray(digits, dtype=np.int64))
    if argument == "index":
        return [idx[:, d] for d in range(g.dims)]
    return [np.minimum(g.lower[d] + idx[:, d].astype(np.float64) * g.step[d], g.upper[d]) for d in range(g.dims)]


def _finite(values: Any, args: Sequence[Any], argument: str) -> Any:
    """``values`` unchanged, or :class:`~tensor4all.tci.NonFiniteValueError` naming the first point
    (coordinates or grid indices) where ``f`` gave NaN or infinity. Traced values (``f`` of a
    parameter under ``tidu.grad``) are checked on their concrete value, abstract ones not."""
    if isinstance(values, tidu.Tracer):
        values_now = concrete(values)
        if values_now is None:
            return values
        _finite(values_now, args, argument)
        return values
    v = np.asarray(values)
    if v.dtype.kind in "fc" and not np.isfinite(v).all():
        k = int(np.argmin(np.isfinite(v).reshape(-1)))
        point = tuple(np.asarray(a).reshape(-1)[k].item() if np.ndim(a) else a for a in args)
        what = "grid index" if argument == "index" else "coordinate"
        where = point[0] if len(point) == 1 else point
        raise NonFiniteValueError(
            f"quantics_interpolate: f returned {v.reshape(-1)[k]} (NaN or infinity) at the "
            f"{what} {where}; the interpolation needs finite values"
        )
    return values


def _initial_pivots(grid: Grid, points: Any) -> Any:
    """The quantics digits of one grid index or a list (or array) of them."""
    if isinstance(points, np.ndarray) and points.ndim >= 1 and not (grid.dims > 1 and points.ndim == 1):
        return grid.grididx_to_quantics(points)
    if isinstance(points, (list, tuple)) and len(points) > 0 and (grid.dims == 1 or not np.isscalar(points[0])):
        return [grid.grididx_to_quantics(p) for p in points]
    return [grid.grididx_to_quantics(points)]


def quantics_interpolate(
    f: Any,
    grid: Grid,
    *,
    tolerance: float = 1e-8,
    max_bond: int | None = None,
    argument: str = "coordinate",
    batched: bool = False,
    initial_points: Any = None,
    max_iter: int = 20,
    pivot_search: str = "full",
    normalize_error: bool = True,
    global_pivots: int = 5,
    seed: int | None = 0,
) -> QuanticsTT:
    """The quantics tensor train of ``f`` on ``grid`` by tensor cross interpolation
    (:func:`tensor4all.tci.crossinterpolate2` over the quantics digits; QuanticsTCI.jl's
    ``quanticscrossinterpolate``).

    ``f`` takes one argument per dimension: the coordinates ``lower + i * step`` as float64
    (``argument="coordinate"``) or the grid indices ``i`` as ints (``argument="index"``; for
    a function whose float64 formula loses digits, e.g. ``cos(x * 2**30)``, compute the
    coordinate in extended precision with ``grid.grididx_to_origcoord(i, np.longdouble)``).
    With ``batched=True`` each argument is an array of ``n`` points and ``f`` returns ``n``
    values. ``initial_points``: grid indices (one, or a list) where ``|f|`` is large, the
    first pivots (default: grid index 0, or the largest of 64 random points if ``f`` is zero
    there). ``tolerance`` (relative to ``max|f|`` when ``normalize_error``), ``max_bond``,
    ``max_iter``, ``pivot_search``, ``global_pivots`` and ``seed`` go to ``crossinterpolate2``
    (``tolerance`` in (0, 1) when relative).

    ``f`` may compute with a parameter under ``tidu.grad``/``jvp`` (``tidu.grad(lambda th:
    quantics_interpolate(lambda x: tf.exp(-th * x**2), grid).integral())``): the pivots are
    searched on the concrete values and the train is rebuilt from ``f`` under tracing at those
    pivots (as :meth:`QuanticsTT.interpolant`), so derivatives are those at fixed pivots.

    The result's :attr:`QuanticsTT.tci` holds the run (``ranks``, ``errors``,
    ``evaluations``, ``termination``). Bad function values raise the typed errors of
    :mod:`tensor4all.tci` (:class:`~tensor4all.tci.NonFiniteValueError` naming the quantics
    digits; ``grid.quantics_to_origcoord`` gives the point).
    """
    f = _check_function(f, "quantics_interpolate")
    if not isinstance(grid, Grid):
        raise Tensor4allTypeError(f"quantics_interpolate: expected a quantics Grid, got {type(grid).__name__}")
    argument = _check_argument(argument, "quantics_interpolate")
    batched = check_bool(batched, "quantics_interpolate: batched")
    opts = _options(
        tolerance, max_bond, max_iter, pivot_search, normalize_error, global_pivots, seed, what="quantics_interpolate"
    )
    pivots = None if initial_points is None else _initial_pivots(grid, initial_points)
    if batched:

        def g(digits: np.ndarray) -> Any:
            args = _arguments(grid, digits, argument)
            return _finite(f(*args), args, argument)
    elif argument == "index":

        def g(digits: np.ndarray) -> Any:
            args = [int(i) for i in grid._digits_to_indices(digits.reshape(1, -1))[0]]
            return _finite(f(*args), args, argument)
    else:

        def g(digits: np.ndarray) -> Any:
            args = [float(x[0]) for x in _arguments(grid, digits.reshape(1, -1), argument)]
            return _finite(f(*args), args, argument)

    with blas_threads(None, opts.max_bond):  # the size policy of crossinterpolate2
        res = _interpolate(g, grid.local_dims, pivots, opts, batched, seed, "quantics_interpolate", _QUANTICS_HINT)
    return QuanticsTT(res.tt, grid, res)


_QUANTICS_HINT = (
    "qtt = quantics_interpolate(lambda x: f(x, theta0), grid) outside it, then "
    "qtt.interpolant(lambda x: f(x, theta)) inside (QuanticsTT.interpolant)"
)


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show
    (the imports this module uses stay out of sight)."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
