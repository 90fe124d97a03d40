"""Tracers: values being traced by a transformation, and the lookups that see
through them (:func:`aval_of`, :func:`vspace_of`).

A :class:`Tracer` behaves like its value type: operators and attributes are
forwarded to the vector space registered for its abstract value. Each
transformation subclasses it (``JVPTracer``, ``GraphTracer``).
"""

from __future__ import annotations

import numbers

from typing import Any

from ._errors import InvalidArgumentError, TracerConversionError, UnregisteredTypeError
from ._vspace import VSpace, _aval_vspaces, _lookup, _scalar_promotion, _value_vspaces, vspace_of_aval

__all__ = ["Tracer", "aval_of", "vspace_of"]


class Tracer:
    """A value being traced by a transformation; behaves like its value type.

    Operators and attributes are forwarded to the value type's vector space
    (:meth:`VSpace.tracer_getattr`), so user code written for the value type runs
    unchanged on tracers.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> Any:
        raise NotImplementedError

    def to_concrete(self) -> Any:
        """The concrete value, when this trace knows one (JVP of concrete values)."""
        raise TracerConversionError(
            f"cannot convert an abstract traced value of type {self.aval} to a concrete value; "
            "use tidu primitives (or the value type's operations) instead of Python control flow on it"
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return vspace_of_aval(self.aval).tracer_getattr(self, name)

    def _fwd(self, name: str, *args: Any) -> Any:
        return vspace_of_aval(self.aval).tracer_call(self, name, args)

    def __add__(self, o):
        a = self.aval  # self._fwd(name, o), inlined (every operator on a tracer lands here)
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__add__", (o,))

    def __radd__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__radd__", (o,))

    def __sub__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__sub__", (o,))

    def __rsub__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__rsub__", (o,))

    def __mul__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__mul__", (o,))

    def __rmul__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__rmul__", (o,))

    def __truediv__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__truediv__", (o,))

    def __rtruediv__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__rtruediv__", (o,))

    def __floordiv__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__floordiv__", (o,))

    def __mod__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__mod__", (o,))

    def __pow__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__pow__", (o,))

    def __rpow__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__rpow__", (o,))

    def __matmul__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__matmul__", (o,))

    def __rmatmul__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__rmatmul__", (o,))

    def __neg__(self):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__neg__", ())

    def __pos__(self):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__pos__", ())

    def __abs__(self):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__abs__", ())

    def __invert__(self):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__invert__", ())

    def __and__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__and__", (o,))

    def __or__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__or__", (o,))

    def __xor__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__xor__", (o,))

    def __lt__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__lt__", (o,))

    def __le__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__le__", (o,))

    def __gt__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__gt__", (o,))

    def __ge__(self, o):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__ge__", (o,))

    def __eq__(self, o):
        return self._fwd("__eq__", o)  # type: ignore[override]

    def __ne__(self, o):
        return self._fwd("__ne__", o)  # type: ignore[override]

    def __getitem__(self, idx):
        return self._fwd("__getitem__", idx)

    def __setitem__(self, idx, value):
        # the value type's own answer (tenferro: tensors are immutable, a typed error naming
        # the functional updates); a type without one: traced values are immutable
        try:
            method = vspace_of_aval(self.aval).tracer_getattr(self, "__setitem__")
        except AttributeError:
            raise InvalidArgumentError(
                f"item assignment on a traced value ({self.aval}): traced values are immutable; build a new "
                "value with an operation of its type instead"
            ) from None
        method(idx, value)

    def __len__(self):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__len__", ())

    def __iter__(self):
        a = self.aval
        return (_aval_vspaces.get(type(a)) or vspace_of_aval(a)).tracer_call(self, "__iter__", ())

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        # control flow on comparisons (boolean values, no derivative) stays allowed
        return bool(self.to_concrete())

    def concrete_value(self, what: str) -> Any:
        """The concrete value for the conversion ``what`` (``float()``, ``.item()``, ...):
        raises :class:`TracerConversionError` when this value carries a derivative,
        which the conversion would silently drop; values without a tangent space
        (integers, booleans) convert when the trace knows their value."""
        value = self.to_concrete()  # (an abstract value has none: that error first)
        a = self.aval
        if vspace_of_aval(a).tangent_aval(a) is not None:
            raise TracerConversionError(
                f"{what} of a value being differentiated ({a}) would return a constant and silently drop "
                "its derivative; keep the computation in differentiable operations, or write "
                f"tidu.stop_gradient(x) first to use its value as a constant on purpose"
            )
        return value

    def __float__(self) -> float:
        return float(self.concrete_value("float()"))

    def __int__(self) -> int:
        return int(self.concrete_value("int()"))

    def __complex__(self) -> complex:
        return complex(self.concrete_value("complex()"))

    def __index__(self) -> int:
        return self.concrete_value("use as an index").__index__()

    def __array__(self, *args, **kwargs):
        raise TracerConversionError(
            f"a traced value ({self.aval}) cannot be converted to a NumPy array: the conversion "
            "would drop its derivative. Keep the computation in tidu primitives, or convert "
            "tidu.stop_gradient(x) to use its value as a constant on purpose."
        )


def vspace_of(value: Any) -> VSpace:
    """The vector space of a concrete value or tracer."""
    vs = _value_vspaces.get(type(value))
    if vs is not None:
        return vs
    if isinstance(value, Tracer):
        return vspace_of_aval(value.aval)
    vs = _lookup(_value_vspaces, type(value))
    if vs is None:
        if isinstance(value, numbers.Integral):
            raise UnregisteredTypeError(
                f"value {value!r} of type {type(value).__qualname__} is an integer, which has no derivative; "
                f"differentiate with respect to a float ({float(value)!r})"
            )
        raise UnregisteredTypeError(
            f"value of type {type(value).__qualname__} has no registered vector space; "
            "differentiable values must be registered with tidu.register_vspace"
            + (
                " (Python numbers are taken once a tensor library registers a scalar promotion with tidu.register_scalar_promotion)"
                if isinstance(value, numbers.Complex) and not _scalar_promotion
                else ""
            )
        )
    return vs


def aval_of(value: Any) -> Any:
    """Abstract value of a concrete value or tracer."""
    vs = _value_vspaces.get(type(value))
    if vs is not None:
        return vs.aval(value)
    if isinstance(value, Tracer):
        return value.aval
    return vspace_of(value).aval(value)
