"""The native GEMM lists of the charge-sector products (``tensor4all.linalg.gemm_list``): the
kernel against NumPy on random tables, and the sector operator's native products against its
NumPy products. The (N, Sz) ground states found through them are checked against exact
diagonalization by ``test_hubbard.py``'s rectangle test, which runs every operator natively where
Numba is installed. Run where Numba (the ``fast`` extra) is installed; ``.ci/run`` runs them in
its ``fast`` pass."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensor4all as t4a
from tensor4all import models
from tensor4all.linalg import gemm_list
from tensor4all.linalg.gemm_list import WORK, X, Y, GemmList, address, native_gemms
from tensor4all.tools.errors import Tensor4allTypeError


numba = pytest.importorskip("numba")
if native_gemms() is None:  # TENSOR4ALL_NATIVE=0, or kernels that do not load here
    pytest.skip(gemm_list.REASON, allow_module_level=True)
pytestmark = pytest.mark.cpu_only

DTYPES = [np.float64, np.complex128]


def _random(rng, shape, dtype):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else a


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.sampled_from(DTYPES),
    st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.booleans(), st.booleans()), min_size=1, max_size=6),
)  # fmt: skip
def test_gemm_list_matches_numpy(seed, dtype, gemms):
    """Random GEMMs ``y[block] (+)= A B`` or ``A B^T`` on sub-blocks of bigger arrays (leading
    dimensions above the widths, offsets), some through the workspace, against NumPy."""
    rng = np.random.default_rng(seed)
    kernels = native_gemms()
    g = GemmList(dtype, kernels)
    x = _random(rng, 300, dtype)
    y = np.zeros(400, dtype=dtype)
    want = y.copy()
    kept, y_at = [], 0
    for m, n, k, transposed, accumulate in gemms:
        big = _random(rng, (m + 2, k + 3), dtype)  # A = big[1:1+m, 2:2+k], leading dimension k + 3
        kept.append(big)
        a = big[1 : 1 + m, 2 : 2 + k]
        if transposed:  # B^T stored in x as n x k at offset 5, leading dimension k
            b_store = x[5 : 5 + n * k].reshape(n, k)
            b = b_store.T
        else:
            b_store = x[7 : 7 + k * n].reshape(k, n)
            b = b_store
        a_op = (0, address(big) + big.itemsize * ((k + 3) + 2), k + 3)
        b_op = (X, 5 if transposed else 7, k if transposed else n)
        # through the workspace: T = A B, then y[...] (+)= T I (an identity stored in x's tail)
        g.workspace = max(g.workspace, m * n)
        g.zero_workspace(0, m * n)
        g.gemm(m, n, k, *a_op, *b_op, WORK, 0, n, True, transposed)
        eye = np.eye(n, dtype=dtype)
        kept.append(eye)
        g.gemm(m, n, n, WORK, 0, n, 0, address(eye), n, Y, y_at, n, accumulate, False)
        block = want[y_at : y_at + m * n].reshape(m, n)
        block[...] = (block if accumulate else 0) + a @ b
        y_at += m * n
    g.run(x, y)
    np.testing.assert_allclose(y, want, rtol=1e-13, atol=1e-13)


def test_gemm_list_rejects_other_dtypes():
    with pytest.raises(Tensor4allTypeError, match="float64 or complex128"):
        GemmList(np.float32, native_gemms())


def test_native_switch_off(monkeypatch):
    """``TENSOR4ALL_NATIVE=0`` keeps the NumPy path and says so."""
    monkeypatch.setattr(gemm_list, "_KERNELS", None)
    monkeypatch.setenv("TENSOR4ALL_NATIVE", "0")
    assert native_gemms() is None
    assert "TENSOR4ALL_NATIVE=0" in gemm_list.REASON
    monkeypatch.setattr(gemm_list, "_KERNELS", None)
    monkeypatch.delenv("TENSOR4ALL_NATIVE")
    assert native_gemms() is not None


def _spy_operators(monkeypatch) -> list:
    """Every local operator of the sector backend built from now on, with products by blocks
    everywhere (no held matrices, no whole arrays), natively from one term on and rectangle by
    rectangle wherever a block has them."""
    op_mod = sys.modules["tensor4all.algorithms.sector_operator"]
    monkeypatch.setattr(sys.modules["tensor4all.algorithms.sweep"], "DENSE_MAX", 0)
    monkeypatch.setattr(sys.modules["tensor4all.algorithms.sector_absorb"], "DENSE_ABSORB_ROWS", 0)
    monkeypatch.setattr(op_mod, "DENSE_OPERATOR_BYTES", 0)
    monkeypatch.setattr(op_mod, "GATHER_ENTRIES", 0)
    monkeypatch.setattr(op_mod, "NATIVE_MIN_TERMS", 1)
    monkeypatch.setattr(op_mod, "NATIVE_CALL_FLOPS", 0.0)  # every block's rectangles, where it has them
    seen = []
    init = op_mod.SectorOperator.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        seen.append(self)

    monkeypatch.setattr(op_mod.SectorOperator, "__init__", spy)
    return seen


@pytest.mark.parametrize("complex_state", [False, True])
def test_native_products_equal_numpy_products(monkeypatch, complex_state):
    """The native products of the operators of a Hubbard 3 x 2 run (real blocks; with a complex
    start state the real blocks are cast) against the same operators' NumPy products, on random
    vectors, to rounding."""
    seen = _spy_operators(monkeypatch)
    H = models.hubbard(t4a.lattices.square(3, 2), t=1.0, U=3.0, mu=0.2, conserve="N,Sz")
    psi0 = t4a.MPS.product_state([1, 2, 3, 0, 1, 2], d=4, conserve="N,Sz", local="electron")
    if complex_state:
        psi0 = psi0 * (1.0 + 0.0j)
    t4a.dmrg(H, psi0, max_bond=32, sweeps=2, cutoff=1e-12)
    native = [op for op in seen if op.gemms is not None]
    assert native, "no operator ran natively"
    assert any(left is not None or right is not None for op in native for *_, left, right in op.terms)
    rng = np.random.default_rng(3)
    for op in native:
        x = _random(rng, op.shape[1], op.gemms.dtype)
        y = op.matvec(x)
        gemms, op.gemms = op.gemms, None
        want = op.matvec(x)
        op.gemms = gemms
        np.testing.assert_allclose(y, want, rtol=0, atol=1e-13 * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize(
    "block_dtype, dtype", [(np.float64, np.float64), (np.float64, np.complex128), (np.complex128, np.complex128)]
)
def test_gemm_list_of_terms_with_rectangles(block_dtype, dtype):
    """``Y[k] += A X[k'] B^T`` over random sectors and terms, some blocks applied rectangle by
    rectangle (the rest of such a block zero), real blocks of a complex operator cast: the native
    list against the sum written out in NumPy."""
    op_mod = sys.modules["tensor4all.algorithms.sector_operator"]
    rng = np.random.default_rng(7)
    shapes = [(3, 4), (5, 2), (4, 6)]
    offsets = np.concatenate([[0], np.cumsum([r * c for r, c in shapes])]).tolist()
    x = _random(rng, offsets[-1], dtype)
    want = np.zeros(offsets[-1], dtype=dtype)
    terms = []
    for k, kin in [(0, 0), (0, 2), (1, 0), (2, 1), (2, 2), (1, 1)]:
        (rk, ck), (rkin, ckin) = shapes[k], shapes[kin]
        a, b = _random(rng, (rk, rkin), block_dtype), _random(rng, (ck, ckin), block_dtype)
        left = right = None
        if rk > 1 and rkin > 1:  # two rectangles of A, zero elsewhere
            a[1:, :1] = 0.0
            a[:1, 1:] = 0.0
            left = [(0, 1, 0, 1, None), (1, rk, 1, rkin, None)]
        if ck > 1 and ckin > 1:  # B: one rectangle, its first row zero
            b[:1] = 0.0
            right = [(1, ck, 0, ckin, None)]
        terms.append((k, kin, a, b.T, left, right))
        xk = x[offsets[kin] : offsets[kin + 1]].reshape(rkin, ckin)
        want[offsets[k] : offsets[k + 1]] += (a @ xk @ b.T).reshape(-1)
    gemms = op_mod._gemm_list(terms, offsets, dtype, native_gemms())
    assert gemms.dtype == dtype
    y = np.zeros_like(want)
    gemms.run(x, y)
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-13)
