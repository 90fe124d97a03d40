"""The purified chain: each physical site fused with its ancilla into one site of dimension
``d^2``, and the infinite-temperature states on it.

A thermal state ``rho = e^{-beta H} / Z`` is the reduced state of the purification
``|psi(beta)> = e^{-beta H / 2} |Phi>`` on the doubled chain, ``|Phi>`` the product over the
sites of the maximally entangled pairs ``sum_s |s>_p |s>_a`` (Verstraete, Garcia-Ripoll and
Cirac, PRL 93, 207204 (2004); Feiguin and White, PRB 72, 220401 (2005)). Fusing the physical
site with its ancilla (basis ``|s a>``) keeps the chain a chain of ``L`` sites, so the
Hamiltonian ``H (x) 1`` is one more :class:`~tensor4all.MPO` compiled from ``H.opsum`` on the
doubled local space (:func:`purified_space`), and ``tebd``/``tdvp`` cool it unchanged.

* The doubled space keeps every operator name of the physical one (``"Sz"`` is ``Sz (x) 1``),
  its fermionic operators and its string ``F (x) 1`` (Jordan-Wigner strings run over the physical
  sites only, which is what ``H (x) 1`` needs), and declares each charge as ``q_p - q_a`` (``(q_p
  + q_a) mod n`` for Z_n; TeNPy's convention of negated ancilla charges), so the pairs ``|s s>``
  have charge 0 and a Hamiltonian that conserves a physical charge conserves the doubled one.
  The basis is ordered by charge (the sector engine needs each charge's states contiguous).
* :func:`infinite_temperature_sites`: the grand-canonical start, ``|Phi>`` normalized, bond 1;
  or, for a physical sector (``sector={"N": 4}``, ``{"Sz": 0}``), the canonical start ``P |Phi>``,
  the pairs whose physical charges add to the sector, an exact MPS whose bond counts the charge
  so far (bond dimension at most the number of partial charges), with ``ln`` of its number of
  states (``Tr_sector 1``).
"""

from __future__ import annotations

import math
from typing import Any, Collection, Sequence

import numpy as np

import tenferro as tf

from ..networks.mps import MPS
from ..networks.symmetric_sites import grading, phys_leg, sector_charge
from ..sites.charges import CONSERVED_CHARGES, PRODUCT_CHARGES, NonConservingError
from ..sites.local_spaces import LOCAL_SPACES, LocalSpace, local_space
from ..structured import Leg, SymmetricTensor
from ..tools.errors import InvalidOptionError

__all__ = ["purified_space", "purified_name", "pair_index", "infinite_temperature_sites", "ANCILLA_SUFFIX"]

#: the doubled space of ``"spin-1/2"`` is called ``"spin-1/2+ancilla"``
ANCILLA_SUFFIX = "+ancilla"


def purified_name(local: str) -> str:
    return local + ANCILLA_SUFFIX


def _moduli() -> dict[str, int]:
    """Declared charge name -> its modulus (0: U(1))."""
    return {name: mod for name, mod in CONSERVED_CHARGES.values() if name not in PRODUCT_CHARGES}


def _pair_order(space: LocalSpace) -> list[tuple[int, int]]:
    """The pairs ``(s, a)`` sorted by their doubled charges (then by ``s``, ``a``)."""
    mods = _moduli()
    d = space.dim

    def key(p: tuple[int, int]) -> tuple:
        s, a = p
        qs = []
        for name, q in space.charges.items():
            diff = q[s] - q[a]
            qs.append(diff % mods[name] if mods.get(name, 0) else diff)
        return (*qs, s, a)

    return sorted(((s, a) for s in range(d) for a in range(d)), key=key)


