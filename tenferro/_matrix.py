"""Matrix helpers: diagonals, triangles and traces (all linear).

tenferro's linalg convention is **trailing batch**: the matrix axes come first
and batch axes trail, ``[M, N, B...]`` (each matrix is a contiguous block of
column-major storage). The helpers here default to the axes ``(0, 1)``:

* ``diagonal(x, offset, axis1=0, axis2=1)``: the diagonal axis takes the place of
  the first of the two axes, so ``[M, N, B...] -> [K, B...]`` (NumPy appends it
  last instead; the two agree whenever no other axis precedes ``min(axis1, axis2)``).
* ``embed_diag(v, k)``: ``[K, B...] -> [K+|k|, K+|k|, B...]``; ``diag(v, k)``
  is NumPy's 1-D/2-D ``diag``.
* ``tril`` / ``triu`` act on axes ``(0, 1)`` (NumPy uses the last two).
* ``trace`` agrees with ``numpy.trace``.

Primitives: ``extract_diag`` and ``embed_diag`` (each other's transpose) and
``triangle`` (a masking projection: its own transpose).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dispatch import dispatchable
from ._errors import ShapeError, fmt_shape
from ._aval import fortran, meta, xp_of
from ._operands import as_operand
from ._registry import primitive
from ._batching import trailing_batch
from ._shape import as_index
from ._structural import _norm_axis, transpose
from ._tensor import Tensor
from ._structural import sum_p

FAMILY = "matrix"


def _diag_len(m: int, n: int, k: int) -> int:
    return max(0, min(m, n - k)) if k >= 0 else max(0, min(m + k, n))


def _need_matrix(op: str, a: Any) -> None:
    if len(a.shape) < 2:
        raise ShapeError(
            f"{op}: expected a tensor of rank >= 2 (matrices on axes 0 and 1, batch axes trailing), got {a}"
        )


# ---------------------------------------------------------------------------
# extract_diag: [M, N, B...] -> [K, B...] ; embed_diag: [K, B...] -> [M, N, B...]
# ---------------------------------------------------------------------------
extract_diag_p = primitive("extract_diag", FAMILY)
extract_diag_p.def_batch(trailing_batch(extract_diag_p))  # matrices in the first two axes, batch after


@extract_diag_p.def_impl
def _extract_diag_impl(x, offset):
    # ``np.diagonal`` is a read-only view (contiguous when short): always copy
    return Tensor._wrap(np.moveaxis(np.diagonal(x._data, offset, 0, 1), -1, 0).copy(order="F"))


@extract_diag_p.def_abstract_eval
def _extract_diag_aval(a, offset):
    _need_matrix("extract_diag", a)
    return a.update(shape=(_diag_len(a.shape[0], a.shape[1], offset),) + tuple(a.shape[2:]))


@extract_diag_p.def_linear
def _extract_diag_transpose(ct, x, offset):
    m, n = x.aval.shape[:2]
    return [embed_diag_p.bind(ct, offset=offset, rows=m, cols=n)]


embed_diag_p = primitive("embed_diag", FAMILY)
embed_diag_p.def_batch(trailing_batch(embed_diag_p))  # matrices in the first two axes, batch after


@embed_diag_p.def_impl
def _embed_diag_impl(v, offset, rows, cols):
    a = v._data
    xp = xp_of(a)
    out = xp.zeros((rows, cols) + a.shape[1:], dtype=a.dtype, order="F")
    r = xp.arange(a.shape[0])
    out[r + max(-offset, 0), r + max(offset, 0)] = a
    return Tensor._wrap(out)


@embed_diag_p.def_abstract_eval
def _embed_diag_aval(a, offset, rows, cols):
    if len(a.shape) < 1 or a.shape[0] != _diag_len(rows, cols, offset):
        raise ShapeError(
            f"embed_diag: operand {a} does not fit diagonal {offset} of a {rows}x{cols} matrix; "
            f"expected leading extent {_diag_len(rows, cols, offset)}"
        )
    return a.update(shape=(rows, cols) + tuple(a.shape[1:]))


@embed_diag_p.def_linear
def _embed_diag_transpose(ct, v, offset, rows, cols):
    return [extract_diag_p.bind(ct, offset=offset)]


# ---------------------------------------------------------------------------
# triangle: zero the entries above (lower=True) or below the k-th diagonal
# ---------------------------------------------------------------------------
triangle_p = primitive("triangle", FAMILY)
triangle_p.def_batch(trailing_batch(triangle_p))  # matrices in the first two axes, batch after


@triangle_p.def_impl
def _triangle_impl(x, k, lower):
    a = x._data
    xp = xp_of(a)
    m, n = a.shape[:2]
    mask = xp.tri(m, n, k, dtype=bool) if lower else ~xp.tri(m, n, k - 1, dtype=bool)
    mask = mask.reshape((m, n) + (1,) * (a.ndim - 2))
    return Tensor._wrap(fortran(xp.where(mask, a, xp.zeros((), a.dtype))))


@triangle_p.def_abstract_eval
def _triangle_aval(a, k, lower):
    _need_matrix("tril" if lower else "triu", a)
    return a


@triangle_p.def_linear
def _triangle_transpose(ct, x, k, lower):
    return [triangle_p.bind(ct, k=k, lower=lower)]


# ---------------------------------------------------------------------------
# user functions
# ---------------------------------------------------------------------------
def _to_front(op: str, x: Any, axis1: int, axis2: int) -> tuple[Any, int]:
    """``x`` with ``axis1, axis2`` moved to the front; returns it and min(axis1, axis2)."""
    nd = len(meta(x)[0])
    if nd < 2:
        raise ShapeError(f"{op}: expected a tensor of rank >= 2, got shape {fmt_shape(meta(x)[0])}")
    a1, a2 = _norm_axis(op, axis1, nd), _norm_axis(op, axis2, nd)
    if a1 == a2:
        raise ShapeError(f"{op}: axis1 and axis2 must differ, got both = {a1}")
    perm = (a1, a2) + tuple(i for i in range(nd) if i not in (a1, a2))
    return transpose(x, perm), min(a1, a2)


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset``-th diagonal of the matrices on axes ``(axis1, axis2)``.

    The diagonal axis replaces the first of the two axes (trailing-batch
    convention): ``[M, N, B...] -> [K, B...]``. NumPy appends it last instead.
    """
    x = as_operand("diagonal", x)
    y, pos = _to_front("diagonal", x, axis1, axis2)
    d = extract_diag_p.bind(y, offset=as_index("diagonal", offset, "offset", ShapeError))
    if pos == 0:
        return d
    nd = len(meta(d)[0])
    perm = tuple(range(1, pos + 1)) + (0,) + tuple(range(pos + 1, nd))
    return transpose(d, perm)


