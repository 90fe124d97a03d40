"""CUDA graphs of ``tenferro.jit`` programs on a GPU (:mod:`tenferro.jit._cuda_graph`).

A program is captured at its second call and replayed after; these tests check
that replays with new inputs give the eager results, that results of two calls
never alias, that a program that cannot be captured falls back with one warning,
the switch, donation, and one capture per signature.

Marked ``gpu``: run with ``--placement gpu`` (a real GPU) or ``--placement
fakegpu`` (the CPU stand-in, which records a capture and re-executes it on
launch, with garbage in the captured outputs until then: a replay that reads
stale inputs, hands out its static outputs or skips the launch fails here).
The CPU test at the end runs everywhere. CuPy 13/14 refuse cuBLAS during capture;
tenferro's captures call it directly (``tenferro._capture_blas``, emulated in the fake,
which refuses CuPy's own cuBLAS calls as CuPy does), so programs with contractions are
captured too.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
from tenferro.jit import CudaGraphState, GraphCaptureWarning, is_deleted

gpu = pytest.mark.gpu


def _fake() -> object | None:
    """The fake CuPy module's helpers under ``--placement fakegpu``, else ``None``."""
    cupy = sys.modules.get("cupy")
    return sys.modules.get("_fake_cupy") if getattr(cupy, "FAKE", False) else None


def _rand(seed: int, *shape: int) -> tf.Tensor:
    return tf.asarray(np.random.default_rng(seed).standard_normal(shape))


def _state(f, *args) -> CudaGraphState:
    return f.lower(*args).cuda_graph


def _check_replays(f, eager, make_args, calls: int = 5, rtol: float = 1e-12, plain=None, bitwise: bool = True):
    """Call ``f`` on fresh arguments ``calls`` times: each result equals ``eager``'s
    and the uncaptured program's (``plain``) bit for bit (the graph runs the same kernels);
    ``bitwise=False`` for programs with matrix products, which the capture sends to cuBLAS
    directly (``tenferro._capture_blas``): another GEMM entry point than CuPy's may round
    differently, so those agree to ``1e-13`` relative."""
    plain = plain or tf.jit(f.fun, cuda_graph=False)
    kept = []
    for i in range(calls):
        args = make_args(i)
        got = f(*args)
        want, same = eager(*args), plain(*args)
        for g, w, s in zip(tidu.tree_leaves(got), tidu.tree_leaves(want), tidu.tree_leaves(same)):
            if bitwise:
                np.testing.assert_array_equal(g.numpy(), s.numpy())
            else:
                np.testing.assert_allclose(g.numpy(), s.numpy(), rtol=1e-13, atol=1e-13)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=rtol, atol=rtol)
        kept.append((got, [g.numpy() for g in tidu.tree_leaves(got)]))
    for got, values in kept:  # later replays did not overwrite earlier results
        for g, v in zip(tidu.tree_leaves(got), values):
            np.testing.assert_array_equal(g.numpy(), v)
    return make_args(0)


# ---------------------------------------------------------------------------
# replays give the eager results
# ---------------------------------------------------------------------------
@gpu
def test_an_elementwise_chain_is_captured_once_and_replays_new_inputs():
    def chain(x, y):
        return tf.exp(x) * 2.0 + tf.sin(y) ** 2 - x * y / (1.0 + y * y)

    f = tf.jit(chain)
    args = _check_replays(f, chain, lambda i: (_rand(i, 4, 3), _rand(100 + i, 4, 3)))
    st = _state(f, *args)
    assert st == CudaGraphState("captured", 1, 4, None), st  # call 1 uncaptured, 2 captures, 2-5 replay


@gpu
def test_an_einsum_program_replays_new_inputs():
    def contract(a, b, c):
        return tf.einsum("ij,jk,kl->il", a, b, c) + tf.tanh(a)

    f = tf.jit(contract)
    args = _check_replays(
        f, contract, lambda i: (_rand(i, 5, 5), _rand(10 + i, 5, 4), _rand(20 + i, 4, 5)), bitwise=False
    )
    st = _state(f, *args)
    assert st.state == "captured", st


@gpu
def test_a_program_with_constants_replays_new_inputs():
    c = _rand(7, 3, 4)

    def with_const(x):
        return x * c + tf.sum(c), c, x  # a constant and an input returned as outputs

    f = tf.jit(with_const)
    args = _check_replays(f, with_const, lambda i: (_rand(i, 3, 4),))
    assert _state(f, *args).state == "captured"
    x = _rand(50, 3, 4)
    out = f(x)
    assert out[2] is x  # an input output is the caller's tensor, as uncaptured
    assert out[1]._data is not c._data  # a constant output is a copy, as uncaptured


