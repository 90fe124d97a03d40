"""Bad input for symmetric tensors (issue 22, item 9): every public entry point of the
symmetric layer (groups, legs, fusion, SymmetricTensor and SectorDiagonal, and
``einsum``/``tensordot``/``matmul``/``tensor4all.linalg`` with symmetric operands) met with
hostile input.

One table: (id, call, the package class, the builtin class, fragments). Each case asserts
the package's exception class, the matching builtin (``TypeError`` for a wrong type,
``ValueError`` for a wrong value, ``IndexError`` for a position out of range) and that the
message names the offending thing (the leg or sector by its position, the charges, what
was expected). The tests after the table check what must not happen silently: a wrong
dtype, a value that depends on how a charge was spelled, a half-updated object, a counted
fallback to dense before an error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all import models
from tensor4all.symmetry import U1, FusedLeg, Leg, ProductSymmetry, Symmetry, Z2, Zn, fuse

ST = t4a.SymmetricTensor
P = Leg(U1(), {-1: 1, 1: 1})  # a spin-1/2 in units of 2Sz
W = Leg(U1(), {-1: 2, 1: 1})  # the same charges, another dimension
PZ = Leg(Z2(), {0: 1, 1: 1})
UZ = U1() * Z2()
M = ST.random([P, P.dual()], seed=0)  # a matrix (charge 0)
MZ = ST.random([PZ, PZ.dual()], seed=0)
X = ST.random([P, P, P.dual()], charge=1, seed=0)
XF = X.fuse_legs([0, 1], [2])  # leg 0 fused
S = t4a.linalg.svd(M)[1]  # a SectorDiagonal on the bond

CASES: list[tuple] = []  # (id, call, package class, builtin class, fragments)


def case(name, call, exc, builtin, *fragments):
    CASES.append((name, call, exc, builtin, fragments))


# ---- groups -----------------------------------------------------------------------------------
case("Symmetry-abstract", lambda: Symmetry(), t4a.ChargeError, ValueError, "abstract base", "U1()")
case("U1-argument", lambda: U1(3), t4a.ChargeError, TypeError, "U1() takes no arguments", "(3,)")
case("U1-times-int", lambda: U1() * 3, t4a.ChargeError, TypeError, "U1() * 3", "takes groups", "int")
case("int-times-U1", lambda: 3 * U1(), t4a.ChargeError, TypeError, "3 * U1()", "takes groups")
case("Zn-1", lambda: Zn(1), t4a.ChargeError, ValueError, "n must be an integer >= 2", "got 1")
case("Zn-float", lambda: Zn(2.0), t4a.ChargeError, TypeError, "n must be an integer >= 2", "got 2.0")
case("Zn-bool", lambda: Zn(True), t4a.ChargeError, TypeError, "got True")
case("Product-one", lambda: ProductSymmetry(U1()), t4a.ChargeError, ValueError, "two or more groups")
case("Product-not-a-group", lambda: ProductSymmetry(U1(), "Z2"), t4a.ChargeError, TypeError, "factor 1 is str 'Z2'")
case(
    "U1-charge-float",
    lambda: U1().canonical(0.5),
    t4a.ChargeError,
    TypeError,
    "a charge of U1()",
    "must be an integer",
    "float 0.5",
)
case("U1-charge-nan", lambda: U1().canonical(float("nan")), t4a.ChargeError, TypeError, "float nan")
case("U1-charge-bool", lambda: U1().canonical(True), t4a.ChargeError, TypeError, "bool True")
case("U1-charge-tuple", lambda: U1().canonical((1, 0)), t4a.ChargeError, TypeError, "tuple (1, 0)")
case("U1-charge-str", lambda: U1().negate("a"), t4a.ChargeError, TypeError, "str 'a'")
case("Z2-charge-float", lambda: Z2().add(1, 0.5), t4a.ChargeError, TypeError, "a charge of Z2()", "float 0.5")
case(
    "product-charge-int",
    lambda: UZ.canonical(1),
    t4a.ChargeError,
    TypeError,
    "U1() * Z2()",
    "tuple of 2 integers",
    "int 1",
)
case(
    "product-charge-length",
    lambda: UZ.canonical((1, 0, 0)),
    t4a.ChargeError,
    TypeError,
    "tuple of 2 integers",
    "(1, 0, 0)",
)
case(
    "product-charge-entry",
    lambda: UZ.canonical((0, 0.5)),
    t4a.ChargeError,
    TypeError,
    "entry 1 (for Z2())",
    "float 0.5",
)
case("total-signs-short", lambda: U1().total([1, 2], [1]), t4a.ChargeError, ValueError, "2 charges but 1 signs")
case("total-sign-zero", lambda: U1().total([1], [0]), t4a.ChargeError, ValueError, "sign 0 must be +1 or -1", "got 0")
case("total-sign-str", lambda: U1().total([1], ["-"]), t4a.ChargeError, TypeError, "sign 0 must be +1 or -1")
case("total-charge-float", lambda: U1().total([1, 2.5], [1, 1]), t4a.ChargeError, TypeError, "charge 1", "float 2.5")

# ---- legs -------------------------------------------------------------------------------------
case("Leg-group-class", lambda: Leg(U1, {0: 1}), t4a.ChargeError, TypeError, "symmetry must be a Symmetry")
case("Leg-sectors-None", lambda: Leg(U1(), None), t4a.LegError, TypeError, "sectors must be a mapping", "NoneType None")
case("Leg-sectors-int", lambda: Leg(U1(), 3), t4a.LegError, TypeError, "sectors must be a mapping", "int 3")
case("Leg-sectors-str", lambda: Leg(U1(), "ab"), t4a.LegError, TypeError, "str 'ab'")
case("Leg-sectors-empty", lambda: Leg(U1(), {}), t4a.LegError, ValueError, "non-empty")
case(
    "Leg-entry-not-pair",
    lambda: Leg(U1(), [(0, 1), 5]),
    t4a.LegError,
    TypeError,
    "entry 1 is 5",
    "(charge, dimension) pair",
)
case(
    "Leg-dim-zero",
    lambda: Leg(U1(), {0: 1, 2: 0}),
    t4a.LegError,
    ValueError,
    "sector 1 (charge 2)",
    "dimension 0",
    "positive integer",
)
case("Leg-dim-negative", lambda: Leg(U1(), {0: -3}), t4a.LegError, ValueError, "sector 0 (charge 0)", "dimension -3")
case("Leg-dim-float", lambda: Leg(U1(), {0: 2.0}), t4a.LegError, TypeError, "dimension 2.0", "positive integer")
case("Leg-dim-nan", lambda: Leg(U1(), {0: float("nan")}), t4a.LegError, TypeError, "dimension nan")
case("Leg-dim-bool", lambda: Leg(U1(), {0: True}), t4a.LegError, TypeError, "dimension True")
case(
    "Leg-charge-float",
    lambda: Leg(U1(), {0: 1, 0.5: 1}),
    t4a.ChargeError,
    TypeError,
    "Leg: sector 1",
    "a charge of U1()",
    "float 0.5",
)
case("Leg-charge-nan", lambda: Leg(U1(), {float("nan"): 1}), t4a.ChargeError, TypeError, "Leg: sector 0", "float nan")
case("Leg-charge-bool", lambda: Leg(U1(), {True: 1}), t4a.ChargeError, TypeError, "bool True")
case(
    "Leg-tuple-on-U1",
    lambda: Leg(U1(), {(1, 0): 1}),
    t4a.ChargeError,
    TypeError,
    "Leg: sector 0",
    "a charge of U1()",
    "tuple (1, 0)",
)
case("Leg-int-on-product", lambda: Leg(UZ, {1: 1}), t4a.ChargeError, TypeError, "a charge of U1() * Z2()", "int 1")
case(
    "Leg-duplicate",
    lambda: Leg(U1(), [(0, 1), (1, 1), (0, 2)]),
    t4a.LegError,
    ValueError,
    "charge 0 appears twice",
    "sector 0",
    "sector 2",
)
case(
    "Leg-duplicate-mod-n",
    lambda: Leg(Z2(), {1: 1, 3: 1}),
    t4a.LegError,
    ValueError,
    "charge 1 appears twice",
    "sector 1 as 3",
    "taken mod 2",
)
case("Leg-dual-str", lambda: Leg(U1(), {0: 1}, dual="yes"), t4a.LegError, TypeError, "dual must be True or False")
case("Leg-dual-int", lambda: Leg(U1(), {0: 1}, dual=1), t4a.LegError, TypeError, "dual must be True or False")
case(
    "Leg.sector_dim-missing",
    lambda: P.sector_dim(3),
    t4a.LegError,
    ValueError,
    "no sector of charge 3",
    "its charges are [-1, 1]",
)
case(
    "Leg.sector_dim-float", lambda: P.sector_dim(1.0), t4a.ChargeError, TypeError, "sector_dim of Leg(U1()", "float 1.0"
)
case("Leg.sector_dim-bool", lambda: P.sector_dim(True), t4a.ChargeError, TypeError, "bool True")
case("Leg.slice-float", lambda: P.slice(1.0), t4a.ChargeError, TypeError, "slice of Leg(U1()", "float 1.0")
case("Leg.slice-list", lambda: P.slice([1]), t4a.ChargeError, TypeError, "list [1]")
case("Leg.slice-missing", lambda: P.slice(0), t4a.LegError, ValueError, "no sector of charge 0")

# ---- fusion -----------------------------------------------------------------------------------
case("fuse-nothing", lambda: fuse(), t4a.LegError, ValueError, "needs at least one leg")
case("fuse-not-a-leg", lambda: fuse(P, 3), t4a.LegError, TypeError, "part 1 must be a Leg, got int 3")
case("fuse-str", lambda: fuse("ab"), t4a.LegError, TypeError, "part 0 must be a Leg, got str 'ab'")
case("FusedLeg-not-a-list", lambda: FusedLeg(P), t4a.LegError, TypeError, "legs must be a list of Leg", "Leg")
case(
    "fuse-groups",
    lambda: fuse(P, PZ),
    t4a.ChargeError,
    ValueError,
    "leg 1 has symmetry Z2()",
    "leg 0 has U1()",
    "only legs of one group fuse",
)
case(
    "pieces_of-float", lambda: fuse(P, P).pieces_of(0.5), t4a.ChargeError, TypeError, "FusedLeg.pieces_of", "float 0.5"
)

# ---- SymmetricTensor: construction --------------------------------------------------------------
case("ST-legs-not-list", lambda: ST({}, P), t4a.StructuredTypeError, TypeError, "legs must be a list of Leg")
case("ST-no-legs", lambda: ST({}, []), t4a.StructuredShapeError, ValueError, "at least one leg")
case("ST-leg-not-Leg", lambda: ST({}, [P, 3]), t4a.StructuredTypeError, TypeError, "leg 1 must be a Leg", "int 3")
case(
    "ST-legs-two-groups",
    lambda: ST({}, [P, PZ]),
    t4a.SectorMismatchError,
    ValueError,
    "leg 1 has symmetry Z2()",
    "leg 0 has U1()",
)
case("ST-blocks-list", lambda: ST([], [P]), t4a.StructuredTypeError, TypeError, "blocks must be a mapping", "list")
case("ST-key-not-tuple", lambda: ST({1: np.ones(1)}, [P]), t4a.LegError, TypeError, "block key 1", "tuple of 1 charges")
case(
    "ST-key-length",
    lambda: ST({(1, 1): np.ones((1, 1))}, [P]),
    t4a.LegError,
    ValueError,
    "block key (1, 1)",
    "tuple of 1 charges",
    "got 2",
)
case(
    "ST-key-float",
    lambda: ST({(1.0, 1): np.ones((1, 1))}, [P, P.dual()]),
    t4a.ChargeError,
    TypeError,
    "block (1.0, 1), leg 0",
    "float 1.0",
)
case(
    "ST-key-tuple-on-U1",
    lambda: ST({((1,), 1): np.ones((1, 1))}, [P, P.dual()]),
    t4a.ChargeError,
    TypeError,
    "leg 0",
    "tuple (1,)",
)
case(
    "ST-key-no-sector",
    lambda: ST({(3, 3): np.ones((1, 1))}, [P, P.dual()]),
    t4a.LegError,
    ValueError,
    "block (3, 3): leg 0 has no sector of charge 3",
    "[-1, 1]",
)
case(
    "ST-forbidden-block",
    lambda: ST({(1, 1): np.ones((1, 1))}, [P, P]),
    t4a.SymmetryViolationError,
    ValueError,
    "block (1, 1) carries charge 2",
    "charge is 0",
)
case(
    "ST-block-shape",
    lambda: ST({(-1, -1): np.ones((1, 1))}, [W, W.dual()]),
    t4a.StructuredShapeError,
    ValueError,
    "block (-1, -1) has shape (1, 1)",
    "leg 0 (charge -1) has dimension 2",
)
case(
    "ST-block-ndim",
    lambda: ST({(1, 1): np.ones(1)}, [P, P.dual()]),
    t4a.StructuredShapeError,
    ValueError,
    "block (1, 1) has 1 axes",
    "2 legs",
)
case(
    "ST-block-str",
    lambda: ST({(1, 1): "x"}, [P, P.dual()]),
    t4a.StructuredTypeError,
    TypeError,
    "block (1, 1) must be a tensor or an array of numbers",
    "str 'x'",
)
case(
    "ST-block-None",
    lambda: ST({(1, 1): None}, [P, P.dual()]),
    t4a.StructuredTypeError,
    TypeError,
    "block (1, 1)",
    "NoneType",
)
case(
    "ST-block-int",
    lambda: ST({(1, 1): np.ones((1, 1), dtype=int)}, [P, P.dual()]),
    t4a.StructuredTypeError,
    TypeError,
    "float or complex",
    "int64",
)
case(
    "ST-blocks-two-dtypes",
    lambda: ST({(1, 1): np.ones((1, 1)), (-1, -1): np.ones((1, 1)) * 1j}, [P, P.dual()]),
    t4a.StructuredTypeError,
    TypeError,
    "share one dtype",
    "complex128",
    "float64",
)
case(
    "ST-duplicate-mod-n",
    lambda: ST({(1, 1): np.ones((1, 1)), (3, 1): np.ones((1, 1))}, [PZ, PZ.dual()]),
    t4a.LegError,
    ValueError,
    "block (1, 1) is given twice",
    "(3, 1)",
)
case(
    "ST-charge-float",
    lambda: ST({}, [P, P.dual()], charge=0.5),
    t4a.ChargeError,
    TypeError,
    "SymmetricTensor: charge",
    "float 0.5",
)
case(
    "ST-charge-tuple-on-U1",
    lambda: ST({}, [P, P.dual()], charge=(0,)),
    t4a.ChargeError,
    TypeError,
    "SymmetricTensor: charge",
    "tuple (0,)",
)
case(
    "ST-dtype-int",
    lambda: ST({}, [P, P.dual()], dtype="int64"),
    t4a.StructuredTypeError,
    TypeError,
    "dtype must be one of",
    "'int64'",
)
case(
    "ST-dtype-disagrees",
    lambda: ST({(1, 1): np.ones((1, 1))}, [P, P.dual()], dtype="complex128"),
    t4a.StructuredTypeError,
    TypeError,
    "dtype='complex128'",
    "float64",
)

# ---- SymmetricTensor: factories ---------------------------------------------------------------
# a sector with no states: odd 2Sz on two spin-1/2 (both the factories and dmrg below)
case(
    "zeros-no-states",
    lambda: ST.zeros([P, P], charge=1),
    t4a.SymmetryViolationError,
    ValueError,
    "carries the charge 1",
    "leg 0: [-1, 1]",
    "no states",
)
case(
    "random-no-states",
    lambda: ST.random([P, P.dual()], charge=5),
    t4a.SymmetryViolationError,
    ValueError,
    "carries the charge 5",
    "leg 1 (dual): [-1, 1]",
)
case(
    "from_dense-no-states",
    lambda: ST.from_dense(np.zeros((2, 2)), [P, P], charge=1),
    t4a.SymmetryViolationError,
    ValueError,
    "carries the charge 1",
)
case(
    "random-seed-negative",
    lambda: ST.random([P, P.dual()], seed=-1),
    t4a.StructuredValueError,
    ValueError,
    "seed must be an integer >= 0",
    "-1",
)
case(
    "random-seed-bool",
    lambda: ST.random([P, P.dual()], seed=True),
    t4a.StructuredTypeError,
    TypeError,
    "seed",
    "boolean True",
)
case(
    "random-charge-nan",
    lambda: ST.random([P, P.dual()], charge=float("nan")),
    t4a.ChargeError,
    TypeError,
    "SymmetricTensor.random: charge",
    "float nan",
)
case(
    "zeros-dtype",
    lambda: ST.zeros([P, P.dual()], dtype="bool"),
    t4a.StructuredTypeError,
    TypeError,
    "dtype must be one of",
)
case(
    "from_dense-not-symmetric",
    lambda: ST.from_dense(np.ones((2, 2)), [P, P.dual()]),
    t4a.SymmetryViolationError,
    ValueError,
    "is not symmetric",
    "entry (0, 1) = 1.0",
    "sectors (-1, 1)",
    "carry charge -2, not 0",
)
case(
    "from_dense-not-symmetric-Z2",
    lambda: ST.from_dense(np.eye(2), [PZ, PZ.dual()], charge=1),
    t4a.SymmetryViolationError,
    ValueError,
    "entry (0, 0) = 1.0",
    "carry charge 0, not 1",
)
case(
    "from_dense-shape",
    lambda: ST.from_dense(np.ones((3, 2)), [P, P.dual()]),
    t4a.StructuredShapeError,
    ValueError,
    "x has shape (3, 2)",
    "leg 0 has dimension 2",
)
case(
    "from_dense-ndim",
    lambda: ST.from_dense(np.ones(4), [P, P.dual()]),
    t4a.StructuredShapeError,
    ValueError,
    "x has 1 axes",
    "2 legs",
)
case(
    "from_dense-str",
    lambda: ST.from_dense("x", [P, P.dual()]),
    t4a.StructuredTypeError,
    TypeError,
    "x must be a tensor or an array of numbers",
)
case(
    "from_dense-nan",
    lambda: ST.from_dense(np.array([[1.0, np.nan], [0.0, 1.0]]), [P, P.dual()]),
    t4a.SymmetryViolationError,
    ValueError,
    "x holds nan at (0, 1)",
)
case(
    "from_dense-tol-negative",
    lambda: ST.from_dense(np.eye(2), [P, P.dual()], tol=-1.0),
    t4a.StructuredValueError,
    ValueError,
    "tol must be a finite number >= 0",
    "-1.0",
)
case(
    "from_dense-tol-nan",
    lambda: ST.from_dense(np.ones((2, 2)), [P, P.dual()], tol=float("nan")),
    t4a.StructuredValueError,
    ValueError,
    "tol must be a finite number >= 0",
    "nan",
)
case(
    "from_dense-tol-str",
    lambda: ST.from_dense(np.eye(2), [P, P.dual()], tol="a"),
    t4a.StructuredTypeError,
    TypeError,
    "tol must be a number",
    "str 'a'",
)
case(
    "from_dense-charge-float",
    lambda: ST.from_dense(np.eye(2), [P, P.dual()], charge=0.0),
    t4a.ChargeError,
    TypeError,
    "SymmetricTensor.from_dense: charge",
    "float 0.0",
)
case(
    "allowed_sectors-float",
    lambda: X.allowed_sectors(0.5),
    t4a.ChargeError,
    TypeError,
    "SymmetricTensor.allowed_sectors: charge",
    "float 0.5",
)

# ---- SymmetricTensor: structure ---------------------------------------------------------------
case(
    "fuse_legs-repeat",
    lambda: X.fuse_legs([0], [0, 1]),
    t4a.StructuredShapeError,
    ValueError,
    "must list each of the 3 axes exactly once",
)
case("fuse_legs-missing", lambda: X.fuse_legs([0, 1]), t4a.StructuredShapeError, ValueError, "[[0, 1]]", "exactly once")
case(
    "fuse_legs-out-of-range",
    lambda: X.fuse_legs([0, 1], [5]),
    t4a.structured.StructuredIndexError,
    IndexError,
    "group 1: axis 5 is outside [0, 3)",
)
case(
    "fuse_legs-bool",
    lambda: X.fuse_legs([True, 1], [2]),
    t4a.StructuredTypeError,
    TypeError,
    "group 0: axis must be an integer",
    "boolean True",
)
case(
    "fuse_legs-float",
    lambda: X.fuse_legs([0.0, 1], [2]),
    t4a.StructuredTypeError,
    TypeError,
    "group 0: axis must be an integer",
)
case(
    "fuse_legs-str",
    lambda: X.fuse_legs("01", [2]),
    t4a.StructuredTypeError,
    TypeError,
    "group 0 must be a non-empty list of axes",
)
case(
    "split_legs-not-fused",
    lambda: XF.split_legs(1),
    t4a.LegError,
    ValueError,
    "leg 1",
    "is not a fused leg",
    "fused legs of this tensor are at axes [0]",
)
case("split_legs-plain-tensor", lambda: X.split_legs(0), t4a.LegError, ValueError, "is not a fused leg")
case("split_legs-twice", lambda: XF.split_legs(0, 0), t4a.StructuredShapeError, ValueError, "axis 0 is given twice")
case(
    "split_legs-out-of-range",
    lambda: XF.split_legs(4),
    t4a.structured.StructuredIndexError,
    IndexError,
    "axis 4 is outside [0, 2)",
)
case("split_legs-float", lambda: XF.split_legs(0.0), t4a.StructuredTypeError, TypeError, "axis must be an integer")
case(
    "scale_leg-not-diagonal",
    lambda: X.scale_leg(0, "s"),
    t4a.StructuredTypeError,
    TypeError,
    "must be a SectorDiagonal",
)
case(
    "scale_leg-other-leg",
    lambda: ST.random([W, W.dual()], seed=0).scale_leg(0, S),
    t4a.SectorMismatchError,
    ValueError,
    "leg 0",
    "is not the leg of s",
    "sector -1 has dimension 2 on the first and 1 on the second",
)
case(
    "scale_leg-axis",
    lambda: X.scale_leg(5, S),
    t4a.structured.StructuredIndexError,
    IndexError,
    "axis 5 is outside [0, 3)",
)

# ---- SectorDiagonal ---------------------------------------------------------------------------
case("SectorDiagonal-leg", lambda: t4a.SectorDiagonal("x", {}), t4a.StructuredTypeError, TypeError, "leg must be a Leg")
case(
    "SectorDiagonal-values-list",
    lambda: t4a.SectorDiagonal(P, [1.0]),
    t4a.StructuredTypeError,
    TypeError,
    "values must be a mapping",
    "list",
)
case(
    "SectorDiagonal-sector",
    lambda: t4a.SectorDiagonal(P, {5: [1.0]}),
    t4a.LegError,
    ValueError,
    "no sector of charge 5",
    "[-1, 1]",
)
case(
    "SectorDiagonal-charge-float",
    lambda: t4a.SectorDiagonal(P, {1.0: [1.0]}),
    t4a.ChargeError,
    TypeError,
    "SectorDiagonal: sector 1.0",
    "float 1.0",
)
case(
    "SectorDiagonal-shape",
    lambda: t4a.SectorDiagonal(P, {1: [1.0, 2.0]}),
    t4a.StructuredShapeError,
    ValueError,
    "sector 1 has dimension 1",
    "shape (2,)",
)
case(
    "SectorDiagonal-str",
    lambda: t4a.SectorDiagonal(P, {1: "a"}),
    t4a.StructuredTypeError,
    TypeError,
    "the values of sector 1 must be a tensor",
)
case(
    "SectorDiagonal-twice",
    lambda: t4a.SectorDiagonal(PZ, {1: [1.0], 3: [2.0]}),
    t4a.LegError,
    ValueError,
    "sector 1 is given twice",
)
case(
    "SectorDiagonal-dtypes",
    lambda: t4a.SectorDiagonal(P, {1: [1.0], -1: [1j]}),
    t4a.StructuredTypeError,
    TypeError,
    "share one dtype",
)
case("SectorDiagonal-getitem", lambda: S[3], t4a.LegError, ValueError, "no sector of charge 3")
case("SectorDiagonal-getitem-float", lambda: S[1.0], t4a.ChargeError, TypeError, "float 1.0")

# ---- contraction ------------------------------------------------------------------------------
case(
    "einsum-sectors",
    lambda: t4a.einsum("ab,bc->ac", M, ST.random([W, P.dual()], seed=0)),
    t4a.SectorMismatchError,
    ValueError,
    "label 'b' (leg 1 of operand 0, leg 0 of operand 1)",
    "different sectors",
    "sector -1 has dimension 1 on the first and 2 on the second",
)
case(
    "einsum-charges",
    lambda: t4a.einsum("ab,bc->ac", M, ST.random([Leg(U1(), {1: 1, 3: 1}), P.dual()], seed=0)),
    t4a.SectorMismatchError,
    ValueError,
    "label 'b'",
    "charges [-1] only on the first",
    "[3] only on the second",
)
case(
    "einsum-order",
    lambda: t4a.einsum("ab,bc->ac", M, ST.random([Leg(U1(), {1: 1, -1: 1}), P.dual()], seed=0)),
    t4a.SectorMismatchError,
    ValueError,
    "different orders",
    "[-1, 1]",
    "[1, -1]",
)
case(
    "einsum-same-duality",
    lambda: t4a.einsum("ab,cb->ac", M, M),
    t4a.SectorMismatchError,
    ValueError,
    "label 'b' (leg 1 of operand 0, leg 1 of operand 1)",
    "two dual legs",
    "opposite duality",
)
case(
    "einsum-non-dual-pair",
    lambda: t4a.einsum("ab,ab->", M, M),
    t4a.SectorMismatchError,
    ValueError,
    "label 'a' (leg 0 of operand 0, leg 0 of operand 1)",
    "two non-dual legs",
)
case(
    "einsum-third-operand",
    lambda: t4a.einsum("ab,bc,cd->ad", M, M, M.conj()),
    t4a.SectorMismatchError,
    ValueError,
    "label 'c' (leg 1 of operand 1, leg 0 of operand 2)",
    "two dual legs",
)
case(
    "einsum-groups",
    lambda: t4a.einsum("ab,bc->ac", M, MZ),
    t4a.SectorMismatchError,
    ValueError,
    "operand 1 has symmetry Z2()",
    "operand 0 has U1()",
)
case(
    "einsum-rank",
    lambda: t4a.einsum("abc,bc->a", M, M.conj()),
    t4a.StructuredShapeError,
    ValueError,
    "operand 0 has 2 legs",
    "'abc' has 3 labels",
)
case(
    "einsum-operands",
    lambda: t4a.einsum("ab,bc->ac", M),
    t4a.StructuredShapeError,
    ValueError,
    "names 2 operands, got 1",
)
case(
    "tensordot-sectors",
    lambda: t4a.tensordot(M, ST.random([W, P.dual()], seed=0), axes=1),
    t4a.SectorMismatchError,
    ValueError,
    "(leg 1 of a, leg 0 of b)",
    "different sectors",
)
case(
    "tensordot-same-duality",
    lambda: t4a.tensordot(M, M.conj(), axes=1),
    t4a.SectorMismatchError,
    ValueError,
    "(leg 1 of a, leg 0 of b)",
    "two dual legs",
)
case(
    "tensordot-groups",
    lambda: t4a.tensordot(M, MZ, axes=1),
    t4a.SectorMismatchError,
    ValueError,
    "b has symmetry Z2()",
    "a has U1()",
)
case(
    "tensordot-axes-count",
    lambda: t4a.tensordot(X, X.conj(), axes=5),
    t4a.StructuredShapeError,
    ValueError,
    "axes=5",
    "3 and 3 legs",
)
case("tensordot-axes-negative", lambda: t4a.tensordot(M, M, axes=-1), t4a.StructuredShapeError, ValueError, "axes=-1")
case(
    "tensordot-axes-bool",
    lambda: t4a.tensordot(M, M, axes=True),
    t4a.StructuredTypeError,
    TypeError,
    "axes must be an integer",
    "boolean True",
)
case(
    "tensordot-axis-out-of-range",
    lambda: t4a.tensordot(M, M.conj(), axes=([5], [0])),
    t4a.structured.StructuredIndexError,
    IndexError,
    "axis 5 of a is outside [0, 2)",
)
case(
    "tensordot-axis-float",
    lambda: t4a.tensordot(M, M.conj(), axes=([0.5], [0])),
    t4a.StructuredTypeError,
    TypeError,
    "an axis of a must be an integer",
    "0.5",
)
case(
    "tensordot-axis-twice",
    lambda: t4a.tensordot(M, M.conj(), axes=([0, 0], [0, 1])),
    t4a.StructuredShapeError,
    ValueError,
    "axis 0 of a is given twice",
)
case(
    "tensordot-axes-lengths",
    lambda: t4a.tensordot(M, M.conj(), axes=([0], [0, 1])),
    t4a.StructuredShapeError,
    ValueError,
    "pair 1 legs of a with 2 of b",
)
case(
    "tensordot-axes-str",
    lambda: t4a.tensordot(M, M, axes="ab"),
    t4a.StructuredShapeError,
    ValueError,
    "axes must be an int or two lists of axes",
)
case("matmul-groups", lambda: M @ MZ, t4a.SectorMismatchError, ValueError, "operand 1 has symmetry Z2()")
case("matmul-same-duality", lambda: M @ M.conj(), t4a.SectorMismatchError, ValueError, "two dual legs")

# ---- sums -------------------------------------------------------------------------------------
case(
    "add-groups",
    lambda: M + MZ,
    t4a.SectorMismatchError,
    ValueError,
    "leg 0 differs",
    "their symmetries differ (U1() and Z2())",
)
case(
    "add-duality", lambda: M + M.conj(), t4a.SectorMismatchError, ValueError, "leg 0 differs", "dual on operand 1 only"
)
case(
    "add-charge",
    lambda: X + ST.random([P, P, P.dual()], charge=-1, seed=0),
    t4a.SectorMismatchError,
    ValueError,
    "charges 1 and -1",
)
case(
    "subtract-legs",
    lambda: M - ST.random([W, W.dual()], seed=0),
    t4a.SectorMismatchError,
    ValueError,
    "leg 0 differs",
    "sector -1 has dimension 1 on the first and 2 on the second",
)
case("add-rank", lambda: M + X, t4a.SectorMismatchError, ValueError, "2 and 3 legs")

# ---- linear algebra ---------------------------------------------------------------------------
case("svd-three-legs", lambda: t4a.linalg.svd(X), t4a.SymmetryError, ValueError, "needs two legs", "got 3", "fuse_legs")
case("qr-three-legs", lambda: t4a.linalg.qr(X), t4a.SymmetryError, ValueError, "needs two legs")
case("svd-zero-matrix", lambda: t4a.linalg.svd(ST({}, [P, P.dual()])), t4a.SymmetryError, ValueError, "no blocks")
case(
    "eigh-legs",
    lambda: t4a.linalg.eigh(ST.random([P, W.dual()], seed=0)),
    t4a.SectorMismatchError,
    ValueError,
    "(leg, leg.dual())",
    "sector -1 has dimension 1 on the first and 2 on the second",
)
case(
    "eigh-duality",
    lambda: t4a.linalg.eigh(ST.random([P, P], seed=0)),
    t4a.SectorMismatchError,
    ValueError,
    "both legs are non-dual",
)
case(
    "eigh-charge",
    lambda: t4a.linalg.eigh(ST.random([P, P.dual()], charge=2, seed=0)),
    t4a.SectorMismatchError,
    ValueError,
    "the charge is 2, not 0",
)
# truncated_svd: tenferro's own checks and error class (as for a dense matrix)
for bad in (0, -1, 1.5, True, "2"):
    case(
        f"truncated_svd-max_rank-{bad!r}",
        lambda bad=bad: t4a.linalg.truncated_svd(M, max_rank=bad),
        tf.TenferroValueError,
        ValueError,
        "max_rank must be an int >= 1 or None",
        f"got {bad!r}",
    )
for bad in (-1.0, float("nan"), float("inf"), "a", True):
    case(
        f"truncated_svd-cutoff-{bad!r}",
        lambda bad=bad: t4a.linalg.truncated_svd(M, cutoff=bad),
        tf.TenferroValueError,
        ValueError,
        "cutoff (the discarded weight) must be a real number in [0, 1)",
        f"got {bad!r}",
    )
case(
    "truncated_svd-three-legs",
    lambda: t4a.linalg.truncated_svd(X, max_rank=1),
    t4a.SymmetryError,
    ValueError,
    "needs two legs",
)
case("svd-nan", lambda: t4a.linalg.svd(M * float("nan")), tf.linalg.NonFiniteError, ValueError, "block (-1, -1)", "NaN")

# ---- a sector with no states in a DMRG run: odd Sz on an even chain of spin-1/2 ---------------
case(
    "dmrg-odd-Sz-even-chain",
    lambda: t4a.dmrg(models.heisenberg(4), conserve="Sz", sector=0.5),
    t4a.SymmetryViolationError,
    ValueError,
    "the sector Sz = 0.5 has no states",
    "4 sites",
)


@pytest.mark.parametrize("name,call,exc,builtin,fragments", CASES, ids=[c[0] for c in CASES])
def test_bad_symmetric_input_is_a_typed_error_naming_it(name, call, exc, builtin, fragments):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no NumPy warning on the way
        with pytest.raises(exc) as info:
            call()
    err = info.value
    assert isinstance(err, builtin), f"{name}: {type(err).__name__} is not a {builtin.__name__}"
    assert isinstance(err, (t4a.Tensor4allError, tf.TenferroError)), f"{name}: {type(err).__mro__}"
    for fragment in fragments:
        assert fragment in str(err), f"{name}: {fragment!r} not in {str(err)!r}"


def test_symmetric_layer_errors_are_structured_errors():
    """Every error the symmetric layer raises itself is a StructuredError (and so a
    Tensor4allError); wrong types are also StructuredTypeError."""
    for name, call, exc, builtin, _ in CASES:
        if issubclass(exc, t4a.Tensor4allError) and name != "dmrg-odd-Sz-even-chain":
            assert issubclass(exc, t4a.StructuredError), name
            with pytest.raises(Exception) as info:
                call()
            if builtin is TypeError:
                assert isinstance(info.value, t4a.StructuredTypeError), (name, type(info.value).__mro__)


# ---- decisions, and what must not happen silently -----------------------------------------------
def test_zn_charges_are_taken_mod_n_everywhere():
    """A Zn charge is canonical mod n: 3 on a Z2 leg is 1, for the leg, its lookups, block
    keys and the tensor's charge alike (documented; TeNPy does the same)."""
    leg = Leg(Z2(), {0: 1, 3: 2})
    assert leg.charges == (0, 1) and leg.sector_dim(-1) == 2 and leg.slice(5) == slice(1, 3)
    assert 3 in leg and -1 in leg
    x = ST({(3, 1): np.ones((2, 2))}, [leg, leg.dual()], charge=2)
    assert list(x.blocks) == [(1, 1)] and x.charge == 0


