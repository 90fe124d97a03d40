"""Per-example gradients under the native backend (``tenferro.jit(vmap(grad), backend="native")``)
and the kernels they run on (issue 55): the MLP's per-example gradients against backpropagation
written by hand in NumPy, against the NumPy backend (float32, float64) and against central finite
differences; the whole program one native region; the vectorizable ``tanh`` of the fused loops
against libm (``math.tanh``) in ulps, with its special values; constants of equal elements read as
one scalar, and only when they are (``-0.0`` is not ``0.0``); the outer-product kernel's unit-stride,
broadcast and strided paths against ``numpy.einsum``. Skipped as a whole without Numba."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("numba")
pytestmark = [
    pytest.mark.cpu_only,
    pytest.mark.usefixtures("native_jit_cache"),
]  # the native backend compiles host programs

import tenferro as tf  # noqa: E402
import tidu  # noqa: E402
from tenferro.jit import _native, compile_report  # noqa: E402

# float32 programs keep float32 end to end; their tolerance is a few float32 ulps of the sums
TOL = {"float32": 2e-5, "float64": 1e-13}


def _mlp_loss(params, x, y):
    w1, w2 = params
    return tf.sum((tf.tanh(w2 @ tf.tanh(w1 @ x)) - y) ** 2)


def _mlp_data(dtype: str, batch: int = 33, width: int = 12, seed: int = 0):
    """Odd sizes, so the vectorized loops run their remainders too."""
    rng = np.random.default_rng(seed)
    w1, w2 = (rng.standard_normal((width, width)).astype(dtype) / 2 for _ in range(2))
    xs, ys = (rng.standard_normal((batch, width)).astype(dtype) for _ in range(2))
    return w1, w2, xs, ys


def _backprop(w1, w2, x, y):
    """The MLP's gradient for one example, by hand: h1 = tanh(W1 x), h2 = tanh(W2 h1),
    d2 = 2 (h2 - y)(1 - h2^2), dW2 = d2 h1^T, d1 = (W2^T d2)(1 - h1^2), dW1 = d1 x^T."""
    h1 = np.tanh(w1 @ x)
    h2 = np.tanh(w2 @ h1)
    d2 = 2.0 * (h2 - y) * (1.0 - h2 * h2)
    d1 = (w2.T @ d2) * (1.0 - h1 * h1)
    return np.outer(d1, x), np.outer(d2, h1)


def _per_example(backend: str):
    return tf.jit(tidu.vmap(tidu.grad(_mlp_loss), in_axes=(None, 0, 0)), backend=backend)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_per_example_gradients_match_backprop_and_numpy_backend(dtype):
    w1, w2, xs, ys = _mlp_data(dtype)
    args = ((tf.asarray(w1), tf.asarray(w2)), tf.asarray(xs), tf.asarray(ys))
    native = [g.numpy() for g in _per_example("native")(*args)]
    numpy = [g.numpy() for g in _per_example("numpy")(*args)]
    w1d, w2d = w1.astype(np.float64), w2.astype(np.float64)
    by_hand = [_backprop(w1d, w2d, x, y) for x, y in zip(xs.astype(np.float64), ys.astype(np.float64))]
    for k in range(2):
        want = np.stack([g[k] for g in by_hand])
        assert native[k].dtype == numpy[k].dtype == np.dtype(dtype)
        assert native[k].shape == want.shape == (33, 12, 12)
        scale = max(np.abs(want).max(), 1.0)
        assert np.abs(native[k] - numpy[k]).max() <= TOL[dtype] * scale
        assert np.abs(native[k] - want).max() <= TOL[dtype] * scale
    report = compile_report(_per_example("native"), *args)
    assert len(report.regions) == 1 and not report.numpy_steps  # one machine-code call


def test_mlp_per_example_gradients_against_finite_differences():
    w1, w2, xs, ys = _mlp_data("float64", batch=5, width=4, seed=1)
    grads = _per_example("native")((tf.asarray(w1), tf.asarray(w2)), tf.asarray(xs), tf.asarray(ys))
    g1, g2 = (g.numpy() for g in grads)
    rng = np.random.default_rng(2)
    h = 1e-6
    for i in range(5):  # a random direction per example: <grad, (u, v)> against the central difference

        def loss_at(t, u, v, i=i):
            p = (tf.asarray(w1 + t * u), tf.asarray(w2 + t * v))
            return float(_mlp_loss(p, tf.asarray(xs[i]), tf.asarray(ys[i])).numpy())

        u, v = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
        fd = (loss_at(h, u, v) - loss_at(-h, u, v)) / (2 * h)
        assert abs(np.sum(g1[i] * u) + np.sum(g2[i] * v) - fd) <= 1e-7 * max(abs(fd), 1.0)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    tiny = np.finfo(want.dtype).smallest_subnormal
    return np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.maximum(np.spacing(np.abs(want)), tiny)


SPECIAL = [0.0, -0.0, 5e-324, -1e-300, 1e-8, 0.3465, 0.3466, 0.55, 0.6931, 1.0, 5.0, 21.99, 22.0, -22.0, 40.0, 1e308]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_tanh_against_libm(dtype):
    """Within 4 ulp of libm in float64 (the identity's three roundings; 2 ulp of the exact value
    were measured against mpmath), 1 ulp in float32 (computed in float64, then rounded)."""
    rng = np.random.default_rng(3)
    scales = [1e-30, 1e-6, 0.01, 0.3, 1.0, 3.0, 10.0, 30.0]
    values = np.concatenate([rng.standard_normal(4000) * s for s in scales] + [np.array(SPECIAL)])
    x = values.astype(dtype) if dtype == "float64" else np.clip(values, -1e30, 1e30).astype(dtype)
    got = tf.jit(lambda v: tf.tanh(v) + 0.0, backend="native")(tf.asarray(x)).numpy()  # a fused loop
    want = np.array([math.tanh(float(v)) for v in x]).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    assert _ulps(got, want).max() <= (4 if dtype == "float64" else 1)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    got = tf.jit(lambda v: tf.tanh(v) * 1.0, backend="native")(tf.asarray(special)).numpy()
    assert got[0] == 0.0 and not np.signbit(got[0]) and got[1] == 0.0 and np.signbit(got[1])
    assert got[2] == 1.0 and got[3] == -1.0 and np.isnan(got[4])


@pytest.fixture
def stored_constants(monkeypatch):
    """The number of constant elements each native region stores (its workspaces' constant
    prefixes, :attr:`Segment.const_prefix`), one list per lowering, in order."""
    sizes: list[int] = []
    real = _native.lower_segment

    def spy(*args, **kwargs):
        seg = real(*args, **kwargs)
        sizes.append(sum(p.size for p in seg.const_prefix if p is not None))
        return seg

    monkeypatch.setattr(_native, "lower_segment", spy)
    return sizes


def test_uniform_constant_is_one_scalar_only_when_bitwise_uniform(stored_constants):
    """``1 / (c * x)`` with ``c`` a constant: all ones, and a mix of ``0.0`` and ``-0.0`` (equal as
    numbers, not as bits). The quotient's ``1.0`` (a 3 x 4 fill) is stored as one element, a scalar
    in the fused loop; the signed zeros element by element (all 12)."""
    x = np.linspace(0.5, 2.0, 12).reshape(3, 4)
    ones = tf.asarray(np.ones((3, 4)))
    zeros = np.zeros((3, 4))
    zeros[:, ::2] = -0.0
    signed = tf.asarray(zeros)
    got = tf.jit(lambda v: 1.0 / (ones * v), backend="native")(tf.asarray(x)).numpy()
    assert np.array_equal(got, 1.0 / x)
    assert stored_constants == [1]  # the 1.0 (the optimizer folds the product by ones away)
    got = tf.jit(lambda v: 1.0 / (signed * v), backend="native")(tf.asarray(x)).numpy()
    with np.errstate(divide="ignore"):
        want = 1.0 / (zeros * x)  # -inf in the even columns, +inf in the odd ones
    assert np.array_equal(got, want)
    assert np.isneginf(got[:, ::2]).all() and np.isposinf(got[:, 1::2]).all()
    assert stored_constants[1:] == [1 + 12]  # the 1.0 of the quotient (uniform) and the signed zeros


def test_uniform_constant_read_by_a_contraction_stays_dense(stored_constants):
    twos = tf.asarray(np.full((4, 4), 2.0))
    x = np.arange(16.0).reshape(4, 4) / 7
    got = tf.jit(lambda v: (twos * v) @ twos + twos, backend="native")(tf.asarray(x)).numpy()
    assert np.allclose(got, (2.0 * x) @ np.full((4, 4), 2.0) + 2.0, rtol=1e-15, atol=0)
    assert stored_constants == [16]  # every element: the GEMM reads it as a matrix


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("ab,ac->bac", [(5, 9), (5, 7)]),  # the MLP's per-example outer product: unit strides inside
        ("a,b->ab", [(9,), (6,)]),  # the second operand broadcast along the innermost axis
        ("b,a->ab", [(6,), (9,)]),  # the first one broadcast
        ("ab,cb->bca", [(3, 8), (5, 8)]),  # the innermost axis strided in the operands
    ],
)
def test_outer_product_kernel_paths(spec, shapes):
    rng = np.random.default_rng(4)
    ops = [rng.standard_normal(s) for s in shapes]
    got = tf.jit(lambda a, b: tf.einsum(spec, a, b), backend="native")(*(tf.asarray(o) for o in ops)).numpy()
    assert np.array_equal(got, np.einsum(spec, *ops))  # one product per element: exact
