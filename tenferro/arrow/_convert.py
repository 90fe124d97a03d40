"""Batches of same-shape tensors as Arrow ``fixed_shape_tensor`` arrays.

:func:`to_arrow` turns a list of tensors (``None`` for a null entry) or one tensor
with a batch axis into a ``pyarrow.FixedShapeTensorArray``; :func:`from_arrow`
turns one back into a list of tensors (``None`` for nulls) or a stacked tensor.

Layout (see :mod:`tenferro.arrow._layout` for the permutation convention):
tenferro writes each tensor column-major, which Arrow expresses as physical shape
``reversed(shape)`` with permutation ``(n-1, ..., 0)``; 1-d tensors need no
permutation. When copies happen:

* ``to_arrow(t, batch_axis=-1)`` of a canonical (F-contiguous) tensor ``t`` of shape
  ``(*shape, N)``: no copy, the Arrow values buffer *is* ``t``'s memory. Any batch
  tensor whose batch axis has the largest stride and whose other axes are
  column-major or row-major contiguous is shared the same way (row-major gets the
  identity permutation). Other batch axes or layouts: one copy into column-major.
* ``to_arrow([t0, t1, ...])``: one copy (Arrow needs all tensors in one buffer).
* ``from_arrow(a)`` of a column-major array (what tenferro writes, or any producer
  using the reversed permutation): no copy, each tensor (or the stacked tensor,
  with ``batch_axis=-1``) is a view of the Arrow buffer. Row-major arrays (the
  identity permutation, what most producers write) and other permutations are
  copied into column-major order, as :func:`tenferro.asarray` copies C-ordered
  NumPy arrays; ``copy=False`` keeps them as strided views instead.

Element types: ``int32``, ``int64``, ``float32``, ``float64``, and complex through
(re, im) pairs. Arrow has no complex type, so a complex tensor of shape ``s`` is
stored as a real tensor of shape ``(*s, 2)`` whose trailing axis holds the real and
imaginary parts, i.e. ``torch.view_as_real``'s convention, without a copy.

How complex-ness is recorded: the ``fixed_shape_tensor`` type has no free-form
metadata (pyarrow keeps only shape, dim_names and permutation, and an array has no
field metadata), so the marker lives in ``dim_names``, which every Arrow and
Parquet round trip keeps (IPC, Parquet's stored schema, ``table.column``, chunked
arrays, slices, ``concat_arrays``): the trailing logical axis of a complex array is
named ``"re_im"`` (:data:`COMPLEX_AXIS_NAME`) and its other axes carry the user's
names or, when none were given, the empty string (Arrow names all axes or none).
:func:`from_arrow` reads a ``float32``/``float64`` array whose trailing axis has
extent 2 and that name as complex; any other array (e.g. ``(N, 3, 2)`` real data
from another producer) reads as real. ``complex=True`` reads foreign (re, im)
pairs without the marker, ``complex=False`` keeps marked pairs real. So that a
real tensor is never mistaken for a complex one, ``"re_im"`` and the empty string
are refused as names given to :func:`to_arrow`. ``bool`` is refused: Arrow packs booleans eight
to a byte, which has no byte-strided layout to share. 0-d tensors are refused:
Arrow's fixed-shape tensor type requires at least one dimension. Size-0 dimensions work. Nulls exist only per tensor: a null entry
is ``None``; nulls inside a tensor are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._dtypes import DType, _lookup_numpy
from .._errors import (
    AxisError,
    DTypeError,
    PlacementError,
    ShapeError,
    TenferroTypeError,
    TenferroValueError,
    fmt_shape,
)
from .._shape import as_index
from .._tensor import Tensor
from ._deps import import_pyarrow
from ._layout import (
    check_dim_names,
    check_permutation,
    f_order_permutation,
    is_identity,
    logical_batch_view,
    logical_names,
    logical_shape,
    physical_names,
)

__all__ = ["to_arrow", "from_arrow", "tensor_info", "ArrowTensorInfo", "COMPLEX_AXIS_NAME"]

COMPLEX_AXIS_NAME = "re_im"
_VALUE_DTYPES = ("int32", "int64", "float32", "float64")


@dataclass(frozen=True)
class ArrowTensorInfo:
    """What a ``fixed_shape_tensor`` type says, in tenferro's (logical) terms.

    ``shape`` is the logical shape of each tensor and ``dim_names`` the names in
    logical order (None if absent); ``physical_shape`` and ``permutation`` are the
    Arrow type's own fields (``shape[i] == physical_shape[permutation[i]]``);
    ``dtype`` is the element type. ``is_complex`` says that the trailing axis holds
    (re, im) pairs of complex tensors (it is named :data:`COMPLEX_AXIS_NAME`, see the
    module docstring): ``from_arrow`` then returns ``dtype.complex_dtype`` tensors of
    shape ``shape[:-1]``. In ``dim_names`` the empty string marks an unnamed axis.
    """

    shape: tuple[int, ...]
    dtype: DType
    dim_names: tuple[str, ...] | None
    physical_shape: tuple[int, ...]
    permutation: tuple[int, ...]
    is_complex: bool = False

    @property
    def tensor_dim_names(self) -> tuple[str, ...] | None:
        """The names of the tensors' axes as :func:`from_arrow` returns them: without the
        (re, im) axis of complex data, and None when no axis has a name."""
        names = self.dim_names
        if names is not None and self.is_complex:
            names = names[:-1]
        return None if names is None or not any(names) else names


# -- checks shared by both directions -------------------------------------------------------


def _refuse_bool(op: str) -> DTypeError:
    return DTypeError(
        f"{op}: bool tensors are not supported: Arrow packs booleans eight to a byte, so a bool "
        "tensor has no byte-strided layout to share; "
        "cast to int32 first (tenferro.cast(t, tenferro.int32))"
    )


def _refuse_0d(op: str) -> ShapeError:
    return ShapeError(
        f"{op}: 0-d tensors are not supported: Arrow's fixed_shape_tensor type requires at least "
        "one dimension; reshape to shape (1,) first"
    )


def _host_array(op: str, t: Tensor, what: str) -> np.ndarray:
    arr = t._data
    if not isinstance(arr, np.ndarray):
        raise PlacementError(
            f"{op}: {what} lives on {t.placement}; Arrow arrays live in host memory, so move it "
            "with .to_cpu() first (tenferro never transfers implicitly)"
        )
    dt = t.dtype
    if dt.kind == "bool":
        raise _refuse_bool(op)
    if arr.ndim == 0:
        raise _refuse_0d(op)
    return arr


def _axis(op: str, axis: Any, ndim: int) -> int:
    a = as_index(op, axis, "batch_axis")  # AxisError for floats and booleans (True is not axis 1)
    if not -ndim <= a < ndim:
        raise AxisError(
            f"{op}: batch_axis {a} is out of range for rank {ndim}; expected {-ndim} <= batch_axis < {ndim}"
        )
    return a % ndim


# -- tenferro -> Arrow ------------------------------------------------------------------------


def _from_batch_tensor(op: str, t: Tensor, batch_axis: Any) -> tuple[np.ndarray, tuple[int, ...]]:
    """``(physical, perm)``: a C-contiguous ``(N, *physical_shape)`` array and the permutation."""
    arr = _host_array(op, t, "the batch tensor")
    b = _axis(op, batch_axis, arr.ndim)
    if arr.ndim == 1:
        raise _refuse_0d(op)
    rest = [a for a in range(arr.ndim) if a != b]
    k = len(rest)
    for perm in (f_order_permutation(k), tuple(range(k))):
        inverse = np.argsort(perm)
        view = arr.transpose((b, *(rest[j] for j in inverse)))
        if view.flags.c_contiguous:
            return view, perm  # no copy: the batch tensor's memory is the Arrow buffer
    perm = f_order_permutation(k)
    inverse = np.argsort(perm)
    return np.ascontiguousarray(arr.transpose((b, *(rest[j] for j in inverse)))), perm


def _from_list(op: str, items: Sequence[Any]) -> tuple[np.ndarray, tuple[int, ...], np.ndarray | None]:
    """``(physical, perm, valid)`` for a list of tensors and ``None``s (one copy, column-major)."""
    first: Tensor | None = None
    for i, t in enumerate(items):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TenferroTypeError(
                f"{op}: entry {i} is a {type(t).__name__}; expected a tenferro Tensor or None "
                "(convert arrays with tenferro.asarray)"
            )
        if first is None:
            first = t
            _host_array(op, t, f"entry {i}")
        elif t.shape != first.shape or t.dtype is not first.dtype:
            raise (ShapeError if t.shape != first.shape else DTypeError)(
                f"{op}: entry {i} has shape {fmt_shape(t.shape)} and dtype {t.dtype.name}, but the first tensor "
                f"has shape {fmt_shape(first.shape)} and dtype {first.dtype.name}; a fixed-shape tensor array "
                "needs the same shape and dtype for every entry"
            )
        elif not isinstance(t._data, np.ndarray):
            _host_array(op, t, f"entry {i}")
    if first is None:
        raise TenferroValueError(
            f"{op}: cannot infer the shape and dtype of a batch with no tensors "
            f"({len(items)} entries, all None); expected at least one Tensor"
        )
    perm = f_order_permutation(first.ndim)
    physical = np.empty((len(items), *reversed(first.shape)), dtype=first.dtype.numpy)
    valid = np.fromiter((t is not None for t in items), dtype=bool, count=len(items))
    for i, t in enumerate(items):
        physical[i] = 0 if t is None else t._data.T  # the transpose of a column-major tensor is row-major
    return physical, perm, (None if valid.all() else valid)


def _build(
    pa: Any, physical: np.ndarray, perm: tuple[int, ...], dtype: DType, valid: np.ndarray | None, dim_names: Any
) -> Any:
    """The FixedShapeTensorArray over ``physical``'s memory (C-contiguous ``(N, *shape)``)."""
    n, shape = physical.shape[0], physical.shape[1:]
    names = check_dim_names("to_arrow", dim_names, len(shape))
    if names is not None and COMPLEX_AXIS_NAME in names:
        raise TenferroValueError(
            f"to_arrow: the dimension name {COMPLEX_AXIS_NAME!r} is reserved: it marks the "
            f"(re, im) axis of complex tensors; got dim_names {names!r}"
        )
    flat = physical.reshape(-1)  # a view: physical is C-contiguous
    if dtype.is_complex:  # (re, im) pairs: one more, innermost, physical axis, named as the marker
        flat = flat.view(dtype.real_dtype.numpy)
        shape, perm = (*shape, 2), (*perm, len(shape))
        names = (*(("",) * (len(shape) - 1) if names is None else names), COMPLEX_AXIS_NAME)
    value_type = pa.from_numpy_dtype(flat.dtype)
    typ = pa.fixed_shape_tensor(
        value_type,
        list(shape),
        dim_names=None if names is None else list(physical_names(names, perm)),
        permutation=None if is_identity(perm) else list(perm),
    )
    values = pa.Array.from_buffers(value_type, flat.size, [None, pa.py_buffer(flat)])
    validity = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    storage = pa.Array.from_buffers(typ.storage_type, n, [validity], children=[values])
    return pa.ExtensionArray.from_storage(typ, storage)


