"""Staged functions: trace once per signature, compile, replay.

:class:`StagedFunction` is the framework-independent half of a ``jit``: it keys
calls by their *signature* (the pytree structure of the arguments, the aval of
every array leaf, the values of static arguments), traces the function into a
:class:`Graph` on a miss, hands the graph to a compiler (supplied by the value
library, e.g. ``tenferro.jit``), keeps the result in a bounded LRU cache and
replays it. Called with tracers of an active transformation it binds
:data:`call_p`, so ``grad(jit(f))``, ``jvp(jit(f))`` and ``jit(jit(f))`` all
work (see :mod:`._call`).
"""
from __future__ import annotations

import collections
import inspect
import warnings
from typing import Any, Callable, NamedTuple, Sequence

from ._call import ClosedCall, Compiler, call_p
from ._errors import InvalidArgumentError, TiduError, TracerConversionError
from ._graph import Graph, make_graph
from ._pytree import PyTreeDef, tree_flatten, tree_unflatten
from ._tracer import Tracer, aval_of

__all__ = ["StagedFunction", "CacheInfo", "StagingError", "RetraceWarning"]


class StagingError(TiduError, TypeError):
    """A staged (jit) function was used in a way tracing cannot support: Python
    control flow on a traced value, an unhashable static argument, ..."""


class RetraceWarning(UserWarning):
    """A staged function was traced again and again with changing signatures."""


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    traces: int
    size: int
    maxsize: int


class _Entry:
    __slots__ = ("call", "out_tree", "graph", "donate", "_run")

    def __init__(self, call: ClosedCall, out_tree: PyTreeDef, graph: Graph, donate: tuple[bool, ...],
                 compiler: Callable[..., Any]):
        self.call = call
        self.out_tree = out_tree
        self.graph = graph
        self.donate = donate
        self._run = compiler(graph, donate=donate) if any(donate) else None

    @property
    def run(self) -> Callable[..., list]:
        """The executable for direct calls (with buffer donation, when asked for)."""
        return self._run or self.call.executable


