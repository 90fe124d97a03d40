"""iTEBD: time evolution of an infinite MPS by Trotterized bond gates in Hastings' form
(M. B. Hastings, J. Math. Phys. 50, 095207 (2009); G. Vidal, PRL 98, 070201 (2007)).

The state is held as right-orthonormal sites ``B_i = Gamma_i lambda_{i+1}`` and the Schmidt
values ``lambda_i``; a gate on the bond ``(i, i + 1)`` acts on ``theta = lambda_i B_i B_{i+1}``,
whose truncated SVD ``X S Y`` gives ``B_{i+1} = Y`` and ``lambda_{i+1} = S``, and
``B_i = (U B_i B_{i+1}) Y^dagger``, with no division by small Schmidt values. The bonds of the
cell split into even and odd ones, each part a product of commuting gates, applied in Strang's
or Suzuki's fourth-order sequence (:func:`tensor4all.operators.gates.trotter_sequence`; the gates
``expm(-i tau h)`` or ``expm(-tau h)`` by :func:`~tensor4all.operators.gates.exp_gate`). A cell of
odd length is doubled. The bond Hamiltonians come from the infinite MPO's terms (nearest
neighbour only; a one-site term goes half to each of its two bonds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.linalg

from ..linalg.truncation import truncation_keep
from ..operators.gates import exp_gate, trotter_sequence
from ..tools.checks import check_bool, check_cutoff, check_positive_int, check_time_grid
from ..tools.errors import DimensionMismatchError, InvalidOptionError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .gauge import diagonal_gauge, mixed_canonical
from .impo import InfiniteMPO, _value, check_hermitian
from .imps import iMPS
from .transfer import _operator

__all__ = ["itebd", "ITEBDResult", "bond_hamiltonians", "common_cell", "check_observables"]


@dataclasses.dataclass
class ITEBDResult:
    """``times``; ``expectations[name]`` of shape ``(len(times), cell)`` (each site of the cell);
    the final ``state``; the summed discarded weight ``truncation_error``."""

    times: np.ndarray
    expectations: dict[str, np.ndarray]
    state: iMPS
    truncation_error: float


def bond_hamiltonians(H: InfiniteMPO, cell: int) -> list[np.ndarray]:
    """``h_i`` (``d^2 x d^2``, ``np.kron`` order) on the bonds ``(i, i + 1)`` of a cell of ``cell``
    sites (a multiple of ``H.cell``)."""
    n = H.cell
    d = H.tensors[0].shape[1]
    hs = [np.zeros((d * d, d * d), dtype=complex) for _ in range(cell)]
    eye = np.eye(d)
    for coef, sign, factors in H.terms:
        c = sign * _value(coef)
        first, last = factors[0][0], factors[-1][0]
        if last - first > 1:
            raise InvalidOptionError(
                "itebd: terms must act on at most two neighbouring sites; a term spans "
                f"{last - first + 1} sites (use vumps for longer-range models)"
            )
        for shift in range(0, cell, n):
            i = (first + shift) % cell
            if first == last:
                m = factors[0][1]
                hs[i] += 0.5 * c * np.kron(m, eye)
                hs[(i - 1) % cell] += 0.5 * c * np.kron(eye, m)
            else:
                hs[i] += c * np.kron(factors[0][1], factors[1][1])
    return [h.real.copy() if np.abs(h.imag).max() == 0 else h for h in hs]


def _apply(B: list, lam: list, i: int, U: np.ndarray, max_bond: int, cutoff: float) -> float:
    """The gate ``U`` on the bond ``(i, i + 1)``, in place; returns the discarded weight."""
    n = len(B)
    j = (i + 1) % n
    two = np.tensordot(B[i], B[j], (2, 0))  # (a, s, t, b)
    dl, d1, d2, dr = two.shape
    U4 = U.reshape(d1, d2, d1, d2)
    two = np.tensordot(U4, two, ((2, 3), (1, 2))).transpose(2, 0, 1, 3)  # (a, s', t', b)
    theta = lam[i][:, None, None, None] * two
    x, s, y = scipy.linalg.svd(
        theta.reshape(dl * d1, d2 * dr), full_matrices=False, lapack_driver="gesdd", check_finite=False
    )
    norm = float(np.linalg.norm(s))
    s = s / norm
    keep, discarded = truncation_keep(s, max_bond, cutoff)
    y = y[:keep]
    B[j] = y.reshape(keep, d2, dr)
    B[i] = np.tensordot(two, y.conj().reshape(keep, d2, dr), ((2, 3), (1, 2))) / (norm * np.linalg.norm(s[:keep]))
    lam[j] = s[:keep] / np.linalg.norm(s[:keep])
    return discarded


def common_cell(psi0: iMPS, H: InfiniteMPO, what: str) -> int:
    """The common cell of the state and the MPO (one a multiple of the other), their physical
    dimensions checked site by site over it; :class:`DimensionMismatchError` otherwise."""
    if psi0.cell % H.cell and H.cell % psi0.cell:
        raise DimensionMismatchError(
            f"{what}: the state's cell ({psi0.cell}) and the MPO's ({H.cell}) must divide one another"
        )
    cell = max(psi0.cell, H.cell)
    d_mpo = [H.tensors[i % H.cell].shape[1] for i in range(cell)]
    d_state = [psi0.phys_dims[i % psi0.cell] for i in range(cell)]
    if d_mpo != d_state:
        raise DimensionMismatchError(
            f"{what}: physical dimensions {d_state} of the state against {d_mpo} of the MPO; "
            "build both on the same local space"
        )
    return cell


def check_observables(observables: Any, what: str) -> dict[str, Any]:
    """``observables`` (a mapping of names to operators, or None) as a dict; anything else (a list of
    operator names) raises :class:`Tensor4allTypeError`."""
    if observables is None:
        return {}
    if not isinstance(observables, Mapping):
        raise Tensor4allTypeError(
            f"{what}: observables must be a dict of names to operators (names of the local space or matrices), "
            f"such as {{'X': 'X'}}; got {type(observables).__name__} {observables!r}"
        )
    return dict(observables)


@keyword_hints
def itebd(
    H: InfiniteMPO,
    psi0: iMPS,
    t_final: float,
    dt: float,
    *,
    imaginary: bool = False,
    max_bond: int = 64,
    cutoff: float = 1e-12,
    order: int = 4,
    observables: dict[str, Any] | None = None,
    threads: int | None = None,
) -> ITEBDResult:
    """Evolve ``psi0`` by ``exp(-i H t)`` (``imaginary``: ``exp(-H t)``, renormalized) up to
    ``t_final`` in steps ``dt`` (``t_final / dt`` a whole number), truncating each bond to
    ``max_bond`` and ``cutoff`` (discarded weight); ``observables`` (name -> operator name or
    matrix) are measured on every site of the cell at ``t = 0, dt, ..., t_final``, named in
    ``psi0``'s local space. ``H`` must be Hermitian (:class:`NonHermitianError`: real time would not be unitary, and imaginary time
    would not find a ground state)."""
    if not isinstance(H, InfiniteMPO):
        raise Tensor4allTypeError(f"itebd: H must be an InfiniteMPO, got {type(H).__name__}")
    if not isinstance(psi0, iMPS):
        raise Tensor4allTypeError(f"itebd: psi0 must be an iMPS, got {type(psi0).__name__}")
    t_final, dt, steps = check_time_grid(t_final, dt, "itebd")
    imaginary = check_bool(imaginary, "itebd: imaginary")
    if order not in (2, 4):
        raise InvalidOptionError(f"itebd: order must be 2 or 4, got {order!r}")
    max_bond = check_positive_int(max_bond, "itebd: max_bond")
    cutoff = check_cutoff(cutoff)
    threads = check_threads(threads)
    cell = common_cell(psi0, H, "itebd")
    observables = check_observables(observables, "itebd")
    cell = cell if cell % 2 == 0 else 2 * cell
    reps = cell // psi0.cell
    dtype = float if imaginary and np.result_type(psi0.dtype, H.dtype).kind != "c" else complex
    with blas_threads(threads, max_bond):  # the whole run: the gates, the steps, the final canonical form
        check_hermitian(H, "itebd")
        _, AR0, C0 = diagonal_gauge(psi0.AL, psi0.AR, psi0.C)  # the Schmidt values on the diagonal of C
        B = [a.astype(dtype) for a in AR0] * reps
        lam = [np.diag(c).real.astype(float) for c in C0] * reps
        hs = bond_hamiltonians(H, cell)
        parts = [list(range(0, cell, 2)), list(range(1, cell, 2))]
        seq = trotter_sequence(order, 2)
        gates = {}
        for part, w in seq:
            for i in parts[part]:
                key = (i, w)
                if key not in gates:
                    g = exp_gate(hs[i], w * dt, imaginary)
                    gates[key] = g.real if imaginary and np.isrealobj(hs[i]) else g
        times = np.linspace(0.0, steps * dt, steps + 1)
        records: dict[str, list] = {k: [] for k in observables}
        trunc = 0.0
        _measure(B, lam, psi0.local, observables, records)
        for _ in range(steps):
            for part, w in seq:
                for i in parts[part]:
                    trunc += _apply(B, lam, i, gates[(i, w)], max_bond, cutoff)
            _measure(B, lam, psi0.local, observables, records)
        AL, AR, C = mixed_canonical(B)
        state = iMPS(AL, AR, C, psi0.local)
        out = {k: np.array(v) for k, v in records.items()}
        return ITEBDResult(times, out, state, float(trunc))


def _measure(B: list, lam: list, local: Any, observables: dict, records: dict) -> None:
    if not observables:
        return
    n = len(B)
    # the Hastings form is mixed canonical: AL_i C_{i+1} = lambda_i B_i at each site
    psi = iMPS._unchecked([lam[i][:, None, None] * B[i] for i in range(n)], B, [np.diag(l) for l in lam], local)
    for name, op in observables.items():
        records[name].append([_site_expect(lam[i][:, None, None] * B[i], psi, op, i) for i in range(n)])


def _site_expect(theta: np.ndarray, psi: iMPS, op: Any, i: int) -> float | complex:
    m = _operator(psi, op, i, "itebd")
    v = np.tensordot(theta.conj(), np.tensordot(theta, m, (1, 1)), ((0, 1, 2), (0, 2, 1)))
    return float(v.real) if abs(v.imag) < 1e-12 else complex(v)
