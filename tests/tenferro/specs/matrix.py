"""Gradient specs of the matrix helpers (tenferro/_matrix.py); batch axes trail."""

from __future__ import annotations

import tenferro as tf

from . import OpSpec

SPECS = [
    OpSpec(
        "diagonal",
        lambda x: tf.diagonal(x, 1),
        [((3, 4),), ((3, 3, 2),), ((0, 3),)],
        covers=("extract_diag", "embed_diag"),
    ),
    OpSpec("diagonal_axes", lambda x: tf.diagonal(x, -1, 2, 1), [((2, 3, 3),)], covers=("extract_diag", "transpose")),
    OpSpec(
        "embed_diag",
        lambda v: tf.embed_diag(v, -1),
        [((3,),), ((2, 2),), ((0,),)],
        covers=("embed_diag", "extract_diag"),
    ),
    OpSpec("diag", lambda v: tf.diag(v), [((3,),), ((3, 2),)], covers=("embed_diag", "extract_diag")),
    OpSpec("tril", lambda x: tf.tril(x, -1), [((3, 4),), ((3, 3, 2),), ((0, 2),)], covers=("triangle",)),
    OpSpec("triu", lambda x: tf.triu(x, 1), [((4, 3),), ((2, 2, 0),)], covers=("triangle",)),
    OpSpec("trace", lambda x: tf.trace(x), [((3, 3),), ((3, 4, 2),), ((0, 0),)], covers=("extract_diag", "sum")),
    OpSpec("trace_axes", lambda x: tf.trace(x, 1, 1, 2), [((2, 3, 3),)], covers=("extract_diag",)),
]
