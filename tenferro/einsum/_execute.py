"""Running a :class:`~tenferro.einsum._plan.Plan` on NumPy (or CuPy) arrays.

Pairwise steps are BLAS calls (``dot``/``matmul``) on copy-free views where the
layout allows, or one elementwise multiply when nothing is contracted.
``numpy.einsum`` is used only for one-operand steps (diagonal extraction,
sums of labels only that operand carries). Output embedding (``i->ii``) writes
through a strided diagonal view of a zero tensor.
"""

from __future__ import annotations

import threading
from math import prod
from typing import Any, Callable, Sequence

import numpy as np

from .._aval import fortran
from .._errors import TenferroMemoryError
from .._capture_blas import NotCapturable, capturing
from .._capture_blas import matmul as capture_matmul
from ._plan import BMM, DOT, FINAL, MOVE, MUL, PAIR, SINGLE, Plan
from .._aval import xp_of

try:  # NumPy's C einsum without the Python wrapper (about 2 us less per call)
    from numpy._core.multiarray import c_einsum as _c_einsum
except ImportError:  # pragma: no cover  (NumPy 1.x)
    from numpy.core.multiarray import c_einsum as _c_einsum


def _einsum1(a: Any, ins: list, outs: list) -> Any:
    if type(a) is np.ndarray:
        return _c_einsum(a, ins, outs)
    return np.einsum(a, ins, outs)  # CuPy and others dispatch through __array_function__


__all__ = ["execute", "runner", "run_pair", "host_pair_expr"]


class _Scratch(threading.local):
    """Per-thread scratch buffers for the operand copies of pairwise steps: the
    regrouped copy of an operand lives only until its BLAS call returns, so one
    buffer per operand slot, reused, spares an allocation and its page faults per
    step (a fresh 1 MB array costs more in first-touch faults than the copy)."""

    def __init__(self) -> None:
        self.buffers: list[np.ndarray | None] = [None, None, None, None]


_SCRATCH = _Scratch()
SCRATCH_MAX_BYTES = 1 << 26
"""Operand copies larger than this are allocated fresh (scratch is kept per thread)."""
SMALL_COPY_BYTES = 1 << 16
"""Aligned copies (:func:`_aligned`) up to this size are plain ``numpy.asfortranarray`` copies
(a few us less than scratch's bookkeeping, and too small to fault pages in)."""


def _grouped(x: Any, perm: tuple, shape: tuple, slot: int) -> Any:
    """``x.transpose(perm).reshape(shape, order="F")`` (a copy), in a scratch buffer."""
    t = x.transpose(perm)
    if type(x) is not np.ndarray or x.nbytes > SCRATCH_MAX_BYTES:
        return t.reshape(shape, order="F")
    out = _buffer(slot, x.size, x.dtype).reshape(t.shape, order="F")
    np.copyto(out, t)
    return out.reshape(shape, order="F")


def _buffer(slot: int, size: int, dtype: Any) -> np.ndarray:
    """``size`` elements of this thread's scratch buffer ``slot``."""
    buf = _SCRATCH.buffers[slot]
    if buf is None or buf.size < size or buf.dtype != dtype:
        buf = _SCRATCH.buffers[slot] = np.empty(size, dtype=dtype)
    return buf[:size]


def _aligned(x: np.ndarray, out: np.ndarray, slot: int, order: Any = None) -> np.ndarray:
    """``x`` (broadcastable to ``out``) with its axes laid out in the order of ``out``'s strides,
    fastest first (a copy in scratch ``slot`` unless ``x`` already runs contiguously along
    ``out``'s fastest axis it spans). A broadcast product written into ``out`` then streams
    every operand along one axis: a per-example outer product ``g[b, i, j] = p[b, i] q[b, j]``
    into a batch-first column-major result, from feature-major ``p`` and ``q``, ran 6x slower
    with the inner loop writing across the batch stride. ``order``: ``out``'s axes fastest
    first when known (``None``: ``out`` is F-contiguous, its axes in order)."""
    if order is None and x.flags.f_contiguous:
        return x
    if order is None and x.nbytes <= SMALL_COPY_BYTES:  # fresh from the heap: no scratch bookkeeping
        return np.asfortranarray(x)
    shape = x.shape
    first = next((i for i in (range(x.ndim) if order is None else order) if shape[i] != 1), None)
    if first is None or x.strides[first] == x.itemsize or x.nbytes > SCRATCH_MAX_BYTES:
        return x
    buf = _buffer(slot, x.size, x.dtype)
    if order is None:
        view = buf.reshape(shape, order="F")
    else:
        n = x.ndim
        view = buf.reshape([shape[i] for i in reversed(order)]).transpose([n - 1 - order.index(i) for i in range(n)])
    np.copyto(view, x)
    return view


