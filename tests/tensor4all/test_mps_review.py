"""Review of the core MPS API (2026-12-01): random states of long chains, norms of differences of
nearly equal states, and a dense vector of a huge chain; exact values from dense vectors."""

from __future__ import annotations

import warnings

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
    """The electron (d = 4) was told to "pass local='pauli' (d = 2)"; once a thermal state had
    registered "pauli+ancilla" (d = 4), to pass that."""
    t4a.thermal_state(t4a.models.tfim(2, g=1.0), 0.1, dbeta=0.1)  # registers "pauli+ancilla"
    with pytest.raises(t4a.InvalidOptionError, match=r"conserve='N' fixes a fermion number's parity") as info:
        t4a.MPS.random(3, conserve="parity", local="electron")
    assert "pauli" not in str(info.value)
    with pytest.raises(t4a.InvalidOptionError, match=r"pass local='pauli' \(d = 2\)$"):
        t4a.MPS.random(3, conserve="parity", local="spin-1/2")


# ---- a scalar factor beyond the float range of one site (a later review) -----------------------
@pytest.mark.parametrize("conserve", [None, "Sz"])
def test_a_large_factor_is_spread_over_the_sites(conserve):
    """``(a * 1e300) * 1e10`` put 1e310 on site 0 (an infinite site): ``expectation`` and
    ``to_dense`` gave NaN. The factor's power of two now goes to site 0 while that stays in range,
    else over all sites; ratios are the state's, and a product within range keeps its bits."""
    kw = {"conserve": conserve, "charge": 0} if conserve else {}
    a = t4a.MPS.random(6, 2, bond_dim=4, seed=1, **kw)
    H = t4a.models.heisenberg(6, conserve=conserve)
    want = float(np.real(complex(t4a.expectation(a, H))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow anywhere
        big = (a * 1e300) * 1e10
        small = (a / 1e300) / 1e20
        assert float(np.real(complex(t4a.expectation(big, H)))) == pytest.approx(want, rel=1e-12)
        assert float(np.real(complex(t4a.expectation(small, H)))) == pytest.approx(want, rel=1e-12)
        assert all(np.isfinite(np.asarray(b)).all() for t in big.tensors for b in _blocks(t))
    three = a * 3.0  # in range: site 0 alone, the same bits as before
    np.testing.assert_array_equal(np.asarray(a.dense().tensors[0]) * 3.0, np.asarray(three.dense().tensors[0]))


def test_a_float32_state_times_1e39_stays_finite():
    a = t4a.MPS.random(4, bond_dim=2, seed=1)
    a32 = t4a.MPS([np.asarray(t).astype(np.float32) for t in a.tensors])
    b = a32 * 1e39  # float32's largest is 3.4e38
    assert all(np.asarray(t).dtype == np.float32 and np.isfinite(np.asarray(t)).all() for t in b.tensors)
    H = t4a.models.heisenberg(4)
    assert float(t4a.expectation(b, H)) == pytest.approx(float(t4a.expectation(a, H)), rel=1e-5)


@pytest.mark.parametrize("c", [2.225073858507e-311, 2.225073858507e-311 + 0j, -5e-324 + 4e-320j, 1.7e308])
def test_a_factor_at_the_ends_of_the_float_range(c):
    """A subnormal factor raised Python's OverflowError (``2.0 ** 1032``, hypothesis found
    2.2e-311): the state times ``c`` is the dense state times ``c``, the sites finite."""
    a = t4a.MPS.random(3, 2, bond_dim=2, seed=4)
    b = a * c
    assert all(np.isfinite(np.asarray(t)).all() for t in b.tensors)
    want = np.asarray(a.to_dense()).astype(complex) * complex(c)
    got = np.asarray(b.to_dense())
    # subnormal amplitudes carry an absolute rounding of 2.5e-324 per operation, in both the
    # reference and the contraction: 1e-322 is a few dozen of those units, far below the values
    assert np.allclose(got, want, rtol=1e-12, atol=1e-322)


def _blocks(t):
    return [np.asarray(b) for b in t.blocks.values()] if hasattr(t, "blocks") else [np.asarray(t)]
