"""Generic graph passes (tidu.passes): dce/cse as passes, constant folding and its
limits, the rewrite framework, run_passes to a fixed point. Graphs come from
make_graph on the toy primitives; each test shows the rewrite (the primitives
left) and that the graph computes the same values."""

import numpy as np
import pytest

import tidu
from tidu import Graph
from tidu.passes import NO_FOLD, cse, dce, fold_constants, rewrite, run_passes, use_counts
from toy import add, broadcast_to, cos, cos_p, exp, mul, neg, reduce_sum, sin, sincos

X = np.array([0.3, -0.7, 1.1])
C = np.array([0.5, 2.0, -1.5])


def _prims(g: Graph) -> list[str]:
    return [e.prim.name for e in g.eqns]


def _close(graph: Graph, k: int, value) -> Graph:
    """``graph`` with its input ``k`` made a constant holding ``value`` (partial
    evaluation: how equations whose inputs are all constants arise)."""
    v = graph.invars[k]
    invars = [u for i, u in enumerate(graph.invars) if i != k]
    return Graph(
        invars,
        list(graph.constvars) + [v],
        list(graph.consts) + [value],
        list(graph.eqns),
        list(graph.outvars),
        tidu.tree_structure(tuple(invars)),
        graph.out_tree,
    )


# ---------------------------------------------------------------------------
# dce / cse as passes
# ---------------------------------------------------------------------------
def test_dce_drops_dead_equations_and_returns_its_input_when_none():
    def f(x):
        sin(x)  # dead
        return exp(x)

    g = tidu.make_graph(f, X)
    assert _prims(g) == ["sin", "exp"]
    out = dce(g)
    assert _prims(out) == ["exp"] and "sin" not in str(out)
    np.testing.assert_allclose(out(X), g(X))
    assert dce(out) is out


def test_cse_merges_repeats_and_returns_its_input_when_none():
    g = tidu.make_graph(lambda x: add(sin(x), sin(x)), X)
    assert _prims(g) == ["sin", "sin", "add"]
    out = cse(g)
    assert _prims(out) == ["sin", "add"]
    np.testing.assert_allclose(out(X), g(X))
    assert cse(out) is out
    assert g.eqns[0].prim.name == "sin" and len(g.eqns) == 3  # the input graph is not modified


# ---------------------------------------------------------------------------
# constant folding
# ---------------------------------------------------------------------------
def test_fold_constants_evaluates_equations_of_constants():
    g = _close(tidu.make_graph(lambda x, c: mul(x, exp(sin(c))), X, C), 1, C)
    assert _prims(g) == ["sin", "exp", "mul"]
    out = fold_constants(g)
    assert _prims(out) == ["mul"]
    np.testing.assert_allclose(out(X), X * np.exp(np.sin(C)), rtol=1e-15)
    np.testing.assert_allclose(out(X), g(X), rtol=1e-15)
    clean = dce(out)  # the folded-away constants dropped
    assert len(clean.consts) == 1 and fold_constants(clean) is clean


def test_fold_constants_keeps_large_results_of_small_constants():
    # a broadcast of a scalar constant to 10**5 elements stays an equation; to 8 it folds
    s = np.array(2.0)
    big = _close(tidu.make_graph(lambda x, c: mul(x, broadcast_to(c, (100_000,))), np.ones(100_000), s), 1, s)
    assert _prims(fold_constants(big)) == ["broadcast_to", "mul"]
    assert fold_constants(big) is big
    small = _close(tidu.make_graph(lambda x, c: mul(x, broadcast_to(c, (8,))), np.ones(8), s), 1, s)
    assert _prims(fold_constants(small)) == ["mul"]
    np.testing.assert_allclose(fold_constants(small)(np.arange(8.0)), 2 * np.arange(8.0))
    # a reduction of a large constant folds: its result is no larger than its input
    a = np.arange(100_000.0)
    red = _close(tidu.make_graph(lambda x, c: mul(x, reduce_sum(c, (0,))), np.array(1.0), a), 1, a)
    assert _prims(fold_constants(red)) == ["mul"]
    np.testing.assert_allclose(fold_constants(red)(np.array(3.0)), 3 * a.sum())


def test_fold_constants_leaves_user_code_and_traced_constants_alone():
    @tidu.custom_jvp
    def f(c):
        return sin(c)

    f.defjvp(lambda primals, tangents: (sin(primals[0]), mul(tangents[0], cos(primals[0]))))
    g = _close(tidu.make_graph(lambda x, c: mul(x, f(c)), X, C), 1, C)
    assert "custom_call" in _prims(g)
    assert any(e.prim in NO_FOLD for e in g.eqns)
    assert fold_constants(g) is g

    seen = []

    def h(y):  # y is traced by jvp: a graph constant holding it is not folded
        g = _close(tidu.make_graph(lambda x, c: mul(x, sin(c)), X, C), 1, y)
        out = fold_constants(g)
        seen.append(_prims(out))
        return out(X)

    val, tan = tidu.jvp(h, (C,), (np.ones(3),))
    assert seen == [["sin", "mul"]]
    np.testing.assert_allclose(val, X * np.sin(C))
    np.testing.assert_allclose(tan, X * np.cos(C))


