"""``python -m tenferro``: a short demo that differentiates a small tensor function
with tidu and verifies the derivatives (finite differences and the dot-product
test, to second order, in float64 and complex128)."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tidu
from tidu.testing import check_grads


def main() -> None:
    W = tf.random.normal(0, (4, 4)) * 0.5
    x = tf.random.normal(1, (4,))

    def loss(W, x):
        h = x
        for _ in range(3):
            h = tf.tanh(W @ h) + h
        return tf.sum(h * h)

    value, g = tidu.value_and_grad(loss)(W, x)
    print("loss(W, x)          =", float(value))
    print("d loss / d W        =\n", np.round(g.numpy(), 6))
    check_grads(loss, (W, x), order=2)
    print("check_grads(loss, order=2, fwd+rev, float64): ok")

    z = tf.random.normal(2, (3,), dtype=tf.complex128)
    zloss = lambda z: tf.sum(tf.real(z * tf.conj(z)) * tf.abs(tf.sin(z)))  # noqa: E731
    check_grads(zloss, (z,), order=2)
    print("grad of a real loss of complex z    =", np.round(tidu.grad(zloss)(z).numpy(), 6))
    print("check_grads(complex loss, order=2, fwd+rev, complex128): ok")
    print(tidu.make_graph(loss, W, x).simplify())


if __name__ == "__main__":
    main()
