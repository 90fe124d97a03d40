"""Primitives, tracers and the stack of active transformations.

A :class:`Primitive` is a named operation with rules: evaluation (``impl``), shape
(``abstract_eval``), derivative (``jvp``) and transposition (``transpose``). Linear
primitives give only ``transpose``; their JVP is the primitive itself applied to
the tangents. ``Primitive.bind`` applies a primitive: with no tracer among the
arguments it calls ``impl`` at once (the eager fast path); otherwise the
highest-level active transformation among the arguments processes it. Nested
transformations stack by level, as in JAX (autodidax), so any nesting works and
perturbations of different levels never mix.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ._errors import (
    MissingRuleError,
    NonDifferentiableError,
    TracerConversionError,
    UnexpectedTracerError,
)
from ._vspace import Zero, aval_of, instantiate, vspace_of_aval

__all__ = ["Primitive", "Tracer", "Trace", "new_trace", "find_top_trace"]


class Primitive:
    """A named operation with its rules, registered once right after it is created.

    Rules (set with the ``def_*`` decorators):

    * ``impl(*args, **params)`` evaluates on concrete values.
    * ``abstract_eval(*avals, **params)`` returns the output aval(s).
    * ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``; tangents
      may be :class:`Zero`. Not needed for linear primitives.
    * ``transpose(cotangent, *args, **params)`` returns one cotangent (or ``None``)
      per argument; linear arguments arrive as :class:`UndefinedPrimal`.
    """

    __slots__ = (
        "name", "multiple_results", "impl", "abstract_eval", "jvp_rule",
        "transpose_rule", "linear", "differentiable", "nondiff_reason", "__weakref__",
    )

    def __init__(self, name: str, *, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable[..., Any] = self._missing("impl")
        self.abstract_eval: Callable[..., Any] = self._missing("abstract_eval")
        self.jvp_rule: Callable[..., Any] | None = None
        self.transpose_rule: Callable[..., Any] | None = None
        self.linear = False
        self.differentiable = True
        self.nondiff_reason = ""

    def __repr__(self) -> str:
        return self.name

    def _missing(self, rule: str) -> Callable[..., Any]:
        def missing(*args, **params):
            raise MissingRuleError(f"primitive '{self.name}' has no {rule} rule")

        return missing

    # ---- registration ----------------------------------------------------
    def def_impl(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.impl = fn
        return fn

    def def_abstract_eval(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.abstract_eval = fn
        return fn

    def def_jvp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Full JVP rule ``fn(primals, tangents, **params) -> (out, out_dot)``."""
        self.jvp_rule = fn
        return fn

    def def_jvp_per_arg(self, *fns: Callable[..., Any] | None) -> None:
        """JVP as a sum of per-argument contributions ``fn_i(t_i, out, *primals, **params)``.

        ``None`` marks an argument that carries no derivative. Contributions are
        summed with the output value type's ``add``; zero tangents are skipped.
        """
        prim = self

        def jvp(primals, tangents, **params):
            out = prim.bind(*primals, **params)
            acc = None
            for fn, t in zip(fns, tangents):
                if type(t) is Zero:
                    continue
                if fn is None:
                    raise NonDifferentiableError(
                        f"primitive '{prim.name}' is not differentiable with respect to this argument"
                    )
                c = fn(t, out, *primals, **params)
                acc = c if acc is None else vspace_of_aval(aval_of(c)).add(acc, c)
            return out, (Zero.like(out) if acc is None else acc)

        jvp.__name__ = f"{self.name}_jvp"
        self.jvp_rule = jvp

    def def_transpose(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.transpose_rule = fn
        return fn

    def def_linear(self, transpose: Callable[..., Any]) -> Callable[..., Any]:
        """Declare the primitive linear in all arguments, with its transpose rule."""
        self.linear = True
        self.transpose_rule = transpose
        return transpose

    def def_nondiff(self, reason: str = "", zero_tangent: bool = True) -> None:
        """Declare the primitive non-differentiable.

        ``zero_tangent=True``: the output has zero derivative (comparisons, integer
        results); ``False``: differentiating it is an error naming ``reason``.
        """
        self.differentiable = zero_tangent
        self.nondiff_reason = reason
        prim = self

        if zero_tangent:
            def jvp(primals, tangents, **params):
                out = prim.bind(*primals, **params)
                if prim.multiple_results:
                    return out, [Zero.like(o) for o in out]
                return out, Zero.like(out)
        else:
            def jvp(primals, tangents, **params):
                raise NonDifferentiableError(
                    f"primitive '{prim.name}' is not differentiable" + (f": {reason}" if reason else "")
                )

        self.jvp_rule = jvp

    @property
    def support(self) -> str:
        """'linear', 'differentiable', 'zero-derivative' or 'not differentiable'."""
        if self.linear:
            return "linear"
        if self.nondiff_reason or not self.differentiable:
            return "zero-derivative" if self.differentiable else "not differentiable"
        return "differentiable"

    # ---- application -------------------------------------------------------
    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive to ``args`` under the active transformations."""
        top = None
        for a in args:
            if isinstance(a, Tracer):
                t = a._trace
                if top is None or t.level > top.level:
                    top = t
        if top is None:
            return self.impl(*args, **params)
        if not top.active:
            raise UnexpectedTracerError(
                f"primitive '{self.name}' was applied to a tracer of a transformation that has "
                "already finished (a tracer leaked out of jvp/vjp/grad, e.g. via a global or closure)"
            )
        return top.process_primitive(self, args, params)

    __call__ = bind

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any], params: dict) -> tuple[Any, Any]:
        """Run the JVP rule (deriving it for linear primitives)."""
        rule = self.jvp_rule
        if rule is not None:
            return rule(primals, tangents, **params)
        if self.linear:
            out = self.bind(*primals, **params)
            t_out = self.bind(*[instantiate(t) for t in tangents], **params)
            return out, t_out
        raise MissingRuleError(f"primitive '{self.name}' has no JVP rule")


class UndefinedPrimal:
    """Placeholder for a linear input during transposition (JAX's ``UndefinedPrimal``)."""

    __slots__ = ("aval",)

    def __init__(self, aval: Any):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x: Any) -> bool:
    return type(x) is UndefinedPrimal


class Trace:
    """One active transformation; tracers point at it. Higher level = inner."""

    __slots__ = ("level", "active")

    def __init__(self):
        self.level = 0
        self.active = False

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> Any:
        raise NotImplementedError

    def process_custom_jvp(self, fn, args: Sequence[Any]):
        """How this trace handles a ``custom_jvp`` function (default: inline it)."""
        return fn.fun(*args)

    def process_custom_vjp(self, fn, args: Sequence[Any]):
        return fn.fun(*args)

    def process_checkpoint(self, graph, args: Sequence[Any]):
        """How this trace handles a ``checkpoint``-ed function, given as a closed
        :class:`~tidu.Graph` over flat ``args`` (default: inline it)."""
        return graph.eval_flat(*args)


_stack: list[Trace] = []


class new_trace:
    """Context manager pushing ``trace`` on the transformation stack."""

    __slots__ = ("trace",)

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self) -> Trace:
        self.trace.level = len(_stack) + 1
        self.trace.active = True
        _stack.append(self.trace)
        return self.trace

    def __exit__(self, *exc) -> None:
        self.trace.active = False
        popped = _stack.pop()
        assert popped is self.trace, "transformation stack corrupted"


