"""Nasty inputs for tenferro.linalg derivatives (issue 10): exact and near
degeneracy, rank deficiency (QR with a zero column, SVD, det/slogdet), large-norm
expm, singular det. The scored cases (``linalg_nasty_cases.py``; all of them, against
JAX and PyTorch: ``benchmarks/linalg_accuracy.py``) are asserted here on a subset
against extended-precision (mpmath) finite differences, and the fixes behind them
get their own tests: expm's second derivatives against JAX, the scale invariance of
``expm_frechet``'s A-derivative, QR at rank-deficient input (tall, square, wide,
reduced and complete, lq, batches, second order) against finite differences, and the
errors where no derivative exists."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tenferro.linalg as la
import tidu
from tidu.testing import check_grads

import linalg_nasty_cases as cases
from linalg_nasty_cases import QUICK

jax.config.update("jax_enable_x64", True)


def _gauss(rng, shape, cplx):
    g = rng.standard_normal(shape)
    return g + 1j * rng.standard_normal(shape) if cplx else g


# ---------------------------------------------------------------------------
# the scored cases (subset): tenferro against mpmath finite differences
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("case", QUICK, ids=[c.name for c in QUICK])
def test_nasty_case(case):
    if not case.smooth or case.tenferro == "raises":
        # no derivative (or a documented refusal, note below): a typed error, never a number
        with pytest.raises(la.LinalgError):
            cases.tenferro_derivative(case)
        return
    got = cases.tenferro_derivative(case)
    ref = cases.reference(case)
    err = cases.relative_error(got, ref, case.scale)
    assert np.all(np.isfinite(got)) and err <= cases.RTOL, f"{case.name}: relative error {err:.2e}"


def test_case_list_shape():
    # a few hundred cases over the five categories, each represented in the asserted subset
    assert len(cases.CASES) >= 300
    assert {c.category for c in cases.CASES} == set(cases.CATEGORIES) == {c.category for c in QUICK}
    assert all(c.loss in cases.LOSSES for c in cases.CASES)
    assert len({c.name for c in cases.CASES}) == len(cases.CASES)


def test_judge():
    case = next(c for c in cases.CASES if c.smooth)
    ref = np.ones_like(case.a)
    assert cases.judge(case, ref * (1 + 1e-7), ref) and not cases.judge(case, ref * (1 + 1e-5), ref)
    assert not cases.judge(case, None, ref) and not cases.judge(case, ref * np.nan, ref)
    rough = next(c for c in cases.CASES if not c.smooth)
    assert cases.judge(rough, None, None) and cases.judge(rough, ref * np.inf, None)
    assert not cases.judge(rough, ref, None)


# ---------------------------------------------------------------------------
# expm: second derivatives at large norm, scale of E in the block rule
# ---------------------------------------------------------------------------
def _expm_input(rng, norm, cplx):
    q, _ = np.linalg.qr(_gauss(rng, (4, 4), cplx))
    a = (q * np.array([norm, -norm, 0.3 * norm, 1.0])) @ q.conj().T
    return a + 0.05 * norm * _gauss(rng, (4, 4), cplx)  # not normal


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("loss", ["sq", "inner"])
def test_expm_hvp_matches_jax_at_norm_50(cplx, loss):
    rng = np.random.default_rng(50 + cplx)
    a, v, c = _expm_input(rng, 50.0, cplx), _gauss(rng, (4, 4), cplx), _gauss(rng, (4, 4), cplx)
    if loss == "sq":
        f_tf = lambda x: 0.5 * tf.real(tf.sum(la.expm(x) * tf.conj(la.expm(x))))  # noqa: E731
        f_jax = lambda x: 0.5 * jnp.real(jnp.sum(jax.scipy.linalg.expm(x) * jnp.conj(jax.scipy.linalg.expm(x))))  # noqa: E501,E731
    else:
        f_tf = lambda x: tf.real(tf.sum(tf.asarray(c) * la.expm(x)))  # noqa: E731
        f_jax = lambda x: jnp.real(jnp.sum(c * jax.scipy.linalg.expm(x)))  # noqa: E731
    got = tidu.jvp(tidu.grad(f_tf), (tf.asarray(a),), (tf.asarray(v),))[1].numpy()
    want = np.asarray(jax.jvp(jax.grad(f_jax), (a,), (v,))[1])
    # two float64 Padé evaluations of a ~e^100-sized Hessian: agreement to rounding times
    # the condition of expm at norm 50 (it was 50% off before E was scaled)
    assert np.linalg.norm(got - want) <= 1e-9 * np.linalg.norm(want)


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("scale", [1e20, 1e-20, 1.0])
def test_expm_frechet_a_derivative_is_invariant_to_the_scale_of_e(cplx, scale):
    # L(A, E) is linear in E: so is its A-derivative, to rounding (it was 100% wrong at 1e20)
    rng = np.random.default_rng(7 + cplx)
    a, e, v = 0.5 * _gauss(rng, (4, 4), cplx), _gauss(rng, (4, 4), cplx), _gauss(rng, (4, 4), cplx)

    def d_a(e_):
        return tidu.jvp(lambda x: la.expm_frechet(x, tf.asarray(e_)), (tf.asarray(a),), (tf.asarray(v),))[1].numpy()

    base = d_a(e)
    assert np.linalg.norm(d_a(scale * e) - scale * base) <= 1e-14 * scale * np.linalg.norm(base)
    # and the unscaled value is the mixed second derivative: d/dt L(A + t V, E) at t = 0
    t = 1e-6
    fd = (
        scipy.linalg.expm_frechet(a + t * v, e, compute_expm=False)
        - scipy.linalg.expm_frechet(a - t * v, e, compute_expm=False)
    ) / (2 * t)
    assert np.allclose(base, fd, rtol=1e-7, atol=1e-8)  # central-difference accuracy (t^2)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_expm_frechet_check_grads_order_2_with_large_e(dtype):
    # second derivatives of L(A, E) (third of expm) with E far larger than A: each
    # nested block rule scales its own E
    rng = np.random.default_rng(3)
    cplx = dtype == "complex128"
    a = tf.asarray(0.7 * _gauss(rng, (3, 3), cplx))
    e = tf.asarray(1e6 * _gauss(rng, (3, 3), cplx))
    check_grads(la.expm_frechet, (a, e), order=2)
    check_grads(la.expm, (tf.asarray(2.0 * _gauss(rng, (3, 3), cplx)),), order=2)


def test_expm_frechet_a_derivative_with_zero_e_and_batches():
    a = _gauss(np.random.default_rng(1), (3, 3, 2), False)
    e = np.zeros((3, 3, 2))
    e[..., 1] = 1e30 * np.eye(3)  # one zero matrix, one huge: scaled per matrix
    got = tidu.jvp(lambda x: la.expm_frechet(x, tf.asarray(e)), (tf.asarray(a),), (tf.asarray(a),))[1].numpy()
    assert np.all(got[..., 0] == 0)
    one = tidu.jvp(
        lambda x: la.expm_frechet(x, tf.asarray(np.eye(3))), (tf.asarray(a[..., 1]),), (tf.asarray(a[..., 1]),)
    )[1].numpy()
    assert np.allclose(got[..., 1], 1e30 * one, rtol=1e-13, atol=0)


# ---------------------------------------------------------------------------
# QR at rank-deficient input
# ---------------------------------------------------------------------------
def _fd_grad(loss, a, cplx, eps=1e-6):
    """Central-difference gradient in tidu's convention (dL/dx - i dL/dy)."""
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        for unit in [1.0, 1j] if cplx else [1.0]:
            d = np.zeros_like(a)
            d[idx] = eps * unit
            df = (float(loss(tf.asarray(a + d))) - float(loss(tf.asarray(a - d)))) / (2 * eps)
            g[idx] += df * np.conj(unit)
    return g


