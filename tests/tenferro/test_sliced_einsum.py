"""``tenferro.einsum(..., memory_limit=...)``: sliced contractions equal the unsliced ones,
values and derivatives (to second order, float64 and complex128), and every intermediate
fits the limit. References: the unsliced ``tenferro.einsum`` and ``numpy.einsum``."""

from __future__ import annotations

import multiprocessing
from decimal import Decimal

import numpy as np
import opt_einsum
import pytest
from helpers import lattice_network
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tidu.testing import check_grads

pytest.importorskip("cotengra")


def _ring(n: int, bond: int, phys: int, dtype: str, seed: int = 0) -> tuple[str, list]:
    """A ring of ``n`` three-index tensors with open physical legs (an MPS with periodic bonds)."""
    rng = np.random.default_rng(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    bonds, phys_l = letters[:n], letters[13 : 13 + n]
    terms = [bonds[k] + phys_l[k] + bonds[(k + 1) % n] for k in range(n)]
    eq = ",".join(terms) + "->" + phys_l
    ops = []
    for _ in range(n):
        a = rng.standard_normal((bond, phys, bond))
        if dtype == "complex128":
            a = a + 1j * rng.standard_normal(a.shape)
        ops.append(tf.asarray(a / np.sqrt(bond)))
    return eq, ops


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(3, 6),
    bond=st.integers(2, 6),
    dtype=st.sampled_from(["float64", "complex128"]),
    seed=st.integers(0, 100),
    fraction=st.sampled_from([2, 4, 8]),
)
def test_sliced_value_equals_the_unsliced_one(n, bond, dtype, seed, fraction):
    eq, ops = _ring(n, bond, 2, dtype, seed)
    full = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40)
    limit = max(full.unsliced_largest_intermediate // fraction, 16 * 2**n)
    info = tf.einsum_slicing(eq, *ops, memory_limit=limit)
    assert info.largest_intermediate <= limit
    got = np.asarray(tf.einsum(eq, *ops, memory_limit=limit))
    want = np.einsum(eq, *[np.asarray(x) for x in ops])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13 * np.abs(want).max())


def test_the_limit_forces_sixteen_slices_and_each_intermediate_fits():
    eq, ops = lattice_network(4, 4, 4)
    info = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40)
    limit = info.unsliced_largest_intermediate // 32
    sc = tf.einsum_slicing(eq, *ops, memory_limit=limit)
    assert sc.slices >= 16 and sc.largest_intermediate <= limit and sc.sliced
    assert sc.unsliced_largest_intermediate > limit
    want = np.einsum(eq, *[np.asarray(x) for x in ops], optimize=True)
    assert float(tf.einsum(eq, *ops, memory_limit=limit)) == pytest.approx(float(want), rel=1e-12)


def test_the_slicing_search_starts_no_worker_processes():
    """The path search behind slicing runs in the calling process: cotengra's partitioning
    searches start a process pool of their own (``parallel='auto'`` in their inner optimizers,
    whatever the outer search is told), which stayed alive after the call and hung under a Dask
    client."""
    eq, ops = lattice_network(5, 5, 4, seed=1)
    before = set(multiprocessing.active_children())
    limit = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40).unsliced_largest_intermediate // 16
    sc = tf.einsum_slicing(eq, *ops, memory_limit=limit)
    assert set(multiprocessing.active_children()) == before
    assert sc.slices >= 8 and sc.largest_intermediate <= limit
    assert tf.einsum_slicing(eq, *ops, memory_limit=limit) == sc
    want = opt_einsum.contract(eq, *[np.asarray(x) for x in ops])
    assert float(tf.einsum(eq, *ops, memory_limit=limit)) == pytest.approx(float(want), rel=1e-11)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_derivatives_of_a_sliced_contraction_to_second_order(dtype):
    eq, ops = _ring(4, 5, 2, dtype, seed=3)
    limit = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40).unsliced_largest_intermediate // 3
    assert tf.einsum_slicing(eq, *ops, memory_limit=limit).slices > 1
    check_grads(lambda *o: tf.einsum(eq, *o, memory_limit=limit), tuple(ops), order=2)


