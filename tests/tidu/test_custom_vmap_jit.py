"""custom_jvp, custom_vjp and checkpoint under vmap and a compiled function (tenferro.jit),
with closures over batched and traced values; each derivative is compared with the same
function written without a custom rule (or with the rule's own formula where the rule
differs from the function's derivative on purpose). The toy value type of this folder has
no batching, so these use tenferro."""

import numpy as np
import pytest

import tidu

tf = pytest.importorskip("tenferro")

WS = np.array([1.0, 2.0, 3.0])
XS = np.array([[0.3, 0.7], [1.0, 2.0], [0.5, 0.1]])


def _data(dtype):
    ws, xs = tf.asarray(WS, dtype=dtype), tf.asarray(XS, dtype=dtype)
    if dtype == "complex128":
        ws, xs = ws * (1 + 0.5j), xs * (1 - 0.25j)
    return ws, xs


def _plain(w, x):
    return w * tf.sin(x)


def _make(w, kind):
    """w sin(x) with its true derivative as a rule; the function and its rule (fwd) close over w."""
    if kind == "custom_jvp":

        @tidu.custom_jvp
        def f(x):
            return w * tf.sin(x)

        f.defjvp(lambda p, t: (f(p[0]), w * tf.cos(p[0]) * t[0]))
        return f

    @tidu.custom_vjp
    def g(x):
        return w * tf.sin(x)

    g.defvjp(lambda x: (w * tf.sin(x), (x, w)), lambda r, ct: (r[1] * tf.cos(r[0]) * ct,))
    return g


def _loss(f):
    return lambda ws, xs: tf.sum(tf.real(tidu.vmap(f)(ws, xs)))


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.numpy()), np.asarray(b.numpy()), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_vmap_of_a_custom_function_closing_over_a_batched_value(kind, dtype):
    """It returned a leaked BatchTracer of shape (3, 2, 3) (the closure crossed with a second batch)."""
    ws, xs = _data(dtype)
    per = lambda w, x: _make(w, kind)(x)  # noqa: E731
    out = tidu.vmap(per)(ws, xs)
    assert type(out) is tf.Tensor and out.shape == (3, 2)
    _close(out, tidu.vmap(_plain)(ws, xs))
    _close(tidu.grad(_loss(per), argnums=1)(ws, xs), tidu.grad(_loss(_plain), argnums=1)(ws, xs))
    _close(tidu.grad(_loss(per), argnums=0)(ws, xs), tidu.grad(_loss(_plain), argnums=0)(ws, xs))  # fun's own
    per_grad = tidu.vmap(lambda w, x: tidu.grad(lambda x: tf.sum(tf.real(per(w, x))))(x))(ws, xs)
    _close(per_grad, tidu.vmap(lambda w, x: tidu.grad(lambda x: tf.sum(tf.real(_plain(w, x))))(x))(ws, xs))
    _close(tf.jit(tidu.vmap(per))(ws, xs), tidu.vmap(_plain)(ws, xs))
    if kind == "custom_jvp":
        t = tf.ones((3, 2), dtype=dtype)
        got = tidu.jvp(lambda xs: tidu.vmap(per)(ws, xs), (xs,), (t,))[1]
        _close(got, tidu.jvp(lambda xs: tidu.vmap(_plain)(ws, xs), (xs,), (t,))[1])
    with pytest.raises(tidu.CustomRuleError, match="closes over a value being differentiated"):
        tidu.grad(_loss(per), argnums=(0, 1))(ws, xs)


def test_vmap_of_a_rule_closing_over_a_batched_value():
    """Only the rule uses w (derivative w cos x on purpose; the function is sin x)."""
    ws, xs = _data("float64")

    def g(w, x):
        @tidu.custom_jvp
        def f(x):
            return tf.sin(x)

        f.defjvp(lambda p, t: (tf.sin(p[0]), w * tf.cos(p[0]) * t[0]))
        return f(x)

    want = WS[:, None] * np.cos(XS)
    np.testing.assert_allclose(tidu.grad(lambda xs: tf.sum(tidu.vmap(g)(ws, xs)))(xs).numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(
        tidu.vmap(lambda w, x: tidu.grad(lambda x: tf.sum(g(w, x)))(x))(ws, xs).numpy(), want, rtol=1e-15
    )
    t = tidu.jvp(lambda xs: tidu.vmap(g)(ws, xs), (xs,), (tf.ones((3, 2)),))[1]
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-15)


