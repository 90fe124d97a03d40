"""Argument checks of tenferro, public for the layers built on it (tensor4all's
structured tensors check their operands exactly as the dense functions do, with the
same error classes and messages, instead of keeping copies).

* :func:`physical_memory`, :func:`available_memory`: the one memory query (bytes, or None);
* :func:`import_optional`, :func:`install_hint`: the one importer of optional dependencies;
* :func:`as_index`, :func:`as_indices`: integers (NumPy integers too; no bools, floats
  or strings) with a typed error naming the operation;
* :func:`normalize_axis`, :func:`normalize_axes`: axes in ``[0, ndim)``, negatives
  counted from the end, repeats refused (:class:`tenferro.AxisError`);
* :func:`parse_einsum_subscripts`: einsum subscripts parsed and validated;
* :func:`linalg_operand`, :func:`check_finite`, :func:`check_matrix`,
  :func:`concrete_value`: the entry checks of :mod:`tenferro.linalg` (the one
  non-finite check, staged under ``tenferro.jit``; float/complex matrices).
"""

from __future__ import annotations

from ._errors import fmt_bytes
from ._memory import available_memory, physical_memory
from ._optional import import_optional, install_hint
from ._shape import as_index, as_indices, normalize_axes
from ._structural import _norm_axis as normalize_axis
from .einsum._parse import parse_subscripts as parse_einsum_subscripts
from .linalg._util import check_finite, check_matrix, concrete as concrete_value, operand as linalg_operand

__all__ = [
    "fmt_bytes",
    "physical_memory",
    "available_memory",
    "import_optional",
    "install_hint",
    "as_index",
    "as_indices",
    "normalize_axis",
    "normalize_axes",
    "parse_einsum_subscripts",
    "linalg_operand",
    "check_finite",
    "check_matrix",
    "concrete_value",
]
