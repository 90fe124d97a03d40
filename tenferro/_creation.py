"""Tensor creation and dtype conversion: ``asarray``, ``zeros``, ..., ``convert``, ``cast``.

Every tensor made here is column-major (F-contiguous). Logical values are those
NumPy would produce; only the memory order may differ.

Python values are weakly typed: ``asarray([1.0, 2.0], dtype=float32)`` is fine,
but a value whose kind is above the requested dtype's kind
(``asarray(1.5, dtype=int64)``) raises DTypeError. Arrays and tensors are
strongly typed: ``asarray(x, dtype=d)`` accepts only lossless conversions
(``can_convert``); use :func:`cast` for lossy ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tidu import Tracer

from ._dtypes import (
    DType,
    DTypeLike,
    _from_numpy,
    _kind_fits,
    _weak_kind,
    can_convert,
    dtype as _dtype,
    float64,
    result_type,
)
from ._errors import (
    DTypeError,
    PlacementError,
    ShapeError,
    TenferroMemoryError,
    TenferroValueError,
    fmt_bytes,
    fmt_shape,
)
from ._arrays import array_from
from ._astype import convert_element_type
from ._aval import TensorType
from ._placement import (
    CPU,
    Placement,
    array_module_of_placement,
    device_scope,
    get_default_placement,
    import_cupy,
    resolve_placement,
)
from ._shape import as_extents, as_index
from ._tensor import Tensor

__all__ = [
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
    "scalar_tensor",
    "constant_tensor",
]


def _to_placement(op: str, t: Tensor, placement: Placement | None) -> Tensor:
    """``t`` on ``placement`` (an explicit copy when it lives elsewhere); ``None``
    keeps it where it is."""
    if placement is None:
        return t
    placement = resolve_placement(op, placement)
    if t.placement == placement:
        return t
    if placement == CPU:
        return t.to_cpu()
    import_cupy(op)
    return t.to_gpu(placement.device)


def _upload(op: str, t: Tensor, placement: Placement | None) -> Tensor:
    """A tensor just built from host data, on ``placement`` or, when that is
    ``None``, on the default placement (:func:`tenferro.set_default_placement`)."""
    target = resolve_placement(op, placement)
    if target is CPU or target == t.placement:
        return t
    return _to_placement(op, t, target)


def _build(op: str, placement: Placement | None, make: Any, shape: tuple = (), dtype: DType | None = None) -> Tensor:
    """``make(xp)`` run with the array module of the target placement (``numpy``
    or ``cupy``, on the right device), so device tensors are made on the device
    without a host round trip. An allocation that fails raises
    :class:`TenferroMemoryError` naming the bytes of ``shape`` and ``dtype``."""
    target = resolve_placement(op, placement)
    try:
        if target is CPU:
            return Tensor._wrap(make(np))
        cupy = import_cupy(op)
        with device_scope(op, target):
            return Tensor._wrap(make(cupy))
    except MemoryError:
        raise out_of_memory(op, shape, dtype, target) from None


def out_of_memory(op: str, shape: tuple, dtype: DType | None, where: Placement) -> TenferroMemoryError:
    """The error for a tensor of ``shape`` and ``dtype`` that cannot be allocated."""
    n = int(np.prod(shape, dtype=object)) * (dtype.numpy.itemsize if dtype is not None else 8)
    return TenferroMemoryError(
        f"{op}: cannot allocate {fmt_bytes(n)} for a tensor of shape {fmt_shape(shape)}"
        f"{'' if dtype is None else ' and dtype ' + dtype.name} on {where}"
    )


def asarray(obj: Any, dtype: DTypeLike | None = None, placement: Placement | None = None) -> Tensor:
    """Convert ``obj`` to a column-major :class:`Tensor`.

    ``obj`` may be a Python scalar, a nested list, a NumPy/CuPy array, a Tensor
    (returned as is when dtype and placement already match), an object with
    ``__array__``, or one with ``__dlpack__``. NumPy inputs that are already
    F-contiguous with a supported dtype are wrapped without a copy. Python
    ``bool``/``int``/``float``/``complex`` map to ``bool_``/``int64``/``float64``/
    ``complex128``.
    """
    if (
        type(obj) is np.ndarray
        and dtype is None
        and obj.flags.f_contiguous
        and obj.dtype in _from_numpy
        and (get_default_placement() if placement is None else placement) == CPU
    ):
        return Tensor._wrap(obj)  # the common case: host data already canonical (what the general path gives)
    target = None if dtype is None else _dtype(dtype)
    if isinstance(obj, Tensor) and (target is None or obj.dtype is target):
        return _to_placement("asarray", obj, placement)
    if isinstance(obj, Tracer):  # a traced tensor inside grad/jvp/make_graph: stays traced
        return _traced_asarray(obj, target, placement)
    t = Tensor._wrap(array_from("asarray", obj, target))
    return _upload("asarray", t, placement) if type(t._data) is np.ndarray else _to_placement("asarray", t, placement)


tensor = asarray


def _fill_dtype(op: str, fill_value: Any, dtype: DTypeLike | None) -> DType:
    """The dtype of ``full``-like results; checks that ``fill_value`` fits."""
    weak = _weak_kind(fill_value)
    if dtype is None:
        return result_type(fill_value)
    target = _dtype(dtype)
    src_kind = weak if weak is not None else result_type(fill_value).kind
    if not _kind_fits(src_kind, target):
        raise DTypeError(
            f"{op}: fill value {fill_value!r} ({src_kind}) cannot be stored as {target.name} "
            f"without loss; use tenferro.cast for an explicit lossy conversion"
        )
    return target


def _check_fill_range(op: str, value: Any, d: DType) -> None:
    """Refuse a fill value outside ``d``'s range (``2**40`` as int32, ``10**400`` as float64)."""
    if d.is_integer and isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        info = np.iinfo(d.numpy)
        if not info.min <= value <= info.max:
            raise DTypeError(
                f"{op}: fill value {value} does not fit in {d.name}; expected {info.min} <= value "
                f"<= {info.max}, or a wider dtype"
            )
        return
    try:
        np.asarray(value, dtype=d.numpy)
    except OverflowError:
        raise DTypeError(
            f"{op}: fill value {value} is beyond the range of {d.name}; expected a magnitude "
            f"of at most {np.finfo(d.numpy).max}"
        ) from None


