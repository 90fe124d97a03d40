"""Linear prediction of a time series: :func:`linear_prediction`, which extends ``G(x, t)`` beyond
the times an evolution reached before its Fourier transform (S. R. White and I. Affleck, Phys.
Rev. B 77, 134437 (2008); T. Barthel, U. Schollwöck and S. R. White, Phys. Rev. B 79, 245101
(2009)).

The series ``x_n`` (equally spaced) is modelled as ``x_n = sum_{i=1}^p a_i x_{n-i}``: a sum of
``p`` (damped) exponentials. The coefficients ``a`` minimise the squared error of that model over
the last ``n_fit`` samples (the training window, the late times where the series is smooth),
solved by the pseudo-inverse of the data matrix with relative singular-value cutoff ``rcond``
(the regularisation: directions the data do not determine are left at zero). The prediction is
the recursion written with the companion matrix ``M`` (first row ``a``, ones below the diagonal):
``(x_{n+k}, ..., x_{n+k-p+1}) = M^k (x_{n-1}, ..., x_{n-p})``. Its eigenvalues ``lambda`` are the
exponentials' factors per step; one with ``|lambda| > 1`` (a growing mode, an artefact of noise
or a too short window) is put on the unit circle, ``lambda / |lambda|``, so the prediction never
diverges (Barthel et al., Sec. III). The result is exact for a series that is a sum of at most
``p`` exponentials (tested to 1e-8 on damped ones).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tools.checks import check_alloc, check_int, check_real, numeric_array
from ..tools.errors import DimensionMismatchError, InvalidOptionError, NonFiniteError
from ..tools.threads import thread_policy

__all__ = ["linear_prediction", "MAX_COEFFICIENTS"]

#: the default number of prediction coefficients is at most this (half the training window below it)
MAX_COEFFICIENTS = 64


def _count(value: Any, what: str, low: int) -> int:
    """An integer option ``>= low``: not an integer (a float, a bool) :class:`Tensor4allTypeError`,
    below ``low`` :class:`InvalidOptionError`."""
    return check_int(value, f"linear_prediction: {what}", low)


def _order(*_: Any, n_coefficients: Any = None, **__: Any) -> int:
    """The size of :func:`linear_prediction`'s thread policy: the order ``p`` (the pseudo-inverse of the
    ``n_fit x p`` data, the ``p x p`` companion matrix)."""
    return n_coefficients if isinstance(n_coefficients, int) else MAX_COEFFICIENTS


@thread_policy(_order)
def linear_prediction(
    series: Any, n_predict: int, *, n_coefficients: int | None = None, n_fit: int | None = None, rcond: float = 1e-6
) -> np.ndarray:
    """The next ``n_predict`` samples of ``series`` (equally spaced in time, along axis 0; a 2-D
    array predicts each column), by linear prediction (module docstring).

    Args:
        series: the samples ``x_0 .. x_{n-1}``, shape ``(n,)`` or ``(n, m)``, real or complex.
        n_predict: how many samples to predict (``>= 0``).
        n_coefficients: ``p``, the order of the model (default: half the training window, at most
            :data:`MAX_COEFFICIENTS`).
        n_fit: the training window, the last ``n_fit`` samples (default: the last half); it needs
            ``n_fit + p <= n``.
        rcond: singular values of the data matrix below ``rcond`` times the largest are dropped.

    Returns:
        The predicted samples ``x_n .. x_{n + n_predict - 1}``, shape ``(n_predict,)`` or
        ``(n_predict, m)``, complex for complex input.

    >>> import numpy as np
    >>> x = np.exp((0.7j - 0.05) * np.arange(40) * 0.1)
    >>> future = linear_prediction(x, 10)
    >>> bool(np.allclose(future, np.exp((0.7j - 0.05) * np.arange(40, 50) * 0.1), atol=1e-10))
    True
    """
    x = numeric_array(series, "linear_prediction: series")
    if x.ndim not in (1, 2):
        raise DimensionMismatchError(
            f"linear_prediction: series must be 1-D (one series) or 2-D (one series per column), got shape {x.shape}"
        )
    if not np.isfinite(x).all():
        raise NonFiniteError("linear_prediction: series holds NaN or infinity")
    n = x.shape[0]
    if n < 2:  # the default n_fit = n // 2 would be an empty training window, which predicts zeros
        raise InvalidOptionError(
            f"linear_prediction: series has {n} sample{'' if n == 1 else 's'}; at least 2 samples are needed "
            "(one coefficient and one sample to fit it on)"
        )
    n_predict = _count(n_predict, "n_predict", 0)
    fit = n // 2 if n_fit is None else _count(n_fit, "n_fit", 1)
    p = (
        max(1, min(fit // 2, MAX_COEFFICIENTS))
        if n_coefficients is None
        else _count(n_coefficients, "n_coefficients", 1)
    )
    if fit + p > n:
        raise InvalidOptionError(
            f"linear_prediction: the training window (n_fit = {fit}) and the coefficients (n_coefficients = {p}) "
            f"need n_fit + n_coefficients <= {n} samples; give fewer of either, or a longer series"
        )
    rcond = check_real(
        rcond, "linear_prediction: rcond (a relative singular-value cutoff in [0, 1))", low=0.0, high=1.0
    )
    columns = x.reshape(n, -1)
    # the p x n_predict powers of the eigenvalues, the predictions of each column and their stack (complex)
    check_alloc(16 * n_predict * (p + 2 * columns.shape[1] + 1), f"linear_prediction: n_predict = {n_predict}")
    out = np.stack([_predict(columns[:, k], n_predict, p, fit, rcond) for k in range(columns.shape[1])], axis=1)
    out = out if np.iscomplexobj(x) else out.real
    return out.reshape((n_predict,) + x.shape[1:])


def _predict(x: np.ndarray, n_predict: int, p: int, fit: int, rcond: float) -> np.ndarray:
    """One series: the least-squares coefficients, the companion matrix's eigenvalues on or inside
    the unit circle, and the predicted samples."""
    n = len(x)
    if n_predict == 0:
        return np.zeros(0, complex)
    if not np.any(x[n - fit - p :]):
        return np.zeros(n_predict, complex)  # a zero training window predicts zeros
    rows = np.arange(n - fit, n)
    data = x[rows[:, None] - 1 - np.arange(p)[None, :]]  # data[r, i] = x_{n_r - 1 - i}
    a = np.linalg.pinv(data, rcond=rcond) @ x[rows]
    companion = np.zeros((p, p), complex)
    companion[0] = a
    companion[np.arange(1, p), np.arange(p - 1)] = 1.0
    lam, vecs = np.linalg.eig(companion)
    big = np.abs(lam) > 1.0
    lam[big] /= np.abs(lam[big])
    start = x[n - 1 - np.arange(p)]  # (x_{n-1}, ..., x_{n-p})
    coef = np.linalg.lstsq(vecs, start.astype(complex), rcond=None)[0]
    steps = np.arange(1, n_predict + 1)
    return (vecs[0] * coef) @ (lam[:, None] ** steps[None, :])