def extract_diag(x: Any, k: int = 0) -> Any:
    """``diagonal(x, k)``: ``[M, N, B...] -> [K, B...]``."""
    return diagonal(x, k, 0, 1)


def embed_diag(v: Any, k: int = 0) -> Any:
    """Square matrices with ``v`` on their ``k``-th diagonal: ``[K, B...] -> [K+|k|, K+|k|, B...]``."""
    v = as_operand("embed_diag", v)
    s = meta(v)[0]
    if len(s) < 1:
        raise ShapeError(
            "embed_diag: expected a tensor of rank >= 1 (diagonal first, batch axes trailing), got a 0-d tensor"
        )
    k = as_index("embed_diag", k, "offset k", ShapeError)
    n = s[0] + abs(k)
    return embed_diag_p.bind(v, offset=k, rows=n, cols=n)


def diag(v: Any, k: int = 0) -> Any:
    """NumPy's ``diag``: a 1-D ``v`` becomes a matrix with ``v`` on diagonal ``k``;
    a 2-D ``v`` gives its ``k``-th diagonal."""
    v = as_operand("diag", v)
    nd = len(meta(v)[0])
    if nd == 1:
        return embed_diag(v, k)
    if nd == 2:
        return extract_diag_p.bind(v, offset=as_index("diag", k, "offset k", ShapeError))
    raise ShapeError(
        f"diag: expected a 1-D or 2-D tensor, got shape {fmt_shape(meta(v)[0])} (use embed_diag / diagonal for batches)"
    )


def _triangle(op: str, x: Any, k: int, lower: bool) -> Any:
    x = as_operand(op, x)
    if len(meta(x)[0]) < 2:
        raise ShapeError(
            f"{op}: expected a tensor of rank >= 2 (matrices on axes 0 and 1, batch axes "
            f"trailing), got shape {fmt_shape(meta(x)[0])}"
        )
    return triangle_p.bind(x, k=as_index(op, k, "offset k", ShapeError), lower=lower)


def tril(x: Any, k: int = 0) -> Any:
    """Lower triangle (entries with ``col - row <= k``) of the matrices on axes (0, 1)."""
    return _triangle("tril", x, k, True)


def triu(x: Any, k: int = 0) -> Any:
    """Upper triangle (entries with ``col - row >= k``) of the matrices on axes (0, 1)."""
    return _triangle("triu", x, k, False)


@dispatchable
def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Sum of the ``offset``-th diagonal, like ``numpy.trace``: ``[M, N, B...] -> [B...]``."""
    x = as_operand("trace", x)
    y, _ = _to_front("trace", x, axis1, axis2)
    return sum_p.bind(extract_diag_p.bind(y, offset=as_index("trace", offset, "offset", ShapeError)), axes=(0,))
