"""The action of a matrix exponential on a vector, ``exp(tau H) v``, by a Krylov method: the
local propagator of TDVP.

Lanczos (Hermitian ``H``) or Arnoldi (any ``H``) builds an orthonormal basis ``V_m`` of the
Krylov space ``span{v, Hv, ..., H^(m-1) v}`` and the projected matrix ``T_m = V_m^dagger H
V_m``; then ``exp(tau H) v ~ ||v|| V_m exp(tau T_m) e_1`` (Y. Saad, SIAM J. Numer. Anal. 29,
209 (1992); M. Hochbruck and C. Lubich, SIAM J. Numer. Anal. 34, 1911 (1997)). The basis is
orthogonalized twice against all earlier vectors (the vectors of a TDVP step are few and
short next to the cost of one product), so it stays orthonormal to rounding.

Error control: the basis grows until the error estimate is at most ``tol``: the larger of
``beta_(m+1) |e_m^T exp(tau T_m) e_1|`` (relative to ``||v||``; the rule the sweeps were
validated with, the stricter one while ``|tau| < 1``) and Saad's a-posteriori estimate
``|tau| beta_(m+1) |e_m^T phi_1(tau T_m) e_1|`` relative to the result ``||exp(tau T_m) e_1||``
(Saad 1992, eq. 5.8; ``phi_1(z) = (e^z - 1)/z``). The first alone depended on the units of
``H`` (``beta`` carries them; at ``J = 1e-8`` with ``dt = 0.1/J`` TDVP was 1e-3 off while it
reported 5e-11) and, in imaginary time, stopped after one product when the start vector's
energy made ``e^(tau alpha)`` tiny, returning that vector scaled down instead of the growing
ground-state component (``dt = 100``: an excited state). Or until the space is
invariant (``beta_(m+1) = 0``: the result is then exact), or until ``max_iter`` products
(then the last estimate is reported, and the caller decides). ``exp(tau T_m)`` of the small
matrix: from its eigendecomposition for Hermitian ``H`` (``T_m`` real tridiagonal), from
``scipy.linalg.expm`` otherwise.

Knows nothing of tenferro or tidu: vectors are flat NumPy (or CuPy, :mod:`._device`) arrays
and ``op.matvec`` the operator; the basis lives with the vectors, the small projected matrix on
the host.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg

from ..tools.device import array_module, is_device_array, to_host
from ..tools.errors import NonFiniteError, ValueRangeError
from .eigensolver import LocalOperator
from .lapack import scaled_norm, tridiagonal_eigh

__all__ = ["KrylovResult", "expm_krylov"]


class KrylovResult(NamedTuple):
    vector: np.ndarray  #: ``exp(tau H) v``
    matvecs: int  #: products with ``H``
    error: float  #: the a-posteriori error estimate (see the module; 0 when exact)
    radius: float = 0.0  #: the largest |eigenvalue| of the projected matrix (a lower bound of ||H||)


def expm_krylov(
    op: LocalOperator, v: np.ndarray, tau: complex, *, tol: float = 1e-10, max_iter: int = 60, hermitian: bool = True
) -> KrylovResult:
    """``exp(tau H) v`` for the operator ``op`` (``op.matvec``), to a relative error ``tol``
    by Saad's estimate (see the module). ``tau`` is ``-i dt`` for real time and ``-dt`` for
    imaginary time; ``hermitian`` selects Lanczos' real tridiagonal ``T_m``."""
    nrm = _norm(v)
    if nrm == 0.0 or tau == 0:
        return KrylovResult(v.copy(), 0, 0.0, 0.0)
    xp = array_module(v)
    dtype = np.result_type(v.dtype, op.dtype, np.complex128 if np.iscomplexobj(tau) and complex(tau).imag else v.dtype)
    n = v.size
    m_max = max(1, min(max_iter, n))
    basis = xp.empty((m_max + 1, n), dtype=dtype)
    basis[0] = v / nrm
    h = np.zeros((m_max + 1, m_max), dtype=dtype)
    err = np.inf
    small = None
    for j in range(m_max):
        w = op.matvec(basis[j]).astype(dtype, copy=False)
        for _ in range(2):  # twice is enough (Kahan's "twice is enough")
            c = basis[: j + 1].conj() @ w
            w = w - c @ basis[: j + 1]
            h[: j + 1, j] += to_host(c)
        beta = float(np.linalg.norm(w))
        h[j + 1, j] = beta
        with np.errstate(over="ignore", invalid="ignore"):  # a result beyond the float range: raised below
            small, phi = _small_expm(h[: j + 1, : j + 1], tau, hermitian)
        grown = scaled_norm([small]) if np.all(np.isfinite(small)) else math.inf  # ||exp(tau T) e_1||
        scale = float(np.abs(h[: j + 1, : j + 1]).max()) or 1.0
        if beta <= 1e-14 * scale:  # an invariant subspace: exact
            err = 0.0
            break
        if not math.isfinite(grown):
            break  # the result leaves the float range (raised below)
        saad = abs(tau) * beta * abs(phi[j]) / grown if grown > 0.0 else math.inf
        err = max(beta * abs(small[j]), saad)
        if err <= tol or j + 1 == m_max:
            break
        basis[j + 1] = w / beta
    m = small.shape[0]
    if not math.isfinite(nrm * grown):  # ||exp(tau H) v||: the basis is orthonormal
        raise ValueRangeError(
            f"expm_krylov: exp(tau H) v leaves the float range (tau = {tau:.3g}, ||v|| = {nrm:.3g}, "
            f"||H|| >= {float(np.max(np.abs(h[:m, :m]))):.3g}); expected |tau| ||H|| well below 700: take a "
            "smaller time step (and in imaginary time, normalize)"
        )
    out = nrm * (xp.asarray(small) @ basis[:m])
    radius = float(np.max(np.abs(np.linalg.eigvals(h[:m, :m])))) if m else 0.0
    return KrylovResult(out.astype(dtype, copy=False), m, float(err), radius)


