"""custom_jvp and custom_vjp, the contract of their rules: rules closing over values, what
rules may return and its checks, keyword and static arguments, nondiff_argnums, and custom
functions inside linear_transpose."""

import functools

import numpy as np
import pytest

import tidu
from tidu.testing import check_grads
from toy import add, cos, greater, mul, neg, reduce_sum, sin

X = np.array(0.7)
ONE = np.array(1.0)

# ---- rules closing over values (closures) --------------------------------------------
W = np.array(1.3)


def _scaled_sin(w):
    """w sin(x) with its true derivative as a rule that closes over w."""

    @tidu.custom_jvp
    def f(x):
        return mul(w, sin(x))

    @f.defjvp
    def f_jvp(p, t):
        return f(p[0]), mul(w, mul(cos(p[0]), t[0]))

    return f


def test_custom_jvp_rule_closing_over_a_differentiated_value_is_an_error():
    """The rule's tangent used to carry the closed-over tracer silently: a zero gradient."""

    def make(w):
        @tidu.custom_jvp
        def f(x):
            return sin(x)

        @f.defjvp
        def f_jvp(p, t):
            return sin(p[0]), mul(w, mul(cos(p[0]), t[0]))  # only the rule uses w

        return f

    with pytest.raises(tidu.CustomRuleError, match="custom_jvp function 'f' closes over a value being differentiated"):
        tidu.grad(lambda w, x: reduce_sum(make(w)(x)), argnums=(0, 1))(W, X)
    with pytest.raises(tidu.CustomRuleError, match="pass the value to the function as an explicit argument"):
        tidu.jvp(lambda w, x: make(w)(x), (W, X), (ONE, ONE))
    with pytest.raises(tidu.CustomRuleError, match="'f' closes over"):
        tidu.grad(lambda w, x: reduce_sum(_scaled_sin(w)(x)), argnums=(0, 1))(W, X)


def test_custom_jvp_rule_closing_over_constants_and_outer_tracers():
    plain = lambda w, x: mul(w, sin(x))  # noqa: E731  the same function without a rule
    # a constant closure
    np.testing.assert_allclose(tidu.grad(_scaled_sin(W))(X), tidu.grad(lambda x: plain(W, x))(X), rtol=1e-15)
    check_grads(_scaled_sin(W), (X,), order=1)
    # a value traced by an enclosing derivative (not by the one the rule serves): d/dw (w cos x)
    got = tidu.grad(lambda w: tidu.grad(_scaled_sin(w))(X))(W)
    want = tidu.grad(lambda w: tidu.grad(lambda x: plain(w, x))(X))(W)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(got, np.cos(X), rtol=1e-15)


def test_custom_vjp_bwd_closing_over_a_differentiated_value_is_an_error():
    def make(w):
        @tidu.custom_vjp
        def g(x):
            return mul(w, sin(x))

        g.defvjp(lambda x: (mul(w, sin(x)), x), lambda x, ct: (mul(w, mul(cos(x), ct)),))  # bwd closes over w
        return g

    with pytest.raises(tidu.CustomRuleError, match="custom_vjp bwd of 'g' closes over a value being differentiated"):
        tidu.grad(lambda w, x: reduce_sum(make(w)(x)), argnums=(0, 1))(W, X)
    np.testing.assert_allclose(tidu.grad(make(W))(X), W * np.cos(X), rtol=1e-15)  # a constant closure: fine
    # a value of an enclosing derivative, still running when bwd runs: d/dw (w cos x)
    np.testing.assert_allclose(tidu.grad(lambda w: tidu.grad(make(w))(X))(W), np.cos(X), rtol=1e-15)


# ---- what rules may return, and its checks ---------------------------------------------
def test_custom_vjp_with_an_integer_output():
    """The cotangent of an integer (here boolean) output reaches bwd as None."""
    seen = []

    @tidu.custom_vjp
    def f(x):
        return sin(x), greater(x, np.array(0.0))

    def bwd(x, cts):
        seen.append(cts[1])
        return (mul(cts[0], cos(x)),)

    f.defvjp(lambda x: (f.fun(x), x), bwd)
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(tidu.grad(lambda x: reduce_sum(f(x)[0]))(x), np.cos(x), rtol=1e-15)
    assert seen == [None]
    check_grads(lambda x: f(x)[0], (x,), order=1, modes=("rev",))


