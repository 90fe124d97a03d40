"""tenferro.jit's safety contract (issue 21), its arguments: the settings of ``jit``
and the arguments and outputs of a jitted function checked with typed errors that name
the argument or output, and the keys of the program cache (static values with their
type, signed zeros, NaN). Donation is in test_jit_donation.py, ``jit`` nested and under
tidu transformations in test_jit_nesting.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

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


@pytest.fixture
def no_warnings():
    """Warnings are errors, but for a GPU program that cannot be captured into a
    CUDA graph (linalg reads the host): it warns once and runs uncaptured."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", tf.GraphCaptureWarning)
        yield


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