def to_arrow(
    tensors: Tensor | Sequence[Tensor | None], dim_names: Sequence[str] | None = None, *, batch_axis: int | None = None
) -> Any:
    """A ``pyarrow.FixedShapeTensorArray`` holding a batch of same-shape tensors.

    ``tensors`` is a list of tensors (``None`` for a null entry), or one tensor whose
    axis ``batch_axis`` indexes the batch (``batch_axis=-1``, tenferro's trailing-batch
    convention, shares a canonical tensor's memory). ``dim_names`` names the
    tensors' axes in logical (tenferro) order. Complex tensors become (re, im)
    pairs; bool and 0-d tensors raise (see the module docstring for why, and for
    when a copy happens).

    >>> import tenferro as tf
    >>> a = tf.arrow.to_arrow(tf.zeros((2, 3, 5)), ["i", "j"], batch_axis=-1)
    >>> len(a), a.type.shape, a.type.permutation, a.type.dim_names
    (5, [3, 2], [1, 0], ['j', 'i'])
    """
    op = "to_arrow"
    pa = import_pyarrow(op)
    if isinstance(tensors, Tensor):
        if batch_axis is None:
            raise TenferroValueError(
                f"{op}: a single Tensor is read as a batch, so name its batch axis with "
                "batch_axis= (-1, tenferro's trailing-batch convention, shares memory); "
                "pass a list for separate tensors"
            )
        physical, perm = _from_batch_tensor(op, tensors, batch_axis)
        return _build(pa, physical, perm, tensors.dtype, None, dim_names)
    if isinstance(tensors, (list, tuple)):
        if batch_axis is not None:
            raise TenferroValueError(f"{op}: batch_axis applies to a single batch Tensor, not to a list of tensors")
        physical, perm, valid = _from_list(op, tensors)
        first = next(t for t in tensors if t is not None)
        return _build(pa, physical, perm, first.dtype, valid, dim_names)
    raise TenferroTypeError(
        f"{op}: expected a list of Tensors (None for nulls) or one batch Tensor with "
        f"batch_axis=, got {type(tensors).__name__}"
    )


