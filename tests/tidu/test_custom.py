"""custom_jvp and custom_vjp: the user's rule is used (checked by rules that differ
from the true derivative on purpose), through every transform and nested."""

import functools

import numpy as np
import pytest

import tidu
from tidu.testing import check_grads
from toy import add, cos, exp, greater, log, mul, neg, reciprocal, reduce_sum, sin

X = np.array(0.7)
ONE = np.array(1.0)


# ---- custom_jvp ------------------------------------------------------------------
@tidu.custom_jvp
def csin(x):
    return sin(x)


@csin.defjvp
def _csin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return csin(x), mul(t, cos(x))  # recursive: csin's rule uses csin, so it nests


@tidu.custom_jvp
def fake(x):
    """Value sin(x), but a rule claiming derivative 3: shows the rule, not f, is used."""
    return sin(x)


@fake.defjvp
def _fake_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return fake(x), mul(t, np.array(3.0))


@tidu.custom_jvp
def log1pexp(x):
    """log(1 + e^x) with a stable derivative sigmoid(x) = 1 - 1/(1 + e^x)."""
    return log(add(exp(x), np.array(1.0)))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    sig = add(np.array(1.0), neg(reciprocal(add(exp(x), np.array(1.0)))))
    return log1pexp(x), mul(t, sig)


def test_custom_jvp_uses_rule_in_every_transform():
    assert tidu.grad(fake)(X) == 3.0
    assert tidu.jvp(fake, (X,), (ONE,))[1] == 3.0
    assert tidu.linearize(fake, X)[1](ONE) == 3.0
    assert tidu.vjp(fake, X)[1](ONE)[0] == 3.0
    assert tidu.jacfwd(fake)(X) == 3.0 and tidu.jacrev(fake)(X) == 3.0
    np.testing.assert_allclose(fake(X), np.sin(X))  # outside differentiation: the plain function
    # its derivative is a constant, so the second derivative is 0 (rule's t * 3 has no x)
    assert tidu.grad(tidu.grad(fake))(X) == 0.0


@pytest.mark.parametrize(
    "nest, want",
    [
        (lambda f: tidu.grad(tidu.grad(f)), -np.sin(X)),
        (lambda f: tidu.grad(tidu.grad(tidu.grad(f))), -np.cos(X)),
        (lambda f: tidu.jacfwd(tidu.jacrev(f)), -np.sin(X)),
        (lambda f: lambda x: tidu.jvp(tidu.grad(f), (x,), (ONE,))[1], -np.sin(X)),
        (lambda f: tidu.grad(lambda x: tidu.jvp(f, (x,), (ONE,))[1]), -np.sin(X)),
        (lambda f: tidu.grad(lambda x: tidu.linearize(f, x)[1](ONE)), -np.sin(X)),
    ],
    ids=["grad2", "grad3", "jacfwd_jacrev", "jvp_grad", "grad_jvp", "grad_linearize"],
)
def test_custom_jvp_nested(nest, want):
    np.testing.assert_allclose(nest(csin)(X), want, rtol=1e-12)


def test_custom_jvp_inside_grad_of_grad_with_surrounding_ops():
    f = lambda x: mul(csin(mul(x, x)), x)  # noqa: E731  x sin(x^2)
    # f' = sin(x^2) + 2x^2 cos(x^2); f'' = 6x cos(x^2) - 4x^3 sin(x^2)
    np.testing.assert_allclose(tidu.grad(f)(X), np.sin(X**2) + 2 * X**2 * np.cos(X**2), rtol=1e-12)
    np.testing.assert_allclose(tidu.grad(tidu.grad(f))(X), 6 * X * np.cos(X**2) - 4 * X**3 * np.sin(X**2), rtol=1e-12)
    check_grads(f, (X,), order=2)


def test_custom_jvp_stable_rule_at_extreme_input():
    # the naive derivative e^x / (1 + e^x) gives nan at x = 1000 (inf / inf); the rule does not
    with np.errstate(over="ignore", invalid="ignore"):
        g = tidu.grad(log1pexp)(np.array(1000.0))
    assert g == 1.0
    np.testing.assert_allclose(tidu.grad(log1pexp)(np.array(0.3)), 1 / (1 + np.exp(-0.3)))
    check_grads(log1pexp, (np.array(0.3),), order=2)


def test_custom_jvp_pytree_arguments_and_outputs():
    @tidu.custom_jvp
    def f(d):
        return {"p": mul(d["a"], d["b"]), "s": sin(d["a"])}

    @f.defjvp
    def f_jvp(primals, tangents):
        (d,), (t,) = primals, tangents
        out = f(d)
        return out, {"p": add(mul(t["a"], d["b"]), mul(d["a"], t["b"])), "s": mul(t["a"], cos(d["a"]))}

    d = {"a": np.array([0.1, 0.2]), "b": np.array([3.0, 4.0])}
    g = tidu.grad(lambda d: reduce_sum(add(f(d)["p"], f(d)["s"])))(d)
    np.testing.assert_allclose(g["a"], d["b"] + np.cos(d["a"]))
    np.testing.assert_allclose(g["b"], d["a"])


