"""tenferro.einsum under transformations: an n-operand einsum is staged as the
plan's steps of at most two operands (``_plan.decompose``), so reverse mode
shares intermediates. Checks the staged graphs, values and derivatives against
the fused primitive and NumPy, linear growth of the linearized graph, and the
plan cache. Values and derivatives also run compiled (``helpers.MODES``): under
``jit`` the pairwise steps are staged, then merged back by the contraction passes,
and must give eager's values and derivatives to rounding."""

from __future__ import annotations

import string
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tenferro.einsum import _api
from tenferro.einsum._ad import einsum_p
from tenferro.einsum._plan import PAIRWISE

from helpers import MODES, check_derivatives, in_mode
from test_einsum import OPTIMIZE, _rand, einsum_cases


def mps_norm(L: int, chi: int = 3, d: int = 2, dtype=np.float64):
    """``<psi|phi>`` of two open-boundary MPS as one einsum of ``2 L`` operands."""
    a, b = string.ascii_letters[: L + 1], string.ascii_letters[L + 1 : 2 * L + 2]
    s = string.ascii_letters[2 * L + 2 : 3 * L + 2]
    dims = [1] + [chi] * (L - 1) + [1]
    eq = ",".join([a[i] + s[i] + a[i + 1] for i in range(L)] + [b[i] + s[i] + b[i + 1] for i in range(L)]) + "->"
    ops = [tf.asarray(_rand((dims[i % L], d, dims[i % L + 1]), dtype, seed=i) / np.sqrt(chi)) for i in range(2 * L)]
    return eq, ops


def fused(eq: str, ops: list, optimize="auto"):
    """The einsum as ONE ``einsum_p`` application (the eager path), even on tracers."""
    plan, dtype = _api._compile(eq, None, list(ops), optimize)
    assert dtype is None

    def f(*xs):
        return einsum_p.bind(*xs, plan=plan)

    return f


def einsum_arities(graph) -> list[int]:
    return [len(e.inputs) for e in graph.eqns if e.prim is einsum_p]


# ---------------------------------------------------------------------------
# staged graphs
# ---------------------------------------------------------------------------
def test_traced_mps_norm_stages_only_pairwise_einsums():
    eq, ops = mps_norm(6)
    graph = tidu.make_graph(lambda *xs: tf.einsum(eq, *xs), *ops)
    assert einsum_arities(graph) == [2] * 11  # 12 operands: 11 pairwise steps, nothing else
    assert all(e.prim is einsum_p for e in graph.eqns)
    np.testing.assert_allclose(graph(*ops).numpy(), np.einsum(eq, *[x.numpy() for x in ops]), rtol=1e-12)


def test_eager_call_stays_fused():
    eq, ops = mps_norm(4)
    tf.einsum(eq, *ops)
    plan, _ = _api._compile(eq, None, ops, "auto")
    assert plan not in PAIRWISE  # never decomposed: one einsum_p, the fused BLAS steps


@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("ik,k,kj->ij", [(2, 3), (3,), (3, 4)]),  # hyper-edge
        ("ik,kl,k,lj->ij", [(2, 3), (3, 2), (3,), (2, 4)]),  # hyper-edge kept to its last use
        ("ij,jk,k->kk", [(2, 3), (3, 4), (4,)]),  # output embedding
        ("iij,jk,kl->il", [(2, 2, 3), (3, 4), (4, 2)]),  # diagonal
        ("ijx,jk,kly->i", [(2, 3, 2), (3, 4), (4, 2, 3)]),  # operand-only summed labels
        ("...ij,jk,...kl->...il", [(2, 1, 2, 3), (3, 4), (2, 4, 2)]),  # ellipsis broadcasting
        (",ij,j->i", [(), (2, 3), (3,)]),  # 0-d operand
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["f64", "c128"])
@pytest.mark.parametrize("mode", MODES)
def test_structural_cases_decompose_and_differentiate(eq, shapes, dtype, mode):
    args = [tf.asarray(_rand(s, dtype, seed=i)) for i, s in enumerate(shapes)]
    graph = tidu.make_graph(lambda *xs: tf.einsum(eq, *xs), *args)
    assert max(einsum_arities(graph)) <= 2
    want = np.einsum(eq, *[x.numpy() for x in args]) if "kk" not in eq else None
    # eager: the staged graph evaluated; jit: that graph optimized (merged) and compiled
    got = (graph(*args) if mode == "eager" else in_mode(lambda *xs: tf.einsum(eq, *xs), mode)(*args)).numpy()
    if want is None:  # "->kk": the diagonal embedding of the 1-d result
        want = np.diag(np.einsum("ij,jk,k->k", *[x.numpy() for x in args]))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_derivatives(mode, lambda *xs: tf.einsum(eq, *xs), args, order=2)


