"""Lattices and the spin models on them (issue 23, items 3 and 4), against answers built here.

The reference bonds come from geometry alone: each test writes the site positions of its
lattice from the lattice's definition (column-major numbering ``n = x * Ly + y``), takes the
periodic images along ``y`` where the lattice wraps, and calls two sites nearest neighbours
when some image is at distance 1 and next-nearest when some image is at the second-neighbour
distance (``sqrt(2)`` square, ``sqrt(3)`` triangular and honeycomb) and they are not nearest.
The reference Hamiltonians are explicit Kronecker products on those bonds (``np.kron`` order,
site 0 most significant, as ``MPO.to_dense``), diagonalized densely.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg

import tenferro as tf
import tensor4all as t4a
import tidu
from tensor4all import lattices, models

S3 = math.sqrt(3.0)


# ---- the independent reference: positions, bonds by distance, Kronecker Hamiltonians -------------
def positions(kind: str, Lx: int, Ly: int) -> tuple[np.ndarray, np.ndarray]:
    """Site positions in the order ``n = x * Ly + y`` and the translation that wraps ``y``."""
    pts = []
    for x in range(Lx):
        for y in range(Ly):
            if kind == "square":
                pts.append((x, y))
            elif kind == "triangular":  # a1 = (sqrt3/2, 1/2), a2 = (0, 1)
                pts.append((x * S3 / 2, x / 2 + y))
            elif kind == "honeycomb":  # zigzag columns, horizontal bonds at even x + y
                pts.append((1.5 * x + (0.5 if (x + y) % 2 == 0 else 0.0), y * S3 / 2))
    wrap = {"square": (0, Ly), "triangular": (0, Ly), "honeycomb": (0, Ly * S3 / 2)}[kind]
    return np.array(pts, float), np.array(wrap, float)


def bonds_by_distance(pts, wrap, periodic: bool, d1: float, d2: float):
    n = len(pts)
    shifts = (-1, 0, 1) if periodic else (0,)
    near, nnear = set(), set()
    for i in range(n):
        for j in range(i + 1, n):
            ds = [np.linalg.norm(pts[j] + k * wrap - pts[i]) for k in shifts]
            if any(abs(d - d1) < 1e-9 for d in ds):
                near.add((i, j))
            elif any(abs(d - d2) < 1e-9 for d in ds):
                nnear.add((i, j))
    return sorted(near), sorted(nnear)


SZ = np.diag([0.5, -0.5])
SP = np.array([[0.0, 1.0], [0.0, 0.0]])  # S+ = Sx + i Sy
SM = SP.T
PX = np.array([[0.0, 1.0], [1.0, 0.0]])
PZ = 2 * SZ


def op_at(sites: dict, n: int) -> scipy.sparse.csr_matrix:
    """``prod_k op_k`` as a sparse ``2^n x 2^n`` matrix, ``sites[k]`` on site ``k``, identity elsewhere."""
    out = scipy.sparse.identity(1, format="csr")
    for k in range(n):
        out = scipy.sparse.kron(out, scipy.sparse.csr_matrix(sites.get(k, np.eye(2))), format="csr")
    return out


def heis_matrix(n, bonds, J=1.0, Jz=None, h=0.0):
    """``sum_bonds J (SxSx + SySy) + Jz SzSz - h sum Sz``, with ``SxSx + SySy = (S+S- + S-S+)/2``."""
    Jz = J if Jz is None else Jz
    H = scipy.sparse.csr_matrix((2**n, 2**n))
    for i, j in bonds:
        H = H + 0.5 * J * (op_at({i: SP, j: SM}, n) + op_at({i: SM, j: SP}, n)) + Jz * op_at({i: SZ, j: SZ}, n)
    for i in range(n):
        H = H - h * op_at({i: SZ}, n)
    return H


def tfim_matrix(n, bonds, J=1.0, g=1.0, zz=PZ, x=PX):
    H = scipy.sparse.csr_matrix((2**n, 2**n))
    for i, j in bonds:
        H = H - J * op_at({i: zz, j: zz}, n)
    for i in range(n):
        H = H - g * op_at({i: x}, n)
    return H


def heis_dense(n, bonds, J=1.0, Jz=None, h=0.0):
    return heis_matrix(n, bonds, J, Jz, h).toarray()


def tfim_dense(n, bonds, J=1.0, g=1.0):
    return tfim_matrix(n, bonds, J, g).toarray()


def dense(mpo) -> np.ndarray:
    return np.asarray(mpo.to_dense())


# ---- the lattices -----------------------------------------------------------------------------------
GEOMETRY = [  # (constructor call, kind, Lx, Ly, y-periodic, second-neighbour distance)
    (lambda: lattices.square(3, 2), "square", 3, 2, False, math.sqrt(2)),
    (lambda: lattices.square(2, 3), "square", 2, 3, False, math.sqrt(2)),
    (lambda: lattices.square(3, 2, yperiodic=True), "square", 3, 2, True, math.sqrt(2)),
    (lambda: lattices.square(2, 3, yperiodic=True), "square", 2, 3, True, math.sqrt(2)),
    (lambda: lattices.square(4, 4, yperiodic=True), "square", 4, 4, True, math.sqrt(2)),
    (lambda: lattices.square(5, 1), "square", 5, 1, False, math.sqrt(2)),
    (lambda: lattices.ladder(4), "square", 4, 2, False, math.sqrt(2)),
    (lambda: lattices.ladder(3, legs=3), "square", 3, 3, False, math.sqrt(2)),
    (lambda: lattices.triangular(2, 3), "triangular", 2, 3, False, S3),
    (lambda: lattices.triangular(4, 3, yperiodic=True), "triangular", 4, 3, True, S3),
    (lambda: lattices.triangular(4, 4, yperiodic=True), "triangular", 4, 4, True, S3),
    (lambda: lattices.triangular(3, 2, yperiodic=True), "triangular", 3, 2, True, S3),
    (lambda: lattices.honeycomb(3, 3), "honeycomb", 3, 3, False, S3),
    (lambda: lattices.honeycomb(4, 4, yperiodic=True), "honeycomb", 4, 4, True, S3),
    (lambda: lattices.honeycomb(3, 6, yperiodic=True), "honeycomb", 3, 6, True, S3),
]


@pytest.mark.parametrize("make,kind,Lx,Ly,periodic,d2", GEOMETRY)
def test_bonds_equal_the_geometry(make, kind, Lx, Ly, periodic, d2):
    lat = make()
    pts, wrap = positions(kind, Lx, Ly)
    assert lat.sites == Lx * Ly == len(lat)
    np.testing.assert_allclose(lat.coords, pts, atol=1e-14)
    near, nnear = bonds_by_distance(pts, wrap, periodic, 1.0, d2)
    assert list(lat.nearest) == near
    assert list(lat.next_nearest) == nnear
    for b in lat.nearest + lat.next_nearest:
        assert b[0] < b[1]


def test_chain_bonds():
    assert lattices.chain(5).nearest == ((0, 1), (1, 2), (2, 3), (3, 4))
    assert lattices.chain(5).next_nearest == ((0, 2), (1, 3), (2, 4))
    assert lattices.chain(5, periodic=True).nearest == ((0, 1), (0, 4), (1, 2), (2, 3), (3, 4))
    assert lattices.chain(5, periodic=True).next_nearest == ((0, 2), (0, 3), (1, 3), (1, 4), (2, 4))
    assert lattices.chain(2, periodic=True).nearest == ((0, 1),)  # the wrap repeats the bond
    assert lattices.chain(3, periodic=True).next_nearest == ()  # every pair is nearest
    assert lattices.chain(1).nearest == () and lattices.chain(1).next_nearest == ()
    np.testing.assert_array_equal(lattices.chain(3).coords, [[0, 0], [1, 0], [2, 0]])


@pytest.mark.parametrize("Lx,Ly", [(1, 1), (2, 2), (3, 2), (2, 3), (4, 3), (5, 4), (6, 6)])
def test_bond_counts(Lx, Ly):
    N = Lx * Ly
    sq = lattices.square(Lx, Ly)
    assert len(sq.nearest) == Lx * (Ly - 1) + (Lx - 1) * Ly
    assert len(sq.next_nearest) == 2 * (Lx - 1) * (Ly - 1)  # two diagonals per plaquette
    sqy = lattices.square(Lx, Ly, yperiodic=True)
    assert len(sqy.nearest) == len(sq.nearest) + (Lx if Ly > 2 else 0)
    assert len(sqy.next_nearest) == (2 * (Lx - 1) * Ly if Ly > 2 else len(sq.next_nearest))
    if Lx > 2 and Ly > 2:  # the torus: coordination 4 and 4 diagonals, N z / 2 bonds each
        torus = lattices.square(Lx, Ly, yperiodic=True, xperiodic=True)
        assert len(torus.nearest) == 2 * N
        assert len(torus.next_nearest) == 2 * N
    tri = lattices.triangular(Lx, Ly)
    assert len(tri.nearest) == len(sq.nearest) + (Lx - 1) * (Ly - 1)
    if Ly > 2:  # cylinder: 6 neighbours in the bulk, 4 on the two edge columns
        triy = lattices.triangular(Lx, Ly, yperiodic=True)
        assert len(triy.nearest) == ((6 * N - 2 * 2 * Ly) // 2 if Lx > 1 else Ly)
    if Ly % 2 == 0 and Ly > 2:  # 3 neighbours, 2 on half of each edge column's sites
        hc = lattices.honeycomb(Lx, Ly, yperiodic=True)
        assert len(hc.nearest) == ((3 * N - Ly) // 2 if Lx > 1 else Ly)
    hco = lattices.honeycomb(Lx, Ly)
    horizontal = sum(1 for x in range(Lx - 1) for y in range(Ly) if (x + y) % 2 == 0)
    assert len(hco.nearest) == Lx * (Ly - 1) + horizontal


def test_lattice_is_immutable_and_validated():
    lat = lattices.square(2, 2)
    with pytest.raises(AttributeError):
        lat.sites = 3
    with pytest.raises(ValueError):
        lat.coords[0, 0] = 1.0
    assert lat == lattices.square(2, 2) and hash(lat) == hash(lattices.square(2, 2))
    assert lat != lattices.square(2, 2, yperiodic=True)
    assert "n = x * Ly + y" in lat.ordering and "square 2x2" in repr(lat)
    custom = lattices.Lattice("pair", [[0, 0], [1, 0]], [(1, 0), (0, 1)])
    assert custom.nearest == ((0, 1),) and custom.next_nearest == ()
    with pytest.raises(t4a.InvalidOptionError, match="outside 0..1"):
        lattices.Lattice("pair", [[0, 0], [1, 0]], [(0, 2)])
    with pytest.raises(t4a.InvalidOptionError, match="even Ly"):
        lattices.honeycomb(3, 3, yperiodic=True)
    with pytest.raises(t4a.BondDimensionError, match="Lx must be a positive integer"):
        lattices.square(0, 2)
    with pytest.raises(t4a.Tensor4allTypeError, match="yperiodic must be True or False"):
        lattices.triangular(2, 2, yperiodic="yes")


# ---- the models on lattices: MPOs equal the explicit matrices -------------------------------------
SMALL = [  # (lattice, kind, Lx, Ly, periodic, d2)
    ("square32", lambda: lattices.square(3, 2), "square", 3, 2, False, math.sqrt(2)),
    ("square23", lambda: lattices.square(2, 3), "square", 2, 3, False, math.sqrt(2)),
    ("square32y", lambda: lattices.square(3, 2, yperiodic=True), "square", 3, 2, True, math.sqrt(2)),
    ("square23y", lambda: lattices.square(2, 3, yperiodic=True), "square", 2, 3, True, math.sqrt(2)),
    ("triangular23", lambda: lattices.triangular(2, 3), "triangular", 2, 3, False, S3),
    ("triangular23y", lambda: lattices.triangular(2, 3, yperiodic=True), "triangular", 2, 3, True, S3),
    ("honeycomb23", lambda: lattices.honeycomb(2, 3), "honeycomb", 2, 3, False, S3),
    ("honeycomb24y", lambda: lattices.honeycomb(2, 4, yperiodic=True), "honeycomb", 2, 4, True, S3),
    ("ladder32", lambda: lattices.ladder(3), "square", 3, 2, False, math.sqrt(2)),
]


@functools.cache
def reference_bonds(name):
    _, _, kind, Lx, Ly, periodic, d2 = next(r for r in SMALL if r[0] == name)
    pts, wrap = positions(kind, Lx, Ly)
    return (Lx * Ly,) + tuple(map(tuple, bonds_by_distance(pts, wrap, periodic, 1.0, d2)))


@pytest.mark.parametrize("name,make", [r[:2] for r in SMALL], ids=[r[0] for r in SMALL])
def test_models_on_lattices_equal_explicit_matrices(name, make):
    lat = make()
    n, near, nnear = reference_bonds(name)
    np.testing.assert_allclose(
        dense(models.heisenberg(lat, J=0.8, Jz=1.3, h=0.2)), heis_dense(n, near, 0.8, 1.3, 0.2), atol=1e-12
    )
    np.testing.assert_allclose(dense(models.xxz(lat, Jz=0.5)), heis_dense(n, near, 1.0, 0.5), atol=1e-12)
    np.testing.assert_allclose(dense(models.tfim(lat, J=0.7, g=1.1)), tfim_dense(n, near, 0.7, 1.1), atol=1e-12)
    want = heis_dense(n, near, 1.0, h=-0.1) + heis_dense(n, nnear, 0.45)
    np.testing.assert_allclose(dense(models.j1j2(lat, J2=0.45, h=-0.1)), want, atol=1e-12)


def test_tfim_parity_and_conserved_marks_on_a_lattice():
    lat = lattices.square(2, 3, yperiodic=True)
    n, near, _ = reference_bonds("square23y")
    H = tfim_matrix(n, near, 0.7, 1.1, zz=PX, x=PZ).toarray()  # the parity basis: -J sum X X - g sum Z
    np.testing.assert_allclose(dense(models.tfim(lat, 0.7, 1.1, conserve="parity")), H, atol=1e-12)
    np.testing.assert_allclose(dense(models.heisenberg(lat, conserve="Sz")), dense(models.heisenberg(lat)), atol=0)
    np.testing.assert_allclose(dense(models.j1j2(lat, conserve="Sz")), dense(models.j1j2(lat)), atol=0)


def test_chain_int_and_chain_lattice_give_the_same_mpo():
    for L in (1, 2, 6):
        for a, b in [
            (models.heisenberg(L, 0.7, 1.3, 0.2), models.heisenberg(lattices.chain(L), 0.7, 1.3, 0.2)),
            (models.tfim(L, 0.5, 1.2), models.tfim(lattices.chain(L), 0.5, 1.2)),
            (models.j1j2(L, 1.0, 0.3), models.j1j2(lattices.chain(L), 1.0, 0.3)),
        ]:
            assert a.bond_dims == b.bond_dims
            for x, y in zip(a.tensors, b.tensors):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    # j1j2 on the int chain: next-nearest (i, i + 2)
    n = 6
    want = heis_dense(n, [(i, i + 1) for i in range(n - 1)]) + heis_dense(n, [(i, i + 2) for i in range(n - 2)], 0.3)
    np.testing.assert_allclose(dense(models.j1j2(n, J2=0.3)), want, atol=1e-12)
    ring = lattices.chain(6, periodic=True)
    np.testing.assert_allclose(
        dense(models.heisenberg(ring)), heis_dense(n, [(i, (i + 1) % n) for i in range(n)]), atol=1e-12
    )


def test_couplings_are_differentiable_on_a_lattice():
    lat = lattices.triangular(2, 3)
    n, _, nnear = reference_bonds("triangular23")
    v = np.random.default_rng(0).normal(size=2**n)
    v /= np.linalg.norm(v)
    vt = tf.asarray(v)

    def energy(J2):
        Hd = models.j1j2(lat, J1=1.0, J2=J2).to_dense()
        return tf.sum(vt * tf.matmul(Hd, vt))

    g = tidu.grad(energy)(tf.asarray(0.3))
    want = v @ heis_dense(n, nnear, 1.0) @ v
    assert abs(float(np.asarray(g)) - want) < 1e-12


# ---- DMRG ground energies on clusters equal exact diagonalization --------------------------------
def ground(H: scipy.sparse.csr_matrix) -> float:
    v0 = np.random.default_rng(0).normal(size=H.shape[0])
    return float(scipy.sparse.linalg.eigsh(H, k=1, which="SA", v0=v0, tol=1e-14)[0][0])


CLUSTERS = [  # (id, lattice, model, reference Hamiltonian from the test's own bonds)
    (
        "heisenberg-square33y",
        lambda: lattices.square(3, 3, yperiodic=True),
        "square",
        3,
        3,
        True,
        math.sqrt(2),
        lambda lat: models.heisenberg(lat),
        lambda n, nb, nnb: heis_matrix(n, nb),
    ),
    (
        "j1j2-square42",
        lambda: lattices.square(4, 2),
        "square",
        4,
        2,
        False,
        math.sqrt(2),
        lambda lat: models.j1j2(lat, J2=0.5),
        lambda n, nb, nnb: heis_matrix(n, nb) + heis_matrix(n, nnb, 0.5),
    ),
    (
        "tfim-triangular33",
        lambda: lattices.triangular(3, 3),
        "triangular",
        3,
        3,
        False,
        S3,
        lambda lat: models.tfim(lat, J=1.0, g=2.0),
        lambda n, nb, nnb: tfim_matrix(n, nb, 1.0, 2.0),
    ),
    (
        "j1j2-triangular43y",
        lambda: lattices.triangular(4, 3, yperiodic=True),
        "triangular",
        4,
        3,
        True,
        S3,
        lambda lat: models.j1j2(lat, J2=0.125),
        lambda n, nb, nnb: heis_matrix(n, nb) + heis_matrix(n, nnb, 0.125),
    ),
    (
        "j1j2-Sz-square42y",
        lambda: lattices.square(4, 2, yperiodic=True),
        "square",
        4,
        2,
        True,
        math.sqrt(2),
        lambda lat: models.j1j2(lat, J2=0.3, conserve="Sz"),
        lambda n, nb, nnb: heis_matrix(n, nb) + heis_matrix(n, nnb, 0.3),
    ),
    (
        "heisenberg-honeycomb34y",
        lambda: lattices.honeycomb(3, 4, yperiodic=True),
        "honeycomb",
        3,
        4,
        True,
        S3,
        lambda lat: models.heisenberg(lat, h=0.05),
        lambda n, nb, nnb: heis_matrix(n, nb, h=0.05),
    ),
]


@pytest.mark.parametrize(
    "make,kind,Lx,Ly,periodic,d2,model,exact", [c[1:] for c in CLUSTERS], ids=[c[0] for c in CLUSTERS]
)
def test_dmrg_on_clusters_equals_exact_diagonalization(make, kind, Lx, Ly, periodic, d2, model, exact):
    lat = make()
    pts, wrap = positions(kind, Lx, Ly)
    near, nnear = bonds_by_distance(pts, wrap, periodic, 1.0, d2)
    e0 = ground(exact(Lx * Ly, near, nnear))
    res = t4a.dmrg(model(lat), max_bond=64, sweeps=12, seed=1)
    assert abs(res.energy - e0) < 1e-9, (res.energy, e0)
