"""Gradient specs of the indexing family (tenferro/_indexing.py, tenferro/_getitem.py).

Integer index operands are closed over (constants): they carry no tangent.
"""

from __future__ import annotations

import numpy as np

import tenferro as tf

from . import OpSpec

_IDX = np.array([[0, 2], [1, 1]])

SPECS = [
    # basic indexing -> slice (+ reshape); reverse mode transposes into slice_embed, whose
    # own transpose (slice) runs in the order-2 reverse check.
    OpSpec("getitem_basic", lambda x: x[1:, ::-2], [((4, 5),), ((0, 5),), ((1, 0),)], covers=("slice", "slice_embed")),
    OpSpec(
        "getitem_int_none",
        lambda x: x[-1, None, ::-1, ...],
        [((2, 3, 4),), ((1, 0, 2),)],
        covers=("slice", "slice_embed", "reshape"),
    ),
    OpSpec("getitem_scalar", lambda x: x[()], [((),)], covers=()),
    OpSpec(
        "slice_fn", lambda x: tf.slice(x, (3, None), (0, None), (-2, 2)), [((5, 3),)], covers=("slice", "slice_embed")
    ),
    OpSpec("getitem_array", lambda x: x[[0, 2, 0], 1:], [((3, 2),), ((3, 0),)], covers=("gather", "scatter_add")),
    OpSpec(
        "getitem_multi_adv",
        lambda x: x[[0, 1], :, [2, -1]],
        [((2, 2, 3),)],
        covers=("gather", "scatter_add", "transpose", "reshape"),
    ),
    OpSpec("take", lambda x: tf.take(x, _IDX, axis=1), [((3, 3),), ((0, 3),)], covers=("gather", "scatter_add")),
    OpSpec("take_flat", lambda x: tf.take(x, [-1, 0, 0]), [((3,),), ((2, 2),)], covers=("gather", "scatter_add")),
    OpSpec("take_0d_index", lambda x: tf.take(x, 1, axis=0), [((3,),), ((2, 2),)], covers=("gather",)),
    OpSpec(
        "scatter_add",
        lambda x, u: tf.scatter_add(x, [0, 2, 0], u, axis=0),
        [((3, 2), (3, 2)), ((4,), (3,)), ((3, 0), (3, 0))],
        covers=("scatter_add", "gather"),
    ),
    OpSpec(
        "dynamic_slice",
        lambda x: tf.dynamic_slice(x, (1, 5), (2, 2)),
        [((4, 5),), ((2, 2),)],
        covers=("dynamic_slice", "dynamic_update_slice"),
    ),
    OpSpec(
        "dynamic_slice_empty", lambda x: tf.dynamic_slice(x, (1,), (0,)), [((3,),), ((0,),)], covers=("dynamic_slice",)
    ),
    OpSpec(
        "dynamic_update_slice",
        lambda x, u: tf.dynamic_update_slice(x, u, (1, 0)),
        [((4, 5), (2, 3)), ((2, 2), (2, 2)), ((2, 2), (0, 1))],
        covers=("dynamic_update_slice", "dynamic_slice"),
    ),
    OpSpec(
        "dynamic_update_slice_0d",
        lambda x, u: tf.dynamic_update_slice(x, u, ()),
        [((), ())],
        covers=("dynamic_update_slice",),
    ),
]
