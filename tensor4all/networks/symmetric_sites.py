"""Chains of charge-conserving site tensors: the symmetric side of :class:`MPS`.

A symmetric MPS has :class:`~tensor4all.SymmetricTensor` sites with legs
``(left bond, physical, right bond)``: the left bond and the physical leg incoming to the
site's charge balance (``dual=False``), the right bond outgoing (``dual=True``), every site
of charge 0, so that the charge of a bond sector is the total charge of the sites left of
it. The left boundary bond is the single sector of charge 0; the right boundary bond is the
single sector of the state's total charge (its sector), as ITensor's QN MPS and TeNPy's
``MPS`` with a charged last bond.

The physical leg of a site groups the basis states by charge in basis order; a space whose
states of one charge are not contiguous (none of the built-in spaces) raises
:class:`InvalidOptionError`.

Everything here works on site lists; :mod:`.mps` checks arguments and wraps the results.
The differentiable operations (:func:`canonical_sites`) use the structured dispatcher's
kernels; the numerical tools (Schmidt spectra, random states) use NumPy on the blocks.
Compression is the one sweep of :mod:`.site_ops` (``SymmetricOps``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import tenferro as tf

from ..tools.errors import InvalidOptionError
from ..tools.checks import check_index
from ..sites.local_spaces import BUILT_IN_SPACES, LOCAL_SPACES, local_space
from ..sites.charges import conserve_candidates, default_charge
from ..sites.charges import (
    CONSERVED_CHARGES,
    charge_label,
    charge_sector,
    charge_value,
    check_sector_charge,
    declared_charges,
    physical_charge,
)
from ..structured import (
    U1,
    Leg,
    LegError,
    SectorMismatchError,
    SymmetricTensor,
    Symmetry,
    SymmetryViolationError,
    Zn,
    einsum,
)
from ..structured import linalg as slinalg
from ..linalg import lapack
from ..linalg.truncation import orthonormal_factors

__all__ = [
    "check_symmetric_chain",
    "chain_grading",
    "sector_charge",
    "Grading",
    "canonical_sites",
    "flip_leg",
    "grading",
    "is_symmetric",
    "operator_tensor",
    "phys_leg",
    "product_sites",
    "random_sites",
    "order_key",
]


@dataclass(frozen=True)
class Grading:
    """What a symmetric chain conserves: the physical ``label`` (``"Sz"``; a product
    ``"N,Sz"``), the integer charge the local space declares (``"2Sz"``; ``"N,2Sz"``), its
    ``unit`` (physical value = integer / unit; a tuple per part for a product, whose integer
    charges are packed, :mod:`._charges`), the group and the per-site basis charges ``q``."""

    label: str
    charge: str
    unit: Any
    symmetry: Symmetry
    q: tuple[tuple[int, ...], ...]

    @property
    def is_product(self) -> bool:
        return isinstance(self.unit, tuple)

    def integer(self, value: Any, what: str) -> int:
        """A physical value (``Sz = 1``, ``0.5``; parity 0 or 1; ``(N, Sz)`` or ``{"N": .., "Sz": ..}``
        for a product) as the group's integer charge."""
        modulus = self.symmetry.n if isinstance(self.symmetry, Zn) else 0  # a Z_n value is one of 0 .. n - 1
        return self.symmetry.canonical(physical_charge(value, self.label, self.unit, modulus, what))

    def value(self, q: int) -> Any:
        """The physical value of the integer charge ``q`` (a tuple ``(N, Sz)`` for a product)."""
        return charge_value(q, self.unit)

    def sector(self, q: int) -> dict[str, Any]:
        """``{label: value}`` of the integer charge ``q`` (``{"N": 8, "Sz": 0.0}`` for a product)."""
        return charge_sector(q, self.label, self.unit)


