"""Jagged, tiled and nested shapes (seed 001's examples) and combine()."""

from __future__ import annotations

import pytest

from tensor4all import JaggedShape, Nested, ShapeCombineError, StructuredError, TiledShape, combine
from tenferro import Shape

s10, s20, s30 = Shape(10), Shape(20), Shape(30)


def test_jagged_rank_size_and_null():
    assert JaggedShape().is_null and JaggedShape().rank == 0 and JaggedShape().size == 0
    assert JaggedShape(Shape(10, 20)).rank == 2 and JaggedShape(Shape(10, 20)).size == 200
    js = JaggedShape([s10, s20, s30])
    assert (js.rank, js.size, js.extent) == (2, 60, 3)
    r3 = JaggedShape([[s10], [s20, s30], [s30, s10, s20]])
    assert (r3.rank, r3.size) == (3, 120)
    js3 = JaggedShape([Shape(20, 30), Shape(10, 20)])  # seed 001 mixes ranks here; we require equal ranks
    assert (js3.rank, js3.size) == (3, 800)
    with pytest.raises(StructuredError, match="same rank"):
        JaggedShape([Shape(1), Shape(1, 2)])


def test_jagged_slice_chip_iteration_and_equality():
    js = JaggedShape([Shape(2), Shape(1)])
    assert js.chip(0) == Shape(2)
    assert js.slice(1, 2) == JaggedShape([Shape(1)]) and js.slice(1, 2).origin == 1
    assert list(js.indices()) == [(0, 0), (0, 1), (1, 0)]
    moved = js.set_origin(10)
    assert list(moved.indices()) == [(10, 0), (10, 1), (11, 0)]
    assert list(moved.indices(absolute=False)) == [(0, 0), (0, 1), (1, 0)]
    assert list(js.slice(1, 2).indices()) == [(1, 0)]
    assert JaggedShape([Shape(2), Shape(2)]) == Shape(2, 2) == JaggedShape(Shape(2, 2))
    assert JaggedShape([Shape(2), Shape(1)]) != JaggedShape([Shape(1), Shape(2)])
    with pytest.raises(StructuredError, match="outside"):
        js.chip(2)


def test_tiled_shape_is_the_seed_example():
    t = TiledShape([5, 15, 10], [5, 15, 10])
    assert t.shape == Shape(30, 30) and (t.rank, t.size) == (2, 900) and t.n_tiles == (3, 3)
    verbose = JaggedShape(
        [
            [Shape(5, 5), Shape(5, 15), Shape(5, 10)],
            [Shape(15, 5), Shape(15, 15), Shape(15, 10)],
            [Shape(10, 5), Shape(10, 15), Shape(10, 10)],
        ]
    )
    assert t.as_jagged() == verbose and t == verbose
    tile = t.tile_shape(1, 2)
    assert tile == Shape(15, 10) and tile.origin == (5, 20)
    assert len(list(t.tiles())) == 9 and TiledShape([1, 0], [2]).size == 2


def test_nested_layers_chip_and_equality():
    s = Shape(10, 20, 30)
    s12 = Nested([1, 2], s)
    assert (s12.n_layers, s12.rank_layer(0), s12.rank_layer(1)) == (2, 1, 2)
    assert (s12.elements_in_layer(0), s12.elements_in_layer(1)) == (10, 6000)
    js12 = Nested([1, 2], JaggedShape([Shape(20, 30), Shape(10, 20)]))
    assert (js12.elements_in_layer(0), js12.elements_in_layer(1)) == (2, 800)
    s22 = Nested([2, 2], Shape(2, 2, 10, 10))
    assert s22.chip(0) == Nested([1, 2], Shape(2, 10, 10))
    assert s22.chip(1, 1) == Shape(10, 10)
    assert s22.slice((1, 0, 5, 0), (2, 2, 10, 10)).shape == Shape(1, 2, 5, 10)
    with pytest.raises(StructuredError, match="sum to the rank"):
        Nested([1, 1], Shape(3))


def test_combine_smooth_jagged_tiled_nested():
    s0 = Shape(10, 20, 30)
    assert combine("ijk,ijk->ijk", s0, s0) == s0
    assert combine("ijk,ijk->jik", s0, s0) == Shape(20, 10, 30)
    assert combine("ijk,ijk->ik", s0, s0) == Shape(10, 30)
    assert combine("ijk,ijl->ijkl", s0, s0) == Shape(10, 20, 30, 30)
    with pytest.raises(ShapeCombineError, match="extent"):
        combine("jik,ijk->ik", s0, s0)
    js0 = JaggedShape([s10, s20])
    assert combine("ij,ij->ij", js0, js0) == js0
    assert combine("ij,ik->ijk", js0, js0) == JaggedShape([Shape(10, 10), Shape(20, 20)])
    assert combine("ij,ij->i", js0, js0) == JaggedShape([Shape(), Shape()])
    with pytest.raises(ShapeCombineError):
        combine("ij,jk->ik", js0, js0)
    t = TiledShape([1, 2], [3, 4])
    assert combine("ij,jk->ik", t, TiledShape([3, 4], [5])) == TiledShape([1, 2], [5])
    assert combine("ij,jk->ik", t, Shape(7, 2)) == TiledShape([1, 2], [2])
    with pytest.raises(ShapeCombineError, match="tiled"):
        combine("ij,jk->ik", t, TiledShape([4, 3], [5]))
    n12, n21 = Nested([1, 2], s0), Nested([2, 1], s0)
    assert combine("ijk,ijk->ijk", n12, n12) == n12
    with pytest.raises(ShapeCombineError, match="layered differently"):
        combine("ijk,ijk->ijk", n12, n21)
    assert combine("ijk,ijk->ij", n12, n12) == Nested([1, 1], Shape(10, 20))
    assert combine("ijk,ijk->jk", n12, n12) == Nested([0, 2], Shape(20, 30))
    assert combine("ijk,ijk->jk", n12, n21) == Nested([1, 1], Shape(20, 30))
    with pytest.raises(ShapeCombineError, match="operands"):
        combine("ij->ij", s0, s0)


def test_equal_shapes_hash_equally():
    """Equality across shape types (a TiledShape and its JaggedShape; a one-layer
    Nested and its Shape) comes with equal hashes, so sets and dicts agree."""

    t = TiledShape([1, 2], [2, 1])
    assert t == t.as_jagged() and hash(t) == hash(t.as_jagged())
    assert len({t, t.as_jagged()}) == 1
    n = Nested([2], Shape((3, 4)))
    assert n == Shape((3, 4)) and hash(n) == hash(Shape((3, 4)))
