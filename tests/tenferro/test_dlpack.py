"""tenferro.from_dlpack and Tensor.__dlpack__: exchange with NumPy, PyTorch and JAX.

Zero copy is asserted by comparing buffer addresses. PyTorch and JAX tests skip
when the framework is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf


def addr(t) -> int:
    return np.asarray(t).__array_interface__["data"][0]


def aligned_fortran(shape, dtype=np.float64, align=64):
    """A column-major array whose buffer starts on an ``align``-byte boundary (JAX shares only those)."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = np.empty(n * dt.itemsize + align, dtype=np.uint8)
    start = (-raw.__array_interface__["data"][0]) % align
    arr = raw[start : start + n * dt.itemsize].view(dt).reshape(shape, order="F")
    arr[...] = np.arange(n).reshape(shape, order="F")
    return arr


# -- NumPy ----------------------------------------------------------------------------------------


@pytest.mark.cpu_only
def test_numpy_column_major_is_shared():
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    t = tf.from_dlpack(a)
    assert addr(t) == addr(a) and t.is_contiguous and t.dtype is tf.float64
    back = np.from_dlpack(t)
    assert addr(back) == addr(a) and back.strides == a.strides


@pytest.mark.cpu_only
def test_numpy_row_major_is_copied_like_asarray_or_viewed_with_copy_false():
    c = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = tf.from_dlpack(c)
    assert addr(t) != addr(c) and t.is_contiguous
    assert t.is_contiguous == tf.asarray(c).is_contiguous  # same policy as asarray
    np.testing.assert_array_equal(np.asarray(t), c)
    v = tf.from_dlpack(c, copy=False)
    assert addr(v) == addr(c) and not v.is_contiguous and v.strides == (4, 1)
    np.testing.assert_array_equal(np.asarray(tf.sum(v, axis=1)), c.sum(axis=1))  # ops read strided views
    # the canonical zero-copy route for a row-major matrix: import its transpose and view it back
    w = tf.transpose_view(tf.from_dlpack(c.T))
    assert addr(w) == addr(c)
    np.testing.assert_array_equal(np.asarray(w), c)
    forced = tf.from_dlpack(np.asfortranarray(c), copy=True)
    assert forced.is_contiguous and not np.shares_memory(np.asarray(forced), c)


@pytest.mark.cpu_only
def test_vectors_and_size_zero():
    v = np.arange(5.0)
    assert addr(tf.from_dlpack(v)) == addr(v)  # 1-d contiguous is column-major
    e = tf.from_dlpack(np.zeros((0, 3)))
    assert tuple(e.shape) == (0, 3)


@pytest.mark.cpu_only
def test_errors():
    with pytest.raises(tf.TenferroTypeError, match="DLPack protocol"):
        tf.from_dlpack([1.0, 2.0])
    with pytest.raises(tf.TenferroValueError, match="copy must be"):
        tf.from_dlpack(np.zeros(2), copy="yes")
    with pytest.raises(tf.DTypeError, match="unsupported dtype float16"):
        tf.from_dlpack(np.zeros(2, np.float16))
    with pytest.raises(tf.DTypeError, match="unsupported dtype uint8"):
        tf.from_dlpack(np.zeros(2, np.uint8))

    class WrongDevice:
        def __dlpack__(self, **kwargs):
            raise AssertionError("not reached")

        def __dlpack_device__(self):
            return (4, 0)  # OpenCL

    with pytest.raises(tf.PlacementError, match="device type 4"):
        tf.from_dlpack(WrongDevice())


# -- PyTorch --------------------------------------------------------------------------------------


@pytest.mark.cpu_only
def test_torch_exchange_without_copy():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    t = tf.asarray(np.asfortranarray(np.arange(12.0).reshape(3, 4)))
    x = torch.from_dlpack(t)
    assert x.data_ptr() == addr(t) and x.stride() == (1, 3)  # torch sees the column-major strides
    np.testing.assert_array_equal(x.numpy(), np.asarray(t))
    back = tf.from_dlpack(x)
    assert addr(back) == addr(t) and back.is_contiguous
    for dtype in (torch.int32, torch.int64, torch.float32, torch.complex64, torch.complex128, torch.bool):
        y = torch.ones(2, 3, dtype=dtype).T  # (3, 2), column-major
        got = tf.from_dlpack(y)
        assert addr(got) == y.data_ptr() and str(got.dtype).replace("bool_", "bool") == str(dtype)[6:]


@pytest.mark.cpu_only
def test_torch_row_major_is_copied_unless_copy_false():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    x = torch.arange(12.0).reshape(3, 4)  # row-major
    t = tf.from_dlpack(x)
    assert addr(t) != x.data_ptr() and t.is_contiguous
    np.testing.assert_array_equal(np.asarray(t), x.numpy())
    v = tf.from_dlpack(x, copy=False)
    assert addr(v) == x.data_ptr() and v.strides == (4, 1)
    assert addr(tf.from_dlpack(x.T)) == x.data_ptr()  # x.T is column-major
    with pytest.raises(tf.DTypeError, match="not supported"):
        tf.from_dlpack(torch.zeros(2, dtype=torch.bfloat16))


@pytest.mark.cpu_only
def test_read_only_tensors_reach_torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    ro = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    ro.flags.writeable = False
    x = torch.from_dlpack(tf.asarray(ro))  # as a copy: PyTorch ignores DLPack's read-only flag
    assert x.data_ptr() != addr(ro)
    np.testing.assert_array_equal(x.numpy(), ro)
    x[0, 0] = 7.0  # its own memory (a shared read-only mapping would kill the process here)
    assert ro[0, 0] == 0.0


# -- JAX ------------------------------------------------------------------------------------------


@pytest.mark.cpu_only
def test_jax_exchange_without_copy():
    jax = pytest.importorskip("jax", reason="JAX is not installed")
    jnp = pytest.importorskip("jax.numpy")
    a = aligned_fortran((3, 4), np.float32)
    t = tf.asarray(a)
    j = jnp.from_dlpack(t)  # JAX on the CPU shares 64-byte aligned buffers
    assert j.unsafe_buffer_pointer() == addr(t)
    np.testing.assert_array_equal(np.asarray(j), a)
    v = jnp.arange(8, dtype=jnp.float32)
    back = tf.from_dlpack(v)
    assert addr(back) == v.unsafe_buffer_pointer()
    m = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)  # JAX arrays are row-major
    copied = tf.from_dlpack(m)
    assert addr(copied) != m.unsafe_buffer_pointer() and copied.is_contiguous
    view = tf.from_dlpack(m, copy=False)
    assert addr(view) == m.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(view), np.asarray(m))
    del jax


# -- CuPy (GPU) -----------------------------------------------------------------------------------


@pytest.mark.gpu
def test_cupy_exchange_without_copy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    if getattr(cupy, "FAKE", False):
        pytest.skip("needs a real GPU: the CPU stand-in for CuPy has no DLPack")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA runtime")
    x = cupy.asfortranarray(cupy.arange(12.0).reshape(3, 4))
    t = tf.from_dlpack(x)
    assert t.placement == tf.gpu(0) and t._data.data.ptr == x.data.ptr and t.is_contiguous
    assert cupy.from_dlpack(t).data.ptr == x.data.ptr
    c = cupy.arange(12.0).reshape(3, 4)  # row-major: copied, or a view with copy=False
    assert tf.from_dlpack(c)._data.data.ptr != c.data.ptr and tf.from_dlpack(c).is_contiguous
    assert tf.from_dlpack(c, copy=False)._data.data.ptr == c.data.ptr