# -- Arrow -> tenferro ------------------------------------------------------------------------


def _tensor_type(pa: Any, op: str, obj: Any) -> Any:
    typ = obj.type if isinstance(obj, (pa.Array, pa.ChunkedArray, pa.Field)) else obj
    if not isinstance(typ, pa.FixedShapeTensorType):
        raise TenferroTypeError(
            f"{op}: expected an Arrow fixed_shape_tensor array (pyarrow.FixedShapeTensorArray "
            f"or a chunked array of them), got {typ if isinstance(typ, pa.DataType) else type(obj).__name__}"
        )
    return typ


def _info(pa: Any, op: str, typ: Any) -> ArrowTensorInfo:
    value_type = typ.value_type
    if pa.types.is_boolean(value_type):
        raise _refuse_bool(op)
    name = str(value_type)
    if name == "double":
        name = "float64"
    elif name == "float":
        name = "float32"
    if name not in _VALUE_DTYPES:
        raise DTypeError(
            f"{op}: Arrow element type {value_type} is not supported; expected one of "
            "int32, int64, float (float32), double (float64)"
        )
    physical = tuple(int(d) for d in typ.shape)
    if not physical:
        raise _refuse_0d(op)
    perm = check_permutation(op, typ.permutation, len(physical))
    names = None if typ.dim_names is None else logical_names(tuple(typ.dim_names), perm)
    shape = logical_shape(physical, perm)
    dtype = _lookup_numpy(np.dtype(name), op, "the Arrow element type")
    is_complex = (
        names is not None
        and names[-1] == COMPLEX_AXIS_NAME
        and shape[-1] == 2
        and len(shape) >= 2
        and dtype.kind == "float"
    )
    return ArrowTensorInfo(
        shape=shape, dtype=dtype, dim_names=names, physical_shape=physical, permutation=perm, is_complex=is_complex
    )


