"""``SymmetricTensor``: an abelian-symmetric (charge-conserving) tensor stored as dense
blocks, one per tuple of sectors that conserves the charge (TeNPy's ``Array``, ITensor's
``BlockSparse`` storage, symmray's block arrays).

Every leg is a :class:`Leg` (a tiling of the index by charge sectors); block
``(q_1, ..., q_n)`` has shape ``(dim q_1, ..., dim q_n)`` and may be stored only when
``sum_i s_i q_i == charge`` (``s_i = -1`` on dual legs). Blocks not stored are zero; a
forbidden block is never stored. The blocks are tenferro tensors (or tidu tracers), so
derivatives, placement and the dispatcher come from the layers below: a SymmetricTensor
is a tidu pytree over its blocks, and ``tidu.grad`` with respect to one is a
SymmetricTensor with the same stored blocks (the gradient restricted to the structure).

The per-sector diagonal of ``svd``/``eigh`` is :class:`~._sector_diagonal.SectorDiagonal`.

>>> import tenferro as tf
>>> from tensor4all.structured import Leg, U1
>>> leg = Leg(U1(), {-1: 1, 1: 1})
>>> x = SymmetricTensor.random([leg, leg.dual()], seed=0)
>>> sorted(x.blocks), x.shape
([(-1, -1), (1, 1)], Shape(2, 2))
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

import tenferro as tf
import tidu
from tenferro import Shape

from ._base import StructuredTensor
from ._checks import as_int, as_position
from ._diagonal import checked_leaf as _leaf
from ._sector_diagonal import SectorDiagonal
from ._errors import (
    LegError,
    LegTypeError,
    MixedPlacementError,
    SectorMismatchError,
    StructuredShapeError,
    StructuredTypeError,
    StructuredValueError,
    SymmetryViolationError,
)
from ._shapes import JaggedShape
from ._value_checks import checked, symmetric_entries
from ._symmetry import FusedLeg, Leg, Symmetry, checked_charge, fuse, leg_difference, leg_list, sign_of

__all__ = ["SymmetricTensor", "allowed_sectors", "assemble"]

_FLOATING = ("float32", "float64", "complex64", "complex128")


def _check_legs(legs: Any, op: str) -> tuple[Leg, ...]:
    return leg_list(legs, op, "leg", StructuredShapeError, SectorMismatchError, "all legs of a tensor share one group")


def _tensor_charge(legs: Sequence[Leg], charge: Any, op: str) -> Any:
    """The canonical total charge (default: the group's identity), errors naming ``op``."""
    g = legs[0].symmetry
    return g.identity if charge is None else checked_charge(g, charge, f"{op}: charge")


def _carried_keys(legs: Sequence[Leg], charge: Any, op: str) -> list[tuple]:
    """:func:`allowed_sectors`, or a :class:`SymmetryViolationError` when no tuple of the
    legs' sectors carries ``charge`` (a sector with no states: every such tensor is zero)."""
    keys = allowed_sectors(legs, charge)
    if not keys:
        charges = "; ".join(
            f"leg {k}{' (dual)' if leg.is_dual else ''}: {list(leg.charges)}" for k, leg in enumerate(legs)
        )
        raise SymmetryViolationError(
            f"{op}: no tuple of sectors of the legs carries the charge {charge!r} "
            f"(the charges, dual legs counted negatively: {charges}); a tensor of this "
            "charge on these legs has no states (it would be zero)"
        )
    return keys


def _shape_mismatch(op: str, what: str, shape: tuple, legs: Sequence[Leg], want: tuple, names: Sequence[str]) -> str:
    """The message of a block or array whose shape does not fit its legs: the first leg off."""
    if len(shape) != len(want):
        return f"{op}: {what} has {len(shape)} axes (shape {shape}), the tensor has {len(legs)} legs"
    k = next(i for i, (a, b) in enumerate(zip(shape, want)) if a != b)
    return f"{op}: {what} has shape {shape}, but {names[k]} has dimension {want[k]} (the legs need {want})"


def allowed_sectors(legs: Sequence[Leg], charge: Any) -> list[tuple]:
    """Every tuple of sectors (one charge per leg) with ``sum_i s_i q_i == charge``, in
    the order of the legs' sectors (the last leg's charge is solved for, not searched)."""
    g = legs[0].symmetry
    signs = [sign_of(leg) for leg in legs]
    out = []
    last = legs[-1]
    for head in itertools.product(*(leg.charges for leg in legs[:-1])):
        rest = g._add(charge, g._negate(g._total(head, signs[:-1])))  # s_last * q_last
        q = rest if signs[-1] > 0 else g._negate(rest)
        if q in last:
            out.append((*head, q))
    return out


def assemble(
    pieces: Sequence[Sequence[tuple[Any, int]]], get: Callable[[tuple], Any], dtype: Any, placement: Any = None
) -> Any:
    """A dense tensor from a grid of tiles: ``pieces[m]`` lists ``(key, extent)`` along mode
    ``m``; ``get(keys)`` returns the tile at ``keys`` (or None: zeros). Built by
    concatenation (differentiable, each element written once)."""
    nd = len(pieces)

    def build(prefix: tuple, extents: tuple) -> Any:
        m = len(prefix)
        if m == nd:
            tile = get(prefix)
            return tf.zeros(extents, dtype=dtype, placement=placement) if tile is None else tile
        parts = [build((*prefix, key), (*extents, ext)) for key, ext in pieces[m]]
        return parts[0] if len(parts) == 1 else tf.concatenate(parts, axis=m)

    return build((), ())


class SymmetricTensor(StructuredTensor):
    """A charge-conserving tensor: ``SymmetricTensor(blocks, legs, charge=None)`` with
    ``blocks`` a mapping from sector tuples (one charge per leg) to dense blocks and
    ``charge`` the tensor's total charge (default: the group's identity).

    Blocks must have the sector dimensions as shape and conserve the charge
    (:class:`SymmetryViolationError` otherwise); all share one dtype and placement. With
    no blocks (the zero tensor) give ``dtype=``.
    """

    __slots__ = ("_blocks", "_legs", "_charge", "_dtype")
    _densify_order = 2  # densified before block-diagonals and diagonals when no kernel fits
    _conj_flips_legs = True  # conj is ITensor's dag: the legs flip duality, also for real data

    def __init__(
        self, blocks: Mapping[tuple, Any], legs: Sequence[Leg], charge: Any = None, *, dtype: Any = None
    ) -> None:
        op = "SymmetricTensor"
        legs = _check_legs(legs, op)
        g = legs[0].symmetry
        charge = _tensor_charge(legs, charge, op)
        if not isinstance(blocks, Mapping):
            raise StructuredTypeError(
                f"{op}: blocks must be a mapping sector tuple -> dense block, got {type(blocks).__name__}"
            )
        signs = [sign_of(leg) for leg in legs]
        out: dict[tuple, Any] = {}
        given: dict[tuple, tuple] = {}
        for raw, value in blocks.items():
            if not isinstance(raw, tuple):
                raise LegTypeError(
                    f"{op}: block key {raw!r} must be a tuple of {len(legs)} charges (one per leg), "
                    f"got {type(raw).__name__}"
                )
            if len(raw) != len(legs):
                raise LegError(
                    f"{op}: block key {raw!r} must be a tuple of {len(legs)} charges (one per leg), got {len(raw)}"
                )
            key = tuple(checked_charge(g, q, f"{op}: block {raw!r}, leg {k}") for k, q in enumerate(raw))
            for k, (q, leg) in enumerate(zip(key, legs)):
                if q not in leg._sectors:
                    raise LegError(
                        f"{op}: block {key!r}: leg {k} has no sector of charge {q!r}; its charges are "
                        f"{list(leg.charges)}"
                    )
            total = g._total(key, signs)
            if total != charge:
                raise SymmetryViolationError(
                    f"{op}: block {key!r} carries charge {total!r} (dual legs counted negatively) but the tensor's "
                    f"charge is {charge!r}; a symmetric tensor stores only blocks that conserve the charge"
                )
            if key in out:
                raise LegError(f"{op}: block {key!r} is given twice (as {given[key]!r} and {raw!r})")
            b = _leaf(value, op, f"block {key!r}")
            want = tuple(leg._sectors[q] for q, leg in zip(key, legs))
            if tuple(b.shape) != want:
                raise StructuredShapeError(
                    _shape_mismatch(
                        op,
                        f"block {key!r}",
                        tuple(b.shape),
                        legs,
                        want,
                        [f"its sector on leg {k} (charge {q!r})" for k, q in enumerate(key)],
                    )
                )
            out[key] = b
            given[key] = raw
        dts = {str(b.dtype) for b in out.values()}
        if len(dts) > 1:
            raise StructuredTypeError(f"{op}: blocks must share one dtype, got {sorted(dts)}")
        pls = {str(b.placement) for b in out.values()}
        if len(pls) > 1:
            raise MixedPlacementError(f"{op}: blocks live on different placements {sorted(pls)}")
        if out:
            dt = next(iter(out.values())).dtype
            if dtype is not None and str(_as_dtype(dtype, op)) != str(dt):
                raise StructuredTypeError(f"{op}: dtype={dtype!r} but the blocks are {dt}")
        else:
            dt = _as_dtype(tf.float64 if dtype is None else dtype, op)
        if "int" in str(dt) or "bool" in str(dt):
            raise StructuredTypeError(f"{op}: blocks must be float or complex, got {dt}")
        self._blocks = dict(sorted(out.items(), key=lambda kv: kv[0]))
        self._legs = legs
        self._charge = charge
        self._dtype = dt

    # -- unchecked construction --------------------------------------------------------
    @classmethod
    def _make(cls, blocks: Mapping[tuple, Any], legs: Sequence[Leg], charge: Any, dtype: Any) -> SymmetricTensor:
        out = object.__new__(cls)
        out._blocks = dict(sorted(blocks.items(), key=lambda kv: kv[0]))
        out._legs = tuple(legs)
        out._charge = charge
        out._dtype = dtype
        return out

    @classmethod
    def _from_leaves(cls, aux: Any, leaves: Any) -> SymmetricTensor:
        keys, legs, charge, dtype = aux
        out = object.__new__(cls)
        out._blocks = dict(zip(keys, leaves))
        out._legs, out._charge, out._dtype = legs, charge, dtype
        return out

    def _aux(self) -> tuple:
        return (tuple(self._blocks), self._legs, self._charge, self._dtype)

    # -- metadata ------------------------------------------------------------------------
    @property
    def blocks(self) -> dict[tuple, Any]:
        """Sector tuple -> dense block (a copy of the mapping; the blocks themselves are shared)."""
        return dict(self._blocks)

    @property
    def leaves(self) -> tuple[Any, ...]:
        return tuple(self._blocks.values())

    @property
    def legs(self) -> tuple[Leg, ...]:
        return self._legs

    @property
    def charge(self) -> Any:
        return self._charge

    @property
    def symmetry(self) -> Symmetry:
        return self._legs[0].symmetry

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def placement(self) -> Any:
        for b in self._blocks.values():
            return b.placement
        return tf.get_default_placement()

    @property
    def shape(self) -> Shape:
        return Shape(tuple(leg.dim for leg in self._legs))

    @property
    def nnz(self) -> int:
        """Stored numbers (the sum of the block sizes)."""
        return sum(math.prod(b.shape) for b in self._blocks.values())

    @property
    def block_shapes(self) -> JaggedShape:
        """The shapes of the stored blocks, in key order, as a jagged shape."""
        return JaggedShape([Shape(tuple(b.shape)) for b in self._blocks.values()])

    def allowed_sectors(self, charge: Any = None) -> list[tuple]:
        """Every sector tuple of the legs that may hold a nonzero block (stored or not) for
        ``charge`` (default: the tensor's charge)."""
        if charge is not None:
            charge = _tensor_charge(self._legs, charge, "SymmetricTensor.allowed_sectors")
        return allowed_sectors(self._legs, self._charge if charge is None else charge)

    # -- dense view ----------------------------------------------------------------------
    def to_dense(self) -> Any:
        pieces = [[(q, d) for q, d in leg.sectors.items()] for leg in self._legs]
        return assemble(pieces, self._blocks.get, self._dtype, self.placement)

    @classmethod
    def from_dense(
        cls, x: Any, legs: Sequence[Leg], charge: Any = None, *, tol: float | None = None
    ) -> SymmetricTensor:
        """The blocks of dense ``x`` on ``legs``; entries outside the allowed blocks must be
        zero up to ``tol`` (an absolute bound, a finite number >= 0; default
        ``1e-12 * max|x|``), else :class:`SymmetryViolationError` names the largest one, its
        index and its sectors. A ``charge`` that no tuple of sectors carries is a
        :class:`SymmetryViolationError` too. Differentiable in ``x``. The entries are checked
        where they are: under ``tidu.vmap`` every example's (each with its own default
        tolerance), under ``tenferro.jit`` when the compiled program runs."""
        op = "SymmetricTensor.from_dense"
        legs = _check_legs(legs, op)
        charge = _tensor_charge(legs, charge, op)
        if tol is not None:
            if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, (int, float, np.integer, np.floating)):
                raise StructuredTypeError(f"{op}: tol must be a number >= 0 or None, got {type(tol).__name__} {tol!r}")
            if not math.isfinite(tol) or tol < 0:
                raise StructuredValueError(
                    f"{op}: tol must be a finite number >= 0 (the largest entry allowed "
                    f"outside the blocks) or None, got {tol!r}"
                )
        x = _leaf(x, op, "x")
        dims = tuple(leg.dim for leg in legs)
        if tuple(x.shape) != dims:
            raise StructuredShapeError(
                _shape_mismatch(op, "x", tuple(x.shape), legs, dims, [f"leg {k}" for k in range(len(legs))])
            )
        if "int" in str(x.dtype) or "bool" in str(x.dtype):
            x = tf.asarray(np.asarray(x), dtype=tf.float64)
        keys = _carried_keys(legs, charge, op)
        x = checked(x, symmetric_entries(legs, keys, charge, tol, op))  # under vmap and jit too
        blocks = {k: x[tuple(leg.slice(q) for q, leg in zip(k, legs))] for k in keys}
        return cls._make(blocks, legs, charge, x.dtype)

    @classmethod
    def zeros(cls, legs: Sequence[Leg], charge: Any = None, dtype: Any = tf.float64) -> SymmetricTensor:
        """Zero blocks for every allowed sector tuple; :class:`SymmetryViolationError` if no
        sector tuple carries ``charge``."""
        op = "SymmetricTensor.zeros"
        legs = _check_legs(legs, op)
        charge = _tensor_charge(legs, charge, op)
        dt = _as_dtype(dtype, op)
        blocks = {
            k: tf.zeros(tuple(leg._sectors[q] for q, leg in zip(k, legs)), dtype=dt)
            for k in _carried_keys(legs, charge, op)
        }
        return cls._make(blocks, legs, charge, dt)

    @classmethod
    def random(
        cls, legs: Sequence[Leg], charge: Any = None, dtype: Any = tf.float64, seed: int | None = 0
    ) -> SymmetricTensor:
        """Standard normal blocks (complex: real and imaginary parts) on every allowed sector
        tuple; :class:`SymmetryViolationError` if no sector tuple carries ``charge``."""
        op = "SymmetricTensor.random"
        legs = _check_legs(legs, op)
        charge = _tensor_charge(legs, charge, op)
        dt = _as_dtype(dtype, op)
        if seed is not None:
            seed = as_int(op, "seed", seed)
            if seed < 0:
                raise StructuredValueError(f"{op}: seed must be an integer >= 0 or None, got {seed}")
        keys = _carried_keys(legs, charge, op)
        rng = np.random.default_rng(seed)
        blocks = {}
        for k in keys:
            shape = tuple(leg._sectors[q] for q, leg in zip(k, legs))
            a = rng.standard_normal(shape)
            if "complex" in str(dt):
                a = a + 1j * rng.standard_normal(shape)
            blocks[k] = tf.asarray(np.asfortranarray(a, dtype=dt.numpy))  # drawn in double, rounded to dt
        return cls._make(blocks, legs, charge, dt)

    # -- structure -----------------------------------------------------------------------
    def fuse_legs(self, *groups: Sequence[int]) -> SymmetricTensor:
        """Fuse each group of axes into one leg (:func:`fuse`); the groups, in order, must
        list every axis once (``x.fuse_legs([0, 1], [2, 3])``: a matrix). A group of one
        axis keeps its leg. Sectors of a fused leg are ordered by charge; within one, the
        part sectors are stacked in the order of :attr:`FusedLeg.pieces`, each part block
        reshaped column-major (first axis fastest, as ``tenferro.reshape``)."""
        op = "SymmetricTensor.fuse_legs"
        n = len(self._legs)
        groups_t = []
        for gi, grp in enumerate(groups):
            if isinstance(grp, (int, np.integer)) and not isinstance(grp, bool):
                grp = [grp]
            if isinstance(grp, (str, bytes)) or not isinstance(grp, Sequence) or not grp:
                raise StructuredTypeError(f"{op}: group {gi} must be a non-empty list of axes, got {grp!r}")
            groups_t.append(tuple(as_position(op, f"group {gi}: axis", a, n) for a in grp))
        flat = [a for grp in groups_t for a in grp]
        if sorted(flat) != list(range(n)):
            raise StructuredShapeError(
                f"{op}: the groups {list(map(list, groups_t))} must list each of the {n} axes exactly once"
            )
        x = self if flat == list(range(n)) else self.transpose(flat)
        legs_in = x._legs
        new_legs: list[Leg] = []
        spans = []
        start = 0
        for grp in groups_t:
            parts = legs_in[start : start + len(grp)]
            spans.append((start, start + len(grp)))
            new_legs.append(parts[0] if len(parts) == 1 else fuse(*parts))
            start += len(grp)
        # output block key -> {tuple of piece keys (part charges per group): block reshaped}
        grid: dict[tuple, dict[tuple, Any]] = {}
        for key, b in x._blocks.items():
            out_key, piece_key, shape = [], [], []
            for (s, e), leg in zip(spans, new_legs):
                part = key[s:e]
                if isinstance(leg, FusedLeg) and e - s > 1:
                    q, lo, hi = leg.pieces[part]
                    out_key.append(q)
                    piece_key.append(part)
                    shape.append(hi - lo)
                else:
                    out_key.append(part[0])
                    piece_key.append(part)
                    shape.append(leg.sector_dim(part[0]))
            grid.setdefault(tuple(out_key), {})[tuple(piece_key)] = tf.reshape(b, tuple(shape))
        blocks = {}
        for out_key, tiles in grid.items():
            pieces = []
            for (s, e), leg, q in zip(spans, new_legs, out_key):
                if isinstance(leg, FusedLeg) and e - s > 1:
                    pieces.append([(part, hi - lo) for part, lo, hi in leg.pieces_of(q)])
                else:
                    pieces.append([((q,), leg.sector_dim(q))])
            blocks[out_key] = assemble(pieces, tiles.get, self._dtype, self.placement)
        return SymmetricTensor._make(blocks, new_legs, self._charge, self._dtype)

    def split_legs(self, *axes: int) -> SymmetricTensor:
        """The inverse of :meth:`fuse_legs`: split the fused legs at ``axes`` (default:
        every fused leg) into their parts."""
        op = "SymmetricTensor.split_legs"
        n = len(self._legs)
        fused = [i for i, leg in enumerate(self._legs) if isinstance(leg, FusedLeg)]
        if not axes:
            axes_t = tuple(fused)
        else:
            axes_t = tuple(as_position(op, "axis", a, n) for a in axes)
        for j, a in enumerate(axes_t):
            if a in axes_t[:j]:
                raise StructuredShapeError(f"{op}: axis {a} is given twice (axes {list(axes)}); split each leg once")
            if not isinstance(self._legs[a], FusedLeg):
                raise LegError(
                    f"{op}: leg {a} ({self._legs[a]!r}) is not a fused leg; the fused legs of this "
                    f"tensor are at axes {fused} (made by fuse_legs or fuse)"
                )
        new_legs: list[Leg] = []
        for i, leg in enumerate(self._legs):
            new_legs.extend(leg.split() if i in axes_t else (leg,))
        blocks = {}
        for key, b in self._blocks.items():
            # every combination of pieces of the split axes
            choices = []
            for i, (q, leg) in enumerate(zip(key, self._legs)):
                if i in axes_t:
                    choices.append([(part, lo, hi) for part, lo, hi in leg.pieces_of(q)])
                else:
                    choices.append([((q,), 0, leg.sector_dim(q))])
            for combo in itertools.product(*choices):
                index = tuple(slice(lo, hi) for _, lo, hi in combo)
                new_key = tuple(c for part, _, _ in combo for c in part)
                shape = []
                for i, (part, lo, hi) in enumerate(combo):
                    leg = self._legs[i]
                    parts = leg.split() if i in axes_t else (leg,)
                    shape.extend(p.sector_dim(c) for p, c in zip(parts, part))
                blocks[new_key] = tf.reshape(b[index], tuple(shape))
        return SymmetricTensor._make(blocks, new_legs, self._charge, self._dtype)

    def scale_leg(self, axis: int, s: SectorDiagonal) -> SymmetricTensor:
        """Multiply the index of leg ``axis`` by the per-sector diagonal ``s`` (``U * S``
        of an SVD): each block's slices along ``axis`` scaled by ``s`` of its sector."""
        op = "SymmetricTensor.scale_leg"
        axis = as_position(op, "axis", axis, len(self._legs))
        if not isinstance(s, SectorDiagonal):
            raise StructuredTypeError(f"{op}: s must be a SectorDiagonal (from svd/eigh), got {type(s).__name__}")
        leg = self._legs[axis]
        if not leg.same_space(s.leg):
            raise SectorMismatchError(
                f"{op}: leg {axis} {leg!r} is not the leg of s {s.leg!r}: {leg_difference(leg, s.leg)}"
            )
        nd = len(self._legs)
        blocks = {}
        for key, b in self._blocks.items():
            v = s.values.get(key[axis])
            if v is None:
                continue  # a sector of s without values: zero
            shape = [1] * nd
            shape[axis] = v.shape[0]
            blocks[key] = b * tf.reshape(v, tuple(shape))
        dt = tf.result_type(self._dtype, *(v.dtype for v in s.values.values()))
        return SymmetricTensor._make(blocks, self._legs, self._charge, dt)

    def _rebuild(self, leaves: Any) -> SymmetricTensor:
        return SymmetricTensor(dict(zip(self._blocks, leaves)), self._legs, self._charge, dtype=self._dtype)

    def _describe(self) -> str:
        return (
            f"SymmetricTensor(shape={tuple(self.shape)}, {self.symmetry!r}, charge={self._charge!r}, "
            f"{len(self._blocks)} blocks, {self._dtype})"
        )

    def _leaf_name(self, k: int) -> str:
        return f"block {list(self._blocks)[k]!r}"

    def _repr_fields(self) -> list[tuple[str, Any]]:
        return [
            ("legs", list(self._legs)),
            ("charge", self._charge),
            ("blocks", len(self._blocks)),
            ("dtype", self._dtype),
        ]


def _as_dtype(dtype: Any, op: str) -> Any:
    """A float or complex tenferro dtype from anything ``tenferro.dtype`` reads."""
    try:
        dt = tf.dtype(dtype)
    except tf.DTypeError:
        dt = None
    if dt is None or str(dt) not in _FLOATING:
        raise StructuredTypeError(f"{op}: dtype must be one of {', '.join(_FLOATING)}, got {dtype!r}")
    return dt


tidu.register_pytree_node(
    SymmetricTensor, lambda x: (tuple(x._blocks.values()), x._aux()), SymmetricTensor._from_leaves
)
