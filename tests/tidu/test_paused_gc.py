"""Reverse mode pauses Python's cyclic garbage collector while it builds and transposes
its graph (tidu._ad.paused_gc), and always restores it: after the call, after an error,
and never turning on a collector the caller had turned off."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import tidu
from toy import mul, reduce_sum, sin


def _loss(seen: list):
    def f(x):
        seen.append(gc.isenabled())
        return reduce_sum(mul(sin(x), x))

    return f


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_grad_pauses_the_collector_and_restores_it():
    seen: list = []
    x = np.array([0.3, -1.2, 2.0])
    g = tidu.grad(_loss(seen))(x)
    assert seen == [False] and gc.isenabled()
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-13)  # d/dx sum(x sin x)


def test_vjp_pauses_it_for_linearization_and_transposition():
    seen: list = []
    out, vjp_fn = tidu.vjp(_loss(seen), np.array([0.5, 1.5]))
    assert seen == [False] and gc.isenabled()
    (ct,) = vjp_fn(np.float64(1.0))
    assert gc.isenabled()
    np.testing.assert_allclose(ct, np.cos([0.5, 1.5]) * [0.5, 1.5] + np.sin([0.5, 1.5]), rtol=1e-13)


def test_an_error_restores_the_collector():
    def f(x):
        raise ValueError("inside the function")

    with pytest.raises(ValueError, match="inside the function"):
        tidu.grad(f)(np.array([1.0]))
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    seen: list = []
    tidu.value_and_grad(_loss(seen))(np.array([1.0, 2.0]))
    assert seen == [False] and not gc.isenabled()
