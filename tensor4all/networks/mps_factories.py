"""The site tensors of the states :class:`~tensor4all.MPS` builds: ``MPS.random`` (Gaussian
entries, right-canonicalized; or random blocks of one charge sector), ``MPS.product_state``
(basis states or local vectors; symmetric for basis states with ``conserve=``) and
``MPS.from_dense`` (successive truncated SVDs of a dense vector). Each function checks its
arguments and returns the sites (with the grading of a symmetric state, ``None`` for a
dense one); the classmethods of :class:`~tensor4all.MPS` wrap them."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..linalg.canonical import right_canonical
from ..linalg.truncation import svd_truncated
from ..sites.local_spaces import local_space
from ..structured import linalg as structured_linalg
from ..tools.checks import (
    check_alloc,
    check_cutoff,
    check_positive_int,
    check_seed,
    float_dtype,
    numeric_array,
    to_numpy,
)
from ..tools.errors import DimensionMismatchError, NonFiniteError, Tensor4allTypeError
from .chain import local_vectors
from .symmetric_sites import (
    Grading,
    canonical_sites,
    chain_grading,
    phys_leg,
    product_sites,
    random_sites,
    sector_charge,
)

__all__ = ["random_state_sites", "product_state_sites", "dense_vector_sites", "random_state_bond", "dense_vector_bond"]


def site_dimension(d: int | None, local: str | None, what: str) -> int:
    """The physical dimension of a state's sites: ``d``, by default that of the local space
    ``local`` (``"spin-1"``: 3, ``"electron"``: 4), else 2; a ``d`` that contradicts ``local``
    raises :class:`DimensionMismatchError`."""
    if local is not None:
        space = local_space(local)
        if d is None:
            return space.dim
        if check_positive_int(d, "d (physical dimension)") != space.dim:
            raise DimensionMismatchError(
                f"{what}: d={d}, but the local space {space.name!r} has dimension {space.dim}; drop d= (local= sets it)"
            )
    return check_positive_int(2 if d is None else d, "d (physical dimension)")


def random_state_sites(
    L: int,
    d: int | None,
    bond_dim: int,
    seed: int | None,
    dtype: Any,
    conserve: str | None,
    charge: Any,
    local: str | None,
) -> tuple[list[Any], Grading | None]:
    """The sites of ``MPS.random`` (normalized; see there)."""
    L = check_positive_int(L, "L (number of sites)")
    d = site_dimension(d, local, "MPS.random")
    bond_dim = check_positive_int(bond_dim, "bond_dim")
    seed = check_seed(seed, "MPS.random: seed")
    dt = float_dtype(dtype, "MPS.random: dtype")
    if conserve is not None or charge is not None:
        g = chain_grading(conserve, local, [d] * L, "MPS.random", charge)
        legs = [phys_leg(g.symmetry, q, i)[0] for i, q in enumerate(g.q)]
        target = sector_charge(g, charge, legs, "MPS.random")
        check_alloc(L * bond_dim * d * bond_dim * dt.itemsize * 2, f"MPS.random(L={L}, d={d}, bond_dim={bond_dim})")
        sites = random_sites(legs, target, bond_dim, np.random.default_rng(seed), dt)
        # right-canonical site by site, the norm brought back to 1 at each step (as right_canonical
        # does): swept at once, it piled up in site 0 and left the float range (700 sites: NaN)
        for i in range(L - 1, 0, -1):
            sites[i - 1], sites[i] = canonical_sites(sites[i - 1 : i + 1], 0)
            n = float(np.asarray(structured_linalg.norm(sites[i - 1])))
            sites[i - 1] = sites[i - 1] / n if n > 0 else sites[i - 1]
        if L == 1:
            sites[0] = sites[0] / structured_linalg.norm(sites[0])
        return sites, g
    dims = [1] + [min(bond_dim, d ** min(b + 1, L - b - 1, 60)) for b in range(L - 1)] + [1]
    check_alloc(
        sum(dims[i] * d * dims[i + 1] for i in range(L)) * dt.itemsize * 2,
        f"MPS.random(L={L}, d={d}, bond_dim={bond_dim})",
    )
    rng = np.random.default_rng(seed)
    ts = []
    for i in range(L):
        shape = (dims[i], d, dims[i + 1])
        a = rng.standard_normal(shape)
        if np.issubdtype(dt, np.complexfloating):
            a = a + 1j * rng.standard_normal(shape)
        ts.append((a / math.sqrt(d * dims[i + 1])).astype(dt))  # as the symmetric sites above
    ts = right_canonical(ts)
    return ts, None


def product_state_sites(
    states: Sequence[Any], d: int | None, conserve: str | None, local: str | None
) -> tuple[list[Any], Grading | None]:
    """The sites of ``MPS.product_state`` (see there)."""
    d = site_dimension(d, local, "product_state")
    vecs = local_vectors(states, d)
    dt = np.result_type(*vecs, np.float64)
    if conserve is not None:
        bad = next((i for i, s in enumerate(states) if not isinstance(s, (int, np.integer))), None)
        if bad is not None:
            raise Tensor4allTypeError(
                f"product_state(conserve={conserve!r}): site {bad} must be a basis index "
                "(a local vector has no definite charge)"
            )
        g = chain_grading(conserve, local, [d] * len(states), "MPS.product_state")
        return product_sites([int(s) for s in states], g, dt), g
    return [v.astype(dt).reshape(1, d, 1) for v in vecs], None


def dense_vector_sites(vector: Any, L: int, d: int, max_bond: int | None, cutoff: float) -> list[np.ndarray]:
    """The sites of ``MPS.from_dense`` (see there)."""
    L = check_positive_int(L, "L (number of sites)")
    d = check_positive_int(d, "d (physical dimension)")
    if max_bond is not None:
        max_bond = check_positive_int(max_bond, "max_bond")
    cutoff = check_cutoff(cutoff, "from_dense: cutoff")
    v = numeric_array(to_numpy(vector, "MPS.from_dense"), "from_dense: vector").reshape(-1)
    if L * math.log2(d) > 64 or v.size != d**L:  # d**L of a huge L: a number of thousands of digits
        needed = f"{d**L}" if L * math.log2(d) <= 64 else f"about 10**{L * math.log10(d):.0f}"
        raise DimensionMismatchError(f"from_dense: vector has {v.size} entries, expected d**L = {d}**{L} = {needed}")
    if not np.isfinite(v).all():
        raise NonFiniteError(f"from_dense: the vector holds NaN or infinity (entry {int(np.argmin(np.isfinite(v)))})")
    ts = []
    rest = v.reshape(1, -1)
    left = 1
    for _ in range(L - 1):
        m = rest.reshape(left * d, -1)
        u, s, vh, _ = svd_truncated(m, max_bond, cutoff)
        k = len(s)
        ts.append(u.reshape(left, d, k))
        rest = s[:, None] * vh
        left = k
    ts.append(rest.reshape(left, d, 1))
    return ts


def _positive(x: Any) -> int:
    """``x`` where it is a positive integer, else 0 (a size function sees the unchecked arguments)."""
    return int(x) if isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x > 0 else 0


def random_state_bond(
    cls: Any, L: Any = None, d: Any = None, bond_dim: Any = 8, *_: Any, local: Any = None, **kwargs: Any
) -> int:
    """The size of ``MPS.random``'s thread policy: the bond dimension its QR sweep runs at,
    ``bond_dim`` capped by ``d**(L // 2)`` (``d`` 2 when neither it nor ``local`` is given)."""
    L, D = _positive(kwargs.get("L", L)), _positive(kwargs.get("bond_dim", bond_dim))
    d = kwargs.get("d", d)
    d = _positive(d) if d is not None else (2 if local is None else 0)
    return min(D, d ** min(L // 2, 64)) if d and L else D


def dense_vector_bond(
    cls: Any, vector: Any = None, L: Any = None, d: Any = 2, max_bond: Any = None, *_: Any, **kw: Any
) -> int:
    """The size of ``MPS.from_dense``'s thread policy: the largest matrix its SVDs factor,
    ``min(d**k, d**(L - k))`` at the middle cut, capped by ``max_bond``."""
    L, d, cap = _positive(kw.get("L", L)), _positive(kw.get("d", d)), _positive(kw.get("max_bond", max_bond))
    side = d ** min(L // 2, 64)
    return min(side, cap) if cap else side