def purified_space(local: str | LocalSpace) -> LocalSpace:
    """The doubled local space of ``local`` (see the module docstring), registered in
    :data:`~tensor4all.sites.local_spaces.LOCAL_SPACES` under ``local + "+ancilla"`` on first
    use (as a user-made space is), so MPOs compiled on it carry its name."""
    space = local_space(local)
    name = purified_name(space.name)
    known = LOCAL_SPACES.get(name)
    if known is not None:
        return known
    if space.name.endswith(ANCILLA_SUFFIX):
        raise InvalidOptionError(f"purified_space: {space.name!r} is already a purified space")
    d = space.dim
    order = _pair_order(space)
    perm = [s * d + a for s, a in order]  # doubled basis index -> np.kron(p, a) index
    eye = np.eye(d)
    ops = {op: (phase, np.kron(m, eye)[np.ix_(perm, perm)]) for op, (phase, m) in space.ops.items()}
    mods = _moduli()
    charges = {
        c: tuple(((q[s] - q[a]) % mods[c]) if mods.get(c, 0) else (q[s] - q[a]) for s, a in order)
        for c, q in space.charges.items()
    }
    out = LocalSpace(name, d * d, ops, charges=charges, fermionic=space.fermionic, string=space.string)
    LOCAL_SPACES[name] = out
    return out


def pair_index(space: LocalSpace) -> dict[tuple[int, int], int]:
    """``(s, a) -> `` the doubled basis index of the pair, for the physical space ``space``."""
    return {p: i for i, p in enumerate(_pair_order(space))}


def _counting_sites(q: Sequence[Sequence[int]], add: Any, target: Any, identity: Any) -> list[dict]:
    """Per bond, the partial charges from which ``target`` is reachable: ``out[b]`` maps each to
    its bond index (bond ``b`` left of site ``b``; ``out[0] = {identity: 0}``)."""
    L = len(q)
    left = [{identity}]
    for i in range(L):
        left.append({add(c, x) for c in left[-1] for x in q[i]})
    right = [set() for _ in range(L + 1)]
    right[L] = {target}
    for i in range(L - 1, -1, -1):  # c at bond i is kept when some x of site i reaches right[i + 1]
        right[i] = {c for c in left[i] if any(add(c, x) in right[i + 1] for x in q[i])}
    return [{c: k for k, c in enumerate(sorted(right[b]))} for b in range(L + 1)]


def infinite_temperature_sites(
    local: str, L: int, conserve: str | None, sector: Any, what: str, *, conserved: Collection[str] | None = None
) -> tuple[MPS, float]:
    """The infinite-temperature purification on ``L`` doubled sites of ``local`` and ``ln`` of the
    number of physical states it spans: ``|Phi> / sqrt(d^L)`` (``sector`` None) or the states of
    the physical ``sector`` (a value of the charge ``conserve`` names, or of the first charge
    the space declares). ``conserve`` (a name of :data:`CONSERVED_CHARGES`) makes the state
    symmetric in the doubled charge (always 0). ``conserved``: the charges the Hamiltonian conserves
    (``"Sz"``, ``"N"``, ``"parity"``; None: not checked); a sector of another charge raises
    :class:`NonConservingError` (its projector does not commute with ``e^{-beta H}``)."""
    space = local_space(local)
    doubled = purified_space(space)
    d = space.dim
    idx = pair_index(space)
    diag = [idx[(s, s)] for s in range(d)]
    if sector is None:
        counts = [{0: 0}] * (L + 1)
        arrays = []
        for _ in range(L):
            a = np.zeros((1, d * d, 1))
            a[0, diag, 0] = 1.0
            arrays.append(a)
        log_states = L * math.log(d)
    else:
        name = conserve if conserve is not None else _sector_charge_name(space, sector, L, what)
        _check_conserved(name, sector, conserved, what)
        if isinstance(sector, dict) and list(sector) == [name]:  # {"N": 4} with the charge "N"
            sector = sector[name]
        g = grading(name, space.name, [d] * L, what)
        legs = [phys_leg(g.symmetry, g.q[i], i)[0] for i in range(L)]
        target = sector_charge(g, sector, legs, what)  # SymmetryViolationError for an empty sector
        counts = _counting_sites(g.q, g.symmetry.add, target, g.symmetry.identity)
        arrays = []
        for i in range(L):
            a = np.zeros((len(counts[i]), d * d, len(counts[i + 1])))
            for c, k in counts[i].items():
                for s in range(d):
                    r = counts[i + 1].get(g.symmetry.add(c, g.q[i][s]))
                    if r is not None:
                        a[k, idx[(s, s)], r] = 1.0
            arrays.append(a)
        log_states = _log_count(arrays)
    scale = math.exp(-0.5 * log_states / L)
    arrays = [a * scale for a in arrays]
    if conserve is None:
        return MPS([tf.asarray(np.asfortranarray(a)) for a in arrays]), log_states
    gd = grading(conserve, doubled.name, [d * d] * L, what)
    sites = []
    for i, a in enumerate(arrays):
        leg, where = phys_leg(gd.symmetry, gd.q[i], i)
        zero = gd.symmetry.identity
        rows = [k for k in range(d * d) if where[k][0] == zero]
        block = np.asfortranarray(a[:, rows, :])
        bl = Leg(gd.symmetry, {zero: a.shape[0]})
        br = Leg(gd.symmetry, {zero: a.shape[2]}, dual=True)
        sites.append(SymmetricTensor({(zero, zero, zero): tf.asarray(block)}, [bl, leg, br]))
    return MPS._symmetric(sites, gd), log_states


