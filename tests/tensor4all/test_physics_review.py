"""Review of the finite-chain physics and structured tensors (2026-12-02) against exact
diagonalization built here from explicit Kronecker products and against dense NumPy/SciPy:
``conserve="auto"`` of a parity-conserving TFIM, measurements of a conserved t-J state, and the
linear algebra of a square block-diagonal matrix whose blocks are not square."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tensor4all as t4a
from tensor4all import BlockDiagonal
from tensor4all.structured import U1, Leg

from .conftest import jordan_wigner_annihilators, spinful_chain_hopping

X = np.array([[0.0, 1.0], [1.0, 0.0]])
Z = np.diag([1.0, -1.0])


def _tfim_spectra(L: int, g: float) -> tuple[float, float, float]:
    """The lowest energy of ``-sum X_i X_{i+1} - g sum Z_i`` (the parity-conserving TFIM, open
    chain) overall, in the even and in the odd sector of ``prod Z``."""

    def op(o: np.ndarray, i: int) -> np.ndarray:
        return reduce(np.kron, [o if k == i else np.eye(2) for k in range(L)])

    h = -sum(op(X, i) @ op(X, i + 1) for i in range(L - 1)) - g * sum(op(Z, i) for i in range(L))
    odd = np.array([bin(k).count("1") % 2 for k in range(2**L)], dtype=bool)
    lowest = [np.linalg.eigvalsh(h[np.ix_(m, m)])[0] for m in (~odd, odd)]
    return float(np.linalg.eigvalsh(h)[0]), float(lowest[0]), float(lowest[1])


@pytest.mark.parametrize("L, g", [(7, -0.7), (7, 0.7), (6, -0.7), (5, -1.5)])
def test_auto_finds_the_ground_state_of_a_parity_conserving_tfim(L, g):
    """``auto`` ran the even parity whatever g: for g < 0 on an odd chain the ground state is odd
    (L = 7, g = -0.7: -7.1037 returned, -7.1896 exact). No symmetry of the MPO tells the parity, so
    ``auto`` now runs dense there."""
    e0, even, odd = _tfim_spectra(L, g)
    res = t4a.dmrg(t4a.models.tfim(L, g=g, conserve="parity"), conserve="auto", max_bond=64, cutoff=1e-14)
    assert abs(float(res.energy) - e0) < 1e-9
    assert res.sector == {"parity": 0.0 if even < odd else 1.0}


def test_an_explicit_parity_keeps_its_documented_default_and_given_sectors():
    """``conserve="parity"`` runs the even sector by default (documented), ``sector=1`` the odd one."""
    _, even, odd = _tfim_spectra(7, -0.7)
    H = t4a.models.tfim(7, g=-0.7, conserve="parity")
    for sector, exact in ((None, even), (1, odd)):
        res = t4a.dmrg(H, conserve="parity", sector=sector, max_bond=64, cutoff=1e-14)
        assert res.state.symmetric and abs(float(res.energy) - exact) < 1e-9


def _tj_ground_state(L: int) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The ground state of the t-J chain ``-t sum (c^dag_{i s} c_{j s} + h.c.) + J sum (S_i.S_j -
    n_i n_j / 4)`` (t = 1, J = 0.5, open) at ``N = L - 1`` (one hole, L odd) and ``Sz = 1``,
    by exact diagonalization in the basis |0>, |up>, |dn> per site with Jordan-Wigner strings, and
    ``Sz_i`` on the full space."""
    t_hop, J = 1.0, 0.5
    # the 2L fermion modes (0up, 0dn, 1up, ...) as Jordan-Wigner matrices on 4^L states; project to t-J
    cs = [x.toarray() for x in jordan_wigner_annihilators(2 * L)]
    num = [x.T @ x for x in cs]
    h = -t_hop * spinful_chain_hopping(cs, L)
    sz = [(num[2 * i] - num[2 * i + 1]) / 2 for i in range(L)]
    sp = [cs[2 * i].T @ cs[2 * i + 1] for i in range(L)]
    n = [num[2 * i] + num[2 * i + 1] for i in range(L)]
    for i in range(L - 1):
        h += J * (sz[i] @ sz[i + 1] + 0.5 * (sp[i] @ sp[i + 1].T + sp[i].T @ sp[i + 1]) - n[i] @ n[i + 1] / 4)
    diag_n = sum(np.diag(x) for x in n)
    double = sum(np.diag(num[2 * i] @ num[2 * i + 1]) for i in range(L))
    keep = (double == 0) & (np.round(diag_n) == L - 1) & np.isclose(sum(np.diag(x) for x in sz), 1.0)
    w, v = np.linalg.eigh(h[np.ix_(keep, keep)])
    gs = v[:, 0]
    prof = np.array([np.sum(gs**2 * np.diag(x)[keep]) for x in sz])
    szsz = np.array([[gs @ (sz[i] @ sz[j])[np.ix_(keep, keep)] @ gs for j in range(L)] for i in range(L)])
    return float(w[0]), gs, prof, szsz


