"""The gradient test table: every differentiable tenferro primitive, checked by
finite differences (JVP) and the dot-product test (VJP), to second order, in
float64 and complex128, at several shapes including 0-d and size-0."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import tenferro as tf
from tidu.testing import check_grads

from specs import OpSpec, all_specs

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


CASES = [
    pytest.param(spec, shapes, dt, id=f"{spec.name}-{'x'.join(str(s) for s in shapes)}-{dt}")
    for spec in SPECS
    for shapes in spec.shapes
    for dt in spec.dtypes
]


@pytest.mark.parametrize("spec,shapes,dtype_name", CASES)
def test_check_grads(spec: OpSpec, shapes, dtype_name):
    dtype = tf.dtype(dtype_name)
    args = _make_args(spec, shapes, dtype, seed=zlib.crc32(repr((spec.name, shapes, dtype_name)).encode()))  # reproducible across runs
    check_grads(spec.fn, args, order=spec.order, modes=spec.modes, rtol=spec.rtol, atol=spec.atol)


def test_manifest_covers_every_primitive():
    """Every primitive is in the manifest, and every differentiable or linear one is
    exercised by at least one spec of the table."""
    manifest = tf.support_manifest()
    covered = {c for spec in SPECS for c in spec.covers}
    missing = sorted(
        n for n, info in manifest.items()
        if info["support"] in ("linear", "differentiable") and n not in covered
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
