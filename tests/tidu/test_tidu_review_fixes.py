"""Fixes of a review of tidu against JAX: namedtuples, OrderedDict and defaultdict are pytree
nodes (and ``has_aux`` returns concrete values inside them); a Graph checks its arguments' avals;
outputs that are Python numbers; ``jacfwd`` of an integer output; item assignment on tracers;
``hessian(has_aux=True)``, NumPy ``argnums`` and ``checkpoint(policy=..., prevent_cse=...)``;
custom rules closing over a value ``tenferro.jit`` traces, under ``grad(jit(f))`` and its higher
orders. Expected values are closed forms (JAX's results where JAX is the oracle)."""

import collections
import dataclasses
import re
import typing

import numpy as np
import pytest

import tidu
from toy import mul, reduce_sum

tf = pytest.importorskip("tenferro")

P = collections.namedtuple("P", "w b")


class Q(typing.NamedTuple):
    a: typing.Any
    b: typing.Any


def _close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a.numpy() if hasattr(a, "numpy") else a), np.asarray(b), rtol=tol, atol=tol)


def _no_tracer(tree):
    for leaf in tidu.tree_leaves(tree):
        assert not isinstance(leaf, tidu.Tracer), f"a tracer came back: {leaf!r}"


# ---- 1. namedtuples, OrderedDict, defaultdict as pytree nodes ---------------------------------
def test_namedtuple_flattens_to_its_fields_and_rebuilds_the_same_type():
    leaves, td = tidu.tree_flatten(P(1, (2, 3)))
    assert leaves == [1, 2, 3]
    back = tidu.tree_unflatten(td, [4, 5, 6])
    assert type(back) is P and back == P(4, (5, 6))
    assert repr(td) == "PyTreeDef(P(w=*, b=(*, *)))"
    assert td != tidu.tree_structure((1, (2, 3)))  # a namedtuple is not a plain tuple
    assert tidu.tree_map(lambda x: 2 * x, Q(1, [2])) == Q(2, [4])

    class Sub(tuple):  # a tuple subclass that is no namedtuple stays a leaf, as in JAX
        pass

    assert tidu.tree_leaves(Sub((1, 2))) == [Sub((1, 2))]


def test_ordereddict_keeps_its_order_and_defaultdict_its_factory():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tidu.tree_flatten(od)
    assert leaves == [1, 2]
    back = tidu.tree_unflatten(td, [3, 4])
    assert type(back) is collections.OrderedDict and list(back.items()) == [("b", 3), ("a", 4)]
    assert td != tidu.tree_structure(collections.OrderedDict([("a", 2), ("b", 1)]))
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, td = tidu.tree_flatten(dd)
    assert leaves == [2, 1]  # keys sorted, as dict
    back = tidu.tree_unflatten(td, [5, 6])
    assert type(back) is collections.defaultdict and back.default_factory is list and back == {"a": 5, "b": 6}
    assert "OrderedDict" in repr(tidu.tree_structure(od)) and "defaultdict(list" in repr(td)


def test_grad_and_jvp_of_namedtuple_and_dict_subclass_arguments():
    x = tf.asarray([1.0, 2.0])
    g = tidu.grad(lambda p: tf.sum(p.w * p.b))(P(x, x * 3))
    assert type(g) is P
    _close(g.w, [3.0, 6.0])
    _close(g.b, [1.0, 2.0])
    od = collections.OrderedDict([("b", x), ("a", x * 2)])
    g = tidu.grad(lambda d: tf.sum(d["b"] * d["a"]))(od)
    assert type(g) is collections.OrderedDict and list(g) == ["b", "a"]
    _close(g["b"], [2.0, 4.0])
    dd = collections.defaultdict(list, {"b": x, "a": x * 2})
    g = tidu.grad(lambda d: tf.sum(d["b"] * d["a"]))(dd)
    assert type(g) is collections.defaultdict and g.default_factory is list
    out, t = tidu.jvp(lambda p: P(p.w * 2, p.b), (P(x, x),), (P(x, None),))
    assert type(out) is P and type(t) is P
    _close(t.w, [2.0, 4.0])
    _close(t.b, [0.0, 0.0])
    jac = tidu.jacrev(lambda x: P(x * 2, x))(x)
    assert type(jac) is P
    _close(jac.w, 2 * np.eye(2))


