"""Thermodynamics by derivatives: :func:`thermodynamics` differentiates the cooling of the
purification itself with tidu, so the specific heat and a susceptibility are derivatives taken
through the computed evolution, not finite differences of noisy energies.

The trick that gives a whole curve from one pass: the Hamiltonian enters the evolution as
``s H - h sum_i O_i`` with ``s = 1`` and ``h = 0`` traced scalars. With ``n`` steps of
``dbeta s`` to ``beta = n dbeta``, every quantity ``q(s)`` of the run is ``q(beta s)``, so
``d/ds = beta d/d beta`` at every output beta of the same run. Two things can be differentiated
(``differentiate=``):

* ``"energy"`` (default): the measured energy ``E = <H>`` of the purification, by one forward-mode
  pass (``tidu.jvp``): ``C = -beta^2 dE/d beta = -beta dE/ds``; with a field, the measured
  ``M = <sum_i O_i>`` and ``chi = dM/dh`` (a second pass, the tangent on ``h``). One derivative
  of a measured quantity: about half the cost of the second derivative of ``ln Z``, and several
  times less sensitive to the truncation (the XX chain L = 12 to beta = 6, ``dbeta=0.2``,
  ``cutoff=1e-14``: C within 5.7e-6 against 2.8e-5; ``cutoff=1e-16``: 6.6e-7 against 3.8e-6).
* ``"log_z"``: ``f(s) = ln Z(beta s)``, ``f'(1) = -beta E`` and ``f''(1) = C``, forward over
  forward mode (two nested ``tidu.jvp``): the derivatives of the computed (Trotterized, truncated)
  ``ln Z`` itself, so ``E`` and ``C`` are exactly those of one partition function (thermodynamic
  consistency to rounding); ``d^2 ln Z / dh^2 = beta chi`` with the tangent on ``h``.

``engine="tangent"`` (the default of the energy path in forward mode, for real Hamiltonians of one- and
two-site terms on neighbours and a real field: ``"Sy"`` takes ``"traced"``) carries that forward
derivative beside the concrete, block-sparse cooling (:mod:`.tangent_path`): the same derivative,
without tracing (the XX chain L = 32 to beta = 10 at ``cutoff=1e-17``: C within 5e-7 in 3.5 minutes,
where the dense traced run takes hours);
``engine="traced"`` is tidu through the traced run.

``mode="reverse"`` takes reverse mode (``tidu.grad``; forward over reverse for ``ln Z''``) at the
final beta only (one output per backward pass), a check of the forward result.

The traced evolution keeps the norm in the state (``normalize=False``): ``ln Z = ln N + 2 ln
||psi(beta)||`` is one differentiable ``MPS.norm`` per output (computed with exact power-of-two
scaling), fine while ``beta |E_0| / 2`` stays below ~700 (the float range of the site tensors).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import tenferro as tf
import tidu

from ..algorithms.tebd import tebd
from ..networks.mpo import MPO, expectation
from ..operators.gates import bonds_from_opsum
from ..operators.opsum import OpSum
from ..sites.local_spaces import local_space
from ..tools.checks import check_callable, check_cutoff, check_positive_int
from ..tools.errors import InvalidOptionError, NonHermitianError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from ..tools.threads import blas_threads
from .purification import check_conserve, beta_grid, check_thermal_hamiltonian, purified_hamiltonian, thermal_start
from .purified import purified_space
from .results import Thermodynamics
from .tangent_path import tangent_cooling

__all__ = ["thermodynamics", "MODES", "DIFFERENTIATE", "ENGINES"]

#: how :func:`thermodynamics` differentiates
MODES = ("forward", "reverse")
#: what :func:`thermodynamics` differentiates (see the module docstring)
DIFFERENTIATE = ("energy", "log_z")
#: how the forward derivative of the energy path is carried: ``"tangent"`` (the concrete run with the
#: tangent of each site, :mod:`.tangent_path`) or ``"traced"`` (tidu through a traced run)
ENGINES = ("tangent", "traced")


class _Cooling:
    """``s, h -> (ln Z, <H>, <M>)`` at the output betas: traced bond matrices ``s h_b - h f_b`` on
    the doubled sites, one unnormalized ``tebd`` run; ``ln N + 2 ln ||psi||``, the expectation of
    ``H (x) 1`` and (with a field) of ``M = sum_i O_i (x) 1`` at each output."""

    def __init__(self, H: Any, field: str | None, psi: Any, log_states: float, n: int, dbeta: float, opts: dict):
        space = purified_space(H.local)
        charge = psi.conserve
        self.h0 = bonds_from_opsum(H.opsum, space, H.L, "thermodynamics").nn
        self.H2 = purified_hamiltonian(H, charge)
        self.f0 = self.M2 = None
        if field is not None:
            os = OpSum()
            for i in range(H.L):
                os += (1.0, field, i)
            self.f0 = bonds_from_opsum(os, space, H.L, "thermodynamics").nn
            self.M2 = MPO.from_opsum(os, H.L, space.name, conserve=charge)
        self.psi, self.log_states, self.n, self.dbeta, self.opts = psi, log_states, n, dbeta, opts

    def bonds(self, s: Any, h: Any) -> list[Any]:
        out = []
        for b, m in enumerate(self.h0):
            term = None if m is None else tf.asarray(np.asfortranarray(m)) * s
            if self.f0 is not None and self.f0[b] is not None and h is not None:
                f = tf.asarray(np.asfortranarray(self.f0[b])) * (-h)
                term = f if term is None else term + f
            out.append(term)
        return out

    def __call__(self, s: Any, h: Any = None) -> tuple[Any, Any, Any]:
        half = 0.5 * self.dbeta
        obs = {
            "log_norm": lambda state, t: tf.log(state.norm()),
            "energy": lambda state, t: expectation(state, self.H2),
        }
        if self.M2 is not None:
            obs["field"] = lambda state, t: expectation(state, self.M2)
        res = tebd(self.bonds(s, h), self.psi, self.n * half, half, imaginary=True, normalize=False, observables=obs,
                   **self.opts)  # fmt: skip
        o = res.observables
        return self.log_states + 2.0 * o["log_norm"], o["energy"], o.get("field")


def _second(f: Any, x: Any) -> tuple[Any, Any, Any]:
    """``(f, f', f'')`` at ``x`` by forward over forward mode."""
    one = tf.asarray(1.0)

    def first(y: Any) -> Any:
        return tidu.jvp(f, (y,), (one,))

    (v, d1), (_, d2) = tidu.jvp(first, (x,), (one,))
    return v, d1, d2


def _second_reverse(f: Any, x: Any) -> tuple[Any, Any, Any]:
    """``(f, f', f'')`` of a scalar ``f`` at ``x``: ``tidu.value_and_grad``, then forward over reverse."""
    v, d1 = tidu.value_and_grad(f)(x)
    _, d2 = tidu.jvp(tidu.grad(f), (x,), (tf.asarray(1.0),))
    return v, d1, d2


def _first(f: Any, x: Any, reverse: bool) -> tuple[Any, Any, Any]:
    """``f(x) = (ln Z, q)``: ``(ln Z, q, dq/dx)`` by one forward pass (``tidu.jvp``), or, for a scalar
    ``q``, by reverse mode (``ln Z`` the auxiliary output)."""
    if reverse:
        (q, log_z), d = tidu.value_and_grad(lambda y: f(y)[::-1], has_aux=True)(x)
        return log_z, q, d
    (log_z, q), (_, d) = tidu.jvp(f, (x,), (tf.asarray(1.0),))
    return log_z, q, d


def _np(x: Any) -> np.ndarray:
    return np.real(np.asarray(x.numpy() if hasattr(x, "numpy") else x, dtype=complex)).reshape(-1)


@keyword_hints
def thermodynamics(
    H: Any,
    beta: float,
    *,
    dbeta: float = 0.1,
    order: int = 4,
    max_bond: int = 128,
    cutoff: float = 1e-12,
    conserve: str | None = None,
    sector: Any = None,
    field: str | None = None,
    every: int = 1,
    differentiate: str = "energy",
    mode: str = "forward",
    engine: str | None = None,
    threads: int | None = None,
    callback: Callable[[Any], Any] | None = None,
) -> Thermodynamics:
    """``ln Z``, the energy, the specific heat and (with ``field``) the magnetization and
    susceptibility along ``0, every dbeta, ..., beta``, the last two and the specific heat as tidu
    derivatives through the cooling of the purification (see the module docstring).

    Args:
        H: an :class:`MPO` compiled from an OpSum (as :func:`thermal_state`), one- and two-site terms
            (the evolution is TEBD).
        beta, dbeta, order, max_bond, cutoff, sector, every, threads: as for
            :func:`thermal_state` (``order`` 2 or 4).
        conserve: None (default: with ``engine="tangent"`` the charge ``H`` conserves, as
            :func:`thermal_state`; with ``"traced"`` dense, a traced run on symmetric sites being slower
            at the sizes measured), ``"none"`` (dense) or a charge as for :func:`thermal_state`.
        field: a Hermitian operator name of ``H.local`` (``"Sz"``; a non-Hermitian one such as ``"S+"``
            raises :class:`~tensor4all.NonHermitianError`; a complex one, ``"Sy"``, takes
            ``engine="traced"``): the susceptibility of ``M = sum_i O_i``,
            ``chi = d<M>/dh = (1/beta) d^2 ln Z / dh^2`` for ``H - h M`` at ``h = 0`` (``beta (<M^2> -
            <M>^2)`` when ``M`` commutes with ``H``). A field that splits degenerate singular values of a
            dense run (``Sz`` of a chain that conserves it) needs ``conserve``.
        differentiate: ``"energy"`` (default: ``C = -beta^2 d<H>/d beta`` and ``chi = d<M>/dh``, one
            forward pass each) or ``"log_z"`` (``E = -d ln Z / d beta``, ``C = beta^2 d^2 ln Z / d beta^2``,
            ``chi = (1/beta) d^2 ln Z / dh^2``, forward over forward mode).
        mode: ``"forward"`` (default: every output beta from one run per derivative) or
            ``"reverse"`` (reverse mode, at the final ``beta`` only).
        engine: how the forward derivative is carried (``differentiate="energy"``): ``"tangent"`` (the
            default there: the concrete, block-sparse run with each site's tangent, the same derivative
            as tidu's forward mode through the traced run, several times faster at large bonds,
            :mod:`tensor4all.thermal.tangent_path`) or ``"traced"`` (tidu through a traced run; the only
            engine of ``"log_z"`` and of reverse mode).
        callback: called with each step's :class:`EvolutionRecord` of each traced run (the cooling,
            then with ``field`` the run in the field: ``2 beta / dbeta`` calls).

    Returns:
        :class:`Thermodynamics` (``betas`` the output betas; at ``beta = 0`` the energy is
        ``Tr H / N`` of the start, the specific heat and susceptibility 0 by their definitions).
    """
    what = "thermodynamics"
    H = check_thermal_hamiltonian(H, what)
    beta, dbeta, n = beta_grid(beta, dbeta, what)
    if isinstance(order, bool) or order not in (2, 4):
        raise InvalidOptionError(f"{what}: order must be 2 or 4, got {order!r}")
    opts = dict(
        order=order,
        max_bond=check_positive_int(max_bond, f"{what}: max_bond"),
        cutoff=check_cutoff(cutoff, f"{what}: cutoff"),
        every=check_positive_int(every, f"{what}: every", InvalidOptionError),
        threads=threads,
        callback=check_callable(callback, f"{what}: callback"),
    )
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidOptionError(f"{what}: mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
    if not isinstance(differentiate, str) or differentiate not in DIFFERENTIATE:
        raise InvalidOptionError(
            f"{what}: differentiate must be one of {', '.join(map(repr, DIFFERENTIATE))}, got {differentiate!r}"
        )
    if field is not None:
        if not isinstance(field, str):
            raise Tensor4allTypeError(f"{what}: field must be an operator name such as 'Sz', got {field!r}")
        _check_field(H, field, what)
    plain = _tangent_blocker(H, field, what)
    if engine is None:
        engine = "tangent" if differentiate == "energy" and mode == "forward" and plain is None else "traced"
    if not isinstance(engine, str) or engine not in ENGINES:
        raise InvalidOptionError(f"{what}: engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if engine == "tangent" and (differentiate != "energy" or mode != "forward"):
        raise InvalidOptionError(
            f"{what}: engine='tangent' carries one forward derivative of the energy path; "
            f"differentiate={differentiate!r}, mode={mode!r} needs engine='traced'"
        )
    if engine == "tangent" and plain is not None:
        raise InvalidOptionError(f"{what}: engine='tangent' needs {plain}; use engine='traced'")
    if engine == "tangent":
        charge = check_conserve(conserve, H, what)
    else:
        charge = None if conserve is None else check_conserve(conserve, H, what)  # traced runs: dense by default
    psi, log_states = thermal_start(H, charge, sector, what)  # NonConservingError for a sector H mixes
    if engine == "tangent":
        with blas_threads(threads, opts["max_bond"]):
            return _by_tangents(H, field, psi, log_states, n, dbeta, opts, charge)
    cool = _Cooling(H, field, psi, log_states, n, dbeta, opts)
    steps = [0] + [k for k in range(1, n + 1) if k % opts["every"] == 0 or k == n]
    betas = np.asarray(steps, dtype=float) * dbeta
    reverse = mode == "reverse"
    if reverse:
        betas = betas[-1:]
    last = (lambda x: x[-1]) if reverse else (lambda x: x)
    one, zero = tf.asarray(1.0), tf.asarray(0.0)
    h0 = zero if field else None
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(betas > 0, 1.0 / np.where(betas > 0, betas, 1.0), 0.0)

    def at(s: Any, h: Any, k: int) -> tuple[Any, Any]:  # (ln Z, the k-th output of the cooling)
        out = cool(s, h)
        return last(out[0]), last(out[k])

    if differentiate == "energy":
        log_z, energy, de = map(_np, _first(lambda s: at(s, h0, 1), one, reverse))
        heat = -betas * de
    else:
        second = _second_reverse if reverse else _second
        log_z, d1, heat = map(_np, second(lambda s: last(cool(s, h0)[0]), one))
        energy = -d1 * inv
        if betas[0] == 0.0:
            energy[0] = _infinite_temperature_energy(H, charge, psi)
    mag = chi = None
    if field is not None:
        if differentiate == "energy":
            _, mag, chi = map(_np, _first(lambda h: at(one, h, 2), zero, reverse))
        else:
            second = _second_reverse if reverse else _second
            _, m1, m2 = map(_np, second(lambda h: last(cool(one, h)[0]), zero))
            mag, chi = m1 * inv, m2 * inv
            if betas[0] == 0.0:
                mag[0] = _infinite_temperature_field(H, field, psi)
    return Thermodynamics(betas, log_z, energy, heat, mag, chi, field, mode, differentiate)


def _check_field(H: Any, field: str, what: str) -> None:
    """``field`` an operator of ``H.local`` (:class:`UnknownOperatorError` naming the valid ones) and
    Hermitian (:class:`NonHermitianError`): ``H - h M`` with ``M = sum_i O_i`` is a Hamiltonian, and
    ``<M>`` a real magnetization, only for ``O = O^dagger``."""
    space = local_space(H.local)
    if not _hermitian(space.matrix(field)):  # UnknownOperatorError names the valid ones
        ok = [name for name in space.operator_names() if name != "Id" and _hermitian(space.matrix(name))]
        hint = " (the Hermitian parts of S+ and S- are Sx and Sy)" if "Sx" in ok and field in ("S+", "S-") else ""
        raise NonHermitianError(
            f"{what}: field={field!r} is not Hermitian ({field}^dagger != {field}), so H - h sum_i {field}_i is no "
            f"Hamiltonian and its susceptibility is undefined; expected a Hermitian operator of {H.local!r}: "
            f"{', '.join(map(repr, ok))}{hint}"
        )


def _hermitian(m: np.ndarray) -> bool:
    return bool(np.allclose(m, m.conj().T, rtol=0.0, atol=1e-12 * max(1.0, float(np.abs(m).max()))))


def _is_complex(terms: Any) -> bool:
    return any(h is not None and np.iscomplexobj(h) and np.any(np.imag(h)) for h in terms)


def _tangent_blocker(H: Any, field: str | None, what: str) -> str | None:
    """Why the tangent engine cannot run ``H`` in the ``field`` (None if it can): it takes real,
    concrete one- and two-site terms on neighbours and a real field (its arithmetic is real: the
    imaginary part of ``Sy`` would be dropped, and its susceptibility come out 0)."""
    space = purified_space(H.local)
    bonds = bonds_from_opsum(H.opsum, space, H.L, what)
    if bonds.long:
        return "terms on neighbouring sites only"
    if bonds.traced:
        return "concrete couplings (these are tidu tracers)"
    if _is_complex(bonds.nn):
        return "a real Hamiltonian"
    if field is not None and _is_complex([space.matrix(field)]):
        return f"a real field (field={field!r} has complex matrix elements)"
    return None


def _by_tangents(
    H: Any, field: str | None, psi: Any, log_states: float, n: int, dbeta: float, opts: dict, charge: Any
) -> Thermodynamics:
    """The energy path with ``engine="tangent"`` (:mod:`.tangent_path`)."""
    space = purified_space(H.local)
    log_z, energy, de = tangent_cooling(
        H, space, psi, log_states, n, dbeta, opts, purified_hamiltonian(H, charge), None
    )
    steps = [0] + [k for k in range(1, n + 1) if k % opts["every"] == 0 or k == n]
    betas = np.asarray(steps, dtype=float) * dbeta
    mag = chi = None
    if field is not None:
        os = OpSum()
        for i in range(H.L):
            os += (1.0, field, i)
        fb = bonds_from_opsum(os, space, H.L, "thermodynamics")
        M2 = MPO.from_opsum(os, H.L, space.name, conserve=charge)
        _, mag, chi = tangent_cooling(H, space, psi, log_states, n, dbeta, opts, M2, fb)
    return Thermodynamics(betas, log_z, energy, -betas * de, mag, chi, field, "forward", "energy", "tangent")


def _infinite_temperature_energy(H: Any, charge: Any, psi: Any) -> float:
    return float(np.real(complex(expectation(psi, purified_hamiltonian(H, charge)))))


def _infinite_temperature_field(H: Any, field: str, psi: Any) -> float:
    return float(np.real(np.sum(np.asarray(psi.expect(field, local=purified_space(H.local).name)))))
