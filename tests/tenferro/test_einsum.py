"""tenferro.einsum: values against numpy.einsum for every optimize option, random
specs (hypothesis), derivatives to order 2, the plan cache, and every error.

Values, derivatives, errors and layouts run in both modes (``helpers.MODES``):
``jit`` compiles the einsum with ``tenferro.jit`` (values checked equal to eager to
rounding by ``helpers.in_mode``, derivatives by ``helpers.check_jit_matches``, errors
raised at trace time with the same types). The plan-cache tests are about eager
calls and run once."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from helpers import MODES, check_derivatives, compiled, in_mode, is_writeable

OPTIMIZE = ["auto", "greedy", "optimal", "dp", False]

# (equation, shapes) pairs NumPy can evaluate
EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("iji->ij", [(2, 3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ik,k,kj->ij", [(2, 3), (3,), (3, 4)]),
    ("ik,k,kj,jl,l,lm->im", [(2, 3), (3,), (3, 4), (4, 2), (2,), (2, 3)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),
    ("bij,bjk->ikb", [(4, 2, 3), (4, 3, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("...i,...i", [(3, 4), (4,)]),
    ("i...->...", [(2, 3, 4)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 1)]),
    (",ij->ij", [(), (2, 3)]),
    (",", [(), ()]),
    ("i,i->", [(0,), (0,)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    ("ij,jk->ik", [(0, 2), (2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->i", [(1,), (3,)]),
    ("ab,bc,cd,da->", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("aab,bc,ca->", [(2, 2, 3), (3, 4), (4, 2)]),
    ("ijk,ijk,ijk->ij", [(2, 3, 4), (2, 3, 4), (2, 3, 4)]),
    ("Ab,bA->", [(2, 3), (3, 2)]),
    # batched outer products wanted in an order no grouping of the operands' labels gives
    # (the per-example gradients of vmap(grad)): written label by label into the result
    ("abc,adc,ec->cdeb", [(3, 4, 5), (3, 2, 5), (2, 5)]),
    ("ib,jb->bji", [(3, 5), (4, 5)]),
    ("bdc,ec->cdeb", [(4, 2, 5), (3, 5)]),
]


def _rand(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return np.asarray(v, dtype=dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("optimize", OPTIMIZE, ids=str)
@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_values_match_numpy(eq, shapes, optimize, mode):
    arrays = [_rand(s, seed=i) for i, s in enumerate(shapes)]
    got = in_mode(tf.einsum, mode)(eq, *[tf.asarray(a) for a in arrays], optimize=optimize)
    want = np.einsum(eq, *arrays)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    assert got.numpy().flags.f_contiguous or got.ndim == 0


@pytest.mark.parametrize("mode", MODES)
def test_output_embedding(mode):
    einsum = in_mode(tf.einsum, mode)
    v = _rand((3,))
    np.testing.assert_array_equal(einsum("i->ii", tf.asarray(v)).numpy(), np.diag(v))
    e3 = einsum("i->iii", tf.asarray(v)).numpy()
    want = np.zeros((3, 3, 3))
    for i in range(3):
        want[i, i, i] = v[i]
    np.testing.assert_array_equal(e3, want)
    m = _rand((2, 3))
    got = einsum("ij->iji", tf.asarray(m)).numpy()
    want = np.zeros((2, 3, 2))
    for i in range(2):
        want[i, :, i] = m[i]
    np.testing.assert_array_equal(got, want)
    # embedding after a contraction
    a, b = _rand((2, 3)), _rand((3,))
    np.testing.assert_allclose(einsum("ij,j->ii", tf.asarray(a), tf.asarray(b)).numpy(), np.diag(a @ b))


@pytest.mark.parametrize("mode", MODES)
def test_interleaved_form(mode):
    einsum = in_mode(tf.einsum, mode)  # label lists and Ellipsis: static arguments under jit
    a, b = _rand((2, 3)), _rand((3, 4), seed=1)
    got = einsum(tf.asarray(a), [0, 1], tf.asarray(b), [1, 2], [0, 2])
    np.testing.assert_allclose(got.numpy(), a @ b)
    got = einsum(tf.asarray(a), [7, 100], tf.asarray(b), [100, 3])  # implicit: sorted ints
    np.testing.assert_allclose(got.numpy(), np.einsum("ab,bc->ca", a, b))
    c = _rand((5, 2, 3))
    got = einsum(tf.asarray(c), [Ellipsis, 0, 1], tf.asarray(b), [1, 2], [Ellipsis, 0, 2])
    np.testing.assert_allclose(got.numpy(), np.einsum(c, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2]))


@pytest.mark.parametrize("mode", MODES)
def test_mixed_dtypes_and_complex(mode):
    einsum = in_mode(tf.einsum, mode)
    a = tf.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    b = tf.asarray(_rand((3,), np.float32))
    r = einsum("ij,j->i", a, b)
    assert r.dtype is tf.float32
    np.testing.assert_allclose(r.numpy(), np.arange(6).reshape(2, 3) @ b.numpy(), rtol=1e-6)
    c = _rand((3, 2), np.complex128)
    r = einsum("ij,jk->ik", tf.asarray(_rand((2, 3))), tf.asarray(c))
    assert r.dtype is tf.complex128
    np.testing.assert_allclose(r.numpy(), _rand((2, 3)) @ c)
    assert einsum("i,i", tf.asarray(np.arange(3)), tf.asarray(np.arange(3))).item() == 5


@pytest.mark.parametrize("mode", MODES)
def test_scalar_operands_and_python_scalars(mode):
    r = in_mode(tf.einsum, mode)(",i->i", 2.0, tf.asarray([1.0, 2.0]))  # a Python scalar: static under jit
    assert r.tolist() == [2.0, 4.0]


def test_einsum_path_reports_costs():
    path, info = tf.einsum_path("ij,jk,kl->il", np.ones((20, 30)), np.ones((30, 40)), np.ones((40, 2)))
    assert path == [(1, 2), (0, 1)]
    assert info.flops > 0 and info.largest_intermediate == 30 * 2
    path, _ = tf.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)), optimize=False)
    assert path == [(0, 1), (0, 1)]
    path, _ = tf.einsum_path(
        "ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)), optimize=[(1, 2), (0, 1)]
    )
    assert path == [(1, 2), (0, 1)]


def test_explicit_path_is_used():
    arrays = [_rand((2, 3)), _rand((3, 4)), _rand((4, 5))]
    want = np.einsum("ij,jk,kl->il", *arrays)
    for path in ([(0, 1), (0, 1)], [(1, 2), (0, 1)], [(0, 2), (0, 1)], ["einsum_path", (0, 1, 2)]):
        got = tf.einsum("ij,jk,kl->il", *[tf.asarray(a) for a in arrays], optimize=path)
        np.testing.assert_allclose(got.numpy(), want)


# ---------------------------------------------------------------------------
# the plan cache
# ---------------------------------------------------------------------------
def test_cache_hit_does_no_parsing_or_path_search(monkeypatch):
    import opt_einsum

    from tenferro.einsum import _api

    tf.einsum_cache_clear()
    ops = [tf.asarray(_rand((2, 3))), tf.asarray(_rand((3,))), tf.asarray(_rand((3, 4)))]
    first = tf.einsum("ik,k,kj->ij", *ops)
    info = tf.einsum_cache_info()
    assert (info.hits, info.misses, info.size) == (0, 1, 1)

    def boom(*a, **k):
        raise AssertionError("path search on a cached call")

    monkeypatch.setattr(opt_einsum, "contract_path", boom)
    monkeypatch.setattr(_api, "parse_subscripts", boom)
    monkeypatch.setattr(_api, "canonicalize", boom)
    second = tf.einsum("ik,k,kj->ij", *ops)
    info = tf.einsum_cache_info()
    assert (info.hits, info.misses) == (1, 1)
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    # a new shape is a miss (and would search a path)
    with pytest.raises(AssertionError, match="path search"):
        tf.einsum("ik,k,kj->ij", tf.asarray(_rand((5, 3))), ops[1], ops[2])


def test_cache_is_bounded_and_shared_by_equivalent_equations():
    tf.einsum_cache_clear(maxsize=4)
    try:
        for n in range(1, 8):
            tf.einsum("ij->i", tf.ones((n, 2)))
        info = tf.einsum_cache_info()
        assert info.size == 4 and info.maxsize == 4 and info.misses == 7
        tf.einsum_cache_clear(maxsize=512)
        a = tf.ones((2, 3))
        tf.einsum("ij,jk->ik", a, tf.ones((3, 2)))
        tf.einsum("ab,bc->ac", a, tf.ones((3, 2)))
        assert tf.einsum_cache_info().plans.hits == 1  # same canonical spec, one plan
    finally:
        tf.einsum_cache_clear(maxsize=512)


def test_derived_einsums_use_the_plan_cache():
    tf.einsum_cache_clear()
    a, b = tf.asarray(_rand((2, 3))), tf.asarray(_rand((3, 4)))

    def loss(a, b):
        return tf.einsum("ij,jk->", a, b)

    tidu.grad(loss, argnums=(0, 1))(a, b)
    before = tf.einsum_cache_info().plans
    tidu.grad(loss, argnums=(0, 1))(a, b)
    after = tf.einsum_cache_info().plans
    assert after.misses == before.misses and after.hits > before.hits


# ---------------------------------------------------------------------------
# derivatives
# ---------------------------------------------------------------------------
GRAD_EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 2)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("i->ii", [(3,)]),
    ("i->iii", [(2,)]),
    ("ij->", [(2, 3)]),
    ("ijk->j", [(2, 3, 2)]),
    ("ik,k,kj->ij", [(2, 3), (3,), (3, 2)]),
    ("ab,ab,ab->a", [(2, 3), (2, 3), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (2, 3, 2)]),
    ("i,i->i", [(1,), (3,)]),
    (",ij->ij", [(), (2, 2)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    ("ij,j->ii", [(2, 3), (3,)]),
    ("bdc,ec->cdeb", [(3, 2, 4), (2, 4)]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["f64", "c128"])
@pytest.mark.parametrize("eq,shapes", GRAD_EQUATIONS, ids=[e for e, _ in GRAD_EQUATIONS])
def test_check_grads_order2(eq, shapes, dtype, mode):
    args = [tf.asarray(_rand(s, dtype, seed=i)) for i, s in enumerate(shapes)]
    check_derivatives(mode, lambda *xs: tf.einsum(eq, *xs), args, order=2)


@pytest.mark.parametrize("mode", MODES)
def test_non_involutive_transpose_feeding_einsum(mode):
    """A transpose with a 3-cycle permutation of a sum of contractions feeding an einsum:
    under jit the transpose is folded into the einsum's operand labels (the inverse
    permutation; found wrong by the random programs under jit while the pass was
    written), and the JVP's tangent graph has the same shape."""
    a, b = tf.asarray(_rand((1, 2, 2), seed=0)), tf.asarray(_rand((1, 2, 2), seed=1))

    def f(a, b):
        c = tf.einsum("bij,bjk->ijb", a, a) + tf.einsum("bij,bjk->ijb", b, a)
        return tf.einsum("abc,abd->bcd", tf.transpose(c, (2, 0, 1)), b)

    got = in_mode(f, mode)(a, b)
    an, bn = a.numpy(), b.numpy()
    c = np.einsum("bij,bjk->ijb", an, an) + np.einsum("bij,bjk->ijb", bn, an)
    np.testing.assert_allclose(got.numpy(), np.einsum("abc,abd->bcd", np.transpose(c, (2, 0, 1)), bn), rtol=1e-12)
    check_derivatives(mode, f, [a, b], order=2)


