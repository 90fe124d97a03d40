import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import models

from .conftest import sparse_hamiltonian

NAMES = {
    "spin-1/2": ["Sx", "Sy", "Sz", "S+", "S-", "Id"],
    "pauli": ["X", "Y", "Z", "Id"],
    "spin-1": ["Sx", "Sy", "Sz", "S+", "S-", "Id"],
}


@settings(max_examples=25, deadline=None)
@given(data=st.data(), L=st.integers(1, 5), local=st.sampled_from(sorted(NAMES)), nterms=st.integers(1, 12))
def test_from_opsum_matches_kron_sum(data, L, local, nterms):
    os = t4a.OpSum()
    for _ in range(nterms):
        k = data.draw(st.integers(1, 3))
        term = [data.draw(st.floats(-2, 2, allow_nan=False))]
        for _ in range(k):
            term += [data.draw(st.sampled_from(NAMES[local])), data.draw(st.integers(0, L - 1))]
        os += tuple(term)
    H = t4a.MPO.from_opsum(os, L, local)
    want = sparse_hamiltonian(os, L, local).toarray()
    np.testing.assert_allclose(np.asarray(H.to_dense()), want, atol=1e-11)
    d = t4a.local_space(local).dim
    assert all(b <= min(d ** (2 * (i + 1)), d ** (2 * (L - i - 1))) for i, b in enumerate(H.bond_dims))


def test_model_bond_dimensions():
    assert max(models.heisenberg(10).bond_dims) == 5
    assert max(models.heisenberg(10, J=1.0, Jz=0.5, h=0.3).bond_dims) == 5
    assert models.tfim(10, g=0.7).bond_dims == [3] * 9
    assert max(models.heisenberg(6, spin="1").bond_dims) == 5
    assert models.heisenberg(10).dtype == tf.float64  # S+S- form keeps the MPO real


@pytest.mark.parametrize("L", [8, 30])
def test_exponential_long_range_compresses_to_three(L):
    lam = 0.6
    os = t4a.OpSum()
    for i in range(L):
        for j in range(i + 1, L):
            os += (lam ** (j - i), "Sz", i, "S+", j)
            os += (lam ** (j - i), "Sz", i, "S-", j)
    H = t4a.MPO.from_opsum(os, L)
    assert max(H.bond_dims) == 3
    if L <= 8:
        np.testing.assert_allclose(np.asarray(H.to_dense()), sparse_hamiltonian(os, L).toarray().real, atol=1e-10)


def test_sy_sy_is_real_and_sites_in_any_order():
    os = t4a.OpSum()
    os += (1.0, "Sy", 2, "Sy", 0)
    os += ("Sz", 1)  # coefficient 1
    H = t4a.MPO.from_opsum(os, 3)
    assert H.dtype == tf.float64
    np.testing.assert_allclose(np.asarray(H.to_dense()), sparse_hamiltonian(os, 3).toarray().real, atol=1e-14)


def test_models_match_their_definitions():
    L = 5
    H = np.asarray(models.heisenberg(L, J=0.8, Jz=1.3, h=0.4).to_dense())
    sp = t4a.local_space("spin-1/2")
    os = t4a.OpSum()
    for i in range(L - 1):
        for name, c in (("Sx", 0.8), ("Sy", 0.8), ("Sz", 1.3)):
            os += (c, name, i, name, i + 1)
    for i in range(L):
        os += (-0.4, "Sz", i)
    np.testing.assert_allclose(H, sparse_hamiltonian(os, L).toarray().real, atol=1e-13)
    os = t4a.OpSum()
    for i in range(L - 1):
        os += (-0.9, "Z", i, "Z", i + 1)
    for i in range(L):
        os += (-1.7, "X", i)
    np.testing.assert_allclose(
        np.asarray(models.tfim(L, J=0.9, g=1.7).to_dense()),
        sparse_hamiltonian(os, L, "pauli").toarray().real,
        atol=1e-13,
    )
    np.testing.assert_allclose(np.asarray(models.xxz(L, Jz=1.3, J=0.8, h=0.4).to_dense()), H, atol=1e-13)
    assert sp.dim == 2


