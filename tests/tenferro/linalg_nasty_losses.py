"""The losses of the nasty linalg cases (``linalg_nasty_cases.py``), written once
against a small backend interface, and the two backends the tests need: tenferro and
mpmath (the extended-precision reference). JAX's and PyTorch's backends live in
``benchmarks/linalg_accuracy.py`` (peers are benchmark dependencies only)."""

from __future__ import annotations

from typing import Any, Callable

import mpmath as mp
import numpy as np

import tenferro as tf
import tenferro.linalg as la


# ---------------------------------------------------------------------------
# backends: the operations the losses are written with
# ---------------------------------------------------------------------------
class Backend:
    """What a loss may call. Arrays support ``@``, ``*``, ``+``, ``-``, ``.T`` and
    NumPy slicing; everything else goes through these methods. Matrix functions have
    decomposition-based defaults that a backend may replace by a dedicated API."""

    name = "?"

    def const(self, a: np.ndarray) -> Any:
        raise NotImplementedError

    def conj(self, x: Any) -> Any:
        raise NotImplementedError

    def svd(self, x: Any) -> tuple:
        raise NotImplementedError  # (u, s, vh), reduced, s descending

    def eigh(self, x: Any) -> tuple:
        raise NotImplementedError  # (w, v), w ascending

    def qr(self, x: Any) -> tuple:
        raise NotImplementedError  # (q, r), reduced

    def det(self, x: Any) -> Any:
        raise NotImplementedError

    def logabsdet(self, x: Any) -> Any:
        raise NotImplementedError

    def expm(self, x: Any) -> Any:
        raise NotImplementedError

    def exp(self, x: Any) -> Any:
        raise NotImplementedError

    def re_sum(self, x: Any) -> Any:
        raise NotImplementedError  # Re sum(x), a real scalar

    def H(self, x: Any) -> Any:
        return self.conj(x).T

    def abs2(self, x: Any) -> Any:
        return x * self.conj(x)

    def herm(self, x: Any) -> Any:
        return (x + self.H(x)) * 0.5

    def funm_h(self, x: Any, f: Callable) -> Any:
        """``f(A)`` of a Hermitian ``x`` (``V f(w) V^H``)."""
        w, v = self.eigh(x)
        return (v * f(w)) @ self.H(v)

    def trace_funm_h(self, x: Any, f: Callable) -> Any:
        """``tr f(A) = sum f(w)`` of a Hermitian ``x``."""
        return self.re_sum(f(self.eigh(x)[0]))

    def svd_f(self, x: Any, f: Callable) -> Any:
        """``U f(S) V^H``."""
        u, s, vh = self.svd(x)
        return (u * f(s)) @ vh

    def polar_u(self, x: Any) -> Any:
        """The unitary polar factor ``U V^H``."""
        u, _, vh = self.svd(x)
        return u @ vh


class TenferroBackend(Backend):
    name = "tenferro"

    def const(self, a):
        return tf.asarray(a)

    def conj(self, x):
        return tf.conj(x)

    def svd(self, x):
        return la.svd(x)

    def eigh(self, x):
        return la.eigh(x)

    def qr(self, x):
        return la.qr(x)

    def det(self, x):
        return la.det(x)

    def logabsdet(self, x):
        return la.slogdet(x)[1]

    def expm(self, x):
        return la.expm(x)

    def exp(self, x):
        return tf.exp(x)

    def re_sum(self, x):
        return tf.real(tf.sum(x))

    # the matrix-function API, exact at repeated eigenvalues and singular values
    def funm_h(self, x, f):
        return la.funm_hermitian(x, f)

    def trace_funm_h(self, x, f):
        return tf.real(tf.trace(la.funm_hermitian(x, f)))

    def polar_u(self, x):
        return la.polar(x)[0]

    def svd_f(self, x, f):
        u, p = la.polar(x)  # U f(S) V^H = (U V^H) (V f(S) V^H)
        return u @ la.funm_hermitian(p, f)


class TenferroDecompositionBackend(TenferroBackend):
    """tenferro through its decompositions alone: matrix functions built from ``eigh``
    and ``svd`` as JAX and PyTorch build them (what the decomposition rules give)."""

    name = "tenferro (decompositions)"
    funm_h = Backend.funm_h
    trace_funm_h = Backend.trace_funm_h
    svd_f = Backend.svd_f
    polar_u = Backend.polar_u


def _mp_map(fn: Callable) -> Callable:
    return np.frompyfunc(fn, 1, 1)


_mp_conj, _mp_re, _mp_exp = _mp_map(mp.conj), _mp_map(mp.re), _mp_map(mp.exp)