def test_gradient_equals_the_unsliced_gradient():
    eq, ops = lattice_network(3, 4, 3, seed=2)
    limit = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40).unsliced_largest_intermediate // 8
    sliced = tidu.grad(lambda *o: tf.einsum(eq, *o, memory_limit=limit), argnums=tuple(range(len(ops))))(*ops)
    plain = tidu.grad(lambda *o: tf.einsum(eq, *o), argnums=tuple(range(len(ops))))(*ops)
    for a, b in zip(sliced, plain):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-14)


def test_interleaved_form_and_a_limit_that_needs_no_slicing():
    eq, ops = _ring(3, 4, 2, "float64")
    args = []
    for k, x in enumerate(ops):
        args += [x, [k, 10 + k, (k + 1) % 3]]
    args.append([10, 11, 12])
    want = np.asarray(tf.einsum(*args))
    np.testing.assert_allclose(np.asarray(tf.einsum(*args, memory_limit=256)), want, rtol=1e-13)
    big = tf.einsum_slicing(eq, *ops, memory_limit=1 << 30)
    assert big.slices == 1 and big.sliced == () and big.overhead == 1.0
    np.testing.assert_array_equal(
        np.asarray(tf.einsum(eq, *ops, memory_limit=1 << 30)), np.asarray(tf.einsum(eq, *ops))
    )


def test_many_labels_slice_past_the_non_letter_symbols():
    # 90 labels: opt_einsum's symbol list reaches '\xd7' and '\xf7' (not letters) past label 75;
    # the slice equations are built from letters only, so they parse again
    rng = np.random.default_rng(5)
    n = 90
    mats = [rng.standard_normal((2, 2)) for _ in range(n)]
    args = []
    for k, m in enumerate(mats):
        args += [tf.asarray(m), [k, (k + 1) % n]]
    args.append([])
    want = np.trace(np.linalg.multi_dot(mats))
    sc = tf.einsum_slicing(*args, memory_limit=16)
    assert sc.slices > 1
    assert float(tf.einsum(*args, memory_limit=16)) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    "limit,exc,fragment",
    [
        (0, tf.TenferroValueError, "positive integer number of bytes"),
        (-5, tf.TenferroValueError, "positive integer number of bytes"),
        (1.5, tf.TenferroValueError, "positive integer number of bytes"),
        (True, tf.TenferroValueError, "positive integer number of bytes"),
        (8, tf.TenferroValueError, "the output alone takes 64 bytes"),
    ],
)
def test_bad_memory_limits_are_typed(limit, exc, fragment):
    eq, ops = _ring(3, 2, 2, "float64")
    with pytest.raises(exc, match=fragment):
        tf.einsum(eq, *ops, memory_limit=limit)


def test_numpy_integers_and_integral_decimals_are_integer_options():
    # opt_einsum's sizes are Decimals and NumPy sums NumPy integers: both are taken (issue 47)
    eq, ops = _ring(3, 4, 2, "float64")
    want = np.asarray(tf.einsum(eq, *ops, memory_limit=256))
    for limit in (np.int64(256), np.int32(256), np.uint64(256), Decimal(256), Decimal("256.000")):
        np.testing.assert_array_equal(np.asarray(tf.einsum(eq, *ops, memory_limit=limit)), want)
    sc = tf.einsum_slicing(eq, *ops, memory_limit=Decimal(256), min_slices=np.int64(2))
    assert sc == tf.einsum_slicing(eq, *ops, memory_limit=256, min_slices=2) and sc.slices >= 2
    for bad in (Decimal("256.5"), Decimal("NaN"), Decimal("Infinity"), Decimal(0), np.float64(256.0), np.True_):
        with pytest.raises(tf.TenferroValueError, match="memory_limit must be a positive integer"):
            tf.einsum(eq, *ops, memory_limit=bad)
    with pytest.raises(tf.TenferroValueError, match="min_slices must be a positive integer"):
        tf.einsum_slicing(eq, *ops, memory_limit=256, min_slices=Decimal("1.5"))
    before = tf.einsum_cache_info().maxsize
    try:
        tf.einsum_cache_clear(maxsize=np.int64(64))
        assert tf.einsum_cache_info().maxsize == 64 and type(tf.einsum_cache_info().maxsize) is int
    finally:
        tf.einsum_cache_clear(maxsize=before)


