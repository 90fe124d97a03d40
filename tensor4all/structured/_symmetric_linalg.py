"""The matrix decompositions of :class:`SymmetricTensor` (``svd``, ``truncated_svd``, ``qr``,
``eigh``), sector by sector (never densifying).

They act on a two-leg tensor (a matrix ``(row, col)`` of charge ``q``; fuse legs first with
``fuse_legs``). Such a matrix is block diagonal: row sector ``a`` pairs with the one column
sector ``b`` such that ``s_r a + s_c b == q``. Each stored block is factorized by tenferro (so
derivatives are tenferro's, per block); the new bond leg ``k`` has one sector per block, of
charge ``t = s_r a``: ``U``/``Q``/``V`` have legs ``(row, k.dual())`` and charge 0,
``Vh``/``R`` legs ``(k, col)`` and charge ``q``, and the singular values or eigenvalues form a
:class:`SectorDiagonal` on ``k``.
``truncated_svd`` keeps the largest singular values across all sectors together, with
tenferro's meaning and checks of ``max_rank``, ``cutoff`` (the discarded weight
``sum(dropped s^2) / sum(s^2)`` over all sectors) and ``rtol`` (``s > rtol * s_max``; the same
:class:`tenferro.TenferroValueError` for a bad value); sectors left with none vanish from the
bond; under ``tidu.vmap`` each sector keeps the batch's largest count.
"""

from __future__ import annotations

from typing import Any

import tenferro as tf
import tidu

from ._errors import SectorMismatchError, SymmetryError
from ._sector_diagonal import SectorDiagonal
from ._symmetric import SymmetricTensor
from ._symmetric_kernels import real_dtype
from ._symmetry import Leg, leg_difference, sign_of
from ._value_checks import batch_counts
from .ranking import rank_across_sectors

__all__ = ["sym_svd", "sym_qr", "sym_eigh", "sym_truncated_svd"]


def _matrix(op: str, x: SymmetricTensor) -> tuple[Leg, Leg]:
    if len(x.legs) != 2:
        raise SymmetryError(
            f"{op} of a symmetric tensor needs two legs (a matrix), got {len(x.legs)}; fuse the "
            "row and column legs first (x.fuse_legs([...], [...]))"
        )
    return x.legs


def _blocks_or_zero(op: str, x: SymmetricTensor) -> dict:
    """The stored blocks of the matrix ``x``; for the zero matrix (none stored) zero blocks of
    every sector it may hold, so that its factorization is that of zeros, as dense (``eigh``
    does the same): singular values 0, an orthonormal ``U``/``Q`` and ``R = 0``. A matrix that can
    hold no block at all raises :class:`SymmetryError`."""
    if x._blocks:
        return dict(x._blocks)
    row, col = x.legs
    zeros = {k: tf.zeros((row.sector_dim(k[0]), col.sector_dim(k[1])), dtype=x.dtype) for k in x.allowed_sectors()}
    if not zeros:
        raise SymmetryError(
            f"{op} of a symmetric tensor whose legs allow no block of charge {x.charge!r}: there are no "
            "sectors to decompose"
        )
    return zeros


def _bond(row: Leg, keys: list[tuple], dims: list[int]) -> Leg:
    """The new bond leg: one sector of charge ``s_r a`` per row sector ``a``."""
    g = row.symmetry
    sectors = [((a if sign_of(row) > 0 else g._negate(a)), d) for (a, _), d in zip(keys, dims)]
    return Leg(g, sectors)


def _factor(op: str, x: SymmetricTensor, fn: Any) -> tuple[Leg, list, list, list]:
    row, col = _matrix(op, x)
    keys = [k for k in x._blocks]
    parts = [fn(x._blocks[k]) for k in keys]
    return row, col, keys, parts


def sym_svd(x: SymmetricTensor, full_matrices: bool = False, compute_uv: bool = True) -> Any:
    if full_matrices:
        return NotImplemented
    row, col = _matrix("svd", x)
    blocks = _blocks_or_zero("svd", x)
    keys = list(blocks)
    if not compute_uv:
        parts = [tf.linalg.svd(blocks[k], compute_uv=False) for k in keys]
        bond = _bond(row, keys, [p.shape[0] for p in parts])
        return SectorDiagonal._make(bond, dict(zip(bond.charges, parts)))
    parts = [tf.linalg.svd(blocks[k]) for k in keys]
    return _assemble_svd(x, row, col, keys, parts)


def _assemble_svd(x: SymmetricTensor, row: Leg, col: Leg, keys: list, parts: list) -> tuple:
    bond = _bond(row, keys, [p[1].shape[0] for p in parts])
    g = x.symmetry
    us, ss, vs = {}, {}, {}
    for (a, b), t, (u, s, vh) in zip(keys, bond.charges, parts):
        us[(a, t)], ss[t], vs[(t, b)] = u, s, vh
    U = SymmetricTensor._make(us, [row, bond.dual()], g.identity, x.dtype)
    Vh = SymmetricTensor._make(vs, [bond, col], x.charge, x.dtype)
    return U, SectorDiagonal._make(bond, ss), Vh


