"""The bad-input table (issue 9): one row per malformed call over the public API of
tidu, tenferro and tensor4all: (function, arguments, expected exception, message
fragment). Every expected exception derives from its package's base exception, so
each family keeps its contract: a typed error that names what was wrong, never a raw
NumPy/SciPy traceback or a silent wrong value."""
from __future__ import annotations

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
HUGE = (10 ** 6, 10 ** 6)


class _Shaped:
    def __init__(self, shape):
        self.shape = shape


ROWS: list[tuple] = []   # (id, fn, args, kwargs, exception, fragment)


def row(name, fn, args, exc, fragment, **kwargs):
    ROWS.append((name, fn, args, kwargs, exc, fragment))


# ---- tenferro: operands that are not tensors ---------------------------------------------
UNARY = ["sin", "cos", "tan", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "tanh", "sinh", "cosh", "arcsin",
         "arccos", "arctan", "abs", "negative", "conj", "real", "imag", "sign", "square", "reciprocal", "isfinite",
         "isnan", "isinf", "sum", "prod", "mean", "max", "min", "amax", "amin", "logsumexp"]
for name in UNARY:
    for bad, label in (("a", "str"), (None, "NoneType"), (object(), "object"), ({1: 2}, "dict")):
        row(f"{name}-{label}", getattr(tf, name), (bad,), tf.TenferroTypeError, "expected a Tensor")

BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "less", "greater", "equal",
          "not_equal", "less_equal", "greater_equal", "logaddexp"]
for name in BINARY:
    row(f"{name}-broadcast", getattr(tf, name), (F, tf.ones((4,))), tf.ShapeError, "could not be broadcast")
    row(f"{name}-str", getattr(tf, name), (F, "a"), tf.TenferroTypeError, "expected a Tensor")

# ---- tenferro: reductions with a bad axis ------------------------------------------------
for name in ["sum", "prod", "mean", "max", "min", "amax", "amin", "logsumexp"]:
    row(f"{name}-axis", getattr(tf, name), (F,), tf.AxisError, "out of bounds", axis=3)

# ---- tenferro: booleans where a sign is needed -------------------------------------------
row("negative-bool", tf.negative, (B,), tf.DTypeError, "boolean tensors have no negative")
row("sign-bool", tf.sign, (B,), tf.DTypeError, "boolean tensors have no sign")
row("neg-op-bool", lambda x: -x, (B,), tf.DTypeError, "boolean tensors have no negative")

# ---- tenferro: creation -----------------------------------------------------------------
for name, fn in [("zeros", tf.zeros), ("ones", tf.ones), ("full", lambda s: tf.full(s, 1.0)),
                 ("normal", lambda s: tf.random.normal(0, s)), ("uniform", lambda s: tf.random.uniform(0, s)),
                 ("randint", lambda s: tf.random.randint(0, s, 5))]:
    row(f"{name}-negative-extent", fn, ((-1,),), tf.ShapeError, "negative extent")
    row(f"{name}-float-shape", fn, (2.5,), tf.ShapeError, "shape must be an int")
    row(f"{name}-str-shape", fn, ("a",), tf.ShapeError, "shape must be an int")
    row(f"{name}-out-of-memory", fn, (HUGE,), tf.TenferroMemoryError, "cannot allocate 8000000000000 bytes")
row("eye-out-of-memory", tf.eye, (10 ** 7,), tf.TenferroMemoryError, "cannot allocate 800000000000000 bytes")
row("zeros-bad-dtype", tf.zeros, ((2,),), tf.DTypeError, "is not a dtype", dtype="foo")
row("full-None", tf.full, ((2,), None), tf.TenferroValueError, "fill_value must be a number")
row("full-str", tf.full, ((2,), "x"), tf.TenferroValueError, "fill_value must be a number")
row("full-float-as-int", tf.full, ((2,), 1.5), tf.DTypeError, "without loss", dtype="int64")
for bad in (float("nan"), float("inf"), -float("inf")):
    row(f"arange-{bad}", tf.arange, (bad,), tf.TenferroValueError, "must be finite")
    row(f"linspace-{bad}", tf.linspace, (0.0, bad), tf.TenferroValueError, "must be finite")
