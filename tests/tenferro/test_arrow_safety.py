"""tenferro.arrow, tenferro.save/load and tenferro.from_dlpack on bad input (issue 21,
Arrow and files). Section 1, round trips, is in test_arrow_round_trips.py.

2. Files: paths of the wrong type, missing or unwritable directories, names too long,
   extensions of other formats, bad ``mmap``/``stack``, missing, truncated and
   non-Arrow files, corrupt metadata, bad entries: typed errors naming the file and
   the problem. Writes are atomic: a failure midway leaves an older file intact and no
   temporary file.
3. The rest of the public surface (flags, batch axes, DLPack producers) refuses
   malformed input with typed errors instead of raw exceptions or silent defaults.
"""

from __future__ import annotations

import os
import stat
import threading

import numpy as np
import pytest

import tenferro as tf

pytestmark = pytest.mark.cpu_only  # Arrow buffers live in host memory

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the 'arrow' extra)")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow was built without Parquet support")
ipc = pytest.importorskip("pyarrow.ipc")
from tenferro.arrow import _files  # noqa: E402  (after the pyarrow skip)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, size=shape) if np.dtype(dtype).kind == "i" else rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return tf.asarray(np.asfortranarray(x.astype(dtype)))


def same(a, b):
    assert a.dtype is b.dtype, (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# == 2. files =====================================================================================


@pytest.mark.parametrize("bad", [123, None, 4.5, ["x.arrow"], object()])
def test_paths_of_the_wrong_type(tmp_path, bad):
    for call in (lambda: tf.save(bad, {"a": tf.ones((2,))}), lambda: tf.load(bad)):
        with pytest.raises(tf.TenferroTypeError, match="path must be a str or os.PathLike") as info:
            call()
        assert type(bad).__name__ in str(info.value)


def test_paths_as_bytes_and_pathlike_work(tmp_path):
    tf.save(os.fsencode(tmp_path / "b.arrow"), {"a": tf.ones((2,))})
    same(tf.load(os.fsencode(tmp_path / "b.arrow"))["a"], tf.ones((2,)))
    same(tf.load(tmp_path / "b.arrow")["a"], tf.ones((2,)))


@pytest.mark.parametrize("path, fragment", [("", "the path is empty"), ("a\0b.arrow", "NUL character")])
def test_empty_and_nul_paths(path, fragment):
    for call in (lambda: tf.save(path, {"a": tf.ones((2,))}), lambda: tf.load(path)):
        with pytest.raises(tf.TenferroValueError, match=fragment):
            call()


def test_missing_directory_and_a_file_as_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="directory .*missing.* does not exist") as info:
        tf.save(tmp_path / "missing" / "x.arrow", {"a": tf.ones((2,))})
    assert isinstance(info.value, tf.arrow.TensorFileNotFoundError)
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(tf.arrow.TensorFileError, match="'.*f' is not a directory"):
        tf.save(tmp_path / "f" / "x.arrow", {"a": tf.ones((2,))})


def test_unwritable_directory_is_named(tmp_path, monkeypatch):
    if os.path.isdir("/proc/self"):  # nobody, root included, creates files there
        with pytest.raises(tf.arrow.TensorFileError, match="no file can be created in directory '/proc/self'"):
            tf.save("/proc/self/x.arrow", {"a": tf.ones((2,))})
    real_open = os.open

    def refuse(path, flags, mode=0o777, *a, **k):
        if str(path).startswith(str(tmp_path)):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, mode, *a, **k)

    monkeypatch.setattr(_files.os, "open", refuse)
    with pytest.raises(tf.arrow.TensorFileError, match=r"no file can be created in directory .* \(Permission denied\)"):
        tf.save(tmp_path / "x.arrow", {"a": tf.ones((2,))})
    assert os.listdir(tmp_path) == []


