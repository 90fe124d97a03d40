"""Matrix functions of tenferro.linalg: funm_hermitian, sqrtm_psd, logm_pd, powm_psd,
polar, sqrtm, logm.

Values against SciPy; derivatives by ``check_grads`` (finite differences and the
dot-product test, order 2, float64 and complex128), also *at* exactly degenerate
spectra, where these functions stay smooth; exactness at exact degeneracy against
analytic rewrites (``funm(A, w^3)`` against ``A @ A @ A``, the Sylvester identity of
``sqrtm``, ``log`` at ``c I``, the polar factor's closed form); near degeneracy
against 50- to 80-digit references (mpmath); typed errors for bad input."""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tenferro.linalg as la
import tidu
from tidu.testing import check_grads

RNG = np.random.default_rng(2024)


def _herm(x):
    return (x + np.conj(np.swapaxes(x, -1, -2))) / 2


def _unitary(rng, n, cplx):
    g = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if cplx else 0)
    return np.linalg.qr(g)[0]


def _with_spectrum(rng, w, cplx):
    """``Q diag(w) Q^H`` for a random unitary ``Q`` (exactly Hermitian)."""
    q = _unitary(rng, len(w), cplx)
    return _herm((q * np.asarray(w)) @ q.conj().T)


def _rand(rng, shape, cplx):
    return rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)


def _jvp(f, a, e):
    return tidu.jvp(f, (tf.asarray(a),), (tf.asarray(e),))[1].numpy()


def _jvp2(f, a, e1, e2):
    """The mixed second derivative ``d^2 f(a)[e1, e2]`` (forward over forward)."""
    inner = lambda x: tidu.jvp(f, (x,), (tf.asarray(e1),))[1]  # noqa: E731
    return tidu.jvp(inner, (tf.asarray(a),), (tf.asarray(e2),))[1].numpy()


def _cube(w):
    return w * w * w


def _lead(x):
    return np.moveaxis(x, (0, 1), (-2, -1)) if x.ndim > 2 else x


# ---------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("cplx", [False, True])
def test_hermitian_functions_match_scipy(cplx):
    rng = np.random.default_rng(1)
    b = _rand(rng, (4, 4, 2), cplx)
    a = np.einsum("ik...,jk...->ij...", b, b.conj()) + 0.5 * np.eye(4)[:, :, None]  # PD, batch of 2
    A = tf.asarray(a)
    skew = tf.asarray(a + (b - np.conj(np.swapaxes(b, 0, 1))))  # same Hermitian part
    for k in range(2):
        ak = a[:, :, k]
        assert np.allclose(la.funm_hermitian(A, tf.exp).numpy()[:, :, k], scipy.linalg.expm(ak))
        assert np.allclose(la.sqrtm_psd(A).numpy()[:, :, k], scipy.linalg.sqrtm(ak))
        assert np.allclose(la.logm_pd(A).numpy()[:, :, k], scipy.linalg.logm(ak))
        assert np.allclose(la.powm_psd(A, -0.3).numpy()[:, :, k], scipy.linalg.fractional_matrix_power(ak, -0.3))
        assert np.allclose(la.powm_psd(A, 0).numpy()[:, :, k], np.eye(4))
    assert np.allclose(la.sqrtm_psd(skew).numpy(), la.sqrtm_psd(A).numpy())  # the Hermitian part, as eigh
    s = la.sqrtm_psd(A).numpy()
    assert np.array_equal(s, np.conj(np.swapaxes(s, 0, 1)))  # exactly Hermitian
    singular = _with_spectrum(rng, [0.0, 0.0, 1.0, 4.0], cplx)  # PSD, rank 2 (rounding-level negatives)
    assert np.allclose(
        la.sqrtm_psd(tf.asarray(singular)).numpy() @ la.sqrtm_psd(tf.asarray(singular)).numpy(), singular
    )


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (4, 3, 2)])
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_polar_matches_scipy(shape, cplx, side):
    a = _rand(np.random.default_rng(2), shape, cplx)
    u, p = la.polar(tf.asarray(a), side)
    for k in range(shape[2] if len(shape) > 2 else 1):
        ak = a[:, :, k] if len(shape) > 2 else a
        us, ps = scipy.linalg.polar(ak, side)
        uk = u.numpy()[:, :, k] if len(shape) > 2 else u.numpy()
        pk = p.numpy()[:, :, k] if len(shape) > 2 else p.numpy()
        assert np.allclose(uk, us) and np.allclose(pk, ps)