def test_custom_jvp_zero_tangent_input():
    """Only one argument is differentiated; the rule sees a (dense) zero for the other."""
    seen = []

    @tidu.custom_jvp
    def f(x, y):
        return mul(x, y)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append(np.asarray(ty) if not isinstance(ty, tidu.Tracer) else "tracer")
        return f(x, y), add(mul(tx, y), mul(x, ty))

    _, t = tidu.jvp(f, (X, np.array(2.0)), (ONE, None))
    assert t == 2.0 and seen[-1] == 0.0
    assert tidu.grad(f, argnums=1)(X, np.array(2.0)) == X


# ---- custom_vjp ------------------------------------------------------------------
@tidu.custom_vjp
def vsin(x):
    return sin(x)


def _vsin_fwd(x):
    # computes the output with plain primitives (not by calling vsin), so that forward
    # mode over the whole fwd works: hessian and hvp of vsin are defined
    return sin(x), (cos(x), x)


def _vsin_bwd(res, ct):
    c, x = res
    return (mul(ct, c),)


vsin.defvjp(_vsin_fwd, _vsin_bwd)


@tidu.custom_vjp
def clip_grad(x, lo):
    """Identity forward; backward clips the cotangent at ``lo`` from below (not a true derivative)."""
    return mul(x, np.array(1.0))


def _clip_fwd(x, lo):
    return clip_grad(x, lo), lo


def _clip_bwd(lo, ct):
    from toy import greater

    keep = greater(ct, lo)
    return (add(mul(ct, keep), mul(lo, add(np.array(1.0), mul(keep, np.array(-1.0))))), None)


clip_grad.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_reverse_mode():
    np.testing.assert_allclose(tidu.grad(vsin)(X), np.cos(X))
    np.testing.assert_allclose(tidu.vjp(vsin, X)[1](np.array(2.0))[0], 2 * np.cos(X))
    np.testing.assert_allclose(tidu.jacrev(vsin)(np.array([0.1, 0.2])), np.diag(np.cos([0.1, 0.2])))
    # the bwd is used, not the derivative of the function
    g = tidu.grad(lambda x: mul(clip_grad(x, np.array(-0.5)), np.array(-2.0)))(X)
    assert g == -0.5  # true derivative would be -2
    assert tidu.grad(lambda x: mul(clip_grad(x, np.array(-5.0)), np.array(-2.0)))(X) == -2.0


@pytest.mark.parametrize(
    "nest, want",
    [
        (lambda f: tidu.grad(tidu.grad(f)), -np.sin(X)),
        (lambda f: tidu.grad(tidu.grad(tidu.grad(f))), -np.cos(X)),
        (lambda f: tidu.jacfwd(tidu.jacrev(f)), -np.sin(X)),
        (lambda f: tidu.hessian(f), -np.sin(X)),
        (lambda f: lambda x: tidu.jvp(tidu.grad(f), (x,), (ONE,))[1], -np.sin(X)),
        (lambda f: lambda x: tidu.hvp(f, (x,), (ONE,))[0], -np.sin(X)),
    ],
    ids=["grad2", "grad3", "jacfwd_jacrev", "hessian", "jvp_grad", "hvp"],
)
def test_custom_vjp_nested(nest, want):
    np.testing.assert_allclose(nest(vsin)(X), want, rtol=1e-12)


def test_custom_vjp_check_grads_reverse():
    f = lambda x: mul(vsin(mul(x, x)), x)  # noqa: E731
    check_grads(f, (X,), order=2, modes=("rev",))


def test_custom_vjp_multiple_args_and_pytree():
    @tidu.custom_vjp
    def f(a, p):
        return mul(a, add(p[0], p[1]))

    def fwd(a, p):
        return f(a, p), (a, p)

    def bwd(res, ct):
        a, p = res
        s = add(p[0], p[1])
        return reduce_sum(mul(ct, s)), (mul(ct, a), mul(ct, a))

    f.defvjp(fwd, bwd)
    ga, gp = tidu.grad(lambda a, p: reduce_sum(f(a, p)), argnums=(0, 1))(np.array(2.0), (np.ones(2), np.ones(2)))
    np.testing.assert_allclose(ga, 4.0)
    np.testing.assert_allclose(gp[0], [2.0, 2.0])
    np.testing.assert_allclose(gp[1], [2.0, 2.0])
    # differentiating with respect to a only: p's cotangent is dropped
    np.testing.assert_allclose(tidu.grad(lambda a: reduce_sum(f(a, (np.ones(2), np.ones(2)))))(np.array(2.0)), 4.0)


