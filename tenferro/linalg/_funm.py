"""Functions of Hermitian matrices: ``funm_hermitian(a, f) = V f(w) V^H`` and,
built on it, ``sqrtm_psd``, ``logm_pd``, ``powm_psd``.

One primitive, ``funm_hermitian_p(a, w, v, e_1, ..., e_k; f, name, domain)``: the
k-th Fréchet derivative ``D^k f(A)[E_1, ..., E_k]`` of the matrix function at the
Hermitian part ``A`` of ``a``, given its eigendecomposition ``(w, v)`` (``k = 0``:
the value ``f(A)``). By Daleckii–Krein (Higham, *Functions of Matrices*, 2008,
Thm. 3.11; Bhatia, *Matrix Analysis*, Thm. V.3.3 and its higher-order form) it is
``V C V^H`` with ``C_ij = sum over orderings of the E's and inner indices m of
f[w_i, w_m1, ..., w_j] Ê_σ1[i, m1] ... Ê_σk[m_{k-1}, j]``, ``Ê = V^H herm(E) V``,
which depends on the eigenbasis only through the spectral projectors when the
divided differences are computed as their limits at coinciding eigenvalues
(``_divdiff.py``): it is exact at exact degeneracy, where the eigenvectors are not
differentiable. Its JVP in ``a`` is the same primitive with one more direction, in
each ``e_j`` the primitive with ``e_j`` replaced (it is multilinear in the E's), so
every order is exact. The transpose in ``e_j`` is the primitive with the conjugate
cotangent in slot ``j``, conjugated (the form ``Re tr(E_0 D^k[E_1..E_k])`` is
symmetric in all its arguments). ``w`` and ``v`` come from ``eigh`` of the
stop-gradient input: they carry no derivative (the ``a`` slot does). Derivations:
docs/ad/funm.md.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Callable

import numpy as np

from tidu import Zero, instantiate, is_undefined, stop_gradient

from .._aval import aval_of_operand, meta, xp_of
from .._dispatch import dispatchable
from .._errors import TenferroTypeError, TenferroValueError, fmt_shape
from .._registry import primitive
from .._batching import trailing_batch
from .._transcendental import log, power
from ._divdiff import contract, divided_differences, evaluate, host
from ._eigh import eigh_p
from ._errors import DomainError, LinalgShapeError
from ._util import FAMILY, check_matrix, lead, operand, wrap
from .. import _ops as tf

__all__ = ["funm_hermitian", "sqrtm_psd", "logm_pd", "powm_psd", "funm_hermitian_p", "hermitian_funm"]


funm_hermitian_p = primitive("funm_hermitian", FAMILY)
funm_hermitian_p.def_batch(trailing_batch(funm_hermitian_p))  # trailing batch axes: tenferro._batching


def _herm(x: Any) -> Any:
    return (x + x.conj().swapaxes(-1, -2)) / 2


@funm_hermitian_p.def_impl
def _funm_impl(a, w, v, *es, f, name, domain):
    vl = lead(v._data)
    xp = xp_of(vl)  # (GPU: eigenvalues on the host, matrix products on the device)
    wl = host(lead(w._data, 1))
    k = len(es)
    if domain is not None:
        wl = domain(name, wl, k)
    with np.errstate(all="ignore"):  # (non-finite values of f or its derivatives: a typed error below)
        values = evaluate(name, f, wl, xp) if k == 0 else divided_differences(name, f, wl, k, xp=xp)
    _check_finite(name, values, wl, k)
    if k == 0:
        out = (vl * xp.asarray(values)[..., None, :]) @ vl.conj().swapaxes(-1, -2)
    else:
        vh = vl.conj().swapaxes(-1, -2)
        ehat = [vh @ _herm(lead(e._data)) @ vl for e in es]
        out = vl @ contract(xp.asarray(values), ehat) @ vh
    return wrap(_herm(out).astype(a._data.dtype, copy=False))


def _check_finite(name: str, values: np.ndarray, w: np.ndarray, k: int) -> None:
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    pos = np.argwhere(bad)[0]
    batch, tup = tuple(pos[: w.ndim - 1]), pos[w.ndim - 1 :]
    at = ", ".join(f"{w[batch + (i,)]:.6g}" for i in tup)
    if k == 0:
        raise DomainError(
            f"{name}: f is not finite at the eigenvalue {at}: the matrix lies outside the function's domain"
        )
    raise DomainError(
        f"{name}: the derivative of order {k} is not finite at the eigenvalues ({at}): the matrix "
        "function is not differentiable there (e.g. a square root or a power below 1 at a zero "
        "eigenvalue)"
    )


@funm_hermitian_p.def_abstract_eval
def _funm_aval(a, w, v, *es, f, name, domain):
    check_matrix(name, "a", a, square=True)
    for e in es:
        if tuple(e.shape) != tuple(a.shape) or e.dtype is not a.dtype:
            raise LinalgShapeError(
                f"{name}: every direction must have the matrix's shape {fmt_shape(a.shape)} "
                f"and dtype {a.dtype.name}, got {fmt_shape(e.shape)} {e.dtype.name}"
            )
    return a


@funm_hermitian_p.def_jvp
def _funm_jvp(primals, tangents, f, name, domain):
    a, w, v, *es = primals
    da, _, _, *des = tangents  # (w, v: stop-gradient eigendecomposition of a, no derivative of their own)
    params = dict(f=f, name=name, domain=domain)
    out = funm_hermitian_p.bind(a, w, v, *es, **params)
    terms = []
    if type(da) is not Zero:
        terms.append(funm_hermitian_p.bind(a, w, v, *es, instantiate(da), **params))
    for j, de in enumerate(des):
        if type(de) is not Zero:
            terms.append(funm_hermitian_p.bind(a, w, v, *es[:j], instantiate(de), *es[j + 1 :], **params))
    if not terms:
        return out, Zero.like(out)
    t = terms[0]
    for x in terms[1:]:
        t = tf.add(t, x)
    return out, t


@funm_hermitian_p.def_transpose
def _funm_transpose(ct, a, w, v, *es, f, name, domain):
    if is_undefined(a) or is_undefined(w) or is_undefined(v):
        raise TenferroValueError(f"{name}: the derivative is linear in the directions only, not in the matrix")
    linear = [j for j, e in enumerate(es) if is_undefined(e)]
    if len(linear) != 1:
        raise TenferroValueError(f"{name}: the derivative is linear in one direction at a time")
    (j,) = linear
    if type(ct) is Zero:
        return [None] * (3 + len(es))
    cplx = meta(ct)[1].is_complex
    c = tf.conj(ct) if cplx else ct
    r = funm_hermitian_p.bind(a, w, v, *es[:j], c, *es[j + 1 :], f=f, name=name, domain=domain)
    r = tf.conj(r) if cplx else r
    return [None, None, None] + [r if i == j else None for i in range(len(es))]


def hermitian_funm(a: Any, f: Callable[[Any], Any], name: str, domain: Callable | None = None) -> Any:
    """``V f(w) V^H`` for the Hermitian part of ``a`` (an operand already checked),
    through :data:`funm_hermitian_p`; ``domain(name, w, k)`` (NumPy eigenvalues, the
    derivative order) may raise or adjust the eigenvalues."""
    w, v = eigh_p.bind(stop_gradient(a))
    return funm_hermitian_p.bind(a, w, v, f=f, name=name, domain=domain)


def _checked(name: str, a: Any) -> Any:
    a = operand(name, "a", a)
    check_matrix(name, "a", aval_of_operand(a), square=True)
    return a


@dispatchable
def funm_hermitian(a: Any, f: Callable[[Any], Any]) -> Any:
    """``f(A) = V f(w) V^H`` for the Hermitian part ``A = (a + a^H) / 2`` of each
    matrix of ``a`` ``[N, N, B...]`` (as :func:`eigh`, so gradients are Hermitian).

    ``f`` maps a real tensor of eigenvalues elementwise and is written with tenferro
    ops (its derivatives come from tidu); it must depend on the eigenvalues alone.
    Derivatives of every order by Daleckii–Krein with divided differences of ``f``,
    exact at repeated eigenvalues (Higham 2008, Thm. 3.11): unlike
    ``V diag(f(w)) V^H`` built from :func:`eigh`, whose gradient is not determined
    inside a degenerate block (docs/ad/gauge.md). Non-finite ``f`` (or derivative)
    on the spectrum raises :class:`DomainError`. See docs/ad/funm.md.
    """
    a = _checked("funm_hermitian", a)
    if not callable(f):
        raise TenferroTypeError(
            f"funm_hermitian: f must be a callable mapping a tensor of eigenvalues elementwise, got {type(f).__name__}"
        )
    return hermitian_funm(a, f, "funm_hermitian")


def _tolerance(w: np.ndarray) -> np.ndarray:
    """``10 n eps max|w|`` per matrix (the rounding level of computed eigenvalues)."""
    scale = np.max(np.abs(w), axis=-1, keepdims=True) if w.shape[-1] else np.zeros(w.shape[:-1] + (1,))
    return 10 * w.shape[-1] * np.finfo(w.dtype).eps * scale


def psd_domain(name: str, w: np.ndarray, k: int) -> np.ndarray:
    """Positive semidefinite: eigenvalues below ``-10 n eps max|w|`` raise; the
    rounding-level negative ones are set to 0."""
    if w.size:
        tol = _tolerance(w)
        if np.any(w < -tol):
            i = np.unravel_index(np.argmin(w + tol), w.shape)
            raise DomainError(
                f"{name}: the matrix must be positive semidefinite, but its Hermitian part has the "
                f"eigenvalue {w[i]:.6g} (below the tolerance -{tol[i[:-1] + (0,)]:.3g} = "
                "-10 n eps max|w|)"
            )
    return np.maximum(w, 0)


def pd_domain(name: str, w: np.ndarray, k: int) -> np.ndarray:
    """Positive definite: an eigenvalue <= 0 raises."""
    if w.size and np.any(w <= 0):
        raise DomainError(
            f"{name}: the matrix must be positive definite, but its Hermitian part has the "
            f"eigenvalue {np.min(w):.6g} <= 0"
        )
    return w


@dispatchable
def sqrtm_psd(a: Any) -> Any:
    """Principal square root of a positive semidefinite (Hermitian part of) ``a``
    ``[N, N, B...]``: ``V sqrt(w) V^H``. Negative eigenvalues beyond rounding
    (``-10 n eps max|w|``) raise :class:`DomainError`; rounding-level ones count as 0.
    Derivatives exact at repeated eigenvalues; at a zero eigenvalue the derivative is
    infinite and differentiating raises :class:`DomainError` (docs/ad/funm.md)."""
    return hermitian_funm(_checked("sqrtm_psd", a), tf.sqrt, "sqrtm_psd", psd_domain)


@dispatchable
def logm_pd(a: Any) -> Any:
    """Principal logarithm of a positive definite (Hermitian part of) ``a``
    ``[N, N, B...]``: ``V log(w) V^H``; an eigenvalue <= 0 raises
    :class:`DomainError`. Derivatives exact at repeated eigenvalues."""
    return hermitian_funm(_checked("logm_pd", a), log, "logm_pd", pd_domain)


@dataclasses.dataclass(frozen=True)
class _Power:
    """``w ** p`` (hashable by ``p``, so equal calls share a graph node)."""

    p: float

    def __call__(self, w: Any) -> Any:
        return power(w, self.p)


@dispatchable
def powm_psd(a: Any, p: float) -> Any:
    """``A^p = V w^p V^H`` for the Hermitian part ``A`` of ``a`` ``[N, N, B...]`` and
    a real number ``p``: positive semidefinite for ``p >= 0`` (``A^0 = I``), positive
    definite for ``p < 0`` (else :class:`DomainError`). Derivatives exact at repeated
    eigenvalues; where they are infinite (``p < 1`` at a zero eigenvalue, ``p < 2``
    for the second) differentiating raises :class:`DomainError`."""
    a = _checked("powm_psd", a)
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not np.isfinite(float(p)):
        raise TenferroValueError(f"powm_psd: p must be a finite real number (not a tensor), got {p!r}")
    p = float(p)
    return hermitian_funm(a, _Power(p), "powm_psd", psd_domain if p >= 0 else pd_domain)
