"""Every transform, alone and nested to second (and some third) order, on the toy
primitive set, against hand-derived derivatives and ``check_grads``.

One table (``FIRST``) lists each first-order transform as an operator taking a
scalar function ``f: R -> R`` to its derivative ``f'``; nesting two entries of
the table must give ``f''`` for every pair, and three entries ``f'''``.
"""

import itertools

import numpy as np
import pytest

import tidu
from tidu.testing import check_grads
from toy import add, cos, exp, greater, index, log, matmul, mul, neg, reciprocal, reduce_sum, sin, sincos

ONE = np.array(1.0)


# ---- scalar test functions with hand-derived derivatives f, f', f'', f''' ------------
def _cube(x):
    return mul(mul(x, x), x)


def _exp_sin(x):
    return exp(sin(x))


def _x_log_x(x):
    return mul(x, log(x))


def _sin_over(x):  # sin(x) / x, through reciprocal
    return mul(sin(x), reciprocal(x))


def _sincos_prod(x):  # sin(x) cos(x) through the multiple-results primitive
    s, c = sincos(x)
    return mul(s, c)


FUNCS = {
    "cube": (_cube, lambda x: 3 * x**2, lambda x: 6 * x, lambda x: 6.0 + 0 * x),
    "exp_sin": (
        _exp_sin,
        lambda x: np.cos(x) * np.exp(np.sin(x)),
        lambda x: (np.cos(x) ** 2 - np.sin(x)) * np.exp(np.sin(x)),
        lambda x: (np.cos(x) ** 3 - 3 * np.sin(x) * np.cos(x) - np.cos(x)) * np.exp(np.sin(x)),
    ),
    "x_log_x": (_x_log_x, lambda x: np.log(x) + 1, lambda x: 1 / x, lambda x: -1 / x**2),
    "sin_over_x": (
        _sin_over,
        lambda x: np.cos(x) / x - np.sin(x) / x**2,
        lambda x: -np.sin(x) / x - 2 * np.cos(x) / x**2 + 2 * np.sin(x) / x**3,
        lambda x: -np.cos(x) / x + 3 * np.sin(x) / x**2 + 6 * np.cos(x) / x**3 - 6 * np.sin(x) / x**4,
    ),
    "sincos": (_sincos_prod, lambda x: np.cos(2 * x), lambda x: -2 * np.sin(2 * x), lambda x: -4 * np.cos(2 * x)),
}
POINTS = [np.array(0.7), np.array(1.9)]


# ---- first-order transforms as operators f -> f' ----------------------------------
def _via_jvp(f):
    return lambda x: tidu.jvp(f, (x,), (ONE,))[1]


def _via_linearize(f):
    return lambda x: tidu.linearize(f, x)[1](ONE)


def _via_jvp_aux(f):
    return lambda x: tidu.jvp(lambda y: (f(y), {"y": y}), (x,), (ONE,), has_aux=True)[1]


def _via_linearize_aux(f):
    return lambda x: tidu.linearize(lambda y: (f(y), [y]), x, has_aux=True)[1](ONE)


def _via_linear_transpose(f):
    def d(x):
        _, lin = tidu.linearize(f, x)
        return tidu.linear_transpose(lin, x)(ONE)[0]

    return d


def _via_vjp(f):
    return lambda x: tidu.vjp(f, x)[1](ONE)[0]


def _via_vjp_aux(f):
    def d(x):
        out, vjp_fn, aux = tidu.vjp(lambda y: (f(y), {"y": y}), x, has_aux=True)
        return vjp_fn(ONE)[0]

    return d


def _via_grad_aux(f):
    return lambda x: tidu.grad(lambda y: (f(y), [y]), has_aux=True)(x)[0]


def _via_grad_argnums(f):  # differentiate the first of two arguments, as a tuple
    return lambda x: tidu.grad(lambda a, b: mul(f(a), b), argnums=(0,))(x, ONE)[0]


def _via_value_and_grad(f):
    return lambda x: tidu.value_and_grad(f)(x)[1]


