"""The Primitive contract: support flags, the derived linear JVP, and the
documentation of the public API."""

import inspect

import numpy as np
import pytest

import tidu
from tidu import Primitive, Zero
from tidu._core import find_top_trace
from toy import mul  # also registers the toy value type


def _prim(name):
    p = Primitive(name)
    p.def_impl(lambda x: np.asarray(x))
    p.def_abstract_eval(lambda a: a)
    return p


# ---- support is derived from explicit flags ----------------------------------------
def test_support_values():
    lin = _prim("t_lin")
    lin.def_linear(lambda ct, x: [ct])
    diff = _prim("t_diff")
    diff.def_jvp_per_arg(lambda t, out, x: t)
    zero_no_reason = _prim("t_zero_no_reason")
    zero_no_reason.def_nondiff(zero_tangent=True)
    zero = _prim("t_zero")
    zero.def_nondiff("piecewise constant", zero_tangent=True)
    nondiff_no_reason = _prim("t_nondiff_no_reason")
    nondiff_no_reason.def_nondiff(zero_tangent=False)
    nondiff = _prim("t_nondiff")
    nondiff.def_nondiff("no derivative", zero_tangent=False)

    assert lin.support == "linear"
    assert diff.support == "differentiable"
    assert zero_no_reason.support == "zero-derivative"
    assert zero.support == "zero-derivative"
    assert nondiff_no_reason.support == "not differentiable"
    assert nondiff.support == "not differentiable"
    assert (diff.differentiable, diff.zero_derivative) == (True, False)
    assert (zero_no_reason.differentiable, zero_no_reason.zero_derivative) == (False, True)
    assert (nondiff.differentiable, nondiff.zero_derivative) == (False, False)
    # the flags match behaviour: a zero-derivative primitive gives a zero tangent
    x = np.array(0.5)
    assert tidu.jvp(lambda x: zero_no_reason.bind(x), (x,), (np.array(1.0),))[1] == 0.0
    with pytest.raises(tidu.NonDifferentiableError):
        tidu.jvp(lambda x: nondiff_no_reason.bind(x), (x,), (np.array(1.0),))


def test_defining_a_jvp_after_def_nondiff_makes_it_differentiable():
    p = _prim("t_redefined")
    p.def_nondiff(zero_tangent=True)
    p.def_jvp(lambda primals, tangents: (p.bind(*primals), tangents[0]))
    assert p.support == "differentiable" and p.differentiable and not p.zero_derivative


# ---- one JVP path, one top-trace search --------------------------------------------
def test_linear_primitive_derived_jvp():
    lin = _prim("t_lin2")
    lin.def_linear(lambda ct, x: [ct])
    x = np.array(2.0)
    out, t = lin.jvp([x], [np.array(3.0)], {})
    assert out == 2.0 and t == 3.0
    out, t = lin.jvp([x], [Zero.like(x)], {})  # all tangents zero: a symbolic zero out
    assert out == 2.0 and type(t) is Zero
    assert tidu.jvp(lambda x: lin.bind(x), (x,), (np.array(3.0),)) == (2.0, 3.0)


def test_missing_jvp_rule():
    p = _prim("t_nojvp")
    with pytest.raises(tidu.MissingRuleError, match="'t_nojvp' has no JVP rule"):
        p.jvp([np.array(1.0)], [np.array(1.0)], {})
    with pytest.raises(tidu.MissingRuleError, match="'t_nojvp' has no JVP rule"):
        tidu.jvp(lambda x: p.bind(x), (np.array(1.0),), (np.array(1.0),))


def test_bind_and_find_top_trace_agree():
    """bind dispatches to the trace find_top_trace picks: the innermost one."""
    seen = []

    def f(x):
        def g(y):
            seen.append((find_top_trace([x, y]), find_top_trace([x]), mul(x, y)._trace))
            return mul(x, y)

        return tidu.grad(g)(x)

    tidu.grad(f)(np.array(0.3))
    ((inner, outer, used),) = seen
    assert used is inner and inner.level > outer.level
    assert find_top_trace([np.array(1.0), 2.0]) is None


# ---- every public name is documented -----------------------------------------------
@pytest.mark.parametrize("name", tidu.__all__)
def test_public_name_has_docstring(name):
    obj = getattr(tidu, name)
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")  # a class's own docstring, not inherited
    elif callable(obj):
        doc = obj.__doc__
    else:
        return
    assert doc and doc.strip(), f"tidu.{name} has no docstring"
