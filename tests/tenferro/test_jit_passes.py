"""The tensor passes of compiled mode (tenferro.jit): algebraic identities, transposes
folded into contractions, and the pipeline (``optimize``/``PASSES``). Each pass is shown
on small graphs from ``tidu.make_graph``: the primitives before and after, and the values
before and after (equal to rounding), float64 and complex128 where the dtype matters.
Random programs (hypothesis) go through the whole pipeline. Contraction chains merged
into one planned einsum, intermediate layouts, sums of products and the gradient graphs
of an MPS energy are in test_jit_contraction_passes.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tenferro import _structural as _st
from tenferro._astype import convert_element_type_p
from tenferro.jit._identities import simplify_identities
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
    assert _prims(_identities(g)) == ["exp", "sub"]  # (+0) - y is not -y at y = +0: kept
    # (-0) - y is -y; a complex -0.0 (its imaginary part +0) is not a negative zero in both parts
    zero = complex(-0.0, -0.0) if np.dtype(dtype).kind == "c" else -0.0
    g = tidu.make_graph(lambda x: zero - tf.exp(x), x)
    assert _prims(g) == ["exp", "sub"]
    out = _identities(g)
    assert _prims(out) == ["exp", "neg"]
    _assert_same(g, out, [x])


def test_zero_minus_a_zero_keeps_the_sign_of_the_difference():
    """``0 - y`` was rewritten to ``-y``: at ``y = +0`` that is ``-0`` where the difference is
    ``+0``, so compiled ``1 / (0 - x)`` at ``x = 0`` gave ``-inf`` (eager, NumPy and ``jax.jit``:
    ``+inf``) and ``arctan2(0 - x, -1)`` gave ``-pi``. A constant mixing ``+0.0`` and ``-0.0`` was
    taken for one fill."""
    x = tf.asarray(np.array([0.0, 1.0, -0.0]))
    with np.errstate(divide="ignore"):
        want = 1.0 / (0.0 - np.array([0.0, 1.0, -0.0]))
        for f in (lambda x: 1.0 / (0.0 - x), lambda x: 1.0 / (tf.zeros(3) - x)):
            got = tf.jit(f)(x).numpy()
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))
    got = tf.jit(lambda x: tf.arctan2(tf.zeros(3) - x, -tf.ones(3)))(x).numpy()
    np.testing.assert_array_equal(got, np.arctan2(0.0 - np.array([0.0, 1.0, -0.0]), -1.0))
    mixed = tf.asarray(np.array([0.0, -0.0]))
    got = tf.jit(lambda y: mixed - y * 0.0)(tf.asarray(np.array([1.0, 1.0]))).numpy()
    assert list(np.signbit(got)) == [False, True]  # [0 - 0, -0 - 0] = [+0, -0]


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
    # a complex sum stays a sum: (inf - 2j) (3 + 0j) is inf + nan j where the sum is inf - 6j
    complex_ = np.dtype(dtype).kind == "c"
    assert _prims(out) == (["broadcast_in_dim", "sum", "exp"] if complex_ else ["mul", "exp"])
    _assert_same(g, out, [x])
    # summing only some of the broadcast axes keeps a broadcast for the others
    g = tidu.make_graph(lambda x: tf.exp(tf.sum(tf.broadcast_to(x, (4, 5, 3, 2)), axis=1)), x)
    out = _identities(g)
    assert _prims(out) == (["broadcast_in_dim", "sum", "exp"] if complex_ else ["mul", "broadcast_in_dim", "exp"])
    _assert_same(g, out, [x])
    # a sum over an axis the operand had is not a count
    g = tidu.make_graph(lambda x: tf.sum(tf.broadcast_to(x, (5, 3, 2)), axis=(0, 1)), x)
    assert _prims(_identities(g)) == ["broadcast_in_dim", "sum"]


def test_compiled_complex_sum_of_a_broadcast_with_an_infinite_part():
    """``tf.jit`` of broadcast-then-sum gave ``inf + nan j`` for ``inf - 2j`` (the rewrite into a
    product by the count ``3 + 0j``); NumPy's sum is ``inf - 6j``."""

    def f(a):
        return tf.sum(tf.broadcast_to(a, (3, 2)), axis=0)

    z = np.array([np.inf - 2j, 1 + 1j])
    np.testing.assert_array_equal(tf.jit(f)(tf.asarray(z)).numpy(), np.broadcast_to(z, (3, 2)).sum(axis=0))


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
