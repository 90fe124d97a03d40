"""One BLAS thread policy for all library work (through threadpoolctl).

The matrix products of tensor-network work at bond dimension ``chi`` are GEMMs of about
``(chi D) x chi x (d^2 chi)``; below a few hundred, a second BLAS thread gains little on
an idle core and costs many times the run when the cores are shared: a busy machine made
the Heisenberg example 50-100x slower, and ``psi.entanglement_entropy()`` of an L = 32,
chi 64 state 56x slower (2.5 s against 0.044 s on one thread) with OpenBLAS's default
thread count. So every public call that does dense linear algebra on a state or operator
runs under one size-based policy: one thread while the largest bond dimension involved is
below :data:`THREADED_MIN_BOND`, the BLAS library's own setting above it (measured with
``python benchmarks/dmrg.py --threads``). The caller's own limits are restored on exit.

* :func:`blas_threads` is the ``with`` block of the long calls that take a ``threads=``
  keyword (``dmrg``, ``tdvp``, ``tebd``, ``apply``, ``crossinterpolate2``; checked by
  :func:`check_threads`), and of ``quantics_interpolate`` and the quantics operators.
* :func:`thread_policy` decorates the other public entry points (measurements, overlaps,
  compression, canonical forms); the size comes from the call's arguments.

Nesting is free: while a policy is active in this context (an analysis call inside a
``dmrg`` callback, ``MPS.add`` calling ``add``), an inner call with ``threads=None`` leaves
the BLAS setting alone and makes no threadpoolctl call (a context variable read, well under
a microsecond). An outer call sets the counts through threadpoolctl's library controllers,
found once (again when a module was imported since, which is how a new BLAS gets loaded):
about 10 us with NumPy's and SciPy's OpenBLAS loaded, where ``threadpoolctl.threadpool_limits``
re-scans the loaded libraries each time (about 300 us, three quarters of ``psi.expect("Sz", 3)``
at L = 8).
"""

from __future__ import annotations

import contextvars
import functools
import numbers
import sys
from typing import Any, Callable, Sequence, TypeVar

from threadpoolctl import ThreadpoolController

from .errors import InvalidOptionError, Tensor4allTypeError

__all__ = [
    "THREADED_MIN_BOND",
    "check_threads",
    "blas_threads",
    "threads_for",
    "thread_policy",
    "largest_bond",
    "bond_of",
]

#: Bond dimension from which ``threads=None`` keeps the BLAS library's own thread count.
THREADED_MIN_BOND = 512

#: Whether a thread policy is active in this context (nested calls then leave BLAS alone).
_ACTIVE: contextvars.ContextVar[bool] = contextvars.ContextVar("tensor4all_blas_policy", default=False)

F = TypeVar("F", bound=Callable[..., Any])


def check_threads(threads: object) -> int | None:
    """``threads`` validated: ``None`` (the size policy), ``0`` (BLAS default) or ``n >= 1``."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise Tensor4allTypeError(f"threads must be None, 0 or a positive integer, got {threads!r}")
    if threads < 0:
        raise InvalidOptionError(f"threads must be None, 0 (BLAS default) or a positive integer, got {threads}")
    return int(threads)


def threads_for(threads: int | None, max_bond: int | None) -> int | None:
    """The BLAS thread count a run uses: ``None`` means the BLAS library's own setting."""
    if threads is None:
        return 1 if max_bond is None or max_bond < THREADED_MIN_BOND else None
    return None if threads == 0 else threads


class _Libraries:
    """The BLAS libraries' threadpoolctl controllers, found again when ``sys.modules`` grew."""

    modules = -1
    blas: Sequence[Any] = ()


def _blas_libraries() -> Sequence[Any]:
    n = len(sys.modules)
    if n != _Libraries.modules:
        _Libraries.blas = ThreadpoolController().select(user_api="blas").lib_controllers
        _Libraries.modules = n
    return _Libraries.blas


def _limit(n: int) -> list[tuple[Any, int]]:
    """Set every BLAS library to ``n`` threads; the ``(library, previous count)`` to restore."""
    changed = []
    for lib in _blas_libraries():
        before = lib.num_threads
        if before != n:
            lib.set_num_threads(n)
            changed.append((lib, before))
    return changed


def _restore(changed: list[tuple[Any, int]]) -> None:
    for lib, before in changed:
        lib.set_num_threads(before)


class blas_threads:  # noqa: N801 (a context manager, used as a function: ``with blas_threads(...)``)
    """Limit BLAS to :func:`threads_for` threads inside the ``with`` block (``max_bond``: the
    largest bond dimension of the work; ``None``: unknown but small); the ``with`` value is
    that count (``None``: the BLAS default, or left to the enclosing policy). Inside another
    policy, ``threads=None`` changes nothing; an explicit count always applies."""

    __slots__ = ("threads", "_explicit", "_token", "_changed")

    def __init__(self, threads: int | None, max_bond: int | None):
        self._explicit = threads is not None
        self.threads = threads_for(threads, max_bond)
        self._token: contextvars.Token[bool] | None = None
        self._changed: list[tuple[Any, int]] = []

    def __enter__(self) -> int | None:
        if not self._explicit and _ACTIVE.get():
            self.threads = None  # the enclosing policy stands
            return None
        self._token = _ACTIVE.set(True)
        if self.threads is not None:
            self._changed = _limit(self.threads)
        return self.threads

    def __exit__(self, *exc: object) -> None:
        _restore(self._changed)
        if self._token is not None:
            _ACTIVE.reset(self._token)


def bond_of(x: Any) -> int:
    """The largest bond dimension of an MPS or MPO (anything with ``bond_dims``), else 0."""
    dims = getattr(x, "bond_dims", None)
    return max(dims, default=1) if isinstance(dims, list) else 0


def largest_bond(*args: Any, **kwargs: Any) -> int:
    """The largest bond dimension among the MPS and MPO arguments of a call (the default size
    of :func:`thread_policy`)."""
    return max((bond_of(a) for a in (*args, *kwargs.values())), default=0)


def thread_policy(bond: Callable[..., int | None] = largest_bond) -> Callable[[F], F]:
    """Decorate a public entry point to run under the size policy (:func:`blas_threads` with
    ``threads=None``): ``bond(*args, **kwargs)`` is the largest bond dimension of the work
    (default: of the MPS and MPO arguments, :func:`largest_bond`). Inside an active policy
    the call goes straight through."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            if _ACTIVE.get():
                return fn(*args, **kwargs)
            with blas_threads(None, bond(*args, **kwargs)):
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
