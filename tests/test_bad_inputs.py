"""The bad-input table (issue 9): one row per malformed call over the public API of
tidu, tenferro and tensor4all: (function, arguments, expected exception, message
fragment). Every expected exception derives from its package's base exception, so
each family keeps its contract: a typed error that names what was wrong, never a raw
NumPy/SciPy traceback or a silent wrong value."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la
import tensor4all as t4a
import tidu
from tensor4all import models
from tidu.testing import check_grads, check_jvp, check_vjp

F = tf.asarray([1.0, 2.0, 3.0])
M = tf.asarray(np.eye(3) + 0.1)
I2 = tf.asarray(np.eye(2, dtype=np.int64))
B = tf.asarray([True, False])
NANM = tf.asarray(np.array([[1.0, np.nan], [0.0, 1.0]]))
INFM = tf.asarray(np.array([[1.0, 0.0], [np.inf, 1.0]]))
HUGE = (10**6, 10**6)


class _Shaped:
    def __init__(self, shape):
        self.shape = shape


ROWS: list[tuple] = []  # (id, fn, args, kwargs, exception, fragment)


def row(name, fn, args, exc, fragment, **kwargs):
    ROWS.append((name, fn, args, kwargs, exc, fragment))


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
    ("ab,cd,bc,ad->",) + (_Shaped((10**5, 10**5)),) * 4,
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

# ---- tenferro.linalg: every function x (integer input, vector input, NaN, inf, str) ----------
LINALG_1 = {
    "svd": la.svd,
    "svdvals": la.svdvals,
    "truncated_svd": lambda a: la.truncated_svd(a, max_rank=1),
    "qr": la.qr,
    "lq": la.lq,
    "eigh": la.eigh,
    "eigvalsh": la.eigvalsh,
    "eig": la.eig,
    "eigvals": la.eigvals,
    "cholesky": la.cholesky,
    "lu": la.lu,
    "inv": la.inv,
    "pinv": la.pinv,
    "det": la.det,
    "slogdet": la.slogdet,
    "expm": la.expm,
    "solve": lambda a: la.solve(a, tf.ones((2,))),
    "triangular_solve": lambda a: la.triangular_solve(a, tf.ones((2, 1))),
    "lstsq": lambda a: la.lstsq(a, tf.ones((2,))),
    "expm_frechet": lambda a: la.expm_frechet(a, tf.ones((2, 2))),
    "funm_hermitian": lambda a: la.funm_hermitian(a, tf.exp),
    "sqrtm_psd": la.sqrtm_psd,
    "logm_pd": la.logm_pd,
    "powm_psd": lambda a: la.powm_psd(a, 0.5),
    "polar": la.polar,
    "sqrtm": la.sqrtm,
    "logm": la.logm,
}
for name, fn in LINALG_1.items():
    row(f"linalg-{name}-int", fn, (I2,), la.LinalgDTypeError, "must be float32/64 or complex64/128")
    row(f"linalg-{name}-nan", fn, (NANM,), la.NonFiniteError, "contains NaN or inf")
    row(f"linalg-{name}-inf", fn, (INFM,), la.NonFiniteError, "contains NaN or inf")
    row(f"linalg-{name}-str", fn, ("a",), tf.TenferroTypeError, "expected a Tensor")
    if name not in ("solve", "triangular_solve", "lstsq", "expm_frechet"):
        row(f"linalg-{name}-vector", fn, (F,), la.LinalgShapeError, "must be a matrix")
row("linalg-norm-nan", la.norm, (NANM,), la.NonFiniteError, "contains NaN or inf")
row("linalg-norm-ord-nan", la.norm, (M, float("nan")), tf.TenferroValueError, "invalid ord nan")
row("linalg-norm-vector-ord-nan", la.norm, (F, float("nan")), tf.TenferroValueError, "ord is NaN")
row("linalg-norm-ord-str", la.norm, (M, "abc"), tf.TenferroValueError, "invalid ord 'abc'")
for bad in (float("nan"), -1.0, float("inf"), "a"):
    row(f"pinv-rtol-{bad!r}", la.pinv, (M,), tf.TenferroValueError, "rtol must be", rtol=bad)
    row(f"lstsq-rcond-{bad!r}", la.lstsq, (M, F), tf.TenferroValueError, "rcond must be", rcond=bad)
    row(
        f"truncated_svd-cutoff-{bad!r}",
        la.truncated_svd,
        (M,),
        tf.TenferroValueError,
        "cutoff (the discarded weight) must be",
        cutoff=bad,
    )
for bad in (2.5, 0, -1, "2", True):
    row(
        f"truncated_svd-max_rank-{bad!r}",
        la.truncated_svd,
        (M,),
        tf.TenferroValueError,
        "max_rank must be",
        max_rank=bad,
    )
row("solve-int-matrix", la.solve, (I2, tf.ones((2,))), la.LinalgDTypeError, "must be float")
row("solve-singular", la.solve, (tf.zeros((2, 2)), tf.ones((2,))), la.SingularMatrixError, "singular")
row("inv-singular", la.inv, (tf.zeros((2, 2)),), la.SingularMatrixError, "singular")
row("cholesky-indefinite", la.cholesky, (tf.asarray(-np.eye(2)),), la.NonPositiveDefiniteError, "positive definite")
row("lstsq-rows", la.lstsq, (M, tf.ones((2,))), la.LinalgShapeError, "rows")
row("solve-square", la.solve, (tf.ones((2, 3)), tf.ones((2,))), la.LinalgShapeError, "square")
row("settings-gauge", lambda: la.settings(gauge="loud").__enter__(), (), tf.TenferroValueError, "gauge must be")
NEG = tf.asarray(np.diag([1.0, -1.0]))
row("sqrtm_psd-negative", la.sqrtm_psd, (NEG,), la.DomainError, "positive semidefinite")
row("powm_psd-negative", la.powm_psd, (NEG, 0.5), la.DomainError, "positive semidefinite")
row("logm_pd-singular", la.logm_pd, (tf.asarray(np.diag([1.0, 0.0])),), la.DomainError, "positive definite")
row("funm_hermitian-log-negative", la.funm_hermitian, (NEG, tf.log), la.DomainError, "not finite")
row("funm_hermitian-not-callable", la.funm_hermitian, (M, 2.0), tf.TenferroTypeError, "must be a callable")
row("powm_psd-p-str", la.powm_psd, (M, "2"), tf.TenferroValueError, "p must be a finite real number")
row("powm_psd-p-nan", la.powm_psd, (M, float("nan")), tf.TenferroValueError, "p must be a finite real number")
row("polar-side", la.polar, (M,), tf.TenferroValueError, "side must be", side="up")
row("sqrtm-real-negative", la.sqrtm, (NEG,), la.DomainError, "not real")
row("logm-real-negative", la.logm, (NEG,), la.DomainError, "not real")
row("logm-singular", la.logm, (tf.asarray(np.diag([1.0, 0.0])),), la.DomainError, "singular")
row(
    "sqrtm-nilpotent",
    la.sqrtm,
    (tf.asarray(np.array([[0.0, 1.0], [0.0, 0.0]])),),
    la.DomainError,
    "no finite principal square root",
)


# ---- tidu --------------------------------------------------------------------------------
def f1(x):
    return tf.sum(x * x)


def f2(x, y):
    return tf.sum(x * y)


for t in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
    tr = getattr(tidu, t)
    row(
        f"{t}-argnums-duplicate",
        lambda tr=tr: tr(f2, argnums=(0, 0))(F, F),
        (),
        tidu.InvalidArgumentError,
        "repeats argument 0",
    )
    for bad in ("a", 1.5, None, (0, "a")):
        row(
            f"{t}-argnums-{bad!r}",
            lambda tr=tr, bad=bad: tr(f1, argnums=bad)(F),
            (),
            tidu.InvalidArgumentError,
            "argnums must be an int or a tuple of ints",
        )
    row(f"{t}-argnums-range", lambda tr=tr: tr(f1, argnums=3)(F), (), tidu.TreeStructureError, "out of range")
for conv, label in (
    (float, "float"),
    (complex, "complex"),
    (int, "int"),
    (lambda v: v.item(), "item"),
    (lambda v: v.tolist(), "tolist"),
    (lambda v: v.numpy(), "numpy"),
    (np.asarray, "asarray"),
):
    row(
        f"grad-{label}-of-tracer",
        lambda conv=conv: tidu.grad(
            lambda x: tf.sum(x) * tf.sum(tf.asarray(np.real(np.asarray(conv(x[0]))).astype(float)))
        )(F),
        (),
        tidu.TracerConversionError,
        "stop_gradient",
    )
    row(
        f"jvp-{label}-of-tracer",
        lambda conv=conv: tidu.jvp(lambda x: conv(x[0]), (F,), (F,)),
        (),
        tidu.TracerConversionError,
        "stop_gradient",
    )
row("grad-nonscalar", lambda: tidu.grad(lambda x: x)(F), (), tidu.NonScalarOutputError, "scalar output")
row(
    "grad-bool-output",
    lambda: tidu.grad(lambda x: tf.sum(x) > 0)(F),
    (),
    tidu.NonDifferentiableError,
    "not differentiable",
)
row(
    "grad-int-input",
    lambda: tidu.grad(lambda x: tf.sum(x))(tf.asarray([1, 2])),
    (),
    tidu.NonDifferentiableError,
    "not differentiable",
)
row(
    "grad-complex-output",
    lambda: tidu.grad(lambda x: tf.sum(x))(tf.asarray([1j])),
    (),
    tidu.ComplexOutputError,
    "holomorphic",
)
row("jvp-tensor-primals", lambda: tidu.jvp(f1, F, F), (), tidu.TreeStructureError, "tuples or lists")
row("jvp-tangent-shape", lambda: tidu.jvp(f1, (F,), (tf.ones((2,)),)), (), tidu.TangentMismatchError, "tangent")
row("hvp-tensor", lambda: tidu.hvp(f1, F, F), (), tidu.TreeStructureError, "hvp(f, (x,), (v,))")
row("vmap-not-callable", lambda: tidu.vmap(3), (), tidu.InvalidArgumentError, "expects a callable")
row("vmap-bad-in-axes", lambda: tidu.vmap(f1, in_axes="0")(F), (), tidu.InvalidArgumentError, "must be an int, None")
row("vmap-axis-range", lambda: tidu.vmap(f1, in_axes=5)(F), (), tidu.InvalidArgumentError, "out of range")
row("vmap-no-mapped-argument", lambda: tidu.vmap(f1, in_axes=None)(F), (), tidu.InvalidArgumentError, "axis_size")
row("vmap-bad-axis-size", lambda: tidu.vmap(f1, axis_size=2.5), (), tidu.InvalidArgumentError, "axis_size must be")
for check in (check_grads, check_jvp, check_vjp):
    n = check.__name__
    row(f"{n}-tensor-args", check, (f1, F), tidu.InvalidArgumentError, "must be a tuple")
    row(f"{n}-int-input", check, (f1, (tf.asarray([1, 2]),)), tidu.NonDifferentiableError, "checks nothing")
    for k, bad in (("eps", -1.0), ("eps", 0.0), ("eps", float("nan")), ("atol", -1.0), ("rtol", -1.0), ("atol", "a")):
        row(f"{n}-{k}-{bad!r}", check, (f1, (F,)), tidu.InvalidArgumentError, f"{k} must be", **{k: bad})
for bad in (-1, 0, "a", 1.5):
    row(f"check_grads-order-{bad!r}", check_grads, (f1, (F,)), tidu.InvalidArgumentError, "order must be", order=bad)
row("check_grads-mode", check_grads, (f1, (F,)), tidu.InvalidArgumentError, "unknown mode", modes=("side",))
row(
    "register_pytree_node-str",
    tidu.register_pytree_node,
    ("str", lambda t: ((), None), lambda a, c: None),
    tidu.InvalidArgumentError,
    "nodetype must be a class",
)
row(
    "register_pytree_node-flatten",
    tidu.register_pytree_node,
    (type("T", (), {}), 3, lambda a, c: None),
    tidu.InvalidArgumentError,
    "flatten must be callable",
)
row(
    "vjp-cotangent",
    lambda: tidu.vjp(lambda x: x * 2.0, F)[1](tf.ones((2,))),
    (),
    tidu.TangentMismatchError,
    "cotangent",
)

# ---- tensor4all -----------------------------------------------------------------------------
row("mps-random-L0", t4a.MPS.random, (0,), t4a.Tensor4allError, "positive integer", bond_dim=2)
row("mps-random-bond0", t4a.MPS.random, (4,), t4a.Tensor4allError, "bond_dim must be", bond_dim=0)
row("mps-random-d-not-local", t4a.MPS.random, (3, 2), t4a.DimensionMismatchError, "drop d=", local="electron")
row(
    "opsum-site",
    lambda: t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "Sz", 5), 3, local="spin-1/2"),
    (),
    t4a.Tensor4allError,
    "outside 0..2",
)
row(
    "opsum-local",
    lambda: t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "Sz", 0), 3, local="spin-7"),
    (),
    t4a.Tensor4allError,
    "unknown local space",
)
row("dmrg-max_bond", lambda: t4a.dmrg(models.heisenberg(4), max_bond=0), (), t4a.Tensor4allError, "max_bond must be")
row("diagonal-ndim", t4a.DiagonalTensor, (tf.ones((2, 2, 2)),), t4a.Tensor4allError, "must be 1-d")


# ---- issue 21: tensor networks (MPS, MPO, OpSum, local spaces, models, dmrg) -------
NW_NAN, NW_INF = float("nan"), float("inf")
NW_PSI = t4a.MPS.random(4, bond_dim=2, seed=7)
NW_ZERO = t4a.MPS([np.zeros((1, 2, 1))] * 3)
NW_H = models.heisenberg(4)
NW_OS = models.heisenberg_opsum(4)
for label, bad, exc, fragment in (
    ("int", 5, t4a.Tensor4allTypeError, "an MPS takes a list of site tensors"),
    ("bools", [np.ones((1, 2, 1), bool)], t4a.Tensor4allTypeError, "dtype bool"),
    ("extent0", [np.ones((1, 0, 1))], t4a.DimensionMismatchError, "extent 0"),
    ("inf", [np.full((1, 2, 1), NW_INF)], t4a.NonFiniteError, "NaN or infinity"),
):
    row(f"MPS-{label}", t4a.MPS, (bad,), exc, fragment)
row("MPS.product_state-bool", t4a.MPS.product_state, ([True, 0],), t4a.Tensor4allTypeError, "got True")
row("MPS.product_state-nan", t4a.MPS.product_state, ([[NW_NAN, 0.0]],), t4a.NonFiniteError, "NaN or infinity")
row(
    "MPS.from_dense-nan",
    t4a.MPS.from_dense,
    (np.r_[NW_NAN, np.zeros(7)], 3),
    t4a.NonFiniteError,
    "NaN or infinity (entry 0)",
)
row("MPS.from_dense-str", t4a.MPS.from_dense, (["a"] * 8, 3), t4a.Tensor4allTypeError, "must hold numbers")
row(
    "MPS.compress-cutoff-nan",
    lambda: t4a.MPS.random(4, bond_dim=2, seed=7).compress(cutoff=NW_NAN),
    (),
    t4a.InvalidOptionError,
    "cutoff",
)
row(
    "MPS.compress-cutoff-one",
    lambda: t4a.MPS.random(4, bond_dim=2, seed=7).compress(cutoff=1.0),
    (),
    t4a.InvalidOptionError,
    "cutoff",
)
row(
    "MPS.compress-max_bond-0",
    lambda: t4a.MPS.random(4, bond_dim=2, seed=7).compress(max_bond=0),
    (),
    t4a.BondDimensionError,
    "max_bond",
)
row(
    "MPS.normalize-zero",
    lambda: t4a.MPS([np.zeros((1, 2, 1))] * 3).normalize(),
    (),
    t4a.ZeroNormError,
    "the state has norm 0",
)
row("MPS.schmidt_values-zero", lambda: NW_ZERO.schmidt_values(), (), t4a.ZeroNormError, "the state has norm 0")
row("MPS.schmidt_form-zero", lambda: NW_ZERO.schmidt_form(), (), t4a.ZeroNormError, "the state has norm 0")
# files other codes read: the argument is checked before the optional peer is imported; a peer's
# own object can only be recognized with the peer, so without it the call names the extra
_HAVE_PEERS = all(importlib.util.find_spec(m) is not None for m in ("tenpy", "quimb", "h5py"))
_PEER_EXC = t4a.Tensor4allTypeError if _HAVE_PEERS else t4a.OptionalDependencyError
for _name in ("to_tenpy", "to_quimb"):
    row(f"{_name}-not-an-MPS", getattr(t4a, _name), (3,), t4a.Tensor4allTypeError, "expects a tensor4all MPS")
for _name in ("mpo_to_tenpy", "mpo_to_quimb"):
    row(f"{_name}-not-an-MPO", getattr(t4a, _name), ("H",), t4a.Tensor4allTypeError, "expects a tensor4all MPO")
for _name in ("from_tenpy", "from_quimb", "mpo_from_tenpy", "mpo_from_quimb"):
    row(f"{_name}-foreign", getattr(t4a, _name), ("x",), _PEER_EXC, "tenpy" if "tenpy" in _name else "quimb")
row("save_itensors_hdf5-not-a-chain", t4a.save_itensors_hdf5, (3, "x.h5"), t4a.Tensor4allTypeError, "MPS or an MPO")
row("load_itensors_hdf5-missing", t4a.load_itensors_hdf5, ("/nonexistent/x.h5",), t4a.MPSFileNotFoundError, "no file")
row(
    "MPS.entanglement_entropy-bool",
    lambda: NW_PSI.entanglement_entropy(True),
    (),
    t4a.SiteOutOfRangeError,
    "bond True is outside",
)
# symmetric networks (issue 22, item 9)
NW_SYM = t4a.MPS.random(4, bond_dim=2, seed=7, charge=0)
row(
    "MPS.entanglement_spectrum-dense",
    lambda: NW_PSI.entanglement_spectrum(1),
    (),
    t4a.InvalidOptionError,
    "no charge sectors",
)
row(
    "MPS.entanglement_spectrum-bond",
    lambda: NW_SYM.entanglement_spectrum(3),
    (),
    t4a.SiteOutOfRangeError,
    "bond 3 is outside 0..2",
)
row(
    "MPS.random-empty-sector",
    lambda: t4a.MPS.random(4, charge=0.5),
    (),
    t4a.SymmetryViolationError,
    "Sz = 0.5 has no states",
)
row(
    "MPS.random-charge-not-multiple",
    lambda: t4a.MPS.random(4, charge=0.25),
    (),
    t4a.InvalidOptionError,
    "not a multiple of 1/2",
)
row(
    "MPS.random-undeclared",
    lambda: t4a.MPS.random(4, conserve="Sz", local="pauli"),
    (),
    t4a.InvalidOptionError,
    "does not declare",
)
row(
    "MPS.random-conserve-name",
    lambda: t4a.MPS.random(4, conserve="Q"),
    (),
    t4a.InvalidOptionError,
    "conserve must be one of",
)
row(
    "MPS.product_state-conserve-vector",
    lambda: t4a.MPS.product_state([0, [1.0, 0.0]], conserve="Sz"),
    (),
    t4a.Tensor4allTypeError,
    "site 1 must be a basis index",
)
row(
    "MPS-symmetric-bond-mismatch",
    lambda: t4a.MPS(
        [t4a.MPS.random(4, charge=0, seed=1).tensors[0], *t4a.MPS.random(4, charge=0, bond_dim=1, seed=1).tensors[1:]]
    ),
    (),
    t4a.SectorMismatchError,
    "MPS bond 0",
)
row(
    "MPS-mixed-symmetric-dense",
    lambda: t4a.MPS([NW_SYM.tensors[0], *NW_PSI.tensors[1:]]),
    (),
    t4a.Tensor4allTypeError,
    "all SymmetricTensor or all dense",
)
row(
    "MPO.from_opsum-conserve-breaking",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Sx", 0, "Sx", 1)]), 3, conserve="Sz"),
    (),
    t4a.NonConservingError,
    "term 0 (1.0 * Sx(0) Sx(1)) does not conserve 2Sz",
)
row(
    "MPO.from_opsum-conserve-net-charge",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "S+", 0)]), 3, conserve="Sz"),
    (),
    t4a.NonConservingError,
    "changes 2Sz by 2",
)
row(
    "MPO.from_opsum-conserve-undeclared",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Z", 0)]), 3, "pauli", conserve="Sz"),
    (),
    t4a.InvalidOptionError,
    "does not declare",
)
row(
    "dmrg-symmetric-psi0-sector",
    lambda: t4a.dmrg(t4a.models.heisenberg(4), NW_SYM, sector=1),
    (),
    t4a.InvalidOptionError,
    "psi0 is in the sector Sz = 0",
)
row(
    "dmrg-symmetric-psi0-other-charge",
    lambda: t4a.dmrg(t4a.models.heisenberg(4, conserve="Sz"), t4a.MPS.random(4, charge=0, local="pauli")),
    (),
    t4a.InvalidOptionError,
    "the MPO conserves 'Sz' but psi0 'parity'",
)
row(
    "MPS.expect-nan-operator",
    lambda: NW_PSI.expect(np.full((2, 2), NW_NAN), 0),
    (),
    t4a.NonFiniteError,
    "holds NaN or infinity",
)
row("MPS.expect-unknown-operator", lambda: NW_PSI.expect("Q", 0), (), t4a.UnknownOperatorError, "'Q'")
row(
    "MPS.correlation-zero", lambda: NW_ZERO.correlation("Sz", "Sz", 0, 2), (), t4a.ZeroNormError, "the state has norm 0"
)
row("MPS.correlation-site", lambda: NW_PSI.correlation("Sz", "Sz", 0, 9), (), t4a.SiteOutOfRangeError, "9")
row(
    "MPS.correlation-odd-string",
    lambda: NW_PSI.correlation("Cdag", "C", 0, 3, local="fermion", string="C"),
    (),
    t4a.InvalidOptionError,
    "string 'C' is odd",
)
row(
    "MPS.correlation-odd-pair",
    lambda: NW_PSI.correlation("Cdag*N", "N", 0, 3, local="fermion"),
    (),
    t4a.InvalidOptionError,
    "changes the fermion parity",
)
row("MPS.expect-empty-factor", lambda: NW_PSI.expect("Sz**Sz", 0), (), t4a.InvalidOptionError, "empty factor")
row(
    "MPS.correlation_matrix-unknown-operator",
    lambda: NW_PSI.correlation_matrix("Sz", "Q"),
    (),
    t4a.UnknownOperatorError,
    "'Q'",
)
row(
    "MPS.correlation_matrix-string-shape",
    lambda: NW_PSI.correlation_matrix("Sz", "Sz", string=np.eye(3)),
    (),
    t4a.DimensionMismatchError,
    "must be 2x2, got shape (3, 3)",
)
row(
    "MPS.correlation_matrix-sites",
    lambda: NW_PSI.correlation_matrix("Sz", "Sz", sites=[0, 9]),
    (),
    t4a.SiteOutOfRangeError,
    "site 9 is outside 0..3",
)
row(
    "MPS.correlation_matrix-sites-int",
    lambda: NW_PSI.correlation_matrix("Sz", "Sz", sites=2),
    (),
    t4a.Tensor4allTypeError,
    "sites must be a list",
)
row("MPS.correlation_matrix-zero", lambda: NW_ZERO.correlation_matrix("Sz", "Sz"), (), t4a.ZeroNormError, "norm 0")
row("overlap-not-mps", t4a.overlap, (NW_PSI, 5), t4a.Tensor4allTypeError, "overlap expects two MPS")
row(
    "overlap-lengths",
    t4a.overlap,
    (NW_PSI, t4a.MPS.random(3, bond_dim=2)),
    t4a.DimensionMismatchError,
    "differ in length",
)
row(
    "expectation-result",
    lambda: t4a.expectation(t4a.DMRGResult(0.0, NW_PSI), NW_H),
    (),
    t4a.Tensor4allTypeError,
    "got DMRGResult (pass its .state)",
)
row("expectation-zero", t4a.expectation, (NW_ZERO, models.heisenberg(3)), t4a.ZeroNormError, "norm 0")
row(
    "MPO.is_hermitian-tol-nan",
    lambda: NW_H.is_hermitian(tol=NW_NAN),
    (),
    t4a.InvalidOptionError,
    "tol must be a finite number",
)
row("MPO.from_opsum-rtol-nan", lambda: t4a.MPO.from_opsum(NW_OS, 4, rtol=NW_NAN), (), t4a.InvalidOptionError, "rtol")
row("MPO.from_opsum-rtol-two", lambda: t4a.MPO.from_opsum(NW_OS, 4, rtol=2.0), (), t4a.InvalidOptionError, "rtol")
row(
    "OpSum.check_sites-str",
    lambda: NW_OS.check_sites("4"),
    (),
    t4a.BondDimensionError,
    "L (number of sites) must be a positive integer",
)
row("OpSum.check_sites-outside", lambda: NW_OS.check_sites(2), (), t4a.SiteOutOfRangeError, "outside 0..1")
row("Term-nan", lambda: t4a.OpSum([t4a.Term(NW_NAN, (("Sz", 0),))]), (), t4a.NonFiniteError, "must be finite")
row("local_space-unknown", t4a.local_space, ("spin-7",), t4a.UnknownLocalSpaceError, "spin-7")
row(
    "LocalSpace.factor-unhashable",
    lambda: t4a.local_space("pauli").factor(["X"]),
    (),
    t4a.UnknownOperatorError,
    "valid operators: Id, X, Y, Z",
)
row(
    "LocalSpace.operator_names-dim0",
    lambda: t4a.LocalSpace("q", 0, {}).operator_names(),
    (),
    t4a.BondDimensionError,
    "dim",
)
row(
    "LocalSpace.matrix-shape",
    lambda: t4a.LocalSpace("q", 2, {"A": (1, np.eye(3))}).matrix("A"),
    (),
    t4a.DimensionMismatchError,
    "must be a real 2x2 matrix",
)
row(
    "LocalSpace-fermionic-unknown",
    lambda: t4a.LocalSpace("q", 2, {"A": (1, np.eye(2))}, fermionic={"C"}),
    (),
    t4a.UnknownOperatorError,
    "fermionic operators 'C'",
)
row(
    "MPO.from_opsum-odd-fermions",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Cdag", 0, "C", 1, "C", 2)]), 3, "fermion"),
    (),
    t4a.OpSumTermError,
    "odd number",
)
row("models.heisenberg-J-nan", models.heisenberg, (4,), t4a.NonFiniteError, "J must be finite", J=NW_NAN)
row(
    "models.heisenberg_opsum-J-str", models.heisenberg_opsum, (4,), t4a.Tensor4allTypeError, "J must be a number", J="a"
)
row("models.xxz-Jz-inf", models.xxz, (4,), t4a.NonFiniteError, "Jz must be finite", Jz=NW_INF)
row("models.tfim-g-nan", models.tfim, (4,), t4a.NonFiniteError, "g must be finite", g=NW_NAN)
row("models.xx-h-nan", models.xx, (4,), t4a.NonFiniteError, "h must be finite", h=NW_NAN)
row("models.tfim_opsum-J-str", models.tfim_opsum, (4,), t4a.Tensor4allTypeError, "J must be a number", J="1")
row("models.hubbard-L1", models.hubbard, (1,), t4a.InvalidOptionError, "at least 2 sites")
row(
    "models.hubbard-conserve",
    models.hubbard,
    (4,),
    t4a.InvalidOptionError,
    "None, 'N', 'Sz' or 'N,Sz'",
    conserve="parity",
)
row("models.hubbard-U-nan", models.hubbard, (4,), t4a.NonFiniteError, "U must be finite", U=NW_NAN)
row("models.hubbard_opsum-t-str", models.hubbard_opsum, (4,), t4a.Tensor4allTypeError, "t must be a number", t="1")
row("models.hubbard_opsum-L1", models.hubbard_opsum, (1,), t4a.InvalidOptionError, "at least 2 sites")
row(
    "dmrg-hubbard-conserve-Sz",
    lambda: t4a.dmrg(models.hubbard(4, conserve="Sz")),
    (),
    t4a.InvalidOptionError,
    "conserve another charge ('N,Sz': N and Sz together, or 'N')",
)
row(
    "dmrg-hubbard-sector-pair",
    lambda: t4a.dmrg(models.hubbard(4, conserve="N,Sz"), sector=4),
    (),
    t4a.Tensor4allTypeError,
    "must be a pair (N,Sz)",
)
row(
    "dmrg-hubbard-sector-keys",
    lambda: t4a.dmrg(models.hubbard(4, conserve="N,Sz"), sector={"N": 4}),
    (),
    t4a.InvalidOptionError,
    "must give N, Sz",
)
row(
    "dmrg-hubbard-sector-empty",
    lambda: t4a.dmrg(models.hubbard(4, conserve="N,Sz"), sector=(3, 0)),
    (),
    t4a.SymmetryViolationError,
    "has no states",
)
for kwargs, exc, fragment in (
    (dict(cutoff=NW_INF), t4a.InvalidOptionError, "cutoff"),
    (dict(tol=NW_NAN), t4a.InvalidOptionError, "tol"),
    (dict(tol=-1.0), t4a.InvalidOptionError, "tol"),
    (dict(two_site="False"), t4a.Tensor4allTypeError, "two_site"),
    (dict(seed=-1), t4a.InvalidOptionError, "seed"),
    (dict(callback=5), t4a.Tensor4allTypeError, "callback"),
    (dict(progress="bar"), t4a.Tensor4allTypeError, "progress"),
    (dict(noise=1e200), t4a.InvalidOptionError, "noise (a relative size in [0, 1)"),
    (dict(noise=[1e-4, 1.0]), t4a.InvalidOptionError, "must be < 1"),
    (dict(conserve="U1"), t4a.InvalidOptionError, "conserve must be one of"),
    (dict(sector=1), t4a.InvalidOptionError, "sector=... needs conserve"),
    (dict(conserve="parity"), t4a.InvalidOptionError, "does not declare"),
):
    row(
        "dmrg-" + ",".join(f"{k}={v!r}" for k, v in kwargs.items()),
        t4a.dmrg,
        (NW_H,),
        exc,
        fragment,
        max_bond=4,
        **kwargs,
    )
# ---- infinite systems (tensor4all.infinite): iMPS, InfiniteMPO, vumps, itebd -----------------
_IPSI = t4a.iMPS.product_state([0, 1])
_IH = t4a.infinite_model("xx", cell=2)
row(
    "iMPS.from_tensors-bonds",
    t4a.iMPS.from_tensors,
    ([np.ones((2, 2, 3))],),
    t4a.DimensionMismatchError,
    "must match the left bond",
)
row("iMPS.random-max-bond", t4a.iMPS.random, ("spin-1/2", 1, 0), t4a.BondDimensionError, "max_bond")
row("iMPS.product_state-index", t4a.iMPS.product_state, ([0, 5],), t4a.InvalidOptionError, "outside 0..1")
row("iMPS.AC-site", lambda: _IPSI.AC("0"), (), t4a.Tensor4allTypeError, "must be an integer")
row("iMPS.schmidt_values-bond", lambda: _IPSI.schmidt_values(0.5), (), t4a.Tensor4allTypeError, "must be an integer")
row(
    "iMPS.entanglement_entropy-bond",
    lambda: _IPSI.entanglement_entropy("a"),
    (),
    t4a.Tensor4allTypeError,
    "must be an integer",
)
row(
    "iMPS.entanglement_spectrum-bond",
    lambda: _IPSI.entanglement_spectrum(None),
    (),
    t4a.Tensor4allTypeError,
    "must be an integer",
)
row(
    "InfiniteMPO.from_opsum-outside-cell",
    t4a.InfiniteMPO.from_opsum,
    (t4a.OpSum([(1.0, "Sz", 2, "Sz", 3)]), 2),
    t4a.SiteOutOfRangeError,
    "must lie in the cell",
)
row("infinite_model-unknown", t4a.infinite_model, ("ising",), t4a.InvalidOptionError, "valid models")
row("vumps-not-impo", t4a.vumps, (models.tfim(4),), t4a.Tensor4allTypeError, "must be an InfiniteMPO")
row("vumps-cell", t4a.vumps, (t4a.infinite_model("tfim"), _IPSI), t4a.DimensionMismatchError, "same cell")
row("itebd-steps", t4a.itebd, (_IH, _IPSI, 1.0, 0.3), t4a.InvalidOptionError, "whole number")
row(
    "itebd-local-space",
    t4a.itebd,
    (t4a.infinite_model("heisenberg", cell=2), t4a.iMPS.product_state([0, 2], "spin-1"), 0.1, 0.05),
    t4a.DimensionMismatchError,
    "physical dimensions",
)
row("itdvp-not-impo", t4a.itdvp, (models.tfim(4), _IPSI, 1.0, 0.1), t4a.Tensor4allTypeError, "InfiniteMPO")
row("itdvp-dt", t4a.itdvp, (_IH, _IPSI, 1.0, 0.0), t4a.InvalidOptionError, "dt must be positive")
row("itdvp-steps", t4a.itdvp, (_IH, _IPSI, 1.0, 0.3), t4a.InvalidOptionError, "whole number")
row("itdvp-max-bond", t4a.itdvp, (_IH, _IPSI, 1.0, 0.1), t4a.BondDimensionError, "max_bond", max_bond=0)
row(
    "itdvp-cells",
    t4a.itdvp,
    (t4a.infinite_model("tfim", cell=3), _IPSI, 1.0, 0.1),
    t4a.DimensionMismatchError,
    "divide one another",
)
row(
    "itdvp-local-space",
    t4a.itdvp,
    (t4a.infinite_model("heisenberg", spin="1", cell=2), _IPSI, 1.0, 0.1),
    t4a.DimensionMismatchError,
    "physical dimensions",
)
row(
    "fit_correlation_length-distances",
    t4a.infinite.fit_correlation_length,
    (_IPSI, "Sz", [1, 2]),
    t4a.InvalidOptionError,
    "at least 3 different distances",
)
row(
    "fit_decay-form",
    t4a.infinite.fit_decay,
    ([1, 2, 3], [1.0, 0.5, 0.2], "power"),
    t4a.InvalidOptionError,
    "valid forms",
)
row("idmrg-not-impo", t4a.idmrg, (models.tfim(4),), t4a.Tensor4allTypeError, "must be an InfiniteMPO")
row("idmrg-cell", t4a.idmrg, (_IH, t4a.iMPS.product_state([0, 1, 0])), t4a.DimensionMismatchError, "cell")
row(
    "idmrg-charge-per-cell",
    t4a.idmrg,
    (t4a.infinite_model("heisenberg", cell=3),),
    t4a.SymmetryViolationError,
    "cannot have the charge 0",
    conserve="Sz",
)
row("idmrg-conserve", t4a.idmrg, (_IH,), t4a.InvalidOptionError, "conserve must be one of", conserve="N")
row("vumps-conserve", t4a.vumps, (_IH,), t4a.InvalidOptionError, "conserve must be one of", conserve="N")
row(
    "vumps-charge-per-cell",
    t4a.vumps,
    (t4a.infinite_model("heisenberg", cell=3),),
    t4a.SymmetryViolationError,
    "cannot have the charge 0",
    conserve="Sz",
)
row(
    "vumps-conserve-psi0",
    t4a.vumps,
    (_IH, t4a.iMPS.product_state([0, 1])),
    t4a.InvalidOptionError,
    "psi0=None",
    conserve="Sz",
)

# ---- finite temperature (tensor4all.thermal): thermal_state, thermodynamics, metts ----------
_TH = models.xx(4, conserve="Sz")
row("thermal_state-beta-zero", t4a.thermal_state, (_TH, 0.0), t4a.InvalidOptionError, "beta must be positive")
row("thermal_state-beta-negative", t4a.thermal_state, (_TH, -1.0), t4a.InvalidOptionError, "beta must be positive")
row(
    "thermal_state-dbeta-not-dividing",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "does not divide beta",
    dbeta=0.3,
)
row("thermal_state-empty-sector", t4a.thermal_state, (_TH, 1.0), t4a.SymmetryViolationError, "has no states", sector=5)
row("thermal_state-not-mpo", t4a.thermal_state, (NW_PSI, 1.0), t4a.Tensor4allTypeError, "H must be an MPO")
row(
    "thermal_state-method",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "method must be one of",
    method="dmrg",
)
row(
    "thermal_state-conserve",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "conserve must be one of",
    conserve="S",
)
row("thermodynamics-beta-zero", t4a.thermodynamics, (_TH, 0.0), t4a.InvalidOptionError, "beta must be positive")
row("thermodynamics-mode", t4a.thermodynamics, (_TH, 1.0), t4a.InvalidOptionError, "mode must be one of", mode="both")
row("thermodynamics-field", t4a.thermodynamics, (_TH, 1.0), t4a.UnknownOperatorError, "unknown operator", field="Q")
row("metts-zero-samples", t4a.metts, (_TH, 1.0, 0), t4a.InvalidOptionError, "n_samples (samples per chain) must be")
row("metts-beta-zero", t4a.metts, (_TH, 0.0, 2), t4a.InvalidOptionError, "beta must be positive")
row("metts_tasks-bases", t4a.metts_tasks, (_TH, 1.0, 2), t4a.InvalidOptionError, "bases must be one of", bases="y")
row(
    "metts_tasks-conserve-x",
    t4a.metts_tasks,
    (_TH, 1.0, 2),
    t4a.InvalidOptionError,
    "needs basis states",
    conserve="Sz",
)
row("metts-client", t4a.metts, (_TH, 1.0, 1), t4a.Tensor4allTypeError, "client must be", client="tcp://nowhere")
row(
    "thermal_state-splitting",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "splitting must be",
    splitting="odd",
)
row("tebd-splitting", t4a.tebd, (NW_H, NW_PSI, 1.0, 0.5), t4a.InvalidOptionError, "splitting must be", splitting="odd")
row("thermodynamics-dbeta", t4a.thermodynamics, (_TH, 1.0), t4a.InvalidOptionError, "does not divide beta", dbeta=0.3)
row(
    "thermodynamics-empty-sector", t4a.thermodynamics, (_TH, 1.0), t4a.SymmetryViolationError, "has no states", sector=5
)
row(
    "thermodynamics-differentiate",
    t4a.thermodynamics,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "differentiate must be one of",
    differentiate="C",
)
row("thermodynamics-callback", t4a.thermodynamics, (_TH, 1.0), t4a.Tensor4allTypeError, "callback", callback=3)
row("metts-dbeta", t4a.metts, (_TH, 1.0, 2), t4a.InvalidOptionError, "does not divide beta", dbeta=0.3)
row("evolve_thermal-state", t4a.evolve_thermal, (NW_H, _TH, 1.0, 0.5), t4a.Tensor4allTypeError, "state must be")
row(
    "evolve_thermal-disentangle",
    t4a.evolve_thermal,
    (t4a.MPS.random(4, 4, bond_dim=2, seed=1), _TH, 1.0, 0.5),
    t4a.InvalidOptionError,
    "disentangle must be None or one of",
    disentangle="renyi",
)
row(
    "evolve_thermal-sites",
    t4a.evolve_thermal,
    (NW_PSI, _TH, 1.0, 0.5),
    t4a.InvalidOptionError,
    "but H's purification has",
)
row("thermodynamics-engine", t4a.thermodynamics, (_TH, 1.0), t4a.InvalidOptionError, "engine must be", engine="jit")
row("metts-chains-zero", t4a.metts, (_TH, 1.0, 2), t4a.InvalidOptionError, "chains", chains=0)
row(
    "references.thermal_reference-model",
    t4a.references.thermal_reference,
    ("ising", 4, [1.0], {}),
    t4a.InvalidOptionError,
    "model must be one of",
)
row(
    "references.free_fermion_thermodynamics-beta",
    t4a.references.free_fermion_thermodynamics,
    ([0.5, -0.5], [-1.0]),
    t4a.InvalidOptionError,
    "betas finite and >= 0",
)

# ---- issue 51: excited states and gaps ------------------------------------------------------
row("excited_states-n-zero", t4a.excited_states, (models.heisenberg(4), 0), t4a.InvalidOptionError, "n must be")
row("excited_states-not-mpo", t4a.excited_states, (NW_PSI, 2), t4a.Tensor4allTypeError, "expects an MPO")
row(
    "excited_states-sector-too-small",
    t4a.excited_states,
    (models.heisenberg(4), 2),
    t4a.ValueRangeError,
    "holds 1 states, fewer than n = 2",
    conserve="Sz",
    sector=2,
)
row(
    "excited_states-psi0-count",
    t4a.excited_states,
    (models.heisenberg(4), 3),
    t4a.InvalidOptionError,
    "psi0 has",
    psi0=[NW_PSI],
)
row("gap-sectors-one", t4a.gap, (models.heisenberg(4),), t4a.InvalidOptionError, "a pair", conserve="Sz", sectors=(0,))
row("gap-sectors-no-charge", t4a.gap, (models.heisenberg(4),), t4a.InvalidOptionError, "needs conserve", sectors=(0, 1))
row(
    "dmrg-orthogonal_to-mps",
    t4a.dmrg,
    (models.heisenberg(4),),
    t4a.Tensor4allTypeError,
    "list of MPS",
    orthogonal_to=NW_PSI,
)
row(
    "dmrg-orthogonal_to-zero",
    t4a.dmrg,
    (models.heisenberg(3),),
    t4a.ZeroNormError,
    "orthogonal_to[0] has norm 0",
    orthogonal_to=[NW_ZERO],
)
row("dmrg-zero-start", t4a.dmrg, (models.heisenberg(3), NW_ZERO), t4a.ZeroNormError, "psi0 has norm 0", max_bond=4)

# ---- tensor4all.measurements and the lattice references (tensor4all.references) ------
MS = t4a.measurements
MS_E = t4a.MPS.random(4, 4, bond_dim=2, seed=3)  # electron sites (dimension 4)
row("measurements.density-not-mps", MS.density, ("psi",), t4a.Tensor4allTypeError, "expected an MPS, got str")
row("measurements.density-spin-space", MS.density, (MS_E,), t4a.InvalidOptionError, "has no Ntot/N", local="spin-1/2")
row(
    "measurements.density-dimension",
    MS.density,
    (MS_E,),
    t4a.DimensionMismatchError,
    "has dimension 2",
    local="fermion",
)
row(
    "measurements.density-unknown-space",
    MS.density,
    (MS_E,),
    t4a.UnknownLocalSpaceError,
    "unknown local space",
    local="quark",
)
row(
    "measurements.density-no-space",
    MS.density,
    (t4a.MPS.random(3, 5),),
    t4a.InvalidOptionError,
    "no built-in local space of dimension 5 has",
)
row(
    "measurements.double_occupancy-tj", MS.double_occupancy, (MS_E,), t4a.InvalidOptionError, "has no Nupdn", local="tj"
)
row(
    "measurements.spin_correlation-site",
    MS.spin_correlation,
    (MS_E, 4),
    t4a.SiteOutOfRangeError,
    "site i 4 is outside 0..3",
)
row(
    "measurements.spin_correlation-site-float",
    MS.spin_correlation,
    (MS_E, 1.0),
    t4a.Tensor4allTypeError,
    "must be an integer site",
)
row(
    "measurements.charge_correlation-row-and-pairs",
    MS.charge_correlation,
    (MS_E, 0),
    t4a.InvalidOptionError,
    "not both",
    pairs=[(0, 1)],
)
row(
    "measurements.charge_correlation-pair-shape",
    MS.charge_correlation,
    (MS_E,),
    t4a.Tensor4allTypeError,
    "pair of sites",
    pairs=[(0, 1, 2)],
)
row(
    "measurements.one_particle_density_matrix-spin",
    MS.one_particle_density_matrix,
    (MS_E,),
    t4a.InvalidOptionError,
    "'up', 'dn' or None",
    spin="left",
)
row(
    "measurements.one_particle_density_matrix-spinless",
    MS.one_particle_density_matrix,
    (t4a.MPS.random(3, 2),),
    t4a.InvalidOptionError,
    "spinless",
    spin="up",
)
row(
    "measurements.entanglement_per_sector-dense",
    MS.entanglement_per_sector,
    (MS_E, 1),
    t4a.InvalidOptionError,
    "dense and has no charge sectors",
)
row(
    "measurements.entanglement_per_sector-bond",
    MS.entanglement_per_sector,
    (MS_E, 3),
    t4a.SiteOutOfRangeError,
    "bond 3 is outside 0..2",
)
REF = t4a.references
row(
    "references.hopping_matrix-bond",
    REF.hopping_matrix,
    (3, [(0, 3)]),
    t4a.InvalidOptionError,
    "bond (0, 3) must join two different sites of 0..2",
)
row(
    "references.hopping_matrix-bond-type",
    REF.hopping_matrix,
    (3, [(0, 1.5)]),
    t4a.Tensor4allTypeError,
    "pair of integer sites",
)
row(
    "references.free_fermion_energy-N",
    REF.free_fermion_energy,
    (3, [(0, 1)]),
    t4a.InvalidOptionError,
    "N = 4 has no states: it must lie in 0..3",
    N=4,
)
row(
    "references.free_electron_energy-Sz",
    REF.free_electron_energy,
    (3, [(0, 1)]),
    t4a.InvalidOptionError,
    "does not fit N = 2",
    N=2,
    Sz=0.5,
)
row(
    "references.sector_dimension-model",
    REF.sector_dimension,
    ("kitaev", 4),
    t4a.InvalidOptionError,
    "unknown model 'kitaev'",
)
row(
    "references.sector_dimension-charge",
    REF.sector_dimension,
    ("spinless", 4),
    t4a.InvalidOptionError,
    "'spinless' conserves N, not Sz",
    Sz=0.0,
)
row(
    "references.exact_sector_energy-too-big",
    REF.exact_sector_energy,
    ("hubbard", 8, [(0, 1)]),
    t4a.InvalidOptionError,
    "more than max_dim = 1000",
    max_dim=1000,
)
row(
    "references.exact_sector_energy-coupling",
    REF.exact_sector_energy,
    ("tj", 3, [(0, 1)]),
    t4a.InvalidOptionError,
    "'U' not a coupling of 'tj'",
    couplings={"U": 1.0},
)
row(
    "references.exact_sector_energy-coupling-nan",
    REF.exact_sector_energy,
    ("xxz", 3, [(0, 1)]),
    t4a.InvalidOptionError,
    "Jz must be a finite number",
    couplings={"Jz": float("nan")},
)
row(
    "references.exact_sector_energy-next-bonds",
    REF.exact_sector_energy,
    ("xxz", 3, [(0, 1)]),
    t4a.InvalidOptionError,
    "next_bonds are only used by 'j1j2'",
    next_bonds=[(0, 2)],
)

# ---- issue 23: lattices (tensor4all.lattices) and the spin models on them -------
LAT = t4a.lattices
row("lattices.chain-L0", LAT.chain, (0,), t4a.BondDimensionError, "chain: L must be a positive integer")
row(
    "lattices.chain-periodic-str",
    LAT.chain,
    (4,),
    t4a.Tensor4allTypeError,
    "periodic must be True or False",
    periodic="yes",
)
row(
    "lattices.ladder-legs0", LAT.ladder, (4,), t4a.BondDimensionError, "ladder: legs must be a positive integer", legs=0
)
row("lattices.square-Lx-float", LAT.square, (2.5, 2), t4a.BondDimensionError, "square: Lx must be a positive integer")
row(
    "lattices.square-xperiodic-None",
    LAT.square,
    (3, 2),
    t4a.Tensor4allTypeError,
    "xperiodic must be True or False",
    xperiodic=None,
)
row("lattices.triangular-Ly0", LAT.triangular, (3, 0), t4a.BondDimensionError, "triangular: Ly must be a positive")
row("lattices.chain-memory", LAT.chain, (10**12,), t4a.Tensor4allMemoryError, "chain lattice of 1000000000000 sites")
row("lattices.square-memory", LAT.square, (10**6, 10**6), t4a.Tensor4allMemoryError, "more than this machine")
row("lattices.ladder-memory", LAT.ladder, (10**12,), t4a.Tensor4allMemoryError, "more than this machine")
row("lattices.triangular-memory", LAT.triangular, (10**6, 10**6), t4a.Tensor4allMemoryError, "triangular lattice")
row("lattices.honeycomb-memory", LAT.honeycomb, (10**6, 10**6), t4a.Tensor4allMemoryError, "honeycomb lattice")
row(
    "lattices.honeycomb-odd-cylinder", LAT.honeycomb, (3, 3), t4a.InvalidOptionError, "needs an even Ly", yperiodic=True
)
row(
    "lattices.Lattice-bond-outside",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], [(0, 2)]),
    t4a.InvalidOptionError,
    "outside 0..1",
)
row(
    "lattices.Lattice-self-bond",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], [(1, 1)]),
    t4a.InvalidOptionError,
    "joins a site to itself",
)
row(
    "lattices.Lattice-bond-not-pair",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], [(0, 1.0)]),
    t4a.Tensor4allTypeError,
    "is not a pair of ints",
)
row(
    "lattices.Lattice-bonds-not-iterable",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], 3),
    t4a.Tensor4allTypeError,
    "iterable of (i, j) pairs",
)
row("lattices.Lattice-coords-shape", LAT.Lattice, ("p", [0, 1], []), t4a.InvalidOptionError, "N x 2 array")
row("lattices.Lattice-coords-str", LAT.Lattice, ("p", "ab", []), t4a.Tensor4allTypeError, "coords must be")
row("lattices.Lattice-coords-nan", LAT.Lattice, ("p", [[0, np.nan]], []), t4a.InvalidOptionError, "finite")
row("lattices.Lattice-name-int", LAT.Lattice, (3, [[0, 0]], []), t4a.Tensor4allTypeError, "name must be a str")
row(
    "lattices.Lattice-ordering-int",
    LAT.Lattice,
    ("p", [[0, 0]], []),
    t4a.Tensor4allTypeError,
    "ordering must be a str",
    ordering=1,
)
row("models.j1j2-J2-nan", models.j1j2, (LAT.square(2, 2),), t4a.NonFiniteError, "J2 must be finite", J2=NW_NAN)
row("models.j1j2-conserve", models.j1j2, (4,), t4a.InvalidOptionError, "None or 'Sz'", conserve="N")
row("models.j1j2-L0", models.j1j2, (0,), t4a.BondDimensionError, "L (number of sites) must be a positive integer")
row(
    "models.j1j2_opsum-J1-str",
    models.j1j2_opsum,
    (LAT.chain(4),),
    t4a.Tensor4allTypeError,
    "J1 must be a number",
    J1="1",
)
row(
    "models.heisenberg-lattice-h-inf",
    models.heisenberg,
    (LAT.triangular(2, 2),),
    t4a.NonFiniteError,
    "h must be finite",
    h=NW_INF,
)
row(
    "models.tfim-lattice-conserve",
    models.tfim,
    (LAT.honeycomb(2, 2),),
    t4a.InvalidOptionError,
    "None or 'parity'",
    conserve="Sz",
)
row("models.hubbard-lattice-1-site", models.hubbard, (LAT.chain(1),), t4a.InvalidOptionError, "at least 2 sites")
row(
    "models.hubbard-lattice-mu-inf",
    models.hubbard,
    (LAT.square(2, 2),),
    t4a.NonFiniteError,
    "mu must be finite",
    mu=NW_INF,
)
row("models.spinless_fermions-L1", models.spinless_fermions, (1,), t4a.InvalidOptionError, "at least 2 sites")
row(
    "models.spinless_fermions-L-str",
    models.spinless_fermions,
    ("4",),
    t4a.BondDimensionError,
    "L (number of sites) must be a positive integer",
)
row(
    "models.spinless_fermions-conserve",
    models.spinless_fermions,
    (4,),
    t4a.InvalidOptionError,
    "None or 'N'",
    conserve="Sz",
)
row(
    "models.spinless_fermions-V-nan",
    models.spinless_fermions,
    (LAT.square(2, 2),),
    t4a.NonFiniteError,
    "V must be finite",
    V=NW_NAN,
)
row(
    "models.spinless_fermions_opsum-t-str",
    models.spinless_fermions_opsum,
    (4,),
    t4a.Tensor4allTypeError,
    "t must be a number",
    t="1",
)
row("models.tj-L0", models.tj, (0,), t4a.BondDimensionError, "L (number of sites) must be a positive integer")
row("models.tj-conserve", models.tj, (4,), t4a.InvalidOptionError, "None, 'N', 'Sz' or 'N,Sz'", conserve="parity")
row("models.tj-J-inf", models.tj, (LAT.ladder(2, 2),), t4a.NonFiniteError, "J must be finite", J=NW_INF)
row("models.tj_opsum-1-site", models.tj_opsum, (LAT.chain(1),), t4a.InvalidOptionError, "at least 2 sites")
row("models.tj_opsum-t-str", models.tj_opsum, (4,), t4a.Tensor4allTypeError, "t must be a number", t="1")


# ---- issue 24: MPO application and MPS arithmetic ------------------------------------------
row("apply-swapped", t4a.apply, (NW_PSI, NW_H), t4a.Tensor4allTypeError, "the MPO comes first")
row("apply-length", t4a.apply, (NW_H, t4a.MPS.random(5, bond_dim=2)), t4a.DimensionMismatchError, "the MPS has 5 sites")
row(
    "apply-method",
    t4a.apply,
    (NW_H, NW_PSI),
    t4a.InvalidOptionError,
    "valid methods: zipup, fit, naive",
    method="exact",
)
row("apply-max_bond", t4a.apply, (NW_H, NW_PSI), t4a.BondDimensionError, "apply: max_bond", max_bond=0)
row("apply-cutoff-nan", t4a.apply, (NW_H, NW_PSI), t4a.InvalidOptionError, "apply: cutoff", cutoff=NW_NAN)
row("apply-tol", t4a.apply, (NW_H, NW_PSI), t4a.InvalidOptionError, "apply: tol", method="fit", tol=-1.0)
row("apply-threads-negative", t4a.apply, (NW_H, NW_PSI), t4a.InvalidOptionError, "threads must be None", threads=-1)
row("apply-threads-float", t4a.apply, (NW_H, NW_PSI), t4a.Tensor4allTypeError, "threads must be None", threads=1.5)
row("add-empty", t4a.add, (), t4a.Tensor4allTypeError, "add needs at least one MPS")
row("add-not-mps", t4a.add, (NW_PSI, NW_H), t4a.Tensor4allTypeError, "operand 1 must be an MPS")
row("add-cutoff", t4a.add, (NW_PSI, NW_PSI), t4a.InvalidOptionError, "add: cutoff", cutoff=1.0)
row(
    "MPS.add-lengths",
    lambda: NW_PSI.add(t4a.MPS.random(3, bond_dim=2)),
    (),
    t4a.DimensionMismatchError,
    "differ in length",
)
row("MPS.add-max_bond", lambda: NW_PSI.add(NW_PSI, max_bond=-1), (), t4a.BondDimensionError, "max_bond")
row("MPS.__add__-dense-symmetric", lambda: NW_PSI + NW_SYM, (), t4a.Tensor4allTypeError, ".dense()")
row(
    "MPS.__add__-sectors",
    lambda: NW_SYM + t4a.MPS.random(4, bond_dim=2, charge=1),
    (),
    t4a.SectorMismatchError,
    "different sectors",
)
row("MPS.__radd__-number", lambda: 1.0 + NW_PSI, (), t4a.Tensor4allTypeError, "operand 0 must be an MPS")
row(
    "MPS.__sub__-phys-dims",
    lambda: NW_PSI - t4a.MPS.random(4, d=3, bond_dim=2),
    (),
    t4a.DimensionMismatchError,
    "physical dimensions",
)
row("MPS.__mul__-str", lambda: NW_PSI * "2", (), t4a.Tensor4allTypeError, "the factor must be a number")
row("MPS.__rmul__-mps", lambda: NW_PSI.__rmul__(NW_PSI), (), t4a.Tensor4allTypeError, "tensor4all.overlap")
row("MPS.__mul__-inf", lambda: NW_PSI * NW_INF, (), t4a.NonFiniteError, "must be finite")
row("MPS.__truediv__-zero", lambda: NW_PSI / 0.0, (), t4a.InvalidOptionError, "division by zero")


# ---- issue 24 (part 2): TEBD (tensor4all.tebd) -------
TE_H, TE_PSI = models.heisenberg(4), t4a.MPS.product_state([0, 1, 0, 1])
for label, args, kwargs, exc, fragment in (
    ("dt-zero", (TE_H, TE_PSI, 0.2, 0.0), {}, t4a.InvalidOptionError, "dt must be positive"),
    ("dt-negative", (TE_H, TE_PSI, 0.2, -0.1), {}, t4a.InvalidOptionError, "dt"),
    ("t-not-multiple", (TE_H, TE_PSI, 1.0, 0.3), {}, t4a.InvalidOptionError, "is not a multiple of dt"),
    ("t-nan", (TE_H, TE_PSI, NW_NAN, 0.1), {}, t4a.InvalidOptionError, "finite"),
    ("order-3", (TE_H, TE_PSI, 0.2, 0.1), dict(order=3), t4a.InvalidOptionError, "order must be one of 2, 4"),
    ("max_bond-0", (TE_H, TE_PSI, 0.2, 0.1), dict(max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("cutoff-one", (TE_H, TE_PSI, 0.2, 0.1), dict(cutoff=1.0), t4a.InvalidOptionError, "cutoff"),
    ("normalize-str", (TE_H, TE_PSI, 0.2, 0.1), dict(normalize="no"), t4a.Tensor4allTypeError, "normalize"),
    ("every-0", (TE_H, TE_PSI, 0.2, 0.1), dict(every=0), t4a.InvalidOptionError, "every"),
    ("callback-int", (TE_H, TE_PSI, 0.2, 0.1), dict(callback=3), t4a.Tensor4allTypeError, "callback"),
    (
        "observables-list",
        (TE_H, TE_PSI, 0.2, 0.1),
        dict(observables=["Sz"]),
        t4a.Tensor4allTypeError,
        "observables must be a mapping",
    ),
    ("psi-list", (TE_H, TE_PSI.tensors, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "psi must be an MPS"),
    ("H-str", ("heisenberg", TE_PSI, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "H must be an MPO"),
    ("H-callable-int", (lambda t: 5, TE_PSI, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "returned int"),
    (
        "sites-mismatch",
        (models.heisenberg(5), TE_PSI, 0.2, 0.1),
        {},
        t4a.DimensionMismatchError,
        "the MPS has 4 sites but the MPO has 5",
    ),
    (
        "bond-count",
        ([np.eye(4)] * 2, TE_PSI, 0.2, 0.1),
        {},
        t4a.DimensionMismatchError,
        "2 bond Hamiltonians for a chain of 4 sites",
    ),
    (
        "gate-dimension",
        ([np.eye(4), np.eye(3), np.eye(4)], TE_PSI, 0.2, 0.1),
        {},
        t4a.DimensionMismatchError,
        "bond Hamiltonian 1 has shape (3, 3)",
    ),
    ("gate-nan", ([np.full((4, 4), NW_NAN)] * 3, TE_PSI, 0.2, 0.1), {}, t4a.NonFiniteError, "NaN or infinity"),
    (
        "three-site-term",
        (t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Sz", 0, "Sz", 1, "Sz", 2)]), 4), TE_PSI, 0.2, 0.1),
        {},
        t4a.InvalidOptionError,
        "acts on 3 sites",
    ),
    (
        "mpo-without-opsum",
        (t4a.MPO(TE_H.tensors), TE_PSI, 0.2, 0.1),
        {},
        t4a.InvalidOptionError,
        "not compiled from an OpSum",
    ),
    (
        "non-conserving",
        (models.tfim(4), t4a.MPS.product_state([0, 1, 0, 1], conserve="Sz"), 0.2, 0.1),
        {},
        t4a.NonConservingError,
        "changes the conserved charge",
    ),
    ("zero-state", (models.heisenberg(3), NW_ZERO, 0.2, 0.1), {}, t4a.ZeroNormError, "norm 0"),
):
    row(f"tebd-{label}", t4a.tebd, args, exc, fragment, **kwargs)


# ---- issue 24 (part 1): TDVP (tensor4all.tdvp) -------
TD_NONHERM = t4a.MPO(
    [np.asarray(w) + (0.3j * np.abs(np.asarray(w)) if i == 1 else 0) for i, w in enumerate(TE_H.tensors)]
)
for label, args, kwargs, exc, fragment in (
    ("dt-zero", (TE_H, TE_PSI, 0.2, 0.0), {}, t4a.InvalidOptionError, "dt must be positive"),
    ("t-not-multiple", (TE_H, TE_PSI, 1.0, 0.3), {}, t4a.InvalidOptionError, "is not a multiple of dt"),
    ("t-inf", (TE_H, TE_PSI, NW_INF, 0.1), {}, t4a.InvalidOptionError, "finite"),
    ("max_bond-0", (TE_H, TE_PSI, 0.2, 0.1), dict(max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("cutoff-one", (TE_H, TE_PSI, 0.2, 0.1), dict(cutoff=1.0), t4a.InvalidOptionError, "cutoff"),
    ("krylov_tol", (TE_H, TE_PSI, 0.2, 0.1), dict(krylov_tol=0.0), t4a.InvalidOptionError, "krylov_tol"),
    ("two_site-str", (TE_H, TE_PSI, 0.2, 0.1), dict(two_site="yes"), t4a.Tensor4allTypeError, "two_site"),
    ("every-0", (TE_H, TE_PSI, 0.2, 0.1), dict(every=0), t4a.InvalidOptionError, "every"),
    ("progress-int", (TE_H, TE_PSI, 0.2, 0.1), dict(progress=3), t4a.Tensor4allTypeError, "progress"),
    ("observables-spec", (TE_H, TE_PSI, 0.2, 0.1), dict(observables={"x": 3}), t4a.Tensor4allTypeError, "has spec 3"),
    (
        "observables-correlation-key",
        (TE_H, TE_PSI, 0.2, 0.1),
        dict(observables={"x": {"pair": ("Sz", "Sz"), "sting": "Sz"}}),
        t4a.InvalidOptionError,
        "unknown key 'sting'",
    ),
    ("psi-list", (TE_H, TE_PSI.tensors, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "psi must be an MPS"),
    ("H-str", ("heisenberg", TE_PSI, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "H must be an MPO"),
    ("sites-mismatch", (models.heisenberg(5), TE_PSI, 0.2, 0.1), {}, t4a.DimensionMismatchError, "5"),
    ("non-hermitian", (TD_NONHERM, TE_PSI, 0.2, 0.1), {}, t4a.NonHermitianError, "allow_nonhermitian"),
    ("zero-state", (models.heisenberg(3), NW_ZERO, 0.2, 0.1), {}, t4a.ZeroNormError, "norm 0"),
    (
        "symmetric-other-space",
        (models.tfim(4), t4a.MPS.product_state([0, 1, 0, 1], conserve="Sz"), 0.2, 0.1),
        {},
        t4a.InvalidOptionError,
        "local space",
    ),
):
    row(f"tdvp-{label}", t4a.tdvp, args, exc, fragment, **kwargs)


# ---- dynamical correlations and spectral functions (tensor4all.spectra) -------
SP_H, SP_PSI = models.heisenberg(6), t4a.MPS.random(6, bond_dim=2, seed=3)
SP_UP = t4a.MPS.product_state([0] * 6)
SP_FERMIONS = models.spinless_fermions(6, conserve=None)
SP_G = t4a.DynamicalCorrelation(np.linspace(0.0, 1.0, 11), np.ones((11, 6)), 3, ("Sz", "Sz"))
SP_T = dict(t_final=0.2, dt=0.1)
for label, args, kwargs, exc, fragment in (
    (
        "wrong-local-space",
        (SP_H, SP_PSI, "C", "Cdag"),
        SP_T,
        t4a.UnknownOperatorError,
        "not an operator of the Hamiltonian's local space 'spin-1/2'",
    ),
    ("matrix-dimension", (SP_H, SP_PSI, np.eye(3), "Sz"), SP_T, t4a.DimensionMismatchError, "must be 2x2"),
    ("parity-mismatch", (SP_FERMIONS, SP_PSI, "C", "N"), SP_T, t4a.InvalidOptionError, "odd under the fermion parity"),
    (
        "t_final-not-multiple",
        (SP_H, SP_PSI, "Sz", "Sz"),
        dict(t_final=0.25, dt=0.1),
        t4a.InvalidOptionError,
        "not a multiple of dt",
    ),
    ("dt-zero", (SP_H, SP_PSI, "Sz", "Sz"), dict(t_final=0.2, dt=0.0), t4a.InvalidOptionError, "dt must be positive"),
    ("t_final-nan", (SP_H, SP_PSI, "Sz", "Sz"), dict(t_final=NW_NAN, dt=0.1), t4a.InvalidOptionError, "finite"),
    (
        "method",
        (SP_H, SP_PSI, "Sz", "Sz"),
        dict(SP_T, method="rk4"),
        t4a.InvalidOptionError,
        "valid methods: tdvp, tebd",
    ),
    (
        "order-tdvp",
        (SP_H, SP_PSI, "Sz", "Sz"),
        dict(SP_T, order=4),
        t4a.InvalidOptionError,
        "order is the Trotter order",
    ),
    ("order-3", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, method="tebd", order=3), t4a.InvalidOptionError, "2 or 4"),
    ("center-range", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, center=9), t4a.SiteOutOfRangeError, "outside the chain"),
    ("center-str", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, center="3"), t4a.Tensor4allTypeError, "center must be"),
    ("max_bond-0", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("chi", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, chi=8), t4a.Tensor4allTypeError, "did you mean max_bond="),
    ("H-str", ("heisenberg", SP_PSI, "Sz", "Sz"), SP_T, t4a.Tensor4allTypeError, "H must be an MPO"),
    (
        "ground-result",
        (SP_H, type("Result", (), {"state": SP_PSI})(), "Sz", "Sz"),
        SP_T,
        t4a.Tensor4allTypeError,
        "pass its .state",
    ),
    ("sites-mismatch", (models.heisenberg(5), SP_PSI, "Sz", "Sz"), SP_T, t4a.DimensionMismatchError, "6 sites"),
    ("zero-ground", (SP_H, t4a.MPS([np.zeros((1, 2, 1))] * 6), "Sz", "Sz"), SP_T, t4a.ZeroNormError, "norm 0"),
    ("annihilated", (SP_H, SP_UP, "S-", "S+"), SP_T, t4a.ZeroNormError, "B_c|0> = 0"),
):
    row(f"dynamical_correlation-{label}", t4a.dynamical_correlation, args, exc, fragment, **kwargs)
for label, args, kwargs, exc, fragment in (
    ("G-array", (np.ones((3, 3)),), {}, t4a.Tensor4allTypeError, "must be a DynamicalCorrelation"),
    ("window", (SP_G,), dict(window="box"), t4a.InvalidOptionError, "valid windows: gaussian, hann, none"),
    ("omega-nyquist", (SP_G,), dict(omega=[0.0, 40.0]), t4a.WindowResolutionError, "Nyquist frequency"),
    ("omega-too-fine", (SP_G,), dict(omega=np.linspace(0.0, 1.0, 50)), t4a.WindowResolutionError, "coarser grid"),
    ("omega-nan", (SP_G,), dict(omega=[0.0, NW_NAN]), t4a.NonFiniteError, "NaN"),
    ("omega-2d", (SP_G,), dict(omega=np.ones((2, 2))), t4a.DimensionMismatchError, "1-D"),
    ("q-complex", (SP_G,), dict(q=[1j]), t4a.Tensor4allTypeError, "real numbers"),
    ("extend-below-1", (SP_G,), dict(extend=0.5), t4a.InvalidOptionError, ">= 1"),
    ("negative_times", (SP_G,), dict(negative_times="mirror"), t4a.InvalidOptionError, "'conjugate', 'zero'"),
    (
        "conjugate-non-hermitian",
        (t4a.DynamicalCorrelation([0.0, 0.1], np.ones((2, 6)), 3, ("Sz", "Sx"), hermitian_pair=False),),
        {},
        t4a.InvalidOptionError,
        "negative_times='zero'",
    ),
):
    row(f"spectral_function-{label}", t4a.spectral_function, args, exc, fragment, **kwargs)
for label, kwargs, exc, fragment in (
    ("n_moments-1", dict(n_moments=1), t4a.InvalidOptionError, "n_moments must be an integer >= 2"),
    ("kernel", dict(n_moments=10, kernel="lorentz"), t4a.InvalidOptionError, "valid kernels: jackson, none"),
    ("bounds-order", dict(n_moments=10, bounds=(1.0, -1.0)), t4a.InvalidOptionError, "E_min < E_max"),
    ("bounds-str", dict(n_moments=10, bounds="auto"), t4a.Tensor4allTypeError, "bounds must be a pair"),
    ("omega-str", dict(n_moments=10, bounds=(-3.0, 3.0), omega="all"), t4a.Tensor4allTypeError, "omega"),
    ("threads-negative", dict(n_moments=10, threads=-1), t4a.InvalidOptionError, "threads must be None"),
    ("threads-float", dict(n_moments=10, threads=1.5), t4a.Tensor4allTypeError, "threads must be None"),
):
    row(
        f"spectral_function_chebyshev-{label}",
        t4a.spectral_function_chebyshev,
        (SP_H, SP_PSI, "Sz", "Sz"),
        exc,
        fragment,
        **kwargs,
    )
row(
    "spectral_function_chebyshev-wrong-local-space",
    t4a.spectral_function_chebyshev,
    (SP_H, SP_PSI, "Cdag", "C"),
    t4a.UnknownOperatorError,
    "local space 'spin-1/2'",
    n_moments=10,
)
for label, args, kwargs, exc, fragment in (
    ("3d", (np.ones((4, 2, 2)), 2), {}, t4a.DimensionMismatchError, "1-D (one series) or 2-D"),
    ("nan", (np.array([1.0, NW_NAN, 1.0, 1.0]), 2), {}, t4a.NonFiniteError, "NaN"),
    ("str", ("abc", 2), {}, t4a.Tensor4allTypeError, "series"),
    ("n_predict", (np.ones(10), -1), {}, t4a.InvalidOptionError, "n_predict must be an integer >= 0"),
    ("window", (np.ones(10), 2), dict(n_fit=8, n_coefficients=4), t4a.InvalidOptionError, "n_fit + n_coefficients"),
    ("rcond", (np.ones(10), 2), dict(rcond=2.0), t4a.InvalidOptionError, "rcond"),
):
    row(f"linear_prediction-{label}", t4a.linear_prediction, args, exc, fragment, **kwargs)
row("window_resolution-name", t4a.window_resolution, ("box", 1.0), t4a.InvalidOptionError, "valid windows")
row("window_resolution-zero", t4a.window_resolution, ("hann", 0.0), t4a.InvalidOptionError, "t_final must be positive")
row("window_resolution-str", t4a.window_resolution, ("hann", "1"), t4a.Tensor4allTypeError, "t_final")
for label, args, kwargs, exc, fragment in (
    ("times-uneven", ([0.0, 0.1, 0.3], np.ones((3, 2)), 0), {}, t4a.InvalidOptionError, "equal steps"),
    ("times-from-1", ([1.0, 1.1], np.ones((2, 2)), 0), {}, t4a.InvalidOptionError, "start at 0"),
    ("values-shape", ([0.0, 0.1], np.ones((3, 2)), 0), {}, t4a.DimensionMismatchError, "(len(times), L)"),
    ("values-nan", ([0.0, 0.1], np.full((2, 2), NW_NAN), 0), {}, t4a.NonFiniteError, "values holds NaN"),
    ("center", ([0.0, 0.1], np.ones((2, 2)), 2), {}, t4a.SiteOutOfRangeError, "outside the chain"),
    (
        "hermitian_pair",
        ([0.0, 0.1], np.ones((2, 2)), 0),
        dict(hermitian_pair="yes"),
        t4a.Tensor4allTypeError,
        "True or False",
    ),
):
    row(f"DynamicalCorrelation-{label}", t4a.DynamicalCorrelation, args, exc, fragment, **kwargs)
row(
    "DynamicalCorrelation.from_dict-missing",
    t4a.DynamicalCorrelation.from_dict,
    ({"times": [0.0, 0.1]},),
    t4a.InvalidOptionError,
    "lacks 'values', 'center'",
)
row(
    "DynamicalCorrelation.from_dict-as_dict-times",
    lambda: t4a.DynamicalCorrelation.from_dict({**SP_G.as_dict(), "times": [0.0] + [0.2] * 10}),
    (),
    t4a.InvalidOptionError,
    "equal steps",
)


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
    (ST.BlockDiagonal([tf.ones((1, 2)), tf.ones((2, 1))]),),
    ST.SquareBlockError,
    "needs square blocks",
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


# ---- issue 22: symmetric tensors (groups, legs, fusion, SymmetricTensor) -------
from tensor4all.symmetry import U1 as SY_U1, Z2 as SY_Z2, Zn as SY_Zn, FusedLeg as SY_FusedLeg  # noqa: E402
from tensor4all.symmetry import Leg as SY_Leg, ProductSymmetry as SY_Product, Symmetry as SY_Symmetry  # noqa: E402
from tensor4all.symmetry import fuse as sy_fuse  # noqa: E402

SY_P = SY_Leg(SY_U1(), {-1: 1, 1: 1})
SY_X = t4a.SymmetricTensor.random([SY_P, SY_P, SY_P.dual()], charge=1, seed=0)
SY_M = t4a.SymmetricTensor.random([SY_P, SY_P.dual()], seed=0)
row("Symmetry-abstract", SY_Symmetry, (), t4a.ChargeError, "abstract base")
row("U1-canonical-float", lambda: t4a.symmetry.U1().canonical(0.5), (), t4a.ChargeError, "must be an integer")
row("U1-negate-str", lambda: SY_U1().negate("a"), (), t4a.ChargeError, "must be an integer")
row("U1-total-bool", lambda: SY_U1().total([True], [1]), (), t4a.ChargeError, "got bool")
row("Zn-1", SY_Zn, (1,), t4a.ChargeError, "n must be an integer >= 2")
row("Z2-add-float", lambda: t4a.symmetry.Z2().add(1, 0.5), (), t4a.ChargeError, "must be an integer")
row("ProductSymmetry-one", SY_Product, (SY_U1(),), t4a.ChargeError, "two or more groups")
row("Leg-dim0", SY_Leg, (SY_U1(), {0: 0}), t4a.LegError, "positive integer")
row("Leg-duplicate", SY_Leg, (SY_U1(), [(0, 1), (0, 2)]), t4a.LegError, "appears twice")
row("Leg-dual-str", SY_Leg, (SY_U1(), {0: 1}), t4a.LegError, "dual must be True or False", dual="yes")
row("Leg-sector_dim-missing", lambda: SY_P.dual().sector_dim(3), (), t4a.LegError, "no sector of charge 3")
row("Leg-same_space-bad", lambda: SY_P.same_space(SY_Leg(SY_U1(), {0: -1})), (), t4a.LegError, "positive integer")
row("FusedLeg-empty", SY_FusedLeg, ([],), t4a.LegError, "needs at least one leg")
row("fuse-groups", sy_fuse, (SY_P, SY_Leg(SY_Z2(), {0: 1})), t4a.ChargeError, "only legs of one group fuse")
row("fuse-split-sector", lambda: sy_fuse(SY_P, SY_P).split()[0].sector_dim(7), (), t4a.LegError, "charge 7")
row("fuse-pieces_of-str", lambda: sy_fuse(SY_P, SY_P).pieces_of("x"), (), t4a.ChargeError, "must be an integer")
row(
    "SymmetricTensor-violation",
    t4a.SymmetricTensor,
    ({(1, 1): np.ones((1, 1))}, [SY_P, SY_P]),
    t4a.SymmetryViolationError,
    "carries charge 2",
)
row("SymmetricTensor-legs-not-list", t4a.SymmetricTensor, ({}, SY_P), t4a.StructuredTypeError, "list of Leg")
row(
    "SymmetricTensor-random-empty-sector",
    lambda: t4a.SymmetricTensor.random([SY_P, SY_P.dual()], charge=5),
    (),
    t4a.SymmetryViolationError,
    "carries the charge 5",
)
row(
    "SymmetricTensor-from_dense-asymmetric",
    lambda: t4a.SymmetricTensor.from_dense(np.ones((2, 2)), [SY_P, SY_P.dual()]),
    (),
    t4a.SymmetryViolationError,
    "is not symmetric",
)
row(
    "SymmetricTensor-zeros-dtype",
    lambda: t4a.SymmetricTensor.zeros([SY_P], dtype="int64"),
    (),
    t4a.StructuredTypeError,
    "dtype must be one of",
)
row(
    "SymmetricTensor-allowed_sectors-float",
    lambda: SY_X.allowed_sectors(0.5),
    (),
    t4a.ChargeError,
    "must be an integer",
)
row(
    "SymmetricTensor-fuse_legs-repeat",
    lambda: SY_X.fuse_legs([0], [0, 1]),
    (),
    t4a.StructuredShapeError,
    "exactly once",
)
row("SymmetricTensor-split_legs-plain", lambda: SY_X.split_legs(0), (), t4a.LegError, "is not a fused leg")
row(
    "SymmetricTensor-scale_leg-str",
    lambda: SY_X.scale_leg(0, "s"),
    (),
    t4a.StructuredTypeError,
    "must be a SectorDiagonal",
)
row(
    "SectorDiagonal-sector",
    lambda: t4a.SectorDiagonal(SY_P, {5: [1.0]}).to_vector(),
    (),
    t4a.LegError,
    "no sector of charge 5",
)
row("tensordot-axes", t4a.tensordot, (SY_X, SY_X.conj()), t4a.StructuredShapeError, "axes=5", axes=5)
row("tensordot-same-duality", t4a.tensordot, (SY_M, SY_M.conj()), t4a.SectorMismatchError, "opposite duality", axes=1)
row("symmetric-add-charge", lambda: SY_X + SY_X.conj(), (), t4a.SectorMismatchError, "differs")
row("symmetric-svd-three-legs", t4a.linalg.svd, (SY_X,), t4a.SymmetryError, "needs two legs")
row(
    "symmetric-truncated_svd-nan",
    lambda: t4a.linalg.truncated_svd(SY_M * float("nan"), max_rank=1),
    (),
    tf.linalg.NonFiniteError,
    "NaN",
)


# ---- issue 27: parameter scans (ScanTask, scan); every row fails before a cluster starts -------
SC_T = t4a.ScanTask("tfim", params={"L": 6}, settings={"max_bond": 4})
SC_G = {"g": [0.5, 1.0]}
row("ScanTask-model", t4a.ScanTask, ("potts",), t4a.InvalidOptionError, "valid models: heisenberg, xxz, tfim")
row("ScanTask-algorithm", t4a.ScanTask, ("tfim",), t4a.InvalidOptionError, "valid algorithms: dmrg", algorithm="tebd")
row("ScanTask-params-list", t4a.ScanTask, ("tfim", [1, 2]), t4a.Tensor4allTypeError, "params must be a mapping")
row(
    "ScanTask-param-of-other-model", t4a.ScanTask, ("tfim", {"Jz": 1.0}), t4a.InvalidOptionError, "valid names: L, J, g"
)
row(
    "ScanTask-setting-chi",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "valid names: max_bond",
    settings={"chi": 4},
)
row("ScanTask-max_bond-0", t4a.ScanTask, ("tfim",), t4a.BondDimensionError, "max_bond", settings={"max_bond": 0})
row("ScanTask-g-nan", t4a.ScanTask, ("tfim", {"g": float("nan")}), t4a.NonFiniteError, "g")
row(
    "ScanTask-conserve",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "valid values: None, auto",
    settings={"conserve": "U1"},
)
row(
    "ScanTask-conserve-Sz-tfim",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "tfim conserves the parity, not Sz",
    settings={"conserve": "Sz"},
)
row(
    "ScanTask-observable-S+",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "not a Hermitian operator",
    observables=("S+",),
)
row(
    "ScanTask-observable-syntax",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "is not 'OP', 'OP@SITE'",
    observables=("X@a",),
)
row(
    "ScanTask-observable-int",
    t4a.ScanTask,
    ("tfim",),
    t4a.Tensor4allTypeError,
    "an observable is a string",
    observables=(3,),
)
row("ScanTask-observable-twice", t4a.ScanTask, ("tfim",), t4a.InvalidOptionError, "given twice", observables=("X", "X"))
row(
    "ScanTask-call-no-L",
    lambda: t4a.ScanTask("tfim")(g=0.5),
    (),
    t4a.InvalidOptionError,
    "the chain length L is neither",
)
row("ScanTask-call-unknown", lambda: SC_T(chi=3), (), t4a.InvalidOptionError, "not a parameter of tfim")
row("scan-task-not-callable", t4a.scan, ("tfim", SC_G), t4a.Tensor4allTypeError, "task must be a ScanTask")
row("scan-grid-empty", t4a.scan, (SC_T, {}), t4a.InvalidOptionError, "the grid is empty")
row("scan-grid-scalar", t4a.scan, (SC_T, {"g": 0.5}), t4a.Tensor4allTypeError, "must be a list of values")
row("scan-grid-nan", t4a.scan, (SC_T, {"g": [float("nan")]}), t4a.InvalidOptionError, "not a finite number")
row("scan-grid-twice", t4a.scan, (SC_T, {"g": [1, 1.0]}), t4a.InvalidOptionError, "is given twice")
row(
    "scan-grid-points-differ",
    t4a.scan,
    (SC_T, [{"g": 1.0}, {"J": 1.0}]),
    t4a.InvalidOptionError,
    "every point names the same parameters",
)
row(
    "scan-grid-result-column",
    t4a.scan,
    (SC_T, {"energy": [1.0]}),
    t4a.InvalidOptionError,
    "has the name of a result column",
)
row(
    "scan-grid-fixed-and-scanned",
    t4a.scan,
    (SC_T, {"L": [4, 6]}),
    t4a.InvalidOptionError,
    "scan it or fix it, not both",
)
row("scan-grid-bad-value", t4a.scan, (SC_T, {"g": [0.5, "a"]}), t4a.Tensor4allTypeError, "g must be")
row(
    "scan-retries", t4a.scan, (SC_T, SC_G), t4a.InvalidOptionError, "retries must be a non-negative integer", retries=-1
)
row(
    "scan-workers-with-client",
    t4a.scan,
    (SC_T, SC_G),
    t4a.InvalidOptionError,
    "an existing cluster",
    workers=2,
    client="tcp://127.0.0.1:1",
)
row(
    "scan-out-extension",
    t4a.scan,
    (SC_T, SC_G),
    t4a.UnsupportedFileFormatError,
    "valid extensions: .parquet, .arrow",
    out="scan.csv",
)
row(
    "scan-out-missing-directory",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "does not exist",
    out="/nonexistent-dir/scan.parquet",
)
row("scan-callback", t4a.scan, (SC_T, SC_G), t4a.Tensor4allTypeError, "callback must be a callable", callback=3)


# ---- issue 26: tensor cross interpolation (tensor4all.tci) -------
TC = t4a.tci
TC_R = TC.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2, 3], batched=True)
TC_A = t4a.MPS.random(3, d=2, bond_dim=2)
row(
    "crossinterpolate2-local_dims-zero",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 0]),
    TC.LocalDimsError,
    "local_dims[1] is 0",
)
row("crossinterpolate2-f", TC.crossinterpolate2, (None, [2, 2]), TC.TCITypeError, "f must be callable")
row(
    "crossinterpolate2-tolerance",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "tolerance must be a finite number > 0",
    tolerance=0.0,
)
row(
    "crossinterpolate2-pivot-range",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2], [[0, 2]]),
    TC.MultiIndexOutOfRangeError,
    "entry 2 at site 1, outside 0 .. 1",
)
row(
    "crossinterpolate2-nan",
    TC.crossinterpolate2,
    (lambda i: float("nan"), [2, 2]),
    TC.NonFiniteValueError,
    "returned nan at the multi-index [0, 0]",
)
row(
    "crossinterpolate2-batched-shape",
    TC.crossinterpolate2,
    (lambda i: np.ones((len(i), 2)), [2, 2]),
    TC.FunctionShapeError,
    "an array of shape (1,)",
    batched=True,
)
row(
    "crossinterpolate2-pivot_search",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "'full', 'rook'",
    pivot_search="maxvol",
)
row(
    "crossinterpolate2-threads-negative",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "crossinterpolate2: threads must be None",
    threads=-1,
)
row(
    "crossinterpolate2-threads-bool",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCITypeError,
    "crossinterpolate2: threads must be None",
    threads=True,
)
row(
    "interpolant-values",
    TC.interpolant,
    (TC_R, np.ones(2)),
    t4a.DimensionMismatchError,
    f"must have shape ({len(TC_R.points)},)",
)
row("tt_evaluate-range", TC.tt_evaluate, (TC_A, [0, 0, 5]), TC.MultiIndexOutOfRangeError, "entry 5 at site 2")
row(
    "tt_sum-weights", TC.tt_sum, (TC_A, [np.ones(3)] * 3), t4a.DimensionMismatchError, "weights[0] must have shape (2,)"
)
row("tt_add-dims", TC.tt_add, (TC_A, t4a.MPS.random(3, d=3)), t4a.DimensionMismatchError, "local dimensions")
row("tt_multiply-type", TC.tt_multiply, (TC_A, np.ones((1, 2, 1))), TC.TCITypeError, "takes a tensor4all.MPS")


# ---- issue 26: quantics grids, quantics tensor trains and operators -------
QG = t4a.quantics
QG_G = QG.Grid(4)
QG_G2 = QG.Grid(3, dims=2, unfolding="interleaved")
QG_Q = QG.QuanticsTT.from_values(np.arange(16.0), QG_G)
QG_HUGE = QG.QuanticsTT(t4a.MPS([np.full((1, 2, 1), 1e307)] + [np.ones((1, 2, 1))] * 39), QG.Grid(40))
row("Grid-R0", QG.Grid, (0,), t4a.BondDimensionError, "R (bits per dimension)")
row("Grid-R63", QG.Grid, (63,), t4a.InvalidOptionError, "at most 62")
row("Grid-unfolding", QG.Grid, (4,), t4a.InvalidOptionError, "'fused', 'interleaved'", unfolding="zigzag")
row("Grid-lower-above-upper", QG.Grid, (4, 1.0, 0.0), t4a.InvalidOptionError, "lower must be below upper")
row("Grid-lower-nan", QG.Grid, (4, float("nan")), t4a.NonFiniteError, "lower must be finite")
row("Grid-upper-str", QG.Grid, (4, 0.0, "1"), t4a.Tensor4allTypeError, "upper must be a number or a sequence")
row("Grid-bounds-length", QG.Grid, (4, [0.0], 1.0), t4a.DimensionMismatchError, "must have 2 entries", dims=2)
row("Grid-include_endpoint-int", QG.Grid, (4,), t4a.Tensor4allTypeError, "True or False", include_endpoint=1)
row("Grid-width-overflow", QG.Grid, (4, -1e308, 1e308), t4a.ValueRangeError, "leaves the float range")
row("Grid.grididx_to_quantics-range", QG_G.grididx_to_quantics, (16,), QG.GridRangeError, "outside 0..15")
row("Grid.grididx_to_quantics-float", QG_G.grididx_to_quantics, (1.5,), t4a.Tensor4allTypeError, "must be an integer")
row("Grid.grididx_to_quantics-2d-int", QG_G2.grididx_to_quantics, (3,), t4a.Tensor4allTypeError, "sequence of 2 values")
row("Grid.quantics_to_grididx-digit", QG_G.quantics_to_grididx, ((0, 2, 0, 0),), QG.GridRangeError, "digit 2 at site 1")
row(
    "Grid.quantics_to_grididx-length",
    QG_G.quantics_to_grididx,
    ((0, 1),),
    t4a.DimensionMismatchError,
    "must have 4 entries",
)
row(
    "Grid.grididx_to_origcoord-dtype",
    QG_G.grididx_to_origcoord,
    (3,),
    t4a.InvalidOptionError,
    "float64 or longdouble",
    dtype=np.int64,
)
row("Grid.origcoord_to_grididx-outside", QG_G.origcoord_to_grididx, (1.5,), QG.GridRangeError, "outside [0.0, 1.0]")
row("Grid.origcoord_to_grididx-nan", QG_G.origcoord_to_grididx, (float("nan"),), t4a.NonFiniteError, "must be finite")
row(
    "Grid.quantics_to_origcoord-array-shape",
    QG_G.quantics_to_origcoord,
    (np.zeros((2, 3), np.int64),),
    t4a.DimensionMismatchError,
    "(n, 4) array",
)
row(
    "Grid.origcoord_to_quantics-str",
    QG_G.origcoord_to_quantics,
    ("0.5",),
    t4a.Tensor4allTypeError,
    "must be a real number",
)
row("Grid.sites_of-dim", QG_G.sites_of, (1,), QG.GridRangeError, "dimensions 0..0")
row("QuanticsTT-not-mps", QG.QuanticsTT, ("x", QG_G), t4a.Tensor4allTypeError, "expected an MPS")
row("QuanticsTT-dims", QG.QuanticsTT, (t4a.MPS.random(3), QG_G), t4a.DimensionMismatchError, "needs [2, 2, 2, 2]")
row(
    "QuanticsTT.from_values-shape",
    QG.QuanticsTT.from_values,
    (np.ones(8), QG_G),
    t4a.DimensionMismatchError,
    "expected values of shape (16,)",
)
row("QuanticsTT.evaluate-outside", QG_Q.evaluate, (-0.5,), QG.GridRangeError, "outside [0.0, 1.0]")
row("QuanticsTT.evaluate_index-negative", QG_Q.evaluate_index, (-1,), QG.GridRangeError, "outside 0..15")
row(
    "QuanticsTT.evaluate_quantics-length",
    QG_Q.evaluate_quantics,
    ((0,),),
    t4a.DimensionMismatchError,
    "must have 4 entries",
)
row("QuanticsTT.sum-overflow", QG_HUGE.sum, (), t4a.ValueRangeError, "leaves the float range")
row("QuanticsTT.integral-overflow", QG_HUGE.integral, (), t4a.ValueRangeError, "leaves the float range")
row("QuanticsTT.to_values-memory", QG_HUGE.to_values, (), t4a.Tensor4allMemoryError, "more than this machine")
row("shift_mpo-offset-float", QG.shift_mpo, (4, 1.5), t4a.Tensor4allTypeError, "offset must be an integer")
row(
    "shift_mpo-boundary",
    QG.shift_mpo,
    (4, 1),
    t4a.InvalidOptionError,
    "'periodic', 'antiperiodic', 'open'",
    boundary="dirichlet",
)
row("shift_mpo-open-off-grid", QG.shift_mpo, (4, 16), t4a.InvalidOptionError, "off the grid", boundary="open")
row("shift_mpo-grid-str", QG.shift_mpo, ("x", 1), t4a.Tensor4allTypeError, "a quantics Grid or a number of bits")
row("shift_mpo-dim", QG.shift_mpo, (QG_G2, 1), QG.GridRangeError, "dimensions 0..1", dim=2)
row("flip_mpo-boundary", QG.flip_mpo, (4,), t4a.InvalidOptionError, "boundary must be one of", boundary=1)
row("fourier_mpo-sign", QG.fourier_mpo, (4,), t4a.InvalidOptionError, "sign must be -1", sign=2)
row("fourier_mpo-rtol", QG.fourier_mpo, (4,), t4a.InvalidOptionError, "fourier_mpo: rtol", rtol=-1.0)
row(
    "reverse_bits-interleaved",
    QG.reverse_bits,
    (QG.QuanticsTT.from_values(np.ones((8, 8)), QG_G2),),
    t4a.InvalidOptionError,
    "use a fused grid",
)
row("reverse_bits-str", QG.reverse_bits, ("x",), t4a.Tensor4allTypeError, "expects a dense MPS")
row("quantics-apply-sites", QG.apply, (QG.shift_mpo(3, 1), QG_Q), t4a.DimensionMismatchError, "the MPO acts on 3 sites")
row("quantics-apply-order", QG.apply, (QG_Q.mps, QG.shift_mpo(4, 1)), t4a.Tensor4allTypeError, "MPO first")
row("quantics-apply-max_bond", QG.apply, (QG.shift_mpo(4, 1), QG_Q), t4a.BondDimensionError, "max_bond", max_bond=0)
row("quantics_interpolate-f", QG.quantics_interpolate, (None, QG_G), t4a.Tensor4allTypeError, "must be a callable")
row(
    "quantics_interpolate-grid",
    QG.quantics_interpolate,
    (np.sin, 4),
    t4a.Tensor4allTypeError,
    "expected a quantics Grid",
)
row(
    "quantics_interpolate-argument",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    t4a.InvalidOptionError,
    "'coordinate', 'index'",
    argument="x",
)
row(
    "quantics_interpolate-batched",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    t4a.Tensor4allTypeError,
    "batched must be True or False",
    batched=1,
)
row(
    "quantics_interpolate-initial_points",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    QG.GridRangeError,
    "outside 0..15",
    initial_points=[3, 16],
)
row(
    "quantics_interpolate-tolerance",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    t4a.InvalidOptionError,
    "tolerance must be a finite number > 0",
    tolerance=0.0,
)
row(
    "quantics_interpolate-nan",
    QG.quantics_interpolate,
    (lambda x: 1 / (x - 0.5) if x != 0.5 else float("nan"), QG_G),
    t4a.NonFiniteError,
    "at the coordinate 0.5",
)
row(
    "QuanticsTT.interpolant-no-pivots", QG_Q.interpolant, (np.sin,), t4a.InvalidOptionError, "from quantics_interpolate"
)

# ---- issue 54: tree tensor networks (tensor4all.trees) -------
TR = t4a.trees
TR_T = TR.Tree([(0, 1), (1, 2), (1, 3)])
TR_P = TR.TreeTN.random(TR_T, 2, 2)
TR_OTHER = TR.TreeTN.random(TR.Tree.path(4), 2, 2)
TR_H = TR.tree_heisenberg(TR_T)
TR_Q = TR.quantics_tree(2, 3)
row("Tree-cycle", TR.Tree, ([(0, 1), (1, 2), (2, 0)],), TR.TreeCycleError, "closes a cycle")
row("Tree-self-loop", TR.Tree, ([(0, 0)],), TR.TreeCycleError, "self-loop")
row("Tree-repeated-edge", TR.Tree, ([(0, 1), (1, 0)],), TR.TreeCycleError, "closes a cycle")
row("Tree-disconnected", TR.Tree, ([(0, 1), (2, 3)],), TR.DisconnectedTreeError, "not connected to node 0")
row("Tree-isolated-node", TR.Tree, ([(0, 1)], 3), TR.DisconnectedTreeError, "a tree needs 2")
row("Tree-edges-str", TR.Tree, ("01",), t4a.Tensor4allTypeError, "sequence of node pairs")
row("Tree-edge-triple", TR.Tree, ([(0, 1, 2)],), t4a.Tensor4allTypeError, "pair of node numbers")
row("Tree-negative-node", TR.Tree, ([(0, -1)],), TR.TreeError, "two node numbers >= 0")
row("Tree.from_parents-two-roots", TR.Tree.from_parents, ([-1, -1, 0],), TR.DisconnectedTreeError, "exactly one root")
row("Tree.from_parents-cycle", TR.Tree.from_parents, ([-1, 2, 1],), TR.TreeCycleError, "closes a cycle")
row("Tree.from_prufer-label", TR.Tree.from_prufer, ([0, 7],), TR.TreeError, "labels must lie in 0..3")
row("Tree.from_prufer-str", TR.Tree.from_prufer, ("01",), t4a.Tensor4allTypeError, "sequence of node labels")
row("Tree.path-zero", TR.Tree.path, (0,), TR.TreeError, "positive integer")
row("Tree.leg-not-neighbour", TR_T.leg, (0, 2), TR.TreeError, "not a neighbour of node 0")
row("Tree.parents-root", TR_T.parents, (4,), TR.TreeError, "integer in 0..3")
row("Tree.toward-root", TR_T.toward, (-1,), TR.TreeError, "integer in 0..3")
row("Tree.path_between-node", TR_T.path_between, (0, 9), TR.TreeError, "integer in 0..3")
row("Tree.side-not-edge", TR_T.side, (0, 2), TR.TreeError, "is not an edge")
row("Tree.schedule-root", TR_T.schedule, (1.5,), TR.TreeError, "integer in 0..3")
row(
    "TreeTN-node-without-site",
    TR.TreeTN,
    ([(0, 1)], [np.ones((2, 2)), np.ones(2)]),
    TR.MissingSiteError,
    "node 1 has 1 bonds",
)
row(
    "TreeTN-bond-mismatch",
    TR.TreeTN,
    ([(0, 1)], [np.ones((2, 2)), np.ones((3, 2))]),
    TR.TopologyMismatchError,
    "dimension 2 at node 0 but 3 at node 1",
)
row("TreeTN-count", TR.TreeTN, ([(0, 1)], [np.ones((2, 2))]), TR.TopologyMismatchError, "1 tensors for a tree of 2")
row("TreeTN-cycle", TR.TreeTN, ([(0, 1), (1, 2), (0, 2)], [np.ones(2)] * 3), TR.TreeCycleError, "closes a cycle")
row("TreeTN-tree-str", TR.TreeTN, ("tree", []), t4a.Tensor4allTypeError, "a Tree or a list of edges")
row("TreeTN-nan", TR.TreeTN, ([], [np.array([np.nan])]), t4a.NonFiniteError, "tensor 0 holds NaN")
row("TreeTN.random-bond", TR.TreeTN.random, (TR_T, 2, 0), t4a.BondDimensionError, "positive integer")
row("TreeTN.random-dims", TR.TreeTN.random, (TR_T, [2, 2]), TR.TreeError, "one positive integer per node")
row(
    "TreeTN.to_dense-memory",
    lambda: TR.TreeTN.random(TR.Tree.path(80), 2, 1).to_dense(),
    (),
    t4a.Tensor4allMemoryError,
    "TreeTN.to_dense needs",
)
row("TreeTN.evaluate-shape", TR_P.evaluate, (np.zeros((2, 3), dtype=int),), TR.TreeError, "shape (m, 4)")
row("TreeTN.evaluate-range", TR_P.evaluate, (np.array([[0, 0, 2, 0]]),), TR.TreeError, "outside 0..site_dims - 1")
row("TreeTN.canonicalize-node", TR_P.canonicalize, (5,), TR.TreeError, "integer in 0..3")
row("TreeTN.truncate-max_bond", TR_P.truncate, (), t4a.BondDimensionError, "max_bond", max_bond=0)
row("TreeTN.truncate-cutoff", TR_P.truncate, (), TR.TreeError, "cutoff must be a number in [0, 1)", cutoff=-1.0)
row("trees.inner-topology", TR.inner, (TR_P, TR_OTHER), TR.TopologyMismatchError, "different trees")
row("trees.inner-type", TR.inner, (TR_P, np.ones(4)), t4a.Tensor4allTypeError, "expected two TreeTN")
row("trees.add-dims", TR.add, (TR_P, TR.TreeTN.random(TR_T, 3)), TR.TopologyMismatchError, "different site dimensions")
row("TreeOperator-legs", TR.TreeOperator, ([], [np.ones((2, 3))]), TR.TreeError, "two site legs (out, in)")
row(
    "TreeOperator.to_matrix-memory",
    lambda: TR.tree_heisenberg(TR.Tree.path(40)).to_matrix(),
    (),
    t4a.Tensor4allMemoryError,
    "TreeTN.to_dense needs",
)
row("TreeOperator.apply-topology", TR_H.apply, (TR_OTHER,), TR.TopologyMismatchError, "the state lives on")
row("TreeOperator.apply-type", TR_H.apply, (TR_H,), t4a.Tensor4allTypeError, "expected a TreeTN state")
row("tree_operator-node", TR.tree_operator, (TR_T, [(1.0, {7: np.eye(2)})]), TR.TreeError, "names node 7")
row(
    "tree_operator-matrix",
    TR.tree_operator,
    (TR_T, [(1.0, {0: np.eye(3)})]),
    t4a.DimensionMismatchError,
    "expected (2, 2)",
)
row("tree_operator-coefficient", TR.tree_operator, (TR_T, [(np.nan, {0: np.eye(2)})]), t4a.NonFiniteError, "finite")
row("tree_heisenberg-cycle", TR.tree_heisenberg, ([(0, 1), (1, 0)],), TR.TreeCycleError, "closes a cycle")
row("apply_fit-H", TR.apply_fit, (TR_P, TR_P), t4a.Tensor4allTypeError, "must be a TreeOperator", max_bond=2)
row("apply_fit-psi", TR.apply_fit, (TR_H, TR_OTHER), TR.TopologyMismatchError, "does not fit H", max_bond=2)
row("apply_fit-max_bond", TR.apply_fit, (TR_H, TR_P), t4a.BondDimensionError, "max_bond", max_bond=0)
row("tree_linsolve-A", TR.tree_linsolve, (TR_P, TR_P), t4a.Tensor4allTypeError, "must be a TreeOperator")
row("tree_linsolve-b", TR.tree_linsolve, (TR_H, TR_OTHER), TR.TopologyMismatchError, "does not fit A")
row("tree_linsolve-sweeps", TR.tree_linsolve, (TR_H, TR_P), t4a.InvalidOptionError, "sweeps", sweeps=0)
row("tree_dmrg-H", TR.tree_dmrg, (TR_P,), t4a.Tensor4allTypeError, "must be a TreeOperator")
row("tree_dmrg-psi0", TR.tree_dmrg, (TR_H, TR_OTHER), TR.TopologyMismatchError, "does not fit H")
row("tree_dmrg-max_bond", TR.tree_dmrg, (TR_H,), t4a.BondDimensionError, "max_bond", max_bond=0)
row("tree_dmrg-root", TR.tree_dmrg, (TR_H,), TR.TreeError, "integer in 0..3", root=4)
for label, bad, exc in (("negative", -1, t4a.InvalidOptionError), ("float", 1.5, t4a.Tensor4allTypeError)):
    row(f"tree_dmrg-threads-{label}", TR.tree_dmrg, (TR_H,), exc, "threads must be None", threads=bad)
    row(f"apply_fit-threads-{label}", TR.apply_fit, (TR_H, TR_P), exc, "threads must be None", max_bond=2, threads=bad)
    row(f"tree_linsolve-threads-{label}", TR.tree_linsolve, (TR_H, TR_P), exc, "threads must be None", threads=bad)
row(
    "tree_crossinterpolate-tolerance",
    TR.tree_crossinterpolate,
    (np.sum, TR_T, 2),
    t4a.InvalidOptionError,
    "tolerance must lie in (0, 1)",
    tolerance=2.0,
)
row("tree_crossinterpolate-dims", TR.tree_crossinterpolate, (np.sum, TR_T, [2, 2]), TR.TopologyMismatchError, "2 local")
row("tree_crossinterpolate-f", TR.tree_crossinterpolate, (None, TR_T, 2), t4a.Tensor4allTypeError, "callable")
row(
    "tree_crossinterpolate-zero",
    TR.tree_crossinterpolate,
    (lambda i: 0.0, TR_T, 2),
    TR.TreeError,
    "f is zero at 64 random multi-indices",
)
row("quantics_tree-layout", TR.quantics_tree, (3, 4, "zigzag"), t4a.InvalidOptionError, "'tree', 'interleaved'")
row("quantics_tree-R", TR.quantics_tree, (3, 0), t4a.InvalidOptionError, "R must be an integer")
row(
    "tree_quantics_interpolate-layout",
    TR.tree_quantics_interpolate,
    (np.sum, "tree"),
    t4a.Tensor4allTypeError,
    "QuanticsLayout",
)
row(
    "QuanticsLayout.grid_indices-shape", TR_Q.grid_indices, (np.zeros((1, 5), dtype=int),), TR.TreeError, "shape (m, 6)"
)


# ---- issue 21: tenferro.jit -------
def _use_after_donation(use):
    """Donate a fresh tensor to a jitted function, then ``use(h, y)`` it: any use raises."""

    def run():
        h = tf.jit(lambda a: tf.exp(a) * 2.0, donate_argnums=0)
        y = tf.ones((3,))
        h(y)
        return use(h, y)

    return run


for label, use in (
    ("call-again", lambda h, y: h(y)),
    ("op", lambda h, y: tf.exp(y)),
    ("operator", lambda h, y: y * 2.0),
    ("numpy", lambda h, y: y.numpy()),
    ("repr", lambda h, y: repr(y)),
    ("np.asarray", lambda h, y: np.asarray(y)),
    ("grad", lambda h, y: tidu.grad(f1)(y)),
    ("other-jit", lambda h, y: tf.jit(f1)(y)),
):
    row(f"jit-donated-then-{label}", _use_after_donation(use), (), tf.DeletedTensorError, "donated to tenferro.jit")
for kwargs, fragment in (
    ({"static_argnums": "0"}, "static_argnums must be an int"),
    ({"static_argnums": 1.5}, "static_argnums must be an int"),
    ({"static_argnums": 3}, "static_argnums contains 3, but the function takes 1 positional"),
    ({"static_argnames": 3}, "static_argnames must be a str"),
    ({"static_argnames": "n"}, "static_argnames contains 'n', which is not a parameter"),
    ({"donate_argnums": (0, None)}, "donate_argnums must be an int"),
    ({"donate_argnames": "y"}, "donate_argnames contains 'y'"),
    ({"maxsize": -1}, "maxsize must be a non-negative int"),
    ({"maxsize": "64"}, "maxsize must be a non-negative int"),
    ({"static_argnames": "x", "donate_argnums": 0}, "both static and donated"),
    ({"backend": "fast"}, "backend must be one of 'numpy', 'native', 'auto'"),
):
    row(
        "jit-" + ",".join(f"{k}={v!r}" for k, v in kwargs.items()),
        tf.jit,
        (f1,),
        tf.JitArgumentError,
        fragment,
        **kwargs,
    )
from tenferro.jit import compile_report as tf_jit_compile_report  # noqa: E402

row(
    "jit-compile-report-of-a-plain-function",
    tf_jit_compile_report,
    (f1, F),
    tf.JitArgumentError,
    "compile_report: expected a function made by tenferro.jit, got function",
)
row("jit-range-argument", tf.jit(f2), (F, range(3)), tf.JitError, "argument 1 (y) is of type range")
row("jit-object-argument", tf.jit(f2), (F, object()), tf.JitError, "argument 1 (y) is of type object")
row("jit-function-argument", tf.jit(f2), (F, f1), tf.JitError, "argument 1 (y) is of type function")
row(
    "jit-object-in-pytree",
    tf.jit(lambda d: d["a"]),
    ({"a": F, "b": object()},),
    tf.JitError,
    "leaf 1 of argument 0 (d)",
)
row("jit-set-argument", tf.jit(f2), (F, {1, 2}), tf.JitError, "argument 1 (y) is of type set ({1, 2})")
row(
    "jit-function-keyword",
    tf.jit(lambda x, **kw: x),
    (F,),
    tf.JitError,
    "keyword argument 'mode' is of type builtin_function_or_method",
    mode=print,
)
row(
    "jit-static-by-keyword-unhashable",
    tf.jit(lambda x, n: x * n[0], static_argnums=1),
    (F,),
    tf.JitError,
    "keyword argument 'n' is static but unhashable",
    n=[2.0],
)
row("jit-numpy-output", tf.jit(lambda x: np.ones(3)), (F,), tf.JitError, "the output is of type numpy.ndarray")
row("jit-object-output", tf.jit(lambda x: (x, object())), (F,), tf.JitError, "output leaf 1")
row("jit-str-output", tf.jit(lambda x: "done"), (F,), tf.JitError, "the output is of type str")
row(
    "jit-lower-object-argument",
    lambda: tf.jit(f2).lower(F, object()),
    (),
    tf.JitError,
    "argument 1 (y) is of type object",
)
row(
    "jit-lower-donated",
    _use_after_donation(lambda h, y: h.lower(y)),
    (),
    tf.DeletedTensorError,
    "donated to tenferro.jit",
)
row(
    "jit-cache_info-bool-maxsize",
    lambda: tf.jit(f1, maxsize=True).cache_info(),
    (),
    tf.JitArgumentError,
    "maxsize must be a non-negative int",
)


# ---- issue 21: arrow and files -------
# (file rows use a directory made at import; the Arrow rows need pyarrow, the optional 'arrow' extra)
import atexit as _atexit  # noqa: E402
import importlib.util as _importlib_util  # noqa: E402
import shutil as _shutil  # noqa: E402
import tempfile as _tempfile  # noqa: E402


class _BadDLPackProducer:
    def __init__(self, device=(1, 0), error=None):
        self.device, self.error = device, error

    def __dlpack__(self, **kwargs):
        if self.error is not None:
            raise self.error
        return np.ones(2).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


row(
    "from_dlpack-device-None",
    tf.from_dlpack,
    (_BadDLPackProducer(device=None),),
    tf.PlacementError,
    "expected a pair of integers",
)
row(
    "from_dlpack-device-str",
    tf.from_dlpack,
    (_BadDLPackProducer(device=("cpu", 0)),),
    tf.PlacementError,
    "returned ('cpu', 0)",
)
row(
    "from_dlpack-producer-KeyError",
    tf.from_dlpack,
    (_BadDLPackProducer(error=KeyError("x")),),
    tf.PlacementError,
    "cannot import _BadDLPackProducer",
)
row(
    "from_dlpack-copy-int",
    tf.from_dlpack,
    (np.ones(2),),
    tf.TenferroValueError,
    "copy must be None, True or False",
    copy=1,
)
if _importlib_util.find_spec("pyarrow") is not None:
    import pyarrow as _pa

    AF_DIR = _tempfile.mkdtemp(prefix="tenferro-bad-inputs-")
    _atexit.register(_shutil.rmtree, AF_DIR, True)
    AF_T = tf.ones((2, 3))
    AF_GOOD = os.path.join(AF_DIR, "good.arrow")
    tf.save(AF_GOOD, {"a": AF_T, "n": [AF_T, None]})
    AF_COL = tf.arrow.to_arrow([AF_T, None])

    def _af_file(name, data):
        path = os.path.join(AF_DIR, name)
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    AF_EMPTY = _af_file("empty.arrow", b"")
    AF_JUNK = _af_file("junk.arrow", b"hello, not a tensor file")
    with open(AF_GOOD, "rb") as _fh:
        AF_TRUNCATED = _af_file("truncated.arrow", _fh.read()[:100])
    AF_NPZ = os.path.join(AF_DIR, "a.npz")
    np.savez(AF_NPZ, x=np.ones(2))
    AF_FILE = _af_file("plainfile", b"x")
    AF_ENTRY = {"a": AF_T}

    def af(name):
        return os.path.join(AF_DIR, name)

    # paths: wrong type, empty, NUL, missing or unusable directories, names too long
    for label, bad in (("int", 123), ("None", None), ("float", 1.5), ("list", ["x.arrow"])):
        row(f"save-path-{label}", tf.save, (bad, AF_ENTRY), tf.TenferroTypeError, "path must be a str or os.PathLike")
        row(f"load-path-{label}", tf.load, (bad,), tf.TenferroTypeError, "path must be a str or os.PathLike")
    row("save-path-empty", tf.save, ("", AF_ENTRY), tf.TenferroValueError, "the path is empty")
    row("load-path-empty", tf.load, ("",), tf.TenferroValueError, "the path is empty")
    row("save-path-nul", tf.save, (af("a\0b.arrow"), AF_ENTRY), tf.TenferroValueError, "NUL character")
    row("load-path-nul", tf.load, (af("a\0b.arrow"),), tf.TenferroValueError, "NUL character")
    row(
        "save-missing-directory",
        tf.save,
        (af("missing/x.arrow"), AF_ENTRY),
        tf.arrow.TensorFileNotFoundError,
        "missing' does not exist",
    )
    row(
        "save-directory-is-a-file",
        tf.save,
        (os.path.join(AF_FILE, "x.arrow"), AF_ENTRY),
        tf.arrow.TensorFileError,
        "plainfile' is not a directory",
    )
    row("save-path-is-a-directory", tf.save, (AF_DIR, AF_ENTRY), tf.arrow.TensorFileError, "is a directory")
    row(
        "save-name-too-long",
        tf.save,
        (af("a" * 300 + ".arrow"), AF_ENTRY),
        tf.arrow.TensorFileError,
        "is too long (306 bytes",
    )
    if os.path.isdir("/proc/self"):  # a directory where nobody, root included, can create files
        row(
            "save-unwritable-directory",
            tf.save,
            ("/proc/self/x.arrow", AF_ENTRY),
            tf.arrow.TensorFileError,
            "no file can be created in directory '/proc/self'",
        )
    # formats, extensions, compression
    row("save-npz-extension", tf.save, (af("x.npz"), AF_ENTRY), tf.TenferroValueError, "the extension of NumPy .npz")
    row("save-pt-extension", tf.save, (af("x.pt"), AF_ENTRY), tf.TenferroValueError, "the extension of PyTorch")
    row(
        "save-format-contradicts-extension",
        tf.save,
        (af("x.parquet"), AF_ENTRY),
        tf.TenferroValueError,
        "format='arrow' contradicts the extension",
        format="arrow",
    )
    row(
        "save-format-unknown",
        tf.save,
        (af("x.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "unknown format 'hdf5'",
        format="hdf5",
    )
    row(
        "save-compression-unknown",
        tf.save,
        (af("x.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "expected None or one of lz4, zstd",
        compression="snappy",
    )
    row(
        "save-compression-int",
        tf.save,
        (af("x.arrow"), AF_ENTRY),
        tf.TenferroTypeError,
        "codec name or None",
        compression=3,
    )
    # entries and dim_names
    for label, entries, exc, fragment in (
        ("not-a-mapping", [AF_T], tf.TenferroTypeError, "non-empty dict"),
        ("empty", {}, tf.TenferroTypeError, "non-empty dict"),
        ("key-int", {1: AF_T}, tf.TenferroTypeError, "got 1 of type int"),
        ("key-empty", {"": AF_T}, tf.TenferroValueError, "non-empty strings, got ''"),
        ("value-str", {"a": "x"}, tf.TenferroTypeError, "entry 'a' is a str"),
        ("value-ndarray", {"a": np.ones(2)}, tf.TenferroTypeError, "entry 'a' is a ndarray"),
        ("value-list-of-ndarray", {"a": [np.ones(2)]}, tf.TenferroTypeError, "entry 'a': entry 0 is a ndarray"),
        ("value-list-all-None", {"a": [None]}, tf.TenferroValueError, "entry 'a': cannot infer"),
        ("value-0d", {"a": tf.asarray(1.0)}, tf.ShapeError, "entry 'a': 0-d tensors"),
        ("value-bool", {"a": B}, tf.DTypeError, "entry 'a': bool tensors"),
        ("value-plain-arrow", {"a": AF_COL.storage}, tf.TenferroTypeError, "entry 'a': expected an Arrow"),
    ):
        row(f"save-entries-{label}", tf.save, (af("e.arrow"), entries), exc, fragment)
    row(
        "save-dim_names-list",
        tf.save,
        (af("e.arrow"), AF_ENTRY),
        tf.TenferroTypeError,
        "dim_names must be a dict",
        dim_names=["i", "j"],
    )
    row(
        "save-dim_names-unknown",
        tf.save,
        (af("e.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "not entries",
        dim_names={"b": ["i", "j"]},
    )
    row(
        "save-dim_names-reserved",
        tf.save,
        (af("e.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "'re_im' is reserved",
        dim_names={"a": ["i", "re_im"]},
    )
    # load: flags, missing, empty, truncated, foreign files
    for arg in ("mmap", "stack"):
        for bad in ("no", 1, None):
            row(
                f"load-{arg}-{bad!r}",
                tf.load,
                (AF_GOOD,),
                tf.TenferroValueError,
                f"{arg} must be True or False",
                **{arg: bad},
            )
    row("load-missing", tf.load, (af("nope.arrow"),), tf.arrow.TensorFileNotFoundError, "nope.arrow' (No such file")
    row("load-directory", tf.load, (AF_DIR,), tf.arrow.TensorFileError, "cannot open")
    row("load-empty-file", tf.load, (AF_EMPTY,), tf.arrow.TensorFileError, "empty.arrow' is empty (0 bytes)")
    row("load-junk", tf.load, (AF_JUNK,), tf.arrow.TensorFileError, "junk.arrow' is neither an Arrow IPC file")
    row("load-truncated", tf.load, (AF_TRUNCATED,), tf.arrow.TensorFileError, "truncated.arrow' could not be read")
    row("load-npz", tf.load, (AF_NPZ,), tf.arrow.TensorFileError, "looks like a zip archive")
    row("load-stack-with-nulls", tf.load, (AF_GOOD,), tf.TenferroValueError, "column 'n' of", stack=True)
    # to_arrow / from_arrow / tensor_info
    row("to_arrow-batch_axis-bool", tf.arrow.to_arrow, (AF_T,), tf.AxisError, "got the boolean True", batch_axis=True)
    row(
        "to_arrow-dim_names-reserved",
        tf.arrow.to_arrow,
        ([AF_T], ["i", "re_im"]),
        tf.TenferroValueError,
        "'re_im' is reserved",
    )
    row("to_arrow-dim_names-empty", tf.arrow.to_arrow, ([AF_T], ["i", ""]), tf.TenferroValueError, "non-empty strings")
    for arg, bad, fragment in (
        ("stack", "no", "stack must be True or False"),
        ("complex", "no", "complex must be None, True or False"),
        ("copy", 0, "copy must be None, True or False"),
        ("batch_axis", 0, "needs stack=True"),
    ):
        row(f"from_arrow-{arg}-{bad!r}", tf.arrow.from_arrow, (AF_COL,), tf.TenferroValueError, fragment, **{arg: bad})
    row("from_arrow-complex-on-odd-axis", tf.arrow.from_arrow, (AF_COL,), tf.ShapeError, "extent 2", complex=True)
    row("from_arrow-table", tf.arrow.from_arrow, (_pa.table({"x": AF_COL}),), tf.TenferroTypeError, "got Table")
    row(
        "tensor_info-plain-array",
        tf.arrow.tensor_info,
        (AF_COL.storage,),
        tf.TenferroTypeError,
        "expected an Arrow fixed_shape_tensor",
    )


# ---- issue 47: messages that lead to the fix -----------------------------------------------
# (a) tidu.vmap and tenferro (einsum memory_limit, distributed client)
import decimal as _decimal  # noqa: E402

A_X = tf.asarray(np.arange(15.0).reshape(5, 3))
A_Y = tf.asarray(np.arange(5.0))
# 1. integer options take NumPy integers and integral Decimals; what is still refused names the option
row(
    "einsum-memory_limit-fractional-Decimal",
    tf.einsum,
    ("ij,j->i", A_X, F),
    tf.TenferroValueError,
    "memory_limit must be a positive integer number of bytes",
    memory_limit=_decimal.Decimal("1024.5"),
)
row(
    "einsum-memory_limit-integral-float",
    tf.einsum,
    ("ij,j->i", A_X, F),
    tf.TenferroValueError,
    "got 1024.0 (a float: pass int(...))",
    memory_limit=1024.0,
)
row(
    "einsum_slicing-min_slices-np-zero",
    tf.einsum_slicing,
    ("ij,j->i", A_X, F),
    tf.TenferroValueError,
    "min_slices must be a positive integer, got np.int64(0)",
    memory_limit=np.int64(1 << 20),
    min_slices=np.int64(0),
)
# 2. what vmap cannot batch is named with the argument or output and the fix
row(
    "vmap-int-argument-mapped",
    lambda: tidu.vmap(lambda x, n: x * n)(A_X, 3),
    (),
    tidu.UnbatchableError,
    "argument 1 is an int, which vmap cannot map over axis 0",
)
row(
    "vmap-int-argument-fix",
    lambda: tidu.vmap(lambda x, n: x * n)(A_X, 3),
    (),
    tidu.UnbatchableError,
    "pass in_axes=(0, None) to use it unchanged in every example",
)
row(
    "vmap-str-output",
    lambda: tidu.vmap(lambda x: "a")(A_X),
    (),
    tidu.UnbatchableError,
    "vmap's output is a str; vmap returns tensors and numbers",
)
row(
    "vmap-str-output-leaf",
    lambda: tidu.vmap(lambda x: (x, {"s": "a"}))(A_X),
    (),
    tidu.UnbatchableError,
    "vmap's output[1]['s'] is a str",
)
row(
    "vmap-ndarray-argument",
    lambda: tidu.vmap(lambda x: x)(np.ones((5, 3))),
    (),
    tidu.UnbatchableError,
    "argument 0 is a ndarray, which vmap cannot map over axis 0",
)
row(
    "vmap-list-argument",
    lambda: tidu.vmap(lambda x: x)([1.0, 2.0]),
    (),
    tidu.UnbatchableError,
    "argument 0 is a list, and vmap maps each of its entries separately",
)
row(
    "vmap-number-output-no-argument",
    lambda: tidu.vmap(lambda: 1.5, in_axes=None, axis_size=3)(),
    (),
    tidu.UnbatchableError,
    "no argument's type can hold a number",
)
# 3. keyword arguments are mapped over their axis 0 (JAX); one that cannot be says so
row(
    "vmap-keyword-int",
    lambda: tidu.vmap(lambda x, b: x * b)(A_X, b=3),
    (),
    tidu.UnbatchableError,
    "keyword argument 'b' is an int, which vmap cannot map over axis 0 (keyword arguments are always mapped",
)
row(
    "vmap-keyword-0d",
    lambda: tidu.vmap(lambda x, b: x * b)(A_X, b=tf.asarray(2.0)),
    (),
    tidu.UnbatchableError,
    "keyword argument 'b' has no axes",
)
row(
    "vmap-keyword-size",
    lambda: tidu.vmap(lambda x, b: x[0] * b)(A_X, b=tf.ones((4,))),
    (),
    tidu.InvalidArgumentError,
    "argument 0: 5, keyword argument 'b': 4",
)
# 4. an axis_size beyond memory (10**13 examples: past any address space) is the project's memory error
row(
    "vmap-axis_size-out-of-memory",
    lambda: tidu.vmap(lambda x: x, in_axes=None, axis_size=10**13)(A_X),
    (),
    tf.TenferroMemoryError,
    "cannot allocate 1200000000000000 bytes (1.07 PiB) to broadcast a float64 tensor of "
    "shape (5, 3) over axis_size=10000000000000",
)
row(
    "broadcast_to-out-of-memory",
    tf.broadcast_to,
    (F, (10**13, 3)),
    tf.TenferroMemoryError,
    "broadcast_to: cannot allocate 240000000000000 bytes",
)
# 5. a closed Dask client is refused before any work
if _importlib_util.find_spec("distributed") is not None:
    import tenferro.distributed as _td  # noqa: E402

    def _einsum_on_closed_client():
        import distributed

        client = distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0")
        client.close()
        return _td.einsum("ij,j->i", A_X, F, client=client)

    row(
        "distributed.einsum-closed-client",
        _einsum_on_closed_client,
        (),
        _td.DaskClientError,
        "the Dask client is closed",
    )
    row(
        "distributed.einsum-closed-client-fix",
        _einsum_on_closed_client,
        (),
        _td.DaskClientError,
        "pass an open distributed.Client, or client=None",
    )
    row(
        "distributed.einsum-tasks-float",
        _td.einsum,
        ("ij,j->i", A_X, F),
        tf.TenferroValueError,
        "tasks must be a positive integer",
        tasks=2.5,
    )
# end (a)

# (b) scans and the CLI's shared checks before work starts
SB_DIR = _tempfile.mkdtemp(prefix="t4a-scan-bad-inputs-")
_atexit.register(_shutil.rmtree, SB_DIR, True)
SB_AS_DIR = os.path.join(SB_DIR, "d.parquet")  # a directory with a table's name
os.mkdir(SB_AS_DIR)


class _SBBrokenTask(t4a.ScanTask):
    """A ScanTask whose run ends in a NaN observable (a run that broke down numerically)."""

    def _results(self, point):
        row = super()._results(point)
        row["X"] = float("nan")
        return row


# 2. a task is checked when built: the observables' sites on its chain, their operators, its settings together
row(
    "ScanTask-observable-site-out-of-range",
    t4a.ScanTask,
    ("tfim", {"L": 6}),
    t4a.SiteOutOfRangeError,
    "observable 'X@99': site 99 is outside the chain of L = 6 sites; valid sites: 0 .. 5, or -6 .. -1",
    observables=("X@99",),
)
row(
    "ScanTask-observable-negative-site",
    t4a.ScanTask,
    ("tfim", {"L": 6}),
    t4a.SiteOutOfRangeError,
    "observable 'Z@0*Z@-7': site -7 is outside the chain of L = 6 sites",
    observables=("Z@0*Z@-7",),
)
row(
    "ScanTask-observable-unknown-operator",
    t4a.ScanTask,
    ("heisenberg", {"L": 4}),
    t4a.UnknownOperatorError,
    "'X' is not a Hermitian operator of the model's local space 'spin-1/2' (it has no such operator); valid "
    "operators: Id, Sz, Sx, Sy",
    observables=("X",),
)
row(
    "ScanTask-conserve-N",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "heisenberg conserves Sz, not N; conserve='N'; valid values: None, 'none', 'auto', 'Sz'",
    settings={"conserve": "N"},
)
row(
    "ScanTask-sector-without-conserve",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "sector=0.5 needs conserve=... (the charge whose sector it names): give conserve='Sz'",
    settings={"conserve": "none", "sector": 0.5},
)
row(
    "ScanTask-conserved-complex",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "conserve='Sz' runs in float64 (from a real start state); drop dtype='complex128'",
    settings={"conserve": "Sz", "dtype": "complex128"},
)
# 4. a NaN or infinite result is a typed error (scan records the point as failed, with this text)
row(
    "ScanTask-call-nan-observable",
    lambda: _SBBrokenTask("tfim", {"L": 4}, settings={"max_bond": 2, "sweeps": 1}, observables=("X",))(g=1.0),
    (),
    t4a.NonFiniteError,
    "ScanTask: the observable 'X' is nan, not a finite number: the run broke down numerically",
)
# 1. every point is checked as dmrg checks a run (its own checks of the Hamiltonian and the sector), before any runs
row(
    "scan-point-site-out-of-range",
    t4a.scan,
    (t4a.ScanTask("tfim", settings={"max_bond": 4}, observables=("X@5",)), {"L": [8, 4]}),
    t4a.SiteOutOfRangeError,
    "scan: the point L=4: observable 'X@5': site 5 is outside the chain of L = 4 sites",
)
row(
    "scan-point-sector-unreachable",
    t4a.scan,
    (t4a.ScanTask("heisenberg", settings={"conserve": "Sz", "sector": 0.5}), {"L": [5, 4]}),
    t4a.SymmetryViolationError,
    "scan: the point L=4: dmrg: the sector Sz = 0.5 has no states on this chain of 4 sites",
)
row(
    "scan-point-sector-unreachable-fix",
    t4a.scan,
    (t4a.ScanTask("heisenberg", settings={"conserve": "Sz", "sector": 0.5}), {"L": [5, 4]}),
    t4a.SymmetryViolationError,
    "give a sector that the chain of every point reaches, or none",
)
row(
    "scan-point-coupling-beyond-range",
    t4a.scan,
    (SC_T, {"g": [1.0, 1e200]}),
    t4a.ValueRangeError,
    "scan: the point g=1e+200: dmrg: the Hamiltonian's scale",
)
row(
    "scan-point-conserve-N",
    t4a.scan,
    (t4a.ScanTask("heisenberg", {"L": 4}), {"conserve": ["Sz", "N"]}),
    t4a.InvalidOptionError,
    "scan: the point conserve=N: heisenberg conserves Sz, not N",
)
row(
    "scan-point-sector-needs-conserve",
    t4a.scan,
    (t4a.ScanTask("heisenberg", {"L": 4}, settings={"sector": 0.0}), {"conserve": ["Sz", "none"]}),
    t4a.InvalidOptionError,
    "scan: the point conserve=none: sector=0.0 needs conserve=",
)
row(
    "scan-point-auto-finds-no-charge",
    t4a.scan,
    (t4a.ScanTask("tfim", {"L": 4}, settings={"conserve": "auto", "sector": 1}), {"g": [1.0]}),
    t4a.InvalidOptionError,
    "conserve='auto' found no charge that the Hamiltonian conserves; give conserve='Sz' (heisenberg/xxz) or "
    "'parity' (tfim)",
)
# 3. the output is checked as the command-line programs check theirs (one helper), before any point runs
row(
    "scan-out-is-a-directory",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "is a directory; give a file name",
    out=SB_AS_DIR,
)
row(
    "scan-out-name-too-long",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "is too long (at most",
    out=os.path.join(SB_DIR, "a" * 300 + ".parquet"),
)
row(
    "scan-out-missing-directory-fix",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "does not exist; create it or give a path in an existing directory",
    out=os.path.join(SB_DIR, "no", "s.arrow"),
)
if os.path.isdir("/proc/self"):  # a directory where nobody, root included, can create files
    row(
        "scan-out-unwritable-directory",
        t4a.scan,
        (SC_T, SC_G),
        t4a.ScanFileIOError,
        "cannot write in directory '/proc/self': no file can be created there",
        out="/proc/self/scan.parquet",
    )

# 'tensor4all scan' refuses the same with exit 2 before any point runs (header "SCAN  "), nothing written
SCAN_CLI_ROWS = [
    ("observable-site", ["--g", "1,2", "--observables", "X@99"], "site 99 is outside the chain of L = 6 sites"),
    ("observable-site-scanned-L", ["--L", "4,8", "--observables", "X@5"], "the point L=4: observable 'X@5'"),
    (
        "sector-unreachable",
        ["--model", "heisenberg", "--L", "4,5", "--sz", "0.5"],
        "the point L=4: dmrg: the sector Sz = 0.5 has no states",
    ),
    ("coupling-beyond-range", ["--g", "1,1e200"], "the point g=1e+200"),
]
if os.path.isdir("/proc/self"):
    SCAN_CLI_ROWS += [
        (
            "out-unwritable",
            ["--g", "1,2", "--out", "/proc/self/s.parquet"],
            "argument --out: out='/proc/self/s.parquet': cannot write in directory",
        ),
        (
            "plot-unwritable",
            ["--g", "1,2", "--plot", "/proc/self/s.png"],
            "argument --plot: cannot write in directory '/proc/self'",
        ),
    ]


@pytest.mark.parametrize("name,args,fragment", SCAN_CLI_ROWS, ids=[r[0] for r in SCAN_CLI_ROWS])
def test_cli_scan_bad_arguments(name, args, fragment, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "scan", "--model", "tfim", "--L", "6", "--max-bond", "4", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-500:])
    assert fragment in proc.stderr, (name, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr and "SCAN  " not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc/self: no file can be created there")
@pytest.mark.parametrize(
    "command,args",
    [
        ("dmrg", ["--json"]),
        ("evolve", ["--t-final", "0.1", "--json"]),
        ("scan", ["--model", "tfim", "--g", "1,2", "--out"]),
    ],
    ids=["dmrg", "evolve", "scan"],
)
def test_cli_outputs_share_one_check(command, args, tmp_path):
    """dmrg, evolve and scan refuse an output where no file can be created with one message."""
    path = "/proc/self/out." + ("parquet" if command == "scan" else "json")
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", command, "--L", "6", *args, path],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, (command, proc.stderr[-500:])
    assert (
        "cannot write in directory '/proc/self': no file can be created there (No such file or directory); "
        "give a path in a writable directory"
    ) in proc.stderr, proc.stderr[-500:]
    assert list(tmp_path.iterdir()) == []


# end (b)

# (c) TCI, quantics and structured einsum
C_V = SY_Leg(SY_U1(), {-1: 2, 0: 3, 1: 2})
C_B = t4a.SymmetricTensor.random([C_V, C_V.dual()], charge=0, seed=1)
C_RES = TC.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [4, 4, 4], batched=True)
C_NAN = np.where(np.arange(len(C_RES.points)) == 2, np.nan, 1.0 + C_RES.points.sum(axis=1))
# 'ab,ab->ab' (batch labels, elementwise like b * b) falls back to dense; a label contracted
# beside a batch label is still checked
row(
    "einsum-symmetric-batch-and-contracted-non-dual",
    t4a.einsum,
    ("ab,ab->a", C_B, C_B),
    t4a.SectorMismatchError,
    "label 'b' (leg 1 of operand 0, leg 1 of operand 1) joins two dual legs",
)
row(
    "interpolant-values-nan",
    TC.interpolant,
    (C_RES, C_NAN),
    TC.NonFiniteValueError,
    f"interpolant: values[2] is nan, the value at result.points[2] = {C_RES.points[2].tolist()}",
)
row(
    "tci-crossinterpolate2-tolerance-relative-2",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "tolerance must be a finite number > 0 and < 1 (it is relative to max|f|",
    tolerance=2,
)
row(
    "tci-crossinterpolate2-tolerance-absolute-inf",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "(an absolute error with normalize_error=False), got inf",
    tolerance=float("inf"),
    normalize_error=False,
)
row(
    "quantics_interpolate-tolerance-relative-1",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    TC.TCIOptionError,
    "quantics_interpolate: tolerance must be a finite number > 0 and < 1",
    tolerance=1.0,
)
# quantics_interpolate of a traced parameter works under tidu.grad (tests/tensor4all/test_quantics.py);
# under tenferro.jit there are no values to search pivots on: the message names the supported way
row(
    "quantics_interpolate-under-jit",
    tf.jit(lambda th: QG.quantics_interpolate(lambda x: tf.exp(-th * x), QG_G).integral()),
    (tf.asarray(1.0),),
    t4a.NotDifferentiableError,
    "qtt.interpolant(lambda x: f(x, theta)) inside (QuanticsTT.interpolant)",
)
row(
    "tci-crossinterpolate2-under-vmap",
    tidu.vmap(lambda th: TC.tt_sum(TC.crossinterpolate2(lambda i: tf.exp(-th * float(i.sum())), [2, 2]).tt)),
    (tf.asarray([1.0, 2.0]),),
    t4a.NotDifferentiableError,
    "tci.interpolant(res, f(res.points, theta)) inside",
)
# end (c)


# (d) sites, DMRG, time evolution, truncation cutoff
def _h_of_changing_length(t):
    return models.heisenberg(4 if t < 0.1 else 5)


_D_PSI4 = t4a.MPS.random(4, bond_dim=2, seed=0)
_D_HOP = t4a.OpSum()
for _i in range(3):
    _D_HOP += (1.0, "S+", _i, "S-", _i + 1)  # no Hermitian conjugate
row(
    "product_state-no-default-space-d4",
    t4a.MPS.product_state,
    ([1, 2, 3, 0],),
    t4a.InvalidOptionError,
    "there is no default local space of dimension 4",
    d=4,
    conserve="N,Sz",
)
row(
    "product_state-names-the-space-with-the-charge",
    t4a.MPS.product_state,
    ([1, 2, 3, 0],),
    t4a.InvalidOptionError,
    "pass local='electron' (d = 4)",
    d=4,
    conserve="N,Sz",
)
row(
    "product_state-d-against-local",
    t4a.MPS.product_state,
    ([0, 2],),
    t4a.DimensionMismatchError,
    "drop d= (local= sets it)",
    d=2,
    local="spin-1",
)
row(
    "dmrg-conserving-mpo-dense-psi0",
    t4a.dmrg,
    (models.heisenberg(4, conserve="Sz"), _D_PSI4),
    t4a.InvalidOptionError,
    "(the MPO, built with conserve='Sz')",
    max_bond=8,
)
row(
    "dmrg-conserving-mpo-dense-psi0-fix",
    t4a.dmrg,
    (models.heisenberg(4, conserve="Sz"), _D_PSI4),
    t4a.InvalidOptionError,
    "or conserve='none' to run dense from this psi0",
    max_bond=8,
)
row(
    "double_occupancy-spin-state",
    MS.double_occupancy,
    (t4a.MPS.random(4, bond_dim=2),),
    t4a.InvalidOptionError,
    "needs a state on sites of the space 'electron' (d = 4)",
)
for _name, _evolve in (("tdvp", t4a.tdvp), ("tebd", t4a.tebd)):
    row(
        f"{_name}-H(t)-changes-length",
        _evolve,
        (_h_of_changing_length, _D_PSI4, 0.2, 0.05),
        t4a.DimensionMismatchError,
        "returned an MPO of 5 sites at t = 0.125, but the state has 4 sites",
    )
    row(
        f"{_name}-dt-subnormal",
        _evolve,
        (models.heisenberg(4), _D_PSI4, 0.1, 5e-324),
        t4a.ValueRangeError,
        "is too small for t = 0.1",
    )
row(
    "tebd-real-time-non-hermitian",
    t4a.tebd,
    (t4a.MPO.from_opsum(_D_HOP, 4), t4a.MPS.product_state([0, 1, 0, 1]), 0.1, 0.05),
    t4a.NonHermitianError,
    "pass allow_nonhermitian=True",
)
row(
    "truncated_svd-cutoff-two",
    la.truncated_svd,
    (M,),
    tf.TenferroValueError,
    "cutoff (the discarded weight) must be a real number in [0, 1)",
    cutoff=2,
)
row(
    "t4a-truncated_svd-cutoff-two",
    t4a.linalg.truncated_svd,
    (M,),
    tf.TenferroValueError,
    "cutoff (the discarded weight) must be a real number in [0, 1)",
    cutoff=2,
)
row(
    "truncation_rank-cutoff-two",
    la.truncation_rank,
    ([1.0, 0.5],),
    tf.TenferroValueError,
    "cutoff (the discarded weight) must be a real number in [0, 1)",
    cutoff=2,
)
row(
    "truncated_svd-rtol-one",
    la.truncated_svd,
    (M,),
    tf.TenferroValueError,
    "rtol (relative to the largest singular value) must be a real number in [0, 1)",
    rtol=1.0,
)
# end (d)


BASES = {"tenferro": tf.TenferroError, "tidu": tidu.TiduError, "tensor4all": t4a.Tensor4allError}


def _base(exc: type) -> type:
    return BASES[exc.__module__.split(".")[0]]


@pytest.mark.parametrize("name,fn,args,kwargs,exc,fragment", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input(name, fn, args, kwargs, exc, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no NumPy warning leaks on the way
        with pytest.raises(exc) as info:
            fn(*args, **kwargs)
    assert fragment in str(info.value), f"{name}: {fragment!r} not in {str(info.value)!r}"
    assert isinstance(info.value, _base(exc))


def test_the_table_is_large_and_every_expected_exception_is_typed():
    assert len(ROWS) >= 300
    for name, _, _, _, exc, _ in ROWS:
        assert issubclass(exc, _base(exc)), f"{name}: {exc} does not derive from its package's base exception"


# ---- the command-line program (issue 21): bad arguments end with exit code 2 and a message,
# before any simulation runs (the report header "DMRG  " is never printed) -----------------
CLI_ROWS = [
    ("json-empty", ["--json", ""], "the file name is empty"),
    ("plot-empty", ["--plot", " "], "the file name is empty"),
    ("L-beyond-memory", ["--L", "99999999999999999999999"], "would need about"),
    ("chi-beyond-memory", ["--L", "100000", "--max-bond", "4000"], "of memory is available"),
    ("json-name-too-long", ["--json", "a" * 300 + ".json"], "is too long"),
    ("threads-word", ["--threads", "many"], "'auto' or a non-negative integer"),
    ("noise-huge", ["--one-site", "--noise", "1e200"], "relative size below 1"),
    ("conserve-sz-tfim", ["--model", "tfim", "--conserve", "Sz"], "conserves no Sz"),
    ("sz-with-tfim", ["--model", "tfim", "--sz", "1"], "the tfim conserves no Sz"),
    ("parity-with-heisenberg", ["--parity", "1"], "conserves Sz, not a parity"),
    ("conserve-complex", ["--conserve", "Sz", "--dtype", "complex128"], "runs in float64"),
]
if os.path.isdir("/proc/self"):  # a directory where nobody, root included, can create files
    CLI_ROWS.append(("json-unwritable-dir", ["--json", "/proc/self/run.json"], "cannot write in directory"))
if os.path.exists("/dev/null"):
    CLI_ROWS.append(("save-device", ["--save", "/dev/null"], "is not a regular file"))


@pytest.mark.parametrize("name,args,fragment", CLI_ROWS, ids=[r[0] for r in CLI_ROWS])
def test_cli_bad_arguments(name, args, fragment, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "dmrg", "--L", "6", "--max-bond", "4", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-500:])
    assert fragment in proc.stderr, (name, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr and "DMRG  " not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


# 'tensor4all evolve' (issue 24): the same contract, before any evolution (header "EVOLVE  ")
EVOLVE_CLI_ROWS = [
    ("t-not-multiple-of-dt", ["--t-final", "1", "--dt", "0.3"], "is not a multiple of dt"),
    ("state-length", ["--state", "product:uud"], "gives 3 sites, but --L is 6"),
    ("json-empty", ["--json", ""], "the file name is empty"),
    ("beyond-memory", ["--L", "100000", "--max-bond", "100000"], "of memory is available"),
    ("hubbard-conserve-Sz", ["--model", "hubbard", "--conserve", "Sz"], "N and Sz together or of N alone"),
    ("hubbard-letter", ["--model", "hubbard", "--state", "product:0u1d2u"], "is not a state of a --model hubbard"),
    ("dt-too-small", ["--dt", "1e-320"], "argument --dt: dt = 1e-320 is too small for t = 0.1"),
]


@pytest.mark.parametrize("name,args,fragment", EVOLVE_CLI_ROWS, ids=[r[0] for r in EVOLVE_CLI_ROWS])
def test_cli_evolve_bad_arguments(name, args, fragment, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "evolve", "--L", "6", "--t-final", "0.1", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-500:])
    assert fragment in proc.stderr, (name, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr and "EVOLVE  " not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []


# ---- coverage: every public callable of tenferro.jit, tensor4all (networks, models, lattices, quantics) and
# tensor4all.structured is exercised by at least one row of the table -------------------
def _names_used(obj, seen=None) -> set[str]:
    """Names a row's callable refers to: its own name, and every attribute or global name in
    its code and the code nested in it (lambdas calling ``t4a.dmrg(...)`` name ``dmrg``)."""
    import types

    seen = set() if seen is None else seen
    out: set[str] = set()
    name = getattr(obj, "__name__", None)
    if isinstance(name, str):
        out.add(name)
    func = getattr(obj, "__func__", obj)
    func = getattr(func, "__wrapped__", func)  # a decorated entry point (tools.threads.thread_policy): its body
    code = getattr(func, "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        out.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    for d in getattr(func, "__defaults__", None) or ():
        if callable(d):
            out |= _names_used(d, seen)
    return out


# records the library builds and hands out (a sweep's history, a progress update): never
# input, no validation of their own to exercise
OUTPUT_RECORDS = {
    "ExcitedStates",
    "Gap",
    "SweepRecord",
    "BondUpdate",
    "TCIResult",
    "EvolutionRecord",
    "EvolutionResult",
    "SectorEntanglement",
    "ThermalResult",
    "Thermodynamics",
    "MettsResult",
    "SpectralFunction",
    "VUMPSResult",
    "IDMRGResult",
}


def _public_callables() -> list[str]:
    import tensor4all.structured as st

    names = {"jit", "lower", "cache_info"}  # tenferro.jit and the methods of a jitted function
    for mod in (t4a, st, models, t4a.lattices, t4a.quantics, t4a.tci, t4a.measurements, t4a.trees):
        for n in getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")]):
            if n in OUTPUT_RECORDS:
                continue
            obj = getattr(mod, n)
            if not callable(obj) or (isinstance(obj, type) and issubclass(obj, BaseException)):
                continue
            if getattr(obj, "__module__", "").split(".")[0] not in ("tensor4all", "tenferro"):
                continue  # re-exported from elsewhere (e.g. typing helpers)
            names.add(n)
            if isinstance(obj, type) and obj.__module__.startswith("tensor4all"):
                names.update(
                    m
                    for m, v in vars(obj).items()
                    if not m.startswith("_") and (callable(v) or isinstance(v, (classmethod, staticmethod)))
                )
    return sorted(names)


def test_every_public_callable_appears_in_the_table():
    used: set[str] = set()
    for name, fn, args, kwargs, _, _ in ROWS:
        used |= _names_used(fn)
        for a in list(args) + list(kwargs.values()):
            if callable(a):
                used |= _names_used(a)
    missing = [n for n in _public_callables() if n not in used]
    assert not missing, f"public callables without a bad-input row: {missing}"