def _via_checkpoint(f):
    return tidu.grad(tidu.checkpoint(f))


def _via_custom_jvp(f):
    """grad of a custom_jvp wrapper whose rule is the (nested) jvp of f itself."""

    @tidu.custom_jvp
    def g(x):
        return f(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        return tidu.jvp(f, primals, tangents)

    return tidu.grad(g)


def _via_custom_vjp(f):
    """grad of a custom_vjp wrapper whose bwd is the (nested) vjp of f itself."""

    @tidu.custom_vjp
    def g(x):
        return f(x)

    def fwd(x):
        return f(x), x

    def bwd(x, ct):
        return tidu.vjp(f, x)[1](ct)

    g.defvjp(fwd, bwd)
    return tidu.grad(g)


FIRST = {
    "grad": tidu.grad,
    "grad_aux": _via_grad_aux,
    "grad_argnums": _via_grad_argnums,
    "value_and_grad": _via_value_and_grad,
    "jvp": _via_jvp,
    "linearize": _via_linearize,
    "linearize_aux": _via_linearize_aux,
    "jvp_aux": _via_jvp_aux,
    "linear_transpose": _via_linear_transpose,
    "vjp": _via_vjp,
    "vjp_aux": _via_vjp_aux,
    "jacfwd": tidu.jacfwd,
    "jacrev": tidu.jacrev,
    "checkpoint": _via_checkpoint,
    "custom_jvp": _via_custom_jvp,
    "custom_vjp": _via_custom_vjp,
}

# second-order transforms as operators f -> f''
SECOND = {
    "hessian": tidu.hessian,
    "hvp": lambda f: lambda x: tidu.hvp(f, (x,), (ONE,))[0],
    "jacfwd(jacrev)": lambda f: tidu.jacfwd(tidu.jacrev(f)),
}


@pytest.mark.parametrize("t", sorted(FIRST))
@pytest.mark.parametrize("fname", sorted(FUNCS))
def test_first_order(t, fname):
    f, d1 = FUNCS[fname][:2]
    for x in POINTS:
        np.testing.assert_allclose(FIRST[t](f)(x), d1(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("outer, inner", list(itertools.product(sorted(FIRST), sorted(FIRST))))
def test_second_order_table(outer, inner):
    for fname in ("exp_sin", "sin_over_x"):
        f, _, d2, _ = FUNCS[fname]
        for x in POINTS:
            got = FIRST[outer](FIRST[inner](f))(x)
            np.testing.assert_allclose(got, d2(x), rtol=1e-11, atol=1e-12, err_msg=f"{outer}({inner}) {fname}")


@pytest.mark.parametrize("second", sorted(SECOND))
@pytest.mark.parametrize("first", sorted(FIRST))
def test_second_order_transforms_nested(second, first):
    """The second derivative from hessian / hvp, and the third from a first-order
    transform around and inside them."""
    f, _, d2, d3 = FUNCS["sin_over_x"]
    for x in POINTS:
        np.testing.assert_allclose(SECOND[second](f)(x), d2(x), rtol=1e-11)
        np.testing.assert_allclose(FIRST[first](SECOND[second](f))(x), d3(x), rtol=1e-10)
        np.testing.assert_allclose(SECOND[second](FIRST[first](f))(x), d3(x), rtol=1e-10)


@pytest.mark.parametrize(
    "chain",
    [
        ("grad", "grad", "grad"),
        ("jvp", "grad", "grad"),
        ("grad", "jvp", "vjp"),
        ("jacfwd", "jacrev", "linearize"),
        ("vjp", "linearize", "jvp"),
        ("checkpoint", "custom_jvp", "grad"),
        ("custom_jvp", "checkpoint", "linear_transpose"),
    ],
)
@pytest.mark.parametrize("fname", sorted(FUNCS))
def test_third_order(chain, fname):
    f, _, _, d3 = FUNCS[fname]
    g = f
    for t in reversed(chain):
        g = FIRST[t](g)
    for x in POINTS:
        np.testing.assert_allclose(g(x), d3(x), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("t", sorted(FIRST))
def test_check_grads_of_each_derivative(t):
    """The derivative functions themselves are differentiable to second order."""
    f = FUNCS["exp_sin"][0]
    check_grads(FIRST[t](f), (np.array(0.7),), order=2)


@pytest.mark.parametrize("fname", sorted(FUNCS))
def test_check_grads_scalar_functions(fname):
    check_grads(FUNCS[fname][0], (np.array(1.3),), order=3)


# ---- vector functions: jacobians, hessian, hvp --------------------------------
def _quartic(v):
    """sum(v**4) / 4 + v0 * v1: gradient v**3 + (v1, v0, 0), Hessian diag(3 v**2) + swap."""
    w = mul(v, v)
    return add(mul(reduce_sum(mul(w, w)), np.array(0.25)), mul(_at(v, 0), _at(v, 1)))


def _at(v, i):
    return index(v, i)


V = np.array([0.5, -1.2, 2.0])


def _hess_quartic(v):
    h = np.diag(3 * v**2)
    h[0, 1] = h[1, 0] = 1.0
    return h


def test_grad_vector():
    g = tidu.grad(_quartic)(V)
    np.testing.assert_allclose(g, V**3 + np.array([V[1], V[0], 0.0]))


@pytest.mark.parametrize(
    "hess",
    [
        tidu.hessian,
        lambda f: tidu.jacfwd(tidu.jacrev(f)),
        lambda f: tidu.jacrev(tidu.jacfwd(f)),
        lambda f: tidu.jacfwd(tidu.grad(f)),
        lambda f: tidu.jacrev(tidu.grad(f)),
        lambda f: tidu.jacfwd(tidu.jacfwd(f)),
        lambda f: tidu.jacrev(tidu.jacrev(f)),
    ],
    ids=["hessian", "jacfwd(jacrev)", "jacrev(jacfwd)", "jacfwd(grad)", "jacrev(grad)", "jacfwd^2", "jacrev^2"],
)
def test_hessians(hess):
    np.testing.assert_allclose(hess(_quartic)(V), _hess_quartic(V), rtol=1e-12)


def test_hvp_forward_over_reverse():
    t = np.array([1.0, 2.0, -1.0])
    (hv,) = tidu.hvp(_quartic, (V,), (t,))
    np.testing.assert_allclose(hv, _hess_quartic(V) @ t, rtol=1e-12)
    # hvp of a two-argument function: returns one block per argument
    f = lambda a, b: mul(reduce_sum(mul(a, a)), b)  # noqa: E731  H = [[2b I, 2a], [2a^T, 0]]
    a, b = np.array([1.0, 2.0]), np.array(3.0)
    ta, tb = np.array([0.5, -1.0]), np.array(2.0)
    ha, hb = tidu.hvp(f, (a, b), (ta, tb))
    np.testing.assert_allclose(ha, 2 * b * ta + 2 * a * tb)
    np.testing.assert_allclose(hb, 2 * a @ ta)


def test_hvp_under_grad():
    """Third order: the gradient of <t, H(v) t> / 2 is sum_i 3 v_i t_i**2 e_i (+0 from the bilinear term)."""
    t = np.array([1.0, 2.0, -1.0])

    def half_tHt(v):
        (hv,) = tidu.hvp(_quartic, (v,), (t,))
        return mul(reduce_sum(mul(hv, t)), np.array(0.5))

    np.testing.assert_allclose(tidu.grad(half_tHt)(V), 3 * V * t**2, rtol=1e-12)


def test_jacobian_shapes_and_values_matrix_function():
    a = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]])  # (3, 2)
    x = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])  # (2, 3)
    f = lambda x: sin(matmul(a, x))  # noqa: E731  (3, 3)
    jf, jr = tidu.jacfwd(f)(x), tidu.jacrev(f)(x)
    assert jf.shape == jr.shape == (3, 3, 2, 3)
    c = np.cos(a @ x)
    want = np.einsum("ij,ik,jl->ijkl", c, a, np.eye(3))
    np.testing.assert_allclose(jf, want, rtol=1e-12)
    np.testing.assert_allclose(jr, want, rtol=1e-12)
    check_grads(f, (x,), order=2)