row("arange-step0", tf.arange, (0, 5, 0), tf.TenferroValueError, "step must be nonzero")
row("arange-str", tf.arange, ("a",), tf.TenferroValueError, "must be real numbers")
row("linspace-str", tf.linspace, ("a", 1.0), tf.TenferroValueError, "start must be a number")
row("linspace-num-negative", tf.linspace, (0.0, 1.0, -1), tf.TenferroValueError, "num must be non-negative")
row("linspace-int-dtype", tf.linspace, (0.0, 1.0), tf.DTypeError, "must be floating", dtype="int64")
row("uniform-low-nan", tf.random.uniform, (0, (2,)), tf.TenferroValueError, "expected low <= high", low=float("nan"))
row("normal-bad-seed", tf.random.normal, (-1, (2,)), tf.TenferroValueError, "seed must be")
row("asarray-str", tf.asarray, (["a"],), tf.DTypeError, "unsupported dtype")

# ---- tenferro: shapes, indexing, dtypes -------------------------------------------------
row("reshape-size", tf.reshape, (F, (4,)), tf.ShapeError, "cannot reshape")
row("transpose-perm", tf.transpose, (M, (0, 0)), tf.AxisError, "not a permutation")
row("take-out-of-bounds", tf.take, (F, tf.asarray([5])), tf.TenferroIndexError, "out of bounds")
row("getitem-out-of-bounds", lambda x: x[5], (F,), tf.TenferroIndexError, "out of bounds")
row("setitem", lambda x: x.__setitem__(0, 5.0), (F,), tf.TenferroTypeError, "tensors are immutable")
row("setitem-slice", lambda x: x.__setitem__(slice(0, 2), 0.0), (F,), tf.TenferroTypeError, "scatter_add")
row("scatter_add-float-into-int", tf.scatter_add, (tf.asarray([1, 2, 3]), tf.asarray([0]), tf.asarray([0.5])),
    tf.DTypeError, "values would be truncated")
row("scatter_add-complex-into-real", tf.scatter_add, (F, tf.asarray([0]), tf.asarray([1j])), tf.DTypeError,
    "imaginary part")
row("dynamic_update_slice-float-into-int", tf.dynamic_update_slice,
    (tf.asarray([1, 2, 3]), tf.asarray([0.5]), (0,)), tf.DTypeError, "without loss")
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
row("einsum-53-labels", tf.einsum, ("".join(chr(0x100 + i) for i in range(53)) + "->", tf.ones((1,) * 53)),
    tf.EinsumSubscriptError, "at most 52")
row("einsum-false-too-large", tf.einsum, ("ab,cd,bc,ad->",) + (tf.ones((2000, 2000)),) * 4, tf.TenferroMemoryError,
    "optimize='auto'", optimize=False)
row("einsum-path-false-too-large", tf.einsum_path, ("ab,cd,bc,ad->",) + (_Shaped((10 ** 5, 10 ** 5)),) * 4,
    tf.TenferroMemoryError, "bytes", optimize=False)
row("einsum_path-str-operand", tf.einsum_path, ("ij", "abc"), tf.EinsumOperandError, "expected a tensor")
row("einsum_path-int-operand", tf.einsum_path, ("i", 3), tf.EinsumOperandError, "expected a tensor")
for bad in (-1, 0, "abc", 2.5, True):
    row(f"einsum_cache_clear-{bad!r}", tf.einsum_cache_clear, (), tf.TenferroValueError, "maxsize must be an int",
        maxsize=bad)

