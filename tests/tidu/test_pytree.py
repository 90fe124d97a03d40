"""Pytrees: flatten/unflatten, tree_map, custom nodes, and pytrees of toy arrays
through grad, vjp, jvp, linearize and jacobians."""

import numpy as np
import pytest
from hypothesis import given, settings

import tidu
from tidu.testing.strategies import pytrees, vspace_values
from toy import ToyAval, mul, reduce_sum, sin

FAST = settings(max_examples=30, deadline=None)  # keep the suite fast
F64 = np.dtype("float64")


class Point:
    """A user container registered as a pytree node (static ``label`` in aux)."""

    def __init__(self, a, b, label="p"):
        self.a, self.b, self.label = a, b, label


tidu.register_pytree_node(Point, lambda p: ((p.a, p.b), p.label), lambda label, c: Point(*c, label=label))


def test_flatten_order_and_structure():
    tree = {"b": [1, (2, None)], "a": 3}
    leaves, td = tidu.tree_flatten(tree)
    assert leaves == [3, 1, 2]  # dict keys sorted, depth first, None has no leaves
    assert td.num_leaves == 3
    assert tidu.tree_unflatten(td, leaves) == tree
    assert "None" in repr(td) and "'a'" in repr(td)


def test_custom_node_roundtrip_keeps_aux():
    p = Point(1, [2, 3], label="q")
    leaves, td = tidu.tree_flatten(p)
    assert leaves == [1, 2, 3]
    q = tidu.tree_unflatten(td, [4, 5, 6])
    assert isinstance(q, Point) and q.label == "q" and q.a == 4 and q.b == [5, 6]
    assert td != tidu.tree_structure(Point(1, [2, 3], label="other"))


def test_tree_map_multiple_trees_and_mismatch():
    assert tidu.tree_map(lambda x, y: x + y, (1, [2]), (10, [20])) == (11, [22])
    with pytest.raises(tidu.TreeStructureError, match="structure"):
        tidu.tree_map(lambda x, y: x + y, (1, [2]), (10, (20,)))


def test_unflatten_wrong_leaf_count():
    td = tidu.tree_structure((1, 2))
    with pytest.raises(tidu.TreeStructureError, match="expects 2 leaves, got 3"):
        tidu.tree_unflatten(td, [1, 2, 3])


def _ssq(tree):
    """Sum of squares of all leaves of a pytree."""
    total = np.array(0.0)
    for leaf in tidu.tree_leaves(tree):
        total = total + reduce_sum(mul(leaf, leaf))
    return total


def test_grad_of_nested_pytree_with_custom_node():
    x = {"w": np.array([1.0, -2.0]), "layers": [(np.array(0.5), None), Point(np.array(3.0), np.array([[1.0, 2.0]]))]}
    g = tidu.grad(_ssq)(x)
    assert tidu.tree_structure(g) == tidu.tree_structure(x)
    for gl, xl in zip(tidu.tree_leaves(g), tidu.tree_leaves(x)):
        np.testing.assert_allclose(gl, 2 * xl)
    assert isinstance(g["layers"][1], Point) and g["layers"][0][1] is None


def test_grad_argnums_tuple_over_pytrees():
    def f(a, b, c):
        return reduce_sum(mul(a["u"], b[0])) + mul(c, c)

    a, b, c = {"u": np.array([1.0, 2.0])}, [np.array([3.0, 4.0])], np.array(5.0)
    ga, gc = tidu.grad(f, argnums=(0, 2))(a, b, c)
    np.testing.assert_allclose(ga["u"], b[0])
    np.testing.assert_allclose(gc, 10.0)


