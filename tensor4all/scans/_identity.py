"""What a scan file records of a function task, so that a resumed scan can tell whether the
file holds results of the same task.

A function's name says little: every lambda is ``__main__.<lambda>``, and
``functools.partial(f, scale=1.0)`` and ``functools.partial(f, scale=10.0)`` share ``f``'s
name. :func:`function_identity` records the name and a SHA-256 digest (``"code"``) of what
decides the results, from pieces that are the same in every process that defines the task
the same way (a script run again after an interruption):

* a function's code object (its bytecode, constants, names and argument layout, nested code
  objects included; not its file name or line numbers), its defaults and the values of its
  closure cells, and the code of the functions of its own module that it calls by their
  global names (recursively);
* a ``functools.partial``: the function's identity and the bound arguments;
* a bound method: the function and the object it is bound to; a wrapper with ``__wrapped__``
  (``functools.cache``, ``lru_cache``): the function it wraps (helpers so wrapped, and
  ``functools.partial`` helpers of the module, count as the module's functions); a callable
  object: its class's ``__call__`` and the object.

Values (defaults, closure values, bound arguments, objects) count by their contents: plain
numbers, strings, lists, tuples, dicts and sets directly, functions as above, anything else
by its pickle, or where ``pickle`` refuses it (an object holding a lambda) by the pieces its
``__reduce_ex__`` gives, read the same way (not by ``cloudpickle``, whose output for a
function of ``__main__`` differs from one process to the next). A value that cannot be
reduced (a lock, an open file) leaves the identity unknown: the record then has
``"unknown"`` (the reason), and :class:`~tensor4all.scans.table.ScanTable` refuses to
resume such a scan.

Global data a function reads (module constants, classes, other modules) is not part of its
identity. The bytecode is Python's: the same function under another Python version is
another task.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import pickle
import types
from typing import Any

from ..tools.errors import Tensor4allError

__all__ = ["function_identity", "function_name"]

_PLAIN_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_LONG = 1000  # a list, tuple or dict longer than this counts by its pickle
_SHOWN = 200  # a bound argument whose JSON is longer than this is shown by its type only


class _Unknown(Tensor4allError, ValueError):
    """A value whose contents cannot be read (it cannot be pickled); caught within this module."""


def function_name(fn: Any) -> str:
    """``module.qualname`` of a function (of the function a ``functools.partial`` wraps, of a
    bound method's function, of a callable object's class)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = getattr(fn, "__func__", fn)
    if not hasattr(fn, "__qualname__"):
        fn = type(fn)
    return f"{getattr(fn, '__module__', None) or type(fn).__module__}.{fn.__qualname__}"


def function_identity(fn: Any) -> dict[str, Any]:
    """The record of a function task: ``function`` (its name), ``code`` (``"sha256:..."``, the
    digest of everything that decides its results), and for a ``functools.partial`` the bound
    ``args`` and ``keywords`` as they read (plain values as JSON, others by their type; the
    digest holds them exactly). ``unknown`` (the reason) replaces ``code`` when a value of the
    task cannot be read."""
    out: dict[str, Any] = {"function": function_name(fn)}
    try:
        tree = _callable(fn, set())
    except (_Unknown, RecursionError) as e:
        reason = str(e) if isinstance(e, _Unknown) else "its values nest too deeply to be read"
        out["unknown"] = f"the task {out['function']} cannot be told apart from another task: {reason}"
        return out
    out["code"] = "sha256:" + hashlib.sha256(repr(tree).encode()).hexdigest()
    if isinstance(fn, functools.partial):
        out["args"] = [_shown(a) for a in fn.args]
        out["keywords"] = {str(k): _shown(v) for k, v in fn.keywords.items()}
    return out


