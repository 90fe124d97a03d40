"""Defects of the native backend (``tenferro.jit(f, backend="native")``) found in review, each
checked against the NumPy backend and against NumPy itself:

* float32 and complex64 sums accumulate in double precision (a float32 running total stops
  growing at 2**24 times its summand), fused full sums and strided partial sums alike;
* complex functions Numba computes inexactly (``tanh``, ``sin``, ``log``, ``sqrt``, ...) are left
  to NumPy, with the reason in the report; complex division and ``reciprocal`` stay native,
  computed as NumPy does (a zero divisor gives infinities and NaNs, never ZeroDivisionError);
* the workspace pool hands a workspace to one call at a time (threads);
* a small output is a copy, not a view pinning its region's whole workspace;
* an unusable cache directory compiles in memory, a corrupted cached source is rewritten, a
  failed compilation is named in the report and ``backend="native"`` warns when nothing is native;
* donating a native result to a native program takes it without a copy or a warning;
* in-process reuse of a region's machine code is no disk-cache hit.

Skipped as a whole when Numba (the ``fast`` extra) is not installed."""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest

pytest.importorskip("numba")
pytestmark = [pytest.mark.cpu_only, pytest.mark.usefixtures("native_jit_cache")]

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402
from tenferro.jit import DonationWarning, compile_report, is_deleted  # noqa: E402
from tenferro.jit import _native  # noqa: E402


def _pair(f, *args, **kw):
    """(native, NumPy backend) results of ``f`` as lists of arrays, and the native report."""
    out = []
    for backend in ("native", "numpy"):
        r = tf.jit(f, backend=backend, **kw)(*args)
        out.append([np.asarray(t.numpy()) for t in (r if isinstance(r, (list, tuple)) else [r])])
    return out[0], out[1], compile_report(tf.jit(f, backend="native", **kw), *args)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, zeros' signs included, NaN where the other has NaN."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    parts = (a.real, a.imag, b.real, b.imag) if a.dtype.kind == "c" else (a, a * 0, b, b * 0)
    ok = True
    for u, v in (parts[0:4:2], parts[1:4:2]):
        ok &= bool(np.all(((u == v) & (np.signbit(u) == np.signbit(v))) | (np.isnan(u) & np.isnan(v))))
    return ok


# --- 1. float32 / complex64 sums ------------------------------------------------------------
def _spiky(dtype, n=2**18):
    """``2**24`` then ``n - 1`` ones: a float32 running total never moves past ``2**24``."""
    x = np.ones(n, dtype)
    x[0] = 2**24 * (1 + 1j) if np.dtype(dtype).kind == "c" else 2**24
    if np.dtype(dtype).kind == "c":
        x[1:] = 1 + 1j
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_narrow_sums_accumulate_in_double_precision(dtype):
    x = _spiky(dtype)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    spacing = float(np.spacing(np.float32(2**25)))  # one float32 step at the totals' size
    progs = {  # name: (program, argument, its totals in double precision)
        "fused full sum": (lambda x: tf.sum(x * 1.0), x, lambda a: a.sum()),
        "strided sum, inner axis": (lambda y: tf.sum(y, axis=0), x.reshape(2, -1).T, lambda a: a.sum(axis=0)),
        "strided sum, outer axis": (lambda y: tf.sum(y, axis=1) * 1.0, x.reshape(-1, 2).T, lambda a: a.sum(axis=1)),
        "full sum of a transpose": (lambda y: tf.sum(tf.transpose(y)), x.reshape(2, -1).T, lambda a: a.sum()),
    }
    for name, (f, a, total) in progs.items():
        nat, ref, rep = _pair(f, tf.asarray(np.asfortranarray(a)))
        assert rep.native and not rep.numpy_steps, name
        got, expected = nat[0], total(a.astype(wide))
        assert got.dtype == dtype, name
        # within one float32 step of the exact totals (a float32 running total: 2**18 short)
        assert np.all(np.abs(got.astype(wide) - expected) <= spacing), name
        # at least as close as NumPy's (pairwise along a contiguous axis; along a strided one
        # NumPy runs a float32 total too, and gives 2**24 for the spiky row)
        assert np.all(np.abs(got.astype(wide) - expected) <= np.abs(ref[0].astype(wide) - expected) + spacing), name


def test_float32_sum_and_mean_past_two_to_the_24():
    n = 2**24 + 2**20
    x = tf.asarray(np.ones(n, np.float32))
    total, mean = tf.jit(lambda x: (tf.sum(x * 1.0), tf.mean(x * 0.5)), backend="native")(x)
    assert total.numpy() == np.float32(n) == np.sum(np.ones(n, np.float32))  # was 16777216
    assert mean.numpy() == np.float32(0.5)  # was 0.4194304 for 2e7 halves


