"""Shared machinery of tenferro's primitive layer.

* :class:`TensorType`: the abstract value (shape, dtype, placement) of a tensor.
* :class:`TensorVSpace`: how tidu builds zeros, sums cotangents, samples and
  forwards operators for tensors and their tracers.
* :func:`primitive`: creates a tidu primitive and records it, with its family,
  in :data:`PRIMITIVES` (the support manifest is derived from this table).
* Helpers every family uses: :func:`meta` (shape and dtype of a tensor or a
  tracer), :func:`as_operand` (Python scalars to weakly-typed tensors),
  :func:`xp_of` (NumPy or CuPy for an array).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import tidu
from tidu import Primitive, Tracer

from ._creation import ones as _ones, zeros as _zeros
from ._dtypes import DType, _from_numpy, _lookup_numpy, _weak_kind, result_type
from ._errors import DTypeError, ForeignOperandError, PlacementError, TenferroTypeError, fmt_shape
from ._placement import CPU, Placement, array_module_of_placement, device_scope, get_default_placement, placement_of
from ._shape import Shape, as_index, as_indices, as_shape  # noqa: F401  (re-exported)
from ._tensor import Tensor

__all__ = ["TensorType", "PRIMITIVES", "primitive", "meta", "xp_of", "wrap", "fortran", "support_manifest"]


class TensorType:
    """Abstract value of a tensor: ``shape`` (tuple), ``dtype`` (DType), ``placement``."""

    __slots__ = ("shape", "dtype", "placement", "_hash")

    def __init__(self, shape: tuple, dtype: DType, placement: Placement = CPU):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.placement = placement
        self._hash = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def update(self, shape: tuple | None = None, dtype: DType | None = None) -> "TensorType":
        return tensor_type(self.shape if shape is None else tuple(shape), self.dtype if dtype is None else dtype,
                           self.placement)

    def __eq__(self, other: object) -> bool:
        return (type(other) is TensorType and self.shape == other.shape and self.dtype is other.dtype
                and self.placement == other.placement)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.shape, self.dtype, self.placement))
        return self._hash

    def __str__(self) -> str:
        short = {"float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
                 "int32": "i32", "int64": "i64", "bool": "bool"}[self.dtype.name]
        where = "" if self.placement == CPU else f"@{self.placement}"
        return f"{short}[{','.join(map(str, self.shape))}]{where}"

    __repr__ = __str__


# Canonical CPU avals: equal CPU avals made by ``tensor_type`` (so by ``update``,
# hence by the shape rules, and by ``aval_of_tensor``) are the same object, which
# lets hot paths compare avals by identity (``a is b``) before comparing fields.
_CPU_TYPES: dict[tuple, TensorType] = {}    # (shape, DType) -> aval
_CPU_AVALS: dict[tuple, TensorType] = {}    # (shape, numpy dtype) -> aval


def tensor_type(shape: tuple, dtype: DType, placement: Placement = CPU) -> TensorType:
    """``TensorType(shape, dtype, placement)``, canonical (interned) on the CPU."""
    if placement is not CPU:
        return TensorType(shape, dtype, placement)
    key = (shape, dtype)
    av = _CPU_TYPES.get(key)
    if av is None:
        av = TensorType(shape, dtype, CPU)
        if len(_CPU_TYPES) < 8192 and all(type(s) is int for s in av.shape):
            _CPU_TYPES[key] = av
    return av


def aval_of_tensor(t: Tensor) -> TensorType:
    a = t._data
    if type(a) is np.ndarray:
        key = (a.shape, a.dtype)
        av = _CPU_AVALS.get(key)
        if av is None:
            d = _from_numpy.get(a.dtype) or _lookup_numpy(a.dtype, "aval", "a tensor")
            av = tensor_type(a.shape, d, CPU)
            if len(_CPU_AVALS) < 8192:
                _CPU_AVALS[key] = av
        return av
    d = _from_numpy.get(a.dtype) or _lookup_numpy(a.dtype, "aval", "a tensor")
    return TensorType(a.shape, d, placement_of(a))


def aval_of_operand(x: Any) -> TensorType | None:
    """The aval of a Tensor or a tracer of one; ``None`` for anything else (hot path)."""
    if type(x) is Tensor:
        return aval_of_tensor(x)
    if isinstance(x, Tracer):
        return x.aval
    return None


def meta(x: Any) -> tuple[tuple, DType]:
    """(shape, dtype) of a Tensor or a tracer of one (hot path)."""
    if type(x) is Tensor:
        a = x._data
        d = _from_numpy.get(a.dtype)
        return a.shape, (d if d is not None else _lookup_numpy(a.dtype, "meta", "a tensor"))
    if isinstance(x, Tracer):
        av = x.aval
        return av.shape, av.dtype
    raise TenferroTypeError(f"expected a tenferro Tensor, got {type(x).__name__}")


def placement_of_operand(x: Any) -> Placement:
    if type(x) is Tensor:
        return CPU if type(x._data) is np.ndarray else placement_of(x._data)
    return x.aval.placement


def is_tensor_like(x: Any) -> bool:
    return type(x) is Tensor or (isinstance(x, Tracer) and type(x.aval) is TensorType)


def xp_of(array: Any) -> Any:
    """``numpy`` or ``cupy`` for an array."""
    if type(array) is np.ndarray:
        return np
    import cupy  # noqa: PLC0415  (optional dependency)

    return cupy


def wrap(array: Any) -> Tensor:
    return Tensor._wrap(array)


def fortran(a: Any) -> Any:
    """``a`` in canonical column-major layout (copying only when needed).

    Unlike ``np.asfortranarray`` this keeps 0-d arrays 0-d; NumPy scalars (what
    full reductions return) become 0-d arrays.
    """
    if isinstance(a, np.generic):
        return np.asarray(a)
    if a.flags.f_contiguous:
        return a
    if type(a) is np.ndarray:
        return np.asfortranarray(a)
    import cupy  # noqa: PLC0415

    return cupy.asfortranarray(a)


# --- the primitive table ------------------------------------------------------
PRIMITIVES: dict[str, tuple[Primitive, str]] = {}


def primitive(name: str, family: str, *, multiple_results: bool = False) -> Primitive:
    """Create and record a tenferro primitive (registered once, by name)."""
    if name in PRIMITIVES:
        raise RuntimeError(f"primitive {name!r} registered twice")
    p = Primitive(name, multiple_results=multiple_results)
    PRIMITIVES[name] = (p, family)
    return p


def support_manifest() -> dict[str, dict[str, str]]:
    """``{name: {"family": ..., "support": ...}}`` for every tenferro primitive.

    ``support`` is one of ``linear``, ``differentiable``, ``zero-derivative``,
    ``not differentiable`` (from the primitive's own rules).
    """
    return {n: {"family": fam, "support": p.support} for n, (p, fam) in PRIMITIVES.items()}


def check_shapes(p: Primitive, *xs: Any, **params: Any) -> None:
    """Run ``p``'s shape rule on the operands' avals.

    Eager ``bind`` calls the impl directly and never the shape rule, so user-level
    functions call this before binding: one set of checks (the rule's) and one
    message, eager or traced. Cheap: an aval lookup per operand and the rule itself.
    """
    p.abstract_eval(*[aval_of_operand(x) for x in xs], **params)


def nonlinear_error(op: str, detail: str) -> TenferroTypeError:
    """The error a transpose rule raises when more operands are linear than the op is
    linear in (``tidu.linear_transpose`` of a nonlinear function such as ``x * x``)."""
    return TenferroTypeError(
        f"{op}: cannot transpose: {detail}; the function given to linear_transpose is not linear "
        "in its inputs (e.g. x * x)"
    )


# --- operands ----------------------------------------------------------------------
def scalar_tensor(value: Any, dtype: DType, op: str = "operand", placement: Placement = CPU) -> Tensor:
    """The 0-d tensor ``value`` of ``dtype`` on ``placement``; a value that does not
    fit (``2**40`` in int32) raises :class:`DTypeError` naming ``op``. On a GPU the
    value is written by a fill kernel (a kernel argument, not a host copy)."""
    try:
        host = np.asarray(value, dtype=dtype.numpy)
    except (OverflowError, TypeError, ValueError):
        raise DTypeError(f"{op}: the Python scalar {value!r} cannot be represented in dtype {dtype.name}; "
                         "convert the tensor to a wider dtype first") from None
    if placement is CPU or placement.device is None:
        return Tensor._wrap(host)
    return constant_tensor(value, (), dtype, placement)


def constant_tensor(value: Any, shape: tuple, dtype: DType, placement: Placement) -> Tensor:
    """``value`` filled into a new canonical tensor of ``shape`` and ``dtype`` on
    ``placement`` (made on the device for a GPU: no host round trip)."""
    if placement.device is None:
        return Tensor._wrap(np.full(shape, value, dtype.numpy, order="F"))
    xp = array_module_of_placement("constant", placement)
    with device_scope("constant", placement):
        return Tensor._wrap(xp.full(shape, value, dtype.numpy, order="F"))


def as_operand(op: str, x: Any, dtype: DType | None = None, placement: Placement | None = None) -> Any:
    """A Tensor or tracer for ``x``; Python scalars become 0-d tensors of ``dtype``
    (or their default dtype) on ``placement`` (default: the default placement);
    NumPy arrays are converted with ``asarray``."""
    if type(x) is Tensor or isinstance(x, Tracer):
        return x
    if _weak_kind(x) is not None:
        return scalar_tensor(x, dtype if dtype is not None else result_type(x), op,
                             get_default_placement() if placement is None else placement)
    if isinstance(x, (np.ndarray, np.generic, list, tuple)):
        from ._creation import asarray  # noqa: PLC0415

        return asarray(x)
    if hasattr(type(x), "__tenferro_function__"):
        raise ForeignOperandError(op, x)
    raise TenferroTypeError(
        f"{op}: expected a Tensor, a Python scalar or an array-like operand, got {type(x).__name__}"
    )


def check_placement(op: str, *xs: Any) -> None:
    first = None
    for x in xs:
        p = placement_of_operand(x)
        if first is None:
            first = p
        elif p != first:
            raise PlacementError(
                f"{op}: operands live on different placements ({first} and {p}); "
                "move them explicitly with .to_cpu() / .to_gpu() (no implicit copies)"
            )


# --- the vector space of tensors ---------------------------------------------------------
class TensorVSpace(tidu.VSpace):
    """tidu's view of tensors (see :class:`tidu.VSpace`)."""

    aval = staticmethod(aval_of_tensor)  # ``aval(value)``: one call less on a hot path

    def tangent_aval(self, aval: TensorType) -> TensorType | None:
        return aval if aval.dtype.is_floating else None

    def is_complex(self, aval: TensorType) -> bool:
        return aval.dtype.is_complex

    def is_scalar(self, aval: TensorType) -> bool:
        return aval.shape == ()

    def size(self, aval: TensorType) -> int:
        return aval.size

    def machine_epsilon(self, aval: TensorType) -> float:
        return float(np.finfo(aval.dtype.numpy).eps) if aval.dtype.is_floating else 1.0

    def zeros(self, aval: TensorType) -> Tensor:
        return _zeros(aval.shape, aval.dtype, placement=aval.placement)

    def ones(self, aval: TensorType) -> Tensor:
        return _ones(aval.shape, aval.dtype, placement=aval.placement)

    # The arithmetic below and the tracer methods are wired to the elementwise
    # primitives and to ``_methods.TRACER_METHODS`` by ``tenferro/__init__.py``
    # (``_prim.TENSOR_VSPACE.wire(...)``), avoiding an import cycle.
    _add_p: Any = None
    _mul: Any = None
    _conj: Any = None
    _tracer_methods: dict[str, Any] = {}

    def wire(self, add_p: Any, mul: Any, conj: Any, tracer_methods: dict[str, Any]) -> None:
        self._add_p, self._mul, self._conj = add_p, mul, conj
        self._tracer_methods = tracer_methods

    def add(self, x: Any, y: Any) -> Any:
        if type(x) is Tensor and type(y) is Tensor:  # no tracer: what bind does, one call less
            return self._add_p.impl(x, y)
        return self._add_p.bind(x, y)

    def scale(self, x: Any, alpha: complex) -> Any:
        return self._mul(x, alpha)

    def conj(self, x: Any) -> Any:
        return self._conj(x)

    def standard_basis(self, aval: TensorType) -> list[Tensor]:
        n = aval.size
        if aval.placement.device is not None:   # made on the device: no uploads
            with device_scope("standard_basis", aval.placement):
                eye = array_module_of_placement("standard_basis", aval.placement).eye(n, dtype=aval.dtype.numpy)
                return [Tensor._wrap(fortran(eye[:, k].reshape(aval.shape, order="F"))) for k in range(n)]
        out = []
        for k in range(n):
            e = np.zeros(n, aval.dtype.numpy)
            e[k] = 1
            out.append(Tensor._wrap(np.reshape(e, aval.shape, order="F")))
        return out

    def stack_basis(self, values: Sequence[Any], basis_aval: TensorType, leading: bool) -> Any:
        from ._structural import reshape, stack  # noqa: PLC0415

        vshape = tuple(meta(values[0])[0]) if values else ()
        if leading:
            return reshape(stack(values, axis=0), tuple(basis_aval.shape) + vshape)
        return reshape(stack(values, axis=len(vshape)), vshape + tuple(basis_aval.shape))

    def inner(self, x: Any, y: Any) -> float:
        return float(np.real(np.vdot(np.asarray(x), np.asarray(y))))

    def randn(self, aval: TensorType, rng: Any) -> Tensor:
        shape = aval.shape
        if aval.dtype.is_complex:
            v = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        else:
            v = rng.standard_normal(shape)
        t = Tensor._wrap(fortran(np.asarray(v, dtype=aval.dtype.numpy)))
        return t if aval.placement == CPU else t.to_gpu(aval.placement.device)

    def tracer_getattr(self, tracer: Any, name: str) -> Any:
        fn = self._tracer_methods.get(name)  # operators first: every ``tracer + y`` lands here
        if fn is not None:
            if type(fn) is property:
                return fn.fget(tracer)
            return fn.__get__(tracer)
        if name in ("shape", "dtype", "placement", "ndim", "size"):
            value = getattr(tracer.aval, name)
            return Shape._from_tuple(value) if name == "shape" else value
        raise AttributeError(f"a traced tensor has no attribute {name!r}")

    def tracer_call(self, tracer: Any, name: str, args: tuple) -> Any:
        fn = self._tracer_methods.get(name)  # operators: every ``tracer + y`` lands here
        if fn is not None and type(fn) is not property:
            return fn(tracer, *args)
        return self.tracer_getattr(tracer, name)(*args)


TENSOR_VSPACE = TensorVSpace()
tidu.register_vspace(TENSOR_VSPACE, [Tensor], [TensorType])
