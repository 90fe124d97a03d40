"""tenferro.arrow and tenferro.save/load round trips lose nothing (issue 21, Arrow and
files): complex tensors come back complex from a column alone (the marker in the type's
dim_names), through IPC, Parquet, table.column and chunked arrays; real data of other
producers stays real. A property test covers dtypes x shapes (size 0 included) x batch
axes x lists with None, in memory and through files of both formats. Bad input is in
test_arrow_safety.py.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf

pytestmark = pytest.mark.cpu_only  # Arrow buffers live in host memory

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the 'arrow' extra)")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow was built without Parquet support")
ipc = pytest.importorskip("pyarrow.ipc")

DTYPES = ["int32", "int64", "float32", "float64", "complex64", "complex128"]
PA_VERSION = tuple(int(p) for p in pa.__version__.split(".")[:1])


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


def same_list(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            same(g, w)


def ipc_round_trip(table):
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return ipc.open_file(pa.BufferReader(sink.getvalue())).read_all()


def parquet_round_trip(table, tmp):
    path = os.path.join(tmp, "t.parquet")
    pq.write_table(table, path)
    return pq.read_table(path)


# == 1. round trips ===============================================================================


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_column_alone_comes_back_complex(dtype):
    items = [sample((2, 3), dtype, s) for s in range(4)]
    same_list(tf.arrow.from_arrow(tf.arrow.to_arrow(items)), items)
    batch = sample((2, 3, 5), dtype)
    col = tf.arrow.to_arrow(batch, batch_axis=-1)
    same(tf.arrow.from_arrow(col, stack=True), batch)
    same(tf.arrow.from_arrow(tf.arrow.to_arrow(batch, batch_axis=0), stack=True, batch_axis=0), batch)
    info = tf.arrow.tensor_info(col)
    assert info.is_complex and info.shape == (2, 3, 2) and info.tensor_dim_names is None
    named = tf.arrow.to_arrow(items, ["row", "col"])
    assert tf.arrow.tensor_info(named).tensor_dim_names == ("row", "col")
    same_list(tf.arrow.from_arrow(named), items)


def test_complex_marker_survives_ipc_parquet_table_column_and_chunks(tmp_path):
    items = [sample((3, 2), "complex128", s) for s in range(6)]
    col = tf.arrow.to_arrow(items)
    table = pa.table({"z": col})
    for t in (table, ipc_round_trip(table), parquet_round_trip(table, str(tmp_path))):
        chunked = t.column("z")  # a ChunkedArray
        same_list(tf.arrow.from_arrow(chunked), items)
        same_list(tf.arrow.from_arrow(chunked.combine_chunks()), items)
    same_list(tf.arrow.from_arrow(pa.chunked_array([col.slice(0, 2), col.slice(2)])), items)
    same_list(tf.arrow.from_arrow(col.slice(1, 3)), items[1:4])
    same_list(tf.arrow.from_arrow(pa.concat_arrays([col, col])), items + items)
    same_list(tf.arrow.from_arrow(col.take(pa.array([5, 0]))), [items[5], items[0]])


def test_saved_arrow_column_of_complex_loads_complex(tmp_path):
    batch = sample((2, 2, 7), "complex64")
    for fmt in ("arrow", "parquet"):
        path = tmp_path / f"z.{fmt}"
        tf.save(path, {"b": tf.arrow.to_arrow(batch, batch_axis=-1)})
        same(tf.load(path, stack=True)["b"], batch)
        assert tf.load(path).dim_names["b"] is None


def test_real_data_from_other_producers_stays_real_and_flags_still_work():
    pairs = np.arange(4 * 3 * 2, dtype=np.float64).reshape(4, 3, 2)  # (re, im)-shaped, but not marked
    theirs = pa.FixedShapeTensorArray.from_numpy_ndarray(pairs)
    got = tf.arrow.from_arrow(theirs)
    assert got[0].dtype is tf.float64 and tuple(got[0].shape) == (3, 2)
    z = tf.arrow.from_arrow(theirs, complex=True)  # foreign pairs on request
    np.testing.assert_array_equal(np.asarray(z[1]), pairs[1, :, 0] + 1j * pairs[1, :, 1])
    typ = pa.fixed_shape_tensor(pa.float64(), [3, 2], dim_names=["x", "y"])
    named = pa.ExtensionArray.from_storage(typ, theirs.storage)
    assert tf.arrow.from_arrow(named)[0].dtype is tf.float64
    ints = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.int64(), [3, 2], dim_names=["", "re_im"]),
        pa.FixedSizeListArray.from_arrays(pa.array(np.arange(12)), 6),
    )
    assert tf.arrow.from_arrow(ints)[0].dtype is tf.int64  # integers are never pairs
    marked = tf.arrow.to_arrow([sample((3,), "complex128")])
    kept = tf.arrow.from_arrow(marked, complex=False)  # marked pairs kept real on request
    assert kept[0].dtype is tf.float64 and tuple(kept[0].shape) == (3, 2)
    assert tf.arrow.from_arrow(marked)[0].dtype is tf.complex128  # ... and complex by default


def test_names_that_would_fake_or_hide_the_marker_are_refused():
    with pytest.raises(tf.TenferroValueError, match="'re_im' is reserved"):
        tf.arrow.to_arrow([tf.ones((3, 2))], ["a", "re_im"])
    with pytest.raises(tf.TenferroValueError, match="non-empty strings"):
        tf.arrow.to_arrow([tf.ones((3, 2))], ["a", ""])


def test_files_of_earlier_tenferro_still_load():
    """Before issue 21, save recorded the element type (float64) for a complex Arrow array
    given as an entry, and unnamed complex tensors had no marker: both still load complex."""
    z = sample((2, 3), "complex128")
    pairs = np.stack([np.asarray(z).real, np.asarray(z).imag], axis=-1)  # (2, 3, 2)
    flat = np.ascontiguousarray(pairs.transpose(1, 0, 2)).reshape(-1)  # physical (3, 2, 2)
    storage = pa.FixedSizeListArray.from_arrays(pa.array(flat), 12)
    old_named = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.float64(), [3, 2, 2], dim_names=["j", "i", "re_im"], permutation=[1, 0, 2]), storage
    )
    old_plain = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.float64(), [3, 2, 2], permutation=[1, 0, 2]), storage
    )
    fields = [
        pa.field("named", old_named.type, metadata={b"tenferro.kind": b"list", b"tenferro.dtype": b"float64"}),
        pa.field("plain", old_plain.type, metadata={b"tenferro.kind": b"tensor", b"tenferro.dtype": b"complex128"}),
    ]
    table = pa.Table.from_arrays([old_named, old_plain], schema=pa.schema(fields))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "old.arrow")
        with pa.OSFile(path, "wb") as sink, ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
        loaded = tf.load(path)
    same(loaded["named"][0], z)
    same(loaded["plain"], z)
    assert loaded.dim_names == {"named": ("i", "j"), "plain": None}


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
    n = draw(st.integers(1, 4))
    nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    names = draw(st.none() | st.just([f"d{i}" for i in range(len(shape))]))
    batch_axis = draw(st.integers(-len(shape) - 1, len(shape)))
    return dtype, shape, nulls, names, batch_axis


@settings(max_examples=200, deadline=None)
@given(cases())
def test_round_trips_are_exact_in_values_dtype_and_shape(case):
    dtype, shape, nulls, names, batch_axis = case
    items = [None if null else sample(shape, dtype, k) for k, null in enumerate(nulls)]
    if all(t is None for t in items):
        items[0] = sample(shape, dtype, 99)
    # a list with None, in memory
    same_list(tf.arrow.from_arrow(tf.arrow.to_arrow(items, names)), items)
    # one batch tensor with its batch at batch_axis, in memory
    full = [t if t is not None else tf.zeros(shape, tf.dtype(dtype)) for t in items]
    batch = tf.asarray(np.asfortranarray(np.stack([np.asarray(t) for t in full], axis=batch_axis)))
    col = tf.arrow.to_arrow(batch, names, batch_axis=batch_axis)
    same(tf.arrow.from_arrow(col, stack=True, batch_axis=batch_axis), batch)
    assert tf.arrow.tensor_info(col).tensor_dim_names == (None if names is None else tuple(names))
    # through files of both formats (pyarrow cannot read size-0 tensors back from Parquet)
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("arrow", "parquet"):
            if fmt == "parquet" and (0 in shape or (PA_VERSION < (26,) and any(nulls))):
                continue
            path = os.path.join(tmp, f"t.{fmt}")
            tf.save(
                path,
                {"list": items, "one": full[0], "col": col},
                dim_names=None if names is None else {"list": names, "one": names},
            )
            for mmap in (True, False):
                loaded = tf.load(path, mmap=mmap)
                same_list(loaded["list"], items)
                same(loaded["one"], full[0])
                same_list(
                    loaded["col"],
                    [
                        tf.asarray(np.asfortranarray(np.moveaxis(np.asarray(batch), batch_axis, 0)[k]))
                        for k in range(len(items))
                    ],
                )
                expect = None if names is None else tuple(names)
                assert loaded.dim_names == {"list": expect, "one": expect, "col": expect}
            if not any(t is None for t in items):  # a list with nulls cannot be stacked
                stacked = tf.load(path, stack=True)
                same(stacked["col"], tf.asarray(np.asfortranarray(np.moveaxis(np.asarray(batch), batch_axis, -1))))
                same(stacked["list"], tf.asarray(np.asfortranarray(np.stack([np.asarray(t) for t in items], -1))))