def test_polar_of_a_rank_deficient_matrix_is_scipys():
    a = np.diag([2.0, 1.0, 0.0])
    a[0, 1] = 0.5
    u, p = la.polar(tf.asarray(a))
    us, ps = scipy.linalg.polar(a)
    assert np.allclose(u.numpy().T @ u.numpy(), np.eye(3))  # unitary, as SciPy's W V^H
    assert np.allclose(u.numpy() @ p.numpy(), a) and np.allclose(p.numpy(), ps)


@pytest.mark.parametrize("cplx", [False, True])
def test_general_sqrtm_logm_match_scipy(cplx):
    rng = np.random.default_rng(3)
    a = _rand(rng, (4, 4, 2), cplx) + 3 * np.eye(4)[:, :, None]
    for fn, ref in ((la.sqrtm, scipy.linalg.sqrtm), (la.logm, scipy.linalg.logm)):
        out = fn(tf.asarray(a))
        assert out.dtype == tf.asarray(a).dtype
        for k in range(2):
            assert np.allclose(out.numpy()[:, :, k], ref(a[:, :, k]))
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])  # complex eigenvalues: real roots exist
    assert np.allclose(la.sqrtm(tf.asarray(rot)).numpy(), scipy.linalg.sqrtm(rot).real)
    assert np.allclose(la.logm(tf.asarray(rot)).numpy(), scipy.linalg.logm(rot).real)


# ---------------------------------------------------------------------------
# derivatives: check_grads (order 2) at random and at exactly degenerate inputs
# ---------------------------------------------------------------------------
def _spectrum_args(kind, seed, cplx, degenerate):
    rng = np.random.default_rng(seed)
    if kind == "herm":
        w = [0.5, 0.5, 0.5, 2.0] if degenerate else rng.uniform(-1.5, 1.5, 4)
        return _with_spectrum(rng, w, cplx)
    if kind == "pd":
        w = [0.7, 0.7, 2.0, 2.0] if degenerate else rng.uniform(0.5, 3.0, 4)
        return _with_spectrum(rng, w, cplx)
    if kind == "svd":  # singular values (1, 1, 2.5) or spread
        s = [1.0, 1.0, 2.5] if degenerate else rng.uniform(1.0, 2.5, 3)
        return (_unitary(rng, 4, cplx)[:, :3] * np.asarray(s)) @ _unitary(rng, 3, cplx).conj().T
    x = np.eye(3) + 0.2 * _rand(rng, (3, 3), cplx)  # general: X diag(w) X^-1, repeated eigenvalue
    w = np.array([2.0, 2.0, 3.5]) if degenerate else rng.uniform(1.5, 4.0, 3)
    return (x * w) @ np.linalg.inv(x)


CASES = {
    "funm_hermitian": ("herm", lambda a: la.funm_hermitian(a, lambda w: tf.sin(w) + w * w * w)),
    "sqrtm_psd": ("pd", la.sqrtm_psd),
    "logm_pd": ("pd", la.logm_pd),
    "powm_psd": ("pd", lambda a: la.powm_psd(a, 0.6)),
    "polar_right": ("svd", la.polar),
    "polar_left": ("svd", lambda a: la.polar(a, "left")),
    "sqrtm": ("general", la.sqrtm),
    "logm": ("general", la.logm),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("degenerate", [False, True])
def test_check_grads_order_2(name, cplx, degenerate):
    """The functions are smooth at repeated eigenvalues / singular values, so finite
    differences apply there too: the derivatives are checked *at* the degeneracy."""
    kind, fn = CASES[name]
    a = _spectrum_args(kind, 11, cplx, degenerate)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no GaugeWarning / DegeneracyWarning on the way
        check_grads(fn, (tf.asarray(a),), order=2, seed=5)


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    cplx=st.booleans(),
    name=st.sampled_from(["funm_hermitian", "sqrtm_psd", "powm_psd", "polar_right", "sqrtm"]),
)
def test_check_grads_random_inputs(seed, cplx, name):
    kind, fn = CASES[name]
    check_grads(fn, (tf.asarray(_spectrum_args(kind, seed, cplx, False)),), order=2, seed=seed % 1000)


