"""Real-time evolution of purified thermal states (tensor4all.evolve_thermal) and the ancillas'
backwards evolution (Karrasch, Bardarson and Moore, PRL 108, 227206 (2012)): physical values against
free fermions computed here, unchanged by the disentangler, and the entanglement it removes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import models
from tensor4all.networks.mpo import MPO
from tensor4all.thermal.purified import infinite_temperature_sites


def local_field_quench(L: int, h: float = 1.0) -> tuple[MPO, np.ndarray, np.ndarray]:
    """H0 = XX + h Sz at the middle site (thermal start), quenched to the XX chain: both MPOs (Sz
    conserved) and the single-particle matrices of the Jordan-Wigner fermions (hopping J/2 = 0.5)."""
    os0 = models.xx(L).opsum
    os0 += (h, "Sz", L // 2)
    hop = np.diag(np.full(L - 1, 0.5), 1)
    hop = hop + hop.T
    h0 = hop.copy()
    h0[L // 2, L // 2] = h
    return MPO.from_opsum(os0, L, "spin-1/2", conserve="Sz"), h0, hop


def free_fermion_sz(h0: np.ndarray, hop: np.ndarray, beta: float, times: np.ndarray) -> np.ndarray:
    """<Sz_i>(t) = G_ii(t) - 1/2, G(t) = U* G0 U^T, U = e^{-i t hop}, G0 = (e^{beta h0} + 1)^{-1}."""
    w, v = np.linalg.eigh(h0)
    g0 = (v / (np.exp(beta * w) + 1.0)) @ v.T
    out = []
    for t in times:
        u = scipy.linalg.expm(-1j * t * hop)
        out.append(np.real(np.diag(u.conj() @ g0 @ u.T)) - 0.5)
    return np.array(out)


def test_the_backwards_disentangler_leaves_physical_values_unchanged():
    """L = 6, beta = 1, local-field quench to t = 1, no truncation that matters: <Sz_i>(t) and <H>
    with and without the disentangler equal to rounding, both on free fermions within the steps' error."""
    L, beta = 6, 1.0
    H0, h0, hop = local_field_quench(L)
    th = t4a.thermal_state(H0, beta, dbeta=0.05, cutoff=1e-16, max_bond=512, every=20)
    runs = {
        dis: t4a.evolve_thermal(
            th,
            models.xx(L, conserve="Sz"),
            1.0,
            0.05,
            disentangle=dis,
            cutoff=1e-16,
            max_bond=512,
            every=10,
            observables={"Sz": "Sz", "E": "energy"},
        )  # fmt: skip
        for dis in (None, "backwards")
    }
    a, b = runs[None], runs["backwards"]
    assert np.allclose(a.times, [0.0, 0.5, 1.0])
    assert np.max(np.abs(np.asarray(a.observables["Sz"]) - np.asarray(b.observables["Sz"]))) < 1e-12
    assert np.max(np.abs(np.asarray(a.observables["E"]) - np.asarray(b.observables["E"]))) < 1e-12
    exact = free_fermion_sz(h0, hop, beta, a.times)
    assert np.max(np.abs(np.real(b.observables["Sz"]) - exact)) < 1e-7
    assert np.ptp(np.real(b.observables["E"])) < 1e-8  # <H> is conserved by its own evolution


def test_the_backwards_disentangler_removes_the_entanglement_of_the_evolution():
    """At infinite temperature the backwards-evolved purification is the identity at every time (bond 1)
    while the plain one grows; after a local quench at beta = 1 (L = 10, cutoff 1e-12) the disentangled
    purification's middle entanglement entropy and bonds stay far smaller, at the same Sz profile."""
    L = 8
    start, _ = infinite_temperature_sites("spin-1/2", L, "Sz", None, "test")
    H = models.xx(L, conserve="Sz")
    plain = t4a.evolve_thermal(start, H, 1.0, 0.1, disentangle=None, observables={"b": "bond_dims"}, every=10)
    kept = t4a.evolve_thermal(start, H, 1.0, 0.1, observables={"b": "bond_dims"}, every=10)
    assert np.all(np.asarray(kept.observables["b"]) == 1)
    assert np.max(plain.observables["b"][-1]) > 10
    L = 10
    H0, h0, hop = local_field_quench(L)
    th = t4a.thermal_state(H0, 1.0, dbeta=0.1, cutoff=1e-14, max_bond=512, every=10)
    obs = {"S": "entropy", "b": "bond_dims", "Sz": "Sz"}
    kw = dict(cutoff=1e-12, max_bond=512, every=10, observables=obs)
    runs = {dis: t4a.evolve_thermal(th, models.xx(L, conserve="Sz"), 3.0, 0.1, disentangle=dis, **kw) for dis in (None, "backwards")}  # fmt: skip
    a, b = runs[None], runs["backwards"]
    assert np.all(np.asarray(b.observables["S"])[2:] < 0.6 * np.asarray(a.observables["S"])[2:])
    assert np.max(b.observables["b"][-1]) < 0.5 * np.max(a.observables["b"][-1])
    exact = free_fermion_sz(h0, hop, 1.0, a.times)
    for r in (a, b):
        assert np.max(np.abs(np.real(r.observables["Sz"]) - exact)) < 1e-5


def test_evolve_thermal_rejects_terms_beyond_neighbours():
    L = 4
    os = models.xx(L).opsum
    os += (0.3, "Sz", 0, "Sz", 2)
    H = MPO.from_opsum(os, L, "spin-1/2")
    th = t4a.thermal_state(models.xx(L), 0.5, dbeta=0.25)
    with pytest.raises(t4a.InvalidOptionError, match="beyond neighbouring sites"):
        t4a.evolve_thermal(th, H, 0.5, 0.25)
