"""Energies per site of the infinite chains of :func:`tensor4all.infinite.infinite_model` (what
VUMPS and iDMRG results are checked against), as :class:`~tensor4all.references.Reference`:

* the spin-1/2 XXZ chain ``J sum (Sx Sx + Sy Sy + Delta Sz Sz)`` (``Delta = Jz / J``, ``J > 0``, no
  field), Bethe ansatz (C. N. Yang and C. P. Yang, Phys. Rev. 150, 321 (1966); M. Takahashi,
  *Thermodynamics of one-dimensional solvable models*, ch. 4): for ``Delta = cos gamma`` in
  ``(-1, 1)``, ``e = Delta/4 - (sin gamma / 2) int sinh((pi - gamma) x) / (sinh(pi x) cosh(gamma x)) dx``;
  ``1/4 - ln 2`` at ``Delta = 1``; for ``Delta = cosh phi > 1``,
  ``e = Delta/4 - sinh phi (1/2 + 2 sum_n 1 / (exp(2 n phi) + 1))``; the ferromagnet ``Delta/4`` at
  ``Delta <= -1``;
* the XX chain in a field ``-h sum Sz``: free fermions with ``eps(k) = J cos k - h``,
  ``e = h/2 - (|J| sin k0 + h (pi - k0)) / pi`` with ``cos k0 = h / |J|`` (fully polarized,
  ``-|h|/2``, beyond ``|h| >= |J|``);
* the transverse-field Ising chain ``-J sum Z Z - g sum X``: ``e = -(1/pi) int_0^pi sqrt(J^2 + g^2 +
  2 J g cos k) dk`` (Pfeuty 1970; ``-4/pi`` at ``g = J = 1``);
* the J1-J2 chain at the Majumdar-Ghosh point ``J2 = J1 / 2`` (``J1 > 0``, no field): ``-3 J1 / 8``;
* the spin-1 Heisenberg chain (``J = Jz > 0``, no field): ``-1.401484038971 J``, tabulated (S. R.
  White and D. A. Huse, PRB 48, 3844 (1993), confirmed by later DMRG), not exact.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.integrate

from . import Reference

__all__ = ["infinite_reference", "xxz_energy", "xx_energy", "tfim_energy", "SPIN1_HEISENBERG"]

#: the spin-1 Heisenberg chain's energy per site (White and Huse, PRB 48, 3844 (1993))
SPIN1_HEISENBERG = -1.401484038971


def xxz_energy(Jz: float, J: float = 1.0) -> float:
    """The ground energy per site of the infinite spin-1/2 XXZ chain ``J sum (SxSx + SySy) + Jz SzSz``
    (``J > 0``, no field), by the Bethe ansatz (module docstring)."""
    delta = Jz / J
    if delta <= -1.0:
        return J * delta / 4.0
    if delta == 1.0:
        return J * (0.25 - math.log(2.0))
    if delta < 1.0:
        gamma = math.acos(delta)

        def f(x: float) -> float:
            if x == 0.0:
                return (math.pi - gamma) / math.pi
            # sinh((pi - g) x) / sinh(pi x) = exp(-g x) (1 - exp(-2 (pi - g) x)) / (1 - exp(-2 pi x)), x > 0
            ratio = math.exp(-gamma * x) * math.expm1(-2 * (math.pi - gamma) * x) / math.expm1(-2 * math.pi * x)
            return ratio * 2.0 * math.exp(-gamma * x) / (1.0 + math.exp(-2.0 * gamma * x))  # ratio / cosh(gamma x)

        val, _ = scipy.integrate.quad(f, 0.0, np.inf, epsabs=1e-15, epsrel=1e-13, limit=400)
        return J * (delta / 4.0 - math.sin(gamma) * val)  # the integrand is even: 2 * (1/2) * int_0^inf
    phi = math.acosh(delta)
    n = np.arange(1, int(40.0 / phi) + 2)
    return J * (delta / 4.0 - math.sinh(phi) * (0.5 + 2.0 * float(np.sum(1.0 / (np.exp(2.0 * n * phi) + 1.0)))))


def xx_energy(J: float = 1.0, h: float = 0.0) -> float:
    """The ground energy per site of the infinite XX chain ``J sum (SxSx + SySy) - h sum Sz``
    (free fermions)."""
    J = abs(J)
    if abs(h) >= J:
        return -abs(h) / 2.0
    k0 = math.acos(h / J)
    return h / 2.0 - (J * math.sin(k0) + h * (math.pi - k0)) / math.pi


def tfim_energy(J: float = 1.0, g: float = 1.0) -> float:
    """The ground energy per site of the infinite chain ``-J sum ZZ - g sum X`` (free fermions)."""
    val, _ = scipy.integrate.quad(
        lambda k: math.sqrt(max(J * J + g * g + 2 * J * g * math.cos(k), 0.0)), 0.0, math.pi, epsabs=1e-15, limit=400
    )
    return -val / math.pi


def infinite_reference(model: str, spin: str = "1/2", **couplings: Any) -> Reference | None:
    """The energy per site of the infinite chain ``model`` (``"heisenberg"``, ``"xxz"``, ``"xx"``,
    ``"tfim"``, ``"j1j2"``) with the couplings of :func:`~tensor4all.infinite.infinite_model`
    (``J``, ``Jz``, ``h``, ``g``, ``J1``, ``J2``; missing ones at their defaults), or None where none is
    known."""
    c = {k: float(v) for k, v in couplings.items()}
    J = c.get("J", 1.0)
    if model == "tfim":
        return Reference(tfim_energy(J, c.get("g", 1.0)), "free fermions (Pfeuty 1970)", True)
    if model == "j1j2":
        J1, J2 = c.get("J1", J), c.get("J2", 0.5)
        if J1 > 0 and J2 == 0.5 * J1 and c.get("h", 0.0) == 0.0:
            return Reference(-0.375 * J1, "Majumdar-Ghosh point (dimer product state)", True)
        return None
    Jz = 0.0 if model == "xx" else c.get("Jz", J)
    h = c.get("h", 0.0)
    if spin == "1":
        if Jz == J and J > 0 and h == 0.0:
            return Reference(SPIN1_HEISENBERG * J, "White and Huse, PRB 48, 3844 (1993)", False)
        return None
    if Jz == 0.0:
        return Reference(xx_energy(J, h), "free fermions", True)
    if J > 0 and h == 0.0:
        return Reference(xxz_energy(Jz, J), "Bethe ansatz", True)
    return None
