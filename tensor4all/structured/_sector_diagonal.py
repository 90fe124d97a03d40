"""``SectorDiagonal``: a diagonal per charge sector of one leg, the singular values of the
symmetric ``svd`` and the eigenvalues of ``eigh`` (charge -> 1-d tensor). A tidu pytree over
its values."""

from __future__ import annotations

from typing import Any, Mapping

import tenferro as tf
import tidu

from ._diagonal import checked_leaf as _leaf
from ._errors import LegError, StructuredShapeError, StructuredTypeError
from ._symmetry import Leg, checked_charge

__all__ = ["SectorDiagonal"]


class SectorDiagonal:
    """A diagonal per sector of one leg: ``values[q]`` is a 1-d tensor of ``leg.sector_dim(q)``
    entries (singular values of an SVD, eigenvalues of ``eigh``). A tidu pytree."""

    __slots__ = ("leg", "values")

    def __init__(self, leg: Leg, values: Mapping[Any, Any]) -> None:
        op = "SectorDiagonal"
        if not isinstance(leg, Leg):
            raise StructuredTypeError(f"{op}: leg must be a Leg, got {leg!r}")
        if not isinstance(values, Mapping):
            raise StructuredTypeError(
                f"{op}: values must be a mapping charge -> 1-d values, got {type(values).__name__}"
            )
        vals = {}
        for raw, v in values.items():
            q = checked_charge(leg.symmetry, raw, f"{op}: sector {raw!r}")
            if q not in leg._sectors:
                raise LegError(
                    f"{op}: the leg {leg!r} has no sector of charge {q!r}; its charges are {list(leg.charges)}"
                )
            if q in vals:
                raise LegError(f"{op}: sector {q!r} is given twice")
            v = _leaf(v, op, f"the values of sector {q!r}")
            if tuple(v.shape) != (leg._sectors[q],):
                raise StructuredShapeError(
                    f"{op}: sector {q!r} has dimension {leg._sectors[q]}, its values have shape {tuple(v.shape)}"
                )
            vals[q] = v
        dts = {str(v.dtype) for v in vals.values()}
        if len(dts) > 1:
            raise StructuredTypeError(f"{op}: the values must share one dtype, got {sorted(dts)}")
        self.leg = leg
        self.values = vals

    @classmethod
    def _make(cls, leg: Leg, values: dict) -> SectorDiagonal:
        out = object.__new__(cls)
        out.leg, out.values = leg, values
        return out

    def to_vector(self) -> Any:
        """All values as one 1-d tensor of ``leg.dim`` entries, in the leg's sector order (a
        sector without values contributes zeros, as in :meth:`SymmetricTensor.scale_leg`)."""
        vs = [self[q] for q in self.leg.charges]
        return vs[0] if len(vs) == 1 else tf.concatenate(vs, axis=0)

    def to_dense(self) -> Any:
        """The dense diagonal matrix on ``(leg, leg.dual())``."""
        return tf.diag(self.to_vector())

    def __getitem__(self, q: Any) -> Any:
        """The values of sector ``q`` (zeros for a sector of the leg without values)."""
        q = self.leg._charge(q, "SectorDiagonal[...]")
        v = self.values.get(q)
        if v is None:
            dt = next(iter(self.values.values())).dtype if self.values else tf.float64
            return tf.zeros((self.leg._sectors[q],), dtype=dt)
        return v

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"SectorDiagonal({self.leg!r}, sectors={list(self.values)})"


tidu.register_pytree_node(
    SectorDiagonal,
    lambda s: (tuple(s.values.values()), (s.leg, tuple(s.values))),
    lambda aux, leaves: SectorDiagonal._make(aux[0], dict(zip(aux[1], leaves))),
)