def test_check_grads_batched_and_float32():
    rng = np.random.default_rng(4)
    a = np.stack([_with_spectrum(rng, [1.0, 1.0, 2.0], True), _with_spectrum(rng, [0.5, 1.5, 3.0], True)], -1)
    check_grads(la.sqrtm_psd, (tf.asarray(a),), order=2)
    check_grads(la.polar, (tf.asarray(_rand(rng, (3, 3, 2), False)),), order=1)
    s = la.sqrtm_psd(tf.asarray(a.astype(np.complex64)))
    assert s.dtype == tf.complex64 and np.allclose(s.numpy(), la.sqrtm_psd(tf.asarray(a)).numpy(), atol=1e-5)


@pytest.mark.parametrize("shape", [(0, 0), (3, 3, 0), (0, 0, 2)])
def test_empty_matrices(shape):
    a = tf.asarray(np.zeros(shape))
    for fn in (
        la.sqrtm_psd,
        la.logm_pd,
        lambda x: la.funm_hermitian(x, tf.exp),
        la.sqrtm,
        la.logm,
        lambda x: la.polar(x)[0],
        lambda x: la.polar(x, "left")[1],
    ):
        assert fn(a).shape == shape
        loss = lambda x: tf.sum(fn(x))  # noqa: E731
        assert tidu.grad(loss)(a).shape == shape
        assert tidu.hvp(loss, (a,), (a,))[0].shape == shape


# ---------------------------------------------------------------------------
# exact at exact degeneracy: analytic rewrites
# ---------------------------------------------------------------------------
@settings(max_examples=10, deadline=None)
@given(mult=st.lists(st.integers(1, 3), min_size=1, max_size=3), cplx=st.booleans(), seed=st.integers(0, 2**16))
def test_cube_equals_a_cubed_at_repeated_eigenvalues(mult, cplx, seed):
    """The issue's acceptance example: grad and Hessian of sum(C * funm(A, w^3)) equal
    those of sum(C * A_h^3) (A_h the Hermitian part), at exactly repeated eigenvalues."""
    rng = np.random.default_rng(seed)
    w = np.repeat(np.arange(1, len(mult) + 1) * 0.75 - 1.0, mult)
    n = len(w)
    a = _with_spectrum(rng, w, cplx)
    C = tf.asarray(_rand(rng, (n, n), cplx))

    def via_funm(x):
        return tf.real(tf.sum(la.funm_hermitian(x, _cube) * C))

    def via_products(x):
        h = (x + tf.conj(tf.transpose(x))) * 0.5
        return tf.real(tf.sum(h @ h @ h * C))

    A = tf.asarray(a)
    g1, g2 = tidu.grad(via_funm)(A).numpy(), tidu.grad(via_products)(A).numpy()
    assert np.allclose(g1, g2, rtol=0, atol=1e-13 * np.abs(g2).max())
    e = tf.asarray(_rand(rng, (n, n), cplx))
    h1, h2 = tidu.hvp(via_funm, (A,), (e,))[0].numpy(), tidu.hvp(via_products, (A,), (e,))[0].numpy()
    assert np.allclose(h1, h2, rtol=0, atol=1e-13 * np.abs(h2).max())
    if not cplx and n <= 4:
        H1, H2 = tidu.hessian(via_funm)(A).numpy(), tidu.hessian(via_products)(A).numpy()
        assert np.allclose(H1, H2, rtol=0, atol=1e-13 * np.abs(H2).max())


