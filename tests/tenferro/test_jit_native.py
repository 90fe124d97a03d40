"""The native backend of compiled mode (``tenferro.jit(..., backend="native")``, Numba):
random elementwise/reduction/contraction programs (hypothesis) give the NumPy backend's
values and gradients to rounding, float32/float64/complex128; an elementwise chain of
exact IEEE operations gives them bit for bit; the native gradient against central
finite differences; the disk cache is hit by a second build, and by a second process,
which loads the machine code without preparing Numba's compiler; equations without a native
kernel, and everything when Numba is missing, fall back to NumPy with the reason in the
compile report. Skipped as a whole when Numba (the ``fast`` extra) is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")
pytestmark = [
    pytest.mark.cpu_only,
    pytest.mark.usefixtures("native_jit_cache"),
]  # the native backend compiles host programs; a device program keeps its own path

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402
from tenferro.jit import CompileReport, compile_report  # noqa: E402
from tenferro.jit import _native  # noqa: E402

# Numba compiles each new program (about 1 s): few, small examples
NATIVE_SETTINGS = settings(
    max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
TOL = {"float32": 2e-4, "float64": 1e-11, "complex128": 1e-11}


# --- random programs: each op maps two (3, 4) values to one (slices: reverse, window) --------
OPS = {
    "tanh": lambda a, b: tf.tanh(a),
    "sin": lambda a, b: tf.sin(a) * b,
    "exp": lambda a, b: tf.exp(a * 0.3),
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b * 0.5,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 3.0),
    "matmul": lambda a, b: (a @ tf.transpose(b)) @ a * 0.2,
    "einsum": lambda a, b: tf.einsum("ij,kj,kl->il", a, b, a) * 0.1,
    "transpose": lambda a, b: b @ (tf.transpose(a) @ a) * 0.1,
    "sum_rows": lambda a, b: a + tf.sum(b, axis=0) * 0.2,
    "sum_all": lambda a, b: a * tf.sum(b) * 0.05,
    "reverse": lambda a, b: a[::-1, :] + b[:, ::-1] * 0.5,
    "window": lambda a, b: a + tf.sum(b[1:, ::2]) * 0.1,
}
programs = st.lists(
    st.tuples(st.sampled_from(sorted(OPS)), st.integers(0, 7), st.integers(0, 7)), min_size=1, max_size=5
)


def _program(ops: list[tuple[str, int, int]]):
    def f(x, y):
        pool = [x, y]
        for name, i, j in ops:
            pool.append(OPS[name](pool[i % len(pool)], pool[j % len(pool)]))
        z = pool[-1]
        return tf.sum(tf.real(z * tf.conj(z)))

    return f


def _inputs(dtype: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    xs = [0.5 * rng.standard_normal((3, 4)) for _ in range(2)]
    if dtype == "complex128":
        xs = [x + 0.5j * rng.standard_normal((3, 4)) for x in xs]
    return [tf.asarray(x.astype(dtype)) for x in xs]


def _both(f, args, argnums=(0, 1)):
    """(NumPy backend, native backend) results of ``jit(value_and_grad(f))`` as arrays."""
    out = []
    for backend in ("numpy", "native"):
        g = tf.jit(tidu.value_and_grad(f, argnums=argnums), backend=backend)
        value, grads = g(*args)
        out.append([np.asarray(value.numpy())] + [np.asarray(d.numpy()) for d in grads])
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@NATIVE_SETTINGS
@given(ops=programs)
def test_random_programs_match_numpy_backend(dtype, ops):
    f = _program(ops)
    args = _inputs(dtype)
    ref, nat = _both(f, args)
    for a, b in zip(ref, nat):
        assert a.dtype == b.dtype
        scale = max(np.abs(a).max(), 1.0)
        assert np.abs(a - b).max() <= TOL[dtype] * scale
    report = compile_report(tf.jit(tidu.value_and_grad(f, argnums=(0, 1)), backend="native"), *args)
    assert report.native
    if dtype == "complex128":  # complex exp, tanh, sin...: Numba's are inaccurate, left to NumPy on purpose
        assert all("left to NumPy" in s.reason for s in report.numpy_steps)
    else:
        assert not report.numpy_steps  # every op of the menu has a native kernel


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_forward_values_of_a_contraction_program(dtype):
    def f(x, y):
        return tf.tanh(tf.einsum("ij,kj->ik", x, y)) @ y + tf.sum(x, axis=1)[:, None] * y

    x, y = _inputs(dtype, 1)
    got = tf.jit(f, backend="native")(x, y).numpy()
    xn, yn = x.numpy(), y.numpy()
    want = np.tanh(xn @ yn.T) @ yn + xn.sum(axis=1)[:, None] * yn  # NumPy, independently
    assert got.dtype == want.dtype
    assert np.abs(got - want).max() <= TOL[dtype] * max(np.abs(want).max(), 1.0)


def test_exact_elementwise_chain_is_bitwise_equal():
    def f(x, y):
        return (x * y + x) / (y * y + 2.0) - x * 0.25

    x, y = _inputs("float64", 2)
    a = tf.jit(f, backend="numpy")(x, y).numpy()
    b = tf.jit(f, backend="native")(x, y).numpy()
    assert np.array_equal(a, b)
    assert b.flags.f_contiguous


def test_native_gradient_against_finite_differences():
    f = _program([("matmul", 0, 1), ("tanh", 2, 0), ("mul", 3, 1), ("sum_rows", 4, 0), ("einsum", 5, 1)])
    x, y = _inputs("float64", 3)
    g = tf.jit(tidu.grad(f, argnums=(0, 1)), backend="native")
    dx, dy = (d.numpy() for d in g(x, y))
    rng = np.random.default_rng(4)
    u, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    h = 1e-6

    def at(t):
        return float(f(tf.asarray(x.numpy() + t * u), tf.asarray(y.numpy() + t * v)).numpy())

    fd = (at(h) - at(-h)) / (2 * h)
    assert abs(np.sum(dx * u) + np.sum(dy * v) - fd) <= 1e-6 * max(abs(fd), 1.0)


def test_second_build_hits_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TENFERRO_JIT_CACHE", str(tmp_path))
    monkeypatch.setattr(_native, "_MODULES", {})

    def f(x):
        return tf.sum(tf.cos(x) * x + x)

    x = _inputs("float64", 5)[0]
    first = compile_report(tf.jit(f, backend="native"), x)
    assert first.native and first.cache_hits == 0
    assert any(p.name.startswith("tfn_") for p in tmp_path.iterdir())
    monkeypatch.setattr(_native, "_MODULES", {})  # as a new process: only the disk is left
    second = compile_report(tf.jit(f, backend="native"), x)
    assert second.cache_hits == len(second.regions) == 1
    assert tf.jit(f, backend="native")(x).numpy() == pytest.approx(float(f(x).numpy()), rel=1e-14)


_CHILD = """
import sys
import numpy as np
import tenferro as tf
from tenferro.jit import compile_report
x = tf.asarray(np.linspace(-1.0, 1.0, 7))
f = tf.jit(lambda x: tf.sum(tf.tanh(x) * x + x), backend="native")
report = compile_report(f, x)
value = float(f(x).numpy())
# the registries Numba's compiler needs (imported by its target refresh, not by a quick load)
print(report.cache_hits, len(report.regions), repr(value), "numba.np.arraymath" in sys.modules)
"""


def test_a_second_process_loads_the_machine_code(tmp_path):
    env = dict(os.environ, TENFERRO_JIT_CACHE=str(tmp_path))
    runs = [
        subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
        for _ in range(2)
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr
    (hits1, n1, v1, _), (hits2, n2, v2, refreshed2) = (r.stdout.split() for r in runs)
    assert (hits1, n1) == ("0", "1")  # compiled in the first process
    assert (hits2, n2) == ("1", "1")  # loaded from the disk in the second
    assert refreshed2 == "False"  # without preparing the compiler
    x = np.linspace(-1.0, 1.0, 7)
    expected = float(np.sum(np.tanh(x) * x + x))
    assert float(v1) == float(v2) == pytest.approx(expected, rel=1e-14)


def test_equation_without_native_kernel_stays_with_numpy():
    def f(x):
        return tf.sum(tf.abs(tf.tanh(x)) * x)

    x = _inputs("float64", 6)[0]
    jf = tf.jit(f, backend="native")
    report = jf.lower(x).compile_report()
    assert isinstance(report, CompileReport) and report.native
    steps = {s.primitive: s.reason for s in report.numpy_steps}
    assert "abs" in steps and "no native kernel" in steps["abs"]
    assert len(report.regions) == 2  # tanh before abs, the product and the sum after
    assert "NumPy eqn" in str(report)
    assert float(jf(x).numpy()) == pytest.approx(float(np.sum(np.abs(np.tanh(x.numpy())) * x.numpy())), rel=1e-13)


def test_fallback_without_numba(monkeypatch):
    monkeypatch.setattr(_native, "NATIVE_AVAILABLE", False)

    def f(x):
        return tf.sum(tf.tanh(x) * x)

    x = _inputs("float64", 7)[0]
    auto = tf.jit(f, backend="auto")
    report = auto.lower(x).compile_report()
    assert not report.native and "Numba is not installed" in report.reason
    with pytest.warns(UserWarning, match="Numba is not installed"):
        native = tf.jit(f, backend="native")
        value = native(x)
    assert float(value.numpy()) == pytest.approx(float(np.sum(np.tanh(x.numpy()) * x.numpy())), rel=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tf.jit(f).lower(x).compile_report().backend == "numpy"  # the default: no warning


def test_vmap_per_example_gradients():
    """Per-example gradients of a small MLP (``jit(vmap(grad))``): native equals NumPy."""

    def loss(params, x, y):
        w1, w2 = params
        return tf.sum((tf.tanh(w2 @ tf.tanh(w1 @ x)) - y) ** 2)

    rng = np.random.default_rng(8)
    params = (tf.asarray(rng.standard_normal((5, 5)) / 3), tf.asarray(rng.standard_normal((5, 5)) / 3))
    xs, ys = tf.asarray(rng.standard_normal((7, 5))), tf.asarray(rng.standard_normal((7, 5)))
    per_example = tidu.vmap(tidu.grad(loss), in_axes=(None, 0, 0))
    ref = tf.jit(per_example)(params, xs, ys)
    got = tf.jit(per_example, backend="native")(params, xs, ys)
    for a, b in zip(ref, got):
        assert np.abs(a.numpy() - b.numpy()).max() <= 1e-12


def test_bad_backend_is_refused():
    with pytest.raises(tf.JitArgumentError, match="backend must be one of"):
        tf.jit(lambda x: x, backend="fast")
    with pytest.raises(tf.JitArgumentError, match="expected a function made by tenferro.jit"):
        compile_report(lambda x: x, 1.0)


def test_region_numba_cannot_compile_stays_with_numpy(monkeypatch):
    def broken(source):
        raise RuntimeError("simulated compiler failure")

    monkeypatch.setattr(_native, "_load", broken)

    def f(x):
        return tf.sum(tf.tanh(x) * x)

    x = _inputs("float64", 9)[0]
    jf = tf.jit(f, backend="native")
    with pytest.warns(UserWarning, match="native compilation failed: RuntimeError: simulated compiler failure"):
        report = jf.lower(x).compile_report()
    assert not report.native and report.numpy_steps
    assert all("simulated compiler failure" in s.reason for s in report.numpy_steps)
    assert float(jf(x).numpy()) == pytest.approx(float(np.sum(np.tanh(x.numpy()) * x.numpy())), rel=1e-14)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0,)])
def test_zero_size_elementwise_chains_compile_natively(shape):
    """A zero-size constant fill (the ``2`` of ``exp(a) * 2`` on a ``(0, 3)`` input) made the
    native compiler fail with NumPy's "cannot reshape array of size 0" and fall back, warning."""
    z = tf.asarray(np.zeros(shape))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning
        out = tf.jit(lambda a: tf.exp(a) * 2.0 + 1.0, backend="native")(z)
    assert out.shape == shape
