"""Bad-input rows of quantics grids, quantics tensor trains and their operators (tensor4all.quantics)."""

from __future__ import annotations

import numpy as np

import tensor4all as t4a

from .common import new_table

ROWS, row = new_table()


# ---- issue 26: quantics grids, quantics tensor trains and operators -------
QG = t4a.quantics
QG_G = QG.Grid(4)
QG_G2 = QG.Grid(3, dims=2, unfolding="interleaved")
QG_Q = QG.QuanticsTT.from_values(np.arange(16.0), QG_G)
QG_HUGE = QG.QuanticsTT(t4a.MPS([np.full((1, 2, 1), 1e307)] + [np.ones((1, 2, 1))] * 39), QG.Grid(40))
row("Grid-R0", QG.Grid, (0,), t4a.BondDimensionError, "R (bits per dimension)")
row("Grid-R63", QG.Grid, (63,), t4a.InvalidOptionError, "at most 62")
row("Grid-unfolding", QG.Grid, (4,), t4a.InvalidOptionError, "'fused', 'interleaved'", unfolding="zigzag")
row("Grid-lower-above-upper", QG.Grid, (4, 1.0, 0.0), t4a.InvalidOptionError, "lower must be below upper")
row("Grid-lower-nan", QG.Grid, (4, float("nan")), t4a.NonFiniteError, "lower must be finite")
row("Grid-upper-str", QG.Grid, (4, 0.0, "1"), t4a.Tensor4allTypeError, "upper must be a number or a sequence")
row("Grid-bounds-length", QG.Grid, (4, [0.0], 1.0), t4a.DimensionMismatchError, "must have 2 entries", dims=2)
row("Grid-include_endpoint-int", QG.Grid, (4,), t4a.Tensor4allTypeError, "True or False", include_endpoint=1)
row("Grid-width-overflow", QG.Grid, (4, -1e308, 1e308), t4a.ValueRangeError, "leaves the float range")
row("Grid.grididx_to_quantics-range", QG_G.grididx_to_quantics, (16,), QG.GridRangeError, "outside 0..15")
row("Grid.grididx_to_quantics-float", QG_G.grididx_to_quantics, (1.5,), t4a.Tensor4allTypeError, "must be an integer")
row("Grid.grididx_to_quantics-2d-int", QG_G2.grididx_to_quantics, (3,), t4a.Tensor4allTypeError, "sequence of 2 values")
row("Grid.quantics_to_grididx-digit", QG_G.quantics_to_grididx, ((0, 2, 0, 0),), QG.GridRangeError, "digit 2 at site 1")
row(
    "Grid.quantics_to_grididx-length",
    QG_G.quantics_to_grididx,
    ((0, 1),),
    t4a.DimensionMismatchError,
    "must have 4 entries",
)
row(
    "Grid.grididx_to_origcoord-dtype",
    QG_G.grididx_to_origcoord,
    (3,),
    t4a.InvalidOptionError,
    "float64 or longdouble",
    dtype=np.int64,
)
row("Grid.origcoord_to_grididx-outside", QG_G.origcoord_to_grididx, (1.5,), QG.GridRangeError, "outside [0.0, 1.0]")
row("Grid.origcoord_to_grididx-nan", QG_G.origcoord_to_grididx, (float("nan"),), t4a.NonFiniteError, "must be finite")
row(
    "Grid.quantics_to_origcoord-array-shape",
    QG_G.quantics_to_origcoord,
    (np.zeros((2, 3), np.int64),),
    t4a.DimensionMismatchError,
    "(n, 4) array",
)
row(
    "Grid.origcoord_to_quantics-str",
    QG_G.origcoord_to_quantics,
    ("0.5",),
    t4a.Tensor4allTypeError,
    "must be a real number",
)
row("Grid.sites_of-dim", QG_G.sites_of, (1,), QG.GridRangeError, "dimensions 0..0")
row("QuanticsTT-not-mps", QG.QuanticsTT, ("x", QG_G), t4a.Tensor4allTypeError, "expected an MPS")
row("QuanticsTT-dims", QG.QuanticsTT, (t4a.MPS.random(3), QG_G), t4a.DimensionMismatchError, "needs [2, 2, 2, 2]")
row(
    "QuanticsTT.from_values-shape",
    QG.QuanticsTT.from_values,
    (np.ones(8), QG_G),
    t4a.DimensionMismatchError,
    "expected values of shape (16,)",
)
row("QuanticsTT.evaluate-outside", QG_Q.evaluate, (-0.5,), QG.GridRangeError, "outside [0.0, 1.0]")
row("QuanticsTT.evaluate_index-negative", QG_Q.evaluate_index, (-1,), QG.GridRangeError, "outside 0..15")
row(
    "QuanticsTT.evaluate_quantics-length",
    QG_Q.evaluate_quantics,
    ((0,),),
    t4a.DimensionMismatchError,
    "must have 4 entries",
)
row("QuanticsTT.sum-overflow", QG_HUGE.sum, (), t4a.ValueRangeError, "leaves the float range")
row("QuanticsTT.integral-overflow", QG_HUGE.integral, (), t4a.ValueRangeError, "leaves the float range")
row("QuanticsTT.to_values-memory", QG_HUGE.to_values, (), t4a.Tensor4allMemoryError, "more than this machine")
row("shift_mpo-offset-float", QG.shift_mpo, (4, 1.5), t4a.Tensor4allTypeError, "offset must be an integer")
row(
    "shift_mpo-boundary",
    QG.shift_mpo,
    (4, 1),
    t4a.InvalidOptionError,
    "'periodic', 'antiperiodic', 'open'",
    boundary="dirichlet",
)
row("shift_mpo-open-off-grid", QG.shift_mpo, (4, 16), t4a.InvalidOptionError, "off the grid", boundary="open")
row("shift_mpo-grid-str", QG.shift_mpo, ("x", 1), t4a.Tensor4allTypeError, "a quantics Grid or a number of bits")
row("shift_mpo-dim", QG.shift_mpo, (QG_G2, 1), QG.GridRangeError, "dimensions 0..1", dim=2)
row("flip_mpo-boundary", QG.flip_mpo, (4,), t4a.InvalidOptionError, "boundary must be one of", boundary=1)
row("fourier_mpo-sign", QG.fourier_mpo, (4,), t4a.InvalidOptionError, "sign must be -1", sign=2)
row("fourier_mpo-rtol", QG.fourier_mpo, (4,), t4a.InvalidOptionError, "fourier_mpo: rtol", rtol=-1.0)
row(
    "reverse_bits-interleaved",
    QG.reverse_bits,
    (QG.QuanticsTT.from_values(np.ones((8, 8)), QG_G2),),
    t4a.InvalidOptionError,
    "use a fused grid",
)
row("reverse_bits-str", QG.reverse_bits, ("x",), t4a.Tensor4allTypeError, "expects a dense MPS")
row("quantics-apply-sites", QG.apply, (QG.shift_mpo(3, 1), QG_Q), t4a.DimensionMismatchError, "the MPO acts on 3 sites")
row("quantics-apply-order", QG.apply, (QG_Q.mps, QG.shift_mpo(4, 1)), t4a.Tensor4allTypeError, "MPO first")
row("quantics-apply-max_bond", QG.apply, (QG.shift_mpo(4, 1), QG_Q), t4a.BondDimensionError, "max_bond", max_bond=0)
row("quantics_interpolate-f", QG.quantics_interpolate, (None, QG_G), t4a.Tensor4allTypeError, "must be a callable")
row(
    "quantics_interpolate-grid",
    QG.quantics_interpolate,
    (np.sin, 4),
    t4a.Tensor4allTypeError,
    "expected a quantics Grid",
)
row(
    "quantics_interpolate-argument",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    t4a.InvalidOptionError,
    "'coordinate', 'index'",
    argument="x",
)
row(
    "quantics_interpolate-batched",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    t4a.Tensor4allTypeError,
    "batched must be True or False",
    batched=1,
)
row(
    "quantics_interpolate-initial_points",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    QG.GridRangeError,
    "outside 0..15",
    initial_points=[3, 16],
)
row(
    "quantics_interpolate-tolerance",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    t4a.InvalidOptionError,
    "tolerance must be a finite number > 0",
    tolerance=0.0,
)
row(
    "quantics_interpolate-nan",
    QG.quantics_interpolate,
    (lambda x: 1 / (x - 0.5) if x != 0.5 else float("nan"), QG_G),
    t4a.NonFiniteError,
    "at the coordinate 0.5",
)
row(
    "QuanticsTT.interpolant-no-pivots", QG_Q.interpolant, (np.sin,), t4a.InvalidOptionError, "from quantics_interpolate"
)
