"""Complex numbers, JAX's convention: JVPs are R-linear; grad of a real ``L`` at
``z = x + iy`` is ``dL/dx - i dL/dy``; a complex output needs ``holomorphic=True``."""

import numpy as np
import pytest

import tidu
from tidu.testing import check_grads
from toy import abs2, add, conj, exp, imag, mul, real, reduce_sum, sin

Z = np.array(1.0 + 2.0j)
V = np.array([0.5 - 1.0j, -0.3 + 0.2j, 1.5 + 0.7j])


def _wirtinger_grad(L, z, h=1e-6):
    """dL/dx - i dL/dy by central differences (reference for the convention)."""
    dx = (L(z + h) - L(z - h)) / (2 * h)
    dy = (L(z + 1j * h) - L(z - 1j * h)) / (2 * h)
    return dx - 1j * dy


@pytest.mark.parametrize(
    "name, L, want",
    [
        ("abs2", abs2, lambda z: 2 * np.conj(z)),  # |z|^2 = x^2 + y^2 -> 2x - 2iy
        ("re_z2", lambda z: real(mul(z, z)), lambda z: 2 * z),  # x^2 - y^2 -> 2x + 2iy
        ("im_z2", lambda z: imag(mul(z, z)), lambda z: -2j * z),  # 2xy -> 2y - 2ix
        ("re_z", real, lambda z: 1.0 + 0j),
        ("im_z", imag, lambda z: -1j + 0 * z),
        ("re_exp", lambda z: real(exp(z)), np.exp),  # Re g for holomorphic g -> g'(z)
    ],
)
def test_grad_of_real_loss_at_complex_point(name, L, want):
    g = tidu.grad(L)(Z)
    np.testing.assert_allclose(g, want(Z), rtol=1e-12)
    np.testing.assert_allclose(g, _wirtinger_grad(lambda z: float(L(np.array(z))), Z), rtol=1e-6)
    assert g.dtype == Z.dtype


def test_jvp_is_r_linear():
    # d|z|^2 [t] = 2 Re(conj(z) t): not C-linear in t
    _, t1 = tidu.jvp(abs2, (Z,), (np.array(1.0 + 0j),))
    _, ti = tidu.jvp(abs2, (Z,), (np.array(1j),))
    np.testing.assert_allclose(t1, 2 * Z.real)
    np.testing.assert_allclose(ti, 2 * Z.imag)
    # conj is R-linear: its jvp is conj of the tangent
    _, tc = tidu.jvp(conj, (Z,), (np.array(0.5 + 3j),))
    np.testing.assert_allclose(tc, 0.5 - 3j)


def test_holomorphic_grad():
    np.testing.assert_allclose(tidu.grad(lambda z: mul(z, z), holomorphic=True)(Z), 2 * Z)
    np.testing.assert_allclose(tidu.grad(lambda z: mul(mul(z, z), z), holomorphic=True)(Z), 3 * Z**2)
    np.testing.assert_allclose(tidu.grad(sin, holomorphic=True)(Z), np.cos(Z), rtol=1e-12)
    # second holomorphic derivative
    np.testing.assert_allclose(
        tidu.grad(tidu.grad(lambda z: mul(mul(z, z), z), holomorphic=True), holomorphic=True)(Z), 6 * Z
    )


def test_holomorphic_jacobians():
    f = lambda v: mul(v, exp(v))  # noqa: E731  f' = (1 + v) e^v, elementwise
    want = np.diag((1 + V) * np.exp(V))
    np.testing.assert_allclose(tidu.jacfwd(f, holomorphic=True)(V), want, rtol=1e-12)
    np.testing.assert_allclose(tidu.jacrev(f, holomorphic=True)(V), want, rtol=1e-12)
    h = tidu.hessian(lambda v: reduce_sum(mul(mul(v, v), v)), holomorphic=True)(V)
    np.testing.assert_allclose(h, np.diag(6 * V), rtol=1e-12)


def test_complex_output_requires_holomorphic():
    with pytest.raises(tidu.ComplexOutputError, match="holomorphic=True"):
        tidu.grad(lambda z: mul(z, z))(Z)
    with pytest.raises(tidu.ComplexOutputError, match="complex"):
        tidu.grad(lambda x: mul(x, x), holomorphic=True)(np.array(1.0))  # real input
    with pytest.raises(tidu.ComplexOutputError, match="complex output"):
        tidu.grad(abs2, holomorphic=True)(Z)  # real output
    with pytest.raises(tidu.ComplexOutputError, match="holomorphic"):
        tidu.jacrev(lambda v: mul(v, v))(V)
    with pytest.raises(tidu.ComplexOutputError, match="holomorphic"):
        tidu.jacfwd(lambda v: mul(v, v))(V)


def test_second_order_real_loss_of_complex_input():
    """L(z) = |z|^4: grad = 2|z|^2 * 2 conj z; grad of Re(grad . w) by hand."""
    L = lambda z: mul(abs2(z), abs2(z))  # noqa: E731
    np.testing.assert_allclose(tidu.grad(L)(Z), 4 * abs(Z) ** 2 * np.conj(Z))
    # M(z) = Re(grad L(z)) = 4 |z|^2 x = 4 (x^3 + x y^2): dM/dx - i dM/dy = 4(3x^2 + y^2) - 8ixy
    M = lambda z: real(tidu.grad(L)(z))  # noqa: E731
    x, y = Z.real, Z.imag
    np.testing.assert_allclose(tidu.grad(M)(Z), 4 * (3 * x**2 + y**2) - 8j * x * y, rtol=1e-12)


def test_mixed_real_complex_arguments():
    f = lambda a, z: real(mul(a, mul(z, conj(z))))  # noqa: E731  a |z|^2
    a = np.array(3.0)
    ga, gz = tidu.grad(f, argnums=(0, 1))(a, Z)
    np.testing.assert_allclose(ga, abs(Z) ** 2)
    np.testing.assert_allclose(gz, 2 * a * np.conj(Z))
    assert ga.dtype == np.float64 and gz.dtype == np.complex128


@pytest.mark.parametrize(
    "f",
    [lambda v: mul(v, exp(v)), lambda v: reduce_sum(abs2(sin(v))), lambda v: add(real(mul(v, v)), imag(conj(v)))],
    ids=["holomorphic", "real_loss", "re_im"],
)
def test_check_grads_complex(f):
    check_grads(f, (V,), order=2)


def test_vjp_transpose_pairing():
    """vjp is the transpose under Re sum(a * b): Re<vjp(c), t> = Re<c, jvp(t)> (no conj)."""
    f = lambda v: mul(sin(v), conj(v))  # noqa: E731
    rng = np.random.default_rng(0)
    t = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    c = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    _, jt = tidu.jvp(f, (V,), (t,))
    (vc,) = tidu.vjp(f, V)[1](c)
    np.testing.assert_allclose(np.real(np.sum(vc * t)), np.real(np.sum(c * jt)), rtol=1e-12)
