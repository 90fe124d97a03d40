"""``custom_jvp`` and ``custom_vjp``: the decorators, how a call binds its arguments, and
:class:`CustomCall`, the one view of a call every transformation works with.

A call binds keyword arguments to positions through the function's signature (defaults
filled in, as JAX's ``resolve_kwargs``), sets ``nondiff_argnums`` aside (passed to the rules
first, as in JAX) and splits the other arguments into leaves: Python scalars and strings are
static (passed to the function and its rules as they are, as ``checkpoint`` and ``tenferro.jit``
treat them), the rest are the call's *dynamic leaves*. A :class:`CustomCall` is a function of
those leaves, flat, with checked rules (``jvp``, ``fwd``, ``bwd``: see
:mod:`tidu._custom_checks`). The trace that meets a call handles it through one table, keyed by
trace type (filled by :mod:`tidu._custom`); ``vmap`` and staging wrap a call in another
:class:`CustomCall` whose function and rules are batched or closure-converted.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from ._argspec import is_static_leaf
from ._core import find_top_trace
from ._custom_checks import check_cotangents, check_fwd_result, check_jvp_result, closes_over, tangent_aval
from ._errors import CustomRuleError, InvalidArgumentError, UnexpectedTracerError
from ._pytree import PyTreeDef, tree_flatten, tree_unflatten
from ._tracer import Tracer, aval_of

__all__ = ["custom_jvp", "custom_vjp", "CustomCall", "UserCall", "HANDLERS", "DEFAULTS", "handler", "dispatch"]

HANDLERS: dict[tuple[type, str], Callable[..., Any]] = {}
"""How a trace type handles a ``custom_jvp``/``custom_vjp`` call or a ``checkpoint``:
``(trace type, kind) -> handler(trace, call, leaves)``; filled by :mod:`tidu._custom`."""

DEFAULTS: dict[str, Callable[..., Any]] = {}
"""The handler of a trace type not in :data:`HANDLERS` (the function inlined), per kind."""


def handler(trace: Any, kind: str) -> Callable[..., Any]:
    """The rule with which ``trace`` processes a ``kind`` (custom_jvp, custom_vjp, checkpoint)."""
    for t in type(trace).__mro__:
        h = HANDLERS.get((t, kind))
        if h is not None:
            return h
    return DEFAULTS[kind]


def dispatch(call: "CustomCall", leaves: Sequence[Any]) -> Any:
    """``call`` applied to its dynamic leaves: the function itself outside any
    transformation, the innermost transformation's handler otherwise."""
    top = find_top_trace(leaves)
    if top is None:
        return call.fun(*leaves)
    return handler(top, call.kind)(top, call, list(leaves))


class CustomCall:
    """A custom function as a function of its dynamic leaves (flat) with checked rules:

    * ``fun(*leaves)``: the output pytree;
    * ``jvp(primals, tangents) -> (primal leaves, tangent leaves, output structure)``: tangents
      in are dense (``None`` for integer leaves), tangents out :class:`Zero` for a zero;
    * ``fwd(*leaves) -> (output leaves, output structure, residual leaves, their structure)``;
    * ``bwd(residual leaves, residual structure, cotangent leaves, output structure, tangent avals
      of the leaves) -> one cotangent per leaf`` (``None`` for a zero).

    ``n_closure``: leading leaves that are values the function closes over (closure
    conversion); differentiating with respect to them together with an argument is an error
    (with respect to them alone, the function's own derivative). ``expect``: the function's
    output structure and avals when known, checked against the rules' primal outputs.
    """

    __slots__ = ("kind", "name", "n_closure", "expect")

    def __init__(self, kind: str, name: str, n_closure: int = 0):
        self.kind = kind
        self.name = name
        self.n_closure = n_closure
        self.expect: tuple[PyTreeDef, tuple] | None = None

    @property
    def __name__(self) -> str:  # (graph printing: fn=name)
        return self.name

    def __repr__(self) -> str:
        return f"<{self.kind} call of {self.name!r}>"

    @property
    def origin(self) -> Any:
        """The user's custom function this call comes from."""
        raise NotImplementedError

    def check_closure(self, trace: Any) -> None:
        """Raise if a rule run later (``bwd``) closes over a tracer of ``trace``."""

    def fun(self, *leaves: Any) -> Any:
        raise NotImplementedError

    def jvp(self, primals: list, tangents: list) -> tuple[list, list, PyTreeDef]:
        raise NotImplementedError

    def fwd(self, *leaves: Any) -> tuple[list, PyTreeDef, list, PyTreeDef]:
        raise NotImplementedError

    def bwd(self, res: list, res_tree: PyTreeDef, cts: list, out_tree: PyTreeDef, in_avals: tuple) -> list:
        raise NotImplementedError

    def run(self, rule: str, f: Callable[..., Any], *args: Any) -> Any:
        """``f(*args)``, a stale tracer met in it reported as a closure of the rule."""
        try:
            return f(*args)
        except UnexpectedTracerError as exc:
            fix = " and return it from fwd among the residuals" if rule == "bwd" else ""
            raise CustomRuleError(
                f"{self.kind} {rule} of {self.name!r} uses a traced value of a transformation that has finished "
                f"(or of another thread): it closes over a traced value. Pass the value to the function "
                f"as an explicit argument{fix}"
            ) from exc


