"""Tensor metadata, host conversions, Python protocols, placement and layout."""

from __future__ import annotations

import sys
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro import Tensor
from tenferro._placement import is_cupy_array

from helpers import check_derivatives

HAVE_CUPY = "cupy" in sys.modules or __import__("importlib").util.find_spec("cupy") is not None

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


def test_wrap_is_no_copy():
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    t = Tensor._wrap(a)
    assert t._data is a
    assert type(t) is Tensor


def test_slots_and_weakref():
    t = tf.zeros(3)
    assert not hasattr(t, "__dict__")
    r = weakref.ref(t)
    assert r() is t
    with pytest.raises(AttributeError):
        t.foo = 1  # type: ignore[attr-defined]


def test_public_constructor():
    t = Tensor([[1, 2], [3, 4]])
    assert t.dtype is tf.int64 and t.is_contiguous and t.tolist() == [[1, 2], [3, 4]]


@pytest.mark.cpu_only
def test_metadata():
    t = tf.zeros((2, 3, 4), dtype=tf.float32)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tf.Shape)
    assert t.dtype is tf.float32
    assert t.ndim == 3 and t.size == 24
    assert t.placement == tf.CPU
    assert t.strides == (1, 2, 6)  # column-major, in elements
    assert t.offset == 0
    assert t.is_contiguous
    assert t.__array_priority__ == 100


def test_strides_and_offset_of_numpy_view():
    base = np.asfortranarray(np.arange(24.0).reshape(4, 6))
    v = Tensor._wrap(base[3:0:-2, 1::2])
    assert v.strides == (-2, 8)
    assert v.offset == 3 + 1 * 4
    assert not v.is_contiguous
    assert np.array_equal(v.numpy(), base[3:0:-2, 1::2])


@pytest.mark.cpu_only
def test_numpy_shares_memory_on_cpu():
    t = tf.arange(4)
    assert t.numpy() is t._data


@given(hnp.arrays(dtype=st.sampled_from([np.float64, np.complex64, np.int32, np.bool_]), shape=shapes))
def test_array_protocol_roundtrip(a):
    t = tf.asarray(a)
    out = np.asarray(t)
    assert out.dtype == a.dtype and out.shape == a.shape
    np.testing.assert_array_equal(out, a)
    if a.size:  # tolist of a size-0 array loses trailing extents
        np.testing.assert_array_equal(np.asarray(t.tolist(), dtype=a.dtype), a)  # NaN-safe comparison
    else:
        assert t.tolist() == a.tolist()


@pytest.mark.cpu_only
def test_array_protocol_dtype_and_copy():
    t = tf.asarray([1.0, 2.0])
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    c = np.array(t, copy=True)
    c[0] = 99
    assert t.tolist() == [1.0, 2.0]
    assert np.shares_memory(np.asarray(t), t._data)
    with pytest.raises(ValueError):
        np.asarray(t, dtype=np.float32, copy=False)


@pytest.mark.cpu_only
def test_dlpack_roundtrip():
    t = tf.asarray(np.arange(6.0).reshape(2, 3))
    assert t.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(t)
    assert np.shares_memory(back, t._data)
    np.testing.assert_array_equal(back, t.numpy())


def test_item_and_scalar_protocols():
    assert tf.asarray(2.5).item() == 2.5 and isinstance(tf.asarray(2.5).item(), float)
    assert tf.asarray([[7]]).item() == 7
    assert float(tf.asarray([1.5])) == 1.5
    assert int(tf.asarray(3.9)) == 3
    assert complex(tf.asarray(1 + 2j)) == 1 + 2j
    assert complex(tf.asarray(2.0)) == 2 + 0j
    assert bool(tf.asarray([True])) is True and bool(tf.asarray(0.0)) is False
    assert [10, 20, 30][tf.asarray(1)] == 20
    assert list(range(tf.asarray(3, dtype=tf.int32))) == [0, 1, 2]
    assert len(tf.zeros((4, 2))) == 4


def test_item_errors():
    with pytest.raises(
        tf.TenferroValueError, match=r"item: expected a tensor with exactly one element, got shape \(2, 3\) \(size 6\)"
    ):
        tf.zeros((2, 3)).item()
    with pytest.raises(tf.TenferroValueError, match=r"float: expected a tensor with exactly one element"):
        float(tf.zeros(2))


