"""The tridiagonal eigensolvers of the Krylov methods (tensor4all.linalg.lapack.lowest_tridiagonal
for Lanczos, tridiagonal_eigh for the Krylov exponential): the eigenpairs of the explicit matrix,
the same numbers as scipy.linalg.eigh_tridiagonal (the same LAPACK calls), and SciPy's error on
non-finite input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

from tensor4all.linalg import lapack


def _explicit(d: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.diag(d) + np.diag(e, 1) + np.diag(e, -1)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), k=st.integers(1, 3), seed=st.integers(0, 10_000), degenerate=st.booleans())
def test_lowest_tridiagonal(n, k, seed, degenerate):
    rng = np.random.default_rng(seed)
    d = rng.standard_normal(n)
    e = rng.standard_normal(n - 1)
    if degenerate and n > 2:  # a split matrix: two equal blocks, every eigenvalue twice
        half = n // 2
        d[half : 2 * half] = d[:half]
        e[half - 1] = 0.0
        e[half : 2 * half - 1] = e[: half - 1]
    w, v = lapack.lowest_tridiagonal(d, e, k)
    t = _explicit(d, e)
    kk = min(k, n)
    assert w.shape == (kk,) and v.shape == (n, kk)
    assert np.abs(w - np.linalg.eigvalsh(t)[:kk]).max() < 1e-12 * max(1.0, np.abs(t).max())
    assert np.abs(t @ v - v * w).max() < 1e-10
    assert np.abs(v.T @ v - np.eye(kk)).max() < 1e-10
    w_ref, v_ref = scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, kk - 1))
    assert np.array_equal(w, w_ref) and np.array_equal(v, v_ref)


def test_single_precision_goes_to_scipy():
    d, e = np.array([1.0, 2.0, 0.5], dtype=np.float32), np.array([0.3, 0.1], dtype=np.float32)
    w, v = lapack.lowest_tridiagonal(d, e, 2)
    w_ref, v_ref = scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, 1))
    assert w.dtype == w_ref.dtype == np.float32 and np.array_equal(w, w_ref) and np.array_equal(v, v_ref)
    w, v = lapack.tridiagonal_eigh(d, e)
    w_ref, v_ref = scipy.linalg.eigh_tridiagonal(d, e)
    assert w.dtype == np.float32 and np.array_equal(w, w_ref) and np.array_equal(v, v_ref)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 10_000))
def test_tridiagonal_eigh(n, seed):
    rng = np.random.default_rng(seed)
    d, e = rng.standard_normal(n), rng.standard_normal(n - 1)
    w, v = lapack.tridiagonal_eigh(d, e)
    t = _explicit(d, e)
    assert np.abs(w - np.linalg.eigvalsh(t)).max() < 1e-12 * max(1.0, np.abs(t).max())
    assert np.abs(t @ v - v * w).max() < 1e-10
    w_ref, v_ref = scipy.linalg.eigh_tridiagonal(d, e)
    assert np.array_equal(w, w_ref) and np.array_equal(v, v_ref)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_raises(bad):
    d, e = np.array([1.0, bad, 0.5]), np.array([0.1, 0.2])
    with pytest.raises(ValueError, match="infs or NaNs"):
        lapack.lowest_tridiagonal(d, e, 2)
    with pytest.raises(ValueError, match="infs or NaNs"):
        lapack.tridiagonal_eigh(e, np.array([bad]))
