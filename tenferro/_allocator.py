"""The host allocator's heap slack (glibc ``M_TOP_PAD``), set once when tenferro is imported.

Results of a few MB are allocated fresh for each call (a per-example gradient of a 64x64
weight over a batch of 256 is 8 MB). glibc returns the top of its heap to the system as soon
as such a block is freed, so the next call's block is mapped again and the kernel zero-fills
every page on first touch: measured here, 1.4 ms of the 2.1 ms an 8 MB broadcast product
takes (``benchmarks/vmap.py``, the MLP case: 4.9 ms per call without, 1.9-2.8 ms with 64 MiB of
slack; the DMRG job ``python -m tensor4all dmrg``: 0.9 s without, 0.65-0.8 s with). Keeping
64 MiB at the top of the heap (``mallopt(M_TOP_PAD)``) lets those blocks be reused; resident
memory grows by at most that much.

Process-wide, so it is applied only on glibc systems, only when the user has not set the top
pad (``MALLOC_TOP_PAD_`` or ``GLIBC_TUNABLES``), and never with ``TENFERRO_MALLOC_TOP_PAD=0``
(another value: the pad in bytes).
"""

from __future__ import annotations

import ctypes
import os
import platform

__all__ = ["apply_heap_slack", "ENV", "DEFAULT_TOP_PAD"]

ENV = "TENFERRO_MALLOC_TOP_PAD"
DEFAULT_TOP_PAD = 64 << 20
_M_TOP_PAD = -2  # glibc's mallopt parameter number


def apply_heap_slack() -> int:
    """Set glibc's ``M_TOP_PAD`` (see the module); the pad set, or 0 where nothing was done."""
    value = os.environ.get(ENV, "").strip()
    if value == "0" or "MALLOC_TOP_PAD_" in os.environ or "top_pad" in os.environ.get("GLIBC_TUNABLES", ""):
        return 0
    try:
        pad = int(value) if value else DEFAULT_TOP_PAD
    except ValueError:
        return 0
    if pad <= 0 or platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return 0
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return 0
    return pad if mallopt(_M_TOP_PAD, ctypes.c_int(min(pad, 2**31 - 1))) == 1 else 0


HEAP_SLACK = apply_heap_slack()
"""The top pad set at import (0: none)."""
