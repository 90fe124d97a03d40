"""tenferro.arrow: batches of tensors <-> Arrow fixed_shape_tensor arrays.

Checks the permutation convention against pyarrow's own conversions, zero-copy by
buffer address, round trips over dtypes x shapes (size 0 included) x layouts x
nulls x dim names, and the typed errors.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
from tenferro.arrow import _layout

pytestmark = pytest.mark.cpu_only  # Arrow buffers live in host memory

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (the 'arrow' extra)")

NUMERIC = ["int32", "int64", "float32", "float64", "complex64", "complex128"]


def addr(t) -> int:
    """Address of the first element of a tensor or array."""
    return np.asarray(t).__array_interface__["data"][0]


def values_addr(arr) -> int:
    """Address of the first element of a fixed_shape_tensor array's values."""
    storage = arr.storage
    values = storage.values
    return values.buffers()[1].address + (values.offset + storage.offset * storage.type.list_size) * (
        values.type.bit_width // 8
    )  # DataType.byte_width is newer than pyarrow 16


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, size=shape) if np.dtype(dtype).kind == "i" else rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return np.asfortranarray(x.astype(dtype))


def batch_of(tensors):
    """The (N, *shape) numpy stack of a list of tensors."""
    return np.stack([np.asarray(t) for t in tensors])


# -- the permutation convention ---------------------------------------------------------------


