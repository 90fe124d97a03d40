"""Reviewed defects of tensor4all.thermal: a non-Hermitian Hamiltonian, a canonical sector of a charge
the Hamiltonian does not conserve, TEBD's options given to the TDVP cooling. The physics of the accepted
inputs is compared with exact diagonalization of explicit matrices built here."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import models
from tensor4all.networks.mpo import MPO
from tensor4all.operators.opsum import OpSum

X = np.array([[0.0, 1.0], [1.0, 0.0]])
Y = np.array([[0.0, -1.0j], [1.0j, 0.0]])
Z = np.diag([1.0, -1.0])
SZ = np.diag([0.5, -0.5])  # spin-1/2 basis: index 0 is up
SP = np.array([[0.0, 1.0], [0.0, 0.0]])


def site(op: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))


def exact_log_z_energy(h: np.ndarray, beta: float) -> tuple[float, float]:
    w = np.linalg.eigvalsh(h)
    p = np.exp(-beta * (w - w[0]))
    return float(np.log(p.sum()) - beta * w[0]), float(w @ p / p.sum())


def non_hermitian(L: int = 3) -> MPO:
    """``-sum Z Z + 1.5i sum X``: H^dagger != H."""
    os = OpSum()
    for i in range(L - 1):
        os += (-1.0, "Z", i, "Z", i + 1)
    for i in range(L):
        os += (1.5j, "X", i)
    return MPO.from_opsum(os, L, "pauli")


# ---- 1. a non-Hermitian Hamiltonian ----------------------------------------------------------
def test_thermal_state_refuses_a_non_hermitian_hamiltonian():
    """Before: thermal_state cooled -ZZ + 1.5i X and returned ln Z = Tr(e^{-bH^dag/2} e^{-bH/2}) (5.87 at
    L = 6, beta = 1) with no error; dmrg refuses the same H."""
    H = non_hermitian()
    with pytest.raises(t4a.NonHermitianError, match=r"thermal_state needs a Hermitian Hamiltonian.*H\^dagger"):
        t4a.thermal_state(H, 0.2)
    with pytest.raises(t4a.NonHermitianError, match="tdvp|thermal_state"):
        t4a.thermal_state(H, 0.2, method="tdvp")
    assert issubclass(t4a.NonHermitianError, ValueError) and issubclass(t4a.NonHermitianError, t4a.Tensor4allError)


def test_thermodynamics_and_metts_refuse_a_non_hermitian_hamiltonian():
    """Before: thermodynamics and metts cooled the non-Hermitian H in imaginary time without an error."""
    H = non_hermitian()
    with pytest.raises(t4a.NonHermitianError, match="thermodynamics needs a Hermitian Hamiltonian"):
        t4a.thermodynamics(H, 0.2)
    with pytest.raises(t4a.NonHermitianError, match="metts needs a Hermitian Hamiltonian"):
        t4a.metts(H, 0.2, 1)


def test_a_complex_hermitian_hamiltonian_is_still_cooled_exactly():
    """The check keeps complex Hermitian Hamiltonians: -ZZ + 0.7 Y_0 + 0.4 X_1 on 3 Pauli sites against
    the exact ln Z and energy of its explicit matrix."""
    L, beta = 3, 1.0
    os = OpSum()
    for i in range(L - 1):
        os += (-1.0, "Z", i, "Z", i + 1)
    os += (0.7, "Y", 0)
    os += (0.4, "X", 1)
    h = -site(Z, 0, L) @ site(Z, 1, L) - site(Z, 1, L) @ site(Z, 2, L) + 0.7 * site(Y, 0, L) + 0.4 * site(X, 1, L)
    r = t4a.thermal_state(MPO.from_opsum(os, L, "pauli"), beta, dbeta=0.05, cutoff=1e-14)
    log_z, energy = exact_log_z_energy(h, beta)
    assert r.log_z[-1] == pytest.approx(log_z, abs=1e-5)
    assert r.energy[-1] == pytest.approx(energy, abs=1e-5)


# ---- 2. a sector of a charge H does not conserve ---------------------------------------------
def test_a_sector_of_a_charge_h_does_not_conserve_is_refused():
    """Before: thermal_state(tfim(4, g=0.7), 1.0, sector=0) projected onto even prod Z although the field
    flips it, returning ln Tr(P e^{-bH}) = 4.36786 instead of a typed error (the true ln Z is 4.72073);
    thermodynamics likewise."""
    with pytest.raises(t4a.NonConservingError, match="does not conserve parity"):
        t4a.thermal_state(models.tfim(4, g=0.7), 1.0, sector=0)
    with pytest.raises(t4a.NonConservingError, match="does not conserve parity"):
        t4a.thermodynamics(models.tfim(4), 0.2, sector=0)
    assert issubclass(t4a.NonConservingError, ValueError)


def test_a_sector_of_a_conserved_charge_of_a_dense_run_is_still_exact():
    """A dense run (conserve='none') of the Heisenberg chain in its Sz = 0 sector against the exact ln Z
    and energy of the Sz = 0 block of the explicit matrix."""
    L, beta = 4, 1.0
    os = OpSum()
    for i in range(L - 1):
        os += (1.0, "Sz", i, "Sz", i + 1)
        os += (0.5, "S+", i, "S-", i + 1)
        os += (0.5, "S-", i, "S+", i + 1)
    h = sum(
        site(SZ, i, L) @ site(SZ, i + 1, L)
        + 0.5 * (site(SP, i, L) @ site(SP.T, i + 1, L) + site(SP.T, i, L) @ site(SP, i + 1, L))
        for i in range(L - 1)
    )
    sz = np.diag(sum(site(SZ, i, L) for i in range(L)))
    keep = np.flatnonzero(np.abs(sz) < 1e-12)
    r = t4a.thermal_state(MPO.from_opsum(os, L, "spin-1/2"), beta, dbeta=0.05, cutoff=1e-14, sector=0, conserve="none")
    log_z, energy = exact_log_z_energy(h[np.ix_(keep, keep)], beta)
    assert r.log_z[-1] == pytest.approx(log_z, abs=1e-5)
    assert r.energy[-1] == pytest.approx(energy, abs=1e-5)
    full = scipy.linalg.expm(-beta * h)
    assert np.log(np.trace(full)) > log_z  # the sector is a proper part of Z


# ---- 3. TEBD's options given to the TDVP cooling ---------------------------------------------
@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(order=2), r"order=2 applies to method='tebd' only"),
        (dict(splitting="sweep"), r"splitting='sweep' applies to method='tebd' only"),
        (dict(order=2, splitting="sweep"), r"order=2 and splitting='sweep' apply to method='tebd' only"),
        (dict(order=3), "order must be 2 or 4"),
        (dict(splitting="zigzag"), "splitting must be one of"),
    ],
)
def test_tdvp_cooling_refuses_tebd_options(kwargs, fragment):
    """Before: method='tdvp' silently ignored order and splitting (order=3 and splitting='sweep' ran and
    returned the TDVP result), while method='tebd' checked them."""
    with pytest.raises(t4a.InvalidOptionError, match=fragment):
        t4a.thermal_state(models.heisenberg(4), 0.2, method="tdvp", **kwargs)


def test_tdvp_cooling_with_default_options_matches_exact_diagonalization():
    """The default order and splitting are accepted by TDVP: the Heisenberg chain L = 4 against
    the exact ln Z of its explicit matrix (TDVP is second order in dbeta)."""
    L, beta = 4, 0.5
    h = sum(
        site(SZ, i, L) @ site(SZ, i + 1, L)
        + 0.5 * (site(SP, i, L) @ site(SP.T, i + 1, L) + site(SP.T, i, L) @ site(SP, i + 1, L))
        for i in range(L - 1)
    )
    r = t4a.thermal_state(models.heisenberg(L), beta, dbeta=0.05, method="tdvp", order=4, splitting="brick")
    assert r.log_z[-1] == pytest.approx(exact_log_z_energy(h, beta)[0], abs=1e-3)