def test_third_order_at_a_triple_eigenvalue():
    """Any order: d^3 (A^4)[E, E, E] = 6 (E^3 A + E^2 A E + E A E^2 + A E^3) at a
    triple eigenvalue (forward over forward over forward)."""
    rng = np.random.default_rng(13)
    a = _with_spectrum(rng, [1.0, 1.0, 1.0, 2.0], False)
    e = _herm(rng.standard_normal((4, 4)))
    E = tf.asarray(e)
    d1 = lambda x: tidu.jvp(lambda y: la.funm_hermitian(y, lambda w: w * w * w * w), (x,), (E,))[1]  # noqa: E731
    d2 = lambda x: tidu.jvp(d1, (x,), (E,))[1]  # noqa: E731
    d3 = tidu.jvp(d2, (tf.asarray(a),), (E,))[1].numpy()
    ref = 6 * (e @ e @ e @ a + e @ e @ a @ e + e @ a @ e @ e + a @ e @ e @ e)
    assert np.allclose(d3, ref, rtol=0, atol=1e-14 * np.abs(ref).max())


@pytest.mark.parametrize("cplx", [False, True])
def test_sqrtm_psd_sylvester_identity_at_repeated_eigenvalues(cplx):
    """X = sqrtm_psd(A): X dX + dX X = dA_h, and X d2X + d2X X = -(dX1 dX2 + dX2 dX1)."""
    rng = np.random.default_rng(6)
    a = _with_spectrum(rng, [0.3, 0.3, 0.3, 2.0, 2.0], cplx)
    e1, e2 = _rand(rng, (5, 5), cplx), _rand(rng, (5, 5), cplx)
    x = la.sqrtm_psd(tf.asarray(a)).numpy()
    d1, d2 = _jvp(la.sqrtm_psd, a, e1), _jvp(la.sqrtm_psd, a, e2)
    assert np.allclose(x @ d1 + d1 @ x, _herm(e1), atol=1e-13)
    dd = _jvp2(la.sqrtm_psd, a, e1, e2)
    assert np.allclose(x @ dd + dd @ x, -(d1 @ d2 + d2 @ d1), atol=1e-13)
    # powm_psd(., 2) is A_h @ A_h; powm_psd(., -1) the inverse: against the products' derivatives
    p2 = _jvp2(lambda t: la.powm_psd(t, 2.0), a, e1, e2)
    assert np.allclose(p2, _herm(e1) @ _herm(e2) + _herm(e2) @ _herm(e1), atol=1e-12)
    inv = np.linalg.inv(a)
    assert np.allclose(_jvp(lambda t: la.powm_psd(t, -1.0), a, e1), -inv @ _herm(e1) @ inv, atol=1e-12)


@pytest.mark.parametrize("fn,herm", [(la.logm_pd, True), (la.logm, False)])
def test_log_at_a_multiple_of_the_identity(fn, herm):
    """d log(cI)[E] = E / c and d2 log(cI)[E1, E2] = -(E1 E2 + E2 E1) / (2 c^2)."""
    rng = np.random.default_rng(7)
    c, n = 2.5, 4
    e1, e2 = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    if herm:
        e1, e2 = _herm(e1), _herm(e2)
    a = c * np.eye(n)
    assert np.allclose(_jvp(fn, a, e1), e1 / c, rtol=0, atol=1e-15)
    assert np.allclose(_jvp2(fn, a, e1, e2), -(e1 @ e2 + e2 @ e1) / (2 * c * c), rtol=0, atol=1e-15)


def _mp_polar_unitary(x):
    """The unitary polar factor of the mpmath matrix ``x`` (Newton: X <- (X + X^{-H}) / 2,
    quadratically convergent for nonsingular X)."""
    for _ in range(100):
        y = (x + mp.inverse(x).H) / 2
        if mp.mnorm(y - x, 1) < mp.mpf(10) ** (-55):
            return y
        x = y
    return x


def _to_np(m):
    return np.array(m.tolist(), dtype=complex)