@pytest.mark.parametrize("mode", MODES)
def test_grad_of_trace_and_hyperedge_values(mode):
    a = _rand((3, 3))
    g = in_mode(tidu.grad(lambda x: tf.einsum("ii", x)), mode)(tf.asarray(a))  # jit of grad
    np.testing.assert_array_equal(g.numpy(), np.eye(3))
    u, s, v = _rand((2, 3)), _rand((3,), seed=1), _rand((3, 4), seed=2)
    # grad of the compiled function (a constant-closing jit: u and v are constants of its graph)
    gs = tidu.grad(in_mode(lambda s: tf.einsum("ik,k,kj->", tf.asarray(u), s, tf.asarray(v)), mode))(tf.asarray(s))
    np.testing.assert_allclose(gs.numpy(), u.sum(0) * v.sum(1))


@pytest.mark.parametrize("mode", MODES)
def test_third_order_derivative(mode):
    x = tf.asarray(_rand((3,)))

    def cube_eager(x):  # sum_i x_i^3 as a three-operand hyper-edge einsum
        return tf.einsum("i,i,i->", x, x, x)

    cube = in_mode(cube_eager, mode)  # under jit: three reverse passes through the compiled call

    d2 = tidu.grad(lambda x: tf.sum(tidu.grad(cube)(x)))  # 6 x
    d3 = tidu.grad(lambda x: tf.sum(d2(x)))  # 6
    np.testing.assert_allclose(d2(x).numpy(), 6 * x.numpy())
    np.testing.assert_allclose(d3(x).numpy(), np.full(3, 6.0))


