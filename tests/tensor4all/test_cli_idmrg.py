"""``tensor4all idmrg``: runs as a user runs them (a subprocess, small bond dimensions) with the JSON
record, the saved iMPS and the figure, checked against closed forms computed here (the transverse-
field Ising chain's free fermions, the XXZ chain at Delta = 1/2, where the Bethe-ansatz energy is
-3/8, the XX chain's -1/pi); the references of :mod:`tensor4all.references.infinite` against
closed forms and independent integrals; bad arguments in-process (exit code 2, a message naming
the fix, nothing run)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.integrate

import tensor4all as t4a
from tensor4all import infinite as inf
from tensor4all.cli import build_parser, main
from tensor4all.references.infinite import infinite_reference, tfim_energy, xx_energy, xxz_energy

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tfim_exact(g: float) -> float:
    """``-(1/pi) int_0^pi sqrt(1 + g^2 + 2 g cos k) dk``, by the trapezoidal rule on a periodic
    integrand (exponentially accurate; independent of the library's quadrature)."""
    k = np.linspace(0.0, 2 * np.pi, 4097)[:-1]
    return -float(np.mean(np.sqrt(1 + g * g + 2 * g * np.cos(k))))


def test_idmrg_tfim_writes_json_state_and_figure(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "idmrg", "--model", "tfim", "--g", "1.5", "--max-bond", "8,12,16",
         "--json", "r.json", "--save", "psi.npz", "--plot", "r.png"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "IDMRG  tfim J=1 g=1.5" in proc.stdout and "free fermions" in proc.stdout
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["schema"] == "tensor4all.idmrg/1" and doc["parameters"]["cell"] == 1
    assert [r["max_bond"] for r in doc["rows"]] == [8, 12, 16]
    exact = tfim_exact(1.5)
    assert abs(doc["energy_per_site"] - exact) < 1e-11 and abs(doc["reference"]["energy"] - exact) < 1e-13
    xi_exact = 1.0 / np.log(1.5)
    xis = [r["correlation_length"] for r in doc["rows"]]
    assert all(0.9 < x / xi_exact < 1.0 for x in xis) and xis == sorted(xis)  # biased low, growing with D
    assert abs(doc["extrapolated_correlation_length"] / xi_exact - 1) < 0.01  # Rams et al.
    assert all(r["converged"] for r in doc["rows"]) and len(doc["history"]) == 3
    # the saved state: a mixed canonical iMPS whose energy per site is the run's
    data = np.load(tmp_path / "psi.npz")
    AL, AR, C = ([data[f"{k}_0"]] for k in ("AL", "AR", "C"))
    np.testing.assert_allclose(np.tensordot(AL[0], C[0], (2, 0)), np.tensordot(C[0], AR[0], (1, 0)), atol=1e-8)
    psi = t4a.iMPS(AL, AR, C, str(data["local"]))
    assert abs(inf.energy_per_site(psi, inf.infinite_model("tfim", g=1.5)) - exact) < 1e-11
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_idmrg_xxz_at_delta_one_half_and_the_xx_chain(capsys):
    """The XXZ chain at Delta = 1/2 has e = -3/8 exactly (Bethe ansatz; the 'combinatorial point');
    the XX chain is free fermions with hopping 1/2: e = -(1/2pi) int |cos k| dk = -1/pi."""
    assert main(["idmrg", "--model", "xxz", "--Jz", "0.5", "--max-bond", "8,16", "--tol", "1e-6",
                 "--max-iter", "150", "--json", "-", "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["reference"]["energy"] == pytest.approx(-0.375, abs=1e-13) and doc["reference"]["exact"]
    e = [r["energy"] for r in doc["rows"]]
    assert 0 < e[1] + 0.375 < e[0] + 0.375 < 2e-3  # variational, better with D
    assert doc["rows"][1]["correlation_length"] > doc["rows"][0]["correlation_length"]  # critical
    assert main(["idmrg", "--model", "xx", "--max-bond", "12", "--tol", "1e-6", "--max-iter", "150", "--json", "-",
                 "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["reference"]["energy"] == pytest.approx(-1 / np.pi, abs=1e-14)
    assert 0 < doc["energy_per_site"] + 1 / np.pi < 2e-3


def test_idmrg_method_conserves_sz_on_the_heisenberg_chain(capsys):
    """--method idmrg (tensor4all.infinite.idmrg, conserving Sz by default): the Bethe-ansatz energy
    1/4 - ln 2 approached from above, a correlation length growing with the bond dimension, and
    S = (c/6) ln xi with c near 1 (the Heisenberg chain's central charge; 1.002 at D = 16, 32)."""
    assert main(["idmrg", "--method", "idmrg", "--max-bond", "8,16", "--tol", "1e-9", "--json", "-",
                 "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["conserve"] == "Sz" and doc["parameters"]["conserved"] == "Sz"
    bethe = 0.25 - np.log(2.0)
    e = [r["energy"] for r in doc["rows"]]
    assert 0 < e[1] - bethe < e[0] - bethe < 1e-3
    assert doc["rows"][1]["correlation_length"] > 1.5 * doc["rows"][0]["correlation_length"]
    assert 0.8 < doc["central_charge"] < 1.2 and len(doc["history"][1]) == doc["rows"][1]["iterations"]


def test_idmrg_method_runs_dense_in_a_field(capsys):
    """--method idmrg on the XX chain in a field h = 0.3: the spin flip no longer leaves H unchanged,
    the ground state is magnetized, and auto runs dense (charge 0 per cell gave an energy 1.4e-2 too
    high); the exact energy is free fermions' (the reference)."""
    assert main(["idmrg", "--method", "idmrg", "--model", "xx", "--h", "0.3", "--max-bond", "8,16", "--tol", "1e-8",
                 "--json", "-", "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["conserved"] is None
    assert 0 < doc["energy_per_site"] - doc["reference"]["energy"] < 1e-4


def test_vumps_method_conserves_sz_when_asked(capsys):
    """--method vumps --conserve Sz (VUMPS on the charge sectors): the Bethe-ansatz energy approached
    from above as the bond grows, and the run says what it conserved; auto leaves VUMPS dense."""
    assert main(["idmrg", "--method", "vumps", "--conserve", "Sz", "--max-bond", "8,16", "--tol", "1e-7",
                 "--json", "-", "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["conserve"] == "Sz" and doc["parameters"]["conserved"] == "Sz"
    bethe = 0.25 - np.log(2.0)
    e = [r["energy"] for r in doc["rows"]]
    assert 0 < e[1] - bethe < e[0] - bethe < 1e-3
    assert main(["idmrg", "--max-bond", "8", "--tol", "1e-6", "--json", "-", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["parameters"]["conserved"] is None


def test_infinite_references_against_closed_forms():
    assert xxz_energy(1.0) == pytest.approx(0.25 - np.log(2.0), abs=1e-15)
    assert xxz_energy(0.5) == pytest.approx(-0.375, abs=1e-12)
    assert xxz_energy(0.0) == pytest.approx(-1 / np.pi, abs=1e-12)
    assert xxz_energy(-1.5) == -1.5 / 4  # the ferromagnet
    # continuous through the isotropic point from the gapless and the gapped side
    assert abs(xxz_energy(1 - 1e-7) - xxz_energy(1.0)) < 1e-6 and abs(xxz_energy(1 + 1e-7) - xxz_energy(1.0)) < 1e-6
    # XX in a field: free fermions eps(k) = cos k - h, filled where negative, plus h/2
    for h in (0.0, 0.3, -0.7, 1.2):
        kinks = [x for x in (-np.arccos(h), np.arccos(h)) if np.isfinite(x)] if abs(h) < 1 else None
        f = lambda k: min(np.cos(k) - h, 0.0)  # noqa: E731
        direct = h / 2 + scipy.integrate.quad(f, -np.pi, np.pi, points=kinks, epsabs=1e-14, limit=200)[0] / (2 * np.pi)
        assert xx_energy(1.0, h) == pytest.approx(direct, abs=1e-10)
    assert tfim_energy(1.0, 1.0) == pytest.approx(-4 / np.pi, abs=1e-14)
    assert tfim_energy(1.0, 0.7) == pytest.approx(tfim_exact(0.7), abs=1e-12)
    assert infinite_reference("j1j2", J1=1.0, J2=0.5).energy == -0.375
    assert infinite_reference("heisenberg", spin="1").exact is False
    assert infinite_reference("heisenberg", h=0.2) is None and infinite_reference("j1j2", J2=0.3) is None


def test_gapped_xxz_reference_against_vumps():
    """Delta = 2 (gapped, short correlation length): the des Cloizeaux-Gaudin sum against a converged
    VUMPS run, which is variational: at bond dimension 48 the energy lies above the exact one by less
    than 3e-11 (1.6e-10 at 32, 5e-12 at 48: the truncation, not the formula)."""
    H = inf.infinite_model("xxz", cell=2, Jz=2.0)
    res = inf.vumps(H, max_bond=48, tol=1e-9, seed=1, max_iter=300)
    assert 0 <= inf.energy_per_site(res.state, H) - xxz_energy(2.0) < 3e-11


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--g", "1.2"], "argument --g: not a parameter of --model heisenberg"),
        (["--model", "tfim", "--Jz", "1"], "argument --Jz: not a parameter of --model tfim"),
        (["--model", "tfim", "--spin", "1"], "argument --spin: not a parameter of --model tfim"),
        (["--max-bond", "32,16"], "must increase"),
        (["--max-bond", "0"], "bond dimensions are positive integers"),
        (["--chi", "16"], "unrecognized arguments: --chi"),
        (["--method", "dmrg"], "invalid choice: 'dmrg'"),
        (["--model", "tfim", "--conserve", "Sz"], "--model tfim conserves no charge"),
        (["--model", "tfim", "--method", "idmrg", "--conserve", "Sz"], "--model tfim conserves no charge"),
        (["--method", "idmrg", "--conserve", "parity"], "invalid choice: 'parity'"),
        (["--cell", "0"], "the unit cell has at least 1 site"),
        (["--tol", "0"], "argument --tol: must be a positive finite number"),
        (["--save", "s.arrow"], "must end in .npz"),
        (["--plot", "p.jpg"], "unknown extension '.jpg'"),
    ],
)
def test_bad_arguments_exit_2_before_running(args, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["idmrg", *args])
    assert info.value.code == 2
    err = capsys.readouterr()
    assert fragment in err.err, err.err
    assert "IDMRG" not in err.out + err.err and list(tmp_path.iterdir()) == []


def test_the_command_is_registered():
    assert "idmrg" in build_parser().commands
