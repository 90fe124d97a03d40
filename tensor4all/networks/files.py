"""The files of :meth:`MPS.save` and :meth:`MPS.load`: entry names, formats by extension and
by first bytes, the sector tables of a symmetric MPS, paths no MPS file can have, and the
atomic write (:func:`tenferro.files.atomic_write`)."""

from __future__ import annotations

import os
import re
import stat
from typing import Any

import numpy as np

import tenferro as tf

from tenferro.arrow import TensorFileError
from tenferro.files import atomic_write, special_file_kind

from ..tools.errors import InvalidOptionError, Tensor4allError
from ..sites.charges import CONSERVED_CHARGES, charge_label
from .symmetric_sites import Grading
from ..tools.checks import check_path, to_numpy
from ..structured import Leg, SymmetricTensor, U1, Zn

__all__ = [
    "write_mps",
    "read_mps",
    "MPSFileError",
    "MPSFileNotFoundError",
    "MPSFileIOError",
    "UnsupportedFileFormatError",
    "DIM_NAMES",
    "SYMMETRY_KEY",
    "SITE_KEY",
    "FILE_FORMATS",
    "sector_entries",
    "symmetric_from_entries",
    "site_key",
    "file_format",
    "file_path",
    "resolve_link",
    "check_target",
    "write_file",
    "check_file_kind",
]


class MPSFileError(Tensor4allError, ValueError):
    """A file that holds no MPS in the layout :meth:`MPS.save` writes
    (entries ``site_0000``, ``site_0001``, ...)."""


class MPSFileNotFoundError(Tensor4allError, FileNotFoundError):
    """:meth:`MPS.load` of a path where no file exists."""


class MPSFileIOError(Tensor4allError, OSError):
    """The operating system refused to read or write an MPS file (permissions, a missing
    directory, a path that is a directory, a full disk); the message names the path."""


class UnsupportedFileFormatError(Tensor4allError, ValueError):
    """A file name or ``format=`` that names no supported file format; the message
    lists the extensions and formats that are."""


DIM_NAMES = ("left", "physical", "right")
SYMMETRY_KEY = "symmetry"


def sector_entries(psi: Any) -> dict[str, np.ndarray]:
    """The sector structure of a symmetric MPS as integer arrays (see :meth:`MPS.save`)."""
    g = psi.symmetry
    modulus = getattr(g, "n", 0) if type(g).__name__ in ("U1", "Zn") else None
    if modulus is None:
        raise InvalidOptionError(
            f"MPS.save: a symmetric MPS of the group {g!r} cannot be saved (U1 and Zn only); save psi.dense()"
        )
    names = list(CONSERVED_CHARGES)
    which = names.index(psi.conserve) if psi.conserve in names else -1
    unit = psi._grading.unit if psi._grading is not None else 1
    unit = 1 if isinstance(unit, tuple) else unit  # a product's units follow from its name
    out = {SYMMETRY_KEY: np.array([modulus, which, unit], dtype=np.int64)}
    legs = [psi._tensors[0].legs[0]] + [t.legs[2] for t in psi._tensors]
    for b, leg in enumerate(legs):
        out[f"sectors_bond_{b:04d}"] = np.array(list(leg.sectors.items()), dtype=np.int64).reshape(-1, 2)
    for i, t in enumerate(psi._tensors):
        out[f"sectors_phys_{i:04d}"] = np.array(list(t.legs[1].sectors.items()), dtype=np.int64).reshape(-1, 2)
    return out


