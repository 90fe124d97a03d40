"""tenferro.linalg: matrix decompositions and solvers with exact AD rules.

**Trailing-batch convention**: matrix dimensions come first and batch dimensions
last, ``[M, N, B...]``; each matrix of a batch is a contiguous column-major block.
A plain 2-d tensor is one matrix. Computation uses LAPACK through NumPy/SciPy.

Every function has forward (JVP) and reverse (transpose) rules written with
tenferro operations, so derivatives of any order work. Degeneracies and gauges
are handled explicitly: see :data:`config`, :func:`settings` and docs/ad/.
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from ._config import config, settings
from ._errors import (
    ConvergenceError,
    DegeneracyError,
    DegeneracyWarning,
    GaugeError,
    GaugeWarning,
    LinalgDTypeError,
    LinalgError,
    LinalgShapeError,
    NonFiniteError,
    NonPositiveDefiniteError,
    SingularMatrixError,
)
from ._cholesky import cholesky
from ._det import det, slogdet
from ._eigh import eigh, eigvalsh
from ._qr import lq, qr
from ._solve import inv, solve, triangular_solve
from ._eig import eig, eigvals
from ._expm import expm, expm_frechet
from ._lu import lu
from ._lstsq import lstsq, pinv
from ._norm import norm
from ._svd import svd, svdvals, truncated_svd, truncation_rank
from ._errors import DomainError
from ._funm import funm_hermitian, logm_pd, powm_psd, sqrtm_psd
from ._polar import polar
from ._sqrtm import sqrtm
from ._logm import logm

__all__ = [
    "config",
    "settings",
    "LinalgError",
    "LinalgShapeError",
    "LinalgDTypeError",
    "NonPositiveDefiniteError",
    "SingularMatrixError",
    "ConvergenceError",
    "NonFiniteError",
    "GaugeError",
    "GaugeWarning",
    "DegeneracyError",
    "DegeneracyWarning",
    "svd",
    "svdvals",
    "qr",
    "lq",
    "eigh",
    "eigvalsh",
    "cholesky",
    "solve",
    "triangular_solve",
    "inv",
    "det",
    "slogdet",
    "eig",
    "eigvals",
    "expm",
    "expm_frechet",
    "lu",
    "lstsq",
    "pinv",
    "norm",
    "truncated_svd",
    "truncation_rank",
    "DomainError",
    "funm_hermitian",
    "sqrtm_psd",
    "logm_pd",
    "powm_psd",
    "polar",
    "sqrtm",
    "logm",
]


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show
    (the imports this module uses stay out of sight)."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