def test_layout_helpers_follow_seed_000_example():
    # seed 000: logical shape [4, 2, 3] with permutation [2, 0, 1] has physical shape [2, 3, 4]
    # and logical strides [1, 12, 4].
    assert _layout.physical_shape((4, 2, 3), (2, 0, 1)) == (2, 3, 4)
    assert _layout.logical_shape((2, 3, 4), (2, 0, 1)) == (4, 2, 3)
    view = _layout.logical_batch_view(np.arange(24), 1, (2, 3, 4), (2, 0, 1))[0]
    assert view.shape == (4, 2, 3)
    assert tuple(s // view.itemsize for s in view.strides) == (1, 12, 4)
    assert _layout.physical_names(("a", "b", "c"), (2, 0, 1)) == ("b", "c", "a")
    assert _layout.logical_names(("b", "c", "a"), (2, 0, 1)) == ("a", "b", "c")


@given(st.lists(st.integers(0, 4), min_size=1, max_size=5), st.randoms())
def test_layout_shape_and_name_maps_are_inverse(shape, rnd):
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    phys = _layout.physical_shape(shape, perm)
    assert _layout.logical_shape(phys, perm) == tuple(shape)
    names = tuple(f"d{i}" for i in range(len(shape)))
    assert _layout.logical_names(_layout.physical_names(names, perm), perm) == names


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_spec_convention_by_index_arithmetic(perm):
    """Logical element idx of tensor k lives at flat[k*size + sum(phys_idx[j] * phys_stride[j])] with
    phys_idx[perm[i]] = idx[i] (the Arrow spec); from_arrow reads exactly that, for every permutation."""
    phys = (2, 3, 4)
    n, size = 2, 24
    flat = np.arange(n * size, dtype=np.float64)
    typ = pa.fixed_shape_tensor(pa.float64(), list(phys), permutation=list(perm))
    arr = pa.ExtensionArray.from_storage(typ, pa.FixedSizeListArray.from_arrays(pa.array(flat), size))
    tensors = tf.arrow.from_arrow(arr)
    pstrides = (12, 4, 1)
    for k, t in enumerate(tensors):
        assert tuple(t.shape) == tuple(phys[p] for p in perm)
        for idx in itertools.product(*(range(e) for e in t.shape)):
            pidx = [0, 0, 0]
            for i, p in enumerate(perm):
                pidx[p] = idx[i]
            assert np.asarray(t)[idx] == flat[k * size + sum(a * s for a, s in zip(pidx, pstrides))]


def _involutions(ndim):
    return [p for p in itertools.permutations(range(ndim)) if all(p[p[i]] == i for i in range(ndim))]


@pytest.mark.parametrize("perm", [p for nd in (1, 2, 3, 4) for p in _involutions(nd)])
def test_convention_agrees_with_pyarrow_to_numpy_ndarray(perm):
    """pyarrow's to_numpy_ndarray and from_arrow give the same logical tensors.

    Only involutive permutations are compared: pyarrow (checked with 26.0) computes
    wrong, overlapping strides in to_numpy_ndarray for permutations with cycles of
    length >= 3 (e.g. [1, 2, 0]); test_spec_convention_by_index_arithmetic covers
    those against the spec itself. tenferro writes only the identity and the
    reversal (both involutions), so pyarrow reads everything tenferro writes."""
    phys = tuple(range(2, 2 + len(perm)))
    size = int(np.prod(phys))
    flat = np.arange(3 * size, dtype=np.int64)
    typ = pa.fixed_shape_tensor(pa.int64(), list(phys), permutation=list(perm))
    arr = pa.ExtensionArray.from_storage(typ, pa.FixedSizeListArray.from_arrays(pa.array(flat), size))
    expect = arr.to_numpy_ndarray()
    np.testing.assert_array_equal(batch_of(tf.arrow.from_arrow(arr)), expect)
    np.testing.assert_array_equal(np.moveaxis(np.asarray(tf.arrow.from_arrow(arr, stack=True)), -1, 0), expect)
    assert tf.arrow.tensor_info(arr).shape == expect.shape[1:]


def test_pyarrow_from_numpy_ndarray_inverts_cyclic_permutations():
    """A divergence of pyarrow from the Arrow spec, recorded here so that it is visible.

    For a batch whose per-tensor layout is a 3-cycle permutation of row-major,
    pyarrow 26's from_numpy_ndarray records the inverse of the spec permutation
    (and its to_numpy_ndarray computes overlapping strides for such permutations).
    tenferro follows the spec: when pyarrow records the spec permutation, from_arrow
    must return the input; while it records the inverse, this test is an expected
    failure. tenferro itself never writes such permutations."""
    phys = np.arange(2 * 24).reshape(2, 2, 3, 4)
    perm = (1, 2, 0)  # logical i is physical perm[i]: a 3-cycle
    x = phys.transpose(0, *(p + 1 for p in perm))  # logical (3, 4, 2) views of row-major (2, 3, 4)
    theirs = pa.FixedShapeTensorArray.from_numpy_ndarray(x)
    recorded = tuple(theirs.type.permutation)
    if recorded == tuple(np.argsort(perm)):
        pytest.xfail(f"pyarrow {pa.__version__} records the inverse permutation {recorded} instead of {perm}")
    assert recorded == perm
    np.testing.assert_array_equal(batch_of(tf.arrow.from_arrow(theirs)), x)


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4), (3, 1, 2, 2), (2, 0, 3)])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_to_arrow_agrees_with_pyarrow_both_ways(shape, dtype):
    tensors = [tf.asarray(sample(shape, dtype, seed)) for seed in range(4)]
    arr = tf.arrow.to_arrow(tensors)
    # pyarrow reads what tenferro writes ...
    np.testing.assert_array_equal(arr.to_numpy_ndarray(), batch_of(tensors))
    # ... and tenferro reads what pyarrow writes (row-major, identity permutation)
    stacked = batch_of(tensors)
    if stacked.size == 0:
        return  # pyarrow's from_numpy_ndarray refuses empty arrays
    theirs = pa.FixedShapeTensorArray.from_numpy_ndarray(np.ascontiguousarray(stacked))
    assert theirs.type.permutation in (None, list(range(len(shape))))
    np.testing.assert_array_equal(batch_of(tf.arrow.from_arrow(theirs)), stacked)
    # pyarrow's own reading of a column-major numpy batch (batch axis first) gives the reversed permutation.
    # (Extent-1 axes have no meaningful stride; pyarrow may then derive a permutation with a 3-cycle and
    # records it inverted -- see test_pyarrow_from_numpy_ndarray_inverts_cyclic_permutations.)
    if 1 in shape:
        return
    fbatch = np.asfortranarray(np.moveaxis(stacked, 0, -1))
    theirs_f = pa.FixedShapeTensorArray.from_numpy_ndarray(np.moveaxis(fbatch, -1, 0))
    assert theirs_f.type.permutation in (None, list(_layout.f_order_permutation(len(shape))))
    assert values_addr(theirs_f) == addr(fbatch)
    back = tf.arrow.from_arrow(theirs_f, stack=True)
    assert addr(back) == addr(fbatch)  # zero copy both ways
    np.testing.assert_array_equal(np.asarray(back), fbatch)


