"""The common base of structured tensors: metadata, operators and the tenferro protocol.

Every operator and method goes through the one dispatcher (``_dispatch.dispatch``),
so a structured type only declares its leaves and ``to_dense``; what an operation
does on it is decided by the tables in ``_tables.py``. ``__tenferro_function__``
lets tenferro's public functions (``tf.einsum``, ``tf.matmul``, ``tf.linalg.svd``,
arithmetic, ...) hand structured operands to the same dispatcher.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tenferro import Shape

from ._checks import is_dense_operand
from ._dispatch import dispatch, is_structured, op_of_function
from ._errors import StructuredShapeError, StructuredTypeError, StructuredValueError
from .linalg import largest_block
from ..tools.threads import thread_policy

__all__ = ["StructuredTensor"]


class StructuredTensor:
    """Base class: a logical tensor stored as dense leaves.

    Subclasses provide ``leaves`` (a tuple of dense tensors or tracers), ``shape``,
    ``to_dense()``, ``_rebuild(leaves)`` (same structure, new leaves),
    ``_describe()`` (a short string for error messages) and ``_leaf_name(k)`` (what
    leaf ``k`` is, for error messages). The base class itself is not instantiated.
    """

    _t4a_structured = True
    _densify_order = 0  # the fallback densifies higher orders first (cheap structures stay)
    __array_ufunc__ = None  # NumPy arrays defer to our reflected operators
    __array_priority__ = 1000

    def __new__(cls, *args: Any, **kwargs: Any) -> StructuredTensor:
        if cls is StructuredTensor:
            raise StructuredTypeError(
                "StructuredTensor is the abstract base of the structured types; "
                "construct a DiagonalTensor or a BlockDiagonal"
            )
        return super().__new__(cls)

    # -- what subclasses define ---------------------------------------------------
    @property
    def leaves(self) -> tuple[Any, ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def shape(self) -> Shape:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_dense(self) -> Any:  # pragma: no cover - abstract
        """The dense tenferro tensor this structure stands for (differentiable)."""
        raise NotImplementedError

    def _rebuild(self, leaves: Any) -> StructuredTensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def _describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _leaf_name(self, k: int) -> str:
        """What leaf ``k`` is ("the diagonal", "block 2"), for error messages."""
        return f"leaf {k}"

    # -- common metadata ------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> Any:
        """The dtype of the leaves (all leaves share it)."""
        return self.leaves[0].dtype

    @property
    def placement(self) -> Any:
        """The placement of the leaves (all leaves share it)."""
        return self.leaves[0].placement

    @property
    def is_complex(self) -> bool:
        return "complex" in str(self.dtype)

    def map_leaves(self, fn: Any) -> StructuredTensor:
        """The same structure with ``fn`` applied to every leaf (``fn`` must keep leaf shapes)."""
        if not callable(fn):
            raise StructuredTypeError(f"map_leaves: fn must be a callable (leaf -> leaf), got {fn!r}")
        leaves = self.leaves
        new = [fn(x) for x in leaves]
        for k, (old, x) in enumerate(zip(leaves, new)):
            shape = getattr(x, "shape", None)
            if shape is not None and tuple(shape) != tuple(old.shape):
                raise StructuredShapeError(
                    f"map_leaves: fn must keep leaf shapes; {self._leaf_name(k)} of "
                    f"{self._describe()} has shape {tuple(old.shape)}, fn returned "
                    f"{tuple(shape)}"
                )
        return self._rebuild(new)

    # -- methods and operators (all through the dispatcher) --------------------------
    @property
    def T(self) -> Any:
        return dispatch("transpose", self)

    def transpose(self, *axes: Any) -> Any:
        """``x.transpose()``, ``x.transpose(axes)`` or ``x.transpose(*axes)``, as on a tensor."""
        return dispatch(
            "transpose", self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else (axes or None)
        )

    def conj(self) -> Any:
        return dispatch("conj", self)

    @property
    def real(self) -> Any:
        return dispatch("real", self)

    @property
    def imag(self) -> Any:
        return dispatch("imag", self)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Any:
        return dispatch("sum", self, axis, keepdims)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return dispatch("trace", self, offset, axis1, axis2)

    def __neg__(self) -> Any:
        return dispatch("negative", self)

    def __pos__(self) -> Any:
        return self

    def __add__(self, other: Any) -> Any:
        return dispatch("add", self, other)

    def __radd__(self, other: Any) -> Any:
        return dispatch("add", other, self)

    def __sub__(self, other: Any) -> Any:
        return dispatch("subtract", self, other)

    def __rsub__(self, other: Any) -> Any:
        return dispatch("subtract", other, self)

    def __mul__(self, other: Any) -> Any:
        return dispatch("multiply", self, other)

    def __rmul__(self, other: Any) -> Any:
        return dispatch("multiply", other, self)

    def __truediv__(self, other: Any) -> Any:
        return dispatch("divide", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return dispatch("divide", other, self)

    @thread_policy(bond=largest_block)  # as tensor4all.matmul
    def __matmul__(self, other: Any) -> Any:
        return dispatch("matmul", self, other)

    @thread_policy(bond=largest_block)
    def __rmatmul__(self, other: Any) -> Any:
        return dispatch("matmul", other, self)

    # -- elementwise operators, as on a dense tensor (NumPy/JAX/tenferro semantics) ---------
    # No structured kernel (yet): they run as the dense function on the densified operand,
    # counted in fallback_stats() and refused under fallback_policy("error"). That is always
    # right, also where a leafwise shortcut would be wrong (d ** 0 and d == d are dense:
    # their off-diagonal entries are 1 and True).
    def __abs__(self) -> Any:
        return dispatch("abs", self)

    def __pow__(self, other: Any) -> Any:
        return dispatch("power", self, other)

    def __rpow__(self, other: Any) -> Any:
        return dispatch("power", other, self)

    def __getitem__(self, index: Any) -> Any:
        """``x[index]``: NumPy indexing of the dense tensor (the result is dense)."""
        return dispatch("getitem", self, index)

    def __len__(self) -> int:
        """The extent of the first mode, as ``len`` of a dense tensor."""
        return self.shape[0]

    def __iter__(self) -> Any:
        """The slices along the first mode, as iterating a dense tensor (densifies once)."""
        return iter(dispatch("getitem", self, ...))

    def __bool__(self) -> bool:
        """The truth value of a one-element tensor; ambiguous otherwise (as a dense tensor)."""
        size = int(np.prod(tuple(self.shape)))
        if size != 1:
            raise StructuredValueError(
                f"bool: the truth value of {self._describe()} (shape {tuple(self.shape)}, "
                f"size {size}) is ambiguous; expected exactly one element (compare "
                "elementwise and reduce, or compare the leaves)"
            )
        return bool(self.to_dense())

    # Comparisons are elementwise and return a dense bool tensor, as ``t == t`` on a tenferro
    # tensor; operands that cannot be compared give NotImplemented, so ``x == None`` is False.
    # Hashing stays by identity, as on tenferro tensors and tidu tracers.
    __hash__ = object.__hash__

    def _compare(self, op: str, other: Any) -> Any:
        if not (is_structured(other) or is_dense_operand(other)):
            return NotImplemented
        return dispatch(op, self, other)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return self._compare("equal", other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._compare("not_equal", other)

    def __lt__(self, other: Any) -> Any:
        return self._compare("less", other)

    def __le__(self, other: Any) -> Any:
        return self._compare("less_equal", other)

    def __gt__(self, other: Any) -> Any:
        return self._compare("greater", other)

    def __ge__(self, other: Any) -> Any:
        return self._compare("greater_equal", other)

    # -- the tenferro protocol (NumPy's __array_function__ analogue) -----------------
    def __tenferro_function__(self, func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
        """Called by tenferro when a public function receives a structured operand:
        route it to the dispatcher, or decline with ``NotImplemented``."""
        op = op_of_function(func)
        if op is None:
            return NotImplemented
        return dispatch(op, *args, **kwargs)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        """``np.asarray(x)``: the dense array (materializes the full tensor)."""
        out = np.asarray(self.to_dense())
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._repr_fields())
        return f"{type(self).__name__}({fields})"

    def _repr_fields(self) -> list[tuple[str, Any]]:  # pragma: no cover - overridden
        return [("shape", self.shape)]
