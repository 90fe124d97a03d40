"""``tenferro._capture_blas``: NumPy's ``matmul`` on cuBLAS called directly (the route of
matrix products while ``tenferro.jit`` captures a CUDA graph), against NumPy's ``matmul``,
for every layout an operand can arrive in (row- or column-major, transposed views, padded
leading dimensions, strided batches, broadcast batches, 1-d operands, empty axes).

Under ``--placement gpu`` the products run on the real cuBLAS through ctypes (outside a
capture, on the current stream); elsewhere on the CPU stand-in for CuPy with the NumPy
emulation of ``cublas<t>gemm[StridedBatched]`` (``tests/_fake_cuda_capture.py``), which
reads each operand through the same pointer, leading dimension, op and batch stride and
fails on a leading dimension below the rows or a read past the operand.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenferro._capture_blas import CaptureBlas, NotCapturable, matmul, tensordot

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _fake_cuda_capture  # noqa: E402
import _fake_cupy  # noqa: E402

_STATE: dict = {}


def _blas(mode: str) -> CaptureBlas:
    """One route per test session: the real library on a GPU, the emulation elsewhere."""
    if mode not in _STATE:
        if mode == "gpu":
            import cupy  # noqa: PLC0415  (optional: present under --placement gpu)

            _STATE[mode] = (CaptureBlas(cupy, cupy.cuda.get_current_stream().ptr, 0), None)
        else:
            _STATE[mode] = (CaptureBlas(sys.modules["cupy"], 0, 0, gemm=_fake_cuda_capture.emulated_gemm), None)
    return _STATE[mode][0]


@pytest.fixture
def blas(request):
    mode = request.config.getoption("--placement")
    if mode in ("gpu", "fakegpu"):
        yield _blas(mode)
        return
    with _fake_cupy.installed() as cp:
        yield CaptureBlas(cp, 0, 0, gemm=_fake_cuda_capture.emulated_gemm)


LAYOUTS = ("C", "F", "T", "padded", "T_padded", "bcast", "every_other_batch", "same_rows")
DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _device(cp, host: np.ndarray, layout: str):
    """``host`` on the device in ``layout`` (its values unchanged)."""
    if host.ndim < 2:
        return cp.asarray(host)
    r, c = host.shape[-2:]
    if layout == "F":
        return cp.asfortranarray(cp.asarray(host))
    if layout == "T":  # column-major matrices, batch outermost
        return cp.ascontiguousarray(cp.asarray(np.swapaxes(host, -1, -2))).swapaxes(-1, -2)
    if layout == "T_padded":  # column-major with a leading dimension of r + 2
        big = cp.zeros(host.shape[:-2] + (c, r + 2), dtype=host.dtype)
        big[..., :r] = cp.asarray(np.swapaxes(host, -1, -2))
        return big[..., :r].swapaxes(-1, -2)
    if layout == "same_rows" and r and np.array_equal(host, np.broadcast_to(host[..., :1, :], host.shape)):
        return cp.broadcast_to(cp.asarray(np.ascontiguousarray(host[..., :1, :])), host.shape)  # row stride 0
    if layout == "padded":  # row-major with a leading dimension of c + 3
        big = cp.zeros(host.shape[:-1] + (c + 3,), dtype=host.dtype)
        big[..., :c] = cp.asarray(host)
        return big[..., :c]
    if (
        layout == "bcast"
        and host.ndim > 2
        and host.size
        and all(np.array_equal(host[(0,) * (host.ndim - 2)], m) for m in host.reshape(-1, r, c))
    ):
        return cp.broadcast_to(cp.asarray(host.reshape(-1, r, c)[0]), host.shape)
    if layout == "every_other_batch" and host.ndim > 2:
        big = cp.zeros(host.shape[:-3] + (2 * host.shape[-3], r, c), dtype=host.dtype)
        big[..., ::2, :, :] = cp.asarray(host)
        return big[..., ::2, :, :]
    return cp.asarray(np.ascontiguousarray(host))


def _random(rng: np.random.Generator, shape: tuple, dtype) -> np.ndarray:
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _tol(dtype) -> float:
    return 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


@st.composite
def products(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))

    def operand_batch():
        nb = draw(st.integers(0, len(batch)))
        kept = batch[len(batch) - nb :]
        return tuple(1 if draw(st.booleans()) else n for n in kept)

    n, k, m = draw(st.integers(0, 4)), draw(st.integers(0, 4)), draw(st.integers(0, 4))
    x1, y1 = draw(st.booleans()) and not batch, draw(st.booleans()) and not batch
    xs = (k,) if x1 else operand_batch() + (n, k)
    ys = (k,) if y1 else operand_batch() + (k, m)
    return xs, ys, draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(DTYPES))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)  # the route is stateless
@given(case=products(), seed=st.integers(0, 2**16))
def test_matmul_matches_numpy_in_every_layout(blas, case, seed):
    xs, ys, lx, ly, dtype = case
    rng = np.random.default_rng(seed)
    x, y = _random(rng, xs, dtype), _random(rng, ys, dtype)
    if lx == "bcast" and x.ndim > 2:  # one matrix repeated along the batch
        x = np.broadcast_to(x.reshape(-1, *x.shape[-2:])[:1], x.shape).copy() if x.size else x
    if ly == "bcast" and y.ndim > 2:
        y = np.broadcast_to(y.reshape(-1, *y.shape[-2:])[:1], y.shape).copy() if y.size else y
    if lx == "same_rows" and x.ndim >= 2:
        x = np.broadcast_to(x[..., :1, :], x.shape).copy()
    if ly == "same_rows" and y.ndim >= 2:
        y = np.broadcast_to(y[..., :1, :], y.shape).copy()
    cp = blas.cp
    got = matmul(blas, _device(cp, x, lx), _device(cp, y, ly))
    want = np.matmul(x, y)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=_tol(dtype), atol=_tol(dtype))


def test_matmul_out_mixed_dtypes_and_refusals(blas):
    cp, rng = blas.cp, np.random.default_rng(1)
    x, y = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5))
    got = matmul(blas, cp.asarray(x), cp.asarray(y))  # float32 @ float64 -> float64
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.get(), x.astype(np.float64) @ y, rtol=1e-12)
    out = cp.zeros((5, 3), dtype=np.float64).T  # a strided (transposed) destination
    assert matmul(blas, cp.asarray(x), cp.asarray(y), out=out) is out
    np.testing.assert_allclose(out.get(), x.astype(np.float64) @ y, rtol=1e-12)
    with pytest.raises(NotCapturable):
        matmul(blas, cp.asarray(np.ones((2, 2), np.int64)), cp.asarray(np.ones((2, 2), np.int64)))
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2, 5))
    got = tensordot(blas, cp.asarray(a), cp.asarray(b), ([2, 0], [0, 1]))
    np.testing.assert_allclose(got.get(), np.tensordot(a, b, ([2, 0], [0, 1])), rtol=1e-12)