def symmetric_from_entries(cls: type, entries: dict, keys: list[str], path: str) -> Any:
    """A symmetric MPS from the entries of a file written by :meth:`MPS.save`."""
    meta = np.asarray(entries[SYMMETRY_KEY]).reshape(-1)
    L = len(keys)

    def sectors(name: str) -> dict[int, int]:
        if name not in entries:
            raise MPSFileError(f"MPS.load: {path!r} holds a symmetric MPS without the entry {name}")
        rows = np.asarray(entries[name])
        if rows.ndim != 2 or rows.shape[1] != 2:
            raise MPSFileError(
                f"MPS.load: {path!r}: entry {name} must be rows (charge, dimension), got shape {rows.shape}"
            )
        return {int(q): int(d) for q, d in rows}

    if meta.shape != (3,) or meta[0] < 0 or meta[2] < 1:
        raise MPSFileError(f"MPS.load: {path!r}: entry {SYMMETRY_KEY} must be (modulus, conserved, unit), got {meta}")
    g = U1() if int(meta[0]) == 0 else Zn(int(meta[0]))
    bonds = [Leg(g, sectors(f"sectors_bond_{b:04d}")) for b in range(L + 1)]
    sites = []
    for i, k in enumerate(keys):
        legs = [bonds[i], Leg(g, sectors(f"sectors_phys_{i:04d}")), bonds[i + 1].dual()]
        sites.append(SymmetricTensor.from_dense(tf.asarray(np.asfortranarray(entries[k])), legs, tol=0.0))
    psi = cls(sites)
    names = list(CONSERVED_CHARGES)
    if 0 <= int(meta[1]) < len(names):
        label = names[int(meta[1])]
        q = tuple(tuple(c for c, d in t.legs[1].sectors.items() for _ in range(d)) for t in sites)
        charge = CONSERVED_CHARGES[label][0]
        unit = charge_label(charge)[1]
        psi._grading = Grading(label, charge, unit if isinstance(unit, tuple) else int(meta[2]), g, q)
    return psi


SITE_KEY = re.compile(r"site_\d{4,}")
#: file formats of :meth:`MPS.save` by extension
FILE_FORMATS = {".arrow": "arrow", ".parquet": "parquet", ".npz": "npz"}
#: the first bytes of each kind of file MPS.load may meet, and what to call it
MAGIC = (
    (b"PK\x03\x04", "npz"),
    (b"PK\x05\x06", "npz"),
    (b"ARROW1", "arrow"),
    (b"PAR1", "parquet"),
    (b"\x93NUMPY", "npy"),
)
KIND_NAMES = {
    "npz": "a NumPy .npz archive",
    "arrow": "an Arrow IPC file",
    "parquet": "a Parquet file",
    "npy": "a single NumPy .npy array",
}


def site_key(i: int) -> str:
    return f"site_{i:04d}"


def site_number(key: str) -> tuple[int, str]:
    """The sort key of an entry ``site_<n>``: its number ``n`` (then the name, for ``site_00001``)."""
    return int(key[5:]), key


def file_format(path: str, format: str | None) -> str:  # noqa: A002
    valid = sorted(set(FILE_FORMATS.values()))
    suffix = os.path.splitext(path)[1].lower()
    if format is not None:
        if not isinstance(format, str) or format not in valid:
            raise UnsupportedFileFormatError(f"unknown MPS file format {format!r}; valid formats: {', '.join(valid)}")
        return format
    if suffix not in FILE_FORMATS:
        raise UnsupportedFileFormatError(
            f"cannot tell the MPS file format from {path!r}; use one of the extensions "
            f"{', '.join(FILE_FORMATS)} or pass format= ({', '.join(valid)})"
        )
    return FILE_FORMATS[suffix]


def _extension(fmt: str) -> str:
    return next(ext for ext, kind in FILE_FORMATS.items() if kind == fmt)


def file_path(path: Any, what: str) -> str:
    """``path`` as a str (:func:`check_path`), or :class:`MPSFileIOError` for a name that no file
    can have: a NUL character, or a last component that makes it a directory (a trailing
    separator, ``.`` or ``..``, which ``os.path`` and pathlib would quietly drop)."""
    path = check_path(path, what)
    if "\0" in path:
        raise MPSFileIOError(f"{what}: path {path!r} contains a NUL character, which no file name can hold")
    if path:  # "" is refused by file_format (no extension)
        last = re.split("[" + re.escape(os.sep + (os.altsep or "")) + "]", path)[-1]
        if last in ("", ".", ".."):
            raise MPSFileIOError(
                f"{what}: {path!r} names a directory (it ends in {last or path[-1]!r}); expected a file path"
            )
    return path