def test_bools_and_floats_are_not_charges():
    """``True == 1`` and ``1.0 == 1`` in Python; as charges they are refused, and a
    membership test says False instead of finding sector 1."""
    assert True not in P and 1.0 not in P and "a" not in P and [1] not in P
    assert 1 in P and np.int64(1) in P


def test_mixed_dtype_sum_promotes_every_block():
    """Blocks stored by one operand only take the promoted dtype too (they were left in
    their own dtype while the tensor said float64)."""
    a = ST({(1, 1): np.ones((1, 1))}, [P, P.dual()])
    b = ST({(-1, -1): np.full((1, 1), 1j)}, [P, P.dual()])
    for c in (a + b, b + a, a - b):
        assert str(c.dtype) == "complex128"
        assert {str(v.dtype) for v in c.blocks.values()} == {"complex128"}
    np.testing.assert_allclose(np.asarray(t4a.to_dense(a - b).numpy()), np.diag([-1j, 1.0]))
    f32 = ST({(1, 1): np.ones((1, 1), dtype=np.float32)}, [P, P.dual()])
    assert {str(v.dtype) for v in (f32 + b).blocks.values()} == {"complex128"}


def test_scale_leg_by_complex_values_has_a_complex_dtype():
    s = t4a.SectorDiagonal(S.leg, {q: np.asarray(v.numpy()) * 1j for q, v in S.values.items()})
    y = M.scale_leg(0, s)
    assert str(y.dtype) == "complex128" and {str(v.dtype) for v in y.blocks.values()} == {"complex128"}


