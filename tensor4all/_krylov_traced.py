"""``exp(tau H) v`` by a Krylov method written in tenferro operations, so that tidu
differentiates it: the local propagator of a traced TDVP run (:mod:`._traced_backend`).

The same method as :func:`._krylov.expm_krylov` (Lanczos or Arnoldi, orthogonalized twice
against the whole basis; Y. Saad, SIAM J. Numer. Anal. 29, 209 (1992)):
``exp(tau H) v ~ ||v|| V_m exp(tau T_m) e_1``, with every product, projection, norm and
the small exponential (:func:`tenferro.linalg.expm`, exact Frechet derivative) a tenferro
operation on tenferro tensors or tidu tracers.

What is differentiated is the discrete map that was computed: the Krylov dimension ``m``
is chosen from concrete values (the primal values the tracers carry) by Saad's estimate
``beta_(m+1) |e_m^T exp(tau T_m) e_1| <= tol`` and is then a constant of the map, as a kept
rank is for a truncated SVD. A breakdown (``beta_(m+1) ~ 0``: the space is invariant, e.g.
from a product state) stops the basis there, exactly, without dividing by ``beta``.

Hermitian ``H`` (``hermitian=True``, Lanczos): ``T_m`` is the real symmetric tridiagonal
matrix of the real parts of the diagonal coefficients and the norms ``beta`` (what the NumPy
version takes too); otherwise the full Hessenberg matrix of the coefficients (Arnoldi).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import tenferro as tf
import tidu

from ._eigensolver import LocalOperator
from ._krylov import KrylovResult, _small_expm

__all__ = ["expm_krylov_traced", "value_of"]

#: a basis vector's residual below this, relative to the largest coefficient, is a breakdown
_BREAKDOWN = 1e-14


def value_of(x: Any) -> np.ndarray:
    """The concrete NumPy value of a tensor or tracer (a tracer's primal): for decisions the
    map takes as constants (ranks, Krylov dimensions)."""
    if isinstance(x, tidu.Tracer):
        try:
            x = x.to_concrete()   # through every level of nested transformations
        except tidu.TracerConversionError as e:
            raise tidu.TracerConversionError(
                "a traced TDVP step decides its Krylov dimensions and kept ranks from concrete values; it cannot "
                "run on abstract values (under tenferro.jit or make_graph)") from e
    return np.asarray(x)


def _norm(x: Any) -> Any:
    return tf.linalg.norm(x)


def expm_krylov_traced(op: LocalOperator, v: Any, tau: complex, *, tol: float = 1e-10, max_iter: int = 60,
                       hermitian: bool = True) -> KrylovResult:
    """``exp(tau H) v`` for ``op.matvec`` on flat (1-D) tenferro values, to a relative error
    ``tol`` by Saad's estimate; differentiable in ``v`` and in whatever ``op`` is built from
    (see the module). ``tau`` is a number: ``-i dt`` real time, ``-dt`` imaginary time."""
    tau = complex(tau) if complex(tau).imag else float(np.real(tau))
    nrm = _norm(v)
    nrm_c = float(value_of(nrm))
    if nrm_c == 0.0 or tau == 0:
        return KrylovResult(v, 0, 0.0)
    m_max = max(1, min(max_iter, int(v.size)))
    basis = [v / nrm]
    coefs: list[Any] = []   # column j of the projected matrix above the diagonal and on it (traced)
    betas: list[Any] = []   # the norms of the residuals (traced): T[j+1, j]
    h = np.zeros((m_max + 1, m_max), dtype=np.complex128)   # the same, concrete, for the decisions
    err = np.inf
    for j in range(m_max):
        w = op.matvec(basis[j])
        vm = tf.stack(basis, axis=1)                     # (n, j+1)
        coef = None
        for _ in range(2):   # twice is enough (Kahan)
            c = tf.einsum("ni,n->i", tf.conj(vm), w)
            w = w - tf.einsum("ni,i->n", vm, c)
            coef = c if coef is None else coef + c
        beta = _norm(w)
        coefs.append(coef)
        h[:j + 1, j] = value_of(coef)
        beta_c = float(value_of(beta))
        h[j + 1, j] = beta_c
        small = _small_expm(h[:j + 1, :j + 1], tau, hermitian)
        scale = float(np.abs(h[:j + 1, :j + 1]).max()) or 1.0
        if beta_c <= _BREAKDOWN * scale:   # an invariant subspace: exact, and no division by ~0
            err = 0.0
            break
        err = beta_c * abs(small[j])
        if err <= tol or j + 1 == m_max:
            break
        betas.append(beta)
        basis.append(w / beta)
    m = len(coefs)
    t = _projected(coefs, betas[:m - 1], hermitian)
    e1 = tf.linalg.expm(tau * t)[:, 0]
    out = nrm * tf.einsum("ni,i->n", tf.stack(basis[:m], axis=1), e1)
    return KrylovResult(out, m, float(err))


def _projected(coefs: list[Any], betas: list[Any], hermitian: bool) -> Any:
    """``T_m`` from the coefficient columns and the residual norms: real symmetric tridiagonal
    (Lanczos) or upper Hessenberg (Arnoldi)."""
    m = len(coefs)
    if hermitian:
        t = tf.diag(tf.stack([tf.real(c[j]) for j, c in enumerate(coefs)]))
        if m > 1:
            b = tf.stack(betas)
            t = t + tf.diag(b, 1) + tf.diag(b, -1)
        return t
    cols = []
    for j, c in enumerate(coefs):
        parts = [c]
        if j + 1 < m:
            parts.append(tf.reshape(betas[j], (1,)))
        if j + 2 < m:
            parts.append(tf.zeros((m - j - 2,), dtype=c.dtype))
        cols.append(tf.concatenate(parts) if len(parts) > 1 else c)
    return tf.stack(cols, axis=1)
