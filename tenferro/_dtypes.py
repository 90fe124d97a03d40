"""Runtime dtype tags and tenferro's promotion lattice.

Supported dtypes: ``bool_``, ``int32``, ``int64``, ``float32``, ``float64``,
``complex64``, ``complex128``. Each is a :class:`DType` singleton; compare them
with ``is`` or ``==`` (identity).

Promotion lattice
-----------------
Like JAX's, the lattice is drawn with an edge ``a -> b`` whenever ``a`` promotes
to ``b``::

    bool_ -> int32 -> int64 -> float32 -> float64 -> complex128
                                  |                      ^
                                  +----> complex64 ------+

``result_type(a, b)`` is the least upper bound (join) of ``a`` and ``b``:

* kinds are ordered ``bool < int < float < complex``; within a kind the wider
  dtype wins;
* mixing an integer with a floating dtype gives that floating dtype
  (``int64`` with ``float32`` -> ``float32``, as in JAX and PyTorch), so that
  float32 computations stay float32;
* ``float64`` with ``complex64`` -> ``complex128`` (the precision of neither
  operand is lost).

Python scalars are *weak*: they take part in the kind but not the width.
``float32`` with a Python ``float`` stays ``float32``; ``float32`` with a Python
``complex`` gives ``complex64``; ``int32`` with a Python ``int`` stays ``int32``;
``int32`` with a Python ``float`` gives ``float64`` (the default float). When only
weak scalars are present, the default dtype of the highest kind is used
(``bool_``, ``int64``, ``float64``, ``complex128``). NumPy scalars
(``np.float32(1)``) are strong.

Conversions
-----------
``can_convert(src, dst)`` is true exactly when ``dst`` is reachable from ``src``
in the lattice (``result_type(src, dst) is dst``). It therefore refuses
float -> int, complex -> real, int -> bool and every precision narrowing.
Integer -> floating is accepted because the lattice accepts it, although an
``int64`` beyond 2**24 (float32) or 2**53 (float64) is rounded.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from ._errors import DTypeError, TenferroValueError

__all__ = [
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
    "DTypeLike",
]

DTypeLike = Any  # a DType, a name such as "float64", a numpy dtype, or float/complex/int/bool

_KIND_ORDER: Final = {"bool": 0, "int": 1, "float": 2, "complex": 3}


class DType:
    """A tenferro dtype tag: an immutable, hashable singleton.

    Attributes: ``name``, ``numpy`` (the numpy dtype), ``kind`` (one of
    ``'bool'``, ``'int'``, ``'float'``, ``'complex'``) and ``itemsize`` (bytes).
    ``np.dtype(tenferro.float64)`` also works, through the ``dtype`` attribute.
    """

    __slots__ = ("name", "numpy", "kind", "itemsize", "_real", "_complex")

    name: str
    numpy: np.dtype
    kind: str
    itemsize: int

    def __init__(self, name: str, np_dtype: np.dtype, kind: str) -> None:
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "numpy", np.dtype(np_dtype))
        set_(self, "kind", kind)
        set_(self, "itemsize", int(np.dtype(np_dtype).itemsize))
        set_(self, "_real", None)
        set_(self, "_complex", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"DType is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"DType is immutable; cannot delete {name!r}")

    def __repr__(self) -> str:
        return f"tenferro.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (dtype, (self.name,))

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype (lets ``np.dtype(tenferro.float32)`` work)."""
        return self.numpy

    @property
    def is_complex(self) -> bool:
        """True for complex64 and complex128."""
        return self.kind == "complex"

    @property
    def is_floating(self) -> bool:
        """True for real and complex floating dtypes."""
        return self.kind in ("float", "complex")

    @property
    def is_inexact(self) -> bool:
        """Same as :attr:`is_floating` (NumPy's name)."""
        return self.kind in ("float", "complex")

    @property
    def is_integer(self) -> bool:
        """True for int32 and int64."""
        return self.kind == "int"

    @property
    def real_dtype(self) -> DType:
        """complex128 -> float64, complex64 -> float32; other dtypes map to themselves."""
        return self._real if self._real is not None else self

    @property
    def complex_dtype(self) -> DType:
        """float32 -> complex64, float64 -> complex128; complex maps to itself.

        Raises DTypeError for bool and integer dtypes.
        """
        if self._complex is None:
            raise DTypeError(
                f"complex_dtype: {self.name} has no complex counterpart; expected a floating or complex dtype"
            )
        return self._complex


bool_ = DType("bool", np.dtype(np.bool_), "bool")
int32 = DType("int32", np.dtype(np.int32), "int")
int64 = DType("int64", np.dtype(np.int64), "int")
float32 = DType("float32", np.dtype(np.float32), "float")
float64 = DType("float64", np.dtype(np.float64), "float")
complex64 = DType("complex64", np.dtype(np.complex64), "complex")
complex128 = DType("complex128", np.dtype(np.complex128), "complex")

_ALL: Final = (bool_, int32, int64, float32, float64, complex64, complex128)
for _r, _c in ((float32, complex64), (float64, complex128)):
    object.__setattr__(_r, "_complex", _c)
    object.__setattr__(_c, "_complex", _c)
    object.__setattr__(_c, "_real", _r)

_SUPPORTED_NAMES: Final = ", ".join(d.name for d in _ALL)

# Hot path: numpy dtype -> DType. Keys compare by value, so any native-order
# numpy dtype object of the right type hits.
_from_numpy: Final[dict[np.dtype, DType]] = {d.numpy: d for d in _ALL}

