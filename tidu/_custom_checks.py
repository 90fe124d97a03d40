"""Checks of what the rules of ``custom_jvp`` and ``custom_vjp`` functions return, the one
place their messages are written: every message names the function and the rule (``custom_jvp
rule of 'f'``, ``custom_vjp bwd of 'f'``) and says what was expected. ``None`` and
:class:`Zero` stand for a zero at any node of a tangent or cotangent (a prefix of the
structure, as in JAX), and a traced value of the transformation being applied met in a rule's
result or closure is an error naming the fix (pass the value as an argument)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._argspec import is_static_leaf
from ._errors import CustomRuleError, UnregisteredTypeError
from ._pytree import PyTreeDef, tree_flatten
from ._tracer import Tracer, aval_of
from ._vspace import vspace_of_aval
from ._zero import Zero

__all__ = [
    "ZERO_HINT",
    "contains_tracer_of",
    "any_tracer_of",
    "any_tracer_above",
    "closes_over_inner",
    "closes_over",
    "tangent_aval",
    "leaves_up_to",
    "check_out_types",
    "check_jvp_result",
    "check_fwd_result",
    "check_cotangents",
    "split_residuals",
    "merge_residuals",
]

ZERO_HINT = "None or tidu.Zero.like(primal) stands for a zero"


def contains_tracer_of(trace: Any, tree: Any) -> bool:
    """Whether a leaf of ``tree`` is a tracer of ``trace`` (or carries one as its primal)."""
    return any_tracer_of(trace, tree_flatten(tree)[0])


def any_tracer_of(trace: Any, leaves: Sequence[Any]) -> bool:
    """Whether one of ``leaves`` is a tracer of ``trace`` (or carries one as its primal)."""
    for leaf in leaves:
        if isinstance(leaf, Tracer):
            if leaf._trace is trace:
                return True
            primal = getattr(leaf, "primal", None)
            if primal is not None and contains_tracer_of(trace, primal):
                return True
    return False


def any_tracer_above(trace: Any, leaves: Sequence[Any]) -> bool:
    """Whether one of ``leaves`` is (or carries as its primal) a tracer of an active trace
    above ``trace``: a value ``trace``'s own tracers must not hold."""
    for leaf in leaves:
        while isinstance(leaf, Tracer):
            t = leaf._trace
            if t.level > trace.level and t.active:
                return True
            leaf = getattr(leaf, "primal", None)
    return False


def closes_over_inner(call: Any, where: str) -> CustomRuleError:
    return CustomRuleError(
        f"{call.kind} function {call.name!r} closes over a value of a transformation applied inside the {where} "
        "that met the call and that its arguments do not depend on (e.g. a value batched by an inner vmap); "
        "pass the value to the function as an explicit argument"
    )