def zeros(shape: int | tuple[int, ...], dtype: DTypeLike = float64, placement: Placement | None = None) -> Tensor:
    """A tensor of zeros."""
    d, ext = _dtype(dtype), as_extents("zeros", shape)
    return _build("zeros", placement, lambda xp: xp.zeros(ext, dtype=d.numpy, order="F"), ext, d)


def ones(shape: int | tuple[int, ...], dtype: DTypeLike = float64, placement: Placement | None = None) -> Tensor:
    """A tensor of ones."""
    d, ext = _dtype(dtype), as_extents("ones", shape)
    return _build("ones", placement, lambda xp: xp.ones(ext, dtype=d.numpy, order="F"), ext, d)


def _full(
    op: str, shape: int | tuple[int, ...], fill_value: Any, dtype: DTypeLike | None, placement: Placement | None
) -> Tensor:
    ext = as_extents(op, shape)
    if not isinstance(fill_value, (bool, int, float, complex, np.generic, Tensor)) or (
        isinstance(fill_value, Tensor) and fill_value.shape != ()
    ):
        raise TenferroValueError(
            f"{op}: fill_value must be a number (bool, int, float, complex) or a 0-d tensor, got {fill_value!r}"
        )
    d = _fill_dtype(op, fill_value, dtype)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    _check_fill_range(op, value, d)
    return _build(op, placement, lambda xp: xp.full(ext, value, dtype=d.numpy, order="F"), ext, d)


def full(
    shape: int | tuple[int, ...], fill_value: Any, dtype: DTypeLike | None = None, placement: Placement | None = None
) -> Tensor:
    """A tensor filled with ``fill_value``; dtype defaults to ``result_type(fill_value)``.

    Raises DTypeError when ``fill_value``'s kind does not fit ``dtype`` (1.5 as int64).
    """
    return _full("full", shape, fill_value, dtype, placement)


def _like(x: Any) -> tuple[tuple[int, ...], DType, Placement | None]:
    t = x if isinstance(x, Tensor) else asarray(x)
    return tuple(t.shape), t.dtype, t.placement


def zeros_like(x: Any, dtype: DTypeLike | None = None) -> Tensor:
    """Zeros with the shape, dtype (unless given) and placement of ``x``."""
    shape, d, p = _like(x)
    return zeros(shape, d if dtype is None else dtype, placement=p)


def ones_like(x: Any, dtype: DTypeLike | None = None) -> Tensor:
    """Ones with the shape, dtype (unless given) and placement of ``x``."""
    shape, d, p = _like(x)
    return ones(shape, d if dtype is None else dtype, placement=p)


def full_like(x: Any, fill_value: Any, dtype: DTypeLike | None = None) -> Tensor:
    """``fill_value`` with the shape, dtype (unless given) and placement of ``x``."""
    shape, d, p = _like(x)
    return _full("full_like", shape, fill_value, d if dtype is None else dtype, p)


def eye(
    n: int, m: int | None = None, k: int = 0, dtype: DTypeLike = float64, placement: Placement | None = None
) -> Tensor:
    """An ``n x m`` matrix with ones on diagonal ``k`` (0: main, >0: above)."""
    rows, cols = as_extents("eye", (n, n if m is None else m))
    k, d = as_index("eye", k, "diagonal offset k", ShapeError), _dtype(dtype)
    return _build("eye", placement, lambda xp: xp.eye(rows, cols, k=k, dtype=d.numpy, order="F"), (rows, cols), d)


