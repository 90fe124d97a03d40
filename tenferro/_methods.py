"""Tensor operators and methods, shared by :class:`Tensor` and its tracers.

The same functions are installed on ``Tensor`` and served to tidu tracers via
:meth:`TensorVSpace.tracer_getattr`, so code written for tensors runs unchanged
under ``grad``/``jvp``/``make_graph``.
"""
from __future__ import annotations

from typing import Any

from . import _elementwise as ew
from . import _reductions as red
from . import _structural as st
from ._tensor import Tensor


def _r(fn):
    def method(self, other):
        return fn(other, self)

    method.__name__ = f"r{fn.__name__}"
    return method


TRACER_METHODS: dict[str, Any] = {
    "__add__": ew.add, "__radd__": _r(ew.add),
    "__sub__": ew.subtract, "__rsub__": _r(ew.subtract),
    "__mul__": ew.multiply, "__rmul__": _r(ew.multiply),
    "__truediv__": ew.divide, "__rtruediv__": _r(ew.divide),
    "__neg__": ew.negative,
    "__pos__": lambda self: self,
    "conj": ew.conj,
    "reshape": lambda self, *shape, order="F": st.reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape, order=order),
    "transpose": lambda self, *axes: st.transpose(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else (axes or None)),
    "sum": lambda self, axis=None, keepdims=False: red.sum(self, axis, keepdims),
    "T": property(lambda self: st.transpose(self)),
    "real": property(ew.real),
    "imag": property(ew.imag),
}


def install() -> None:
    """Install :data:`TRACER_METHODS` on :class:`Tensor` (called once by ``tenferro``)."""
    for name, fn in TRACER_METHODS.items():
        setattr(Tensor, name, fn)
