"""Python numbers as differentiable inputs: ``tidu.grad(f)(3.0)`` works as ``jax.grad(f)(3.0)``.

tenferro registers the scalar promotion (``tidu.register_scalar_promotion``): a Python float
becomes a 0-d float64 tensor, a complex a complex128 one, a NumPy scalar a tensor of its dtype.
Every transform takes them (grad, value_and_grad, jvp, vjp, linearize, jacfwd, jacrev, hessian,
hvp); derivatives are checked against central finite differences and closed forms written here.
An integer has no derivative: a typed error names the float to pass instead.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu


def f(x):
    return tf.sin(x) * x + x**3 / 3.0


def f_exact(x: float) -> tuple[float, float, float]:
    """f, f' and f'' in closed form."""
    return (
        math.sin(x) * x + x**3 / 3,
        math.cos(x) * x + math.sin(x) + x**2,
        -math.sin(x) * x + 2 * math.cos(x) + 2 * x,
    )


@settings(max_examples=30, deadline=None)
@given(x=st.floats(-3.0, 3.0))
def test_every_transform_takes_a_python_float(x):
    _, d1, d2 = f_exact(x)
    g = tidu.grad(f)(x)
    assert isinstance(g, tf.Tensor) and g.dtype == tf.float64 and g.shape == ()
    assert float(g) == pytest.approx(d1, abs=1e-12)
    h = 1e-6
    fd = (float(f(tf.asarray(x + h))) - float(f(tf.asarray(x - h)))) / (2 * h)
    assert float(g) == pytest.approx(fd, abs=1e-7)
    val, g2 = tidu.value_and_grad(f)(x)
    assert float(g2) == float(g)
    assert float(tidu.jvp(f, (x,), (1.0,))[1]) == pytest.approx(d1, abs=1e-12)
    assert float(tidu.vjp(f, x)[1](tf.asarray(1.0))[0]) == pytest.approx(d1, abs=1e-12)
    assert float(tidu.linearize(f, x)[1](2.0)) == pytest.approx(2 * d1, abs=1e-12)
    assert float(tidu.jacfwd(f)(x)) == pytest.approx(d1, abs=1e-12)
    assert float(tidu.jacrev(f)(x)) == pytest.approx(d1, abs=1e-12)
    assert float(tidu.hessian(f)(x)) == pytest.approx(d2, abs=1e-11)
    assert float(tidu.hvp(f, (x,), (1.0,))[0]) == pytest.approx(d2, abs=1e-11)


def test_several_arguments_and_mixed_kinds():
    def g(a, b, t):
        return a * b + tf.sum(t) * a

    t = tf.asarray(np.array([1.0, 2.0]))
    da, db, dt = tidu.grad(g, argnums=(0, 1, 2))(2.0, 5.0, t)
    assert (float(da), float(db)) == (8.0, 2.0)
    np.testing.assert_array_equal(np.asarray(dt), [2.0, 2.0])
    # a number that is not differentiated stays a number
    assert float(tidu.grad(lambda a, b: a * b)(2.0, 5)) == 5.0


def test_complex_and_numpy_scalars_keep_their_dtype():
    z = 1.0 + 2.0j
    g = tidu.grad(lambda w: tf.real(w * tf.conj(w)))(z)
    assert g.dtype == tf.complex128 and complex(g) == pytest.approx(2 - 4j)  # JAX convention: dL/dx - i dL/dy
    g32 = tidu.grad(lambda x: x * x)(np.float32(1.5))
    assert g32.dtype == tf.float32 and float(g32) == 3.0
    g64 = tidu.grad(lambda x: x * x)(np.float64(1.5))
    assert g64.dtype == tf.float64 and float(g64) == 3.0


@pytest.mark.parametrize("bad", [3, np.int64(3), True])
def test_an_integer_has_no_derivative(bad):
    # a Python int has no vector space; NumPy's integer scalars have one without tangents
    with pytest.raises((tidu.UnregisteredTypeError, tidu.NonDifferentiableError), match=r"integer"):
        tidu.grad(lambda x: x * x)(bad)
    with pytest.raises(tidu.TiduError):
        tidu.jvp(lambda x: x * x, (bad,), (1.0,))