def _stride_order(out: np.ndarray) -> list:
    """``out``'s axes, fastest first."""
    return sorted(range(out.ndim), key=lambda i: abs(out.strides[i]))


def run_pair(a: Any, b: Any, step: tuple) -> Any:
    """One pairwise step of a plan: the BLAS product of ``a`` and ``b`` viewed as
    matrices (operands regrouped in scratch where their layout needs it)."""
    _, _, _, mode, swap, pa, sa, xa, pb, sb, xb, out_shape, out_view = step
    if out_view is not None and out_view[0] == "labels":  # a broadcast product in the final layout
        return _broadcast_product(
            a if a.shape == sa else a.reshape(sa, order="F"),
            b if b.shape == sb else b.reshape(sb, order="F"),
            out_view,
            out_shape,
        )
    if pa is not None:
        a = _grouped(a, pa, sa, 0)
    elif a.shape != sa:
        a = a.reshape(sa, order="F")
    if xa is not None:
        a = a.transpose(xa)
    if pb is not None:
        b = _grouped(b, pb, sb, 1)
    elif b.shape != sb:
        b = b.reshape(sb, order="F")
    if xb is not None:
        b = b.transpose(xb)
    # x @ y is (Bt, N, K) @ (Bt, K, M) -> (Bt, N, M) row-major = (M, N, Bt) column-major, labels
    # free_a + free_b + batch; swapped (x = a, y = b), the transposed product: free_b + free_a + batch
    x, y = (a, b) if swap else (b, a)
    blas = capturing() if type(x) is not np.ndarray and mode != MUL else None
    if out_view is not None:  # written straight into the final layout (batch labels not last)
        xp = np if type(x) is np.ndarray else _xp(x)
        z = xp.empty(out_shape, dtype=xp.result_type(x, y), order="F")
        shape, axes = out_view
        view = z.reshape(shape, order="F").transpose(axes)
        if mode == BMM:
            if blas is None or _captured(blas, x, y, view) is None:
                xp.matmul(x, y, out=view)
        else:
            _multiply_into(xp, x, y, view)
        return z
    r = None
    if blas is not None and (mode == BMM or x.ndim <= 2 and y.ndim <= 2):  # np.dot is matmul up to 2-d
        r = _captured(blas, x, y)
    if r is not None:
        pass
    elif mode == DOT:
        r = np.dot(x, y)
    elif mode == BMM:
        r = np.matmul(x, y)
    else:
        r = np.multiply(x, y, order="C") if type(x) is np.ndarray else x * y  # (Bt, N, 1) * (Bt, 1, M)
    return r.T.reshape(out_shape, order="F")


#: the largest results (elements) of a host broadcast product that NumPy's C einsum computes
#: (:func:`_broadcast_product`), by dtype kind; larger ones are multiplies of aligned operands
EINSUM_PRODUCT_MAX = {"f": 1 << 14, "c": 1 << 10}


def _broadcast_product(a: Any, b: Any, out_view: tuple, out_shape: tuple) -> Any:
    """``a * b`` broadcast label by label into a new column-major array of ``out_shape``
    (``out_view`` from the plan: each operand's axes in the result's label order and its shape
    there, 1 where it lacks a label, and the product as einsum subscripts).

    Small host products go to NumPy's C einsum, which reads strided operands in one call: a
    per-example ``e[b, a, p] = l[a, b] v[p, b]`` (128 x 16 x 2, float64) took 6 us there
    against 30 us for aligning both operands (:func:`_aligned`) and multiplying. Above about
    16k real (1k complex) elements its loops fall behind the aligned multiply (2-3x at 512k)."""
    _, axes_a, shape_a, axes_b, shape_b, subscripts = out_view
    if type(a) is np.ndarray and type(b) is np.ndarray and _by_einsum(subscripts, out_shape, a.dtype, b.dtype):
        sub_a, sub_b, sub_out = subscripts
        return np.asfortranarray(_c_einsum(a, sub_a, b, sub_b, sub_out, order="F"))
    x = a.transpose(axes_a).reshape(shape_a, order="F")
    y = b.transpose(axes_b).reshape(shape_b, order="F")
    xp = np if type(x) is np.ndarray else _xp(x)
    return fresh_product(x, y, out_shape, xp.result_type(x, y), xp)


