"""``tidu.vmap`` on tenferro tensors: JAX's in_axes/out_axes/axis_size semantics, typed
errors, composition with grad/jvp/hessian/jit and with itself, against Python loops
(``tidu.testing.check_vmap``) and explicit NumPy. The per-primitive rules are checked over
the gradient table in ``test_vmap_table.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tidu.testing import VmapCheckError, check_vmap, strategies


def _t(*shape, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return tf.asarray(a)


def f2(a, b):
    """A function of two 3x4-per-example tensors mixing elementwise, reductions, contraction."""
    return tf.sum(tf.tanh(a) * b, axis=0) + tf.einsum("ij,kj->", a, b) * tf.exp(-tf.sum(a * a) / 10)


@settings(max_examples=40, deadline=None)
@given(axes=strategies.in_axes((2, 2)), out=st.sampled_from([0, 1, -1]), complex_=st.booleans())
def test_random_in_and_out_axes_match_a_loop(axes, out, complex_):
    ax_a, ax_b = axes
    per = (3, 4)
    a = _t(*(per if ax_a is None else np.insert(per, ax_a % 3, 5)), seed=1, complex_=complex_)
    b = _t(*(per if ax_b is None else np.insert(per, ax_b % 3, 5)), seed=2, complex_=complex_)
    got = check_vmap(f2, (a, b), (ax_a, ax_b), out)
    assert got.shape[out % 2] == 5


def test_pytrees_prefixes_and_out_axes_trees():
    xs = {"w": _t(5, 3, seed=1), "b": _t(3, seed=2)}  # w mapped over axis 0, b shared

    def f(p, x):
        return {"y": p["w"] * x + p["b"], "n": tf.sum(p["w"] ** 2)}, [x, p["b"]]

    x = _t(5, 3, seed=3)
    out = check_vmap(f, (xs, x), ({"w": 0, "b": None}, 0), ({"y": 1, "n": 0}, [0, None]))
    (d, (xx, bb)) = out
    assert d["y"].shape == (3, 5) and d["n"].shape == (5,) and bb.shape == (3,)
    np.testing.assert_array_equal(bb.numpy(), xs["b"].numpy())


def test_axis_size_and_unmapped_outputs_broadcast():
    f = tidu.vmap(lambda a: tf.sin(a), in_axes=None, axis_size=4)
    a = _t(2, 3)
    out = f(a)
    assert out.shape == (4, 2, 3)
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(np.sin(a.numpy()), (4, 2, 3)))
    # an output that does not depend on the mapped input is broadcast along out_axes
    g = tidu.vmap(lambda x, c: (x * 2.0, c), in_axes=(0, None), out_axes=(0, -1))
    y, c = g(_t(3, 2), _t(2))
    assert y.shape == (3, 2) and c.shape == (2, 3)
    assert tidu.vmap(lambda x: x, axis_size=3)(_t(3, 2)).shape == (3, 2)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: tidu.vmap(f2)(_t(5, 3, 4), _t(6, 3, 4)), "inconsistent sizes"),
        (lambda: tidu.vmap(f2, in_axes=(0,))(_t(5, 3, 4), _t(5, 3, 4)), "has 1 entries"),
        (lambda: tidu.vmap(f2, in_axes=True)(_t(5, 3, 4), _t(5, 3, 4)), "must be an int, None"),
        (lambda: tidu.vmap(f2, in_axes="0")(_t(5, 3, 4), _t(5, 3, 4)), "must be an int, None"),
        (lambda: tidu.vmap(f2, in_axes=3)(_t(5, 3, 4), _t(5, 3, 4)), "out of range"),
        (lambda: tidu.vmap(f2, in_axes=None)(_t(3, 4), _t(3, 4)), "give axis_size"),
        (lambda: tidu.vmap(f2, axis_size=4)(_t(5, 3, 4), _t(5, 3, 4)), "axis_size=4"),
        (lambda: tidu.vmap(lambda a: a, out_axes=None)(_t(5, 3)), "out_axes is None"),
        (lambda: tidu.vmap(lambda a: a, out_axes=2)(_t(5, 3)), "out of range"),
        (lambda: tidu.vmap(lambda a: a, axis_size=-1), "axis_size must be"),
        (lambda: tidu.vmap(3), "expects a callable"),
    ],
)
def test_bad_arguments_raise_typed_errors(call, match):
    with pytest.raises(tidu.InvalidArgumentError, match=match):
        call()


def test_keyword_arguments_are_mapped_over_their_leading_axis():
    # JAX: in_axes covers the positional arguments; keyword arguments are mapped over axis 0
    x, c = _t(3, 5, seed=1), _t(3, seed=2)
    b, p = _t(5, 3, seed=3), {"w": _t(5, 3, seed=4), "s": _t(5, seed=5)}

    def f(x, c, b, p=None):
        return tf.sum(tf.sin(x) * b + c * p["w"]) * p["s"]

    got = tidu.vmap(f, in_axes=(1, None))(x, c, b=b, p=p)
    want = [f(x[:, i], c, b=b[i], p={"w": p["w"][i], "s": p["s"][i]}) for i in range(5)]
    assert got.shape == (5,)
    np.testing.assert_allclose(got.numpy(), [float(w) for w in want], rtol=1e-13)
    y = _t(5, seed=6)
    np.testing.assert_allclose(tidu.vmap(lambda x, b: x * b)(x=y, b=b).numpy(), y.numpy()[:, None] * b.numpy())


def test_outputs_no_mapped_input_reaches_are_broadcast_like_jax():
    x = _t(5, 3)
    f, i, t, z, _ = tidu.vmap(lambda x: (1.5, 2, True, 1j, tf.sum(x)))(x)
    for out, value, dtype in ((f, 1.5, tf.float64), (i, 2, tf.int64), (t, True, tf.bool_), (z, 1j, tf.complex128)):
        assert out.shape == (5,) and out.dtype == dtype and out.tolist() == [value] * 5
    y, k = tidu.vmap(lambda x: (x, np.float32(2.0)), out_axes=(1, 0))(x)
    assert y.shape == (3, 5) and k.shape == (5,) and k.dtype == tf.float32
    assert tidu.vmap(lambda c: 2.0, in_axes=None, axis_size=4)(_t(2)).tolist() == [2.0] * 4
    assert tidu.vmap(lambda x: (x, 3), out_axes=(0, None))(x)[1] == 3  # out_axes=None: returned as is
    # constants of any type pass with in_axes=None
    got = tidu.vmap(lambda x, n, name: x * n, in_axes=(0, None, None))(x, 3, "label")
    np.testing.assert_array_equal(got.numpy(), 3 * x.numpy())


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: tidu.vmap(lambda x, n: x * n)(_t(5, 3), 3), r"argument 1 is an int.*pass in_axes=\(0, None\)"),
        (lambda: tidu.vmap(lambda x: x)(np.ones((5, 3))), r"argument 0 is a ndarray.*tenferro.asarray"),
        (lambda: tidu.vmap(lambda x: x)([1.0, 2.0]), r"argument 0\[0\] is a float.*argument 0 is a list"),
        (lambda: tidu.vmap(lambda x: "a")(_t(5, 3)), r"vmap's output is a str; vmap returns tensors and numbers"),
        (lambda: tidu.vmap(lambda x: [x, object()])(_t(5, 3)), r"vmap's output\[1\] is an object"),
        (lambda: tidu.vmap(lambda x, b: x * b)(_t(5, 3), b=2.0), r"keyword argument 'b' is a float.*functools.partial"),
    ],
)
def test_what_vmap_cannot_batch_is_named_with_the_fix(call, match):
    with pytest.raises(tidu.UnbatchableError, match=match):
        call()


def test_a_primitive_without_a_rule_is_named():
    plain_p = tidu.Primitive("test_without_rule")
    plain_p.def_impl(lambda x: x)
    plain_p.def_abstract_eval(lambda a: a)
    with pytest.raises(tidu.MissingRuleError, match="'test_without_rule' has no batching rule"):
        tidu.vmap(lambda a: plain_p.bind(a))(_t(4, 3))


def test_dynamic_slices_with_per_example_starts():
    """Starts differ per example (some out of range: clamped as the primitive clamps)."""
    x, u = _t(4, 5, 6, seed=1), _t(4, 2, 3, seed=2)
    starts = tf.asarray(np.array([[0, 1], [3, 4], [-2, 9], [1, 2]]))
    f = lambda a, s: tf.dynamic_slice(a, s, (2, 3))  # noqa: E731
    for axes in ((0, 0), (None, 0)):
        check_vmap(f, (x if axes[0] == 0 else x[0], starts), axes)
    check_vmap(lambda a, s: tidu.grad(lambda a: tf.sum(f(a, s) ** 2))(a), (x, starts))  # its transpose: dus
    g = lambda a, v, s: tf.dynamic_update_slice(a, v, s)  # noqa: E731
    for axes in ((0, 0, 0), (None, 0, 0), (0, None, 0)):
        check_vmap(g, (x if axes[0] == 0 else x[0], u if axes[1] == 0 else u[0], starts), axes)
    check_vmap(lambda a, v, s: tidu.grad(lambda a, v: tf.sum(g(a, v, s) ** 3), argnums=(0, 1))(a, v), (x, u, starts))


def test_indexing_with_per_example_indices():
    rng = np.random.default_rng(0)
    x, idx = _t(5, 4, 3, seed=1), tf.asarray(rng.integers(0, 4, (5, 2, 3)))
    for axes in ((0, 0), (0, None), (None, 0)):
        check_vmap(
            lambda a, i: tf.take(a, i, axis=0), (x if axes[0] == 0 else x[0], idx if axes[1] == 0 else idx[0]), axes
        )
        # the gradient scatters with the same indices (scatter_add's rule)
        check_vmap(
            lambda a, i: tidu.grad(lambda a: tf.sum(tf.take(a, i, axis=0) ** 2))(a),
            (x if axes[0] == 0 else x[0], idx if axes[1] == 0 else idx[0]),
            axes,
        )


def test_check_vmap_catches_a_wrong_rule():
    """A primitive whose batching rule mixes the examples up (reverses them) fails the check."""
    double_p = tidu.Primitive("test_double")
    double_p.def_impl(lambda x: x * 2.0)
    double_p.def_abstract_eval(lambda a: a)
    double_p.def_batch(lambda n, args, dims: (tf.flip(args[0] * 2.0, axis=dims[0]), dims[0]))
    check_vmap(lambda a: double_p.bind(a), (_t(1, 4),))  # one example: nothing to mix up
    with pytest.raises(VmapCheckError, match="example 0"):
        check_vmap(lambda a: double_p.bind(a), (_t(3, 4),))


# ---- composition ---------------------------------------------------------------------------
def loss(w, x):
    return tf.sum(tf.tanh(x @ w) ** 2)


W, X = _t(4, 2, seed=5), _t(6, 3, 4, seed=6)


def _loop_grads(fun, w, xs):
    return np.stack([fun(w, tf.asarray(xs.numpy()[i])).numpy() for i in range(xs.shape[0])])


def test_per_example_gradients_vmap_of_grad():
    got = tidu.vmap(tidu.grad(loss), in_axes=(None, 0))(W, X).numpy()
    np.testing.assert_allclose(got, _loop_grads(tidu.grad(loss), W, X), rtol=1e-13, atol=1e-14)


def test_grad_of_vmap_is_the_sum_of_the_per_example_gradients():
    g = tidu.grad(lambda w: tf.sum(tidu.vmap(loss, in_axes=(None, 0))(w, X)))(W).numpy()
    np.testing.assert_allclose(g, _loop_grads(tidu.grad(loss), W, X).sum(0), rtol=1e-13, atol=1e-13)


def test_vmap_of_hessian_and_jvp_of_vmap():
    h = tidu.vmap(tidu.hessian(loss), in_axes=(None, 0))(W, X).numpy()
    np.testing.assert_allclose(h, _loop_grads(tidu.hessian(loss), W, X), rtol=1e-12, atol=1e-13)
    t = _t(4, 2, seed=9)
    _, jv = tidu.jvp(lambda w: tidu.vmap(loss, in_axes=(None, 0))(w, X), (W,), (t,))
    want = [float(tidu.jvp(lambda w: loss(w, tf.asarray(X.numpy()[i])), (W,), (t,))[1]) for i in range(6)]
    np.testing.assert_allclose(jv.numpy(), want, rtol=1e-13)


def test_nested_vmap_and_jit():
    a = _t(2, 3, 4, 4, seed=3)
    f = lambda m: tf.linalg.det(tf.sin(m) @ m.T + 4.0 * tf.eye(4))  # noqa: E731
    got = tidu.vmap(tidu.vmap(f))(a)
    want = np.array([[float(f(tf.asarray(a.numpy()[i, j]))) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    jitted = tf.jit(tidu.vmap(f))  # jit(vmap(f)): one compiled batched program
    np.testing.assert_allclose(jitted(a[0]).numpy(), want[0], rtol=1e-12)
    jf = tf.jit(f)  # vmap(jit(f)): the compiled call batched (a compiled batched graph)
    np.testing.assert_allclose(tidu.vmap(jf)(a[1]).numpy(), want[1], rtol=1e-12)
    per_example = tidu.vmap(tidu.grad(jf))(a[1]).numpy()
    np.testing.assert_allclose(
        per_example,
        np.stack([tidu.grad(f)(tf.asarray(a.numpy()[1, j])).numpy() for j in range(3)]),
        rtol=1e-12,
        atol=1e-13,
    )


# ---- custom rules under vmap ---------------------------------------------------------------
def _marked_jvp():
    """f(x) = sin(x) with a JVP rule that says 2 cos(x): a derivative only the rule gives."""

    @tidu.custom_jvp
    def f(x):
        return tf.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * tf.cos(x) * t

    return f


def test_custom_jvp_rules_are_kept_under_vmap_both_ways():
    f, x = _marked_jvp(), _t(5, 3, seed=4)
    want = 2.0 * np.cos(x.numpy())
    g_of_v = tidu.grad(lambda x: tf.sum(tidu.vmap(f)(x)))(x).numpy()  # grad(vmap(f))
    v_of_g = tidu.vmap(tidu.grad(lambda r: tf.sum(f(r))))(x).numpy()  # vmap(grad(f))
    np.testing.assert_allclose(g_of_v, want, rtol=1e-14)
    np.testing.assert_allclose(v_of_g, want, rtol=1e-14)
    np.testing.assert_allclose(tidu.vmap(f)(x).numpy(), np.sin(x.numpy()), rtol=1e-15)
    jf = tf.jit(lambda r: tf.sum(f(r) * r))  # staged: custom_call
    g = tidu.grad(lambda x: tf.sum(tidu.vmap(jf)(x)))(x).numpy()
    np.testing.assert_allclose(g, want * x.numpy() + np.sin(x.numpy()), rtol=1e-13)


def test_custom_vjp_rules_under_vmap_sum_the_cotangents_of_shared_inputs():
    @tidu.custom_vjp
    def scale(w, x):
        return w * x

    def fwd(w, x):
        return scale(w, x), (w, x)

    def bwd(res, ct):
        w, x = res
        return 10.0 * tf.sum(ct * x), ct * w  # the w-cotangent is marked (x10)

    scale.defvjp(fwd, bwd)
    w, xs = tf.asarray(1.5), _t(6, 3, seed=8)
    gw, gx = tidu.grad(lambda w, xs: tf.sum(tidu.vmap(scale, in_axes=(None, 0))(w, xs)), argnums=(0, 1))(w, xs)
    np.testing.assert_allclose(float(gw), 10.0 * xs.numpy().sum(), rtol=1e-13)  # summed over the examples
    np.testing.assert_allclose(gx.numpy(), np.full((6, 3), 1.5), rtol=1e-15)
    per = tidu.vmap(tidu.grad(lambda w, x: tf.sum(scale(w, x))), in_axes=(None, 0))(w, xs).numpy()
    np.testing.assert_allclose(per, 10.0 * xs.numpy().sum(axis=1), rtol=1e-13)
