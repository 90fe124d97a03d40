"""Issue 21, the structured layer: it refuses what the dense path refuses, the same way.

* non-finite input to structured linear algebra raises tenferro's NonFiniteError (also
  for traced values and under ``tenferro.jit``), integer matrices its LinalgDTypeError;
* axis arguments are checked as the dense functions check them (same class, message);
* the shape types take integer extents only (TypeError family for non-integers,
  ValueError family for negatives, IndexError family for indices out of range);
* the fallback policy is a setting of the current context (``test_structured_fallback_context.py``);
* operands that are not tensors, arrays or numbers are typed errors naming them.

Each test fails on the code before the fix.
"""

from __future__ import annotations


import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all.structured import (
    BlockDiagonal,
    DensifyError,
    DiagonalTensor,
    JaggedShape,
    Nested,
    ShapeCombineError,
    StructuredError,
    StructuredIndexError,
    StructuredShapeError,
    StructuredTensor,
    StructuredTypeError,
    TiledShape,
    combine,
    dispatch,
    fallback_policy,
    get_fallback_policy,
    set_fallback_policy,
)
from tenferro import Shape

L = t4a.linalg
la = tf.linalg


def diag(*xs, dtype=float):
    return DiagonalTensor(tf.asarray(np.array(xs, dtype=dtype)))


def blocks(bad=None):
    """A 3 x 3 block-diagonal; ``bad`` goes into its second (1 x 1) block."""
    b1 = np.array([[2.0, 0.5], [0.5, 3.0]])
    b2 = np.array([[4.0 if bad is None else bad]])
    return BlockDiagonal([tf.asarray(b1), tf.asarray(b2)])


@pytest.fixture(autouse=True)
def _default_policy():
    yield
    set_fallback_policy("count")
    t4a.reset_fallback_stats()


# --- 1. non-finite input to structured linear algebra ----------------------------------------------
LINALG = {
    "svd": lambda a: L.svd(a),
    "qr": lambda a: L.qr(a),
    "eigh": lambda a: L.eigh(a),
    "inv": lambda a: L.inv(a),
    "det": lambda a: L.det(a),
    "slogdet": lambda a: L.slogdet(a),
    "norm": lambda a: L.norm(a),
    "expm": lambda a: L.expm(a),
    "solve": lambda a: L.solve(a, tf.ones((3,))),
    "svd-values": lambda a: L.svd(a, compute_uv=False),
    "norm-ord2": lambda a: L.norm(a, ord=2),
    "tf.linalg.det": lambda a: la.det(a),
    "tf.linalg.inv": lambda a: la.inv(a),
    "tf.linalg.svd": lambda a: la.svd(a),
    "tf.linalg.solve": lambda a: la.solve(a, tf.ones((3,))),
}
BAD = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}
STRUCTURES = {"diagonal": lambda bad: diag(1.0, bad, 2.0), "block": blocks}


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("kind", STRUCTURES)
@pytest.mark.parametrize("name", LINALG)
def test_linalg_refuses_non_finite_structured_input_as_dense(name, kind, bad):
    a = STRUCTURES[kind](BAD[bad])
    fn = LINALG[name]
    with pytest.raises(la.NonFiniteError) as dense:
        fn(a.to_dense())
    with pytest.raises(la.NonFiniteError) as structured:
        fn(a)
    op = name.split("-")[0].split(".")[-1]
    param = "x" if op == "norm" else "a"
    where = "the diagonal" if kind == "diagonal" else "block 1"
    msg = str(structured.value)
    assert msg.startswith(f"{op}: the input {param} ({where} of {a._describe()}) of shape ")
    assert msg.endswith("contains NaN or inf") and str(dense.value).endswith("contains NaN or inf")