def test_vmap_bwd_closing_over_a_batched_value_is_an_error():
    ws, xs = _data("float64")

    def per(w, x):
        @tidu.custom_vjp
        def g(x):
            return w * tf.sin(x)

        g.defvjp(lambda x: (w * tf.sin(x), x), lambda x, ct: (w * tf.cos(x) * ct,))
        return g(x)

    _close(tidu.vmap(per)(ws, xs), tidu.vmap(_plain)(ws, xs))  # not differentiated: fine
    with pytest.raises(tidu.CustomRuleError, match="bwd of 'g' closes over a batched value of an enclosing vmap"):
        tidu.grad(_loss(per), argnums=1)(ws, xs)


def test_rules_are_checked_under_vmap_and_errors_name_the_function():
    x, y = tf.asarray([0.3, 0.7]), tf.asarray([1.0, 2.0])

    @tidu.custom_vjp
    def h(a, b):
        return a * b

    h.defvjp(lambda a, b: (a * b, (a, b)), lambda r, ct: (ct * r[1], ct * r[0], ct))  # 3 cotangents for 2
    with pytest.raises(tidu.CustomRuleError, match="bwd of 'h' must return a tuple of 2 cotangents"):
        tidu.grad(lambda a, b: tf.sum(tidu.vmap(h)(a, b)), argnums=(0, 1))(x, y)
    h.defvjp(lambda a, b: (a * b, (a, b)), lambda r, ct: (ct * r[1] * tf.ones((3,)), ct * r[0]))  # wrong shape
    with pytest.raises(
        tidu.CustomRuleError, match=r"bwd of 'h' returned a cotangent of type f64\[3\], expected f64\[\]"
    ):
        tidu.grad(lambda a, b: tf.sum(tidu.vmap(h, in_axes=(0, None))(a, b)), argnums=(0, 1))(x, y[0])

    @tidu.custom_jvp
    def g(x):
        return tf.sin(x), tf.cos(x)

    g.defjvp(lambda p, t: (g(p[0]), [tf.cos(p[0]) * t[0], -tf.sin(p[0]) * t[0]]))  # a list for a tuple
    with pytest.raises(tidu.CustomRuleError, match="custom_jvp rule of 'g': primal output structure"):
        tidu.grad(lambda x: tf.sum(tidu.vmap(g)(x)[0]))(x)
    g.defjvp(lambda p, t: (g(p[0]), (t[0], t[0]), 0))  # a triple
    with pytest.raises(tidu.CustomRuleError, match="custom_jvp rule of 'g' must return a pair"):
        tidu.jvp(tidu.vmap(g), (x,), (x,))


def test_rules_returning_zero_under_vmap():
    """A rule's symbolic zero (tidu.Zero or None) met vmap's output check (UnbatchableError)."""
    x = tf.asarray([[0.3, 0.7], [0.2, 0.5]])
    for zero in (lambda c: tidu.Zero.like(c), lambda c: None):

        @tidu.custom_jvp
        def f(x):
            return tf.sin(x), tf.cos(x)

        @f.defjvp
        def f_jvp(p, t):
            s, c = f(p[0])
            return (s, c), (2 * tf.cos(p[0]) * t[0], zero(c))  # derivative 2 cos, 0 on purpose

        loss = lambda x: tf.sum(f(x)[0]) + tf.sum(f(x)[1])  # noqa: E731
        want = 2 * np.cos(x.numpy())
        np.testing.assert_allclose(tidu.grad(lambda x: tf.sum(tidu.vmap(loss)(x)))(x).numpy(), want, rtol=1e-15)
        np.testing.assert_allclose(tidu.vmap(tidu.grad(loss))(x).numpy(), want, rtol=1e-15)
        _, (t0, t1) = tidu.jvp(tidu.vmap(f), (x,), (tf.ones((2, 2)),))
        np.testing.assert_allclose(t0.numpy(), want, rtol=1e-15)
        np.testing.assert_array_equal(t1.numpy(), 0.0)


