"""MPS arithmetic on chains of site tensors: the exact sum (direct sum of the bonds) and scalar
multiples; :class:`~tensor4all.MPS` wraps them in ``a + b``, ``a - b``, ``-a``, ``c * a``,
``a / c``, and compresses the sum in :meth:`~tensor4all.MPS.add` and :func:`~tensor4all.add`.

The sum of states ``A^(1), ..., A^(n)`` has site tensors block-diagonal in the bonds,
``A_i = diag(A^(1)_i, ..., A^(n)_i)`` over the shared physical index, the first site a row
``[A^(1)_0 ... A^(n)_0]`` and the last a column (Schollwoeck, Ann. Phys. 326, 96 (2011),
Sec. 4.3): bond dimensions add and the sum is exact. For symmetric chains the same holds
per charge sector: a bond sector's dimension is the sum of that sector's dimensions in the
summands (states of one sector, else :class:`SectorMismatchError`). A scalar multiplies the
first site.

The compressed sum (:func:`~tensor4all.add`) is the exact sum followed by the one compression
sweep, :func:`~tensor4all.networks.site_ops.compress_sweep` (QR to left-orthonormal form, then
right-to-left truncated SVDs: each truncation is then optimal for its bond given the rest, the
standard SVD compression, Schollwoeck Sec. 4.5.1). Everything is tenferro operations, so
``tidu.grad`` goes through sums, scalings (a traced scalar too) and compression.

This module works on site lists and does not import :mod:`.mps`; the checks take the class
to test against as an argument.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..tools.errors import DimensionMismatchError, InvalidOptionError, Tensor4allTypeError, ValueRangeError
from .chain import leaves_of
from .site_ops import in_range, ldexp_site, site_exponent
from .symmetric_sites import is_symmetric
from ..tools.checks import check_coupling, concrete, first_nonfinite
from ..structured import Leg, SectorMismatchError, SymmetricTensor

__all__ = ["check_summands", "direct_sum", "summed", "scaled"]


def check_summands(states: Sequence[Any], what: str, cls: type) -> None:
    """Typed errors unless ``states`` are instances of ``cls`` (the MPS class) that can be added:
    the same number of sites and physical dimensions, all dense or all symmetric, and symmetric
    ones of one group, the same physical sectors and the same total charge."""
    if not states:
        raise Tensor4allTypeError(f"{what} needs at least one MPS, got none")
    for k, x in enumerate(states):
        if not isinstance(x, cls):
            raise Tensor4allTypeError(f"{what}: operand {k} must be an MPS, got {type(x).__name__} {x!r:.60}")
    a = states[0]
    for k, b in enumerate(states[1:], 1):
        if a.L != b.L or a.phys_dims != b.phys_dims:
            raise DimensionMismatchError(
                f"{what}: the states differ in length or physical dimensions: L={a.L} with "
                f"{a.phys_dims} (operand 0) vs L={b.L} with {b.phys_dims} (operand {k})"
            )
        if a.symmetric != b.symmetric:
            which = 0 if a.symmetric else k
            raise Tensor4allTypeError(
                f"{what}: operand {which} is symmetric and the other dense; convert the "
                f"symmetric one with .dense() to add them"
            )
        if not a.symmetric:
            continue
        if a.symmetry != b.symmetry:
            raise SectorMismatchError(f"{what}: operand 0 conserves {a.symmetry!r}, operand {k} {b.symmetry!r}")
        bad = next(
            (i for i, (x, y) in enumerate(zip(a.tensors, b.tensors)) if not x.legs[1].same_space(y.legs[1])), None
        )
        if bad is not None:
            raise SectorMismatchError(
                f"{what}: site {bad} has the physical leg {a.tensors[bad].legs[1]!r} in operand "
                f"0 and {b.tensors[bad].legs[1]!r} in operand {k}"
            )
        if a._group_charge != b._group_charge:
            raise SectorMismatchError(
                f"{what}: operand 0 is in the sector {a.sector or a.charge}, operand {k} in "
                f"{b.sector or b.charge}; states of different sectors have no symmetric sum "
                "(add their .dense() forms)"
            )


def _dtype(t: Any) -> Any:
    return t.dtype if isinstance(t, SymmetricTensor) else tidu.aval_of(t).dtype


def _stack(
    blocks: Sequence[Any], dls: Sequence[int], drs: Sequence[int], ds: int, first: bool, last: bool, dtype: Any
) -> Any:
    """One block of the direct sum: ``blocks[k]`` (None: zero) of shape ``(dls[k], ds, drs[k])``
    on the diagonal; a shared left bond (``first``) puts them in a row, a shared right bond
    (``last``) in a column, both (one site) adds them."""

    def get(k: int, j: int) -> Any:
        b = blocks[k] if k == j else None
        shape = (1 if first else dls[k], ds, 1 if last else drs[j])
        return tf.zeros(shape, dtype=dtype) if b is None else tf.cast(b, dtype)

    ks = range(len(blocks))
    if first and last:
        present = [tf.cast(b, dtype) for b in blocks if b is not None]
        out = present[0]
        for b in present[1:]:
            out = out + b
        return out
    if first:
        return tf.concatenate([get(j, j) for j in ks if drs[j]], axis=2)
    if last:
        return tf.concatenate([get(k, k) for k in ks if dls[k]], axis=0)
    rows = [tf.concatenate([get(k, j) for j in ks if drs[j]], axis=2) for k in ks if dls[k]]
    return tf.concatenate(rows, axis=0)


def _merged_leg(legs: Sequence[Leg]) -> Leg:
    """The direct sum of bond legs: each charge's dimensions added, sectors in order of first appearance."""
    sectors: dict[Any, int] = {}
    for leg in legs:
        for q, d in leg.sectors.items():
            sectors[q] = sectors.get(q, 0) + d
    return Leg(legs[0].symmetry, list(sectors.items()))


