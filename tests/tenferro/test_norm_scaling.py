"""The 2-norm and Frobenius norm at the ends of the float range (review 2026-12-01): the squares of
3e-200 underflowed (norm 0, gradient 0 at a nonzero point), those of 3e200 overflowed (inf)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
import tidu


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1.0, 1e160, 1e200])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_vector_norm_and_gradient_at_any_scale(scale, dtype):
    x = np.array([3.0, 4.0], dtype=dtype) * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning from the squares
        n = float(la.norm(tf.asarray(x)))
        g = np.asarray(tidu.grad(lambda v: la.norm(v))(tf.asarray(x.real.copy())))
    assert n == pytest.approx(5.0 * scale, rel=1e-15)
    np.testing.assert_allclose(g, [0.6, 0.8], rtol=1e-15)


def test_frobenius_norm_keeps_its_order_with_the_two_norm():
    m = tf.asarray(np.diag([1e-200, 2e-200]))
    fro, two = float(la.norm(m, "fro")), float(la.norm(m, 2))
    assert fro == pytest.approx(np.sqrt(5.0) * 1e-200, rel=1e-15) and fro >= two


def test_ordinary_norms_are_numpys():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 2)) + 1j * rng.standard_normal((3, 4, 2))
    np.testing.assert_allclose(np.asarray(la.norm(tf.asarray(x), "fro")), np.linalg.norm(x, axis=(0, 1)), rtol=1e-15)
    v = rng.standard_normal(7)
    assert float(la.norm(tf.asarray(v))) == pytest.approx(float(np.linalg.norm(v)), rel=1e-15)
    np.testing.assert_allclose(
        np.asarray(tidu.hessian(lambda y: la.norm(y))(tf.asarray(v))),
        (np.eye(7) - np.outer(v, v) / (v @ v)) / np.linalg.norm(v),
        rtol=1e-12,
        atol=1e-15,
    )
    assert float(la.norm(tf.zeros((3,)))) == 0.0
    np.testing.assert_array_equal(np.asarray(tidu.grad(lambda y: la.norm(y))(tf.zeros((3,)))), 0.0)


def test_norms_of_no_entries_are_zero():
    """The scaled form took the max over no entries, which has no identity (hypothesis found it)."""
    assert float(la.norm(tf.zeros((0,)))) == 0.0
    assert np.asarray(la.norm(tf.zeros((0, 3, 2)), "fro")).tolist() == [0.0, 0.0]
    assert np.asarray(la.norm(tf.zeros((3, 0)), axis=1)).tolist() == [0.0, 0.0, 0.0]
