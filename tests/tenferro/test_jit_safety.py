"""tenferro.jit's safety contract (issue 21): buffer donation as in JAX (a donated
tensor is consumed and deleted; a buffer that is not exclusively owned is copied
with a warning), ``jit`` nested to any depth and under any stack of tidu
transformations, and the arguments of ``jit`` and of a jitted function checked with
typed errors that name the argument or output."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tenferro.jit import is_deleted

from helpers import rand


def _np(x):
    return np.asarray(x.numpy() if isinstance(x, tf.Tensor) else x)


def _close(got, want, rtol=1e-12):
    got, want = _np(got), _np(want)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


def _exp2(a):
    return tf.exp(a) * 2.0


@pytest.fixture
def no_warnings():
    """Warnings are errors, but for a GPU program that cannot be captured into a
    CUDA graph (linalg reads the host): it warns once and runs uncaptured."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", tf.GraphCaptureWarning)
        yield


# ---------------------------------------------------------------------------
# 1. donation: a donated tensor is consumed
# ---------------------------------------------------------------------------
USES = {
    "call again": lambda h, y: h(y),
    "another jit": lambda h, y: tf.jit(lambda a: a + 1.0)(y),
    "operation": lambda h, y: tf.exp(y),
    "operator": lambda h, y: y + 1.0,
    "reflected operator": lambda h, y: tf.ones((4,)) * y,
    "numpy": lambda h, y: y.numpy(),
    "np.asarray": lambda h, y: np.asarray(y),
    "repr": lambda h, y: repr(y),
    "shape": lambda h, y: y.shape,
    "index": lambda h, y: y[0],
    "float": lambda h, y: float(y[0]),
    "copy": lambda h, y: y.copy(),
    "grad": lambda h, y: tidu.grad(lambda a: tf.sum(a * a))(y),
    "einsum": lambda h, y: tf.einsum("i,i->", y, y),
}


@pytest.mark.parametrize("use", USES, ids=list(USES))
def test_a_donated_tensor_is_deleted_and_any_use_raises(use, no_warnings):
    h = tf.jit(_exp2, donate_argnums=0)
    y = tf.asarray(rand(4))
    out = h(y)
    # bit for bit the eager result where the tensors live (a GPU's exp may differ from NumPy's in the last bit)
    _close(out, _exp2(tf.asarray(rand(4))), 0.0)
    assert is_deleted(y) and not is_deleted(out)
    with pytest.raises(tf.DeletedTensorError) as info:
        USES[use](h, y)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, tf.TenferroError)
    msg = str(info.value)
    assert "donated to tenferro.jit(_exp2)" in msg and "argument 0 (a)" in msg and "x.copy()" in msg


def test_chained_donation_reuses_the_buffer_without_warnings(no_warnings):
    h = tf.jit(_exp2, donate_argnums=0)
    y = tf.asarray(rand((3, 2)) * 0.1)
    expect = np.exp(np.exp(rand((3, 2)) * 0.1) * 2.0) * 2.0
    y1 = h(y)
    buf = y1.numpy().__array_interface__["data"][0]
    y2 = h(y1)  # the result of a donating call is exclusively owned
    assert y2.numpy().__array_interface__["data"][0] == buf or tf.get_default_placement().is_gpu
    _close(y2, expect, 1e-15)
    assert is_deleted(y) and is_deleted(y1) and not is_deleted(y2)


def test_donation_by_keyword_by_name_and_of_a_pytree(no_warnings):
    h = tf.jit(lambda a, b: tf.exp(a) + b, donate_argnums=0)
    y, z = tf.asarray(rand(3)), tf.asarray(rand(3, 1))
    _close(h(b=z, a=y), np.exp(rand(3)) + rand(3, 1))
    assert is_deleted(y) and not is_deleted(z)  # donate_argnums=0 is the parameter a, by keyword too
    g = tf.jit(lambda a, b: tf.exp(a) + b, donate_argnames="b")
    y, z = tf.asarray(rand(3)), tf.asarray(rand(3, 1))
    g(y, z)
    assert is_deleted(z) and not is_deleted(y)
    p = tf.jit(lambda d: {"s": d["u"] * 2.0, "t": d["v"] + 1.0}, donate_argnums=0)
    d = {"u": tf.asarray(rand(2)), "v": tf.asarray(rand(2, 1))}
    out = p(d)
    assert is_deleted(d["u"]) and is_deleted(d["v"]) and not is_deleted(out["s"])


