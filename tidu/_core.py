"""Primitives, tracers and the stack of active transformations.

A :class:`Primitive` is a named operation with rules: evaluation (``impl``), shape
(``abstract_eval``), derivative (``jvp``) and transposition (``transpose``). Linear
primitives give only ``transpose``; their JVP is the primitive itself applied to
the tangents. ``Primitive.bind`` applies a primitive: with no tracer among the
arguments it calls ``impl`` at once (the eager fast path); otherwise the
highest-level active transformation among the arguments processes it. Nested
transformations stack by level, as in JAX (autodidax), so any nesting works and
perturbations of different levels never mix.

The stack is per thread: each thread runs its own transformations, and levels
are only comparable within a thread. A tracer belongs to the thread whose
transformation created it; using it from another thread raises
:class:`UnexpectedTracerError`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from ._errors import MissingRuleError, NonDifferentiableError, UnexpectedTracerError
from ._tracer import Tracer, aval_of
from ._vspace import vspace_of_aval
from ._zero import Zero, instantiate

__all__ = ["Primitive", "Trace", "new_trace", "find_top_trace", "current_stack"]


class Primitive:
    """A named operation with its rules, registered once right after it is created.

    Rules (set with the ``def_*`` decorators):

    * ``impl(*args, **params)`` evaluates on concrete values.
    * ``abstract_eval(*avals, **params)`` returns the output aval(s).
    * ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``; tangents
      may be :class:`Zero`. Not needed for linear primitives.
    * ``transpose(cotangent, *args, **params)`` returns one cotangent (or ``None``)
      per argument; linear arguments arrive as :class:`UndefinedPrimal`.
    * ``batch(axis_size, args, dims, **params)`` (``def_batch``) vectorizes it for
      :func:`tidu.vmap` (see ``tidu._batching``).

    Flags, set only by the registration methods: ``linear`` (``def_linear``),
    ``differentiable`` (False after ``def_nondiff``) and ``zero_derivative``
    (``def_nondiff(zero_tangent=True)``: differentiating gives a zero tangent).
    :attr:`support` is derived from them. ``jvp_replay`` (set by the library that defines
    the primitive) declares that its JVP rule's equations depend only on the operands'
    avals, the parameters and which tangents are zero: linearization then records the
    rule once per such signature and replays it (:mod:`tidu._replay`). ``transpose_replay``
    declares the same of its transpose rule (its equations depend only on the avals, the
    parameters and which arguments are linear): the backward pass records it once per
    equation of a recorded JVP and replays it.
    """

    __slots__ = (
        "name",
        "multiple_results",
        "impl",
        "abstract_eval",
        "jvp_rule",
        "transpose_rule",
        "batch_rule",
        "linear",
        "differentiable",
        "zero_derivative",
        "nondiff_reason",
        "jvp_replay",
        "transpose_replay",
        "__weakref__",
    )

    def __init__(self, name: str, *, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self.impl: Callable[..., Any] = self._missing("impl")
        self.abstract_eval: Callable[..., Any] = self._missing("abstract_eval")
        self.jvp_rule: Callable[..., Any] = self._missing("JVP")
        self.transpose_rule: Callable[..., Any] | None = None
        self.batch_rule: Callable[..., Any] | None = None
        self.linear = False
        self.differentiable = True
        self.zero_derivative = False
        self.nondiff_reason = ""
        self.jvp_replay = False
        self.transpose_replay = False

    def __repr__(self) -> str:
        return self.name

    def _missing(self, rule: str) -> Callable[..., Any]:
        def missing(*args, **params):
            raise MissingRuleError(f"primitive '{self.name}' has no {rule} rule")

        missing._tidu_missing = True  # type: ignore[attr-defined]
        return missing

    # ---- registration ----------------------------------------------------
    def def_impl(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.impl = fn
        return fn

    def def_abstract_eval(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.abstract_eval = fn
        return fn

    def _set_differentiable(self) -> None:
        self.differentiable = True
        self.zero_derivative = False
        self.nondiff_reason = ""

    def def_jvp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Full JVP rule ``fn(primals, tangents, **params) -> (out, out_dot)``."""
        self._set_differentiable()
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
        self._set_differentiable()
        self.jvp_rule = jvp

    def def_batch(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Batching rule ``fn(axis_size, args, dims, **params) -> (out, out_dim)`` for
        :func:`tidu.vmap`: ``dims[i]`` is argument ``i``'s batch axis (``None``: unmapped);
        the rule applies the primitive to the whole batch and says where the result's batch
        axis is (a list, one per output, for primitives with several results)."""
        self.batch_rule = fn
        return fn

    def def_transpose(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.transpose_rule = fn
        return fn

    def def_linear(self, transpose: Callable[..., Any]) -> Callable[..., Any]:
        """Declare the primitive linear in all arguments, with its transpose rule.

        Unless a JVP rule was given, the JVP is the primitive applied to the tangents
        (a zero output tangent when every input tangent is zero).
        """
        self.linear = True
        self.transpose_rule = transpose
        if getattr(self.jvp_rule, "_tidu_missing", False):
            self._set_differentiable()
            self.jvp_rule = self._linear_jvp
        return transpose

    def _linear_jvp(self, primals, tangents, **params):
        out = self.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            if self.multiple_results:
                return out, [Zero.like(o) for o in out]
            return out, Zero.like(out)
        return out, self.bind(*[instantiate(t) for t in tangents], **params)

    def def_nondiff(self, reason: str = "", zero_tangent: bool = True) -> None:
        """Declare the primitive non-differentiable.

        ``zero_tangent=True``: the output has zero derivative (comparisons, integer
        results); ``False``: differentiating it is an error naming ``reason``.
        """
        self.differentiable = False
        self.zero_derivative = zero_tangent
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
        """'linear', 'differentiable', 'zero-derivative' or 'not differentiable'
        (from the flags ``linear``, ``zero_derivative`` and ``differentiable``)."""
        if self.linear:
            return "linear"
        if self.zero_derivative:
            return "zero-derivative"
        if not self.differentiable:
            return "not differentiable"
        return "differentiable"

    # ---- application -------------------------------------------------------
    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive to ``args`` under the active transformations."""
        top = None  # find_top_trace(args, self), inlined: one pass over the arguments
        for a in args:
            if isinstance(a, Tracer):
                t = a._trace
                if top is None or t.level > top.level:
                    top = t
        if top is None:  # the eager fast path: no tracer, evaluate at once
            return self.impl(*args, **params)
        if top._owner is not _state.stack:
            raise _unexpected_tracer(args, self)
        return top.process_primitive(self, args, params)

    __call__ = bind

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any], params: dict) -> tuple[Any, Any]:
        """Run the JVP rule: ``(primal_out, tangent_out)``; tangents may be :class:`Zero`."""
        return self.jvp_rule(primals, tangents, **params)


