import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tenferro as tf
import tidu
import tensor4all as t4a


def dense(psi):
    return np.asarray(psi.to_dense())


@settings(max_examples=15, deadline=None)
@given(L=st.integers(1, 6), d=st.integers(1, 3), chi=st.integers(1, 5), seed=st.integers(0, 100), cplx=st.booleans())
def test_random_is_normalized_and_dense_roundtrip(L, d, chi, seed, cplx):
    psi = t4a.MPS.random(L, d=d, bond_dim=chi, seed=seed, dtype=tf.complex128 if cplx else tf.float64)
    assert psi.L == L and len(psi.bond_dims) == L - 1
    assert all(b <= chi for b in psi.bond_dims)
    v = dense(psi)
    assert v.shape == (d**L,)
    np.testing.assert_allclose(np.linalg.norm(v), 1.0, atol=1e-12)
    np.testing.assert_allclose(float(psi.norm()), 1.0, atol=1e-12)
    back = t4a.MPS.from_dense(v, L, d=d)
    np.testing.assert_allclose(dense(back), v, atol=1e-12)


def test_dense_order_is_kron_with_site0_most_significant():
    psi = t4a.MPS.product_state([0, 1, 1], d=2)
    e0, e1 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    np.testing.assert_array_equal(dense(psi), np.kron(np.kron(e0, e1), e1))
    psi = (
        t4a.MPS.product_state([np.array([0.6, 0.8]), 2], d=3)
        if False
        else t4a.MPS.product_state([np.array([0.6, 0.8]), 1])
    )
    np.testing.assert_allclose(dense(psi), np.kron([0.6, 0.8], e1))


def test_from_dense_truncates_and_compress_reports_weight():
    rng = np.random.default_rng(0)
    v = rng.standard_normal(2**8)
    v /= np.linalg.norm(v)
    psi = t4a.MPS.from_dense(v, 8, max_bond=4)
    assert max(psi.bond_dims) == 4
    full = t4a.MPS.from_dense(v, 8)
    assert full.bond_dims == [2, 4, 8, 16, 8, 4, 2]
    w = full.compress(max_bond=4)
    assert max(full.bond_dims) == 4
    err = np.linalg.norm(dense(full) - v) ** 2
    assert 0 < w and err <= w + 1e-12  # discarded weights bound the squared error
    # lossless compression of a redundant MPS
    psi = t4a.MPS.random(6, bond_dim=3, seed=1)
    doubled = t4a.MPS(
        [
            tf.concatenate([t, t], axis=2)
            if i == 0
            else (
                tf.concatenate([t, t], axis=0) / 2
                if i == 5
                else tf.asarray(
                    np.block(
                        [
                            [
                                [np.asarray(t)[:, s, :], 0 * np.asarray(t)[:, s, :]],
                                [0 * np.asarray(t)[:, s, :], np.asarray(t)[:, s, :]],
                            ]
                            for s in range(2)
                        ]
                    ).transpose(1, 0, 2)
                )
            )
            for i, t in enumerate(psi.tensors)
        ]
    )
    np.testing.assert_allclose(dense(doubled), dense(psi), atol=1e-12)
    assert doubled.compress(cutoff=1e-14) < 1e-14
    assert doubled.bond_dims == psi.bond_dims
    np.testing.assert_allclose(dense(doubled), dense(psi), atol=1e-12)


@pytest.mark.parametrize("center", [0, 2, 5])
def test_canonicalize_is_mixed_canonical(center):
    psi = t4a.MPS.random(6, bond_dim=4, seed=3, dtype=tf.complex128)
    v = dense(psi)
    psi.canonicalize(center)
    np.testing.assert_allclose(dense(psi), v, atol=1e-12)
    for i, t in enumerate(psi.tensors):
        a = np.asarray(t)
        if i < center:
            m = a.reshape(-1, a.shape[2], order="F")
            np.testing.assert_allclose(m.conj().T @ m, np.eye(a.shape[2]), atol=1e-12)
        elif i > center:
            m = a.reshape(a.shape[0], -1, order="F")
            np.testing.assert_allclose(m @ m.conj().T, np.eye(a.shape[0]), atol=1e-12)


