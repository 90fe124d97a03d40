"""Every error: its type, and a message that names the problem."""

import numpy as np
import pytest

import tidu
from toy import add, cos, greater, mul, round_, sin

X = np.array(0.7)
ONE = np.array(1.0)


# ---- non-differentiable primitives -------------------------------------------------
@pytest.mark.parametrize(
    "transform",
    [
        lambda f: tidu.grad(f)(X),
        lambda f: tidu.jvp(f, (X,), (ONE,)),
        lambda f: tidu.linearize(f, X),
        lambda f: tidu.vjp(f, X),
        lambda f: tidu.jacfwd(f)(X),
        lambda f: tidu.grad(tidu.grad(f))(X),
    ],
    ids=["grad", "jvp", "linearize", "vjp", "jacfwd", "grad_grad"],
)
def test_nondifferentiable_primitive(transform):
    f = lambda x: mul(round_(x), x)  # noqa: E731
    with pytest.raises(tidu.NonDifferentiableError, match="'round_half_even' is not differentiable: piecewise"):
        transform(f)
    assert round_(X) == 1.0  # evaluation alone is fine


def test_nondifferentiable_primitive_on_constant_is_fine():
    # round of a value that does not depend on the input is never differentiated
    assert tidu.grad(lambda x: mul(x, round_(np.array(2.4))))(X) == 2.0


def test_comparison_has_zero_tangent():
    y, t = tidu.jvp(lambda x: greater(x, np.array(0.0)), (X,), (ONE,))
    assert y == True and t is None  # noqa: E712  boolean output: no tangent space
    assert tidu.grad(lambda x: add(x, greater(x, np.array(0.0))))(X) == 1.0


def test_support_manifest():
    import toy

    assert toy.round_p.support == "not differentiable"
    assert toy.greater_p.support == "zero-derivative"
    assert toy.add_p.support == "linear" and toy.sin_p.support == "differentiable"


def test_integer_input_not_differentiable():
    with pytest.raises(tidu.NonDifferentiableError, match="int64.*not differentiable"):
        tidu.grad(lambda i: mul(i, i))(np.array(3))
    with pytest.raises(tidu.TangentMismatchError, match="carries no tangent.*pass None"):
        tidu.jvp(lambda x, i: mul(x, i), (X, np.array(2)), (ONE, np.array(1)))


def test_missing_rule():
    p = tidu.Primitive("no_jvp_here")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda a: a)
    with pytest.raises(tidu.MissingRuleError, match="'no_jvp_here' has no JVP rule"):
        tidu.grad(lambda x: p.bind(x))(X)
    q = tidu.Primitive("no_impl")
    with pytest.raises(tidu.MissingRuleError, match="'no_impl' has no impl rule"):
        q.bind(X)


# ---- pytree structure --------------------------------------------------------------
def test_tree_structure_errors():
    f = lambda p: sin(p[0])  # noqa: E731
    with pytest.raises(tidu.TreeStructureError, match="expected a tuple.*got list"):
        tidu.jvp(f, ((X, X),), ([X, X],))
    with pytest.raises(tidu.TreeStructureError, match="tuples or lists"):
        tidu.jvp(f, (X, X), X)
    _, vjp_fn = tidu.vjp(lambda x: (x, {"a": x}), X)
    with pytest.raises(tidu.TreeStructureError, match="vjp: structure"):
        vjp_fn((X,))
    with pytest.raises(tidu.TreeStructureError, match="vjp.*dict"):
        vjp_fn((X, [X]))
    with pytest.raises(tidu.TreeStructureError, match="does not match"):
        vjp_fn((X, {"b": X}))
    with pytest.raises(tidu.TreeStructureError, match="has_aux=True requires.*pair"):
        tidu.grad(lambda x: sin(x), has_aux=True)(X)
    with pytest.raises(tidu.TreeStructureError, match="argnums 2 out of range"):
        tidu.grad(lambda x, y: x, argnums=2)(X, X)
    _, lin = tidu.linearize(lambda a, b: mul(a, b), X, X)
    with pytest.raises(tidu.TreeStructureError, match="linearized function"):
        lin([ONE, ONE])


