"""Measurements of an infinite MPS from its transfer matrix (:mod:`.tmaps`): local expectation
values, correlation functions at any distance (with strings), string order, the spectrum of the
transfer matrix and correlation lengths (per operator channel), and the structure factor.

With ``A_L`` left-orthonormal the left fixed point is the identity and the right one
``rho = C C^dagger``; a correlation ``<A_i (prod S) B_j>`` is the identity pushed from bond ``i``
through the sites ``i..j`` (``A``, then ``S``, then ``B`` between bra and ket) and closed with
``rho`` on bond ``j + 1``: ``O(r D^3)`` for all distances up to ``r``.

The correlation length of the cell is ``xi = -n / ln|lambda_2|`` sites (``lambda_1 = 1``).
``correlation_length(psi, op)`` takes the leading eigenvalue that ``<op_0 op_r>`` sees: those
whose right eigenvector has weight against ``op`` inserted on the left fixed point (for a
symmetric state, the eigenvalues of ``op``'s charge sector). :func:`extrapolate_correlation_length`
removes the finite-bond-dimension bias as Rams, Czarnik and Cincio (PRX 8, 041033 (2018)) do:
with ``eps_k = -ln|lambda_k| / n``, the inverse correlation length ``eps_2`` is fitted linearly in
``delta = eps_3 - eps_2`` over several bond dimensions and read at ``delta = 0``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..sites.local_spaces import local_space
from ..tools.checks import check_bool, check_finite_arrays, check_positive_int, numeric_array
from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    NonHermitianError,
    Tensor4allTypeError,
)
from ..tools.threads import bond_of, thread_policy
from .imps import iMPS, site_index
from .tmaps import leading_eigs, left_map, left_step, right_map, right_step

__all__ = [
    "expect",
    "correlation",
    "string_order",
    "transfer_spectrum",
    "correlation_length",
    "extrapolate_correlation_length",
    "structure_factor",
    "term_expectation",
]


def _check_state(psi: Any, what: str) -> iMPS:
    if not isinstance(psi, iMPS):
        raise Tensor4allTypeError(f"{what}: psi must be an iMPS, got {type(psi).__name__}")
    return psi


def _operator(psi: iMPS, op: Any, site: int, what: str) -> np.ndarray:
    d = psi.phys_dims[site % psi.cell]
    if isinstance(op, str):
        if psi.local is None:
            raise InvalidOptionError(f"{what}: operator names need the state's local space; pass a {d}x{d} matrix")
        return local_space(psi.local).matrix(op)
    m = np.asarray(op)
    if m.shape != (d, d) or m.dtype.kind not in "iufc":
        raise DimensionMismatchError(f"{what}: an operator must be a name or a {d}x{d} matrix, got shape {m.shape}")
    check_finite_arrays([m], f"{what}: the operator matrix")
    return m


#: the largest ``||op - op^dagger|| / ||op||`` of an operator that must be Hermitian (finite TEBD's bound)
HERMITIAN_OP_TOL = 1e-12


def _hermitian_operator(psi: iMPS, op: Any, site: int, what: str) -> np.ndarray:
    """:func:`_operator`, refused with :class:`NonHermitianError` unless Hermitian."""
    m = _operator(psi, op, site, what)
    size = float(np.linalg.norm(m))
    defect = float(np.linalg.norm(m - m.conj().T))
    if defect > HERMITIAN_OP_TOL * size:
        raise NonHermitianError(
            f"{what}: the operator must be Hermitian, but ||op - op^dagger|| / ||op|| = {defect / size:.3g}; "
            "measure a Hermitian combination (such as S+ + S-)"
        )
    return m


def _rho(psi: iMPS, bond: int) -> np.ndarray:
    c = psi.C[bond % psi.cell]
    return c @ c.conj().T


@thread_policy()
def expect(psi: iMPS, op: Any, site: int = 0) -> complex | float:
    """``<op>`` at ``site`` of the cell (``op`` a name of the local space or a ``d x d`` matrix)."""
    psi = _check_state(psi, "expect")
    i = site_index(site, psi.cell, "expect")
    m = _operator(psi, op, i, "expect")
    X = left_step(np.eye(psi.bond_dims[i], dtype=psi.dtype), psi.AL[i], psi.AL[i], m)
    return _real(np.trace(X @ _rho(psi, i + 1)))


def _real(v: complex) -> complex | float:
    return float(v.real) if abs(v.imag) <= 1e-13 * max(1.0, abs(v)) else complex(v)


@thread_policy()
def correlation(
    psi: iMPS, A: Any, B: Any, r_max: int, site: int = 0, string: Any = None, connected: bool = False
) -> np.ndarray:
    """``<A_i (prod_{i<k<i+r} S_k) B_{i+r}>`` for ``r = 1..r_max`` (``i = site``, ``S = string``;
    ``connected``: minus ``<A_i><B_{i+r}>``, without a string)."""
    psi = _check_state(psi, "correlation")
    r_max = check_positive_int(r_max, "correlation: r_max")
    connected = check_bool(connected, "correlation: connected")
    n = psi.cell
    i = site_index(site, n, "correlation")
    a = _operator(psi, A, i, "correlation")
    X = left_step(np.eye(psi.bond_dims[i], dtype=psi.dtype), psi.AL[i], psi.AL[i], a)
    out = np.empty(r_max, dtype=np.result_type(X, complex))
    for r in range(1, r_max + 1):
        j = (i + r) % n
        b = _operator(psi, B, j, "correlation")
        out[r - 1] = np.trace(left_step(X, psi.AL[j], psi.AL[j], b) @ _rho(psi, j + 1))
        s = None if string is None else _operator(psi, string, j, "correlation")
        X = left_step(X, psi.AL[j], psi.AL[j], s)
    if connected:
        if string is not None:
            raise InvalidOptionError("correlation: connected=True takes no string")
        ea = expect(psi, A, i)
        out = out - ea * np.array([expect(psi, B, i + r) for r in range(1, r_max + 1)])
    return out.real if np.abs(out.imag).max(initial=0.0) <= 1e-12 else out


@thread_policy()
def string_order(psi: iMPS, A: Any, B: Any, string: Any, distance: int = 200, site: int = 0) -> float:
    """``<A_i (prod S) B_{i+r}>`` at ``r = distance`` (the string order parameter once ``r`` is many
    string correlation lengths; the spin-1 Haldane phase: ``-string_order(psi, "Sz", "Sz",
    "exp(i pi Sz)")``)."""
    v = correlation(psi, A, B, distance, site, string)[-1]
    return float(np.real(v))


NON_INJECTIVE_TOL = 1e-10
"""A subleading transfer eigenvalue within this of modulus 1 makes the state non-injective: no
correlation length is defined (:func:`correlation_length` raises)."""


@thread_policy()
def transfer_spectrum(psi: iMPS, k: int = 6) -> np.ndarray:
    """The ``k`` eigenvalues of largest magnitude of the cell's transfer matrix, divided by the
    leading one (which is 1 for a normalized state), by decreasing magnitude."""
    psi = _check_state(psi, "transfer_spectrum")
    k = check_positive_int(k, "transfer_spectrum: k")
    D = psi.bond_dims[0]
    w, _ = leading_eigs(right_map(psi.AL, psi.AL), (D, D), psi.dtype, k, tol=1e-12)
    return w / w[0]


def is_injective(psi: iMPS) -> bool:
    """Whether the cell's transfer matrix has a single eigenvalue of modulus 1 (within
    :data:`NON_INJECTIVE_TOL`): a state that is no equal mixture of several orders (the cat of a
    symmetry-broken phase that a run of charge 0 per cell ends in has two)."""
    psi = _check_state(psi, "is_injective")
    if psi.bond_dims[0] ** 2 < 2:
        return True
    return not bool((np.abs(transfer_spectrum(psi, 2)[1:]) > 1.0 - NON_INJECTIVE_TOL).any())


#: an eigenvalue counts in a channel when its weight is at least this fraction of the channel's largest
CHANNEL_RTOL = 1e-3
#: weights below this (relative to the fixed point's) are round-off of the eigensolver (tolerance 1e-12)
CHANNEL_ATOL = 1e-12


def _site_weights(psi: iMPS, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(w, U, V)``: the ``k`` leading eigenvalues ``w_j`` of the cell's transfer matrix and ``d x d``
    matrices with ``<A_0 B_{r n}> = sum_j w_j^(r - 1) <A, U_j> <B, V_j>`` (``<A, U> = sum A * U``): the
    right eigenvectors ``r_j`` closed with ``A`` on site 0, and ``B`` on site 0 pushed from ``rho``
    and expanded in the ``r_j`` by the left eigenvectors ``l_j`` (dual basis: ``tr(l_i r_j)`` inverted)."""
    n, AL, D = psi.cell, psi.AL, psi.bond_dims[0]
    size = D * D
    kk = min(k + 2, size)  # two more: a boundary that splits a multiplet differs between left and right
    w, vr = leading_eigs(right_map(AL, AL), (D, D), psi.dtype, kk, tol=1e-12)
    _, vl = leading_eigs(left_map(AL, AL), (D, D), psi.dtype, kk, tol=1e-12)
    R = vr.T.reshape(kk, D, D)  # r[ket, bra] on bond 0
    L = vl.T.reshape(kk, D, D)  # l[bra, ket] on bond 0
    for j in range(n - 1, 0, -1):
        R = np.stack([right_step(r, AL[j], AL[j]) for r in R])
    Y = _rho(psi, 0)
    for j in range(n - 1, 0, -1):
        Y = right_step(Y, AL[j], AL[j])
    a0 = AL[0]
    U = np.einsum("asc,atd,kdc->kst", a0.conj(), a0, R)
    V = np.einsum("kba,atc,cd,bsd->kst", L, a0, Y, a0.conj())
    G = np.einsum("iab,jba->ij", L, vr.T.reshape(kk, D, D))  # tr(l_i r_j)
    V = np.linalg.lstsq(G, V.reshape(kk, -1), rcond=1e-12)[0].reshape(V.shape)
    m = k if kk < size else kk
    return w[:m] / w[0], U[:m], V[:m]


