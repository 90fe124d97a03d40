"""Vector spaces: how tidu learns about a value type without importing it.

A value type (a dense tensor, a structured tensor, a toy NumPy array in tests)
joins tidu by registering a :class:`VSpace` for its Python types and for the
type of its *abstract value* (``aval``: the static part, e.g. shape and dtype).
The engine then builds zeros, sums fan-out cotangents, seeds ``grad`` and forwards
operators on tracers through that object; the gradient checker samples random
vectors and measures them with it. This follows HIPS autograd's ``VSpace``.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

from ._errors import UnregisteredTypeError

__all__ = ["VSpace", "register_vspace", "vspace_of_aval", "register_scalar_promotion", "promote_scalar"]


class VSpace:
    """Protocol a value type implements to take part in differentiation.

    Methods that receive *values* must work on tracers too (build results with
    primitives), except the ones marked "concrete only", which the gradient
    checker calls on plain values.
    """

    # --- static information --------------------------------------------------
    def aval(self, value: Any) -> Any:
        """Abstract value (hashable, comparable with ``==``) of a concrete value."""
        raise NotImplementedError

    def tangent_aval(self, aval: Any) -> Any | None:
        """Aval of tangents at a point of ``aval``; ``None`` if it carries none (integers)."""
        return aval

    def is_complex(self, aval: Any) -> bool:
        return False

    def is_scalar(self, aval: Any) -> bool:
        """True when a value of ``aval`` can be the output of ``grad``."""
        return False

    def size(self, aval: Any) -> int:
        """Number of scalar coordinates (complex counts once)."""
        raise NotImplementedError

    def machine_epsilon(self, aval: Any) -> float:
        """Unit roundoff of the value's scalar type; picks finite-difference steps."""
        return 2.0**-52

    # --- arithmetic (traceable) ----------------------------------------------
    def zeros(self, aval: Any) -> Any:
        raise NotImplementedError

    def ones(self, aval: Any) -> Any:
        """The value 1 (used to seed ``grad`` of a scalar)."""
        raise NotImplementedError

    def add(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def scale(self, x: Any, alpha: complex) -> Any:
        raise NotImplementedError

    def conj(self, x: Any) -> Any:
        return x

    def standard_basis(self, aval: Any) -> list[Any]:
        """The one-hot vectors of ``aval`` in the value type's own element order."""
        raise NotImplementedError

    def stack_basis(self, values: Sequence[Any], basis_aval: Any, leading: bool, value_aval: Any = None) -> Any:
        """Stack ``values`` (one per basis element of ``basis_aval``) along new axes
        shaped like ``basis_aval``: in front when ``leading`` else at the back.
        ``basis_aval`` may have no elements (size 0): then ``values`` is empty and
        ``value_aval`` (the type of one value) gives the result's shape."""
        raise NotImplementedError

    # --- batching (vmap) -------------------------------------------------------
    def ndim(self, aval: Any) -> int:
        """Number of axes of a value of ``aval`` (for negative ``in_axes``/``out_axes``)."""
        raise NotImplementedError(f"{type(self).__name__} does not support vmap (no ndim)")

    def axis_size(self, aval: Any, axis: int) -> int:
        """Length of axis ``axis`` (non-negative) of a value of ``aval``."""
        raise NotImplementedError(f"{type(self).__name__} does not support vmap (no axis_size)")

    def unbatched_aval(self, aval: Any, axis: int) -> Any:
        """The aval of one example: ``aval`` without axis ``axis``."""
        raise NotImplementedError(f"{type(self).__name__} does not support vmap (no unbatched_aval)")

    def move_axis(self, x: Any, src: int, dst: int) -> Any:
        """``x`` with axis ``src`` moved to ``dst`` (both non-negative; traceable)."""
        raise NotImplementedError(f"{type(self).__name__} does not support vmap (no move_axis)")

    def broadcast_axis(self, x: Any, size: int, axis: int) -> Any:
        """``x`` repeated along a new axis of length ``size`` at ``axis`` (traceable)."""
        raise NotImplementedError(f"{type(self).__name__} does not support vmap (no broadcast_axis)")

    def sum_axis(self, x: Any, axis: int) -> Any:
        """``x`` summed over axis ``axis`` (traceable): the cotangent of a value shared by
        every example, from the per-example ones (``custom_vjp`` under ``vmap``)."""
        raise NotImplementedError(f"{type(self).__name__} does not support vmap (no sum_axis)")

    def scalar(self, value: Any, like: Any) -> Any:
        """A 0-d value of this type holding the number ``value``, placed like a value of aval
        ``like``: :func:`tidu.vmap` broadcasts a number its function returns through it (as JAX
        turns numbers into arrays). ``NotImplementedError``: this type holds no numbers."""
        raise NotImplementedError(f"{type(self).__name__} does not support vmap (no scalar)")

    def identity(self, aval: Any) -> Any:
        """The standard basis of ``aval`` stacked along leading axes shaped like ``aval``: a value
        of shape ``aval + aval`` (the batched tangents of ``jacfwd``, cotangents of ``jacrev``)."""
        return self.stack_basis(self.standard_basis(aval), aval, leading=True)

    # --- concrete only (testing) -------------------------------------------
    def inner(self, x: Any, y: Any) -> float:
        """Real inner product ``Re <x, y>`` (``Re sum(conj(x) * y)``)."""
        raise NotImplementedError

    def randn(self, aval: Any, rng: Any) -> Any:
        """A standard normal sample of ``aval`` drawn from a NumPy ``Generator``."""
        raise NotImplementedError

    # --- tracers -------------------------------------------------------------
    def tracer_getattr(self, tracer: Any, name: str) -> Any:
        """Attribute ``name`` of a tracer of this type (operators, ``shape``...)."""
        raise AttributeError(name)

    def tracer_call(self, tracer: Any, name: str, args: tuple) -> Any:
        """``tracer.<name>(*args)``: how tracers apply operators (``tracer + y``).
        Override to skip building the bound method ``tracer_getattr`` returns."""
        return self.tracer_getattr(tracer, name)(*args)


_value_vspaces: dict[type, VSpace] = {}
_aval_vspaces: dict[type, VSpace] = {}


def register_vspace(vspace: VSpace, value_types: Sequence[type], aval_types: Sequence[type]) -> None:
    """Register ``vspace`` for concrete ``value_types`` and abstract ``aval_types``."""
    for t in value_types:
        _value_vspaces[t] = vspace
    for t in aval_types:
        _aval_vspaces[t] = vspace


#: the one converter of Python (and NumPy) float and complex numbers (:func:`register_scalar_promotion`)
_scalar_promotion: list[Callable[[Any], Any]] = []


def register_scalar_promotion(convert: Callable[[Any], Any]) -> None:
    """Let the transforms take Python float and complex numbers (and the scalar types that
    register with :mod:`numbers`, NumPy's among them) as differentiable inputs, as JAX does:
    ``convert(x)`` returns a value of a registered vector space (tenferro: a 0-d float64 or
    complex128 tensor). The last registration wins."""
    _scalar_promotion[:] = [convert]


def promote_scalar(x: Any) -> Any:
    """``x`` made a value of a registered vector space when it is a float or complex number of
    an unregistered type and a promotion is registered; anything else as it is."""
    if (
        _scalar_promotion
        and isinstance(x, numbers.Complex)
        and not isinstance(x, numbers.Integral)
        and _lookup(_value_vspaces, type(x)) is None
    ):
        return _scalar_promotion[0](x)
    return x


def _lookup(table: dict[type, VSpace], t: type) -> VSpace | None:
    vs = table.get(t)
    if vs is None:
        for base in t.__mro__[1:]:
            vs = table.get(base)
            if vs is not None:
                table[t] = vs
                break
    return vs


def vspace_of_aval(aval: Any) -> VSpace:
    """The vector space registered for the type of the abstract value ``aval``."""
    vs = _aval_vspaces.get(type(aval)) or _lookup(_aval_vspaces, type(aval))
    if vs is None:
        raise UnregisteredTypeError(f"abstract value of type {type(aval).__qualname__} has no registered vector space")
    return vs