def test_vmap_and_jit_of_namedtuples_and_ordered_dicts():
    x = tf.asarray([1.0, 2.0])
    ys = tf.ones((3, 2))
    out = tidu.vmap(lambda p: P(p.w * p.b, p.b), in_axes=(P(0, None),))(P(ys, x))
    assert type(out) is P
    _close(out.w, np.tile([1.0, 2.0], (3, 1)))
    od = collections.OrderedDict(b=x, a=ys)
    _close(tidu.vmap(lambda d: d["a"] * d["b"], in_axes=(collections.OrderedDict(b=None, a=0),))(od), out.w)
    swapped = tf.jit(lambda p: P(p.b, p.w))(P(x, x * 2))
    assert type(swapped) is P
    _close(swapped.w, [2.0, 4.0])


def test_has_aux_returns_concrete_values_inside_namedtuples_and_dict_subclasses():
    x = tf.asarray([1.0, 2.0])

    def f(x):
        aux = P(x * 3, collections.OrderedDict(s=tf.sum(x), d=collections.defaultdict(int, {"k": x})))
        return tf.sum(x * x), aux

    def check(aux):
        _no_tracer(aux)
        assert type(aux) is P and type(aux.b) is collections.OrderedDict
        _close(aux.w + 1, [4.0, 7.0])  # it was a finished tracer: UnexpectedTracerError
        _close(aux.b["s"], 3.0)

    g, aux = tidu.grad(f, has_aux=True)(x)
    _close(g, [2.0, 4.0])
    check(aux)
    (_, aux), _ = tidu.value_and_grad(f, has_aux=True)(x)
    check(aux)
    check(tidu.jvp(f, (x,), (x,), has_aux=True)[2])
    check(tidu.vjp(f, x, has_aux=True)[2])
    check(tidu.linearize(f, x, has_aux=True)[2])
    check(tidu.jacfwd(f, has_aux=True)(x)[1])
    check(tidu.jacrev(f, has_aux=True)(x)[1])


def test_has_aux_lowers_dataclass_fields_and_refuses_other_objects_holding_tracers():
    @dataclasses.dataclass(frozen=True)
    class D:
        a: typing.Any
        n: int = 3

    class Holder:
        def __init__(self, v):
            self.v = v

    x = tf.asarray([1.0, 2.0])
    _, aux = tidu.grad(lambda x: (tf.sum(x * x), D(x * 2)), has_aux=True)(x)
    assert type(aux) is D and aux.n == 3 and not isinstance(aux.a, tidu.Tracer)
    _close(aux.a, [2.0, 4.0])
    _, aux = tidu.grad(lambda x: (tf.sum(x * x), Holder(3)), has_aux=True)(x)
    assert aux.v == 3  # nothing traced inside: returned as it is
    with pytest.raises(tidu.UnexpectedTracerError, match="object of type .*Holder whose attribute 'v'"):
        tidu.grad(lambda x: (tf.sum(x * x), Holder(x * 2)), has_aux=True)(x)


