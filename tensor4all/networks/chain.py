"""What an MPS and an MPO share: a chain of site tensors with the physical index
at axis 1 and the right bond at axis ``_RIGHT`` (2 for an MPS, 3 for an MPO), and
the checks every site tensor passes when a chain is built."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

import tenferro as tf
import tidu

from ..tools.errors import DimensionMismatchError, NonFiniteError, SiteOutOfRangeError, Tensor4allTypeError
from ..tools.checks import first_nonfinite, numeric_array
from ..structured import SymmetricTensor

__all__ = ["SiteChain", "site_tensors", "leaves_of", "local_vectors"]


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
        return tf.result_type(
            *[t.dtype if isinstance(t, SymmetricTensor) else tidu.aval_of(t).dtype for t in self._tensors]
        )


def leaves_of(ts: Any) -> list[Any]:
    """The dense arrays of a chain: the site tensors, or every block of symmetric sites."""
    return [b for t in ts for b in (t.blocks.values() if isinstance(t, SymmetricTensor) else (t,))]


def _site_tensor(t: Any, kind: str, i: int) -> Any:
    """One site tensor as a tenferro tensor (tracers pass through): a float or complex
    dtype (integers become float64), every extent at least 1. A NumPy array is copied, so a
    chain never shares the caller's buffer (a state caches its canonical form)."""
    if isinstance(t, SymmetricTensor):
        if t.dtype.kind not in ("float", "complex"):
            raise Tensor4allTypeError(f"{kind} site tensor {i} must have a float or complex dtype, got {t.dtype}")
    elif isinstance(t, (tf.Tensor, tidu.Tracer)):
        dt = tidu.aval_of(t).dtype
        if dt.kind == "int" and isinstance(t, tf.Tensor):
            t = t.astype(tf.float64)
        elif dt.kind not in ("float", "complex"):
            raise Tensor4allTypeError(f"{kind} site tensor {i} must have a float or complex dtype, got {dt}")
    else:
        try:
            a = np.asarray(t)
        except (TypeError, ValueError) as e:  # ragged nested lists and the like
            raise Tensor4allTypeError(f"{kind} site tensor {i} is not an array ({e})") from None
        if a is t or a.base is not None:  # the caller's buffer: a private copy (states cache their form)
            a = np.array(a, order="K", copy=True)
        if a.dtype.kind in "iu":
            a = a.astype(np.float64)
        elif a.dtype.kind not in "fc":
            raise Tensor4allTypeError(
                f"{kind} site tensor {i} must hold float or complex numbers, got a "
                f"{type(t).__name__} of dtype {a.dtype}"
            )
        t = tf.asarray(a)
    if 0 in tuple(t.shape):
        raise DimensionMismatchError(
            f"{kind} site tensor {i} has an extent 0 in shape {tuple(t.shape)}; "
            "bond and physical dimensions are at least 1"
        )
    return t


def site_tensors(tensors: Any, kind: str, ndim: int, layout: str) -> list[Any]:
    """The site tensors of an MPS (``ndim=3``) or MPO (``ndim=4``), checked: a non-empty
    sequence of ``ndim``-index float/complex arrays with no NaN or infinity. The bond
    structure is checked by the class."""
    if isinstance(tensors, (str, bytes)) or not isinstance(tensors, Iterable):
        raise Tensor4allTypeError(f"an {kind} takes a list of site tensors {layout}, got {type(tensors).__name__}")
    ts = [_site_tensor(t, kind, i) for i, t in enumerate(tensors)]
    if not ts:
        raise DimensionMismatchError(f"an {kind} needs at least one site tensor, got none")
    symmetric = [isinstance(t, SymmetricTensor) for t in ts]
    if any(symmetric) and not all(symmetric):
        raise Tensor4allTypeError(
            f"{kind} site tensors must be all SymmetricTensor or all dense; site "
            f"{symmetric.index(not symmetric[0])} differs from site 0"
        )
    for i, t in enumerate(ts):
        if len(tuple(t.shape)) != ndim:
            raise DimensionMismatchError(
                f"{kind} site tensor {i} must have {ndim} indices {layout}, got shape {tuple(t.shape)}"
            )
    bad = next((i for i, t in enumerate(ts) if first_nonfinite(leaves_of([t])) is not None), None)
    if bad is not None:
        raise NonFiniteError(f"{kind} site tensor {bad} holds NaN or infinity")
    return ts


def local_vectors(states: Sequence[Any], d: int) -> list[np.ndarray]:
    """The local vector of each site of a product state: a basis index (``0 <= s < d``) or a
    finite vector of length ``d``; typed errors name the site and what it should be."""
    if isinstance(states, (str, bytes)) or not hasattr(states, "__len__") or not hasattr(states, "__iter__"):
        raise Tensor4allTypeError(
            f"product_state takes a list of basis indices or local vectors, got {type(states).__name__} {states!r}"
        )
    if len(states) == 0:
        raise DimensionMismatchError("product_state needs at least one site, got an empty list")
    vecs = []
    for i, s in enumerate(states):
        if isinstance(s, (bool, np.bool_)):
            raise Tensor4allTypeError(
                f"product_state: site {i} state must be a basis index (int) or a local vector, got {s!r}"
            )
        if isinstance(s, (int, np.integer)):
            if not 0 <= s < d:
                raise SiteOutOfRangeError(f"product_state: site {i} state index {s} is outside 0..{d - 1}")
            v = np.zeros(d)
            v[s] = 1.0
        else:
            v = numeric_array(s, f"product_state: site {i} local vector")
            if v.shape != (d,):
                raise DimensionMismatchError(
                    f"product_state: site {i} local vector must have shape ({d},), got {v.shape}"
                )
            if not np.isfinite(v).all():
                raise NonFiniteError(f"product_state: site {i} local vector holds NaN or infinity: {v}")
        vecs.append(v)
    return vecs
