"""DType tags, normalisation, the promotion lattice and lossless conversion."""

from __future__ import annotations

import copy
import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
from tenferro._dtypes import _ALL, _from_numpy

ALL = list(_ALL)


def test_repr_and_fields():
    assert repr(tf.float64) == "tenferro.float64"
    assert str(tf.complex64) == "complex64"
    assert tf.complex128.numpy == np.dtype(np.complex128)
    assert tf.float32.itemsize == 4 and tf.complex128.itemsize == 16 and tf.bool_.itemsize == 1
    assert [d.kind for d in ALL] == ["bool", "int", "int", "float", "float", "complex", "complex"]


def test_flags():
    assert tf.complex64.is_complex and not tf.float64.is_complex
    assert tf.float32.is_floating and tf.complex128.is_floating and not tf.int64.is_floating
    assert tf.float64.is_inexact and not tf.bool_.is_inexact
    assert tf.int32.is_integer and not tf.bool_.is_integer


def test_real_and_complex_dtype():
    assert tf.complex128.real_dtype is tf.float64
    assert tf.complex64.real_dtype is tf.float32
    assert tf.float32.real_dtype is tf.float32
    assert tf.float32.complex_dtype is tf.complex64
    assert tf.float64.complex_dtype is tf.complex128
    assert tf.complex64.complex_dtype is tf.complex64
    with pytest.raises(tf.DTypeError, match="complex_dtype: int32 has no complex counterpart"):
        tf.int32.complex_dtype


def test_immutable_hashable_singleton():
    with pytest.raises(AttributeError, match="immutable"):
        tf.float64.name = "x"  # type: ignore[misc]
    assert not hasattr(tf.float64, "__dict__")
    assert len({tf.float64, tf.float64, tf.int32}) == 2
    assert pickle.loads(pickle.dumps(tf.complex64)) is tf.complex64
    assert copy.deepcopy(tf.int32) is tf.int32


@pytest.mark.parametrize(
    "obj,expected",
    [
        ("float64", tf.float64),
        ("float32", tf.float32),
        ("bool", tf.bool_),
        ("bool_", tf.bool_),
        ("int32", tf.int32),
        ("complex64", tf.complex64),
        ("f8", tf.float64),
        ("c16", tf.complex128),
        (float, tf.float64),
        (complex, tf.complex128),
        (int, tf.int64),
        (bool, tf.bool_),
        (np.float32, tf.float32),
        (np.dtype("int32"), tf.int32),
        (np.bool_, tf.bool_),
        (np.dtype(">f8"), tf.float64),
        (tf.complex128, tf.complex128),
    ],
)
def test_dtype_normalisation(obj, expected):
    assert tf.dtype(obj) is expected


@pytest.mark.parametrize("bad", ["float16", np.float16, np.uint8, "uint8", object, "object", "U5"])
def test_dtype_unsupported(bad):
    with pytest.raises(tf.DTypeError, match=r"dtype: unsupported dtype .*supported dtypes are bool, int32"):
        tf.dtype(bad)


def test_dtype_not_a_dtype():
    with pytest.raises(tf.DTypeError, match="dtype: 'nonsense' is not a dtype; expected one of"):
        tf.dtype("nonsense")
    assert issubclass(tf.DTypeError, TypeError)


def test_numpy_interop_through_dtype_attribute():
    assert np.dtype(tf.float32) == np.float32
    assert np.zeros(2, dtype=tf.complex64).dtype == np.complex64


def test_from_numpy_hot_path_table():
    for d in ALL:
        assert _from_numpy[np.dtype(d.numpy.type)] is d
        assert _from_numpy[np.empty(0, d.numpy).dtype] is d


# Expected joins of the documented lattice.
LATTICE = {
    (tf.bool_, tf.int32): tf.int32,
    (tf.int32, tf.int64): tf.int64,
    (tf.int64, tf.float32): tf.float32,
    (tf.int32, tf.float64): tf.float64,
    (tf.float32, tf.float64): tf.float64,
    (tf.float32, tf.complex64): tf.complex64,
    (tf.float64, tf.complex64): tf.complex128,
    (tf.complex64, tf.complex128): tf.complex128,
    (tf.bool_, tf.complex64): tf.complex64,
    (tf.int64, tf.complex64): tf.complex64,
    (tf.bool_, tf.bool_): tf.bool_,
}