def test_fold_constants_keeps_pytree_structure():
    g = tidu.make_graph(lambda d, c: {"a": mul(d["x"], sin(c)), "b": (neg(d["x"]),)}, {"x": X}, C)
    g = Graph(g.invars[:1], [g.invars[1]], [C], g.eqns, g.outvars, tidu.tree_structure(({"x": X},)), g.out_tree)
    out = fold_constants(g)
    assert _prims(out) == ["mul", "neg"]
    r = out({"x": X})
    np.testing.assert_allclose(r["a"], X * np.sin(C))
    np.testing.assert_allclose(r["b"][0], -X)


# ---------------------------------------------------------------------------
# the rewrite framework
# ---------------------------------------------------------------------------
def _drop_double_neg(eqn, rw):
    if eqn.prim.name == "neg":
        p = rw.producer(eqn.inputs[0])
        if p is not None and p.prim.name == "neg":
            return [p.inputs[0]]
    return None


def test_rewrite_replaces_outputs_and_renames_later_inputs():
    g = tidu.make_graph(lambda x: exp(neg(neg(x))), X)
    assert _prims(g) == ["neg", "neg", "exp"]
    out = rewrite(g, _drop_double_neg)
    assert _prims(out) == ["neg", "exp"]  # the inner neg is left for dce
    clean = dce(out)
    assert _prims(clean) == ["exp"] and clean.eqns[0].inputs[0] is g.invars[0]
    np.testing.assert_allclose(out(X), np.exp(X))
    assert rewrite(clean, _drop_double_neg) is clean


def test_rewrite_of_a_graph_output_and_use_counts():
    g = tidu.make_graph(lambda x: (neg(neg(x)), sin(x)), X)
    n = use_counts(g)
    assert n[g.invars[0]] == 2 and n[g.eqns[1].outputs[0]] == 1
    out = dce(rewrite(g, _drop_double_neg))
    assert out.outvars[0] is out.invars[0] and _prims(out) == ["sin"]
    a, b = out(X)
    np.testing.assert_allclose(a, X)
    np.testing.assert_allclose(b, np.sin(X))


def test_rewrite_checks_what_a_rule_returns():
    g = tidu.make_graph(lambda x: sin(reduce_sum(x, (0,))), X)
    with pytest.raises(tidu.RuleError, match="of type"):
        rewrite(g, lambda eqn, rw: [eqn.inputs[0]] if eqn.prim.name == "reduce_sum" else None)
    with pytest.raises(tidu.RuleError, match="replacements"):
        rewrite(g, lambda eqn, rw: [] if eqn.prim.name == "sin" else None)
    with pytest.raises(tidu.RuleError, match="without emitting"):
        rewrite(g, lambda eqn, rw: eqn.outputs if eqn.prim.name == "sin" else None)


def test_rewrite_emit_keeping_output_variables():
    g = tidu.make_graph(lambda x: exp(sin(x)), X)

    def sin_to_cos(eqn, rw):
        if eqn.prim.name == "sin":
            return rw.emit(cos_p, eqn.inputs, {}, outputs=eqn.outputs)
        return None

    out = rewrite(g, sin_to_cos)
    assert _prims(out) == ["cos", "exp"] and _prims(g) == ["sin", "exp"]
    np.testing.assert_allclose(out(X), np.exp(np.cos(X)))


# ---------------------------------------------------------------------------
# run_passes
# ---------------------------------------------------------------------------
def test_run_passes_reaches_a_fixed_point_and_logs_changes():
    def f(x, c):
        sin(x)  # dead
        return exp(neg(neg(mul(x, cos(c)))))

    g = _close(tidu.make_graph(f, X, C), 1, C)

    def double_neg(graph):
        return rewrite(graph, _drop_double_neg)

    log = []
    out = run_passes(g, [fold_constants, double_neg, cse, dce], log=log)
    assert _prims(out) == ["mul", "exp"]
    np.testing.assert_allclose(out(X), np.exp(X * np.cos(C)))
    # sin cos mul neg neg exp: cos folded, the outer neg replaced, sin and the inner neg dead
    assert log == [(0, "fold_constants", 6, 5), (0, "double_neg", 5, 4), (0, "dce", 4, 2)]
    assert run_passes(out, [fold_constants, double_neg, cse, dce]) is out


def test_run_passes_stops_after_max_rounds():
    calls = []

    def always_new(graph):  # a pass that never settles
        calls.append(1)
        return Graph(
            graph.invars, graph.constvars, graph.consts, graph.eqns, graph.outvars, graph.in_tree, graph.out_tree
        )

    g = tidu.make_graph(lambda x: sin(x), X)
    out = run_passes(g, [always_new], max_rounds=3)
    assert len(calls) == 3
    np.testing.assert_allclose(out(X), np.sin(X))


def test_passes_keep_symbolic_zero_outputs_and_fold_multiple_results():
    g = _close(tidu.make_graph(lambda x, c: mul(x, sincos(c)[1]), X, C), 1, C)
    assert _prims(g) == ["sincos", "mul"]
    aval = g.outvars[0].aval
    g = Graph(g.invars, g.constvars, g.consts, g.eqns, [tidu.Zero(aval), g.outvars[0]], g.in_tree)
    out = run_passes(g, [fold_constants, cse, dce])
    assert _prims(out) == ["mul"] and type(out.outvars[0]) is tidu.Zero
    z, v = out(X)
    np.testing.assert_array_equal(z, np.zeros(3))
    np.testing.assert_allclose(v, X * np.cos(C), rtol=1e-15)
