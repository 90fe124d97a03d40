"""tenferro.linalg: values against NumPy/SciPy, degeneracy, gauge detection and
typed errors. Gradients of every function are in the table (specs/linalg.py).

Tests parametrized over ``mode`` (``helpers.MODES``) also run compiled: under
``jit`` each function (or gradient) is ``tenferro.jit``-compiled and every call is
checked equal to eager to rounding (``helpers.in_mode``) before the test's own
assertions run on the compiled result. Where a known library bug makes the compiled
run differ, the ``jit`` case is a strict expected failure naming it (``_modes``)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg._matops import as_cols, mH, mm

from helpers import MODES, check_derivatives, compiled, in_mode

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


# Known library bugs that make a compiled run differ from eager (issue 11's jit); the
# jit cases they affect are strict expected failures, so fixing a bug fails them and
# the marker must go.
JIT_CONCRETE_BUG = (
    "derivative rules that read concrete values while they are traced (eig's defective V, det's "
    "third and slogdet's first derivative at a singular matrix) cannot check under jit, where values "
    "are abstract: the compiled derivative raises later under another primitive's name (inv, solve) "
    "or returns a number, instead of the eager typed error"
)


def _modes(jit_bug: str | None = None, raises: type = AssertionError) -> list:
    """``MODES``, with the ``jit`` case a strict expected failure (raising ``raises``)
    when ``jit_bug`` names a known bug."""
    if jit_bug is None:
        return list(MODES)
    return ["eager", pytest.param("jit", marks=pytest.mark.xfail(strict=True, raises=raises, reason=jit_bug))]


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


# ---------------------------------------------------------------------------
# degeneracy: finite, analytic gradients for invariant losses
# ---------------------------------------------------------------------------
def _herm_with_spectrum(w, cplx):
    n = len(w)
    q, _ = np.linalg.qr(_rand((n, n), cplx))
    return (q * np.asarray(w)) @ q.conj().T


def _fd_grad(loss, a, cplx, eps=1e-6):
    """Finite-difference gradient in tidu's convention (dL/dx - i dL/dy)."""
    num = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        for unit in [1.0, 1j] if cplx else [1.0]:
            d = np.zeros_like(a)
            d[idx] = eps * unit
            df = (float(loss(tf.asarray(a + d)).numpy()) - float(loss(tf.asarray(a - d)).numpy())) / (2 * eps)
            num[idx] += df * np.conj(unit)
    return num


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_eigh_degenerate_invariant_losses(cplx, mode):
    # eigenvalues (-1, 1, 1, 2): the block {1, 1} is exactly degenerate
    a = _herm_with_spectrum([1.0, 1.0, 2.0, -1.0], cplx)
    c = _rand((4, 4), cplx)
    block = np.zeros((4, 2))
    block[1, 0] = block[2, 1] = 1.0

    def sum_cubes(x):  # symmetric function of the eigenvalues
        w = la.eigvalsh(x)
        return tf.sum(tf.multiply(w, tf.multiply(w, w)))

    def projector(x):  # spectral projector onto the whole degenerate eigenspace
        w, v = la.eigh(x)
        vb = mm(v, tf.asarray(block))
        return tf.real(tf.sum(tf.multiply(mm(vb, mH(vb)), tf.asarray(c))))

    for loss in (sum_cubes, projector):
        with warnings.catch_warnings():
            warnings.simplefilter("error", la.GaugeWarning)
            g = in_mode(tidu.grad(loss), mode)(tf.asarray(a)).numpy()
        assert np.all(np.isfinite(g))
        # the derivative is with respect to the Hermitian part: compare Hermitian projections
        num = _fd_grad(loss, a, cplx)
        herm = lambda m: 0.5 * (m + m.conj().T)
        # _fd_grad: central differences, accurate to ~1e-7 here; the degenerate block adds no error
        assert np.allclose(herm(g), herm(num), atol=1e-5), loss.__name__
    w, v = np.linalg.eigh(a)
    g = in_mode(tidu.grad(sum_cubes), mode)(tf.asarray(a)).numpy()
    assert np.allclose(g, np.conj((v * 3 * w**2) @ v.conj().T))  # analytic: V diag(3 w^2) V^H


