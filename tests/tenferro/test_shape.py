"""Shape: tuple semantics, origin, slice/chip and index iteration."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tenferro import Shape, ShapeError

extents = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


def test_construction_forms():
    assert Shape(2, 3) == Shape((2, 3)) == Shape([2, 3]) == (2, 3)
    assert Shape() == () and Shape().rank == 0 and Shape().size == 1
    assert Shape(5) == (5,)
    assert Shape(np.int64(4), 2) == (4, 2)
    assert Shape((np.int32(3),)) == (3,)


def test_tuple_behaviour():
    s = Shape(2, 3, 4)
    m, n, k = s
    assert (m, n, k) == (2, 3, 4)
    assert list(s) == [2, 3, 4]  # iterating yields extents
    assert s[0] == 2 and s[-1] == 4 and s[1:] == (3, 4)
    assert len(s) == 3
    assert isinstance(s, tuple)
    assert hash(s) == hash((2, 3, 4))
    assert np.zeros(s).shape == (2, 3, 4)


def test_properties():
    s = Shape(2, 3, 4)
    assert s.rank == 3 and s.size == 24 and s.extents == (2, 3, 4)
    assert type(s.extents) is tuple
    assert s.origin == (0, 0, 0)
    assert Shape(2, 0).size == 0


def test_repr():
    assert repr(Shape(2, 3)) == "Shape(2, 3)"
    assert repr(Shape()) == "Shape()"
    assert repr(Shape(2, origin=(1,))) == "Shape(2, origin=(1,))"


def test_negative_extent():
    with pytest.raises(ShapeError, match=r"Shape: negative extent -1 in shape \(2, -1\)"):
        Shape(2, -1)


def test_non_integer_extent():
    with pytest.raises(ShapeError, match="Shape: shape must be an int or a sequence of ints"):
        Shape(2.5)


def test_origin_and_equality():
    s = Shape((2, 3), origin=(10, 10))
    assert s.origin == (10, 10)
    assert s == (2, 3) and s == Shape(2, 3)  # origin not part of ==
    assert not s.same_as(Shape(2, 3))
    assert s.same_as(Shape(2, 3).set_origin((10, 10)))
    assert not s.same_as((2, 3))


def test_set_origin_is_immutable():
    s = Shape(2, 3)
    t = s.set_origin((1, 1))
    assert s.origin == (0, 0) and t.origin == (1, 1)
    assert t.set_origin((0, 0)).same_as(s)


def test_origin_rank_mismatch():
    with pytest.raises(ShapeError, match=r"set_origin: origin \(1,\) has 1 entries; expected rank 2"):
        Shape(2, 3).set_origin((1,))
    with pytest.raises(ShapeError, match="Shape: origin must be a sequence of ints"):
        Shape(2, origin=("a",))


def test_pickle_keeps_origin():
    s = Shape((2, 3), origin=(4, 5))
    r = pickle.loads(pickle.dumps(s))
    assert r.same_as(s) and type(r) is Shape


def test_seed_slice_examples():
    s = Shape(10, 20)
    assert s.slice(0) == Shape(1, 20)
    assert s.slice((0, 0), (10, 1)) == Shape(10, 1)
    assert s.slice((0, 0), (5, 5)) == Shape(5, 5)
    assert s.slice((0, 0), (1, 5)) == Shape(1, 5)
    assert s.slice(3).origin == (3, 0)
    assert s.slice((2, 4), (5, 9)).same_as(Shape((3, 5), origin=(2, 4)))


def test_seed_chip_examples():
    s = Shape(10, 20)
    assert s.chip(2) == Shape(20)
    assert s.chip((0, 2), (10, 3)) == Shape(10)
    assert s.chip(2).origin == (0,)
    assert s.chip((0, 2), (10, 3)).origin == (0,)
    assert s.chip((1, 5), (4, 6)).same_as(Shape((3,), origin=(1,)))
    assert s.chip(2, 7) == Shape()


def test_slice_on_shifted_shape_uses_absolute_indices():
    s = Shape((4, 4), origin=(10, 10))
    sub = s.slice((11, 12), (13, 14))
    assert sub.same_as(Shape((2, 2), origin=(11, 12)))
    assert list(sub.indices()) == [(11, 12), (11, 13), (12, 12), (12, 13)]
    with pytest.raises(ShapeError, match=r"slice: bounds \[0, 1\) of mode 0 are outside the shape's range \[10, 14\)"):
        s.slice(0)


@pytest.mark.parametrize(
    "args,msg",
    [
        (((0, 0), (11, 1)), r"slice: bounds \[0, 11\) of mode 0 are outside the shape's range \[0, 10\)"),
        (((5, 0), (4, 1)), r"slice: bounds \[5, 4\) of mode 0"),
        (((-1, 0), (4, 1)), r"slice: bounds \[-1, 4\) of mode 0"),
        ((10,), r"slice: bounds \[10, 11\) of mode 0"),
        (((0, 0, 0),), r"slice: 3 pinned indices \(0, 0, 0\) for a shape of rank 2"),
        (((0,), (1,)), r"slice: begin \(0,\) and end \(1,\) must both have rank 2"),
        ((0, (1, 1)), r"slice: begin must be a sequence of 2 ints when end is given"),
    ],
)
def test_slice_errors(args, msg):
    with pytest.raises(ShapeError, match=msg):
        Shape(10, 20).slice(*args)


def test_chip_errors():
    with pytest.raises(ShapeError, match=r"chip: bounds \[20, 21\) of mode 0 are outside"):
        Shape(10, 20).chip(20)


def test_indices_seed_example():
    s = Shape(2, 3)
    assert list(s.indices()) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert list(s.slice((0, 1), (1, 3)).indices()) == [(0, 1), (0, 2)]
    assert list(s.slice((0, 1), (1, 3)).offsets()) == [(0, 0), (0, 1)]
    shifted = s.set_origin((10, 10))
    assert list(shifted.indices())[:4] == [(10, 10), (10, 11), (10, 12), (11, 10)]
    assert list(shifted.indices(absolute=False)) == list(s.offsets())


def test_indices_edge_cases():
    assert list(Shape().indices()) == [()]
    assert list(Shape(3, 0).indices()) == []
    assert list(Shape(0).offsets()) == []


@given(extents)
def test_indices_match_numpy_ndindex(ext):
    s = Shape(ext)
    assert list(s.offsets()) == list(np.ndindex(*ext))
    assert len(list(s.indices())) == s.size == int(np.prod(ext, dtype=np.int64))


@given(extents, st.data())
def test_slice_and_chip_properties(ext, data):
    s = Shape(ext)
    begin = tuple(data.draw(st.integers(0, n)) for n in ext)
    end = tuple(data.draw(st.integers(b, n)) for b, n in zip(begin, ext))
    sl = s.slice(begin, end)
    assert sl.rank == s.rank
    assert sl.extents == tuple(e - b for b, e in zip(begin, end))
    assert sl.origin == begin
    # every absolute index of the slice is a valid index of the parent
    for idx in itertools.islice(sl.indices(), 50):
        assert all(0 <= i < n for i, n in zip(idx, ext))
    ch = s.chip(begin, end)
    keep = [k for k in range(len(ext)) if end[k] - begin[k] != 1]
    assert ch.extents == tuple(end[k] - begin[k] for k in keep)
    assert ch.origin == tuple(begin[k] for k in keep)
    assert ch.size == sl.size


def test_several_pinned_ints():
    s = Shape(4, 5, 6)
    assert s.slice(1, 2) == Shape(1, 1, 6) and s.slice(1, 2).origin == (1, 2, 0)
    assert s.chip(1, 2) == Shape(6) and s.chip((1, 2)) == Shape(6)
    assert s.chip(1, 2, 3) == Shape()
    with pytest.raises(ShapeError, match="chip: expected \\(begin, end\\) sequences or up to 3 ints"):
        s.chip((0, 0, 0), (1, 1, 1), 5)