def arange(
    start: int | float,
    stop: int | float | None = None,
    step: int | float = 1,
    dtype: DTypeLike | None = None,
    placement: Placement | None = None,
) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; ``arange(n)`` is ``0, ..., n-1``.

    The dtype defaults to ``result_type(start, stop, step)`` (int64 for ints,
    float64 when any argument is a float).
    """
    if stop is None:
        start, stop = 0, start
    args = (start, stop, step)
    for a in args:
        if _weak_kind(a) in (None, "complex") and not isinstance(a, (np.integer, np.floating)):
            raise TenferroValueError(f"arange: start, stop and step must be real numbers, got {a!r}")
    for a in args:
        if not np.isfinite(a):
            raise TenferroValueError(f"arange: start, stop and step must be finite, got {a!r}")
    if step == 0:
        raise TenferroValueError("arange: step must be nonzero")
    d = result_type(*args) if dtype is None else _dtype(dtype)
    kind = result_type(*args).kind
    if d.kind == "bool" or not _kind_fits(kind, d):
        raise DTypeError(
            f"arange: cannot produce {d.name} values from arguments of kind {kind}; "
            "expected an integer or floating dtype that holds them"
        )
    n = max(0, int(np.ceil((stop - start) / step)))
    return _build("arange", placement, lambda xp: xp.arange(start, stop, step, dtype=d.numpy), (n,), d)


def linspace(
    start: float | complex,
    stop: float | complex,
    num: int = 50,
    endpoint: bool = True,
    dtype: DTypeLike = float64,
    placement: Placement | None = None,
) -> Tensor:
    """``num`` evenly spaced samples from ``start`` to ``stop`` (inclusive if ``endpoint``)."""
    d = _dtype(dtype)
    if not d.is_inexact:
        raise DTypeError(f"linspace: dtype must be floating or complex, got {d.name}")
    if (isinstance(start, complex) or isinstance(stop, complex)) and not d.is_complex:
        raise DTypeError(f"linspace: complex endpoints need a complex dtype, got {d.name}")
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float, complex, np.number)):
            raise TenferroValueError(f"linspace: {name} must be a number, got {v!r}")
        if not np.isfinite(v):
            raise TenferroValueError(f"linspace: {name} must be finite, got {v!r}")
    num = as_index("linspace", num, "num", TenferroValueError)
    if num < 0:
        raise TenferroValueError(f"linspace: num must be non-negative, got {num}")
    if d.is_complex:  # CuPy's linspace takes real endpoints only: made on the host, then placed
        return _upload(
            "linspace", Tensor._wrap(np.linspace(start, stop, num=num, endpoint=endpoint, dtype=d.numpy)), placement
        )
    return _build(
        "linspace", placement, lambda xp: xp.linspace(start, stop, num=num, endpoint=endpoint, dtype=d.numpy), (num,), d
    )


def scalar_tensor(value: Any, dtype: DType, op: str = "operand", placement: Placement = CPU) -> Tensor:
    """The 0-d tensor ``value`` of ``dtype`` on ``placement``; a value that does not
    fit (``2**40`` in int32) raises :class:`DTypeError` naming ``op``. On a GPU the
    value is written by a fill kernel (a kernel argument, not a host copy)."""
    try:
        host = np.asarray(value, dtype=dtype.numpy)
    except (OverflowError, TypeError, ValueError):
        raise DTypeError(
            f"{op}: the Python scalar {value!r} cannot be represented in dtype {dtype.name}; "
            f"expected a value within the range of {dtype.name} (or convert the tensor to a wider dtype first)"
        ) from None
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


def _traced_asarray(obj: Any, target: DType | None, placement: Placement | None) -> Any:
    aval = obj.aval
    if type(aval) is not TensorType:
        raise DTypeError(f"asarray: a traced value of type {aval} is not a tensor")
    if placement is not None and placement != aval.placement:
        raise PlacementError(
            f"asarray: a traced tensor on {aval.placement} cannot be moved to {placement} "
            "implicitly; move it with .to_cpu() / .to_gpu() explicitly"
        )
    if target is None or target is aval.dtype:
        return obj
    return convert(obj, target)


def _src_dtype(op: str, x: Any) -> tuple[Any, DType]:
    """``x`` as a tensor (or a traced tensor) and its dtype."""
    if isinstance(x, Tracer):
        return x, _traced_asarray(x, None, None).aval.dtype
    t = asarray(x)
    return t, t.dtype


def convert(x: Any, dtype: DTypeLike) -> Tensor:
    """Checked dtype conversion: only lossless (lattice-reachable) conversions.

    Raises DTypeError for float/complex -> int, complex -> real, int -> bool and
    precision narrowing; use :func:`cast` for those. Differentiable (linear).
    """
    t, src = _src_dtype("convert", x)
    dst = _dtype(dtype)
    if src is dst:
        return t
    if not can_convert(src, dst):
        raise DTypeError(
            f"convert: cannot losslessly convert {src.name} to {dst.name}; "
            f"use tenferro.cast(x, {dst.name}) for an explicit lossy conversion"
        )
    return convert_element_type(t, dst)


def cast(x: Any, dtype: DTypeLike) -> Tensor:
    """Explicit, possibly lossy dtype conversion.

    complex -> real keeps the real part (no ComplexWarning); float -> int
    truncates toward zero (NaN/inf and out-of-range values give unspecified
    integers); anything -> bool is truthiness (nonzero -> True).
    """
    t, src = _src_dtype("cast", x)
    dst = _dtype(dtype)
    if src is dst:
        return t
    return convert_element_type(t, dst)