@pytest.mark.parametrize("pair", list(LATTICE))
def test_result_type_lattice(pair):
    a, b = pair
    assert tf.result_type(a, b) is LATTICE[pair]
    assert tf.result_type(b, a) is LATTICE[pair]


@given(st.sampled_from(ALL), st.sampled_from(ALL), st.sampled_from(ALL))
def test_result_type_is_a_join(a, b, c):
    ab = tf.result_type(a, b)
    assert tf.result_type(a, b) is tf.result_type(b, a)  # commutative
    assert tf.result_type(ab, c) is tf.result_type(a, tf.result_type(b, c))  # associative
    assert tf.result_type(a, a) is a  # idempotent
    assert tf.can_convert(a, ab) and tf.can_convert(b, ab)  # upper bound
    # least: every common upper bound is above the join
    for u in ALL:
        if tf.can_convert(a, u) and tf.can_convert(b, u):
            assert tf.can_convert(ab, u)


@pytest.mark.parametrize(
    "strong,scalar,expected",
    [
        (tf.float32, 1.0, tf.float32),
        (tf.float32, 1j, tf.complex64),
        (tf.float64, 1j, tf.complex128),
        (tf.int32, 1, tf.int32),
        (tf.int32, 1.0, tf.float64),
        (tf.int32, 1j, tf.complex128),
        (tf.bool_, True, tf.bool_),
        (tf.bool_, 1, tf.int64),
        (tf.bool_, 1.0, tf.float64),
        (tf.complex64, 2.0, tf.complex64),
        (tf.complex64, 1, tf.complex64),
        (tf.float32, True, tf.float32),
    ],
)
def test_weak_python_scalars(strong, scalar, expected):
    assert tf.result_type(strong, scalar) is expected
    assert tf.result_type(scalar, strong) is expected


def test_only_weak_scalars_use_defaults():
    assert tf.result_type(True) is tf.bool_
    assert tf.result_type(1, True) is tf.int64
    assert tf.result_type(1, 2.0) is tf.float64
    assert tf.result_type(1j, 1) is tf.complex128


def test_result_type_of_tensors_arrays_and_numpy_scalars():
    assert tf.result_type(tf.zeros(2, tf.float32), 2.0) is tf.float32
    assert tf.result_type(np.zeros(2, np.int32), tf.int64) is tf.int64
    assert tf.result_type(np.float32(1.0), 1j) is tf.complex64  # numpy scalars are strong
    assert tf.result_type("float32", np.float64) is tf.float64
    assert tf.result_type(float) is tf.float64


def test_result_type_errors():
    with pytest.raises(tf.TenferroValueError, match="result_type: expected at least one"):
        tf.result_type()
    with pytest.raises(tf.DTypeError, match="result_type: unsupported dtype float16"):
        tf.result_type(np.zeros(2, np.float16))


@pytest.mark.parametrize(
    "src,dst,ok",
    [
        (tf.int32, tf.int64, True),
        (tf.bool_, tf.float32, True),
        (tf.float32, tf.complex64, True),
        (tf.float64, tf.complex128, True),
        (tf.int64, tf.float64, True),
        (tf.float32, tf.float64, True),
        (tf.float64, tf.int64, False),
        (tf.complex64, tf.float32, False),
        (tf.int32, tf.bool_, False),
        (tf.float64, tf.float32, False),
        (tf.int64, tf.int32, False),
        (tf.complex128, tf.complex64, False),
        (tf.float64, tf.complex64, False),
        (tf.complex64, tf.float64, False),
    ],
)
def test_can_convert(src, dst, ok):
    assert tf.can_convert(src, dst) is ok
    assert tf.can_convert(src.name, dst.numpy) is ok


def test_can_convert_is_reflexive_and_transitive():
    for a in ALL:
        assert tf.can_convert(a, a)
    for a, b, c in itertools.product(ALL, repeat=3):
        if tf.can_convert(a, b) and tf.can_convert(b, c):
            assert tf.can_convert(a, c)
        if tf.can_convert(a, b) and tf.can_convert(b, a):
            assert a is b
