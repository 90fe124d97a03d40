"""Every structured kernel against the dense computation: values (hypothesis over
tilings with empty, 1x1 and non-square blocks; float64 and complex128), gradients equal
to the dense gradient restricted to the structure, and check_grads to order 2.

One table (CASES) feeds all three tests. A case builds its operands from a tiling and
applies one function; the dense reference applies the same function to the densified
operands (for which the dispatcher calls tenferro directly). Decompositions enter
through gauge-invariant functions (reconstructions, symmetric functions of spectra).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tidu.testing import check_grads
import tensor4all as t4a
from tensor4all.structured import BlockDiagonal, DiagonalTensor, dispatch

DTYPES = {"float64": tf.float64, "complex128": tf.complex128}


# --- operand builders ---------------------------------------------------------------------
def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype == tf.complex128:
        x = x + 1j * rng.standard_normal(shape)
    return tf.asarray(x)


def herm(rng, n, dtype):
    m = np.asarray(rand(rng, (n, n), dtype))
    return tf.asarray((m + m.conj().T) / 2 + n * np.eye(n))


def diag_of(rng, tiling, dtype, positive=False):
    n = sum(m for m, _ in tiling)
    d = rand(rng, (n,), dtype)
    if positive:  # well away from zero: det, inv, solve, svd, slogdet
        d = tf.asarray(np.asarray(d) + np.where(np.real(np.asarray(d)) >= 0, 2.0, -2.0))
    return DiagonalTensor(d)


def block_of(rng, tiling, dtype, hermitian=False, shift=False):
    blocks = []
    for m, n in tiling:
        if hermitian:
            blocks.append(herm(rng, m, dtype))
        else:
            b = np.asarray(rand(rng, (m, n), dtype))
            if shift and m == n:
                b = b + 3 * m * np.eye(m)
            blocks.append(tf.asarray(b))
    return BlockDiagonal(blocks)


def rows(t):
    return sum(m for m, _ in t)


def cols(t):
    return sum(n for _, n in t)


def transposed(t):
    return [(n, m) for m, n in t]


# --- the table ------------------------------------------------------------------------------
# name -> (needs square blocks, builder(rng, tiling, dtype) -> args, function)
L = t4a.linalg


def _svd_recon(a):
    u, s, vh = L.svd(a)
    return t4a.matmul(t4a.matmul(u, DiagonalTensor(s)), vh)


def _svd_cubes(a):
    s = L.svd(a, compute_uv=False)
    return tf.sum(s * s * s)


def _eigh_recon(a):
    w, v = L.eigh(a)
    return t4a.einsum("ik,k,jk->ij", t4a.to_dense(v), w, t4a.to_dense(v).conj())


def _eigh_cubes(a):
    w, _ = L.eigh(a)
    return tf.sum(w * w * w)


def _qr_recon(a):
    q, r = L.qr(a)
    return t4a.matmul(q, r)


def _slogdet(a):
    sign, logabs = L.slogdet(a)
    return sign * tf.exp(logabs)


CASES = {
    # unary structure
    "negative": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: -a),
    "conj": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: a.conj()),
    "real": (False, lambda r, t, d: (diag_of(r, t, d),), lambda a: a.real),
    "imag": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: a.imag),
    "transpose_diag": (False, lambda r, t, d: (diag_of(r, t, d),), lambda a: a.T),
    "transpose_block": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: a.T),
    "scalar_mul": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: 2.5 * a),
    "mul_scalar_diag": (False, lambda r, t, d: (diag_of(r, t, d),), lambda a: a * 1.5),
    "divide_scalar": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: a / 4.0),
    "sum_diag": (False, lambda r, t, d: (diag_of(r, t, d),), lambda a: a.sum()),
    "sum0_diag": (False, lambda r, t, d: (diag_of(r, t, d),), lambda a: a.sum(0)),
    "sum_block": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: a.sum()),
    "sum1_block": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: a.sum(1)),
    "sum0_block": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: a.sum(0)),
    "trace_diag": (False, lambda r, t, d: (diag_of(r, t, d),), L.trace),
    "trace_block": (True, lambda r, t, d: (block_of(r, t, d),), L.trace),
    "norm_diag": (False, lambda r, t, d: (diag_of(r, t, d, positive=True),), L.norm),
    "norm_block": (False, lambda r, t, d: (block_of(r, t, d, shift=True),), L.norm),
    # two structured operands
    "add_diag": (False, lambda r, t, d: (diag_of(r, t, d), diag_of(r, t, d)), lambda a, b: a + b),
    "sub_block": (False, lambda r, t, d: (block_of(r, t, d), block_of(r, t, d)), lambda a, b: a - b),
    "mul_block": (False, lambda r, t, d: (block_of(r, t, d), block_of(r, t, d)), lambda a, b: a * b),
    "matmul_diag_diag": (False, lambda r, t, d: (diag_of(r, t, d), diag_of(r, t, d)), lambda a, b: a @ b),
    "matmul_block_block": (
        False,
        lambda r, t, d: (block_of(r, t, d), block_of(r, transposed(t), d)),
        lambda a, b: a @ b,
    ),
    "matmul_diag_block": (False, lambda r, t, d: (diag_of(r, t, d), block_of(r, t, d)), lambda a, b: a @ b),
    "matmul_block_diag": (False, lambda r, t, d: (block_of(r, t, d), diag_of(r, transposed(t), d)), lambda a, b: a @ b),
    # with dense operands
    "matmul_diag_dense": (False, lambda r, t, d: (diag_of(r, t, d), rand(r, (rows(t), 3), d)), lambda a, x: a @ x),
    "matmul_diag_vec": (False, lambda r, t, d: (diag_of(r, t, d), rand(r, (rows(t),), d)), lambda a, x: a @ x),
    "matmul_dense_diag": (False, lambda r, t, d: (rand(r, (2, rows(t)), d), diag_of(r, t, d)), t4a.matmul),
    "matmul_block_dense": (False, lambda r, t, d: (block_of(r, t, d), rand(r, (cols(t), 2), d)), lambda a, x: a @ x),
    "matmul_block_vec": (False, lambda r, t, d: (block_of(r, t, d), rand(r, (cols(t),), d)), lambda a, x: a @ x),
    "matmul_dense_block": (False, lambda r, t, d: (rand(r, (2, rows(t)), d), block_of(r, t, d)), t4a.matmul),
    "hadamard_diag_dense": (
        False,
        lambda r, t, d: (diag_of(r, t, d), rand(r, (rows(t), rows(t)), d)),
        lambda a, x: a * x,
    ),
    "hadamard_dense_block": (
        False,
        lambda r, t, d: (rand(r, (rows(t), cols(t)), d), block_of(r, t, d)),
        lambda x, a: dispatch("multiply", x, a),
    ),
    # einsum with diagonals on hyper-edges
    "einsum_usv": (
        False,
        lambda r, t, d: (rand(r, (3, rows(t)), d), diag_of(r, t, d), rand(r, (rows(t), 2), d)),
        lambda u, s, v: t4a.einsum("ik,kl,lj->ij", u, s, v),
    ),
    "einsum_two_diags": (
        False,
        lambda r, t, d: (rand(r, (rows(t), rows(t)), d), diag_of(r, t, d), diag_of(r, t, d)),
        lambda x, a, b: t4a.einsum("ij,jk,kl->il", a, x, b),
    ),
    "einsum_diag_out": (
        False,
        lambda r, t, d: (diag_of(r, t, d), diag_of(r, t, d)),
        lambda a, b: t4a.einsum("ij,jk->ik", a, b),
    ),
    "einsum_trace": (
        False,
        lambda r, t, d: (diag_of(r, t, d), rand(r, (rows(t), rows(t)), d)),
        lambda a, x: t4a.einsum("ij,ji->", a, x),
    ),
    "einsum_implicit": (
        False,
        lambda r, t, d: (diag_of(r, t, d), rand(r, (rows(t), 2), d)),
        lambda a, x: t4a.einsum("ij,jk", a, x),
    ),
    "einsum_block_diag": (
        False,
        lambda r, t, d: (block_of(r, t, d), diag_of(r, transposed(t), d)),
        lambda a, b: t4a.einsum("ij,jk->ik", a, b),
    ),
    "einsum_block_dense": (
        False,
        lambda r, t, d: (block_of(r, t, d), rand(r, (cols(t), 2), d)),
        lambda a, x: t4a.einsum("ij,jk->ki", a, x),
    ),
    "einsum_block_all": (
        False,
        lambda r, t, d: (block_of(r, t, d), rand(r, (rows(t), cols(t)), d)),
        lambda a, x: t4a.einsum("ij,ij->", a, x),
    ),
    "einsum_block_middle": (
        False,
        lambda r, t, d: (rand(r, (2, rows(t)), d), block_of(r, t, d), rand(r, (cols(t), 3), d)),
        lambda u, a, v: t4a.einsum("ik,kl,lj->ij", u, a, v),
    ),
    "einsum_block_transpose": (False, lambda r, t, d: (block_of(r, t, d),), lambda a: t4a.einsum("ij->ji", a)),
    "einsum_two_blocks_fallback": (
        False,
        lambda r, t, d: (block_of(r, t, d), block_of(r, transposed(t), d)),
        lambda a, b: t4a.einsum("ij,jk->ik", a, b),
    ),
    # linear algebra
    "svd_recon_diag": (False, lambda r, t, d: (diag_of(r, t, d, positive=True),), _svd_recon),
    "svd_recon_block": (False, lambda r, t, d: (block_of(r, t, d, shift=True),), _svd_recon),
    "svd_cubes_block": (True, lambda r, t, d: (block_of(r, t, d, shift=True),), _svd_cubes),
    "qr_recon_diag": (False, lambda r, t, d: (diag_of(r, t, d),), _qr_recon),
    "qr_recon_block": (False, lambda r, t, d: (block_of(r, t, d, shift=True),), _qr_recon),
    "eigh_recon_block": (True, lambda r, t, d: (block_of(r, t, d, hermitian=True),), _eigh_recon),
    "eigh_cubes_diag": (False, lambda r, t, d: (diag_of(r, t, tf.float64),), _eigh_cubes),
    "eigh_cubes_block": (True, lambda r, t, d: (block_of(r, t, d, hermitian=True),), _eigh_cubes),
    "inv_diag": (False, lambda r, t, d: (diag_of(r, t, d, positive=True),), L.inv),
    "inv_block": (True, lambda r, t, d: (block_of(r, t, d, shift=True),), L.inv),
    "solve_diag_dense": (False, lambda r, t, d: (diag_of(r, t, d, positive=True), rand(r, (rows(t), 2), d)), L.solve),
    "solve_diag_diag": (False, lambda r, t, d: (diag_of(r, t, d, positive=True), diag_of(r, t, d)), L.solve),
    "solve_block_dense": (True, lambda r, t, d: (block_of(r, t, d, shift=True), rand(r, (rows(t), 2), d)), L.solve),
    "solve_block_vec": (True, lambda r, t, d: (block_of(r, t, d, shift=True), rand(r, (rows(t),), d)), L.solve),
    "solve_block_block": (True, lambda r, t, d: (block_of(r, t, d, shift=True), block_of(r, t, d)), L.solve),
    "det_diag": (False, lambda r, t, d: (diag_of(r, t, d, positive=True),), L.det),
    "det_block": (True, lambda r, t, d: (block_of(r, t, d, shift=True),), L.det),
    "slogdet_diag": (False, lambda r, t, d: (diag_of(r, t, d, positive=True),), _slogdet),
    "slogdet_block": (True, lambda r, t, d: (block_of(r, t, d, shift=True),), _slogdet),
    "expm_diag": (False, lambda r, t, d: (diag_of(r, t, d),), L.expm),
    "expm_block": (True, lambda r, t, d: (block_of(r, t, d),), L.expm),
}


def dense(x):
    return x.to_dense() if isinstance(x, (DiagonalTensor, BlockDiagonal)) else x


def as_np(out):
    if isinstance(out, tuple):
        return [as_np(o) for o in out]
    return np.asarray(dense(out))


def assert_close(got, want, rtol=1e-9, atol=1e-9):
    if isinstance(want, list):
        for g, w in zip(got, want):
            assert_close(g, w, rtol, atol)
        return
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# --- tilings -----------------------------------------------------------------------------------
extent = st.integers(0, 3)
tilings = st.lists(st.tuples(extent, extent), min_size=1, max_size=4).filter(lambda t: sum(m for m, _ in t) > 0)
square_tilings = (
    st.lists(extent, min_size=1, max_size=4).filter(lambda t: sum(t) > 0).map(lambda t: [(m, m) for m in t])
)


def _tiling(data, square):
    return data.draw(square_tilings if square else tilings, label="tiling")


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kernel_equals_dense(name, dtype, data):
    square, build, fn = CASES[name]
    t = _tiling(data, square)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    args = build(rng, t, DTYPES[dtype])
    got = fn(*args)
    want = fn(*(dense(a) for a in args))
    assert_close(as_np(got), as_np(want))


# --- gradients: equal to the dense gradient restricted to the structure --------------------------------
def restrict(g_dense, like):
    """The dense gradient restricted to the structure of ``like``."""
    if isinstance(like, DiagonalTensor):
        return np.diagonal(np.asarray(g_dense)).copy()
    if isinstance(like, BlockDiagonal):
        g, ro, co = np.asarray(g_dense), like.row_offsets, like.col_offsets
        return [g[ro[k] : ro[k + 1], co[k] : co[k + 1]] for k in range(len(like.blocks))]
    return np.asarray(g_dense)


def leaves_np(g):
    if isinstance(g, DiagonalTensor):
        return np.asarray(g.diag)
    if isinstance(g, BlockDiagonal):
        return [np.asarray(b) for b in g.blocks]
    return np.asarray(g)


def _loss(fn, weights):
    def loss(*args):
        out = fn(*args)
        outs = out if isinstance(out, tuple) else (out,)
        total = 0.0
        for o, w in zip(outs, weights):
            total = total + tf.sum(tf.real(dense(o) * tf.asarray(w)))
        return total

    return loss


GRAD_TILINGS = {False: [(2, 3), (1, 1), (0, 2), (3, 1)], True: [(2, 2), (1, 1), (0, 0), (3, 3)]}
NO_DENSE_GRAD = {"svd_recon_block", "qr_recon_block", "qr_recon_diag", "svd_recon_diag"}  # dense gauge/rank issues


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("name", [n for n in CASES if n not in NO_DENSE_GRAD])
def test_gradient_is_dense_gradient_restricted(name, dtype):
    square, build, fn = CASES[name]
    rng = np.random.default_rng(7)
    args = build(rng, GRAD_TILINGS[square], DTYPES[dtype])
    out = fn(*args)
    outs = out if isinstance(out, tuple) else (out,)
    weights = [rng.standard_normal(tuple(dense(o).shape)) for o in outs]
    loss = _loss(fn, weights)
    argnums = tuple(range(len(args)))
    g_struct = tidu.grad(loss, argnums=argnums)(*args)
    g_dense = tidu.grad(loss, argnums=argnums)(*(dense(a) for a in args))
    for a, gs, gd in zip(args, g_struct, g_dense):
        assert type(gs) is type(a) or not isinstance(a, (DiagonalTensor, BlockDiagonal))
        assert_close(leaves_np(gs), restrict(gd, a), rtol=1e-7, atol=1e-8)


SMALL_TILINGS = {False: [(2, 1), (1, 1), (0, 1)], True: [(2, 2), (1, 1), (0, 0)]}


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("name", list(CASES))
def test_check_grads_order_2(name, dtype):
    square, build, fn = CASES[name]
    args = build(np.random.default_rng(3), SMALL_TILINGS[square], DTYPES[dtype])
    check_grads(fn, args, order=2)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_singular_diagonal_matches_the_dense_path(dtype):
    """A zero on the diagonal: slogdet's sign is 0 (as dense and NumPy), and inv/solve
    raise the dense path's SingularMatrixError instead of dividing by zero."""
    d = np.array([2.0, 0.0, -1.0]).astype(dtype)
    a = DiagonalTensor(tf.asarray(d))
    sign, logabs = L.slogdet(a)
    want_sign, want_logabs = np.linalg.slogdet(np.diag(d))
    assert complex(sign.numpy()) == complex(want_sign) and np.signbit(np.real(sign.numpy())) == np.signbit(0.0)
    assert float(logabs.numpy()) == want_logabs == -np.inf
    for f in (
        lambda: L.inv(a),
        lambda: L.solve(a, tf.ones((3,), dtype=a.dtype)),
        lambda: L.solve(a, DiagonalTensor(tf.ones((3,), dtype=a.dtype))),
    ):
        with pytest.raises(tf.linalg.SingularMatrixError, match="singular"):
            f()
