"""The gradient test table: every differentiable tenferro primitive, checked by
finite differences (JVP) and the dot-product test (VJP), to second order, in
float64 and complex128, at several shapes including 0-d and size-0."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import tenferro as tf

from specs import OpSpec, all_specs
from helpers import check_derivatives, is_writeable

SPECS = all_specs()


def _make_args(spec: OpSpec, shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    if spec.make_args is not None:
        return spec.make_args(rng, dtype, shapes)
    args = []
    for s in shapes:
        if dtype.is_complex:
            v = rng.standard_normal(s) + 1j * rng.standard_normal(s)
        else:
            v = rng.standard_normal(s)
        if spec.domain == "positive":
            v = (np.abs(v) + 0.5) if not dtype.is_complex else v + (1.5 * np.sign(v.real) + 0j)
        elif spec.domain == "unit":
            v = 0.8 * np.tanh(v.real) + (0j if dtype.is_complex else 0)
            if dtype.is_complex:
                v = v + 0.1j * rng.standard_normal(s)
        args.append(tf.asarray(np.asarray(v, dtype=dtype.numpy)))
    return args


def _runs_under_jit(spec: OpSpec, i: int, dtype_name: str) -> bool:
    """Which cases also run compiled. Compiling a linalg case costs ~80 ms (its
    derivative graphs are large; all of them would add ~20 s) against ~8 ms for the
    rest: every case of the other families runs under jit, a linalg spec at its last
    shapes (batched, where it has them) in its last dtype (complex128, where the rule
    conjugates; float64 for the real-only specs). Real linalg programs run compiled in
    test_linalg.py."""
    if not spec.name.startswith("linalg"):
        return True
    return i == len(spec.shapes) - 1 and dtype_name == spec.dtypes[-1]


def _case_id(spec: OpSpec, shapes, dt: str, mode: str) -> str:
    return f"{mode}-{spec.name}-{'x'.join(str(s) for s in shapes)}-{dt}"


CASES = [
    pytest.param(spec, shapes, dt, mode, id=_case_id(spec, shapes, dt, mode))
    for mode in ("eager", "jit")
    for spec in SPECS
    for i, shapes in enumerate(spec.shapes)
    for dt in spec.dtypes
    if mode == "eager" or _runs_under_jit(spec, i, dt)
]


@pytest.mark.parametrize("spec,shapes,dtype_name,mode", CASES)
def test_check_grads(spec: OpSpec, shapes, dtype_name, mode):
    """``eager``: finite differences and the dot-product test, to ``spec.order``.
    ``jit``: ``tenferro.jit`` gives the eager value and derivatives to the same order
    (compiled around the transformations and differentiated through the compiled
    call), to rounding (helpers.JIT_RTOL), so the eager checks carry over."""
    dtype = tf.dtype(dtype_name)
    args = _make_args(
        spec, shapes, dtype, seed=zlib.crc32(repr((spec.name, shapes, dtype_name)).encode())
    )  # reproducible across runs
    check_derivatives(mode, spec.fn, args, order=spec.order, modes=spec.modes, rtol=spec.rtol, atol=spec.atol)


def _args_for(spec: OpSpec, shapes, dtype_name):
    dtype = tf.dtype(dtype_name)
    return _make_args(spec, shapes, dtype, seed=zlib.crc32(repr((spec.name, shapes, dtype_name)).encode()))


def _bound_primitives(spec: OpSpec, args) -> set[str]:
    """Names of the primitives bound by ``spec.fn``, its JVP and its VJP (traced)."""
    import tidu

    def fwd_and_derivatives(*xs):
        out, vjp_fn = tidu.vjp(spec.fn, *xs)
        _, t_out = tidu.jvp(spec.fn, xs, xs)
        return out, t_out, vjp_fn(out)

    names: set[str] = set()
    graph = tidu.inline_calls(tidu.make_graph(fwd_and_derivatives, *args))  # compiled calls: their graphs
    names.update(e.prim.name for e in graph.eqns)
    return names


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in SPECS])
def test_spec_covers_what_it_claims(spec: OpSpec):
    """A spec's ``covers`` must name primitives its function (or its derivatives)
    actually binds, so the manifest coverage test above cannot pass vacuously."""
    import tidu

    names: set[str] = set()
    for shapes in spec.shapes:  # the union over every case of the spec
        for dtype_name in spec.dtypes:
            args = _args_for(spec, shapes, dtype_name)
            try:
                names |= _bound_primitives(spec, args)
            except tidu.TracerConversionError:
                pytest.skip(f"{spec.name}: its function needs concrete values (data-dependent), cannot be traced")
    missing = set(spec.covers) - names
    assert not missing, f"{spec.name} claims to cover {sorted(missing)} but never binds them (binds {sorted(names)})"


class _AvalChecker:
    """Wraps every tenferro primitive's impl so that each eager evaluation checks
    (1) the output aval equals the primitive's abstract_eval of its input avals and
    (2) every output array is in canonical layout: F-contiguous and writeable."""

    def __init__(self):
        from tenferro._registry import PRIMITIVES

        self.saved = {}
        self.prims = [p for p, _ in PRIMITIVES.values()]

    def __enter__(self):
        import tidu

        for p in self.prims:
            impl = p.impl
            self.saved[p] = impl

            def checked(*args, __p=p, __impl=impl, **params):
                out = __impl(*args, **params)
                want = __p.abstract_eval(*[tidu.aval_of(a) for a in args], **params)
                outs, wants = (out, want) if __p.multiple_results else ([out], [want])
                for o, w in zip(outs, wants):
                    got = tidu.aval_of(o)
                    assert got == w, f"{__p.name}: impl returned {got}, abstract_eval says {w}"
                    a = o._data
                    assert a.flags.f_contiguous, f"{__p.name}: output is not column-major contiguous"
                    assert is_writeable(a) or a.size == 0 or any(a is x._data for x in args), (
                        f"{__p.name}: output is a read-only view"
                    )
                return out

            p.impl = checked
        return self

    def __exit__(self, *exc):
        for p, impl in self.saved.items():
            p.impl = impl


AVAL_CASES = [
    pytest.param(spec, spec.shapes[i], spec.dtypes[-1], id=f"{spec.name}-{i}-{spec.dtypes[-1]}")
    for spec in SPECS
    for i in range(len(spec.shapes))
]


@pytest.mark.parametrize("spec,shapes,dtype_name", AVAL_CASES)
def test_impls_agree_with_shape_rules(spec: OpSpec, shapes, dtype_name):
    """Eager values, JVPs and VJPs of every spec, with each primitive's impl checked
    against its abstract_eval and for canonical layout."""
    import tidu

    args = _args_for(spec, shapes, dtype_name)
    with _AvalChecker():
        out, vjp_fn = tidu.vjp(spec.fn, *args)
        tidu.jvp(spec.fn, tuple(args), tuple(args))
        vjp_fn(out)


def test_manifest_covers_every_primitive():
    """Every primitive is in the manifest, and every differentiable or linear one is
    exercised by at least one spec of the table."""
    manifest = tf.support_manifest()
    covered = {c for spec in SPECS for c in spec.covers}
    missing = sorted(
        n for n, info in manifest.items() if info["support"] in ("linear", "differentiable") and n not in covered
    )
    assert not missing, f"differentiable primitives without a gradient spec: {missing}"
    unknown = sorted(covered - set(manifest))
    assert not unknown, f"specs cover primitives that do not exist: {unknown}"


# Every primitive the manifest marks "zero-derivative", with a call that uses it on a
# float input. Adding such a primitive without an entry here fails the test below.
ZERO_DERIVATIVE_CALLS = {
    "gt": lambda x: tf.greater(x, 0.1),
    "ge": lambda x: tf.greater_equal(x, 0.1),
    "lt": lambda x: tf.less(x, 0.1),
    "le": lambda x: tf.less_equal(x, 0.1),
    "eq": lambda x: tf.equal(x, 0.1),
    "ne": lambda x: tf.not_equal(x, 0.1),
    "isfinite": tf.isfinite,
    "isinf": tf.isinf,
    "isnan": tf.isnan,
    "sign": tf.sign,
    "argmax": tf.argmax,
    "argmin": lambda x: tf.argmin(x, axis=0),
}


def test_zero_derivative_primitives_yield_zero_tangents():
    import tidu

    manifest = tf.support_manifest()
    zero_deriv = {n for n, info in manifest.items() if info["support"] == "zero-derivative"}
    assert zero_deriv == set(ZERO_DERIVATIVE_CALLS), "update ZERO_DERIVATIVE_CALLS"
    x = tf.asarray(np.array([-1.5, 0.3, 2.0]))
    t = tf.asarray(np.array([1.0, -2.0, 0.5]))
    for name, call in ZERO_DERIVATIVE_CALLS.items():
        _, t_out = tidu.jvp(call, (x,), (t,))
        assert t_out is None or not np.any(np.asarray(t_out)), name
        # reverse mode: a loss routed through the primitive gets no gradient from it
        g = tidu.grad(lambda x: tf.sum(tf.where(call(x), x * 0.0, x * 0.0) + tf.real(call(x) * 1.0)))(x)
        assert not np.any(g.numpy()), name
    assert not {n for n, info in manifest.items() if info["support"] == "not differentiable"}, (
        "a primitive that raises under differentiation needs a test here showing the error"
    )


def _mutable_parts(x, path="params"):
    """Paths of mutable containers (list, dict, set, arrays) inside a parameter value."""
    if isinstance(x, (list, dict, set, np.ndarray)):
        return [f"{path}: {type(x).__name__}"]
    if isinstance(x, tuple):
        return [p for i, v in enumerate(x) for p in _mutable_parts(v, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in SPECS])
def test_primitive_parameters_are_immutable_values(spec: OpSpec):
    """Every equation of the function's graph and of its derivatives' graphs has
    hashable, immutable parameters, so ``Graph.cse`` covers every equation."""
    import tidu

    shapes, dtype_name = spec.shapes[0], spec.dtypes[0]
    args = _args_for(spec, shapes, dtype_name)

    def fwd_and_derivatives(*xs):
        out, vjp_fn = tidu.vjp(spec.fn, *xs)
        _, t_out = tidu.jvp(spec.fn, xs, xs)
        return out, t_out, vjp_fn(out)

    try:
        graph = tidu.make_graph(fwd_and_derivatives, *args)
    except tidu.TracerConversionError:
        pytest.skip(f"{spec.name}: its function needs concrete values (data-dependent), cannot be traced")
    for eqn in graph.eqns:
        hash(tuple(sorted(eqn.params.items())))
        for k, v in eqn.params.items():
            assert _mutable_parts(v, k) == [], f"{eqn.prim.name}: mutable parameter {k}"
    graph.cse()  # covers every equation (raises RuleError on an unhashable parameter)
