"""The truncation policy: a truncated SVD that keeps at most ``max_bond`` singular
values and drops a tail whose relative weight is at most ``cutoff``; and the split of a
local tensor ``m ~ left @ right`` that moves the orthogonality centre.

A split toward ``"right"`` keeps the left factor orthonormal and puts the weights into the
right one, toward ``"left"`` the mirror image: :func:`absorb` is the one place where the
direction decides this, and :func:`split_perturbed` picks White's perturbed basis on the
side the centre leaves by working on ``m`` or ``m^T``, never on two mirrored copies.

:func:`svd_truncated_sectors` is the same policy on a block-diagonal matrix: one SVD per
charge sector, one truncation across all of them.

A differentiated split (tenferro tensors, tidu tracers: TEBD, TDVP, ``apply`` and the arithmetic)
takes its factors from :func:`weighted_factors` (complex vectors in one phase convention,
:func:`fixed_phases`; a degenerate block of kept values as the projection of the matrix,
:func:`projected_factors`), and a chain's orthonormalization from :func:`orthonormal_factors`
(the SVD where a QR is rank-deficient): where a bare SVD or QR has no derivative.

Used by DMRG (the sweep backends), ``MPS.compress`` and ``MPS.from_dense``.

On a GPU (CuPy arrays, :mod:`._device`) :func:`split` takes its basis from the Hermitian
eigensolver of the Gram matrix of the side the centre leaves (:func:`perturbed_basis` without
perturbation) instead of an SVD: cuSOLVER's SVD of a 4096 x 4096 matrix takes seconds, its
``syevd`` a tenth of that. Its eigenvalues are the squared singular values to ~1e-16 of the
largest; at most ``min(m.shape)`` of them (the rank) are kept, so the rounding noise of a
rank-deficient side never enters the basis, and weights below ~1e-16 may be dropped where the
SVD would keep them; the state is then projected onto the kept states exactly. The truncation
decision reads the (short) vector of weights back to the host.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.linalg

import tenferro as tf
import tidu

from ..structured.ranking import rank_across_sectors
from ..tools.checks import concrete
from ..tools.device import array_module, contiguous, is_device_array, to_host

__all__ = [
    "resolved_values",
    "svd_truncated",
    "truncation_keep",
    "sector_keep",
    "thin_svd",
    "svd_truncated_sectors",
    "absorb",
    "projected_factors",
    "weighted_factors",
    "orthonormal_factors",
    "fixed_phases",
    "split",
    "split_perturbed",
    "perturbed_basis",
]


def truncation_keep(s: np.ndarray, max_bond: int | None, cutoff: float) -> tuple[int, float]:
    """How many of the descending singular values ``s`` to keep, and the relative
    discarded weight ``sum(dropped s^2) / sum(s^2)``: the count is
    :func:`tenferro.linalg.truncation_rank` (the project's one truncation rule: at most
    ``max_bond``, a dropped tail of discarded weight at most ``cutoff``), never more than the
    nonzero values. The weights are taken relative to the largest value first, so singular
    values near the ends of the float range (1e-200, 1e200) neither underflow nor overflow."""
    s = to_host(s)
    top = float(np.max(s)) if len(s) else 0.0
    if not top > 0.0:
        return 1, 0.0
    keep = tf.linalg.truncation_rank(s, max_bond, cutoff if cutoff > 0.0 else None)
    keep = max(1, min(keep, int(np.count_nonzero(s > 0.0))))
    r = s / top
    s2 = r * r
    return keep, float(s2[keep:].sum() / s2.sum())


def thin_svd(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``U, S, Vh`` of the thin SVD (LAPACK gesdd, falling back to gesvd when it fails; cuSOLVER's
    gesvd on a GPU)."""
    if is_device_array(m):
        return array_module(m).linalg.svd(m, full_matrices=False)
    try:
        return scipy.linalg.svd(m, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return scipy.linalg.svd(m, full_matrices=False, lapack_driver="gesvd", check_finite=False)


def svd_truncated(
    m: np.ndarray, max_bond: int | None = None, cutoff: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Truncated SVD ``m ~ U diag(S) Vh`` (LAPACK gesdd, falling back to gesvd).

    Keeps at most ``max_bond`` singular values and drops the smallest ones while their
    squared sum, relative to the total, stays at most ``cutoff`` (ITensor's
    truncation-error convention). Returns ``(U, S, Vh, discarded_weight)`` where the
    discarded weight is relative (``sum(dropped s^2) / sum(s^2)``). At least one
    singular value is kept.
    """
    u, s, vh = thin_svd(m)
    keep, discarded = truncation_keep(s, max_bond, cutoff)
    return u[:, :keep], s[:keep], vh[:keep], discarded


def svd_truncated_sectors(
    blocks: dict[Any, np.ndarray], max_bond: int | None, cutoff: float, svd: Callable[[Any], tuple] | None = None
) -> tuple[dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray]], float]:
    """One thin SVD per sector (the blocks of a block-diagonal matrix; ``svd``: the
    decomposition, default :func:`thin_svd`) and one truncation across all of them:
    :func:`truncation_keep` on the merged singular values, ties kept in sector order. Returns
    the kept ``(U, S, Vh)`` of every sector that keeps any, and the relative discarded weight."""
    svds = {q: (svd or thin_svd)(b) for q, b in blocks.items()}
    counts, err = sector_keep({q: to_host(svd[1]) for q, svd in svds.items()}, max_bond, cutoff)
    kept = {}
    for q, n in counts.items():
        if n:
            u, s, vh = svds[q]
            kept[q] = (u[:, :n], s[:n], vh[:n])
    return kept, err


def sector_keep(values: dict[Any, np.ndarray], max_bond: int | None, cutoff: float) -> tuple[dict[Any, int], float]:
    """The one truncation across charge sectors: how many of its descending singular values
    each sector keeps (every key, 0 for a sector that keeps none) under :func:`truncation_keep`
    of the merged values (ties kept in sector order), and the relative discarded weight. Every
    block-sparse split calls it: the sweeps' sector backend, the symmetric MPS compression and
    TEBD's bond updates."""
    charges = list(values)
    if not charges:
        return {}, 0.0
    host = [to_host(v) for v in values.values()]
    fused = _keep_merged(host, max_bond, cutoff)
    if fused is not None:
        return dict(zip(charges, fused[0])), fused[1]
    err = 0.0

    def rank(merged: np.ndarray) -> int:
        nonlocal err
        keep, err = truncation_keep(merged, max_bond, cutoff)
        return keep

    counts = rank_across_sectors(host, rank)
    return dict(zip(charges, counts)), err


def resolved_values(values: dict[Any, np.ndarray], rows: int, cols: int) -> dict[Any, np.ndarray]:
    """The singular values of the sectors of one ``rows x cols`` matrix with those below the SVD's
    resolution set to 0, so that :func:`sector_keep` drops them: ``s <= s_max max(rows, cols) eps``
    with ``s_max`` over all sectors (``numpy.linalg.matrix_rank``'s tolerance). A differentiated
    split needs it: the SVD's derivative rule tells numerically zero values by the largest value of
    its own matrix, and a sector whose values are all rounding (1e-16 to 1e-100 of the whole) would
    divide by their differences (a second derivative through a purification's TEBD: 1e53)."""
    top = max((float(np.max(v)) for v in values.values() if np.size(v)), default=0.0)
    eps = max((np.finfo(np.asarray(v).dtype).eps for v in values.values() if np.size(v)), default=0.0)
    tol = top * max(rows, cols) * eps
    return {k: np.where(np.asarray(v) > tol, v, 0.0) for k, v in values.items()}


def _keep_merged(values: list[np.ndarray], max_bond: int | None, cutoff: float) -> tuple[list[int], float] | None:
    """:func:`sector_keep` of host values in one pass: the merged values sorted once (ties in sector
    order, as :func:`~tensor4all.structured.ranking.rank_across_sectors`), and the count and
    discarded weight of :func:`truncation_keep` computed on them with the same arithmetic
    (``tenferro.linalg.truncation_rank``'s rule: at most ``max_bond``, the dropped tail's weight
    ``tail[k] = sum(w[k:]) / sum(w)`` at most ``cutoff``, ``w = (s / s_max)^2``; never more than
    the nonzero values), so counts and weight are those of the two functions bit for bit
    (``tests/tensor4all/test_sector_flat.py``). A split of a small chain costs its number of
    NumPy calls, and this takes a third of theirs. None where the arguments are not plain (no
    values, a NaN, no positive value, an invalid ``max_bond`` or ``cutoff``): the caller's
    general path answers (or raises) there."""
    if max_bond is not None and (
        isinstance(max_bond, (bool, np.bool_)) or not isinstance(max_bond, (int, np.integer)) or max_bond < 1
    ):
        return None
    if not 0.0 <= cutoff < 1.0:
        return None
    lengths = tuple(len(v) for v in values)
    merged = np.concatenate(values).astype(float, copy=False)
    size = merged.size
    if not size:
        return None
    order = np.argsort(-merged, kind="stable")
    s = merged[order]
    top = float(s[0])
    if not top > 0.0 or s[-1] != s[-1]:  # NaNs sort last
        return None
    r = s / top
    w = r * r
    total = w.sum()
    n = size if max_bond is None else min(size, int(max_bond))
    if cutoff > 0.0 and n > 1:
        # the first k with tail[k] <= cutoff; past the last value the tail is 0, always within
        within = np.cumsum(w[::-1])[::-1] / total <= cutoff
        first = int(within.argmax())
        n = min(n, max(1, first if within[first] else size))
    positive = size if float(s[-1]) > 0.0 else int(np.count_nonzero(s > 0.0))  # s descends: s[-1] is the least
    keep = max(1, min(n, positive))
    owner = _owners(lengths)
    counts = np.bincount(owner[order[:keep]], minlength=len(values)).tolist()
    return counts, float(w[keep:].sum() / total)


_OWNERS: dict[tuple[int, ...], Any] = {}  # sector lengths -> the sector of each merged value


def _owners(lengths: tuple[int, ...]) -> Any:
    owner = _OWNERS.get(lengths)
    if owner is None:
        if len(_OWNERS) >= 4096:
            _OWNERS.clear()
        owner = _OWNERS[lengths] = np.repeat(np.arange(len(lengths)), lengths)
    return owner


def absorb(u: np.ndarray, s: np.ndarray, vh: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """The factors ``(left, right)`` of ``u diag(s) vh`` with the weights moved with the centre:
    into ``vh`` toward ``"right"`` (``left = u`` orthonormal), into ``u`` toward ``"left"``."""
    return (u, s[:, None] * vh) if direction == "right" else (u * s, vh)


PROJECTED_MIN = 1.5e-8
"""The smallest kept singular value, relative to the largest, whose degenerate block
:func:`weighted_factors` projects: ``sqrt(eps)``, so that the projection's rounding, ``eps /
(s / s_max)`` relative, stays below ``sqrt(eps)``. Smaller values weigh at most ``eps`` of the
state; their blocks keep the SVD rule's terms (with ``cutoff=0`` the kept values reach 1e-15: the
projection's rounding there moved a second derivative of ``ln Z`` by 2e-7)."""


def weighted_factors(
    m: Any, u: Any, s: Any, vh: Any, direction: str, values: np.ndarray | None = None
) -> tuple[Any, Any]:
    """The factors ``(left, right)`` of a differentiated split of the matrix ``m`` with its kept
    singular triplets ``u, s, vh``, the weights moved with the centre as :func:`absorb` moves
    them: ``(u, s vh)`` toward ``"right"``, ``(u s, vh)`` toward ``"left"``; except that the rows
    (columns) of a degenerate block of kept values are the projection of ``m`` onto the block's
    vectors, ``u_D^H m`` (``m vh_D^H``), the same to rounding (:func:`projected_factors`).
    ``values``: the concrete kept singular values (the primal values of a traced ``s``). Complex
    singular vectors are first put in one phase convention (:func:`fixed_phases`).

    Inside a degenerate block the SVD's rule cannot give the rotation of the vectors (``1 / (s_j -
    s_i)``, docs/ad/gauge.md) and drops it, which the product ``u_D diag(s_D) vh_D`` needs (its
    limit there is finite; at a singlet pair under a field that splits it, TEBD's gradient was
    0.8% off) and the projection ``u_D u_D^H m`` does not (a rotation within the block leaves
    ``u_D u_D^H`` as it is); the pairs outside such blocks keep the rule's exact terms. Blocks
    are tenferro's (``tenferro.linalg.config.degeneracy_rtol``). Only those rows are projected:
    a projected row's derivative carries the rounding ``eps ||m|| / s_i`` (``d(u_i^H) m``,
    ``d u_i ~ 1 / s_i``), which kept values down to 1e-10 make visible (2.7e-8 in a specific
    heat, against 1e-9 absorbed)."""
    u, vh = fixed_phases(u, vh)  # a complex split a function of m alone: no phase gauge in its cotangents
    mask = None
    if values is not None and len(values) > 1:
        v = np.asarray(values, dtype=float)
        top = float(np.max(v))
        close = np.abs(np.diff(v)) <= tf.linalg.config.degeneracy_rtol * top
        close &= v[1:] >= PROJECTED_MIN * top  # descending: both values of the pair above the floor
        if close.any():
            mask = np.zeros(len(v), dtype=bool)
            mask[:-1] |= close
            mask[1:] |= close
    k = tuple(s.shape)[0]
    if isinstance(u, np.ndarray) and isinstance(s, np.ndarray) and isinstance(vh, np.ndarray):
        left, right = absorb(u, s, vh, direction)
    elif direction == "right":
        left, right = u, vh * tf.reshape(s, (k, 1))
    else:
        left, right = u * tf.reshape(s, (1, k)), vh
    if mask is None:
        return left, right
    pl, pr = projected_factors(m, u, vh, direction)
    keep = (~mask).astype(float)
    if direction == "right":
        shape = (k, 1)
        return left, right * keep.reshape(shape) + pr * mask.astype(float).reshape(shape)
    shape = (1, k)
    return left * keep.reshape(shape) + pl * mask.astype(float).reshape(shape), right


def orthonormal_factors(m: Any, direction: str) -> tuple[Any, Any]:
    """The differentiable orthonormalization of a chain's site matrix ``m`` (tenferro tensors, tidu
    tracers): toward ``"right"`` ``(Q, R)`` with orthonormal columns ``Q`` (QR), toward ``"left"``
    ``(L, Q)`` with orthonormal rows (LQ). Where ``m`` is rank-deficient (a pivot of the QR at most
    ``max(shape) eps`` of its column, the QR rule's test) the trailing factors of a QR have no
    derivative (tenferro raises in reverse mode, gives NaN in forward mode: docs/ad/qr.md), and
    the sum of two chains (``add``) or ``W|psi>`` with an uncompressed MPO is rank-deficient as a
    rule: there the factors come from the SVD, its values below the SVD's resolution dropped
    (:func:`resolved_values`, the bond shrinks to the rank) and the weights absorbed by
    :func:`weighted_factors`, whose derivative exists. Abstract values (``tenferro.jit``) keep the
    QR."""
    right = direction == "right"
    q, r = tf.linalg.qr(m) if right else tf.linalg.lq(m)
    mc, fc = concrete(m), concrete(r if right else q)
    if mc is None or fc is None or 0 in tuple(m.shape):
        return q, r
    a = np.asarray(mc) if right else np.asarray(mc).T
    f = np.asarray(fc) if right else np.asarray(fc).T  # the R of the QR of a (m, or m^T: L^T)
    k = min(f.shape)
    pivots = np.abs(np.diagonal(f)[:k])
    cols = np.sqrt(np.sum(np.abs(a[:, :k]) ** 2, axis=0))
    if not (pivots <= max(a.shape) * np.finfo(a.dtype).eps * cols).any():
        return q, r
    u, s, vh = tf.linalg.svd(m)
    values = np.asarray(concrete(s))
    rank = max(1, int(np.count_nonzero(resolved_values({0: values}, *tuple(m.shape))[0])))
    u, s, vh = u[:, :rank], s[:rank], vh[:rank, :]
    return weighted_factors(m, u, s, vh, direction, values[:rank])


def fixed_phases(u: Any, vh: Any) -> tuple[Any, Any]:
    """The kept singular vectors of a differentiated complex split in a fixed phase convention:
    column ``j`` of ``u`` times ``conj(z_j) / |z_j|`` and row ``j`` of ``vh`` times its conjugate,
    ``z_j`` the entry of largest modulus of ``u[:, j]`` (its row chosen from the concrete values, a
    constant of the derivative). The product ``u diag(s) vh`` is unchanged, and the split becomes
    a function of the matrix alone: the cotangents reaching the SVD have no part along its phase
    gauge, to rounding relative to themselves. Without it the two factors feed the rest of a run
    separately, and tenferro's gauge check warned where the gauge is compensated elsewhere (a
    variational fit, whose next local tensor is computed from ``conj(u)``; relative sizes 0.5 to
    1.4 with a correct gradient) or where the loss does not depend on a split at all (a pair in a
    one-dimensional charge sector of TEBD: its cotangents are rounding noise whose phase part is
    as large as the rest). Real, abstract or empty ``u`` come back as they are."""
    x = concrete(u)
    if x is None or not tidu.aval_of(u).dtype.is_complex or 0 in tuple(u.shape):
        return u, vh
    x = np.asarray(x)
    m, k = x.shape
    # the entry of largest modulus of each column, flat column-major indices (tenferro's order)
    phase = tf.sign(tf.take(u, np.argmax(np.abs(x), axis=0) + m * np.arange(k)))
    return u * tf.reshape(tf.conj(phase), (1, k)), vh * tf.reshape(phase, (k, 1))


def projected_factors(m: Any, u: Any, vh: Any, direction: str) -> tuple[Any, Any]:
    """``(u, u^H m)`` toward ``"right"``, ``(m vh^H, vh)`` toward ``"left"``: a split's factors as
    the projection of ``m`` onto the kept vectors of its orthonormal side (for the SVD's own
    vectors :func:`absorb`'s factors, to rounding; the state they make, ``u u^H m``, a function of
    the kept subspace alone: see :func:`weighted_factors`). tenferro tensors and tidu tracers, or
    NumPy arrays."""
    if isinstance(m, np.ndarray) and isinstance(u, np.ndarray) and isinstance(vh, np.ndarray):
        return (u, u.conj().T @ m) if direction == "right" else (m @ vh.conj().T, vh)
    if direction == "right":
        return u, tf.einsum("mk,mn->kn", tf.conj(u), m)
    return tf.einsum("mn,kn->mk", m, tf.conj(vh)), vh


def split(m: np.ndarray, direction: str, max_bond: int | None, cutoff: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``m ~ left @ right`` by the truncated SVD, the factor on the side the centre leaves
    orthonormal (:func:`absorb`); and the relative discarded weight. On a GPU by the
    eigenvectors of the Gram matrix of the side the centre leaves (see the module)."""
    if is_device_array(m):
        # the Gram matrix of the side the centre leaves has max(m.shape) eigenvalues but rank at
        # most min(m.shape): the rest are rounding noise, never kept (the thin SVD has no more)
        rank = min(m.shape)
        return split_perturbed(m, None, direction, 0.0, rank if max_bond is None else min(max_bond, rank), cutoff)
    u, s, vh, err = svd_truncated(m, max_bond, cutoff)
    left, right = absorb(u, s, vh, direction)
    return left, right, err


def split_perturbed(
    m: np.ndarray, p: np.ndarray | None, direction: str, alpha: float, max_bond: int | None, cutoff: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """``m ~ left @ right`` with the basis on the side the centre leaves taken from White's
    perturbed density matrix (:func:`perturbed_basis`; S. R. White, Phys. Rev. B 72, 180403(R)
    (2005)) and the other factor the exact projection of ``m`` onto it.

    ``p`` is the expansion term sharing that side's index with ``m``: ``(rows, k)`` toward
    ``"right"``, ``(k, cols)`` toward ``"left"``: the basis of the left factor is that of
    ``m`` and ``p``, the basis of the right factor that of ``m^T`` and ``p^T``."""
    if direction == "right":
        basis, err = perturbed_basis(m, p, alpha, max_bond, cutoff)
        return basis, basis.conj().T @ m, err
    basis, err = perturbed_basis(m.T, None if p is None else p.T, alpha, max_bond, cutoff)
    return m @ basis.conj(), basis.T, err


def perturbed_basis(
    m: np.ndarray, p: np.ndarray | None, alpha: float, max_bond: int | None, cutoff: float
) -> tuple[np.ndarray, float]:
    """Orthonormal columns ``U`` spanning the dominant eigenvectors of the perturbed density
    matrix ``m m^dagger + alpha^2 p p^dagger`` (White 2005), truncated as the SVD would be
    (``max_bond``, relative discarded weight ``cutoff``), and the discarded weight.

    ``p`` is first scaled to the norm of ``m``: the size of the expansion term depends on the
    gauge and scale of the MPO (a rescaled automaton MPO carries large identity strings), so
    ``alpha`` is its relative size. The same basis as the SVD of ``[m, alpha p]`` (C. Hubig,
    I. P. McCulloch, U. Schollwoeck and F. A. Wolf, Phys. Rev. B 91, 155115 (2015)), from one
    GEMM and a Hermitian eigensolver of the small side: several times cheaper than an SVD of
    the wide matrix. Its eigenvalues are squared singular values, accurate to ~1e-16 of the
    largest, which is enough to choose a basis; the state itself is projected exactly."""
    rho = m @ m.conj().T
    top = float(np.max(np.abs(p))) if p is not None and p.size and alpha > 0.0 else 0.0
    if top > 0.0 and np.isfinite(top):
        p = p / top
        rho += ((alpha * np.linalg.norm(m) / np.linalg.norm(p)) ** 2) * (p @ p.conj().T)
    w, u = np.linalg.eigh(rho)
    w, u = w[::-1], u[:, ::-1]
    keep, err = truncation_keep(np.sqrt(np.clip(to_host(w), 0.0, None)), max_bond, cutoff)
    return contiguous(u[:, :keep]), err
