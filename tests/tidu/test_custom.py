"""custom_jvp and custom_vjp: the user's rule is used (checked by rules that differ
from the true derivative on purpose), through every transform and nested."""

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