def test_sector_diagonal_without_values_for_a_sector_is_zero_there():
    """As in scale_leg, a sector of the leg without values is zero: to_vector and to_dense
    have the leg's dimension (to_vector used to leave the sector out)."""
    s = t4a.SectorDiagonal(P, {1: [2.0]})
    assert np.asarray(s.to_vector().numpy()).tolist() == [0.0, 2.0]
    assert tuple(s.to_dense().shape) == (2, 2)
    assert np.asarray(s[-1].numpy()).tolist() == [0.0]


def test_a_refused_call_changes_nothing_and_densifies_nothing():
    """No half-updated object: the inputs are unchanged after a refusal, and a refused
    contraction counts no fallback to dense (the legs are checked before any work)."""
    blocks = {(1, 1): np.ones((1, 1)), (3, 3): np.ones((1, 1))}
    before = dict(blocks)
    with pytest.raises(t4a.LegError):
        ST(blocks, [P, P.dual()])
    assert blocks == before
    x_blocks = {k: np.asarray(v.numpy()).copy() for k, v in X.blocks.items()}
    legs = X.legs
    t4a.reset_fallback_stats()
    bad = [
        lambda: t4a.einsum("abc,cd,de->abe", X, M.conj(), M),
        lambda: t4a.tensordot(X, M, axes=([5], [0])),
        lambda: XF.split_legs(0, 0),
        lambda: X + X.conj(),
        lambda: t4a.linalg.truncated_svd(M, max_rank=0),
    ]
    for call in bad:
        with pytest.raises(t4a.Tensor4allError if call is not bad[-1] else tf.TenferroValueError):
            call()
    assert sum(t4a.fallback_stats().values()) == 0
    assert X.legs == legs and {k: np.asarray(v.numpy()).tolist() for k, v in X.blocks.items()} == {
        k: v.tolist() for k, v in x_blocks.items()
    }


def test_valid_tensordot_axes_still_work():
    """The stricter axes check keeps NumPy's forms: an int, two ints, two lists, negatives."""
    ref = np.asarray(t4a.to_dense(t4a.tensordot(M, M, axes=([1], [0]))).numpy())
    for axes in (1, (1, 0), ([1], [0]), ([-1], [-2]), (np.int64(1), np.int64(0))):
        np.testing.assert_allclose(np.asarray(t4a.to_dense(t4a.tensordot(M, M, axes=axes)).numpy()), ref)
