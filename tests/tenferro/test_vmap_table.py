"""vmap against a Python loop over the gradient table (``specs``), float64 and complex128:
each argument mapped (axis 0, and the last axis) and, for several arguments, one of them
unmapped; eager and compiled (``vmap(jit(f))``, ``jit(vmap(f))``); and to second order:
``vmap(grad)``, ``grad(vmap)``, ``vmap(jvp)`` and ``vmap`` of a Hessian-vector product. A
primitive without a rule must be listed in MISSING (kept exact by the last test)."""

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
    return [
        _make_args(spec, shapes, dtype, seed=zlib.crc32(repr((spec.name, shapes, dtype_name, b)).encode()))
        for b in range(B)
    ]


def _stack(values: list, axis: int) -> tf.Tensor:
    return tf.asarray(np.stack([v.numpy() for v in values], axis=axis))


CASES = [pytest.param(spec, spec.shapes[-1], dt, id=f"{spec.name}-{dt}") for spec in SPECS for dt in spec.dtypes]


@pytest.mark.parametrize("spec,shapes,dtype_name", CASES)
def test_vmap_matches_a_loop(spec: OpSpec, shapes, dtype_name):
    examples = _examples(spec, shapes, dtype_name)
    n = len(examples[0])
    tol = dict(atol=1e-12, rtol=1e-11)
    try:
        # every argument mapped over a leading axis
        check_vmap(spec.fn, tuple(_stack([e[k] for e in examples], 0) for k in range(n)), 0, 0, **tol)
    except tidu.MissingRuleError as e:  # only for the primitives listed as missing
        name = str(e).split("'")[1]
        assert name in MISSING | TIDU_MISSING, f"{spec.name}: {e}"
        return
    # over a trailing axis, with the batch axis of the outputs last
    check_vmap(spec.fn, tuple(_stack([e[k] for e in examples], -1) for k in range(n)), -1, -1, **tol)
    # compiled: vmap of a jitted function (its graph batched) and jit of the vmapped one
    if not spec.name.startswith("linalg") or dtype_name == spec.dtypes[-1]:  # (compile time, as the grad table)
        stacked = tuple(_stack([e[k] for e in examples], 0) for k in range(n))
        check_vmap(tf.jit(spec.fn), stacked, 0, 0, **tol)
        want = tidu.tree_leaves(tidu.vmap(spec.fn)(*stacked))
        for g, w in zip(tidu.tree_leaves(tf.jit(tidu.vmap(spec.fn))(*stacked)), want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), **tol)
    # one argument unmapped
    if n > 1:
        args = [_stack([e[k] for e in examples], 0) for k in range(n)]
        args[0] = examples[0][0]
        check_vmap(spec.fn, tuple(args), (None,) + (0,) * (n - 1), 0, **tol)


def test_the_list_of_primitives_without_a_rule_is_exact():
    assert {n for n, (p, _) in PRIMITIVES.items() if p.batch_rule is None} == MISSING


def _weights_like(out, seed: int) -> list:
    rng = np.random.default_rng(seed)
    ws = []
    for leaf in tidu.tree_leaves(out):
        a = rng.standard_normal(tuple(leaf.shape))
        if leaf.dtype.is_complex:
            a = a + 1j * rng.standard_normal(tuple(leaf.shape))
        ws.append(tf.asarray(a.astype(leaf.dtype.numpy)))
    return ws


def _loss(fn, weights):
    """A real scalar of ``fn``'s outputs: ``Re sum(w * out)`` over its leaves."""

    def loss(*xs):
        total = None
        for leaf, w in zip(tidu.tree_leaves(fn(*xs)), weights):
            term = tf.real(tf.sum(leaf * w))
            total = term if total is None else total + term
        return total

    return loss


@pytest.mark.parametrize("spec,shapes,dtype_name", CASES)
def test_derivatives_batch_to_second_order(spec: OpSpec, shapes, dtype_name):
    """vmap of the VJP and of the JVP, ``grad`` of a vmapped loss, and vmap of a Hessian-vector
    product (``jvp`` of ``grad``), each against the loop over the examples."""
    examples = _examples(spec, shapes, dtype_name)
    n = len(examples[0])
    stacked = tuple(_stack([e[k] for e in examples], 0) for k in range(n))
    weights = _weights_like(spec.fn(*examples[0]), 7)
    loss = _loss(spec.fn, weights)
    dirs = _examples(spec, shapes, dtype_name)[1]  # shared directions (another example's values)
    tol = dict(atol=1e-11, rtol=1e-10)
    argnums = tuple(range(n))
    try:
        if "rev" in spec.modes:
            check_vmap(lambda *xs: tidu.grad(loss, argnums=argnums)(*xs), stacked, 0, 0, **tol)  # vmap(grad)
            g = tidu.grad(lambda *xs: tf.sum(tidu.vmap(loss)(*xs)), argnums=argnums)(*stacked)  # grad(vmap)
            for k in range(n):
                want = np.stack([tidu.grad(loss, argnums=argnums)(*e)[k].numpy() for e in examples])
                np.testing.assert_allclose(g[k].numpy(), want, **tol)
        if "fwd" in spec.modes:
            check_vmap(lambda *xs: tidu.jvp(spec.fn, xs, tuple(dirs))[1], stacked, 0, 0, **tol)  # vmap(jvp)
        if spec.order >= 2 and "fwd" in spec.modes and "rev" in spec.modes:
            check_vmap(
                lambda *xs: tidu.jvp(tidu.grad(loss, argnums=argnums), xs, tuple(dirs))[1], stacked, 0, 0, **tol
            )  # vmap(hvp)
    except tidu.MissingRuleError as e:
        name = str(e).split("'")[1]
        assert name in MISSING | TIDU_MISSING, f"{spec.name}: {e}"