def resolve_link(path: str) -> str:
    """``path``, or the file the symbolic link at ``path`` points to (resolved fully, even when
    dangling), so that saving replaces that file and the link keeps pointing at the new data."""
    if not os.path.islink(path):
        return path
    real = os.path.realpath(path)
    if os.path.islink(real):  # realpath stops at a loop of links
        raise MPSFileIOError(f"MPS.save: cannot write {path!r}: it is a symbolic link that leads to a loop of links")
    return real


def check_target(path: str) -> None:
    """:class:`MPSFileIOError` unless ``path`` can be a file in an existing directory (a new file
    or a regular file to replace: never a FIFO, socket or device)."""
    if os.path.isdir(path):
        raise MPSFileIOError(f"MPS.save: {path!r} is a directory; expected a file path")
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise MPSFileIOError(f"MPS.save: cannot write {path!r}: directory {directory!r} does not exist")
    try:
        mode = os.stat(path).st_mode
    except OSError:  # no file yet
        return
    if not stat.S_ISREG(mode):
        raise MPSFileIOError(
            f"MPS.save: {path!r} is {special_file_kind(mode)}, not a regular file; MPS.save writes or "
            "replaces regular files only"
        )


def write_file(path: str, write: Any) -> None:
    """Call ``write(file object)`` on a new temporary file next to ``path``, then replace ``path``
    by it (:func:`tenferro.files.atomic_write`: fsync, the existing file's mode kept); on any
    failure ``path`` is untouched and :class:`MPSFileIOError` names the reason."""
    created = False
    try:
        with atomic_write(path) as tmp, open(tmp, "wb") as fh:
            created = True
            write(fh)
    except Tensor4allError:
        raise
    except OSError as e:
        if not created:
            directory = os.path.dirname(path) or "."
            raise MPSFileIOError(f"MPS.save: cannot write in {directory!r} ({e.strerror or e})") from e
        raise MPSFileIOError(f"MPS.save: writing {path!r} failed ({e.strerror or e})") from e


