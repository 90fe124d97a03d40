"""Bad-input rows of tensor cross interpolation (tensor4all.tci)."""

from __future__ import annotations

import numpy as np

import tensor4all as t4a

from .common import new_table

ROWS, row = new_table()


# ---- issue 26: tensor cross interpolation (tensor4all.tci) -------
TC = t4a.tci
TC_R = TC.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2, 3], batched=True)
TC_A = t4a.MPS.random(3, d=2, bond_dim=2)
row(
    "crossinterpolate2-local_dims-zero",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 0]),
    TC.LocalDimsError,
    "local_dims[1] is 0",
)
row("crossinterpolate2-f", TC.crossinterpolate2, (None, [2, 2]), TC.TCITypeError, "f must be callable")
row(
    "crossinterpolate2-tolerance",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "tolerance must be a finite number > 0",
    tolerance=0.0,
)
row(
    "crossinterpolate2-pivot-range",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2], [[0, 2]]),
    TC.MultiIndexOutOfRangeError,
    "entry 2 at site 1, outside 0 .. 1",
)
row(
    "crossinterpolate2-nan",
    TC.crossinterpolate2,
    (lambda i: float("nan"), [2, 2]),
    TC.NonFiniteValueError,
    "returned nan at the multi-index [0, 0]",
)
row(
    "crossinterpolate2-batched-shape",
    TC.crossinterpolate2,
    (lambda i: np.ones((len(i), 2)), [2, 2]),
    TC.FunctionShapeError,
    "an array of shape (1,)",
    batched=True,
)
row(
    "crossinterpolate2-pivot_search",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "'full', 'rook'",
    pivot_search="maxvol",
)
row(
    "crossinterpolate2-threads-negative",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "crossinterpolate2: threads must be None",
    threads=-1,
)
row(
    "crossinterpolate2-threads-bool",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCITypeError,
    "crossinterpolate2: threads must be None",
    threads=True,
)
row(
    "interpolant-values",
    TC.interpolant,
    (TC_R, np.ones(2)),
    t4a.DimensionMismatchError,
    f"must have shape ({len(TC_R.points)},)",
)
row("tt_evaluate-range", TC.tt_evaluate, (TC_A, [0, 0, 5]), TC.MultiIndexOutOfRangeError, "entry 5 at site 2")
row(
    "tt_sum-weights", TC.tt_sum, (TC_A, [np.ones(3)] * 3), t4a.DimensionMismatchError, "weights[0] must have shape (2,)"
)
row("tt_add-dims", TC.tt_add, (TC_A, t4a.MPS.random(3, d=3)), t4a.DimensionMismatchError, "local dimensions")
row("tt_multiply-type", TC.tt_multiply, (TC_A, np.ones((1, 2, 1))), TC.TCITypeError, "takes a tensor4all.MPS")
