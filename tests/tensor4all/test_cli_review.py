"""Review of the command line (2026-12-01): outputs that name one file, options a method ignores,
two spellings of one coupling, a conserved infinite run in a field, and the basis of a saved
parity run."""

from __future__ import annotations

import json

import pytest

from tensor4all.cli import main


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code


@pytest.mark.parametrize(
    "argv",
    [
        ["evolve", "--L", "4", "--t-final", "0.1", "--dt", "0.05", "-q", "--json", "{d}/p.npz", "--save", "{d}/p.npz"],
        ["dmrg", "--L", "6", "-q", "--json", "{d}/same.png", "--plot", "{d}/./same.png"],
        ["thermal", "--L", "4", "--beta-max", "0.2", "-q", "--json", "{d}/q.svg", "--plot", "{d}/q.svg"],
        ["idmrg", "--max-bond", "8", "-q", "--json", "{d}/r.npz", "--save", "{d}/r.npz"],
    ],
    ids=["evolve", "dmrg", "thermal", "idmrg"],
)
def test_two_outputs_of_one_file_are_refused_before_any_work(tmp_path, capsys, argv):
    """``--json p.npz --save p.npz`` wrote the state, then the JSON over it, and exited 0."""
    argv = [a.format(d=tmp_path) for a in argv]
    assert _exit_code(argv) == 2
    assert "is also the file of --json" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", [["--window", "hann"], ["--dt", "0.05"], ["--t-final", "3"]])
def test_chebyshev_refuses_the_time_evolutions_options(capsys, option):
    """They were taken, ignored, and recorded in the JSON as if used."""
    argv = ["spectrum", "--L", "6", "--max-bond", "16", "-q", "--method", "chebyshev", "--moments", "60", *option]
    assert _exit_code(argv) == 2
    assert f"argument {option[0]}: an option of the time evolution" in capsys.readouterr().err


def test_hubbard_hopping_given_twice_is_refused(capsys):
    """``--J 2 --t 3`` ran with t = 3, the JSON recording J: null."""
    argv = ["evolve", "--L", "4", "--t-final", "0.2", "--dt", "0.05", "--model", "hubbard", "--J", "2", "--t", "3"]
    assert _exit_code(argv) == 2
    assert "--J is its deprecated spelling" in capsys.readouterr().err


def test_a_conserved_infinite_run_in_a_field_names_its_sector(tmp_path, capsys):
    """It printed the exact energy of all sectors beside the Sz = 0 sector's, with no word."""
    out = tmp_path / "r.json"
    assert main(["idmrg", "--max-bond", "8", "-q", "--conserve", "Sz", "--h", "0.3", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "sector Sz = 0" in text and "--conserve none finds it" in text
    assert "exact energy per site" not in text


def test_a_saved_parity_run_says_its_basis(tmp_path, capsys):
    """The tfim's parity run saves its state in the rotated basis; nothing said so."""
    js = tmp_path / "tf.json"
    argv = ["dmrg", "--L", "6", "--model", "tfim", "--g", "0.7", "--max-bond", "16", "-q"]
    assert main([*argv, "--save", str(tmp_path / "tf.npz"), "--json", str(js)]) == 0
    assert "the saved state is in the rotated basis" in capsys.readouterr().out
    assert json.loads(js.read_text())["basis"].startswith("rotated basis")
    assert main([*argv, "--conserve", "none", "--json", str(js)]) == 0
    assert json.loads(js.read_text())["basis"] == "model"
