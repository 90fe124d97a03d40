"""Metadata-only views: reachable-range proof, sharing, and agreement with NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
import tidu
from helpers import shares_memory
from tenferro import Tensor
from tenferro._views import _check_reachable, _contiguous_strides, _is_contiguous, _reachable_range

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)


def _fortran_tensor(shape):
    return tf.reshape_view(tf.arange(int(np.prod(shape, dtype=np.int64)), dtype=tf.float64), shape)


def _check_layout(view: Tensor, base: Tensor) -> None:
    """The view's metadata describes exactly where its elements live in base's buffer."""
    flat = base._data.reshape(-1, order="A") if base.is_contiguous else None
    assert shares_memory(view._data, base._data) or view.size == 0
    if flat is not None and view.size:
        for idx in np.ndindex(*view.shape):
            pos = view.offset + sum(i * s for i, s in zip(idx, view.strides))
            assert view._data[idx] == flat[pos - base.offset]


# -- _reachable_range -----------------------------------------------------------
def test_reachable_range_positive():
    assert _reachable_range((2, 3), (1, 2), 0) == (0, 5)
    assert _reachable_range((2, 3), (3, 1), 4) == (4, 9)


def test_reachable_range_negative_strides():
    assert _reachable_range((4,), (-1,), 3) == (0, 3)
    assert _reachable_range((2, 3), (-1, 4), 1) == (0, 9)
    assert _reachable_range((3, 2), (-2, -6), 10) == (0, 10)


def test_reachable_range_scalar_and_empty():
    assert _reachable_range((), (), 7) == (7, 7)
    assert _reachable_range((3, 0), (1, 3), 0) is None
    assert _reachable_range((0,), (-1,), -5) is None


def test_reachable_range_zero_stride_broadcast():
    assert _reachable_range((5, 2), (0, 1), 3) == (3, 4)


@given(shapes, st.data())
def test_reachable_range_matches_brute_force(shape, data):
    strides = tuple(data.draw(st.integers(-6, 6)) for _ in shape)
    offset = data.draw(st.integers(0, 50))
    got = _reachable_range(shape, strides, offset)
    offsets = [offset + sum(i * s for i, s in zip(idx, strides)) for idx in np.ndindex(*shape)]
    if not offsets:
        assert got is None
    else:
        assert got == (min(offsets), max(offsets))


def test_check_reachable_errors():
    _check_reachable("op", (3,), (1,), 0, 3)
    _check_reachable("op", (0,), (1,), 100, 3)  # empty views reach nothing
    with pytest.raises(
        tf.TenferroIndexError,
        match=r"slice_view: view of shape \(4,\) with strides \(1,\) and offset 0 "
        r"reaches element offsets \[0, 3\], outside the buffer of 3 elements",
    ):
        _check_reachable("slice_view", (4,), (1,), 0, 3)
    with pytest.raises(tf.TenferroIndexError, match=r"expected 0 <= min"):
        _check_reachable("op", (3,), (-1,), 1, 10)


def test_contiguity_predicates():
    assert _contiguous_strides((2, 3, 4), "F") == (1, 2, 6)
    assert _contiguous_strides((2, 3, 4), "C") == (12, 4, 1)
    assert _is_contiguous((2, 1, 3), (1, 999, 2), "F")
    assert not _is_contiguous((2, 3), (3, 1), "F")
    assert _is_contiguous((0, 3), (5, 5), "F")


# -- reshape_view ------------------------------------------------------------------
def test_reshape_view_is_column_major_by_default():
    x = tf.reshape_view(tf.arange(6), (2, 3))
    assert x.tolist() == [[0, 2, 4], [1, 3, 5]]
    assert tf.reshape_view(tf.arange(6), (2, 3), order="C").tolist() == [[0, 1, 2], [3, 4, 5]]
    assert tf.reshape_view(tf.arange(6), (3, -1)).shape == (3, 2)
    assert tf.reshape_view(tf.arange(1), ()).shape == ()
    assert tf.reshape_view(tf.asarray(5), 1).shape == (1,)


@given(shapes, st.sampled_from(["F", "C"]), st.data())
def test_reshape_view_matches_numpy(shape, order, data):
    size = int(np.prod(shape, dtype=np.int64))
    a = np.arange(size, dtype=np.float64)
    new = tuple(data.draw(st.permutations(list(shape)))) if shape else ()
    v = tf.reshape_view(tf.reshape_view(tf.asarray(a), shape, order=order), new, order=order)
    expected = a.reshape(shape, order=order).reshape(new, order=order)
    np.testing.assert_array_equal(v.numpy(), expected)
    assert v.shape == new


def test_reshape_view_shares_memory_and_sees_writes():
    base = tf.zeros(12)
    v = tf.reshape_view(base, (3, 4))
    assert shares_memory(v._data, base._data)
    base._data[5] = 42.0
    assert v.numpy()[2, 1] == 42.0  # column-major: 5 = 2 + 1*3


def test_reshape_view_errors():
    with pytest.raises(
        tf.ShapeError,
        match=r"reshape_view: cannot reshape tensor of shape \(2, 3\) \(size 6\) into shape \(4,\) \(size 4\)",
    ):
        tf.reshape_view(tf.zeros((2, 3)), (4,))
    with pytest.raises(
        tf.ShapeError, match=r"reshape_view: cannot reshape tensor of shape \(5,\) \(size 5\) into shape \(2, -1\)"
    ):
        tf.reshape_view(tf.zeros(5), (2, -1))
    with pytest.raises(tf.ShapeError, match=r"reshape_view: invalid shape \(-1, -1\)"):
        tf.reshape_view(tf.zeros(4), (-1, -1))
    with pytest.raises(tf.ShapeError, match="reshape_view: shape must be an int or a sequence of ints"):
        tf.reshape_view(tf.zeros(4), (2.0, 2))
    with pytest.raises(tf.TenferroValueError, match="reshape_view: order must be 'F' or 'C', got 'A'"):
        tf.reshape_view(tf.zeros(4), (4,), order="A")


def test_reshape_view_requires_contiguity():
    t = tf.transpose_view(tf.zeros((2, 3)))
    with pytest.raises(
        tf.ShapeError,
        match=r"reshape_view: tensor of shape \(3, 2\) with strides \(2, 1\) is not column-major contiguous.*\.contiguous\(\)",
    ):
        tf.reshape_view(t, (6,))
    assert tf.reshape_view(t, (6,), order="C").tolist() == t.numpy().reshape(6).tolist()
    with pytest.raises(tf.ShapeError, match="is not row-major contiguous"):
        tf.reshape_view(tf.zeros((2, 3)), (6,), order="C")


# -- transpose_view ----------------------------------------------------------------
@given(shapes, st.data())
def test_transpose_view_matches_numpy(shape, data):
    a = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.float64).reshape(shape, order="F")
    t = tf.asarray(a)
    perm = tuple(data.draw(st.permutations(list(range(len(shape))))))
    v = tf.transpose_view(t, perm)
    np.testing.assert_array_equal(v.numpy(), a.transpose(perm))
    assert v.strides == tuple(t.strides[p] for p in perm)
    assert v.size == 0 or shares_memory(v._data, t._data)
    np.testing.assert_array_equal(tf.transpose_view(t).numpy(), a.T)


def test_transpose_view_negative_axes():
    t = tf.zeros((2, 3, 4))
    assert tf.transpose_view(t, (-1, 0, 1)).shape == (4, 2, 3)


@pytest.mark.parametrize(
    "axes,msg",
    [
        ((0, 0), r"transpose_view: axes \(0, 0\) is not a permutation of \(0, 1\) for a tensor of rank 2"),
        ((0,), r"transpose_view: axes \(0,\) is not a permutation"),
        ((0, 2), r"transpose_view: axes \(0, 2\) is not a permutation"),
        (("a", 0), r"transpose_view: axes must be a sequence of ints"),
    ],
)
def test_transpose_view_errors(axes, msg):
    with pytest.raises(tf.AxisError, match=msg):
        tf.transpose_view(tf.zeros((2, 3)), axes)


# -- slice_view -----------------------------------------------------------------------
def _slice_specs(shape):
    def one(n):
        bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
        step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
        as_slice = st.builds(slice, bound, bound, step)
        if n == 0:
            return as_slice
        return st.one_of(as_slice, st.integers(-n, n - 1))

    return st.integers(0, len(shape)).flatmap(lambda k: st.tuples(*(one(n) for n in shape[:k])))


@given(shapes.flatmap(lambda s: st.tuples(st.just(s), _slice_specs(s))))
def test_slice_view_matches_numpy_basic_indexing(case):
    shape, specs = case
    a = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.float64).reshape(shape, order="F")
    t = tf.asarray(a)
    v = tf.slice_view(t, specs)
    expected = a[specs]
    np.testing.assert_array_equal(v.numpy(), expected)
    assert v.shape == expected.shape
    if v.size:
        assert shares_memory(v._data, t._data)
        _check_layout(v, t)
    # the view's metadata passes the reachable-range proof over the base buffer
    rng = _reachable_range(v.shape, v.strides, v.offset)
    assert rng is None or (0 <= rng[0] and rng[1] < t.size)


@given(shapes.flatmap(lambda s: st.tuples(st.just(s), _slice_specs(s), st.data())))
def test_views_compose(case):
    shape, specs, data = case
    a = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.float64).reshape(shape, order="F")
    v = tf.slice_view(tf.asarray(a), specs)
    perm = tuple(data.draw(st.permutations(list(range(v.ndim)))))
    w = tf.transpose_view(v, perm)
    np.testing.assert_array_equal(w.numpy(), a[specs].transpose(perm))
    w2 = tf.slice_view(w, (slice(None, None, -1),) if w.ndim else ())
    np.testing.assert_array_equal(w2.numpy(), a[specs].transpose(perm)[::-1] if w.ndim else a[specs])


def test_slice_view_negative_step_and_offset():
    t = _fortran_tensor((4, 5))
    v = tf.slice_view(t, (slice(None, None, -1), slice(3, 0, -2)))
    assert v.shape == (4, 2)
    assert v.strides == (-1, -8)
    assert v.offset == 3 + 3 * 4
    np.testing.assert_array_equal(v.numpy(), t.numpy()[::-1, 3:0:-2])


def test_slice_view_int_drops_mode_and_single_spec():
    t = _fortran_tensor((3, 4))
    assert tf.slice_view(t, 1).tolist() == t.numpy()[1].tolist()
    assert tf.slice_view(t, -1).shape == (4,)
    s = tf.slice_view(t, (2, 3))
    assert s.shape == () and s.item() == t.numpy()[2, 3]
    assert shares_memory(s._data, t._data)
    assert tf.slice_view(t, slice(1, 2)).shape == (1, 4)
    assert tf.slice_view(t, ()).shape == (3, 4)


def test_slice_view_write_through_base_is_visible():
    t = tf.zeros((4, 4))
    v = tf.slice_view(t, (slice(None, None, -2), 1))
    t._data[1, 1] = 7.0  # rows 3, 1 are selected
    assert v.tolist() == [0.0, 7.0]


def test_view_of_a_view_offsets_are_absolute():
    t = _fortran_tensor((6, 6))
    v = tf.slice_view(t, (slice(1, 5), slice(2, 6)))
    w = tf.slice_view(v, (slice(None, None, -1), 1))
    assert w.offset == 4 + 3 * 6
    np.testing.assert_array_equal(w.numpy(), t.numpy()[1:5, 2:6][::-1, 1])


def test_slice_view_errors():
    t = tf.zeros((3, 4))
    with pytest.raises(tf.TenferroValueError, match="slice_view: step must be nonzero"):
        tf.slice_view(t, (slice(None, None, 0),))
    with pytest.raises(tf.TenferroIndexError, match=r"slice_view: index 3 is out of bounds for axis 0 with extent 3"):
        tf.slice_view(t, 3)
    with pytest.raises(tf.TenferroIndexError, match=r"slice_view: index -5 is out of bounds for axis 1 with extent 4"):
        tf.slice_view(t, (0, -5))
    with pytest.raises(tf.TenferroIndexError, match=r"slice_view: 3 indices given for a tensor of rank 2"):
        tf.slice_view(t, (0, 0, 0))
    with pytest.raises(
        tf.TenferroIndexError, match=r"slice_view: index \[0\] for axis 0 is not supported; expected an int or a slice"
    ):
        tf.slice_view(t, ([0],))
    with pytest.raises(tf.TenferroIndexError, match="slice_view: index True for axis 0 is not supported"):
        tf.slice_view(t, (True,))
    with pytest.raises(tf.TenferroIndexError, match="slice_view: slice .* for axis 0 has non-integer bounds"):
        tf.slice_view(t, (slice(0.5, 2),))


def test_views_do_not_allocate_for_large_tensors():
    big = tf.zeros(10**7)
    r = tf.reshape_view(big, (1000, 10**4))
    t = tf.transpose_view(r)
    s = tf.slice_view(t, (slice(None, None, -7), slice(3, 900, 2)))
    for v in (r, t, s):
        assert v._data.base is not None
        assert v._data.base is big._data or shares_memory(v._data, big._data)
        assert v._data.flags.owndata is False


def test_view_of_foreign_numpy_view_checks_against_root_buffer():
    root = np.zeros(20)
    t = Tensor._wrap(root[5:15])  # a tensor that is itself a view into a bigger buffer
    assert t.offset == 5
    v = tf.slice_view(t, slice(None, None, -1))
    assert v.offset == 14 and v.strides == (-1,)
    np.testing.assert_array_equal(v.numpy(), root[5:15][::-1])


def test_view_inputs_may_be_array_likes():
    assert tf.transpose_view([[1, 2], [3, 4]]).tolist() == [[1, 3], [2, 4]]


@pytest.mark.parametrize(
    "view",
    [
        lambda a: tf.transpose_view(a, (1, 0)),
        lambda a: tf.reshape_view(a, (4, 3)),
        lambda a: tf.slice_view(a, (slice(0, 2),)),
    ],
)
def test_a_view_of_a_traced_value_is_a_typed_error(view):
    """A view needs a concrete buffer; under grad it raised a bare AttributeError ("a traced tensor has
    no attribute 'strides'")."""
    x = tf.asarray(np.arange(12.0).reshape(3, 4))
    with pytest.raises(tf.TenferroTypeError, match="traced"):
        tidu.grad(lambda a: tf.sum(view(a)))(x)
