"""GPU drivers of :mod:`tenferro.linalg`: cuSOLVER through CuPy.

Every function here takes CuPy arrays in the **leading-batch** layout that the
CPU drivers also see (``lead`` of the trailing-batch tensor) and returns CuPy
arrays in that layout; the impls move them back to the canonical trailing-batch
layout exactly as they do on the CPU. Where CuPy offers a batched routine
(``svd``, ``eigh``, ``cholesky``, ``solve``, ``inv``, ``det``, ``slogdet``,
``qr``) one call handles the whole batch; the SciPy-style routines of
``cupyx.scipy.linalg`` (``lu``, ``lu_factor``/``lu_solve``,
``solve_triangular``, ``expm``) are called per matrix of the batch.

A routine CuPy lacks raises :class:`~tenferro.UnsupportedOnDeviceError` naming it;
nothing falls back to the CPU behind the user's back (README, "GPU").

Errors: CuPy reports LAPACK failures (singular, not positive definite, no
convergence) only under ``cupyx.errstate(linalg="raise")``, which reads
cuSOLVER's ``info`` flag back from the device: one small device-to-host read per
factorization, the price of a typed error instead of a silent NaN (PyTorch's
``torch.linalg.cholesky`` pays the same; its ``*_ex`` variants skip it).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._errors import UnsupportedOnDeviceError
from .._placement import import_cupy, import_cupyx

__all__ = ["run", "routine", "per_matrix", "triangular_solve", "lu_factor", "lu_solve", "lu", "expm", "expm_frechet"]


def routine(op: str, module: str, name: str) -> Callable[..., Any]:
    """The CuPy function ``module.name`` (``module``: ``"cupy.linalg"`` or
    ``"cupyx.scipy.linalg"``), or :class:`UnsupportedOnDeviceError` naming it."""
    if module == "cupy.linalg":
        mod = import_cupy(op).linalg
    else:
        mod = import_cupyx(op).scipy.linalg
    fn = getattr(mod, name, None)
    if fn is None:
        raise UnsupportedOnDeviceError(
            f"{op}: {module}.{name} is not available in this CuPy ({import_cupy(op).__version__}), so {op} cannot "
            "run on the GPU; move the operand to the CPU explicitly (.to_cpu()) or upgrade CuPy"
        )
    return fn


def run(op: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with cuSOLVER's error flag checked: failures raise
    ``numpy.linalg.LinAlgError`` as the CPU drivers do."""
    cupyx = import_cupyx(op)
    try:
        with cupyx.errstate(linalg="raise"):
            return fn(*args, **kwargs)
    except np.linalg.LinAlgError:
        raise
    except Exception as exc:  # noqa: BLE001  (CuPy's LinAlgError class differs between versions)
        if type(exc).__name__ == "LinAlgError":
            raise np.linalg.LinAlgError(str(exc)) from None
        raise


def per_matrix(fn: Callable[..., Any], *arrays: Any) -> Any:
    """``fn`` applied to each matrix of leading-batch arrays (same batch shape),
    results stacked back; one or several outputs."""
    cupy = import_cupy("linalg")
    batch = arrays[0].shape[:-2]
    if not batch:
        return fn(*arrays)
    count = 1
    for n in batch:
        count *= n
    flat = [a.reshape((count,) + a.shape[-2:]) for a in arrays]  # (not -1: ambiguous for empty matrices)
    if count == 0:  # an empty batch: the output shapes of one (identity) matrix, no rows
        probe = fn(*(cupy.eye(*f.shape[1:], dtype=f.dtype) for f in flat))
        if isinstance(probe, tuple):
            return tuple(cupy.empty(batch + p.shape, dtype=p.dtype) for p in probe)
        return cupy.empty(batch + probe.shape, dtype=probe.dtype)
    outs = [fn(*(f[i] for f in flat)) for i in range(count)]
    if isinstance(outs[0], tuple):
        return tuple(cupy.stack([o[j] for o in outs]).reshape(batch + outs[0][j].shape) for j in range(len(outs[0])))
    return cupy.stack(outs).reshape(batch + outs[0].shape)


