"""tidu.testing.strategies, and property tests that use them on the toy type."""

import numpy as np
from hypothesis import given, settings, strategies as st

import tidu
from tidu.testing import check_grads, check_vjp
from tidu.testing.strategies import pytrees, values_like, vspace_values
from toy import ToyAval, add, cos, mul, reduce_sum, sin

FAST = settings(max_examples=30, deadline=None)  # keep the suite fast
F64, C128 = np.dtype("float64"), np.dtype("complex128")

shapes = st.lists(st.integers(1, 3), max_size=2).map(tuple)
float_avals = shapes.map(lambda s: ToyAval(s, F64))
float_arrays = float_avals.flatmap(vspace_values)


@FAST
@given(st.sampled_from([ToyAval((), F64), ToyAval((2, 3), F64), ToyAval((4,), C128)]), st.data())
def test_vspace_values_have_the_aval(aval, data):
    x = data.draw(vspace_values(aval))
    assert tidu.aval_of(x) == aval
    assert np.all(np.isfinite(x))


@FAST
@given(pytrees(st.integers(), max_depth=2))
def test_pytrees_respects_max_depth(tree):
    def depth(t):
        if isinstance(t, (tuple, list)):
            return 1 + max((depth(c) for c in t), default=0)
        if isinstance(t, dict):
            return 1 + max((depth(c) for c in t.values()), default=0)
        return 0

    assert depth(tree) <= 2
    assert all(isinstance(leaf, int) for leaf in tidu.tree_leaves(tree))


@FAST
@given(st.data())
def test_values_like_matches_structure(data):
    avals = {"w": ToyAval((2,), F64), "b": [ToyAval((), F64), None]}
    vals = data.draw(values_like(avals))
    assert tidu.tree_structure(vals) == tidu.tree_structure(avals)
    assert [tidu.aval_of(v) for v in tidu.tree_leaves(vals)] == tidu.tree_leaves(avals)


def _ssq(tree):
    total = np.array(0.0)
    for leaf in tidu.tree_leaves(tree):
        total = add(total, reduce_sum(mul(leaf, leaf)))
    return total


@FAST
@given(pytrees(float_arrays))
def test_grad_sum_of_squares_is_twice_x(tree):
    g = tidu.grad(_ssq)(tree)
    assert tidu.tree_structure(g) == tidu.tree_structure(tree)
    for gl, xl in zip(tidu.tree_leaves(g), tidu.tree_leaves(tree)):
        np.testing.assert_allclose(gl, 2 * xl, rtol=1e-14)


@FAST
@given(pytrees(float_arrays, max_depth=2))
def test_hvp_sum_of_squares_is_twice_t(tree):
    # the Hessian of sum of squares is 2 I, for any pytree of tangents
    t = tidu.tree_map(lambda x: x + 1.0, tree)
    (hv,) = tidu.hvp(_ssq, (tree,), (t,))
    for h, tl in zip(tidu.tree_leaves(hv), tidu.tree_leaves(t)):
        np.testing.assert_allclose(h, 2 * tl, rtol=1e-14)


def _nonlinear(tree):
    """A pytree-to-pytree map with every leaf mixed into every output."""
    leaves = tidu.tree_leaves(tree)
    s = np.array(0.0)
    for leaf in leaves:
        s = add(s, reduce_sum(sin(leaf)))
    return tidu.tree_map(lambda x: mul(cos(x), s), tree)


@FAST
@given(pytrees(float_arrays, max_depth=2), st.integers(0, 1000))
def test_jvp_vjp_dot_product_on_random_pytrees(tree, seed):
    check_vjp(_nonlinear, (tree,), seed=seed)
    # and <vjp(c), t> == <c, jvp(t)> exactly (same linear map, transposed)
    rng = np.random.default_rng(seed)
    t = tidu.tree_map(lambda x: rng.standard_normal(np.shape(x)), tree)
    c = tidu.tree_map(lambda x: rng.standard_normal(np.shape(x)), tree)
    _, jt = tidu.jvp(_nonlinear, (tree,), (t,))
    (vc,) = tidu.vjp(_nonlinear, tree)[1](c)
    lhs = sum(float(np.vdot(a, b)) for a, b in zip(tidu.tree_leaves(vc), tidu.tree_leaves(t)))
    rhs = sum(float(np.vdot(a, b)) for a, b in zip(tidu.tree_leaves(c), tidu.tree_leaves(jt)))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)


@FAST
@given(vspace_values(ToyAval((3,), F64)), vspace_values(ToyAval((3,), C128)))
def test_check_grads_random_points(x, z):
    check_grads(lambda x, z: mul(sin(x), mul(z, z)), (x, z), order=2)
