"""The machine code of :mod:`.gemm_list`: one loop over a table of GEMMs, each a call of SciPy's
BLAS (``scipy.linalg.cython_blas``, LP64) on raw host addresses; and :func:`scatter`, the copy of
rectangles into a flat buffer (the absorbed environments' planned writes). Used only where Numba (the
``fast`` extra) is installed; without it the module imports and :func:`run` is None. The BLAS routines are registered as named symbols, so Numba caches
the loop on disk (``cache=True``) and a later process loads it instead of compiling."""

from __future__ import annotations

import numpy as np

try:
    import llvmlite.binding
    import numba
    from numba import types
    from numba.extending import get_cython_function_address
except ImportError:  # without the fast extra the module imports, and gemm_list.native_gemms() is None
    numba = None

__all__ = ["run", "scatter"]

if numba is not None:
    for _name in ("dgemm", "zgemm"):
        llvmlite.binding.add_symbol(
            f"tensor4all_{_name}", get_cython_function_address("scipy.linalg.cython_blas", _name)
        )
    _dgemm = types.ExternalFunction("tensor4all_dgemm", types.void(*([types.voidptr] * 13)))
    _zgemm = types.ExternalFunction("tensor4all_zgemm", types.void(*([types.voidptr] * 13)))
    _jit = numba.njit(cache=True, nogil=True)
else:
    _jit = None

# a table row (see gemm_list.GemmList): kind (0: C (+)= A B, 1: C (+)= A B^T, 2: zero t[start : start + m]),
# m, n, k, then for A, B and C a base (0: an absolute address in bytes, else bases[base] plus the
# offset in elements), the offset and the leading dimension (row-major), then beta (0 or 1)
_KIND, _M, _N, _K, _A, _B, _C, _BETA = 0, 1, 2, 3, 4, 7, 10, 13


def _address(bases: np.ndarray, row: np.ndarray, at: int, itemsize: int) -> int:
    base = row[at]
    return bases[base] + row[at + 1] * itemsize if base else row[at + 1]


def run(table: np.ndarray, bases: np.ndarray, t: np.ndarray) -> None:
    """Every row of ``table`` in order, on float64 buffers (``dgemm``) or complex128 ones
    (``zgemm``; ``B^T`` is the plain transpose), as ``t``, the workspace (a row-major ``C = A B``
    is the column-major ``C^T = B^T A^T``). The scalars are complex: ``dgemm`` reads their real
    parts, the first eight bytes."""
    itemsize = t.itemsize
    ints = np.empty(6, dtype=np.int32)
    chars = np.empty(2, dtype=np.uint8)
    scalars = np.array([1.0 + 0.0j, 0.0j, 1.0 + 0.0j])  # alpha, beta = 0, beta = 1
    chars[1] = 78  # 'N'
    for i in range(table.shape[0]):
        row = table[i]
        if row[_KIND] == 2:
            t[row[_C + 1] : row[_C + 1] + row[_M]] = 0.0
            continue
        a, b = _address(bases, row, _A, itemsize), _address(bases, row, _B, itemsize)
        c = _address(bases, row, _C, itemsize)
        chars[0] = 84 if row[_KIND] == 1 else 78  # 'T' or 'N'
        ints[0], ints[1], ints[2] = row[_N], row[_M], row[_K]
        ints[3], ints[4], ints[5] = row[_B + 2], row[_A + 2], row[_C + 2]
        beta = scalars[2:].ctypes.data if row[_BETA] else scalars[1:].ctypes.data
        args = (
            chars.ctypes.data, chars[1:].ctypes.data, ints.ctypes.data, ints[1:].ctypes.data, ints[2:].ctypes.data,
            scalars.ctypes.data, b, ints[3:].ctypes.data, a, ints[4:].ctypes.data, beta, c, ints[5:].ctypes.data,
        )  # fmt: skip
        if itemsize == 16:
            _zgemm(*args)
        else:
            _dgemm(*args)


def scatter(
    buf: np.ndarray,
    values: np.ndarray,
    src: np.ndarray,
    first: np.ndarray,
    cols: np.ndarray,
    rows: np.ndarray,
    width: np.ndarray,
) -> None:
    """Rectangles copied into a flat buffer: ``buf[first[k] + i cols[k] + j] = values[src[k] + i
    width[k] + j]`` for ``i < rows[k]``, ``j < width[k]``; each row one contiguous copy, no index
    per element."""
    for k in range(first.shape[0]):
        w = width[k]
        for i in range(rows[k]):
            dst = first[k] + i * cols[k]
            at = src[k] + i * w
            buf[dst : dst + w] = values[at : at + w]


if _jit is not None:
    _address = _jit(_address)
    run = _jit(run)
    scatter = _jit(scatter)
else:
    run = None  # type: ignore[assignment]
    scatter = None  # type: ignore[assignment]
