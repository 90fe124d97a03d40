"""The errors of a scan: its output file and its Dask cluster."""

from __future__ import annotations

from ..tools.errors import Tensor4allError

__all__ = ["ScanFileError", "ScanFileIOError", "ScanClusterError"]


class ScanFileError(Tensor4allError, ValueError):
    """A scan's output file that cannot be resumed: not a table written by
    :func:`tensor4all.scan`, unreadable or corrupt, or a scan of another task or of other
    parameters; the message names the file and what differs."""


class ScanFileIOError(Tensor4allError, OSError):
    """The operating system refused to write a scan's output file (a missing directory, no
    permission, a full disk); the message names the path."""


class ScanClusterError(Tensor4allError, ConnectionError):
    """The Dask scheduler a scan was given by address cannot be reached; the message names
    the address and Dask's reason."""
