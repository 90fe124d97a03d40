"""Public entry points that are not linear algebra: ``einsum`` and ``matmul``.

Both accept any mix of structured and dense operands and run through the dispatcher.

>>> import numpy as np, tenferro as tf
>>> d = DiagonalTensor(tf.asarray(np.array([1.0, 2.0])))
>>> einsum("ij,jk->ik", d, tf.asarray(np.eye(2))).tolist()
[[1.0, 0.0], [0.0, 2.0]]
"""

from __future__ import annotations

from typing import Any

import tenferro as tf
import tidu

from ._checks import dense_operand
from ._diagonal import DiagonalTensor  # noqa: F401  (doctest namespace)
from ._dispatch import dispatch, is_structured
from .linalg import largest_block
from ..tools.threads import thread_policy

__all__ = ["einsum", "matmul", "tensordot", "to_dense"]


@thread_policy(bond=largest_block)
def einsum(subscripts: str, *operands: Any, **kwargs: Any) -> Any:
    """``tenferro.einsum`` over structured and dense operands. Diagonals stay 1-d
    operands on hyper-edges; other structures are densified (and counted) if no kernel
    covers them."""
    return dispatch("einsum", subscripts, *operands, **kwargs)


@thread_policy(bond=largest_block)
def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` for any mix of structured and dense matrices."""
    return dispatch("matmul", a, b)


@thread_policy(bond=largest_block)
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``tenferro.tensordot`` over structured and dense operands (NumPy's ``axes``)."""
    return dispatch("tensordot", a, b, axes)


def to_dense(x: Any) -> Any:
    """The dense tensor of ``x``: structured tensors are densified, tensors and tracers
    pass through, arrays, lists and numbers become tensors; anything else is a
    :class:`StructuredTypeError`."""
    if is_structured(x):
        return x.to_dense()
    x = dense_operand("to_dense", 0, x)
    return x if isinstance(x, (tf.Tensor, tidu.Tracer)) else tf.asarray(x)