def test_long_names(tmp_path):
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    ok = "a" * (name_max - len(".arrow")) + ".arrow"  # the longest legal name: its temporary name must fit too
    tf.save(tmp_path / ok, {"a": tf.ones((2,))})
    assert os.listdir(tmp_path) == [ok]
    same(tf.load(tmp_path / ok)["a"], tf.ones((2,)))
    long = "b" * (name_max + 1) + ".arrow"
    with pytest.raises(
        tf.arrow.TensorFileError,
        match=rf"file name .* is too long \({name_max + 7} bytes; at most "
        rf"{name_max} here\)",
    ):
        tf.save(tmp_path / long, {"a": tf.ones((2,))})
    with pytest.raises(tf.arrow.TensorFileError, match="cannot open"):
        tf.load(tmp_path / long)
    assert os.listdir(tmp_path) == [ok]


def test_extensions_choose_or_refuse_the_format(tmp_path):
    # the extension chooses the format when format= is not given ...
    tf.save(tmp_path / "x.parquet", {"a": tf.ones((2,))})
    assert (tmp_path / "x.parquet").read_bytes()[:4] == b"PAR1"
    tf.save(tmp_path / "x.arrow", {"a": tf.ones((2,))})
    assert (tmp_path / "x.arrow").read_bytes()[:6] == b"ARROW1"
    tf.save(tmp_path / "x.bin", {"a": tf.ones((2,))})
    assert (tmp_path / "x.bin").read_bytes()[:6] == b"ARROW1"
    # ... another format's extension is refused, and so is a format= that contradicts the extension
    for name, fmt, fragment in [
        ("x.npz", None, "ends in .npz, the extension of NumPy .npz files"),
        ("x.NPY", "arrow", "ends in .npy"),
        ("x.h5", "parquet", "HDF5"),
        ("y.parquet", "arrow", "format='arrow' contradicts the extension"),
        ("y.arrow", "parquet", "format='parquet' contradicts"),
    ]:
        with pytest.raises(tf.TenferroValueError, match=fragment):
            tf.save(tmp_path / name, {"a": tf.ones((2,))}, format=fmt)
    assert sorted(os.listdir(tmp_path)) == ["x.arrow", "x.bin", "x.parquet"]


def test_compression_is_checked_before_writing(tmp_path):
    tf.save(tmp_path / "z.arrow", {"a": tf.ones((20,))}, compression="zstd")
    same(tf.load(tmp_path / "z.arrow")["a"], tf.ones((20,)))
    tf.save(tmp_path / "n.parquet", {"a": tf.ones((20,))}, compression="none")
    for fmt, comp, exc, fragment in [
        ("arrow", "snappy", tf.TenferroValueError, "expected None or one of lz4, zstd"),
        ("parquet", "zzz", tf.TenferroValueError, "'zzz' is not available for parquet"),
        ("arrow", 5, tf.TenferroTypeError, "codec name or None"),
    ]:
        with pytest.raises(exc, match=fragment):
            tf.save(tmp_path / f"c.{fmt}", {"a": tf.ones((2,))}, compression=comp)
    assert sorted(os.listdir(tmp_path)) == ["n.parquet", "z.arrow"]


@pytest.mark.parametrize("arg", ["mmap", "stack"])
@pytest.mark.parametrize("bad", ["no", 1, 0, None, [True]])
def test_load_flags_are_bools(tmp_path, arg, bad):
    tf.save(tmp_path / "x.arrow", {"a": tf.ones((2,))})
    with pytest.raises(tf.TenferroValueError, match=f"{arg} must be True or False, got"):
        tf.load(tmp_path / "x.arrow", **{arg: bad})
    assert tf.load(tmp_path / "x.arrow", **{arg: np.True_})["a"] is not None