def tensor_info(obj: Any) -> ArrowTensorInfo:
    """Logical shape, element dtype, dimension names and layout of a fixed-shape tensor array or type."""
    pa = import_pyarrow("tensor_info")
    return _info(pa, "tensor_info", _tensor_type(pa, "tensor_info", obj))


def _chunk_view(pa: Any, op: str, chunk: Any, info: ArrowTensorInfo) -> tuple[np.ndarray, np.ndarray | None]:
    """``(x, valid)``: the ``(N, *shape)`` logical view of the chunk's buffer (no copy) and its validity."""
    storage = chunk.storage
    n = len(chunk)
    size = storage.type.list_size
    values = storage.values
    dt = info.dtype.numpy
    total = n * size
    start = values.offset + storage.offset * size
    data = values.buffers()[1]
    flat = np.empty(0, dt) if total == 0 else np.frombuffer(data, dtype=dt, count=total, offset=start * dt.itemsize)
    valid = None if chunk.null_count == 0 else storage.is_valid().to_numpy(zero_copy_only=False)
    if values.null_count and total:
        inner = values.slice(storage.offset * size, total).is_null().to_numpy(zero_copy_only=False)
        bad = inner.reshape(n, size).any(axis=1)
        if valid is not None:
            bad &= valid
        if bad.any():
            raise TenferroValueError(
                f"{op}: tensor {int(np.argmax(bad))} has null elements; only whole tensors "
                "may be null (element-level nulls have no tensor meaning)"
            )
    return logical_batch_view(flat, n, info.physical_shape, info.permutation), valid