def test_vmap_of_forward_mode_through_checkpoint_and_custom_vjp():
    x, basis = tf.asarray([0.3, 0.7]), tf.asarray(np.eye(2))
    c = tidu.checkpoint(lambda x: tf.sin(tf.sin(x)))
    plain = lambda x: tf.sin(tf.sin(x))  # noqa: E731
    want = tidu.vmap(lambda t: tidu.jvp(plain, (x,), (t,))[1])(basis)
    _close(tidu.vmap(lambda t: tidu.jvp(c, (x,), (t,))[1])(basis), want)
    _close(tidu.vmap(tidu.linearize(c, x)[1])(basis), want)

    @tidu.custom_vjp
    def v(x):
        return tf.sin(x)

    v.defvjp(lambda x: (tf.sin(x), x), lambda x, ct: (tf.cos(x) * ct,))
    with pytest.raises(tidu.NonDifferentiableError, match="forward-mode differentiation .* custom_vjp function 'v'"):
        tidu.vmap(lambda t: tidu.jvp(v, (x,), (t,))[1])(basis)


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_jit_of_a_custom_function_closing_over_a_traced_value(kind):
    """Closure conversion: the traced value is an operand of the staged call."""
    w, x = tf.asarray(2.0), tf.asarray([0.3, 0.7])
    f = lambda w, x: tf.sum(_make(w, kind)(x))  # noqa: E731
    p = lambda w, x: tf.sum(_plain(w, x))  # noqa: E731
    _close(tf.jit(lambda w, x: _make(w, kind)(x))(w, x), _plain(w, x))
    _close(tf.jit(tidu.grad(f, argnums=1))(w, x), tidu.grad(p, argnums=1)(w, x))
    _close(tidu.grad(tf.jit(f), argnums=1)(w, x), tidu.grad(p, argnums=1)(w, x))
    _close(tf.jit(tidu.grad(f, argnums=0))(w, x), tidu.grad(p, argnums=0)(w, x))  # the function's derivative
    with pytest.raises(tidu.CustomRuleError, match="closes over a value being differentiated"):
        tidu.grad(tf.jit(f), argnums=(0, 1))(w, x)


def test_jit_of_a_custom_vjp_whose_bwd_closes_over_a_traced_value():
    w, x = tf.asarray(2.0), tf.asarray([0.3, 0.7])

    def f(w, x):
        @tidu.custom_vjp
        def g(x):
            return w * tf.sin(x)

        g.defvjp(lambda x: (w * tf.sin(x), x), lambda x, ct: (w * tf.cos(x) * ct,))
        return tf.sum(g(x))

    p = lambda w, x: tf.sum(_plain(w, x))  # noqa: E731
    _close(tf.jit(tidu.grad(f, argnums=1))(w, x), tidu.grad(p, argnums=1)(w, x))  # bwd runs inside the trace
    # bwd runs after it: traced into a graph taking w (closure-converted, as fwd), it no longer
    # meets the finished tracer (it raised CustomRuleError "bwd of 'g' uses a traced value ...")
    _close(tidu.grad(tf.jit(f), argnums=1)(w, x), tidu.grad(p, argnums=1)(w, x))


def test_compiled_checks_and_integer_outputs():
    x = tf.asarray([0.3, 0.7])

    @tidu.custom_jvp
    def f(x):
        return tf.sin(x)

    f.defjvp(lambda p, t: (tf.sin(p[0])[0], tf.cos(p[0])[0] * t[0][0]))  # a scalar for a vector
    with pytest.raises(tidu.CustomRuleError, match=r"rule of 'f' returned a primal output \(leaf 0\) of type f64\[\]"):
        tidu.grad(tf.jit(lambda x: tf.sum(f(x))))(x)  # it raised NumPy's AxisError

    @tidu.custom_vjp
    def g(x):
        return tf.sin(x), tf.asarray(1)  # an integer output

    g.defvjp(lambda x: (g.fun(x), x), lambda x, cts: (tf.cos(x) * cts[0],))
    want = tidu.grad(lambda x: tf.sum(tf.sin(x)))(x)
    _close(tidu.grad(lambda x: tf.sum(g(x)[0]))(x), want)
    _close(tf.jit(tidu.grad(lambda x: tf.sum(g(x)[0])))(x), want)
    _close(tidu.grad(tf.jit(lambda x: tf.sum(g(x)[0])))(x), want)


