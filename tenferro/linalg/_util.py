"""Shared helpers of :mod:`tenferro.linalg`.

Two kinds of helpers live here:

* **impl side** (NumPy or CuPy arrays): argument checks with typed errors,
  :func:`lapack` (NumPy's public batched LAPACK wrappers, CuPy's for device
  arrays), and moving the trailing batch dimensions ``[M, N, B...]`` to the
  leading position those wrappers expect (``np.moveaxis`` is a view; NumPy loops
  over the batch in C) and back to canonical column-major storage.
* **rule side** (tenferro ops, so that rules can be differentiated again):
  batched matrix products :func:`mm`, conjugate transposes :func:`mH`, identity
  masks, the inverses of spectral gaps :func:`gap_inverse` (exact outside the
  degeneracy threshold, or Lorentzian-broadened on request), and the gauge check
  primitive :data:`gauge_check_p` with its degeneracy check.

All rule-side helpers work on the trailing-batch layout: matrix axes 0 and 1,
batch axes 2, 3, ...
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Sequence

import numpy as np
import scipy.linalg

import tidu
from tidu import Tracer, Zero
from tidu._graph import GraphTracer

from .._dtypes import DType
from .._errors import fmt_shape
from .._structural import slice_embed_p, slice_p
from .._placement import CPU, array_module_of_placement, device_scope
from .._aval import aval_of_operand, fortran, meta, placement_of_operand, TensorType, xp_of
from .._operands import as_operand
from .._registry import primitive
from .._tensor import Tensor

from .. import _ops as tf
from . import _device
from ._config import config
from ._errors import (
    DegeneracyError, DegeneracyWarning, GaugeError, GaugeWarning, LinalgDTypeError, LinalgShapeError, NonFiniteError,
)
from .._structural import broadcast_in_dim_p, convert_element_type
from .._compare import less_equal

FAMILY = "linalg"


# ---------------------------------------------------------------------------
# impl side
# ---------------------------------------------------------------------------
def check_matrix(op: str, name: str, a: TensorType, *, square: bool = False) -> None:
    """Raise typed errors unless ``a`` is a float/complex (batch of) matrix."""
    if not a.dtype.is_floating:
        raise LinalgDTypeError(f"{op}: {name} must be float32/64 or complex64/128, got dtype {a.dtype.name}")
    if len(a.shape) < 2:
        raise LinalgShapeError(
            f"{op}: {name} must be a matrix [M, N] or a batch of matrices [M, N, B...] "
            f"(trailing batch dimensions), got shape {fmt_shape(a.shape)}"
        )
    if square and a.shape[0] != a.shape[1]:
        raise LinalgShapeError(
            f"{op}: {name} must be square ([N, N, B...]), got shape {fmt_shape(a.shape)} "
            f"({a.shape[0]} x {a.shape[1]} matrices)"
        )


def check_batch(op: str, names: Sequence[str], avals: Sequence[TensorType], cores: Sequence[int]) -> tuple:
    """Equal batch shapes (after ``cores[i]`` core dimensions); returns the batch shape."""
    batches = [tuple(a.shape[c:]) for a, c in zip(avals, cores)]
    if any(b != batches[0] for b in batches[1:]):
        desc = ", ".join(f"{n} {fmt_shape(a.shape)} (batch {fmt_shape(b)})" for n, a, b in zip(names, avals, batches))
        raise LinalgShapeError(f"{op}: batch dimensions (trailing) must match exactly, got {desc}")
    return batches[0]


def lead(a: np.ndarray, core: int = 2) -> np.ndarray:
    """View of ``a`` with its ``core`` leading (matrix) axes moved to the back."""
    nd = a.ndim
    if nd == core:
        return a
    return np.moveaxis(a, tuple(range(core)), tuple(range(nd - core, nd)))


def trail(a: np.ndarray, core: int = 2) -> np.ndarray:
    """Inverse of :func:`lead`, in canonical column-major storage."""
    nd = a.ndim
    if nd == core:
        return fortran(a)
    return fortran(np.moveaxis(a, tuple(range(nd - core, nd)), tuple(range(core))))


def wrap(a: np.ndarray, core: int = 2) -> Tensor:
    return Tensor._wrap(trail(a, core))


def check_finite(op: str, name: str, x: Any) -> None:
    """The one non-finite check of :mod:`tenferro.linalg`: raise :class:`NonFiniteError`
    when ``x`` (a NumPy or CuPy array, a tensor, or a tracer that knows its value)
    holds a NaN or an infinity. LAPACK would otherwise return NaN silently or report a
    misleading non-convergence, singularity or non-positive-definiteness. Abstract
    values (staged graphs) are checked when the graph runs, by the impls. On a GPU
    this is one small device-to-host read (README, "GPU")."""
    if type(x) is Tensor or isinstance(x, Tracer):
        x = concrete(x)
        if x is None:
            return
    if x.size and x.dtype.kind in "fc" and not bool(xp_of(x).isfinite(x).all()):
        raise NonFiniteError(f"{op}: the input {name} of shape {fmt_shape(x.shape)} contains NaN or inf")


def operand(op: str, name: str, x: Any) -> Any:
    """``x`` as an operand of the public linalg function ``op``, refused by
    :func:`check_finite` when it holds NaN or inf (every public function starts here).
    An abstract value (a staged graph: ``tenferro.jit``) passes through
    :data:`finite_check_p`, so the compiled program checks it under ``op``'s name."""
    x = as_operand(op, x)
    if isinstance(x, Tracer) and concrete(x) is None:
        return finite_check_p.bind(x, op=op, name=name)
    check_finite(op, name, x)
    return x


