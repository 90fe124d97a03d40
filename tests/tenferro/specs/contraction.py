"""Gradient specs of the contraction family (tenferro/_contraction.py)."""

from __future__ import annotations

import tenferro as tf

from . import OpSpec

_MM_SHAPES = [((3, 4), (4, 2)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((0, 4), (4, 2)), ((3, 0), (0, 2))]

SPECS = [
    OpSpec("matmul", lambda x, y: x @ y, _MM_SHAPES, covers=("dot_general",)),
    OpSpec(
        "matmul_batched",
        tf.matmul,
        [((2, 3, 4), (1, 4, 2)), ((2, 3, 4), (4,)), ((4,), (2, 4, 3))],
        covers=("dot_general", "transpose", "broadcast_in_dim"),
    ),
    OpSpec(
        "dot_general_trailing_batch",
        lambda x, y: tf.dot_general(x, y, (((0,), (1,)), ((2,), (0,)))),
        [((4, 3, 2), (2, 4, 5)), ((4, 0, 2), (2, 4, 1))],
        covers=("dot_general",),
    ),
    OpSpec(
        "dot_general_multi",
        lambda x, y: tf.dot_general(x, y, (((2, 0), (0, 3)), ((1,), (2,)))),
        [((2, 3, 4), (4, 5, 3, 2))],
        covers=("dot_general", "transpose"),
    ),
    OpSpec("tensordot", lambda x, y: tf.tensordot(x, y, 1), [((2, 3), (3, 2)), ((3,), (3,))], covers=("dot_general",)),
    OpSpec("tensordot_outer", lambda x, y: tf.tensordot(x, y, 0), [((2,), (3,)), ((), ())], covers=("dot_general",)),
    OpSpec(
        "vdot", tf.vdot, [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (6,)), ((0,), (0,))], covers=("dot_general", "conj")
    ),
    OpSpec("inner", tf.inner, [((2, 3), (4, 3))], covers=("dot_general",)),
    OpSpec("outer", tf.outer, [((2,), (3,)), ((2, 2), (3,))], covers=("dot_general",)),
]
