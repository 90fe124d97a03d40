"""TDVP (tensor4all.tdvp) against exact answers computed here: the explicit Hamiltonian
matrix of the chain (Kronecker products) exponentiated by SciPy, free fermions for the XX
chain, the exact ground energy for imaginary time; conservation laws; sectors; bad input."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import tdvp

sys.path.insert(0, os.path.dirname(__file__))  # the oracle beside this file (no package __init__)
from free_fermions import density_matrix, density_matrix_mps, neel, staggered, staggered_magnetization  # noqa: E402

SX = np.array([[0, 0.5], [0.5, 0]])
SY = np.array([[0, -0.5j], [0.5j, 0]])
SZ = np.diag([0.5, -0.5])


def _site_op(op: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))


def heisenberg_matrix(L: int, J: float = 1.0, Jz: float = 1.0, h: float = 0.0) -> np.ndarray:
    """``sum J (Sx Sx + Sy Sy) + Jz Sz Sz - h sum Sz`` built from Kronecker products (basis
    order: site 0 most significant, state 0 = up): the field term's sign is the one documented
    by ``tensor4all.models.heisenberg`` (``- h sum Sz``), fixed here, not read off the library."""
    H = np.zeros((2**L, 2**L), dtype=complex)
    for i in range(L - 1):
        for op, c in ((SX, J), (SY, J), (SZ, Jz)):
            H += c * np.kron(np.kron(np.eye(2**i), np.kron(op, op)), np.eye(2 ** (L - i - 2)))  # op_i op_{i+1}
    for i in range(L):
        H -= h * _site_op(SZ, i, L)
    return H


def dense_vector(psi: t4a.MPS) -> np.ndarray:
    return np.asarray((psi.dense() if psi.symmetric else psi).to_dense()).reshape(-1)


def full_bond_state(L: int, seed: int) -> t4a.MPS:
    """A random normalized MPS whose bonds have their full dimension (``2^min(i, L-i)``): the
    TDVP manifold is then the whole space and one step is exact."""
    psi = t4a.MPS.random(L, 2, bond_dim=2 ** (L // 2), seed=seed, dtype="complex128")
    assert psi.bond_dims == [2 ** min(i + 1, L - i - 1) for i in range(L - 1)]
    return psi.normalize()


@pytest.mark.parametrize("h", [0.0, 0.7])
def test_hamiltonian_matches_the_library(h: float) -> None:
    L = 5
    m = np.asarray(t4a.models.heisenberg(L, h=h).to_dense()).reshape(2**L, 2**L)
    np.testing.assert_allclose(m, heisenberg_matrix(L, h=h), atol=1e-13)


@pytest.mark.parametrize("two_site", [True, False])
@pytest.mark.parametrize("imaginary", [False, True])
def test_full_bonds_are_exact(two_site: bool, imaginary: bool) -> None:
    """With full bond dimensions the TDVP projector is the identity: every step is
    ``exp(tau H)`` up to the Krylov tolerance."""
    L, dt, n = 6, 0.1, 5
    psi = full_bond_state(L, seed=3)
    res = tdvp(
        t4a.models.heisenberg(L),
        psi,
        n * dt,
        dt,
        two_site=two_site,
        max_bond=64,
        cutoff=0.0,
        imaginary=imaginary,
        normalize=False,
        krylov_tol=1e-13,
    )
    tau = -dt if imaginary else -1j * dt
    expected = scipy.linalg.expm(n * tau * heisenberg_matrix(L)) @ dense_vector(psi)
    np.testing.assert_allclose(dense_vector(res.state), expected, atol=1e-10)
    assert res.times.tolist() == pytest.approx([k * dt for k in range(n + 1)])
    assert [r.step for r in res.history] == list(range(1, n + 1))


def test_neel_quench_converges_to_exact() -> None:
    """From a product state two-site TDVP grows the bonds; its error falls with dt (the
    projection error of the first steps) and is below 1e-6 at dt = 0.025."""
    L = 8
    psi = t4a.MPS.product_state(neel(L))
    exact = scipy.linalg.expm(-1j * heisenberg_matrix(L)) @ dense_vector(psi)
    errors = []
    for dt in (0.1, 0.05, 0.025):
        res = tdvp(t4a.models.heisenberg(L), psi, 1.0, dt, max_bond=64, cutoff=0.0)
        errors.append(np.linalg.norm(dense_vector(res.state) - exact))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-6


def test_time_dependent_hamiltonian_midpoint_rule() -> None:
    """``H(t)`` is taken at each step's midpoint: with full bonds the result is the product of
    the exact step propagators ``exp(-i dt H(t_k + dt/2))``."""
    L, dt, n = 5, 0.1, 4
    psi = full_bond_state(L, seed=5)

    def field(t: float) -> float:
        return 0.3 + np.sin(3.0 * t)

    res = tdvp(
        lambda t: t4a.models.heisenberg(L, h=field(t)), psi, n * dt, dt, two_site=False, cutoff=0.0, krylov_tol=1e-13
    )
    v = dense_vector(psi)
    for k in range(n):
        v = scipy.linalg.expm(-1j * dt * heisenberg_matrix(L, h=field((k + 0.5) * dt))) @ v
    np.testing.assert_allclose(dense_vector(res.state), v, atol=1e-10)


def test_symmetric_state_equals_dense_and_keeps_its_sector() -> None:
    L = 8
    kw = dict(t_final=1.0, dt=0.05, max_bond=32, cutoff=1e-14, observables={"sz": "Sz", "energy": "energy"})
    dense = tdvp(t4a.models.heisenberg(L), t4a.MPS.product_state(neel(L)), **kw)
    sym = tdvp(t4a.models.heisenberg(L, conserve="Sz"), t4a.MPS.product_state(neel(L), conserve="Sz"), **kw)
    assert sym.state.symmetric and sym.state.sector == {"Sz": 0.0}
    np.testing.assert_allclose(sym.observables["sz"], dense.observables["sz"], atol=1e-10)
    np.testing.assert_allclose(dense_vector(sym.state), dense_vector(dense.state), atol=1e-10)
    # a random state of the sector Sz = 1, its bonds full within the sector: two-site TDVP (no
    # truncation) is exact; one-site TDVP is not (a bond of the sector holds fewer states than
    # the left block has, so the tangent space is not the sector) but equals the dense run
    psi = t4a.MPS.random(L, 2, bond_dim=64, charge=1, conserve="Sz", seed=1, dtype="complex128")
    exact = scipy.linalg.expm(-0.5j * heisenberg_matrix(L)) @ dense_vector(psi)
    res = tdvp(t4a.models.heisenberg(L, conserve="Sz"), psi, 0.5, 0.05, cutoff=0.0, krylov_tol=1e-13)
    assert res.state.symmetric and res.state.sector == {"Sz": 1.0}
    np.testing.assert_allclose(dense_vector(res.state), exact, atol=1e-10)
    one = tdvp(t4a.models.heisenberg(L, conserve="Sz"), psi, 0.5, 0.05, two_site=False, krylov_tol=1e-13)
    one_dense = tdvp(t4a.models.heisenberg(L), psi.dense(), 0.5, 0.05, two_site=False, krylov_tol=1e-13)
    assert one.state.sector == {"Sz": 1.0} and one.state.bond_dims == psi.bond_dims
    np.testing.assert_allclose(dense_vector(one.state), dense_vector(one_dense.state), atol=1e-10)
    assert np.linalg.norm(dense_vector(one.state) - exact) < 1e-4


def test_one_site_conserves_norm_and_energy() -> None:
    """One-site TDVP of a time-independent H conserves norm and energy exactly (up to the
    Krylov tolerance), even where the bond dimension is far from full."""
    L = 12
    psi = t4a.MPS.random(L, 2, bond_dim=6, seed=1, dtype="complex128").normalize()
    res = tdvp(
        t4a.models.heisenberg(L),
        psi,
        2.0,
        0.1,
        two_site=False,
        krylov_tol=1e-12,
        observables={"energy": "energy", "norm": "norm"},
    )
    e = res.observables["energy"]
    assert np.ptp(e) < 1e-9
    assert np.ptp(res.observables["norm"]) < 1e-10
    assert res.state.bond_dims == psi.bond_dims


def test_one_site_keeps_bonds_with_tiny_schmidt_values() -> None:
    """A quench from a ground state whose Schmidt values fall to ~1e-12: one-site TDVP does
    not truncate (the cutoff is for two-site steps), so its bonds and its energy stay."""
    L = 10
    gs = t4a.dmrg(t4a.models.heisenberg(L), max_bond=24, cutoff=0.0).state
    H = t4a.models.xxz(L, Jz=0.5)
    res = tdvp(H, gs, 1.0, 0.1, two_site=False, cutoff=1e-6, krylov_tol=1e-12, observables={"E": "energy"})
    assert res.state.bond_dims == gs.bond_dims
    assert np.ptp(res.observables["E"]) < 1e-9


def test_two_site_drift_heisenberg_32() -> None:
    """The issue's bar: real-time two-site TDVP of the Heisenberg chain L = 32 at chi = 64
    drifts in norm and energy by less than 1e-8 per unit time."""
    L, t = 32, 1.0
    H = t4a.models.heisenberg(L, conserve="Sz")
    res = tdvp(
        H,
        t4a.MPS.product_state(neel(L), conserve="Sz"),
        t,
        0.05,
        max_bond=64,
        cutoff=1e-16,
        observables={"energy": "energy", "norm": "norm"},
    )
    assert np.max(np.abs(res.observables["energy"] - res.observables["energy"][0])) / t < 1e-8
    assert np.max(np.abs(res.observables["norm"] - 1.0)) / t < 1e-8


def test_imaginary_time_reaches_the_ground_state() -> None:
    L = 10
    H = t4a.models.heisenberg(L, conserve="Sz")
    e0 = np.linalg.eigvalsh(heisenberg_matrix(L))[0]  # exact diagonalization (1024 states)
    # bonds up to 32 are full for L = 10, so the steps are exp(-dt H) once the bonds have grown
    # and a large dt converges as well as a small one; the error falls as exp(-2 gap t) with a
    # gap of ~0.32 in this sector (Neel start): ~1e-6 at t = 20, ~1e-10 at t = 35
    res = tdvp(
        H,
        t4a.MPS.product_state(neel(L), conserve="Sz"),
        35.0,
        0.5,
        imaginary=True,
        max_bond=64,
        cutoff=1e-14,
        observables={"energy": "energy"},
        every=70,
    )
    assert abs(res.observables["energy"][-1] - e0) < 1e-9
    assert abs(float(res.state.norm()) - 1.0) < 1e-12  # normalized by default in imaginary time


def test_xx_neel_equals_free_fermions() -> None:
    """XX chain from the Neel state: staggered magnetization and one-particle density matrix
    against the single-particle propagator (the issue's bar at a size the tests afford; the
    L = 40, t = 5 run is in benchmarks/tdvp.py)."""
    L, t, dt = 16, 2.0, 0.025
    H = t4a.models.xxz(L, Jz=0.0, conserve="Sz")
    res = tdvp(
        H,
        t4a.MPS.product_state(neel(L), conserve="Sz"),
        t,
        dt,
        max_bond=64,
        cutoff=1e-16,
        observables={"sz": "Sz"},
        every=20,
    )
    ms = staggered(res.observables["sz"])
    np.testing.assert_allclose(ms, staggered_magnetization(neel(L), res.times), atol=1e-6)
    np.testing.assert_allclose(density_matrix_mps(res.state), density_matrix(neel(L), t), atol=1e-6)


def test_observables_callbacks_and_every() -> None:
    L = 6
    seen, bonds = [], []
    res = tdvp(
        t4a.models.heisenberg(L),
        t4a.MPS.product_state(neel(L)),
        0.6,
        0.1,
        every=2,
        observables={
            "sz": "Sz",
            "S": "entropy",
            "Ss": "entropies",
            "chi": "bond_dims",
            "mine": lambda psi, t: t,
            "zz": ("Sz", "Sz"),
        },
        callback=seen.append,
        progress=bonds.append,
    )
    assert res.times.tolist() == pytest.approx([0.0, 0.2, 0.4, 0.6])
    obs = res.observables
    assert obs["sz"].shape == (4, L) and obs["Ss"].shape == (4, L - 1) and obs["zz"].shape == (4, L, L)
    assert obs["chi"].shape == (4, L - 1) and obs["mine"].tolist() == pytest.approx(res.times.tolist())
    np.testing.assert_allclose(np.diagonal(obs["zz"], axis1=1, axis2=2), 0.25, atol=1e-12)
    assert [r.step for r in seen] == list(range(1, 7))
    assert len(bonds) == 6 * 2 * (L - 1)
    assert obs["S"][0] == 0.0 and obs["S"][-1] > 0.0


def test_nonhermitian_needs_allow() -> None:
    L = 4
    ws = [np.asarray(w).copy() for w in t4a.models.heisenberg(L).tensors]
    ws[1] = ws[1] + 0.3j * np.abs(ws[1])  # no longer Hermitian
    H = t4a.MPO(ws)
    psi = full_bond_state(L, seed=2)
    with pytest.raises(t4a.NonHermitianError, match="allow_nonhermitian"):
        tdvp(H, psi, 0.1, 0.1)
    res = tdvp(H, psi, 0.2, 0.1, two_site=False, allow_nonhermitian=True, krylov_tol=1e-13)
    m = np.asarray(H.to_dense()).reshape(2**L, 2**L)
    np.testing.assert_allclose(dense_vector(res.state), scipy.linalg.expm(-0.2j * m) @ dense_vector(psi), atol=1e-9)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(dt=0.0), t4a.InvalidOptionError, "dt must be positive"),
        (dict(dt=-0.1), t4a.InvalidOptionError, "dt"),
        (dict(t_final=0.25, dt=0.1), t4a.InvalidOptionError, "not a multiple of dt"),
        (dict(t_final=-1.0), t4a.InvalidOptionError, "t"),
        (dict(max_bond=0), t4a.BondDimensionError, "max_bond"),
        (dict(krylov_tol=2.0), t4a.InvalidOptionError, "krylov_tol"),
        (dict(observables=["Sz"]), t4a.Tensor4allTypeError, "mapping"),
        (dict(observables={"x": 3}), t4a.Tensor4allTypeError, "spec"),
        (dict(every=0), t4a.InvalidOptionError, "every"),
    ],
)
def test_bad_options(kwargs: dict, error: type, match: str) -> None:
    L = 4
    args = dict(t_final=0.2, dt=0.1)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        tdvp(t4a.models.heisenberg(L), t4a.MPS.product_state(neel(L)), **args)


def test_bad_arguments() -> None:
    H = t4a.models.heisenberg(4)
    with pytest.raises(t4a.Tensor4allTypeError, match="psi must be an MPS"):
        tdvp(H, np.zeros(16), 0.1, 0.1)
    with pytest.raises(t4a.Tensor4allTypeError, match="H must be an MPO"):
        tdvp("heisenberg", t4a.MPS.product_state(neel(4)), 0.1, 0.1)
    with pytest.raises(t4a.DimensionMismatchError):
        tdvp(H, t4a.MPS.product_state(neel(6)), 0.1, 0.1)
    with pytest.raises(t4a.Tensor4allTypeError, match="returned"):
        tdvp(lambda t: 3.0, t4a.MPS.product_state(neel(4)), 0.1, 0.1)
    with pytest.raises(t4a.ZeroNormError):
        tdvp(H, t4a.MPS([np.zeros((1, 2, 1))] * 4), 0.1, 0.1)
    with pytest.raises(t4a.InvalidOptionError, match="local space"):
        tdvp(t4a.models.tfim(4), t4a.MPS.product_state(neel(4), conserve="Sz"), 0.1, 0.1)
    os = t4a.OpSum()
    for i in range(3):
        os += (1.0, "Sz", i, "Sz", i + 1)
        os += (0.5, "Sx", i)
    with pytest.raises(t4a.NonConservingError):
        tdvp(t4a.MPO.from_opsum(os, 4, "spin-1/2"), t4a.MPS.product_state(neel(4), conserve="Sz"), 0.1, 0.1)
