"""How much memory this machine has: the one query of tidu, tenferro and tensor4all (public
through :mod:`tenferro.checks`), used for the checks that refuse work which cannot fit."""

from __future__ import annotations

import os

__all__ = ["physical_memory", "available_memory"]


def physical_memory() -> int | None:
    """The machine's physical memory in bytes, or None where the platform does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # not POSIX
        return None


def available_memory() -> int | None:
    """Memory available to a new allocation now: Linux's ``MemAvailable`` (free memory plus
    what the kernel can reclaim), else the physical memory, else None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return physical_memory()
