"""Review of the core MPS API (2026-12-01): random states of long chains, norms of differences of
nearly equal states, and a dense vector of a huge chain; exact values from dense vectors."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a


@pytest.mark.parametrize("L, bond_dim, kw", [(200, 32, {}), (700, 8, {}), (2000, 8, {}), (200, 16, {"conserve": "Sz"})])
def test_random_states_of_long_chains_are_normalized(L, bond_dim, kw):
    """``MPS.random(200, bond_dim=32)`` had norm 0.0 (site 0 all zeros: the norm piled up in it
    during the canonical sweep and underflowed); L = 2000 raised NonFiniteError; the symmetric
    state of 700 sites was NaN."""
    psi = t4a.MPS.random(L, bond_dim=bond_dim, seed=0, **kw)
    assert abs(float(psi.norm()) - 1.0) < 1e-12
    for a in psi.tensors[1:4]:  # right-orthonormal sites, as documented
        m = np.asarray(a.dense() if hasattr(a, "dense") else a)
        m = m.reshape(m.shape[0], -1)
        np.testing.assert_allclose(m @ m.conj().T, np.eye(m.shape[0]), atol=1e-12)
    assert abs(float(np.real(np.asarray(psi.expect("Sz", 3))))) <= 0.5


def test_a_symmetric_random_state_of_700_sites():
    psi = t4a.MPS.random(700, bond_dim=8, seed=0, conserve="Sz")
    assert abs(float(psi.norm()) - 1.0) < 1e-12


@pytest.mark.parametrize("kw", [{}, {"conserve": "Sz"}, {"dtype": np.complex128}])
def test_norm_of_a_difference_of_nearly_equal_states(kw):
    """``||psi - (1 + 1e-9) psi||`` came out 1.1e-8 (11 times too large: sqrt(<w|w>) cancels to
    sqrt(eps)); ``(psi - psi).norm()`` was NaN and ``normalize`` wrote NaN into every site."""
    psi = t4a.MPS.random(8, bond_dim=6, seed=1, **kw)
    w = psi - psi * (1 + 1e-9)
    exact = np.linalg.norm(np.asarray(psi.to_dense())) * 1e-9
    assert abs(float(w.norm()) / exact - 1.0) < 1e-5
    z = psi - psi
    n = float(z.norm())
    assert np.isfinite(n) and n < 1e-14
    w.normalize()
    assert abs(np.linalg.norm(np.asarray(w.to_dense())) - 1.0) < 1e-5
    assert all(np.isfinite(np.asarray(t.dense() if hasattr(t, "dense") else t)).all() for t in w.tensors)


def test_norm_of_ordinary_states_is_unchanged():
    psi = t4a.MPS.random(10, bond_dim=8, seed=3, dtype=np.complex128)
    v = np.asarray(psi.to_dense())
    for s in (psi, psi * 3.0, psi + psi, psi - 0.5 * psi):
        assert abs(float(s.norm()) - np.linalg.norm(np.asarray(s.to_dense()))) < 1e-13 * max(1.0, np.linalg.norm(v))


def test_from_dense_of_a_huge_chain_is_a_typed_error():
    """``MPS.from_dense(np.ones(4), 10**6)`` raised Python's bare "Exceeds the limit (4300 digits) for
    integer string conversion"; L = 3000 printed a 900-digit number."""
    for L in (10**6, 3000):
        with pytest.raises(t4a.DimensionMismatchError, match=r"expected d\*\*L = 2\*\*\d+ = about 10\*\*\d+$"):
            t4a.MPS.from_dense(np.ones(4), L)


def test_the_parity_hint_of_a_fermionic_space_fits_it():
    """The electron (d = 4) was told to "pass local='pauli' (d = 2)"."""
    with pytest.raises(t4a.InvalidOptionError, match=r"conserve='N' fixes a fermion number's parity") as info:
        t4a.MPS.random(3, conserve="parity", local="electron")
    assert "pauli" not in str(info.value)
    with pytest.raises(t4a.InvalidOptionError, match=r"pass local='pauli' \(d = 2\)$"):
        t4a.MPS.random(3, conserve="parity", local="spin-1/2")
