"""Recorded JVP rules (tidu._replay): reverse mode of eager code replays each primitive's
JVP rule, recorded once per signature, and each recorded tangent step's transpose rule
(tidu._replay_transpose), recorded at its first transposition; gradients are checked
against finite differences and against the rules run directly (replay switched off),
bitwise."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tenferro._registry import PRIMITIVES
from tidu._ad import backward_pass
from tidu._replay import RECIPES, StepEqn


@contextlib.contextmanager
def replay_off(flag: str = "jvp_replay"):
    """Every tenferro primitive's JVP rule (``flag="transpose_replay"``: transpose rule)
    run directly, as without recording. Without JVP recipes no equation has a recorded
    transpose either: both rules then run directly."""
    switched = [p for p, _ in PRIMITIVES.values() if getattr(p, flag)]
    for p in switched:
        setattr(p, flag, False)
    try:
        yield
    finally:
        for p in switched:
            setattr(p, flag, True)


def loop_loss(W, x, steps=12):
    for _ in range(steps):
        x = tf.tanh(W @ x) + x
    return tf.sum(x * x)


def central_difference(f, args, i, h=1e-6):
    """Gradient of ``f`` with respect to ``args[i]`` by central differences (real entries)."""
    base = [np.array(a, dtype=np.float64) for a in args]
    g = np.zeros_like(base[i])
    for k in np.ndindex(g.shape):
        up = [b.copy() for b in base]
        dn = [b.copy() for b in base]
        up[i][k] += h
        dn[i][k] -= h
        g[k] = (float(f(*map(tf.asarray, up))) - float(f(*map(tf.asarray, dn)))) / (2 * h)
    return g


def test_loop_gradient_matches_finite_differences_and_the_direct_rules():
    rng = np.random.default_rng(3)
    W0, x0 = rng.standard_normal((5, 5)) * 0.3, rng.standard_normal(5)
    vg = tidu.value_and_grad(loop_loss, argnums=(0, 1))
    value, (gW, gx) = vg(tf.asarray(W0), tf.asarray(x0))
    for i, g in enumerate((gW, gx)):
        np.testing.assert_allclose(np.asarray(g), central_difference(loop_loss, (W0, x0), i), rtol=1e-6, atol=1e-8)
    with replay_off():
        value_direct, (gW_direct, gx_direct) = vg(tf.asarray(W0), tf.asarray(x0))
    assert float(value) == float(value_direct)
    np.testing.assert_array_equal(np.asarray(gW), np.asarray(gW_direct))
    np.testing.assert_array_equal(np.asarray(gx), np.asarray(gx_direct))


@pytest.mark.cpu_only  # host avals are interned (one object per shape and dtype), so a signature recurs; device avals are not
def test_each_signature_is_recorded_once():
    rng = np.random.default_rng(4)
    W, x = tf.asarray(rng.standard_normal((7, 7))), tf.asarray(rng.standard_normal(7))
    g = tidu.grad(loop_loss, argnums=(0, 1))
    g(W, x)
    recorded = len(RECIPES)
    g(W, x)
    g(tf.asarray(rng.standard_normal((7, 7))), x)
    assert len(RECIPES) == recorded
    keys = [k for k in RECIPES if k[0] is PRIMITIVES["dot_general"][0]]
    assert keys and all(RECIPES[k] is not None for k in keys)


def test_complex_inputs_match_finite_differences():
    rng = np.random.default_rng(5)
    z0 = rng.standard_normal(4) + 1j * rng.standard_normal(4)

    def f(z):
        w = tf.exp(z) * z - z / (z + 3.0)
        return tf.sum(tf.real(w * tf.conj(w)))

    g = np.asarray(tidu.grad(f)(tf.asarray(z0)))
    # tidu's convention: grad = dL/dx - i dL/dy
    h = 1e-6
    expected = np.zeros(4, complex)
    for k in range(4):
        for step, weight in ((h, 1.0), (1j * h, -1j)):
            up, dn = z0.copy(), z0.copy()
            up[k] += step
            dn[k] -= step
            expected[k] += weight * (float(f(tf.asarray(up))) - float(f(tf.asarray(dn)))) / (2 * h)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    with replay_off():
        np.testing.assert_array_equal(np.asarray(tidu.grad(f)(tf.asarray(z0))), g)


def test_second_derivatives_are_exact():
    # grad of grad: the inner linearization sees traced primals (its rules run directly),
    # the outer one replays the rules the inner one applies
    def f(x):
        return tf.sum(tf.sin(x) * x)

    x0 = np.array([0.3, -1.2, 2.0])
    h = tidu.grad(lambda x: tf.sum(tidu.grad(f)(x)))(tf.asarray(x0))
    # d/dx (cos x * x + sin x) = 2 cos x - x sin x
    np.testing.assert_allclose(np.asarray(h), 2 * np.cos(x0) - x0 * np.sin(x0), rtol=1e-12)


def test_a_rule_that_needs_concrete_values_runs_directly():
    # a primitive whose JVP rule reads a concrete value: its recording fails, it is never replayed
    scale_p = tidu.Primitive("test_scale_by_max")
    scale_p.def_impl(lambda x: x * float(tf.max(x)))
    scale_p.def_abstract_eval(lambda a: a)

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        m = float(tf.max(x))  # a Python float: not traceable abstractly
        k = int(np.argmax(np.asarray(x)))
        onehot = np.zeros(x.shape)
        onehot[k] = 1.0
        return scale_p.bind(x), t * m + x * tf.sum(t * tf.asarray(onehot))

    scale_p.def_jvp(jvp)
    scale_p.jvp_replay = True
    x0 = np.array([0.5, 2.0, -1.0])
    g = tidu.grad(lambda x: tf.sum(scale_p.bind(x)))(tf.asarray(x0))
    # sum(x) * max(x): gradient max(x) + sum(x) * onehot(argmax)
    np.testing.assert_allclose(np.asarray(g), 2.0 + x0.sum() * np.array([0.0, 1.0, 0.0]), rtol=1e-14)
    assert [RECIPES[k] for k in RECIPES if k[0] is scale_p] == [None]


def test_a_leaked_tracer_is_refused_as_before():
    box = {}

    def leak(x):
        box["t"] = x
        return tf.sum(x)

    tidu.grad(leak)(tf.asarray(np.ones(3)))
    with pytest.raises(tidu.UnexpectedTracerError):
        tf.tanh(box["t"])


UNARY = ("tanh", "exp", "sin", "cos", "sinh", "arctan", "expm1")


@settings(max_examples=25, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(UNARY), st.sampled_from(("add", "subtract", "multiply"))), min_size=1, max_size=5
    ),
    n=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_random_elementwise_chains_replay_exactly(ops, n, seed):
    rng = np.random.default_rng(seed)
    W0, x0 = rng.standard_normal((n, n)) * 0.5, rng.standard_normal(n) * 0.5

    def f(W, x):
        for unary, binary in ops:
            x = getattr(tf, binary)(getattr(tf, unary)(W @ x) * 0.5, x)
        return tf.sum(x * x)

    g = tidu.grad(f, argnums=(0, 1))
    got = g(tf.asarray(W0), tf.asarray(x0))
    for flag in ("jvp_replay", "transpose_replay"):
        with replay_off(flag):
            direct = g(tf.asarray(W0), tf.asarray(x0))
        for a, b in zip(got, direct):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.cpu_only  # host avals are interned (one object per shape and dtype), so a signature recurs; device avals are not
def test_rules_that_make_large_constants_run_directly():
    # tanh's rule builds 1 - y * y with a broadcast 1 of the operand's shape: past 4096
    # elements no recipe keeps it
    x0 = np.linspace(-2.0, 2.0, 5000)
    x = tf.asarray(x0)
    g = tidu.grad(lambda x: tf.sum(tf.tanh(x)))(x)
    np.testing.assert_allclose(np.asarray(g), 1 - np.tanh(x0) ** 2, rtol=1e-13)
    aval = tidu.aval_of(x)
    assert RECIPES[(PRIMITIVES["tanh"][0], id(aval), id(aval))] is None


@pytest.mark.cpu_only  # the steps' sharing asserted below needs interned host avals (device avals are not)
def test_recorded_transposes_match_the_rules_bitwise():
    rng = np.random.default_rng(6)
    W, x = tf.asarray(rng.standard_normal((6, 6)) * 0.4), tf.asarray(rng.standard_normal(6))
    vg = tidu.value_and_grad(loop_loss, argnums=(0, 1))
    value, grads = vg(W, x)
    with replay_off("transpose_replay"):  # JVPs recorded, every transpose rule run directly
        value_direct, grads_direct = vg(W, x)
    assert float(value) == float(value_direct)
    for a, b in zip(grads, grads_direct):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    _, vjp_fn = tidu.vjp(lambda W: loop_loss(W, x), W)
    vjp_fn(tf.asarray(np.float64(1.0)))
    steps = [e for e in vjp_fn.graph.eqns if type(e) is StepEqn]
    assert steps and all(callable(e.step.transpose) for e in steps)  # each recorded at its first use
    # shared by the loop's 12 iterations: the first (x without tangent: dot 1, tanh 1), the
    # others (dot 3, tanh 1, add 1), the final x * x (3)
    assert len(steps) > 50 and len({id(e.step) for e in steps}) <= 9


def test_a_linearization_graph_skips_the_forward_part_alike():
    # a linearization's graph says every equation is linear; the general path agrees
    rng = np.random.default_rng(7)
    W, x = tf.asarray(rng.standard_normal((4, 4)) * 0.4), tf.asarray(rng.standard_normal(4))
    _, vjp_fn = tidu.vjp(lambda W: loop_loss(W, x), W)
    graph = vjp_fn.graph
    assert graph.all_depend_on_inputs
    general = tidu.Graph(graph.invars, graph.constvars, graph.consts, graph.eqns, graph.outvars)
    ct = [tf.asarray(np.float64(1.0))]
    np.testing.assert_array_equal(np.asarray(backward_pass(graph, ct)[0]), np.asarray(backward_pass(general, ct)[0]))


def test_a_traced_cotangent_runs_the_transpose_rules_directly():
    # vjp_fn under jvp: the cotangents are tracers, so no recorded transpose replays on them;
    # the pullback is linear in the cotangent, so its derivative along dct is vjp_fn(dct)
    rng = np.random.default_rng(8)
    W, x = tf.asarray(rng.standard_normal((5, 5)) * 0.4), tf.asarray(rng.standard_normal(5))
    _, vjp_fn = tidu.vjp(lambda W: loop_loss(W, x), W)
    ct, dct = tf.asarray(np.float64(1.5)), tf.asarray(np.float64(-0.5))
    (g,), (dg,) = tidu.jvp(vjp_fn, (ct,), (dct,))
    np.testing.assert_allclose(np.asarray(g), np.asarray(vjp_fn(ct)[0]), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(dg), np.asarray(vjp_fn(dct)[0]), rtol=1e-12, atol=1e-14)
