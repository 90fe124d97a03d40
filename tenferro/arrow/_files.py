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
complex tensors without a copy). Files from other producers load as lists of real
tensors.

Writing is atomic: everything is converted and checked first, then written to a
temporary file beside ``path`` that replaces ``path`` only when complete, so a
failure never leaves a half-written file. Arrow IPC files are written
uncompressed (unless ``compression=`` is given) so that :func:`load` can
memory-map them: the loaded tensors are then read-only views of the mapped file,
and nothing is read until it is used. Parquet always decodes into memory.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._dtypes import DType, dtype as _dtype
from .._errors import TenferroError, TenferroTypeError, TenferroValueError
from .._tensor import Tensor
from ._convert import from_arrow, tensor_info, to_arrow
from ._deps import TensorFileError, import_pyarrow

__all__ = ["save", "load", "LoadedTensors", "FORMATS"]

FORMATS = ("arrow", "parquet")
_KIND = b"tenferro.kind"
_DTYPE = b"tenferro.dtype"
_VERSION = b"tenferro.version"
_LAYOUT = b"tenferro.layout"
_ARROW_MAGIC = b"ARROW1"
_PARQUET_MAGIC = b"PAR1"


class LoadedTensors(dict):
    """The entries of a tensor file (name -> Tensor, or list of Tensor/None, in file
    order), plus ``dim_names``: name -> dimension names in logical order (or None)."""

    dim_names: dict[str, tuple[str, ...] | None]

    def __init__(self, entries: dict[str, Any], dim_names: dict[str, tuple[str, ...] | None]) -> None:
        super().__init__(entries)
        self.dim_names = dim_names


def _column(pa: Any, name: str, value: Any, names: Any) -> tuple[Any, str, DType]:
    """``(array, kind, dtype)`` for one entry."""
    if isinstance(value, Tensor):
        arr = to_arrow([value], names)
        return arr, "tensor", value.dtype
    if isinstance(value, (pa.Array, pa.ChunkedArray)):
        if names is not None:
            raise TenferroValueError(f"save: entry {name!r} is an Arrow array, which carries its own dim_names; "
                                     "do not pass dim_names for it")
        return value, "list", tensor_info(value).dtype
    if isinstance(value, (list, tuple)):
        arr = to_arrow(list(value), names)
        return arr, "list", next(t for t in value if t is not None).dtype
    raise TenferroTypeError(f"save: entry {name!r} is a {type(value).__name__}; expected a Tensor, a list of "
                            "Tensors (None for nulls) or a fixed_shape_tensor array from tenferro.arrow.to_arrow")


def _table(pa: Any, entries: Mapping[str, Any], dim_names: Mapping[str, Sequence[str]] | None) -> Any:
    if not isinstance(entries, Mapping) or not entries:
        raise TenferroTypeError("save: expected a non-empty dict {name: tensor or list of tensors}, got "
                                f"{type(entries).__name__ if not isinstance(entries, Mapping) else 'an empty dict'}")
    dim_names = {} if dim_names is None else dict(dim_names)
    unknown = set(dim_names) - set(entries)
    if unknown:
        raise TenferroValueError(f"save: dim_names given for {sorted(unknown)}, which are not entries; "
                                 f"entries are {list(entries)}")
    columns, metas = [], []
    for name, value in entries.items():
        if not isinstance(name, str) or not name:
            raise TenferroTypeError(f"save: entry names must be non-empty strings, got {name!r}")
        arr, kind, dt = _column(pa, name, value, dim_names.get(name))
        columns.append(arr)
        metas.append({_KIND: kind.encode(), _DTYPE: dt.name.encode()})
    layout = "rows" if len({len(a) for a in columns}) == 1 else "packed"
    if layout == "packed":  # one row; each column a list holding one entry's tensors (no copy of the tensors)
        columns = [pa.ListArray.from_arrays(pa.array([0, len(a)], pa.int32()),
                                            a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a)
                   for a in columns]
    fields = [pa.field(name, a.type, nullable=True, metadata=m) for name, a, m in zip(entries, columns, metas)]
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata={_VERSION: b"1",
                                                                             _LAYOUT: layout.encode()}))


def _check_parquet_readable(pa: Any, table: Any) -> None:
    """Refuse columns that pyarrow writes to Parquet but cannot read back."""
    version = tuple(int(p) for p in pa.__version__.split(".")[:2] if p.isdigit())
    for field, column in zip(table.schema, table.columns):
        if not isinstance(field.type, pa.FixedShapeTensorType):  # packed layout: list<fixed_shape_tensor>
            column = pa.chunked_array([c.values for c in column.chunks], field.type.value_type)
        if column.type.storage_type.list_size == 0:
            raise TenferroValueError(
                f"save: entry {field.name!r} holds size-0 tensors, which pyarrow writes to Parquet but cannot read "
                "back (zero-length fixed-size lists); use format='arrow'")
        if column.null_count and version < (26, 0):
            raise TenferroValueError(
                f"save: entry {field.name!r} has null tensors, which pyarrow {pa.__version__} cannot read back from "
                "Parquet (null fixed-size lists, apache/arrow#35692, fixed in pyarrow 26); use format='arrow' or "
                "upgrade pyarrow")