@pytest.mark.parametrize("cplx", [False, True])
def test_polar_at_repeated_singular_values(cplx):
    """First order against the closed form W [(Ω - Ω^H) / (s_i + s_j)] V^H and
    V [(s_i Ω + s_j Ω^H)_ij / (s_i + s_j)] V^H (Ω = W^H dA V); second order
    against 60-digit central differences of the Newton iteration."""
    rng = np.random.default_rng(8)
    s = np.array([2.0, 1.0, 1.0])
    w_, v_ = _unitary(rng, 3, cplx), _unitary(rng, 3, cplx)
    a = (w_ * s) @ v_.conj().T
    e1, e2 = _rand(rng, (3, 3), cplx), _rand(rng, (3, 3), cplx)
    om = w_.conj().T @ e1 @ v_
    tot = s[:, None] + s[None, :]
    du = w_ @ ((om - om.conj().T) / tot) @ v_.conj().T
    dp = v_ @ ((s[:, None] * om + s[None, :] * om.conj().T) / tot) @ v_.conj().T
    _, (gu, gp) = tidu.jvp(la.polar, (tf.asarray(a),), (tf.asarray(e1),))
    assert np.allclose(gu.numpy(), du, rtol=0, atol=1e-14) and np.allclose(gp.numpy(), dp, rtol=0, atol=1e-14)
    first, second = _mp_mixed(_mp_polar_unitary, a, e1, e2)
    assert np.allclose(first, du, rtol=0, atol=1e-14)
    assert np.allclose(_jvp2(lambda x: la.polar(x)[0], a, e1, e2), second, rtol=0, atol=1e-13)


def _mp_mixed(fn, a, e1, e2, h_exp=-15):
    """60-digit mixed central difference of the mpmath function ``fn``."""
    mp.mp.dps = 60
    try:
        h = mp.mpf(10) ** h_exp
        am, m1, m2 = mp.matrix(a.tolist()), mp.matrix(e1.tolist()), mp.matrix(e2.tolist())
        ref = (
            fn(am + h * m1 + h * m2) - fn(am + h * m1 - h * m2) - fn(am - h * m1 + h * m2) + fn(am - h * m1 - h * m2)
        ) / (4 * h * h)
        first = (fn(am + h * m1) - fn(am - h * m1)) / (2 * h)
        return _to_np(first), _to_np(ref)
    finally:
        mp.mp.dps = 15


@pytest.mark.parametrize("fn,mpfn", [(la.sqrtm, mp.sqrtm), (la.logm, mp.logm)])
def test_general_functions_at_a_repeated_eigenvalue(fn, mpfn):
    """A = X diag(2, 2, 3.5) X^-1 (non-normal, repeated eigenvalue): first and second
    derivatives against 60-digit differences of mpmath's sqrtm/logm."""
    rng = np.random.default_rng(9)
    x = np.eye(3) + 0.3 * rng.standard_normal((3, 3))
    a = (x * np.array([2.0, 2.0, 3.5])) @ np.linalg.inv(x)
    e1, e2 = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    first, second = _mp_mixed(mpfn, a, e1, e2)
    scale = np.abs(first).max()
    assert np.allclose(_jvp(fn, a, e1), first.real, rtol=0, atol=1e-13 * scale)
    assert np.allclose(_jvp2(fn, a, e1, e2), second.real, rtol=0, atol=1e-12 * np.abs(second).max())


# ---------------------------------------------------------------------------
# near degeneracy: 50/80-digit Daleckii-Krein references
# ---------------------------------------------------------------------------
_MP_FUNCS = {"exp": (tf.exp, mp.exp), "log": (tf.log, mp.log), "sqrt": (tf.sqrt, mp.sqrt), "cube": (_cube, None)}


def _mp_dd(f, pts):
    """Divided difference of ``f`` (mpmath) over ``pts``, recursively (derivative at equal points)."""
    pts = sorted(pts)
    if len(pts) == 1:
        return f(pts[0])
    if pts[-1] == pts[0]:
        return mp.diff(f, pts[0], len(pts) - 1) / mp.factorial(len(pts) - 1)
    return (_mp_dd(f, pts[1:]) - _mp_dd(f, pts[:-1])) / (pts[-1] - pts[0])


