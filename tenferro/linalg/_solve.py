"""Linear solvers: ``triangular_solve``, ``solve``, ``inv`` (and, built on them,
``lstsq``, ``pinv``, ``lu`` in their own sections below).

Derivative rules: docs/ad/solve.md (Giles 2008). ``solve_p`` and
``triangular_solve_p`` are linear in the right-hand side; their transpose is a
solve with the transposed (not conjugated) matrix, because tidu transposes with
respect to the bilinear pairing ``Re sum(x * y)``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import scipy.linalg
import scipy.linalg.blas

from tidu import MissingRuleError, Zero, is_undefined

from .._dispatch import dispatchable
from .._errors import TenferroValueError, fmt_shape
from .._aval import aval_of_operand, fortran, meta, xp_of
from .._operands import check_placement
from .._registry import primitive
from .._batching import batch_last, rhs_batch, trailing_batch
from .._tensor import Tensor
from ._errors import LinalgShapeError, SingularMatrixError
from . import _device
from ._util import FAMILY, bind as _bind, check_batch, check_matrix, lead, operand, wrap
from ._lapack import _double, _lapack_funcs, lapack
from ._matops import mm, mT
from .. import _ops as tf
from .._dtypes import result_type
from .._structural import convert_element_type, reshape_p


# ---------------------------------------------------------------------------
# triangular_solve
# ---------------------------------------------------------------------------
def _reshape(x, shape):
    return reshape_p.bind(x, new_shape=tuple(shape))


triangular_solve_p = primitive("triangular_solve", FAMILY)
triangular_solve_p.def_batch(rhs_batch(triangular_solve_p, 1, _reshape))  # trailing batch; a vector rhs per example


@triangular_solve_p.def_impl
def _triangular_solve_impl(a, b, lower, left, transpose_a, conjugate_a, unit_diagonal):
    # BLAS trsm on each matrix of the batch, in place in a column-major copy of b:
    # every batch slice of the canonical layout is a column-major matrix, so no
    # operand is transposed or copied (NumPy has no batched triangular solve).
    A, B = a._data, b._data
    n = A.shape[0]
    if not unit_diagonal and n and not np.all(np.diagonal(A, axis1=0, axis2=1)):
        raise SingularMatrixError(
            f"triangular_solve: the triangular matrix a of shape {fmt_shape(a.shape)} is singular "
            "(zero on its diagonal)"
        )
    if type(A) is not np.ndarray:
        if B.size == 0:
            return Tensor._wrap(B.copy(order="F"))
        return Tensor._wrap(_device.triangular_solve(A, B, lower, left, transpose_a, conjugate_a, unit_diagonal))
    conj_only = conjugate_a and not transpose_a  # conj(A) x = b  <=>  A conj(x) = conj(b)
    out = np.array(np.conj(B) if conj_only else B, order="F", copy=True)
    if out.size == 0:
        return Tensor._wrap(out)
    trans = 0 if not transpose_a else (2 if conjugate_a else 1)
    trsm = scipy.linalg.blas.get_blas_funcs("trsm", (A, out))
    A3 = A.reshape((n, n, -1), order="F")
    X3 = out.reshape(out.shape[:2] + (-1,), order="F")
    side = 0 if left else 1
    for i in range(A3.shape[2]):
        xi = X3[:, :, i]
        r = trsm(
            1.0, A3[:, :, i], xi, side=side, lower=int(lower), trans_a=trans, diag=int(unit_diagonal), overwrite_b=1
        )
        if r is not xi and not np.shares_memory(r, xi):  # f2py solved in a temporary
            xi[...] = r
    if conj_only:
        np.conjugate(out, out=out)
    return Tensor._wrap(out)


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
            f"(left={left})"
        )
    return b


def _apply_op(x: Any, transpose_a: bool, conjugate_a: bool) -> Any:
    if transpose_a:
        x = mT(x)
    return tf.conj(x) if conjugate_a else x


def _triangular_solve_jvp_a(da, out, a, b, lower, left, transpose_a, conjugate_a, unit_diagonal):
    k = (-1 if lower else 1) if unit_diagonal else 0
    dam = tf.tril(da, k) if lower else tf.triu(da, k)
    opda = _apply_op(dam, transpose_a, conjugate_a)
    rhs = tf.negative(mm(opda, out) if left else mm(out, opda))
    return triangular_solve_p.bind(
        a, rhs, lower=lower, left=left, transpose_a=transpose_a, conjugate_a=conjugate_a, unit_diagonal=unit_diagonal
    )


def _triangular_solve_jvp_b(db, out, a, b, **params):
    return triangular_solve_p.bind(a, db, **params)


triangular_solve_p.def_jvp_per_arg(_triangular_solve_jvp_a, _triangular_solve_jvp_b)


@triangular_solve_p.def_transpose
def _triangular_solve_transpose(ct, a, b, lower, left, transpose_a, conjugate_a, unit_diagonal):
    if is_undefined(a):
        raise TenferroValueError(
            "triangular_solve: the transpose exists only in the right-hand side b "
            "(triangular_solve is linear in b, not in a)"
        )
    ct_b = triangular_solve_p.bind(
        a, ct, lower=lower, left=left, transpose_a=not transpose_a, conjugate_a=conjugate_a, unit_diagonal=unit_diagonal
    )
    return [None, ct_b]


def triangular_solve(
    a: Any,
    b: Any,
    *,
    lower: bool = False,
    left: bool = True,
    unit_diagonal: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
) -> Any:
    """Solve ``op(a) @ x = b`` (``left=True``) or ``x @ op(a) = b`` for ``x``, where
    ``a`` ``[N, N, B...]`` is triangular (only its ``lower`` or upper triangle is
    read; with ``unit_diagonal`` its diagonal is taken as ones) and
    ``op(a) = a``, ``a^T`` (``transpose_a``), ``conj(a)`` or ``a^H`` (both).
    ``b`` is ``[N, K, B...]`` (left) or ``[K, N, B...]`` (right)."""
    a = operand("triangular_solve", "a", a)
    b = operand("triangular_solve", "b", b)
    check_matrix("triangular_solve", "a", aval_of_operand(a), square=True)  # before promotion: no int matrix
    a, b = _promote("triangular_solve", a, b)
    return _bind(
        triangular_solve_p,
        a,
        b,
        lower=bool(lower),
        left=bool(left),
        transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a),
        unit_diagonal=bool(unit_diagonal),
    )


def _promote(op: str, a: Any, b: Any) -> tuple[Any, Any]:
    check_placement(op, a, b)
    da, db = meta(a)[1], meta(b)[1]
    if da is db:
        return a, b
    d = result_type(da, db)
    return convert_element_type(a, d), convert_element_type(b, d)


# ---------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------
solve_p = primitive("solve", FAMILY)
solve_p.def_batch(rhs_batch(solve_p, 1, _reshape))  # trailing batch; a vector rhs per example
"""``solve_p(a, b, transposed)``: ``x`` with ``a x = b``, or ``a^T x = b`` when
``transposed`` (the transpose rule's solve: no copy of ``a^T`` is made)."""


_EPS64 = float(np.finfo(np.float64).eps)

_SMALL = 32
"""Batches of matrices up to this size are checked from their inverse, in NumPy's batched
C loop (0.4 us a 2 x 2 matrix, 30 us a 32 x 32 one): cheaper there than a per-matrix
``getrf``/``gecon``/``getrs`` (~12 us of call overhead each, 28 us at 32 x 32)."""


@solve_p.def_impl
def _solve_impl(a, b, transposed):
    A, B = a._data, b._data
    host = type(A) is np.ndarray and A.size > 0 and B.size > 0
    if host and (A.ndim == 2 or A.shape[0] > _SMALL):
        return Tensor._wrap(_lu_solve_checked(A, B, transposed, b.shape))
    la_ = lead(A)
    if transposed:
        la_ = np.swapaxes(la_, -1, -2)  # a view: the gufunc copies through strides
    try:
        (x,) = lapack("solve", "solve", [la_, lead(B)], [(B.shape, B.dtype, 2)])
    except np.linalg.LinAlgError:
        raise _singular("solve", a.shape, b.shape) from None
    if host:  # a batch of small matrices: the 1-norm condition number from the inverse
        inv = np.moveaxis(np.linalg.inv(lead(A)), (-2, -1), (0, 1))  # trailing-batch view
        if _numerically_singular_inverse(A, inv, _solver_eps(A)):
            raise _numerically_singular("solve", a.shape, b.shape)
    return Tensor._wrap(x)


def _lu_solve_checked(A: np.ndarray, B: np.ndarray, transposed: bool, b_shape: tuple) -> np.ndarray:
    """``op(A)^{-1} B`` for each matrix of the non-empty host arrays ``A`` ``[N, N, B...]``,
    ``B`` ``[N, K, B...]``: LAPACK ``getrf``/``getrs`` (``gesv``'s two steps; in double for
    single precision, as NumPy), refused at an exactly zero pivot (``getrf``) or where
    ``gecon``'s estimate of the 1-norm condition number says numerically singular."""
    n, k = A.shape[0], B.shape[1]
    if A.ndim == 2 and B.ndim == 2:  # one matrix: no batch axis to loop over
        A2, B2 = _double(A), _double(B)
        getrf, getrs, gecon = _lapack_funcs(("getrf", "getrs", "gecon"), A2.dtype.char)
        lu, piv, info = getrf(A2)
        if info > 0:
            raise _singular("solve", A.shape, b_shape)
        _check_lu_condition(gecon, A2, lu, _EPS64, A.shape, b_shape)
        return getrs(lu, piv, B2, trans=int(transposed))[0].astype(B.dtype, copy=False)
    A3 = _double(A).reshape((n, n, -1), order="F")
    B3 = _double(B).reshape((n, k, -1), order="F")
    getrf, getrs, gecon = _lapack_funcs(("getrf", "getrs", "gecon"), A3.dtype.char)
    out = np.empty(B3.shape, A3.dtype, order="F")
    for i in range(A3.shape[2]):
        lu, piv, info = getrf(A3[:, :, i])
        if info > 0:
            raise _singular("solve", A.shape, b_shape)
        _check_lu_condition(gecon, A3[:, :, i], lu, _EPS64, A.shape, b_shape)
        out[:, :, i] = getrs(lu, piv, B3[:, :, i], trans=int(transposed))[0]
    return out.reshape(B.shape, order="F").astype(B.dtype, copy=False)


def _check_lu_condition(gecon: Any, a: np.ndarray, lu: np.ndarray, eps: float, a_shape: tuple, b_shape: tuple) -> None:
    """Raise unless ``a`` (one matrix, its LU factors ``lu``) passes the rank rule of
    :func:`_numerically_singular_inverse`, with LAPACK's ``O(N^2)`` estimate of
    ``||a^{-1}||_1`` (``gecon``) in place of the inverse."""
    rcond, _ = gecon(lu, float(np.abs(a).sum(axis=0).max()))
    # the rule's cond * N * eps >= 1 (or cond not finite) with cond = 1 / rcond, on Python floats
    if not (rcond > 0.0 and math.isfinite(rcond) and rcond > a.shape[0] * eps):
        raise _numerically_singular("solve", a_shape, b_shape)


def _singular(op: str, a_shape: tuple, b_shape: tuple) -> SingularMatrixError:
    return SingularMatrixError(
        f"{op}: the matrix a of shape {fmt_shape(a_shape)} is singular (b has shape {fmt_shape(b_shape)})"
    )


def _numerically_singular(op: str, a_shape: tuple, b_shape: tuple | None) -> SingularMatrixError:
    which = "a matrix of the batch a" if len(a_shape) > 2 else "the matrix a"
    rhs = "" if b_shape is None else f" (b has shape {fmt_shape(b_shape)})"
    what = "the inverse" if b_shape is None else "the solution"
    return SingularMatrixError(
        f"{op}: {which} of shape {fmt_shape(a_shape)}{rhs} is numerically singular, ||a||_1 ||a^-1||_1 >= "
        f"1 / (N eps): {what} would be rounding noise with no correct digit; use tenferro.linalg.lstsq(a, b) "
        "(minimum-norm least squares) or tenferro.linalg.pinv(a) instead"
    )


def _solver_eps(x: Any) -> float:
    """The unit roundoff solve/inv compute in: double on the CPU (single precision is
    computed in double, as NumPy does), the dtype's own on a GPU."""
    return float(np.finfo(np.float64 if type(x) is np.ndarray else x.dtype).eps)


def _numerically_singular_condition(xp: Any, cond: Any, n: int, eps: float) -> bool:
    """The rank rule of solve, inv and slogdet's derivative: some condition number
    ``cond`` (1-norm) is not finite or ``>= 1 / (N eps)`` (numerically singular as
    NumPy's ``matrix_rank``, up to the norm)."""
    return bool(xp.any(~xp.isfinite(cond) | (cond * n * eps >= 1)))


def _numerically_singular_inverse(x: Any, x_inv: Any, eps: float | None = None) -> bool:
    """Some matrix of ``x`` (trailing batch) has ``||A||_1 ||A^{-1}||_1 >= 1 / (N eps)``,
    from the inverse already computed (O(N^2)): numerically singular, as
    :func:`._lapack.numerically_singular` but without an SVD. LAPACK's LU reports only
    exact zero pivots; a complex matrix that is exactly singular usually has none.
    ``eps``: the unit roundoff of the computation (default: that of ``x``'s dtype)."""
    if x is None or x_inv is None or not x.size:
        return False
    xp = xp_of(x)
    norm1 = xp.max(xp.sum(xp.abs(x), axis=0), axis=0)
    inv_norm1 = xp.max(xp.sum(xp.abs(x_inv), axis=0), axis=0)
    eps = float(np.finfo(x.dtype).eps) if eps is None else eps
    return _numerically_singular_condition(xp, norm1 * inv_norm1, x.shape[0], eps)


@solve_p.def_abstract_eval
def _solve_aval(a, b, transposed):
    check_matrix("solve", "a", a, square=True)
    check_matrix("solve", "b", b)
    check_batch("solve", ("a", "b"), (a, b), (2, 2))
    if b.shape[0] != a.shape[0]:
        raise LinalgShapeError(
            f"solve: b {fmt_shape(b.shape)} must have {a.shape[0]} rows to match a {fmt_shape(a.shape)}"
        )
    if a.dtype is not b.dtype:
        raise LinalgShapeError(f"solve: a and b must have the same dtype, got {a} and {b}")
    return b


@solve_p.def_jvp
def _solve_jvp(primals, tangents, transposed):
    # dX = op(A)^{-1} (dB - op(dA) X): one solve for both tangents (one transposed solve in reverse)
    (a, b), (da, db) = primals, tangents
    if type(a) is Tensor and a._data.ndim == 2:
        # a is a constant here: factor it once and carry the LU factors as the residual
        # of the (linear) tangent solve, whose transpose reuses them (no refactorization)
        lu, piv = _lu_factor(a, b)
        x = lu_solve_p.bind(lu, piv, b, transposed=transposed)

        def op_inv(r):
            return lu_solve_p.bind(lu, piv, r, transposed=transposed)  # noqa: E306,E704
    else:  # batched, or a traced (higher orders): differentiate solve_p itself
        x = solve_p.bind(a, b, transposed=transposed)

        def op_inv(r):
            return solve_p.bind(a, r, transposed=transposed)  # noqa: E306,E704

    if type(da) is Zero:
        rhs = db
    else:
        dax = mm(mT(da), x) if transposed else mm(da, x)
        rhs = tf.negative(dax) if type(db) is Zero else tf.subtract(db, dax)
    return x, op_inv(rhs)


@solve_p.def_transpose
def _solve_transpose(ct, a, b, transposed):
    if is_undefined(a):
        raise TenferroValueError(
            "solve: the transpose exists only in the right-hand side b (solve is linear in b, not in a)"
        )
    return [None, solve_p.bind(a, ct, transposed=not transposed)]


# ---------------------------------------------------------------------------
# lu_solve: a solve with given LU factors (the residual of solve's JVP)
# ---------------------------------------------------------------------------
lu_solve_p = primitive("lu_solve", FAMILY)
"""``lu_solve_p(lu, piv, b, transposed)``: ``A^{-1} b`` (``A^{-T} b`` when
``transposed``) from LAPACK getrf factors ``(lu, piv)`` of one matrix ``A``
(``scipy.linalg.lu_factor``). Linear in ``b``; the factors are constants."""


def _lu_factor(a: Tensor, b: Any) -> tuple[Tensor, Tensor]:
    A = a._data
    if type(A) is not np.ndarray:
        if A.size == 0:  # cuSOLVER refuses empty matrices
            return Tensor._wrap(A.copy(order="F")), Tensor._wrap(xp_of(A).zeros((0,), np.int32))
        lu, piv = _device.lu_factor(A)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # exact zero pivot: raised below
            lu, piv = scipy.linalg.lu_factor(A, check_finite=False)
    if A.size and not np.all(np.diagonal(lu)):
        raise _singular("solve", A.shape, tuple(meta(b)[0]))
    if type(A) is np.ndarray and A.size:  # the factors are in A's precision (SciPy keeps single)
        (gecon,) = _lapack_funcs(("gecon",), lu.dtype.char)
        _check_lu_condition(gecon, A, lu, float(np.finfo(lu.dtype).eps), A.shape, tuple(meta(b)[0]))
    return Tensor._wrap(fortran(lu)), Tensor._wrap(piv)


@lu_solve_p.def_batch
def _lu_solve_batch(axis_size, args, dims, transposed):
    # shared factors (a constant matrix, the usual case): the examples' right-hand sides are
    # more columns of one solve; per-example factors have no rule
    (lu, piv, b), (dlu, dpiv, db) = args, dims
    if dlu is not None or dpiv is not None:
        raise MissingRuleError("vmap: primitive 'lu_solve' has no batching rule for per-example LU factors")
    b = batch_last(b, db, axis_size)
    n, k, _ = meta(b)[0]
    out = lu_solve_p.bind(lu, piv, _reshape(b, (n, k * axis_size)), transposed=transposed)
    return _reshape(out, (n, k, axis_size)), 2


@lu_solve_p.def_impl
def _lu_solve_impl(lu, piv, b, transposed):
    B = b._data
    if B.size == 0:
        return Tensor._wrap(xp_of(B).zeros(B.shape, B.dtype, order="F"))
    if type(B) is not np.ndarray:
        return Tensor._wrap(fortran(_device.lu_solve(lu._data, piv._data, B, 1 if transposed else 0)))
    x = scipy.linalg.lu_solve((lu._data, piv._data), B, trans=1 if transposed else 0, check_finite=False)
    return Tensor._wrap(fortran(x))


@lu_solve_p.def_abstract_eval
def _lu_solve_aval(lu, piv, b, transposed):
    n = lu.shape[0]
    if (
        len(lu.shape) != 2
        or lu.shape[1] != n
        or piv.shape != (n,)
        or len(b.shape) != 2
        or b.shape[0] != n
        or b.dtype is not lu.dtype
    ):
        raise LinalgShapeError(
            f"lu_solve: expected LU factors [N, N], pivots [N] and b [N, K] of the factors' "
            f"dtype, got {lu}, {piv} and {b}"
        )
    return b


def _lu_solve_jvp_b(db, out, lu, piv, b, transposed):
    return lu_solve_p.bind(lu, piv, db, transposed=transposed)


lu_solve_p.def_jvp_per_arg(None, None, _lu_solve_jvp_b)


@lu_solve_p.def_transpose
def _lu_solve_transpose(ct, lu, piv, b, transposed):
    # bilinear pairing Re sum(x * y): A^{-1} transposes to A^{-T} (not A^{-H})
    if is_undefined(lu) or is_undefined(piv):
        raise TenferroValueError("lu_solve: the transpose exists only in the right-hand side b")
    return [None, None, lu_solve_p.bind(lu, piv, ct, transposed=not transposed)]


@dispatchable
def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b`` for square ``a`` ``[N, N, B...]``; ``b`` is ``[N, K, B...]``
    or, for one right-hand side per matrix, ``[N, B...]`` (then ``x`` has b's shape).
    Batch dimensions must match exactly.

    Raises SingularMatrixError where some matrix of ``a`` is singular: an exactly zero
    LU pivot, or numerically singular, ``||a||_1 ||a^-1||_1 >= 1 / (N eps)`` (LAPACK's
    ``O(N^2)`` ``gecon`` estimate from the LU factors; for batches of matrices up to 32 x 32,
    the inverse): the answer would have no correct digit; use :func:`lstsq` or
    :func:`pinv` for the minimum-norm least-squares solution. Merely ill-conditioned
    systems (condition number 1e12, say) are solved. The check runs where the values
    are: eagerly, or under ``tenferro.jit`` when the compiled program runs (not while it
    is traced). On a GPU only cuSOLVER's exact zero pivots are reported."""
    a = operand("solve", "a", a)
    b = operand("solve", "b", b)
    check_matrix("solve", "a", aval_of_operand(a), square=True)  # before promotion: no int matrix
    a, b = _promote("solve", a, b)
    sa, sb = meta(a)[0], meta(b)[0]
    vector = len(sb) == len(sa) - 1 and len(sa) >= 2
    if vector:
        b = tf.reshape(b, (sb[0], 1) + tuple(sb[1:]))
    x = _bind(solve_p, a, b, transposed=False)
    return tf.reshape(x, tuple(sb)) if vector else x


# ---------------------------------------------------------------------------
# inv
# ---------------------------------------------------------------------------
inv_p = primitive("inv", FAMILY)
inv_p.def_batch(trailing_batch(inv_p))  # trailing batch axes: tenferro._batching


@inv_p.def_impl
def _inv_impl(a):
    try:
        x = lead(a._data)
        out = wrap(np.linalg.inv(x) if type(x) is np.ndarray else _device.run("inv", np.linalg.inv, x))
    except np.linalg.LinAlgError:
        raise SingularMatrixError(f"inv: the matrix a of shape {fmt_shape(a.shape)} is singular") from None
    if _numerically_singular_inverse(a._data, out._data, _solver_eps(a._data)):  # O(N^2)
        raise _numerically_singular("inv", a.shape, None)
    return out


@inv_p.def_abstract_eval
def _inv_aval(a):
    check_matrix("inv", "a", a, square=True)
    return a


def _inv_jvp(da, out, a):
    return tf.negative(mm(mm(out, da), out))  # d(A^-1) = -A^-1 dA A^-1


inv_p.def_jvp_per_arg(_inv_jvp)


@dispatchable
def inv(a: Any) -> Any:
    """Inverse of each square matrix of ``a`` ``[N, N, B...]``.

    Raises SingularMatrixError where some matrix is singular: an exactly zero LU pivot,
    or numerically singular, ``||a||_1 ||a^-1||_1 >= 1 / (N eps)`` from the inverse just
    computed (``O(N^2)``): it would have no correct digit; use :func:`pinv` (or
    :func:`lstsq`) instead. Merely ill-conditioned matrices (condition number 1e12, say)
    are inverted. The check runs where the values are: eagerly, or under
    ``tenferro.jit`` when the compiled program runs (not while it is traced)."""
    return _bind(inv_p, operand("inv", "a", a))
