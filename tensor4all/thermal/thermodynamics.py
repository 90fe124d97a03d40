"""Thermodynamics as derivatives of ``ln Z``: :func:`thermodynamics` differentiates the cooling of
the purification itself with tidu, so the energy, the specific heat and a susceptibility are
derivatives of the computed ``ln Z``, not finite differences of noisy energies.

The trick that gives a whole curve from one pass: the Hamiltonian enters the evolution as
``s H - h sum_i O_i`` with ``s = 1`` and ``h = 0`` traced scalars. With ``n`` steps of
``dbeta s`` to ``beta = n dbeta``, ``f(s) = ln Z(beta s)``, so ``f'(1) = beta d ln Z / d beta =
-beta E`` and ``f''(1) = beta^2 d^2 ln Z / d beta^2 = C`` at every output beta of the same run
(the step scales with ``s``: the derivatives are exactly those of the Trotterized ``ln Z``, whose
error is ``O(dbeta^4)`` for the fourth-order splitting). Forward mode over forward mode (two
nested ``tidu.jvp``) carries the first and second derivative along the evolution, so one run gives
``ln Z``, ``E`` and ``C`` at every beta of the grid; ``d^2 ln Z / dh^2 = beta chi`` is a second run
with the tangent on ``h``. ``mode="reverse"`` takes ``tidu.grad`` and forward-over-reverse at the
final beta only (reverse mode gives one output per backward pass), a check of the forward result.

The traced evolution keeps the norm in the state (``normalize=False``): ``ln Z = ln N + 2 ln
||psi(beta)||`` is one differentiable ``MPS.norm`` per output (computed with exact power-of-two
scaling), fine while ``beta |E_0| / 2`` stays below ~700 (the float range of the site tensors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tenferro as tf
import tidu

from ..algorithms.tebd import tebd
from ..networks.mpo import expectation
from ..operators.gates import bonds_from_opsum
from ..operators.opsum import OpSum
from ..sites.local_spaces import local_space
from ..tools.checks import check_cutoff, check_positive_int
from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.keywords import keyword_hints
from .purification import check_conserve, beta_grid, check_thermal_hamiltonian, purified_hamiltonian
from .purified import infinite_temperature_sites, purified_space
from .results import Thermodynamics

__all__ = ["thermodynamics", "MODES"]

#: how :func:`thermodynamics` differentiates
MODES = ("forward", "reverse")


class _Cooling:
    """``s, h -> ln Z`` at the output betas: traced bond matrices ``s h_b - h f_b`` on the doubled
    sites, one unnormalized ``tebd`` run, ``ln N + 2 ln ||psi||`` at each output."""

    def __init__(self, H: Any, field: str | None, psi: Any, log_states: float, n: int, dbeta: float, opts: dict):
        space = purified_space(H.local)
        self.h0 = bonds_from_opsum(H.opsum, space, H.L, "thermodynamics").nn
        self.f0 = None
        if field is not None:
            os = OpSum()
            for i in range(H.L):
                os += (1.0, field, i)
            self.f0 = bonds_from_opsum(os, space, H.L, "thermodynamics").nn
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

    def __call__(self, s: Any, h: Any = None) -> Any:
        half = 0.5 * self.dbeta
        res = tebd(
            self.bonds(s, h),
            self.psi,
            self.n * half,
            half,
            imaginary=True,
            normalize=False,
            observables={"log_norm": lambda state, t: tf.log(state.norm())},
            **self.opts,
        )
        return self.log_states + 2.0 * res.observables["log_norm"]


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
    mode: str = "forward",
    threads: int | None = None,
) -> Thermodynamics:
    """``ln Z``, the energy, the specific heat and (with ``field``) the magnetization and
    susceptibility along ``0, every dbeta, ..., beta``, as tidu derivatives of the purification's
    ``ln Z`` (see the module docstring).

    Args:
        H: an :class:`MPO` compiled from an OpSum (as :func:`thermal_state`), one- and two-site terms
            (the evolution is TEBD).
        beta, dbeta, order, max_bond, cutoff, sector, every, threads: as for
            :func:`thermal_state` (``order`` 2 or 4).
        conserve: None (default: dense; a traced run on symmetric sites is slower at the sizes
            measured) or a charge as for :func:`thermal_state`.
        field: an operator name of ``H.local`` (``"Sz"``): the susceptibility of ``M = sum_i O_i``,
            ``chi = beta (<M^2> - <M>^2) = (1/beta) d^2 ln Z / dh^2`` for ``H - h M`` at ``h = 0``.
        mode: ``"forward"`` (default: every output beta from one forward-over-forward run) or
            ``"reverse"`` (reverse mode and forward over reverse, at the final ``beta`` only).

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
    )
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidOptionError(f"{what}: mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
    if field is not None:
        if not isinstance(field, str):
            raise Tensor4allTypeError(f"{what}: field must be an operator name such as 'Sz', got {field!r}")
        local_space(H.local).factor(field)  # UnknownOperatorError names the valid ones
    charge = None if conserve is None else check_conserve(conserve, H, what)  # traced runs: dense by default
    psi, log_states = infinite_temperature_sites(H.local, H.L, charge, sector, what)
    cool = _Cooling(H, field, psi, log_states, n, dbeta, opts)
    steps = [0] + [k for k in range(1, n + 1) if k % opts["every"] == 0 or k == n]
    betas = np.asarray(steps, dtype=float) * dbeta
    one, zero = tf.asarray(1.0), tf.asarray(0.0)
    if mode == "forward":
        v, d1, d2 = _second(lambda s: cool(s, zero if field else None), one)
        log_z, d1, d2 = _np(v), _np(d1), _np(d2)
    else:
        betas = betas[-1:]
        v, d1, d2 = _second_reverse(lambda s: cool(s, zero if field else None)[-1], one)
        log_z, d1, d2 = _np(v), _np(d1), _np(d2)
    with np.errstate(divide="ignore", invalid="ignore"):
        energy = np.where(betas > 0, -d1 / np.where(betas > 0, betas, 1.0), np.nan)
    if betas[0] == 0.0:
        energy[0] = _infinite_temperature_energy(H, charge, psi)
    mag = chi = None
    if field is not None:
        if mode == "forward":
            _, m1, m2 = _second(lambda h: cool(one, h), zero)
        else:
            _, m1, m2 = _second_reverse(lambda h: cool(one, h)[-1], zero)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(betas > 0, 1.0 / np.where(betas > 0, betas, 1.0), 0.0)
        mag, chi = _np(m1) * scale, _np(m2) * scale
        if betas[0] == 0.0:
            mag[0] = _infinite_temperature_field(H, field, psi)
    return Thermodynamics(betas, log_z, energy, d2, mag, chi, field, mode)


def _infinite_temperature_energy(H: Any, charge: Any, psi: Any) -> float:
    return float(np.real(complex(expectation(psi, purified_hamiltonian(H, charge)))))


def _infinite_temperature_field(H: Any, field: str, psi: Any) -> float:
    return float(np.real(np.sum(np.asarray(psi.expect(field, local=purified_space(H.local).name)))))