@pytest.mark.parametrize("kind", STRUCTURES)
def test_solve_refuses_a_non_finite_right_hand_side_beside_a_structure(kind):
    a = STRUCTURES[kind](5.0)
    rhs = tf.asarray(np.array([1.0, np.nan, 2.0]))
    with pytest.raises(la.NonFiniteError, match=r"^solve: the input b of shape \(3,\) contains NaN or inf$"):
        L.solve(a, rhs)
    with pytest.raises(la.NonFiniteError, match=r"^solve: the input b \(the diagonal of DiagonalTensor"):
        L.solve(a, diag(1.0, np.inf, 1.0))


def test_non_finite_traced_values_are_checked_under_grad_and_jvp():
    bad = tf.asarray(np.array([1.0, np.nan, 2.0]))
    with pytest.raises(la.NonFiniteError, match="det: the input a"):
        tidu.grad(lambda x: L.det(DiagonalTensor(x)))(bad)
    with pytest.raises(la.NonFiniteError, match="inv: the input a"):
        tidu.grad(lambda d: tf.sum(L.inv(d).diag))(DiagonalTensor(bad))
    with pytest.raises(la.NonFiniteError, match=r"expm: the input a \(block 1"):
        tidu.jvp(lambda b: tf.sum(L.expm(b).blocks[1]), (blocks(np.inf),), (blocks(1.0),))
    g = tidu.grad(lambda x: L.det(DiagonalTensor(x)))(tf.asarray(np.array([2.0, 3.0])))
    np.testing.assert_allclose(np.asarray(g), [3.0, 2.0])  # finite values pass


def test_non_finite_check_is_staged_under_jit():
    f = tf.jit(lambda d: L.inv(d).diag)
    np.testing.assert_allclose(np.asarray(f(diag(2.0, 4.0, 5.0))), [0.5, 0.25, 0.2])
    with pytest.raises(la.NonFiniteError, match=r"inv: the input a \(the diagonal"):
        f(diag(2.0, np.nan, 5.0))  # same signature: the compiled program checks it
    g = tf.jit(lambda b: L.det(b))
    np.testing.assert_allclose(float(np.asarray(g(blocks()))), 4.0 * (6.0 - 0.25))
    with pytest.raises(la.NonFiniteError, match=r"det: the input a \(block 1"):
        g(blocks(np.nan))


@pytest.mark.parametrize("name", ["svd", "qr", "eigh", "inv", "det", "slogdet", "expm", "solve"])
def test_linalg_refuses_integer_structures_as_dense(name):
    a = diag(1, 2, 3, dtype=np.int64)
    with pytest.raises(la.LinalgDTypeError):
        LINALG[name](a.to_dense())
    with pytest.raises(la.LinalgDTypeError, match=f"{name}: a must be float32/64 or complex64/128, got dtype int64"):
        LINALG[name](a)


# --- 2. axis arguments ---------------------------------------------------------------------------
AXIS_CALLS = {
    "sum-repeated": lambda x: tf.sum(x, axis=(0, 0)),
    "sum-repeated-negative": lambda x: tf.sum(x, axis=(-1, x.ndim - 1)),
    "sum-out-of-bounds": lambda x: tf.sum(x, axis=5),
    "sum-bool": lambda x: tf.sum(x, axis=True),
    "sum-float": lambda x: tf.sum(x, axis=1.5),
    "method-sum-repeated": lambda x: x.sum(axis=(0, 0)),
    "method-sum-all-repeated": lambda x: x.sum((1, 1, 0)),
    "transpose-repeated": lambda x: tf.transpose(x, (0, 0)),
    "transpose-out-of-bounds": lambda x: tf.transpose(x, (0, 5)),
    "transpose-float": lambda x: tf.transpose(x, (1.0, 0)),
    "transpose-str": lambda x: tf.transpose(x, "ab"),
    "method-transpose-repeated": lambda x: x.transpose(1, 1),
    "trace-same-axes": lambda x: tf.trace(x, axis1=0, axis2=0),
    "trace-out-of-bounds": lambda x: tf.trace(x, axis1=0, axis2=5),
    "trace-float-offset": lambda x: tf.trace(x, offset=1.5),
    "method-trace-same-axes": lambda x: x.trace(0, 1, 1),
    "norm-repeated": lambda x: L.norm(x, axis=(0, 0)),
    "norm-out-of-bounds": lambda x: L.norm(x, axis=3),
}
AXIS_OPERANDS = {
    "diagonal": lambda: diag(1.0, 2.0, 3.0),
    "block": blocks,
    "diagonal-3": lambda: DiagonalTensor(tf.asarray([1.0, 2.0]), ndim=3),
}