def fresh_product(x: Any, y: Any, out_shape: tuple, dtype: Any, xp: Any = np) -> Any:
    """``x * y`` broadcast into a new column-major array of ``out_shape`` and ``dtype``, host
    operands laid out as it first (:func:`_aligned`; one already column-major is as it is)."""
    z = xp.empty(out_shape, dtype=dtype, order="F")
    if xp is np:
        x, y = _aligned(x, z, 2), _aligned(y, z, 3)
    xp.multiply(x, y, out=z)
    return z


def _by_einsum(subscripts: Any, out_shape: tuple, dtype_a: Any, dtype_b: Any) -> bool:
    """Whether a host broadcast product of these dtypes goes to NumPy's C einsum
    (``EINSUM_PRODUCT_MAX``; ``subscripts`` None: too many labels for it)."""
    return subscripts is not None and prod(out_shape) <= min(
        EINSUM_PRODUCT_MAX.get(np.dtype(dtype_a).kind, 0), EINSUM_PRODUCT_MAX.get(np.dtype(dtype_b).kind, 0)
    )


def _multiply_into(xp: Any, x: Any, y: Any, out: Any) -> None:
    """``out[...] = x * y`` (broadcast); host operands first laid out as ``out`` (:func:`_aligned`)."""
    if xp is np:
        order = _stride_order(out)
        x, y = _aligned(x, out, 2, order), _aligned(y, out, 3, order)
    xp.multiply(x, y, out=out)


def host_pair_expr(
    step: tuple, name: str, a: str, b: str, shape_a: tuple, shape_b: tuple, dtype_a: Any, dtype_b: Any
) -> tuple[str, dict] | None:
    """:func:`run_pair` on host arrays of known shapes and dtypes as one Python expression over
    the expressions ``a`` and ``b`` (for generated code: ``tenferro.jit``), with the globals it
    needs (named after ``name``); the branches ``run_pair`` takes per call, taken now, so the
    same NumPy calls run on the same views. ``None``: no such expression (a product written
    into a layout of its own, or a large broadcast product), ``run_pair`` stays."""
    _, _, _, mode, swap, pa, sa, xa, pb, sb, xb, out_shape, out_view = step
    env: dict[str, Any] = {}

    def operand(expr: str, shape: tuple, perm: Any, grouped: tuple, axes: Any, side: str, slot: int) -> str:
        if perm is not None:
            env["_pair_grouped"], env[f"{name}_p{side}"], env[f"{name}_s{side}"] = _grouped, perm, grouped
            expr = f"_pair_grouped({expr}, {name}_p{side}, {name}_s{side}, {slot})"
        elif tuple(shape) != tuple(grouped):
            env[f"{name}_s{side}"] = grouped
            expr = f"{expr}.reshape({name}_s{side}, order='F')"
        if axes is not None:
            env[f"{name}_x{side}"] = axes
            expr = f"{expr}.transpose({name}_x{side})"
        return expr

    if out_view is not None and out_view[0] == "labels":
        subscripts = out_view[-1]
        x, y = operand(a, shape_a, None, sa, None, "a", 0), operand(b, shape_b, None, sb, None, "b", 1)
        if not _by_einsum(subscripts, out_shape, dtype_a, dtype_b):  # each operand viewed label by label
            _, axes_a, view_a, axes_b, view_b, _ = out_view
            views = []
            for expr, axes, view, side in ((x, axes_a, view_a, "a"), (y, axes_b, view_b, "b")):
                if axes != tuple(range(len(axes))):
                    env[f"{name}_t{side}"] = axes
                    expr = f"{expr}.transpose({name}_t{side})"
                env[f"{name}_v{side}"] = view
                views.append(f"{expr}.reshape({name}_v{side}, order='F')")
            env["_pair_fresh_product"], env[f"{name}_o"] = fresh_product, out_shape
            env[f"{name}_d"] = np.result_type(dtype_a, dtype_b)
            return f"_pair_fresh_product({views[0]}, {views[1]}, {name}_o, {name}_d)", env
        env["_pair_einsum"], env["_pair_asf"] = _c_einsum, np.asfortranarray
        for side, sub in zip("abo", subscripts):
            env[f"{name}_e{side}"] = sub
        return f"_pair_asf(_pair_einsum({x}, {name}_ea, {y}, {name}_eb, {name}_eo, order='F'))", env
    if out_view is not None:
        return None
    x, y = operand(a, shape_a, pa, sa, xa, "a", 0), operand(b, shape_b, pb, sb, xb, "b", 1)
    if not swap:
        x, y = y, x
    # Python evaluates x, then y: a regrouped x lives in scratch while y is computed, so y must
    # not touch scratch (a nested step that regroups, or run_pair's); run_pair itself evaluates
    # both operands first
    if (pa if swap else pb) is not None and ("_pair_grouped(" in y or "_pair(" in y):
        return None
    env[f"{name}_o"] = out_shape
    if mode == DOT:
        env["_pair_dot"] = np.dot
        return f"_pair_dot({x}, {y}).T.reshape({name}_o, order='F')", env
    if mode == BMM:
        env["_pair_matmul"] = np.matmul
        return f"_pair_matmul({x}, {y}).T.reshape({name}_o, order='F')", env
    env["_pair_mul"] = np.multiply
    return f"_pair_mul({x}, {y}, order='C').T.reshape({name}_o, order='F')", env


