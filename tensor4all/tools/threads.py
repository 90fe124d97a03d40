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
  keyword (checked by :func:`check_threads`), around all of their work (the start, the run,
  the final state and energy): ``dmrg``, ``excited_states``, ``tdvp``, ``tebd``, ``apply``,
  ``tci.crossinterpolate2``; ``vumps``, ``idmrg``, ``itebd``, ``itdvp``; ``trees.tree_dmrg``,
  ``trees.apply_fit``, ``trees.tree_linsolve``; ``dynamical_correlation``,
  ``spectral_function_chebyshev``; ``thermal_state``, ``thermodynamics``, ``evolve_thermal``. Also of
  ``quantics_interpolate``, each METTS chain (one thread: chains run side by side) and each
  command of the command line (``--threads``: its runs, exact references and analysis).
* :func:`thread_policy` decorates the other public entry points that do dense linear algebra:
  the methods of ``MPS``, ``MPO``, ``iMPS``, ``TreeTN``, ``TreeOperator`` and ``QuanticsTT`` (their
  construction from dense data and random states included), ``overlap``, ``add``,
  ``expectation``, :mod:`tensor4all.measurements`, the transfer-matrix measurements and fits of
  :mod:`tensor4all.infinite`, ``trees.inner`` and the tree TCIs, the tensor-train helpers of
  :mod:`tensor4all.tci`, the quantics operators, ``linear_prediction``, ``spectral_function``,
  ``metts``, ``to_tenpy``/``mpo_to_tenpy``, :mod:`tensor4all.structured.linalg` and the structured
  ``einsum``, ``matmul`` and ``tensordot`` (sized by their largest block); the size
  comes from the call's arguments: the bond dimension, or for a dense output (``to_dense``) the
  side of a square matrix of as many entries, for a dense input (``MPS.from_dense``) the largest
  matrix its SVDs factor. ``tests/tensor4all/test_thread_coverage.py`` lists every export, with a
  call that checks it or the reason it does no dense linear algebra.

In a thread other than the main one the counts are that thread's own: OpenBLAS takes
``openblas_set_num_threads`` from one controlling thread only (threadpoolctl's rule; the main
thread, once it has set a limit), so there the library's thread-local setter is used
(``openblas_set_num_threads_local``, OpenBLAS 0.3.27 and later on pthreads; MKL's
``MKL_Set_Num_Threads_Local``), reached through the handle threadpoolctl holds, and the thread's
own count is cleared (or set back) on exit. Where the library exports none, the process-wide
setting is the fallback (and may not apply). An OpenMP build of OpenBLAS is limited per thread
by threadpoolctl itself.

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
import ctypes
import functools
import numbers
import sys
import threading
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

#: The thread whose policy is active in this context (nested calls there then leave BLAS alone); a
#: context copied into another thread (``asyncio.to_thread``) does not carry the limit with it.
_ACTIVE: contextvars.ContextVar[int] = contextvars.ContextVar("tensor4all_blas_policy", default=0)


def _active() -> bool:
    return _ACTIVE.get() == threading.get_ident()


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
    """The BLAS libraries' threadpoolctl controllers, found again when ``sys.modules`` grew, and
    each one's thread-local setter (``None`` where it exports none)."""

    modules = -1
    blas: Sequence[Any] = ()
    local: dict[int, Any] = {}


#: the thread-local setters: ``int f(int n)`` sets the calling thread's count (``0``: back to the
#: process-wide one). OpenBLAS (pthreads or single-threaded build; from 0.3.27) and MKL export one;
#: an OpenMP build of OpenBLAS is limited per thread by threadpoolctl's ``omp_set_num_threads``.
_LOCAL_SETTERS = {
    "openblas": tuple(
        f"{prefix}openblas_set_num_threads_local{suffix}" for prefix in ("", "scipy_") for suffix in ("", "64_", "_64")
    ),
    "mkl": ("MKL_Set_Num_Threads_Local", "mkl_set_num_threads_local"),
}


def _local_setter(lib: Any) -> Any:
    """``lib``'s thread-local setter through its loaded library handle (``lib.dynlib``), or ``None``."""
    if getattr(lib, "threading_layer", None) == "openmp" and lib.internal_api == "openblas":
        return None  # threadpoolctl's own setter is per thread there
    handle = getattr(lib, "dynlib", None)
    for name in _LOCAL_SETTERS.get(lib.internal_api, ()):
        fn = getattr(handle, name, None)
        if fn is not None:
            fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
            return fn
    return None


def _blas_libraries() -> Sequence[Any]:
    n = len(sys.modules)
    if n != _Libraries.modules:
        _Libraries.blas = ThreadpoolController().select(user_api="blas").lib_controllers
        _Libraries.local = {id(lib): _local_setter(lib) for lib in _Libraries.blas}
        _Libraries.modules = n
    return _Libraries.blas


def _limit(n: int) -> list[tuple[Any, int]]:
    """Set every BLAS library to ``n`` threads; the ``(library, previous count)`` to restore.

    In the main thread the library's count is set through threadpoolctl (process-wide for
    OpenBLAS on pthreads). In any other thread that setting does not take effect (threadpoolctl
    passes OpenBLAS limits from one controlling thread only, the main thread once it has set
    one), so there the library's thread-local setter sets this thread's count alone; where the
    library exports none, the threadpoolctl setting is the fallback."""
    changed = []
    main = threading.current_thread() is threading.main_thread()
    for lib in _blas_libraries():
        before = lib.num_threads
        if before != n:
            local = None if main else _Libraries.local.get(id(lib))
            if local is None:
                lib.set_num_threads(n)
            else:
                local(n)
                lib = _Local(lib, local)
            changed.append((lib, before))
    return changed


class _Local:
    """A library limited through its thread-local setter: restored by clearing this thread's own
    count (``0``: the process-wide one again) and setting it back only where that differs."""

    __slots__ = ("lib", "setter")

    def __init__(self, lib: Any, setter: Any):
        self.lib, self.setter = lib, setter

    def set_num_threads(self, before: int) -> None:
        self.setter(0)
        if self.lib.num_threads != before:
            self.setter(before)


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
        if not self._explicit and _active():
            self.threads = None  # the enclosing policy stands
            return None
        self._token = _ACTIVE.set(threading.get_ident())
        if self.threads is not None:
            self._changed = _limit(self.threads)
        return self.threads

    def __exit__(self, *exc: object) -> None:
        _restore(self._changed)
        if self._token is not None:
            _ACTIVE.reset(self._token)


def bond_of(x: Any) -> int:
    """The largest bond dimension of an MPS, MPO, iMPS or tree network (anything with
    ``bond_dims``: a list, or a dict ``{edge: dimension}``), else 0."""
    dims = getattr(x, "bond_dims", None)
    if isinstance(dims, dict):
        dims = list(dims.values())
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
            if _active():
                return fn(*args, **kwargs)
            with blas_threads(None, bond(*args, **kwargs)):
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