def _new_file_mode() -> int:
    """The mode ``open()`` would give a new file here (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def save(path: str | os.PathLike[str], entries: Mapping[str, Any], *, format: str = "arrow",  # noqa: A002
         dim_names: Mapping[str, Sequence[str]] | None = None, compression: str | None = None) -> None:
    """Write named tensors to ``path`` as an Arrow IPC file (``format="arrow"``) or Parquet.

    ``entries`` maps names to a Tensor, a list of same-shape Tensors (``None`` for a
    null entry), or a ``fixed_shape_tensor`` array (e.g. ``to_arrow(batch,
    batch_axis=-1)``, written without an extra copy). Entries may have different
    lengths (see the module docstring for the two table layouts).
    ``dim_names`` maps entry names to
    dimension names (logical order). ``compression`` is passed to pyarrow
    (default: none for Arrow IPC, which keeps memory mapping possible; pyarrow's
    default, snappy, for Parquet). Complex tensors are stored as (re, im) pairs.
    """
    op = "save"
    pa = import_pyarrow(op)
    if format not in FORMATS:
        raise TenferroValueError(f"{op}: unknown format {format!r}; expected one of {FORMATS}")
    table = _table(pa, entries, dim_names)
    if format == "parquet":
        _check_parquet_readable(pa, table)
    target = Path(path)
    if target.is_dir():
        raise TensorFileError(f"{op}: {str(target)!r} is a directory; expected a file path")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise TensorFileError(f"{op}: directory {str(directory)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        if format == "arrow":
            import pyarrow.ipc as ipc  # noqa: PLC0415  (optional dependency)

            options = ipc.IpcWriteOptions(compression=compression)
            with pa.OSFile(tmp, "wb") as sink, ipc.new_file(sink, table.schema, options=options) as writer:
                writer.write_table(table)
        else:
            import pyarrow.parquet as pq  # noqa: PLC0415  (optional dependency)

            kwargs = {} if compression is None else {"compression": compression}
            pq.write_table(table, tmp, use_dictionary=False, **kwargs)
        os.chmod(tmp, _new_file_mode())   # mkstemp makes 0600 files: give the usual mode
        os.replace(tmp, target)
    except Exception as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, TenferroError):
            raise
        raise TensorFileError(f"{op}: writing {str(target)!r} as {format} failed ({exc})") from exc
    except BaseException:  # KeyboardInterrupt and the like: still no half-written file
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_table(pa: Any, op: str, path: Path, mmap: bool) -> Any:
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError as exc:
        raise TensorFileError(f"{op}: cannot open {str(path)!r} ({exc.strerror or exc})") from exc
    try:
        if head == _ARROW_MAGIC:
            import pyarrow.ipc as ipc  # noqa: PLC0415  (optional dependency)

            source = pa.memory_map(str(path), "r") if mmap else pa.OSFile(str(path), "rb")
            with source:
                return ipc.open_file(source).read_all()  # buffers keep the mapping alive
        if head[:4] == _PARQUET_MAGIC:
            import pyarrow.parquet as pq  # noqa: PLC0415  (optional dependency)

            return pq.read_table(str(path), memory_map=mmap)
    except (pa.ArrowException, OSError) as exc:
        raise TensorFileError(f"{op}: {str(path)!r} could not be read ({exc})") from exc
    raise TensorFileError(f"{op}: {str(path)!r} is neither an Arrow IPC file nor a Parquet file "
                          f"(starts with {head!r}; expected {_ARROW_MAGIC!r} or {_PARQUET_MAGIC!r})")


def _tensor_column(pa: Any, op: str, path: Path, field: Any, column: Any, rows: int) -> Any:
    """The fixed_shape_tensor data of a column: the column itself (rows layout) or the tensors
    in its single list row (packed layout), without a copy."""
    typ = field.type
    if isinstance(typ, pa.FixedShapeTensorType):
        return column
    if pa.types.is_list(typ) and isinstance(typ.value_type, pa.FixedShapeTensorType) and rows == 1:
        (chunk,) = [c for c in column.chunks if len(c)]
        start, stop = chunk.offsets[0].as_py(), chunk.offsets[1].as_py()
        return chunk.values.slice(start, stop - start)
    raise TensorFileError(f"{op}: column {field.name!r} of {str(path)!r} has type {typ}; expected "
                          "arrow.fixed_shape_tensor columns (or, in a one-row table, lists of them)")


def load(path: str | os.PathLike[str], *, mmap: bool = True, stack: bool = False) -> LoadedTensors:
    """Read a tensor file written by :func:`save` (or any Arrow IPC / Parquet file of
    ``fixed_shape_tensor`` columns). The format is detected from the file's magic bytes.

    Returns a :class:`LoadedTensors` dict: a Tensor for each single-tensor entry, a
    list of Tensors (``None`` for nulls) for each list entry, or with ``stack=True``
    one stacked tensor per list entry (trailing batch axis; an entry with nulls
    cannot be stacked). ``.dim_names`` holds the dimension names. With ``mmap=True``
    (default) Arrow IPC files are memory-mapped and column-major tensors are
    read-only views of the mapping (no copy, no read until used; keep the file
    unchanged while they live).
    """
    op = "load"
    pa = import_pyarrow(op)
    table = _read_table(pa, op, Path(path), mmap)
    entries: dict[str, Any] = {}
    names: dict[str, tuple[str, ...] | None] = {}
    for field, column in zip(table.schema, table.columns):
        column = _tensor_column(pa, op, path, field, column, len(table))
        meta = field.metadata or {}
        kind = meta.get(_KIND, b"list").decode()
        stored = meta.get(_DTYPE)
        is_complex = stored is not None and _dtype(stored.decode()).is_complex
        info = tensor_info(column)
        names[field.name] = None if info.dim_names is None else (
            info.dim_names[:-1] if is_complex else info.dim_names)
        if kind == "tensor":
            if len(column) != 1:
                raise TensorFileError(f"{op}: column {field.name!r} is marked as a single tensor but has "
                                      f"{len(column)} rows")
            (entries[field.name],) = from_arrow(column, complex=is_complex)
        else:
            entries[field.name] = from_arrow(column, complex=is_complex, stack=stack)
    return LoadedTensors(entries, names)
