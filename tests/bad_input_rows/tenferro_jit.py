"""Bad-input rows of tenferro.jit: donated tensors, options, arguments and outputs it cannot trace."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tidu
from tenferro.jit import compile_report as tf_jit_compile_report

from .common import F, new_table
from .tidu_transforms import f1, f2

ROWS, row = new_table()


# ---- issue 21: tenferro.jit -------
def _use_after_donation(use):
    """Donate a fresh tensor to a jitted function, then ``use(h, y)`` it: any use raises."""

    def run():
        h = tf.jit(lambda a: tf.exp(a) * 2.0, donate_argnums=0)
        y = tf.ones((3,))
        h(y)
        return use(h, y)

    return run


for label, use in (
    ("call-again", lambda h, y: h(y)),
    ("op", lambda h, y: tf.exp(y)),
    ("operator", lambda h, y: y * 2.0),
    ("numpy", lambda h, y: y.numpy()),
    ("repr", lambda h, y: repr(y)),
    ("np.asarray", lambda h, y: np.asarray(y)),
    ("grad", lambda h, y: tidu.grad(f1)(y)),
    ("other-jit", lambda h, y: tf.jit(f1)(y)),
):
    row(f"jit-donated-then-{label}", _use_after_donation(use), (), tf.DeletedTensorError, "donated to tenferro.jit")
for kwargs, fragment in (
    ({"static_argnums": "0"}, "static_argnums must be an int"),
    ({"static_argnums": 1.5}, "static_argnums must be an int"),
    ({"static_argnums": 3}, "static_argnums contains 3, but the function takes 1 positional"),
    ({"static_argnames": 3}, "static_argnames must be a str"),
    ({"static_argnames": "n"}, "static_argnames contains 'n', which is not a parameter"),
    ({"donate_argnums": (0, None)}, "donate_argnums must be an int"),
    ({"donate_argnames": "y"}, "donate_argnames contains 'y'"),
    ({"maxsize": -1}, "maxsize must be a non-negative int"),
    ({"maxsize": "64"}, "maxsize must be a non-negative int"),
    ({"static_argnames": "x", "donate_argnums": 0}, "both static and donated"),
    ({"backend": "fast"}, "backend must be one of 'numpy', 'native', 'auto'"),
):
    row(
        "jit-" + ",".join(f"{k}={v!r}" for k, v in kwargs.items()),
        tf.jit,
        (f1,),
        tf.JitArgumentError,
        fragment,
        **kwargs,
    )

row(
    "jit-compile-report-of-a-plain-function",
    tf_jit_compile_report,
    (f1, F),
    tf.JitArgumentError,
    "compile_report: expected a function made by tenferro.jit, got function",
)
row("jit-range-argument", tf.jit(f2), (F, range(3)), tf.JitError, "argument 1 (y) is of type range")
row("jit-object-argument", tf.jit(f2), (F, object()), tf.JitError, "argument 1 (y) is of type object")
row("jit-function-argument", tf.jit(f2), (F, f1), tf.JitError, "argument 1 (y) is of type function")
row(
    "jit-object-in-pytree",
    tf.jit(lambda d: d["a"]),
    ({"a": F, "b": object()},),
    tf.JitError,
    "leaf 1 of argument 0 (d)",
)
row("jit-set-argument", tf.jit(f2), (F, {1, 2}), tf.JitError, "argument 1 (y) is of type set ({1, 2})")
row(
    "jit-function-keyword",
    tf.jit(lambda x, **kw: x),
    (F,),
    tf.JitError,
    "keyword argument 'mode' is of type builtin_function_or_method",
    mode=print,
)
row(
    "jit-static-by-keyword-unhashable",
    tf.jit(lambda x, n: x * n[0], static_argnums=1),
    (F,),
    tf.JitError,
    "keyword argument 'n' is static but unhashable",
    n=[2.0],
)
row("jit-numpy-output", tf.jit(lambda x: np.ones(3)), (F,), tf.JitError, "the output is of type numpy.ndarray")
row("jit-object-output", tf.jit(lambda x: (x, object())), (F,), tf.JitError, "output leaf 1")
row("jit-str-output", tf.jit(lambda x: "done"), (F,), tf.JitError, "the output is of type str")
row(
    "jit-lower-object-argument",
    lambda: tf.jit(f2).lower(F, object()),
    (),
    tf.JitError,
    "argument 1 (y) is of type object",
)
row(
    "jit-lower-donated",
    _use_after_donation(lambda h, y: h.lower(y)),
    (),
    tf.DeletedTensorError,
    "donated to tenferro.jit",
)
row(
    "jit-cache_info-bool-maxsize",
    lambda: tf.jit(f1, maxsize=True).cache_info(),
    (),
    tf.JitArgumentError,
    "maxsize must be a non-negative int",
)