def _leading_loss(k, mode, rng, m, n, cplx, lq=False):
    """A phase-invariant loss of Q[:, :k] and R[:k, :] (or of lq's leading rows of Q
    and columns of L)."""
    cq = tf.asarray(_gauss(rng, (m, m), cplx))
    cr = tf.asarray(_gauss(rng, (k, n), False))

    def loss(x):
        if lq:
            l_, q = la.lq(x)
            q1, r1 = tf.conj(q[:k, :]).T, tf.conj(l_[:, :k]).T
        else:
            q, r = la.qr(x, mode=mode)
            q1, r1 = q[:, :k], r[:k, :]
        # |r|^2 as r conj(r): abs has derivative 0 at 0 (a subgradient), so abs(r)**2 has a
        # wrong second derivative where r = 0, as R[:k, j] is at a zero column
        return (
            tf.real(tf.sum(cq * (q1 @ tf.conj(q1).T)))
            + tf.real(tf.sum(cr * (r1 * tf.conj(r1))))
            + tf.real(tf.sum(q1 @ r1))
        )

    return loss


QR_SHAPES = [
    ((5, 3), 2, "reduced"),
    ((5, 3), 1, "complete"),
    ((4, 4), 2, "reduced"),
    ((4, 4), 3, "complete"),
    ((3, 5), 1, "reduced"),
    ((3, 5), 2, "reduced"),
    ((4, 3), 1, "reduced"),
]


