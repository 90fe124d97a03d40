"""Shared operands of the bad-input rows (small tensors, a shape-only object) and the table each row module fills."""

from __future__ import annotations

import numpy as np

import tenferro as tf

F = tf.asarray([1.0, 2.0, 3.0])
M = tf.asarray(np.eye(3) + 0.1)
I2 = tf.asarray(np.eye(2, dtype=np.int64))
B = tf.asarray([True, False])
NANM = tf.asarray(np.array([[1.0, np.nan], [0.0, 1.0]]))
INFM = tf.asarray(np.array([[1.0, 0.0], [np.inf, 1.0]]))
HUGE = (10**6, 10**6)


class Shaped:
    """An operand with a shape and no data (what einsum_path reads)."""

    def __init__(self, shape):
        self.shape = shape


def new_table():
    """A row module's ``ROWS`` and the ``row`` that appends to it: (id, fn, args, kwargs, exception, fragment)."""
    rows: list[tuple] = []

    def row(name, fn, args, exc, fragment, **kwargs):
        rows.append((name, fn, args, kwargs, exc, fragment))

    return rows, row
