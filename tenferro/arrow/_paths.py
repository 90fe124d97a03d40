"""Paths of tensor files: the checks :func:`~tenferro.arrow.save` and
:func:`~tenferro.arrow.load` make before a file is opened.

* :func:`_fs_path`: a ``str``/``bytes``/``os.PathLike`` argument as a :class:`~pathlib.Path`,
  refusing empty names, NUL characters and paths that name a directory (a trailing
  separator, ``.`` or ``..``, which pathlib would silently drop).
* :func:`_format_of`: the format (:data:`FORMATS`) to write, from ``format=`` or the
  extension; another format's extension, or a contradiction, is refused.
* :func:`_resolve` and :func:`_check_target`: the file a write replaces (through a
  symbolic link) and the directory it goes into, with the name and path length limits
  and the refusal to replace a directory, FIFO, socket or device.
"""

from __future__ import annotations

import mmap as _mmap
import os
import re
import stat
from pathlib import Path
from typing import Any

from ..files import special_file_kind
from .._errors import TenferroTypeError, TenferroValueError
from ._deps import TensorFileError, TensorFileNotFoundError

__all__ = ["FORMATS"]

FORMATS = ("arrow", "parquet")
#: extensions of the two formats, and of others that a tensor file must not be named after
_SUFFIX_FORMATS = {".arrow": "arrow", ".ipc": "arrow", ".feather": "arrow", ".parquet": "parquet", ".pq": "parquet"}
_OTHER_FORMATS = {
    ".npz": "NumPy .npz",
    ".npy": "NumPy .npy",
    ".h5": "HDF5",
    ".hdf5": "HDF5",
    ".pt": "PyTorch",
    ".pth": "PyTorch",
    ".pkl": "pickle",
    ".pickle": "pickle",
    ".json": "JSON",
    ".csv": "CSV",
    ".txt": "text",
    ".mat": "MATLAB",
    ".nc": "netCDF",
    ".zarr": "Zarr",
    ".safetensors": "safetensors",
    ".arrows": "Arrow IPC stream",
}
#: the path separators of this system ("/", or "\\" and "/" on Windows)
_SEPARATORS = os.sep + (os.altsep or "")


