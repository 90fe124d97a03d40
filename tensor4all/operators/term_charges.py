"""Charges of an MPO's bond states, read from its tensors: does a Hamiltonian conserve a
diagonal charge, and with which charge does each bond state shift it?

For MPO tensors ``W_i[l, s, t, r]`` (``out s``, ``in t``) and a local charge ``q`` per
basis state, an MPO commutes with ``Q = sum_i q_i`` in the gauge where every bond state
has a definite charge ``c`` and every nonzero entry satisfies
``c_r = c_l + q_s - q_t``; the left boundary state has charge 0 and so must the right
one (the operator adds no net charge). The automaton and compressed MPOs of
``MPO.from_opsum`` are in that gauge whenever the OpSum conserves the charge (the
compression's orthogonalizations mix only states of one charge; what they leave
elsewhere is rounding, dropped below ``tol``). The charges are propagated from left to
right; a state that would get two charges, or a right boundary of nonzero charge, means
the Hamiltonian does not conserve ``Q`` (:class:`NonConservingError` names the site and
the charges).
"""

from __future__ import annotations

import itertools
from typing import Iterator, Sequence

import numpy as np

from ..sites.charges import NonConservingError, charge_label, charge_value
from ..sites.local_spaces import LocalSpace
from .opsum import OpSum

__all__ = [
    "mpo_bond_charges",
    "operator_charge",
    "check_opsum_conserves",
    "charge_reversal",
    "reversal_invariant",
    "REVERSAL_TOL",
]


def mpo_bond_charges(
    ws: Sequence[np.ndarray],
    q: Sequence[Sequence[int]],
    *,
    modulus: int = 0,
    tol: float = 1e-12,
    what: str = "the Hamiltonian",
    charge: str | None = None,
) -> list[np.ndarray]:
    """Integer charges of the bond states, one array per bond ``0..L`` (bond ``i`` is left
    of site ``i``); ``q[i]`` the charges of site ``i``'s basis states. ``modulus`` 0 for
    U(1), ``n`` for Z_n. Entries below ``tol`` times the site tensor's largest are
    treated as zero. ``charge``: the charge's name (``"2Sz"``, ``"N,2Sz"``), so that an error names
    the changes in physical values (``(N, Sz)`` pairs), not the integer charges."""
    label, unit = charge_label(charge) if charge is not None else ("charge", 1)

    def norm(c: np.ndarray) -> np.ndarray:
        return c % modulus if modulus else c

    charges = [np.zeros(ws[0].shape[0], dtype=np.int64)]
    for i, w in enumerate(ws):
        qi = np.asarray(q[i], dtype=np.int64)
        dq = norm(qi[:, None] - qi[None, :])  # q_s - q_t
        a = np.abs(np.asarray(w))
        scale = float(a.max()) if a.size else 0.0
        nz = a > tol * scale if scale > 0 else np.zeros(a.shape, dtype=bool)
        left = charges[-1]
        cand = norm(left[:, None, None] + dq[None, :, :])  # (l, s, t): the charge a right state would get
        right = np.zeros(w.shape[3], dtype=np.int64)
        for r in range(w.shape[3]):
            got = np.unique(cand[nz[:, :, :, r]])
            if len(got) > 1:
                raise NonConservingError(
                    f"{what} does not conserve the charge: at site {i} the MPO state {r} on the right bond is "
                    f"reached with {label} changes {[charge_value(int(g), unit) for g in sorted(got)]} (a term "
                    "that changes the charge, or the Hermitian partner of one missing)"
                )
            right[r] = int(got[0]) if len(got) else 0
        charges.append(right)
    if np.any(charges[-1] != 0):
        raise NonConservingError(
            f"{what} does not conserve the charge: its terms change the {label} by "
            f"{[charge_value(c, unit) for c in sorted(set(int(c) for c in charges[-1]))]} in total"
        )
    return charges


def operator_charge(space: LocalSpace, name: str, q: Sequence[int], modulus: int = 0) -> int | None:
    """The charge an operator of ``space`` adds (``q_s - q_t`` of its nonzero entries ``(s, t)``;
    ``S+``: +2 in units of ``2Sz``), or None when it has none (``Sx``)."""
    _, m = space.factor(name)
    found = {(q[s] - q[t]) % modulus if modulus else q[s] - q[t] for s, t in np.argwhere(m != 0)}
    if len(found) > 1:
        return None
    return found.pop() if found else 0