def test_jac_argnums_and_has_aux():
    f = lambda x, y: (mul(x, y), {"aux": y})  # noqa: E731
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    for jac in (tidu.jacfwd, tidu.jacrev):
        (jx, jy), aux = jac(f, argnums=(0, 1), has_aux=True)(x, y)
        np.testing.assert_allclose(jx, np.diag(y))
        np.testing.assert_allclose(jy, np.diag(x))
        np.testing.assert_array_equal(aux["aux"], y)
        assert not isinstance(aux["aux"], tidu.Tracer)


def test_value_and_grad_has_aux_and_argnums():
    def f(x, y):
        return mul(sin(x), y), {"x2": mul(x, x)}

    (val, aux), (gx, gy) = tidu.value_and_grad(f, argnums=(0, 1), has_aux=True)(np.array(0.3), np.array(2.0))
    np.testing.assert_allclose(val, 2 * np.sin(0.3))
    np.testing.assert_allclose(aux["x2"], 0.09)
    assert not isinstance(aux["x2"], tidu.Tracer)  # aux comes back as a plain value
    np.testing.assert_allclose(gx, 2 * np.cos(0.3))
    np.testing.assert_allclose(gy, np.sin(0.3))


def test_aux_under_outer_grad_stays_differentiable():
    """Inner grad's aux depends on x; the outer grad differentiates through it."""

    def outer(x):
        g, aux = tidu.grad(lambda y: (sin(y), mul(y, y)), has_aux=True)(x)
        return add(g, aux)  # cos x + x^2

    np.testing.assert_allclose(tidu.grad(outer)(np.array(0.4)), -np.sin(0.4) + 0.8)


