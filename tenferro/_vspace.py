"""The vector space of tensors: how tidu builds zeros, sums cotangents, samples
random directions and forwards operators for tensors and their tracers (the
methods of :data:`tenferro._methods.TENSOR_METHODS`). The top of tenferro's
layering: it needs the op families; importing it registers the space with tidu."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import tidu

from ._aval import TensorType, aval_of_tensor, fortran, meta, wrap_fortran
from ._creation import asarray, ones, zeros
from ._elementwise import add_p, conj, multiply
from ._dispatch import dispatch
from ._errors import ForeignOperandError, TenferroMemoryError, fmt_bytes, fmt_shape
from ._methods import BINARY_OPERATORS, DEFERS, TENSOR_METHODS, _defers
from ._placement import CPU, array_module_of_placement, device_scope
from ._shape import Shape
from ._joins import stack
from ._structural import broadcast_to, expand_dims, reshape, sum_p, transpose
from ._tensor import Tensor

__all__ = ["TensorVSpace", "TENSOR_VSPACE"]


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
        return zeros(aval.shape, aval.dtype, placement=aval.placement)

    def ones(self, aval: TensorType) -> Tensor:
        return ones(aval.shape, aval.dtype, placement=aval.placement)

    def add(self, x: Any, y: Any) -> Any:
        if type(x) is Tensor and type(y) is Tensor:  # no tracer: add_p's impl, inlined (fan-out sums)
            return wrap_fortran(np.add(x._data, y._data))
        return add_p.bind(x, y)

    def scale(self, x: Any, alpha: complex) -> Any:
        return multiply(x, alpha)

    def conj(self, x: Any) -> Any:
        return conj(x)

    def standard_basis(self, aval: TensorType) -> list[Tensor]:
        n = aval.size
        if aval.placement.device is not None:  # made on the device: no uploads
            with device_scope("standard_basis", aval.placement):
                eye = array_module_of_placement("standard_basis", aval.placement).eye(n, dtype=aval.dtype.numpy)
                return [Tensor._wrap(fortran(eye[:, k].reshape(aval.shape, order="F"))) for k in range(n)]
        out = []
        for k in range(n):
            e = np.zeros(n, aval.dtype.numpy)
            e[k] = 1
            out.append(Tensor._wrap(np.reshape(e, aval.shape, order="F")))
        return out

    def identity(self, aval: TensorType) -> Tensor:
        n, shape = aval.size, tuple(aval.shape)
        xp = array_module_of_placement("identity", aval.placement)
        with device_scope("identity", aval.placement):
            eye = xp.eye(n, dtype=aval.dtype.numpy)
            return Tensor._wrap(fortran(eye.reshape(shape + shape, order="F")))

    def stack_basis(
        self, values: Sequence[Any], basis_aval: TensorType, leading: bool, value_aval: TensorType | None = None
    ) -> Any:
        if not values and value_aval is not None:  # a size-0 basis: an empty Jacobian block
            shape = (
                tuple(basis_aval.shape) + tuple(value_aval.shape)
                if leading
                else tuple(value_aval.shape) + tuple(basis_aval.shape)
            )
            return zeros(shape, value_aval.dtype, placement=value_aval.placement)
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

    # ---- batching (tidu.vmap) ----------------------------------------------------------
    def ndim(self, aval: TensorType) -> int:
        return len(aval.shape)

    def axis_size(self, aval: TensorType, axis: int) -> int:
        return aval.shape[axis]

    def unbatched_aval(self, aval: TensorType, axis: int) -> TensorType:
        return TensorType(aval.shape[:axis] + aval.shape[axis + 1 :], aval.dtype, aval.placement)

    def move_axis(self, x: Any, src: int, dst: int) -> Any:
        order = [k for k in range(len(tidu.aval_of(x).shape)) if k != src]
        order.insert(dst, src)
        return transpose(x, order)

    def sum_axis(self, x: Any, axis: int) -> Any:
        return sum_p.bind(x, axes=(axis,))

    def broadcast_axis(self, x: Any, size: int, axis: int) -> Any:
        y = expand_dims(x, axis)
        shape = list(y.shape)
        shape[axis] = size
        try:
            return broadcast_to(y, shape)
        except MemoryError:  # NumPy's or broadcast_to's: say which vmap setting asked for it
            a = tidu.aval_of(x)
            need = size * a.size * a.dtype.numpy.itemsize
            raise TenferroMemoryError(
                f"vmap: cannot allocate {fmt_bytes(need)} to broadcast a {a.dtype.name} tensor of shape "
                f"{fmt_shape(a.shape)} over axis_size={size} examples (shape {fmt_shape(shape)}); pass a smaller "
                "axis_size, or map fewer examples per call"
            ) from None

    def scalar(self, value: Any, like: TensorType) -> Tensor:
        return asarray(value, placement=like.placement)

    def tracer_getattr(self, tracer: Any, name: str) -> Any:
        fn = TENSOR_METHODS.get(name)  # operators first: every ``tracer + y`` lands here
        if fn is not None:
            if type(fn) is property:
                return fn.fget(tracer)
            return fn.__get__(tracer)
        if name in ("item", "tolist", "numpy"):  # conversions: refused where they drop a derivative
            return getattr(tracer.concrete_value(f".{name}()"), name)
        if name in ("shape", "dtype", "placement", "ndim", "size"):
            value = getattr(tracer.aval, name)
            return Shape._from_tuple(value) if name == "shape" else value
        raise AttributeError(f"a traced tensor has no attribute {name!r}")

    def tracer_call(self, tracer: Any, name: str, args: tuple) -> Any:
        op = _TRACER_OPERATORS.get(name)  # ``tracer + y`` and friends: the function at once
        if op is not None and len(args) == 1:
            fn, public, reflected = op
            other = args[0]
            d = DEFERS.get(type(other))  # other defers (_methods._defers, inlined)
            if d or (d is None and _defers(other)):
                return NotImplemented
            xy = (other, tracer) if reflected else (tracer, other)
            try:
                return fn(*xy)
            except ForeignOperandError:  # what the public function's dispatch wrapper does
                return dispatch(public, xy, {})
        fn = TENSOR_METHODS.get(name)  # the other operators
        if fn is not None and type(fn) is not property:
            return fn(tracer, *args)
        if name.startswith("__") and name.endswith("__") and fn is None:  # an operator tensors do not take
            if args:  # Python then raises the TypeError a Tensor operand gives ("unsupported operand type(s)")
                return NotImplemented
            raise TypeError(f"bad operand type for {_UNARY_SYMBOLS.get(name, name)}: a traced tensor")
        return self.tracer_getattr(tracer, name)(*args)


_UNARY_SYMBOLS = {"__invert__": "unary ~", "__neg__": "unary -", "__pos__": "unary +", "__abs__": "abs()"}

# name -> (function without its dispatch wrapper, the public function, reflected)
_TRACER_OPERATORS = {
    name: (getattr(fn, "__wrapped__", fn), fn, reflected) for name, (fn, reflected) in BINARY_OPERATORS.items()
}

TENSOR_VSPACE = TensorVSpace()
tidu.register_vspace(TENSOR_VSPACE, [Tensor], [TensorType])
# Python float and complex numbers (and NumPy's scalars) as differentiable inputs: a 0-d tensor
# of their dtype (float64, complex128), as jax.grad(f)(3.0) promotes to an array
tidu.register_scalar_promotion(lambda x: asarray(np.asarray(x)))