@pytest.mark.parametrize(
    "optimize",
    [[(0, 1, 2), (0, 1)], [(1,), (0, 2), (0, 1), (0, 1), (0,)], False],
    ids=["3-step", "1-steps", "left-to-right"],
)
@pytest.mark.parametrize("mode", MODES)
def test_explicit_paths_with_multi_and_single_steps(optimize, mode):
    eq, shapes = "ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 2), (2, 3)]
    args = [tf.asarray(_rand(s, seed=i)) for i, s in enumerate(shapes)]
    f = lambda *xs: tf.einsum(eq, *xs, optimize=optimize)  # noqa: E731
    graph = tidu.make_graph(f, *args)
    assert einsum_arities(graph) == [2, 2, 2]
    got = graph(*args) if mode == "eager" else in_mode(f, mode)(*args)
    np.testing.assert_allclose(got.numpy(), np.einsum(eq, *[x.numpy() for x in args]), rtol=1e-12)


# ---------------------------------------------------------------------------
# derivatives
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["f64", "c128"])
@pytest.mark.parametrize("mode", MODES)
def test_mps_norm_gradient_matches_fused_and_check_grads(dtype, mode):
    eq, ops = mps_norm(6, dtype=dtype)
    n = len(ops)
    norm = in_mode(lambda *xs: tf.einsum(eq, *xs), mode)  # jit: the reverse pass through the compiled call
    out, pull = tidu.vjp(norm, *ops)
    out_f, pull_f = tidu.vjp(fused(eq, ops), *ops)
    np.testing.assert_allclose(out.numpy(), out_f.numpy(), rtol=1e-12)
    ct = tf.asarray(np.asarray(0.7 - 0.3j if dtype == np.complex128 else 0.7, dtype=dtype))
    for g, g_f in zip(pull(ct), pull_f(ct)):
        np.testing.assert_allclose(g.numpy(), g_f.numpy(), rtol=1e-11, atol=1e-13)
    if dtype == np.float64:  # grad w.r.t. all tensors as a user would call it (jit: the compiled gradient)
        grads = in_mode(tidu.grad(lambda *xs: tf.einsum(eq, *xs), argnums=tuple(range(n))), mode)(*ops)
        for g, g_f in zip(grads, pull_f(tf.asarray(1.0))):
            np.testing.assert_allclose(g.numpy(), g_f.numpy(), rtol=1e-11, atol=1e-13)
    check_derivatives(mode, lambda *xs: tf.einsum(eq, *xs), ops, order=2)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8])
