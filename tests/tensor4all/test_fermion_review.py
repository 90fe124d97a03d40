"""Fixes from a review of the fermionic spaces, OpSums, lattices and measurements (2026-12-01).

* a misspelled name in a fermionic term is an unknown operator (it was blamed on the parity);
* the built-in and user-made local spaces hold read-only copies of their matrices (a caller that
  scaled what ``factor`` handed out changed every later model);
* a site or bond that is not an integer is a type error (a float was "outside 0..L-1");
* a complex hopping points along the lattice, wraps included: a uniform ``t = e^{i phi}`` threads
  the flux ``L phi`` around a ring (it was ``(L - 2) phi``: the wrap bond pointed backwards);
* a lattice pickles (its slots could not be set again).

Energies against exact diagonalization of Hamiltonians built here from explicit Jordan-Wigner
matrices."""

from __future__ import annotations

import pickle
from functools import reduce

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
import tidu
from tensor4all import MPO, MPS, OpSum, lattices, models

SIGMA_Z = np.diag([1.0, -1.0])
ANNIHILATE = np.array([[0.0, 1.0], [0.0, 0.0]])  # |0> = empty, |1> = occupied: c|1> = |0>


def _mode(j: int, n: int) -> np.ndarray:
    """``c_j`` on ``n`` spinless modes: ``Z^{(j)} c`` with the string on the modes before ``j``
    (``Z = 1 - 2 n``)."""
    ops = [SIGMA_Z] * j + [ANNIHILATE] + [np.eye(2)] * (n - j - 1)
    return reduce(np.kron, ops)


def _ring_ground_energy(n: int, t: complex, oriented: list[tuple[int, int]]) -> float:
    """``-sum_(i->j) (t c^dag_i c_j + h.c.)`` over the ``oriented`` bonds, exact."""
    c = [_mode(j, n) for j in range(n)]
    h = sum(-t * c[i].conj().T @ c[j] for i, j in oriented)
    h = h + h.conj().T
    return float(np.linalg.eigvalsh(h)[0])


@pytest.mark.parametrize("flux", [0.0, 0.3, np.pi / 4, 1.0])
def test_uniform_phase_threads_the_whole_flux_around_a_ring(flux):
    n = 5
    t = np.exp(1j * flux)
    H = models.spinless_fermions(lattices.chain(n, periodic=True), t=t, conserve=None)
    want = _ring_ground_energy(n, t, [(i, (i + 1) % n) for i in range(n)])
    assert np.linalg.eigvalsh(np.asarray(H.to_dense()))[0] == pytest.approx(want, abs=1e-12)


def test_cylinder_wraps_point_along_y():
    lat = lattices.square(2, 3, yperiodic=True)
    assert set(lat.nearest_directed) == {(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (0, 3), (1, 4), (2, 5)}
    assert sorted(tuple(sorted(b)) for b in lat.nearest_directed) == list(lat.nearest)
    t = np.exp(0.4j)
    H = models.spinless_fermions(lat, t=t, conserve=None)
    want = _ring_ground_energy(6, t, list(lat.nearest_directed))
    assert np.linalg.eigvalsh(np.asarray(H.to_dense()))[0] == pytest.approx(want, abs=1e-12)


def test_lattices_pickle_with_their_directions():
    lat = lattices.triangular(3, 4, yperiodic=True)
    back = pickle.loads(pickle.dumps(lat))
    assert back == lat and back.nearest_directed == lat.nearest_directed and back.name == lat.name


def test_custom_lattice_keeps_the_given_orientation():
    lat = t4a.lattices.Lattice("ring", [[0, 0], [1, 0], [0, 1]], [(0, 1), (1, 2), (2, 0)])
    assert lat.nearest == ((0, 1), (0, 2), (1, 2))
    assert lat.nearest_directed == ((0, 1), (2, 0), (1, 2))


@pytest.mark.parametrize(
    "term, local, name",
    [((1.0, "Cdagup", 0, "Cdown", 1), "electron", "Cdown"), ((1.0, "Cdagg", 0, "C", 1), "fermion", "Cdagg")],
)
def test_misspelled_fermionic_operator_is_unknown(term, local, name):
    with pytest.raises(t4a.UnknownOperatorError, match=f"unknown operator '{name}'"):
        MPO.from_opsum(OpSum([term]), 3, local)


def test_local_space_matrices_are_read_only_copies():
    _, c = t4a.local_space("fermion").factor("C")
    with pytest.raises(ValueError, match="read-only"):
        c *= 2
    assert np.linalg.eigvalsh(np.asarray(models.spinless_fermions(4, conserve=None).to_dense()))[0] == pytest.approx(
        -np.sqrt(5.0), abs=1e-12
    )
    mine = np.array([[0.0, 1.0], [0.0, 0.0]])
    space = t4a.LocalSpace("mine", 2, {"C": (1, mine), "N": (1, np.diag([0.0, 1.0]))})
    mine *= 5
    np.testing.assert_array_equal(space.matrix("C"), [[0.0, 1.0], [0.0, 0.0]])


PSI = MPS.random(4, local="electron", bond_dim=4, seed=2)


@pytest.mark.parametrize(
    "call",
    [
        lambda: PSI.correlation("Cdagup", "Cup", 1.0, 2, local="electron"),
        lambda: PSI.expect("Ntot", [0, 1], local="electron"),
        lambda: PSI.expect("Ntot", True, local="electron"),
        lambda: PSI.entanglement_entropy(1.0),
        lambda: PSI.correlation_matrix("Ntot", "Ntot", sites=[0, 1.0], local="electron"),
        lambda: t4a.measurements.spin_correlation(PSI, 1.5),
    ],
)
def test_a_site_that_is_not_an_integer_is_a_type_error(call):
    with pytest.raises(t4a.Tensor4allTypeError, match="must be an integer (site|bond)"):
        call()


def test_out_of_range_sites_stay_range_errors():
    with pytest.raises(t4a.SiteOutOfRangeError, match="7 is outside 0..3"):
        PSI.expect("Ntot", 7, local="electron")
    with pytest.raises(t4a.SiteOutOfRangeError, match="bond 3 is outside 0..2"):
        PSI.entanglement_entropy(3)


@pytest.mark.parametrize(
    "name, call",
    [
        ("spin_correlation", lambda p: t4a.measurements.spin_correlation(p)),
        ("density", lambda p: t4a.measurements.density(p)),
        ("charge_correlation", lambda p: t4a.measurements.charge_correlation(p, local="electron")),
    ],
)
def test_measurements_under_grad_name_themselves(name, call):
    """They return NumPy arrays: under ``tidu.grad`` a typed error naming the function (it was tidu's
    ``TracerConversionError``, not a ``Tensor4allError``)."""
    with pytest.raises(t4a.NotDifferentiableError, match=f"{name} works on concrete states"):
        tidu.grad(lambda p: tf.sum(tf.asarray(call(p))))(PSI)