def test_an_output_that_is_the_donated_argument_stays_valid(no_warnings):
    ident = tf.jit(lambda a: a, donate_argnums=0)
    y = tf.asarray(rand(5))
    out = ident(y)
    assert out is not y and is_deleted(y)
    _close(out, rand(5), 0.0)


def test_donation_consumes_direct_calls_only_not_transformed_ones(no_warnings):
    h = tf.jit(lambda a: tf.sum(tf.exp(a)), donate_argnums=0)
    y = tf.asarray(rand(4))
    _close(tidu.grad(h)(y), np.exp(rand(4)))  # h runs on a tracer: nothing to donate
    assert not is_deleted(y)
    _close(h(y), np.sum(np.exp(rand(4))))
    assert is_deleted(y)


# ---------------------------------------------------------------------------
# 1b. donation of a buffer that is not exclusively owned: a copy, with a warning
# ---------------------------------------------------------------------------
def _donate_with_warning(h, *args, fragment):
    with pytest.warns(tf.DonationWarning, match="not usable") as rec:
        out = h(*args)
    assert any(fragment in str(r.message) for r in rec), [str(r.message) for r in rec]
    return out


def test_the_same_tensor_passed_twice_is_not_overwritten():
    g = tf.jit(lambda a, b: tf.exp(a) + b, donate_argnums=0)
    xx = tf.asarray(rand(3))
    out = _donate_with_warning(g, xx, xx, fragment="passed as another argument")
    _close(out, np.exp(rand(3)) + rand(3))
    assert not is_deleted(xx)
    _close(xx, rand(3), 0.0)
    h2 = tf.jit(lambda a, b: tf.exp(a) * b, donate_argnums=(0, 1))
    _close(_donate_with_warning(h2, xx, xx, fragment="argument 1 (b)"), np.exp(rand(3)) * rand(3))


def test_donating_a_view_leaves_its_base_untouched():
    h = tf.jit(_exp2, donate_argnums=0)
    base = tf.asarray(rand((2, 3)))
    v = tf.reshape_view(base, (6,))
    out = _donate_with_warning(h, v, fragment="does not own its buffer")
    _close(out, np.exp(rand((2, 3)).reshape(6, order="F")) * 2.0)
    _close(base, rand((2, 3)), 0.0)
    assert not is_deleted(v) and not is_deleted(base)


@pytest.mark.cpu_only  # NumPy views (on a device, every view is copied)
def test_a_view_whose_owner_nothing_else_references_is_donated(no_warnings):
    h = tf.jit(_exp2, donate_argnums=0)
    v = tf.reshape_view(tf.asarray(rand((2, 3))), (6,))
    h(v)
    assert is_deleted(v)


@pytest.mark.cpu_only  # host memory shared with a NumPy array
def test_donating_a_tensor_over_a_users_numpy_array_leaves_the_array_untouched():
    h = tf.jit(_exp2, donate_argnums=0)
    user = rand(4)
    t = tf.asarray(user)  # 1-d: no copy, t wraps the user's array
    out = _donate_with_warning(h, t, fragment="shared with another object")
    np.testing.assert_array_equal(user, rand(4))
    _close(out, np.exp(rand(4)) * 2.0)
    m = np.asfortranarray(rand((3, 3)))
    _donate_with_warning(h, tf.asarray(m), fragment="shared")
    np.testing.assert_array_equal(m, rand((3, 3)))
    kept = tf.asarray(rand(4))
    arr = kept.numpy()  # the caller holds the buffer itself
    _donate_with_warning(h, kept, fragment="shared")
    np.testing.assert_array_equal(arr, rand(4))


@pytest.mark.cpu_only  # a memory-mapped file
def test_donating_a_read_only_memory_mapped_tensor_copies(tmp_path):
    np.save(tmp_path / "a.npy", rand(4))
    mm = np.load(tmp_path / "a.npy", mmap_mode="r")
    t = tf.asarray(mm)
    del mm
    h = tf.jit(_exp2, donate_argnums=0)
    out = _donate_with_warning(h, t, fragment="read-only (a memory-mapped file)")
    _close(out, np.exp(rand(4)) * 2.0)
    _close(t, rand(4), 0.0)