def test_custom_vjp_forward_mode_is_an_error():
    with pytest.raises(tidu.NonDifferentiableError, match="custom_vjp.*vsin"):
        tidu.jvp(vsin, (X,), (ONE,))
    with pytest.raises(tidu.NonDifferentiableError, match="custom_vjp"):
        tidu.jacfwd(vsin)(X)

    # As in JAX: a fwd that calls the custom_vjp function itself is forward-differentiated
    # by an enclosing jvp (forward over reverse), which reaches the same error.
    @tidu.custom_vjp
    def h(x):
        return sin(x)

    h.defvjp(lambda x: (h(x), cos(x)), lambda c, ct: (mul(ct, c),))
    np.testing.assert_allclose(tidu.grad(tidu.grad(h))(X), -np.sin(X))  # reverse over reverse: fine
    with pytest.raises(tidu.NonDifferentiableError, match="custom_vjp function 'h'"):
        tidu.hessian(h)(X)


def test_custom_rules_missing():
    @tidu.custom_jvp
    def f(x):
        return x

    with pytest.raises(tidu.CustomRuleError, match="defjvp"):
        f(X)

    @tidu.custom_vjp
    def g(x):
        return x

    with pytest.raises(tidu.CustomRuleError, match="defvjp"):
        g(X)


# ---- custom functions inside graphs ------------------------------------------------
def test_make_graph_records_custom_call_and_keeps_rule():
    g = tidu.make_graph(fake, X)
    assert [e.prim.name for e in g.eqns] == ["custom_call"]
    assert "custom_call" in str(g) and "fn=fake" in str(g)
    np.testing.assert_allclose(g(X), np.sin(X))
    assert tidu.grad(lambda x: g(x))(X) == 3.0  # differentiating the graph uses the rule
    gv = tidu.make_graph(vsin, X)
    np.testing.assert_allclose(tidu.grad(lambda x: gv(x))(X), np.cos(X))


def test_staged_custom_call_traces_fun_once_per_input_types():
    """Inside a graph, a custom function's ``fun`` is traced for its output types once
    per (input structure, avals), not on every call."""
    traced = []

    @tidu.custom_jvp
    def h(x):
        traced.append(x)
        return sin(x)

    h.defjvp(lambda p, t: (h(p[0]), mul(t[0], cos(p[0]))))

    def f(x):
        return h(h(h(x)))

    g = tidu.make_graph(f, X)
    assert [e.prim.name for e in g.eqns] == ["custom_call"] * 3
    assert len(traced) == 1
    tidu.make_graph(f, X)
    tidu.make_graph(tidu.checkpoint(f), X)
    assert len(traced) == 1  # same input avals and structure: the cache answers
    tidu.make_graph(f, np.array([0.1, 0.2]))
    assert len(traced) == 2  # new input aval: traced again
    np.testing.assert_allclose(g(X), np.sin(np.sin(np.sin(X))))


def test_custom_function_closing_over_traced_value_inside_graph():
    """A custom function closing over a value the graph traces is closure-converted: the
    value is an operand of its equation, and the graph is evaluated and differentiated later
    with the user's rule (derivative 3 sin(w) on purpose); differentiating with respect to the
    closed-over value and an argument is an error naming the function (the rule says nothing
    about the value)."""

    def f(x, w):
        y = sin(w)

        @tidu.custom_jvp
        def h(z):
            return mul(z, y)  # closes over y, a traced value of the graph

        h.defjvp(lambda p, t: (h(p[0]), mul(t[0], mul(y, np.array(3.0)))))  # so does the rule
        return h(x)

    w = np.array(0.4)
    g = tidu.make_graph(f, X, w)
    (call,) = [e for e in g.eqns if e.prim.name == "custom_call"]
    assert call.inputs[-1] is g.invars[0]  # x, after the closed-over values (y, 3 y: the rule's)
    assert len(call.inputs) == 3
    np.testing.assert_allclose(g(X, w), X * np.sin(w), rtol=1e-15)
    np.testing.assert_allclose(tidu.grad(lambda x: g(x, w))(X), 3 * np.sin(w), rtol=1e-15)
    np.testing.assert_allclose(tidu.jvp(lambda x: g(x, w), (X,), (ONE,))[1], 3 * np.sin(w), rtol=1e-15)
    # only the closed-over value differentiated: the function's own derivative, as outside a graph
    np.testing.assert_allclose(tidu.grad(lambda w: g(X, w))(w), X * np.cos(w), rtol=1e-15)
    with pytest.raises(tidu.CustomRuleError, match="'h' closes over a value being differentiated"):
        tidu.grad(g, argnums=(0, 1))(X, w)


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