def grading(conserve: str, local: str | None, dims: Sequence[int], what: str) -> Grading:
    """The :class:`Grading` of ``conserve`` (``"Sz"``, ``"parity"``) on sites of dimensions ``dims``
    of the local space ``local`` (None: the default space of each dimension)."""
    if not isinstance(conserve, str) or conserve not in CONSERVED_CHARGES:
        raise InvalidOptionError(
            f"{what}: conserve must be one of {', '.join(map(repr, CONSERVED_CHARGES))} or None, got {conserve!r}"
        )
    name, modulus = CONSERVED_CHARGES[conserve]
    q = declared_charges(local, dims).get(name)
    if q is None:
        raise InvalidOptionError(
            f"{what}: conserve={conserve!r} needs the charge {name!r}, but "
            f"{_undeclared_where(local, dims)}; {_spaces_declaring(name, local)}"
        )
    check_sector_charge(conserve, local, q, what)
    label, unit = charge_label(name)
    return Grading(label, name, unit, U1() if modulus == 0 else Zn(modulus), tuple(tuple(x) for x in q))


def _undeclared_where(local: str | None, dims: Sequence[int]) -> str:
    """Why no charge is declared: the named space, or the default spaces (none for some ``d``)."""
    if local is not None:
        space = LOCAL_SPACES.get(local)
        if space is not None and any(d != space.dim for d in dims):
            return f"the local space {local!r} has dimension {space.dim}, the sites {sorted(set(dims))}"
        return f"the local space {local!r} does not declare it"
    missing = sorted({d for d in dims} - {sp.dim for sp in (LOCAL_SPACES["spin-1/2"], LOCAL_SPACES["spin-1"])})
    if missing:
        return (
            f"there is no default local space of dimension {missing[0]} (the defaults: spin-1/2 for d = 2, "
            "spin-1 for d = 3)"
        )
    return f"the default local spaces of dimensions {sorted(set(dims))} do not declare it"


def _spaces_declaring(name: str, local: str | None = None) -> str:
    """The fix: the built-in local spaces that declare the charge ``name`` (of ``local``'s dimension
    where it is named: ``'pauli'`` (d = 2) is no fix for the electron's d = 4); for a fermionic
    space's parity, ``conserve='N'``."""
    space = LOCAL_SPACES.get(local) if local is not None else None
    spaces = [  # built in: not the spaces registered since (a thermal state's "pauli+ancilla")
        sp for n, sp in LOCAL_SPACES.items() if n in BUILT_IN_SPACES and name in declared_charges(sp.name, [sp.dim])
    ]
    fits = [f"local={sp.name!r} (d = {sp.dim})" for sp in spaces if space is None or sp.dim == space.dim]
    fermion = "conserve='N' fixes a fermion number's parity; " if space is not None and space.fermionic else ""
    if name == "parity" and fermion:
        return fermion + ("or pass " + " or ".join(fits) if fits else "or declare it in a LocalSpace's charges")
    if not fits:
        others = " or ".join(f"local={sp.name!r} (d = {sp.dim})" for sp in spaces)
        size = f" of dimension {space.dim}" if space is not None else ""
        return (
            f"no built-in local space{size} declares it"
            + (f" ({others} does)" if others else "")
            + ("; declare it in a LocalSpace's charges")
        )
    return "pass " + " or ".join(fits)


def is_symmetric(ts: Sequence[Any]) -> bool:
    return bool(ts) and isinstance(ts[0], SymmetricTensor)


def phys_leg(symmetry: Symmetry, charges: Sequence[int], site: int = 0) -> tuple[Leg, list[tuple[int, int]]]:
    """The physical leg of basis charges ``charges`` (sectors in order of first appearance)
    and, per basis state, ``(charge, offset in its sector)``."""
    sectors: dict[int, int] = {}
    where: list[tuple[int, int]] = []
    last = None
    for s, q in enumerate(charges):
        q = symmetry.canonical(q)
        if q in sectors and q != last:
            raise InvalidOptionError(
                f"site {site}: the basis states of charge {q} are not contiguous (charges "
                f"{list(charges)}); order the local basis by charge"
            )
        where.append((q, sectors.get(q, 0)))
        sectors[q] = sectors.get(q, 0) + 1
        last = q
    return Leg(symmetry, sectors), where


