"""``tidu.checkpoint`` inside a compiled function: staged as one ``checkpoint`` equation, so that
differentiating the compiled function (``grad(jit(f))``, ``linearize(jit(f))``) keeps only each
segment's input and recomputes the rest in the backward pass, as outside ``jit``. Before, the body
was inlined while tracing and every intermediate value of every segment was kept (a chain of 10
segments of 100 ``sin`` on 100,000 values: a peak of 1001 vectors under ``grad(jit(f))``, 110 now).
The staged equation composes with every transform: jvp, vmap, linear_transpose, nested jit.
Under ``vmap`` a checkpoint is staged the same way (batched as one equation), so
``grad(vmap(f))`` saves memory too (52 against 221 vectors of the batch before)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import tenferro as tf
import tidu
from tidu.testing import check_grads

N, SEGMENTS, SIZE = 200, 10, 20_000


def _chain(x, n):
    for _ in range(n):
        x = tf.sin(x)
    return x


_segment = tidu.checkpoint(lambda x: _chain(x, N // SEGMENTS))


def _checkpointed(x):
    for _ in range(SEGMENTS):
        x = _segment(x)
    return tf.sum(x)


def _plain(x):
    return tf.sum(_chain(x, N))


def _peak(fun, x) -> int:
    fun(x)  # compiled and split once
    tracemalloc.start()
    try:
        fun(x)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _hand_grad(x: np.ndarray, n: int) -> np.ndarray:
    g = np.ones_like(x)
    for _ in range(n):
        g = g * np.cos(x)
        x = np.sin(x)
    return g


@pytest.mark.cpu_only  # host memory, measured by tracemalloc; a device program's buffers are the device's
def test_grad_of_jit_keeps_only_the_segments_inputs():
    x = tf.asarray(np.linspace(0.2, 1.4, SIZE))
    vector = SIZE * 8
    plain = _peak(tidu.grad(tf.jit(_plain)), x)
    staged = _peak(tidu.grad(tf.jit(_checkpointed)), x)
    assert plain > 0.9 * N * vector  # every sin's input kept (the check that the measure works)
    assert staged < 3 * (SEGMENTS + N // SEGMENTS) * vector  # inputs, plus one segment recomputed
    g = np.asarray(tidu.grad(tf.jit(_checkpointed))(x))
    np.testing.assert_allclose(g, _hand_grad(np.asarray(x), N), rtol=1e-12)
    np.testing.assert_array_equal(g, np.asarray(tidu.grad(_checkpointed)(x)))


@pytest.mark.cpu_only  # host memory, measured by tracemalloc
def test_grad_of_vmap_keeps_only_the_segments_inputs():
    xs = tf.asarray(np.linspace(0.2, 1.4, 2 * SIZE).reshape(2, SIZE))
    batch = 2 * SIZE * 8
    plain = _peak(tidu.grad(lambda x: tf.sum(tidu.vmap(_plain)(x))), xs)
    staged = _peak(tidu.grad(lambda x: tf.sum(tidu.vmap(_checkpointed)(x))), xs)
    assert plain > 0.9 * N * batch
    assert staged < 3 * (SEGMENTS + N // SEGMENTS) * batch
    g = np.asarray(tidu.grad(lambda x: tf.sum(tidu.vmap(_checkpointed)(x)))(xs))
    np.testing.assert_allclose(g, _hand_grad(np.asarray(xs), N), rtol=1e-12)


def test_linearize_and_jvp_of_jit():
    x = np.linspace(0.2, 1.4, 7)
    t = np.linspace(-1.0, 1.0, 7)
    want = float(np.sum(_hand_grad(x, N) * t))
    _, lin = tidu.linearize(tf.jit(_checkpointed), tf.asarray(x))
    np.testing.assert_allclose(float(lin(tf.asarray(t))), want, rtol=1e-12)
    _, tangent = tidu.jvp(tf.jit(_checkpointed), (tf.asarray(x),), (tf.asarray(t),))
    np.testing.assert_allclose(float(tangent), want, rtol=1e-12)


def test_vmap_of_jit_and_jit_of_vmap_of_grad():
    xs = np.stack([np.linspace(0.2, 1.4, 5), np.linspace(-0.3, 0.9, 5)])
    want = np.stack([_hand_grad(x, N) for x in xs])
    batched = tidu.vmap(tidu.grad(tf.jit(_checkpointed)))(tf.asarray(xs))
    np.testing.assert_allclose(np.asarray(batched), want, rtol=1e-12)
    staged = tf.jit(tidu.vmap(tidu.grad(_checkpointed)))(tf.asarray(xs))
    np.testing.assert_allclose(np.asarray(staged), want, rtol=1e-12)
    values = tidu.vmap(tf.jit(_checkpointed))(tf.asarray(xs))
    np.testing.assert_allclose(np.asarray(values), [np.sum(_np_chain(x, N)) for x in xs], rtol=1e-12)


def _np_chain(x, n):
    for _ in range(n):
        x = np.sin(x)
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_derivatives_to_second_order(dtype):
    seg = tidu.checkpoint(lambda x, y: tf.sin(x) * y + tf.exp(x * 0.3))
    x = np.linspace(0.1, 0.7, 4).astype(dtype)
    y = np.linspace(-0.5, 0.5, 4).astype(dtype)
    if dtype == np.complex128:
        x, y = x + 0.2j, y - 0.1j
    check_grads(tf.jit(lambda x, y: seg(seg(x, y), y)), (tf.asarray(x), tf.asarray(y)), order=2, modes=("fwd", "rev"))


def test_linear_transpose_of_a_compiled_checkpointed_linear_function():
    a = tf.asarray(np.array([0.5, -1.5, 2.0]))
    seg = tidu.checkpoint(lambda v: a * v + 2.0 * v)
    x, ct = tf.asarray(np.ones(3)), tf.asarray(np.array([1.0, 2.0, 3.0]))
    (got,) = tidu.linear_transpose(tf.jit(lambda v: seg(seg(v))), x)(ct)
    want = (np.asarray(a) + 2.0) ** 2 * np.asarray(ct)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15)
