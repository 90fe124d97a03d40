"""Lowering of a traced program to the native backend's tape (no Numba needed here).

:func:`classify` says, per equation, whether the native backend runs it and if not
why. :func:`lower_segment` turns a run of supported equations into one
:class:`Segment`: a tape of instructions over flat workspaces (one 1-d array per
dtype, values at offsets assigned with liveness, a reshape an alias), with

* elementwise chains of one size fused into one loop (a value read only inside
  the chain is a scalar, never stored; a constant of equal elements one scalar
  loaded before it), full sums fused into the same loop as accumulators (float32
  and complex64 ones in double precision, rounded once at the end);
* ``dot_general`` and ``einsum`` (along its plan's pairwise decomposition) as
  transpose-copies where the operand layout needs one and a batched GEMM
  (:func:`._native_kernels.gemm`);
* transposes, broadcasts, slices and stacks as strided copies, partial sums as a
  strided sum (float32/complex64 ones into a double-precision block, then rounded).

The generated kernels (fused loops) are Python source; :mod:`._native` compiles
them with the interpreter that walks the tape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tidu.graph import Eqn, Var

from .. import _structural as _st
from .._contraction import dot_general_p
from ..einsum._ad import einsum_p
from ..einsum._plan import decompose
from ._native_alloc import Allocator as _Allocator, Storage as _Storage
from ._native_ops import ELEMENTWISE, MAX_RANK, TYPE, WORKSPACE_DTYPES, WS, classify, scalar_expr
from ._native_ops import dtype_of as _dtype, shape_of as _shape
from ._sum_products import stack_p

__all__ = ["WORKSPACE_DTYPES", "Segment", "classify", "lower_segment"]


_WIDE = {0: 1, 1: 1, 2: 3, 3: 3}
"""The workspace a sum of each workspace's dtype accumulates in: float32 in float64, complex64
in complex128 (a float32 running total stops growing at 2**24 times the summand)."""


def _fstrides(shape: tuple[int, ...]) -> list[int]:
    out, s = [], 1
    for n in shape:
        out.append(s)
        s *= n
    return out


@dataclass
class Segment:
    """A run of equations as one native call: the tape, the workspace sizes, where
    each input is loaded and each output found, and the kernels the tape names."""

    eqn_indices: list[int]
    inputs: list[Var]
    outputs: list[Var]
    tape: np.ndarray = None  # type: ignore[assignment]
    ws_sizes: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    input_slots: list[tuple[int, int, int]] = field(default_factory=list)  # (ws, off, size)
    const_prefix: list[np.ndarray | None] = field(default_factory=lambda: [None] * 4)  # per workspace
    output_slots: list[tuple[int, int, int]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # op code -> kernel call text
    templates: dict[str, str] = field(default_factory=dict)  # name -> source of a fused loop
    fused_loops: int = 0
    gemms: int = 0
    copies: int = 0


class _Lowering:
    def __init__(self, seg: Segment, eqns: list[Eqn], keep: set[Var]):
        self.seg, self.eqns, self.keep = seg, eqns, keep
        self.alloc = [_Allocator() for _ in WORKSPACE_DTYPES]
        self.slot: dict[Var, _Storage] = {}
        self.rows: list[list[int]] = []
        self.ops: dict[str, int] = {}
        self.last: dict[Var, int] = {}
        self.readers: dict[Var, list[int]] = {}
        self.template_names: dict[str, str] = {}

    # -- storage ------------------------------------------------------------------------
    def new(self, v: Var, uniform: bool = False) -> _Storage:
        size = 1 if uniform else math.prod(_shape(v))
        ws = WS[_dtype(v)]
        st = _Storage(ws, self.alloc[ws].alloc(size), size, 1, uniform)
        self.slot[v] = st
        return st

    def temp(self, ws: int, size: int) -> _Storage:
        return _Storage(ws, self.alloc[ws].alloc(size), size, 1)

    def drop(self, st: _Storage) -> None:
        st.refs -= 1
        if st.refs == 0:
            self.alloc[st.ws].release(st.off, st.size)

    def done_with(self, vs: list[Var], pos: int) -> None:
        for v in dict.fromkeys(vs):
            if v in self.slot and self.last.get(v, -1) <= pos and v not in self.keep:
                st = self.slot.pop(v)
                self.drop(st)

    def op(self, call: str) -> int:
        if call not in self.ops:
            self.ops[call] = len(self.ops)
            self.seg.calls.append(call)
        return self.ops[call]

    # -- instructions -------------------------------------------------------------------
    def copy(self, src: _Storage, dst: _Storage, shape, in_str, out_str, in_off=0, out_off=0, kind="copy") -> None:
        shape, in_str, out_str = list(shape), list(in_str), list(out_str)
        # drop unit axes, merge axes contiguous in both
        axes = [(n, a, b) for n, a, b in zip(shape, in_str, out_str) if n != 1]
        merged: list[list[int]] = []
        for n, a, b in axes:
            if merged and merged[-1][1] * merged[-1][0] == a and merged[-1][2] * merged[-1][0] == b:
                merged[-1][0] *= n
            else:
                merged.append([n, a, b])
        if not merged:
            merged = [[1, 0, 0]]
        if kind == "copy":  # the longest axes innermost (the loop overhead is paid per inner run),
            # but one contiguous in the output first: a transpose writing in order takes half the time
            merged.sort(key=lambda m: (not (m[2] == 1 and m[0] >= 16), -m[0]))
        total = math.prod(m[0] for m in merged)
        name = "copy_strided" if kind == "copy" else "sum_strided"
        code = self.op(f"{name}(W{src.ws}, W{dst.ws}, r)")
        pad = MAX_RANK - len(merged)
        row = [code, src.off + in_off, dst.off + out_off, len(merged), total]
        row += [m[0] for m in merged] + [1] * pad
        row += [m[1] for m in merged] + [0] * pad
        row += [m[2] for m in merged] + [0] * pad
        if kind == "sum":
            row.append(dst.size)
        self.rows.append(row)
        self.seg.copies += 1

    def outer(self, sa, la, sha, sb, lb, shb, lo, size, dst: _Storage) -> None:
        """``dst`` (labels ``lo``) = the product of ``sa`` and ``sb`` with nothing summed."""
        shape = [size[x] for x in lo]
        inner = next((x for x in lo if size[x] != 1), None)
        temps = []
        # an operand much smaller than the result, read with a stride along the result's
        # innermost axis, is first copied with that axis innermost (then the loop is unit-stride)
        operands = []
        for st, labels, sh in ((sa, la, sha), (sb, lb, shb)):
            labels, sh = list(labels), tuple(sh)
            if inner in labels and labels[0] != inner and 8 * st.size <= math.prod(shape):
                order = [inner] + [x for x in labels if x != inner]
                strides = dict(zip(labels, _fstrides(sh)))
                tmp = self.temp(st.ws, st.size)
                temps.append(tmp)
                new_shape = tuple(size[x] for x in order)
                self.copy(st, tmp, new_shape, [strides[x] for x in order], _fstrides(new_shape))
                st, labels, sh = tmp, order, new_shape
            operands.append((st, labels, sh))
        (sa, la, sha), (sb, lb, shb) = operands
        stride_a, stride_b = dict(zip(la, _fstrides(sha))), dict(zip(lb, _fstrides(shb)))
        axes = [(n, stride_a.get(x, 0), stride_b.get(x, 0), c) for n, x, c in zip(shape, lo, _fstrides(tuple(shape)))]
        axes = [ax for ax in axes if ax[0] != 1] or [(1, 0, 0, 0)]
        pad = MAX_RANK - len(axes)
        code = self.op(f"mul_strided(W{sa.ws}, W{sb.ws}, W{dst.ws}, r)")
        row = [code, sa.off, sb.off, dst.off, len(axes), math.prod(shape)]
        for j in range(4):
            row += [ax[j] for ax in axes] + [1 if j == 0 else 0] * pad
        self.rows.append(row)
        self.seg.copies += 1
        for tmp in temps:
            self.drop(tmp)

    def gemm(self, a, b, c, m, k, n, nb, ta, tb) -> None:
        code = self.op(f"gemm(W{a.ws}, W{b.ws}, W{c.ws}, r)")
        self.rows.append([code, a.off, b.off, c.off, m, k, n, nb, ta, tb])
        self.seg.gemms += 1

    # -- contractions -------------------------------------------------------------------
    def contract(self, sa, la, sha, sb, lb, shb, lo, dst: _Storage | None) -> tuple[_Storage, list]:
        """The pairwise contraction of the values in ``sa`` (labels ``la``, shape ``sha``)
        and ``sb``, written column-major with labels ``lo`` into ``dst``; ``lo=None``: in
        an order of the lowering's choice, into a new temporary. Returns the result's
        storage and labels. Every label of an operand is in the other or in the output.

        The order within each label group (free of a, contracted, free of b, batch) is
        chosen, among the orders the operands and the output already have, to copy the
        fewest elements: an operand whose labels are two groups then the batch group is
        read in place (as a matrix or its transpose), and a result whose wanted order is
        ``free_b + free_a + batch`` is the transposed product."""
        size = dict(zip(la, sha)) | dict(zip(lb, shb))
        out_labels = lo if lo is not None else [x for x in la + lb if not (x in la and x in lb)]
        in_both = [x for x in la if x in lb]
        batch_set = {x for x in in_both if lo is not None and x in lo}  # lo=None: no batch label
        con_set = {x for x in in_both if x not in batch_set}
        fa_set, fb_set = {x for x in la if x not in lb}, {x for x in lb if x not in la}

        def sub(order, keep):
            return [x for x in order if x in keep]

        if not con_set:  # nothing contracted: one strided product, in the wanted layout
            if dst is None:
                dst = self.temp(sa.ws, math.prod(size[x] for x in out_labels))
            self.outer(sa, la, sha, sb, lb, shb, out_labels, size, dst)
            return dst, list(out_labels)
        n_a, n_b = math.prod(sha), math.prod(shb)
        best = None
        for con in _unique([sub(la, con_set), sub(lb, con_set)]):
            for batch in _unique([sub(out_labels, batch_set), sub(la, batch_set), sub(lb, batch_set)]):
                for fa in _unique([sub(la, fa_set), sub(out_labels, fa_set)]):
                    for fb in _unique([sub(lb, fb_set), sub(out_labels, fb_set)]):
                        ta = _form(la, fa, con, batch)
                        tb = _form(lb, con, fb, batch)
                        if lo is None:
                            swap, out_copy = 0, 0
                        elif list(lo) == fa + fb + batch:
                            swap, out_copy = 0, 0
                        elif list(lo) == fb + fa + batch:
                            swap, out_copy = 1, 0
                        else:
                            swap, out_copy = 0, 1
                        m = math.prod(size[x] for x in fa)
                        nn = math.prod(size[x] for x in fb)
                        cost = (n_a if ta is None else 0) + (n_b if tb is None else 0)
                        cost += out_copy * m * nn * math.prod(size[x] for x in batch)
                        if best is None or cost < best[0]:
                            best = (cost, con, batch, fa, fb, ta, tb, swap, out_copy)
        _, con, batch, fa, fb, ta, tb, swap, out_copy = best
        m = math.prod(size[x] for x in fa)
        k = math.prod(size[x] for x in con)
        n = math.prod(size[x] for x in fb)
        nb = math.prod(size[x] for x in batch)
        ws = sa.ws
        temps = []

        def placed(st, labels, shape, first, second, t):
            if t is not None:
                return st, t
            order = first + second + batch
            tmp = self.temp(ws, st.size)
            temps.append(tmp)
            strides = dict(zip(labels, _fstrides(shape)))
            out_shape = [size[x] for x in order]
            self.copy(st, tmp, out_shape, [strides[x] for x in order], _fstrides(tuple(out_shape)))
            return tmp, 0

        a, ta = placed(sa, la, sha, fa, con, ta)
        b, tb = placed(sb, lb, shb, con, fb, tb)
        natural = (fb + fa if swap else fa + fb) + batch
        if dst is None:
            dst = self.temp(ws, m * n * nb)
        target = dst if not out_copy else self.temp(ws, m * n * nb)
        if swap:  # C^T = B^T A^T: B in the first role (free_b x con), A in the second
            self.gemm(b, a, target, n, k, m, nb, 1 - tb, 1 - ta)
        else:
            self.gemm(a, b, target, m, k, n, nb, ta, tb)
        if out_copy:
            nat_str = dict(zip(natural, _fstrides(tuple(size[x] for x in natural))))
            out_shape = [size[x] for x in lo]
            self.copy(target, dst, out_shape, [nat_str[x] for x in lo], _fstrides(tuple(out_shape)))
            self.drop(target)
        for tmp in temps:
            self.drop(tmp)
        return dst, (natural if lo is None else list(lo))

    def dot_general(self, eqn: Eqn, pos: int) -> None:
        x, y = eqn.inputs
        (xc, yc), (xb, yb) = eqn.params["dimension_numbers"]
        nx, ny = len(_shape(x)), len(_shape(y))
        la = list(range(nx))
        lb = [None] * ny
        for i, j in zip(xc, yc):
            lb[j] = i
        for i, j in zip(xb, yb):
            lb[j] = i
        nxt = nx
        for j in range(ny):
            if lb[j] is None:
                lb[j] = nxt
                nxt += 1
        lo = [i for i in la if i not in xc and i not in xb] + [lb[j] for j in range(ny) if j not in yc and j not in yb]
        lo += list(xb)
        self.contract(self.slot[x], la, _shape(x), self.slot[y], lb, _shape(y), lo, self.new(eqn.outputs[0]))
        self.done_with(list(eqn.inputs), pos)

    def einsum(self, eqn: Eqn, pos: int) -> None:
        """The plan's pairwise steps (:func:`decompose`), each one :meth:`contract`. A value
        carries its labels in the plan's axis order (a step's canonical spec refers to
        those) and in its stored order (an intermediate's may differ: chosen to copy least)."""
        steps = decompose(eqn.params["plan"])
        sizes: dict[int, int] = {}
        vals: list[tuple[_Storage, tuple, tuple, bool]] = []  # storage, stored labels, plan labels, temporary
        for v, labels in zip(eqn.inputs, eqn.params["plan"].spec.inputs):
            sizes.update(zip(labels, _shape(v)))
            vals.append((self.slot[v], tuple(labels), tuple(labels), False))
        for s, st in enumerate(steps):
            i, j = st.positions
            (sa, la, pa, ta), (sb, lb, pb, tb) = vals[i], vals[j]
            for p in sorted((i, j), reverse=True):
                vals.pop(p)
            ra, rb = st.spec.inputs  # canonical: labels 0..n-1 in order of appearance
            rename = dict(zip(ra, pa)) | dict(zip(rb, pb))
            plan_out = [rename[x] for x in st.spec.output]
            last = s == len(steps) - 1
            free = not last and set(plan_out) == set(la) ^ set(lb)  # no batch label: any order
            sha, shb = tuple(sizes[x] for x in la), tuple(sizes[x] for x in lb)
            dst, lo = self.contract(
                sa,
                list(la),
                sha,
                sb,
                list(lb),
                shb,
                None if free else plan_out,
                self.new(eqn.outputs[0]) if last else None,
            )
            for stg, is_tmp in ((sa, ta), (sb, tb)):
                if is_tmp:
                    self.drop(stg)
            vals.append((dst, tuple(lo), tuple(plan_out), not last))
        self.done_with(list(eqn.inputs), pos)

    # -- layout ops -----------------------------------------------------------------------
    def layout(self, eqn: Eqn, pos: int) -> None:
        prim, x, out = eqn.prim, eqn.inputs[0], eqn.outputs[0]
        shx, sho = _shape(x), _shape(out)
        if prim is _st.reshape_p:
            st = self.slot[x]
            st.refs += 1
            self.slot[out] = st
        elif prim is stack_p:
            dst = self.new(out)
            size = math.prod(shx)
            for k, v in enumerate(eqn.inputs):
                self.copy(self.slot[v], dst, [size], [1], [1], 0, k * size)
        elif prim is _st.transpose_p:
            perm = eqn.params["permutation"]
            sx = _fstrides(shx)
            dst = self.new(out)
            self.copy(self.slot[x], dst, sho, [sx[p] for p in perm], _fstrides(sho))
        elif prim is _st.broadcast_in_dim_p:
            dims = eqn.params["broadcast_dimensions"]
            sx = _fstrides(shx)
            in_str = [0] * len(sho)
            for i, d in enumerate(dims):
                if shx[i] != 1:
                    in_str[d] = sx[i]
            dst = self.new(out)
            self.copy(self.slot[x], dst, sho, in_str, _fstrides(sho))
        elif prim is _st.slice_p:
            sx = _fstrides(shx)
            start = sum(s0 * st for (s0, _, _), st in zip(eqn.params["slices"], sx))
            steps = [step * st for (_, step, _), st in zip(eqn.params["slices"], sx)]
            dst = self.new(out)
            self.copy(self.slot[x], dst, sho, steps, _fstrides(sho), start)
        elif prim is _st.slice_embed_p:  # zeros, the input written into the window
            so = _fstrides(sho)
            start = sum(s0 * st for (s0, _, _), st in zip(eqn.params["slices"], so))
            steps = [step * st for (_, step, _), st in zip(eqn.params["slices"], so)]
            dst = self.new(out)
            self.rows.append([self.op(f"fill_zero(W{dst.ws}, r)"), dst.off, dst.size])
            self.copy(self.slot[x], dst, shx, _fstrides(shx), steps, 0, start)
        else:  # sum over axes
            axes = set(eqn.params["axes"])
            sx = _fstrides(shx)
            so = _fstrides(sho)
            out_str, j = [], 0
            for i in range(len(shx)):
                if i in axes:
                    out_str.append(0)
                else:
                    out_str.append(so[j])
                    j += 1
            dst = self.new(out)
            if _WIDE[dst.ws] == dst.ws:
                self.copy(self.slot[x], dst, shx, sx, out_str, kind="sum")
            else:  # float32/complex64: summed into a double-precision block, then rounded once
                wide = self.temp(_WIDE[dst.ws], dst.size)
                self.copy(self.slot[x], wide, shx, sx, out_str, kind="sum")
                self.copy(wide, dst, [dst.size], [1], [1])
                self.drop(wide)
        self.done_with(list(eqn.inputs), pos)

    # -- fused elementwise loops ------------------------------------------------------------
    def fused(self, group: list[tuple[int, Eqn]]) -> None:
        """One loop over the ``n`` elements of a chain of elementwise equations (and full
        sums of them, as accumulators): a member read after the chain is stored, the others
        stay scalars. The loop's source depends on the chain's operations and dtypes only
        (offsets are read from the tape row), so equal chains share one compiled kernel."""
        members = {o for _, e in group for o in e.outputs}
        gpos = {p for p, _ in group}
        readers_outside = {v for v in members if v in self.keep or any(p not in gpos for p in self.readers.get(v, ()))}
        params: list[int] = []  # offsets, in order of the row after n
        names: dict[Var, str] = {}
        body: list[str] = []
        head: list[str] = []
        tail: list[str] = []
        n = None

        def param(off: int) -> str:
            params.append(off)
            return f"r[{len(params) + 1}]"

        def load(v: Var) -> str:
            if v not in names:
                st = self.slot[v]
                p = param(st.off)
                names[v] = f"t{len(names)}"
                if st.uniform:  # a constant of equal elements: one load, before the loop
                    head.append(f"    {names[v]} = W{st.ws}[{p}]")
                else:  # a slice per operand: indexing one workspace at several offsets, the
                    # compiler does not vectorize the loop (with slices it does: 3-5x faster)
                    head.append(f"    s{names[v]} = W{st.ws}[{p} : {p} + n]")
                    body.append(f"        {names[v]} = s{names[v]}[i]")
            return names[v]

        for _, e in group:
            out = e.outputs[0]
            ws_out = WS[_dtype(out)]
            if e.prim is _st.sum_p:  # float32/complex64 totals in double precision, rounded once
                a = load(e.inputs[0]) if e.inputs[0] not in names else names[e.inputs[0]]
                acc = f"acc{len(tail)}"
                head.append(f"    {acc} = {TYPE[_WIDE[ws_out]]}(0)")
                body.append(f"        {acc} += {a}")
                st = self.new(out)
                tail.append(f"    W{ws_out}[{param(st.off)}] = {TYPE[ws_out]}({acc})")
                names[out] = acc
                continue
            args = [names[v] if v in names else load(v) for v in e.inputs]
            expr = scalar_expr(e, args)
            t = f"t{len(names)}"
            names[out] = t
            body.append(f"        {t} = {expr}")
            n = math.prod(_shape(out))
            if out in readers_outside:
                st = self.new(out)
                p = param(st.off)
                head.append(f"    d{t} = W{ws_out}[{p} : {p} + n]")
                body.append(f"        d{t}[i] = {t}")
        if n is None:
            n = math.prod(_shape(group[0][1].inputs[0]))
        self.done_with([v for _, e in group for v in e.inputs if v not in members], max(gpos))
        head.insert(0, "    n = r[1]")
        src_body = "\n".join(head) + "\n    for i in range(n):\n" + "\n".join(body) + "\n" + "\n".join(tail)
        name = self.template_names.get(src_body)
        if name is None:
            name = f"fused_{len(self.template_names)}"
            self.template_names[src_body] = name
            self.seg.templates[name] = src_body
        code = self.op(f"{name}(W0, W1, W2, W3, r)")
        self.rows.append([code, n] + params)
        self.seg.fused_loops += 1


def _unique(orders: list[list]) -> list[list]:
    out: list[list] = []
    for o in orders:
        if o not in out:
            out.append(o)
    return out


def _form(labels, first, second, batch) -> int | None:
    """0: ``labels`` are ``first + second + batch`` (a column-major matrix first x second per
    batch), 1: ``second + first + batch`` (its transpose), ``None``: neither (a copy)."""
    labels = list(labels)
    if labels == first + second + batch:
        return 0
    if labels == second + first + batch:
        return 1
    return None


def _fusable(e: Eqn) -> bool:
    return e.prim in ELEMENTWISE


def _uniform(value: np.ndarray) -> bool:
    """Whether constant ``value`` has at least two elements, all equal (a broadcast fill, as
    the ones of ``1 - tanh(x)**2``): read only by fused loops, it is stored as one element."""
    flat = np.ascontiguousarray(value).reshape(-1)
    if flat.size < 2:  # (a zero-size constant has no element to store; reshape(0, -1) would raise)
        return False
    bits = flat.view(np.uint8).reshape(flat.size, flat.itemsize)  # bitwise: -0.0 is not 0.0
    return bool((bits == bits[0]).all())


def lower_segment(
    eqn_indices: list[int],
    eqns: list[Eqn],
    inputs: list[Var],
    outputs: list[Var],
    consts: list[tuple[Var, np.ndarray]] = (),
) -> Segment:
    """The tape of ``eqns`` (a run of supported equations) reading ``inputs`` (defined
    before the run) and ``consts`` (values known now) and producing ``outputs`` (read
    after the run, or returned). The constants are packed at the start of their
    workspace (``Segment.const_prefix``, copied in by each call), then the inputs."""
    seg = Segment(eqn_indices, inputs, outputs)
    low = _Lowering(seg, eqns, set(outputs))
    for p, e in enumerate(eqns):
        for v in e.inputs:
            low.last[v] = p
            low.readers.setdefault(v, []).append(p)
    prefix: list[list[np.ndarray]] = [[] for _ in WORKSPACE_DTYPES]
    for v, value in consts:
        value = np.asarray(value)
        uniform = _uniform(value) and all(_fusable(eqns[q]) for q in low.readers.get(v, ()))
        st = low.new(v, uniform)
        prefix[st.ws].append(value.reshape(-1, order="F")[: 1 if uniform else None])
    seg.const_prefix = [np.concatenate(p).astype(d) if p else None for p, d in zip(prefix, WORKSPACE_DTYPES)]
    for v in inputs:
        st = low.new(v)
        seg.input_slots.append((st.ws, st.off, st.size))
    p = 0
    while p < len(eqns):
        e = eqns[p]
        if _fusable(e):
            n = math.prod(_shape(e.outputs[0]))
            group = [(p, e)]
            accs: set[Var] = set()
            q = p + 1
            while q < len(eqns):
                f = eqns[q]
                if any(v in accs for v in f.inputs):
                    break
                if _fusable(f) and math.prod(_shape(f.outputs[0])) == n:
                    group.append((q, f))
                elif (
                    f.prim is _st.sum_p and math.prod(_shape(f.outputs[0])) == 1 and math.prod(_shape(f.inputs[0])) == n
                ):
                    group.append((q, f))
                    accs.add(f.outputs[0])
                else:
                    break
                q += 1
            low.fused(group)
            p = q
            continue
        if e.prim is dot_general_p:
            low.dot_general(e, p)
        elif e.prim is einsum_p:
            low.einsum(e, p)
        else:
            low.layout(e, p)
        p += 1
    for v in outputs:
        st = low.slot[v]
        seg.output_slots.append((st.ws, st.off, st.size))
    seg.ws_sizes = [a.peak for a in low.alloc]
    width = max([len(r) for r in low.rows] + [1])
    tape = np.zeros((len(low.rows), width), np.int64)
    for i, r in enumerate(low.rows):
        tape[i, : len(r)] = r
    seg.tape = tape
    return seg
