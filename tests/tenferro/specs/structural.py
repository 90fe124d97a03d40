"""Gradient specs of the structural family (tenferro/_structural.py)."""

from __future__ import annotations

import tenferro as tf

from . import OpSpec


def _rev_shape(x):
    return tf.reshape(x, tuple(reversed(tuple(x.shape))))


SPECS = [
    OpSpec("reshape", _rev_shape, [((2, 3),), ((),), ((0, 3),)], covers=("reshape",)),
    OpSpec(
        "reshape_c",
        lambda x: tf.reshape(x, (-1,), order="C"),
        [((2, 3),), ((2, 3, 2),)],
        covers=("reshape", "transpose"),
    ),
    OpSpec("transpose", lambda x: tf.transpose(x), [((2, 3, 4),), ((),), ((0, 2),)], covers=("transpose",)),
    OpSpec("transpose_axes", lambda x: tf.transpose(x, (1, 2, 0)), [((2, 3, 1),)], covers=("transpose",)),
    OpSpec(
        "broadcast_to",
        lambda x: tf.broadcast_to(x, (2,) + tuple(x.shape)),
        [((3,),), ((),), ((0,),)],
        covers=("broadcast_in_dim",),
    ),
    OpSpec(
        "broadcast_to_unit", lambda x: tf.broadcast_to(x, (2, 3)), [((1, 3),), ((1, 1),)], covers=("broadcast_in_dim",)
    ),
    OpSpec(
        "squeeze_expand", lambda x: tf.expand_dims(tf.squeeze(x), (0, -1)), [((1, 3, 1),), ((),)], covers=("reshape",)
    ),
    OpSpec(
        "concatenate",
        lambda x, y: tf.concatenate([x, y, x], axis=1),
        [((2, 3), (2, 1)), ((2, 0), (2, 2)), ((0, 1), (0, 2))],
        covers=("concatenate",),
    ),
    OpSpec(
        "stack",
        lambda x, y: tf.stack([x, y], axis=-1),
        [((2, 3), (2, 3)), ((), ()), ((0,), (0,))],
        covers=("concatenate", "reshape"),
    ),
    OpSpec("pad", lambda x: tf.pad(x, ((1, 0), (2, 1))), [((2, 3),), ((0, 2),)], covers=("pad",)),
    OpSpec("pad_int", lambda x: tf.pad(x, 1), [((3,),), ((),), ((2, 0),)], covers=("pad",)),
    OpSpec(
        "pad_traced_value",
        lambda x, v: tf.pad(x, (0, 2), constant_values=v),
        [((2, 3), ()), ((0,), ())],
        covers=("pad",),
    ),
    OpSpec("flip", lambda x: tf.flip(x, 0), [((3,),), ((2, 3),)], covers=("rev",)),
    OpSpec("flip_all", lambda x: tf.flip(x), [((2, 3),), ((),), ((0, 2),)], covers=("rev",)),
]
