"""tenferro.jit: the API (cache, static and donated arguments, errors, inspection),
composition with tidu's transformations both ways, and the generated code
(buffer reuse, aliasing, constants, zeros). The passes have their own modules
(test_jit_passes.py, test_jit_contraction_passes.py); the op-family modules run their cases under jit too."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
from tidu.testing import check_grads

from helpers import rand


def _np(x):
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _same(a, b, rtol=0.0):
    """Equal to rounding: bit-identical unless ``rtol`` (the same NumPy kernels run)."""
    a, b = _np(a), _np(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    if rtol == 0.0:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(b), initial=0.0))))


def _loss(A, x):
    y = tf.tanh(A @ x) * tf.sin(x)
    return tf.sum(y * y) + tf.sum(A * A) / 3.0


def _closs(Z):
    return tf.real(tf.sum(tf.exp(Z) * tf.conj(Z))) + tf.sum(tf.abs(Z) ** 2)


@pytest.fixture
def ax():
    return tf.asarray(rand((4, 4), 1) * 0.5), tf.asarray(rand(4, 2))


def test_values_match_eager_bitwise(ax):
    A, x = ax
    jf = tf.jit(_loss)
    _same(jf(A, x), _loss(A, x))
    _same(jf(A, x), _loss(A, x))
    assert jf.cache_info().hits == 1 and jf.cache_info().traces == 1


# ---------------------------------------------------------------------------
# composition with tidu, both ways
# ---------------------------------------------------------------------------
def test_jit_of_value_and_grad(ax):
    A, x = ax
    vg = tidu.value_and_grad(_loss, argnums=(0, 1))
    (v1, (gA1, gx1)), (v0, (gA0, gx0)) = tf.jit(vg)(A, x), vg(A, x)
    _same(v1, v0)
    _same(gA1, gA0, 1e-14)
    _same(gx1, gx0, 1e-14)


def test_grad_of_jit_goes_through_the_call_primitive(ax):
    A, x = ax
    jf = tf.jit(_loss)
    g1 = tidu.grad(jf, argnums=(0, 1))(A, x)
    g0 = tidu.grad(_loss, argnums=(0, 1))(A, x)
    for a, b in zip(g1, g0):
        _same(a, b, 1e-14)
    call = jf._cache[next(iter(jf._cache))].call
    assert call._jvp, "the JVP split of the graph is cached on the call"
    tidu.grad(jf, argnums=(0, 1))(A, x)
    assert len(call._jvp) == 1 and len(next(iter(call._jvp.values()))[1]._transpose) == 1


def test_jvp_linearize_vjp_of_jit(ax):
    A, x = ax
    v = tf.asarray(rand(4, 5))
    f = lambda x: tf.tanh(A @ x) * x
    jf = tf.jit(f)
    for a, b in zip(tidu.jvp(jf, (x,), (v,)), tidu.jvp(f, (x,), (v,))):
        _same(a, b, 1e-14)
    _, lin = tidu.linearize(jf, x)
    _same(lin(v), tidu.jvp(f, (x,), (v,))[1], 1e-14)
    _, pull = tidu.vjp(jf, x)
    _same(pull(v)[0], tidu.vjp(f, x)[1](v)[0], 1e-14)


def test_second_order_both_ways(ax):
    A, x = ax
    f = lambda x: _loss(A, x)
    H0 = tidu.hessian(f)(x)
    _same(tidu.hessian(tf.jit(f))(x), H0, 1e-13)
    _same(tf.jit(tidu.hessian(f))(x), H0, 1e-13)
    v = tf.asarray(rand(4, 6))
    _same(tidu.hvp(tf.jit(f), (x,), (v,)), tidu.hvp(f, (x,), (v,)), 1e-13)
    _same(tf.jit(lambda x, v: tidu.jvp(tidu.grad(f), (x,), (v,))[1])(x, v), tidu.hvp(f, (x,), (v,))[0], 1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_check_grads_through_jit(dtype):
    a = rand((3, 3), 3) + (1j * rand((3, 3), 4) if dtype == np.complex128 else 0)
    Z = tf.asarray(a.astype(dtype))
    f = _closs if dtype == np.complex128 else (lambda Z: tf.sum(tf.tanh(Z @ Z) * Z))
    check_grads(tf.jit(f), (Z,), order=2)
    check_grads(tf.jit(tidu.grad(f)), (Z,), order=1)


def test_nested_jit_is_inlined(ax):
    A, x = ax
    inner = tf.jit(_loss)
    outer = tf.jit(lambda A, x: inner(A, x) * 2.0 + inner(A, x))
    _same(outer(A, x), _loss(A, x) * 2.0 + _loss(A, x), 1e-15)
    low = outer.lower(A, x)
    assert "call[" in low.as_text(optimized=False)
    assert "call[" not in low.as_text()
    _same(tidu.grad(outer, argnums=1)(A, x), tidu.grad(_loss, argnums=1)(A, x) * 3.0, 1e-13)


def test_closure_over_an_outer_tracer_runs_under_the_outer_transform(ax):
    A, x = ax

    def f(y):
        return tf.jit(lambda x: tf.sum(x * y))(x)  # y is a JVP tracer when differentiated

    _same(tidu.grad(f)(x), x)


# ---------------------------------------------------------------------------
# signatures and the cache
# ---------------------------------------------------------------------------
def test_cache_info_and_lru_eviction():
    f = tf.jit(lambda x: x * 2.0, maxsize=2)
    for n in (1, 2, 1, 3, 1, 2):
        f(tf.ones((n,)))
    info = f.cache_info()
    # 1 miss, 2 miss, 1 hit, 3 miss (evicts 2), 1 hit, 2 miss (evicts 3)
    assert (info.hits, info.misses, info.traces, info.size, info.maxsize) == (2, 4, 4, 2, 2)


def test_retrace_warning_names_the_change_once():
    f = tf.jit(lambda x: x * 2.0)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for n in range(1, 12):
            f(tf.ones((n,)))
    msgs = [str(r.message) for r in rec if issubclass(r.category, tf.RetraceWarning)]
    assert len(msgs) == 1 and "traced 8 times" in msgs[0]
    assert "leaf 0: f64[7]" in msgs[0] and "-> f64[8]" in msgs[0]


def test_signature_includes_dtype_and_placement_not_values():
    f = tf.jit(lambda x: x + 1.0)
    f(tf.ones((2,)))
    f(tf.asarray(np.array([5.0, 6.0])))
    assert f.cache_info().traces == 1
    f(tf.ones((2,), dtype=tf.complex128))
    assert f.cache_info().traces == 2


def test_static_arguments_and_python_scalars(ax):
    A, x = ax
    f = tf.jit(lambda x, n, scale: tf.sum(x**n) * scale, static_argnums=1)
    _same(f(x, 3, 2.0), tf.sum(x**3) * 2.0)
    f(x, 3, 2.0)
    assert f.cache_info().traces == 1
    f(x, 2, 2.0)  # a new static value traces again
    f(x, 2, 5.0)  # so does a new Python scalar (keyed by value)
    assert f.cache_info().traces == 3
    g = tf.jit(lambda x, *, power: tf.sum(x**power), static_argnames="power")
    _same(g(x, power=2), tf.sum(x**2))
    h = tf.jit(lambda x, n: x * n, static_argnums=-1)
    _same(h(x, 3), x * 3)


def test_numpy_arguments_kwargs_and_pytrees():
    f = tf.jit(lambda d, s=None: {"sum": tf.sum(d["a"]) * 2.0, "mm": d["b"] @ d["b"], "s": s})
    b = rand((2, 2))
    out = f({"a": np.arange(3.0), "b": b}, s=None)
    assert sorted(out) == ["mm", "s", "sum"] and out["s"] is None
    _same(out["sum"], tf.asarray(6.0))
    np.testing.assert_allclose(_np(out["mm"]), b @ b)
    f({"a": np.arange(3.0) + 1, "b": b}, s=None)
    assert f.cache_info().hits == 1


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body, what",
    [
        (lambda x: x if tf.sum(x) > 0 else -x, "control flow"),
        (lambda x: x * float(tf.sum(x)), "float()"),
        (lambda x: tf.asarray(np.asarray(x)), "NumPy array"),
    ],
)
def test_concrete_value_needed_is_a_typed_error(body, what):
    with pytest.raises(tf.JitError, match="static_argnums") as info:
        tf.jit(body)(tf.ones((3,)))
    assert isinstance(info.value, tf.TenferroError) and isinstance(info.value, tidu.TiduError)


def test_static_argument_errors():
    with pytest.raises(tf.JitError, match="unhashable"):
        tf.jit(lambda x, n: x * n[0], static_argnums=1)(tf.ones(2), [1])
    with pytest.raises(tf.JitError, match="static_argnums contains 3"):
        tf.jit(lambda x: x, static_argnums=3)(tf.ones(2))
    with pytest.raises(tidu.InvalidArgumentError, match="both static and donated"):
        tf.jit(lambda x: x, static_argnums=0, donate_argnums=0)
    with pytest.raises(tidu.InvalidArgumentError, match="callable"):
        tf.jit(3)


# ---------------------------------------------------------------------------
# inspection
# ---------------------------------------------------------------------------
def test_lower_text_source_and_cost():
    A = tf.asarray(rand((5, 3)))
    B = tf.asarray(rand((3, 7), 1))
    f = tf.jit(lambda A, B: tf.tanh(A @ B))
    low = f.lower(A, B)
    assert "dot_general" in low.as_text() and "tanh" in low.as_text(optimized=False)
    src = low.source()
    assert src.startswith("def ") and src.count("\n    v") == 2
    cost = low.cost()
    assert cost["flops"] >= 2 * 5 * 3 * 7 and cost["peak_bytes"] >= 8 * (15 + 21 + 35)
    assert set(cost) >= {"flops", "peak_bytes"}
    assert f.cache_info().traces == 1
    f(A, B)
    assert f.cache_info().hits == 1  # lower() filled the cache


# ---------------------------------------------------------------------------
# the generated code
# ---------------------------------------------------------------------------
@pytest.mark.cpu_only  # on a device every equation runs its impl (CuPy kernels), no buffer reuse
def test_buffer_reuse_is_in_place_and_correct():
    x = tf.asarray(rand((6, 5)))
    f = tf.jit(lambda x: tf.exp(tf.tanh(x * 2.0) + 1.0) * 3.0)
    low = f.lower(x)
    assert low.cost()["reused_buffers"] >= 3 and "_tanh(v0, v0)" in low.source()
    _same(f(x), tf.exp(tf.tanh(x * 2.0) + 1.0) * 3.0)
    assert np.array_equal(_np(x), rand((6, 5))), "the argument is untouched"


def test_no_reuse_of_a_buffer_a_view_still_reads():
    x = tf.asarray(rand((4, 6)))

    def f(x):
        y = tf.tanh(x)
        z = tf.reshape(y, (6, 4))  # may be a view of y's buffer
        w = tf.exp(y)  # y dies here: must not overwrite it while z lives
        return tf.sum(z, axis=0) + tf.sum(tf.reshape(w, (6, 4)), axis=0)

    _same(tf.jit(f)(x), f(x))


@pytest.mark.cpu_only  # as above
def test_donated_argument_buffer_is_reused():
    x = tf.asarray(rand(7))
    expect = np.tanh(rand(7)) + 1.0
    f = tf.jit(lambda x: tf.tanh(x) + 1.0, donate_argnums=0)
    assert "_tanh(a0, a0)" in f.lower(x).source()
    np.testing.assert_array_equal(_np(f(x)), expect)


def test_outputs_inputs_constants_and_zeros():
    x, y = tf.asarray(rand(3)), tf.asarray(rand(3, 1))
    f = tf.jit(lambda x, y: (x, tf.ones((2,)), tidu.grad(lambda x, y: tf.sum(x * x), argnums=1)(x, y)))
    a, c, gy = f(x, y)
    assert a is not x and a._data is x._data  # a new tensor over the argument's array (as JAX: not x itself)
    c._data[0] = 5.0  # the output's own buffer (host or device): the next call must not see it
    np.testing.assert_array_equal(_np(f(x, y)[1]), [1.0, 1.0])  # a constant output is a fresh copy
    np.testing.assert_array_equal(_np(gy), np.zeros(3))


def test_multiple_result_primitives_and_0d(ax):
    A, _ = ax
    f = lambda A: tf.sum(tf.linalg.qr(A)[1] ** 2)
    _same(tf.jit(f)(A), f(A), 1e-15)
    _same(tf.jit(tidu.grad(f))(A), tidu.grad(f)(A), 1e-13)
    s = tf.jit(lambda s: s * s + 1.0)(tf.asarray(2.0))
    assert _np(s).shape == () and float(s) == 5.0


@pytest.mark.parametrize(
    "shapes, dn",
    [
        (((4, 3), (3,)), (((1,), (0,)), ((), ()))),  # matrix @ vector
        (((3,), (3, 5)), (((0,), (0,)), ((), ()))),  # vector @ matrix
        (((3,), (3,)), (((0,), (0,)), ((), ()))),  # inner product (0-d)
        (((4, 3), (3, 5)), (((1,), (0,)), ((), ()))),  # matrix @ matrix
        (((4,), (5, 2)), (((), ()), ((), ()))),  # outer product
        (((2, 4, 3), (2, 3, 5)), (((2,), (1,)), ((0,), (0,)))),  # batched
        (((3, 4), (5, 3)), (((0,), (1,)), ((), ()))),  # transposed contraction
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_dot_general_kernels_match_eager_bitwise(shapes, dn, dtype):
    a, b = (
        tf.asarray((rand(s, i) + (1j * rand(s, i + 7) if dtype == np.complex128 else 0)).astype(dtype))
        for i, s in enumerate(shapes)
    )
    f = lambda a, b: tf.dot_general(a, b, dn)
    out = tf.jit(f)(a, b)
    _same(out, f(a, b))
    assert out.is_contiguous


def test_gauge_check_runs_in_the_compiled_gradient():
    """A loss that depends on the phase of singular vectors warns (or raises) under jit
    as it does eagerly: the check is staged into the program and runs with it."""
    r = np.random.default_rng(0)
    A = tf.asarray(r.standard_normal((4, 4)) + 1j * r.standard_normal((4, 4)))
    phase_dependent = lambda A: tf.real(tf.sum(tf.linalg.svd(A)[0][:, 0]))
    invariant = lambda A: tf.sum(tf.linalg.svd(A)[1] ** 2)
    for g in (tf.jit(tidu.grad(phase_dependent)), tidu.grad(tf.jit(phase_dependent))):
        for _ in range(2):  # every run checks, not only the tracing one
            with pytest.warns(tf.linalg.GaugeWarning):
                g(A)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.jit(tidu.grad(invariant))(A)
        tf.jit(tidu.hessian(invariant))(tf.real(A))
    g = tf.jit(tidu.grad(phase_dependent))
    with tf.linalg.settings(gauge="raise"):
        with pytest.raises(tf.linalg.GaugeError):
            g(A)


def test_ambient_settings_are_part_of_the_signature():
    """linalg settings (read by derivative rules at trace time) and the default
    placement key the cache: changing them traces again instead of replaying a
    program built under other settings."""
    A = tf.asarray(rand((3, 3)))
    g = tf.jit(tidu.grad(lambda A: tf.sum(tf.linalg.eigh(A + tf.transpose(A))[0] ** 3)))
    g(A)
    with tf.linalg.settings(gauge="raise"):
        g(A)
        g(A)
    g(A)
    info = g.cache_info()
    assert (info.traces, info.hits) == (2, 2)


def test_an_einsum_without_a_product_is_not_taken_for_a_new_buffer():
    """``einsum("ij->ij", x)`` compiles to its operand itself: an elementwise kernel reading it
    last must not write its result into that buffer (the caller's input)."""
    x = tf.asarray(np.arange(6.0).reshape(2, 3))
    before = x.numpy().copy()
    f = tf.jit(lambda x: tf.sin(tf.einsum("ij->ij", x)) * 2.0)
    np.testing.assert_allclose(f(x).numpy(), 2 * np.sin(before), rtol=1e-15)
    np.testing.assert_array_equal(x.numpy(), before)