def test_missing_empty_and_foreign_files_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"cannot open '.*nope\.arrow' \(No such file") as info:
        tf.load(tmp_path / "nope.arrow")
    assert isinstance(info.value, tf.arrow.TensorFileNotFoundError)
    (tmp_path / "empty.arrow").write_bytes(b"")
    with pytest.raises(tf.arrow.TensorFileError, match=r"'.*empty\.arrow' is empty \(0 bytes\)"):
        tf.load(tmp_path / "empty.arrow")
    np.savez(tmp_path / "a.npz", x=np.ones(2))
    with pytest.raises(tf.arrow.TensorFileError, match=r"'.*a\.npz' is neither .* looks like a zip archive"):
        tf.load(tmp_path / "a.npz")
    table = pa.table({"x": tf.arrow.to_arrow([tf.ones((2,))])})
    with pa.OSFile(str(tmp_path / "s.arrows"), "wb") as sink, ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    with pytest.raises(tf.arrow.TensorFileError, match="an Arrow IPC stream"):
        tf.load(tmp_path / "s.arrows")


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_every_truncation_is_a_typed_error_naming_the_file(tmp_path, fmt):
    path = tmp_path / f"t.{fmt}"
    tf.save(path, {"a": sample((3, 4), "complex128"), "l": [tf.ones((2,)), tf.zeros((2,))]})
    blob = path.read_bytes()
    cut = tmp_path / f"cut.{fmt}"
    for n in range(len(blob)):
        cut.write_bytes(blob[:n])
        problem = "is empty" if n == 0 else "truncated or corrupt"
        for mmap in (True, False):
            with pytest.raises(tf.arrow.TensorFileError, match=rf"load: '.*cut\.{fmt}' .*{problem}"):
                tf.load(cut, mmap=mmap)


def _write_with_field_metadata(path, arrays, metas, names=None):
    names = names or [f"c{i}" for i in range(len(arrays))]
    fields = [pa.field(n, a.type, metadata=m) for n, a, m in zip(names, arrays, metas)]
    table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)


def test_corrupt_metadata_is_a_file_error_not_a_guess(tmp_path):
    f64 = tf.arrow.to_arrow([tf.ones((2,))])
    i32 = tf.arrow.to_arrow([tf.ones((3,), tf.int32)])
    cases = [
        ([f64, f64], [None, None], ["x", "x"], "two columns named 'x'"),
        ([f64], [{b"tenferro.kind": b"\xff\xfe"}], None, "not UTF-8"),
        ([f64], [{b"tenferro.kind": b"matrix"}], None, "unknown kind 'matrix'"),
        ([f64], [{b"tenferro.dtype": b"float16"}], None, "unknown dtype 'float16'"),
        ([f64], [{b"tenferro.dtype": b"float32"}], None, "records dtype float32 but holds float64"),
        ([i32], [{b"tenferro.dtype": b"complex64"}], None, "records dtype complex64 but holds int32 tensors"),
        (
            [pa.ExtensionArray.from_storage(f64.type, pa.nulls(1, f64.type.storage_type))],
            [{b"tenferro.kind": b"tensor"}],
            None,
            "single tensor but holds a null",
        ),
    ]
    for k, (arrays, metas, names, fragment) in enumerate(cases):
        path = tmp_path / f"m{k}.arrow"
        _write_with_field_metadata(path, arrays, metas, names)
        with pytest.raises(tf.arrow.TensorFileError, match=fragment) as info:
            tf.load(path)
        assert f"m{k}.arrow" in str(info.value)


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_a_column_name_that_is_not_utf8_is_a_corrupt_file(tmp_path, fmt):
    path = tmp_path / f"u.{fmt}"
    tf.save(path, {"qzq": tf.ones((2, 2))})
    blob = path.read_bytes()
    assert b"qzq" in blob
    path.write_bytes(blob.replace(b"qzq", b"\xffzq"))  # the name, in every schema the file holds
    for mmap in (True, False):
        with pytest.raises(
            tf.arrow.TensorFileError,
            match=rf"load: '.*u\.{fmt}' has a column name that is not "
            "UTF-8 text .* the file is corrupt",
        ):
            tf.load(path, mmap=mmap)
    if fmt == "arrow":  # the same corruption as a single byte (the sweep's reproduction)
        tf.save(path, {"x": tf.ones((2, 2))})
        blob = bytearray(path.read_bytes())
        blob[blob.rfind(b"\x01\x00\x00\x00x\x00") + 4] = 0xFF
        path.write_bytes(bytes(blob))
        with pytest.raises(tf.arrow.TensorFileError, match="not UTF-8 text .* corrupt"):
            tf.load(path)