def test_a_conserved_tj_state_is_measured_in_the_tj_space():
    """A t-J state from ``dmrg`` (charges ``N, 2Sz``) measured by name used spin 1's ``Sz`` (``<Sz_i>``
    0.32 and 0.18 in an Sz = 0 ground state, where every ``<Sz_i>`` is 0); its charges now name
    ``"tj"``. Here the lowest state of N = 4, Sz = 1 on 5 sites, whose profile is not zero."""
    L = 5
    e0, _, prof, szsz = _tj_ground_state(L)
    res = t4a.dmrg(t4a.models.tj(L, t=1.0, J=0.5), sector={"N": L - 1, "Sz": 1}, max_bond=64, cutoff=1e-14)
    assert abs(float(res.energy) - e0) < 1e-9
    psi = res.state
    np.testing.assert_allclose(np.asarray(psi.expect("Sz")), prof, atol=1e-9)
    np.testing.assert_allclose(float(np.asarray(psi.expect("Sz", 2))), prof[2], atol=1e-9)
    np.testing.assert_allclose(np.asarray(psi.correlation_matrix("Sz", "Sz")), szsz, atol=1e-9)
    np.testing.assert_allclose(float(np.asarray(psi.correlation("Sz", "Sz", 0, 3))), szsz[0, 3], atol=1e-9)
    spin = t4a.measurements.spin_correlation(psi)  # <S_i.S_j> in t-J's spin operators
    np.testing.assert_allclose(spin, t4a.measurements.spin_correlation(psi, local="tj"), atol=1e-12)
    assert abs(np.trace(spin) - 0.75 * (L - 1)) < 1e-9  # S^2 = 3/4 on each of the L - 1 occupied sites
    # the dense form of the same state keeps the dimension's default (spin 1): local= names t-J there
    dense = psi.dense()
    np.testing.assert_allclose(np.asarray(dense.expect("Sz", None, "tj")), prof, atol=1e-9)


def test_a_square_block_diagonal_with_non_square_blocks_is_computed_as_dense():
    """``det``, ``slogdet`` and ``expm`` of a square block-diagonal matrix whose blocks are not
    square (the 5 x 5 example of docs/how-to/structured.md) raised ``SquareBlockError``; such a
    matrix is singular, and the calls now give dense's answers (``inv``: its singular error)."""
    rng = np.random.default_rng(0)
    b = BlockDiagonal([tf.asarray(rng.standard_normal(s)) for s in [(2, 2), (0, 2), (3, 1)]])
    dense = np.asarray(b.to_dense())
    assert dense.shape == (5, 5)
    assert float(np.asarray(t4a.linalg.det(b))) == 0.0
    sign, logabs = (float(np.asarray(x)) for x in t4a.linalg.slogdet(b))
    assert sign == 0.0 and logabs == -np.inf
    np.testing.assert_allclose(np.asarray(t4a.linalg.expm(b)), scipy.linalg.expm(dense), rtol=1e-13, atol=1e-14)
    with pytest.raises(tf.linalg.SingularMatrixError):
        t4a.linalg.inv(b)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_factorizations_of_a_zero_symmetric_matrix_are_those_of_zeros(dtype):
    """``svd``, ``truncated_svd`` and ``qr`` of a symmetric matrix with no stored block (the zero
    matrix) raised ``SymmetryError`` while ``eigh`` worked: they now factor its allowed sectors'
    zero blocks, as dense (singular values 0; ``U``/``Q`` orthonormal; products rebuild zero)."""
    leg = Leg(U1(), {0: 2, 1: 1, -1: 3})
    z = t4a.SymmetricTensor({}, [leg, leg.dual()], charge=0, dtype=dtype)
    u, s, vh = t4a.linalg.svd(z)
    assert np.asarray(s.to_dense()).shape == (6, 6) and not np.asarray(s.to_dense()).any()
    for f in (u, vh.conj().T):
        m = np.asarray(f.to_dense())
        np.testing.assert_allclose(m.conj().T @ m, np.eye(6), atol=1e-14)
    np.testing.assert_array_equal(np.asarray(t4a.linalg.svd(z, compute_uv=False).to_dense()), np.zeros((6, 6)))
    q, r = t4a.linalg.qr(z)
    qd = np.asarray(q.to_dense())
    np.testing.assert_allclose(qd.conj().T @ qd, np.eye(6), atol=1e-14)
    assert not np.asarray(r.to_dense()).any()
    u, s, vh = t4a.linalg.truncated_svd(z, max_rank=4)
    dense_rebuilt = np.asarray(u.to_dense()) @ np.asarray(s.to_dense()) @ np.asarray(vh.to_dense())
    np.testing.assert_array_equal(dense_rebuilt, np.zeros((6, 6)))