@pytest.mark.parametrize("kind", AXIS_OPERANDS)
@pytest.mark.parametrize("call", AXIS_CALLS)
def test_axis_arguments_are_checked_as_dense(call, kind):
    x = AXIS_OPERANDS[kind]()
    fn = AXIS_CALLS[call]
    with pytest.raises(tf.TenferroError) as dense:
        fn(x.to_dense())  # method forms are the dense tensor's methods there
    with t4a.fallback_policy("error"):  # checked before any kernel or fallback
        with pytest.raises(type(dense.value)) as structured:
            fn(x)
    assert str(structured.value) == str(dense.value)


def test_valid_axes_still_give_the_dense_values():
    x = diag(1.0, 2.0, 3.0)
    for axis in ((1, -2), (-1,), 0, None):
        np.testing.assert_allclose(np.asarray(tf.sum(x, axis=axis)), np.asarray(tf.sum(x.to_dense(), axis=axis)))
    assert x.transpose(1, 0) is x and np.isclose(float(np.asarray(x.trace(0, 1, 0))), 6.0)
    np.testing.assert_allclose(np.asarray(x.trace(1)), np.asarray(tf.trace(x.to_dense(), 1)))


# --- 3. integer extents of the shape types ---------------------------------------------------------
NON_INT = {"float": 1.5, "whole-float": 2.0, "bool": True, "str": "2", "none": None, "numpy-float": np.float64(2.0)}
SHAPE_CALLS = {
    "TiledShape-extent": lambda v: TiledShape([v], [2]),
    "TiledShape-tile_shape": lambda v: TiledShape([1, 2], [2]).tile_shape(v, 0),
    "TiledShape-offsets": lambda v: TiledShape([1, 2], [2]).offsets(v),
    "JaggedShape-origin": lambda v: JaggedShape([Shape(2)], origin=v),
    "JaggedShape-chip": lambda v: JaggedShape([Shape(2), Shape(3)]).chip(v),
    "JaggedShape-slice": lambda v: JaggedShape([Shape(2), Shape(3)]).slice(v, 2),
    "JaggedShape-set_origin": lambda v: JaggedShape([Shape(2)]).set_origin(v),
    "Nested-layer": lambda v: Nested([v], Shape(2)),
    "Nested-rank_layer": lambda v: Nested([1, 1], Shape(2, 3)).rank_layer(v),
    "Nested-elements_in_layer": lambda v: Nested([1, 1], Shape(2, 3)).elements_in_layer(v),
    "Nested-layer_of": lambda v: Nested([1, 1], Shape(2, 3)).layer_of(v),
    "Nested-chip": lambda v: Nested([1, 1], Shape(2, 3)).chip(v),
    "Nested-slice": lambda v: Nested([1, 1], Shape(2, 3)).slice(v),
    "DiagonalTensor-ndim": lambda v: DiagonalTensor(tf.ones((2,)), ndim=v),
}


@pytest.mark.parametrize("value", NON_INT)
@pytest.mark.parametrize("call", SHAPE_CALLS)
def test_shape_integers_refuse_non_integers(call, value):
    with pytest.raises(StructuredTypeError, match="must be an integer") as info:
        SHAPE_CALLS[call](NON_INT[value])
    assert isinstance(info.value, TypeError)


