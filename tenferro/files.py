"""Atomic file writes: the one place in tidu, tenferro and tensor4all that replaces a file.

:func:`atomic_write` gives a new temporary file in the target's directory; the caller writes
it by name; on success the file is flushed to disk (``fsync``), moved onto the target with
``os.replace`` (atomic on POSIX and Windows) and the directory entry is flushed too, so a
crash leaves either the old file or the new one, never a mixture. On any failure, a
``KeyboardInterrupt`` included, the temporary file is removed and the target is unchanged.

The temporary file gets the mode ``open()`` would give a new file (0666 less the umask,
applied by the kernel: the process umask is never changed, which would race with other
threads), or the existing target's own mode when it replaces a regular file.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["atomic_write", "remove_stale_temporaries", "special_file_kind"]


@contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield the name of a new, empty temporary file beside ``path``; write it, and when the
    block ends without an exception it replaces ``path`` (see the module docstring).

    ``OSError`` from creating the temporary file (a directory where no file can be created)
    or from the replacement propagates unchanged, for the caller to name in its own error.

    >>> with atomic_write("out.txt") as tmp, open(tmp, "w") as fh:   # doctest: +SKIP
    ...     fh.write("done")
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    tmp = _create(target, directory)
    try:
        yield tmp
        _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


_TOKEN_BYTES = 6  # the random part of a temporary file's name (12 hex digits)


def _temporary_stem(target: str) -> str:
    """The start of the names of ``target``'s temporary files: ``.<name>.`` (the name cut to 32
    characters, so a long target name still fits), then the random token and ``.tmp``."""
    return f".{os.path.basename(target)[:32]}."


def remove_stale_temporaries(path: str | os.PathLike[str]) -> list[str]:
    """Remove the temporary files that :func:`atomic_write` left beside ``path`` when its
    process was killed before the block ended (``SIGKILL``, a power cut: nothing runs to remove
    them); returns their names. Only names of :func:`atomic_write`'s pattern for this target are
    touched, so call it where no other process writes ``path`` (a scan resuming its file)."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    pattern = re.compile(rf"{re.escape(_temporary_stem(target))}[0-9a-f]{{{2 * _TOKEN_BYTES}}}\.tmp")
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if pattern.fullmatch(name):
            try:
                os.unlink(os.path.join(directory, name))
                removed.append(name)
            except OSError:
                pass
    return removed


def _create(target: str, directory: str) -> str:
    """A new empty file (``O_EXCL``) with a short random name, so a long target name still fits."""
    try:
        st = os.stat(target)
        keep = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
    except OSError:
        keep = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    stem = _temporary_stem(target)
    for _ in range(100):
        tmp = os.path.join(directory, f"{stem}{secrets.token_hex(_TOKEN_BYTES)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        if keep is not None:
            try:
                os.chmod(tmp, keep)
            except OSError:
                pass  # the new file keeps the default mode
        return tmp
    raise FileExistsError(f"no free temporary file name in {directory!r}")  # pragma: no cover


def _fsync_file(name: str) -> None:
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: str) -> None:
    """Flush the directory entry of the replaced file (POSIX; a no-op where directories
    cannot be opened, as on Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def special_file_kind(mode: int) -> str:
    """What a file that is neither a regular file nor a directory is (``os.stat(path).st_mode``),
    for the messages of the writers and readers that refuse it."""
    for test, what in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return what
    return "a special file"
