"""Array kernels of the compiled executor: how one equation becomes one line of code.

:func:`kernel_for` turns an equation into a :class:`Kernel`: a Python expression
over the input arrays (``{0}``, ``{1}``, ...) and the globals it needs. Hot
primitives call their NumPy/BLAS function directly on raw arrays, with every
parameter precomputed (the same functions their ``impl`` calls, so results are
identical to eager to the bit); every other primitive calls its ``impl`` on
wrapped arrays. Kernels keep tenferro's layout contract: every result is
column-major (F-contiguous), 0-d results are 0-d arrays.

``fresh`` marks kernels that always return a new buffer (never a view of an
input) and ``ufunc`` those that accept ``out=`` (the executor's buffer reuse).
"""

from __future__ import annotations

from math import prod
from typing import Any, Callable, NamedTuple

import numpy as np

from tidu import Primitive
from tidu.graph import Eqn

from .. import _elementwise as _ew
from .. import _joins, _structural as _st
from .. import _transcendental as _tr
from .._aval import fortran
from .._contraction import _dot_general_eval, batched_dot_general_views, dot_general_p
from .._tensor import Tensor
from ..einsum._ad import einsum_p
from ..einsum._execute import execute as _einsum_execute, host_pair_expr, run_pair as _einsum_pair
from ..einsum._plan import FINAL, MOVE, PAIR
from ._sum_products import stack_arrays, stack_p

__all__ = ["Kernel", "kernel_for"]


class Kernel(NamedTuple):
    expr: str  # Python expression; {i} is the i-th input array
    env: dict  # globals the expression needs
    fresh: bool = False  # always returns a new buffer
    ufunc: bool = False  # accepts out= (a buffer of the output's shape and dtype)
    quiet: bool = False  # runs under np.errstate(all="ignore") in eager mode


def _asarray0(a: Any) -> Any:
    return np.asarray(a) if isinstance(a, np.generic) else a


def _ufunc(name: str, fn: np.ufunc, nargs: int, quiet: bool = False) -> Callable[[Eqn, str], Kernel]:
    args = ", ".join("{%d}" % i for i in range(nargs))

    def make(eqn: Eqn, tag: str) -> Kernel:
        g = f"_{name}"
        if eqn.outputs[0].aval.shape == ():
            return Kernel(f"_a0({g}({args}))", {g: fn, "_a0": _asarray0}, fresh=True, quiet=quiet)
        return Kernel(f"{g}({args})", {g: fn}, fresh=True, ufunc=True, quiet=quiet)

    return make


def _unary_rule(rule: Any) -> Callable[[Eqn, str], Kernel]:
    fn = rule.numpy
    if isinstance(fn, np.ufunc):
        return _ufunc(rule.name, fn, 1, rule.quiet)

    def make(eqn: Eqn, tag: str) -> Kernel:
        g = f"_{rule.name}_{tag}"
        return Kernel(f"_f({g}({{0}}))", {g: fn, "_f": fortran}, quiet=rule.quiet)

    return make


