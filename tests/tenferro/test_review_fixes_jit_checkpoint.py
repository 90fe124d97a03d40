"""Two review fixes.

1. A ``numpy.random.Generator`` inside ``tenferro.jit`` used to be read once, while
   tracing: its draws were frozen into the compiled program and every later call
   repeated the first call's numbers. It is now refused with ``tf.JitError``, passed
   in (static or not) or closed over; eager calls and int seeds behave as before.
2. ``tidu.checkpoint(body)(x, 3)`` with a loop count ``3`` used to trace the int and
   fail ("an integer, which has no derivative"). Python scalars and strings are now
   static, as under ``tenferro.jit``, and ``static_argnums`` marks any other argument.

(In ``tests/tenferro``: tidu's own tests use the toy value type, never tenferro.)
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import tenferro as tf
import tidu
from tidu import StagedFunction

X = np.array([0.3, 0.5, -0.2])


def _state(g: np.random.Generator) -> int:
    return g.bit_generator.state["state"]["state"]


# -- 1. stateful random generators under jit -----------------------------------------------
def test_jit_error_is_typed():
    assert issubclass(tf.JitError, tf.TenferroError)
    assert issubclass(tf.JitError, TypeError)
    assert issubclass(tf.JitError, tidu.StagingError)


def test_generator_as_static_argument_is_refused():
    f = tf.jit(lambda x, g: x + tf.random.normal(g, (3,)), static_argnums=1)
    g = np.random.default_rng(0)
    before = _state(g)
    with pytest.raises(tf.JitError, match=r"argument 1 is a numpy\.random\.Generator.*frozen.*int seed"):
        f(tf.asarray(X), g)
    assert _state(g) == before  # nothing was drawn
    assert f.cache_info().traces == 0


def test_generator_as_keyword_static_argument_is_refused():
    f = tf.jit(lambda x, g: x + tf.random.normal(g, (3,)), static_argnames="g")
    with pytest.raises(tf.JitError, match=r"keyword argument 'g' is a numpy\.random\.Generator"):
        f(tf.asarray(X), g=np.random.default_rng(0))


def test_generator_inside_a_static_tuple_is_refused():
    f = tf.jit(lambda x, cfg: x + tf.random.normal(cfg[1], (3,)), static_argnums=1)
    with pytest.raises(tf.JitError, match=r"numpy\.random\.Generator"):
        f(tf.asarray(X), (3, np.random.default_rng(0)))


def test_generator_as_dynamic_argument_names_the_fix():
    f = tf.jit(lambda x, g: x + tf.random.normal(g, (3,)))
    with pytest.raises(tf.JitError, match=r"argument 1 \(g\) is a numpy\.random\.Generator.*tensor argument"):
        f(tf.asarray(X), np.random.default_rng(0))


@pytest.mark.parametrize("cls", [np.random.RandomState, np.random.PCG64])
def test_other_numpy_random_states_are_refused(cls):
    f = tf.jit(lambda x, r: x, static_argnums=1)
    with pytest.raises(tf.JitError, match=f"numpy.random.{cls.__name__}"):
        f(tf.asarray(X), cls(0))


@pytest.mark.parametrize(
    "draw",
    [
        lambda g: tf.random.normal(g, (3,)),
        lambda g: tf.random.uniform(g, (3,)),
        lambda g: tf.convert(tf.random.randint(g, (3,), 5), tf.float64),
    ],
    ids=["normal", "uniform", "randint"],
)
def test_closed_over_generator_is_refused(draw):
    g = np.random.default_rng(0)
    before = _state(g)
    f = tf.jit(lambda x: x + draw(g))
    with pytest.raises(tf.JitError, match=r"got a numpy\.random\.Generator seed while the function is traced"):
        f(tf.asarray(X))
    with pytest.raises(tf.JitError, match="frozen"):  # not cached: every call refuses
        f(tf.asarray(X))
    assert _state(g) == before
    assert StagedFunction.tracing() is None  # the failed trace left the stack clean


def test_closed_over_generator_is_refused_under_and_around_grad():
    g = np.random.default_rng(0)

    def loss(x):
        return tf.sum(x * tf.random.normal(g, (3,)))

    with pytest.raises(tf.JitError, match="frozen"):
        tf.jit(tidu.grad(loss))(tf.asarray(X))
    with pytest.raises(tf.JitError, match="frozen"):
        tidu.grad(tf.jit(loss))(tf.asarray(X))
    with pytest.raises(tf.JitError, match="frozen"):  # a checkpointed body inside jit is traced too
        tf.jit(tidu.grad(tidu.checkpoint(loss)))(tf.asarray(X))


def test_eager_generator_draws_still_advance():
    g, ref = np.random.default_rng(0), np.random.default_rng(0)
    a = tf.random.normal(g, (3,)).numpy()
    b = tf.random.normal(g, (3,)).numpy()
    np.testing.assert_array_equal(a, ref.standard_normal(3))
    np.testing.assert_array_equal(b, ref.standard_normal(3))
    assert not np.array_equal(a, b)


def test_generator_under_eager_transformations_still_advances():
    """Only staging freezes a draw: grad and checkpoint run eagerly, each call draws anew."""
    g = np.random.default_rng(0)

    def loss(x):
        return tf.sum(x * tf.random.normal(g, (3,)))

    g1 = tidu.grad(loss)(tf.asarray(X)).numpy()
    g2 = tidu.grad(tidu.checkpoint(loss))(tf.asarray(X)).numpy()
    ref = np.random.default_rng(0)
    np.testing.assert_array_equal(g1, ref.standard_normal(3))
    np.testing.assert_array_equal(g2, ref.standard_normal(3))


@pytest.mark.parametrize("static", [False, True])
def test_int_seed_under_jit_equals_eager_per_seed(static):
    """An int seed is static (keyed by value): each seed traces once and gives the numbers an
    eager call with that seed gives; the same seed gives the same numbers on every call."""

    def f(x, seed):
        return x + tf.random.normal(seed, (3,))

    j = tf.jit(f, static_argnums=1) if static else tf.jit(f)
    x = tf.asarray(X)
    a1, a2, b = j(x, 5).numpy(), j(x, 5).numpy(), j(x, 6).numpy()
    np.testing.assert_array_equal(a1, f(x, 5).numpy())
    np.testing.assert_array_equal(a2, a1)
    np.testing.assert_array_equal(b, f(x, 6).numpy())
    assert not np.array_equal(a1, b)
    assert j.cache_info().traces == 2
    np.testing.assert_array_equal(j(x, np.int64(5)).numpy(), a1)  # a NumPy int seed too


def test_closed_over_int_seed_under_jit_equals_eager():
    j = tf.jit(lambda x: x + tf.random.uniform(3, (3,)))
    x = tf.asarray(X)
    want = (x + tf.random.uniform(3, (3,))).numpy()
    np.testing.assert_array_equal(j(x).numpy(), want)
    np.testing.assert_array_equal(j(x).numpy(), want)


def test_tracing_names_the_staged_function():
    seen = []

    def f(x):
        seen.append(StagedFunction.tracing())
        return x * 2.0

    j = tf.jit(f)
    assert StagedFunction.tracing() is None
    j(tf.asarray(X))
    assert seen == [j] and StagedFunction.tracing() is None


# -- 2. checkpoint with static arguments ---------------------------------------------------
def _body(x, n):
    for _ in range(n):
        x = tf.sin(x) * 1.1
    return tf.sum(x * x)


def _central_differences(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (float(f(tf.asarray(x + e))) - float(f(tf.asarray(x - e)))) / (2 * h)
    return out


@pytest.mark.parametrize("n", [0, 1, 3])
def test_checkpoint_with_int_loop_count(n):
    x = tf.asarray(X)
    got = tidu.grad(tidu.checkpoint(_body))(x, n).numpy()
    want = tidu.grad(_body)(x, n).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(got, _central_differences(lambda y: _body(y, n), X), rtol=1e-6, atol=1e-9)
    assert float(tidu.checkpoint(_body)(x, n)) == float(_body(x, n))


def test_checkpoint_with_int_loop_count_still_rematerializes():
    x = tf.asarray(X)
    _, lin_plain = tidu.linearize(lambda y: _body(y, 20), x)
    _, lin_ckpt = tidu.linearize(lambda y: tidu.checkpoint(_body)(y, 20), x)
    assert lin_ckpt.num_residuals < lin_plain.num_residuals
    np.testing.assert_allclose(lin_ckpt(x).numpy(), lin_plain(x).numpy(), rtol=1e-13)


def test_checkpoint_python_scalars_and_strings_are_static():
    def body(x, flip, scale, mode):
        y = tf.sin(x) if mode == "sin" else tf.cos(x)
        return tf.sum(-y * scale if flip else y * scale)

    x = tf.asarray(X)
    got = tidu.grad(tidu.checkpoint(body))(x, True, 2.5, "cos").numpy()
    np.testing.assert_allclose(got, tidu.grad(body)(x, True, 2.5, "cos").numpy(), rtol=1e-14)
    np.testing.assert_allclose(got, 2.5 * np.sin(X), rtol=1e-14)


def test_checkpoint_static_argnums():
    def body(x, act, n):
        for _ in range(n):
            x = act(x)
        return tf.sum(x)

    x = tf.asarray(X)
    ck = tidu.checkpoint(body, static_argnums=1)
    assert ck.static_argnums == (1,)
    got = tidu.grad(ck)(x, tf.sin, 2).numpy()
    np.testing.assert_allclose(got, tidu.grad(body)(x, tf.sin, 2).numpy(), rtol=1e-14)
    np.testing.assert_allclose(got, _central_differences(lambda y: body(y, tf.sin, 2), X), rtol=1e-6)
    neg = tidu.checkpoint(body, static_argnums=-2)  # counted from the last positional parameter
    np.testing.assert_allclose(tidu.grad(neg)(x, tf.sin, 2).numpy(), got, rtol=1e-14)

    @functools.partial(tidu.checkpoint, static_argnums=(1,))
    def deco(x, act):
        return tf.sum(act(x))

    np.testing.assert_allclose(tidu.grad(deco)(x, tf.cos).numpy(), -np.sin(X), rtol=1e-14)


def test_checkpoint_untraceable_argument_names_static_argnums():
    def body(x, act):
        return tf.sum(act(x))

    with pytest.raises(tidu.UnregisteredTypeError, match=r"argument 1 \(act\) cannot be traced.*static_argnums=1"):
        tidu.grad(tidu.checkpoint(body))(tf.asarray(X), tf.sin)


def test_checkpoint_bad_static_argnums():
    with pytest.raises(tidu.InvalidArgumentError, match="static_argnums contains 5"):
        tidu.checkpoint(_body, static_argnums=5)
    with pytest.raises(tidu.InvalidArgumentError, match="static_argnums must be an int"):
        tidu.checkpoint(_body, static_argnums="n")


def test_checkpoint_with_int_loop_count_under_jit():
    x = tf.asarray(X)
    j = tf.jit(tidu.grad(tidu.checkpoint(_body)))
    np.testing.assert_allclose(j(x, 3).numpy(), tidu.grad(_body)(x, 3).numpy(), rtol=1e-13)
    np.testing.assert_allclose(j(x, 4).numpy(), tidu.grad(_body)(x, 4).numpy(), rtol=1e-13)


def test_checkpoint_scalar_and_string_outputs_under_vmap_and_jit():
    """Python scalars and strings a checkpointed function returns beside its values come back as
    they are, under vmap, jit and grad, as its static arguments go in."""

    @tidu.checkpoint
    def body(x):
        return tf.sum(x * x), 3, "done"

    xs = tf.asarray(np.stack([X, 2 * X]))
    values = tidu.vmap(lambda x: body(x)[0])(xs)
    np.testing.assert_allclose(np.asarray(values), [(X * X).sum(), 4 * (X * X).sum()], rtol=1e-15)
    s, n = tf.jit(lambda x: body(x)[:2])(tf.asarray(X))  # (jit returns no strings)
    assert int(n) == 3
    np.testing.assert_allclose(float(s), (X * X).sum(), rtol=1e-15)
    g = tf.jit(tidu.grad(lambda x: body(x)[0]))(tf.asarray(X))
    np.testing.assert_allclose(np.asarray(g), 2 * X, rtol=1e-15)