def test_dim_names_are_physical_in_arrow_and_logical_in_tenferro():
    batch = tf.asarray(sample((2, 3, 4, 5), "float64"))
    arr = tf.arrow.to_arrow(batch, ["i", "j", "k"], batch_axis=-1)
    assert arr.type.dim_names == ["k", "j", "i"]  # physical (row-major) order, as the spec says
    assert arr.type.permutation == [2, 1, 0]
    # pyarrow's to_tensor permutes names to the logical order
    assert arr.to_tensor().dim_names[1:] == ["i", "j", "k"]
    assert tf.arrow.tensor_info(arr).dim_names == ("i", "j", "k")
    assert tf.arrow.tensor_info(arr).shape == (2, 3, 4)


def test_tenferro_writes_only_identity_or_reversed_permutations():
    base = sample((2, 3, 4, 6), "float64")
    for axes in itertools.permutations(range(4)):
        t = tf.transpose_view(tf.asarray(base), axes)
        for b in range(4):
            perm = tf.arrow.to_arrow(t, batch_axis=b).type.permutation
            assert perm in (None, [2, 1, 0])


# -- zero copy, by buffer address -------------------------------------------------------------


def test_canonical_batch_tensor_is_shared_with_arrow():
    batch = tf.asarray(sample((3, 4, 5), "float64"))  # five 3x4 tensors, trailing batch
    arr = tf.arrow.to_arrow(batch, batch_axis=-1)
    assert values_addr(arr) == addr(batch)
    assert arr.type.shape == [4, 3] and arr.type.permutation == [1, 0]
    back = tf.arrow.from_arrow(arr, stack=True)
    assert addr(back) == addr(batch) and back.is_contiguous
    items = tf.arrow.from_arrow(arr)
    for k, t in enumerate(items):
        assert addr(t) == addr(batch) + k * 12 * 8 and t.is_contiguous
        np.testing.assert_array_equal(np.asarray(t), np.asarray(batch)[..., k])


def test_row_major_batch_view_is_shared_with_identity_permutation():
    base = tf.asarray(sample((4, 3, 5), "float32"))  # F-contiguous (4, 3, 5)
    rowmajor = tf.transpose_view(base)  # (5, 3, 4) with C strides: five row-major 3x4
    arr = tf.arrow.to_arrow(rowmajor, batch_axis=0)
    assert arr.type.permutation is None and arr.type.shape == [3, 4]
    assert values_addr(arr) == addr(base)
    np.testing.assert_array_equal(arr.to_numpy_ndarray(), np.asarray(rowmajor))
    # reading row-major data back copies into column-major by default (like asarray of a C array) ...
    items = tf.arrow.from_arrow(arr)
    assert all(t.is_contiguous for t in items)
    assert not any(np.shares_memory(np.asarray(t), np.asarray(base)) for t in items)
    # ... and copy=False keeps strided views of the Arrow buffer instead
    views = tf.arrow.from_arrow(arr, copy=False)
    assert addr(views[1]) == addr(base) + 12 * 4 and not views[1].is_contiguous
    np.testing.assert_array_equal(batch_of(views), np.asarray(rowmajor))
    stacked = tf.arrow.from_arrow(arr, stack=True, batch_axis=0, copy=False)
    assert addr(stacked) == addr(base)
    np.testing.assert_array_equal(np.asarray(stacked), np.asarray(rowmajor))


def test_copies_happen_where_documented():
    batch = tf.asarray(sample((5, 3, 4), "float64"))
    arr = tf.arrow.to_arrow(batch, batch_axis=0)  # batch axis is the fastest: must copy
    assert not np.shares_memory(np.frombuffer(arr.storage.values.buffers()[1]), np.asarray(batch))
    np.testing.assert_array_equal(batch_of(tf.arrow.from_arrow(arr)), np.asarray(batch))
    items = [tf.asarray(sample((2, 2), "float64", s)) for s in range(3)]
    arr = tf.arrow.to_arrow(items)  # a list is copied once into one buffer
    assert not any(np.shares_memory(np.frombuffer(arr.storage.values.buffers()[1]), np.asarray(t)) for t in items)
    copied = tf.arrow.from_arrow(tf.arrow.to_arrow(batch, batch_axis=-1), copy=True)
    assert not any(np.shares_memory(np.asarray(t), np.asarray(batch)) for t in copied)


