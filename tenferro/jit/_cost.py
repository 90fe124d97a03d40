"""Cost estimates of graph equations: floating-point operations and bytes.

Estimates, not measurements: contractions count ``2·|out|·|contracted|`` real
multiply-adds (×4 for complex), einsum uses opt_einsum's count along its plan's own
path, dense factorizations ``~c·m·n·min(m, n)`` per matrix, everything else one
operation per output element.
"""

from __future__ import annotations

import math
from typing import Any

from tidu.graph import Eqn

from ._contractions import contraction_cost

__all__ = ["eqn_flops", "nbytes"]

# flops per m*n*min(m, n) of the dense factorizations (LAPACK operation counts, rounded)
_FACTOR = {
    "svd": 12.0,
    "eigh": 9.0,
    "eig": 25.0,
    "qr": 4.0,
    "lu": 2.0,
    "cholesky": 1.0 / 3,
    "solve": 2.0,
    "lu_solve": 2.0,
    "inv": 2.0,
    "det": 2.0 / 3,
    "slogdet": 2.0 / 3,
    "expm": 20.0,
    "expm_frechet": 60.0,
    "triangular_solve": 1.0,
    "lstsq": 4.0,
    "pinv": 14.0,  # the SVD and the product V diag(1/s) U^H
}


def nbytes(aval: Any) -> int:
    """Bytes of a value of ``aval`` (0 for non-tensor values)."""
    shape = getattr(aval, "shape", None)
    dtype = getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    return math.prod(shape) * dtype.numpy.itemsize


def _size(aval: Any) -> int:
    shape = getattr(aval, "shape", None)
    return math.prod(shape) if shape is not None else 1


def _complex(aval: Any) -> float:
    dtype = getattr(aval, "dtype", None)
    return 4.0 if dtype is not None and dtype.is_complex else 1.0


def eqn_flops(eqn: Eqn) -> float:
    """Estimated floating-point operations of one equation."""
    name = eqn.prim.name
    out = eqn.outputs[0].aval
    ins = [v.aval for v in eqn.inputs]
    cplx = max([_complex(a) for a in ins] + [_complex(out)])
    if name == "dot_general":
        (xc, _), _ = eqn.params["dimension_numbers"]
        contracted = math.prod(ins[0].shape[i] for i in xc)
        return 2.0 * _size(out) * contracted * cplx
    if name == "einsum":
        return float(contraction_cost(eqn.params["plan"]).flops) * cplx
    if name in _FACTOR and ins and len(getattr(ins[0], "shape", ())) >= 2:
        shape = ins[0].shape
        m, n = shape[0], shape[1]  # tenferro.linalg's layout: [M, N, B...] (trailing batch)
        batch = math.prod(shape[2:])
        return _FACTOR[name] * m * n * min(m, n) * batch * cplx
    total = sum(_size(v.aval) for v in eqn.outputs)
    return float(total) * cplx
