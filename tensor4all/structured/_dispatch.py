"""The one dispatcher of the structured layer and its three tables (seed 003).

An operation ``op`` (a tenferro function name: ``"matmul"``, ``"einsum"``, ``"svd"``,
...) applied to operands of which at least one is structured runs, in order:

1. **reduce rules** (:data:`REDUCE_RULES`, per op): rewrites that look only at types,
   shapes and dtypes, never at data ("the transpose of a diagonal is itself"). A rule
   returns the result, a :class:`Rewrite` (dispatch again), or ``NotImplemented``.
2. **kernels** (:data:`KERNELS`, keyed by ``(op, operand kinds)``): structured
   implementations on the dense leaves (an einsum with hyper-edges, block-wise
   LAPACK). A kernel may return ``NotImplemented`` (arguments it does not cover).
3. **fallback**: densify (``to_dense()``) the structured operands whose type has no
   kernel for ``op`` (if every type has one: those whose class has the highest
   ``_densify_order``, e.g. block-diagonals before diagonals), then dispatch again. Every
   fallback is counted per ``(op, kinds)`` in :func:`fallback_stats`; the policy
   (:func:`fallback_policy`) may also warn or raise :class:`DensifyError`.

Before step 1 the arguments are checked once, as the dense function would check them
(``_checks.py``): the call must fit the dense function's signature, operands beside a
structured one must be tensors, arrays or numbers, axis arguments are normalized by
tenferro's rules, and the operands of linear algebra pass ``tenferro.linalg``'s
non-finite check (leaf by leaf: NaN or inf raise ``NonFiniteError`` as dense).

The policy is a setting of the current context (a :class:`contextvars.ContextVar`,
like ``tenferro.linalg.settings``): ``with fallback_policy("error")`` in one thread or
asyncio task leaves the others alone; :func:`set_fallback_policy` changes the
process-wide default that contexts without an override see.

With no structured operand left, ``op`` runs as the dense tenferro function
(:data:`DENSE`). This module knows no structured type: an operand is structured when
its class sets ``_t4a_structured = True`` and has ``to_dense()``. The tables are filled
in one place, ``_tables.py``.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import inspect
import numbers
import operator
import threading
import warnings
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

import tenferro as tf

from ._checks import AXIS_CHECKS, dense_operand, linalg_operands
from ._errors import DensifyError, StructuredTypeError, StructuredValueError

__all__ = [
    "Dense",
    "Scalar",
    "Rewrite",
    "REDUCE_RULES",
    "KERNELS",
    "DENSE",
    "dispatch",
    "kind_of",
    "is_structured",
    "op_of_function",
    "fallback_stats",
    "reset_fallback_stats",
    "fallback_policy",
    "set_fallback_policy",
    "get_fallback_policy",
    "StructuredFallbackWarning",
    "structure_name",
]


class Dense:
    """Kind of a dense operand (tenferro tensor, tidu tracer, NumPy array) of ndim >= 1."""


class Scalar:
    """Kind of a scalar operand (Python/NumPy number or a 0-d tensor)."""


class Rewrite(NamedTuple):
    """A reduce rule's answer: dispatch ``op(*args, **kwargs)`` instead."""

    op: str
    args: tuple
    kwargs: dict


class StructuredFallbackWarning(UserWarning):
    """Emitted on every fallback to dense under ``fallback_policy("warn")``."""


