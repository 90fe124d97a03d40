"""Public transformations, with JAX's names and signatures.

Reverse mode is linearize then transpose. Complex numbers follow JAX: JVPs are
R-linear; transposition is with respect to the real bilinear pairing
``Re sum(a * b)``, so ``grad`` of a real loss ``L`` at complex ``z = x + iy``
returns ``dL/dx - i dL/dy``; ``grad`` of a complex output needs ``holomorphic=True``.
Jacobians and Hessians are in :mod:`tidu._jacobian`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import numbers
import operator
import types
from typing import Any, Callable, Sequence

from ._ad import JVPTracer, backward_pass, jvp_flat, linearize_flat, paused_gc
from ._errors import (
    ComplexOutputError,
    InvalidArgumentError,
    NonDifferentiableError,
    NonScalarOutputError,
    TangentMismatchError,
    TreeStructureError,
    UnexpectedTracerError,
    UnregisteredTypeError,
)
from .graph import Graph, make_graph
from ._pytree import PyTreeDef, node_type, tree_flatten, tree_leaves, tree_map, tree_unflatten
from ._tracer import Tracer, aval_of
from ._vspace import _lookup, _value_vspaces, promote_scalar, vspace_of_aval
from ._zero import Zero, instantiate

__all__ = ["jvp", "linearize", "linear_transpose", "vjp", "grad", "value_and_grad", "hvp", "LinearFunction", "promoted"]


def _check_tangents(where: str, primals: list, tangents: list, kind: str = "tangent") -> list:
    """Validate leaves of tangents against primals; ``None`` means zero."""
    out = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        a = aval_of(p)
        ta = vspace_of_aval(a).tangent_aval(a)
        if t is None or type(t) is Zero:
            out.append(Zero(ta) if ta is not None else Zero.like(p))
            continue
        if ta is None:
            raise TangentMismatchError(
                f"{where}: primal leaf {i} of type {a} carries no {kind} (it is not differentiable); pass None"
            )
        got = aval_of(t)
        if got != ta:
            raise TangentMismatchError(f"{where}: {kind} leaf {i} has type {got}, expected {ta} for primal {a}")
        out.append(t)
    return out


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> tuple:
    """Forward mode: ``(f(*primals), J(primals) @ tangents)`` (plus ``aux`` when ``has_aux``:
    ``f`` then returns ``(output, aux)`` and ``aux`` comes back undifferentiated, as in JAX).

    ``primals`` and ``tangents`` are tuples (or lists) of pytrees with equal
    structure; a ``None`` tangent leaf is a zero tangent.
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TreeStructureError(
            "jvp: primals and tangents must be tuples or lists of arguments, got "
            f"{type(primals).__name__} and {type(tangents).__name__}"
        )
    p_flat, p_tree = tree_flatten(promoted(tuple(primals)))
    t_flat = _flatten_like(promoted(tuple(tangents)), p_tree, "jvp")  # a None leaf is a zero tangent
    t_flat = _check_tangents("jvp", p_flat, t_flat)
    aux_box: list = []
    out_p, out_t, out_tree = jvp_flat(_strip_aux(f, aux_box) if has_aux else f, p_flat, t_flat, p_tree)
    out = tree_unflatten(out_tree, out_p), tree_unflatten(out_tree, [instantiate(t) for t in out_t])
    return (*out, _aux_value(aux_box[0])) if has_aux else out


def promoted(tree: Any) -> Any:
    """``tree`` with its Python float and complex leaves made tensors (the registered scalar
    promotion: ``grad(f)(3.0)`` works as in JAX)."""
    return tree_map(promote_scalar, tree)


