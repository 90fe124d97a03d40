"""The layered dispatcher (reduce rules, kernels, counted fallback with its policies),
typed errors, the tenferro protocol method called directly, AD through pytree nodes,
and the memory test: a diagonal times a tall dense matrix never builds n x n."""

from __future__ import annotations

import gc
import tracemalloc
import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import (
    BlockDiagonal,
    DensifyError,
    DiagonalTensor,
    SquareBlockError,
    StructuredError,
    StructuredFallbackWarning,
    StructuredShapeError,
    Tensor4allError,
    TilingError,
)
from tensor4all.structured._dispatch import REDUCE_RULES  # internal: the tests read the rule table itself


def vec(*xs):
    return tf.asarray(np.array(xs, dtype=float))


def mat(rng, m, n):
    return tf.asarray(rng.standard_normal((m, n)))


@pytest.fixture(autouse=True)
def _clean_stats():
    t4a.reset_fallback_stats()
    yield
    t4a.reset_fallback_stats()


def test_common_api():
    d = DiagonalTensor(vec(1, 2, 3))
    assert d.shape == (3, 3) and d.ndim == 2 and d.dtype == tf.float64 and str(d.placement) == "cpu"
    assert "DiagonalTensor(diag=" in repr(d)
    b = BlockDiagonal([np.ones((2, 1)), np.ones((0, 2)), np.ones((1, 1))])
    assert b.shape == (3, 4) and b.tiling == t4a.TiledShape([2, 0, 1], [1, 2, 1])
    assert b.block_shapes.size == 3 and "TiledShape" in repr(b)
    d3 = DiagonalTensor(vec(1, 2), ndim=3)
    dense3 = np.asarray(d3.to_dense())
    assert dense3.shape == (2, 2, 2) and dense3[1, 1, 1] == 2 and dense3.sum() == 3
    x = tf.asarray(np.arange(2.0))
    np.testing.assert_allclose(np.asarray(t4a.einsum("ijk,k->ij", d3, x)), np.einsum("ijk,k->ij", dense3, x))
    with pytest.raises(StructuredShapeError, match="1-d"):
        DiagonalTensor(np.ones((2, 2)))
    with pytest.raises(StructuredError, match="2-d"):
        BlockDiagonal([np.ones(3)])


def test_reduce_rules_read_no_data():
    d = DiagonalTensor(vec(1, 2))
    assert d.T is d and d.conj() is d and d.real is d and d.transpose((1, 0)) is d
    assert np.all(np.asarray(d.imag.diag) == 0)
    assert isinstance(d @ d, DiagonalTensor) and isinstance(t4a.einsum("ij,jk->ik", d, d), DiagonalTensor)
    assert d.sum(1) is d.diag
    assert {op for op in REDUCE_RULES} >= {"transpose", "conj", "matmul", "sum", "trace"}
    assert t4a.fallback_stats() == {}


def test_structured_results():
    rng = np.random.default_rng(0)
    b = BlockDiagonal([mat(rng, 2, 2), mat(rng, 3, 3)])
    assert isinstance(b @ b, BlockDiagonal) and isinstance(b + b, BlockDiagonal) and isinstance(b.T, BlockDiagonal)
    u, s, vh = t4a.linalg.svd(b)
    assert isinstance(u, BlockDiagonal) and isinstance(vh, BlockDiagonal) and s.shape == (5,)
    q, r = t4a.linalg.qr(b)
    assert isinstance(q, BlockDiagonal) and isinstance(r, BlockDiagonal)
    assert isinstance(t4a.linalg.inv(b), BlockDiagonal) and isinstance(t4a.linalg.expm(b), BlockDiagonal)
    d = DiagonalTensor(vec(1, -2))
    assert all(isinstance(f, DiagonalTensor) for f in (t4a.linalg.inv(d), t4a.linalg.expm(d), 2 * d, d / 2, -d))
    assert t4a.fallback_stats() == {}


def test_fallback_is_counted_and_densifies_only_what_lacks_a_kernel(monkeypatch):
    rng = np.random.default_rng(1)
    b = BlockDiagonal([mat(rng, 2, 2), mat(rng, 1, 1)])
    c = BlockDiagonal([mat(rng, 1, 1), mat(rng, 2, 2)])
    d = DiagonalTensor(vec(1, 2, 3))
    want = np.asarray(b) @ np.asarray(c) * np.array([1, 2, 3])
    calls = []
    monkeypatch.setattr(DiagonalTensor, "to_dense", lambda self: calls.append(1) or tf.zeros((3, 3)))
    out = t4a.einsum("ij,jk,kl->il", b, c, d)  # two block-diagonals: no kernel
    np.testing.assert_allclose(np.asarray(out), want)
    assert calls == []  # the block-diagonals were densified; the diagonal stayed a hyper-edge operand
    t4a.einsum("ij,jk,kl->il", b, c, d)
    assert t4a.fallback_stats() == {("einsum", ("BlockDiagonal", "DiagonalTensor")): 2}
    t4a.einsum("ij,jk->ik", b, d)  # one block-diagonal: block kernel, no fallback
    t4a.linalg.norm(b, ord=2)
    assert t4a.fallback_stats()[("norm", ("BlockDiagonal",))] == 1
    assert len(t4a.fallback_stats()) == 2


