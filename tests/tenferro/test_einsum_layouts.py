"""The layouts of tenferro.einsum's results and intermediates: results (gradients
included) are column-major and writeable, in both modes (``helpers.MODES``); a plan
lays each intermediate out as its consumer views it, so that no pairwise step permutes
an operand; broadcast products are written label by label into the result, by NumPy's
C einsum or an aligned multiply, with the same values."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from helpers import MODES, in_mode, is_writeable
from test_einsum import _rand


@pytest.mark.parametrize("mode", MODES)
def test_einsum_gradients_are_canonical(mode):
    g = in_mode(tidu.grad(lambda x: tf.einsum("ij->", x)), mode)(tf.asarray(np.ones((3, 4))))
    assert g._data.flags.f_contiguous and is_writeable(g._data) and 0 not in g._data.strides


# ---------------------------------------------------------------------------
# copy-free layouts of the pairwise steps
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("abc,abd->dc", [(3, 2, 4), (3, 2, 5)]),  # GEMM operands swapped: result lands as (d, c)
        ("abc,abd->cd", [(3, 2, 4), (3, 2, 5)]),
        ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),  # batch first: written straight into the output
        ("bij,bjk->kbi", [(4, 2, 3), (4, 3, 5)]),
        ("bij,bjk->ikb", [(4, 2, 3), (4, 3, 5)]),
        ("bij,bjk,bkl->bil", [(4, 2, 3), (4, 3, 5), (4, 5, 2)]),
        ("bi,bj->bij", [(4, 2), (4, 3)]),  # elementwise (nothing contracted)
        ("bi,bj->jbi", [(4, 2), (4, 3)]),
        ("xan,xbn,pn->nbpa", [(1, 5, 9), (1, 6, 9), (2, 9)]),  # summed label of size 1, batch first
        ("bij,bjk->bik", [(0, 2, 3), (0, 3, 5)]),
        ("bij,bjk->bik", [(4, 2, 0), (4, 0, 5)]),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["f64", "c128"])
@pytest.mark.parametrize("mode", MODES)
def test_output_layouts_are_canonical(eq, shapes, dtype, mode):
    xs = [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    got = in_mode(tf.einsum, mode)(eq, *[tf.asarray(x) for x in xs])._data
    assert got.flags.f_contiguous and is_writeable(got)
    np.testing.assert_allclose(np.asarray(tf.Tensor._wrap(got)), np.einsum(eq, *xs), rtol=1e-12, atol=1e-12)


def _mps_norm_eq(L: int) -> str:
    import string  # noqa: PLC0415

    a, b = string.ascii_letters[: L + 1], string.ascii_letters[L + 1 : 2 * L + 2]
    s = string.ascii_letters[2 * L + 2 : 3 * L + 2]
    return ",".join([a[i] + s[i] + a[i + 1] for i in range(L)] + [b[i] + s[i] + b[i + 1] for i in range(L)]) + "->"


@pytest.mark.parametrize(
    "eq,shapes,inputs_copied",
    [
        (
            _mps_norm_eq(8),
            [(1, 2, 8)] + [(8, 2, 8)] * 6 + [(8, 2, 1)] + [(1, 2, 8)] + [(8, 2, 8)] * 6 + [(8, 2, 1)],
            False,
        ),
        ("abc,abd->dc", [(8, 2, 8), (8, 2, 8)], False),
        ("bij,bjk->bik", [(4, 8, 8), (4, 8, 8)], True),  # batch axis fastest: copied for BLAS, but not the result
    ],
)
def test_plans_avoid_permuting_copies(eq, shapes, inputs_copied):
    """Each intermediate is laid out as its consumer (or the output) views it:
    no pairwise step permutes an operand and there is no final permutation."""
    plan, _ = sys.modules["tenferro.einsum._api"]._compile(eq, None, [tf.asarray(np.ones(s)) for s in shapes], "auto")
    _plan = sys.modules["tenferro.einsum._plan"]
    perms = [(step[5], step[8]) for step in plan.steps if step[0] == _plan.PAIR]
    assert perms and all((pa is None and pb is None) != inputs_copied for pa, pb in perms), perms
    assert plan.steps[-1][0] == _plan.FINAL and plan.steps[-1][1] is None


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["f64", "c128"])
def test_a_copied_state_is_laid_out_for_the_next_gate(dtype):
    """Three two-qubit gates applied in turn to a six-qubit state: the first gate's wires
    (``b``, ``d``) are not adjacent, so the state is regrouped by a copy; that copy orders the
    untouched wires so that the second gate's wires (``c``, ``e``) come out together at one
    end, and neither later step copies the state (before: the second step copied it again)."""
    eq = "abcdef,xybd,pqce,uvxy->uvpqaf"
    shapes = [(2,) * 6, (2,) * 4, (2,) * 4, (2,) * 4]
    xs = [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    path = [(0, 1), (0, 2), (0, 1)]
    plan, _ = sys.modules["tenferro.einsum._api"]._compile(eq, None, [tf.asarray(x) for x in xs], path)
    _plan = sys.modules["tenferro.einsum._plan"]
    pairs = [step for step in plan.steps if step[0] == _plan.PAIR]
    # the state is operand a of the first step, b of the later ones (the path keeps it last)
    assert [pairs[0][5] is not None, pairs[1][8] is not None, pairs[2][8] is not None] == [True, False, False], pairs
    got = tf.einsum(eq, *[tf.asarray(x) for x in xs], optimize=path)._data
    np.testing.assert_allclose(got, np.einsum(eq, *xs), rtol=1e-13, atol=1e-13)


def test_per_example_outer_products_are_broadcast_products_written_batch_first():
    """An MPS classifier's per-example gradient of one tensor, ``xan,xbn,pn->nbpa`` (``x`` of
    size 1, ``n`` the batch): no matrix product with an inner dimension of 1 (NumPy's matmul
    loops over the examples for it), every pairwise step a broadcast product into a fresh
    array with the batch axis fastest, the last one in the final label order (the batched
    gradients of ``benchmarks/vmap.py``'s MPS classifier: 4.4 ms -> 2.7 ms). The path
    multiplies the smaller pair first (``xan`` by ``pn``, 1280 elements), not the per-example
    outer product ``xan,xbn->nab`` (3840): the unit label ``x`` is summed, and opt_einsum's
    count, which doubles the cost of a summed label, chose the outer product first (in
    isolation at the benchmark's sizes: 110 us -> 90 us). The first product is laid out for
    the second as a product (its summed label has size 1), not as a matrix product: batch
    first, so the second reads it without a copy (90 us -> 84 us)."""
    eq, shapes = "xan,xbn,pn->nbpa", [(1, 5, 128), (1, 6, 128), (2, 128)]
    xs = [_rand(s, np.float64, seed=i) for i, s in enumerate(shapes)]
    plan, _ = sys.modules["tenferro.einsum._api"]._compile(eq, None, [tf.asarray(x) for x in xs], "auto")
    _plan = sys.modules["tenferro.einsum._plan"]
    pairs = [step for step in plan.steps if step[0] == _plan.PAIR]
    assert [step[3] for step in pairs] == [_plan.MUL, _plan.MUL]
    assert plan.path == ((0, 2), (0, 1))
    assert int(np.prod(pairs[0][-2])) == 5 * 2 * 128
    assert all(step[-1][0] == "labels" and step[-2][0] == 128 for step in pairs)
    assert pairs[1][-2] == (128, 6, 2, 5)  # the final order n, b, p, a
    got = tf.einsum(eq, *[tf.asarray(x) for x in xs])
    assert got._data.flags.f_contiguous
    np.testing.assert_allclose(got.numpy(), np.einsum(eq, *xs), rtol=1e-14, atol=0)


@st.composite
def broadcast_products(draw):
    """A per-example product of two operands into an order no grouping of their labels gives:
    batch labels shared and kept, free labels on one side each, maybe a summed label of size
    1, each operand's labels and the output's in a random order, a dtype of each kind."""
    sizes = {"b": draw(st.integers(1, 40)), "u": 1}
    free_x = draw(st.lists(st.sampled_from("ijk"), min_size=1, max_size=2, unique=True))
    free_y = draw(st.lists(st.sampled_from("pqr"), min_size=1, max_size=2, unique=True))
    for label in free_x + free_y:
        sizes[label] = draw(st.integers(1, 12))
    summed = ["u"] if draw(st.booleans()) else []
    x = draw(st.permutations(["b"] + free_x + summed))
    y = draw(st.permutations(["b"] + free_y + summed))
    out = draw(st.permutations(["b"] + free_x + free_y))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.complex64, np.complex128]))
    return f"{''.join(x)},{''.join(y)}->{''.join(out)}", [tuple(sizes[l] for l in t) for t in (x, y)], dtype


@pytest.mark.cpu_only  # NumPy's C einsum serves host arrays only
@settings(max_examples=60, deadline=None)
@given(case=broadcast_products())
def test_broadcast_products_through_einsum_equal_the_aligned_multiply(case):
    """Broadcast products written label by label into the result (``out_view`` "labels") are
    computed by NumPy's C einsum up to ``_execute.EINSUM_PRODUCT_MAX`` elements, by a multiply
    of aligned operands above: both routes give the product of the two entries, column-major,
    equal to ``numpy.einsum``'s (a product of two numbers, correctly rounded either way; a
    complex product to one rounding of each part)."""
    eq, shapes, dtype = case
    xs = [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    ops = [tf.asarray(x) for x in xs]
    _execute = sys.modules["tenferro.einsum._execute"]
    plan, _ = sys.modules["tenferro.einsum._api"]._compile(eq, None, ops, "auto")
    step = next(step for step in plan.steps if step[0] == sys.modules["tenferro.einsum._plan"].PAIR)
    assume(step[-1] is not None and step[-1][0] == "labels")
    counted, c_einsum = [], _execute._c_einsum

    def counting_einsum(*args, **kwargs):
        counted.append(args)
        return c_einsum(*args, **kwargs)

    results = []
    for limits in (dict(_execute.EINSUM_PRODUCT_MAX), {"f": 1 << 60, "c": 1 << 60}, {}):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_execute, "EINSUM_PRODUCT_MAX", limits)
            mp.setattr(_execute, "_c_einsum", counting_einsum)
            counted.clear()
            got = tf.einsum(eq, *ops)._data
        size = int(np.prod(step[-2]))
        assert len(counted) == (size <= limits.get(np.dtype(dtype).kind, 0)), (limits, size)
        assert got.flags.f_contiguous and got.dtype == dtype
        results.append(got)
    tol = 0 if np.dtype(dtype).kind == "f" else 4 * np.finfo(dtype).eps
    want = np.einsum(eq, *xs)
    for got in results:
        np.testing.assert_allclose(got, want, rtol=tol, atol=0)
