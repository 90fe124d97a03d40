"""``exp(tau H) v`` for a traced TDVP run (:mod:`._traced_backend`): the Krylov exponential
of :mod:`._krylov` as a tidu primitive with its own derivative rules.

``expm_apply_p(v, *theta)`` is ``exp(tau H(theta)) v`` for an operator built from tensors
``theta`` (environments and MPO tensors: ``make(*theta)``, linear in each of them and in the
vector). Its implementation is :func:`._krylov.expm_krylov` on concrete values. Its rules
do not differentiate the Krylov recursion, whose dimension the forward pass chose: they
use the exact derivative of the exponential (R. M. Wilcox, J. Math. Phys. 8, 962 (1967);
N. J. Higham, *Functions of Matrices*, SIAM 2008, Sec. 10.2),

    d[exp(tau H) v] = exp(tau H) dv + tau int_0^1 exp((1-s) tau H) dH exp(s tau H) v ds,

with the integral by Gauss-Legendre quadrature (the integrand is an entire function of
``s``; the number of nodes grows with ``|tau| ||H||`` so that the rule is exact to rounding
for the steps of a TDVP run) and ``dH b`` the sum over the tensors of ``H`` with one of them
replaced by its tangent. The JVP is thus ``expm_apply_p`` of tangents (linear in them) plus
tenferro products, and the primitive's transpose in ``v`` is ``exp(tau H^T)`` (the same
primitive with ``transpose=True``; ``H^T x = conj(H conj(x))`` for a Hermitian ``H``, else the
transpose of the product in the vector): forward mode, reverse mode and the dot-product
test all work, and higher orders by the same rules.

Why not differentiate the recursion: where the Krylov space is invariant (a product
eigenstate, a symmetric point) the recursion stops early, and a perturbation of ``H`` that
leaves the space is invisible to the derivative of the stopped recursion; the exact rule
has no such blind spot, and its result does not depend on the Krylov dimension the forward
pass happened to use.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tenferro as tf
import tidu
from tidu import Zero, is_undefined

from .eigensolver import LocalOperator
from .krylov import KrylovResult, expm_krylov

__all__ = ["expm_krylov_traced", "value_of"]

#: Gauss-Legendre nodes: at least this many, more for large |tau| ||H||
_MIN_NODES = 8
_MAX_NODES = 64


def value_of(x: Any) -> np.ndarray:
    """The concrete NumPy value of a tensor or tracer (a tracer's primal): for decisions the
    map takes as constants (ranks, Krylov dimensions)."""
    if isinstance(x, tidu.Tracer):
        try:
            x = x.to_concrete()  # through every level of nested transformations
        except tidu.TracerConversionError as e:
            raise tidu.TracerConversionError(
                "a traced TDVP step decides its Krylov dimensions and kept ranks from concrete values; it cannot "
                "run on abstract values (under tenferro.jit or make_graph)"
            ) from e
    return np.asarray(x)


class _NumpyOperator:
    """A tenferro operator seen by the NumPy Krylov method (flat NumPy vectors); with
    ``transpose`` its transpose ``H^T``."""

    def __init__(self, op: Any, transpose: bool, hermitian: bool, dtype: np.dtype):
        self.op, self.transpose, self.hermitian, self.dtype = op, transpose, hermitian, dtype

    def matvec(self, x: np.ndarray) -> np.ndarray:
        if not self.transpose:
            return np.asarray(self.op.matvec(tf.asarray(x)))
        if self.hermitian:  # H^T x = conj(H conj(x))
            return np.conj(np.asarray(self.op.matvec(tf.asarray(np.conj(x)))))
        _, pull = tidu.vjp(self.op.matvec, tf.asarray(np.zeros_like(x)))
        (out,) = pull(tf.asarray(x))
        return np.asarray(out)


def _nodes(tau: complex, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [0, 1] for an integrand like ``exp(s tau H)``."""
    n = int(min(_MAX_NODES, max(_MIN_NODES, math.ceil(8 + 1.5 * abs(tau) * radius))))
    x, w = np.polynomial.legendre.leggauss(n)
    return (x + 1.0) / 2.0, w / 2.0


#: the last concrete evaluation's Krylov statistics (for the sweep's records)
_LAST: dict[str, KrylovResult] = {}

expm_apply_p = tidu.Primitive("expm_krylov_apply")


def _run(
    x: Any, inputs: tuple, make: Any, tau: complex, tol: float, max_iter: int, hermitian: bool, transpose: bool
) -> KrylovResult:
    op = make(*inputs)
    xn = np.asarray(x)
    dtype = np.result_type(xn, *(np.asarray(t).dtype for t in inputs))
    return expm_krylov(
        _NumpyOperator(op, transpose, hermitian, dtype), xn, tau, tol=tol, max_iter=max_iter, hermitian=hermitian
    )


@expm_apply_p.def_impl
def _expm_apply_impl(x, *inputs, make, tau, tol, max_iter, hermitian, transpose):
    r = _run(x, inputs, make, tau, tol, max_iter, hermitian, transpose)
    _LAST["result"] = r
    return tf.asarray(r.vector.astype(np.asarray(x).dtype, copy=False))


@expm_apply_p.def_abstract_eval
def _expm_apply_aval(x, *inputs, **params):
    return x


@expm_apply_p.def_jvp
def _expm_apply_jvp(primals, tangents, *, make, tau, tol, max_iter, hermitian, transpose):
    x, *inputs = primals
    dx, *dinputs = tangents
    params = dict(make=make, tau=tau, tol=tol, max_iter=max_iter, hermitian=hermitian, transpose=transpose)
    out = expm_apply_p.bind(x, *inputs, **params)
    t_out = None if type(dx) is Zero else expm_apply_p.bind(dx, *inputs, **params)
    moving = [k for k, t in enumerate(dinputs) if type(t) is not Zero]
    if moving:
        radius = _run(
            value_of(x), tuple(value_of(t) for t in inputs), make, tau, tol, max_iter, hermitian, False
        ).radius
        nodes, weights = _nodes(tau, radius)
        for s, w in zip(nodes, weights):
            b = expm_apply_p.bind(x, *inputs, **{**params, "tau": s * tau})
            db = None  # dH b (dH^T b when transposed): H with one tensor replaced by its tangent, summed
            for k in moving:
                ins = list(inputs)
                ins[k] = dinputs[k]
                term = _product(make(*ins), b, transpose)
                db = term if db is None else db + term
            c = expm_apply_p.bind(db * (w * tau), *inputs, **{**params, "tau": (1.0 - s) * tau})
            t_out = c if t_out is None else t_out + c
    return out, (Zero.like(out) if t_out is None else t_out)


def _product(op: Any, b: Any, transpose: bool) -> Any:
    """``op b``, or ``op^T b`` (the transpose of the product in the vector, by its VJP)."""
    if not transpose:
        return op.matvec(b)
    _, pull = tidu.vjp(op.matvec, tf.zeros_like(b))
    (out,) = pull(b)
    return out


@expm_apply_p.def_transpose
def _expm_apply_transpose(ct, x, *inputs, make, tau, tol, max_iter, hermitian, transpose):
    if any(is_undefined(t) for t in inputs):
        raise tidu.NonDifferentiableError("expm_krylov_apply is linear in its vector only")
    if type(ct) is Zero:
        return [None] * (1 + len(inputs))
    ct_x = expm_apply_p.bind(
        ct, *inputs, make=make, tau=tau, tol=tol, max_iter=max_iter, hermitian=hermitian, transpose=not transpose
    )
    return [ct_x] + [None] * len(inputs)


def expm_krylov_traced(
    op: LocalOperator, v: Any, tau: complex, *, tol: float = 1e-10, max_iter: int = 60, hermitian: bool = True
) -> KrylovResult:
    """``exp(tau H) v`` for the operator ``op`` (``op.matvec`` on flat tenferro values,
    ``type(op)(*op.inputs)`` rebuilds it, linear in each input), differentiable in ``v`` and
    in ``op.inputs`` by the exact rules of the module. ``tau`` is a number: ``-i dt`` real
    time, ``-dt`` imaginary time. The statistics are those of the forward Krylov run."""
    tau = complex(tau) if complex(tau).imag else float(np.real(tau))
    if tau == 0:
        return KrylovResult(v, 0, 0.0, 0.0)
    inputs = tuple(op.inputs)
    dtype = tf.result_type(v, *inputs, *((tf.complex128,) if isinstance(tau, complex) else ()))
    v = tf.convert(v, dtype) if tf.result_type(v) != dtype else v
    _LAST.clear()
    out = expm_apply_p.bind(
        v,
        *inputs,
        make=type(op),
        tau=tau,
        tol=float(tol),
        max_iter=int(max_iter),
        hermitian=bool(hermitian),
        transpose=False,
    )
    r = _LAST.get("result")
    if r is None:
        return KrylovResult(out, 0, 0.0, 0.0)
    return KrylovResult(out, r.matvecs, r.error, r.radius)
