"""tenferro's public functions given structured operands dispatch through
``__tenferro_function__`` to the structured dispatcher (tenferro never imports
tensor4all); results equal the dense computation and keep the structure."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import BlockDiagonal, DiagonalTensor


@pytest.fixture
def ops():
    rng = np.random.default_rng(0)
    d = DiagonalTensor(tf.asarray(rng.standard_normal(4) + 3))
    b = BlockDiagonal(
        [
            tf.asarray(rng.standard_normal((2, 2)) + 3 * np.eye(2)),
            tf.asarray(rng.standard_normal((2, 2)) + 3 * np.eye(2)),
        ]
    )
    x = tf.asarray(rng.standard_normal((4, 4)))
    return d, b, x


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


def test_einsum_keeps_diagonals_on_hyper_edges(ops):
    d, _, x = ops
    t4a.reset_fallback_stats()
    close(tf.einsum("ik,kl,lj->ij", x, d, x), np.asarray(x) @ np.asarray(d) @ np.asarray(x))
    assert isinstance(tf.einsum("ij,jk->ik", d, d), DiagonalTensor)
    assert t4a.fallback_stats() == {}


def test_operators_and_arithmetic(ops):
    d, b, x = ops
    xd, dd, bd = np.asarray(x), np.asarray(d), np.asarray(b)
    close(x @ d, xd @ dd)
    close(tf.matmul(x, b), xd @ bd)
    close(x + d, xd + dd)
    close(x - b, xd - bd)
    assert isinstance(x * d, DiagonalTensor) and isinstance(tf.multiply(d, 2.0), DiagonalTensor)
    close(tf.multiply(x, d), xd * dd)
    assert isinstance(tf.add(d, d), DiagonalTensor) and isinstance(tf.subtract(b, b), BlockDiagonal)
    assert isinstance(tf.divide(b, 2.0), BlockDiagonal) and isinstance(tf.negative(d), DiagonalTensor)
    assert tf.transpose(d) is d and tf.conj(d) is d and tf.real(d) is d
    assert isinstance(tf.imag(b), BlockDiagonal)
    close(tf.sum(b), bd.sum())
    close(tf.trace(d), np.trace(dd))


def test_linalg_functions(ops):
    d, b, _ = ops
    bd = np.asarray(b)
    u, s, vh = tf.linalg.svd(b)
    assert isinstance(u, BlockDiagonal)
    close(np.sort(np.asarray(s)), np.sort(np.linalg.svd(bd, compute_uv=False)))
    q, r = tf.linalg.qr(b)
    close(q @ r, bd)
    w, v = tf.linalg.eigh(BlockDiagonal([bb + bb.T for bb in b.blocks]))
    assert isinstance(v, BlockDiagonal)
    assert isinstance(tf.linalg.inv(b), BlockDiagonal)
    close(tf.linalg.solve(b, tf.ones((4,))), np.linalg.solve(bd, np.ones(4)))
    close(tf.linalg.det(d), np.linalg.det(np.asarray(d)))
    close(tf.linalg.slogdet(b)[1], np.linalg.slogdet(bd)[1])
    close(tf.linalg.norm(b), np.linalg.norm(bd))
    assert isinstance(tf.linalg.expm(d), DiagonalTensor)


def test_gradients_through_tenferro_namespace(ops):
    d, _, x = ops
    g = tidu.grad(lambda d: tf.sum(tf.einsum("ij,jk->ik", x, d)))(d)
    assert isinstance(g, DiagonalTensor)
    close(g.diag, np.asarray(x).sum(axis=0))


def test_unhandled_function_raises_tenferro_type_error(ops):
    d, _, _ = ops
    with pytest.raises(tf.TenferroTypeError, match="DiagonalTensor"):
        tf.exp(d)