def sym_truncated_svd(x: SymmetricTensor, max_rank: Any = None, cutoff: Any = None, rtol: Any = None) -> Any:
    """One truncation across all sectors, with tenferro's meanings: ``cutoff`` the discarded
    weight ``sum(dropped s^2) / sum(s^2)`` over all sectors together (the one ranking of
    :func:`tensor4all.linalg.truncation.truncation_keep`, as the MPS sweeps), ``rtol`` relative to the
    largest value; the derivative is that of the kept part of each block's full thin SVD
    (discarded subspace included, as ``tenferro.linalg.truncated_svd``). Under ``tidu.vmap`` each
    example is ranked on its own and each sector keeps the largest count of any example (the
    batch's bond is the union, so it may hold more than ``max_rank`` values in all), as the dense
    function keeps the batch's largest rank; under ``tenferro.jit`` the ranking needs values:
    :class:`tidu.TracerConversionError`, as dense ``cutoff``/``rtol``."""
    tf.linalg.truncation_rank(
        [], max_rank, cutoff, rtol, what="truncated_svd"
    )  # tenferro's checks and messages, before any work
    row, col = _matrix("truncated_svd", x)
    blocks = _blocks_or_zero("truncated_svd", x)
    keys = list(blocks)
    parts = [tf.linalg.svd(blocks[k]) for k in keys]
    full = [p[1].shape[0] for p in parts]
    if cutoff is None and rtol is None and (max_rank is None or int(max_rank) >= sum(full)):
        keep = full  # nothing to drop: no values needed (also under tenferro.jit)
    else:
        keep = batch_counts(
            [p[1] for p in parts],
            lambda values: rank_across_sectors(
                values,
                lambda merged: max(tf.linalg.truncation_rank(merged, max_rank, cutoff, rtol, what="truncated_svd"), 1),
            ),
        )
        if keep is None:
            raise tidu.TracerConversionError(
                "truncated_svd of a symmetric tensor chooses how many values each sector keeps from the "
                "singular values of all sectors, which are abstract while a graph is traced (tenferro.jit, "
                "make_graph); call it outside jit"
            )
    kept_keys, kept_parts = [], []
    for k, p, n in zip(keys, parts, keep):
        if n:
            kept_keys.append(k)
            kept_parts.append((p[0][:, :n], p[1][:n], p[2][:n, :]))
    return _assemble_svd(x, row, col, kept_keys, kept_parts)


def sym_qr(x: SymmetricTensor, mode: str = "reduced") -> Any:
    if mode != "reduced":
        return NotImplemented
    row, col = _matrix("qr", x)
    blocks = _blocks_or_zero("qr", x)
    keys = list(blocks)
    parts = [tf.linalg.qr(blocks[k]) for k in keys]
    bond = _bond(row, keys, [p[0].shape[1] for p in parts])
    g = x.symmetry
    qs, rs = {}, {}
    for (a, b), t, (q, r) in zip(keys, bond.charges, parts):
        qs[(a, t)], rs[(t, b)] = q, r
    return (
        SymmetricTensor._make(qs, [row, bond.dual()], g.identity, x.dtype),
        SymmetricTensor._make(rs, [bond, col], x.charge, x.dtype),
    )


def sym_eigh(x: SymmetricTensor) -> Any:
    """Eigen-decomposition of a Hermitian operator on ``row`` (legs ``(row, row.dual())``,
    charge 0). Every row sector is a block; one not stored is zero (eigenvalues 0,
    eigenvectors the identity), so the spectrum is the dense one."""
    row, col = _matrix("eigh", x)
    g = x.symmetry
    if not col.same_space(row):
        why = leg_difference(row, col)
    elif col.is_dual == row.is_dual:
        why = f"both legs are {'dual' if row.is_dual else 'non-dual'}"
    elif x.charge != g.identity:
        why = f"the charge is {x.charge!r}, not {g.identity!r}"
    else:
        why = None
    if why is not None:
        raise SectorMismatchError(
            f"eigh of a symmetric tensor needs legs (leg, leg.dual()) and charge "
            f"{g.identity!r} (an operator on one space), got legs {row!r}, {col!r} and charge "
            f"{x.charge!r}: {why}"
        )
    keys = [(a, a) for a in row.charges]
    ws, vs = {}, {}
    bond = _bond(row, keys, list(row.dims))
    rdt = real_dtype(x.dtype)
    for (a, _), t in zip(keys, bond.charges):
        blk = x._blocks.get((a, a))
        if blk is None:
            d = row.sector_dim(a)
            ws[t] = tf.zeros((d,), dtype=rdt)
            vs[(a, t)] = tf.eye(d, dtype=x.dtype)
        else:
            ws[t], vs[(a, t)] = tf.linalg.eigh(blk)
    return SectorDiagonal._make(bond, ws), SymmetricTensor._make(vs, [row, bond.dual()], g.identity, x.dtype)