def _as_complex(op: str, x: np.ndarray, info: ArrowTensorInfo, copy: bool | None) -> np.ndarray:
    """Read the trailing size-2 axis of ``x`` (``(N, *shape, 2)``) as (re, im) pairs."""
    if info.dtype.kind != "float" or info.shape[-1] != 2 or len(info.shape) < 2:
        raise ShapeError(
            f"{op}: complex=True needs float32/float64 tensors whose last axis has extent 2 (re, im) "
            f"and at least one other axis, got {info.dtype.name} tensors of shape {fmt_shape(info.shape)}"
        )
    cdt = info.dtype.complex_dtype.numpy
    if x.shape[0] == 0 or x.size == 0:
        return np.empty(x.shape[:-1], dtype=cdt)
    if x.strides[-1] == x.itemsize:  # pairs are adjacent in memory: reinterpret, no copy
        return x.view(cdt)[..., 0]
    if copy is False:
        raise TenferroValueError(
            f"{op}: the (re, im) axis is not innermost in memory (permutation "
            f"{info.permutation}), so complex values cannot be read without a copy; "
            "use copy=None"
        )
    out = np.empty(x.shape[:-1], dtype=cdt)
    out.real, out.imag = x[..., 0], x[..., 1]
    return out


def _canonical(x: np.ndarray, copy: bool | None) -> np.ndarray:
    if copy is True:
        return np.array(x, order="F", copy=True)
    if copy is False or x.flags.f_contiguous:
        return x
    return np.asfortranarray(x)


def _chunks(pa: Any, op: str, array: Any) -> list[Any]:
    _tensor_type(pa, op, array)
    if isinstance(array, pa.ChunkedArray):
        return list(array.chunks)
    if isinstance(array, pa.Array):
        return [array]
    raise TenferroTypeError(f"{op}: expected a pyarrow array or chunked array, got {type(array).__name__}")


