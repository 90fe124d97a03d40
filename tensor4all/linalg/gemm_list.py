"""Many small GEMMs in one native call: the products by blocks of the charge-sector sweeps.

A conserved local problem at bond dimension 400 (the Hubbard 8 x 4 cylinder, (N, Sz)) applies
itself by 1,300 to 2,900 GEMMs of 10 to 170 rows per product. Called from Python, each costs
1.5 to 3 us in NumPy's dispatch, views and temporaries, as much as its arithmetic: 13-18 ms a
product, 19 GFLOP/s. Written as a table (:class:`GemmList`: sizes, addresses, leading dimensions)
and run by one compiled loop that calls SciPy's BLAS ``dgemm``/``zgemm`` directly (Numba, the
``fast`` extra; :mod:`._gemm_list_kernels`), the same GEMMs take 5-6 ms, and with the zero
rectangles of the absorbed blocks skipped down to a call of about 0.2 us, 4-5 ms.

Without Numba (or with ``TENSOR4ALL_NATIVE=0`` in the environment) :func:`native_gemms` is None
and the callers keep their NumPy path; :data:`REASON` says why.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any

import numpy as np

from ..tools.errors import Tensor4allTypeError

__all__ = ["GemmList", "native_gemms", "native_installed", "address", "REASON", "X", "Y", "WORK"]

X, Y, WORK = 1, 2, 3
"""The buffers a table's rows may address by offset (in elements): the input vector, the output
vector and the workspace; base 0 is an absolute address (bytes)."""

_KERNELS: Any = None  # the kernel module; False where it cannot be loaded
REASON = ""
"""Why :func:`native_gemms` is None (empty while it is not)."""


def native_installed() -> bool:
    """Whether the native kernels can be used here (Numba installed, ``TENSOR4ALL_NATIVE`` not
    ``0``), without importing Numba: for choices made before any product (``conserve="auto"``)."""
    return os.environ.get("TENSOR4ALL_NATIVE", "1") != "0" and importlib.util.find_spec("numba") is not None


def native_gemms() -> Any:
    """The compiled kernels (:mod:`._gemm_list_kernels`), loaded on the first call, or None."""
    global _KERNELS, REASON
    if _KERNELS is None:
        if not native_installed():
            switched_off = os.environ.get("TENSOR4ALL_NATIVE", "1") == "0"
            _KERNELS, REASON = (
                False,
                (
                    "TENSOR4ALL_NATIVE=0 in the environment"
                    if switched_off
                    else "Numba is not installed (the fast extra: pip install -e '.[fast]')"
                ),
            )
        else:
            try:
                _KERNELS = importlib.import_module("tensor4all.linalg._gemm_list_kernels")
            except Exception as exc:  # an incompatible Numba or SciPy: the NumPy path stays
                _KERNELS, REASON = False, f"the kernels did not load: {type(exc).__name__}: {exc}"
            else:
                if _KERNELS.run is None:  # Numba found but not importable
                    _KERNELS, REASON = False, "Numba did not import (the fast extra: pip install -e '.[fast]')"
    return _KERNELS or None


def address(block: np.ndarray) -> int:
    """The address of a host array's first element."""
    return block.__array_interface__["data"][0]


class GemmList:
    """Row-major GEMMs ``C (+)= A B`` or ``C (+)= A B^T`` and zeroings of the workspace, run in
    order by one native call (:meth:`run`). An operand is ``(base, offset, leading dimension)``:
    base 0 with an absolute address (the caller keeps that array alive as long as the list), or
    :data:`X`, :data:`Y`, :data:`WORK` with an offset in elements."""

    __slots__ = ("dtype", "rows", "workspace", "table", "_run", "_kept")

    def __init__(self, dtype: Any, kernels: Any):
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float64, np.complex128):
            raise Tensor4allTypeError(f"GemmList works on float64 or complex128 buffers, got {self.dtype}")
        self._run = kernels.run
        self.rows: list[tuple] = []
        self.workspace = 0
        self.table: np.ndarray | None = None
        self._kept: list[np.ndarray] = []

    def keep(self, array: np.ndarray) -> np.ndarray:
        """``array``, kept alive as long as the list (an operand made for it alone)."""
        self._kept.append(array)
        return array

    def gemm(
        self,
        m: int,
        n: int,
        k: int,
        a_base: int,
        a_offset: int,
        lda: int,
        b_base: int,
        b_offset: int,
        ldb: int,
        c_base: int,
        c_offset: int,
        ldc: int,
        accumulate: bool,
        b_transposed: bool,
    ) -> None:
        """``C[m x n] (+)= A[m x k] B[k x n]`` (``B`` stored as ``n x k`` where ``b_transposed``);
        each operand a base, an offset and a leading dimension (plain numbers: an operator appends
        thousands of rows)."""
        self.rows.append(
            (
                int(b_transposed),
                m,
                n,
                k,
                a_base,
                a_offset,
                lda,
                b_base,
                b_offset,
                ldb,
                c_base,
                c_offset,
                ldc,
                int(accumulate),
            )
        )

    def zero_workspace(self, start: int, count: int) -> None:
        """``work[start : start + count] = 0``."""
        self.rows.append((2, count, 0, 0, 0, 0, 0, 0, 0, 0, WORK, start, 0, 0))

    def run(self, x: np.ndarray, y: np.ndarray) -> None:
        """Every row on the contiguous vectors ``x`` and ``y`` (both of :attr:`dtype`)."""
        if self.table is None:
            self.table = np.array(self.rows, dtype=np.int64).reshape(len(self.rows), 14)
        work = np.empty(self.workspace, dtype=self.dtype)
        bases = np.array([0, address(x), address(y), address(work)], dtype=np.int64)
        self._run(self.table, bases, work)
