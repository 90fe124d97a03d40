"""tidu from several threads: each thread has its own stack of transformations."""

import sys
import threading

import numpy as np
import pytest

import tidu
from toy import cos, mul, sin


def _f(x):
    return mul(sin(mul(x, x)), cos(x))


def _df(x):
    return np.cos(x * x) * 2 * x * np.cos(x) - np.sin(x * x) * np.sin(x)


def test_concurrent_grads_are_correct():
    n_threads, n_iter = 6, 50
    barrier = threading.Barrier(n_threads)
    errors: list = []
    results: dict = {}

    def work(k):
        try:
            barrier.wait()
            xs = [np.array(0.1 * k + 0.01 * i) for i in range(n_iter)]
            results[k] = [(x, tidu.grad(_f)(x), tidu.grad(tidu.grad(_f))(x)) for x in xs]
        except BaseException as e:  # reported below, in the main thread
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: interleave the transformations
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert len(results) == n_threads
    for rows in results.values():
        for x, g, gg in rows:
            np.testing.assert_allclose(g, _df(x), rtol=1e-13)
            h = 1e-6  # central difference of the exact first derivative: error ~h**2 + eps/h ~ 1e-10
            np.testing.assert_allclose(gg, (_df(x + h) - _df(x - h)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_stack_is_per_thread():
    from tidu._core import current_stack

    seen = []

    def inner(x):
        t = threading.Thread(target=lambda: seen.append(len(current_stack())))
        t.start()
        t.join()
        seen.append(len(current_stack()))
        return sin(x)

    tidu.grad(inner)(np.array(0.3))
    assert seen == [0, 2]  # other thread: empty; this one: the JVP and graph traces


def test_tracer_used_from_another_thread_is_an_error():
    handed = threading.Event()
    done = threading.Event()
    box: list = []
    caught: list = []

    def f(x):
        box.append(x)
        handed.set()
        done.wait(10)  # keep this transformation running while the other thread tries
        return sin(x)

    def other():
        handed.wait(10)
        try:
            sin(box[0])
        except tidu.UnexpectedTracerError as e:
            caught.append(str(e))
        finally:
            done.set()

    t = threading.Thread(target=other)
    t.start()
    np.testing.assert_allclose(tidu.grad(f)(np.array(0.4)), np.cos(0.4))
    t.join()
    assert len(caught) == 1 and "another thread" in caught[0] and "'sin'" in caught[0]


def test_tracer_of_another_thread_in_custom_function():
    @tidu.custom_jvp
    def g(x):
        return sin(x)

    g.defjvp(lambda p, t: (g(p[0]), mul(t[0], cos(p[0]))))
    handed, done = threading.Event(), threading.Event()
    box: list = []

    def f(x):
        box.append(x)
        handed.set()
        done.wait(10)
        return sin(x)

    t = threading.Thread(target=tidu.grad(f), args=(np.array(0.4),))
    t.start()
    handed.wait(10)
    try:
        with pytest.raises(tidu.UnexpectedTracerError, match="another thread"):
            g(box[0])
    finally:
        done.set()
        t.join()
