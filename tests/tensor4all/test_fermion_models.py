"""The fermion models on lattices (issue 23, item 4): ``models.hubbard``, ``spinless_fermions``
and ``tj`` against Hamiltonians built here, independently of the library, from explicit
Jordan-Wigner matrices on the Fock space (sparse), their exact diagonalization per sector of
the particle number, the single-particle spectrum for free fermions and ``scipy.linalg.expm``.

Modes are ordered site by site (in the lattice's numbering), up before down for spinful
sites; mode ``m`` has ``c_m = Z x ... x Z x sigma^- x 1 x ... x 1`` (``m`` factors
``Z = (-1)^n``), and the Fock state ``|n_0 n_1 ...>`` is ``(c^dag_0)^{n_0} ... |vac>`` with mode 0
the most significant bit. The MPO's basis (``to_dense``: site 0 most significant) is the Fock
basis for ``"fermion"`` sites; an ``"electron"`` digit ``s`` in ``(|0>, |up>, |dn>, |up dn>)``
holds the Fock bits ``2 n_up + n_dn = SITE_TO_FOCK[s]``; a ``"tj"`` digit is an electron digit
``< 3`` (the Hamiltonian restricted to states without double occupancy).
"""

from __future__ import annotations

import itertools
import os
import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

import tenferro as tf
import tensor4all as t4a
import tidu
from tensor4all import MPS, lattices, models, tdvp, tebd

sys.path.insert(0, os.path.dirname(__file__))  # the reference beside this file (no package __init__)
from fock_hubbard import SITE_TO_FOCK  # noqa: E402
from fock_hubbard import annihilators as fock_annihilators  # noqa: E402


# ---- the independent reference -------------------------------------------------------------------
def annihilators(n_modes: int) -> list[sp.csr_matrix]:
    """The Jordan-Wigner annihilators of ``n_modes`` modes as sparse matrices (tests/tensor4all/fock_hubbard.py)."""
    return fock_annihilators(n_modes, sparse=True)


def bonds_of(lat_or_L) -> list[tuple[int, int]]:
    if isinstance(lat_or_L, int):
        return [(i, i + 1) for i in range(lat_or_L - 1)]
    return list(lat_or_L.nearest)


def n_sites(lat_or_L) -> int:
    return lat_or_L if isinstance(lat_or_L, int) else lat_or_L.sites


def electron_perm(L: int, local: str) -> np.ndarray:
    """The Fock index of each MPO basis index (``"electron"`` or ``"tj"`` sites)."""
    d = 4 if local == "electron" else 3
    return np.array(
        [
            sum(SITE_TO_FOCK[s] * 4 ** (L - 1 - i) for i, s in enumerate(digits))
            for digits in itertools.product(range(d), repeat=L)
        ]
    )


def fock_spinless(lat_or_L, t: float, V: float, mu: float) -> np.ndarray:
    L, c = n_sites(lat_or_L), annihilators(n_sites(lat_or_L))
    n = [x.T @ x for x in c]
    H = sp.csr_matrix((2**L, 2**L))
    for i, j in bonds_of(lat_or_L):
        hop = c[i].T @ c[j]
        H = H - t * (hop + hop.T) + V * n[i] @ n[j]
    for i in range(L):
        H = H - mu * n[i]
    return H.toarray()


def _spinful(L: int):
    c = annihilators(2 * L)
    up, dn = c[0::2], c[1::2]
    return up, dn, [x.T @ x for x in up], [x.T @ x for x in dn]


def fock_hubbard(lat_or_L, t: float, U: float, mu: float) -> np.ndarray:
    L = n_sites(lat_or_L)
    up, dn, nup, ndn = _spinful(L)
    H = sp.csr_matrix((4**L, 4**L))
    for i, j in bonds_of(lat_or_L):
        for c in (up, dn):
            hop = c[i].T @ c[j]
            H = H - t * (hop + hop.T)
    for i in range(L):
        H = H + U * nup[i] @ ndn[i] - mu * (nup[i] + ndn[i])
    perm = electron_perm(L, "electron")
    return H[perm][:, perm].toarray()