# ---- 4. Graph.__call__ checks avals ----------------------------------------------------------
def test_graph_call_checks_shapes_and_dtypes():
    g = tidu.make_graph(lambda a: tf.mean(a), tf.asarray([1.0, 2.0]))
    _close(g(tf.asarray([1.0, 3.0])), 2.0)
    for bad, got in [
        (tf.asarray([1.0, 2.0, 3.0, 4.0]), "f64[4]"),  # returned 5.0 (the baked 1/2)
        (tf.asarray([1.0 + 1j, 2.0]), "c128[2]"),  # returned a complex value
        (tf.asarray([1, 2]), "i64[2]"),
        (tf.asarray(1.0), "f64[]"),
    ]:
        with pytest.raises(
            tidu.AvalMismatchError, match=rf"graph input 0 expects f64\[2\], got {re.escape(got)}"
        ) as info:
            g(bad)
        assert isinstance(info.value, (ValueError)) and isinstance(info.value, TypeError)
        assert isinstance(info.value, tidu.TiduError)
    with pytest.raises(tidu.AvalMismatchError, match="got int 3, which is not a value of a registered type"):
        g(3)
    gg = tidu.make_graph(lambda a: tf.sum(tf.sin(a) * tf.asarray([1.0, 2.0])), tf.asarray([0.7, -0.3]))
    with pytest.raises(tidu.AvalMismatchError, match=r"expects f64\[2\], got f64\[3\]"):
        gg(tf.asarray([1.0, 2.0, 3.0]))  # NumPy's broadcasting ValueError came through
    two = tidu.make_graph(lambda a, s: a * s, tf.asarray([1.0, 2.0]), tf.asarray(2.0))
    _close(two(tf.asarray([1.0, 2.0]), 3.0), [3.0, 6.0])  # a Python float: the scalar promotion
    _close(tidu.grad(lambda x: tf.sum(two(x, 3.0)))(tf.asarray([1.0, 2.0])), [3.0, 3.0])
    _close(tidu.vmap(lambda x: two(x, 3.0))(tf.ones((2, 2))), 3 * np.ones((2, 2)))


def test_flat_graph_call_checks_the_argument_count():
    _, lin = tidu.linearize(lambda x: tf.sin(x), tf.asarray([0.1, 0.2]))
    graph = lin.graph
    with pytest.raises(tidu.TreeStructureError, match="graph expects 1 arguments, got 2"):
        graph(tf.asarray([1.0, 1.0]), tf.asarray([1.0, 1.0]))
    with pytest.raises(tidu.AvalMismatchError, match=r"expects f64\[2\], got f64\[3\]"):
        graph(tf.asarray([1.0, 1.0, 1.0]))


# ---- 5. outputs that are Python numbers -----------------------------------------------------
def test_python_number_outputs_are_constants_as_in_jax():
    x = tf.asarray([0.7, -0.3])
    _close(tidu.grad(lambda x: 0.0)(tf.asarray(0.7)), 0.0)  # JAX: 0.0
    g = tidu.grad(lambda x: 0.0)(tf.asarray([1.0, 2.0], dtype="float32"))
    assert g.dtype == tf.float32 and g.shape == (2,)
    v, g = tidu.value_and_grad(lambda x: 2.5)(x)
    _close(v, 2.5)
    _close(g, [0.0, 0.0])
    out, t = tidu.jvp(lambda x: (tf.sin(x), 3, 2.0), (x,), (x,))
    assert out[1] == 3 and t[1] is None  # an int: no tangent (JAX: float0), as an integer tensor
    _close(out[2], 2.0)
    _close(t[2], 0.0)
    _close(t[0], np.cos([0.7, -0.3]) * [0.7, -0.3])
    out, vjp_fn = tidu.vjp(lambda x: (tf.sin(x), 3.0), x)
    _close(vjp_fn((tf.ones((2,)), 1.0))[0], np.cos([0.7, -0.3]))
    _, lin = tidu.linearize(lambda x: (x, 3, 2.0), x)
    t = lin(x)
    assert t[1] is None
    _close(t[2], 0.0)
    jr = tidu.jacrev(lambda x: (tf.sin(x), 3.0))(x)
    jf = tidu.jacfwd(lambda x: (tf.sin(x), 3.0))(x)
    for j in (jr, jf):
        _close(j[0], np.diag(np.cos([0.7, -0.3])))
        _close(j[1], [0.0, 0.0])
    _close(tidu.hessian(lambda x: 1.0)(x), np.zeros((2, 2)))


def test_integer_python_outputs_are_not_differentiable_and_the_error_names_the_output():
    x = tf.asarray([0.7, -0.3])
    for transform in (tidu.grad, tidu.jacrev, tidu.jacfwd):
        with pytest.raises(tidu.NonDifferentiableError, match="the output 3 of type int is not differentiable"):
            transform(lambda x: 3)(x)
    with pytest.raises(tidu.NonDifferentiableError, match="the output True of type bool"):
        tidu.grad(lambda x: True)(x)


