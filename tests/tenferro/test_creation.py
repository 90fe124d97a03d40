"""asarray, constructors, convert/cast and tenferro.random."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro import Tensor

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
SUPPORTED_NP = [np.bool_, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128]


# -- asarray ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,dtype",
    [
        (True, tf.bool_),
        (3, tf.int64),
        (2.5, tf.float64),
        (1 + 2j, tf.complex128),
        ([1, 2], tf.int64),
        ([1, 2.0], tf.float64),
        ([[True], [False]], tf.bool_),
        ([1, 1j], tf.complex128),
        ([], tf.float64),
        (np.float32(1.5), tf.float32),
        ((1, 2), tf.int64),
    ],
)
def test_asarray_infers_dtype(value, dtype):
    t = tf.asarray(value)
    assert t.dtype is dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(value))
    assert t.is_contiguous


@given(hnp.arrays(dtype=st.sampled_from(SUPPORTED_NP), shape=shapes))
def test_asarray_numpy_values_and_order(a):
    t = tf.asarray(a)
    assert t.dtype is tf.dtype(a.dtype)
    assert t._data.flags.f_contiguous
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.cpu_only  # zero-copy wrapping of host arrays
def test_asarray_no_copy_cases():
    t = tf.zeros((2, 3))
    assert tf.asarray(t) is t
    assert tf.asarray(t, dtype=tf.float64) is t
    f = np.asfortranarray(np.ones((2, 3)))
    assert tf.asarray(f)._data is f
    c = np.ones((2, 3))  # C order: copied into F order, same values
    tc = tf.asarray(c)
    assert tc.is_contiguous and not np.shares_memory(tc._data, c)
    np.testing.assert_array_equal(tc.numpy(), c)


def test_asarray_from_noncontiguous_view_and_array_like_objects():
    a = np.arange(12.0).reshape(3, 4)[::-1, ::2]
    np.testing.assert_array_equal(tf.asarray(a).numpy(), a)

    class HasArray:
        def __array__(self, dtype=None, copy=None):
            return np.arange(3, dtype=np.int32)

    assert tf.asarray(HasArray()).dtype is tf.int32

    class HasDLPack:
        def __init__(self):
            self._a = np.arange(4.0)

        def __dlpack__(self, **kw):
            return self._a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    d = tf.asarray(HasDLPack())
    assert d.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_asarray_of_tensor_list():
    t = tf.asarray([tf.asarray(1.0), tf.asarray(2.0)])
    assert t.tolist() == [1.0, 2.0] and t.dtype is tf.float64


def test_asarray_weak_python_values_with_dtype():
    assert tf.asarray([1.0, 2.0], dtype=tf.float32).dtype is tf.float32
    assert tf.asarray([1, 2], dtype="int32").dtype is tf.int32
    assert tf.asarray(1, dtype=tf.complex64).dtype is tf.complex64
    assert tf.asarray(True, dtype=tf.int32).item() == 1


@pytest.mark.parametrize(
    "value,dtype,msg",
    [
        (1.5, tf.int64, "asarray: cannot store Python float values as int64 without loss; use tenferro.cast"),
        ([1j], tf.float64, "asarray: cannot store Python complex values as float64"),
        ([1, 2], tf.bool_, "asarray: cannot store Python int values as bool"),
        (np.zeros(2), tf.float32, "asarray: converting float64 to float32 may lose information; use tenferro.cast"),
        (np.zeros(2, np.complex64), tf.float64, "asarray: converting complex64 to float64"),
        (tf.zeros(2), tf.int64, "asarray: converting float64 to int64"),
    ],
)
def test_asarray_lossy_dtype_requests(value, dtype, msg):
    with pytest.raises(tf.DTypeError, match=msg):
        tf.asarray(value, dtype=dtype)


def test_asarray_lossless_dtype_requests():
    assert tf.asarray(np.zeros(2, np.int32), dtype=tf.float64).dtype is tf.float64
    t = tf.asarray(tf.zeros(2, tf.float32), dtype=tf.complex64)
    assert t.dtype is tf.complex64 and t.is_contiguous


@pytest.mark.parametrize("bad", [np.zeros(2, np.float16), np.zeros(2, np.uint8), np.array(["a"]), np.array([object()])])
def test_asarray_unsupported_numpy_dtypes(bad):
    with pytest.raises(tf.DTypeError, match="asarray: unsupported dtype .* supported dtypes are"):
        tf.asarray(bad)


def test_asarray_bad_inputs():
    with pytest.raises(tf.ShapeError, match="asarray: cannot build a tensor from a ragged"):
        tf.asarray([[1, 2], [3]])
    with pytest.raises(tf.DTypeError, match="asarray: a Python int in the input does not fit in int64"):
        tf.asarray([2**70])
    with pytest.raises(tf.DTypeError, match="asarray: a Python int in the input does not fit in int32"):
        tf.asarray([2**40], dtype=tf.int32)
    with pytest.raises(tf.DTypeError, match="asarray: unsupported dtype"):
        tf.asarray("text")
    with pytest.raises(tf.PlacementError, match="asarray: placement must be a tenferro.Placement"):
        tf.asarray([1.0], placement="cuda")


def test_asarray_big_endian_is_normalised():
    t = tf.asarray(np.arange(3, dtype=">f8"))
    assert t.dtype is tf.float64 and t._data.dtype.isnative and t.tolist() == [0.0, 1.0, 2.0]


def test_tensor_alias():
    assert tf.tensor is tf.asarray


# -- constructors ---------------------------------------------------------------------
@given(shapes, st.sampled_from(list(tf._dtypes._ALL)))
def test_zeros_ones_full(shape, dtype):
    for t, v in ((tf.zeros(shape, dtype), 0), (tf.ones(shape, dtype), 1), (tf.full(shape, True, dtype), 1)):
        assert t.shape == shape and t.dtype is dtype and t.is_contiguous
        assert np.all(t.numpy() == v)


def test_shape_argument_forms():
    assert tf.zeros(3).shape == (3,)
    assert tf.zeros(()).shape == ()
    assert tf.zeros([2, np.int64(3)]).shape == (2, 3)
    assert tf.zeros(tf.Shape(2, 2)).shape == (2, 2)


@pytest.mark.parametrize("fn", [tf.zeros, tf.ones, lambda s: tf.full(s, 1.0)])
def test_negative_extent_is_a_shape_error(fn):
    with pytest.raises(tf.ShapeError, match=r"negative extent -1 in shape \(2, -1\); extents must be >= 0"):
        fn((2, -1))


def test_shape_errors_name_the_op():
    with pytest.raises(tf.ShapeError, match=r"zeros: negative extent"):
        tf.zeros((2, -1))
    with pytest.raises(tf.ShapeError, match="ones: shape must be an int or a sequence of ints"):
        tf.ones(2.5)
    with pytest.raises(tf.ShapeError, match="eye: negative extent -2"):
        tf.eye(-2)


def test_full_dtype_rules():
    assert tf.full(2, 1.5).dtype is tf.float64
    assert tf.full(2, 3).dtype is tf.int64
    assert tf.full(2, 1j).dtype is tf.complex128
    assert tf.full(2, 3, dtype=tf.float32).dtype is tf.float32
    assert tf.full((2,), tf.asarray(2.0, dtype=tf.float32)).dtype is tf.float32
    with pytest.raises(tf.DTypeError, match=r"full: fill value 1.5 \(float\) cannot be stored as int64 without loss"):
        tf.full(2, 1.5, dtype=tf.int64)


def test_like_constructors():
    x = tf.asarray(np.ones((2, 3), np.complex64))
    assert tf.zeros_like(x).dtype is tf.complex64 and tf.zeros_like(x).shape == (2, 3)
    assert tf.ones_like(x, dtype=tf.float32).dtype is tf.float32
    f = tf.full_like(x, 2.0)
    assert f.dtype is tf.complex64 and np.all(f.numpy() == 2)
    assert tf.zeros_like([[1, 2]]).dtype is tf.int64
    with pytest.raises(tf.DTypeError, match="full_like: fill value 1j"):
        tf.full_like(tf.zeros(2), 1j)


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (2, 4, 1), (4, 2, -1), (0, 3, 0), (3, 3, 5)])
def test_eye(n, m, k):
    t = tf.eye(n, m, k)
    np.testing.assert_array_equal(t.numpy(), np.eye(n, m, k))
    assert t.is_contiguous and t.dtype is tf.float64
    assert tf.eye(2, dtype=tf.int32).dtype is tf.int32


def test_arange():
    assert tf.arange(5).tolist() == [0, 1, 2, 3, 4] and tf.arange(5).dtype is tf.int64
    assert tf.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert tf.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert tf.arange(0, 1, 0.25).dtype is tf.float64
    assert tf.arange(3, dtype=tf.float32).dtype is tf.float32
    assert tf.arange(0).shape == (0,)
    with pytest.raises(tf.TenferroValueError, match="arange: step must be nonzero"):
        tf.arange(0, 5, 0)
    with pytest.raises(tf.DTypeError, match="arange: cannot produce int64 values from arguments of kind float"):
        tf.arange(0, 1, 0.5, dtype=tf.int64)
    with pytest.raises(tf.TenferroValueError, match="arange: start, stop and step must be real numbers"):
        tf.arange(1j)


def test_linspace():
    np.testing.assert_allclose(tf.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_allclose(tf.linspace(0, 1, 4, endpoint=False).numpy(), [0, 0.25, 0.5, 0.75])
    assert tf.linspace(0, 1, 3, dtype=tf.float32).dtype is tf.float32
    assert tf.linspace(0, 1j, 3, dtype=tf.complex128).tolist()[-1] == 1j
    assert tf.linspace(0, 1, 0).shape == (0,)
    with pytest.raises(tf.DTypeError, match="linspace: dtype must be floating or complex, got int64"):
        tf.linspace(0, 1, 3, dtype=tf.int64)
    with pytest.raises(tf.DTypeError, match="linspace: complex endpoints need a complex dtype, got float64"):
        tf.linspace(0, 1j, 3)
    with pytest.raises(tf.TenferroValueError, match="linspace: num must be non-negative, got -1"):
        tf.linspace(0, 1, -1)


# -- convert / cast ---------------------------------------------------------------------
def test_convert_lossless():
    x = tf.asarray([1, 2], dtype=tf.int32)
    y = tf.convert(x, tf.float64)
    assert y.dtype is tf.float64 and y.tolist() == [1.0, 2.0] and y.is_contiguous
    assert tf.convert(x, tf.int32) is x
    assert tf.convert(tf.asarray([1.0]), tf.complex128).tolist() == [1 + 0j]


@pytest.mark.parametrize(
    "src,dst",
    [
        (tf.float64, tf.int64),
        (tf.complex128, tf.float64),
        (tf.int64, tf.bool_),
        (tf.float64, tf.float32),
        (tf.complex128, tf.complex64),
        (tf.int64, tf.int32),
    ],
)
def test_convert_refuses_lossy(src, dst):
    x = tf.zeros(2, src)
    with pytest.raises(
        tf.DTypeError,
        match=rf"convert: cannot losslessly convert {src.name} to {dst.name}; "
        rf"use tenferro.cast\(x, {dst.name}\)",
    ):
        tf.convert(x, dst)


def test_cast_complex_to_real_takes_real_part_without_warning():
    x = tf.asarray([1 + 2j, -3.5 - 1j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = tf.cast(x, tf.float32)
        z = tf.cast(x, tf.int64)
    assert y.dtype is tf.float32 and y.tolist() == [1.0, -3.5]
    assert z.tolist() == [1, -3]


def test_cast_float_to_int_truncates_toward_zero():
    assert tf.cast(tf.asarray([2.7, -2.7, 0.5, -0.5]), tf.int32).tolist() == [2, -2, 0, 0]


def test_cast_to_bool_is_truthiness():
    assert tf.cast(tf.asarray([0.0, -0.1, 2.0]), tf.bool_).tolist() == [False, True, True]
    assert tf.cast(tf.asarray([0j, 1j, 1 + 0j]), tf.bool_).tolist() == [False, True, True]
    assert tf.cast(tf.asarray([0, 5]), "bool").tolist() == [False, True]


def test_cast_nan_to_int_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.cast(tf.asarray([np.nan, np.inf]), tf.int64)


def test_cast_keeps_layout_canonical_and_same_dtype_is_identity():
    v = tf.transpose_view(tf.zeros((2, 3)))
    c = tf.cast(v, tf.float32)
    assert c.is_contiguous and c.shape == (3, 2)
    x = tf.zeros(2)
    assert tf.cast(x, tf.float64) is x


@given(hnp.arrays(dtype=st.sampled_from(SUPPORTED_NP), shape=shapes), st.sampled_from(list(tf._dtypes._ALL)))
def test_convert_agrees_with_can_convert(a, dst):
    x = tf.asarray(a)
    if tf.can_convert(x.dtype, dst):
        y = tf.convert(x, dst)
        assert y.dtype is dst
        np.testing.assert_array_equal(y.numpy(), a.astype(dst.numpy))
    else:
        with pytest.raises(tf.DTypeError):
            tf.convert(x, dst)


# -- random -----------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [tf.random.normal, tf.random.uniform, lambda s, sh: tf.random.randint(s, sh, 10)])
def test_random_is_deterministic(fn):
    a, b = fn(7, (3, 4)), fn(7, (3, 4))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(fn(8, (3, 4)).numpy(), a.numpy())
    assert a.shape == (3, 4) and a.is_contiguous


@pytest.mark.cpu_only  # on a GPU an int seed drives CuPy's generator (a different stream, by design)
def test_random_accepts_generator():
    g1 = np.random.Generator(np.random.PCG64(3))
    a = tf.random.normal(g1, 5)
    np.testing.assert_array_equal(a.numpy(), tf.random.normal(3, 5).numpy())
    b = tf.random.normal(g1, 5)  # generator advanced in place
    assert not np.array_equal(a.numpy(), b.numpy())


def test_random_column_major_draw_order():
    flat = tf.random.normal(11, 6).numpy()
    mat = tf.random.normal(11, (2, 3)).numpy()
    np.testing.assert_array_equal(mat.reshape(-1, order="F"), flat)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.complex64, tf.complex128])
def test_normal_dtypes_and_moments(dtype):
    x = tf.random.normal(0, 200_000, dtype).numpy()
    assert x.dtype == dtype.numpy
    assert abs(x.mean()) < 0.01
    assert abs(np.mean(np.abs(x) ** 2) - 1.0) < 0.01  # E|z|^2 = 1 for real and complex
    if dtype.is_complex:
        assert abs(np.var(x.real) - 0.5) < 0.01 and abs(np.var(x.imag) - 0.5) < 0.01


def test_uniform_range_and_dtypes():
    x = tf.random.uniform(1, 10_000, tf.float32, low=-2, high=3).numpy()
    assert x.dtype == np.float32 and x.min() >= -2 and x.max() < 3
    z = tf.random.uniform(1, 100, tf.complex128).numpy()
    assert np.all((z.real >= 0) & (z.real < 1) & (z.imag >= 0) & (z.imag < 1))


def test_randint():
    x = tf.random.randint(2, (50,), 3, 6, dtype=tf.int32)
    assert x.dtype is tf.int32 and set(x.tolist()) <= {3, 4, 5}
    assert set(tf.random.randint(2, 100, 2).tolist()) == {0, 1}


def test_random_errors():
    with pytest.raises(tf.DTypeError, match="normal: dtype must be floating or complex, got int64"):
        tf.random.normal(0, 2, tf.int64)
    with pytest.raises(tf.DTypeError, match="uniform: dtype must be floating or complex, got int32; use randint"):
        tf.random.uniform(0, 2, tf.int32)
    with pytest.raises(tf.DTypeError, match="randint: dtype must be int32 or int64, got float64"):
        tf.random.randint(0, 2, 5, dtype=tf.float64)
    with pytest.raises(
        tf.TenferroValueError, match="normal: seed must be a non-negative int or a numpy.random.Generator, got -1"
    ):
        tf.random.normal(-1, 2)
    with pytest.raises(tf.TenferroValueError, match="randint: expected low < high, got low=5, high=5"):
        tf.random.randint(0, 2, 5, 5)
    with pytest.raises(tf.TenferroValueError, match=r"randint: bounds \[0, 4294967296\) do not fit in int32"):
        tf.random.randint(0, 2, 2**32, dtype=tf.int32)
    with pytest.raises(tf.TenferroValueError, match="uniform: expected low < high"):
        tf.random.uniform(0, 2, low=1, high=0)
    with pytest.raises(tf.ShapeError, match="normal: negative extent"):
        tf.random.normal(0, (-1,))


def test_results_are_tensors():
    for t in (tf.zeros(1), tf.eye(2), tf.arange(2), tf.linspace(0, 1, 2), tf.random.normal(0, 1)):
        assert type(t) is Tensor


def test_float_offsets_and_counts_are_not_truncated():
    with pytest.raises(tf.ShapeError, match="eye: diagonal offset k must be an integer"):
        tf.eye(3, k=0.5)
    with pytest.raises(tf.TenferroValueError, match="linspace: num must be an integer"):
        tf.linspace(0.0, 1.0, 2.5)


def test_conversions_are_traceable_and_differentiable():
    import tidu

    x = tf.asarray(np.array([1.0, -2.0, 3.0]))
    # asarray of a traced tensor keeps it traced (no conversion to NumPy)
    g = tidu.grad(lambda x: tf.sum(tf.asarray(x) ** 2))(x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy())
    # convert float -> complex, then a real loss: gradient flows back as a real tensor
    g = tidu.grad(lambda x: tf.sum(tf.real(tf.convert(x, tf.complex128) * (1 - 1j))))(x)
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0, 1.0])
    assert g.dtype is tf.float64
    # cast complex -> real is the real-part projection: grad = 1 (as dL/dx - i dL/dy with L = Re z)
    z = tf.asarray(np.array([1 + 2j, -1j]))
    g = tidu.grad(lambda z: tf.sum(tf.cast(z, tf.float64)))(z)
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0])
    # lossy convert of a traced value is still refused
    with pytest.raises(tf.DTypeError, match="convert"):
        tidu.grad(lambda z: tf.sum(tf.convert(z, tf.float64)))(z)
    # integer results carry no tangent
    _, t = tidu.jvp(lambda x: tf.cast(x, tf.int64), (x,), (x,))
    assert t is None or not np.any(np.asarray(t))


def test_cast_complex_to_bool_is_truthiness():
    z = tf.asarray(np.array([0j, 1j, 2 + 0j]))
    assert tf.cast(z, tf.bool_).tolist() == [False, True, True]


def test_len_and_astype_on_tensors_and_tracers():
    import tidu

    x = tf.ones((3, 2))

    def f(x):
        assert len(x) == 3
        return tf.sum(tf.real(x.astype(tf.complex128)) ** 2)

    assert len(x) == 3 and x.astype(tf.int32).dtype is tf.int32
    np.testing.assert_allclose(tidu.grad(f)(x).numpy(), 2 * np.ones((3, 2)))
    with pytest.raises(tf.TenferroTypeError, match="0-d"):
        tidu.grad(lambda s: tf.sum(s) * len(s))(tf.asarray(1.0))
