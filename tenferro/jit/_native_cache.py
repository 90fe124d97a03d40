"""Loading a native program's machine code from Numba's disk cache without preparing a compiler.

Numba's cache load first *refreshes* its CPU target: it imports and registers every
typing and lowering registry (NumPy, ``math``, typed containers, random, ...), which a
compilation needs and a load does not. In a second process that refresh is most of the
cost of starting a cached native program (about 0.5 s of 0.7 s, on top of ``import numba``):
:func:`load_without_refresh` makes one dispatcher's cache load do only what running the
loaded code needs (the runtime's initialization: NumPy arrays are allocated through it),
then rebuild the cached library. When the cache has no entry (or the quick load fails),
the dispatcher compiles as usual, and Numba's compiler then refreshes the target itself.

Imported only by the generated modules of :mod:`._native` (so ``import tenferro`` never
imports Numba); it reads three private names of Numba's ``FunctionCache``
(``_cache``, ``_load_overload``, ``_guard_against_spurious_io_errors``) and leaves a
dispatcher that lacks them as it is.
"""

from __future__ import annotations

from typing import Any

try:  # imported by generated modules only, but the package's import walk reaches it without Numba
    from numba.core.runtime import nrt
except ImportError:  # (the fast extra not installed): nothing to patch
    nrt = None

__all__ = ["load_without_refresh"]


def load_without_refresh(dispatcher: Any) -> None:
    """Make ``dispatcher``'s disk-cache loads skip the target refresh (see the module)."""
    if nrt is None:
        return
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "_load_overload", None)
    guard = getattr(cache, "_guard_against_spurious_io_errors", None)
    if load is None or guard is None:  # another Numba: its own load, unchanged
        return
    full_load = cache.load_overload

    def load_overload(sig: Any, target_context: Any) -> Any:
        try:
            nrt.rtsys.initialize(target_context)  # what the refresh does that running needs
            with guard():
                result = load(sig, target_context)
        except Exception:  # anything the refresh would have prepared: Numba's own load
            return full_load(sig, target_context)
        return result

    cache.load_overload = load_overload