class UndefinedPrimal:
    """Placeholder for a linear input during transposition (JAX's ``UndefinedPrimal``)."""

    __slots__ = ("aval",)

    def __init__(self, aval: Any):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x: Any) -> bool:
    """True when ``x`` is an :class:`UndefinedPrimal` (a linear input in a transpose rule)."""
    return type(x) is UndefinedPrimal


class Trace:
    """One active transformation; tracers point at it. Higher level = inner."""

    __slots__ = ("level", "active", "_owner")

    def __init__(self):
        self.level = 0
        self.active = False
        self._owner: list | None = None  # the per-thread stack it is on while active

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict) -> Any:
        raise NotImplementedError


class _ThreadState(threading.local):
    """Per-thread state: the stack of active transformations (innermost last)."""

    def __init__(self):
        self.stack: list[Trace] = []


_state = _ThreadState()


def current_stack() -> list[Trace]:
    """The calling thread's stack of active transformations (innermost last)."""
    return _state.stack


class new_trace:
    """Context manager pushing ``trace`` on the calling thread's transformation stack."""

    __slots__ = ("trace", "stack")

    def __init__(self, trace: Trace):
        self.trace = trace
        self.stack: list[Trace] | None = None

    def __enter__(self) -> Trace:
        stack = self.stack = _state.stack
        trace = self.trace
        trace.level = len(stack) + 1
        trace.active = True
        trace._owner = stack
        stack.append(trace)
        return trace

    def __exit__(self, *exc) -> None:
        trace = self.trace
        trace.active = False
        trace._owner = None
        popped = self.stack.pop()  # type: ignore[union-attr]
        assert popped is trace, "transformation stack corrupted"


def find_top_trace(args: Sequence[Any], prim: Primitive | None = None) -> Trace | None:
    """The innermost (highest-level) transformation among the tracers in ``args``,
    or ``None`` when there is none. Raises :class:`UnexpectedTracerError` for a tracer
    of a finished transformation or of another thread's transformation."""
    top = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if top is None or t.level > top.level:
                top = t
    if top is not None and top._owner is not _state.stack:
        raise _unexpected_tracer(args, prim)
    return top


def _unexpected_tracer(args: Sequence[Any], prim: Primitive | None) -> UnexpectedTracerError:
    what = f"primitive '{prim.name}' was applied to" if prim is not None else "use of"
    stack = _state.stack
    for a in args:
        if isinstance(a, Tracer) and a._trace._owner is not stack:
            if not a._trace.active:
                return UnexpectedTracerError(
                    f"{what} a tracer of a transformation that has already finished (a tracer "
                    "leaked out of jvp/vjp/grad, e.g. via a global or closure)"
                )
    return UnexpectedTracerError(
        f"{what} a tracer of a transformation running in another thread; tracers "
        "belong to the thread whose transformation created them"
    )
