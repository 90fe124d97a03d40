"""tenferro.jit nested to any depth and under any stack of tidu transformations
(issue 21): values and derivatives through nested levels, ``inline_calls``, recursion
with a static depth, and random stacks of transformations and jits against eager."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu

from helpers import rand


def _np(x):
    return np.asarray(x.numpy() if isinstance(x, tf.Tensor) else x)


def _close(got, want, rtol=1e-12):
    got, want = _np(got), _np(want)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


# ---------------------------------------------------------------------------
# 2. jit nested to any depth, recursion, transformations through the levels
# ---------------------------------------------------------------------------
def _f3(a):
    return tf.sin(a) * tf.exp(a * 0.5)


def test_jit_nested_three_levels_values_and_derivatives():
    m3 = tf.jit(_f3)
    m2 = tf.jit(lambda a: m3(a) + 1.0)
    m1 = tf.jit(lambda a: m2(a) + 1.0)
    x = tf.asarray(rand(4))
    _close(m1(x), _f3(x) + 2.0)
    loss = lambda f: lambda a: tf.sum(f(a) * f(a))  # noqa: E731
    _close(tidu.grad(loss(m1))(x), tidu.grad(loss(lambda a: _f3(a) + 2.0))(x))
    _close(tf.jit(tidu.grad(loss(m1)))(x), tidu.grad(loss(lambda a: _f3(a) + 2.0))(x))
    _close(tidu.hessian(loss(m1))(x), tidu.hessian(loss(lambda a: _f3(a) + 2.0))(x))
    text = m1.lower(x)
    assert "call[" in text.as_text(optimized=False) and "call[" not in text.as_text()


def test_inline_calls_flattens_every_level():
    inner = tf.jit(_f3)
    fns = [inner]
    for _ in range(5):
        fns.append(tf.jit(lambda a, f=fns[-1]: f(a) * 2.0 + f(a * 0.5)))
    x = tf.asarray(rand(3))
    graph = tidu.inline_calls(tidu.make_graph(fns[-1], x))
    assert all(e.prim is not tidu.call_p for e in graph.eqns)
    eager = _f3
    for _ in range(5):
        eager = (lambda f: lambda a: f(a) * 2.0 + f(a * 0.5))(eager)
    _close(fns[-1](x), eager(x))
    _close(graph(x), eager(x))


@partial(tf.jit, static_argnums=1)
def _recursive(x, n):
    return x if n == 0 else _recursive(x * 2.0, n - 1) + 1.0


def _recursive_eager(x, n):
    return x if n == 0 else _recursive_eager(x * 2.0, n - 1) + 1.0


@pytest.mark.filterwarnings("ignore::tenferro.RetraceWarning")  # one trace per depth
@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_recursion_with_a_static_depth(n):
    x = tf.asarray(rand(4))
    _close(_recursive(x, n), _recursive_eager(x, n))
    _close(_recursive(x, n=n), _recursive_eager(x, n))
    f = lambda x: tf.sum(tf.sin(_recursive(x, n)))  # noqa: E731
    fe = lambda x: tf.sum(tf.sin(_recursive_eager(x, n)))  # noqa: E731
    _close(tidu.grad(f)(x), tidu.grad(fe)(x))
    _close(tidu.hessian(f)(x), tidu.hessian(fe)(x))


_C = rand(3, 7) - 0.5
_V = rand(3, 8) - 0.5


def _level(g, kind):
    """A scalar function of x from the scalar function ``g``, through one transformation."""
    c, v = tf.asarray(_C), tf.asarray(_V)
    if kind == "grad":
        return lambda x: tf.sum(tidu.grad(g)(x) * c)
    if kind == "jvp":
        return lambda x: (lambda pt: pt[0] * 0.5 + pt[1])(tidu.jvp(g, (x,), (v,)))
    if kind == "vjp":

        def f(x):
            p, pullback = tidu.vjp(g, x)
            (ct,) = pullback(tf.asarray(1.0))
            return p + tf.sum(ct * c)

        return f
    if kind == "value_and_grad":

        def f(x):
            val, gr = tidu.value_and_grad(g)(x)
            return val + tf.sum(tf.sin(gr))

        return f
    if kind == "hessian":
        return lambda x: tf.sum(tidu.hessian(g)(x) * tf.reshape(c, (3, 1)) * tf.reshape(v, (1, 3)))
    return lambda x: g(x) * 0.5 + 1.0


def _stack_fn(stack, compiled):
    g = lambda x: tf.sum(tf.sin(x) * tf.exp(x * 0.3))  # noqa: E731
    for kind, jit_inside, jit_outside in stack:
        if compiled and jit_inside:
            g = tf.jit(g)
        g = _level(g, kind)
        if compiled and jit_outside:
            g = tf.jit(g)
    return g


KINDS = ["grad", "jvp", "vjp", "value_and_grad", "hessian", "plain"]
STACKS = st.lists(st.tuples(st.sampled_from(KINDS), st.booleans(), st.booleans()), min_size=1, max_size=5).filter(
    lambda s: sum(k == "hessian" for k, _, _ in s) <= 2 and any(a or b for _, a, b in s)
)


@settings(max_examples=40, deadline=None)
@given(stack=STACKS, outer=st.sampled_from(["value", "grad", "jit(grad)"]))
def test_any_stack_of_transformations_and_jits_matches_eager(stack, outer):
    x = tf.asarray(np.array([0.4, -0.3, 1.1]))
    f, fe = _stack_fn(stack, True), _stack_fn(stack, False)
    if outer == "value":
        _close(f(x), fe(x))
    elif outer == "grad":
        _close(tidu.grad(f)(x), tidu.grad(fe)(x))
    else:
        _close(tf.jit(tidu.grad(f))(x), tidu.grad(fe)(x))