def _norm(v: Any) -> float:
    """``||v||`` without overflow or underflow in the squares (BLAS ``nrm2`` on the host);
    :class:`NonFiniteError` where ``v`` holds NaN or infinity."""
    if is_device_array(v):
        xp = array_module(v)
        top = float(xp.max(xp.abs(v))) if v.size else 0.0
        nrm = top * float(xp.linalg.norm(v / top)) if 0.0 < top < math.inf else top
    else:
        nrm = scaled_norm([v])
    if not math.isfinite(nrm):
        raise NonFiniteError(
            "expm_krylov: the vector's norm is not a finite number (NaN or infinite entries, or a norm beyond "
            "the float range); expected finite values (an evolution whose state left the float range: normalize "
            "it, or take a smaller time step)"
        )
    return nrm


def _phi1(z: np.ndarray) -> np.ndarray:
    """``phi_1(z) = (e^z - 1) / z`` (1 at 0), without cancellation near 0."""
    z = np.asarray(z)
    nonzero = z != 0
    out = np.ones(z.shape, dtype=np.result_type(z, float))
    out[nonzero] = np.expm1(z[nonzero]) / z[nonzero]
    return out


def _small_expm(t: np.ndarray, tau: complex, hermitian: bool) -> tuple[np.ndarray, np.ndarray]:
    """``exp(tau T) e_1`` and ``phi_1(tau T) e_1`` of the small projected matrix (the second for
    Saad's error estimate)."""
    if hermitian:
        d = np.real(np.diag(t))
        e = np.real(np.diag(t, -1))
        if len(d) == 1:
            return np.array([np.exp(tau * d[0])]), _phi1(np.array([tau * d[0]]))
        lam, q = tridiagonal_eigh(d, e)
        return q @ (np.exp(tau * lam) * q[0]), q @ (_phi1(tau * lam) * q[0])
    m = t.shape[0]
    aug = np.zeros((m + 1, m + 1), dtype=np.result_type(t, tau))
    aug[:m, :m] = tau * t
    aug[0, m] = 1.0
    full = scipy.linalg.expm(aug)  # [[exp(tau T), phi_1(tau T) e_1], [0, 1]]
    return full[:m, 0], full[:m, m]
