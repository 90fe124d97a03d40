"""Derivatives at the fixed point: the correlation length of a VUMPS ground state, differentiable
in the couplings of its Hamiltonian by implicit differentiation of the fixed-point condition
(the route Liao, Liu, Wang and Xiang, PRX 9, 031041 (2019) take for iPEPS).

At fixed bond dimension the VUMPS state minimizes the energy per site ``e(A, c)`` over uniform
MPS (one-site cell, real tensors). Near ``A_L`` write ``A(Y) = A_L + V_L Y`` with ``V_L`` the null
space of ``A_L^dagger`` (the left gauge fixing of the tangent space: no gauge or norm direction
left). The fixed point is ``g(Y, c) = grad_Y e = 0``, so ``dY/dc = -Hess^{-1} dg/dc``, and
``dxi/dc = <grad_A xi, V_L dY/dc>``, where ``xi = -1 / ln|lambda_2 / lambda_1|`` and each
eigenvalue moves by ``dlambda = (l| dT |r) / (l|r)`` (first-order perturbation of the transfer
matrix ``T``: its left and right eigenvectors, the adjoint of the eigenproblem).

The gradient is exact: ``grad_A e = L^dagger (2 [H_AC(A_C) - <H_AC> A_C] C^dagger) L^{-dagger} / s``
(``L A L^{-1} = s A_L``; environments by :mod:`.environments`). ``dg/dc`` is exact too (``g`` is
linear in the Hamiltonian: the gradient of the terms ``c`` multiplies). The Hessian is the one
approximation: central differences of the exact gradient, one column per direction of ``Y``
(``D^2 (d - 1)`` of them: meant for small bond dimensions), with errors of order ``STEP^2``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

import tenferro as tf
import tidu

from ..tools.checks import is_traced
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from .environments import apply_hac, left_environments, right_environments
from .gauge import left_orthonormalize, right_orthonormalize
from .impo import InfiniteMPO, _tensors
from .imps import iMPS
from .tmaps import leading_eigs, left_map, right_map
from .transfer import _channel_weights, correlation_length

__all__ = ["fixed_point_correlation_length", "STEP"]

#: the step of the Hessian's central differences
STEP = 1e-6


def _gradient(A: np.ndarray, Ws: list[np.ndarray]) -> np.ndarray:
    """``d e / dA`` (real sense) of the energy per site of the uniform MPS ``A``."""
    (AL,), (L,) = left_orthonormalize([A], tol=1e-15)
    (AR,), (C,) = right_orthonormalize([AL], tol=1e-15)
    C = C / np.linalg.norm(C)
    D = A.shape[0]
    Linv = np.linalg.inv(L)
    s = np.linalg.norm(np.tensordot(np.tensordot(L, A, (1, 0)), Linv, (2, 0))) / np.sqrt(D)
    GL, _, _ = left_environments([AL], C, Ws, tol=1e-14)
    GR, _, _ = right_environments([AR], C, Ws, tol=1e-14)
    AC = np.tensordot(AL, C, (2, 0))
    h = apply_hac(GL[0], Ws[0], GR[0], AC)
    g = 2.0 * (h - np.vdot(AC, h) / np.vdot(AC, AC) * AC)
    g = np.tensordot(g, C.conj(), (2, 1))
    g = np.tensordot(L.conj().T, g, (1, 0))
    return np.tensordot(g, Linv.conj(), (2, 1)).real / s


def _xi_gradient(psi: iMPS, op: Any, k: int) -> tuple[float, np.ndarray]:
    """``(xi, d xi / dA)`` at ``A_L`` (real sense)."""
    AL = psi.AL[0]
    D = AL.shape[0]
    w, vr = leading_eigs(right_map([AL], [AL]), (D, D), AL.dtype, k, tol=1e-14)
    wl, vl = leading_eigs(left_map([AL], [AL]), (D, D), AL.dtype, k, tol=1e-14)
    idx = 1
    if op is not None:
        keep = _channel_weights(psi, op, vr)
        keep[0] = False
        idx = int(np.flatnonzero(keep)[0])
    if np.sum(np.abs(w - w[idx]) < 1e-8 * abs(w[0])) > 1:
        raise InvalidOptionError(
            "fixed_point_correlation_length: the eigenvalue that sets the correlation length is degenerate "
            "(a complex pair or a repeated one), so the correlation length is not differentiable there"
        )

    def dlog(j: int) -> np.ndarray:
        jl = int(np.argmin(np.abs(wl - w[j])))
        r, l_ = vr[:, j].reshape(D, D), vl[:, jl].reshape(D, D)  # r[ket, bra], l[bra, ket]
        k1 = np.tensordot(np.tensordot(l_.T, AL.conj(), (1, 0)), r, (2, 1))  # coefficient of dA
        k2 = np.tensordot(np.tensordot(l_, AL, (1, 0)), r, (2, 0))  # coefficient of conj(dA)
        return ((k1 + k2) / (w[j] * np.trace(l_ @ r))).real

    xi = -1.0 / np.log(abs(w[idx] / w[0]))
    return float(xi), xi**2 * (dlog(idx) - dlog(0))


def _derivatives(psi: iMPS, H: InfiniteMPO, symbols: list[Any], op: Any, k: int) -> tuple[float, np.ndarray]:
    """``xi`` and ``dxi/dc`` for each traced coefficient ``c`` of ``symbols``."""
    AL = psi.AL[0]
    Dl, d, Dr = AL.shape
    VL = scipy.linalg.null_space(AL.reshape(Dl * d, Dr).T)  # (D d, D (d - 1))
    m = VL.shape[1] * Dr

    def g(Y: np.ndarray, Ws: list[np.ndarray]) -> np.ndarray:
        A = AL + (VL @ Y.reshape(VL.shape[1], Dr)).reshape(Dl, d, Dr)
        return (VL.T @ _gradient(A, Ws).reshape(Dl * d, Dr)).reshape(-1)

    hess = np.empty((m, m))
    for j in range(m):
        e = np.zeros(m)
        e[j] = STEP
        hess[:, j] = (g(e, H.tensors) - g(-e, H.tensors)) / (2 * STEP)
    hess = 0.5 * (hess + hess.T)
    xi, dxi_dA = _xi_gradient(psi, op, k)
    dxi_dY = (VL.T @ dxi_dA.reshape(Dl * d, Dr)).reshape(-1)
    zero = np.zeros(m)
    out = []
    for c in symbols:
        part = [(1.0, sign, f) for coef, sign, f in H.terms if coef is c]
        dg = g(zero, _tensors(part, H.cell, d))
        out.append(-dxi_dY @ scipy.linalg.solve(hess, dg, assume_a="sym"))
    return xi, np.array(out)


def fixed_point_correlation_length(psi: iMPS, H: InfiniteMPO, op: Any = None, k: int = 12) -> Any:
    """The correlation length (sites) of the VUMPS fixed point ``psi`` of ``H`` (one-site cell,
    real), as :func:`correlation_length`; when ``H``'s couplings are tidu tracers the result is
    differentiable in them at fixed bond dimension, by implicit differentiation of the fixed point
    (``tidu.grad(lambda g: fixed_point_correlation_length(vumps(H(g)).state, H(g)))``)."""
    if not isinstance(psi, iMPS):
        raise Tensor4allTypeError(f"fixed_point_correlation_length: psi must be an iMPS, got {type(psi).__name__}")
    if not isinstance(H, InfiniteMPO):
        raise Tensor4allTypeError(f"fixed_point_correlation_length: H must be an InfiniteMPO, got {type(H).__name__}")
    if psi.cell != 1 or H.cell != 1 or np.iscomplexobj(psi.AL[0]) or np.iscomplexobj(H.tensors[0]):
        raise InvalidOptionError(
            "fixed_point_correlation_length: derivatives need a one-site cell and real tensors (state and MPO)"
        )
    symbols: list[Any] = []
    for coef, _, _ in H.terms:
        if is_traced(coef) and all(coef is not s for s in symbols):
            symbols.append(coef)
    if not symbols:
        return correlation_length(psi, op, k)

    @tidu.custom_jvp
    def xi_of(*cs: Any) -> Any:
        return tf.asarray(np.float64(correlation_length(psi, op, k)))

    @xi_of.defjvp
    def xi_jvp(primals: Any, tangents: Any) -> Any:
        xi, dxi = _derivatives(psi, H, symbols, op, k)
        dt = None
        for v, t in zip(dxi, tangents):
            term = tf.asarray(np.float64(v)) * t
            dt = term if dt is None else dt + term
        return tf.asarray(np.float64(xi)), dt

    return xi_of(*symbols)