def test_the_issue_example_and_negative_extents():
    with pytest.raises(
        StructuredTypeError,
        match=r"TiledShape: tile extent 0 of mode 0 must be an integer, "
        r"got 1.5 of type float",
    ):
        TiledShape([1.5], [2])
    with pytest.raises(StructuredTypeError, match="the tiling of mode 0 must be a sequence of ints"):
        TiledShape("12")  # was TiledShape([1, 2])
    for call in (lambda: TiledShape([2], [-1]), lambda: Nested([-1, 2], Shape(2))):
        with pytest.raises(StructuredShapeError, match="must be >= 0, got -1") as info:
            call()
        assert isinstance(info.value, ValueError) and not isinstance(info.value, TypeError)
    assert TiledShape([np.int64(2)], (np.int32(3),)) == TiledShape([2], [3])  # NumPy integers are integers
    assert JaggedShape([Shape(2)], origin=np.int64(4)).origin == 4


def test_wrong_nesting_and_wrong_kinds_are_typed():
    for call in (
        lambda: JaggedShape([1, 2]),
        lambda: JaggedShape(5),
        lambda: Nested(2, Shape(2)),
        lambda: Nested([1], [2]),
        lambda: combine("i->i", "ab"),
        lambda: combine(3, Shape(2)),
    ):
        with pytest.raises(StructuredTypeError):
            call()
    with pytest.raises(StructuredShapeError, match="same rank"):
        JaggedShape([[Shape(2)], Shape(2)])
    with pytest.raises(ShapeCombineError, match="exactly one explicit output"):
        combine("i->i->i", Shape(2))
    assert combine("ij->ji", (2, 3)) == Shape(3, 2)  # a tuple of extents is a Shape, as in Nested


def test_indices_out_of_range_are_index_errors():
    calls = (
        lambda: TiledShape([1, 2], [2]).offsets(2),
        lambda: Nested([1, 1], Shape(2, 3)).rank_layer(2),
        lambda: Nested([1, 1], Shape(2, 3)).elements_in_layer(-3),
        lambda: Nested([1, 1], Shape(2, 3)).layer_of(2),
        lambda: TiledShape([1, 2], [2]).tile_shape(2, 0),
        lambda: JaggedShape([Shape(2)]).chip(1),
    )
    for call in calls:
        with pytest.raises(StructuredIndexError) as info:
            call()
        assert isinstance(info.value, IndexError) and isinstance(info.value, StructuredShapeError)
    n = Nested([1, 2], Shape(2, 3, 4))
    assert (n.rank_layer(-1), n.elements_in_layer(-1), n.layer_of(-1)) == (2, 24, 1)  # Python's negative indices


# --- 5. operands and arguments of the wrong type ----------------------------------------------------
BAD_OPERANDS = {"str": "abc", "none": None, "object": object(), "dict": {1: 2}}
BINARY = {
    "mul": lambda s, z: s * z,
    "rmul": lambda s, z: z * s,
    "add": lambda s, z: s + z,
    "radd": lambda s, z: z + s,
    "sub": lambda s, z: s - z,
    "rsub": lambda s, z: z - s,
    "div": lambda s, z: s / z,
    "rdiv": lambda s, z: z / s,
    "matmul": lambda s, z: s @ z,
    "rmatmul": lambda s, z: z @ s,
    "t4a.matmul": lambda s, z: t4a.matmul(s, z),
    "einsum": lambda s, z: t4a.einsum("ij,jk->ik", s, z),
    "solve": lambda s, z: L.solve(s, z),
    "tf.multiply": lambda s, z: tf.multiply(s, z),
}


@pytest.mark.parametrize("bad", BAD_OPERANDS)
@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("kind", ["diagonal", "block"])
def test_operands_of_the_wrong_type_are_typed_errors_naming_them(kind, op, bad):
    s = diag(1.0, 2.0, 3.0) if kind == "diagonal" else blocks()
    value = BAD_OPERANDS[bad]
    with pytest.raises(StructuredTypeError, match=rf"operand \d is .* of type {type(value).__name__}; expected"):
        BINARY[op](s, value)