def _mps_energy(tensors, mpo):
    """<psi|H|psi> / <psi|psi> of an open MPS (site tensors [l, p, r]) and MPO ([l, r, p, p'])."""
    env = tf.ones((1, 1, 1), tensors[0].dtype)
    norm = tf.ones((1, 1), tensors[0].dtype)
    for a, w in zip(tensors, mpo):
        env = tf.einsum("xwy,xpa,wbpq,yqc->abc", env, tf.conj(a), w, a)
        norm = tf.einsum("xy,xpa,ypc->ac", norm, tf.conj(a), a)
    return tf.real(tf.sum(env)) / tf.real(tf.sum(norm))


def _heisenberg_mpo(L):
    sz, sp = np.diag([0.5, -0.5]), np.array([[0.0, 1.0], [0.0, 0.0]])
    w = np.zeros((5, 5, 2, 2))
    w[0, 0] = w[4, 4] = np.eye(2)
    w[1, 0], w[2, 0], w[3, 0] = sp, sp.T, sz
    w[4, 1], w[4, 2], w[4, 3] = 0.5 * sp.T, 0.5 * sp, sz
    return [tf.asarray(w[4:5] if i == 0 else w[:, 0:1] if i == L - 1 else w) for i in range(L)]


@gpu
def test_an_mps_energy_gradient_replays_new_inputs():
    L, chi = 5, 4
    mpo = _heisenberg_mpo(L)
    dims = [1] + [chi] * (L - 1) + [1]

    def energy(ts):
        return _mps_energy(ts, mpo)

    eager = tidu.value_and_grad(energy)
    step = tf.jit(eager)
    args = _check_replays(
        step,
        eager,
        lambda s: ([_rand(10 * s + i, dims[i], 2, dims[i + 1]) for i in range(L)],),
        rtol=1e-10,
        bitwise=False,
    )
    assert _state(step, *args).state == "captured"
    # jit under grad: the call primitive's forward and transposed programs are captured too
    _check_replays(
        tidu.value_and_grad(tf.jit(energy)),
        eager,
        lambda s: ([_rand(7 * s + i, dims[i], 2, dims[i + 1]) for i in range(L)],),
        calls=4,
        rtol=1e-10,
        plain=tidu.value_and_grad(tf.jit(energy, cuda_graph=False)),
        bitwise=False,
    )


@gpu
def test_a_loop_gradient_with_stacked_terms_is_captured():
    """Reverse mode through 12 steps of ``x <- tanh(W @ x) + x`` sums 12 outer products into
    ``dW``; the compiled mode stacks their operands (``tenferro.jit._sum_products``). CuPy joins
    more than 8 arrays with a kernel whose pointer table it uploads from the host, which a
    capture refuses: the program must still be captured (seen on an H200)."""

    def loss(w, x):
        for _ in range(12):
            x = tf.tanh(w @ x) + x
        return tf.sum(x * x)

    eager = tidu.value_and_grad(loss, argnums=(0, 1))
    step = tf.jit(eager)
    args = _check_replays(step, eager, lambda i: (_rand(i, 8, 8) * 0.2, _rand(30 + i, 8)), rtol=1e-12, bitwise=False)
    assert _state(step, *args).state == "captured"


@gpu
def test_a_concatenate_of_many_arrays_is_captured():
    def join(*xs):
        return tf.concatenate([tf.sin(x) for x in xs], axis=1) * 2.0

    f = tf.jit(join)
    args = _check_replays(f, join, lambda i: tuple(_rand(10 * i + k, 3, k + 1) for k in range(11)))
    assert _state(f, *args).state == "captured"


@gpu
def test_results_of_two_calls_do_not_alias():
    f = tf.jit(lambda x: tf.exp(x) + 1.0)
    x1, x2, x3 = _rand(1, 6), _rand(2, 6), _rand(3, 6)
    f(x1)
    r2 = f(x2)  # captured and replayed
    v2 = r2.numpy()
    r3 = f(x3)
    assert r2._data is not r3._data and r2._data.data.ptr != r3._data.data.ptr
    np.testing.assert_array_equal(r2.numpy(), v2)
    np.testing.assert_allclose(r3.numpy(), np.exp(x3.numpy()) + 1.0, rtol=1e-14)