@pytest.mark.parametrize("mode", MODES)
def test_eigh_identity_projector_gradient(mode):
    # identity: all eigenvalues equal; sum(V V^H * C) = trace(C): gradient 0... and w-gradient = I
    a = np.eye(3)
    g = in_mode(tidu.grad(lambda x: tf.sum(la.eigvalsh(x))), mode)(tf.asarray(a)).numpy()
    assert np.allclose(g, np.eye(3))
    c = _rand((3, 3))

    def f(x):
        w, v = la.eigh(x)
        return tf.sum(tf.multiply(mm(v, mH(v)), tf.asarray(c)))

    g2 = in_mode(tidu.grad(f), mode)(tf.asarray(a)).numpy()
    assert np.all(np.isfinite(g2)) and np.allclose(g2, 0)


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_svd_repeated_singular_values(cplx, mode):
    # singular values (2, 2, 1): losses invariant within the degenerate block
    q1, _ = np.linalg.qr(_rand((4, 3), cplx))
    q2, _ = np.linalg.qr(_rand((3, 3), cplx))
    a = (q1 * np.array([2.0, 2.0, 1.0])) @ q2.conj().T
    c = _rand((4, 4), cplx)
    block = np.zeros((3, 2))
    block[0, 0] = block[1, 1] = 1.0

    def projector(x):  # projector onto the left singular subspace of the repeated value
        u, s, vh = la.svd(x)
        ub = mm(u, tf.asarray(block))
        return tf.real(tf.sum(tf.multiply(mm(ub, mH(ub)), tf.asarray(c))))

    def nuclear(x):  # symmetric function of the singular values
        return tf.sum(la.svdvals(x))

    for loss in (projector, nuclear):
        with warnings.catch_warnings():
            warnings.simplefilter("error", la.GaugeWarning)
            g = in_mode(tidu.grad(loss), mode)(tf.asarray(a)).numpy()
        assert np.all(np.isfinite(g))
        # finite-difference accuracy of _fd_grad (central differences), not the rule's
        assert np.allclose(g, _fd_grad(loss, a, cplx), atol=1e-5), loss.__name__
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    assert np.allclose(in_mode(tidu.grad(nuclear), mode)(tf.asarray(a)).numpy(), np.conj(u @ vh))  # analytic: U Vh


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_svd_polar_factor_exact_at_repeated_singular_values(cplx, mode):
    # U Vh is smooth at repeated (non-zero) singular values; its gradient at
    # A = U S V^H is U [(N - N^H)_ij / (s_i + s_j)] V^H with N = U^H G V, G = conj(C)
    # (tidu's convention). The within-block part comes from the D = 1/(s_i + s_j)
    # term, which the rule keeps at a degeneracy (docs/ad/gauge.md).
    rng = np.random.default_rng(11)
    q1, _ = np.linalg.qr(_rand_with(rng, (3, 3), cplx))
    q2, _ = np.linalg.qr(_rand_with(rng, (3, 3), cplx))
    sv = np.array([2.0, 2.0, 1.0])
    a = (q1 * sv) @ q2.conj().T
    c = _rand_with(rng, (3, 3), cplx)

    def polar(x):
        u, s, vh = la.svd(x)
        return tf.real(tf.sum(tf.multiply(mm(u, vh), tf.asarray(c))))

    with warnings.catch_warnings():
        warnings.simplefilter("error", la.GaugeWarning)
        g = in_mode(tidu.grad(polar), mode)(tf.asarray(a)).numpy()
    n_ = q1.conj().T @ np.conj(c) @ q2
    analytic = np.conj(q1 @ ((n_ - n_.conj().T) / (sv[:, None] + sv[None, :])) @ q2.conj().T)
    # exact formula vs exact rule: only rounding of O(1) quantities remains
    assert np.allclose(g, analytic, atol=1e-12)
    # finite-difference accuracy of _fd_grad (central differences, entries of size ~1)
    assert np.allclose(g, _fd_grad(polar, a, cplx), atol=1e-6)


def _rand_with(rng, shape, cplx):
    v = rng.standard_normal(shape)
    return v + 1j * rng.standard_normal(shape) if cplx else v