def fock_tj(lat_or_L, t: float, J: float, sparse: bool = False):
    """``-t sum (c^dag c + h.c.) + J sum (S.S - n n / 4)`` on the electron Fock space,
    restricted to the states without double occupancy (the projected hopping); dense, or a
    SciPy sparse matrix."""
    L = n_sites(lat_or_L)
    up, dn, nup, ndn = _spinful(L)
    sz = [0.5 * (a - b) for a, b in zip(nup, ndn)]
    splus = [a.T @ b for a, b in zip(up, dn)]
    ntot = [a + b for a, b in zip(nup, ndn)]
    H = sp.csr_matrix((4**L, 4**L))
    for i, j in bonds_of(lat_or_L):
        for c in (up, dn):
            hop = c[i].T @ c[j]
            H = H - t * (hop + hop.T)
        ss = sz[i] @ sz[j] + 0.5 * (splus[i] @ splus[j].T + splus[i].T @ splus[j])
        H = H + J * (ss - 0.25 * ntot[i] @ ntot[j])
    perm = electron_perm(L, "tj")
    H = H[perm][:, perm]
    return H if sparse else H.toarray()


def particle_numbers(L: int, local: str) -> np.ndarray:
    per = {"fermion": (0, 1), "electron": (0, 1, 1, 2), "tj": (0, 1, 1)}[local]
    return np.array([sum(per[s] for s in digits) for digits in itertools.product(range(len(per)), repeat=L)])


def twice_sz(L: int, local: str) -> np.ndarray:
    """``2 Sz`` of every basis state of ``L`` sites (basis ``|0>, |up>, |dn>(, |up dn>)``)."""
    per = {"electron": (0, 1, -1, 0), "tj": (0, 1, -1)}[local]
    return np.array([sum(per[s] for s in digits) for digits in itertools.product(range(len(per)), repeat=L)])


def sector_ground(H: np.ndarray, numbers: np.ndarray, N: int) -> float:
    sel = np.flatnonzero(numbers == N)
    return float(np.linalg.eigvalsh(H[np.ix_(sel, sel)])[0])


def dense(H) -> np.ndarray:
    return np.asarray(H.to_dense())


def hopping_matrix(lat, t: float) -> np.ndarray:
    h = np.zeros((lat.sites, lat.sites))
    for i, j in lat.nearest:
        h[i, j] = h[j, i] = -t
    return h


def test_reference_modes_anticommute():
    c = annihilators(4)
    for a, b in itertools.product(range(4), repeat=2):
        assert abs(c[a] @ c[b].T + c[b].T @ c[a] - sp.identity(16) * (a == b)).max() == 0
        assert abs(c[a] @ c[b] + c[b] @ c[a]).max() == 0


# ---- the Hamiltonians ----------------------------------------------------------------------------
SQ22, SQ32, SQ23P = lattices.square(2, 2), lattices.square(3, 2), lattices.square(2, 3, yperiodic=True)


def test_the_clusters():
    assert len(SQ22.nearest) == 4 and len(SQ32.nearest) == 7
    assert lattices.square(3, 2, yperiodic=True).nearest == SQ32.nearest  # Ly = 2: the wrap adds nothing
    assert len(SQ23P.nearest) == len(lattices.square(2, 3).nearest) + 2  # Ly = 3: it adds one per column


COUPLINGS = [(1.0, 4.0, 0.0), (0.7, -2.5, 0.3), (1.3, 0.0, -1.1)]


