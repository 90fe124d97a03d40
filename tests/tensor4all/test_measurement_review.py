"""Defects a review of the measurements found (each test fails on the code before the fix).

Oracles: the state vector contracted here with NumPy, and the same measurement of a freshly
built state."""

from __future__ import annotations

import numpy as np
import pytest
import tenferro as tf
import tidu

import tensor4all as t4
from tensor4all import NotDifferentiableError


def _vector(psi: t4.MPS) -> np.ndarray:
    v = np.ones((1, 1))
    for a in psi.dense().tensors if psi.symmetric else psi.tensors:
        a = np.asarray(a)
        v = np.tensordot(v, a, axes=(v.ndim - 1, 0))
    return v.reshape(-1)


def _entropy(v: np.ndarray, L: int, bond: int) -> float:
    s = np.linalg.svd(v.reshape(2 ** (bond + 1), 2 ** (L - bond - 1)), compute_uv=False)
    p = (s / np.linalg.norm(s)) ** 2
    p = p[p > 1e-300]
    return float(-(p * np.log(p)).sum())


def test_entanglement_spectrum_is_the_callers_copy():
    """Squaring the returned Schmidt values in place changed every later entropy of the state."""
    psi = t4.MPS.random(6, 2, bond_dim=4, seed=3, conserve="Sz", charge=0)
    before = psi.entanglement_entropy()
    for s in psi.entanglement_spectrum(2).values():
        s **= 2
    after = psi.entanglement_entropy()
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-14)
    np.testing.assert_allclose(after[2], _entropy(_vector(psi), 6, 2), atol=1e-12)
    held = next(iter(psi.schmidt_form().values[2].values()))
    with pytest.raises(ValueError):
        held[:] = 0.0  # the cached form is read-only


def test_state_does_not_share_the_callers_arrays():
    """MPS(arrays) kept the caller's buffers: a later write into them changed to_dense() but not
    the cached form that expect reads."""
    sites = [np.array([1.0, 0.0]).reshape(1, 2, 1) for _ in range(3)]
    psi = t4.MPS(sites)
    assert float(psi.expect("Sz", 0)) == pytest.approx(0.5)
    sites[0][0, :, 0] = [0.0, 1.0]
    np.testing.assert_array_equal(_vector(psi), np.eye(8)[0])
    assert float(psi.expect("Sz", 0)) == pytest.approx(0.5)
    assert float(t4.MPS(sites).expect("Sz", 0)) == pytest.approx(-0.5)


def test_traced_operator_is_not_differentiable_error():
    """A traced operator matrix was re-wrapped as a generic 'is not an array' type error."""
    psi = t4.MPS.random(4, 2, bond_dim=2, seed=1)
    sz = tf.asarray(np.diag([0.5, -0.5]))
    with pytest.raises(NotDifferentiableError, match="not differentiable") as info:
        tidu.grad(lambda h: tf.real(psi.expect(h * sz, 1)))(tf.asarray(1.0))
    assert "is not an array" not in str(info.value)
