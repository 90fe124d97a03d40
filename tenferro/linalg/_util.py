"""The base of every public function and primitive of :mod:`tenferro.linalg`
(impl side: NumPy or CuPy arrays).

* typed argument checks (:func:`check_matrix`, :func:`check_batch`) and
  :func:`bind`, which runs a primitive's shape rule before binding it;
* moving the trailing batch dimensions ``[M, N, B...]`` to the leading position
  that LAPACK wrappers expect (:func:`lead`: ``np.moveaxis`` is a view) and back to
  canonical column-major storage (:func:`trail`, :func:`wrap`);
* :func:`concrete` (from :mod:`.._aval`, shared with the core ops), the value of a tensor or of a tracer that knows one;
  :func:`raw_value` (:func:`raw_tangent`, :func:`aligned`), that of a vmap tracer too,
  its batch axes moved last, for the rules' checks that read values;
* the one non-finite check (:func:`check_finite`), applied to every public
  function's operands by :func:`operand`, staged under ``tenferro.jit`` as
  :data:`finite_check_p`.

The linalg helper modules, bottom to top: ``_util``, ``_lapack`` (LAPACK drivers),
``_matops`` (batched matrix ops for rules), ``_spectral`` (``gap_inverse``),
``_gauge`` (the gauge and degeneracy checks of reverse mode).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tidu import BatchTracer, Tracer, Zero

from .._errors import fmt_shape
from .._aval import aval_of_operand, concrete, fortran, TensorType, xp_of
from .._operands import as_operand
from .._registry import primitive
from .._batching import trailing_batch
from .._tensor import Tensor

from ._errors import LinalgDTypeError, LinalgShapeError, NonFiniteError

FAMILY = "linalg"


def check_matrix(op: str, name: str, a: TensorType, *, square: bool = False) -> None:
    """Raise typed errors unless ``a`` is a float/complex (batch of) matrix."""
    if not a.dtype.is_floating:
        raise LinalgDTypeError(f"{op}: {name} must be float32/64 or complex64/128, got dtype {a.dtype.name}")
    if len(a.shape) < 2:
        raise LinalgShapeError(
            f"{op}: {name} must be a matrix [M, N] or a batch of matrices [M, N, B...] "
            f"(trailing batch dimensions), got shape {fmt_shape(a.shape)}"
        )
    if square and a.shape[0] != a.shape[1]:
        raise LinalgShapeError(
            f"{op}: {name} must be square ([N, N, B...]), got shape {fmt_shape(a.shape)} "
            f"({a.shape[0]} x {a.shape[1]} matrices)"
        )


def check_batch(op: str, names: Sequence[str], avals: Sequence[TensorType], cores: Sequence[int]) -> tuple:
    """Equal batch shapes (after ``cores[i]`` core dimensions); returns the batch shape."""
    batches = [tuple(a.shape[c:]) for a, c in zip(avals, cores)]
    if any(b != batches[0] for b in batches[1:]):
        desc = ", ".join(f"{n} {fmt_shape(a.shape)} (batch {fmt_shape(b)})" for n, a, b in zip(names, avals, batches))
        raise LinalgShapeError(f"{op}: batch dimensions (trailing) must match exactly, got {desc}")
    return batches[0]


def lead(a: np.ndarray, core: int = 2) -> np.ndarray:
    """View of ``a`` with its ``core`` leading (matrix) axes moved to the back."""
    nd = a.ndim
    if nd == core:
        return a
    return np.moveaxis(a, tuple(range(core)), tuple(range(nd - core, nd)))


def trail(a: np.ndarray, core: int = 2) -> np.ndarray:
    """Inverse of :func:`lead`, in canonical column-major storage."""
    nd = a.ndim
    if nd == core:
        return fortran(a)
    return fortran(np.moveaxis(a, tuple(range(nd - core, nd)), tuple(range(core))))


def wrap(a: np.ndarray, core: int = 2) -> Tensor:
    return Tensor._wrap(trail(a, core))


def check_finite(op: str, name: str, x: Any) -> None:
    """The one non-finite check of :mod:`tenferro.linalg`: raise :class:`NonFiniteError`
    when ``x`` (a NumPy or CuPy array, a tensor, or a tracer that knows its value)
    holds a NaN or an infinity. LAPACK would otherwise return NaN silently or report a
    misleading non-convergence, singularity or non-positive-definiteness. Abstract
    values (staged graphs) are checked when the graph runs, by the impls. On a GPU
    this is one small device-to-host read (README, "GPU")."""
    if type(x) is Tensor or isinstance(x, Tracer):
        x = concrete(x)
        if x is None:
            return
    if x.size and x.dtype.kind in "fc" and not bool(xp_of(x).isfinite(x).all()):
        raise NonFiniteError(f"{op}: the input {name} of shape {fmt_shape(x.shape)} contains NaN or inf")


def operand(op: str, name: str, x: Any) -> Any:
    """``x`` as an operand of the public linalg function ``op``, refused by
    :func:`check_finite` when it holds NaN or inf (every public function starts here).
    An abstract value (a staged graph: ``tenferro.jit``) passes through
    :data:`finite_check_p`, so the compiled program checks it under ``op``'s name."""
    x = as_operand(op, x)
    value = concrete(x)
    if value is None:  # abstract: checked when the program runs
        return finite_check_p.bind(x, op=op, name=name)
    check_finite(op, name, value)
    return x