# the 6-site clusters at one coupling set: their dense matrices are 4096 x 4096
@pytest.mark.parametrize(
    "lat,t,U,mu",
    [(4, *c) for c in COUPLINGS] + [(SQ22, *c) for c in COUPLINGS] + [(SQ32, 1.0, 4.0, 0.2), (SQ23P, 0.8, 3.0, -0.3)],
    ids=[f"chain4-{k}" for k in range(3)] + [f"2x2-{k}" for k in range(3)] + ["3x2", "2x3-yper"],
)
def test_hubbard_is_the_jordan_wigner_hamiltonian(lat, t, U, mu):
    H = models.hubbard(lat, t=t, U=U, mu=mu)
    assert H.local == "electron"
    np.testing.assert_allclose(dense(H), fock_hubbard(lat, t, U, mu), atol=1e-12)


def test_hubbard_chain_int_equals_the_chain_lattice_and_plain_terms():
    for L in (2, 5):
        a = dense(models.hubbard(L, 0.9, 3.0, 0.2))
        np.testing.assert_allclose(a, dense(models.hubbard(lattices.chain(L), 0.9, 3.0, 0.2)), atol=1e-14)
        assert models.hubbard(L).bond_dims == [6] * (L - 1)
    os = models.hubbard_opsum(SQ22, 0.9, 3.0, 0.2)
    assert len(os) == 4 * 2 * 2 + 4 + 4  # bonds x spins x (hop, h.c.), U, mu
    assert not any(name == "F" for term in os for name, _ in term.ops)  # plain terms, no strings by hand


@pytest.mark.parametrize("L", [2, 5, 8])
@pytest.mark.parametrize("t,V,mu", [(1.0, 0.0, 0.0), (0.8, 1.7, 0.3), (1.1, -0.9, -0.4), (0.0, 2.0, 0.5)])
def test_spinless_fermions_is_the_jordan_wigner_hamiltonian(L, t, V, mu):
    H = models.spinless_fermions(L, t=t, V=V, mu=mu)
    assert H.local == "fermion"
    np.testing.assert_allclose(dense(H), fock_spinless(L, t, V, mu), atol=1e-12)


@pytest.mark.parametrize("lat", [4, 6, lattices.ladder(3, 2), SQ22], ids=["chain4", "chain6", "ladder3x2", "2x2"])
@pytest.mark.parametrize("t,J", [(1.0, 0.5), (0.6, 2.3), (0.0, 1.0)])
def test_tj_is_the_projected_hamiltonian(lat, t, J):
    H = models.tj(lat, t=t, J=J)
    assert H.local == "tj"
    np.testing.assert_allclose(dense(H), fock_tj(lat, t, J), atol=1e-12)


def test_free_fermions_on_a_square_are_the_single_particle_spectrum():
    """``V = mu = 0`` on a 3x3 square: the ground energy at filling ``N`` is the sum of the
    ``N`` lowest eigenvalues of the hopping matrix (bonds reaching 3 sites ahead, whose strings
    cross the sites between); and DMRG at half filling."""
    lat, t = lattices.square(3, 3), 0.9
    eps = np.linalg.eigvalsh(hopping_matrix(lat, t))
    H = models.spinless_fermions(lat, t=t, conserve="N")
    Hd, numbers = dense(H), particle_numbers(9, "fermion")
    np.testing.assert_allclose(Hd, fock_spinless(lat, t, 0.0, 0.0), atol=1e-12)
    for N in range(10):
        assert abs(sector_ground(Hd, numbers, N) - eps[:N].sum()) < 1e-10, N
    res = t4a.dmrg(H, max_bond=64, sector=4, sweeps=8, seed=0)
    assert abs(res.energy - eps[:4].sum()) < 1e-9


# ---- DMRG per sector ------------------------------------------------------------------------------
def check_sectors(H, exact: np.ndarray, numbers: np.ndarray, sectors, sweeps: int = 8) -> None:
    for N in sectors:
        res = t4a.dmrg(H, max_bond=96, cutoff=1e-14, sector=N, sweeps=sweeps, seed=1)
        assert res.sector == {"N": float(N)}
        e0 = sector_ground(exact, numbers, N)
        assert abs(res.energy - e0) < 1e-10, (N, res.energy, e0)


