"""The dense op families as one namespace, for the packages built on them.

``linalg`` and ``einsum`` write their derivative rules with tenferro's own
user-level functions (so the rules can be differentiated again); they import
this module (``from .. import _ops as tf``) instead of the ``tenferro`` package,
which imports them: the package sits above everything, this module just above
the op families.
"""

from __future__ import annotations

from ._compare import equal, greater, less, not_equal, where
from ._contraction import dot_general, matmul
from ._creation import asarray, ones, zeros
from ._elementwise import add, conj, divide, imag, multiply, negative, real, subtract
from ._getitem import slice
from ._matrix import embed_diag, extract_diag, tril, triu
from ._piecewise import abs, maximum
from ._reductions import max, min, sum
from ._joins import concatenate
from ._structural import reshape, transpose
from ._transcendental import power, sqrt

__all__ = [
    "equal",
    "greater",
    "less",
    "not_equal",
    "where",
    "dot_general",
    "matmul",
    "asarray",
    "ones",
    "zeros",
    "add",
    "conj",
    "divide",
    "imag",
    "multiply",
    "negative",
    "real",
    "subtract",
    "slice",
    "embed_diag",
    "extract_diag",
    "tril",
    "triu",
    "abs",
    "maximum",
    "max",
    "min",
    "sum",
    "concatenate",
    "reshape",
    "transpose",
    "power",
    "sqrt",
]
