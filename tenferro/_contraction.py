"""Contraction: the bilinear ``dot_general`` primitive and the NumPy-named
functions built on it (``matmul``/``@``, ``tensordot``, ``dot``, ``vdot``,
``inner``, ``outer``).

``dot_general(x, y, ((x_contract, y_contract), (x_batch, y_batch)))`` returns
axes in the **trailing-batch** order of tenferro's linalg convention::

    [x free axes (in x's order)..., y free axes (in y's order)..., batch axes...]

(JAX puts the batch axes first.) Each batch slice of the column-major result is
then one contiguous block. ``matmul``/``@`` keep NumPy's leading-batch semantics
for operands of rank > 2 (``[..., M, K] @ [..., K, N] -> [..., M, N]``) so NumPy
habits carry over; ``dot_general`` is the tool for trailing batches.

The evaluation runs on BLAS through ``numpy.tensordot``/``numpy.matmul`` on the
axis-reversed (row-major) views of the operands, so the result comes out
column-major without a copy.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from tidu import Tracer, UndefinedPrimal, Zero

from ._batching import batch_last
from ._capture_blas import NotCapturable, capturing
from ._capture_blas import matmul as capture_matmul
from ._capture_blas import tensordot as capture_tensordot
from ._dispatch import dispatchable
from ._dtypes import result_type
from ._elementwise import add_p
from ._errors import AxisError, ShapeError, fmt_shape
from ._aval import TensorType, aval_of_operand, fortran, meta
from ._operands import as_operand, check_placement
from ._placement import CPU
from ._registry import primitive
from ._shape import as_index, as_indices
from ._structural import broadcast_to, convert_element_type, reshape, transpose_p
from ._tensor import Tensor
from ._elementwise import conj, multiply
from ._structural import squeeze

FAMILY = "contraction"
_EMPTY = ((), ())


# ---------------------------------------------------------------------------
# evaluation: row-major contraction of the reversed views
# ---------------------------------------------------------------------------
def _prod(xs: Any) -> int:
    n = 1
    for s in xs:
        n *= s
    return n


def _tensordot_c(a: Any, b: Any, ca: list, cb: list) -> Any:
    """C-contiguous ``[free_a..., free_b...]`` contraction of ``a`` and ``b`` (no batch axes)."""
    if type(a) is not np.ndarray:
        blas = capturing()
        if blas is not None:
            try:
                return capture_tensordot(blas, a, b, (ca, cb))
            except NotCapturable:
                pass
    return np.tensordot(a, b, (ca, cb))


@lru_cache(maxsize=4096)
def batched_dot_general_views(sha: tuple, shb: tuple, dn: tuple) -> tuple:
    """For ``dot_general`` with batch dimensions of operands ``x``, ``y`` of shapes ``sha`` and
    ``shb``: ``(qy, sy, qx, sx, rs)`` such that its column-major result is
    ``(y.transpose(qy).reshape(sy) @ x.transpose(qx).reshape(sx)).reshape(rs).T``: one batched
    ``matmul`` of the row-major ``(batch, free_y, contracted)`` and ``(batch, contracted,
    free_x)`` views of the axis-reversed operands (:func:`_dot_general_eval`; a compiled
    program's kernel precomputes it)."""
    (xc, yc), (xb, yb) = dn
    na, nb = len(sha), len(shb)
    cy, by = [nb - 1 - j for j in yc], [nb - 1 - j for j in reversed(yb)]  # axes of y.T
    cx, bx = [na - 1 - i for i in xc], [na - 1 - i for i in reversed(xb)]  # axes of x.T
    fy = [j for j in range(nb) if j not in cy and j not in by]
    fx = [i for i in range(na) if i not in cx and i not in bx]
    rshb, rsha = shb[::-1], sha[::-1]
    bshape, fys, fxs = [rshb[j] for j in by], [rshb[j] for j in fy], [rsha[i] for i in fx]
    nbatch, k = _prod(bshape), _prod(rshb[j] for j in cy)
    return (
        tuple(nb - 1 - j for j in by + fy + cy),
        (nbatch, _prod(fys), k),
        tuple(na - 1 - i for i in bx + cx + fx),
        (nbatch, k, _prod(fxs)),
        tuple(bshape + fys + fxs),
    )


def _matmul(a: Any, b: Any) -> Any:
    """``a @ b`` of host arrays at once; device arrays take the capture's cuBLAS route while a
    CUDA graph is captured (:mod:`._capture_blas`: CuPy refuses cuBLAS then)."""
    if type(a) is np.ndarray:
        return a @ b
    blas = capturing()
    if blas is not None:
        try:
            return capture_matmul(blas, a, b)
        except NotCapturable:
            pass
    return a @ b


def _matmul_eval(a: Any, b: Any) -> Any:
    """``a @ b`` for operands of rank 1 or 2, column-major."""
    if b.ndim == 1:
        if a.ndim == 2:
            return _matmul(a, b)  # a fresh vector: contiguous
        return fortran(_matmul(a, b))  # 0-d: a NumPy scalar, made a 0-d array
    if a.ndim == 1:
        return fortran(_matmul(a, b))  # vector result: layout is trivial
    return _matmul(b.T, a.T).T  # (row-major N x M).T: column-major M x N, no copy


def _dot_general_eval(a: Any, b: Any, dn: tuple) -> Any:
    (xc, yc), (xb, yb) = dn
    na, nb = a.ndim, b.ndim
    if not xb and len(xc) == 1 and na <= 2 and nb <= 2 and xc[0] == na - 1 and yc[0] == 0:
        if type(a) is np.ndarray and na + nb == 3:  # host matrix-vector, vector-matrix (_matmul_eval, inlined)
            return a @ b  # a fresh contiguous vector
        return _matmul_eval(a, b)
    if not xc and not xb:  # outer product
        return fortran(np.multiply.outer(b.T, a.T).T)
    if not xb:
        return fortran(_tensordot_c(b.T, a.T, [nb - 1 - j for j in yc], [na - 1 - i for i in xc]).T)
    qy, sy, qx, sx, rs = batched_dot_general_views(a.shape, b.shape, dn)
    return fortran(_matmul(b.transpose(qy).reshape(sy), a.transpose(qx).reshape(sx)).reshape(rs).T)


# ---------------------------------------------------------------------------
# dot_general primitive: shape rule, JVP per argument, transpose per side
# ---------------------------------------------------------------------------
dot_general_p = primitive("dot_general", FAMILY)


_new_object = object.__new__


@dot_general_p.def_impl
def _dot_general_impl(x, y, dimension_numbers):
    t = _new_object(Tensor)  # Tensor._wrap(...), inlined: every contraction's last step
    t._data = _dot_general_eval(x._data, y._data, dimension_numbers)
    return t


@lru_cache(maxsize=4096)
def _out_shape(xs: tuple, ys: tuple, dn: tuple) -> tuple:
    (xc, yc), (xb, yb) = dn
    where = f"shapes {fmt_shape(xs)} and {fmt_shape(ys)} with contracting dims {xc}/{yc} and batch dims {xb}/{yb}"
    if len(xc) != len(yc) or len(xb) != len(yb):
        raise ShapeError(f"dot_general: {where}: the contracting (and batch) dim lists must have equal lengths")
    for dims, nd, side in ((xc + xb, len(xs), "first"), (yc + yb, len(ys), "second")):
        if any(not 0 <= d < nd for d in dims) or len(set(dims)) != len(dims):
            raise AxisError(f"dot_general: {where}: dims of the {side} operand must be distinct and in range({nd})")
    for kind, xd, yd in (("contracting", xc, yc), ("batch", xb, yb)):
        for i, j in zip(xd, yd):
            if xs[i] != ys[j]:
                raise ShapeError(
                    f"dot_general: {where}: {kind} dimension {i} of the first operand (extent "
                    f"{xs[i]}) does not match dimension {j} of the second (extent {ys[j]})"
                )
    fx = tuple(n for i, n in enumerate(xs) if i not in xc and i not in xb)
    fy = tuple(n for j, n in enumerate(ys) if j not in yc and j not in yb)
    return fx + fy + tuple(xs[i] for i in xb)


# Output avals of dot_general by operand avals (by identity: interned CPU avals) and
# dimension numbers; the entry keeps its operand avals, so their ids stay theirs.
_DOT_AVALS: dict[tuple, tuple] = {}


@dot_general_p.def_abstract_eval
def _dot_general_aval(a, b, dimension_numbers):
    key = (id(a), id(b), dimension_numbers)
    hit = _DOT_AVALS.get(key)
    if hit is not None:
        return hit[2]
    if a.dtype is not b.dtype:
        raise ShapeError(
            f"dot_general: primitive operands must have equal dtypes, got {a} and {b} "
            "(the user-level functions promote first)"
        )
    out = a.update(shape=_out_shape(a.shape, b.shape, dimension_numbers))
    if a.placement is CPU and b.placement is CPU and len(_DOT_AVALS) < 4096:
        _DOT_AVALS[key] = (a, b, out)
    return out


@dot_general_p.def_batch
def _dot_general_batch(axis_size, args, dims, dimension_numbers):
    # the output is (free of x, free of y, batch): a batch axis of both operands joins the
    # batch dims (last), one of a single operand is its last free axis
    (x, y), (dx, dy) = args, dims
    (xc, yc), (xb, yb) = dimension_numbers
    if dx is not None and dy is not None:
        x, y = batch_last(x, dx, axis_size), batch_last(y, dy, axis_size)
        nx, ny = len(meta(x)[0]), len(meta(y)[0])
        dn = ((tuple(xc), tuple(yc)), (tuple(xb) + (nx - 1,), tuple(yb) + (ny - 1,)))
        out = dot_general_p.bind(x, y, dimension_numbers=dn)
        return out, len(meta(out)[0]) - 1
    if dx is not None:
        x = batch_last(x, dx, axis_size)
        nx = len(meta(x)[0])
        return dot_general_p.bind(x, y, dimension_numbers=dimension_numbers), nx - 1 - len(xc) - len(xb)
    y = batch_last(y, dy, axis_size)
    nx, ny = len(meta(x)[0]), len(meta(y)[0])
    free_x = nx - len(xc) - len(xb)
    return dot_general_p.bind(x, y, dimension_numbers=dimension_numbers), free_x + ny - 1 - len(yc) - len(yb)


@dot_general_p.def_jvp
def _dot_general_jvp(primals, tangents, dimension_numbers):
    # bilinear: d(x . y) = tx . y + x . ty, staging only the terms with a tangent
    x, y = primals
    tx, ty = tangents
    bind = dot_general_p.bind
    out = bind(x, y, dimension_numbers=dimension_numbers)
    if type(tx) is Zero:
        if type(ty) is Zero:
            return out, Zero.like(out)
        return out, bind(x, ty, dimension_numbers=dimension_numbers)
    t = bind(tx, y, dimension_numbers=dimension_numbers)
    if type(ty) is not Zero:
        t = add_p.bind(t, bind(x, ty, dimension_numbers=dimension_numbers))
    return out, t


dot_general_p.jvp_replay = True  # the JVP's equations are fixed by the avals: recorded once (tidu._replay)
dot_general_p.transpose_replay = True  # and so are its transpose rule's


def _transpose_plan(
    n_self: int, n_other: int, self_c: tuple, other_c: tuple, self_b: tuple, other_b: tuple, self_first: bool
) -> tuple[tuple, tuple | None]:
    """Dimension numbers contracting ``ct`` with the other operand, and the permutation
    taking that result back to the operand's axis order (JAX's
    ``_dot_general_transpose_lhs/rhs`` logic, for tenferro's output order)."""
    self_free = [i for i in range(n_self) if i not in self_c and i not in self_b]
    other_free = tuple(j for j in range(n_other) if j not in other_c and j not in other_b)
    nsf, nof, nb = len(self_free), len(other_free), len(self_b)
    # ct axes are [x free, y free, batch]; contract ct's block of the other's free axes
    ct_other = tuple(range(nsf, nsf + nof)) if self_first else tuple(range(nof))
    ct_batch = tuple(range(nsf + nof, nsf + nof + nb))
    dn = ((ct_other, other_free), (ct_batch, tuple(other_b)))
    # the result's axes: [self free, other's contracted axes (sorted) -> their partners, batch]
    src = self_free + [self_c[other_c.index(j)] for j in sorted(other_c)] + list(self_b)
    perm = tuple(sorted(range(len(src)), key=src.__getitem__))
    return dn, (None if perm == tuple(range(len(perm))) else perm)


# The one cache of transpose plans: (dimension_numbers, nx, ny, x is linear) -> plan
# (a plain dict lookup on the hot path; bounded, plans are tiny).
_TRANSPOSE_PLANS: dict[tuple, tuple] = {}


@dot_general_p.def_transpose
def _dot_general_transpose(ct, x, y, dimension_numbers):
    lin_x = type(x) is UndefinedPrimal
    if lin_x:
        nx, ny = len(x.aval.shape), (y._data.ndim if type(y) is Tensor else len(meta(y)[0]))
    else:
        nx, ny = (x._data.ndim if type(x) is Tensor else len(meta(x)[0])), len(y.aval.shape)
    key = (dimension_numbers, nx, ny, lin_x)
    plan = _TRANSPOSE_PLANS.get(key)
    if plan is None:
        (xc, yc), (xb, yb) = dimension_numbers
        plan = (
            _transpose_plan(nx, ny, xc, yc, xb, yb, True) if lin_x else _transpose_plan(ny, nx, yc, xc, yb, xb, False)
        )
        if len(_TRANSPOSE_PLANS) < 4096:
            _TRANSPOSE_PLANS[key] = plan
    dn, perm = plan
    other = y if lin_x else x
    if type(ct) is Tensor and type(other) is Tensor:  # no tracer: what bind does, one call less
        r = _dot_general_impl(ct, other, dn)
    else:
        r = dot_general_p.bind(ct, other, dimension_numbers=dn)
    if perm is not None:
        r = transpose_p.bind(r, permutation=perm)
    return [r, None] if lin_x else [None, r]


# ---------------------------------------------------------------------------
# user functions
# ---------------------------------------------------------------------------
def _operands(op: str, x: Any, y: Any) -> tuple[Any, Any, tuple, tuple]:
    if type(x) is not Tensor and not isinstance(x, Tracer):
        x = as_operand(op, x)
    if type(y) is not Tensor and not isinstance(y, Tracer):
        y = as_operand(op, y)
    check_placement(op, x, y)
    xs, xd = meta(x)
    ys, yd = meta(y)
    if xd is not yd:
        dt = result_type(xd, yd)
        x, y = convert_element_type(x, dt), convert_element_type(y, dt)
    return x, y, xs, ys


def _axes(op: str, axes: Any, nd: int, which: str) -> tuple:
    out = []
    for a in as_indices(op, axes, f"axis of the {which} operand"):
        if not -nd <= a < nd:
            raise AxisError(f"{op}: axis {a} of the {which} operand is out of bounds for rank {nd}")
        out.append(a % nd)
    return tuple(out)


def dot_general(x: Any, y: Any, dimension_numbers: Any) -> Any:
    """Generalized contraction. ``dimension_numbers = ((x_contract, y_contract),
    (x_batch, y_batch))``. Result axes: ``[x free..., y free..., batch...]``
    (trailing batch, unlike JAX's leading batch)."""
    x, y, xs, ys = _operands("dot_general", x, y)
    try:
        (xc, yc), (xb, yb) = dimension_numbers
    except (TypeError, ValueError):
        raise ShapeError(
            "dot_general: dimension_numbers must be ((x_contract, y_contract), (x_batch, y_batch)), "
            f"got {dimension_numbers!r}"
        ) from None
    dn = (
        (_axes("dot_general", xc, len(xs), "first"), _axes("dot_general", yc, len(ys), "second")),
        (_axes("dot_general", xb, len(xs), "first"), _axes("dot_general", yb, len(ys), "second")),
    )
    _out_shape(tuple(xs), tuple(ys), dn)  # validates with a message naming both shapes
    return dot_general_p.bind(x, y, dimension_numbers=dn)


_MM_DN = {(nx, ny): (((nx - 1,), (0,)), _EMPTY) for nx in (1, 2) for ny in (1, 2)}


@dispatchable
def matmul(x: Any, y: Any) -> Any:
    """Matrix product with NumPy's ``matmul`` semantics: 1-D operands are vectors;
    for rank > 2 the **leading** axes are batch axes, broadcast together
    (``[..., M, K] @ [..., K, N] -> [..., M, N]``)."""
    if type(x) is Tensor and type(y) is Tensor:  # eager fast path: what dot_general_p.bind would do
        a, b = x._data, y._data
        if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype:
            na, nb = a.ndim, b.ndim
            if nb == 1 and na == 2:
                if a.shape[1] == b.shape[0]:
                    return Tensor._wrap(a @ b)  # matrix-vector: a fresh (contiguous) vector
            elif 0 < na <= 2 and 0 < nb <= 2 and a.shape[-1] == b.shape[0]:
                return Tensor._wrap(_matmul_eval(a, b))
    ax = x.aval if isinstance(x, Tracer) else aval_of_operand(x)  # traced: tensors of one dtype and placement
    ay = y.aval if isinstance(y, Tracer) else aval_of_operand(y)
    if type(ax) is TensorType and type(ay) is TensorType and ax.dtype is ay.dtype and ax.placement is ay.placement:
        xs, ys = ax.shape, ay.shape
        nx, ny = len(xs), len(ys)
        if 0 < nx <= 2 and 0 < ny <= 2 and xs[-1] == ys[0]:
            return dot_general_p.bind(x, y, dimension_numbers=_MM_DN[nx, ny])
    x, y, xs, ys = _operands("matmul", x, y)
    nx, ny = len(xs), len(ys)
    if nx == 0 or ny == 0:
        raise ShapeError(
            f"matmul: operands must have rank >= 1, got shapes {fmt_shape(xs)} and {fmt_shape(ys)} "
            "(use multiply for scalars)"
        )
    k = ys[0] if ny <= 2 else ys[-2]
    if xs[-1] != k:
        raise ShapeError(
            f"matmul: shapes {fmt_shape(xs)} and {fmt_shape(ys)} are not aligned: contracted "
            f"dimension {nx - 1} of the first (extent {xs[-1]}) != dimension {max(ny - 2, 0)} "
            f"of the second (extent {k})"
        )
    if nx <= 2 and ny <= 2:
        return dot_general_p.bind(x, y, dimension_numbers=_MM_DN[nx, ny])
    return _batched_matmul(x, y, tuple(xs), tuple(ys))


def _batched_matmul(x: Any, y: Any, xs: tuple, ys: tuple) -> Any:
    vec_x, vec_y = len(xs) == 1, len(ys) == 1
    if vec_x:
        xs = (1,) + xs
        x = reshape(x, xs)
    if vec_y:
        ys = ys + (1,)
        y = reshape(y, ys)
    try:
        bshape = tuple(np.broadcast_shapes(xs[:-2], ys[:-2]))
    except ValueError:
        raise ShapeError(
            f"matmul: batch dimensions of shapes {fmt_shape(xs)} and {fmt_shape(ys)} cannot be "
            "broadcast together (NumPy rules, leading batch axes)"
        ) from None
    x = broadcast_to(x, bshape + xs[-2:])
    y = broadcast_to(y, bshape + ys[-2:])
    nb = len(bshape)
    r = dot_general_p.bind(x, y, dimension_numbers=(((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))
    r = transpose_p.bind(r, permutation=tuple(range(2, nb + 2)) + (0, 1))
    if vec_x or vec_y:
        r = squeeze(r, tuple(a for a, v in ((nb, vec_x), (nb + 1, vec_y)) if v))
    return r


@dispatchable
def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2) -> Any:
    """``numpy.tensordot``: contract ``axes`` (an int n: the last n axes of ``a``
    with the first n of ``b``; or a pair of axis lists). Result ``[a free..., b free...]``."""
    a, b, as_, bs = _operands("tensordot", a, b)
    if isinstance(axes, (int, np.integer)):
        n = as_index("tensordot", axes, "axes")
        if n < 0 or n > len(as_) or n > len(bs):
            raise AxisError(f"tensordot: cannot contract {n} axes of shapes {fmt_shape(as_)} and {fmt_shape(bs)}")
        ax, bx = tuple(range(len(as_) - n, len(as_))), tuple(range(n))
    else:
        try:
            ax_, bx_ = axes
        except (TypeError, ValueError):
            raise AxisError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}") from None
        ax, bx = _axes("tensordot", ax_, len(as_), "first"), _axes("tensordot", bx_, len(bs), "second")
    dn = ((ax, bx), _EMPTY)
    _out_shape(tuple(as_), tuple(bs), dn)
    return dot_general_p.bind(a, b, dimension_numbers=dn)


@dispatchable
def dot(a: Any, b: Any) -> Any:
    """``numpy.dot``: scalars multiply; 1-D/2-D is ``matmul``; otherwise the last
    axis of ``a`` contracts with the second-to-last of ``b`` (the only one if 1-D)."""
    a, b, as_, bs = _operands("dot", a, b)
    if not as_ or not bs:
        return multiply(a, b)
    if len(as_) <= 2 and len(bs) <= 2:
        return matmul(a, b)
    return tensordot(a, b, ((len(as_) - 1,), (max(len(bs) - 2, 0),)))


def vdot(a: Any, b: Any) -> Any:
    """``numpy.vdot``: ``sum(conj(a) * b)`` over all elements (operands of equal size;
    they are flattened in the same order, so equal shapes pair elementwise)."""
    a, b, as_, bs = _operands("vdot", a, b)
    if tuple(as_) != tuple(bs):
        if _prod(as_) != _prod(bs):
            raise ShapeError(
                f"vdot: operands of shapes {fmt_shape(as_)} and {fmt_shape(bs)} have different sizes "
                f"({_prod(as_)} and {_prod(bs)}); expected equal sizes"
            )
        a, b = reshape(a, (-1,), order="C"), reshape(b, (-1,), order="C")
        as_ = (_prod(bs),)
    axes = tuple(range(len(as_)))
    return dot_general_p.bind(conj(a), b, dimension_numbers=((axes, axes), _EMPTY))


def inner(a: Any, b: Any) -> Any:
    """``numpy.inner``: contract the last axes (no conjugation): ``[a free..., b free...]``."""
    a, b, as_, bs = _operands("inner", a, b)
    if not as_ or not bs:
        return multiply(a, b)
    return tensordot(a, b, ((len(as_) - 1,), (len(bs) - 1,)))


def outer(a: Any, b: Any) -> Any:
    """``numpy.outer``: ``[a.size, b.size]`` products (operands flattened row-major, like NumPy)."""
    a, b, as_, bs = _operands("outer", a, b)
    if len(as_) != 1:
        a = reshape(a, (-1,), order="C")
    if len(bs) != 1:
        b = reshape(b, (-1,), order="C")
    return dot_general_p.bind(a, b, dimension_numbers=(_EMPTY, _EMPTY))
