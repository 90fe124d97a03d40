"""Derivatives through tensor networks that test_gradients, test_apply, test_symmetric and
test_mps_symmetric check only to first order, in one dtype, or not at all:

* MPS functions to second order: overlap, expect (also the complex-valued ``S+``),
  correlation (``i < j``, ``i == j``, ``i > j``; the Jordan-Wigner strings of ``Cdag C``,
  ``C Cdag`` and ``Cdag Cdag``), normalize, canonicalize, add, apply and expectation of a
  normalized state and in the MPO;
* U(1)-symmetric MPS: expectation, overlap and normalize to second order; add, apply, tebd,
  tdvp and correlation_matrix to first order;
* SymmetricTensor linear algebra: inv, det, slogdet, trace, expm and solve (the dense
  fallback) of a charge-0 operator, and svd, qr and truncated_svd of a matrix with
  non-square blocks, with truncations that cut across sectors.

All by ``tidu.testing.check_grads`` (central finite differences for the JVP, the dot-product
test for the VJP) at its default step and tolerances, in float64 and complex128. States
have 4 sites, so every bond is at most (2, 4, 2): the default truncations (add, apply,
tebd, tdvp) drop only structurally zero singular values, which stay zero along any finite-
difference step, and the functions are smooth there."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all import MPS, models
from tensor4all.symmetry import U1, Leg
from tidu.testing import check_grads

DTYPES = [tf.float64, tf.complex128]


def _pair(dtype):
    a = MPS.random(4, bond_dim=2, seed=2, dtype=dtype)
    b = MPS.random(4, bond_dim=3, seed=3, dtype=dtype)
    return a, b


# --- MPS functions, second order ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_overlap_second_order(dtype):
    a, b = _pair(dtype)
    check_grads(lambda x, y: t4a.overlap(x, y), (a, b), order=2)


EXPECT_CASES = [
    ("Sz", 1, DTYPES),
    ("Sx", None, DTYPES),
    # <Sy> of a real state is identically zero along real directions: complex only
    ("Sy", None, [tf.complex128]),
    # S+ is not Hermitian: a complex value for a complex state
    ("S+", 2, DTYPES),
    ("S+", None, DTYPES),
]


@pytest.mark.parametrize(
    "op,site,dtype", [(op, site, dt) for op, site, dts in EXPECT_CASES for dt in dts], ids=lambda v: str(v)
)
def test_expect_second_order(op, site, dtype):
    a, _ = _pair(dtype)
    if site is None:
        check_grads(lambda x: x.expect(op), (a,), order=2)
    else:
        check_grads(lambda x: x.expect(op, site), (a,), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "op_a,op_b,i,j",
    [("Sx", "Sz", 0, 2), ("S+", "S-", 1, 3), ("Sx", "Sy", 2, 2), ("Sx", "Sz", 3, 1), ("S-", "S+", 3, 0)],
    ids=["i<j", "S+S-", "i==j", "i>j", "S-S+_i>j"],
)
def test_correlation_second_order(dtype, op_a, op_b, i, j):
    a, _ = _pair(dtype)
    check_grads(lambda x: x.correlation(op_a, op_b, i, j), (a,), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "op_a,op_b,i,j",
    [("Cdag", "C", 0, 3), ("C", "Cdag", 3, 1), ("Cdag", "Cdag", 0, 2)],
    ids=["Cdag0C3", "C3Cdag1", "Cdag0Cdag2"],
)
def test_fermion_correlation_second_order(dtype, op_a, op_b, i, j):
    """Spinless fermions: the Jordan-Wigner string between the sites, for i < j and i > j, and
    a pairing term (``Cdag Cdag``: nonzero, the random state does not conserve N)."""
    psi = MPS.random(4, d=2, bond_dim=3, seed=3, dtype=dtype)
    check_grads(lambda p: p.correlation(op_a, op_b, i, j, local="fermion"), (psi,), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fermion_density_and_correlation_matrix(dtype):
    psi = MPS.random(4, d=2, bond_dim=3, seed=3, dtype=dtype)
    check_grads(lambda p: p.expect("N", local="fermion"), (psi,), order=2)
    check_grads(lambda p: p.correlation_matrix("Cdag", "C", local="fermion"), (psi,), order=1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("center", [None, 0, 2, 3], ids=["normalize", "center0", "center2", "center3"])
def test_normalize_and_canonicalize_second_order(dtype, center):
    """The state as a dense vector (gauge invariant); ``MPS(x.tensors)`` forgets the
    canonical form of the random state, so canonicalize does the QR sweeps."""
    a, _ = _pair(dtype)
    if center is None:
        check_grads(lambda x: x.normalize().to_dense(), (a,), order=2)
    else:
        check_grads(lambda x: MPS(x.tensors).canonicalize(center).to_dense(), (a,), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_add_and_exact_apply_second_order(dtype):
    """``add`` (direct sum, QR and SVD sweeps) and ``apply(W, psi)`` (zipup) without
    truncation, the latter in the MPO and the state together (the mixed second derivative of
    a bilinear map)."""
    a, b = _pair(dtype)
    W = models.tfim(4, g=0.6)
    check_grads(lambda x, y: t4a.add(x, y).to_dense(), (a, b), order=2)
    check_grads(lambda w, p: t4a.apply(w, p).to_dense(), (W, a), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_expectation_of_a_normalized_state_and_in_the_mpo_second_order(dtype):
    a, _ = _pair(dtype)
    H = models.heisenberg(4, Jz=0.7, h=0.3)
    W = models.tfim(4, g=0.6)
    check_grads(lambda x: t4a.expectation(x.normalize(), H), (a,), order=2)
    check_grads(lambda h: t4a.expectation(a, h), (W,), order=2)


# --- U(1)-symmetric MPS ------------------------------------------------------------------------
def _symmetric_states(dtype):
    psi = MPS.random(4, 2, bond_dim=3, seed=6, dtype=dtype, charge=0)
    phi = MPS.random(4, 2, bond_dim=2, seed=7, dtype=dtype, charge=0)
    assert psi.symmetric and phi.symmetric
    return psi, phi


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_symmetric_mps_second_order(dtype):
    """Expectation of a conserving MPO, overlap, and normalize, block by block."""
    psi, phi = _symmetric_states(dtype)
    H = models.xxz(4, Jz=0.8, h=0.1, conserve="Sz")
    check_grads(lambda p: t4a.expectation(p, H), (psi,), order=2)
    check_grads(lambda p, q: t4a.overlap(p, q), (psi, phi), order=2)
    check_grads(lambda p: p.normalize().to_dense(), (psi,), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_symmetric_mps_operations_first_order(dtype):
    """add, apply of a conserving MPO, real-time tebd and tdvp (two steps of 0.1) and
    correlation_matrix of ``S+ S-``, in the symmetric state."""
    psi, phi = _symmetric_states(dtype)
    H = models.xxz(4, Jz=0.8, h=0.1, conserve="Sz")
    check_grads(lambda p, q: t4a.add(p, q).to_dense(), (psi, phi), order=1)
    check_grads(lambda p: t4a.apply(H, p).to_dense(), (psi,), order=1)
    check_grads(lambda p: t4a.tebd(H, p, 0.2, 0.1).state.to_dense(), (psi,), order=1)
    check_grads(lambda p: t4a.tdvp(H, p, 0.2, 0.1).state.to_dense(), (psi,), order=1)
    check_grads(lambda p: p.correlation_matrix("S+", "S-"), (psi,), order=1)


# --- SymmetricTensor linear algebra --------------------------------------------------------------
V = Leg(U1(), {-1: 2, 0: 1, 1: 2})


def _operator(dtype, seed=3):
    """A charge-0 operator on ``V``: per charge block ``2 I + 0.5 G`` (well conditioned,
    moderate norm)."""
    rng = np.random.default_rng(seed)
    blocks = {}
    for c, n in ((-1, 2), (0, 1), (1, 2)):
        g = rng.standard_normal((n, n))
        if dtype.is_complex:
            g = g + 1j * rng.standard_normal((n, n))
        blocks[(c, c)] = (2.0 * np.eye(n) + 0.5 * g).astype(dtype.numpy)
    m = t4a.SymmetricTensor(blocks, [V, V.dual()])
    for b in blocks.values():
        s = np.linalg.svd(b, compute_uv=False)
        assert s[-1] > 0.5 and s[0] / s[-1] < 10, s
    return m


def _dense(out):
    """A result as plain tensors (structured outputs densified), so the check compares values."""
    if isinstance(out, tuple):
        return tuple(_dense(o) for o in out)
    return out.to_dense() if hasattr(out, "to_dense") else out


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["inv", "det", "slogdet", "trace", "expm"])
def test_symmetric_dense_fallback_functions(dtype, name):
    fn = getattr(t4a.linalg, name)
    check_grads(lambda x: _dense(fn(x)), (_operator(dtype),), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_symmetric_solve(dtype):
    b = t4a.SymmetricTensor.random([V, V.dual()], charge=0, dtype=dtype, seed=5)
    check_grads(lambda a, b: _dense(t4a.linalg.solve(a, b)), (_operator(dtype), b), order=2)


# non-square blocks: charge -1: 2 x 1, 0: 3 x 2, 1: 2 x 3 (charge 2 of W has no partner)
VR = Leg(U1(), {-1: 2, 0: 3, 1: 2})
WR = Leg(U1(), {-1: 1, 0: 2, 1: 3, 2: 1})
#: singular values per sector; all five sorted: 3 (0), 2 (-1), 1.5 (1), 0.6 (1), 0.3 (0),
#: squared 9, 4, 2.25, 0.36, 0.09 of total 15.7
_SECTOR_SV = {-1: [2.0], 0: [3.0, 0.3], 1: [1.5, 0.6]}


def _rectangular(dtype, seed=6):
    rng = np.random.default_rng(seed)

    def unitary(n):
        g = rng.standard_normal((n, n))
        if dtype.is_complex:
            g = g + 1j * rng.standard_normal((n, n))
        return np.linalg.qr(g)[0]

    blocks = {}
    for c, sv in _SECTOR_SV.items():
        m, n = VR.sector_dim(c), WR.sector_dim(c)
        k = len(sv)
        u, v = unitary(m)[:, :k], unitary(n)[:, :k]
        blocks[(c, c)] = ((u * np.asarray(sv)) @ v.conj().T).astype(dtype.numpy)
    return t4a.SymmetricTensor(blocks, [VR, WR.dual()])


def _gram(x, y):
    return t4a.einsum("ab,cb->ac", x, y.conj()).to_dense()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_symmetric_svd_and_qr_with_non_square_blocks(dtype):
    """Gauge-invariant functions: ``sum S^3`` and the right projector ``Vh^H Vh``; for QR
    ``sum |R|^3`` (invariant under the sign or phase of each row of R) and the projector
    ``Q Q^H``."""
    r = _rectangular(dtype)

    def via_svd(x):
        u, s, vh = t4a.linalg.svd(x)
        return tf.sum(s.to_vector() ** 3), t4a.einsum("ab,ac->bc", vh.conj(), vh).to_dense()

    def via_qr(x):
        q, rr = t4a.linalg.qr(x)
        d = rr.to_dense()
        return tf.sum(tf.real(d * tf.conj(d)) * tf.abs(d)), _gram(q, q)

    check_grads(via_svd, (r,), order=2)
    check_grads(via_qr, (r,), order=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "kw,kept",
    [
        # the three largest: sector 0 keeps 1 of 2, sector 1 keeps 1 of 2 (gap 1.5 / 0.6)
        (dict(max_rank=3), {-1: 1, 0: 1, 1: 1}),
        # discarded weight 0.45 / 15.7 = 0.029 <= 0.05 < 2.7 / 15.7 = 0.17: the same three
        (dict(cutoff=5e-2), {-1: 1, 0: 1, 1: 1}),
        # 0.09 / 15.7 = 0.0057 <= 0.02 < 0.029: drops only 0.3 (sector 0)
        (dict(cutoff=2e-2), {-1: 1, 0: 1, 1: 2}),
    ],
    ids=["max_rank=3", "cutoff=5e-2", "cutoff=2e-2"],
)
def test_symmetric_truncated_svd_across_sectors(dtype, kw, kept):
    """The truncated reconstruction ``U S Vh`` (densified), whose derivative includes the
    discarded part of each sector. Every threshold is a factor >= 1.7 from the nearest
    singular value or discarded weight, so no finite-difference step changes what is kept."""
    r = _rectangular(dtype)

    def f(x):
        u, s, vh = t4a.linalg.truncated_svd(x, **kw)
        return t4a.einsum("ab,bc->ac", u.scale_leg(1, s), vh).to_dense()

    _, s, _ = t4a.linalg.truncated_svd(r, **kw)
    assert s.leg.sectors == kept
    check_grads(f, (r,), order=2)