def test_negative_argnums():
    f = lambda a, b: mul(a, mul(b, b))  # noqa: E731
    np.testing.assert_allclose(tidu.grad(f, argnums=-1)(np.array(3.0), np.array(2.0)), 12.0)


# ---- stop_gradient -----------------------------------------------------------
def test_stop_gradient_first_and_second_order():
    f = lambda x: mul(x, tidu.stop_gradient(mul(x, x)))  # noqa: E731  value x^3, derivative x^2
    x = np.array(1.5)
    np.testing.assert_allclose(f(x), x**3)
    np.testing.assert_allclose(tidu.grad(f)(x), x**2)
    np.testing.assert_allclose(tidu.jvp(f, (x,), (ONE,))[1], x**2)
    # d/dx of the gradient (which is sg(x^2)) is zero: no derivative flows through it
    np.testing.assert_allclose(tidu.grad(tidu.grad(f))(x), 0.0)
    np.testing.assert_allclose(tidu.jacfwd(tidu.jacrev(f))(x), 0.0)


def test_stop_gradient_pytree():
    tree = {"a": np.array(1.0), "b": [np.array(2.0)]}
    out = tidu.stop_gradient(tree)
    assert tidu.tree_structure(out) == tidu.tree_structure(tree)
    g = tidu.grad(lambda t: add(mul(t["a"], tidu.stop_gradient(t)["b"][0]), t["b"][0]))(tree)
    np.testing.assert_allclose(g["a"], 2.0)
    np.testing.assert_allclose(g["b"][0], 1.0)


# ---- fan-out, symbolic zeros, data-dependent control flow ---------------------
def test_fan_out_cotangents_summed(monkeypatch):
    """x is used three times; its cotangents are added with the value type's ``add``."""
    import toy

    calls = []
    orig = toy.ToyVSpace.add

    def counting_add(self, a, b):
        calls.append(1)
        return orig(self, a, b)

    monkeypatch.setattr(toy.ToyVSpace, "add", counting_add)
    f = lambda x: add(add(sin(x), cos(x)), mul(x, np.array(2.0)))  # noqa: E731
    x = np.array(0.3)
    np.testing.assert_allclose(tidu.grad(f)(x), np.cos(x) - np.sin(x) + 2.0)
    assert len(calls) == 2  # three contributions, two additions