@pytest.mark.parametrize("mode", MODES)
def test_degenerate_reconstruction_is_not_determined_by_the_cotangents(mode):
    # The counterexample of docs/ad/gauge.md: at A = I (2 x 2, one degenerate block)
    # L1 = <C, U diag(S) Vh> (= <C, A>, gradient C) and L2 = <C, U Vh> (the polar
    # factor, gradient skew(C) = 0 for symmetric C) produce the SAME cotangents
    # (U_bar, S_bar, Vh_bar) when U^H C V has a zero diagonal; any rule, being a
    # function of those cotangents, gives both the same gradient, so at most one
    # is exact. The rule is exact for L2 (the class of gauge.md) and returns the
    # same value for L1.
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    a = tf.asarray(np.eye(2))
    u, s, vh = la.svd(a)
    c = tf.asarray(u.numpy() @ np.array([[0.0, 1.0], [1.0, 0.0]]) @ vh.numpy())  # symmetric, U^H C V zero diagonal

    def recon(u_, s_, vh_):
        return tf.sum(tf.multiply(mm(tf.multiply(u_, as_cols(s_, 2)), vh_), c))

    def polar(u_, s_, vh_):
        return tf.sum(tf.multiply(mm(u_, vh_), c))

    ct1 = run(tidu.grad(recon, argnums=(0, 1, 2)))(u, s, vh)
    ct2 = run(tidu.grad(polar, argnums=(0, 1, 2)))(u, s, vh)
    for x, y in zip(ct1, ct2):
        assert np.allclose(x.numpy(), y.numpy())
    g1 = run(tidu.grad(lambda x: recon(*la.svd(x))))(a).numpy()
    g2 = run(tidu.grad(lambda x: polar(*la.svd(x))))(a).numpy()
    assert np.allclose(g1, g2) and np.allclose(g2, 0.0)  # exact for the polar factor
    assert not np.allclose(g1, c.numpy())  # the reconstruction's true gradient is C
    # the same for eigh: V diag(w) V^H versus V V^H at the identity
    w, v = la.eigh(a)
    cv = tf.asarray(v.numpy() @ np.array([[0.0, 1.0], [1.0, 0.0]]) @ v.numpy().T)
    ge1 = run(
        tidu.grad(
            lambda x: tf.sum(
                tf.multiply(mm(tf.multiply(la.eigh(x)[1], as_cols(la.eigh(x)[0], 2)), mH(la.eigh(x)[1])), cv)
            )
        )
    )(a).numpy()
    ge2 = run(tidu.grad(lambda x: tf.sum(tf.multiply(mm(la.eigh(x)[1], mH(la.eigh(x)[1])), cv))))(a).numpy()
    assert np.allclose(ge1, ge2) and np.allclose(ge2, 0.0)


@pytest.mark.parametrize("shape", [(4, 4), (4, 4, 3), (4, 4, 2, 2)])
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_triangular_solve_values_all_flags(shape, cplx, mode):
    import itertools

    rng = np.random.default_rng(5)
    a = _rand_with(rng, shape, cplx) + 4 * np.eye(4).reshape((4, 4) + (1,) * (len(shape) - 2))
    for lo, le, t, cj, u in itertools.product((False, True), repeat=5):
        bs = ((4, 3) if le else (3, 4)) + shape[2:]
        b = _rand_with(rng, bs, cplx)
        x = in_mode(la.triangular_solve, mode)(
            tf.asarray(a), tf.asarray(b), lower=lo, left=le, transpose_a=t, conjugate_a=cj, unit_diagonal=u
        ).numpy()
        m = _lead(a)
        m = np.tril(m) if lo else np.triu(m)
        if u:
            m[..., range(4), range(4)] = 1
        m = np.swapaxes(m, -1, -2) if t else m
        m = np.conj(m) if cj else m
        assert np.allclose(m @ _lead(x) if le else _lead(x) @ m, _lead(b)), (lo, le, t, cj, u)


