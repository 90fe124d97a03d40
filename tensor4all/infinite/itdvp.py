"""Infinite TDVP: time evolution of a uniform MPS by the time-dependent variational principle
(Haegeman, Lubich, Oseledets, Vandereycken and Verstraete, PRB 94, 165116 (2016), Sec. VI;
Vanderstraeten, Haegeman and Verstraete, SciPost Phys. Lect. Notes 7 (2019), Sec. 3).

The projection of ``-i H |psi>`` onto the tangent space of the uniform MPS of a cell, written in
the mixed gauge (``A_L``, ``A_R``, ``C``, ``A_C``), is the pair of linear equations

    d A_C[i] / dt = -i H_AC[i](A_C[i]),        d C[i] / dt = -i H_C[i](C[i])

for every site and bond of the cell, with the one-site and zero-site effective Hamiltonians of
VUMPS (:mod:`.environments`: fixed-point environments by GMRES), which depend on the state
through ``A_L = polar(A_C) polar(C)^dagger`` and ``A_R = polar(C)^dagger polar(A_C)`` (the
isometric factors; VUMPS's ``polar(A_C C^dagger)`` gave 3.0e-6 instead of 6.0e-7 in the Neel
quench below, grown by expansion alone to ``t = 1``). (Both
move forward, unlike the backward ``C`` step of the finite projector splitting: the uniform
state's ``C`` is not a separate site.) In imaginary time ``-i`` becomes ``-1`` and the state is
renormalized after each step.

Integration. With the environments frozen over a step, the local equations are solved exactly by
Krylov exponentials (:func:`tensor4all.linalg.krylov.expm_krylov`, Lanczos), but freezing them
makes the step first order (the paper's scheme). Here the environments follow the state inside
the step by the fourth-order commutator-free Lie-group method of Celledoni, Marthinsen and Owren
(Future Gener. Comput. Syst. 19, 341 (2003)), the exponential analogue of classical Runge-Kutta:
with ``F_k = h L(Y_k)`` the generator at the stage ``Y_k``,

    Y_2 = exp(F_1 / 2) y,   Y_3 = exp(F_2 / 2) y,   Y_4 = exp(F_3 - F_1 / 2) Y_2,
    y'  = exp(-F_1/12 + F_2/6 + F_3/6 + F_4/4) exp(F_1/4 + F_2/6 + F_3/6 - F_4/12) y,

four environment solves and five Krylov exponentials (of combined generators) per step.

Step control. The columns of ``A_L`` that carry small Schmidt values turn fast (``dA_L/dt =
(dA_C/dt - A_L dC/dt) C^-1``), which makes the equations stiff for an explicit method: for the
XX chain's Neel quench at bond dimension 16 (from ``t = 1``), one step of ``h = 0.05`` errs by
2e-7 in ``<Sz>``, of ``h = 0.00625`` by 8e-13. The exact flow keeps ``A_C = A_L C``; after a step
the gap ``max ||A_C - A_L C||, ||A_C - C A_R||`` (VUMPS's error) tracks the step's error (1.7e-7
and 7.3e-13 at those steps). Each ``dt`` of the time grid is therefore split into substeps,
doubled while a substep's gap exceeds ``tol`` (up to 16), halved again when the gaps fall far
below ``tol``. (Right after an expansion, whose new directions start from zero weight, the gap
has a floor that substeps do not lower; there the doubling stops once it no longer shrinks the
gap, and the bar is raised to twice the floor and eased back by a fifth at each ``dt``.)

Bond growth. One-site TDVP keeps the bond dimension, and a product state has nothing to evolve
into. Two mechanisms, chosen by what the Hamiltonian allows:

* nearest-neighbour terms: while the largest bond is below ``max_bond``, each ``dt`` is one step
  of :func:`.itebd.itebd` (fourth-order Suzuki, exact two-site gates, truncated to ``cutoff``),
  which grows the bonds as the state needs; TDVP takes over once the bond dimension binds, where
  it is the better method (the projection onto the manifold instead of a truncation per gate).
  (Subspace expansion from a product state was tried first: it lags the state, each expansion
  adding only the directions one application of ``H`` reaches, and the error grew as ``t^3``,
  1.3e-6 at ``t = 1`` for the Neel quench. From a grown state the same expansion keeps 3e-9.)
* any other range, and bonds still below ``max_bond`` in the TDVP phase: before each ``dt``,
  subspace expansion as in VUMPS (:func:`.vumps._expand`): the two-site ``H_AC2`` applied to
  ``A_L C A_R`` and projected onto the null spaces of ``A_L`` and ``A_R`` (the part of
  ``H |psi>`` that leaves the one-site tangent space); its leading singular vectors (relative
  weight above ``cutoff``, at most doubling a bond, up to ``max_bond``) extend ``A_L`` and ``A_R``
  with zero weight, and the steps fill them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import scipy.linalg

from ..linalg.krylov import expm_krylov
from ..tools.checks import check_bool, check_cutoff, check_positive_int, check_real, check_time_grid
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .environments import apply_hac, apply_hc, left_environments, right_environments
from .gauge import mixed_canonical
from .impo import InfiniteMPO, check_hermitian
from .imps import iMPS
from .itebd import _site_expect, check_observables, common_cell, itebd
from .vumps import _errors, _expand

__all__ = ["itdvp", "ITDVPResult"]

#: the relative error of each Krylov exponential (Saad's estimate)
KRYLOV_TOL = 1e-13
#: the relative residual of the environments' GMRES solves
ENV_TOL = 1e-13
#: the most substeps one ``dt`` is split into
MAX_SUBSTEPS = 16

# the fourth-order commutator-free method: each exponential a combination of the stages' generators
_CF4_STAGES = ((0.5,), (0.0, 0.5), (-0.5, 0.0, 1.0))  # Y_2, Y_3 from y; Y_4 from Y_2
_CF4_FINAL = ((0.25, 1 / 6, 1 / 6, -1 / 12), (-1 / 12, 1 / 6, 1 / 6, 0.25))  # applied first, then second


@dataclasses.dataclass
class ITDVPResult:
    """``times``; ``expectations[name]`` of shape ``(len(times), cell)`` (each site of the cell);
    at each time the ``energies`` per site and the largest bond (``bond_dims``); per ``dt`` the
    largest gap ``||A_C - A_L C||`` of its TDVP substeps (``errors``) and their number
    (``substeps``; 0: an iTEBD step that grew the bond); the final ``state``."""

    times: np.ndarray
    expectations: dict[str, np.ndarray]
    energies: np.ndarray
    bond_dims: np.ndarray
    errors: np.ndarray
    substeps: np.ndarray
    state: iMPS


class _Combined:
    """``sum_k c_k M_k`` for the local maps ``M_k`` of one site or bond (a Krylov operator)."""

    def __init__(self, maps: list[Callable[[np.ndarray], np.ndarray]], coefs: tuple, like: np.ndarray):
        self.terms = [(c, m) for c, m in zip(coefs, maps) if c != 0.0]
        self.like = like.shape
        self.shape = (like.size, like.size)
        self.dtype = like.dtype

    def matvec(self, x: np.ndarray) -> np.ndarray:
        x = x.reshape(self.like)
        out = None
        for c, m in self.terms:
            y = c * m(x)
            out = y if out is None else out + y
        return out.reshape(-1)


@dataclasses.dataclass
class _Generator:
    """The effective Hamiltonians of one state: ``H_AC[i]``, ``H_C[i]`` as maps, the energy per
    site and the environments (for the expansion)."""

    hac: list[Callable[[np.ndarray], np.ndarray]]
    hc: list[Callable[[np.ndarray], np.ndarray]]
    energy: float
    GL: list[np.ndarray]
    GR: list[np.ndarray]


class _Flow:
    """The TDVP flow of a cell: the generator of a state, and ``exp(tau sum_k c_k H_k)``."""

    def __init__(self, Ws: list[np.ndarray], imaginary: bool, dtype: Any):
        self.Ws, self.imaginary, self.dtype = Ws, imaginary, dtype
        self.XL: np.ndarray | None = None
        self.XR: np.ndarray | None = None

    def generator(self, AL: list[np.ndarray], AR: list[np.ndarray], C: list[np.ndarray]) -> _Generator:
        n, Ws = len(AL), self.Ws
        GL, e_l, self.XL = left_environments(AL, C[0], Ws, self.XL, ENV_TOL)
        GR, e_r, self.XR = right_environments(AR, C[0], Ws, self.XR, ENV_TOL)
        hac = [lambda x, i=i: apply_hac(GL[i], Ws[i], GR[(i + 1) % n], x) for i in range(n)]
        hc = [lambda x, i=i: apply_hc(GL[i], GR[i], x) for i in range(n)]
        return _Generator(hac, hc, 0.5 * (e_l + e_r) / n, GL, GR)

    def exp(self, h: float, gens: list[_Generator], coefs: tuple, AC: list, C: list) -> tuple[list, list]:
        """``exp(tau sum_k c_k H_k)`` (``tau = -i h``, or ``-h`` in imaginary time) on every
        ``A_C[i]`` and ``C[i]``."""
        n = len(AC)
        newAC = [self._exp(h, [g.hac[i] for g in gens], coefs, AC[i]) for i in range(n)]
        newC = [self._exp(h, [g.hc[i] for g in gens], coefs, C[i]) for i in range(n)]
        return newAC, newC

    def _exp(self, h: float, maps: list, coefs: tuple, x: np.ndarray) -> np.ndarray:
        x = x.astype(self.dtype)
        tau = -h if self.imaginary else -1j * h
        res = expm_krylov(_Combined(maps, coefs, x), x.reshape(-1), tau, tol=KRYLOV_TOL, max_iter=80, hermitian=True)
        return res.vector.reshape(x.shape)


def _polar(m: np.ndarray) -> np.ndarray:
    """The isometric factor ``U V^dagger`` of the SVD ``m = U S V^dagger``."""
    u, _, vh = scipy.linalg.svd(m, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    return u @ vh


def _isometries(AC: list[np.ndarray], C: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``A_L[i] = polar(A_C[i]) polar(C[i+1])^dagger``, ``A_R[i] = polar(C[i])^dagger polar(A_C[i])``."""
    n = len(AC)
    UC = [_polar(c) for c in C]
    AL, AR = [], []
    for i in range(n):
        dl, d, dr = AC[i].shape
        AL.append((_polar(AC[i].reshape(dl * d, dr)) @ UC[(i + 1) % n].conj().T).reshape(dl, d, dr))
        AR.append((UC[i].conj().T @ _polar(AC[i].reshape(dl, d * dr))).reshape(dl, d, dr))
    return AL, AR


@keyword_hints
def itdvp(
    H: InfiniteMPO,
    psi0: iMPS,
    t_final: float,
    dt: float,
    *,
    imaginary: bool = False,
    max_bond: int = 64,
    cutoff: float = 1e-16,
    tol: float = 1e-8,
    observables: dict[str, Any] | None = None,
    threads: int | None = None,
) -> ITDVPResult:
    """Evolve ``psi0`` by ``exp(-i H t)`` (``imaginary``: ``exp(-H t)``, renormalized) up to
    ``t_final`` on the grid ``dt`` (``t_final / dt`` a whole number) by one-site TDVP on the
    uniform MPS (fourth order, each ``dt`` split into substeps whose gap ``||A_C - A_L C||`` stays
    below ``tol``). The bonds grow up to ``max_bond``: by iTEBD steps while they are below it
    (nearest-neighbour ``H``; ``cutoff`` the discarded weight), by subspace expansion otherwise
    (directions of relative weight below ``cutoff`` are not added); see the module.
    ``observables`` (name -> operator name or matrix) are measured on every site of the cell at
    ``t = 0, dt, ..., t_final``, named in ``psi0``'s local space. A cell of odd length is doubled
    for the gates. ``H`` must be Hermitian (:class:`NonHermitianError`; the Krylov exponentials are Lanczos')."""
    if not isinstance(H, InfiniteMPO):
        raise Tensor4allTypeError(f"itdvp: H must be an InfiniteMPO, got {type(H).__name__}")
    if not isinstance(psi0, iMPS):
        raise Tensor4allTypeError(f"itdvp: psi0 must be an iMPS, got {type(psi0).__name__}")
    t_final, dt, steps = check_time_grid(t_final, dt, "itdvp")
    imaginary = check_bool(imaginary, "itdvp: imaginary")
    max_bond = check_positive_int(max_bond, "itdvp: max_bond")
    cutoff = check_cutoff(cutoff)
    tol = check_real(tol, "itdvp: tol", low=0.0)
    if tol <= 0:
        raise InvalidOptionError(f"itdvp: tol must be positive, got {tol}")
    threads = check_threads(threads)
    cell = common_cell(psi0, H, "itdvp")
    gates = all(factors[-1][0] - factors[0][0] <= 1 for _, _, factors in H.terms)
    cell = 2 * cell if gates and cell % 2 else cell  # iTEBD's cell is even
    observables = check_observables(observables, "itdvp")
    Ws = [H.tensors[i % H.cell] for i in range(cell)]
    reps = cell // psi0.cell
    dtype = np.result_type(psi0.dtype, H.dtype, float if imaginary else complex)
    st: dict[str, Any] = {
        "AL": [a.astype(dtype) for a in psi0.AL] * reps,
        "AR": [a.astype(dtype) for a in psi0.AR] * reps,
        "C": [c.astype(dtype) for c in psi0.C] * reps,
    }
    flow = _Flow(Ws, imaginary, dtype)
    times = np.linspace(0.0, steps * dt, steps + 1)
    records: dict[str, list] = {k: [] for k in observables}
    energies, bonds, errors, counts = [], [], [], []
    with blas_threads(threads, max_bond):
        check_hermitian(H, "itdvp")
        gen = flow.generator(st["AL"], st["AR"], st["C"])
        m, floor = 1, 0.0
        for step in range(steps + 1):
            energies.append(gen.energy)
            bonds.append(max(c.shape[0] for c in st["C"]))
            _measure(st, psi0.local, observables, records)
            if step == steps:
                break
            if gates and bonds[-1] < max_bond:
                _gate_step(st, H, psi0.local, dt, imaginary, max_bond, cutoff, dtype)
                flow.XL = flow.XR = None
                gen = flow.generator(st["AL"], st["AR"], st["C"])
                errors.append(0.0)
                counts.append(0)
                continue
            grown = _grow(st, flow, gen, max_bond, cutoff)
            expanded, gen = grown is not gen, grown
            gen, used, err, m, floored = _advance(st, flow, gen, dt, m, max(tol, floor), expanded)
            floor = 2 * err if floored else 0.8 * floor  # a floor raises the bar, which then eases back
            errors.append(err)
            counts.append(used)
        AL, AR, C = mixed_canonical(st["AL"], C0=st["C"][0])
        state = iMPS(AL, AR, C, psi0.local)
    out = {k: np.array(v) for k, v in records.items()}
    return ITDVPResult(times, out, np.array(energies), np.array(bonds), np.array(errors), np.array(counts), state)


def _gate_step(
    st: dict, H: InfiniteMPO, local: Any, dt: float, imaginary: bool, max_bond: int, cutoff: float, dtype: Any
) -> None:
    """One ``dt`` of iTEBD (fourth-order Suzuki, the bonds truncated to ``max_bond`` and ``cutoff``):
    the bond grows as the two-site gates need."""
    psi = iMPS._unchecked(st["AL"], st["AR"], st["C"], local)
    if any(np.count_nonzero(c - np.diag(np.diag(c))) for c in st["C"]):  # iTEBD needs diagonal C
        psi = iMPS._unchecked(*mixed_canonical(st["AL"], C0=st["C"][0]), local)
    new = itebd(H, psi, dt, dt, imaginary=imaginary, max_bond=max_bond, cutoff=cutoff).state
    st.update(AL=[a.astype(dtype) for a in new.AL], AR=[a.astype(dtype) for a in new.AR])
    st["C"] = [c.astype(dtype) for c in new.C]


def _advance(
    st: dict, flow: _Flow, gen: _Generator, dt: float, m: int, tol: float, expanded: bool
) -> tuple[_Generator, int, float, int, bool]:
    """``dt`` in ``m`` substeps, doubled until every substep's gap is below ``tol`` (or
    ``MAX_SUBSTEPS``), or, right after an expansion (``expanded``: the new directions start from
    zero weight and the gap has a floor), until doubling no longer shrinks it. Returns the
    generator of the new state, the substeps used, the largest gap, the substeps to start the next
    ``dt`` with and whether the gap hit a floor."""
    previous = np.inf
    while True:
        trial, g, worst = dict(st), gen, 0.0
        for _ in range(m):
            AC, C = _step(trial, flow, g, dt / m)
            AL, AR = _isometries(AC, C)
            worst = max(worst, _errors(AL, AR, AC, C))
            trial.update(AL=AL, AR=AR, C=C)
            g = flow.generator(AL, AR, C)
        if worst <= tol:
            st.update(trial)
            return g, m, worst, max(1, m // 2) if worst < tol / 32 else m, False
        if (expanded and worst > previous / 4) or m >= MAX_SUBSTEPS:
            st.update(trial)
            return g, m, worst, max(1, m // 4), expanded
        previous, m = worst, 2 * m


def _grow(st: dict, flow: _Flow, gen: _Generator, max_bond: int, cutoff: float) -> _Generator:
    """Subspace expansion of every bond below ``max_bond``; the generator of the grown state."""
    bond = min(c.shape[0] for c in st["C"])
    if bond >= max_bond:
        return gen
    add = min(max(c.shape[0] for c in st["C"]), max_bond - bond)
    if not _expand(st, flow.Ws, gen.GL, gen.GR, add, float(np.sqrt(cutoff))):
        return gen
    _cap(st, max_bond)
    flow.XL = flow.XR = None
    return flow.generator(st["AL"], st["AR"], st["C"])


def _cap(st: dict, max_bond: int) -> None:
    """Bonds that grew past ``max_bond`` (a cell whose bonds differ) lose their last new directions."""
    n = len(st["C"])
    keep = [min(c.shape[0], max_bond) for c in st["C"]]
    if all(k == c.shape[0] for k, c in zip(keep, st["C"])):
        return
    st["AL"] = [st["AL"][i][: keep[i], :, : keep[(i + 1) % n]] for i in range(n)]
    st["AR"] = [st["AR"][i][: keep[i], :, : keep[(i + 1) % n]] for i in range(n)]
    st["C"] = [st["C"][i][: keep[i], : keep[i]] for i in range(n)]


def _step(st: dict, flow: _Flow, gen: _Generator, h: float) -> tuple[list, list]:
    """One step ``h`` of the fourth-order commutator-free method (see the module); ``(A_C, C)``
    normalized."""
    n = len(st["C"])
    AC0 = [np.tensordot(st["AL"][i], st["C"][(i + 1) % n], (2, 0)) for i in range(n)]
    C0 = st["C"]
    gens = [gen]
    Y2 = flow.exp(h, gens, _CF4_STAGES[0], AC0, C0)
    gens.append(flow.generator(*_isometries(*Y2), Y2[1]))
    Y3 = flow.exp(h, gens, _CF4_STAGES[1], AC0, C0)
    gens.append(flow.generator(*_isometries(*Y3), Y3[1]))
    Y4 = flow.exp(h, gens, _CF4_STAGES[2], *Y2)
    gens.append(flow.generator(*_isometries(*Y4), Y4[1]))
    half = flow.exp(h, gens, _CF4_FINAL[0], AC0, C0)
    AC, C = flow.exp(h, gens, _CF4_FINAL[1], *half)
    return [a / np.linalg.norm(a) for a in AC], [c / np.linalg.norm(c) for c in C]


def _measure(st: dict, local: Any, observables: dict, records: dict) -> None:
    if not observables:
        return
    AL, C = st["AL"], st["C"]
    n = len(AL)
    psi = iMPS._unchecked(AL, st["AR"], C, local)
    thetas = [np.tensordot(AL[i], C[(i + 1) % n], (2, 0)) for i in range(n)]
    for name, op in observables.items():
        records[name].append([_site_expect(t / np.linalg.norm(t), psi, op, i) for i, t in enumerate(thetas)])
