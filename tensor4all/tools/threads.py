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

Calls from several Python threads share the count: a pthreads OpenBLAS (NumPy's and SciPy's
wheels) has one count for the process, so while calls run in several threads the count is the
least any of them asks for (an explicit ``threads=n`` of one call may run on fewer while another
call runs), and the caller's counts come back when the last call ends (:class:`_Shared`). In a
thread other than the main one the count is set through the library's thread-local setter
(``openblas_set_num_threads_local``, OpenBLAS 0.3.27 and later, which on pthreads builds writes
the process's count; MKL's ``MKL_Set_Num_Threads_Local``), reached through the handle
threadpoolctl holds, since OpenBLAS takes ``openblas_set_num_threads`` from one controlling thread
only (threadpoolctl's rule); where the library exports none, threadpoolctl's setter is the
fallback. An OpenMP build of OpenBLAS is limited per thread by threadpoolctl itself.

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
    "MAX_THREADS",
    "check_threads",
    "blas_threads",
    "threads_for",
    "thread_policy",
    "largest_bond",
    "bond_of",
]

#: Bond dimension from which ``threads=None`` keeps the BLAS library's own thread count.
THREADED_MIN_BOND = 512

#: The largest ``threads=`` taken (more than any machine's cores; a BLAS caps it at its own build
#: limit, and a C ``int`` would overflow far above it).
MAX_THREADS = 4096

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
    if not 0 <= threads <= MAX_THREADS:
        raise InvalidOptionError(
            f"threads must be None, 0 (BLAS default) or a positive integer up to {MAX_THREADS}, got {threads}"
        )
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


class _Shared:
    """The BLAS counts the policies of all threads share. A pthreads OpenBLAS (NumPy's and SciPy's
    wheels) has one count for the process, whichever setter writes it (its ``_local`` setter
    included), so two threads each saving and restoring it would undo each other's limits and
    leave the process at a stale count. Instead each thread's active requests are kept here
    (innermost last), the count applied is the least of the threads' innermost requests, and the
    counts found when the first request began are restored when the last one ends."""

    lock = threading.Lock()
    requests: dict[int, list[int]] = {}  # thread ident -> its active requests, innermost last
    saved: list[tuple[Any, int]] = []  # (library, its count before the first active request)
    applied: list[int] = []  # the count each library of ``saved`` was last given


def _set(lib: Any, n: int) -> None:
    """Set ``lib`` to ``n`` threads from this thread: through threadpoolctl in the main thread, else
    through the library's thread-local setter where it exports one (threadpoolctl passes OpenBLAS
    limits from one controlling thread only; on pthreads builds that setter writes the process's
    count too), else through threadpoolctl."""
    local = None if threading.current_thread() is threading.main_thread() else _Libraries.local.get(id(lib))
    if local is None:
        lib.set_num_threads(n)
    else:
        local(n)


def _apply(n: int | None) -> None:
    """Give every library of ``_Shared.saved`` ``n`` threads (None: its saved count); the caller
    holds the lock."""
    applied = _Shared.applied
    for k, (lib, before) in enumerate(_Shared.saved):
        m = before if n is None else n
        if applied[k] != m:
            _set(lib, m)
            applied[k] = m


def _least() -> int:
    requests = _Shared.requests
    if len(requests) == 1:
        for stack in requests.values():
            return stack[-1]
    return min(stack[-1] for stack in requests.values())


def _enter(n: int) -> None:
    """This thread asks for ``n`` BLAS threads (see :class:`_Shared`)."""
    ident = threading.get_ident()
    with _Shared.lock:
        requests = _Shared.requests
        if not requests:
            _Shared.saved = [(lib, lib.num_threads) for lib in _blas_libraries()]
            _Shared.applied = [c for _, c in _Shared.saved]
        stack = requests.get(ident)
        if stack is None:
            stack = requests[ident] = []
        stack.append(n)
        try:
            _apply(_least())
        except BaseException:
            _pop(ident)
            raise


def _leave() -> None:
    """This thread's innermost request ended: the least of the others applies, or with none left
    the counts from before the first."""
    with _Shared.lock:
        _pop(threading.get_ident())


def _pop(ident: int) -> None:
    requests = _Shared.requests
    stack = requests.get(ident)
    if stack:
        stack.pop()
    if not stack:
        requests.pop(ident, None)
    if requests:
        _apply(_least())
    else:
        _apply(None)
        _Shared.saved, _Shared.applied = [], []


class blas_threads:  # noqa: N801 (a context manager, used as a function: ``with blas_threads(...)``)
    """Limit BLAS to :func:`threads_for` threads inside the ``with`` block (``max_bond``: the
    largest bond dimension of the work; ``None``: unknown but small); the ``with`` value is
    that count (``None``: the BLAS default, or left to the enclosing policy). Inside another
    policy, ``threads=None`` changes nothing; an explicit count always applies."""

    __slots__ = ("threads", "_explicit", "_token", "_entered")

    def __init__(self, threads: int | None, max_bond: int | None):
        self._explicit = threads is not None
        self.threads = threads_for(check_threads(threads), max_bond)
        self._token: contextvars.Token[int] | None = None
        self._entered = False

    def __enter__(self) -> int | None:
        if not self._explicit and _active():
            self.threads = None  # the enclosing policy stands
            return None
        if self.threads is not None:
            _enter(self.threads)  # before the mark: a failure leaves no policy marked active
            self._entered = True
        self._token = _ACTIVE.set(threading.get_ident())
        return self.threads

    def __exit__(self, *exc: object) -> None:
        if self._entered:
            self._entered = False
            _leave()
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None


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
