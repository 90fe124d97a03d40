"""Divided differences of an elementwise function at eigenvalues, accurate when
points coincide or nearly coincide (impl side: NumPy arrays in, NumPy arrays out).

``divided_differences(f, w, k)`` returns ``D[..., i0, ..., ik] = f[w_i0, ..., w_ik]``,
the k-th divided differences of ``f`` over every (k+1)-tuple of the eigenvalues
``w [..., n]`` of each matrix of a batch: the coefficients of the Daleckii–Krein
formula for the k-th Fréchet derivative of ``f`` at a Hermitian matrix (Higham,
*Functions of Matrices*, 2008, Thm. 3.11 and Problem 3.x; Bhatia, *Matrix Analysis*,
V.3). The derivatives of ``f`` come from tidu (nested ``jvp`` with a ones tangent:
``f`` is elementwise), so ``f`` is any function written with tenferro ops.

Accuracy (docs/ad/funm.md). Divided differences are symmetric in their points, so
each tuple is sorted and the usual table is built, ``f[x_i..x_j] =
(f[x_{i+1}..x_j] - f[x_i..x_{j-1}]) / (x_j - x_i)``, carrying an estimate of its
rounding error: ``u (|a| + |b|) + err(a) + err(b)`` over ``x_j - x_i`` (``u`` the
unit roundoff; ``f`` assumed computed to a few ulps). Where that estimate exceeds
``ACCEPT * |result|`` (cancellation: close or equal points, or a flat ``f``), the
Hermite–Genocchi integral ``f[x_0..x_d] = ∫_{simplex} f^(d)(Σ t_i x_i) dt`` is
evaluated by Gauss–Legendre product rules (collapsed coordinates) of two sizes;
their difference estimates its error and the value with the smaller estimated
error is kept. At exactly equal points the integral is ``f^(d)(x) / d!``; nodes
lie inside the points' hull, so ``f`` is never evaluated outside the spectrum.
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

ACCEPT = 64.0          # accept the recursion when its error estimate is below ACCEPT * u * |value|
_RULES = {1: (12, 24), 2: (8, 16), 3: (6, 12)}     # Gauss-Legendre points per axis (coarse, fine)


def host(x: Any) -> np.ndarray:
    """A NumPy copy of a CuPy array (``x`` itself when it is a NumPy array)."""
    return x if type(x) is np.ndarray else x.get()


def evaluate(name: str, f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    """``f`` (written with tenferro ops) on the real array ``x``, as an array of
    ``x``'s dtype; a typed error when ``f`` does not map a real tensor to a real
    tensor of the same shape."""
    out = f(Tensor._wrap(np.asfortranarray(x)))
    return _as_values(name, "f", out, x)


def _as_values(name: str, what: str, out: Any, x: np.ndarray) -> np.ndarray:
    if isinstance(out, tidu.Tracer):
        raise TenferroTypeError(
            f"{name}: {what} returned a traced value: f must be a function of the eigenvalues alone (it may not "
            "close over a value being differentiated; derivatives flow through the matrix argument only)")
    if type(out) is not Tensor:
        raise TenferroTypeError(f"{name}: f must return a tenferro Tensor (write it with tenferro ops), got "
                                f"{type(out).__name__}")
    arr = out._data
    if tuple(arr.shape) != tuple(x.shape):
        raise TenferroTypeError(f"{name}: f must act elementwise (same shape out as in): eigenvalues of shape "
                                f"{tuple(x.shape)} gave shape {tuple(arr.shape)}")
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
    return s, w


def _quadrature(name: str, f: Callable, pts: np.ndarray, d: int, q: int) -> np.ndarray:
    """Hermite–Genocchi integral for the rows of ``pts [R, d+1]``."""
    s, w = simplex_rule(d, q)
    nodes = pts @ s.T                                           # [R, N]
    vals = _as_values(name, f"the derivative of order {d} of f", derivative(f, d)(
        Tensor._wrap(np.asfortranarray(nodes.ravel()))), nodes.ravel()).reshape(nodes.shape)
    return vals @ w.astype(pts.dtype)


def divided_differences(name: str, f: Callable, w: np.ndarray, k: int, fw: np.ndarray | None = None) -> np.ndarray:
    """``D[..., i0, ..., ik] = f[w_i0, ..., w_ik]`` for ``w [..., n]`` (leading batch),
    shape ``w.shape[:-1] + (n,) * (k + 1)``. ``fw`` is ``f(w)`` when already known."""
    n = w.shape[-1]
    batch = w.shape[:-1]
    if fw is None:
        fw = evaluate(name, f, w)
    if k == 0:
        return fw
    w2, f2 = w.reshape(-1, n), fw.reshape(-1, n)
    idx = np.stack([g.ravel() for g in np.meshgrid(*([np.arange(n)] * (k + 1)), indexing="ij")], axis=-1)
    x = w2[:, idx].reshape(-1, k + 1)                       # [rows, k+1]
    fx = f2[:, idx].reshape(-1, k + 1)
    order = np.argsort(x, axis=-1, kind="stable")
    x = np.take_along_axis(x, order, axis=-1)
    fx = np.take_along_axis(fx, order, axis=-1)
    u = np.finfo(w.dtype).eps / 2
    table = [fx[:, i] for i in range(k + 1)]                # level d: f[x_i..x_{i+d}]
    errs = [u * np.abs(t) for t in table]
    for d in range(1, k + 1):
        new, new_err = [], []
        for i in range(k + 1 - d):
            a, b = table[i], table[i + 1]
            gap = x[:, i + d] - x[:, i]
            with np.errstate(divide="ignore", invalid="ignore"):
                rec = (b - a) / gap
                err = (u * (np.abs(a) + np.abs(b)) + errs[i] + errs[i + 1]) / gap
            bad = ~(err <= ACCEPT * u * np.abs(rec))        # also catches gap == 0 and non-finite values
            if bad.any():
                pts = x[bad, i:i + d + 1]
                uniq, inverse = np.unique(pts, axis=0, return_inverse=True)
                coarse, fine = _RULES.get(d, (4, 8))
                q1 = _quadrature(name, f, uniq, d, coarse)
                q2 = _quadrature(name, f, uniq, d, fine)
                qerr = np.abs(q2 - q1) + u * np.abs(q2)
                inverse = inverse.ravel()
                use = ~(err[bad] <= qerr[inverse])          # the quadrature where its estimate is smaller
                rb, eb = rec[bad], err[bad]
                rb[use] = q2[inverse][use]
                eb[use] = qerr[inverse][use]
                rec[bad], err[bad] = rb, eb
            new.append(rec)
            new_err.append(err)
        table, errs = new, new_err
    return table[0].reshape(batch + (n,) * (k + 1))


def contract(delta: np.ndarray, es: list[np.ndarray]) -> np.ndarray:
    """``C[..., i, j] = sum over orderings σ of the E's and inner indices of
    delta[..., i, m1, ..., j] E_σ1[..., i, m1] E_σ2[..., m1, m2] ... E_σk[..., m_{k-1}, j]``:
    the eigenbasis core of the k-th Fréchet derivative (Daleckii–Krein)."""
    k = len(es)
    if k == 1:
        return delta * es[0]
    letters = "abcdefghijklmnopqrstuvwxyz"[:k + 1]
    chain = ",".join(f"...{letters[t]}{letters[t + 1]}" for t in range(k))
    spec = f"...{letters},{chain}->...{letters[0]}{letters[k]}"
    out = None
    for perm in itertools.permutations(range(k)):
        term = np.einsum(spec, delta, *[es[p] for p in perm], optimize=True)
        out = term if out is None else out + term
    return out