def test_rule_primal_output_is_checked_against_the_function():
    """Inside a graph the function's output types are known: a rule whose primal output
    differs (shape, dtype, structure) is an error naming it (it crashed, or was used)."""

    @tidu.custom_jvp
    def f(x):
        return sin(x)

    f.defjvp(lambda p, t: (reduce_sum(sin(p[0])), reduce_sum(mul(cos(p[0]), t[0]))))  # shape () for (2,)

    @tidu.custom_vjp
    def g(x):
        return sin(x)

    g.defvjp(lambda x: ((sin(x),), x), lambda x, ct: (mul(cos(x), ct),))  # a tuple for a value

    x = np.array([0.3, 0.7])
    for fn, msg in [
        (
            f,
            r"custom_jvp rule of 'f' returned a primal output \(leaf 0\) of type float64\[\], but the "
            r"function returns float64\[2\]",
        ),
        (
            g,
            r"custom_vjp fwd of 'g' returned a primal output of "
            r"structure PyTreeDef\(\(\*,\)\), but the function returns PyTreeDef\(\*\)",
        ),
    ]:
        graph = tidu.make_graph(fn, x)
        with pytest.raises(tidu.CustomRuleError, match=msg):
            tidu.grad(lambda x: reduce_sum(graph(x)))(x)
        with pytest.raises(tidu.CustomRuleError, match=msg):
            tidu.grad(tidu.checkpoint(lambda x: reduce_sum(fn(x))))(x)


def test_rule_results_of_unregistered_types_name_the_rule():
    @tidu.custom_jvp
    def f(x):
        return sin(x)

    f.defjvp(lambda p, t: (f(p[0]), [1.0]))  # a list for a tangent leaf: a structure error
    with pytest.raises(tidu.CustomRuleError, match="custom_jvp rule of 'f': primal output structure"):
        tidu.grad(f)(X)
    f.defjvp(lambda p, t: (f(p[0]), "tangent"))
    with pytest.raises(
        tidu.CustomRuleError, match="custom_jvp rule of 'f' returned a tangent .* of type str, which is"
    ):
        tidu.grad(f)(X)

    @tidu.custom_vjp
    def g(w, x):
        return mul(w, x)

    g.defvjp(lambda w, x: (mul(w, x), (w, x)), lambda r, ct: (1.0, mul(ct, r[0])))  # a Python float cotangent
    with pytest.raises(
        tidu.CustomRuleError,
        match=r"bwd of 'g' returned a cotangent for argument 0 \(w\) of type "
        r"float, which is no value of a registered type; expected a value of type float64\[\]",
    ):
        tidu.grad(g, argnums=(0, 1))(W, X)


def test_cotangent_of_an_argument_not_differentiated_is_checked():
    @tidu.custom_vjp
    def k(w, x):
        return mul(w, x)

    k.defvjp(lambda w, x: (mul(w, x), (w, x)), lambda r, ct: (reduce_sum(mul(ct, r[1])), reduce_sum(ct)))
    x = np.array([0.3, 0.7])
    with pytest.raises(
        tidu.CustomRuleError,
        match=r"cotangent of type float64\[\], expected float64\[2\] \(for "
        r"argument 1 \(x\)\)",
    ):
        tidu.grad(lambda w, x: reduce_sum(k(w, x)), argnums=0)(W, x)