def _channel(psi: iMPS, op: Any, k: int) -> np.ndarray:
    """The subleading eigenvalues (normalized) that ``<op_0 op_r>`` sees, by decreasing magnitude (all
    one-site operators at site 0 for ``op=None``). The weight of ``lambda_j`` is its contribution
    ``|<op, U_j> <op, V_j>|`` (both overlaps, :func:`_site_weights`), or ``||U_j|| ||V_j||`` for
    ``op=None`` (the largest over operators of unit norm); it counts when the weight is at least
    :data:`CHANNEL_RTOL` of the largest subleading one and :data:`CHANNEL_ATOL` of the fixed point's.
    Outside the operator's symmetry sector a weight arises only from the state's residual symmetry
    breaking ``delta`` (truncation, solver tolerance) and at second order, ``delta^2``, both overlaps
    vanishing for a symmetric state; the relative threshold admits ``delta`` up to 3e-2 while keeping
    channel eigenvalues of weight down to 1e-3 of the leading one (the transverse-field Ising chain at
    bond dimension 16: 1e-4 at most outside the channel, 0.15 and more inside). For ``op=None`` it drops
    eigenvalues that live on Schmidt values far below the others (an ordered Ising chain: a pair of
    weight 1e-8 beside 1e-1)."""
    w, U, V = _site_weights(psi, k)
    if op is None:
        weight = np.linalg.norm(U.reshape(len(w), -1), axis=1) * np.linalg.norm(V.reshape(len(w), -1), axis=1)
        scale = weight[0]
    else:
        m = _operator(psi, op, 0, "correlation_length")
        weight = np.abs(np.einsum("st,kst->k", m, U) * np.einsum("st,kst->k", m, V))
        scale = float(np.linalg.norm(m)) ** 2 * np.linalg.norm(U[0]) * np.linalg.norm(V[0])
    sub = weight[1:]
    top = float(sub.max(initial=0.0))
    keep = (sub >= CHANNEL_RTOL * top) & (sub > CHANNEL_ATOL * scale)
    return w[1:][keep]