@pytest.mark.parametrize("shape,zero,mode", QR_SHAPES)
@pytest.mark.parametrize("cplx", [False, True])
def test_qr_rank_deficient_leading_gradient(shape, zero, mode, cplx):
    rng = np.random.default_rng(zero + 10 * shape[0] + 100 * cplx)
    a = _gauss(rng, shape, cplx)
    a[:, zero] = 0
    loss = _leading_loss(zero, mode, rng, shape[0], shape[1], cplx)
    g = tidu.grad(loss)(tf.asarray(a)).numpy()
    assert np.allclose(g, _fd_grad(loss, a, cplx), rtol=1e-6, atol=1e-7)  # central-difference accuracy


@pytest.mark.parametrize("cplx", [False, True])
def test_qr_rank_deficient_dependent_column_and_lq(cplx):
    # a column in the span of the ones before it (not zero), and lq's rows
    rng = np.random.default_rng(5)
    a = _gauss(rng, (5, 4), cplx)
    a[:, 2] = a[:, 0] - 2 * a[:, 1]
    loss = _leading_loss(2, "reduced", rng, 5, 4, cplx)
    assert np.allclose(tidu.grad(loss)(tf.asarray(a)).numpy(), _fd_grad(loss, a, cplx), rtol=1e-6, atol=1e-7)
    b = np.ascontiguousarray(a.T)
    loss_lq = _leading_loss(2, "reduced", rng, 5, 4, cplx, lq=True)  # qr of b^H (5 x 4)
    assert np.allclose(tidu.grad(loss_lq)(tf.asarray(b)).numpy(), _fd_grad(loss_lq, b, cplx), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("cplx", [False, True])
def test_qr_rank_deficient_second_order_every_mode(cplx):
    # the Hessian of a loss on the leading factors: reverse over reverse, forward over
    # reverse (hvp) and the full hessian (jacfwd of jacrev), against differences of the gradient
    rng = np.random.default_rng(11)
    a = _gauss(rng, (5, 3), cplx)
    a[:, 2] = 0
    loss = _leading_loss(2, "reduced", rng, 5, 3, cplx)
    w = _gauss(rng, (5, 3), cplx)
    # D_w L = Re sum(g w) (tidu's pairing), whose gradient is the Hessian applied to w
    inner = lambda x: tf.real(tf.sum(tf.asarray(w) * tidu.grad(loss)(x)))  # noqa: E731
    fd = _fd_grad(inner, a, cplx, eps=1e-5)
    assert np.allclose(tidu.grad(inner)(tf.asarray(a)).numpy(), fd, rtol=1e-5, atol=1e-6)  # FD of a gradient
    hvp = tidu.jvp(tidu.grad(loss), (tf.asarray(a),), (tf.asarray(w),))[1].numpy()
    assert np.allclose(hvp, fd, rtol=1e-5, atol=1e-6)
    if not cplx:
        h = tidu.hessian(loss)(tf.asarray(a)).numpy()
        assert np.allclose(np.einsum("ijkl,kl->ij", h, w), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cplx", [False, True])
def test_qr_rank_deficient_forward_mode(cplx):
    # tangents of the leading factors exact; those of the trailing factors NaN (no derivative)
    rng = np.random.default_rng(12)
    a = _gauss(rng, (4, 4), cplx)
    a[:, 1] = 0
    v = _gauss(rng, (4, 4), cplx)
    (q, r), (dq, dr) = tidu.jvp(la.qr, (tf.asarray(a),), (tf.asarray(v),))
    t = 1e-7
    q_p, r_p = la.qr(tf.asarray(a + t * v))
    q_m, r_m = la.qr(tf.asarray(a - t * v))
    assert np.allclose(dq.numpy()[:, :1], (q_p.numpy() - q_m.numpy())[:, :1] / (2 * t), atol=1e-6)  # FD accuracy
    assert np.allclose(dr.numpy()[:1], (r_p.numpy() - r_m.numpy())[:1] / (2 * t), atol=1e-6)
    assert np.all(np.isnan(dq.numpy()[:, 1:])) and np.all(np.isnan(dr.numpy()[1:, 1:]))
    assert np.all(dr.numpy()[1:, :1] == 0)  # structurally zero below the diagonal


def test_qr_rank_deficient_batch_uses_the_first_zero_pivot_of_any_matrix():
    rng = np.random.default_rng(2)
    a = _gauss(rng, (5, 3, 2), False)
    a[:, 1, 0] = 0  # matrix 0: pivot 1; matrix 1: full rank
    cq = tf.asarray(_gauss(rng, (5, 1, 2), False))
    loss = lambda x: tf.sum(cq * la.qr(x)[0][:, :1] ** 2)  # noqa: E731
    assert np.allclose(tidu.grad(loss)(tf.asarray(a)).numpy(), _fd_grad(loss, a, False), rtol=1e-6, atol=1e-7)
    with pytest.raises(la.SingularMatrixError, match=r"column 1 lies in the span"):
        tidu.grad(lambda x: tf.sum(la.qr(x)[0][:, 1:2] ** 2))(tf.asarray(a))


@pytest.mark.parametrize("shape,zero", [((5, 3), 1), ((3, 5), 0), ((4, 4), 2)])
def test_qr_rank_deficient_trailing_factors_raise(shape, zero):
    a = _gauss(np.random.default_rng(4), shape, False)
    a[:, zero] = 0
    x = tf.asarray(a)
    why = "is zero" if zero == 0 else "lies in the span of the columns before it"
    msg = rf"qr: at the rank-deficient matrix a of shape \({shape[0]}, {shape[1]}\) \(column {zero} {why}"
    with pytest.raises(la.SingularMatrixError, match=msg + r".*nonzero cotangent"):
        tidu.grad(lambda y: tf.sum(la.qr(y)[0][:, zero:] ** 2))(x)  # Q's trailing columns
    with pytest.raises(la.SingularMatrixError, match=r"R\[.*:, .*:\] have no derivative"):
        tidu.grad(lambda y: tf.sum(la.qr(y)[1] ** 2))(x)  # R's trailing block


def test_qr_singular_part_map():
    from tenferro.linalg._qr import qr_singular_part_p

    for role in ("tangent", "cotangent"):
        z = qr_singular_part_p.bind(tf.zeros((3, 2)), shape=(4, 1), role=role, where="w")
        assert z.shape == (4, 1) and np.all(z.numpy() == 0)
    assert np.all(np.isnan(qr_singular_part_p.bind(tf.ones((3, 2)), shape=(4, 1), role="tangent", where="w").numpy()))
    with pytest.raises(la.SingularMatrixError, match="qr: w; the loss depends on them"):
        qr_singular_part_p.bind(tf.ones((3, 2)), shape=(4, 1), role="cotangent", where="w")


# ---------------------------------------------------------------------------
# det: the Hessian at singular matrices
# ---------------------------------------------------------------------------
def _det_hessian_mp(a, e, g):
    """d^2/ds dt det(a + s e + t g) at 0 by the mixed second difference at 50 digits and
    step 1e-10: truncation O(h^2) = 1e-20 (det is a polynomial), cancellation
    10^-50 / h^2 = 1e-30."""
    with mp.workdps(50):
        h = mp.mpf("1e-10")

        def d(s, t):
            m = mp.matrix((a + 0j).tolist()) + s * mp.matrix((e + 0j).tolist()) + t * mp.matrix((g + 0j).tolist())
            return mp.det(m)

        return complex((d(h, h) - d(h, -h) - d(-h, h) + d(-h, -h)) / (4 * h * h))


@pytest.mark.parametrize("n,rank", [(3, 2), (4, 3), (4, 2)])  # 5x5: hvps in the scored cases
def test_det_hessian_at_singular_matrices(n, rank):
    # the full Hessian (jacfwd of jacrev) at rank N-1 and N-2, against exact second differences
    rng = np.random.default_rng(n + 10 * rank)
    a = _gauss(rng, (n, rank), False) @ _gauss(rng, (rank, n), False)
    h = tidu.hessian(la.det)(tf.asarray(a)).numpy()  # [n, n, n, n]
    want = np.zeros((n, n, n, n))
    for i, j in np.ndindex(n, n):
        for k, m in np.ndindex(n, n):
            e, g = np.zeros((n, n)), np.zeros((n, n))
            e[i, j], g[k, m] = 1, 1
            want[i, j, k, m] = _det_hessian_mp(a, e, g).real
    assert np.abs(h - want).max() <= 1e-12 * np.abs(want).max()


@pytest.mark.parametrize("rank", [3, 2])
def test_det_hessian_at_singular_matrices_complex(rank):
    # complex: the holomorphic second derivative d^2 det[E, G] from jvp of jvp
    rng = np.random.default_rng(rank)
    a = _gauss(rng, (4, rank), True) @ _gauss(rng, (rank, 4), True)
    e, g = _gauss(rng, (4, 4), True), _gauss(rng, (4, 4), True)
    inner = lambda x: tidu.jvp(la.det, (x,), (tf.asarray(e),))[1]  # noqa: E731
    got = complex(tidu.jvp(inner, (tf.asarray(a),), (tf.asarray(g),))[1].numpy())
    want = _det_hessian_mp(a, e, g)
    assert abs(got - want) <= 1e-12 * abs(want)
