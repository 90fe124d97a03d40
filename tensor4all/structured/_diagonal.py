"""``DiagonalTensor``: a dense 1-d leaf standing for an n x n (x ... x n) diagonal tensor.

>>> import numpy as np, tenferro as tf
>>> d = DiagonalTensor(tf.asarray(np.array([1.0, 2.0])))
>>> d.shape, d.to_dense().tolist()
(Shape(2, 2), [[1.0, 0.0], [0.0, 2.0]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tenferro as tf
import tidu
from tenferro import Shape

from ._base import StructuredTensor
from ._checks import as_int
from ._errors import StructuredShapeError, StructuredTypeError

__all__ = ["DiagonalTensor", "as_leaf"]


def as_leaf(x: Any) -> Any:
    """A tenferro tensor or tracer (NumPy arrays and lists are converted)."""
    if isinstance(x, (tf.Tensor, tidu.Tracer)):
        return x
    return tf.asarray(np.asarray(x))


def checked_leaf(value: Any, op: str, what: str) -> Any:
    """``as_leaf(value)``; anything that is not a tensor or an array of numbers is a
    :class:`StructuredTypeError` naming ``what`` (the block, the sector)."""
    try:
        return as_leaf(value)
    except (tf.TenferroError, TypeError, ValueError):
        raise StructuredTypeError(
            f"{op}: {what} must be a tensor or an array of numbers, got {type(value).__name__} {value!r:.80}"
        ) from None


class DiagonalTensor(StructuredTensor):
    """A diagonal tensor stored as its diagonal ``diag`` (a dense 1-d leaf).

    Logically ``n x n`` (``ndim=2``) or ``n x ... x n`` (``ndim`` modes);
    ``to_dense()`` is ``einsum("i->ii", diag)``. In einsum it stays a 1-d operand on a
    hyper-edge. A tidu pytree node: ``tidu.grad`` with respect to a DiagonalTensor
    returns a DiagonalTensor holding the diagonal of the dense gradient.
    """

    __slots__ = ("_diag", "_ndim")

    def __init__(self, diag: Any, ndim: int = 2) -> None:
        diag = as_leaf(diag)
        if len(diag.shape) != 1:
            raise StructuredShapeError(f"DiagonalTensor: diag must be 1-d, got shape {tuple(diag.shape)}")
        ndim = as_int("DiagonalTensor", "ndim", ndim)
        if ndim < 2:
            raise StructuredShapeError(f"DiagonalTensor: ndim must be an int >= 2, got {ndim!r}")
        self._diag, self._ndim = diag, ndim

    @classmethod
    def _from_leaves(cls, ndim: int, leaves: Any) -> DiagonalTensor:
        """Unchecked constructor (pytree unflatten: leaves may be None or symbolic)."""
        out = object.__new__(cls)
        out._diag, out._ndim = leaves[0], ndim
        return out

    @property
    def diag(self) -> Any:
        """The diagonal (dense 1-d leaf)."""
        return self._diag

    @property
    def n(self) -> int:
        """The extent of every mode."""
        return self._diag.shape[0]

    @property
    def leaves(self) -> tuple[Any, ...]:
        return (self._diag,)

    @property
    def shape(self) -> Shape:
        return Shape((self.n,) * self._ndim)

    @property
    def ndim(self) -> int:
        return self._ndim

    def to_dense(self) -> Any:
        return tf.einsum("i->" + "i" * self._ndim, self._diag)

    def _rebuild(self, leaves: Any) -> DiagonalTensor:
        return DiagonalTensor(leaves[0], self._ndim)

    def _describe(self) -> str:
        return f"DiagonalTensor(n={self.n}, ndim={self._ndim}, {self.dtype})"

    def _leaf_name(self, k: int) -> str:
        return "the diagonal"

    def _repr_fields(self) -> list[tuple[str, Any]]:
        return [("diag", self._diag)] + ([("ndim", self._ndim)] if self._ndim != 2 else [])


tidu.register_pytree_node(DiagonalTensor, lambda d: ((d._diag,), d._ndim), DiagonalTensor._from_leaves)
