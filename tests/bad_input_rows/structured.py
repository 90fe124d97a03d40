"""Bad-input rows of tensor4all.structured: structured linalg, axes, shapes, the fallback policy, operands."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tenferro.linalg as la
import tensor4all as t4a
import tidu

from .common import new_table

ROWS, row = new_table()


# ---- issue 21: tensor4all.structured -------
ST = t4a.structured
ST_D = ST.DiagonalTensor(tf.asarray([1.0, 2.0, 3.0]))
ST_B = ST.BlockDiagonal([tf.asarray(np.eye(2) * 2.0), tf.asarray([[3.0]])])
ST_DNAN = ST.DiagonalTensor(tf.asarray([1.0, np.nan, 3.0]))
ST_BINF = ST.BlockDiagonal([tf.asarray(np.eye(2)), tf.asarray([[np.inf]])])
ST_DINT = ST.DiagonalTensor(tf.asarray([1, 2, 3]))
ST_LINALG = {
    "svd": ST.linalg.svd,
    "qr": ST.linalg.qr,
    "eigh": ST.linalg.eigh,
    "inv": ST.linalg.inv,
    "det": ST.linalg.det,
    "slogdet": ST.linalg.slogdet,
    "norm": ST.linalg.norm,
    "expm": ST.linalg.expm,
    "solve": lambda a: ST.linalg.solve(a, tf.ones((3,))),
}
for name, fn in ST_LINALG.items():  # NaN/inf in a leaf: the dense path's NonFiniteError
    row(f"structured-{name}-diagonal-nan", fn, (ST_DNAN,), la.NonFiniteError, "(the diagonal of DiagonalTensor")
    row(f"structured-{name}-block-inf", fn, (ST_BINF,), la.NonFiniteError, "(block 1 of BlockDiagonal")
    if name != "norm":
        row(f"structured-{name}-int", fn, (ST_DINT,), la.LinalgDTypeError, "must be float32/64 or complex64/128")
row("structured-tf-det-nan", la.det, (ST_DNAN,), la.NonFiniteError, "det: the input a (the diagonal")
row(
    "structured-solve-rhs-nan",
    ST.linalg.solve,
    (ST_D, tf.asarray([1.0, np.nan, 1.0])),
    la.NonFiniteError,
    "solve: the input b of shape (3,) contains NaN or inf",
)
row(
    "structured-grad-det-nan",
    lambda: tidu.grad(lambda x: ST.linalg.det(ST.DiagonalTensor(x)))(ST_DNAN.diag),
    (),
    la.NonFiniteError,
    "contains NaN or inf",
)
row("structured-linalg-trace-str", ST.linalg.trace, ("abc",), tf.TenferroTypeError, "expected a Tensor")
# axes: as the dense functions check them
row("structured-sum-repeated-axis", lambda: ST_D.sum(axis=(0, 0)), (), tf.AxisError, "repeated axis 0")
row("structured-sum-axis-bounds", tf.sum, (ST_B,), tf.AxisError, "out of bounds", axis=5)
row("structured-sum-axis-bool", tf.sum, (ST_D,), tf.AxisError, "axis must be an integer", axis=True)
row("structured-transpose-perm", lambda: ST_D.transpose(0, 0), (), tf.AxisError, "not a permutation")
row("structured-transpose-float", tf.transpose, (ST_B, (1.0, 0)), tf.AxisError, "axis must be an integer")
row("structured-trace-same-axes", tf.trace, (ST_D,), tf.ShapeError, "axis1 and axis2 must differ", axis1=1, axis2=1)
row("structured-trace-offset-float", lambda: ST_B.trace(0.5), (), tf.ShapeError, "offset must be an integer")
row("structured-norm-repeated-axis", ST.linalg.norm, (ST_D,), tf.AxisError, "repeated axis", axis=(1, -1))
# shapes: integer extents, typed
row("structured-TiledShape-float", ST.TiledShape, ([1.5], [2]), ST.StructuredTypeError, "must be an integer")
row("structured-TiledShape-bool", ST.TiledShape, ([True],), ST.StructuredTypeError, "the boolean True")
row("structured-TiledShape-str", ST.TiledShape, ("12",), ST.StructuredTypeError, "must be a sequence of ints")
row("structured-TiledShape-negative", ST.TiledShape, ([2, -1],), ST.StructuredShapeError, "must be >= 0")
row(
    "structured-TiledShape-offsets",
    lambda: ST.TiledShape([1, 2]).offsets(3),
    (),
    ST.StructuredIndexError,
    "mode 3 is outside",
)
row(
    "structured-TiledShape-tile_shape",
    lambda: ST.TiledShape([1, 2]).tile_shape(0.5),
    (),
    ST.StructuredTypeError,
    "tile index must be an integer",
)
row("structured-JaggedShape-element", ST.JaggedShape, ([1, 2],), ST.StructuredTypeError, "is not a Shape")
row(
    "structured-JaggedShape-ranks",
    ST.JaggedShape,
    ([ST.Shape(1), ST.Shape(1, 2)],),
    ST.StructuredShapeError,
    "same rank",
)
row(
    "structured-JaggedShape-origin",
    ST.JaggedShape,
    ([ST.Shape(1)],),
    ST.StructuredTypeError,
    "origin must be an integer",
    origin=1.5,
)
row(
    "structured-JaggedShape-chip", lambda: ST.JaggedShape([ST.Shape(2)]).chip(1), (), ST.StructuredIndexError, "outside"
)
row("structured-Nested-float", ST.Nested, ([1.5], ST.Shape(2)), ST.StructuredTypeError, "must be an integer")
row("structured-Nested-negative", ST.Nested, ([-1, 2], ST.Shape(2)), ST.StructuredShapeError, "must be >= 0")
row("structured-Nested-layers", ST.Nested, (1, ST.Shape(2)), ST.StructuredTypeError, "sequence of ints")
row(
    "structured-Nested-rank_layer",
    lambda: ST.Nested([1, 1], ST.Shape(2, 3)).rank_layer(2),
    (),
    ST.StructuredIndexError,
    "layer 2 is outside",
)
row("structured-Shape-float", ST.Shape, (1.5,), tf.ShapeError, "must be an int")
row("structured-combine-spec", ST.combine, (3, ST.Shape(2)), ST.StructuredTypeError, "must be a string")
row("structured-combine-shape", ST.combine, ("i->i", "ab"), ST.StructuredTypeError, "shape 0 must be a Shape")
row("structured-combine-arrows", ST.combine, ("i->i->i", ST.Shape(2)), ST.ShapeCombineError, "exactly one")
# the fallback policy
row("structured-set_fallback_policy", ST.set_fallback_policy, ("loud",), ST.StructuredValueError, "must be one of")
row("structured-set_fallback_policy-int", ST.set_fallback_policy, (5,), ST.StructuredTypeError, "must be one of")
row(
    "structured-fallback_policy",
    lambda: ST.fallback_policy(None).__enter__(),
    (),
    ST.StructuredTypeError,
    "must be one of",
)
# operands and arguments of the wrong type
row("structured-mul-str", lambda: ST_D * "abc", (), ST.StructuredTypeError, "multiply: operand 1 is 'abc'")
row("structured-rmul-str", lambda: "abc" * ST_B, (), ST.StructuredTypeError, "multiply: operand 0 is 'abc'")
row("structured-add-None", lambda: ST_D + None, (), ST.StructuredTypeError, "of type NoneType")
row("structured-matmul-object", ST.matmul, (ST_B, object()), ST.StructuredTypeError, "of type object")
row("structured-einsum-dict", ST.einsum, ("ij,jk->ik", ST_D, {}), ST.StructuredTypeError, "operand 2 is {}")
row("structured-einsum-subscripts", ST.einsum, ("i1->", ST_D), tf.EinsumSubscriptError, "invalid character")
row("structured-to_dense-str", ST.to_dense, ("abc",), ST.StructuredTypeError, "to_dense: operand 0 is 'abc'")
row("structured-dispatch-op", ST.dispatch, ("frobnicate", ST_D), ST.StructuredTypeError, "unknown operation")
row("structured-dispatch-kwarg", ST.dispatch, ("sum", ST_D), ST.StructuredTypeError, "unexpected keyword", foo=1)
row("structured-StructuredTensor", ST.StructuredTensor, (), ST.StructuredTypeError, "abstract base")
row(
    "structured-DiagonalTensor-ndim",
    ST.DiagonalTensor,
    (tf.ones((2,)),),
    ST.StructuredTypeError,
    "ndim must be an integer",
    ndim=2.5,
)
row(
    "structured-DiagonalTensor-ndim1", ST.DiagonalTensor, (tf.ones((2,)),), ST.StructuredShapeError, "ndim must", ndim=1
)
row("structured-BlockDiagonal-str", ST.BlockDiagonal, ("abc",), ST.StructuredTypeError, "list of 2-d blocks")
row("structured-BlockDiagonal-1d", ST.BlockDiagonal, ([tf.ones((2,))],), ST.StructuredShapeError, "must be 2-d")
row(
    "structured-BlockDiagonal-dtypes",
    ST.BlockDiagonal,
    ([tf.ones((1, 1)), tf.asarray([[1]])],),
    ST.StructuredTypeError,
    "share one dtype",
)
row("structured-matmul-shapes", lambda: ST_D @ tf.ones((4, 2)), (), ST.StructuredShapeError, "inner extents")
row(
    "structured-add-tilings",
    lambda: ST_B + ST.BlockDiagonal([tf.ones((1, 1)), tf.ones((2, 2))]),
    (),
    ST.TilingError,
    "not compatible",
)
row(
    "structured-det-non-square-blocks",
    ST.linalg.det,
    (ST.BlockDiagonal([tf.ones((1, 2)), tf.ones((2, 2))]),),
    ST.SquareBlockError,
    "needs a square matrix",
)
row("structured-densify-forbidden", lambda: _structured_strict_norm(), (), ST.DensifyError, "forbidden")


def _structured_refusal_counts_nothing():
    """A call refused at the entry (NaN) densifies nothing: no fallback is counted."""
    ST.reset_fallback_stats()
    try:
        return ST.linalg.norm(ST_DNAN, ord=2)  # ord=2 has no kernel: a fallback, were it not refused
    finally:
        assert ST.fallback_stats() == {} and ST.get_fallback_policy() == "count"


row(
    "structured-refusal-counts-no-fallback",
    _structured_refusal_counts_nothing,
    (),
    la.NonFiniteError,
    "norm: the input x (the diagonal",
)
row(
    "structured-map_leaves-shape",
    lambda: ST_D.map_leaves(lambda leaf: tf.ones((7,))),
    (),
    ST.StructuredShapeError,
    "fn must keep leaf shapes",
)
row("structured-map_leaves-callable", lambda: ST_B.map_leaves(5), (), ST.StructuredTypeError, "must be a callable")
row(
    "structured-set_origin",
    lambda: ST.JaggedShape([ST.Shape(2)]).set_origin(1.5),
    (),
    ST.StructuredTypeError,
    "origin must be an integer",
)
row(
    "structured-indices-flag",
    lambda: ST.JaggedShape([ST.Shape(2)]).indices("no"),
    (),
    ST.StructuredTypeError,
    "absolute must be True or False",
)
row(
    "structured-elements_in_layer",
    lambda: ST.Nested([1, 1], ST.Shape(2, 3)).elements_in_layer(5),
    (),
    ST.StructuredIndexError,
    "layer 5 is outside",
)
row(
    "structured-layer_of",
    lambda: ST.Nested([1, 1], ST.Shape(2, 3)).layer_of(1.5),
    (),
    ST.StructuredTypeError,
    "mode must be an integer",
)
# zero-argument methods: the malformed shape is refused before they can run on it
row(
    "structured-tiles-of-bad-tiling",
    lambda: ST.TiledShape([2], [0.5]).tiles(),
    (),
    ST.StructuredTypeError,
    "tile extent 0 of mode 1",
)
row(
    "structured-as_jagged-of-bad-tiling",
    lambda: ST.TiledShape([-2]).as_jagged(),
    (),
    ST.StructuredShapeError,
    "must be >= 0",
)
row(
    "structured-to_shape-of-bad-element",
    lambda: ST.JaggedShape([ST.Shape(2), 3]).to_shape(),
    (),
    ST.StructuredTypeError,
    "element 3 is not a Shape",
)


def _structured_strict_norm():
    with ST.fallback_policy("error"):
        return ST.linalg.norm(ST_B, ord=2)