@pytest.mark.parametrize("mode", MODES)
def test_gauge_check_ignores_rounding_noise(mode):
    # second-order reverse passes hand the check cotangents whose gauge part is
    # rounding noise; relative to the cotangent's size it must stay silent (under jit:
    # the check compiled into the program, on every derivative check_jit_matches takes)
    rng = np.random.default_rng(3)
    x = np.eye(3) + 0.15 * rng.standard_normal((3, 3))
    a = tf.asarray((x * np.array([1.0, 2.0, 3.0])) @ np.linalg.inv(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.GaugeWarning)
        check_derivatives(mode, la.eigvals, [a], order=2, modes=("rev",))


@pytest.mark.parametrize("mode", MODES)
def test_svd_gauge_warning_at_degeneracy(mode):
    # real, repeated singular values: sum(U) depends on the rotation inside the block
    q1, _ = np.linalg.qr(_rand((4, 3)))
    q2, _ = np.linalg.qr(_rand((3, 3)))
    a = tf.asarray((q1 * np.array([2.0, 2.0, 1.0])) @ q2.T)
    with pytest.warns(la.GaugeWarning, match="svd"):
        compiled(tidu.grad(lambda x: tf.sum(la.svd(x)[0])), mode)(a)


@pytest.mark.parametrize("mode", MODES)
def test_svd_identity_like(mode):
    a = np.eye(4, 3)
    g = in_mode(tidu.grad(lambda x: tf.sum(la.svdvals(x))), mode)(tf.asarray(a)).numpy()
    assert np.all(np.isfinite(g)) and np.allclose(g, np.eye(4, 3))


@pytest.mark.parametrize("mode", MODES)
def test_broadening_setting(mode):
    # Local generator: the module RNG's state depends on test order under xdist.
    rng = np.random.default_rng(7)
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    a = (q * np.array([1.0, 1.0 + 1e-7, 2.0])) @ q.T
    c = rng.standard_normal((3, 3))

    def f(x):
        w, v = la.eigh(x)
        v0 = mm(v, tf.asarray(np.eye(3)[:, :1]))
        return tf.sum(tf.multiply(mm(v0, mH(v0)), tf.asarray(c)))

    grad_f = in_mode(tidu.grad(f), mode)  # one function called under both settings
    with la.settings(broadening=1e-4, gauge="ignore"):
        g_broad = grad_f(tf.asarray(a)).numpy()
    with la.settings(broadening=0.0, gauge="ignore"):
        g_exact = grad_f(tf.asarray(a)).numpy()
    # The exact rule divides by the gap 1e-7; the broadened one by (gap^2 + eps)/gap ~ 1e3.
    # Compare the two relative to each other rather than to a fixed magnitude, which
    # depends on how strongly c couples the two nearly degenerate eigenvectors.
    assert np.all(np.isfinite(g_broad)) and np.max(np.abs(g_broad)) < 1e2
    assert np.max(np.abs(g_exact)) > 1e3 * np.max(np.abs(g_broad))
    with pytest.raises(tf.TenferroValueError):
        la.config.gauge = "maybe"
    with pytest.raises(tf.TenferroValueError):
        with la.settings(nonsense=1):
            pass


# ---------------------------------------------------------------------------
# gauge detection
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_svd_phase_dependent_loss_warns(mode):
    a = tf.asarray(_rand((4, 3), True))

    def loss(x):
        u, s, vh = la.svd(x)
        return tf.sum(tf.real(u))  # depends on the phase of U's columns

    with pytest.warns(la.GaugeWarning, match="svd: the loss depends on the gauge"):
        compiled(tidu.grad(loss), mode)(a)
    with la.settings(gauge="raise"), pytest.raises(la.GaugeError, match="svd"):
        compiled(tidu.grad(loss), mode)(a)
    with la.settings(gauge="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled(tidu.grad(loss), mode)(a)


@pytest.mark.parametrize("mode", MODES)
def test_eigh_gauge(mode):
    a = tf.asarray(_herm_with_spectrum([1.0, 2.0, 3.0], True))
    with pytest.warns(la.GaugeWarning, match="eigh"):
        compiled(tidu.grad(lambda x: tf.sum(tf.real(la.eigh(x)[1]))), mode)(a)
    # degenerate real case: rotation within the degenerate block
    b = tf.asarray(_herm_with_spectrum([1.0, 1.0, 3.0], False))
    with pytest.warns(la.GaugeWarning, match="eigh"):
        compiled(tidu.grad(lambda x: tf.sum(la.eigh(x)[1])), mode)(b)
    # invariant losses stay silent
    with warnings.catch_warnings():
        warnings.simplefilter("error", la.GaugeWarning)
        compiled(tidu.grad(lambda x: tf.sum(tf.real(mm(la.eigh(x)[1], mH(la.eigh(x)[1]))))), mode)(a)
        compiled(tidu.grad(lambda x: tf.sum(la.eigh(x)[1])), mode)(
            tf.asarray(_herm_with_spectrum([1.0, 2.0, 3.0], False))
        )


@pytest.mark.parametrize("mode", MODES)
def test_eig_gauge(mode):
    a = tf.asarray(_rand((3, 3), True))
    with pytest.warns(la.GaugeWarning, match="eig"):
        compiled(tidu.grad(lambda x: tf.sum(tf.real(la.eig(x)[1]))), mode)(a)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [la.eigh, la.cholesky, la.det, la.slogdet, la.inv, la.eigvalsh, la.eig, la.expm])
@pytest.mark.parametrize("mode", MODES)
def test_non_square(fn, mode):
    with pytest.raises(la.LinalgShapeError, match=r"must be square.*\(3, 4\)") as e:
        compiled(fn, mode)(tf.asarray(_rand((3, 4))))
    assert isinstance(e.value, tf.ShapeError)


@pytest.mark.parametrize("mode", MODES)
def test_non_matrix_and_dtype(mode):
    with pytest.raises(la.LinalgShapeError, match=r"svd: a must be a matrix.*\(3,\)"):
        compiled(la.svd, mode)(tf.asarray(_rand(3)))
    with pytest.raises(la.LinalgDTypeError, match="qr: a must be float"):
        compiled(la.qr, mode)(tf.asarray(np.ones((3, 3), dtype=np.int64)))


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_not_pd(mode):
    with pytest.raises(la.NonPositiveDefiniteError, match=r"cholesky: .*\(2, 2\).*not positive definite"):
        compiled(la.cholesky, mode)(tf.asarray(np.array([[1.0, 2.0], [2.0, 1.0]])))


@pytest.mark.parametrize("mode", MODES)
def test_singular_solve(mode):
    run = functools.partial(compiled, mode=mode)  # errors: the compiled function alone
    a = tf.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(la.SingularMatrixError, match=r"solve: .*\(2, 2\).*singular"):
        run(la.solve)(a, tf.asarray(np.ones((2, 1))))
    with pytest.raises(la.SingularMatrixError, match="inv"):
        run(la.inv)(a)
    with pytest.raises(la.SingularMatrixError, match="triangular_solve"):
        run(la.triangular_solve)(tf.asarray(np.array([[0.0, 1.0], [0.0, 1.0]])), tf.asarray(np.ones((2, 1))))


@pytest.mark.parametrize("mode", MODES)
def test_mismatched_batch(mode):
    run = functools.partial(compiled, mode=mode)  # errors: the compiled function alone
    with pytest.raises(la.LinalgShapeError, match=r"solve: batch dimensions.*\(3, 3, 2\).*\(3, 1, 4\)"):
        run(la.solve)(tf.asarray(_rand((3, 3, 2))), tf.asarray(_rand((3, 1, 4))))
    with pytest.raises(la.LinalgShapeError, match=r"solve: b \(4, 1\) must have 3 rows"):
        run(la.solve)(tf.asarray(_rand((3, 3))), tf.asarray(_rand((4, 1))))
    with pytest.raises(la.LinalgShapeError, match="triangular_solve: batch"):
        run(la.triangular_solve)(tf.asarray(_rand((3, 3, 2))), tf.asarray(_rand((3, 1, 3))))


@pytest.mark.parametrize("mode", MODES)
def test_det_singular_adjugate_gradient(mode):
    # rank-deficient: grad det = adj(A)^T, finite
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    g = in_mode(tidu.grad(la.det), mode)(tf.asarray(a)).numpy()
    adj = np.array(
        [[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)] for i in range(3)]
    )  # cofactor matrix = adj^T
    assert np.all(np.isfinite(g)) and np.allclose(g, adj)
    z = np.zeros((3, 3))
    z[0, 0] = 1.0  # rank 1: adjugate 0
    assert np.allclose(in_mode(tidu.grad(la.det), mode)(tf.asarray(z)).numpy(), 0)


