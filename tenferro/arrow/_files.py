"""Tensor files: :func:`save` and :func:`load` (Arrow IPC file format or Parquet).

A tensor file is one Arrow table holding the entries of the dict given to
:func:`save` as ``fixed_shape_tensor`` data (see :mod:`tenferro.arrow._convert`). A
single tensor is one row and a list is one row per tensor (``None`` is a null row).
When all entries have the same length (lists of equal length, or only single
tensors such as the site tensors of an MPS) the table has one ``fixed_shape_tensor``
column per entry and one row per tensor: the layout other Arrow and Parquet tools
expect of a dataset. Otherwise (e.g. a batch of snapshots next to one Hamiltonian)
the table has a single row and each column is a ``list<fixed_shape_tensor>`` holding
one entry's tensors; the schema metadata ``tenferro.layout`` says which (``rows`` or
``packed``). Both layouts are read without a copy from memory-mapped IPC files.

Field metadata records what Arrow cannot: ``tenferro.kind`` (``tensor`` or
``list``) and ``tenferro.dtype`` (the tenferro dtype; a complex dtype means the
column holds (re, im) pairs in a trailing axis, which :func:`load` turns back into
complex tensors without a copy; the column's type marks them too, see
:mod:`tenferro.arrow._convert`, so a column read alone comes back complex as well).
Files from other producers load as lists of tensors; metadata that contradicts
the column (another dtype, an unknown kind) is an error, not a guess. The schema
metadata ``tenferro.version`` is the file format's version (1); :func:`load` refuses a
file of another version (a newer tenferro's, whose tensors may mean something else) or
of a ``tenferro.layout`` it does not know, naming what it found and what it reads.

The format follows the extension (``.arrow``/``.ipc``/``.feather``: Arrow IPC,
``.parquet``/``.pq``: Parquet, anything else: Arrow IPC unless ``format=`` says
otherwise). The extension of another format (``.npz``, ``.npy``, ``.h5``, ``.pt``,
``.json``, ...) and a ``format=`` that contradicts the extension are refused, so a
file never carries a name that promises what it does not hold.

Writing is atomic: everything is converted and checked first, then written to a
temporary file beside ``path`` (created with the mode a new file gets, or the mode
of the file it replaces) that replaces ``path`` only when complete, so a failure
never leaves a half-written file, never touches an earlier file at ``path``, and
leaves no temporary file behind. A symbolic link at ``path`` is followed: the file it
points to is replaced (the temporary file beside it) and the link is kept. Arrow IPC
files are written uncompressed (unless ``compression=`` is given) so that :func:`load`
can memory-map them: the loaded tensors are then read-only views of the mapped file,
and nothing is read until it is used. Parquet always decodes into memory.

Errors: a path of the wrong type is a :class:`~tenferro.TenferroTypeError`; a
missing file or directory a :class:`TensorFileNotFoundError` (also a
``FileNotFoundError``); any other unusable path or unreadable file a
:class:`TensorFileError` (an ``OSError``) naming the file and the problem: among them a
path ending in a separator, ``.`` or ``..`` (it names a directory; pathlib would drop the
ending and use the file before it), and a FIFO, socket or device, which :func:`load`
never opens (a FIFO without a writer would block forever) and :func:`save` never replaces.
Those checks of a path, and the format from its extension, are in :mod:`tenferro.arrow._paths`.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from .._dtypes import DType, dtype as _dtype
from .._errors import TenferroError, TenferroTypeError, TenferroValueError
from .._tensor import Tensor
from ..files import atomic_write, special_file_kind
from ._convert import ArrowTensorInfo, _flag, from_arrow, tensor_info, to_arrow
from ._deps import TensorFileError, TensorFileNotFoundError, import_pyarrow
from ._paths import _check_target, _format_of, _fs_path, _resolve, arrow_path, python_source

__all__ = ["save", "load", "LoadedTensors"]

_KIND = b"tenferro.kind"
_DTYPE = b"tenferro.dtype"
_VERSION = b"tenferro.version"
_LAYOUT = b"tenferro.layout"
#: the file format version :func:`save` writes, and those :func:`load` reads (a file
#: without ``tenferro.version``, from another producer, is read as plain fixed_shape_tensor
#: columns)
_FORMAT_VERSION = 1
_READ_VERSIONS = (1,)
#: the table layouts :func:`load` reads (``tenferro.layout``; files of version 1 written
#: before the packed layout existed have none: their columns say which)
_LAYOUTS = ("rows", "packed")
_ARROW_MAGIC = b"ARROW1"
_PARQUET_MAGIC = b"PAR1"
#: what a file that is not a tensor file probably is, by its first bytes
_MAGIC_HINTS = {
    b"PK\x03\x04": "a zip archive (a NumPy .npz file?)",
    b"\x93NUMPY": "a NumPy .npy file",
    b"\x89HDF\r\n\x1a\n": "an HDF5 file",
    b"\xff\xff\xff\xff": "an Arrow IPC stream (tenferro reads the Arrow IPC file format)",
}
_IPC_CODECS = ("lz4", "zstd")
_PARQUET_CODECS = ("none", "snappy", "gzip", "brotli", "lz4", "zstd")
_PREFIXES = ("to_arrow: ", "from_arrow: ", "tensor_info: ")


class LoadedTensors(dict):
    """The entries of a tensor file (name -> Tensor, or list of Tensor/None, in file
    order), plus ``dim_names``: name -> dimension names in logical order (or None)."""

    dim_names: dict[str, tuple[str, ...] | None]

    def __init__(self, entries: dict[str, Any], dim_names: dict[str, tuple[str, ...] | None]) -> None:
        super().__init__(entries)
        self.dim_names = dim_names


@contextmanager
def _context(prefix: str) -> Iterator[None]:
    """Re-raise a tenferro error from a lower-level call (``to_arrow``, ``from_arrow``) as the same
    class with ``prefix`` (the entry or column and file) in front of its message."""
    try:
        yield
    except TensorFileError:
        raise
    except TenferroError as exc:
        msg = str(exc)
        if msg.startswith(prefix):
            raise
        for low in _PREFIXES:
            if msg.startswith(low):
                msg = msg[len(low) :]
                break
        try:
            new = type(exc)(f"{prefix}: {msg}")
        except Exception:  # noqa: BLE001  (a class with another constructor: keep the original)
            raise exc from None
        raise new from exc


def _column(pa: Any, name: str, value: Any, names: Any) -> tuple[Any, str, DType]:
    """``(array, kind, dtype)`` for one entry."""
    if isinstance(value, Tensor):
        arr = to_arrow([value], names)
        return arr, "tensor", value.dtype
    if isinstance(value, (pa.Array, pa.ChunkedArray)):
        if names is not None:
            raise TenferroValueError(
                f"save: entry {name!r} is an Arrow array, which carries its own dim_names; do not pass dim_names for it"
            )
        info = tensor_info(value)
        return value, "list", info.dtype.complex_dtype if info.is_complex else info.dtype
    if isinstance(value, (list, tuple)):
        arr = to_arrow(list(value), names)
        return arr, "list", next(t for t in value if t is not None).dtype
    raise TenferroTypeError(
        f"save: entry {name!r} is a {type(value).__name__}; expected a Tensor, a list of "
        "Tensors (None for nulls) or a fixed_shape_tensor array from tenferro.arrow.to_arrow"
    )


def _table(pa: Any, entries: Mapping[str, Any], dim_names: Mapping[str, Sequence[str]] | None) -> Any:
    if not isinstance(entries, Mapping) or not entries:
        raise TenferroTypeError(
            "save: expected a non-empty dict {name: tensor or list of tensors}, got "
            f"{type(entries).__name__ if not isinstance(entries, Mapping) else 'an empty dict'}"
        )
    for name in entries:
        if not isinstance(name, str):
            raise TenferroTypeError(
                f"save: entry names must be non-empty strings, got {name!r} of type {type(name).__name__}"
            )
        if not name:
            raise TenferroValueError("save: entry names must be non-empty strings, got ''")
    if dim_names is not None and not isinstance(dim_names, Mapping):
        raise TenferroTypeError(
            f"save: dim_names must be a dict {{entry name: dimension names}} or None, got "
            f"{type(dim_names).__name__} {dim_names!r}"
        )
    dim_names = {} if dim_names is None else dict(dim_names)
    unknown = [k for k in dim_names if k not in entries]
    if unknown:
        raise TenferroValueError(
            f"save: dim_names given for {unknown!r}, which are not entries; entries are {list(entries)}"
        )
    columns, metas = [], []
    for name, value in entries.items():
        with _context(f"save: entry {name!r}"):
            arr, kind, dt = _column(pa, name, value, dim_names.get(name))
        columns.append(arr)
        metas.append({_KIND: kind.encode(), _DTYPE: dt.name.encode()})
    layout = "rows" if len({len(a) for a in columns}) == 1 else "packed"
    if layout == "packed":  # one row; each column a list holding one entry's tensors (no copy of the tensors)
        columns = [
            pa.ListArray.from_arrays(
                pa.array([0, len(a)], pa.int32()), a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
            )
            for a in columns
        ]
    fields = [pa.field(name, a.type, nullable=True, metadata=m) for name, a, m in zip(entries, columns, metas)]
    return pa.Table.from_arrays(
        columns, schema=pa.schema(fields, metadata={_VERSION: str(_FORMAT_VERSION).encode(), _LAYOUT: layout.encode()})
    )


def _check_parquet_readable(pa: Any, table: Any) -> None:
    """Refuse columns that pyarrow writes to Parquet but cannot read back."""
    version = tuple(int(p) for p in pa.__version__.split(".")[:2] if p.isdigit())
    for field, column in zip(table.schema, table.columns):
        if not isinstance(field.type, pa.FixedShapeTensorType):  # packed layout: list<fixed_shape_tensor>
            column = pa.chunked_array([c.values for c in column.chunks], field.type.value_type)
        if column.type.storage_type.list_size == 0:
            raise TenferroValueError(
                f"save: entry {field.name!r} holds size-0 tensors, which pyarrow writes to Parquet but cannot read "
                "back (zero-length fixed-size lists); use format='arrow'"
            )
        if column.null_count and version < (26, 0):
            raise TenferroValueError(
                f"save: entry {field.name!r} has null tensors, which pyarrow {pa.__version__} cannot read back from "
                "Parquet (null fixed-size lists, apache/arrow#35692, fixed in pyarrow 26); use format='arrow' or "
                "upgrade pyarrow"
            )


def _write_options(pa: Any, op: str, fmt: str, compression: Any) -> Any:
    """Checked ``compression``: IpcWriteOptions for Arrow IPC, write_table kwargs for Parquet."""
    if compression is not None and not isinstance(compression, str):
        raise TenferroTypeError(
            f"{op}: compression must be a codec name or None, got {type(compression).__name__} {compression!r}"
        )
    codec = None if compression is None else compression.lower()
    valid = _IPC_CODECS if fmt == "arrow" else _PARQUET_CODECS
    if fmt == "arrow" and codec == "none":
        codec = None
    if codec is not None and (codec not in valid or (codec != "none" and not pa.Codec.is_available(codec))):
        raise TenferroValueError(
            f"{op}: compression {compression!r} is not available for {fmt}; expected None or one "
            f"of {', '.join(c for c in valid if c == 'none' or pa.Codec.is_available(c))}"
        )
    if fmt == "arrow":
        import pyarrow.ipc as ipc  # noqa: PLC0415  (optional dependency)

        return ipc.IpcWriteOptions(compression=codec)
    return {} if codec is None else {"compression": codec}


def _write(pa: Any, table: Any, tmp: Path, fmt: str, options: Any) -> None:
    """Write ``table`` to the file ``tmp`` (the one step that tests replace with a failing one):
    through pyarrow's own file where it can encode the name, else a Python file object."""
    where = arrow_path(tmp)
    with ExitStack() as stack:
        fh = None if where is not None else stack.enter_context(open(tmp, "wb"))
        if fmt == "arrow":
            import pyarrow.ipc as ipc  # noqa: PLC0415  (optional dependency)

            sink = pa.OSFile(where, "wb") if fh is None else pa.PythonFile(fh, mode="w")
            with sink, ipc.new_file(sink, table.schema, options=options) as writer:
                writer.write_table(table)
        else:
            import pyarrow.parquet as pq  # noqa: PLC0415  (optional dependency)

            pq.write_table(table, where if fh is None else fh, use_dictionary=False, **options)


