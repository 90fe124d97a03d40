"""Staged functions: trace once per signature, compile, replay.

:class:`StagedFunction` is the framework-independent half of a ``jit``: it keys
calls by their *signature* (the pytree structure of the arguments, the aval of
every array leaf, the values of static arguments), traces the function into a
:class:`Graph` on a miss, hands the graph to a compiler (supplied by the value
library, e.g. ``tenferro.jit``), keeps the result in a bounded LRU cache and
replays it. Called with tracers of an active transformation it binds
:data:`call_p`, so ``grad(jit(f))``, ``jvp(jit(f))`` and ``jit(jit(f))`` all
work (see :mod:`._call`).

Which arguments are static or donated is resolved by :class:`ArgSpec` (positions
and names completed from each other through the signature, as JAX does). What a
donated buffer may be is the value library's business: a *donor* (see
:class:`Donation`) decides, per call, which buffers the program may take.
"""

from __future__ import annotations

import collections
import functools
import math
import numbers
import threading
import warnings
from typing import Any, Callable, NamedTuple, Sequence

from ._argspec import ArgSpec, describe_leaf, describe_output, is_static_leaf as _is_static
from ._call import ClosedCall, Compiler, call_p
from ._errors import InvalidArgumentError, TiduError, TracerConversionError
from .graph import Graph, make_graph
from ._pytree import PyTreeDef, tree_flatten, tree_unflatten
from ._tracer import Tracer, aval_of

__all__ = ["StagedFunction", "CacheInfo", "StagingError", "RetraceWarning", "Donation", "Donor"]


class StagingError(TiduError, TypeError):
    """A staged (jit) function was used in a way tracing cannot support: Python
    control flow on a traced value, an unhashable static argument, an argument or
    output that is no array, ..."""


class RetraceWarning(UserWarning):
    """A staged function was traced again and again with changing signatures."""


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    traces: int
    size: int
    maxsize: int | None


class Donation(NamedTuple):
    """What a donor is told about one call of a staged function with donated arguments.

    ``donate[i]``: dynamic leaf ``i`` belongs to a donated argument;
    ``converted[i]``: leaf ``i`` was made from a user array by ``to_leaf`` (the
    user passed an array, not a value of the library); ``consts``: the constants
    of the traced function (read by every call); ``describe(i)``: leaf ``i`` in
    words (``"argument 0 (x)"``); ``name``: the staged function in words.
    """

    donate: tuple[bool, ...]
    converted: tuple[bool, ...]
    consts: Sequence[Any]
    describe: Callable[[int], str]
    name: str


Donor = Callable[[Callable[..., list], list, Donation], list]
"""``donor(run, leaves, donation) -> outputs``: run the executable (compiled with
``donation.donate``) on ``leaves``, handing it only buffers it may overwrite, and
mark the donated leaves consumed."""


class _Entry:
    __slots__ = ("call", "out_tree", "out_static", "graph", "donate", "_run")

    def __init__(
        self,
        call: ClosedCall,
        out_tree: PyTreeDef,
        out_static: tuple,
        graph: Graph,
        donate: tuple[bool, ...],
        compiler: Callable[..., Any],
    ):
        self.call = call
        self.out_tree = out_tree
        self.out_static = out_static  # ((flat output index, Python scalar), ...)
        self.graph = graph
        self.donate = donate
        self._run = compiler(graph, donate=donate) if donate else None

    @property
    def run(self) -> Callable[..., list]:
        """The executable for direct calls (with buffer donation, when asked for)."""
        return self._run or self.call.executable

    def unflatten(self, outs: list) -> Any:
        if self.out_static:
            outs = list(outs)
            for i, v in self.out_static:
                outs.insert(i, v)
        return tree_unflatten(self.out_tree, outs)


class _Split(NamedTuple):
    """One call's arguments: the leaves (converted), which are static, the key parts."""

    leaves: list
    tree: PyTreeDef
    mask: tuple[bool, ...]  # leaf is static (keyed by value)
    statics: tuple  # static arguments: ("arg", j, value) / ("kw", name, value)
    key_leaves: tuple
    donate: tuple[bool, ...]  # per dynamic leaf; () when nothing is donated
    converted: tuple[bool, ...]  # per dynamic leaf
    origin: tuple  # (args, static positions, dynamic kwargs): for messages only


