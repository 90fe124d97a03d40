"""Small helpers shared by the tenferro op-family tests."""
from __future__ import annotations

import numpy as np

import tenferro as tf


def tensor_of(a):
    """A tenferro tensor with the values of the array-like ``a``."""
    return tf.asarray(np.asarray(a))


def rand(shape, seed=0, dtype=np.float64):
    """Standard normal values of ``shape`` (reproducible by ``seed``)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def assert_same(t, expect):
    """``t`` equals ``expect`` exactly, with the same shape, and is column-major contiguous."""
    a = np.asarray(t)
    assert a.shape == np.shape(expect), (a.shape, np.shape(expect))
    np.testing.assert_array_equal(a, expect)
    assert t.is_contiguous


def is_writeable(a) -> bool:
    """NumPy's ``writeable`` flag; device (CuPy) arrays have no read-only mode, so
    they are always writeable."""
    return bool(getattr(a.flags, "writeable", True))


def shares_memory(a, b) -> bool:
    """``np.shares_memory`` for host arrays; for device (CuPy) arrays, whether both
    are views of one allocation (CuPy's own ``shares_memory`` only bounds-checks)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.shares_memory(a, b))
    return a.data.mem.ptr == b.data.mem.ptr