def test_complex_is_stored_as_re_im_pairs_without_copy():
    z = tf.asarray(sample((2, 3, 4), "complex128"))  # four 2x3 complex tensors
    arr = tf.arrow.to_arrow(z, ["row", "col"], batch_axis=-1)
    assert arr.type.value_type == pa.float64()
    assert values_addr(arr) == addr(z)
    info = tf.arrow.tensor_info(arr)
    assert info.shape == (2, 3, 2) and info.dim_names == ("row", "col", tf.arrow.COMPLEX_AXIS_NAME)
    # pyarrow sees (N, *shape, 2): torch.view_as_real's convention
    pairs = arr.to_numpy_ndarray()
    np.testing.assert_array_equal(pairs[..., 0] + 1j * pairs[..., 1], np.moveaxis(np.asarray(z), -1, 0))
    back = tf.arrow.from_arrow(arr, complex=True, stack=True)
    assert back.dtype is tf.complex128 and addr(back) == addr(z)
    np.testing.assert_array_equal(np.asarray(back), np.asarray(z))
    as_real = tf.arrow.from_arrow(arr, complex=False)  # the real pairs (the default reads the marker: complex)
    assert as_real[0].dtype is tf.float64 and tuple(as_real[0].shape) == (2, 3, 2)


def test_complex_pairs_from_a_row_major_producer():
    z = sample((3, 2, 2), "complex64")  # three 2x2 tensors, batch first
    pairs = np.ascontiguousarray(np.stack([z.real, z.imag], axis=-1))
    arr = pa.FixedShapeTensorArray.from_numpy_ndarray(pairs)
    got = tf.arrow.from_arrow(arr, complex=True)
    np.testing.assert_array_equal(batch_of(got), z)
    assert got[0].dtype is tf.complex64 and got[0].is_contiguous
    # re/im not innermost in memory: decoded with a copy, or refused when copy=False
    outer = pa.FixedShapeTensorArray.from_numpy_ndarray(np.ascontiguousarray(np.moveaxis(pairs, -1, 1)))
    typ = pa.fixed_shape_tensor(pa.float32(), [2, 2, 2], permutation=[1, 2, 0])
    moved = pa.ExtensionArray.from_storage(typ, outer.storage)
    np.testing.assert_array_equal(batch_of(tf.arrow.from_arrow(moved, complex=True)), z)
    with pytest.raises(tf.TenferroValueError, match="not innermost"):
        tf.arrow.from_arrow(moved, complex=True, copy=False)


def test_sliced_and_chunked_arrays():
    tensors = [tf.asarray(sample((2, 3), "int64", s)) for s in range(6)]
    arr = tf.arrow.to_arrow(tensors)
    sl = arr.slice(2, 3)
    got = tf.arrow.from_arrow(sl)
    assert addr(got[0]) == values_addr(sl) == values_addr(arr) + 2 * 6 * 8
    np.testing.assert_array_equal(batch_of(got), batch_of(tensors[2:5]))
    chunked = pa.chunked_array([arr.slice(0, 2), arr.slice(2, 4)])
    np.testing.assert_array_equal(batch_of(tf.arrow.from_arrow(chunked)), batch_of(tensors))
    stacked = tf.arrow.from_arrow(chunked, stack=True, batch_axis=0)
    assert stacked.is_contiguous
    np.testing.assert_array_equal(np.asarray(stacked), batch_of(tensors))
    with pytest.raises(tf.TenferroValueError, match="without a copy"):
        tf.arrow.from_arrow(chunked, stack=True, copy=False)
    single = pa.chunked_array([arr])
    assert addr(tf.arrow.from_arrow(single, stack=True)) == values_addr(arr)


# -- round trips ---------------------------------------------------------------------------------


@st.composite
def batches(draw):
    dtype = draw(st.sampled_from(NUMERIC))
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=4)))
    n = draw(st.integers(1, 5))
    nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    names = draw(st.none() | st.just([f"ax{i}" for i in range(len(shape))]))
    return dtype, shape, n, nulls, names, draw(st.randoms())


