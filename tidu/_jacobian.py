"""Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian``.

Each is built on the transforms of :mod:`tidu._api` (``jvp``/``vjp`` at the flat level).
A Jacobian block for output leaf shape ``O`` and input leaf shape ``I`` has shape
``O + I``. Where the value type and every primitive support batching, the block is one
vmapped JVP (``jacfwd``) or VJP (``jacrev``) over the leaf's whole standard basis;
otherwise it is a loop over basis vectors, stacked by the value type's ``stack_basis``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._ad import jvp_flat
from ._api import (
    _argnums_tuple,
    _aux_value,
    _name,
    _strip_aux,
    _with_args,
    _zero_ct,
    bound_keywords,
    output_aval,
    promoted,
    single_argnum,
    vjp,
)
from ._batching import vmap
from ._errors import ComplexOutputError, MissingRuleError, NonDifferentiableError
from ._pytree import tree_flatten, tree_unflatten
from ._tracer import aval_of
from ._vspace import vspace_of_aval
from ._zero import Zero

__all__ = ["jacfwd", "jacrev", "hessian"]


def _check_real_or_holo(where: str, leaves: list, holomorphic: bool, what: str) -> None:
    for leaf in leaves:
        a = output_aval(leaf, where) if what == "output" else aval_of(leaf)
        vs = vspace_of_aval(a)
        if vs.tangent_aval(a) is None:
            raise NonDifferentiableError(f"{where}: {what} of type {a} is not differentiable")
        if holomorphic and not vs.is_complex(a):
            raise ComplexOutputError(f"{where}(holomorphic=True) requires complex {what}s, got {a}")
        if not holomorphic and vs.is_complex(a):
            raise ComplexOutputError(
                f"{where} requires real {what}s, got {a}; pass holomorphic=True for holomorphic functions"
            )


def jacfwd(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """Jacobian by forward mode: one JVP per input coordinate (keyword arguments of the call go
    to ``f`` undifferentiated, as in JAX).

    For output leaf shape ``O`` and input leaf shape ``I`` the block has shape
    ``O + I`` (stacked by the value type's ``stack_basis``).
    """

    def jac(*args: Any, **kwargs: Any):
        nums = _argnums_tuple(argnums, len(args), "jacfwd")
        args = tuple(promoted(a) if i in nums else a for i, a in enumerate(args))
        diff = tuple(args[i] for i in nums)
        d_flat, d_tree = tree_flatten(diff)
        _check_real_or_holo("jacfwd", d_flat, holomorphic, "input")
        aux_box: list = []
        fk = bound_keywords(f, kwargs)  # keyword arguments: passed through, not differentiated
        fun = _strip_aux(fk, aux_box) if has_aux else fk

        g = _with_args(fun, args, nums, d_tree)

        flat_tree = tree_flatten(tuple(d_flat))[1]
        in_avals = [aval_of(x) for x in d_flat]
        batched = _batched_jacfwd(g, d_flat, in_avals, flat_tree, aux_box)
        if batched is not None:
            out_p, per_leaf, out_tree = batched
            _check_real_or_holo("jacfwd", out_p, holomorphic, "output")
            blocks = []
            for k in range(len(out_p)):
                tree = tree_unflatten(d_tree, [per_leaf[j][k] for j in range(len(in_avals))])
                blocks.append(tree[0] if single_argnum(argnums) else tree)
            result = tree_unflatten(out_tree, blocks)
            return (result, _aux_value(aux_box[0])) if has_aux else result
        columns: list[list[list]] = []  # [in_leaf][basis] -> out tangents
        out_tree = None
        out_p = None
        for j, a in enumerate(in_avals):
            cols = []
            for e in vspace_of_aval(a).standard_basis(a):
                tangents = [Zero(b) for b in in_avals]
                tangents[j] = e
                aux_box.clear()
                out_p, out_t, out_tree = jvp_flat(g, d_flat, tangents, flat_tree)
                cols.append(out_t)
            columns.append(cols)
        if out_tree is None:  # no inputs coordinates at all
            out_p, _, out_tree = jvp_flat(g, d_flat, [Zero(b) for b in in_avals], flat_tree)
        _check_real_or_holo("jacfwd", out_p, holomorphic, "output")
        blocks = []
        for k, o in enumerate(out_p):
            ov = vspace_of_aval(aval_of(o))
            oa = ov.tangent_aval(aval_of(o))
            per_in = [
                ov.stack_basis(
                    [_zero_ct(c[k], oa) for c in columns[j]],
                    in_avals[j],
                    leading=False,
                    **({} if columns[j] else {"value_aval": oa}),
                )
                for j in range(len(in_avals))
            ]
            tree = tree_unflatten(d_tree, per_in)
            blocks.append(tree[0] if single_argnum(argnums) else tree)
        result = tree_unflatten(out_tree, blocks)
        return (result, _aux_value(aux_box[0])) if has_aux else result

    _name(jac, "jacfwd", f)
    return jac


# ---- Jacobians by one batched JVP/VJP per argument leaf ------------------------------------
def _identity(a: Any) -> Any:
    """The standard basis of ``a`` stacked: a value of shape ``a + a`` (the identity)."""
    return vspace_of_aval(a).identity(a)


def _basis_depth(a: Any) -> int | None:
    """How many axes of ``a`` its identity is mapped over, or None (0-d or empty: the loop)."""
    vs = vspace_of_aval(a)
    depth = vs.ndim(a)
    return None if vs.size(a) == 0 or depth == 0 else depth


def _nested_vmap(fun: Callable[..., Any], depth: int) -> Callable[..., Any]:
    """``fun`` mapped over the first ``depth`` axes of its one argument."""
    for _ in range(depth):
        fun = vmap(fun)
    return fun


def _batched_jacfwd(g: Callable[..., Any], d_flat: list, in_avals: list, flat_tree: Any, aux_box: list):
    """The blocks ``O + I`` of every (output leaf, input leaf) pair by one vmapped JVP per input
    leaf over its whole standard basis; ``None`` where the value type or a primitive has no
    batching support (then the caller loops over basis vectors). An integer output is the error
    ``jacrev`` gives, found before the columns (not a failure to build its zero)."""
    try:
        out_p, _, out_tree = jvp_flat(g, d_flat, [Zero(b) for b in in_avals], flat_tree)
        for o in out_p:  # an integer output has no tangent to build a column of
            a = output_aval(o, "jacfwd")
            if vspace_of_aval(a).tangent_aval(a) is None:
                raise NonDifferentiableError(f"jacfwd: output of type {a} is not differentiable")
        per_leaf = []
        for j, a in enumerate(in_avals):
            depth = _basis_depth(a)
            if depth is None:
                return None

            def column(t, j=j):
                tangents = [Zero(b) for b in in_avals]
                tangents[j] = t
                aux_box.clear()
                p, ts, _ = jvp_flat(g, d_flat, tangents, flat_tree)
                return [_zero_ct(x, vspace_of_aval(aval_of(o)).tangent_aval(aval_of(o))) for x, o in zip(ts, p)]

            outs = _nested_vmap(column, depth)(_identity(a))  # per output leaf: I + O
            blocks = []
            for o, t in zip(out_p, outs):
                ov = vspace_of_aval(aval_of(o))
                t = _zero_ct(t, ov.tangent_aval(aval_of(o)))
                n = ov.ndim(aval_of(t))
                for _ in range(depth):  # -> O + I
                    t = ov.move_axis(t, 0, n - 1)
                blocks.append(t)
            per_leaf.append(blocks)
        return out_p, per_leaf, out_tree
    except (MissingRuleError, NotImplementedError):
        return None


def _batched_jacrev(vjp_fn: Callable[..., Any], out_tree: Any, out_avals: list, in_avals: list):
    """Per output leaf, the blocks ``O + I`` by one vmapped VJP over its whole standard basis;
    ``None`` where batching is not supported (then the caller loops)."""
    try:
        rows = []
        for k, a in enumerate(out_avals):
            depth = _basis_depth(a)
            if depth is None:
                return None

            def row(ct, k=k):
                cts = [None] * len(out_avals)
                cts[k] = ct
                return [
                    _zero_ct(c, vspace_of_aval(ia).tangent_aval(ia))
                    for c, ia in zip(vjp_fn(tree_unflatten(out_tree, cts)), in_avals)
                ]

            rows.append(_nested_vmap(row, depth)(_identity(a)))  # per input leaf: O + I
        return rows
    except (MissingRuleError, NotImplementedError):
        return None


def jacrev(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """Jacobian by reverse mode: one VJP per output coordinate (blocks shaped ``O + I``); keyword
    arguments of the call go to ``f`` undifferentiated, as in JAX."""

    def jac(*args: Any, **kwargs: Any):
        nums = _argnums_tuple(argnums, len(args), "jacrev")
        args = tuple(promoted(a) if i in nums else a for i, a in enumerate(args))
        diff = tuple(args[i] for i in nums)
        d_flat, d_tree = tree_flatten(diff)
        _check_real_or_holo("jacrev", d_flat, holomorphic, "input")

        g = _with_args(bound_keywords(f, kwargs), args, nums, d_tree)  # keyword arguments: not differentiated

        res = vjp(g, *d_flat, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        out_flat, out_tree = tree_flatten(out)
        _check_real_or_holo("jacrev", out_flat, holomorphic, "output")
        out_avals = [aval_of(o) for o in out_flat]
        in_avals = [aval_of(x) for x in d_flat]
        batched = _batched_jacrev(vjp_fn, out_tree, out_avals, in_avals)
        if batched is not None:
            blocks = []
            for k in range(len(out_avals)):
                tree = tree_unflatten(d_tree, batched[k])
                blocks.append(tree[0] if single_argnum(argnums) else tree)
            result = tree_unflatten(out_tree, blocks)
            return (result, res[2]) if has_aux else result
        rows: list[list[tuple]] = []  # [out_leaf][basis] -> input cts
        for k, a in enumerate(out_avals):
            rs = []
            for e in vspace_of_aval(a).standard_basis(a):
                cts = [None] * len(out_avals)
                cts[k] = e
                rs.append(vjp_fn(tree_unflatten(out_tree, cts)))
            rows.append(rs)
        blocks = []
        for k, oa in enumerate(out_avals):
            per_in = [
                vspace_of_aval(ia).stack_basis(
                    [r[j] for r in rows[k]],
                    oa,
                    leading=True,
                    **({} if rows[k] else {"value_aval": vspace_of_aval(ia).tangent_aval(ia)}),
                )
                for j, ia in enumerate(in_avals)
            ]
            tree = tree_unflatten(d_tree, per_in)
            blocks.append(tree[0] if single_argnum(argnums) else tree)
        result = tree_unflatten(out_tree, blocks)
        return (result, res[2]) if has_aux else result

    _name(jac, "jacrev", f)
    return jac


def hessian(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """Hessian as ``jacfwd(jacrev(f))`` (forward over reverse). With ``has_aux``, ``f`` returns
    ``(output, aux)`` and the result is ``(hessian, aux)``, ``aux`` undifferentiated (``jax.hessian``)."""
    h = jacfwd(
        jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux, holomorphic=holomorphic
    )
    _name(h, "hessian", f)
    return h