def _captured(blas: Any, x: Any, y: Any, out: Any = None) -> Any:
    """``x @ y`` through the capture's cuBLAS route (:mod:`tenferro._capture_blas`), or None
    where it has none (CuPy's own call follows)."""
    try:
        return capture_matmul(blas, x, y, out=out)
    except NotCapturable:
        return None


def _embed(r: Any, embed: tuple, out_shape: tuple) -> Any:
    """Zeros of ``out_shape`` with ``r`` written on the diagonal that ``embed`` names."""
    xp = np if type(r) is np.ndarray else _xp(r)
    try:
        z = xp.zeros(out_shape, dtype=r.dtype, order="F")
    except MemoryError:  # a repeated output label ("a->aa") makes a result the operands do not bound
        raise TenferroMemoryError(
            f"einsum: cannot allocate the result of shape {tuple(out_shape)} and dtype {r.dtype} "
            f"({prod(out_shape) * r.dtype.itemsize} bytes); expected a smaller result"
        ) from None
    strides = z.strides
    view = xp.lib.stride_tricks.as_strided(
        z, shape=r.shape, strides=tuple(sum(strides[p] for p in group) for group in embed)
    )
    view[...] = r
    return z


def _xp(a: Any) -> Any:
    return xp_of(a)


def execute(plan: Plan, arrays: Sequence[Any]) -> Any:
    """Evaluate ``plan`` on ``arrays`` (shapes as planned); a column-major array."""
    vals = list(arrays)
    for step in plan.steps:
        kind = step[0]
        if kind == PAIR:
            i, j = step[1], step[2]
            b = vals.pop(j)
            a = vals.pop(i)
            vals.append(run_pair(a, b, step))
        elif kind == SINGLE:
            _, k, ins, outs, move = step
            r = _einsum1(vals[k], ins, outs)
            if move:
                vals.pop(k)
                vals.append(r)
            else:
                vals[k] = r
        elif kind == MOVE:
            vals.append(vals.pop(step[1]))
        else:
            _, perm, embed, out_shape = step
            r = vals[0]
            if perm is not None:
                r = r.transpose(perm)
            if embed is not None:
                return _embed(r, embed, out_shape)
            return fortran(r)
    raise AssertionError("einsum plan without a final step")


def runner(plan: Plan) -> Callable[[list], Any]:
    """``execute`` for ``plan`` as a one-argument function, specialized for the
    one-operand plans of one NumPy einsum (trace, diagonal, sums): the fixed
    per-call cost matters there, the work being small."""
    steps = plan.steps
    if (
        len(plan.shapes) == 1
        and len(steps) == 2
        and steps[0][0] == SINGLE
        and steps[1][0] == FINAL
        and steps[1][1] is None
        and steps[1][2] is None
    ):
        _, _, ins, outs, _ = steps[0]

        def run_single(arrays: list) -> Any:
            return fortran(_einsum1(arrays[0], ins, outs))

        return run_single

    def run(arrays: list) -> Any:
        return execute(plan, arrays)

    return run