def _flatten_like(tree: Any, like: PyTreeDef, where: str) -> list[Any]:
    """Flatten ``tree`` to ``like``'s leaves, letting ``None`` stand for a whole leaf."""
    out: list[Any] = []

    def rec(x: Any, d: PyTreeDef) -> None:
        if d.node is None:
            out.append(x)
            return
        if x is None and d.node is not type(None):
            out.extend([None] * d.num_leaves)
            return
        if type(x) is not d.node:
            raise TreeStructureError(f"{where}: expected a {d.node.__name__} matching {d}, got {type(x).__name__}")
        children, aux = node_type(d.node).flatten(x)
        children = list(children)
        if aux != d.aux or len(children) != len(d.children):
            raise TreeStructureError(f"{where}: structure {tree_flatten(x)[1]} does not match {d}")
        for c, cd in zip(children, d.children):
            rec(c, cd)

    rec(tree, like)
    return out


class LinearFunction:
    """A linear map given by a :class:`Graph` (tangents in, tangents out).

    Calling it evaluates the graph (which is traceable); a ``None`` tangent is a
    symbolic zero (no dense zero is built for it, and the work it would feed is
    skipped). ``.graph`` exposes the graph, and ``.num_residuals`` counts the stored
    residual values.
    """

    __slots__ = ("graph", "in_tree", "out_tree", "_in_avals")

    def __init__(self, graph: Graph, in_tree: PyTreeDef, out_tree: PyTreeDef, in_avals: list):
        self.graph = graph
        self.in_tree = in_tree
        self.out_tree = out_tree
        self._in_avals = in_avals

    @property
    def num_residuals(self) -> int:
        return self.graph.num_residuals

    def __call__(self, *tangents: Any) -> Any:
        t_flat = _flatten_like(promoted(tangents), self.in_tree, "linearized function")
        args = []
        for i, (t, a) in enumerate(zip(t_flat, self._in_avals)):
            if a is None:
                continue
            if t is None:  # symbolic: the graph skips the work it would feed
                t = Zero(a)
            elif aval_of(t) != a:
                raise TangentMismatchError(f"linearized function: tangent leaf {i} has type {aval_of(t)}, expected {a}")
            args.append(t)
        outs = self.graph.eval_linear_flat(*args)
        return tree_unflatten(self.out_tree, [instantiate(o) for o in outs])


def _tangent_avals(p_flat: list) -> list:
    out = []
    for p in p_flat:
        a = aval_of(p)
        out.append(vspace_of_aval(a).tangent_aval(a))
    return out


