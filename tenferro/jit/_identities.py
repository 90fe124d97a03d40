"""Algebraic identities: rewrites that read no data except small constants.

Every rewrite is an exact identity of the values (``x * 1 = x``), never one that
holds only for finite data: ``x * 0 -> 0`` is *not* done (``inf * 0`` is NaN).
Two differ from NumPy's own evaluation in the last detail only: ``x + 0 -> x``
keeps the sign of a zero ``x`` (NumPy gives ``-0.0 + 0.0 = +0.0``), and for a
complex ``x`` with an infinite or NaN part ``x * 1 -> x`` keeps ``x`` where NumPy's
complex product gives a NaN part (``complex(nan, 1) * 1.0`` is ``nan+nanj`` eagerly,
``nan+1j`` compiled; a real ``inf * (1+0j)`` is ``inf+nanj`` eagerly, ``inf+0j`` compiled).

Rules, by the primitive rewritten:

* ``add`` with a zero operand, ``sub`` of ``+0`` (from ``-0``: a negation; ``0 - y`` is not
  ``-y`` at ``y = +0`` and stays), ``mul``/``div`` by one or minus one; ``pow`` of a
  real floating value to a fill of one (the value) or two (its square, ``x * x``: NumPy's
  own ``power`` takes that path), as the gradient of ``x ** 2`` under ``vmap`` makes it;
* ``neg∘neg``, ``conj∘conj``; ``conj``/``real`` of a real value; ``imag`` of a
  real value (zeros); ``real``/``imag`` of a real value converted to complex;
* ``transpose∘transpose`` (composed), ``reshape∘reshape``; and dropped when they
  do nothing: identity ``transpose``, ``reshape``/``broadcast_in_dim`` to the same
  shape, ``convert_element_type`` to the same dtype, ``sum`` over no axis,
  a full ``slice``;
* broadcast then reduce: ``sum`` over axes that a ``broadcast_in_dim`` created is
  a multiplication by their extent (the broadcast is kept for any axes left);
* fills (a constant whose elements are all equal, or a ``broadcast_in_dim``,
  ``reshape``, ``transpose``, ``rev``, ``slice``, ``neg``, ``conj`` or
  ``convert_element_type`` of one) through the same structural and sign maps stay
  fills: a small one becomes a dense constant, a large one a broadcast of a 0-d
  constant, so no large constant is ever made.

A fill is recognised by inspecting the constant (at most :data:`MAX_INSPECT`
elements, on the host).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from tidu import Primitive
from tidu.graph import Eqn, Var
from tidu.passes import FOLD_SMALL_SIZE, Rewriter, rewrite

from .. import _elementwise as _ew
from .. import _joins, _structural as _st
from .. import _transcendental as _tr
from .._astype import convert_element_type_p
from .._aval import TensorType, xp_of
from .._creation import constant_tensor
from .._tensor import Tensor

__all__ = ["simplify_identities", "MAX_INSPECT"]

MAX_INSPECT = 1 << 22
"""Constants with more elements are not inspected for being a fill."""

_NOT_A_FILL = object()


class _Fills:
    """Fill recognition and construction for one run of the pass (cached per variable)."""

    __slots__ = ("rw", "_known", "_made")

    def __init__(self, rw: Rewriter):
        self.rw = rw
        self._known: dict[Var, Any] = {}
        self._made: dict[tuple, Var] = {}

    def of(self, v: Var) -> Any:
        """The common value of every element of ``v`` (a NumPy scalar), or ``None``."""
        r = self._known.get(v, _NOT_A_FILL)
        if r is _NOT_A_FILL:
            r = self._known[v] = self._find(v)
        return r

    def _find(self, v: Var) -> Any:
        c = self.rw.value(v)
        if c is not None:
            return _fill_value(c._data) if type(c) is Tensor else None
        eqn = self.rw.producer(v)
        if eqn is None or eqn.prim not in _FILL_MAPS:
            return None
        c = self.of(eqn.inputs[0])
        return None if c is None else _FILL_MAPS[eqn.prim](c, eqn)

    def make(self, aval: TensorType, value: Any) -> Var:
        """A variable holding ``value`` in every element of ``aval``: a dense constant
        when small, else a broadcast of a 0-d constant (one per value and aval)."""
        if not aval.dtype.is_complex:
            value = np.real(value)  # (callers pass real values for real avals; as convert does)
        value = np.asarray(value).astype(aval.dtype.numpy)[()]
        key = (aval, value.item(), bool(np.signbit(np.real(value))), bool(np.signbit(np.imag(value))))
        v = self._made.get(key)
        if v is not None:
            return v
        if aval.size <= FOLD_SMALL_SIZE or not aval.shape:
            v = self.rw.const(constant_tensor(value, aval.shape, aval.dtype, aval.placement))
        else:
            s = self.rw.const(constant_tensor(value, (), aval.dtype, aval.placement))
            (v,) = self.rw.emit(_st.broadcast_in_dim_p, [s], {"shape": tuple(aval.shape), "broadcast_dimensions": ()})
        self._made[key] = v
        return v


def _fill_value(a: Any) -> Any:
    """The common value of the elements of the array ``a`` (a NumPy scalar), or
    ``None``; a device array is compared on the device (two small transfers)."""
    if a.size == 0 or a.size > MAX_INSPECT:
        return None
    xp = np if type(a) is np.ndarray else xp_of(a)
    first = a.reshape(-1, order="F")[:1]
    same = a == first
    if a.dtype.kind in "fc":  # +0.0 and -0.0 are two fills (0 - y is -y only for -0.0)
        same &= xp.signbit(a.real) == xp.signbit(first.real)
        if a.dtype.kind == "c":
            same &= xp.signbit(a.imag) == xp.signbit(first.imag)
    if not bool(xp.all(same)):
        return None
    return first[0] if xp is np else first.get()[0]


def _same_fill(c: Any, eqn: Eqn) -> Any:
    return c


def _neg_fill(c: Any, eqn: Eqn) -> Any:
    return -c


def _conj_fill(c: Any, eqn: Eqn) -> Any:
    return np.conj(c)


def _convert_fill(c: Any, eqn: Eqn) -> Any:
    new = eqn.params["new_dtype"]
    if np.iscomplexobj(c) and not new.is_complex:
        c = np.real(c)
    return np.asarray(c).astype(new.numpy)[()]


_FILL_MAPS: dict[Primitive, Callable[[Any, Eqn], Any]] = {
    _st.broadcast_in_dim_p: _same_fill,
    _st.reshape_p: _same_fill,
    _st.transpose_p: _same_fill,
    _joins.rev_p: _same_fill,
    _st.slice_p: _same_fill,
    _ew.neg_p: _neg_fill,
    _ew.conj_p: _conj_fill,
    convert_element_type_p: _convert_fill,
}


def _is(c: Any, value: float) -> bool:
    return c is not None and bool(c == value)


# ---------------------------------------------------------------------------
# the rules: eqn, rewriter, fills -> replacement outputs or None
# ---------------------------------------------------------------------------
def _neg(rw: Rewriter, x: Var) -> list[Var]:
    return rw.emit(_ew.neg_p, [x], {})


def _add(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    x, y = eqn.inputs
    if _is(f.of(y), 0):
        return [x]
    if _is(f.of(x), 0):
        return [y]
    return None


def _signed_zero(c: Any, negative: bool) -> bool:
    """Whether the fill ``c`` is a zero of the given sign (an integer zero has both)."""
    if not _is(c, 0):
        return False
    c = np.asarray(c)
    if c.dtype.kind not in "fc":
        return True
    return bool(np.signbit(c.real)) == negative and (c.dtype.kind != "c" or bool(np.signbit(c.imag)) == negative)


def _sub(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    """``x - (+0) -> x`` and ``(-0) - y -> -y``, exact for every ``x``, ``y`` (``(+0) - y`` is not
    ``-y`` at ``y = +0``: ``+0`` against ``-0``, so ``1 / (0 - x)`` would change its infinity's sign)."""
    x, y = eqn.inputs
    if _signed_zero(f.of(y), negative=False):
        return [x]
    if _signed_zero(f.of(x), negative=True):
        return _neg(rw, y)
    return None


def _mul(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    x, y = eqn.inputs
    for a, b in ((x, y), (y, x)):
        c = f.of(b)
        if _is(c, 1):
            return [a]
        if _is(c, -1):
            return _neg(rw, a)
    return None


def _div(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    x, y = eqn.inputs
    c = f.of(y)
    if _is(c, 1):
        return [x]
    if _is(c, -1):
        return _neg(rw, x)
    return None


def _pow(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    x, y = eqn.inputs
    if x.aval != eqn.outputs[0].aval or x.aval.dtype.numpy.kind != "f":
        return None
    c = f.of(y)
    if _is(c, 1):
        return [x]
    if _is(c, 2):
        return rw.emit(_ew.mul_p, [x, x], {})
    return None


def _involution(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    """``neg∘neg`` and ``conj∘conj`` are the identity; ``conj`` of a real value too."""
    (x,) = eqn.inputs
    if eqn.prim is _ew.conj_p and not x.aval.dtype.is_complex:
        return [x]
    p = rw.producer(x)
    if p is not None and p.prim is eqn.prim:
        return [p.inputs[0]]
    return None


def _from_real(rw: Rewriter, x: Var) -> Var | None:
    """The real value ``x`` was converted from, when it was (exactly: a widening)."""
    p = rw.producer(x)
    if p is None or p.prim is not convert_element_type_p:
        return None
    src = p.inputs[0]
    if src.aval.dtype.is_complex or not src.aval.dtype.is_floating:
        return None
    return src if src.aval.dtype is x.aval.dtype.real_dtype else None


def _real(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    if not x.aval.dtype.is_complex:
        return [x]
    src = _from_real(rw, x)
    return None if src is None else [src]


def _imag(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    if not x.aval.dtype.is_complex or _from_real(rw, x) is not None:
        return [f.make(eqn.outputs[0].aval, 0)]
    return None


def _transpose(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    perm = tuple(eqn.params["permutation"])
    p = rw.producer(x)
    if p is not None and p.prim is _st.transpose_p:
        inner = tuple(p.params["permutation"])
        x, perm = p.inputs[0], tuple(inner[i] for i in perm)
    elif perm != tuple(range(len(perm))):
        return None
    if perm == tuple(range(len(perm))):
        return [x]
    return rw.emit(_st.transpose_p, [x], {"permutation": perm})


def _reshape(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    shape = tuple(eqn.params["new_shape"])
    p = rw.producer(x)
    if p is not None and p.prim is _st.reshape_p:
        x = p.inputs[0]
    elif tuple(x.aval.shape) != shape:
        return None
    if tuple(x.aval.shape) == shape:
        return [x]
    return rw.emit(_st.reshape_p, [x], {"new_shape": shape})


def _convert(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    return [x] if x.aval.dtype is eqn.params["new_dtype"] else None


def _broadcast(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    dims = tuple(eqn.params["broadcast_dimensions"])
    if tuple(x.aval.shape) == tuple(eqn.params["shape"]) and dims == tuple(range(len(dims))):
        return [x]
    return None


def _slice(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    full = all(
        start == 0 and step == 1 and count == n for (start, step, count), n in zip(eqn.params["slices"], x.aval.shape)
    )
    return [x] if full else None


def _sum(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    (x,) = eqn.inputs
    axes = tuple(eqn.params["axes"])
    if not axes:
        return [x]
    p = rw.producer(x)
    if p is None or p.prim is not _st.broadcast_in_dim_p:
        return None
    # broadcast then reduce: every summed axis was created by the broadcast
    src = p.inputs[0]
    shape, dims = tuple(p.params["shape"]), tuple(p.params["broadcast_dimensions"])
    if any(a in dims for a in axes) or src.aval.dtype.kind == "bool":
        return None
    out = eqn.outputs[0].aval
    count = math.prod(shape[a] for a in axes)
    if count == 0:
        return [f.make(out, 0)]
    y = src
    if count != 1:
        if src.aval.dtype.kind == "complex":  # (inf - 2j) * (3 + 0j) is inf + nan j; the sum is inf - 6j
            return None
        (y,) = rw.emit(_ew.mul_p, [src, f.make(src.aval, count)], {})
    new_dims = tuple(d - sum(1 for a in axes if a < d) for d in dims)
    if tuple(src.aval.shape) == tuple(out.shape) and new_dims == tuple(range(len(new_dims))):
        return [y]
    return rw.emit(_st.broadcast_in_dim_p, [y], {"shape": tuple(out.shape), "broadcast_dimensions": new_dims})


_RULES: dict[Primitive, Callable[[Eqn, Rewriter, _Fills], "list[Var] | None"]] = {
    _ew.add_p: _add,
    _ew.sub_p: _sub,
    _ew.mul_p: _mul,
    _ew.div_p: _div,
    _tr.pow_p: _pow,
    _ew.neg_p: _involution,
    _ew.conj_p: _involution,
    _ew.real_p: _real,
    _ew.imag_p: _imag,
    _st.transpose_p: _transpose,
    _st.reshape_p: _reshape,
    convert_element_type_p: _convert,
    _st.broadcast_in_dim_p: _broadcast,
    _st.slice_p: _slice,
    _st.sum_p: _sum,
}


def _fill_through(eqn: Eqn, rw: Rewriter, f: _Fills) -> list[Var] | None:
    """A structural or sign map of a fill is a fill of the output (not re-made when
    it already is the canonical broadcast of a 0-d constant, or a constant)."""
    if eqn.prim not in _FILL_MAPS:
        return None
    (x,) = eqn.inputs
    if eqn.prim is _st.broadcast_in_dim_p and not x.aval.shape and rw.is_const(x):
        return None
    c = f.of(x)
    if c is None:
        return None
    return [f.make(eqn.outputs[0].aval, _FILL_MAPS[eqn.prim](c, eqn))]


def simplify_identities(graph: Any) -> Any:
    """The algebraic identities of this module, in one pass over ``graph``
    (returns ``graph`` itself when none applies)."""
    fills: list[_Fills] = []

    def rule(eqn: Eqn, rw: Rewriter) -> list[Var] | None:
        if not fills:
            fills.append(_Fills(rw))
        f = fills[0]
        r = _RULES.get(eqn.prim)
        out = r(eqn, rw, f) if r is not None else None
        if out is None and eqn.prim in _FILL_MAPS and len(eqn.inputs) == 1:
            out = _fill_through(eqn, rw, f)
        return out

    return rewrite(graph, rule, "simplify_identities")