@pytest.mark.cpu_only  # NumPy arrays as arguments
def test_a_numpy_argument_is_converted_and_never_overwritten(no_warnings):
    h = tf.jit(_exp2, donate_argnums=0)
    a1, a2 = rand(5), rand((3, 4))
    _close(h(a1), np.exp(rand(5)) * 2.0)  # shared by asarray: copied silently
    _close(h(a2), np.exp(rand((3, 4))) * 2.0)  # copied by asarray (C order): donated
    np.testing.assert_array_equal(a1, rand(5))
    np.testing.assert_array_equal(a2, rand((3, 4)))


def test_donating_a_constant_the_function_closes_over():
    w = tf.asarray(rand(3))
    h = tf.jit(lambda a: tf.exp(a) * w, donate_argnums=0)
    out = _donate_with_warning(h, w, fragment="constant")
    _close(out, np.exp(rand(3)) * rand(3))
    _close(h(tf.asarray(rand(3, 1))), np.exp(rand(3, 1)) * rand(3))  # the constant is intact
    assert not is_deleted(w)


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


# ---------------------------------------------------------------------------
# 3. the arguments of jit, and of a jitted function
# ---------------------------------------------------------------------------
def _two(x, n):
    return x * n


BAD_SETTINGS = [
    ({"static_argnums": "1"}, "static_argnums must be an int"),
    ({"static_argnums": 1.5}, "static_argnums must be an int"),
    ({"static_argnums": (0, "n")}, "static_argnums must be an int"),
    ({"static_argnums": True}, "static_argnums must be an int"),
    ({"static_argnums": 2}, "static_argnums contains 2, but the function takes 2 positional arguments"),
    ({"static_argnums": -3}, "static_argnums contains -3"),
    ({"static_argnames": 3}, "static_argnames must be a str"),
    ({"static_argnames": "m"}, "static_argnames contains 'm', which is not a parameter"),
    ({"donate_argnums": "0"}, "donate_argnums must be an int"),
    ({"donate_argnums": 5}, "donate_argnums contains 5"),
    ({"donate_argnames": ["y"]}, "donate_argnames contains 'y'"),
    ({"maxsize": -1}, "maxsize must be a non-negative int"),
    ({"maxsize": 2.5}, "maxsize must be a non-negative int"),
    ({"static_argnames": "x", "donate_argnums": 0}, "both static and donated"),
    ({"static_argnums": 1, "donate_argnames": "n"}, "both static and donated"),
    # negative indices are resolved against the signature before the check
    ({"static_argnums": -1, "donate_argnums": 1}, "both static and donated (1 is in both"),
    ({"static_argnums": 1, "donate_argnums": -1}, "both static and donated (1 is in both"),
    ({"static_argnums": (0, -1), "donate_argnums": (-2,)}, "both static and donated (0 is in both"),
    ({"static_argnames": "x", "donate_argnums": -2}, "both static and donated (0 is in both"),
    ({"static_argnums": -1, "donate_argnames": "n"}, "both static and donated (1 is in both"),
]


@pytest.mark.parametrize("kwargs, fragment", BAD_SETTINGS, ids=[str(k) for k, _ in BAD_SETTINGS])
def test_bad_settings_raise_at_jit_time(kwargs, fragment):
    with pytest.raises(tf.JitArgumentError) as info:
        tf.jit(_two, **kwargs)
    err = info.value
    assert fragment in str(err), str(err)
    assert isinstance(err, ValueError) and isinstance(err, tf.JitError) and isinstance(err, tidu.InvalidArgumentError)


@pytest.mark.filterwarnings("ignore::tenferro.RetraceWarning")
def test_none_settings_mean_none_and_maxsize_zero_or_unbounded():
    x = tf.asarray(rand(3))
    f = tf.jit(_two, static_argnums=None, static_argnames=None, donate_argnums=None)
    _close(f(x, 2.0), x * 2.0)
    z = tf.jit(lambda a: a * 2.0, maxsize=0)
    z(x), z(x)
    assert z.cache_info()[:4] == (0, 2, 2, 0)
    u = tf.jit(lambda a: a * 2.0, maxsize=None)
    for n in range(1, 70):
        u(tf.ones((n,)))
    assert u.cache_info().size == 69


