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

The Hessian and ``dg/dc`` are exact, by ``tidu`` (``tidu.hessian`` and ``tidu.grad``) through a
small dense program for the energy per site of ``A(Y)`` (:func:`_energy_program`): the transfer
matrix ``T`` as a ``D^2 x D^2`` matrix, its fixed points by two Newton steps on the bordered
eigenproblem started from the exact ones at ``Y = 0`` (``l = 1``, ``r = C C^T``, eigenvalue 1:
the error after two steps is of fourth order in ``Y``, so first and second derivatives at 0 are
those of the true fixed points), the MPO's automaton between them. A Hessian by central
differences of the gradient (the first version) is not enough beyond ``D ~ 6``: its smallest
eigenvalues are of the order of the smallest squared Schmidt value (5e-12 at ``D = 8`` for the
TFIM at ``g = 1.5``), below the rounding of a difference quotient (TFIM ``D = 8``: 0.9% off, and
anything from 0.85% to 82% as the step moved from 1e-5 to 1e-4). Exact second derivatives
resolve them to ``eps / s_min^2`` relative (the same limit the finite differences of reconverged
runs meet: the fixed point itself is determined no better along those directions). The cost is
``D^2 (d - 1)`` second-order passes over ``D^2 x D^2`` solves: meant for ``D`` up to about 16
(:data:`MAX_BOND`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

import tenferro as tf
import tidu

from ..tools.checks import is_traced
from ..tools.errors import BondDimensionError, InvalidOptionError, Tensor4allTypeError
from ..tools.threads import thread_policy
from .impo import InfiniteMPO, _tensors
from .imps import iMPS
from .tmaps import leading_eigs, left_map, right_map
from .transfer import _channel, correlation_length

__all__ = ["fixed_point_correlation_length", "MAX_BOND"]

#: the largest bond dimension whose Hessian :func:`fixed_point_correlation_length` builds
MAX_BOND = 24

#: the largest ``eps * cond(Hessian)`` (a bound of the derivative's relative error; measured errors
#: are 20-100 times below it: 4e-5 at ``D = 8`` (bound 8e-4), 2e-5 at ``D = 10`` (2e-3)) accepted
MAX_ERROR_BOUND = 1e-2

#: Newton steps of the fixed points in :func:`_energy_program` (two: exact to second order)
NEWTON_STEPS = 2


def _fixed_point(M: Any, x0: np.ndarray, norm: np.ndarray) -> tuple[Any, Any]:
    """``(x, lam)`` with ``M x = lam x`` and ``norm . x = 1``: Newton's method on the bordered
    eigenproblem, started from ``(x0, 1)`` (exact at the expansion point)."""
    n = x0.shape[0]
    x, lam = tf.asarray(x0), tf.asarray(np.float64(1.0))
    row = tf.asarray(np.concatenate([norm, [0.0]]).reshape(1, n + 1))
    eye, norm_t = tf.asarray(np.eye(n)), tf.asarray(norm)
    for _ in range(NEWTON_STEPS):
        residual = tf.concatenate([M @ x - lam * x, tf.reshape(tf.sum(norm_t * x) - 1.0, (1,))])
        jac = tf.concatenate([tf.concatenate([M - lam * eye, -tf.reshape(x, (n, 1))], axis=1), row], axis=0)
        step = tf.linalg.solve(jac, -residual)
        x, lam = x + step[:n], lam + step[n]
    return x, lam


def _energy_program(AL: np.ndarray, VL: np.ndarray, C: np.ndarray, W: np.ndarray) -> Any:
    """``Y -> e(A_L + V_L Y)``, the energy per site of the MPO ``W`` (one-site cell) in the
    uniform MPS ``A_L + V_L Y`` as a ``tidu``-differentiable function, exact to second order in
    ``Y`` at 0 (see the module's docstring). Flattened matrices are column-major (tenferro's)."""
    D, d, _ = AL.shape
    w = W.shape[0]
    rho = C @ C.T
    r0 = (rho / np.trace(rho)).reshape(-1, order="F")
    l0 = np.eye(D).reshape(-1, order="F")
    AL_t, VL_t, W_t = tf.asarray(AL), tf.asarray(VL.reshape(D, d, -1)), tf.asarray(W)
    W_open, W_end = W_t[: w - 1, :, :, 1 : w - 1], W_t[: w - 1, :, :, w - 1]

    def energy(Y: Any) -> Any:
        A = AL_t + tf.einsum("xsk,ky->xsy", VL_t, Y)
        T = tf.reshape(tf.einsum("psq,xsy->pxqy", A, A), (D * D, D * D))  # l -> l T: the left map
        r, lam = _fixed_point(T, r0, l0)  # T r = lam r, tr r = 1
        l, _ = _fixed_point(tf.transpose(T), l0, r0)
        l = l / tf.sum(l * r)
        An = A / tf.sqrt(lam)
        ready = tf.reshape(l, (D, 1, D))
        open_ = tf.zeros((D, w - 2, D))
        for _ in range(w - 1):  # the terms' states: each pass moves them one site on
            open_ = tf.einsum("psq,paz,astb,ztw->qbw", An, tf.concatenate([ready, open_], axis=1), W_open, An)
        done = tf.einsum("psq,paz,ast,ztw->qw", An, tf.concatenate([ready, open_], axis=1), W_end, An)
        return tf.sum(done * tf.reshape(r, (D, D)))

    return energy


def _xi_gradient(psi: iMPS, op: Any, k: int) -> tuple[float, np.ndarray]:
    """``(xi, d xi / dA)`` at ``A_L`` (real sense)."""
    AL = psi.AL[0]
    D = AL.shape[0]
    w, vr = leading_eigs(right_map([AL], [AL]), (D, D), AL.dtype, k, tol=1e-14)
    wl, vl = leading_eigs(left_map([AL], [AL]), (D, D), AL.dtype, k, tol=1e-14)
    lam = _channel(psi, op, k)  # the eigenvalue that correlation_length takes
    idx = int(np.argmin(np.abs(w / w[0] - lam[0]))) if len(lam) else 1
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
    AL, C = psi.AL[0], psi.C[0]
    Dl, d, Dr = AL.shape
    VL = scipy.linalg.null_space(AL.reshape(Dl * d, Dr).T)  # (D d, D (d - 1))
    m = VL.shape[1] * Dr
    zero = tf.asarray(np.zeros((VL.shape[1], Dr)))
    hess = np.asarray(tidu.hessian(_energy_program(AL, VL, C, H.tensors[0]))(zero)).reshape(m, m)
    curvatures, modes = np.linalg.eigh(0.5 * (hess + hess.T))
    bound = np.finfo(float).eps * curvatures[-1] / abs(curvatures[0])
    if bound > MAX_ERROR_BOUND:
        raise BondDimensionError(
            f"fixed_point_correlation_length: at bond dimension {Dr} the energy's Hessian at the fixed point has "
            f"curvatures from {curvatures[0]:.2e} to {curvatures[-1]:.2e} (the smallest near the smallest squared "
            f"Schmidt value, {float(scipy.linalg.svdvals(C)[-1]) ** 2:.2e}): the fixed point, and so its derivative, "
            f"is not determined in double precision along those directions (relative error bound {bound:.1e}); "
            "use a smaller max_bond, whose Schmidt values stay above about 1e-7"
        )
    xi, dxi_dA = _xi_gradient(psi, op, k)
    dxi_dY = (VL.T @ dxi_dA.reshape(Dl * d, Dr)).reshape(-1)
    out = []
    for c in symbols:
        part = [(1.0, sign, f) for coef, sign, f in H.terms if coef is c]
        dg = np.asarray(tidu.grad(_energy_program(AL, VL, C, _tensors(part, H.cell, d)[0]))(zero)).reshape(-1)
        out.append(-(dxi_dY @ modes) @ ((modes.T @ dg) / curvatures))
    return xi, np.array(out)


@thread_policy()
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
    if max(psi.bond_dims) > MAX_BOND:
        raise InvalidOptionError(
            f"fixed_point_correlation_length: derivatives build the energy's Hessian densely, for bond dimensions "
            f"up to {MAX_BOND}; the state has {max(psi.bond_dims)} (the value alone: correlation_length)"
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