def _dot_general(eqn: Eqn, tag: str) -> Kernel:
    """``dot_general``: the branch ``_dot_general_eval`` would take, chosen now."""
    (xc, yc), (xb, yb) = eqn.params["dimension_numbers"]
    na, nb = len(eqn.inputs[0].aval.shape), len(eqn.inputs[1].aval.shape)
    rank_out = len(eqn.outputs[0].aval.shape)
    f = {"_f": fortran}
    if not xb and len(xc) == 1 and na <= 2 and nb <= 2 and xc[0] == na - 1 and yc[0] == 0:  # matmul
        if rank_out == 0:
            return Kernel("_f({0} @ {1})", f, fresh=True)
        if nb == 1 or na == 1:
            return Kernel("({0} @ {1})", {}, fresh=True)  # a fresh vector: contiguous
        return Kernel("({1}.T @ {0}.T).T", {}, fresh=True)  # column-major M x N, no copy
    if not xc and not xb:  # outer product
        return Kernel("_f(_outer({1}.T, {0}.T).T)", {"_outer": np.multiply.outer, **f}, fresh=True)
    if xb:  # one batched matmul on views laid out now (what _dot_general_eval does per call)
        qy, sy, qx, sx, rs = batched_dot_general_views(
            tuple(eqn.inputs[0].aval.shape), tuple(eqn.inputs[1].aval.shape), eqn.params["dimension_numbers"]
        )
        names = {f"_{n}{tag}": v for n, v in (("qy", qy), ("sy", sy), ("qx", qx), ("sx", sx), ("rs", rs))}
        return Kernel(
            f"({{1}}.transpose(_qy{tag}).reshape(_sy{tag}) @ {{0}}.transpose(_qx{tag}).reshape(_sx{tag}))"
            f".reshape(_rs{tag}).T",
            names,
            fresh=True,
        )
    dn = f"_dn{tag}"
    return Kernel(
        f"_dot({{0}}, {{1}}, {dn})", {"_dot": _dot_general_eval, dn: eqn.params["dimension_numbers"]}, fresh=True
    )


def _einsum(eqn: Eqn, tag: str) -> Kernel:
    """``einsum``: the plan's pairwise steps as one nested expression (the plan interpreter's
    bookkeeping of its operand list done now); plans with one-operand steps or an output
    diagonal run the interpreter."""
    plan = eqn.params["plan"]
    steps = plan.steps
    if any(st[0] not in (PAIR, MOVE) for st in steps[:-1]) or steps[-1][0] != FINAL or steps[-1][2] is not None:
        p = f"_plan{tag}"
        args = ", ".join("{%d}" % i for i in range(len(eqn.inputs)))
        return Kernel(f"_einsum({p}, ({args},))", {"_einsum": _einsum_execute, p: plan})
    env: dict[str, Any] = {"_pair": _einsum_pair, "_f": fortran}
    vals = ["{%d}" % i for i in range(len(eqn.inputs))]
    metas = [(tuple(v.aval.shape), v.aval.dtype.numpy) for v in eqn.inputs]  # each value's shape, dtype
    for k, st in enumerate(steps[:-1]):
        if st[0] == MOVE:
            vals.append(vals.pop(st[1]))
            metas.append(metas.pop(st[1]))
            continue
        b, a = vals.pop(st[2]), vals.pop(st[1])
        (shape_b, dtype_b), (shape_a, dtype_a) = metas.pop(st[2]), metas.pop(st[1])
        metas.append((tuple(st[-2]), np.result_type(dtype_a, dtype_b)))
        name = f"_step{tag}_{k}"
        inline = host_pair_expr(st, name, a, b, shape_a, shape_b, dtype_a, dtype_b)  # kernels run on the CPU
        if inline is not None:  # the step's NumPy calls written out (run_pair's branches taken now)
            vals.append(inline[0])
            env.update(inline[1])
            continue
        env[name] = st
        vals.append(f"_pair({a}, {b}, {name})")
    perm = steps[-1][1]
    if perm is None:  # a product's result is a new buffer; a plan of no pair step returns its operand
        return Kernel(f"_f({vals[0]})", env, fresh=any(st[0] == PAIR for st in steps))
    env[f"_perm{tag}"] = perm
    return Kernel(f"_f({vals[0]}.transpose(_perm{tag}))", env)


def _reshape(eqn: Eqn, tag: str) -> Kernel:
    s = f"_shape{tag}"
    return Kernel(f"{{0}}.reshape({s}, order='F')", {s: tuple(eqn.params["new_shape"])})


def _broadcast_in_dim(eqn: Eqn, tag: str) -> Kernel:
    """``broadcast_in_dim``: a reshape when it only inserts unit axes (column-major layout is
    unchanged by them), else the materialized broadcast ``impl`` writes, without its wrapping."""
    shape, dims = tuple(eqn.params["shape"]), tuple(eqn.params["broadcast_dimensions"])
    in_shape = tuple(eqn.inputs[0].aval.shape)
    s = f"_shape{tag}"
    if prod(shape) == prod(in_shape) and list(dims) == sorted(dims):
        return Kernel(f"{{0}}.reshape({s}, order='F')", {s: shape})
    e = f"_expanded{tag}"
    return Kernel(
        f"_broadcast_fill({{0}}, {e}, {s})",
        {"_broadcast_fill": _st.materialized_broadcast, s: shape, e: _st.expanded_shape(in_shape, shape, dims)},
        fresh=True,
    )