def test_fallback_policies():
    b = BlockDiagonal([np.eye(2), np.eye(1)])
    with t4a.fallback_policy("warn"):
        with pytest.warns(StructuredFallbackWarning, match="norm"):
            t4a.linalg.norm(b, ord=2)
    with t4a.fallback_policy("error"):
        with pytest.raises(DensifyError, match=r"norm\(BlockDiagonal\(tiling=TiledShape\(\[2, 1\], \[2, 1\]\)"):
            t4a.linalg.norm(b, ord=2)
        t4a.linalg.norm(b)  # has a kernel: allowed
    assert t4a.get_fallback_policy() == "count"
    with pytest.raises(StructuredError, match="policy"):
        t4a.set_fallback_policy("sometimes")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t4a.linalg.norm(b, ord=2)  # default policy counts silently


def test_typed_errors_name_operands_and_structures():
    rng = np.random.default_rng(2)
    a = BlockDiagonal([mat(rng, 2, 2), mat(rng, 1, 1)])
    c = BlockDiagonal([mat(rng, 1, 1), mat(rng, 2, 2)])
    with pytest.raises(TilingError, match=r"\[2, 1\] and \[1, 2\].*BlockDiagonal"):
        a @ c
    with pytest.raises(TilingError):
        a + c
    with pytest.raises(StructuredShapeError, match="inner extents 3 and 4"):
        DiagonalTensor(vec(1, 2, 3)) @ mat(rng, 4, 2)
    with pytest.raises(StructuredShapeError, match="extents 3 and 4"):
        a @ BlockDiagonal([mat(rng, 4, 1)])
    nonsq = BlockDiagonal([mat(rng, 1, 2), mat(rng, 2, 2)])  # 3 x 4: no square matrix
    for f in (t4a.linalg.det, t4a.linalg.inv, t4a.linalg.eigh, t4a.linalg.expm, t4a.linalg.slogdet):
        with pytest.raises(SquareBlockError, match=r"not square, and block\(s\) \[0\]"):
            f(nonsq)
    with pytest.raises(StructuredShapeError, match="different extents"):
        t4a.einsum("ij,jk->ik", DiagonalTensor(vec(1, 2)), mat(rng, 3, 3))
    for err in (TilingError, SquareBlockError, DensifyError, StructuredShapeError):
        assert issubclass(err, StructuredError) and issubclass(err, Tensor4allError)


def test_protocol_method_directly():
    rng = np.random.default_rng(3)
    d = DiagonalTensor(vec(1, 2, 3))
    x = mat(rng, 3, 2)
    out = DiagonalTensor.__tenferro_function__(d, tf.einsum, (DiagonalTensor,), ("ij,jk->ik", d, x), {})
    np.testing.assert_allclose(np.asarray(out), np.asarray(d.to_dense()) @ np.asarray(x))
    out = DiagonalTensor.__tenferro_function__(d, tf.matmul, (DiagonalTensor,), (x.T, d), {})
    np.testing.assert_allclose(np.asarray(out), np.asarray(x).T @ np.asarray(d.to_dense()))
    u, s, vh = DiagonalTensor.__tenferro_function__(d, tf.linalg.svd, (DiagonalTensor,), (d,), {})
    assert isinstance(u, DiagonalTensor)
    assert DiagonalTensor.__tenferro_function__(d, tf.add, (DiagonalTensor,), (d, d), {}).diag.tolist() == [2, 4, 6]
    assert DiagonalTensor.__tenferro_function__(d, tf.exp, (DiagonalTensor,), (d,), {}) is NotImplemented
    b = BlockDiagonal([np.eye(2)])
    assert float(BlockDiagonal.__tenferro_function__(b, tf.linalg.det, (BlockDiagonal,), (b,), {})) == 1.0


def test_grad_returns_the_structure():
    rng = np.random.default_rng(4)
    d = DiagonalTensor(tf.asarray(rng.standard_normal(4)))
    x = mat(rng, 4, 3)
    g = tidu.grad(lambda d: tf.sum(tf.sin(d @ x)))(d)
    assert isinstance(g, DiagonalTensor)
    gd = tidu.grad(lambda a: tf.sum(tf.sin(a @ x)))(d.to_dense())
    np.testing.assert_allclose(np.asarray(g.diag), np.diagonal(np.asarray(gd)))
    b = BlockDiagonal([mat(rng, 2, 2), mat(rng, 2, 2)])
    gb = tidu.grad(lambda b: t4a.linalg.slogdet(b)[1])(b)
    assert isinstance(gb, BlockDiagonal) and len(gb.blocks) == 2
    _, tangent = tidu.jvp(lambda b: t4a.linalg.det(b @ b), (b,), (b,))
    assert np.isfinite(float(tangent))
    h = tidu.hessian(lambda v: t4a.linalg.det(DiagonalTensor(v)))(tf.asarray(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(np.asarray(h), [[0, 3, 2], [3, 0, 1], [2, 1, 0]])


def _peak(f):
    gc.collect()
    tracemalloc.start()
    try:
        f()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_diagonal_matmul_never_allocates_n_by_n():
    n = 20000
    rng = np.random.default_rng(5)
    d = DiagonalTensor(tf.asarray(rng.standard_normal(n)))
    x = tf.asarray(rng.standard_normal((n, 8)))
    dense_bytes = n * n * 8
    fwd = _peak(lambda: d @ x)
    grad = _peak(lambda: tidu.grad(lambda d, x: tf.sum(tf.sin(d @ x)), argnums=(0, 1))(d, x))
    # one n x 8 float64 array is 1.28 MB; n x n would be 3.2 GB
    assert fwd < 16e6 and grad < 64e6, (fwd, grad)
    assert max(fwd, grad) < dense_bytes / 50
