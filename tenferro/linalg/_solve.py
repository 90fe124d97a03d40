"""Linear solvers: ``triangular_solve``, ``solve``, ``inv`` (and, built on them,
``lstsq``, ``pinv``, ``lu`` in their own sections below).

Derivative rules: docs/ad/solve.md (Giles 2008). ``solve_p`` and
``triangular_solve_p`` are linear in the right-hand side; their transpose is a
solve with the transposed (not conjugated) matrix, because tidu transposes with
respect to the bilinear pairing ``Re sum(x * y)``.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg

from tidu import Zero, is_undefined

from .._errors import fmt_shape
from .._prim import as_operand, meta, primitive
from ._errors import LinalgShapeError, SingularMatrixError
from ._util import bind as _bind
from ._util import FAMILY, check_batch, check_matrix, lead, mm, mT, tril, triu, wrap


def _tf():
    import tenferro as tf  # noqa: PLC0415

    return tf


# ---------------------------------------------------------------------------
# triangular_solve
# ---------------------------------------------------------------------------
triangular_solve_p = primitive("triangular_solve", FAMILY)


def _op(x: np.ndarray, transpose_a: bool, conjugate_a: bool) -> np.ndarray:
    if transpose_a:
        x = np.swapaxes(x, -1, -2)
    return np.conj(x) if conjugate_a else x


@triangular_solve_p.def_impl
def _triangular_solve_impl(a, b, lower, left, transpose_a, conjugate_a, unit_diagonal):
    A, B = lead(a._data), lead(b._data)
    if not left:   # X op(A) = B  <=>  op(A)^T X^T = B^T
        B = np.swapaxes(B, -1, -2)
        transpose_a = not transpose_a
    if A.ndim == 2 and not (conjugate_a and not transpose_a):
        trans = 0 if not transpose_a else (2 if conjugate_a else 1)
        try:
            X = scipy.linalg.solve_triangular(A, B, trans=trans, lower=lower, unit_diagonal=unit_diagonal,
                                              check_finite=False)
        except np.linalg.LinAlgError:
            raise SingularMatrixError(
                f"triangular_solve: the triangular matrix a of shape {fmt_shape(a.shape)} is singular "
                "(zero on its diagonal)") from None
    else:
        T = np.tril(A) if lower else np.triu(A)
        if unit_diagonal:
            n = A.shape[-1]
            T = T.copy()
            T[..., np.arange(n), np.arange(n)] = 1
        diag = np.diagonal(T, axis1=-2, axis2=-1)
        if np.any(diag == 0):
            raise SingularMatrixError(
                f"triangular_solve: the triangular matrix a of shape {fmt_shape(a.shape)} is singular "
                "(zero on its diagonal)")
        X = np.linalg.solve(_op(T, transpose_a, conjugate_a), B)
    if not left:
        X = np.swapaxes(X, -1, -2)
    return wrap(X)


@triangular_solve_p.def_abstract_eval
def _triangular_solve_aval(a, b, lower, left, transpose_a, conjugate_a, unit_diagonal):
    check_matrix("triangular_solve", "a", a, square=True)
    check_matrix("triangular_solve", "b", b)
    if a.dtype is not b.dtype:
        raise LinalgShapeError(f"triangular_solve: a and b must have the same dtype, got {a} and {b}")
    check_batch("triangular_solve", ("a", "b"), (a, b), (2, 2))
    n = a.shape[0]
    k = b.shape[0] if left else b.shape[1]
    if k != n:
        side = "rows" if left else "columns"
        raise LinalgShapeError(
            f"triangular_solve: b {fmt_shape(b.shape)} must have {n} {side} to match a {fmt_shape(a.shape)} "
            f"(left={left})")
    return b


def _apply_op(x: Any, transpose_a: bool, conjugate_a: bool) -> Any:
    if transpose_a:
        x = mT(x)
    return _tf().conj(x) if conjugate_a else x


def _triangular_solve_jvp_a(da, out, a, b, lower, left, transpose_a, conjugate_a, unit_diagonal):
    tf = _tf()
    k = (-1 if lower else 1) if unit_diagonal else 0
    dam = tril(da, k) if lower else triu(da, k)
    opda = _apply_op(dam, transpose_a, conjugate_a)
    rhs = tf.negative(mm(opda, out) if left else mm(out, opda))
    return triangular_solve_p.bind(a, rhs, lower=lower, left=left, transpose_a=transpose_a,
                                   conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)


def _triangular_solve_jvp_b(db, out, a, b, **params):
    return triangular_solve_p.bind(a, db, **params)


triangular_solve_p.def_jvp_per_arg(_triangular_solve_jvp_a, _triangular_solve_jvp_b)


@triangular_solve_p.def_transpose
def _triangular_solve_transpose(ct, a, b, lower, left, transpose_a, conjugate_a, unit_diagonal):
    assert not is_undefined(a), "triangular_solve is linear in b only"
    if type(ct) is Zero:
        return [None, None]
    ct_b = triangular_solve_p.bind(a, ct, lower=lower, left=left, transpose_a=not transpose_a,
                                   conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return [None, ct_b]


def triangular_solve(a: Any, b: Any, *, lower: bool = False, left: bool = True,
                     unit_diagonal: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False) -> Any:
    """Solve ``op(a) @ x = b`` (``left=True``) or ``x @ op(a) = b`` for ``x``, where
    ``a`` ``[N, N, B...]`` is triangular (only its ``lower`` or upper triangle is
    read; with ``unit_diagonal`` its diagonal is taken as ones) and
    ``op(a) = a``, ``a^T`` (``transpose_a``), ``conj(a)`` or ``a^H`` (both).
    ``b`` is ``[N, K, B...]`` (left) or ``[K, N, B...]`` (right)."""
    a = as_operand("triangular_solve", a)
    b = as_operand("triangular_solve", b)
    a, b = _promote("triangular_solve", a, b)
    return _bind(triangular_solve_p, a, b, lower=bool(lower), left=bool(left), transpose_a=bool(transpose_a),
                                   conjugate_a=bool(conjugate_a), unit_diagonal=bool(unit_diagonal))


def _promote(op: str, a: Any, b: Any) -> tuple[Any, Any]:
    from .._dtypes import result_type  # noqa: PLC0415
    from .._structural import convert_element_type  # noqa: PLC0415

    da, db = meta(a)[1], meta(b)[1]
    if da is db:
        return a, b
    d = result_type(da, db)
    return convert_element_type(a, d), convert_element_type(b, d)


# ---------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------
solve_p = primitive("solve", FAMILY)


@solve_p.def_impl
def _solve_impl(a, b):
    try:
        x = np.linalg.solve(lead(a._data), lead(b._data))
    except np.linalg.LinAlgError:
        raise SingularMatrixError(
            f"solve: the matrix a of shape {fmt_shape(a.shape)} is singular (b has shape {fmt_shape(b.shape)})"
        ) from None
    return wrap(x)


@solve_p.def_abstract_eval
def _solve_aval(a, b):
    check_matrix("solve", "a", a, square=True)
    check_matrix("solve", "b", b)
    check_batch("solve", ("a", "b"), (a, b), (2, 2))
    if b.shape[0] != a.shape[0]:
        raise LinalgShapeError(f"solve: b {fmt_shape(b.shape)} must have {a.shape[0]} rows to match "
                               f"a {fmt_shape(a.shape)}")
    if a.dtype is not b.dtype:
        raise LinalgShapeError(f"solve: a and b must have the same dtype, got {a} and {b}")
    return b


@solve_p.def_jvp
def _solve_jvp(primals, tangents):
    # dX = A^{-1} (dB - dA X): one solve for both tangents (one transposed solve in reverse)
    tf = _tf()
    (a, b), (da, db) = primals, tangents
    x = solve_p.bind(a, b)
    if type(da) is Zero:
        rhs = db
    else:
        rhs = tf.negative(mm(da, x)) if type(db) is Zero else tf.subtract(db, mm(da, x))
    return x, solve_p.bind(a, rhs)


@solve_p.def_transpose
def _solve_transpose(ct, a, b):
    assert not is_undefined(a), "solve is linear in b only"
    if type(ct) is Zero:
        return [None, None]
    return [None, solve_p.bind(mT(a), ct)]


def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b`` for square ``a`` ``[N, N, B...]``; ``b`` is ``[N, K, B...]``
    or, for one right-hand side per matrix, ``[N, B...]`` (then ``x`` has b's shape).
    Batch dimensions must match exactly. Raises SingularMatrixError for singular ``a``."""
    tf = _tf()
    a = as_operand("solve", a)
    b = as_operand("solve", b)
    a, b = _promote("solve", a, b)
    sa, sb = meta(a)[0], meta(b)[0]
    vector = len(sb) == len(sa) - 1 and len(sa) >= 2
    if vector:
        b = tf.reshape(b, (sb[0], 1) + tuple(sb[1:]))
    x = _bind(solve_p, a, b)
    return tf.reshape(x, tuple(sb)) if vector else x


# ---------------------------------------------------------------------------
# inv
# ---------------------------------------------------------------------------
inv_p = primitive("inv", FAMILY)


@inv_p.def_impl
def _inv_impl(a):
    try:
        return wrap(np.linalg.inv(lead(a._data)))
    except np.linalg.LinAlgError:
        raise SingularMatrixError(f"inv: the matrix a of shape {fmt_shape(a.shape)} is singular") from None


@inv_p.def_abstract_eval
def _inv_aval(a):
    check_matrix("inv", "a", a, square=True)
    return a


def _inv_jvp(da, out, a):
    return _tf().negative(mm(mm(out, da), out))   # d(A^-1) = -A^-1 dA A^-1


inv_p.def_jvp_per_arg(_inv_jvp)


def inv(a: Any) -> Any:
    """Inverse of each square matrix of ``a`` ``[N, N, B...]``."""
    return _bind(inv_p, as_operand("inv", a))