def test_vjp_and_jvp_with_pytree_inputs_and_outputs():
    def f(p):
        return {"s": sin(p[0]), "m": [mul(p[0], p[1])]}

    x = (np.array([0.1, 0.2]), np.array([3.0, 4.0]))
    out, vjp_fn = tidu.vjp(f, x)
    ct = {"s": np.array([1.0, 1.0]), "m": [np.array([1.0, 2.0])]}
    (g,) = vjp_fn(ct)
    np.testing.assert_allclose(g[0], np.cos(x[0]) + np.array([1.0, 2.0]) * x[1])
    np.testing.assert_allclose(g[1], np.array([1.0, 2.0]) * x[0])
    # jvp with a None tangent leaf (zero) for the second element
    t = (np.array([1.0, 0.0]), None)
    out2, tan = tidu.jvp(f, (x,), (t,))
    np.testing.assert_allclose(out2["s"], out["s"])
    np.testing.assert_allclose(tan["s"], np.cos(x[0]) * t[0])
    np.testing.assert_allclose(tan["m"][0], t[0] * x[1])
    # a None cotangent leaf is a zero cotangent
    (g2,) = vjp_fn({"s": None, "m": [np.array([1.0, 1.0])]})
    np.testing.assert_allclose(g2[0], x[1])


def test_linearize_and_jacobians_of_pytrees():
    def f(d):
        return [mul(d["x"], d["y"]), sin(d["x"])]

    d = {"x": np.array([0.3, 0.4]), "y": np.array([2.0, 5.0])}
    _, lin = tidu.linearize(f, d)
    t = {"x": np.array([1.0, 1.0]), "y": np.array([0.0, 1.0])}
    lt = lin(t)
    np.testing.assert_allclose(lt[0], t["x"] * d["y"] + d["x"] * t["y"])
    np.testing.assert_allclose(lt[1], np.cos(d["x"]) * t["x"])
    for jac in (tidu.jacfwd, tidu.jacrev):
        j = jac(f)(d)
        np.testing.assert_allclose(j[0]["x"], np.diag(d["y"]))
        np.testing.assert_allclose(j[0]["y"], np.diag(d["x"]))
        np.testing.assert_allclose(j[1]["x"], np.diag(np.cos(d["x"])))
        np.testing.assert_allclose(j[1]["y"], np.zeros((2, 2)))


_leaf = vspace_values(ToyAval((2,), F64))


@FAST
@given(pytrees(_leaf))
def test_flatten_unflatten_roundtrip(tree):
    leaves, td = tidu.tree_flatten(tree)
    back = tidu.tree_unflatten(td, leaves)
    leaves2, td2 = tidu.tree_flatten(back)
    assert td2 == td and hash(td2) == hash(td)
    assert all(a is b for a, b in zip(leaves, leaves2)) and len(leaves) == len(leaves2) == td.num_leaves


@FAST
@given(pytrees(_leaf, max_depth=2))
def test_tree_map_preserves_structure(tree):
    out = tidu.tree_map(lambda x: 3 * x, tree)
    assert tidu.tree_structure(out) == tidu.tree_structure(tree)
    for a, b in zip(tidu.tree_leaves(out), tidu.tree_leaves(tree)):
        np.testing.assert_array_equal(a, 3 * b)


def test_custom_node_through_jvp_vjp_linearize():
    def f(p):
        return Point(mul(p.a, p.b), sin(p.a), label=p.label)

    p = Point(np.array([0.1, 0.2]), np.array([3.0, 4.0]), label="in")
    t = Point(np.array([1.0, 0.0]), None, label="in")  # None: zero tangent for b
    out, tan = tidu.jvp(f, (p,), (t,))
    assert isinstance(tan, Point) and tan.label == "in"
    np.testing.assert_allclose(tan.a, t.a * p.b)
    np.testing.assert_allclose(tan.b, np.cos(p.a) * t.a)
    _, vjp_fn = tidu.vjp(f, p)
    (ct,) = vjp_fn(Point(np.ones(2), np.ones(2), label="in"))
    assert isinstance(ct, Point)
    np.testing.assert_allclose(ct.a, p.b + np.cos(p.a))
    np.testing.assert_allclose(ct.b, p.a)
    with pytest.raises(tidu.TreeStructureError, match="does not match"):
        vjp_fn(Point(np.ones(2), np.ones(2), label="other"))  # aux data differs
    _, lin = tidu.linearize(f, p)
    np.testing.assert_allclose(lin(t).a, tan.a)
