"""LAPACK for :mod:`tenferro.linalg` (impl side: NumPy or CuPy arrays).

:func:`lapack` runs ``svd``, ``eigh``, ``cholesky`` or ``solve`` on leading-batch
input: SciPy's LAPACK drivers (looked up once per dtype, ``gesdd`` workspace sizes
cached), ``numpy.linalg``'s public batched wrappers, or CuPy's on a GPU
(:mod:`._device`). :func:`numerically_singular` is the rank test that derivative
rules needing an inverse use.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np
import scipy.linalg

from . import _device
from ._util import lead, trail


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
    computed in double, as NumPy does. Inputs are not checked for NaN/inf here:
    every public function refuses them where its operands enter (:func:`._util.operand`,
    at run time for staged graphs), and derivative rules only pass values derived from
    checked ones; LAPACK failures (non-convergence, singular, not positive definite)
    raise ``np.linalg.LinAlgError``."""
    if type(inputs[0]) is not np.ndarray:
        result = _device.run(op, _device.routine(op, "cupy.linalg", routine), *inputs, **kwargs)
    elif inputs[0].ndim == 2 and all(x.size for x in inputs):  # (LAPACK refuses empty matrices)
        result = _DRIVERS[routine](*[_double(x) for x in inputs], **kwargs)
    elif routine == "cholesky" and inputs[0].size:  # in place in one canonical copy (potrf overwrites)
        return [_batched_cholesky(inputs[0], outs[0][1])]
    elif routine in ("svd", "eigh") and inputs[0].size:  # matrix by matrix, straight into the canonical layout
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
    "svd": _svd_driver,
    "eigh": _eigh_driver,
    "cholesky": _cholesky_driver,
    "solve": _solve_driver,
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
