"""Structured-tensor defects a second review found: the symmetric einsum ignored ``optimize`` and
``memory_limit`` (even invalid values), a block-diagonal transpose with negative axes densified,
and linalg refused a diagonal of three legs where the documented dense fallback applies. Oracle:
NumPy on the dense arrays."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
import tensor4all.linalg as sl
from tensor4all.structured import BlockDiagonal, DiagonalTensor, Leg, SymmetricTensor, U1
from tenferro.einsum import EinsumOptimizeError
from tensor4all.structured._errors import StructuredValueError


def _pair() -> tuple[SymmetricTensor, SymmetricTensor]:
    v = Leg(U1(), {-1: 2, 0: 1, 1: 2})
    return SymmetricTensor.random([v, v.dual()], seed=1), SymmetricTensor.random([v, v.dual()], seed=2)


def test_symmetric_einsum_checks_optimize():
    a, c = _pair()
    with pytest.raises(EinsumOptimizeError, match="bogus"):
        t4a.einsum("ab,bc->ac", a, c, optimize="bogus")


@pytest.mark.parametrize("limit", [-1, 1, 10**9])
def test_symmetric_einsum_refuses_memory_limit(limit):
    a, c = _pair()
    with pytest.raises(StructuredValueError, match="memory_limit is not supported for symmetric operands"):
        t4a.einsum("ab,bc->ac", a, c, memory_limit=limit)


@pytest.mark.parametrize("optimize", ["auto", "greedy", "optimal", False, [(2, 3), (0, 1), (0, 1)]])
def test_symmetric_einsum_follows_the_path(optimize):
    v, w = Leg(U1(), {-1: 2, 0: 1, 1: 2}), Leg(U1(), {0: 3, 1: 2})
    a = SymmetricTensor.random([v, v.dual(), w], seed=1)
    c = SymmetricTensor.random([v, v.dual()], seed=2)
    e = SymmetricTensor.random([w.dual(), v, v.dual()], seed=3)
    r = t4a.einsum("abx,bc,xcd,de->ae", a, c, e, c, optimize=optimize)
    assert isinstance(r, SymmetricTensor)
    dense = [np.asarray(x.to_dense()) for x in (a, c, e, c)]
    np.testing.assert_allclose(np.asarray(r.to_dense()), np.einsum("abx,bc,xcd,de->ae", *dense), atol=1e-13)


@pytest.mark.parametrize("axes", [(1, 0), (-1, 0), (1, -2), (-1, -2)])
def test_block_transpose_any_spelling_stays_block_diagonal(axes):
    b = BlockDiagonal([tf.asarray(np.array([[1.0, 2.0], [3.0, 4.0]])), tf.asarray(np.eye(1))])
    with t4a.fallback_policy("error"):
        t = b.transpose(axes)
        assert b.transpose((0, -1)) is b and b.transpose((-2, 1)) is b
    assert isinstance(t, BlockDiagonal)
    np.testing.assert_array_equal(np.asarray(t.to_dense()), np.asarray(b.to_dense()).T)


@pytest.mark.parametrize("op", ["det", "slogdet", "expm", "svd", "qr", "eigh"])
def test_diagonal_of_three_legs_falls_back_to_dense(op):
    d3 = DiagonalTensor(tf.asarray(np.array([1.0, 2.0, 3.0])), 3)
    got = getattr(sl, op)(d3)
    want = getattr(tf.linalg, op)(d3.to_dense())
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), atol=1e-14)