def test_without_cotengra_slicing_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "cotengra":
            raise ImportError("no cotengra")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    tf.einsum_cache_clear()  # a slicing of this problem found earlier in the process would be reused
    eq, ops = _ring(4, 8, 2, "float64")
    with pytest.raises(tf.OptionalDependencyError, match="'distributed' extra"):
        tf.einsum(eq, *ops, memory_limit=512)
    np.testing.assert_array_equal(
        np.asarray(tf.einsum(eq, *ops, memory_limit=1 << 30)),  # no slicing: no cotengra
        np.asarray(tf.einsum(eq, *ops)),
    )


def test_a_slicing_is_searched_once_per_problem(monkeypatch):
    """The path search and slice finder run once per (equation, shapes, dtype size, limit,
    optimize, min_slices); later calls reuse the slicing until the einsum caches are cleared."""
    tf.einsum_cache_clear()
    searches = []
    real = opt_einsum.contract_path

    def counted(*args, **kwargs):
        searches.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(opt_einsum, "contract_path", counted)
    eq, ops = _ring(5, 6, 2, "complex128", seed=3)
    limit = tf.einsum_slicing(eq, *ops, memory_limit=1 << 40).unsliced_largest_intermediate // 8
    assert len(searches) == 1
    first = tf.einsum_slicing(eq, *ops, memory_limit=limit)
    assert len(searches) == 2 and first.slices > 1
    want = np.einsum(eq, *[np.asarray(x) for x in ops])
    for _ in range(2):
        got = np.asarray(tf.einsum(eq, *ops, memory_limit=limit))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13 * np.abs(want).max())
    assert tf.einsum_slicing(eq, *ops, memory_limit=limit) is first
    assert len(searches) == 2
    tf.einsum_slicing(eq, *ops, memory_limit=limit, min_slices=2 * first.slices)  # another problem
    assert len(searches) == 3
    tf.einsum_slicing(eq, *[x.real for x in ops], memory_limit=limit)  # float64: another item size
    assert len(searches) == 4
    tf.einsum_cache_clear()
    again = tf.einsum_slicing(eq, *ops, memory_limit=limit)
    assert len(searches) == 5 and again == first and again is not first


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_sliced_einsum_with_a_repeated_output_label(dtype):
    """``"ab,bc,cd->aad"`` (the diagonal embedded) works unsliced; with ``memory_limit`` it raised
    opt_einsum's bare ``ValueError`` ("Output character 'a' appeared more than once"): the sum
    with each output label once is sliced, then embedded."""
    rng = np.random.default_rng(3)

    def draw(*shape):
        a = rng.standard_normal(shape)
        return tf.asarray(a + 1j * rng.standard_normal(shape) if dtype == "complex128" else a)

    A, D, E = draw(10, 200), draw(200, 200), draw(200, 10)
    assert tf.einsum_slicing("ab,bc,cd->ad", A, D, E, memory_limit=8000).slices > 1
    want = np.einsum("ab,bc,cd->ad", A.numpy(), D.numpy(), E.numpy())
    got = tf.einsum("ab,bc,cd->aad", A, D, E, memory_limit=8000).numpy()
    np.testing.assert_allclose(np.einsum("aad->ad", got), want, rtol=1e-12)
    off = got.copy()
    off[np.arange(10), np.arange(10)] = 0
    assert not off.any()

    def loss(x):
        return tf.real(tf.sum(tf.abs(tf.einsum("ab,bc,cd->aad", x, D, E, memory_limit=8000)) ** 2))

    def plain(x):
        return tf.real(tf.sum(tf.abs(tf.einsum("ab,bc,cd->aad", x, D, E)) ** 2))

    np.testing.assert_allclose(tidu.grad(loss)(A).numpy(), tidu.grad(plain)(A).numpy(), rtol=1e-10)
