"""DegeneracyWarning: at an exactly degenerate block of singular values or eigenvalues
a loss that depends on both the values and the vectors of the block (``U f(S) Vh``,
``V f(w) V^H`` with ``f' != 0`` there) has an in-block gradient that the
decomposition does not determine (docs/ad/gauge.md). The reverse rules of ``svd`` and
``eigh`` report it per the gauge policy; invariant losses stay silent."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg._matops import as_cols, mH, mm

N = 4


def _rand(rng, shape, cplx):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if cplx else x


def _hermitian(rng, w, cplx):
    q = np.linalg.qr(_rand(rng, (len(w), len(w)), cplx))[0]
    a = (q * np.asarray(w)) @ q.conj().T
    return 0.5 * (a + a.conj().T)


def _with_singular_values(rng, s, cplx):
    q1 = np.linalg.qr(_rand(rng, (len(s), len(s)), cplx))[0]
    q2 = np.linalg.qr(_rand(rng, (len(s), len(s)), cplx))[0]
    return (q1 * np.asarray(s)) @ q2.conj().T


def _losses(c):
    c = tf.asarray(c)

    def eigh_recon(x):  # V diag(w) V^H = A: values and vectors of the block
        w, v = la.eigh(x)
        return tf.real(tf.sum(mm(tf.multiply(v, as_cols(w, N)), mH(v)) * c))

    def eigh_exp(x):  # V exp(w) V^H = expm(A)
        w, v = la.eigh(x)
        return tf.real(tf.sum(mm(tf.multiply(v, as_cols(tf.exp(w), N)), mH(v)) * c))

    def svd_recon(x):
        u, s, vh = la.svd(x)
        return tf.real(tf.sum(mm(tf.multiply(u, as_cols(s, N)), vh) * c))

    def svd_squares(x):  # U S^2 U^H = A A^H
        u, s, vh = la.svd(x)
        return tf.real(tf.sum(mm(tf.multiply(u, as_cols(s * s, N)), mH(u)) * c))

    return {"eigh_recon": eigh_recon, "eigh_exp": eigh_exp, "svd_recon": svd_recon, "svd_squares": svd_squares}


def _invariant_losses(c):
    c = tf.asarray(c)

    def eigh_projector(x):  # projector onto the whole degenerate eigenspace (eigenvalue 1)
        w, v = la.eigh(x)
        vb = v[:, 1:3]
        return tf.real(tf.sum(mm(vb, mH(vb)) * c))

    def eigh_cubes(x):  # symmetric function of the eigenvalues
        w = la.eigvalsh(x)
        return tf.sum(w * w * w)

    def eigh_all(x):  # V V^H: vectors only
        w, v = la.eigh(x)
        return tf.real(tf.sum(mm(v, mH(v)) * c))

    def svd_polar(x):  # U Vh: vectors only, exact at repeated singular values
        u, s, vh = la.svd(x)
        return tf.real(tf.sum(mm(u, vh) * c))

    def svd_nuclear(x):
        return tf.sum(la.svdvals(x))

    def svd_top_projector(x):  # projector onto the left singular subspace of the repeated value 2
        u, s, vh = la.svd(x)
        ub = u[:, :2]
        return tf.real(tf.sum(mm(ub, mH(ub)) * c))

    return {
        "eigh_projector": eigh_projector,
        "eigh_cubes": eigh_cubes,
        "eigh_all": eigh_all,
        "svd_polar": svd_polar,
        "svd_nuclear": svd_nuclear,
        "svd_top_projector": svd_top_projector,
    }


def _inputs(cplx, seed=0):
    rng = np.random.default_rng(seed)
    herm = _hermitian(rng, [1.0, 1.0, 2.0, -1.0], cplx)  # block {1, 1}
    sv = _with_singular_values(rng, [2.0, 2.0, 1.0, 0.5], cplx)  # block {2, 2}
    return rng, {"eigh": tf.asarray(herm), "svd": tf.asarray(sv)}


def _input_for(name, inputs):
    return inputs["eigh" if name.startswith("eigh") else "svd"]


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("name", ["eigh_recon", "eigh_exp", "svd_recon", "svd_squares"])
def test_values_and_vectors_of_a_block_warn(name, cplx):
    rng, inputs = _inputs(cplx)
    loss = _losses(_rand(rng, (N, N), cplx))[name]
    a = _input_for(name, inputs)
    op = name.split("_")[0]
    with pytest.warns(la.DegeneracyWarning, match=rf"{op}: at a degenerate block .*funm_hermitian"):
        g = tidu.grad(loss)(a)
    assert np.all(np.isfinite(g.numpy()))
    with la.settings(gauge="raise"), pytest.raises(la.DegeneracyError, match=rf"{op}: at a degenerate block"):
        tidu.grad(loss)(a)
    with la.settings(gauge="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        g_ignored = tidu.grad(loss)(a)
    assert np.array_equal(g.numpy(), g_ignored.numpy())  # the policy changes the report, not the value


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize(
    "name", ["eigh_projector", "eigh_cubes", "eigh_all", "svd_polar", "svd_nuclear", "svd_top_projector"]
)
def test_invariant_losses_are_silent(name, cplx):
    rng, inputs = _inputs(cplx)
    loss = _invariant_losses(_rand(rng, (N, N), cplx))[name]
    with la.settings(gauge="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tidu.grad(loss)(_input_for(name, inputs))
    assert np.all(np.isfinite(g.numpy()))


@pytest.mark.parametrize("cplx", [False, True])
def test_the_warning_is_right_and_silence_is_exact(cplx):
    # The warned gradient misses the in-block part (docs/ad/gauge.md §4): for V diag(w) V^H
    # = herm(A) the true gradient is herm(C); the returned one differs exactly inside the
    # block. (tidu pairs a gradient g with a tangent d as Re sum(g * d), so g's eigenbasis
    # form is V^T g conj(V).) A C whose block is a multiple of the identity there makes the
    # missing part 0: the check stays silent and the gradient is exact.
    rng = np.random.default_rng(3)
    a = _hermitian(rng, [1.0, 1.0, 2.0, -1.0], cplx)
    w, v = np.linalg.eigh(a)
    c = _rand(rng, (N, N), cplx)
    herm = lambda m: 0.5 * (m + m.conj().T)  # noqa: E731
    loss = _losses(c)["eigh_recon"]
    with la.settings(gauge="ignore"):
        g = tidu.grad(loss)(tf.asarray(a)).numpy()
    miss = v.T @ (g - herm(c)) @ v.conj()
    block = np.ix_([1, 2], [1, 2])
    outside = miss.copy()
    outside[block] = 0
    assert np.abs(outside).max() < 1e-12 and np.abs(miss[block]).max() > 1e-3
    cb = v.T @ herm(c) @ v.conj()
    cb[block] = np.eye(2) * np.trace(cb[block]).real / 2
    c_exact = v.conj() @ cb @ v.T
    with la.settings(gauge="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        g2 = tidu.grad(_losses(c_exact)["eigh_recon"])(tf.asarray(a)).numpy()
    assert np.allclose(g2, herm(c_exact), atol=1e-12)


def test_null_space_vectors_of_a_rank_deficient_svd_warn():
    # numerically zero singular values are used as computed (exact for U f(S) Vh with
    # f(0) = 0); a loss on the null space's vectors themselves amplifies rounding: warned
    rng = np.random.default_rng(5)
    a = tf.asarray(_with_singular_values(rng, [2.0, 1.0, 0.0, 0.0], False))
    c = tf.asarray(rng.standard_normal((N, N)))

    def null_projector(x):
        u, s, vh = la.svd(x)
        un = u[:, 2:]
        return tf.sum(mm(un, mH(un)) * c)

    def range_projector(x):
        u, s, vh = la.svd(x)
        ur = u[:, :2]
        return tf.sum(mm(ur, mH(ur)) * c)

    with pytest.warns(la.DegeneracyWarning, match="null space of rank-deficient input"):
        tidu.grad(null_projector)(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tidu.grad(range_projector)(a)  # the same information, exact and silent
        tidu.grad(_losses(c.numpy())["svd_recon"])(a)


def test_exports_and_hierarchy():
    assert issubclass(la.DegeneracyWarning, UserWarning)
    assert issubclass(la.DegeneracyError, la.LinalgError) and issubclass(la.DegeneracyError, tf.TenferroError)
    assert "DegeneracyWarning" in la.__all__ and "DegeneracyError" in la.__all__


def test_policy_is_captured_when_the_rule_is_built():
    rng, inputs = _inputs(False)
    loss = _losses(_rand(rng, (N, N), False))["eigh_recon"]
    with la.settings(gauge="raise"):
        _, pullback = tidu.vjp(loss, inputs["eigh"])
    with pytest.raises(la.DegeneracyError):
        pullback(tf.asarray(1.0))
