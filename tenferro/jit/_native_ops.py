"""What the native backend of compiled mode runs: the primitives it covers, the reason
for each equation it leaves to NumPy (:func:`classify`), and the scalar expression of
each elementwise primitive inside a fused loop (:func:`scalar_expr`). Read by
:mod:`._native_lower`."""

from __future__ import annotations

import numpy as np

from tidu.graph import Eqn, Var

from .. import _elementwise as _ew
from .. import _structural as _st
from .. import _transcendental as _tr
from .._astype import convert_element_type_p
from .._contraction import dot_general_p
from ..einsum._ad import einsum_p
from ..einsum._plan import decompose
from ._sum_products import stack_p

__all__ = [
    "MAX_RANK",
    "WORKSPACE_DTYPES",
    "WS",
    "TYPE",
    "ELEMENTWISE",
    "classify",
    "scalar_expr",
    "dtype_of",
    "shape_of",
]

MAX_RANK = 8  # as _native_kernels.MAX_RANK (that module imports Numba)
WORKSPACE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128))
WS = {d: i for i, d in enumerate(WORKSPACE_DTYPES)}
TYPE = {0: "np.float32", 1: "np.float64", 2: "np.complex64", 3: "np.complex128"}

_BINARY = {_ew.add_p: "({0} + {1})", _ew.sub_p: "({0} - {1})", _ew.mul_p: "({0} * {1})", _ew.div_p: "({0} / {1})"}
_COMPLEX_TO_NUMPY = {
    "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
    "sqrt", "rsqrt", "expm1", "log1p", "square",
}  # fmt: skip
"""Complex functions left to NumPy: Numba's complex ``exp``, ``sin``, ``cos``, ``sinh``, ``cosh``
give NaN where NumPy gives an infinity or a signed zero (``exp(710+0j)``, ``sin(710j)``), ``tanh``
NaN past ``|Re z| ~ 355`` and 1e-6 relative errors near ``|z| ~ 4``, ``log`` cancels near
``|z| = 1``, ``sqrt`` overflows near the largest floats (``rsqrt`` is ``1 / sqrt``), the inverse
functions and ``expm1`` mishandle NaN and tiny arguments, ``square`` gives NaN where NumPy's
gives an infinity. Complex division and ``reciprocal`` stay native, computed as NumPy does
(:func:`._native_kernels.complex_div`)."""
_UNARY = {getattr(_tr, f"{r.name}_p"): r.name for r in _tr.RULES}
ELEMENTWISE = set(_BINARY) | set(_UNARY) | {_ew.neg_p, _ew.conj_p, _ew.real_p, _ew.imag_p, convert_element_type_p}
_LAYOUT = {_st.reshape_p, _st.broadcast_in_dim_p, _st.transpose_p, _st.slice_p, _st.slice_embed_p, _st.sum_p, stack_p}
_CONTRACTIONS = {dot_general_p, einsum_p}


def dtype_of(v: Var) -> np.dtype | None:
    """The NumPy dtype of a graph value (``None`` for a value that is no tensor)."""
    dt = getattr(getattr(v.aval, "dtype", None), "numpy", None)
    return None if dt is None else np.dtype(dt)


def shape_of(v: Var) -> tuple[int, ...]:
    """The shape of a graph value."""
    return tuple(v.aval.shape)


def classify(eqn: Eqn) -> str | None:
    """``None`` when the native backend runs ``eqn``, else the reason it stays with NumPy."""
    prim = eqn.prim
    if prim not in ELEMENTWISE and prim not in _LAYOUT and prim not in _CONTRACTIONS:
        return f"{prim.name}: no native kernel (runs its NumPy kernel)"
    for v in list(eqn.inputs) + list(eqn.outputs):
        dt = dtype_of(v)
        if dt not in WS:
            return f"{prim.name}: dtype {dt} (native kernels cover float32/64, complex64/128)"
        if len(shape_of(v)) > MAX_RANK:
            return f"{prim.name}: rank {len(shape_of(v))} above {MAX_RANK}"
    ins = [dtype_of(v) for v in eqn.inputs]
    out = dtype_of(eqn.outputs[0])
    if prim in _UNARY and _UNARY[prim] in _COMPLEX_TO_NUMPY and out.kind == "c":
        return f"{prim.name}: complex {_UNARY[prim]} is left to NumPy (Numba's is inexact on hard arguments)"
    if prim in _CONTRACTIONS and any(d != out for d in ins):
        return f"{prim.name}: mixed operand dtypes"
    if prim is einsum_p:
        for st in decompose(eqn.params["plan"]):
            labels = list(st.spec.inputs) + [st.spec.output]
            if len(st.positions) != 2 or any(len(set(t)) != len(t) for t in labels):
                return "einsum: a one-operand step or a repeated label (diagonal) in its plan"
            a, b = st.spec.inputs
            if any(lab not in b and lab not in st.spec.output for lab in a) or any(
                lab not in a and lab not in st.spec.output for lab in b
            ):
                return "einsum: a label summed over one operand only in its plan"
            if any(len(t) > MAX_RANK for t in labels):
                return f"einsum: an intermediate of rank above {MAX_RANK}"
    return None


def scalar_expr(e: Eqn, args: list[str]) -> str:
    """The Numba expression of elementwise equation ``e`` on scalar operands ``args``."""
    prim = e.prim
    ws = WS[dtype_of(e.outputs[0])]
    one = TYPE[ws] + "(1)"
    if prim is _ew.div_p and ws >= 2:  # NumPy's complex division (Numba's raises at 0 and rounds otherwise)
        a, b = (f"{TYPE[ws]}({x})" for x in args)
        return f"{TYPE[ws]}(complex_div({a}, {b}, {TYPE[ws - 2]}(1)))"
    if prim in _BINARY:
        return _BINARY[prim].format(*args)
    a = args[0]
    if prim is _ew.neg_p:
        return f"(-{a})"
    if prim is _ew.conj_p:
        return f"np.conj({a})" if ws >= 2 else a
    if prim is _ew.real_p:
        return f"{a}.real" if WS[dtype_of(e.inputs[0])] >= 2 else a
    if prim is _ew.imag_p:
        return f"{a}.imag" if WS[dtype_of(e.inputs[0])] >= 2 else f"({a} * {TYPE[ws]}(0))"
    if prim is convert_element_type_p:
        if WS[dtype_of(e.inputs[0])] >= 2 and ws < 2:
            a = f"{a}.real"
        return f"{TYPE[ws]}({a})"
    name = _UNARY[prim]
    if name == "rsqrt":
        return f"({one} / np.sqrt({a}))"
    if name == "square":
        return f"({a} * {a})"
    if name == "reciprocal":
        return f"{TYPE[ws]}(complex_reciprocal({a}, {TYPE[ws - 2]}(1)))" if ws >= 2 else f"({one} / {a})"
    if name == "tanh" and ws < 2:  # a real tanh that vectorizes (float32 through float64)
        return "tanh_real(" + a + ")" if ws == 1 else f"np.float32(tanh_real(np.float64({a})))"
    return f"np.{name}({a})"