def test_qr_bad_mode_and_exports():
    with pytest.raises(tf.TenferroValueError, match="qr: mode"):
        la.qr(tf.asarray(_rand((3, 3))), mode="r")
    assert tf.linalg is la
    for name in la.__all__:
        assert hasattr(la, name)


# ---------------------------------------------------------------------------
# review regressions
# ---------------------------------------------------------------------------
@pytest.mark.cpu_only  # mutates host storage through numpy()
@pytest.mark.parametrize("n", [3, 20])
def test_solve_sees_mutated_storage(n):
    # tenferro wraps column-major arrays without copying: writing through .numpy()
    # must change later solves (a cache keyed by the array's identity went stale)
    a0 = np.asfortranarray(_rand((n, n)) + n * np.eye(n))
    a1 = np.asfortranarray(_rand((n, n)) + n * np.eye(n))
    b, c = _rand((n, 2)), _rand((n, 2))
    A, B = tf.asarray(a0), tf.asarray(b)
    assert np.shares_memory(A.numpy(), A.numpy())
    loss = lambda x, y: tf.sum(tf.multiply(la.solve(x, y), tf.asarray(c)))  # noqa: E731
    assert np.allclose(la.solve(A, B).numpy(), np.linalg.solve(a0, b))
    tidu.grad(loss, argnums=(0, 1))(A, B)
    A.numpy()[:] = a1
    assert np.allclose(la.solve(A, B).numpy(), np.linalg.solve(a1, b))
    ga, gb = tidu.grad(loss, argnums=(0, 1))(A, B)
    gb_ref = np.linalg.solve(a1.T, c)  # d/db sum(c * A^{-1} b) = A^{-T} c
    assert np.allclose(gb.numpy(), gb_ref)
    assert np.allclose(ga.numpy(), -gb_ref @ np.linalg.solve(a1, b).T)