def test_float32_random_sum_matches_numpy_to_rounding():
    v = np.random.default_rng(0).random(1_000_000).astype(np.float32)
    exact = v.astype(np.float64).sum()
    nat, ref, _ = _pair(lambda x: (tf.sum(x), tf.sum(tf.reshape(x, (-1, 2)), axis=0)), tf.asarray(v))
    assert abs(float(nat[0]) - exact) <= 2 * float(np.spacing(np.float32(exact)))
    assert abs(float(nat[0]) - float(ref[0])) <= 4 * float(np.spacing(np.float32(exact)))
    cols = v.reshape((-1, 2), order="F").astype(np.float64).sum(axis=0)  # tenferro reshapes column-major
    assert np.all(np.abs(nat[1] - cols) <= 2 * np.spacing(cols.astype(np.float32)))


# --- 2. complex functions Numba computes inexactly ---------------------------------------------
_HARD = np.array(
    [
        20 + 1j, 400 + 1j, -400 + 0.5j, 800 + 0j, 710.5 + 0j, 0.5 + 710.3j, -3.162435396581809 - 2.585318834286869j,
        (1 + 1e-9) * np.exp(0.7j), (1 - 3e-12) * np.exp(2.1j), 0.6 + 0.8j, 1e-8 + 1j, -1.7e308 + 0j,
        1e160 + 1e160j, complex(np.inf, 0), complex(0, np.inf), complex(-1, -0.0), 0j, complex(np.nan, 0),
    ]
)  # fmt: skip
_COMPLEX_FUNCS = ["exp", "log", "sin", "cos", "sinh", "cosh", "tanh", "sqrt", "rsqrt", "square"]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_functions_numba_gets_wrong_are_left_to_numpy(dtype):
    with np.errstate(over="ignore"):  # -1.7e308 is -inf in complex64
        z = _HARD.astype(dtype)
    funcs = [getattr(tf, name) for name in _COMPLEX_FUNCS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nothing native here: backend="native" warns
        nat, ref, rep = _pair(lambda z: [f(z) for f in funcs], tf.asarray(z))
    with np.errstate(all="ignore"):
        direct = [np.exp(z), np.log(z), np.sin(z), np.cos(z), np.sinh(z), np.cosh(z), np.tanh(z)]
        direct += [np.sqrt(z), 1 / np.sqrt(z), np.square(z)]
    for name, a, b, c in zip(_COMPLEX_FUNCS, nat, ref, direct):
        assert _same_bits(a, b) and _same_bits(a, c), name  # tanh(400+1j) was nan+nanj
    reasons = {s.primitive: s.reason for s in rep.numpy_steps}
    assert all(name in reasons and "left to NumPy" in reasons[name] for name in _COMPLEX_FUNCS)


def test_real_functions_stay_native():
    x = tf.asarray(np.linspace(-3, 3, 11))
    rep = compile_report(tf.jit(lambda x: tf.tanh(x) + tf.log(tf.exp(x)) + tf.sqrt(x * x), backend="native"), x)
    assert rep.native and not rep.numpy_steps


# --- 3. complex division, reciprocal -----------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_division_and_reciprocal_are_numpys(dtype):
    rng = np.random.default_rng(3)
    u = (rng.standard_normal(40) + 1j * rng.standard_normal(40)) * 10.0 ** rng.integers(-30, 30, 40)
    w = (rng.standard_normal(40) + 1j * rng.standard_normal(40)) * 10.0 ** rng.integers(-30, 30, 40)
    special = np.array([0j, -0.0 + 0j, complex(0, -0.0), 1e-320 + 0j, complex(np.inf, 1), complex(np.nan, 0), 3 + 0j])
    u = np.concatenate([u, np.full(7, 1 + 1j), special]).astype(dtype)
    w = np.concatenate([w, special, special]).astype(dtype)
    nat, ref, rep = _pair(lambda u, w: (u / w, tf.reciprocal(w) + u, u / 2.0), tf.asarray(u), tf.asarray(w))
    assert rep.native and not rep.numpy_steps
    with np.errstate(all="ignore"):
        direct = [u / w, np.reciprocal(w) + u, u / dtype(2)]
    for a, b, c in zip(nat, ref, direct):
        assert _same_bits(a, b) and _same_bits(a, c)  # a zero divisor raised ZeroDivisionError


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NumPy backend's divisions by zero
def test_gradients_through_complex_division_by_zero():
    u = tf.asarray(np.array([1 + 1j, 2 + 0j, 0.5 - 2j]))
    w = tf.asarray(np.array([0j, 1 + 0j, 1e-320 + 0j]))
    for f in (
        tidu.grad(lambda z: tf.sum(tf.real(tf.reciprocal(z) * tf.conj(u / z)))),
        tidu.grad(lambda z: tf.sum(tf.real(u / z))),
        tidu.grad(lambda z: tf.sum(tf.real(tf.rsqrt(z)))),
    ):
        nat, ref, _ = _pair(f, w)
        assert _same_bits(nat[0], ref[0])


# --- 4. the workspace pool under threads -----------------------------------------------------------
class _RacyPool(list):
    """A pool whose first ``pop`` lets another thread's ``_take`` run first: the interleaving
    in which two calls took one workspace (and one took a workspace an output still views)."""

    def __init__(self, items):
        super().__init__(items)
        self.other = None
        self.thread = None

    def pop(self, i=-1):
        if self.other is not None:
            other, self.other = self.other, None
            self.thread = threading.Thread(target=other)
            self.thread.start()
            self.thread.join(timeout=0.5)  # with the pool's lock it waits for this call
        return super().pop(i)


def test_workspace_pool_check_and_take_are_one_step():
    pool = _RacyPool([np.zeros(8), np.zeros(8)])
    free_id, viewed_id = id(pool[0]), id(pool[1])
    view = pool[1][:4]  # an output still viewing the second workspace
    got = {}
    pool.other = lambda: got.setdefault("b", _native._take(pool, 8, np.float64))
    got["a"] = _native._take(pool, 8, np.float64)
    pool.thread.join()
    assert id(got["a"]) == free_id  # not the viewed one
    assert id(got["b"]) not in (free_id, viewed_id)  # a new one
    assert view.base is not None


def test_threads_calling_one_native_function():
    xs = [np.random.default_rng(k).standard_normal(64) for k in range(8)]
    f = tf.jit(lambda x: (tf.sin(x) * 2.0, tf.sin(x) * 2.0 + 1.0, tf.sum(x) * 3.0), backend="native")
    X = [tf.asarray(x) for x in xs]
    f(X[0])
    bad, errors = [], []

    def worker(k):
        try:
            for it in range(200):
                j = (k + it) % 8
                out = f(X[j])
                if not np.array_equal(out[0].numpy(), np.sin(xs[j]) * 2.0):
                    bad.append((k, it))
        except Exception as exc:  # recorded, asserted below
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not bad


def test_a_viewed_workspace_is_not_reused():
    x = tf.asarray(np.linspace(0, 1, 4096))
    f = tf.jit(lambda x: tf.sin(x) * 2.0, backend="native")
    first = f(x)
    kept = first.numpy().copy()
    for _ in range(3):
        f(tf.asarray(np.linspace(5, 6, 4096)))
    assert np.array_equal(first.numpy(), kept)


# --- 5. small outputs are copies ---------------------------------------------------------------------
def test_scalar_output_does_not_pin_the_workspace():
    rng = np.random.default_rng(0)
    W, x = tf.asarray(rng.standard_normal((300, 300)) * 0.01), tf.asarray(rng.standard_normal(300))

    def loss(W, x):
        h = tf.tanh(W @ x)
        return tf.sum(h * h)

    step = tf.jit(tidu.value_and_grad(loss), backend="native")
    value, grad = step(W, x)
    data = value._data
    assert data.base is None or data.base.nbytes <= 64  # was a view of the 1.4 MB workspace
    ref_value, ref_grad = tf.jit(tidu.value_and_grad(loss))(W, x)
    assert value.numpy() == pytest.approx(float(ref_value.numpy()), rel=1e-13)
    assert np.allclose(grad.numpy(), ref_grad.numpy(), rtol=1e-12, atol=1e-15)


# --- 6. compilation failures, the disk cache -------------------------------------------------------
def test_unusable_cache_directory_compiles_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TENFERRO_JIT_CACHE", str(blocker / "cache"))
    monkeypatch.setattr(_native, "_MODULES", {})
    x = tf.asarray(np.arange(5.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # native after all: no fallback warning
        f = tf.jit(lambda x: tf.sin(x) * 2.0, backend="native")
        value = f(x)
    rep = compile_report(f, x)
    assert rep.native and not rep.numpy_steps  # was NumPy, "no equation has a native kernel"
    assert any("compiled in memory" in n for n in rep.notes) and "compiled in memory" in str(rep)
    assert np.array_equal(value.numpy(), np.sin(np.arange(5.0)) * 2.0)


def test_failed_compilation_is_the_reason_and_native_warns(monkeypatch):
    def broken(source):
        raise RuntimeError("simulated compiler failure")

    monkeypatch.setattr(_native, "_load", broken)
    x = tf.asarray(np.arange(5.0))
    with pytest.warns(UserWarning, match="native compilation failed: RuntimeError: simulated compiler failure"):
        f = tf.jit(lambda x: tf.sum(tf.tanh(x) * x), backend="native")
        value = f(x)
    rep = compile_report(f, x)
    assert not rep.native and rep.reason == "native compilation failed: RuntimeError: simulated compiler failure"
    assert float(value.numpy()) == pytest.approx(float(np.sum(np.tanh(np.arange(5.0)) * np.arange(5.0))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "auto" falls back silently
        assert not compile_report(tf.jit(lambda x: tf.sum(tf.tanh(x) * x), backend="auto"), x).native


def test_corrupted_cached_source_is_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("TENFERRO_JIT_CACHE", str(tmp_path))
    monkeypatch.setattr(_native, "_MODULES", {})

    def f(x):
        return tf.sum(tf.cos(x) * x + 0.25)

    x = tf.asarray(np.linspace(-1, 1, 9))
    assert compile_report(tf.jit(f, backend="native"), x).native
    (path,) = tmp_path.glob("tfn_*.py")
    good = path.read_text()
    path.write_text(good[: len(good) // 2])  # truncated (a full disk, an interrupted copy)
    monkeypatch.setattr(_native, "_MODULES", {})  # as a new process
    jf = tf.jit(f, backend="native")
    rep = compile_report(jf, x)
    assert rep.native and not rep.numpy_steps  # was a NameError for every later run
    assert path.read_text() == good
    assert float(jf(x).numpy()) == pytest.approx(float(np.sum(np.cos(x.numpy()) * x.numpy() + 0.25)), rel=1e-14)


def test_program_without_equations_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tf.jit(lambda x: x, backend="native")(tf.asarray(np.ones(3))).numpy().sum() == 3.0


# --- 7. donation -----------------------------------------------------------------------------------
def test_donating_a_native_result_to_a_native_program_takes_it():
    p = tf.asarray(np.linspace(0, 1, 100_000))
    expected = np.linspace(0, 1, 100_000)
    step = tf.jit(lambda p: p - 0.1 * tf.sin(p), backend="native", donate_argnums=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DonationWarning)  # was a copy and a warning from the second call
        for _ in range(4):
            old = p
            p = step(p)
            assert is_deleted(old)
            expected = expected - 0.1 * np.sin(expected)
    assert np.allclose(p.numpy(), expected, rtol=1e-15, atol=0)


def test_donating_a_view_shared_with_another_result():
    x = tf.asarray(np.linspace(0, 1, 50_000))
    f = tf.jit(lambda x: (tf.sin(x) * 2.0, tf.cos(x) * 3.0), backend="native")
    g = tf.jit(lambda y: y * 2.0 + 1.0, backend="native", donate_argnums=0)
    y, y2 = f(x)
    ys, y2s = y.numpy().copy(), y2.numpy().copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DonationWarning)
        z = g(y)
    assert is_deleted(y) and np.array_equal(y2.numpy(), y2s) and np.array_equal(z.numpy(), ys * 2.0 + 1.0)
    c = tf.asarray(np.ones(3))
    with pytest.warns(DonationWarning, match="constant"):  # a constant of f is still copied
        h = tf.jit(lambda a: a + c, backend="native", donate_argnums=0)
        h(c)
    assert not is_deleted(c)


# --- 8. cache hits ---------------------------------------------------------------------------------
def test_in_process_reuse_is_no_disk_cache_hit(tmp_path, monkeypatch):
    monkeypatch.setenv("TENFERRO_JIT_CACHE", str(tmp_path))
    monkeypatch.setattr(_native, "_MODULES", {})
    x = tf.asarray(np.arange(4.0))
    first = compile_report(tf.jit(lambda x: tf.sin(x) * 2.0, backend="native"), x)
    second = compile_report(tf.jit(lambda x: tf.sin(x) * 3.0, backend="native"), x)  # the same kernels
    assert (first.cache_hits, first.reused_regions) == (0, 0)
    assert (second.cache_hits, second.reused_regions) == (0, 1)  # was counted as a disk-cache hit
    assert "reused in this process" in str(second)
    assert os.listdir(tmp_path)