# ---------------------------------------------------------------------------
# fallback, switch, donation, signatures
# ---------------------------------------------------------------------------
@gpu
def test_a_host_read_falls_back_with_one_warning_and_right_results():
    def spectrum(a):
        return tf.linalg.svd(a)[1] * 2.0  # linalg reads its NaN check and cuSOLVER's info on the host

    f = tf.jit(spectrum)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for i in range(4):
            a = _rand(i, 4, 3)
            np.testing.assert_allclose(f(a).numpy(), spectrum(a).numpy(), rtol=1e-12)
    msgs = [str(r.message) for r in rec if issubclass(r.category, GraphCaptureWarning)]
    assert len(msgs) == 1, msgs
    assert "spectrum" in msgs[0] and "runs uncaptured" in msgs[0] and "cuda_graph=False" in msgs[0]
    st = _state(f, a)
    assert st.state == "uncaptured" and st.captures == 0 and st.reason and st.reason in msgs[0]


@gpu
@pytest.mark.parametrize("how", ["argument", "environment"])
def test_capture_switched_off_never_captures(how, monkeypatch):
    if how == "environment":
        monkeypatch.setenv("TENFERRO_CUDA_GRAPH", "0")
    f = tf.jit(lambda x: tf.exp(x) * 3.0, cuda_graph=how != "argument")
    for i in range(4):
        x = _rand(i, 5)
        np.testing.assert_allclose(f(x).numpy(), np.exp(x.numpy()) * 3.0, rtol=1e-14)
    st = _state(f, x)
    assert st.state == "off" and st.captures == 0 and st.replays == 0
    assert ("cuda_graph=False" if how == "argument" else "TENFERRO_CUDA_GRAPH") in st.reason


@gpu
def test_donation_still_consumes_the_argument():
    h = tf.jit(lambda y: tf.exp(y) * 2.0 + y, donate_argnums=0)
    for i in range(4):
        y = _rand(i, 8, 8)
        want = np.exp(y.numpy()) * 2.0 + y.numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = h(y)
        assert is_deleted(y)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-14)
    st = _state(h, _rand(9, 8, 8))
    assert st.state == "captured" and st.captures == 1 and st.replays == 3


@gpu
def test_one_capture_per_signature():
    f = tf.jit(lambda x: tf.cos(x) - x)
    for _ in range(3):
        for n in (3, 4):
            f(_rand(n, n))
    assert f.cache_info().traces == 2
    for n in (3, 4):
        assert _state(f, _rand(0, n)) == CudaGraphState("captured", 1, 2, None)


@gpu
def test_refused_cublas_falls_back_as_cupy_does(monkeypatch):
    """Without tenferro's own cuBLAS route, CuPy's products refuse the capture: one warning,
    uncaptured runs, right results."""
    from tenferro.jit import _cuda_graph  # noqa: PLC0415  (white-box: the route switched off)

    monkeypatch.setattr(_cuda_graph, "make_capture_blas", lambda *args: None)
    f = tf.jit(lambda a, b: tf.einsum("ij,jk->ik", a, b))
    a, b = _rand(0, 3, 3), _rand(1, 3, 3)
    f(a, b)
    with pytest.warns(GraphCaptureWarning, match="cuBLAS"):
        r = f(a, b)
    np.testing.assert_allclose(r.numpy(), a.numpy() @ b.numpy(), rtol=1e-14)
    assert _state(f, a, b).state == "uncaptured"


@gpu
def test_the_fake_graph_recomputes_on_launch_only():
    """The fake's contract the tests above rely on: a capture computes nothing
    (its outputs are garbage), a launch recomputes from the inputs' current data."""
    fake = _fake()
    if fake is None:
        pytest.skip("a fact about the CPU stand-in for CuPy")
    cp = sys.modules["cupy"]
    x = cp.asarray(np.arange(3.0))
    s, pool = cp.cuda.Stream(non_blocking=True), cp.cuda.MemoryPool()
    with s, cp.cuda.using_allocator(pool.malloc):
        s.begin_capture()
        y = cp.exp(x) + 1.0
        g = s.end_capture()
    assert np.isnan(y.get()).all()
    x[...] = cp.asarray(np.ones(3))
    g.launch(s)
    np.testing.assert_array_equal(y.get(), np.exp(np.ones(3)) + 1.0)
    with s:  # a capture outside a private pool refuses to launch
        s.begin_capture()
        cp.exp(x)
        g2 = s.end_capture()
    with pytest.raises(RuntimeError, match="default memory pool"):
        g2.launch(s)


def test_cpu_programs_have_no_runner():
    f = tf.jit(lambda x: x * 2.0)
    x = tf.ones((3,), placement=tf.CPU)
    for _ in range(3):
        f(x)
    low = f.lower(x)
    assert low.cuda_graph == CudaGraphState("off", 0, 0, "the program runs on the CPU")
    assert low._program.runner is None and low._program._run is low._program.fn


def test_cuda_graph_must_be_a_bool():
    with pytest.raises(tf.JitArgumentError, match="cuda_graph"):
        tf.jit(lambda x: x, cuda_graph="yes")
