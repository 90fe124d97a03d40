"""Divided differences of an elementwise function at eigenvalues, accurate when
points coincide or nearly coincide (impl side: NumPy arrays in, NumPy arrays out).

``divided_differences(f, w, k)`` returns ``D[..., i0, ..., ik] = f[w_i0, ..., w_ik]``,
the k-th divided differences of ``f`` over every (k+1)-tuple of the eigenvalues
``w [..., n]`` of each matrix of a batch: the coefficients of the Daleckii–Krein
formula for the k-th Fréchet derivative of ``f`` at a Hermitian matrix (Higham,
*Functions of Matrices*, 2008, Thm. 3.11; Bhatia, *Matrix Analysis*, 1997, §V.3).
The derivatives of ``f`` come from tidu (nested ``jvp`` with a ones tangent: ``f``
is elementwise), so ``f`` is any function written with tenferro ops.

Accuracy (docs/ad/funm.md). Divided differences are symmetric in their points, so
each tuple is sorted and the usual table is built, ``f[x_i..x_j] =
(f[x_{i+1}..x_j] - f[x_i..x_{j-1}]) / (x_j - x_i)``, carrying an estimate of its
rounding error: ``u (|a| + |b|) + err(a) + err(b)`` over ``x_j - x_i`` (``u`` the
unit roundoff; ``f`` assumed computed to a few ulps). Where that estimate exceeds
``_accept(d) * u * |result|`` (256 ulps for first differences, 2048 above;
cancellation: close or equal points, or a flat ``f``), the Hermite–Genocchi
integral ``f[x_0..x_d] = ∫_{simplex} f^(d)(Σ t_i x_i) dt`` (de Boor 2005) is
evaluated by Gauss–Legendre product rules (collapsed coordinates) with ``q`` and
``q + 1`` points per axis, coarse first and fine where needed; their difference
estimates the error and the value with the smaller estimated error is kept. At
exactly equal points the integral is ``f^(d)(x) / d!``; nodes lie inside the
points' hull, so ``f`` is never evaluated outside the spectrum.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Callable

import numpy as np

import tidu

from .._errors import TenferroTypeError
from .._tensor import Tensor

__all__ = ["divided_differences", "evaluate", "derivative", "contract", "simplex_rule", "host"]

ACCEPT = {1: 256.0}  # accept a value whose error estimate (an upper bound) is below ACCEPT * u * |value|
ACCEPT_HIGHER = 2048.0  # ... for d >= 2, where dense spectra would send most clustered tuples to quadrature
_RULES = {1: (6, 12), 2: (3, 6), 3: (3, 5)}  # Gauss-Legendre points per axis: coarse, then fine


def host(x: Any) -> np.ndarray:
    """A NumPy copy of a CuPy array (``x`` itself when it is a NumPy array)."""
    return x if type(x) is np.ndarray else x.get()


def _tensor(x: np.ndarray, xp: Any) -> Tensor:
    """The host array ``x`` as a tensor where the matrix lives (``xp``: NumPy or CuPy),
    so that ``f`` runs there and may make constants in the default placement."""
    x = np.asfortranarray(x)
    return Tensor._wrap(x if xp is np else xp.asarray(x))


def evaluate(name: str, f: Callable[[Any], Any], x: np.ndarray, xp: Any = np) -> np.ndarray:
    """``f`` (written with tenferro ops) on the real host array ``x`` (evaluated on
    ``xp``'s placement), as a host array of ``x``'s dtype; a typed error when ``f``
    does not map a real tensor to a real tensor of the same shape."""
    return _as_values(name, "f", f(_tensor(x, xp)), x)


def _as_values(name: str, what: str, out: Any, x: np.ndarray) -> np.ndarray:
    if isinstance(out, tidu.Tracer):
        raise TenferroTypeError(
            f"{name}: {what} returned a traced value: f must be a function of the eigenvalues alone (it may not "
            "close over a value being differentiated; derivatives flow through the matrix argument only)"
        )
    if type(out) is not Tensor:
        raise TenferroTypeError(
            f"{name}: f must return a tenferro Tensor (write it with tenferro ops), got {type(out).__name__}"
        )
    arr = host(out._data)
    if tuple(arr.shape) != tuple(x.shape):
        raise TenferroTypeError(
            f"{name}: f must act elementwise (same shape out as in): eigenvalues of shape "
            f"{tuple(x.shape)} gave shape {tuple(arr.shape)}"
        )
    if arr.dtype.kind not in "fiub":
        raise TenferroTypeError(f"{name}: f must map real eigenvalues to real values, got dtype {arr.dtype}")
    return np.asarray(arr, dtype=x.dtype)


def derivative(f: Callable[[Any], Any], d: int) -> Callable[[Any], Any]:
    """The ``d``-th derivative of the elementwise function ``f`` (nested tidu.jvp
    with a ones tangent)."""
    g = f
    for _ in range(d):
        g = _jvp_ones(g)
    return g


def _jvp_ones(g: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def dg(x: Any) -> Any:
        aval = tidu.aval_of(x)
        ones = Tensor._wrap(np.ones(tuple(aval.shape), dtype=aval.dtype.numpy, order="F"))
        if aval.placement.device is not None:
            ones = ones.to_gpu(aval.placement.device)
        return tidu.jvp(g, (x,), (ones,))[1]

    return dg


@functools.lru_cache(maxsize=None)
def simplex_rule(d: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Barycentric nodes ``[N, d+1]`` and weights ``[N]`` (summing to ``1/d!``) of a
    product Gauss–Legendre rule on the d-simplex in collapsed coordinates
    ``s_1 = u_1, s_t = (1 - u_1)...(1 - u_{t-1}) u_t`` (Jacobian
    ``prod_t (1 - u_t)^(d - t)``)."""
    t, wt = np.polynomial.legendre.leggauss(q)
    t, wt = (t + 1) / 2, wt / 2
    grids = np.meshgrid(*([t] * d), indexing="ij")
    wgrids = np.meshgrid(*([wt] * d), indexing="ij")
    u = np.stack([g.ravel() for g in grids], axis=-1)
    w = np.prod(np.stack([g.ravel() for g in wgrids], axis=-1), axis=-1)
    s = np.empty((u.shape[0], d + 1))
    rest = np.ones(u.shape[0])
    for i in range(d):
        s[:, i + 1] = rest * u[:, i]
        w = w * (1 - u[:, i]) ** (d - 1 - i)
        rest = rest * (1 - u[:, i])
    s[:, 0] = rest
    s.setflags(write=False)
    w.setflags(write=False)
    return s, w


_CHUNK = 1 << 21  # quadrature nodes evaluated per call of f's derivative (bounds the memory)


def _accept(d: int) -> float:
    return ACCEPT.get(d, ACCEPT_HIGHER)


def _quadrature(name: str, f: Callable, pts: np.ndarray, d: int, q: int, xp: Any) -> np.ndarray:
    """Hermite–Genocchi integral for the rows of ``pts [R, d+1]`` with ``q`` points per axis."""
    s, w = simplex_rule(d, q)
    w = w.astype(pts.dtype)
    df = derivative(f, d)
    out = np.empty(pts.shape[0], dtype=pts.dtype)
    step = max(1, _CHUNK // s.shape[0])
    for lo in range(0, pts.shape[0], step):
        nodes = (pts[lo : lo + step] @ s.T).ravel()  # [rows * N]
        vals = _as_values(name, f"the derivative of order {d} of f", df(_tensor(nodes, xp)), nodes)
        out[lo : lo + step] = vals.reshape(-1, s.shape[0]) @ w
    return out


def _by_quadrature(
    name: str, f: Callable, pts: np.ndarray, d: int, u: float, rec: np.ndarray, err: np.ndarray, xp: Any
) -> tuple[np.ndarray, np.ndarray]:
    """For the rows ``pts [R, d+1]`` whose recursion estimate is poor: Gauss rules of
    ``q`` and ``q + 1`` points per axis (their difference estimates the error of the
    smaller one), coarse first and fine only where the coarse estimate is not within
    ``ACCEPT`` ulps; per row, the value with the smaller estimated error."""
    uniq, inverse = np.unique(pts, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    val = np.full(uniq.shape[0], np.nan, dtype=pts.dtype)
    est = np.full(uniq.shape[0], np.inf, dtype=pts.dtype)
    todo = np.arange(uniq.shape[0])
    for q in _RULES.get(d, (3, 5)):
        lo = _quadrature(name, f, uniq[todo], d, q, xp)
        hi = _quadrature(name, f, uniq[todo], d, q + 1, xp)
        e = np.abs(hi - lo) + u * np.abs(hi)
        better = ~(est[todo] <= e)
        val[todo[better]], est[todo[better]] = hi[better], e[better]
        todo = todo[~(est[todo] <= _accept(d) * u * np.abs(val[todo]))]
        if not todo.size:
            break
    use = ~(err <= est[inverse])
    rec, err = rec.copy(), err.copy()
    rec[use], err[use] = val[inverse][use], est[inverse][use]
    return rec, err


@functools.lru_cache(maxsize=16)
def _combinations(n: int, k: int) -> np.ndarray:
    """Sorted index tuples ``i0 <= ... <= ik`` ``[R, k+1]`` (combinations with
    repetition, ``R = C(n + k, k + 1)``), built column by column."""
    idx = np.arange(n, dtype=np.intp)[:, None]
    for _ in range(k):
        last = idx[:, -1]
        counts = n - last  # next index runs from last to n - 1
        rows = np.repeat(np.arange(idx.shape[0]), counts)
        starts = np.cumsum(counts) - counts
        nxt = np.arange(rows.size) - np.repeat(starts, counts) + np.repeat(last, counts)
        idx = np.concatenate([idx[rows], nxt[:, None]], axis=1)
    idx.setflags(write=False)
    return idx


def divided_differences(
    name: str, f: Callable, w: np.ndarray, k: int, fw: np.ndarray | None = None, xp: Any = np
) -> np.ndarray:
    """``D[..., i0, ..., ik] = f[w_i0, ..., w_ik]`` for ``w [..., n]`` (leading batch),
    shape ``w.shape[:-1] + (n,) * (k + 1)``. ``fw`` is ``f(w)`` when already known.

    Divided differences are symmetric: they are computed once per multiset of
    indices, on the eigenvalues sorted per matrix (so every tuple is sorted), and
    scattered to all orderings."""
    n = w.shape[-1]
    batch = w.shape[:-1]
    if fw is None:
        fw = evaluate(name, f, w, xp)
    if k == 0:
        return fw
    if w.size == 0:
        return np.zeros(batch + (n,) * (k + 1), dtype=w.dtype)
    w2, f2 = w.reshape(-1, n), fw.reshape(-1, n)
    order = np.argsort(w2, axis=-1, kind="stable")
    ws, fs = np.take_along_axis(w2, order, -1), np.take_along_axis(f2, order, -1)
    idx = _combinations(n, k)
    x = ws[:, idx].reshape(-1, k + 1)  # [rows, k+1], each row sorted
    fx = fs[:, idx].reshape(-1, k + 1)
    u = np.finfo(w.dtype).eps / 2
    table = [fx[:, i] for i in range(k + 1)]  # level d: f[x_i..x_{i+d}]
    errs = [u * np.abs(t) for t in table]
    for d in range(1, k + 1):
        new, new_err = [], []
        for i in range(k + 1 - d):
            a, b = table[i], table[i + 1]
            gap = x[:, i + d] - x[:, i]
            with np.errstate(divide="ignore", invalid="ignore"):
                rec = (b - a) / gap
                err = (u * (np.abs(a) + np.abs(b)) + errs[i] + errs[i + 1]) / gap
            bad = ~(err <= _accept(d) * u * np.abs(rec))  # also catches gap == 0 and non-finite values
            if bad.any():
                rec[bad], err[bad] = _by_quadrature(name, f, x[bad, i : i + d + 1], d, u, rec[bad], err[bad], xp)
            new.append(rec)
            new_err.append(err)
        table, errs = new, new_err
    vals = table[0].reshape(-1, idx.shape[0])  # [B, R]
    orig = order[:, idx]  # [B, R, k+1]: the caller's eigenvalue indices
    out = np.empty((w2.shape[0],) + (n,) * (k + 1), dtype=w.dtype)
    rows = np.arange(w2.shape[0])[:, None]
    for p in itertools.permutations(range(k + 1)):  # scatter to every ordering
        out[(rows,) + tuple(orig[:, :, j] for j in p)] = vals
    return out.reshape(batch + (n,) * (k + 1))


def contract(delta: np.ndarray, es: list[np.ndarray]) -> np.ndarray:
    """``C[..., i, j] = sum over orderings σ of the E's and inner indices of
    delta[..., i, m1, ..., j] E_σ1[..., i, m1] E_σ2[..., m1, m2] ... E_σk[..., m_{k-1}, j]``:
    the eigenbasis core of the k-th Fréchet derivative (Daleckii–Krein)."""
    k = len(es)
    if k == 1:
        return delta * es[0]
    letters = "abcdefghijklmnopqrstuvwxyz"[: k + 1]
    chain = ",".join(f"...{letters[t]}{letters[t + 1]}" for t in range(k))
    spec = f"...{letters},{chain}->...{letters[0]}{letters[k]}"
    out = None
    for perm in itertools.permutations(range(k)):
        term = np.einsum(spec, delta, *[es[p] for p in perm], optimize=True)
        out = term if out is None else out + term
    return out
