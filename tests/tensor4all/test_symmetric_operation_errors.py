"""Bad input for symmetric tensors (issue 22, item 9), the operations: SymmetricTensor's
structure methods (fuse_legs, split_legs, scale_leg), SectorDiagonal, ``einsum``/
``tensordot``/``matmul`` and sums with symmetric operands, ``tensor4all.linalg``, and a
DMRG run in a sector with no states, met with hostile input. Groups, legs, fusion and
construction are in test_symmetric_errors.py.

One table: (id, call, the package class, the builtin class, fragments). Each case asserts
the package's exception class, the matching builtin (``TypeError`` for a wrong type,
``ValueError`` for a wrong value, ``IndexError`` for a position out of range) and that the
message names the offending thing (the leg or sector by its position, the charges, what
was expected).
"""

from __future__ import annotations

import warnings

import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all import models
from tensor4all.symmetry import U1, Leg, Z2

ST = t4a.SymmetricTensor
P = Leg(U1(), {-1: 1, 1: 1})  # a spin-1/2 in units of 2Sz
W = Leg(U1(), {-1: 2, 1: 1})  # the same charges, another dimension
PZ = Leg(Z2(), {0: 1, 1: 1})
M = ST.random([P, P.dual()], seed=0)  # a matrix (charge 0)
MZ = ST.random([PZ, PZ.dual()], seed=0)
X = ST.random([P, P, P.dual()], charge=1, seed=0)
XF = X.fuse_legs([0, 1], [2])  # leg 0 fused
S = t4a.linalg.svd(M)[1]  # a SectorDiagonal on the bond

CASES: list[tuple] = []  # (id, call, package class, builtin class, fragments)


def case(name, call, exc, builtin, *fragments):
    CASES.append((name, call, exc, builtin, fragments))


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
case(
    "svd-no-allowed-block",  # (the zero matrix of charge 0 has its zero blocks' SVD, as dense)
    lambda: t4a.linalg.svd(ST({}, [P, P.dual()], charge=1)),
    t4a.SymmetryError,
    ValueError,
    "allow no block of charge 1",
)
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
