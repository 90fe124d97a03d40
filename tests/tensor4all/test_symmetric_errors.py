"""Bad input for symmetric tensors (issue 22, item 9), the building blocks: groups, legs,
fusion, and SymmetricTensor's construction and factories met with hostile input. The
operations (SymmetricTensor's structure methods, SectorDiagonal, ``einsum``/``tensordot``/
``matmul``, sums and ``tensor4all.linalg`` with symmetric operands, DMRG) are in
test_symmetric_operation_errors.py; what must not happen silently, and the check that
both tables raise structured errors, in test_symmetric_error_decisions.py.

One table: (id, call, the package class, the builtin class, fragments). Each case asserts
the package's exception class, the matching builtin (``TypeError`` for a wrong type,
``ValueError`` for a wrong value, ``IndexError`` for a position out of range) and that the
message names the offending thing (the leg or sector by its position, the charges, what
was expected).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all.symmetry import U1, FusedLeg, Leg, ProductSymmetry, Symmetry, Z2, Zn, fuse

ST = t4a.SymmetricTensor
P = Leg(U1(), {-1: 1, 1: 1})  # a spin-1/2 in units of 2Sz
W = Leg(U1(), {-1: 2, 1: 1})  # the same charges, another dimension
PZ = Leg(Z2(), {0: 1, 1: 1})
UZ = U1() * Z2()
X = ST.random([P, P, P.dual()], charge=1, seed=0)

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