finite_check_p = primitive("linalg_finite_check", FAMILY)
"""``finite_check_p(x, op, name)``: ``x`` unchanged; evaluating it raises
:class:`NonFiniteError` naming the public function ``op`` when ``x`` holds NaN or
inf. The identity for derivatives (tangents and cotangents are not checked)."""


@finite_check_p.def_impl
def _finite_check_impl(x: Tensor, op: str, name: str) -> Tensor:
    check_finite(op, name, x._data)
    return x


@finite_check_p.def_abstract_eval
def _finite_check_aval(a: Any, op: str, name: str) -> Any:
    return a


@finite_check_p.def_jvp
def _finite_check_jvp(primals, tangents, op, name):
    return finite_check_p.bind(primals[0], op=op, name=name), tangents[0]


@finite_check_p.def_transpose
def _finite_check_transpose(ct, x, op, name):
    return [None if type(ct) is Zero else ct]


def lapack(op: str, routine: str, inputs: Sequence[Any], outs: Sequence[tuple], **kwargs: Any) -> list[Any]:
    """Run a LAPACK routine (``svd``, ``eigh``, ``cholesky``, ``solve``) on
    leading-batch inputs and return its outputs in canonical (column-major,
    trailing-batch) layout: ``outs = [(shape, dtype, core), ...]``.

    SciPy's LAPACK drivers (``gesdd``, ``syevd``/``heevd``, ``potrf``, ``gesv``),
    column-major in and out: one matrix with no copies; a batch of SVDs or
    eigendecompositions matrix by matrix straight into the trailing layout (each
    matrix of it is a column-major block), a batch of Cholesky factors in place in
    one copy. Batched solves and empty input go through ``numpy.linalg``'s public
    wrappers (its C loop wins for cheap solves; LAPACK refuses empty matrices);
    CuPy arrays through CuPy's cuSOLVER wrappers. Measured against NumPy's private
    gufuncs that wrote straight into this layout: the same speed within 10% except
    tiny batched Cholesky factors (per-call overhead). Single precision is
    computed in double, as NumPy does. Non-finite input raises
    :class:`NonFiniteError` naming ``op``; LAPACK failures (non-convergence,
    singular, not positive definite) raise ``np.linalg.LinAlgError``."""
    for i, x in enumerate(inputs):
        check_finite(op, "a" if i == 0 else "b", x)
    if type(inputs[0]) is not np.ndarray:
        result = _device.run(op, _device.routine(op, "cupy.linalg", routine), *inputs, **kwargs)
    elif inputs[0].ndim == 2 and all(x.size for x in inputs):   # (LAPACK refuses empty matrices)
        result = _DRIVERS[routine](*[_double(x) for x in inputs], **kwargs)
    elif routine == "cholesky" and inputs[0].size:   # in place in one canonical copy (potrf overwrites)
        return [_batched_cholesky(inputs[0], outs[0][1])]
    elif routine in ("svd", "eigh") and inputs[0].size:   # matrix by matrix, straight into the canonical layout
        return _per_matrix(routine, inputs, outs, kwargs)
    else:
        with np.errstate(over="ignore", divide="ignore", under="ignore", invalid="ignore"):
            result = getattr(np.linalg, routine)(*inputs, **kwargs)
    results = tuple(result) if isinstance(result, tuple) else (result,)
    return [trail(r.astype(dtype, copy=False), core) for r, (_, dtype, core) in zip(results, outs)]


def _double(x: np.ndarray) -> np.ndarray:
    """``x`` in double precision (real or complex), column-major where it is already."""
    if x.dtype == np.float32:
        return x.astype(np.float64, order="K")
    if x.dtype == np.complex64:
        return x.astype(np.complex128, order="K")
    return x


@functools.lru_cache(maxsize=64)
def _lapack_funcs(names: tuple[str, ...], dtype_char: str) -> tuple:
    """SciPy's LAPACK drivers ``names`` for one dtype (looked up once)."""
    return scipy.linalg.get_lapack_funcs(names, dtype=np.dtype(dtype_char))


def _checked(name: str, info: int, failure: str) -> None:
    if info > 0:
        raise np.linalg.LinAlgError(f"{name}: {failure} (info={info})")
    if info < 0:
        raise ValueError(f"{name}: illegal value in argument {-info}")


_GESDD_LWORK: dict[tuple, int] = {}