# ---------------------------------------------------------------------------
# random specs
# ---------------------------------------------------------------------------
@st.composite
def einsum_cases(draw, max_ops: int = 4, sizes=(0, 1, 2, 3), max_rank: int = 3):
    n = draw(st.integers(1, max_ops))
    pool = "abcde"
    size = {l: draw(st.sampled_from(sizes)) for l in pool}
    ell = tuple(draw(st.lists(st.integers(1, 3), max_size=2))) if draw(st.booleans()) else None
    terms, shapes = [], []
    for _ in range(n):
        t = draw(st.lists(st.sampled_from(pool), max_size=max_rank))
        shape = [size[l] for l in t]
        s = "".join(t)
        if ell is not None and draw(st.booleans()):
            m = draw(st.integers(0, len(ell)))
            eshape = [1 if draw(st.booleans()) else e for e in ell[len(ell) - m :]]
            pos = draw(st.integers(0, len(t)))
            s = s[:pos] + "..." + s[pos:]
            shape = shape[:pos] + eshape + shape[pos:]
        terms.append(s)
        shapes.append(tuple(shape))
    eq = ",".join(terms)
    if draw(st.booleans()):
        present = sorted(set(eq) - {"."})
        out = "".join(draw(st.permutations(present))[: draw(st.integers(0, len(present)))])
        if "..." in eq:
            pos = draw(st.integers(0, len(out)))
            out = out[:pos] + "..." + out[pos:]
        eq += "->" + out
    return eq, shapes


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=einsum_cases(), optimize=st.sampled_from(OPTIMIZE))
def test_random_specs_match_numpy(case, optimize, mode):
    eq, shapes = case
    arrays = [_rand(s, seed=i) for i, s in enumerate(shapes)]
    try:
        want = np.einsum(eq, *arrays)
    except ValueError:
        assume(False)
    got = in_mode(tf.einsum, mode)(eq, *[tf.asarray(a) for a in arrays], optimize=optimize)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=einsum_cases(max_ops=3, sizes=(0, 1, 2, 3), max_rank=3), dtype=st.sampled_from([np.float64, np.complex128]))