def test_lists_and_arrays_beside_a_structure_are_tensors():
    d = diag(1.0, 2.0)
    np.testing.assert_allclose(np.asarray(d @ [[1.0, 2.0], [3.0, 4.0]]), [[1.0, 2.0], [6.0, 8.0]])
    np.testing.assert_allclose(np.asarray(blocks() @ [1.0, 1.0, 1.0]), [2.5, 3.5, 4.0])
    np.testing.assert_allclose(np.asarray(t4a.to_dense([1.0, 2.0])), [1.0, 2.0])


def test_other_malformed_calls_are_typed():
    d = diag(1.0, 2.0)
    for call, match in [
        (lambda: t4a.to_dense("abc"), "to_dense: operand 0 is 'abc'"),
        (lambda: StructuredTensor(), "abstract base"),
        (lambda: dispatch(["sum"], d), "unknown operation"),
        (
            lambda: dispatch("sum", d, foo=1),
            r"sum: got an unexpected keyword argument 'foo'; expected "
            r"sum\(x, axis=None, keepdims=False\)",
        ),
        (lambda: dispatch("matmul", d), "missing a required argument"),
        (lambda: t4a.einsum("ij->", d, foo=1), "unexpected keyword argument 'foo'"),
        (lambda: set_fallback_policy(None), "fallback policy must be one of"),
        (lambda: fallback_policy(["error"]).__enter__(), "fallback policy must be one of"),
    ]:
        with pytest.raises(StructuredTypeError, match=match):
            call()
    with pytest.raises(tf.EinsumSubscriptError, match="invalid character '1'"):
        t4a.einsum("i1->", d)  # was summed as if it read "ii->"
    with pytest.raises(
        tf.EinsumSubscriptError,
        match=r"output label 'k' does not appear in any input term\n"
        r"    ij->k",
    ):
        t4a.einsum("ij->k", d)


def test_methods_take_the_dense_methods_arguments():
    d, b = diag(1.0, 2.0, 3.0), blocks()
    for x in (d, b):
        np.testing.assert_allclose(np.asarray(x.trace(1)), np.asarray(x.to_dense().trace(1)))
        np.testing.assert_allclose(np.asarray(x.transpose(1, 0).to_dense()), np.asarray(x.to_dense().T))
    assert issubclass(StructuredIndexError, StructuredError)


def test_map_leaves_and_flags_are_checked():
    d, b = diag(1.0, 2.0), blocks()
    with pytest.raises(StructuredShapeError, match=r"fn must keep leaf shapes; the diagonal of .* has shape \(2,\)"):
        d.map_leaves(lambda leaf: tf.ones((7,)))  # was a DiagonalTensor of n=7
    with pytest.raises(StructuredShapeError, match="block 0 of BlockDiagonal"):
        b.map_leaves(lambda leaf: tf.ones((1, 2)))
    with pytest.raises(StructuredTypeError, match="must be a callable"):
        b.map_leaves(5)
    assert isinstance(d.map_leaves(tf.negative), DiagonalTensor)
    for shape in (JaggedShape(Shape(1, 2)), TiledShape([1], [2]), Nested([1, 1], Shape(1, 2))):
        with pytest.raises(StructuredTypeError, match="absolute must be True or False"):
            shape.indices("no")  # was read as True
        assert list(shape.indices(np.bool_(False))) == [(0, 0), (0, 1)]


# --- 6. the second sweep: singular derivatives, operators, policy values, nested indices -------------------
def _dense_of(x):
    return np.asarray(x.to_dense() if isinstance(x, StructuredTensor) else x)