def triangular_solve(
    A: Any, B: Any, lower: bool, left: bool, transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
) -> Any:
    """``op(A) X = B`` (``left``) or ``X op(A) = B``, per matrix of a
    **trailing**-batch pair, into a new column-major array."""
    cupy = import_cupy("triangular_solve")
    solve = routine("triangular_solve", "cupyx.scipy.linalg", "solve_triangular")
    # op(A) as an explicit matrix M (a cheap device copy next to the solve)
    M = A
    low = lower
    if transpose_a:
        M = cupy.swapaxes(M, 0, 1)
        low = not low
    if conjugate_a:
        M = cupy.conj(M)
    n = A.shape[0]
    m3 = M.reshape((n, n, -1), order="F")
    b3 = B.reshape(B.shape[:2] + (-1,), order="F")
    out = cupy.empty(b3.shape, dtype=B.dtype, order="F")
    for i in range(m3.shape[2]):
        if left:  # M X = B
            out[:, :, i] = solve(m3[:, :, i], b3[:, :, i], lower=low, unit_diagonal=unit_diagonal)
        else:  # X M = B  <=>  M^T X^T = B^T
            out[:, :, i] = solve(m3[:, :, i], b3[:, :, i].T, trans=1, lower=low, unit_diagonal=unit_diagonal).T
    return out.reshape(B.shape, order="F")


def lu_factor(A: Any) -> tuple[Any, Any]:
    """getrf of one matrix: ``(lu, piv)`` as ``scipy.linalg.lu_factor``."""
    return run("solve", routine("solve", "cupyx.scipy.linalg", "lu_factor"), A, check_finite=False)


def lu_solve(lu: Any, piv: Any, B: Any, trans: int) -> Any:
    """getrs with the factors of :func:`lu_factor`."""
    fn = routine("solve", "cupyx.scipy.linalg", "lu_solve")
    return run("solve", fn, (lu, piv), B, trans=trans, check_finite=False)


def lu(A: Any) -> tuple[Any, Any, Any]:
    """``P, L, U`` of each matrix of a leading-batch array (``scipy.linalg.lu``)."""
    fn = routine("lu", "cupyx.scipy.linalg", "lu")
    return per_matrix(lambda a: tuple(fn(a, permute_l=False, check_finite=False)), A)


def expm(A: Any) -> Any:
    """The matrix exponential of each matrix of a leading-batch array."""
    fn = routine("expm", "cupyx.scipy.linalg", "expm")
    return per_matrix(fn, A)


def expm_frechet(A: Any, E: Any) -> Any:
    """The Fréchet derivative ``L(A, E)`` of ``expm`` for each matrix pair
    (leading batch), from the block identity
    ``expm([[A, E], [0, A]]) = [[expm(A), L(A, E)], [0, expm(A)]]`` (Higham 2008,
    Functions of Matrices, Thm. 3.6 and §10.6). ``L`` is linear in ``E``, so
    ``E`` is scaled to the norm of ``A`` first and the result scaled back: the
    block matrix then has no badly scaled off-diagonal block."""
    cupy = import_cupy("expm_frechet")
    fn = routine("expm_frechet", "cupyx.scipy.linalg", "expm")

    def one(a: Any, e: Any) -> Any:
        n = a.shape[0]
        ne, na = cupy.linalg.norm(e), cupy.linalg.norm(a)
        scale = cupy.where(ne > 0, cupy.where(na > 0, na, 1.0) / cupy.where(ne > 0, ne, 1.0), 1.0)
        block = cupy.zeros((2 * n, 2 * n), dtype=a.dtype)
        block[:n, :n] = a
        block[n:, n:] = a
        block[:n, n:] = e * scale.astype(a.dtype)
        return fn(block)[:n, n:] / scale.astype(a.dtype)

    return per_matrix(one, A, E)
