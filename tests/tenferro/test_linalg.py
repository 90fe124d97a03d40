"""tenferro.linalg: values against NumPy/SciPy. Gradients of every function are in the
table (specs/linalg.py); degeneracy and gauge detection are in
test_linalg_degeneracy_and_gauge.py, typed errors, the review regressions and
non-finite input in test_linalg_errors.py.

Tests parametrized over ``mode`` (``helpers.MODES``) also run compiled: under
``jit`` each function (or gradient) is ``tenferro.jit``-compiled and every call is
checked equal to eager to rounding (``helpers.in_mode``) before the test's own
assertions run on the compiled result."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg._matops import as_cols, mm

from helpers import MODES, compiled, in_mode

RNG = np.random.default_rng(7)


def _lead(x):
    return np.moveaxis(x, (0, 1), (-2, -1)) if x.ndim > 2 else x


def _rand(shape, complex_=False):
    v = RNG.standard_normal(shape)
    return v + 1j * RNG.standard_normal(shape) if complex_ else v


SHAPES = [(4, 3), (3, 3), (3, 4), (4, 3, 2), (3, 4, 2, 2)]

EPS = np.finfo(np.float64).eps


def _assert_small(residual, n: int, scale: float = 1.0, what: str = "") -> None:
    """``max |residual| <= 100 n eps scale``: the LAPACK factorizations (Householder QR/LQ,
    bidiagonal SVD, symmetric and Hessenberg QR eigensolvers) are backward stable, so
    orthonormality defects are ``O(n eps)`` and residuals ``O(n eps ||A||)`` with a modest
    constant (Golub & Van Loan 5.2, 8.3, 7.5); 100 covers that constant at these sizes (n <= 4;
    measured at most 2.7 n eps ||A||) and is still ~1e13 below any wrong factor (O(1))."""
    err = float(np.max(np.abs(residual)))
    assert err <= 100 * n * EPS * scale, (what, err, 100 * n * EPS * scale)


def _orthonormal_columns(q, what: str) -> None:
    """``Q^H Q = I`` for the column blocks ``q`` (``[..., m, k]``)."""
    k = q.shape[-1]
    _assert_small(np.conj(np.swapaxes(q, -1, -2)) @ q - np.eye(k), max(q.shape[-2:]), what=what)


def _norm2(a) -> float:
    """The largest spectral norm over the batch of ``a`` (``[..., m, n]``)."""
    return float(np.max(np.linalg.norm(a, ord=2, axis=(-2, -1))))


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_svd_values(shape, cplx, mode):
    a = _rand(shape, cplx)
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    u, s, vh = run(la.svd)(tf.asarray(a))
    k = min(shape[:2])
    assert (
        u.shape == (shape[0], k) + shape[2:] and s.shape == (k,) + shape[2:] and vh.shape == (k, shape[1]) + shape[2:]
    )
    assert np.allclose(np.einsum("ik...,k...,kj...->ij...", u.numpy(), s.numpy(), vh.numpy()), a)
    assert np.allclose(
        _lead(s.numpy()[None])[..., 0, :] if s.ndim > 1 else s.numpy(), np.linalg.svd(_lead(a), compute_uv=False)
    )
    assert u._data.flags.f_contiguous and vh._data.flags.f_contiguous
    assert np.allclose(run(la.svdvals)(tf.asarray(a)).numpy(), s.numpy())
    # orthonormal factors (every batch entry): U^H U = I, Vh Vh^H = I, and the product to
    # rounding, not to allclose's 1e-8
    U, Vh, A = _lead(u.numpy()), _lead(vh.numpy()), _lead(a)
    _orthonormal_columns(U, "U^H U")
    _orthonormal_columns(np.conj(np.swapaxes(Vh, -1, -2)), "Vh Vh^H")
    S = _lead(s.numpy()[None])[..., 0, :] if s.ndim > 1 else s.numpy()
    _assert_small((U * S[..., None, :]) @ Vh - A, max(shape[:2]), _norm2(A), "U S Vh - A")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("qr_mode", ["reduced", "complete"])
@pytest.mark.parametrize("mode", MODES)
def test_qr_values(shape, qr_mode, mode):
    a = _rand(shape, True)
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    q, r = run(la.qr)(tf.asarray(a), mode=qr_mode)
    assert np.allclose(np.einsum("ik...,kj...->ij...", q.numpy(), r.numpy()), a)
    d = np.diagonal(_lead(r.numpy()), axis1=-2, axis2=-1)
    assert np.all(d.real >= 0) and np.allclose(d.imag, 0)
    l, q2 = run(la.lq)(tf.asarray(a))
    assert np.allclose(np.einsum("ik...,kj...->ij...", l.numpy(), q2.numpy()), a)
    # orthonormal Q (Q^H Q = I, k x k reduced, m x m complete), triangular R and L, and the
    # products to rounding (every batch entry)
    m, n = shape[:2]
    A, Q, R, L, Q2 = _lead(a), _lead(q.numpy()), _lead(r.numpy()), _lead(l.numpy()), _lead(q2.numpy())
    assert Q.shape[-1] == (m if qr_mode == "complete" else min(m, n))
    _orthonormal_columns(Q, "Q^H Q")
    _orthonormal_columns(np.conj(np.swapaxes(Q2, -1, -2)), "Q Q^H of lq")
    assert np.all(np.tril(R, -1) == 0) and np.all(np.triu(L, 1) == 0)
    _assert_small(Q @ R - A, max(m, n), _norm2(A), "QR - A")
    _assert_small(L @ Q2 - A, max(m, n), _norm2(A), "LQ - A")


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_square_values(cplx, mode):
    a = _rand((4, 4, 3), cplx) + 4 * np.eye(4)[:, :, None]
    b = _rand((4, 2, 3), cplx)
    A, B = tf.asarray(a), tf.asarray(b)
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    la_, lb = _lead(a), _lead(b)
    h = 0.5 * (la_ + np.conj(np.swapaxes(la_, -1, -2)))
    w, v = run(la.eigh)(A)
    assert np.allclose(_lead(w.numpy()[None])[..., 0, :], np.linalg.eigvalsh(h))
    # eigenpairs of the Hermitian part, every batch entry: h V = V diag(w), V^H V = I
    W, V = _lead(w.numpy()[None])[..., 0, :], _lead(v.numpy())
    _orthonormal_columns(V, "V^H V of eigh")
    _assert_small(h @ V - V * W[..., None, :], 4, _norm2(h), "h V - V w")
    assert np.allclose(run(la.solve)(A, B).numpy(), np.moveaxis(np.linalg.solve(la_, lb), (-2, -1), (0, 1)))
    assert np.allclose(_lead(run(la.inv)(A).numpy()), np.linalg.inv(la_))
    assert np.allclose(run(la.det)(A).numpy(), np.linalg.det(la_))
    sign, logabs = run(la.slogdet)(A)
    s2, l2 = np.linalg.slogdet(la_)
    assert np.allclose(sign.numpy(), s2) and np.allclose(logabs.numpy(), l2)
    pd = np.einsum("ik...,jk...->ij...", a, a.conj())
    L = run(la.cholesky)(tf.asarray(pd))
    assert np.allclose(_lead(L.numpy()), np.linalg.cholesky(_lead(pd)))
    assert np.allclose(_lead(run(la.expm)(tf.asarray(0.3 * a)).numpy()), scipy.linalg.expm(0.3 * la_))
    p, l, u = run(la.lu)(A)
    assert np.allclose(np.einsum("ij...,jk...,kl...->il...", p.numpy(), l.numpy(), u.numpy()), a)
    w, v = run(la.eig)(A)
    assert np.allclose(np.einsum("ij...,jk...->ik...", a, v.numpy()), v.numpy() * w.numpy()[None])
    # the eigenpairs to rounding (A V = V diag(w), every batch entry; backward stable, unlike
    # the eigenvalues of a nonnormal matrix), the vectors nonzero (unit columns, LAPACK geev's
    # normalization), and all of them: the values NumPy's as a multiset (order not documented)
    We, Ve = _lead(w.numpy()[None])[..., 0, :], _lead(v.numpy())
    _assert_small(np.linalg.norm(Ve, axis=-2) - 1.0, 4, what="|v| of eig")
    _assert_small(la_ @ Ve - Ve * We[..., None, :], 4, _norm2(la_), "A V - V w")
    assert np.allclose(np.sort_complex(We), np.sort_complex(np.linalg.eigvals(la_)))
    x = run(la.solve)(tf.asarray(a[:, :, 0]), tf.asarray(b[:, 0, 0]))
    assert x.shape == (4,) and np.allclose(a[:, :, 0] @ x.numpy(), b[:, 0, 0])


@pytest.mark.parametrize("mode", MODES)
def test_eigh_cholesky_use_hermitian_part(mode):
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    a = _rand((3, 3), True)
    h = 0.5 * (a + a.conj().T)
    assert np.allclose(run(la.eigvalsh)(tf.asarray(a)).numpy(), np.linalg.eigvalsh(h))
    pd = h @ h.conj().T + np.eye(3)
    skewed = pd + (a - a.conj().T)  # same Hermitian part
    assert np.allclose(run(la.cholesky)(tf.asarray(skewed)).numpy(), np.linalg.cholesky(pd))
    # gradients are Hermitian
    c = tf.asarray(_rand((3, 3), True))  # drawn once: the jit mode calls the function twice
    g = run(tidu.grad(lambda x: tf.sum(tf.real(tf.multiply(la.cholesky(x), c)))))(tf.asarray(pd))
    assert np.allclose(g.numpy(), g.numpy().conj().T)


@pytest.mark.parametrize("mode", MODES)
def test_truncated_svd_includes_discarded_subspace(mode):
    a = _rand((5, 4))
    A = tf.asarray(a)

    def loss(x):
        u, s, vh = la.truncated_svd(x, max_rank=2)
        return tf.sum(tf.multiply(mm(tf.multiply(u, as_cols(s, 5)), vh), tf.asarray(np.arange(20.0).reshape(5, 4))))

    g = in_mode(tidu.grad(loss), mode)(A).numpy()
    eps = 1e-6
    num = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        num[idx] = (float(loss(tf.asarray(a + d)).numpy()) - float(loss(tf.asarray(a - d)).numpy())) / (2 * eps)
    # central differences with step 1e-6 on a loss of size ~1e2: O(eps^2 f''') + O(1e-16 f / eps) ~ 1e-8..1e-7
    assert np.allclose(g, num, atol=1e-6)
    u, s, vh = la.truncated_svd(A, cutoff=0.99)  # data-dependent shape: under jit, see the test below
    assert s.shape == (1,)


def test_truncated_svd_cutoff_under_jit_is_a_jit_error():
    # the kept rank (the output shape) depends on the singular values' values
    a = tf.asarray(_rand((5, 4)))
    with pytest.raises(tf.JitError, match=r"truncated_svd.*static_argnums"):
        tf.jit(lambda x: la.truncated_svd(x, cutoff=0.99))(a)


@pytest.mark.parametrize("mode", MODES)
def test_norms_match_numpy(mode):
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    x = _rand((3, 4), True)
    for ord in [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]:
        assert np.allclose(run(la.norm)(tf.asarray(x), ord).numpy(), np.linalg.norm(x, ord))
    for ord in [None, 1, 2, np.inf, -np.inf, 3]:
        assert np.allclose(run(la.norm)(tf.asarray(x), ord, axis=1).numpy(), np.linalg.norm(x, ord, axis=1))


@pytest.mark.parametrize("mode", MODES)
def test_lstsq_pinv_match_numpy(mode):
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    a, b = _rand((5, 3)), _rand((5, 2))
    assert np.allclose(run(la.lstsq)(tf.asarray(a), tf.asarray(b))[0].numpy(), np.linalg.lstsq(a, b, rcond=None)[0])
    assert np.allclose(
        run(la.lstsq)(tf.asarray(a.T), tf.asarray(b[:3]))[0].numpy(), np.linalg.lstsq(a.T, b[:3], rcond=None)[0]
    )
    assert np.allclose(run(la.pinv)(tf.asarray(a)).numpy(), np.linalg.pinv(a))


@pytest.mark.parametrize("mode", MODES)
def test_pinv_of_a_rank_deficient_matrix(mode):
    r1 = np.outer(_rand(4), _rand(3))  # rank 1: discarded zero singular values
    assert np.allclose(in_mode(la.pinv, mode)(tf.asarray(r1)).numpy(), np.linalg.pinv(r1))


def _rank_deficient(m, n, r, cplx=False):
    return _rand((m, r), cplx) @ _rand((r, n), cplx)


@pytest.mark.parametrize(
    "a_shape,b_shape,rank",
    [
        ((5, 3), (5, 2), 3),
        ((5, 3), (5,), 3),
        ((3, 5), (3, 2), 3),
        ((4, 4), (4, 1), 4),
        ((6, 4), (6, 2), 2),
        ((4, 6), (4, 3), 2),
        ((5, 5), (5,), 1),
        ((4, 3), (4, 2), 0),
    ],
)
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_lstsq_returns_numpys_four_values(a_shape, b_shape, rank, cplx, mode, request):
    a = _rank_deficient(a_shape[0], a_shape[1], rank, cplx) if rank < min(a_shape) else _rand(a_shape, cplx)
    b = _rand(b_shape, cplx)
    staged_residuals = mode == "jit" and a_shape[0] > a_shape[1] > rank
    # under jit the rank is unknown when the program is built: a tall a always gets residuals
    # (JAX's convention, documented); NumPy returns none for a rank-deficient one
    run = compiled(la.lstsq, mode) if staged_residuals else in_mode(la.lstsq, mode)
    x, res, rk, sv = run(tf.asarray(a), tf.asarray(b))
    xn, resn, rkn, svn = np.linalg.lstsq(a, b, rcond=None)
    assert x.shape == xn.shape and np.allclose(x.numpy(), xn, atol=1e-10)  # minimum norm, no 1e31
    if staged_residuals:
        d = b - a @ xn
        want = np.sum(np.abs(d) ** 2, axis=0) if d.ndim > 1 else np.sum(np.abs(d) ** 2, keepdims=True)
        assert np.allclose(res.numpy(), want)
    else:
        assert res.shape == resn.shape and np.allclose(res.numpy(), resn)
    assert res.dtype == tf.float64
    assert int(rk) == rkn == rank
    assert np.allclose(sv.numpy(), svn)


def test_lstsq_rcond_and_batch():
    a = np.stack([_rank_deficient(5, 4, 2), _rand((5, 4)), _rank_deficient(5, 4, 3)], axis=-1)
    b = _rand((5, 2, 3))
    x, res, rk, sv = la.lstsq(tf.asarray(a), tf.asarray(b))
    assert x.shape == (4, 2, 3) and sv.shape == (4, 3) and rk.shape == (3,) and res.shape == (0, 3)
    assert rk.tolist() == [2, 4, 3]
    for i in range(3):
        assert np.allclose(x.numpy()[..., i], np.linalg.lstsq(a[..., i], b[..., i], rcond=None)[0])
    full = np.stack([_rand((5, 4)) for _ in range(2)], axis=-1)
    x, res, rk, sv = la.lstsq(tf.asarray(full), tf.asarray(b[..., :2]))
    assert res.shape == (2, 2) and np.allclose(
        res.numpy()[:, 1], np.linalg.lstsq(full[..., 1], b[..., 1], rcond=None)[1]
    )
    # rcond: singular values <= rcond * s_max are dropped
    c = np.diag([1.0, 1e-3, 1e-9])
    assert int(la.lstsq(tf.asarray(c), tf.ones((3,)))[2]) == 3
    assert int(la.lstsq(tf.asarray(c), tf.ones((3,)), rcond=1e-6)[2]) == 2
    assert la.lstsq(tf.asarray(c), tf.ones((3,)), rcond=1e-2)[0].tolist() == [1.0, 0.0, 0.0]


def test_lstsq_gradient_at_fixed_rank_is_that_of_pinv():
    a = _rank_deficient(5, 4, 2)
    b = _rand((5, 2))
    rc = 1e-6

    def f_lstsq(a, b):
        return tf.sum(tf.sin(la.lstsq(a, b, rcond=rc)[0]))

    def f_pinv(a, b):
        return tf.sum(tf.sin(la.pinv(a, rtol=rc) @ b))

    ga = tidu.grad(f_lstsq, argnums=(0, 1))(tf.asarray(a), tf.asarray(b))
    gp = tidu.grad(f_pinv, argnums=(0, 1))(tf.asarray(a), tf.asarray(b))
    assert all(np.all(np.abs(g.numpy()) < 1e3) for g in ga)  # no 1e47
    for g, h in zip(ga, gp):
        assert np.allclose(g.numpy(), h.numpy(), atol=1e-9)
    # finite differences at fixed rank (steps far below rcond * s_max), to second order
    from tidu.testing import check_grads

    check_grads(lambda a, b: la.lstsq(a, b, rcond=1e-3)[0], (tf.asarray(a), tf.asarray(b)), order=2, eps=1e-6)
    check_grads(
        lambda a, b: la.lstsq(a, b, rcond=1e-3)[0], (tf.asarray(a.T.copy()), tf.asarray(b[:4])), order=1, eps=1e-6
    )
    ac = _rank_deficient(4, 3, 2, True)
    check_grads(
        lambda a, b: la.lstsq(a, b, rcond=1e-3)[0], (tf.asarray(ac), tf.asarray(_rand((4, 2), True))), order=1, eps=1e-6
    )


def test_lstsq_of_a_zero_matrix():
    x, res, rk, sv = la.lstsq(tf.zeros((3, 2)), tf.ones((3,)))
    assert x.tolist() == [0.0, 0.0] and int(rk) == 0 and res.shape == (0,) and sv.tolist() == [0.0, 0.0]
    g = tidu.grad(lambda b: tf.sum(la.lstsq(tf.zeros((3, 2)), b)[0]))(tf.ones((3,)))
    assert g.tolist() == [0.0, 0.0, 0.0]


LU_SHAPES = [(5, 3), (3, 5), (4, 4), (5, 3, 2), (3, 5, 2, 2), (3, 0), (0, 3), (3, 3, 0)]


@pytest.mark.parametrize("shape", LU_SHAPES)
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_lu_values_tall_wide(shape, cplx, mode):
    a = _rand(shape, cplx)
    p, l, u = in_mode(la.lu, mode)(tf.asarray(a))
    m, n, batch = shape[0], shape[1], shape[2:]
    k = min(m, n)
    assert p.shape == (m, m) + batch and l.shape == (m, k) + batch and u.shape == (k, n) + batch
    assert np.allclose(np.einsum("ij...,jk...,kl...->il...", p.numpy(), l.numpy(), u.numpy()), a)
    lp, ll, lu_ = (_lead(x.numpy()) for x in (p, l, u))
    assert np.allclose(ll, np.tril(ll)) and np.allclose(np.diagonal(ll, axis1=-2, axis2=-1), 1)
    assert np.allclose(lu_, np.triu(lu_))
    assert np.allclose(np.swapaxes(lp, -1, -2) @ lp, np.eye(m))  # a permutation
    if a.size:
        ref = scipy.linalg.lu(_lead(a))
        assert all(np.allclose(x, r) for x, r in zip((lp, ll, lu_), ref))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (5, 3, 2), (3, 5, 2)])
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_lu_jvp_matches_finite_differences_non_square(shape, cplx, mode):
    # generic Gaussian input: the pivot order is constant on the segment a +- h da
    a, da = _rand(shape, cplx), _rand(shape, cplx)
    f = lambda x: la.lu(x)[1:]  # noqa: E731
    _, (dl, du) = tidu.jvp(in_mode(f, mode), (tf.asarray(a),), (tf.asarray(da),))  # jit: through the compiled call
    h = 1e-6
    (lp, up), (lm, um) = f(tf.asarray(a + h * da)), f(tf.asarray(a - h * da))
    # central differences with h = 1e-6: truncation O(h^2) ~ 1e-12 but rounding O(1e-16 / h) ~ 1e-10 relative
    # to |L|, |U| ~ 1..10, amplified by the conditioning of the triangular solves: 1e-6 / 1e-7 leave a margin
    assert np.allclose(dl.numpy(), (lp.numpy() - lm.numpy()) / (2 * h), rtol=1e-6, atol=1e-7)
    assert np.allclose(du.numpy(), (up.numpy() - um.numpy()) / (2 * h), rtol=1e-6, atol=1e-7)
    # the tangent keeps the structure: strictly lower (L) / upper (U) trapezoidal
    dl_, du_ = _lead(dl.numpy()), _lead(du.numpy())
    assert np.allclose(dl_, np.tril(dl_, -1)) and np.allclose(du_, np.triu(du_))
    # P has a symbolic zero tangent
    _, (dp,) = tidu.jvp(in_mode(lambda x: (la.lu(x)[0],), mode), (tf.asarray(a),), (tf.asarray(da),))
    assert not np.any(np.asarray(dp) if isinstance(dp, tf.Tensor) else 0)


@pytest.mark.parametrize("mode", MODES)
def test_expm_frechet_matches_scipy(mode):
    a, e = _rand((3, 3)), _rand((3, 3))
    assert np.allclose(
        in_mode(la.expm_frechet, mode)(tf.asarray(a), tf.asarray(e)).numpy(),
        scipy.linalg.expm_frechet(a, e, compute_expm=False),
    )
