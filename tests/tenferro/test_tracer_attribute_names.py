"""Methods of a tensor reach it through a tracer of every transformation. ``x.var()`` under
``tenferro.jit`` raised ``TypeError: 'Var' object is not callable``: the graph tracer kept its
graph variable in an attribute named ``var``, which shadowed ``Tensor.var``. A tracer's own
attributes now never share a name with a public attribute of ``Tensor``."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tidu
from tidu._tracer import Tracer

X = np.array([0.3, -1.2, 2.5, 0.7])


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_no_tracer_attribute_shadows_a_tensor_method():
    public = {n for n in dir(tf.Tensor) if not n.startswith("_")}
    tracers = _subclasses(Tracer)
    assert len(tracers) >= 3  # the graph, JVP and batch tracers at least
    for cls in tracers:
        own = set()
        for k in cls.__mro__:
            own |= set(getattr(k, "__slots__", ())) | set(vars(k))
        assert not own & public, f"{cls.__name__} shadows Tensor.{sorted(own & public)}"


def test_statistics_methods_under_every_transformation():
    x = tf.asarray(X)
    for name in ("var", "std", "mean", "sum", "max"):
        want = getattr(np, name)(X)
        np.testing.assert_allclose(float(tf.jit(lambda t: getattr(t, name)())(x)), want, rtol=1e-14)
        np.testing.assert_allclose(float(tidu.jvp(lambda t: getattr(t, name)(), (x,), (x,))[0]), want, rtol=1e-14)
    g = tidu.grad(lambda t: t.var())(x)
    np.testing.assert_allclose(np.asarray(g), 2 * (X - X.mean()) / X.size, rtol=1e-14)
    batched = tidu.vmap(lambda t: t.var())(tf.asarray(np.stack([X, 2 * X])))
    np.testing.assert_allclose(np.asarray(batched), [X.var(), 4 * X.var()], rtol=1e-14)
