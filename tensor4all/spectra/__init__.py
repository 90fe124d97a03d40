"""Dynamical correlations and spectral functions of a chain in its ground state.

* :func:`dynamical_correlation` -- ``G(x, t) = <0| A_x(t) B_c(0) |0>`` at every site by one real-time
  evolution of ``B_c |0>`` (TDVP or TEBD; in the sector of ``B``'s charge for a symmetric state;
  fermionic operators with their Jordan-Wigner strings): :mod:`.correlation`, :mod:`.operators`.
* :func:`spectral_function` -- ``S(q, omega)`` from ``G``: spatial Fourier transform, windowed time
  transform (:data:`~.transform.WINDOWS`, :func:`window_resolution`), optional linear prediction
  (:func:`linear_prediction`) to extend ``t``: :mod:`.transform`, :mod:`.prediction`.
* :func:`spectral_function_chebyshev` -- the same by a Chebyshev expansion with the Jackson kernel,
  the cross-check: :mod:`.chebyshev`.
* :class:`DynamicalCorrelation`, :class:`SpectralFunction` -- the results (:mod:`.records`).

Bottom to top: ``records``, ``prediction``, ``operators``, ``transform``, ``correlation``, ``chebyshev``.
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from .chebyshev import spectral_function_chebyshev
from .correlation import dynamical_correlation
from .prediction import linear_prediction
from .records import DynamicalCorrelation, SpectralFunction
from .transform import WindowResolutionError, spectral_function, window_resolution

__all__ = [
    "dynamical_correlation",
    "spectral_function",
    "spectral_function_chebyshev",
    "linear_prediction",
    "window_resolution",
    "DynamicalCorrelation",
    "SpectralFunction",
    "WindowResolutionError",
]


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
