"""Derivatives of tenferro.linalg cases the gradient table (specs/linalg.py, specs/funm.py)
leaves out: the matrix norms of ord 1, -1, inf, -inf and the vector norms of other ords and
axes; expm and expm_frechet at 1-norms where scaling and squaring is active; batched 4 x 4
logm and sqrtm; sqrtm and logm of a real matrix with a complex eigenvalue pair; pinv with an
``rtol`` at a rank-deficient matrix; truncated_svd with ``cutoff`` and ``rtol``;
svd(compute_uv=False); functions of the eigenvalues through eig and eigh.

Each is checked by ``tidu.testing.check_grads`` (central finite differences for the JVP and
the dot-product test for the VJP) to second order, in float64 and complex128, at its default
step (1e-4) and tolerances (1e-5), except where a comment says otherwise. Where a function is
only piecewise smooth (a max, a rank choice) the input is built with a margin far larger than
the finite-difference step, and the test asserts that margin, so a change of the random draws
cannot silently move the point onto a kink."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
from tenferro.linalg._matops import as_cols, mH, mm
from tidu.testing import check_grads

DTYPES = ["float64", "complex128"]

#: how far (relative) a piecewise choice must be from its switching point: the
#: finite-difference steps move the input by ~1e-4 * |t| <= ~1e-3 (check_grads' default eps)
MARGIN = 1e-2


def _rand(rng, dtype, shape):
    v = rng.standard_normal(shape)
    if dtype == "complex128":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def _unitary(rng, dtype, n):
    q, _ = np.linalg.qr(_rand(rng, dtype, (n, n)))
    return q


def _with_singular_values(rng, dtype, m, n, sv):
    """An ``m x n`` matrix with the singular values ``sv`` (zeros beyond ``len(sv)``) and
    random singular vectors."""
    k = len(sv)
    u, v = _unitary(rng, dtype, m)[:, :k], _unitary(rng, dtype, n)[:, :k]
    return ((u * np.asarray(sv)) @ v.conj().T).astype(dtype)


def _assert_top_two_apart(values):
    """The largest of ``values`` leads the next by more than MARGIN (relative): a max over
    them is smooth around the test point."""
    top = np.sort(np.asarray(values))[::-1]
    assert top[0] - top[1] > MARGIN * abs(top[0]), top


# --- norms ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [1, -1, np.inf, -np.inf])
def test_matrix_norm_of_column_and_row_sums(dtype, ord):
    """ord 1 / -1: the largest / smallest column sum of |a|; inf / -inf: of the row sums
    (a max or min: smooth where it is unique). Unbatched and batched (trailing axis)."""
    a = _rand(np.random.default_rng(13), dtype, (3, 4, 2))
    for b in range(2):
        sums = np.abs(a[..., b]).sum(axis=0 if abs(ord) == 1 else 1)
        _assert_top_two_apart(sums if ord > 0 else -sums)
    check_grads(lambda x: la.norm(x, ord), (tf.asarray(a[..., 0]),), order=2)
    check_grads(lambda x: la.norm(x, ord), (tf.asarray(a),), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [1, -1, np.inf, -np.inf, 0.5, -2])
def test_vector_norm_ords(dtype, ord):
    """Vector p-norms away from zero entries (where |x|^p is not smooth), and inf / -inf
    (the largest / smallest |x_i|, unique by a margin)."""
    v = _rand(np.random.default_rng(2), dtype, (5,))
    assert np.min(np.abs(v)) > 0.1, v
    if np.isinf(ord):
        _assert_top_two_apart(np.abs(v) if ord > 0 else -np.abs(v))
    check_grads(lambda x: la.norm(x, ord), (tf.asarray(v),), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_over_axes_and_keepdims(dtype):
    """The Frobenius norm over a non-adjacent axis pair, 'fro' over (0, 1) with a batch
    axis, and a vector norm with keepdims."""
    b = tf.asarray(_rand(np.random.default_rng(3), dtype, (3, 4, 2)))
    check_grads(lambda x: la.norm(x, axis=(0, 2)), (b,), order=2)
    check_grads(lambda x: la.norm(x, "fro", axis=(0, 1)), (b,), order=2)
    check_grads(lambda x: la.norm(x, axis=1, keepdims=True), (b,), order=2)


# --- expm at larger norm ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm1", [1.5, 12.0])
def test_expm_and_expm_frechet_with_scaling_and_squaring(dtype, norm1):
    """A 4 x 4 Gaussian scaled to 1-norm 1.5 (a Pade approximant alone) and 12 (above
    theta_13 = 5.37, so scaled by a power of 2 and squared; the doubled matrices of the
    higher derivatives more so). A step that crosses a switching point of the algorithm
    changes the value by rounding only (~1e-16 relative), far below what the checks see."""
    rng = np.random.default_rng(4)
    a = _rand(rng, dtype, (4, 4))
    a = a * (norm1 / np.abs(a).sum(axis=0).max())
    e = _rand(rng, dtype, (4, 4))
    check_grads(la.expm, (tf.asarray(a),), order=2)
    check_grads(la.expm_frechet, (tf.asarray(a), tf.asarray(e)), order=2)


# --- logm and sqrtm ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [la.logm, la.sqrtm], ids=["logm", "sqrtm"])
def test_logm_and_sqrtm_batched_4x4(dtype, fn):
    """Two 4 x 4 matrices (trailing batch axis) ``G + 4 I``: eigenvalues off the closed
    negative real axis, distinct."""
    a = _rand(np.random.default_rng(6), dtype, (4, 4, 2)) + 4.0 * np.eye(4)[:, :, None]
    for b in range(2):
        w = np.linalg.eigvals(a[..., b])
        assert np.min(w.real) > 0.5, w
    check_grads(fn, (tf.asarray(a),), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("theta", [2.5, 1.0])
@pytest.mark.parametrize("fn", [la.logm, la.sqrtm], ids=["logm", "sqrtm"])
def test_logm_and_sqrtm_of_a_real_matrix_with_a_complex_eigenvalue_pair(dtype, fn, theta):
    """A real matrix (stored real or complex) with eigenvalues ``1.3 exp(+-i theta)`` and 2.6:
    at theta = 2.5 the pair has a negative real part (near, but off, the branch cut); the
    principal logarithm and square root are real for the float64 input."""
    c, s = np.cos(theta), np.sin(theta)
    a = 1.3 * np.array([[c, -s, 0.1], [s, c, 0.2], [0.0, 0.3, 2.0]])
    w = np.linalg.eigvals(a)
    assert np.sum(np.abs(w.imag) > 0.5) == 2 and np.all(np.abs(np.angle(w)) < np.pi - 0.3), w
    check_grads(fn, (tf.asarray(a.astype(dtype)),), order=2)


# --- pinv with rtol, truncated_svd with cutoff / rtol, svdvals via svd ------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 4), (4, 5)])
def test_pinv_with_rtol_at_a_rank_deficient_matrix(dtype, shape):
    """Rank 2 with singular values 2 and 1. ``rtol = 0.05`` puts the rank threshold at 0.1:
    a finite-difference step of 1e-4 along t (|t|_2 < 10) gives the zero singular values at
    most ~1e-3, far below it, and the kept ones stay near 2 and 1, far above it, so the rank
    is constant over every step and the fixed-rank derivative is the derivative of the
    function that is evaluated. (At the default rtol the steps would raise the rank.)"""
    a = _with_singular_values(np.random.default_rng(7), dtype, *shape, [2.0, 1.0])
    check_grads(lambda x: la.pinv(x, rtol=0.05), (tf.asarray(a),), order=2)


#: singular values of the truncated_svd input: squared 9, 4, 0.25, 0.01 of total 13.26
_SV = [3.0, 2.0, 0.5, 0.1]


def _truncated_reconstruction(**kw):
    def f(a):
        u, s, vh = la.truncated_svd(a, **kw)
        return mm(tf.multiply(u, as_cols(s, u.shape[0])), vh), s

    return f


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "kw,rank",
    [
        # discarded weight: dropping {0.5, 0.1} is 0.0196 <= 0.05, dropping 2 as well 0.32 > 0.05
        (dict(cutoff=0.05), 2),
        # threshold 0.1 * 3 = 0.3 keeps 3, 2, 0.5 and drops 0.1
        (dict(rtol=0.1), 3),
        # threshold 1.5 keeps 3 and 2
        (dict(rtol=0.5), 2),
    ],
    ids=["cutoff=0.05", "rtol=0.1", "rtol=0.5"],
)
def test_truncated_svd_with_cutoff_and_rtol(dtype, kw, rank):
    """The reconstruction ``U S Vh`` and ``S`` of the kept part, whose derivative includes
    the mixing with the discarded subspace. Every threshold is a factor >= 1.6 from the
    nearest singular value (or discarded weight), so no step changes the rank."""
    a = _with_singular_values(np.random.default_rng(8), dtype, 5, 4, _SV)
    f = _truncated_reconstruction(**kw)
    assert f(tf.asarray(a))[1].shape == (rank,)
    check_grads(f, (tf.asarray(a),), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5, 2)])
def test_svd_without_vectors(dtype, shape):
    """``svd(a, compute_uv=False)``: the singular values alone (distinct, nonzero)."""
    a = _rand(np.random.default_rng(9), dtype, shape)
    check_grads(lambda x: la.svd(x, compute_uv=False), (tf.asarray(a),), order=2)


# --- functions of the spectrum through eig / eigh ---------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_reconstructs_a_matrix_function(dtype):
    """``V diag(w^3) V^-1`` (= a^3, gauge invariant) from eig of a real matrix with a
    complex eigenvalue pair, stored real or complex."""
    c, s = np.cos(1.0), np.sin(1.0)
    a = tf.asarray((1.3 * np.array([[c, -s, 0.1], [s, c, 0.2], [0.0, 0.3, 2.0]])).astype(dtype))

    def cube(x):
        w, v = la.eig(x)
        return mm(tf.multiply(v, as_cols(w * w * w, 3)), la.inv(v))

    check_grads(cube, (a,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_reconstructs_a_matrix_function(dtype):
    """``V diag(exp(w)) V^H`` (= expm(a)) from eigh of a Hermitian matrix with distinct
    eigenvalues; the tangent is Hermitian-projected by the rule, the check's direction is
    general."""
    a = _rand(np.random.default_rng(11), dtype, (4, 4))
    h = tf.asarray((a + a.conj().T) / 2)

    def f(x):
        x = (x + mH(x)) * 0.5
        w, v = la.eigh(x)
        return mm(tf.multiply(v, as_cols(tf.exp(w), 4)), mH(v))

    check_grads(f, (h,), order=2)
