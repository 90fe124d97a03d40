"""vmap against a Python loop over the gradient table (``specs``): every spec whose
primitives all have batching rules, each argument mapped (axis 0, and the last axis) and,
for several arguments, one of them unmapped; float64 and complex128. The primitives still
without a rule are listed in MISSING, which the last test keeps exact."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import tenferro as tf
import tidu
from tenferro._registry import PRIMITIVES
from tidu.testing import check_vmap

from specs import OpSpec, all_specs
from test_grad_table import _make_args

B = 3
SPECS = all_specs()
#: primitives without a batching rule yet (vmap of a function that applies one raises
#: tidu.MissingRuleError naming it)
MISSING: set = set()
#: tidu's own primitives without one: the linear parts of custom_vjp and checkpoint (met only
#: when vmap meets an already linearized graph)
TIDU_MISSING = {"custom_vjp_lin", "checkpoint_lin"}


def _examples(spec: OpSpec, shapes, dtype_name: str) -> list[list]:
    dtype = tf.dtype(dtype_name)
    return [_make_args(spec, shapes, dtype, seed=zlib.crc32(repr((spec.name, shapes, dtype_name, b)).encode()))
            for b in range(B)]


def _stack(values: list, axis: int) -> tf.Tensor:
    return tf.asarray(np.stack([v.numpy() for v in values], axis=axis))


CASES = [pytest.param(spec, spec.shapes[-1], dt, id=f"{spec.name}-{dt}")
         for spec in SPECS for dt in spec.dtypes]


@pytest.mark.parametrize("spec,shapes,dtype_name", CASES)
def test_vmap_matches_a_loop(spec: OpSpec, shapes, dtype_name):
    examples = _examples(spec, shapes, dtype_name)
    n = len(examples[0])
    tol = dict(atol=1e-12, rtol=1e-11)
    try:
        # every argument mapped over a leading axis
        check_vmap(spec.fn, tuple(_stack([e[k] for e in examples], 0) for k in range(n)), 0, 0, **tol)
    except tidu.MissingRuleError as e:   # only for the primitives listed as missing
        name = str(e).split("'")[1]
        assert name in MISSING | TIDU_MISSING, f"{spec.name}: {e}"
        return
    # over a trailing axis, with the batch axis of the outputs last
    check_vmap(spec.fn, tuple(_stack([e[k] for e in examples], -1) for k in range(n)), -1, -1, **tol)
    # one argument unmapped
    if n > 1:
        args = [_stack([e[k] for e in examples], 0) for k in range(n)]
        args[0] = examples[0][0]
        check_vmap(spec.fn, tuple(args), (None,) + (0,) * (n - 1), 0, **tol)


def test_the_list_of_primitives_without_a_rule_is_exact():
    assert {n for n, (p, _) in PRIMITIVES.items() if p.batch_rule is None} == MISSING