# ---- tangent / cotangent types -------------------------------------------------------
def test_tangent_mismatch_errors():
    v = np.array([0.1, 0.2])
    with pytest.raises(tidu.TangentMismatchError, match=r"float64\[2\], expected float64\[\]"):
        tidu.jvp(sin, (X,), (v,))
    with pytest.raises(tidu.TangentMismatchError, match=r"float32\[\], expected float64\[\]"):
        tidu.jvp(sin, (X,), (np.array(1.0, np.float32),))
    with pytest.raises(tidu.TangentMismatchError, match=r"complex128\[\], expected float64"):
        tidu.jvp(sin, (X,), (np.array(1.0 + 0j),))
    _, vjp_fn = tidu.vjp(sin, v)
    with pytest.raises(
        tidu.TangentMismatchError, match=r"vjp: cotangent leaf 0 has type float64\[\], expected float64\[2\]"
    ):
        vjp_fn(ONE)
    _, lin = tidu.linearize(sin, v)
    with pytest.raises(tidu.TangentMismatchError, match=r"linearized function: tangent leaf 0"):
        lin(ONE)
    t = tidu.linear_transpose(lambda x: mul(x, np.array(2.0)), v)
    with pytest.raises(tidu.TangentMismatchError, match="linear_transpose: cotangent"):
        t(np.ones(3))


# ---- grad output ---------------------------------------------------------------------
def test_grad_of_non_scalar():
    v = np.array([0.1, 0.2])
    with pytest.raises(tidu.NonScalarOutputError, match=r"scalar output, got float64\[2\].*jacrev"):
        tidu.grad(sin)(v)
    with pytest.raises(tidu.NonScalarOutputError, match="single scalar output.*2 leaves"):
        tidu.grad(lambda x: (sin(x), cos(x)))(X)
    # has_aux: the aux part is not an output
    g, aux = tidu.grad(lambda x: (sin(x), (v, v)), has_aux=True)(X)
    assert g == np.cos(X)


def test_complex_output_without_holomorphic():
    z = np.array(1.0 + 1.0j)
    with pytest.raises(tidu.ComplexOutputError, match=r"real-valued output, got complex128\[\].*holomorphic=True"):
        tidu.grad(lambda z: mul(z, z))(z)