def test_measurements_against_dense():
    psi = t4a.MPS.random(5, bond_dim=4, seed=7, dtype=tf.complex128)
    psi.tensors  # noqa: B018
    scaled = t4a.MPS([t * 3.0 if i == 2 else t for i, t in enumerate(psi.tensors)])
    v = dense(scaled)
    sp = t4a.local_space("spin-1/2")

    def op_at(m, i):
        mats = [np.eye(2)] * 5
        mats[i] = m
        out = np.ones((1, 1))
        for x in mats:
            out = np.kron(out, x)
        return out

    nrm = np.vdot(v, v).real
    for name in ("Sz", "Sx", "Sy"):
        want = np.vdot(v, op_at(sp.matrix(name), 3) @ v).real / nrm
        np.testing.assert_allclose(float(scaled.expect(name, 3)), want, atol=1e-12)
    want = np.vdot(v, op_at(sp.matrix("Sz"), 1) @ op_at(sp.matrix("Sx"), 4) @ v) / nrm
    np.testing.assert_allclose(complex(scaled.correlation("Sz", "Sx", 1, 4)), want, atol=1e-12)
    want = np.vdot(v, op_at(sp.matrix("S+") @ sp.matrix("S-"), 2) @ v) / nrm
    np.testing.assert_allclose(complex(scaled.correlation("S+", "S-", 2, 2)), want, atol=1e-12)
    np.testing.assert_allclose(complex(t4a.overlap(psi, scaled)), np.vdot(dense(psi), v), atol=1e-12)
    np.testing.assert_allclose(float(scaled.norm()), np.sqrt(nrm), atol=1e-12)
    scaled.normalize()
    np.testing.assert_allclose(float(scaled.norm()), 1.0, atol=1e-12)


def test_entanglement_entropy_against_dense_svd():
    psi = t4a.MPS.random(6, bond_dim=5, seed=2)
    v = dense(psi)
    ents = psi.entanglement_entropy()
    for b in range(5):
        s = np.linalg.svd(v.reshape(2 ** (b + 1), -1), compute_uv=False)
        p = s**2 / np.sum(s**2)
        p = p[p > 1e-300]
        np.testing.assert_allclose(ents[b], -np.sum(p * np.log(p)), atol=1e-10)
        np.testing.assert_allclose(psi.entanglement_entropy(b), ents[b], atol=1e-12)
    assert t4a.MPS.product_state([0, 1, 0]).entanglement_entropy() == [0.0, 0.0]


def test_mps_is_a_pytree():
    psi = t4a.MPS.random(4, bond_dim=2, seed=0)
    leaves, tree = tidu.tree_flatten(psi)
    assert len(leaves) == 4
    again = tidu.tree_unflatten(tree, leaves)
    assert isinstance(again, t4a.MPS) and again.bond_dims == psi.bond_dims
    doubled = tidu.tree_map(lambda t: 2 * t, psi)
    np.testing.assert_allclose(float(doubled.norm()), 2.0**4 * float(psi.norm()), atol=1e-12)


def test_bad_input_is_typed():
    with pytest.raises(t4a.BondDimensionError, match="bond_dim"):
        t4a.MPS.random(4, bond_dim=0)
    with pytest.raises(t4a.BondDimensionError, match="max_bond"):
        t4a.MPS.from_dense(np.ones(4), 2, max_bond=-1)
    with pytest.raises(t4a.DimensionMismatchError, match="d\\*\\*L"):
        t4a.MPS.from_dense(np.ones(5), 2)
    with pytest.raises(t4a.DimensionMismatchError, match="bond 0"):
        t4a.MPS([np.ones((1, 2, 3)), np.ones((2, 2, 1))])
    with pytest.raises(t4a.DimensionMismatchError, match="3 indices"):
        t4a.MPS([np.ones((1, 2))])
    psi = t4a.MPS.random(3)
    with pytest.raises(t4a.SiteOutOfRangeError, match="outside 0..2"):
        psi.expect("Sz", 3)
    with pytest.raises(t4a.SiteOutOfRangeError):
        psi.entanglement_entropy(2)
    with pytest.raises(t4a.UnknownOperatorError, match="valid operators: Id, S\\+, S-, Sx, Sy, Sz"):
        psi.expect("Sq", 0)
    with pytest.raises(t4a.UnknownLocalSpaceError, match="valid local spaces"):
        psi.expect("Sz", 0, local="spin-7")
    with pytest.raises(t4a.DimensionMismatchError):
        t4a.overlap(psi, t4a.MPS.random(4))
    with pytest.raises(t4a.SiteOutOfRangeError):
        t4a.MPS.product_state([0, 2])
    assert issubclass(t4a.SiteOutOfRangeError, t4a.Tensor4allError)