# ---- tenferro.linalg: every function x (integer input, vector input, NaN, inf, str) ----------
LINALG_1 = {
    "svd": la.svd, "svdvals": la.svdvals, "truncated_svd": lambda a: la.truncated_svd(a, max_rank=1),
    "qr": la.qr, "lq": la.lq, "eigh": la.eigh, "eigvalsh": la.eigvalsh, "eig": la.eig, "eigvals": la.eigvals,
    "cholesky": la.cholesky, "lu": la.lu, "inv": la.inv, "pinv": la.pinv, "det": la.det, "slogdet": la.slogdet,
    "expm": la.expm, "solve": lambda a: la.solve(a, tf.ones((2,))),
    "triangular_solve": lambda a: la.triangular_solve(a, tf.ones((2, 1))),
    "lstsq": lambda a: la.lstsq(a, tf.ones((2,))), "expm_frechet": lambda a: la.expm_frechet(a, tf.ones((2, 2))),
    "funm_hermitian": lambda a: la.funm_hermitian(a, tf.exp), "sqrtm_psd": la.sqrtm_psd, "logm_pd": la.logm_pd,
    "powm_psd": lambda a: la.powm_psd(a, 0.5), "polar": la.polar, "sqrtm": la.sqrtm, "logm": la.logm,
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
    row(f"truncated_svd-cutoff-{bad!r}", la.truncated_svd, (M,), tf.TenferroValueError, "cutoff must be",
        cutoff=bad)
for bad in (2.5, 0, -1, "2", True):
    row(f"truncated_svd-max_rank-{bad!r}", la.truncated_svd, (M,), tf.TenferroValueError, "max_rank must be",
        max_rank=bad)
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
row("sqrtm-nilpotent", la.sqrtm, (tf.asarray(np.array([[0.0, 1.0], [0.0, 0.0]])),), la.DomainError,
    "no finite principal square root")

# ---- tidu --------------------------------------------------------------------------------
def f1(x):
    return tf.sum(x * x)


def f2(x, y):
    return tf.sum(x * y)


for t in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
    tr = getattr(tidu, t)
    row(f"{t}-argnums-duplicate", lambda tr=tr: tr(f2, argnums=(0, 0))(F, F), (), tidu.InvalidArgumentError,
        "repeats argument 0")
    for bad in ("a", 1.5, None, (0, "a")):
        row(f"{t}-argnums-{bad!r}", lambda tr=tr, bad=bad: tr(f1, argnums=bad)(F), (), tidu.InvalidArgumentError,
            "argnums must be an int or a tuple of ints")
    row(f"{t}-argnums-range", lambda tr=tr: tr(f1, argnums=3)(F), (), tidu.TreeStructureError, "out of range")
for conv, label in ((float, "float"), (complex, "complex"), (int, "int"), (lambda v: v.item(), "item"),
                    (lambda v: v.tolist(), "tolist"), (lambda v: v.numpy(), "numpy"), (np.asarray, "asarray")):
    row(f"grad-{label}-of-tracer", lambda conv=conv: tidu.grad(lambda x: tf.sum(x) * tf.sum(tf.asarray(
        np.real(np.asarray(conv(x[0]))).astype(float))))(F), (), tidu.TracerConversionError, "stop_gradient")
    row(f"jvp-{label}-of-tracer", lambda conv=conv: tidu.jvp(lambda x: conv(x[0]), (F,), (F,)), (),
        tidu.TracerConversionError, "stop_gradient")
row("grad-nonscalar", lambda: tidu.grad(lambda x: x)(F), (), tidu.NonScalarOutputError, "scalar output")
row("grad-bool-output", lambda: tidu.grad(lambda x: tf.sum(x) > 0)(F), (), tidu.NonDifferentiableError,
    "not differentiable")
row("grad-int-input", lambda: tidu.grad(lambda x: tf.sum(x))(tf.asarray([1, 2])), (), tidu.NonDifferentiableError,
    "not differentiable")
row("grad-complex-output", lambda: tidu.grad(lambda x: tf.sum(x))(tf.asarray([1j])), (), tidu.ComplexOutputError,
    "holomorphic")
row("jvp-tensor-primals", lambda: tidu.jvp(f1, F, F), (), tidu.TreeStructureError, "tuples or lists")
row("jvp-tangent-shape", lambda: tidu.jvp(f1, (F,), (tf.ones((2,)),)), (), tidu.TangentMismatchError, "tangent")
row("hvp-tensor", lambda: tidu.hvp(f1, F, F), (), tidu.TreeStructureError, "hvp(f, (x,), (v,))")
for check in (check_grads, check_jvp, check_vjp):
    n = check.__name__
    row(f"{n}-tensor-args", check, (f1, F), tidu.InvalidArgumentError, "must be a tuple")
    row(f"{n}-int-input", check, (f1, (tf.asarray([1, 2]),)), tidu.NonDifferentiableError, "checks nothing")
    for k, bad in (("eps", -1.0), ("eps", 0.0), ("eps", float("nan")), ("atol", -1.0), ("rtol", -1.0),
                   ("atol", "a")):
        row(f"{n}-{k}-{bad!r}", check, (f1, (F,)), tidu.InvalidArgumentError, f"{k} must be", **{k: bad})
for bad in (-1, 0, "a", 1.5):
    row(f"check_grads-order-{bad!r}", check_grads, (f1, (F,)), tidu.InvalidArgumentError, "order must be",
        order=bad)
row("check_grads-mode", check_grads, (f1, (F,)), tidu.InvalidArgumentError, "unknown mode", modes=("side",))
row("register_pytree_node-str", tidu.register_pytree_node, ("str", lambda t: ((), None), lambda a, c: None),
    tidu.InvalidArgumentError, "nodetype must be a class")
row("register_pytree_node-flatten", tidu.register_pytree_node, (type("T", (), {}), 3, lambda a, c: None),
    tidu.InvalidArgumentError, "flatten must be callable")
row("vjp-cotangent", lambda: tidu.vjp(lambda x: x * 2.0, F)[1](tf.ones((2,))), (), tidu.TangentMismatchError,
    "cotangent")

# ---- tensor4all -----------------------------------------------------------------------------
row("mps-random-L0", t4a.MPS.random, (0,), t4a.Tensor4allError, "positive integer", bond_dim=2)
row("mps-random-bond0", t4a.MPS.random, (4,), t4a.Tensor4allError, "bond_dim must be", bond_dim=0)
row("opsum-site", lambda: t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "Sz", 5), 3, local="spin-1/2"), (),
    t4a.Tensor4allError, "outside 0..2")