def test_none_and_zero_stand_for_zeros_at_any_node():
    """As in JAX: None (or tidu.Zero.like) for a zero tangent or cotangent at any node."""

    @tidu.custom_jvp
    def h(x):
        return sin(x), greater(x, np.array(0.0))

    h.defjvp(lambda p, t: (h(p[0]), (mul(cos(p[0]), t[0]), None)))  # no tangent for the boolean output

    @tidu.custom_jvp
    def h2(x):
        return sin(x), cos(x)

    h2.defjvp(lambda p, t: (h2(p[0]), (mul(cos(p[0]), t[0]), tidu.Zero.like(p[0]))))  # a rule's zero on purpose

    @tidu.custom_vjp
    def f(d):
        return mul(sin(d["a"]), d["b"])

    f.defvjp(lambda d: (f.fun(d), d), lambda d, ct: ({"a": mul(ct, mul(cos(d["a"]), d["b"])), "b": None},))
    x, y = np.array([0.3, 0.7]), np.array([1.0, 2.0])
    np.testing.assert_allclose(tidu.grad(lambda x: reduce_sum(h(x)[0]))(x), np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(tidu.jvp(h2, (x,), (np.ones(2),))[1][1], 0.0)
    np.testing.assert_allclose(tidu.grad(lambda x: reduce_sum(add(h2(x)[0], h2(x)[1])))(x), np.cos(x), rtol=1e-15)
    ga, gb = tidu.grad(lambda a, b: reduce_sum(f({"a": a, "b": b})), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(ga, np.cos(x) * y, rtol=1e-15)
    np.testing.assert_array_equal(gb, 0.0)  # the rule's zero for b (true derivative: sin a)


def test_keyword_arguments_bind_to_positions():
    def scaled(x, scale=2.0):
        return mul(sin(x), scale)

    f = tidu.custom_jvp(scaled)
    primals_seen = []

    @f.defjvp
    def f_jvp(p, t):
        primals_seen.append(len(p))
        (x, scale), (tx, ts) = p, t  # the default is among the primals (its tangent: 0.0)
        return f(*p), add(mul(mul(cos(x), tx), scale), mul(sin(x), ts))

    s = np.array(3.0)
    np.testing.assert_allclose(f(X, scale=s), scaled(X, scale=s))  # eager
    np.testing.assert_allclose(tidu.grad(lambda x: f(x, scale=s))(X), 3 * np.cos(X), rtol=1e-15)
    np.testing.assert_allclose(tidu.grad(f)(X), 2 * np.cos(X), rtol=1e-15)  # the default, filled in
    assert primals_seen == [2, 2]
    np.testing.assert_allclose(tidu.grad(lambda s: f(X, scale=s))(s), np.sin(X), rtol=1e-15)
    ck = tidu.checkpoint(scaled)
    np.testing.assert_allclose(ck(X, scale=s), scaled(X, s))
    np.testing.assert_allclose(tidu.grad(lambda x: ck(x, scale=s))(X), 3 * np.cos(X), rtol=1e-15)
    np.testing.assert_allclose(tidu.grad(lambda s: ck(X, scale=s))(s), np.sin(X), rtol=1e-15)
    with pytest.raises(tidu.InvalidArgumentError, match="custom_jvp function 'scaled': .*unexpected keyword"):
        f(X, sclae=s)

    @tidu.custom_vjp
    def kw_only(x, *, c):
        return mul(x, c)

    kw_only.defvjp(lambda x, *, c: (mul(x, c), None), lambda r, ct: (ct,))
    with pytest.raises(tidu.InvalidArgumentError, match=r"keyword-only arguments \['c'\] cannot be passed"):
        kw_only(X, c=s)


def test_static_scalar_and_string_arguments():
    """Python scalars and strings are static, as for checkpoint and tenferro.jit: the rules
    get their values (the tangent of a float: 0.0; of an int or str: None)."""
    seen = []

    @tidu.custom_jvp
    def f(x, n, mode):
        return mul(sin(x) if mode == "sin" else cos(x), np.array(float(n)))

    @f.defjvp
    def f_jvp(p, t):
        (x, n, mode), (tx, tn, tm) = p, t
        seen.append((tn, tm))
        d = cos(x) if mode == "sin" else neg(sin(x))
        return f(x, n, mode), mul(mul(d, tx), np.array(float(n)))

    for n, tn in [(3, None), (3.0, 0.0)]:
        np.testing.assert_allclose(tidu.grad(lambda x: f(x, n, "sin"))(X), 3 * np.cos(X), rtol=1e-15)
        np.testing.assert_allclose(tidu.grad(lambda x: f(x, n, "cos"))(X), -3 * np.sin(X), rtol=1e-15)
        assert seen[-1] == (tn, None)
        g = tidu.make_graph(lambda x: f(x, n, "sin"), X)  # staged: the statics are part of the call
        np.testing.assert_allclose(tidu.grad(g)(X), 3 * np.cos(X), rtol=1e-15)

    @tidu.custom_vjp
    def v(x, n):
        return mul(sin(x), np.array(float(n)))

    v.defvjp(
        lambda x, n: (v.fun(x, n), (x, n, "tag")), lambda r, ct: (mul(mul(cos(r[0]), ct), np.array(r[1] * 1.0)), None)
    )
    np.testing.assert_allclose(tidu.grad(lambda x: v(x, 2))(X), 2 * np.cos(X), rtol=1e-15)  # int/str residuals
    np.testing.assert_allclose(tidu.grad(tidu.make_graph(lambda x: v(x, 2), X))(X), 2 * np.cos(X), rtol=1e-15)


def test_nondiff_argnums():
    """JAX's contract: nondiff arguments (here a function) come first in the rule's and
    bwd's arguments and are left out of primals, tangents and cotangents."""

    @functools.partial(tidu.custom_jvp, nondiff_argnums=(0,))
    def app(fun, x):
        return fun(x)

    app.defjvp(lambda fun, p, t: (app(fun, p[0]), mul(t[0], np.array(3.0))))  # derivative 3 on purpose

    @functools.partial(tidu.custom_vjp, nondiff_argnums=(1,))
    def app2(x, fun):
        return fun(x)

    app2.defvjp(lambda x, fun: (fun(x), x), lambda fun, x, ct: (mul(ct, np.array(5.0)),))
    assert tidu.grad(lambda x: app(sin, x))(X) == 3.0
    assert tidu.grad(lambda x: app2(x, sin))(X) == 5.0
    assert tidu.grad(tidu.make_graph(lambda x: app2(x, sin), X))(X) == 5.0
    np.testing.assert_allclose(app(sin, X), np.sin(X))
    with pytest.raises(tidu.CustomRuleError, match=r"nondiff_argnums=\(0,\) is a traced value"):
        tidu.grad(lambda x: app(x, x))(X)
    with pytest.raises(tidu.InvalidArgumentError, match="nondiff_argnums must be non-negative ints"):
        tidu.custom_jvp(sin, nondiff_argnums="0")


# ---- custom functions inside linear_transpose ------------------------------------------
def _rule_scaled(kind, true, rule):
    """``x -> true * x`` whose rule says ``rule * x`` (on purpose: the transpose must follow it)."""
    if kind == "jvp":

        @tidu.custom_jvp
        def f(x):
            return mul(np.array(true), x)

        @f.defjvp
        def f_jvp(p, t):
            return f(p[0]), mul(np.array(rule), t[0])

        return f

    @tidu.custom_vjp
    def g(x):
        return mul(np.array(true), x)

    g.defvjp(lambda x: (g(x), None), lambda res, ct: (mul(np.array(rule), ct),))
    return g


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_linear_transpose_of_a_custom_function_follows_its_rule(kind):
    x, ct = np.linspace(0.1, 0.9, 4), np.linspace(1.0, 2.0, 4)
    f = _rule_scaled(kind, 2.0, 5.0)
    (got,) = tidu.linear_transpose(f, x)(ct)
    np.testing.assert_allclose(got, 5.0 * ct, rtol=1e-15)
    (via_vjp,) = tidu.vjp(f, x)[1](ct)
    np.testing.assert_allclose(got, via_vjp, rtol=1e-15)


def test_linear_transpose_through_custom_functions_inside_a_linear_function():
    a = np.array([0.5, -1.5, 2.0, 3.0])
    x, ct = np.linspace(0.1, 0.9, 4), np.linspace(1.0, 2.0, 4)
    double, triple = _rule_scaled("jvp", 2.0, 5.0), _rule_scaled("vjp", 3.0, 7.0)

    @tidu.custom_vjp
    def scale(w, v):  # linear in v, w a constant operand of the call
        return mul(w, v)

    scale.defvjp(lambda w, v: (scale(w, v), w), lambda w, g: (None, mul(w, g)))

    def f(v):
        return add(double(v), add(triple(mul(a, v)), scale(a, neg(v))))

    (got,) = tidu.linear_transpose(f, x)(ct)
    np.testing.assert_allclose(got, 5.0 * ct + 7.0 * a * ct - a * ct, rtol=1e-15)
    np.testing.assert_allclose(got, tidu.vjp(f, x)[1](ct)[0], rtol=1e-15)