def test_a_static_argument_by_keyword_or_by_position_is_resolved_through_the_signature():
    x = tf.asarray(rand(3))
    f = tf.jit(lambda x, n: x**n, static_argnums=1)
    _close(f(x, n=3), x**3)
    _close(f(x, 3), x**3)
    assert f.cache_info().traces == 2  # by keyword and by position: two signatures
    g = tf.jit(lambda x, n: x * n if n > 1 else x, static_argnames="n")
    _close(g(x, 3), x * 3)  # a static name passed by position
    h = tf.jit(lambda x, n=2: x**n, static_argnums=1)
    _close(h(x), x**2)  # not passed at all: its default
    with pytest.raises(tf.JitError, match="keyword argument 'n' is static but unhashable"):
        f(x, n=[3])


class _Opaque:
    pass


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (object(), "argument 1 (s) is of type object (<object object at"),
        (_two, "argument 1 (s) is of type function (<function _two"),
        (range(3), "argument 1 (s) is of type range (range(0, 3))"),  # (``...`` is static: einsum label lists)
        (_Opaque(), "test_jit_safety._Opaque (<"),
        ({1, 2}, "argument 1 (s) is of type set ({1, 2})"),
    ],
)
def test_a_non_array_argument_is_named(bad, fragment):
    f = tf.jit(lambda x, s: x)
    with pytest.raises(tf.JitError) as info:
        f(tf.ones(2), bad)
    msg = str(info.value)
    assert fragment in msg and "static_argnums" in msg and "Python scalars and strings" in msg


def test_non_array_leaves_of_pytrees_and_keywords_are_named():
    f = tf.jit(lambda d, **kw: d["a"])
    with pytest.raises(
        tf.JitError, match=r"leaf 1 of argument 0 \(d\) \(structure PyTreeDef\(\{'a': \*, 'b': \*\}\)\)"
    ):
        f({"a": tf.ones(2), "b": object()})
    with pytest.raises(tf.JitError, match="keyword argument 'opt' is of type builtin_function_or_method"):
        f({"a": tf.ones(2)}, opt=print)
    g = tf.jit(lambda x, how: x * 2.0 if how is None else x, static_argnames="how")
    _close(g(tf.ones(2), None), tf.full((2,), 2.0))
    _close(g(tf.ones(2), _Opaque()), tf.ones(2))  # static: keyed by the object (its hash)


def test_strings_dtypes_and_placements_are_static_by_value_other_objects_are_not():
    x = tf.asarray(rand(3))
    with pytest.raises(tf.JitError, match=r"leaf 0 of argument 0 \(structure PyTreeDef\(\[\*\]\)\) is of type object"):
        tf.jit(tf.einsum)([object()], x)
    e = tf.jit(tf.einsum)
    _close(e("i,i->", x, x), tf.sum(x * x))
    _close(e("i->i", x), x)
    assert e.cache_info().traces == 2
    z = tf.jit(lambda shape, dtype, placement: tf.zeros(shape, dtype=dtype, placement=placement))
    assert z((2,), tf.float32, tf.get_default_placement()).dtype == tf.float32
    f = tf.jit(lambda x, mode: x * 2.0 if mode == "double" else x)
    _close(f(x, "double"), x * 2.0)
    _close(f(x, "same"), x)


@pytest.mark.parametrize(
    "body, fragment",
    [
        (lambda a: np.ones(3), "the output is of type numpy.ndarray"),
        (lambda a: object(), "the output is of type object"),
        (lambda a: (a, "done"), "output leaf 1 (output structure PyTreeDef((*, *)))"),
        (lambda a: {"x": a, "f": len}, "output leaf 0"),
    ],
)
def test_a_non_array_output_is_named(body, fragment):
    with pytest.raises(tf.JitError) as info:
        tf.jit(body)(tf.ones(3))
    assert fragment in str(info.value) and "returns arrays" in str(info.value)


