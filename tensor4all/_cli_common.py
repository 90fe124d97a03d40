"""Small helpers the command-line programs share (``cli``, ``_cli_evolve``): the package
version, JSON-safe values and atomic text files."""
from __future__ import annotations

import math
import os
import tempfile
from importlib import metadata
from typing import Any

__all__ = ["_version", "_json_safe", "_write_atomic"]


def _version() -> str:
    try:
        return metadata.version("tidu-tenferro")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"


def _json_safe(x: Any) -> Any:
    """NaN/inf become null (JSON has no NaN); NumPy scalars become Python numbers."""
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _write_atomic(path: str, text: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