# ---- custom rules --------------------------------------------------------------------
def test_custom_jvp_wrong_structure():
    @tidu.custom_jvp
    def f(x):
        return sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return sin(primals[0]), (tangents[0], tangents[0])

    with pytest.raises(tidu.CustomRuleError, match="custom_jvp rule of 'f'.*structure"):
        tidu.jvp(f, (X,), (ONE,))
    with pytest.raises(tidu.CustomRuleError, match="custom_jvp rule of 'f'"):
        tidu.grad(f)(X)

    @tidu.custom_jvp
    def g(x):
        return sin(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        return sin(primals[0])  # not a pair

    with pytest.raises(tidu.CustomRuleError, match=r"must return a pair \(primal_out, tangent_out\)"):
        tidu.grad(g)(X)

    @tidu.custom_jvp
    def h(x):
        return sin(x)

    @h.defjvp
    def h_jvp(primals, tangents):
        return sin(primals[0]), np.array([1.0, 2.0])  # wrong tangent shape

    with pytest.raises(tidu.CustomRuleError, match=r"tangent of type float64\[2\]"):
        tidu.jvp(h, (X,), (ONE,))


def test_custom_vjp_wrong_structure():
    @tidu.custom_vjp
    def f(x, y):
        return mul(x, y)

    f.defvjp(lambda x, y: (mul(x, y), (x, y)), lambda r, ct: mul(ct, r[1]))  # not a tuple
    with pytest.raises(tidu.CustomRuleError, match="bwd of 'f' must return a tuple of 2 cotangents"):
        tidu.grad(f)(X, X)
    f.defvjp(lambda x, y: (mul(x, y), (x, y)), lambda r, ct: (mul(ct, r[1]),))  # one instead of two
    with pytest.raises(tidu.CustomRuleError, match="tuple of 2 cotangents.*length 1"):
        tidu.grad(f)(X, X)
    f.defvjp(lambda x, y: (mul(x, y), (x, y)), lambda r, ct: ([ct], None))  # wrong pytree
    with pytest.raises(tidu.CustomRuleError, match=r"structure PyTreeDef\(\[\*\]\)"):
        tidu.grad(f)(X, X)
    f.defvjp(lambda x, y: (mul(x, y), (x, y)), lambda r, ct: (np.ones(3), None))  # wrong type
    with pytest.raises(tidu.CustomRuleError, match=r"cotangent of type float64\[3\], expected float64\[\]"):
        tidu.grad(f)(X, X)
    f.defvjp(lambda x, y: mul(x, y), lambda r, ct: (ct, ct))  # fwd not a pair
    with pytest.raises(tidu.CustomRuleError, match=r"fwd of 'f' must return a pair"):
        tidu.grad(f)(X, X)


# ---- tracers ---------------------------------------------------------------------------
def test_leaked_tracer():
    leaked = []

    def f(x):
        leaked.append(x)
        return sin(x)

    tidu.grad(f)(X)
    with pytest.raises(tidu.UnexpectedTracerError, match="'sin' was applied to a tracer.*already finished"):
        sin(leaked[0])
    tidu.jvp(f, (X,), (ONE,))
    with pytest.raises(tidu.UnexpectedTracerError, match="leaked"):
        tidu.grad(lambda y: mul(y, leaked[-1]))(X)
    tidu.make_graph(f, X)
    with pytest.raises(tidu.UnexpectedTracerError):
        cos(leaked[-1])


def test_tracer_conversion_in_make_graph():
    def f(x):
        if x > 0:  # abstract: no value to branch on
            return sin(x)
        return x

    with pytest.raises(tidu.TracerConversionError, match=r"abstract traced value of type bool\[\]"):
        tidu.make_graph(f, X)
    with pytest.raises(tidu.TracerConversionError, match="abstract traced value"):
        tidu.make_graph(lambda x: float(x), X)
    # the same function under eager grad works (see test_transforms for more)
    assert tidu.grad(f)(X) == np.cos(X)


def test_tracer_to_numpy_is_an_error():
    with pytest.raises(tidu.TracerConversionError, match="cannot be converted to a NumPy array"):
        tidu.grad(lambda x: sin(np.asarray(x)))(X)


# ---- value types ---------------------------------------------------------------------
class Opaque:
    pass


def test_unregistered_value_type(monkeypatch):
    monkeypatch.setattr(tidu._vspace, "_scalar_promotion", [])  # no tensor library's promotion of numbers
    with pytest.raises(tidu.UnregisteredTypeError, match="Opaque has no registered vector space"):
        tidu.grad(lambda x: x)(Opaque())
    with pytest.raises(tidu.UnregisteredTypeError, match="float has no registered vector space"):
        tidu.jvp(sin, (0.5,), (1.0,))
    with pytest.raises(tidu.UnregisteredTypeError, match="register_vspace"):
        tidu.vspace_of(Opaque())
    with pytest.raises(tidu.UnregisteredTypeError, match="abstract value of type tuple"):
        tidu.vspace_of_aval((3,))


def test_all_errors_are_tidu_errors():
    for name in tidu._errors.__all__:
        assert issubclass(getattr(tidu, name), tidu.TiduError)


def test_debug_checks_catch_a_transpose_rule_with_the_wrong_aval():
    import numpy as np

    import tidu
    from tidu import Primitive

    bad_p = Primitive("bad_double")
    bad_p.def_impl(lambda x: np.asarray(2.0 * x))
    bad_p.def_abstract_eval(lambda a: a)
    # wrong: returns a cotangent of a different shape than the argument
    bad_p.def_linear(lambda ct, x: [np.zeros((7,))])
    x = np.array([1.0, 2.0])
    with tidu.debug_checks(True):
        with pytest.raises(tidu.RuleError, match="bad_double.*argument 0"):
            tidu.vjp(bad_p.bind, x)[1](np.ones(2))
    with tidu.debug_checks(False):  # unchecked, the wrong cotangent goes through
        (ct,) = tidu.vjp(bad_p.bind, x)[1](np.ones(2))
        assert np.shape(ct) == (7,)