def test_expectation_against_dense():
    H = models.heisenberg(6, Jz=0.7, h=0.2)
    psi = t4a.MPS.random(6, bond_dim=3, seed=4, dtype=tf.complex128)
    v = np.asarray(psi.to_dense())
    want = (np.vdot(v, np.asarray(H.to_dense()) @ v) / np.vdot(v, v)).real
    np.testing.assert_allclose(float(t4a.expectation(psi, H)), want, atol=1e-12)


def test_is_hermitian():
    assert models.heisenberg(6).is_hermitian()
    os = t4a.OpSum()
    os += (1.0, "S+", 0, "S-", 1)
    assert not t4a.MPO.from_opsum(os, 3).is_hermitian()
    os += (1.0, "S+", 1, "S-", 0)
    assert t4a.MPO.from_opsum(os, 3).is_hermitian()
    os = t4a.OpSum()
    os += (1j, "Sz", 0)
    assert not t4a.MPO.from_opsum(os, 2).is_hermitian()


def test_traced_couplings_give_a_linear_symbolic_mpo():
    L = 5

    def energy_of(J):
        H = models.heisenberg(L, J=J, Jz=1.0, h=0.3 * J)
        return tf.sum(tf.diagonal(H.to_dense()) * tf.asarray(np.arange(2**L) / 2**L))

    J = tf.asarray(0.7)
    v, g = tidu.value_and_grad(energy_of)(J)
    eps = 1e-6
    fd = (float(energy_of(tf.asarray(0.7 + eps))) - float(energy_of(tf.asarray(0.7 - eps)))) / (2 * eps)
    np.testing.assert_allclose(float(g), fd, rtol=1e-7, atol=1e-9)

    def mpo_of(J):
        return models.heisenberg(4, J=J).tensors

    seen = {}

    def bond_dims_inside(J):
        H = models.heisenberg(6, J=J, h=J)
        seen["dims"] = H.bond_dims
        return tf.sum(H.tensors[2])

    tidu.grad(bond_dims_inside)(J)
    assert max(seen["dims"]) == 5


def test_mpo_is_a_pytree():
    H = models.tfim(4)
    leaves, tree = tidu.tree_flatten(H)
    again = tidu.tree_unflatten(tree, leaves)
    assert isinstance(again, t4a.MPO) and again.local == "pauli" and again.bond_dims == H.bond_dims


def test_opsum_and_mpo_errors():
    os = t4a.OpSum()
    with pytest.raises(t4a.EmptyOpSumError):
        t4a.MPO.from_opsum(os, 4)
    os += (1.0, "Sz", 0, "Sq", 1)
    with pytest.raises(t4a.UnknownOperatorError, match="'Sq'.*valid operators: Id, S\\+, S-, Sx, Sy, Sz"):
        t4a.MPO.from_opsum(os, 4)
    with pytest.raises(t4a.UnknownOperatorError, match="valid operators: Id, X, Y, Z"):
        t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Sz", 0)]), 4, "pauli")
    # (the list grows by the spaces other calls registered, e.g. thermal states' "pauli+ancilla")
    with pytest.raises(t4a.UnknownLocalSpaceError, match=r"valid local spaces: .*pauli,.*spin-1, spin-1/2"):
        t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Z", 0)]), 4, "qubit")
    with pytest.raises(t4a.SiteOutOfRangeError, match="site 4 .* outside 0..3"):
        t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Sz", 0, "Sz", 4)]), 4)
    with pytest.raises(t4a.SiteOutOfRangeError, match="negative"):
        t4a.OpSum([(1.0, "Sz", -1)])
    with pytest.raises(t4a.OpSumTermError):
        t4a.OpSum([(1.0, "Sz")])
    with pytest.raises(t4a.OpSumTermError):
        t4a.OpSum([(1.0, 3, 0)])
    with pytest.raises(t4a.OpSumTermError):
        t4a.OpSum([(1.0, "Sz", 0.5)])
    with pytest.raises(t4a.BondDimensionError):
        t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Sz", 0)]), 0)
    with pytest.raises(t4a.DimensionMismatchError, match="physical dimension mismatch at site 0"):
        t4a.expectation(t4a.MPS.random(4, d=3), models.heisenberg(4))
    with pytest.raises(t4a.DimensionMismatchError, match="4 sites but the MPO has 5"):
        t4a.expectation(t4a.MPS.random(4), models.heisenberg(5))
    with pytest.raises(t4a.Tensor4allError, match="valid spins"):
        models.heisenberg(4, spin="3/2")