def test_static_arguments_under_jit_and_vmap():
    x = tf.asarray([0.3, 0.7])

    @tidu.custom_jvp
    def f(x, n, mode):
        return (tf.sin(x) if mode == "sin" else tf.cos(x)) * n

    f.defjvp(lambda p, t: (f(*p), (tf.cos(p[0]) if p[2] == "sin" else -tf.sin(p[0])) * t[0] * p[1]))

    @tidu.custom_vjp
    def v(x, n):
        return tf.sin(x) * n

    v.defvjp(lambda x, n: (tf.sin(x) * n, (x, n)), lambda r, ct: (tf.cos(r[0]) * ct * r[1], None))
    want = 3 * np.cos(x.numpy())
    for g in (lambda x: f(x, 3, "sin"), lambda x: f(x, 3.0, "sin"), lambda x: v(x, 3)):
        loss = lambda x: tf.sum(g(x))  # noqa: E731
        _close(tf.jit(g)(x), 3 * tf.sin(x))
        for got in (tf.jit(tidu.grad(loss))(x), tidu.grad(tf.jit(loss))(x), tidu.vmap(tidu.grad(g))(x)):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
        np.testing.assert_allclose(tidu.grad(lambda x: tf.sum(tidu.vmap(g)(x)))(x).numpy(), want, rtol=1e-15)


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_nested_vmaps_and_closures(kind):
    """Closing over the outer vmap's value works at any depth; over a value batched by a vmap
    inside the one that meets the call (the arguments do not depend on it), a typed error
    naming the function (it leaked a tracer)."""
    ws, xs = tf.asarray(WS), tf.asarray(XS[:2])
    outer = lambda mk, xs=xs: tidu.vmap(lambda w: tidu.vmap(lambda x: mk(w)(x))(xs))(ws)  # noqa: E731
    mk = lambda w: _make(w, kind)  # noqa: E731
    _close(outer(mk), outer(lambda w: lambda x: _plain(w, x)))
    per_x = lambda mk: tidu.vmap(lambda w: tidu.vmap(lambda x: tidu.grad(lambda x: tf.sum(mk(w)(x)))(x))(xs))(ws)  # noqa: E731
    _close(per_x(mk), per_x(lambda w: lambda x: _plain(w, x)))
    _close(
        tidu.jacrev(lambda xs: tidu.vmap(mk(ws[1]))(xs))(xs),
        tidu.jacrev(lambda xs: tidu.vmap(lambda x: _plain(ws[1], x))(xs))(xs),
    )
    with pytest.raises(
        tidu.CustomRuleError, match="'[fg]' closes over a value of a transformation applied inside the vmap"
    ):
        tidu.vmap(lambda x: tidu.vmap(lambda w: mk(w)(x))(ws))(xs)
    with pytest.raises(
        tidu.CustomRuleError, match="closes over a value of a transformation applied inside the derivative"
    ):
        tidu.grad(lambda xs: tf.sum(outer(mk, xs)))(xs)  # w's vmap lies between grad and the vmap of x


def test_checkpoint_saves_memory_under_jit_of_grad():
    """tenferro.jit of a gradient through ten checkpointed segments of ten sines: the compiled
    program's peak memory is the ten segment inputs and one segment's residuals, not the
    hundred residuals (the recomputation was merged with the forward pass)."""
    x = tf.asarray(np.linspace(0.1, 1.0, 100_000))  # 0.8 MB a value

    def seg(x):
        for _ in range(10):
            x = tf.sin(x)
        return x

    def body(x, s=seg):
        for _ in range(10):
            x = s(x)
        return tf.sum(x)

    ck = tidu.checkpoint(seg)
    plain, ckpt = tf.jit(tidu.grad(body)), tf.jit(tidu.grad(lambda x: body(x, ck)))
    _close(ckpt(x), plain(x))
    peak_plain, peak_ckpt = plain.lower(x).cost()["peak_bytes"], ckpt.lower(x).cost()["peak_bytes"]
    assert peak_plain > 100 * x.numpy().nbytes  # the hundred cosines
    assert peak_ckpt < 0.25 * peak_plain  # (0.19 measured: 19 values of 0.8 MB against 101)