def check_file_kind(path: str, fmt: str) -> None:
    """:class:`MPSFileError` if the file at ``path`` is empty or, by its first bytes, not a
    ``fmt`` file (naming what it looks like); :class:`MPSFileIOError` if it cannot be opened."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as e:
        raise MPSFileIOError(f"MPS.load: cannot open {path!r} ({e.strerror or e})") from e
    if not head:
        raise MPSFileError(f"MPS.load: {path!r} is empty (0 bytes); expected {KIND_NAMES[fmt]} written by MPS.save")
    kind = next((k for magic, k in MAGIC if head.startswith(magic)), None)
    if kind == fmt:
        return
    if kind is None:
        raise MPSFileError(
            f"MPS.load: {path!r} is not {KIND_NAMES[fmt]} (it starts with {head!r}); expected a "
            "file written by MPS.save"
        )
    hint = f"; pass format={kind!r}" if kind in FILE_FORMATS.values() else ""
    raise MPSFileError(f"MPS.load: {path!r} is {KIND_NAMES[kind]}, not {KIND_NAMES[fmt]}{hint}")


def write_mps(psi: Any, path: Any, format: str | None) -> None:  # noqa: A002
    """The body of :meth:`tensor4all.MPS.save` (see there)."""
    path = file_path(path, "MPS.save")
    fmt = file_format(path, format)
    named = FILE_FORMATS.get(os.path.splitext(path)[1].lower())
    if named is not None and named != fmt:  # a .arrow file holding a zip: no reader would take it
        raise UnsupportedFileFormatError(
            f"MPS.save: format={fmt!r} contradicts the extension of {path!r}, that of {KIND_NAMES[named]}; "
            f"pass format={named!r}, or a name ending in {_extension(fmt)}"
        )
    arrays = {site_key(i): np.asarray(to_numpy(t, "MPS.save")) for i, t in enumerate(psi.dense()._tensors)}
    if psi.symmetric:
        arrays.update(sector_entries(psi))
    dest = resolve_link(path)  # a symbolic link: write the file it points to, and keep the link
    check_target(dest)
    if fmt == "npz":
        write_file(dest, lambda fh: np.savez(fh, **arrays))  # np.savez(name) would append ".npz"
        return
    try:
        tf.save(
            path,
            {k: tf.asarray(v) for k, v in arrays.items()},
            format=fmt,
            dim_names={k: DIM_NAMES for k in arrays if SITE_KEY.fullmatch(k)},
        )
    except TensorFileError as e:  # tenferro.save writes atomically itself
        raise MPSFileIOError(f"MPS.save: cannot write {path!r} ({e})") from e
    except tf.TenferroError as e:  # a name tenferro.save refuses for the format (.ipc as parquet)
        raise UnsupportedFileFormatError(f"MPS.save: {e}") from e


def read_mps(cls: type, path: Any, format: str | None) -> Any:  # noqa: A002
    """The body of :meth:`tensor4all.MPS.load` (see there): an instance of ``cls``."""
    path = file_path(path, "MPS.load")
    fmt = file_format(path, format)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise MPSFileNotFoundError(
            f"MPS.load: no file {path!r}; expected a file written by MPS.save (or tensor4all dmrg --save)"
        ) from None
    except OSError as e:
        raise MPSFileIOError(f"MPS.load: cannot open {path!r} ({e.strerror or e})") from e
    if stat.S_ISDIR(mode):
        raise MPSFileIOError(f"MPS.load: {path!r} is a directory, not a file written by MPS.save")
    if not stat.S_ISREG(mode):  # opening a FIFO would wait for a writer, a device read forever
        raise MPSFileIOError(f"MPS.load: {path!r} is {special_file_kind(mode)}, not a regular file written by MPS.save")
    check_file_kind(path, fmt)
    try:
        if fmt == "npz":
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as data:  # fh: closed on errors too
                entries = {k: np.asfortranarray(data[k]) for k in data.files}
        else:
            entries = dict(tf.load(path, mmap=False))
    except (MemoryError, ImportError):  # out of memory; pyarrow missing (tenferro names the extra)
        raise
    except Exception as e:  # noqa: BLE001  (zipfile, zlib, NumPy, pyarrow: all mean a damaged file)
        raise MPSFileError(
            f"MPS.load: {path!r} could not be read as {fmt} (a truncated or damaged file?): {type(e).__name__}: {e}"
        ) from e
    keys = sorted((k for k in entries if SITE_KEY.fullmatch(k)), key=site_number)  # site_10000 after site_9999
    if not keys or keys != [site_key(i) for i in range(len(keys))]:
        raise MPSFileError(
            f"MPS.load: {path!r} holds no MPS: expected entries site_0000, site_0001, ..., got {sorted(entries)[:6]}"
        )
    for k in keys:
        if not isinstance(entries[k], (np.ndarray, tf.Tensor)):
            raise MPSFileError(
                f"MPS.load: {path!r}: entry {k} is a {type(entries[k]).__name__}, expected one "
                "tensor (left bond, physical, right bond)"
            )
    try:
        if SYMMETRY_KEY in entries:
            return symmetric_from_entries(cls, entries, keys, path)
        return cls([entries[k] for k in keys])
    except Tensor4allError as e:
        raise MPSFileError(f"MPS.load: {path!r}: the entries {keys[0]}..{keys[-1]} do not form an MPS: {e}") from e