def _mp_daleckii_krein(a, es, f):
    """D^k f(A)[E_1..E_k] for k = len(es) in 1, 2 from mpmath's eigendecomposition of the
    (float, exactly symmetric) matrix ``a``."""
    n = a.shape[0]
    w, q = mp.eigsy(mp.matrix(a.tolist()))
    eh = [q.T * mp.matrix(e.tolist()) * q for e in es]
    g = mp.matrix(n, n)
    for i in range(n):
        for j in range(n):
            if len(es) == 1:
                g[i, j] = _mp_dd(f, [w[i], w[j]]) * eh[0][i, j]
            else:
                g[i, j] = sum(
                    _mp_dd(f, [w[i], w[m], w[j]]) * (eh[0][i, m] * eh[1][m, j] + eh[1][i, m] * eh[0][m, j])
                    for m in range(n)
                )
    return np.array((q * g * q.T).tolist(), dtype=float)


@pytest.mark.parametrize("fname", sorted(_MP_FUNCS))
def test_near_degenerate_spectra_to_rounding(fname):
    """Gaps 1e-1 ... 1e-14 and 0 at scales 1e-6, 1 and 1e3 (exp: 10): first derivatives
    within 2e-14 relative (measured worst 1.8e-15), second within 1e-13 (divided
    differences of order >= 2 accept the recursion up to an error bound of 2048 ulps
    per entry, 4.5e-13, to keep dense spectra cheap; measured worst 3.6e-14;
    docs/ad/funm.md); exp 10x looser at scale 10, where its condition number x f'/f is 10.
    A derivative built on eigh's vectors loses up to O(1) here."""
    ft, fm = _MP_FUNCS[fname]
    fm = fm or (lambda x: x**3)
    rng = np.random.default_rng(10)
    mp.mp.dps = 80
    try:
        for scale in (1e-6, 1.0, 1e3 if fname != "exp" else 10.0):
            for gap in (1e-1, 1e-4, 1e-8, 1e-11, 1e-14, 0.0):
                w = scale * np.array([1.0, 1.0 + gap, 1.0 + 2 * gap, 2.6])
                a = _with_spectrum(rng, w, False)
                e1, e2 = _herm(rng.standard_normal((4, 4))), _herm(rng.standard_normal((4, 4)))
                fn = lambda x: la.funm_hermitian(x, ft)  # noqa: E731
                for got, ref, tol in (
                    (_jvp(fn, a, e1), _mp_daleckii_krein(a, [e1], fm), 2e-14),
                    (_jvp2(fn, a, e1, e2), _mp_daleckii_krein(a, [e1, e2], fm), 1e-13),
                ):
                    err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                    assert err < tol * (1 if fname != "exp" else 10), (fname, scale, gap, err)
    finally:
        mp.mp.dps = 15


# ---------------------------------------------------------------------------
# staged graphs, warnings
# ---------------------------------------------------------------------------
def test_graph_of_the_gradient_matches_eager():
    rng = np.random.default_rng(12)
    a = tf.asarray(_with_spectrum(rng, [1.0, 1.0, 3.0], True))

    def loss(x):
        u, p = la.polar(x)
        return tf.real(tf.sum(la.sqrtm_psd(p) * tf.conj(u))) + tf.sum(tf.real(la.logm_pd(x)))

    g = tidu.make_graph(tidu.grad(loss), a)
    assert np.allclose(g(a).numpy(), tidu.grad(loss)(a).numpy(), rtol=0, atol=1e-13)
    bad = tf.asarray(-np.eye(3) + 0j)
    with pytest.raises(la.DomainError, match="positive definite"):  # the domain is checked when the graph runs
        g(bad)