def test_jvp_none_tangent_builds_no_dense_zero(monkeypatch):
    import toy

    zeros_made = []
    orig = toy.ToyVSpace.zeros

    def counting_zeros(self, aval):
        zeros_made.append(aval)
        return orig(self, aval)

    monkeypatch.setattr(toy.ToyVSpace, "zeros", counting_zeros)
    x, y = np.array([0.1, 0.2]), np.array([3.0, 4.0])
    f = lambda x, y: add(mul(sin(x), y), exp(y))  # noqa: E731
    out, tan = tidu.jvp(f, (x, y), (np.ones(2), None))
    np.testing.assert_allclose(tan, np.cos(x) * y)
    # second order: jvp of (jvp with a None tangent)
    _, tan2 = tidu.jvp(lambda x: tidu.jvp(f, (x, y), (np.ones(2), None))[1], (x,), (np.ones(2),))
    np.testing.assert_allclose(tan2, -np.sin(x) * y)
    assert zeros_made == []


def test_linearize_none_tangent_builds_no_dense_zero(monkeypatch):
    """A ``None`` tangent passed to a linearized function is a symbolic zero: no dense
    zero of its shape is built and the tangent work it would feed is skipped."""
    import toy

    zeros_made = []
    orig = toy.ToyVSpace.zeros

    def counting_zeros(self, aval):
        zeros_made.append(aval.shape)
        return orig(self, aval)

    monkeypatch.setattr(toy.ToyVSpace, "zeros", counting_zeros)
    x, y = np.array([0.1, 0.2]), np.arange(12.0).reshape(3, 4) / 10
    # a: depends on x only; b: on y only; c: on both
    f = lambda x, y: (sin(x), reduce_sum(exp(y)), add(reduce_sum(sin(x)), reduce_sum(mul(y, y))))  # noqa: E731
    _, f_jvp = tidu.linearize(f, x, y)
    binds = []
    orig_mul = toy.mul_p.impl

    def counting_mul(*args, **params):
        binds.append(1)
        return orig_mul(*args, **params)

    monkeypatch.setattr(toy.mul_p, "impl", counting_mul)
    a, b, c = f_jvp(np.ones(2), None)
    np.testing.assert_allclose(a, np.cos(x))
    np.testing.assert_allclose(b, 0.0)
    np.testing.assert_allclose(c, np.sum(np.cos(x)))
    assert (3, 4) not in zeros_made  # nothing built for the input without tangent
    # one scalar for c's sum (add needs a value for its zero operand), one for output b
    assert zeros_made == [(), ()]
    assert len(binds) == 2  # the two products with t_x; the three with y's tangent are skipped
    zeros_made.clear()
    a, b, c = f_jvp(None, np.ones((3, 4)))
    np.testing.assert_allclose(a, 0.0)
    np.testing.assert_allclose(c, np.sum(2 * y))
    assert sorted(zeros_made) == [(), (2,)]  # c's zero operand of add, and output a


def test_argnums_leaves_other_args_out_of_the_graph():
    """grad w.r.t. argument 0 only: argument 1's computation is not staged as tangent work."""
    y = np.array([3.0, 4.0])
    f = lambda x, y: reduce_sum(mul(x, exp(y)))  # noqa: E731
    _, lin = tidu.linearize(lambda x: f(x, y), np.array([1.0, 2.0]))
    names = [e.prim.name for e in lin.graph.eqns]
    assert "exp" not in names and names.count("mul") == 1