# op -> (dense tenferro function path, number of leading array operands; -1: variadic after
# the subscripts (einsum)). A path under ``operator.`` is a Python operator (indexing).
DENSE: dict[str, tuple[str, int]] = {
    "einsum": ("einsum", -1),
    "matmul": ("matmul", 2),
    "add": ("add", 2),
    "subtract": ("subtract", 2),
    "multiply": ("multiply", 2),
    "divide": ("divide", 2),
    "negative": ("negative", 1),
    "conj": ("conj", 1),
    "real": ("real", 1),
    "imag": ("imag", 1),
    "transpose": ("transpose", 1),
    "sum": ("sum", 1),
    "trace": ("trace", 1),
    "svd": ("linalg.svd", 1),
    "qr": ("linalg.qr", 1),
    "eigh": ("linalg.eigh", 1),
    "inv": ("linalg.inv", 1),
    "solve": ("linalg.solve", 2),
    "det": ("linalg.det", 1),
    "slogdet": ("linalg.slogdet", 1),
    "norm": ("linalg.norm", 1),
    "expm": ("linalg.expm", 1),
    "tensordot": ("tensordot", 2),
    "truncated_svd": ("linalg.truncated_svd", 1),
    # elementwise functions of the operators (``abs(x)``, ``x ** p``, comparisons, ``x[i]``):
    # no structured kernel yet, so they densify (counted, subject to the policy) -- always
    # correct, also where the leafwise shortcut would not be (``d ** 0``, ``d == d``)
    "abs": ("abs", 1),
    "power": ("power", 2),
    "equal": ("equal", 2),
    "not_equal": ("not_equal", 2),
    "less": ("less", 2),
    "less_equal": ("less_equal", 2),
    "greater": ("greater", 2),
    "greater_equal": ("greater_equal", 2),
    "getitem": ("operator.getitem", 1),
}
# extra tenferro names that map to the same op (aliases)
_ALIASES = {"conjugate": "conj", "sub": "subtract", "mul": "multiply", "div": "divide", "neg": "negative"}

REDUCE_RULES: dict[str, list[Callable[..., Any]]] = collections.defaultdict(list)
KERNELS: dict[tuple[str, tuple[type, ...]], Callable[..., Any]] = {}

_MAX_STEPS = 16
_POLICIES = ("count", "warn", "error")
_default_policy = ["count"]  # process-wide (set_fallback_policy), under _lock
_policy: contextvars.ContextVar[str | None] = contextvars.ContextVar("tensor4all_fallback_policy", default=None)
_stats: collections.Counter = collections.Counter()  # process-wide, under _lock
_lock = threading.Lock()


# --- operand kinds -----------------------------------------------------------------
def is_structured(x: Any) -> bool:
    """Whether ``x`` is a structured tensor (its class sets ``_t4a_structured``)."""
    return getattr(type(x), "_t4a_structured", False)


def kind_of(x: Any) -> type:
    """The kind used in kernel keys: the structured class, :class:`Scalar` or :class:`Dense`."""
    if is_structured(x):
        return type(x)
    if isinstance(x, (numbers.Number, np.generic)):
        return Scalar
    shape = getattr(x, "shape", None)
    if shape is not None and len(shape) == 0:
        return Scalar
    return Dense


def structure_name(x: Any) -> str:
    """A short description of an operand for error messages."""
    if is_structured(x):
        return x._describe()
    shape = getattr(x, "shape", None)
    if shape is None:
        return f"{type(x).__name__} {x!r}"
    return f"dense {tuple(shape)} {getattr(x, 'dtype', '')}".rstrip()


def _operands(op: str, args: tuple) -> tuple:
    arity = DENSE[op][1]
    if arity < 0:  # einsum: operands follow the subscripts string (interleaved form: all args)
        return args[1:] if args and isinstance(args[0], str) else args
    return args[:arity]


def _key(op: str, args: tuple) -> tuple[str, tuple[type, ...]]:
    kinds = [kind_of(a) for a in _operands(op, args)]
    if DENSE[op][1] < 0:  # variadic: the set of kinds, ordered by name
        kinds = sorted(set(kinds), key=lambda k: k.__name__)
    return op, tuple(kinds)


def _dense_function(op: str) -> Callable[..., Any]:
    path = DENSE[op][0]
    if path.startswith("operator."):  # indexing: the dense tensor's own ``__getitem__``
        return getattr(operator, path[len("operator.") :])
    obj: Any = tf
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


_func_ops: dict[Any, str] | None = None