def test_bool_ambiguous():
    with pytest.raises(
        tf.TenferroValueError, match=r"bool: the truth value of a tensor of shape \(2,\) \(size 2\) is ambiguous"
    ):
        bool(tf.zeros(2))
    with pytest.raises(ValueError, match="bool: .*size 0"):
        bool(tf.zeros(0))


def test_complex_to_real_scalar_errors():
    with pytest.raises(tf.DTypeError, match="float: cannot convert a complex128 tensor to float"):
        float(tf.asarray(1j))
    with pytest.raises(tf.DTypeError, match="int: cannot convert a complex64 tensor to int"):
        int(tf.asarray(1j, dtype=tf.complex64))


def test_index_errors():
    with pytest.raises(tf.DTypeError, match="index: only integer tensors can be used as an index, got float64"):
        [1, 2][tf.asarray(1.0)]
    with pytest.raises(tf.TenferroTypeError, match=r"index: only 0-d integer tensors .* got shape \(1,\)"):
        [1, 2][tf.asarray([1])]
    with pytest.raises(TypeError):
        [1, 2][tf.asarray(True)]


def test_len_of_0d():
    with pytest.raises(tf.TenferroTypeError, match="len: a 0-d tensor has no length"):
        len(tf.asarray(1.0))


@pytest.mark.cpu_only
def test_repr():
    assert repr(tf.asarray([[1.0, 2.0], [3.0, 4.0]])) == "Tensor([[1., 2.],\n        [3., 4.]], dtype=float64)"
    assert repr(tf.asarray(3, dtype=tf.int32)) == "Tensor(3, dtype=int32)"
    assert repr(tf.asarray([True, False])) == "Tensor([ True, False], dtype=bool)"
    assert repr(tf.zeros((0, 2))) == "Tensor([], shape=(0, 2), dtype=float64)"


def test_contiguous_and_copy():
    t = tf.zeros((3, 4))
    assert t.contiguous() is t
    v = tf.transpose_view(t)
    assert not v.is_contiguous and v.strides == (3, 1)
    c = v.contiguous()
    assert c.is_contiguous and c is not v and not np.shares_memory(c._data, t._data)
    np.testing.assert_array_equal(c.numpy(), t.numpy().T)
    d = t.copy()
    assert d.is_contiguous and not np.shares_memory(d._data, t._data)


def test_contiguous_of_negative_stride_view():
    t = tf.asarray(np.arange(10.0))
    v = tf.slice_view(t, slice(None, None, -3))
    c = v.contiguous()
    assert c.is_contiguous and c.strides == (1,)
    assert c.tolist() == [9.0, 6.0, 3.0, 0.0]


@pytest.mark.cpu_only
def test_cpu_placement_roundtrip():
    t = tf.ones(3)
    assert t.to_cpu() is t
    assert str(t.placement) == "cpu"


@pytest.mark.skipif(HAVE_CUPY, reason="checks the error raised without CuPy")
def test_to_gpu_without_cupy():
    with pytest.raises(tf.PlacementError, match="to_gpu: CuPy is not installed"):
        tf.ones(3).to_gpu()
    with pytest.raises(tf.PlacementError, match="asarray: CuPy is not installed"):
        tf.asarray([1.0], placement=tf.gpu(0))


@pytest.mark.cpu_only
def test_placement_helpers():
    assert tf.gpu(1) == tf.Placement(tf.MemoryKind.DEVICE, 1)
    assert str(tf.gpu(1)) == "gpu:1"
    assert tf.CPU.is_cpu and tf.gpu().is_gpu
    assert tf.placement_of(np.zeros(2)) == tf.CPU
    assert tf.placement_of(tf.zeros(2)) == tf.CPU
    assert not is_cupy_array(np.zeros(2))
    assert tf.check_same_placement("add", tf.zeros(2), np.ones(2)) == tf.CPU
    assert tf.check_same_placement("noop") == tf.CPU
    with pytest.raises(tf.TenferroValueError, match="gpu: device must be a non-negative int, got -1"):
        tf.gpu(-1)
    with pytest.raises(tf.PlacementError, match="placement_of: cannot tell where an object of type list lives"):
        tf.placement_of([1, 2])


class _FakeGpuArray:
    """Stand-in for a tensor on GPU 0 (only its placement is consulted)."""

    placement = tf.gpu(0)


@pytest.mark.cpu_only
def test_check_same_placement_mismatch():
    with pytest.raises(tf.PlacementError, match=r"matmul: operands must share one placement, got cpu, gpu:0"):
        tf.check_same_placement("matmul", tf.zeros(2), _FakeGpuArray())


