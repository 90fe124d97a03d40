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
