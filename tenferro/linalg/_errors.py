"""Errors and warnings of :mod:`tenferro.linalg`.

Every error derives from :class:`LinalgError` (itself a :class:`tenferro.TenferroError`)
and from the matching tenferro error class, so ``except tenferro.ShapeError``
keeps working for shape problems. Messages name the function and the shapes.
"""

from __future__ import annotations

from .._errors import DTypeError, ShapeError, TenferroError, TenferroValueError

__all__ = [
    "LinalgError",
    "LinalgShapeError",
    "LinalgDTypeError",
    "NonPositiveDefiniteError",
    "SingularMatrixError",
    "GaugeError",
    "GaugeWarning",
    "DegeneracyError",
    "DegeneracyWarning",
    "ConvergenceError",
    "NonFiniteError",
    "DomainError",
]


class LinalgError(TenferroError):
    """Base class of the errors raised by ``tenferro.linalg``."""


class LinalgShapeError(LinalgError, ShapeError):
    """Non-square input where a square matrix is required, rank too low,
    or batch shapes that do not match."""


class LinalgDTypeError(LinalgError, DTypeError):
    """Integer or boolean input to a function that needs float or complex."""


class NonPositiveDefiniteError(LinalgError, TenferroValueError):
    """``cholesky`` of a matrix that is not (numerically) positive definite."""


class SingularMatrixError(LinalgError, TenferroValueError):
    """``solve``/``inv`` of a singular matrix: an exact zero pivot, or singular to working precision (LAPACK's condition estimate, as SciPy's ``solve`` warns)."""


class DomainError(LinalgError, TenferroValueError):
    """A matrix function outside its domain: ``sqrtm_psd``/``powm_psd`` of a matrix
    with a negative eigenvalue, ``logm_pd`` of one with an eigenvalue <= 0, real
    ``sqrtm``/``logm`` whose principal value is not real, ``f`` not finite on the
    spectrum, or a derivative that is infinite there (sqrt at a zero eigenvalue)."""


class ConvergenceError(LinalgError, TenferroValueError):
    """LAPACK did not converge (SVD, eig)."""


class NonFiniteError(LinalgError, TenferroValueError):
    """The input of a decomposition or solver contains NaN or inf (LAPACK would
    otherwise fail with a misleading message)."""


class GaugeError(LinalgError, TenferroValueError):
    """A loss depends on the gauge (phase or rotation within a degenerate
    subspace) of singular vectors or eigenvectors, so its gradient is ill-defined.
    Raised when ``tenferro.linalg.config.gauge == "raise"``."""


class GaugeWarning(UserWarning):
    """The warning version of :class:`GaugeError` (``config.gauge == "warn"``)."""


class DegeneracyError(LinalgError, TenferroValueError):
    """At an exactly degenerate block of singular values or eigenvalues (per
    ``config.degeneracy_rtol``) the loss depends on both the values and the vectors
    of the block (e.g. ``U f(S) Vh`` or ``V f(w) V^H`` with ``f' != 0`` there): the
    gradient is not determined by the decomposition's cotangents (docs/ad/gauge.md).
    Raised when ``tenferro.linalg.config.gauge == "raise"``."""


class DegeneracyWarning(UserWarning):
    """The warning version of :class:`DegeneracyError` (``config.gauge == "warn"``):
    the gradient returned is finite and exact outside the degenerate block, but its
    in-block part is not determined by the decomposition; a matrix function with its
    own rule (``tenferro.linalg.funm_hermitian``, ``tenferro.linalg.polar``) is exact."""
