"""Where charge 0 per cell cannot hold the ground state of an infinite chain: a field (the spin
flip no longer leaves ``H`` unchanged) and a symmetry broken spontaneously (the XXZ chain's Ising
ferromagnet, ``Jz < -J``, whose ground states are the two polarized products, ``e0 = Jz / 4``).
``conserve="auto"`` runs dense there (warning where it finds out after the conserved run), an
explicit charge says why it failed; the energies against closed forms computed here."""

from __future__ import annotations

import json
import math
import warnings

import pytest

import tensor4all as t4a
from tensor4all import infinite as inf
from tensor4all.cli import main


def xx_in_a_field(h: float) -> float:
    """``H = sum (SxSx + SySy) - h sum Sz`` per site, ``0 <= h < 1``: free fermions of band
    ``cos k - h`` filled where negative (``k`` in ``(a, 2 pi - a)``, ``a = arccos h``), plus ``h/2``."""
    a = math.acos(h)
    return h / 2 + (-2 * math.sin(a) - h * (2 * math.pi - 2 * a)) / (2 * math.pi)


def test_vumps_auto_runs_dense_in_a_field():
    """Auto conserved Sz in a field and kept the zero-field energy -1/pi (-0.318 for -0.359)."""
    H = t4a.infinite_model("xx", h=0.5, cell=2)
    res = t4a.vumps(H, max_bond=16, tol=1e-7, seed=1, conserve="auto")
    assert res.conserved is None
    assert 0 <= res.energy - xx_in_a_field(0.5) < 5e-5
    assert abs(inf.expect(res.state, "Sz", 0) - 1 / 6) < 1e-3  # magnetization: a filling of 1/3


@pytest.mark.parametrize("method", ["idmrg", "vumps"])
def test_auto_runs_dense_where_the_ground_state_is_magnetized(method):
    """The Ising ferromagnet: idmrg's auto ended at +0.302 for -0.5 and said converged; vumps's
    auto ended in a state without one canonical form and raised a gauge error."""
    H = t4a.infinite_model("xxz", Jz=-2.0, cell=2)
    run = t4a.idmrg if method == "idmrg" else t4a.vumps
    with pytest.warns(t4a.BrokenSymmetryWarning, match="breaks the symmetry"):
        res = run(H, max_bond=8, conserve="auto")
    assert res.conserved is None
    assert res.energy == pytest.approx(-0.5, abs=1e-10)


def test_an_explicit_charge_says_why_it_cannot_hold_the_ground_state():
    H = t4a.infinite_model("xxz", Jz=-2.0, cell=2)
    with pytest.raises(t4a.SymmetryViolationError, match="two fixed points.*conserve='none'"):
        t4a.vumps(H, max_bond=8, tol=1e-7, conserve="Sz", max_iter=30)


def test_the_antiferromagnet_keeps_its_charge_quietly():
    """No false alarm where charge 0 per cell holds the ground state (1/4 - ln 2, from above)."""
    H = t4a.infinite_model("heisenberg", cell=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", t4a.BrokenSymmetryWarning)
        res = t4a.idmrg(H, max_bond=16)
    assert res.conserved == "Sz"
    assert 0 < res.energy - (0.25 - math.log(2)) < 3e-4
    assert inf.product_energy(H) == pytest.approx(-0.25, abs=1e-9)  # the Neel state


def test_cli_idmrg_auto_ends_dense_for_the_ferromagnet(capsys):
    with pytest.warns(t4a.BrokenSymmetryWarning):
        assert main(["idmrg", "--method", "idmrg", "--model", "xxz", "--Jz", "-2", "--max-bond", "8,16",
                     "--json", "-", "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["conserved"] is None and doc["parameters"]["conserve"] == "none"
    assert [r["energy"] for r in doc["rows"]] == pytest.approx([-0.5, -0.5], abs=1e-10)
