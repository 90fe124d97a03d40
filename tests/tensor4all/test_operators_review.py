"""Bad inputs to the operator builders that a review found reported by NumPy or Python, or with a
message that did not name the problem: huge integer and Fraction couplings, ragged operator
matrices of a user LocalSpace, OpSum coefficients that are not numbers."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tensor4all import OpSum, OpSumTermError, Tensor4allError, models
from tensor4all.sites.local_spaces import LocalSpace
from tensor4all.tools.errors import DimensionMismatchError, ValueRangeError


@pytest.mark.parametrize("value", [10**400, -(10**5000), Fraction(10**400, 3)], ids=["1e400", "-1e5000", "fraction"])
def test_coupling_past_the_float_range_is_a_value_range_error(value):
    with pytest.raises(ValueRangeError, match="must fit a float64") as e:
        OpSum([(value, "Sz", 0)])
    assert isinstance(e.value, OverflowError) and isinstance(e.value, Tensor4allError)
    assert len(str(e.value)) < 200  # the digits are not printed
    with pytest.raises(ValueRangeError, match="heisenberg: J must fit a float64"):
        models.heisenberg(4, J=value)


def test_large_integer_within_range_is_taken():
    os = OpSum([(10**300, "Sz", 0)])
    assert os.terms[0].coef == 10**300


def test_ragged_local_space_matrix_is_named():
    with pytest.raises(DimensionMismatchError, match="operator 'A' must be a real 2x2 matrix, got rows of different"):
        LocalSpace("x", 2, {"A": (1, [[1.0, 2.0], [3.0]])})


@pytest.mark.parametrize("coef", [None, np.array([0.5]), [0.5]])
def test_opsum_coefficient_not_a_number_is_named(coef):
    with pytest.raises(OpSumTermError, match="an OpSum coefficient must be a number"):
        OpSum([(coef, "Sz", 0)])


def test_opsum_coefficient_as_text_is_named():
    with pytest.raises(OpSumTermError, match="a coefficient is a number, not the string '0.5'"):
        OpSum([("0.5", "Sz", 0, "Sz", 1)])
    with pytest.raises(OpSumTermError) as e:  # a missing site is not called a coefficient
        OpSum([("Sz", 0, "Sz")])
    assert "coefficient is a number" not in str(e.value)
