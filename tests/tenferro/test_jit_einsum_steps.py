"""tenferro.jit writes an einsum's pairwise steps on host arrays out as NumPy calls
(``einsum._execute.host_pair_expr``): the branches ``run_pair`` would take per call are taken
when the program is generated, so the compiled program makes the same NumPy calls on the same
views, and its results equal those of the same program interpreting each step to the bit.
Checked on random specs and dtypes, on the one order of evaluation that would overwrite a
scratch copy, and on the per-example products of ``benchmarks/vmap.py``'s MPS classifier (no
interpreted step left)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tenferro as tf
from test_einsum import _rand, einsum_cases

pytestmark = pytest.mark.cpu_only  # host kernels: off the CPU a compiled program runs each impl
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _compiled(eq: str, ops: list, optimize="auto", written_out: bool = True):
    """The einsum compiled on its own, with the source of its program (``written_out=False``:
    every pairwise step a ``run_pair`` call, as before steps were written out)."""
    kernels = sys.modules["tenferro.jit._kernels"]
    with pytest.MonkeyPatch.context() as mp:
        if not written_out:
            mp.setattr(kernels, "host_pair_expr", lambda *args: None)
        f = tf.jit(lambda *xs: tf.einsum(eq, *xs, optimize=optimize))
        return f(*ops), f.lower(*ops).source()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=einsum_cases(max_ops=5, sizes=(1, 2, 3, 4)), dtype=st.sampled_from(DTYPES), data=st.data())
def test_written_out_steps_equal_run_pair_to_the_bit(case, dtype, data):
    """The same compiled graph, its steps written out or interpreted by ``run_pair``: equal to
    the bit, column-major (eager may differ by rounding: the passes reorder operands)."""
    eq, shapes = case
    assume("..." not in eq)  # the ellipsis forms are the parser's business, covered in test_einsum.py
    xs = [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    try:
        np.einsum(eq, *xs)
    except ValueError:  # not an einsum NumPy accepts either
        assume(False)
    ops = [tf.asarray(x) for x in xs]
    optimize = data.draw(st.sampled_from(["auto", "greedy", False]))
    interpreted, _ = _compiled(eq, ops, optimize, written_out=False)
    got, _ = _compiled(eq, ops, optimize)
    assert got.dtype == interpreted.dtype and got.shape == interpreted.shape
    assert got._data.flags.f_contiguous
    np.testing.assert_array_equal(got.numpy(), interpreted.numpy())
    tol = 1e4 * np.finfo(dtype).eps  # sums of up to 4^5 products, rounded in another order
    np.testing.assert_allclose(got.numpy(), np.einsum(eq, *xs), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_a_regrouped_operand_is_not_overwritten_by_the_step_computing_the_other(dtype):
    """``ae,bed,edc,dfb,ac->fce`` along this path: the last step regroups its first operand into
    scratch, and its second operand is a step that regroups too. Written as one expression, the
    second would overwrite the first's scratch copy before the product reads it (values came out
    wrong with the check in ``host_pair_expr`` removed), so that step stays a ``run_pair`` call,
    which evaluates both operands first."""
    eq, shapes = "ae,bed,edc,dfb,ac->fce", [(2, 4), (4, 4, 3), (4, 3, 2), (3, 2, 4), (2, 2)]
    path = [(0, 4), (0, 2), (0, 2), (0, 1)]
    xs = [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
    ops = [tf.asarray(x) for x in xs]
    execute = sys.modules["tenferro.einsum._execute"]
    for slot in range(4):  # scratch as a larger contraction leaves it: every copy reuses it
        execute._buffer(slot, 1 << 12, np.dtype(dtype))
    got, source = _compiled(eq, ops, path)
    assert "_pair(" in source and "_pair_grouped(" in source
    np.testing.assert_array_equal(got.numpy(), _compiled(eq, ops, path, written_out=False)[0].numpy())
    np.testing.assert_allclose(got.numpy(), np.einsum(eq, *xs), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_per_example_products_run_without_the_interpreter(dtype):
    """An MPS classifier's per-example gradient of one site, ``xan,xbn,pn->nbpa`` with a batch
    of 128 (then 4, where the first product is a plain multiply): products up to
    ``EINSUM_PRODUCT_MAX`` elements go to NumPy's C einsum, larger ones to a fresh broadcast
    product, all written out (``benchmarks/vmap.py``'s MPS classifier: 0.91x paired
    against the same program calling ``run_pair`` per step)."""
    for batch in (128, 4):
        eq, shapes = "xan,xbn,pn->nbpa", [(1, 16, batch), (1, 16, batch), (2, batch)]
        xs = [_rand(s, dtype, seed=i) for i, s in enumerate(shapes)]
        ops = [tf.asarray(x) for x in xs]
        got, source = _compiled(eq, ops)
        assert "_pair(" not in source
        limit = sys.modules["tenferro.einsum._execute"].EINSUM_PRODUCT_MAX[np.dtype(dtype).kind]
        if batch == 128:  # two broadcast products: x-a-n by p-n first, then by x-b-n
            sizes = (batch * 16 * 2, batch * 16 * 2 * 16)
            assert source.count("_pair_einsum(") == sum(size <= limit for size in sizes)
            assert source.count("_pair_fresh_product(") == sum(size > limit for size in sizes)
        np.testing.assert_array_equal(got.numpy(), _compiled(eq, ops, written_out=False)[0].numpy())
        np.testing.assert_allclose(got.numpy(), np.einsum(eq, *xs), rtol=1e-14, atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_broadcast_in_dim_kernels(dtype):
    """Compiled ``broadcast_in_dim``: inserting unit axes is a reshape (a view of its input, as
    the ``reshape`` kernel's result is), a real broadcast is materialized column-major (never a
    zero-stride view); both equal eager, neither runs the wrapped ``impl``."""
    st_ = sys.modules["tenferro._structural"]
    x = tf.asarray(_rand((3, 4), dtype))
    for shape, dims in (((3, 1, 4, 1), (0, 2)), ((3, 5, 4), (0, 2)), ((2, 3, 4), (1, 2))):

        def f(v, shape=shape, dims=dims):
            return st_.broadcast_in_dim_p.bind(v, shape=shape, broadcast_dimensions=dims)

        compiled = tf.jit(f)
        got, want = compiled(x), f(x)
        source = compiled.lower(x).source()
        assert ("reshape" in source) == (shape == (3, 1, 4, 1)) and "_k0" not in source, source
        assert got._data.flags.f_contiguous and 0 not in got._data.strides
        assert np.shares_memory(got._data, x._data) == (shape == (3, 1, 4, 1))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