finite_check_p = primitive("linalg_finite_check", FAMILY)
finite_check_p.def_batch(trailing_batch(finite_check_p))  # trailing batch axes: tenferro._batching
"""``finite_check_p(x, op, name)``: ``x`` unchanged; evaluating it raises
:class:`NonFiniteError` naming the public function ``op`` when ``x`` holds NaN or
inf. The identity for derivatives (tangents and cotangents are not checked)."""


@finite_check_p.def_impl
def _finite_check_impl(x: Tensor, op: str, name: str) -> Tensor:
    check_finite(op, name, x._data)
    return x


@finite_check_p.def_abstract_eval
def _finite_check_aval(a: Any, op: str, name: str) -> Any:
    return a


@finite_check_p.def_jvp
def _finite_check_jvp(primals, tangents, op, name):
    return finite_check_p.bind(primals[0], op=op, name=name), tangents[0]


@finite_check_p.def_transpose
def _finite_check_transpose(ct, x, op, name):
    return [None if type(ct) is Zero else ct]


def bind(p: Any, *args: Any, **params: Any) -> Any:
    """Validate the operands with ``p``'s shape rule (typed errors, also on the
    eager path, which skips abstract evaluation), then bind ``p``."""
    p.abstract_eval(*[aval_of_operand(x) for x in args], **params)
    return p.bind(*args, **params)


def raw_value(x: Any) -> tuple | None:
    """``(array, levels)``: the NumPy (CuPy) value of a tensor, of a JVP tracer's primal or
    of a vmap tracer, the batch axes of the vmaps it is mapped over moved last (trailing
    batch, as tenferro's) in the order of ``levels`` (their transformations' levels,
    increasing); None when abstract. :func:`aligned` lines several up."""
    if type(x) is Tensor:
        return x._data, ()
    if type(x) is BatchTracer:
        v = raw_value(x.val)
        if v is None or x.bdim is None:
            return v
        return xp_of(v[0]).moveaxis(v[0], x.bdim, -1), v[1] + (x._trace.level,)
    if isinstance(x, Tracer) and "primal" in getattr(type(x), "__slots__", ()):  # a JVP tracer
        return raw_value(x.primal)
    return None


def raw_tangent(x: Any) -> tuple | None:
    """:func:`raw_value` of a JVP tracer's tangent; None for anything else or a symbolic zero."""
    if isinstance(x, Tracer) and "tangent" in getattr(type(x), "__slots__", ()):
        t = x.tangent
        return None if type(t) is Zero else raw_value(t)
    return None


def aligned(raws: list) -> list:
    """The arrays of ``raws`` (:func:`raw_value` pairs or None) with a singleton axis for
    each vmap level an array is not mapped over, so that all carry the same trailing
    axes, in the same order, and broadcast."""
    levels = sorted({lv for r in raws if r is not None for lv in r[1]})
    out = []
    for r in raws:
        if r is None:
            out.append(None)
            continue
        arr, own = r
        base = arr.shape[: arr.ndim - len(own)]
        sizes = dict(zip(own, arr.shape[arr.ndim - len(own) :]))
        out.append(arr.reshape(base + tuple(sizes.get(lv, 1) for lv in levels)))
    return out
