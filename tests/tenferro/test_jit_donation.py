"""tenferro.jit's buffer donation (issue 21), as in JAX: a donated tensor is consumed
and deleted, and any later use raises a typed error naming the call and the argument;
a buffer that is not exclusively owned is copied with a warning; a call that raises
keeps or deletes each donated argument by whether it was written before the failure."""

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


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_a_passed_through_argument_comes_back_as_a_new_tensor(backend):
    """``jit(lambda x: x)(x)`` returned ``x`` itself, so donating the result deleted the caller's
    ``x`` (JAX returns a new array and its ``x`` stays alive)."""
    if backend == "native":
        pytest.importorskip("numba")
    x = tf.asarray(np.arange(4.0))
    y, z = tf.jit(lambda x: (x, x + 1.0), backend=backend)(x)
    assert y is not x and z is not x
    np.testing.assert_array_equal(y.numpy(), np.arange(4.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the numpy backend donates a copy (the array is shared)
        out = tf.jit(lambda y: y * 2.0, donate_argnums=0, backend=backend)(y)
    assert not is_deleted(x)
    np.testing.assert_array_equal(x.numpy(), np.arange(4.0))
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(4.0))