def test_placement_is_frozen():
    with pytest.raises(AttributeError):
        tf.CPU.device = 3  # type: ignore[misc]


def test_import_does_not_pull_optional_backends():
    # (tidu is imported by the primitive layer, not by the data model)
    import subprocess

    code = (
        "import sys, tenferro; bad = [m for m in ('cupy', 'torch', 'jax') if m in sys.modules]; "
        "print(bad); assert not bad"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr + out.stdout


@pytest.mark.gpu
@pytest.mark.skipif(not HAVE_CUPY, reason="needs CuPy and a GPU")
def test_gpu_roundtrip():  # pragma: no cover - runs only on GPU machines
    t = tf.asarray(np.arange(6.0).reshape(2, 3), placement=tf.CPU)
    g = t.to_gpu(0)
    assert is_cupy_array(g._data) and g.placement == tf.gpu(0) and g.is_contiguous
    assert g.to_gpu(0) is g
    np.testing.assert_array_equal(g.numpy(), t.numpy())
    back = g.to_cpu()
    assert back.placement == tf.CPU and back.is_contiguous
    np.testing.assert_array_equal(back.numpy(), t.numpy())
    v = tf.transpose_view(g)
    assert v.placement == tf.gpu(0) and v.strides == (2, 1)  # column-major (2, 3): strides (1, 2)
    assert tf.slice_view(g, (slice(None, None, -1),)).tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    with pytest.raises(tf.PlacementError, match="add: operands must share one placement"):
        tf.check_same_placement("add", t, g)


def test_value_semantics_are_documented():
    for doc in (Tensor.__doc__, tf.__doc__):
        assert "values" in doc and "undefined behaviour" in doc and "np.array(t)" in doc
    t = tf.asarray(np.ones(3))
    private = np.array(t)
    private[0] = 5.0
    assert t.numpy()[0] == 1.0


def test_binary_operators_defer_to_operands_that_ask_for_it():
    """An operand whose class sets ``__array_ufunc__ = None`` (NumPy's convention; e.g.
    ``tensor4all.MPS``) gets the operator: ``t * x`` is ``x.__rmul__(t)``."""

    class Deferring:
        __array_ufunc__ = None

        def __rmul__(self, other):
            return ("rmul", other)

        def __radd__(self, other):
            return ("radd", other)

        def __mul__(self, other):
            return ("mul", other)

    t = tf.asarray(2.0)
    d = Deferring()
    assert (t * d)[0] == "rmul" and (t + d)[0] == "radd" and (d * t)[0] == "mul"
    with pytest.raises(tf.TenferroTypeError):
        t * "x"


# ---- mT and mH: the matrix axes of matmul's layout --------------------------------------------
@given(shape=st.lists(st.integers(1, 3), min_size=2, max_size=4), dtype=st.sampled_from(["float64", "complex128"]))
def test_mT_and_mH_swap_the_last_two_axes(shape, dtype):
    """``x.mT`` is ``numpy.swapaxes(x, -1, -2)`` (the array API standard's ``mT``, PyTorch's), a
    batch of matrices in matmul's layout (leading batch axes); ``x.mH`` its conjugate."""
    rng = np.random.default_rng(len(shape))
    a = rng.standard_normal(shape)
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal(shape)
    x = tf.asarray(a)
    np.testing.assert_array_equal(x.mT.numpy(), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(x.mH.numpy(), np.swapaxes(a, -1, -2).conj())
    assert x.mH.dtype == x.dtype
    y = tf.asarray(rng.standard_normal(shape[:-2] + [shape[-2], 2]))
    np.testing.assert_allclose((x.mH @ y).numpy(), np.swapaxes(a, -1, -2).conj() @ y.numpy())


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_mT_and_mH_derivatives(dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4))
    w = rng.standard_normal((2, 4, 3))
    if dtype == "complex128":
        a, w = a + 1j * rng.standard_normal(a.shape), w + 1j * rng.standard_normal(w.shape)
    W = tf.asarray(w)
    for mode in ("eager", "jit"):
        check_derivatives(mode, lambda x: x.mT * W, [tf.asarray(a)], order=2)
        check_derivatives(mode, lambda x: x.mH * W, [tf.asarray(a)], order=2)


@pytest.mark.parametrize("name", ["mT", "mH"])
def test_mT_and_mH_of_a_vector_name_the_rank(name):
    with pytest.raises(tf.ShapeError, match=f"{name}: a tensor of rank 1 has no matrix axes"):
        getattr(tf.asarray(np.ones(3)), name)
