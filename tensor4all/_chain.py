"""What an MPS and an MPO share: a chain of site tensors with the physical index
at axis 1 and the right bond at axis ``_RIGHT`` (2 for an MPS, 3 for an MPO)."""
from __future__ import annotations

from typing import Any

import tenferro as tf
import tidu

__all__ = ["SiteChain"]


class SiteChain:
    """Read-only views of a chain of site tensors (subclasses set ``_tensors``)."""

    __slots__ = ()
    _RIGHT: int = 2
    _tensors: list[Any]

    @property
    def tensors(self) -> list[Any]:
        """The site tensors (a new list)."""
        return list(self._tensors)

    @property
    def L(self) -> int:
        return len(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)

    @property
    def bond_dims(self) -> list[int]:
        """The ``L - 1`` inner bond dimensions."""
        return [tuple(t.shape)[self._RIGHT] for t in self._tensors[:-1]]

    @property
    def phys_dims(self) -> list[int]:
        return [tuple(t.shape)[1] for t in self._tensors]

    @property
    def dtype(self) -> Any:
        return tf.result_type(*[tidu.aval_of(t).dtype for t in self._tensors])
