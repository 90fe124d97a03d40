"""``tensor4all spectrum``: a run as a user runs it (a subprocess, small and fast) with its JSON record,
saved arrays and heat map; the Chebyshev method; bad arguments in-process (exit code 2, a message
naming the fix, nothing run)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tensor4all.cli import build_parser, main
from tensor4all.cli.spectrum import OPERATORS, adjoint_name

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensor4all", "spectrum", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_spectrum_writes_json_npz_and_a_heat_map(tmp_path):
    proc = run_cli(
        "--L", "8", "--t-final", "2", "--dt", "0.1", "--json", "s.json", "--save", "s.npz", "--plot", "s.png",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "SPECTRUM  heisenberg L=8" in proc.stdout and "sum rule" in proc.stdout
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["schema"] == "tensor4all.spectrum/1"
    assert set(doc) >= {"parameters", "ground_state", "q", "omega", "S", "resolution", "rows", "correlation"}
    S = np.array(doc["S"])
    assert S.shape == (len(doc["q"]), len(doc["omega"])) == (5, len(doc["omega"]))
    assert doc["parameters"]["op"] == doc["parameters"]["op_adjoint"] == "Sz"
    G = np.array(doc["correlation"]["values"])
    assert G.shape == (21, 8, 2)  # times x sites x [re, im]
    for r in doc["rows"]:  # the sum rule over the automatic grid
        assert abs(r["weight"] - r["static"]) < 1e-3
    with np.load(tmp_path / "s.npz") as npz:
        np.testing.assert_allclose(npz["S"], S)
        assert npz["G"].shape == (21, 8) and np.iscomplexobj(npz["G"])
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_spectrum_by_chebyshev_to_stdout(tmp_path):
    proc = run_cli("--L", "6", "--method", "chebyshev", "--moments", "40", "--json", "-", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    assert doc["correlation"] is None and doc["chebyshev"]["n_moments"] == 40
    assert np.array(doc["S"]).shape == (4, len(doc["omega"]))
    assert "SPECTRUM" in proc.stderr  # the report goes to stderr when the JSON takes stdout


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--t-final", "1", "--dt", "0.3"], "argument --t-final: t_final = 1.0 is not a multiple of dt"),
        (["--op", "Cdagup"], "unknown operator 'Cdagup' of --model heisenberg; valid operators: Sz"),
        (["--method", "tdvp", "--order", "4"], "argument --order: the Trotter order of --method tebd"),
        (["--moments", "10"], "argument --moments"),
        (["--method", "chebyshev", "--extend", "2"], "--method chebyshev has none"),
        (["--omega-max", "100"], "beyond the Nyquist frequency"),
        (["--omega-max", "4", "--n-omega", "1000"], "finer than a tenth of the window's resolution"),
        (["--save", "s.arrow"], "must end in .npz"),
        (["--U", "4"], "not a parameter of --model heisenberg"),
        (["--model", "tfim", "--conserve", "Sz"], "conserves parity"),
        (["--window", "box"], "invalid choice: 'box'"),
    ],
)
def test_bad_arguments_exit_2_before_running(args, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["spectrum", "--L", "6", *args])
    assert info.value.code == 2
    err = capsys.readouterr()
    assert fragment in err.err, err.err
    assert "SPECTRUM" not in err.out + err.err and list(tmp_path.iterdir()) == []


def test_the_adjoint_of_each_operator():
    assert adjoint_name("heisenberg", "S+") == "S-" and adjoint_name("heisenberg", "Sz") == "Sz"
    assert adjoint_name("hubbard", "Cdagup") == "Cup" and adjoint_name("hubbard", "Cdn") == "Cdagdn"
    for model, ops in OPERATORS.items():
        assert all(adjoint_name(model, op) in ops for op in ops), model
    assert "spectrum" in build_parser().commands
