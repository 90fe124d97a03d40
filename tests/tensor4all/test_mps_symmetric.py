"""Symmetric MPS and MPO (issue 22, item 5) against dense computations done here.

Every reference is computed in this file from the dense state vector (``to_dense``, checked
itself against the sector structure) and explicit Kronecker-product operators; the exact
ground energies per sector come from exact diagonalization of explicit matrices.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import MPS, models
from tidu.testing import check_grads

SP = np.array([[0.0, 1.0], [0.0, 0.0]])
SZ = np.diag([0.5, -0.5])
SX = 0.5 * np.array([[0.0, 1.0], [1.0, 0.0]])
OPS = {"S+": SP, "S-": SP.T, "Sz": SZ, "Sx": SX}


def _vec(psi: MPS) -> np.ndarray:
    return np.asarray(psi.to_dense())


def _sz_of_basis(L: int) -> np.ndarray:
    """Total Sz of each spin-1/2 basis state (site 0 most significant, index 0 = up)."""
    bits = (np.arange(2**L)[:, None] >> np.arange(L - 1, -1, -1)[None, :]) & 1
    return (0.5 - bits).sum(axis=1)


def _op(o: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), o), np.eye(2 ** (L - i - 1)))


@st.composite
def _states(draw):
    L = draw(st.integers(2, 7))
    lo = -L / 2
    sz = draw(st.sampled_from([lo + k for k in range(L + 1)]))
    chi = draw(st.integers(1, 6))
    dtype = draw(st.sampled_from(["float64", "complex128"]))
    seed = draw(st.integers(0, 1000))
    return MPS.random(L, 2, bond_dim=chi, seed=seed, dtype=getattr(tf, dtype), charge=sz), sz


@settings(max_examples=40, deadline=None)
@given(_states())
def test_random_state_lies_in_its_sector_and_is_normalized(case):
    psi, sz = case
    v = _vec(psi)
    assert psi.symmetric and psi.sector == {"Sz": sz}
    outside = np.abs(v[~np.isclose(_sz_of_basis(psi.L), sz)])
    assert outside.size == 0 or outside.max() == 0.0  # the blocks hold the sector only
    assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-12)
    assert float(psi.norm()) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(_states(), st.data())
def test_measurements_equal_the_dense_vector(case, data):
    psi, _ = case
    L = psi.L
    v = _vec(psi)
    i = data.draw(st.integers(0, L - 1))
    j = data.draw(st.integers(0, L - 1))
    a = data.draw(st.sampled_from(sorted(OPS)))
    b = data.draw(st.sampled_from(sorted(OPS)))
    m = _op(OPS[a], i, L) @ _op(OPS[b], j, L) if i != j else _op(OPS[a] @ OPS[b], i, L)
    want = np.vdot(v, m @ v)
    got = complex(np.asarray(psi.correlation(a, b, i, j)))
    assert got == pytest.approx(want, abs=1e-12)
    assert float(np.asarray(psi.expect("Sz", i)).real) == pytest.approx(np.vdot(v, _op(SZ, i, L) @ v).real, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(_states(), st.data())
def test_canonicalize_keeps_the_state_and_the_sectors(case, data):
    psi, sz = case
    v = _vec(psi)
    center = data.draw(st.integers(0, psi.L - 1))
    psi.canonicalize(center)
    assert psi.symmetric and psi.sector == {"Sz": sz}
    np.testing.assert_allclose(_vec(psi), v, atol=1e-12)
    for k, t in enumerate(psi.tensors):
        a = np.asarray(t.to_dense())
        if k < center:  # left-orthonormal
            m = a.reshape(-1, a.shape[2], order="C")
            np.testing.assert_allclose(m.conj().T @ m, np.eye(m.shape[1]), atol=1e-12)
        elif k > center:  # right-orthonormal
            m = a.reshape(a.shape[0], -1, order="C")
            np.testing.assert_allclose(m @ m.conj().T, np.eye(m.shape[0]), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(_states(), st.data())
def test_schmidt_values_and_entanglement_spectrum_equal_the_dense_svd(case, data):
    psi, _ = case
    L = psi.L
    v = _vec(psi)
    bond = data.draw(st.integers(0, L - 2))
    m = v.reshape(2 ** (bond + 1), -1)
    dense = np.linalg.svd(m, compute_uv=False)
    got = psi.schmidt_values()[bond]
    np.testing.assert_allclose(got, dense[: len(got)], atol=1e-12)
    assert np.all(dense[len(got) :] < 1e-12)
    left_sz = _sz_of_basis(bond + 1)
    spectrum = psi.entanglement_spectrum(bond)
    for q, s in spectrum.items():  # the rows of the left half of charge q, on their own
        block = m[np.isclose(left_sz, q)]
        want = np.linalg.svd(block, compute_uv=False)
        np.testing.assert_allclose(s, want[: len(s)], atol=1e-12)
        assert np.all(np.diff(s) <= 0)
    assert psi.entanglement_entropy(bond) == pytest.approx(
        -sum(p * np.log(p) for p in dense**2 if p > 1e-30), abs=1e-10
    )


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_compress_truncates_across_sectors_as_the_dense_svd(dtype):
    psi = MPS.random(8, 2, bond_dim=8, seed=3, dtype=dtype, charge=0)
    v = _vec(psi)
    dense = psi.dense()
    w_sym = psi.compress(max_bond=3)
    w_dense = dense.compress(max_bond=3)
    assert psi.symmetric and max(psi.bond_dims) <= 3
    assert w_sym == pytest.approx(w_dense, rel=1e-8)
    a, b = _vec(psi), _vec(dense)
    assert abs(np.vdot(a, b)) / (np.linalg.norm(a) * np.linalg.norm(b)) == pytest.approx(1.0, abs=1e-10)
    assert abs(np.vdot(v, a)) / np.linalg.norm(a) < 1.0


def test_overlap_of_symmetric_states():
    a = MPS.random(6, 2, bond_dim=4, seed=1, charge=1)
    b = MPS.random(6, 2, bond_dim=5, seed=2, charge=1)
    c = MPS.random(6, 2, bond_dim=5, seed=2, charge=0)
    assert float(t4a.overlap(a, b)) == pytest.approx(np.vdot(_vec(a), _vec(b)).real, abs=1e-13)
    assert float(t4a.overlap(a, c)) == 0.0
    assert float(t4a.overlap(a.dense(), b)) == pytest.approx(np.vdot(_vec(a), _vec(b)).real, abs=1e-13)


def test_product_state_with_conserve():
    psi = MPS.product_state([0, 1, 1, 0, 0], conserve="Sz")
    want = MPS.product_state([0, 1, 1, 0, 0])
    np.testing.assert_array_equal(_vec(psi), _vec(want))
    assert psi.sector == {"Sz": 0.5} and psi.bond_dims == [1, 1, 1, 1]
    spin1 = MPS.product_state([0, 2, 1], d=3, conserve="Sz")
    assert spin1.sector == {"Sz": 0.0}
    parity = MPS.product_state([1, 1, 1], local="pauli", conserve="parity")
    assert parity.sector == {"parity": 1.0}


@pytest.mark.parametrize("model,conserve", [("xxz", "Sz"), ("tfim", "parity")])
def test_expectation_of_a_symmetric_mpo_contracts_blocks_and_equals_the_dense_value(model, conserve):
    L = 6
    if model == "xxz":
        H = models.xxz(L, Jz=0.7, h=0.3, conserve="Sz")
        psi = MPS.random(L, 2, bond_dim=5, seed=4, charge=1)
    else:
        H = models.tfim(L, g=0.8, conserve="parity")
        psi = MPS.random(L, 2, bond_dim=5, seed=4, charge=1, local="pauli")
    assert H.conserve == conserve
    v = _vec(psi)
    want = np.vdot(v, np.asarray(H.to_dense()) @ v).real
    t4a.reset_fallback_stats()
    got = float(t4a.expectation(psi, H))
    assert got == pytest.approx(want, abs=1e-12)
    assert not t4a.fallback_stats()  # no operand was densified


def test_from_opsum_with_conserve_builds_the_same_tensors():
    a = models.heisenberg(6, h=0.2)
    b = models.heisenberg(6, h=0.2, conserve="Sz")
    for x, y in zip(a.tensors, b.tensors):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert a.conserve is None and b.conserve == "Sz"


@pytest.mark.parametrize("ext", ["npz", "arrow"])
def test_save_and_load_keep_the_sectors(tmp_path, ext):
    if ext == "arrow":
        pytest.importorskip("pyarrow")
    psi = MPS.random(6, 2, bond_dim=4, seed=5, charge=-1, dtype=tf.complex128)
    path = tmp_path / f"psi.{ext}"
    psi.save(path)
    back = MPS.load(path)
    assert back.symmetric and back.sector == {"Sz": -1.0} and back.bond_dims == psi.bond_dims
    np.testing.assert_array_equal(_vec(back), _vec(psi))
    assert [t.legs for t in back.tensors] == [t.legs for t in psi.tensors]


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_gradients_through_measurements_and_canonical_forms(dtype):
    psi = MPS.random(4, 2, bond_dim=3, seed=6, dtype=dtype, charge=0)

    def energy(p):
        q = MPS(p.tensors)
        return tf.real(q.correlation("S+", "S-", 0, 2)) + tf.real(q.expect("Sz", 1))

    def canonical(p):
        q = MPS(p.tensors).canonicalize(2)
        return tf.real(q.correlation("Sz", "Sz", 1, 3)) + tf.real(q.norm())

    check_grads(energy, (psi,), order=2)
    check_grads(canonical, (psi,), order=2)
    g = tidu.grad(energy)(psi)
    assert isinstance(g, MPS) and all(isinstance(t, t4a.SymmetricTensor) for t in g.tensors)


def _exact_in_sector(L: int, Jz: float, h: float, sz: float) -> float:
    H = sum(
        0.5 * (_op(SP, i, L) @ _op(SP.T, i + 1, L) + _op(SP.T, i, L) @ _op(SP, i + 1, L))
        + Jz * _op(SZ, i, L) @ _op(SZ, i + 1, L)
        for i in range(L - 1)
    )
    H = H - h * sum(_op(SZ, i, L) for i in range(L))
    idx = np.flatnonzero(np.isclose(_sz_of_basis(L), sz))
    return float(np.linalg.eigvalsh(H[np.ix_(idx, idx)])[0])


def test_dmrg_from_a_symmetric_random_state_stays_in_its_sector_and_returns_a_symmetric_state(tmp_path):
    L, Jz, h = 10, 0.7, 0.3
    H = models.xxz(L, Jz=Jz, h=h, conserve="Sz")
    psi0 = MPS.random(L, 2, bond_dim=4, seed=9, charge=2)
    res = t4a.dmrg(H, psi0, max_bond=64, cutoff=0.0, tol=1e-12)
    assert res.energy == pytest.approx(_exact_in_sector(L, Jz, h, 2.0), abs=1e-10)
    assert res.sector == {"Sz": 2.0} and res.state.symmetric and res.state.sector == {"Sz": 2.0}
    assert res.history[-1].blocks is not None
    assert float(t4a.expectation(res.state, H)) == pytest.approx(res.energy, abs=1e-10)
    v = _vec(res.state)
    assert np.abs(v[~np.isclose(_sz_of_basis(L), 2.0)]).max() == 0.0
    path = tmp_path / "gs.npz"
    res.state.save(path)
    again = t4a.dmrg(H, MPS.load(path), max_bond=64, cutoff=0.0, tol=1e-12, sweeps=2)
    assert again.energy == pytest.approx(res.energy, abs=1e-10)
    # the default: an MPO marked conserve="Sz" runs in the lowest-|Sz| sector
    default = t4a.dmrg(H, max_bond=64, cutoff=0.0, tol=1e-12)
    assert default.sector == {"Sz": 0.0} and default.state.symmetric
    assert default.energy == pytest.approx(_exact_in_sector(L, Jz, h, 0.0), abs=1e-10)
    dense = t4a.dmrg(H, psi0, conserve="none", max_bond=64, cutoff=0.0, tol=1e-12)
    assert not dense.state.symmetric


@pytest.mark.parametrize("conserve", [None, "N", "N,Sz"])
def test_random_state_takes_its_dimension_from_the_local_space(conserve):
    """``MPS.random(..., local="electron")`` has four states per site, as ``product_state``: it
    made two (dense), or refused a conserved one with advice to pass what was passed."""
    psi = t4a.MPS.random(4, local="electron", conserve=conserve, seed=3)
    assert psi.phys_dims == [4, 4, 4, 4]
    assert abs(float(psi.norm()) - 1.0) < 1e-12
    assert t4a.MPS.random(3, local="spin-1").phys_dims == [3, 3, 3]
