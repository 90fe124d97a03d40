"""Correlation lengths fitted to correlation functions at intermediate distances, as White and Huse
did for the spin-1 Heisenberg chain (S. R. White and D. A. Huse, PRB 48, 3844 (1993): ``xi =
6.03(1)`` from ``<Sz_0 Sz_r> ~ (-1)^r A K_0(r / xi)`` over ``r = 8..24``).

A gapped chain whose lowest excitation is a single massive particle (the Haldane magnon) has
``<S^a_0 S^a_r>`` decaying as the modified Bessel function ``K_0(r / xi)`` (Ornstein-Zernike in 1+1
dimensions: ``exp(-r/xi) / sqrt(r)`` at large ``r``), not as a pure exponential; fitting ``K_0``
over a window beyond the short-distance regime gives the bulk ``xi`` with a small bias. The
transfer-matrix value (:func:`.transfer.correlation_length`) at finite bond dimension approaches the
same limit slowly from below; a fit at distances well inside the bond dimension's own correlation
length is already converged.

The fit minimizes the squared error of ``ln|C(r)|`` (equal relative weight at every distance) by
:func:`scipy.optimize.curve_fit`, started from a straight line through ``ln|C|``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

import numpy as np
import scipy.optimize
import scipy.special

from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.threads import thread_policy
from .imps import iMPS
from .transfer import correlation

__all__ = ["fit_correlation_length", "fit_decay", "CorrelationFit", "FORMS"]


def _k0_form(r: np.ndarray, a: float, xi: float) -> np.ndarray:
    return a * scipy.special.k0(r / xi)


def _exp_form(r: np.ndarray, a: float, xi: float) -> np.ndarray:
    return a * np.exp(-r / xi)


#: the fitted forms of ``|C(r)|``: name -> (function of (r, A, xi), description)
FORMS = {"k0": (_k0_form, "A K_0(r / xi)"), "exp": (_exp_form, "A exp(-r / xi)")}


@dataclasses.dataclass
class CorrelationFit:
    """A fit of ``|<op_0 op_r>|`` (connected) over ``distances``: ``correlation_length`` ``xi`` and the
    ``amplitude`` ``A`` of ``form``, their standard errors, the fitted ``correlations`` (signed) and the
    largest relative deviation of the fit from them, ``max_relative_residual``."""

    correlation_length: float
    amplitude: float
    form: str
    distances: np.ndarray
    correlations: np.ndarray
    correlation_length_error: float
    amplitude_error: float
    max_relative_residual: float


def _distances(distances: Any, what: str) -> list[int]:
    """The distances as a list of positive integers, each once, at least 3 of them."""
    if isinstance(distances, (str, bytes)) or not isinstance(distances, Iterable):
        raise Tensor4allTypeError(f"{what}: distances must be a range or list of positive integers, got {distances!r}")
    r = list(distances)
    if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x >= 1 for x in r):
        raise InvalidOptionError(f"{what}: distances must be positive integers (such as range(8, 25)), got {r!r}")
    if len(set(r)) != len(r) or len(r) < 3:
        raise InvalidOptionError(
            f"{what}: at least 3 different distances, each once, are needed for a two-parameter fit, got {r!r}"
        )
    return [int(x) for x in r]


@thread_policy()  # the least-squares fit
def fit_decay(distances: Any, correlations: Any, form: str = "k0") -> CorrelationFit:
    """Fit ``|correlations| = A K_0(r / xi)`` (``form="k0"``) or ``A exp(-r / xi)`` (``form="exp"``) at
    ``distances`` (positive integers, one value each): least squares in ``ln|C|``."""
    if not isinstance(form, str) or form not in FORMS:
        raise InvalidOptionError(f"fit_decay: unknown form {form!r}; valid forms: {', '.join(FORMS)}")
    given = np.array(_distances(distances, "fit_decay"))
    order = np.argsort(given)
    r = given[order]
    try:
        c = np.asarray(correlations, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise Tensor4allTypeError(f"fit_decay: correlations must be real numbers, got {correlations!r}") from None
    if c.shape != r.shape or not np.all(np.isfinite(c)):
        raise InvalidOptionError(
            f"fit_decay: {r.size} distances need {r.size} finite correlations, got shape {np.shape(correlations)}"
        )
    c = c[order]
    if not np.all(np.abs(c) > 1e-300):
        raise InvalidOptionError(
            "fit_decay: the correlation vanishes at some of the distances (an operator that does not connect to "
            "the leading excitation, or distances beyond the numerical precision); choose another operator or "
            "shorter distances"
        )
    y = np.log(np.abs(c))
    slope, _ = np.polyfit(r, y, 1)
    xi0 = -1.0 / slope if slope < 0 else float(r[-1])
    f, _ = FORMS[form]

    def model(rr: np.ndarray, log_a: float, xi: float) -> np.ndarray:
        return log_a + np.log(f(rr, 1.0, abs(xi)))

    log_a0 = float(np.mean(y - np.log(f(r, 1.0, xi0))))
    (log_a, xi), cov = scipy.optimize.curve_fit(model, r.astype(float), y, p0=(log_a0, xi0), maxfev=10000)
    xi = abs(float(xi))
    errs = np.sqrt(np.abs(np.diag(cov))) if np.all(np.isfinite(cov)) else np.array([np.nan, np.nan])
    amplitude = float(np.exp(log_a))
    return CorrelationFit(
        correlation_length=xi,
        amplitude=amplitude,
        form=form,
        distances=r,
        correlations=c,
        correlation_length_error=float(errs[1]),
        amplitude_error=float(amplitude * errs[0]),
        max_relative_residual=float(np.max(np.abs(f(r, amplitude, xi) / np.abs(c) - 1.0))),
    )


@thread_policy()
def fit_correlation_length(
    psi: iMPS, op: Any = "Sz", distances: Any = range(8, 25), form: str = "k0", site: int = 0
) -> CorrelationFit:
    """The correlation length fitted (:func:`fit_decay`) to the connected ``<op_site op_{site + r}>`` at
    ``distances``: ``|C(r)| = A K_0(r / xi)`` (``form="k0"``, White and Huse's fit of the spin-1 chain) or
    ``A exp(-r / xi)`` (``form="exp"``); ``op`` a name of the state's local space or a matrix."""
    if not isinstance(psi, iMPS):
        raise Tensor4allTypeError(f"fit_correlation_length: psi must be an iMPS, got {type(psi).__name__}")
    if not isinstance(form, str) or form not in FORMS:
        raise InvalidOptionError(f"fit_correlation_length: unknown form {form!r}; valid forms: {', '.join(FORMS)}")
    r = np.array(sorted(_distances(distances, "fit_correlation_length")))
    c = np.real(correlation(psi, op, op, int(r[-1]), site, connected=True))[r - 1]
    return fit_decay(r, c, form)