def _svd_driver(a: np.ndarray, full_matrices: bool = False) -> tuple:
    gesdd, gesdd_lwork = _lapack_funcs(("gesdd", "gesdd_lwork"), a.dtype.char)
    m, n = a.shape
    key = (a.dtype.char, m, n, full_matrices)
    lwork = _GESDD_LWORK.get(key)
    if lwork is None:
        work, info = gesdd_lwork(m, n, compute_uv=1, full_matrices=int(full_matrices))
        _checked("gesdd", info, "workspace query failed")
        lwork = _GESDD_LWORK[key] = max(1, int(np.real(work)))
    u, s, vt, info = gesdd(a, compute_uv=1, full_matrices=int(full_matrices), lwork=lwork)
    _checked("gesdd", info, "SVD did not converge")
    return u, s, vt


def _eigh_driver(a: np.ndarray, UPLO: str = "L") -> tuple:
    name = "heevd" if np.iscomplexobj(a) else "syevd"
    (evd,) = _lapack_funcs((name,), a.dtype.char)
    w, v, info = evd(a, compute_v=1, lower=int(UPLO == "L"))
    _checked(name, info, "eigenvalue algorithm did not converge")
    return w, v


def _cholesky_driver(a: np.ndarray) -> np.ndarray:
    (potrf,) = _lapack_funcs(("potrf",), a.dtype.char)
    c, info = potrf(a, lower=1, clean=1)
    _checked("potrf", info, "matrix is not positive definite")
    return c