# ---- the pieces: a tree of tuples of str, int, float, complex, bytes, None; its repr is hashed
def _callable(fn: Any, seen: set[int]) -> tuple:
    if id(fn) in seen:  # a recursive closure, a function calling itself
        return ("again", function_name(fn))
    seen = seen | {id(fn)}
    if isinstance(fn, functools.partial):
        return (
            "partial",
            _callable(fn.func, seen),
            _value(tuple(fn.args), seen),
            _value(dict(sorted(fn.keywords.items())), seen),
        )
    if isinstance(fn, types.FunctionType):
        return _function(fn, seen)
    if isinstance(fn, types.MethodType):
        return ("method", _callable(fn.__func__, seen), _value(fn.__self__, seen))
    if isinstance(fn, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        owner = getattr(fn, "__self__", None)
        bound = () if owner is None or isinstance(owner, types.ModuleType) else (_value(owner, seen),)
        return ("builtin", function_name(fn), *bound)
    if isinstance(fn, type):
        init = fn.__dict__.get("__init__")
        return ("class", function_name(fn), _callable(init, seen) if isinstance(init, types.FunctionType) else None)
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None and callable(wrapped):  # functools.cache / lru_cache and their kind
        kind = f"{type(fn).__module__}.{type(fn).__qualname__}"
        return ("wrapped", function_name(fn), kind, _callable(wrapped, seen))
    call = getattr(type(fn), "__call__", None)
    code = _callable(call, seen) if isinstance(call, types.FunctionType) else None
    return ("object", function_name(fn), code, _leaf(fn, seen))


def _function(fn: types.FunctionType, seen: set[int]) -> tuple:
    cells = []
    for cell in fn.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned after the function was made)
            cells.append(("empty",))
            continue
        cells.append(_value(contents, seen))
    helpers = []
    module = fn.__module__
    for name in sorted(_global_names(fn.__code__)):
        g = fn.__globals__.get(name)
        if id(g) not in seen and _module_function(g, module):
            helpers.append((name, _callable(g, seen)))
    return (
        "function",
        function_name(fn),
        _code(fn.__code__),
        _value(fn.__defaults__, seen),
        _value(fn.__kwdefaults__, seen),
        tuple(cells),
        tuple(helpers),
    )


def _module_function(g: Any, module: str) -> bool:
    """Whether the global ``g`` is a function of ``module`` (a helper the task calls by name):
    a function, or one under ``functools.partial`` and ``__wrapped__`` layers (``functools.cache``,
    ``lru_cache``, decorators made with ``functools.wraps``)."""
    for _ in range(64):  # layers of wrappers; a cycle of them is no function
        if isinstance(g, types.FunctionType):
            return g.__module__ == module
        if isinstance(g, functools.partial):
            g = g.func
        elif callable(g) and getattr(g, "__wrapped__", None) is not None:
            g = g.__wrapped__
        else:
            return False
    return False


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _code(code: types.CodeType) -> tuple:
    return (
        "code",
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_code,
        tuple(_const(c) for c in code.co_consts),
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
    )


def _const(c: Any) -> Any:
    if isinstance(c, types.CodeType):
        return _code(c)
    if isinstance(c, tuple):
        return ("tuple", tuple(_const(x) for x in c))
    if isinstance(c, frozenset):  # its iteration order follows the strings' hashes: per process
        return ("frozenset", tuple(sorted((_const(x) for x in c), key=repr)))
    return (type(c).__name__, c)


def _value(v: Any, seen: set[int]) -> Any:
    """The contents of a value, exactly (1, 1.0 and True differ; so do a list and a tuple)."""
    t = type(v)
    if t in _PLAIN_SCALARS:
        return (t.__name__, v)
    if isinstance(v, (types.FunctionType, types.MethodType, functools.partial, types.BuiltinFunctionType)):
        return _callable(v, seen)
    if isinstance(v, types.ModuleType):
        return ("module", v.__name__)
    if isinstance(v, type):
        return ("class", function_name(v))
    if id(v) in seen:
        return ("cycle",)
    if t in (list, tuple, dict, set, frozenset) and len(v) <= _LONG:
        seen = seen | {id(v)}
        if t is dict:
            return ("dict", tuple((_value(k, seen), _value(x, seen)) for k, x in v.items()))
        items = tuple(_value(x, seen) for x in v)
        return (t.__name__, tuple(sorted(items, key=repr)) if t in (set, frozenset) else items)
    return _leaf(v, seen)


def _leaf(v: Any, seen: set[int]) -> tuple:
    """A value by the digest of its pickle, else by the pieces of its ``__reduce_ex__``."""
    name = f"{type(v).__module__}.{type(v).__qualname__}"
    try:
        return ("pickle", name, hashlib.sha256(pickle.dumps(v, protocol=4)).hexdigest())
    except Exception:  # noqa: BLE001  (pickle raises what the object's __reduce__ raises)
        pass
    try:
        reduced = v.__reduce_ex__(4)
    except Exception as e:  # noqa: BLE001
        raise _Unknown(f"it holds a value of type {name} that cannot be pickled ({type(e).__name__}: {e})") from None
    if isinstance(reduced, str):  # a global of that name
        return ("global", name, reduced)
    seen = seen | {id(v)}
    parts = [x if i < 3 or x is None else list(x) for i, x in enumerate(reduced)]  # items 3, 4: iterators
    return ("reduce", name, tuple(_value(x, seen) for x in parts))


def _shown(v: Any) -> Any:
    """A bound argument as it reads in the record (the digest holds it exactly)."""
    try:
        text = json.dumps(v, allow_nan=False)
    except (TypeError, ValueError):
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        return f"<{type(v).__module__}.{type(v).__qualname__}>"
    return json.loads(text) if len(text) <= _SHOWN else f"<{type(v).__module__}.{type(v).__qualname__}>"