_DYN = object()  # marks a dynamic leaf among a call's argument leaves


def _static_tangent(x: Any) -> Any:
    """The tangent a rule sees for a static leaf: a zero of a float or complex, else ``None``."""
    return type(x)(0) if type(x) in (float, complex) else None


def _key_part(v: Any) -> Any:
    try:
        hash(v)
        return (type(v), v)
    except TypeError:
        return ("id", id(v))


class UserCall(CustomCall):
    """One call of the user's ``custom_jvp``/``custom_vjp`` function ``fn``: equal (and
    hashing alike) for equal argument structure, static values and ``nondiff_argnums`` values."""

    __slots__ = ("fn", "nondiff", "tree", "leaf_vals", "trees", "static_mask", "has_static", "_key_cache")

    def __init__(self, fn: Any, nondiff: tuple, tree: PyTreeDef, leaves: list, static_mask: list):
        self.kind, self.name, self.n_closure, self.expect = fn.kind, fn.fun_name, 0, None
        self.fn = fn
        self.nondiff = nondiff  # ((position, value), ...), ascending
        self.tree = tree  # of the differentiable arguments (a tuple)
        self.has_static = any(static_mask)
        self.leaf_vals = tuple(x if st else _DYN for x, st in zip(leaves, static_mask)) if self.has_static else ()
        self.static_mask = static_mask
        self.trees = tree.children
        self._key_cache: tuple | None = None

    @property
    def _key(self) -> tuple:
        """The argument structure, the static values and the nondiff_argnums values."""
        key = self._key_cache
        if key is None:
            statics = tuple(_key_part(x) for x in self.leaf_vals if x is not _DYN)
            key = self._key_cache = (self.tree, statics, tuple((p, _key_part(v)) for p, v in self.nondiff))
        return key

    @property
    def origin(self) -> Any:
        return self.fn

    def __eq__(self, other: object) -> bool:
        return type(other) is UserCall and self.fn is other.fn and self._key == other._key

    def __hash__(self) -> int:
        return hash((id(self.fn), self._key))

    def _diff_args(self, dyn: Sequence[Any], static: Callable[[Any], Any]) -> Any:
        if not self.has_static:
            return tree_unflatten(self.tree, dyn)
        it = iter(dyn)
        return tree_unflatten(self.tree, [next(it) if x is _DYN else static(x) for x in self.leaf_vals])

    def args(self, dyn: Sequence[Any]) -> tuple:
        """The positional arguments of the function, from the dynamic leaves."""
        diff = self._diff_args(dyn, _same)
        if not self.nondiff:
            return diff
        out = list(diff)
        for pos, v in self.nondiff:
            out.insert(pos, v)
        return tuple(out)

    def _nondiff_values(self) -> list:
        return [v for _, v in self.nondiff]

    def fun(self, *leaves: Any) -> Any:
        return self.fn.fun(*self.args(leaves))

    def jvp(self, primals: list, tangents: list) -> tuple[list, list, PyTreeDef]:
        p_args = self._diff_args(primals, _same)
        t_args = self._diff_args(tangents, _static_tangent)
        if self.nondiff:
            res = self.run("rule", self.fn.jvp, *self._nondiff_values(), p_args, t_args)
        else:
            res = self.run("rule", self.fn.jvp, p_args, t_args)
        if self.expect is None and self.fn._out_types:  # the output types, when a graph has them
            self.expect = self.fn._out_types.get((self._key, tuple(aval_of(p) for p in primals)))
        return check_jvp_result(self, res)

    def fwd(self, *leaves: Any) -> tuple[list, PyTreeDef, list, PyTreeDef]:
        return check_fwd_result(self, self.run("fwd", self.fn.fwd, *self.args(leaves)))

    def bwd(self, res: list, res_tree: PyTreeDef, cts: list, out_tree: PyTreeDef, in_avals: tuple) -> list:
        ct = tree_unflatten(out_tree, cts)
        ct_in = self.run("bwd", self.fn.bwd, *self._nondiff_values(), tree_unflatten(res_tree, res), ct)
        return check_cotangents(self, ct_in, self.trees, self.static_mask, in_avals, self.fn.label_of_diff(self))

    def check_closure(self, trace: Any) -> None:
        if closes_over(self.fn.bwd, trace):
            raise CustomRuleError(
                f"custom_vjp bwd of {self.name!r} closes over a value being differentiated (a tracer of this "
                "transformation); bwd runs after it has finished. Pass the value to the function as an explicit "
                "argument and return it from fwd among the residuals"
            )


