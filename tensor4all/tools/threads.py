"""BLAS threads for the duration of a sweep algorithm (through threadpoolctl).

The matrix products of a sweep at bond dimension ``chi`` are GEMMs of about
``(chi D) x chi x (d^2 chi)``; below a few hundred, a second BLAS thread gains little on
an idle core and costs many times the run when the cores are shared (a busy machine
made the Heisenberg example 50-100x slower). So the default policy (``threads=None``)
runs one thread while the largest bond dimension of the schedule is below
:data:`THREADED_MIN_BOND` and leaves the BLAS default above it (measured with
``python benchmarks/dmrg.py --threads``). The caller's own limits are restored on exit.
"""

from __future__ import annotations

import contextlib
import numbers
from typing import Iterator

from threadpoolctl import threadpool_limits

from .errors import InvalidOptionError, Tensor4allTypeError

__all__ = ["THREADED_MIN_BOND", "check_threads", "blas_threads", "threads_for"]

#: Bond dimension from which ``threads=None`` keeps the BLAS library's own thread count.
THREADED_MIN_BOND = 512


def check_threads(threads: object) -> int | None:
    """``threads`` validated: ``None`` (the size policy), ``0`` (BLAS default) or ``n >= 1``."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise Tensor4allTypeError(f"threads must be None, 0 or a positive integer, got {threads!r}")
    if threads < 0:
        raise InvalidOptionError(f"threads must be None, 0 (BLAS default) or a positive integer, got {threads}")
    return int(threads)


def threads_for(threads: int | None, max_bond: int) -> int | None:
    """The BLAS thread count a run uses: ``None`` means the BLAS library's own setting."""
    if threads is None:
        return 1 if max_bond < THREADED_MIN_BOND else None
    return None if threads == 0 else threads


@contextlib.contextmanager
def blas_threads(threads: int | None, max_bond: int) -> Iterator[int | None]:
    """Limit BLAS to :func:`threads_for` threads inside the ``with`` block."""
    n = threads_for(threads, max_bond)
    if n is None:
        yield None
        return
    with threadpool_limits(limits=n, user_api="blas"):
        yield n