def _is_scalar(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


class StagedFunction:
    """``fun`` traced once per signature and replayed through a compiled executable.

    ``compiler(graph, donate=mask)`` returns the executable (flat leaves in, flat
    leaves out; ``mask[i]``: leaf ``i``'s buffer may be overwritten);
    ``to_leaf(x)`` turns a user array leaf (e.g. a NumPy array) into a value type
    (or returns ``None`` when ``x`` is no array: it is then a static leaf, keyed by
    value). Python scalars are static leaves: a new value traces again.
    ``context()`` (optional) returns a hashable snapshot of ambient settings the
    trace depends on (e.g. a library's configuration); it is part of the key.
    """

    def __init__(
        self,
        fun: Callable[..., Any],
        compiler: Compiler,
        *,
        to_leaf: Callable[[Any], Any] | None = None,
        static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (),
        donate_argnums: int | Sequence[int] = (),
        maxsize: int = 64,
        retrace_warning: int = 8,
        what: str = "jit",
        error: type[StagingError] = StagingError,
        context: Callable[[], Any] | None = None,
    ):
        if not callable(fun):
            raise InvalidArgumentError(f"{what}: expected a callable, got {type(fun).__name__}")
        self.fun = fun
        self.compiler = compiler
        self._to_leaf = to_leaf
        self._what = what
        self._error = error
        self._context = context
        self.static_argnums = _int_tuple(static_argnums, what, "static_argnums")
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self.donate_argnums = _int_tuple(donate_argnums, what, "donate_argnums")
        if set(self.static_argnums) & set(self.donate_argnums):
            raise InvalidArgumentError(f"{what}: an argument cannot be both static and donated "
                                       f"(static_argnums={self.static_argnums}, donate_argnums={self.donate_argnums})")
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        self._cache: collections.OrderedDict[Any, _Entry] = collections.OrderedDict()
        self.maxsize = maxsize
        self._retrace_warning = retrace_warning
        self._warned = False
        self._last_key: Any = None
        self.hits = self.misses = self.traces = 0
        self.__name__ = getattr(fun, "__name__", "fun")
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__wrapped__ = fun

    # ---- signature -------------------------------------------------------------
    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, list, PyTreeDef, tuple, tuple]:
        """``(leaves, tree, static leaf mask, static arguments, key leaves)``; array
        leaves are converted to the library's value type once, here."""
        nargs = len(args)
        static_pos = set()
        for i in self.static_argnums:
            j = i + nargs if i < 0 else i
            if not 0 <= j < nargs:
                raise self._error(f"{self._what}({self.__name__}): static_argnums contains {i}, but the function "
                                   f"was called with {nargs} positional arguments")
            static_pos.add(j)
        statics = []
        for j in sorted(static_pos):
            statics.append(("arg", j, _hashable(args[j], f"positional argument {j}", self)))
        dyn_args = tuple(a for j, a in enumerate(args) if j not in static_pos)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            if k in self.static_argnames:
                statics.append(("kw", k, _hashable(kwargs[k], f"keyword argument {k!r}", self)))
            else:
                dyn_kwargs[k] = kwargs[k]
        leaves, tree = tree_flatten((dyn_args, dyn_kwargs))
        mask = []
        key_leaves = []
        for i, x in enumerate(leaves):
            if isinstance(x, Tracer):
                mask.append(False)
                key_leaves.append(x.aval)
                continue
            a = None
            if self._to_leaf is not None and not _is_scalar(x):  # the library's arrays first
                y = self._to_leaf(x)
                if y is not None:
                    leaves[i] = y          # converted once: the call runs on it
                    a = aval_of(y)
            if a is None:
                try:
                    a = aval_of(x)
                except TiduError:
                    a = None
            if a is None:
                mask.append(True)
                key_leaves.append(("static", type(x), _hashable(x, "an argument leaf", self)))
            else:
                mask.append(False)
                key_leaves.append(a)
        return leaves, tree, tuple(mask), tuple(statics), tuple(key_leaves)

    # ---- calling ---------------------------------------------------------------
    def _lookup(self, args: tuple, kwargs: dict) -> tuple[_Entry | None, list, tuple[bool, ...]]:
        """The cache entry for these arguments (traced on a miss; ``None`` when the
        function closes over a value traced by an outer transformation), the
        argument leaves and which of them are static."""
        leaves, tree, mask, statics, key_leaves = self._split(args, kwargs)
        key = (tree, key_leaves, statics, self._context() if self._context is not None else None)
        entry = self._cache.get(key)
        if entry is None:
            self.misses += 1
            entry = self._trace(args, kwargs, leaves, tree, mask, key)
        else:
            self.hits += 1
            self._cache.move_to_end(key)
        return entry, leaves, mask

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        entry, leaves, mask = self._lookup(args, kwargs)
        if entry is None:  # closes over a tracer: run the function itself under the outer transform
            return self.fun(*args, **kwargs)
        dyn = [x for x, s in zip(leaves, mask) if not s]
        for x in dyn:
            if isinstance(x, Tracer):
                outs = call_p.bind(*dyn, fn=entry.call)
                break
        else:
            outs = entry.run(*dyn)
        return tree_unflatten(entry.out_tree, outs)

    def _trace(self, args, kwargs, leaves, tree, mask, key) -> _Entry | None:
        statics = [x for x, s in zip(leaves, mask) if s]
        avals = [k for k, s in zip(key[1], mask) if not s]

        def flat_fun(*dyn: Any) -> Any:
            it_d, it_s = iter(dyn), iter(statics)
            full = [next(it_s) if s else next(it_d) for s in mask]
            dyn_args, dyn_kwargs = tree_unflatten(tree, full)
            call_args = _merge_static(args, dyn_args, self.static_argnums)
            call_kwargs = dict(dyn_kwargs)
            for k in self.static_argnames:
                if k in kwargs:
                    call_kwargs[k] = kwargs[k]
            return self.fun(*call_args, **call_kwargs)

        self.traces += 1
        try:
            graph = make_graph(flat_fun, *avals, avals=True)
        except TracerConversionError as exc:
            raise self._error(
                f"{self._what}({self.__name__}): {exc}. Under {self._what} every array argument is abstract "
                "(only its shape, dtype and placement are known): Python control flow or conversion to a "
                "Python number or NumPy array needs a concrete value. Mark the argument static "
                "(static_argnums=... / static_argnames=...) or use array operations (e.g. where)."
            ) from exc
        if any(isinstance(c, Tracer) for c in graph.consts):
            return None
        out_tree = graph.out_tree
        graph.in_tree = graph.out_tree = None
        compiler = self.compiler
        donate = self._donated_leaves(args, mask)
        entry = _Entry(ClosedCall(graph, lambda g: compiler(g, donate=()), self.__name__), out_tree, graph,
                       donate, compiler)
        self._remember(key, entry)
        return entry

    def _donated_leaves(self, args: tuple, mask: tuple[bool, ...]) -> tuple[bool, ...]:
        """For each dynamic leaf, whether it comes from a donated positional argument."""
        if not self.donate_argnums:
            return ()
        n = len(args)
        donated = {i + n if i < 0 else i for i in self.donate_argnums}
        static = {i + n if i < 0 else i for i in self.static_argnums}
        flags: list[bool] = []
        for j, a in enumerate(args):
            if j in static:
                continue
            flags += [j in donated] * len(tree_flatten(a)[0])
        flags += [False] * (len(mask) - len(flags))
        return tuple(f for f, s in zip(flags, mask) if not s)

    def _remember(self, key: Any, entry: _Entry) -> None:
        if self.traces >= self._retrace_warning and not self._warned and self._last_key is not None:
            self._warned = True
            warnings.warn(
                f"{self._what}({self.__name__}) traced {self.traces} times; the last retrace changed "
                f"{_describe_change(self._last_key, key)}. Each new signature traces and compiles again: "
                "pass arrays instead of changing Python values, keep shapes fixed, or mark the argument static "
                "only if it takes few values.",
                RetraceWarning, stacklevel=4)
        self._last_key = key
        self._cache[key] = entry
        while len(self._cache) > self.maxsize:
            self._cache.popitem(last=False)

    # ---- inspection ------------------------------------------------------------
    def cache_info(self) -> CacheInfo:
        """``CacheInfo(hits, misses, traces, size, maxsize)``."""
        return CacheInfo(self.hits, self.misses, self.traces, len(self._cache), self.maxsize)

    def entry(self, *args: Any, **kwargs: Any) -> tuple[Graph, Callable[..., list], PyTreeDef]:
        """``(graph, executable, output tree)`` for these arguments, traced (or
        looked up) and compiled, without running it."""
        entry, _, _ = self._lookup(args, kwargs)
        if entry is None:
            raise self._error(f"{self._what}({self.__name__}): the function closes over a value traced by an "
                              "outer transformation; it cannot be lowered on its own")
        return entry.graph, entry.run, entry.out_tree


def _int_tuple(x: int | Sequence[int], what: str, name: str) -> tuple[int, ...]:
    t = (x,) if isinstance(x, int) else tuple(x)
    if any(type(i) is not int for i in t):
        raise InvalidArgumentError(f"{what}: {name} must be an int or a sequence of ints, got {x!r}")
    return t


def _hashable(x: Any, what: str, staged: StagedFunction) -> Any:
    try:
        hash(x)
    except TypeError:
        raise staged._error(
            f"{staged._what}({staged.__name__}): {what} is static but unhashable ({type(x).__name__}); "
            "static arguments key the compilation cache and must be hashable (use a tuple instead of a list, "
            "or pass arrays as non-static arguments)") from None
    return x


def _merge_static(args: tuple, dyn_args: tuple, static_argnums: tuple[int, ...]) -> tuple:
    n = len(args)
    static_pos = {i + n if i < 0 else i for i in static_argnums}
    it = iter(dyn_args)
    return tuple(args[j] if j in static_pos else next(it) for j in range(n))


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