def _same(x: Any) -> Any:
    return x


class _Params:
    """How a custom function's arguments bind: keyword arguments to positions through the
    signature, defaults filled in (JAX's ``resolve_kwargs``)."""

    __slots__ = ("sig", "names", "n_positional", "has_defaults", "where")

    def __init__(self, fun: Callable[..., Any], where: str):
        self.where = where
        try:
            self.sig: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self.sig = None
        params = list(self.sig.parameters.values()) if self.sig is not None else []
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.names = [p.name for p in params if p.kind in kinds]
        self.n_positional = len(self.names)
        self.has_defaults = any(p.default is not inspect.Parameter.empty for p in params if p.kind in kinds)

    def resolve(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and (not self.has_defaults or len(args) >= self.n_positional):
            return args
        if self.sig is None:
            raise InvalidArgumentError(
                f"{self.where}: keyword arguments {sorted(kwargs)} cannot be bound to positions (the function "
                "has no signature to read); pass them positionally"
            )
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise InvalidArgumentError(f"{self.where}: {exc}") from None
        bound.apply_defaults()
        passed = sorted(k for k in bound.kwargs if k in kwargs)
        if passed:
            raise InvalidArgumentError(
                f"{self.where}: keyword-only arguments {passed} cannot be passed to a custom function (its rules "
                "take the arguments by position); make them positional parameters"
            )
        return bound.args

    def label(self, pos: int) -> str:
        return f"argument {pos} ({self.names[pos]})" if pos < len(self.names) else f"argument {pos}"


def _nondiff_nums(nums: Any, where: str) -> tuple[int, ...]:
    if nums is None:
        return ()
    t = (nums,) if type(nums) is int else nums
    try:
        t = tuple(t)
    except TypeError:
        t = (t,)
    if any(type(i) is not int or i < 0 for i in t):
        raise InvalidArgumentError(f"{where}: nondiff_argnums must be non-negative ints, got {nums!r}")
    return tuple(sorted(set(t)))


class _CustomFunction:
    """What ``custom_jvp`` and ``custom_vjp`` share: binding a call's arguments."""

    kind = ""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Any = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fun_name = getattr(fun, "__name__", "fun")
        where = f"{self.kind} function {self.fun_name!r}"
        self.nondiff_argnums = _nondiff_nums(nondiff_argnums, where)
        self._params = _Params(fun, where)
        self._out_types: dict = {}  # staging's cache: (call key, input avals) -> (output structure, output avals)

    def label_of_diff(self, call: UserCall) -> Callable[[int], str]:
        """Differentiable argument ``k`` of ``call`` in words (``argument 1 (y)``)."""
        nd = {p for p, _ in call.nondiff}
        positions = [i for i in range(len(call.trees) + len(nd)) if i not in nd]
        return lambda k: self._params.label(positions[k])

    def _bind(self, args: tuple, kwargs: dict) -> Any:
        """The function's result outside any transformation, or the call's handler's."""
        if kwargs or self._params.has_defaults:
            args = self._params.resolve(args, kwargs)
        nd = self.nondiff_argnums
        if nd:
            if nd[-1] >= len(args):
                raise InvalidArgumentError(
                    f"{self.kind} function {self.fun_name!r}: nondiff_argnums={nd} but it was called with "
                    f"{len(args)} positional arguments"
                )
            nondiff = tuple((i, args[i]) for i in nd)
            if any(isinstance(x, Tracer) for _, v in nondiff for x in tree_flatten(v)[0]):
                raise CustomRuleError(
                    f"{self.kind} function {self.fun_name!r}: an argument in nondiff_argnums={nd} is a traced value; "
                    "nondiff_argnums are for values that are never traced (functions, options): pass traced "
                    "values as ordinary arguments"
                )
            diff = tuple(a for i, a in enumerate(args) if i not in nd)
        else:
            nondiff, diff = (), args
        leaves, tree = tree_flatten(diff)
        top = find_top_trace(leaves)
        if top is None:
            return self.fun(*args)
        mask = [is_static_leaf(x) for x in leaves]  # (a tracer is never one)
        call = UserCall(self, nondiff, tree, leaves, mask)
        dyn = [x for x, st in zip(leaves, mask) if not st] if call.has_static else leaves
        return handler(top, self.kind)(top, call, dyn)


class custom_jvp(_CustomFunction):
    """A function with a user-supplied JVP rule (same contract as ``jax.custom_jvp``).

    >>> @custom_jvp
    ... def f(x): ...
    >>> @f.defjvp
    ... def f_jvp(primals, tangents): return f(*primals), ...

    The rule receives tuples of primals and tangents (zero tangents are dense zeros;
    ``None`` for an integer argument; a Python scalar or string argument is static: its
    value among the primals, ``0.0`` or ``None`` among the tangents) and returns
    ``(primal_out, tangent_out)`` of matching structure, where ``None`` or
    ``tidu.Zero.like(primal)`` stands for a zero tangent at any node. Keyword arguments bind
    to positions (defaults filled in). ``nondiff_argnums``: arguments that are no values
    (functions, options), passed first to the rule, ``rule(*nondiff, primals, tangents)``,
    and left out of ``primals``. Reverse mode transposes the rule's (linear) tangent
    computation. The rule must not close over a value being differentiated (an error, as in
    JAX): pass such a value as an argument.
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Any = ()):
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise CustomRuleError(f"custom_jvp function {self.fun_name!r} has no JVP rule; call .defjvp")
        return self._bind(args, kwargs)


class custom_vjp(_CustomFunction):
    """A function with a user-supplied VJP (same contract as ``jax.custom_vjp``).

    ``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff, residuals, ct_out) -> tuple`` with
    one cotangent pytree per positional argument not in ``nondiff_argnums`` (``None`` or
    ``tidu.Zero.like(x)`` for a zero, at any node; ``None`` for a static Python scalar or
    string argument). Residuals are values of a registered type or Python scalars and strings.
    The cotangent of an integer output reaches ``bwd`` as ``None``. Forward-mode (``jvp``)
    differentiation of such a function is an error, as in JAX; so is a ``bwd`` closing over
    a value being differentiated (return it from ``fwd`` among the residuals).
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Any = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None:
            raise CustomRuleError(f"custom_vjp function {self.fun_name!r} has no rules; call .defvjp(fwd, bwd)")
        return self._bind(args, kwargs)


def in_tangent_avals(primals: Sequence[Any]) -> tuple:
    """The tangent avals of a call's dynamic leaves (``None`` for integer ones)."""
    return tuple(tangent_aval(p) for p in primals)
