"""tenferro.save / tenferro.load: tensor files in Arrow IPC and Parquet."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tenferro as tf

pytestmark = pytest.mark.cpu_only  # Arrow buffers live in host memory

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the 'arrow' extra)")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow was built without Parquet support")

FORMATS = ["arrow", "parquet"]
DTYPES = ["int32", "int64", "float32", "float64", "complex64", "complex128"]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, size=shape) if np.dtype(dtype).kind == "i" else rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return tf.asarray(np.asfortranarray(x.astype(dtype)))


def same(a, b):
    assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("fmt", FORMATS)
def test_single_tensors_of_every_dtype_round_trip(tmp_path, fmt):
    entries = {d: sample((2, 3, 4), d, i) for i, d in enumerate(DTYPES)}
    entries["vector"] = sample((5,), "float64")
    if fmt == "arrow":  # pyarrow cannot read zero-length fixed-size lists back from Parquet
        entries["empty"] = tf.zeros((0, 3), tf.complex64)
    names = {"float64": ["i", "j", "k"], "complex128": ["a", "b", "c"]}
    path = tmp_path / f"t.{fmt}"
    tf.save(path, entries, format=fmt, dim_names=names)
    loaded = tf.load(path)
    assert list(loaded) == list(entries)
    for k, v in entries.items():
        same(loaded[k], v)
        assert loaded[k].is_contiguous
    assert loaded.dim_names["float64"] == ("i", "j", "k")
    assert loaded.dim_names["complex128"] == ("a", "b", "c")
    assert loaded.dim_names["int32"] is None


def test_parquet_refuses_what_pyarrow_cannot_read_back(tmp_path):
    with pytest.raises(tf.TenferroValueError, match="size-0 tensors"):
        tf.save(tmp_path / "e.parquet", {"e": tf.zeros((0, 3))}, format="parquet")
    if tuple(int(p) for p in pa.__version__.split(".")[:1]) < (26,):
        with pytest.raises(tf.TenferroValueError, match="null tensors"):
            tf.save(tmp_path / "n.parquet", {"n": [tf.ones((2,)), None]}, format="parquet")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_ten_thousand_tensor_batch_with_nulls(tmp_path, fmt):
    rng = np.random.default_rng(7)
    data = rng.standard_normal((3, 4, 10_000))
    nulls = set(rng.choice(10_000, size=250, replace=False).tolist())
    batch = [None if k in nulls else tf.asarray(np.asfortranarray(data[..., k])) for k in range(10_000)]
    zbatch = [None if t is None else tf.asarray(np.asarray(t) * (1 - 2j)) for t in batch]
    path = tmp_path / f"batch.{fmt}"
    if fmt == "parquet" and tuple(int(p) for p in pa.__version__.split(".")[:1]) < (26,):
        # pyarrow < 26 cannot read null fixed-size lists back from Parquet: save refuses them, writing nothing
        with pytest.raises(tf.TenferroValueError, match="null tensors"):
            tf.save(path, {"x": batch, "z": zbatch}, format=fmt)
        assert os.listdir(tmp_path) == []
        return
    tf.save(path, {"x": batch, "z": zbatch}, format=fmt, dim_names={"x": ["row", "col"]})
    loaded = tf.load(path)
    assert loaded.dim_names["x"] == ("row", "col")
    for key, src in (("x", batch), ("z", zbatch)):
        got = loaded[key]
        assert len(got) == 10_000
        assert [k for k, t in enumerate(got) if t is None] == sorted(nulls)
        valid = [k for k in range(10_000) if k not in nulls]
        np.testing.assert_array_equal(
            np.stack([np.asarray(got[k]) for k in valid]), np.stack([np.asarray(src[k]) for k in valid])
        )
        assert got[valid[0]].dtype is src[valid[0]].dtype
    with pytest.raises(tf.TenferroValueError, match="is null"):
        tf.load(path, stack=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_ten_thousand_tensor_batch_stacked(tmp_path, fmt):
    batch = sample((2, 3, 10_000), "float32")
    path = tmp_path / f"stacked.{fmt}"
    tf.save(path, {"b": tf.arrow.to_arrow(batch, batch_axis=-1)}, format=fmt)
    loaded = tf.load(path, stack=True)
    same(loaded["b"], batch)
    assert loaded["b"].is_contiguous


def test_arrow_ipc_load_is_memory_mapped_and_zero_copy(tmp_path):
    import gc

    batch = sample((64, 64, 16), "float64")  # 512 KiB
    path = tmp_path / "mm.arrow"
    tf.save(path, {"b": tf.arrow.to_arrow(batch, batch_axis=-1)})
    gc.collect()  # so that no earlier Arrow memory is freed while we measure
    before = pa.total_allocated_bytes()
    mapped = tf.load(path, stack=True)
    assert pa.total_allocated_bytes() - before < 4096  # nothing read into Arrow's memory pool
    b = mapped["b"]
    assert b.is_contiguous and not np.asarray(b).flags.writeable
    same(b, batch)
    # the tensor's memory lies inside this process's mapping of the file
    start = np.asarray(b).__array_interface__["data"][0]
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps if line.rstrip().endswith(str(path))]
    if not regions:
        pytest.skip("/proc/self/maps is not available to check the mapping")
    spans = [tuple(int(x, 16) for x in r[0].split("-")) for r in regions]
    assert any(lo <= start and start + batch.size * 8 <= hi for lo, hi in spans)
    gc.collect()
    before = pa.total_allocated_bytes()
    read = tf.load(path, stack=True, mmap=False)
    assert pa.total_allocated_bytes() - before >= batch.size * 8  # read into memory instead
    same(read["b"], batch)


def test_loaded_tensors_outlive_the_file_handle(tmp_path):
    import gc

    path = tmp_path / "gc.arrow"
    tf.save(path, {"a": [sample((3, 2), "int64", s) for s in range(3)]})
    items = tf.load(path)["a"]
    gc.collect()
    same(items[2], sample((3, 2), "int64", 2))
    assert float(tf.sum(items[1])) == float(np.asarray(sample((3, 2), "int64", 1)).sum())


@pytest.mark.parametrize("fmt", FORMATS)
def test_entries_of_different_lengths_use_the_packed_layout(tmp_path, fmt):
    snapshots = [sample((4, 4), "float64", s) for s in range(50)]
    if fmt == "arrow" or tuple(int(p) for p in pa.__version__.split(".")[:1]) >= (26,):
        snapshots[3] = None  # pyarrow < 26 cannot read null fixed-size lists back from Parquet
    h = sample((4, 4), "complex128", 99)
    path = tmp_path / f"packed.{fmt}"
    tf.save(path, {"snapshots": snapshots, "H": h, "pair": [h, h]}, format=fmt, dim_names={"H": ["i", "j"]})
    table = pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    assert table.num_rows == 1 and table.schema.metadata[b"tenferro.layout"] == b"packed"
    loaded = tf.load(path)
    same(loaded["H"], h)
    assert loaded.dim_names["H"] == ("i", "j")
    assert len(loaded["pair"]) == 2
    same(loaded["pair"][1], h)
    assert len(loaded["snapshots"]) == 50 and (loaded["snapshots"][3] is None) == (snapshots[3] is None)
    for a, b in zip(loaded["snapshots"], snapshots):
        if b is not None:
            same(a, b)


def test_packed_layout_is_memory_mapped_too(tmp_path):
    batch = sample((32, 32, 64), "float64")
    path = tmp_path / "packed.arrow"
    tf.save(path, {"b": tf.arrow.to_arrow(batch, batch_axis=-1), "one": tf.ones((3,))})
    import gc

    gc.collect()
    before = pa.total_allocated_bytes()
    loaded = tf.load(path, stack=True)
    assert pa.total_allocated_bytes() - before < 4096
    same(loaded["b"], batch)
    assert not np.asarray(loaded["b"]).flags.writeable


def test_mps_like_entries_of_different_shapes(tmp_path):
    # site tensors of different shapes, one per entry (how an MPS will be stored)
    sites = {f"site{i}": sample(s, "complex128", i) for i, s in enumerate([(1, 2, 3), (3, 2, 3), (3, 2, 1)])}
    tf.save(tmp_path / "mps.arrow", sites)
    loaded = tf.load(tmp_path / "mps.arrow")
    for k, v in sites.items():
        same(loaded[k], v)


@pytest.mark.parametrize("fmt", FORMATS)
def test_files_are_readable_by_plain_pyarrow(tmp_path, fmt):
    tensors = [sample((2, 3), "float64", s) for s in range(5)]
    path = tmp_path / f"interop.{fmt}"
    tf.save(path, {"t": tensors}, format=fmt)
    table = pq.read_table(path) if fmt == "parquet" else pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    col = table.column("t").combine_chunks()
    np.testing.assert_array_equal(col.to_numpy_ndarray(), np.stack([np.asarray(t) for t in tensors]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_files_from_plain_pyarrow_load(tmp_path, fmt):
    x = np.arange(2 * 3 * 4, dtype=np.int32).reshape(4, 2, 3)
    table = pa.table({"x": pa.FixedShapeTensorArray.from_numpy_ndarray(x)})
    path = tmp_path / f"theirs.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path)
    else:
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
    loaded = tf.load(path)
    got = loaded["x"]
    assert isinstance(got, list) and len(got) == 4 and got[0].is_contiguous
    np.testing.assert_array_equal(np.stack([np.asarray(t) for t in got]), x)


# -- errors and atomic writes -------------------------------------------------------------------


def test_bad_entries_leave_an_existing_file_untouched(tmp_path):
    path = tmp_path / "keep.arrow"
    tf.save(path, {"a": tf.ones((2,))})
    before = path.read_bytes()
    with pytest.raises(tf.ShapeError, match="entry 1 has shape"):
        tf.save(path, {"a": [tf.ones((2,)), tf.ones((3,))], "b": tf.ones((2,))})
    with pytest.raises(tf.DTypeError, match="packs booleans"):
        tf.save(path, {"a": tf.asarray([True])})
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["keep.arrow"]


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    import pyarrow.ipc as ipc

    class Boom(RuntimeError):
        pass

    def failing_new_file(*args, **kwargs):
        raise Boom("disk on fire")

    monkeypatch.setattr(ipc, "new_file", failing_new_file)
    with pytest.raises(tf.arrow.TensorFileError, match="disk on fire"):
        tf.save(tmp_path / "x.arrow", {"a": tf.ones((2,))})
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda p: tf.save(p / "x", {"a": tf.ones((2,))}, format="hdf5"), tf.TenferroValueError, "unknown format"),
        (lambda p: tf.save(p / "x", {}), tf.TenferroTypeError, "non-empty dict"),
        (lambda p: tf.save(p / "x", [tf.ones((2,))]), tf.TenferroTypeError, "non-empty dict"),
        (lambda p: tf.save(p / "x", {"a": 1.0}), tf.TenferroTypeError, "entry 'a' is a float"),
        (lambda p: tf.save(p / "x", {1: tf.ones((2,))}), tf.TenferroTypeError, "non-empty strings"),
        (
            lambda p: tf.save(p / "x", {"a": tf.ones((2,))}, dim_names={"b": ["i"]}),
            tf.TenferroValueError,
            "not entries",
        ),
        (lambda p: tf.save(p / "x", {"a": tf.ones((2,))}, dim_names={"a": ["i", "j"]}), tf.ShapeError, "dim_names"),
        (lambda p: tf.save(p / "missing" / "x", {"a": tf.ones((2,))}), tf.arrow.TensorFileError, "does not exist"),
        (lambda p: tf.save(p, {"a": tf.ones((2,))}), tf.arrow.TensorFileError, "is a directory"),
        (lambda p: tf.load(p / "nope.arrow"), tf.arrow.TensorFileError, "cannot open"),
        (lambda p: tf.save(p / "x", {"a": [None, None]}), tf.TenferroValueError, "no tensors"),
    ],
)
def test_typed_errors(tmp_path, call, error, match):
    with pytest.raises(error, match=match):
        call(tmp_path)


def test_not_a_tensor_file(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello world, not arrow")
    with pytest.raises(tf.arrow.TensorFileError, match="neither an Arrow IPC file nor a Parquet file"):
        tf.load(junk)
    truncated = tmp_path / "trunc.arrow"
    tf.save(truncated, {"a": tf.ones((100,))})
    truncated.write_bytes(truncated.read_bytes()[:40])
    with pytest.raises(tf.arrow.TensorFileError, match="could not be read"):
        tf.load(truncated)
    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"v": [1.0, 2.0]}), plain)
    with pytest.raises(tf.arrow.TensorFileError, match="column 'v'.*fixed_shape_tensor"):
        tf.load(plain)


def test_saved_files_get_the_usual_mode(tmp_path):
    import os
    import stat

    umask = os.umask(0)
    os.umask(umask)
    path = tmp_path / "m.arrow"
    tf.save(path, {"a": tf.ones((2, 3))}, format="arrow")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask
