"""Real-time evolution of a purified thermal state, with the ancilla disentangler of Karrasch,
Bardarson and Moore (PRL 108, 227206 (2012)): :func:`evolve_thermal`.

A purification ``|psi> = (rho^{1/2} (x) 1) |Phi>`` of ``rho`` (the maximally entangled pairs
``|Phi>``, :mod:`.purified`) evolved by ``H`` on the physical sites, ``e^{-i t H} (x) 1``, holds
``rho(t) = e^{-i t H} rho e^{i t H}`` in its physical sites, but its operator ``e^{-i t H}
rho^{1/2}`` grows the entanglement of the whole evolution operator with ``t``. Any unitary on the
ancillas leaves every physical expectation value unchanged; the *backwards* choice evolves them
with ``-H^T``: since ``(A (x) 1)|Phi> = (1 (x) A^T)|Phi>``,

    ``(e^{-i t H} (x) e^{i t H^T}) (rho^{1/2} (x) 1)|Phi> = (e^{-i t H} rho^{1/2} e^{i t H} (x) 1)|Phi>``,

the purification of ``rho(t)^{1/2}`` itself, whose entanglement is that of the evolved density
matrix (a thermal state of ``H`` does not change at all; after a quench it grows far more slowly:
the measured figures are in ``docs/how-to/thermal.md``). On the doubled chain the bond terms are
``h_b (x) 1 - 1 (x) h_b^T``: the same TEBD (``tensor4all.tebd``), one gate per bond.

The bond terms come from ``H.opsum`` (one- and two-site terms on neighbouring sites, fermion hopping
included: the Jordan-Wigner strings of neighbours are local); a term beyond neighbours raises
:class:`InvalidOptionError`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..algorithms.evolution import EvolutionResult, Observables
from ..algorithms.tebd import tebd
from ..networks.mpo import MPO
from ..networks.mps import MPS
from ..operators.gates import bonds_from_opsum
from ..sites.charges import NonConservingError
from ..sites.local_spaces import local_space
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads, check_threads
from .purification import check_thermal_hamiltonian, purified_hamiltonian
from .purified import pair_index, purified_space
from .results import ThermalResult

__all__ = ["evolve_thermal", "DISENTANGLERS", "ancilla_bonds"]

#: the ancilla disentanglers of :func:`evolve_thermal` (None: the ancillas are left alone)
DISENTANGLERS = ("backwards",)


def _doubled(m: np.ndarray, space: Any, ancilla: bool) -> np.ndarray:
    """A two-site matrix ``m`` (``np.kron`` order of two physical sites) as the two-site matrix on
    the doubled sites: ``m (x) 1`` on the physical halves, or ``1 (x) m`` on the ancilla halves
    (rows and columns in the doubled basis order of :func:`.purified.pair_index`)."""
    d = space.dim
    m4 = np.asarray(m).reshape(d, d, d, d)  # (out1, out2, in1, in2)
    eye = np.eye(d)
    if ancilla:  # [s1 a1 s2 a2; t1 b1 t2 b2] = d(s1 t1) d(s2 t2) m[a1 a2; b1 b2]
        big = np.einsum("st,uv,abcd->saubtcvd", eye, eye, m4)
    else:
        big = np.einsum("abcd,xy,zw->axbzcydw", m4, eye, eye)
    order = [s * d + a for (s, a), _ in sorted(pair_index(space).items(), key=lambda x: x[1])]
    big = big.reshape(d * d, d * d, d * d, d * d)[np.ix_(order, order, order, order)]
    return big.reshape(d**4, d**4)


def ancilla_bonds(H: MPO, disentangle: str | None, what: str) -> list[Any]:
    """The bond terms of the evolution on the doubled chain: ``h_b (x) 1`` and, with
    ``disentangle="backwards"``, ``- 1 (x) h_b^T`` (see the module)."""
    space = local_space(H.local)
    phys = bonds_from_opsum(H.opsum, space, H.L, what)
    if phys.long:
        pairs = ", ".join(map(str, sorted(phys.long)))
        raise InvalidOptionError(
            f"{what}: H has terms beyond neighbouring sites ({pairs}); the purification's real-time TEBD "
            "takes one- and two-site terms on neighbours only"
        )
    out: list[Any] = []
    for h in phys.nn:
        if h is None:
            out.append(None)
            continue
        h = np.asarray(h)
        term = _doubled(h, space, ancilla=False)
        if disentangle == "backwards":
            term = term - _doubled(h.T, space, ancilla=True)
        out.append(term)
    return out


@keyword_hints
def evolve_thermal(
    state: MPS | ThermalResult,
    H: MPO,
    t_final: float,
    dt: float,
    *,
    disentangle: str | None = "backwards",
    order: int = 4,
    max_bond: int = 128,
    cutoff: float = 1e-10,
    observables: dict[str, Any] | None = None,
    every: int = 1,
    threads: int | None = None,
    callback: Callable[[Any], Any] | None = None,
) -> EvolutionResult:
    """Evolve a purified state (``thermal_state(...).state``, or the :class:`ThermalResult`) in real
    time by ``H`` on its physical sites: ``rho(t) = e^{-i t H} rho e^{i t H}`` (a quench when ``H`` is
    not the Hamiltonian it was cooled with).

    Args:
        state: a purification on the doubled sites of ``H.local`` (:func:`thermal_state`'s ``state``).
        H: the Hamiltonian of the evolution, an :class:`MPO` compiled from an OpSum, one- and two-site
            terms on neighbours.
        t_final, dt: the final time (a whole number of steps) and the step.
        disentangle: ``"backwards"`` (default: the ancillas evolve by ``-H^T``, Karrasch, Bardarson and
            Moore; physical values unchanged, far less entanglement) or None (the ancillas stay).
        order, max_bond, cutoff, every, threads, callback: as for :func:`tensor4all.tebd`.
        observables: ``name -> spec`` as for :func:`tensor4all.tebd`, on the physical sites
            (``"Sz"`` measures ``Sz (x) 1``; ``"energy"`` is ``<H>``).

    Returns:
        :class:`~tensor4all.algorithms.evolution.EvolutionResult` (complex128 state on the doubled sites).
    """
    what = "evolve_thermal"
    if isinstance(state, ThermalResult):
        state = state.state
    if not isinstance(state, MPS):
        raise Tensor4allTypeError(
            f"{what}: state must be a purified MPS or a ThermalResult, got {type(state).__name__}"
        )
    H = check_thermal_hamiltonian(H, what)
    if disentangle is not None and (not isinstance(disentangle, str) or disentangle not in DISENTANGLERS):
        raise InvalidOptionError(
            f"{what}: disentangle must be None or one of {', '.join(map(repr, DISENTANGLERS))}, got {disentangle!r}"
        )
    doubled = purified_space(H.local)
    if state.L != H.L or any(d != doubled.dim for d in state.phys_dims):
        raise InvalidOptionError(
            f"{what}: state has {state.L} sites of dimensions {sorted(set(state.phys_dims))}, but H's purification "
            f"has {H.L} sites of dimension {doubled.dim} ({doubled.name!r}); give thermal_state(H0, ...).state of "
            "a Hamiltonian on the same sites"
        )
    threads = check_threads(threads)
    with blas_threads(threads, max_bond if isinstance(max_bond, int) else None):  # the bond terms, the run
        H2 = _doubled_hamiltonian(H, state, what)
        measured = Observables(observables, H.L, doubled.name, what)
        specs = {name: _bound(f, H2) for name, f in measured.funcs.items()}
        bonds = ancilla_bonds(H, disentangle, what)
        return tebd(bonds, state, t_final, dt, order=order, max_bond=max_bond, cutoff=cutoff, observables=specs,
                    every=every, threads=threads, callback=callback)  # fmt: skip


def _doubled_hamiltonian(H: MPO, state: MPS, what: str) -> MPO:
    """``H (x) 1`` compiled with the charge ``state`` conserves; an ``H`` that does not conserve it (a
    transverse-field quench of a state cooled with ``conserve="Sz"``) raises
    :class:`NonConservingError` naming the remedy: the state's sectors dropped (``state.dense()``)."""
    try:
        return purified_hamiltonian(H, state.conserve)
    except NonConservingError as e:
        raise NonConservingError(
            f"{what}: the state conserves {state.conserve} (it was cooled in that symmetry), but H does not "
            f"({str(e).split(';')[0]}); evolve the state without its sectors, evolve_thermal(th.state.dense(), H, "
            "...) (or cool with conserve='none'), or give an H that conserves the state's charge"
        ) from None


def _bound(f: Callable[[MPS, float, Any], Any], H2: MPO) -> Callable[[MPS, float], Any]:
    return lambda psi, t: f(psi, t, H2)