def _is_scalar(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


class StagedFunction:
    """``fun`` traced once per signature and replayed through a compiled executable.

    ``compiler(graph, donate=mask)`` returns the executable (flat leaves in, flat
    leaves out; ``mask[i]``: leaf ``i``'s buffer may be overwritten);
    ``to_leaf(x)`` turns a user array leaf (e.g. a NumPy array) into a value type
    (or returns ``None`` when ``x`` is no array). Python scalars and strings (and
    leaves for which ``static_leaf(x)`` is true) are static leaves, keyed by value:
    a new value traces again. Any other leaf that is neither a value (an instance of
    ``value_types``; without them, of a type with a registered vector space) nor
    an array is an error naming the argument. Outputs are values or scalars
    (returned as they are); anything else is an error naming the output.
    ``context()`` (optional) returns a hashable snapshot of ambient settings the
    trace depends on; it is part of the key.
    ``donor`` runs calls with donated arguments (without one, donation is ignored).
    ``maxsize=None``: the cache is unbounded.
    ``refuse(x)`` (optional) returns why ``x`` can be no argument at all, static or
    not (e.g. a random generator: a trace would read its state once and freeze the
    draws into the program), or ``None``; a refused argument is an error naming it.
    :meth:`tracing` tells library code that it runs inside a trace (see there).
    """

    def __init__(
        self,
        fun: Callable[..., Any],
        compiler: Compiler,
        *,
        to_leaf: Callable[[Any], Any] | None = None,
        static_leaf: Callable[[Any], bool] | None = None,
        value_types: type | tuple[type, ...] | None = None,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None,
        maxsize: int | None = 64,
        retrace_warning: int = 8,
        what: str = "jit",
        error: type[StagingError] = StagingError,
        arg_error: type[Exception] = InvalidArgumentError,
        context: Callable[[], Any] | None = None,
        donor: Donor | None = None,
        refuse: Callable[[Any], str | None] | None = None,
    ):
        if not callable(fun):
            raise arg_error(f"{what}: expected a callable, got {type(fun).__name__}")
        if maxsize is not None and (type(maxsize) is not int or maxsize < 0):
            raise arg_error(
                f"{what}: maxsize must be a non-negative int (the number of signatures cached) "
                f"or None (unbounded), got {maxsize!r}"
            )
        self.fun = fun
        self.compiler = compiler
        self._to_leaf = to_leaf
        self._static_leaf = static_leaf
        self._value_types = value_types
        self._what = what
        self._error = error
        self._context = context
        self._donor = donor
        self._refuse = refuse
        self.__name__ = getattr(fun, "__name__", "fun")
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__wrapped__ = fun
        self.args = ArgSpec(
            fun,
            f"{what}({self.__name__})",
            arg_error,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
        )
        self.static_argnums, self.static_argnames = self.args.static_nums, self.args.static_names
        self.donate_argnums, self.donate_argnames = self.args.donate_nums, self.args.donate_names
        self._cache: collections.OrderedDict[Any, _Entry] = collections.OrderedDict()
        self.maxsize = maxsize
        self._retrace_warning = retrace_warning
        self._warned = False
        self._last_key: Any = None
        self.hits = self.misses = self.traces = 0

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """A staged function defined in a class binds as a method (as ``jax.jit``'s): the
        instance is its first argument (mark it static, ``static_argnums=0``, or the argument
        check names it)."""
        return self if obj is None else functools.partial(self, obj)

    # ---- signature -------------------------------------------------------------
    def _split(self, args: tuple, kwargs: dict) -> _Split:
        """The leaves (array leaves converted to the library's value type once,
        here), the static ones, the key and the donated leaves of one call."""
        spec = self.args
        static_pos = spec.static_positions(len(args), self._error)
        statics = [
            ("arg", j, _static(args[j], lambda j=j: f"positional argument {j}", self, refuse=True))
            for j in sorted(static_pos)
        ]
        dyn_args = tuple(a for j, a in enumerate(args) if j not in static_pos)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            if k in spec.static_names:
                statics.append(("kw", k, _static(kwargs[k], lambda k=k: f"keyword argument {k!r}", self, refuse=True)))
            else:
                dyn_kwargs[k] = kwargs[k]
        origin = (args, static_pos, dyn_kwargs)
        leaves, tree = tree_flatten((dyn_args, dyn_kwargs))
        mask, key_leaves, converted = [], [], []
        for i, x in enumerate(leaves):
            if isinstance(x, Tracer):
                a, new = x.aval, False
            elif _is_static(x):
                a, new = None, False
            else:
                a, new = self._classify(x, leaves, i, origin)
            mask.append(a is None)
            if a is None:
                key_leaves.append(_static(x, lambda i=i: self._describe(origin, i), self))
            else:
                key_leaves.append(a)
                converted.append(new)
        donate = self._donated(args, dyn_kwargs, static_pos, leaves, mask) if spec.donates else ()
        return _Split(leaves, tree, tuple(mask), tuple(statics), tuple(key_leaves), donate, tuple(converted), origin)

    def _describe(self, origin: tuple, i: int) -> str:
        """Leaf ``i`` of a call's flattened dynamic arguments in words."""
        args, static_pos, dyn_kwargs = origin
        parts = [(self.args.label(j), a) for j, a in enumerate(args) if j not in static_pos]
        return describe_leaf(parts + [(f"keyword argument {k!r}", v) for k, v in dyn_kwargs.items()], i)

    def _classify(self, x: Any, leaves: list, i: int, origin: tuple) -> tuple[Any, bool]:
        """``(aval, converted)`` of an argument leaf; ``(None, False)`` for a static one."""
        if self._value_types is not None and isinstance(x, self._value_types):
            return aval_of(x), False
        if self._to_leaf is not None:
            y = self._to_leaf(x)
            if y is not None:
                leaves[i] = y  # converted once: the call runs on it
                return aval_of(y), True
        if self._static_leaf is not None and self._static_leaf(x):
            return None, False
        if self._is_value(x):
            return aval_of(x), False
        _check_refused(x, lambda: self._describe(origin, i), self)
        raise self._error(
            f"{self._what}({self.__name__}): {self._describe(origin, i)} is of type {_type_name(x)} "
            f"({_short_repr(x)}), which is neither an array nor a scalar or string; arguments of a compiled "
            "function are arrays (tensors, NumPy or CuPy arrays), Python scalars and strings (static: keyed "
            "by value) or pytrees (tuples, lists, dicts, None, registered nodes) of them. Mark the argument "
            "static (static_argnums=... / static_argnames=...) to key the compilation on its value"
        )

    def _donated(self, args: tuple, dyn_kwargs: dict, static_pos: set, leaves: list, mask: list) -> tuple[bool, ...]:
        """For each dynamic leaf, whether it belongs to a donated argument."""
        donated = self.args.donate_positions(len(args), static_pos)
        flags: list[bool] = []
        for j, a in enumerate(args):
            if j not in static_pos:
                flags += [j in donated] * len(tree_flatten(a)[0])
        for k, v in dyn_kwargs.items():
            flags += [k in self.args.donate_names] * len(tree_flatten(v)[0])
        return tuple(f for f, s in zip(flags, mask) if not s)

    # ---- calling ---------------------------------------------------------------
    def _lookup(self, args: tuple, kwargs: dict) -> tuple[_Entry | None, _Split]:
        """The cache entry for these arguments (traced on a miss; ``None`` when the
        function closes over a value traced by an outer transformation) and the split call."""
        s = self._split(args, kwargs)
        key = (s.tree, s.key_leaves, s.statics, self._context() if self._context is not None else None)
        entry = self._cache.get(key)
        if entry is None:
            self.misses += 1
            entry = self._trace(args, kwargs, s, key)
        else:
            self.hits += 1
            self._cache.move_to_end(key)
        return entry, s

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        entry, s = self._lookup(args, kwargs)
        if entry is None:  # closes over a tracer: run the function itself under the outer transform
            return self.fun(*args, **kwargs)
        dyn = [x for x, st in zip(s.leaves, s.mask) if not st]
        for x in dyn:
            if isinstance(x, Tracer):
                return entry.unflatten(call_p.bind(*dyn, fn=entry.call))
        if not entry.donate:
            return entry.unflatten(entry.run(*dyn))
        if self._donor is None:
            return entry.unflatten(entry.call.executable(*dyn))
        donation = Donation(
            entry.donate,
            s.converted,
            entry.graph.consts,
            lambda i: self._describe(s.origin, _full_index(s.mask, i)),
            f"{self._what}({self.__name__})",
        )
        return entry.unflatten(self._donor(entry.run, dyn, donation))

    def _trace(self, args: tuple, kwargs: dict, s: _Split, key: Any) -> _Entry | None:
        statics = [x for x, st in zip(s.leaves, s.mask) if st]
        avals = [k for k, st in zip(s.key_leaves, s.mask) if not st]
        box: list = []

        def flat_fun(*dyn: Any) -> list:
            it_d, it_s = iter(dyn), iter(statics)
            full = [next(it_s) if st else next(it_d) for st in s.mask]
            dyn_args, dyn_kwargs = tree_unflatten(s.tree, full)
            call_args = self.args.merge_static(args, dyn_args)
            call_kwargs = dict(dyn_kwargs)
            for k in self.static_argnames:
                if k in kwargs:
                    call_kwargs[k] = kwargs[k]
            outs, out_tree = tree_flatten(self.fun(*call_args, **call_kwargs))
            box.append(out_tree)
            static = tuple((i, o) for i, o in enumerate(outs) if self._static_output(o, i, out_tree))
            box.append(static)
            drop = {i for i, _ in static}
            return [o for i, o in enumerate(outs) if i not in drop]

        self.traces += 1
        tracing = _tracing_stack()
        tracing.append(self)
        try:
            graph = make_graph(flat_fun, *avals, avals=True)
        except TracerConversionError as exc:
            raise self._error(
                f"{self._what}({self.__name__}): {exc}. Under {self._what} every array argument is abstract "
                "(only its shape, dtype and placement are known): Python control flow or conversion to a "
                "Python number or NumPy array needs a concrete value. Mark the argument static "
                "(static_argnums=... / static_argnames=...) or use array operations (e.g. where)."
            ) from exc
        finally:
            tracing.pop()
        if any(isinstance(c, Tracer) for c in graph.consts):
            return None
        graph.in_tree = graph.out_tree = None
        compiler = self.compiler
        entry = _Entry(
            ClosedCall(graph, lambda g: compiler(g, donate=()), self.__name__),
            box[0],
            box[1],
            graph,
            s.donate if any(s.donate) else (),
            compiler,
        )
        self._remember(key, entry)
        return entry

    def _is_value(self, x: Any) -> bool:
        """``x`` is a concrete value of the library (of ``value_types``; without
        them, of any type with a registered vector space)."""
        if self._value_types is not None:
            return isinstance(x, self._value_types)
        try:
            aval_of(x)
        except TiduError:
            return False
        return True

    def _static_output(self, o: Any, i: int, out_tree: PyTreeDef) -> bool:
        """True for a scalar output (returned as it is, like a static argument);
        checks that any other output leaf is a value the trace can stage."""
        if _is_scalar(o) or self._static_leaf is not None and self._static_leaf(o):
            return True
        if isinstance(o, Tracer) or self._is_value(o):
            return False
        raise self._error(
            f"{self._what}({self.__name__}): {describe_output(out_tree, i)} is of type {_type_name(o)} "
            f"({_short_repr(o)}); a compiled function returns arrays of the library (tensors), scalars or "
            "pytrees (tuples, lists, dicts, None) of them. Convert the value (e.g. tenferro.asarray) or "
            "return it from a function that is not compiled"
        )

    def _remember(self, key: Any, entry: _Entry) -> None:
        if self.traces >= self._retrace_warning and not self._warned and self._last_key is not None:
            self._warned = True
            warnings.warn(
                f"{self._what}({self.__name__}) traced {self.traces} times; the last retrace changed "
                f"{_describe_change(self._last_key, key)}. Each new signature traces and compiles again: "
                "pass arrays instead of changing Python values, keep shapes fixed, or mark the argument static "
                "only if it takes few values.",
                RetraceWarning,
                stacklevel=4,
            )
        self._last_key = key
        if self.maxsize == 0:
            return
        self._cache[key] = entry
        while self.maxsize is not None and len(self._cache) > self.maxsize:
            self._cache.popitem(last=False)

    # ---- library code running inside a trace ----------------------------------
    @staticmethod
    def tracing() -> "StagedFunction | None":
        """The staged function whose trace is running in the calling thread (the
        innermost one), or ``None``. What runs during a trace runs once: its result
        enters the compiled program as a constant, replayed by every later call. A
        library uses this to refuse work whose effect must happen on every call
        (e.g. a draw from a stateful random generator) with :meth:`error`."""
        stack = _tracing_stack()
        return stack[-1] if stack else None

    def error(self, message: str) -> StagingError:
        """This staged function's typed error (its ``error`` class, e.g.
        ``tenferro.JitError``) for ``message``, prefixed with the function in words."""
        return self._error(f"{self._what}({self.__name__}): {message}")

    # ---- inspection ------------------------------------------------------------
    def cache_info(self) -> CacheInfo:
        """``CacheInfo(hits, misses, traces, size, maxsize)``."""
        return CacheInfo(self.hits, self.misses, self.traces, len(self._cache), self.maxsize)

    def entry(self, *args: Any, **kwargs: Any) -> tuple[Graph, Callable[..., list], PyTreeDef]:
        """``(graph, executable, output tree)`` for these arguments, traced (or
        looked up) and compiled, without running it."""
        entry, _ = self._lookup(args, kwargs)
        if entry is None:
            raise self._error(
                f"{self._what}({self.__name__}): the function closes over a value traced by an "
                "outer transformation; it cannot be lowered on its own"
            )
        return entry.graph, entry.run, entry.out_tree


def _full_index(mask: tuple[bool, ...], i: int) -> int:
    """The index among all leaves of dynamic leaf ``i``."""
    n = -1
    for j, st in enumerate(mask):
        if not st:
            n += 1
            if n == i:
                return j
    raise IndexError(i)


def _type_name(x: Any) -> str:
    t = type(x)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _short_repr(x: Any) -> str:
    try:
        r = repr(x)
    except Exception:  # noqa: BLE001  (any repr may fail; the message must not)
        r = f"<{type(x).__qualname__}>"
    return r if len(r) <= 40 else r[:37] + "..."


class _Static:
    """A static value in a signature key. Two are equal when their values are of
    the same type and equal, as eager promotion tells them apart: ``1``, ``1.0``
    and ``True`` differ (so do ``(1, 2)`` and ``(1.0, 2)``: tuples and frozensets
    are keyed element by element), ``-0.0`` and ``0.0`` differ (their sign), and
    NaN equals NaN (of the same sign), so a NaN argument hits the cache."""

    __slots__ = ("value", "key", "_hash")

    def __init__(self, value: Any):
        self.value = value
        self.key = _value_key(value)
        self._hash = hash(self.key)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Static and self._hash == other._hash and self.key == other.key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"{type(self.value).__name__}({_short_repr(self.value)})"


def _number_key(x: Any) -> Any:
    """A real number as a key: its value, with the sign of a zero or a NaN (NaN
    compares unequal to itself, ``-0.0`` equal to ``0.0``)."""
    if x != x:
        return ("nan", math.copysign(1.0, x) < 0)
    if x == 0:
        return (0, math.copysign(1.0, x) < 0)
    return x


def _value_key(x: Any) -> Any:
    """``(type, value)`` of a static value, recursively for tuples and frozensets,
    with numbers keyed by :func:`_number_key` (NumPy's scalars are registered
    with :mod:`numbers`)."""
    t = type(x)
    if t is int or t is bool or t is str:
        return (t, x)
    if t is float:
        return (t, _number_key(x))
    if isinstance(x, tuple):
        return (t, tuple(_value_key(e) for e in x))
    if isinstance(x, frozenset):
        return (t, frozenset(_value_key(e) for e in x))
    if isinstance(x, numbers.Number) and not isinstance(x, numbers.Rational):
        try:
            if isinstance(x, numbers.Real):
                return (t, _number_key(x))
            if isinstance(x, numbers.Complex):
                return (t, _number_key(x.real), _number_key(x.imag))
        except (TypeError, ValueError):  # a number math.copysign cannot read: keyed by value
            pass
    return (t, x)


_local = threading.local()


def _tracing_stack() -> list:
    """The staged functions being traced in the calling thread (innermost last)."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _check_refused(x: Any, what: Callable[[], str], staged: StagedFunction) -> None:
    """Raise the staged function's error when its ``refuse`` hook refuses ``x``."""
    reason = staged._refuse(x) if staged._refuse is not None else None
    if reason:
        raise staged.error(f"{what()} is {reason}")


def _static(x: Any, what: Callable[[], str], staged: StagedFunction, refuse: bool = False) -> _Static:
    """The key of static value ``x`` (``what()``: the argument in words; ``refuse``:
    ask the staged function's ``refuse`` hook first)."""
    if refuse:
        _check_refused(x, what, staged)
    try:
        hash(x)
    except TypeError:
        raise staged._error(
            f"{staged._what}({staged.__name__}): {what()} is static but unhashable ({type(x).__name__}); "
            "static arguments key the compilation cache and must be hashable (use a tuple instead of a list, "
            "or pass arrays as non-static arguments)"
        ) from None
    return _Static(x)


def _describe_change(old: Any, new: Any) -> str:
    old_tree, old_leaves, old_static, old_context = old
    new_tree, new_leaves, new_static, new_context = new
    if old_tree != new_tree:
        return f"the argument structure ({old_tree} -> {new_tree})"
    changes = [f"leaf {i}: {a} -> {b}" for i, (a, b) in enumerate(zip(old_leaves, new_leaves)) if a != b]
    if old_static != new_static:
        changes.append(f"static arguments: {old_static} -> {new_static}")
    if old_context != new_context:
        changes.append(f"settings: {old_context} -> {new_context}")
    return "; ".join(changes[:4]) or "nothing visible (the cache was cleared or evicted)"
