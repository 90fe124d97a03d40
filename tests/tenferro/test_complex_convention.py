"""The complex-gradient convention stated in README.md ("Complex numbers"):
grad of a real loss L at z = x + iy is dL/dx - i dL/dy; holomorphic grad is f'(z)."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu

Z = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
W = np.array([0.3 - 1.0j, 2.0 + 0.5j, -1.0 - 1.0j])


def test_abs_squared():
    # L = |z|^2 = x^2 + y^2: dL/dx - i dL/dy = 2x - 2iy = 2 conj(z)
    g = tidu.grad(lambda z: tf.sum(tf.abs(z) ** 2))(tf.asarray(Z))
    np.testing.assert_allclose(g.numpy(), 2 * np.conj(Z), rtol=1e-12)


def test_real_z_conj_w():
    # L = Re(z conj(w)) = x_z x_w + y_z y_w
    # d/dz: x_w - i y_w = conj(w);  d/dw: x_z - i y_z = conj(z)
    gz, gw = tidu.grad(lambda z, w: tf.sum(tf.real(z * tf.conj(w))), argnums=(0, 1))(tf.asarray(Z), tf.asarray(W))
    np.testing.assert_allclose(gz.numpy(), np.conj(W), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), np.conj(Z), rtol=1e-12)


def test_holomorphic():
    # f(z) = sum(z^3 + sin(z)) is holomorphic: grad(holomorphic=True) = 3 z^2 + cos(z)
    f = lambda z: tf.sum(z * z * z + tf.sin(z))  # noqa: E731
    g = tidu.grad(f, holomorphic=True)(tf.asarray(Z))
    np.testing.assert_allclose(g.numpy(), 3 * Z**2 + np.cos(Z), rtol=1e-12)


def test_complex_output_needs_holomorphic():
    with pytest.raises(tidu.ComplexOutputError, match="holomorphic"):
        tidu.grad(lambda z: tf.sum(z * z))(tf.asarray(Z))


def test_jvp_is_r_linear():
    # For the non-holomorphic |z|^2 the JVP along t is 2 Re(conj(z) t): R-linear, not C-linear.
    z, t = tf.asarray(Z), tf.asarray(np.array([1j, 1.0, 1 + 1j]))
    _, dt = tidu.jvp(lambda z: tf.abs(z) ** 2, (z,), (t,))
    np.testing.assert_allclose(dt.numpy(), 2 * np.real(np.conj(Z) * t.numpy()), rtol=1e-12)
