"""Fixes from a review of the primitives' derivatives at edge cases (2026-12-01), each against
NumPy or a closed form computed here:

* ``sign`` of a complex subnormal: ``x / |x|`` was a complex division by the subnormal ``|x|``,
  which overflows in NumPy (``sign(1e-310+1e-310j)`` was ``inf+infj``);
* ``arctan2``/``angle``: ``x**2 + y**2`` underflowed below ``|(x, y)|`` ~ 1.5e-162 and was taken
  for the origin (gradient 0 where it is 5e169);
* ``logsumexp`` with a ``+inf`` entry: the weights were ``inf`` and ``exp(x)`` (and a tangent
  ``0 * inf`` NaN) where the limit of softmax is ``1/n`` on the ``n`` infinite entries."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu


def test_complex_sign_of_subnormals_is_numpys():
    z = np.array([1e-310 + 1e-310j, 3e-320 + 0j, 5e-324j, 0j, 3 - 4j, -1e-200 + 2e-200j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.asarray(tf.sign(tf.asarray(z)))
    np.testing.assert_allclose(got, np.sign(z), rtol=1e-15, atol=0)


def test_complex_sign_gradient_at_a_tiny_modulus():
    c = np.array([0.3 + 0.1j, -0.2 + 0.5j])
    z0 = np.array([3 - 4j, 1e-200 + 1e-200j])

    def f(z: np.ndarray) -> float:
        return float(np.sum(np.real(z / np.abs(z) * c)))

    g = np.asarray(tidu.grad(lambda z: tf.sum(tf.real(tf.sign(z) * tf.asarray(c))))(tf.asarray(z0)))
    for k, e in enumerate((1e-7, 1e-207)):
        step = np.eye(2)[k] * e
        fd = (f(z0 + step) - f(z0 - step)) / (2 * e) - 1j * (f(z0 + 1j * step) - f(z0 - 1j * step)) / (2 * e)
        assert g[k] == pytest.approx(fd, rel=1e-6)


@pytest.mark.parametrize("s", [1e-170, 1e-160, 1e-300, 1e-5, 1.0])
def test_arctan2_gradient_of_tiny_points(s):
    y = x = tf.asarray([s])
    gy, gx = tidu.grad(lambda y, x: tf.sum(tf.arctan2(y, x)), argnums=(0, 1))(y, x)
    want = 1.0 / (2.0 * s)  # x / (x^2 + y^2) at x = y = s
    assert float(np.asarray(gy)[0]) == pytest.approx(want, rel=1e-14)
    assert float(np.asarray(gx)[0]) == pytest.approx(-want, rel=1e-14)
    gz = np.asarray(tidu.grad(lambda z: tf.sum(tf.angle(z)))(tf.asarray(np.array([s + 1j * s]))))[0]
    assert gz == pytest.approx(-want - 1j * want, rel=1e-14)


def test_arctan2_origin_and_second_order_unchanged():
    g = tidu.grad(lambda y, x: tf.sum(tf.arctan2(y, x)), argnums=(0, 1))(tf.asarray([0.0]), tf.asarray([0.0]))
    assert [float(np.asarray(v)[0]) for v in g] == [0.0, 0.0]  # the documented subgradient
    h = np.asarray(tidu.hessian(lambda v: tf.arctan2(v[0], v[1]))(tf.asarray([0.3, 0.4])))
    y, x, r4 = 0.3, 0.4, 0.25**2
    np.testing.assert_allclose(h, [[-2 * x * y / r4, (y * y - x * x) / r4], [(y * y - x * x) / r4, 2 * x * y / r4]])


@pytest.mark.parametrize(
    "x, want",
    [
        ([np.inf, 0.0], [1.0, 0.0]),
        ([np.inf, np.inf, 5.0], [0.5, 0.5, 0.0]),
        ([-np.inf, -np.inf], [0.0, 0.0]),
        ([1.0, 2.0, -np.inf], [1 / (1 + np.e), np.e / (1 + np.e), 0.0]),
    ],
)
def test_logsumexp_weights_at_infinities(x, want):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = np.asarray(tidu.grad(tf.logsumexp)(tf.asarray(x)))
        t = np.arange(1.0, len(x) + 1.0)
        _, jv = tidu.jvp(tf.logsumexp, (tf.asarray(x),), (tf.asarray(t),))
    np.testing.assert_allclose(g, want, rtol=1e-15, atol=0)
    assert float(np.asarray(jv)) == pytest.approx(float(np.dot(want, t)), rel=1e-15)


def test_logsumexp_infinity_along_one_axis():
    x = tf.asarray(np.array([[np.inf, 1.0], [2.0, 3.0]]))
    g = np.asarray(tidu.grad(lambda v: tf.sum(tf.logsumexp(v, axis=1)))(x))
    np.testing.assert_allclose(g, [[1.0, 0.0], [1 / (1 + np.e), np.e / (1 + np.e)]], rtol=1e-15)


# ---- single precision: the rules' constants in the operand's dtype (a later review) -------------
F32_CASES = {
    "logsumexp": (lambda a: tf.logsumexp(a), "float32"),
    "arctan2": (lambda a: tf.sum(tf.arctan2(a, a + 2)), "float32"),
    "angle": (lambda a: tf.sum(tf.angle(a * (1 + 1j))), "float32"),  # complex64 inside
    "logsumexp-product": (lambda a: tf.sum(tf.logsumexp(a) * a**3), "float32"),
}


@pytest.mark.parametrize("name", sorted(F32_CASES))
def test_single_precision_tangents_and_gradients_keep_float32(name):
    """The JVP rules of ``logsumexp`` and ``arctan2`` (``angle`` through it) made two Python
    floats into a float64 ``where``: float32 tangents came out float64 and ``grad`` raised
    ``TangentMismatchError`` (a ``ShapeError`` in a product with a float32 tensor)."""
    f, dtype = F32_CASES[name]
    a = np.array([0.3, -1.2, 0.5], np.float32)
    x = tf.asarray(a)
    _, t = tidu.jvp(f, (x,), (tf.ones_like(x),))
    g = tidu.grad(f)(x)
    assert t.dtype == tf.float32 and g.dtype == tf.float32
    # against the same function in float64
    g64 = tidu.grad(f)(tf.asarray(a.astype(np.float64))).numpy()
    np.testing.assert_allclose(g.numpy(), g64, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("v", [1e-20, 1e-30, 1e-38])
def test_float32_arctan2_gradient_at_tiny_arguments(v):
    """``d/dy arctan2(y, x) = x / (x^2 + y^2)``: in float32 ``x^2 + y^2`` underflows from ~1e-19
    on; the rule scales by ``2**86`` there (``2**1000`` would overflow float32)."""
    y = tf.asarray(np.array([v], np.float32))
    c = np.float32(2 * v)
    g = tidu.grad(lambda a: tf.sum(tf.arctan2(a, tf.asarray(np.array([c])))))(y)
    want = float(c) / (float(c) ** 2 + float(np.float32(v)) ** 2)
    assert g.dtype == tf.float32
    np.testing.assert_allclose(g.numpy(), [want], rtol=1e-6)
