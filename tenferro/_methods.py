"""Tensor operators and methods, shared by :class:`Tensor` and its tracers.

The same functions are installed on ``Tensor`` and served to tidu tracers via
:meth:`TensorVSpace.tracer_getattr`, so code written for tensors runs unchanged
under ``grad``/``jvp``/``make_graph``.
"""
from __future__ import annotations

from typing import Any

from . import _compare as cmp, _elementwise as ew
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



# --- indexing, matrix helpers and contraction (installed by install() like the rest) ---
from . import _contraction as _ct  # noqa: E402
from . import _getitem as _gi  # noqa: E402
from . import _indexing as _ix  # noqa: E402
from . import _matrix as _mx  # noqa: E402

TRACER_METHODS.update({
    "__getitem__": _gi.getitem,
    "__iter__": _gi.iterate,
    "__matmul__": _ct.matmul,
    "__rmatmul__": _r(_ct.matmul),
    "dot": _ct.dot,
    "squeeze": lambda self, axis=None: st.squeeze(self, axis),
    "diagonal": _mx.diagonal,
    "trace": _mx.trace,
    "take": lambda self, indices, axis=None: _ix.take(self, indices, axis),
})


# --- comparisons, powers, abs and reductions (elementwise / reductions families) ---
def _comparison(fn):
    """``self <op> other`` as a bool tensor; operands tenferro cannot take give
    NotImplemented, so Python falls back (``t == None`` is False)."""
    def method(self, other):
        if not _comparable(other):
            return NotImplemented
        return fn(self, other)

    method.__name__ = f"__{fn.__name__}__"
    return method


def _comparable(x: Any) -> bool:
    import numpy as np  # noqa: PLC0415

    return (type(x) in (bool, int, float, complex) or isinstance(x, (Tensor, np.ndarray, np.generic))
            or hasattr(x, "_trace"))


from . import _piecewise as pw  # noqa: E402
from . import _transcendental as tr  # noqa: E402

TRACER_METHODS.update({
    "__pow__": tr.power, "__rpow__": _r(tr.power),
    "__abs__": pw.abs, "abs": pw.abs,
    "__lt__": _comparison(cmp.less), "__le__": _comparison(cmp.less_equal),
    "__gt__": _comparison(cmp.greater), "__ge__": _comparison(cmp.greater_equal),
    "__eq__": _comparison(cmp.equal), "__ne__": _comparison(cmp.not_equal),
    "__hash__": object.__hash__,   # defining __eq__ must not make tensors unhashable
    "clip": lambda self, a_min=None, a_max=None: pw.clip(self, a_min, a_max),
    "max": lambda self, axis=None, keepdims=False: red.max(self, axis, keepdims),
    "min": lambda self, axis=None, keepdims=False: red.min(self, axis, keepdims),
    "mean": lambda self, axis=None, keepdims=False: red.mean(self, axis, keepdims),
    "prod": lambda self, axis=None, keepdims=False: red.prod(self, axis, keepdims),
})


def _len(self: Any) -> int:
    shape = self.shape
    if not shape:
        from ._errors import TenferroTypeError  # noqa: PLC0415

        raise TenferroTypeError("len: a 0-d tensor has no length; expected a tensor of rank >= 1")
    return shape[0]


def _astype(self: Any, dtype: Any) -> Any:
    """``x.astype(dtype)``: explicit (possibly lossy) conversion, as :func:`tenferro.cast`
    (NumPy and JAX habit); use :func:`tenferro.convert` for checked conversion."""
    from ._creation import cast  # noqa: PLC0415

    return cast(self, dtype)


TRACER_METHODS.update({"__len__": _len, "astype": _astype})
