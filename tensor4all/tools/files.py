"""The check of an output file before any work starts, shared by :func:`tensor4all.scan` and
the command-line programs (``tensor4all dmrg``, ``evolve`` and ``scan``).

Their files are written atomically (:func:`tenferro.files.atomic_write`: a temporary file of a
short name in the same directory, then ``os.replace``), so the directory must take a new file: a
scan, or a run, whose output cannot be written is refused before its first point or sweep, not
after all of them.
"""

from __future__ import annotations

import os
import tempfile

__all__ = ["output_problem"]


def output_problem(path: str) -> str | None:
    """Why no file can be written at ``path`` through a temporary file in its directory,
    as a message that ends with the fix, or None when it can."""
    if not path.strip():
        return "the file name is empty; give a file name"
    if "\0" in path:
        return f"the file name {path!r} holds a NUL character; give a file name without one"
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"{path!r} is a directory; give a file name"
    if os.path.exists(path) and not os.path.isfile(path):
        return f"{path!r} exists and is not a regular file (a FIFO, socket or device); give a file name"
    if not os.path.isdir(directory):
        if os.path.exists(directory):
            return f"{directory!r} is not a directory; give a path in an existing directory"
        return f"directory {directory!r} does not exist; create it or give a path in an existing directory"
    name_max = _name_max(directory)
    if len(os.fsencode(os.path.basename(path))) > name_max:
        return (
            f"the file name {os.path.basename(path)!r} is too long (at most {name_max} bytes here); give a shorter name"
        )
    try:  # the probe: a short-named temporary file, as atomic_write makes, removed at once
        fd, probe = tempfile.mkstemp(prefix=".probe.", suffix=".tmp", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return (
            f"cannot write in directory {directory!r}: no file can be created there ({e.strerror or e}); "
            "give a path in a writable directory"
        )
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"{path!r} exists and is not writable; make it writable or give another file name"
    return None


def _name_max(directory: str) -> int:
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):
        return 255