# ---------------------------------------------------------------------------
# typed errors, never NaN
# ---------------------------------------------------------------------------
def test_domain_errors():
    neg = tf.asarray(np.diag([1.0, -0.5, 2.0]))
    with pytest.raises(la.DomainError, match="positive semidefinite"):
        la.sqrtm_psd(neg)
    with pytest.raises(la.DomainError, match="positive semidefinite"):
        la.powm_psd(neg, 0.5)
    with pytest.raises(la.DomainError, match="positive definite"):
        la.logm_pd(tf.asarray(np.diag([1.0, 0.0])))
    with pytest.raises(la.DomainError, match="positive definite"):
        la.powm_psd(tf.asarray(np.diag([1.0, 0.0])), -1.0)
    with pytest.raises(la.DomainError, match="not real"):
        la.sqrtm(tf.asarray(np.diag([1.0, -4.0])))
    with pytest.raises(la.DomainError, match="not real"):
        la.logm(tf.asarray(np.diag([1.0, -4.0])))
    assert np.allclose(la.sqrtm(tf.asarray(np.diag([1.0, -4.0]) + 0j)).numpy(), np.diag([1, 2j]))
    with pytest.raises(la.DomainError, match="singular"):
        la.logm(tf.asarray(np.diag([1.0, 0.0])))
    with pytest.raises(la.DomainError, match="no finite principal square root"):
        la.sqrtm(tf.asarray(np.array([[0.0, 1.0], [0.0, 0.0]])))
    with pytest.raises(la.DomainError, match="not finite"):
        la.funm_hermitian(tf.asarray(np.diag([1.0, -1.0])), tf.log)


def test_infinite_derivatives_raise_instead_of_nan():
    singular = tf.asarray(np.diag([0.0, 1.0, 4.0]))
    e = tf.asarray(np.ones((3, 3)))
    assert np.allclose(la.sqrtm_psd(singular).numpy(), np.diag([0.0, 1.0, 2.0]))  # the value is fine
    with pytest.raises(la.DomainError, match="derivative of order 1 is not finite"):
        tidu.jvp(la.sqrtm_psd, (singular,), (e,))
    with pytest.raises(la.DomainError, match="not finite"):
        tidu.grad(lambda x: tf.sum(la.sqrtm_psd(x)))(singular)
    _, d = tidu.jvp(lambda x: la.powm_psd(x, 1.5), (singular,), (e,))  # p >= 1: first derivative finite
    assert np.isfinite(d.numpy()).all()
    with pytest.raises(la.DomainError, match="order 2"):
        _jvp2(lambda x: la.powm_psd(x, 1.5), singular.numpy(), e.numpy(), e.numpy())
    with pytest.raises(la.SingularMatrixError, match="Sylvester"):
        tidu.jvp(la.sqrtm, (singular,), (e,))
    for a in (np.diag([2.0, 1.0, 0.0]), np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])):
        with pytest.raises(la.SingularMatrixError, match="rank-deficient"):
            tidu.grad(lambda x: tf.sum(la.polar(x)[0]))(tf.asarray(a))


def test_bad_arguments():
    m = tf.asarray(np.eye(2))
    with pytest.raises(tf.TenferroTypeError, match="callable"):
        la.funm_hermitian(m, 3.0)
    with pytest.raises(tf.TenferroTypeError, match="tenferro Tensor"):
        la.funm_hermitian(m, lambda w: np.exp(w.numpy()))
    with pytest.raises(tf.TenferroTypeError, match="elementwise"):
        la.funm_hermitian(m, lambda w: tf.sum(w))
    with pytest.raises(tf.TenferroTypeError, match="real"):
        la.funm_hermitian(m, lambda w: w * 1j)
    with pytest.raises(tf.TenferroTypeError, match="close over"):
        tidu.grad(lambda c: tf.sum(la.funm_hermitian(m, lambda w: w * c)))(tf.asarray(2.0))
    for p in ("2", None, float("nan"), True, tf.asarray(2.0)):
        with pytest.raises(tf.TenferroValueError, match="p must be"):
            la.powm_psd(m, p)
    with pytest.raises(tf.TenferroValueError, match="side must be"):
        la.polar(m, "up")
    for fn in (la.sqrtm_psd, la.logm_pd, la.sqrtm, la.logm, lambda x: la.funm_hermitian(x, tf.exp)):
        with pytest.raises(la.LinalgShapeError, match="square"):
            fn(tf.ones((2, 3)))