@pytest.mark.parametrize("via", ["t4a", "tf"])
def test_slogdet_derivative_at_a_singular_diagonal_raises_as_dense(via):
    slogdet = L.slogdet if via == "t4a" else la.slogdet
    d = diag(1.0, 0.0)
    sign, logabs = slogdet(d)  # the value is still (0, -inf), as dense
    assert float(sign) == 0.0 and float(logabs) == -np.inf
    with pytest.raises(la.SingularMatrixError) as dense:
        tidu.grad(lambda a: la.slogdet(a)[1])(d.to_dense())
    with pytest.raises(
        la.SingularMatrixError,
        match=r"^slogdet: the derivative of slogdet at a singular matrix a "
        r"of shape \(2, 2\) is undefined",
    ):
        tidu.grad(lambda a: slogdet(a)[1])(d)  # was DiagonalTensor(diag=[1., nan])
    assert "differentiate det" in str(dense.value)
    with pytest.raises(la.SingularMatrixError, match="derivative of slogdet"):
        tidu.jvp(lambda a: slogdet(a), (d,), (diag(1.0, 1.0),))  # was (-inf, nan)
    with pytest.raises(la.SingularMatrixError, match="derivative of slogdet"):
        tidu.grad(lambda a: slogdet(a)[0])(d)  # the sign's derivative too, as dense
    with pytest.raises(la.SingularMatrixError, match="derivative of slogdet"):
        tidu.grad(lambda a: slogdet(a)[1])(diag(1.0, 1e-310))  # 1/d overflows: no finite derivative
    with pytest.raises(la.SingularMatrixError):  # block-diagonal: block by block, as dense
        tidu.grad(lambda b: slogdet(b)[1])(BlockDiagonal([tf.eye(2), tf.zeros((1, 1))]))


def test_slogdet_derivatives_of_a_regular_diagonal_match_dense():
    for d, t in (
        (diag(2.0, -3.0), diag(0.5, 1.0)),
        (diag(2.0 + 1.0j, -3.0 + 0.5j, dtype=complex), diag(0.3 + 0.2j, 0.1 - 1.0j, dtype=complex)),
    ):
        _, (dsign, dlog) = tidu.jvp(lambda a: L.slogdet(a), (d,), (t,))
        _, (dsign0, dlog0) = tidu.jvp(lambda a: la.slogdet(a), (d.to_dense(),), (t.to_dense(),))
        np.testing.assert_allclose(np.asarray(dsign), np.asarray(dsign0), atol=1e-14)
        np.testing.assert_allclose(np.asarray(dlog), np.asarray(dlog0), atol=1e-14)
        g = tidu.grad(lambda a: L.slogdet(a)[1])(d)
        assert isinstance(g, DiagonalTensor)
        g0 = tidu.grad(lambda a: la.slogdet(a)[1])(d.to_dense())
        np.testing.assert_allclose(np.asarray(g.to_dense()), np.asarray(g0), atol=1e-14)
    h = tidu.hessian(lambda a: L.slogdet(a)[1])(diag(2.0, -3.0))  # second order: -1/d^2
    np.testing.assert_allclose(np.asarray(h.diag.diag), np.diag([-0.25, -1.0 / 9.0]), atol=1e-14)
    f = tf.jit(tidu.grad(lambda a: L.slogdet(a)[1]))  # abstract under jit: staged, checked when it runs
    np.testing.assert_allclose(np.asarray(f(diag(2.0, -4.0)).diag), [0.5, -0.25])