def closes_over(fun: Callable[..., Any] | None, trace: Any) -> bool:
    """Whether the closure of ``fun`` (a Python function) holds a tracer of ``trace``."""
    for cell in getattr(fun, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if contains_tracer_of(trace, value):
            return True
    return False


def tangent_aval(x: Any) -> Any:
    """The tangent aval of a primal (``None`` for integer and boolean values)."""
    a = aval_of(x)
    return vspace_of_aval(a).tangent_aval(a)


def leaves_up_to(tree: PyTreeDef, value: Any) -> list | None:
    """The leaves of ``value`` at the leaves of ``tree``, ``None`` for each leaf under a ``None``
    or :class:`Zero` (a zero for the whole subtree); ``None`` when the structures differ."""
    leaves, vtree = tree_flatten(value)
    if vtree == tree:  # the common case: the same structure
        return [None if type(x) is Zero else x for x in leaves]
    out: list = []
    if not _match(tree, vtree, iter(leaves), out):
        return None
    return [None if type(x) is Zero else x for x in out]


def _match(want: PyTreeDef, got: PyTreeDef, it: Any, out: list) -> bool:
    if got.node is type(None) and want.node is not type(None):
        out.extend([None] * want.num_leaves)
        return True
    if got.node is None:
        leaf = next(it)
        if want.node is None:
            out.append(leaf)
            return True
        if type(leaf) is Zero:
            out.extend([None] * want.num_leaves)
            return True
        return False
    if want.node is not got.node or want.aux != got.aux or len(want.children) != len(got.children):
        return False
    return all(_match(w, g, it, out) for w, g in zip(want.children, got.children))


def _got(x: Any) -> str:
    """What a rule returned, in words, for a message about its container."""
    if isinstance(x, (tuple, list)):
        return f"{type(x).__name__} of length {len(x)}"
    if isinstance(x, Tracer):
        return f"a single value ({x.aval}, traced)"
    return type(x).__name__


def _type_of(x: Any) -> str:
    try:
        return str(aval_of(x))
    except UnregisteredTypeError:
        return f"a {type(x).__name__} (no registered value type)"


def _aval_or_error(x: Any, what: str, expected: Any) -> Any:
    try:
        return aval_of(x)
    except UnregisteredTypeError:
        raise CustomRuleError(
            f"{what} of type {type(x).__name__}, which is no value of a registered type; expected a value of "
            f"type {expected} ({ZERO_HINT})"
        ) from None


def check_out_types(call: Any, rule: str, flat: Sequence[Any], tree: PyTreeDef) -> None:
    """The primal output of a rule against the function's output (when ``call.expect``, its
    structure and avals, is known: inside a graph or a compiled function)."""
    if call.expect is None:
        return
    want_tree, want_avals = call.expect
    where = f"{call.kind} {rule} of {call.name!r}"
    if tree != want_tree:
        raise CustomRuleError(
            f"{where} returned a primal output of structure {tree}, but the function returns {want_tree}; "
            "the rule's primal output must equal the function's output"
        )
    for i, (p, a) in enumerate(zip(flat, want_avals)):
        try:
            same = aval_of(p) == a
        except UnregisteredTypeError:
            same = False
        if not same:
            raise CustomRuleError(
                f"{where} returned a primal output (leaf {i}) of type {_type_of(p)}, but the function returns "
                f"{a} there; the rule's primal output must equal the function's output"
            )


def check_jvp_result(call: Any, res: Any) -> tuple[list, list, PyTreeDef]:
    """A custom_jvp rule's ``(primal_out, tangent_out)`` checked: flat primal outputs, flat
    tangents (:class:`Zero` for a zero) and the output structure."""
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise CustomRuleError(
            f"custom_jvp rule of {call.name!r} must return a pair (primal_out, tangent_out), got {_got(res)}"
        )
    p_out, t_out = res
    p_flat, p_tree = tree_flatten(p_out)
    if call.expect is not None:
        check_out_types(call, "rule", p_flat, p_tree)
    t_flat, t_tree = tree_flatten(t_out)
    if t_tree != p_tree:
        t_flat = leaves_up_to(p_tree, t_out)
    if t_flat is None:
        raise CustomRuleError(
            f"custom_jvp rule of {call.name!r}: primal output structure {p_tree} differs from tangent output "
            f"structure {tree_flatten(t_out)[1]} (the tangent must have the primal's structure; {ZERO_HINT})"
        )
    out = []
    for i, (p, t) in enumerate(zip(p_flat, t_flat)):
        if t is None or type(t) is Zero:
            out.append(Zero.like(p))
            continue
        try:
            want = tangent_aval(p)
            got = aval_of(t)
        except UnregisteredTypeError:
            raise _unregistered_tangent(call, i, p, t) from None
        if want != got:
            raise CustomRuleError(
                f"custom_jvp rule of {call.name!r} returned a tangent of type {got} for a primal output whose "
                f"tangent type is {want}"
                + (" (an integer or boolean output: return None for its tangent)" if want is None else "")
            )
        out.append(t)
    return p_flat, out, p_tree


def _unregistered_tangent(call: Any, i: int, p: Any, t: Any) -> CustomRuleError:
    where = f"custom_jvp rule of {call.name!r}"
    try:
        want = tangent_aval(p)
    except UnregisteredTypeError:
        return CustomRuleError(
            f"{where} returned a primal output (leaf {i}) of type {type(p).__name__}, which is no value of a "
            "registered type"
        )
    try:
        _aval_or_error(t, f"{where} returned a tangent (output leaf {i})", want)
    except CustomRuleError as exc:
        return exc
    return CustomRuleError(f"{where} returned a tangent (output leaf {i}) of an unregistered type")


def check_fwd_result(call: Any, res: Any) -> tuple[list, PyTreeDef, list, PyTreeDef]:
    """A custom_vjp fwd's ``(output, residuals)`` checked: flat outputs, their structure, flat
    residuals (values of a registered type, or Python scalars and strings) and theirs."""
    where = f"custom_vjp fwd of {call.name!r}"
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise CustomRuleError(f"{where} must return a pair (output, residuals), got {_got(res)}")
    out, residuals = res
    out_flat, out_tree = tree_flatten(out)
    check_out_types(call, "fwd", out_flat, out_tree)
    res_flat, res_tree = tree_flatten(residuals)
    for i, r in enumerate(res_flat):
        if isinstance(r, Tracer) or is_static_leaf(r):
            continue
        try:
            aval_of(r)
        except UnregisteredTypeError:
            raise CustomRuleError(
                f"{where} returned a residual (leaf {i} of structure {res_tree}) of type {type(r).__name__}, "
                "which is no value of a registered type; residuals are values of a registered type (tensors) "
                "or Python scalars and strings"
            ) from None
    return out_flat, out_tree, res_flat, res_tree


def split_residuals(res_flat: Sequence[Any]) -> tuple[list, tuple]:
    """Residual leaves split into values (graph operands) and static ones (Python scalars and
    strings, kept as ``(index, value)`` pairs)."""
    dyn, static = [], []
    for i, r in enumerate(res_flat):
        if not isinstance(r, Tracer) and is_static_leaf(r):
            static.append((i, r))
        else:
            dyn.append(r)
    return dyn, tuple(static)


def merge_residuals(dyn: Sequence[Any], static: tuple) -> list:
    """The inverse of :func:`split_residuals`."""
    out = list(dyn)
    for i, r in static:
        out.insert(i, r)
    return out


def check_cotangents(
    call: Any, ct_in: Any, trees: Sequence[PyTreeDef], static: Sequence[bool], in_avals: Sequence[Any], label: Any
) -> list:
    """A custom_vjp bwd's cotangents checked against its arguments: one entry per argument
    (``trees``: their structures), each of the argument's structure up to ``None``/``Zero``
    prefixes, each leaf of its primal's tangent type (``in_avals``, one per leaf that is not
    ``static``). Returns one cotangent per non-static leaf, ``None`` for a zero."""
    where = f"custom_vjp bwd of {call.name!r}"
    n = len(trees)
    if not isinstance(ct_in, (tuple, list)) or len(ct_in) != n:
        raise CustomRuleError(f"{where} must return a tuple of {n} cotangents (one per argument), got {_got(ct_in)}")
    flat: list = []
    for k, (sub, ct) in enumerate(zip(trees, ct_in)):
        leaves = leaves_up_to(sub, ct)
        if leaves is None:
            raise CustomRuleError(
                f"{where} returned a cotangent of structure {tree_flatten(ct)[1]} for {label(k)} of structure "
                f"{sub} ({ZERO_HINT})"
            )
        flat.extend((c, k) for c in leaves)
    out = []
    avals = iter(in_avals)
    for (c, k), st in zip(flat, static):
        if st:  # a Python scalar or string argument: static, its cotangent is dropped
            continue
        want = next(avals)
        if c is None:
            out.append(None)
            continue
        got = _aval_or_error(c, f"{where} returned a cotangent for {label(k)}", want)
        if got != want:
            extra = " (an integer or boolean argument: return None for it)" if want is None else f" (for {label(k)})"
            raise CustomRuleError(f"{where} returned a cotangent of type {got}, expected {want}{extra}")
        out.append(c)
    return out