@thread_policy()
def correlation_length(psi: iMPS, op: Any = None, k: int = 12) -> float:
    """``-n / ln|lambda|`` in sites, ``lambda`` the leading subleading eigenvalue among the ``k``
    largest that ``<op_0 op_r>`` sees (``op=None``: any one-site operators; :func:`_channel`). A state
    with none (a product state across bond 0, or no correlation above resolution) gives 0.0: nothing
    decays beyond the cell. ``k`` must be at least 2 (the fixed point and one more)."""
    psi = _check_state(psi, "correlation_length")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise InvalidOptionError(
            f"correlation_length: k must be an integer >= 2 (the leading eigenvalue and at least one more), got {k!r}"
        )
    eps = _epsilons(psi, op, k)
    return float(1.0 / eps[0]) if len(eps) else 0.0


def _epsilons(psi: iMPS, op: Any, k: int) -> np.ndarray:
    """``-ln|lambda_j| / n`` of the subleading eigenvalues (of ``op``'s channel), ascending,
    complex-conjugate pairs and repeated moduli counted once."""
    if op is None:  # every eigenvalue of modulus 1 makes the state non-injective, whatever its weight
        lam = transfer_spectrum(psi, k)[1:]
        lam = lam if (np.abs(lam) > 1.0 - NON_INJECTIVE_TOL).any() else _channel(psi, None, k)
    else:
        lam = _channel(psi, op, k)
    flat = np.abs(lam) > 1.0 - NON_INJECTIVE_TOL
    if flat.any():
        raise InvalidOptionError(
            f"the state's transfer matrix has {int(flat.sum()) + 1} eigenvalues of modulus 1 "
            f"({', '.join(f'{x:.6g}' for x in lam[flat])} besides the leading one): it is not injective (a "
            "superposition of states of a longer period, such as the two Neel-like states of an "
            "antiferromagnet in a one-site cell), so no correlation length decays; use a unit cell of that "
            "period (infinite_model(..., cell=2)) or another start"
        )
    lam = lam[np.abs(lam) > 0.0]  # a zero eigenvalue: nothing propagates through the cell
    eps = -np.log(np.abs(lam)) / psi.cell
    out: list[float] = []
    for e in np.sort(eps):
        if not out or e - out[-1] > 1e-9 * max(1.0, e):
            out.append(float(e))
    return np.array(out)


