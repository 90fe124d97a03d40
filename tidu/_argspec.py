"""The arguments of a staged function: which are static and which donated (by
position and by name, each completed from the other through the signature, as
JAX's ``jit`` does), and leaves of the arguments and outputs in words for error
messages. Used by :mod:`._staging` and by ``checkpoint`` (:mod:`._custom`)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ._pytree import PyTreeDef, tree_flatten

__all__ = ["ArgSpec", "describe_leaf", "describe_output", "is_static_leaf"]

_P = inspect.Parameter


class ArgSpec:
    """Which arguments of a staged function are static and which donated, by
    position and by name. Each is completed from the other through the function's
    signature, as JAX's ``jit`` does: ``static_argnums=1`` also makes the second
    parameter static when it is passed by keyword, ``static_argnames="n"`` also
    when ``n`` is passed by position. A negative index counts from the end of the
    positional parameters when their number is fixed (``-1``: the last one), and
    from the end of a call's positional arguments when the function takes
    ``*args``. Checked against the signature at construction (``error``: the
    exception class); an argument both static and donated is an error there, or,
    for a negative index of a function taking ``*args``, when it is called."""

    __slots__ = (
        "static_nums",
        "static_names",
        "donate_nums",
        "donate_names",
        "_where",
        "_error",
        "_positional",
        "_keyword",
        "_pos_only",
        "_open_pos",
        "_open_kw",
    )

    def __init__(
        self,
        fun: Callable[..., Any],
        where: str,
        error: type[Exception],
        *,
        static_argnums: Any = None,
        static_argnames: Any = None,
        donate_argnums: Any = None,
        donate_argnames: Any = None,
    ):
        self._where, self._error = where, error
        try:
            params = list(inspect.signature(fun).parameters.values())
            known = True
        except (TypeError, ValueError):
            params, known = [], False
        self._positional = [p.name for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
        self._keyword = {p.name for p in params if p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)}
        self._pos_only = {p.name for p in params if p.kind is _P.POSITIONAL_ONLY}
        self._open_pos = not known or any(p.kind is _P.VAR_POSITIONAL for p in params)
        self._open_kw = not known or any(p.kind is _P.VAR_KEYWORD for p in params)
        self.static_nums, self.static_names = self._complete(static_argnums, static_argnames, "static")
        self.donate_nums, self.donate_names = self._complete(donate_argnums, donate_argnames, "donate")
        both = sorted(set(self.static_nums) & set(self.donate_nums)) or sorted(
            set(self.static_names) & set(self.donate_names)
        )
        if both:
            raise error(
                f"{where}: an argument cannot be both static and donated ({both[0]!r} is in both; "
                f"static_argnums={static_argnums!r}, donate_argnums={donate_argnums!r}, "
                f"static_argnames={static_argnames!r}, donate_argnames={donate_argnames!r})"
            )

    @property
    def donates(self) -> bool:
        return bool(self.donate_nums or self.donate_names)

    def _complete(self, nums: Any, names: Any, kind: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
        n_set = set(self._nums(nums, f"{kind}_argnums"))
        if not self._open_pos:  # a fixed number of positional parameters: -1 is the last of them
            n_set = {i + len(self._positional) if i < 0 else i for i in n_set}
        s_set = set(self._names(names, f"{kind}_argnames"))
        n_set |= {self._positional.index(s) for s in s_set if s in self._positional}
        s_set |= {
            self._positional[i]
            for i in n_set
            if 0 <= i < len(self._positional) and self._positional[i] not in self._pos_only
        }
        return tuple(sorted(n_set)), tuple(sorted(s_set))

    def _nums(self, x: Any, what: str) -> tuple[int, ...]:
        if x is None:
            return ()
        if type(x) is int:
            t: tuple = (x,)
        else:
            try:
                t = tuple(x) if not isinstance(x, (str, bytes)) else (x,)
            except TypeError:
                t = (x,)
        bad = [i for i in t if type(i) is not int]
        if bad:
            raise self._error(
                f"{self._where}: {what} must be an int, a sequence of ints or None, got {x!r} "
                f"(contains {bad[0]!r} of type {type(bad[0]).__name__})"
            )
        n = len(self._positional)
        for i in t:
            if not self._open_pos and not -n <= i < n:
                raise self._error(
                    f"{self._where}: {what} contains {i}, but the function takes {n} positional "
                    f"argument{'s' if n != 1 else ''} ({', '.join(self._positional) or 'none'})"
                )
        return t

    def _names(self, x: Any, what: str) -> tuple[str, ...]:
        if x is None:
            return ()
        if isinstance(x, str):
            t: tuple = (x,)
        else:
            try:
                t = tuple(x)
            except TypeError:
                t = (x,)
        bad = [s for s in t if not isinstance(s, str)]
        if bad:
            raise self._error(
                f"{self._where}: {what} must be a str, a sequence of str or None, got {x!r} "
                f"(contains {bad[0]!r} of type {type(bad[0]).__name__})"
            )
        for s in t:
            if not self._open_kw and s not in self._keyword and s not in self._positional:
                names = ", ".join([*self._positional, *sorted(self._keyword - set(self._positional))]) or "none"
                raise self._error(
                    f"{self._where}: {what} contains {s!r}, which is not a parameter of the "
                    f"function (its parameters: {names})"
                )
        return t

    def static_positions(self, nargs: int, error: type[Exception]) -> set[int]:
        """The static positions of a call with ``nargs`` positional arguments. A
        static parameter not passed by position is fine when it has a name (passed
        by keyword, or its default); an index nothing can resolve is an error."""
        pos = set()
        for i in self.static_nums:
            j = i + nargs if i < 0 else i
            if 0 <= j < nargs:
                pos.add(j)
            elif not 0 <= i < len(self._positional):
                raise error(
                    f"{self._where}: static_argnums contains {i}, but the function was called with "
                    f"{nargs} positional argument{'s' if nargs != 1 else ''}"
                )
        return pos

    def donate_positions(self, nargs: int, static_pos: set[int]) -> set[int]:
        """The donated positions of a call with ``nargs`` positional arguments
        (``static_pos``: its static ones). A negative index of a function taking
        ``*args`` is resolved only here, so an argument both static and donated
        that :meth:`__init__` could not see is an error here."""
        pos = {i + nargs if i < 0 else i for i in self.donate_nums} & set(range(nargs))
        both = sorted(pos & static_pos)
        if both:
            raise self._error(
                f"{self._where}: an argument cannot be both static and donated (called with {nargs} "
                f"positional argument{'s' if nargs != 1 else ''}, {self.label(both[0])} is both; "
                f"static_argnums={self.static_nums!r}, donate_argnums={self.donate_nums!r})"
            )
        return pos

    def label(self, j: int) -> str:
        """Positional argument ``j`` in words."""
        return f"argument {j} ({self._positional[j]})" if j < len(self._positional) else f"argument {j}"

    def merge_static(self, args: tuple, dyn_args: tuple) -> tuple:
        """The positional arguments with the static ones (from ``args``) back in place."""
        static_pos = self.static_positions(len(args), self._error)
        it = iter(dyn_args)
        return tuple(args[j] if j in static_pos else next(it) for j in range(len(args)))


def is_static_leaf(x: Any) -> bool:
    """Argument leaves that are static by default (keyed by value in a staged
    function, passed as they are into a checkpointed one): Python scalars and
    strings (an einsum subscript, a mode such as ``ord="fro"``, a loop count), and
    ``...`` (an einsum label list's ellipsis)."""
    return type(x) in (bool, int, float, complex, str, bytes) or x is Ellipsis


def describe_leaf(parts: tuple, i: int) -> str:
    """Leaf ``i`` of the flattened arguments ``parts`` (``((label, value), ...)``) in words."""
    for label, value in parts:
        leaves, tree = tree_flatten(value)
        if i < len(leaves):
            return label if tree.node is None else f"leaf {i} of {label} (structure {tree})"
        i -= len(leaves)
    return f"argument leaf {i}"


def describe_output(tree: PyTreeDef, i: int) -> str:
    """Leaf ``i`` of an output of structure ``tree`` in words."""
    return "the output" if tree.node is None else f"output leaf {i} (output structure {tree})"
