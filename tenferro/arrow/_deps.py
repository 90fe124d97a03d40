"""The optional pyarrow dependency and the errors of :mod:`tenferro.arrow`.

pyarrow is imported on first use only (``import tenferro`` never imports it); its
absence raises :class:`OptionalDependencyError` naming the ``arrow`` extra.
"""

from __future__ import annotations

from typing import Any

from .._errors import OptionalDependencyError, TenferroError
from .._optional import import_optional, install_hint

__all__ = ["OptionalDependencyError", "TensorFileError", "TensorFileNotFoundError", "import_pyarrow", "MIN_PYARROW"]

MIN_PYARROW = (14, 0)


class TensorFileError(TenferroError, OSError):
    """A tensor file cannot be written or read: an unusable path (a directory, a name
    too long, a directory where no file can be created), a truncated or corrupt file,
    or a file that is not an Arrow IPC / Parquet tensor file. The message names the
    file and the problem."""


class TensorFileNotFoundError(TensorFileError, FileNotFoundError):
    """The file to load, or the directory to save into, does not exist."""


def import_pyarrow(op: str) -> Any:
    """Import pyarrow, or raise :class:`OptionalDependencyError` naming ``op`` and the extra."""
    pyarrow = import_optional(
        "pyarrow", OptionalDependencyError, f"{op}: pyarrow is not installed; {install_hint('arrow')}, i.e. pyarrow>=14"
    )
    version = tuple(int(p) for p in pyarrow.__version__.split(".")[:2] if p.isdigit())
    if version < MIN_PYARROW:
        raise OptionalDependencyError(
            f"{op}: pyarrow {pyarrow.__version__} is too old; the 'arrow' extra needs pyarrow>=14 "
            "(pip install -U 'tidu-tenferro[arrow]')"
        )
    return pyarrow