@pytest.mark.parametrize(
    "lat,sectors",
    [(4, (2, 4, 5)), (SQ22, (3, 4)), (SQ32, (6,)), (SQ23P, (5, 6))],
    ids=["chain4", "2x2", "3x2", "2x3-yper"],
)
def test_hubbard_sectors(lat, sectors):
    t, U, mu = 1.0, 4.0, 0.2
    H = models.hubbard(lat, t=t, U=U, mu=mu, conserve="N")
    check_sectors(H, fock_hubbard(lat, t, U, mu), particle_numbers(n_sites(lat), "electron"), sectors)


def test_spinless_fermion_sectors():
    L, t, V, mu = 8, 1.0, 1.5, 0.1
    H = models.spinless_fermions(L, t=t, V=V, mu=mu, conserve="N")
    check_sectors(H, fock_spinless(L, t, V, mu), particle_numbers(L, "fermion"), (3, 4))


@pytest.mark.parametrize("lat,sectors", [(6, (4, 5)), (lattices.ladder(3, 2), (4, 6))], ids=["chain6", "ladder3x2"])
def test_tj_sectors(lat, sectors):
    t, J = 1.0, 0.5
    H = models.tj(lat, t=t, J=J, conserve="N")
    check_sectors(H, fock_tj(lat, t, J), particle_numbers(n_sites(lat), "tj"), sectors)


@pytest.mark.parametrize(
    "model,lat,sectors",
    [
        ("hubbard", SQ23P, ((6, 0), (5, 1), (4, 2))),
        ("tj", 8, ((6, 0), (7, 1), (5, -3))),
        ("tj", lattices.ladder(3, 2), ((4, 0), (5, 1))),
    ],
    ids=["hubbard-2x3-cylinder", "tj-chain8", "tj-ladder3x2"],
)
def test_product_sectors(model, lat, sectors):
    """``conserve="N,Sz"`` (the default for these models): the ground energy of each (N, Sz)
    sector equals exact diagonalization of the Jordan-Wigner Fock Hamiltonian restricted to
    it, to 1e-10."""
    L = n_sites(lat)
    if model == "hubbard":
        H = models.hubbard(lat, t=1.0, U=4.0, mu=0.2, conserve="N,Sz")
        exact, local = sp.csr_matrix(fock_hubbard(lat, 1.0, 4.0, 0.2)), "electron"
    else:
        H = models.tj(lat, t=1.0, J=0.5, conserve="N,Sz")
        exact, local = fock_tj(lat, 1.0, 0.5, sparse=True), "tj"
    numbers, spins = particle_numbers(L, local), twice_sz(L, local)
    for N, m in sectors:
        sel = np.flatnonzero((numbers == N) & (spins == m))
        e0 = float(np.linalg.eigvalsh(exact[sel][:, sel].toarray())[0])
        res = t4a.dmrg(H, max_bond=96, cutoff=1e-14, sector={"N": N, "Sz": m / 2}, sweeps=8, seed=1)
        assert res.sector == {"N": float(N), "Sz": m / 2}
        assert abs(res.energy - e0) < 1e-10, (N, m, res.energy, e0)


# ---- time evolution and gradients ----------------------------------------------------------------
STATES = [1, 1, 0, 1, 0, 0]
BOUNDS = {"tdvp": 2e-4, "tebd": 1e-7}  # two-site TDVP from a product state: its projection error


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
def test_spinless_evolution_matches_expm(method):
    L, t_final, dt = 6, 0.4, 0.05
    H = models.spinless_fermions(L, t=1.0, V=1.2, mu=0.3, conserve="N")
    psi = MPS.product_state(STATES, 2, conserve="N", local="fermion")
    kwargs = {"order": 4} if method == "tebd" else {}
    res = {"tebd": tebd, "tdvp": tdvp}[method](
        H, psi, t_final, dt, max_bond=64, cutoff=1e-14, observables={"N": "N"}, every=4, **kwargs
    )
    step = scipy.linalg.expm(-1j * 4 * dt * fock_spinless(L, 1.0, 1.2, 0.3))
    v = np.zeros(2**L, dtype=complex)
    v[int("".join(map(str, STATES)), 2)] = 1.0
    numbers = [np.array([(b >> (L - 1 - i)) & 1 for b in range(2**L)]) for i in range(L)]
    for k, _ in enumerate(res.times):
        if k:
            v = step @ v
        exact = [float(np.sum(np.abs(v) ** 2 * n)) for n in numbers]
        np.testing.assert_allclose(res.observables["N"][k], exact, atol=BOUNDS[method])
    assert res.state.sector == {"N": 3.0}


