"""MPO application ``W|psi>`` as an MPS: :func:`apply`, by zip-up, variational fitting or the
exact product followed by compression.

* ``"zipup"`` (E. M. Stoudenmire and S. R. White, New J. Phys. 12, 055026 (2010)): ``psi`` is
  brought to right-canonical form, then ``W`` and ``psi`` are contracted site by site from the
  left, each new site split off by a truncated SVD and the weights carried to the next site;
  the result, left-orthonormal, is finally truncated right to left with ``max_bond`` and
  ``cutoff``. The part right of a zip-up split is not orthonormal, so those truncations are
  not optimal and are kept loose: relative discarded weight ``cutoff / 10`` and bond
  ``2 * max_bond`` (with ``max_bond`` itself the error of Heisenberg and random MPOs was 3 to
  20 times the optimal one; with ``2 * max_bond`` within 10% of it, at about twice the cost).
  Cost ``O(d D^2 chi^3)`` per site for MPO bond ``D``, MPS bond ``chi``.
* ``"fit"`` (variational fitting: F. Verstraete, J. J. Garcia-Ripoll and J. I. Cirac, Phys. Rev.
  Lett. 93, 207204 (2004); U. Schollwoeck, Ann. Phys. 326, 96 (2011), Sec. 4.5.2): minimises
  ``|| |phi> - W|psi> ||`` by two-site sweeps: with ``phi`` orthonormal around the pair, the
  optimal pair tensor is ``W|psi>`` projected onto the environments of ``phi``, split by the
  truncated SVD (``max_bond``, ``cutoff``), which also adapts the bond dimensions and charge
  sectors. It starts from a random MPS (``seed``) of bond ``min(max_bond, max_b chi_b D_b)``
  and sweeps until ``<phi|W psi>`` changes by less than ``tol`` (relative) over a sweep, at most
  ``sweeps`` times (usually two). A sweep costs ``O(d^3 chi^3 + D d^2 chi^3)`` per site and no
  step handles the ``chi D`` bond of the product, so it is the cheaper method for MPOs of large
  bond ``D``; for small ``D`` zip-up is faster. Being optimal bond by bond, its result is mostly
  as close as zip-up's or closer (the tests check cases of it), but a variational sweep from a
  random start can stop in a local minimum: a split of a bond among charge sectors that two-site
  updates do not leave (a survey of 72 small cases, ``max_bond`` 2 to 4: 2 of 36 with parity
  ended 7% and 9% worse than zip-up, none of 36 with U(1); a start of twice the bond fixed those
  and made two U(1) cases worse). Where the error matters, compare with zip-up. The
  environments of ``<phi|W|psi>`` are
  the one environment object, :class:`~tensor4all.networks.environments.EnvCache` (left blocks
  ``(phi, W, psi)``, right blocks ``(W, psi, phi)``), moved with the centre by the sweep
  schedule of DMRG (:func:`~.schedule.sweep_schedule`, :meth:`EnvCache.moved`) and updated by
  the differentiable :func:`~tensor4all.networks.environments.transfer_left` and
  :func:`~tensor4all.networks.environments.transfer_right` that measurements use too.
* ``"naive"``: the exact product (bond dimensions multiply), then QR and the SVD compression.

The result is ``W|psi>`` itself, not normalized. All three are written once over the array
operations of :mod:`._site_ops` (tenferro's einsum, SVD and QR, per sector for symmetric
tensors), so ``tidu.grad`` and ``tidu.jvp`` go through them in the MPO and the MPS tensors.

A symmetric MPS and an MPO that conserves its charge (``MPO.from_opsum(..., conserve="Sz")``,
``models.heisenberg(L, conserve="Sz")``; the charge is read from the tensors) give a
symmetric MPS in the same sector, computed on the blocks. When the MPO does not conserve the
charge, or its tensors are traced (the sectors are read from concrete values), the product is
computed on ``psi.dense()`` and the result is dense (as :func:`~tensor4all.expectation` does).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import tenferro as tf

from ..networks.chain import leaves_of
from ..networks.environments import EnvCache, block_bytes, transfer_left, transfer_right
from ..tools.keywords import keyword_hints
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..networks.mpo import MPO, check_compatible, mpo_on_sectors
from ..networks.mps import MPS
from .schedule import RIGHT, sweep_schedule
from ..networks.site_ops import canonical_dense, compress_sweep, ops_for, rescaled, truncate_sweep, unit_scaled
from ..networks.symmetric_sites import canonical_sites, is_symmetric, random_sites
from ..tools.checks import check_cutoff, check_positive_int, check_real, check_seed, concrete, np_dtype
from ..tools.threads import blas_threads, bond_of, check_threads

__all__ = ["apply", "METHODS"]

#: the methods of :func:`apply`
METHODS = ("zipup", "fit", "naive")


@keyword_hints
def apply(
    mpo: MPO,
    mps: MPS,
    *,
    max_bond: int | None = None,
    cutoff: float = 1e-12,
    method: str = "zipup",
    sweeps: int = 4,
    tol: float = 1e-10,
    seed: int | None = 0,
    threads: int | None = None,
) -> MPS:
    """``W|psi>`` (unnormalized) as an MPS of bond dimension at most ``max_bond`` (None: no
    limit), dropping per bond a relative discarded weight of at most ``cutoff``.

    ``method``: ``"zipup"`` (default), ``"fit"`` (variational; ``sweeps``, ``tol`` and ``seed``
    of its random start apply to it only) or ``"naive"``; see :mod:`tensor4all.algorithms.apply`.
    ``threads``: BLAS threads, as for :func:`tensor4all.dmrg` (default: one thread while the
    product of the state's and the MPO's largest bond dimensions is below 512).
    Differentiable in the MPO and MPS tensors (``tidu.grad``, ``tidu.jvp``). A symmetric MPS
    and a charge-conserving MPO give a symmetric MPS in the same sector; a symmetric MPS and
    an MPO that does not conserve its charge give a dense MPS (of ``psi.dense()``).

    >>> import tensor4all as t4a
    >>> psi = t4a.MPS.random(6, bond_dim=4, seed=1)
    >>> phi = t4a.apply(t4a.models.heisenberg(6), psi, max_bond=20)
    >>> phi.bond_dims
    [2, 4, 8, 4, 2]
    """
    if not isinstance(mpo, MPO):
        hint = " (the MPO comes first: apply(mpo, mps))" if isinstance(mpo, MPS) else ""
        raise Tensor4allTypeError(f"apply: expected an MPO as the first argument, got {type(mpo).__name__}{hint}")
    if not isinstance(mps, MPS):
        hint = " (pass its .state)" if isinstance(getattr(mps, "state", None), MPS) else ""
        raise Tensor4allTypeError(f"apply: expected an MPS as the second argument, got {type(mps).__name__}{hint}")
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidOptionError(f"apply: unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    if max_bond is not None:
        max_bond = check_positive_int(max_bond, "apply: max_bond")
    cutoff = check_cutoff(cutoff, "apply: cutoff")
    sweeps = check_positive_int(sweeps, "apply: sweeps", InvalidOptionError)
    tol = check_real(tol, "apply: tol", low=0.0)
    seed = check_seed(seed, "apply: seed")
    threads = check_threads(threads)
    check_compatible(mps, mpo)
    with blas_threads(threads, bond_of(mps) * bond_of(mpo)):  # the zip-up's SVDs are of chi D columns
        return _apply(mpo, mps, max_bond, cutoff, method, sweeps, tol, seed)


def _apply(
    mpo: MPO, mps: MPS, max_bond: int | None, cutoff: float, method: str, sweeps: int, tol: float, seed: int | None
) -> MPS:
    ws, psi = mpo.tensors, mps
    if mps.symmetric:
        ws = mpo_on_sectors(mpo, mps.tensors)
        if ws is None:
            ws, psi = mpo.tensors, mps.dense()
    grading = psi._grading if psi.symmetric else None
    ts, e = unit_scaled(psi.tensors)  # exact powers of two, as MPS.compress: W|psi> is 2**e W|ts>
    if method == "naive" or psi.L == 1:
        sites = _naive(ws, ts, max_bond, cutoff)
    elif method == "zipup":
        sites = _zipup(ws, _right_canonical(ts), max_bond, cutoff)
    else:
        start = _random_start(psi, mpo, max_bond, seed)
        sites = _fit(ws, ts, start, max_bond, cutoff, sweeps, tol)
    return MPS._from_leaves(rescaled(sites, e), grading)


def _right_canonical(ts: Sequence[Any]) -> list[Any]:
    """The (already unit-scaled) sites ``ts`` in right-canonical form (differentiable QR)."""
    return canonical_sites(ts, 0) if is_symmetric(ts) else canonical_dense(ts, 0)


def _naive(ws: Sequence[Any], ts: Sequence[Any], max_bond: int | None, cutoff: float) -> list[Any]:
    ops = ops_for(ts)
    sites = [ops.product_site(w, a) for w, a in zip(ws, ts)]
    if len(sites) == 1:
        return sites
    return compress_sweep(sites, max_bond, cutoff)[0]


def _zipup(ws: Sequence[Any], ts: Sequence[Any], max_bond: int | None, cutoff: float) -> list[Any]:
    """Zip-up of ``W`` with the right-canonical sites ``ts``, then the final compression."""
    ops = ops_for(ts)
    inner = None if max_bond is None else 2 * max_bond
    out: list[Any] = []
    carry = None  # (new bond, MPO bond, MPS bond): what the sites split off so far leave
    for w, a in zip(ws[:-1], ts[:-1]):
        t = ops.einsum("wstx,atc->asxc", w, a) if carry is None else ops.einsum("kwa,wstx,atc->ksxc", carry, w, a)
        u, carry, _ = ops.split(t, 2, inner, cutoff / 10, RIGHT)
        out.append(u)
    out.append(ops.einsum("kwa,wstx,atc->ksc", carry, ws[-1], ts[-1]))
    return truncate_sweep(out, max_bond, cutoff)[0]


# ---- variational fitting ------------------------------------------------------------------
def _pair(ops: Any, left: Any, right: Any, w1: Any, w2: Any, a1: Any, a2: Any) -> Any:
    """``W|psi>`` on sites ``(i, i + 1)`` projected onto the environments of ``phi`` (left block
    ``(phi, W, psi)``, right block ``(W, psi, phi)``; None at an edge): legs ``(phi left bond,
    s_i, s_{i+1}, phi right bond)``; at a chain end, the bond of ``psi``."""
    specs = ["btc", "wsty", "cvd", "yuvz"]
    operands = [a1, w1, a2, w2]
    lo, hi = "b", "d"
    if left is not None:
        specs.insert(0, "awb")
        operands.insert(0, left)
        lo = "a"
    if right is not None:
        specs.append("zde")
        operands.append(right)
        hi = "e"
    return ops.einsum(",".join(specs) + f"->{lo}su{hi}", *operands)


def _norm2(x: Any) -> float:
    """``||x||^2`` of a concrete (or JVP-traced) site tensor, dense or symmetric."""
    return sum(float(np.sum(np.abs(np.asarray(concrete(b))) ** 2)) for b in leaves_of([x]))


def _fit(
    ws: Sequence[Any],
    ts: Sequence[Any],
    start: Sequence[Any],
    max_bond: int | None,
    cutoff: float,
    sweeps: int,
    tol: float,
) -> list[Any]:
    """Two-site variational fitting from the right-canonical ``start``."""
    ops = ops_for(ts)
    L = len(ts)
    phi = list(start)
    envs: EnvCache = EnvCache(L, None, None, block_bytes)  # <phi|W|psi>, centre at site 0
    for i in range(L - 1, 1, -1):
        envs.set_right(i, transfer_right(envs.right(i + 1), phi[i], ts[i], ws[i]))
    previous = None
    for _ in range(sweeps):
        for step in sweep_schedule(L, True):
            i = step.site
            theta = _pair(ops, envs.left(i), envs.right(i + 2), ws[i], ws[i + 1], ts[i], ts[i + 1])
            phi[i], phi[i + 1], _ = ops.split(theta, 2, max_bond, cutoff, step.direction)
            if step.direction == RIGHT:
                block = transfer_left(envs.left(i), phi[i], ts[i], ws[i])
            else:
                block = transfer_right(envs.right(i + 2), phi[i + 1], ts[i + 1], ws[i + 1])
            envs.moved(step.direction, step.bond, block)
        overlap = _norm2(phi[0])  # = <phi|W psi> = <phi|phi>: the centre is site 0, the rest orthonormal
        if previous is not None and abs(overlap - previous) <= tol * abs(overlap):
            break
        previous = overlap
    return phi


def _random_start(psi: MPS, mpo: MPO, max_bond: int | None, seed: int | None) -> list[Any]:
    """A random right-canonical MPS in the sector of ``psi`` with the dtype of ``W|psi>``, of bond
    ``min(max_bond, max_b chi_b D_b)`` (each bond also at most what its ends can hold)."""
    bound = max((c * D for c, D in zip(psi.bond_dims, mpo.bond_dims)), default=1)
    bond = bound if max_bond is None else min(bound, max_bond)
    dtype = np_dtype(tf.result_type(psi.dtype, mpo.dtype))
    rng = np.random.default_rng(seed)
    if psi.symmetric:
        sites = random_sites([t.legs[1] for t in psi.tensors], psi._group_charge, bond, rng, dtype)
        return MPS._from_leaves(sites, psi._grading).canonicalize(0).tensors
    d = psi.phys_dims
    dims = [1] + [min(bond, math.prod(d[:b]), math.prod(d[b:])) for b in range(1, psi.L)] + [1]
    sites = []
    for i in range(psi.L):
        shape = (dims[i], d[i], dims[i + 1])
        x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype.kind == "c" else 0.0)
        sites.append(tf.asarray(np.asfortranarray(x.astype(dtype))))
    return MPS(sites).canonicalize(0).tensors
