"""tenferro.einsum: values against numpy.einsum for every optimize option, random
specs (hypothesis) and derivatives to order 2.

Values and derivatives run in both modes (``helpers.MODES``): ``jit`` compiles the
einsum with ``tenferro.jit`` (values checked equal to eager to rounding by
``helpers.in_mode``, derivatives by ``helpers.check_jit_matches``). The plan cache,
the errors and the layouts of the results are in test_einsum_plan_cache.py,
test_einsum_errors.py and test_einsum_layouts.py."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from helpers import MODES, check_derivatives, in_mode

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
