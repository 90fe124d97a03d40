"""Polar decomposition ``polar(a, side)`` -> ``(U, P)``, as ``scipy.linalg.polar``.

The unitary factor of a square ``a`` is a function of a Hermitian matrix (Higham,
*Functions of Matrices*, 2008, Thm. 5.2 and §8.1):
``sign([[0, a], [a^H, 0]]) = [[0, U], [U^H, 0]]``, ``U = W V^H`` for ``a = W S V^H``.
The augmented matrix has eigenvalues ``±s_i`` with eigenvectors
``[w_i; ±v_i] / sqrt(2)`` (taken from the SVD, no 2n x 2n eigensolver), so ``U`` is
:data:`~tenferro.linalg._funm.funm_hermitian_p` with ``f = sign``: derivatives of
every order by Daleckii–Krein, whose divided differences of ``sign`` are ``0``
within a sign and ``1/s_i + ...`` across (``2 / (s_i + s_j)``), finite at repeated
singular values; only ``s_i = s_j = 0`` (rank deficiency) is singular. ``P`` is
``herm(U^H a)`` (right) or ``herm(a U^H)`` (left), products of differentiable
factors. Tall ``a`` goes through its QR factorization (``U = Q polar(R)``), wide
``a`` through that of ``a^H``. Derivations: docs/ad/funm.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tidu import Tracer, stop_gradient

from .._aval import aval_of_operand, meta
from .._dispatch import dispatchable
from .._errors import TenferroValueError
from .._piecewise import sign
from ._divdiff import host
from ._eigh import hermitian_part
from ._errors import SingularMatrixError
from ._funm import funm_hermitian_p
from ._qr import qr_p
from ._svd import svd_p
from ._util import check_matrix, concrete, operand
from ._matops import columns, mH, mhm, mm, place_columns, rows
from .. import _ops as tf

__all__ = ["polar"]


def _tolerance(s: np.ndarray, size: int) -> np.ndarray:
    """``size * eps * max(s)`` per matrix (NumPy's ``matrix_rank`` criterion)."""
    return size * np.finfo(s.dtype).eps * np.max(s, axis=-1)


def _rank_error(smin: float, tol: float) -> SingularMatrixError:
    return SingularMatrixError(
        f"polar: the polar decomposition is not differentiable at a rank-deficient matrix (smallest singular value "
        f"{smin:.3e} <= {tol:.3e} = max(m, n) eps s_max): its unitary factor is not unique there"
    )


def sign_domain(name: str, w: np.ndarray, k: int) -> np.ndarray:
    """Eigenvalues ``[s, -s]`` of the augmented matrix: derivatives need full rank;
    for the value a zero singular value keeps its sign (``±0 -> ±tiny``) so that
    ``U = W V^H`` as in SciPy."""
    s = w[..., : w.shape[-1] // 2]
    if k >= 1 and s.size:
        tol = _tolerance(s, s.shape[-1])  # max(M, N) = n for the square case (w holds 2n values)
        smin = np.min(s, axis=-1)
        if np.any(smin <= tol):
            i = np.unravel_index(np.argmin(smin - tol), smin.shape)
            raise _rank_error(float(smin[i]), float(tol[i]))
    return np.where(w == 0, np.copysign(np.finfo(w.dtype).tiny, w), w)


def _unitary_factor(r: Any) -> Any:
    """``U = W V^H`` of a square ``r`` ``[n, n, B...]``, with exact derivatives."""
    n = meta(r)[0][0]
    u, s, vh = svd_p.bind(stop_gradient(r), full_matrices=False)
    v = mH(vh)
    c = 1 / np.sqrt(2.0)
    w = tf.concatenate([s, tf.negative(s)], axis=0)
    basis = tf.multiply(
        tf.concatenate([tf.concatenate([u, u], axis=1), tf.concatenate([v, tf.negative(v)], axis=1)], axis=0), c
    )
    h = tf.concatenate([place_columns(r, 2 * n, n), place_columns(mH(r), 2 * n, 0)], axis=0)
    out = funm_hermitian_p.bind(h, w, basis, f=sign, name="polar", domain=sign_domain)
    return rows(columns(out, n, 2 * n), 0, n)


def _check_rank(a: Any, m: int, n: int) -> None:
    """Under differentiation, refuse rank-deficient rectangular input up front (the
    square case is checked by :func:`sign_domain`)."""
    if not isinstance(a, Tracer) or m == n:
        return
    x = concrete(a)
    if x is None or not x.size:
        return
    s = np.linalg.svd(np.moveaxis(host(x), (0, 1), (-2, -1)), compute_uv=False)
    tol = _tolerance(s, max(m, n))
    smin = np.min(s, axis=-1)
    if np.any(smin <= tol):
        i = np.unravel_index(np.argmin(smin - tol), smin.shape)
        raise _rank_error(float(smin[i]), float(tol[i]))


@dispatchable
def polar(a: Any, side: str = "right") -> tuple[Any, Any]:
    """Polar decomposition of each matrix of ``a`` ``[M, N, B...]``, as
    ``scipy.linalg.polar``: ``side="right"``: ``a = U P`` with ``P [N, N, B...]``;
    ``side="left"``: ``a = P U`` with ``P [M, M, B...]``. ``U [M, N, B...]`` has
    orthonormal columns (``M >= N``) or rows (``M < N``), ``P`` is Hermitian
    positive semidefinite.

    Derivatives of every order, exact at repeated singular values (the unitary
    factor as the sign function of ``[[0, a], [a^H, 0]]``, Daleckii–Krein; Higham
    2008, Thm. 5.2); at rank-deficient input (``s_min <= max(M, N) eps s_max``) the
    unitary factor is not unique and differentiating raises
    :class:`SingularMatrixError` (the value is SciPy's ``W V^H``). See docs/ad/funm.md.
    """
    a = operand("polar", "a", a)
    check_matrix("polar", "a", aval_of_operand(a))
    if side not in ("right", "left"):
        raise TenferroValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    m, n = meta(a)[0][:2]
    _check_rank(a, m, n)
    if m == n:
        u = _unitary_factor(a)
    elif m > n:
        q, r = qr_p.bind(a, complete=False)
        u = mm(q, _unitary_factor(r))
    else:
        q, r = qr_p.bind(mH(a), complete=False)
        u = mH(mm(q, _unitary_factor(r)))
    p = hermitian_part(mhm(u, a)) if side == "right" else hermitian_part(mm(a, mH(u)))
    return u, p
