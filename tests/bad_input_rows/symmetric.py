"""Bad-input rows of symmetric tensors: groups, legs, fusion, SymmetricTensor, tensordot."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tensor4all as t4a
from tensor4all.symmetry import FusedLeg as SY_FusedLeg, Leg as SY_Leg, ProductSymmetry as SY_Product
from tensor4all.symmetry import Symmetry as SY_Symmetry, U1 as SY_U1, Z2 as SY_Z2, Zn as SY_Zn, fuse as sy_fuse

from .common import new_table

ROWS, row = new_table()


# ---- issue 22: symmetric tensors (groups, legs, fusion, SymmetricTensor) -------

SY_P = SY_Leg(SY_U1(), {-1: 1, 1: 1})
SY_X = t4a.SymmetricTensor.random([SY_P, SY_P, SY_P.dual()], charge=1, seed=0)
SY_M = t4a.SymmetricTensor.random([SY_P, SY_P.dual()], seed=0)
row("Symmetry-abstract", SY_Symmetry, (), t4a.ChargeError, "abstract base")
row("U1-canonical-float", lambda: t4a.symmetry.U1().canonical(0.5), (), t4a.ChargeError, "must be an integer")
row("U1-negate-str", lambda: SY_U1().negate("a"), (), t4a.ChargeError, "must be an integer")
row("U1-total-bool", lambda: SY_U1().total([True], [1]), (), t4a.ChargeError, "got bool")
row("Zn-1", SY_Zn, (1,), t4a.ChargeError, "n must be an integer >= 2")
row("Z2-add-float", lambda: t4a.symmetry.Z2().add(1, 0.5), (), t4a.ChargeError, "must be an integer")
row("ProductSymmetry-one", SY_Product, (SY_U1(),), t4a.ChargeError, "two or more groups")
row("Leg-dim0", SY_Leg, (SY_U1(), {0: 0}), t4a.LegError, "positive integer")
row("Leg-duplicate", SY_Leg, (SY_U1(), [(0, 1), (0, 2)]), t4a.LegError, "appears twice")
row("Leg-dual-str", SY_Leg, (SY_U1(), {0: 1}), t4a.LegError, "dual must be True or False", dual="yes")
row("Leg-sector_dim-missing", lambda: SY_P.dual().sector_dim(3), (), t4a.LegError, "no sector of charge 3")
row("Leg-same_space-bad", lambda: SY_P.same_space(SY_Leg(SY_U1(), {0: -1})), (), t4a.LegError, "positive integer")
row("FusedLeg-empty", SY_FusedLeg, ([],), t4a.LegError, "needs at least one leg")
row("fuse-groups", sy_fuse, (SY_P, SY_Leg(SY_Z2(), {0: 1})), t4a.ChargeError, "only legs of one group fuse")
row("fuse-split-sector", lambda: sy_fuse(SY_P, SY_P).split()[0].sector_dim(7), (), t4a.LegError, "charge 7")
row("fuse-pieces_of-str", lambda: sy_fuse(SY_P, SY_P).pieces_of("x"), (), t4a.ChargeError, "must be an integer")
row(
    "SymmetricTensor-violation",
    t4a.SymmetricTensor,
    ({(1, 1): np.ones((1, 1))}, [SY_P, SY_P]),
    t4a.SymmetryViolationError,
    "carries charge 2",
)
row("SymmetricTensor-legs-not-list", t4a.SymmetricTensor, ({}, SY_P), t4a.StructuredTypeError, "list of Leg")
row(
    "SymmetricTensor-random-empty-sector",
    lambda: t4a.SymmetricTensor.random([SY_P, SY_P.dual()], charge=5),
    (),
    t4a.SymmetryViolationError,
    "carries the charge 5",
)
row(
    "SymmetricTensor-from_dense-asymmetric",
    lambda: t4a.SymmetricTensor.from_dense(np.ones((2, 2)), [SY_P, SY_P.dual()]),
    (),
    t4a.SymmetryViolationError,
    "is not symmetric",
)
row(
    "SymmetricTensor-zeros-dtype",
    lambda: t4a.SymmetricTensor.zeros([SY_P], dtype="int64"),
    (),
    t4a.StructuredTypeError,
    "dtype must be one of",
)
row(
    "SymmetricTensor-allowed_sectors-float",
    lambda: SY_X.allowed_sectors(0.5),
    (),
    t4a.ChargeError,
    "must be an integer",
)
row(
    "SymmetricTensor-fuse_legs-repeat",
    lambda: SY_X.fuse_legs([0], [0, 1]),
    (),
    t4a.StructuredShapeError,
    "exactly once",
)
row("SymmetricTensor-split_legs-plain", lambda: SY_X.split_legs(0), (), t4a.LegError, "is not a fused leg")
row(
    "SymmetricTensor-scale_leg-str",
    lambda: SY_X.scale_leg(0, "s"),
    (),
    t4a.StructuredTypeError,
    "must be a SectorDiagonal",
)
row(
    "SectorDiagonal-sector",
    lambda: t4a.SectorDiagonal(SY_P, {5: [1.0]}).to_vector(),
    (),
    t4a.LegError,
    "no sector of charge 5",
)
row("tensordot-axes", t4a.tensordot, (SY_X, SY_X.conj()), t4a.StructuredShapeError, "axes=5", axes=5)
row("tensordot-same-duality", t4a.tensordot, (SY_M, SY_M.conj()), t4a.SectorMismatchError, "opposite duality", axes=1)
row("symmetric-add-charge", lambda: SY_X + SY_X.conj(), (), t4a.SectorMismatchError, "differs")
row("symmetric-svd-three-legs", t4a.linalg.svd, (SY_X,), t4a.SymmetryError, "needs two legs")
row(
    "symmetric-truncated_svd-nan",
    lambda: t4a.linalg.truncated_svd(SY_M * float("nan"), max_rank=1),
    (),
    tf.linalg.NonFiniteError,
    "NaN",
)