@pytest.mark.parametrize("mode", MODES)
def test_solve_constant_a_lu_solve_transpose_complex(mode):
    # the carried LU factors transpose to A^{-T} (bilinear pairing), not A^{-H}
    n = 20
    a = _rand((n, n), True) + n * np.eye(n)
    c = _rand((n, 1), True)
    g = in_mode(tidu.grad(lambda y: tf.real(tf.sum(tf.multiply(la.solve(tf.asarray(a), y), tf.asarray(c))))), mode)(
        tf.asarray(_rand((n, 1), True))
    )
    # L = Re sum(w * y), w = A^{-T} c: tidu's gradient dL/dx - i dL/dy is w itself
    assert np.allclose(g.numpy(), np.linalg.solve(a.T, c))
    assert not np.allclose(g.numpy(), np.linalg.solve(a.conj().T, c))


@pytest.mark.parametrize("mode", MODES)
def test_solve_singular_in_jvp_path(mode):
    a = tf.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(la.SingularMatrixError, match=r"solve: .*singular"):
        compiled(tidu.grad(lambda x: tf.sum(la.solve(x, tf.asarray(np.ones((2, 1)))))), mode)(a)


@pytest.mark.parametrize("mode", MODES)
def test_expm_frechet_promotes_and_checks(mode):
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    a, e = _rand((3, 3), True) * 0.5, _rand((3, 3)) * 0.5
    out = run(la.expm_frechet)(tf.asarray(a), tf.asarray(e))
    assert out.dtype == tf.complex128
    assert np.allclose(out.numpy(), scipy.linalg.expm_frechet(a, e.astype(complex), compute_expm=False))
    ct = tf.asarray(_rand((3, 3), True))
    _, f = tidu.vjp(run(la.expm_frechet), tf.asarray(a), tf.asarray(e))  # jit: through the compiled call
    ga, ge = f(ct)  # was a TangentMismatchError (f64 aval, c128 value)
    assert ga.dtype == tf.complex128 and ge.dtype == tf.float64
    with pytest.raises(la.LinalgDTypeError, match="expm_frechet: e must be float"):
        compiled(la.expm_frechet, mode)(tf.asarray(a), tf.asarray(np.ones((3, 3), dtype=np.int64)))
    with pytest.raises(la.LinalgShapeError, match=r"expm_frechet: the direction e must have a's shape \(3, 3\)"):
        compiled(la.expm_frechet, mode)(tf.asarray(a), tf.asarray(_rand((3, 3, 2))))
    with pytest.raises(la.LinalgShapeError, match=r"expm_frechet: e must be square"):
        compiled(la.expm_frechet, mode)(tf.asarray(a), tf.asarray(_rand((3, 2))))


_NORMS_AT_ZERO = [
    ("2-vector", (4,), lambda x: la.norm(x)),
    ("all", (2, 3), lambda x: la.norm(x)),
    ("fro", (2, 3), lambda x: la.norm(x, "fro")),
    ("axis", (2, 3), lambda x: tf.sum(la.norm(x, axis=0))),
    ("p=3", (4,), lambda x: la.norm(x, 3)),
    ("p=1.5", (4,), lambda x: la.norm(x, 1.5)),
]


@pytest.mark.parametrize("name,shape,fn", _NORMS_AT_ZERO, ids=[n for n, _, _ in _NORMS_AT_ZERO])
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_norm_derivatives_at_zero(name, shape, fn, cplx, mode):
    # subgradient 0 at x = 0 to every order (double where), never NaN
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    z = tf.asarray(np.zeros(shape, dtype=complex if cplx else float))
    assert float(run(fn)(z).numpy()) == 0.0
    g = run(tidu.grad(fn))(z).numpy()
    assert np.all(g == 0)
    h = run(tidu.grad(lambda x: tf.real(tf.sum(tidu.grad(fn)(x)))))(z).numpy()  # second order
    assert np.all(np.isfinite(h))
    # and unchanged away from zero
    x = _rand(shape, cplx)
    assert np.allclose(run(tidu.grad(fn))(tf.asarray(x)).numpy(), _fd_grad(fn, x, cplx), atol=1e-6)  # FD accuracy


@pytest.mark.parametrize("mode", MODES)
def test_det_derivatives_at_singular_matrix(mode):
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    a = tf.asarray(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]))
    assert np.all(np.isfinite(run(tidu.grad(la.det))(a).numpy()))  # first order: the adjugate
    # second order: exact at the singular matrix (3x3: adj is quadratic, so central
    # differences of it are exact up to rounding; the Hessian at rank n-1 and n-2 in
    # every dtype is in test_linalg_nasty.py)
    h = run(tidu.grad(lambda x: tf.sum(tidu.grad(la.det)(x))))(a).numpy()
    assert np.allclose(h, _fd_grad(lambda x: tf.sum(tidu.grad(la.det)(x)), a.numpy(), False), atol=1e-6)
    # invertible: second derivatives still exact (d/dA sum(adj(A)^T) against finite differences)
    b = _rand((3, 3)) + 3 * np.eye(3)
    h = run(tidu.grad(lambda x: tf.sum(tidu.grad(la.det)(x))))(tf.asarray(b)).numpy()
    assert np.allclose(h, _fd_grad(lambda x: tf.sum(tidu.grad(la.det)(x)), b, False), atol=1e-6)  # FD accuracy


