"""Contraction: dot_general against numpy.einsum for random dimension numbers,
NumPy-named products, layouts, promotion and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tidu.testing import check_grads


def _t(a):
    return tf.asarray(np.asarray(a))


def _rand(shape, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


def _close(t, expect):
    a = np.asarray(t)
    assert a.shape == np.shape(expect), (a.shape, np.shape(expect))
    np.testing.assert_allclose(a, expect, rtol=1e-12, atol=1e-12)
    assert t.is_contiguous


@st.composite
def dot_problems(draw):
    """Random operands and dimension numbers, with the matching einsum equation."""
    counts = {k: draw(st.integers(0, 2)) for k in ("batch", "contract", "xfree", "yfree")}
    letters = iter("abcdefghij")
    labels = {k: [next(letters) for _ in range(n)] for k, n in counts.items()}
    ext = {c: draw(st.integers(0, 3)) for ls in labels.values() for c in ls}
    x_labels = draw(st.permutations(labels["batch"] + labels["contract"] + labels["xfree"]))
    y_labels = draw(st.permutations(labels["batch"] + labels["contract"] + labels["yfree"]))
    perm_c = draw(st.permutations(labels["contract"]))  # pairing order of contracted dims
    perm_b = draw(st.permutations(labels["batch"]))
    dn = (
        ([x_labels.index(c) for c in perm_c], [y_labels.index(c) for c in perm_c]),
        ([x_labels.index(c) for c in perm_b], [y_labels.index(c) for c in perm_b]),
    )
    out = [c for c in x_labels if c in labels["xfree"]] + [c for c in y_labels if c in labels["yfree"]] + perm_b
    eq = f"{''.join(x_labels)},{''.join(y_labels)}->{''.join(out)}"
    xs = tuple(ext[c] for c in x_labels)
    ys = tuple(ext[c] for c in y_labels)
    return xs, ys, dn, eq


@settings(max_examples=150, deadline=None)
@given(problem=dot_problems(), seed=st.integers(0, 2**16))
def test_dot_general_matches_einsum(problem, seed):
    xs, ys, dn, eq = problem
    x, y = _rand(xs, seed), _rand(ys, seed + 1)
    _close(tf.dot_general(_t(x), _t(y), dn), np.einsum(eq, x, y))


@settings(max_examples=15, deadline=None)
@given(problem=dot_problems(), seed=st.integers(0, 2**16))
def test_dot_general_grads_random(problem, seed):
    xs, ys, dn, _ = problem
    x, y = _t(_rand(xs, seed, True)), _t(_rand(ys, seed + 1, True))
    check_grads(lambda x, y: tf.dot_general(x, y, dn), [x, y], order=1)


@pytest.mark.parametrize(
    "xs,ys",
    [
        ((3, 4), (4, 2)),
        ((4,), (4,)),
        ((3, 4), (4,)),
        ((4,), (4, 2)),
        ((0, 4), (4, 2)),
        ((3, 0), (0, 2)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
    ],
)
def test_matmul_matches_numpy(xs, ys):
    x, y = _rand(xs), _rand(ys, 1)
    _close(tf.matmul(_t(x), _t(y)), x @ y)
    _close(_t(x) @ _t(y), x @ y)
    _close(x @ _t(y), x @ y)  # __rmatmul__ from a NumPy array


def test_matmul_layout_is_column_major_without_copy():
    a, b = _t(_rand((3, 4))), _t(_rand((4, 5)))
    r = a @ b
    assert r.is_contiguous and r._data.base is not None  # the transposed row-major BLAS result


def test_matmul_promotes_dtypes():
    r = tf.ones((2, 2), tf.float32) @ tf.ones(2, tf.float64)
    assert r.dtype is tf.float64
    r = tf.arange(4).reshape((2, 2)) @ tf.ones((2, 2), tf.complex64)
    assert r.dtype is tf.result_type(tf.int64, tf.complex64)


def test_tensordot_dot_inner_outer_vdot():
    a, b = _rand((2, 3, 4)), _rand((4, 3, 5), 1)
    _close(tf.tensordot(_t(a), _t(b), ((1, 2), (1, 0))), np.tensordot(a, b, ((1, 2), (1, 0))))
    c = _rand((3, 4, 5), 2)
    _close(tf.tensordot(_t(a[0]), _t(c), 2), np.tensordot(a[0], c, 2))
    _close(tf.tensordot(_t(a), _t(b), 1), np.tensordot(a, b, 1))
    _close(tf.tensordot(_t(a), _t(b), 0), np.tensordot(a, b, 0))
    _close(tf.dot(_t(a), _t(c)), np.dot(a, c))
    _close(tf.dot(_t(a[0]), _t(c[0])), np.dot(a[0], c[0]))
    _close(tf.dot(_t(a), _t(b[:, 0, 0])), np.dot(a, b[:, 0, 0]))
    _close(tf.dot(_t(2.0), _t(b)), np.dot(2.0, b))
    _close(tf.inner(_t(a), _t(b[:, 0, :].T)), np.inner(a, b[:, 0, :].T))
    _close(tf.outer(_t(a[0]), _t(b[0, 0])), np.outer(a[0], b[0, 0]))
    z, w = _rand((2, 3), 3, True), _rand((2, 3), 4, True)
    _close(tf.vdot(_t(z), _t(w)), np.vdot(z, w))
    _close(tf.vdot(_t(z), _t(w.T)), np.vdot(z, w.T))  # equal sizes, different shapes: row-major flatten


def test_grad_of_matrix_vector_product():
    w, v = _t(_rand((8, 8))), _t(_rand(8, 1))
    g = tidu.grad(lambda w: tf.sum((w @ v) * (w @ v)))(w)
    wv = np.asarray(w) @ np.asarray(v)
    _close(g, 2 * np.outer(wv, np.asarray(v)))


def test_contraction_errors():
    with pytest.raises(
        tf.ShapeError,
        match=r"matmul: shapes \(2, 3\) and \(4, 5\) are not aligned: contracted "
        r"dimension 1 of the first \(extent 3\) != dimension 0 of the second",
    ):
        tf.matmul(tf.zeros((2, 3)), tf.zeros((4, 5)))
    with pytest.raises(tf.ShapeError, match=r"matmul: shapes \(3,\) and \(2,\) are not aligned"):
        tf.zeros(3) @ tf.zeros(2)
    with pytest.raises(tf.ShapeError, match="matmul: operands must have rank >= 1"):
        tf.matmul(tf.asarray(1.0), tf.zeros(2))
    with pytest.raises(tf.ShapeError, match=r"matmul: batch dimensions of shapes \(2, 3, 4\) and \(3, 4, 5\)"):
        tf.matmul(tf.zeros((2, 3, 4)), tf.zeros((3, 4, 5)))
    with pytest.raises(
        tf.ShapeError,
        match=r"dot_general: shapes \(2, 3\) and \(4, 5\) with contracting dims "
        r"\(1,\)/\(0,\) .*contracting dimension 1 of the first operand \(extent 3\)",
    ):
        tf.dot_general(tf.zeros((2, 3)), tf.zeros((4, 5)), (((1,), (0,)), ((), ())))
    with pytest.raises(tf.ShapeError, match="batch dimension 0 of the first"):
        tf.dot_general(tf.zeros((2, 3)), tf.zeros((3, 3)), (((1,), (1,)), ((0,), (0,))))
    with pytest.raises(tf.AxisError, match="dims of the first operand must be distinct"):
        tf.dot_general(tf.zeros((3, 3)), tf.zeros((3, 3)), (((0,), (0,)), ((0,), (1,))))
    with pytest.raises(tf.AxisError, match="dot_general: axis 2 of the first operand is out of bounds"):
        tf.dot_general(tf.zeros((3, 3)), tf.zeros((3, 3)), (((2,), (0,)), ((), ())))
    with pytest.raises(tf.ShapeError, match="dot_general: dimension_numbers must be"):
        tf.dot_general(tf.zeros(3), tf.zeros(3), ((0,), (0,)))
    with pytest.raises(tf.ShapeError, match="equal lengths"):
        tf.dot_general(tf.zeros(3), tf.zeros(3), (((0,), ()), ((), ())))
    with pytest.raises(tf.AxisError, match=r"tensordot: cannot contract 3 axes of shapes \(2, 3\) and \(3,\)"):
        tf.tensordot(tf.zeros((2, 3)), tf.zeros(3), 3)
    with pytest.raises(tf.ShapeError, match=r"vdot: operands of shapes \(2,\) and \(3,\) have different sizes"):
        tf.vdot(tf.zeros(2), tf.zeros(3))


# --- review fixes -------------------------------------------------------------------
def test_dot_general_transpose_plans_are_cached_once():
    from tenferro import _contraction as c

    assert not hasattr(c._transpose_plan, "cache_info"), "one cache (_TRANSPOSE_PLANS), not two"
    x, y = tf.asarray(np.ones((2, 3))), tf.asarray(np.ones((3, 4)))
    tidu.grad(lambda a: tf.sum(tf.matmul(a, y)))(x)
    assert any(k[0] == (((1,), (0,)), ((), ())) for k in c._TRANSPOSE_PLANS)


@pytest.mark.parametrize(
    "call, msg",
    [
        (lambda x: tf.tensordot(x, x, 1.0), "tensordot: axes must be"),
        (lambda x: tf.dot_general(x, x, (((0.5,), (0,)), ((), ()))), "dot_general: axis of the first operand must be"),
    ],
)
def test_float_axes_raise_axis_error(call, msg):
    with pytest.raises(tf.AxisError, match=msg):
        call(tf.asarray(np.ones((3, 3))))
