"""tenferro.linalg at degenerate spectra: finite, analytic gradients of losses that are
invariant under the degenerate subspace (eigh, svd, the polar factor, where the
cotangents do not determine the reconstruction), the tolerance of the gauge check and
the broadening setting (and triangular_solve's values for every flag); and gauge
detection: a loss that depends on the phase or basis of degenerate vectors warns or
raises.

Tests parametrized over ``mode`` (``helpers.MODES``) also run compiled: under
``jit`` each function (or gradient) is ``tenferro.jit``-compiled and every call is
checked equal to eager to rounding (``helpers.in_mode``) before the test's own
assertions run on the compiled result."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

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
