"""``tenferro.einsum``: Einstein summation with hyper-edges, repeated labels,
ellipsis, cached contraction plans and exact derivatives of any order.

Files, one concern each: ``_parse`` (subscripts and the interleaved form to a
canonical integer-label spec), ``_paths`` (opt_einsum's path optimizers by
name), ``_plan`` (compiled plans and the LRU cache), ``_execute`` (running a plan
with BLAS), ``_ad`` (the ``einsum`` primitive and its JVP/transpose rules),
``_api`` (the public functions). The derivation of the rules is in
``docs/ad/einsum.md``.

Note: ``tenferro.einsum`` is the *function*; this package is reached as
``sys.modules["tenferro.einsum"]`` or ``from tenferro.einsum import _plan``.
"""

from ._ad import einsum_p
from ._api import (
    EinsumCacheInfo,
    EinsumPathInfo,
    einsum,
    einsum_cache_clear,
    einsum_cache_info,
    einsum_path,
    einsum_slicing,
)
from ._slicing import SlicedContraction
from ._errors import EinsumOperandError, EinsumOptimizeError, EinsumShapeError, EinsumSubscriptError
from ._parse import Spec
from ._paths import MAX_INTERMEDIATE_BYTES, OPTIMAL_MAX_OPERANDS, PATH_OPTIMIZERS, EinsumPathWarning

__all__ = [
    "einsum",
    "einsum_path",
    "einsum_slicing",
    "SlicedContraction",
    "einsum_cache_info",
    "einsum_cache_clear",
    "einsum_p",
    "EinsumPathInfo",
    "EinsumCacheInfo",
    "Spec",
    "PATH_OPTIMIZERS",
    "EinsumSubscriptError",
    "EinsumShapeError",
    "EinsumOperandError",
    "EinsumOptimizeError",
    "EinsumPathWarning",
    "OPTIMAL_MAX_OPERANDS",
    "MAX_INTERMEDIATE_BYTES",
]
