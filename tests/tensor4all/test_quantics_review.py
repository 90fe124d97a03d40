"""Review of quantics grids and TCI (2026-12-01): the last point of a closed grid, indices of grids
of 54 bits and more, empty point arrays, and values that make a fixed cross singular."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import quantics as Q
from tensor4all import tci


def test_the_last_point_of_a_closed_grid_is_upper():
    """``Grid(10, -3.3, 1.7, include_endpoint=True)``'s last coordinate was 1.7000000000000002, and
    interpolating ``sqrt(1.7 - x)`` there failed on a NaN at a point outside the interval."""
    g = Q.Grid(10, -3.3, 1.7, include_endpoint=True)
    assert g.grididx_to_origcoord(2**10 - 1) == 1.7
    assert g.grididx_to_origcoord(np.arange(2**10)).max() == 1.7
    q = Q.quantics_interpolate(lambda x: np.sqrt(1.7 - x), g, batched=True)
    x = g.grididx_to_origcoord(np.arange(2**10))
    assert np.max(np.abs(q.to_values() - np.sqrt(1.7 - x))) < 1e-6


@pytest.mark.parametrize("R", [54, 60, 62])
def test_the_nearest_index_of_upper_is_in_range_on_large_grids(R):
    """``Grid(54).origcoord_to_grididx(1.0)`` was 2**54, one past the last index: 2**R - 1 rounds up
    to 2**R in float64."""
    g = Q.Grid(R)
    assert g.origcoord_to_grididx(1.0) == 2**R - 1
    assert g.origcoord_to_grididx(0.0) == 0
    assert g.origcoord_to_grididx(np.array([0.0, 1.0])).tolist() == [0, 2**R - 1]


def test_empty_point_arrays_give_empty_results():
    """Each raised NumPy's bare "cannot reshape array of size 0 into shape (0,newaxis)"."""
    g = Q.Grid(8)
    q = Q.quantics_interpolate(np.exp, g, batched=True)
    assert g.grididx_to_quantics(np.array([], dtype=np.int64)).shape[0] == 0
    assert np.asarray(q.evaluate(np.array([]))).shape == (0,)
    assert np.asarray(q.evaluate_index(np.array([], dtype=np.int64))).shape == (0,)


def test_values_singular_at_the_fixed_pivots_are_a_typed_error():
    """A constant has rank 1 where the cross of ``sin 3x + x**2`` holds rank 2: tenferro's
    SingularMatrixError came through, naming neither the cross nor the cause."""
    q = Q.quantics_interpolate(lambda x: np.sin(3 * x) + x**2, Q.Grid(8), batched=True)
    with pytest.raises(tci.FunctionValueError, match="pivot matrix of the cross is singular") as info:
        q.interpolant(lambda x: 1.0 + 0 * x)
    assert isinstance(info.value, t4a.Tensor4allError) and isinstance(info.value, ValueError)
    res = q.tci
    with pytest.raises(tci.FunctionValueError, match="singular"):
        tci.interpolant(res, np.ones(len(res.points)))