@pytest.mark.parametrize("mode", _modes(JIT_CONCRETE_BUG))  # jit: both raise "inv: the matrix a ... is singular"
def test_det_third_derivative_at_singular_matrix_raises(mode):
    a = tf.asarray(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]))
    third = lambda x: tidu.jvp(lambda y: tidu.jvp(la.det, (y,), (y,))[1], (x,), (x,))[1]  # noqa: E731
    with pytest.raises(la.SingularMatrixError, match="det: third .*singular matrix"):
        compiled(lambda x: tidu.jvp(third, (x,), (x,)), mode)(a)
    with pytest.raises(la.SingularMatrixError, match="slogdet: the derivative .*singular"):
        compiled(tidu.grad(lambda x: la.slogdet(x)[1]), mode)(tf.asarray(np.array([[1.0, 2.0], [2.0, 4.0]])))


@pytest.mark.parametrize(
    "fn,name",
    [
        (la.svd, "svd"),
        (la.eigh, "eigh"),
        (la.eig, "eig"),
        (la.cholesky, "cholesky"),
        (la.inv, "inv"),
        (lambda x: la.solve(x, x), "solve"),
        (la.eigvalsh, "eigvalsh"),
        (la.svdvals, "svdvals"),
    ],
)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("mode", MODES)
def test_non_finite_input(fn, name, bad, mode, request):
    x = np.eye(3)
    x[1, 2] = bad
    with pytest.raises(la.NonFiniteError, match=rf"{name}: the input .*\(3, 3\) contains NaN or inf"):
        compiled(fn, mode)(tf.asarray(x))


# jit: on the CPU solve's own check raises "solve: ... numerically singular" (V); on a GPU nothing raises
@pytest.mark.parametrize("mode", _modes(JIT_CONCRETE_BUG, raises=(AssertionError, pytest.fail.Exception)))
def test_eig_defective_names_eig(mode):
    for a in ([[1.0, 1.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 0.0]]):
        with pytest.raises(la.SingularMatrixError, match="eig: .*defective"):
            compiled(tidu.grad(lambda x: tf.sum(tf.real(la.eigvals(x)))), mode)(tf.asarray(np.array(a)))


def _count_dot_generals(fn, *args):
    g = tidu.make_graph(fn, *args)
    return sum(e.prim.name == "dot_general" for e in g.eqns)


def test_selection_uses_slices_not_matmuls():
    a = tf.asarray(_rand((6, 5)))
    assert _count_dot_generals(lambda x: la.truncated_svd(x, max_rank=2), a) == 0
    assert _count_dot_generals(la.pinv, tf.asarray(_rand((6, 5)))) <= 1  # only V S^-1 U^H
    assert _count_dot_generals(la.expm_frechet, tf.asarray(_rand((3, 3))), tf.asarray(_rand((3, 3)))) == 0