def _fs_path(op: str, path: Any) -> Path:
    """``path`` (str, bytes or os.PathLike) as a Path, or a typed error naming what is wrong with it."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TenferroTypeError(
            f"{op}: path must be a str or os.PathLike (e.g. pathlib.Path), got {type(path).__name__} {path!r}"
        )
    try:
        raw = os.fsdecode(os.fspath(path))
    except (TypeError, UnicodeDecodeError) as exc:  # a PathLike whose __fspath__ returns another type
        raise TenferroTypeError(f"{op}: path {path!r} does not give a file name ({exc})") from exc
    if not raw:
        raise TenferroValueError(f"{op}: the path is empty; expected a file name")
    if "\0" in raw:
        raise TenferroValueError(f"{op}: path {raw!r} contains a NUL character, which no file name can hold")
    # pathlib drops a trailing separator or "." ("x.arrow/" and "x.arrow/." become "x.arrow"), so such a path
    # would write or read the file x.arrow where the operating system refuses it: it names a directory
    last = re.split(f"[{re.escape(_SEPARATORS)}]", raw)[-1]
    if last in ("", ".", ".."):
        raise TensorFileError(f"{op}: {raw!r} names a directory (it ends in {last or raw[-1]!r}); expected a file path")
    return Path(raw)


def _short(name: str) -> str:
    return repr(name) if len(name) <= 60 else repr(name[:40] + "..." + name[-12:])


def _pathconf(directory: Path, key: str, default: int) -> int:
    try:
        return int(os.pathconf(directory, key))
    except (AttributeError, ValueError, OSError):  # no pathconf (Windows), or no limit known here
        return default


def _format_of(op: str, target: Path, format: Any) -> str:  # noqa: A002
    """The format to write: ``format`` or the one the extension names; a contradiction is an error."""
    if format is not None and (not isinstance(format, str) or format not in FORMATS):
        raise TenferroValueError(
            f"{op}: unknown format {format!r}; expected one of {FORMATS} (or None: from the extension)"
        )
    suffix = target.suffix.lower()
    other = _OTHER_FORMATS.get(suffix)
    if other is not None:
        raise TenferroValueError(
            f"{op}: {str(target)!r} ends in {suffix}, the extension of {other} files, but "
            f"tenferro.save writes Arrow IPC or Parquet; name the file .arrow or .parquet "
            f"(recognised extensions: {', '.join(_SUFFIX_FORMATS)})"
        )
    implied = _SUFFIX_FORMATS.get(suffix)
    if format is None:
        return implied or "arrow"
    if implied is not None and implied != format:
        raise TenferroValueError(
            f"{op}: format={format!r} contradicts the extension of {str(target)!r} ({suffix} "
            f"is {implied}); change the extension or drop format="
        )
    return format


def _kind_of(path: Path) -> str:
    """``"dir"``, ``"file"``, ``"missing"`` or ``"other"`` (never raises)."""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"


def _check_target(op: str, target: Path) -> Path:
    """The directory to write ``target`` into, after the checks that need no write."""
    directory = target.parent  # Path("x").parent is Path(".")
    name = target.name
    name_max = _pathconf(directory, "PC_NAME_MAX", 255) if _kind_of(directory) == "dir" else 255
    if len(os.fsencode(name)) > name_max:
        raise TensorFileError(
            f"{op}: cannot write in {str(directory)!r}: the file name {_short(name)} is too "
            f"long ({len(os.fsencode(name))} bytes; at most {name_max} here)"
        )
    kind = _kind_of(directory)
    if kind == "missing":
        raise TensorFileNotFoundError(
            f"{op}: cannot write {str(target)!r}: directory {str(directory)!r} does not exist"
        )
    if kind != "dir":
        raise TensorFileError(f"{op}: cannot write {str(target)!r}: {str(directory)!r} is not a directory")
    path_max = _pathconf(directory, "PC_PATH_MAX", 4096)
    if len(os.fsencode(os.path.abspath(target))) >= path_max:
        raise TensorFileError(
            f"{op}: cannot write {str(target)!r}: the path is too long "
            f"({len(os.fsencode(os.path.abspath(target)))} bytes; at most {path_max - 1} here)"
        )
    try:
        mode = os.stat(target).st_mode
    except OSError:  # no such file (yet): it will be created
        mode = stat.S_IFREG
    if stat.S_ISDIR(mode):
        raise TensorFileError(f"{op}: {str(target)!r} is a directory; expected a file path")
    if not stat.S_ISREG(mode):  # replacing a FIFO, a socket or a device (/dev/null) by a regular file is never meant
        raise TensorFileError(
            f"{op}: {str(target)!r} is {special_file_kind(mode)}, not a regular file; tenferro.save "
            "writes or replaces regular files only"
        )
    return directory


def _resolve(op: str, target: Path) -> Path:
    """The file to write for ``target``: ``target`` itself, or the file a symbolic link at ``target``
    points to (resolved fully, even when dangling), so that the link keeps pointing at the new data."""
    if not os.path.islink(target):
        return target
    real = Path(os.path.realpath(target))
    if os.path.islink(real):  # realpath stops at a loop
        raise TensorFileError(
            f"{op}: cannot write {str(target)!r}: it is a symbolic link that leads to a loop of links"
        )
    return real


def arrow_path(path: Path) -> str | None:
    """``path`` as pyarrow's readers and writers take it: absolute, so that a relative name
    such as ``run:1.parquet`` is never parsed as a URI (``pyarrow.parquet.read_table`` does);
    None where the name is not valid UTF-8 (a bytes path, legal on POSIX, that pyarrow cannot
    encode): the file then goes through Python (:func:`python_source`, a Python file object)."""
    text = os.path.abspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return text


def python_source(pa: Any, path: Path, mmap: bool) -> Any:
    """A pyarrow reader over the file at ``path`` opened by Python: its bytes mapped read-only
    (``mmap``; the buffer holds the mapping) or read into memory."""
    with open(path, "rb") as fh:
        data = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ) if mmap else fh.read()
    return pa.BufferReader(pa.py_buffer(data))