def test_linearized_chain_grows_linearly(n):
    letters = string.ascii_lowercase
    eq = ",".join(letters[i] + letters[i + 1] for i in range(n)) + "->" + letters[0] + letters[n]
    xs = [tf.asarray(_rand((3, 3), seed=i)) for i in range(n)]
    _, lin = tidu.linearize(lambda *x: tf.einsum(eq, *x), *xs)
    # n - 1 pairwise steps, each linear in two operands: two tangent terms and an add
    assert lin.num_residuals == 2 * (n - 1)  # the n operands and n - 2 shared intermediates
    assert einsum_arities(lin.graph) == [2] * (2 * (n - 1))  # total work O(n), not n terms of n operands
    _, lin_f = tidu.linearize(fused(eq, xs), *xs)
    assert sum(einsum_arities(lin_f.graph)) == n * n  # the fused rule, for contrast
    ts = [tf.asarray(_rand((3, 3), seed=10 + i)) for i in range(n)]
    np.testing.assert_allclose(lin(*ts).numpy(), lin_f(*ts).numpy(), rtol=1e-12)


@st.composite
def random_paths(draw, n: int):
    """An explicit shrinking-list path for ``n`` operands with 1-, 2- and 3-operand steps."""
    path, left = [], n
    while left > 1 or draw(st.booleans()):
        k = draw(st.integers(1, min(3, left)))
        path.append(tuple(draw(st.permutations(range(left)))[:k]))
        left -= k - 1
        if len(path) > 3 * n:
            break
    assume(left == 1)
    return path


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=einsum_cases(max_ops=5), data=st.data())
def test_random_specs_jvp_matches_numpy(case, data, mode):
    eq, shapes = case
    optimize = data.draw(st.one_of(st.sampled_from(OPTIMIZE), random_paths(len(shapes))), label="optimize")
    arrays = [_rand(s, seed=i) for i, s in enumerate(shapes)]
    try:
        want = np.einsum(eq, *arrays)
    except ValueError:
        assume(False)
    tangents = [_rand(s, seed=20 + i) for i, s in enumerate(shapes)]
    want_t = sum(
        (np.einsum(eq, *(arrays[:k] + [tangents[k]] + arrays[k + 1 :])) for k in range(len(arrays))),
        np.zeros_like(want),
    )
    # jit: the JVP of the compiled call (its forward and linear graphs, merged contractions)
    out, out_t = tidu.jvp(
        in_mode(lambda *xs: tf.einsum(eq, *xs, optimize=optimize), mode),
        tuple(tf.asarray(a) for a in arrays),
        tuple(tf.asarray(t) for t in tangents),
    )
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out_t.numpy(), want_t, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------------
# the plan cache
# ---------------------------------------------------------------------------
def test_pairwise_steps_and_their_derivatives_hit_the_plan_cache():
    tf.einsum_cache_clear()
    eq, ops = mps_norm(4)
    g = tidu.grad(lambda *xs: tf.einsum(eq, *xs), argnums=tuple(range(len(ops))))
    first = g(*ops)
    warm = tf.einsum_cache_info()
    second = g(*ops)
    after = tf.einsum_cache_info()
    assert after.misses == warm.misses and after.plans.misses == warm.plans.misses  # nothing re-planned
    assert after.plans.hits > warm.plans.hits  # steps and transposes are looked up, not rebuilt
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_operand_copies_in_scratch_never_leak_into_results():
    """Pairwise steps regroup operands in per-thread scratch buffers: results stay
    independent of later einsums, and concurrent threads do not share scratch."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((6, 5, 4))
    b = rng.standard_normal((4, 6, 3))
    spec = "ijk,kil->jl"  # both operands need regrouping copies
    want = np.einsum(spec, a, b)
    first = tf.einsum(spec, tf.asarray(a), tf.asarray(b))
    for seed in range(5):  # later einsums reuse the same scratch
        c = np.random.default_rng(seed).standard_normal((6, 5, 4))
        tf.einsum(spec, tf.asarray(c), tf.asarray(b))
    np.testing.assert_allclose(first.numpy(), want, rtol=1e-13)

    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        for _ in range(50):
            x, y = r.standard_normal((6, 5, 4)), r.standard_normal((4, 6, 3))
            got = tf.einsum(spec, tf.asarray(x), tf.asarray(y)).numpy()
            if not np.allclose(got, np.einsum(spec, x, y), rtol=1e-12):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
