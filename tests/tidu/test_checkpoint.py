"""Residual memory and rematerialization.

Linearizing ``x -> sin^1000(x)`` stores exactly one residual per ``sin``: the
``cos(x_k)`` its JVP multiplies by (primal intermediates themselves are not kept).
Splitting the chain into 10 ``checkpoint``-ed segments stores only each segment's
input: 10 residuals, recomputed during the backward pass.
"""

import gc
import tracemalloc

import numpy as np
import pytest

import tidu
from tidu.testing import check_grads
from toy import cos, mul, reduce_sum, sin

N, SEGMENTS = 1000, 10
X = np.linspace(0.2, 1.4, 16)


def _chain(x, n=N):
    for _ in range(n):
        x = sin(x)
    return x


_segment = tidu.checkpoint(lambda x: _chain(x, N // SEGMENTS))


def _chain_ckpt(x):
    for _ in range(SEGMENTS):
        x = _segment(x)
    return x


def _hand_derivative(x, n=N):
    """d sin^n / dx = prod_k cos(x_k), x_0 = x, x_{k+1} = sin(x_k)."""
    d = np.ones_like(x)
    for _ in range(n):
        d = d * np.cos(x)
        x = np.sin(x)
    return d


def _residual_bytes(lin):
    return sum(np.asarray(c).nbytes for c in lin.graph.consts)


def test_chain_stores_one_residual_per_primitive():
    y, lin = tidu.linearize(_chain, X)
    np.testing.assert_allclose(y, _chain(X))
    assert lin.num_residuals == N == len(lin.graph.consts)
    assert _residual_bytes(lin) == N * X.nbytes
    assert [e.prim.name for e in lin.graph.eqns] == ["mul"] * N  # the tangent map only
    # the residuals are exactly the cosines cos(x_k)
    xk = X
    for c in lin.graph.consts[:3]:
        np.testing.assert_array_equal(c, np.cos(xk))
        xk = np.sin(xk)
    np.testing.assert_allclose(lin(np.ones_like(X)), _hand_derivative(X), rtol=1e-12)


def test_checkpoint_reduces_residuals():
    y, lin = tidu.linearize(_chain_ckpt, X)
    np.testing.assert_allclose(y, _chain(X), rtol=1e-14)
    assert lin.num_residuals == SEGMENTS  # one stored segment input each
    assert _residual_bytes(lin) == SEGMENTS * X.nbytes
    assert [e.prim.name for e in lin.graph.eqns] == ["checkpoint_lin"] * SEGMENTS
    # the stored residuals are the segment inputs x_0, x_100, ..., x_900
    for k, c in enumerate(lin.graph.consts):
        np.testing.assert_allclose(c, _chain(X, k * (N // SEGMENTS)), rtol=1e-14)
    np.testing.assert_allclose(lin(np.ones_like(X)), _hand_derivative(X), rtol=1e-12)


def test_residual_memory_is_proportional_to_residuals():
    """Memory held by the linearized function: ~N arrays without checkpoint, ~SEGMENTS with."""
    big = np.linspace(0.2, 1.4, 2000)  # 16 kB per residual

    def held(f):
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        _, lin = tidu.linearize(f, big)
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        del lin
        return size

    plain, ckpt = held(_chain), held(_chain_ckpt)
    assert N * big.nbytes <= plain < 1.5 * N * big.nbytes
    assert ckpt < 0.05 * plain


def test_checkpoint_gradients_equal():
    f = lambda x: reduce_sum(_chain(x))  # noqa: E731
    fc = lambda x: reduce_sum(_chain_ckpt(x))  # noqa: E731
    g, gc_ = tidu.grad(f)(X), tidu.grad(fc)(X)
    np.testing.assert_allclose(gc_, g, rtol=1e-13)
    np.testing.assert_allclose(g, _hand_derivative(X), rtol=1e-12)


def test_checkpoint_under_jvp():
    _, t = tidu.jvp(_chain_ckpt, (X,), (np.ones_like(X),))
    np.testing.assert_allclose(t, _hand_derivative(X), rtol=1e-12)


# second order on a short chain (the 1000-long one would make the test slow)
_seg3 = tidu.checkpoint(lambda x: _chain(x, 3))


def _chain6(x):
    return _seg3(_seg3(x))


def _d2_chain(x, n):
    """Second derivative of sin^n by finite differences of the hand-derived first derivative."""
    h = 1e-5
    return (_hand_derivative(x + h, n) - _hand_derivative(x - h, n)) / (2 * h)


@pytest.mark.parametrize(
    "second",
    [
        lambda f: tidu.grad(tidu.grad(f)),
        lambda f: tidu.jacfwd(tidu.grad(f)),
        lambda f: lambda x: tidu.jvp(tidu.grad(f), (x,), (np.array(1.0),))[1],
        lambda f: tidu.grad(lambda x: tidu.jvp(f, (x,), (np.array(1.0),))[1]),
        lambda f: tidu.grad(lambda x: tidu.linearize(f, x)[1](np.array(1.0))),
        lambda f: lambda x: tidu.vjp(lambda y: tidu.linearize(f, y)[1](np.array(1.0)), x)[1](np.array(1.0))[0],
    ],
    ids=["grad_grad", "jacfwd_grad", "jvp_grad", "grad_jvp", "grad_linearize", "vjp_linearize"],
)
def test_checkpoint_second_order(second):
    x = np.array(0.8)
    got = second(_chain6)(x)
    plain = second(lambda x: _chain(x, 6))(x)
    np.testing.assert_allclose(got, plain, rtol=1e-12)  # same operations recomputed: rounding only
    # reference is a central difference (h=1e-5): error ~h**2 + eps/h ~ 1e-10 (6e-11 observed)
    np.testing.assert_allclose(got, _d2_chain(x, 6), rtol=1e-6)


def test_checkpoint_check_grads():
    check_grads(_chain6, (np.array([0.3, 1.1]),), order=2)


def test_checkpoint_multiple_args_closure_and_pytree():
    w = np.array([2.0, 3.0])

    @tidu.checkpoint
    def seg(p):
        a, b = p["a"], p["b"]
        return {"u": sin(mul(a, w)), "v": mul(cos(b), a)}

    def f(a, b):
        out = seg({"a": a, "b": b})
        return reduce_sum(out["u"]) + reduce_sum(out["v"])

    a, b = np.array([0.1, 0.2]), np.array([0.3, 0.4])
    ga, gb = tidu.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, w * np.cos(a * w) + np.cos(b))
    np.testing.assert_allclose(gb, -np.sin(b) * a)
    # the closed-over traced value of an outer transform is an explicit input of the segment
    gw = tidu.grad(lambda w_: reduce_sum(tidu.checkpoint(lambda x: mul(sin(x), w_))(a)))(w)
    np.testing.assert_allclose(gw, np.sin(a))


def test_checkpoint_outside_differentiation_is_the_function():
    np.testing.assert_array_equal(_segment(X), _chain(X, N // SEGMENTS))


def test_checkpoint_rejects_value_dependent_control_flow():
    def f(x):
        return sin(x) if x > 0 else cos(x)

    assert tidu.grad(f)(np.array(0.5)) == np.cos(0.5)  # eager: fine
    with pytest.raises(tidu.TracerConversionError, match="abstract traced value"):
        tidu.grad(tidu.checkpoint(f))(np.array(0.5))


def test_nested_checkpoint_and_make_graph_of_checkpoint():
    inner = tidu.checkpoint(lambda x: sin(sin(x)))
    outer = tidu.checkpoint(lambda x: inner(inner(x)))
    x = np.array(0.8)
    # exact product of 4 cosines either way: only a few roundings apart
    np.testing.assert_allclose(tidu.grad(outer)(x), _hand_derivative(x, 4), rtol=1e-13)
    # reference is a central difference (h=1e-5): error ~h**2 + eps/h ~ 1e-10 (8e-12 observed)
    np.testing.assert_allclose(tidu.grad(tidu.grad(outer))(x), _d2_chain(x, 4), rtol=1e-6)
    g = tidu.make_graph(inner, x)  # one equation holding the body, which a compiler inlines
    assert [e.prim.name for e in g.eqns] == ["checkpoint"]
    assert [e.prim.name for e in g.eqns[0].params["graph"].eqns] == ["sin", "sin"]
    assert [e.prim.name for e in tidu.inline_calls(g).eqns] == ["sin", "sin"]
    np.testing.assert_allclose(g.eval_flat(x)[0], np.sin(np.sin(x)), rtol=1e-15)


def test_checkpoint_keeps_custom_rules():
    """A custom_jvp / custom_vjp function inside a checkpointed segment is recorded as
    one equation, so the recomputation still uses the user's rule."""

    @tidu.custom_jvp
    def fake(x):
        return sin(x)

    @fake.defjvp
    def fake_jvp(primals, tangents):
        return fake(primals[0]), mul(tangents[0], np.array(3.0))

    @tidu.custom_vjp
    def vfake(x):
        return sin(x)

    vfake.defvjp(lambda x: (sin(x), None), lambda r, ct: (mul(ct, np.array(5.0)),))

    x = np.array(0.8)
    ck = tidu.checkpoint(lambda x: mul(fake(x), vfake(x)))  # d = 3 sin x + 5 sin x
    want = 8 * np.sin(x)
    np.testing.assert_allclose(tidu.grad(ck)(x), want)
    _, lin = tidu.linearize(ck, x)
    assert lin.num_residuals == 1 and lin.graph.eqns[0].prim.name == "checkpoint_lin"
    np.testing.assert_allclose(tidu.vjp(ck, x)[1](np.array(1.0))[0], want)
    # second order: d/dx [3 vfake(x) + 5 fake(x)]; vfake's fwd computes sin(x), which the
    # outer grad differentiates as sin (cos x); fake's rule gives 3: 3 cos x + 15
    d2 = tidu.grad(tidu.grad(ck))(x)
    np.testing.assert_allclose(d2, 3 * np.cos(x) + 15.0)
    np.testing.assert_allclose(d2, tidu.grad(tidu.grad(lambda x: mul(fake(x), vfake(x))))(x))
    # forward mode through the custom_jvp part alone
    ckj = tidu.checkpoint(lambda x: mul(fake(x), x))
    np.testing.assert_allclose(tidu.jvp(ckj, (x,), (np.array(1.0),))[1], 3 * x + np.sin(x))


def test_checkpoint_with_non_differentiable_output():
    from toy import greater

    f = tidu.checkpoint(lambda x: (sin(x), greater(x, np.array(0.0))))
    x = np.array(0.8)
    (s, b), (ts, tb) = tidu.jvp(f, (x,), (np.array(1.0),))
    assert b == True and tb is None  # noqa: E712
    np.testing.assert_allclose(ts, np.cos(x))
    np.testing.assert_allclose(tidu.grad(lambda x: f(x)[0])(x), np.cos(x))


def test_recomputation_survives_common_subexpression_elimination():
    """In a graph of the whole gradient (what tenferro.jit compiles), the backward pass's
    recomputation reads the segment inputs through a barrier: common-subexpression
    elimination merged it with the forward pass, which then stayed alive (no memory saved)."""

    def sins(g):
        return sum(e.prim.name == "sin" for e in g.eqns)

    x = np.array([0.3, 1.1])
    loss = lambda x: reduce_sum(_chain6(x))  # noqa: E731  two segments of three sines
    plain = tidu.make_graph(tidu.grad(lambda x: reduce_sum(_chain(x, 6))), x).simplify()
    ckpt = tidu.make_graph(tidu.grad(loss), x).simplify()
    assert "checkpoint_barrier" in {e.prim.name for e in ckpt.eqns}
    # plain: the five sines whose outputs are read (by the next sine or a cosine). Checkpointed:
    # the first segment's three (its output is the second's input), then each segment's
    # recomputation in the backward pass, two sines each (the third's output is read by nothing);
    # merged with the forward pass, the first segment's recomputation disappeared (5 sines)
    assert sins(plain) == 5 and sins(ckpt) == 3 + 2 + 2
    np.testing.assert_allclose(ckpt(x), plain(x), rtol=1e-14)
    np.testing.assert_allclose(ckpt(x), _hand_derivative(x, 6), rtol=1e-12)


def test_python_scalar_and_string_outputs_pass_through():
    """A checkpointed function may return Python scalars and strings beside its values (a count,
    a flag): they depend on no traced value and come back as they are, under every transform."""
    seen = []

    @tidu.checkpoint
    def body(x):
        return reduce_sum(mul(x, x)), 3, "done", None

    def f(x):
        s, n, tag, none = body(x)
        seen.append((n, tag, none))
        return s

    np.testing.assert_allclose(tidu.grad(f)(X), 2 * X, rtol=1e-15)
    np.testing.assert_allclose(tidu.jvp(f, (X,), (np.ones_like(X),))[1], 2 * X.sum(), rtol=1e-15)
    assert seen and all(s == (3, "done", None) for s in seen)
    check_grads(f, (X,), order=2, modes=("fwd", "rev"))