def test_data_dependent_control_flow_in_eager_grad():
    def relu_sq(x):
        if x > 0:  # concrete comparison on a JVP tracer: allowed
            return mul(x, x)
        return neg(x)

    assert tidu.grad(relu_sq)(np.array(1.5)) == 3.0
    assert tidu.grad(relu_sq)(np.array(-1.5)) == -1.0
    assert tidu.grad(tidu.grad(relu_sq))(np.array(1.5)) == 2.0  # nested: a tracer of a tracer
    assert tidu.jvp(relu_sq, (np.array(-2.0),), (ONE,))[1] == -1.0
    # comparison primitive: zero tangent, usable as a mask
    masked = lambda x: reduce_sum(mul(x, greater(x, np.array(0.0))))  # noqa: E731
    np.testing.assert_allclose(tidu.grad(masked)(np.array([-1.0, 2.0, 3.0])), [0.0, 1.0, 1.0])


def test_linear_transpose_of_linear_function():
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def lin(x, y):  # R^2 x R^2 -> (R^3, R): (A x, sum(y) - x0)
        return reduce_sum(mul(a, x), axes=(1,)), add(reduce_sum(y), neg(_at(x, 0)))

    x, y = np.zeros(2), np.zeros(2)
    t = tidu.linear_transpose(lin, x, y)
    ct = (np.array([1.0, -1.0, 2.0]), np.array(3.0))
    cx, cy = t(ct)
    np.testing.assert_allclose(cx, a.T @ ct[0] - np.array([3.0, 0.0]))
    np.testing.assert_allclose(cy, [3.0, 3.0])
    # transposing twice gives back the function
    tt = tidu.linear_transpose(lambda c0, c1: t((c0, c1)), *ct)
    u, w = np.array([1.0, 2.0]), np.array([-1.0, 0.5])
    back = tt((u, w))
    fwd = lin(u, w)
    np.testing.assert_allclose(back[0], fwd[0])
    np.testing.assert_allclose(back[1], fwd[1])


# ---- edge cases ------------------------------------------------------------------
def test_identity_constant_and_duplicated_outputs():
    x = np.array(0.7)
    assert tidu.grad(lambda x: x)(x) == 1.0
    assert tidu.vjp(lambda x: (x, x), x)[1]((ONE, ONE))[0] == 2.0  # fan-out through outputs
    assert tidu.grad(lambda x: np.array(2.0))(x) == 0.0  # output independent of x
    np.testing.assert_array_equal(tidu.jacfwd(lambda x: np.array([2.0, 1.0]))(x), [0.0, 0.0])
    np.testing.assert_array_equal(tidu.jacrev(lambda x: np.array([2.0, 1.0]))(x), [0.0, 0.0])
    assert tidu.jvp(lambda x: np.array(1.0), (x,), (ONE,))[1] == 0.0
    assert tidu.linear_transpose(lambda x: np.array(0.0), x)(ONE)[0] == 0.0


def test_no_perturbation_confusion():
    """Nested derivatives of different variables never mix (Siskind & Pearlmutter):
    d/dx [x * d/dy (x + y)] = 1, not 2."""
    x = np.array(0.7)
    f = lambda x: mul(x, tidu.grad(lambda y: add(x, y))(np.array(3.0)))  # noqa: E731
    assert tidu.grad(f)(x) == 1.0
    assert tidu.jvp(f, (x,), (ONE,))[1] == 1.0
    g = lambda x: tidu.jvp(lambda y: mul(x, y), (np.array(2.0),), (ONE,))[1]  # noqa: E731  = x
    assert tidu.grad(g)(x) == 1.0 and tidu.jvp(g, (x,), (ONE,))[1] == 1.0
    h = lambda x: tidu.linearize(lambda y: mul(mul(x, y), y), np.array(2.0))[1](ONE)  # noqa: E731  = 4x
    assert tidu.grad(h)(x) == 4.0 and tidu.jacfwd(h)(x) == 4.0
    assert tidu.grad(tidu.grad(lambda x: mul(h(x), x)))(x) == 8.0


def test_grad_of_grad_in_another_argument():
    g = lambda x, y: mul(mul(x, x), y)  # noqa: E731  d2/dydx = 2x
    x, y = np.array(0.7), np.array(2.0)
    np.testing.assert_allclose(tidu.grad(lambda y: tidu.grad(g)(x, y))(y), 2 * x)
    h = tidu.hessian(g, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.array([[h[0][0], h[0][1]], [h[1][0], h[1][1]]]), [[2 * y, 2 * x], [2 * x, 0.0]])