@thread_policy(lambda states, *_, **__: _largest_of(states))
def extrapolate_correlation_length(states: Sequence[iMPS], op: Any = None, k: int = 12) -> tuple[float, np.ndarray]:
    """``(xi, table)``: the correlation length extrapolated in ``delta = eps_3 - eps_2`` to zero
    over ``states`` (the same model at several bond dimensions; a straight line through their
    ``(delta, eps_2)``), and the table rows ``(bond dimension, delta, 1 / eps_2)``."""
    if isinstance(states, iMPS) or not isinstance(states, (list, tuple)) or len(states) < 2:
        raise Tensor4allTypeError("extrapolate_correlation_length takes a list of at least two iMPS")
    rows = []
    for psi in states:
        eps = _epsilons(_check_state(psi, "extrapolate_correlation_length"), op, k)
        if len(eps) < 2:
            raise InvalidOptionError("extrapolate_correlation_length: fewer than two distinct eigenvalues; raise k")
        rows.append((psi.max_bond, eps[1] - eps[0], eps[0]))
    t = np.array(rows)
    slope, intercept = np.polyfit(t[:, 1], t[:, 2], 1)
    return float(1.0 / intercept), np.column_stack([t[:, 0], t[:, 1], 1.0 / t[:, 2]])


@thread_policy()
def structure_factor(psi: iMPS, op: Any, q: Any, r_max: int = 200) -> np.ndarray:
    """``S(q) = sum_r e^{-i q r} <op_0 op_r>_c`` over ``|r| <= r_max`` (site 0 of the cell as origin;
    a Hermitian ``op``, so ``C(-r) = conj C(r)`` of the cell's mirror; exact for ``cell = 1``)."""
    psi = _check_state(psi, "structure_factor")
    m = _hermitian_operator(psi, op, 0, "structure_factor")
    qs = np.atleast_1d(numeric_array(q, "structure_factor: q"))
    if qs.dtype.kind == "c":
        raise Tensor4allTypeError(f"structure_factor: q must be real (a number or an array), got {q!r}")
    if not np.isfinite(qs).all():
        raise NonFiniteError(f"structure_factor: q must be finite, got {q!r}")
    c0 = expect(psi, m @ m, 0) - abs(expect(psi, m, 0)) ** 2
    cr = correlation(psi, m, m, r_max, 0, connected=True)
    r = np.arange(1, r_max + 1)
    phase = np.exp(-1j * np.outer(qs, r))
    s = c0 + phase @ cr + phase.conj() @ np.conj(cr)
    return s.real


def _largest_of(states: Any) -> int:
    """The largest bond dimension among ``states`` (a list of iMPS; 0 for anything else)."""
    return max((bond_of(s) for s in states), default=0) if isinstance(states, (list, tuple)) else 0


def term_expectation(psi: iMPS, factors: Sequence[tuple[int, np.ndarray]]) -> complex:
    """``<prod_k O_k>`` of ``factors = ((site, matrix), ...)`` (sites ascending, infinite-chain numbering)."""
    n = psi.cell
    first, last = factors[0][0], factors[-1][0]
    ops = dict(factors)
    X = np.eye(psi.bond_dims[first % n], dtype=psi.dtype)
    for p in range(first, last + 1):
        X = left_step(X, psi.AL[p % n], psi.AL[p % n], ops.get(p))
    return complex(np.trace(X @ _rho(psi, last + 1)))
