"""The value-reading checks of tenferro.linalg's derivative rules see through ``tidu.vmap``
as they do through a loop over the examples or a trailing batch axis:

* ``qr``'s rank-deficiency detection (first zero pivot) under ``vmap(grad)`` and
  ``vmap(jvp)``: a loss on the trailing factors raises :class:`SingularMatrixError`,
  their tangents are NaN, losses on the leading factors stay exact;
* reverse mode's gauge and degeneracy checks (``settings(gauge=...)``) under
  ``vmap(grad)``: GaugeError/GaugeWarning and DegeneracyError/DegeneracyWarning as in the
  loop, invariant losses silent, the policy changing the report only."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg._matops import as_cols, mH, mm

N = 3


def _rank_deficient_pair(cplx=False):
    """Two examples ``[2, 3, 3]`` (leading example axis, vmap's in_axes=0): a full-rank one
    and one whose column 2 is column 0 + column 1."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, N, N))
    if cplx:
        a = a + 1j * rng.standard_normal((2, N, N))
    a[1][:, 2] = a[1][:, 0] + a[1][:, 1]
    return a


def _q_col(j):
    return lambda m: tf.real(tf.sum(la.qr(m)[0][:, j]))


# ---------------------------------------------------------------------------
# qr: rank deficiency under vmap
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("cplx", [False, True])
def test_qr_vmap_grad_of_trailing_factor_at_rank_deficiency_raises(cplx):
    a = _rank_deficient_pair(cplx)
    g = tidu.grad(_q_col(2))
    assert np.isfinite(g(tf.asarray(a[0])).numpy()).all()  # the full-rank example alone is fine
    with pytest.raises(la.SingularMatrixError, match=r"qr: .*column 2 lies in the span"):
        g(tf.asarray(a[1]))  # the loop
    with pytest.raises(la.SingularMatrixError, match=r"qr: .*column 2 lies in the span"):
        tidu.vmap(g)(tf.asarray(a))


@pytest.mark.parametrize("cplx", [False, True])
def test_qr_vmap_grad_of_leading_factors_matches_the_loop(cplx):
    a = _rank_deficient_pair(cplx)
    for j in (0, 1):
        g = tidu.grad(_q_col(j))
        batched = tidu.vmap(g)(tf.asarray(a)).numpy()
        looped = np.stack([g(tf.asarray(x)).numpy() for x in a])
        np.testing.assert_allclose(batched, looped, rtol=1e-10, atol=1e-12)


def test_qr_vmap_jvp_at_rank_deficiency_is_nan_as_the_trailing_batch():
    a = _rank_deficient_pair()
    da = np.random.default_rng(1).standard_normal((N, N))

    def tangents(m):
        return tidu.jvp(lambda x: la.qr(x)[0], (m,), (tf.asarray(da),))[1]

    loop = tangents(tf.asarray(a[1])).numpy()
    assert np.isnan(loop[:, 2]).all() and np.isfinite(loop[:, :2]).all()
    batched = tidu.vmap(tangents)(tf.asarray(a)).numpy()[1]
    assert np.isnan(batched[:, 2]).all()
    np.testing.assert_allclose(batched[:, :2], loop[:, :2], rtol=1e-10, atol=1e-12)
    # the same batch as trailing axes takes the same path (docs/ad/qr.md)
    trailing = tidu.jvp(
        lambda x: la.qr(x)[0], (tf.asarray(np.moveaxis(a, 0, -1)),), (tf.asarray(np.stack([da, da], -1)),)
    )[1].numpy()
    np.testing.assert_array_equal(
        np.isnan(np.moveaxis(trailing, -1, 0)), np.isnan(tidu.vmap(tangents)(tf.asarray(a)).numpy())
    )


def test_qr_vmap_full_rank_batch_unchanged():
    a = np.random.default_rng(2).standard_normal((2, N, N))
    g = tidu.grad(_q_col(2))
    np.testing.assert_allclose(
        tidu.vmap(g)(tf.asarray(a)).numpy(), np.stack([g(tf.asarray(x)).numpy() for x in a]), rtol=1e-10
    )


# ---------------------------------------------------------------------------
# eigh: the gauge and degeneracy checks under vmap(grad)
# ---------------------------------------------------------------------------
def _degenerate_pair(cplx=False):
    """Two Hermitian examples with eigenvalues (1, 1, 3) (a degenerate block)."""
    rng = np.random.default_rng(1)
    out = []
    for _ in range(2):
        x = rng.standard_normal((N, N)) + (1j * rng.standard_normal((N, N)) if cplx else 0)
        q = np.linalg.qr(x)[0]
        out.append((q * np.array([1.0, 1.0, 3.0])) @ q.conj().T)
    return np.stack(out)


def _gauge_loss(m):  # a function of one vector of the block: gauge dependent
    return tf.sum(la.eigh(m)[1][:, 0] ** 3)


def _degeneracy_loss(m):  # V diag(w) V^H weighted: values and vectors of the block
    c = tf.asarray(np.arange(1.0, N * N + 1).reshape(N, N))
    w, v = la.eigh(m)
    return tf.real(tf.sum(mm(tf.multiply(v, as_cols(w, N)), mH(v)) * c))


def _invariant_loss(m):  # the projector onto the degenerate block, and a symmetric function of w
    c = tf.asarray(np.arange(1.0, N * N + 1).reshape(N, N))
    w, v = la.eigh(m)
    vb = v[:, 0:2]
    return tf.real(tf.sum(mm(vb, mH(vb)) * c)) + tf.sum(la.eigvalsh(m) ** 3)


CASES = [(_gauge_loss, la.GaugeError, la.GaugeWarning), (_degeneracy_loss, la.DegeneracyError, la.DegeneracyWarning)]


@pytest.mark.parametrize("loss, error, warning", CASES, ids=["gauge", "degeneracy"])
def test_eigh_vmap_grad_raise_policy_as_the_loop(loss, error, warning):
    a = _degenerate_pair()
    g = tidu.grad(loss)
    with la.settings(gauge="raise"):
        with pytest.raises(error):
            g(tf.asarray(a[0]))  # the loop
        with pytest.raises(error):
            tidu.vmap(g)(tf.asarray(a))


@pytest.mark.parametrize("loss, error, warning", CASES, ids=["gauge", "degeneracy"])
def test_eigh_vmap_grad_warn_policy_as_the_loop(loss, error, warning):
    a = _degenerate_pair()
    g = tidu.grad(loss)
    with la.settings(gauge="warn"):
        with pytest.warns(warning):
            looped = np.stack([g(tf.asarray(x)).numpy() for x in a])
        with pytest.warns(warning):
            batched = tidu.vmap(g)(tf.asarray(a)).numpy()
    with la.settings(gauge="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        ignored = tidu.vmap(g)(tf.asarray(a)).numpy()
    np.testing.assert_array_equal(batched, ignored)  # the policy changes the report, not the value
    np.testing.assert_allclose(batched, looped, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("cplx", [False, True])
def test_eigh_vmap_grad_invariant_loss_is_silent(cplx):
    a = _degenerate_pair(cplx)
    g = tidu.grad(_invariant_loss)
    with la.settings(gauge="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        batched = tidu.vmap(g)(tf.asarray(a)).numpy()
        looped = np.stack([g(tf.asarray(x)).numpy() for x in a])
    np.testing.assert_allclose(batched, looped, rtol=1e-8, atol=1e-10)


def test_eigh_vmap_grad_of_unbatched_residuals_checks_the_batch():
    # one batched and one unbatched operand: the residuals of eigh are batched, a constant is not
    a = _degenerate_pair()
    g = tidu.grad(lambda m, s: s * _gauge_loss(m), argnums=0)
    with la.settings(gauge="raise"), pytest.raises(la.GaugeError):
        tidu.vmap(g, in_axes=(0, None))(tf.asarray(a), tf.asarray(2.0))


def test_eigh_staged_vmap_grad_and_jacrev_check_as_the_loop():
    a = _degenerate_pair()
    g = tidu.grad(_gauge_loss)
    with la.settings(gauge="raise"):
        with pytest.raises(la.GaugeError):
            tf.jit(tidu.vmap(g))(tf.asarray(a))  # staged: the check runs with the program
        with pytest.raises(la.GaugeError):  # jacrev: a vmap over the cotangents of one vjp
            tidu.jacrev(lambda m: la.eigh(m)[1][:, 0] ** 3)(tf.asarray(a[0]))
        tidu.jacrev(la.eigvalsh)(tf.asarray(a[0]))  # invariant: silent


def test_truncated_svd_with_a_cutoff_under_vmap_keeps_the_batch_s_largest_count():
    """``truncated_svd(cutoff=...)`` under vmap reads every example's values, as for a trailing
    batch (it raised a message about jit): the same ranks as a loop where they agree, the
    largest count where they differ (the trailing batch's rule), and a loop's gradients."""
    rng = np.random.default_rng(0)
    same = rng.standard_normal((3, 5, 4)) @ np.diag([1.0, 1.0, 1e-9, 1e-10])
    cut = lambda a: la.truncated_svd(a, cutoff=1e-12)  # noqa: E731
    u, s, vh = tidu.vmap(cut)(tf.asarray(same))
    assert (tuple(u.shape), tuple(s.shape), tuple(vh.shape)) == ((3, 5, 2), (3, 2), (3, 2, 4))
    for i, b in enumerate(same):
        _, s_i, _ = cut(tf.asarray(b))
        np.testing.assert_allclose(np.asarray(s)[i], np.asarray(s_i), rtol=1e-14)
    grad = tidu.grad(lambda a: tf.sum(tidu.vmap(lambda x: cut(x)[1])(a)))(tf.asarray(same))
    loop = [np.asarray(tidu.grad(lambda x: tf.sum(cut(x)[1]))(tf.asarray(b))) for b in same]
    np.testing.assert_allclose(np.asarray(grad), np.stack(loop), rtol=1e-12, atol=1e-14)
    mixed = rng.standard_normal((3, 6, 4))
    mixed[1] = mixed[1] @ np.diag([1.0, 1.0, 1e-9, 1e-10])  # rank 2 where the others keep 4
    _, s, _ = tidu.vmap(cut)(tf.asarray(mixed))
    _, s_trailing, _ = cut(tf.asarray(np.moveaxis(mixed, 0, -1)))
    assert tuple(s.shape) == (3, 4)
    np.testing.assert_allclose(np.moveaxis(np.asarray(s), 0, -1), np.asarray(s_trailing), rtol=1e-14)