def test_det_inv_solve_derivatives_at_a_singular_diagonal():
    d = diag(1.0, 0.0, 0.0)
    g = tidu.grad(L.det)(d)  # the adjugate: finite, exact, as dense
    np.testing.assert_allclose(np.asarray(g.diag), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(np.asarray(tidu.grad(L.det)(diag(1.0, 0.0)).diag), [0.0, 1.0])
    h = tidu.hessian(L.det)(d)  # polynomial: exact also at rank n - 2
    np.testing.assert_allclose(np.asarray(h.diag.diag), [[0, 0, 0], [0, 0, 1], [0, 1, 0]])
    for fn in (
        lambda a: tf.sum(L.inv(a).diag),
        lambda a: tf.sum(L.solve(a, tf.ones((3,)))),
        lambda a: tf.sum(la.inv(a).diag),
    ):
        with pytest.raises(la.SingularMatrixError, match="singular"):
            tidu.grad(fn)(d)


def test_equality_is_elementwise_as_on_dense_tensors():
    D = DiagonalTensor
    one = D(tf.asarray([2.0]))
    assert (one == D(tf.asarray([2.0]))).tolist() == [[True]]  # was False (identity)
    d, b = diag(2.0, 3.0), blocks()
    for x in (d, b):
        dense = x.to_dense()
        for got in (x == x, x == dense, dense == x, x == np.asarray(dense), np.asarray(dense) == x):
            assert type(got) is tf.Tensor and np.asarray(got).all()  # dense == d was plain False
        np.testing.assert_array_equal(np.asarray(x != x), np.zeros(tuple(x.shape), bool))
        np.testing.assert_array_equal(np.asarray(x == 0.0), np.asarray(dense) == 0.0)
        np.testing.assert_array_equal(np.asarray(x < 2.5), np.asarray(dense) < 2.5)
        np.testing.assert_array_equal(np.asarray(2.5 > x), np.asarray(dense) < 2.5)
        np.testing.assert_array_equal(np.asarray(x >= x), np.ones(tuple(x.shape), bool))
        assert (x == None) is False and (x != "abc") is True  # noqa: E711 (as t == None)
        assert hash(x) == object.__hash__(x) and {x: 1}[x] == 1 and x in [x]  # hashed by identity, as tensors
    np.testing.assert_array_equal(np.asarray(d == diag(2.0, 4.0)), [[True, True], [True, False]])
    with pytest.raises(ValueError, match="ambiguous"):
        bool(d == d)  # the dense tensor's own rule
    with fallback_policy("error"):
        with pytest.raises(DensifyError, match=r"equal\(DiagonalTensor"):
            d == d  # a dense result: counted as a fallback


def test_truth_value_of_a_structured_tensor_is_ambiguous_as_dense():
    from tensor4all.structured import StructuredValueError

    with pytest.raises(StructuredValueError, match=r"bool: the truth value of DiagonalTensor\(n=2.*ambiguous"):
        bool(diag(0.0, 0.0))  # was True (object's default)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(blocks())
    assert bool(diag(0.0)) is False and bool(diag(3.0)) is True  # one element: its truth value


def test_power_abs_and_indexing_are_elementwise_as_on_dense_tensors():
    d, b = diag(-2.0, 3.0), blocks()
    for x in (d, b):
        dense = np.asarray(x.to_dense())
        np.testing.assert_allclose(_dense_of(x**2), dense**2)  # was a builtins.TypeError
        np.testing.assert_allclose(_dense_of(x**0), np.ones_like(dense))  # dense: 0 ** 0 = 1 off the diagonal
        np.testing.assert_allclose(_dense_of(2.0**x), 2.0**dense)
        np.testing.assert_allclose(_dense_of(abs(x)), np.abs(dense))
        np.testing.assert_allclose(_dense_of(x[0]), dense[0])
        np.testing.assert_allclose(_dense_of(x[1:, ::-1]), dense[1:, ::-1])
        assert len(x) == dense.shape[0]
        np.testing.assert_allclose(np.array([np.asarray(r) for r in x]), dense)
        with pytest.raises(IndexError, match="out of bounds"):
            x[7]
    stats = t4a.fallback_stats()
    assert stats[("power", ("DiagonalTensor", "Scalar"))] == 2 and stats[("abs", ("BlockDiagonal",))] == 1
    with pytest.raises(StructuredTypeError, match="power: operand 1 is 'a'"):
        d ** "a"
    g = tidu.grad(lambda a: tf.sum(a**2) + a[1, 1] + tf.sum(abs(a)))(d)
    assert isinstance(g, DiagonalTensor)
    np.testing.assert_allclose(np.asarray(g.diag), [2 * -2.0 - 1.0, 2 * 3.0 + 1.0 + 1.0])
    with fallback_policy("error"):
        with pytest.raises(DensifyError, match="power"):
            d**2


def test_a_wrong_fallback_policy_value_is_a_value_error():
    from tensor4all.structured import StructuredValueError

    for call in (lambda: set_fallback_policy("bogus"), lambda: fallback_policy("bogus").__enter__()):
        with pytest.raises(
            StructuredValueError, match=r"must be one of \('count', 'warn', 'error'\), got 'bogus'"
        ) as info:
            call()
        assert isinstance(info.value, (ValueError, StructuredError)) and not isinstance(info.value, TypeError)
    for bad in (5, None, ["error"]):  # a wrong type stays a TypeError
        with pytest.raises(StructuredTypeError, match="must be one of"):
            set_fallback_policy(bad)
    assert get_fallback_policy() == "count"


@pytest.mark.parametrize(
    "call",
    [
        lambda: Nested([1, 1], TiledShape([2, 3], [4])).slice(0, 99),  # the sweep's example
        lambda: Nested([1, 1], Shape(2, 3)).slice(5),
        lambda: Nested([1, 1], Shape(2, 3)).slice(-1, 0),
        lambda: Nested([1, 1], Shape(2, 3)).slice((0, 0), (1, 9)),
        lambda: Nested([1, 1], Shape(2, 3)).slice((1, 0), (0, 3)),
        lambda: Nested([1, 1], Shape(2, 3)).slice((0, 0, 0)),
        lambda: Nested([1, 1], Shape(2, 3, origin=(1, 0))).slice(0, 0),
        lambda: Nested([1, 1], Shape(2, 3)).chip(99),
        lambda: Nested([1, 1], Shape(2, 3)).chip(0, 3),
        lambda: Nested([1, 1], TiledShape([2, 3], [4])).chip(5),
        lambda: Nested([1, 1], JaggedShape([Shape(2), Shape(3)])).chip(1, 3),
        lambda: JaggedShape(Shape()).chip(0),  # was a bare IndexError
        lambda: JaggedShape(Shape()).slice(0, 1),  # was JaggedShape([]) of rank 1
    ],
)
def test_nested_and_jagged_indices_out_of_range_are_structured_index_errors(call):
    with pytest.raises(StructuredIndexError, match="outside|rank") as info:
        call()
    assert isinstance(info.value, IndexError) and not isinstance(info.value, tf.ShapeError)


def test_nested_slice_arguments_and_valid_calls():
    n = Nested([1, 1], Shape(2, 3))
    with pytest.raises(StructuredShapeError, match=r"begin \(0, 0, 0\) and end \(1, 1, 1\) must both have 2 entries"):
        n.slice((0, 0, 0), (1, 1, 1))
    with pytest.raises(StructuredTypeError, match="both be integers"):
        n.slice(0, (1, 1))
    assert n.slice(1, 2).shape.same_as(Shape(1, 1, origin=(1, 2)))
    assert n.slice((0, 1), (2, 3)).shape.same_as(Shape(2, 2, origin=(0, 1)))
    assert n.chip(1) == Nested([1], Shape(3))
    assert Nested([1, 1], Shape(2, 3, origin=(1, 0))).chip(2) == Nested([1], Shape(3))
    # a smooth JaggedShape whose Shape has an origin: its elements and chips (were tenferro ShapeErrors)
    j = JaggedShape(Shape(2, 3, origin=(1, 5)))
    assert j.elements == (Shape(3), Shape(3)) and j.chip(1).same_as(Shape(3, origin=(5,)))