def find_top_trace(args: Sequence[Any]) -> Trace | None:
    top = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if top is None or t.level > top.level:
                top = t
    if top is not None and not top.active:
        raise UnexpectedTracerError(
            "a tracer of a transformation that has already finished was used"
        )
    return top


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

    def __add__(self, o): return self._fwd("__add__", o)
    def __radd__(self, o): return self._fwd("__radd__", o)
    def __sub__(self, o): return self._fwd("__sub__", o)
    def __rsub__(self, o): return self._fwd("__rsub__", o)
    def __mul__(self, o): return self._fwd("__mul__", o)
    def __rmul__(self, o): return self._fwd("__rmul__", o)
    def __truediv__(self, o): return self._fwd("__truediv__", o)
    def __rtruediv__(self, o): return self._fwd("__rtruediv__", o)
    def __floordiv__(self, o): return self._fwd("__floordiv__", o)
    def __mod__(self, o): return self._fwd("__mod__", o)
    def __pow__(self, o): return self._fwd("__pow__", o)
    def __rpow__(self, o): return self._fwd("__rpow__", o)
    def __matmul__(self, o): return self._fwd("__matmul__", o)
    def __rmatmul__(self, o): return self._fwd("__rmatmul__", o)
    def __neg__(self): return self._fwd("__neg__")
    def __pos__(self): return self._fwd("__pos__")
    def __abs__(self): return self._fwd("__abs__")
    def __invert__(self): return self._fwd("__invert__")
    def __and__(self, o): return self._fwd("__and__", o)
    def __or__(self, o): return self._fwd("__or__", o)
    def __xor__(self, o): return self._fwd("__xor__", o)
    def __lt__(self, o): return self._fwd("__lt__", o)
    def __le__(self, o): return self._fwd("__le__", o)
    def __gt__(self, o): return self._fwd("__gt__", o)
    def __ge__(self, o): return self._fwd("__ge__", o)
    def __eq__(self, o): return self._fwd("__eq__", o)  # type: ignore[override]
    def __ne__(self, o): return self._fwd("__ne__", o)  # type: ignore[override]
    def __getitem__(self, idx): return self._fwd("__getitem__", idx)
    def __len__(self): return self._fwd("__len__")
    def __iter__(self): return self._fwd("__iter__")
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        return bool(self.to_concrete())

    def __float__(self) -> float:
        return float(self.to_concrete())

    def __int__(self) -> int:
        return int(self.to_concrete())

    def __complex__(self) -> complex:
        return complex(self.to_concrete())

    def __index__(self) -> int:
        return self.to_concrete().__index__()

    def __array__(self, *args, **kwargs):
        raise TracerConversionError(
            f"a traced value ({self.aval}) cannot be converted to a NumPy array: the conversion "
            "would drop its derivative. Keep the computation in tidu primitives."
        )


from . import _vspace as _vspace_module  # noqa: E402  (close the import cycle)

_vspace_module.Tracer = Tracer
