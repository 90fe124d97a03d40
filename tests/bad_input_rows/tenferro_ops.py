"""Bad-input rows of tenferro's operations: non-tensor operands, reductions, creation, shapes, indexing, einsum."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tidu

from .common import HUGE, B, F, M, Shaped, new_table

ROWS, row = new_table()


# ---- tenferro: operands that are not tensors ---------------------------------------------
UNARY = [
    "sin",
    "cos",
    "tan",
    "exp",
    "expm1",
    "log",
    "log1p",
    "sqrt",
    "rsqrt",
    "tanh",
    "sinh",
    "cosh",
    "arcsin",
    "arccos",
    "arctan",
    "abs",
    "negative",
    "conj",
    "real",
    "imag",
    "sign",
    "square",
    "reciprocal",
    "isfinite",
    "isnan",
    "isinf",
    "sum",
    "prod",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "logsumexp",
    "argmax",
    "argmin",
    "cumsum",
    "var",
    "std",
    "angle",
]
for name in UNARY:
    for bad, label in (("a", "str"), (None, "NoneType"), (object(), "object"), ({1: 2}, "dict")):
        row(f"{name}-{label}", getattr(tf, name), (bad,), tf.TenferroTypeError, "expected a Tensor")

BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "maximum",
    "minimum",
    "less",
    "greater",
    "equal",
    "not_equal",
    "less_equal",
    "greater_equal",
    "logaddexp",
    "arctan2",
]
for name in BINARY:
    row(f"{name}-broadcast", getattr(tf, name), (F, tf.ones((4,))), tf.ShapeError, "could not be broadcast")
    row(f"{name}-str", getattr(tf, name), (F, "a"), tf.TenferroTypeError, "expected a Tensor")

# ---- tenferro: reductions with a bad axis ------------------------------------------------
for name in [
    "sum",
    "prod",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "logsumexp",
    "argmax",
    "argmin",
    "cumsum",
    "var",
    "std",
]:
    row(f"{name}-axis", getattr(tf, name), (F,), tf.AxisError, "out of bounds", axis=3)
for name in ["argmax", "argmin"]:
    row(f"{name}-empty", getattr(tf, name), (tf.zeros((0, 2)),), tf.TenferroValueError, "zero-size tensor", axis=0)
    row(f"{name}-complex", getattr(tf, name), (tf.asarray([1j]),), tf.DTypeError, "no ordering")
    row(f"{name}-axis-tuple", getattr(tf, name), (M,), tf.AxisError, "axis must be an integer or None", axis=(0, 1))
row("cumsum-axis-tuple", tf.cumsum, (M,), tf.AxisError, "axis must be an integer or None", axis=(0, 1))
row("cumsum-bad-dtype", tf.cumsum, (F,), tf.DTypeError, "is not a dtype", dtype="foo")
for name in ["var", "std"]:
    row(f"{name}-ddof-too-large", getattr(tf, name), (F,), tf.TenferroValueError, "ddof=3 must be less", ddof=3)
    row(f"{name}-ddof-negative", getattr(tf, name), (F,), tf.TenferroValueError, "ddof must be >= 0", ddof=-1)
    row(f"{name}-ddof-float", getattr(tf, name), (F,), tf.TenferroTypeError, "ddof must be an integer", ddof=1.5)
    row(f"{name}-ddof-bool", getattr(tf, name), (F,), tf.TenferroTypeError, "ddof must be an integer", ddof=True)
    row(f"{name}-empty", getattr(tf, name), (tf.zeros((0,)),), tf.TenferroValueError, "must be less than the number")
row("arctan2-complex", tf.arctan2, (tf.asarray([1j]), F[:1]), tf.DTypeError, "complex operands are not supported")

# ---- tenferro: booleans where a sign is needed -------------------------------------------
row("negative-bool", tf.negative, (B,), tf.DTypeError, "boolean tensors have no negative")
row("sign-bool", tf.sign, (B,), tf.DTypeError, "boolean tensors have no sign")
row("neg-op-bool", lambda x: -x, (B,), tf.DTypeError, "boolean tensors have no negative")
row("sub-op-bool", lambda x: x - x, (B,), tf.DTypeError, "boolean tensors have no subtraction (dtype bool)")
row("subtract-bool-weak", tf.subtract, (B, True), tf.DTypeError, "use tenferro.not_equal (logical xor)")
row(
    "subtract-bool-under-grad",
    tidu.grad(lambda x: tf.sum(tf.where(tf.subtract(x > 0, x < 1), x, 0.0))),
    (F,),
    tf.DTypeError,
    "or convert to an integer dtype first",
)
row("subtract-bool-traced", tidu.make_graph, (lambda b: b - b, B), tf.DTypeError, "no subtraction (dtype bool)")
# ---- tenferro: Python ints beyond the float range (10**400 has no float64) --------------
row("mul-int-beyond-float", lambda x: x * 10**400, (F,), tf.DTypeError, "cannot be represented in dtype float64")
row("rmul-int-beyond-float", lambda x: 10**400 * x, (F,), tf.DTypeError, "cannot be represented in dtype float64")
row("mul-0d-int-beyond-float", lambda x: x * 10**400, (tf.asarray(1.0),), tf.DTypeError, "in dtype float64")
row("add-f32-int-beyond-float", tf.add, (tf.asarray(np.float32([1.0])), -(10**400)), tf.DTypeError, "float32")
row("mul-int-beyond-float-grad", tidu.grad(lambda x: tf.sum(x * 10**400)), (F,), tf.DTypeError, "in dtype float64")

# ---- tenferro: creation -----------------------------------------------------------------
for name, fn in [
    ("zeros", tf.zeros),
    ("ones", tf.ones),
    ("full", lambda s: tf.full(s, 1.0)),
    ("normal", lambda s: tf.random.normal(0, s)),
    ("uniform", lambda s: tf.random.uniform(0, s)),
    ("randint", lambda s: tf.random.randint(0, s, 5)),
]:
    row(f"{name}-negative-extent", fn, ((-1,),), tf.ShapeError, "negative extent")
    row(f"{name}-float-shape", fn, (2.5,), tf.ShapeError, "shape must be an int")
    row(f"{name}-str-shape", fn, ("a",), tf.ShapeError, "shape must be an int")
    row(f"{name}-out-of-memory", fn, (HUGE,), tf.TenferroMemoryError, "cannot allocate 8000000000000 bytes")
row("eye-out-of-memory", tf.eye, (10**7,), tf.TenferroMemoryError, "cannot allocate 800000000000000 bytes")
row("zeros-bad-dtype", tf.zeros, ((2,),), tf.DTypeError, "is not a dtype", dtype="foo")
row("full-None", tf.full, ((2,), None), tf.TenferroValueError, "fill_value must be a number")
row("full-str", tf.full, ((2,), "x"), tf.TenferroValueError, "fill_value must be a number")
row("full-float-as-int", tf.full, ((2,), 1.5), tf.DTypeError, "without loss", dtype="int64")
row("full-int32-overflow", tf.full, ((2,), 2**40), tf.DTypeError, "2147483647, or a wider dtype", dtype="int32")
row("full-int64-overflow", tf.full, ((2,), -(2**70)), tf.DTypeError, "does not fit in int64")
row("full-float64-overflow", tf.full, ((2,), 10**400), tf.DTypeError, "beyond the range of float64", dtype="float64")
row(
    "full_like-int32-overflow",
    tf.full_like,
    (tf.asarray(np.int32([1, 2])), 2**40),
    tf.DTypeError,
    "full_like: fill value 1099511627776 does not fit in int32",
)
for bad in (float("nan"), float("inf"), -float("inf")):
    row(f"arange-{bad}", tf.arange, (bad,), tf.TenferroValueError, "must be finite")
    row(f"linspace-{bad}", tf.linspace, (0.0, bad), tf.TenferroValueError, "must be finite")
row("arange-step0", tf.arange, (0, 5, 0), tf.TenferroValueError, "step must be nonzero")
row("arange-str", tf.arange, ("a",), tf.TenferroValueError, "must be real numbers")
row("linspace-str", tf.linspace, ("a", 1.0), tf.TenferroValueError, "start must be a number")
row("linspace-num-negative", tf.linspace, (0.0, 1.0, -1), tf.TenferroValueError, "num must be non-negative")
row("linspace-int-dtype", tf.linspace, (0.0, 1.0), tf.DTypeError, "must be floating", dtype="int64")
row("uniform-low-nan", tf.random.uniform, (0, (2,)), tf.TenferroValueError, "low must be a finite", low=float("nan"))
row("uniform-low-inf", tf.random.uniform, (0, (2,)), tf.TenferroValueError, "low must be a finite", low=-float("inf"))
row("uniform-high-inf", tf.random.uniform, (0, (2,)), tf.TenferroValueError, "high must be a finite", high=float("inf"))
row("uniform-low-eq-high", tf.random.uniform, (0, (2,)), tf.TenferroValueError, "expected low < high", low=1.0)
# high - low overflowed to inf: every sample was the clamp nextafter(high) (NumPy raises OverflowError)
row(
    "uniform-range-overflow",
    tf.random.uniform,
    (0, (2,)),
    tf.TenferroValueError,
    "does not fit float64",
    low=-1e308,
    high=1e308,
)
row(
    "uniform-float32-bound",
    tf.random.uniform,
    (0, (2,)),
    tf.TenferroValueError,
    "does not fit float32",
    dtype=tf.float32,
    high=1e39,
)
row("randint-float-low", tf.random.randint, (0, (2,), 2.5, 7), tf.TenferroTypeError, "low must be an integer")
row("randint-float-high", tf.random.randint, (0, (2,), 2, 7.5), tf.TenferroTypeError, "high must be an integer")
row("normal-bad-seed", tf.random.normal, (-1, (2,)), tf.TenferroValueError, "seed must be")
row("asarray-str", tf.asarray, (["a"],), tf.DTypeError, "unsupported dtype")

# ---- tenferro: shapes, indexing, dtypes -------------------------------------------------
row("reshape-size", tf.reshape, (F, (4,)), tf.ShapeError, "cannot reshape")
row("transpose-perm", tf.transpose, (M, (0, 0)), tf.AxisError, "not a permutation")
row("take-out-of-bounds", tf.take, (F, tf.asarray([5])), tf.TenferroIndexError, "out of bounds")
row(
    "vmap-take-batched-out-of-bounds",
    tidu.vmap(lambda a, i: tf.take(a, i)),
    (tf.zeros((2, 3)), tf.asarray([3, 0])),
    tf.TenferroIndexError,
    "index 3 is out of bounds for axis 0 with extent 3",
)
row(
    "vmap-scatter_add-batched-out-of-bounds",
    tidu.vmap(lambda a, i: tf.scatter_add(a, i, 1.0)),
    (tf.zeros((2, 3)), tf.asarray([[0], [-4]])),
    tf.TenferroIndexError,
    "index -4 is out of bounds",
)
row("getitem-out-of-bounds", lambda x: x[5], (F,), tf.TenferroIndexError, "out of bounds")
row("getitem-ragged-list", lambda x: x[[[0, 1], [1]]], (F,), tf.TenferroIndexError, "ragged index [[0, 1], [1]]")
row("slice_view-float-step", tf.slice_view, (F, slice(0, 2, 1.5)), tf.TenferroIndexError, "non-integer bounds or step")
row("setitem", lambda x: x.__setitem__(0, 5.0), (F,), tf.TenferroTypeError, "tensors are immutable")
row("setitem-slice", lambda x: x.__setitem__(slice(0, 2), 0.0), (F,), tf.TenferroTypeError, "scatter_add")
row(
    "scatter_add-float-into-int",
    tf.scatter_add,
    (tf.asarray([1, 2, 3]), tf.asarray([0]), tf.asarray([0.5])),
    tf.DTypeError,
    "values would be truncated",
)
row(
    "scatter_add-complex-into-real",
    tf.scatter_add,
    (F, tf.asarray([0]), tf.asarray([1j])),
    tf.DTypeError,
    "imaginary part",
)
row(
    "dynamic_update_slice-float-into-int",
    tf.dynamic_update_slice,
    (tf.asarray([1, 2, 3]), tf.asarray([0.5]), (0,)),
    tf.DTypeError,
    "without loss",
)
row("convert-lossy", tf.convert, (F, "int64"), tf.DTypeError, "cannot losslessly convert")
row("cast-bad-dtype", tf.cast, (F, "foo"), tf.DTypeError, "is not a dtype")
row("concatenate-rank", tf.concatenate, ([tf.ones((2,)), tf.ones((2, 2))],), tf.ShapeError, "same rank")
row("matmul-align", tf.matmul, (tf.ones((2, 3)), tf.ones((2, 3))), tf.ShapeError, "not aligned")
row("clip-nan-min", tf.clip, (F, float("nan"), 1.0), tf.TenferroValueError, "a_min is NaN")
row("clip-nan-max", tf.clip, (F, 0.0, float("nan")), tf.TenferroValueError, "a_max is NaN")
row("clip-complex", tf.clip, (tf.asarray([1j]), 0.0, 1.0), tf.DTypeError, "complex")

# ---- tenferro.einsum ---------------------------------------------------------------------
row("einsum-size-mismatch", tf.einsum, ("ij,jk", tf.ones((2, 3)), tf.ones((2, 3))), tf.EinsumShapeError, "label 'j'")
row("einsum-operand-count", tf.einsum, ("ij,jk->ik", tf.ones((2, 2))), tf.EinsumOperandError, "input terms")
row("einsum-bad-char", tf.einsum, ("i1->", F), tf.EinsumSubscriptError, "invalid character")
row("einsum-no-operand", tf.einsum, ("ij->",), tf.EinsumOperandError, "without any operand")
row("einsum-optimize-name", tf.einsum, ("i->", F), tf.EinsumOptimizeError, "unknown optimize", optimize="best")
row(
    "einsum-53-labels",
    tf.einsum,
    ("".join(chr(0x100 + i) for i in range(53)) + "->", tf.ones((1,) * 53)),
    tf.EinsumSubscriptError,
    "at most 52",
)
row(
    "einsum-false-too-large",
    tf.einsum,
    ("ab,cd,bc,ad->",) + (tf.ones((2000, 2000)),) * 4,
    tf.TenferroMemoryError,
    "optimize='auto'",
    optimize=False,
)
row(
    "einsum-path-false-too-large",
    tf.einsum_path,
    ("ab,cd,bc,ad->",) + (Shaped((10**5, 10**5)),) * 4,
    tf.TenferroMemoryError,
    "bytes",
    optimize=False,
)
row("einsum_path-str-operand", tf.einsum_path, ("ij", "abc"), tf.EinsumOperandError, "expected a tensor")
row("einsum_path-int-operand", tf.einsum_path, ("i", 3), tf.EinsumOperandError, "expected a tensor")
for bad in (-1, 0, "abc", 2.5, True):
    row(
        f"einsum_cache_clear-{bad!r}",
        tf.einsum_cache_clear,
        (),
        tf.TenferroValueError,
        "maxsize must be an int",
        maxsize=bad,
    )
