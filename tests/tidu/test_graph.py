"""Graphs: make_graph, printing, evaluation, dce, cse, transposition, and graphs
as the linearized (residual-carrying) tangent map."""

import numpy as np
import pytest

import tidu
from toy import ToyAval, add, cos, exp, mul, neg, reduce_sum, sin, sincos

X = np.array([0.3, -0.7, 1.1])


def _f(x):
    return add(mul(sin(x), cos(x)), exp(x))


def test_make_graph_prints_readable_text():
    g = tidu.make_graph(_f, X)
    text = str(g)
    for name in ("sin", "cos", "mul", "exp", "add"):
        assert f"= {name} " in text
    assert text.startswith("{ lambda") and "float64[3]" in text and text.rstrip().endswith("}")
    assert len(g.eqns) == 5 and len(g.invars) == 1 and g.num_residuals == 0
    np.testing.assert_allclose(g(X), _f(X))


def test_make_graph_from_avals_and_params_printed():
    g = tidu.make_graph(lambda x: reduce_sum(x, axes=(0,)), ToyAval((2, 3), np.dtype("float64")), avals=True)
    assert "reduce_sum[axes=(0,)]" in str(g)
    assert g.eqns[0].outputs[0].aval == ToyAval((3,), np.dtype("float64"))


def test_graph_evaluates_pytrees_and_checks_structure():
    g = tidu.make_graph(lambda d: {"s": sin(d["a"]), "p": (mul(d["a"], d["b"]),)}, {"a": X, "b": X})
    out = g({"a": X, "b": 2 * X})
    np.testing.assert_allclose(out["s"], np.sin(X))
    np.testing.assert_allclose(out["p"][0], 2 * X * X)
    with pytest.raises(tidu.TreeStructureError, match="structure"):
        g((X, X))


def test_dce_removes_dead_equations():
    def f(x):
        dead = exp(mul(x, x))  # noqa: F841  unused: two dead equations
        s, c = sincos(x)  # c unused, but the multiple-results eqn is live through s
        return add(s, x)

    g = tidu.make_graph(f, X)
    assert len(g.eqns) == 4
    d = g.dce()
    assert [e.prim.name for e in d.eqns] == ["sincos", "add"]
    np.testing.assert_allclose(d(X), g(X))
    assert len(g.eqns) == 4  # dce returns a new graph


def test_dce_drops_unused_constants():
    c1, c2 = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    g = tidu.make_graph(lambda x: (mul(x, c1), mul(x, c2))[0], X)
    assert g.num_residuals == 2
    d = g.dce()
    assert d.num_residuals == 1 and d.consts[0] is c1
    np.testing.assert_allclose(d(X), X * c1)


def test_cse_merges_duplicate_equations():
    def f(x):
        a = mul(sin(x), cos(x))
        b = mul(sin(x), cos(x))  # the same three equations again
        return add(a, b), neg(sin(x))

    g = tidu.make_graph(f, X)
    assert len(g.eqns) == 9
    c = g.cse()
    assert len(c.eqns) == 5  # sin, cos, mul, add, neg
    assert sorted(e.prim.name for e in c.eqns) == ["add", "cos", "mul", "neg", "sin"]
    for got, want in zip(c(X), g(X)):
        np.testing.assert_allclose(got, want)
    s = g.simplify()
    assert len(s.eqns) == 5
    # different params are not merged
    h = tidu.make_graph(lambda x: add(reduce_sum(x, axes=(0,)), reduce_sum(x, axes=(1,))), np.ones((2, 2)))
    assert len(h.cse().eqns) == 3


def test_graph_is_differentiable():
    g = tidu.make_graph(_f, X)
    ev = lambda x: reduce_sum(g(x))  # noqa: E731
    want = np.cos(2 * X) + np.exp(X)
    np.testing.assert_allclose(tidu.grad(ev)(X), want)
    np.testing.assert_allclose(tidu.grad(lambda x: reduce_sum(g.simplify()(x)))(X), want)


def test_linearized_graph_and_transpose_graph():
    _, lin = tidu.linearize(_f, X)
    g = lin.graph
    text = str(g)
    assert "mul" in text and "add" in text
    # residuals (cos x, sin x, ...) are constants; no nonlinear primitive on tangents
    assert all(e.prim.name in ("mul", "add", "neg") for e in g.eqns), text
    t = np.array([1.0, 2.0, 3.0])
    (jt,) = g.eval_flat(t)
    np.testing.assert_allclose(jt, (np.cos(2 * X) + np.exp(X)) * t)
    (ct,) = tidu.transpose_graph(g, [np.ones(3)])
    np.testing.assert_allclose(ct, np.cos(2 * X) + np.exp(X))
    # symbolic zero in, symbolic zero out
    (z,) = tidu.transpose_graph(g, [tidu.Zero(ToyAval((3,), np.dtype("float64")))])
    assert type(z) is tidu.Zero


def test_vjp_fn_exposes_graph():
    _, vjp_fn = tidu.vjp(_f, X)
    assert len(vjp_fn.graph.eqns) > 0 and vjp_fn.graph.num_residuals > 0


def test_linearize_graph_of_unused_input_has_zero_output():
    _, lin = tidu.linearize(lambda x, y: (sin(x), mul(y, np.array(0.0))), X, X)
    out = lin(np.ones(3), None)  # None: zero tangent for y
    np.testing.assert_allclose(out[0], np.cos(X))
    np.testing.assert_allclose(out[1], 0.0)
    _, lin2 = tidu.linearize(lambda x: np.array(2.0), X)  # output does not depend on x
    assert type(lin2.graph.outvars[0]) is tidu.Zero and len(lin2.graph.eqns) == 0
    np.testing.assert_allclose(lin2(np.ones(3)), 0.0)


def test_cse_refuses_unhashable_parameters():
    scale_p = tidu.Primitive("toy_scale_by")
    scale_p.def_impl(lambda x, factors: x * factors[0])
    scale_p.def_abstract_eval(lambda a, factors: a)

    def f(x):
        return scale_p.bind(x, factors=[2.0])  # a list: not a value

    graph = tidu.make_graph(f, np.ones(3))
    with pytest.raises(tidu.RuleError, match=r"primitive 'toy_scale_by' has unhashable parameters \['factors'\]"):
        graph.cse()
