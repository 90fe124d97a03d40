"""Issue 21, tensor networks at the ends of the float range: a scale-free Hermiticity
test (NaN is non-finite, not non-Hermitian; couplings too large are a range error;
energies, gradients and progress reports scale with the couplings), no division by a
zero norm, and huge and tiny states that give finite, right numbers. Each test names the class of defect it guards; all of them failed before the fix."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import models

from .conftest import ground_energy

NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def _no_numpy_warnings():
    """No RuntimeWarning (overflow, invalid value, divide by zero) leaks from these calls."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def _raises(exc, fragment, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert fragment in str(info.value), str(info.value)
    assert isinstance(info.value, t4a.Tensor4allError)
    return info.value


def _with_nan(psi_or_H, site=1):
    """The same chain with NaN in one site tensor, built as tidu rebuilds pytrees (the
    constructors refuse NaN, so this is how a NaN state can reach a method)."""
    leaves = [np.asarray(t).copy() for t in psi_or_H.tensors]
    leaves[site][(0,) * leaves[site].ndim] = NAN
    return type(psi_or_H)._from_leaves(
        *(([psi_or_H.local] if isinstance(psi_or_H, t4a.MPO) else []) + [[tf.asarray(x) for x in leaves]])
    )


def _zero_mps(L=3):
    return t4a.MPS([np.zeros((1, 2, 1))] * L)


# =============================================================================================
# 2. Hermiticity is scale-free; NaN is non-finite, not non-Hermitian
# =============================================================================================
@pytest.mark.parametrize("J", [1e-200, 1e200])
def test_hermiticity_does_not_depend_on_the_scale(J):
    assert models.heisenberg(8, J=J).is_hermitian()
    assert models.tfim(6, J=J, g=0.5 * J).is_hermitian()
    raising = t4a.MPO.from_opsum(t4a.OpSum() + (J, "S+", 0, "Sz", 1) + (J, "Sz", 0), 3)
    assert not raising.is_hermitian()


def test_non_finite_hamiltonian_is_reported_as_such():
    bad = _with_nan(models.heisenberg(4))
    _raises(t4a.NonFiniteError, "MPO: site tensor 1 holds NaN or infinity", bad.is_hermitian)
    err = _raises(t4a.NonFiniteError, "dmrg: the Hamiltonian (MPO): site tensor 1 holds NaN", t4a.dmrg, bad, max_bond=4)
    assert not isinstance(err, t4a.NonHermitianError)
    _raises(t4a.NonFiniteError, "MPO site tensor 0 holds NaN or infinity", t4a.MPO, [np.full((1, 2, 2, 1), NAN)])
    H = t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "S+", 0, "S-", 1), 2)  # still refused: non-Hermitian
    _raises(t4a.NonHermitianError, "dmrg needs a Hermitian Hamiltonian", t4a.dmrg, H, max_bond=4)


def test_huge_couplings_are_refused_with_a_range_error():
    # the choice for J = 1e200: refused (not mislabelled non-Hermitian): <H^2> of the
    # variance would overflow; the message says how to rescale
    H = models.heisenberg(8, J=1e200)
    assert H.is_hermitian()
    _raises(t4a.ValueRangeError, "divide the couplings by a common factor", t4a.dmrg, H, max_bond=8)
    assert isinstance(pytest.raises(OverflowError, t4a.dmrg, H, max_bond=8).value, t4a.ValueRangeError)


@pytest.mark.parametrize(
    "J,two_site",
    [(1e-200, True), (1e-200, False), (1e-20, True), (1e-20, False), (1e-12, True), (1e-12, False), (1e100, False)],
)
def test_dmrg_energy_scales_with_the_couplings(J, two_site):
    # before: J <= 1e-10 gave energies off in the 4th digit or worse (absolute eigensolver
    # thresholds), J >= 1e150 an overflow reported as "non-Hermitian"
    exact = ground_energy(models.heisenberg_opsum(8), 8)
    res = t4a.dmrg(models.heisenberg(8, J=J), max_bond=16, sweeps=6, tol=1e-10 * J, two_site=two_site)
    assert res.energy / J == pytest.approx(exact, abs=1e-9)
    assert abs(res.variance) / J / J < 1e-8
    assert all(math.isfinite(r.energy / J) for r in res.history)


@pytest.mark.parametrize("J", [1e-200, 1e-20])
def test_hellmann_feynman_gradient_scales_with_the_couplings(J):
    exact = ground_energy(models.heisenberg_opsum(8), 8)
    e, g = tidu.value_and_grad(
        lambda j: t4a.dmrg(models.heisenberg(8, J=j), max_bond=16, sweeps=6, tol=1e-10 * J).energy
    )(tf.asarray(J))
    assert float(g) == pytest.approx(float(e) / J, rel=1e-9)  # E is homogeneous of degree 1 in J
    assert float(g) == pytest.approx(exact, abs=1e-9)