row("opsum-local", lambda: t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "Sz", 0), 3, local="spin-7"), (),
    t4a.Tensor4allError, "unknown local space")
row("dmrg-max_bond", lambda: t4a.dmrg(models.heisenberg(4), max_bond=0), (), t4a.Tensor4allError,
    "max_bond must be")
row("diagonal-ndim", t4a.DiagonalTensor, (tf.ones((2, 2, 2)),), t4a.Tensor4allError, "must be 1-d")


BASES = {"tenferro": tf.TenferroError, "tidu": tidu.TiduError, "tensor4all": t4a.Tensor4allError}


def _base(exc: type) -> type:
    return BASES[exc.__module__.split(".")[0]]


@pytest.mark.parametrize("name,fn,args,kwargs,exc,fragment", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input(name, fn, args, kwargs, exc, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # no NumPy warning leaks on the way
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
    ("chi-beyond-memory", ["--L", "100000", "--chi", "4000"], "of memory is available"),
    ("json-name-too-long", ["--json", "a" * 300 + ".json"], "is too long"),
    ("threads-word", ["--threads", "many"], "'auto' or a non-negative integer"),
]
if os.path.isdir("/proc/self"):  # a directory where nobody, root included, can create files
    CLI_ROWS.append(("json-unwritable-dir", ["--json", "/proc/self/run.json"], "cannot write in directory"))


@pytest.mark.parametrize("name,args,fragment", CLI_ROWS, ids=[r[0] for r in CLI_ROWS])
def test_cli_bad_arguments(name, args, fragment, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tensor4all", "dmrg", "--L", "6", "--chi", "4", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-500:])
    assert fragment in proc.stderr, (name, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr and "DMRG  " not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written
