"""Quantics tensor trains: functions on grids of ``2**R`` points per dimension as MPSs
over the bits of the grid index (QuanticsGrids.jl, QuanticsTCI.jl, Quantics.jl).

* :class:`Grid` -- the grid (``R``, ``lower``, ``upper``, ``dims``, ``unfolding``,
  ``include_endpoint``) and the maps between grid indices, quantics digits and coordinates;
* :class:`QuanticsTT` -- a function on a grid as a tensor train, with
  :meth:`QuanticsTT.evaluate`, :meth:`QuanticsTT.integral` and :meth:`QuanticsTT.sum`;
* operators as MPOs on the bits of one dimension: :func:`shift_mpo`, :func:`flip_mpo`,
  :func:`fourier_mpo` (output bits reversed; :func:`reverse_bits` restores the order), and
  :func:`apply` of an MPO to a QTT.

>>> import numpy as np
>>> from tensor4all import quantics
>>> g = quantics.Grid(10, 0.0, 1.0)
>>> qtt = quantics.QuanticsTT.from_values(np.sin(2 * np.pi * g.grididx_to_origcoord(np.arange(1024))), g)
>>> qtt.rank, round(abs(qtt.integral()), 12)
(2, 0.0)
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np

import tenferro as tf

from ._errors import DimensionMismatchError, InvalidOptionError, Tensor4allTypeError, ValueRangeError
from ._mpo import MPO
from ._mps import MPS
from ._quantics_grid import MAX_BITS, UNFOLDINGS, Grid, GridRangeError
from ._quantics_ops import BOUNDARIES, flip_mpo, fourier_mpo, shift_mpo
from ._quantics_ops import apply as _apply_mpo
from ._quantics_ops import reverse_bits as _reverse_sites
from ._util import any_traced, check_alloc, concrete

__all__ = [
    "Grid", "GridRangeError", "QuanticsTT", "shift_mpo", "flip_mpo", "fourier_mpo",
    "reverse_bits", "apply", "UNFOLDINGS", "BOUNDARIES", "MAX_BITS",
]


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
            raise DimensionMismatchError(f"QuanticsTT: the MPS has sites of dimensions {mps.phys_dims}, the grid "
                                         f"{grid!r} needs {grid.local_dims}")
        self._mps = mps.dense() if mps.symmetric else mps
        self._grid, self._tci, self._arrays = grid, tci, None

    @classmethod
    def from_values(cls, values: Any, grid: Grid, *, max_bond: int | None = None,
                    cutoff: float = 1e-28) -> "QuanticsTT":
        """The QTT of the values on every grid point: an array of shape ``(2**R,) * dims``
        indexed by grid indices (by SVDs, :meth:`MPS.from_dense`, keeping at most ``max_bond``
        and dropping a relative squared weight up to ``cutoff`` per bond; for small grids)."""
        if not isinstance(grid, Grid):
            raise Tensor4allTypeError(f"QuanticsTT.from_values: expected a quantics Grid, got {type(grid).__name__}")
        shape = (grid.n_points,) * grid.dims
        check_alloc(2 * 8 * math.prod(shape), f"QuanticsTT.from_values on {grid!r}")
        v = np.asarray(values)
        if v.shape != shape:
            raise DimensionMismatchError(f"QuanticsTT.from_values: expected values of shape {shape} for {grid!r}, "
                                         f"got {v.shape}")
        digits = np.indices(grid.local_dims).reshape(grid.n_sites, -1).T    # every site digit, np.kron order
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
    def evaluate(self, x: Any) -> Any:
        """The value at the grid point nearest to the coordinate ``x`` (a number in one
        dimension, a sequence of ``dims`` numbers otherwise; an array ``(n,)`` or ``(n, dims)``
        for many points)."""
        return self.evaluate_quantics(self._grid.origcoord_to_quantics(x))

    __call__ = evaluate

    def evaluate_index(self, index: Any) -> Any:
        """The value at a grid index (or an array of them, as :meth:`Grid.grididx_to_quantics`)."""
        return self.evaluate_quantics(self._grid.grididx_to_quantics(index))

    def evaluate_quantics(self, quantics: Any) -> Any:
        """The value at quantics digits (one per site), or at each row of an ``(n, n_sites)`` array."""
        q, single = self._grid._digits(quantics, "evaluate_quantics")
        ts = self._mps.tensors
        if any_traced(ts):
            env = None
            for k, t in enumerate(ts):
                a = tf.take(t, tf.asarray(q[:, k]), axis=1)                     # (left, n, right)
                env = tf.einsum("lnr->nr", a) if env is None else tf.einsum("nl,lnr->nr", env, a)
            out = tf.reshape(env, (len(q),))
            return tf.reshape(out, ()) if single else out
        env = np.ones((len(q), 1))
        for k, a in enumerate(self._numpy()):
            env = np.einsum("nl,lnr->nr", env, a[:, q[:, k], :])
        out = env[:, 0]
        return out[0].item() if single else out

    def sum(self) -> Any:
        """The sum of the values over every grid point."""
        return self._product_sum([[(1.0, None)]] * self._grid.dims)

    def integral(self) -> Any:
        """The integral over the domain: the sum times the cell volume ``prod(step)`` (the
        rectangle rule at the left ends, whose error is ``O(step)``, spectrally small for
        periodic functions); with ``include_endpoint=True`` the trapezoidal rule (the two end
        points of every dimension weighted by 1/2)."""
        g = self._grid
        vol = math.prod(g.step)
        if not g.include_endpoint:
            return self._product_sum([[(1.0, None)]] * g.dims) * vol
        trap = [(1.0, None), (-0.5, 0), (-0.5, 1)]   # 1 - [x = 0]/2 - [x = N - 1]/2: every bit 0, every bit 1
        return self._product_sum([trap] * g.dims) * vol

    def to_values(self) -> np.ndarray:
        """Every value as an array of shape ``(2**R,) * dims`` indexed by grid indices (small grids)."""
        g = self._grid
        check_alloc(2 * 16 * g.n_points ** g.dims, f"QuanticsTT.to_values on {g!r}")
        digits = np.indices(g.local_dims).reshape(g.n_sites, -1).T
        flat = np.asarray(self._mps.to_dense())
        idx = g.quantics_to_grididx(digits).reshape(len(digits), -1)
        out = np.empty((g.n_points,) * g.dims, dtype=flat.dtype)
        out[tuple(idx.T)] = flat
        return out

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
        with np.errstate(over="ignore", invalid="ignore"):    # an overflow is reported just below
            for combo in itertools.product(*terms):
                coef = math.prod(c for c, _ in combo)
                term = _contract(ts, _site_vectors(g, [b for _, b in combo]))
                term = term if coef == 1.0 else term * coef
                total = term if total is None else total + term
        c = concrete(total)
        if c is not None and not np.isfinite(np.asarray(c)).all():
            raise ValueRangeError(f"QuanticsTT: the sum over the 2**{g.R * g.dims} grid points leaves the "
                                  "float range (~1.8e308); scale the function down and the result up")
        return total


def _site_vectors(g: Grid, bits: Sequence[int | None]) -> list[np.ndarray]:
    """Per site, the weight of each digit for the product state that asks bit ``bits[d]`` of
    every level in dimension ``d`` (None: any bit)."""
    one = {None: np.ones(2), 0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
    if g.unfolding == "interleaved":
        return [one[bits[d]] for _ in range(g.R) for d in range(g.dims)]
    v = np.ones(1)
    for d in range(g.dims):       # digit = sum_d bit_d 2**d: the last dimension most significant
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
    naive product-then-compress (``tensor4all._quantics_ops.apply``); not differentiable."""
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
            raise InvalidOptionError("reverse_bits: reversing the sites of an interleaved grid of "
                                      f"{qtt.grid.dims} dimensions would also reverse the order of the dimensions; "
                                      "use a fused grid")
        return QuanticsTT(_reverse_sites(qtt.mps), qtt.grid)
    return _reverse_sites(qtt)
