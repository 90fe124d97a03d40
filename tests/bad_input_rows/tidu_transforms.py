"""Bad-input rows of tidu: argnums, tracer conversions, jvp/vjp/hvp, vmap, the gradient checks, pytrees."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tidu
from tidu.testing import check_grads, check_jvp, check_vjp

from .common import F, new_table

ROWS, row = new_table()


# ---- tidu --------------------------------------------------------------------------------
def f1(x):
    return tf.sum(x * x)


def f2(x, y):
    return tf.sum(x * y)


for t in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
    tr = getattr(tidu, t)
    row(
        f"{t}-argnums-duplicate",
        lambda tr=tr: tr(f2, argnums=(0, 0))(F, F),
        (),
        tidu.InvalidArgumentError,
        "repeats argument 0",
    )
    for bad in ("a", 1.5, None, (0, "a")):
        row(
            f"{t}-argnums-{bad!r}",
            lambda tr=tr, bad=bad: tr(f1, argnums=bad)(F),
            (),
            tidu.InvalidArgumentError,
            "argnums must be an int or a tuple of ints",
        )
    row(f"{t}-argnums-range", lambda tr=tr: tr(f1, argnums=3)(F), (), tidu.TreeStructureError, "out of range")
for conv, label in (
    (float, "float"),
    (complex, "complex"),
    (int, "int"),
    (lambda v: v.item(), "item"),
    (lambda v: v.tolist(), "tolist"),
    (lambda v: v.numpy(), "numpy"),
    (np.asarray, "asarray"),
):
    row(
        f"grad-{label}-of-tracer",
        lambda conv=conv: tidu.grad(
            lambda x: tf.sum(x) * tf.sum(tf.asarray(np.real(np.asarray(conv(x[0]))).astype(float)))
        )(F),
        (),
        tidu.TracerConversionError,
        "stop_gradient",
    )
    row(
        f"jvp-{label}-of-tracer",
        lambda conv=conv: tidu.jvp(lambda x: conv(x[0]), (F,), (F,)),
        (),
        tidu.TracerConversionError,
        "stop_gradient",
    )
row("grad-nonscalar", lambda: tidu.grad(lambda x: x)(F), (), tidu.NonScalarOutputError, "scalar output")
row(
    "grad-bool-output",
    lambda: tidu.grad(lambda x: tf.sum(x) > 0)(F),
    (),
    tidu.NonDifferentiableError,
    "not differentiable",
)
row(
    "grad-int-input",
    lambda: tidu.grad(lambda x: tf.sum(x))(tf.asarray([1, 2])),
    (),
    tidu.NonDifferentiableError,
    "not differentiable",
)
row(
    "grad-complex-output",
    lambda: tidu.grad(lambda x: tf.sum(x))(tf.asarray([1j])),
    (),
    tidu.ComplexOutputError,
    "holomorphic",
)
row("jvp-tensor-primals", lambda: tidu.jvp(f1, F, F), (), tidu.TreeStructureError, "tuples or lists")
row("jvp-tangent-shape", lambda: tidu.jvp(f1, (F,), (tf.ones((2,)),)), (), tidu.TangentMismatchError, "tangent")
row("hvp-tensor", lambda: tidu.hvp(f1, F, F), (), tidu.TreeStructureError, "hvp(f, (x,), (v,))")
row("vmap-not-callable", lambda: tidu.vmap(3), (), tidu.InvalidArgumentError, "expects a callable")
row("vmap-bad-in-axes", lambda: tidu.vmap(f1, in_axes="0")(F), (), tidu.InvalidArgumentError, "must be an int, None")
row("vmap-axis-range", lambda: tidu.vmap(f1, in_axes=5)(F), (), tidu.InvalidArgumentError, "out of range")
row("vmap-no-mapped-argument", lambda: tidu.vmap(f1, in_axes=None)(F), (), tidu.InvalidArgumentError, "axis_size")
row("vmap-bad-axis-size", lambda: tidu.vmap(f1, axis_size=2.5), (), tidu.InvalidArgumentError, "axis_size must be")
for check in (check_grads, check_jvp, check_vjp):
    n = check.__name__
    row(f"{n}-tensor-args", check, (f1, F), tidu.InvalidArgumentError, "must be a tuple")
    row(f"{n}-int-input", check, (f1, (tf.asarray([1, 2]),)), tidu.NonDifferentiableError, "checks nothing")
    for k, bad in (("eps", -1.0), ("eps", 0.0), ("eps", float("nan")), ("atol", -1.0), ("rtol", -1.0), ("atol", "a")):
        row(f"{n}-{k}-{bad!r}", check, (f1, (F,)), tidu.InvalidArgumentError, f"{k} must be", **{k: bad})
for bad in (-1, 0, "a", 1.5):
    row(f"check_grads-order-{bad!r}", check_grads, (f1, (F,)), tidu.InvalidArgumentError, "order must be", order=bad)
row("check_grads-mode", check_grads, (f1, (F,)), tidu.InvalidArgumentError, "unknown mode", modes=("side",))
row(
    "register_pytree_node-str",
    tidu.register_pytree_node,
    ("str", lambda t: ((), None), lambda a, c: None),
    tidu.InvalidArgumentError,
    "nodetype must be a class",
)
row(
    "register_pytree_node-flatten",
    tidu.register_pytree_node,
    (type("T", (), {}), 3, lambda a, c: None),
    tidu.InvalidArgumentError,
    "flatten must be callable",
)
row(
    "vjp-cotangent",
    lambda: tidu.vjp(lambda x: x * 2.0, F)[1](tf.ones((2,))),
    (),
    tidu.TangentMismatchError,
    "cotangent",
)