def _check_conserved(name: str, sector: Any, conserved: Collection[str] | None, what: str) -> None:
    """:class:`NonConservingError` unless every part of the charge ``name`` (``"N,Sz"``: ``N`` and ``Sz``)
    is among ``conserved`` (None: nothing checked)."""
    if conserved is None:
        return
    missing = [p for p in name.split(",") if p not in conserved]
    if missing:
        kept = ", ".join(map(repr, conserved)) if conserved else "none"
        raise NonConservingError(
            f"{what}: sector={sector!r} is a sector of {name}, but H does not conserve {' and '.join(missing)} "
            f"([H, Q] != 0), so e^(-beta H) mixes the sectors and the projection would give Tr(P e^(-beta H)), not "
            f"the canonical Z; expected a sector of a charge H conserves (here: {kept}), or sector=None "
            "(grand canonical)"
        )


def _sector_charge_name(space: LocalSpace, sector: Any, L: int, what: str) -> str:
    """The charge a ``sector`` of a dense run is read in: the one its keys name (``{"N": 4, "Sz":
    0}``: ``"N,Sz"``), else the first charge the space declares whose sectors the engine can run
    (the electron's ``Sz`` alone cannot: its states of one ``Sz`` are not contiguous)."""
    declared = [
        n for n, (c, _) in CONSERVED_CHARGES.items() if all(p in space.charges for p in PRODUCT_CHARGES.get(c, (c,)))
    ]
    if not declared:
        raise InvalidOptionError(
            f"{what}: a sector needs a conserved charge, but the local space {space.name!r} declares none; "
            "drop sector= (grand canonical)"
        )
    if isinstance(sector, dict):
        keys = set(map(str, sector))
        for n in declared:
            if set(n.split(",")) == keys:
                return n
        raise InvalidOptionError(
            f"{what}: sector={sector!r} names {sorted(keys)}, but the local space {space.name!r} conserves "
            f"{', '.join(map(repr, declared))}; give a sector of one of them (or conserve=...)"
        )
    for n in declared:
        try:
            grading(n, space.name, [space.dim] * L, what)
        except InvalidOptionError:
            continue
        return n
    return declared[0]  # grading names why it cannot run


def _log_count(arrays: list[np.ndarray]) -> float:
    """``ln`` of the squared norm of the 0/1 sector state (its number of basis states), by a
    left-to-right pass with the partial counts kept as exact Python integers."""
    v = [1]
    for a in arrays:
        m = (a != 0).any(axis=1)  # bond -> bond, one pair per (left, right) charge step
        n = [0] * a.shape[2]
        w = (a != 0).sum(axis=1)
        for k, c in enumerate(v):
            if c:
                for r in np.nonzero(m[k])[0]:
                    n[r] += c * int(w[k, r])
        v = n
    return math.log(sum(v))