def test_checkpoint_static_outputs_under_forward_mode():
    x = tf.asarray([0.7, -0.3, 1.2])
    c = tidu.checkpoint(lambda x: (tf.sin(x), 3))
    out, t = tidu.jvp(c, (x,), (x,))
    assert out[1] == 3 and t[1] is None
    _close(t[0], np.cos(x.numpy()) * x.numpy())
    t = tidu.linearize(c, x)[1](x)
    assert t[1] is None


# ---- 6. jacfwd of an integer output ---------------------------------------------------------
@pytest.mark.parametrize("shape", [(2,), ()])
def test_jacfwd_of_an_integer_output_raises_what_jacrev_raises(shape):
    x = tf.asarray(np.full(shape, 1.5))
    f = lambda x: x.astype(tf.int64)  # noqa: E731
    with pytest.raises(tidu.NonDifferentiableError, match="jacrev: output of type i64"):
        tidu.jacrev(f)(x)
    with pytest.raises(tidu.NonDifferentiableError, match="jacfwd: output of type i64"):
        tidu.jacfwd(f)(x)  # was: UnregisteredTypeError about NoneType


# ---- 7. item assignment on tracers ------------------------------------------------------------
def test_item_assignment_on_a_tracer_is_tenferros_typed_error():
    x = tf.asarray([0.7, -0.3])

    def f(a):
        b = a * 1.0
        b[0] = 5.0
        return tf.sum(b)

    for run in (lambda: f(x), lambda: tidu.grad(f)(x), lambda: tidu.vmap(f)(tf.ones((2, 2))), lambda: tf.jit(f)(x)):
        with pytest.raises(tf.TenferroTypeError, match=r"tensors are immutable values: t\[...\] = v is not supported"):
            run()


def test_item_assignment_on_a_tracer_of_a_type_without_it_is_typed():
    def f(a):
        b = mul(a, np.array(1.0))
        b[0] = 5.0
        return reduce_sum(b)

    with pytest.raises(tidu.InvalidArgumentError, match="item assignment on a traced value"):
        tidu.grad(f)(np.array([0.7, -0.3]))


# ---- 8. hessian(has_aux), NumPy argnums, checkpoint's keywords -------------------------------
def test_hessian_has_aux():
    x, y = tf.asarray([0.7, -0.3]), tf.asarray(1.5)
    f = lambda x, y: (tf.sum(tf.sin(x) * y), {"s": tf.sum(x)})  # noqa: E731
    h, aux = tidu.hessian(f, has_aux=True)(x, y)
    _close(h, np.diag(-np.sin([0.7, -0.3]) * 1.5))
    _no_tracer(aux)
    _close(aux["s"], 0.4)
    (hxx, hxy), (hyx, hyy) = tidu.hessian(f, argnums=(0, 1), has_aux=True)(x, y)[0]
    _close(hxy, np.cos([0.7, -0.3]))
    _close(hyy, 0.0)


def test_argnums_accepts_numpy_integers_but_not_bools():
    x, y = tf.asarray([0.7, -0.3]), tf.asarray(1.5)
    f = lambda a, b: tf.sum(a * b)  # noqa: E731
    _close(tidu.grad(f, argnums=np.int64(1))(x, y), 0.4)  # bare, as for an int
    gx, gy = tidu.grad(f, argnums=(np.int32(0), 1))(x, y)
    _close(gx, [1.5, 1.5])
    _close(tidu.jacrev(lambda a, b: a * b, argnums=np.int64(1))(x, y), [0.7, -0.3])
    _close(tidu.jacfwd(lambda a, b: a * b, argnums=np.int64(1))(x, y), [0.7, -0.3])
    for bad in (True, np.True_, 1.0, (0, True)):
        with pytest.raises(tidu.InvalidArgumentError, match="argnums must be an int or a tuple of ints"):
            tidu.grad(f, argnums=bad)(x, y)


def test_checkpoint_takes_prevent_cse_and_policy_none_and_refuses_policies():
    x = tf.asarray([0.7, -0.3])
    for kwargs in ({"policy": None}, {"prevent_cse": False}, {"prevent_cse": True, "policy": None}):
        c = tidu.checkpoint(tf.sin, **kwargs)
        _close(tidu.grad(lambda x: tf.sum(c(x)))(x), np.cos([0.7, -0.3]))
    with pytest.raises(tidu.InvalidArgumentError, match="policy=.* is not supported; saving policies are not"):
        tidu.checkpoint(tf.sin, policy=lambda *args, **kwargs: True)
    with pytest.raises(tidu.InvalidArgumentError, match="prevent_cse must be a bool"):
        tidu.checkpoint(tf.sin, prevent_cse="no")