def op_of_function(func: Any) -> str | None:
    """The op name of a public tenferro function object (``tf.einsum`` -> ``"einsum"``),
    or None when the structured layer does not handle it."""
    global _func_ops
    if _func_ops is None:
        table = {}
        for op in DENSE:
            table[_dense_function(op)] = op
        for alias, op in _ALIASES.items():
            f = getattr(tf, alias, None)
            if f is not None:
                table.setdefault(f, op)
        _func_ops = table
    try:
        return _func_ops.get(func)
    except TypeError:  # unhashable
        return None


# --- argument checks at the entry (once per call) ----------------------------------------------
class _Entry(NamedTuple):
    """What the entry checks need to know of an op, from its dense function."""

    signature: inspect.Signature
    required: int  # required positional parameters
    positional: int  # positional parameters (-1: variadic)
    names: tuple[str, ...]  # their names
    linalg: bool  # a tenferro.linalg function: the non-finite check applies
    axes: Callable[..., None] | None


_entries: dict[str, _Entry] = {}


def _entry(op: str) -> _Entry:
    e = _entries.get(op)
    if e is None:
        sig = inspect.signature(_dense_function(op))
        ps = list(sig.parameters.values())
        pos = [p for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        e = _entries[op] = _Entry(
            sig,
            sum(p.default is p.empty for p in pos),
            -1 if any(p.kind is p.VAR_POSITIONAL for p in ps) else len(pos),
            tuple(p.name for p in pos),
            DENSE[op][0].startswith("linalg."),
            AXIS_CHECKS.get(op),
        )
    return e


def _check_call(op: str, args: tuple, kwargs: dict) -> tuple:
    """The call checked as the dense function would check it (see the module doc);
    returns the arguments to dispatch (dense operands converted, linear-algebra
    operands passed through the non-finite check)."""
    e = _entry(op)
    if kwargs or len(args) < e.required or 0 <= e.positional < len(args):
        try:
            e.signature.bind(*args, **kwargs)
        except TypeError as err:
            params = ", ".join(str(p.replace(annotation=p.empty)) for p in e.signature.parameters.values())
            raise StructuredTypeError(f"{op}: {err}; expected {op}({params})") from None
    variadic = e.positional < 0
    if variadic and not isinstance(args[0], str):  # einsum(op0, [0, 1], ...): lists are labels; tenferro checks it
        return args
    first = 1 if variadic else 0
    operands = args[first:] if variadic else args[: DENSE[op][1]]
    checked = tuple(a if is_structured(a) else dense_operand(op, first + i, a) for i, a in enumerate(operands))
    if e.axes is not None:  # same parameters as the dense function, after its operand
        e.axes(checked[0].ndim, *args[1:], **kwargs)
    if e.linalg:
        checked = linalg_operands(op, e.names, checked, tuple(is_structured(a) for a in checked))
    if any(a is not b for a, b in zip(checked, operands)):
        args = (*args[:first], *checked) if variadic else (*checked, *args[len(checked) :])
    return args


# --- the dispatcher ----------------------------------------------------------------------
def dispatch(op: str, *args: Any, **kwargs: Any) -> Any:
    """Run ``op`` on ``args``: reduce rules, then a kernel, else densify and retry."""
    if not isinstance(op, str) or op not in DENSE:
        raise StructuredTypeError(f"dispatch: unknown operation {op!r}; known: {sorted(DENSE)}")
    if not any(is_structured(a) for a in _operands(op, args)):
        return _dense_function(op)(*args, **kwargs)
    args = _check_call(op, args, kwargs)
    counted = False
    for _ in range(_MAX_STEPS):
        operands = _operands(op, args)
        if not any(is_structured(a) for a in operands):
            return _dense_function(op)(*args, **kwargs)
        rewritten = False
        for rule in REDUCE_RULES.get(op, ()):
            out = rule(*args, **kwargs)
            if out is NotImplemented:
                continue
            if isinstance(out, Rewrite):
                op, args, kwargs = out.op, tuple(out.args), dict(out.kwargs)
                rewritten = True
                break
            return out
        if rewritten:
            continue
        key = _key(op, args)
        kernel = KERNELS.get(key)
        if kernel is not None:
            out = kernel(*args, **kwargs)
            if out is not NotImplemented:
                return out
        args = _densify(op, key, args, counted)
        counted = True
    raise StructuredTypeError(f"dispatch: {op} did not settle after {_MAX_STEPS} rewrites")  # pragma: no cover


def _densify(op: str, key: tuple, args: tuple, counted: bool) -> tuple:
    operands = _operands(op, args)
    names = ", ".join(structure_name(a) for a in operands)
    policy = get_fallback_policy()
    if policy == "error":
        raise DensifyError(
            f"{op}({names}): no structured kernel for {_key_str(key)} and densifying is "
            "forbidden (fallback_policy('error'))"
        )
    if not counted:
        with _lock:
            _stats[(op, tuple(k.__name__ for k in key[1]))] += 1
        if policy == "warn":
            warnings.warn(
                f"{op}({names}): no structured kernel for {_key_str(key)}; falling back to dense",
                StructuredFallbackWarning,
                stacklevel=4,
            )
    with_kernel = {k for (o, kinds) in KERNELS for k in kinds if o == op}
    present = {type(a) for a in operands if is_structured(a)}
    chosen = {t for t in present if t not in with_kernel}
    if not chosen:  # every type has kernels for op: densify the type that gains least from its structure
        top = max(getattr(t, "_densify_order", 0) for t in present)
        chosen = {t for t in present if getattr(t, "_densify_order", 0) == top}
    dense = tuple(a.to_dense() if type(a) in chosen else a for a in operands)
    if DENSE[op][1] < 0:
        return (args[0], *dense) if args and isinstance(args[0], str) else dense
    return (*dense, *args[len(dense) :])


def _key_str(key: tuple) -> str:
    return f"({key[0]!r}, ({', '.join(k.__name__ for k in key[1])}))"


# --- fallback statistics and policy -----------------------------------------------------------
def fallback_stats() -> dict[tuple[str, tuple[str, ...]], int]:
    """How often each ``(op, operand kinds)`` fell back to dense since the last reset
    (counted over the whole process, all threads)."""
    with _lock:
        return dict(_stats)


def reset_fallback_stats() -> None:
    """Forget the fallback counts."""
    with _lock:
        _stats.clear()


def _check_policy(policy: Any) -> str:
    """A policy that is not a string is a :class:`StructuredTypeError`; a string that is
    not a policy a :class:`StructuredValueError` (as ``tenferro.linalg.settings`` refuses
    an unknown value with a ``ValueError``)."""
    if not isinstance(policy, str):
        raise StructuredTypeError(
            f"fallback policy must be one of {_POLICIES}, got {policy!r} of type {type(policy).__name__}"
        )
    if policy not in _POLICIES:
        raise StructuredValueError(f"fallback policy must be one of {_POLICIES}, got {policy!r}")
    return policy


def get_fallback_policy() -> str:
    """The policy in force here: the innermost :func:`fallback_policy` of the current
    context (thread or asyncio task), else the process-wide default (``"count"``
    unless :func:`set_fallback_policy` changed it)."""
    policy = _policy.get()
    return _default_policy[0] if policy is None else policy


def set_fallback_policy(policy: str) -> str:
    """Set the process-wide default policy on fallbacks to dense; returns the previous
    default. A :func:`fallback_policy` block still overrides it in its own context.

    ``"count"`` only counts, ``"warn"`` also emits :class:`StructuredFallbackWarning`,
    ``"error"`` raises :class:`DensifyError` instead of densifying.
    """
    _check_policy(policy)
    with _lock:
        old, _default_policy[0] = _default_policy[0], policy
    return old


@contextlib.contextmanager
def fallback_policy(policy: str) -> Iterator[None]:
    """Use ``policy`` inside the ``with`` block, in the current context only (a
    :class:`contextvars.ContextVar`, like ``tenferro.linalg.settings``): other threads
    and asyncio tasks keep theirs, and leaving the block restores exactly what was in
    force before, whatever other threads did meanwhile.

    >>> with fallback_policy("error"):
    ...     pass
    """
    token = _policy.set(_check_policy(policy))
    try:
        yield
    finally:
        _policy.reset(token)
