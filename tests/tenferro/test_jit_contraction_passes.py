"""The contraction passes of compiled mode (tenferro.jit): contraction chains merged into
one planned einsum (``merge_contractions``), the layouts of intermediates
(``choose_layouts``) and sums of outer products made one contraction
(``fuse_sums_of_products``), on small graphs from ``tidu.make_graph`` (the primitives
before and after, the values before and after equal to rounding, float64 and complex128
where the dtype matters) and on gradient graphs of an MPS energy, where after the whole
pipeline no transpose feeds a contraction. The helpers are test_jit_passes.py's."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4
import tidu
from tenferro.einsum._parse import Spec
from tenferro.einsum._plan import get_plan
from tenferro.jit._contractions import MAX_OPERANDS, compose_paths, contraction_cost, merge_contractions, merge_specs
from tenferro.jit._einsum_specs import dot_general_spec, plan_for
from tenferro.jit._layouts import choose_layouts, copied_elements
from tenferro.jit._sum_products import fuse_sums_of_products
from tenferro.einsum._ad import einsum_p
from tenferro.jit._optimize import PASSES, optimize
from tidu.passes import dce
from test_jit_passes import CONTRACTIONS, DTYPES, _assert_same, _feeding_contractions, _np, _prims, _rand


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
