"""Compiled-mode defects a second review found (the eager call of the same function is the
oracle): a chain of a thousand adds passed Python's recursion limit, one quiet kernel switched off
NumPy's floating-point checks for the whole program, a jitted method did not bind its instance,
two outputs of one value shared a buffer, and a dict of mixed key kinds raised a raw TypeError."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import tenferro as tf
import tidu


def _chain(x, n):
    for _ in range(n):
        x = x + 1.0
    return x


def test_a_thousand_adds_compile():
    assert float(tf.jit(lambda x: _chain(x, 1500))(tf.asarray(0.0))) == 1500.0


def test_gradient_of_a_long_rnn_compiles():
    rng = np.random.default_rng(0)
    w = tf.asarray(0.1 * rng.normal(size=(3, 3)))
    xs = tf.asarray(rng.normal(size=(1200, 3)))

    def loss(w, xs):
        h = tf.zeros(3)
        for t in range(1200):
            h = tf.tanh(w @ h + xs[t])
        return tf.sum(h)

    eager = np.asarray(tidu.grad(loss)(w, xs))
    np.testing.assert_allclose(np.asarray(tf.jit(tidu.grad(loss))(w, xs)), eager, rtol=1e-12, atol=1e-15)


def test_errstate_raise_holds_outside_the_quiet_kernels():
    x = tf.asarray(np.array([np.inf, 1.0]))

    def g(x):
        return tf.sqrt(x + 1.0) + x * 0.0

    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError):
            g(x)
        with pytest.raises(FloatingPointError):
            tf.jit(g)(x)
        # the quiet kernel itself stays quiet, as eager: sqrt(-1) is NaN without an error
        y = tf.asarray(np.array([-2.0, 1.0]))
        np.testing.assert_array_equal(np.asarray(tf.jit(g)(y)), np.asarray(g(y)))


def test_jit_binds_as_a_method():
    class Model:
        def __init__(self):
            self.w = 2.0

        @functools.partial(tf.jit, static_argnums=0)
        def apply(self, x):
            return x * self.w

    np.testing.assert_array_equal(np.asarray(Model().apply(tf.asarray(np.arange(3.0)))), [0.0, 2.0, 4.0])
    assert isinstance(Model.__dict__["apply"].__get__(None, Model), type(Model.__dict__["apply"]))


def test_two_outputs_of_one_value_do_not_share_a_buffer():
    x = tf.asarray(np.arange(3.0))
    a, b = tf.jit(lambda x: (tf.exp(x), tf.exp(x)))(x)
    a.numpy()[0] = -1.0
    np.testing.assert_array_equal(np.asarray(b), np.exp(np.arange(3.0)))


def test_dict_keys_of_mixed_kinds_are_a_typed_error():
    d = {1: tf.asarray(1.0), "a": tf.asarray(2.0)}
    with pytest.raises(tidu.InvalidArgumentError, match="keys that sort"):
        tidu.grad(lambda d: tf.sum(d[1]) + tf.sum(d["a"]))(d)
    with pytest.raises(TypeError):  # also a TypeError, as the raw one was
        tidu.tree_flatten(d)
