"""The operator pair of a dynamical correlation: the operators resolved on the Hamiltonian's local
space, ``B`` applied at one site of a state with its Jordan-Wigner string, and the transition
profile ``<bra| A_x |ket>`` at every site ``x`` in one pass.

**Operators.** ``A`` and ``B`` are names of the local space of ``H`` (``H.local``; an MPO built from
raw tensors: the default space of its physical dimension), products ``"A*B"`` or ``d x d``
matrices, resolved by :class:`tensor4all.networks.correlations.Chain` (the rules of
:meth:`MPS.correlation`): a name the space lacks is an :class:`~tensor4all.UnknownOperatorError`
that lists the space's operators.

**Fermions.** An odd operator (a fermionic name of the space, ``"C"``, ``"Cdag"``, ``"Cup"``) stands
for the Jordan-Wigner fermion ``(prod_{k<i} F_k) O_i`` (:mod:`tensor4all.operators.jordan_wigner`):
``B_c |0>`` multiplies the sites left of ``c`` by ``F`` and site ``c`` by ``B``, and ``<0| A_x`` carries
``F`` on the sites left of ``x``. ``A`` and ``B`` must then both be odd (a pair of one odd and one
even operator changes the fermion parity: its correlation is not physical).

**Sectors.** A symmetric state stays symmetric under an operator of one charge (``Sz``, ``N``: 0;
``S+``: +1; ``Cdag``: +1 particle): site ``c`` takes the operator's charge and every bond right of
``c`` is shifted by it (:func:`apply_at`), so ``B_c |0>`` lies in the sector of ``|0>`` plus that
charge and the evolution runs there. An operator of no single charge (``Sx``) makes the state
dense.

**Transition profile.** :func:`transition_profile` computes ``<bra| (prod_{k<x} S_k) A_x |ket>`` for
all ``x`` from one pass of right blocks and one of left blocks (with the string ``S``, or none), on
the dense NumPy arrays of the two states: ``O(L chi^3 d)`` per call, whatever the sectors of bra and
ket (the ket of ``B_c |0>`` may lie in another sector than the bra).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..networks.correlations import Chain, SiteOperator
from ..networks.mpo import MPO
from ..networks.mps import MPS
from ..networks.symmetric_sites import operator_tensor
from ..sites.local_spaces import UnknownOperatorError
from ..structured import Leg, SymmetricTensor, einsum
from ..tools.errors import InvalidOptionError

__all__ = ["OperatorPair", "operator_pair", "apply_at", "site_arrays", "transition_profile"]


@dataclass(frozen=True)
class OperatorPair:
    """``A`` and ``B`` resolved at every site: their matrices (``a[x]``, ``b[x]``), whether they are
    odd (fermionic: a Jordan-Wigner string ``F`` left of them, ``parity[x]``), their labels, and
    whether ``A = B^dagger`` (the Hermitian pairs whose negative times follow from the positive ones)."""

    a: tuple[np.ndarray, ...]
    b: tuple[np.ndarray, ...]
    parity: tuple[np.ndarray, ...] | None
    label_a: str
    label_b: str
    hermitian_pair: bool

    @property
    def fermionic(self) -> bool:
        return self.parity is not None


def _resolve(chain: Chain, op: Any, site: int, name: str, what: str) -> SiteOperator:
    try:
        return chain.operator(op, site, f"{what}: {name}")
    except UnknownOperatorError:
        space = chain.space_at(site)
        raise UnknownOperatorError(
            f"{what}: {name} = {op!r} is not an operator of the Hamiltonian's local space {space.name!r}; give "
            f"one of its operators ({', '.join(space.operator_names())}), a product of them ('A*B') or a "
            f"{space.dim}x{space.dim} matrix"
        ) from None


def operator_pair(H: MPO, op_a: Any, op_b: Any, what: str) -> OperatorPair:
    """``A`` and ``B`` on the sites of ``H`` (its local space), checked: names of that space (else
    :class:`UnknownOperatorError` listing them), matrices of its dimension, and equal fermion parity."""
    chain = Chain(H.phys_dims, H.local)
    a = [_resolve(chain, op_a, x, "A", what) for x in range(H.L)]
    b = [_resolve(chain, op_b, x, "B", what) for x in range(H.L)]
    if a[0].odd != b[0].odd:
        odd, even = (a[0], b[0]) if a[0].odd else (b[0], a[0])
        raise InvalidOptionError(
            f"{what}: {odd.label!r} is odd under the fermion parity and {even.label!r} is even, so "
            "<0|A(t) B|0> vanishes by parity (the pair changes the fermion number by an odd amount); pair "
            "fermionic operators with fermionic ones, e.g. A='C', B='Cdag' (the Green's function)"
        )
    parity = tuple(chain.parity(x) for x in range(H.L)) if a[0].odd else None
    herm = all(np.allclose(x.matrix, y.matrix.conj().T, rtol=0, atol=1e-14) for x, y in zip(a, b))
    return OperatorPair(tuple(x.matrix for x in a), tuple(y.matrix for y in b), parity, a[0].label, b[0].label, herm)


# ---- B at one site: the state B_c |psi> --------------------------------------------------------
def apply_at(psi: MPS, pair: OperatorPair, center: int) -> MPS:
    """``B_c |psi>`` with its string (``F`` on the sites left of ``c`` for an odd ``B``): symmetric
    when ``psi`` is and ``B`` has one charge (the bonds right of ``c`` shifted by it), else dense."""
    mats = {k: pair.parity[k] for k in range(center)} if pair.parity is not None else {}
    mats[center] = pair.b[center]
    if psi.symmetric:
        legs = [t.legs[1] for t in psi.tensors]
        ops = {k: operator_tensor(m, legs[k]) for k, m in mats.items()}
        if all(o is not None for o in ops.values()):
            return _apply_symmetric(psi, ops)
        psi = psi.dense()
    sites = [np.asarray(t) for t in psi.tensors]
    for k, m in mats.items():
        sites[k] = np.einsum("ps,asb->apb", m, sites[k])
    return MPS(sites)


def _shifted(leg: Leg, shift: Any) -> Leg:
    """``leg`` with every charge shifted by ``shift``, its sectors in the same order (the two sides of a
    bond, shifted alike, stay equal)."""
    g = leg.symmetry
    return Leg(g, {g.add(q, shift): d for q, d in leg.sectors.items()}, dual=leg.is_dual)


def _apply_symmetric(psi: MPS, ops: dict[int, SymmetricTensor]) -> MPS:
    """The symmetric sites of ``prod_k O_k |psi>`` (``O_k`` of one charge each): each site keeps charge
    0, the charges of the operators left of a bond added to it."""
    ts = list(psi.tensors)
    g = ts[0].symmetry
    shift = g.identity
    out = []
    for k, t in enumerate(ts):
        op = ops.get(k)
        if op is not None:
            t = einsum("ps,asb->apb", op, t)
        q = t.charge
        if shift == g.identity and q == g.identity:
            out.append(t)
            continue
        right = g.add(shift, q)
        legs = (_shifted(t.legs[0], shift), t.legs[1], _shifted(t.legs[2], right))
        blocks = {(g.add(kl, shift), kp, g.add(kr, right)): b for (kl, kp, kr), b in t.blocks.items()}
        out.append(SymmetricTensor(blocks, legs, dtype=t.dtype))
        shift = right
    return MPS._symmetric(out, psi._grading)


# ---- <bra| A_x |ket> at every site -------------------------------------------------------------
def site_arrays(psi: MPS) -> list[np.ndarray]:
    """The site tensors of ``psi`` as dense NumPy arrays ``(left, d, right)`` (symmetric sites: their
    blocks written into the dense index of each leg, the physical one in basis order)."""
    return [_dense(t) if isinstance(t, SymmetricTensor) else np.asarray(t) for t in psi.tensors]


def _dense(t: SymmetricTensor) -> np.ndarray:
    legs = t.legs
    blocks = t.blocks
    dtype = np.result_type(*[np.asarray(b).dtype for b in blocks.values()]) if blocks else np.float64
    out = np.zeros(tuple(leg.dim for leg in legs), dtype)
    for key, b in blocks.items():
        out[tuple(leg.slice(q) for leg, q in zip(legs, key))] = np.asarray(b)
    return out


def _left(env: np.ndarray, bra: np.ndarray, ket: np.ndarray, op: np.ndarray | None) -> np.ndarray:
    """The left block ``(bra, ket)`` moved across one site, ``op`` (or nothing) between."""
    t = np.tensordot(env, ket, axes=(1, 0))  # (b, s, k')
    if op is not None:
        t = np.einsum("ps,bsk->bpk", op, t)
    return np.tensordot(bra.conj(), t, axes=([0, 1], [0, 1]))  # (b', k')


def _right(env: np.ndarray, bra: np.ndarray, ket: np.ndarray) -> np.ndarray:
    """The right block ``(ket, bra)`` moved across one site."""
    t = np.tensordot(ket, env, axes=(2, 0))  # (k, s, b')
    return np.tensordot(t, bra.conj(), axes=([1, 2], [1, 2]))  # (k, b)


def transition_profile(
    bra: Sequence[np.ndarray], ket: Sequence[np.ndarray], ops: Sequence[np.ndarray], string: Sequence[np.ndarray] | None
) -> np.ndarray:
    """``<bra| (prod_{k<x} string_k) ops_x |ket>`` for every site ``x`` (complex, shape ``(L,)``)."""
    L = len(bra)
    dtype = np.result_type(bra[0], ket[0], ops[0], np.complex128)
    rights: list[np.ndarray] = [np.ones((1, 1), dtype)] * (L + 1)
    for k in range(L - 1, 0, -1):
        rights[k] = _right(rights[k + 1], bra[k], ket[k])
    env = np.ones((1, 1), dtype)
    out = np.empty(L, dtype)
    for x in range(L):
        closed = _left(env, bra[x], ket[x], ops[x])  # (bra, ket) right of x
        out[x] = np.tensordot(closed, rights[x + 1], axes=([0, 1], [1, 0]))
        if x < L - 1:
            env = _left(env, bra[x], ket[x], None if string is None else string[x])
    return out