def linearize(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """``(f(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``
    evaluated without re-running ``f`` (residuals are stored in its graph); with ``has_aux``,
    ``f`` returns ``(output, aux)`` and the result is ``(output, f_jvp, aux)``."""
    primals = promoted(primals)
    p_flat, p_tree = tree_flatten(primals)
    t_avals = _tangent_avals(p_flat)
    aux_box: list = []
    fun = _strip_aux(f, aux_box) if has_aux else f
    out_p, graph, out_tree = linearize_flat(fun, p_flat, p_tree, [a is not None for a in t_avals])
    out = tree_unflatten(out_tree, out_p), LinearFunction(graph, p_tree, out_tree, t_avals)
    return (*out, _aux_value(aux_box[0])) if has_aux else out


def linear_transpose(f: Callable[..., Any], *primals: Any) -> Callable[..., Any]:
    """Transpose of the linear function ``f``, traced at the avals of ``primals``.

    The result maps output cotangents to a tuple of input cotangents.
    """
    primals = promoted(primals)
    graph = make_graph(f, *primals)
    p_flat, p_tree = tree_flatten(primals)

    def transposed(*cts: Any) -> tuple:
        ct_tree_arg = cts[0] if len(cts) == 1 else cts
        ct_flat = _flatten_like(ct_tree_arg, graph.out_tree, "linear_transpose")
        ct_flat = _check_cotangents("linear_transpose", graph, ct_flat)
        ct_in = backward_pass(graph, ct_flat)
        ct_in = [_zero_ct(c, v.aval) for c, v in zip(ct_in, graph.invars)]
        return tree_unflatten(p_tree, ct_in)

    return transposed


def _zero_ct(c: Any, aval: Any) -> Any:
    if type(c) is Zero:
        return vspace_of_aval(aval).zeros(aval)
    return c


def _check_cotangents(where: str, graph: Graph, cts: list) -> list:
    out = []
    for i, (v, c) in enumerate(zip(graph.outvars, cts)):
        if c is None:
            out.append(Zero(v.aval))
            continue
        got = aval_of(c)
        if got != v.aval:
            raise TangentMismatchError(f"{where}: cotangent leaf {i} has type {got}, expected {v.aval}")
        out.append(c)
    return out


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False):
    """``(f(*primals), vjp_fn)`` (plus ``aux`` when ``has_aux``); ``vjp_fn(ct)`` returns
    a tuple with one cotangent per primal argument."""
    primals = promoted(primals)
    p_flat, p_tree = tree_flatten(primals)
    t_avals = _tangent_avals(p_flat)
    aux_box: list = []
    fun = _strip_aux(f, aux_box) if has_aux else f
    with paused_gc():  # (see paused_gc: the graph's objects would trigger full collections)
        out_p, graph, out_tree = linearize_flat(fun, p_flat, p_tree, [a is not None for a in t_avals])
    out = tree_unflatten(out_tree, out_p)

    def vjp_fn(ct: Any) -> tuple:
        ct_flat = _flatten_like(promoted(ct), out_tree, "vjp")
        ct_flat = _check_cotangents("vjp", graph, ct_flat)
        with paused_gc():
            ct_in = backward_pass(graph, ct_flat)
        it = iter(ct_in)
        full = []
        for p, a in zip(p_flat, t_avals):
            if a is None:
                full.append(None)
            else:
                full.append(_zero_ct(next(it), a))
        return tree_unflatten(p_tree, full)

    vjp_fn.graph = graph  # type: ignore[attr-defined]
    if has_aux:
        return out, vjp_fn, _aux_value(aux_box[0])
    return out, vjp_fn


# ---- auxiliary outputs (has_aux) -------------------------------------------------------------
#: objects whose attributes are not scanned for tracers (namespaces, not values)
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _strip_aux(f: Callable[..., Any], box: list) -> Callable[..., Any]:
    """Wrap ``f`` (returning ``(out, aux)``) to return ``out``, putting ``aux`` in ``box``.

    The box holds ``aux`` as seen inside the transformation; read it with
    :func:`_aux_value` once the transformation has finished.
    """

    def g(*args):
        res = f(*args)
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TreeStructureError("has_aux=True requires the function to return a pair (output, aux)")
        box.append(res[1])
        return res[0]

    return g


def _finished(x: Any) -> bool:
    return isinstance(x, JVPTracer) and not x._trace.active


def _lower(x: Any) -> Any:
    """An aux leaf without finished tracers: their primal values, a dataclass instance with its
    fields lowered; an object of another type holding one in an attribute is an error (it
    cannot be rebuilt, and its tracer would fail later)."""
    while _finished(x):
        x = x.primal
    if isinstance(x, (Tracer, *_OPAQUE)) or _lookup(_value_vspaces, type(x)) is not None:
        return x
    if dataclasses.is_dataclass(x):
        return _lower_dataclass(x)
    attrs = getattr(x, "__dict__", None)
    if isinstance(attrs, dict):
        for name, value in attrs.items():
            if any(_finished(leaf) for leaf in tree_leaves(value)):
                raise UnexpectedTracerError(
                    f"has_aux: the auxiliary output holds an object of type {type(x).__qualname__} whose "
                    f"attribute {name!r} is a traced value; tidu returns aux undifferentiated by replacing the traced values of pytree "
                    "leaves (and dataclass fields), and cannot rebuild this object: return its values in a "
                    "pytree (tuple, list, dict, namedtuple, a dataclass, or a type registered with "
                    "tidu.register_pytree_node)"
                )
    return x


