"""tenferro: dense tensors for the tidu AD engine.

This package holds the dense data model: dtypes and their promotion lattice,
:class:`Shape`, placements, the column-major :class:`Tensor`, creation and dtype
conversion, and metadata-only views. Primitive operations (arithmetic,
reductions, einsum, linalg) are added by the primitive modules below.

Tensors are values. Tensors that tenferro functions return from canonical inputs are
canonical (F-contiguous, writeable); from a strided view an operation may return a strided
result (``reshape`` of a view, compiled elementwise results), the same values: ask
``t.is_contiguous`` (a property) or call ``t.contiguous()`` where a layout matters (DLPack consumers).
They may share storage with their inputs, and
``asarray(numpy_array)`` / ``Tensor.numpy()`` share storage with NumPy without a
copy. Mutating the storage of a tensor that has been used in a computation (or is
being differentiated) is undefined behaviour; take a private copy with
``np.array(t)`` or ``t.copy()`` before mutating.

>>> import tenferro as tf
>>> x = tf.reshape_view(tf.arange(6), (2, 3))   # column-major by default
>>> x.tolist()
[[0, 2, 4], [1, 3, 5]]
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from . import random
from ._creation import (
    arange,
    asarray,
    cast,
    convert,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from ._dtypes import (
    DType,
    bool_,
    can_convert,
    complex64,
    complex128,
    dtype,
    float32,
    float64,
    int32,
    int64,
    result_type,
)
from ._errors import (
    AxisError,
    OptionalDependencyError,
    TenferroMemoryError,
    DTypeError,
    PlacementError,
    ShapeError,
    TenferroError,
    TenferroIndexError,
    TenferroTypeError,
    ForeignOperandError,
    TenferroValueError,
    UnsupportedOnDeviceError,
)
from ._placement import (
    CPU,
    MemoryKind,
    Placement,
    check_same_placement,
    default_placement,
    get_default_placement,
    gpu,
    placement_of,
    set_default_placement,
)
from ._shape import Shape
from ._tensor import Tensor
from ._views import reshape_view, slice_view, transpose_view

__all__ = [
    # dtypes
    "DType",
    "bool_",
    "int32",
    "int64",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "dtype",
    "result_type",
    "can_convert",
    # errors
    "TenferroError",
    "ShapeError",
    "DTypeError",
    "PlacementError",
    "UnsupportedOnDeviceError",
    "ForeignOperandError",
    "TenferroValueError",
    "TenferroIndexError",
    "TenferroTypeError",
    "AxisError",
    "TenferroMemoryError",
    "OptionalDependencyError",
    # placement
    "MemoryKind",
    "Placement",
    "CPU",
    "gpu",
    "placement_of",
    "check_same_placement",
    "default_placement",
    "get_default_placement",
    "set_default_placement",
    # shapes and tensors
    "Shape",
    "Tensor",
    # creation and conversion
    "asarray",
    "tensor",
    "zeros",
    "ones",
    "full",
    "zeros_like",
    "ones_like",
    "full_like",
    "eye",
    "arange",
    "linspace",
    "convert",
    "cast",
    "random",
    # metadata-only views
    "reshape_view",
    "transpose_view",
    "slice_view",
]

# primitive layer exports are added below by the primitive modules
from . import _allocator, _methods, _vspace  # noqa: F401  _vspace registers the tensor vector space with tidu; _allocator

# keeps heap slack for the results allocated per call (glibc M_TOP_PAD; TENFERRO_MALLOC_TOP_PAD=0: off)
from ._aval import TensorType
from ._registry import support_manifest
from ._elementwise import add, subtract, multiply, divide, negative, conj, conjugate, real, imag, sub, mul, div, neg
from ._structural import broadcast_to, reshape, transpose, permute_dims
from ._reductions import sum

_methods.install(Tensor)  # operators and methods: the one table in _methods.py

__all__ += [
    "TensorType",
    "support_manifest",
    "add",
    "subtract",
    "multiply",
    "divide",
    "negative",
    "conj",
    "conjugate",
    "real",
    "imag",
    "sub",
    "mul",
    "div",
    "neg",
    "broadcast_to",
    "reshape",
    "transpose",
    "permute_dims",
    "sum",
]

# --- elementwise (comparisons, selection, abs/sign, powers, transcendental) and reductions
from ._compare import greater, greater_equal, less, less_equal, equal, not_equal, isfinite, isinf, isnan, where
from ._piecewise import abs, absolute, sign, maximum, minimum, clip
from ._transcendental import (
    exp,
    log,
    sin,
    cos,
    tan,
    sinh,
    cosh,
    tanh,
    arcsin,
    arccos,
    arctan,
    sqrt,
    rsqrt,
    expm1,
    log1p,
    square,
    reciprocal,
    logaddexp,
    power,
    pow,
    arctan2,
    angle,
)
from ._reductions import prod, max, min, amax, amin, mean, logsumexp, argmax, argmin, cumsum, var, std

__all__ += [
    "abs",
    "absolute",
    "sign",
    "maximum",
    "minimum",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "not_equal",
    "isfinite",
    "isinf",
    "isnan",
    "where",
    "clip",
    "power",
    "pow",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "arcsin",
    "arccos",
    "arctan",
    "sqrt",
    "rsqrt",
    "expm1",
    "log1p",
    "square",
    "reciprocal",
    "logaddexp",
    "arctan2",
    "angle",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "mean",
    "logsumexp",
    "argmax",
    "argmin",
    "cumsum",
    "var",
    "std",
]

# structural, indexing, matrix helpers and contraction
from ._structural import squeeze, expand_dims
from ._joins import concatenate, stack, flip, reverse
from ._indexing import take, gather, scatter_add
from ._dynamic_slice import dynamic_slice, dynamic_update_slice
from ._pad import pad
from ._getitem import slice
from ._matrix import diagonal, extract_diag, embed_diag, diag, tril, triu, trace
from ._contraction import dot_general, matmul, tensordot, dot, vdot, inner, outer

__all__ += [
    "squeeze",
    "expand_dims",
    "concatenate",
    "stack",
    "pad",
    "flip",
    "reverse",
    "slice",
    "dynamic_slice",
    "dynamic_update_slice",
    "take",
    "gather",
    "scatter_add",
    "diagonal",
    "extract_diag",
    "embed_diag",
    "diag",
    "tril",
    "triu",
    "trace",
    "dot_general",
    "matmul",
    "tensordot",
    "dot",
    "vdot",
    "inner",
    "outer",
]

# linear algebra (decompositions and solvers, trailing-batch convention)
from . import linalg  # noqa: F401  (tenferro.linalg)

# einsum (hyper-edges, repeated labels, ellipsis, cached plans, exact AD)
from .einsum import (  # noqa: E402  (the package is sys.modules["tenferro.einsum"]; this name is the function)
    EinsumOperandError,
    EinsumOptimizeError,
    EinsumPathWarning,
    EinsumShapeError,
    EinsumSubscriptError,
    einsum,
    einsum_cache_clear,
    einsum_cache_info,
    einsum_path,
    einsum_slicing,
    SlicedContraction,
)

__all__ += [
    "einsum",
    "einsum_path",
    "einsum_slicing",
    "SlicedContraction",
    "einsum_cache_info",
    "einsum_cache_clear",
    "EinsumSubscriptError",
    "EinsumShapeError",
    "EinsumOperandError",
    "EinsumOptimizeError",
    "EinsumPathWarning",
]

# Arrow interop, tensor files (pyarrow is optional, imported on first use) and DLPack import
from . import arrow
from .arrow import load, save
from ._dlpack import from_dlpack

__all__ += ["arrow", "save", "load", "from_dlpack"]

# compiled mode (trace once, optimize the graph, replay generated code); tenferro.jit is the function,
# the package stays in sys.modules
from .jit import (
    DeletedTensorError,
    DonationWarning,
    GraphCaptureWarning,
    JitArgumentError,
    JitError,  # noqa: E402
    RetraceWarning,
    jit,
)

__all__ += [
    "jit",
    "JitError",
    "JitArgumentError",
    "DeletedTensorError",
    "DonationWarning",
    "RetraceWarning",
    "GraphCaptureWarning",
]


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show
    (the imports this module uses stay out of sight)."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