def _solve_driver(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (gesv,) = _lapack_funcs(("gesv",), np.result_type(a, b).char)
    _, _, x, info = gesv(a, b)
    _checked("gesv", info, "singular matrix")
    return x


def _per_matrix(routine: str, inputs: Sequence[np.ndarray], outs: Sequence[tuple], kwargs: dict) -> list:
    """The driver of ``routine`` on each matrix of a leading-batch stack, written
    into canonical (column-major, trailing-batch) outputs: each matrix of such an
    output is one column-major block, so nothing is copied twice."""
    bufs = [np.empty(shape, dtype=dtype, order="F") for shape, dtype, _ in outs]
    views = [lead(b, core) for b, (_, _, core) in zip(bufs, outs)]
    driver = _DRIVERS[routine]
    for idx in np.ndindex(*inputs[0].shape[:-2]):
        result = driver(*[_double(x[idx]) for x in inputs], **kwargs)
        for view, r in zip(views, result if isinstance(result, tuple) else (result,)):
            view[idx] = r
    return bufs


def _batched_cholesky(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Cholesky factors of a leading-batch stack, computed in place in one
    canonical trailing-batch copy (``potrf`` overwrites each column-major block)."""
    out = trail(_double(a)).copy(order="F")
    (potrf,) = _lapack_funcs(("potrf",), out.dtype.char)
    n = out.shape[0]
    flat = out.reshape((n, n, -1), order="F")
    for i in range(flat.shape[2]):
        _, info = potrf(flat[:, :, i], lower=1, clean=1, overwrite_a=1)
        _checked("potrf", info, "matrix is not positive definite")
    return out.astype(dtype, copy=False)


_DRIVERS: dict[str, Callable[..., Any]] = {
    "svd": _svd_driver, "eigh": _eigh_driver, "cholesky": _cholesky_driver, "solve": _solve_driver,
}


def numerically_singular(x: np.ndarray) -> bool:
    """Some square matrix of the (finite, trailing-batch) array ``x`` has rank below
    N within ``N * eps`` relative to its largest singular value (as NumPy's
    ``matrix_rank``): derivatives that need its inverse are meaningless there."""
    if not x.size or not np.isfinite(x).all():
        return False
    sv = np.linalg.svd(lead(x), compute_uv=False)
    tol = sv[..., :1] * x.shape[0] * np.finfo(sv.dtype).eps
    return bool(np.any(sv[..., -1:] <= tol))


# ---------------------------------------------------------------------------
# rule side: written with tenferro ops only
# ---------------------------------------------------------------------------
def mm(a: Any, b: Any) -> Any:
    """Batched matrix product ``a @ b`` in the trailing-batch layout:
    ``[M, K, B...] x [K, N, B...] -> [M, N, B...]`` (dtypes promoted)."""
    nb = len(meta(a)[0]) - 2
    batch = tuple(range(2, 2 + nb))
    return tf.dot_general(a, b, (((1,), (0,)), (batch, batch)))


def mhm(a: Any, b: Any) -> Any:
    """``a^H @ b`` batched (trailing layout) without materializing ``a^H``:
    ``[K, M, B...] x [K, N, B...] -> [M, N, B...]``."""
    nb = len(meta(a)[0]) - 2
    batch = tuple(range(2, 2 + nb))
    if meta(a)[1].is_complex:
        a = tf.conj(a)
    return tf.dot_general(a, b, (((0,), (0,)), (batch, batch)))


def mT(x: Any) -> Any:
    """Transpose of the matrix axes (batch axes stay)."""
    nd = len(meta(x)[0])
    return tf.transpose(x, (1, 0) + tuple(range(2, nd)))


def mH(x: Any) -> Any:
    """Conjugate transpose of the matrix axes."""
    t = mT(x)
    return tf.conj(t) if meta(x)[1].is_complex else t


def const(array: Any, like: Any = None) -> Tensor:
    """A constant tensor of ``array`` (canonical layout), uploaded to the placement
    of ``like`` (a tensor or tracer) when ``array`` is a host array and ``like``
    lives on a GPU."""
    t = Tensor._wrap(fortran(array))
    if like is None or type(array) is not np.ndarray:
        return t
    where = placement_of_operand(like)
    return t if where.device is None else t.to_gpu(where.device)


def eye_mask(n: int, m: int, batch: tuple, dtype: DType, k: int = 0, like: Any = None) -> Tensor:
    """Constant ``[n, m, B...]`` identity (shifted by ``k``), broadcast over the
    batch, on the placement of ``like`` (made there: no upload)."""
    where = CPU if like is None else placement_of_operand(like)
    with device_scope("eye_mask", where):
        xp = array_module_of_placement("eye_mask", where)
        e = xp.eye(m, n, -k, dtype=dtype.numpy).T          # column-major as made: no copy for one matrix
        if not batch:
            return Tensor._wrap(e)
        return Tensor._wrap(fortran(xp.broadcast_to(e.reshape(e.shape + (1,) * len(batch)), (n, m) + batch)))


def as_cols(v: Any, m: int) -> Any:
    """``v[j]`` of shape ``[n, B...]`` as a matrix ``X[i, j] = v[j]`` of shape ``[m, n, B...]``."""
    s, _ = meta(v)
    nb = len(s) - 1
    return broadcast_in_dim_p.bind(v, shape=(m,) + tuple(s), broadcast_dimensions=(1,) + tuple(range(2, 2 + nb)))


def as_rows(v: Any, m: int) -> Any:
    """``v[i]`` of shape ``[n, B...]`` as a matrix ``X[i, j] = v[i]`` of shape ``[n, m, B...]``."""
    s, _ = meta(v)
    nb = len(s) - 1
    shape = (s[0], m) + tuple(s[1:])
    return broadcast_in_dim_p.bind(v, shape=shape, broadcast_dimensions=(0,) + tuple(range(2, 2 + nb)))


def broadened_inverse(d: Any) -> Any:
    """``conj(d) / (|d|**2 + eps)`` (Lorentzian broadening of ``1/d``), elementwise, with
    ``eps = config.broadening`` (``None`` counts as 0); exactly 0 where ``d == 0``."""
    eps = config.broadening or 0.0
    cplx = meta(d)[1].is_complex
    if type(d) is Tensor:       # a constant (not differentiated here): one NumPy pass
        x = d._data
        mag2 = (x.real * x.real + x.imag * x.imag) if cplx else x * x
        num = x.conj() if cplx else x
        return Tensor._wrap(fortran(_divide_where(num, mag2 + eps if eps else mag2, x != 0, x)))
    mag2 = tf.real(tf.multiply(d, tf.conj(d))) if cplx else tf.multiply(d, d)
    if eps:
        mag2 = tf.add(mag2, eps)
    # d == 0 gives 0/eps = 0, or 0/0 without broadening: guard with a constant mask
    zero = _zero_mask(d)
    if zero is not None:
        mag2 = tf.add(mag2, zero)
    return tf.divide(tf.conj(d) if cplx else d, mag2)


def gap_inverse(d: Any, values: Any, numerator: float = 1.0, zero_cluster: bool = False) -> Any:
    """``numerator / d`` elementwise for ``d`` ``[N, N, B...]``, the pairwise
    differences (or sums) of the spectrum ``values`` ``[N, B...]``, as the derivative
    rules of eigh, svd and eig need it; ``config.broadening`` says how (see
    ``_config.py``):

    * ``None`` (default): exact ``numerator / d``, and 0 where
      ``|d| <= tol = config.degeneracy_rtol * max|values|`` (per matrix: the pairs the
      degeneracy threshold calls degenerate, the diagonal included); with
      ``zero_cluster=True`` (svd) pairs of two numerically zero values
      (``|v_i|, |v_j| <= tol``: the null space of rank-deficient input) are used as
      computed (docs/ad/gauge.md, "Zero singular values"); exact zeros ``d == 0``
      always give 0;
    * ``0``: exact, 0 only where ``d == 0``;
    * ``eps > 0``: the Lorentzian ``numerator conj(d) / (|d|**2 + eps)``.

    The mask is a constant (piecewise constant in the values): its derivative is 0,
    so masked entries stay 0 to every order."""
    eps = config.broadening
    if eps:
        inv = broadened_inverse(d)
        return inv if numerator == 1.0 else tf.multiply(inv, numerator)
    rtol = float(config.degeneracy_rtol) if eps is None else 0.0
    if type(d) is Tensor and type(values) is Tensor:    # constants (first-order pass): NumPy
        x = d._data
        return Tensor._wrap(fortran(_divide_where(numerator, x, _separated(x, values._data, rtol, zero_cluster), x)))
    xd, xv = concrete(d), concrete(values)
    if xd is not None and xv is not None:
        keep = _separated(xd, xv, rtol, zero_cluster)
        rdt = xd.real.dtype
        keep_f, drop_f = const(keep.astype(rdt), like=d), const((~keep).astype(rdt), like=d)
    elif 0 in meta(d)[0]:
        return d
    else:   # abstract values (a staged graph): the same mask with tenferro ops
        keep_f = _separated_ops(d, values, rtol, zero_cluster)
        drop_f = tf.subtract(1.0, keep_f)
    safe = tf.add(tf.multiply(d, keep_f), drop_f)       # d where kept, 1 where masked
    return tf.multiply(tf.divide(numerator, safe), keep_f)


def _separated(x: Any, values: Any, rtol: float, zero_cluster: bool) -> Any:
    """Where :func:`gap_inverse` keeps ``1/x`` (``x`` ``[N, N, B...]``, ``values``
    ``[N, B...]``; NumPy or CuPy booleans): ``x != 0`` and either ``|x| > tol`` or
    (``zero_cluster``) both values numerically zero, ``tol = rtol * max|values|`` per
    matrix."""
    xp = xp_of(x)
    if not rtol or values.size == 0:
        return x != 0
    mag = xp.abs(values)
    tol = rtol * xp.max(mag, axis=0)                         # [B...]
    keep = xp.abs(x) > tol                                   # (implies x != 0: tol >= 0)
    if zero_cluster:
        small = mag <= tol                                   # [N, B...]
        if type(small) is not np.ndarray or small.any():     # (on a GPU: no read, always)
            keep |= small[None, :] & small[:, None] & (x != 0)
    return keep


def _separated_ops(d: Any, values: Any, rtol: float, zero_cluster: bool) -> Any:
    """:func:`_separated` with tenferro ops (abstract values), as a 0/1 float tensor."""
    shape, dt = meta(d)
    nb = len(shape) - 2
    n = shape[0]
    mag = tf.abs(values)                                     # [N, B...]
    tol = tf.multiply(tf.max(mag, axis=0), rtol)            # [B...]
    tol_nn = broadcast_in_dim_p.bind(tol, shape=tuple(shape), broadcast_dimensions=tuple(range(2, 2 + nb)))
    tol_n = broadcast_in_dim_p.bind(tol, shape=tuple(meta(values)[0]), broadcast_dimensions=tuple(range(1, 1 + nb)))
    rdt = dt.real_dtype
    far = convert_element_type(tf.greater(tf.abs(d), tol_nn), rdt)
    if zero_cluster:
        small = convert_element_type(less_equal(mag, tol_n), rdt)
        far = tf.maximum(far, tf.multiply(as_cols(small, n), as_rows(small, n)))
    return tf.multiply(convert_element_type(tf.not_equal(d, 0.0), rdt), far)


def _zero_mask(d: Any) -> Tensor | None:
    """Constant 1 where the (concrete) value of ``d`` is exactly zero, else None."""
    arr = concrete(d)
    if arr is None:
        return None
    z = (arr == 0)
    if type(arr) is np.ndarray and not z.any():   # (on a GPU, adding a zero mask beats a device read)
        return None
    return const(z.astype(arr.dtype))


def concrete(x: Any) -> np.ndarray | None:
    """The NumPy value of a Tensor or a tracer that knows one, else None."""
    if type(x) is Tensor:
        return x._data
    if isinstance(x, Tracer):
        try:
            v = x.to_concrete()
        except Exception:  # noqa: BLE001  (abstract tracer: no value)
            return None
        return v._data if type(v) is Tensor else None
    return None


def safe_reciprocal(s: Any) -> Any:
    """``1/s`` with exact zeros mapped to 0 (singular values of rank-deficient input)."""
    if type(s) is Tensor:       # a constant: one NumPy pass
        x = s._data
        return Tensor._wrap(fortran(_divide_where(1.0, x, x != 0, x)))
    zero = _zero_mask(s)
    if zero is None:
        return tf.divide(1.0, s)
    return tf.subtract(tf.divide(1.0, tf.add(s, zero)), zero)


def _divide_where(num: Any, den: Any, mask: Any, like: Any) -> Any:
    """``num / den`` where ``mask``, exactly 0 elsewhere, with the dtype of the
    array ``like`` (NumPy or CuPy)."""
    if type(like) is np.ndarray:
        return np.divide(num, den, out=np.zeros_like(like), where=mask)
    xp = xp_of(like)
    return xp.where(mask, num / xp.where(mask, den, 1), 0).astype(like.dtype, copy=False)


def diff_matrix(v: Any) -> Any:
    """``D[i, j] = v[j] - v[i]`` for ``v`` of shape ``[n, B...]``."""
    if type(v) is Tensor:       # a constant: one NumPy pass
        x = v._data
        return Tensor._wrap(fortran(x[None, :] - x[:, None]))
    n = meta(v)[0][0]
    return tf.subtract(as_cols(v, n), as_rows(v, n))


def to_dtype(x: Any, dtype: DType) -> Any:
    return convert_element_type(x, dtype)


# ---------------------------------------------------------------------------
# gauge check: identity on tangents, checks cotangents in reverse mode
# ---------------------------------------------------------------------------
gauge_check_p = primitive("linalg_gauge_check", FAMILY, multiple_results=True)
"""``gauge_check_p(*tangents, *residuals, n_lin, check, policy, rtol)``: returns
the ``n_lin`` tangents unchanged. Its transpose passes the cotangents through and
calls ``check(cotangents, residuals, rtol)`` (NumPy arrays) first; its findings
(``None``, a gauge message, or a list of ``(kind, message)`` with ``kind`` "gauge" or
"degeneracy") warn (:class:`GaugeWarning`, :class:`DegeneracyWarning`) or raise
(:class:`GaugeError`, :class:`DegeneracyError`) per ``policy`` — ``config.gauge`` (and
``rtol``, ``config.degeneracy_rtol``)
as they were when the JVP was built, not when the transpose runs. See
docs/ad/gauge.md."""


@gauge_check_p.def_impl
def _gauge_impl(*args, n_lin, check, policy, rtol):
    return list(args[:n_lin])


@gauge_check_p.def_abstract_eval
def _gauge_aval(*avals, n_lin, check, policy, rtol):
    return list(avals[:n_lin])


@gauge_check_p.def_jvp
def _gauge_jvp(primals, tangents, n_lin, check, policy, rtol):
    out = gauge_check_p.bind(*primals, n_lin=n_lin, check=check, policy=policy, rtol=rtol)
    t_lin = [tidu.instantiate(t) for t in tangents[:n_lin]]
    # the derivative of the identity is the identity; its cotangents are not a loss's
    # gradient (higher-order directions), so the copy does not check (check=None)
    t_out = gauge_check_p.bind(*t_lin, *primals[n_lin:], n_lin=n_lin, check=None, policy=policy, rtol=rtol)
    return out, t_out


_FINDINGS = {"gauge": (GaugeError, GaugeWarning), "degeneracy": (DegeneracyError, DegeneracyWarning)}


def _report(findings: Any, policy: str) -> None:
    for kind, message in ([("gauge", findings)] if isinstance(findings, str) else findings or ()):
        error, warning = _FINDINGS[kind]
        if policy == "raise":
            raise error(message)
        warnings.warn(message, warning, stacklevel=3)


def _staged(x: Any) -> bool:
    """A value of a graph being staged (``tenferro.jit``, ``make_graph``): known at run time."""
    return type(x) is Tensor or type(x) is GraphTracer


@gauge_check_p.def_transpose
def _gauge_transpose(cts, *args, n_lin, check, policy, rtol):
    res = args[n_lin:]
    out = [None if type(c) is Zero else c for c in cts]
    if check is not None and policy != "ignore" and any(c is not None for c in out):
        # first-order reverse mode only: with residuals traced by a transformation
        # (higher orders) the cotangents are directions of a derivative, not a loss's gradient
        ct_arrays = [None if c is None else concrete(c) for c in out]
        res_arrays = [r._data if type(r) is Tensor else None for r in res]
        if all(r is not None for r in res_arrays) and all(a is not None or c is None for a, c in zip(ct_arrays, out)):
            _report(check(ct_arrays, res_arrays, rtol), policy)
        elif all(_staged(r) for r in res) and all(c is None or _staged(c) for c in out):
            # a staged gradient (jit): the check becomes part of the program and runs with it
            nz = tuple(i for i, c in enumerate(out) if c is not None)
            checked = gauge_assert_p.bind(*[out[i] for i in nz], *res, positions=nz, n_ct=len(out),
                                          check=check, policy=policy, rtol=rtol)
            for i, c in zip(nz, checked):
                out[i] = c
    return out + [None] * len(res)


gauge_assert_p = primitive("linalg_gauge_assert", FAMILY, multiple_results=True)
"""``gauge_assert_p(*cotangents, *residuals, positions, n_ct, check, policy, rtol)``:
the gauge check of a staged (``tenferro.jit``) gradient. Returns the cotangents
unchanged; evaluating it runs ``check`` on the values (``positions``: which of the
``n_ct`` cotangents of :data:`gauge_check_p` these are) and warns or raises per
``policy``, as eager reverse mode does at the same point."""


@gauge_assert_p.def_impl
def _gauge_assert_impl(*args, positions, n_ct, check, policy, rtol):
    cts = args[:len(positions)]
    ct_arrays: list = [None] * n_ct
    for i, c in zip(positions, cts):
        ct_arrays[i] = c._data
    _report(check(ct_arrays, [r._data for r in args[len(positions):]], rtol), policy)
    return list(cts)


@gauge_assert_p.def_abstract_eval
def _gauge_assert_aval(*avals, positions, n_ct, check, policy, rtol):
    return list(avals[:len(positions)])


@gauge_assert_p.def_jvp
def _gauge_assert_jvp(primals, tangents, positions, n_ct, check, policy, rtol):
    out = gauge_assert_p.bind(*primals, positions=positions, n_ct=n_ct, check=check, policy=policy, rtol=rtol)
    return out, list(tangents[:len(positions)])   # the identity on cotangents; directions are not checked


@gauge_assert_p.def_transpose
def _gauge_assert_transpose(cts, *args, positions, n_ct, check, policy, rtol):
    return [None if type(c) is Zero else c for c in cts] + [None] * (len(args) - len(positions))


def gauge_guard(tangents: list, residuals: list, check: Callable[..., str | None]) -> list:
    """Pass ``tangents`` through :data:`gauge_check_p` (one place for all rules),
    capturing the gauge policy and degeneracy tolerance active now."""
    return gauge_check_p.bind(*tangents, *residuals, n_lin=len(tangents), check=check,
                              policy=config.gauge, rtol=float(config.degeneracy_rtol))


def degeneracy_tolerance(values: np.ndarray, rtol: float) -> tuple[np.ndarray, bool]:
    """``(tol, any_pair)`` for sorted ``values`` ``[B..., K]`` (leading batch):
    ``tol = rtol * max|v|`` per matrix (``[B..., 1]``), and whether two neighbours
    (hence some pair) are degenerate, ``|v_i - v_j| <= tol`` (``O(K)``, one read)."""
    if values.size == 0:
        return np.zeros(values.shape[:-1] + (1,)), False
    scale = np.max(np.abs(values), axis=-1, keepdims=True)
    tol = rtol * np.where(scale > 0, scale, 1.0)
    return tol, bool(np.any(np.abs(np.diff(values, axis=-1)) <= tol))


def _spectral_product(pairs: list) -> np.ndarray:
    """``X = sum_k A_k^H B_k`` (leading batch)."""
    return sum(np.matmul(np.conj(np.swapaxes(a, -1, -2)), b) for a, b in pairs)


def _pairs_norm(pairs: list) -> float:
    return sum(float(np.linalg.norm(a)) * float(np.linalg.norm(b)) for a, b in pairs)


def gauge_violation(pairs: list, values: np.ndarray, rtol: float) -> float:
    """Relative size of the gauge-dependent part of ``X = sum_k A_k^H B_k`` for
    ``pairs = [(A_k, B_k)]`` (leading-batch arrays ``[B..., M, K]``): the
    skew-Hermitian part of ``X`` on the pairs (i, j) of degenerate ``values``
    (``[B..., K]``, degenerate: ``|v_i - v_j| <= rtol * max |v|``), the diagonal
    (phases) included, relative to
    ``sum_k ||A_k|| ||B_k||`` (Frobenius), an upper bound of ``|X|`` — not to
    ``max |X|``, which is itself rounding noise when the loss is invariant (the
    cotangents of a second-order pass are such). The full ``K x K`` product is
    formed only when some off-diagonal pair is degenerate; otherwise only the
    diagonal (``O(M K)``), and nothing at all for real data."""
    if values.size == 0 or not pairs:
        return 0.0
    tol, any_off = degeneracy_tolerance(values, rtol)
    is_complex = any(np.iscomplexobj(a) or np.iscomplexobj(b) for a, b in pairs)
    if any_off:
        deg = np.abs(values[..., :, None] - values[..., None, :]) <= tol[..., None]
        x = _spectral_product(pairs)
        skew = x - np.conj(np.swapaxes(x, -1, -2))
        bad = np.max(np.abs(np.where(deg, skew, 0)))
    elif is_complex:
        d = sum(np.sum(np.conj(a) * b, axis=-2) for a, b in pairs)
        bad = 2 * np.max(np.abs(d.imag))
    else:
        return 0.0
    denom = _pairs_norm(pairs)
    return float(bad / denom) if denom > 0 else 0.0


def degeneracy_dependence(pairs: list, values: np.ndarray, value_ct: np.ndarray | None, rtol: float,
                          zero_cluster: bool = False) -> tuple[float, float]:
    """How much the loss depends on both the values and the vectors of an exactly
    degenerate block (``|v_i - v_j| <= rtol * max|v|``), where the gradient is not
    determined by the decomposition (docs/ad/gauge.md, "Degeneracy warning").
    ``X = sum_k A_k^H B_k`` as in :func:`gauge_violation`, ``value_ct`` ``[B..., K]``
    the cotangent of the values. Returns ``(r, r_null)``:

    * ``r``: per block of size >= 2, the smaller of ``max|v| ||value_ct_B||`` and
      ``||H_B - tr(H_B)/|B| I|| max|v| / max|v_B|`` (``H = (X + X^H)/2``: the traceless
      Hermitian part, a multiple of the identity being exact; per unit of the block's
      own magnitude, since the vector cotangent of ``V f(w) V^H`` is ``f(v_B)`` times
      the in-block data, which a block of zeros shrinks to rounding size), the largest
      over blocks whose traceless part is above rounding relative to ``H_B``;
    * ``r_null`` (``zero_cluster``, svd): blocks of numerically zero values
      (``|v| <= rtol * max|v|``) are left out of ``r`` (their tiny computed values are
      used, exact for ``U f(S) Vh`` with ``f(0) = 0``); ``r_null`` is the size of
      ``X`` on them, i.e. a dependence on the null space's vectors themselves, whose
      gradient then amplifies rounding noise.

    Both relative to ``sum_k ||A_k|| ||B_k|| + max|v| ||value_ct||``. Blocks are read
    row by row through the pairwise relation (array passes, a few reads on a GPU);
    ``(0, 0)`` when no pair is degenerate (``O(K)``)."""
    if values.size == 0 or not pairs:
        return 0.0, 0.0
    tol, any_off = degeneracy_tolerance(values, rtol)
    if not any_off:
        return 0.0, 0.0
    xp = xp_of(values)
    mag = np.abs(values)
    deg = np.abs(values[..., :, None] - values[..., None, :]) <= tol[..., None]      # [B..., K, K]
    size = np.sum(deg, axis=-1)                                                          # [B..., K]
    x = _spectral_product(pairs)
    scale = np.max(mag, axis=-1, keepdims=True)
    rows = size >= 2
    r_null = 0.0
    if zero_cluster:
        small = mag <= tol
        null = np.sqrt(np.sum(np.where(deg, np.abs(x) ** 2, 0), axis=-1))
        r_null = float(np.max(np.where(rows & small, null, 0)))
        rows = rows & ~small
    r = 0.0
    if value_ct is not None:
        h = 0.5 * (x + np.conj(np.swapaxes(x, -1, -2)))
        dh = np.real(np.diagonal(h, axis1=-2, axis2=-1))
        mean = np.sum(np.where(deg, dh[..., None, :], 0), axis=-1) / size                  # block mean of diag(H)
        traceless = h - xp.eye(values.shape[-1]) * mean[..., :, None]
        block_mag = np.max(np.where(deg, mag[..., None, :], 0), axis=-1)
        floor = 4 * np.finfo(values.dtype).eps * scale
        tl = np.sqrt(np.sum(np.where(deg, np.abs(traceless) ** 2, 0), axis=-1))
        # a traceless part at rounding size relative to H_B itself is a multiple of the identity
        genuine = tl > GAUGE_RTOL * np.sqrt(np.sum(np.where(deg, np.abs(h) ** 2, 0), axis=-1))
        vec = tl * scale / np.maximum(block_mag, floor)
        val = scale * np.sqrt(np.sum(np.where(deg, np.abs(value_ct[..., None, :]) ** 2, 0), axis=-1))
        r = float(np.max(np.where(rows & genuine, np.minimum(vec, val), 0)))
    denom = _pairs_norm(pairs) + (float(np.max(scale)) * float(np.linalg.norm(value_ct)) if value_ct is not None else 0.0)
    return (r / denom, r_null / denom) if denom > 0 else (0.0, 0.0)


GAUGE_RTOL = 1e-6


def _window(shape: tuple, axis: int, start: int, stop: int) -> tuple:
    """``slice_p`` windows: ``start:stop`` along ``axis``, everything elsewhere."""
    return tuple((start, 1, stop - start) if i == axis else (0, 1, n) for i, n in enumerate(shape))


def take_block(x: Any, axis: int, start: int, stop: int) -> Any:
    """Entries ``start:stop`` along matrix ``axis`` (0 rows, 1 columns) of each matrix
    of ``x`` (the linear ``slice`` primitive)."""
    s = tuple(meta(x)[0])
    if (start, stop) == (0, s[axis]):
        return x
    return slice_p.bind(x, slices=_window(s, axis, start, stop))


def place_block(x: Any, axis: int, total: int, offset: int) -> Any:
    """``x`` as entries ``offset:offset+K`` along matrix ``axis`` of a matrix with
    ``total`` entries there, zero elsewhere (``slice_embed``, the transpose of
    :func:`take_block`)."""
    s = tuple(meta(x)[0])
    if (offset, total) == (0, s[axis]):
        return x
    shape = s[:axis] + (total,) + s[axis + 1:]
    return slice_embed_p.bind(x, shape=shape, slices=_window(shape, axis, offset, offset + s[axis]))


def columns(x: Any, start: int, stop: int) -> Any:
    """Columns ``start:stop`` of each matrix of ``x``."""
    return take_block(x, 1, start, stop)


def rows(x: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of each matrix of ``x``."""
    return take_block(x, 0, start, stop)


def place_columns(x: Any, total: int, offset: int) -> Any:
    """``x`` ``[M, K, B...]`` as columns ``offset:offset+K`` of a zero ``[M, total, B...]``."""
    return place_block(x, 1, total, offset)


def place_rows(x: Any, total: int, offset: int) -> Any:
    """``x`` ``[K, N, B...]`` as rows ``offset:offset+K`` of a zero ``[total, N, B...]``."""
    return place_block(x, 0, total, offset)


def leading(v: Any, k: int) -> Any:
    """The first ``k`` entries of ``v`` ``[K, B...]`` along axis 0."""
    return take_block(v, 0, 0, k)


def mtrace_product(a: Any, b: Any) -> Any:
    """``trace(a @ b)`` per batch element, ``[B...]``, as ``sum(a^T * b)`` (no matmul)."""
    return tf.sum(tf.multiply(mT(a), b), axis=(0, 1))


def bind(p: Any, *args: Any, **params: Any) -> Any:
    """Validate the operands with ``p``'s shape rule (typed errors, also on the
    eager path, which skips abstract evaluation), then bind ``p``."""
    p.abstract_eval(*[aval_of_operand(x) for x in args], **params)
    return p.bind(*args, **params)