def test_progress_reports_energies_in_the_callers_units():
    seen = []
    t4a.dmrg(models.heisenberg(6, J=1e-30), max_bond=8, sweeps=2, tol=0.0, progress=lambda u: seen.append(u.energy))
    assert seen and all(-1e-29 < e < 0 for e in seen)


# =============================================================================================
# 3. no division by a zero norm; huge and tiny states give finite, right numbers
# =============================================================================================
@pytest.mark.parametrize(
    "call,fragment",
    [
        (lambda z: z.normalize(), "MPS.normalize: the state has norm 0"),
        (lambda z: z.expect("Sz", 0), "MPS.expect: the state has norm 0"),
        (lambda z: z.correlation("Sz", "Sz", 0, 2), "MPS.correlation: the state has norm 0"),
        (lambda z: t4a.expectation(z, models.heisenberg(3)), "expectation: the state has norm 0"),
        (lambda z: z.schmidt_values(), "MPS.schmidt_values: the state has norm 0"),
        (lambda z: z.entanglement_entropy(), "no Schmidt values"),
        (lambda z: t4a.dmrg(models.heisenberg(3), z, max_bond=4), "dmrg: the start state psi0 has norm 0"),
        (lambda z: t4a.MPS.product_state([[0.0, 0.0], 0, 1]).normalize(), "the state has norm 0"),
    ],
)
def test_zero_norm_states_raise_instead_of_nan(call, fragment):
    _raises(t4a.ZeroNormError, fragment, call, _zero_mps())


def test_zero_norm_under_tidu_grad_and_the_zero_state_itself_are_fine():
    z = _zero_mps()
    assert float(z.norm()) == 0.0 and float(tf.real(t4a.overlap(z, z))) == 0.0
    with pytest.raises(t4a.ZeroNormError):
        tidu.grad(lambda p: t4a.expectation(p, models.heisenberg(3)))(z)


@pytest.mark.parametrize("scale", [1e-200, 1e-100, 1e100, 1e200])
def test_states_near_the_ends_of_the_float_range(scale):
    psi = t4a.MPS.random(6, bond_dim=3, seed=1)
    big = t4a.MPS([np.asarray(t) * scale for t in psi.tensors])  # norm scale**6: beyond the float range
    H = models.heisenberg(6)
    assert float(big.expect("Sz", 2)) == pytest.approx(float(psi.expect("Sz", 2)), abs=1e-12)
    assert float(big.correlation("Sx", "Sx", 1, 4)) == pytest.approx(
        float(psi.correlation("Sx", "Sx", 1, 4)), abs=1e-12
    )
    assert float(t4a.expectation(big, H)) == pytest.approx(float(t4a.expectation(psi, H)), abs=1e-12)
    assert big.entanglement_entropy() == pytest.approx(psi.entanglement_entropy(), abs=1e-12)
    n = big.normalize()
    assert float(n.norm()) == pytest.approx(1.0, abs=1e-13)
    assert float(t4a.expectation(n, H)) == pytest.approx(float(t4a.expectation(psi, H)), abs=1e-12)
    small = t4a.MPS([np.asarray(t) * scale ** (1 / 6) for t in psi.tensors])  # norm ~ scale: representable
    assert float(small.norm()) == pytest.approx(scale, rel=1e-12)
    c = t4a.MPS([np.asarray(t) * scale for t in psi.tensors])
    c.compress(max_bond=2)
    assert float(t4a.MPS(c.tensors).normalize().norm()) == pytest.approx(1.0, abs=1e-13)
    v = np.asarray(psi.to_dense()) * scale
    back = t4a.MPS.from_dense(v, 6, cutoff=1e-12)
    assert float(back.norm()) == pytest.approx(scale, rel=1e-10)


def test_gradients_through_the_scaled_norm_are_unchanged():
    psi = t4a.MPS.random(5, bond_dim=3, seed=2)
    H = models.heisenberg(5)
    big = t4a.MPS([np.asarray(t) * 2.0**60 for t in psi.tensors])  # norm 2**300, its square overflows
    g = tidu.grad(lambda p: t4a.expectation(p, H))(psi)
    gb = tidu.grad(lambda p: t4a.expectation(p, H))(big)
    for a, b in zip(g.tensors, gb.tensors):  # the expectation is homogeneous of degree 0
        np.testing.assert_allclose(np.asarray(b) * 2.0**60, np.asarray(a), atol=1e-12)
    gn = tidu.grad(lambda p: p.norm())(psi)
    gnb = tidu.grad(lambda p: p.norm())(big)
    for a, b in zip(gn.tensors, gnb.tensors):  # the norm is homogeneous of degree 1 in each of the 5 sites
        np.testing.assert_allclose(np.asarray(b), np.asarray(a) * 2.0**240, rtol=1e-12)
