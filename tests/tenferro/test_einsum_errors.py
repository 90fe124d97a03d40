"""tenferro.einsum's errors: malformed subscripts (the position marked), ranks and sizes
of the operands, their number, interleaved labels and optimize values, each a typed
TenferroError, in both modes (``helpers.MODES``: under ``jit`` the error is raised at
trace time with the same type); and the memory error's advice, which names an
optimizer whose path fits or says to slice the contraction."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tenferro as tf
from helpers import MODES, compiled


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
E = tf.EinsumSubscriptError


@pytest.mark.parametrize(
    "eq,pos,words",
    [
        ("ij#,jk", 2, "invalid character '#'"),
        ("ij,jk->i->k", 8, "more than one '->'"),
        ("ij-jk", 2, "'-' must be followed by '>'"),
        ("ij>jk", 2, "'>' must follow '-'"),
        ("i.j,jk", 1, "ellipsis"),
        ("...i...,i", 4, "at most one ellipsis"),
        ("ij,jk->iz", 8, "output label 'z' does not appear"),
        ("ij,jk->i,k", 8, "single term"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_malformed_subscripts(eq, pos, words, mode):
    einsum = compiled(tf.einsum, mode)  # under jit the error is raised while tracing
    with pytest.raises(E) as info:
        einsum(eq, tf.ones((2, 2)), tf.ones((2, 2)))
    assert info.value.position == pos
    assert words in str(info.value) and eq in str(info.value)
    assert "\n    " + " " * pos + "^" in str(info.value)


@pytest.mark.parametrize("mode", MODES)
def test_rank_mismatch_names_the_operand(mode):
    einsum = compiled(tf.einsum, mode)  # under jit the error is raised while tracing
    with pytest.raises(tf.EinsumShapeError, match=r"operand 1 has rank 3 .*'jk' has 2 labels") as info:
        einsum("ij,jk", tf.ones((2, 3)), tf.ones((3, 4, 5)))
    assert info.value.operand == 1
    with pytest.raises(tf.EinsumShapeError, match=r"operand 0 has rank 1 .*names 2 dimensions besides '...'"):
        einsum("...ij", tf.ones((2,)))
    assert issubclass(tf.EinsumShapeError, tf.ShapeError)


@pytest.mark.parametrize("mode", MODES)
def test_inconsistent_sizes_name_label_and_operands(mode):
    einsum = compiled(tf.einsum, mode)  # under jit the error is raised while tracing
    with pytest.raises(tf.EinsumShapeError, match=r"label 'j' has size 3 in operand 0 but size 4 in operand 1"):
        einsum("ij,jk", tf.ones((2, 3)), tf.ones((4, 5)))
    with pytest.raises(tf.EinsumShapeError, match=r"label 'i' is repeated in operand 0 with different sizes 2 and 3"):
        einsum("ii", tf.ones((2, 3)))
    with pytest.raises(tf.EinsumShapeError, match=r"'...' dimensions of operand 1 .* size 3 against 2"):
        einsum("...i,...i", tf.ones((2, 4)), tf.ones((3, 4)))
    with pytest.raises(tf.EinsumShapeError, match=r"label 5 has size 2 in operand 0 but size 3 in operand 1"):
        einsum(tf.ones((2,)), [5], tf.ones((3,)), [5])


@pytest.mark.parametrize("mode", MODES)
def test_wrong_number_of_operands(mode):
    einsum = compiled(tf.einsum, mode)  # under jit the error is raised while tracing
    with pytest.raises(tf.EinsumOperandError, match=r"2 input terms but 1 operand were given"):
        einsum("ij,jk", tf.ones((2, 2)))
    with pytest.raises(tf.EinsumOperandError, match=r"1 input term but 2 operands"):
        einsum("ij", tf.ones((2, 2)), tf.ones((2, 2)))
    with pytest.raises(tf.EinsumOperandError, match="without any operand"):
        einsum("ij")
    with pytest.raises(tf.EinsumOperandError, match="nothing"):
        einsum()


@pytest.mark.parametrize("mode", MODES)
def test_bad_interleaved_labels(mode):
    einsum = compiled(tf.einsum, mode)  # under jit the error is raised while tracing
    with pytest.raises(E, match=r"label list of operand 0 entry 1 is 'x'"):
        einsum(tf.ones((2, 2)), [0, "x"])
    with pytest.raises(E, match=r"entry 0 is -1"):
        einsum(tf.ones((2,)), [-1])
    with pytest.raises(E, match=r"output label 9 does not appear"):
        einsum(tf.ones((2,)), [0], [9])


@pytest.mark.parametrize("mode", MODES)
def test_unknown_optimize_lists_valid_names(mode):
    einsum = compiled(tf.einsum, mode)  # under jit the error is raised while tracing
    with pytest.raises(tf.EinsumOptimizeError, match=r"unknown optimize value 'fastest'.*'greedy'.*'optimal'"):
        einsum("ij,jk", tf.ones((2, 2)), tf.ones((2, 2)), optimize="fastest")
    with pytest.raises(tf.EinsumOptimizeError, match=r"unknown optimize value 3"):
        einsum("ij,jk", tf.ones((2, 2)), tf.ones((2, 2)), optimize=3)
    with pytest.raises(tf.EinsumOptimizeError, match=r"refers to operand 5 but only 3 operands remain"):
        einsum("i,i,i", tf.ones(2), tf.ones(2), tf.ones(2), optimize=[(0, 5), (0, 1)])
    with pytest.raises(tf.EinsumOptimizeError, match=r"leaves 2 operands uncontracted"):
        einsum("i,i,i", tf.ones(2), tf.ones(2), tf.ones(2), optimize=[(0, 1)])
    # a failed call is not cached
    with pytest.raises(tf.EinsumOptimizeError):
        einsum("ij,jk", tf.ones((2, 2)), tf.ones((2, 2)), optimize="fastest")


def test_errors_are_tenferro_errors():
    for cls in (tf.EinsumSubscriptError, tf.EinsumShapeError, tf.EinsumOperandError, tf.EinsumOptimizeError):
        assert issubclass(cls, tf.TenferroError)


# -- the memory error: advice that fits the case ---------------------------------------------
@pytest.fixture
def memory_limit_200(monkeypatch):
    """A 200-byte limit (25 float64 elements), so small contractions show every case
    (the caches are emptied first: a plan made under the real limit would skip the check)."""
    tf.einsum_cache_clear()
    monkeypatch.setattr(sys.modules["tenferro.einsum._paths"], "_memory_limit", lambda: 200)


def test_memory_error_suggests_an_optimizer_whose_path_fits(memory_limit_200):
    ones = [np.ones((5, 5))] * 4
    with pytest.raises(tf.TenferroMemoryError) as info:  # left to right: ab,cd -> abcd first
        tf.einsum_path("ab,cd,bc,ad->", *ones, optimize=False)
    msg = str(info.value)
    assert "left to right (optimize=False) needs an intermediate of 625 elements, 5000 bytes" in msg
    assert "more than the 200 bytes (200 B) allowed" in msg
    assert "optimize='auto' finds a path whose largest intermediate is 200 bytes" in msg
    assert "pass optimize='auto'" in msg and "Slice" not in msg
    assert tf.einsum_path("ab,cd,bc,ad->", *ones, optimize="auto")[1].largest_intermediate == 25


def test_memory_error_suggests_the_size_minimizing_optimizer_when_auto_overflows(memory_limit_200):
    import opt_einsum

    shapes = [(4, 2), (6, 8), (6, 2), (8, 4, 3), (3,)]  # 'auto' peaks at 32 elements, a size-minimal path at 24
    ops = [np.ones(s) for s in shapes]
    with pytest.raises(tf.TenferroMemoryError) as info:
        tf.einsum("ed,cb,cd,bea,a->", *ops)
    msg = str(info.value)
    assert "along the path of optimize='auto' needs an intermediate of 32 elements, 256 bytes" in msg
    assert (
        "optimize=opt_einsum.DynamicProgramming(minimize='size') finds a path whose largest intermediate is 192 bytes"
    ) in msg
    out = tf.einsum("ed,cb,cd,bea,a->", *ops, optimize=opt_einsum.DynamicProgramming(minimize="size"))
    assert out.item() == np.einsum("ed,cb,cd,bea,a->", *ops)


def test_memory_error_suggests_slicing_when_no_path_fits(memory_limit_200):
    ones = [np.ones((6, 6))] * 3  # every pairwise step of a triangle leaves 36 elements
    with pytest.raises(tf.TenferroMemoryError) as info:
        tf.einsum_path("ab,bc,ca->", *ones, optimize="auto")
    msg = str(info.value)
    assert "along the path of optimize='auto' needs an intermediate of 36 elements, 288 bytes" in msg
    assert "more than the 200 bytes (200 B) allowed" in msg
    assert "no other path fits either" in msg and "still needs an intermediate of 288 bytes" in msg
    assert "Slice the contraction" in msg and "pass optimize" not in msg
    assert isinstance(info.value, MemoryError)
