"""``tensor4all thermal``: a run as a user runs it (a subprocess, small and fast) with its JSON record,
saved purification and figure, checked against free fermions; the susceptibility of the tfim and of
the XX chain against the exact values; bad arguments in-process (exit code 2, a message naming the
fix, nothing run)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all.cli import build_parser, main
from tensor4all.references import free_fermion_thermodynamics, thermal_reference

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_thermal_writes_json_state_and_figure(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "thermal", "--L", "6", "--beta-max", "1", "--dbeta", "0.25",
         "--cutoff", "1e-14", "--observe", "E,C,S,F,Sz", "--json", "t.json", "--save", "t.npz", "--plot", "t.png"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "THERMAL  xx L=6" in proc.stdout and "exact       free fermions" in proc.stdout
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["schema"] == "tensor4all.thermal/1" and doc["parameters"]["conserve"] == "Sz"
    assert doc["betas"] == [0.0, 0.25, 0.5, 0.75, 1.0] and len(doc["rows"]) == 5
    t = np.diag(np.full(5, 0.5), 1)
    exact = free_fermion_thermodynamics(np.linalg.eigvalsh(t + t.T), doc["betas"])
    np.testing.assert_allclose(doc["log_z"], exact["log_z"], rtol=1e-8)
    np.testing.assert_allclose(doc["energy"][1:], exact["energy"][1:], rtol=1e-6)  # dbeta^4 of the splitting
    np.testing.assert_allclose(doc["specific_heat"][1:], exact["specific_heat"][1:], rtol=1e-5)
    assert max(r["error"] for r in doc["rows"]) < 1e-5 and doc["exact"]["method"].startswith("free fermions")
    assert np.array(doc["observables"]["Sz"]).shape == (5, 6)
    np.testing.assert_allclose([r["S"] for r in doc["rows"]], np.array(doc["entropy"]) / 6)
    psi = t4a.MPS.load(str(tmp_path / "t.npz"))
    assert psi.L == 6 and psi.phys_dims == [4] * 6
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def tfim_exact_response(L: int, J: float, g: float, betas) -> tuple[np.ndarray, np.ndarray]:
    """chi_z = d<M>/dh (M = sum Z, the field -h M added to H = -J sum Z Z - g sum X in Pauli matrices,
    open chain) and C = beta^2 (<H^2> - <H>^2), from the explicit 2^L matrix: chi_z by the Kubo
    (Duhamel) formula on its eigenbasis, Z doesn't commute with H, so
    chi = sum_mn |M_mn|^2 (p_n - p_m) / (E_m - E_n) - beta <M>^2 with p = e^{-beta E} / Z
    (the limit beta p_n where E_m = E_n)."""
    x, z = np.array([[0.0, 1.0], [1.0, 0.0]]), np.diag([1.0, -1.0])

    def at(op: np.ndarray, i: int) -> np.ndarray:
        return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))

    H = -J * sum(at(z, i) @ at(z, i + 1) for i in range(L - 1)) - g * sum(at(x, i) for i in range(L))
    e, v = np.linalg.eigh(H)
    m = v.T @ sum(at(z, i) for i in range(L)) @ v  # M on the eigenbasis
    m2 = np.abs(m) ** 2
    de = e[:, None] - e[None, :]  # E_m - E_n
    chi, heat = [], []
    for b in betas:
        p = np.exp(-b * (e - e[0]))
        p /= p.sum()
        close = np.abs(de) < 1e-12  # degenerate pairs: the limit (rounding of the levels is ~1e-14)
        w = np.where(close, b * p[None, :], (p[None, :] - p[:, None]) / np.where(close, 1.0, de))
        mean_m = np.sum(np.diag(m) * p)
        chi.append(float(np.sum(m2 * w) - b * mean_m**2))
        heat.append(float(b * b * (np.sum(p * e * e) - np.sum(p * e) ** 2)))
    return np.array(chi), np.array(heat)


def test_susceptibility_of_the_tfim_and_of_the_xx_chain(capsys):
    """chi_z of the tfim (its Z does not commute with H: exact diagonalization) and of the XX chain
    (free fermions; the derivative run conserves Sz)."""
    assert main(["thermal", "--model", "tfim", "--L", "6", "--beta-max", "1", "--dbeta", "0.25", "--every", "2",
                 "--cutoff", "1e-14", "--observe", "C,chi_z,X", "--json", "-", "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    chi, heat = tfim_exact_response(6, 1.0, 1.0, doc["betas"])
    np.testing.assert_allclose(doc["susceptibility"][1:], chi[1:], rtol=1e-5)  # dbeta = 0.25
    np.testing.assert_allclose(doc["specific_heat"][1:], heat[1:], rtol=1e-5)
    assert doc["parameters"]["field"] == "Z" and doc["parameters"]["conserve"] == "parity"
    assert 0.0 < doc["rows"][-1]["X"] < 1.0  # <X> in the model's basis (the run is in the rotated one)
    assert main(["thermal", "--L", "4", "--beta-max", "1", "--dbeta", "0.5", "--h", "0.3", "--cutoff", "1e-14",
                 "--observe", "chi_z", "--json", "-", "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    ref, _ = thermal_reference("xx", 4, doc["betas"], {"J": 1.0, "h": 0.3})
    np.testing.assert_allclose(doc["susceptibility"][1:], ref["susceptibility"][1:], rtol=1e-6)


def test_a_canonical_run_of_the_hubbard_chain(capsys):
    assert main(["thermal", "--model", "hubbard", "--L", "4", "--N", "4", "--sz", "0", "--beta-max", "0.5",
                 "--dbeta", "0.25", "--observe", "E,Ntot", "--json", "-", "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["sector"] == {"N": 4, "Sz": 0.0} and doc["exact"] is None
    assert np.isclose(doc["log_z"][0], np.log(36.0))  # (4 choose 2)^2 states
    np.testing.assert_allclose(np.array(doc["observables"]["Ntot"]).sum(axis=1), 4.0)


def test_the_derivative_run_agreement_is_the_real_discrepancy_and_names_its_engine(capsys, tmp_path):
    """At beta = 0, <H> = Tr H / N is 0 up to rounding: the printed agreement of <H> is relative to
    the largest |<H>| over the run (recomputed here from the JSON record), not the ratio of two rounding
    errors (2.2e-01 before), and the line names the engine that ran (the tangent one, not "traced")."""
    path = tmp_path / "t.json"
    assert main(["thermal", "--model", "heisenberg", "--L", "6", "--h", "0.3", "--beta-max", "1", "--dbeta", "0.1",
                 "--every", "5", "--cutoff", "1e-16", "--observe", "E,C", "--json", str(path)]) == 0  # fmt: skip
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("derivatives"))
    doc = json.loads(path.read_text())
    e, e_deriv = np.array(doc["energy"]), np.array(doc["derivative_run"]["energy"])
    assert abs(e[0]) < 1e-12  # Tr H / N of the Heisenberg chain: 0
    scale = np.max(np.abs(e))
    assert scale == pytest.approx(-ref_energy_at_beta_one(), rel=1e-6)
    printed = [float(x) for x in line.split("within ")[1].split(" of the")[0].split(" and ")]
    assert printed[1] == pytest.approx(np.max(np.abs(e_deriv - e)) / scale, rel=0.06, abs=1e-17)
    assert printed[0] < 1e-12 and printed[1] < 1e-12, line
    assert line.startswith("derivatives the tangent run's") and f"{scale:.4g}" in line


def ref_energy_at_beta_one() -> float:
    """<H> at beta = 1 of the Heisenberg chain L = 6, h = 0.3, from the explicit 64 x 64 matrix."""
    sz, sp = np.diag([0.5, -0.5]), np.array([[0.0, 1.0], [0.0, 0.0]])

    def at(op, i):
        return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (6 - i - 1)))

    H = sum(at(sz, i) @ at(sz, i + 1) + 0.5 * (at(sp, i) @ at(sp.T, i + 1) + at(sp.T, i) @ at(sp, i + 1))
            for i in range(5)) - 0.3 * sum(at(sz, i) for i in range(6))  # fmt: skip
    e = np.linalg.eigvalsh(H)
    w = np.exp(-(e - e[0]))
    return float(np.sum(w * e) / np.sum(w))


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--beta-max", "1", "--dbeta", "0.3"], "argument --dbeta: 0.3 does not divide --beta-max 1"),
        (["--beta-max", "0"], "argument --beta-max: must be a positive finite number"),
        (["--dbeta", "-0.1"], "argument --dbeta: must be a positive finite number"),
        (["--observe", "E,Q"], "unknown quantity 'Q' of --model xx; valid: E, C, chi_z, S, F, Sx, Sy, Sz"),
        (["--method", "tdvp", "--observe", "E,C"], "C is a derivative"),
        (["--method", "tdvp", "--order", "2", "--observe", "E"], "argument --order: the Trotter order"),
        (["--sz", "5"], "argument --sz: the sector Sz = 5.0 has no states"),
        (["--N", "2"], "argument --N: a particle number of --model hubbard"),
        (["--model", "hubbard", "--sz", "0"], "give --N too"),
        (["--model", "tfim", "--sz", "0"], "does not conserve Sz"),
        (["--sz", "0", "--observe", "chi_z"], "chi_z is 0 in a sector of fixed Sz"),
        (["--model", "tfim", "--conserve", "Sz"], "conserves parity"),
        (["--U", "4"], "not a parameter of --model xx"),
        (["--save", "s.txt"], "must end in .arrow, .parquet, .npz"),
        (["--plot", "p.jpg"], "unknown extension '.jpg'"),
        (["--observe", "E,E"], "each once"),
    ],
)
def test_bad_arguments_exit_2_before_running(args, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["thermal", "--L", "4", *args])
    assert info.value.code == 2
    err = capsys.readouterr()
    assert fragment in err.err, err.err
    assert "THERMAL" not in err.out + err.err and list(tmp_path.iterdir()) == []


def test_the_command_is_registered():
    assert "thermal" in build_parser().commands
