"""``tensor4all.symmetry``: abelian symmetry groups and charged legs.

``U1()``, ``Zn(n)``, ``Z2()`` and products (``U1() * U1()``); ``Leg(symmetry, sectors,
dual=False)``; ``fuse(*legs)`` (a :class:`FusedLeg` with the map from part sectors to
slices of the fused sectors, and ``.split()``). The symmetric tensors built on them are
:class:`tensor4all.SymmetricTensor`. Defined in :mod:`tensor4all.structured`.
"""

from __future__ import annotations

from .structured import FusedLeg, Leg, ProductSymmetry, Symmetry, U1, Z2, Zn, fuse

__all__ = ["Symmetry", "U1", "Zn", "Z2", "ProductSymmetry", "Leg", "FusedLeg", "fuse"]
