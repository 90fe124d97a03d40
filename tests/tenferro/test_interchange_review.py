"""Review of data interchange and placement (2026-12-01): five defects, each test failing before
its fix.

1. ``asarray`` of an array-like whose own library refuses conversion (a PyTorch tensor with
   ``requires_grad`` or the conjugate bit set) let that library's bare ``RuntimeError`` through; an
   element type NumPy lacks (bfloat16) was called a ``ShapeError``; a device array too.
2. A ``Placement`` built by hand (pinned or managed memory of a GPU, a device id of -1, True or
   1.0) was accepted by ``zeros``/``asarray``/``set_default_placement``: a tensor landed in
   device memory other than the one asked for, or CuPy raised an untyped error.
3. A relative Parquet path whose first part holds ``:`` (``run:1.parquet``) was saved but could
   not be loaded: pyarrow read the name as a URI ("truncated or corrupt").
4. A bytes path that is not UTF-8 (legal on POSIX) could not be saved or loaded.
5. A read-only tensor (loaded from a memory-mapped file) left through ``__dlpack__`` as a shared
   read-only buffer; PyTorch ignores DLPack's read-only flag, and a write killed the process. It
   now leaves as a copy unless the consumer asks for ``copy=False``.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tenferro as tf
from tenferro import MemoryKind, Placement


class _Refusing:
    """An array-like whose library refuses conversion, as PyTorch does for ``requires_grad``."""

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad")


class _OddDtype:
    dtype = "mylib.bfloat16"

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Got unsupported ScalarType BFloat16")


class _OnDevice:
    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert cuda:0 device type tensor to numpy")

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA


def test_refused_conversions_are_typed():
    with pytest.raises(tf.TenferroError, match="refused conversion") as info:
        tf.asarray(_Refusing())
    assert isinstance(info.value, TypeError)
    with pytest.raises(tf.DTypeError, match="not one tenferro stores"):
        tf.asarray(_OddDtype())
    with pytest.raises(tf.PlacementError, match="lives on a device"):
        tf.asarray(_OnDevice())
    with pytest.raises(tf.ShapeError):  # a ragged sequence stays a shape error
        tf.asarray([[1.0, 2.0], [3.0]])


def test_a_plugin_dtype_numpy_knows_is_still_refused_by_name():
    """ml_dtypes (imported by JAX) registers bfloat16 with NumPy: the name then resolves, and the
    element type must still be refused as one tenferro does not store (the suite's order decided
    it before: after a JAX test, a ShapeError)."""
    pytest.importorskip("ml_dtypes")
    assert np.dtype("bfloat16").name == "bfloat16"
    with pytest.raises(tf.DTypeError, match="not one tenferro stores"):
        tf.asarray(_OddDtype())


def test_refused_torch_tensors_are_typed():
    torch = pytest.importorskip("torch")
    for x in (torch.ones(2, requires_grad=True), (torch.ones(2) + 1j).conj()):
        with pytest.raises(tf.TenferroError, match="refused conversion"):
            tf.asarray(x)
    with pytest.raises(tf.DTypeError, match="bfloat16"):
        tf.asarray(torch.ones(2, dtype=torch.bfloat16))


@pytest.mark.parametrize(
    "placement",
    [
        Placement(MemoryKind.PINNED_HOST, 0),
        Placement(MemoryKind.MANAGED, 0),
        Placement(MemoryKind.DEVICE, -1),
        Placement(MemoryKind.DEVICE, True),
        Placement(MemoryKind.DEVICE, 1.0),
        Placement(MemoryKind.PINNED_HOST, None),
    ],
    ids=["pinned-gpu", "managed-gpu", "device-minus-1", "device-True", "device-float", "pinned-cpu"],
)
def test_hand_built_placements_are_checked(placement):
    before = tf.get_default_placement()
    for call in (
        lambda: tf.zeros((2,), placement=placement),
        lambda: tf.asarray(np.ones(2), placement=placement),
        lambda: tf.set_default_placement(placement),
    ):
        with pytest.raises(tf.PlacementError):
            call()
    assert tf.get_default_placement() == before


@pytest.mark.cpu_only  # Arrow buffers and their DLPack export live in host memory
def test_relative_parquet_name_with_a_colon_round_trips(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    monkeypatch.chdir(tmp_path)
    x = tf.asarray(np.arange(6.0).reshape(2, 3))
    for name in ("run:1.parquet", "ckpt-12:30.arrow"):
        tf.save(name, {"x": x})
        np.testing.assert_array_equal(tf.load(name)["x"].numpy(), x.numpy())


@pytest.mark.cpu_only  # Arrow buffers live in host memory
@pytest.mark.skipif(
    sys.platform != "linux", reason="a file name that is not UTF-8 needs a POSIX file system that takes any bytes"
)
@pytest.mark.parametrize("ext", [b".arrow", b".parquet"])
@pytest.mark.parametrize("mmap", [True, False])
def test_bytes_path_that_is_not_utf8_round_trips(tmp_path, ext, mmap):
    pytest.importorskip("pyarrow")
    path = os.path.join(os.fsencode(tmp_path), b"x\xff" + ext)
    x = tf.asarray(np.arange(6.0).reshape(2, 3))
    tf.save(path, {"x": x})
    np.testing.assert_array_equal(tf.load(path, mmap=mmap)["x"].numpy(), x.numpy())
    assert sorted(os.listdir(os.fsencode(tmp_path))) == [b"x\xff" + ext]  # no temporary left


def _loaded(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "r.arrow"
    tf.save(path, {"x": tf.asarray(np.asfortranarray(np.arange(12.0).reshape(3, 4)))})
    x = tf.load(path, mmap=True)["x"]
    assert not x.numpy().flags.writeable
    return x


@pytest.mark.cpu_only  # Arrow buffers and their DLPack export live in host memory
def test_read_only_tensors_leave_dlpack_as_a_copy(tmp_path):
    x = _loaded(tmp_path)
    a = np.from_dlpack(x)
    np.testing.assert_array_equal(a, x.numpy())
    assert not np.shares_memory(a, x.numpy())
    a[0, 0] = 99.0  # a private copy: writing is fine and leaves the file's tensor alone
    assert x.numpy()[0, 0] == 0.0


@pytest.mark.cpu_only  # Arrow buffers and their DLPack export live in host memory
def test_torch_may_write_into_what_it_imports(tmp_path):
    torch = pytest.importorskip("torch")
    x = _loaded(tmp_path)
    y = torch.from_dlpack(x)
    y[0, 0] = 99.0  # killed the process (SIGSEGV) when the mapping was shared
    assert x.numpy()[0, 0] == 0.0
    np.testing.assert_array_equal(y.numpy()[1:], x.numpy()[1:])