def _lower_dataclass(x: Any) -> Any:
    """A copy of the dataclass instance ``x`` with its fields lowered (``x`` itself when none
    holds a finished tracer)."""
    new = None
    for f in dataclasses.fields(x):
        value = getattr(x, f.name, None)
        lowered = _aux_value(value)
        if any(a is not b for a, b in zip(tree_leaves(lowered), tree_leaves(value))):
            if new is None:
                new = copy.copy(x)
            object.__setattr__(new, f.name, lowered)  # (frozen dataclasses too)
    return x if new is None else new


def _aux_value(aux: Any) -> Any:
    """``aux`` without the tracers of finished transformations: the primal values
    they carried (as ``jax`` returns auxiliary data undifferentiated)."""
    return tree_map(_lower, aux)


def output_aval(leaf: Any, where: str) -> Any:
    """The aval of an output leaf; a Python integer or bool (which stays as it is, with no
    tangent) is a :class:`NonDifferentiableError` naming the output, not the input."""
    if isinstance(leaf, numbers.Integral) and not isinstance(leaf, Tracer):
        try:
            return aval_of(leaf)
        except UnregisteredTypeError:
            raise NonDifferentiableError(
                f"{where}: the output {leaf!r} of type {type(leaf).__name__} is not differentiable (an integer "
                "or bool has no derivative); return a float or a tensor of floating dtype"
            ) from None
    return aval_of(leaf)


def _index(n: Any) -> int | None:
    """``n`` as a position: an integer (NumPy's too, through ``operator.index``, as JAX takes
    them), never a bool; ``None`` for anything else."""
    if isinstance(n, bool):
        return None
    try:
        return operator.index(n)
    except TypeError:
        return None


def single_argnum(argnums: Any) -> bool:
    """True when ``argnums`` names one position (an integer, not a tuple): the derivative is
    then returned bare rather than in a tuple."""
    return _index(argnums) is not None


def _argnums_tuple(argnums: int | Sequence[int], nargs: int, where: str) -> tuple[int, ...]:
    """``argnums`` as non-negative positions. Like JAX, a repeated argument is an
    error (differentiating one argument twice has no second, independent input)."""
    if _index(argnums) is not None:
        nums: tuple = (_index(argnums),)
    elif isinstance(argnums, (tuple, list)) and all(_index(n) is not None for n in argnums):
        nums = tuple(_index(n) for n in argnums)
    else:
        raise InvalidArgumentError(
            f"{where}: argnums must be an int or a tuple of ints (positions of the arguments to "
            f"differentiate), got {argnums!r}"
        )
    for n in nums:
        if not -nargs <= n < nargs:
            raise TreeStructureError(f"{where}: argnums {n} out of range for a function called with {nargs} arguments")
    out = tuple(n % nargs for n in nums)
    if len(set(out)) != len(out):
        dup = next(n for n in out if out.count(n) > 1)
        raise InvalidArgumentError(
            f"{where}: argnums {tuple(nums)} repeats argument {dup}; each argument may be differentiated "
            "once (as in JAX), pass it once or as two separate arguments"
        )
    return out


def _with_args(
    f: Callable[..., Any], args: tuple, nums: tuple[int, ...], tree: PyTreeDef | None = None
) -> Callable[..., Any]:
    """``f`` as a function of the arguments at positions ``nums`` only (the others
    fixed to ``args``); with ``tree``, of those arguments' flat leaves."""

    def g(*diff: Any) -> Any:
        full = list(args)
        for i, d in zip(nums, diff if tree is None else tree_unflatten(tree, diff)):
            full[i] = d
        return f(*full)

    return g


def bound_keywords(f: Callable[..., Any], kwargs: dict) -> Callable[..., Any]:
    """``f`` with the keyword arguments of a call bound: as in JAX, ``grad``/``jacfwd``/``jacrev``
    pass them through to ``f`` undifferentiated (``argnums`` counts positions only)."""
    return functools.partial(f, **kwargs) if kwargs else f