def test_scalar_outputs_are_returned_as_they_are():
    f = lambda a: (a * 2.0, 3, 2.5, np.float64(1.5), None)  # noqa: E731
    x = tf.asarray(rand(3))
    got, want = tf.jit(f)(x), f(x)
    _close(got[0], want[0], 0.0)
    assert got[1:] == want[1:] and type(got[1]) is int and type(got[3]) is np.float64
    g = tf.jit(lambda a: (tf.sum(a * a), 7))
    _close(tidu.grad(lambda a: g(a)[0])(x), x * 2.0)
    _close(tf.jit(lambda a: g(a)[1] * a)(x), x * 7.0)


# ---------------------------------------------------------------------------
# 4. signature keys: static values with their type, signed zeros, NaN
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("static", [False, True], ids=["scalar", "static_argnums"])
@pytest.mark.parametrize(
    "zero",
    [0.0, np.float64(0.0), np.float32(0.0), complex(0.0, 0.0)],
    ids=["float", "np.float64", "np.float32", "complex"],
)
def test_minus_zero_does_not_reuse_the_program_of_zero(static, zero):
    f = lambda x, s: x / s  # noqa: E731
    h = tf.jit(f, static_argnums=1 if static else None)
    x = tf.asarray(np.array([1.0, -2.0]))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in (zero, -zero, zero, -zero):
            got, want = h(x, s), f(x, s)
            np.testing.assert_array_equal(_np(got), _np(want))
            assert np.signbit(np.real(_np(got))).tolist() == np.signbit(np.real(_np(want))).tolist()
    assert h.cache_info()[:3] == (2, 2, 2)


@pytest.mark.parametrize("how", ["scalar", "static_argnums", "static_argnames", "in a static tuple"])
def test_a_nan_scalar_finds_its_program_again(how):
    x = tf.asarray(rand(3))
    if how == "in a static tuple":
        h = tf.jit(lambda x, s: x + s[1], static_argnums=1)
        call = lambda: h(x, (1, float("nan")))  # noqa: E731
    elif how == "static_argnames":
        h = tf.jit(lambda x, s: x + s, static_argnames="s")
        call = lambda: h(x, s=float("nan"))  # noqa: E731
    else:
        h = tf.jit(lambda x, s: x + s, static_argnums=1 if how == "static_argnums" else None)
        call = lambda: h(x, float("nan"))  # noqa: E731
    for _ in range(3):
        assert np.isnan(_np(call())).all()
    assert h.cache_info()[:3] == (2, 1, 1)


@pytest.mark.parametrize("static", [{"static_argnums": 1}, {"static_argnames": "n"}], ids=["argnums", "argnames"])
def test_static_arguments_are_keyed_with_their_type(static):
    x = tf.ones(2)
    h = tf.jit(lambda x, n: tf.full((2,), n), **static)
    for n in (1, 1.0, True, 1, np.float32(1.0), 1 + 0j):
        assert h(x, n).dtype == tf.full((2,), n).dtype, n
    assert h.cache_info().traces == 5
    t = tf.jit(lambda x, n: tf.full((2,), n[1][1]), **static)
    for n in (("a", (0, 1)), ("a", (0, 1.0)), ("a", (0, True))):
        assert t(x, n).dtype == tf.full((2,), n[1][1]).dtype, n
    assert t.cache_info().traces == 3


def test_a_retrace_names_the_static_value_with_its_type():
    h = tf.jit(lambda x, n: x * n, static_argnums=1, maxsize=None)
    x = tf.ones(2)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for n in (1, 2, 3, 4, 5, 6, 7, 7.0):
            h(x, n)
    msgs = [str(r.message) for r in rec if issubclass(r.category, tf.RetraceWarning)]
    assert len(msgs) == 1 and "int(7)" in msgs[0] and "float(7.0)" in msgs[0], msgs


def test_a_negative_static_index_names_the_last_parameter():
    x = tf.asarray(rand(3))
    h = tf.jit(lambda x, n=2: x**n, static_argnums=-1)
    assert h.static_argnums == (1,) and h.static_argnames == ("n",)
    _close(h(x), x**2)  # n left to its default: x stays dynamic
    _close(h(x, 3), x**3)
    _close(h(x, n=3), x**3)  # static by keyword too


