"""Bad-input rows whose messages lead to the fix (issue 47, part a): tidu.vmap, einsum options, Dask clients."""

from __future__ import annotations

import decimal
import importlib.util

import numpy as np

import tenferro as tf
import tidu

from .common import F, new_table

ROWS, row = new_table()


# ---- issue 47: messages that lead to the fix -----------------------------------------------
# (a) tidu.vmap and tenferro (einsum memory_limit, distributed client)

A_X = tf.asarray(np.arange(15.0).reshape(5, 3))
A_Y = tf.asarray(np.arange(5.0))
# 1. integer options take NumPy integers and integral Decimals; what is still refused names the option
row(
    "einsum-memory_limit-fractional-Decimal",
    tf.einsum,
    ("ij,j->i", A_X, F),
    tf.TenferroValueError,
    "memory_limit must be a positive integer number of bytes",
    memory_limit=decimal.Decimal("1024.5"),
)
row(
    "einsum-memory_limit-integral-float",
    tf.einsum,
    ("ij,j->i", A_X, F),
    tf.TenferroValueError,
    "got 1024.0 (a float: pass int(...))",
    memory_limit=1024.0,
)
row(
    "einsum_slicing-min_slices-np-zero",
    tf.einsum_slicing,
    ("ij,j->i", A_X, F),
    tf.TenferroValueError,
    "min_slices must be a positive integer, got np.int64(0)",
    memory_limit=np.int64(1 << 20),
    min_slices=np.int64(0),
)
# 2. what vmap cannot batch is named with the argument or output and the fix
row(
    "vmap-int-argument-mapped",
    lambda: tidu.vmap(lambda x, n: x * n)(A_X, 3),
    (),
    tidu.UnbatchableError,
    "argument 1 is an int, which vmap cannot map over axis 0",
)
row(
    "vmap-int-argument-fix",
    lambda: tidu.vmap(lambda x, n: x * n)(A_X, 3),
    (),
    tidu.UnbatchableError,
    "pass in_axes=(0, None) to use it unchanged in every example",
)
row(
    "vmap-str-output",
    lambda: tidu.vmap(lambda x: "a")(A_X),
    (),
    tidu.UnbatchableError,
    "vmap's output is a str; vmap returns tensors and numbers",
)
row(
    "vmap-str-output-leaf",
    lambda: tidu.vmap(lambda x: (x, {"s": "a"}))(A_X),
    (),
    tidu.UnbatchableError,
    "vmap's output[1]['s'] is a str",
)
row(
    "vmap-ndarray-argument",
    lambda: tidu.vmap(lambda x: x)(np.ones((5, 3))),
    (),
    tidu.UnbatchableError,
    "argument 0 is a ndarray, which vmap cannot map over axis 0",
)
row(
    "vmap-list-argument",
    lambda: tidu.vmap(lambda x: x)([1.0, 2.0]),
    (),
    tidu.UnbatchableError,
    "argument 0 is a list, and vmap maps each of its entries separately",
)
row(
    "vmap-number-output-no-argument",
    lambda: tidu.vmap(lambda: 1.5, in_axes=None, axis_size=3)(),
    (),
    tidu.UnbatchableError,
    "no argument's type can hold a number",
)
# 3. keyword arguments are mapped over their axis 0 (JAX); one that cannot be says so
row(
    "vmap-keyword-int",
    lambda: tidu.vmap(lambda x, b: x * b)(A_X, b=3),
    (),
    tidu.UnbatchableError,
    "keyword argument 'b' is an int, which vmap cannot map over axis 0 (keyword arguments are always mapped",
)
row(
    "vmap-keyword-0d",
    lambda: tidu.vmap(lambda x, b: x * b)(A_X, b=tf.asarray(2.0)),
    (),
    tidu.UnbatchableError,
    "keyword argument 'b' has no axes",
)
row(
    "vmap-keyword-size",
    lambda: tidu.vmap(lambda x, b: x[0] * b)(A_X, b=tf.ones((4,))),
    (),
    tidu.InvalidArgumentError,
    "argument 0: 5, keyword argument 'b': 4",
)
# 4. an axis_size beyond memory (10**13 examples: past any address space) is the project's memory error
row(
    "vmap-axis_size-out-of-memory",
    lambda: tidu.vmap(lambda x: x, in_axes=None, axis_size=10**13)(A_X),
    (),
    tf.TenferroMemoryError,
    "cannot allocate 1200000000000000 bytes (1.07 PiB) to broadcast a float64 tensor of "
    "shape (5, 3) over axis_size=10000000000000",
)
row(
    "broadcast_to-out-of-memory",
    tf.broadcast_to,
    (F, (10**13, 3)),
    tf.TenferroMemoryError,
    "broadcast_to: cannot allocate 240000000000000 bytes",
)
# 5. a closed Dask client is refused before any work
if importlib.util.find_spec("distributed") is not None:
    import distributed

    import tenferro.distributed as _td

    def _einsum_on_closed_client():
        client = distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0")
        client.close()
        return _td.einsum("ij,j->i", A_X, F, client=client)

    row(
        "distributed.einsum-closed-client",
        _einsum_on_closed_client,
        (),
        _td.DaskClientError,
        "the Dask client is closed",
    )
    row(
        "distributed.einsum-closed-client-fix",
        _einsum_on_closed_client,
        (),
        _td.DaskClientError,
        "pass an open distributed.Client, or client=None",
    )
    row(
        "distributed.einsum-tasks-float",
        _td.einsum,
        ("ij,j->i", A_X, F),
        tf.TenferroValueError,
        "tasks must be a positive integer",
        tasks=2.5,
    )
# end (a)