def test_gauge_policy_captured_when_jvp_is_built():
    a = tf.asarray(_rand((4, 3), True))

    def loss(x):
        u, s, vh = la.svd(x)
        return tf.sum(tf.real(u))  # gauge dependent

    with la.settings(gauge="raise"):
        out, f = tidu.vjp(loss, a)
    with pytest.raises(la.GaugeError, match="svd"):
        f(tf.asarray(1.0))
    with la.settings(gauge="ignore"):
        out, f = tidu.vjp(loss, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(tf.asarray(1.0))


def test_settings_are_context_local():
    import threading

    inside, release, seen = threading.Event(), threading.Event(), {}

    def worker():
        with la.settings(gauge="raise", broadening=0.5):
            seen["worker"] = (la.config.gauge, la.config.broadening)
            inside.set()
            release.wait(5)

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main"] = (la.config.gauge, la.config.broadening)  # the other thread's override is invisible
    release.set()
    t.join()
    assert seen["worker"] == ("raise", 0.5)
    assert seen["main"] == ("warn", None)  # the default: exact outside the degeneracy threshold
    old = la.config.degeneracy_rtol
    try:  # assignment sets the process-wide default
        la.config.degeneracy_rtol = 1e-6
        with la.settings(degeneracy_rtol=1e-3):
            assert la.config.degeneracy_rtol == 1e-3
        assert la.config.degeneracy_rtol == 1e-6
    finally:
        la.config.degeneracy_rtol = old


def test_transpose_rules_reject_undefined_matrix():
    from tenferro.linalg import _expm, _solve

    aval = tidu.aval_of(tf.asarray(np.eye(2)))
    und, b = tidu.UndefinedPrimal(aval), tf.asarray(np.ones((2, 2)))
    with pytest.raises(tf.TenferroValueError, match="solve: the transpose exists only in"):
        _solve._solve_transpose(b, und, b, transposed=False)
    with pytest.raises(tf.TenferroValueError, match="triangular_solve: the transpose exists only in"):
        _solve._triangular_solve_transpose(
            b, und, b, lower=True, left=True, transpose_a=False, conjugate_a=False, unit_diagonal=False
        )
    with pytest.raises(tf.TenferroValueError, match="expm_frechet: the transpose exists only in"):
        _expm.expm_frechet_p.transpose_rule(b, und, b)


# ---------------------------------------------------------------------------
# non-finite input: every function refuses it through the one shared check
# ---------------------------------------------------------------------------
def _nonfinite_calls():
    """``(public name, function, argument builders)``: each builder makes one argument
    from the bad value, so the compiled function gets the bad matrix as an argument."""
    sq = lambda bad: tf.asarray(np.where(np.eye(3, k=1) > 0, bad, np.eye(3) * 2.0))  # noqa: E731
    tall = lambda bad: tf.asarray(np.vstack([np.eye(3), [bad, 1.0, 0.0]]))  # noqa: E731
    good3 = lambda bad: tf.asarray(np.eye(3) * 2.0)  # noqa: E731
    ones = lambda *shape: lambda bad: tf.ones(shape)  # noqa: E731
    P = functools.partial
    return [
        ("svd", la.svd, (tall,)),
        ("svdvals", la.svdvals, (tall,)),
        ("truncated_svd", P(la.truncated_svd, max_rank=2), (tall,)),
        ("qr", la.qr, (tall,)),
        ("lq", la.lq, (tall,)),
        ("eigh", la.eigh, (sq,)),
        ("eigvalsh", la.eigvalsh, (sq,)),
        ("eig", la.eig, (sq,)),
        ("eigvals", la.eigvals, (sq,)),
        ("cholesky", la.cholesky, (sq,)),
        ("solve", la.solve, (sq, ones(3))),
        ("solve", la.solve, (good3, lambda v: tf.asarray([v, 1.0, 1.0]))),
        ("triangular_solve", la.triangular_solve, (sq, ones(3, 1))),
        ("triangular_solve", la.triangular_solve, (good3, lambda v: tf.asarray([[v], [1.0], [1.0]]))),
        ("lu", la.lu, (sq,)),
        ("inv", la.inv, (sq,)),
        ("pinv", la.pinv, (tall,)),
        ("lstsq", la.lstsq, (tall, ones(4))),
        ("lstsq", la.lstsq, (lambda v: tall(1.0), lambda v: tf.asarray([v, 1.0, 1.0, 1.0]))),
        ("det", la.det, (sq,)),
        ("slogdet", la.slogdet, (sq,)),
        ("expm", la.expm, (sq,)),
        ("expm_frechet", la.expm_frechet, (sq, good3)),
        ("expm_frechet", la.expm_frechet, (good3, sq)),
        ("norm", la.norm, (tall,)),
        ("norm", P(la.norm, ord=2), (tall,)),
        ("norm", P(la.norm, ord=1), (tall,)),
        ("norm", la.norm, (lambda v: tf.asarray([v, 1.0]),)),
    ]


def _nonfinite_cases():
    # under jit the input is abstract when the program is built: the check is staged into
    # it (linalg_finite_check) and raises at run time under the public function's name
    return [
        pytest.param(name, fn, builders, mode, id=f"{mode}-{name}{i}")
        for i, (name, fn, builders) in enumerate(_nonfinite_calls())
        for mode in MODES
    ]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name,fn,builders,mode", _nonfinite_cases())
def test_every_linalg_function_refuses_nonfinite_input(name, fn, builders, mode, bad):
    args = [b(bad) for b in builders]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning leaks either
        with pytest.raises(la.NonFiniteError, match=rf"{name}: the input \w+ of shape .* contains NaN or inf"):
            compiled(fn, mode)(*args)


def test_nonfinite_check_under_differentiation():
    a = tf.asarray(np.array([[1.0, np.nan], [0.0, 2.0]]))
    for f in (la.det, lambda x: la.qr(x)[0], la.expm, lambda x: la.norm(x)):
        with pytest.raises(la.NonFiniteError):
            tidu.grad(lambda x: tf.sum(tf.real(f(x))))(a)
