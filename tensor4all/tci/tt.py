"""Tensor-train helpers of :mod:`tensor4all.tci`: evaluation at multi-indices, sums and
quadratures, sums and elementwise products of trains (all on dense :class:`~tensor4all.MPS`,
all differentiable), and the check of multi-indices they and ``crossinterpolate2`` share.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..networks.mps import MPS
from ..tools.checks import as_tensor, concrete
from ..tools.errors import DimensionMismatchError, NonFiniteError
from ..tools.threads import thread_policy
from .errors import MultiIndexError, MultiIndexOutOfRangeError, TCITypeError

__all__ = ["tt_evaluate", "tt_sum", "tt_add", "tt_multiply"]


def _multi_indices(x: Any, dims: list[int], what: str) -> np.ndarray:
    """``x`` (one multi-index or a sequence of them) as an ``(n, L)`` int64 array, checked."""
    L = len(dims)
    if isinstance(x, (tf.Tensor, tidu.Tracer)):
        x = np.asarray(tidu.stop_gradient(x) if isinstance(x, tidu.Tracer) else x)
    if isinstance(x, (str, bytes)):
        raise TCITypeError(f"{what} must be integer multi-indices, got {x!r}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise MultiIndexError(f"{what} must be multi-indices of {L} integers each ({e})") from None
    if a.dtype.kind == "O" or (a.dtype.kind not in "iu" and a.size):
        raise TCITypeError(f"{what} must hold integers, got values of dtype {a.dtype}: {x!r}")
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2 or a.shape[1] != L or a.shape[0] == 0:
        raise MultiIndexError(
            f"{what} must be one multi-index of {L} entries or an (n, {L}) array of them "
            f"(one entry per site), got shape {np.shape(x)}"
        )
    a = a.astype(np.int64)
    bad = np.argwhere((a < 0) | (a >= np.asarray(dims)))
    if len(bad):
        n, k = (int(v) for v in bad[0])
        raise MultiIndexOutOfRangeError(
            f"{what}: multi-index {n} ({a[n].tolist()}) has entry {a[n, k]} at site {k}, outside 0 .. {dims[k] - 1}"
        )
    return a


def _dense_sites(tt: Any, what: str) -> list[Any]:
    if not isinstance(tt, MPS):
        raise TCITypeError(f"{what} takes a tensor4all.MPS, got {type(tt).__name__}")
    return tt.dense().tensors


@thread_policy()
def tt_evaluate(tt: MPS, index: Any) -> Any:
    """The tensor train at one multi-index (a scalar tensor) or at each row of an
    ``(n, L)`` index array (an ``(n,)`` tensor); differentiable in the site tensors."""
    ts = _dense_sites(tt, "tt_evaluate")
    dims = [int(t.shape[1]) for t in ts]
    single = np.ndim(index) == 1 if not isinstance(index, (str, bytes)) else False
    idx = _multi_indices(index, dims, "tt_evaluate: index")
    n = len(idx)
    env = tf.take(tf.reshape(ts[0], tuple(ts[0].shape)[1:]), tf.asarray(idx[:, 0]), axis=0)  # (n, right)
    for k in range(1, len(ts)):
        # points sorted by their index at site k: one (group, left) @ (left, right) product per value
        order = np.argsort(idx[:, k], kind="stable")
        col = idx[order, k]
        starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
        ends = np.r_[starts[1:], n]
        e = tf.take(env, tf.asarray(order), axis=0)
        parts = [tf.matmul(e[a:b], ts[k][:, int(col[a]), :]) for a, b in zip(starts, ends)]
        out = parts[0] if len(parts) == 1 else tf.concatenate(parts, axis=0)
        env = tf.take(out, tf.asarray(np.argsort(order)), axis=0)
    out = tf.reshape(env, (n,))
    return tf.reshape(out, ()) if single else out


@thread_policy()
def tt_sum(tt: MPS, weights: Sequence[Any] | None = None) -> Any:
    """``sum_i w_0[i_0] ... w_{L-1}[i_{L-1}] tt[i]``: the sum of all entries (``weights``
    None) or a quadrature with one weight vector per site (``weights[k]`` of length
    ``d_k``); a scalar tensor, differentiable in the site tensors and the weights."""
    ts = _dense_sites(tt, "tt_sum")
    if weights is not None:
        if (
            isinstance(weights, (str, bytes))
            or not isinstance(weights, (Sequence, np.ndarray))
            or len(weights) != len(ts)
        ):
            raise DimensionMismatchError(
                f"tt_sum: weights must be a list of {len(ts)} vectors (one per site), got "
                f"{type(weights).__name__}" + (f" of length {len(weights)}" if hasattr(weights, "__len__") else "")
            )
    env = None
    for k, t in enumerate(ts):
        d = int(t.shape[1])
        if weights is None:
            m = tf.sum(t, axis=1)
        else:
            w = as_tensor(weights[k])
            if tuple(tidu.aval_of(w).shape) != (d,):
                raise DimensionMismatchError(
                    f"tt_sum: weights[{k}] must have shape ({d},) (site {k}'s dimension), "
                    f"got {tuple(tidu.aval_of(w).shape)}"
                )
            c = concrete(w)
            if c is not None and not np.all(np.isfinite(np.asarray(c))):
                raise NonFiniteError(f"tt_sum: weights[{k}] holds NaN or infinity")
            m = tf.einsum("lsr,s->lr", t, w)
        env = m if env is None else tf.matmul(env, m)
    return tf.reshape(env, ())


def _pair(a: Any, b: Any, what: str) -> tuple[list[Any], list[Any]]:
    xs, ys = _dense_sites(a, what), _dense_sites(b, what)
    da, db = [int(t.shape[1]) for t in xs], [int(t.shape[1]) for t in ys]
    if da != db:
        raise DimensionMismatchError(f"{what}: the tensor trains have local dimensions {da} and {db}; they must agree")
    dt = tf.result_type(tidu.aval_of(xs[0]).dtype, tidu.aval_of(ys[0]).dtype)
    xs = [x if tidu.aval_of(x).dtype == dt else tf.cast(x, dt) for x in xs]
    ys = [y if tidu.aval_of(y).dtype == dt else tf.cast(y, dt) for y in ys]
    return xs, ys


@thread_policy()
def tt_add(a: MPS, b: MPS) -> MPS:
    """The tensor train of ``a + b`` (bond dimensions add: block-diagonal site tensors;
    ``compress`` it to recompress); differentiable."""
    xs, ys = _pair(a, b, "tt_add")
    L = len(xs)
    if L == 1:
        return MPS([xs[0] + ys[0]])
    out = []
    for k, (x, y) in enumerate(zip(xs, ys)):
        (lx, d, rx), (ly, _, ry) = tuple(x.shape), tuple(y.shape)
        dt = tidu.aval_of(x).dtype
        if k == 0:
            out.append(tf.concatenate([x, y], axis=2))
        elif k == L - 1:
            out.append(tf.concatenate([x, y], axis=0))
        else:
            top = tf.concatenate([x, tf.zeros((lx, d, ry), dtype=dt)], axis=2)
            bottom = tf.concatenate([tf.zeros((ly, d, rx), dtype=dt), y], axis=2)
            out.append(tf.concatenate([top, bottom], axis=0))
    return MPS(out)


@thread_policy()
def tt_multiply(a: MPS, b: MPS) -> MPS:
    """The tensor train of the elementwise product ``a * b`` (bond dimensions multiply);
    differentiable."""
    xs, ys = _pair(a, b, "tt_multiply")
    out = []
    for x, y in zip(xs, ys):
        (lx, d, rx), (ly, _, ry) = tuple(x.shape), tuple(y.shape)
        out.append(tf.reshape(tf.einsum("asb,csd->acsbd", x, y), (lx * ly, d, rx * ry), order="C"))
    return MPS(out)