def test_random_specs_check_grads(case, dtype, mode):
    eq, shapes = case
    arrays = [_rand(s, seed=i) for i, s in enumerate(shapes)]
    try:
        np.einsum(eq, *arrays)
    except ValueError:
        assume(False)
    args = [tf.asarray(_rand(s, dtype, seed=i)) for i, s in enumerate(shapes)]
    check_derivatives(mode, lambda *xs: tf.einsum(eq, *xs), args, order=2)


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


# --- review fixes -------------------------------------------------------------------
def test_plan_cache_get_survives_an_eviction_between_lookup_and_refresh():
    """Another thread may evict a key between ``get``'s lookup and its ``move_to_end``
    (that raised KeyError). Simulated deterministically: the lookup itself evicts."""
    from collections import OrderedDict

    from tenferro.einsum._cache import LRUCache

    class EvictingDict(OrderedDict):
        def get(self, key, default=None):
            v = super().get(key, default)
            self.pop(key, None)  # "another thread" evicts it right after the lookup
            return v

    cache = LRUCache(4)
    cache.put("k", "plan")
    cache.data = EvictingDict(cache.data)
    assert cache.get("k") == "plan"
    assert cache.get("k") is None


def test_plan_cache_is_consistent_under_threads():
    import threading

    from tenferro.einsum._cache import LRUCache

    cache = LRUCache(4)
    errors = []

    def hammer(seed):
        try:
            for i in range(5000):
                k = (seed * 7 + i) % 11
                if cache.get(k) is None:
                    cache.put(k, i + 1)
        except Exception as e:  # noqa: BLE001  (any exception is the failure)
            errors.append(e)

    threads = [threading.Thread(target=hammer, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:1]
    assert len(cache.data) <= 4


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


def test_readme_names_the_path_constants_by_an_import_that_works():
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    imports = re.findall(r"`(from tenferro\.einsum import [^`]+)`", readme)
    assert imports, "the README no longer says how to reach OPTIMAL_MAX_OPERANDS and MAX_INTERMEDIATE_BYTES"
    scope: dict = {}
    for line in imports:
        exec(line, scope)  # noqa: S102  (the README's own spelling)
    assert scope["OPTIMAL_MAX_OPERANDS"] == 10 and scope["MAX_INTERMEDIATE_BYTES"] == 2**40
    assert "tenferro.einsum.OPTIMAL_MAX_OPERANDS" not in readme  # an AttributeError: tf.einsum is the function
    assert "tenferro.einsum.MAX_INTERMEDIATE_BYTES" not in readme
