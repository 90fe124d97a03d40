"""GPU placement facts that the device runs of the other tenferro tests do not
state: no hidden device-to-host copies in a gradient, mixed placements refused,
scalars and random tensors made on the device, missing CuPy routines named.

Marked ``gpu``: run with ``pytest --placement gpu`` (a real GPU) or
``--placement fakegpu`` (the CPU stand-in, which counts and refuses host copies
the same way); skipped on a plain CPU run.
"""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu
from tenferro.linalg import _device

pytestmark = pytest.mark.gpu


@pytest.fixture
def cupy():
    import cupy

    return cupy


def _no_sync():
    """A context in which any device-to-host copy (or other synchronization)
    raises ``cupyx.DeviceSynchronized``."""
    import cupyx

    return cupyx.allow_synchronize(False)


def _mps_energy(tensors, mpo):
    """<psi|H|psi> / <psi|psi> of an open MPS (site tensors [l, p, r]) and MPO ([l, r, p, p'])."""
    L = len(tensors)
    env = tf.ones((1, 1, 1), tensors[0].dtype, placement=tensors[0].placement)
    norm = tf.ones((1, 1), tensors[0].dtype, placement=tensors[0].placement)
    for i in range(L):
        a = tensors[i]
        env = tf.einsum("xwy,xpa,wbpq,yqc->abc", env, tf.conj(a), mpo[i], a)
        norm = tf.einsum("xy,xpa,ypc->ac", norm, tf.conj(a), a)
    return tf.real(tf.sum(env)) / tf.real(tf.sum(norm))


def _random_mps(L, d, chi, dtype="float64"):
    dims = [1] + [chi] * (L - 1) + [1]
    return [tf.random.normal(10 + i, (dims[i], d, dims[i + 1]), dtype) for i in range(L)]


def _heisenberg_mpo(L):
    sz = np.diag([0.5, -0.5])
    sp = np.array([[0.0, 1.0], [0.0, 0.0]])
    sm = sp.T
    eye = np.eye(2)
    w = np.zeros((5, 5, 2, 2))
    w[0, 0] = w[4, 4] = eye
    w[1, 0], w[2, 0], w[3, 0] = sp, sm, sz
    w[4, 1], w[4, 2], w[4, 3] = 0.5 * sm, 0.5 * sp, sz
    first, last = w[4:5], w[:, 0:1]
    return [tf.asarray(first if i == 0 else last if i == L - 1 else w) for i in range(L)]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_mps_energy_gradient_copies_nothing_to_the_host(dtype):
    psi, mpo = _random_mps(6, 2, 8, dtype), _heisenberg_mpo(6)
    assert all(t.placement == tf.gpu(0) for t in psi + mpo)
    with _no_sync():  # any device-to-host copy in here raises
        energy, grads = tidu.value_and_grad(lambda ts: _mps_energy(ts, mpo))(psi)
    assert all(g.placement == tf.gpu(0) for g in grads)
    # the values: against the same computation on the CPU
    cpu_energy, cpu_grads = tidu.value_and_grad(lambda ts: _mps_energy(ts, [m.to_cpu() for m in mpo]))(
        [t.to_cpu() for t in psi]
    )
    assert abs(float(energy) - float(cpu_energy)) < 1e-10
    for g, c in zip(grads, cpu_grads):
        np.testing.assert_allclose(g.numpy(), c.numpy(), atol=1e-10)


def test_elementwise_gradient_and_scalars_copy_nothing_to_the_host():
    W = tf.random.normal(0, (8, 8))
    x = tf.random.normal(1, (8,))

    def loss(W):
        h = x
        for _ in range(5):
            h = tf.tanh(W @ h) * 0.5 + h - 1.0  # Python scalars: kernel arguments, no transfer
        return tf.sum(h * h)

    with _no_sync():
        value, dW = tidu.value_and_grad(loss)(W)
        hvp = tidu.jvp(tidu.grad(loss), (W,), (tf.ones_like(W),))[1]
    assert value.placement == dW.placement == hvp.placement == tf.gpu(0)
    assert np.isfinite(float(value))


def test_mixed_placements_raise_placement_error():
    g = tf.ones((3, 3))
    c = tf.ones((3, 3), placement=tf.CPU)
    assert g.placement == tf.gpu(0) and c.placement == tf.CPU
    calls = [
        ("add", lambda: g + c),
        ("matmul", lambda: g @ c),
        ("tensordot", lambda: tf.tensordot(g, c, 1)),
        ("einsum", lambda: tf.einsum("ij,jk->ik", g, c)),
        ("concatenate", lambda: tf.concatenate([g, c])),
        ("where", lambda: tf.where(g > 0, g, c)),
        ("solve", lambda: tf.linalg.solve(g + 3 * tf.eye(3), c)),
    ]
    for op, call in calls:
        with pytest.raises(tf.PlacementError, match=op):
            call()


def test_creation_and_random_on_the_device(cupy):
    for t in (
        tf.zeros((2, 3)),
        tf.ones(4),
        tf.eye(3),
        tf.full((2,), 7.0),
        tf.arange(5),
        tf.linspace(0, 1, 5),
        tf.random.normal(3, (4, 5)),
        tf.random.uniform(3, (2,), "complex128"),
        tf.random.randint(3, (6,), 10),
    ):
        assert t.placement == tf.gpu(0) and isinstance(t._data, cupy.ndarray) and t.is_contiguous
    a, b = tf.random.normal(7, (50,)), tf.random.normal(7, (50,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # deterministic per seed
    assert abs(float(tf.mean(tf.random.normal(1, (20000,))))) < 0.05
    with tf.default_placement(tf.CPU):
        assert tf.zeros(2).placement == tf.CPU
    assert tf.zeros(2).placement == tf.gpu(0)
    assert tf.random.normal(0, (2,), placement=tf.CPU).placement == tf.CPU


def test_missing_device_routine_is_named():
    with pytest.raises(tf.UnsupportedOnDeviceError, match="cupy.linalg.no_such_routine"):
        _device.routine("frobnicate", "cupy.linalg", "no_such_routine")
    assert issubclass(tf.UnsupportedOnDeviceError, tf.PlacementError)


def test_expm_frechet_on_the_device_matches_the_cpu():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4, 2)) * 3
    e = rng.standard_normal((4, 4, 2)) * 1e6  # scaled direction: the result is linear in it
    got = tf.linalg.expm_frechet(tf.asarray(a), tf.asarray(e))
    want = tf.linalg.expm_frechet(tf.asarray(a, placement=tf.CPU), tf.asarray(e, placement=tf.CPU))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-9 * np.abs(want.numpy()).max())