def _slice(eqn: Eqn, tag: str) -> Kernel:
    w = f"_window{tag}"
    return Kernel(f"_f({{0}}[{w}])", {"_f": fortran, w: _st._window(eqn.params["slices"])})


def _concatenate(eqn: Eqn, tag: str) -> Kernel:
    args = ", ".join("{%d}" % i for i in range(len(eqn.inputs)))
    return Kernel(
        f"_f(_np.concatenate(({args},), axis={int(eqn.params['dimension'])}))", {"_np": np, "_f": fortran}, fresh=True
    )


def _transpose(eqn: Eqn, tag: str) -> Kernel:
    p = f"_perm{tag}"
    return Kernel(f"_f(_np.transpose({{0}}, {p}))", {"_np": np, "_f": fortran, p: tuple(eqn.params["permutation"])})


def _sum(eqn: Eqn, tag: str) -> Kernel:
    ax = f"_axes{tag}"
    return Kernel(
        f"_f(_np.sum({{0}}, axis={ax}, dtype={{0}}.dtype))", {"_np": np, "_f": fortran, ax: eqn.params["axes"]}
    )


def _stack(eqn: Eqn, tag: str) -> Kernel:
    args = ", ".join("{%d}" % i for i in range(len(eqn.inputs)))
    return Kernel(f"_stack({args})", {"_stack": stack_arrays}, fresh=True)


_KERNELS: dict[Primitive, Callable[[Eqn, str], Kernel]] = {
    stack_p: _stack,
    _ew.add_p: _ufunc("add", np.add, 2),
    _ew.sub_p: _ufunc("subtract", np.subtract, 2),
    _ew.mul_p: _ufunc("multiply", np.multiply, 2),
    _ew.div_p: _ufunc("true_divide", np.true_divide, 2),
    _ew.neg_p: _ufunc("negative", np.negative, 1),
    dot_general_p: _dot_general,
    einsum_p: _einsum,
    _st.reshape_p: _reshape,
    _st.broadcast_in_dim_p: _broadcast_in_dim,
    _st.slice_p: _slice,
    _joins.concatenate_p: _concatenate,
    _st.transpose_p: _transpose,
    _st.sum_p: _sum,
}
for _rule in _tr.RULES:
    _KERNELS[getattr(_tr, f"{_rule.name}_p")] = _unary_rule(_rule)
_QUIET = {getattr(_tr, f"{r.name}_p") for r in _tr.RULES if r.quiet}


def _impl_kernel(eqn: Eqn, tag: str) -> Kernel:
    """Any primitive: its ``impl`` on wrapped arrays."""
    prim, params = eqn.prim, eqn.params
    impl = prim.impl
    wrap = Tensor._wrap
    if prim.multiple_results:

        def run(*arrays: Any) -> list:
            return [o._data for o in impl(*[wrap(a) for a in arrays], **params)]
    else:

        def run(*arrays: Any) -> Any:
            return impl(*[wrap(a) for a in arrays], **params)._data

    g = f"_k{tag}"
    args = ", ".join("{%d}" % i for i in range(len(eqn.inputs)))
    return Kernel(f"{g}({args})", {g: run}, quiet=prim in _QUIET)


def kernel_for(eqn: Eqn, tag: str, on_cpu: bool) -> Kernel:
    """The kernel of ``eqn`` (``tag`` makes its global names unique). Off the CPU
    every equation runs its ``impl`` (which picks CuPy's kernels)."""
    make = _KERNELS.get(eqn.prim) if on_cpu else None
    return (make or _impl_kernel)(eqn, tag)
