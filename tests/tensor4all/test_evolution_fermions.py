"""Fermionic observables through time evolution (``tdvp`` and ``tebd``'s ``observables=``): a
free-fermion quench of spinless fermions from ``|1010...>``, its one-particle density matrix
over time against the exact single-particle propagator (``free_fermions.py``), and string and
product observables against exact diagonalization with the Jordan-Wigner operators written
out here (``c_j = Z x ... x Z x a x 1 ...``, ``Z = diag(1, -1)`` on the sites before ``j``)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import MPS, models

sys.path.insert(0, os.path.dirname(__file__))
from free_fermions import density_matrix  # noqa: E402

L = 8
OCC = [1, 0] * (L // 2)  # "fermion" sites: basis index 1 is occupied
TIMES = np.array([0.0, 0.5, 1.0])


def _exact_opdm(occ: list[int], times: np.ndarray) -> np.ndarray:
    """``<c^dag_i c_j>(t)`` of ``H = -sum_i (c^dag_i c_{i+1} + h.c.)``: the oracle's hopping matrix
    ``J/2`` on the off-diagonals is ``-1`` (``J = -2``), its occupied sites are basis index 0."""
    return density_matrix([1 - s for s in occ], times, J=-2.0)


def _check_opdm(res, atol: float) -> None:
    np.testing.assert_allclose(res.times, TIMES, atol=1e-12)
    want = _exact_opdm(OCC, TIMES)
    obs = res.observables
    assert obs["opdm"].shape == (len(TIMES), L, L)
    np.testing.assert_allclose(obs["opdm"], want, atol=atol)
    np.testing.assert_allclose(obs["n"], np.real(np.diagonal(want, axis1=1, axis2=2)), atol=atol)
    np.testing.assert_allclose(obs["cdag_c"], np.real(np.diagonal(want, axis1=1, axis2=2)), atol=atol)
    np.testing.assert_allclose(obs["some"], want[:, [6, 1, 3]][:, :, [6, 1, 3]], atol=atol)


OBSERVABLES = {"opdm": ("Cdag", "C"), "n": "N", "cdag_c": "Cdag*C", "some": {"pair": ("Cdag", "C"), "sites": [6, 1, 3]}}


def test_tdvp_one_particle_density_matrix_of_a_free_fermion_quench():
    res = t4a.tdvp(
        models.spinless_fermions(L, V=0),
        MPS.product_state(OCC),
        1.0,
        0.05,
        max_bond=32,
        cutoff=0.0,
        observables=OBSERVABLES,
        every=10,
    )
    _check_opdm(res, 2e-5)  # second-order splitting at dt = 0.05: ~5e-6


@pytest.mark.parametrize("conserve", [None, "N"])
def test_tebd_one_particle_density_matrix_of_a_free_fermion_quench(conserve):
    psi = MPS.product_state(OCC, conserve=conserve, local="fermion")
    res = t4a.tebd(
        models.spinless_fermions(L, V=0, conserve=conserve),
        psi,
        1.0,
        0.05,
        order=4,
        max_bond=32,
        cutoff=0.0,
        observables=OBSERVABLES,
        every=10,
    )
    assert res.state.symmetric == (conserve is not None)
    _check_opdm(res, 1e-7)  # fourth order at dt = 0.05: ~2e-8


def _jordan_wigner(n: int) -> tuple[list[np.ndarray], np.ndarray]:
    """The annihilators of ``n`` spinless fermions and the hopping Hamiltonian, explicit matrices."""
    a, z = np.array([[0.0, 1.0], [0.0, 0.0]]), np.diag([1.0, -1.0])
    c = []
    for j in range(n):
        m = np.ones((1, 1))
        for k in range(n):
            m = np.kron(m, z if k < j else a if k == j else np.eye(2))
        c.append(m)
    H = -sum(c[i].T @ c[i + 1] + c[i + 1].T @ c[i] for i in range(n - 1))
    return c, H


def test_string_and_product_observables_against_exact_diagonalization():
    """``{"pair": ("Cdag", "C"), "string": "N"}`` is ``<c^dag_i (prod_k n_k) c_j>``; a product
    pair ``("N*Cdag", "C")``; a bosonic parity string ``("N", "N")`` with ``"F"``: the exact
    state ``expm(-i H t) |101010>`` gives each."""
    n = 6
    occ = OCC[:n]
    c, H = _jordan_wigner(n)
    num = [x.T @ x for x in c]
    parity = [np.eye(2**n) - 2 * x for x in num]
    v0 = np.zeros(2**n)
    v0[int("".join(map(str, occ)), 2)] = 1.0
    specs = {
        "string": {"pair": ("Cdag", "C"), "string": "N", "sites": [0, 2, 5]},
        "product": ("N*Cdag", "C"),
        "parity": {"pair": ("N", "N"), "string": "F"},
    }

    def exact(v: np.ndarray) -> dict[str, np.ndarray]:
        def pair(a, b, s, i, j):
            m = a[i]
            for k in range(min(i, j) + 1, max(i, j)):
                m = m @ s[k] if s is not None else m
            return np.vdot(v, m @ b[j] @ v)

        cdag = [x.T for x in c]
        return {
            "string": np.array([[pair(cdag, c, num, i, j) for j in (0, 2, 5)] for i in (0, 2, 5)]),
            "product": np.array(
                [[pair([nn @ cd for nn, cd in zip(num, cdag)], c, None, i, j) for j in range(n)] for i in range(n)]
            ),
            "parity": np.array([[pair(num, num, parity, i, j) for j in range(n)] for i in range(n)]),
        }

    res = t4a.tebd(
        models.spinless_fermions(n, V=0),
        MPS.product_state(occ),
        1.0,
        0.05,
        order=4,
        max_bond=16,
        cutoff=0.0,
        observables=specs,
        every=10,
    )
    for k, t in enumerate(res.times):
        want = exact(scipy.linalg.expm(-1j * t * H) @ v0)
        for name in specs:
            np.testing.assert_allclose(res.observables[name][k], want[name], atol=1e-7, err_msg=f"{name} at t={t}")
    assert np.abs(res.observables["string"][-1]).max() > 1e-2  # not trivially zero


@pytest.mark.parametrize("evolve", [t4a.tdvp, t4a.tebd])
def test_bad_fermionic_observables_fail_before_the_first_step(evolve):
    H, psi = models.spinless_fermions(4, V=0), MPS.product_state([1, 0, 1, 0])
    steps = []
    for spec, exc, fragment in (
        ({"pair": ("Cdag", "C"), "strings": "N"}, t4a.InvalidOptionError, "unknown key 'strings'"),
        ({"string": "N"}, t4a.Tensor4allTypeError, "'pair' must be a pair"),
        (("Cdag", "N"), t4a.InvalidOptionError, "changes the fermion parity"),
        ("C", t4a.InvalidOptionError, "odd under the fermion parity"),
        ({"pair": ("Cdag", "C"), "string": "C"}, t4a.InvalidOptionError, "string 'C' is odd"),
        ({"pair": ("Cdag", "C"), "sites": [0, 7]}, t4a.SiteOutOfRangeError, "site 7"),
    ):
        with pytest.raises(exc, match=fragment.replace("(", r"\(")):
            evolve(H, psi, 0.2, 0.1, observables={"x": spec}, callback=steps.append)
    assert steps == []
