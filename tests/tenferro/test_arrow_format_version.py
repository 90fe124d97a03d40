"""tenferro.load checks the file format version and table layout that tenferro.save records
(schema metadata ``tenferro.version`` and ``tenferro.layout``): a file of a newer format
version, or of an unknown layout, is a TensorFileError naming what it found and what this
tenferro reads; files of the current format, of version 1 before the layout was recorded,
and of other producers (no tenferro metadata) keep loading."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf

pytestmark = pytest.mark.cpu_only  # Arrow buffers live in host memory

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the 'arrow' extra)")
ipc = pytest.importorskip("pyarrow.ipc")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow was built without Parquet support")

FORMATS = ["arrow", "parquet"]
X = np.arange(6.0).reshape(2, 3)


def _read(path, fmt):
    if fmt == "parquet":
        return pq.read_table(path)
    with pa.memory_map(str(path)) as source:
        return ipc.open_file(source).read_all()


def _write(table, path, fmt):
    if fmt == "parquet":
        pq.write_table(table, path)
        return
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _restamped(tmp_path, fmt, metadata, entries=None):
    """A file of :func:`tenferro.save` whose schema metadata is replaced by ``metadata``."""
    src = tmp_path / f"src.{fmt}"
    tf.save(src, entries or {"x": tf.asarray(X)})
    table = _read(src, fmt).replace_schema_metadata(metadata)
    dst = tmp_path / f"dst.{fmt}"
    _write(table, dst, fmt)
    return dst


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_current_format_is_recorded_and_loads(tmp_path, fmt):
    path = tmp_path / f"t.{fmt}"
    tf.save(path, {"x": tf.asarray(X), "ys": [tf.asarray(X), tf.asarray(X)], "z": [tf.asarray(X)] * 3})
    meta = _read(path, fmt).schema.metadata
    assert meta[b"tenferro.version"] == b"1" and meta[b"tenferro.layout"] == b"packed"
    loaded = tf.load(path)
    np.testing.assert_array_equal(np.asarray(loaded["x"]), X)
    assert len(loaded["ys"]) == 2 and len(loaded["z"]) == 3


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("version", [b"2", b"99"])
def test_a_newer_format_version_is_refused_naming_the_versions(tmp_path, fmt, version):
    path = _restamped(tmp_path, fmt, {b"tenferro.version": version, b"tenferro.layout": b"rows"})
    with pytest.raises(tf.arrow.TensorFileError) as info:
        tf.load(path)
    msg = str(info.value)
    assert f"format version {version.decode()}" in msg and "reads format version(s) 1" in msg
    assert "newer tenferro" in msg and str(path) in msg
    assert isinstance(info.value, OSError)


@pytest.mark.parametrize("version", [b"0", b"-1", b"1.5", b"abc", b"\xff"])
def test_an_unknown_or_malformed_version_is_refused(tmp_path, version):
    path = _restamped(tmp_path, "arrow", {b"tenferro.version": version, b"tenferro.layout": b"rows"})
    with pytest.raises(tf.arrow.TensorFileError, match=r"reads format version\(s\) 1"):
        tf.load(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unknown_layout_is_refused(tmp_path, fmt):
    path = _restamped(tmp_path, fmt, {b"tenferro.version": b"1", b"tenferro.layout": b"something-new"})
    with pytest.raises(tf.arrow.TensorFileError) as info:
        tf.load(path)
    msg = str(info.value)
    assert "'something-new'" in msg and "'rows', 'packed'" in msg and str(path) in msg


def test_the_reproducer_file_stamped_99_with_an_unknown_layout_is_refused(tmp_path):
    path = _restamped(tmp_path, "arrow", {b"tenferro.version": b"99", b"tenferro.layout": b"something-new"})
    with pytest.raises(tf.arrow.TensorFileError, match="format version 99"):
        tf.load(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_version_1_without_a_layout_and_files_without_metadata_still_load(tmp_path, fmt):
    """Files of version 1 written before the packed layout existed (no ``tenferro.layout``),
    and files of other producers (no tenferro metadata at all)."""
    for meta in ({b"tenferro.version": b"1"}, {}):
        path = _restamped(tmp_path, fmt, meta)
        np.testing.assert_array_equal(np.asarray(tf.load(path)["x"]), X)
    path = _restamped(tmp_path, fmt, {b"tenferro.version": b"1"}, {"a": tf.asarray(X), "b": [tf.asarray(X)] * 2})
    loaded = tf.load(path)  # the packed table's columns say its layout
    assert len(loaded["b"]) == 2