def product_sites(states: Sequence[int], g: Grading, dtype: Any) -> list[SymmetricTensor]:
    """The product of basis ``states`` as symmetric sites."""
    out = []
    total = g.symmetry.identity
    for i, s in enumerate(states):
        leg, where = phys_leg(g.symmetry, g.q[i], i)
        qs, off = where[s]
        right = g.symmetry.add(total, qs)
        block = np.zeros((1, leg.sector_dim(qs), 1), dtype=dtype)
        block[0, off, 0] = 1.0
        legs = [Leg(g.symmetry, {total: 1}), leg, Leg(g.symmetry, {right: 1}, dual=True)]
        out.append(SymmetricTensor({(total, qs, right): tf.asarray(np.asfortranarray(block))}, legs))
        total = right
    return out


def _reachable(legs: Sequence[Leg], g: Symmetry, start: Any, sign: int, cap: int) -> list[dict]:
    """Charges reachable through the physical legs and how many basis states reach each
    (capped at ``cap``): ``out[k]`` after ``k`` legs."""
    out = [{g.canonical(start): 1}]
    add = g._add  # unchecked: the legs' charges and the sums of canonical charges are canonical
    for leg in legs:
        steps = [(qs if sign > 0 else g._negate(qs), d) for qs, d in leg.sectors.items()]
        nxt: dict = {}
        for q, n in out[-1].items():
            for qs, d in steps:
                r = add(q, qs)
                nxt[r] = min(cap, nxt.get(r, 0) + n * d)
        out.append(nxt)
    return out