def direct_sum(chains: Sequence[Sequence[Any]]) -> list[Any]:
    """The site tensors of the exact sum of the chains (dense or symmetric, checked by
    :func:`check_summands`); dtypes promoted."""
    if len(chains) == 1:
        return list(chains[0])
    L = len(chains[0])
    dtype = tf.result_type(*[_dtype(t) for ts in chains for t in ts])
    if not is_symmetric(chains[0]):
        out = []
        for i in range(L):
            sites = [ts[i] for ts in chains]
            dls = [tuple(t.shape)[0] for t in sites]
            drs = [tuple(t.shape)[2] for t in sites]
            out.append(_stack(sites, dls, drs, tuple(sites[0].shape)[1], i == 0, i == L - 1, dtype))
        return out
    bonds = [chains[0][0].legs[0]] + [_merged_leg([ts[i].legs[2] for ts in chains]) for i in range(L - 1)]
    bonds.append(chains[0][-1].legs[2].dual())
    out = []
    for i in range(L):
        sites = [ts[i] for ts in chains]
        keys = list(dict.fromkeys(k for t in sites for k in t.blocks))
        blocks = {}
        for key in keys:
            ql, qs, qr = key
            dls = [t.legs[0].sectors.get(ql, 0) for t in sites]
            drs = [t.legs[2].sectors.get(qr, 0) for t in sites]
            blocks[key] = _stack(
                [t.blocks.get(key) for t in sites], dls, drs, sites[0].legs[1].sector_dim(qs), i == 0, i == L - 1, dtype
            )
        out.append(SymmetricTensor(blocks, [bonds[i], sites[0].legs[1], bonds[i + 1].dual()], dtype=dtype))
    return out


def summed(states: Sequence[Any], what: str, cls: type, signs: Sequence[int] | None = None) -> tuple[list[Any], Any]:
    """The exact sum of ``states`` (instances of ``cls``, checked), each times its sign: the
    site tensors and the grading (what the states conserve; the first one known)."""
    check_summands(states, what, cls)
    signs = signs or [1] * len(states)
    chains = [s._tensors if k == 1 else scaled(s._tensors, k, what) for s, k in zip(states, signs)]
    return direct_sum(chains), next((s._grading for s in states if s._grading is not None), None)


def scaled(ts: Sequence[Any], c: Any, what: str, divide: bool = False) -> list[Any]:
    """The chain times the scalar ``c`` (divided by it with ``divide``) on its first site. ``c``:
    a finite Python/NumPy number (complex too), a 0-d tensor or a tidu tracer."""
    if hasattr(c, "L") and hasattr(c, "tensors"):
        raise Tensor4allTypeError(
            f"{what}: cannot multiply or divide two tensor networks; the factor must be a "
            "scalar number (for <a|b> use tensor4all.overlap)"
        )
    c = check_coupling(c, f"{what}: the factor")
    if divide:
        value = concrete(c) if isinstance(c, (tf.Tensor, tidu.Tracer)) else c
        if value is not None and complex(np.asarray(value).item()) == 0:
            raise InvalidOptionError(f"{what}: division by zero")
    ts = list(ts)
    value = c if isinstance(c, (int, float, complex, np.number)) else None
    leaves = leaves_of(ts)
    if value is None or value == 0 or any(concrete(b) is None for b in leaves):  # traced: on the first site
        ts[0] = ts[0] / c if divide else ts[0] * c
        return ts
    # the factor's mantissa on the first site, its power of two there while that stays in range, else
    # spread over the sites (a * 1e300 * 1e10 made an infinite site); the same bits where it fits
    _, e = math.frexp(abs(value))
    if abs(e) < 1000:
        mantissa = value / 2.0**e
    else:  # 2.0**-e alone overflows for a subnormal factor (e = -1032 at 2.2e-311): two exact halves
        mantissa = value * 2.0 ** -(e // 2) * 2.0 ** -(e - e // 2)
    ts[0] = ts[0] / mantissa if divide else ts[0] * mantissa
    e = -e if divide else e
    if in_range(ts[0], e):
        ts[0] = ldexp_site(ts[0], e)
    else:  # every site brought to unit scale, the whole power of two shared evenly
        exps = [site_exponent(t) for t in ts]
        q, r = divmod(sum(exps) + e, len(ts))
        ts = [ldexp_site(t, q + (1 if i < r else 0) - k) for i, (t, k) in enumerate(zip(ts, exps))]
    if first_nonfinite(leaves_of(ts)) is not None:
        raise ValueRangeError(
            f"{what}: the factor {value!r} takes the state beyond the float range of its sites ({ts[0].dtype}); "
            "normalize the state first (its norm is a separate number: psi.norm())"
        )
    return ts
