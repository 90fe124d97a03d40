"""Symmetric tensors on bad input (issue 22, item 9): every error of both bad-input tables
(test_symmetric_errors.py, test_symmetric_operation_errors.py) that the symmetric layer
raises itself is a structured error; and what must not happen silently: a wrong dtype,
a value that depends on how a charge was spelled, a half-updated object, a counted
fallback to dense before an error.
"""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all.symmetry import Leg, Z2

from .test_symmetric_errors import CASES as BUILDING_BLOCK_CASES
from .test_symmetric_operation_errors import CASES as OPERATION_CASES, M, P, S, ST, X, XF

CASES = BUILDING_BLOCK_CASES + OPERATION_CASES  # both tables: (id, call, package class, builtin class, fragments)


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