def random_sites(
    legs: Sequence[Leg], target: Any, bond_dim: int, rng: np.random.Generator, dtype: Any
) -> list[SymmetricTensor]:
    """Random symmetric sites of total charge ``target`` (Gaussian blocks): bond ``b`` holds the
    charges reachable from both ends, each sector at most as large as the number of basis
    states on either side, ``bond_dim`` shared in proportion to those numbers (at least one
    state per sector kept; the sectors nearest the middle of the charge range first when
    ``bond_dim`` is smaller than their number). Not canonical."""
    g = legs[0].symmetry
    L = len(legs)
    left = _reachable(legs, g, g.identity, +1, bond_dim)
    right = _reachable(list(reversed(legs)), g, target, -1, bond_dim)[::-1]  # charge at bond b seen from the right
    bonds = []
    for b in range(L + 1):
        weight = {q: min(n, right[b][q]) for q, n in left[b].items() if q in right[b]}
        if not weight:
            raise InvalidOptionError(f"no basis state of the chain has the total charge {target!r}")
        order = sorted(weight, key=lambda q: -weight[q])[:bond_dim]
        total = sum(weight[q] for q in order)
        dims = {q: max(1, min(weight[q], (bond_dim * weight[q]) // total)) for q in order}
        bonds.append({q: dims[q] for q in sorted(dims, key=order_key)})
    out = []
    complex_ = np.issubdtype(np.dtype(dtype), np.complexfloating)
    for i in range(L):
        ll = Leg(g, bonds[i])
        rl = Leg(g, bonds[i + 1], dual=True)
        blocks = {}
        for ql, dl in bonds[i].items():
            for qs, ds in legs[i].sectors.items():
                qr = g.add(ql, qs)
                if qr in bonds[i + 1]:
                    shape = (dl, ds, bonds[i + 1][qr])
                    a = rng.standard_normal(shape)
                    if complex_:
                        a = a + 1j * rng.standard_normal(shape)
                    blocks[(ql, qs, qr)] = tf.asarray(np.asfortranarray(a.astype(dtype)))
        out.append(SymmetricTensor(blocks, [ll, legs[i], rl], dtype=tf.dtype(np.dtype(dtype).name)))
    return out


def order_key(q: Any) -> Any:
    return (abs(q), -q) if isinstance(q, int) else repr(q)


def flip_leg(x: SymmetricTensor, axis: int) -> SymmetricTensor:
    """The same tensor with leg ``axis`` written with the opposite duality: each sector's
    charge negated (an incoming ``q`` is an outgoing ``-q``); the dense values are unchanged."""
    g = x.symmetry
    leg = x.legs[axis]
    new = Leg(g, {g.negate(q): d for q, d in leg.sectors.items()}, dual=not leg.is_dual)
    legs = list(x.legs)
    legs[axis] = new
    blocks = {key[:axis] + (g.negate(key[axis]),) + key[axis + 1 :]: b for key, b in x.blocks.items()}
    return SymmetricTensor(blocks, legs, x.charge, dtype=x.dtype)


def canonical_sites(ts: Sequence[SymmetricTensor], center: int) -> list[SymmetricTensor]:
    """Mixed canonical form around ``center`` by blockwise QR (differentiable: the structured
    QR kernel per sector). Right of the centre the LQ of a site is the transpose of the QR of
    its transpose, with the new bond written outgoing-to-incoming by :func:`flip_leg`. Sites
    whose blocks are all concrete host arrays (nothing to differentiate, no device) take
    :func:`_canonical_blocks`, the same factorizations on the blocks themselves (equal to
    rounding; the bonds' sectors and dimensions the same)."""
    ts = list(ts)
    if host_blocks(ts):
        return _canonical_blocks(ts, center)
    for i in range(center):
        m = ts[i].fuse_legs([0, 1], [2])
        q, r = _orthonormal_qr(m)
        ts[i] = q.split_legs(0)
        ts[i + 1] = einsum("ab,bsc->asc", r, ts[i + 1])
    for i in range(len(ts) - 1, center, -1):
        m = ts[i].fuse_legs([0], [1, 2])  # (left, (phys, right))
        q, r = _orthonormal_qr(m.transpose(1, 0))  # m^T = q r: m = r^T q^T
        ts[i] = flip_leg(q.transpose(1, 0), 0).split_legs(1)  # q^T: (bond*, fused) -> (bond, fused)
        lo = flip_leg(r.transpose(1, 0), 1)  # r^T: (left, bond) -> (left, bond*)
        ts[i - 1] = einsum("asb,bc->asc", ts[i - 1], lo)
    return ts


def bond_factors(
    m: SymmetricTensor, factors: Mapping[tuple, tuple[Any, Any]]
) -> tuple[SymmetricTensor, SymmetricTensor]:
    """The two-leg ``m`` as ``left @ right`` from the factors of its blocks (``factors[(a, c)] =
    (l, r)``, block ``(a, c)`` of ``m`` = ``l @ r``; a block left out leaves the bond): ``left``
    ``(row, bond*)`` of charge 0, ``right`` ``(bond, col)`` of ``m``'s charge, the new bond one
    sector per row sector, of the width of its ``l`` (the structured QR's and SVD's legs)."""
    row, col = m.legs
    g = m.symmetry
    ls, rs, bond = {}, {}, []
    for (a, c), (lf, rf) in factors.items():
        t = g.negate(a) if row.is_dual else a  # the bond sector of the row sector a
        ls[(a, t)], rs[(t, c)] = lf, rf
        bond.append((t, tuple(lf.shape)[1]))
    leg = Leg(g, bond)
    return (
        SymmetricTensor(ls, [row, leg.dual()], g.identity, dtype=m.dtype),
        SymmetricTensor(rs, [leg, col], m.charge, dtype=m.dtype),
    )


def _orthonormal_qr(m: SymmetricTensor) -> tuple[SymmetricTensor, SymmetricTensor]:
    """The QR of a two-leg symmetric matrix for :func:`canonical_sites` (legs and charges as the
    structured QR's), each block by :func:`~tensor4all.linalg.truncation.orthonormal_factors`: a
    rank-deficient block (a sum of a chain with itself) by its SVD, its bond sector shrunk to the
    rank, since the trailing factors of a QR have no derivative (reverse mode raised
    ``SingularMatrixError``, forward mode gave NaN)."""
    if not m.blocks:
        return slinalg.qr(m)  # the zero matrix: the structured QR's error
    return bond_factors(m, {k: orthonormal_factors(b, "right") for k, b in m.blocks.items()})


def host_blocks(ts: Sequence[SymmetricTensor]) -> bool:
    """Whether every block of ``ts`` is a concrete tensor on the host."""
    return all(type(b) is tf.Tensor and b.placement.device is None for t in ts for b in t.leaves) and all(
        t.symmetry == ts[0].symmetry for t in ts
    )


def _canonical_blocks(ts: list[SymmetricTensor], center: int) -> list[SymmetricTensor]:
    """:func:`canonical_sites` on host blocks, without the dispatcher (the 1 ms per site that the
    structured kernels take is most of a small conserved DMRG's setup): per bond charge one QR
    (left of the centre: the rows ``(q_l, s)`` of every block ending in it stacked) or one LQ
    (right of it: the columns of every block starting in it side by side), the factor merged
    into the next site's blocks. A bond sector that no block of the site reaches drops out."""
    blocks = [{k: np.asarray(b.numpy()) for k, b in t.blocks.items()} for t in ts]
    legs = [list(t.legs) for t in ts]
    dtypes = [t.dtype for t in ts]
    for i in range(center):  # left-canonical: M[q_r] = [block (q_l, q_s, q_r) as (dl ds) x dr] stacked
        factors, out = {}, {}
        for qr in legs[i][2].sectors:
            keys = [k for k in blocks[i] if k[2] == qr]
            if not keys:
                continue
            q, r = lapack.qr(np.concatenate([blocks[i][k].reshape(-1, blocks[i][k].shape[2], order="F") for k in keys]))
            factors[qr] = r
            off = 0
            for k in keys:
                dl, ds, _ = blocks[i][k].shape
                out[k] = np.asfortranarray(q[off : off + dl * ds].reshape(dl, ds, -1, order="F"))
                off += dl * ds
        bond = {qr: f.shape[0] for qr, f in factors.items()}
        blocks[i] = out
        legs[i][2] = Leg(legs[i][2].symmetry, [(q, bond[q]) for q in legs[i][2].sectors if q in bond], dual=True)
        blocks[i + 1] = {
            k: np.asfortranarray(np.tensordot(factors[k[0]], b, axes=(1, 0)))
            for k, b in blocks[i + 1].items()
            if k[0] in factors
        }
        legs[i + 1][0] = Leg(legs[i][2].symmetry, legs[i][2].sectors, dual=False)
    for i in range(len(ts) - 1, center, -1):  # right-canonical: M[q_l] = [block as dl x (ds dr)] side by side
        factors, out = {}, {}
        for ql in legs[i][0].sectors:
            keys = [k for k in blocks[i] if k[0] == ql]
            if not keys:
                continue
            lo, q = lapack.lq(
                np.concatenate([blocks[i][k].reshape(blocks[i][k].shape[0], -1, order="F") for k in keys], axis=1)
            )
            factors[ql] = lo
            off = 0
            for k in keys:
                _, ds, dr = blocks[i][k].shape
                out[k] = np.asfortranarray(q[:, off : off + ds * dr].reshape(-1, ds, dr, order="F"))
                off += ds * dr
        bond = {ql: f.shape[1] for ql, f in factors.items()}
        blocks[i] = out
        legs[i][0] = Leg(legs[i][0].symmetry, [(q, bond[q]) for q in legs[i][0].sectors if q in bond], dual=False)
        blocks[i - 1] = {
            k: np.asfortranarray(np.tensordot(b, factors[k[2]], axes=(2, 0)))
            for k, b in blocks[i - 1].items()
            if k[2] in factors
        }
        legs[i - 1][2] = Leg(legs[i][0].symmetry, legs[i][0].sectors, dual=True)
    return [
        SymmetricTensor._make({k: tf.asarray(b) for k, b in bl.items()}, lg, t.charge, dt)
        for bl, lg, t, dt in zip(blocks, legs, ts, dtypes)
    ]


def norm2_blocks(ts: Sequence[SymmetricTensor]) -> tuple[float, int]:
    """``(n, e)`` with ``<psi|psi> = n 2**(2 e)`` for sites whose blocks are on the host
    (:func:`host_blocks`): the transfer matrices per bond charge, two GEMMs per block, each site
    divided by a power of two first (the exact scaling of ``MPS.norm``, so that no partial
    product overflows). The sites may be a stretch of a chain whose left part is left-orthonormal
    (the centre alone: the norm of a state whose centre is known)."""
    env: dict[Any, np.ndarray] = {q: np.eye(n) for q, n in ts[0].legs[0].sectors.items()}
    total = 0
    for t in ts:
        arrays = {k: b.numpy() for k, b in t.blocks.items()}
        big = max((float(np.max(np.abs(a))) for a in arrays.values() if a.size), default=0.0)
        e = math.frexp(big)[1] if big > 0.0 and math.isfinite(big) and abs(math.frexp(big)[1]) <= 1000 else 0
        total += e
        out: dict[Any, np.ndarray] = {}
        for (ql, _, qr), a in arrays.items():
            left = env.get(ql)
            if left is None:
                continue
            a = a * 2.0**-e if e else a
            dl, ds, dr = a.shape
            half = (left @ a.reshape(dl, ds * dr, order="F")).reshape(dl * ds, dr, order="F")
            term = a.reshape(dl * ds, dr, order="F").conj().T @ half
            out[qr] = term if qr not in out else out[qr] + term
        env = out
    return float(sum(np.trace(m).real for m in env.values())), total


def _numpy_blocks(x: SymmetricTensor) -> dict[tuple, np.ndarray]:
    return {k: np.asarray(b) for k, b in x.blocks.items()}


def _matrix_sectors(x: SymmetricTensor, split: int) -> tuple[SymmetricTensor, dict[Any, np.ndarray]]:
    """``x`` fused to a matrix (legs ``[:split]`` x ``[split:]``) and its blocks by row charge
    (a fused leg of an incoming and an outgoing leg is incoming, of charge ``q_in - q_out``)."""
    n = len(x.legs)
    m = x.fuse_legs(list(range(split)), list(range(split, n)))
    return m, {k[0]: b for k, b in _numpy_blocks(m).items()}


def operator_tensor(m: np.ndarray, leg: Leg) -> SymmetricTensor | None:
    """The local operator matrix ``m`` (``out, in``) as a symmetric tensor on ``(leg, leg*)``
    with its charge (``S+``: +2 in units of ``2Sz``), or None when it has no single charge
    (``Sx``)."""
    g = leg.symmetry
    charges = [q for q, d in leg.sectors.items() for _ in range(d)]
    nz = np.argwhere(np.abs(m) > 0)
    found = {g.add(charges[s], g.negate(charges[t])) for s, t in nz}
    if len(found) > 1:
        return None
    charge = found.pop() if found else g.identity
    return SymmetricTensor.from_dense(tf.asarray(np.asfortranarray(m)), [leg, leg.dual()], charge=charge)


def check_bond(bond: Any, L: int, what: str) -> int:
    return check_index(bond, L - 1, f"{what}: bond", "bond")


def check_symmetric_chain(ts: Sequence[SymmetricTensor]) -> None:
    """Typed errors unless symmetric sites form an MPS: three legs (left and physical incoming,
    right outgoing), charge 0, one group, neighbouring bonds the same sectors, boundary bonds of
    one state (the left one of charge 0)."""
    g = ts[0].symmetry
    for i, t in enumerate(ts):
        if t.symmetry != g:
            raise SectorMismatchError(f"MPS: site {i} has the group {t.symmetry!r}, site 0 {g!r}; one group per MPS")
        duals = [leg.is_dual for leg in t.legs]
        if duals != [False, False, True]:
            raise LegError(
                f"MPS: site {i} has legs of duality {duals}; a symmetric MPS site has legs (left bond, "
                "physical, right bond) with only the right bond dual=True"
            )
        if t.charge != g.identity:
            raise SymmetryViolationError(
                f"MPS: site {i} has charge {t.charge!r}; symmetric MPS sites have charge "
                f"{g.identity!r} (the total charge sits on the last bond)"
            )
    first = ts[0].legs[0]
    if first.sectors != {g.identity: 1}:
        raise LegError(f"MPS: the left boundary bond must be one state of charge {g.identity!r}, got {first!r}")
    for i in range(len(ts) - 1):
        right, left = ts[i].legs[2], ts[i + 1].legs[0]
        if not right.same_space(left):
            raise SectorMismatchError(
                f"MPS bond {i}: site {i} has the right bond {right!r}, site {i + 1} the left "
                f"bond {left!r}; the sectors must agree"
            )


def chain_grading(conserve: Any, local: Any, dims: list[int], what: str, charge: Any = None) -> Grading:
    """The grading of ``conserve``, or (None) the first charge of :data:`CONSERVED_CHARGES` the local space
    declares (:func:`conserve_candidates`) of the kind of ``charge``: a product for a pair or a
    mapping, else a single charge."""
    if local is not None:
        local = local_space(local).name
    if conserve is not None:
        return grading(conserve, local, dims, what)
    want_product = isinstance(charge, (tuple, list, Mapping))
    for name in conserve_candidates(local, dims):
        g = grading(name, local, dims, what)
        if g.is_product == want_product:
            return g
    raise InvalidOptionError(
        f"{what}: charge=... needs a local space that declares a conserved charge "
        f"({', '.join(CONSERVED_CHARGES)}); {local!r} declares none"
    )


def sector_charge(g: Grading, charge: Any, legs: list, what: str) -> Any:
    """The integer total charge of ``charge`` (physical units), or by default (U(1)) the value the
    chain reaches nearest the middle of its range (the lowest ``|Sz|``, half filling for ``N``;
    ties to the larger), (Z_n) 0; :class:`SymmetryViolationError` for a sector with no states."""
    reach = {g.symmetry.identity}
    add = g.symmetry._add  # unchecked: the legs' charges are canonical, and so are their sums
    for leg in legs:
        reach = {add(q, qs) for q in reach for qs in leg.charges}
    if charge is None:
        if not isinstance(g.symmetry, U1):
            return g.symmetry.identity
        return default_charge(reach, g.unit)
    q = g.integer(charge, f"{what}: charge")
    if q not in reach:
        shown = sorted(g.value(x) for x in reach)
        raise SymmetryViolationError(
            f"{what}: the sector {g.label} = {charge!r} has no states on this chain of {len(legs)} sites (basis "
            f"charges {[g.value(x) for x in g.q[0]]} per site; reachable {g.label}: {shown[:8]}"
            f"{'...' if len(shown) > 8 else ''})"
        )
    return q


def state_local(grading: Grading | None, dims: Sequence[int], local: Any) -> Any:
    """``local``, or, where it is None, the local space that a symmetric state's charges name: the
    one built-in space of the sites' dimension whose declared charges are the state's basis
    charges, when the dimension's default space (spin 1 for 3) does not declare them. A t-J state
    (charges ``N, 2Sz`` of ``(0, 0), (1, 1), (1, -1)``) measured by name used spin 1's ``Sz``
    (``<Sz_0>`` = 0.32 in the ground state of ``Sz = 0``); a dense state keeps the default."""
    if local is not None or grading is None:
        return local
    return _charges_local(grading.charge, grading.q, tuple(dims))


@functools.lru_cache(maxsize=64)
def _charges_local(charge: str, q: tuple[tuple[int, ...], ...], dims: tuple[int, ...]) -> str | None:
    """:func:`state_local` of a state's charges (remembered: a measurement per site is ~0.1 ms)."""
    if len(set(dims)) != 1:
        return None
    basis = [tuple(x) for x in q]
    if declared_charges(None, dims).get(charge) == basis:
        return None
    named = [name for name in BUILT_IN_SPACES if declared_charges(name, dims).get(charge) == basis]
    return named[0] if len(named) == 1 else None
