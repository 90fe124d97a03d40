"""Principal square root ``sqrtm`` of general (non-Hermitian) matrices, and the
Sylvester solver ``sylvester_p`` its derivatives are written with.

``sqrtm_p(a)`` is SciPy's ``sqrtm`` (blocked Schur method, Deadman, Higham and
Ralha 2013). Its Fréchet derivative ``L = dX`` at ``X = sqrtm(A)`` solves
``X L + L X = dA`` (Higham, *Functions of Matrices*, 2008, §6.1, eq. (6.8)):
``sylvester_p(x, c)``, the solution ``Y`` of ``x Y + Y x = c``, linear in ``c``
with transpose ``sylvester_p(x^T, .)`` (bilinear pairing), and differentiable in
``x``: ``x dY + dY x = -(dx Y + Y dx)``, again ``sylvester_p``. So every order of
``sqrtm`` is exact, including at repeated eigenvalues; at a singular ``A`` (a zero
eigenvalue of ``X``) the equation is singular and differentiating raises
:class:`SingularMatrixError`. One Schur form of ``x`` and LAPACK ``trsyl`` per
solve (SciPy's ``solve_sylvester`` computes two, and returns garbage silently for
a singular equation). Derivations: docs/ad/funm.md.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import scipy.linalg

from tidu import is_undefined

from .._aval import xp_of
from .._dispatch import dispatchable
from .._errors import TenferroValueError, fmt_shape
from .._registry import primitive
from .._batching import trailing_batch
from ._divdiff import host
from ._errors import DomainError, LinalgShapeError, SingularMatrixError
from ._lapack import _double
from ._util import FAMILY, bind as _bind, check_matrix, lead, operand, wrap
from ._matops import mm, mT
from .. import _ops as tf

__all__ = ["sqrtm", "sqrtm_p", "sylvester_p", "per_matrix", "real_principal"]


def per_matrix(fn: Callable[[np.ndarray], np.ndarray], *arrays: np.ndarray, dtype: Any) -> Any:
    """``fn`` on each matrix of the trailing-batch arrays (NumPy, in double
    precision; device arrays go through the host), as a canonical tensor of ``dtype``."""
    xs = [lead(host(x)) for x in arrays]
    out = np.empty(xs[0].shape, dtype=dtype)
    if xs[0].size:
        for idx in np.ndindex(xs[0].shape[:-2]):
            out[idx] = fn(*[_double(x[idx]) for x in xs])
    return wrap(out if type(arrays[0]) is np.ndarray else xp_of(arrays[0]).asarray(out))


def real_principal(name: str, r: np.ndarray, real: bool, what: str) -> np.ndarray:
    """SciPy's result ``r`` checked: finite, and real when the input is real (a real
    matrix with an eigenvalue on the closed negative real axis has no real
    principal ``what``: typed error naming the fix)."""
    if not np.isfinite(r).all():
        raise DomainError(
            f"{name}: the matrix has no finite principal {what} (it is singular"
            f"{' or has a nilpotent part' if what == 'square root' else ''})"
        )
    if real and np.iscomplexobj(r):
        scale = max(float(np.max(np.abs(r))), np.finfo(float).tiny)
        if np.max(np.abs(r.imag)) > 100 * r.shape[0] * np.finfo(float).eps * scale:
            raise DomainError(
                f"{name}: the principal {what} of this real matrix is not real (it has an eigenvalue "
                "on the negative real axis); convert the input to complex for the complex result"
            )
        r = r.real
    return r


def _sqrtm_one(x: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():  # singular input: SciPy warns; the result is checked instead
        warnings.simplefilter("ignore")
        r = scipy.linalg.sqrtm(x)
    return real_principal("sqrtm", r, not np.iscomplexobj(x), "square root")


sqrtm_p = primitive("sqrtm", FAMILY)
sqrtm_p.def_batch(trailing_batch(sqrtm_p))  # trailing batch axes: tenferro._batching


@sqrtm_p.def_impl
def _sqrtm_impl(a):
    return per_matrix(_sqrtm_one, a._data, dtype=a._data.dtype)


@sqrtm_p.def_abstract_eval
def _sqrtm_aval(a):
    check_matrix("sqrtm", "a", a, square=True)
    return a


def _sqrtm_jvp(da, out, a):
    return sylvester_p.bind(out, da)


sqrtm_p.def_jvp_per_arg(_sqrtm_jvp)


sylvester_p = primitive("sylvester", FAMILY)
sylvester_p.def_batch(trailing_batch(sylvester_p))  # trailing batch axes: tenferro._batching


def _sylvester_one(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``Y`` with ``x Y + Y x = c`` through the Schur form ``x = Z T Z^H`` and
    LAPACK ``trsyl`` on ``T Y' + Y' T = Z^H c Z``."""
    cplx = np.iscomplexobj(x) or np.iscomplexobj(c)
    if cplx:
        x, c = x.astype(np.complex128), c.astype(np.complex128)
    t, z = scipy.linalg.schur(x, output="complex" if cplx else "real")
    f = z.conj().T @ c @ z
    (trsyl,) = scipy.linalg.get_lapack_funcs(("trsyl",), (t, f))
    y, scale, info = trsyl(t, t, f, isgn=1)
    if info < 0:
        raise ValueError(f"trsyl: illegal value in argument {-info}")
    if info == 1 or not np.isfinite(y).all():
        raise SingularMatrixError(
            "sqrtm: the derivative does not exist: the Sylvester equation X L + L X = E is "
            "singular (X = sqrtm(A) has eigenvalues summing to 0: A is singular)"
        )
    return z @ (y / scale) @ z.conj().T


@sylvester_p.def_impl
def _sylvester_impl(x, c):
    return per_matrix(_sylvester_one, x._data, c._data, dtype=c._data.dtype)


@sylvester_p.def_abstract_eval
def _sylvester_aval(x, c):
    check_matrix("sylvester", "x", x, square=True)
    if tuple(c.shape) != tuple(x.shape) or c.dtype is not x.dtype:
        raise LinalgShapeError(
            f"sylvester: c must have x's shape {fmt_shape(x.shape)} and dtype {x.dtype.name}, "
            f"got {fmt_shape(c.shape)} {c.dtype.name}"
        )
    return x


def _sylvester_jvp_x(dx, out, x, c):
    return tf.negative(sylvester_p.bind(x, tf.add(mm(dx, out), mm(out, dx))))


def _sylvester_jvp_c(dc, out, x, c):
    return sylvester_p.bind(x, dc)


sylvester_p.def_jvp_per_arg(_sylvester_jvp_x, _sylvester_jvp_c)


@sylvester_p.def_transpose
def _sylvester_transpose(ct, x, c):
    if is_undefined(x):
        raise TenferroValueError("sylvester: the solution is linear in the right-hand side only, not in x")
    return [None, sylvester_p.bind(mT(x), ct)]


@dispatchable
def sqrtm(a: Any) -> Any:
    """Principal square root of each matrix of ``a`` ``[N, N, B...]`` (SciPy's
    ``sqrtm``; eigenvalues of the result in the open right half-plane).

    Real input gives a real result; if the principal root is not real (an eigenvalue
    on the negative real axis) :class:`DomainError` asks for complex input (SciPy
    would switch to complex). A singular matrix without a finite root raises
    :class:`DomainError`. Derivatives of every order through the Sylvester equation
    ``X L + L X = dA`` (Higham 2008, §6.1), exact at repeated eigenvalues; at a
    singular matrix differentiating raises :class:`SingularMatrixError`."""
    return _bind(sqrtm_p, operand("sqrtm", "a", a))