_BY_NAME: Final[dict[str, DType]] = {d.name: d for d in _ALL}
_BY_NAME["bool_"] = bool_
_PY_TYPES: Final[dict[type, DType]] = {bool: bool_, int: int64, float: float64, complex: complex128}
_DEFAULT_OF_KIND: Final = {"bool": bool_, "int": int64, "float": float64, "complex": complex128}

# Lattice: immediate successors; the join table is derived from it.
_UP: Final[dict[DType, tuple[DType, ...]]] = {
    bool_: (int32,),
    int32: (int64,),
    int64: (float32,),
    float32: (float64, complex64),
    float64: (complex128,),
    complex64: (complex128,),
    complex128: (),
}


def _ancestors(d: DType) -> frozenset[DType]:
    out = {d}
    stack = [d]
    while stack:
        for u in _UP[stack.pop()]:
            if u not in out:
                out.add(u)
                stack.append(u)
    return frozenset(out)


_ANCESTORS: Final = {d: _ancestors(d) for d in _ALL}


def _join(a: DType, b: DType) -> DType:
    common = _ANCESTORS[a] & _ANCESTORS[b]
    (least,) = [c for c in common if common <= _ANCESTORS[c]]
    return least


_JOIN: Final[dict[tuple[DType, DType], DType]] = {(a, b): _join(a, b) for a in _ALL for b in _ALL}


def dtype(obj: DTypeLike) -> DType:
    """Normalise ``obj`` to a :class:`DType`.

    Accepts a DType, a name (``"float64"``, ``"bool"``, ``"f8"``), a numpy dtype
    or scalar type, or a Python type (``float`` -> float64, ``complex`` ->
    complex128, ``int`` -> int64, ``bool`` -> bool_). Raises DTypeError for
    anything else (float16, uint8, object, strings, ...).

    >>> dtype("complex128")
    tenferro.complex128
    """
    if isinstance(obj, DType):
        return obj
    if isinstance(obj, np.dtype):
        d = _from_numpy.get(obj)
        if d is not None:
            return d
        return _lookup_numpy(obj, "dtype", repr(obj))
    if isinstance(obj, str):
        d = _BY_NAME.get(obj)
        if d is not None:
            return d
    elif isinstance(obj, type) and obj in _PY_TYPES:
        return _PY_TYPES[obj]
    try:
        nd = np.dtype(obj)
    except (TypeError, ValueError) as exc:
        raise DTypeError(f"dtype: {obj!r} is not a dtype; expected one of {_SUPPORTED_NAMES}") from exc
    return _lookup_numpy(nd, "dtype", repr(obj))


def _lookup_numpy(nd: np.dtype, op: str, what: str) -> DType:
    """Map a numpy dtype to a DType (accepting non-native byte order) or raise."""
    d = _from_numpy.get(nd)
    if d is None and nd.byteorder not in ("=", "|"):
        d = _from_numpy.get(nd.newbyteorder("="))
    if d is None:
        raise DTypeError(f"{op}: unsupported dtype {nd} (from {what}); supported dtypes are {_SUPPORTED_NAMES}")
    return d


def _weak_kind(x: object) -> str | None:
    """The kind of a Python scalar (weakly typed), or None if ``x`` is not one."""
    t = type(x)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is float:
        return "float"
    if t is complex:
        return "complex"
    return None


def _strong_dtype(x: object) -> DType:
    """The (strong) dtype of a DType-like, a Tensor, an array or a numpy scalar."""
    if isinstance(x, DType):
        return x
    dt = getattr(x, "dtype", None)
    if dt is not None and not isinstance(x, type):
        if isinstance(dt, DType):
            return dt
        if isinstance(dt, np.dtype):
            return _lookup_numpy(dt, "result_type", f"an operand of type {type(x).__name__}")
    return dtype(x)


def result_type(*args: object) -> DType:
    """The promoted dtype of dtypes, tensors, arrays and Python scalars.

    Follows the lattice in the module docstring; Python scalars are weak.

    >>> result_type(float32, 1.0), result_type(float32, 1j), result_type(int64, float32)
    (tenferro.float32, tenferro.complex64, tenferro.float32)
    """
    if not args:
        raise TenferroValueError("result_type: expected at least one dtype, tensor or scalar; got none")
    strong: DType | None = None
    weak = -1
    for a in args:
        k = _weak_kind(a)
        if k is not None:
            weak = max(weak, _KIND_ORDER[k])
            continue
        d = _strong_dtype(a)
        strong = d if strong is None else _JOIN[(strong, d)]
    if weak < 0:
        assert strong is not None
        return strong
    weak_kind = ("bool", "int", "float", "complex")[weak]
    if strong is None:
        return _DEFAULT_OF_KIND[weak_kind]
    if weak <= _KIND_ORDER[strong.kind]:
        return strong
    if weak_kind == "complex" and strong.kind == "float":
        return strong.complex_dtype
    return _JOIN[(strong, _DEFAULT_OF_KIND[weak_kind])]


def can_convert(src: DTypeLike, dst: DTypeLike) -> bool:
    """True when ``src`` converts to ``dst`` without loss per the lattice.

    Same dtype or promotion-reachable: ``result_type(src, dst) is dst``.
    """
    s, d = dtype(src), dtype(dst)
    return _JOIN[(s, d)] is d


def _kind_fits(value_kind: str, target: DType) -> bool:
    """Whether a weakly typed value of ``value_kind`` may be stored as ``target``."""
    return _KIND_ORDER[value_kind] <= _KIND_ORDER[target.kind]
