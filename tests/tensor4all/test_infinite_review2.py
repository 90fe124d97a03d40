"""Infinite-chain defects a second review found. Oracles: the TFIM's exact order parameter
(1 - g^2)^(1/8) (Pfeuty 1970) and its free-fermion energy; the XX chain with a
Dzyaloshinskii-Moriya term, exactly -sqrt(J^2 + D^2)/pi per site (a rotation of the XX chain).

* iDMRG restarted from an earlier result (not a product state) started from bare edges and ended
  in the cat of the orders (order parameter 0, entropy ln 2 higher); the command line's schedule
  restarts so.
* conserve="auto" in a phase that breaks the Z2 spontaneously kept the non-injective cat (the
  energy is exact, so the energy test could not tell): now a BrokenSymmetryWarning and a dense run
  from the best product state.
* the energy of a Hermitian H with a complex traced coupling had a complex dtype (tidu.grad
  refused it)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import infinite as inf
from tensor4all.infinite import BrokenSymmetryWarning, InfiniteMPO
from tensor4all.operators.opsum import OpSum

G = 0.5
ORDER = (1 - G * G) ** 0.125


def test_idmrg_restart_keeps_the_broken_order():
    H = t4a.infinite_model("tfim", g=G)
    first = t4a.idmrg(H, max_bond=8, conserve="none", tol=1e-10)
    assert abs(abs(inf.expect(first.state, "Z")) - ORDER) < 1e-8
    for D in (8, 16):
        again = t4a.idmrg(H, psi0=first.state, max_bond=D, conserve="none", tol=1e-10)
        assert abs(abs(inf.expect(again.state, "Z")) - ORDER) < 1e-8
        assert abs(again.state.entanglement_entropy() - first.state.entanglement_entropy()) < 1e-6
        assert inf.is_injective(again.state)


def test_idmrg_restart_keeps_the_neel_order():
    H = t4a.infinite_model("xxz", Jz=2.0, cell=2)
    first = t4a.idmrg(H, max_bond=8, conserve="none", tol=1e-10)
    m = inf.expect(first.state, "Sz", 0)
    again = t4a.idmrg(H, psi0=first.state, max_bond=16, conserve="none", tol=1e-10)
    assert abs(inf.expect(again.state, "Sz", 0) - m) < 5e-3 and abs(m) > 0.35  # D = 16 moves it by 3e-4
    assert inf.is_injective(again.state)


@pytest.mark.parametrize("run", ["vumps", "idmrg"])
def test_auto_in_a_broken_z2_warns_and_runs_dense(run):
    H = t4a.infinite_model("tfim", g=G, conserve="parity")
    with pytest.warns(BrokenSymmetryWarning, match="two fixed points"):
        if run == "vumps":
            r = t4a.vumps(H, max_bond=16, tol=1e-9, conserve="auto")
        else:
            r = t4a.idmrg(H, max_bond=16, conserve="auto")
    assert inf.is_injective(r.state)
    assert abs(abs(inf.expect(r.state, "X")) - ORDER) < 1e-7  # the parity basis: X is the order
    exact = -(np.pi**-1) * np.trapezoid(
        np.sqrt(1 + G * G + 2 * G * np.cos(np.linspace(0, np.pi, 200001))), np.linspace(0, np.pi, 200001)
    )
    assert abs(r.energy - exact) < 1e-9


def test_auto_in_the_symmetric_phase_stays_conserved():
    H = t4a.infinite_model("tfim", g=1.5, conserve="parity")
    with warnings.catch_warnings():
        warnings.simplefilter("error", BrokenSymmetryWarning)
        assert t4a.vumps(H, max_bond=12, tol=1e-8, conserve="auto").conserved == "parity"
        assert t4a.idmrg(H, max_bond=12, conserve="auto").conserved == "parity"


def _dm_chain(D):
    os = OpSum()
    for i in range(2):
        os += (0.5 + 0.5j * D, "S+", i, "S-", i + 1)
        os += (0.5 - 0.5j * D, "S-", i, "S+", i + 1)
    return InfiniteMPO.from_opsum(os, 2, "spin-1/2")


def test_energy_with_a_complex_traced_coupling_is_real():
    def energy(D):
        return t4a.vumps(_dm_chain(D), max_bond=24, tol=1e-9, seed=1, conserve="Sz").energy

    e = energy(tf.asarray(0.7))
    assert not np.iscomplexobj(np.asarray(e))
    g = float(tidu.grad(energy)(tf.asarray(0.7)))
    h = 1e-4
    fd = (energy(0.7 + h) - energy(0.7 - h)) / (2 * h)
    assert abs(g - fd) < 1e-6
    assert abs(g - (-0.7 / (np.pi * np.sqrt(1 + 0.49)))) < 1e-3  # finite bond dimension