def test_negative_indices_of_a_function_taking_args_are_checked_at_call_time(no_warnings):
    def f(x, *rest):
        return x * 2.0

    h = tf.jit(f, static_argnums=-1, donate_argnums=0)  # cannot be resolved yet
    y = tf.asarray(rand(3))
    with pytest.raises(
        tf.JitArgumentError,
        match=r"both static and donated \(called with 1 positional argument, "
        r"argument 0 \(x\) is both",
    ):
        h(y)
    assert not is_deleted(y)
    _close(h(y, "mode"), rand(3) * 2.0)  # -1 is "mode": static; x donated
    assert is_deleted(y)
    g = tf.jit(f, static_argnames="x", donate_argnums=-2)
    with pytest.raises(tf.JitArgumentError, match="both static and donated"):
        g(tf.ones(2), tf.ones(2))


# ---------------------------------------------------------------------------
# 5. donation when the call raises
# ---------------------------------------------------------------------------
def test_a_call_that_raises_before_writing_leaves_the_donated_argument_valid(no_warnings):
    bad = np.array([[1.0, np.nan], [0.0, 1.0]], order="F")
    h = tf.jit(tf.linalg.inv, donate_argnums=0)
    t = tf.asarray(bad.copy(order="F"))
    with pytest.raises(tf.linalg.NonFiniteError):
        h(t)
    assert not is_deleted(t)
    np.testing.assert_array_equal(_np(t), bad)
    t2 = tf.asarray(np.array([[2.0, 0.0], [0.0, 4.0]], order="F"))
    _close(h(t2), np.diag([0.5, 0.25]))
    assert is_deleted(t2)


@pytest.mark.parametrize(
    "body, value",
    [
        (lambda a: tf.linalg.inv(tf.exp(a)), np.inf),  # exp writes into a's buffer, inv raises on inf
        (lambda a: tf.linalg.inv(tf.log(a) + 1.0), 0.0),  # log runs quietly: the lines sit under np.errstate
    ],
    ids=["exp", "quiet log"],
)
def test_a_call_that_raises_after_writing_deletes_the_donated_argument(body, value, no_warnings):
    h = tf.jit(body, donate_argnums=0)
    t = tf.asarray(np.array([[value, 1.0], [2.0, 1.0]], order="F"))
    writes = h.lower(t).cost()["reused_buffers"] >= 1  # on the CPU the program writes into its argument;
    with pytest.raises(tf.linalg.NonFiniteError):  # device programs never write into an input
        h(t)
    if not writes:
        assert not is_deleted(t)
        np.testing.assert_array_equal(_np(t), np.array([[value, 1.0], [2.0, 1.0]]))
        return
    assert is_deleted(t)
    with pytest.raises(tf.DeletedTensorError, match="which raised NonFiniteError after writing into its buffer"):
        t.numpy()


@pytest.mark.parametrize("inv_first", [True, False], ids=["inv first", "a written first"])
def test_each_donated_argument_is_kept_or_deleted_by_where_the_call_raised(inv_first, no_warnings):
    """``a`` is written (``a * 2.0`` and ``log`` into its buffer, quietly) before or after
    ``inv(b)`` raises; ``b`` is only read, so it is never deleted by a failure."""

    def body(a, b):
        return tf.linalg.inv(b) + tf.log(a * 2.0) if inv_first else tf.log(a * 2.0) + tf.linalg.inv(b)

    h = tf.jit(body, donate_argnums=(0, 1))
    a0, b0 = np.array([[1.0, 2.0], [3.0, 4.0]], order="F"), np.array([[1.0, np.nan], [0.0, 1.0]], order="F")
    a, b = tf.asarray(a0.copy(order="F")), tf.asarray(b0.copy(order="F"))
    writes = h.lower(a, b).cost()["reused_buffers"] >= 2  # CPU programs write into their arguments; device ones never
    with pytest.raises(tf.linalg.NonFiniteError):
        h(a, b)
    assert is_deleted(a) is (writes and not inv_first) and not is_deleted(b)
    np.testing.assert_array_equal(_np(b), b0)
    if inv_first:
        np.testing.assert_array_equal(_np(a), a0)