# ---- has_aux of the forward transforms -----------------------------------------------
def test_jvp_and_linearize_return_aux_undifferentiated():
    """``jvp``/``linearize(..., has_aux=True)`` return ``aux`` as plain values (JAX's
    convention), and refuse a function that does not return a pair."""
    x = np.array(0.7)
    out, t, aux = tidu.jvp(lambda y: (sin(y), {"c": cos(y)}), (x,), (ONE,), has_aux=True)
    assert out == np.sin(x) and t == np.cos(x)
    assert type(aux["c"]) is np.ndarray and aux["c"] == np.cos(x)
    out, lin, aux = tidu.linearize(lambda y: (sin(y), [exp(y)]), x, has_aux=True)
    assert out == np.sin(x) and lin(np.array(2.0)) == 2 * np.cos(x)
    assert type(aux[0]) is np.ndarray and aux[0] == np.exp(x)
    for call in (lambda: tidu.jvp(sin, (x,), (ONE,), has_aux=True), lambda: tidu.linearize(sin, x, has_aux=True)):
        with pytest.raises(tidu.TreeStructureError, match="has_aux=True requires.*pair"):
            call()


@pytest.mark.parametrize("x", POINTS, ids=str)
def test_aux_of_an_inner_jvp_stays_differentiable_by_the_outer_transform(x):
    """The aux of an inner ``jvp``/``linearize`` is a value of the outer transform's trace:
    ``d/dx aux(x)`` with ``aux = x**3`` is ``3 x**2``."""

    def aux_jvp(x):
        return tidu.jvp(lambda y: (sin(y), _cube(y)), (x,), (ONE,), has_aux=True)[2]

    def aux_lin(x):
        return tidu.linearize(lambda y: (sin(y), _cube(y)), x, has_aux=True)[2]

    for f in (aux_jvp, aux_lin):
        np.testing.assert_allclose(tidu.grad(f)(x), 3 * x**2, rtol=1e-14)
        np.testing.assert_allclose(tidu.jvp(f, (x,), (ONE,))[1], 3 * x**2, rtol=1e-14)


# ---- keyword arguments ---------------------------------------------------------------------
def test_keyword_arguments_pass_through_undifferentiated():
    """``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev`` and ``hessian`` refused keyword
    arguments with Python's TypeError naming an inner wrapper (``grad.<locals>.g()``); as in JAX
    they now go to ``f`` undifferentiated, and an outer transform still differentiates them."""

    def f(x, scale=np.array(1.0), offset=np.array(0.0)):
        return add(mul(mul(mul(x, x), x), scale), offset)  # scale x^3 + offset

    x, s = np.array(0.7), np.array(3.0)
    assert tidu.grad(f)(x, scale=s) == 3 * s * x**2
    assert tidu.value_and_grad(f)(x, scale=s, offset=ONE) == (s * x**3 + 1, 3 * s * x**2)
    for jac in (tidu.jacfwd, tidu.jacrev):
        np.testing.assert_allclose(jac(f)(x, scale=s), 3 * s * x**2, rtol=1e-15)
    np.testing.assert_allclose(tidu.hessian(f)(x, scale=s), 6 * s * x, rtol=1e-15)
    g, aux = tidu.grad(lambda x, scale: (f(x, scale=scale), scale), has_aux=True)(x, scale=s)
    assert g == 3 * s * x**2 and aux == s
    # d/ds of f'(x; s) = 3 x^2: the keyword is a value of the outer trace
    np.testing.assert_allclose(tidu.grad(lambda s: tidu.grad(f)(x, scale=s))(s), 3 * x**2, rtol=1e-15)
    np.testing.assert_allclose(tidu.jacrev(lambda s: tidu.jacfwd(f)(x, scale=s))(s), 3 * x**2, rtol=1e-15)