def save(
    path: str | os.PathLike[str],
    entries: Mapping[str, Any],
    *,
    format: str | None = None,  # noqa: A002
    dim_names: Mapping[str, Sequence[str]] | None = None,
    compression: str | None = None,
) -> None:
    """Write named tensors to ``path`` as an Arrow IPC file (``format="arrow"``) or Parquet.

    ``entries`` maps names to a Tensor, a list of same-shape Tensors (``None`` for a
    null entry), or a ``fixed_shape_tensor`` array (e.g. ``to_arrow(batch,
    batch_axis=-1)``, written without an extra copy). Entries may have different
    lengths (see the module docstring for the two table layouts).
    ``dim_names`` maps entry names to dimension names (logical order).
    ``format`` defaults to the extension's (``.parquet``/``.pq``: Parquet, else Arrow
    IPC); another format's extension (``.npz``, ...) or a contradicting ``format=``
    raises. ``compression`` names a codec (Arrow IPC: ``lz4`` or ``zstd``, default
    none, which keeps memory mapping possible; Parquet: ``none``, ``snappy`` (the
    default), ``gzip``, ``brotli``, ``lz4``, ``zstd``). Complex tensors are stored as
    (re, im) pairs. The write is atomic (see the module docstring).
    """
    op = "save"
    pa = import_pyarrow(op)
    target = _fs_path(op, path)
    fmt = _format_of(op, target, format)
    options = _write_options(pa, op, fmt, compression)
    table = _table(pa, entries, dim_names)
    if fmt == "parquet":
        _check_parquet_readable(pa, table)
    dest = _resolve(op, target)  # a link: write (and replace) the file it points to, not the link
    directory = _check_target(op, dest)
    created = False
    try:
        with atomic_write(dest) as tmp:  # KeyboardInterrupt too: never a half-written file or a stray temporary
            created = True
            _write(pa, table, Path(tmp), fmt, options)
    except TenferroError:
        raise
    except Exception as exc:
        if not created:
            raise TensorFileError(
                f"{op}: cannot write {str(target)!r}: no file can be created in directory "
                f"{str(directory)!r} ({getattr(exc, 'strerror', None) or exc})"
            ) from exc
        raise TensorFileError(
            f"{op}: writing {str(target)!r} as {fmt} failed ({exc}); an earlier file at that path is unchanged"
        ) from exc


