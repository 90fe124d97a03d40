"""Issue 9: calls that used to return a silently wrong value now raise typed errors."""

import numpy as np
import pytest

import tidu
import tenferro as tf

X3 = tf.asarray([1.0, 2.0, 3.0])


# ---- duplicate argnums: an error, as in JAX ------------------------------------------
@pytest.mark.parametrize("transform", [tidu.grad, tidu.value_and_grad, tidu.jacfwd, tidu.jacrev, tidu.hessian])
def test_duplicate_argnums_raise(transform):
    f = lambda x, y: tf.sum(x * x * y)  # noqa: E731
    with pytest.raises(tidu.TiduError, match=r"argnums \(0, 0\).*repeats argument 0"):
        transform(f, argnums=(0, 0))(X3, X3)
    with pytest.raises(tidu.TiduError, match="repeats argument 1"):
        transform(f, argnums=(1, -1))(X3, X3)


@pytest.mark.parametrize("argnums", ["a", 1.5, None, (0, "a"), True])
def test_argnums_of_the_wrong_type(argnums):
    with pytest.raises(tidu.TiduError, match="argnums must be an int or a tuple of ints"):
        tidu.grad(lambda x: tf.sum(x), argnums=argnums)(X3)


# ---- conversions of a value being differentiated ---------------------------------------
@pytest.mark.parametrize(
    "convert",
    [
        lambda v: float(v[0]),
        lambda v: complex(v[0]),
        lambda v: int(v[0]),
        lambda v: v[0].item(),
        lambda v: v.tolist(),
        lambda v: v.numpy(),
    ],
    ids=["float", "complex", "int", "item", "tolist", "numpy"],
)
@pytest.mark.parametrize("transform", ["grad", "jvp", "jacrev", "jacfwd"])
def test_conversion_of_a_traced_value_raises(convert, transform):
    f = lambda x: tf.sum(x) * convert(x)  # noqa: E731  (converted value would be a constant)
    g = {
        "grad": lambda: tidu.grad(lambda x: tf.sum(x) * float(np.real(np.sum(convert(x)))))(X3),
        "jvp": lambda: tidu.jvp(f, (X3,), (X3,)),
        "jacrev": lambda: tidu.jacrev(f)(X3),
        "jacfwd": lambda: tidu.jacfwd(f)(X3),
    }[transform]
    with pytest.raises(tidu.TracerConversionError, match="tidu.stop_gradient"):
        g()


def test_the_documented_wrong_gradient_is_now_an_error_and_stop_gradient_works():
    with pytest.raises(tidu.TracerConversionError, match="stop_gradient"):
        tidu.grad(lambda x: tf.sum(x) * float(x[0]))(X3)
    g = tidu.grad(lambda x: tf.sum(x) * float(tidu.stop_gradient(x)[0]))(X3)
    assert g.tolist() == [1.0, 1.0, 1.0]  # the stated constant: derivative dropped on purpose
    g = tidu.grad(lambda x: tf.sum(x) * x[0])(X3)
    assert g.tolist() == [7.0, 1.0, 1.0]


def test_control_flow_on_comparisons_stays_allowed():
    def f(x):
        return tf.sum(x * x) if bool(tf.sum(x) > 0) else tf.sum(x)

    assert tidu.grad(f)(X3).tolist() == [2.0, 4.0, 6.0]
    _, t = tidu.jvp(lambda x: x * 2.0 if bool(x[0] > 0) else x, (X3,), (X3,))
    assert t.tolist() == [2.0, 4.0, 6.0]
    # integer values carry no derivative: converting them is fine
    assert tidu.grad(lambda x: x[int(tf.cast(x[2], tf.int64)) - 1])(X3).tolist() == [0.0, 0.0, 1.0]
    assert tidu.grad(lambda x: x[tf.cast(x[1], tf.int64)])(X3).tolist() == [0.0, 0.0, 1.0]
