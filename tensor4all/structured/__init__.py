"""tensor4all.structured: diagonal and block-diagonal tensors over dense tenferro leaves,
jagged/tiled/nested shapes, and one layered dispatcher (reduce rules -> structured
kernels keyed by (op, operand kinds) -> counted fallback to dense).

Modules, bottom to top: ``_errors``, ``_checks`` (the argument checks shared with the dense
functions: integers, axes, operands, the non-finite check of linear algebra), ``_shapes``,
``_combine``, ``_symmetry`` (groups, legs, fusion), ``_value_checks`` (checks that read
values under ``vmap`` and ``jit`` too), ``_dispatch`` (the dispatcher, the fallback and its
statistics), ``_base`` (common API and the tenferro protocol), ``_diagonal``,
``_blockdiag``, ``_symmetric`` (charge-conserving block tensors), ``_rules``, ``_kernels``,
``_einsum``, ``_symmetric_kernels``, ``_symmetric_linalg``, ``_linalg_kernels``,
``_tables`` (the tables), ``_api`` and ``linalg`` (public functions).
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from . import _tables
from ._api import einsum, matmul, tensordot, to_dense
from ._base import StructuredTensor
from ._blockdiag import BlockDiagonal
from ._diagonal import DiagonalTensor
from ._dispatch import (
    StructuredFallbackWarning,
    dispatch,
    fallback_policy,
    fallback_stats,
    get_fallback_policy,
    reset_fallback_stats,
    set_fallback_policy,
)
from ._errors import (
    DensifyError,
    MixedPlacementError,
    ShapeCombineError,
    SquareBlockError,
    StructuredError,
    StructuredIndexError,
    StructuredShapeError,
    StructuredTypeError,
    StructuredValueError,
    TilingError,
    SymmetryError,
    ChargeError,
    LegError,
    SectorMismatchError,
    SymmetryViolationError,
    ChargeTypeError,
    LegTypeError,
)
from ._symmetry import U1, Leg, FusedLeg, ProductSymmetry, Symmetry, Z2, Zn, fuse
from ._sector_diagonal import SectorDiagonal
from ._symmetric import SymmetricTensor
from ._combine import combine
from ._shapes import JaggedShape, Nested, Shape, TiledShape
from . import linalg

_tables.install()

__all__ = [
    "StructuredTensor",
    "DiagonalTensor",
    "BlockDiagonal",
    "SymmetricTensor",
    "SectorDiagonal",
    "einsum",
    "matmul",
    "tensordot",
    "to_dense",
    "linalg",
    "Symmetry",
    "U1",
    "Zn",
    "Z2",
    "ProductSymmetry",
    "Leg",
    "FusedLeg",
    "fuse",
    "SymmetryError",
    "ChargeError",
    "LegError",
    "SectorMismatchError",
    "SymmetryViolationError",
    "ChargeTypeError",
    "LegTypeError",
    "dispatch",
    "fallback_stats",
    "reset_fallback_stats",
    "fallback_policy",
    "set_fallback_policy",
    "get_fallback_policy",
    "StructuredFallbackWarning",
    "Shape",
    "JaggedShape",
    "TiledShape",
    "Nested",
    "combine",
    "StructuredError",
    "StructuredShapeError",
    "StructuredTypeError",
    "StructuredValueError",
    "StructuredIndexError",
    "TilingError",
    "SquareBlockError",
    "MixedPlacementError",
    "DensifyError",
    "ShapeCombineError",
]


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show
    (the imports this module uses stay out of sight)."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