def value_and_grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """Function returning ``(f(*args), grad)`` (``((value, aux), grad)`` with ``has_aux``);
    keyword arguments of the call go to ``f`` undifferentiated, as in JAX."""

    def vg(*args: Any, **kwargs: Any):
        with paused_gc():  # the whole call: the graph dies before the collector resumes
            return _value_and_grad(bound_keywords(f, kwargs), argnums, has_aux, holomorphic, args)

    _name(vg, "value_and_grad", f)
    return vg


def _value_and_grad(f: Callable[..., Any], argnums: Any, has_aux: bool, holomorphic: bool, args: tuple) -> Any:
    """The body of ``value_and_grad(f, argnums, has_aux, holomorphic)(*args)``."""
    nums = _argnums_tuple(argnums, len(args), "grad")
    args = tuple(promoted(a) if i in nums else a for i, a in enumerate(args))
    diff_args = tuple(args[i] for i in nums)

    g = _with_args(f, args, nums)

    for leaf in tree_flatten(diff_args)[0]:
        a = aval_of(leaf)
        vs = vspace_of_aval(a)
        if vs.tangent_aval(a) is None:
            raise NonDifferentiableError(f"grad: argument of type {a} is not differentiable (integer or boolean)")
        if holomorphic and not vs.is_complex(a):
            raise ComplexOutputError(f"grad(holomorphic=True) requires complex inputs, got {a}")
    res = vjp(g, *diff_args, has_aux=has_aux)
    out, vjp_fn = res[0], res[1]
    out_leaves, _ = tree_flatten(out)
    if len(out_leaves) != 1:
        raise NonScalarOutputError(f"grad requires a single scalar output, got a pytree with {len(out_leaves)} leaves")
    a = output_aval(out_leaves[0], "grad")
    vs = vspace_of_aval(a)
    if vs.tangent_aval(a) is None:
        raise NonDifferentiableError(
            f"grad: the output of type {a} is not differentiable (integer or boolean); "
            "grad needs a real (or, with holomorphic=True, complex) scalar output"
        )
    if not vs.is_scalar(a):
        raise NonScalarOutputError(f"grad requires a scalar output, got {a}; use vjp or jacrev for non-scalar outputs")
    if vs.is_complex(a) and not holomorphic:
        raise ComplexOutputError(
            f"grad requires a real-valued output, got {a}; pass holomorphic=True for holomorphic functions "
            "or differentiate a real function of the output (e.g. its real part or abs)"
        )
    if holomorphic and not vs.is_complex(a):
        raise ComplexOutputError(f"grad(holomorphic=True) requires a complex output, got {a}")
    grads = vjp_fn(vs.ones(a))
    grads = grads[0] if single_argnum(argnums) else grads
    if has_aux:
        return (out, res[2]), grads
    return out, grads


def grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """Gradient of a scalar function (``jax.grad``). ``argnums`` int or tuple (positions); keyword
    arguments of the call go to ``f`` undifferentiated, as in JAX."""
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    def g(*args: Any, **kwargs: Any):
        (val_or_pair, grads) = vg(*args, **kwargs)
        if has_aux:
            return grads, val_or_pair[1]
        return grads

    _name(g, "grad", f)
    return g


def _name(g: Callable, what: str, f: Callable) -> None:
    g.__name__ = f"{what}({getattr(f, '__name__', 'f')})"
    g.__doc__ = f"{what} of {getattr(f, '__name__', 'f')}"
    g.__wrapped__ = f  # type: ignore[attr-defined]


def hvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """Hessian-vector product of a scalar ``f`` by forward-over-reverse:
    ``jvp(grad(f, argnums=all), primals, tangents)``. Returns the product, with the
    structure of ``primals`` (a tuple, one entry per argument)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TreeStructureError(
            "hvp: primals and tangents must be tuples or lists of arguments, got "
            f"{type(primals).__name__} and {type(tangents).__name__}; write hvp(f, (x,), (v,)) for one argument"
        )
    n = len(primals)
    g = grad(f, argnums=tuple(range(n)))
    _, out = jvp(g, tuple(primals), tuple(tangents))
    return out