def _flag(op: str, name: str, value: Any, allow_none: bool = False) -> bool | None:
    """``value`` if it is a bool (or None where allowed), else a typed error: a string such
    as ``"no"`` is truthy, so accepting any object would silently mean True."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    expected = "None, True or False" if allow_none else "True or False"
    raise TenferroValueError(f"{op}: {name} must be {expected}, got {value!r} of type {type(value).__name__}")


def from_arrow(
    array: Any,
    *,
    stack: bool = False,
    batch_axis: int | None = None,
    complex: bool | None = None,  # noqa: A002
    copy: bool | None = None,
) -> list[Tensor | None] | Tensor:
    """Tensors from a ``fixed_shape_tensor`` array (or a chunked array of them).

    Returns a list with one tensor per entry (``None`` for null entries), or with
    ``stack=True`` one tensor with the batch at ``batch_axis`` (default ``-1``, the
    trailing-batch convention; a batch with nulls cannot be stacked; ``batch_axis``
    without ``stack=True`` raises). Complex arrays written by :func:`to_arrow` come
    back complex (their (re, im) axis is marked, see the module docstring);
    ``complex=True`` reads the trailing size-2 axis of unmarked (foreign) data as
    (re, im) pairs and ``complex=False`` keeps marked pairs real. Column-major
    arrays come back without a copy; others are copied into column-major order
    unless ``copy=False`` (strided views); ``copy=True`` always copies. A stacked
    chunked array of several chunks is always copied once.

    >>> import tenferro as tf
    >>> z = tf.asarray([[1 + 2j, 3 - 1j]])
    >>> back = tf.arrow.from_arrow(tf.arrow.to_arrow([z]))
    >>> print(back[0].dtype.name, tuple(back[0].shape))
    complex128 (1, 2)
    """
    op = "from_arrow"
    pa = import_pyarrow(op)
    copy = _flag(op, "copy", copy, allow_none=True)
    stack = _flag(op, "stack", stack)
    complex = _flag(op, "complex", complex, allow_none=True)  # noqa: A001
    if batch_axis is not None and not stack:
        raise TenferroValueError(
            f"{op}: batch_axis={batch_axis!r} places the batch axis of a stacked tensor, so it "
            "needs stack=True; without it the result is a list"
        )
    batch_axis = -1 if batch_axis is None else batch_axis
    chunks = _chunks(pa, op, array)
    info = _info(pa, op, chunks[0].type if chunks else array.type)
    if complex is None:
        complex = info.is_complex  # noqa: A001
    parts = []
    for chunk in chunks:
        x, valid = _chunk_view(pa, op, chunk, info)
        if complex:
            x = _as_complex(op, x, info, copy)
        parts.append((x, valid))
    shape = info.shape[:-1] if complex else info.shape
    dt = info.dtype.complex_dtype.numpy if complex else info.dtype.numpy
    if stack:
        for base, (_, valid) in zip(np.cumsum([0] + [len(c) for c in chunks]), parts):
            if valid is not None and not valid.all():
                raise TenferroValueError(
                    f"{op}: tensor {int(base + np.argmin(valid))} is null, so the batch cannot "
                    "be stacked into one tensor; use stack=False for a list with None entries"
                )
        b = _axis(op, batch_axis, len(shape) + 1)
        if len(parts) == 1:
            return Tensor._wrap(_canonical(np.moveaxis(parts[0][0], 0, b), copy))
        if copy is False and parts:
            raise TenferroValueError(
                f"{op}: a chunked array of {len(parts)} chunks cannot be stacked without a copy; "
                "use copy=None or combine the chunks first"
            )
        n = sum(x.shape[0] for x, _ in parts)
        out_shape = list(shape)
        out_shape.insert(b, n)
        out = np.empty(out_shape, dtype=dt, order="F")
        dest = np.moveaxis(out, b, 0)
        lo = 0
        for x, _ in parts:
            dest[lo : lo + x.shape[0]] = x
            lo += x.shape[0]
        return Tensor._wrap(out)
    result: list[Tensor | None] = []
    for x, valid in parts:
        if x.shape[0] and (copy is True or (copy is None and not x[0].flags.f_contiguous)):
            y = np.array(np.moveaxis(x, 0, -1), order="F", copy=True)  # one copy for the chunk
            items = [y[..., i] for i in range(x.shape[0])]
        else:
            items = [x[i] for i in range(x.shape[0])]
        result.extend(None if valid is not None and not valid[i] else Tensor._wrap(a) for i, a in enumerate(items))
    return result