@settings(max_examples=150, deadline=None)
@given(batches())
def test_round_trip_lists_with_nulls(case):
    dtype, shape, n, nulls, names, _ = case
    tensors = [None if null else tf.asarray(sample(shape, dtype, k)) for k, null in enumerate(nulls)]
    if all(t is None for t in tensors):
        with pytest.raises(tf.TenferroValueError, match="no tensors"):
            tf.arrow.to_arrow(tensors, names)
        return
    arr = tf.arrow.to_arrow(tensors, names)
    assert len(arr) == n and arr.null_count == sum(nulls)
    info = tf.arrow.tensor_info(arr)
    cplx = tf.dtype(dtype).is_complex
    assert info.shape == (shape + (2,) if cplx else shape)
    if names is not None:
        assert info.dim_names[: len(shape)] == tuple(names)
    back = tf.arrow.from_arrow(arr, complex=cplx)
    for t, b in zip(tensors, back):
        if t is None:
            assert b is None
        else:
            assert b.dtype is t.dtype and tuple(b.shape) == shape and b.is_contiguous
            np.testing.assert_array_equal(np.asarray(b), np.asarray(t))


@settings(max_examples=150, deadline=None)
@given(batches())
def test_round_trip_batch_tensor_any_layout_and_batch_axis(case):
    dtype, shape, n, _, names, rnd = case
    full = (*shape, n)
    axes = list(range(len(full)))
    rnd.shuffle(axes)
    base = tf.asarray(sample(tuple(full[a] for a in np.argsort(axes)), dtype))
    t = tf.transpose_view(base, axes) if len(axes) > 1 else base  # a dense view in a random layout
    assert tuple(t.shape) == full
    b = rnd.randrange(len(full))
    batch = tf.transpose_view(t, [*range(b), len(full) - 1, *range(b, len(full) - 1)]) if b != len(full) - 1 else t
    arr = tf.arrow.to_arrow(batch, names, batch_axis=b)
    cplx = tf.dtype(dtype).is_complex
    expect = np.moveaxis(np.asarray(batch), b, 0)
    stacked = tf.arrow.from_arrow(arr, complex=cplx, stack=True, batch_axis=b)
    assert stacked.dtype is tf.dtype(dtype) and stacked.is_contiguous
    np.testing.assert_array_equal(np.asarray(stacked), np.asarray(batch))
    np.testing.assert_array_equal(batch_of(tf.arrow.from_arrow(arr, complex=cplx)), expect)
    if not cplx:
        np.testing.assert_array_equal(arr.to_numpy_ndarray(), expect)


def test_size_zero_dimensions_and_empty_batches():
    t = tf.zeros((3, 0, 2))
    arr = tf.arrow.to_arrow([t, None, t])
    assert arr.type.storage_type.list_size == 0 and arr.null_count == 1
    back = tf.arrow.from_arrow(arr)
    assert back[1] is None and tuple(back[0].shape) == (3, 0, 2)
    empty = tf.arrow.to_arrow(tf.zeros((2, 3, 0)), batch_axis=-1)
    assert len(empty) == 0
    assert tuple(tf.arrow.from_arrow(empty, stack=True).shape) == (2, 3, 0)
    assert tf.arrow.from_arrow(empty) == []


def test_nulls_from_a_foreign_producer():
    typ = pa.fixed_shape_tensor(pa.float64(), [2, 2])
    storage = pa.array([[1.0, 2.0, 3.0, 4.0], None, [5.0, 6.0, 7.0, 8.0]], pa.list_(pa.float64(), 4))
    arr = pa.ExtensionArray.from_storage(typ, storage)
    got = tf.arrow.from_arrow(arr)
    assert got[1] is None
    np.testing.assert_array_equal(np.asarray(got[2]), [[5.0, 6.0], [7.0, 8.0]])
    with pytest.raises(tf.TenferroValueError, match="tensor 1 is null"):
        tf.arrow.from_arrow(arr, stack=True)


# -- errors ------------------------------------------------------------------------------------