class MpBackend(Backend):
    """Object arrays of mpmath numbers; decompositions by mpmath at the current precision."""

    name = "mpmath"

    def __init__(self, complex_: bool):
        self.complex_ = complex_

    def const(self, a):
        if not isinstance(a, np.ndarray) or a.dtype == object:
            return a
        cast = mp.mpc if self.complex_ else mp.mpf
        return np.array(
            [cast(complex(x)) if self.complex_ else cast(float(x)) for x in a.ravel()], dtype=object
        ).reshape(a.shape)

    def conj(self, x):
        return _mp_conj(x) if self.complex_ else x

    def _m(self, x):
        return mp.matrix(x.tolist())

    def _a(self, m):
        return np.array(m.tolist(), dtype=object)

    def svd(self, x):
        u, s, v = (mp.svd_c if self.complex_ else mp.svd_r)(self._m(x))
        return self._a(u), np.array([s[i] for i in range(s.rows)], dtype=object), self._a(v)

    def eigh(self, x):
        w, v = (mp.eighe if self.complex_ else mp.eigsy)(self._m(x))
        w = [w[i] for i in range(w.rows)]
        order = sorted(range(len(w)), key=lambda i: w[i])
        return np.array([w[i] for i in order], dtype=object), self._a(v)[:, order]

    def qr(self, x):
        m, n = x.shape
        q, r = mp.qr(self._m(x[:, : min(m, n)]), mode="skinny")  # (mpmath needs M >= N)
        q, r = self._a(q), self._a(r)
        if n > m:  # wide: R = [R1 | Q^H Y]
            r = np.concatenate([r, self.H(q) @ x[:, m:]], axis=1)
        return q, r

    def det(self, x):
        return mp.det(self._m(x))

    def logabsdet(self, x):
        return mp.log(abs(mp.det(self._m(x))))

    def expm(self, x):
        return self._a(mp.expm(self._m(x)))

    def exp(self, x):
        return _mp_exp(x)

    def re_sum(self, x):
        return mp.re(np.sum(x))


# ---------------------------------------------------------------------------
# losses: real scalars of one matrix x, with constant parameters p
# ---------------------------------------------------------------------------
def _cube(w):
    return w * w * w


def _sq(w):
    return w * w


def _ident(w):
    return w * 1.0


def _inner(B, p, y, key="C"):
    """``Re <C, y> = Re sum(C * y)``."""
    return B.re_sum(B.const(p[key]) * y)


def _svd_recon_dec(B, x, p):
    u, s, vh = B.svd(x)
    return _inner(B, p, (u * s) @ vh)


def _svd_proj(B, x, p):
    u = B.svd(x)[0][:, p["lo"] : p["hi"]]
    return _inner(B, p, u @ B.H(u))


def _eigh_proj(B, x, p):
    v = B.eigh(B.herm(x))[1][:, p["lo"] : p["hi"]]
    return _inner(B, p, v @ B.H(v))


def _eigh_recon_dec(B, x, p):
    w, v = B.eigh(B.herm(x))
    return _inner(B, p, (v * w) @ B.H(v))


def _qr_lead(B, x, p):
    q, r = B.qr(x)
    return q[:, : p["k"]], r[: p["k"], :]


def _qr_proj_lead(B, x, p):
    q1, _ = _qr_lead(B, x, p)
    return _inner(B, p, q1 @ B.H(q1))


def _qr_recon_lead(B, x, p):
    q1, r1 = _qr_lead(B, x, p)
    return _inner(B, p, q1 @ r1)


def _qr_abs_lead(B, x, p):
    q1, r1 = _qr_lead(B, x, p)
    return _inner(B, p, B.abs2(q1)) + _inner(B, p, B.abs2(r1), "D")


def _qr_abs_all(B, x, p):
    q, r = B.qr(x)
    return _inner(B, p, B.abs2(q)) + _inner(B, p, B.abs2(r), "D")


def _qr_recon_full(B, x, p):
    q, r = B.qr(x)
    return _inner(B, p, q @ r)


def _det_re(B, x, p):
    return B.re_sum(B.const(p["c"]) * B.det(x))


LOSSES: dict[str, Callable[[Backend, Any, dict], Any]] = {
    # singular values and vectors
    "svd_sum_cube": lambda B, x, p: B.re_sum(_cube(B.svd(x)[1])),
    "svd_sum_sq": lambda B, x, p: B.re_sum(_sq(B.svd(x)[1])),
    "svd_nuclear": lambda B, x, p: B.re_sum(B.svd(x)[1]),
    "svd_proj": _svd_proj,  # U_B U_B^H, columns lo:hi
    "svd_polar": lambda B, x, p: _inner(B, p, B.polar_u(x)),  # U V^H
    "svd_recon": lambda B, x, p: _inner(B, p, B.svd_f(x, _ident)),  # U S V^H (= x)
    "svd_recon_sq": lambda B, x, p: _inner(B, p, B.svd_f(x, _sq)),  # U S^2 V^H
    "svd_recon_dec": _svd_recon_dec,  # U S V^H from svd in every framework
    # eigenvalues and vectors of the Hermitian part
    "eigh_trace_exp": lambda B, x, p: B.trace_funm_h(B.herm(x), B.exp),
    "eigh_proj": _eigh_proj,
    "eigh_recon": lambda B, x, p: _inner(B, p, B.funm_h(B.herm(x), _ident)),
    "eigh_recon_cube": lambda B, x, p: _inner(B, p, B.funm_h(B.herm(x), _cube)),
    "eigh_recon_exp": lambda B, x, p: _inner(B, p, B.funm_h(B.herm(x), B.exp)),
    "eigh_recon_dec": _eigh_recon_dec,
    # QR (phase-invariant losses: the frameworks' sign conventions differ)
    "qr_proj_lead": _qr_proj_lead,
    "qr_recon_lead": _qr_recon_lead,
    "qr_abs_lead": _qr_abs_lead,
    "qr_abs_all": _qr_abs_all,
    "qr_recon_full": _qr_recon_full,
    # determinants and the exponential
    "det_re": _det_re,
    "logabsdet": lambda B, x, p: B.logabsdet(x),
    "expm_inner": lambda B, x, p: _inner(B, p, B.expm(x)),
    "expm_sq": lambda B, x, p: B.re_sum(B.abs2(B.expm(x))) * 0.5,
}