def test_couplings_are_differentiable():
    """Traced couplings: ``dE0/dmu = -N`` (Hellmann-Feynman) for spinless fermions, ``dE0/dJ``
    of the t-J chain and ``dE0/dt`` of the Hubbard 2x2 cluster against central differences of
    the exact sector energies."""
    N = 3
    g = tidu.grad(
        lambda mu: (
            t4a.dmrg(models.spinless_fermions(6, V=0.7, mu=mu, conserve="N"), max_bond=32, sector=N, seed=1).energy
        )
    )(tf.asarray(0.2))
    assert abs(float(g) + N) < 1e-7
    numbers, h = particle_numbers(4, "tj"), 1e-5
    fd = (sector_ground(fock_tj(4, 1.0, 0.8 + h), numbers, 3) - sector_ground(fock_tj(4, 1.0, 0.8 - h), numbers, 3)) / (
        2 * h
    )
    g = tidu.grad(lambda J: t4a.dmrg(models.tj(4, J=J, conserve="N"), max_bond=32, sector=3, seed=1).energy)(
        tf.asarray(0.8)
    )
    assert abs(float(g) - fd) < 1e-6, (float(g), fd)
    numbers = particle_numbers(4, "electron")
    fd = (
        sector_ground(fock_hubbard(SQ22, 0.9 + h, 3.0, 0.0), numbers, 3)
        - sector_ground(fock_hubbard(SQ22, 0.9 - h, 3.0, 0.0), numbers, 3)
    ) / (2 * h)
    g = tidu.grad(
        lambda t: t4a.dmrg(models.hubbard(SQ22, t=t, U=3.0, conserve="N"), max_bond=32, sector=3, seed=1).energy
    )(tf.asarray(0.9))
    assert abs(float(g) - fd) < 1e-6, (float(g), fd)


# ---- bad inputs ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,exc,fragment",
    [
        (lambda: models.spinless_fermions(1), t4a.InvalidOptionError, "at least 2 sites"),
        (lambda: models.tj(lattices.chain(1)), t4a.InvalidOptionError, "at least 2 sites"),
        (lambda: models.hubbard(lattices.chain(1)), t4a.InvalidOptionError, "at least 2 sites"),
        (lambda: models.tj(0), t4a.BondDimensionError, "L (number of sites) must be a positive integer"),
        (lambda: models.spinless_fermions("4"), t4a.Tensor4allTypeError, "positive integer"),
        (lambda: models.spinless_fermions(4, conserve="Sz"), t4a.InvalidOptionError, "None or 'N'"),
        (lambda: models.tj(4, conserve="parity"), t4a.InvalidOptionError, "None, 'N', 'Sz' or 'N,Sz'"),
        (lambda: models.spinless_fermions(4, V=float("nan")), t4a.NonFiniteError, "spinless_fermions: V"),
        (lambda: models.tj_opsum(SQ22, J="1"), t4a.Tensor4allTypeError, "tj: J"),
        (lambda: models.hubbard(SQ22, mu=float("inf")), t4a.NonFiniteError, "hubbard: mu"),
    ],
)
def test_bad_inputs(call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)


def test_zero_couplings_give_the_zero_operator():
    assert np.abs(dense(models.spinless_fermions(3, t=0.0))).max() == 0
    assert np.abs(dense(models.tj(SQ22, t=0.0, J=0.0))).max() == 0
