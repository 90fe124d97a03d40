"""The results of :mod:`tensor4all.spectra`: :class:`DynamicalCorrelation` (``G(x, t)`` with its
times and sites; also what a user builds from other data to transform it) and
:class:`SpectralFunction` (``S(q, omega)`` with its momenta and frequencies). Both give plain
JSON-ready values (``as_dict``); complex numbers as ``[re, im]`` pairs."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..tools.checks import check_bool, numeric_array
from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    SiteOutOfRangeError,
    Tensor4allTypeError,
)

__all__ = ["DynamicalCorrelation", "SpectralFunction", "jsonable"]


def jsonable(v: Any) -> Any:
    """An array as nested lists, complex entries as ``[re, im]`` pairs."""
    a = np.asarray(v)
    if np.iscomplexobj(a):
        return np.stack([a.real, a.imag], axis=-1).tolist()
    return a.tolist()


def _from_pairs(v: Any, what: str) -> Any:
    """The inverse of :func:`jsonable` for a complex array stored as ``[..., 2]`` pairs."""
    a = numeric_array(v, what)
    if a.ndim < 1 or a.shape[-1] != 2:
        raise DimensionMismatchError(f"{what}: complex values are stored as [re, im] pairs, got shape {a.shape}")
    return a[..., 0] + 1j * a[..., 1]


@dataclass
class DynamicalCorrelation:
    """``G(x, t) = <0| A_x(t) B_c(0) |0>`` on the sites of a chain: ``values[n, x]`` at ``times[n]``
    (equally spaced from 0), ``c = center``.

    ``ops`` names ``(A, B)``; ``hermitian_pair``: whether ``A = B^dagger`` (then ``G(q, -t) =
    conj(G(q, t))`` gives the negative times, :func:`tensor4all.spectral_function`);
    ``ground_energy`` and ``ground_variance`` (``<H^2> - <H>^2``: 0 for an eigenstate) of the state;
    ``method`` (``"tdvp"``, ``"tebd"``, or what the user's data come from); ``history``: the
    evolution's records (:class:`~tensor4all.EvolutionRecord`) per step.

    Built from other data (exact results, another code), it is checked: ``times`` a 1-D grid from 0
    with equal steps, ``values`` finite of shape ``(len(times), L)``, ``center`` a site."""

    times: Any
    values: Any
    center: int
    ops: tuple[str, str] = ("A", "B")
    hermitian_pair: bool = True
    ground_energy: float = float("nan")
    ground_variance: float = float("nan")
    method: str = "user"
    history: list[Any] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        what = "DynamicalCorrelation"
        t = numeric_array(self.times, f"{what}: times")
        if t.ndim != 1 or t.size < 2 or np.iscomplexobj(t):
            raise DimensionMismatchError(
                f"{what}: times must be a 1-D real array of at least 2 times, got shape {t.shape} ({t.dtype})"
            )
        if not np.isfinite(t).all():
            raise NonFiniteError(f"{what}: times holds NaN or infinity")
        dt = float(t[1] - t[0])
        if t[0] != 0.0 or not dt > 0.0 or np.max(np.abs(np.diff(t) - dt)) > 1e-9 * max(1.0, float(t[-1])):
            raise InvalidOptionError(
                f"{what}: times must start at 0 and increase in equal steps (t_n = n dt), got {t[:3].tolist()} ...; "
                "sample G(x, t) on a uniform grid"
            )
        v = numeric_array(self.values, f"{what}: values")
        if v.ndim != 2 or v.shape[0] != t.size:
            raise DimensionMismatchError(
                f"{what}: values must have shape (len(times), L) = ({t.size}, L), got {v.shape}"
            )
        if not np.isfinite(v).all():
            raise NonFiniteError(f"{what}: values holds NaN or infinity")
        c = self.center
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral):
            raise Tensor4allTypeError(f"{what}: center must be a site index (an int), got {type(c).__name__} {c!r}")
        if not 0 <= int(c) < v.shape[1]:
            raise SiteOutOfRangeError(f"{what}: center {c} is outside the chain 0..{v.shape[1] - 1}")
        if not (
            isinstance(self.ops, (tuple, list)) and len(self.ops) == 2 and all(isinstance(o, str) for o in self.ops)
        ):
            raise Tensor4allTypeError(f"{what}: ops must be a pair of operator labels (A, B), got {self.ops!r}")
        self.times, self.values, self.center, self.ops = t.astype(float), v.astype(complex), int(c), tuple(self.ops)
        self.hermitian_pair = check_bool(self.hermitian_pair, f"{what}: hermitian_pair")

    @property
    def L(self) -> int:
        """The number of sites."""
        return int(self.values.shape[1])

    @property
    def sites(self) -> np.ndarray:
        return np.arange(self.L)

    @property
    def dt(self) -> float:
        """The spacing of the times."""
        return float(self.times[1] - self.times[0])

    @property
    def t_final(self) -> float:
        """The last time."""
        return float(self.times[-1])

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (complex ``values`` as ``[re, im]`` pairs; the history as records);
        :meth:`from_dict` reads them back."""
        return {
            "times": [float(x) for x in self.times],
            "sites": list(range(self.L)),
            "center": self.center,
            "ops": list(self.ops),
            "hermitian_pair": self.hermitian_pair,
            "values": jsonable(self.values),
            "ground_energy": _float_or_none(self.ground_energy),
            "ground_variance": _float_or_none(self.ground_variance),
            "method": self.method,
            "history": [h.as_dict() if hasattr(h, "as_dict") else h for h in self.history],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DynamicalCorrelation":
        """The correlation of :meth:`as_dict` (a JSON record read back), checked as on construction."""
        what = "DynamicalCorrelation.from_dict"
        if not isinstance(d, Mapping):
            raise Tensor4allTypeError(f"{what}: expected a mapping (as_dict's record), got {type(d).__name__}")
        missing = [k for k in ("times", "values", "center") if k not in d]
        if missing:
            raise InvalidOptionError(f"{what}: the record lacks {', '.join(map(repr, missing))} (as_dict writes them)")
        return cls(
            d["times"],
            _from_pairs(d["values"], f"{what}: values"),
            d["center"],
            tuple(d.get("ops", ("A", "B"))),
            d.get("hermitian_pair", True),
            _nan_if_none(d.get("ground_energy")),
            _nan_if_none(d.get("ground_variance")),
            d.get("method", "user"),
            list(d.get("history", [])),
        )


def _float_or_none(x: float) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _nan_if_none(x: Any) -> float:
    return float("nan") if x is None else float(x)


@dataclass
class SpectralFunction:
    """``S(q, omega)``: ``values[k, j]`` at momentum ``q[k]`` and frequency ``omega[j]`` (real; complex
    for the one-sided transform), from :func:`tensor4all.spectral_function` (``method="time
    evolution"``: the window's name, its half-length ``t_final`` after any linear prediction
    ``extend``) or :func:`tensor4all.spectral_function_chebyshev` (``method="chebyshev"``: the
    ``kernel``, ``n_moments`` and spectral ``bounds`` in ``details``). ``resolution``: the full width at
    half maximum of the broadening of a delta peak."""

    q: np.ndarray
    omega: np.ndarray
    values: np.ndarray
    window: str
    resolution: float
    t_final: float = float("nan")
    method: str = "time evolution"
    extend: float | None = None
    ops: tuple[str, str] = ("A", "B")
    negative_times: str = "conjugate"
    details: dict[str, Any] = field(default_factory=dict)

    def weight(self) -> np.ndarray:
        """``int S(q, omega) d omega`` per momentum over the grid (trapezoidal rule): the static structure
        factor when the grid covers the spectrum."""
        return np.trapezoid(self.values, self.omega, axis=1) if len(self.omega) > 1 else np.zeros(len(self.q))

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values: ``q``, ``omega``, ``values`` (nested lists, ``[len(q)][len(omega)]``;
        complex as ``[re, im]`` pairs) and how they were computed."""
        return {
            "q": [float(x) for x in self.q],
            "omega": [float(x) for x in self.omega],
            "values": jsonable(self.values),
            "method": self.method,
            "window": self.window,
            "resolution": float(self.resolution),
            "t_final": _float_or_none(self.t_final),
            "extend": self.extend,
            "ops": list(self.ops),
            "negative_times": self.negative_times,
            "details": {k: (jsonable(v) if isinstance(v, np.ndarray) else v) for k, v in self.details.items()},
        }
