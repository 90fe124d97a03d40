"""The ``__tenferro_function__`` protocol: foreign operand types (structured
tensors, in tensor4all) take over the tenferro functions they are passed to."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu


class Scaled:
    """A toy structured type: ``factor * base``, kept unevaluated."""

    def __init__(self, base, factor):
        self.base, self.factor = base, factor
        self.calls = []

    def to_dense(self):
        return self.base * self.factor

    def __tenferro_function__(self, func, types, args, kwargs):
        self.calls.append((func, types))
        if func is tf.matmul:
            a, b = args
            if isinstance(a, Scaled):
                return tf.matmul(a.base, b) * a.factor
            return tf.matmul(a, b.base) * b.factor
        if func is tf.add or func is tf.einsum or func is tf.linalg.svdvals:
            dense = [x.to_dense() if isinstance(x, Scaled) else x for x in args]
            return func(*dense, **kwargs)
        return NotImplemented


def test_public_functions_and_operators_dispatch():
    a = tf.asarray(np.arange(6.0).reshape(2, 3))
    s = Scaled(tf.asarray(np.ones((3, 3))), 2.0)
    np.testing.assert_allclose(np.asarray(tf.matmul(a, s)), np.arange(6.0).reshape(2, 3) @ np.full((3, 3), 2.0))
    np.testing.assert_allclose(np.asarray(a @ s), np.asarray(tf.matmul(a, s)))  # operator -> tf.matmul
    assert s.calls[0] == (tf.matmul, (Scaled,))
    np.testing.assert_allclose(np.asarray(tf.einsum("ij,jk->ik", a, s)), np.asarray(tf.matmul(a, s)))
    np.testing.assert_allclose(np.asarray(tf.asarray(np.ones((3, 3))) + s), np.full((3, 3), 3.0))
    np.testing.assert_allclose(
        np.asarray(tf.linalg.svdvals(s)), np.linalg.svd(np.full((3, 3), 2.0), compute_uv=False), atol=1e-12
    )


def test_declined_and_non_dispatching_functions_raise_typed_errors():
    s = Scaled(tf.ones((2, 2)), 3.0)
    with pytest.raises(tf.TenferroTypeError, match=r"transpose: no implementation for operands of types Scaled"):
        tf.transpose(s)  # dispatches, but the type declines
    with pytest.raises(tf.ForeignOperandError, match=r"exp: got an operand of type Scaled.*to_dense"):
        tf.exp(s)  # does not dispatch at all


def test_dispatch_is_differentiable_through_the_handler():
    s_base = tf.asarray(np.eye(3))

    def f(x):
        return tf.sum(tf.matmul(x, Scaled(s_base, 5.0)))

    g = tidu.grad(f)(tf.ones((2, 3)))
    np.testing.assert_allclose(np.asarray(g), np.full((2, 3), 5.0))