def check_opsum_conserves(os: OpSum, space: LocalSpace, charge: str, modulus: int) -> None:
    """:class:`NonConservingError` naming the first term of ``os`` that changes the charge
    ``charge`` of ``space`` (an operator of no definite charge, or a net change)."""
    q = space.charges[charge]
    for k, term in enumerate(os.terms):
        total = 0
        for name, site in term.ops:
            c = operator_charge(space, name, q, modulus)
            if c is None:
                raise NonConservingError(
                    f"term {k} ({term.coef!r} * {' '.join(f'{n}({s})' for n, s in term.ops)}) does not conserve "
                    f"{charge}: the operator {name!r} at site {site} mixes basis states of different {charge}; write "
                    f"it with charged operators (Sx = (S+ + S-)/2) or build the MPO without conserve"
                )
            total += c
        if (total % modulus if modulus else total) != 0:
            raise NonConservingError(
                f"term {k} ({term.coef!r} * {' '.join(f'{n}({s})' for n, s in term.ops)}) changes {charge} by "
                f"{total}; each term of a conserving Hamiltonian changes it by 0 (pair raising with lowering "
                "operators in one term, e.g. S+(i) S-(j))"
            )


# ---- the charge reversal ---------------------------------------------------------------------
REVERSAL_TOL = 1e-12
"""The largest ``||H - R H R||_F^2 / ||H||_F^2`` for which :func:`reversal_invariant` counts ``H`` as
invariant under the charge reversal ``R`` (the traces cancel to ~1e-15)."""


def charge_reversal(q: Sequence[int], modulus: int) -> list[int] | None:
    """The basis permutation ``s -> r(s)`` with ``q_r(s) = -q_s`` (modulo ``modulus``), pairing the
    states of opposite charges in their order (a spin's ``|m> -> |-m>``, the electron's up and down
    exchanged); None where some charge has no opposite of the same multiplicity."""
    norm = (lambda c: c % modulus) if modulus else (lambda c: c)
    by: dict[int, list[int]] = {}
    for s, c in enumerate(q):
        by.setdefault(norm(int(c)), []).append(s)
    perm = list(range(len(q)))
    for c, states in by.items():
        partner = by.get(norm(-c))
        if partner is None or len(partner) != len(states):
            return None
        for s, t in zip(states, partner):
            perm[s] = t
    return perm


def reversal_invariant(Ws: Sequence[np.ndarray], q: Sequence[Sequence[int]], modulus: int) -> bool:
    """Whether the chain of MPO tensors ``Ws`` (``W[l, s, t, r]``, the first bond state the start and
    the last the end, as the automaton's) is invariant under a charge reversal ``R`` on every site:
    the permutation :func:`charge_reversal` of the basis charges ``q[i]``, with a sign per basis state
    (the electron's spin flip exchanges up and down and gives the doubly occupied state a sign, its
    order of creation operators reversed; a spin's needs none). Then the lowest energies of the
    charges ``+Q`` and ``-Q`` are equal (a chain without a field; a parity always reverses to
    itself); a field ``h Sz`` breaks it. The signs are searched (:data:`REVERSAL_MAX_DIM`) and
    measured by MPO traces, ``||H - R H R^T||^2 = 2 Tr H^dagger H - 2 Re Tr H^dagger (R H R^T)``."""
    perms = [charge_reversal(qi, modulus) for qi in q]
    if any(p is None for p in perms):
        return False
    if all(p == list(range(len(p))) for p in perms):
        return True
    hh = mpo_trace(Ws, Ws).real
    if not hh > 0.0:
        return False
    for signs in _sign_patterns(q):
        flipped = [(w * np.multiply.outer(d, d)[None, :, :, None])[:, p][:, :, p] for w, p, d in zip(Ws, perms, signs)]
        if 2.0 * (hh - mpo_trace(Ws, flipped).real) <= REVERSAL_TOL * hh:
            return True
    return False


REVERSAL_MAX_DIM = 6
"""Chains of one local space of at most this dimension have every sign pattern of the reversal
tried (2^(d-1) of them); others the permutation alone."""


def _sign_patterns(q: Sequence[Sequence[int]]) -> Iterator[list[np.ndarray]]:
    d = len(q[0])
    if any(list(qi) != list(q[0]) for qi in q) or d > REVERSAL_MAX_DIM:
        yield [np.ones(len(qi)) for qi in q]
        return
    for tail in itertools.product((1.0, -1.0), repeat=d - 1):
        yield [np.array((1.0,) + tail)] * len(q)


def mpo_trace(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> complex:
    """``Tr A^dagger B`` of two chains of MPO tensors, from the first bond state to the last."""
    env = np.zeros((a[0].shape[0], b[0].shape[0]), dtype=np.result_type(a[0], b[0]))
    env[0, 0] = 1.0
    for x, y in zip(a, b):
        env = np.einsum("ab,astc,bstd->cd", env, np.conj(x), y)
    return complex(env[-1, -1])
