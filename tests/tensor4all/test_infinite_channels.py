"""Correlation lengths per operator channel, spurious Schmidt values and VUMPS at bond dimension 1,
against closed forms: the transverse-field Ising chain ``-sum Z Z - g sum X`` (Pfeuty: ``<Z Z>``
decays as ``g^-r`` in the paramagnet, ``<X X>_c`` as ``g^-2r``; ``g^2r`` in the ordered phase), the
Majumdar-Ghosh dimer product (energy -3/8 per site) and product-state mean field."""

import numpy as np
import pytest
import scipy.optimize

import tensor4all as t4a
from tensor4all import infinite as inf


@pytest.fixture(scope="module")
def paramagnet():
    return t4a.vumps(t4a.infinite_model("tfim", g=1.5), max_bond=16, tol=1e-8, seed=1).state


def test_correlation_length_takes_the_operators_own_channel(paramagnet):
    g = 1.5
    xi_x, xi_z = inf.correlation_length(paramagnet, "X"), inf.correlation_length(paramagnet, "Z")
    assert abs(xi_z * np.log(g) - 1) < 0.05  # 1 / ln g
    assert abs(xi_x * 2 * np.log(g) - 1) < 0.1  # 1 / (2 ln g); it gave the Z channel's 2.38 (exact 1.233)
    c = inf.correlation(paramagnet, "X", "X", 20, connected=True)
    assert abs(xi_x / (1 / np.log(c[-2] / c[-1])) - 1) < 0.05  # the decay of <X_0 X_r>_c at r = 20


def test_a_dimer_product_has_no_correlation_length():
    res = t4a.vumps(t4a.infinite_model("j1j2", cell=2, J2=0.5), max_bond=4, tol=1e-10, seed=0)
    assert abs(res.energy + 3 / 8) < 1e-9  # Majumdar-Ghosh
    np.testing.assert_allclose(res.state.schmidt_values(0), [1.0])  # it kept values 1e-11
    np.testing.assert_allclose(res.state.schmidt_values(1), [2**-0.5, 2**-0.5], atol=1e-9)
    assert inf.correlation_length(res.state) == 0.0  # it gave 3.11
    assert inf.correlation_length(res.state, "Sz") == 0.0


@pytest.mark.parametrize("D", [8, 16])
def test_ordered_ising_correlation_length_ignores_tiny_schmidt_values(D):
    psi = t4a.vumps(t4a.infinite_model("tfim", g=0.5), max_bond=D, tol=1e-8, seed=1).state
    assert abs(inf.correlation_length(psi) * 2 * np.log(2) - 1) < 0.1  # 1 / (2 ln 2); it gave 0.88, 1.5


def test_correlation_length_needs_k_of_two_and_is_zero_for_a_product_state():
    psi = t4a.vumps(t4a.infinite_model("tfim", g=1.5), max_bond=4, tol=1e-8, seed=1).state
    with pytest.raises(t4a.InvalidOptionError, match="k must be an integer >= 2"):
        inf.correlation_length(psi, k=1)
    assert inf.correlation_length(t4a.iMPS.product_state([0, 1])) == 0.0


@pytest.mark.parametrize("seed", [0, 1])
def test_vumps_at_bond_dimension_one_is_mean_field(seed):
    g = 0.5
    best = scipy.optimize.minimize_scalar(lambda t: -(np.cos(t) ** 2) - g * np.sin(t), bounds=(0, np.pi / 2))
    res = t4a.vumps(t4a.infinite_model("tfim", g=g, cell=2), max_bond=1, seed=seed)
    assert res.converged and abs(res.energy - best.fun) < 1e-6  # -1 - g^2/4; seed 0 stopped at 0.81
    neel = t4a.vumps(t4a.infinite_model("heisenberg", cell=2), max_bond=1, seed=seed)
    assert neel.converged and abs(neel.energy + 0.25) < 1e-8  # it stopped at -0.09, "converged"
