"""The tensor passes of compiled mode (tenferro.jit): algebraic identities, transposes
folded into contractions, contraction chains merged into one planned einsum, and the
pipeline (``optimize``/``PASSES``). Each pass is shown on small graphs from
``tidu.make_graph``: the primitives before and after, and the values before and after
(equal to rounding), float64 and complex128 where the dtype matters. Gradient graphs
of an MPS energy and random programs (hypothesis) go through the whole pipeline."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
import tensor4all as t4
import tidu
from tenferro import _structural as _st
from tenferro._astype import convert_element_type_p
from tenferro.einsum._parse import Spec
from tenferro.einsum._plan import get_plan
from tenferro.jit._contractions import MAX_OPERANDS, compose_paths, contraction_cost, merge_contractions, merge_specs
from tenferro.jit._einsum_specs import dot_general_spec, plan_for
from tenferro.jit._identities import simplify_identities
from tenferro.jit._layouts import choose_layouts, copied_elements
from tenferro.jit._sum_products import fuse_sums_of_products
from tenferro.einsum._ad import einsum_p
from tenferro.jit._optimize import PASSES, optimize
from tenferro.jit._transpose_fold import fold_transposes
from tidu import Graph
from tidu.passes import dce
from test_random_programs import SETTINGS, _real_loss, _random_like, programs

DTYPES = ["float64", "complex128"]
CONTRACTIONS = ("dot_general", "einsum")


def _prims(g: Graph) -> list[str]:
    return [e.prim.name for e in g.eqns]


def _rand(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal(shape)
    return tf.asarray(np.asarray(a, dtype=dtype))


def _close(graph: Graph, values: dict) -> Graph:
    """``graph`` with the inputs at the positions in ``values`` made constants
    holding those values (partial evaluation)."""
    keep = [v for i, v in enumerate(graph.invars) if i not in values]
    consts = [graph.invars[i] for i in values]
    return Graph(
        keep,
        list(graph.constvars) + consts,
        list(graph.consts) + list(values.values()),
        list(graph.eqns),
        list(graph.outvars),
        tidu.tree_structure(tuple(keep)),
        graph.out_tree,
    )


def _np(x):
    return np.asarray(x.numpy())


def _assert_same(before: Graph, after: Graph, args, rtol=1e-13):
    """Both graphs give the same outputs on ``args`` (to rounding)."""
    want, got = before.eval_flat(*args), after.eval_flat(*args)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = _np(w), _np(g)
        assert w.shape == g.shape and w.dtype == g.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(w), initial=0))))


def _identities(g: Graph) -> Graph:
    return dce(simplify_identities(g))


def _feeding_contractions(g: Graph) -> int:
    """How many ``transpose`` results a contraction reads."""
    made = {e.outputs[0] for e in g.eqns if e.prim.name == "transpose"}
    return sum(1 for e in g.eqns if e.prim.name in CONTRACTIONS for v in e.inputs if v in made)


# ---------------------------------------------------------------------------
# algebraic identities
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_adding_and_subtracting_zero(dtype):
    x = _rand((3, 2), dtype)
    g = tidu.make_graph(lambda x: (x + 0.0) - 0.0, x)
    assert _prims(g) == ["add", "sub"]
    out = _identities(g)
    assert _prims(out) == [] and out.outvars[0] is out.invars[0]
    _assert_same(g, out, [x])
    g = tidu.make_graph(lambda x: 0.0 - tf.exp(x), x)
    assert _prims(g) == ["exp", "sub"]
    out = _identities(g)
    assert _prims(out) == ["exp", "neg"]
    _assert_same(g, out, [x])


@pytest.mark.parametrize("dtype", DTYPES)
def test_multiplying_and_dividing_by_one_and_minus_one(dtype):
    x = _rand((4,), dtype)
    g = tidu.make_graph(lambda x: ((1.0 * x) / 1.0, x * -1.0, x / -1.0), x)
    assert _prims(g) == ["mul", "div", "mul", "div"]
    out = _identities(g)
    assert _prims(out) == ["neg", "neg"] and out.outvars[0] is out.invars[0]
    _assert_same(g, out, [x])


def test_real_powers_one_and_two_of_a_fill():
    """``x ** 1 -> x`` and ``x ** 2 -> x * x`` for a real floating ``x`` and an exponent that is
    a fill (the gradient of ``x ** 2`` under ``vmap`` broadcasts ``2 - 1`` to ``x``'s shape):
    the same values to the bit, infinities and NaN included."""
    x = tf.asarray([1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e200])
    ones, twos = tf.asarray(np.ones(8)), tf.asarray(np.full(8, 2.0))
    g = tidu.make_graph(lambda x: (tf.power(x, ones), tf.power(x, twos), tf.power(x, tf.asarray(2.0))), x)
    assert _prims(g) == ["pow"] * 3
    out = _identities(g)
    assert _prims(out) == ["mul", "mul"] and out.outvars[0] is out.invars[0]
    with np.errstate(over="ignore", invalid="ignore"):
        for w, o in zip(g.eval_flat(x), out.eval_flat(x)):
            np.testing.assert_array_equal(_np(o), _np(w))


def test_powers_that_are_not_identities_are_kept():
    """A complex base, an exponent that is not a fill, or a fill of 3 keep ``pow``."""
    z = _rand((3,), "complex128")
    x = _rand((3,))
    g = tidu.make_graph(
        lambda z, x: (
            tf.power(z, tf.asarray(np.ones(3, dtype=complex))),
            tf.power(x, tf.asarray([1.0, 2.0, 1.0])),
            tf.power(x, tf.asarray(3.0)),
        ),
        z,
        x,
    )
    assert _identities(g) is g


def test_multiplying_by_zero_is_kept():
    # x * 0 -> 0 is not an identity: inf * 0 is NaN
    x = tf.asarray([1.0, np.inf, np.nan])
    g = tidu.make_graph(lambda x: x * 0.0, x)
    out = optimize(g)
    assert _prims(out) == ["mul"]
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(_np(out(x)), [0.0, np.nan, np.nan])


@pytest.mark.parametrize("dtype", DTYPES)
def test_neg_neg_and_conj_conj(dtype):
    x = _rand((2, 3), dtype)
    g = tidu.make_graph(lambda x: (-(-tf.exp(x)), tf.conj(tf.conj(tf.sin(x)))), x)
    assert _prims(g) == ["exp", "neg", "neg", "sin", "conj", "conj"]
    out = _identities(g)
    assert _prims(out) == ["exp", "sin"]
    _assert_same(g, out, [x])


def test_complex_parts_of_real_values():
    x = _rand((3,))
    g = tidu.make_graph(lambda x: (tf.conj(x), tf.real(x), tf.exp(x) + tf.imag(x)), x)
    assert _prims(g) == ["conj", "real", "exp", "imag", "add"]
    out = _identities(g)
    assert _prims(out) == ["exp"] and out.outvars[:2] == [out.invars[0]] * 2
    _assert_same(g, out, [x])
    # a real value converted to complex: real gives it back, imag is zero
    g = tidu.make_graph(
        lambda x: (
            tf.real(convert_element_type_p.bind(x, new_dtype=tf.complex128)),
            tf.exp(x) + tf.imag(convert_element_type_p.bind(x, new_dtype=tf.complex128)),
        ),
        x,
    )
    assert _prims(g) == ["convert_element_type", "real", "exp", "convert_element_type", "imag", "add"]
    out = _identities(g)
    assert _prims(out) == ["exp"]
    _assert_same(g, out, [x])
    # a complex value keeps its parts
    z = _rand((3,), "complex128")
    g = tidu.make_graph(lambda z: (tf.conj(z), tf.real(z), tf.imag(z)), z)
    assert simplify_identities(g) is g


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_of_transpose(dtype):
    x = _rand((2, 3, 4), dtype)
    g = tidu.make_graph(lambda x: tf.exp(tf.transpose(tf.transpose(x, (1, 2, 0)), (2, 1, 0))), x)
    assert _prims(g) == ["transpose", "transpose", "exp"]
    out = _identities(g)
    assert _prims(out) == ["transpose", "exp"] and "permutation=(0, 2, 1)" in str(out)
    _assert_same(g, out, [x])
    g = tidu.make_graph(lambda x: tf.exp(tf.transpose(tf.transpose(x, (1, 2, 0)), (2, 0, 1))), x)
    out = _identities(g)
    assert _prims(out) == ["exp"]
    _assert_same(g, out, [x])


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_of_reshape_and_no_op_structural_maps(dtype):
    x = _rand((2, 3, 4), dtype)
    g = tidu.make_graph(lambda x: tf.exp(tf.reshape(tf.reshape(x, (6, 4)), (4, 6))), x)
    assert _prims(g) == ["reshape", "reshape", "exp"]
    out = _identities(g)
    assert _prims(out) == ["reshape", "exp"] and "new_shape=(4, 6)" in str(out)
    _assert_same(g, out, [x])
    g = tidu.make_graph(lambda x: tf.exp(tf.reshape(tf.reshape(x, (6, 4)), (2, 3, 4))), x)
    assert _prims(_identities(g)) == ["exp"]
    # maps that do nothing: same shape, same dtype, identity permutation, empty sum, full slice
    g = tidu.make_graph(
        lambda x: tf.exp(
            _st.sum_p.bind(
                _st.slice_p.bind(
                    convert_element_type_p.bind(
                        _st.broadcast_in_dim_p.bind(
                            _st.transpose_p.bind(_st.reshape_p.bind(x, new_shape=(2, 3, 4)), permutation=(0, 1, 2)),
                            shape=(2, 3, 4),
                            broadcast_dimensions=(0, 1, 2),
                        ),
                        new_dtype=x.dtype,
                    ),
                    slices=((0, 1, 2), (0, 1, 3), (0, 1, 4)),
                ),
                axes=(),
            )
        ),
        x,
    )
    assert _prims(g) == ["reshape", "transpose", "broadcast_in_dim", "convert_element_type", "slice", "sum", "exp"]
    out = _identities(g)
    assert _prims(out) == ["exp"]
    _assert_same(g, out, [x])


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_of_a_broadcast(dtype):
    x = _rand((3, 2), dtype)
    g = tidu.make_graph(lambda x: tf.exp(tf.sum(tf.broadcast_to(x, (5, 3, 2)), axis=0)), x)
    assert _prims(g) == ["broadcast_in_dim", "sum", "exp"]
    out = _identities(g)
    assert _prims(out) == ["mul", "exp"]
    _assert_same(g, out, [x])
    # summing only some of the broadcast axes keeps a broadcast for the others
    g = tidu.make_graph(lambda x: tf.exp(tf.sum(tf.broadcast_to(x, (4, 5, 3, 2)), axis=1)), x)
    out = _identities(g)
    assert _prims(out) == ["mul", "broadcast_in_dim", "exp"]
    _assert_same(g, out, [x])
    # a sum over an axis the operand had is not a count
    g = tidu.make_graph(lambda x: tf.sum(tf.broadcast_to(x, (5, 3, 2)), axis=(0, 1)), x)
    assert _prims(_identities(g)) == ["broadcast_in_dim", "sum"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_fills_through_structural_maps(dtype):
    """A zero made by structural maps of a 0-d zero constant is recognised: the
    addition disappears, and no large constant is made."""
    x = _rand((3, 2), dtype)
    z = tf.zeros((), dtype=dtype)

    def f(x, z):
        b = _st.broadcast_in_dim_p.bind(z, shape=(2, 3), broadcast_dimensions=())
        return x + tf.conj(-tf.transpose(b))

    g = _close(tidu.make_graph(f, x, z), {1: z})
    assert _prims(g) == ["broadcast_in_dim", "transpose", "neg", "conj", "add"]
    out = _identities(g)
    assert _prims(out) == [] and out.outvars[0] is out.invars[0]
    _assert_same(g, out, [x])
    # large: the fill stays a broadcast of a 0-d constant, ones multiply away
    big = _rand((100, 50), dtype)
    one = tf.ones((), dtype=dtype)

    def h(x, c):
        b = _st.broadcast_in_dim_p.bind(c, shape=(50, 100), broadcast_dimensions=())
        return tf.exp(x) * tf.transpose(-b)

    g = _close(tidu.make_graph(h, big, one), {1: one})
    out = _identities(g)
    assert _prims(out) == ["exp", "neg"]
    assert all(c.size <= 4096 for c in out.consts)
    _assert_same(g, out, [big])


def test_identities_leave_other_graphs_alone():
    x = _rand((3, 3))
    g = tidu.make_graph(lambda x: tf.sin(x) @ tf.transpose(x) + 2.0 * x, x)
    assert simplify_identities(g) is g


# ---------------------------------------------------------------------------
# transposes folded into contractions
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_feeding_an_einsum_is_absorbed(dtype):
    a, b = _rand((4, 3), dtype), _rand((4, 5), dtype, 1)
    g = tidu.make_graph(lambda a, b: tf.einsum("ij,jk->ik", tf.transpose(a), b), a, b)
    assert _prims(g) == ["transpose", "einsum"]
    out = dce(fold_transposes(g))
    assert _prims(out) == ["einsum"] and "einsum_plan('ab,ac->bc')" in str(out)
    _assert_same(g, out, [a, b])
    # permutations that are not their own inverse, on both operands
    x, y = _rand((2, 3, 4), dtype), _rand((5, 4, 2), dtype, 1)
    g = tidu.make_graph(
        lambda x, y: tf.einsum("ijk,jkl->il", tf.transpose(x, (1, 2, 0)), tf.transpose(y, (1, 2, 0))), x, y
    )
    assert _prims(g) == ["transpose", "transpose", "einsum"]
    out = dce(fold_transposes(g))
    assert _prims(out) == ["einsum"] and "einsum_plan('abc,dca->bd')" in str(out)
    _assert_same(g, out, [x, y])


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_feeding_a_dot_general(dtype):
    a, b = _rand((4, 3), dtype), _rand((4, 5), dtype, 1)
    # the free axes keep their order: the dimension numbers change, dot_general stays
    g = tidu.make_graph(lambda a, b: tf.transpose(a) @ b, a, b)
    assert _prims(g) == ["transpose", "dot_general"]
    out = dce(fold_transposes(g))
    assert _prims(out) == ["dot_general"] and "dimension_numbers=(((0,), (0,)), ((), ()))" in str(out)
    _assert_same(g, out, [a, b])
    x, y = _rand((3, 4, 2), dtype), _rand((2, 5, 3), dtype, 1)
    g = tidu.make_graph(
        lambda x, y: tf.tensordot(tf.transpose(x, (2, 0, 1)), tf.transpose(y, (1, 2, 0)), axes=([0], [2])), x, y
    )
    out = dce(fold_transposes(g))
    assert _prims(out) == ["dot_general"] and "dimension_numbers=(((2,), (0,)), ((), ()))" in str(out)
    _assert_same(g, out, [x, y])
    # the free axes change order: an einsum
    x, y = _rand((2, 3, 4), dtype), _rand((4, 5), dtype, 1)
    g = tidu.make_graph(lambda x, y: tf.tensordot(tf.transpose(x, (1, 0, 2)), y, axes=([2], [0])), x, y)
    assert _prims(g) == ["transpose", "dot_general"]
    out = dce(fold_transposes(g))
    assert _prims(out) == ["einsum"] and "einsum_plan('abc,cd->bad')" in str(out)
    _assert_same(g, out, [x, y])


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_contraction_result(dtype):
    a, b = _rand((2, 3, 4), dtype), _rand((2, 4, 5), dtype, 1)
    g = tidu.make_graph(lambda a, b: a @ b, a, b)  # batched: dot_general then transpose
    assert _prims(g) == ["dot_general", "transpose"]
    out = dce(fold_transposes(g))
    assert _prims(out) == ["einsum"]
    _assert_same(g, out, [a, b])
    g = tidu.make_graph(lambda a, b: tf.transpose(tf.einsum("bij,bjk->bik", a, b), (2, 0, 1)), a, b)
    out = dce(fold_transposes(g))
    assert _prims(out) == ["einsum"] and "einsum_plan('abc,acd->dab')" in str(out)
    _assert_same(g, out, [a, b])
    # a result read elsewhere too: the contraction is not computed twice
    g = tidu.make_graph(
        lambda a, b: (tf.transpose(tf.einsum("bij,bjk->bik", a, b)), tf.einsum("bij,bjk->bik", a, b)), a, b
    ).cse()
    assert fold_transposes(g) is g


# ---------------------------------------------------------------------------
# contraction chains merged
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_einsum_chain_merged(dtype):
    a, b, c = _rand((3, 4), dtype), _rand((4, 5), dtype, 1), _rand((5, 2), dtype, 2)
    g = tidu.make_graph(lambda a, b, c: tf.einsum("ij,jk->ik", tf.einsum("ij,jk->ik", a, b), c), a, b, c)
    assert _prims(g) == ["einsum", "einsum"]
    out = dce(merge_contractions(g))
    assert _prims(out) == ["einsum"] and "einsum_plan('ab,bc,cd->ad')" in str(out)
    _assert_same(g, out, [a, b, c])


def test_matmul_chain_merged_and_reordered_by_cost():
    n = 40
    a, b, v = _rand((n, n)), _rand((n, n), seed=1), _rand((n, 1), seed=2)
    g = tidu.make_graph(lambda a, b, v: (a @ b) @ v, a, b, v)  # n^3 + n^2 multiply-adds as written
    assert _prims(g) == ["dot_general", "dot_general"]
    out = dce(merge_contractions(g))
    assert _prims(out) == ["einsum"]
    plan = out.eqns[0].params["plan"]
    parts = sum(
        contraction_cost(plan_for(dot_general_spec(2, 2, e.params["dimension_numbers"]), e.inputs)).flops
        for e in g.eqns
    )
    assert contraction_cost(plan).flops * 10 < parts  # a (b v): 2 n^2
    _assert_same(g, out, [a, b, v], rtol=1e-12)


def test_shared_intermediates_and_outputs_are_not_merged():
    a, b, c, d = (_rand((3, 3), seed=s) for s in range(4))
    g = tidu.make_graph(lambda a, b, c, d: ((a @ b) @ c, (a @ b) @ d), a, b, c, d).cse()
    assert _prims(g) == ["dot_general"] * 3
    assert merge_contractions(g) is g
    g = tidu.make_graph(lambda a, b, c: (a @ b, (a @ b) @ c), a, b, c).cse()
    assert merge_contractions(g) is g


def test_gradient_graph_keeps_the_intermediates_the_reverse_pass_reads():
    a, b, c = _rand((3, 4)), _rand((4, 5), seed=1), _rand((5, 2), seed=2)
    g = tidu.make_graph(tidu.value_and_grad(lambda a, b, c: tf.sum(tf.sin(a @ b @ c)), argnums=(0, 1, 2)), a, b, c)
    out = optimize(g)
    ab = [e for e in out.eqns if e.prim.name in CONTRACTIONS and set(e.inputs) == {out.invars[0], out.invars[1]}]
    assert len(ab) == 1  # a @ b, read by the forward pass and by the gradient of c
    _assert_same(g, out, [a, b, c])


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_expanding_contraction_is_merged_into_each_reader(dtype):
    """``m[a, b, n] = sum_p v[p, n] A[a, p, b]`` (2048 elements from 192) read by two
    contractions is merged into both; neither merged path forms ``m`` (each contracts the
    environment with ``A`` first), and the values are unchanged."""
    v, A = _rand((2, 32), dtype), _rand((8, 2, 8), dtype, 1)
    e1, e2 = _rand((8, 32), dtype, 2), _rand((8, 32), dtype, 3)

    def f(v, A, e1, e2):
        m = tf.einsum("pn,apb->abn", v, A)
        return tf.einsum("an,abn->bn", e1, m), tf.einsum("bn,abn->an", e2, m)

    g = tidu.make_graph(f, v, A, e1, e2)
    out = dce(merge_contractions(g))
    assert _prims(out) == ["einsum", "einsum"]
    assert all(len(e.inputs) == 3 and contraction_cost(e.params["plan"]).largest < 8 * 8 * 32 for e in out.eqns)
    _assert_same(g, out, [v, A, e1, e2])


def test_a_shared_contraction_that_does_not_expand_stays():
    """The same network with ``m`` no larger than its operands together (a batch of 2)."""
    v, A, e1, e2 = _rand((2, 2)), _rand((8, 2, 8), seed=1), _rand((8, 2), seed=2), _rand((8, 2), seed=3)
    g = tidu.make_graph(
        lambda v, A, e1, e2: (
            tf.einsum("an,abn->bn", e1, tf.einsum("pn,apb->abn", v, A)),
            tf.einsum("bn,abn->an", e2, tf.einsum("pn,apb->abn", v, A)),
        ),
        v,
        A,
        e1,
        e2,
    ).cse()
    assert _prims(g) == ["einsum"] * 3
    assert merge_contractions(g) is g


def test_merged_einsums_have_at_most_max_operands():
    ms = [_rand((3, 3), seed=s) for s in range(2 * MAX_OPERANDS)]

    def chain(*ms):
        r = ms[0]
        for m in ms[1:]:
            r = r @ m
        return r

    g = tidu.make_graph(chain, *ms)
    out = dce(merge_contractions(g))
    sizes = [len(e.inputs) for e in out.eqns]
    assert max(sizes) == MAX_OPERANDS and sum(sizes) - (len(sizes) - 1) == len(ms)
    _assert_same(g, out, ms, rtol=1e-12)


def test_merge_specs():
    # consumer 'ab,bc->ac' whose operand 0 is 'ad,db->ab': producer labels renamed apart
    c, p = Spec(((0, 1), (1, 2)), (0, 2)), Spec(((0, 1), (1, 2)), (0, 2))
    assert merge_specs(c, 0, p) == Spec(((0, 3), (3, 1), (1, 2)), (0, 2))
    # a consumer reading the producer's diagonal: the producer's two labels become one
    assert merge_specs(Spec(((0, 0),), (0,)), 0, p) == Spec(((0, 1), (1, 0)), (0,))
    # a producer embedding a diagonal ('i->ii') cannot be merged
    assert merge_specs(c, 0, Spec(((0,),), (0, 0))) is None


def test_diagonal_of_a_product_merged():
    a, b = _rand((4, 3)), _rand((3, 4), seed=1)
    g = tidu.make_graph(lambda a, b: tf.einsum("ii->i", tf.einsum("ij,jk->ik", a, b)), a, b)
    out = dce(merge_contractions(g))
    assert _prims(out) == ["einsum"] and "einsum_plan('ab,ba->a')" in str(out)
    _assert_same(g, out, [a, b])


def test_composed_path_repeats_the_pairwise_cost():
    # (x y) z with x: 10x30, y: 30x5, z: 5x60, planned as written: equal flops
    p, c = Spec(((0, 1), (1, 2)), (0, 2)), Spec(((0, 1), (1, 2)), (0, 2))
    shapes = [(10, 30), (30, 5), (5, 60)]
    path = compose_paths(2, 0, ((0, 1),), 2, ((0, 1),))
    assert path == ((0, 1), (0, 1))
    merged = merge_specs(c, 0, p)
    plan = get_plan(merged, tuple(shapes), None, tf.float64, tf.CPU, path)
    parts = (
        get_plan(p, ((10, 30), (30, 5)), None, tf.float64, tf.CPU, "auto"),
        get_plan(c, ((10, 5), (5, 60)), None, tf.float64, tf.CPU, "auto"),
    )
    assert contraction_cost(plan).flops == sum(contraction_cost(q).flops for q in parts)
    # the producer in the middle of a three-operand consumer
    assert compose_paths(3, 1, ((0, 1), (0, 1)), 2, ((0, 1),)) == ((1, 2), (0, 2), (0, 1))


# ---------------------------------------------------------------------------
# the pipeline
# ---------------------------------------------------------------------------
def test_passes_are_named_in_order():
    assert [n for n, _ in PASSES] == [
        "fold_constants",
        "simplify_identities",
        "fold_transposes",
        "cse",
        "dce",
        "merge_contractions",
        "fuse_sums_of_products",
        "choose_layouts",
    ]


@pytest.mark.parametrize("dtype", DTYPES)
def test_optimize_folds_constants_and_reaches_a_fixed_point(dtype):
    x, w = _rand((3, 4), dtype), _rand((4, 4), dtype, 1)
    g = _close(tidu.make_graph(lambda x, w: tf.sin(x @ (w @ tf.transpose(w))) * 1.0, x, w), {1: w})
    log = []
    out = optimize(g, log=log)
    assert _prims(out) == ["dot_general", "sin"]
    assert {name for _, name, _, _ in log} >= {"fold_constants", "simplify_identities", "dce"}
    assert optimize(out) is out
    _assert_same(g, out, [x])


# ---------------------------------------------------------------------------
# the gradient of an MPS energy: no transpose feeds a contraction
# ---------------------------------------------------------------------------
L, CHI = 6, 4


def _mps(dtype):
    psi = t4.MPS.random(L, bond_dim=CHI, seed=3, dtype=getattr(tf, dtype))
    H = t4.models.heisenberg(L)
    assert max(max(w.shape) for w in H._tensors) == 5  # Heisenberg MPO, D = 5
    return list(psi._tensors), H


def _energy_tensordot(ts, ws):
    """<psi|H|psi>/<psi|psi> written NumPy-style: tensordot and explicit transposes."""

    def sandwich(ts, ws):
        env = None
        for a, w in zip(ts, ws):
            ca = tf.conj(a)
            if env is None:  # [a, w, b] of the left boundary
                env = tf.reshape(tf.ones((1,), dtype=a.dtype), (1, 1, 1))
            t = tf.tensordot(env, ca, axes=([0], [0]))  # [w, b, s, c]
            if w is None:
                t = tf.tensordot(t, a, axes=([1, 2], [0, 1]))  # [w, c, d]
                env = tf.transpose(t, (1, 0, 2))  # [c, w, d]
                continue
            t = tf.tensordot(t, w, axes=([0, 2], [0, 1]))  # [b, c, t, v]
            t = tf.transpose(t, (1, 3, 0, 2))  # [c, v, b, t]
            env = tf.tensordot(t, a, axes=([2, 3], [0, 1]))  # [c, v, d]
        return tf.real(tf.reshape(env, ()))

    return sandwich(ts, ws) / sandwich(ts, [None] * len(ts))


@pytest.mark.parametrize("dtype", DTYPES)
def test_mps_energy_gradient_has_no_transpose_feeding_a_contraction(dtype):
    ts, H = _mps(dtype)
    ws = [tf.asarray(np.asarray(w.numpy(), dtype=dtype)) for w in H._tensors]
    want = t4.expectation(t4.MPS(ts), H)
    np.testing.assert_allclose(_np(_energy_tensordot(ts, ws)), _np(want), rtol=1e-12)

    g = tidu.make_graph(tidu.value_and_grad(lambda ts: _energy_tensordot(ts, ws)), ts)
    assert _feeding_contractions(g) >= 2 * L  # the forward pass's and the transpose rules'
    out = optimize(g)
    assert _feeding_contractions(out) == 0
    assert len(out.eqns) < len(g.eqns)
    _assert_same(g, out, ts, rtol=1e-12)

    # the same energy with tensor4all's einsum-based expectation
    g = tidu.make_graph(tidu.value_and_grad(lambda ts: t4.expectation(t4.MPS(ts), H)), ts)
    out = optimize(g)
    assert _feeding_contractions(out) == 0
    if dtype == "float64":
        assert "conj" in _prims(g) and "conj" not in _prims(out)  # conj of real values removed
    _assert_same(g, out, ts, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layouts_of_intermediates_save_copies(dtype):
    """choose_layouts on an MPS-energy gradient (one einsum per site and environment):
    fewer copied elements, same values and equations, a fixed point."""
    n, chi, D = 6, 6, 5
    dims = [1] + [chi] * (n - 1) + [1]
    ts = [_rand((dims[i], 2, dims[i + 1]), dtype, i) for i in range(n)]
    ws = [_rand((1 if i == 0 else D, 2, 2, 1 if i == n - 1 else D), dtype, 10 + i) for i in range(n)]

    def energy(ts):
        e, m = tf.ones((1, 1, 1), dtype=ts[0].dtype), tf.ones((1, 1), dtype=ts[0].dtype)
        for a, w in zip(ts, ws):
            e = tf.einsum("abc,asd,bste,ctf->def", e, tf.conj(a), w, a)
            m = tf.einsum("ac,asd,csf->df", m, tf.conj(a), a)
        return tf.real(tf.sum(e) / tf.sum(m))

    g = tidu.make_graph(tidu.value_and_grad(energy), ts)
    before = optimize(g, passes=tuple(p for p in PASSES if p[0] != "choose_layouts"))
    after = choose_layouts(before)
    copies = lambda gr: sum(copied_elements(e.params["plan"]) for e in gr.eqns if e.prim is einsum_p)
    assert copies(after) < copies(before)
    assert _prims(after) == _prims(before)
    assert choose_layouts(after) is after  # a fixed point: no strict improvement left
    _assert_same(before, after, ts, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_of_outer_products_becomes_one_contraction(dtype):
    """The weight cotangent of a loop, sum_k p_k (x) q_k, is one dot_general over
    stacked operands (plus the terms that are not like the others)."""
    ps = [_rand((4,), dtype, k) for k in range(5)]
    qs = [_rand((3,), dtype, 10 + k) for k in range(5)]
    extra = _rand((4, 3), dtype, 20)

    def f(ps, qs, extra):
        acc = extra
        for p, q in zip(ps, qs):
            acc = acc + tf.dot_general(p, q, (((), ()), ((), ())))
        return acc

    g = tidu.make_graph(f, ps, qs, extra)
    assert _prims(g).count("dot_general") == 5 and _prims(g).count("add") == 5
    out = fuse_sums_of_products(g)
    assert sorted(_prims(out)) == ["add", "dot_general", "jit_stack", "jit_stack"]
    _assert_same(g, out, ps + qs + [extra])
    assert fuse_sums_of_products(out) is out
    # a sum read once by something other than an add (an update W - lr * dW) is fused too
    h = tidu.make_graph(lambda ps, qs, extra: f(ps, qs, extra) * 2.0, ps, qs, extra)
    fused = fuse_sums_of_products(h)
    assert _prims(fused).count("dot_general") == 1 and _prims(fused).count("jit_stack") == 2
    _assert_same(h, fused, ps + qs + [extra])


def test_sums_with_few_or_unlike_terms_are_kept():
    a, b, c = _rand((4,)), _rand((3,), seed=1), _rand((3, 2), seed=2)
    g = tidu.make_graph(
        lambda a, b, c: (
            tf.dot_general(a, b, (((), ()), ((), ())))
            + tf.dot_general(b, a, (((), ()), ((), ()))).T
            + tf.dot_general(a, b, (((), ()), ((), ()))) * 2.0
        ),
        a,
        b,
        c,
    )
    assert fuse_sums_of_products(g) is g
    shared = tidu.make_graph(lambda a, b: [tf.dot_general(a, b, (((), ()), ((), ()))) for _ in range(1)][0] * 3.0, a, b)
    assert fuse_sums_of_products(shared) is shared


def test_layouts_leave_outputs_and_non_einsum_readers_alone():
    x, y = _rand((3, 4)), _rand((4, 5), seed=1)
    g = tidu.make_graph(lambda x, y: (tf.einsum("ij,jk->ki", x, y), tf.sin(tf.einsum("ij,jk->ki", x, y) * 2.0)), x, y)
    assert choose_layouts(g) is g


# ---------------------------------------------------------------------------
# random programs: optimize keeps every value
# ---------------------------------------------------------------------------
def _check_optimized(g: Graph, args, prog, rtol=1e-12):
    out = optimize(g)
    assert optimize(out) is out, f"no fixed point\n{prog!r}"
    assert _feeding_contractions(out) == 0, f"a transpose feeds a contraction\n{out}\n{prog!r}"
    want, got = g.eval_flat(*args), out.eval_flat(*args)
    for w, v in zip(want, got):
        w, v = _np(w), _np(v)
        assert w.shape == v.shape and w.dtype == v.dtype, f"{w.shape} {w.dtype} != {v.shape} {v.dtype}\n{prog!r}"
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        err = float(np.max(np.abs(w - v), initial=0.0))
        assert err <= rtol * scale, f"max |optimized - graph| = {err:.3e}\n{g}\n{out}\n{prog!r}"


@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(data=st.data())
def test_optimize_keeps_the_values_of_random_programs(dtype, data):
    """The program, its value_and_grad and a JVP, each staged, optimized, and compared
    with the unoptimized graph (rounding only: 1e-12 relative)."""
    prog = data.draw(programs(dtype), label="program")
    args = prog.args()
    _check_optimized(tidu.make_graph(prog, *args), args, prog)
    vg = tidu.value_and_grad(_real_loss(prog), argnums=tuple(range(len(args))))
    _check_optimized(tidu.make_graph(vg, *args), args, prog)
    rng = np.random.default_rng(prog.seed)
    ts = [_random_like(a, rng) for a in args]
    n = len(args)
    jvp_graph = tidu.make_graph(lambda *xs: tidu.jvp(prog, tuple(xs[:n]), tuple(xs[n:])), *args, *ts)
    _check_optimized(jvp_graph, list(args) + ts, prog)