def test_bool_and_0d_are_refused_with_reasons():
    with pytest.raises(tf.DTypeError, match="packs booleans"):
        tf.arrow.to_arrow([tf.asarray([True, False])])
    with pytest.raises(tf.ShapeError, match="at least one dimension"):
        tf.arrow.to_arrow([tf.asarray(1.0)])
    with pytest.raises(tf.ShapeError, match="at least one dimension"):
        tf.arrow.to_arrow(tf.ones((4,)), batch_axis=0)
    bool_arr = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.bool_(), [2]), pa.array([[True, False]], pa.list_(pa.bool_(), 2))
    )
    with pytest.raises(tf.DTypeError, match="packs booleans"):
        tf.arrow.from_arrow(bool_arr)
    scalar_arr = pa.ExtensionArray.from_storage(
        pa.fixed_shape_tensor(pa.float64(), []), pa.array([[1.0]], pa.list_(pa.float64(), 1))
    )
    with pytest.raises(tf.ShapeError, match="at least one dimension"):
        tf.arrow.from_arrow(scalar_arr)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: tf.arrow.to_arrow([tf.ones((2,)), tf.ones((3,))]), tf.ShapeError, "entry 1 has shape"),
        (lambda: tf.arrow.to_arrow([tf.ones((2,)), tf.ones((2,), tf.float32)]), tf.DTypeError, "entry 1"),
        (lambda: tf.arrow.to_arrow([]), tf.TenferroValueError, "no tensors"),
        (lambda: tf.arrow.to_arrow([None, None]), tf.TenferroValueError, "no tensors"),
        (lambda: tf.arrow.to_arrow([np.ones(2)]), tf.TenferroTypeError, "entry 0 is a ndarray"),
        (lambda: tf.arrow.to_arrow(tf.ones((2, 3))), tf.TenferroValueError, "batch_axis="),
        (lambda: tf.arrow.to_arrow([tf.ones((2,))], batch_axis=0), tf.TenferroValueError, "batch_axis applies"),
        (lambda: tf.arrow.to_arrow(tf.ones((2, 3)), batch_axis=2), tf.AxisError, "out of range"),
        (lambda: tf.arrow.to_arrow(np.ones((2, 3))), tf.TenferroTypeError, "expected a list"),
        (lambda: tf.arrow.to_arrow([tf.ones((2, 3))], ["a"]), tf.ShapeError, "1 dim_names"),
        (lambda: tf.arrow.to_arrow([tf.ones((2, 3))], "ab"), tf.TenferroTypeError, "sequence of strings"),
        (lambda: tf.arrow.from_arrow(pa.array([1.0, 2.0])), tf.TenferroTypeError, "fixed_shape_tensor"),
        (lambda: tf.arrow.from_arrow([1, 2]), tf.TenferroTypeError, "fixed_shape_tensor"),
        (
            lambda: tf.arrow.from_arrow(tf.arrow.to_arrow([tf.ones((2,))]), copy="no"),
            tf.TenferroValueError,
            "copy must be",
        ),
        (lambda: tf.arrow.from_arrow(tf.arrow.to_arrow([tf.ones((3,))]), complex=True), tf.ShapeError, "extent 2"),
    ],
)
def test_typed_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("dtype", ["uint8", "float16", "int16"])
def test_unsupported_arrow_value_types(dtype):
    # values from a NumPy array: pyarrow 16 cannot convert Python ints to float16
    values = pa.array(np.array([1, 2], dtype=dtype))
    typ = pa.fixed_shape_tensor(values.type, [2])
    arr = pa.ExtensionArray.from_storage(typ, pa.FixedSizeListArray.from_arrays(values, 2))
    with pytest.raises(tf.DTypeError, match="not supported"):
        tf.arrow.from_arrow(arr)


def test_element_level_nulls_are_refused():
    typ = pa.fixed_shape_tensor(pa.float64(), [2])
    arr = pa.ExtensionArray.from_storage(typ, pa.array([[1.0, 2.0], [3.0, None]], pa.list_(pa.float64(), 2)))
    with pytest.raises(tf.TenferroValueError, match="tensor 1 has null elements"):
        tf.arrow.from_arrow(arr)


def test_missing_pyarrow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # makes `import pyarrow` raise ImportError
    for call in (
        lambda: tf.arrow.to_arrow([tf.ones((2,))]),
        lambda: tf.arrow.from_arrow(None),
        lambda: tf.save("x.arrow", {"a": tf.ones((2,))}),
        lambda: tf.load("x.arrow"),
    ):
        with pytest.raises(tf.arrow.OptionalDependencyError, match=r"'arrow' extra") as info:
            call()
        assert isinstance(info.value, tf.TenferroError) and isinstance(info.value, ImportError)


def test_importing_tenferro_does_not_import_pyarrow():
    import subprocess

    code = "import sys, tenferro, tenferro.arrow; print('pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