def test_column_errors_name_the_column_and_the_file(tmp_path):
    typ = pa.fixed_shape_tensor(pa.uint8(), [2])
    arr = pa.ExtensionArray.from_storage(typ, pa.array([[1, 2]], pa.list_(pa.uint8(), 2)))
    _write_with_field_metadata(tmp_path / "u8.arrow", [arr], [None], ["bytes"])
    with pytest.raises(tf.DTypeError, match=r"load: column 'bytes' of '.*u8\.arrow': Arrow element type uint8"):
        tf.load(tmp_path / "u8.arrow")
    tf.save(tmp_path / "n.arrow", {"n": [tf.ones((2,)), None]})
    with pytest.raises(tf.TenferroValueError, match=r"column 'n' of '.*n\.arrow': tensor 1 is null"):
        tf.load(tmp_path / "n.arrow", stack=True)


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
@pytest.mark.parametrize("interrupt", [RuntimeError, KeyboardInterrupt])
def test_a_write_failing_midway_leaves_the_older_file_and_no_temporary(tmp_path, monkeypatch, fmt, interrupt):
    path = tmp_path / f"keep.{fmt}"
    tf.save(path, {"a": tf.ones((2,))})
    before = path.read_bytes()
    big = {"a": [sample((64,), "float64", s) for s in range(64)]}
    real_write = _files._write
    seen = {}

    def write_half_then_fail(pa_, table, tmp, fmt_, options):
        real_write(pa_, table, tmp, fmt_, options)  # the whole file, in the temporary ...
        with open(tmp, "r+b") as f:
            f.truncate(os.path.getsize(tmp) // 2)  # ... cut in half, as if the disk filled up
        seen["tmp"] = tmp
        raise interrupt("disk on fire")

    monkeypatch.setattr(_files, "_write", write_half_then_fail)
    # an error becomes a typed one naming its cause; an interrupt goes through unchanged
    expected = KeyboardInterrupt if interrupt is KeyboardInterrupt else tf.arrow.TensorFileError
    with pytest.raises(expected, match="disk on fire") as info:
        tf.save(path, big)
    if interrupt is RuntimeError:
        assert "is unchanged" in str(info.value) and isinstance(info.value.__cause__, RuntimeError)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == [path.name] and not os.path.exists(seen["tmp"])
    same(tf.load(path)["a"], tf.ones((2,)))


def test_a_writer_failing_inside_pyarrow_leaves_the_older_file(tmp_path, monkeypatch):
    path = tmp_path / "keep.arrow"
    tf.save(path, {"a": tf.ones((2,))})
    before = path.read_bytes()
    real_new_file = ipc.new_file

    class HalfWriter:
        def __init__(self, sink, schema, **kw):
            self.inner = real_new_file(sink, schema, **kw)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write_table(self, table):
            self.inner.write_table(table.slice(0, 1))  # one batch reaches the disk, then the failure
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(ipc, "new_file", HalfWriter)
    with pytest.raises(tf.arrow.TensorFileError, match="No space left on device"):
        tf.save(path, {"a": [tf.ones((2,)), tf.zeros((2,))]})
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["keep.arrow"]


def test_save_keeps_the_mode_of_a_replaced_file_and_never_touches_the_umask(tmp_path, monkeypatch):
    path = tmp_path / "m.arrow"
    tf.save(path, {"a": tf.ones((2,))})
    os.chmod(path, 0o600)
    calls = []
    monkeypatch.setattr(_files.os, "umask", lambda *a: calls.append(a) or 0o022)  # not thread-safe: never used
    tf.save(path, {"a": tf.zeros((2,))})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and calls == []
    same(tf.load(path)["a"], tf.zeros((2,)))


@pytest.mark.parametrize("tail", ["/", "/.", "/..", os.sep + os.sep])
def test_a_path_ending_in_a_separator_or_dot_names_a_directory(tmp_path, tail):
    # pathlib would drop the tail and write or read the file x.arrow; the operating system refuses such a path
    tf.save(tmp_path / "x.arrow", {"a": tf.ones((2,))})
    before = (tmp_path / "x.arrow").read_bytes()
    for name in ("x.arrow", "new.arrow"):
        path = str(tmp_path / name) + tail
        with pytest.raises(
            tf.arrow.TensorFileError,
            match=r"names a directory \(it ends in .*\); expected a file "
            "path",
        ) as info:
            tf.save(path, {"a": tf.zeros((2,))})
        assert path in str(info.value)
        with pytest.raises(tf.arrow.TensorFileError, match="names a directory") as info:
            tf.load(path)
        assert path in str(info.value)
    assert os.listdir(tmp_path) == ["x.arrow"] and (tmp_path / "x.arrow").read_bytes() == before
    for bare in (".", ".."):
        with pytest.raises(tf.arrow.TensorFileError, match="names a directory"):
            tf.load(bare)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_save_through_a_symbolic_link_writes_the_file_it_points_to(tmp_path, fmt):
    target, link = tmp_path / f"t.{fmt}", tmp_path / f"l.{fmt}"
    tf.save(target, {"a": tf.ones((2,))})
    os.chmod(target, 0o640)
    os.symlink(target.name, link)  # relative, as `ln -s t.arrow l.arrow` makes it
    tf.save(link, {"a": tf.zeros((2,))})
    assert os.path.islink(link) and os.readlink(link) == target.name
    same(tf.load(target)["a"], tf.zeros((2,)))
    same(tf.load(link)["a"], tf.zeros((2,)))
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == sorted([target.name, link.name])
    # a link into another directory: the temporary file goes beside the target, which is replaced there
    (tmp_path / "sub").mkdir()
    os.symlink(os.path.join("sub", "deep.arrow"), tmp_path / "dangling.arrow")
    tf.save(tmp_path / "dangling.arrow", {"a": tf.ones((3,))})
    assert os.path.islink(tmp_path / "dangling.arrow") and os.listdir(tmp_path / "sub") == ["deep.arrow"]
    same(tf.load(tmp_path / "sub" / "deep.arrow")["a"], tf.ones((3,)))
    # a loop of links is refused, not replaced by a file
    os.symlink("loop2.arrow", tmp_path / "loop1.arrow")
    os.symlink("loop1.arrow", tmp_path / "loop2.arrow")
    with pytest.raises(tf.arrow.TensorFileError, match="loop"):
        tf.save(tmp_path / "loop1.arrow", {"a": tf.ones((2,))})
    assert os.path.islink(tmp_path / "loop1.arrow") and os.path.islink(tmp_path / "loop2.arrow")


def _load_in_thread(path):
    """tf.load(path) in a thread; its outcome, or "hung" when it is still blocked after 20 s."""
    out = {}

    def run():
        try:
            tf.load(path)
            out["result"] = "loaded"
        except BaseException as exc:  # noqa: BLE001
            out["result"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():  # blocked in open(): a writer end releases it
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(20)
        return "hung"
    return out["result"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_and_devices_are_refused_not_opened_or_replaced(tmp_path):
    fifo = tmp_path / "f.arrow"
    os.mkfifo(fifo)
    err = _load_in_thread(fifo)  # before: open() waited forever for a writer
    assert isinstance(err, tf.arrow.TensorFileError), err
    assert "f.arrow" in str(err) and "is a FIFO (named pipe), not a regular file" in str(err)
    with pytest.raises(tf.arrow.TensorFileError, match=r"'.*f\.arrow' is a FIFO \(named pipe\), not a regular file"):
        tf.save(fifo, {"a": tf.ones((2,))})
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and os.listdir(tmp_path) == ["f.arrow"]
    os.symlink("f.arrow", tmp_path / "l.arrow")  # through a link: the same
    with pytest.raises(tf.arrow.TensorFileError, match="FIFO"):
        tf.save(tmp_path / "l.arrow", {"a": tf.ones((2,))})
    assert isinstance(_load_in_thread(tmp_path / "l.arrow"), tf.arrow.TensorFileError)
    if os.path.exists("/dev/null"):  # a device reads as empty: it is refused as a device, not as an empty file
        with pytest.raises(tf.arrow.TensorFileError, match="'/dev/null' .*is a character device"):
            tf.load("/dev/null")


def test_entries_and_dim_names_are_validated_with_the_entry_named(tmp_path):
    p = tmp_path / "x.arrow"
    for entries, kwargs, exc, fragment in [
        ({1: tf.ones((2,))}, {}, tf.TenferroTypeError, "entry names must be non-empty strings, got 1 of type int"),
        ({"": tf.ones((2,))}, {}, tf.TenferroValueError, "entry names must be non-empty strings, got ''"),
        ({}, {}, tf.TenferroTypeError, "non-empty dict"),
        ({"a": "x"}, {}, tf.TenferroTypeError, "entry 'a' is a str"),
        ({"a": [np.ones(2)]}, {}, tf.TenferroTypeError, "save: entry 'a': entry 0 is a ndarray"),
        ({"a": []}, {}, tf.TenferroValueError, "save: entry 'a': cannot infer the shape"),
        ({"a": tf.asarray(1.0)}, {}, tf.ShapeError, "save: entry 'a': 0-d tensors"),
        ({"a": pa.array([1.0])}, {}, tf.TenferroTypeError, "save: entry 'a': expected an Arrow fixed_shape_tensor"),
        ({"a": tf.ones((2,))}, {"dim_names": ["i"]}, tf.TenferroTypeError, "dim_names must be a dict"),
        ({"a": tf.ones((2,))}, {"dim_names": 5}, tf.TenferroTypeError, "dim_names must be a dict"),
        ({"a": tf.ones((2,))}, {"dim_names": {"a": ["i", "j"]}}, tf.ShapeError, "save: entry 'a': 2 dim_names"),
        ({"a": tf.ones((2,))}, {"dim_names": {"a": [""]}}, tf.TenferroValueError, "non-empty strings"),
    ]:
        with pytest.raises(exc, match=fragment):
            tf.save(p, entries, **kwargs)
    assert os.listdir(tmp_path) == []


# == 3. the rest of the public surface ============================================================


def test_from_arrow_flags_are_bools_and_batch_axis_needs_stack():
    col = tf.arrow.to_arrow([tf.ones((2,))])
    for kwargs, fragment in [
        ({"stack": "no"}, "stack must be True or False"),
        ({"complex": "no"}, "complex must be None, True or False"),
        ({"copy": 0}, "copy must be None, True or False"),
        ({"batch_axis": 0}, "needs stack=True"),
    ]:
        with pytest.raises(tf.TenferroValueError, match=fragment):
            tf.arrow.from_arrow(col, **kwargs)
    assert tuple(tf.arrow.from_arrow(col, stack=np.True_, batch_axis=0).shape) == (1, 2)


def test_batch_axis_refuses_booleans():
    with pytest.raises(tf.AxisError, match="got the boolean True"):
        tf.arrow.to_arrow(tf.ones((2, 3)), batch_axis=True)
    with pytest.raises(tf.AxisError, match="got the boolean False"):
        tf.arrow.from_arrow(tf.arrow.to_arrow([tf.ones((2,))]), stack=True, batch_axis=False)


class _Producer:
    def __init__(self, device=(1, 0), error=None):
        self.device, self.error = device, error

    def __dlpack__(self, **kwargs):
        if self.error is not None:
            raise self.error
        return np.ones(2).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


@pytest.mark.parametrize(
    "producer, exc, fragment",
    [
        (_Producer(device=None), tf.PlacementError, "returned None; expected a pair of integers"),
        (_Producer(device=("cpu", 0)), tf.PlacementError, "returned ('cpu', 0)"),
        (_Producer(device=(1,)), tf.PlacementError, "returned (1,)"),
        (_Producer(error=KeyError("no buffer")), tf.PlacementError, "cannot import _Producer"),
        (_Producer(error=AttributeError("gone")), tf.PlacementError, "cannot import _Producer"),
    ],
)
def test_from_dlpack_producers_that_misbehave(producer, exc, fragment):
    with pytest.raises(exc) as info:
        tf.from_dlpack(producer)
    assert fragment in str(info.value)
    same(tf.from_dlpack(_Producer()), tf.ones((2,)))


@pytest.mark.parametrize("copy", [1, 0, "yes", 1.0])
def test_from_dlpack_copy_is_a_flag(copy):
    with pytest.raises(tf.TenferroValueError, match="copy must be None, True or False"):
        tf.from_dlpack(np.ones(2), copy=copy)