def _read_table(pa: Any, op: str, path: Path, mmap: bool) -> Any:
    # O_NONBLOCK: opening a FIFO without a writer returns at once (instead of waiting for one), so that
    # fstat can refuse it; a regular file ignores the flag
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
        try:
            mode = os.fstat(fd).st_mode
            head = os.read(fd, 8) if stat.S_ISREG(mode) else b""
        finally:
            os.close(fd)
    except FileNotFoundError as exc:
        raise TensorFileNotFoundError(f"{op}: cannot open {str(path)!r} ({exc.strerror or exc})") from exc
    except OSError as exc:
        raise TensorFileError(f"{op}: cannot open {str(path)!r} ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(mode):
        raise TensorFileError(f"{op}: cannot open {str(path)!r} (it is a directory; expected a tensor file)")
    if not stat.S_ISREG(mode):
        raise TensorFileError(
            f"{op}: cannot open {str(path)!r} (it is {special_file_kind(mode)}, not a regular file; "
            "tensor files are read from regular files only)"
        )
    try:
        if head[:6] == _ARROW_MAGIC:
            import pyarrow.ipc as ipc  # noqa: PLC0415  (optional dependency)

            where = arrow_path(path)
            if where is None:
                source = python_source(pa, path, mmap)
            else:
                source = pa.memory_map(where, "r") if mmap else pa.OSFile(where, "rb")
            with source:
                table = ipc.open_file(source).read_all()  # buffers keep the mapping alive
        elif head[:4] == _PARQUET_MAGIC:
            import pyarrow.parquet as pq  # noqa: PLC0415  (optional dependency)

            where = arrow_path(path)
            table = pq.read_table(python_source(pa, path, mmap) if where is None else where, memory_map=mmap)
        else:
            table = None
        if table is not None:
            table.validate()  # buffer sizes against lengths: no read of the data itself
            return table
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TensorFileError(f"{op}: {str(path)!r} could not be read: it is truncated or corrupt ({exc})") from exc
    if not head:
        raise TensorFileError(f"{op}: {str(path)!r} is empty (0 bytes); expected an Arrow IPC or Parquet file")
    if len(head) < len(_ARROW_MAGIC) and (_ARROW_MAGIC.startswith(head) or _PARQUET_MAGIC.startswith(head[:4])):
        raise TensorFileError(
            f"{op}: {str(path)!r} could not be read: it is truncated or corrupt (only {len(head)} bytes, {head!r})"
        )
    hint = next((f", it looks like {what}" for magic, what in _MAGIC_HINTS.items() if head.startswith(magic)), "")
    raise TensorFileError(
        f"{op}: {str(path)!r} is neither an Arrow IPC file nor a Parquet file "
        f"(starts with {head!r}{hint}; expected {_ARROW_MAGIC!r} or {_PARQUET_MAGIC!r})"
    )


def _check_format(op: str, path: Path, metadata: Mapping[bytes, bytes] | None) -> None:
    """:class:`TensorFileError` for a file whose ``tenferro.version`` is not one of
    :data:`_READ_VERSIONS` (a newer format: its tensors may mean something else) or whose
    ``tenferro.layout`` is not one of :data:`_LAYOUTS`."""
    meta = metadata or {}
    raw, layout = meta.get(_VERSION), meta.get(_LAYOUT)
    supported = ", ".join(map(str, _READ_VERSIONS))
    if raw is not None:
        try:
            version = int(raw.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            raise TensorFileError(
                f"{op}: {str(path)!r} records the format version {raw!r}, which is not a version "
                f"number; this tenferro reads format version(s) {supported} (the file is corrupt)"
            ) from None
        if version not in _READ_VERSIONS:
            newer = version > max(_READ_VERSIONS)
            raise TensorFileError(
                f"{op}: {str(path)!r} was written in tenferro file format version {version}; this "
                f"tenferro reads format version(s) {supported}"
                + (" (the file is from a newer tenferro: upgrade tenferro to read it)" if newer else "")
            )
    if layout is not None and layout not in tuple(x.encode() for x in _LAYOUTS):
        raise TensorFileError(
            f"{op}: {str(path)!r} records the table layout {layout.decode(errors='replace')!r}, which this "
            f"tenferro does not know (format version(s) {supported}: layouts {', '.join(map(repr, _LAYOUTS))}); "
            "the file is from a newer tenferro or corrupt"
        )


def _tensor_column(pa: Any, op: str, where: str, field: Any, column: Any, rows: int) -> Any:
    """The fixed_shape_tensor data of a column: the column itself (rows layout) or the tensors
    in its single list row (packed layout), without a copy."""
    typ = field.type
    if isinstance(typ, pa.FixedShapeTensorType):
        return column
    if pa.types.is_list(typ) and isinstance(typ.value_type, pa.FixedShapeTensorType) and rows == 1:
        chunk = next(c for c in column.chunks if len(c))  # one row: exactly one chunk holds it
        if chunk.null_count:
            raise TensorFileError(f"{op}: {where} is a null list; expected a list of tensors")
        start, stop = chunk.offsets[0].as_py(), chunk.offsets[1].as_py()
        return chunk.values.slice(start, stop - start)
    raise TensorFileError(
        f"{op}: {where} has type {typ}; expected "
        "arrow.fixed_shape_tensor columns (or, in a one-row table, lists of them)"
    )


def _field_meta(op: str, where: str, field: Any) -> tuple[str, DType | None]:
    """``(kind, dtype)`` recorded by :func:`save` (``("list", None)`` for other producers)."""
    meta = field.metadata or {}
    try:
        kind = meta.get(_KIND, b"list").decode()
        stored = meta.get(_DTYPE)
        stored = None if stored is None else stored.decode()
    except UnicodeDecodeError as exc:
        raise TensorFileError(
            f"{op}: {where} has metadata that is not UTF-8 text ({exc}); the file is corrupt"
        ) from exc
    if kind not in ("tensor", "list"):
        raise TensorFileError(
            f"{op}: {where} has the unknown kind {kind!r} in its metadata; expected 'tensor' or "
            "'list' (the file is corrupt or from a newer tenferro)"
        )
    if stored is None:
        return kind, None
    try:
        return kind, _dtype(stored)
    except TenferroError as exc:
        raise TensorFileError(
            f"{op}: {where} records the unknown dtype {stored!r} in its metadata (the file is "
            "corrupt or from a newer tenferro)"
        ) from exc


def _complex_of(op: str, where: str, info: ArrowTensorInfo, stored: DType | None) -> bool:
    """Whether the column holds (re, im) pairs: its type's marker, or the dtype :func:`save` recorded,
    which must agree with the element type (a contradiction is corruption, not a guess)."""
    if stored is None:
        return info.is_complex
    if stored.is_complex:
        if info.dtype is stored.real_dtype and len(info.shape) >= 2 and info.shape[-1] == 2:
            return True
    elif info.dtype is stored:
        return info.is_complex  # tenferro < issue 21 recorded the element type of complex arrays
    raise TensorFileError(
        f"{op}: {where} records dtype {stored.name} but holds {info.dtype.name} tensors of shape "
        f"{tuple(info.shape)}"
        + (
            f"; expected {stored.real_dtype.name} (re, im) pairs in a trailing axis of extent 2"
            if stored.is_complex
            else ""
        )
        + " (the file is corrupt or was changed by another program)"
    )


def load(path: str | os.PathLike[str], *, mmap: bool = True, stack: bool = False) -> LoadedTensors:
    """Read a tensor file written by :func:`save` (or any Arrow IPC / Parquet file of
    ``fixed_shape_tensor`` columns). The format is detected from the file's magic bytes.

    Returns a :class:`LoadedTensors` dict: a Tensor for each single-tensor entry, a
    list of Tensors (``None`` for nulls) for each list entry, or with ``stack=True``
    one stacked tensor per list entry (trailing batch axis; an entry with nulls
    cannot be stacked). ``.dim_names`` holds the dimension names. With ``mmap=True``
    (default) Arrow IPC files are memory-mapped and column-major tensors are
    read-only views of the mapping (no copy, no read until used; keep the file
    unchanged while they live). ``mmap`` and ``stack`` are True or False. A missing
    file raises :class:`TensorFileNotFoundError`; a truncated, corrupt or
    non-tensor file :class:`TensorFileError`, naming the file; so does a file of a
    format version this tenferro does not read (metadata ``tenferro.version``: version
    1 is read, a file without it as another producer's) or of an unknown table layout
    (``tenferro.layout``), naming the version found and those supported.
    """
    op = "load"
    pa = import_pyarrow(op)
    target = _fs_path(op, path)
    mmap = _flag(op, "mmap", mmap)
    stack = _flag(op, "stack", stack)
    table = _read_table(pa, op, target, mmap)
    _check_format(op, target, table.schema.metadata)
    try:
        column_names = table.column_names  # decoded here: every later field.name is then valid text
    except UnicodeDecodeError as exc:
        raise TensorFileError(
            f"{op}: {str(target)!r} has a column name that is not UTF-8 text ({exc}); the file is corrupt"
        ) from exc
    seen: set[str] = set()
    for name in column_names:
        if name in seen:
            raise TensorFileError(
                f"{op}: {str(target)!r} has two columns named {name!r}; a tensor file names each entry once"
            )
        seen.add(name)
    entries: dict[str, Any] = {}
    names: dict[str, tuple[str, ...] | None] = {}
    for field, column in zip(table.schema, table.columns):
        where = f"column {field.name!r} of {str(target)!r}"
        column = _tensor_column(pa, op, where, field, column, len(table))
        kind, stored = _field_meta(op, where, field)
        with _context(f"{op}: {where}"):
            info = tensor_info(column)
            is_complex = _complex_of(op, where, info, stored)
            names[field.name] = dataclasses.replace(info, is_complex=is_complex).tensor_dim_names
            if kind == "tensor":
                if len(column) != 1:
                    raise TensorFileError(f"{op}: {where} is marked as a single tensor but has {len(column)} rows")
                (entries[field.name],) = from_arrow(column, complex=is_complex)
                if entries[field.name] is None:
                    raise TensorFileError(f"{op}: {where} is marked as a single tensor but holds a null")
            else:
                entries[field.name] = from_arrow(column, complex=is_complex, stack=stack)
    return LoadedTensors(entries, names)
