"""Optional dependencies (CuPy, pyarrow, Dask, ...) imported on first use: the one importer of
tidu, tenferro and tensor4all (public through :mod:`tenferro.checks`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["import_optional", "install_hint"]

DISTRIBUTION = "tidu-tenferro"


def install_hint(extra: str) -> str:
    """The fix for a missing optional dependency: its extra, as pip spells it."""
    return f"install the '{extra}' extra (pip install '{DISTRIBUTION}[{extra}]')"


def import_optional(names: str | Sequence[str], error: type[Exception], message: str) -> ModuleType:
    """Import ``names`` (one module, or several where later ones are submodules or companions
    of the first) and return the first; if any is missing, raise ``error(message)`` (the
    caller's typed error, its message naming the operation and the fix, e.g. from
    :func:`install_hint`) from the ``ImportError``."""
    names = [names] if isinstance(names, str) else list(names)
    try:
        for n in names:
            __import__(n)  # the import statement's own hook (what tests and sandboxes patch)
    except ImportError as exc:
        raise error(message) from exc
    return sys.modules[names[0]]