# ---- 3 and 2. custom rules closing over a value tenferro.jit traces ----------------------------
X = np.array([0.7, -0.3])
W = 1.7


def _vjp_fn(w, selfcall=True):
    @tidu.custom_vjp
    def f(x):
        return w * tf.sin(x)

    f.defvjp(lambda x: (f(x) if selfcall else w * tf.sin(x), x), lambda x, g: (g * w * tf.cos(x),))
    return f


def _jvp_fn(w, selfcall=True):
    @tidu.custom_jvp
    def f(x):
        return w * tf.sin(x)

    f.defjvp(lambda p, t: (f(p[0]) if selfcall else w * tf.sin(p[0]), w * tf.cos(p[0]) * t[0]))
    return f


@pytest.mark.parametrize("make", [_vjp_fn, _jvp_fn])
def test_grad_of_jit_when_the_rules_close_over_a_jit_argument(make):
    w, x = tf.asarray(W), tf.asarray(X)
    loss = lambda w, x: tf.sum(make(w)(x))  # noqa: E731
    want = W * np.cos(X)
    _close(tidu.grad(tf.jit(loss), argnums=1)(w, x), want)  # bwd closing over w failed (custom_vjp)
    _close(tidu.jacrev(tf.jit(lambda w, x: make(w)(x)), argnums=1)(w, x), np.diag(want))
    _close(tidu.vjp(lambda x: tf.jit(lambda w, x: make(w)(x))(w, x), x)[1](tf.ones((2,)))[0], want)
    _close(tf.jit(tidu.grad(loss, argnums=1))(w, x), want)


@pytest.mark.parametrize("make", [_vjp_fn, _jvp_fn])
def test_second_order_of_jit_when_the_rule_calls_its_own_function(make):
    w, x = tf.asarray(W), tf.asarray(X)
    loss = lambda w, x: tf.sum(make(w)(x))  # noqa: E731
    want = -W * np.sin(X)
    gg = tidu.grad(lambda x: tf.sum(tidu.grad(tf.jit(loss), argnums=1)(w, x)))(x)
    _close(gg, want)  # the nested call's rule ran as written, closing over a finished tracer
    if make is _jvp_fn:
        _close(tidu.hessian(tf.jit(loss), argnums=1)(w, x), np.diag(want))
        _close(tf.jit(tidu.hessian(loss, argnums=1))(w, x), np.diag(want))
        third = tidu.grad(lambda x: tf.sum(tidu.grad(lambda x: tf.sum(tidu.grad(tf.jit(loss), argnums=1)(w, x)))(x)))
        _close(third(x), -W * np.cos(X))


def test_a_rule_calling_its_function_at_other_shapes_runs_as_written_the_documented_limit():
    """The nested call at other avals keeps no traced rule: at second order of jit(f) it runs as
    written and its closure has finished (a typed error); jit(hessian(f)) is the alternative."""
    w, x = tf.asarray(W), tf.asarray(X)

    def loss(w, x):
        @tidu.custom_jvp
        def f(x):
            return w * tf.sin(x)

        f.defjvp(lambda p, t: (f(p[0]), w * tf.cos(p[0]) * t[0] + 0.0 * tf.sum(f(p[0][:1]))))
        return tf.sum(f(x))

    want = np.diag(-W * np.sin(X))
    _close(tidu.hessian(loss, argnums=1)(w, x), want)
    _close(tf.jit(tidu.hessian(loss, argnums=1))(w, x), want)
    _close(tidu.grad(tf.jit(loss), argnums=1)(w, x), W * np.cos(X))  # first order: fine
    with pytest.raises(tidu.CustomRuleError, match="rule of 'f' uses a traced value of a transformation that has"):
        tidu.hessian(tf.jit(loss), argnums=1)(w, x)
