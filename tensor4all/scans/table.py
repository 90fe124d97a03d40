"""The file of a scan: one Arrow table (Parquet, or Arrow IPC for ``.arrow``), one row per
point, rewritten atomically (:func:`tenferro.files.atomic_write`)
each time points finish, so that a reader or a resumed scan never sees a half-written file.

The schema's metadata key ``tensor4all.scan`` holds JSON: ``schema``
(``"tensor4all.scan/1"``), ``parameters`` (the scanned names) and ``task`` (what each point
computes: a :class:`~tensor4all.scans.task.ScanTask`'s fields, or a function's name and the
digest of its code and arguments, :mod:`tensor4all.scans._identity`). A scan resumes from a
file only when both match; rows of points outside the current grid are kept, first, and
never rerun. A function task that cannot be identified, and a function recorded by its name
only (files of earlier versions), are refused with :class:`ScanFileError`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from tenferro.checks import import_optional, install_hint
from tenferro.files import atomic_write, remove_stale_temporaries

from ..tools.errors import OptionalDependencyError, Tensor4allTypeError
from .errors import ScanFileError, ScanFileIOError
from ..networks.files import UnsupportedFileFormatError
from ..tools.files import output_problem
from .grid import Grid
from .task import META_COLUMNS

__all__ = ["ScanTable", "FORMATS", "SCHEMA", "check_out", "import_pyarrow"]

SCHEMA = "tensor4all.scan/1"
FORMATS = {".parquet": "parquet", ".arrow": "arrow"}
_META_KEY = b"tensor4all.scan"
_INSTALL = install_hint("distributed")


def import_pyarrow() -> Any:
    return import_optional(
        ("pyarrow", "pyarrow.parquet"),
        OptionalDependencyError,
        f"tensor4all.scan writes Arrow/Parquet files and needs pyarrow, which is not installed; {_INSTALL}",
    )


def check_out(out: Any) -> str:
    """``out`` as a path: a string or path-like ending in ``.parquet`` or ``.arrow`` where a
    file can be written (:func:`tensor4all.tools.files.output_problem`, the check of the
    command-line programs' output files: an existing directory that takes a new file, not a
    directory, special or read-only file), checked before any point runs."""
    if not isinstance(out, (str, os.PathLike)):
        raise Tensor4allTypeError(f"scan: out must be a file path, got {type(out).__name__} {out!r}")
    path = os.fspath(out)
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        raise ScanFileIOError(f"scan: out must be a file name, got {out!r}")
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise UnsupportedFileFormatError(
            f"scan: unknown extension {ext or '(none)'!r} of {path!r}; valid extensions: {', '.join(FORMATS)}"
        )
    problem = output_problem(path)
    if problem is not None:
        raise ScanFileIOError(f"scan: out={path!r}: {problem}")
    return path


class ScanTable:
    """The rows of a scan file: those read at the start, then each finished point's."""

    def __init__(self, path: str, grid: Grid, task: dict[str, Any], columns: dict[str, str] | None):
        self.pa = import_pyarrow()
        self.path = path
        self.format = FORMATS[os.path.splitext(path)[1].lower()]
        self.grid = grid
        self.meta = {"schema": SCHEMA, "parameters": list(grid.names), "task": task}
        self.columns: dict[str, str | None] = dict(columns or {})  # result column -> Arrow type (None: inferred)
        self.foreign: list[dict[str, Any]] = []  # rows of points outside this grid, kept as read
        self.rows: dict[tuple, dict[str, Any]] = {}
        remove_stale_temporaries(path)  # partial copies of a write its killed run left (SIGKILL)
        if os.path.exists(path):
            self._read()

    # ---- reading -----------------------------------------------------------------------
    def _read(self) -> None:
        pa = self.pa
        try:
            if self.format == "parquet":  # through one open file: a path is opened more than once
                with open(self.path, "rb") as f:
                    table = pa.parquet.read_table(f)
            else:
                with pa.memory_map(self.path) as source:
                    table = pa.ipc.open_file(source).read_all()
        except (pa.ArrowException, OSError, ValueError) as e:
            raise ScanFileError(
                f"scan: cannot resume from {self.path!r}: not a readable {self.format} file ({e}); "
                "give another output path (out= in Python, --out on the command line) or remove the file"
            ) from e
        raw = (table.schema.metadata or {}).get(_META_KEY)
        try:
            meta = json.loads(raw) if raw is not None else None
        except ValueError:
            meta = None
        if not isinstance(meta, dict) or meta.get("schema") != SCHEMA:
            raise ScanFileError(
                f"scan: {self.path!r} was not written by tensor4all.scan (no '{_META_KEY.decode()}' "
                "metadata); give another output path (out= in Python, --out on the command line) or remove the file"
            )
        if sorted(meta.get("parameters", [])) != sorted(self.grid.names):
            raise ScanFileError(
                f"scan: {self.path!r} holds a scan over {meta.get('parameters')}, not over "
                f"{list(self.grid.names)}; give another output path (out= in Python, --out on the command line) or remove the file"
            )
        self._check_task(meta.get("task"))
        for name in table.column_names:
            if name not in self.grid.names and name not in META_COLUMNS and name not in self.columns:
                self.columns[name] = None
        keys = set(self.grid.keys)
        for row in table.to_pylist():
            key = tuple(row.get(n) for n in self.grid.names)
            if key in keys:
                self.rows[key] = row
            else:
                self.foreign.append(row)

    def _check_task(self, theirs: Any) -> None:
        """:class:`ScanFileError` unless the file's task is this one. A function task that
        cannot be identified (a value that cannot be pickled), in the file or here, and a
        function recorded by its name only (by tensor4all before function tasks were
        recorded with their code and arguments) are refused: either could be another task."""
        ours = json.loads(json.dumps(self.meta["task"]))
        fix = "give another output path (out= in Python, --out on the command line) or remove the file"
        same_name = isinstance(theirs, dict) and "function" in ours and theirs.get("function") == ours["function"]
        if same_name and ("unknown" in ours or "unknown" in theirs):
            reason = ours.get("unknown") or theirs["unknown"] + " (when the file was written)"
            raise ScanFileError(
                f"scan: cannot resume from {self.path!r}: {reason}; {fix}, or make the task a "
                "ScanTask or a module-level function (with functools.partial over plain or "
                "picklable values)"
            )
        if same_name and "code" not in theirs:
            raise ScanFileError(
                f"scan: cannot resume from {self.path!r}: it records the function task "
                f"{theirs['function']} by its name only (written by an earlier tensor4all, before "
                "a function's code and bound arguments were recorded), so it may hold results of "
                f"another function of that name or other arguments; {fix}"
            )
        if theirs != ours:
            hint = (
                " (a function task is its code, defaults, closure values and bound arguments: an "
                "edited function, other arguments or another Python version is another task)"
                if "function" in ours and same_name
                else ""
            )
            raise ScanFileError(
                f"scan: {self.path!r} holds a scan of another task ({json.dumps(theirs)}; "
                f"this one is {json.dumps(ours)}){hint}; {fix}"
            )

    def done(self, key: tuple) -> bool:
        """Whether the file holds a finished (status ``ok``) row for the point ``key``."""
        row = self.rows.get(key)
        return row is not None and row.get("status") == "ok"

    # ---- writing -----------------------------------------------------------------------
    def put(self, key: tuple, row: dict[str, Any]) -> None:
        for name in row:
            if name not in self.grid.names and name not in META_COLUMNS and name not in self.columns:
                self.columns[name] = None
        self.rows[key] = row

    def table(self) -> Any:
        """All rows as a ``pyarrow.Table``: the points outside the grid (as read), then the
        grid's points that have a row, in grid order."""
        pa = self.pa
        rows = self.foreign + [self.rows[k] for k in self.grid.keys if k in self.rows]
        arrays, names = [], []
        for name, typ in [*((n, None) for n in self.grid.names), *self.columns.items(), *META_COLUMNS.items()]:
            values = [r.get(name) for r in rows]
            try:
                arrays.append(pa.array(values, type=None if typ is None else pa.type_for_alias(typ)))
            except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                kinds = sorted({type(v).__name__ for v in values if v is not None})
                raise Tensor4allTypeError(
                    f"scan: the column {name!r} holds values of types {', '.join(kinds)}; a "
                    f"task returns one type per key ({e})"
                ) from e
            names.append(name)
        table = pa.Table.from_arrays(arrays, names=names)
        return table.replace_schema_metadata({_META_KEY: json.dumps(self.meta).encode()})

    def write(self) -> None:
        """Write :meth:`table` to the file atomically (:func:`tenferro.files.atomic_write`)."""
        table = self.table()
        try:
            with atomic_write(self.path) as tmp, open(tmp, "wb") as fh:
                if self.format == "parquet":
                    self.pa.parquet.write_table(table, fh)
                else:
                    with self.pa.ipc.new_file(fh, table.schema) as writer:
                        writer.write_table(table)
        except OSError as e:
            raise ScanFileIOError(f"scan: writing {self.path!r} failed ({e.strerror or e})") from e
